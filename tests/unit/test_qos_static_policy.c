/* test_qos_static_policy.c — the "static" policy: node x priority shares
 * per OST among active jobs, capacity never exceeded, params rejected. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>

#include "qos/static_policy.h"

static void test_static_policy_shares_table(void **state)
{
	/* 2 OSTs, 3 jobs: A 4 nodes, B 2 nodes prio 3, C 2 nodes.
	 * ost1: A, B, C active -> weights 4, 6, 2 of 12.
	 * ost2: A, C active -> 4, 2 of 6. */
	const qos_job jobs[3] = {
		{ .id = "A", .nodes = 4, .priority = 1 },
		{ .id = "B", .nodes = 2, .priority = 3 },
		{ .id = "C", .nodes = 2 },
	};
	const double cap[2] = { 1.2, 3.0 };
	const uint8_t active[6] = { 1, 1, 1, 0, 1, 1 };
	const double usage[6] = { 0.1, 0, 0.6, 0, 0.1, 5.0 };
	qos_instance in = { .n_osts = 2, .n_jobs = 3, .capacity = cap,
			    .jobs = jobs, .active = active, .usage = usage,
			    .period = 1 };
	double alloc[6];
	qos_result res = { .alloc = alloc };
	void *st;
	const double want[6] = { 0.4, 2.0, 0.6, 0, 0.2, 1.0 };

	(void)state;
	const qos_policy_ops *ops = qos_policy_find("static");
	assert_ptr_equal(ops, &qos_policy_static);
	assert_string_equal(ops->name, "static");
	assert_int_equal(ops->create(NULL, &st), 0);
	assert_int_equal(ops->decide(st, &in, &res), 0);
	for (int i = 0; i < 6; i++)
		assert_true(fabs(alloc[i] - want[i]) < 1e-12);
	/* capacity of each OST exactly handed out among active jobs */
	assert_true(fabs(alloc[0] + alloc[2] + alloc[4] - 1.2) < 1e-12);
	assert_true(fabs(alloc[1] + alloc[3] + alloc[5] - 3.0) < 1e-12);
	/* effective = sum min(alloc, usage) = 0.1+0+0.6+0+0.1+1.0 */
	assert_true(fabs(res.effective - 1.8) < 1e-12);
	ops->destroy(st);
}

static void test_static_policy_no_active_means_all(void **state)
{
	const qos_job jobs[2] = { { .id = "A", .nodes = 1 },
				  { .id = "B", .nodes = 3 } };
	const double cap[1] = { 8 };
	qos_instance in = { .n_osts = 1, .n_jobs = 2, .capacity = cap,
			    .jobs = jobs };
	double alloc[2];

	(void)state;
	assert_int_equal(qos_static_shares(&in, alloc), 0);
	assert_true(fabs(alloc[0] - 2) < 1e-12 && fabs(alloc[1] - 6) < 1e-12);
	const double bad[1] = { -1 };
	in.capacity = bad;
	assert_int_equal(qos_static_shares(&in, alloc), -EINVAL);
}

static void test_static_policy_rejects_params(void **state)
{
	const qos_param pv[1] = { { "tau", 0.5 } };
	qos_params p = { .v = pv, .n = 1 };
	void *st = NULL;

	(void)state;
	assert_int_equal(qos_policy_static.create(&p, &st), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_static_policy_shares_table),
		cmocka_unit_test(test_static_policy_no_active_means_all),
		cmocka_unit_test(test_static_policy_rejects_params),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
