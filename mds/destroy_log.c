/* destroy_log.c — the object destroy log: the objects of files whose last
 * link went away (and the old objects of a file given a new layout), kept
 * in the `destroy` table until the OSSes have destroyed them.  ns.c appends
 * a record (mds_nsi_destroy_append) in the very transaction that drops the
 * inode, and asks mds_nsi_wend to call the notify hook after the commit;
 * the destroyer thread of mds/destroy.c walks the log with
 * mds_ns_destroy_next and deletes a record with mds_ns_destroy_done once
 * its objects are gone (a round of records in one transaction with
 * mds_ns_destroy_done_many).  So a crash at any point leaks no object and loses
 * no file.  Key be64 sequence number (the last one + 1), value u64 LMDB
 * transaction id that logged it (host order), then n x { u32 OST, u64
 * object } packed, 12 bytes each, n <= MDS_DESTROY_MAX (records of older
 * versions have no transaction id: length a multiple of 12; they were there
 * at open, which syncs, so they are durable).
 *
 * Durability: the destroyer takes records through
 * mds_ns_destroy_next_durable, which holds back a record until its
 * transaction is known synced (dbsync.c's synced_gen), so objects never go
 * while a machine crash could still bring their file back.  Records are
 * appended in transaction order, so the durable ones are a prefix of the
 * log. */
#include "mds/destroy_log.h"

#include "mds/ns_i.h"

int mds_nsi_destroy_append(mds_ns *ns, MDB_txn *t, const pfs_stripe *st, uint32_t n)
{
	MDB_cursor *cur;
	MDB_val k, v;
	uint8_t kb[8], val[8 + 12 * MDS_DESTROY_MAX];
	uint64_t seq = 1, gen = mdb_txn_id(t);
	int rc = mdb_cursor_open(t, ns->destroy, &cur);

	if (rc)
		return lmdb_err(rc);
	rc = mdb_cursor_get(cur, &k, &v, MDB_LAST);
	if (rc == 0 && k.mv_size == 8)
		seq = be64_get(k.mv_data) + 1;
	mdb_cursor_close(cur);
	if (rc && rc != MDB_NOTFOUND)
		return lmdb_err(rc);
	if (n == 0 || n > MDS_DESTROY_MAX)
		return -EINVAL;
	memcpy(val, &gen, 8);
	for (uint32_t i = 0; i < n; i++) {
		memcpy(val + 8 + 12 * i, &st[i].ost, 4);
		memcpy(val + 8 + 12 * i + 4, &st[i].object, 8);
	}
	be64_put(kb, seq);
	k.mv_size = 8;
	k.mv_data = kb;
	v.mv_size = 8 + 12 * (size_t)n;
	v.mv_data = val;
	return lmdb_err(mdb_put(t, ns->destroy, &k, &v, 0));
}

void mds_ns_set_destroy_notify(mds_ns *ns, void (*fn)(void *arg), void *arg)
{
	pthread_mutex_lock(&ns->lock);
	ns->notify = fn;
	ns->notify_arg = arg;
	pthread_mutex_unlock(&ns->lock);
}

/* The first record after `after`, and the transaction that logged it. */
static int destroy_read(mds_ns *ns, uint64_t after, uint64_t *seq, pfs_stripe *st,
			uint32_t *n, uint64_t *gen)
{
	MDB_txn *t = NULL;
	MDB_cursor *cur = NULL;
	uint8_t kb[8];
	MDB_val k = { 8, kb }, v;
	const uint8_t *p;
	size_t len;
	int rc;

	if (after == UINT64_MAX)
		return -ENOENT;
	rc = rbegin(ns, &t);
	if (!rc)
		rc = lmdb_err(mdb_cursor_open(t, ns->destroy, &cur));
	if (rc)
		goto out;
	be64_put(kb, after + 1);
	rc = lmdb_err(mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE));
	if (rc)
		goto out;
	p = v.mv_data;
	len = v.mv_size;
	*gen = 0;
	if (len % 12 == 8) {
		memcpy(gen, p, 8);
		p += 8;
		len -= 8;
	}
	if (k.mv_size != 8 || len % 12 || len / 12 > MDS_DESTROY_MAX) {
		rc = -EIO;
		goto out;
	}
	*seq = be64_get(k.mv_data);
	*n = (uint32_t)(len / 12);
	for (uint32_t i = 0; i < *n; i++) {
		memcpy(&st[i].ost, p + 12 * i, 4);
		memcpy(&st[i].object, p + 12 * i + 4, 8);
	}
out:
	if (cur)
		mdb_cursor_close(cur);
	if (t)
		mdb_txn_abort(t);
	return rc;
}

int mds_ns_destroy_next(mds_ns *ns, uint64_t after, uint64_t *seq, pfs_stripe *st,
			uint32_t *n)
{
	uint64_t gen;

	return destroy_read(ns, after, seq, st, n, &gen);
}

int mds_ns_destroy_next_durable(mds_ns *ns, uint64_t after, uint64_t *seq, pfs_stripe *st,
				uint32_t *n)
{
	uint64_t gen;
	int rc = destroy_read(ns, after, seq, st, n, &gen);

	if (rc || gen <= mds_nsi_durable_gen(ns))
		return rc;
	if (ns->opts.sync_mode != MDS_SYNC_NONE)
		return -EAGAIN;
	rc = mds_nsi_sync(ns, "destroy batch");
	if (rc)
		return rc;
	return gen <= mds_nsi_durable_gen(ns) ? 0 : -EAGAIN;
}

int mds_ns_destroy_done(mds_ns *ns, uint64_t seq)
{
	MDB_txn *t = NULL;
	uint8_t kb[8];
	MDB_val k = { 8, kb };
	int rc = wbegin(ns, &t);

	if (rc)
		return rc;
	be64_put(kb, seq);
	rc = lmdb_err(mdb_del(t, ns->destroy, &k, NULL));
	return mds_nsi_wend(ns, t, rc, 0);
}

int mds_ns_destroy_done_many(mds_ns *ns, const uint64_t *seqs, size_t n)
{
	MDB_txn *t = NULL;
	uint8_t kb[8];
	MDB_val k = { 8, kb };
	int rc;

	if (n == 0)
		return 0;
	rc = wbegin(ns, &t);
	if (rc)
		return rc;
	for (size_t i = 0; i < n && !rc; i++) {
		be64_put(kb, seqs[i]);
		rc = mdb_del(t, ns->destroy, &k, NULL);
		if (rc == MDB_NOTFOUND)
			rc = 0; /* already gone: the batch still goes */
		rc = lmdb_err(rc);
	}
	return mds_nsi_wend(ns, t, rc, 0);
}

int mds_ns_destroy_count(mds_ns *ns, uint64_t *n)
{
	MDB_txn *t = NULL;
	MDB_stat st;
	int rc = rbegin(ns, &t);

	if (!rc)
		rc = lmdb_err(mdb_stat(t, ns->destroy, &st));
	if (!rc)
		*n = st.ms_entries;
	if (t)
		mdb_txn_abort(t);
	return rc;
}
