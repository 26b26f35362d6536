/* test_clock.c — common/clock.h: a deadline ms from now on the clock asked
 * for, its nanoseconds always normalised (pthread_cond_timedwait refuses
 * tv_nsec >= 1e9), whole seconds and carries added right. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <time.h>

#include "common/clock.h"

static int64_t ns_of(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

static void check(clockid_t clk, uint64_t ms)
{
	struct timespec before, d, after;

	clock_gettime(clk, &before);
	d = pfs_clock_deadline(clk, ms);
	clock_gettime(clk, &after);
	assert_true(d.tv_nsec >= 0 && d.tv_nsec < 1000000000L);
	assert_true(ns_of(&d) >= ns_of(&before) + (int64_t)ms * 1000000);
	assert_true(ns_of(&d) <= ns_of(&after) + (int64_t)ms * 1000000);
}

static void test_deadline(void **state)
{
	/* 999 ms carries into the seconds whenever now's ns are >= 1 ms;
	 * many tries so that both sides of the carry are met */
	for (int i = 0; i < 2000; i++) {
		check(CLOCK_MONOTONIC, 999);
		check(CLOCK_REALTIME, 999);
	}
	check(CLOCK_MONOTONIC, 0);
	check(CLOCK_MONOTONIC, 1);
	check(CLOCK_REALTIME, 20);
	check(CLOCK_MONOTONIC, 3600 * 1000 + 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_deadline),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
