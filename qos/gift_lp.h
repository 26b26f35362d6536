/* gift_lp.h — the bandwidth allocation LP of GIFT (gift.txt sec. 3.4),
 * solved with GLPK's simplex; also used by the MBW, TSA, TMF and RND
 * baselines with other bounds.
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
 * Because all-zero offsets are the base allocation, which is feasible,
 * the simplex starts from GLPK's standard basis without a phase 1.
 * Offsets that must be 0 in every feasible point are not given columns: a
 * job can grow only if each of its OSTs has a gap or hosts a job that can
 * shrink, and a shrink helps only where some job can grow.
 *
 * The paper writes b_i <= 1 for OSTs of capacity 1; here hi_i is the
 * caller's (normally min_{j in S_i} C_j).  Rates are scaled by max C_j
 * before GLPK sees them, so any capacity unit works.  GLPK's feasibility
 * tolerance is ~1e-7 relative; the solution is projected back onto the
 * exact capacity and bound constraints before it is returned.
 *
 * Size: at most n_jobs + |Y| columns, n_osts + 2 rows, about
 * 2 * sum_i |S_i| + 4 * n_jobs nonzeros.  Cost: 1,000 jobs on 200 OSTs
 * with 1-8 OSTs each (qos_gift_synth_make) is ~200 rows x ~1,600 columns
 * and ~1,200 primal simplex pivots, 30-120 ms on the 2-core development
 * machine under load, almost all of it inside glp_simplex -- far from the
 * paper's 5 ms with COIN-OR CLP (not measured on the same hardware or
 * instances).
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
 * *objective (may be NULL) sum_i |S_i| b_i.  The bounds must admit a
 * feasible point (base is one when given).  Returns 0, -EINVAL on bad
 * input, -ENOMEM, or -EDOM if GLPK finds no optimum (b untouched). */
int qos_gift_lp_solve(const qos_gift_lp *lp, double *b, double *objective);

#endif
