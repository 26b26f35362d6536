/* test_mds_nsgroup.c — group commit (mds/nsgroup.c, nsdb.c's groups):
 * the members queued behind a running group share one commit; a failing
 * member is undone alone; each member's reply log record goes in; ids
 * reserved inside a group are synced before any member is answered; the
 * destroyer is woken after the commit, not before; prep runs before the
 * group holds the writer lock; a member that opens a
 * second write transaction gets an error instead of a deadlock; stopping
 * runs what is queued.  Inline runs: a request that may run inline does
 * so on the submitting thread when the committer is idle, never while
 * the committer runs or holds a queue, never in a burst (within the gap
 * after a batch), never after a slow batch (one that slept; a long one
 * that only computed does not count) nor with db_sync=full; an
 * inline unlink commits, and wakes the destroyer after its commit.
 *
 * Batches are made deterministic with a blocker: a first member whose run
 * waits until the test has queued the others, which then form the next
 * group together. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/log.h"
#include "mds/kv.h"
#include "mds/ns.h"
#include "mds/nsgroup.h"
#include "mds/reply_log.h"

#define NOST 2u
#define MAXM 16

static const pfs_cred root = { 0, 0, 0, { 0 } };

struct fx;

enum kind { K_BLOCK, K_BUSY, K_CREATE, K_TWO, K_UNLINK, K_KV_OK, K_KV_FAIL, K_NESTED, K_PREP, K_PREP_SKIP, K_STALE_SET, K_STALE_CLEAR };

struct member {
	mds_nsgroup_req r; /* first */
	struct fx *f;
	enum kind kind;
	char name[32];
	uint64_t req, ino;
	int ran_notified;  /* destroyer wake-ups seen inside run */
	int prep_committed; /* prep's own mkdir committed at once */
	int ran;
	int done_status;
	int done_durable;  /* everything committed was durable at done */
	int done_notified;
	int done;
	pthread_t done_thr; /* the thread that answered */
};

struct fx {
	char dir[64];
	char db[96];
	mds_ns *ns;
	mds_nsgroup *g;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int release, blocked, ndone, notified;
	struct member m[MAXM];
};

static void on_notify(void *arg)
{
	struct fx *f = arg;

	pthread_mutex_lock(&f->mu);
	f->notified++;
	pthread_mutex_unlock(&f->mu);
}

static int notified(struct fx *f)
{
	int n;

	pthread_mutex_lock(&f->mu);
	n = f->notified;
	pthread_mutex_unlock(&f->mu);
	return n;
}

static int run(mds_nsgroup_req *r)
{
	struct member *m = (struct member *)r;
	struct fx *f = m->f;
	mds_kv_txn *t;
	pfs_attr a;
	pfs_layout l;
	int rc;

	m->ran = 1;
	switch (m->kind) {
	case K_PREP:
	case K_PREP_SKIP:
		return 0;
	case K_BLOCK:
		pthread_mutex_lock(&f->mu);
		f->blocked = 1;
		pthread_cond_broadcast(&f->cv);
		while (!f->release)
			pthread_cond_wait(&f->cv, &f->mu);
		pthread_mutex_unlock(&f->mu);
		return 0;
	case K_BUSY: { /* on the CPU, never sleeping, 3 x MDS_NSGROUP_SLOW_US */
		struct timespec t0, t1;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		do
			clock_gettime(CLOCK_MONOTONIC, &t1);
		while ((t1.tv_sec - t0.tv_sec) * 1000000 + (t1.tv_nsec - t0.tv_nsec) / 1000 <
		       3 * MDS_NSGROUP_SLOW_US);
		return 0;
	}
	case K_CREATE: {
		mds_ns_reply rr = { f->ns, 77, m->req, PFS_OP_MDS_CREATE, &a, &l, 0 };

		mds_ns_reply_set(&rr);
		rc = mds_ns_create(f->ns, &root, 1, m->name, 0644, PFS_CREATE_EXCL, 0, NOST, &a, &l);
		mds_ns_reply_set(NULL);
		return rc;
	}
	case K_TWO: { /* two write transactions, one after the other */
		char n2[40];

		rc = mds_ns_mknod(f->ns, &root, 1, m->name, S_IFIFO | 0644, 0, &a);
		snprintf(n2, sizeof(n2), "%s.2", m->name);
		return rc ? rc : mds_ns_mknod(f->ns, &root, 1, n2, S_IFIFO | 0644, 0, &a);
	}
	case K_UNLINK:
		rc = mds_ns_unlink(f->ns, &root, 1, m->name);
		m->ran_notified = notified(f);
		return rc;
	case K_KV_OK:
	case K_KV_FAIL:
		rc = mds_ns_kv_begin(f->ns, 1, &t);
		if (rc)
			return rc;
		rc = mds_ns_kv_put(t, MDS_KV_JOBS, m->name, strlen(m->name), "v", 1);
		if (rc || m->kind == K_KV_FAIL) {
			mds_ns_kv_abort(t);
			return rc ? rc : -EIO;
		}
		return mds_ns_kv_commit(t);
	case K_STALE_SET:
	case K_STALE_CLEAR:
		return mds_ns_size_stale(f->ns, m->ino, m->kind == K_STALE_SET);
	case K_NESTED:
		/* a second write transaction while the first is open */
		rc = mds_ns_kv_begin(f->ns, 1, &t);
		if (rc)
			return rc;
		rc = mds_ns_mkdir(f->ns, &root, 1, m->name, 0755, &a);
		mds_ns_kv_abort(t);
		return rc ? rc : -EALREADY;
	}
	return -EINVAL;
}

/* prep runs before the group holds the writer: a write of its own
 * commits at once (inside the group it would wait for the group's
 * commit). */
static int prep(mds_nsgroup_req *r)
{
	struct member *m = (struct member *)r;
	mds_sync_stats a, b;
	pfs_attr at;

	if (m->kind != K_PREP && m->kind != K_PREP_SKIP)
		return 0;
	mds_ns_sync_stats(m->f->ns, &a);
	if (mds_ns_mkdir(m->f->ns, &root, 1, m->name, 0755, &at) == 0) {
		mds_ns_sync_stats(m->f->ns, &b);
		m->prep_committed = b.last_txn == a.last_txn + 1;
	}
	if (m->kind == K_PREP_SKIP) {
		r->status = -ENOTTY;
		return 1;
	}
	return 0;
}

static void done(mds_nsgroup_req *r, int status)
{
	struct member *m = (struct member *)r;
	struct fx *f = m->f;
	mds_sync_stats s;

	mds_ns_sync_stats(f->ns, &s);
	m->done_durable = s.durable_txn == s.last_txn;
	m->done_notified = notified(f);
	pthread_mutex_lock(&f->mu);
	m->done_status = status;
	m->done_thr = pthread_self();
	m->done = 1;
	f->ndone++;
	pthread_cond_broadcast(&f->cv);
	pthread_mutex_unlock(&f->mu);
}

static void fx_open(struct fx *f, int mode, unsigned id_batch)
{
	mds_ns_opts o = { .path = f->db, .sync_mode = mode, .sync_interval_ms = 3600000,
			  .mapsize = 1ull << 28, .id_batch = id_batch };
	mds_ost_report rep[NOST];
	uint32_t idx[NOST];

	assert_int_equal(mds_ns_open(&o, &f->ns), 0);
	mds_ns_set_destroy_notify(f->ns, on_notify, f);
	memset(rep, 0, sizeof(rep));
	for (uint32_t i = 0; i < NOST; i++) {
		snprintf(rep[i].uuid, sizeof(rep[i].uuid), "uuid-%u", i);
		rep[i].total_bytes = 1ull << 40;
		rep[i].free_bytes = 1ull << 39;
	}
	assert_int_equal(mds_ns_oss_register(f->ns, "oss0", "127.0.0.1", 7800, 7801, rep, NOST,
					     idx), 0);
	assert_int_equal(mds_ns_sync(f->ns), 0);
	assert_int_equal(mds_nsgroup_start(f->ns, 0, &f->g), 0);
}

static struct fx *fx_new(int mode, unsigned id_batch)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	pfs_log_init("test", PFS_LOG_ERR);
	strcpy(f->dir, "/tmp/test_mds_nsgroup.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->db, sizeof(f->db), "%s/db", f->dir);
	pthread_mutex_init(&f->mu, NULL);
	pthread_cond_init(&f->cv, NULL);
	fx_open(f, mode, id_batch);
	return f;
}

static int setup(void **state)
{
	*state = fx_new(MDS_SYNC_PERIODIC, 1024);
	return 0;
}

static int setup_small_batches(void **state)
{
	*state = fx_new(MDS_SYNC_PERIODIC, 4);
	return 0;
}

static int setup_none(void **state)
{
	*state = fx_new(MDS_SYNC_NONE, 1024);
	return 0;
}

static int setup_full(void **state)
{
	*state = fx_new(MDS_SYNC_FULL, 1024);
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char p[160];

	mds_nsgroup_stop(f->g);
	assert_int_equal(mds_ns_close(f->ns), 0);
	const char *files[] = { "data.mdb", "lock.mdb", "mds.lock" };
	for (size_t i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s/%s", f->db, files[i]);
		unlink(p);
	}
	rmdir(f->db);
	rmdir(f->dir);
	pthread_cond_destroy(&f->cv);
	pthread_mutex_destroy(&f->mu);
	free(f);
	return 0;
}

static struct member *member(struct fx *f, int i, enum kind k, const char *name)
{
	struct member *m = &f->m[i];

	memset(m, 0, sizeof(*m));
	m->f = f;
	m->kind = k;
	m->req = 1000 + (uint64_t)i;
	snprintf(m->name, sizeof(m->name), "%s", name);
	m->r.prep = prep;
	m->r.run = run;
	m->r.done = done;
	return m;
}

/* Member 0 blocks the committer; members 1..n-1 are queued behind it and
 * run as one group once it is released.  Waits for all n answers. */
static void run_group(struct fx *f, int n)
{
	assert_int_equal(mds_nsgroup_submit(f->g, &f->m[0].r), 0);
	pthread_mutex_lock(&f->mu);
	while (!f->blocked)
		pthread_cond_wait(&f->cv, &f->mu);
	pthread_mutex_unlock(&f->mu);
	for (int i = 1; i < n; i++)
		assert_int_equal(mds_nsgroup_submit(f->g, &f->m[i].r), 0);
	pthread_mutex_lock(&f->mu);
	f->release = 1;
	pthread_cond_broadcast(&f->cv);
	while (f->ndone < n)
		pthread_cond_wait(&f->cv, &f->mu);
	f->blocked = f->release = 0;
	f->ndone = 0;
	pthread_mutex_unlock(&f->mu);
}

static int exists(struct fx *f, const char *name)
{
	pfs_attr a;

	return mds_ns_lookup(f->ns, &root, 1, name, &a) == 0;
}

static int kv_has(struct fx *f, const char *key)
{
	mds_kv_txn *t;
	const void *v;
	size_t vl;
	int rc;

	assert_int_equal(mds_ns_kv_begin(f->ns, 0, &t), 0);
	rc = mds_ns_kv_get(t, MDS_KV_JOBS, key, strlen(key), &v, &vl);
	mds_ns_kv_abort(t);
	return rc == 0;
}

/* ------------------------------------------------------------------ */

/* Ten creates behind the blocker: one group, one commit (the last
 * transaction id moves by one), every file and reply record there. */
static void test_one_commit(void **state)
{
	struct fx *f = *state;
	enum { N = 11 };
	mds_sync_stats before, after;
	mds_nsgroup_stats gs;

	mds_ns_sync_stats(f->ns, &before);
	member(f, 0, K_BLOCK, "");
	for (int i = 1; i < N; i++) {
		char nm[16];

		snprintf(nm, sizeof(nm), "f%d", i);
		member(f, i, K_CREATE, nm);
	}
	run_group(f, N);
	mds_ns_sync_stats(f->ns, &after);
	assert_int_equal(after.last_txn, before.last_txn + 1);
	mds_nsgroup_get_stats(f->g, &gs);
	assert_int_equal(gs.batches, 2);
	assert_int_equal(gs.grouped, 1); /* the blocker alone: no group */
	assert_int_equal(gs.requests, N);
	assert_int_equal(gs.largest, N - 1);
	assert_int_equal(gs.failed, 0);
	for (int i = 1; i < N; i++) {
		mds_ns_reply_rec rec;

		assert_int_equal(f->m[i].done_status, 0);
		assert_true(exists(f, f->m[i].name));
		assert_int_equal(mds_ns_reply_get(f->ns, 77, f->m[i].req, &rec), 0);
		assert_int_equal(rec.opcode, PFS_OP_MDS_CREATE);
		assert_true(rec.has_attr && rec.has_lay);
	}
}

/* A failing member is undone alone: its writes are gone, those of the
 * members before and after it are committed, and each gets its status. */
static void test_failed_member_alone(void **state)
{
	struct fx *f = *state;

	member(f, 0, K_BLOCK, "");
	member(f, 1, K_KV_OK, "k1");
	member(f, 2, K_KV_FAIL, "k2");
	member(f, 3, K_CREATE, "a");
	member(f, 4, K_CREATE, "a"); /* exclusive create of an existing name */
	member(f, 5, K_KV_OK, "k3");
	run_group(f, 6);
	assert_int_equal(f->m[1].done_status, 0);
	assert_int_equal(f->m[2].done_status, -EIO);
	assert_int_equal(f->m[3].done_status, 0);
	assert_int_equal(f->m[4].done_status, -EEXIST);
	assert_int_equal(f->m[5].done_status, 0);
	assert_true(kv_has(f, "k1"));
	assert_false(kv_has(f, "k2"));
	assert_true(kv_has(f, "k3"));
	assert_true(exists(f, "a"));
}

/* Inode numbers and object ids reserved four at a time: ten creates in a
 * group cross several marks; the group is synced before anyone is
 * answered, and every id is distinct; after a reopen new ids are above. */
static void test_reserved_ids_synced_before_answers(void **state)
{
	struct fx *f = *state;
	enum { N = 11 };
	uint64_t inos[N + 1];
	mds_sync_stats before, after;
	pfs_attr a;
	pfs_layout l;

	mds_ns_sync_stats(f->ns, &before);
	member(f, 0, K_BLOCK, "");
	for (int i = 1; i < N; i++) {
		char nm[16];

		snprintf(nm, sizeof(nm), "r%d", i);
		member(f, i, K_CREATE, nm);
	}
	run_group(f, N);
	mds_ns_sync_stats(f->ns, &after);
	assert_true(after.syncs > before.syncs);
	for (int i = 1; i < N; i++) {
		assert_int_equal(f->m[i].done_status, 0);
		assert_true(f->m[i].done_durable);
		assert_int_equal(mds_ns_lookup(f->ns, &root, 1, f->m[i].name, &a), 0);
		inos[i] = a.ino;
		for (int j = 1; j < i; j++)
			assert_true(inos[j] != inos[i]);
	}
	/* the marks are on disk: a reopened database hands out higher ids */
	mds_nsgroup_stop(f->g);
	assert_int_equal(mds_ns_close(f->ns), 0);
	fx_open(f, MDS_SYNC_PERIODIC, 4);
	assert_int_equal(mds_ns_create(f->ns, &root, 1, "after", 0644, PFS_CREATE_EXCL, 0, NOST,
				       &a, &l), 0);
	for (int i = 1; i < N; i++)
		assert_true(a.ino > inos[i]);
}

/* db_sync=none wakes the destroyer after a commit that logged destroys:
 * inside a group, after the group's commit, never during its run. */
static void test_destroyer_woken_after_commit(void **state)
{
	struct fx *f = *state;
	pfs_attr a;
	pfs_layout l;
	int n0;

	assert_int_equal(mds_ns_create(f->ns, &root, 1, "x", 0644, PFS_CREATE_EXCL, 0, NOST, &a,
				       &l), 0);
	assert_int_equal(l.stripe_count, NOST);
	n0 = notified(f);
	member(f, 0, K_BLOCK, "");
	member(f, 1, K_UNLINK, "x");
	member(f, 2, K_CREATE, "y");
	run_group(f, 3);
	assert_int_equal(f->m[1].done_status, 0);
	assert_true(f->m[1].done_notified > n0);
	assert_false(exists(f, "x"));
}

/* A member that begins a second write transaction while its first is
 * open gets an error (without a group it would wait for itself); the
 * group goes on. */
static void test_nested_write_fails(void **state)
{
	struct fx *f = *state;

	member(f, 0, K_BLOCK, "");
	member(f, 1, K_NESTED, "d");
	member(f, 2, K_CREATE, "z");
	run_group(f, 3);
	assert_true(f->m[1].done_status < 0);
	assert_int_not_equal(f->m[1].done_status, -EALREADY);
	assert_false(exists(f, "d"));
	assert_int_equal(f->m[2].done_status, 0);
	assert_true(exists(f, "z"));
}

/* prep comes before the group (its writes commit at once); a prep that
 * answers skips run and keeps its status. */
static void test_prep_outside_group(void **state)
{
	struct fx *f = *state;

	member(f, 0, K_BLOCK, "");
	member(f, 1, K_CREATE, "c1");
	member(f, 2, K_PREP, "p1");
	member(f, 3, K_PREP_SKIP, "p2");
	member(f, 4, K_CREATE, "c2");
	run_group(f, 5);
	assert_true(f->m[2].prep_committed);
	assert_true(f->m[3].prep_committed);
	assert_true(f->m[2].ran);
	assert_false(f->m[3].ran);
	assert_int_equal(f->m[2].done_status, 0);
	assert_int_equal(f->m[3].done_status, -ENOTTY);
	assert_true(exists(f, "c1") && exists(f, "c2") && exists(f, "p1") && exists(f, "p2"));
}

/* The size-stale flag set then cleared by two members of one group ends
 * cleared: the second member sees the first's change (a look at the
 * committed state would find the flag clear and skip the clear). */
static void test_size_stale_sees_group(void **state)
{
	struct fx *f = *state;
	pfs_attr a;
	pfs_layout l;

	assert_int_equal(mds_ns_create(f->ns, &root, 1, "st", 0644, PFS_CREATE_EXCL, 0, NOST, &a,
				       &l), 0);
	assert_false(a.flags & PFS_ATTR_SIZE_STALE);
	member(f, 0, K_BLOCK, "");
	member(f, 1, K_STALE_SET, "")->ino = a.ino;
	member(f, 2, K_STALE_CLEAR, "")->ino = a.ino;
	run_group(f, 3);
	assert_int_equal(f->m[1].done_status, 0);
	assert_int_equal(f->m[2].done_status, 0);
	assert_int_equal(mds_ns_getattr(f->ns, &root, a.ino, &a), 0);
	assert_false(a.flags & PFS_ATTR_SIZE_STALE);
	/* and set alone in a group: set */
	member(f, 0, K_BLOCK, "");
	member(f, 1, K_STALE_SET, "")->ino = a.ino;
	run_group(f, 2);
	assert_int_equal(mds_ns_getattr(f->ns, &root, a.ino, &a), 0);
	assert_true(a.flags & PFS_ATTR_SIZE_STALE);
}

/* Stopping runs and answers what is queued. */
static void test_stop_drains(void **state)
{
	struct fx *f = *state;
	enum { N = 6 };

	for (int i = 0; i < N; i++) {
		char nm[16];

		snprintf(nm, sizeof(nm), "s%d", i);
		member(f, i, K_CREATE, nm);
		assert_int_equal(mds_nsgroup_submit(f->g, &f->m[i].r), 0);
	}
	mds_nsgroup_stop(f->g);
	f->g = NULL;
	for (int i = 0; i < N; i++) {
		assert_true(f->m[i].done);
		assert_int_equal(f->m[i].done_status, 0);
		assert_true(exists(f, f->m[i].name));
	}
	assert_int_equal(mds_nsgroup_start(f->ns, 0, &f->g), 0);
}

/* Wait until m is answered. */
static void wait_done(struct fx *f, struct member *m)
{
	pthread_mutex_lock(&f->mu);
	while (!m->done)
		pthread_cond_wait(&f->cv, &f->mu);
	pthread_mutex_unlock(&f->mu);
}

/* A member alone that asks for a group (group_alone) commits its two
 * write transactions once; one that does not commits each. */
static void test_group_alone(void **state)
{
	struct fx *f = *state;
	mds_sync_stats before, after;
	mds_nsgroup_stats gs;
	struct member *m;

	mds_ns_sync_stats(f->ns, &before);
	m = member(f, 0, K_TWO, "t");
	m->r.group_alone = 1;
	assert_int_equal(mds_nsgroup_submit(f->g, &m->r), 0);
	wait_done(f, m);
	assert_int_equal(m->done_status, 0);
	assert_true(exists(f, "t") && exists(f, "t.2"));
	mds_ns_sync_stats(f->ns, &after);
	assert_int_equal(after.last_txn, before.last_txn + 1);
	mds_nsgroup_get_stats(f->g, &gs);
	assert_int_equal(gs.grouped, 1);
	before = after;
	m = member(f, 1, K_TWO, "u");
	assert_int_equal(mds_nsgroup_submit(f->g, &m->r), 0);
	wait_done(f, m);
	assert_int_equal(m->done_status, 0);
	mds_ns_sync_stats(f->ns, &after);
	assert_int_equal(after.last_txn, before.last_txn + 2);
	mds_nsgroup_get_stats(f->g, &gs);
	assert_int_equal(gs.grouped, 1);
}

/* ------------------------------------------------------------------ inline runs */

/* Submit m (inline allowed) and wait for its answer; 1 if it was answered
 * on this thread before submit returned. */
static int submit_inline(struct fx *f, struct member *m)
{
	int here;

	m->r.inline_ok = 1;
	assert_int_equal(mds_nsgroup_submit(f->g, &m->r), 0);
	here = m->done && pthread_equal(m->done_thr, pthread_self());
	wait_done(f, m);
	if (!here)
		assert_false(pthread_equal(m->done_thr, pthread_self()));
	return here;
}

/* The committer goes to sleep after its start or its last batch: probe
 * with no-op requests until one runs inline (gap 0), at most ~2 s. */
static void until_idle(struct fx *f, int slot)
{
	for (int i = 0; i < 200; i++) {
		if (submit_inline(f, member(f, slot, K_PREP, "")))
			return;
		usleep(10000);
	}
	fail_msg("the committer never looked idle");
}

/* Idle committer, gap 0: an unlink runs on the submitting thread, is
 * committed and answered before submit returns, and (db_sync=none) has
 * woken the destroyer (after its commit, as a lone transaction does). */
static void test_inline_when_idle(void **state)
{
	struct fx *f = *state;
	mds_nsgroup_stats gs;
	pfs_attr a;
	pfs_layout l;
	int n0;

	mds_nsgroup_set_inline_gap(f->g, 0);
	assert_int_equal(mds_ns_create(f->ns, &root, 1, "x", 0644, PFS_CREATE_EXCL, 0, NOST, &a,
				       &l), 0);
	n0 = notified(f);
	until_idle(f, 0);
	assert_true(submit_inline(f, member(f, 1, K_UNLINK, "x")));
	assert_int_equal(f->m[1].done_status, 0);
	assert_false(exists(f, "x"));
	assert_true(f->m[1].done_notified > n0);
	/* a failure inline is its own status, and leaves nothing */
	assert_true(submit_inline(f, member(f, 2, K_UNLINK, "x")));
	assert_int_equal(f->m[2].done_status, -ENOENT);
	mds_nsgroup_get_stats(f->g, &gs);
	assert_int_equal(gs.inlined, gs.batches);
	assert_true(gs.inlined >= 3);
	assert_int_equal(gs.grouped, 0);
}

/* While the committer runs a batch, requests that may run inline queue
 * behind it and run there, together as one group. */
static void test_no_inline_while_busy(void **state)
{
	struct fx *f = *state;
	mds_nsgroup_stats gs;

	mds_nsgroup_set_inline_gap(f->g, 0);
	member(f, 0, K_BLOCK, "");
	member(f, 1, K_CREATE, "b1")->r.inline_ok = 1;
	member(f, 2, K_CREATE, "b2")->r.inline_ok = 1;
	run_group(f, 3);
	for (int i = 1; i < 3; i++) {
		assert_int_equal(f->m[i].done_status, 0);
		assert_false(pthread_equal(f->m[i].done_thr, pthread_self()));
		assert_true(exists(f, f->m[i].name));
	}
	mds_nsgroup_get_stats(f->g, &gs);
	assert_int_equal(gs.inlined, 0);
	assert_int_equal(gs.grouped, 1);
	assert_int_equal(gs.largest, 2);
}

/* A request within the gap after the last batch is a burst: the
 * committer takes it.  A negative gap: never inline; gap 0: inline. */
static void test_no_inline_in_burst(void **state)
{
	struct fx *f = *state;
	mds_nsgroup_stats gs;

	mds_nsgroup_set_inline_gap(f->g, 0);
	until_idle(f, 0);
	mds_nsgroup_set_inline_gap(f->g, 60 * 1000000); /* a minute */
	usleep(20000);
	assert_false(submit_inline(f, member(f, 1, K_CREATE, "g1")));
	assert_true(exists(f, "g1"));
	mds_nsgroup_set_inline_gap(f->g, -1);
	usleep(20000);
	assert_false(submit_inline(f, member(f, 2, K_CREATE, "g2")));
	mds_nsgroup_set_inline_gap(f->g, 0);
	until_idle(f, 3);
	mds_nsgroup_get_stats(f->g, &gs);
	assert_true(gs.inlined >= 2);
	assert_true(gs.batches >= gs.inlined + 2);
}

/* A batch slower than MDS_NSGROUP_SLOW_US keeps inline runs off (for a
 * second): a slow disk stalls the committer, not the submitter. */
static void test_no_inline_after_slow_batch(void **state)
{
	struct fx *f = *state;

	mds_nsgroup_set_inline_gap(f->g, 0);
	assert_int_equal(mds_nsgroup_submit(f->g, &member(f, 0, K_BLOCK, "")->r), 0);
	pthread_mutex_lock(&f->mu);
	while (!f->blocked)
		pthread_cond_wait(&f->cv, &f->mu);
	pthread_mutex_unlock(&f->mu);
	usleep(3 * MDS_NSGROUP_SLOW_US);
	pthread_mutex_lock(&f->mu);
	f->release = 1;
	pthread_cond_broadcast(&f->cv);
	pthread_mutex_unlock(&f->mu);
	wait_done(f, &f->m[0]);
	usleep(20000);
	assert_false(submit_inline(f, member(f, 1, K_CREATE, "s1")));
	assert_true(exists(f, "s1"));
}

/* A batch as long that only computed (or was preempted) and never slept
 * is no sign of a slow disk: inline runs stay on (they come back within
 * half a second, not after the slow batch's second). */
static void test_long_busy_batch_keeps_inline(void **state)
{
	struct fx *f = *state;
	int here = 0;

	mds_nsgroup_set_inline_gap(f->g, 0);
	member(f, 0, K_BUSY, "");
	assert_int_equal(mds_nsgroup_submit(f->g, &f->m[0].r), 0);
	wait_done(f, &f->m[0]);
	for (int i = 0; i < 50 && !here; i++) {
		usleep(10000);
		here = submit_inline(f, member(f, 1, K_PREP, ""));
	}
	assert_true(here);
}

/* db_sync=full: every commit fsyncs, never on the submitter's thread,
 * whatever gap is set. */
static void test_no_inline_full_sync(void **state)
{
	struct fx *f = *state;
	mds_nsgroup_stats gs;

	mds_nsgroup_set_inline_gap(f->g, 0);
	for (int i = 0; i < 3; i++) {
		usleep(20000);
		assert_false(submit_inline(f, member(f, i, K_PREP, "")));
	}
	mds_nsgroup_get_stats(f->g, &gs);
	assert_int_equal(gs.inlined, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_one_commit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failed_member_alone, setup, teardown),
		cmocka_unit_test_setup_teardown(test_group_alone, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reserved_ids_synced_before_answers,
						setup_small_batches, teardown),
		cmocka_unit_test_setup_teardown(test_destroyer_woken_after_commit, setup_none,
						teardown),
		cmocka_unit_test_setup_teardown(test_nested_write_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(test_prep_outside_group, setup, teardown),
		cmocka_unit_test_setup_teardown(test_size_stale_sees_group, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop_drains, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inline_when_idle, setup_none, teardown),
		cmocka_unit_test_setup_teardown(test_no_inline_while_busy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_inline_in_burst, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_inline_after_slow_batch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_long_busy_batch_keeps_inline, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_inline_full_sync, setup_full, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
