/* test_qos_padll.c — PADLL control algorithms (padll.txt sec. IV): the
 * paper's evaluation settings (Max_R = 110 kops/s, Table I limits), hand-
 * computed PSFA runs of Algorithm 1, and invariants: PSFA never exceeds
 * Max_R and gives leftovers by usage; proportional sharing is max-min fair
 * with demands. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "qos/padll.h"
#include "qos/policy.h"

#define EPS 1e-9

static uint64_t lcg_state;
static double lcg01(void)
{
	lcg_state = lcg_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (double)(lcg_state >> 11) / 9007199254740992.0;
}

static double sum(const double *v, size_t n)
{
	double s = 0;
	for (size_t i = 0; i < n; i++)
		s += v[i];
	return s;
}

/* Sec. V-C: "In Uniform, each job is rate limited to 27.5 kops/s" with
 * Max_R = 110 kops/s and four jobs. */
static void test_padll_uniform(void **st)
{
	double rate[4];
	assert_int_equal(qos_padll_uniform(110, 4, rate), 0);
	for (int i = 0; i < 4; i++)
		assert_true(fabs(rate[i] - 27.5) < EPS);
	assert_int_equal(qos_padll_uniform(-1, 4, rate), -EINVAL);
	assert_int_equal(qos_padll_uniform(110, 0, NULL), 0);
}

/* Table I, scenario #1: priorities 15/25/30/40 kops/s of Max_R = 110. */
static void test_padll_priority(void **st)
{
	const double w[4] = {15, 25, 30, 40};
	double rate[4];
	assert_int_equal(qos_padll_priority(110, w, 4, rate), 0);
	for (int i = 0; i < 4; i++)
		assert_true(fabs(rate[i] - w[i]) < EPS);
	/* unset weights count as 1 */
	const double w2[3] = {0, 2, -5};
	assert_int_equal(qos_padll_priority(100, w2, 3, rate), 0);
	assert_true(fabs(rate[0] - 25) < EPS);
	assert_true(fabs(rate[1] - 50) < EPS);
	assert_true(fabs(rate[2] - 25) < EPS);
}

/* Sec. V-C, the jobs entering one by one (phases 1-4) and leaving
 * (5-7): uniform and priority rates are the configured ones throughout,
 * 27.5 kops/s per job for Max_R = 110 and four jobs, Table I's 15/25/30/40
 * kops/s for priority, whoever else is present; a departed job's share
 * stays unused.  More jobs than configured shrink to Max_R / n. */
static void test_padll_static_policies_fixed_rates(void **st)
{
	const double prio[4] = {15, 25, 30, 40};
	qos_job jobs[5];
	uint8_t active[5];
	double capacity[1] = {110}, usage[5] = {0}, alloc[5];
	qos_instance in = {.n_osts = 1, .capacity = capacity, .jobs = jobs,
			   .active = active, .usage = usage, .period = 1};
	qos_result res = {.alloc = alloc};
	const qos_policy_ops *u = qos_policy_find("uniform");
	const qos_policy_ops *pr = qos_policy_find("priority");
	qos_param pj = {"jobs", 4}, pw = {"weight_sum", 110};
	qos_params uj = {&pj, 1, 0}, pws = {&pw, 1, 0};
	void *su = NULL, *sp = NULL;

	memset(jobs, 0, sizeof(jobs));
	for (int i = 0; i < 5; i++) {
		snprintf(jobs[i].id, sizeof(jobs[i].id), "job%d", i + 1);
		jobs[i].priority = i < 4 ? prio[i] : 40;
		active[i] = 1;
	}
	assert_int_equal(u->create(&uj, &su), 0);
	assert_int_equal(pr->create(&pws, &sp), 0);
	/* phases 1-4: jobs 1..n present */
	for (size_t n = 1; n <= 4; n++) {
		in.n_jobs = n;
		assert_int_equal(u->decide(su, &in, &res), 0);
		for (size_t i = 0; i < n; i++)
			assert_true(fabs(alloc[i] - 27.5) < EPS);
		assert_int_equal(pr->decide(sp, &in, &res), 0);
		for (size_t i = 0; i < n; i++)
			assert_true(fabs(alloc[i] - prio[i]) < EPS);
	}
	/* phases 5-7: the first jobs leave; the last one keeps its rate */
	in.jobs = &jobs[3];
	in.n_jobs = 1;
	assert_int_equal(u->decide(su, &in, &res), 0);
	assert_true(fabs(alloc[0] - 27.5) < EPS);
	assert_int_equal(pr->decide(sp, &in, &res), 0);
	assert_true(fabs(alloc[0] - 40) < EPS);
	/* a fifth job: 5 x 27.5 would exceed Max_R */
	in.jobs = jobs;
	in.n_jobs = 5;
	assert_int_equal(u->decide(su, &in, &res), 0);
	assert_true(fabs(sum(alloc, 5) - 110) < EPS);
	assert_true(fabs(alloc[0] - 22) < EPS);
	assert_int_equal(pr->decide(sp, &in, &res), 0);
	assert_true(fabs(sum(alloc, 5) - 110) < EPS);
	assert_true(fabs(alloc[0] - 110.0 * 15 / 150) < EPS);
	u->destroy(su);
	pr->destroy(sp);

	/* Without the configured population: the largest one seen so far,
	 * so shares never grow when jobs leave. */
	assert_int_equal(u->create(NULL, &su), 0);
	in.n_jobs = 4;
	assert_int_equal(u->decide(su, &in, &res), 0);
	assert_true(fabs(alloc[3] - 27.5) < EPS);
	in.n_jobs = 2;
	assert_int_equal(u->decide(su, &in, &res), 0);
	assert_true(fabs(alloc[0] - 27.5) < EPS && fabs(alloc[1] - 27.5) < EPS);
	u->destroy(su);

	/* bad parameters */
	qos_param bad_jobs = {"jobs", 2.5}, neg = {"weight_sum", -1};
	qos_params pb = {&bad_jobs, 1, 0}, pn = {&neg, 1, 0};
	assert_int_equal(u->create(&pb, &su), -EINVAL);
	assert_int_equal(pr->create(&pn, &sp), -EINVAL);
	assert_int_equal(pr->create(&uj, &sp), -EINVAL);   /* "jobs" is uniform's */
	double rate[2];
	assert_int_equal(qos_padll_static(110, NULL, 2, 4, rate), 0);
	assert_true(fabs(rate[0] - 27.5) < EPS);
	assert_int_equal(qos_padll_static(110, NULL, 2, -1, rate), -EINVAL);
}

/* Max-min with demands, table-driven (0 = no limit). */
static void test_padll_maxmin_table(void **st)
{
	static const struct {
		double Max_R;
		size_t n;
		double demand[4];
		double want[4];
		double left;
	} t[] = {
		/* Table I #1: all demands fit exactly */
		{110, 4, {15, 25, 30, 40}, {15, 25, 30, 40}, 0},
		/* unsatisfied jobs share equally what small ones leave */
		{90, 3, {10, 50, 60}, {10, 40, 40}, 0},
		/* no limit takes the rest */
		{100, 2, {0, 20}, {80, 20}, 0},
		/* under-loaded: leftover */
		{110, 2, {15, 25}, {15, 25}, 70},
		/* all unlimited: equal split */
		{60, 3, {0, 0, 0}, {20, 20, 20}, 0},
	};
	for (size_t k = 0; k < sizeof(t) / sizeof(t[0]); k++) {
		double rate[4], left = -1;
		assert_int_equal(qos_padll_maxmin(t[k].Max_R, t[k].demand, t[k].n,
						  rate, &left), 0);
		for (size_t i = 0; i < t[k].n; i++)
			assert_true(fabs(rate[i] - t[k].want[i]) < EPS);
		assert_true(fabs(left - t[k].left) < EPS);
	}
}

/* Proportional sharing: the leftover after max-min goes by demand, and
 * the whole Max_R is handed out. */
static void test_padll_proportional_leftover(void **st)
{
	const double demand[2] = {15, 25};
	double rate[2];
	assert_int_equal(qos_padll_proportional(110, demand, 2, rate), 0);
	assert_true(fabs(rate[0] - (15 + 70.0 * 15 / 40)) < EPS);
	assert_true(fabs(rate[1] - (25 + 70.0 * 25 / 40)) < EPS);
	/* a job alone gets all of Max_R ("assigned its proportional share") */
	assert_int_equal(qos_padll_proportional(110, demand, 1, rate), 0);
	assert_true(fabs(rate[0] - 110) < EPS);
	/* all four: exactly their demands (sec. V-C ④) */
	const double d4[4] = {15, 25, 30, 40};
	double r4[4];
	assert_int_equal(qos_padll_proportional(110, d4, 4, r4), 0);
	for (int i = 0; i < 4; i++)
		assert_true(fabs(r4[i] - d4[i]) < EPS);
}

/* Max-min fairness on random tables: nobody above its demand, Σ <= Max_R,
 * an unsatisfied job gets at least as much as anyone else, and when
 * anyone is unsatisfied nothing is left over. */
static void test_padll_maxmin_invariants(void **st)
{
	lcg_state = 7;
	for (int round = 0; round < 500; round++) {
		size_t n = 1 + (size_t)(lcg01() * 10);
		double demand[10], rate[10], left, Max_R = 1 + lcg01() * 200;
		for (size_t i = 0; i < n; i++)
			demand[i] = lcg01() < 0.1 ? 0 : lcg01() * 60;
		assert_int_equal(qos_padll_maxmin(Max_R, demand, n, rate, &left), 0);
		assert_true(sum(rate, n) <= Max_R * (1 + 1e-12));
		int unsat = 0;
		for (size_t i = 0; i < n; i++) {
			double d = demand[i] > 0 ? demand[i] : INFINITY;
			assert_true(rate[i] <= d + EPS);
			if (rate[i] < d - 1e-7) {
				unsat = 1;
				for (size_t k = 0; k < n; k++)
					assert_true(rate[k] <= rate[i] + 1e-7);
			}
		}
		if (unsat)
			assert_true(left < 1e-7);
		assert_true(fabs(sum(rate, n) + left - Max_R) < 1e-7);
		double prop[10];
		assert_int_equal(qos_padll_proportional(Max_R, demand, n, prop), 0);
		assert_true(fabs(sum(prop, n) - Max_R) < 1e-7);
		for (size_t i = 0; i < n; i++)
			assert_true(prop[i] >= rate[i] - EPS);
	}
}

/* Algorithm 1 by hand: Max_R = 110, ε = 0.5, Table I #1 demands,
 * usages 5/40/30/10.  Requests (lines 5-9): 5 + 10·0.5 = 10; 25 (over
 * demand); 30 + 0 = 30; 10 + 30·0.5 = 25.  Water-fill: 10, 25, 25, 30,
 * left_R = 20, shared by usage/85 (lines 11-14). */
static void test_padll_psfa_worked(void **st)
{
	const double demand[4] = {15, 25, 30, 40};
	const double usage[4] = {5, 40, 30, 10};
	const double base[4] = {10, 25, 30, 25};
	double rate[4];
	assert_int_equal(qos_padll_psfa(110, demand, usage, 4, 0.5, rate), 0);
	for (int i = 0; i < 4; i++)
		assert_true(fabs(rate[i] - (base[i] + 20 * usage[i] / 85)) < EPS);
	assert_true(fabs(sum(rate, 4) - 110) < EPS);

	/* ε = 0: no headroom, a job gets what it used before leftovers. */
	assert_int_equal(qos_padll_psfa(110, demand, usage, 4, 0, rate), 0);
	const double base0[4] = {5, 25, 30, 10};
	for (int i = 0; i < 4; i++)
		assert_true(fabs(rate[i] - (base0[i] + 40 * usage[i] / 85)) < EPS);

	/* Overload: every job above its demand, Max_R = 60: fair shares cap
	 * everyone at 15 and nothing is left. */
	const double hot[4] = {100, 100, 100, 100};
	assert_int_equal(qos_padll_psfa(60, demand, hot, 4, 0.5, rate), 0);
	for (int i = 0; i < 4; i++)
		assert_true(fabs(rate[i] - 15) < EPS);

	/* No usage at all: the leftover is split equally. */
	const double idle[2] = {0, 0};
	assert_int_equal(qos_padll_psfa(100, demand, idle, 2, 0.5, rate), 0);
	assert_true(fabs(rate[0] - (7.5 + (100 - 7.5 - 12.5) / 2)) < EPS);
	assert_true(fabs(sum(rate, 2) - 100) < EPS);
}

/* PSFA never exceeds Max_R, gives leftovers by usage, and does not
 * depend on the order the jobs are listed in. */
static void test_padll_psfa_invariants(void **st)
{
	lcg_state = 99;
	for (int round = 0; round < 500; round++) {
		size_t n = 1 + (size_t)(lcg01() * 8);
		double demand[8], usage[8], rate[8], rrev[8], drev[8], urev[8];
		double Max_R = lcg01() * 150, eps = lcg01();
		for (size_t i = 0; i < n; i++) {
			demand[i] = lcg01() < 0.1 ? 0 : 1 + lcg01() * 50;
			usage[i] = lcg01() * 80;
			drev[n - 1 - i] = demand[i];
			urev[n - 1 - i] = usage[i];
		}
		assert_int_equal(qos_padll_psfa(Max_R, demand, usage, n, eps, rate), 0);
		assert_true(sum(rate, n) <= Max_R * (1 + 1e-12) + 1e-12);
		/* all of Max_R is handed out (usage > 0 here almost surely) */
		assert_true(fabs(sum(rate, n) - Max_R) < 1e-7);
		assert_int_equal(qos_padll_psfa(Max_R, drev, urev, n, eps, rrev), 0);
		for (size_t i = 0; i < n; i++)
			assert_true(fabs(rate[i] - rrev[n - 1 - i]) < 1e-9);
	}
	/* Leftover by usage: under-loaded, jobs' extra over their request is
	 * proportional to usage. */
	const double demand[3] = {100, 100, 100}, usage[3] = {10, 20, 30};
	double rate[3];
	assert_int_equal(qos_padll_psfa(1000, demand, usage, 3, 0, rate), 0);
	for (int i = 0; i < 3; i++)
		assert_true(fabs((rate[i] - usage[i]) / usage[i] - 940.0 / 60) < EPS);
	assert_int_equal(qos_padll_psfa(10, demand, usage, 3, 1.5, rate), -EINVAL);
	const double neg[3] = {1, -1, 1};
	assert_int_equal(qos_padll_psfa(10, demand, neg, 3, 0.5, rate), -EINVAL);
}

/* Through qos/policy.h: two operation classes, an inactive job, demand
 * from the job limit or the demand matrix, params checked. */
static void test_padll_policies(void **st)
{
	const char *names[4] = {"uniform", "priority", "proportional", "psfa"};
	for (int k = 0; k < 4; k++)
		assert_non_null(qos_policy_find(names[k]));

	qos_job jobs[3] = {{.id = "A", .priority = 1, .limit = 15},
			   {.id = "B", .priority = 3, .limit = 25},
			   {.id = "C", .priority = 1, .limit = 30}};
	const char *cls[2] = {"metadata", "data"};
	double capacity[2] = {110, 50};
	uint8_t active[6] = {1, 1, 1, 0, 0, 1};   /* [job][class] */
	double usage[6] = {5, 10, 40, 0, 0, 60};
	double alloc[6];
	qos_instance in = {.n_osts = 2, .n_jobs = 3, .ost_ids = cls,
			   .capacity = capacity, .jobs = jobs, .active = active,
			   .usage = usage, .period = 1};
	qos_result res = {.alloc = alloc};
	void *s = NULL;

	/* uniform: static, every configured job */
	const qos_policy_ops *u = qos_policy_find("uniform");
	assert_int_equal(u->create(NULL, &s), 0);
	assert_int_equal(u->decide(s, &in, &res), 0);
	for (int j = 0; j < 3; j++) {
		assert_true(fabs(alloc[j * 2] - 110.0 / 3) < EPS);
		assert_true(fabs(alloc[j * 2 + 1] - 50.0 / 3) < EPS);
	}
	u->destroy(s);

	/* priority: 1:3:1 */
	const qos_policy_ops *pr = qos_policy_find("priority");
	assert_int_equal(pr->create(NULL, &s), 0);
	assert_int_equal(pr->decide(s, &in, &res), 0);
	assert_true(fabs(alloc[2] - 66) < EPS && fabs(alloc[0] - 22) < EPS);
	pr->destroy(s);

	/* proportional: metadata has A (15) and B (25) active → leftover 70
	 * by demand; data has A (15) and C (30) → leftover 5 by demand */
	const qos_policy_ops *pp = qos_policy_find("proportional");
	assert_int_equal(pp->create(NULL, &s), 0);
	assert_int_equal(pp->decide(s, &in, &res), 0);
	assert_true(fabs(alloc[0] - 41.25) < EPS);
	assert_true(fabs(alloc[2] - 68.75) < EPS);
	assert_true(alloc[4] == 0 && alloc[3] == 0);
	assert_true(fabs(alloc[1] + alloc[5] - 50) < EPS);
	assert_true(fabs(alloc[1] - (15 + 5.0 * 15 / 45)) < EPS);
	pp->destroy(s);
	/* ...and the demand matrix overrides limits */
	double demand[6] = {0, 0, 0, 0, 0, 0};
	in.demand = demand;
	assert_int_equal(pp->create(NULL, &s), 0);
	assert_int_equal(pp->decide(s, &in, &res), 0);
	assert_true(fabs(alloc[0] - 55) < EPS && fabs(alloc[2] - 55) < EPS);
	pp->destroy(s);
	in.demand = NULL;

	/* psfa with epsilon; an unknown parameter is refused */
	const qos_policy_ops *ps = qos_policy_find("psfa");
	qos_param bad = {"tau", 1}, eps = {"epsilon", 0};
	qos_params pb = {&bad, 1, 0}, pe = {&eps, 1, 0};
	assert_int_equal(ps->create(&pb, &s), -EINVAL);
	assert_int_equal(pp->create(&pe, &s), -EINVAL);
	qos_param big = {"epsilon", 2};
	qos_params pbig = {&big, 1, 0};
	assert_int_equal(ps->create(&pbig, &s), -EINVAL);
	assert_int_equal(ps->create(&pe, &s), 0);
	assert_int_equal(ps->decide(s, &in, &res), 0);
	/* metadata: A asks 5, B asks 25 (40 > 25); left 80 by usage 5:40 */
	assert_true(fabs(alloc[0] - (5 + 80.0 * 5 / 45)) < EPS);
	assert_true(fabs(alloc[2] - (25 + 80.0 * 40 / 45)) < EPS);
	assert_true(fabs(alloc[0] + alloc[2] + alloc[4] - 110) < EPS);
	assert_true(alloc[1] + alloc[5] <= 50 + EPS);
	/* effective = Σ min(alloc, usage) = 5 + 40 + 10 + min(alloc_C, 60) */
	assert_true(fabs(res.effective - (5 + 40 + 10 + fmin(alloc[5], 60))) < EPS);
	ps->destroy(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_padll_uniform),
		cmocka_unit_test(test_padll_priority),
		cmocka_unit_test(test_padll_static_policies_fixed_rates),
		cmocka_unit_test(test_padll_maxmin_table),
		cmocka_unit_test(test_padll_proportional_leftover),
		cmocka_unit_test(test_padll_maxmin_invariants),
		cmocka_unit_test(test_padll_psfa_worked),
		cmocka_unit_test(test_padll_psfa_invariants),
		cmocka_unit_test(test_padll_policies),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
