/* test_oss_adapt.c — AdapTBF per OST with synthetic statistics (no clock,
 * no scheduler): priority shares under saturation, lending to a busy job
 * and re-compensation of the lender when it comes back, rule actions for
 * jobs that pause and end, and refusal of bad input without side effects. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "oss/adapt.h"

static const oss_adapt_act *find(const oss_adapt_act *v, size_t n, const char *job)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i].job, job))
			return &v[i];
	return NULL;
}

/* Node counts 1/1/3/5, every job asking far more than the OST serves:
 * the tokens of each period split 10/10/30/50 %, every period. */
static void test_adapt_saturated_shares(void **state)
{
	static const char *const jobs[4] = { "j1", "j2", "j3", "j5" };
	static const double nodes[4] = { 1, 1, 3, 5 };
	static const int64_t want[4] = { 10, 10, 30, 50 };
	oss_adapt *a;

	assert_int_equal(oss_adapt_create(0, &a), 0);
	for (int period = 0; period < 5; period++) {
		oss_adapt_obs obs[4];
		oss_adapt_act *acts;
		size_t n;
		int64_t sum = 0;

		for (int i = 0; i < 4; i++) {
			obs[i].job = jobs[i];
			obs[i].d = 1000; /* RPCs in Δt: far above T·Δt = 100 */
			obs[i].nodes = nodes[i];
		}
		/* T = 1000 RPCs/s, Δt = 0.1 s: 100 tokens per period. */
		assert_int_equal(oss_adapt_period(a, 1000, 0.1, obs, 4, &acts, &n), 0);
		if (period == 0) {
			assert_int_equal(n, 4);
			for (int i = 0; i < 4; i++) {
				const oss_adapt_act *x = find(acts, n, jobs[i]);
				assert_non_null(x);
				assert_int_equal(x->what, OSS_ADAPT_SET);
				assert_int_equal(x->tokens, want[i]);
				assert_true(fabs(x->rate - (double)want[i] * 10) < 1e-9);
				assert_true(x->depth >= 1 && x->depth <= OSS_ADAPT_DEPTH_MAX);
				assert_true(fabs(x->record) < 1e-9); /* nobody lent */
			}
		} else {
			/* Same tokens as before: no rule needs changing. */
			assert_int_equal(n, 0);
		}
		for (int i = 0; i < 4; i++) {
			int64_t t;
			double r;
			assert_int_equal(oss_adapt_job(a, jobs[i], &t, &r), 0);
			assert_int_equal(t, want[i]);
			sum += t;
		}
		assert_int_equal(sum, 100);
		free(acts);
	}
	oss_adapt_destroy(a);
}

/* A job that uses few of its tokens lends them to a busy one; when it needs
 * them again it gets more than its priority share until the loan is paid
 * back (Eq. 9-20). */
static void test_adapt_lend_and_recompensate(void **state)
{
	oss_adapt *a;
	oss_adapt_obs obs[2] = { { "lender", 2, 1 }, { "borrower", 1000, 1 } };
	oss_adapt_act *acts;
	size_t n;
	int64_t tl, tb;
	double rl, rb, rl_before;

	assert_int_equal(oss_adapt_create(0, &a), 0);
	/* Period 1: 50/50 by priority; the lender's surplus goes to the
	 * borrower. */
	assert_int_equal(oss_adapt_period(a, 1000, 0.1, obs, 2, &acts, &n), 0);
	free(acts);
	assert_int_equal(oss_adapt_job(a, "lender", &tl, &rl), 0);
	assert_int_equal(oss_adapt_job(a, "borrower", &tb, &rb), 0);
	assert_int_equal(tl + tb, 100);
	assert_true(tl < 10);
	assert_true(tb > 90);
	assert_true(rl > 40);                 /* lent */
	assert_true(fabs(rl + rb) < 1e-9);    /* records sum to zero */
	rl_before = rl;
	/* Period 2: the lender is back at full demand: re-compensated. */
	obs[0].d = 1000;
	assert_int_equal(oss_adapt_period(a, 1000, 0.1, obs, 2, &acts, &n), 0);
	assert_int_equal(n, 2); /* both rates change */
	free(acts);
	assert_int_equal(oss_adapt_job(a, "lender", &tl, &rl), 0);
	assert_int_equal(oss_adapt_job(a, "borrower", &tb, &rb), 0);
	assert_int_equal(tl + tb, 100);
	assert_true(tl > 60);                 /* above its 50 % share */
	assert_true(rl < rl_before);          /* the loan shrinks */
	assert_true(fabs(rl + rb) < 1e-9);
	oss_adapt_destroy(a);
}

/* A job that stops sending: its rule is cleared (fallback queue), its
 * record kept; after forget_periods it is forgotten. */
static void test_adapt_pause_and_forget(void **state)
{
	oss_adapt *a;
	oss_adapt_obs obs[2] = { { "stay", 500, 1 }, { "pause", 500, 1 } };
	oss_adapt_act *acts;
	size_t n;
	int64_t t;
	double r;

	assert_int_equal(oss_adapt_create(3, &a), 0);
	assert_int_equal(oss_adapt_period(a, 1000, 0.1, obs, 2, &acts, &n), 0);
	free(acts);
	/* "pause" is absent: CLEAR once, and "stay" gets every token. */
	assert_int_equal(oss_adapt_period(a, 1000, 0.1, obs, 1, &acts, &n), 0);
	assert_int_equal(find(acts, n, "pause")->what, OSS_ADAPT_CLEAR);
	assert_int_equal(find(acts, n, "stay")->what, OSS_ADAPT_SET);
	assert_int_equal(find(acts, n, "stay")->tokens, 100);
	free(acts);
	assert_int_equal(oss_adapt_job(a, "pause", &t, &r), 0);
	assert_int_equal(t, -1);
	assert_int_equal(oss_adapt_njobs(a), 2);
	/* Absent again: nothing more to clear. */
	assert_int_equal(oss_adapt_period(a, 1000, 0.1, obs, 1, &acts, &n), 0);
	assert_null(find(acts, n, "pause"));
	free(acts);
	/* Third absent period: forgotten. */
	assert_int_equal(oss_adapt_period(a, 1000, 0.1, obs, 1, &acts, &n), 0);
	assert_int_equal(find(acts, n, "pause")->what, OSS_ADAPT_FORGET);
	free(acts);
	assert_int_equal(oss_adapt_job(a, "pause", &t, &r), -ENOENT);
	assert_int_equal(oss_adapt_njobs(a), 1);
	{
		char (*ids)[PFS_JOBID_MAX + 1];
		assert_int_equal(oss_adapt_ruled(a, &ids, &n), 0);
		assert_int_equal(n, 1);
		assert_string_equal(ids[0], "stay");
		free(ids);
	}
	oss_adapt_destroy(a);
}

static void test_adapt_bad_input(void **state)
{
	oss_adapt *a;
	oss_adapt_obs ok[1] = { { "a", 5, 1 } };
	oss_adapt_obs dup[2] = { { "a", 5, 1 }, { "a", 3, 1 } };
	oss_adapt_obs neg[1] = { { "b", -1, 1 } };
	oss_adapt_obs zero_nodes[1] = { { "b", 1, 0 } };
	oss_adapt_obs new_dup[3] = { { "x", 1, 1 }, { "y", 1, 1 }, { "x", 1, 1 } };
	oss_adapt_act *acts = (oss_adapt_act *)1;
	size_t n = 99;

	assert_int_equal(oss_adapt_create(0, &a), 0);
	assert_int_equal(oss_adapt_period(a, -1, 0.1, ok, 1, &acts, &n), -EINVAL);
	assert_null(acts);
	assert_int_equal(n, 0);
	assert_int_equal(oss_adapt_period(a, 100, 0, ok, 1, &acts, &n), -EINVAL);
	assert_int_equal(oss_adapt_period(a, NAN, 0.1, ok, 1, &acts, &n), -EINVAL);
	assert_int_equal(oss_adapt_period(a, 100, 0.1, neg, 1, &acts, &n), -EINVAL);
	assert_int_equal(oss_adapt_period(a, 100, 0.1, zero_nodes, 1, &acts, &n), -EINVAL);
	assert_int_equal(oss_adapt_period(a, 100, 0.1, ok, 1, &acts, &n), 0);
	free(acts);
	assert_int_equal(oss_adapt_njobs(a), 1);
	/* Duplicates are refused and leave no trace of new jobs. */
	assert_int_equal(oss_adapt_period(a, 100, 0.1, dup, 2, &acts, &n), -EINVAL);
	assert_int_equal(oss_adapt_period(a, 100, 0.1, new_dup, 3, &acts, &n), -EINVAL);
	assert_int_equal(oss_adapt_njobs(a), 1);
	/* And the state still works. */
	assert_int_equal(oss_adapt_period(a, 100, 0.1, ok, 1, &acts, &n), 0);
	free(acts);
	{
		int64_t t;
		double r;
		assert_int_equal(oss_adapt_job(a, "a", &t, &r), 0);
		assert_int_equal(t, 10);
	}
	oss_adapt_destroy(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_adapt_saturated_shares),
		cmocka_unit_test(test_adapt_lend_and_recompensate),
		cmocka_unit_test(test_adapt_pause_and_forget),
		cmocka_unit_test(test_adapt_bad_input),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
