/* gift_dual.c — the bounded dual simplex of gift_dual.h: column slots and
 * their pool, duals and primal values from the inverse, pricing, the
 * ratio test, one iteration, and the solve loop with its checks.  The
 * explicit basis inverse lives in gift_dual_inv.c, shared state in
 * gift_dual_i.h.
 *
 * The problem is kept as a minimisation of sum_j c'_j x_j with c' = -c,
 * over structural variables (slots) and one slack per row, all with lower
 * bound 0 and a finite upper bound.
 *
 * One iteration (Koberstein's dual simplex, with the boxed-variable
 * simplifications):
 *   1. pricing: the basic variable most out of its bounds, infeasibility
 *      squared over its exact dual steepest-edge weight ||e_r^T B^-1||^2
 *      (the explicit inverse has the rows at hand; on pfs-qosbench it
 *      took 436 pivots cold where dual Devex took 647, 80 warm for 87);
 *   2. pivot row alpha_r = e_r^T B^-1 A_N over nonbasic columns;
 *   3. ratio test with bound flipping and Harris' tolerance: breakpoints
 *      t_j = |d_j| / |alpha_rj| are passed, flipping their variables to
 *      the other bound, while the leaving variable stays infeasible;
 *   4. FTRAN of the entering column, the flips' effect on x_B, the primal
 *      step, the dual update d_j += s t alpha_rj, and the rank-one update
 *      of B^-1 and of the weights.
 * The leaving variable leaves at the bound it violated, with reduced cost
 * s t of the sign that bound asks for, so dual feasibility is kept.  A
 * solve ends only when a freshly computed x_B is within its bounds, the
 * rows' residual and the basis' reduced costs are below 1e-9, and every
 * nonbasic reduced cost has the sign its bound asks for; otherwise the
 * inverse is rebuilt or the iterations go on (at most 20 (m + n) + 1000
 * pivots, then -EAGAIN). */
#include "qos/gift_dual_i.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void *gd_grow(void *p, size_t n, size_t size)
{
	return realloc(p, (n ? n : 1) * size);
}

/* ---- creation and columns ---- */

int qos_gd_create(size_t m, qos_gd **out)
{
	qos_gd *gd;

	*out = NULL;
	if (m < 1 || m > QOS_GD_MAX_ROWS)
		return -EINVAL;
	gd = calloc(1, sizeof(*gd));
	if (!gd)
		return -ENOMEM;
	gd->m = m;
	gd->ms = (m + 3) & ~(size_t)3;
	gd->perturb = GD_PERTURB;
	gd->g = calloc(m, sizeof(double));
	gd->su = calloc(m, sizeof(double));
	gd->sst = calloc(m, 1);
	gd->spos = calloc(m, sizeof(uint32_t));
	gd->xs = calloc(m, sizeof(double));
	gd->ds = calloc(m, sizeof(double));
	gd->salpha = calloc(m, sizeof(double));
	gd->head = calloc(m, sizeof(uint32_t));
	gd->Binv = qos_gd__zalloc(m * gd->ms);
	gd->M = calloc(m * m, sizeof(double));
	gd->w = calloc(m, sizeof(double));
	gd->xB = calloc(m, sizeof(double));
	gd->y = qos_gd__zalloc(gd->ms);
	gd->aq = calloc(m, sizeof(double));
	gd->vv = qos_gd__zalloc(gd->ms);
	gd->perm = calloc(m, sizeof(uint32_t));
	gd->kpos = calloc(m, sizeof(uint32_t));
	gd->trow = calloc(m, sizeof(uint32_t));
	gd->tidx = calloc(m, sizeof(uint32_t));
	gd->cand = calloc(2 * m, sizeof(gd_cand));
	gd->bmask = 1;
	while (gd->bmask < 2 * m)
		gd->bmask <<= 1;
	gd->bset = calloc(gd->bmask, sizeof(*gd->bset));
	gd->bmask--;
	if (!gd->bset || !gd->g || !gd->su || !gd->sst || !gd->spos ||
	    !gd->xs || !gd->ds || !gd->salpha || !gd->head || !gd->Binv || !gd->M || !gd->w ||
	    !gd->xB || !gd->y || !gd->aq || !gd->vv || !gd->perm ||
	    !gd->kpos || !gd->trow || !gd->tidx || !gd->cand) {
		qos_gd_destroy(gd);
		return -ENOMEM;
	}
	*out = gd;
	return 0;
}

void qos_gd_destroy(qos_gd *gd)
{
	if (!gd)
		return;
	free(gd->bset);
	free(gd->c);
	free(gd->c0);
	free(gd->u);
	free(gd->beg);
	free(gd->len);
	free(gd->room);
	free(gd->st);
	free(gd->dead);
	free(gd->listed);
	free(gd->pos);
	free(gd->x);
	free(gd->d);
	free(gd->alpha);
	free(gd->free_list);
	free(gd->mv);
	free(gd->tw_of);
	free(gd->tw_gen);
	free(gd->gen);
	free(gd->tw_row);
	free(gd->tw_f);
	free(gd->tw_d);
	free(gd->own);
	free(gd->lnk);
	free(gd->need);
	free(gd->cidx);
	free(gd->mbeg);
	free(gd->mrow);
	free(gd->mval);
	free(gd->prow);
	free(gd->pval);
	free(gd->g);
	free(gd->su);
	free(gd->sst);
	free(gd->spos);
	free(gd->xs);
	free(gd->ds);
	free(gd->salpha);
	free(gd->head);
	free(gd->Binv);
	free(gd->M);
	free(gd->w);
	free(gd->xB);
	free(gd->y);
	free(gd->aq);
	free(gd->vv);
	free(gd->perm);
	free(gd->kpos);
	free(gd->trow);
	free(gd->tidx);
	free(gd->cand);
	free(gd);
}

size_t qos_gd_rows(const qos_gd *gd)
{
	return gd->m;
}

/* Room for one more slot. */
static int gd_reserve_slot(qos_gd *gd)
{
	size_t cap;

	if (gd->n < gd->ncap)
		return 0;
	cap = gd->ncap ? 2 * gd->ncap : 64;
	if (cap >= GD_SLACK)
		return -ENOMEM;
#define GROW(f)                                                    \
	do {                                                       \
		void *p_ = gd_grow(gd->f, cap, sizeof(*gd->f));    \
		if (!p_)                                           \
			return -ENOMEM;                            \
		gd->f = p_;                                        \
	} while (0)
	GROW(c); GROW(c0); GROW(u); GROW(beg); GROW(len); GROW(room); GROW(st);
	GROW(dead); GROW(listed); GROW(pos); GROW(x); GROW(d); GROW(alpha);
	GROW(free_list); GROW(mv); GROW(cidx);
	GROW(tw_of); GROW(tw_gen); GROW(gen); GROW(tw_row); GROW(tw_f); GROW(tw_d);
	GROW(own); GROW(lnk);
	uint8_t *nd = gd_grow(gd->need, cap, 1);
	if (!nd)
		return -ENOMEM;
	memset(nd + gd->ncap, 0, cap - gd->ncap);
	gd->need = nd;
#undef GROW
	uint32_t *mb = gd_grow(gd->mbeg, cap + 1, sizeof(*mb));
	if (!mb)
		return -ENOMEM;
	gd->mbeg = mb;
	gd_cand *cd = gd_grow(gd->cand, 2 * (cap + gd->m), sizeof(*cd));
	if (!cd)
		return -ENOMEM;
	gd->cand = cd;
	gd->ncap = cap;
	return 0;
}

typedef struct gd_span {
	size_t beg;
	uint32_t slot;
} gd_span;

static int gd_span_cmp(const void *a, const void *b)
{
	const gd_span *x = a, *y = b;
	return (x->beg > y->beg) - (x->beg < y->beg);
}

/* Room for n more pool entries; compacts first when half the pool is
 * garbage from reused slots. */
static int gd_reserve_pool(qos_gd *gd, size_t n)
{
	size_t live = 0;

	if (gd->plen + n <= gd->pcap)
		return 0;
	for (size_t j = 0; j < gd->n; j++)
		live += gd->room[j];
	if (live + n <= gd->pcap / 2) {
		/* Slide every slot's entries down, in pool order. */
		gd_span *order = malloc((gd->n ? gd->n : 1) * sizeof(*order));
		size_t at = 0;
		if (!order)
			return -ENOMEM;
		for (size_t j = 0; j < gd->n; j++)
			order[j] = (gd_span){ gd->beg[j], (uint32_t)j };
		qsort(order, gd->n, sizeof(*order), gd_span_cmp);
		for (size_t i = 0; i < gd->n; i++) {
			uint32_t j = order[i].slot;
			memmove(&gd->prow[at], &gd->prow[gd->beg[j]],
				gd->room[j] * sizeof(*gd->prow));
			memmove(&gd->pval[at], &gd->pval[gd->beg[j]],
				gd->room[j] * sizeof(*gd->pval));
			gd->beg[j] = at;
			at += gd->room[j];
		}
		gd->plen = at;
		free(order);
		if (gd->plen + n <= gd->pcap)
			return 0;
	}
	size_t cap = gd->pcap ? 2 * gd->pcap : 1024;
	while (cap < gd->plen + n)
		cap *= 2;
	uint32_t *pr = realloc(gd->prow, cap * sizeof(*pr));
	if (!pr)
		return -ENOMEM;
	gd->prow = pr;
	double *pv = realloc(gd->pval, cap * sizeof(*pv));
	if (!pv)
		return -ENOMEM;
	gd->pval = pv;
	gd->pcap = cap;
	return 0;
}

int qos_gd_col_add(qos_gd *gd, const uint32_t *rows, const double *vals,
		   size_t n, double c, double u, uint32_t *slot)
{
	uint32_t j;
	int rc;

	if (n > gd->m || (n && (!rows || !vals)) || !isfinite(c) ||
	    !(u >= 0) || !isfinite(u))
		return -EINVAL;
	for (size_t k = 0; k < n; k++)
		if (rows[k] >= gd->m || !isfinite(vals[k]))
			return -EINVAL;
	if (gd->n_free) {
		j = gd->free_list[--gd->n_free];
		gd->listed[j] = 0;
	} else {
		rc = gd_reserve_slot(gd);
		if (rc)
			return rc;
		j = (uint32_t)gd->n++;
		gd->gen[j] = 0;
		gd->room[j] = 0;
		gd->beg[j] = gd->plen;
		gd->listed[j] = 0;
	}
	if (n > gd->room[j]) {
		rc = gd_reserve_pool(gd, n);
		if (rc) {
			/* leave the slot free and consistent */
			gd->dead[j] = 1;
			gd->u[j] = 0;
			gd->len[j] = 0;
			gd->st[j] = GD_LO;
			gd->x[j] = 0;
			gd->listed[j] = 1;
			gd->free_list[gd->n_free++] = j;
			return rc;
		}
		gd->beg[j] = gd->plen;
		gd->room[j] = (uint32_t)n;
		gd->plen += n;
	}
	gd->gen[j]++;
	gd->tw_of[j] = GD_NONE;
	if (n) {  /* an empty column may come with NULL arrays */
		memcpy(&gd->prow[gd->beg[j]], rows, n * sizeof(*rows));
		memcpy(&gd->pval[gd->beg[j]], vals, n * sizeof(*vals));
	}
	gd->len[j] = (uint32_t)n;
	gd->c[j] = -c;
	gd->u[j] = u;
	gd->dead[j] = 0;
	gd->st[j] = GD_LO;
	gd->x[j] = 0;
	gd->d[j] = -c;
	*slot = j;
	return 0;
}

size_t qos_gd_col_get(const qos_gd *gd, uint32_t slot, const uint32_t **rows,
		      const double **vals)
{
	*rows = &gd->prow[gd->beg[slot]];
	*vals = &gd->pval[gd->beg[slot]];
	return gd->len[slot];
}

int qos_gd_col_twin(qos_gd *gd, uint32_t slot, uint32_t of)
{
	double *v = gd->vv, f = 0;
	size_t t = 0, odd = 0;
	int have_f = 0;

	if (slot >= gd->n || of >= gd->n || slot == of || gd->dead[slot] ||
	    gd->dead[of])
		return -EINVAL;
	gd->tw_of[slot] = GD_NONE;
	const uint32_t *rs = &gd->prow[gd->beg[slot]], *ro = &gd->prow[gd->beg[of]];
	const double *vs = &gd->pval[gd->beg[slot]], *vo = &gd->pval[gd->beg[of]];
	for (size_t e = 0; e < gd->len[slot]; e++)
		v[rs[e]] = 0.0;
	/* f from the first row both have; then at most one row may differ */
	for (size_t e = 0; e < gd->len[of]; e++)
		v[ro[e]] = vo[e];
	for (size_t e = 0; e < gd->len[slot] && !have_f; e++)
		if (v[rs[e]] != 0.0) {
			f = vs[e] / v[rs[e]];
			have_f = 1;
		}
	for (size_t e = 0; e < gd->len[slot]; e++)
		v[rs[e]] = vs[e] - f * v[rs[e]];
	for (size_t e = 0; e < gd->len[of]; e++) {
		uint32_t r = ro[e];
		int in_slot = 0;
		for (size_t k = 0; k < gd->len[slot] && !in_slot; k++)
			in_slot = rs[k] == r;
		if (!in_slot)
			v[r] = -f * vo[e];
	}
	double d = 0;
	for (size_t e = 0; e < gd->len[slot] + gd->len[of]; e++) {
		uint32_t r = e < gd->len[slot] ? rs[e] : ro[e - gd->len[slot]];
		if (v[r] != 0.0) {
			if (odd++ && r != t)
				break;
			t = r;
			d = v[r];
		}
	}
	int ok = have_f && isfinite(f) && isfinite(d);
	for (size_t e = 0; e < gd->len[slot] + gd->len[of]; e++) {
		uint32_t r = e < gd->len[slot] ? rs[e] : ro[e - gd->len[slot]];
		ok &= v[r] == 0.0 || r == t;
		v[r] = 0.0;
	}
	if (!ok)
		return -EINVAL;
	gd->tw_of[slot] = of;
	gd->tw_gen[slot] = gd->gen[of];
	gd->tw_f[slot] = f;
	gd->tw_row[slot] = (uint32_t)t;
	gd->tw_d[slot] = d;
	return 0;
}

void qos_gd_col_set_upper(qos_gd *gd, uint32_t slot, double u)
{
	gd->u[slot] = u > 0 ? u : 0;
}

void qos_gd_col_free(qos_gd *gd, uint32_t slot)
{
	gd->dead[slot] = 1;
	gd->u[slot] = 0;
	if (gd->st[slot] != GD_BASIC) {
		gd->st[slot] = GD_LO;
		gd->x[slot] = 0;
		if (!gd->listed[slot]) {
			gd->listed[slot] = 1;
			gd->free_list[gd->n_free++] = slot;
		}
	}
}

void qos_gd_row_set(qos_gd *gd, size_t t, double g)
{
	gd->g[t] = g;
}

void qos_gd_reset(qos_gd *gd)
{
	gd->have_basis = 0;
}

int qos_gd_has_basis(const qos_gd *gd)
{
	return gd->have_basis;
}

int qos_gd_crash(qos_gd *gd, const uint32_t *slot, const uint32_t *row,
		 size_t k)
{
	qos_gd__cold(gd);
	for (size_t a = 0; a < k; a++) {
		uint32_t j = slot[a], t = row[a];
		if (j >= gd->n || t >= gd->m || gd->dead[j] || !(gd->u[j] > 0) ||
		    gd->st[j] == GD_BASIC || gd->sst[t] != GD_BASIC)
			continue;
		size_t p = gd->spos[t];
		gd->head[p] = j;
		gd->st[j] = GD_BASIC;
		gd->pos[j] = (uint32_t)p;
		gd->sst[t] = GD_LO;
		gd->xs[t] = 0;
	}
	if (qos_gd__refactor(gd)) {
		qos_gd__cold(gd);
		return -EAGAIN;
	}
	return 0;
}

int qos_gd_var_status(const qos_gd *gd, uint32_t v)
{
	if (v & GD_SLACK)
		return (v & ~GD_SLACK) < gd->m ? gd->sst[v & ~GD_SLACK] : -EINVAL;
	return v < gd->n ? gd->st[v] : -EINVAL;
}

uint32_t qos_gd_basic_var(const qos_gd *gd, size_t p)
{
	return gd->head[p];
}

size_t qos_gd_slots(const qos_gd *gd)
{
	return gd->n;
}

/* The slack basis without counting it as a cold start. */
static void gd_slack_basis(qos_gd *gd)
{
	uint64_t cold = gd->stats.cold_starts;

	qos_gd__cold(gd);
	gd->stats.cold_starts = cold;
}

int qos_gd_basis_set(qos_gd *gd, const uint32_t *var, const uint8_t *status,
		     size_t k)
{
	size_t n_pos = 0, n_in = 0;
	int rc = -EINVAL;

	gd_slack_basis(gd);
	for (size_t a = 0; a < k; a++) {
		uint32_t v = var[a];
		if (status[a] > GD_BASIC)
			goto bad;
		if (v & GD_SLACK ? (v & ~GD_SLACK) >= gd->m : v >= gd->n || gd->dead[v])
			goto bad;
	}
	/* the slacks leaving the basis free their positions (perm is only
	 * scratch until the refactorisation below) */
	for (size_t a = 0; a < k; a++) {
		uint32_t t = var[a] & ~GD_SLACK;
		if (!(var[a] & GD_SLACK) || status[a] == GD_BASIC ||
		    gd->sst[t] != GD_BASIC)
			continue;
		gd->perm[n_pos++] = gd->spos[t];
		gd->sst[t] = status[a];
		gd->xs[t] = 0;
	}
	for (size_t a = 0; a < k; a++) {
		uint32_t j = var[a];
		if (j & GD_SLACK || gd->st[j] == GD_BASIC)
			continue;
		if (status[a] != GD_BASIC) {
			gd->st[j] = status[a];
			continue;
		}
		if (n_in == n_pos)
			goto bad;
		size_t p = gd->perm[n_in++];
		gd->head[p] = j;
		gd->st[j] = GD_BASIC;
		gd->pos[j] = (uint32_t)p;
	}
	if (n_in != n_pos)
		goto bad;
	if (qos_gd__refactor(gd)) {
		rc = -EAGAIN;
		goto bad;
	}
	return 0;
bad:
	gd_slack_basis(gd);
	for (size_t j = 0; j < gd->n; j++)
		if (gd->st[j] == GD_UP)
			gd->st[j] = GD_LO;
	return rc;
}

int qos_gd_refactor(qos_gd *gd)
{
	if (!gd->have_basis)
		return 0;
	if (qos_gd__refactor(gd)) {
		gd->have_basis = 0;
		return -EAGAIN;
	}
	return 0;
}

double qos_gd_x(const qos_gd *gd, uint32_t slot)
{
	return gd->x[slot];
}

double qos_gd_objective(const qos_gd *gd)
{
	return gd->obj;
}

void qos_gd_stats_get(const qos_gd *gd, qos_gd_stats *st)
{
	*st = gd->stats;
}

/* ---- basis ---- */

/* Implied upper bounds of the slacks; -EDOM if a row cannot be met. */
static int gd_slack_bounds(qos_gd *gd)
{
	for (size_t t = 0; t < gd->m; t++)
		gd->su[t] = gd->g[t];
	for (size_t j = 0; j < gd->n; j++) {
		if (!(gd->u[j] > 0))
			continue;
		for (size_t e = 0; e < gd->len[j]; e++) {
			double v = gd->pval[gd->beg[j] + e];
			if (v < 0)
				gd->su[gd->prow[gd->beg[j] + e]] -= v * gd->u[j];
		}
	}
	for (size_t t = 0; t < gd->m; t++) {
		if (gd->su[t] < -TOL_P)
			return -EDOM;
		if (gd->su[t] < 0)
			gd->su[t] = 0;
	}
	return 0;
}

/* Put nonbasic variable v (reduced cost dj, upper bound ub) at the bound
 * dj asks for; 1 if it moved. */
static int gd_place(uint8_t *st, double *x, double dj, double ub, double tol)
{
	uint8_t want = *st;
	if (!(ub > 0))
		want = GD_LO;
	else if (dj < -tol)
		want = GD_UP;
	else if (dj > tol)
		want = GD_LO;
	int moved = want != *st;
	*st = want;
	*x = want == GD_UP ? ub : 0.0;
	return moved;
}

/* y^T = c_B^T B^-1 and the reduced costs of every nonbasic variable;
 * each nonbasic variable is put at the bound its reduced cost asks for
 * (all are boxed), *moved counts those that changed bound.  Returns the
 * largest |c_j - a_j^T y| over basic variables (0 in exact arithmetic). */
static double gd_duals(qos_gd *gd, size_t *moved, double tol)
{
	size_t m = gd->m, n_moved = 0;
	double res = 0;

	memset(gd->y, 0, gd->ms * sizeof(double));
	for (size_t p = 0; p < m; p++) {
		double cb = gd_cost(gd, gd->head[p]);
		if (cb != 0.0)
			qos_gd__k_axpy(gd->y, &gd->Binv[p * gd->ms], cb, gd->ms);
	}
	for (size_t j = 0; j < gd->n; j++) {
		double dj = gd->c[j];
		for (size_t e = 0; e < gd->len[j]; e++)
			dj -= gd->pval[gd->beg[j] + e] * gd->y[gd->prow[gd->beg[j] + e]];
		if (gd->st[j] == GD_BASIC) {
			if (!(fabs(dj) <= res))
				res = fabs(dj);
			gd->d[j] = 0;
			continue;
		}
		gd->d[j] = dj;
		n_moved += (size_t)gd_place(&gd->st[j], &gd->x[j], dj, gd->u[j], tol);
	}
	for (size_t t = 0; t < m; t++) {
		if (gd->sst[t] == GD_BASIC) {
			if (!(fabs(gd->y[t]) <= res))
				res = fabs(gd->y[t]);
			gd->ds[t] = 0;
			continue;
		}
		double dt = -gd->y[t];
		gd->ds[t] = dt;
		n_moved += (size_t)gd_place(&gd->sst[t], &gd->xs[t], dt, gd->su[t], tol);
	}
	if (moved)
		*moved = n_moved;
	return res;
}

/* x_B = B^-1 (g - N x_N). */
static void gd_primal(qos_gd *gd)
{
	size_t m = gd->m;
	double *r = gd->vv;

	memcpy(r, gd->g, m * sizeof(double));
	for (size_t j = 0; j < gd->n; j++) {
		if (gd->st[j] == GD_BASIC || gd->x[j] == 0.0)
			continue;
		for (size_t e = 0; e < gd->len[j]; e++)
			r[gd->prow[gd->beg[j] + e]] -= gd->pval[gd->beg[j] + e] * gd->x[j];
	}
	for (size_t t = 0; t < m; t++)
		if (gd->sst[t] != GD_BASIC)
			r[t] -= gd->xs[t];
	for (size_t p = 0; p < m; p++)
		gd->xB[p] = qos_gd__k_dot(&gd->Binv[p * gd->ms], r, gd->ms);
}

/* Largest |g - A x - s| with the basic values of x_B. */
static double gd_residual(qos_gd *gd)
{
	size_t m = gd->m;
	double *r = gd->vv, res = 0;

	for (size_t p = 0; p < m; p++)
		gd_set_value(gd, gd->head[p], gd->xB[p]);
	memcpy(r, gd->g, m * sizeof(double));
	for (size_t j = 0; j < gd->n; j++) {
		if (gd->x[j] == 0.0)
			continue;
		for (size_t e = 0; e < gd->len[j]; e++)
			r[gd->prow[gd->beg[j] + e]] -= gd->pval[gd->beg[j] + e] * gd->x[j];
	}
	for (size_t t = 0; t < m; t++) {
		r[t] -= gd->xs[t];
		if (!(fabs(r[t]) <= res))  /* NaN counts as a residual */
			res = fabs(r[t]);
	}
	return res;
}

/* Basis position to leave (largest infeasibility^2 / steepest-edge weight), or -1 if x_B is
 * feasible; *below says whether it violates its lower bound. */
static long gd_price(const qos_gd *gd, int *below, double tol)
{
	long best = -1;
	double best_score = 0;

	for (size_t p = 0; p < gd->m; p++) {
		double x = gd->xB[p], ub = gd_upper(gd, gd->head[p]), inf;
		if (x < -tol)
			inf = -x;
		else if (x > ub + tol)
			inf = x - ub;
		else
			continue;
		double score = inf * inf / gd->w[p];
		if (score > best_score) {
			best_score = score;
			best = (long)p;
			*below = x < 0;
		}
	}
	return best;
}

static double gd_alpha(const qos_gd *gd, uint32_t v)
{
	return v & GD_SLACK ? gd->salpha[v & ~GD_SLACK] : gd->alpha[v];
}

/* out += f * a_v (column of variable v, as an m-vector). */
static void gd_axpy_col(const qos_gd *gd, uint32_t v, double f, double *out)
{
	if (v & GD_SLACK) {
		out[v & ~GD_SLACK] += f;
		return;
	}
	for (size_t e = 0; e < gd->len[v]; e++)
		out[gd->prow[gd->beg[v] + e]] += f * gd->pval[gd->beg[v] + e];
}

/* Candidate for the ratio test: nonbasic variable v at status st with
 * pivot row entry alpha, reduced cost dj, upper bound u. */
static inline void gd_cand_put(gd_cand *cd, uint32_t v, uint8_t st, double s,
			       double alpha, double dj, double u)
{
	double sg = st == GD_UP ? 1.0 : -1.0;
	double sa = sg * s * alpha;               /* |alpha|: a candidate */
	double dd = -sg * dj > 0 ? -sg * dj : 0;  /* |d_j| on the right side */
	double inv = 1.0 / sa;
	*cd = (gd_cand){ v, sa, dd * inv, (dd + TOL_D) * inv, u };
}

/* Binary exponent field of x >= 0 (0 for 0 and subnormals). */
static inline int gd_exp2(double x)
{
	uint64_t b;
	memcpy(&b, &x, sizeof(b));
	return (int)((b >> 52) & 0x7ff);
}

/* Octave of breakpoint t relative to exponent e0 (the smallest Harris
 * breakpoint's): 0 for t below e0's octave, 1 within it, ... up to 63. */
static inline int gd_octave(double t, int e0)
{
	int b = gd_exp2(t) - e0 + 1;
	return b < 0 ? 0 : b > 63 ? 63 : b;
}

/* The pivot row alpha_r = rho A_N over the nonbasic variables that can
 * move, then the ratio test with bound flipping.  s = +1 if the leaving
 * variable goes to its lower bound, -1 to its upper; slope is its
 * infeasibility.  The variables to flip are returned in cd[0 .. *n_flip),
 * the entering one in *q with breakpoint *t.  Returns 0, or -EDOM if no
 * variable can enter (the LP is infeasible). */
static int gd_ratio(qos_gd *gd, const double *rho, double s, double slope,
		    size_t *n_flip, uint32_t *q, double *t)
{
	gd_cand *cd = gd->cand;
	uint32_t *ci = gd->cidx;
	size_t nc = 0, nci = 0, done = 0;
	double tmax = INFINITY;

	/* Pass 1: the pivot row, from the packed entries of own[] and then
	 * for their twins lnk[] (a multiple plus one entry); and (without
	 * branches: the candidates are an unpredictable subset) the mv
	 * positions of the candidates, in mv order, the columns whose move
	 * in the direction their bound allows goes the way the leaving
	 * variable needs: s sg alpha_j > 0. */
	for (size_t i = 0; i < gd->n_own; i++) {
		double a = 0;
		for (size_t e = gd->mbeg[i], end = gd->mbeg[i + 1]; e < end; e++)
			a += gd->mval[e] * rho[gd->mrow[e]];
		gd->alpha[gd->own[i]] = a;
	}
	for (size_t i = 0; i < gd->n_lnk; i++) {
		uint32_t j = gd->lnk[i];
		gd->alpha[j] = gd->tw_f[j] * gd->alpha[gd->tw_of[j]] +
			       gd->tw_d[j] * rho[gd->tw_row[j]];
	}
	for (size_t i = 0; i < gd->n_mv; i++) {
		uint32_t j = gd->mv[i];
		uint8_t st = gd->st[j];
		double sa = (st == GD_UP ? s : -s) * gd->alpha[j];
		ci[nci] = j;
		nci += (size_t)(st != GD_BASIC && sa > TOL_PIV);
	}
	/* Pass 2: their breakpoints. */
	for (size_t i = 0; i < nci; i++) {
		uint32_t j = ci[i];
		gd_cand_put(&cd[nc++], j, gd->st[j], s, gd->alpha[j], gd->d[j],
			    gd->u[j]);
	}
	for (size_t k = 0; k < gd->m; k++) {
		uint8_t st = gd->sst[k];
		gd->salpha[k] = rho[k];
		if (st == GD_BASIC || !(gd->su[k] > 0))
			continue;
		if ((st == GD_UP ? s : -s) * rho[k] > TOL_PIV)
			gd_cand_put(&cd[nc++], GD_SLACK | (uint32_t)k, st, s,
				    rho[k], gd->ds[k], gd->su[k]);
	}
	for (size_t i = 0; i < nc; i++)
		tmax = cd[i].th < tmax ? cd[i].th : tmax;
	/* The rounds below pass only the few smallest breakpoints (about ten
	 * flips per pivot here) but scan every candidate each time.  So
	 * first keep the candidates whose breakpoint is within an octave of
	 * where the slope runs out (sums of |alpha_j| u_j per octave of
	 * t_j / tmax) at the front, cd[0 .. end), and run the rounds there.
	 * A round whose bound reaches the smallest breakpoint left out
	 * (ex_t) takes everything in again, with that bound lowered to the
	 * smallest Harris breakpoint left out (ex_th) as a round over all
	 * would have it, so the outcome is the full test's. */
	size_t end = nc;
	double ex_t = INFINITY, ex_th = INFINITY;
	if (nc > 64) {
		double sum[64] = { 0 };
		int e0 = gd_exp2(tmax), B = 64;
		for (size_t i = 0; i < nc; i++)
			sum[gd_octave(cd[i].t, e0)] += cd[i].a * cd[i].u;
		double acc = 0;
		for (int b = 0; b < 64; b++) {
			acc += sum[b];
			if (acc > slope + TOL_P) {
				B = b + 1;
				break;
			}
		}
		if (B < 63) {
			/* stable: ties between equal |alpha| go as before */
			gd_cand *out = &cd[nc];
			size_t n_out = 0;
			end = 0;
			for (size_t i = 0; i < nc; i++) {
				if (gd_octave(cd[i].t, e0) <= B) {
					cd[end++] = cd[i];
				} else {
					out[n_out++] = cd[i];
					ex_t = cd[i].t < ex_t ? cd[i].t : ex_t;
					ex_th = cd[i].th < ex_th ? cd[i].th : ex_th;
				}
			}
			memmove(&cd[end], out, n_out * sizeof(*cd));
		}
	}
	/* Rounds over the candidates not yet passed, cd[done .. end): the
	 * Harris bound tmax picks a group of near-equal breakpoints; if
	 * passing all of them keeps the leaving variable infeasible they are
	 * flipped (moved to the front), otherwise the one with the largest
	 * |alpha| enters.  The next round's bound is found while moving. */
	for (;;) {
		if (end < nc && (done == end || tmax >= ex_t)) {
			end = nc;
			tmax = ex_th < tmax ? ex_th : tmax;
		}
		if (done == end)
			return -EDOM;
		double red = 0, best_a = 0, next_tmax = INFINITY;
		size_t best = done;
		for (size_t i = done; i < end; i++) {
			int in = cd[i].t <= tmax;
			red += in ? cd[i].a * cd[i].u : 0.0;
			int better = in && cd[i].a > best_a;
			best_a = better ? cd[i].a : best_a;
			best = better ? i : best;
			double th = in ? INFINITY : cd[i].th;
			next_tmax = th < next_tmax ? th : next_tmax;
		}
		if (slope - red > TOL_P) {
			for (size_t i = done; i < end; i++)
				if (cd[i].t <= tmax) {
					gd_cand tmp = cd[done];
					cd[done++] = cd[i];
					cd[i] = tmp;
				}
			slope -= red;
			tmax = next_tmax;
			continue;
		}
		*q = cd[best].v;
		*t = cd[best].t;
		*n_flip = done;
		return 0;
	}
}

/* One dual simplex iteration on leaving position r.  Returns 0, -EDOM
 * (infeasible) or -EAGAIN (numerical trouble: refactor). */
static int gd_iterate(qos_gd *gd, size_t r, int below)
{
	size_t m = gd->m, n_flip = 0;
	uint32_t lv = gd->head[r], q = 0;
	double ub = gd_upper(gd, lv), target = below ? 0.0 : ub;
	double s = below ? 1.0 : -1.0, t = 0;
	int rc;

	rc = gd_ratio(gd, &gd->Binv[r * gd->ms], s, fabs(gd->xB[r] - target),
		      &n_flip, &q, &t);
	if (rc)
		return rc;
	qos_gd__ftran(gd, q);
	double arq = gd_alpha(gd, q);
	if (fabs(gd->aq[r]) < 1e-11 ||
	    fabs(gd->aq[r] - arq) > 1e-8 * (1 + fabs(arq)))
		return -EAGAIN;

	/* Bound flips: x_B -= B^-1 sum_j a_j dx_j. */
	if (n_flip) {
		double *v = gd->vv;
		size_t nz = 0;
		memset(v, 0, gd->ms * sizeof(double));
		for (size_t i = 0; i < n_flip; i++) {
			uint32_t fv = gd->cand[i].v;
			uint8_t *st = gd_status(gd, fv);
			double u = gd_upper(gd, fv);
			double dx = *st == GD_LO ? u : -u;
			*st = *st == GD_LO ? GD_UP : GD_LO;
			gd_set_value(gd, fv, *st == GD_UP ? u : 0.0);
			gd_axpy_col(gd, fv, dx, v);
		}
		for (size_t k = 0; k < m && nz <= m / 8; k++)
			if (v[k] != 0.0)
				gd->perm[nz++] = (uint32_t)k;
		if (nz <= m / 8) {
			/* few rows touched: B^-1 v by columns */
			for (size_t z = 0; z < nz; z++) {
				size_t k = gd->perm[z];
				double vk = v[k];
				for (size_t p = 0; p < m; p++)
					gd->xB[p] -= gd->Binv[p * gd->ms + k] * vk;
			}
		} else {
			for (size_t p = 0; p < m; p++)
				gd->xB[p] -= qos_gd__k_dot(&gd->Binv[p * gd->ms], v, gd->ms);
		}
		gd->stats.flips += n_flip;
	}

	/* Primal step: the leaving variable lands on its bound. */
	double theta = (gd->xB[r] - target) / gd->aq[r];
	double xq = gd_value(gd, q) + theta;
	for (size_t p = 0; p < m; p++)
		gd->xB[p] -= theta * gd->aq[p];

	/* Dual step. */
	double st_ = s * t;
	for (size_t i = 0; i < gd->n_mv; i++) {
		uint32_t j = gd->mv[i];
		if (gd->st[j] != GD_BASIC)
			gd->d[j] += st_ * gd->alpha[j];
	}
	for (size_t k = 0; k < m; k++)
		if (gd->sst[k] != GD_BASIC && gd->su[k] > 0)
			gd->ds[k] += st_ * gd->salpha[k];

	/* Basis change. */
	qos_gd__update_inverse(gd, r);
	gd->xB[r] = xq;
	*gd_status(gd, lv) = below ? GD_LO : GD_UP;
	gd_set_value(gd, lv, target);
	if (lv & GD_SLACK) {
		gd->ds[lv & ~GD_SLACK] = st_;
	} else {
		gd->d[lv] = st_;
		if (gd->dead[lv] && !gd->listed[lv]) {
			gd->listed[lv] = 1;
			gd->free_list[gd->n_free++] = lv;
		}
	}
	*gd_status(gd, q) = GD_BASIC;
	if (q & GD_SLACK) {
		gd->spos[q & ~GD_SLACK] = (uint32_t)r;
		gd->ds[q & ~GD_SLACK] = 0;
	} else {
		gd->pos[q] = (uint32_t)r;
		gd->d[q] = 0;
	}
	gd->head[r] = q;
	gd->since_refactor++;
	return 0;
}

/* The slots that can move this solve (u > 0), and the pivot row's plan:
 * the entries of own[] packed contiguously in slot order, so the pivot
 * row streams through them, and the twins lnk[] derived from them.
 * (Sorting them by length gained nothing measurable, and it changed
 * which of several tied columns enters, hence which optimal vertex a
 * warm and a cold solve of a degenerate LP reach.) */
#define GD_LEN_BUCKETS 32
static int gd_pack_movable(qos_gd *gd)
{
	size_t nnz = 0;

	gd->n_mv = gd->n_own = gd->n_lnk = 0;
	for (size_t j = 0; j < gd->n; j++) {
		if (!(gd->u[j] > 0))
			continue;
		gd->mv[gd->n_mv++] = (uint32_t)j;
		uint32_t of = gd->tw_of[j];
		if (of != GD_NONE && !gd->dead[of] && gd->gen[of] == gd->tw_gen[j]) {
			gd->lnk[gd->n_lnk++] = (uint32_t)j;
			gd->need[of] = 1;
		} else {
			gd->need[j] = 1;
		}
	}
	/* own[] by length (stable): the pivot row's inner loop then runs
	 * the same number of times for long stretches, so its exit branch
	 * is predicted; the order of own[] decides nothing else */
	size_t start[GD_LEN_BUCKETS + 1] = { 0 };
	for (size_t j = 0; j < gd->n; j++)
		if (gd->need[j]) {
			size_t b = gd->len[j] < GD_LEN_BUCKETS ? gd->len[j] : GD_LEN_BUCKETS - 1;
			start[b + 1]++;
			nnz += gd->len[j];
		}
	for (size_t b = 0; b < GD_LEN_BUCKETS; b++)
		start[b + 1] += start[b];
	gd->n_own = start[GD_LEN_BUCKETS];
	for (size_t j = 0; j < gd->n; j++)
		if (gd->need[j]) {
			size_t b = gd->len[j] < GD_LEN_BUCKETS ? gd->len[j] : GD_LEN_BUCKETS - 1;
			gd->need[j] = 0;
			gd->own[start[b]++] = (uint32_t)j;
		}
	if (nnz > gd->mcap) {
		size_t cap = gd->mcap ? gd->mcap : 1024;
		while (cap < nnz)
			cap *= 2;
		uint16_t *r = realloc(gd->mrow, cap * sizeof(*r));
		if (!r)
			return -ENOMEM;
		gd->mrow = r;
		double *v = realloc(gd->mval, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		gd->mval = v;
		gd->mcap = cap;
	}
	if (!gd->mbeg) {
		gd->mbeg = malloc(sizeof(*gd->mbeg));
		if (!gd->mbeg)
			return -ENOMEM;
	}
	size_t at = 0;
	for (size_t i = 0; i < gd->n_own; i++) {
		uint32_t j = gd->own[i];
		const uint32_t *rows = &gd->prow[gd->beg[j]];
		const double *vals = &gd->pval[gd->beg[j]];
		gd->mbeg[i] = (uint32_t)at;
		for (size_t e = 0; e < gd->len[j]; e++, at++) {
			gd->mrow[at] = (uint16_t)rows[e];
			gd->mval[at] = vals[e];
		}
	}
	gd->mbeg[gd->n_own] = (uint32_t)at;
	return 0;
}

void qos_gd_set_perturb(qos_gd *gd, double rel)
{
	gd->perturb = rel > 0 && isfinite(rel) ? rel : 0;
}

static uint64_t gd_mix64(uint64_t z)
{
	z += 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Cost perturbation against dual degeneracy.  GIFT's costs are small
 * integers (|S_i|, its reduced costs sums of 1 - y_j over S_i), so many
 * reduced costs are exactly 0 and most ratio tests tie at a zero step:
 * up to 70 % of the pivots of a cold solve moved no dual objective.
 * Each movable slot's cost moves by (1 + |c_j|) perturb (1 + r_j), r_j
 * in [0, 1) from a hash of the slot (the same every solve), in the
 * direction that keeps its reduced cost on the side its bound asks for.
 * The solve then runs on the perturbed costs; once they are optimal the
 * true costs come back (gd_unperturb) and the usual rounds repair what
 * they change, so the answer is the unperturbed LP's optimum. */
static void gd_perturb(qos_gd *gd)
{
	gd->perturbed = gd->perturb > 0;
	if (!gd->perturbed)
		return;
	for (size_t i = 0; i < gd->n_mv; i++) {
		uint32_t j = gd->mv[i];
		double r = (double)(gd_mix64(j) >> 11) * 0x1p-53;
		double delta = (1 + fabs(gd->c[j])) * gd->perturb * (1 + r);
		gd->c0[j] = gd->c[j];
		gd->c[j] += gd->st[j] == GD_UP ? -delta : delta;
	}
}

static void gd_unperturb(qos_gd *gd)
{
	if (!gd->perturbed)
		return;
	for (size_t i = 0; i < gd->n_mv; i++)
		gd->c[gd->mv[i]] = gd->c0[gd->mv[i]];
	gd->perturbed = 0;
}

/* A basic variable's key: a slack by its row (bit 63), a slot by its
 * index and the column it holds (bit 62, gen modulo 2^30), never 0. */
static uint64_t gd_key(const qos_gd *gd, uint32_t v)
{
	if (v & GD_SLACK)
		return 1ull << 63 | (v & ~GD_SLACK);
	return 1ull << 62 | (uint64_t)(gd->gen[v] & 0x3fffffffu) << 32 | v;
}

static size_t gd_key_slot(const qos_gd *gd, uint64_t k)
{
	size_t h = (size_t)((k * 0x9e3779b97f4a7c15ull) >> 20) & gd->bmask;
	while (gd->bset[h] && gd->bset[h] != k)
		h = (h + 1) & gd->bmask;
	return h;
}

/* Remember the basis a solve starts from. */
static void gd_basis_snap(qos_gd *gd)
{
	memset(gd->bset, 0, (gd->bmask + 1) * sizeof(*gd->bset));
	for (size_t p = 0; p < gd->m; p++) {
		uint64_t k = gd_key(gd, gd->head[p]);
		gd->bset[gd_key_slot(gd, k)] = k;
	}
}

/* How many of the basic variables are new since gd_basis_snap. */
static size_t gd_basis_change(const qos_gd *gd)
{
	size_t n = 0;
	for (size_t p = 0; p < gd->m; p++)
		n += !gd->bset[gd_key_slot(gd, gd_key(gd, gd->head[p]))];
	return n;
}

int qos_gd_solve(qos_gd *gd)
{
	size_t limit = 20 * (gd->m + gd->n) + 1000, iters = 0;
	int rc, rounds = 0, refactored = 0;

	gd->stats.solves++;
	gd->stats.last_iterations = 0;
	gd->stats.last_basis_change = 0;
	rc = gd_slack_bounds(gd);
	if (rc)
		return rc;
	rc = gd_pack_movable(gd);
	if (rc)
		return rc;
	if (!gd->have_basis)
		qos_gd__cold(gd);
	gd_basis_snap(gd);
	gd_perturb(gd);
	/* A freed slot still in the basis has u = 0 and simply leaves once
	 * it is out of bounds. */
	for (;;) {
		if (++rounds > 8) {
			rc = -EAGAIN;
			goto fail;
		}
		if (gd->since_refactor >= REFACTOR_EVERY) {
			if (qos_gd__refactor(gd)) {
				qos_gd__cold(gd);
			}
		}
		/* strict tolerances first (see the checks below) */
		double ptol = rounds <= 4 ? TOL_P_FINAL : TOL_P;
		gd_duals(gd, NULL, TOL_D);
		gd_primal(gd);
		for (;;) {
			int below = 0;
			long r = gd_price(gd, &below, ptol);
			if (r < 0)
				break;
			if (++iters > limit) {
				rc = -EAGAIN;
				goto fail;
			}
			rc = gd_iterate(gd, (size_t)r, below);
			gd->stats.iterations++;
			gd->stats.last_iterations++;
			if (rc == -EAGAIN) {
				if (refactored++ > 4)
					goto fail;
				if (qos_gd__refactor(gd))
					qos_gd__cold(gd);
				gd_duals(gd, NULL, TOL_D);
				gd_primal(gd);
				continue;
			}
			if (rc)
				goto fail;
		}
		/* optimal for the perturbed costs: now the true ones, and the
		 * checks below go on from there (gd_duals puts each nonbasic
		 * variable the true costs disagree with on its other bound) */
		gd_unperturb(gd);
		/* Check the answer against the data, not the updated inverse:
		 * the rows, the reduced costs of the basis, and the signs of
		 * the others (gd_duals moves a wrong-signed one to its other
		 * bound, after which x_B is redone and iterations go on).  The
		 * sign test is strict here (TOL_D_FINAL): the Harris ratio test
		 * lets reduced costs stray up to TOL_D to the wrong side, and a
		 * variable left at the wrong bound by such a stray cost loses
		 * objective (up to 1e-9 times its range each).  Likewise the
		 * bounds of x_B are held to TOL_P_FINAL: a row over capacity by
		 * 1e-9 is trimmed afterwards at the cost of |S_i| times that
		 * (seen as 1.6e-9 relative on a 22-OST LP).  After four rounds
		 * the loose tolerances are taken, so values at rounding level
		 * cannot keep the loop going. */
		size_t moved = 0;
		double final_tol = rounds <= 4 ? TOL_D_FINAL : TOL_D;
		double res_p = gd_residual(gd);
		double res_d = gd_duals(gd, &moved, final_tol);
		if (!(res_p <= TOL_RES) || !(res_d <= TOL_RES)) {
			if (refactored++ > 2) {
				rc = -EAGAIN;
				goto fail;
			}
			if (qos_gd__refactor(gd))
				qos_gd__cold(gd);
			continue;
		}
		if (moved)
			continue;
		/* and the bounds, which the pricing loop alone vouches for */
		int below = 0;
		gd_primal(gd);
		if (gd_price(gd, &below, ptol) >= 0)
			continue;
		break;
	}
	for (size_t p = 0; p < gd->m; p++)
		gd_set_value(gd, gd->head[p], gd->xB[p]);
	gd->stats.last_basis_change = gd_basis_change(gd);
	gd->obj = 0;
	for (size_t j = 0; j < gd->n; j++)
		gd->obj -= gd->c[j] * gd->x[j];
	return 0;
fail:
	gd_unperturb(gd);
	if (rc == -EAGAIN)
		gd->have_basis = 0;
	return rc;
}
