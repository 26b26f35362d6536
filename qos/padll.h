/* padll.h — PADLL's control algorithms (padll.txt sec. IV): uniform and
 * priority-based rate distribution (static, IV-A), proportional sharing
 * (max-min fair with demands, IV-B) and PSFA, proportional sharing without
 * false resource allocation (Algorithm 1, IV-B).
 *
 * Each function shares one resource of capacity Max_R (the maximum rate of
 * one operation class — metadata IOPS, data bandwidth, or a single POSIX
 * operation — the PFS may serve) among n jobs; it is one "compute" phase of
 * PADLL's collect → compute → enforce → sleep control cycle (sec. III-B),
 * with the collected usage passed in and the rates handed back.
 *
 * Choices where the paper is silent, and honest limits:
 *  - Static rates are fixed per job, from the configured population, not
 *    from the jobs present: uniform gives each job Max_R / N for the
 *    configured job count N (the paper's evaluation: 110 kops/s over 4
 *    jobs = 27.5 kops/s each, from the moment the first job starts alone),
 *    priority gives Max_R·w_i/W with W the configured jobs' total weight
 *    (Table I: 15/25/30/40 kops/s of 110).  A job's end leaves its share
 *    unused and a lone job gets only its own, as the paper describes
 *    (under-provisioning).  More jobs than configured would oversubscribe
 *    Max_R; then the shares shrink to Max_R·w_i/Σ_present w.
 *  - A demand of 0 or less means "no limit" and is taken as +infinity.
 *  - Proportional sharing hands the leftover that remains once every
 *    demand is met to the jobs in proportion to their demands (the paper
 *    says only "in a proportional manner").
 *  - Algorithm 1 iterates jobs in index order; we iterate in increasing
 *    order of each job's request (line 7's usage_i + threshold_i, or line
 *    9's demand_i), which is what makes line 4's fair_share a max-min fair
 *    water-fill and the result independent of the order jobs are listed.
 *  - Alg. 1 assumes usage_i > 0; if every active job used nothing, the
 *    leftover of lines 11-14 is split equally instead of by usage.
 *  - ε has no default in the paper; we use 0.5 (half of the unused part of
 *    the demand is kept as headroom for volatile jobs).
 *  - Rates are real numbers; rounding to enforceable units is the
 *    enforcer's business.  Σ rate never exceeds Max_R beyond float rounding.
 */
#ifndef QOS_PADLL_H
#define QOS_PADLL_H

#include <stddef.h>

#include "qos/policy.h"

#define QOS_PADLL_EPSILON_DEFAULT 0.5

/* Uniform rate distribution (sec. IV-A) over a population of n jobs:
 * rate[i] = Max_R / n.  Returns 0 or -EINVAL (Max_R < 0 or not finite,
 * rate NULL with n > 0). */
int qos_padll_uniform(double Max_R, size_t n, double *rate);

/* Priority-based rate distribution (sec. IV-A) over a population of n
 * jobs: rate[i] = Max_R·w[i]/Σw.  w[i] <= 0 counts as 1.  Returns 0 or
 * -EINVAL. */
int qos_padll_priority(double Max_R, const double *w, size_t n, double *rate);

/* Static rates of the n jobs present out of a configured population of
 * total weight W (sec. IV-A): rate[i] = Max_R·w[i] / max(W, Σ_i w[i]);
 * w NULL = every weight 1 (uniform: W = the configured job count), w[i]
 * <= 0 counts as 1.  Returns 0 or -EINVAL (bad Max_R, W < 0 or not
 * finite, infinite or NaN weights). */
int qos_padll_static(double Max_R, const double *w, size_t n, double W,
		     double *rate);

/* Max-min fair share with demands (sec. IV-B, "proportional sharing"
 * without its leftover step): jobs in increasing order of demand get
 * min(demand_i, left / jobs remaining), so (1) no job gets more than its
 * demand and (2) unsatisfied jobs get equal shares.  *left (may be NULL)
 * receives the rate nobody demanded.  O(n log n).  Returns 0, -EINVAL
 * (negative Max_R, NaN demand) or -ENOMEM. */
int qos_padll_maxmin(double Max_R, const double *demand, size_t n,
		     double *rate, double *left);

/* Proportional sharing (sec. IV-B): qos_padll_maxmin, then the leftover
 * is given to the jobs in proportion to their demands, so the whole Max_R
 * is handed out whenever a job is active.  Returns as qos_padll_maxmin. */
int qos_padll_proportional(double Max_R, const double *demand, size_t n,
			   double *rate);

/* PSFA, Algorithm 1 (lines 2-14) over the n active jobs: demand[i]
 * (demand_i, <= 0 = no limit), usage[i] (usage_i, the rate the job used in
 * the last loop interval, >= 0), 0 <= epsilon <= 1.  Never hands out more
 * than Max_R; the leftover goes by usage proportion.  O(n log n).
 * Returns 0, -EINVAL or -ENOMEM. */
int qos_padll_psfa(double Max_R, const double *demand, const double *usage,
		   size_t n, double epsilon, double *rate);

/* Policies over qos/policy.h: each "OST" of the instance is an operation
 * class with Max_R = capacity[o]; demand_i = instance demand[j][o] if
 * given, else the job's limit; usage_i = usage[j][o].  Static policies
 * (uniform, priority — weight = qos_job.priority) rate every job of the
 * instance by qos_padll_static, with W = param "jobs" (uniform, N) or
 * "weight_sum" (priority, W); without the parameter, W is the largest
 * job count (total weight) any instance so far had, so shares stay fixed
 * while jobs leave and only shrink when more jobs than ever share Max_R.
 * Dynamic ones (proportional, psfa) rate only the jobs active on the
 * class (all jobs if the instance has no active matrix), others get 0.
 * effective = Σ min(alloc, usage).  Params: uniform "jobs", priority
 * "weight_sum" (> 0), psfa "epsilon"; proportional none. */
extern const qos_policy_ops qos_policy_uniform;
extern const qos_policy_ops qos_policy_priority;
extern const qos_policy_ops qos_policy_proportional;
extern const qos_policy_ops qos_policy_psfa;

#endif
