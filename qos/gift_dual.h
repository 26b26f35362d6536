/* gift_dual.h — a bounded dual simplex for LPs with few rows and many boxed
 * columns, whose basis (an explicit inverse) lives on between solves, so a
 * slightly changed LP is re-solved from the last optimal basis.  Written
 * for GIFT's allocation LP (gift_lp.h: one row per OST plus constraint (3),
 * two columns per job), which it solves exactly in a fraction of GLPK's
 * time; it knows nothing about GIFT.
 *
 * Model:
 *
 *   maximize   sum_j c_j x_j
 *   subject to sum_j a_tj x_j <= g_t       t = 0 .. m-1
 *              0 <= x_j <= u_j             every column (u_j finite)
 *
 * Each row gets a slack s_t = g_t - sum_j a_tj x_j >= 0, which is bounded
 * above by what the boxes allow (g_t + sum_j max(0, -a_tj) u_j), so every
 * variable is boxed.  Then any basis is made dual feasible by putting each
 * nonbasic variable at the bound its reduced cost asks for, which is what
 * lets a changed LP restart from the old basis: new or changed columns,
 * bounds and right-hand sides only cost the dual simplex iterations that
 * repair primal feasibility.  Pricing is exact dual steepest edge (the
 * squared row norms of the explicit inverse, summed as the rows are
 * updated); the ratio test is Harris' with bound flipping (long steps
 * over boxed columns).  Each solve starts on slightly perturbed costs
 * (qos_gd_set_perturb) against dual degeneracy and finishes on the true
 * ones.  After the last iteration the basic
 * solution is recomputed and checked against the rows and the reduced
 * costs; any residual or sign error above tolerance refactors the inverse
 * (Gauss-Jordan on the structural part of the basis) and iterates on.
 *
 * Columns live in slots: a slot keeps its index, its basis status and its
 * values across solves until the caller frees it, so the caller can key
 * its slots by something stable (GIFT: job id and OST set).  A freed slot
 * is fixed at 0 and reused once it is nonbasic.
 *
 * Cost: memory 2 m^2 doubles (the inverse and refactoring scratch: 64 MiB
 * at the 2,048-row limit) plus O(nnz); an iteration is
 * O(nnz) for the pivot row plus at most O(m^2) for the update (only the
 * nonzeros of the pivot row and column are touched).  Tolerances are
 * absolute, for data scaled so entries of b and u are about 1 (gift_lp.c
 * scales by the largest capacity): 1e-9 primal, 1e-9 dual in the
 * iterations, but a solve's first rounds end only when x_B is within
 * 1e-12 of its bounds and no nonbasic reduced cost is more than 1e-13 on
 * the wrong side (a value left 1e-9 out cost 1.6e-9 of the objective
 * once the caller trimmed it); later rounds accept the loose ones.
 * Starting bases: the last one (warm), the slack basis, or a crash basis
 * the caller names (qos_gd_crash).
 *
 * Not thread-safe per handle; no globals, no allocation during a solve
 * except growth of the slot arrays in qos_gd_col_add and, at its start,
 * of the packed copy of the movable columns' entries. */
#ifndef QOS_GIFT_DUAL_H
#define QOS_GIFT_DUAL_H

#include <stddef.h>
#include <stdint.h>

typedef struct qos_gd qos_gd;

typedef struct qos_gd_stats {
	uint64_t solves;
	uint64_t iterations;       /* dual simplex pivots, all solves */
	uint64_t flips;            /* bound flips in the ratio test */
	uint64_t refactors;        /* inverses rebuilt from scratch */
	uint64_t cold_starts;      /* solves from the slack basis */
	uint64_t last_iterations;  /* pivots of the last solve */
	uint64_t last_basis_change; /* variables basic at the end of the last
	                             * solve that were not at its start: the
	                             * fewest pivots any simplex path from
	                             * that start could have taken */
} qos_gd_stats;

/* A solver for m rows (m >= 1, at most QOS_GD_MAX_ROWS); all g_t = 0 and no
 * columns.  Returns 0, -EINVAL or -ENOMEM; free with qos_gd_destroy. */
#define QOS_GD_MAX_ROWS 2048
int qos_gd_create(size_t m, qos_gd **out);
void qos_gd_destroy(qos_gd *gd);
size_t qos_gd_rows(const qos_gd *gd);

/* Add a column: n entries (rows[k] < m, each row at most once, vals
 * finite), cost c, upper bound u >= 0.  *slot receives its index, stable
 * until qos_gd_col_free.  Returns 0, -EINVAL or -ENOMEM. */
int qos_gd_col_add(qos_gd *gd, const uint32_t *rows, const double *vals,
		   size_t n, double c, double u, uint32_t *slot);
/* Declare slot's column a twin of of's: equal to f times it on every row
 * but one (GIFT: a job's throttle column d_i is -1 times its expansion
 * column e_i on the OST rows, and differs on constraint (3)).  The pivot
 * row entry of slot is then derived from of's (one multiply-add instead
 * of a sum over its entries).  Only speed depends on it; the link lapses
 * when either slot gets a new column.  0, or -EINVAL if the columns are
 * not such twins (nothing is linked then). */
int qos_gd_col_twin(qos_gd *gd, uint32_t slot, uint32_t of);
/* The column's entries (borrowed until the slot is freed or reused). */
size_t qos_gd_col_get(const qos_gd *gd, uint32_t slot, const uint32_t **rows,
		      const double **vals);
/* New upper bound (>= 0) of a live slot. */
void qos_gd_col_set_upper(qos_gd *gd, uint32_t slot, double u);
/* Release a slot: its variable is fixed at 0 from now on, and the slot is
 * handed out again once it has left the basis. */
void qos_gd_col_free(qos_gd *gd, uint32_t slot);
/* Right-hand side of row t. */
void qos_gd_row_set(qos_gd *gd, size_t t, double g);
/* Forget the basis: the next solve starts cold from the slack basis. */
void qos_gd_reset(qos_gd *gd);
/* Rebuild the basis inverse from scratch, as a solve does when its checks
 * find the updated inverse inaccurate (and the tests do to exercise it).
 * Returns 0, or -EAGAIN if the basis is numerically singular; the basis is
 * then reset as by qos_gd_reset. */
int qos_gd_refactor(qos_gd *gd);

/* Whether the solver holds a basis (0 after create, qos_gd_reset or a
 * failed solve: the next solve then starts from the slack basis). */
int qos_gd_has_basis(const qos_gd *gd);
/* Start from a crash basis instead: slot[a] basic in place of the slack
 * of row[a], for a < k, every other variable nonbasic (pairs whose slot
 * is freed, fixed at 0 or already placed, or whose row is already taken,
 * are skipped).  Any choice is safe: the solve that follows reaches the
 * same optimum, only the number of pivots depends on it.  Returns 0, or
 * -EAGAIN if that basis is numerically singular (the slack basis is then
 * installed instead). */
int qos_gd_crash(qos_gd *gd, const uint32_t *slot, const uint32_t *row,
		 size_t k);

/* Variables by name: a slot, or QOS_GD_SLACK | t for the slack of row t.
 * Their status: at the lower bound, at the upper bound, or basic. */
#define QOS_GD_SLACK 0x80000000u
enum { QOS_GD_AT_LO = 0, QOS_GD_AT_UP = 1, QOS_GD_IS_BASIC = 2 };
/* Status of variable v, or -EINVAL if there is no such variable. */
int qos_gd_var_status(const qos_gd *gd, uint32_t v);
/* The variable basic at position p < m, and the number of slots handed
 * out so far (every slot index is below it). */
uint32_t qos_gd_basic_var(const qos_gd *gd, size_t p);
size_t qos_gd_slots(const qos_gd *gd);
/* Install a basis saved with qos_gd_var_status (a restart: GIFT's basis
 * kept across an MDS restart): var[a] gets status[a] for a < k, every
 * variable not listed is nonbasic at its lower bound and every slack not
 * listed is basic.  The listed basic slots must fill exactly the
 * positions of the listed nonbasic slacks.  The inverse is rebuilt from
 * the data (and only the set of basic variables matters to it: nonbasic
 * ones go to the bound their reduced cost asks for when the solve
 * starts).  Returns 0; -EINVAL (a bad variable or status, or the counts
 * do not match) or -EAGAIN (numerically singular), and the slack basis is
 * installed then. */
int qos_gd_basis_set(qos_gd *gd, const uint32_t *var, const uint8_t *status,
		     size_t k);

/* Relative size of the cost perturbation each solve starts with (default
 * GD_PERTURB = 1e-8 of 1 + |c_j|; 0 turns it off).  The optimum is the
 * unperturbed LP's either way; where several vertices reach it, which one
 * is returned may depend on it. */
void qos_gd_set_perturb(qos_gd *gd, double rel);

/* Solve from the current basis.  Returns 0 (optimal: qos_gd_x and
 * qos_gd_objective hold the solution), -EDOM (infeasible), -EAGAIN
 * (iteration limit or numerical trouble that refactoring did not cure;
 * the basis is reset so the next solve starts cold) or -ENOMEM. */
int qos_gd_solve(qos_gd *gd);
/* Value of slot's variable in the last optimal solution. */
double qos_gd_x(const qos_gd *gd, uint32_t slot);
double qos_gd_objective(const qos_gd *gd);
void qos_gd_stats_get(const qos_gd *gd, qos_gd_stats *st);

#endif
