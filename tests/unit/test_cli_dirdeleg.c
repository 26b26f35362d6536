/* test_cli_dirdeleg.c — asynchronous unlink under directory delegations
 * (client/dirdeleg.h) with fake MDS calls and an injected clock: a streak
 * asks for the delegation, refusals back off (doubling, capped), a
 * credential other than the grant's, an unknown name and a directory go
 * synchronously, a full queue makes the caller wait (not fail), a recall
 * lets the pending unlinks go and then returns the delegation (also one
 * that arrives while the GET is on its way), flush errors come back from
 * fsyncdir once, ordering waits block until the conflicting unlinks are
 * answered, the delegation runs out on the client's clock and is renewed
 * by the UNLINKs sent.  Negative lookups: a grant lists the directory; a
 * name listed, noted or made here is not answered locally, an unlisted or
 * unlinked one is; a recall, the expiry, the channel down, another
 * credential, a failed mutation, a listing error, a listing over the cap
 * and the table's cap leave it to the MDS; without ops.list creates ask
 * for nothing.  Batches: the queued jobs of one directory and context go
 * in one UNLINK_BATCH, in order, at most 32; other directories, creds or
 * jobs never share one; each entry's status counts as a single reply
 * would; an MDS that refuses the opcode gets single UNLINKs from then on;
 * a request error is each entry's.  Asynchronous create: a complete held
 * directory answers a create of a name it lacks from a slot (attributes
 * by the MDS's rules), anything else goes synchronously; creates are held
 * for hold_ms, go in one CREATE_BATCH with their closed flags, at
 * once when someone waits; a create of a name waits for an unlink of it
 * before it (and the other way round); a refused CREATE is kept for
 * fsyncdir; refused slots back off; a recall sends the creates before the
 * RETURN and drops the slots; an MDS without CREATE_BATCH gets single
 * CREATEs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "client/dirdeleg.h"

/* ---- the fake MDS ---- */

#define LOG_MAX 256

typedef struct ev {
	char kind;          /* 'u' unlink, 'g' get, 'r' return, 'b' batch (ino: n),
	                       'c' create, 'B' create batch (ino: n), 'S' slots */
	int closed;         /* 'c': created closed */
	uint64_t dir, ino;
	uint32_t uid;
	int batch;          /* 'u', 'b': the batch (1, 2, ...); 0 = a single UNLINK */
	char name[64];
} ev;

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint64_t clock;
	int gate_closed;    /* unlinks wait while set */
	int get_rc;
	uint32_t lease_ms;
	int up;
	int charges, dones;
	ev log[LOG_MAX];
	int nlog;
	cli_dd *recall_in_get; /* the GET recalls its dir before answering */
	unsigned list_n;    /* the fake directory: names e00000.. */
	int list_rc;
	int batch_rc;       /* UNLINK_BATCH's own error */
	int nbatch;         /* UNLINK_BATCHes received */
	int arrived;        /* unlink calls that reached the gate */
	int flusher_nice;   /* the nice value of the thread of the last UNLINK */
	int slots_rc;       /* CREATE_SLOTS's answer */
	uint64_t next_slot; /* the next slot's inode number */
	int cbatch_rc;      /* CREATE_BATCH's own error */
	uint32_t dir_mode, dir_gid; /* the directory CREATE_SLOTS describes */
} F = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

static void note_bc(char kind, const cli_ctx *c, uint64_t dir, const char *name, uint64_t ino,
		    int batch, int closed)
{
	pthread_mutex_lock(&F.mu);
	if (F.nlog < LOG_MAX) {
		ev *e = &F.log[F.nlog++];

		e->kind = kind;
		e->batch = batch;
		e->closed = closed;
		e->dir = dir;
		e->ino = ino;
		e->uid = c->cred.uid;
		snprintf(e->name, sizeof(e->name), "%s", name ? name : "");
	}
	pthread_cond_broadcast(&F.cv);
	pthread_mutex_unlock(&F.mu);
}

static void note_b(char kind, const cli_ctx *c, uint64_t dir, const char *name, uint64_t ino,
		   int batch)
{
	note_bc(kind, c, dir, name, ino, batch, 0);
}

static void note(char kind, const cli_ctx *c, uint64_t dir, const char *name, uint64_t ino)
{
	note_b(kind, c, dir, name, ino, 0);
}

static int count(char kind)
{
	int n = 0;

	pthread_mutex_lock(&F.mu);
	for (int i = 0; i < F.nlog; i++)
		n += F.log[i].kind == kind;
	pthread_mutex_unlock(&F.mu);
	return n;
}

/* Unlinks wait at the gate while it is closed (counted in F.arrived). */
static void gate_pass(void)
{
	pthread_mutex_lock(&F.mu);
	F.arrived++;
	pthread_cond_broadcast(&F.cv);
	while (F.gate_closed)
		pthread_cond_wait(&F.cv, &F.mu);
	pthread_mutex_unlock(&F.mu);
}

/* The MDS's answer to an UNLINK of name. */
static int fake_status(const char *name)
{
	if (!strcmp(name, "bad"))
		return -EIO;
	if (!strcmp(name, "gone"))
		return -ENOENT;
	if (!strcmp(name, "again"))
		return -ESTALE;
	return 0;
}

static int fake_unlink(void *arg, const cli_ctx *c, uint64_t dir, const char *name, uint64_t ino)
{
	int nice;

	errno = 0;
	nice = getpriority(PRIO_PROCESS, (id_t)gettid());
	pthread_mutex_lock(&F.mu);
	F.flusher_nice = errno ? -100 : nice;
	pthread_mutex_unlock(&F.mu);
	gate_pass();
	note('u', c, dir, name, ino);
	return fake_status(name);
}

/* UNLINK_BATCH: a 'b' event, then each entry as a 'u' of that batch
 * (none when F.batch_rc refuses the request). */
static int fake_batch(void *arg, const cli_ctx *c, uint64_t dir, unsigned n,
		      const char *const *names, const uint64_t *inos, int *status)
{
	int b, rc;

	gate_pass();
	pthread_mutex_lock(&F.mu);
	b = ++F.nbatch;
	rc = F.batch_rc;
	pthread_mutex_unlock(&F.mu);
	note_b('b', c, dir, NULL, n, b);
	if (rc)
		return rc;
	for (unsigned i = 0; i < n; i++) {
		note_b('u', c, dir, names[i], inos[i], b);
		status[i] = fake_status(names[i]);
	}
	return 0;
}

/* Wait until n unlink calls reached the gate. */
static void wait_arrived(int n)
{
	pthread_mutex_lock(&F.mu);
	while (F.arrived < n)
		pthread_cond_wait(&F.cv, &F.mu);
	pthread_mutex_unlock(&F.mu);
}

static int fake_get(void *arg, const cli_ctx *c, uint64_t dir, uint32_t *lease_ms)
{
	note('g', c, dir, NULL, 0);
	if (F.recall_in_get)
		cli_dd_recall(F.recall_in_get, dir);
	if (F.get_rc)
		return F.get_rc;
	*lease_ms = F.lease_ms;
	return 0;
}

static int fake_return(void *arg, const cli_ctx *c, uint64_t dir)
{
	note('r', c, dir, NULL, 0);
	return 0;
}

static int fake_up(void *arg)
{
	return __atomic_load_n(&F.up, __ATOMIC_RELAXED);
}

static void fake_charge(void *arg, const char *job)
{
	__atomic_add_fetch(&F.charges, 1, __ATOMIC_RELAXED);
}

static void fake_done(void *arg, uint64_t dir, const char *name)
{
	__atomic_add_fetch(&F.dones, 1, __ATOMIC_RELAXED);
}

static int fake_list(void *arg, const cli_ctx *c, uint64_t dir, const char *after, uint32_t max,
		     cli_bulkent *out, uint32_t *n, int *eof)
{
	unsigned i = 0, k = 0;

	note('l', c, dir, after, 0);
	if (F.list_rc)
		return F.list_rc;
	if (*after)
		i = (unsigned)atoi(after + 1) + 1;
	for (; i < F.list_n && k < max; i++, k++) {
		memset(&out[k].a, 0, sizeof(out[k].a));
		out[k].a.ino = 1000 + i;
		out[k].a.mode = 0100644;
		snprintf(out[k].name, sizeof(out[k].name), "e%05u", i);
	}
	*n = k;
	*eof = i >= F.list_n;
	return 0;
}

static uint64_t fake_clock(void *arg)
{
	return __atomic_load_n(&F.clock, __ATOMIC_RELAXED);
}

static void advance(uint64_t ms)
{
	__atomic_add_fetch(&F.clock, ms, __ATOMIC_RELAXED);
}

static void gate(int closed)
{
	pthread_mutex_lock(&F.mu);
	F.gate_closed = closed;
	pthread_cond_broadcast(&F.cv);
	pthread_mutex_unlock(&F.mu);
}

/* The MDS's answer to a CREATE of name. */
static int fake_cstatus(const char *name)
{
	return !strcmp(name, "full") ? -ENOSPC : 0;
}

static int fake_slots(void *arg, const cli_ctx *c, uint64_t dir, uint32_t n, uint64_t *inos,
		      pfs_layout *lays, pfs_attr *da)
{
	int rc;

	note('S', c, dir, NULL, n);
	pthread_mutex_lock(&F.mu);
	rc = F.slots_rc;
	for (uint32_t i = 0; !rc && i < n; i++) {
		inos[i] = F.next_slot++;
		memset(&lays[i], 0, sizeof(lays[i]));
		lays[i].stripe_size = 1u << 20;
		lays[i].stripe_count = 2;
		lays[i].stripe[0].object = inos[i];
		lays[i].stripe[1].ost = 1;
		lays[i].stripe[1].object = inos[i];
	}
	memset(da, 0, sizeof(*da));
	da->ino = dir;
	da->mode = F.dir_mode;
	da->gid = F.dir_gid;
	pthread_mutex_unlock(&F.mu);
	return rc;
}

static int fake_cbatch(void *arg, const cli_ctx *c, uint64_t dir, unsigned n,
		       const char *const *names, const uint32_t *modes, const int *closed,
		       const uint64_t *inos, int *status)
{
	int b, rc;

	gate_pass();
	pthread_mutex_lock(&F.mu);
	b = ++F.nbatch;
	rc = F.cbatch_rc;
	pthread_mutex_unlock(&F.mu);
	note_b('B', c, dir, NULL, n, b);
	if (rc)
		return rc;
	for (unsigned i = 0; i < n; i++) {
		note_bc('c', c, dir, names[i], inos[i], b, closed[i]);
		status[i] = fake_cstatus(names[i]);
	}
	return 0;
}

/* The flushers' nice value mk gives (opts.nice). */
static int mk_nice;

static cli_dd *mk(unsigned max_pending)
{
	cli_dd_opts o = { .max_pending = max_pending, .threads = 2, .backoff_max_ms = 4000,
			  .nice = mk_nice,
			  .ops = { .unlink = fake_unlink, .deleg_get = fake_get,
				   .deleg_return = fake_return, .up = fake_up,
				   .charge = fake_charge, .done = fake_done, .clock = fake_clock } };
	cli_dd *q = NULL;

	pthread_mutex_lock(&F.mu);
	F.clock = 100000;
	F.gate_closed = 0;
	F.get_rc = 0;
	F.lease_ms = 10000;
	F.up = 1;
	F.charges = 0;
	F.dones = 0;
	F.nlog = 0;
	F.recall_in_get = NULL;
	F.list_n = 10;
	F.list_rc = 0;
	F.batch_rc = 0;
	F.nbatch = 0;
	F.arrived = 0;
	F.slots_rc = 0;
	F.next_slot = 5000;
	F.cbatch_rc = 0;
	F.dir_mode = 040777;
	F.dir_gid = 100;
	pthread_mutex_unlock(&F.mu);
	assert_int_equal(cli_dd_create(&o, &q), 0);
	return q;
}

static cli_ctx ctx(uint32_t uid)
{
	cli_ctx c;

	memset(&c, 0, sizeof(c));
	c.cred.uid = uid;
	c.cred.gid = 100;
	c.cred.ngroups = 1;
	c.cred.groups[0] = 7;
	snprintf(c.job, sizeof(c.job), "job-%u", uid);
	return c;
}

/* Three unlinks: the third asks; the grant serves the next known name. */
static void grant(cli_dd *q, const cli_ctx *c, uint64_t dir)
{
	int g = count('g');

	assert_int_equal(cli_dd_unlink(q, c, dir, "s1"), 0);
	assert_int_equal(cli_dd_unlink(q, c, dir, "s2"), 0);
	assert_int_equal(count('g'), g);
	assert_int_equal(cli_dd_unlink(q, c, dir, "s3"), 0); /* not known: sync */
	assert_int_equal(count('g'), g + 1);
}

static void test_streak_get_async(void **state)
{
	cli_dd *q = mk(0);
	cli_ctx c = ctx(1000);
	cli_dd_stats st;

	grant(q, &c, 5);
	cli_dd_note_entry(q, 5, "f4", 104, 0100644);
	assert_int_equal(cli_dd_unlink(q, &c, 5, "f4"), 1);
	assert_int_equal(F.charges, 1);
	/* a name is unlinked asynchronously once: the entry is used up */
	cli_dd_wait(q, 5);
	assert_int_equal(cli_dd_unlink(q, &c, 5, "f4"), 0);
	assert_int_equal(count('u'), 1);
	assert_int_equal(F.log[1].kind, 'u');
	assert_int_equal(F.log[1].dir, 5);
	assert_int_equal(F.log[1].ino, 104);
	assert_string_equal(F.log[1].name, "f4");
	assert_int_equal(F.log[1].uid, 1000);
	assert_int_equal(F.dones, 1);
	cli_dd_get_stats(q, &st);
	assert_int_equal(st.async, 1);
	assert_int_equal(st.sync, 4);
	assert_int_equal(st.got, 1);
	assert_int_equal(st.held, 1);
	/* a streak broken by a pause starts again */
	assert_int_equal(cli_dd_unlink(q, &c, 6, "a"), 0);
	advance(1001);
	assert_int_equal(cli_dd_unlink(q, &c, 6, "b"), 0);
	assert_int_equal(cli_dd_unlink(q, &c, 6, "c"), 0);
	assert_int_equal(count('g'), 1);
	/* unmount: the delegations go back */
	cli_dd_destroy(q);
	assert_int_equal(count('r'), 1);
}

static void test_refusal_backoff(void **state)
{
	cli_dd *q = mk(0);
	cli_ctx c = ctx(1000);
	cli_dd_stats st;

	F.get_rc = -EAGAIN;
	grant(q, &c, 5);
	/* 1 s, then 2, then 4, then 4 (the cap) */
	const uint64_t waits[] = { 1000, 2000, 4000, 4000 };

	for (int i = 0; i < 4; i++) {
		for (uint64_t t = 0; t + 500 < waits[i]; t += 500) {
			advance(500);
			assert_int_equal(cli_dd_unlink(q, &c, 5, "x"), 0);
		}
		assert_int_equal(count('g'), 1 + i);
		advance(500);
		assert_int_equal(cli_dd_unlink(q, &c, 5, "x"), 0);
		assert_int_equal(count('g'), 2 + i);
	}
	/* an MDS without delegations: the same, never async */
	F.get_rc = -EOPNOTSUPP;
	for (int i = 0; i < 8; i++) {
		advance(500);
		assert_int_equal(cli_dd_unlink(q, &c, 5, "x"), 0);
	}
	assert_int_equal(count('g'), 6);
	cli_dd_note_entry(q, 5, "y", 9, 0100644);
	assert_int_equal(cli_dd_unlink(q, &c, 5, "y"), 0);
	cli_dd_get_stats(q, &st);
	assert_int_equal(st.refused, 6);
	assert_int_equal(st.async, 0);
	cli_dd_destroy(q);
	assert_int_equal(count('u'), 0);
	assert_int_equal(count('r'), 0);
}

static void test_sync_cases(void **state)
{
	cli_dd *q = mk(0);
	cli_ctx c = ctx(1000), other = ctx(1000);

	other.cred.groups[0] = 8; /* same uid, other groups */
	grant(q, &c, 5);
	cli_dd_note_entry(q, 5, "f", 10, 0100644);
	cli_dd_note_entry(q, 5, "d", 11, 040755);
	cli_dd_note_entry(q, 5, "l", 12, 0120777);
	/* not granted for that credential */
	assert_int_equal(cli_dd_unlink(q, &other, 5, "f"), 0);
	/* a directory; a name never seen; a name this mount changed */
	assert_int_equal(cli_dd_unlink(q, &c, 5, "d"), 0);
	assert_int_equal(cli_dd_unlink(q, &c, 5, "nope"), 0);
	cli_dd_forget_name(q, 5, "l");
	assert_int_equal(cli_dd_unlink(q, &c, 5, "l"), 0);
	/* entries of a directory not delegated are not kept */
	cli_dd_note_entry(q, 6, "g", 13, 0100644);
	assert_int_equal(cli_dd_unlink(q, &c, 6, "g"), 0);
	/* the notify channel down: synchronous */
	F.up = 0;
	assert_int_equal(cli_dd_unlink(q, &c, 5, "f"), 0);
	F.up = 1;
	assert_int_equal(cli_dd_unlink(q, &c, 5, "f"), 1);
	cli_dd_wait_all(q);
	assert_int_equal(count('u'), 1);
	assert_int_equal(count('g'), 1);
	cli_dd_destroy(q);
}

typedef struct unl_arg {
	cli_dd *q;
	cli_ctx c;
	uint64_t dir;
	const char *name;
	int rc, finished;
} unl_arg;

static void *unl_thread(void *p)
{
	unl_arg *a = p;

	a->rc = cli_dd_unlink(a->q, &a->c, a->dir, a->name);
	__atomic_store_n(&a->finished, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void *wait_thread(void *p)
{
	unl_arg *a = p;

	if (a->dir)
		cli_dd_wait(a->q, a->dir);
	else
		cli_dd_wait_all(a->q);
	__atomic_store_n(&a->finished, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void test_cap_waits(void **state)
{
	cli_dd *q = mk(2);
	cli_ctx c = ctx(1000);
	unl_arg a = { .q = q, .c = c, .dir = 5, .name = "f3", .rc = -1 };
	pthread_t t;
	cli_dd_stats st;

	grant(q, &c, 5);
	gate(1);
	for (int i = 0; i < 3; i++) {
		char n[8];

		snprintf(n, sizeof(n), "f%d", i + 1);
		cli_dd_note_entry(q, 5, n, 20 + i, 0100644);
	}
	assert_int_equal(cli_dd_unlink(q, &c, 5, "f1"), 1);
	assert_int_equal(cli_dd_unlink(q, &c, 5, "f2"), 1);
	assert_int_equal(pthread_create(&t, NULL, unl_thread, &a), 0);
	usleep(100000);
	assert_int_equal(__atomic_load_n(&a.finished, __ATOMIC_ACQUIRE), 0);
	gate(0);
	pthread_join(t, NULL);
	assert_int_equal(a.rc, 1); /* waited for room, then queued */
	cli_dd_wait_all(q);
	assert_int_equal(count('u'), 3);
	cli_dd_get_stats(q, &st);
	assert_true(st.waits >= 1);
	assert_int_equal(st.pending, 0);
	cli_dd_destroy(q);
}

static void test_recall_flushes_then_returns(void **state)
{
	cli_dd *q = mk(0);
	cli_ctx c = ctx(1000);
	cli_dd_stats st;

	grant(q, &c, 5);
	cli_dd_note_entry(q, 5, "a", 30, 0100644);
	cli_dd_note_entry(q, 5, "b", 31, 0100644);
	cli_dd_note_entry(q, 5, "c", 32, 0100644);
	gate(1);
	assert_int_equal(cli_dd_unlink(q, &c, 5, "a"), 1);
	assert_int_equal(cli_dd_unlink(q, &c, 5, "b"), 1);
	cli_dd_recall(q, 5); /* does not wait for them */
	assert_int_equal(count('r'), 0);
	/* recalled: no new asynchronous unlink, the names are forgotten */
	assert_int_equal(cli_dd_unlink(q, &c, 5, "c"), 0);
	cli_dd_note_entry(q, 5, "c", 32, 0100644);
	assert_int_equal(cli_dd_unlink(q, &c, 5, "c"), 0);
	gate(0);
	cli_dd_quiesce(q);
	/* the return comes after both unlinks were answered */
	assert_int_equal(count('u'), 2);
	assert_int_equal(count('r'), 1);
	assert_int_equal(F.log[F.nlog - 1].kind, 'r');
	assert_int_equal(F.log[F.nlog - 1].dir, 5);
	assert_int_equal(F.log[F.nlog - 1].uid, 1000);
	cli_dd_get_stats(q, &st);
	assert_int_equal(st.recalled, 1);
	assert_int_equal(st.returned, 1);
	assert_int_equal(st.held, 0);
	/* not asked again for 1 s */
	assert_int_equal(cli_dd_unlink(q, &c, 5, "d"), 0);
	assert_int_equal(count('g'), 1);
	advance(1000);
	assert_int_equal(cli_dd_unlink(q, &c, 5, "d"), 0);
	assert_int_equal(count('g'), 2);
	/* a recall of every directory (the MDS restarted) */
	cli_dd_note_entry(q, 5, "e", 33, 0100644);
	cli_dd_recall(q, 0);
	assert_int_equal(cli_dd_unlink(q, &c, 5, "e"), 0);
	cli_dd_quiesce(q);
	assert_int_equal(count('r'), 2);
	cli_dd_destroy(q);
	assert_int_equal(count('r'), 2);
}

/* The recall overtakes the GET's reply: the grant is given back at once. */
static void test_recall_during_get(void **state)
{
	cli_dd *q = mk(0);
	cli_ctx c = ctx(1000);

	F.recall_in_get = q;
	grant(q, &c, 5);
	cli_dd_note_entry(q, 5, "a", 30, 0100644);
	assert_int_equal(cli_dd_unlink(q, &c, 5, "a"), 0);
	cli_dd_quiesce(q);
	assert_int_equal(count('r'), 1);
	cli_dd_destroy(q);
}

static void test_flush_errors_fsyncdir(void **state)
{
	cli_dd *q = mk(0);
	cli_ctx c = ctx(1000);
	cli_dd_stats st;

	grant(q, &c, 5);
	cli_dd_note_entry(q, 5, "gone", 40, 0100644);
	cli_dd_note_entry(q, 5, "again", 41, 0100644);
	assert_int_equal(cli_dd_unlink(q, &c, 5, "gone"), 1);
	assert_int_equal(cli_dd_unlink(q, &c, 5, "again"), 1);
	/* removed or replaced by someone else: no error */
	assert_int_equal(cli_dd_fsyncdir(q, 5), 0);
	cli_dd_note_entry(q, 5, "bad", 42, 0100644);
	assert_int_equal(cli_dd_unlink(q, &c, 5, "bad"), 1);
	assert_int_equal(cli_dd_fsyncdir(q, 6), 0);
	assert_int_equal(cli_dd_fsyncdir(q, 5), -EIO);
	assert_int_equal(cli_dd_fsyncdir(q, 5), 0); /* reported once */
	cli_dd_get_stats(q, &st);
	assert_int_equal(st.gone, 2);
	assert_int_equal(st.errors, 1);
	cli_dd_destroy(q);
}

static void test_ordering_waits(void **state)
{
	cli_dd *q = mk(0);
	cli_ctx c = ctx(1000);
	unl_arg w_ino = { .q = q, .dir = 50 }, w_dir = { .q = q, .dir = 5 },
		w_all = { .q = q, .dir = 0 };
	pthread_t t1, t2, t3;

	grant(q, &c, 5);
	cli_dd_note_entry(q, 5, "f", 50, 0100644);
	gate(1);
	assert_int_equal(cli_dd_unlink(q, &c, 5, "f"), 1);
	assert_int_equal(cli_dd_pending_name(q, 5, "f"), 1);
	assert_int_equal(cli_dd_pending_name(q, 5, "g"), 0);
	assert_int_equal(cli_dd_pending_name(q, 6, "f"), 0);
	cli_dd_wait(q, 6);  /* unrelated: at once */
	cli_dd_wait(q, 51);
	assert_int_equal(pthread_create(&t1, NULL, wait_thread, &w_ino), 0);
	assert_int_equal(pthread_create(&t2, NULL, wait_thread, &w_dir), 0);
	assert_int_equal(pthread_create(&t3, NULL, wait_thread, &w_all), 0);
	usleep(100000);
	assert_int_equal(__atomic_load_n(&w_ino.finished, __ATOMIC_ACQUIRE), 0);
	assert_int_equal(__atomic_load_n(&w_dir.finished, __ATOMIC_ACQUIRE), 0);
	assert_int_equal(__atomic_load_n(&w_all.finished, __ATOMIC_ACQUIRE), 0);
	gate(0);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	pthread_join(t3, NULL);
	assert_int_equal(cli_dd_pending_name(q, 5, "f"), 0);
	assert_int_equal(count('u'), 1);
	cli_dd_destroy(q);
}

/* Valid until the last renewing request + lease - 1 s on this clock. */
static void test_expiry_and_renew(void **state)
{
	cli_dd *q = mk(0);
	cli_ctx c = ctx(1000);
	cli_dd_stats st;

	grant(q, &c, 5); /* at 100000: valid until 109000 */
	advance(5000);
	cli_dd_note_entry(q, 5, "a", 60, 0100644);
	assert_int_equal(cli_dd_unlink(q, &c, 5, "a"), 1);
	cli_dd_wait(q, 5); /* sent at 105000: until 114000 */
	advance(8999);
	cli_dd_note_entry(q, 5, "b", 61, 0100644);
	assert_int_equal(cli_dd_unlink(q, &c, 5, "b"), 1);
	cli_dd_wait(q, 5); /* sent at 113999: until 122999 */
	advance(9000);
	cli_dd_note_entry(q, 5, "c", 62, 0100644);
	/* ran out: sync (and no streak: no GET) */
	assert_int_equal(cli_dd_unlink(q, &c, 5, "c"), 0);
	cli_dd_get_stats(q, &st);
	assert_int_equal(st.expired, 1);
	assert_int_equal(count('g'), 1);
	cli_dd_destroy(q);
	assert_int_equal(count('r'), 0); /* an expired delegation is not returned */
}

/* ---- negative lookups (complete directories) ---- */

static cli_dd *mkl(unsigned max_cnames, unsigned list_batch)
{
	cli_dd_opts o = { .threads = 2, .max_cnames = max_cnames, .list_batch = list_batch,
			  .ops = { .unlink = fake_unlink, .deleg_get = fake_get,
				   .deleg_return = fake_return, .up = fake_up, .list = fake_list,
				   .clock = fake_clock } };
	cli_dd *q = mk(0); /* resets the fake */
	cli_dd_destroy(q);
	q = NULL;
	pthread_mutex_lock(&F.mu);
	F.nlog = 0;
	pthread_mutex_unlock(&F.mu);
	assert_int_equal(cli_dd_create(&o, &q), 0);
	return q;
}

/* Three creates in dir: the third asks, the grant lists. */
static void touch3(cli_dd *q, const cli_ctx *c, uint64_t dir)
{
	int g = count('g');

	cli_dd_touch(q, c, dir);
	cli_dd_touch(q, c, dir);
	assert_int_equal(count('g'), g);
	cli_dd_touch(q, c, dir);
	assert_int_equal(count('g'), g + 1);
}

static void test_neg_grant_lists(void **state)
{
	cli_dd *q = mkl(0, 4); /* 10 names in pages of 4: 3 LOOKUP_BULKs */
	cli_ctx c = ctx(1000);
	cli_dd_stats st;

	assert_int_equal(cli_dd_negative(q, &c, 9, "x"), 0); /* nothing held */
	touch3(q, &c, 9);
	assert_int_equal(count('l'), 3);
	assert_int_equal(cli_dd_negative(q, &c, 9, "e00000"), 0);
	assert_int_equal(cli_dd_negative(q, &c, 9, "e00009"), 0);
	assert_int_equal(cli_dd_negative(q, &c, 9, "e00010"), 1);
	assert_int_equal(cli_dd_negative(q, &c, 9, "x"), 1);
	assert_int_equal(cli_dd_negative(q, &c, 8, "x"), 0); /* another directory */
	cli_dd_get_stats(q, &st);
	assert_int_equal(st.neg_local, 2);
	assert_int_equal(st.listed, 1);
	assert_int_equal(st.incomplete, 0);
	cli_dd_destroy(q);
}

static void test_neg_own_changes(void **state)
{
	cli_dd *q = mkl(0, 0);
	cli_ctx c = ctx(1000);

	touch3(q, &c, 9);
	/* made here */
	cli_dd_mutated(q, &c, 9, "new", 1, cli_dd_now(q), 0);
	assert_int_equal(cli_dd_negative(q, &c, 9, "new"), 0);
	/* an entry given to the kernel (a LOOKUP, a create's reply) */
	cli_dd_note_entry(q, 9, "k", 77, 0100644);
	assert_int_equal(cli_dd_negative(q, &c, 9, "k"), 0);
	/* removed here: synchronously, and asynchronously */
	cli_dd_mutated(q, &c, 9, "e00001", 0, cli_dd_now(q), 0);
	assert_int_equal(cli_dd_negative(q, &c, 9, "e00001"), 1);
	assert_int_equal(cli_dd_unlink(q, &c, 9, "k"), 1);
	assert_int_equal(cli_dd_negative(q, &c, 9, "k"), 1);
	cli_dd_wait(q, 9);
	/* a failed mutation: no more local answers */
	cli_dd_mutated(q, &c, 9, "y", 1, cli_dd_now(q), -EIO);
	assert_int_equal(cli_dd_negative(q, &c, 9, "y"), 0);
	assert_int_equal(cli_dd_negative(q, &c, 9, "zz"), 0);
	cli_dd_destroy(q);
}

static void test_neg_not_local(void **state)
{
	cli_dd *q = mkl(0, 0);
	cli_ctx c = ctx(1000), o = ctx(1001);
	cli_dd_stats st;

	touch3(q, &c, 9);
	assert_int_equal(cli_dd_negative(q, &o, 9, "x"), 0); /* another cred */
	__atomic_store_n(&F.up, 0, __ATOMIC_RELAXED);
	assert_int_equal(cli_dd_negative(q, &c, 9, "x"), 0); /* channel down */
	__atomic_store_n(&F.up, 1, __ATOMIC_RELAXED);
	assert_int_equal(cli_dd_negative(q, &c, 9, "x"), 1);
	cli_dd_recall(q, 9);
	assert_int_equal(cli_dd_negative(q, &c, 9, "x"), 0);
	cli_dd_wait_all(q);
	/* a later grant lists again; then it runs out on this clock */
	advance(5000);
	touch3(q, &c, 7);
	assert_int_equal(cli_dd_negative(q, &c, 7, "x"), 1);
	cli_dd_mutated(q, &c, 7, "r", 1, cli_dd_now(q), 0); /* renews: +9 s */
	advance(8999);
	assert_int_equal(cli_dd_negative(q, &c, 7, "x"), 1);
	advance(2);
	assert_int_equal(cli_dd_negative(q, &c, 7, "x"), 0);
	cli_dd_get_stats(q, &st);
	assert_int_equal(st.expired, 1);
	/* every directory recalled (the MDS restarted) */
	advance(100000);
	touch3(q, &c, 6);
	assert_int_equal(cli_dd_negative(q, &c, 6, "x"), 1);
	cli_dd_recall(q, 0);
	assert_int_equal(cli_dd_negative(q, &c, 6, "x"), 0);
	cli_dd_destroy(q);
}

static void test_neg_list_limits(void **state)
{
	cli_dd *q = mkl(0, 0);
	cli_ctx c = ctx(1000);
	cli_dd_stats st;

	/* more than 4096 names: not complete, the delegation stays */
	F.list_n = 5000;
	touch3(q, &c, 9);
	assert_int_equal(cli_dd_negative(q, &c, 9, "x"), 0);
	cli_dd_note_entry(q, 9, "a", 60, 0100644);
	assert_int_equal(cli_dd_unlink(q, &c, 9, "a"), 1);
	cli_dd_get_stats(q, &st);
	assert_int_equal(st.incomplete, 1);
	assert_int_equal(st.listed, 0);
	/* exactly 4096: complete */
	F.list_n = 4096;
	touch3(q, &c, 8);
	assert_int_equal(cli_dd_negative(q, &c, 8, "x"), 1);
	assert_int_equal(cli_dd_negative(q, &c, 8, "e04095"), 0);
	/* a listing that fails */
	F.list_rc = -EIO;
	touch3(q, &c, 7);
	assert_int_equal(cli_dd_negative(q, &c, 7, "x"), 0);
	cli_dd_destroy(q);

	/* the table's cap: 12 names in all */
	q = mkl(12, 0);
	touch3(q, &c, 9);
	assert_int_equal(cli_dd_negative(q, &c, 9, "x"), 1);
	cli_dd_mutated(q, &c, 9, "n1", 1, 0, 0);
	cli_dd_note_entry(q, 9, "n2", 61, 0100644);
	assert_int_equal(cli_dd_negative(q, &c, 9, "x"), 1);
	cli_dd_mutated(q, &c, 9, "n3", 1, 0, 0); /* the 13th */
	assert_int_equal(cli_dd_negative(q, &c, 9, "x"), 0);
	assert_int_equal(cli_dd_negative(q, &c, 9, "n3"), 0);
	cli_dd_destroy(q);
}

/* Without ops.list (neg_local=0) creates and negative lookups ask for
 * nothing; an async unlink the MDS refused (not -ENOENT) ends complete. */
static void test_neg_off_and_flush_error(void **state)
{
	cli_dd *q = mk(0);
	cli_ctx c = ctx(1000);

	for (int i = 0; i < 5; i++)
		cli_dd_touch(q, &c, 9);
	assert_int_equal(count('g'), 0);
	cli_dd_destroy(q);

	q = mkl(0, 0);
	touch3(q, &c, 9);
	cli_dd_note_entry(q, 9, "bad", 60, 0100644);
	assert_int_equal(cli_dd_unlink(q, &c, 9, "bad"), 1);
	cli_dd_wait(q, 9); /* -EIO: "bad" may still be there */
	assert_int_equal(cli_dd_negative(q, &c, 9, "bad"), 0);
	assert_int_equal(cli_dd_negative(q, &c, 9, "x"), 0);
	cli_dd_destroy(q);
}

/* ---- batches ---- */

/* threads flushers with ops.unlink_batch (and ops.list when list). */
static cli_dd *mkb(unsigned threads, int list)
{
	cli_dd_opts o = { .threads = threads,
			  .ops = { .unlink = fake_unlink, .unlink_batch = fake_batch,
				   .deleg_get = fake_get, .deleg_return = fake_return, .up = fake_up,
				   .charge = fake_charge, .done = fake_done, .clock = fake_clock } };
	cli_dd *q = mk(0); /* resets the fake */

	cli_dd_destroy(q);
	q = NULL;
	pthread_mutex_lock(&F.mu);
	F.nlog = 0;
	pthread_mutex_unlock(&F.mu);
	if (list)
		o.ops.list = fake_list;
	assert_int_equal(cli_dd_create(&o, &q), 0);
	return q;
}

/* The one flusher of q held at the gate by the asynchronous unlink of
 * `blocker` in dir (known first), while the caller queues more. */
static void hold_flusher(cli_dd *q, const cli_ctx *c, uint64_t dir, const char *blocker)
{
	int arrived;

	pthread_mutex_lock(&F.mu);
	arrived = F.arrived;
	pthread_mutex_unlock(&F.mu);
	gate(1);
	cli_dd_note_entry(q, dir, blocker, 900, 0100644);
	assert_int_equal(cli_dd_unlink(q, c, dir, blocker), 1);
	wait_arrived(arrived + 1);
}

/* Known, then unlinked asynchronously. */
static void async_unlink(cli_dd *q, const cli_ctx *c, uint64_t dir, const char *name,
			 uint64_t ino)
{
	cli_dd_note_entry(q, dir, name, ino, 0100644);
	assert_int_equal(cli_dd_unlink(q, c, dir, name), 1);
}

/* The last 'u' event of name. */
static const ev *unl_ev(const char *name)
{
	const ev *r = NULL;

	for (int i = 0; i < F.nlog; i++)
		if (F.log[i].kind == 'u' && !strcmp(F.log[i].name, name))
			r = &F.log[i];
	assert_non_null(r);
	return r;
}

/* 41 unlinks of one directory queued behind a held flusher: the first
 * alone, then 32 and 8 in two batches, each in queue order. */
static void test_batch_one_dir_in_order(void **state)
{
	cli_dd *q = mkb(1, 0);
	cli_ctx c = ctx(1000);
	cli_dd_stats st;
	char n[16];
	int k = 0;

	grant(q, &c, 5);
	hold_flusher(q, &c, 5, "a");
	for (int i = 0; i < 40; i++) {
		snprintf(n, sizeof(n), "f%02d", i);
		async_unlink(q, &c, 5, n, 200 + i);
	}
	gate(0);
	cli_dd_wait_all(q);
	assert_int_equal(count('u'), 41);
	assert_int_equal(count('b'), 2);
	for (int i = 0; i < F.nlog; i++) {
		const ev *e = &F.log[i];

		if (e->kind == 'b') {
			assert_int_equal(e->ino, e->batch == 1 ? 32 : 8);
			assert_int_equal(e->dir, 5);
			assert_int_equal(e->uid, 1000);
		}
		if (e->kind != 'u')
			continue;
		if (k == 0) {
			assert_string_equal(e->name, "a");
			assert_int_equal(e->batch, 0);
		} else {
			snprintf(n, sizeof(n), "f%02d", k - 1);
			assert_string_equal(e->name, n);
			assert_int_equal(e->ino, 200 + k - 1);
			assert_int_equal(e->dir, 5);
			assert_int_equal(e->uid, 1000);
			assert_int_equal(e->batch, k <= 32 ? 1 : 2);
		}
		k++;
	}
	cli_dd_get_stats(q, &st);
	assert_int_equal(st.async, 41);
	assert_int_equal(st.batches, 2);
	assert_int_equal(st.batched, 40);
	assert_int_equal(st.batch_max, 32);
	assert_int_equal(st.batch_off, 0);
	assert_int_equal(st.pending, 0);
	/* charged once each when answered, none when sent; each answered */
	assert_int_equal(F.charges, 41);
	assert_int_equal(F.dones, 41);
	cli_dd_destroy(q);
}

/* Two directories of one cred, a third granted to another cred, and two
 * jobs of one cred in one directory, interleaved: four batches, none
 * mixed. */
static void test_batch_never_mixes(void **state)
{
	cli_dd *q = mkb(1, 0);
	cli_ctx c1 = ctx(1000), c2 = ctx(1001), c1j = ctx(1000);
	cli_dd_stats st;

	snprintf(c1j.job, sizeof(c1j.job), "other-job");
	grant(q, &c1, 5);
	grant(q, &c2, 6);
	grant(q, &c1, 7);
	hold_flusher(q, &c1, 5, "a");
	async_unlink(q, &c1, 5, "x1", 301);
	async_unlink(q, &c1, 7, "z1", 501);
	async_unlink(q, &c2, 6, "y1", 401);
	async_unlink(q, &c1j, 5, "x2", 302);
	async_unlink(q, &c1, 5, "x3", 303);
	async_unlink(q, &c2, 6, "y2", 402);
	async_unlink(q, &c1, 7, "z2", 502);
	async_unlink(q, &c1j, 5, "x4", 304);
	gate(0);
	cli_dd_wait_all(q);
	assert_int_equal(count('b'), 4);
	assert_int_equal(unl_ev("x1")->batch, unl_ev("x3")->batch);
	assert_int_equal(unl_ev("z1")->batch, unl_ev("z2")->batch);
	assert_int_equal(unl_ev("y1")->batch, unl_ev("y2")->batch);
	assert_int_equal(unl_ev("x2")->batch, unl_ev("x4")->batch);
	{
		const char *first[] = { "x1", "z1", "y1", "x2" };

		for (int i = 0; i < 4; i++) {
			assert_int_not_equal(unl_ev(first[i])->batch, 0);
			for (int k = 0; k < i; k++)
				assert_int_not_equal(unl_ev(first[i])->batch,
						     unl_ev(first[k])->batch);
		}
	}
	assert_int_equal(unl_ev("y1")->uid, 1001);
	assert_int_equal(unl_ev("y1")->dir, 6);
	assert_int_equal(unl_ev("z2")->dir, 7);
	/* in queue order within each */
	assert_true(unl_ev("x1") < unl_ev("x3"));
	assert_true(unl_ev("x2") < unl_ev("x4"));
	cli_dd_get_stats(q, &st);
	assert_int_equal(st.batches, 4);
	assert_int_equal(st.batched, 8);
	assert_int_equal(st.batch_max, 2);
	cli_dd_destroy(q);
}

/* Each entry's status as a single reply: -ENOENT gone (the set kept),
 * -ESTALE gone (the set dropped), -EIO an error for fsyncdir; entries
 * the MDS answered renew the delegation from the batch's send time. */
static void test_batch_statuses(void **state)
{
	cli_dd *q = mkb(1, 1);
	cli_ctx c = ctx(1000);
	cli_dd_stats st;

	grant(q, &c, 5); /* at 100000: valid until 109000; listed complete */
	assert_int_equal(cli_dd_negative(q, &c, 5, "x"), 1);
	advance(5000);
	hold_flusher(q, &c, 5, "b1"); /* sent at 105000: until 114000 */
	advance(3000);
	async_unlink(q, &c, 5, "ok1", 501);
	async_unlink(q, &c, 5, "gone", 502);
	gate(0);
	cli_dd_wait_all(q); /* the batch sent at 108000: until 117000 */
	assert_int_equal(unl_ev("gone")->batch, 1);
	cli_dd_get_stats(q, &st);
	assert_int_equal(st.gone, 1);
	assert_int_equal(st.errors, 0);
	assert_int_equal(cli_dd_fsyncdir(q, 5), 0);
	assert_int_equal(cli_dd_negative(q, &c, 5, "x"), 1);

	advance(8000); /* 116000: valid only by the batch's renewal */
	hold_flusher(q, &c, 5, "b2");
	async_unlink(q, &c, 5, "ok2", 503);
	async_unlink(q, &c, 5, "again", 504);
	gate(0);
	cli_dd_wait_all(q);
	assert_int_equal(unl_ev("again")->batch, 2);
	cli_dd_get_stats(q, &st);
	assert_int_equal(st.gone, 2);
	assert_int_equal(st.errors, 0);
	assert_int_equal(st.incomplete, 1);
	assert_int_equal(cli_dd_fsyncdir(q, 5), 0);
	assert_int_equal(cli_dd_negative(q, &c, 5, "x"), 0);

	hold_flusher(q, &c, 5, "b3");
	async_unlink(q, &c, 5, "ok3", 505);
	async_unlink(q, &c, 5, "bad", 506);
	gate(0);
	cli_dd_wait_all(q);
	assert_int_equal(unl_ev("bad")->batch, 3);
	cli_dd_get_stats(q, &st);
	assert_int_equal(st.errors, 1);
	assert_int_equal(st.gone, 2);
	assert_int_equal(st.batches, 3);
	assert_int_equal(cli_dd_fsyncdir(q, 5), -EIO);
	assert_int_equal(cli_dd_fsyncdir(q, 5), 0);
	assert_int_equal(F.dones, 9);
	cli_dd_destroy(q);
}

/* An MDS without the opcode (-EACCES: unknown to its optab; -EOPNOTSUPP):
 * the refused jobs go singly, in order, and later ones too. */
static void test_batch_fallback(void **state)
{
	const int refusals[] = { -EACCES, -EOPNOTSUPP };

	for (int r = 0; r < 2; r++) {
		cli_dd *q = mkb(1, 0);
		cli_ctx c = ctx(1000);
		cli_dd_stats st;
		const char *order[] = { "a", "b", "c", "d", "e", "f", "g" };
		int k = 0;

		F.batch_rc = refusals[r];
		grant(q, &c, 5);
		hold_flusher(q, &c, 5, "a");
		async_unlink(q, &c, 5, "b", 11);
		async_unlink(q, &c, 5, "c", 12);
		async_unlink(q, &c, 5, "d", 13);
		gate(0);
		cli_dd_wait_all(q);
		assert_int_equal(count('b'), 1);
		assert_int_equal(count('u'), 4);
		cli_dd_get_stats(q, &st);
		assert_int_equal(st.batch_off, 1);
		assert_int_equal(st.batches, 0);
		assert_int_equal(st.errors, 0);
		assert_int_equal(st.gone, 0);
		assert_int_equal(cli_dd_fsyncdir(q, 5), 0);
		/* not tried again, even by an MDS that would take it now */
		F.batch_rc = 0;
		hold_flusher(q, &c, 5, "e");
		async_unlink(q, &c, 5, "f", 14);
		async_unlink(q, &c, 5, "g", 15);
		gate(0);
		cli_dd_wait_all(q);
		assert_int_equal(count('b'), 1);
		assert_int_equal(count('u'), 7);
		for (int i = 0; i < F.nlog; i++)
			if (F.log[i].kind == 'u') {
				assert_string_equal(F.log[i].name, order[k]);
				assert_int_equal(F.log[i].batch, 0);
				k++;
			}
		assert_int_equal(F.dones, 7);
		cli_dd_destroy(q);
	}
}

/* A request error (transport, a malformed reply) is each entry's: counted,
 * kept for fsyncdir, the set dropped; batches go on. */
static void test_batch_request_error(void **state)
{
	cli_dd *q = mkb(1, 1);
	cli_ctx c = ctx(1000);
	cli_dd_stats st;

	grant(q, &c, 5);
	assert_int_equal(cli_dd_negative(q, &c, 5, "x"), 1);
	F.batch_rc = -ETIMEDOUT;
	hold_flusher(q, &c, 5, "a");
	async_unlink(q, &c, 5, "b", 11);
	async_unlink(q, &c, 5, "c", 12);
	async_unlink(q, &c, 5, "gone", 13);
	gate(0);
	cli_dd_wait_all(q);
	cli_dd_get_stats(q, &st);
	assert_int_equal(st.errors, 3);
	assert_int_equal(st.gone, 0);
	assert_int_equal(st.batches, 1);
	assert_int_equal(st.batch_off, 0);
	assert_int_equal(st.pending, 0);
	assert_int_equal(cli_dd_fsyncdir(q, 5), -ETIMEDOUT);
	assert_int_equal(cli_dd_negative(q, &c, 5, "x"), 0);
	assert_int_equal(F.dones, 4);
	F.batch_rc = 0;
	hold_flusher(q, &c, 5, "e");
	async_unlink(q, &c, 5, "f", 14);
	async_unlink(q, &c, 5, "g", 15);
	gate(0);
	cli_dd_wait_all(q);
	assert_int_equal(count('b'), 2);
	assert_int_equal(unl_ev("g")->batch, 2);
	cli_dd_get_stats(q, &st);
	assert_int_equal(st.errors, 3);
	assert_int_equal(st.batches, 2);
	cli_dd_destroy(q);
}

/* ---- asynchronous create ---- */

/* A queue with asynchronous creates (listing on), held hold_ms. */
static cli_dd *mkc(unsigned hold_ms)
{
	cli_dd_opts o = { .threads = 2, .hold_ms = hold_ms,
			  .ops = { .unlink = fake_unlink, .unlink_batch = fake_batch,
				   .deleg_get = fake_get, .deleg_return = fake_return,
				   .up = fake_up, .list = fake_list, .create_slots = fake_slots,
				   .create_batch = fake_cbatch, .charge_create = fake_charge, .clock = fake_clock } };
	cli_dd *q = mk(0); /* resets the fake */

	cli_dd_destroy(q);
	q = NULL;
	pthread_mutex_lock(&F.mu);
	F.nlog = 0;
	pthread_mutex_unlock(&F.mu);
	assert_int_equal(cli_dd_create(&o, &q), 0);
	return q;
}

/* The index of the first event kind/name in the log, -1 if none. */
static int find_ev(char kind, const char *name)
{
	int r = -1;

	pthread_mutex_lock(&F.mu);
	for (int i = 0; i < F.nlog && r < 0; i++)
		if (F.log[i].kind == kind && !strcmp(F.log[i].name, name))
			r = i;
	pthread_mutex_unlock(&F.mu);
	return r;
}

/* A copy of that event (the first of kind and name; it must be there). */
static ev ev_of(char kind, const char *name)
{
	int i = find_ev(kind, name);
	ev e;

	assert_true(i >= 0);
	pthread_mutex_lock(&F.mu);
	e = F.log[i];
	pthread_mutex_unlock(&F.mu);
	return e;
}

static void test_acreate_answers(void **state)
{
	cli_dd *q = mkc(0);
	cli_ctx c = ctx(1000), o = ctx(1001);
	pfs_attr a;
	pfs_layout lay;
	cli_dd_stats st;

	/* nothing held: synchronous */
	assert_int_equal(cli_dd_create_file(q, &c, 9, "n1", 0100644, &a, &lay), 0);
	touch3(q, &c, 9);
	/* the directory is set-gid with group 55: the file gets group 55,
	 * and c (not in it) loses a set-gid bit it asked for */
	pthread_mutex_lock(&F.mu);
	F.dir_mode = 042775;
	F.dir_gid = 55;
	pthread_mutex_unlock(&F.mu);
	assert_int_equal(cli_dd_create_file(q, &c, 9, "n1", 0102755, &a, &lay), 1);
	assert_int_equal(count('S'), 1);
	assert_int_equal(a.ino, 5000);
	assert_int_equal(a.mode, 0100755);
	assert_int_equal(a.uid, 1000);
	assert_int_equal(a.gid, 55);
	assert_int_equal(a.nlink, 1);
	assert_int_equal(a.size, 0);
	assert_true(a.mtime_ns > 0);
	assert_int_equal(lay.stripe_count, 2);
	assert_int_equal(lay.stripe[1].object, 5000);
	assert_int_equal(F.charges, 1);
	/* the next one takes the next slot, no new fetch */
	assert_int_equal(cli_dd_create_file(q, &c, 9, "n2", 0100600, &a, &lay), 1);
	assert_int_equal(a.ino, 5001);
	assert_int_equal(count('S'), 1);
	/* a name the directory has (listed, or made here), another
	 * credential, another directory: synchronous */
	assert_int_equal(cli_dd_create_file(q, &c, 9, "e00003", 0100644, &a, &lay), 0);
	assert_int_equal(cli_dd_create_file(q, &c, 9, "n1", 0100644, &a, &lay), 0);
	assert_int_equal(cli_dd_create_file(q, &o, 9, "n3", 0100644, &a, &lay), 0);
	assert_int_equal(cli_dd_create_file(q, &c, 8, "n3", 0100644, &a, &lay), 0);
	/* made here: the name is no negative any more, and a later unlink
	 * knows its inode */
	assert_int_equal(cli_dd_negative(q, &c, 9, "n1"), 0);
	cli_dd_wait(q, 9);
	assert_true(find_ev('c', "n1") >= 0);
	assert_true(find_ev('c', "n2") > find_ev('c', "n1"));
	assert_int_equal(cli_dd_unlink(q, &c, 9, "n2"), 1);
	cli_dd_wait(q, 9);
	assert_int_equal(ev_of('u', "n2").ino, 5001);
	cli_dd_get_stats(q, &st);
	assert_int_equal(st.acreate, 2);
	assert_int_equal(st.slots_got, 1);
	cli_dd_destroy(q);
}

static void test_acreate_hold_batch_closed(void **state)
{
	cli_dd *q = mkc(60000); /* held for a minute of the fake clock */
	cli_ctx c = ctx(1000);
	pfs_attr a1, a2, a3;
	pfs_layout lay;
	cli_dd_stats st;

	touch3(q, &c, 9);
	assert_int_equal(cli_dd_create_file(q, &c, 9, "h1", 0100644, &a1, &lay), 1);
	assert_int_equal(cli_dd_create_file(q, &c, 9, "h2", 0100644, &a2, &lay), 1);
	assert_int_equal(cli_dd_create_file(q, &c, 9, "h3", 0100644, &a3, &lay), 1);
	usleep(50000);
	assert_int_equal(count('c'), 0); /* held */
	assert_int_equal(cli_dd_created_close(q, a1.ino), 1);
	assert_int_equal(cli_dd_created_close(q, a3.ino), 1);
	assert_int_equal(cli_dd_created_close(q, 4242), 0); /* no such create */
	/* somebody waits: all three go now, in one batch, in order */
	cli_dd_wait(q, a2.ino);
	assert_int_equal(count('B'), 1);
	assert_int_equal(count('c'), 3);
	assert_int_equal(ev_of('c', "h1").closed, 1);
	assert_int_equal(ev_of('c', "h2").closed, 0);
	assert_int_equal(ev_of('c', "h3").closed, 1);
	assert_true(find_ev('c', "h1") < find_ev('c', "h2"));
	assert_true(find_ev('c', "h2") < find_ev('c', "h3"));
	/* sent already: its close is the MDS's to hear */
	assert_int_equal(cli_dd_created_close(q, a2.ino), 0);
	/* the hold ends on the clock too */
	assert_int_equal(cli_dd_create_file(q, &c, 9, "h4", 0100644, &a1, &lay), 1);
	advance(60000);
	cli_dd_recall(q, 0); /* wakes the flushers; the create goes before the RETURN */
	cli_dd_quiesce(q);
	assert_true(find_ev('c', "h4") >= 0);
	assert_true(find_ev('r', "") > find_ev('c', "h4"));
	cli_dd_get_stats(q, &st);
	assert_int_equal(st.acreate_closed, 2);
	assert_int_equal(st.cbatches, 1);
	assert_int_equal(st.cbatched, 3);
	cli_dd_destroy(q);
}

static void test_acreate_same_name_order(void **state)
{
	cli_dd *q = mkc(0);
	cli_ctx c = ctx(1000);
	pfs_attr a;
	pfs_layout lay;

	touch3(q, &c, 9);
	cli_dd_note_entry(q, 9, "e00002", 1002, 0100644);
	gate(1);
	assert_int_equal(cli_dd_unlink(q, &c, 9, "e00002"), 1);
	wait_arrived(1);
	/* removed here: the name is free, the create is answered, but its
	 * CREATE waits for the UNLINK in flight */
	assert_int_equal(cli_dd_create_file(q, &c, 9, "e00002", 0100644, &a, &lay), 1);
	usleep(50000);
	pthread_mutex_lock(&F.mu);
	assert_int_equal(F.arrived, 1);
	pthread_mutex_unlock(&F.mu);
	gate(0);
	cli_dd_wait(q, 9);
	assert_true(find_ev('u', "e00002") >= 0);
	assert_true(find_ev('c', "e00002") > find_ev('u', "e00002"));
	/* and the other way round: an unlink of a name waits for its create */
	gate(1);
	assert_int_equal(cli_dd_create_file(q, &c, 9, "k2", 0100644, &a, &lay), 1);
	wait_arrived(3); /* the UNLINK, the first CREATE, this one */
	cli_dd_note_entry(q, 9, "k2", a.ino, a.mode);
	assert_int_equal(cli_dd_unlink(q, &c, 9, "k2"), 1);
	usleep(50000);
	pthread_mutex_lock(&F.mu);
	assert_int_equal(F.arrived, 3);
	pthread_mutex_unlock(&F.mu);
	gate(0);
	cli_dd_wait(q, 9);
	assert_true(find_ev('u', "k2") > find_ev('c', "k2"));
	cli_dd_destroy(q);
}

/* An unlink the queue will not take (the MDS restarted: the delegation
 * that queued the name's create is of no use) goes synchronously, but only
 * after that create: the MDS must know the name before its UNLINK. */
static void test_acreate_sync_unlink_waits(void **state)
{
	cli_dd *q = mkc(60000);
	cli_ctx c = ctx(1000);
	pfs_attr a;
	pfs_layout lay;

	touch3(q, &c, 9);
	assert_int_equal(cli_dd_create_file(q, &c, 9, "t1", 0100644, &a, &lay), 1);
	cli_dd_note_entry(q, 9, "t1", a.ino, a.mode);
	__atomic_store_n(&F.up, 0, __ATOMIC_RELAXED);
	assert_int_equal(cli_dd_unlink(q, &c, 9, "t1"), 0);
	__atomic_store_n(&F.up, 1, __ATOMIC_RELAXED);
	assert_true(find_ev('c', "t1") >= 0);
	assert_int_equal(count('u'), 0); /* the UNLINK is the caller's */
	cli_dd_destroy(q);
}

static void test_acreate_lookup_waits(void **state)
{
	cli_dd *q = mkc(60000);
	cli_ctx c = ctx(1000);
	pfs_attr a;
	pfs_layout lay;

	touch3(q, &c, 9);
	assert_int_equal(cli_dd_create_file(q, &c, 9, "w1", 0100644, &a, &lay), 1);
	/* a LOOKUP of it must find it on the MDS: the create goes first */
	assert_int_equal(cli_dd_pending_name(q, 9, "w1"), 0);
	assert_true(find_ev('c', "w1") >= 0);
	cli_dd_destroy(q);
}

static void test_acreate_errors(void **state)
{
	cli_dd *q = mkc(0);
	cli_ctx c = ctx(1000);
	pfs_attr a;
	pfs_layout lay;
	cli_dd_stats st;

	touch3(q, &c, 9);
	assert_int_equal(cli_dd_create_file(q, &c, 9, "full", 0100644, &a, &lay), 1);
	assert_int_equal(cli_dd_fsyncdir(q, 9), -ENOSPC);
	assert_int_equal(cli_dd_fsyncdir(q, 9), 0); /* reported once */
	/* the directory's set is no longer trusted */
	assert_int_equal(cli_dd_negative(q, &c, 9, "zz"), 0);
	assert_int_equal(cli_dd_create_file(q, &c, 9, "zz", 0100644, &a, &lay), 0);
	cli_dd_get_stats(q, &st);
	assert_int_equal(st.create_errors, 1);
	cli_dd_destroy(q);

	/* refused slots: synchronous, and no new CREATE_SLOTS before the
	 * back-off */
	q = mkc(0);
	touch3(q, &c, 9);
	pthread_mutex_lock(&F.mu);
	F.slots_rc = -EAGAIN;
	pthread_mutex_unlock(&F.mu);
	assert_int_equal(cli_dd_create_file(q, &c, 9, "s1", 0100644, &a, &lay), 0);
	assert_int_equal(cli_dd_create_file(q, &c, 9, "s2", 0100644, &a, &lay), 0);
	assert_int_equal(count('S'), 1);
	pthread_mutex_lock(&F.mu);
	F.slots_rc = 0;
	pthread_mutex_unlock(&F.mu);
	advance(1000);
	assert_int_equal(cli_dd_create_file(q, &c, 9, "s3", 0100644, &a, &lay), 1);
	assert_int_equal(count('S'), 2);
	cli_dd_get_stats(q, &st);
	assert_int_equal(st.slots_refused, 1);
	cli_dd_destroy(q);
}

static void test_acreate_recall_and_refused(void **state)
{
	cli_dd *q = mkc(60000);
	cli_ctx c = ctx(1000);
	pfs_attr a;
	pfs_layout lay;
	cli_dd_stats st;

	touch3(q, &c, 9);
	assert_int_equal(cli_dd_create_file(q, &c, 9, "r1", 0100644, &a, &lay), 1);
	/* a recall: the held create goes, then the RETURN; the slots go */
	cli_dd_recall(q, 9);
	cli_dd_wait(q, 9);
	for (int i = 0; i < 200 && count('r') == 0; i++)
		usleep(5000);
	assert_true(find_ev('c', "r1") >= 0);
	assert_true(find_ev('r', "") > find_ev('c', "r1"));
	assert_int_equal(cli_dd_create_file(q, &c, 9, "r2", 0100644, &a, &lay), 0);
	/* granted again: new slots are fetched (the old ones are gone) */
	advance(2000);
	touch3(q, &c, 9);
	assert_int_equal(cli_dd_create_file(q, &c, 9, "r3", 0100644, &a, &lay), 1);
	assert_int_equal(count('S'), 2);
	assert_int_equal(a.ino, 5000 + PFS_CREATE_SLOTS_MAX);
	cli_dd_destroy(q);

	/* a CREATE_BATCH refused whole: each of its creates failed, counted
	 * and kept for fsyncdir; none goes again */
	q = mkc(60000);
	pthread_mutex_lock(&F.mu);
	F.cbatch_rc = -EIO;
	pthread_mutex_unlock(&F.mu);
	touch3(q, &c, 9);
	assert_int_equal(cli_dd_create_file(q, &c, 9, "f1", 0100644, &a, &lay), 1);
	assert_int_equal(cli_dd_create_file(q, &c, 9, "f2", 0100644, &a, &lay), 1);
	cli_dd_wait(q, 9);
	assert_int_equal(count('B'), 1);
	assert_int_equal(count('c'), 0);
	assert_int_equal(cli_dd_fsyncdir(q, 9), -EIO);
	cli_dd_get_stats(q, &st);
	assert_int_equal(st.create_errors, 2);
	assert_int_equal(st.acreate, 2);
	cli_dd_destroy(q);
}

/* Held unlinks (hold_ms): none goes before the hold ends or somebody
 * waits; then one UNLINK_BATCH takes them all. */
static void test_unlink_held(void **state)
{
	cli_dd *q = mkc(60000);
	cli_ctx c = ctx(1000);

	touch3(q, &c, 9);
	for (int i = 0; i < 5; i++) {
		char n[8];

		snprintf(n, sizeof(n), "k%d", i);
		cli_dd_note_entry(q, 9, n, 700 + (uint64_t)i, 0100644);
		assert_int_equal(cli_dd_unlink(q, &c, 9, n), 1);
	}
	usleep(50000);
	assert_int_equal(count('u'), 0); /* held */
	cli_dd_wait(q, 9);
	assert_int_equal(count('b'), 1);
	assert_int_equal(count('u'), 5);
	cli_dd_destroy(q);
}

/* The nice value the thread of one asynchronous unlink ran at, with the
 * flushers' opts.nice set to nice. */
static int flusher_nice_with(int nice)
{
	cli_ctx c = ctx(1000);
	cli_dd *q;
	int seen;

	mk_nice = nice;
	q = mk(0);
	mk_nice = 0;
	grant(q, &c, 5);
	async_unlink(q, &c, 5, "f1", 101);
	cli_dd_wait(q, 5);
	pthread_mutex_lock(&F.mu);
	seen = F.flusher_nice;
	pthread_mutex_unlock(&F.mu);
	cli_dd_destroy(q);
	return seen;
}

/* opts.nice: the flushers (only they) run at that nice value, behind the
 * application whose unlinks they send; 0 runs them as the mount. */
static void test_flusher_nice(void **state)
{
	int mine;

	errno = 0;
	mine = getpriority(PRIO_PROCESS, (id_t)gettid());
	assert_int_equal(errno, 0);
	/* raising one's nice needs no privilege; lowering it back does */
	assert_int_equal(flusher_nice_with(7), mine > 7 ? mine : 7);
	assert_int_equal(getpriority(PRIO_PROCESS, (id_t)gettid()), mine);
	assert_int_equal(flusher_nice_with(0), mine);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flusher_nice),
		cmocka_unit_test(test_streak_get_async),
		cmocka_unit_test(test_refusal_backoff),
		cmocka_unit_test(test_sync_cases),
		cmocka_unit_test(test_cap_waits),
		cmocka_unit_test(test_recall_flushes_then_returns),
		cmocka_unit_test(test_recall_during_get),
		cmocka_unit_test(test_flush_errors_fsyncdir),
		cmocka_unit_test(test_ordering_waits),
		cmocka_unit_test(test_expiry_and_renew),
		cmocka_unit_test(test_neg_grant_lists),
		cmocka_unit_test(test_neg_own_changes),
		cmocka_unit_test(test_neg_not_local),
		cmocka_unit_test(test_neg_list_limits),
		cmocka_unit_test(test_neg_off_and_flush_error),
		cmocka_unit_test(test_batch_one_dir_in_order),
		cmocka_unit_test(test_batch_never_mixes),
		cmocka_unit_test(test_batch_statuses),
		cmocka_unit_test(test_batch_fallback),
		cmocka_unit_test(test_batch_request_error),
		cmocka_unit_test(test_acreate_answers),
		cmocka_unit_test(test_acreate_hold_batch_closed),
		cmocka_unit_test(test_acreate_same_name_order),
		cmocka_unit_test(test_acreate_sync_unlink_waits),
		cmocka_unit_test(test_acreate_lookup_waits),
		cmocka_unit_test(test_acreate_errors),
		cmocka_unit_test(test_acreate_recall_and_refused),
		cmocka_unit_test(test_unlink_held),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
