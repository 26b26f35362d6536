/* gift.c — GIFT's decision (gift.txt Algorithm 1), BSIP/POFS fair shares
 * and effective bandwidth (sec. 2), and synthetic instances.
 *
 * A decision costs O(sum_i |S_i|) outside the LP plus one GLPK simplex
 * (gift_lp.c); coupon look-ups are hashed (coupon.c).  Scratch arrays are
 * allocated per decision: their cost is linear and far below the LP's. */
#include "qos/gift.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qos/gift_lp.h"
#include <zlib.h>

const char *const qos_gift_param_keys[] = {
	"N", "tau", "B_thres", "regret_period", "regret_budget", NULL,
};

/* ---- fair shares ---- */

static double job_weight(const qos_job *j)
{
	return j->priority > 0 ? j->priority : 1.0;
}

void qos_gift_sets_free(qos_gift_sets *s)
{
	free(s->off);
	free(s->idx);
	free(s->weight);
	free(s->b_bsip);
	free(s->cap_min);
	memset(s, 0, sizeof(*s));
}

/* First j' >= j with row[j'] != 0, or no: skips zero bytes eight at a
 * time (a job uses a few of hundreds of OSTs, so the n_jobs x n_osts
 * scan is mostly zeros). */
static size_t next_active(const uint8_t *row, size_t j, size_t no)
{
	while (j + 8 <= no) {
		uint64_t w;
		memcpy(&w, &row[j], sizeof(w));
		if (w)
			break;
		j += 8;
	}
	while (j < no && !row[j])
		j++;
	return j;
}

int qos_gift_sets_build(const qos_instance *in, qos_gift_sets *s)
{
	size_t nj = in->n_jobs, no = in->n_osts, nnz = 0;
	int rc = -EINVAL;

	memset(s, 0, sizeof(*s));
	if ((no && !in->capacity) || (nj && !in->jobs) || (nj && no && !in->active))
		return -EINVAL;
	for (size_t j = 0; j < no; j++)
		if (!(in->capacity[j] >= 0) || isinf(in->capacity[j]))
			return -EINVAL;
	s->n_jobs = nj;
	s->n_osts = no;
	for (size_t i = 0; i < nj; i++) {
		const uint8_t *row = &in->active[i * no];
		for (size_t j = next_active(row, 0, no); j < no;
		     j = next_active(row, j + 1, no))
			nnz++;
	}
	rc = -ENOMEM;
	s->off = malloc((nj + 1) * sizeof(*s->off));
	s->idx = malloc((nnz ? nnz : 1) * sizeof(*s->idx));
	s->weight = calloc(no ? no : 1, sizeof(*s->weight));
	s->b_bsip = calloc(nj ? nj : 1, sizeof(*s->b_bsip));
	s->cap_min = calloc(nj ? nj : 1, sizeof(*s->cap_min));
	if (!s->off || !s->idx || !s->weight || !s->b_bsip || !s->cap_min)
		goto out;
	nnz = 0;
	for (size_t i = 0; i < nj; i++) {
		const uint8_t *row = &in->active[i * no];
		s->off[i] = nnz;
		for (size_t j = next_active(row, 0, no); j < no;
		     j = next_active(row, j + 1, no)) {
			s->idx[nnz++] = j;
			s->weight[j] += job_weight(&in->jobs[i]);
		}
	}
	s->off[nj] = nnz;
	s->E_bsip = 0.0;
	for (size_t i = 0; i < nj; i++) {
		double b = INFINITY, cmin = INFINITY;
		double w = job_weight(&in->jobs[i]);
		if (s->off[i] == s->off[i + 1])
			continue;
		/* Line 2: b_i,bsip = min_{j in S_i} C_j w_i / sum_{l in L_j} w_l,
		 * the share on the most contended OST (Fig. 5 (2)). */
		for (size_t k = s->off[i]; k < s->off[i + 1]; k++) {
			size_t j = s->idx[k];
			double share = in->capacity[j] * w / s->weight[j];
			if (share < b)
				b = share;
			if (in->capacity[j] < cmin)
				cmin = in->capacity[j];
		}
		s->b_bsip[i] = b;
		s->cap_min[i] = cmin;
		s->E_bsip += (double)(s->off[i + 1] - s->off[i]) * b;
	}
	rc = 0;
out:
	if (rc)
		qos_gift_sets_free(s);
	return rc;
}

void qos_gift_pofs(const qos_instance *in, const qos_gift_sets *s, double *alloc)
{
	size_t no = s->n_osts;
	memset(alloc, 0, s->n_jobs * no * sizeof(*alloc));
	for (size_t i = 0; i < s->n_jobs; i++)
		for (size_t k = s->off[i]; k < s->off[i + 1]; k++) {
			size_t j = s->idx[k];
			alloc[i * no + j] = in->capacity[j] *
					    job_weight(&in->jobs[i]) / s->weight[j];
		}
}

void qos_gift_spread(const qos_instance *in, const qos_gift_sets *s,
		     const double *b, double *alloc)
{
	size_t no = s->n_osts;
	(void)in;
	memset(alloc, 0, s->n_jobs * no * sizeof(*alloc));
	for (size_t i = 0; i < s->n_jobs; i++)
		for (size_t k = s->off[i]; k < s->off[i + 1]; k++)
			alloc[i * no + s->idx[k]] = b[i];
}

double qos_gift_effective(const qos_instance *in, const qos_gift_sets *s,
			  const double *alloc)
{
	double e = 0.0;
	(void)in;
	for (size_t i = 0; i < s->n_jobs; i++) {
		double m = INFINITY;
		if (s->off[i] == s->off[i + 1])
			continue;
		for (size_t k = s->off[i]; k < s->off[i + 1]; k++) {
			double a = alloc[i * s->n_osts + s->idx[k]];
			if (a < m)
				m = a;
		}
		e += (double)(s->off[i + 1] - s->off[i]) * m;
	}
	return e;
}

/* ---- GIFT ---- */

struct qos_gift {
	qos_gift_params p;
	qos_coupon_table *ct;
	int started;
	double next_assess;   /* time of the next regret assessment */
	qos_gift_stats st;
	qos_gift_gate_stats gate; /* not saved: counts since create/load */
	qos_gift_lp_ctx *lp;  /* LP basis kept between decisions (warm start);
	                       * created at the first decision, not saved */
};

void qos_gift_params_default(qos_gift_params *p)
{
	/* N: sec. 3.2 wants sigma = sqrt(0.25 / N) small and cites
	 * "sigma less than 0.001" (N = 250,000: a window that size per job
	 * costs ~1 MB, too much for thousands of ids); we take sigma = 0.01,
	 * N = 2,500.  Sensitivity: bench/sim_sweep.sh (Fig. 11(c)). */
	p->N = 2500;
	/* tau: sec. 4's default ("default parameter configuration (tau =
	 * 0.8, B_thres = 0.1)", Fig. 12), one threshold for the jobs and the
	 * system as sec. 3.2 recommends.  Silent in the paper, our choices
	 * (coupon.h): a coupon counts as redeemed by the fraction of its
	 * worth paid back; a coupon not yet paid back counts as unredeemed
	 * (the paper's n_i(k) is "the number of coupons redeemed (out of
	 * N)"), so c_sys measures redemption lag as well as loss; a job with
	 * no coupons has c_i = 1.  Sweep: bench/sim_sweep.sh (Fig. 11(a)). */
	p->tau = 0.8;
	/* B_thres: sec. 4's default.  Throttling is b_i >= b_bsip (1 -
	 * B_thres) for i in Y (sec. 3.4 (a)); whom of Y to throttle and by
	 * how much is the LP's choice (sec. 3.4 remark (2)), nothing else
	 * ranks them.  Fig. 11(b) sweep: bench/sim_sweep.sh. */
	p->B_thres = 0.1;
	/* a week: sec. 3.2 "can be much larger to allow applications
	 * sufficient time for redeeming the coupons" (see gift.h) */
	p->regret_period = 7 * 86400.0;
	/* the most node-hours outstanding and owed at any time, and the most
	 * one assessment awards (sec. 4: outstanding "less than 20 hours at
	 * any instance"; "360 node-hours over 24 days" awarded daily) */
	p->regret_budget = 15.0;
}

int qos_gift_params_parse(const qos_params *kv, qos_gift_params *p)
{
	qos_gift_params_default(p);
	if (qos_params_check(kv, qos_gift_param_keys))
		return -EINVAL;
	double N = qos_param_get(kv, "N", p->N);
	p->tau = qos_param_get(kv, "tau", p->tau);
	p->B_thres = qos_param_get(kv, "B_thres", p->B_thres);
	p->regret_period = qos_param_get(kv, "regret_period", p->regret_period);
	p->regret_budget = qos_param_get(kv, "regret_budget", p->regret_budget);
	if (!(N >= 1 && N <= 1e7) || N != floor(N))
		return -EINVAL;
	p->N = (unsigned)N;
	if (!(p->tau >= 0 && p->tau <= 1) || !(p->B_thres >= 0 && p->B_thres <= 1) ||
	    !(p->regret_period > 0) || !(p->regret_budget >= 0))
		return -EINVAL;
	return 0;
}

int qos_gift_create(const qos_gift_params *p, qos_gift **out)
{
	qos_gift_params d;
	qos_gift *g;
	int rc;

	*out = NULL;
	if (!p) {
		qos_gift_params_default(&d);
		p = &d;
	}
	if (!(p->B_thres >= 0 && p->B_thres <= 1) || !(p->regret_period > 0) ||
	    !(p->regret_budget >= 0))
		return -EINVAL;
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->p = *p;
	rc = qos_coupon_table_create(p->N, p->tau, &g->ct);
	if (rc) {
		free(g);
		return rc;
	}
	*out = g;
	return 0;
}

void qos_gift_destroy(qos_gift *g)
{
	if (!g)
		return;
	qos_coupon_table_destroy(g->ct);
	qos_gift_lp_ctx_destroy(g->lp);
	free(g);
}

const qos_coupon_table *qos_gift_coupons(const qos_gift *g)
{
	return g->ct;
}

void qos_gift_stats_get(const qos_gift *g, qos_gift_stats *st)
{
	*st = g->st;
	st->awarded_nh = qos_coupon_awarded_total(g->ct);
	st->liability_nh = qos_coupon_liability(g->ct);
}

void qos_gift_gate_get(const qos_gift *g, qos_gift_gate_stats *gs)
{
	*gs = g->gate;
	gs->periods = g->started ? g->st.assessments + 1 : 0;
}

/* Regret assessments due by now (sec. 3.2): settle, award, reset c_sys. */
static void gift_assess(qos_gift *g, double now)
{
	if (!g->started) {
		g->started = 1;
		g->next_assess = now + g->p.regret_period;
		return;
	}
	while (now >= g->next_assess) {
		/* the budget is per period: this assessment may award up
		 * to regret_budget node-hours on top of earlier ones */
		qos_coupon_assess(g->ct, g->next_assess, g->p.regret_period,
				  qos_coupon_awarded_total(g->ct) + g->p.regret_budget, NULL);
		g->st.assessments++;
		g->next_assess += g->p.regret_period;
	}
}

int qos_gift_decide(qos_gift *g, const qos_instance *in, qos_result *res)
{
	qos_gift_sets s;
	size_t nj = in->n_jobs, no = in->n_osts;
	double *base = NULL, *lo = NULL, *hi = NULL, *b = NULL, *gap = NULL;
	uint8_t *thr = NULL, *redeemed = NULL;
	double E = 0.0;
	int rc;

	if (!res || !res->alloc)
		return -EINVAL;
	rc = qos_gift_sets_build(in, &s);
	if (rc)
		return rc;
	rc = -ENOMEM;
	base = malloc((nj + 1) * sizeof(*base));
	lo = malloc((nj + 1) * sizeof(*lo));
	hi = malloc((nj + 1) * sizeof(*hi));
	b = malloc((nj + 1) * sizeof(*b));
	gap = malloc((no + 1) * sizeof(*gap));
	thr = calloc(nj + 1, 1);
	redeemed = calloc(nj + 1, 1);
	if (!base || !lo || !hi || !b || !gap || !thr || !redeemed)
		goto out;

	gift_assess(g, in->now);

	/* Lines 1-2: BSIP, and the gaps it leaves on each OST. */
	for (size_t j = 0; j < no; j++)
		gap[j] = in->capacity[j];
	for (size_t i = 0; i < nj; i++) {
		base[i] = s.b_bsip[i];
		for (size_t k = s.off[i]; k < s.off[i + 1]; k++)
			gap[s.idx[k]] -= s.b_bsip[i];
	}

	/* Line 3 (sec. 3.3): redeem only where every OST of the job has a
	 * gap, so no other job is throttled to pay a coupon back.  The paper
	 * does not order the coupon holders: we take them in instance order,
	 * each up to the smallest gap on its OSTs (Fig. 6 has one holder). */
	uint64_t red0 = g->st.redemptions;
	for (size_t i = 0; i < nj; i++) {
		size_t n = s.off[i + 1] - s.off[i];
		if (!n)
			continue;
		double owed = qos_coupon_outstanding(g->ct, in->jobs[i].id);
		if (!(owed > 0))
			continue;
		double gmin = INFINITY;
		for (size_t k = s.off[i]; k < s.off[i + 1]; k++)
			if (gap[s.idx[k]] < gmin)
				gmin = gap[s.idx[k]];
		if (!(gmin > 1e-12 * s.cap_min[i]))
			continue;
		double want = gmin * (double)n;
		double got = qos_coupon_redeem(g->ct, in->jobs[i].id,
					       want < owed ? want : owed);
		if (!(got > 0))
			continue;
		/* Line 4: the table raised the job's redemption rate. */
		double delta = got / (double)n;
		base[i] += delta;
		for (size_t k = s.off[i]; k < s.off[i + 1]; k++)
			gap[s.idx[k]] -= delta;
		redeemed[i] = 1;
		g->st.redemptions++;
		g->st.worth_redeemed += got;
	}

	g->gate.redeem_decisions += g->st.redemptions > red0;

	/* Line 5 (sec. 3.2): Y = {c_i >= tau} and c_sys >= tau.  Where the
	 * paper is silent, our choices: a job that redeemed in this decision
	 * is not in Y (sec. 3.3 redeems "without throttling"; paying a job
	 * back and throttling it in one decision would be zero-sum); Y is
	 * also closed while the regret liability fills the budget (below);
	 * jobs with throttle_friendly = 0 (an admin's opt-out) never are.
	 * Y, while one period's regret budget can still
	 * cover every coupon already out (outstanding + owed node-hours):
	 * the regret outstanding at any time stays within regret_budget plus
	 * one decision's coupons (sec. 4, Fig. 12(b)). */
	double room = g->p.regret_budget - qos_coupon_liability(g->ct);
	int room_ok = room > 1e-9 * g->p.regret_budget;
	int csys_ok = qos_coupon_system_rate(g->ct) >= g->p.tau;
	uint64_t cand0 = g->gate.candidates;
	for (size_t i = 0; i < nj; i++) {
		int cand = s.off[i + 1] > s.off[i] && in->jobs[i].throttle_friendly &&
			   g->p.B_thres > 0 && s.b_bsip[i] > 0;
		hi[i] = s.cap_min[i];
		thr[i] = s.off[i + 1] > s.off[i] && in->jobs[i].throttle_friendly &&
			 !redeemed[i] && room_ok &&
			 g->p.B_thres > 0 &&
			 s.b_bsip[i] > 0 && qos_coupon_friendly(g->ct, in->jobs[i].id);
		/* gate statistics: the first reason a candidate is not in Y */
		if (cand) {
			g->gate.candidates++;
			if (thr[i])
				g->gate.in_y++;
			else if (redeemed[i])
				g->gate.excl_redeemed++;
			else if (!room_ok)
				g->gate.excl_budget++;
			else if (!csys_ok)
				g->gate.excl_csys++;
			else
				g->gate.excl_ci++;
		}
		/* (a) b_bsip (1 - B_thres) <= b_i for Y, (b) base <= b_i else */
		lo[i] = thr[i] ? s.b_bsip[i] * (1.0 - g->p.B_thres) : base[i];
		if (lo[i] > hi[i])
			lo[i] = hi[i];
		if (base[i] > hi[i])
			base[i] = hi[i];
	}

	/* Line 6 (sec. 3.4). */
	qos_gift_lp lp = {
		.n_jobs = nj, .n_osts = no, .capacity = in->capacity,
		.ost_off = s.off, .ost_idx = s.idx, .lo = lo, .hi = hi,
		.base = base, .throttle = thr, .E_min = s.E_bsip,
		.waste_constraint = 1,
	};
	/* the LP context only speeds the solve up: the optimum is the same */
	rc = g->lp ? 0 : qos_gift_lp_ctx_create(&g->lp);
	if (!rc)
		rc = qos_gift_lp_ctx_solve(g->lp, &lp, b, &E);
	if (rc == -ENOMEM)
		goto out;
	if (rc) {
		g->st.lp_failures++;
		memcpy(b, base, nj * sizeof(*b));
		E = 0.0;
		for (size_t i = 0; i < nj; i++)
			E += (double)(s.off[i + 1] - s.off[i]) * b[i];
	}

	if (g->gate.candidates > cand0) {
		g->gate.decisions++;
		g->gate.csys_blocked += !csys_ok;
		g->gate.budget_blocked += !room_ok;
	}
	/* Lines 7-8: coupons for the throttled members of Y.  Worth =
	 * |S_i| (base_i - b_i), the bandwidth withheld over the job's OSTs
	 * for one interval (Fig. 6: 0.5 -> 0.35 on one OST is worth 0.15);
	 * the paper gives the example, not a unit. */
	uint64_t issued0 = g->st.coupons_issued;
	for (size_t i = 0; i < nj; i++) {
		size_t n = s.off[i + 1] - s.off[i];
		double d = base[i] - b[i];
		if (!thr[i] || !(d > 1e-9 * s.cap_min[i]))
			continue;
		double worth = (double)n * d;
		double nodes = in->jobs[i].nodes > 0 ? in->jobs[i].nodes : 0.0;
		/* a job slowed by d / b_bsip of its fair rate for one period
		 * holds its nodes that fraction of the period longer */
		double ns = nodes * in->period / (s.b_bsip[i] * (double)n);
		if (!(ns >= 0) || isinf(ns))
			ns = 0.0;
		rc = qos_coupon_issue(g->ct, in->jobs[i].id, worth, in->now, ns);
		if (rc)
			goto out;
		g->st.coupons_issued++;
		g->st.worth_issued += worth;
	}

	g->gate.coupon_decisions += g->st.coupons_issued > issued0;
	qos_gift_spread(in, &s, b, res->alloc);
	if (res->coupons)
		for (size_t i = 0; i < nj; i++)
			res->coupons[i] = qos_coupon_outstanding(g->ct, in->jobs[i].id);
	res->effective = E;
	g->st.decisions++;
	rc = 0;
out:
	free(base);
	free(lo);
	free(hi);
	free(b);
	free(gap);
	free(thr);
	free(redeemed);
	qos_gift_sets_free(&s);
	return rc;
}

int qos_gift_decide_once(const qos_gift_params *p, const qos_instance *in,
			 qos_result *res)
{
	qos_gift *g;
	int rc = qos_gift_create(p, &g);
	if (rc)
		return rc;
	rc = qos_gift_decide(g, in, res);
	qos_gift_destroy(g);
	return rc;
}

/* ---- policy interface ---- */

static int gift_op_create(const qos_params *params, void **state)
{
	qos_gift_params p;
	int rc = qos_gift_params_parse(params, &p);
	if (rc)
		return rc;
	return qos_gift_create(&p, (qos_gift **)state);
}

static int gift_op_decide(void *state, const qos_instance *in, qos_result *res)
{
	return qos_gift_decide(state, in, res);
}

static void gift_op_destroy(void *state)
{
	qos_gift_destroy(state);
}

const qos_policy_ops qos_policy_gift = {
	.name = "gift",
	.summary = "GIFT: BSIP + coupons + LP throttle-and-reward (FAST'20)",
	.create = gift_op_create,
	.decide = gift_op_decide,
	.destroy = gift_op_destroy,
};

/* ---- synthetic instances ---- */

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double unif(uint64_t *x)
{
	return (double)(splitmix64(x) >> 11) * (1.0 / 9007199254740992.0);
}

void qos_gift_synth_free(qos_gift_synth *s)
{
	free(s->capacity);
	free(s->usage);
	free(s->active);
	free(s->jobs);
	memset(s, 0, sizeof(*s));
}

int qos_gift_synth_make(size_t n_jobs, size_t n_osts, size_t max_osts,
			uint64_t seed, qos_gift_synth *s)
{
	uint64_t x = seed;

	memset(s, 0, sizeof(*s));
	if (!n_osts || !max_osts || max_osts > n_osts)
		return -EINVAL;
	s->capacity = malloc(n_osts * sizeof(*s->capacity));
	s->usage = calloc(n_jobs * n_osts + 1, sizeof(*s->usage));
	s->active = calloc(n_jobs * n_osts + 1, 1);
	s->jobs = calloc(n_jobs + 1, sizeof(*s->jobs));
	if (!s->capacity || !s->usage || !s->active || !s->jobs) {
		qos_gift_synth_free(s);
		return -ENOMEM;
	}
	for (size_t j = 0; j < n_osts; j++)
		s->capacity[j] = 0.5 + unif(&x);
	for (size_t i = 0; i < n_jobs; i++) {
		qos_job *jb = &s->jobs[i];
		size_t k = 1 + (size_t)(unif(&x) * (double)max_osts);
		if (k > max_osts)
			k = max_osts;
		snprintf(jb->id, sizeof(jb->id), "job%zu", i);
		jb->nodes = (double)(1 + (splitmix64(&x) % 1024));
		jb->priority = 1.0;
		jb->throttle_friendly = i % 3 != 0;
		for (size_t placed = 0; placed < k;) {
			size_t j = (size_t)(splitmix64(&x) % n_osts);
			if (!s->active[i * n_osts + j]) {
				s->active[i * n_osts + j] = 1;
				placed++;
			}
		}
	}
	s->in = (qos_instance){
		.n_osts = n_osts, .n_jobs = n_jobs, .capacity = s->capacity,
		.jobs = s->jobs, .active = s->active, .usage = s->usage,
		.period = 10.0, .now = 0.0,
	};
	return 0;
}

/* ---- persistence (qos_gift_save / qos_gift_load) ----
 *
 * Format, little-endian, version 2:
 *   u32 magic "QGFT", u32 version,
 *   u32 N, f64 tau, B_thres, regret_period, regret_budget (as saved),
 *   u8 started, f64 next_assess,
 *   u64 decisions, coupons_issued, redemptions, lp_failures, assessments,
 *   f64 worth_issued, worth_redeemed,
 *   u32 clen, clen bytes of qos_coupon_table_save,
 *   u32 blen, blen bytes of qos_gift_lp_ctx_save (the LP basis, so the
 *   first decision after a restart starts warm; 0 before any decision),
 *   u32 CRC-32 (IEEE) of every byte before it.
 * Version 1 (read too) has no blen and no basis.
 * Self-contained (its own little codec) so the decision code above can
 * change without touching the format. */

#define GFT_MAGIC 0x54464751u /* "QGFT" */
#define GFT_VERSION 2u
/* everything but the coupon image: header fields, clen, CRC (version 1;
 * version 2 adds blen) */
#define GFT_FIXED (4 + 4 + 4 + 4 * 8 + 1 + 8 + 5 * 8 + 2 * 8 + 4 + 4)

static uint8_t *gft_u32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		*p++ = (uint8_t)(v >> (8 * i));
	return p;
}

static uint8_t *gft_u64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		*p++ = (uint8_t)(v >> (8 * i));
	return p;
}

static uint8_t *gft_f64(uint8_t *p, double v)
{
	uint64_t u;
	memcpy(&u, &v, 8);
	return gft_u64(p, u);
}

static uint32_t gft_r32(const uint8_t **p)
{
	uint32_t v = 0;
	for (int i = 0; i < 4; i++)
		v |= (uint32_t)(*p)[i] << (8 * i);
	*p += 4;
	return v;
}

static uint64_t gft_r64(const uint8_t **p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v |= (uint64_t)(*p)[i] << (8 * i);
	*p += 8;
	return v;
}

static double gft_rf(const uint8_t **p)
{
	uint64_t u = gft_r64(p);
	double v;
	memcpy(&v, &u, 8);
	return v;
}

/* CRC-32 (IEEE 802.3) of an image, from zlib (images stay far below the
 * 4 GiB a uInt length holds; a longer one just fails the check). */
static uint32_t image_crc32(const uint8_t *p, size_t n)
{
	return (uint32_t)crc32(0L, p, (uInt)n);
}

int qos_gift_save(const qos_gift *g, uint8_t **buf, size_t *len)
{
	uint8_t *cb = NULL, *lb = NULL, *b, *p;
	size_t clen = 0, blen = 0, n;
	int rc;

	*buf = NULL;
	*len = 0;
	rc = qos_coupon_table_save(g->ct, &cb, &clen);
	if (!rc && g->lp)
		rc = qos_gift_lp_ctx_save(g->lp, &lb, &blen);
	if (rc) {
		free(cb);
		return rc;
	}
	if (clen > UINT32_MAX - GFT_FIXED - 4 || blen > UINT32_MAX - GFT_FIXED - 4 - clen) {
		free(cb);
		free(lb);
		return -ENOMEM;
	}
	n = GFT_FIXED + 4 + clen + blen;
	b = malloc(n);
	if (!b) {
		free(cb);
		free(lb);
		return -ENOMEM;
	}
	p = gft_u32(b, GFT_MAGIC);
	p = gft_u32(p, GFT_VERSION);
	p = gft_u32(p, g->p.N);
	p = gft_f64(p, g->p.tau);
	p = gft_f64(p, g->p.B_thres);
	p = gft_f64(p, g->p.regret_period);
	p = gft_f64(p, g->p.regret_budget);
	*p++ = (uint8_t)(g->started != 0);
	p = gft_f64(p, g->next_assess);
	p = gft_u64(p, g->st.decisions);
	p = gft_u64(p, g->st.coupons_issued);
	p = gft_u64(p, g->st.redemptions);
	p = gft_u64(p, g->st.lp_failures);
	p = gft_u64(p, g->st.assessments);
	p = gft_f64(p, g->st.worth_issued);
	p = gft_f64(p, g->st.worth_redeemed);
	p = gft_u32(p, (uint32_t)clen);
	memcpy(p, cb, clen);
	p += clen;
	p = gft_u32(p, (uint32_t)blen);
	if (blen)
		memcpy(p, lb, blen);
	p += blen;
	gft_u32(p, image_crc32(b, n - 4));
	free(cb);
	free(lb);
	*buf = b;
	*len = n;
	return 0;
}

static int gft_params_ok(const qos_gift_params *p)
{
	return p->N >= 1 && p->N <= 10000000u && p->tau >= 0 && p->tau <= 1 &&
	       p->B_thres >= 0 && p->B_thres <= 1 && p->regret_period > 0 &&
	       isfinite(p->regret_period) && p->regret_budget >= 0 &&
	       isfinite(p->regret_budget);
}

int qos_gift_load(const qos_gift_params *params, const uint8_t *buf, size_t len,
		  qos_gift **out)
{
	const uint8_t *p = buf;
	qos_gift_params saved;
	qos_gift_stats st;
	double next_assess;
	uint8_t started;
	uint32_t clen, blen = 0, version;
	const uint8_t *lb = NULL;
	qos_gift *g;
	int rc;

	*out = NULL;
	if (!buf || len < GFT_FIXED)
		return -EBADMSG;
	{
		const uint8_t *c = buf + len - 4;
		if (gft_r32(&c) != image_crc32(buf, len - 4))
			return -EBADMSG;
	}
	if (gft_r32(&p) != GFT_MAGIC)
		return -EBADMSG;
	version = gft_r32(&p);
	if (version != 1 && version != GFT_VERSION)
		return -EBADMSG;
	saved.N = gft_r32(&p);
	saved.tau = gft_rf(&p);
	saved.B_thres = gft_rf(&p);
	saved.regret_period = gft_rf(&p);
	saved.regret_budget = gft_rf(&p);
	started = *p++;
	next_assess = gft_rf(&p);
	memset(&st, 0, sizeof(st));
	st.decisions = gft_r64(&p);
	st.coupons_issued = gft_r64(&p);
	st.redemptions = gft_r64(&p);
	st.lp_failures = gft_r64(&p);
	st.assessments = gft_r64(&p);
	st.worth_issued = gft_rf(&p);
	st.worth_redeemed = gft_rf(&p);
	clen = gft_r32(&p);
	if (version >= 2) {
		/* the basis's length follows the coupon image */
		if (len < GFT_FIXED + 4 || clen > len - GFT_FIXED - 4)
			return -EBADMSG;
		const uint8_t *q = p + clen;
		blen = gft_r32(&q);
		lb = q;
	}
	if (!gft_params_ok(&saved) || started > 1 || !isfinite(next_assess) ||
	    !(st.worth_issued >= 0) || !isfinite(st.worth_issued) ||
	    !(st.worth_redeemed >= 0) || !isfinite(st.worth_redeemed) ||
	    (size_t)clen + blen + (version >= 2 ? 4 : 0) != len - GFT_FIXED)
		return -EBADMSG;
	if (!params)
		params = &saved;
	if (!gft_params_ok(params))
		return -EINVAL;
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->p = *params;
	/* A changed N or tau applies to the restored windows at once. */
	rc = qos_coupon_table_load_with(p, clen, params->N, params->tau, &g->ct);
	if (rc) {
		free(g);
		return rc;
	}
	g->started = started;
	g->next_assess = next_assess;
	g->st = st;
	/* The basis only saves pivots: one that does not load (-EBADMSG,
	 * -EAGAIN) leaves the first decision cold, as before version 2. */
	if (blen) {
		rc = qos_gift_lp_ctx_create(&g->lp);
		if (!rc)
			rc = qos_gift_lp_ctx_load(g->lp, lb, blen);
		if (rc == -ENOMEM) {
			qos_gift_destroy(g);
			return rc;
		}
	}
	*out = g;
	return 0;
}

void qos_gift_lp_stats_get(const qos_gift *g, qos_gift_lp_stats *st)
{
	if (g->lp)
		qos_gift_lp_ctx_stats(g->lp, st);
	else
		memset(st, 0, sizeof(*st));
}
