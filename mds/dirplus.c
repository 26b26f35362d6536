/* dirplus.c — PFS_OP_MDS_LOOKUP_BULK (see dirplus.h): a range read of the
 * `dirents` table (be64 parent + name -> dent_val, mds/dir.c) from the
 * first name after `after`, each child's inode read in the same read
 * transaction and turned into the attributes LOOKUP sends
 * (mds_nsi_to_attr).  The permission check (mds_ns_access: r and x on the
 * directory, x along its path) is its own read transaction, as a LOOKUP
 * racing a chmod would see either side. */
#include "mds/dirplus.h"

#include "mds/ns.h"
#include "mds/ns_i.h"

int mds_dirplus_decode(pfs_rbuf *b, uint64_t *dir, char *after, uint32_t *max)
{
	size_t len = 0;
	const char *s;

	*dir = pfs_rbuf_u64(b);
	s = pfs_rbuf_str(b, PFS_NAME_MAX, &len);
	*max = pfs_rbuf_u32(b);
	if (pfs_rbuf_done(b))
		return -EBADMSG;
	if (len && memchr(s, '\0', len))
		return -EBADMSG;
	if (len)
		memcpy(after, s, len);
	after[len] = '\0';
	if (*max == 0)
		return -EINVAL;
	if (*max > MDS_DIRPLUS_MAX)
		*max = MDS_DIRPLUS_MAX;
	return 0;
}

/* 1 if the dirents key k is one of dir's entries. */
static int key_in(const MDB_val *k, uint64_t dir)
{
	return k->mv_size > 8 && k->mv_size <= 8 + PFS_NAME_MAX && be64_get(k->mv_data) == dir;
}

int mds_ns_lookup_bulk(mds_ns *ns, const pfs_cred *c, uint64_t dir, const char *after,
		       uint32_t max, mds_dirplus_ent *out, uint32_t *n, int *eof)
{
	struct work *w;
	MDB_txn *t = NULL;
	MDB_cursor *cur = NULL;
	uint8_t kb[8 + PFS_NAME_MAX];
	MDB_val k, v;
	size_t alen = strlen(after);
	uint32_t got = 0;
	int rc, mrc;

	if (alen > PFS_NAME_MAX)
		return -ENAMETOOLONG;
	if (max > MDS_DIRPLUS_MAX)
		max = MDS_DIRPLUS_MAX;
	w = work_new();
	if (!w)
		return -ENOMEM;
	rc = rbegin(ns, &t);
	if (!rc)
		rc = dir_get(ns, t, dir, &w->a);
	if (!rc)
		rc = mds_ns_access(ns, c, dir, R_OK | X_OK);
	if (!rc)
		rc = lmdb_err(mdb_cursor_open(t, ns->dirents, &cur));
	if (rc)
		goto out;
	k.mv_size = dkey(kb, dir, after);
	k.mv_data = kb;
	mrc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
	/* strictly after: skip `after` itself */
	if (mrc == 0 && alen && k.mv_size == 8 + alen && key_in(&k, dir) &&
	    memcmp((uint8_t *)k.mv_data + 8, after, alen) == 0)
		mrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
	for (; mrc == 0 && got < max && key_in(&k, dir);
	     mrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		struct dent_val dv;
		mds_dirplus_ent *e = &out[got];

		if (v.mv_size != sizeof(dv)) {
			rc = -EIO;
			goto out;
		}
		memcpy(&dv, v.mv_data, sizeof(dv));
		rc = mds_nsi_ino_get(ns, t, dv.child, &w->b);
		if (rc)
			goto out;
		mds_nsi_to_attr(&w->b, &e->a);
		memcpy(e->name, (uint8_t *)k.mv_data + 8, k.mv_size - 8);
		e->name[k.mv_size - 8] = '\0';
		got++;
	}
	if (mrc && mrc != MDB_NOTFOUND) {
		rc = lmdb_err(mrc);
		goto out;
	}
	/* stopped for room: the cursor is on the next key already */
	*eof = !(got == max && mrc == 0 && key_in(&k, dir));
	*n = got;
out:
	if (cur)
		mdb_cursor_close(cur);
	if (t)
		mdb_txn_abort(t);
	free(w);
	return rc;
}

int mds_dirplus_serve(mds_ns *ns, const pfs_cred *c, pfs_rbuf *b, pfs_wbuf *out,
		      void (*grant)(void *arg, uint64_t dir, const char *name, uint64_t ino),
		      void *arg)
{
	char after[PFS_NAME_MAX + 1];
	mds_dirplus_ent *e;
	uint64_t dir;
	uint32_t max, n = 0, sent = 0;
	size_t start, npos;
	int eof = 0, rc = mds_dirplus_decode(b, &dir, after, &max);

	if (rc)
		return rc;
	e = malloc(max * sizeof(*e));
	if (!e)
		return -ENOMEM;
	rc = mds_ns_lookup_bulk(ns, c, dir, after, max, e, &n, &eof);
	if (rc)
		goto out;
	start = out->len;
	npos = start;
	pfs_wbuf_u32(out, 0); /* n: set below */
	pfs_wbuf_u8(out, 0);  /* eof: set below */
	for (; sent < n && out->len - start < MDS_DIRPLUS_BYTES; sent++) {
		pfs_wbuf_str(out, e[sent].name);
		pfs_attr_encode(out, &e[sent].a);
		if (grant)
			grant(arg, dir, e[sent].name, e[sent].a.ino);
	}
	rc = pfs_wbuf_error(out);
	if (rc)
		goto out;
	if (sent < n)
		eof = 0;
	out->data[npos] = (uint8_t)sent;
	out->data[npos + 1] = (uint8_t)(sent >> 8);
	out->data[npos + 2] = (uint8_t)(sent >> 16);
	out->data[npos + 3] = (uint8_t)(sent >> 24);
	out->data[npos + 4] = (uint8_t)eof;
out:
	free(e);
	return rc;
}
