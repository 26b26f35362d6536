/* orphan.c — the orphan list of the namespace: regular files whose last
 * name went while they were open (see orphan.h).  A namespace file: it
 * works in the callers' LMDB transactions through ns_i.h.
 *
 * Records: table `meta`, key "orphan" + be64 ino (14 bytes), value i64 the
 * unlink time (ns).  `meta` otherwise holds "next_ino" only, so the prefix
 * scan never meets another key. */
#include "mds/orphan.h"

#include "mds/ns_i.h"

#define OKEY_LEN 14

static void okey(uint8_t *kb, uint64_t ino)
{
	memcpy(kb, "orphan", 6);
	be64_put(kb + 6, ino);
}

void mds_ns_set_open_hook(mds_ns *ns, int (*fn)(void *arg, uint64_t ino), void *arg)
{
	pthread_mutex_lock(&ns->lock);
	ns->open_hook = fn;
	ns->open_hook_arg = arg;
	pthread_mutex_unlock(&ns->lock);
}

static int is_open(mds_ns *ns, uint64_t ino)
{
	int (*fn)(void *, uint64_t);
	void *arg;

	pthread_mutex_lock(&ns->lock);
	fn = ns->open_hook;
	arg = ns->open_hook_arg;
	pthread_mutex_unlock(&ns->lock);
	return fn ? fn(arg, ino) : 0;
}

int mds_nsi_orphan_keep(mds_ns *ns, MDB_txn *t, struct inode *victim, int64_t now)
{
	uint8_t kb[OKEY_LEN];
	MDB_val k = { OKEY_LEN, kb }, v = { sizeof(now), &now };
	int rc;

	if (!S_ISREG(victim->d.mode) || !is_open(ns, victim->ino))
		return 0;
	victim->d.nlink = 0;
	victim->d.ctime = now;
	victim->d.parent = 0;
	rc = mds_nsi_ino_put(ns, t, victim);
	if (rc)
		return rc;
	okey(kb, victim->ino);
	rc = lmdb_err(mdb_put(t, ns->meta, &k, &v, 0));
	if (!rc)
		pfs_log(PFS_LOG_DEBUG, "orphan: ino %llu kept open after its last name went",
			(unsigned long long)victim->ino);
	return rc ? rc : 1;
}

int mds_ns_orphan_destroy(mds_ns *ns, uint64_t ino)
{
	struct work *w = work_new();
	uint8_t kb[OKEY_LEN], ib[8];
	MDB_val k = { OKEY_LEN, kb }, v, ik = { 8, ib };
	MDB_txn *t = NULL;
	int logged = 0, rc;

	if (!w)
		return -ENOMEM;
	okey(kb, ino);
	be64_put(ib, ino);
	rc = wbegin(ns, &t);
	if (!rc)
		rc = lmdb_err(mdb_get(t, ns->meta, &k, &v));
	if (rc)
		goto out;
	rc = mds_nsi_ino_get(ns, t, ino, &w->a);
	if (rc == -ENOENT) {
		rc = lmdb_err(mdb_del(t, ns->meta, &k, NULL));
		goto out;
	}
	if (rc)
		goto out;
	if (w->a.d.nlink > 0) { /* linked again (linkat of an open file) */
		rc = lmdb_err(mdb_del(t, ns->meta, &k, NULL));
		goto out;
	}
	if (is_open(ns, ino)) {
		rc = -EBUSY;
		goto out;
	}
	if (w->a.d.sc > 0) {
		rc = mds_nsi_destroy_append(ns, t, w->a.st, w->a.d.sc);
		if (rc)
			goto out;
		logged = 1;
	}
	rc = mds_nsi_del_prefix(t, ns->xattrs, ino);
	if (!rc)
		rc = lmdb_err(mdb_del(t, ns->inodes, &ik, NULL));
	if (!rc)
		rc = lmdb_err(mdb_del(t, ns->meta, &k, NULL));
	if (!rc)
		pfs_log(PFS_LOG_DEBUG, "orphan: ino %llu destroyed (%u objects)",
			(unsigned long long)ino, w->a.d.sc);
out:
	rc = t ? mds_nsi_wend(ns, t, rc, logged) : rc;
	free(w);
	return rc;
}

int mds_ns_orphan_list(mds_ns *ns, uint64_t **inos, size_t *n)
{
	uint64_t *v = NULL;
	size_t cnt = 0, cap = 0;
	uint8_t kb[OKEY_LEN];
	MDB_cursor *cur = NULL;
	MDB_txn *t = NULL;
	MDB_val k, d;
	int rc, op = MDB_SET_RANGE;

	okey(kb, 0);
	rc = rbegin(ns, &t);
	if (!rc)
		rc = lmdb_err(mdb_cursor_open(t, ns->meta, &cur));
	k.mv_size = OKEY_LEN;
	k.mv_data = kb;
	while (!rc) {
		int g = mdb_cursor_get(cur, &k, &d, (MDB_cursor_op)op);

		op = MDB_NEXT;
		if (g == MDB_NOTFOUND)
			break;
		if (g) {
			rc = lmdb_err(g);
			break;
		}
		if (k.mv_size != OKEY_LEN || memcmp(k.mv_data, "orphan", 6) != 0)
			break;
		if (cnt == cap) {
			size_t nc = cap ? cap * 2 : 16;
			uint64_t *nv = realloc(v, nc * sizeof(*nv));

			if (!nv) {
				rc = -ENOMEM;
				break;
			}
			v = nv;
			cap = nc;
		}
		v[cnt++] = be64_get((const uint8_t *)k.mv_data + 6);
	}
	if (cur)
		mdb_cursor_close(cur);
	if (t)
		mdb_txn_abort(t);
	if (rc) {
		free(v);
		return rc;
	}
	*inos = v;
	*n = cnt;
	return 0;
}
