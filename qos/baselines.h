/* baselines.h — the allocation policies GIFT is compared with (gift.txt
 * sec. 2, Fig. 5, and sec. 4 "Scheduling Policies").
 *
 *   pofs  Per-OST Fair Share: C_j w_i / sum_{l in L_j} w_l on each OST,
 *         independently per OST (not synchronous: the excess over a job's
 *         most contended OST is waste).
 *   bsip  Basic Synchronous I/O Progress: every OST of job i gets
 *         b_i,bsip = min_{j in S_i} of the POFS share (gaps stay empty).
 *   mbw   Minimum Bandwidth Wastage: synchronous rates with no fairness
 *         floor, b_i >= 0, maximizing sum_i |S_i| b_i (the LP of
 *         gift_lp.h with lo = 0); it starves whichever jobs stand in the
 *         way of filling the OSTs (Fig. 5 (3): E gets nothing).  Among equal
 *         optima GLPK's vertex decides, so which of two interchangeable
 *         jobs wins is arbitrary but deterministic.
 *   tsa   Throttle Small Applications: jobs with fewer nodes than the
 *         median of the active jobs are throttled to b_bsip (1 - B_thres)
 *         (the rule decides, whether or not it pays), and the LP expands
 *         the others into the gaps, with no floor on the total (no
 *         constraint (2) or (3)); no coupons, no payback.
 *   esa   Expand Small Applications: BSIP, then the gaps go to the jobs
 *         with fewer nodes than the median, smallest first, each getting
 *         the smallest gap over its OSTs (the paper's "longer-running,
 *         smaller applications"; run length is not in the instance, so
 *         node count alone picks them).
 *   tmf   Throttle Most Frequent: like tsa, but the throttled set is the
 *         jobs whose number of appearances (decisions where the job became
 *         active after not being active in the previous decision) is above
 *         the median of the active jobs.  Counts are kept per job id for
 *         the life of the policy state.
 *   rnd   Throttle Randomly: like tsa with each active job throttled
 *         with probability 1/2, from a splitmix64 stream seeded by
 *         qos_params.seed (advances across decisions).
 *
 * All take B_thres (default 0.1, as GIFT) where they throttle, and accept
 * every GIFT key (qos_gift_param_keys) so one parameter set can drive a
 * comparison of the whole family; keys a policy does not use are ignored.
 * Weighted shares use qos_job.priority (1 if unset).  effective is the
 * synchronous part of the allocation (qos_gift_effective).  None of these
 * write coupons, records or tokens. */
#ifndef QOS_BASELINES_H
#define QOS_BASELINES_H

#include <stdint.h>

#include "qos/policy.h"

/* Stateless one-shot forms (res->alloc and res->effective written).
 * Return 0, -EINVAL or -ENOMEM. */
int qos_baseline_pofs(const qos_instance *in, qos_result *res);
int qos_baseline_bsip(const qos_instance *in, qos_result *res);
int qos_baseline_mbw(const qos_instance *in, qos_result *res);
int qos_baseline_esa(const qos_instance *in, qos_result *res);
/* Jobs where Y[i] != 0 (and b_bsip > 0, B_thres > 0) get exactly
 * b_bsip (1 - B_thres); the others get at least b_bsip, expanded by the
 * LP (gift_lp.h, maximum sum_i |S_i| b_i, no constraint (2) or (3)): the
 * common core of tsa, tmf and rnd. */
int qos_baseline_throttle(const qos_instance *in, const uint8_t *Y,
			  double B_thres, qos_result *res);
/* Y for tsa: active jobs with nodes below the median of active jobs. */
int qos_baseline_small(const qos_instance *in, uint8_t *Y);

extern const qos_policy_ops qos_policy_pofs;
extern const qos_policy_ops qos_policy_bsip;
extern const qos_policy_ops qos_policy_mbw;
extern const qos_policy_ops qos_policy_tsa;
extern const qos_policy_ops qos_policy_esa;
extern const qos_policy_ops qos_policy_tmf;
extern const qos_policy_ops qos_policy_rnd;

#endif
