/* test_qos_sharp.c — SHARP (ascar.txt Algorithm 1, Table II): step sizes
 * and candidate values, splitting at observed means, finding the optimum
 * of a synthetic score function with one and with two regions of the
 * congestion space, evaluation budget, callback errors. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>

#include "qos/sharp.h"

/* A synthetic workload: congestion states visited (with weights), each
 * with the action that would serve it best.  Score = sum over states of
 * weight * (100 - squared distance of the matching rule's action from the
 * state's optimum, measured in Table II delta_gran units). */
struct point {
	double c[3];
	qos_ascar_action opt;
};

struct world {
	const struct point *pts;
	size_t n;
	unsigned long calls;
};

static int synth_bench(void *arg, qos_ascar_ruleset *rs, double *score)
{
	struct world *w = arg;
	double s = 0;

	w->calls++;
	for (size_t i = 0; i < w->n; i++) {
		const struct point *p = &w->pts[i];
		int k = qos_ascar_ruleset_lookup(rs, p->c);
		if (k < 0)
			return -EINVAL; /* the rule set must cover every state */
		qos_ascar_rule *r = &rs->r[k];
		double dm = (r->a.m - p->opt.m) / 0.05;
		double db = (r->a.b - p->opt.b) / 0.3;
		double dt = (r->a.tau - p->opt.tau) / 500;
		s += 100 - (dm * dm + db * db + dt * dt);
		r->hits += 1;
		for (int d = 0; d < 3; d++)
			r->sum[d] += p->c[d];
	}
	*score = s;
	return 0;
}

static void test_sharp_table2_steps_and_values(void **state)
{
	qos_sharp_var m = qos_sharp_table2(QOS_SHARP_M);
	qos_sharp_var t = qos_sharp_table2(QOS_SHARP_TAU);
	double v[64];

	(void)state;
	/* (1.7 / 0.05)^(1/4) and (70000 / 500)^(1/6) */
	assert_true(fabs(qos_sharp_step_size(&m) - pow(34, 0.25)) < 1e-12);
	assert_true(fabs(qos_sharp_step_size(&t) - pow(140, 1.0 / 6)) < 1e-12);
	/* m at 1: 1 +- 0.05 * k^i for i = 0..4, clamped to [0.3, 2] */
	int n = qos_sharp_values(&m, 1.0, v, 64);
	assert_true(n > 5 && n <= 11);
	for (int i = 1; i < n; i++)
		assert_true(v[i] > v[i - 1]);
	assert_true(v[0] == 0.3 && v[n - 1] == 2.0);
	int has1 = 0, has105 = 0, has095 = 0;
	for (int i = 0; i < n; i++) {
		has1 |= v[i] == 1.0;
		has105 |= fabs(v[i] - 1.05) < 1e-12;
		has095 |= fabs(v[i] - 0.95) < 1e-12;
	}
	assert_true(has1 && has105 && has095);
	/* finer near x than far from it (geometric steps) */
	qos_sharp_var bad = { 1, 0, 0.1, 4 };
	assert_int_equal(qos_sharp_values(&bad, 0.5, v, 64), -EINVAL);
}

static void test_sharp_split_at_means(void **state)
{
	qos_ascar_ruleset rs;

	(void)state;
	qos_ascar_ruleset_init(&rs);
	assert_int_equal(qos_ascar_ruleset_default(&rs), 0);
	assert_int_equal(qos_sharp_split(&rs, 0), -EINVAL); /* no hits */
	rs.r[0].hits = 4;
	rs.r[0].sum[0] = 40;  /* mean ack 10 */
	rs.r[0].sum[1] = 80;  /* mean send 20 */
	rs.r[0].sum[2] = 12;  /* mean pt 3 */
	rs.r[0].a = (qos_ascar_action){ 1.5, 0.5, 700 };
	assert_int_equal(qos_sharp_split(&rs, 0), 8);
	assert_int_equal(rs.n, 8);
	/* the 8 boxes partition the space: each state matches exactly one */
	const double probes[4][3] = { { 0, 0, 0 }, { 9.9, 25, 3 },
				      { 10, 19.9, 100 }, { 1e9, 1e9, 2.9 } };
	for (int p = 0; p < 4; p++) {
		int k = qos_ascar_ruleset_lookup(&rs, probes[p]);
		assert_true(k >= 0);
		assert_true(rs.r[k].a.m == 1.5 && rs.r[k].a.tau == 700);
		assert_true(rs.r[k].hits == 0);
	}
	const double a[3] = { 9.9, 25, 3 }, b[3] = { 10, 25, 3 };
	assert_int_not_equal(qos_ascar_ruleset_lookup(&rs, a),
			     qos_ascar_ruleset_lookup(&rs, b));
	/* a mean on the box edge does not split that dimension */
	rs.r[1].hits = 1;
	rs.r[1].sum[0] = rs.r[1].lo[0];
	rs.r[1].sum[1] = rs.r[1].lo[1];
	rs.r[1].sum[2] = (rs.r[1].lo[2] + (isinf(rs.r[1].hi[2]) ? 10 : rs.r[1].hi[2])) / 2;
	assert_int_equal(qos_sharp_split(&rs, 1), 2);
	assert_int_equal(rs.n, 9);
	qos_ascar_ruleset_free(&rs);
}

static void test_sharp_finds_single_optimum(void **state)
{
	const struct point pts[] = {
		{ { 20, 20, 1.5 }, { 1.5, 1.0, 5000 } },
		{ { 30, 10, 2.5 }, { 1.5, 1.0, 5000 } },
	};
	struct world w = { pts, 2, 0 };
	qos_sharp_params p = { .max_epochs = 1 };
	qos_sharp_result r;

	(void)state;
	assert_int_equal(qos_sharp_run(&p, synth_bench, &w, &r), 0);
	assert_int_equal(r.epochs, 1);
	assert_int_equal(r.evals, w.calls);
	int k = qos_ascar_ruleset_lookup(&r.best, pts[0].c);
	assert_true(k >= 0);
	qos_ascar_action a = r.best.r[k].a;
	/* on the optimum to within one delta_gran of each variable,
	 * starting from <1, 0, 20000> */
	assert_true(fabs(a.m - 1.5) <= 0.05 + 1e-9);
	assert_true(fabs(a.b - 1.0) <= 0.3 + 1e-9);
	assert_true(fabs(a.tau - 5000) <= 500 + 1e-9);
	assert_true(r.best_score >= 2 * 100 - 2 * 3);
	qos_sharp_result_free(&r);
}

static void test_sharp_splits_to_reach_two_optima(void **state)
{
	/* Region A (low PT ratio) wants a small window and short gaps;
	 * region B (high PT ratio) a large window and long gaps. */
	struct point pts[8];
	const qos_ascar_action oa = { 0.5, -1.0, 1000 }, ob = { 1.8, 2.0, 40000 };
	for (int i = 0; i < 4; i++) {
		pts[i] = (struct point){ { 10, 10, 1.2 + 0.2 * i }, oa };
		pts[4 + i] = (struct point){ { 10, 10, 4.2 + 0.2 * i }, ob };
	}
	struct world w = { pts, 8, 0 };
	qos_sharp_params p = { .max_epochs = 3 };
	qos_sharp_result r, one;

	(void)state;
	/* With one rule the best is a compromise ... */
	p.max_epochs = 1;
	assert_int_equal(qos_sharp_run(&p, synth_bench, &w, &one), 0);
	/* ... splitting at the mean PT ratio (3.0) separates the regions
	 * and later epochs optimise each. */
	p.max_epochs = 3;
	assert_int_equal(qos_sharp_run(&p, synth_bench, &w, &r), 0);
	assert_int_equal(r.epochs, 3);
	assert_true(r.best.n > 1);
	assert_true(r.best_score > one.best_score + 1000);
	for (int i = 0; i < 8; i++) {
		int k = qos_ascar_ruleset_lookup(&r.best, pts[i].c);
		assert_true(k >= 0);
		qos_ascar_action a = r.best.r[k].a, o = pts[i].opt;
		assert_true(fabs(a.m - o.m) <= 0.05 + 1e-9);
		assert_true(fabs(a.b - o.b) <= 0.3 + 1e-9);
		assert_true(fabs(a.tau - o.tau) <= 500 + 1e-9);
	}
	qos_sharp_result_free(&one);
	qos_sharp_result_free(&r);
}

static void test_sharp_budget_and_errors(void **state)
{
	const struct point pts[] = { { { 1, 1, 1 }, { 1, 0, 0 } } };
	struct world w = { pts, 1, 0 };
	qos_sharp_params p = { .max_epochs = 10, .max_evals = 50 };
	qos_sharp_result r;

	(void)state;
	assert_int_equal(qos_sharp_run(&p, synth_bench, &w, &r), 0);
	assert_int_equal(r.evals, 50);
	assert_int_equal(w.calls, 50);
	assert_true(r.best.n >= 1);
	qos_sharp_result_free(&r);
	/* a benchmark failure aborts the search with its error */
	qos_ascar_ruleset hole;
	qos_ascar_ruleset_init(&hole);
	assert_int_equal(qos_ascar_ruleset_parse("[0,1) [0,1) [0,1) 1 0 0\n",
						 &hole, NULL), 0);
	p.start = &hole;
	assert_int_equal(qos_sharp_run(&p, synth_bench, &w, &r), -EINVAL);
	qos_sharp_result_free(&r);
	qos_ascar_ruleset_free(&hole);
	/* bad settings */
	qos_sharp_params bad = { .var[0] = { 2, 1, 0.1, 4 } };
	assert_int_equal(qos_sharp_run(&bad, synth_bench, &w, &r), -EINVAL);
	qos_sharp_result_free(&r);
	assert_int_equal(qos_sharp_run(NULL, NULL, &w, &r), -EINVAL);
	qos_sharp_result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sharp_table2_steps_and_values),
		cmocka_unit_test(test_sharp_split_at_means),
		cmocka_unit_test(test_sharp_finds_single_optimum),
		cmocka_unit_test(test_sharp_splits_to_reach_two_optima),
		cmocka_unit_test(test_sharp_budget_and_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
