/* test_cli_unlinkq.c — asynchronous unlink under directory delegations
 * (client/unlinkq.h) with fake MDS calls and an injected clock: a streak
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
 * for nothing. */
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
#include <unistd.h>

#include "client/unlinkq.h"

/* ---- the fake MDS ---- */

#define LOG_MAX 256

typedef struct ev {
	char kind;          /* 'u' unlink, 'g' get, 'r' return */
	uint64_t dir, ino;
	uint32_t uid;
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
	cli_uq *recall_in_get; /* the GET recalls its dir before answering */
	unsigned list_n;    /* the fake directory: names e00000.. */
	int list_rc;
} F = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

static void note(char kind, const cli_ctx *c, uint64_t dir, const char *name, uint64_t ino)
{
	pthread_mutex_lock(&F.mu);
	if (F.nlog < LOG_MAX) {
		ev *e = &F.log[F.nlog++];

		e->kind = kind;
		e->dir = dir;
		e->ino = ino;
		e->uid = c->cred.uid;
		snprintf(e->name, sizeof(e->name), "%s", name ? name : "");
	}
	pthread_cond_broadcast(&F.cv);
	pthread_mutex_unlock(&F.mu);
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

static int fake_unlink(void *arg, const cli_ctx *c, uint64_t dir, const char *name, uint64_t ino)
{
	pthread_mutex_lock(&F.mu);
	while (F.gate_closed)
		pthread_cond_wait(&F.cv, &F.mu);
	pthread_mutex_unlock(&F.mu);
	note('u', c, dir, name, ino);
	if (!strcmp(name, "bad"))
		return -EIO;
	if (!strcmp(name, "gone"))
		return -ENOENT;
	if (!strcmp(name, "again"))
		return -ESTALE;
	return 0;
}

static int fake_get(void *arg, const cli_ctx *c, uint64_t dir, uint32_t *lease_ms)
{
	note('g', c, dir, NULL, 0);
	if (F.recall_in_get)
		cli_uq_recall(F.recall_in_get, dir);
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

static cli_uq *mk(unsigned max_pending)
{
	cli_uq_opts o = { .max_pending = max_pending, .threads = 2, .backoff_max_ms = 4000,
			  .ops = { .unlink = fake_unlink, .deleg_get = fake_get,
				   .deleg_return = fake_return, .up = fake_up,
				   .charge = fake_charge, .done = fake_done, .clock = fake_clock } };
	cli_uq *q = NULL;

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
	pthread_mutex_unlock(&F.mu);
	assert_int_equal(cli_uq_create(&o, &q), 0);
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
static void grant(cli_uq *q, const cli_ctx *c, uint64_t dir)
{
	assert_int_equal(cli_uq_unlink(q, c, dir, "s1"), 0);
	assert_int_equal(cli_uq_unlink(q, c, dir, "s2"), 0);
	assert_int_equal(count('g'), 0);
	assert_int_equal(cli_uq_unlink(q, c, dir, "s3"), 0); /* not known: sync */
	assert_int_equal(count('g'), 1);
}

static void test_streak_get_async(void **state)
{
	cli_uq *q = mk(0);
	cli_ctx c = ctx(1000);
	cli_uq_stats st;

	grant(q, &c, 5);
	cli_uq_note_entry(q, 5, "f4", 104, 0100644);
	assert_int_equal(cli_uq_unlink(q, &c, 5, "f4"), 1);
	assert_int_equal(F.charges, 1);
	/* a name is unlinked asynchronously once: the entry is used up */
	cli_uq_wait(q, 5);
	assert_int_equal(cli_uq_unlink(q, &c, 5, "f4"), 0);
	assert_int_equal(count('u'), 1);
	assert_int_equal(F.log[1].kind, 'u');
	assert_int_equal(F.log[1].dir, 5);
	assert_int_equal(F.log[1].ino, 104);
	assert_string_equal(F.log[1].name, "f4");
	assert_int_equal(F.log[1].uid, 1000);
	assert_int_equal(F.dones, 1);
	cli_uq_get_stats(q, &st);
	assert_int_equal(st.async, 1);
	assert_int_equal(st.sync, 4);
	assert_int_equal(st.got, 1);
	assert_int_equal(st.held, 1);
	/* a streak broken by a pause starts again */
	assert_int_equal(cli_uq_unlink(q, &c, 6, "a"), 0);
	advance(1001);
	assert_int_equal(cli_uq_unlink(q, &c, 6, "b"), 0);
	assert_int_equal(cli_uq_unlink(q, &c, 6, "c"), 0);
	assert_int_equal(count('g'), 1);
	/* unmount: the delegations go back */
	cli_uq_destroy(q);
	assert_int_equal(count('r'), 1);
}

static void test_refusal_backoff(void **state)
{
	cli_uq *q = mk(0);
	cli_ctx c = ctx(1000);
	cli_uq_stats st;

	F.get_rc = -EAGAIN;
	grant(q, &c, 5);
	/* 1 s, then 2, then 4, then 4 (the cap) */
	const uint64_t waits[] = { 1000, 2000, 4000, 4000 };

	for (int i = 0; i < 4; i++) {
		for (uint64_t t = 0; t + 500 < waits[i]; t += 500) {
			advance(500);
			assert_int_equal(cli_uq_unlink(q, &c, 5, "x"), 0);
		}
		assert_int_equal(count('g'), 1 + i);
		advance(500);
		assert_int_equal(cli_uq_unlink(q, &c, 5, "x"), 0);
		assert_int_equal(count('g'), 2 + i);
	}
	/* an MDS without delegations: the same, never async */
	F.get_rc = -EOPNOTSUPP;
	for (int i = 0; i < 8; i++) {
		advance(500);
		assert_int_equal(cli_uq_unlink(q, &c, 5, "x"), 0);
	}
	assert_int_equal(count('g'), 6);
	cli_uq_note_entry(q, 5, "y", 9, 0100644);
	assert_int_equal(cli_uq_unlink(q, &c, 5, "y"), 0);
	cli_uq_get_stats(q, &st);
	assert_int_equal(st.refused, 6);
	assert_int_equal(st.async, 0);
	cli_uq_destroy(q);
	assert_int_equal(count('u'), 0);
	assert_int_equal(count('r'), 0);
}

static void test_sync_cases(void **state)
{
	cli_uq *q = mk(0);
	cli_ctx c = ctx(1000), other = ctx(1000);

	other.cred.groups[0] = 8; /* same uid, other groups */
	grant(q, &c, 5);
	cli_uq_note_entry(q, 5, "f", 10, 0100644);
	cli_uq_note_entry(q, 5, "d", 11, 040755);
	cli_uq_note_entry(q, 5, "l", 12, 0120777);
	/* not granted for that credential */
	assert_int_equal(cli_uq_unlink(q, &other, 5, "f"), 0);
	/* a directory; a name never seen; a name this mount changed */
	assert_int_equal(cli_uq_unlink(q, &c, 5, "d"), 0);
	assert_int_equal(cli_uq_unlink(q, &c, 5, "nope"), 0);
	cli_uq_forget_name(q, 5, "l");
	assert_int_equal(cli_uq_unlink(q, &c, 5, "l"), 0);
	/* entries of a directory not delegated are not kept */
	cli_uq_note_entry(q, 6, "g", 13, 0100644);
	assert_int_equal(cli_uq_unlink(q, &c, 6, "g"), 0);
	/* the notify channel down: synchronous */
	F.up = 0;
	assert_int_equal(cli_uq_unlink(q, &c, 5, "f"), 0);
	F.up = 1;
	assert_int_equal(cli_uq_unlink(q, &c, 5, "f"), 1);
	cli_uq_wait_all(q);
	assert_int_equal(count('u'), 1);
	assert_int_equal(count('g'), 1);
	cli_uq_destroy(q);
}

typedef struct unl_arg {
	cli_uq *q;
	cli_ctx c;
	uint64_t dir;
	const char *name;
	int rc, finished;
} unl_arg;

static void *unl_thread(void *p)
{
	unl_arg *a = p;

	a->rc = cli_uq_unlink(a->q, &a->c, a->dir, a->name);
	__atomic_store_n(&a->finished, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void *wait_thread(void *p)
{
	unl_arg *a = p;

	if (a->dir)
		cli_uq_wait(a->q, a->dir);
	else
		cli_uq_wait_all(a->q);
	__atomic_store_n(&a->finished, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void test_cap_waits(void **state)
{
	cli_uq *q = mk(2);
	cli_ctx c = ctx(1000);
	unl_arg a = { .q = q, .c = c, .dir = 5, .name = "f3", .rc = -1 };
	pthread_t t;
	cli_uq_stats st;

	grant(q, &c, 5);
	gate(1);
	for (int i = 0; i < 3; i++) {
		char n[8];

		snprintf(n, sizeof(n), "f%d", i + 1);
		cli_uq_note_entry(q, 5, n, 20 + i, 0100644);
	}
	assert_int_equal(cli_uq_unlink(q, &c, 5, "f1"), 1);
	assert_int_equal(cli_uq_unlink(q, &c, 5, "f2"), 1);
	assert_int_equal(pthread_create(&t, NULL, unl_thread, &a), 0);
	usleep(100000);
	assert_int_equal(__atomic_load_n(&a.finished, __ATOMIC_ACQUIRE), 0);
	gate(0);
	pthread_join(t, NULL);
	assert_int_equal(a.rc, 1); /* waited for room, then queued */
	cli_uq_wait_all(q);
	assert_int_equal(count('u'), 3);
	cli_uq_get_stats(q, &st);
	assert_true(st.waits >= 1);
	assert_int_equal(st.pending, 0);
	cli_uq_destroy(q);
}

static void test_recall_flushes_then_returns(void **state)
{
	cli_uq *q = mk(0);
	cli_ctx c = ctx(1000);
	cli_uq_stats st;

	grant(q, &c, 5);
	cli_uq_note_entry(q, 5, "a", 30, 0100644);
	cli_uq_note_entry(q, 5, "b", 31, 0100644);
	cli_uq_note_entry(q, 5, "c", 32, 0100644);
	gate(1);
	assert_int_equal(cli_uq_unlink(q, &c, 5, "a"), 1);
	assert_int_equal(cli_uq_unlink(q, &c, 5, "b"), 1);
	cli_uq_recall(q, 5); /* does not wait for them */
	assert_int_equal(count('r'), 0);
	/* recalled: no new asynchronous unlink, the names are forgotten */
	assert_int_equal(cli_uq_unlink(q, &c, 5, "c"), 0);
	cli_uq_note_entry(q, 5, "c", 32, 0100644);
	assert_int_equal(cli_uq_unlink(q, &c, 5, "c"), 0);
	gate(0);
	cli_uq_quiesce(q);
	/* the return comes after both unlinks were answered */
	assert_int_equal(count('u'), 2);
	assert_int_equal(count('r'), 1);
	assert_int_equal(F.log[F.nlog - 1].kind, 'r');
	assert_int_equal(F.log[F.nlog - 1].dir, 5);
	assert_int_equal(F.log[F.nlog - 1].uid, 1000);
	cli_uq_get_stats(q, &st);
	assert_int_equal(st.recalled, 1);
	assert_int_equal(st.returned, 1);
	assert_int_equal(st.held, 0);
	/* not asked again for 1 s */
	assert_int_equal(cli_uq_unlink(q, &c, 5, "d"), 0);
	assert_int_equal(count('g'), 1);
	advance(1000);
	assert_int_equal(cli_uq_unlink(q, &c, 5, "d"), 0);
	assert_int_equal(count('g'), 2);
	/* a recall of every directory (the MDS restarted) */
	cli_uq_note_entry(q, 5, "e", 33, 0100644);
	cli_uq_recall(q, 0);
	assert_int_equal(cli_uq_unlink(q, &c, 5, "e"), 0);
	cli_uq_quiesce(q);
	assert_int_equal(count('r'), 2);
	cli_uq_destroy(q);
	assert_int_equal(count('r'), 2);
}

/* The recall overtakes the GET's reply: the grant is given back at once. */
static void test_recall_during_get(void **state)
{
	cli_uq *q = mk(0);
	cli_ctx c = ctx(1000);

	F.recall_in_get = q;
	grant(q, &c, 5);
	cli_uq_note_entry(q, 5, "a", 30, 0100644);
	assert_int_equal(cli_uq_unlink(q, &c, 5, "a"), 0);
	cli_uq_quiesce(q);
	assert_int_equal(count('r'), 1);
	cli_uq_destroy(q);
}

static void test_flush_errors_fsyncdir(void **state)
{
	cli_uq *q = mk(0);
	cli_ctx c = ctx(1000);
	cli_uq_stats st;

	grant(q, &c, 5);
	cli_uq_note_entry(q, 5, "gone", 40, 0100644);
	cli_uq_note_entry(q, 5, "again", 41, 0100644);
	assert_int_equal(cli_uq_unlink(q, &c, 5, "gone"), 1);
	assert_int_equal(cli_uq_unlink(q, &c, 5, "again"), 1);
	/* removed or replaced by someone else: no error */
	assert_int_equal(cli_uq_fsyncdir(q, 5), 0);
	cli_uq_note_entry(q, 5, "bad", 42, 0100644);
	assert_int_equal(cli_uq_unlink(q, &c, 5, "bad"), 1);
	assert_int_equal(cli_uq_fsyncdir(q, 6), 0);
	assert_int_equal(cli_uq_fsyncdir(q, 5), -EIO);
	assert_int_equal(cli_uq_fsyncdir(q, 5), 0); /* reported once */
	cli_uq_get_stats(q, &st);
	assert_int_equal(st.gone, 2);
	assert_int_equal(st.errors, 1);
	cli_uq_destroy(q);
}

static void test_ordering_waits(void **state)
{
	cli_uq *q = mk(0);
	cli_ctx c = ctx(1000);
	unl_arg w_ino = { .q = q, .dir = 50 }, w_dir = { .q = q, .dir = 5 },
		w_all = { .q = q, .dir = 0 };
	pthread_t t1, t2, t3;

	grant(q, &c, 5);
	cli_uq_note_entry(q, 5, "f", 50, 0100644);
	gate(1);
	assert_int_equal(cli_uq_unlink(q, &c, 5, "f"), 1);
	assert_int_equal(cli_uq_pending_name(q, 5, "f"), 1);
	assert_int_equal(cli_uq_pending_name(q, 5, "g"), 0);
	assert_int_equal(cli_uq_pending_name(q, 6, "f"), 0);
	cli_uq_wait(q, 6);  /* unrelated: at once */
	cli_uq_wait(q, 51);
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
	assert_int_equal(cli_uq_pending_name(q, 5, "f"), 0);
	assert_int_equal(count('u'), 1);
	cli_uq_destroy(q);
}

/* Valid until the last renewing request + lease - 1 s on this clock. */
static void test_expiry_and_renew(void **state)
{
	cli_uq *q = mk(0);
	cli_ctx c = ctx(1000);
	cli_uq_stats st;

	grant(q, &c, 5); /* at 100000: valid until 109000 */
	advance(5000);
	cli_uq_note_entry(q, 5, "a", 60, 0100644);
	assert_int_equal(cli_uq_unlink(q, &c, 5, "a"), 1);
	cli_uq_wait(q, 5); /* sent at 105000: until 114000 */
	advance(8999);
	cli_uq_note_entry(q, 5, "b", 61, 0100644);
	assert_int_equal(cli_uq_unlink(q, &c, 5, "b"), 1);
	cli_uq_wait(q, 5); /* sent at 113999: until 122999 */
	advance(9000);
	cli_uq_note_entry(q, 5, "c", 62, 0100644);
	/* ran out: sync (and no streak: no GET) */
	assert_int_equal(cli_uq_unlink(q, &c, 5, "c"), 0);
	cli_uq_get_stats(q, &st);
	assert_int_equal(st.expired, 1);
	assert_int_equal(count('g'), 1);
	cli_uq_destroy(q);
	assert_int_equal(count('r'), 0); /* an expired delegation is not returned */
}

/* ---- negative lookups (complete directories) ---- */

static cli_uq *mkl(unsigned max_cnames, unsigned list_batch)
{
	cli_uq_opts o = { .threads = 2, .max_cnames = max_cnames, .list_batch = list_batch,
			  .ops = { .unlink = fake_unlink, .deleg_get = fake_get,
				   .deleg_return = fake_return, .up = fake_up, .list = fake_list,
				   .clock = fake_clock } };
	cli_uq *q = mk(0); /* resets the fake */
	cli_uq_destroy(q);
	q = NULL;
	pthread_mutex_lock(&F.mu);
	F.nlog = 0;
	pthread_mutex_unlock(&F.mu);
	assert_int_equal(cli_uq_create(&o, &q), 0);
	return q;
}

/* Three creates in dir: the third asks, the grant lists. */
static void touch3(cli_uq *q, const cli_ctx *c, uint64_t dir)
{
	int g = count('g');

	cli_uq_touch(q, c, dir);
	cli_uq_touch(q, c, dir);
	assert_int_equal(count('g'), g);
	cli_uq_touch(q, c, dir);
	assert_int_equal(count('g'), g + 1);
}

static void test_neg_grant_lists(void **state)
{
	cli_uq *q = mkl(0, 4); /* 10 names in pages of 4: 3 LOOKUP_BULKs */
	cli_ctx c = ctx(1000);
	cli_uq_stats st;

	assert_int_equal(cli_uq_negative(q, &c, 9, "x"), 0); /* nothing held */
	touch3(q, &c, 9);
	assert_int_equal(count('l'), 3);
	assert_int_equal(cli_uq_negative(q, &c, 9, "e00000"), 0);
	assert_int_equal(cli_uq_negative(q, &c, 9, "e00009"), 0);
	assert_int_equal(cli_uq_negative(q, &c, 9, "e00010"), 1);
	assert_int_equal(cli_uq_negative(q, &c, 9, "x"), 1);
	assert_int_equal(cli_uq_negative(q, &c, 8, "x"), 0); /* another directory */
	cli_uq_get_stats(q, &st);
	assert_int_equal(st.neg_local, 2);
	assert_int_equal(st.listed, 1);
	assert_int_equal(st.incomplete, 0);
	cli_uq_destroy(q);
}

static void test_neg_own_changes(void **state)
{
	cli_uq *q = mkl(0, 0);
	cli_ctx c = ctx(1000);

	touch3(q, &c, 9);
	/* made here */
	cli_uq_mutated(q, &c, 9, "new", 1, cli_uq_now(q), 0);
	assert_int_equal(cli_uq_negative(q, &c, 9, "new"), 0);
	/* an entry given to the kernel (a LOOKUP, a create's reply) */
	cli_uq_note_entry(q, 9, "k", 77, 0100644);
	assert_int_equal(cli_uq_negative(q, &c, 9, "k"), 0);
	/* removed here: synchronously, and asynchronously */
	cli_uq_mutated(q, &c, 9, "e00001", 0, cli_uq_now(q), 0);
	assert_int_equal(cli_uq_negative(q, &c, 9, "e00001"), 1);
	assert_int_equal(cli_uq_unlink(q, &c, 9, "k"), 1);
	assert_int_equal(cli_uq_negative(q, &c, 9, "k"), 1);
	cli_uq_wait(q, 9);
	/* a failed mutation: no more local answers */
	cli_uq_mutated(q, &c, 9, "y", 1, cli_uq_now(q), -EIO);
	assert_int_equal(cli_uq_negative(q, &c, 9, "y"), 0);
	assert_int_equal(cli_uq_negative(q, &c, 9, "zz"), 0);
	cli_uq_destroy(q);
}

static void test_neg_not_local(void **state)
{
	cli_uq *q = mkl(0, 0);
	cli_ctx c = ctx(1000), o = ctx(1001);
	cli_uq_stats st;

	touch3(q, &c, 9);
	assert_int_equal(cli_uq_negative(q, &o, 9, "x"), 0); /* another cred */
	__atomic_store_n(&F.up, 0, __ATOMIC_RELAXED);
	assert_int_equal(cli_uq_negative(q, &c, 9, "x"), 0); /* channel down */
	__atomic_store_n(&F.up, 1, __ATOMIC_RELAXED);
	assert_int_equal(cli_uq_negative(q, &c, 9, "x"), 1);
	cli_uq_recall(q, 9);
	assert_int_equal(cli_uq_negative(q, &c, 9, "x"), 0);
	cli_uq_wait_all(q);
	/* a later grant lists again; then it runs out on this clock */
	advance(5000);
	touch3(q, &c, 7);
	assert_int_equal(cli_uq_negative(q, &c, 7, "x"), 1);
	cli_uq_mutated(q, &c, 7, "r", 1, cli_uq_now(q), 0); /* renews: +9 s */
	advance(8999);
	assert_int_equal(cli_uq_negative(q, &c, 7, "x"), 1);
	advance(2);
	assert_int_equal(cli_uq_negative(q, &c, 7, "x"), 0);
	cli_uq_get_stats(q, &st);
	assert_int_equal(st.expired, 1);
	/* every directory recalled (the MDS restarted) */
	advance(100000);
	touch3(q, &c, 6);
	assert_int_equal(cli_uq_negative(q, &c, 6, "x"), 1);
	cli_uq_recall(q, 0);
	assert_int_equal(cli_uq_negative(q, &c, 6, "x"), 0);
	cli_uq_destroy(q);
}

static void test_neg_list_limits(void **state)
{
	cli_uq *q = mkl(0, 0);
	cli_ctx c = ctx(1000);
	cli_uq_stats st;

	/* more than 4096 names: not complete, the delegation stays */
	F.list_n = 5000;
	touch3(q, &c, 9);
	assert_int_equal(cli_uq_negative(q, &c, 9, "x"), 0);
	cli_uq_note_entry(q, 9, "a", 60, 0100644);
	assert_int_equal(cli_uq_unlink(q, &c, 9, "a"), 1);
	cli_uq_get_stats(q, &st);
	assert_int_equal(st.incomplete, 1);
	assert_int_equal(st.listed, 0);
	/* exactly 4096: complete */
	F.list_n = 4096;
	touch3(q, &c, 8);
	assert_int_equal(cli_uq_negative(q, &c, 8, "x"), 1);
	assert_int_equal(cli_uq_negative(q, &c, 8, "e04095"), 0);
	/* a listing that fails */
	F.list_rc = -EIO;
	touch3(q, &c, 7);
	assert_int_equal(cli_uq_negative(q, &c, 7, "x"), 0);
	cli_uq_destroy(q);

	/* the table's cap: 12 names in all */
	q = mkl(12, 0);
	touch3(q, &c, 9);
	assert_int_equal(cli_uq_negative(q, &c, 9, "x"), 1);
	cli_uq_mutated(q, &c, 9, "n1", 1, 0, 0);
	cli_uq_note_entry(q, 9, "n2", 61, 0100644);
	assert_int_equal(cli_uq_negative(q, &c, 9, "x"), 1);
	cli_uq_mutated(q, &c, 9, "n3", 1, 0, 0); /* the 13th */
	assert_int_equal(cli_uq_negative(q, &c, 9, "x"), 0);
	assert_int_equal(cli_uq_negative(q, &c, 9, "n3"), 0);
	cli_uq_destroy(q);
}

/* Without ops.list (neg_local=0) creates and negative lookups ask for
 * nothing; an async unlink the MDS refused (not -ENOENT) ends complete. */
static void test_neg_off_and_flush_error(void **state)
{
	cli_uq *q = mk(0);
	cli_ctx c = ctx(1000);

	for (int i = 0; i < 5; i++)
		cli_uq_touch(q, &c, 9);
	assert_int_equal(count('g'), 0);
	cli_uq_destroy(q);

	q = mkl(0, 0);
	touch3(q, &c, 9);
	cli_uq_note_entry(q, 9, "bad", 60, 0100644);
	assert_int_equal(cli_uq_unlink(q, &c, 9, "bad"), 1);
	cli_uq_wait(q, 9); /* -EIO: "bad" may still be there */
	assert_int_equal(cli_uq_negative(q, &c, 9, "bad"), 0);
	assert_int_equal(cli_uq_negative(q, &c, 9, "x"), 0);
	cli_uq_destroy(q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
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
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
