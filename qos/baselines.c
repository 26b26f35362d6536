/* baselines.c — POFS, BSIP, MBW, TSA, ESA, TMF, RND (gift.txt sec. 2, 4)
 * over the fair-share blocks of gift.c and the LP of gift_lp.c.
 *
 * The throttling baselines share one core (qos_baseline_throttle): a fixed
 * rule picks whom to throttle, those jobs are throttled by B_thres
 * (b_bsip (1 - B_thres), the same B_thres as GIFT), and the LP expands the
 * others into the gaps (BSIP's and the ones the throttling opened).  The
 * rule decides, not the LP: sec. 4 describes TSA, TMF and RND as picking
 * "applications for bandwidth throttling" by a characteristic or at random,
 * and finds them about as good as BSIP, so a throttled job is throttled
 * whether or not that pays.  There is no constraint (2) or (3) and no
 * coupon: the throttled are never paid back, which is the point of the
 * comparison with GIFT (which throttles only members of Y, only when the LP
 * gains more than the coupons are worth, and rewards them later). */
#include "qos/baselines.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "qos/gift.h"
#include "qos/gift_lp.h"

int qos_baseline_pofs(const qos_instance *in, qos_result *res)
{
	qos_gift_sets s;
	int rc = qos_gift_sets_build(in, &s);
	if (rc)
		return rc;
	qos_gift_pofs(in, &s, res->alloc);
	res->effective = qos_gift_effective(in, &s, res->alloc);
	qos_gift_sets_free(&s);
	return 0;
}

int qos_baseline_bsip(const qos_instance *in, qos_result *res)
{
	qos_gift_sets s;
	int rc = qos_gift_sets_build(in, &s);
	if (rc)
		return rc;
	qos_gift_spread(in, &s, s.b_bsip, res->alloc);
	res->effective = s.E_bsip;
	qos_gift_sets_free(&s);
	return 0;
}

int qos_baseline_mbw(const qos_instance *in, qos_result *res)
{
	qos_gift_sets s;
	double *lo = NULL, *b = NULL, E = 0.0;
	int rc = qos_gift_sets_build(in, &s);
	if (rc)
		return rc;
	rc = -ENOMEM;
	lo = calloc(in->n_jobs + 1, sizeof(*lo));
	b = calloc(in->n_jobs + 1, sizeof(*b));
	if (!lo || !b)
		goto out;
	/* No fairness floor: only capacity limits each job (Fig. 5 (3)). */
	qos_gift_lp lp = {
		.n_jobs = in->n_jobs, .n_osts = in->n_osts,
		.capacity = in->capacity, .ost_off = s.off, .ost_idx = s.idx,
		.lo = lo, .hi = s.cap_min,
	};
	rc = qos_gift_lp_solve(&lp, b, &E);
	if (rc)
		goto out;
	qos_gift_spread(in, &s, b, res->alloc);
	res->effective = E;
out:
	free(lo);
	free(b);
	qos_gift_sets_free(&s);
	return rc;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Median of v[0..n) (sorts v). */
static double median(double *v, size_t n)
{
	if (!n)
		return 0.0;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static int job_active(const qos_instance *in, size_t i)
{
	for (size_t j = 0; j < in->n_osts; j++)
		if (in->active[i * in->n_osts + j])
			return 1;
	return 0;
}

/* Y[i] = active and key[i] compared to the median of active keys:
 * below (dir < 0) or above (dir > 0). */
static int mark_by_median(const qos_instance *in, const double *key, int dir,
			  uint8_t *Y)
{
	double *v = malloc((in->n_jobs + 1) * sizeof(*v));
	size_t n = 0;
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < in->n_jobs; i++)
		if (job_active(in, i))
			v[n++] = key[i];
	double m = median(v, n);
	for (size_t i = 0; i < in->n_jobs; i++)
		Y[i] = job_active(in, i) && (dir < 0 ? key[i] < m : key[i] > m);
	free(v);
	return 0;
}

int qos_baseline_small(const qos_instance *in, uint8_t *Y)
{
	double *nodes = malloc((in->n_jobs + 1) * sizeof(*nodes));
	int rc;
	if (!nodes)
		return -ENOMEM;
	if (in->n_jobs && (!in->jobs || (in->n_osts && !in->active))) {
		free(nodes);
		return -EINVAL;
	}
	for (size_t i = 0; i < in->n_jobs; i++)
		nodes[i] = in->jobs[i].nodes;
	rc = mark_by_median(in, nodes, -1, Y);
	free(nodes);
	return rc;
}

struct esa_key {
	double nodes;
	size_t i;
};

static int cmp_esa(const void *a, const void *b)
{
	const struct esa_key *x = a, *y = b;
	if (x->nodes != y->nodes)
		return x->nodes < y->nodes ? -1 : 1;
	return (x->i > y->i) - (x->i < y->i);
}

int qos_baseline_esa(const qos_instance *in, qos_result *res)
{
	qos_gift_sets s;
	double *b = NULL, *gap = NULL;
	uint8_t *Y = NULL;
	struct esa_key *order = NULL;
	size_t n = 0;
	int rc = qos_gift_sets_build(in, &s);
	if (rc)
		return rc;
	rc = -ENOMEM;
	b = malloc((in->n_jobs + 1) * sizeof(*b));
	gap = malloc((in->n_osts + 1) * sizeof(*gap));
	Y = calloc(in->n_jobs + 1, 1);
	order = malloc((in->n_jobs + 1) * sizeof(*order));
	if (!b || !gap || !Y || !order)
		goto out;
	rc = qos_baseline_small(in, Y);
	if (rc)
		goto out;
	for (size_t j = 0; j < in->n_osts; j++)
		gap[j] = in->capacity[j];
	for (size_t i = 0; i < in->n_jobs; i++) {
		b[i] = s.b_bsip[i];
		for (size_t k = s.off[i]; k < s.off[i + 1]; k++)
			gap[s.idx[k]] -= b[i];
		if (Y[i])
			order[n++] = (struct esa_key){ in->jobs[i].nodes, i };
	}
	qsort(order, n, sizeof(*order), cmp_esa);
	for (size_t r = 0; r < n; r++) {
		size_t i = order[r].i;
		double g = INFINITY;
		for (size_t k = s.off[i]; k < s.off[i + 1]; k++)
			if (gap[s.idx[k]] < g)
				g = gap[s.idx[k]];
		if (!(g > 0))
			continue;
		b[i] += g;
		for (size_t k = s.off[i]; k < s.off[i + 1]; k++)
			gap[s.idx[k]] -= g;
	}
	qos_gift_spread(in, &s, b, res->alloc);
	res->effective = 0.0;
	for (size_t i = 0; i < in->n_jobs; i++)
		res->effective += (double)(s.off[i + 1] - s.off[i]) * b[i];
	rc = 0;
out:
	free(b);
	free(gap);
	free(Y);
	free(order);
	qos_gift_sets_free(&s);
	return rc;
}

int qos_baseline_throttle(const qos_instance *in, const uint8_t *Y,
			  double B_thres, qos_result *res)
{
	qos_gift_sets s;
	double *lo = NULL, *hi = NULL, *b = NULL, E = 0.0;
	uint8_t *thr = NULL;
	int rc;

	if (!(B_thres >= 0 && B_thres <= 1))
		return -EINVAL;
	rc = qos_gift_sets_build(in, &s);
	if (rc)
		return rc;
	rc = -ENOMEM;
	lo = malloc((in->n_jobs + 1) * sizeof(*lo));
	hi = malloc((in->n_jobs + 1) * sizeof(*hi));
	b = malloc((in->n_jobs + 1) * sizeof(*b));
	thr = calloc(in->n_jobs + 1, 1);
	if (!lo || !hi || !b || !thr)
		goto out;
	for (size_t i = 0; i < in->n_jobs; i++) {
		thr[i] = Y[i] && s.b_bsip[i] > 0 && B_thres > 0;
		/* the rule's picks are throttled (lo = hi), the rest may grow */
		lo[i] = thr[i] ? s.b_bsip[i] * (1.0 - B_thres) : s.b_bsip[i];
		hi[i] = thr[i] ? lo[i] : s.cap_min[i];
	}
	qos_gift_lp lp = {
		.n_jobs = in->n_jobs, .n_osts = in->n_osts,
		.capacity = in->capacity, .ost_off = s.off, .ost_idx = s.idx,
		.lo = lo, .hi = hi,
	};
	rc = qos_gift_lp_solve(&lp, b, &E);
	if (rc == -EDOM) {
		/* lo is always feasible (lo <= BSIP); fall back to it */
		memcpy(b, lo, in->n_jobs * sizeof(*b));
		E = 0.0;
		for (size_t i = 0; i < in->n_jobs; i++)
			E += (double)(s.off[i + 1] - s.off[i]) * b[i];
		rc = 0;
	}
	if (rc)
		goto out;
	qos_gift_spread(in, &s, b, res->alloc);
	res->effective = E;
out:
	free(lo);
	free(hi);
	free(b);
	free(thr);
	qos_gift_sets_free(&s);
	return rc;
}

/* ---- policy state ---- */

enum bl_kind { BL_POFS, BL_BSIP, BL_MBW, BL_TSA, BL_ESA, BL_TMF, BL_RND };

struct tmf_ent {
	char *id;
	double appearances;
	uint64_t last_seen;   /* decision number + 1 when last active */
};

struct bl_state {
	enum bl_kind kind;
	double B_thres;
	uint64_t rng;
	uint64_t decisions;
	struct tmf_ent *tab;  /* open addressing, cap a power of two */
	size_t tab_n, tab_cap;
};

static uint64_t bl_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ull;
	}
	return h;
}

static struct tmf_ent *tmf_slot(struct tmf_ent *tab, size_t cap, const char *id)
{
	for (size_t h = bl_hash(id) & (cap - 1);; h = (h + 1) & (cap - 1))
		if (!tab[h].id || strcmp(tab[h].id, id) == 0)
			return &tab[h];
}

static struct tmf_ent *tmf_get(struct bl_state *st, const char *id)
{
	if ((st->tab_n + 1) * 2 > st->tab_cap) {
		size_t ncap = st->tab_cap ? st->tab_cap * 2 : 64;
		struct tmf_ent *nt = calloc(ncap, sizeof(*nt));
		if (!nt)
			return NULL;
		for (size_t k = 0; k < st->tab_cap; k++)
			if (st->tab[k].id)
				*tmf_slot(nt, ncap, st->tab[k].id) = st->tab[k];
		free(st->tab);
		st->tab = nt;
		st->tab_cap = ncap;
	}
	struct tmf_ent *e = tmf_slot(st->tab, st->tab_cap, id);
	if (!e->id) {
		e->id = strdup(id);
		if (!e->id)
			return NULL;
		st->tab_n++;
	}
	return e;
}

static uint64_t bl_rand(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);  /* splitmix64 */
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int bl_create(enum bl_kind kind, const qos_params *params, void **state)
{
	qos_gift_params gp;
	struct bl_state *st;
	int rc = qos_gift_params_parse(params, &gp);
	if (rc)
		return rc;
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->kind = kind;
	st->B_thres = gp.B_thres;
	st->rng = params ? params->seed : 0;
	*state = st;
	return 0;
}

static void bl_destroy(void *state)
{
	struct bl_state *st = state;
	if (!st)
		return;
	for (size_t k = 0; k < st->tab_cap; k++)
		free(st->tab[k].id);
	free(st->tab);
	free(st);
}

static int bl_decide(void *state, const qos_instance *in, qos_result *res)
{
	struct bl_state *st = state;
	uint8_t *Y = NULL;
	double *cnt = NULL;
	int rc;

	if (!res || !res->alloc || (in->n_jobs && !in->jobs) ||
	    (in->n_jobs && in->n_osts && !in->active))
		return -EINVAL;
	switch (st->kind) {
	case BL_POFS:
		return qos_baseline_pofs(in, res);
	case BL_BSIP:
		return qos_baseline_bsip(in, res);
	case BL_MBW:
		return qos_baseline_mbw(in, res);
	case BL_ESA:
		return qos_baseline_esa(in, res);
	default:
		break;
	}
	rc = -ENOMEM;
	Y = calloc(in->n_jobs + 1, 1);
	cnt = calloc(in->n_jobs + 1, sizeof(*cnt));
	if (!Y || !cnt)
		goto out;
	st->decisions++;
	if (st->kind == BL_TSA) {
		rc = qos_baseline_small(in, Y);
	} else if (st->kind == BL_RND) {
		for (size_t i = 0; i < in->n_jobs; i++)
			Y[i] = (bl_rand(&st->rng) >> 63) && job_active(in, i);
		rc = 0;
	} else {
		/* TMF: an appearance starts when a job is active now and was
		 * not in the previous decision. */
		for (size_t i = 0; i < in->n_jobs; i++) {
			if (!job_active(in, i))
				continue;
			struct tmf_ent *e = tmf_get(st, in->jobs[i].id);
			if (!e)
				goto out;
			if (e->last_seen != st->decisions - 1 || e->last_seen == 0)
				e->appearances += 1;
			e->last_seen = st->decisions;
			cnt[i] = e->appearances;
		}
		rc = mark_by_median(in, cnt, +1, Y);
	}
	if (rc)
		goto out;
	rc = qos_baseline_throttle(in, Y, st->B_thres, res);
out:
	free(Y);
	free(cnt);
	return rc;
}

#define BL_OPS(sym, kind, nm, sum)                                         \
	static int sym##_create(const qos_params *p, void **s)             \
	{                                                                  \
		return bl_create(kind, p, s);                              \
	}                                                                  \
	const qos_policy_ops qos_policy_##sym = {                          \
		.name = nm, .summary = sum, .create = sym##_create,        \
		.decide = bl_decide, .destroy = bl_destroy,                \
	};

BL_OPS(pofs, BL_POFS, "pofs", "Per-OST Fair Share (GIFT baseline)")
BL_OPS(bsip, BL_BSIP, "bsip", "Basic Synchronous I/O Progress (GIFT baseline)")
BL_OPS(mbw, BL_MBW, "mbw", "Minimum Bandwidth Wastage, no fairness (GIFT baseline)")
BL_OPS(tsa, BL_TSA, "tsa", "Throttle Small Applications (GIFT baseline)")
BL_OPS(esa, BL_ESA, "esa", "Expand Small Applications (GIFT baseline)")
BL_OPS(tmf, BL_TMF, "tmf", "Throttle Most Frequent applications (GIFT baseline)")
BL_OPS(rnd, BL_RND, "rnd", "Throttle Randomly, seeded (GIFT baseline)")
