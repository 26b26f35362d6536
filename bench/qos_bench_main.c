/* qos_bench_main.c — pfs-qosbench: times the QoS decisions the papers
 * report costs for, from outside (qos/ reads no clock):
 *   - GIFT on a sequence of instances where a fraction of the jobs (1 % by
 *     default) changes every step: a third leave and are replaced by a new
 *     job, a third change their OST set, a third leave or (if idle) come
 *     back, with fresh ids for new jobs.  Timed per step:
 *       warm   qos_gift_decide on one GIFT state (the LP restarts from the
 *              last basis, coupons carry over: the MDS's steady state);
 *       cold   the same instance from fresh state (qos_gift_decide_once);
 *       restart the same instance on the state saved before this step
 *              (qos_gift_save, qos_gift_load: coupons and the LP basis,
 *              as the MDS keeps them across a restart), with the time of
 *              qos_gift_save (the MDS saves after every decision) and the
 *              image's size;
 *       LP     the decision's LP alone (base BSIP, Y the friendly jobs),
 *              warm (qos_gift_lp_ctx_solve), cold on a fresh context from
 *              the crash basis (what qos_gift_lp_solve does) and from the
 *              slack basis, with their pivots, and GLPK
 *              (qos_gift_lp_solve_glpk, the reference), the time per
 *              pivot, and the largest relative difference between the
 *              warm LP's objective and GLPK's over the steps;
 *     gift.txt reports 5 ms for 1,000 jobs on 200 OSTs with COIN-OR CLP;
 *   - the floor of one dual simplex pivot at m = osts + 1 rows (the
 *     solver's own dense kernels, gift_dual_i.h): one pass of the
 *     rank-one update of B^-1 with its row norms, one dense B^-1 v (the
 *     bound flips' effect on x_B) and one pivot row over jobs x 5.5
 *     packed entries (|S_i| + 1 on (3) of the e_i columns; the d_i
 *     are derived from them), each alone on warm caches: what a pivot
 *     costs at the least;
 *   - one AdapTBF period per job (adaptbf.txt: under 30 µs per job),
 *   - POFS and AdapTBF through the policy interface.
 *   pfs-qosbench [--jobs 1000] [--osts 200] [--reps 21] [--change 0.01] [--cpu]
 * Prints medians, minima and maxima in one line each (steps after the
 * first, which has no basis to start from); wall-clock time, or with
 * --cpu the thread's CPU time. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "qos/adaptbf.h"
#include "qos/gift.h"
#include "qos/gift_dual_i.h"
#include "qos/gift_lp.h"
#include "qos/padll.h"
#include "qos/policy.h"

/* Seconds on clock clk: CLOCK_MONOTONIC (wall) or, with --cpu,
 * CLOCK_THREAD_CPUTIME_ID (this thread's CPU time, steadier on a machine
 * shared with other work). */
static double now_s(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void report(const char *what, double *t, int n, double scale, const char *unit)
{
	qsort(t, (size_t)n, sizeof(*t), cmp_d);
	printf("%-44s median %10.3f %-2s  min %10.3f  max %10.3f  (n=%d)\n", what,
	       t[n / 2] * scale, unit, t[0] * scale, t[n - 1] * scale, n);
}

/* ---- a changing GIFT instance ---- */

static uint64_t seq_rng(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Give job slot i a fresh random set of 1..8 OSTs. */
static void seq_new_set(qos_gift_synth *s, size_t i, uint64_t *x)
{
	size_t no = s->in.n_osts, k = 1 + (size_t)(seq_rng(x) % 8);
	memset(&s->active[i * no], 0, no);
	if (k > no)
		k = no;
	for (size_t placed = 0; placed < k;) {
		size_t j = (size_t)(seq_rng(x) % no);
		if (!s->active[i * no + j]) {
			s->active[i * no + j] = 1;
			placed++;
		}
	}
}

/* A new job in slot i: new id, node count, OST set. */
static void seq_arrive(qos_gift_synth *s, size_t i, uint64_t *x, uint64_t *next_id)
{
	qos_job *jb = &s->jobs[i];
	snprintf(jb->id, sizeof(jb->id), "new%llu", (unsigned long long)(*next_id)++);
	jb->nodes = (double)(1 + seq_rng(x) % 1024);
	jb->throttle_friendly = seq_rng(x) % 3 != 0;
	seq_new_set(s, i, x);
}

/* One step: round(frac * jobs) slots change (at least one). */
static void seq_step(qos_gift_synth *s, double frac, uint64_t *x, uint64_t *next_id)
{
	size_t nj = s->in.n_jobs, no = s->in.n_osts;
	size_t n = (size_t)(frac * (double)nj + 0.5);
	if (n < 1)
		n = 1;
	for (size_t c = 0; c < n; c++) {
		size_t i = (size_t)(seq_rng(x) % nj);
		int idle = 1;
		for (size_t j = 0; j < no && idle; j++)
			idle = !s->active[i * no + j];
		switch (seq_rng(x) % 3) {
		case 0:
			seq_arrive(s, i, x, next_id);
			break;
		case 1:
			if (idle)
				seq_arrive(s, i, x, next_id);
			else
				seq_new_set(s, i, x);
			break;
		default:
			if (idle)
				seq_arrive(s, i, x, next_id);
			else
				memset(&s->active[i * no], 0, no);
		}
	}
	s->in.now += s->in.period;
}

/* The LP a fresh GIFT state builds for s (base BSIP, Y = friendly jobs,
 * lo = (1 - B_thres) BSIP), in caller-owned arrays of n_jobs. */
static void seq_lp(const qos_gift_synth *s, const qos_gift_sets *st, double B_thres,
		   double *lo, uint8_t *thr, qos_gift_lp *lp)
{
	for (size_t i = 0; i < s->in.n_jobs; i++) {
		thr[i] = s->jobs[i].throttle_friendly && st->b_bsip[i] > 0;
		lo[i] = thr[i] ? st->b_bsip[i] * (1 - B_thres) : st->b_bsip[i];
	}
	*lp = (qos_gift_lp){
		.n_jobs = s->in.n_jobs, .n_osts = s->in.n_osts,
		.capacity = s->capacity, .ost_off = st->off, .ost_idx = st->idx,
		.lo = lo, .hi = st->cap_min, .base = st->b_bsip, .throttle = thr,
		.E_min = st->E_bsip, .waste_constraint = 1,
	};
}

enum { T_WARM, T_COLD, T_LPWARM, T_LPCOLD, T_LPSLACK, T_GLPK, T_ITERS,
       T_CITERS, T_SITERS, T_WPIV, T_CPIV, T_RESTART, T_RPIV, T_SAVE, T_IMG, T_BCH, T_GPIV, T_N };

/* One cold solve of lp on a fresh context, crash basis from min_osts
 * OSTs (SIZE_MAX: slack basis); *t its time, *pivots its pivots. */
static int cold_lp(const qos_gift_lp *lp, size_t min_osts, double *b, clockid_t clk,
		   double *t, double *pivots)
{
	qos_gift_lp_ctx *c = NULL;
	qos_gift_lp_stats ls;
	double E, t0;
	int rc = qos_gift_lp_ctx_create(&c);

	if (rc)
		return rc;
	qos_gift_lp_ctx_set_crash(c, min_osts);
	t0 = now_s(clk);
	rc = qos_gift_lp_ctx_solve(c, lp, b, &E);
	*t = now_s(clk) - t0;
	qos_gift_lp_ctx_stats(c, &ls);
	*pivots = (double)ls.last_iterations;
	qos_gift_lp_ctx_destroy(c);
	return rc;
}

static int bench_gift(size_t jobs, size_t osts, int reps, double frac, clockid_t clk)
{
	qos_gift_params p;
	qos_gift_synth s;
	qos_gift *g = NULL;
	qos_gift_lp_ctx *ctx = NULL;
	double *t[T_N] = { NULL };
	double *alloc = calloc(jobs * osts, sizeof(double));
	double *coupons = calloc(jobs, sizeof(double));
	double *lo = calloc(jobs, sizeof(double)), *b = calloc(jobs, sizeof(double));
	uint8_t *thr = calloc(jobs, 1);
	uint64_t x = 42, next_id = 0;
	double gap_max = 0;  /* largest |E_dual - E_glpk| / |E_glpk| */
	int rc;

	qos_gift_params_default(&p);
	rc = qos_gift_synth_make(jobs, osts, 8, 1, &s);
	if (rc)
		goto out0;
	rc = -ENOMEM;
	for (int k = 0; k < T_N; k++)
		if (!(t[k] = calloc((size_t)reps, sizeof(double))))
			goto out;
	if (!alloc || !coupons || !lo || !b || !thr)
		goto out;
	rc = qos_gift_create(&p, &g);
	if (!rc)
		rc = qos_gift_lp_ctx_create(&ctx);
	/* step 0 primes the warm state; steps 1..reps are timed */
	for (int r = -1; r < reps && !rc; r++) {
		qos_result res = { .alloc = alloc, .coupons = coupons };
		qos_gift_sets st;
		qos_gift_lp lp;
		qos_gift_lp_stats ls;
		double E, t0, t1;
		qos_gift *h = NULL;
		uint8_t *img = NULL;
		size_t img_len = 0;
		if (r >= 0) {
			/* the state as the MDS stored it after the last decision */
			t0 = now_s(clk);
			rc = qos_gift_save(g, &img, &img_len);
			t[T_SAVE][r] = now_s(clk) - t0;
			t[T_IMG][r] = (double)img_len;
			if (!rc)
				rc = qos_gift_load(NULL, img, img_len, &h);
			free(img);
			if (rc)
				break;
			seq_step(&s, frac, &x, &next_id);
		}
		t0 = now_s(clk);
		rc = qos_gift_decide(g, &s.in, &res);
		t1 = now_s(clk);
		if (!rc && r >= 0) {
			qos_gift_lp_stats gls;
			qos_gift_lp_stats_get(g, &gls);
			t[T_GPIV][r] = (double)gls.last_iterations;
		}
		if (!rc && h) {
			qos_gift_lp_stats hs;
			double t2 = now_s(clk);
			rc = qos_gift_decide(h, &s.in, &res);
			t[T_RESTART][r] = now_s(clk) - t2;
			qos_gift_lp_stats_get(h, &hs);
			t[T_RPIV][r] = (double)hs.last_iterations;
			if (!rc && (hs.cold || !hs.restored))
				fprintf(stderr, "pfs-qosbench: restart decision %d was cold\n", r);
		}
		qos_gift_destroy(h);
		if (rc || r < 0) {
			if (!rc)
				rc = qos_gift_sets_build(&s.in, &st);
			if (!rc) {
				seq_lp(&s, &st, p.B_thres, lo, thr, &lp);
				rc = qos_gift_lp_ctx_solve(ctx, &lp, b, &E);
				qos_gift_sets_free(&st);
			}
			continue;
		}
		t[T_WARM][r] = t1 - t0;
		t0 = now_s(clk);
		rc = qos_gift_decide_once(&p, &s.in, &res);
		t[T_COLD][r] = now_s(clk) - t0;
		if (!rc)
			rc = qos_gift_sets_build(&s.in, &st);
		if (rc)
			break;
		seq_lp(&s, &st, p.B_thres, lo, thr, &lp);
		t0 = now_s(clk);
		rc = qos_gift_lp_ctx_solve(ctx, &lp, b, &E);
		t[T_LPWARM][r] = now_s(clk) - t0;
		qos_gift_lp_ctx_stats(ctx, &ls);
		t[T_ITERS][r] = (double)ls.last_iterations;
		t[T_BCH][r] = (double)ls.last_basis_change;
		t[T_WPIV][r] = t[T_LPWARM][r] / (ls.last_iterations ? (double)ls.last_iterations : 1);
		double E_warm = E;
		if (!rc)
			rc = cold_lp(&lp, 0, b, clk, &t[T_LPCOLD][r], &t[T_CITERS][r]);
		t[T_CPIV][r] = t[T_LPCOLD][r] / (t[T_CITERS][r] > 0 ? t[T_CITERS][r] : 1);
		if (!rc)
			rc = cold_lp(&lp, SIZE_MAX, b, clk, &t[T_LPSLACK][r],
				     &t[T_SITERS][r]);
		if (!rc) {
			t0 = now_s(clk);
			rc = qos_gift_lp_solve_glpk(&lp, b, &E);
			t[T_GLPK][r] = now_s(clk) - t0;
			double d = fabs(E_warm - E) / (fabs(E) > 0 ? fabs(E) : 1);
			gap_max = d > gap_max ? d : gap_max;
		}
		qos_gift_sets_free(&st);
	}
	if (!rc) {
		char what[96];
		qos_gift_stats gs;
		qos_gift_stats_get(g, &gs);
		snprintf(what, sizeof(what), "gift decision %zux%zu, warm (%.3g%% change)",
			 jobs, osts, 100 * frac);
		report(what, t[T_WARM], reps, 1e3, "ms");
		report("  warm: its LP's pivots", t[T_GPIV], reps, 1, "");
		snprintf(what, sizeof(what), "gift decision %zux%zu, cold", jobs, osts);
		report(what, t[T_COLD], reps, 1e3, "ms");
		snprintf(what, sizeof(what), "gift decision %zux%zu, after restart", jobs, osts);
		report(what, t[T_RESTART], reps, 1e3, "ms");
		report("  after restart: its LP's pivots", t[T_RPIV], reps, 1, "");
		report("  qos_gift_save (with the LP basis)", t[T_SAVE], reps, 1e3, "ms");
		report("  its image", t[T_IMG], reps, 1e-3, "kB");
		report("  its LP, warm (dual simplex)", t[T_LPWARM], reps, 1e3, "ms");
		report("  its LP, warm: pivots", t[T_ITERS], reps, 1, "");
		report("  its LP, warm: basis change (least pivots)", t[T_BCH], reps, 1, "");
		report("  its LP, warm: time per pivot", t[T_WPIV], reps, 1e6, "us");
		report("  its LP, cold (dual simplex, crash basis)", t[T_LPCOLD], reps, 1e3, "ms");
		report("  its LP, cold, crash basis: pivots", t[T_CITERS], reps, 1, "");
		report("  its LP, cold, crash basis: time per pivot", t[T_CPIV], reps, 1e6, "us");
		report("  its LP, cold (dual simplex, slack basis)", t[T_LPSLACK], reps, 1e3, "ms");
		report("  its LP, cold, slack basis: pivots", t[T_SITERS], reps, 1, "");
		report("  its LP, GLPK (reference)", t[T_GLPK], reps, 1e3, "ms");
		printf("  its LP, warm vs GLPK: largest relative objective difference %.2g\n",
		       gap_max);
		if (gs.lp_failures) {
			fprintf(stderr, "pfs-qosbench: %llu LP failures\n",
				(unsigned long long)gs.lp_failures);
			rc = -EDOM;
		}
	}
out:
	qos_gift_destroy(g);
	qos_gift_lp_ctx_destroy(ctx);
	qos_gift_synth_free(&s);
out0:
	for (int k = 0; k < T_N; k++)
		free(t[k]);
	free(alloc);
	free(coupons);
	free(lo);
	free(b);
	free(thr);
	return rc;
}

static int bench_floor(size_t jobs, size_t osts, int reps, clockid_t clk)
{
	size_t m = osts + 1, ms = (m + 3) & ~(size_t)3, nnz = jobs * 11 / 2;
	double *B = qos_gd__zalloc(m * ms), *rho = qos_gd__zalloc(ms);
	double *v = qos_gd__zalloc(ms), *w = calloc(m, sizeof(double));
	double *alpha = calloc(jobs, sizeof(double)), *val = calloc(nnz, sizeof(double));
	double *t[3] = { calloc((size_t)reps, sizeof(double)),
			 calloc((size_t)reps, sizeof(double)),
			 calloc((size_t)reps, sizeof(double)) };
	uint16_t *row = calloc(nnz, sizeof(uint16_t));
	uint32_t *beg = calloc(jobs + 1, sizeof(uint32_t));
	uint64_t x = 7;
	volatile double sink = 0;
	int rc = -ENOMEM;

	if (!B || !rho || !v || !w || !alpha || !val || !row || !beg || !t[0] ||
	    !t[1] || !t[2] || m > UINT16_MAX)
		goto out;
	for (size_t j = 0; j <= jobs; j++)
		beg[j] = (uint32_t)(j * nnz / jobs);
	for (size_t p = 0; p < m; p++)
		for (size_t k = 0; k < m; k++)
			B[p * ms + k] = (double)(seq_rng(&x) % 1000) / 1000.0;
	for (size_t k = 0; k < m; k++) {
		rho[k] = (double)(seq_rng(&x) % 1000) / 1000.0;
		v[k] = 1e-3;
	}
	for (size_t e = 0; e < nnz; e++) {
		row[e] = (uint16_t)(seq_rng(&x) % m);
		val[e] = 1.0;
	}
	for (int r = 0; r < reps; r++) {
		double t0 = now_s(clk);
		for (size_t p = 0; p < m; p++)
			w[p] = qos_gd__k_axpy_norm(&B[p * ms], rho, 1e-12, ms);
		double t1 = now_s(clk);
		double acc = 0;
		for (size_t p = 0; p < m; p++)
			acc += qos_gd__k_dot(&B[p * ms], v, ms);
		double t2 = now_s(clk);
		for (size_t j = 0; j < jobs; j++) {
			double a = 0;
			for (size_t e = beg[j], end = beg[j + 1]; e < end; e++)
				a += val[e] * rho[row[e]];
			alpha[j] = a;
		}
		double t3 = now_s(clk);
		sink = sink + acc + alpha[(size_t)r % jobs] + w[(size_t)r % m];
		t[0][r] = t1 - t0;
		t[1][r] = t2 - t1;
		t[2][r] = t3 - t2;
	}
	char what[96];
	snprintf(what, sizeof(what), "pivot floor, m=%zu: B^-1 update + norms", m);
	report(what, t[0], reps, 1e6, "us");
	snprintf(what, sizeof(what), "pivot floor, m=%zu: dense B^-1 v (flips)", m);
	report(what, t[1], reps, 1e6, "us");
	snprintf(what, sizeof(what), "pivot floor: pivot row, %zu entries", nnz);
	report(what, t[2], reps, 1e6, "us");
	rc = 0;
out:
	free(B);
	free(rho);
	free(v);
	free(w);
	free(alpha);
	free(val);
	free(row);
	free(beg);
	for (int k = 0; k < 3; k++)
		free(t[k]);
	return rc;
}

static int bench_adaptbf(size_t jobs, int reps, clockid_t clk)
{
	qos_adaptbf_job *x = calloc(jobs, sizeof(*x));
	double *t = calloc((size_t)reps, sizeof(double));
	unsigned seed = 1;
	int rc = 0;

	for (size_t i = 0; i < jobs; i++) {
		x[i].n = 1 + rand_r(&seed) % 64;
		x[i].prev = -1;
	}
	for (int r = 0; r < reps && !rc; r++) {
		for (size_t i = 0; i < jobs; i++)
			x[i].d = rand_r(&seed) % 200; /* RPCs seen in the last period */
		double t0 = now_s(clk);
		rc = qos_adaptbf_allocate(x, jobs, 10000 * (int64_t)jobs / 10);
		t[r] = (now_s(clk) - t0) / (double)jobs;
	}
	if (!rc) {
		char what[80];
		snprintf(what, sizeof(what), "adaptbf period, per job (%zu jobs)", jobs);
		report(what, t, reps, 1e6, "us");
	}
	free(x);
	free(t);
	return rc;
}

static int bench_policy(const char *name, size_t jobs, size_t osts, int reps,
			clockid_t clk)
{
	const qos_policy_ops *ops = qos_policy_find(name);
	qos_gift_synth s;
	double *t = calloc((size_t)reps, sizeof(double));
	void *st = NULL;
	int rc;

	if (!ops)
		return -ENOENT;
	rc = qos_gift_synth_make(jobs, osts, 8, 7, &s);
	if (rc)
		return rc;
	rc = ops->create(NULL, &st);
	double *alloc = calloc(jobs * osts, sizeof(double));
	for (int r = 0; r < reps && !rc; r++) {
		qos_result res = { .alloc = alloc };
		s.in.now = r * s.in.period;
		double t0 = now_s(clk);
		rc = ops->decide(st, &s.in, &res);
		t[r] = now_s(clk) - t0;
	}
	if (!rc) {
		char what[80];
		snprintf(what, sizeof(what), "%s decision %zu jobs x %zu OSTs", name, jobs, osts);
		report(what, t, reps, 1e3, "ms");
	}
	if (st)
		ops->destroy(st);
	free(alloc);
	free(t);
	qos_gift_synth_free(&s);
	return rc;
}

int main(int argc, char **argv)
{
	size_t jobs = 1000, osts = 200;
	int reps = 21, rc;
	double frac = 0.01;
	clockid_t clk = CLOCK_MONOTONIC;

	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(argv[i], "--cpu"))
			clk = CLOCK_THREAD_CPUTIME_ID;
		else if (!strcmp(argv[i], "--jobs") && v && ++i)
			jobs = strtoul(v, NULL, 10);
		else if (!strcmp(argv[i], "--osts") && v && ++i)
			osts = strtoul(v, NULL, 10);
		else if (!strcmp(argv[i], "--reps") && v && ++i)
			reps = atoi(v);
		else if (!strcmp(argv[i], "--change") && v && ++i)
			frac = atof(v);
		else
			reps = 0;  /* unknown argument: usage */
	}
	if (!jobs || !osts || reps < 1 || !(frac >= 0 && frac <= 1)) {
		fprintf(stderr, "usage: pfs-qosbench [--jobs N] [--osts N] [--reps N] "
			"[--change FRACTION] [--cpu]\n");
		return 2;
	}
	rc = bench_gift(jobs, osts, reps, frac, clk);
	if (!rc && osts + 1 <= QOS_GD_MAX_ROWS)
		rc = bench_floor(jobs, osts, reps * 100, clk);
	if (!rc)
		rc = bench_adaptbf(jobs, reps * 100, clk);
	if (!rc)
		rc = bench_policy("pofs", jobs, osts, reps, clk);
	if (!rc)
		rc = bench_policy("adaptbf", jobs, osts, reps, clk);
	if (rc) {
		fprintf(stderr, "pfs-qosbench: %s\n", strerror(-rc));
		return 1;
	}
	return 0;
}
