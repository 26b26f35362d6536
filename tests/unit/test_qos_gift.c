/* test_qos_gift.c — GIFT (gift.txt sec. 3): Fig. 6 step by step, redemption
 * only where every OST has a gap, tau and regret bounds, and invariants on
 * random instances. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qos/gift.h"
#include "qos/gift_lp.h"

#define TOL 1e-7

/* A small instance built from "JOB:ost,ost" strings. */
#define MAXJ 16
#define MAXO 8
struct inst {
	qos_instance in;
	double cap[MAXO];
	qos_job jobs[MAXJ];
	uint8_t act[MAXJ * MAXO];
	double alloc[MAXJ * MAXO];
	double coupons[MAXJ];
	qos_result res;
};

/* spec: "A:0 B:0,1" — job ids and OST indices; every OST capacity 1. */
static void inst_make(struct inst *x, size_t n_osts, const char *spec, double now)
{
	char buf[256], *save = NULL;
	memset(x, 0, sizeof(*x));
	snprintf(buf, sizeof(buf), "%s", spec);
	for (size_t j = 0; j < n_osts; j++)
		x->cap[j] = 1.0;
	size_t nj = 0;
	for (char *tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		char *colon = strchr(tok, ':');
		assert_non_null(colon);
		*colon = 0;
		qos_job *jb = &x->jobs[nj];
		snprintf(jb->id, sizeof(jb->id), "%s", tok);
		jb->nodes = 4;
		jb->priority = 1;
		jb->throttle_friendly = 1;
		for (char *p = colon + 1; *p; p++)
			if (*p >= '0' && *p <= '9')
				x->act[nj * n_osts + (size_t)(*p - '0')] = 1;
		nj++;
	}
	x->in = (qos_instance){
		.n_osts = n_osts, .n_jobs = nj, .capacity = x->cap, .jobs = x->jobs,
		.active = x->act, .period = 10, .now = now,
	};
	x->res = (qos_result){ .alloc = x->alloc, .coupons = x->coupons };
}

static double A_(const struct inst *x, size_t job, size_t ost)
{
	return x->alloc[job * x->in.n_osts + ost];
}

static qos_gift *mk_gift(double B_thres)
{
	qos_gift_params p;
	qos_gift *g = NULL;
	qos_gift_params_default(&p);
	p.B_thres = B_thres;
	assert_int_equal(qos_gift_create(&p, &g), 0);
	return g;
}

/* Fig. 6, instance k1: OST0 shared by A and B, OST1 only B. */
static void test_gift_fig6_k1(void **st)
{
	struct inst x;
	qos_gift *g = mk_gift(0.3);
	(void)st;
	inst_make(&x, 2, "A:0 B:0,1", 0);
	assert_int_equal(qos_gift_decide(g, &x.in, &x.res), 0);
	assert_float_equal(A_(&x, 0, 0), 0.35, TOL);
	assert_float_equal(A_(&x, 0, 1), 0.0, 0);
	assert_float_equal(A_(&x, 1, 0), 0.65, TOL);
	assert_float_equal(A_(&x, 1, 1), 0.65, TOL);
	assert_float_equal(x.coupons[0], 0.15, TOL);
	assert_float_equal(x.coupons[1], 0.0, 0);
	assert_float_equal(x.res.effective, 1.65, TOL);
	qos_gift_destroy(g);
}

/* Fig. 6, k1 -> k2 -> k3 through the policy interface. */
static void test_gift_fig6_k1_k2_k3(void **st)
{
	const qos_policy_ops *ops = qos_policy_find("gift");
	qos_param kv[] = { { "B_thres", 0.3 } };
	qos_params params = { .v = kv, .n = 1 };
	struct inst x;
	void *s = NULL;
	(void)st;
	assert_non_null(ops);
	assert_int_equal(ops->create(&params, &s), 0);

	inst_make(&x, 2, "A:0 B:0,1", 0);
	assert_int_equal(ops->decide(s, &x.in, &x.res), 0);
	assert_float_equal(A_(&x, 0, 0), 0.35, TOL);
	assert_float_equal(x.coupons[0], 0.15, TOL);

	/* k2: OST0 {A, B, C}, OST1 {B, D, E, F}.  B is held to 1/4 by OST1,
	 * leaving a 1/12 gap on OST0 that goes entirely to A, partially
	 * redeeming its coupon; C keeps its fair 1/3. */
	inst_make(&x, 2, "A:0 B:0,1 C:0 D:1 E:1 F:1", 10);
	assert_int_equal(ops->decide(s, &x.in, &x.res), 0);
	assert_float_equal(A_(&x, 0, 0), 1.0 / 3 + 1.0 / 12, TOL);  /* ~42% */
	assert_float_equal(A_(&x, 1, 0), 0.25, TOL);
	assert_float_equal(A_(&x, 1, 1), 0.25, TOL);
	assert_float_equal(A_(&x, 2, 0), 1.0 / 3, TOL);
	for (size_t i = 3; i < 6; i++)
		assert_float_equal(A_(&x, i, 1), 0.25, TOL);
	assert_float_equal(x.coupons[0], 0.15 - 1.0 / 12, TOL);  /* ~6% left */
	for (size_t i = 1; i < 6; i++)
		assert_float_equal(x.coupons[i], 0.0, 0);
	assert_float_equal(x.res.effective, 2.0, TOL);

	/* k3: same sharing; A redeems the rest (1/15) and the remaining
	 * 1/60 of the gap is free for A or C. */
	inst_make(&x, 2, "A:0 B:0,1 C:0 D:1 E:1 F:1", 20);
	assert_int_equal(ops->decide(s, &x.in, &x.res), 0);
	assert_float_equal(x.coupons[0], 0.0, TOL);
	assert_true(A_(&x, 0, 0) >= 1.0 / 3 + 1.0 / 15 - TOL);
	assert_true(A_(&x, 2, 0) >= 1.0 / 3 - TOL);
	assert_float_equal(A_(&x, 0, 0) + A_(&x, 1, 0) + A_(&x, 2, 0), 1.0, TOL);
	assert_float_equal(A_(&x, 1, 0), 0.25, TOL);
	assert_float_equal(x.res.effective, 2.0, TOL);
	ops->destroy(s);
}

/* Constraint (3): throttling A (two OSTs) by d frees room for B (three
 * OSTs): effective +3d - 2d = +d, but A's coupon is worth 2d > d, so GIFT
 * must not throttle; on the Fig. 6 instance the gain equals the coupon
 * and it does. */
static void test_gift_constraint3_blocks_unprofitable_throttle(void **st)
{
	struct inst x;
	qos_gift *g = mk_gift(0.3);
	(void)st;
	inst_make(&x, 3, "A:0,1 B:0,1,2", 0);
	assert_int_equal(qos_gift_decide(g, &x.in, &x.res), 0);
	assert_float_equal(A_(&x, 0, 0), 0.5, TOL);
	assert_float_equal(A_(&x, 1, 2), 0.5, TOL);
	assert_float_equal(x.coupons[0], 0.0, 0);
	assert_float_equal(x.res.effective, 2.5, TOL);
	qos_gift_destroy(g);
}

static void test_gift_edge_cases(void **st)
{
	struct inst x;
	qos_gift *g = mk_gift(0.3);
	(void)st;
	/* no jobs */
	inst_make(&x, 2, "", 0);
	assert_int_equal(qos_gift_decide(g, &x.in, &x.res), 0);
	assert_float_equal(x.res.effective, 0.0, 0);
	/* an idle job gets nothing; a dead OST (capacity 0) holds its jobs
	 * at 0 without upsetting the others */
	inst_make(&x, 3, "A:0 B:0,1 I: Z:2,1", 10);
	x.cap[2] = 0;
	assert_int_equal(qos_gift_decide(g, &x.in, &x.res), 0);
	for (size_t j = 0; j < 3; j++) {
		assert_float_equal(A_(&x, 2, j), 0.0, 0);
		assert_float_equal(A_(&x, 3, j), 0.0, 0);
	}
	assert_true(A_(&x, 0, 0) + A_(&x, 1, 0) <= 1.0 + 1e-9);
	assert_true(A_(&x, 1, 1) <= 1.0 + 1e-9);
	assert_true(A_(&x, 1, 0) >= 0.5 * 0.7 - TOL);
	/* bad input */
	x.cap[2] = -1;
	assert_int_equal(qos_gift_decide(g, &x.in, &x.res), -EINVAL);
	x.cap[2] = 1;
	x.res.alloc = NULL;
	assert_int_equal(qos_gift_decide(g, &x.in, &x.res), -EINVAL);
	qos_gift_destroy(g);
}

static void test_gift_not_friendly_is_not_throttled(void **st)
{
	struct inst x;
	qos_gift *g = mk_gift(0.3);
	(void)st;
	inst_make(&x, 2, "A:0 B:0,1", 0);
	x.jobs[0].throttle_friendly = 0;
	assert_int_equal(qos_gift_decide(g, &x.in, &x.res), 0);
	assert_float_equal(A_(&x, 0, 0), 0.5, TOL);
	assert_float_equal(A_(&x, 1, 1), 0.5, TOL);
	assert_float_equal(x.coupons[0], 0.0, 0);
	assert_float_equal(x.res.effective, 1.5, TOL);
	qos_gift_destroy(g);
}

static void test_gift_redeem_only_if_every_ost_has_gap(void **st)
{
	struct inst x;
	qos_gift *g = mk_gift(0.3);
	(void)st;
	inst_make(&x, 4, "A:0 B:0,1", 0);
	assert_int_equal(qos_gift_decide(g, &x.in, &x.res), 0);
	assert_float_equal(x.coupons[0], 0.15, TOL);

	/* A on OST0 (alone: gap) and OST3 (shared with X: no gap).  X opts
	 * out of throttling so nothing else moves: no redemption. */
	inst_make(&x, 4, "A:0,3 X:3", 10);
	x.jobs[1].throttle_friendly = 0;
	assert_int_equal(qos_gift_decide(g, &x.in, &x.res), 0);
	assert_float_equal(A_(&x, 0, 0), 0.5, TOL);
	assert_float_equal(A_(&x, 0, 3), 0.5, TOL);
	assert_float_equal(x.coupons[0], 0.15, TOL);

	/* A on OST0 (gap 1/2) and OST3 shared with X, which OST2 holds to
	 * 1/3 (gap 1/6): both have gaps, A redeems its whole 0.15, 0.075
	 * more on each of its two OSTs. */
	inst_make(&x, 4, "A:0,3 X:3,2 Z:2 W:2", 20);
	for (size_t i = 1; i < 4; i++)
		x.jobs[i].throttle_friendly = 0;
	assert_int_equal(qos_gift_decide(g, &x.in, &x.res), 0);
	assert_float_equal(x.coupons[0], 0.0, TOL);
	assert_true(A_(&x, 0, 0) >= 0.575 - TOL);
	assert_float_equal(A_(&x, 0, 0), A_(&x, 0, 3), 0);
	assert_float_equal(A_(&x, 1, 3), 1.0 / 3, TOL);
	qos_gift_destroy(g);
}

static void test_gift_multiple_coupons_redeemed(void **st)
{
	struct inst x;
	qos_coupon_job_info info;
	qos_gift *g = mk_gift(0.3);
	(void)st;
	inst_make(&x, 3, "A:0 B:0,1", 0);
	assert_int_equal(qos_gift_decide(g, &x.in, &x.res), 0);
	inst_make(&x, 3, "A:0 B:0,1", 10);
	assert_int_equal(qos_gift_decide(g, &x.in, &x.res), 0);
	assert_float_equal(x.coupons[0], 0.30, TOL);
	/* B held to 1/4 by OST1: a 1/4 gap on OST0 pays the first coupon
	 * and 0.10 of the second */
	inst_make(&x, 3, "A:0 B:0,1 C:1 D:1 E:1", 20);
	for (size_t i = 1; i < 5; i++)
		x.jobs[i].throttle_friendly = 0;
	assert_int_equal(qos_gift_decide(g, &x.in, &x.res), 0);
	assert_float_equal(A_(&x, 0, 0), 0.75, TOL);
	assert_float_equal(x.coupons[0], 0.05, TOL);
	assert_int_equal(qos_coupon_job_get(qos_gift_coupons(g), "A", &info), 0);
	assert_int_equal(info.n_coupons, 2);
	assert_float_equal(info.redeemed, 0.25, TOL);
	qos_gift_destroy(g);
}

static void test_gift_tau_bounds_coupons(void **st)
{
	qos_gift_params p;
	qos_gift *g = NULL;
	qos_gift_stats gs;
	struct inst x;
	(void)st;
	qos_gift_params_default(&p);
	p.N = 10;
	p.B_thres = 0.3;
	assert_int_equal(qos_gift_create(&p, &g), 0);
	/* A is throttled every time and never redeems: issuance stops once
	 * c_A drops below tau = 0.8 (three coupons, see test_qos_coupon). */
	for (int k = 0; k < 10; k++) {
		inst_make(&x, 2, "A:0 B:0,1", 10.0 * k);
		assert_int_equal(qos_gift_decide(g, &x.in, &x.res), 0);
		if (k >= 3) {
			assert_float_equal(A_(&x, 0, 0), 0.5, TOL);
			assert_float_equal(x.res.effective, 1.5, TOL);
		}
	}
	assert_float_equal(x.coupons[0], 0.45, TOL);
	qos_gift_stats_get(g, &gs);
	assert_int_equal(gs.coupons_issued, 3);
	assert_int_equal(gs.decisions, 10);
	assert_int_equal(gs.lp_failures, 0);
	qos_gift_destroy(g);
}

/* regret_budget is per regret period (sec. 4: 360 node-hours over 24 days
 * awarded daily): no assessment awards more than it, the liability never
 * passes it by more than one decision's coupon, and throttling resumes
 * after each assessment.  Breaks with one cap for the whole run (awarded
 * total stuck at the budget, issuance stops) and with no cap at all
 * (liability grows past it). */
static void test_gift_regret_budget_per_period(void **st)
{
	static const struct {
		double budget;   /* node-hours per period */
		int max_per_period; /* coupons of 12 node-seconds it covers */
	} cases[] = {{0.05, 15}, {0.02, 6}};
	(void)st;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		qos_gift_params p;
		qos_gift *g = NULL;
		qos_gift_stats gs;
		struct inst x;
		double prev_awarded = 0;
		uint64_t prev_assess = 0;
		qos_gift_params_default(&p);
		p.N = 1000;
		p.tau = 0.0;
		p.B_thres = 0.3;
		p.regret_period = 100;
		p.regret_budget = cases[c].budget;
		assert_int_equal(qos_gift_create(&p, &g), 0);
		/* Each coupon: A (4 nodes) loses 0.3 of its share for 10 s =
		 * 12 node-seconds; A never redeems (B holds OST 0). */
		for (int k = 0; k < 100; k++) {
			inst_make(&x, 2, "A:0 B:0,1", 10.0 * k);
			assert_int_equal(qos_gift_decide(g, &x.in, &x.res), 0);
			qos_gift_stats_get(g, &gs);
			assert_true(gs.liability_nh <= p.regret_budget + 12.0 / 3600 + 1e-12);
			if (gs.assessments != prev_assess) {
				assert_true(gs.awarded_nh - prev_awarded <=
					    p.regret_budget * (double)(gs.assessments - prev_assess) +
						    1e-12);
				prev_awarded = gs.awarded_nh;
				prev_assess = gs.assessments;
			}
		}
		qos_gift_stats_get(g, &gs);
		assert_true(gs.assessments >= 9);
		/* several periods' budgets were paid out, not one */
		assert_true(gs.awarded_nh > 3 * p.regret_budget);
		assert_true(gs.coupons_issued > (uint64_t)(3 * cases[c].max_per_period));
		assert_true(gs.coupons_issued <= (uint64_t)(10 * (cases[c].max_per_period + 1)));
		qos_gift_destroy(g);
	}
}

/* Table-driven checks of Algorithm 1's gates (sec. 3.2, 3.3), each case
 * built so that one plausible mistake changes the last decision:
 *   c_sys gate removed         -> "c_sys closes Y" throttles C
 *   c_sys gate always closed   -> "c_sys open" leaves C alone
 *   c_i gate removed, or job windows reset with the system's at the
 *   assessment                 -> "c_i closes Y" throttles A
 *   a job that just redeemed allowed into Y
 *                              -> "redeemer not in Y" throttles A back
 *   redemptions not credited to the windows (line 4)
 *                              -> "redemption reopens Y" leaves A alone
 *   a system window that does not recede (keeps its first N coupons)
 *                              -> "system window recedes" throttles C
 *   a job window that does not recede
 *                              -> "job window recedes" throttles A
 *   no system reset at the assessment
 *                              -> "c_i closes Y" leaves C alone
 * Every OST has capacity 1; jobs are friendly unless listed in `off`;
 * step k is decided at now = 10 k.  The spec letters name the jobs the
 * checks refer to. */
#define MECH_STEPS 8
static const struct mech_case {
	const char *name;
	unsigned N;
	double tau, B_thres, regret_period;
	struct {
		const char *spec, *off;
	} step[MECH_STEPS];
	/* after the last step: (job, OST, allocation) and (job, coupon) */
	struct {
		char job;
		int ost;
		double alloc;
	} want[3];
	struct {
		char job;
		double worth;
	} coupon[2];
} mech_cases[] = {
	/* A (Fig. 6 k1) gets three coupons (c: 3/4, 2/4, 1/4) and stops;
	 * c_sys = 1/4 < tau keeps a new job C (c_C = 1) out of Y. */
	{"c_sys closes Y", 4, 0.5, 0.3, 86400,
	 {{"A:0 B:0,1", ""}, {"A:0 B:0,1", ""}, {"A:0 B:0,1", ""},
	  {"A:0 B:0,1", ""}, {"C:2 D:2,3", ""}},
	 {{'C', 2, 0.5}, {'D', 2, 0.5}, {'D', 3, 0.5}},
	 {{'A', 0.45}, {'C', 0.0}}},
	/* the same with tau = 1/4: c_sys = 1/4 >= tau, C is throttled */
	{"c_sys open", 4, 0.25, 0.3, 86400,
	 {{"A:0 B:0,1", ""}, {"A:0 B:0,1", ""}, {"A:0 B:0,1", ""},
	  {"C:2 D:2,3", ""}},
	 {{'C', 2, 0.35}, {'D', 3, 0.65}, {'D', 2, 0.65}},
	 {{'A', 0.45}, {'C', 0.15}}},
	/* the assessment at 25 s resets c_sys to 1 but not c_A = 1/4 (and
	 * settles A's first coupon, 25 s old): A stays out of Y, a fresh C
	 * is throttled */
	{"c_i closes Y", 4, 0.5, 0.3, 25,
	 {{"A:0 B:0,1", ""}, {"A:0 B:0,1", ""}, {"A:0 B:0,1", ""},
	  {"A:0 B:0,1 C:2 D:2,3", ""}},
	 {{'A', 0, 0.5}, {'B', 1, 0.5}, {'C', 2, 0.35}},
	 {{'C', 0.15}, {'A', 0.30}}},
	/* k0: A (one OST) throttled so E (three OSTs) grows: coupon 0.15.
	 * k1: OST0 {A, B, E}, B held to 1/4 by OST1: A redeems OST0's
	 * 1/12 gap (5/12).  A must not be throttled back below that for E,
	 * though the LP would gain (E +3x, A -x > the coupon x). */
	{"redeemer not in Y", 2500, 0.8, 0.3, 86400,
	 {{"A:0 E:0,2,3", ""}, {"A:0 B:0,1 E:0,2,3 C:1 D:1 F:1", "BCDF"}},
	 {{'A', 0, 5.0 / 12}, {'E', 2, 1.0 / 3}, {'B', 0, 0.25}},
	 {{'A', 0.15 - 1.0 / 12}, {'E', 0.0}}},
	/* A stops at c_A = 1/4 (three coupons, 0.45); B held to 1/4 gives
	 * a 1/4 gap on OST0: A redeems 0.25 (c_A = (1 + 1 + 2/3 + 0) / 4),
	 * is back in Y and throttled at once (the redeemer is kept out of
	 * Y only in the decision it redeems). */
	{"redemption reopens Y", 4, 0.5, 0.3, 86400,
	 {{"A:0 B:0,1", ""}, {"A:0 B:0,1", ""}, {"A:0 B:0,1", ""},
	  {"A:0 B:0,1 C:1 D:1 E:1", "BCDE"}, {"A:0 B:0,1", ""}},
	 {{'A', 0, 0.35}, {'B', 1, 0.65}, {'B', 0, 0.65}},
	 {{'A', 0.35}, {'B', 0.0}}},
	/* N = 2: two coupons (c_A 1/2, 0) then none; both redeemed (c = 1);
	 * two more (1/2, 0).  A receding system window holds the last two,
	 * both unredeemed: A and a new job C stay out of Y.  A system window
	 * that kept its first two coupons (both redeemed) would let C in. */
	{"system window recedes", 2, 0.5, 0.3, 86400,
	 {{"A:0 B:0,1", ""}, {"A:0 B:0,1", ""}, {"A:0 B:0,1 C:1 D:1 E:1", "BCDE"},
	  {"A:0 B:0,1 C:1 D:1 E:1", "BCDE"}, {"A:0 B:0,1", ""}, {"A:0 B:0,1", ""},
	  {"A:0 B:0,1 C:2 D:2,3", ""}},
	 {{'A', 0, 0.5}, {'C', 2, 0.5}, {'D', 3, 0.5}},
	 {{'A', 0.3}, {'C', 0.0}}},
	/* the same with an assessment at 60 s, which resets c_sys: C is
	 * throttled, A's receding window (last two unredeemed) keeps A out;
	 * a job window that kept its first two (redeemed) would let A in */
	{"job window recedes", 2, 0.5, 0.3, 55,
	 {{"A:0 B:0,1", ""}, {"A:0 B:0,1", ""}, {"A:0 B:0,1 C:1 D:1 E:1", "BCDE"},
	  {"A:0 B:0,1 C:1 D:1 E:1", "BCDE"}, {"A:0 B:0,1", ""}, {"A:0 B:0,1", ""},
	  {"A:0 B:0,1 C:2 D:2,3", ""}},
	 {{'A', 0, 0.5}, {'C', 2, 0.35}, {'D', 3, 0.65}},
	 {{'A', 0.3}, {'C', 0.15}}},
};

static size_t job_ix(const struct inst *x, char id)
{
	for (size_t i = 0; i < x->in.n_jobs; i++)
		if (x->jobs[i].id[0] == id && !x->jobs[i].id[1])
			return i;
	fail_msg("no job %c", id);
	return 0;
}

static void test_gift_mechanisms(void **st)
{
	(void)st;
	for (size_t c = 0; c < sizeof(mech_cases) / sizeof(mech_cases[0]); c++) {
		const struct mech_case *k = &mech_cases[c];
		qos_gift_params p;
		qos_gift *g = NULL;
		struct inst x;
		qos_gift_params_default(&p);
		p.N = k->N;
		p.tau = k->tau;
		p.B_thres = k->B_thres;
		p.regret_period = k->regret_period;
		assert_int_equal(qos_gift_create(&p, &g), 0);
		for (size_t s = 0; s < MECH_STEPS && k->step[s].spec; s++) {
			inst_make(&x, 4, k->step[s].spec, 10.0 * (double)s);
			for (const char *o = k->step[s].off; *o; o++)
				x.jobs[job_ix(&x, *o)].throttle_friendly = 0;
			assert_int_equal(qos_gift_decide(g, &x.in, &x.res), 0);
		}
		for (size_t w = 0; w < 3; w++) {
			double got = A_(&x, job_ix(&x, k->want[w].job), (size_t)k->want[w].ost);
			if (fabs(got - k->want[w].alloc) > TOL)
				fail_msg("case '%s': %c on OST%d = %.6f, want %.6f", k->name,
					 k->want[w].job, k->want[w].ost, got, k->want[w].alloc);
		}
		for (size_t w = 0; w < 2; w++) {
			double got = qos_coupon_outstanding(qos_gift_coupons(g),
							    (char[]){ k->coupon[w].job, 0 });
			if (fabs(got - k->coupon[w].worth) > TOL)
				fail_msg("case '%s': %c holds %.6f, want %.6f", k->name,
					 k->coupon[w].job, got, k->coupon[w].worth);
		}
		qos_gift_destroy(g);
	}
}

static void test_gift_weighted_shares(void **st)
{
	qos_gift_sets s;
	struct inst x;
	(void)st;
	inst_make(&x, 2, "A:0 B:0,1 C:1", 0);
	x.jobs[0].priority = 2;
	x.cap[1] = 3;
	assert_int_equal(qos_gift_sets_build(&x.in, &s), 0);
	/* OST0 weights 2:1, OST1 1:1 of 3 */
	assert_float_equal(s.b_bsip[0], 2.0 / 3, TOL);
	assert_float_equal(s.b_bsip[1], 1.0 / 3, TOL);
	assert_float_equal(s.b_bsip[2], 1.5, TOL);
	assert_float_equal(s.cap_min[1], 1.0, 0);
	assert_float_equal(s.E_bsip, 2.0 / 3 + 2.0 / 3 + 1.5, TOL);
	qos_gift_sets_free(&s);
}

static void test_gift_params(void **st)
{
	qos_gift_params p;
	qos_param bad[] = { { "Nope", 1 } };
	qos_param badN[] = { { "N", 2.5 } };
	qos_param badtau[] = { { "tau", 1.5 } };
	qos_param ok[] = { { "N", 50 }, { "tau", 0.5 }, { "B_thres", 0.2 },
			   { "regret_period", 3600 }, { "regret_budget", 10 } };
	qos_params kv = { .v = bad, .n = 1 };
	void *s = NULL;
	(void)st;
	assert_int_equal(qos_gift_params_parse(&kv, &p), -EINVAL);
	assert_int_equal(qos_policy_gift.create(&kv, &s), -EINVAL);
	kv.v = badN;
	assert_int_equal(qos_gift_params_parse(&kv, &p), -EINVAL);
	kv.v = badtau;
	assert_int_equal(qos_gift_params_parse(&kv, &p), -EINVAL);
	kv = (qos_params){ .v = ok, .n = 5 };
	assert_int_equal(qos_gift_params_parse(&kv, &p), 0);
	assert_int_equal(p.N, 50);
	assert_float_equal(p.tau, 0.5, 0);
	assert_float_equal(p.B_thres, 0.2, 0);
	assert_float_equal(p.regret_budget, 10, 0);
	assert_int_equal(qos_gift_params_parse(NULL, &p), 0);
	assert_int_equal(p.N, 2500);
	assert_float_equal(p.tau, 0.8, 0);
	assert_float_equal(p.B_thres, 0.1, 0);
	/* every GIFT-family policy is registered */
	const char *names[] = { "gift", "pofs", "bsip", "mbw", "tsa", "esa", "tmf", "rnd" };
	for (size_t i = 0; i < 8; i++)
		assert_non_null(qos_policy_find(names[i]));
}

static void test_gift_lp_bad_input(void **st)
{
	double cap[1] = { 1 }, lo[1] = { 0.5 }, hi[1] = { 0.2 }, b[1];
	size_t off[2] = { 0, 1 }, idx[1] = { 0 };
	qos_gift_lp lp = { .n_jobs = 1, .n_osts = 1, .capacity = cap,
			   .ost_off = off, .ost_idx = idx, .lo = lo, .hi = hi };
	(void)st;
	assert_int_equal(qos_gift_lp_solve(&lp, b, NULL), -EINVAL);  /* lo > hi */
	hi[0] = 1;
	idx[0] = 3;
	assert_int_equal(qos_gift_lp_solve(&lp, b, NULL), -EINVAL);  /* OST range */
	idx[0] = 0;
	lp.waste_constraint = 1;
	assert_int_equal(qos_gift_lp_solve(&lp, b, NULL), -EINVAL);  /* no base */
	lp.waste_constraint = 0;
	lo[0] = 2;
	hi[0] = 2;  /* above capacity: infeasible */
	assert_int_equal(qos_gift_lp_solve(&lp, b, NULL), -EDOM);
}

/* Invariants over random sequences: capacity, non-negativity, synchrony,
 * floors, LP >= BSIP, coupons >= 0, redemption only with gaps on every
 * OST, throttling only with a coupon, regret within budget. */
static void check_sequence(size_t n_jobs, size_t n_osts, size_t max_osts,
			   uint64_t seed, int steps)
{
	qos_gift_params p;
	qos_gift *g = NULL;
	qos_gift_stats gs;
	double *prev = calloc(n_jobs, sizeof(*prev));
	double *alloc = calloc(n_jobs * n_osts, sizeof(*alloc));
	double *coupons = calloc(n_jobs, sizeof(*coupons));
	assert_non_null(prev);
	assert_non_null(alloc);
	assert_non_null(coupons);
	qos_gift_params_default(&p);
	p.N = 20;
	p.tau = 0.5;
	p.B_thres = 0.4;
	p.regret_period = 50;
	p.regret_budget = 2.0;
	assert_int_equal(qos_gift_create(&p, &g), 0);
	for (int k = 0; k < steps; k++) {
		qos_gift_synth sy;
		qos_gift_sets s;
		assert_int_equal(qos_gift_synth_make(n_jobs, n_osts, max_osts,
						     seed * 1000 + (uint64_t)k, &sy), 0);
		/* idle a few jobs each step so coupons meet gaps */
		for (size_t i = (size_t)k % 4; i < n_jobs; i += 4)
			memset(&sy.active[i * n_osts], 0, n_osts);
		sy.in.now = 10.0 * k;
		assert_int_equal(qos_gift_sets_build(&sy.in, &s), 0);
		qos_result res = { .alloc = alloc, .coupons = coupons };
		assert_int_equal(qos_gift_decide(g, &sy.in, &res), 0);

		double E = 0.0;
		for (size_t j = 0; j < n_osts; j++) {
			double sum = 0.0, bsip = 0.0;
			for (size_t i = 0; i < n_jobs; i++) {
				sum += alloc[i * n_osts + j];
				if (sy.active[i * n_osts + j])
					bsip += s.b_bsip[i];
			}
			assert_true(sum <= sy.capacity[j] * (1 + 1e-9));
		}
		for (size_t i = 0; i < n_jobs; i++) {
			size_t n = s.off[i + 1] - s.off[i];
			double bi = n ? alloc[i * n_osts + s.idx[s.off[i]]] : 0.0;
			for (size_t j = 0; j < n_osts; j++) {
				double a = alloc[i * n_osts + j];
				assert_true(a >= 0.0);
				if (sy.active[i * n_osts + j])
					assert_float_equal(a, bi, 0);  /* synchronous */
				else
					assert_true(a == 0.0);
			}
			E += (double)n * bi;
			assert_true(coupons[i] >= 0.0);
			if (!n)
				continue;
			/* floors: (1 - B_thres) b_bsip for Y, b_bsip otherwise */
			assert_true(bi >= s.b_bsip[i] * (1 - p.B_thres) - 1e-9);
			int assessed = (int)(sy.in.now / p.regret_period) !=
				       (int)((sy.in.now - 10) / p.regret_period);
			if (bi < s.b_bsip[i] - 1e-7 && !assessed)
				/* throttled: must hold a new coupon */
				assert_true(sy.jobs[i].throttle_friendly &&
					    coupons[i] > prev[i] + 1e-9);
			if (coupons[i] < prev[i] - 1e-12 && !assessed) {
				/* redeemed (not settled): every OST had a gap */
				for (size_t kk = s.off[i]; kk < s.off[i + 1]; kk++) {
					size_t j = s.idx[kk];
					double used = 0.0;
					for (size_t l = 0; l < n_jobs; l++)
						if (sy.active[l * n_osts + j])
							used += s.b_bsip[l];
					assert_true(sy.capacity[j] - used > 0);
				}
				assert_true(bi > s.b_bsip[i]);
			}
			prev[i] = coupons[i];
		}
		for (size_t i = 0; i < n_jobs; i++)
			if (!(s.off[i + 1] - s.off[i]))
				prev[i] = coupons[i];
		assert_float_equal(res.effective, E, 1e-9 * (1 + E));
		assert_true(res.effective >= s.E_bsip - 1e-9);
		qos_gift_stats_get(g, &gs);
		/* per-period budget: never more than one per assessment */
		assert_true(gs.awarded_nh <= p.regret_budget * (double)gs.assessments + 1e-12);
		assert_int_equal(gs.lp_failures, 0);
		qos_gift_sets_free(&s);
		qos_gift_synth_free(&sy);
	}
	qos_gift_stats_get(g, &gs);
	assert_true(gs.coupons_issued > 0);
	assert_true(gs.redemptions > 0);
	qos_gift_destroy(g);
	free(prev);
	free(alloc);
	free(coupons);
}

static void test_gift_invariants_random(void **st)
{
	(void)st;
	for (uint64_t seed = 1; seed <= 12; seed++)
		check_sequence(40, 10, 4, seed, 25);
	check_sequence(8, 3, 2, 99, 60);
}

static void test_gift_large_instance(void **st)
{
	qos_gift_synth sy;
	qos_gift_sets s;
	qos_gift_stats gs;
	qos_gift *g = mk_gift(0.1);
	double *alloc, *lo, *b, E = 0;
	uint8_t *thr;
	(void)st;
	/* the benchmark's size: 1,000 jobs on 200 OSTs */
	assert_int_equal(qos_gift_synth_make(1000, 200, 8, 7, &sy), 0);
	alloc = calloc(1000 * 200, sizeof(*alloc));
	lo = calloc(1000, sizeof(*lo));
	b = calloc(1000, sizeof(*b));
	thr = calloc(1000, 1);
	assert_true(alloc && lo && b && thr);
	qos_result res = { .alloc = alloc };
	assert_int_equal(qos_gift_decide(g, &sy.in, &res), 0);
	/* the LP answered (no fall-back to BSIP) ... */
	qos_gift_stats_get(g, &gs);
	assert_int_equal(gs.lp_failures, 0);
	assert_int_equal(qos_gift_sets_build(&sy.in, &s), 0);
	assert_true(res.effective >= s.E_bsip - 1e-9);
	for (size_t j = 0; j < 200; j++) {
		double sum = 0;
		for (size_t i = 0; i < 1000; i++)
			sum += alloc[i * 200 + j];
		assert_true(sum <= sy.capacity[j] * (1 + 1e-9));
	}
	/* ... with GLPK's optimum of the LP a fresh state builds (no
	 * coupons yet: base = BSIP, Y = the friendly jobs) */
	for (size_t i = 0; i < 1000; i++) {
		thr[i] = sy.jobs[i].throttle_friendly && s.b_bsip[i] > 0;
		lo[i] = thr[i] ? s.b_bsip[i] * 0.9 : s.b_bsip[i];
	}
	qos_gift_lp lp = {
		.n_jobs = 1000, .n_osts = 200, .capacity = sy.capacity,
		.ost_off = s.off, .ost_idx = s.idx, .lo = lo, .hi = s.cap_min,
		.base = s.b_bsip, .throttle = thr, .E_min = s.E_bsip,
		.waste_constraint = 1,
	};
	assert_int_equal(qos_gift_lp_solve_glpk(&lp, b, &E), 0);
	assert_float_equal(res.effective, E, 1e-9 * E);
	qos_gift_destroy(g);
	qos_gift_sets_free(&s);
	qos_gift_synth_free(&sy);
	free(alloc);
	free(lo);
	free(b);
	free(thr);
}

/* ---- persistence ---- */

static void same_stats(const qos_gift *a, const qos_gift *b)
{
	qos_gift_stats x, y;
	qos_gift_stats_get(a, &x);
	qos_gift_stats_get(b, &y);
	assert_int_equal(x.decisions, y.decisions);
	assert_int_equal(x.coupons_issued, y.coupons_issued);
	assert_int_equal(x.redemptions, y.redemptions);
	assert_int_equal(x.assessments, y.assessments);
	assert_true(x.worth_issued == y.worth_issued);
	assert_true(x.worth_redeemed == y.worth_redeemed);
	assert_true(x.awarded_nh == y.awarded_nh);
	assert_float_equal(x.liability_nh, y.liability_nh, 1e-12);
}

/* Fig. 6: save after k1, restore, and k2/k3 go on exactly as without the
 * restart (the coupon issued at k1 is redeemed from the restored ledger). */
static void test_gift_save_load_continues_fig6(void **st)
{
	struct inst x, y;
	qos_gift *g = mk_gift(0.3), *h = NULL;
	uint8_t *buf = NULL;
	size_t len = 0;
	(void)st;
	inst_make(&x, 2, "A:0 B:0,1", 0);
	assert_int_equal(qos_gift_decide(g, &x.in, &x.res), 0);
	assert_float_equal(x.coupons[0], 0.15, TOL);
	assert_int_equal(qos_gift_save(g, &buf, &len), 0);
	assert_int_equal(qos_gift_load(NULL, buf, len, &h), 0);
	same_stats(g, h);
	assert_float_equal(qos_coupon_outstanding(qos_gift_coupons(h), "A"), 0.15, TOL);
	for (int k = 1; k <= 2; k++) {
		inst_make(&x, 2, "A:0 B:0,1 C:0 D:1 E:1 F:1", 10 * k);
		inst_make(&y, 2, "A:0 B:0,1 C:0 D:1 E:1 F:1", 10 * k);
		assert_int_equal(qos_gift_decide(g, &x.in, &x.res), 0);
		assert_int_equal(qos_gift_decide(h, &y.in, &y.res), 0);
		/* g warm-starts its LP from its last basis, h starts cold:
		 * the same optimum, equal up to rounding (not bit for bit) */
		for (size_t e = 0; e < MAXJ * MAXO; e++)
			assert_float_equal(x.alloc[e], y.alloc[e], 1e-12);
		for (size_t e = 0; e < MAXJ; e++)
			assert_float_equal(x.coupons[e], y.coupons[e], 1e-12);
		same_stats(g, h);
	}
	assert_float_equal(y.coupons[0], 0.0, TOL);
	free(buf);
	qos_gift_destroy(g);
	qos_gift_destroy(h);
}

static void test_gift_load_params_and_corrupt(void **st)
{
	struct inst x;
	qos_gift *g = mk_gift(0.3), *h = (qos_gift *)1;
	qos_gift_params p;
	uint8_t *buf = NULL, *c;
	size_t len = 0;
	(void)st;
	inst_make(&x, 2, "A:0 B:0,1", 0);
	assert_int_equal(qos_gift_decide(g, &x.in, &x.res), 0);
	assert_int_equal(qos_gift_save(g, &buf, &len), 0);
	/* new parameters apply to the restored ledger: B_thres = 0 throttles
	 * nobody, the coupon stays outstanding */
	qos_gift_params_default(&p);
	p.B_thres = 0.0;
	assert_int_equal(qos_gift_load(&p, buf, len, &h), 0);
	assert_float_equal(qos_coupon_outstanding(qos_gift_coupons(h), "A"), 0.15, TOL);
	inst_make(&x, 2, "A:0 B:0,1", 10);
	assert_int_equal(qos_gift_decide(h, &x.in, &x.res), 0);
	assert_float_equal(A_(&x, 0, 0), 0.5, TOL);
	qos_gift_destroy(h);
	p.tau = 2.0;
	h = (qos_gift *)1;
	assert_int_equal(qos_gift_load(&p, buf, len, &h), -EINVAL);
	assert_null(h);
	/* damaged images: every truncation, every byte changed, a trailing byte */
	for (size_t n = 0; n < len; n++)
		assert_int_equal(qos_gift_load(NULL, buf, n, &h), -EBADMSG);
	c = malloc(len + 1);
	assert_non_null(c);
	memcpy(c, buf, len);
	for (size_t i = 0; i < len; i++) {
		c[i] ^= 0xa5;
		assert_int_equal(qos_gift_load(NULL, c, len, &h), -EBADMSG);
		c[i] ^= 0xa5;
	}
	c[len] = 0;
	assert_int_equal(qos_gift_load(NULL, c, len + 1, &h), -EBADMSG);
	assert_null(h);
	free(c);
	free(buf);
	qos_gift_destroy(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gift_fig6_k1),
		cmocka_unit_test(test_gift_fig6_k1_k2_k3),
		cmocka_unit_test(test_gift_constraint3_blocks_unprofitable_throttle),
		cmocka_unit_test(test_gift_edge_cases),
		cmocka_unit_test(test_gift_not_friendly_is_not_throttled),
		cmocka_unit_test(test_gift_redeem_only_if_every_ost_has_gap),
		cmocka_unit_test(test_gift_multiple_coupons_redeemed),
		cmocka_unit_test(test_gift_tau_bounds_coupons),
		cmocka_unit_test(test_gift_regret_budget_per_period),
		cmocka_unit_test(test_gift_mechanisms),
		cmocka_unit_test(test_gift_weighted_shares),
		cmocka_unit_test(test_gift_params),
		cmocka_unit_test(test_gift_lp_bad_input),
		cmocka_unit_test(test_gift_invariants_random),
		cmocka_unit_test(test_gift_large_instance),
		cmocka_unit_test(test_gift_save_load_continues_fig6),
		cmocka_unit_test(test_gift_load_params_and_corrupt),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
