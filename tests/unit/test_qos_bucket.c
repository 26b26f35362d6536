/* test_qos_bucket.c — token bucket: refill, depth cap, take/try-take,
 * wait time, rate change, debt. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>

#include "qos/bucket.h"

static void test_bucket_init_invalid(void **state)
{
	qos_bucket b;

	(void)state;
	assert_int_equal(qos_bucket_init(&b, -1, 3, 0), -EINVAL);
	assert_int_equal(qos_bucket_init(&b, 1, 0, 0), -EINVAL);
	assert_int_equal(qos_bucket_init(&b, NAN, 3, 0), -EINVAL);
	assert_int_equal(qos_bucket_init(&b, 1, INFINITY, 0), -EINVAL);
	assert_int_equal(qos_bucket_init(&b, 0, 3, 0), 0);
}

static void test_bucket_refill_capped(void **state)
{
	qos_bucket b;

	(void)state;
	assert_int_equal(qos_bucket_init(&b, 10, 3, 5.0), 0);
	assert_true(qos_bucket_peek(&b, 5.0) == 3.0); /* starts full */
	assert_int_equal(qos_bucket_try_take(&b, 3, 5.0), 0);
	assert_true(fabs(qos_bucket_peek(&b, 5.1) - 1.0) < 1e-9);
	assert_true(fabs(qos_bucket_peek(&b, 5.2) - 2.0) < 1e-9);
	assert_true(qos_bucket_peek(&b, 100.0) == 3.0); /* excess discarded */
	/* A clock going backwards earns nothing and loses nothing. */
	qos_bucket_refill(&b, 5.25);
	double lvl = qos_bucket_peek(&b, 5.25);
	assert_true(qos_bucket_peek(&b, 4.0) == lvl);
}

static void test_bucket_try_take_and_wait(void **state)
{
	qos_bucket b;

	(void)state;
	assert_int_equal(qos_bucket_init(&b, 4, 2, 0), 0);
	assert_int_equal(qos_bucket_try_take(&b, 2, 0), 0);
	assert_int_equal(qos_bucket_try_take(&b, 1, 0), -EAGAIN);
	assert_int_equal(qos_bucket_try_take(&b, -1, 0), -EINVAL);
	assert_true(fabs(qos_bucket_wait(&b, 1, 0) - 0.25) < 1e-12);
	assert_true(fabs(qos_bucket_wait(&b, 2, 0.25) - 0.25) < 1e-12);
	assert_true(qos_bucket_wait(&b, 1, 0.25) == 0);
	/* more than the depth: wait for a full bucket */
	assert_true(fabs(qos_bucket_wait(&b, 10, 0) - 0.5) < 1e-12);
	assert_int_equal(qos_bucket_try_take(&b, 1, 0.25), 0);
	assert_int_equal(qos_bucket_try_take(&b, 1, 0.25), -EAGAIN);
}

static void test_bucket_zero_rate_waits_forever(void **state)
{
	qos_bucket b;

	(void)state;
	assert_int_equal(qos_bucket_init(&b, 0, 1, 0), 0);
	assert_int_equal(qos_bucket_try_take(&b, 1, 0), 0);
	assert_true(isinf(qos_bucket_wait(&b, 1, 1000)));
}

static void test_bucket_set_rate_credits_old_rate(void **state)
{
	qos_bucket b;

	(void)state;
	assert_int_equal(qos_bucket_init(&b, 10, 100, 0), 0);
	assert_int_equal(qos_bucket_try_take(&b, 100, 0), 0);
	/* 1 s at 10/s, then 1 s at 50/s */
	assert_int_equal(qos_bucket_set_rate(&b, 50, 1.0), 0);
	assert_true(fabs(qos_bucket_peek(&b, 2.0) - 60.0) < 1e-9);
	assert_int_equal(qos_bucket_set_rate(&b, -5, 2.0), -EINVAL);
	assert_int_equal(qos_bucket_set_depth(&b, 20, 2.0), 0);
	assert_true(qos_bucket_peek(&b, 2.0) == 20.0);
}

static void test_bucket_debt_keeps_long_run_rate(void **state)
{
	qos_bucket b;
	double now = 0;
	int served = 0;

	(void)state;
	/* requests of 5 tokens on a depth-3 bucket at 30 tokens/s: 6/s */
	assert_int_equal(qos_bucket_init(&b, 30, 3, 0), 0);
	while (now < 100.0) {
		double w = qos_bucket_wait(&b, 5, now);
		now += w;
		if (now >= 100.0)
			break;
		qos_bucket_take(&b, 5, now);
		served++;
	}
	/* 100 s * 6/s, plus the initial burst of under one request */
	assert_true(served >= 599 && served <= 601);
}

/* More than the depth: taken from a full bucket into debt (as
 * qos_bucket_wait's cap says), refused while the bucket is not full. */
static void test_bucket_try_take_above_depth(void **state)
{
	qos_bucket b;

	(void)state;
	assert_int_equal(qos_bucket_init(&b, 10, 4, 0), 0);
	assert_int_equal(qos_bucket_try_take(&b, 1, 0), 0);
	assert_int_equal(qos_bucket_try_take(&b, 10, 0), -EAGAIN); /* 3 of 4 */
	assert_true(fabs(qos_bucket_peek(&b, 0) - 3.0) < 1e-9);   /* nothing taken */
	assert_true(fabs(qos_bucket_wait(&b, 10, 0) - 0.1) < 1e-9);
	assert_int_equal(qos_bucket_try_take(&b, 10, 0.1), 0);     /* full: into debt */
	assert_true(fabs(qos_bucket_peek(&b, 0.1) + 6.0) < 1e-9);
	assert_int_equal(qos_bucket_try_take(&b, 1, 0.1), -EAGAIN);
	assert_true(fabs(qos_bucket_wait(&b, 10, 0.1) - 1.0) < 1e-9); /* the debt paid first */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bucket_try_take_above_depth),
		cmocka_unit_test(test_bucket_init_invalid),
		cmocka_unit_test(test_bucket_refill_capped),
		cmocka_unit_test(test_bucket_try_take_and_wait),
		cmocka_unit_test(test_bucket_zero_rate_waits_forever),
		cmocka_unit_test(test_bucket_set_rate_credits_old_rate),
		cmocka_unit_test(test_bucket_debt_keeps_long_run_rate),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
