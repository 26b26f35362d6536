/* test_qos_baselines.c — POFS, BSIP, MBW on Fig. 5's situation, and the
 * sec. 4 baselines TSA, ESA, TMF, RND.
 *
 * Fig. 5 is a picture; its text fixes the situation: five applications on
 * three OSTs; under POFS part of every share on OST3 and part of A's share
 * on OST1 is waste; under BSIP A is held by OST2; MBW starves E.  The
 * instance used here (OSTs 0..2 standing for OST1..OST3):
 *   OST0 {A, B}   OST1 {A, C, D, E}   OST2 {C, D}
 * POFS: A 1/2 | 1/4, B 1/2, C and D 1/4 | 1/2, E 1/4: waste 0.25 of A on
 * OST0, 0.25 of C and of D on OST2 (effective 2.25 of 3 allocated).
 * BSIP: A 1/4, B 1/2, C D E 1/4: no waste, gaps 1/4 on OST0, 1/2 on OST2.
 * MBW: the only way to fill all three OSTs is C + D = 1, so A and E get
 * nothing and B gets all of OST0 (effective 3). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <string.h>

#include "qos/baselines.h"
#include "qos/gift.h"

#define TOL 1e-7
enum { A, B, C, D, E, NJ };
#define NO 3

struct fig5 {
	double cap[NO];
	qos_job jobs[NJ];
	uint8_t act[NJ * NO];
	double alloc[NJ * NO];
	qos_instance in;
	qos_result res;
};

static void fig5_make(struct fig5 *x)
{
	static const char *ids[NJ] = { "A", "B", "C", "D", "E" };
	static const double nodes[NJ] = { 4, 1, 8, 8, 2 };
	static const uint8_t act[NJ][NO] = {
		{ 1, 1, 0 }, { 1, 0, 0 }, { 0, 1, 1 }, { 0, 1, 1 }, { 0, 1, 0 },
	};
	memset(x, 0, sizeof(*x));
	for (size_t j = 0; j < NO; j++)
		x->cap[j] = 1.0;
	for (size_t i = 0; i < NJ; i++) {
		strcpy(x->jobs[i].id, ids[i]);
		x->jobs[i].nodes = nodes[i];
		x->jobs[i].priority = 1;
		x->jobs[i].throttle_friendly = 1;
		memcpy(&x->act[i * NO], act[i], NO);
	}
	x->in = (qos_instance){ .n_osts = NO, .n_jobs = NJ, .capacity = x->cap,
				.jobs = x->jobs, .active = x->act, .period = 10 };
	x->res = (qos_result){ .alloc = x->alloc };
}

#define AL(x, i, j) ((x)->alloc[(i) * NO + (j)])

static void test_baselines_fig5_pofs(void **st)
{
	struct fig5 x;
	(void)st;
	fig5_make(&x);
	assert_int_equal(qos_baseline_pofs(&x.in, &x.res), 0);
	assert_float_equal(AL(&x, A, 0), 0.5, TOL);
	assert_float_equal(AL(&x, A, 1), 0.25, TOL);
	assert_float_equal(AL(&x, B, 0), 0.5, TOL);
	assert_float_equal(AL(&x, C, 1), 0.25, TOL);
	assert_float_equal(AL(&x, C, 2), 0.5, TOL);
	assert_float_equal(AL(&x, D, 2), 0.5, TOL);
	assert_float_equal(AL(&x, E, 1), 0.25, TOL);
	assert_float_equal(AL(&x, E, 0), 0.0, 0);
	/* 3 allocated, 0.75 of it waste */
	assert_float_equal(x.res.effective, 2.25, TOL);
}

static void test_baselines_fig5_bsip(void **st)
{
	struct fig5 x;
	(void)st;
	fig5_make(&x);
	assert_int_equal(qos_baseline_bsip(&x.in, &x.res), 0);
	assert_float_equal(AL(&x, A, 0), 0.25, TOL);  /* held by OST1 */
	assert_float_equal(AL(&x, A, 1), 0.25, TOL);
	assert_float_equal(AL(&x, B, 0), 0.5, TOL);
	assert_float_equal(AL(&x, C, 2), 0.25, TOL);
	assert_float_equal(AL(&x, D, 2), 0.25, TOL);
	assert_float_equal(AL(&x, E, 1), 0.25, TOL);
	assert_float_equal(x.res.effective, 2.25, TOL);
}

static void test_baselines_fig5_mbw(void **st)
{
	struct fig5 x;
	(void)st;
	fig5_make(&x);
	assert_int_equal(qos_baseline_mbw(&x.in, &x.res), 0);
	assert_float_equal(AL(&x, E, 1), 0.0, TOL);  /* E starved */
	assert_float_equal(AL(&x, A, 0), 0.0, TOL);
	assert_float_equal(AL(&x, B, 0), 1.0, TOL);
	assert_float_equal(AL(&x, C, 2) + AL(&x, D, 2), 1.0, TOL);
	assert_float_equal(AL(&x, C, 1), AL(&x, C, 2), 0);
	assert_float_equal(x.res.effective, 3.0, TOL);
}

static void test_baselines_fig5_gift_between(void **st)
{
	struct fig5 x;
	void *s = NULL;
	(void)st;
	fig5_make(&x);
	assert_int_equal(qos_policy_gift.create(NULL, &s), 0);
	assert_int_equal(qos_policy_gift.decide(s, &x.in, &x.res), 0);
	/* GIFT beats BSIP without starving anyone below (1 - B_thres) BSIP */
	assert_true(x.res.effective > 2.25 + 1e-6);
	assert_true(x.res.effective < 3.0);
	assert_true(AL(&x, E, 1) >= 0.25 * 0.9 - TOL);
	assert_true(AL(&x, A, 0) >= 0.25 * 0.9 - TOL);
	qos_policy_gift.destroy(s);
}

static void test_baselines_tsa(void **st)
{
	struct fig5 x;
	uint8_t Y[NJ];
	void *s = NULL;
	(void)st;
	fig5_make(&x);
	/* nodes 4 1 8 8 2: median 4, small = B and E */
	assert_int_equal(qos_baseline_small(&x.in, Y), 0);
	assert_int_equal(Y[A] + Y[C] + Y[D], 0);
	assert_int_equal(Y[B] + Y[E], 2);
	assert_int_equal(qos_policy_tsa.create(NULL, &s), 0);
	assert_int_equal(qos_policy_tsa.decide(s, &x.in, &x.res), 0);
	/* the rule throttles B and E by B_thres whether or not it pays: E's
	 * 0.025 on OST1 goes to A, C or D (two OSTs each), B's 0.05 on OST0
	 * only A could use, and A is held by OST1: below BSIP (2.25) */
	assert_float_equal(AL(&x, E, 1), 0.225, TOL);
	assert_float_equal(AL(&x, B, 0), 0.45, TOL);
	assert_float_equal(AL(&x, A, 1) + AL(&x, C, 1) + AL(&x, D, 1), 0.775, TOL);
	assert_true(AL(&x, A, 0) >= 0.25 - TOL && AL(&x, C, 2) >= 0.25 - TOL);
	assert_float_equal(x.res.effective, 2.225, 1e-6);
	qos_policy_tsa.destroy(s);
}

static void test_baselines_esa(void **st)
{
	struct fig5 x;
	(void)st;
	fig5_make(&x);
	/* B (1 node) takes OST0's gap; E (2 nodes) has none on OST1 */
	assert_int_equal(qos_baseline_esa(&x.in, &x.res), 0);
	assert_float_equal(AL(&x, B, 0), 0.75, TOL);
	assert_float_equal(AL(&x, E, 1), 0.25, TOL);
	assert_float_equal(AL(&x, C, 2), 0.25, TOL);
	assert_float_equal(x.res.effective, 2.5, TOL);
}

static void test_baselines_tmf(void **st)
{
	struct fig5 x;
	void *s = NULL;
	(void)st;
	assert_int_equal(qos_policy_tmf.create(NULL, &s), 0);
	/* all appear once: nobody above the median, nobody throttled; the
	 * LP only fills OST0's free gap (B to 3/4) */
	fig5_make(&x);
	assert_int_equal(qos_policy_tmf.decide(s, &x.in, &x.res), 0);
	assert_float_equal(AL(&x, E, 1), 0.25, TOL);
	assert_float_equal(AL(&x, B, 0), 0.75, TOL);
	assert_float_equal(x.res.effective, 2.5, 1e-6);
	/* E leaves and comes back: its second appearance makes it the most
	 * frequent, so it is the one throttled */
	fig5_make(&x);
	memset(&x.act[E * NO], 0, NO);
	assert_int_equal(qos_policy_tmf.decide(s, &x.in, &x.res), 0);
	fig5_make(&x);
	assert_int_equal(qos_policy_tmf.decide(s, &x.in, &x.res), 0);
	assert_float_equal(AL(&x, E, 1), 0.225, TOL);
	assert_float_equal(AL(&x, A, 1), 0.25, TOL);
	assert_float_equal(AL(&x, C, 2) + AL(&x, D, 2), 0.525, TOL);
	assert_float_equal(x.res.effective, 2.525, 1e-6);
	qos_policy_tmf.destroy(s);
}

static void run_rnd(uint64_t seed, double *out, int steps)
{
	struct fig5 x;
	qos_gift_sets gs;
	qos_params p = { .seed = seed };
	void *s = NULL;
	assert_int_equal(qos_policy_rnd.create(&p, &s), 0);
	for (int k = 0; k < steps; k++) {
		fig5_make(&x);
		assert_int_equal(qos_policy_rnd.decide(s, &x.in, &x.res), 0);
		assert_int_equal(qos_gift_sets_build(&x.in, &gs), 0);
		for (size_t i = 0; i < NJ; i++)
			for (size_t j = 0; j < NO; j++) {
				double a = AL(&x, i, j);
				assert_true(a >= 0);
				/* throttled to exactly 0.9 BSIP, or at least BSIP */
				if (x.act[i * NO + j])
					assert_true(fabs(a - 0.9 * gs.b_bsip[i]) < TOL ||
						    a >= gs.b_bsip[i] - TOL);
			}
		for (size_t j = 0; j < NO; j++) {
			double sum = 0;
			for (size_t i = 0; i < NJ; i++)
				sum += AL(&x, i, j);
			assert_true(sum <= 1.0 + 1e-9);
		}
		assert_true(x.res.effective >= 0.9 * gs.E_bsip - 1e-9);
		qos_gift_sets_free(&gs);
		memcpy(&out[k * NJ * NO], x.alloc, sizeof(x.alloc));
	}
	qos_policy_rnd.destroy(s);
}

static void test_baselines_rnd_seeded(void **st)
{
	enum { STEPS = 16 };
	static double a[STEPS * NJ * NO], b[STEPS * NJ * NO], c[STEPS * NJ * NO];
	(void)st;
	run_rnd(42, a, STEPS);
	run_rnd(42, b, STEPS);
	run_rnd(7, c, STEPS);
	assert_memory_equal(a, b, sizeof(a));      /* same seed, same picks */
	assert_memory_not_equal(a, c, sizeof(a));  /* another seed differs */
}

static void test_baselines_params_and_registry(void **st)
{
	qos_param bad[] = { { "DF", 1 } };
	qos_param ok[] = { { "B_thres", 0.2 } };
	qos_params p = { .v = bad, .n = 1 };
	const qos_policy_ops *ops[] = { &qos_policy_pofs, &qos_policy_bsip,
		&qos_policy_mbw, &qos_policy_tsa, &qos_policy_esa,
		&qos_policy_tmf, &qos_policy_rnd };
	void *s = NULL;
	(void)st;
	for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
		assert_int_equal(ops[k]->create(&p, &s), -EINVAL);
		assert_ptr_equal(qos_policy_find(ops[k]->name), ops[k]);
	}
	p.v = ok;
	for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
		struct fig5 x;
		fig5_make(&x);
		assert_int_equal(ops[k]->create(&p, &s), 0);
		assert_int_equal(ops[k]->decide(s, &x.in, &x.res), 0);
		/* every job keeps at least (1 - B_thres) of BSIP */
		assert_true(x.res.effective >= 2.25 * (1 - 0.2) - TOL);
		ops[k]->destroy(s);
	}
}

static void test_baselines_weighted_pofs(void **st)
{
	struct fig5 x;
	(void)st;
	fig5_make(&x);
	x.jobs[A].priority = 3;
	assert_int_equal(qos_baseline_pofs(&x.in, &x.res), 0);
	assert_float_equal(AL(&x, A, 0), 0.75, TOL);
	assert_float_equal(AL(&x, B, 0), 0.25, TOL);
	assert_float_equal(AL(&x, A, 1), 0.5, TOL);
	assert_float_equal(AL(&x, E, 1), 1.0 / 6, TOL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_baselines_fig5_pofs),
		cmocka_unit_test(test_baselines_fig5_bsip),
		cmocka_unit_test(test_baselines_fig5_mbw),
		cmocka_unit_test(test_baselines_fig5_gift_between),
		cmocka_unit_test(test_baselines_tsa),
		cmocka_unit_test(test_baselines_esa),
		cmocka_unit_test(test_baselines_tmf),
		cmocka_unit_test(test_baselines_rnd_seeded),
		cmocka_unit_test(test_baselines_params_and_registry),
		cmocka_unit_test(test_baselines_weighted_pofs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
