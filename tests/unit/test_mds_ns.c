/* test_mds_ns.c — unit tests of mds/ns.c on a temporary LMDB directory. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cmocka.h>
#include <lmdb.h>

#include "common/log.h"
#include "mds/ns.h"

struct fx {
	char dir[64];
	char db[96];
	mds_ns *ns;
	uint64_t now_ms;
};

static const pfs_cred root = { 0, 0, 0, { 0 } };
static const pfs_cred alice = { 1000, 1000, 1, { 2000 } };
static const pfs_cred bob = { 1001, 1001, 0, { 0 } };

static uint64_t fx_clock(void *arg)
{
	return ((struct fx *)arg)->now_ms;
}

static void fx_open(struct fx *f)
{
	mds_ns_opts o = { .path = f->db, .sync_mode = MDS_SYNC_PERIODIC, .clock_ms = fx_clock,
			  .clock_arg = f, .mapsize = 1ull << 30 };
	assert_int_equal(mds_ns_open(&o, &f->ns), 0);
}

/* Register n OSTs of one OSS with the given free bytes (total 1 TiB). */
static void fx_osts(struct fx *f, uint32_t n, const uint64_t *free_b)
{
	mds_ost_report r[8];
	uint32_t idx[8];

	memset(r, 0, sizeof(r));
	for (uint32_t i = 0; i < n; i++) {
		snprintf(r[i].uuid, sizeof(r[i].uuid), "uuid-%u", i);
		r[i].total_bytes = 1ull << 40;
		r[i].free_bytes = free_b ? free_b[i] : 1ull << 39;
	}
	assert_int_equal(mds_ns_oss_register(f->ns, "oss0", "127.0.0.1", 7800, 7801, r, n, idx),
			 0);
	for (uint32_t i = 0; i < n; i++)
		assert_int_equal(idx[i], i);
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	pfs_log_init("test", PFS_LOG_ERR);
	strcpy(f->dir, "/tmp/test_mds_ns.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->db, sizeof(f->db), "%s/db", f->dir);
	f->now_ms = 1000000;
	fx_open(f);
	fx_osts(f, 4, NULL);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char p[160];

	mds_ns_close(f->ns);
	snprintf(p, sizeof(p), "%s/data.mdb", f->db);
	unlink(p);
	snprintf(p, sizeof(p), "%s/lock.mdb", f->db);
	unlink(p);
	snprintf(p, sizeof(p), "%s/mds.lock", f->db);
	unlink(p);
	rmdir(f->db);
	rmdir(f->dir);
	free(f);
	return 0;
}

static uint64_t mkfile(mds_ns *ns, const pfs_cred *c, uint64_t parent, const char *name,
		       uint32_t mode)
{
	pfs_attr a;
	pfs_layout l;

	assert_int_equal(mds_ns_create(ns, c, parent, name, mode, PFS_CREATE_EXCL, 0, 0, &a, &l), 0);
	return a.ino;
}

static uint64_t mkd(mds_ns *ns, const pfs_cred *c, uint64_t parent, const char *name,
		    uint32_t mode)
{
	pfs_attr a;

	assert_int_equal(mds_ns_mkdir(ns, c, parent, name, mode, &a), 0);
	return a.ino;
}

static uint32_t nlink_of(mds_ns *ns, uint64_t ino)
{
	pfs_attr a;

	assert_int_equal(mds_ns_getattr(ns, &root, ino, &a), 0);
	return a.nlink;
}

static uint64_t destroy_count(mds_ns *ns)
{
	uint64_t n;

	assert_int_equal(mds_ns_destroy_count(ns, &n), 0);
	return n;
}

/* ------------------------------------------------------------------ */

static void test_ns_basic(void **state)
{
	struct fx *f = *state;
	mds_ns *ns = f->ns;
	pfs_attr a, b;
	pfs_layout l;
	char target[PFS_PATH_MAX + 1];
	int isd;

	assert_int_equal(mds_ns_getattr(ns, &root, 1, &a), 0);
	assert_true(S_ISDIR(a.mode));
	assert_int_equal(a.nlink, 2);

	uint64_t d = mkd(ns, &root, 1, "d", 0755);
	assert_int_equal(nlink_of(ns, 1), 3);
	assert_int_equal(mds_ns_mkdir(ns, &root, 1, "d", 0755, &a), -EEXIST);

	assert_int_equal(mds_ns_create(ns, &root, d, "f", 0644, 0, 0, 0, &a, &l), 0);
	assert_true(S_ISREG(a.mode));
	assert_int_equal(a.mode & 07777, 0644);
	assert_int_equal(a.nlink, 1);
	assert_int_equal(l.stripe_size, PFS_DEFAULT_STRIPE_SIZE);
	assert_int_equal(l.stripe_count, 4);
	/* Non-EXCL create of an existing file returns it; EXCL refuses. */
	assert_int_equal(mds_ns_create(ns, &root, d, "f", 0600, 0, 0, 0, &b, &l), 0);
	assert_int_equal(b.ino, a.ino);
	assert_int_equal(mds_ns_create(ns, &root, d, "f", 0600, PFS_CREATE_EXCL, 0, 0, &b, &l),
			 -EEXIST);

	assert_int_equal(mds_ns_lookup(ns, &root, d, "f", &b), 0);
	assert_int_equal(b.ino, a.ino);
	assert_int_equal(mds_ns_lookup(ns, &root, d, "nope", &b), -ENOENT);
	assert_int_equal(mds_ns_lookup(ns, &root, d, "..", &b), 0);
	assert_int_equal(b.ino, 1);
	assert_int_equal(mds_ns_lookup(ns, &root, a.ino, "x", &b), -ENOTDIR);

	/* Symlink and readlink. */
	assert_int_equal(mds_ns_symlink(ns, &root, d, "s", "../some/where", &b), 0);
	assert_true(S_ISLNK(b.mode));
	assert_int_equal(b.size, 13);
	assert_int_equal(mds_ns_readlink(ns, &root, b.ino, target), 0);
	assert_string_equal(target, "../some/where");
	assert_int_equal(mds_ns_readlink(ns, &root, a.ino, target), -EINVAL);

	/* mknod: fifo has no layout; regular file via mknod gets one. */
	assert_int_equal(mds_ns_mknod(ns, &root, d, "p", S_IFIFO | 0600, 0, &b), 0);
	assert_true(S_ISFIFO(b.mode));
	assert_int_equal(mds_ns_getlayout(ns, &root, b.ino, &l, &isd), 0);
	assert_int_equal(l.stripe_count, 0);
	assert_int_equal(mds_ns_mknod(ns, &root, d, "r", 0644, 0, &b), 0);
	assert_true(S_ISREG(b.mode));
	assert_int_equal(mds_ns_getlayout(ns, &root, b.ino, &l, &isd), 0);
	assert_int_equal(l.stripe_count, 4);

	/* Readdir returns everything, no "." or "..". */
	mds_dirent e[16];
	uint32_t n;
	int eof;
	assert_int_equal(mds_ns_readdir(ns, &root, d, 0, 16, e, &n, &eof), 0);
	assert_int_equal(n, 4);
	assert_int_equal(eof, 1);
	assert_string_equal(e[0].name, "f");
	assert_int_equal(e[0].ino, a.ino);
	assert_true(S_ISREG(e[0].mode));
	assert_string_equal(e[1].name, "s");
	assert_string_equal(e[3].name, "r");

	/* Names. */
	char longname[300];
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	assert_int_equal(mds_ns_mkdir(ns, &root, d, longname, 0755, &b), -ENAMETOOLONG);
	assert_int_equal(mds_ns_mkdir(ns, &root, d, "a/b", 0755, &b), -EINVAL);
	assert_int_equal(mds_ns_mkdir(ns, &root, d, "..", 0755, &b), -EEXIST);

	/* rmdir. */
	assert_int_equal(mds_ns_rmdir(ns, &root, 1, "d"), -ENOTEMPTY);
	assert_int_equal(mds_ns_rmdir(ns, &root, d, "f"), -ENOTDIR);
	assert_int_equal(mds_ns_unlink(ns, &root, 1, "d"), -EISDIR);
	uint64_t e2 = mkd(ns, &root, d, "empty", 0755);
	assert_int_equal(nlink_of(ns, d), 3);
	assert_int_equal(mds_ns_rmdir(ns, &root, d, "empty"), 0);
	assert_int_equal(mds_ns_getattr(ns, &root, e2, &b), -ENOENT);
	assert_int_equal(nlink_of(ns, d), 2);

	/* statfs sums the OSTs. */
	pfs_statfs st;
	assert_int_equal(mds_ns_statfs(ns, &root, &st), 0);
	assert_int_equal(st.bsize, 4096);
	assert_int_equal(st.blocks, 4 * ((1ull << 40) / 4096));
	assert_int_equal(st.bfree, 4 * ((1ull << 39) / 4096));
	assert_int_equal(st.namemax, 255);

	/* access / open. */
	assert_int_equal(mds_ns_access(ns, &root, a.ino, R_OK | W_OK), 0);
	assert_int_equal(mds_ns_access(ns, &root, a.ino, X_OK), -EACCES);
	assert_int_equal(mds_ns_open_file(ns, &root, a.ino, O_RDWR, &b, &l), 0);
	assert_int_equal(l.stripe_count, 4);
	assert_int_equal(mds_ns_open_file(ns, &root, d, O_WRONLY, &b, &l), -EISDIR);
	assert_int_equal(mds_ns_open_file(ns, &root, d, O_RDONLY, &b, &l), 0);
}

static void test_ns_setattr(void **state)
{
	struct fx *f = *state;
	mds_ns *ns = f->ns;
	pfs_attr a, b;

	uint64_t ino = mkfile(ns, &root, 1, "f", 0644);
	assert_int_equal(mds_ns_setattr(ns, &root, ino, PFS_SETATTR_MODE, 0600, 0, 0, 0, 0, 0, &a),
			 0);
	assert_int_equal(a.mode, S_IFREG | 0600);
	assert_int_equal(mds_ns_setattr(ns, &root, ino, PFS_SETATTR_UID | PFS_SETATTR_GID, 0, 1000,
					1000, 0, 0, 0, &a),
			 0);
	assert_int_equal(a.uid, 1000);
	assert_int_equal(a.gid, 1000);
	/* Truncate moves mtime/ctime. */
	int64_t before = a.mtime_ns;
	assert_int_equal(mds_ns_setattr(ns, &root, ino, PFS_SETATTR_SIZE, 0, 0, 0, 12345, 0, 0, &a),
			 0);
	assert_int_equal(a.size, 12345);
	assert_true(a.mtime_ns >= before);
	/* Explicit times. */
	assert_int_equal(mds_ns_setattr(ns, &root, ino, PFS_SETATTR_ATIME | PFS_SETATTR_MTIME, 0, 0,
					0, 0, 111, 222, &a),
			 0);
	assert_int_equal(a.atime_ns, 111);
	assert_int_equal(a.mtime_ns, 222);
	assert_int_equal(mds_ns_setattr(ns, &root, ino, PFS_SETATTR_MTIME | PFS_SETATTR_MTIME_NOW, 0,
					0, 0, 0, 0, 0, &a),
			 0);
	assert_true(a.mtime_ns > 222);
	/* SETSIZE grows only. */
	assert_int_equal(mds_ns_setsize(ns, &root, ino, 100, 0, &b), 0);
	assert_int_equal(b.size, 12345);
	assert_int_equal(mds_ns_setsize(ns, &root, ino, 1 << 20, 777, &b), 0);
	assert_int_equal(b.size, 1 << 20);
	assert_int_equal(b.mtime_ns, 777);
	assert_int_equal(mds_ns_setsize(ns, &root, 1, 10, 0, &b), -EISDIR);
	assert_int_equal(mds_ns_setattr(ns, &root, 1, PFS_SETATTR_SIZE, 0, 0, 0, 0, 0, 0, &b),
			 -EISDIR);
}

static void test_ns_permissions(void **state)
{
	struct fx *f = *state;
	mds_ns *ns = f->ns;
	pfs_attr a;
	pfs_layout l;

	/* Root dir is 0755 root: alice may not create there. */
	assert_int_equal(mds_ns_create(ns, &alice, 1, "x", 0644, 0, 0, 0, &a, &l), -EACCES);
	assert_int_equal(mds_ns_mkdir(ns, &alice, 1, "x", 0755, &a), -EACCES);

	uint64_t home = mkd(ns, &root, 1, "home", 0755);
	assert_int_equal(mds_ns_setattr(ns, &root, home, PFS_SETATTR_UID | PFS_SETATTR_GID, 0, 1000,
					1000, 0, 0, 0, &a),
			 0);
	uint64_t fa = mkfile(ns, &alice, home, "a", 0640);
	assert_int_equal(mds_ns_getattr(ns, &alice, fa, &a), 0);
	assert_int_equal(a.uid, 1000);
	assert_int_equal(a.gid, 1000);

	/* bob: no group, "other" bits 0 -> no read; cannot write the dir. */
	assert_int_equal(mds_ns_open_file(ns, &bob, fa, O_RDONLY, &a, &l), -EACCES);
	assert_int_equal(mds_ns_access(ns, &bob, fa, R_OK), -EACCES);
	assert_int_equal(mds_ns_unlink(ns, &bob, home, "a"), -EACCES);
	assert_int_equal(mds_ns_rename(ns, &bob, home, "a", home, "b", 0), -EACCES);
	/* chmod / chown by non-owner. */
	assert_int_equal(mds_ns_setattr(ns, &bob, fa, PFS_SETATTR_MODE, 0777, 0, 0, 0, 0, 0, &a),
			 -EPERM);
	assert_int_equal(mds_ns_setattr(ns, &alice, fa, PFS_SETATTR_UID, 0, 1001, 0, 0, 0, 0, &a),
			 -EPERM);
	/* Owner may chgrp to a group she is in, not to another. */
	assert_int_equal(mds_ns_setattr(ns, &alice, fa, PFS_SETATTR_MODE, 06755, 0, 0, 0, 0, 0, &a),
			 0);
	assert_int_equal(a.mode & 07777, 06755);
	assert_int_equal(mds_ns_setattr(ns, &alice, fa, PFS_SETATTR_GID, 0, 0, 2000, 0, 0, 0, &a),
			 0);
	assert_int_equal(a.gid, 2000);
	assert_int_equal(a.mode & 07777, 0755); /* set-id bits cleared */
	assert_int_equal(mds_ns_setattr(ns, &alice, fa, PFS_SETATTR_GID, 0, 0, 3000, 0, 0, 0, &a),
			 -EPERM);
	/* Times: explicit needs ownership, NOW needs write permission. */
	assert_int_equal(mds_ns_setattr(ns, &bob, fa, PFS_SETATTR_MTIME, 0, 0, 0, 0, 0, 5, &a),
			 -EPERM);
	assert_int_equal(mds_ns_setattr(ns, &bob, fa, PFS_SETATTR_MTIME | PFS_SETATTR_MTIME_NOW, 0,
					0, 0, 0, 0, 0, &a),
			 -EACCES);
	assert_int_equal(mds_ns_setattr(ns, &bob, fa, PFS_SETATTR_SIZE, 0, 0, 0, 0, 0, 0, &a),
			 -EACCES);
	/* Search permission on the parent for lookup. */
	uint64_t priv = mkd(ns, &alice, home, "priv", 0700);
	mkfile(ns, &alice, priv, "secret", 0644);
	assert_int_equal(mds_ns_lookup(ns, &bob, priv, "secret", &a), -EACCES);
	assert_int_equal(mds_ns_lookup(ns, &alice, priv, "secret", &a), 0);
	mds_dirent e[4];
	uint32_t n;
	int eof;
	assert_int_equal(mds_ns_readdir(ns, &bob, priv, 0, 4, e, &n, &eof), -EACCES);
	/* Root bypasses rwx but exec needs some x bit. */
	assert_int_equal(mds_ns_lookup(ns, &root, priv, "secret", &a), 0);
	assert_int_equal(mds_ns_access(ns, &root, a.ino, X_OK), -EACCES);
	assert_int_equal(mds_ns_access(ns, &root, fa, X_OK), 0);

	/* Sticky directory: bob may create but not remove alice's file. */
	uint64_t tmp = mkd(ns, &root, 1, "tmp", 01777);
	mkfile(ns, &alice, tmp, "af", 0644);
	mkfile(ns, &bob, tmp, "bf", 0644);
	assert_int_equal(mds_ns_unlink(ns, &bob, tmp, "af"), -EPERM);
	assert_int_equal(mds_ns_rename(ns, &bob, tmp, "af", tmp, "zz", 0), -EPERM);
	assert_int_equal(mds_ns_rename(ns, &bob, tmp, "bf", tmp, "af", 0), -EPERM);
	assert_int_equal(mds_ns_unlink(ns, &bob, tmp, "bf"), 0);
	assert_int_equal(mds_ns_unlink(ns, &root, tmp, "af"), 0);

	/* setgid directory hands its group down. */
	uint64_t sg = mkd(ns, &root, 1, "sg", 02777);
	assert_int_equal(mds_ns_setattr(ns, &root, sg, PFS_SETATTR_GID, 0, 0, 555, 0, 0, 0, &a), 0);
	uint64_t sub = mkd(ns, &alice, sg, "sub", 0755);
	assert_int_equal(mds_ns_getattr(ns, &alice, sub, &a), 0);
	assert_int_equal(a.gid, 555);
	assert_true(a.mode & S_ISGID);
	/* setstripe: owner or root only. */
	assert_int_equal(mds_ns_setstripe(ns, &bob, home, 1 << 20, 2), -EPERM);
	/* xattr: user.* needs write permission. */
	assert_int_equal(mds_ns_setxattr(ns, &bob, fa, "user.k", "v", 1, 0), -EACCES);
	assert_int_equal(mds_ns_setxattr(ns, &alice, fa, "trusted.k", "v", 1, 0), -EPERM);
}

static void test_ns_rename(void **state)
{
	struct fx *f = *state;
	mds_ns *ns = f->ns;
	pfs_attr a;

	uint64_t A = mkd(ns, &root, 1, "A", 0755);
	uint64_t B = mkd(ns, &root, 1, "B", 0755);
	uint64_t f1 = mkfile(ns, &root, A, "f1", 0644);
	uint64_t f2 = mkfile(ns, &root, A, "f2", 0644);
	uint64_t sub = mkd(ns, &root, A, "sub", 0755);
	uint64_t deep = mkd(ns, &root, sub, "deep", 0755);
	assert_int_equal(nlink_of(ns, A), 3);

	/* Over an existing file: the target's objects go to the destroy log. */
	uint64_t d0 = destroy_count(ns);
	assert_int_equal(mds_ns_rename(ns, &root, A, "f1", A, "f2", 0), 0);
	assert_int_equal(mds_ns_lookup(ns, &root, A, "f2", &a), 0);
	assert_int_equal(a.ino, f1);
	assert_int_equal(mds_ns_lookup(ns, &root, A, "f1", &a), -ENOENT);
	assert_int_equal(mds_ns_getattr(ns, &root, f2, &a), -ENOENT);
	assert_int_equal(destroy_count(ns), d0 + 1);

	/* NOREPLACE. */
	uint64_t g = mkfile(ns, &root, A, "g", 0644);
	assert_int_equal(mds_ns_rename(ns, &root, A, "g", A, "f2", PFS_RENAME_NOREPLACE), -EEXIST);
	assert_int_equal(mds_ns_rename(ns, &root, A, "g", A, "g2", PFS_RENAME_NOREPLACE), 0);
	assert_int_equal(mds_ns_rename(ns, &root, A, "g2", A, "g",
				       PFS_RENAME_NOREPLACE | PFS_RENAME_EXCHANGE),
			 -EINVAL);

	/* Type mismatches. */
	assert_int_equal(mds_ns_rename(ns, &root, A, "g2", A, "sub", 0), -EISDIR);
	assert_int_equal(mds_ns_rename(ns, &root, A, "sub", A, "g2", 0), -ENOTDIR);

	/* Into its own subtree. */
	assert_int_equal(mds_ns_rename(ns, &root, 1, "A", sub, "x", 0), -EINVAL);
	assert_int_equal(mds_ns_rename(ns, &root, 1, "A", deep, "x", 0), -EINVAL);
	assert_int_equal(mds_ns_rename(ns, &root, 1, "A", A, "x", 0), -EINVAL);

	/* Over a non-empty dir, then over an empty one, across directories. */
	uint64_t Bt = mkd(ns, &root, B, "t", 0755);
	mkfile(ns, &root, Bt, "inside", 0644);
	assert_int_equal(nlink_of(ns, B), 3);
	assert_int_equal(mds_ns_rename(ns, &root, A, "sub", B, "t", 0), -ENOTEMPTY);
	assert_int_equal(mds_ns_unlink(ns, &root, Bt, "inside"), 0);
	assert_int_equal(mds_ns_rename(ns, &root, A, "sub", B, "t", 0), 0);
	assert_int_equal(mds_ns_getattr(ns, &root, Bt, &a), -ENOENT);
	assert_int_equal(mds_ns_lookup(ns, &root, B, "t", &a), 0);
	assert_int_equal(a.ino, sub);
	assert_int_equal(nlink_of(ns, A), 2); /* lost sub */
	assert_int_equal(nlink_of(ns, B), 3); /* lost t, gained sub */
	assert_int_equal(mds_ns_lookup(ns, &root, sub, "..", &a), 0);
	assert_int_equal(a.ino, B);

	/* Plain move of a dir across directories. */
	uint64_t m = mkd(ns, &root, A, "m", 0755);
	assert_int_equal(nlink_of(ns, A), 3);
	assert_int_equal(mds_ns_rename(ns, &root, A, "m", B, "m", 0), 0);
	assert_int_equal(nlink_of(ns, A), 2);
	assert_int_equal(nlink_of(ns, B), 4);
	assert_int_equal(mds_ns_lookup(ns, &root, m, "..", &a), 0);
	assert_int_equal(a.ino, B);

	/* EXCHANGE a file in A with a dir in B. */
	assert_int_equal(mds_ns_rename(ns, &root, A, "g2", B, "m", PFS_RENAME_EXCHANGE), 0);
	assert_int_equal(mds_ns_lookup(ns, &root, A, "g2", &a), 0);
	assert_int_equal(a.ino, m);
	assert_int_equal(mds_ns_lookup(ns, &root, B, "m", &a), 0);
	assert_int_equal(a.ino, g);
	assert_int_equal(nlink_of(ns, A), 3);
	assert_int_equal(nlink_of(ns, B), 3);
	assert_int_equal(mds_ns_lookup(ns, &root, m, "..", &a), 0);
	assert_int_equal(a.ino, A);
	assert_int_equal(mds_ns_rename(ns, &root, A, "g2", B, "nothere", PFS_RENAME_EXCHANGE),
			 -ENOENT);

	/* Same inode through two hard links: nothing happens. */
	assert_int_equal(mds_ns_link(ns, &root, f1, A, "hl", &a), 0);
	assert_int_equal(mds_ns_rename(ns, &root, A, "hl", A, "f2", 0), 0);
	assert_int_equal(mds_ns_lookup(ns, &root, A, "hl", &a), 0);
	assert_int_equal(a.nlink, 2);
	assert_int_equal(mds_ns_rename(ns, &root, A, "missing", A, "zz", 0), -ENOENT);
}

static void test_ns_hardlinks(void **state)
{
	struct fx *f = *state;
	mds_ns *ns = f->ns;
	pfs_attr a;

	uint64_t d = mkd(ns, &root, 1, "d", 0755);
	uint64_t fi = mkfile(ns, &root, 1, "f", 0644);
	uint64_t d0 = destroy_count(ns);
	assert_int_equal(mds_ns_link(ns, &root, fi, d, "l1", &a), 0);
	assert_int_equal(a.nlink, 2);
	assert_int_equal(mds_ns_link(ns, &root, fi, d, "l2", &a), 0);
	assert_int_equal(a.nlink, 3);
	assert_int_equal(mds_ns_link(ns, &root, fi, d, "l2", &a), -EEXIST);
	assert_int_equal(mds_ns_link(ns, &root, d, 1, "dl", &a), -EPERM);
	assert_int_equal(mds_ns_unlink(ns, &root, 1, "f"), 0);
	assert_int_equal(nlink_of(ns, fi), 2);
	assert_int_equal(mds_ns_unlink(ns, &root, d, "l1"), 0);
	assert_int_equal(nlink_of(ns, fi), 1);
	/* The destroy record appears with the last unlink, not before. */
	assert_int_equal(destroy_count(ns), d0);
	assert_int_equal(mds_ns_unlink(ns, &root, d, "l2"), 0);
	assert_int_equal(destroy_count(ns), d0 + 1);
	assert_int_equal(mds_ns_getattr(ns, &root, fi, &a), -ENOENT);
}

/* UNLINK with an expected inode (asynchronous unlinks): -ESTALE and
 * nothing removed when the name names another inode, removal when it
 * names that one; 0 is the plain unlink. */
static void test_ns_unlink_ino(void **state)
{
	struct fx *f = *state;
	mds_ns *ns = f->ns;
	pfs_attr a;

	uint64_t d = mkd(ns, &root, 1, "ud", 0777);
	uint64_t x1 = mkfile(ns, &alice, d, "x", 0644);
	/* x removed and made again (by another client): the late unlink of
	 * the first x must leave the second alone */
	assert_int_equal(mds_ns_unlink(ns, &alice, d, "x"), 0);
	uint64_t x2 = mkfile(ns, &bob, d, "x", 0644);
	assert_true(x1 != x2);
	assert_int_equal(mds_ns_unlink_ino(ns, &alice, d, "x", x1), -ESTALE);
	assert_int_equal(mds_ns_lookup(ns, &root, d, "x", &a), 0);
	assert_int_equal(a.ino, x2);
	assert_int_equal(nlink_of(ns, x2), 1);
	/* the right inode: removed */
	assert_int_equal(mds_ns_unlink_ino(ns, &alice, d, "x", x2), 0);
	assert_int_equal(mds_ns_lookup(ns, &root, d, "x", &a), -ENOENT);
	assert_int_equal(mds_ns_getattr(ns, &root, x2, &a), -ENOENT);
	/* gone: -ENOENT whatever the inode */
	assert_int_equal(mds_ns_unlink_ino(ns, &alice, d, "x", x2), -ENOENT);
	/* 0: any inode (the old payload) */
	uint64_t y = mkfile(ns, &alice, d, "y", 0644);
	assert_int_equal(mds_ns_unlink_ino(ns, &alice, d, "y", 0), 0);
	assert_int_equal(mds_ns_getattr(ns, &root, y, &a), -ENOENT);
	/* permission first: no hint about what the name names */
	(void)mkfile(ns, &root, 1, "z", 0644);
	assert_int_equal(mds_ns_unlink_ino(ns, &bob, 1, "z", 12345), -EACCES);
	/* a directory named with its own inode: still -EISDIR */
	uint64_t sub = mkd(ns, &root, d, "sub", 0755);
	assert_int_equal(mds_ns_unlink_ino(ns, &root, d, "sub", sub), -EISDIR);
}

static void test_ns_readdir_paging(void **state)
{
	struct fx *f = *state;
	mds_ns *ns = f->ns;
	enum { N = 20000, PAGE = 1000 };
	pfs_attr a;
	char name[32];
	mds_dirent *e = calloc(PAGE, sizeof(*e));
	int *seen = calloc(2 * N, sizeof(int));
	uint64_t d = mkd(ns, &root, 1, "big", 0755);

	assert_non_null(e);
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "n%d", i);
		assert_int_equal(mds_ns_mknod(ns, &root, d, name, S_IFIFO | 0644, 0, &a), 0);
	}
	uint64_t cookie = 0;
	int eof = 0, pages = 0, added = 0;
	while (!eof) {
		uint32_t n;
		assert_int_equal(mds_ns_readdir(ns, &root, d, cookie, PAGE, e, &n, &eof), 0);
		for (uint32_t i = 0; i < n; i++) {
			int k = atoi(e[i].name + 1);
			assert_true(k >= 0 && k < 2 * N);
			seen[k]++;
			cookie = e[i].next_cookie;
		}
		pages++;
		if (eof)
			break;
		/* Between pages: remove some names not yet seen and some seen,
		 * add new ones. */
		int base = pages * 700;
		for (int j = 0; j < 5 && base + j * 3 < N; j++) {
			snprintf(name, sizeof(name), "n%d", base + j * 3);
			mds_ns_unlink(ns, &root, d, name);
		}
		if (added < N) {
			snprintf(name, sizeof(name), "n%d", N + added++);
			assert_int_equal(mds_ns_mknod(ns, &root, d, name, S_IFIFO | 0644, 0, &a), 0);
		}
	}
	assert_true(pages >= N / PAGE);
	/* Every name that still exists was seen exactly once (names added
	 * mid-listing get larger cookies, so they are seen too); none twice. */
	for (int k = 0; k < N + added; k++) {
		snprintf(name, sizeof(name), "n%d", k);
		int exists = mds_ns_lookup(ns, &root, d, name, &a) == 0;
		assert_true(seen[k] <= 1);
		if (exists)
			assert_int_equal(seen[k], 1);
	}
	/* A final full listing has exactly the surviving count. */
	uint64_t total = 0;
	cookie = 0;
	eof = 0;
	while (!eof) {
		uint32_t n;
		assert_int_equal(mds_ns_readdir(ns, &root, d, cookie, PAGE, e, &n, &eof), 0);
		total += n;
		if (n)
			cookie = e[n - 1].next_cookie;
	}
	uint64_t exist = 0;
	for (int k = 0; k < N + added; k++) {
		snprintf(name, sizeof(name), "n%d", k);
		exist += mds_ns_lookup(ns, &root, d, name, &a) == 0;
	}
	assert_int_equal(total, exist);
	assert_true(exist > N - 200);
	free(e);
	free(seen);
}

static void test_ns_layout_inherit(void **state)
{
	struct fx *f = *state;
	mds_ns *ns = f->ns;
	pfs_attr a;
	pfs_layout l;

	uint64_t d = mkd(ns, &root, 1, "d", 0755);
	uint64_t before = mkd(ns, &root, d, "before", 0755);
	assert_int_equal(mds_ns_setstripe(ns, &root, d, 4 << 20, 2), 0);
	assert_int_equal(mds_ns_setstripe(ns, &root, d, 1000, 2), -EINVAL);
	int is_dir = 0;
	assert_int_equal(mds_ns_getlayout(ns, &root, d, &l, &is_dir), 0);
	assert_int_equal(is_dir, 1);
	assert_int_equal(l.stripe_count, 2);
	assert_int_equal(l.stripe_size, 4 << 20);

	assert_int_equal(mds_ns_create(ns, &root, d, "f", 0644, 0, 0, 0, &a, &l), 0);
	assert_int_equal(l.stripe_size, 4 << 20);
	assert_int_equal(l.stripe_count, 2);
	assert_int_not_equal(l.stripe[0].ost, l.stripe[1].ost);
	/* Hints beat the directory default. */
	assert_int_equal(mds_ns_create(ns, &root, d, "h", 0644, 0, 128 << 10, 3, &a, &l), 0);
	assert_int_equal(l.stripe_size, 128 << 10);
	assert_int_equal(l.stripe_count, 3);
	/* More stripes than OSTs: capped to the OSTs up. */
	assert_int_equal(mds_ns_create(ns, &root, d, "w", 0644, 0, 0, 16, &a, &l), 0);
	assert_int_equal(l.stripe_count, 4);
	/* Subdirectory created afterwards inherits; one created before not. */
	uint64_t sub = mkd(ns, &root, d, "sub", 0755);
	assert_int_equal(mds_ns_create(ns, &root, sub, "g", 0644, 0, 0, 0, &a, &l), 0);
	assert_int_equal(l.stripe_size, 4 << 20);
	assert_int_equal(l.stripe_count, 2);
	assert_int_equal(mds_ns_create(ns, &root, before, "g", 0644, 0, 0, 0, &a, &l), 0);
	assert_int_equal(l.stripe_size, 1 << 20);
	assert_int_equal(l.stripe_count, 4);

	/* "All OSTs" as a directory default. */
	uint64_t all = mkd(ns, &root, 1, "all", 0755);
	assert_int_equal(mds_ns_setstripe(ns, &root, all, 0, UINT32_MAX), 0);
	assert_int_equal(mds_ns_getlayout(ns, &root, all, &l, &is_dir), 0);
	assert_int_equal(l.stripe_count, UINT32_MAX);
	assert_int_equal(l.stripe_size, 0);
	assert_int_equal(mds_ns_create(ns, &root, all, "f", 0644, 0, 0, 0, &a, &l), 0);
	assert_int_equal(l.stripe_count, 4);
	assert_int_equal(l.stripe_size, 1 << 20);

	/* setstripe on a file: only while empty; old objects logged. */
	int isd;
	uint64_t d0 = destroy_count(ns);
	assert_int_equal(mds_ns_setstripe(ns, &root, a.ino, 2 << 20, 1), 0);
	assert_int_equal(destroy_count(ns), d0 + 1);
	assert_int_equal(mds_ns_getlayout(ns, &root, a.ino, &l, &isd), 0);
	assert_int_equal(l.stripe_size, 2 << 20);
	assert_int_equal(l.stripe_count, 1);
	assert_int_equal(mds_ns_setsize(ns, &root, a.ino, 10, 0, &a), 0);
	assert_int_equal(mds_ns_setstripe(ns, &root, a.ino, 1 << 20, 2), -EBUSY);

	/* Object ids are unique per OST. */
	uint64_t seen[4][64];
	int cnt[4] = { 0 };
	for (int i = 0; i < 20; i++) {
		char name[16];
		snprintf(name, sizeof(name), "u%d", i);
		assert_int_equal(mds_ns_create(ns, &root, 1, name, 0644, 0, 0, 0, &a, &l), 0);
		for (uint32_t s = 0; s < l.stripe_count; s++) {
			uint32_t o = l.stripe[s].ost;
			assert_true(o < 4);
			for (int k = 0; k < cnt[o]; k++)
				assert_true(seen[o][k] != l.stripe[s].object);
			if (cnt[o] < 64)
				seen[o][cnt[o]++] = l.stripe[s].object;
		}
	}
}

static void test_ns_ost_balance(void **state)
{
	struct fx *f = *state;
	mds_ns *ns = f->ns;
	pfs_attr a;
	pfs_layout l;
	int count[4] = { 0 };
	char name[32];

	/* Balanced free space: plain round robin. */
	for (int i = 0; i < 100; i++) {
		snprintf(name, sizeof(name), "rr%d", i);
		assert_int_equal(mds_ns_create(ns, &root, 1, name, 0644, 0, 0, 1, &a, &l), 0);
		assert_int_equal(l.stripe_count, 1);
		count[l.stripe[0].ost]++;
	}
	for (int i = 0; i < 4; i++)
		assert_int_equal(count[i], 25);

	/* OST 3 nearly full: it gets far fewer new objects. */
	mds_ost_report r[4];
	memset(r, 0, sizeof(r));
	for (uint32_t i = 0; i < 4; i++) {
		r[i].index = i;
		r[i].total_bytes = 1ull << 40;
		r[i].free_bytes = i == 3 ? 10ull << 30 : 100ull << 30;
	}
	assert_int_equal(mds_ns_oss_heartbeat(ns, "oss0", r, 4), 0);
	memset(count, 0, sizeof(count));
	for (int i = 0; i < 310; i++) {
		snprintf(name, sizeof(name), "wb%d", i);
		assert_int_equal(mds_ns_create(ns, &root, 1, name, 0644, 0, 0, 1, &a, &l), 0);
		count[l.stripe[0].ost]++;
	}
	for (int i = 0; i < 3; i++)
		assert_true(count[i] >= 95 && count[i] <= 105);
	assert_true(count[3] <= 15);
	assert_true(count[3] >= 5); /* weighted, not starved */

	/* Multi-stripe files still get distinct OSTs. */
	assert_int_equal(mds_ns_create(ns, &root, 1, "wide", 0644, 0, 0, 4, &a, &l), 0);
	assert_int_equal(l.stripe_count, 4);
	int mask = 0;
	for (int s = 0; s < 4; s++)
		mask |= 1 << l.stripe[s].ost;
	assert_int_equal(mask, 0xf);

	/* Heartbeat timeout: OSTs go down; with none up, create is ENOSPC. */
	f->now_ms += 11000;
	pfs_ost_info *v;
	uint32_t n;
	assert_int_equal(mds_ns_ost_list(ns, &v, &n), 0);
	assert_int_equal(n, 4);
	assert_int_equal(v[0].up, 0);
	free(v);
	assert_int_equal(mds_ns_create(ns, &root, 1, "none", 0644, 0, 0, 0, &a, &l), -ENOSPC);
	r[0].free_bytes = 100ull << 30;
	assert_int_equal(mds_ns_oss_heartbeat(ns, "oss0", r, 1), 0); /* only OST 0 */
	assert_int_equal(mds_ns_create(ns, &root, 1, "one", 0644, 0, 0, 0, &a, &l), 0);
	assert_int_equal(l.stripe_count, 1);
	assert_int_equal(l.stripe[0].ost, 0);
	/* Heartbeats for unknown or foreign OSTs are refused. */
	r[0].index = 99;
	assert_int_equal(mds_ns_oss_heartbeat(ns, "oss0", r, 1), -ENOENT);
	r[0].index = 1;
	assert_int_equal(mds_ns_oss_heartbeat(ns, "other", r, 1), -EPERM);
}

/* The MDS stopped (SIGSTOP) or starved longer than the heartbeat timeout
 * does not declare its OSTs down for its own deafness: until its loop
 * ticks again liveness is judged as at the last tick, and that late tick
 * forgives the gap; OSTs silent while the MDS runs still go down. */
static void test_ns_ost_stall(void **state)
{
	struct fx *f = *state;
	mds_ns *ns = f->ns;
	mds_ost_report r[2];
	pfs_attr a;
	pfs_layout l;
	pfs_ost_info *v;
	uint32_t n;

	mds_ns_ost_tick(ns);              /* the setup's 4 OSTs just registered */
	f->now_ms += 1000;
	mds_ns_ost_tick(ns);
	f->now_ms += 12000;               /* stopped: no tick, no heartbeat read */
	assert_int_equal(mds_ns_create(ns, &root, 1, "during", 0644, 0, 0, 0, &a, &l), 0);
	mds_ns_ost_tick(ns);              /* back: the late tick */
	assert_int_equal(mds_ns_ost_list(ns, &v, &n), 0);
	assert_int_equal(n, 4);
	for (uint32_t i = 0; i < n; i++)
		assert_int_equal(v[i].up, 1);
	free(v);
	assert_int_equal(mds_ns_create(ns, &root, 1, "after", 0644, 0, 0, 0, &a, &l), 0);
	/* only OST 1 keeps beating while the MDS runs on: OST 0 goes down */
	memset(r, 0, sizeof(r));
	r[0].index = 1;
	r[0].total_bytes = 1ull << 40;
	r[0].free_bytes = 1ull << 39;
	for (int i = 0; i < 11; i++) {
		f->now_ms += 1000;
		mds_ns_ost_tick(ns);
		assert_int_equal(mds_ns_oss_heartbeat(ns, "oss0", r, 1), 0);
	}
	assert_int_equal(mds_ns_ost_list(ns, &v, &n), 0);
	assert_int_equal(v[0].up, 0);
	assert_int_equal(v[1].up, 1);
	free(v);
	for (int i = 0; i < 11; i++) {
		f->now_ms += 1000;
		mds_ns_ost_tick(ns);
	}
	assert_int_equal(mds_ns_create(ns, &root, 1, "none", 0644, 0, 0, 0, &a, &l), -ENOSPC);
}

static void test_ns_registry_persists(void **state)
{
	struct fx *f = *state;
	mds_ost_report r[2];
	uint32_t idx[2];
	pfs_ost_info *v;
	uint32_t n;
	char host[64];
	uint16_t port;
	int up;

	memset(r, 0, sizeof(r));
	strcpy(r[0].uuid, "new-ost");
	strcpy(r[1].uuid, "uuid-2");
	assert_int_equal(mds_ns_oss_register(f->ns, "oss9", "10.0.0.9", 1, 2, r, 2, idx), 0);
	assert_int_equal(idx[0], 4);
	assert_int_equal(idx[1], 2); /* known uuid keeps its index */
	mds_ns_close(f->ns);
	fx_open(f);
	/* After a restart indices persist; the registered OSTs take new files
	 * (test_mds_nsdb) but are listed down until heard from. */
	assert_int_equal(mds_ns_ost_list(f->ns, &v, &n), 0);
	assert_int_equal(n, 5);
	assert_int_equal(v[4].index, 4);
	assert_string_equal(v[4].uuid, "new-ost");
	assert_string_equal(v[2].oss, "oss9");
	assert_int_equal(v[2].up, 0);
	free(v);
	assert_int_equal(mds_ns_ost_addr(f->ns, 2, host, &port, &up), 0);
	assert_string_equal(host, "10.0.0.9");
	assert_int_equal(port, 2);
	assert_int_equal(up, 0);
	strcpy(r[0].uuid, "uuid-2");
	assert_int_equal(mds_ns_oss_register(f->ns, "oss0", "127.0.0.1", 7800, 7801, r, 1, idx), 0);
	assert_int_equal(idx[0], 2);
}

static void test_ns_destroy_log(void **state)
{
	struct fx *f = *state;
	pfs_attr a;
	pfs_layout l;
	pfs_stripe st[MDS_DESTROY_MAX];
	uint64_t seq;
	uint32_t n;

	assert_int_equal(mds_ns_create(f->ns, &root, 1, "f", 0644, 0, 0, 3, &a, &l), 0);
	assert_int_equal(mds_ns_destroy_next(f->ns, 0, &seq, st, &n), -ENOENT);
	assert_int_equal(mds_ns_unlink(f->ns, &root, 1, "f"), 0);
	mds_ns_close(f->ns);
	fx_open(f);
	assert_int_equal(destroy_count(f->ns), 1);
	assert_int_equal(mds_ns_destroy_next(f->ns, 0, &seq, st, &n), 0);
	assert_int_equal(n, 3);
	for (uint32_t i = 0; i < 3; i++) {
		assert_int_equal(st[i].ost, l.stripe[i].ost);
		assert_int_equal(st[i].object, l.stripe[i].object);
	}
	assert_int_equal(mds_ns_destroy_next(f->ns, seq, &seq, st, &n), -ENOENT);
	assert_int_equal(mds_ns_destroy_done(f->ns, 1), 0);
	assert_int_equal(destroy_count(f->ns), 0);
	/* A file with no objects (fifo) leaves no record; namespace persisted. */
	assert_int_equal(mds_ns_mknod(f->ns, &root, 1, "p", S_IFIFO | 0600, 0, &a), 0);
	assert_int_equal(mds_ns_unlink(f->ns, &root, 1, "p"), 0);
	assert_int_equal(destroy_count(f->ns), 0);
}

static void test_ns_xattr(void **state)
{
	struct fx *f = *state;
	mds_ns *ns = f->ns;
	void *val;
	size_t len;
	char *list;

	uint64_t ino = mkfile(ns, &root, 1, "f", 0644);
	assert_int_equal(mds_ns_setxattr(ns, &root, ino, "user.a", "1", 1, 0), 0);
	assert_int_equal(mds_ns_setxattr(ns, &root, ino, "user.a", "2", 1, XATTR_CREATE), -EEXIST);
	assert_int_equal(mds_ns_setxattr(ns, &root, ino, "user.b", "2", 1, XATTR_REPLACE), -ENODATA);
	assert_int_equal(mds_ns_setxattr(ns, &root, ino, "user.b", "hello", 5, XATTR_CREATE), 0);
	assert_int_equal(mds_ns_setxattr(ns, &root, ino, "user.a", "xyz", 3, XATTR_REPLACE), 0);
	assert_int_equal(mds_ns_setxattr(ns, &root, ino, "system.posix_acl_access", "x", 1, 0),
			 -EOPNOTSUPP);
	assert_int_equal(mds_ns_getxattr(ns, &root, ino, "user.a", &val, &len), 0);
	assert_int_equal(len, 3);
	assert_memory_equal(val, "xyz", 3);
	free(val);
	assert_int_equal(mds_ns_getxattr(ns, &root, ino, "user.zz", &val, &len), -ENODATA);
	assert_int_equal(mds_ns_setxattr(ns, &root, ino, "trusted.t", "", 0, 0), 0);
	assert_int_equal(mds_ns_listxattr(ns, &root, ino, &list, &len), 0);
	assert_int_equal(len, sizeof("trusted.t") + sizeof("user.a") + sizeof("user.b"));
	assert_memory_equal(list, "trusted.t\0user.a\0user.b\0", len);
	free(list);
	assert_int_equal(mds_ns_listxattr(ns, &alice, ino, &list, &len), 0);
	assert_int_equal(len, sizeof("user.a") + sizeof("user.b"));
	free(list);
	assert_int_equal(mds_ns_removexattr(ns, &root, ino, "user.a"), 0);
	assert_int_equal(mds_ns_removexattr(ns, &root, ino, "user.a"), -ENODATA);
	/* xattrs stay while a link remains and go with the inode. */
	pfs_attr a;
	assert_int_equal(mds_ns_link(ns, &root, ino, 1, "g", &a), 0);
	assert_int_equal(mds_ns_unlink(ns, &root, 1, "g"), 0);
	assert_int_equal(mds_ns_getxattr(ns, &root, ino, "user.b", &val, &len), 0);
	free(val);
	assert_int_equal(mds_ns_unlink(ns, &root, 1, "f"), 0);
	mds_ns_close(f->ns);
	MDB_env *env;
	MDB_txn *t;
	MDB_dbi dbi;
	MDB_stat st;
	assert_int_equal(mdb_env_create(&env), 0);
	assert_int_equal(mdb_env_set_maxdbs(env, 16), 0);
	assert_int_equal(mdb_env_open(env, f->db, MDB_RDONLY, 0600), 0);
	assert_int_equal(mdb_txn_begin(env, NULL, MDB_RDONLY, &t), 0);
	assert_int_equal(mdb_dbi_open(t, "xattrs", 0, &dbi), 0);
	assert_int_equal(mdb_stat(t, dbi, &st), 0);
	assert_int_equal(st.ms_entries, 0);
	mdb_txn_abort(t);
	mdb_env_close(env);
	fx_open(f);
	fx_osts(f, 4, NULL); /* nothing is up after a restart until heard from */
	ns = f->ns;
	ino = mkfile(ns, &root, 1, "f", 0644);
	assert_int_equal(mds_ns_listxattr(ns, &root, ino, &list, &len), 0);
	assert_int_equal(len, 0);
	free(list);
}

/* db_sync=full: same semantics; state survives close/reopen. */
static void test_ns_sync_full(void **state)
{
	struct fx *f = *state;
	pfs_attr a;
	pfs_layout l;

	mds_ns_close(f->ns);
	mds_ns_opts o = { .path = f->db, .sync_mode = MDS_SYNC_FULL, .clock_ms = fx_clock,
			  .clock_arg = f, .mapsize = 1ull << 30 };
	assert_int_equal(mds_ns_open(&o, &f->ns), 0);
	fx_osts(f, 4, NULL);
	assert_int_equal(mds_ns_create(f->ns, &root, 1, "durable", 0600, 0, 0, 0, &a, &l), 0);
	assert_int_equal(mds_ns_sync(f->ns), 0);
	mds_ns_close(f->ns);
	fx_open(f);
	pfs_attr b;
	assert_int_equal(mds_ns_lookup(f->ns, &root, 1, "durable", &b), 0);
	assert_int_equal(b.ino, a.ino);
	pfs_layout l2;
	int isd;
	assert_int_equal(mds_ns_getlayout(f->ns, &root, b.ino, &l2, &isd), 0);
	assert_int_equal(isd, 0);
	assert_int_equal(l2.stripe_count, l.stripe_count);
	assert_memory_equal(l2.stripe, l.stripe, l.stripe_count * sizeof(pfs_stripe));
	/* A second MDS on the same database is refused. */
	mds_ns *second = NULL;
	mds_ns_opts o2 = { .path = f->db, .mapsize = 1ull << 30 };
	assert_int_equal(mds_ns_open(&o2, &second), -EBUSY);
	assert_null(second);
	/* Inode numbers keep growing after a reopen. */
	assert_int_equal(mds_ns_mkdir(f->ns, &root, 1, "next", 0755, &b), 0);
	assert_true(b.ino > a.ino);
}

/* The kv tables other modules use: put/get/del, walking in key order,
 * counts, read-only and bad arguments, and persistence. */
static void test_ns_kv_tables(void **state)
{
	struct fx *f = *state;
	const void *k, *v;
	size_t kl, vl, n;
	mds_kv_txn *t;
	char big[MDS_KV_KEY_MAX + 1];
	const char *want[] = { "a", "ab", "b" };

	assert_int_equal(mds_ns_kv_begin(f->ns, 1, &t), 0);
	assert_int_equal(mds_ns_kv_put(t, MDS_KV_QOS, "b", 1, "2", 1), 0);
	assert_int_equal(mds_ns_kv_put(t, MDS_KV_QOS, "ab", 2, "1", 1), 0);
	assert_int_equal(mds_ns_kv_put(t, MDS_KV_QOS, "a", 1, "0", 1), 0);
	assert_int_equal(mds_ns_kv_put(t, MDS_KV_JOBS, "a", 1, "other", 5), 0);
	assert_int_equal(mds_ns_kv_commit(t), 0);

	/* an aborted write leaves nothing */
	assert_int_equal(mds_ns_kv_begin(f->ns, 1, &t), 0);
	assert_int_equal(mds_ns_kv_put(t, MDS_KV_QOS, "zz", 2, "x", 1), 0);
	mds_ns_kv_abort(t);
	mds_ns_kv_abort(NULL);

	mds_ns_close(f->ns);
	fx_open(f);
	assert_int_equal(mds_ns_kv_begin(f->ns, 0, &t), 0);
	assert_int_equal(mds_ns_kv_count(t, MDS_KV_QOS, &n), 0);
	assert_int_equal(n, 3);
	k = NULL;
	kl = 0;
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(mds_ns_kv_next(t, MDS_KV_QOS, k, kl, &k, &kl, &v, &vl), 0);
		assert_int_equal(kl, strlen(want[i]));
		assert_memory_equal(k, want[i], kl);
		assert_int_equal(vl, 1);
		assert_int_equal(*(const char *)v, '0' + (int)i);
	}
	assert_int_equal(mds_ns_kv_next(t, MDS_KV_QOS, k, kl, &k, &kl, &v, &vl), -ENOENT);
	assert_int_equal(mds_ns_kv_get(t, MDS_KV_JOBS, "a", 1, &v, &vl), 0);
	assert_int_equal(vl, 5);
	assert_int_equal(mds_ns_kv_get(t, MDS_KV_QOS, "zz", 2, &v, &vl), -ENOENT);
	assert_int_equal(mds_ns_kv_put(t, MDS_KV_QOS, "c", 1, "x", 1), -EROFS);
	assert_int_equal(mds_ns_kv_del(t, MDS_KV_QOS, "a", 1), -EROFS);
	memset(big, 'k', sizeof(big));
	assert_int_equal(mds_ns_kv_get(t, MDS_KV_QOS, big, sizeof(big), &v, &vl), -EINVAL);
	assert_int_equal(mds_ns_kv_get(t, MDS_KV_QOS, "", 0, &v, &vl), -EINVAL);
	assert_int_equal(mds_ns_kv_get(t, MDS_KV_NTABLES, "a", 1, &v, &vl), -EINVAL);
	assert_int_equal(mds_ns_kv_commit(t), 0);

	assert_int_equal(mds_ns_kv_begin(f->ns, 1, &t), 0);
	assert_int_equal(mds_ns_kv_del(t, MDS_KV_QOS, "ab", 2), 0);
	assert_int_equal(mds_ns_kv_del(t, MDS_KV_QOS, "ab", 2), -ENOENT);
	/* next after a key that is gone: the one after where it was */
	assert_int_equal(mds_ns_kv_next(t, MDS_KV_QOS, "ab", 2, &k, &kl, &v, &vl), 0);
	assert_memory_equal(k, "b", 1);
	assert_int_equal(mds_ns_kv_count(t, MDS_KV_QOS, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(mds_ns_kv_commit(t), 0);
}

/* Issue 8: search permission along the path whatever the kernel cached,
 * chown/chgrp without CAP_CHOWN, CREATE of an existing name checked as an
 * open, truncate through a writable descriptor, set-id bits dropped by a
 * writer. */
static void test_ns_perm_issue8(void **state)
{
	struct fx *f = *state;
	mds_ns *ns = f->ns;
	pfs_attr a;
	pfs_layout l;
	char tgt[PFS_PATH_MAX + 1];

	uint64_t d = mkd(ns, &root, 1, "d", 0777);
	uint64_t sub = mkd(ns, &root, d, "sub", 0777);
	uint64_t fa = mkfile(ns, &alice, sub, "f", 0666);
	assert_int_equal(mds_ns_symlink(ns, &alice, sub, "s", "f", &a), 0);
	uint64_t sl = a.ino;
	/* d loses x for others: sub/f is out of reach by inode too. */
	assert_int_equal(mds_ns_setattr(ns, &root, d, PFS_SETATTR_MODE, 0774, 0, 0, 0, 0, 0, &a), 0);
	assert_int_equal(mds_ns_setattr(ns, &alice, fa, PFS_SETATTR_MODE, 0600, 0, 0, 0, 0, 0, &a),
			 -EACCES);
	assert_int_equal(mds_ns_setattr(ns, &alice, fa, PFS_SETATTR_SIZE, 0, 0, 0, 0, 0, 0, &a),
			 -EACCES);
	assert_int_equal(mds_ns_open_file(ns, &alice, fa, O_RDONLY, &a, &l), -EACCES);
	assert_int_equal(mds_ns_access(ns, &alice, fa, F_OK), -EACCES);
	assert_int_equal(mds_ns_access(ns, &alice, fa, R_OK | MDS_ACCESS_NOPATH), 0);
	assert_int_equal(mds_ns_readlink(ns, &alice, sl, tgt), -EACCES);
	assert_int_equal(mds_ns_lookup(ns, &alice, sub, "f", &a), -EACCES);
	assert_int_equal(mds_ns_link(ns, &alice, fa, 1, "l", &a), -EACCES);
	assert_int_equal(mds_ns_create(ns, &alice, sub, "g", 0644, 0, 0, 0, &a, &l), -EACCES);
	assert_int_equal(mds_ns_unlink(ns, &alice, sub, "f"), -EACCES);
	/* Through a descriptor opened for writing: allowed. */
	assert_int_equal(mds_ns_setattr(ns, &alice, fa, PFS_SETATTR_SIZE | PFS_SETATTR_FD, 0, 0, 0,
					5, 0, 0, &a), 0);
	assert_int_equal(a.size, 5);
	assert_int_equal(mds_ns_getattr(ns, &alice, fa, &a), 0); /* fstat */
	/* Renamed out of d, the file is reachable again (primary parent). */
	assert_int_equal(mds_ns_rename(ns, &root, sub, "f", 1, "f", 0), 0);
	assert_int_equal(mds_ns_open_file(ns, &alice, fa, O_RDONLY, &a, &l), 0);
	assert_int_equal(mds_ns_setattr(ns, &root, d, PFS_SETATTR_MODE, 0777, 0, 0, 0, 0, 0, &a), 0);

	/* chown/chgrp: a non-owner may not even "change" to the current
	 * owner or group; the owner may keep its uid and set its group. */
	uint64_t rf = mkfile(ns, &root, d, "rf", 0666);
	assert_int_equal(mds_ns_setattr(ns, &alice, rf, PFS_SETATTR_UID | PFS_SETATTR_GID, 0, 0, 0,
					0, 0, 0, &a), -EPERM);
	assert_int_equal(mds_ns_setattr(ns, &alice, rf, PFS_SETATTR_GID, 0, 0, 0, 0, 0, 0, &a),
			 -EPERM);
	assert_int_equal(mds_ns_setattr(ns, &alice, fa, PFS_SETATTR_UID | PFS_SETATTR_GID, 0, 1000,
					1000, 0, 0, 0, &a), 0);

	/* CREATE of an existing name: checked as an open. */
	assert_int_equal(mds_ns_setattr(ns, &root, rf, PFS_SETATTR_MODE, 0600, 0, 0, 0, 0, 0, &a), 0);
	assert_int_equal(mds_ns_create(ns, &alice, d, "rf", 0644, PFS_CREATE_READ, 0, 0, &a, &l),
			 -EACCES);
	assert_int_equal(mds_ns_create(ns, &alice, d, "rf", 0644, 0, 0, 0, &a, &l), -EACCES);
	assert_int_equal(mds_ns_setattr(ns, &root, rf, PFS_SETATTR_MODE, 0644, 0, 0, 0, 0, 0, &a), 0);
	assert_int_equal(mds_ns_create(ns, &alice, d, "rf", 0644, PFS_CREATE_READ, 0, 0, &a, &l),
			 0);
	assert_int_equal(a.ino, rf);
	assert_int_equal(mds_ns_create(ns, &alice, d, "rf", 0644, PFS_CREATE_WRITE, 0, 0, &a, &l),
			 -EACCES);

	/* Set-id bits: a writer may drop them (the kernel's chmod before a
	 * write), not change anything else; truncate drops them too. */
	assert_int_equal(mds_ns_setattr(ns, &root, rf, PFS_SETATTR_MODE, 06777, 0, 0, 0, 0, 0, &a), 0);
	assert_int_equal(mds_ns_setattr(ns, &alice, rf, PFS_SETATTR_MODE, 06776, 0, 0, 0, 0, 0, &a),
			 -EPERM);
	assert_int_equal(mds_ns_setattr(ns, &alice, rf, PFS_SETATTR_MODE, 0777, 0, 0, 0, 0, 0, &a), 0);
	assert_int_equal(a.mode & 07777, 0777);
	assert_int_equal(mds_ns_setattr(ns, &root, rf, PFS_SETATTR_MODE, 06777, 0, 0, 0, 0, 0, &a), 0);
	assert_int_equal(mds_ns_setattr(ns, &alice, rf, PFS_SETATTR_SIZE, 0, 0, 0, 0, 0, 0, &a), 0);
	assert_int_equal(a.mode & 07777, 0777);
	assert_int_equal(mds_ns_setattr(ns, &root, rf, PFS_SETATTR_MODE, 02666, 0, 0, 0, 0, 0, &a), 0);
	assert_int_equal(mds_ns_setattr(ns, &alice, rf, PFS_SETATTR_KILLPRIV, 0, 0, 0, 0, 0, 0, &a), 0);
	assert_int_equal(a.mode & 07777, 02666); /* S_ISGID without group-exec stays */
}

/* KILLPRIV (a write's, truncate's or chown's drop of privileges; what a
 * mount with FUSE_HANDLE_KILLPRIV_V2 sends): security.capability goes for
 * any caller, other xattrs stay; set-id bits go for a caller other than
 * root, and with a chown for root too (Linux drops them at every chown of
 * a non-directory); a stranger needs the descriptor or write permission. */
static void test_ns_killpriv(void **state)
{
	struct fx *f = *state;
	mds_ns *ns = f->ns;
	void *val;
	size_t len;
	pfs_attr a;

	uint64_t ino = mkfile(ns, &root, 1, "k", 0644);
	assert_int_equal(mds_ns_setxattr(ns, &root, ino, "security.capability", "c", 1, 0), 0);
	assert_int_equal(mds_ns_setxattr(ns, &root, ino, "user.keep", "u", 1, 0), 0);
	assert_int_equal(mds_ns_setattr(ns, &root, ino, PFS_SETATTR_MODE, 06755, 0, 0, 0, 0, 0, &a),
			 0);
	/* root writes: the capability goes, the set-id bits stay */
	assert_int_equal(mds_ns_setattr(ns, &root, ino, PFS_SETATTR_KILLPRIV | PFS_SETATTR_FD, 0, 0,
					0, 0, 0, 0, &a), 0);
	assert_int_equal(a.mode & 07777, 06755);
	assert_int_equal(mds_ns_getxattr(ns, &root, ino, "security.capability", &val, &len),
			 -ENODATA);
	assert_int_equal(mds_ns_getxattr(ns, &root, ino, "user.keep", &val, &len), 0);
	free(val);
	/* nothing left to drop: still fine */
	assert_int_equal(mds_ns_setattr(ns, &root, ino, PFS_SETATTR_KILLPRIV | PFS_SETATTR_FD, 0, 0,
					0, 0, 0, 0, &a), 0);
	/* a stranger without write permission and without a descriptor */
	assert_int_equal(mds_ns_setxattr(ns, &root, ino, "security.capability", "c", 1, 0), 0);
	assert_int_equal(mds_ns_setattr(ns, &alice, ino, PFS_SETATTR_KILLPRIV, 0, 0, 0, 0, 0, 0, &a),
			 -EACCES);
	assert_int_equal(mds_ns_getxattr(ns, &root, ino, "security.capability", &val, &len), 0);
	free(val);
	/* ... through a descriptor opened for writing: both go */
	assert_int_equal(mds_ns_setattr(ns, &alice, ino, PFS_SETATTR_KILLPRIV | PFS_SETATTR_FD, 0, 0,
					0, 0, 0, 0, &a), 0);
	assert_int_equal(a.mode & 07777, 0755);
	assert_int_equal(mds_ns_getxattr(ns, &root, ino, "security.capability", &val, &len),
			 -ENODATA);
	/* root's chown with KILLPRIV: S_ISUID goes, S_ISGID with group-exec */
	assert_int_equal(mds_ns_setattr(ns, &root, ino, PFS_SETATTR_MODE, 06755, 0, 0, 0, 0, 0, &a),
			 0);
	assert_int_equal(mds_ns_setattr(ns, &root, ino, PFS_SETATTR_UID | PFS_SETATTR_KILLPRIV, 0,
					1000, 0, 0, 0, 0, &a), 0);
	assert_int_equal(a.uid, 1000);
	assert_int_equal(a.mode & 07777, 0755);
	assert_int_equal(mds_ns_setattr(ns, &root, ino, PFS_SETATTR_MODE, 06745, 0, 0, 0, 0, 0, &a),
			 0);
	assert_int_equal(mds_ns_setattr(ns, &root, ino, PFS_SETATTR_GID | PFS_SETATTR_KILLPRIV, 0, 0,
					1000, 0, 0, 0, &a), 0);
	assert_int_equal(a.mode & 07777, 02745);
	/* root's chown without KILLPRIV (a kernel that sends the mode
	 * itself) keeps them */
	assert_int_equal(mds_ns_setattr(ns, &root, ino, PFS_SETATTR_MODE, 06755, 0, 0, 0, 0, 0, &a),
			 0);
	assert_int_equal(mds_ns_setattr(ns, &root, ino, PFS_SETATTR_UID, 0, 0, 0, 0, 0, 0, &a), 0);
	assert_int_equal(a.mode & 07777, 06755);
}

/* lfs setstripe -i: stripe 0 on the given OST, the next ones on the next
 * indices up (wrapping, skipping OSTs that are down); a directory default
 * keeps it and passes it on; an index that is no OST is refused. */
static void test_ns_stripe_offset(void **state)
{
	struct fx *f = *state;
	mds_ns *ns = f->ns;
	pfs_attr a;
	pfs_layout l;
	int is_dir = 0;

	assert_int_equal(mds_ns_create_at(ns, &root, 1, "o2", 0644, 0, 0, 2, 2, &a, &l), 0);
	assert_int_equal(l.stripe_count, 2);
	assert_int_equal(l.stripe[0].ost, 2);
	assert_int_equal(l.stripe[1].ost, 3);
	assert_int_equal(mds_ns_create_at(ns, &root, 1, "o3", 0644, 0, 0, 3, 3, &a, &l), 0);
	assert_int_equal(l.stripe[0].ost, 3);
	assert_int_equal(l.stripe[1].ost, 0);
	assert_int_equal(l.stripe[2].ost, 1);
	assert_int_equal(mds_ns_create_at(ns, &root, 1, "o4", 0644, 0, 0, 1, 4, &a, &l), -EINVAL);
	assert_int_equal(mds_ns_create_at(ns, &root, 1, "o4", 0644, 0, 0, 1, UINT32_MAX - 1, &a,
					  &l), -EINVAL);
	/* any: the MDS chooses (round robin from wherever it is) */
	assert_int_equal(mds_ns_create_at(ns, &root, 1, "oa", 0644, 0, 0, 4,
					  PFS_STRIPE_OFFSET_ANY, &a, &l), 0);
	assert_int_equal(l.stripe_count, 4);

	/* a directory default with a first OST, inherited by files and by
	 * subdirectories made afterwards; a hint beats it */
	uint64_t d = mkd(ns, &root, 1, "d", 0755);
	assert_int_equal(mds_ns_getlayout(ns, &root, d, &l, &is_dir), 0);
	assert_int_equal(l.stripe[0].ost, PFS_STRIPE_OFFSET_ANY);
	assert_int_equal(mds_ns_setstripe_at(ns, &root, d, 0, 2, 9), -EINVAL);
	assert_int_equal(mds_ns_setstripe_at(ns, &root, d, 0, 2, 1), 0);
	assert_int_equal(mds_ns_getlayout(ns, &root, d, &l, &is_dir), 0);
	assert_int_equal(is_dir, 1);
	assert_int_equal(l.stripe_count, 2);
	assert_int_equal(l.stripe[0].ost, 1);
	for (int i = 0; i < 3; i++) {
		char name[16];

		snprintf(name, sizeof(name), "f%d", i);
		assert_int_equal(mds_ns_create(ns, &root, d, name, 0644, 0, 0, 0, &a, &l), 0);
		assert_int_equal(l.stripe_count, 2);
		assert_int_equal(l.stripe[0].ost, 1);
		assert_int_equal(l.stripe[1].ost, 2);
	}
	uint64_t sub = mkd(ns, &root, d, "sub", 0755);
	assert_int_equal(mds_ns_create(ns, &root, sub, "g", 0644, 0, 0, 3, &a, &l), 0);
	assert_int_equal(l.stripe[0].ost, 1);
	assert_int_equal(l.stripe[2].ost, 3);
	assert_int_equal(mds_ns_create_at(ns, &root, d, "h", 0644, 0, 0, 0, 3, &a, &l), 0);
	assert_int_equal(l.stripe[0].ost, 3);
	assert_int_equal(l.stripe[1].ost, 0);
	/* a file without data gets a new layout from an OST */
	assert_int_equal(mds_ns_setstripe_at(ns, &root, a.ino, 0, 1, 2), 0);
	assert_int_equal(mds_ns_getlayout(ns, &root, a.ino, &l, &is_dir), 0);
	assert_int_equal(l.stripe_count, 1);
	assert_int_equal(l.stripe[0].ost, 2);

	/* OST 2 down: skipped */
	mds_ost_report r[3];
	memset(r, 0, sizeof(r));
	for (uint32_t i = 0; i < 3; i++) {
		r[i].index = i < 2 ? i : 3;
		r[i].total_bytes = 1ull << 40;
		r[i].free_bytes = 1ull << 39;
	}
	f->now_ms += 11000;
	assert_int_equal(mds_ns_oss_heartbeat(ns, "oss0", r, 3), 0);
	assert_int_equal(mds_ns_create_at(ns, &root, 1, "s2", 0644, 0, 0, 2, 2, &a, &l), 0);
	assert_int_equal(l.stripe_count, 2);
	assert_int_equal(l.stripe[0].ost, 3);
	assert_int_equal(l.stripe[1].ost, 0);
	/* a down OST is still an OST: a default may name it */
	assert_int_equal(mds_ns_setstripe_at(ns, &root, sub, 0, 0, 2), 0);
	assert_int_equal(mds_ns_create(ns, &root, sub, "s", 0644, 0, 0, 1, &a, &l), 0);
	assert_int_equal(l.stripe[0].ost, 3);

	/* -d (all zero, no first OST) clears it */
	assert_int_equal(mds_ns_setstripe(ns, &root, d, 0, 0), 0);
	assert_int_equal(mds_ns_getlayout(ns, &root, d, &l, &is_dir), 0);
	assert_int_equal(l.stripe[0].ost, PFS_STRIPE_OFFSET_ANY);
	assert_int_equal(l.stripe_count, 0);
}

/* Issue 8: the truncate epoch and st_blocks.  A SETSIZE from before a
 * truncate (older epoch) does not grow the size nor set blocks; one with
 * the current epoch does; no epoch (old clients) grows as before. */
static void test_ns_truncate_epoch_blocks(void **state)
{
	struct fx *f = *state;
	mds_ns *ns = f->ns;
	pfs_attr a, b;

	uint64_t ino = mkfile(ns, &root, 1, "ep", 0644);
	assert_int_equal(mds_ns_getattr(ns, &root, ino, &a), 0);
	assert_int_equal(a.blocks, 0); /* a new file uses no block */
	uint32_t e0 = a.tepoch;
	/* A writes 2 MiB (epoch e0 seen), B truncates to 0: epoch moves. */
	assert_int_equal(mds_ns_setattr(ns, &root, ino, PFS_SETATTR_SIZE, 0, 0, 0, 0, 0, 0, &b),
			 0);
	assert_int_equal(b.tepoch, e0 + 1);
	assert_int_equal(mds_ns_setsize_epoch(ns, &root, ino, 2 << 20, 555, e0, 4096, &b), 0);
	assert_int_equal(b.size, 0);
	assert_int_equal(b.blocks, 0); /* a stale push sets no block */
	assert_int_equal(b.mtime_ns, 555); /* it did write */
	/* With the new epoch it grows, and the blocks are taken. */
	assert_int_equal(mds_ns_setsize_epoch(ns, &root, ino, 1 << 20, 0, e0 + 1, 2048, &b), 0);
	assert_int_equal(b.size, 1 << 20);
	assert_int_equal(b.blocks, 2048);
	/* Unknown blocks keep the stored count; no epoch grows as before. */
	assert_int_equal(mds_ns_setsize_epoch(ns, &root, ino, 3 << 20, 0, MDS_EPOCH_ANY,
					      MDS_BLOCKS_UNKNOWN, &b), 0);
	assert_int_equal(b.size, 3 << 20);
	assert_int_equal(b.blocks, 2048);
	/* A truncate up adds no block; a truncate down caps them. */
	assert_int_equal(mds_ns_setattr(ns, &root, ino, PFS_SETATTR_SIZE, 0, 0, 0, 1ull << 30, 0, 0,
					&b), 0);
	assert_int_equal(b.blocks, 2048);
	assert_int_equal(b.tepoch, e0 + 2);
	assert_int_equal(mds_ns_setattr(ns, &root, ino, PFS_SETATTR_SIZE, 0, 0, 0, 4096, 0, 0, &b),
			 0);
	assert_int_equal(b.blocks, 8);
	/* Epochs wrap: 0 is newer than UINT32_MAX. */
	assert_int_equal(mds_ns_getattr(ns, &root, ino, &a), 0);
	assert_int_equal(mds_ns_setsize_epoch(ns, &root, ino, 8192, 0, (uint32_t)(a.tepoch - 1),
					      MDS_BLOCKS_UNKNOWN, &b), 0);
	assert_int_equal(b.size, 4096);
	/* Directories keep their epoch-less attributes. */
	assert_int_equal(mds_ns_getattr(ns, &root, 1, &a), 0);
	assert_int_equal(a.tepoch, 0);
	assert_int_equal(a.blocks, 8);
}

/* Asynchronous create's slots: reserved for a client in a directory,
 * used once, only by that client there, kept by a create that fails,
 * gone when expired, still good after the database is reopened (a
 * restart of the MDS). */
static void test_ns_create_slots(void **state)
{
	struct fx *f = *state;
	uint64_t sd, od, inos[3], one;
	pfs_layout lays[3], l, l1;
	pfs_attr a, da;

	assert_int_equal(mds_ns_mkdir(f->ns, &alice, 1, "sd", 0755, &a), -EACCES);
	assert_int_equal(mds_ns_mkdir(f->ns, &root, 1, "sd", 0777, &a), 0);
	sd = a.ino;
	assert_int_equal(mds_ns_mkdir(f->ns, &root, 1, "od", 0777, &a), 0);
	od = a.ino;
	assert_int_equal(mds_ns_mkdir(f->ns, &alice, sd, "mine", 0755, &a), 0);
	/* bob may not write alice's directory: no slots */
	assert_int_equal(mds_ns_create_slots(f->ns, &bob, a.ino, 1, 8, 60000, inos, lays, &da),
			 -EACCES);
	assert_int_equal(mds_ns_create_slots(f->ns, &alice, sd, 0, 7, 60000, inos, lays, &da),
			 -EINVAL);
	assert_int_equal(mds_ns_create_slots(f->ns, &alice, sd, 3, 7, 60000, inos, lays, &da), 0);
	assert_int_equal(da.ino, sd);
	assert_true(inos[0] > 1 && inos[1] > inos[0] && inos[2] > inos[1]);
	assert_int_equal(lays[0].stripe_count, 4);
	assert_int_not_equal(lays[0].stripe[0].object, lays[1].stripe[0].object);

	assert_int_equal(mds_ns_create_slot(f->ns, &alice, sd, "a", 0644, 0, 7, inos[0], &a, &l), 0);
	assert_int_equal(a.ino, inos[0]);
	assert_int_equal(a.uid, 1000);
	assert_int_equal(a.mode, S_IFREG | 0644);
	assert_memory_equal(&l, &lays[0], sizeof(l));
	assert_int_equal(mds_ns_lookup(f->ns, &alice, sd, "a", &a), 0);
	assert_int_equal(a.ino, inos[0]);
	/* used once */
	assert_int_equal(mds_ns_create_slot(f->ns, &alice, sd, "a2", 0644, 0, 7, inos[0], &a, &l),
			 -ESTALE);
	/* another client, another directory, no slot at all: refused, and
	 * the slot stays good */
	assert_int_equal(mds_ns_create_slot(f->ns, &alice, sd, "b", 0644, 0, 8, inos[1], &a, &l),
			 -ESTALE);
	assert_int_equal(mds_ns_create_slot(f->ns, &alice, od, "b", 0644, 0, 7, inos[1], &a, &l),
			 -ESTALE);
	assert_int_equal(mds_ns_create_slot(f->ns, &alice, sd, "b", 0644, 0, 7, 999999, &a, &l),
			 -ESTALE);
	assert_int_equal(mds_ns_create_slot(f->ns, &alice, sd, "b", 0644, 0, 7, 0, &a, &l),
			 -ESTALE);
	assert_int_equal(mds_ns_create_slot(f->ns, &alice, sd, "b", 0644, 0, 7, inos[1], &a, &l), 0);
	assert_int_equal(a.ino, inos[1]);
	/* a name that exists: -EEXIST, the slot kept for the next name */
	assert_int_equal(mds_ns_create_slot(f->ns, &alice, sd, "a", 0644, 0, 7, inos[2], &a, &l),
			 -EEXIST);
	assert_int_equal(mds_ns_create_slot(f->ns, &alice, sd, "c", 0644, 0, 7, inos[2], &a, &l), 0);

	/* expired (a life of 0 ms) */
	assert_int_equal(mds_ns_create_slots(f->ns, &alice, sd, 1, 7, 0, &one, &l1, &da), 0);
	assert_int_equal(mds_ns_create_slot(f->ns, &alice, sd, "d", 0644, 0, 7, one, &a, &l),
			 -ESTALE);

	/* kept across a reopen of the database */
	assert_int_equal(mds_ns_create_slots(f->ns, &alice, sd, 1, 7, 60000, &one, &l1, &da), 0);
	mds_ns_close(f->ns);
	fx_open(f);
	assert_int_equal(mds_ns_create_slot(f->ns, &alice, sd, "e", 0644, 0, 7, one, &a, &l), 0);
	assert_int_equal(a.ino, one);
	assert_memory_equal(&l, &l1, sizeof(l));
	/* and the counter went past every reserved number */
	assert_int_equal(mds_ns_create(f->ns, &alice, sd, "f", 0644, 0, 0, 0, &a, &l), 0);
	assert_true(a.ino > one);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_ns_kv_tables, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ns_basic, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ns_setattr, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ns_permissions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ns_rename, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ns_ost_stall, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ns_hardlinks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ns_readdir_paging, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ns_layout_inherit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ns_ost_balance, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ns_registry_persists, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ns_destroy_log, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ns_xattr, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ns_sync_full, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ns_perm_issue8, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ns_killpriv, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ns_stripe_offset, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ns_truncate_epoch_blocks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ns_unlink_ino, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ns_create_slots, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
