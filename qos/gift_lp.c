/* gift_lp.c — GIFT's bandwidth allocation LP (gift.txt sec. 3.4, Eq. (1),
 * constraints (a), (b), (2), (3)) built for and solved by GLPK.
 *
 * The problem is built from scratch each call (GLPK's build cost is linear
 * in the nonzeros, small next to the simplex) and scaled so the largest OST
 * capacity is 1.  After the solve the rates are clamped to their bounds and
 * any OST left over capacity by solver tolerance is trimmed, taking from
 * the jobs with the most room above their lower bound, so callers can rely
 * on capacity exactly. */
#include "qos/gift_lp.h"

#include <errno.h>
#include <glpk.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "qos/gift_dual.h"
#include "qos/gift_lp_i.h"

/* Tie-break cost per unit of throttling (see gift_lp.h). */
#define LP_EPS 1e-6

static size_t nost(const qos_gift_lp *lp, size_t i)
{
	return lp->ost_off[i + 1] - lp->ost_off[i];
}

static int lp_check(const qos_gift_lp *lp)
{
	if (!lp->capacity || !lp->ost_off || !lp->lo || !lp->hi)
		return -EINVAL;
	if ((lp->throttle || lp->waste_constraint) && !lp->base)
		return -EINVAL;
	for (size_t j = 0; j < lp->n_osts; j++)
		if (!(lp->capacity[j] >= 0))
			return -EINVAL;
	for (size_t i = 0; i < lp->n_jobs; i++) {
		if (lp->ost_off[i + 1] < lp->ost_off[i] || !(lp->lo[i] <= lp->hi[i]) ||
		    !isfinite(lp->lo[i]) || !isfinite(lp->hi[i]) ||
		    (lp->base && !isfinite(lp->base[i])))
			return -EINVAL;
		for (size_t k = lp->ost_off[i]; k < lp->ost_off[i + 1]; k++)
			if (lp->ost_idx[k] >= lp->n_osts)
				return -EINVAL;
	}
	return 0;
}

/* Trim OST j back to C_j, taking from the jobs of jobs[0 .. n) with the
 * most room above lo first (only tolerance-sized excess reaches here). */
static void lp_trim(const qos_gift_lp *lp, double *b, double *sum, size_t j,
		    const size_t *jobs, size_t n)
{
	for (int pass = 0; pass < 8 && sum[j] > lp->capacity[j]; pass++) {
		double best_room = 0.0;
		size_t best = (size_t)-1;
		for (size_t x = 0; x < n; x++) {
			size_t i = jobs[x];
			if (b[i] - lp->lo[i] > best_room) {
				best_room = b[i] - lp->lo[i];
				best = i;
			}
		}
		if (best == (size_t)-1)
			break;
		double excess = sum[j] - lp->capacity[j];
		double cut = excess < best_room ? excess : best_room;
		b[best] -= cut;
		for (size_t k = lp->ost_off[best]; k < lp->ost_off[best + 1]; k++)
			sum[lp->ost_idx[k]] -= cut;
	}
}

/* Bring b back inside [lo, hi] and every OST inside C_j; sum is scratch
 * of n_osts doubles.  The jobs of each overfull OST are listed once
 * (O(nnz)); if that list cannot be allocated, each overfull OST scans all
 * jobs instead. */
static void lp_project(const qos_gift_lp *lp, double *b, double *sum)
{
	size_t n_over = 0, *cnt = NULL, *list = NULL;

	for (size_t j = 0; j < lp->n_osts; j++)
		sum[j] = 0.0;
	for (size_t i = 0; i < lp->n_jobs; i++) {
		if (!nost(lp, i)) {
			b[i] = 0;
			continue;
		}
		if (b[i] < lp->lo[i])
			b[i] = lp->lo[i];
		if (b[i] > lp->hi[i])
			b[i] = lp->hi[i];
		for (size_t k = lp->ost_off[i]; k < lp->ost_off[i + 1]; k++)
			sum[lp->ost_idx[k]] += b[i];
	}
	for (size_t j = 0; j < lp->n_osts; j++)
		n_over += sum[j] > lp->capacity[j];
	if (!n_over)
		return;
	/* cnt[j] = first position of OST j's jobs in list (CSR) */
	cnt = calloc(lp->n_osts + 1, sizeof(*cnt));
	list = malloc((lp->ost_off[lp->n_jobs] + 1) * sizeof(*list));
	if (cnt && list) {
		for (size_t i = 0; i < lp->n_jobs; i++)
			for (size_t k = lp->ost_off[i]; k < lp->ost_off[i + 1]; k++)
				cnt[lp->ost_idx[k] + 1]++;
		for (size_t j = 0; j < lp->n_osts; j++)
			cnt[j + 1] += cnt[j];
		for (size_t i = 0; i < lp->n_jobs; i++)
			for (size_t k = lp->ost_off[i]; k < lp->ost_off[i + 1]; k++)
				list[cnt[lp->ost_idx[k]]++] = i;
		/* cnt[j] now ends OST j's list; it starts at cnt[j - 1] */
		for (size_t j = 0; j < lp->n_osts; j++) {
			size_t from = j ? cnt[j - 1] : 0;
			if (sum[j] > lp->capacity[j])
				lp_trim(lp, b, sum, j, &list[from], cnt[j] - from);
		}
	} else {
		free(list);
		list = malloc((lp->n_jobs + 1) * sizeof(*list));
		for (size_t j = 0; j < lp->n_osts && list; j++) {
			size_t n = 0;
			if (!(sum[j] > lp->capacity[j]))
				continue;
			for (size_t i = 0; i < lp->n_jobs; i++)
				for (size_t k = lp->ost_off[i]; k < lp->ost_off[i + 1]; k++)
					if (lp->ost_idx[k] == j)
						list[n++] = i;
			lp_trim(lp, b, sum, j, list, n);
		}
	}
	free(cnt);
	free(list);
}

/* Base allocation of job i: lp->base, or lo when the caller gives none. */
static double base_of(const qos_gift_lp *lp, size_t i)
{
	return lp->base ? lp->base[i] : lp->lo[i];
}

int qos_gift_lp_solve_glpk(const qos_gift_lp *lp, double *b, double *objective)
{
	int rc;
	glp_prob *P = NULL;
	int *ia = NULL, *ja = NULL, *col_e = NULL, *col_d = NULL, *row_ost = NULL;
	double *ar = NULL, *gap = NULL;
	double scale = 0.0, E_base = 0.0;
	size_t nnz_max, ne = 0, n_used = 0;
	int n_rows = 0, n_cols = 0, row2 = 0, row3 = 0;

	rc = lp_check(lp);
	if (rc)
		return rc;
	for (size_t j = 0; j < lp->n_osts; j++)
		if (lp->capacity[j] > scale)
			scale = lp->capacity[j];
	if (scale <= 0)
		scale = 1.0;

	rc = -ENOMEM;
	col_e = calloc(lp->n_jobs + 1, sizeof(*col_e));
	col_d = calloc(lp->n_jobs + 1, sizeof(*col_d));
	row_ost = calloc(lp->n_osts + 1, sizeof(*row_ost));
	gap = calloc(lp->n_osts + 1, sizeof(*gap));
	nnz_max = 2 * (lp->ost_off[lp->n_jobs] + 2 * lp->n_jobs) + lp->n_osts + 1;
	ia = malloc((nnz_max + 1) * sizeof(*ia));
	ja = malloc((nnz_max + 1) * sizeof(*ja));
	ar = malloc((nnz_max + 1) * sizeof(*ar));
	if (!col_e || !col_d || !row_ost || !gap || !ia || !ja || !ar)
		goto out;

	/* Variables are offsets from the base allocation:
	 * b_i = base_i - d_i + e_i.  All-zero is then the base itself, which
	 * is feasible, so the simplex starts from the standard basis without
	 * a phase 1 and pivots only as far as the allocation moves. */
	for (size_t j = 0; j < lp->n_osts; j++)
		gap[j] = lp->capacity[j];
	for (size_t i = 0; i < lp->n_jobs; i++) {
		if (!nost(lp, i))
			continue;
		double bi = base_of(lp, i);
		n_used++;
		E_base += (double)nost(lp, i) * bi;
		for (size_t k = lp->ost_off[i]; k < lp->ost_off[i + 1]; k++)
			gap[lp->ost_idx[k]] -= bi;
		col_e[i] = lp->hi[i] > bi;
		col_d[i] = bi > lp->lo[i];
	}
	/* Float dust from summing the base may leave a gap at -1e-17;
	 * a real overload stays negative and needs phase 1 (or is
	 * infeasible). */
	for (size_t j = 0; j < lp->n_osts; j++)
		if (gap[j] < 0 && gap[j] > -1e-12 * scale)
			gap[j] = 0.0;
	/* Drop columns that must be 0 in every feasible point, which keeps
	 * the simplex small on crowded systems: a job can grow only if each
	 * of its OSTs has a gap or hosts a job that can shrink; shrinking
	 * helps only if one of its OSTs hosts a job that can grow (or is
	 * overloaded by the base).  row_ost
	 * serves as scratch for the per-OST flags. */
	for (size_t i = 0; i < lp->n_jobs; i++)
		for (size_t k = lp->ost_off[i]; k < lp->ost_off[i + 1]; k++)
			if (col_d[i])
				row_ost[lp->ost_idx[k]] = 1;
	for (size_t i = 0; i < lp->n_jobs; i++)
		for (size_t k = lp->ost_off[i]; k < lp->ost_off[i + 1] && col_e[i]; k++) {
			size_t j = lp->ost_idx[k];
			if (!(gap[j] > 0) && !row_ost[j])
				col_e[i] = 0;
		}
	for (size_t j = 0; j < lp->n_osts; j++)
		row_ost[j] = 0;
	for (size_t i = 0; i < lp->n_jobs; i++)
		for (size_t k = lp->ost_off[i]; k < lp->ost_off[i + 1]; k++)
			if (col_e[i])
				row_ost[lp->ost_idx[k]] = 1;
	for (size_t i = 0; i < lp->n_jobs; i++) {
		int useful = 0;
		for (size_t k = lp->ost_off[i]; k < lp->ost_off[i + 1]; k++)
			useful |= row_ost[lp->ost_idx[k]] || gap[lp->ost_idx[k]] < 0;
		if (!useful)
			col_d[i] = 0;
	}
	for (size_t j = 0; j < lp->n_osts; j++)
		row_ost[j] = 0;
	for (size_t i = 0; i < lp->n_jobs; i++) {
		if (col_e[i])
			col_e[i] = ++n_cols;
		if (col_d[i])
			col_d[i] = ++n_cols;
	}
	if (n_used == 0 || n_cols == 0) {
		for (size_t j = 0; j < lp->n_osts; j++)
			if (gap[j] < 0) {
				rc = -EDOM;
				goto out;
			}
		if (lp->E_min > E_base * (1 + 1e-12)) {
			rc = -EDOM;
			goto out;
		}
		for (size_t i = 0; i < lp->n_jobs; i++)
			b[i] = nost(lp, i) ? base_of(lp, i) : 0.0;
		lp_project(lp, b, ar);
		if (objective)
			*objective = E_base;
		rc = 0;
		goto out;
	}

	glp_term_out(GLP_OFF);
	P = glp_create_prob();
	glp_set_obj_dir(P, GLP_MAX);
	glp_add_cols(P, n_cols);
	for (size_t i = 0; i < lp->n_jobs; i++) {
		double w = (double)nost(lp, i), bi = base_of(lp, i);
		if (col_e[i]) {  /* expansion: b_i up to hi_i */
			glp_set_col_bnds(P, col_e[i], GLP_DB, 0.0,
					 (lp->hi[i] - bi) / scale);
			glp_set_obj_coef(P, col_e[i], w);                 /* Eq. (1) */
		}
		if (col_d[i]) {  /* throttle: b_i down to lo_i, (a) */
			glp_set_col_bnds(P, col_d[i], GLP_DB, 0.0,
					 (bi - lp->lo[i]) / scale);
			glp_set_obj_coef(P, col_d[i], -w * (1.0 + LP_EPS));
		}
	}

	/* Rows: capacity of each OST some job uses. */
	for (size_t i = 0; i < lp->n_jobs; i++)
		for (size_t k = lp->ost_off[i]; k < lp->ost_off[i + 1]; k++)
			row_ost[lp->ost_idx[k]] = 1;
	for (size_t j = 0; j < lp->n_osts; j++)
		if (row_ost[j])
			row_ost[j] = ++n_rows;
	if (lp->E_min > 0)
		row2 = ++n_rows;
	if (lp->waste_constraint)
		row3 = ++n_rows;
	glp_add_rows(P, n_rows);
	for (size_t j = 0; j < lp->n_osts; j++)
		if (row_ost[j])  /* sum_{i in L_j} b_i <= C_j */
			glp_set_row_bnds(P, row_ost[j], GLP_UP, 0.0,
					 gap[j] / scale);
	if (row2)  /* (2): sum |S_i| b_i >= E_min, effective at least BSIP's */
		glp_set_row_bnds(P, row2, GLP_LO, (lp->E_min - E_base) / scale, 0.0);
	if (row3)  /* (3): (E - E_base) - worth of coupons >= 0 */
		glp_set_row_bnds(P, row3, GLP_LO, 0.0, 0.0);

	for (size_t i = 0; i < lp->n_jobs; i++) {
		double w = (double)nost(lp, i);
		int cost = lp->throttle && lp->throttle[i];
		for (int pass = 0; pass < 2; pass++) {
			int col = pass ? col_d[i] : col_e[i];
			double sgn = pass ? -1.0 : 1.0;
			if (!col)
				continue;
			for (size_t k = lp->ost_off[i]; k < lp->ost_off[i + 1]; k++) {
				ne++;
				ia[ne] = row_ost[lp->ost_idx[k]];
				ja[ne] = col;
				ar[ne] = sgn;
			}
			if (row2) {
				ne++;
				ia[ne] = row2; ja[ne] = col; ar[ne] = sgn * w;
			}
			/* (3): e adds |S_i| e to E - E_base; a throttle d takes
			 * |S_i| d from it and, for a job of Y, also issues a
			 * coupon worth |S_i| d: -2 |S_i| d in all */
			if (row3) {
				ne++;
				ia[ne] = row3; ja[ne] = col;
				ar[ne] = !pass ? w : cost ? -2.0 * w : -w;
			}
		}
	}
	glp_load_matrix(P, (int)ne, ia, ja, ar);

	glp_smcp parm;
	glp_init_smcp(&parm);
	parm.msg_lev = GLP_MSG_OFF;
	parm.presolve = GLP_OFF;
	/* GLPK's default tolerances (1e-7) leave it up to ~1e-8 relative
	 * below the optimum on crowded LPs; the reference must be exact to
	 * the 1e-9 the tests hold the dual simplex to */
	parm.tol_bnd = 1e-9;
	parm.tol_dj = 1e-9;
	glp_scale_prob(P, GLP_SF_AUTO);  /* fewer pivots on skewed |S_i| */
	glp_std_basis(P);
	int grc = glp_simplex(P, &parm);
	if (grc != 0 || glp_get_status(P) != GLP_OPT) {
		rc = -EDOM;
		goto out;
	}
	for (size_t i = 0; i < lp->n_jobs; i++) {
		if (!nost(lp, i)) {
			b[i] = 0.0;
			continue;
		}
		b[i] = base_of(lp, i);
		if (col_e[i])
			b[i] += glp_get_col_prim(P, col_e[i]) * scale;
		if (col_d[i])
			b[i] -= glp_get_col_prim(P, col_d[i]) * scale;
	}
	lp_project(lp, b, ar);
	if (objective) {
		double e = 0.0;
		for (size_t i = 0; i < lp->n_jobs; i++)
			e += (double)nost(lp, i) * b[i];
		*objective = e;
	}
	rc = 0;
out:
	if (P)
		glp_delete_prob(P);
	free(ia);
	free(ja);
	free(ar);
	free(gap);
	free(col_e);
	free(col_d);
	free(row_ost);
	return rc;
}

/* ---- the dual simplex path and its warm start ----
 * (rows, columns and the context: gift_lp_i.h) */

int qos_gift_lp_ctx_create(qos_gift_lp_ctx **out)
{
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	(*out)->crash_min = QOS_GIFT_LP_CRASH_MIN;
	return 0;
}

void qos_gift_lp__drop_solver(qos_gift_lp_ctx *ctx)
{
	qos_gd_destroy(ctx->gd);
	ctx->gd = NULL;
	free(ctx->ent);
	ctx->ent = NULL;
	ctx->n_ent = 0;
	free(ctx->mark);
	ctx->mark = NULL;
}

void qos_gift_lp_ctx_destroy(qos_gift_lp_ctx *ctx)
{
	if (!ctx)
		return;
	qos_gift_lp__drop_solver(ctx);
	free(ctx);
}

void qos_gift_lp_ctx_stats(const qos_gift_lp_ctx *ctx, qos_gift_lp_stats *st)
{
	*st = ctx->st;
}

void qos_gift_lp_ctx_set_crash(qos_gift_lp_ctx *ctx, size_t min_osts)
{
	ctx->crash_min = min_osts;
}

int qos_gift_lp_ctx_refactor(qos_gift_lp_ctx *ctx)
{
	return ctx->gd ? qos_gd_refactor(ctx->gd) : 0;
}

static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Order-independent hash of S_i; qos_gift_lp__set_hash_rows the same of
 * a set given as n row indices. */
static uint64_t set_hash(const qos_gift_lp *lp, size_t i)
{
	uint64_t h = mix64(nost(lp, i) + 0x9e3779b97f4a7c15ull);
	for (size_t k = lp->ost_off[i]; k < lp->ost_off[i + 1]; k++)
		h += mix64(lp->ost_idx[k] + 1);
	return h;
}

uint64_t qos_gift_lp__set_hash_rows(const uint32_t *rows, size_t n)
{
	uint64_t h = mix64(n + 0x9e3779b97f4a7c15ull);
	for (size_t k = 0; k < n; k++)
		h += mix64((uint64_t)rows[k] + 1);
	return h;
}

/* Does slot e (an e_i column) cover exactly S_i? */
static int set_equal(qos_gift_lp_ctx *ctx, const qos_gift_lp *lp, size_t i,
		     uint32_t e)
{
	const uint32_t *rows;
	const double *vals;
	size_t n = qos_gd_col_get(ctx->gd, e, &rows, &vals), cnt = 0;

	if (++ctx->stamp == 0) {
		memset(ctx->mark, 0, lp->n_osts * sizeof(*ctx->mark));
		ctx->stamp = 1;
	}
	for (size_t k = lp->ost_off[i]; k < lp->ost_off[i + 1]; k++)
		ctx->mark[lp->ost_idx[k]] = ctx->stamp;
	for (size_t k = 0; k < n; k++) {
		if (rows[k] >= lp->n_osts)
			continue;
		if (ctx->mark[rows[k]] != ctx->stamp)
			return 0;
		cnt++;
	}
	return cnt == nost(lp, i);
}

int qos_gift_lp__add_col_set(qos_gift_lp_ctx *ctx, size_t n_set, int sign,
			     int dcode, uint32_t *rows, double *vals, uint32_t *slot)
{
	double w = (double)n_set;
	size_t n = n_set;

	for (size_t k = 0; k < n_set; k++)
		vals[k] = sign;
	if (ctx->waste) {
		rows[n] = (uint32_t)ctx->n_osts;
		vals[n++] = sign > 0 ? -w : (double)dcode * w;
	}
	return qos_gd_col_add(ctx->gd, rows, vals, n,
			      sign > 0 ? w : -w * (1.0 + LP_EPS), 0.0, slot);
}

/* Add job i's e (sign +1) or d (sign -1, (3) factor dcode) column. */
static int add_col(qos_gift_lp_ctx *ctx, const qos_gift_lp *lp, size_t i,
		   int sign, int dcode, uint32_t *rows, double *vals,
		   uint32_t *slot)
{
	size_t n = 0;

	for (size_t k = lp->ost_off[i]; k < lp->ost_off[i + 1]; k++)
		rows[n++] = (uint32_t)lp->ost_idx[k];
	return qos_gift_lp__add_col_set(ctx, n, sign, dcode, rows, vals, slot);
}

/* A crash basis for a cold start, from a greedy allocation on top of
 * the base: jobs in order of increasing |S_i|, then of increasing box
 * ue[i] (of the orders tried on the benchmark's LPs, the one leaving
 * the fewest pivots: ~730 against ~1,070 from the slack basis), each
 * grow by what their box and the capacity left on their OSTs allow.  A
 * job stopped by an OST becomes basic in that OST's row (the OST is then
 * full); the others stay nonbasic.  A job taken later never touches an
 * OST filled earlier (it would have grown by 0), so the basis is
 * triangular with a unit diagonal, hence nonsingular.  Returns 0 or
 * -ENOMEM (the solver keeps whatever basis qos_gd_crash installed: the
 * slack basis at worst). */
typedef struct crash_key {
	size_t n;     /* |S_i| */
	double ue;
	size_t i;
} crash_key;

static int crash_cmp(const void *a, const void *b)
{
	const crash_key *x = a, *y = b;
	if (x->n != y->n)
		return x->n < y->n ? -1 : 1;
	if (x->ue != y->ue)
		return x->ue < y->ue ? -1 : 1;
	return (x->i > y->i) - (x->i < y->i);
}

static int ctx_crash(qos_gift_lp_ctx *ctx, const qos_gift_lp *lp,
		     const double *gap, const double *ue)
{
	size_t nj = lp->n_jobs, no = lp->n_osts, k = 0, n_ord = 0;
	double *rem = malloc((no + 1) * sizeof(*rem));
	crash_key *order = malloc((nj + 1) * sizeof(*order));
	uint32_t *slot = malloc((no + 1) * sizeof(*slot));
	uint32_t *row = malloc((no + 1) * sizeof(*row));
	int rc = -ENOMEM;

	if (!rem || !order || !slot || !row)
		goto out;
	for (size_t j = 0; j < no; j++)
		rem[j] = gap[j] > 0 ? gap[j] : 0;
	for (size_t i = 0; i < nj; i++)
		if (nost(lp, i) && ue[i] > 0)
			order[n_ord++] = (crash_key){ nost(lp, i), ue[i], i };
	qsort(order, n_ord, sizeof(*order), crash_cmp);
	for (size_t x = 0; x < n_ord; x++) {
		size_t i = order[x].i, tmin = SIZE_MAX;
		double v = ue[i];
		for (size_t q = lp->ost_off[i]; q < lp->ost_off[i + 1]; q++)
			if (rem[lp->ost_idx[q]] <= v) {
				v = rem[lp->ost_idx[q]];
				tmin = lp->ost_idx[q];
			}
		if (!(v > 0))
			continue;
		for (size_t q = lp->ost_off[i]; q < lp->ost_off[i + 1]; q++)
			rem[lp->ost_idx[q]] -= v;
		if (tmin == SIZE_MAX)
			continue;  /* at its upper bound: nonbasic */
		rem[tmin] = 0;
		slot[k] = ctx->ent[i].e;
		row[k++] = (uint32_t)tmin;
	}
	ctx->st.cold++;
	if (!qos_gd_crash(ctx->gd, slot, row, k))
		ctx->st.crashes++;
	rc = 0;
out:
	free(rem);
	free(order);
	free(slot);
	free(row);
	return rc;
}

/* Bring ctx's solver to lp: match jobs to the last solve's columns,
 * release the unmatched, add the new, set bounds and gaps.  gap[] holds
 * the base's gap per OST (unscaled). */
static int ctx_load(qos_gift_lp_ctx *ctx, const qos_gift_lp *lp,
		    const double *gap, double scale)
{
	size_t nj = lp->n_jobs, no = lp->n_osts, nb = 16;
	lp_ent *ent = NULL;
	uint32_t *bucket = NULL, *rows = NULL;
	double *vals = NULL, *room = NULL, *ue_tab = NULL;
	uint8_t *grow = NULL;
	int rc = -ENOMEM;

	if (!ctx->gd || ctx->n_osts != no || ctx->waste != lp->waste_constraint) {
		qos_gift_lp__drop_solver(ctx);
		rc = qos_gd_create(no + (lp->waste_constraint ? 1 : 0), &ctx->gd);
		if (rc)
			return rc;
		ctx->mark = calloc(no ? no : 1, sizeof(*ctx->mark));
		if (!ctx->mark) {
			qos_gift_lp__drop_solver(ctx);
			return -ENOMEM;
		}
		ctx->stamp = 0;
		ctx->n_osts = no;
		ctx->waste = lp->waste_constraint;
		rc = -ENOMEM;
	}
	while (nb < 2 * ctx->n_ent)
		nb *= 2;
	ent = calloc(nj + 1, sizeof(*ent));
	bucket = malloc(nb * sizeof(*bucket));
	rows = malloc((no + 2) * sizeof(*rows));
	vals = malloc((no + 2) * sizeof(*vals));
	room = malloc((no + 1) * sizeof(*room));
	grow = malloc(no + 1);
	ue_tab = malloc((nj + 1) * sizeof(*ue_tab));
	if (!ent || !bucket || !rows || !vals || !room || !grow || !ue_tab)
		goto out;

	/* Index the last solve's jobs by hash of their OST set. */
	for (size_t k = 0; k < nb; k++)
		bucket[k] = NO_SLOT;
	for (size_t k = 0; k < ctx->n_ent; k++) {
		lp_ent *o = &ctx->ent[k];
		if (o->e == NO_SLOT)
			continue;
		o->taken = 0;
		o->next = bucket[o->h & (nb - 1)];
		bucket[o->h & (nb - 1)] = (uint32_t)k;
	}
	for (size_t i = 0; i < nj; i++) {
		ent[i].e = ent[i].d = NO_SLOT;
		if (!nost(lp, i))
			continue;
		ent[i].h = set_hash(lp, i);
		for (uint32_t k = bucket[ent[i].h & (nb - 1)]; k != NO_SLOT;
		     k = ctx->ent[k].next) {
			lp_ent *o = &ctx->ent[k];
			if (o->taken || o->h != ent[i].h || !set_equal(ctx, lp, i, o->e))
				continue;
			o->taken = 1;
			ent[i] = *o;
			ctx->st.columns_reused++;
			break;
		}
	}
	/* Release what nobody took before adding, so slots are reused. */
	for (size_t k = 0; k < ctx->n_ent; k++) {
		lp_ent *o = &ctx->ent[k];
		if (o->e == NO_SLOT || o->taken)
			continue;
		qos_gd_col_free(ctx->gd, o->e);
		if (o->d != NO_SLOT)
			qos_gd_col_free(ctx->gd, o->d);
	}
	free(ctx->ent);
	ctx->ent = ent;
	ctx->n_ent = nj;
	ent = NULL;

	/* Tighter boxes, valid for every feasible point, so the dual simplex
	 * starts closer to feasibility: e_i can grow at most by the room of
	 * its tightest OST when every job there shrinks to lo (room[]), and
	 * a d_i helps only where some job can grow (grow[]). */
	for (size_t j = 0; j < no; j++) {
		room[j] = gap[j] > 0 ? gap[j] : 0;
		grow[j] = 0;
	}
	for (size_t i = 0; i < nj; i++) {
		double sh = base_of(lp, i) - lp->lo[i];
		if (sh > 0)
			for (size_t k = lp->ost_off[i]; k < lp->ost_off[i + 1]; k++)
				room[lp->ost_idx[k]] += sh;
	}
	for (size_t i = 0; i < nj; i++) {
		double ue = lp->hi[i] - base_of(lp, i);
		for (size_t k = lp->ost_off[i]; k < lp->ost_off[i + 1]; k++)
			if (room[lp->ost_idx[k]] < ue)
				ue = room[lp->ost_idx[k]];
		ue_tab[i] = ue > 0 ? ue : 0;
		if (ue > 0)
			for (size_t k = lp->ost_off[i]; k < lp->ost_off[i + 1]; k++)
				grow[lp->ost_idx[k]] = 1;
	}
	for (size_t i = 0; i < nj; i++) {
		lp_ent *x = &ctx->ent[i];
		if (!nost(lp, i))
			continue;
		double bi = base_of(lp, i), ue = ue_tab[i] / scale;
		double ud = (bi - lp->lo[i]) / scale;
		int useful = 0;
		for (size_t k = lp->ost_off[i]; k < lp->ost_off[i + 1]; k++)
			useful |= grow[lp->ost_idx[k]] || gap[lp->ost_idx[k]] < 0;
		if (!useful)
			ud = 0;
		int dcode = !ctx->waste ? 0 : lp->throttle && lp->throttle[i] ? 2 : 1;
		if (x->e == NO_SLOT) {
			rc = add_col(ctx, lp, i, 1, 0, rows, vals, &x->e);
			if (rc)
				goto out;
			ctx->st.columns_added++;
		}
		qos_gd_col_set_upper(ctx->gd, x->e, ue > 0 ? ue : 0);
		if (ud > 0 && x->d != NO_SLOT && x->dcode != dcode) {
			qos_gd_col_free(ctx->gd, x->d);
			x->d = NO_SLOT;
		}
		if (ud > 0 && x->d == NO_SLOT) {
			rc = add_col(ctx, lp, i, -1, dcode, rows, vals, &x->d);
			if (rc)
				goto out;
			/* d_i = -e_i on the OST rows: its pivot row entry
			 * comes from e_i's (speed only, so the rc is moot) */
			(void)qos_gd_col_twin(ctx->gd, x->d, x->e);
			x->dcode = (uint8_t)dcode;
		}
		/* a throttle column not needed now stays, fixed at 0 */
		if (x->d != NO_SLOT)
			qos_gd_col_set_upper(ctx->gd, x->d, ud > 0 && x->dcode == dcode ? ud : 0);
	}
	for (size_t j = 0; j < no; j++)
		qos_gd_row_set(ctx->gd, j, gap[j] / scale);
	if (lp->waste_constraint)
		qos_gd_row_set(ctx->gd, no, 0.0);
	rc = 0;
	if (!qos_gd_has_basis(ctx->gd) && no >= ctx->crash_min)
		rc = ctx_crash(ctx, lp, gap, ue_tab);
out:
	if (rc) {
		/* the entries may not match the solver any more */
		qos_gift_lp__drop_solver(ctx);
	}
	free(ent);
	free(bucket);
	free(rows);
	free(vals);
	free(room);
	free(grow);
	free(ue_tab);
	return rc;
}

int qos_gift_lp_ctx_solve(qos_gift_lp_ctx *ctx, const qos_gift_lp *lp,
			  double *b, double *objective)
{
	double scale = 0.0, E_base = 0.0, *gap = NULL;
	int rc, overloaded = 0;

	rc = lp_check(lp);
	if (rc)
		return rc;
	ctx->st.solves++;
	ctx->st.last_iterations = 0;
	ctx->st.last_basis_change = 0;
	for (size_t j = 0; j < lp->n_osts; j++)
		if (lp->capacity[j] > scale)
			scale = lp->capacity[j];
	if (scale <= 0)
		scale = 1.0;
	gap = malloc((lp->n_osts + 1) * sizeof(*gap));
	if (!gap)
		return -ENOMEM;
	for (size_t j = 0; j < lp->n_osts; j++)
		gap[j] = lp->capacity[j];
	for (size_t i = 0; i < lp->n_jobs; i++) {
		double bi = base_of(lp, i);
		if (!nost(lp, i))
			continue;
		E_base += (double)nost(lp, i) * bi;
		for (size_t k = lp->ost_off[i]; k < lp->ost_off[i + 1]; k++)
			gap[lp->ost_idx[k]] -= bi;
	}
	/* float dust from summing the base */
	for (size_t j = 0; j < lp->n_osts; j++) {
		if (gap[j] < 0 && gap[j] > -1e-12 * scale)
			gap[j] = 0.0;
		overloaded |= gap[j] < 0;
	}
	/* (2) binds only outside this case (see the header): GLPK then. */
	if ((lp->E_min > 0 && overloaded) ||
	    lp->E_min > E_base + 1e-12 * (E_base > 0 ? E_base : scale) ||
	    lp->n_osts + 1 > QOS_GD_MAX_ROWS) {
		ctx->st.glpk++;
		rc = qos_gift_lp_solve_glpk(lp, b, objective);
		goto out;
	}
	rc = ctx_load(ctx, lp, gap, scale);
	if (rc)
		goto out;
	qos_gd_stats gs0, gs1;
	qos_gd_stats_get(ctx->gd, &gs0);
	rc = qos_gd_solve(ctx->gd);
	qos_gd_stats_get(ctx->gd, &gs1);
	ctx->st.last_iterations = gs1.last_iterations;
	ctx->st.last_basis_change = gs1.last_basis_change;
	ctx->st.iterations += gs1.iterations - gs0.iterations;
	ctx->st.cold += gs1.cold_starts - gs0.cold_starts;
	if (rc == -ENOMEM)
		goto out;
	if (rc) {
		/* -EAGAIN (numerical trouble) or -EDOM: let GLPK decide */
		ctx->st.glpk++;
		rc = qos_gift_lp_solve_glpk(lp, b, objective);
		goto out;
	}
	for (size_t i = 0; i < lp->n_jobs; i++) {
		const lp_ent *x = &ctx->ent[i];
		if (!nost(lp, i)) {
			b[i] = 0.0;
			continue;
		}
		b[i] = base_of(lp, i) + qos_gd_x(ctx->gd, x->e) * scale;
		if (x->d != NO_SLOT)
			b[i] -= qos_gd_x(ctx->gd, x->d) * scale;
	}
	lp_project(lp, b, gap);
	if (objective) {
		double e = 0.0;
		for (size_t i = 0; i < lp->n_jobs; i++)
			e += (double)nost(lp, i) * b[i];
		*objective = e;
	}
out:
	free(gap);
	return rc;
}

int qos_gift_lp_solve(const qos_gift_lp *lp, double *b, double *objective)
{
	qos_gift_lp_ctx *ctx;
	int rc = qos_gift_lp_ctx_create(&ctx);

	if (rc)
		return rc;
	rc = qos_gift_lp_ctx_solve(ctx, lp, b, objective);
	qos_gift_lp_ctx_destroy(ctx);
	return rc;
}
