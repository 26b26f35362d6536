/* test_qos_coupon.c — GIFT coupon table: windows, partial and multiple
 * redemption, system reset, regret settlement within the budget. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>

#include "qos/coupon.h"

#define EPS 1e-12

static qos_coupon_table *mk(unsigned N, double tau)
{
	qos_coupon_table *t = NULL;
	assert_int_equal(qos_coupon_table_create(N, tau, &t), 0);
	assert_non_null(t);
	return t;
}

static void test_coupon_create_invalid(void **st)
{
	qos_coupon_table *t = (qos_coupon_table *)1;
	(void)st;
	assert_int_equal(qos_coupon_table_create(0, 0.8, &t), -EINVAL);
	assert_null(t);
	assert_int_equal(qos_coupon_table_create(10, 1.5, &t), -EINVAL);
	assert_int_equal(qos_coupon_table_create(10, -0.1, &t), -EINVAL);
}

static void test_coupon_new_job_is_friendly(void **st)
{
	qos_coupon_table *t = mk(10, 0.8);
	qos_coupon_job_info info;
	(void)st;
	/* no history: empty slots count as redeemed */
	assert_true(qos_coupon_rate(t, "A") == 1.0);
	assert_true(qos_coupon_system_rate(t) == 1.0);
	assert_true(qos_coupon_friendly(t, "A"));
	assert_true(qos_coupon_outstanding(t, "A") == 0.0);
	assert_int_equal(qos_coupon_job_get(t, "A", &info), -ENOENT);
	assert_true(qos_coupon_redeem(t, "A", 1.0) == 0.0);
	assert_int_equal(qos_coupon_issue(t, "A", 0.0, 0, 0), -EINVAL);
	assert_int_equal(qos_coupon_issue(t, "A", -1.0, 0, 0), -EINVAL);
	qos_coupon_table_destroy(t);
}

static void test_coupon_rate_falls_until_tau(void **st)
{
	qos_coupon_table *t = mk(10, 0.8);
	int issued = 0;
	(void)st;
	/* sec. 3.2: issue only while c_i >= tau; with N = 10, tau = 0.8
	 * that is three unredeemed coupons (1.0, 0.9, 0.8 -> 0.7). */
	for (int k = 0; k < 10; k++)
		if (qos_coupon_friendly(t, "A")) {
			assert_int_equal(qos_coupon_issue(t, "A", 0.1, k, 0), 0);
			issued++;
		}
	assert_int_equal(issued, 3);
	assert_float_equal(qos_coupon_rate(t, "A"), 0.7, EPS);
	assert_float_equal(qos_coupon_outstanding(t, "A"), 0.3, EPS);
	/* Another job is not friendly either: the system window is at 0.7. */
	assert_float_equal(qos_coupon_system_rate(t), 0.7, EPS);
	assert_false(qos_coupon_friendly(t, "B"));
	assert_true(qos_coupon_rate(t, "B") == 1.0);
	qos_coupon_table_destroy(t);
}

static void test_coupon_partial_redemption(void **st)
{
	qos_coupon_table *t = mk(4, 0.8);
	qos_coupon_job_info info;
	(void)st;
	/* Fig. 6: a coupon worth 0.15, then 1/12 redeemed, then the rest */
	assert_int_equal(qos_coupon_issue(t, "A", 0.15, 0, 0), 0);
	assert_float_equal(qos_coupon_rate(t, "A"), 0.75, EPS);
	assert_float_equal(qos_coupon_redeem(t, "A", 1.0 / 12), 1.0 / 12, EPS);
	assert_float_equal(qos_coupon_outstanding(t, "A"), 0.15 - 1.0 / 12, EPS);
	assert_float_equal(qos_coupon_rate(t, "A"), (3 + (1.0 / 12) / 0.15) / 4, EPS);
	/* asking for more than is owed redeems only what is owed */
	assert_float_equal(qos_coupon_redeem(t, "A", 1.0 / 12), 0.15 - 1.0 / 12, EPS);
	assert_true(qos_coupon_outstanding(t, "A") == 0.0);
	assert_float_equal(qos_coupon_rate(t, "A"), 1.0, EPS);
	assert_true(qos_coupon_redeem(t, "A", 1.0) == 0.0);
	assert_int_equal(qos_coupon_job_get(t, "A", &info), 0);
	assert_float_equal(info.issued, 0.15, EPS);
	assert_float_equal(info.redeemed, 0.15, EPS);
	assert_int_equal(info.n_coupons, 1);
	qos_coupon_table_destroy(t);
}

static void test_coupon_multiple_redemption(void **st)
{
	qos_coupon_table *t = mk(4, 0.5);
	(void)st;
	assert_int_equal(qos_coupon_issue(t, "A", 0.1, 0, 0), 0);
	assert_int_equal(qos_coupon_issue(t, "A", 0.2, 1, 0), 0);
	/* one redemption pays the first coupon and half the second */
	assert_float_equal(qos_coupon_redeem(t, "A", 0.2), 0.2, EPS);
	assert_float_equal(qos_coupon_outstanding(t, "A"), 0.1, EPS);
	assert_float_equal(qos_coupon_rate(t, "A"), (2 + 1.0 + 0.5) / 4, EPS);
	qos_coupon_table_destroy(t);
}

static void test_coupon_window_recedes(void **st)
{
	qos_coupon_table *t = mk(2, 0.0);
	(void)st;
	assert_int_equal(qos_coupon_issue(t, "A", 1.0, 0, 0), 0);
	assert_int_equal(qos_coupon_issue(t, "A", 1.0, 1, 0), 0);
	assert_int_equal(qos_coupon_issue(t, "A", 1.0, 2, 0), 0);
	assert_float_equal(qos_coupon_rate(t, "A"), 0.0, EPS);
	/* Redemption is oldest first: the first coupon left the window, so
	 * paying it back does not move the rate of the last N. */
	assert_float_equal(qos_coupon_redeem(t, "A", 1.0), 1.0, EPS);
	assert_float_equal(qos_coupon_rate(t, "A"), 0.0, EPS);
	assert_float_equal(qos_coupon_redeem(t, "A", 1.0), 1.0, EPS);
	assert_float_equal(qos_coupon_rate(t, "A"), 0.5, EPS);
	assert_float_equal(qos_coupon_outstanding(t, "A"), 1.0, EPS);
	qos_coupon_table_destroy(t);
}

static void test_coupon_system_reset_at_assessment(void **st)
{
	qos_coupon_table *t = mk(4, 0.8);
	double paid = -1;
	(void)st;
	assert_int_equal(qos_coupon_issue(t, "A", 0.1, 0, 0), 0);
	assert_int_equal(qos_coupon_issue(t, "B", 0.1, 0, 0), 0);
	assert_float_equal(qos_coupon_system_rate(t), 0.5, EPS);
	assert_false(qos_coupon_friendly(t, "C"));
	/* too young to settle, but the system window is reset anyway */
	qos_coupon_assess(t, 10, 100, 1000, &paid);
	assert_true(paid == 0.0);
	assert_true(qos_coupon_system_rate(t) == 1.0);
	assert_true(qos_coupon_friendly(t, "C"));
	/* job windows are not reset */
	assert_float_equal(qos_coupon_rate(t, "A"), 0.75, EPS);
	assert_float_equal(qos_coupon_outstanding(t, "A"), 0.1, EPS);
	qos_coupon_table_destroy(t);
}

static void test_coupon_regret_budget_bounds_awards(void **st)
{
	qos_coupon_table *t = mk(8, 0.0);
	qos_coupon_job_info ia, ib;
	double paid;
	(void)st;
	/* 3600 node-seconds per unit of worth: 0.5 worth = 0.5 node-hours */
	assert_int_equal(qos_coupon_issue(t, "A", 0.5, 0, 3600), 0);
	assert_int_equal(qos_coupon_issue(t, "B", 0.4, 0, 3600), 0);
	assert_int_equal(qos_coupon_issue(t, "B", 1.0, 150, 3600), 0);
	assert_float_equal(qos_coupon_redeem(t, "B", 0.1), 0.1, EPS);
	assert_float_equal(qos_coupon_liability(t), 0.5 + 0.3 + 1.0, EPS);
	/* settle coupons issued at or before 200 - 100: A's 0.5 and B's
	 * unredeemed 0.3, with a budget of 0.6 node-hours */
	qos_coupon_assess(t, 200, 100, 0.6, &paid);
	assert_float_equal(paid, 0.6, EPS);
	assert_float_equal(qos_coupon_awarded_total(t), 0.6, EPS);
	assert_int_equal(qos_coupon_job_get(t, "A", &ia), 0);
	assert_int_equal(qos_coupon_job_get(t, "B", &ib), 0);
	assert_float_equal(ia.awarded_nh, 0.5, EPS);
	assert_float_equal(ib.awarded_nh, 0.1, EPS);
	assert_float_equal(ib.owed_nh, 0.2, EPS);
	assert_float_equal(ia.outstanding, 0.0, EPS);
	assert_float_equal(ib.outstanding, 1.0, EPS);  /* the young coupon */
	/* settled coupons stay unredeemed in the window */
	assert_float_equal(qos_coupon_rate(t, "A"), 7.0 / 8, EPS);
	/* budget exhausted: nothing more is paid, even though more is owed */
	qos_coupon_assess(t, 300, 100, 0.6, &paid);
	assert_true(paid == 0.0);
	assert_float_equal(qos_coupon_awarded_total(t), 0.6, EPS);
	assert_float_equal(qos_coupon_liability(t), 0.2 + 1.0, EPS);
	/* a larger budget pays what is owed, never more than the budget */
	qos_coupon_assess(t, 400, 100, 1.0, &paid);
	assert_float_equal(paid, 0.4, EPS);
	assert_float_equal(qos_coupon_awarded_total(t), 1.0, EPS);
	assert_int_equal(qos_coupon_job_get(t, "B", &ib), 0);
	assert_float_equal(ib.owed_nh, 0.8, EPS);
	qos_coupon_table_destroy(t);
}

static void test_coupon_many_jobs_and_coupons(void **st)
{
	qos_coupon_table *t = mk(3, 0.0);
	char id[32];
	(void)st;
	/* exercises hash growth, ring wrap-around and pool reuse */
	for (int k = 0; k < 50; k++)
		for (int j = 0; j < 200; j++) {
			snprintf(id, sizeof(id), "job-%d", j);
			assert_int_equal(qos_coupon_issue(t, id, 1.0, k, 1), 0);
			if (k % 2)
				assert_float_equal(qos_coupon_redeem(t, id, 1.5), 1.5, EPS);
		}
	assert_int_equal(qos_coupon_njobs(t), 200);
	/* each job: 50 coupons issued, 25 * 1.5 = 37.5 redeemed */
	assert_float_equal(qos_coupon_outstanding(t, "job-7"), 12.5, 1e-9);
	qos_coupon_assess(t, 1000, 0, 1e9, NULL);
	assert_true(qos_coupon_outstanding(t, "job-7") == 0.0);
	assert_float_equal(qos_coupon_awarded_total(t), 200 * 12.5 / 3600, 1e-9);
	qos_coupon_table_destroy(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_coupon_create_invalid),
		cmocka_unit_test(test_coupon_new_job_is_friendly),
		cmocka_unit_test(test_coupon_rate_falls_until_tau),
		cmocka_unit_test(test_coupon_partial_redemption),
		cmocka_unit_test(test_coupon_multiple_redemption),
		cmocka_unit_test(test_coupon_window_recedes),
		cmocka_unit_test(test_coupon_system_reset_at_assessment),
		cmocka_unit_test(test_coupon_regret_budget_bounds_awards),
		cmocka_unit_test(test_coupon_many_jobs_and_coupons),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
