/* dir.c — the directory index of the MDS namespace.  Two tables hold each
 * entry: `dirents` (be64 parent + name -> dent_val { child, mode, cookie })
 * answers LOOKUP, `cookies` (be64 parent + be64 cookie -> child, mode,
 * name) orders READDIR.  A directory hands out cookies from its own counter
 * (ino_disk.next_cookie, from FIRST_COOKIE), so an entry keeps its cookie
 * while it exists and later entries sort after it: READDIR is a range seek
 * from (dir, cookie + 1) and sees every surviving entry exactly once,
 * however the directory changes between pages.  "." and ".." are never
 * stored.  The mds_nsi_dent_* helpers work in the caller's transaction
 * (ns.c's create, remove, rename); READDIR is a read transaction of its
 * own. */
#include "mds/dir.h"

#include "mds/ns_i.h"

int mds_nsi_dent_get(mds_ns *ns, MDB_txn *t, uint64_t parent, const char *name,
		    struct dent_val *dv)
{
	uint8_t kb[8 + PFS_NAME_MAX];
	MDB_val k = { dkey(kb, parent, name), kb }, v;
	int rc = mdb_get(t, ns->dirents, &k, &v);

	if (rc)
		return lmdb_err(rc);
	if (v.mv_size != sizeof(*dv))
		return -EIO;
	memcpy(dv, v.mv_data, sizeof(*dv));
	return 0;
}

/* Write the entry and its cookie index record (cookie given). */
int mds_nsi_dent_set(mds_ns *ns, MDB_txn *t, uint64_t parent, const char *name,
		    uint64_t child, uint32_t mode, uint64_t cookie)
{
	uint8_t kb[8 + PFS_NAME_MAX], ck[16];
	uint8_t cv[12 + PFS_NAME_MAX];
	size_t nl = strlen(name);
	struct dent_val dv = { child, mode, 0, cookie };
	MDB_val k = { dkey(kb, parent, name), kb }, v = { sizeof(dv), &dv };
	int rc = mdb_put(t, ns->dirents, &k, &v, 0);

	if (rc)
		return lmdb_err(rc);
	be64_put(ck, parent);
	be64_put(ck + 8, cookie);
	memcpy(cv, &child, 8);
	memcpy(cv + 8, &mode, 4);
	memcpy(cv + 12, name, nl);
	k.mv_size = 16;
	k.mv_data = ck;
	v.mv_size = 12 + nl;
	v.mv_data = cv;
	return lmdb_err(mdb_put(t, ns->cookies, &k, &v, 0));
}

/* New entry in dir with the next cookie; dir is updated in memory (caller
 * stores it). */
int mds_nsi_dent_add(mds_ns *ns, MDB_txn *t, struct inode *dir, const char *name,
		    uint64_t child, uint32_t mode)
{
	if (dir->d.next_cookie < FIRST_COOKIE)
		dir->d.next_cookie = FIRST_COOKIE;
	return mds_nsi_dent_set(ns, t, dir->ino, name, child, mode, dir->d.next_cookie++);
}

int mds_nsi_dent_del(mds_ns *ns, MDB_txn *t, uint64_t parent, const char *name, uint64_t cookie)
{
	uint8_t kb[8 + PFS_NAME_MAX], ck[16];
	MDB_val k = { dkey(kb, parent, name), kb };
	int rc = mdb_del(t, ns->dirents, &k, NULL);

	if (rc)
		return lmdb_err(rc);
	be64_put(ck, parent);
	be64_put(ck + 8, cookie);
	k.mv_size = 16;
	k.mv_data = ck;
	return lmdb_err(mdb_del(t, ns->cookies, &k, NULL));
}

/* 1 if directory ino has no entries, 0 if it has, or a negative errno. */
int mds_nsi_dir_empty(mds_ns *ns, MDB_txn *t, uint64_t ino)
{
	MDB_cursor *cur;
	uint8_t ck[16];
	MDB_val k = { 16, ck }, v;
	int rc = mdb_cursor_open(t, ns->cookies, &cur);

	if (rc)
		return lmdb_err(rc);
	be64_put(ck, ino);
	be64_put(ck + 8, 0);
	rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
	if (rc == MDB_NOTFOUND)
		rc = 1;
	else if (rc)
		rc = lmdb_err(rc);
	else
		rc = !(k.mv_size == 16 && be64_get(k.mv_data) == ino);
	mdb_cursor_close(cur);
	return rc;
}

int mds_ns_readdir(mds_ns *ns, const pfs_cred *c, uint64_t ino, uint64_t cookie,
		   uint32_t max, mds_dirent *out, uint32_t *n, int *eof)
{
	struct work *w = work_new();
	MDB_txn *t = NULL;
	MDB_cursor *cur = NULL;
	uint8_t ck[16];
	MDB_val k = { 16, ck }, v;
	uint32_t got = 0;
	int rc, mrc;

	if (!w)
		return -ENOMEM;
	if (max > PFS_READDIR_MAX)
		max = PFS_READDIR_MAX;
	rc = rbegin(ns, &t);
	if (!rc)
		rc = dir_get(ns, t, ino, &w->a);
	if (!rc)
		rc = may(c, &w->a, R_OK);
	if (!rc)
		rc = lmdb_err(mdb_cursor_open(t, ns->cookies, &cur));
	if (rc)
		goto out;
	if (cookie == UINT64_MAX) {
		*n = 0;
		*eof = 1;
		goto out;
	}
	be64_put(ck, ino);
	be64_put(ck + 8, cookie + 1);
	for (mrc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); mrc == 0 && got < max;
	     mrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		if (k.mv_size != 16 || be64_get(k.mv_data) != ino)
			break;
		if (v.mv_size < 12 || v.mv_size > 12 + PFS_NAME_MAX) {
			rc = -EIO;
			goto out;
		}
		mds_dirent *e = &out[got++];
		memcpy(&e->ino, v.mv_data, 8);
		memcpy(&e->mode, (uint8_t *)v.mv_data + 8, 4);
		memcpy(e->name, (uint8_t *)v.mv_data + 12, v.mv_size - 12);
		e->name[v.mv_size - 12] = '\0';
		e->next_cookie = be64_get((uint8_t *)k.mv_data + 8);
	}
	if (mrc && mrc != MDB_NOTFOUND) {
		rc = lmdb_err(mrc);
		goto out;
	}
	*eof = 1;
	if (got == max && mrc == 0) {
		/* Stopped for room: peek whether anything follows. */
		mrc = mdb_cursor_get(cur, &k, &v, MDB_GET_CURRENT);
		if (mrc == 0 && k.mv_size == 16 && be64_get(k.mv_data) == ino)
			*eof = 0;
	}
	*n = got;
out:
	if (cur)
		mdb_cursor_close(cur);
	if (t)
		mdb_txn_abort(t);
	free(w);
	return rc;
}
