/* test_mds_open.c — unit tests of mds/open.c and mds/orphan.c: opens per
 * (client, inode), open-unlinked files kept as orphans, destroyed at the
 * last close or when the holder's lease expires, kept across a restart for
 * one lease, and the race with an unlink. */
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
#include <unistd.h>

#include <cmocka.h>

#include "common/log.h"
#include "mds/lfsck.h"
#include "mds/ns.h"
#include "mds/open.h"
#include "mds/orphan.h"

struct fx {
	char dir[64];
	char db[96];
	mds_ns *ns;
	mds_open *op;
};

static const pfs_cred root = { 0, 0, 0, { 0 } };
#define CLI_A 0xa1u
#define CLI_B 0xb2u

static void fx_open(struct fx *f)
{
	mds_ns_opts o = { .path = f->db, .sync_mode = MDS_SYNC_FULL, .mapsize = 1ull << 30 };
	mds_ost_report r[2];
	uint32_t idx[2];

	assert_int_equal(mds_ns_open(&o, &f->ns), 0);
	memset(r, 0, sizeof(r));
	for (uint32_t i = 0; i < 2; i++) {
		snprintf(r[i].uuid, sizeof(r[i].uuid), "uuid-%u", i);
		r[i].total_bytes = 1ull << 40;
		r[i].free_bytes = 1ull << 39;
	}
	assert_int_equal(mds_ns_oss_register(f->ns, "oss0", "127.0.0.1", 7800, 7801, r, 2, idx),
			 0);
	assert_int_equal(mds_open_create(f->ns, 10, 1, &f->op), 0);
}

static void fx_close(struct fx *f)
{
	mds_open_destroy(f->op);
	mds_ns_close(f->ns);
	f->op = NULL;
	f->ns = NULL;
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	pfs_log_init("test", PFS_LOG_ERR);
	strcpy(f->dir, "/tmp/test_mds_open.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->db, sizeof(f->db), "%s/db", f->dir);
	fx_open(f);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[128];

	fx_close(f);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

static uint64_t mkfile(struct fx *f, const char *name, pfs_layout *lay)
{
	pfs_attr a;

	assert_int_equal(mds_ns_create(f->ns, &root, 1, name, S_IFREG | 0644, 0, 0, 2, &a, lay),
			 0);
	return a.ino;
}

static uint64_t destroys(struct fx *f)
{
	uint64_t n = 0;

	assert_int_equal(mds_ns_destroy_count(f->ns, &n), 0);
	return n;
}

static size_t orphans(struct fx *f)
{
	uint64_t *v = NULL;
	size_t n = 0;

	assert_int_equal(mds_ns_orphan_list(f->ns, &v, &n), 0);
	free(v);
	return n;
}

/* Not open: unlink destroys at once, as before. */
static void test_unlink_closed_destroys(void **state)
{
	struct fx *f = *state;
	pfs_layout lay;
	pfs_attr a;
	uint64_t ino = mkfile(f, "f", &lay);

	assert_int_equal(mds_ns_unlink(f->ns, &root, 1, "f"), 0);
	assert_int_equal(mds_ns_getattr(f->ns, &root, ino, &a), -ENOENT);
	assert_int_equal(destroys(f), 1);
	assert_int_equal(orphans(f), 0);
	/* an open racing with that unlink finds it gone */
	assert_int_equal(mds_open_add(f->op, CLI_A, ino), -ENOENT);
}

/* Open: unlink keeps the inode (nlink 0) and its layout until the last
 * close, of two clients. */
static void test_unlink_open_then_close(void **state)
{
	struct fx *f = *state;
	pfs_layout lay, lay2;
	pfs_attr a;
	int is_dir = 1;
	uint64_t ino = mkfile(f, "f", &lay);

	assert_int_equal(mds_open_add(f->op, CLI_A, ino), 0);
	assert_int_equal(mds_open_add(f->op, CLI_A, ino), 0);
	assert_int_equal(mds_open_add(f->op, CLI_B, ino), 0);
	assert_int_equal(mds_ns_unlink(f->ns, &root, 1, "f"), 0);
	assert_int_equal(mds_ns_lookup(f->ns, &root, 1, "f", &a), -ENOENT);
	assert_int_equal(mds_ns_getattr(f->ns, &root, ino, &a), 0);
	assert_int_equal(a.nlink, 0);
	assert_int_equal(mds_ns_getlayout(f->ns, &root, ino, &lay2, &is_dir), 0);
	assert_int_equal(is_dir, 0);
	assert_int_equal(lay2.stripe_count, 2);
	assert_int_equal(lay2.stripe[0].object, lay.stripe[0].object);
	assert_int_equal(mds_ns_setsize(f->ns, &root, ino, 4096, 0, &a), 0);
	assert_int_equal(destroys(f), 0);
	assert_int_equal(orphans(f), 1);
	assert_true(mds_open_held(f->op, CLI_A, ino));
	assert_false(mds_open_held(f->op, 0xcc, ino));

	mds_open_close(f->op, CLI_A, ino, 1); /* A still has one */
	mds_open_close(f->op, CLI_B, ino, 0);
	assert_int_equal(mds_ns_getattr(f->ns, &root, ino, &a), 0);
	assert_int_equal(destroys(f), 0);
	mds_open_close(f->op, CLI_A, ino, 0);
	assert_int_equal(mds_ns_getattr(f->ns, &root, ino, &a), -ENOENT);
	assert_int_equal(destroys(f), 1);
	assert_int_equal(orphans(f), 0);
	unsigned o, c, r;
	mds_open_counts(f->op, &o, &c, &r);
	assert_int_equal(o + c + r, 0);
}

/* A client's CLOSE (left = 0, counted before it was sent) overtaken by an
 * OPEN of the same inode from another of its threads: the reopened file
 * stays open, and unlinking it keeps its data until that open closes. */
static void test_close_overtaken_by_open(void **state)
{
	struct fx *f = *state;
	pfs_layout lay;
	pfs_attr a;
	uint64_t ino = mkfile(f, "f", &lay);

	assert_int_equal(mds_open_add(f->op, CLI_A, ino), 0); /* first open */
	assert_int_equal(mds_open_add(f->op, CLI_A, ino), 0); /* reopen arrives first */
	mds_open_close(f->op, CLI_A, ino, 0);                   /* first close, late */
	assert_true(mds_open_held(f->op, CLI_A, ino));
	assert_int_equal(mds_ns_unlink(f->ns, &root, 1, "f"), 0);
	assert_int_equal(mds_ns_getattr(f->ns, &root, ino, &a), 0);
	assert_int_equal(destroys(f), 0);
	mds_open_close(f->op, CLI_A, ino, 0);
	assert_int_equal(mds_ns_getattr(f->ns, &root, ino, &a), -ENOENT);
	assert_int_equal(destroys(f), 1);
}

/* Rename over an open file keeps it; a close of a file that is not an
 * orphan destroys nothing. */
static void test_rename_over_open(void **state)
{
	struct fx *f = *state;
	pfs_layout lay;
	pfs_attr a;
	uint64_t old = mkfile(f, "old", &lay), nw = mkfile(f, "new", &lay);

	assert_int_equal(mds_open_add(f->op, CLI_A, old), 0);
	assert_int_equal(mds_open_add(f->op, CLI_A, nw), 0);
	assert_int_equal(mds_ns_rename(f->ns, &root, 1, "new", 1, "old", 0), 0);
	assert_int_equal(mds_ns_lookup(f->ns, &root, 1, "old", &a), 0);
	assert_int_equal(a.ino, nw);
	assert_int_equal(mds_ns_getattr(f->ns, &root, old, &a), 0);
	assert_int_equal(a.nlink, 0);
	mds_open_close(f->op, CLI_A, nw, 0);
	assert_int_equal(mds_ns_getattr(f->ns, &root, nw, &a), 0);
	assert_int_equal(destroys(f), 0);
	mds_open_close(f->op, CLI_A, old, 0);
	assert_int_equal(mds_ns_getattr(f->ns, &root, old, &a), -ENOENT);
	assert_int_equal(destroys(f), 1);
}

/* A hard link left: not an orphan; the last name later goes while closed. */
static void test_link_keeps_file(void **state)
{
	struct fx *f = *state;
	pfs_layout lay;
	pfs_attr a;
	uint64_t ino = mkfile(f, "f", &lay);

	assert_int_equal(mds_ns_link(f->ns, &root, ino, 1, "g", &a), 0);
	assert_int_equal(mds_open_add(f->op, CLI_A, ino), 0);
	assert_int_equal(mds_ns_unlink(f->ns, &root, 1, "f"), 0);
	assert_int_equal(orphans(f), 0);
	mds_open_close(f->op, CLI_A, ino, 0);
	assert_int_equal(mds_ns_getattr(f->ns, &root, ino, &a), 0);
	assert_int_equal(a.nlink, 1);
	assert_int_equal(mds_ns_unlink(f->ns, &root, 1, "g"), 0);
	assert_int_equal(destroys(f), 1);
}

/* The holder's lease expires: its opens go, the orphan with them; a client
 * heard from keeps its own. */
static void test_lease_expiry(void **state)
{
	struct fx *f = *state;
	pfs_layout lay;
	pfs_attr a;
	uint64_t x = mkfile(f, "x", &lay), y = mkfile(f, "y", &lay);
	int64_t t0;

	assert_int_equal(mds_open_add(f->op, CLI_A, x), 0);
	assert_int_equal(mds_open_add(f->op, CLI_B, y), 0);
	assert_int_equal(mds_ns_unlink(f->ns, &root, 1, "x"), 0);
	assert_int_equal(mds_ns_unlink(f->ns, &root, 1, "y"), 0);
	t0 = mds_open_now_ms(); /* A and B last heard at t0 or before */
	mds_open_reap(f->op, t0 + 5000); /* within the 10 s lease */
	assert_int_equal(orphans(f), 2);
	usleep(50000);
	mds_open_seen(f->op, CLI_B); /* B heard at t0 + 50 or later */
	mds_open_reap(f->op, t0 + 10025);
	assert_int_equal(mds_ns_getattr(f->ns, &root, x, &a), -ENOENT);
	assert_int_equal(mds_ns_getattr(f->ns, &root, y, &a), 0);
	mds_open_reap(f->op, mds_open_now_ms() + 20001);
	assert_int_equal(mds_ns_getattr(f->ns, &root, x, &a), -ENOENT);
	assert_int_equal(mds_ns_getattr(f->ns, &root, y, &a), -ENOENT);
	assert_int_equal(orphans(f), 0);
	assert_int_equal(destroys(f), 2);
}

static int stale(struct fx *f, uint64_t ino)
{
	pfs_attr a;

	assert_int_equal(mds_ns_getattr(f->ns, &root, ino, &a), 0);
	return (a.flags & PFS_ATTR_SIZE_STALE) != 0;
}

/* Size recovery: a writer's open flags the size as maybe stale; readers do
 * not; the last writer's close clears it, a reader's close does not. */
static void test_size_flag_close(void **state)
{
	struct fx *f = *state;
	pfs_layout lay;
	uint64_t x = mkfile(f, "x", &lay);

	assert_false(stale(f, x));
	assert_int_equal(mds_open_add(f->op, CLI_B, x), 0); /* a reader */
	assert_false(stale(f, x));
	assert_int_equal(mds_open_add(f->op, CLI_A, x), 0);
	assert_int_equal(mds_open_writer(f->op, CLI_A, x), 0);
	assert_true(stale(f, x));
	/* two writers: one close leaves it set */
	assert_int_equal(mds_open_add(f->op, CLI_B, x), 0);
	assert_int_equal(mds_open_writer(f->op, CLI_B, x), 0);
	mds_open_close(f->op, CLI_B, x, 1);
	mds_open_close(f->op, CLI_B, x, 0);
	assert_true(stale(f, x));
	/* a SETSIZE while a writer is open keeps it */
	mds_open_size_pushed(f->op, x);
	assert_true(stale(f, x));
	/* A closes one of two opens: still a writer */
	assert_int_equal(mds_open_add(f->op, CLI_A, x), 0);
	mds_open_close(f->op, CLI_A, x, 1);
	assert_true(stale(f, x));
	mds_open_close(f->op, CLI_A, x, 0);
	assert_false(stale(f, x));
	/* the flag is on disk: it survives a restart */
	assert_int_equal(mds_open_add(f->op, CLI_A, x), 0);
	assert_int_equal(mds_open_writer(f->op, CLI_A, x), 0);
	fx_close(f);
	fx_open(f);
	assert_true(stale(f, x));
	/* a writer unknown to the table (no add): nothing set */
	uint64_t y = mkfile(f, "y", &lay);
	assert_int_equal(mds_open_writer(f->op, CLI_B, y), 0);
	assert_false(stale(f, y));
}

/* CREATE (MDS_CREATE_WRITER): the new file's size is flagged in the
 * creating transaction, the reply does not show it, the writer's close
 * clears it; without the flag a create leaves it clear. */
static void test_size_flag_create(void **state)
{
	struct fx *f = *state;
	pfs_layout lay;
	pfs_attr a;

	assert_int_equal(mds_ns_create(f->ns, &root, 1, "w", S_IFREG | 0644, MDS_CREATE_WRITER,
				       0, 2, &a, &lay), 0);
	assert_false(a.flags & PFS_ATTR_SIZE_STALE);
	assert_true(stale(f, a.ino));
	assert_int_equal(mds_open_add(f->op, CLI_A, a.ino), 0);
	assert_int_equal(mds_open_writer(f->op, CLI_A, a.ino), 0);
	mds_open_close(f->op, CLI_A, a.ino, 0);
	assert_false(stale(f, a.ino));
	/* O_CREAT of the existing file sets it again (an open for writing) */
	assert_int_equal(mds_ns_create(f->ns, &root, 1, "w", S_IFREG | 0644, MDS_CREATE_WRITER,
				       0, 2, &a, &lay), 0);
	assert_false(stale(f, a.ino));
	assert_int_equal(mds_open_add(f->op, CLI_A, a.ino), 0);
	assert_int_equal(mds_open_writer(f->op, CLI_A, a.ino), 0);
	assert_true(stale(f, a.ino));
	assert_false(stale(f, mkfile(f, "plain", &lay)));
}

/* A writer whose lease expires (crashed before CLOSE) leaves the flag set;
 * the next SETSIZE with no writer open (a reader's glimpse) clears it. */
static void test_size_flag_lease(void **state)
{
	struct fx *f = *state;
	pfs_layout lay;
	uint64_t x = mkfile(f, "x", &lay);

	assert_int_equal(mds_open_add(f->op, CLI_A, x), 0);
	assert_int_equal(mds_open_writer(f->op, CLI_A, x), 0);
	mds_open_reap(f->op, mds_open_now_ms() + 20001);
	assert_true(stale(f, x));
	mds_open_size_pushed(f->op, x);
	assert_false(stale(f, x));
	/* not a regular file: never flagged */
	assert_int_equal(mds_open_add(f->op, CLI_A, 1), 0);
	assert_int_equal(mds_open_writer(f->op, CLI_A, 1), 0);
	assert_false(stale(f, 1));
}

/* Restart: the orphan list survives; a client that claims its orphan within
 * the lease keeps it until its close; an unclaimed one goes after the lease. */
static void test_restart(void **state)
{
	struct fx *f = *state;
	pfs_layout lay;
	pfs_attr a;
	uint64_t x = mkfile(f, "x", &lay), y = mkfile(f, "y", &lay);

	assert_int_equal(mds_open_add(f->op, CLI_A, x), 0);
	assert_int_equal(mds_open_add(f->op, CLI_A, y), 0);
	assert_int_equal(mds_ns_unlink(f->ns, &root, 1, "x"), 0);
	assert_int_equal(mds_ns_unlink(f->ns, &root, 1, "y"), 0);
	fx_close(f);
	fx_open(f);
	unsigned o, c, r;
	mds_open_counts(f->op, &o, &c, &r);
	assert_int_equal(r, 2);
	assert_int_equal(o, 0);
	/* A comes back for x (a capability renewal) */
	assert_true(mds_open_held(f->op, CLI_A, x));
	/* a close from another client does not end what A holds */
	mds_open_close(f->op, CLI_B, x, 0);
	assert_int_equal(mds_ns_getattr(f->ns, &root, x, &a), 0);
	mds_open_reap(f->op, mds_open_now_ms() + 10001 - 20000); /* hold not over */
	assert_int_equal(orphans(f), 2);
	int64_t t = mds_open_now_ms(); /* A heard at t or later, the hold began before */
	mds_open_seen(f->op, CLI_A);
	mds_open_reap(f->op, t + 10000);
	assert_int_equal(mds_ns_getattr(f->ns, &root, y, &a), -ENOENT);
	assert_int_equal(mds_ns_getattr(f->ns, &root, x, &a), 0);
	mds_open_close(f->op, CLI_A, x, 0);
	assert_int_equal(mds_ns_getattr(f->ns, &root, x, &a), -ENOENT);
	assert_int_equal(orphans(f), 0);
	assert_int_equal(destroys(f), 2);
}

/* A failed open takes its count back; an orphan linked again (linkat of an
 * open file) is no longer destroyed at the close. */
static void test_undo_and_relink(void **state)
{
	struct fx *f = *state;
	pfs_layout lay;
	pfs_attr a;
	uint64_t x = mkfile(f, "x", &lay);

	assert_int_equal(mds_open_add(f->op, CLI_A, x), 0);
	assert_int_equal(mds_open_add(f->op, CLI_A, x), 0);
	mds_open_undo(f->op, CLI_A, x);
	assert_int_equal(mds_ns_unlink(f->ns, &root, 1, "x"), 0);
	assert_int_equal(mds_ns_link(f->ns, &root, x, 1, "again", &a), 0);
	mds_open_close(f->op, CLI_A, x, 0);
	assert_int_equal(mds_ns_lookup(f->ns, &root, 1, "again", &a), 0);
	assert_int_equal(a.ino, x);
	assert_int_equal(orphans(f), 0);
	assert_int_equal(destroys(f), 0);
}

/* lfsck's judgement: a planted object no layout references is an orphan;
 * live files' and open-unlinked files' objects never are. */
static void test_lfsck_judge(void **state)
{
	struct fx *f = *state;
	pfs_layout live, gone;
	uint64_t orphans = 9, queued = 9;
	uint64_t x;

	mkfile(f, "live", &live);
	x = mkfile(f, "open", &gone);
	assert_int_equal(mds_open_add(f->op, CLI_A, x), 0);
	assert_int_equal(mds_ns_unlink(f->ns, &root, 1, "open"), 0);
	uint32_t ost = live.stripe[0].ost;
	uint64_t listed[4] = { 0 };
	uint64_t n = 0;
	for (uint32_t i = 0; i < live.stripe_count; i++)
		if (live.stripe[i].ost == ost)
			listed[n++] = live.stripe[i].object;
	for (uint32_t i = 0; i < gone.stripe_count; i++)
		if (gone.stripe[i].ost == ost)
			listed[n++] = gone.stripe[i].object;
	listed[n++] = 999999; /* planted */
	assert_int_equal(mds_lfsck_judge(f->ns, ost, listed, n, 1, &orphans, &queued), 0);
	assert_int_equal(orphans, 1);
	assert_int_equal(queued, 0);
	assert_int_equal(destroys(f), 0);
	assert_int_equal(mds_lfsck_judge(f->ns, ost, listed, n, 0, &orphans, &queued), 0);
	assert_int_equal(orphans, 1);
	assert_int_equal(queued, 1);
	assert_int_equal(destroys(f), 1);
	/* an object in the destroy log is not judged again */
	assert_int_equal(mds_lfsck_judge(f->ns, ost, listed, n, 0, &orphans, &queued), 0);
	assert_int_equal(orphans, 0);
	assert_int_equal(destroys(f), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_unlink_closed_destroys, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unlink_open_then_close, setup, teardown),
		cmocka_unit_test_setup_teardown(test_close_overtaken_by_open, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rename_over_open, setup, teardown),
		cmocka_unit_test_setup_teardown(test_link_keeps_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lease_expiry, setup, teardown),
		cmocka_unit_test_setup_teardown(test_restart, setup, teardown),
		cmocka_unit_test_setup_teardown(test_size_flag_close, setup, teardown),
		cmocka_unit_test_setup_teardown(test_size_flag_create, setup, teardown),
		cmocka_unit_test_setup_teardown(test_size_flag_lease, setup, teardown),
		cmocka_unit_test_setup_teardown(test_undo_and_relink, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lfsck_judge, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
