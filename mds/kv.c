/* kv.c — the key-value tables other MDS modules keep in the namespace's
 * LMDB environment (see kv.h): mds/jobs.c's job registry and
 * mds/qos_store.c's QoS records.  Each table is a DBI that nsdb.c opens
 * with the namespace's own; a mds_kv_txn wraps an LMDB transaction, so
 * these records share the namespace's writer lock and durability (sync
 * mode) and the callers never see LMDB. */
#include "mds/kv.h"

#include "mds/ns_i.h"

struct mds_kv_txn {
	mds_ns *ns;
	MDB_txn *t;
	int write;
};

static int kv_check(const mds_kv_txn *t, mds_kv_table tb, size_t klen)
{
	if (!t || (unsigned)tb >= MDS_KV_NTABLES || klen < 1 || klen > MDS_KV_KEY_MAX)
		return -EINVAL;
	return 0;
}

int mds_ns_kv_begin(mds_ns *ns, int write, mds_kv_txn **out)
{
	mds_kv_txn *t = calloc(1, sizeof(*t));
	int rc;

	if (!t)
		return -ENOMEM;
	t->ns = ns;
	t->write = write != 0;
	rc = write ? wbegin(ns, &t->t) : rbegin(ns, &t->t);
	if (rc) {
		free(t);
		return rc;
	}
	*out = t;
	return 0;
}

int mds_ns_kv_commit(mds_kv_txn *t)
{
	int rc;

	if (t->write) {
		rc = lmdb_err(mdb_txn_commit(t->t));
	} else {
		mdb_txn_abort(t->t);
		rc = 0;
	}
	free(t);
	return rc;
}

void mds_ns_kv_abort(mds_kv_txn *t)
{
	if (!t)
		return;
	mdb_txn_abort(t->t);
	free(t);
}

int mds_ns_kv_get(mds_kv_txn *t, mds_kv_table tb, const void *key, size_t klen,
		  const void **val, size_t *vlen)
{
	MDB_val k = { klen, (void *)key }, v;
	int rc = kv_check(t, tb, klen);

	if (rc)
		return rc;
	rc = mdb_get(t->t, t->ns->kv[tb], &k, &v);
	if (rc)
		return lmdb_err(rc);
	*val = v.mv_data;
	*vlen = v.mv_size;
	return 0;
}

int mds_ns_kv_put(mds_kv_txn *t, mds_kv_table tb, const void *key, size_t klen,
		  const void *val, size_t vlen)
{
	MDB_val k = { klen, (void *)key }, v = { vlen, (void *)val };
	int rc = kv_check(t, tb, klen);

	if (rc)
		return rc;
	if (!t->write)
		return -EROFS;
	return lmdb_err(mdb_put(t->t, t->ns->kv[tb], &k, &v, 0));
}

int mds_ns_kv_del(mds_kv_txn *t, mds_kv_table tb, const void *key, size_t klen)
{
	MDB_val k = { klen, (void *)key };
	int rc = kv_check(t, tb, klen);

	if (rc)
		return rc;
	if (!t->write)
		return -EROFS;
	return lmdb_err(mdb_del(t->t, t->ns->kv[tb], &k, NULL));
}

int mds_ns_kv_next(mds_kv_txn *t, mds_kv_table tb, const void *after, size_t alen,
		   const void **key, size_t *klen, const void **val, size_t *vlen)
{
	MDB_cursor *cur = NULL;
	MDB_val k = { alen, (void *)after }, v;
	int rc = kv_check(t, tb, after ? alen : 1);

	if (rc)
		return rc;
	rc = mdb_cursor_open(t->t, t->ns->kv[tb], &cur);
	if (rc)
		return lmdb_err(rc);
	if (!after) {
		rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST);
	} else {
		rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
		if (rc == 0 && k.mv_size == alen && memcmp(k.mv_data, after, alen) == 0)
			rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
	}
	mdb_cursor_close(cur);
	if (rc)
		return lmdb_err(rc);
	*key = k.mv_data;
	*klen = k.mv_size;
	*val = v.mv_data;
	*vlen = v.mv_size;
	return 0;
}

int mds_ns_kv_count(mds_kv_txn *t, mds_kv_table tb, size_t *n)
{
	MDB_stat st;
	int rc = kv_check(t, tb, 1);

	if (rc)
		return rc;
	rc = lmdb_err(mdb_stat(t->t, t->ns->kv[tb], &st));
	if (!rc)
		*n = st.ms_entries;
	return rc;
}
