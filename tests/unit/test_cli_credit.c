/* test_cli_credit.c — the client's per-OSS RPC credits (client/credit.h):
 * the gate (never more in flight than the grant, capped by the
 * connections), grants replacing the credit and 0 keeping it, waiters
 * woken by a freed credit and by a grown grant, and the cnr asked for. */
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
	assert_int_equal(cli_credit_acquire(c), 8);
	cli_credit_release(c, 3);
	cli_credit_stats_get(c, &st);
	assert_int_equal(st.credit, 3);
	assert_int_equal(st.inflight, 0);
	assert_int_equal(st.changes, 1);
	/* 0 is "no grant": keep 3. */
	assert_int_equal(cli_credit_acquire(c), 3);
	cli_credit_release(c, 0);
	cli_credit_stats_get(c, &st);
	assert_int_equal(st.credit, 3);
	assert_int_equal(st.changes, 1);
	/* The same grant again is no change. */
	cli_credit_acquire(c);
	cli_credit_release(c, 3);
	cli_credit_stats_get(c, &st);
	assert_int_equal(st.changes, 1);
	/* A grant above max is kept (and reported), cnr stays <= max. */
	cli_credit_acquire(c);
	cli_credit_release(c, 50);
	cli_credit_stats_get(c, &st);
	assert_int_equal(st.credit, 50);
	assert_int_equal(cli_credit_acquire(c), 8);
	cli_credit_release(c, 0);
	cli_credit_destroy(c);
	assert_int_equal(cli_credit_create(1, 0, "t", &c), -EINVAL);
}

/* Threads that take a credit and keep it; each records the cnr it got. */
static pthread_mutex_t rec_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t rec[16];
static int nrec;

static void *take_and_hold(void *arg)
{
	uint32_t cnr = cli_credit_acquire(arg);

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
	cli_credit_acquire(c);
	cli_credit_acquire(c);
	/* Three more must wait: the credit is 2 (not the 4 connections). */
	start_takers(c, t, 3);
	usleep(20000);
	cli_credit_stats_get(c, &st);
	assert_int_equal(st.inflight, 2);
	assert_int_equal(st.waits, 3);
	assert_int_equal(nrec, 0);
	/* A freed credit lets exactly one go. */
	cli_credit_release(c, 0);
	wait_taken(1);
	usleep(20000);
	cli_credit_stats_get(c, &st);
	assert_int_equal(st.inflight, 2);
	assert_int_equal(st.waiting, 2);
	/* A grant of 4 lets the other two go at once (1 + 2 = 3 in flight
	 * after this release, under 4). */
	cli_credit_release(c, 4);
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
	cli_credit_release(c, 1);
	start_takers(c, t, 1);
	cli_credit_release(c, 0);
	usleep(20000);
	assert_int_equal(nrec, 0);
	cli_credit_release(c, 0);
	wait_taken(1);
	pthread_join(t[0], NULL);
	cli_credit_release(c, 0);
	cli_credit_destroy(c);
}

static void test_credit_cnr_counts_waiters(void **state)
{
	cli_credit *c;
	pthread_t t[5];

	/* Credit 1: the callers go one by one, each asking for itself plus
	 * those still waiting. */
	assert_int_equal(cli_credit_create(1, 8, "t", &c), 0);
	assert_int_equal(cli_credit_acquire(c), 1);
	start_takers(c, t, 5);
	for (int k = 1; k <= 5; k++) {
		cli_credit_release(c, 0);
		wait_taken(k);
		assert_int_equal(rec[k - 1], 6 - k);
	}
	for (int i = 0; i < 5; i++)
		pthread_join(t[i], NULL);
	cli_credit_release(c, 0);
	cli_credit_destroy(c);

	/* Demand above max is cut to max. */
	assert_int_equal(cli_credit_create(1, 2, "t", &c), 0);
	cli_credit_acquire(c);
	start_takers(c, t, 5);
	cli_credit_release(c, 2); /* grant 2: two may go */
	wait_taken(2);
	assert_int_equal(rec[0], 2);
	assert_int_equal(rec[1], 2);
	for (int k = 3; k <= 5; k++) {
		cli_credit_release(c, 0);
		wait_taken(k);
		assert_int_equal(rec[k - 1], 2);
	}
	for (int i = 0; i < 5; i++)
		pthread_join(t[i], NULL);
	cli_credit_release(c, 0);
	cli_credit_release(c, 0);
	cli_credit_destroy(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_credit_initial_and_grants),
		cmocka_unit_test(test_credit_gate_and_wakeups),
		cmocka_unit_test(test_credit_cnr_counts_waiters),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
