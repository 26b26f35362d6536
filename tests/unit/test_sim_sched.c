/* test_sim_sched.c — FCFS + EASY backfilling on hand-checked cases. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>

#include "bench/sim/sim_sched.h"

/* Pool of 10: two running jobs of 4 nodes end at 100 and 200; 2 free.
 * Head wants 6: its shadow time is 100 (2 + 4 free) with 0 extra nodes.
 * A 2-node job of 50 s ends before the shadow: backfilled.  A 1-node job
 * of 500 s would delay the head (no extra nodes): not started, and no
 * nodes are left anyway. */
static void test_sched_backfill_before_shadow(void **state)
{
	sim_sched_running run[] = {{4, 100}, {4, 200}};
	sim_sched_waiting wait[] = {{6, 50}, {2, 50}, {1, 500}};
	size_t start[3], n = 99;
	assert_int_equal(sim_sched_easy(0, 2, run, 2, wait, 3, start, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(start[0], 1);
}

/* A long job may only use the head's extra nodes.  Head wants 4: at 100
 * there are 6 free, 2 extra.  Job 1 (3 nodes, 500 s) is too wide for the
 * extra nodes and would delay the head; job 2 (2 nodes, 500 s) fits in them. */
static void test_sched_backfill_extra_nodes(void **state)
{
	sim_sched_running run[] = {{4, 100}, {4, 200}};
	sim_sched_waiting wait[] = {{4, 10}, {3, 500}, {2, 500}};
	size_t start[3], n = 99;
	assert_int_equal(sim_sched_easy(0, 2, run, 2, wait, 3, start, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(start[0], 2);
}

/* Plain FCFS from the head while jobs fit; the jobs just started count
 * as running for the head's reservation.  10 free: 3 + 3 start, 4 left;
 * the 5-node head waits; its shadow is when the first 3-node job ends
 * (now + 100) with 4 + 3 - 5 = 2 extra nodes.  The long 2-node job takes
 * both extra nodes; the long 1-node job after it then finds none. */
static void test_sched_fcfs_then_reserve(void **state)
{
	sim_sched_waiting wait[] = {{3, 100}, {3, 200}, {5, 10}, {2, 1000}, {1, 1000}};
	size_t start[5], n = 0;
	assert_int_equal(sim_sched_easy(1000, 10, NULL, 0, wait, 5, start, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(start[0], 0);
	assert_int_equal(start[1], 1);
	assert_int_equal(start[2], 3);
}

/* Overrun estimates count as ending now, not in the past. */
static void test_sched_overrun_estimate(void **state)
{
	sim_sched_running run[] = {{8, 50}};
	sim_sched_waiting wait[] = {{10, 100}, {2, 20}, {2, 30}};
	size_t start[3], n = 0;
	/* now = 100 > est_end 50: shadow = 100, extra 0; a 20 s job would end
	 * at 120 > 100, so it must not start (the head is due "now"). */
	assert_int_equal(sim_sched_easy(100, 2, run, 1, wait, 3, start, &n), 0);
	assert_int_equal(n, 0);
}

static void test_sched_empty_and_bad(void **state)
{
	size_t n = 5;
	assert_int_equal(sim_sched_easy(0, 4, NULL, 0, NULL, 0, NULL, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(sim_sched_easy(0, -1, NULL, 0, NULL, 0, NULL, &n), -EINVAL);
	assert_int_equal(sim_sched_easy(0, 1, NULL, 0, NULL, 0, NULL, NULL), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sched_backfill_before_shadow),
		cmocka_unit_test(test_sched_backfill_extra_nodes),
		cmocka_unit_test(test_sched_fcfs_then_reserve),
		cmocka_unit_test(test_sched_overrun_estimate),
		cmocka_unit_test(test_sched_empty_and_bad),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
