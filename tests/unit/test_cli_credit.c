/* test_cli_credit.c — the client's per-OSS RPC credits (client/credit.h):
 * the gate (never more in flight than the grant, capped by the
 * connections), grants replacing the credit and 0 keeping it, waiters
 * woken by a freed credit and by a grown grant, the cnr asked for, and the
 * fair share between jobs of one client. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <unistd.h>

#include "client/credit.h"

static void test_credit_initial_and_grants(void **state)
{
	cli_credit *c;
	cli_credit_stats st;

	assert_int_equal(cli_credit_create(0, 8, "t", &c), 0);
	cli_credit_stats_get(c, &st);
	assert_int_equal(st.credit, 8); /* 0 = max */
	/* One in flight, nobody waiting: cnr is the credit (at least). */
	assert_int_equal(cli_credit_acquire(c, "j"), 8);
	cli_credit_release(c, "j", 3);
	cli_credit_stats_get(c, &st);
	assert_int_equal(st.credit, 3);
	assert_int_equal(st.inflight, 0);
	assert_int_equal(st.changes, 1);
	/* 0 is "no grant": keep 3. */
	assert_int_equal(cli_credit_acquire(c, "j"), 3);
	cli_credit_release(c, "j", 0);
	cli_credit_stats_get(c, &st);
	assert_int_equal(st.credit, 3);
	assert_int_equal(st.changes, 1);
	/* The same grant again is no change. */
	cli_credit_acquire(c, "j");
	cli_credit_release(c, "j", 3);
	cli_credit_stats_get(c, &st);
	assert_int_equal(st.changes, 1);
	/* A grant above max is kept (and reported), cnr stays <= max. */
	cli_credit_acquire(c, "j");
	cli_credit_release(c, "j", 50);
	cli_credit_stats_get(c, &st);
	assert_int_equal(st.credit, 50);
	assert_int_equal(cli_credit_acquire(c, "j"), 8);
	cli_credit_release(c, "j", 0);
	cli_credit_destroy(c);
	assert_int_equal(cli_credit_create(1, 0, "t", &c), -EINVAL);
}

/* Threads that take a credit and keep it; each records the cnr it got. */
static pthread_mutex_t rec_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t rec[16];
static int nrec;

static void *take_and_hold(void *arg)
{
	uint32_t cnr = cli_credit_acquire(arg, "j");

	pthread_mutex_lock(&rec_lock);
	rec[nrec++] = cnr;
	pthread_mutex_unlock(&rec_lock);
	return NULL;
}

/* Wait until n threads got their credit, up to 5 s. */
static void wait_taken(int n)
{
	int got = 0;

	for (int i = 0; i < 5000; i++) {
		pthread_mutex_lock(&rec_lock);
		got = nrec;
		pthread_mutex_unlock(&rec_lock);
		if (got == n)
			return;
		usleep(1000);
	}
	fail_msg("%d threads got a credit, not %d", got, n);
}

/* Wait until n threads are blocked in acquire, up to 5 s. */
static void wait_waiting(cli_credit *c, uint32_t n)
{
	cli_credit_stats st;

	for (int i = 0; i < 5000; i++) {
		cli_credit_stats_get(c, &st);
		if (st.waiting == n)
			return;
		usleep(1000);
	}
	fail_msg("waiting is %u, not %u", st.waiting, n);
}

static void start_takers(cli_credit *c, pthread_t *t, int n)
{
	nrec = 0;
	for (int i = 0; i < n; i++)
		assert_int_equal(pthread_create(&t[i], NULL, take_and_hold, c), 0);
	wait_waiting(c, (uint32_t)n);
}

static void test_credit_gate_and_wakeups(void **state)
{
	cli_credit *c;
	cli_credit_stats st;
	pthread_t t[3];

	assert_int_equal(cli_credit_create(2, 4, "t", &c), 0);
	cli_credit_acquire(c, "j");
	cli_credit_acquire(c, "j");
	/* Three more must wait: the credit is 2 (not the 4 connections). */
	start_takers(c, t, 3);
	usleep(20000);
	cli_credit_stats_get(c, &st);
	assert_int_equal(st.inflight, 2);
	assert_int_equal(st.waits, 3);
	assert_int_equal(nrec, 0);
	/* A freed credit lets exactly one go. */
	cli_credit_release(c, "j", 0);
	wait_taken(1);
	usleep(20000);
	cli_credit_stats_get(c, &st);
	assert_int_equal(st.inflight, 2);
	assert_int_equal(st.waiting, 2);
	/* A grant of 4 lets the other two go at once (1 + 2 = 3 in flight
	 * after this release, under 4). */
	cli_credit_release(c, "j", 4);
	wait_taken(3);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	cli_credit_stats_get(c, &st);
	assert_int_equal(st.inflight, 3);
	assert_int_equal(st.peak, 3);
	assert_int_equal(st.waiting, 0);
	/* A grant below what is in flight: nobody new goes until enough came
	 * back (3 in flight, credit 1: two more releases before a third
	 * caller may go). */
	cli_credit_release(c, "j", 1);
	start_takers(c, t, 1);
	cli_credit_release(c, "j", 0);
	usleep(20000);
	assert_int_equal(nrec, 0);
	cli_credit_release(c, "j", 0);
	wait_taken(1);
	pthread_join(t[0], NULL);
	cli_credit_release(c, "j", 0);
	cli_credit_destroy(c);
}

static void test_credit_cnr_counts_waiters(void **state)
{
	cli_credit *c;
	pthread_t t[5];

	/* Credit 1: the callers go one by one, each asking for itself plus
	 * those still waiting. */
	assert_int_equal(cli_credit_create(1, 8, "t", &c), 0);
	assert_int_equal(cli_credit_acquire(c, "j"), 1);
	start_takers(c, t, 5);
	for (int k = 1; k <= 5; k++) {
		cli_credit_release(c, "j", 0);
		wait_taken(k);
		assert_int_equal(rec[k - 1], 6 - k);
	}
	for (int i = 0; i < 5; i++)
		pthread_join(t[i], NULL);
	cli_credit_release(c, "j", 0);
	cli_credit_destroy(c);

	/* Demand above max is cut to max. */
	assert_int_equal(cli_credit_create(1, 2, "t", &c), 0);
	cli_credit_acquire(c, "j");
	start_takers(c, t, 5);
	cli_credit_release(c, "j", 2); /* grant 2: two may go */
	wait_taken(2);
	assert_int_equal(rec[0], 2);
	assert_int_equal(rec[1], 2);
	for (int k = 3; k <= 5; k++) {
		cli_credit_release(c, "j", 0);
		wait_taken(k);
		assert_int_equal(rec[k - 1], 2);
	}
	for (int i = 0; i < 5; i++)
		pthread_join(t[i], NULL);
	cli_credit_release(c, "j", 0);
	cli_credit_release(c, "j", 0);
	cli_credit_destroy(c);
}

/* A thread that takes one credit for its job and notes it. */
typedef struct job_taker {
	cli_credit *c;
	const char *job;
	int got;          /* under rec_lock */
	pthread_t t;
} job_taker;

static void *take_for_job(void *arg)
{
	job_taker *j = arg;

	cli_credit_acquire(j->c, j->job);
	pthread_mutex_lock(&rec_lock);
	j->got = 1;
	pthread_mutex_unlock(&rec_lock);
	return NULL;
}

static int got_of(job_taker *j)
{
	int g;

	pthread_mutex_lock(&rec_lock);
	g = j->got;
	pthread_mutex_unlock(&rec_lock);
	return g;
}

/* Job x holds every credit (its RPCs wait in a throttled OSS queue); x
 * and y each queue one more request.  A freed credit goes to y, not to x
 * (x is above its share of 4/2); x's own next request waits until y's is
 * done or x is below its share again.  Without the share a freed credit
 * goes to whichever waiter wakes first. */
static void test_credit_fair_share_between_jobs(void **state)
{
	cli_credit *c;
	cli_credit_stats st;
	job_taker x5 = { .job = "x" }, y1 = { .job = "y" };

	assert_int_equal(cli_credit_create(4, 4, "t", &c), 0);
	for (int i = 0; i < 4; i++)
		cli_credit_acquire(c, "x");
	x5.c = y1.c = c;
	assert_int_equal(pthread_create(&x5.t, NULL, take_for_job, &x5), 0);
	wait_waiting(c, 1);
	assert_int_equal(pthread_create(&y1.t, NULL, take_for_job, &y1), 0);
	wait_waiting(c, 2);
	cli_credit_release(c, "x", 0); /* x: 3 in flight */
	for (int i = 0; i < 5000 && !got_of(&y1); i++)
		usleep(1000);
	assert_true(got_of(&y1));
	usleep(20000);
	assert_false(got_of(&x5)); /* x holds 3 > ⌈4/2⌉ */
	/* x: 2, y: 1 (not waiting for more); urc 3 < 4: x is at its share,
	 * but nobody else wants the free credit, so it is lent to x */
	cli_credit_release(c, "x", 0);
	assert_int_equal(pthread_join(x5.t, NULL), 0);
	assert_true(got_of(&x5));
	assert_int_equal(pthread_join(y1.t, NULL), 0);
	cli_credit_stats_get(c, &st);
	assert_int_equal(st.inflight, 4);
	cli_credit_release(c, "y", 0);
	for (int i = 0; i < 3; i++)
		cli_credit_release(c, "x", 0);
	cli_credit_destroy(c);
}

static double weights(void *arg, const char *job)
{
	return job[0] == 'h' ? 3 : 1; /* "heavy" weighs 3, others 1 */
}

/* Weighted shares: with a credit of 8 and weights 3:1, h may hold
 * ⌈8·3/4⌉ = 6 while l waits; l is served before h's next request. */
static void test_credit_weighted_shares(void **state)
{
	cli_credit_policy p = { .job_slots = 1, .weight = weights };
	cli_credit *c;
	job_taker h = { .job = "h" }, l = { .job = "l" };

	assert_int_equal(cli_credit_create(8, 8, "t", &c), 0);
	assert_int_equal(cli_credit_set_policy(c, &p), 0);
	for (int i = 0; i < 8; i++)
		cli_credit_acquire(c, "h");
	h.c = l.c = c;
	assert_int_equal(pthread_create(&l.t, NULL, take_for_job, &l), 0);
	wait_waiting(c, 1);
	assert_int_equal(pthread_create(&h.t, NULL, take_for_job, &h), 0);
	wait_waiting(c, 2);
	cli_credit_release(c, "h", 0); /* h 7 > 6: the credit goes to l */
	assert_int_equal(pthread_join(l.t, NULL), 0);
	usleep(20000);
	assert_false(got_of(&h));
	cli_credit_release(c, "h", 0); /* h 6: at its share, l not waiting */
	/* l's RPC has not ended, so there is no share to hold: lent to h */
	assert_int_equal(pthread_join(h.t, NULL), 0);
	cli_credit_release(c, "l", 0);
	for (int i = 0; i < 7; i++)
		cli_credit_release(c, "h", 0);
	cli_credit_destroy(c);
}

/* job_slots = 0: first come, first served; x may take every credit while
 * y waits, and a freed credit goes to whoever wakes (here: x's waiter,
 * the only one). */
static void test_credit_job_slots_off(void **state)
{
	cli_credit_policy p = { .job_slots = 0 };
	cli_credit *c;
	cli_credit_stats st;

	assert_int_equal(cli_credit_create(4, 4, "t", &c), 0);
	assert_int_equal(cli_credit_set_policy(c, &p), 0);
	cli_credit_acquire(c, "y");
	for (int i = 0; i < 3; i++)
		cli_credit_acquire(c, "x"); /* would wait with shares on (2 each) */
	cli_credit_stats_get(c, &st);
	assert_int_equal(st.inflight, 4);
	assert_int_equal(st.share_waits, 0);
	cli_credit_release(c, "y", 0);
	for (int i = 0; i < 3; i++)
		cli_credit_release(c, "x", 0);
	cli_credit_destroy(c);
}

/* ASCAR: a rule set with a fixed window of 2 limits the RPCs in flight
 * below the credit of 8 once a reply has run a control step. */
static void test_credit_ascar_window(void **state)
{
	cli_ascar *a;
	cli_credit_policy p = { .job_slots = 1 };
	cli_credit *c;
	cli_ascar_stats as;
	job_taker t3 = { .job = "j" };
	uint64_t now;

	assert_int_equal(cli_ascar_create(&a), 0);
	assert_int_equal(cli_ascar_set(a, "[0, inf) [0, inf) [0, inf) 0 2 0\n", 1, NULL), 0);
	p.ascar = a;
	assert_int_equal(cli_credit_create(8, 8, "t", &c), 0);
	assert_int_equal(cli_credit_set_policy(c, &p), 0);
	cli_credit_acquire(c, "j");
	now = 1000000;
	cli_credit_done(c, "j", 0, now); /* first reply: sets the references */
	cli_credit_acquire(c, "j");
	cli_credit_done(c, "j", 0, now + 1000); /* a control step: window 2 */
	assert_int_equal(cli_credit_ascar_stats(c, &as), 0);
	assert_int_equal(as.version, 1);
	assert_int_equal(as.window, 2);
	cli_credit_acquire(c, "j");
	cli_credit_acquire(c, "j");
	t3.c = c;
	assert_int_equal(pthread_create(&t3.t, NULL, take_for_job, &t3), 0);
	usleep(100000);
	assert_false(got_of(&t3)); /* 2 in flight = the window, credit 8 */
	cli_credit_release(c, "j", 0);
	assert_int_equal(pthread_join(t3.t, NULL), 0);
	cli_credit_release(c, "j", 0);
	cli_credit_release(c, "j", 0);
	cli_credit_destroy(c);
	cli_ascar_destroy(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_credit_initial_and_grants),
		cmocka_unit_test(test_credit_gate_and_wakeups),
		cmocka_unit_test(test_credit_cnr_counts_waiters),
		cmocka_unit_test(test_credit_fair_share_between_jobs),
		cmocka_unit_test(test_credit_weighted_shares),
		cmocka_unit_test(test_credit_job_slots_off),
		cmocka_unit_test(test_credit_ascar_window),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
