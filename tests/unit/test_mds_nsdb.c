/* test_mds_nsdb.c — durability of the MDS database (mds/nsdb.c, dbsync.c,
 * ostreg.c, destroy_log.c): id counters reserved in synced batches never
 * hand out an id twice across a simulated power loss; the destroyer only
 * sees destroy records whose unlink is on disk; registered OSTs are usable
 * right after a restart until their heartbeat timeout; the sync state.
 *
 * A power loss is simulated by taking an image of data.mdb right after a
 * sync (the MDS runs db_sync=periodic with an hour between syncs, so only
 * the syncs the code forces happen) and putting it back after close: every
 * commit made after the image is lost, as the disk would lose it. */
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
#include "mds/ns.h"

#define BATCH 8u
#define NOST 3u

struct fx {
	char dir[64];
	char db[96];
	mds_ns *ns;
	uint64_t now_ms;
	int mode;
	void *image; /* data.mdb right after the last sync seen */
	size_t image_len;
	unsigned long image_syncs;
	int notified;
};

static const pfs_cred root = { 0, 0, 0, { 0 } };

static uint64_t fx_clock(void *arg)
{
	return ((struct fx *)arg)->now_ms;
}

static void on_notify(void *arg)
{
	((struct fx *)arg)->notified++;
}

static void fx_open(struct fx *f)
{
	mds_ns_opts o = { .path = f->db, .sync_mode = f->mode, .sync_interval_ms = 3600000,
			  .clock_ms = fx_clock, .clock_arg = f, .mapsize = 1ull << 28,
			  .id_batch = BATCH };
	assert_int_equal(mds_ns_open(&o, &f->ns), 0);
	mds_ns_set_destroy_notify(f->ns, on_notify, f);
}

static void fx_osts(struct fx *f)
{
	mds_ost_report r[NOST];
	uint32_t idx[NOST];

	memset(r, 0, sizeof(r));
	for (uint32_t i = 0; i < NOST; i++) {
		snprintf(r[i].uuid, sizeof(r[i].uuid), "uuid-%u", i);
		r[i].total_bytes = 1ull << 40;
		r[i].free_bytes = 1ull << 39;
	}
	assert_int_equal(mds_ns_oss_register(f->ns, "oss0", "127.0.0.1", 7800, 7801, r, NOST, idx),
			 0);
}

static void data_path(struct fx *f, char *p, size_t n)
{
	snprintf(p, n, "%s/data.mdb", f->db);
}

/* Copy data.mdb as it is now (= on disk, when taken right after a sync). */
static void take_image(struct fx *f)
{
	char p[160];
	struct stat st;
	int fd;

	data_path(f, p, sizeof(p));
	fd = open(p, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	free(f->image);
	f->image = malloc((size_t)st.st_size);
	assert_non_null(f->image);
	assert_int_equal(pread(fd, f->image, (size_t)st.st_size, 0), st.st_size);
	f->image_len = (size_t)st.st_size;
	close(fd);
}

/* Take an image if a sync happened since the last one. */
static void image_if_synced(struct fx *f)
{
	mds_sync_stats s;

	mds_ns_sync_stats(f->ns, &s);
	if (s.syncs != f->image_syncs) {
		take_image(f);
		f->image_syncs = s.syncs;
	}
}

/* Power loss: close (as the process dies) and put the disk image back. */
static void power_loss(struct fx *f)
{
	char p[160];
	int fd;

	assert_non_null(f->image);
	mds_ns_close(f->ns);
	f->ns = NULL;
	data_path(f, p, sizeof(p));
	fd = open(p, O_WRONLY | O_TRUNC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, f->image, f->image_len), (ssize_t)f->image_len);
	close(fd);
	fx_open(f);
	f->image_syncs = 0;
	image_if_synced(f); /* open syncs */
}

static int setup_mode(void **state, int mode)
{
	struct fx *f = calloc(1, sizeof(*f));

	pfs_log_init("test", PFS_LOG_ERR);
	strcpy(f->dir, "/tmp/test_mds_nsdb.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->db, sizeof(f->db), "%s/db", f->dir);
	f->now_ms = 1000000;
	f->mode = mode;
	fx_open(f);
	fx_osts(f);
	assert_int_equal(mds_ns_sync(f->ns), 0);
	image_if_synced(f);
	*state = f;
	return 0;
}

static int setup(void **state)
{
	return setup_mode(state, MDS_SYNC_PERIODIC);
}

static int setup_none(void **state)
{
	return setup_mode(state, MDS_SYNC_NONE);
}

static int setup_full(void **state)
{
	return setup_mode(state, MDS_SYNC_FULL);
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char p[160];

	if (f->ns)
		assert_int_equal(mds_ns_close(f->ns), 0);
	free(f->image);
	const char *files[] = { "data.mdb", "lock.mdb", "mds.lock" };
	for (size_t i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s/%s", f->db, files[i]);
		unlink(p);
	}
	rmdir(f->db);
	rmdir(f->dir);
	free(f);
	return 0;
}

/* ids[] gets the inode number then the object ids of the new file. */
static void create(struct fx *f, const char *name, uint64_t *ino, pfs_stripe *st)
{
	pfs_attr a;
	pfs_layout l;

	assert_int_equal(mds_ns_create(f->ns, &root, 1, name, 0644, PFS_CREATE_EXCL, 0, NOST, &a,
				       &l),
			 0);
	assert_int_equal(l.stripe_count, NOST);
	*ino = a.ino;
	memcpy(st, l.stripe, NOST * sizeof(*st));
}

/* ------------------------------------------------------------------ */

/* 20 creates with batches of 8, a power loss that keeps only what was
 * synced, 20 more creates: no inode number and no (OST, object) comes
 * back, whichever create the loss cut after. */
static void test_ids_never_reused_after_power_loss(void **state)
{
	struct fx *f = *state;
	enum { N = 20 };
	uint64_t ino[2 * N];
	pfs_stripe st[2 * N][NOST];
	char name[32];

	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "a%d", i);
		create(f, name, &ino[i], st[i]);
		image_if_synced(f);
	}
	/* Reserving ranges synced: 20 ids in batches of 8 are 3 syncs. */
	mds_sync_stats s;
	mds_ns_sync_stats(f->ns, &s);
	assert_true(s.syncs >= 3);
	assert_int_equal(s.errors, 0);
	power_loss(f);
	/* The last creates were not synced: they are gone. */
	pfs_attr a;
	assert_int_equal(mds_ns_lookup(f->ns, &root, 1, "a19", &a), -ENOENT);
	for (int i = N; i < 2 * N; i++) {
		snprintf(name, sizeof(name), "b%d", i);
		create(f, name, &ino[i], st[i]);
	}
	for (int i = 0; i < 2 * N; i++)
		for (int j = i + 1; j < 2 * N; j++) {
			assert_true(ino[i] != ino[j]);
			for (unsigned x = 0; x < NOST; x++)
				for (unsigned y = 0; y < NOST; y++)
					assert_false(st[i][x].ost == st[j][y].ost &&
						     st[i][x].object == st[j][y].object);
		}
	/* Ids move forward within a run. */
	for (int i = N + 1; i < 2 * N; i++)
		assert_true(ino[i] > ino[i - 1]);
}

/* Most creates write nothing to the counters: only every BATCH-th one
 * syncs, and a power loss right after a reservation keeps the mark. */
static void test_ids_batches(void **state)
{
	struct fx *f = *state;
	mds_sync_stats s0, s1;
	uint64_t ino, first;
	pfs_stripe st[NOST];
	char name[32];

	mds_ns_sync_stats(f->ns, &s0);
	create(f, "first", &first, st);
	mds_ns_sync_stats(f->ns, &s1);
	assert_int_equal(s1.syncs, s0.syncs + 1); /* the reservation */
	for (unsigned i = 1; i < BATCH; i++) {
		snprintf(name, sizeof(name), "f%u", i);
		create(f, name, &ino, st);
		assert_int_equal(ino, first + i);
	}
	mds_ns_sync_stats(f->ns, &s0);
	assert_int_equal(s0.syncs, s1.syncs); /* inside the batch: no sync */
	create(f, "next", &ino, st);
	mds_ns_sync_stats(f->ns, &s1);
	assert_int_equal(s1.syncs, s0.syncs + 1);
	/* A clean restart starts at the marks: the rest of the batch is skipped. */
	assert_int_equal(mds_ns_close(f->ns), 0);
	fx_open(f);
	create(f, "after", &ino, st);
	assert_true(ino >= first + 2 * BATCH);
}

/* A failed operation after its id was taken (name exists) leaves the
 * counters usable: the next create gets a new id and syncs its range. */
static void test_ids_aborted_transaction(void **state)
{
	struct fx *f = *state;
	uint64_t a, b, c;
	pfs_stripe st[NOST];
	pfs_attr at;
	pfs_layout l;
	char name[32];

	create(f, "x", &a, st);
	image_if_synced(f);
	for (unsigned i = 0; i < 2 * BATCH; i++)
		assert_int_equal(mds_ns_create(f->ns, &root, 1, "x", 0644, PFS_CREATE_EXCL, 0, NOST,
					       &at, &l),
				 -EEXIST);
	for (unsigned i = 0; i < 2 * BATCH; i++) {
		snprintf(name, sizeof(name), "y%u", i);
		create(f, name, &b, st);
		image_if_synced(f);
		assert_true(b > a);
		a = b;
	}
	power_loss(f);
	create(f, "z", &c, st);
	assert_true(c > b);
}

/* db_sync=periodic: an unlink's destroy record is held back until a sync
 * makes it durable; the notify hook fires after that sync, not before. */
static void test_destroy_waits_for_sync(void **state)
{
	struct fx *f = *state;
	uint64_t ino, seq;
	pfs_stripe st[NOST], d[MDS_DESTROY_MAX];
	uint32_t n;

	create(f, "f", &ino, st);
	assert_int_equal(mds_ns_sync(f->ns), 0);
	take_image(f); /* the disk now: the file, not its unlink */
	f->notified = 0;
	assert_int_equal(mds_ns_unlink(f->ns, &root, 1, "f"), 0);
	assert_int_equal(f->notified, 0);
	assert_int_equal(mds_ns_destroy_next(f->ns, 0, &seq, d, &n), 0); /* logged */
	assert_int_equal(mds_ns_destroy_next_durable(f->ns, 0, &seq, d, &n), -EAGAIN);
	/* Lost in a power loss before the sync: the file is back, the record
	 * gone, and no object was destroyed. */
	power_loss(f);
	pfs_attr a;
	assert_int_equal(mds_ns_lookup(f->ns, &root, 1, "f", &a), 0);
	assert_int_equal(a.ino, ino);
	assert_int_equal(mds_ns_destroy_next(f->ns, 0, &seq, d, &n), -ENOENT);
	/* Again, now with a sync: durable, notified, handed out. */
	f->notified = 0;
	assert_int_equal(mds_ns_unlink(f->ns, &root, 1, "f"), 0);
	assert_int_equal(mds_ns_destroy_next_durable(f->ns, 0, &seq, d, &n), -EAGAIN);
	assert_int_equal(mds_ns_sync(f->ns), 0);
	assert_int_equal(f->notified, 1);
	assert_int_equal(mds_ns_destroy_next_durable(f->ns, 0, &seq, d, &n), 0);
	assert_int_equal(n, NOST);
	for (uint32_t i = 0; i < n; i++) {
		assert_int_equal(d[i].ost, st[i].ost);
		assert_int_equal(d[i].object, st[i].object);
	}
	/* A record logged later waits although an earlier one is durable. */
	create(f, "g", &ino, st);
	assert_int_equal(mds_ns_unlink(f->ns, &root, 1, "g"), 0);
	uint64_t seq2;
	assert_int_equal(mds_ns_destroy_next_durable(f->ns, seq, &seq2, d, &n), -EAGAIN);
	assert_int_equal(mds_ns_destroy_done(f->ns, seq), 0);
	/* Records found at open are durable (open syncs). */
	assert_int_equal(mds_ns_close(f->ns), 0);
	fx_open(f);
	assert_int_equal(mds_ns_destroy_next_durable(f->ns, 0, &seq2, d, &n), 0);
	assert_true(seq2 > seq);
}

/* db_sync=none: the destroy log syncs before handing out a batch. */
static void test_destroy_none_syncs(void **state)
{
	struct fx *f = *state;
	uint64_t ino, seq;
	pfs_stripe st[NOST], d[MDS_DESTROY_MAX];
	uint32_t n;
	mds_sync_stats s0, s1;

	create(f, "f", &ino, st);
	create(f, "g", &ino, st);
	f->notified = 0;
	assert_int_equal(mds_ns_unlink(f->ns, &root, 1, "f"), 0);
	assert_int_equal(mds_ns_unlink(f->ns, &root, 1, "g"), 0);
	assert_int_equal(f->notified, 2); /* woken at once: the destroyer syncs */
	mds_ns_sync_stats(f->ns, &s0);
	assert_true(s0.durable_txn < s0.last_txn);
	assert_int_equal(mds_ns_destroy_next_durable(f->ns, 0, &seq, d, &n), 0);
	assert_int_equal(mds_ns_destroy_next_durable(f->ns, seq, &seq, d, &n), 0);
	mds_ns_sync_stats(f->ns, &s1);
	assert_int_equal(s1.syncs, s0.syncs + 1); /* one sync for both */
	assert_int_equal(s1.durable_txn, s1.last_txn);
}

/* db_sync=full: every commit is durable, records are handed out at once. */
static void test_destroy_full(void **state)
{
	struct fx *f = *state;
	uint64_t ino, seq;
	pfs_stripe st[NOST], d[MDS_DESTROY_MAX];
	uint32_t n;

	create(f, "f", &ino, st);
	f->notified = 0;
	assert_int_equal(mds_ns_unlink(f->ns, &root, 1, "f"), 0);
	assert_int_equal(f->notified, 1);
	assert_int_equal(mds_ns_destroy_next_durable(f->ns, 0, &seq, d, &n), 0);
	/* Ids survive a reopen in full mode too. */
	uint64_t ino2;
	assert_int_equal(mds_ns_close(f->ns), 0);
	fx_open(f);
	create(f, "g", &ino2, st);
	assert_true(ino2 > ino);
}

/* After a restart the registered OSTs take new files and count in STATFS
 * before any heartbeat; once the timeout passes unheard they are down. */
static void test_registered_osts_available_after_restart(void **state)
{
	struct fx *f = *state;
	uint64_t ino;
	pfs_stripe st[NOST];
	pfs_statfs sf;
	pfs_attr a;
	pfs_layout l;

	assert_int_equal(mds_ns_close(f->ns), 0);
	f->now_ms += 3600000; /* a restart much later */
	fx_open(f);
	create(f, "f", &ino, st);
	assert_int_equal(mds_ns_statfs(f->ns, &root, &sf), 0);
	assert_int_equal(sf.blocks, NOST * ((1ull << 40) / 4096));
	assert_int_equal(sf.bfree, NOST * ((1ull << 39) / 4096));
	pfs_ost_info *v;
	uint32_t n;
	assert_int_equal(mds_ns_ost_list(f->ns, &v, &n), 0);
	assert_int_equal(n, NOST);
	for (uint32_t i = 0; i < n; i++) {
		assert_int_equal(v[i].up, 0); /* listed down until heard: may move */
		assert_int_equal(v[i].free_bytes, 1ull << 39);
	}
	free(v);
	char host[64];
	uint16_t port;
	int up;
	assert_int_equal(mds_ns_ost_addr(f->ns, 0, host, &port, &up), 0);
	assert_int_equal(up, 0); /* no destroy RPC to an address not confirmed */
	/* One OSS heard from: it stays up; silence past the timeout downs the
	 * others. */
	mds_ost_report r = { .index = 1, .total_bytes = 1ull << 40, .free_bytes = 1ull << 38 };
	f->now_ms += 5000;
	assert_int_equal(mds_ns_oss_heartbeat(f->ns, "oss0", &r, 1), 0);
	f->now_ms += 6000;
	assert_int_equal(mds_ns_create(f->ns, &root, 1, "g", 0644, 0, 0, NOST, &a, &l), 0);
	assert_int_equal(l.stripe_count, 1);
	assert_int_equal(l.stripe[0].ost, 1);
	assert_int_equal(mds_ns_ost_addr(f->ns, 1, host, &port, &up), 0);
	assert_int_equal(up, 1);
	assert_int_equal(mds_ns_statfs(f->ns, &root, &sf), 0);
	assert_int_equal(sf.bfree, (1ull << 38) / 4096);
	f->now_ms += 10000;
	assert_int_equal(mds_ns_create(f->ns, &root, 1, "h", 0644, 0, 0, 0, &a, &l), -ENOSPC);
}

/* The sync state: successful syncs counted, durable = last committed after
 * a sync, close returns the final sync's result. */
static void test_sync_stats(void **state)
{
	struct fx *f = *state;
	mds_sync_stats s;
	uint64_t ino;
	pfs_stripe st[NOST];
	pfs_attr a;

	create(f, "f", &ino, st);
	assert_int_equal(mds_ns_mkdir(f->ns, &root, 1, "d", 0755, &a), 0);
	mds_ns_sync_stats(f->ns, &s);
	assert_true(s.durable_txn < s.last_txn);
	assert_int_equal(s.failing, 0);
	assert_int_equal(mds_ns_sync(f->ns), 0);
	mds_ns_sync_stats(f->ns, &s);
	assert_int_equal(s.durable_txn, s.last_txn);
	assert_int_equal(s.errors, 0);
	assert_int_equal(s.last_error, 0);
	/* Nothing committed since: a sync is already done (no disk sync; the
	 * periodic thread's rounds skip it too); after a commit exactly one
	 * sync happens. */
	unsigned long n = s.syncs;
	assert_int_equal(mds_ns_sync(f->ns), 0);
	mds_ns_sync_stats(f->ns, &s);
	assert_int_equal(s.syncs, n);
	assert_int_equal(mds_ns_mkdir(f->ns, &root, 1, "e", 0755, &a), 0);
	assert_int_equal(mds_ns_sync(f->ns), 0); /* or the thread's round did */
	mds_ns_sync_stats(f->ns, &s);
	assert_int_equal(s.syncs, n + 1);
	assert_int_equal(s.durable_txn, s.last_txn);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_ids_never_reused_after_power_loss, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ids_batches, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ids_aborted_transaction, setup, teardown),
		cmocka_unit_test_setup_teardown(test_destroy_waits_for_sync, setup, teardown),
		cmocka_unit_test_setup_teardown(test_destroy_none_syncs, setup_none, teardown),
		cmocka_unit_test_setup_teardown(test_destroy_full, setup_full, teardown),
		cmocka_unit_test_setup_teardown(test_registered_osts_available_after_restart, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_sync_stats, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
