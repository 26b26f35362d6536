/* gift_lp.h — the bandwidth allocation LP of GIFT (gift.txt sec. 3.4),
 * solved by a bounded dual simplex that keeps its basis between decisions
 * (gift_dual.h), with GLPK as the reference; also used by the MBW, TSA,
 * TMF and RND baselines with other bounds.
 *
 * Model: one rate b_i per job with at least one OST (the same on every OST
 * j in S_i, which is what keeps I/O progress synchronous):
 *
 *   maximize   sum_i |S_i| b_i                      Eq. (1)
 *   subject to sum_{i in L_j} b_i <= C_j            for every OST j
 *              lo_i <= b_i <= hi_i                  (a)/(b) of sec. 3.4
 *              sum_i |S_i| b_i >= E_min             constraint (2)
 *              sum_i |S_i| b_i - E_base >= sum_{i in Y} |S_i| max(0, base_i - b_i)
 *                                                   constraint (3), if on
 *
 * where E_base = sum_i |S_i| base_i.  sum_i |S_i| b_i is the effective
 * system bandwidth of a synchronous allocation, so "waste with BSIP -
 * waste with GIFT" is the objective minus E_base, and the right side of (3)
 * is the worth of the coupons issued.  To make (3) linear each rate is
 * written as an offset from the base, b_i = base_i + e_i - d_i with
 * 0 <= e_i <= hi_i - base_i and 0 <= d_i <= base_i - lo_i; a d_i of a job
 * in Y costs 2 |S_i| d_i in (3) (lost bandwidth plus coupon).  d_i carries
 * a tie-break cost of 1e-6 per unit in the objective so the simplex never
 * throttles when throttling gains nothing (a zero-sum move).
 *
 * All-zero offsets are the base allocation, which is feasible.
 *
 * The paper writes b_i <= 1 for OSTs of capacity 1; here hi_i is the
 * caller's (normally min_{j in S_i} C_j).  Rates are scaled by max C_j
 * before a solver sees them, so any capacity unit works.  Solver
 * tolerances are ~1e-9 (dual simplex) and ~1e-7 (GLPK) of max C_j; the
 * solution is projected back onto the exact capacity and bound
 * constraints before it is returned.
 *
 * Solvers.  qos_gift_lp_solve and qos_gift_lp_ctx_solve use the bounded
 * dual simplex of gift_dual.h (rows: the OSTs and (3); columns: e_i and,
 * where lo_i < base_i, d_i).  Constraint (2) never binds when the base is
 * feasible and E_min <= E_base (0 is feasible, so the optimum has
 * sum |S_i| (e_i - d_i) >= eps sum |S_i| d_i >= 0), so it is left out
 * then; the few LPs outside that case (an overloaded base, or E_min above
 * E_base), more than QOS_GD_MAX_ROWS - 1 OSTs, or a dual simplex failure
 * go to GLPK, counted in qos_gift_lp_stats.glpk.  qos_gift_lp_solve_glpk
 * is GLPK's primal simplex from the base (columns fixed at 0 dropped,
 * scaled, standard basis, 1e-9 tolerances: GLPK's 1e-7 defaults left it
 * 1e-8 below the optimum on crowded LPs): the reference the tests
 * compare against.
 *
 * Warm start.  A qos_gift_lp_ctx keeps the solver, its basis and one
 * column pair per job between solves.  Columns are matched to jobs by
 * their OST set, not by position or id: a job whose set is unchanged gets
 * its columns back with their basis status, a new set gets new columns,
 * and columns nobody matched are released.  Since a column is fully
 * determined by S_i (and the coupon cost of d_i in (3)), matching two
 * jobs with equal sets to each other's old columns is just as exact;
 * only the number of pivots depends on the matching.  Bounds, gaps and
 * membership of Y can all change between solves.
 *
 * Cold starts.  A context with no basis (the first solve, a reshaped
 * LP, after a failure) starts from a crash basis when the LP has at
 * least QOS_GIFT_LP_CRASH_MIN OSTs: jobs in order of increasing |S_i|
 * (then box) grow greedily over the base's gaps, a job stopped by an OST
 * becomes basic in that OST's row; the basis is triangular, so never
 * singular, and the solve reaches the same optimum as from the slack
 * basis, in fewer pivots.
 *
 * Cost (2-core development machine under load, `pfs-qosbench --reps 21
 * --cpu`, medians, bench/RESULTS.md): 1,000 jobs on 200 OSTs with 1-8
 * OSTs each is 201 rows x ~1,600 columns, and about 193 of the 200 OSTs
 * end full, so the basis inverse is dense (a pivot row is ~88 % nonzero,
 * a pivot column ~96 %).  GLPK from the base: ~1,200 pivots, ~55 ms.
 * Dual simplex cold from the crash basis: ~430 pivots, ~7 ms; from the
 * slack basis ~680 pivots, ~11.5 ms.  Warm, with 1 % of the jobs
 * arriving, leaving or moving per decision: ~70 pivots, ~1.3 ms.  What
 * got it there from 726 / 97 pivots and 13 / 1.8 ms: exact dual steepest
 * edge instead of Devex (the inverse's row norms), a 1e-8 cost
 * perturbation (GIFT's integer costs made a third of all pivots
 * degenerate), and d_i's pivot row entry derived from e_i's (twins).
 * Per pivot, ~16 us: the pivot row (~5,000 entries) and the ratio test
 * with bound flipping about half, the update of the 201 x 204 inverse
 * with its row norms a fifth, the flips' effect on x_B an eighth, then
 * pricing and the steps.  A sparse LU of B with Forrest-Tomlin updates
 * (its factors are nearly as sparse as B) measured slower at this size
 * (gift_dual_inv.c).  A 1 % change moves BSIP shares on ~45 OSTs and
 * the optimal basis by 32 of its 201 variables (median over the steps,
 * 16-49; qos_gift_lp_stats.last_basis_change), and every new basic
 * variable costs a pivot on any simplex path.  The dense kernels alone
 * cost 3.4 us (update of B^-1 with its norms), 2.3 us (a pivot row of
 * 5,500 entries) and, when a pivot flips bounds, 2.9 us (B^-1 v) per
 * pivot (pfs-qosbench "pivot floor"; fusing the last into the update
 * saved 0.7 us), and a warm solve spends ~0.2 ms outside its pivots
 * (matching, bounds, packing, the end checks: an unchanged LP), the
 * decision ~0.1 ms around the LP.  So 0.5 ms warm is the floor itself
 * (0.1 + 0.2 + 32 x 5.8 us) on the shortest path with nothing but
 * those kernels; the solver takes ~70 pivots of ~17 us.  5 ms cold
 * needs ~300 pivots at today's cost, or ~11 us per pivot at 431.
 *
 * Restarts.  The basis is saved with GIFT's state (qos_gift_lp_ctx_save
 * below), so the first decision after an MDS restart is warm: its
 * columns come back in their slots, so it takes the pivots the
 * continuing state would (~70-75; cold takes ~430).
 *
 * GLPK's terminal output is switched off (glp_term_out(GLP_OFF)) and its
 * messages level set to off, so it never prints.  GLPK's environment is
 * per thread only when the library is built thread-local; callers should
 * solve from one thread at a time unless they know theirs is. */
#ifndef QOS_GIFT_LP_H
#define QOS_GIFT_LP_H

#include <stddef.h>
#include <stdint.h>

typedef struct qos_gift_lp {
	size_t n_jobs, n_osts;
	const double *capacity;  /* [n_osts] C_j >= 0 */
	const size_t *ost_off;   /* [n_jobs + 1]: S_i = ost_idx[ost_off[i] .. ost_off[i+1]) */
	const size_t *ost_idx;   /* OST indices, each < n_osts, no duplicates per job */
	const double *lo;        /* [n_jobs] lower bound of b_i */
	const double *hi;        /* [n_jobs] upper bound of b_i (>= lo) */
	const double *base;      /* [n_jobs] allocation before the LP, in
	                          * [lo, hi]; NULL = lo.  Needed when throttle
	                          * or waste_constraint is set */
	const uint8_t *throttle; /* [n_jobs] 1 = in Y: going below base costs a
	                          * coupon in (3); NULL = nobody */
	double E_min;            /* constraint (2); 0 to leave it out */
	int waste_constraint;    /* 1 = add constraint (3) */
} qos_gift_lp;

/* Solve; b[n_jobs] gets the rates (0 for jobs without OSTs) and
 * *objective (may be NULL) sum_i |S_i| b_i.  Returns 0, -EINVAL on bad
 * input, -ENOMEM, or -EDOM if the LP has no feasible point (b untouched).
 * qos_gift_lp_solve_glpk solves the same LP with GLPK (the reference;
 * the bounds must admit a feasible point, base is one when given). */
int qos_gift_lp_solve(const qos_gift_lp *lp, double *b, double *objective);
int qos_gift_lp_solve_glpk(const qos_gift_lp *lp, double *b, double *objective);

/* ---- warm start between decisions ---- */

typedef struct qos_gift_lp_ctx qos_gift_lp_ctx;

typedef struct qos_gift_lp_stats {
	uint64_t solves;
	uint64_t cold;             /* dual simplex from no previous basis */
	uint64_t crashes;          /* cold starts from the crash basis */
	uint64_t glpk;             /* LPs handed to GLPK (see above) */
	uint64_t iterations;       /* dual simplex pivots, all solves */
	uint64_t last_iterations;  /* pivots of the last solve */
	uint64_t columns_reused;   /* job columns matched to the last solve's */
	uint64_t columns_added;
	uint64_t restored;         /* bases installed by qos_gift_lp_ctx_load */
	uint64_t last_basis_change; /* basic columns and slacks new in the
	                             * last solve's optimal basis: the fewest
	                             * pivots a simplex path could take */
} qos_gift_lp_stats;

/* A context with no basis yet.  0 or -ENOMEM; free with
 * qos_gift_lp_ctx_destroy (NULL is fine). */
int qos_gift_lp_ctx_create(qos_gift_lp_ctx **out);
void qos_gift_lp_ctx_destroy(qos_gift_lp_ctx *ctx);
/* As qos_gift_lp_solve, starting from the basis of the previous solve
 * of ctx (any LP: a different OST count or (3) switched on or off starts
 * cold).  The optimum does not depend on the history, only the time
 * does; where several allocations reach it, which one is returned may. */
int qos_gift_lp_ctx_solve(qos_gift_lp_ctx *ctx, const qos_gift_lp *lp,
			  double *b, double *objective);
void qos_gift_lp_ctx_stats(const qos_gift_lp_ctx *ctx, qos_gift_lp_stats *st);
/* Cold starts (the first solve, a reshaped LP, after a failure) of LPs
 * with at least min_osts OSTs begin from a crash basis built from a
 * greedy fill of the base's gaps; smaller ones (and all with min_osts =
 * SIZE_MAX) from the slack basis.  Default QOS_GIFT_LP_CRASH_MIN: small
 * LPs are solved in microseconds either way and keep the vertex the slack
 * basis leads to.  The optimum is the same either way; where several
 * allocations reach it, which one is returned depends on the start. */
#define QOS_GIFT_LP_CRASH_MIN 16
void qos_gift_lp_ctx_set_crash(qos_gift_lp_ctx *ctx, size_t min_osts);
/* The basis across a restart (GIFT saves it with its state, so the first
 * decision after an MDS restart starts warm; gift_lp_basis.c).
 * qos_gift_lp_ctx_save writes ctx's basis as a malloc'd image (*len 0
 * and *buf NULL when ctx has none): the shape (OSTs, (3) on or off), the
 * status of every row's slack, and for every job column its OST set, its
 * solver slot and its status (and the columns still basic after their
 * job left); gift_lp_basis.c gives the layout.  0 or -ENOMEM.
 * qos_gift_lp_ctx_load replaces ctx's solver with the saved one, each
 * column in its old slot (so the cost perturbation, and with it the next
 * solve's path, is the saved context's): the next qos_gift_lp_ctx_solve
 * matches its jobs to the saved columns by OST set, as after a solve.
 * 0; -EBADMSG for an image it cannot parse or whose basis is
 * inconsistent, -EAGAIN for a numerically singular one (ctx then holds
 * the columns but no basis, and the next solve starts cold), -ENOMEM. */
int qos_gift_lp_ctx_save(const qos_gift_lp_ctx *ctx, uint8_t **buf, size_t *len);
int qos_gift_lp_ctx_load(qos_gift_lp_ctx *ctx, const uint8_t *buf, size_t len);
/* Rebuild ctx's basis inverse from scratch (qos_gd_refactor); 0 or
 * -EAGAIN (the next solve then starts cold).  A no-op without a basis. */
int qos_gift_lp_ctx_refactor(qos_gift_lp_ctx *ctx);

#endif
