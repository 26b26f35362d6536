/* test_qos_sharp.c — SHARP (ascar.txt Algorithm 1, Table II): step sizes
 * and candidate values, splitting at observed means, finding the optimum
 * of a synthetic score function with one and with two regions of the
 * congestion space, evaluation budget, callback errors; the budgeted
 * search (hill climbing with splits, sampling): exact budget, seeded
 * determinism, progress toward the optimum, errors; the score. */
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

static int action_equal(qos_ascar_action a, qos_ascar_action b)
{
	return a.m == b.m && a.b == b.b && a.tau == b.tau;
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

static double dist_units(qos_ascar_action a, qos_ascar_action o)
{
	double dm = (a.m - o.m) / 0.05, db = (a.b - o.b) / 0.3, dt = (a.tau - o.tau) / 500;

	return sqrt(dm * dm + db * db + dt * dt);
}

static void test_search_budget_and_determinism(void **state)
{
	const struct point pts[] = {
		{ { 20, 20, 1.5 }, { 1.5, 1.0, 5000 } },
		{ { 30, 10, 2.5 }, { 1.5, 1.0, 5000 } },
	};
	struct world w = { pts, 2, 0 };
	qos_sharp_budget p = { .runs = 40, .mode = QOS_SHARP_HILL, .seed = 7 };
	qos_sharp_result a, b, c;
	qos_ascar_ruleset start;

	(void)state;
	qos_ascar_ruleset_init(&start);
	assert_int_equal(qos_ascar_ruleset_default(&start), 0);
	/* the start set's own score: every later best must beat it */
	double s0;
	assert_int_equal(synth_bench(&w, &start, &s0), 0);
	w.calls = 0;
	assert_int_equal(qos_sharp_search(&p, synth_bench, &w, &a), 0);
	assert_int_equal(a.evals, 40);
	assert_int_equal(w.calls, 40);
	assert_true(a.best_score > s0);
	/* same seed, same search */
	assert_int_equal(qos_sharp_search(&p, synth_bench, &w, &b), 0);
	assert_true(a.best_score == b.best_score);
	assert_true(action_equal(a.best.r[0].a, b.best.r[0].a));
	/* sampled mode spends the same budget and never splits */
	p.mode = QOS_SHARP_SAMPLED;
	w.calls = 0;
	assert_int_equal(qos_sharp_search(&p, synth_bench, &w, &c), 0);
	assert_int_equal(w.calls, 40);
	assert_int_equal(c.best.n, 1);
	assert_int_equal(c.epochs, 0);
	assert_true(c.best_score >= s0);
	qos_sharp_result_free(&a);
	qos_sharp_result_free(&b);
	qos_sharp_result_free(&c);
	qos_ascar_ruleset_free(&start);
}

static void test_search_hill_climbs_toward_optimum(void **state)
{
	const struct point pts[] = {
		{ { 20, 20, 1.5 }, { 1.5, 1.0, 5000 } },
	};
	const qos_ascar_action o = pts[0].opt, a0 = { 1, 0, 20000 };
	struct world w = { pts, 1, 0 };
	qos_sharp_budget p = { .runs = 150, .mode = QOS_SHARP_HILL };
	int close = 0;

	(void)state;
	/* far fewer runs than one Alg. 1 round (11 x 11 x 15), yet every
	 * seed ends much nearer the optimum than the start */
	for (unsigned long long seed = 1; seed <= 5; seed++) {
		qos_sharp_result r;
		p.seed = seed;
		assert_int_equal(qos_sharp_search(&p, synth_bench, &w, &r), 0);
		int k = qos_ascar_ruleset_lookup(&r.best, pts[0].c);
		assert_true(k >= 0);
		double d = dist_units(r.best.r[k].a, o);
		assert_true(d < dist_units(a0, o) / 4);
		close += d <= 3;
		qos_sharp_result_free(&r);
	}
	assert_true(close >= 3);
}

static void test_search_splits_two_regions(void **state)
{
	struct point pts[8];
	const qos_ascar_action oa = { 0.5, -1.0, 1000 }, ob = { 1.8, 2.0, 40000 };
	for (int i = 0; i < 4; i++) {
		pts[i] = (struct point){ { 10, 10, 1.2 + 0.2 * i }, oa };
		pts[4 + i] = (struct point){ { 10, 10, 4.2 + 0.2 * i }, ob };
	}
	struct world w = { pts, 8, 0 };
	qos_sharp_budget p = { .runs = 300, .mode = QOS_SHARP_HILL, .seed = 3,
			       .patience = 20 };
	qos_sharp_result r;

	(void)state;
	assert_int_equal(qos_sharp_search(&p, synth_bench, &w, &r), 0);
	assert_int_equal(r.evals, 300);
	assert_true(r.epochs >= 1);
	assert_true(r.best.n > 1);
	/* better than any single rule can be: the best compromise
	 * (midpoints) scores 8 * (100 - d^2) with d = half the distance */
	double half = dist_units(oa, ob) / 2;
	assert_true(r.best_score > 8 * (100 - half * half));
	qos_sharp_result_free(&r);
}

static int failing_bench(void *arg, qos_ascar_ruleset *rs, double *score)
{
	unsigned long *n = arg;

	(void)rs;
	*score = 1;
	return ++*n == 3 ? -EIO : 0;
}

static void test_search_errors_and_score(void **state)
{
	qos_sharp_budget p = { .runs = 10 };
	qos_sharp_result r;
	unsigned long n = 0;

	(void)state;
	assert_int_equal(qos_sharp_search(&p, failing_bench, &n, &r), -EIO);
	assert_int_equal(n, 3);
	qos_sharp_result_free(&r);
	p.runs = 0;
	assert_int_equal(qos_sharp_search(&p, failing_bench, &n, &r), -EINVAL);
	qos_sharp_result_free(&r);
	p.runs = 5;
	p.mode = 9;
	assert_int_equal(qos_sharp_search(&p, failing_bench, &n, &r), -EINVAL);
	qos_sharp_result_free(&r);
	p.mode = QOS_SHARP_HILL;
	p.var[2] = (qos_sharp_var){ 5, 1, 1, 2 };
	assert_int_equal(qos_sharp_search(&p, failing_bench, &n, &r), -EINVAL);
	qos_sharp_result_free(&r);
	assert_int_equal(qos_sharp_search(NULL, failing_bench, &n, &r), -EINVAL);
	qos_sharp_result_free(&r);

	/* throughput only, latency only, both; references of 0 count as 1 */
	assert_true(fabs(qos_sharp_score(200, 50, 100, 10, 0) - 2) < 1e-12);
	assert_true(fabs(qos_sharp_score(200, 50, 100, 10, 1) + 5) < 1e-12);
	assert_true(fabs(qos_sharp_score(200, 50, 100, 10, 0.5) - (1 - 2.5)) < 1e-12);
	assert_true(fabs(qos_sharp_score(3, 0, 0, 0, 0) - 3) < 1e-12);
	assert_true(qos_sharp_score(100, 20, 100, 10, 0.5) < qos_sharp_score(100, 10, 100, 10, 0.5));
	assert_true(isinf(qos_sharp_score(NAN, 1, 1, 1, 0)));
	assert_true(isinf(qos_sharp_score(-1, 1, 1, 1, 0)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sharp_table2_steps_and_values),
		cmocka_unit_test(test_sharp_split_at_means),
		cmocka_unit_test(test_sharp_finds_single_optimum),
		cmocka_unit_test(test_sharp_splits_to_reach_two_optima),
		cmocka_unit_test(test_sharp_budget_and_errors),
		cmocka_unit_test(test_search_budget_and_determinism),
		cmocka_unit_test(test_search_hill_climbs_toward_optimum),
		cmocka_unit_test(test_search_splits_two_regions),
		cmocka_unit_test(test_search_errors_and_score),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
