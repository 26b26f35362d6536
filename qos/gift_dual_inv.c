/* gift_dual_inv.c — the explicit basis inverse of the bounded dual simplex
 * (gift_dual.h): B^-1 as a dense row-major matrix with rows padded to 4
 * doubles, its vector kernels, the slack basis, refactorisation from the
 * basis heads, FTRAN, and the rank-one update after a pivot together with
 * the dual steepest-edge pricing weights (the squared norms of its rows).
 *
 * Why explicit: GIFT's LP has one row per OST (about 200) and ends with
 * almost every OST full, so B^-1 is dense anyway; a dense inverse makes
 * BTRAN a row read, FTRAN a few column gathers, and the update one AXPY
 * per row touched by the entering column, O(m^2) with no factor
 * bookkeeping.  Its rows also give the exact steepest-edge weights for
 * the price of one more multiply-add per updated entry.  A sparse LU
 * with Forrest-Tomlin updates was measured instead (issue 9): B's LU
 * factors are nearly as sparse as B (~720 entries off the diagonal on
 * warm optimal bases, against B's ~840), but the factors grow by ~50
 * entries per update and the scalar, indexed FTRAN/BTRAN/update cost
 * what this vectorised update does: 25 against 18 us per pivot at 201
 * rows, equal at 801.  Refactorisation uses the block structure: with T the rows
 * whose slack is nonbasic and K the structural basic columns,
 *   B^-1 = [ M, 0 ; -A_SK M, I ],  M = A_TK^-1,
 * so only a k x k Gauss-Jordan runs (k = |K|); it is done on demand, when
 * the residual checks of a solve find the updated inverse inaccurate. */
#include "qos/gift_dual_i.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Dense kernels over rows of B^-1, padded to a multiple of 4 doubles and
 * 32-byte aligned, written with vector extensions; on x86-64 GCC also
 * builds an AVX2 clone picked at load time. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define GD_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define GD_CLONES
#endif
typedef double gd_v4 __attribute__((vector_size(32), aligned(32)));

/* x += f v */
GD_CLONES void qos_gd__k_axpy(double *restrict x, const double *restrict v,
				double f, size_t ms)
{
	gd_v4 fv = {f, f, f, f};
	for (size_t k = 0; k < ms; k += 4)
		*(gd_v4 *)&x[k] += fv * *(const gd_v4 *)&v[k];
}

/* The reductions below keep four partial sums, so their additions do not
 * wait on each other (one chain of dependent adds cost as much as the
 * memory traffic of the whole row). */
static inline double gd_hsum4(gd_v4 a, gd_v4 b, gd_v4 c, gd_v4 d)
{
	gd_v4 s = (a + b) + (c + d);
	return (s[0] + s[1]) + (s[2] + s[3]);
}

/* x += f v, returning x . x (the new row's squared norm) */
GD_CLONES double qos_gd__k_axpy_norm(double *restrict x, const double *restrict v,
				     double f, size_t ms)
{
	gd_v4 fv = {f, f, f, f}, a0 = {0, 0, 0, 0}, a1 = a0, a2 = a0, a3 = a0;
	size_t k = 0;
	for (; k + 16 <= ms; k += 16) {
		gd_v4 y0 = *(gd_v4 *)&x[k] + fv * *(const gd_v4 *)&v[k];
		gd_v4 y1 = *(gd_v4 *)&x[k + 4] + fv * *(const gd_v4 *)&v[k + 4];
		gd_v4 y2 = *(gd_v4 *)&x[k + 8] + fv * *(const gd_v4 *)&v[k + 8];
		gd_v4 y3 = *(gd_v4 *)&x[k + 12] + fv * *(const gd_v4 *)&v[k + 12];
		*(gd_v4 *)&x[k] = y0;
		*(gd_v4 *)&x[k + 4] = y1;
		*(gd_v4 *)&x[k + 8] = y2;
		*(gd_v4 *)&x[k + 12] = y3;
		a0 += y0 * y0;
		a1 += y1 * y1;
		a2 += y2 * y2;
		a3 += y3 * y3;
	}
	for (; k < ms; k += 4) {
		gd_v4 y = *(gd_v4 *)&x[k] + fv * *(const gd_v4 *)&v[k];
		*(gd_v4 *)&x[k] = y;
		a0 += y * y;
	}
	return gd_hsum4(a0, a1, a2, a3);
}

GD_CLONES double qos_gd__k_dot(const double *restrict a, const double *restrict b,
				 size_t ms)
{
	gd_v4 a0 = {0, 0, 0, 0}, a1 = a0, a2 = a0, a3 = a0;
	size_t k = 0;
	for (; k + 16 <= ms; k += 16) {
		a0 += *(const gd_v4 *)&a[k] * *(const gd_v4 *)&b[k];
		a1 += *(const gd_v4 *)&a[k + 4] * *(const gd_v4 *)&b[k + 4];
		a2 += *(const gd_v4 *)&a[k + 8] * *(const gd_v4 *)&b[k + 8];
		a3 += *(const gd_v4 *)&a[k + 12] * *(const gd_v4 *)&b[k + 12];
	}
	for (; k < ms; k += 4)
		a0 += *(const gd_v4 *)&a[k] * *(const gd_v4 *)&b[k];
	return gd_hsum4(a0, a1, a2, a3);
}

/* n zeroed doubles, 32-byte aligned for the kernels. */
double *qos_gd__zalloc(size_t n)
{
	size_t bytes = ((n ? n : 1) * sizeof(double) + 31) & ~(size_t)31;
	double *p = aligned_alloc(32, bytes);
	if (p)
		memset(p, 0, bytes);
	return p;
}

/* The slack basis: B = I. */
void qos_gd__cold(qos_gd *gd)
{
	size_t m = gd->m;

	memset(gd->Binv, 0, m * gd->ms * sizeof(double));
	for (size_t p = 0; p < m; p++) {
		gd->Binv[p * gd->ms + p] = 1.0;
		gd->w[p] = 1.0;
		gd->head[p] = GD_SLACK | (uint32_t)p;
		gd->sst[p] = GD_BASIC;
		gd->spos[p] = (uint32_t)p;
	}
	for (size_t j = 0; j < gd->n; j++)
		if (gd->st[j] == GD_BASIC) {
			gd->st[j] = GD_LO;
			gd->x[j] = 0;
			if (gd->dead[j] && !gd->listed[j]) {
				gd->listed[j] = 1;
				gd->free_list[gd->n_free++] = (uint32_t)j;
			}
		}
	gd->have_basis = 1;
	gd->since_refactor = 0;
	gd->stats.cold_starts++;
}

/* Rebuild B^-1 from the basis heads: with T the rows whose slack is
 * nonbasic and K the structural basic columns (|T| = |K| = k),
 *   B^-1 = [ M, 0 ; -A_SK M, I ]  with M = A_TK^-1,
 * so only a k x k Gauss-Jordan is needed.  Returns 0, or -EAGAIN if the
 * basis is numerically singular. */
int qos_gd__refactor(qos_gd *gd)
{
	size_t m = gd->m, ms = gd->ms, k = 0, nt = 0;
	double *M = gd->M, *B = gd->Binv;

	gd->stats.refactors++;
	gd->since_refactor = 0;
	for (size_t p = 0; p < m; p++)
		if (!(gd->head[p] & GD_SLACK))
			gd->kpos[k++] = (uint32_t)p;
	for (size_t t = 0; t < m; t++) {
		gd->tidx[t] = UINT32_MAX;
		if (gd->sst[t] != GD_BASIC) {
			gd->tidx[t] = (uint32_t)nt;
			gd->trow[nt++] = (uint32_t)t;
		}
	}
	if (nt != k)
		return -EAGAIN;
	/* A_TK (rows in T order b, columns in K order a), inverted in place
	 * by Gauss-Jordan with partial pivoting; the row interchanges become
	 * column interchanges of the inverse, undone in reverse order. */
	memset(M, 0, k * k * sizeof(double));
	for (size_t a = 0; a < k; a++) {
		uint32_t j = gd->head[gd->kpos[a]];
		for (size_t e = 0; e < gd->len[j]; e++) {
			uint32_t t = gd->prow[gd->beg[j] + e];
			if (gd->tidx[t] != UINT32_MAX)
				M[gd->tidx[t] * k + a] = gd->pval[gd->beg[j] + e];
		}
	}
	uint32_t *perm = gd->perm;
	for (size_t col = 0; col < k; col++) {
		size_t piv = col;
		double best = fabs(M[col * k + col]);
		for (size_t r = col + 1; r < k; r++)
			if (fabs(M[r * k + col]) > best) {
				best = fabs(M[r * k + col]);
				piv = r;
			}
		if (best < 1e-11)
			return -EAGAIN;
		perm[col] = (uint32_t)piv;
		if (piv != col)
			for (size_t q = 0; q < k; q++) {
				double tmp = M[col * k + q];
				M[col * k + q] = M[piv * k + q];
				M[piv * k + q] = tmp;
			}
		double inv = 1.0 / M[col * k + col];
		M[col * k + col] = 1.0;
		for (size_t q = 0; q < k; q++)
			M[col * k + q] *= inv;
		for (size_t r = 0; r < k; r++) {
			double f = M[r * k + col];
			if (r == col || f == 0.0)
				continue;
			M[r * k + col] = 0.0;
			for (size_t q = 0; q < k; q++)
				M[r * k + q] -= f * M[col * k + q];
		}
	}
	for (size_t col = k; col-- > 0;)
		if (perm[col] != col)
			for (size_t r = 0; r < k; r++) {
				double tmp = M[r * k + col];
				M[r * k + col] = M[r * k + perm[col]];
				M[r * k + perm[col]] = tmp;
			}
	/* M is A_TK^-1: rows in K order a, columns in T order b. */
	memset(B, 0, m * ms * sizeof(double));
	for (size_t a = 0; a < k; a++) {
		double *row = &B[gd->kpos[a] * ms];
		for (size_t b = 0; b < k; b++)
			row[gd->trow[b]] = M[a * k + b];
	}
	for (size_t t = 0; t < m; t++)
		if (gd->sst[t] == GD_BASIC)
			B[gd->spos[t] * ms + t] = 1.0;
	for (size_t a = 0; a < k; a++) {
		uint32_t j = gd->head[gd->kpos[a]];
		for (size_t e = 0; e < gd->len[j]; e++) {
			uint32_t s = gd->prow[gd->beg[j] + e];
			double v = gd->pval[gd->beg[j] + e];
			if (gd->sst[s] != GD_BASIC)
				continue;
			double *row = &B[gd->spos[s] * ms];
			for (size_t b = 0; b < k; b++)
				row[gd->trow[b]] -= v * M[a * k + b];
		}
	}
	for (size_t p = 0; p < m; p++)
		gd->w[p] = qos_gd__k_dot(&B[p * ms], &B[p * ms], ms);
	return 0;
}

/* aq = B^-1 a_v. */
void qos_gd__ftran(qos_gd *gd, uint32_t v)
{
	size_t m = gd->m, ms = gd->ms;
	const double *B = gd->Binv;

	if (v & GD_SLACK) {
		size_t t = v & ~GD_SLACK;
		for (size_t p = 0; p < m; p++)
			gd->aq[p] = B[p * ms + t];
		return;
	}
	const uint32_t *rows = &gd->prow[gd->beg[v]];
	const double *vals = &gd->pval[gd->beg[v]];
	size_t n = gd->len[v];
	for (size_t p = 0; p < m; p++) {
		const double *row = &B[p * ms];
		double a = 0;
		for (size_t e = 0; e < n; e++)
			a += vals[e] * row[rows[e]];
		gd->aq[p] = a;
	}
}

/* Replace the basic variable at position r by the one whose FTRAN column
 * is in aq; update B^-1 (only rows with a nonzero in aq) and the dual
 * steepest-edge weights w_p = ||e_p^T B^-1||^2, exact: each updated row's
 * norm is summed in the same pass as its update (the pass is bound by
 * memory traffic, so the norm costs little), row r's is scaled. */
void qos_gd__update_inverse(qos_gd *gd, size_t r)
{
	size_t m = gd->m, ms = gd->ms;
	double *B = gd->Binv, *rho = &B[r * ms];
	double piv = gd->aq[r];

	for (size_t p = 0; p < m; p++) {
		if (p == r || gd->aq[p] == 0.0)
			continue;
		gd->w[p] = qos_gd__k_axpy_norm(&B[p * ms], rho, -gd->aq[p] / piv, ms);
	}
	double inv = 1.0 / piv;
	for (size_t k = 0; k < ms; k++)
		rho[k] *= inv;
	gd->w[r] *= inv * inv;
}
