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
#include <stdlib.h>

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
		if (lp->ost_off[i + 1] < lp->ost_off[i] || !(lp->lo[i] <= lp->hi[i]))
			return -EINVAL;
		for (size_t k = lp->ost_off[i]; k < lp->ost_off[i + 1]; k++)
			if (lp->ost_idx[k] >= lp->n_osts)
				return -EINVAL;
	}
	return 0;
}

/* Bring b back inside [lo, hi] and every OST inside C_j; sum is scratch
 * of n_osts doubles. */
static void lp_project(const qos_gift_lp *lp, double *b, double *sum)
{
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
	for (size_t j = 0; j < lp->n_osts; j++) {
		/* Only tolerance-sized excess reaches here, on few OSTs, so a
		 * scan of all jobs per overfull OST is cheap enough. */
		for (int pass = 0; pass < 8 && sum[j] > lp->capacity[j]; pass++) {
			double best_room = 0.0;
			size_t best = (size_t)-1;
			for (size_t i = 0; i < lp->n_jobs; i++)
				for (size_t k = lp->ost_off[i]; k < lp->ost_off[i + 1]; k++)
					if (lp->ost_idx[k] == j && b[i] - lp->lo[i] > best_room) {
						best_room = b[i] - lp->lo[i];
						best = i;
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
}

/* Base allocation of job i: lp->base, or lo when the caller gives none. */
static double base_of(const qos_gift_lp *lp, size_t i)
{
	return lp->base ? lp->base[i] : lp->lo[i];
}

int qos_gift_lp_solve(const qos_gift_lp *lp, double *b, double *objective)
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
	if (row2) {  /* (2): sum |S_i| b_i >= E_min, effective at least BSIP's */
		double r = lp->E_min - E_base;
		glp_set_row_bnds(P, row2, GLP_LO, (r < 0 ? r : 0.0) / scale, 0.0);
	}
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
