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

int qos_gift_lp_solve(const qos_gift_lp *lp, double *b, double *objective)
{
	int rc;
	glp_prob *P = NULL;
	int *ia = NULL, *ja = NULL, *col_b = NULL, *col_d = NULL, *row_ost = NULL;
	double *ar = NULL;
	double scale = 0.0, E_base = 0.0;
	size_t nnz_max, ne = 0, n_d = 0, n_used = 0;
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
	col_b = calloc(lp->n_jobs + 1, sizeof(*col_b));
	col_d = calloc(lp->n_jobs + 1, sizeof(*col_d));
	row_ost = calloc(lp->n_osts + 1, sizeof(*row_ost));
	nnz_max = 3 * lp->ost_off[lp->n_jobs] + 3 * lp->n_jobs + lp->n_osts + 1;
	ia = malloc((nnz_max + 1) * sizeof(*ia));
	ja = malloc((nnz_max + 1) * sizeof(*ja));
	ar = malloc((nnz_max + 1) * sizeof(*ar));
	if (!col_b || !col_d || !row_ost || !ia || !ja || !ar)
		goto out;

	glp_term_out(GLP_OFF);
	P = glp_create_prob();
	glp_set_obj_dir(P, GLP_MAX);

	/* Columns b_i (jobs with OSTs) and d_i (jobs that may be throttled). */
	for (size_t i = 0; i < lp->n_jobs; i++) {
		if (!nost(lp, i))
			continue;
		n_used++;
		col_b[i] = ++n_cols;
		if (lp->waste_constraint || lp->throttle)
			E_base += (double)nost(lp, i) * lp->base[i];
		if (lp->throttle && lp->throttle[i] && lp->base[i] - lp->lo[i] > 0) {
			col_d[i] = ++n_cols;
			n_d++;
		}
	}
	if (n_used == 0) {
		for (size_t i = 0; i < lp->n_jobs; i++)
			b[i] = 0.0;
		if (objective)
			*objective = 0.0;
		rc = 0;
		goto out;
	}
	glp_add_cols(P, n_cols);
	for (size_t i = 0; i < lp->n_jobs; i++) {
		if (!col_b[i])
			continue;
		double lo = lp->lo[i] / scale, hi = lp->hi[i] / scale;
		double w = (double)nost(lp, i);
		glp_set_col_bnds(P, col_b[i], lo < hi ? GLP_DB : GLP_FX, lo, hi);
		glp_set_obj_coef(P, col_b[i], w);             /* Eq. (1) */
		if (col_d[i]) {
			glp_set_col_bnds(P, col_d[i], GLP_DB, 0.0,
					 (lp->base[i] - lp->lo[i]) / scale);
			glp_set_obj_coef(P, col_d[i], -LP_EPS * w);
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
	int row_d0 = n_rows;
	n_rows += (int)n_d;
	glp_add_rows(P, n_rows);
	for (size_t j = 0; j < lp->n_osts; j++)
		if (row_ost[j])  /* sum_{i in L_j} b_i <= C_j */
			glp_set_row_bnds(P, row_ost[j], GLP_UP, 0.0,
					 lp->capacity[j] / scale);
	if (row2)  /* (2): effective bandwidth at least BSIP's */
		glp_set_row_bnds(P, row2, GLP_LO, lp->E_min / scale, 0.0);
	if (row3)  /* (3): waste reduction >= worth of coupons issued */
		glp_set_row_bnds(P, row3, GLP_LO, E_base / scale, 0.0);

	int rd = row_d0;
	for (size_t i = 0; i < lp->n_jobs; i++) {
		if (!col_b[i])
			continue;
		double w = (double)nost(lp, i);
		for (size_t k = lp->ost_off[i]; k < lp->ost_off[i + 1]; k++) {
			ne++;
			ia[ne] = row_ost[lp->ost_idx[k]];
			ja[ne] = col_b[i];
			ar[ne] = 1.0;
		}
		if (row2) {
			ne++;
			ia[ne] = row2; ja[ne] = col_b[i]; ar[ne] = w;
		}
		if (row3) {
			ne++;
			ia[ne] = row3; ja[ne] = col_b[i]; ar[ne] = w;
		}
		if (col_d[i]) {
			/* b_i + d_i >= base_i: d_i is at least the throttle */
			rd++;
			glp_set_row_bnds(P, rd, GLP_LO, lp->base[i] / scale, 0.0);
			ne++;
			ia[ne] = rd; ja[ne] = col_b[i]; ar[ne] = 1.0;
			ne++;
			ia[ne] = rd; ja[ne] = col_d[i]; ar[ne] = 1.0;
			if (row3) {
				ne++;
				ia[ne] = row3; ja[ne] = col_d[i]; ar[ne] = -w;
			}
		}
	}
	glp_load_matrix(P, (int)ne, ia, ja, ar);

	glp_smcp parm;
	glp_init_smcp(&parm);
	parm.msg_lev = GLP_MSG_OFF;
	parm.presolve = GLP_OFF;
	glp_adv_basis(P, 0);
	int grc = glp_simplex(P, &parm);
	if (grc != 0 || glp_get_status(P) != GLP_OPT) {
		rc = -EDOM;
		goto out;
	}
	for (size_t i = 0; i < lp->n_jobs; i++)
		b[i] = col_b[i] ? glp_get_col_prim(P, col_b[i]) * scale : 0.0;
	lp_project(lp, b, ar);  /* ar has >= n_osts doubles, no longer needed */
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
	free(col_b);
	free(col_d);
	free(row_ost);
	return rc;
}
