/* gift_lp.h — the bandwidth allocation LP of GIFT (gift.txt sec. 3.4),
 * solved with GLPK's simplex; also used by the MBW, TSA, TMF and RND
 * baselines with other bounds.
 *
 * Variables: one rate b_i per job with at least one OST (the same on every
 * OST j in S_i, which is what keeps I/O progress synchronous), and for each
 * job that may be throttled a throttle amount d_i >= base_i - b_i.
 *
 *   maximize   sum_i |S_i| b_i  -  eps * sum_i |S_i| d_i        Eq. (1)
 *   subject to sum_{i in L_j} b_i <= C_j            for every OST j
 *              lo_i <= b_i <= hi_i                  (a)/(b) of sec. 3.4
 *              sum_i |S_i| b_i >= E_min             constraint (2)
 *              sum_i |S_i| b_i - E_base >= sum_i |S_i| d_i
 *                                                   constraint (3), if on
 *              b_i + d_i >= base_i,  0 <= d_i <= base_i - lo_i
 *
 * sum_i |S_i| b_i is the effective system bandwidth of a synchronous
 * allocation, so "waste with BSIP - waste with GIFT" equals the objective
 * minus E_base, and sum |S_i| d_i is the worth of the coupons issued; this
 * makes constraint (3) linear.  The tiny eps (1e-6 per unit) only breaks
 * ties: it keeps the simplex from throttling a job when throttling gains
 * nothing (a zero-sum move), and costs at most 1e-6 of the objective.
 *
 * The paper writes b_i <= 1 for OSTs of capacity 1; here hi_i is the
 * caller's (normally min_{j in S_i} C_j).  Rates are scaled by max C_j
 * before GLPK sees them, so any capacity unit works.  GLPK's feasibility
 * tolerance is ~1e-7 relative; the solution is projected back onto the
 * exact capacity and bound constraints before it is returned.
 *
 * Size: n_jobs + |throttle| columns, n_osts + |throttle| + 2 rows,
 * about 3 * sum_i |S_i| nonzeros; 1,000 jobs on 200 OSTs is a few
 * thousand of each.  GLPK's terminal output is switched off; GLPK keeps
 * per-thread environment state, so concurrent solves from different
 * threads are fine but one problem is never shared. */
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
	const double *base;      /* [n_jobs] allocation before the LP; needed when
	                          * throttle or waste_constraint is set, else NULL */
	const uint8_t *throttle; /* [n_jobs] 1 = in Y: may go below base, at a
	                          * coupon cost; NULL = nobody */
	double E_min;            /* constraint (2); 0 to leave it out */
	int waste_constraint;    /* 1 = add constraint (3) */
} qos_gift_lp;

/* Solve; b[n_jobs] gets the rates (0 for jobs without OSTs) and
 * *objective (may be NULL) sum_i |S_i| b_i.  The bounds must admit a
 * feasible point (base is one when given).  Returns 0, -EINVAL on bad
 * input, -ENOMEM, or -EDOM if GLPK finds no optimum (b untouched). */
int qos_gift_lp_solve(const qos_gift_lp *lp, double *b, double *objective);

#endif
