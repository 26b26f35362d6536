/* xattr.c — extended attributes of the MDS namespace: table `xattrs`, key
 * be64 ino + name, value the bytes as given.  Each call is one transaction
 * of its own that also updates the inode's ctime (nsdb.c's inode records);
 * ns.c drops an inode's xattrs with the inode (mds_nsi_del_prefix).  The
 * namespaces and who may touch them are described in xattr.h. */
#include "mds/xattr.h"

#include <sys/xattr.h>

#include "mds/ns_i.h"

enum { XNS_USER, XNS_PRIV, XNS_SYSTEM };

static int xattr_ns(const char *name, int *kind)
{
	size_t n = strlen(name);

	if (n == 0)
		return -EINVAL;
	if (n > PFS_XATTR_NAME_MAX)
		return -ERANGE;
	if (strncmp(name, "user.", 5) == 0 && n > 5)
		*kind = XNS_USER;
	else if ((strncmp(name, "trusted.", 8) == 0 && n > 8) ||
		 (strncmp(name, "security.", 9) == 0 && n > 9))
		*kind = XNS_PRIV;
	else if (strncmp(name, "system.", 7) == 0)
		*kind = XNS_SYSTEM;
	else
		return -EOPNOTSUPP;
	return 0;
}

/* Permission for touching an xattr of in: write (set/remove) or read. */
static int xattr_may(const pfs_cred *c, const struct inode *in, int kind, int write)
{
	if (kind == XNS_SYSTEM)
		return -EOPNOTSUPP;
	if (kind == XNS_PRIV) {
		if (write && c->uid != 0)
			return -EPERM;
		return 0;
	}
	/* user.* only on regular files and directories (as Linux). */
	if (!S_ISREG(in->d.mode) && !S_ISDIR(in->d.mode))
		return write ? -EPERM : -ENODATA;
	return may(c, in, write ? W_OK : R_OK);
}

int mds_ns_setxattr(mds_ns *ns, const pfs_cred *c, uint64_t ino, const char *name,
		    const void *value, size_t len, uint32_t flags)
{
	struct work *w = work_new();
	uint8_t kb[8 + PFS_XATTR_NAME_MAX];
	MDB_val k, v, old;
	MDB_txn *t = NULL;
	int kind, rc;

	if (!w)
		return -ENOMEM;
	rc = xattr_ns(name, &kind);
	if (rc)
		goto out;
	if (len > PFS_XATTR_SIZE_MAX || (flags & ~(uint32_t)(XATTR_CREATE | XATTR_REPLACE))) {
		rc = len > PFS_XATTR_SIZE_MAX ? -E2BIG : -EINVAL;
		goto out;
	}
	rc = wbegin(ns, &t);
	if (!rc)
		rc = mds_nsi_ino_get(ns, t, ino, &w->a);
	if (!rc)
		rc = xattr_may(c, &w->a, kind, 1);
	if (rc)
		goto out;
	k.mv_size = dkey(kb, ino, name);
	k.mv_data = kb;
	rc = mdb_get(t, ns->xattrs, &k, &old);
	if (rc && rc != MDB_NOTFOUND) {
		rc = lmdb_err(rc);
		goto out;
	}
	if (rc == 0 && (flags & XATTR_CREATE)) {
		rc = -EEXIST;
		goto out;
	}
	if (rc == MDB_NOTFOUND && (flags & XATTR_REPLACE)) {
		rc = -ENODATA;
		goto out;
	}
	v.mv_size = len;
	v.mv_data = (void *)value;
	rc = lmdb_err(mdb_put(t, ns->xattrs, &k, &v, 0));
	if (rc)
		goto out;
	w->a.d.ctime = now_ns();
	rc = mds_nsi_ino_put(ns, t, &w->a);
out:
	rc = t ? mds_nsi_wend(ns, t, rc, 0) : rc;
	free(w);
	return rc;
}

int mds_ns_getxattr(mds_ns *ns, const pfs_cred *c, uint64_t ino, const char *name,
		    void **value, size_t *len)
{
	struct work *w = work_new();
	uint8_t kb[8 + PFS_XATTR_NAME_MAX];
	MDB_val k, v;
	MDB_txn *t = NULL;
	int kind, rc;

	if (!w)
		return -ENOMEM;
	rc = xattr_ns(name, &kind);
	if (!rc)
		rc = rbegin(ns, &t);
	if (!rc)
		rc = mds_nsi_ino_get(ns, t, ino, &w->a);
	if (!rc)
		rc = xattr_may(c, &w->a, kind, 0);
	/* trusted.* is invisible to non-root, as on Linux. */
	if (!rc && kind == XNS_PRIV && c->uid != 0 && strncmp(name, "trusted.", 8) == 0)
		rc = -ENODATA;
	if (rc)
		goto out;
	k.mv_size = dkey(kb, ino, name);
	k.mv_data = kb;
	rc = mdb_get(t, ns->xattrs, &k, &v);
	if (rc) {
		rc = rc == MDB_NOTFOUND ? -ENODATA : lmdb_err(rc);
		goto out;
	}
	*value = malloc(v.mv_size ? v.mv_size : 1);
	if (!*value) {
		rc = -ENOMEM;
		goto out;
	}
	memcpy(*value, v.mv_data, v.mv_size);
	*len = v.mv_size;
out:
	if (t)
		mdb_txn_abort(t);
	free(w);
	return rc;
}

int mds_ns_listxattr(mds_ns *ns, const pfs_cred *c, uint64_t ino, char **list, size_t *len)
{
	struct work *w = work_new();
	uint8_t kb[8];
	MDB_val k = { 8, kb }, v;
	MDB_txn *t = NULL;
	MDB_cursor *cur = NULL;
	char *buf = NULL;
	size_t n = 0, cap = 0;
	int rc, mrc;

	if (!w)
		return -ENOMEM;
	rc = rbegin(ns, &t);
	if (!rc)
		rc = mds_nsi_ino_get(ns, t, ino, &w->a);
	if (!rc)
		rc = lmdb_err(mdb_cursor_open(t, ns->xattrs, &cur));
	if (rc)
		goto out;
	be64_put(kb, ino);
	for (mrc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); mrc == 0;
	     mrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		if (k.mv_size <= 8 || be64_get(k.mv_data) != ino)
			break;
		size_t nl = k.mv_size - 8;
		const char *nm = (const char *)k.mv_data + 8;
		if (c->uid != 0 && nl >= 8 && memcmp(nm, "trusted.", 8) == 0)
			continue;
		if (n + nl + 1 > cap) {
			size_t ncap = (cap ? cap * 2 : 256) + nl + 1;
			char *nb = realloc(buf, ncap);
			if (!nb) {
				rc = -ENOMEM;
				goto out;
			}
			buf = nb;
			cap = ncap;
		}
		memcpy(buf + n, nm, nl);
		buf[n + nl] = '\0';
		n += nl + 1;
	}
	if (mrc && mrc != MDB_NOTFOUND) {
		rc = lmdb_err(mrc);
		goto out;
	}
	if (!buf && !(buf = malloc(1))) {
		rc = -ENOMEM;
		goto out;
	}
	*list = buf;
	*len = n;
	buf = NULL;
out:
	free(buf);
	if (cur)
		mdb_cursor_close(cur);
	if (t)
		mdb_txn_abort(t);
	free(w);
	return rc;
}

int mds_nsi_xattr_del(mds_ns *ns, MDB_txn *t, uint64_t ino, const char *name)
{
	uint8_t kb[8 + PFS_XATTR_NAME_MAX];
	MDB_val k;
	int rc;

	if (strlen(name) > PFS_XATTR_NAME_MAX)
		return -ERANGE;
	k.mv_size = dkey(kb, ino, name);
	k.mv_data = kb;
	rc = mdb_del(t, ns->xattrs, &k, NULL);
	return rc == 0 || rc == MDB_NOTFOUND ? 0 : lmdb_err(rc);
}

int mds_ns_removexattr(mds_ns *ns, const pfs_cred *c, uint64_t ino, const char *name)
{
	struct work *w = work_new();
	uint8_t kb[8 + PFS_XATTR_NAME_MAX];
	MDB_val k;
	MDB_txn *t = NULL;
	int kind, rc;

	if (!w)
		return -ENOMEM;
	rc = xattr_ns(name, &kind);
	if (!rc)
		rc = wbegin(ns, &t);
	if (!rc)
		rc = mds_nsi_ino_get(ns, t, ino, &w->a);
	if (!rc)
		rc = xattr_may(c, &w->a, kind, 1);
	if (rc)
		goto out;
	k.mv_size = dkey(kb, ino, name);
	k.mv_data = kb;
	rc = mdb_del(t, ns->xattrs, &k, NULL);
	if (rc) {
		rc = rc == MDB_NOTFOUND ? -ENODATA : lmdb_err(rc);
		goto out;
	}
	w->a.d.ctime = now_ns();
	rc = mds_nsi_ino_put(ns, t, &w->a);
out:
	rc = t ? mds_nsi_wend(ns, t, rc, 0) : rc;
	free(w);
	return rc;
}
