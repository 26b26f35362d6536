/* ns.c — the namespace operations of the MDS (the PFS_OP_MDS_* opcodes
 * that touch inodes: lookup, getattr, setattr, create, mknod, mkdir,
 * symlink, readlink, link, unlink, rmdir, rename, open, access, setsize,
 * getlayout, setstripe), the MDD layer in Lustre's terms.  Each is one LMDB
 * transaction over the helpers of the other files (ns_i.h): inode records
 * (nsdb.c), directory entries (dir.c), layouts from the OST allocator
 * (ostreg.c), destroy-log records (destroy_log.c).  Permission checks
 * follow POSIX with the caller's pfs_cred.
 *
 * Dropping the last link of a file with objects appends a destroy-log record
 * in the same transaction; mds/destroy.c removes the objects and then the
 * record, so a crash at any point leaks no object and loses no file.
 *
 * Search permission along the path: the kernel walks cached names without
 * asking us, so every operation on an inode (setattr, open, access, link,
 * readlink) and every operation in a directory (lookup, create, remove,
 * rename) also checks x on each directory from the inode's parent up to
 * the root (search_ok).  Every inode records a primary parent (ino_disk
 * parent): a directory its only one; a file the directory it was created,
 * linked (when it had none) or renamed into.  Limits: a file with several
 * hard links is checked along its primary parent only, whatever path the
 * caller used; when the primary name goes and other links remain the
 * parent becomes 0 (unknown) and only LOOKUP checks the walk; files of a
 * database older than this check have parent 0 too.  GETATTR (fstat),
 * GETLAYOUT (capability renewal of an open file) and SETSIZE are not
 * path-checked: they serve open descriptors.
 *
 * Open-unlinked files: drop_link asks orphan.c first; a regular file some
 * client has open (mds/open.c) keeps its inode with nlink 0 on the orphan
 * list, and its objects go when the last open does (mds/orphan.h). */
#include "mds/ns.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mds/ns_i.h"

/* ------------------------------------------------------------------ helpers */

static int check_name(const char *name)
{
	size_t n = strlen(name);

	if (n == 0)
		return -ENOENT;
	if (n > PFS_NAME_MAX)
		return -ENAMETOOLONG;
	if (strchr(name, '/'))
		return -EINVAL;
	return 0;
}

static int is_dot(const char *name)
{
	return strcmp(name, ".") == 0 || strcmp(name, "..") == 0;
}

static void to_attr(const struct inode *in, pfs_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->ino = in->ino;
	a->mode = in->d.mode;
	a->nlink = in->d.nlink;
	a->uid = in->d.uid;
	a->gid = in->d.gid;
	a->rdev = in->d.rdev;
	a->size = S_ISDIR(in->d.mode) ? 4096 : in->d.size;
	/* Files: what the objects used at the last close or fsync (a
	 * record from before that was kept: estimated from the size). */
	if (S_ISREG(in->d.mode) && (in->d.fflags & MDS_IF_BLOCKS))
		a->blocks = in->d.blocks;
	else
		a->blocks = (a->size + 511) / 512;
	if (S_ISREG(in->d.mode))
		a->tepoch = in->d.tepoch;
	if (S_ISREG(in->d.mode) && (in->d.fflags & MDS_IF_SIZE_STALE))
		a->flags |= PFS_ATTR_SIZE_STALE;
	a->atime_ns = in->d.atime;
	a->mtime_ns = in->d.mtime;
	a->ctime_ns = in->d.ctime;
}

void mds_nsi_to_attr(const struct inode *in, pfs_attr *a)
{
	to_attr(in, a);
}

static void to_layout(const struct inode *in, pfs_layout *l)
{
	memset(l, 0, sizeof(*l));
	if (S_ISREG(in->d.mode)) {
		l->stripe_size = in->d.ss;
		l->stripe_count = in->d.sc;
		memcpy(l->stripe, in->st, (size_t)in->d.sc * sizeof(pfs_stripe));
	} else if (S_ISDIR(in->d.mode)) {
		l->stripe_size = in->d.def_ss;
	}
}

/* A directory's default first OST (def_off1 is stored plus one, so the 0
 * of directories made before it existed means "any"). */
static uint32_t dir_def_offset(const struct inode *dir)
{
	return dir->d.def_off1 ? dir->d.def_off1 - 1 : PFS_STRIPE_OFFSET_ANY;
}

/* Sticky directories: only the owner of the entry, of the directory, or
 * root may remove or rename it. */
static int sticky_ok(const pfs_cred *c, const struct inode *dir, const struct inode *victim)
{
	if (!(dir->d.mode & S_ISVTX) || c->uid == 0 || c->uid == victim->d.uid ||
	    c->uid == dir->d.uid)
		return 0;
	return -EPERM;
}

/* Search (x) permission on directory dir and each of its ancestors up to
 * the root.  A missing or non-directory ancestor (a stale primary parent
 * of a file) ends the walk: unknown, allowed.  tmp is scratch. */
static int search_ok(mds_ns *ns, MDB_txn *t, const pfs_cred *c, uint64_t dir,
		     struct inode *tmp)
{
	if (c->uid == 0)
		return 0;
	for (int depth = 0; dir != 0 && depth < 100000; depth++) {
		int rc = mds_nsi_ino_get(ns, t, dir, tmp);

		if (rc == -ENOENT || (rc == 0 && !S_ISDIR(tmp->d.mode)))
			return 0;
		if (!rc)
			rc = may(c, tmp, X_OK);
		if (rc || dir == ROOT_INO)
			return rc;
		dir = tmp->d.parent;
	}
	return -ELOOP;
}

/* Search permission on the path to inode in: its primary parent's. */
static int path_ok(mds_ns *ns, MDB_txn *t, const pfs_cred *c, const struct inode *in,
		   struct inode *tmp)
{
	if (in->ino == ROOT_INO || in->d.parent == 0)
		return 0;
	return search_ok(ns, t, c, in->d.parent, tmp);
}

/* ------------------------------------------------------------------ dropping a link */

/* Remove one link to victim (already unlinked from directory dir).  The last
 * link of a file frees the inode and logs its objects for destruction;
 * *logged is set then, unless the file is open: then it becomes an orphan
 * (orphan.c).  Directories are freed at once. */
static int drop_link(mds_ns *ns, MDB_txn *t, struct inode *victim, uint64_t dir, int64_t now,
		     int *logged)
{
	int rc;

	if (!S_ISDIR(victim->d.mode) && victim->d.nlink > 1) {
		victim->d.nlink--;
		victim->d.ctime = now;
		if (victim->d.parent == dir)
			victim->d.parent = 0; /* the other links' directories are unknown */
		return mds_nsi_ino_put(ns, t, victim);
	}
	rc = mds_nsi_orphan_keep(ns, t, victim, now); /* open: kept (orphan.c) */
	if (rc)
		return rc < 0 ? rc : 0;
	if (S_ISREG(victim->d.mode) && victim->d.sc > 0) {
		rc = mds_nsi_destroy_append(ns, t, victim->st, victim->d.sc);
		if (rc)
			return rc;
		*logged = 1;
	}
	rc = mds_nsi_del_prefix(t, ns->xattrs, victim->ino);
	if (rc)
		return rc;
	uint8_t kb[8];
	MDB_val k = { 8, kb };
	be64_put(kb, victim->ino);
	return lmdb_err(mdb_del(t, ns->inodes, &k, NULL));
}

/* ------------------------------------------------------------------ lookups */

int mds_ns_lookup(mds_ns *ns, const pfs_cred *c, uint64_t parent, const char *name,
		  pfs_attr *out)
{
	struct work *w = work_new();
	struct dent_val dv;
	MDB_txn *t = NULL;
	int rc;

	if (!w)
		return -ENOMEM;
	rc = rbegin(ns, &t);
	if (rc)
		goto out;
	rc = dir_get(ns, t, parent, &w->a);
	if (!rc)
		rc = may(c, &w->a, X_OK);
	if (!rc)
		rc = path_ok(ns, t, c, &w->a, &w->c);
	if (rc)
		goto out;
	if (strcmp(name, ".") == 0) {
		w->b = w->a;
	} else if (strcmp(name, "..") == 0) {
		rc = mds_nsi_ino_get(ns, t, w->a.d.parent, &w->b);
	} else {
		rc = check_name(name);
		if (!rc)
			rc = mds_nsi_dent_get(ns, t, parent, name, &dv);
		if (!rc)
			rc = mds_nsi_ino_get(ns, t, dv.child, &w->b);
	}
	if (!rc)
		to_attr(&w->b, out);
out:
	if (t)
		mdb_txn_abort(t);
	free(w);
	return rc;
}

int mds_ns_getattr(mds_ns *ns, const pfs_cred *c, uint64_t ino, pfs_attr *out)
{
	struct work *w = work_new();
	MDB_txn *t = NULL;
	int rc;

	if (!w)
		return -ENOMEM;
	rc = rbegin(ns, &t);
	if (!rc)
		rc = mds_nsi_ino_get(ns, t, ino, &w->a);
	if (!rc)
		to_attr(&w->a, out);
	if (t)
		mdb_txn_abort(t);
	free(w);
	return rc;
}

/* ------------------------------------------------------------------ setattr */

/* 1 if mode nm is cur with some of S_ISUID/S_ISGID removed and nothing
 * else changed. */
static int drops_setid_only(uint32_t cur, uint32_t nm)
{
	return nm != cur && (nm & ~cur) == 0 && ((cur ^ nm) & ~(uint32_t)(S_ISUID | S_ISGID)) == 0;
}

int mds_ns_setattr(mds_ns *ns, const pfs_cred *c, uint64_t ino, uint32_t valid,
		   uint32_t mode, uint32_t uid, uint32_t gid, uint64_t size,
		   int64_t atime_ns, int64_t mtime_ns, pfs_attr *out)
{
	struct work *w = work_new();
	struct inode *in;
	MDB_txn *t = NULL;
	int64_t now = now_ns();
	int owner, rc;

	if (!w)
		return -ENOMEM;
	in = &w->a;
	rc = wbegin(ns, &t);
	if (rc)
		goto out;
	rc = mds_nsi_ino_get(ns, t, ino, in);
	if (!rc && !(valid & PFS_SETATTR_FD))
		rc = path_ok(ns, t, c, in, &w->b);
	if (rc)
		goto out;
	owner = c->uid == 0 || c->uid == in->d.uid;

	/* As Linux without CAP_CHOWN: only the owner may "change" the uid, and
	 * only to itself; only the owner may change the group, to its current
	 * group or one of the caller's. */
	if (valid & (PFS_SETATTR_UID | PFS_SETATTR_GID)) {
		if ((valid & PFS_SETATTR_UID) && uid != (uint32_t)-1) {
			if (c->uid != 0 && !(c->uid == in->d.uid && uid == in->d.uid)) {
				rc = -EPERM;
				goto out;
			}
			in->d.uid = uid;
		}
		if ((valid & PFS_SETATTR_GID) && gid != (uint32_t)-1) {
			if (c->uid != 0 && !(c->uid == in->d.uid &&
					     (gid == in->d.gid || pfs_cred_in_group(c, gid)))) {
				rc = -EPERM;
				goto out;
			}
			in->d.gid = gid;
		}
		/* A non-root chown must not hand out set-id privileges. */
		if (c->uid != 0 && !S_ISDIR(in->d.mode))
			in->d.mode &= ~(uint32_t)(S_ISUID | S_ISGID);
	}
	if ((valid & PFS_SETATTR_MODE) && !owner && S_ISREG(in->d.mode) &&
	    drops_setid_only(in->d.mode & 07777, mode & 07777)) {
		/* The kernel's remove-privileges before a write or truncate by
		 * a caller without CAP_FSETID is a chmod that only drops
		 * set-id bits: a writer may do that (writing does it). */
		valid = (valid & ~(uint32_t)PFS_SETATTR_MODE) | PFS_SETATTR_KILLPRIV;
		if (!(valid & PFS_SETATTR_FD)) {
			rc = may(c, in, W_OK);
			if (rc)
				goto out;
		}
		in->d.mode = (in->d.mode & S_IFMT) | (mode & 07777);
	}
	if (valid & PFS_SETATTR_MODE) {
		if (!owner) {
			rc = -EPERM;
			goto out;
		}
		uint32_t m = mode & 07777;
		if (c->uid != 0 && !S_ISDIR(in->d.mode) && !pfs_cred_in_group(c, in->d.gid))
			m &= ~(uint32_t)S_ISGID;
		in->d.mode = (in->d.mode & S_IFMT) | m;
	}
	if (valid & PFS_SETATTR_SIZE) {
		if (S_ISDIR(in->d.mode)) {
			rc = -EISDIR;
			goto out;
		}
		if (!S_ISREG(in->d.mode)) {
			rc = -EINVAL;
			goto out;
		}
		/* Through a descriptor opened for writing the open decided. */
		if (!(valid & PFS_SETATTR_FD)) {
			rc = may(c, in, W_OK);
			if (rc)
				goto out;
		}
		if (size != in->d.size || !(valid & PFS_SETATTR_MTIME))
			in->d.mtime = now;
		in->d.size = size;
		/* A new truncate epoch: sizes pushed by writers that have not
		 * seen it cannot grow the file again (mds_ns_setsize_epoch).
		 * The objects are cut after this reply, so they use at most
		 * what the new size covers; a truncate up adds nothing. */
		in->d.tepoch++;
		if ((in->d.fflags & MDS_IF_BLOCKS) && in->d.blocks > (size + 511) / 512)
			in->d.blocks = (size + 511) / 512;
		/* Truncation drops set-id bits like a write (handle_killpriv). */
		if (c->uid != 0)
			valid |= PFS_SETATTR_KILLPRIV;
	}
	if ((valid & PFS_SETATTR_KILLPRIV) && S_ISREG(in->d.mode)) {
		/* What a write, truncate or chown drops (the kernel's
		 * file_remove_privs; done here for a mount the kernel leaves it
		 * to, FUSE_HANDLE_KILLPRIV_V2): S_ISUID, and S_ISGID with
		 * group-exec (without it, it marks mandatory locking and stays),
		 * for a caller without CAP_FSETID (root stands for it here) or
		 * at any chown; security.capability always. */
		if (!owner && !(valid & PFS_SETATTR_FD)) {
			rc = may(c, in, W_OK);
			if (rc)
				goto out;
		}
		if (c->uid != 0 || (valid & (PFS_SETATTR_UID | PFS_SETATTR_GID))) {
			in->d.mode &= ~(uint32_t)S_ISUID;
			if (in->d.mode & S_IXGRP)
				in->d.mode &= ~(uint32_t)S_ISGID;
		}
		rc = mds_nsi_xattr_del(ns, t, ino, "security.capability");
		if (rc)
			goto out;
	}
	if (valid & (PFS_SETATTR_ATIME | PFS_SETATTR_MTIME | PFS_SETATTR_ATIME_NOW |
		     PFS_SETATTR_MTIME_NOW)) {
		int explicit_t = ((valid & PFS_SETATTR_ATIME) && !(valid & PFS_SETATTR_ATIME_NOW)) ||
				 ((valid & PFS_SETATTR_MTIME) && !(valid & PFS_SETATTR_MTIME_NOW));
		if (!owner) {
			/* utimes(NULL) needs only write permission; explicit times
			 * need ownership. */
			if (explicit_t) {
				rc = -EPERM;
				goto out;
			}
			rc = may(c, in, W_OK);
			if (rc)
				goto out;
		}
		if (valid & PFS_SETATTR_ATIME_NOW)
			in->d.atime = now;
		else if (valid & PFS_SETATTR_ATIME)
			in->d.atime = atime_ns;
		if (valid & PFS_SETATTR_MTIME_NOW)
			in->d.mtime = now;
		else if (valid & PFS_SETATTR_MTIME)
			in->d.mtime = mtime_ns;
	}
	in->d.ctime = now;
	rc = mds_nsi_ino_put(ns, t, in);
	if (!rc)
		to_attr(in, out);
out:
	rc = t ? mds_nsi_wend(ns, t, rc, 0) : rc;
	free(w);
	return rc;
}

/* ------------------------------------------------------------------ create */

/* Fill a new inode owned by c in directory dir (set-gid directories pass
 * their group on, and their set-gid bit to subdirectories). */
static int inode_new(mds_ns *ns, MDB_txn *t, const pfs_cred *c, const struct inode *dir,
		     uint32_t mode, uint32_t rdev, int64_t now, const uint64_t *ino,
		     struct inode *in)
{
	int rc;

	memset(&in->d, 0, sizeof(in->d));
	in->target[0] = '\0';
	if (ino) {
		/* a reserved number (a slot): never given out by the counter
		 * again, but check it is free all the same */
		rc = mds_nsi_ino_get(ns, t, *ino, in);
		if (rc == 0)
			return -ESTALE;
		if (rc != -ENOENT)
			return rc;
		memset(&in->d, 0, sizeof(in->d));
		in->target[0] = '\0';
		in->ino = *ino;
	} else {
		rc = mds_nsi_meta_next(ns, t, "next_ino", ROOT_INO + 1, &in->ino);
		if (rc)
			return rc;
	}
	in->d.mode = mode;
	in->d.uid = c->uid;
	in->d.gid = c->gid;
	if (dir->d.mode & S_ISGID) {
		in->d.gid = dir->d.gid;
		if (S_ISDIR(mode))
			in->d.mode |= S_ISGID;
	}
	if (c->uid != 0 && S_ISREG(mode) && (in->d.mode & S_ISGID) &&
	    !pfs_cred_in_group(c, in->d.gid))
		in->d.mode &= ~(uint32_t)S_ISGID;
	in->d.rdev = rdev;
	in->d.nlink = S_ISDIR(mode) ? 2 : 1;
	in->d.atime = in->d.mtime = in->d.ctime = now;
	in->d.parent = dir->ino; /* the primary parent (search_ok) */
	if (S_ISDIR(mode)) {
		in->d.next_cookie = FIRST_COOKIE;
		in->d.def_ss = dir->d.def_ss;
		in->d.def_sc = dir->d.def_sc;
		in->d.def_off1 = dir->d.def_off1;
	} else if (S_ISREG(mode)) {
		in->d.fflags = MDS_IF_BLOCKS; /* no block used yet; mounts send the
					       * objects' count with SETSIZE */
	}
	return 0;
}

/* Common front of every entry-creating call: load the parent, check
 * permission and that name is free.  Returns -EEXIST with *dv filled when
 * the name exists. */
static int create_prep(mds_ns *ns, MDB_txn *t, const pfs_cred *c, uint64_t parent,
		       const char *name, struct inode *dir, struct dent_val *dv,
		       struct inode *tmp)
{
	int rc = check_name(name);

	if (rc)
		return rc;
	rc = dir_get(ns, t, parent, dir);
	if (!rc)
		rc = may(c, dir, W_OK | X_OK);
	if (!rc)
		rc = path_ok(ns, t, c, dir, tmp);
	if (rc)
		return rc;
	if (is_dot(name))
		return -EEXIST;
	if (dir->d.nlink == 0)
		return -ENOENT;
	rc = mds_nsi_dent_get(ns, t, parent, name, dv);
	if (rc == 0)
		return -EEXIST;
	return rc == -ENOENT ? 0 : rc;
}

/* Link the new inode in and store both. */
static int create_finish(mds_ns *ns, MDB_txn *t, struct inode *dir, const char *name,
			 struct inode *in, int64_t now)
{
	int rc = mds_nsi_dent_add(ns, t, dir, name, in->ino, in->d.mode);

	if (rc)
		return rc;
	if (S_ISDIR(in->d.mode))
		dir->d.nlink++;
	dir->d.mtime = dir->d.ctime = now;
	rc = mds_nsi_ino_put(ns, t, dir);
	if (!rc)
		rc = mds_nsi_ino_put(ns, t, in);
	return rc;
}

/* A slot (mds_ns_create_slots) the new file takes its inode number and
 * layout from: the record of ino, owned by client, good at now_ms. */
struct create_slot {
	uint64_t ino, client, now_ms;
};

static int do_create(mds_ns *ns, const pfs_cred *c, uint64_t parent, const char *name,
		     uint32_t mode, uint32_t rdev, uint32_t flags, uint32_t ss, uint32_t sc,
		     uint32_t so, const char *target, const struct create_slot *slot,
		     pfs_attr *out, pfs_layout *lay)
{
	struct work *w = work_new();
	struct dent_val dv;
	MDB_txn *t = NULL;
	int64_t now = now_ns();
	int rc;

	if (!w)
		return -ENOMEM;
	rc = wbegin(ns, &t);
	if (rc)
		goto out;
	rc = create_prep(ns, t, c, parent, name, &w->a, &dv, &w->c);
	if (rc == -EEXIST && S_ISREG(mode) && lay && !(flags & PFS_CREATE_EXCL) && !slot &&
	    !is_dot(name)) {
		/* open(O_CREAT) of an existing file opens it: checked as an
		 * open with the caller's access mode (the kernel sends CREATE
		 * when its lookup found no name, which another client may have
		 * created meanwhile). */
		uint32_t mask = ((flags & PFS_CREATE_READ) ? R_OK : 0) |
				((flags & PFS_CREATE_WRITE) ? W_OK : 0);

		rc = mds_nsi_ino_get(ns, t, dv.child, &w->b);
		if (!rc && S_ISDIR(w->b.d.mode))
			rc = -EISDIR;
		if (!rc)
			rc = may(c, &w->b, mask ? mask : R_OK | W_OK);
		if (!rc) {
			to_attr(&w->b, out);
			to_layout(&w->b, lay);
		}
		goto out;
	}
	if (rc)
		goto out;
	/* the slot's record goes with this transaction: used once */
	if (slot)
		rc = mds_nsi_slot_take(ns, t, slot->ino, slot->client, parent, slot->now_ms, lay);
	if (rc)
		goto out;
	rc = inode_new(ns, t, c, &w->a, mode, rdev, now, slot ? &slot->ino : NULL, &w->b);
	if (rc)
		goto out;
	if (slot) {
		w->b.d.ss = lay->stripe_size;
		w->b.d.sc = lay->stripe_count;
		memcpy(w->b.st, lay->stripe, (size_t)lay->stripe_count * sizeof(pfs_stripe));
	} else if (S_ISREG(mode)) {
		rc = mds_nsi_layout_alloc(ns, t, ss ? ss : w->a.d.def_ss, sc ? sc : w->a.d.def_sc,
					  so != PFS_STRIPE_OFFSET_ANY ? so : dir_def_offset(&w->a),
					  &w->b);
		if (rc)
			goto out;
	}
	if (target) {
		w->b.d.tlen = (uint32_t)strlen(target);
		memcpy(w->b.target, target, w->b.d.tlen + 1);
		w->b.d.size = w->b.d.tlen;
	}
	if (S_ISREG(mode) && (flags & MDS_CREATE_WRITER))
		w->b.d.fflags |= MDS_IF_SIZE_STALE;
	rc = create_finish(ns, t, &w->a, name, &w->b, now);
	if (rc)
		goto out;
	to_attr(&w->b, out);
	out->flags &= ~PFS_ATTR_SIZE_STALE;
	if (lay)
		to_layout(&w->b, lay);
out:
	rc = t ? mds_nsi_wend(ns, t, rc, 0) : rc;
	free(w);
	return rc;
}

int mds_ns_create_at(mds_ns *ns, const pfs_cred *c, uint64_t parent, const char *name,
		     uint32_t mode, uint32_t flags, uint32_t stripe_size, uint32_t stripe_count,
		     uint32_t stripe_offset, pfs_attr *out, pfs_layout *lay)
{
	if ((mode & S_IFMT) && !S_ISREG(mode))
		return -EINVAL;
	return do_create(ns, c, parent, name, S_IFREG | (mode & 07777), 0, flags, stripe_size,
			 stripe_count, stripe_offset, NULL, NULL, out, lay);
}

int mds_ns_create_slot(mds_ns *ns, const pfs_cred *c, uint64_t parent, const char *name,
		       uint32_t mode, uint32_t flags, uint64_t client, uint64_t ino,
		       pfs_attr *out, pfs_layout *lay)
{
	struct create_slot slot = { ino, client, (uint64_t)(now_ns() / 1000000) };

	if (((mode & S_IFMT) && !S_ISREG(mode)) || !lay)
		return -EINVAL;
	if (ino <= ROOT_INO)
		return -ESTALE;
	return do_create(ns, c, parent, name, S_IFREG | (mode & 07777), 0,
			 flags | PFS_CREATE_EXCL, 0, 0, PFS_STRIPE_OFFSET_ANY, NULL, &slot, out,
			 lay);
}

int mds_ns_create_slots(mds_ns *ns, const pfs_cred *c, uint64_t dir, unsigned n,
			uint64_t client, uint64_t ttl_ms, uint64_t *inos, pfs_layout *lays,
			pfs_attr *dir_attr)
{
	uint64_t now_ms = (uint64_t)(now_ns() / 1000000);
	struct work *w;
	MDB_txn *t = NULL;
	int rc;

	if (n == 0 || n > PFS_CREATE_SLOTS_MAX)
		return -EINVAL;
	w = work_new();
	if (!w)
		return -ENOMEM;
	rc = wbegin(ns, &t);
	if (rc)
		goto out;
	rc = dir_get(ns, t, dir, &w->a);
	if (!rc)
		rc = may(c, &w->a, W_OK | X_OK);
	if (!rc)
		rc = path_ok(ns, t, c, &w->a, &w->c);
	if (!rc && w->a.d.nlink == 0)
		rc = -ENOENT;
	for (unsigned i = 0; !rc && i < n; i++) {
		memset(&w->b.d, 0, sizeof(w->b.d));
		w->b.d.mode = S_IFREG;
		rc = mds_nsi_meta_next(ns, t, "next_ino", ROOT_INO + 1, &inos[i]);
		if (!rc)
			rc = mds_nsi_layout_alloc(ns, t, w->a.d.def_ss, w->a.d.def_sc,
						  dir_def_offset(&w->a), &w->b);
		if (!rc)
			to_layout(&w->b, &lays[i]);
		if (!rc)
			rc = mds_nsi_slot_put(ns, t, inos[i], client, dir, now_ms + ttl_ms, &lays[i]);
	}
	if (!rc) {
		to_attr(&w->a, dir_attr);
		/* slots never used (a mount that died, a delegation recalled) */
		(void)mds_nsi_slot_sweep(ns, t, now_ms, 2 * n);
	}
out:
	/* the ids reserved are synced before this returns when a new batch
	 * was reserved (mds_nsi_wend); the records go with the periodic
	 * sync, as any namespace change */
	rc = t ? mds_nsi_wend(ns, t, rc, 0) : rc;
	free(w);
	return rc;
}

int mds_ns_create(mds_ns *ns, const pfs_cred *c, uint64_t parent, const char *name,
		  uint32_t mode, uint32_t flags, uint32_t stripe_size, uint32_t stripe_count,
		  pfs_attr *out, pfs_layout *lay)
{
	return mds_ns_create_at(ns, c, parent, name, mode, flags, stripe_size, stripe_count,
				PFS_STRIPE_OFFSET_ANY, out, lay);
}

int mds_ns_mknod(mds_ns *ns, const pfs_cred *c, uint64_t parent, const char *name,
		 uint32_t mode, uint32_t rdev, pfs_attr *out)
{
	pfs_layout lay;
	uint32_t type = mode & S_IFMT;

	if (type == 0)
		type = S_IFREG;
	if (type != S_IFREG && type != S_IFCHR && type != S_IFBLK && type != S_IFIFO &&
	    type != S_IFSOCK)
		return -EINVAL;
	if ((type == S_IFCHR || type == S_IFBLK) && c->uid != 0)
		return -EPERM;
	return do_create(ns, c, parent, name, type | (mode & 07777), rdev, PFS_CREATE_EXCL, 0, 0,
			 PFS_STRIPE_OFFSET_ANY,
			 NULL, NULL, out, type == S_IFREG ? &lay : NULL);
}

int mds_ns_mkdir(mds_ns *ns, const pfs_cred *c, uint64_t parent, const char *name,
		 uint32_t mode, pfs_attr *out)
{
	return do_create(ns, c, parent, name, S_IFDIR | (mode & 07777), 0, PFS_CREATE_EXCL, 0, 0,
			 PFS_STRIPE_OFFSET_ANY,
			 NULL, NULL, out, NULL);
}

int mds_ns_symlink(mds_ns *ns, const pfs_cred *c, uint64_t parent, const char *name,
		   const char *target, pfs_attr *out)
{
	size_t n = strlen(target);

	if (n == 0)
		return -ENOENT;
	if (n > PFS_PATH_MAX)
		return -ENAMETOOLONG;
	return do_create(ns, c, parent, name, S_IFLNK | 0777, 0, PFS_CREATE_EXCL, 0, 0,
			 PFS_STRIPE_OFFSET_ANY, target, NULL,
			 out, NULL);
}

int mds_ns_readlink(mds_ns *ns, const pfs_cred *c, uint64_t ino, char *target)
{
	struct work *w = work_new();
	MDB_txn *t = NULL;
	int rc;

	if (!w)
		return -ENOMEM;
	rc = rbegin(ns, &t);
	if (!rc)
		rc = mds_nsi_ino_get(ns, t, ino, &w->a);
	if (!rc && !S_ISLNK(w->a.d.mode))
		rc = -EINVAL;
	if (!rc)
		rc = path_ok(ns, t, c, &w->a, &w->b);
	if (!rc)
		memcpy(target, w->a.target, w->a.d.tlen + 1);
	if (t)
		mdb_txn_abort(t);
	free(w);
	return rc;
}

int mds_ns_link(mds_ns *ns, const pfs_cred *c, uint64_t ino, uint64_t newparent,
		const char *newname, pfs_attr *out)
{
	struct work *w = work_new();
	struct dent_val dv;
	MDB_txn *t = NULL;
	int64_t now = now_ns();
	int rc;

	if (!w)
		return -ENOMEM;
	rc = wbegin(ns, &t);
	if (rc)
		goto out;
	rc = mds_nsi_ino_get(ns, t, ino, &w->b);
	if (rc)
		goto out;
	if (S_ISDIR(w->b.d.mode)) {
		rc = -EPERM;
		goto out;
	}
	if (w->b.d.nlink >= 65000) {
		rc = -EMLINK;
		goto out;
	}
	rc = path_ok(ns, t, c, &w->b, &w->c);
	if (!rc)
		rc = create_prep(ns, t, c, newparent, newname, &w->a, &dv, &w->c);
	if (rc)
		goto out;
	if (w->b.d.parent == 0)
		w->b.d.parent = newparent;
	w->b.d.nlink++;
	w->b.d.ctime = now;
	rc = create_finish(ns, t, &w->a, newname, &w->b, now);
	if (!rc)
		to_attr(&w->b, out);
out:
	rc = t ? mds_nsi_wend(ns, t, rc, 0) : rc;
	free(w);
	return rc;
}

/* ------------------------------------------------------------------ remove */

/* Remove name from parent (dir: rmdir).  expect: 0, or the inode the
 * name must still name, else -ESTALE (an asynchronous unlink sent late
 * must not remove what another client created again under the name);
 * checked in the removal's own transaction. */
static int do_remove(mds_ns *ns, const pfs_cred *c, uint64_t parent, const char *name, int dir,
		     uint64_t expect)
{
	struct work *w = work_new();
	struct dent_val dv;
	MDB_txn *t = NULL;
	int64_t now = now_ns();
	int logged = 0, rc;

	if (!w)
		return -ENOMEM;
	rc = wbegin(ns, &t);
	if (rc)
		goto out;
	rc = dir_get(ns, t, parent, &w->a);
	if (!rc)
		rc = may(c, &w->a, W_OK | X_OK);
	if (!rc)
		rc = path_ok(ns, t, c, &w->a, &w->c);
	if (rc)
		goto out;
	if (is_dot(name)) {
		rc = dir ? (strcmp(name, ".") == 0 ? -EINVAL : -ENOTEMPTY) : -EISDIR;
		goto out;
	}
	rc = check_name(name);
	if (!rc)
		rc = mds_nsi_dent_get(ns, t, parent, name, &dv);
	if (!rc && expect && dv.child != expect)
		rc = -ESTALE;
	if (!rc)
		rc = mds_nsi_ino_get(ns, t, dv.child, &w->b);
	if (!rc)
		rc = sticky_ok(c, &w->a, &w->b);
	if (rc)
		goto out;
	if (dir && !S_ISDIR(w->b.d.mode)) {
		rc = -ENOTDIR;
		goto out;
	}
	if (!dir && S_ISDIR(w->b.d.mode)) {
		rc = -EISDIR;
		goto out;
	}
	if (dir) {
		rc = mds_nsi_dir_empty(ns, t, w->b.ino);
		if (rc == 0)
			rc = -ENOTEMPTY;
		if (rc < 0)
			goto out;
		w->a.d.nlink--;
	}
	rc = mds_nsi_dent_del(ns, t, parent, name, dv.cookie);
	if (!rc)
		rc = drop_link(ns, t, &w->b, parent, now, &logged);
	if (rc)
		goto out;
	w->a.d.mtime = w->a.d.ctime = now;
	rc = mds_nsi_ino_put(ns, t, &w->a);
out:
	rc = t ? mds_nsi_wend(ns, t, rc, logged) : rc;
	free(w);
	return rc;
}

int mds_ns_unlink(mds_ns *ns, const pfs_cred *c, uint64_t parent, const char *name)
{
	return do_remove(ns, c, parent, name, 0, 0);
}

int mds_ns_unlink_ino(mds_ns *ns, const pfs_cred *c, uint64_t parent, const char *name,
		      uint64_t ino)
{
	return do_remove(ns, c, parent, name, 0, ino);
}

int mds_ns_rmdir(mds_ns *ns, const pfs_cred *c, uint64_t parent, const char *name)
{
	return do_remove(ns, c, parent, name, 1, 0);
}

/* ------------------------------------------------------------------ rename */

/* 1 if directory anc is dir or one of its ancestors, 0 if not, or -errno. */
static int is_ancestor(mds_ns *ns, MDB_txn *t, uint64_t anc, uint64_t dir, struct inode *tmp)
{
	uint64_t cur = dir;

	for (int depth = 0; depth < 100000; depth++) {
		if (cur == anc)
			return 1;
		if (cur == ROOT_INO)
			return 0;
		int rc = mds_nsi_ino_get(ns, t, cur, tmp);
		if (rc)
			return rc;
		cur = tmp->d.parent;
	}
	return -ELOOP;
}

int mds_ns_rename(mds_ns *ns, const pfs_cred *c, uint64_t parent, const char *name,
		  uint64_t newparent, const char *newname, uint32_t flags)
{
	struct work *w = work_new();
	struct inode *p1, *p2, *src, *dst = NULL;
	struct dent_val sdv, ddv;
	MDB_txn *t = NULL;
	int64_t now = now_ns();
	int logged = 0, rc;

	if (!w)
		return -ENOMEM;
	if ((flags & ~(PFS_RENAME_NOREPLACE | PFS_RENAME_EXCHANGE)) ||
	    flags == (PFS_RENAME_NOREPLACE | PFS_RENAME_EXCHANGE)) {
		rc = -EINVAL;
		goto out;
	}
	if (is_dot(name) || is_dot(newname)) {
		rc = -EBUSY;
		goto out;
	}
	rc = check_name(name);
	if (!rc)
		rc = check_name(newname);
	if (!rc)
		rc = wbegin(ns, &t);
	if (rc)
		goto out;
	p1 = &w->a;
	p2 = parent == newparent ? p1 : &w->b;
	src = &w->c;
	rc = dir_get(ns, t, parent, p1);
	if (!rc && p2 != p1)
		rc = dir_get(ns, t, newparent, p2);
	if (!rc)
		rc = may(c, p1, W_OK | X_OK);
	if (!rc && p2 != p1)
		rc = may(c, p2, W_OK | X_OK);
	if (!rc)
		rc = path_ok(ns, t, c, p1, src); /* src is scratch until loaded */
	if (!rc && p2 != p1)
		rc = path_ok(ns, t, c, p2, src);
	if (!rc)
		rc = mds_nsi_dent_get(ns, t, parent, name, &sdv);
	if (!rc)
		rc = mds_nsi_ino_get(ns, t, sdv.child, src);
	if (rc)
		goto out;
	rc = mds_nsi_dent_get(ns, t, newparent, newname, &ddv);
	if (rc == 0) {
		dst = &w->d;
		rc = mds_nsi_ino_get(ns, t, ddv.child, dst);
	} else if (rc == -ENOENT) {
		rc = (flags & PFS_RENAME_EXCHANGE) ? -ENOENT : 0;
	}
	if (rc)
		goto out;
	if (dst && (flags & PFS_RENAME_NOREPLACE)) {
		rc = -EEXIST;
		goto out;
	}
	if (dst && dst->ino == src->ino)
		goto out; /* same file: POSIX says do nothing */
	rc = sticky_ok(c, p1, src);
	if (!rc && dst)
		rc = sticky_ok(c, p2, dst);
	if (rc)
		goto out;
	/* Moving a directory rewrites its "..": needs write permission on it,
	 * and it must not land inside itself. */
	if (S_ISDIR(src->d.mode) && p1 != p2) {
		rc = may(c, src, W_OK);
		if (!rc) {
			rc = is_ancestor(ns, t, src->ino, newparent, &w->d);
			if (rc == 1)
				rc = -EINVAL;
		}
		if (rc)
			goto out;
		if (dst) /* is_ancestor used w->d as scratch */
			rc = mds_nsi_ino_get(ns, t, ddv.child, dst);
		if (rc)
			goto out;
	}
	if (dst && (flags & PFS_RENAME_EXCHANGE) && S_ISDIR(dst->d.mode) && p1 != p2) {
		struct inode *scratch = malloc(sizeof(*scratch));
		if (!scratch) {
			rc = -ENOMEM;
			goto out;
		}
		rc = may(c, dst, W_OK);
		if (!rc) {
			rc = is_ancestor(ns, t, dst->ino, parent, scratch);
			if (rc == 1)
				rc = -EINVAL;
		}
		free(scratch);
		if (rc)
			goto out;
	}

	if (flags & PFS_RENAME_EXCHANGE) {
		rc = mds_nsi_dent_set(ns, t, parent, name, dst->ino, dst->d.mode, sdv.cookie);
		if (!rc)
			rc = mds_nsi_dent_set(ns, t, newparent, newname, src->ino, src->d.mode, ddv.cookie);
		if (rc)
			goto out;
		if (p1 != p2) {
			if (S_ISDIR(src->d.mode)) {
				p1->d.nlink--;
				p2->d.nlink++;
				src->d.parent = p2->ino;
			}
			if (S_ISDIR(dst->d.mode)) {
				p2->d.nlink--;
				p1->d.nlink++;
				dst->d.parent = p1->ino;
			}
			if (!S_ISDIR(src->d.mode) && src->d.parent == parent)
				src->d.parent = newparent;
			if (!S_ISDIR(dst->d.mode) && dst->d.parent == newparent)
				dst->d.parent = parent;
		}
		dst->d.ctime = now;
		rc = mds_nsi_ino_put(ns, t, dst);
		if (rc)
			goto out;
	} else {
		if (dst) {
			if (S_ISDIR(src->d.mode) && !S_ISDIR(dst->d.mode)) {
				rc = -ENOTDIR;
				goto out;
			}
			if (!S_ISDIR(src->d.mode) && S_ISDIR(dst->d.mode)) {
				rc = -EISDIR;
				goto out;
			}
			if (S_ISDIR(dst->d.mode)) {
				rc = mds_nsi_dir_empty(ns, t, dst->ino);
				if (rc == 0)
					rc = -ENOTEMPTY;
				if (rc < 0)
					goto out;
				p2->d.nlink--;
			}
			rc = mds_nsi_dent_del(ns, t, newparent, newname, ddv.cookie);
			if (!rc)
				rc = drop_link(ns, t, dst, newparent, now, &logged);
			if (rc)
				goto out;
		}
		rc = mds_nsi_dent_del(ns, t, parent, name, sdv.cookie);
		if (!rc)
			rc = mds_nsi_dent_add(ns, t, p2, newname, src->ino, src->d.mode);
		if (rc)
			goto out;
		if (S_ISDIR(src->d.mode) && p1 != p2) {
			p1->d.nlink--;
			p2->d.nlink++;
			src->d.parent = p2->ino;
		} else if (!S_ISDIR(src->d.mode) && src->d.parent == parent) {
			src->d.parent = newparent;
		}
	}
	src->d.ctime = now;
	p1->d.mtime = p1->d.ctime = now;
	p2->d.mtime = p2->d.ctime = now;
	rc = mds_nsi_ino_put(ns, t, src);
	if (!rc)
		rc = mds_nsi_ino_put(ns, t, p1);
	if (!rc && p2 != p1)
		rc = mds_nsi_ino_put(ns, t, p2);
out:
	rc = t ? mds_nsi_wend(ns, t, rc, logged) : rc;
	free(w);
	return rc;
}

/* ------------------------------------------------------------------ open, access, size, layout */

int mds_ns_open_file(mds_ns *ns, const pfs_cred *c, uint64_t ino, uint32_t flags,
		     pfs_attr *out, pfs_layout *lay)
{
	struct work *w = work_new();
	MDB_txn *t = NULL;
	uint32_t mask = 0;
	int rc;

	if (!w)
		return -ENOMEM;
	switch (flags & O_ACCMODE) {
	case O_RDONLY: mask = R_OK; break;
	case O_WRONLY: mask = W_OK; break;
	default: mask = R_OK | W_OK; break;
	}
	if (flags & O_TRUNC)
		mask |= W_OK;
	rc = rbegin(ns, &t);
	if (!rc)
		rc = mds_nsi_ino_get(ns, t, ino, &w->a);
	if (!rc && S_ISDIR(w->a.d.mode) && (mask & W_OK))
		rc = -EISDIR;
	if (!rc && S_ISLNK(w->a.d.mode))
		rc = -ELOOP;
	if (!rc)
		rc = may(c, &w->a, mask);
	if (!rc)
		rc = path_ok(ns, t, c, &w->a, &w->b);
	if (!rc) {
		to_attr(&w->a, out);
		to_layout(&w->a, lay);
	}
	if (t)
		mdb_txn_abort(t);
	free(w);
	return rc;
}

int mds_ns_access(mds_ns *ns, const pfs_cred *c, uint64_t ino, uint32_t mask)
{
	struct work *w = work_new();
	MDB_txn *t = NULL;
	int rc;

	if (!w)
		return -ENOMEM;
	rc = rbegin(ns, &t);
	if (!rc)
		rc = mds_nsi_ino_get(ns, t, ino, &w->a);
	if (!rc && (mask & 7))
		rc = may(c, &w->a, mask & 7);
	if (!rc && !(mask & MDS_ACCESS_NOPATH))
		rc = path_ok(ns, t, c, &w->a, &w->b);
	if (t)
		mdb_txn_abort(t);
	free(w);
	return rc;
}

int mds_ns_setsize(mds_ns *ns, const pfs_cred *c, uint64_t ino, uint64_t size,
		   int64_t mtime_ns, pfs_attr *out)
{
	return mds_ns_setsize_epoch(ns, c, ino, size, mtime_ns, MDS_EPOCH_ANY, MDS_BLOCKS_UNKNOWN,
				    out);
}

/* 1 if epoch e (as a client saw it) is older than the inode's (wrapping). */
static int epoch_stale(uint64_t e, uint32_t cur)
{
	return e != MDS_EPOCH_ANY && (int32_t)(cur - (uint32_t)e) > 0;
}

int mds_ns_setsize_epoch(mds_ns *ns, const pfs_cred *c, uint64_t ino, uint64_t size,
			 int64_t mtime_ns, uint64_t epoch, uint64_t blocks, pfs_attr *out)
{
	struct work *w = work_new();
	MDB_txn *t = NULL;
	int rc;

	if (!w)
		return -ENOMEM;
	rc = wbegin(ns, &t);
	if (!rc)
		rc = mds_nsi_ino_get(ns, t, ino, &w->a);
	if (!rc && !S_ISREG(w->a.d.mode))
		rc = S_ISDIR(w->a.d.mode) ? -EISDIR : -EINVAL;
	if (rc)
		goto out;
	/* A writer that has not seen the last truncate pushes a size from
	 * before it: its bytes up to there were cut with the objects, so
	 * growing the size would show them as zeros.  Its mtime still counts
	 * (it wrote); its block count was measured before the cut. */
	if (epoch_stale(epoch, w->a.d.tepoch)) {
		pfs_log(PFS_LOG_DEBUG, "setsize of ino %llu from truncate epoch %llu < %u: size kept",
			(unsigned long long)ino, (unsigned long long)epoch, w->a.d.tepoch);
	} else {
		if (size > w->a.d.size)
			w->a.d.size = size;
		if (blocks != MDS_BLOCKS_UNKNOWN) {
			w->a.d.blocks = blocks;
			w->a.d.fflags |= MDS_IF_BLOCKS;
		}
	}
	if (mtime_ns) {
		w->a.d.mtime = mtime_ns;
		w->a.d.ctime = now_ns();
	}
	rc = mds_nsi_ino_put(ns, t, &w->a);
	if (!rc)
		to_attr(&w->a, out);
out:
	rc = t ? mds_nsi_wend(ns, t, rc, 0) : rc;
	free(w);
	return rc;
}

int mds_ns_size_stale(mds_ns *ns, uint64_t ino, int stale)
{
	struct work *w = work_new();
	MDB_txn *t = NULL;
	int rc;

	if (!w)
		return -ENOMEM;
	/* Most calls find the flag as wanted (a create sets it already):
	 * look under a read transaction first, not the single writer's.
	 * Inside a group commit (mds/nsgroup.h) look in the group's own
	 * transaction instead: a read transaction would not see what the
	 * group's earlier members changed. */
	MDB_txn *g = mds_nsi_group_txn(ns);

	if (g) {
		rc = mds_nsi_ino_get(ns, g, ino, &w->a);
	} else {
		rc = rbegin(ns, &t);
		if (!rc)
			rc = mds_nsi_ino_get(ns, t, ino, &w->a);
		if (t)
			mdb_txn_abort(t);
		t = NULL;
	}
	if (rc || !S_ISREG(w->a.d.mode) || !(w->a.d.fflags & MDS_IF_SIZE_STALE) == !stale)
		goto out;
	rc = wbegin(ns, &t);
	if (!rc)
		rc = mds_nsi_ino_get(ns, t, ino, &w->a);
	if (!rc && S_ISREG(w->a.d.mode) && !(w->a.d.fflags & MDS_IF_SIZE_STALE) != !stale) {
		if (stale)
			w->a.d.fflags |= MDS_IF_SIZE_STALE;
		else
			w->a.d.fflags &= ~MDS_IF_SIZE_STALE;
		rc = mds_nsi_ino_put(ns, t, &w->a);
	}
	rc = t ? mds_nsi_wend(ns, t, rc, 0) : rc;
out:
	free(w);
	return rc;
}

int mds_ns_getlayout(mds_ns *ns, const pfs_cred *c, uint64_t ino, pfs_layout *lay,
		     int *is_dir)
{
	struct work *w = work_new();
	MDB_txn *t = NULL;
	int rc;

	if (!w)
		return -ENOMEM;
	rc = rbegin(ns, &t);
	if (!rc)
		rc = mds_nsi_ino_get(ns, t, ino, &w->a);
	if (!rc) {
		to_layout(&w->a, lay);
		*is_dir = S_ISDIR(w->a.d.mode);
		if (*is_dir) {
			lay->stripe_count = w->a.d.def_sc;
			lay->stripe[0].ost = dir_def_offset(&w->a);
		}
	}
	if (t)
		mdb_txn_abort(t);
	free(w);
	return rc;
}

int mds_ns_setstripe(mds_ns *ns, const pfs_cred *c, uint64_t ino, uint32_t stripe_size,
		     uint32_t stripe_count)
{
	return mds_ns_setstripe_at(ns, c, ino, stripe_size, stripe_count, PFS_STRIPE_OFFSET_ANY);
}

int mds_ns_setstripe_at(mds_ns *ns, const pfs_cred *c, uint64_t ino, uint32_t stripe_size,
			uint32_t stripe_count, uint32_t stripe_offset)
{
	struct work *w = work_new();
	struct inode *in;
	MDB_txn *t = NULL;
	int logged = 0, rc;

	if (!w)
		return -ENOMEM;
	in = &w->a;
	rc = pfs_layout_check(stripe_size ? stripe_size : ns->opts.default_stripe_size,
			      stripe_count == UINT32_MAX ? 1 : stripe_count);
	if (!rc)
		rc = mds_nsi_ost_index_check(ns, stripe_offset);
	if (!rc)
		rc = wbegin(ns, &t);
	if (!rc)
		rc = mds_nsi_ino_get(ns, t, ino, in);
	if (rc)
		goto out;
	if (c->uid != 0 && c->uid != in->d.uid) {
		rc = -EPERM;
		goto out;
	}
	if (S_ISDIR(in->d.mode)) {
		in->d.def_ss = stripe_size;
		in->d.def_sc = stripe_count;
		in->d.def_off1 = stripe_offset == PFS_STRIPE_OFFSET_ANY ? 0 : stripe_offset + 1;
	} else if (S_ISREG(in->d.mode)) {
		pfs_stripe old[PFS_MAX_STRIPES];
		uint32_t nold = in->d.sc;

		if (in->d.size != 0) {
			rc = -EBUSY;
			goto out;
		}
		memcpy(old, in->st, sizeof(old));
		rc = mds_nsi_layout_alloc(ns, t, stripe_size, stripe_count, stripe_offset, in);
		if (!rc && nold) {
			rc = mds_nsi_destroy_append(ns, t, old, nold);
			logged = 1;
		}
		if (rc)
			goto out;
	} else {
		rc = -EINVAL;
		goto out;
	}
	in->d.ctime = now_ns();
	rc = mds_nsi_ino_put(ns, t, in);
out:
	rc = t ? mds_nsi_wend(ns, t, rc, logged) : rc;
	free(w);
	return rc;
}
