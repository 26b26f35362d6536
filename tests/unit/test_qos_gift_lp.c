/* test_qos_gift_lp.c — GIFT's allocation LP (gift.txt sec. 3.4) solved by
 * the bounded dual simplex (qos/gift_dual.h) against GLPK, the reference:
 * the same optimum (objective within 1e-9 relative) on thousands of random
 * LPs of every shape the callers build (GIFT with constraint (3), the
 * throttling baselines, MBW), on sequences of changing LPs re-solved warm
 * from the previous basis, cold from the crash basis and from the slack
 * basis, and on the benchmark's size; hand-checked cases
 * for constraint (3), the throttle tie-break and bad input.
 *
 * QOS_LP_EXACT_SCALE=k multiplies the number of random instances and
 * sequence steps by k (default 1: about 5,000 LPs, a few seconds). */
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
#include "qos/gift_dual.h"
#include "qos/gift_lp.h"

static uint64_t rng_state;

static uint64_t rng(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double unif(void)
{
	return (double)(rng() >> 11) * (1.0 / 9007199254740992.0);
}

static int scale_factor(void)
{
	const char *e = getenv("QOS_LP_EXACT_SCALE");
	int k = e ? atoi(e) : 1;
	return k > 0 ? k : 1;
}

/* ---- a random LP of one of the callers' shapes ---- */

enum shape { SH_GIFT, SH_THROTTLE, SH_MBW, SH_N };

typedef struct rlp {
	size_t nj, no;
	double *cap, *lo, *hi, *base;
	size_t *off, *idx;
	uint8_t *thr, *act;   /* act: [nj * no] */
	double E_min;
	int waste, has_base;
} rlp;

static void rlp_free(rlp *r)
{
	free(r->cap);
	free(r->lo);
	free(r->hi);
	free(r->base);
	free(r->off);
	free(r->idx);
	free(r->thr);
	free(r->act);
	memset(r, 0, sizeof(*r));
}

static void rlp_alloc(rlp *r, size_t nj, size_t no)
{
	r->nj = nj;
	r->no = no;
	r->cap = calloc(no + 1, sizeof(double));
	r->lo = calloc(nj + 1, sizeof(double));
	r->hi = calloc(nj + 1, sizeof(double));
	r->base = calloc(nj + 1, sizeof(double));
	r->off = calloc(nj + 1, sizeof(size_t));
	r->idx = calloc(nj * no + 1, sizeof(size_t));
	r->thr = calloc(nj + 1, 1);
	r->act = calloc(nj * no + 1, 1);
	assert_true(r->cap && r->lo && r->hi && r->base && r->off && r->idx &&
		    r->thr && r->act);
}

/* A new random OST set for job i (empty with probability p_idle). */
static void rlp_new_set(rlp *r, size_t i, size_t max_osts, double p_idle)
{
	memset(&r->act[i * r->no], 0, r->no);
	if (unif() < p_idle)
		return;
	size_t k = 1 + (size_t)(rng() % max_osts);
	if (k > r->no)
		k = r->no;
	for (size_t placed = 0; placed < k;) {
		size_t j = (size_t)(rng() % r->no);
		if (!r->act[i * r->no + j]) {
			r->act[i * r->no + j] = 1;
			placed++;
		}
	}
}

/* Bounds as the callers set them: BSIP shares as base (GIFT adds a
 * redemption where every OST of the job has a gap), hi = min capacity,
 * Y throttleable down to (1 - B_thres) of BSIP. */
static void rlp_bounds(rlp *r, enum shape sh, double B_thres, double p_y)
{
	size_t nnz = 0;
	double *load = calloc(r->no + 1, sizeof(double));
	double *gap = calloc(r->no + 1, sizeof(double));
	double *cnt = calloc(r->no + 1, sizeof(double));
	assert_true(load && gap && cnt);
	for (size_t i = 0; i < r->nj; i++) {
		r->off[i] = nnz;
		for (size_t j = 0; j < r->no; j++)
			if (r->act[i * r->no + j]) {
				r->idx[nnz++] = j;
				cnt[j] += 1;
			}
	}
	r->off[r->nj] = nnz;
	for (size_t i = 0; i < r->nj; i++) {
		double b = INFINITY, cmin = INFINITY;
		for (size_t k = r->off[i]; k < r->off[i + 1]; k++) {
			size_t j = r->idx[k];
			if (r->cap[j] / cnt[j] < b)
				b = r->cap[j] / cnt[j];
			if (r->cap[j] < cmin)
				cmin = r->cap[j];
		}
		if (r->off[i] == r->off[i + 1])
			b = cmin = 0;
		r->base[i] = b;
		r->hi[i] = cmin;
		for (size_t k = r->off[i]; k < r->off[i + 1]; k++)
			load[r->idx[k]] += b;
	}
	for (size_t j = 0; j < r->no; j++)
		gap[j] = r->cap[j] - load[j];
	r->E_min = 0;
	for (size_t i = 0; i < r->nj; i++) {
		size_t n = r->off[i + 1] - r->off[i];
		double bsip = r->base[i];
		r->E_min += (double)n * bsip;
		r->thr[i] = 0;
		if (sh == SH_MBW) {
			r->lo[i] = 0;
			continue;
		}
		if (sh == SH_GIFT && n && unif() < 0.3) {
			/* redemption into the gaps of every OST of the job */
			double g = INFINITY;
			for (size_t k = r->off[i]; k < r->off[i + 1]; k++)
				g = fmin(g, gap[r->idx[k]]);
			if (g > 1e-12) {
				double got = g * unif();
				r->base[i] += got;
				for (size_t k = r->off[i]; k < r->off[i + 1]; k++)
					gap[r->idx[k]] -= got;
				r->lo[i] = r->base[i];
				continue;
			}
		}
		r->thr[i] = n && bsip > 0 && unif() < p_y;
		r->lo[i] = r->thr[i] ? bsip * (1 - B_thres) : r->base[i];
	}
	r->has_base = sh != SH_MBW;
	r->waste = sh == SH_GIFT;
	if (sh == SH_MBW)
		r->E_min = 0;
	free(load);
	free(gap);
	free(cnt);
}

static void rlp_make(rlp *r, size_t nj, size_t no, size_t max_osts,
		     enum shape sh)
{
	rlp_alloc(r, nj, no);
	for (size_t j = 0; j < no; j++)
		r->cap[j] = unif() < 0.05 ? 0.0 : 0.2 + 1.8 * unif();
	for (size_t i = 0; i < nj; i++)
		rlp_new_set(r, i, max_osts, 0.1);
	rlp_bounds(r, sh, unif() < 0.2 ? 1.0 : 0.05 + 0.5 * unif(), unif());
}

static qos_gift_lp rlp_lp(const rlp *r)
{
	return (qos_gift_lp){
		.n_jobs = r->nj, .n_osts = r->no, .capacity = r->cap,
		.ost_off = r->off, .ost_idx = r->idx, .lo = r->lo, .hi = r->hi,
		.base = r->has_base ? r->base : NULL,
		.throttle = r->has_base ? r->thr : NULL,
		.E_min = r->E_min, .waste_constraint = r->waste,
	};
}

/* b is a feasible allocation of lp: bounds, capacities, and (3). */
static void check_feasible(const qos_gift_lp *lp, const double *b)
{
	double *load = calloc(lp->n_osts + 1, sizeof(double));
	double gain = 0, coupons = 0, E = 0, E_base = 0;
	assert_non_null(load);
	for (size_t i = 0; i < lp->n_jobs; i++) {
		size_t n = lp->ost_off[i + 1] - lp->ost_off[i];
		double base = lp->base ? lp->base[i] : lp->lo[i];
		if (!n) {
			assert_true(b[i] == 0.0);
			continue;
		}
		assert_true(b[i] >= lp->lo[i] - 1e-12 && b[i] <= lp->hi[i] + 1e-12);
		for (size_t k = lp->ost_off[i]; k < lp->ost_off[i + 1]; k++)
			load[lp->ost_idx[k]] += b[i];
		E += (double)n * b[i];
		E_base += (double)n * base;
		if (lp->throttle && lp->throttle[i] && b[i] < base)
			coupons += (double)n * (base - b[i]);
	}
	for (size_t j = 0; j < lp->n_osts; j++)
		assert_true(load[j] <= lp->capacity[j] * (1 + 1e-12) + 1e-15);
	gain = E - E_base;
	if (lp->waste_constraint)
		assert_true(gain >= coupons - 1e-9 * (1 + E));
	if (lp->E_min > 0)
		assert_true(E >= lp->E_min - 1e-9 * (1 + E));
	free(load);
}

/* Solve lp with ctx (NULL: a fresh context, as the one-shot solver uses)
 * and with GLPK; same optimum, feasible answers, and the dual simplex
 * answered itself: no hand-over to GLPK, which would hide its bugs. */
static double solve_both(qos_gift_lp_ctx *ctx, const qos_gift_lp *lp)
{
	double *b1 = calloc(lp->n_jobs + 1, sizeof(double));
	double *b2 = calloc(lp->n_jobs + 1, sizeof(double));
	double E1 = -1, E2 = -2;
	qos_gift_lp_ctx *own = NULL;
	qos_gift_lp_stats before, after;
	assert_true(b1 && b2);
	if (!ctx) {
		assert_int_equal(qos_gift_lp_ctx_create(&own), 0);
		ctx = own;
	}
	assert_int_equal(qos_gift_lp_solve_glpk(lp, b1, &E1), 0);
	qos_gift_lp_ctx_stats(ctx, &before);
	assert_int_equal(qos_gift_lp_ctx_solve(ctx, lp, b2, &E2), 0);
	qos_gift_lp_ctx_stats(ctx, &after);
	assert_int_equal(after.glpk, before.glpk);
	if (!(fabs(E1 - E2) <= 1e-9 * (1 + fabs(E1))))
		fail_msg("objective: GLPK %.15g, dual simplex %.15g", E1, E2);
	check_feasible(lp, b2);
	qos_gift_lp_ctx_destroy(own);
	free(b1);
	free(b2);
	return E2;
}

static void test_gift_lp_random_matches_glpk(void **st)
{
	int n = 4000 * scale_factor();
	(void)st;
	rng_state = 1;
	for (int k = 0; k < n; k++) {
		rlp r;
		size_t no = 1 + (size_t)(rng() % 12), nj = (size_t)(rng() % 40);
		rlp_make(&r, nj, no, 1 + (size_t)(rng() % 5), (enum shape)(k % SH_N));
		qos_gift_lp lp = rlp_lp(&r);
		solve_both(NULL, &lp);
		rlp_free(&r);
	}
}

/* Medium instances, closer to the benchmark's crowding. */
static void test_gift_lp_medium_matches_glpk(void **st)
{
	int n = 150 * scale_factor();
	(void)st;
	rng_state = 2;
	for (int k = 0; k < n; k++) {
		rlp r;
		rlp_make(&r, 100 + (size_t)(rng() % 200), 20 + (size_t)(rng() % 30), 8,
			 (enum shape)(k % SH_N));
		qos_gift_lp lp = rlp_lp(&r);
		solve_both(NULL, &lp);
		rlp_free(&r);
	}
}

/* Sequences: every step some jobs leave, arrive or move, capacities and
 * the set Y drift; the warm solve must equal GLPK's cold optimum each
 * time, and mostly without starting over. */
static void run_sequence(size_t nj, size_t no, size_t max_osts, double frac,
			 int steps, enum shape sh, uint64_t seed)
{
	qos_gift_lp_ctx *ctx = NULL;
	qos_gift_lp_stats ls;
	rlp r;

	rng_state = seed;
	assert_int_equal(qos_gift_lp_ctx_create(&ctx), 0);
	rlp_make(&r, nj, no, max_osts, sh);
	for (int s = 0; s < steps; s++) {
		if (s) {
			size_t nch = (size_t)(frac * (double)nj + 0.999);
			for (size_t c = 0; c < nch; c++)
				rlp_new_set(&r, (size_t)(rng() % nj), max_osts, 0.2);
			if (rng() % 4 == 0)
				r.cap[rng() % no] = 0.2 + 1.8 * unif();
			rlp_bounds(&r, sh, 0.3, 0.6);
		}
		qos_gift_lp lp = rlp_lp(&r);
		solve_both(ctx, &lp);
	}
	qos_gift_lp_ctx_stats(ctx, &ls);
	assert_int_equal(ls.solves, steps);
	assert_int_equal(ls.glpk, 0);
	assert_true(ls.cold <= 1 + (uint64_t)steps / 10);
	assert_true(ls.columns_reused > 0);
	qos_gift_lp_ctx_destroy(ctx);
	rlp_free(&r);
}

static void test_gift_lp_warm_sequences_match_glpk(void **st)
{
	int k = scale_factor();
	(void)st;
	for (uint64_t seed = 1; seed <= (uint64_t)(12 * k); seed++)
		run_sequence(60, 15, 5, 0.05, 25, (enum shape)(seed % SH_N), seed);
	run_sequence(300, 40, 8, 0.01, 20 * k, SH_GIFT, 77);
}

/* Hundreds of warm solves on one context: whatever the solver carries
 * from solve to solve (basis, inverse, pricing weights) must not drift
 * into a wrong answer. */
static void test_gift_lp_long_warm_sequence(void **st)
{
	(void)st;
	run_sequence(200, 40, 8, 0.02, 300 * scale_factor(), SH_GIFT, 4242);
}

/* The benchmark's size, cold and then warm at 1 % of jobs changed. */
static void test_gift_lp_large_matches_glpk(void **st)
{
	(void)st;
	run_sequence(1000, 200, 8, 0.01, 4 * scale_factor(), SH_GIFT, 5);
}

/* A whole GIFT decision of the benchmark's size: no fall-back to BSIP
 * (lp_failures), and the objective is GLPK's on the LP that decision
 * builds (fresh state: base = BSIP, Y = friendly jobs, lo = 0.9 BSIP). */
static void test_gift_lp_large_decision_is_optimal(void **st)
{
	qos_gift_synth sy;
	qos_gift_sets s;
	qos_gift_stats gs;
	qos_gift_params p;
	qos_gift *g = NULL;
	(void)st;
	assert_int_equal(qos_gift_synth_make(1000, 200, 8, 7, &sy), 0);
	assert_int_equal(qos_gift_sets_build(&sy.in, &s), 0);
	double *alloc = calloc(1000 * 200, sizeof(double));
	double *lo = calloc(1000, sizeof(double)), *b = calloc(1000, sizeof(double));
	uint8_t *thr = calloc(1000, 1);
	assert_true(alloc && lo && b && thr);
	qos_gift_params_default(&p);
	assert_int_equal(qos_gift_create(&p, &g), 0);
	qos_result res = { .alloc = alloc };
	assert_int_equal(qos_gift_decide(g, &sy.in, &res), 0);
	qos_gift_stats_get(g, &gs);
	assert_int_equal(gs.lp_failures, 0);
	assert_true(gs.coupons_issued > 0);
	for (size_t i = 0; i < 1000; i++) {
		thr[i] = sy.jobs[i].throttle_friendly && s.b_bsip[i] > 0;
		lo[i] = thr[i] ? s.b_bsip[i] * (1 - p.B_thres) : s.b_bsip[i];
	}
	qos_gift_lp lp = {
		.n_jobs = 1000, .n_osts = 200, .capacity = sy.capacity,
		.ost_off = s.off, .ost_idx = s.idx, .lo = lo, .hi = s.cap_min,
		.base = s.b_bsip, .throttle = thr, .E_min = s.E_bsip,
		.waste_constraint = 1,
	};
	double E = 0;
	assert_int_equal(qos_gift_lp_solve_glpk(&lp, b, &E), 0);
	if (!(fabs(res.effective - E) <= 1e-9 * E))
		fail_msg("decision %.15g, GLPK %.15g", res.effective, E);
	assert_true(res.effective > s.E_bsip * 1.2);
	qos_gift_destroy(g);
	qos_gift_sets_free(&s);
	qos_gift_synth_free(&sy);
	free(alloc);
	free(lo);
	free(b);
	free(thr);
}

/* ---- the basis across a restart (qos_gift_lp_ctx_save / _load) ---- */

/* Pivots of the last solve of ctx. */
static uint64_t last_pivots(const qos_gift_lp_ctx *ctx)
{
	qos_gift_lp_stats ls;
	qos_gift_lp_ctx_stats(ctx, &ls);
	return ls.last_iterations;
}

/* A sequence on context a; after every step a's basis is saved and
 * loaded into a fresh context b, and the next LP is solved by both: the
 * same optimum (GLPK's), b starts from the restored basis (no cold start,
 * no crash), and over the sequence b pivots about as often as a (its
 * columns are back in their slots, so its cost perturbation is a's;
 * measured restored / continued / cold: 138 / 142 / 296, 88 / 86 / 243,
 * 48 / 48 / 332, 478 / 492 / 681; with the columns in other slots it was
 * 150, 100, 199, 557).  The unchanged LP re-solved from a restored
 * optimal basis needs no pivot (it took 3-25 in other slots). */
static void basis_sequence(size_t nj, size_t no, size_t max_osts, double frac,
			   int steps, enum shape sh, uint64_t seed)
{
	qos_gift_lp_ctx *a = NULL;
	uint64_t pa = 0, pb = 0, pc = 0;
	rlp r;

	rng_state = seed;
	assert_int_equal(qos_gift_lp_ctx_create(&a), 0);
	rlp_make(&r, nj, no, max_osts, sh);
	qos_gift_lp lp0 = rlp_lp(&r);
	solve_both(a, &lp0);
	for (int s = 0; s < steps; s++) {
		qos_gift_lp_ctx *b = NULL, *c = NULL;
		qos_gift_lp_stats ls;
		uint8_t *img = NULL;
		size_t len = 0;
		assert_int_equal(qos_gift_lp_ctx_save(a, &img, &len), 0);
		assert_non_null(img);
		assert_int_equal(qos_gift_lp_ctx_create(&b), 0);
		assert_int_equal(qos_gift_lp_ctx_load(b, img, len), 0);
		if (s == 0) {
			/* the same LP again: the restored basis is optimal */
			qos_gift_lp same = rlp_lp(&r);
			solve_both(b, &same);
			if (!(last_pivots(b) <= 2))
				fail_msg("%llu pivots on the unchanged LP",
					 (unsigned long long)last_pivots(b));
			assert_int_equal(qos_gift_lp_ctx_load(b, img, len), 0);
		}
		size_t nch = (size_t)(frac * (double)nj + 0.999);
		for (size_t k = 0; k < nch; k++)
			rlp_new_set(&r, (size_t)(rng() % nj), max_osts, 0.2);
		rlp_bounds(&r, sh, 0.3, 0.6);
		qos_gift_lp lp = rlp_lp(&r);
		solve_both(a, &lp);
		pa += last_pivots(a);
		solve_both(b, &lp);
		pb += last_pivots(b);
		qos_gift_lp_ctx_stats(b, &ls);
		/* each new basic variable took at least one pivot */
		assert_true(ls.last_basis_change <= ls.last_iterations);
		assert_int_equal(ls.restored, s == 0 ? 2 : 1);
		assert_int_equal(ls.cold, 0);
		assert_int_equal(ls.crashes, 0);
		assert_int_equal(qos_gift_lp_ctx_create(&c), 0);
		solve_both(c, &lp);
		pc += last_pivots(c);
		qos_gift_lp_ctx_stats(c, &ls);
		assert_true(ls.last_basis_change > 0 &&
			    ls.last_basis_change <= ls.last_iterations);
		qos_gift_lp_ctx_destroy(b);
		qos_gift_lp_ctx_destroy(c);
		free(img);
	}
	if (!(pb < pc && 4 * pb <= 5 * pa + 4 * (uint64_t)steps))
		fail_msg("pivots: continued %llu, restored %llu, cold %llu",
			 (unsigned long long)pa, (unsigned long long)pb,
			 (unsigned long long)pc);
	qos_gift_lp_ctx_destroy(a);
	rlp_free(&r);
}

static void test_gift_lp_basis_save_load(void **st)
{
	qos_gift_lp_ctx *ctx = NULL;
	uint8_t *img = (uint8_t *)1;
	size_t len = 1;
	(void)st;
	/* nothing to save before the first solve */
	assert_int_equal(qos_gift_lp_ctx_create(&ctx), 0);
	assert_int_equal(qos_gift_lp_ctx_save(ctx, &img, &len), 0);
	assert_null(img);
	assert_int_equal(len, 0);
	qos_gift_lp_ctx_destroy(ctx);
	basis_sequence(300, 40, 8, 0.02, 6, SH_GIFT, 31);
	basis_sequence(200, 30, 6, 0.03, 6, SH_THROTTLE, 32);
	basis_sequence(200, 30, 6, 0.03, 6, SH_MBW, 33);
	basis_sequence(1000, 200, 8, 0.01, 3, SH_GIFT, 34);
}

/* Damaged basis images: every truncation and a trailing byte are
 * refused; any changed byte is either refused or gives a basis from which
 * the next solve still reaches GLPK's optimum (the image only saves
 * pivots, it can never change the answer). */
static void test_gift_lp_basis_damaged(void **st)
{
	qos_gift_lp_ctx *a = NULL, *b = NULL;
	uint8_t *img = NULL, *c;
	size_t len = 0;
	rlp r;
	(void)st;
	rng_state = 35;
	assert_int_equal(qos_gift_lp_ctx_create(&a), 0);
	assert_int_equal(qos_gift_lp_ctx_create(&b), 0);
	rlp_make(&r, 120, 20, 5, SH_GIFT);
	qos_gift_lp lp = rlp_lp(&r);
	solve_both(a, &lp);
	assert_int_equal(qos_gift_lp_ctx_save(a, &img, &len), 0);
	assert_true(len > 13);
	for (size_t n = 0; n < len; n++)
		assert_int_equal(qos_gift_lp_ctx_load(b, img, n), -EBADMSG);
	c = malloc(len + 1);
	assert_non_null(c);
	memcpy(c, img, len);
	c[len] = 0;
	assert_int_equal(qos_gift_lp_ctx_load(b, c, len + 1), -EBADMSG);
	int refused = 0, loaded = 0;
	for (size_t i = 0; i < len; i++) {
		uint8_t keep = c[i];
		c[i] = (uint8_t)(keep ^ (1u << (i % 8)));
		int rc = qos_gift_lp_ctx_load(b, c, len);
		assert_true(rc == 0 || rc == -EBADMSG || rc == -EAGAIN);
		refused += rc != 0;
		loaded += rc == 0;
		solve_both(b, &lp);
		c[i] = keep;
	}
	assert_true(refused > 0 && loaded > 0);
	free(c);
	free(img);
	qos_gift_lp_ctx_destroy(a);
	qos_gift_lp_ctx_destroy(b);
	rlp_free(&r);
}

/* GIFT keeps the basis in its saved state: a decision after
 * qos_gift_save / qos_gift_load starts warm from it (restored, no cold
 * start) and reaches the optimum the continuing state reaches. */
static void test_gift_lp_gift_restart_is_warm(void **st)
{
	qos_gift_synth sy;
	qos_gift_params p;
	qos_gift_lp_stats ls;
	qos_gift *g = NULL, *h = NULL;
	uint8_t *img = NULL;
	size_t len = 0;
	(void)st;
	assert_int_equal(qos_gift_synth_make(400, 60, 6, 9, &sy), 0);
	double *a1 = calloc(400 * 60, sizeof(double));
	double *a2 = calloc(400 * 60, sizeof(double));
	double *c1 = calloc(400, sizeof(double)), *c2 = calloc(400, sizeof(double));
	assert_true(a1 && a2 && c1 && c2);
	qos_gift_params_default(&p);
	assert_int_equal(qos_gift_create(&p, &g), 0);
	qos_result r1 = { .alloc = a1, .coupons = c1 };
	qos_result r2 = { .alloc = a2, .coupons = c2 };
	assert_int_equal(qos_gift_decide(g, &sy.in, &r1), 0);
	assert_int_equal(qos_gift_save(g, &img, &len), 0);
	assert_int_equal(qos_gift_load(NULL, img, len, &h), 0);
	qos_gift_lp_stats_get(h, &ls);
	assert_int_equal(ls.restored, 1);
	/* the next interval: a few jobs move */
	for (size_t i = 0; i < 400; i += 37) {
		memset(&sy.active[i * 60], 0, 60);
		sy.active[i * 60 + (i * 7) % 60] = 1;
		sy.active[i * 60 + (i * 11 + 3) % 60] = 1;
	}
	sy.in.now += sy.in.period;
	assert_int_equal(qos_gift_decide(g, &sy.in, &r1), 0);
	assert_int_equal(qos_gift_decide(h, &sy.in, &r2), 0);
	qos_gift_lp_stats_get(h, &ls);
	assert_int_equal(ls.cold, 0);
	assert_int_equal(ls.crashes, 0);
	assert_int_equal(ls.glpk, 0);
	if (!(fabs(r1.effective - r2.effective) <= 1e-9 * r1.effective))
		fail_msg("continued %.15g, restored %.15g", r1.effective, r2.effective);
	/* an image without a basis (a state that never decided) loads cold */
	qos_gift_destroy(h);
	free(img);
	qos_gift *f = NULL;
	assert_int_equal(qos_gift_create(&p, &f), 0);
	assert_int_equal(qos_gift_save(f, &img, &len), 0);
	assert_int_equal(qos_gift_load(NULL, img, len, &h), 0);
	qos_gift_lp_stats_get(h, &ls);
	assert_int_equal(ls.restored, 0);
	qos_gift_destroy(f);
	qos_gift_destroy(h);
	qos_gift_destroy(g);
	qos_gift_synth_free(&sy);
	free(img);
	free(a1);
	free(a2);
	free(c1);
	free(c2);
}

/* ---- hand-checked LPs ---- */

/* OST capacities 1.  jobs: "0" = on OST 0, "01" = on OSTs 0 and 1 ... */
typedef struct small {
	double cap[4], lo[4], hi[4], base[4], b[4];
	size_t off[5], idx[16];
	uint8_t thr[4];
	qos_gift_lp lp;
} small;

static void small_make(small *x, size_t n_osts, const char *const *sets,
		       size_t nj, const double *base, const uint8_t *thr,
		       double B_thres, int waste)
{
	size_t nnz = 0;
	memset(x, 0, sizeof(*x));
	for (size_t j = 0; j < n_osts; j++)
		x->cap[j] = 1;
	for (size_t i = 0; i < nj; i++) {
		x->off[i] = nnz;
		for (const char *c = sets[i]; *c; c++)
			x->idx[nnz++] = (size_t)(*c - '0');
		x->base[i] = base[i];
		x->thr[i] = thr[i];
		x->lo[i] = thr[i] ? base[i] * (1 - B_thres) : base[i];
		x->hi[i] = 1;
	}
	x->off[nj] = nnz;
	x->lp = (qos_gift_lp){
		.n_jobs = nj, .n_osts = n_osts, .capacity = x->cap,
		.ost_off = x->off, .ost_idx = x->idx, .lo = x->lo, .hi = x->hi,
		.base = x->base, .throttle = x->thr, .waste_constraint = waste,
	};
}

/* Fig. 6, k1: A on OST0, B on OSTs 0 and 1, BSIP 1/2 each.  Throttling A
 * (in Y) by d lets B grow by d on both OSTs: +2d - d = d gained, coupon
 * worth d: (3) holds with equality, so A goes down to 0.35. */
static void test_gift_lp_fig6(void **st)
{
	const char *sets[] = { "0", "01" };
	const double base[] = { 0.5, 0.5 };
	const uint8_t thr[] = { 1, 0 };
	small x;
	double E = 0;
	(void)st;
	small_make(&x, 2, sets, 2, base, thr, 0.3, 1);
	assert_int_equal(qos_gift_lp_solve(&x.lp, x.b, &E), 0);
	assert_float_equal(x.b[0], 0.35, 1e-12);
	assert_float_equal(x.b[1], 0.65, 1e-12);
	assert_float_equal(E, 1.65, 1e-12);
}

/* Constraint (3): A (in Y) on OSTs 0, 1; B on 0, 1, 2; BSIP 1/2 each.
 * Throttling A by d gains 3d - 2d = d but costs a coupon worth 2d, so
 * with (3) nothing moves; without it A drops to 0.35 (and the LP gains
 * 0.15). */
static void test_gift_lp_constraint3_blocks(void **st)
{
	const char *sets[] = { "01", "012" };
	const double base[] = { 0.5, 0.5 };
	const uint8_t thr[] = { 1, 0 };
	small x;
	double E = 0;
	(void)st;
	small_make(&x, 3, sets, 2, base, thr, 0.3, 1);
	assert_int_equal(qos_gift_lp_solve(&x.lp, x.b, &E), 0);
	assert_float_equal(x.b[0], 0.5, 1e-12);
	assert_float_equal(x.b[1], 0.5, 1e-12);
	assert_float_equal(E, 2.5, 1e-12);
	x.lp.waste_constraint = 0;
	assert_int_equal(qos_gift_lp_solve(&x.lp, x.b, &E), 0);
	assert_float_equal(x.b[0], 0.35, 1e-12);
	assert_float_equal(E, 2.65, 1e-12);
}

/* A zero-sum throttle (A and B both only on OST 0, A in Y) gains nothing:
 * the tie-break keeps A at its base instead of moving rate to B. */
static void test_gift_lp_no_zero_sum_throttle(void **st)
{
	const char *sets[] = { "0", "0", "1" };
	const double base[] = { 0.5, 0.5, 0.25 };
	const uint8_t thr[] = { 1, 0, 1 };
	small x;
	double E = 0;
	(void)st;
	small_make(&x, 2, sets, 3, base, thr, 0.5, 0);
	assert_int_equal(qos_gift_lp_solve(&x.lp, x.b, &E), 0);
	assert_float_equal(x.b[0], 0.5, 0);
	assert_float_equal(x.b[1], 0.5, 0);
	/* C alone on OST 1 fills it */
	assert_float_equal(x.b[2], 1.0, 1e-12);
	assert_float_equal(E, 2.0, 1e-12);
}

/* Gaps only fill where every OST of a job has room: MBW (lo = 0, no
 * base) on Fig. 5's shape gives the known optimum. */
static void test_gift_lp_mbw(void **st)
{
	/* A: 0,1  B: 1  C: 1,2  D: 2  E: 0 ; capacities 1 */
	double cap[3] = { 1, 1, 1 }, lo[5] = { 0 }, hi[5] = { 1, 1, 1, 1, 1 }, b[5];
	size_t off[6] = { 0, 2, 3, 5, 6, 7 }, idx[7] = { 0, 1, 1, 1, 2, 2, 0 };
	qos_gift_lp lp = { .n_jobs = 5, .n_osts = 3, .capacity = cap,
			   .ost_off = off, .ost_idx = idx, .lo = lo, .hi = hi };
	double E = 0;
	(void)st;
	assert_int_equal(qos_gift_lp_solve(&lp, b, &E), 0);
	/* every OST full is reachable (e.g. B = 1, D = 1, E = 1) */
	assert_float_equal(E, 3.0, 1e-12);
	solve_both(NULL, &lp);
}

static void test_gift_lp_bad_input_and_infeasible(void **st)
{
	double cap[1] = { 1 }, lo[1] = { 0.5 }, hi[1] = { 0.2 }, b[1] = { 7 };
	size_t off[2] = { 0, 1 }, idx[1] = { 0 };
	qos_gift_lp lp = { .n_jobs = 1, .n_osts = 1, .capacity = cap,
			   .ost_off = off, .ost_idx = idx, .lo = lo, .hi = hi };
	qos_gift_lp_ctx *ctx = NULL;
	(void)st;
	assert_int_equal(qos_gift_lp_solve(&lp, b, NULL), -EINVAL);  /* lo > hi */
	hi[0] = 1;
	idx[0] = 3;
	assert_int_equal(qos_gift_lp_solve(&lp, b, NULL), -EINVAL);  /* OST range */
	idx[0] = 0;
	lp.waste_constraint = 1;
	assert_int_equal(qos_gift_lp_solve(&lp, b, NULL), -EINVAL);  /* no base */
	lp.waste_constraint = 0;
	cap[0] = -1;
	assert_int_equal(qos_gift_lp_solve(&lp, b, NULL), -EINVAL);
	cap[0] = 1;
	hi[0] = INFINITY;  /* boxes must be finite */
	assert_int_equal(qos_gift_lp_solve(&lp, b, NULL), -EINVAL);
	hi[0] = 1;
	double nan_base[1] = { NAN };
	lp.base = nan_base;
	assert_int_equal(qos_gift_lp_solve(&lp, b, NULL), -EINVAL);
	lp.base = NULL;
	lo[0] = 2;
	hi[0] = 2;  /* above capacity: infeasible */
	assert_int_equal(qos_gift_lp_solve(&lp, b, NULL), -EDOM);
	assert_true(b[0] == 7);
	assert_int_equal(qos_gift_lp_ctx_create(&ctx), 0);
	assert_int_equal(qos_gift_lp_ctx_solve(ctx, &lp, b, NULL), -EDOM);
	/* the context recovers on the next, feasible LP */
	lo[0] = 0.25;
	hi[0] = 0.75;
	double E = 0;
	assert_int_equal(qos_gift_lp_ctx_solve(ctx, &lp, b, &E), 0);
	assert_float_equal(b[0], 0.75, 1e-12);
	assert_float_equal(E, 0.75, 1e-12);
	qos_gift_lp_ctx_destroy(ctx);
	qos_gift_lp_ctx_destroy(NULL);
}

/* A context follows a change of shape (OST count, (3) on/off). */
static void test_gift_lp_ctx_reshape(void **st)
{
	qos_gift_lp_ctx *ctx = NULL;
	(void)st;
	rng_state = 9;
	assert_int_equal(qos_gift_lp_ctx_create(&ctx), 0);
	for (int k = 0; k < 12; k++) {
		rlp r;
		rlp_make(&r, 30, 4 + (size_t)(k / 3), 3, (enum shape)(k % SH_N));
		qos_gift_lp lp = rlp_lp(&r);
		solve_both(ctx, &lp);
		rlp_free(&r);
	}
	qos_gift_lp_ctx_destroy(ctx);
}

/* ---- the solver itself ---- */

/* max 3x + 2y  s.t. x + y <= 4, x + 3y <= 6, x <= 3: optimum x = 3,
 * y = 1, 11.  Then slot reuse after a free, and an infeasible row. */
static void test_gift_dual_textbook(void **st)
{
	qos_gd *gd = NULL;
	qos_gd_stats gs;
	uint32_t rx[2] = { 0, 1 }, ry[2] = { 0, 1 }, sx, sy, sz;
	double vx[2] = { 1, 1 }, vy[2] = { 1, 3 };
	(void)st;
	assert_int_equal(qos_gd_create(2, &gd), 0);
	qos_gd_row_set(gd, 0, 4);
	qos_gd_row_set(gd, 1, 6);
	assert_int_equal(qos_gd_col_add(gd, rx, vx, 2, 3, 3, &sx), 0);
	assert_int_equal(qos_gd_col_add(gd, ry, vy, 2, 2, 10, &sy), 0);
	assert_int_equal(qos_gd_solve(gd), 0);
	assert_float_equal(qos_gd_x(gd, sx), 3, 1e-12);
	assert_float_equal(qos_gd_x(gd, sy), 1, 1e-12);
	assert_float_equal(qos_gd_objective(gd), 11, 1e-12);
	/* y leaves, z = 5 per unit on row 1 only, at most 1 */
	qos_gd_col_free(gd, sy);
	uint32_t rz[1] = { 1 };
	double vz[1] = { 1 };
	assert_int_equal(qos_gd_col_add(gd, rz, vz, 1, 5, 1, &sz), 0);
	assert_int_equal(qos_gd_solve(gd), 0);
	assert_float_equal(qos_gd_x(gd, sx), 3, 1e-12);
	assert_float_equal(qos_gd_x(gd, sz), 1, 1e-12);
	assert_float_equal(qos_gd_objective(gd), 14, 1e-12);
	qos_gd_stats_get(gd, &gs);
	assert_int_equal(gs.solves, 2);
	assert_int_equal(gs.cold_starts, 1);
	/* a row nobody can meet */
	qos_gd_row_set(gd, 0, -1);
	assert_int_equal(qos_gd_solve(gd), -EDOM);
	assert_int_equal(qos_gd_col_add(gd, rz, vz, 1, 1, -1, &sz), -EINVAL);
	rz[0] = 2;
	assert_int_equal(qos_gd_col_add(gd, rz, vz, 1, 1, 1, &sz), -EINVAL);
	qos_gd_destroy(gd);
	assert_int_equal(qos_gd_create(0, &gd), -EINVAL);
}

/* The inverse rebuilt from the basis alone (what a solve does when its
 * checks fail) is the inverse the updates built: after it, re-solving is
 * at once optimal with the same answer, and the next warm solves still
 * equal GLPK's. */
static void test_gift_dual_refactor(void **st)
{
	qos_gd *gd = NULL;
	qos_gd_stats gs;
	uint32_t slot[60];
	double x[60];
	(void)st;
	rng_state = 31;
	assert_int_equal(qos_gd_create(12, &gd), 0);
	for (size_t t = 0; t < 12; t++)
		qos_gd_row_set(gd, t, 0.5 + unif());
	for (size_t j = 0; j < 60; j++) {
		uint32_t rows[4];
		double vals[4];
		size_t n = 1 + (size_t)(rng() % 4);
		for (size_t k = 0; k < n; k++) {
			rows[k] = (uint32_t)((j + 3 * k) % 12);
			vals[k] = k + 1 == n && j % 2 ? -1.0 - unif() : 1.0;
		}
		assert_int_equal(qos_gd_col_add(gd, rows, vals, n, (double)n - unif(),
						0.2 + unif(), &slot[j]), 0);
	}
	assert_int_equal(qos_gd_solve(gd), 0);
	double obj = qos_gd_objective(gd);
	for (size_t j = 0; j < 60; j++)
		x[j] = qos_gd_x(gd, slot[j]);
	assert_int_equal(qos_gd_refactor(gd), 0);
	assert_int_equal(qos_gd_solve(gd), 0);
	qos_gd_stats_get(gd, &gs);
	assert_int_equal(gs.last_iterations, 0);
	assert_true(gs.refactors >= 1);
	assert_float_equal(qos_gd_objective(gd), obj, 1e-12);
	for (size_t j = 0; j < 60; j++)
		assert_float_equal(qos_gd_x(gd, slot[j]), x[j], 1e-9);
	qos_gd_destroy(gd);
}

/* The same through GIFT's LP: refactor in the middle of a sequence. */
static void test_gift_lp_refactor_in_sequence(void **st)
{
	qos_gift_lp_ctx *ctx = NULL;
	rlp r;
	(void)st;
	rng_state = 8;
	assert_int_equal(qos_gift_lp_ctx_create(&ctx), 0);
	rlp_make(&r, 200, 30, 6, SH_GIFT);
	for (int s = 0; s < 6; s++) {
		if (s) {
			for (int c = 0; c < 4; c++)
				rlp_new_set(&r, (size_t)(rng() % r.nj), 6, 0.2);
			rlp_bounds(&r, SH_GIFT, 0.3, 0.6);
		}
		qos_gift_lp lp = rlp_lp(&r);
		solve_both(ctx, &lp);
		assert_int_equal(qos_gift_lp_ctx_refactor(ctx), 0);
	}
	qos_gift_lp_ctx_destroy(ctx);
	rlp_free(&r);
}

/* Cold starts from the crash basis (forced on every size) and from the
 * slack basis both reach GLPK's optimum on random LPs of every shape,
 * small to crowded; the crash is really taken (stats.crashes) or really
 * not. */
static void test_gift_lp_cold_crash_matches_glpk(void **st)
{
	int n = 600 * scale_factor();
	uint64_t crashes = 0;
	(void)st;
	rng_state = 41;
	for (int k = 0; k < n; k++) {
		rlp r;
		qos_gift_lp_ctx *on = NULL, *off = NULL;
		qos_gift_lp_stats son, soff;
		size_t no = 1 + (size_t)(rng() % (k % 3 ? 12 : 60));
		size_t nj = (size_t)(rng() % (k % 3 ? 40 : 400));
		rlp_make(&r, nj, no, 1 + (size_t)(rng() % 8), (enum shape)(k % SH_N));
		qos_gift_lp lp = rlp_lp(&r);
		assert_int_equal(qos_gift_lp_ctx_create(&on), 0);
		assert_int_equal(qos_gift_lp_ctx_create(&off), 0);
		qos_gift_lp_ctx_set_crash(on, 0);
		qos_gift_lp_ctx_set_crash(off, SIZE_MAX);
		double E1 = solve_both(on, &lp), E2 = solve_both(off, &lp);
		assert_true(fabs(E1 - E2) <= 1e-9 * (1 + fabs(E1)));
		qos_gift_lp_ctx_stats(on, &son);
		qos_gift_lp_ctx_stats(off, &soff);
		assert_int_equal(soff.crashes, 0);
		assert_true(son.crashes <= 1);
		assert_true(son.cold == 1 && soff.cold <= 1);
		crashes += son.crashes;
		qos_gift_lp_ctx_destroy(on);
		qos_gift_lp_ctx_destroy(off);
		rlp_free(&r);
	}
	/* most LPs have some job stopped by an OST, so most crashes happen */
	assert_true(crashes > (uint64_t)n / 2);
}

/* qos_gd_crash with a singular choice (two equal columns) falls back to
 * the slack basis and the solve is still optimal; a good choice is
 * optimal at once. */
static void test_gift_dual_crash(void **st)
{
	qos_gd *gd = NULL;
	qos_gd_stats gs;
	uint32_t rx[2] = { 0, 1 }, sx, sy, sw;
	double vx[2] = { 1, 1 };
	(void)st;
	/* max x + y + 3w  s.t.  x + y <= 1, x + y + w <= 3; x, y <= 1, w <= 1:
	 * 4 with w = 1 and x + y = 1 */
	assert_int_equal(qos_gd_create(2, &gd), 0);
	qos_gd_row_set(gd, 0, 1);
	qos_gd_row_set(gd, 1, 3);
	assert_int_equal(qos_gd_col_add(gd, rx, vx, 2, 1, 1, &sx), 0);
	assert_int_equal(qos_gd_col_add(gd, rx, vx, 2, 1, 1, &sy), 0);
	uint32_t rw[1] = { 1 };
	double vw[1] = { 1 };
	assert_int_equal(qos_gd_col_add(gd, rw, vw, 1, 3, 1, &sw), 0);
	assert_int_equal(qos_gd_has_basis(gd), 0);
	uint32_t bad_slot[2] = { sx, sy }, bad_row[2] = { 0, 1 };
	assert_int_equal(qos_gd_crash(gd, bad_slot, bad_row, 2), -EAGAIN);
	assert_int_equal(qos_gd_has_basis(gd), 1);
	assert_int_equal(qos_gd_solve(gd), 0);
	assert_float_equal(qos_gd_objective(gd), 4, 1e-12);
	assert_float_equal(qos_gd_x(gd, sx) + qos_gd_x(gd, sy), 1, 1e-12);
	assert_float_equal(qos_gd_x(gd, sw), 1, 1e-12);
	/* x basic in row 0: the optimal basis, no pivot needed */
	uint32_t good_slot[1] = { sx }, good_row[1] = { 0 };
	assert_int_equal(qos_gd_crash(gd, good_slot, good_row, 1), 0);
	assert_int_equal(qos_gd_solve(gd), 0);
	qos_gd_stats_get(gd, &gs);
	assert_int_equal(gs.last_iterations, 0);
	assert_float_equal(qos_gd_objective(gd), 4, 1e-12);
	/* out-of-range pairs are skipped */
	uint32_t odd_slot[2] = { 99, sx }, odd_row[2] = { 0, 7 };
	assert_int_equal(qos_gd_crash(gd, odd_slot, odd_row, 2), 0);
	assert_int_equal(qos_gd_solve(gd), 0);
	assert_float_equal(qos_gd_objective(gd), 4, 1e-12);
	qos_gd_destroy(gd);
}

/* GIFT-shaped random LP on a fresh solver: n_pairs jobs, each an e column
 * (+1 on its rows, -w on the last) and a d column (-1 on them, dcode w on
 * the last), d declared e's twin when twins is set; perturb as given.
 * Returns the optimum, checks the rows. */
static double twin_lp(uint64_t seed, size_t m, size_t n_pairs, int twins,
		      double perturb, int reuse)
{
	qos_gd *gd = NULL;
	uint32_t se[64], sd[64];
	size_t ne[64];
	uint32_t rows[16];
	double vals[16], g[16];
	assert_true(n_pairs <= 64 && m <= 16);
	rng_state = seed;
	assert_int_equal(qos_gd_create(m, &gd), 0);
	qos_gd_set_perturb(gd, perturb);
	for (size_t t = 0; t + 1 < m; t++) {
		g[t] = 0.2 + unif();
		qos_gd_row_set(gd, t, g[t]);
	}
	g[m - 1] = 0;
	for (size_t i = 0; i < n_pairs; i++) {
		size_t n = 1 + (size_t)(rng() % (m - 1 < 4 ? m - 1 : 4)), w = n;
		double dcode = 1.0 + (double)(rng() % 2);
		for (size_t k = 0; k < n; k++) {
			rows[k] = (uint32_t)((i * 7 + k) % (m - 1));
			vals[k] = 1.0;
		}
		rows[n] = (uint32_t)(m - 1);
		vals[n] = -(double)w;
		ne[i] = n;
		assert_int_equal(qos_gd_col_add(gd, rows, vals, n + 1, (double)w,
						0.1 + unif(), &se[i]), 0);
		for (size_t k = 0; k < n; k++)
			vals[k] = -1.0;
		vals[n] = dcode * (double)w;
		assert_int_equal(qos_gd_col_add(gd, rows, vals, n + 1,
						-(double)w * (1 + 1e-6),
						0.05 + 0.1 * unif(), &sd[i]), 0);
		if (twins)
			assert_int_equal(qos_gd_col_twin(gd, sd[i], se[i]), 0);
	}
	assert_int_equal(qos_gd_solve(gd), 0);
	if (reuse) {
		/* free every third e and reuse its slot for another column: the
		 * twin links to it lapse, and the warm solve stays right */
		for (size_t i = 0; i < n_pairs; i += 3)
			qos_gd_col_free(gd, se[i]);
		assert_int_equal(qos_gd_solve(gd), 0);
		for (size_t i = 0; i < n_pairs; i += 3) {
			rows[0] = (uint32_t)(i % (m - 1));
			vals[0] = 1.0;
			rows[1] = (uint32_t)(m - 1);
			vals[1] = -1.0;
			assert_int_equal(qos_gd_col_add(gd, rows, vals, 2, 1.0,
							0.1 + unif(), &se[i]), 0);
			ne[i] = 1;
		}
		assert_int_equal(qos_gd_solve(gd), 0);
	}
	/* rows hold */
	double lhs[16] = { 0 };
	for (size_t i = 0; i < n_pairs; i++) {
		const uint32_t *r;
		const double *v;
		size_t n = qos_gd_col_get(gd, se[i], &r, &v);
		for (size_t k = 0; k < n; k++)
			lhs[r[k]] += v[k] * qos_gd_x(gd, se[i]);
		n = qos_gd_col_get(gd, sd[i], &r, &v);
		for (size_t k = 0; k < n; k++)
			lhs[r[k]] += v[k] * qos_gd_x(gd, sd[i]);
	}
	for (size_t t = 0; t < m; t++)
		assert_true(lhs[t] <= g[t] + 1e-9);
	(void)ne;
	double obj = qos_gd_objective(gd);
	qos_gd_destroy(gd);
	return obj;
}

/* Twins (d_i derived from e_i in the pivot row) and the cost perturbation
 * change the path, never the optimum; links to a reused slot lapse; and
 * only true twins are linked. */
static void test_gift_dual_twins_and_perturbation(void **st)
{
	(void)st;
	for (uint64_t seed = 1; seed <= 60; seed++) {
		size_t m = 4 + (size_t)(seed % 12), n = 8 + (size_t)(seed * 5 % 50);
		double ref = twin_lp(seed, m, n, 0, 0, 0);
		double a = twin_lp(seed, m, n, 1, 0, 0);
		double b = twin_lp(seed, m, n, 0, 1e-7, 0);
		double c = twin_lp(seed, m, n, 1, 1e-5, 0);
		assert_float_equal(a, ref, 1e-9 * (1 + fabs(ref)));
		assert_float_equal(b, ref, 1e-9 * (1 + fabs(ref)));
		assert_float_equal(c, ref, 1e-9 * (1 + fabs(ref)));
		ref = twin_lp(seed, m, n, 0, 0, 1);
		a = twin_lp(seed, m, n, 1, 1e-7, 1);
		assert_float_equal(a, ref, 1e-9 * (1 + fabs(ref)));
	}

	qos_gd *gd = NULL;
	uint32_t r3[3] = { 0, 1, 2 }, r2[2] = { 0, 2 }, a, b, c, d;
	double va[3] = { 1, 1, -3 }, vb[3] = { -1, -1, 6 }, vc[3] = { -1, 2, 6 };
	double vd[2] = { 2, 5 };
	assert_int_equal(qos_gd_create(3, &gd), 0);
	assert_int_equal(qos_gd_col_add(gd, r3, va, 3, 1, 1, &a), 0);
	assert_int_equal(qos_gd_col_add(gd, r3, vb, 3, 1, 1, &b), 0);
	assert_int_equal(qos_gd_col_add(gd, r3, vc, 3, 1, 1, &c), 0);
	assert_int_equal(qos_gd_col_add(gd, r2, vd, 2, 1, 1, &d), 0);
	assert_int_equal(qos_gd_col_twin(gd, b, a), 0);    /* -1 x, row 2 apart */
	assert_int_equal(qos_gd_col_twin(gd, c, a), -EINVAL); /* two rows differ */
	assert_int_equal(qos_gd_col_twin(gd, d, a), -EINVAL); /* 2 x on row 0, row 1 and 2 differ */
	assert_int_equal(qos_gd_col_twin(gd, a, a), -EINVAL);
	qos_gd_col_free(gd, a);
	assert_int_equal(qos_gd_col_twin(gd, b, a), -EINVAL);
	assert_int_equal(qos_gd_col_twin(gd, b, 99), -EINVAL);
	qos_gd_destroy(gd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gift_lp_fig6),
		cmocka_unit_test(test_gift_lp_constraint3_blocks),
		cmocka_unit_test(test_gift_lp_no_zero_sum_throttle),
		cmocka_unit_test(test_gift_lp_mbw),
		cmocka_unit_test(test_gift_lp_bad_input_and_infeasible),
		cmocka_unit_test(test_gift_dual_textbook),
		cmocka_unit_test(test_gift_dual_refactor),
		cmocka_unit_test(test_gift_dual_crash),
		cmocka_unit_test(test_gift_dual_twins_and_perturbation),
		cmocka_unit_test(test_gift_lp_cold_crash_matches_glpk),
		cmocka_unit_test(test_gift_lp_refactor_in_sequence),
		cmocka_unit_test(test_gift_lp_ctx_reshape),
		cmocka_unit_test(test_gift_lp_random_matches_glpk),
		cmocka_unit_test(test_gift_lp_medium_matches_glpk),
		cmocka_unit_test(test_gift_lp_warm_sequences_match_glpk),
		cmocka_unit_test(test_gift_lp_long_warm_sequence),
		cmocka_unit_test(test_gift_lp_large_matches_glpk),
		cmocka_unit_test(test_gift_lp_large_decision_is_optimal),
		cmocka_unit_test(test_gift_lp_basis_save_load),
		cmocka_unit_test(test_gift_lp_basis_damaged),
		cmocka_unit_test(test_gift_lp_gift_restart_is_warm),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
