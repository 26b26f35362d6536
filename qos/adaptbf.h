/* adaptbf.h — AdapTBF: per-OST token allocation with lending, borrowing and
 * re-compensation (adaptbf.txt sec. III-C, Eq. (1)-(25)).
 *
 * Every observation period Δt each OST S_i hands its T_i·Δt tokens (one
 * token = one RPC) to the jobs active on it, using only what it saw
 * locally:
 *   1. Priority-based initial allocation: p_x = n_x / Σ n (Eq. 1),
 *      α_x = T_i·p_x·Δt (Eq. 2).
 *   2. Surplus redistribution: a job whose allocation exceeds its observed
 *      demand d_x gives the surplus T_s^x (Eq. 4) to a pool T_s (Eq. 5) that
 *      is shared out by the distribution factor DF_x (Eq. 3, 6, 7); the record
 *      r_x remembers what was lent (+) or borrowed (-) (Eq. 8).
 *   3. Re-compensation: lenders still lending (J+, Eq. 9) reclaim from
 *      borrowers still borrowing (J-, Eq. 10) with the reclaim coefficient C
 *      (Eq. 11-14), bounded by the borrowers' records; the reclaimed pool T_R
 *      (Eq. 17) is shared over J+ by DF (Eq. 18-20).
 *   4. Whole tokens: after every step the fractional parts are carried per
 *      job as remainders ρ_x (Eq. 23-25) into the next step and the next
 *      period, and a largest-remainder correction makes every step hand out
 *      exactly its total, so the whole tokens of one period sum to K.
 *
 * Layers: qos_adaptbf_allocate() is the algorithm itself, one period over an
 * array the caller owns (no allocation of state, no lookups): this is what
 * a benchmark times for "one AdapTBF period per job" (the paper reports
 * under 30 µs per job).  qos_adaptbf_ost keeps the job records of one OST
 * between periods, keyed by job id (what an OSS runs per OST).  The policy
 * "adaptbf" (qos/policy.h) runs one qos_adaptbf_ost per OST of the instance.
 *
 * Choices where the paper is silent, and honest limits:
 *  - The period's whole-token total is K = ⌊T_i·Δt + carry⌋ with the
 *    fraction carried per OST, so K = T_i·Δt exactly when that is whole and
 *    the long-run total is exact otherwise.
 *  - u_x (Eq. 3) divides by α_x^{t-1}; a job with no allocation in the
 *    previous period (new, or idle then) uses this period's α_x^t instead.
 *  - If every active job has DF = 0 (no job showed any demand) there is
 *    nobody to give the surplus to: it stays with its owners, records keep.
 *  - Eq. (13) sums over J+, so C is one coefficient per OST and period; it is
 *    applied to every borrower as printed.  Eq. (14)'s bracket (a floor)
 *    is replaced by a carried fraction, as Eq. (23)-(25) do for the other
 *    steps: the borrower gives ⌈C·α_RD - ρ⌉ whole tokens and ρ keeps what
 *    it is owed back.  With the floor, a borrower holding a few tokens per
 *    period (C·α_RD < 1: the common case at 100 ms on a 100 MB/s OST) never
 *    repaid, so lenders were never re-compensated.  We also bound T_R^x by
 *    |r_{x,RD}| and by α_{x,RD} so a borrower
 *    never flips to a lender nor gets negative tokens (the paper bounds by
 *    |r_x^t| only, which RD may already have reduced).
 *  - Largest remainder (Sec. III-C-4): a shortfall gives +1 to the largest
 *    ρ first; an excess takes -1 from the smallest ρ first (the job most
 *    ahead of its share) and never below 0 tokens.  Ties go to the lower
 *    array index, so results are deterministic.
 *  - Records move by whole tokens only, α_x + r_x being invariant within a
 *    period (Eq. 7+8, 15+16, 19+20), so records of a fixed job set sum to
 *    exactly zero.  When a job is forgotten (it ended) its record leaves
 *    with it and the others are not adjusted: the paper says nothing about
 *    departed lenders or borrowers.
 *  - Demands d_x are RPC counts per Δt; the policy converts demand rates
 *    (or usage rates when the caller has no demand). */
#ifndef QOS_ADAPTBF_H
#define QOS_ADAPTBF_H

#include <stddef.h>
#include <stdint.h>

#include "qos/policy.h"

/* One active job on one OST for one period.  The caller fills the inputs
 * and carries the state fields from the previous period of the same
 * (job, OST) (zero them for a job never seen: r = 0, rho = 0, prev = -1). */
typedef struct qos_adaptbf_job {
	/* inputs */
	double n;       /* n_x^t: compute nodes of the job (> 0) */
	double d;       /* d_x^t: RPCs the job issued here in the last Δt (>= 0) */
	/* state carried between periods, updated in place */
	double r;       /* r_x: record in whole tokens, lent (+) / borrowed (-) */
	double rho;     /* ρ_x: fractional remainder owed to the job (Eq. 24) */
	int64_t prev;   /* α_x^{t-1}: whole tokens of the last period, -1 = none */
	/* outputs */
	int64_t alpha;  /* α_{x,RC}^t: whole tokens for the next Δt */
	double p;       /* p_x^t (Eq. 1) */
	double u;       /* u_x^t (Eq. 3) */
	double DF;      /* DF_x^t (Eq. 6) */
} qos_adaptbf_job;

/* One period of the token allocation algorithm on one OST: K whole tokens
 * (T_i·Δt) over the n active jobs of x[].  On return x[i].alpha sums to
 * exactly K, x[i].prev = x[i].alpha, and r, rho are updated.  O(n log n)
 * (a sort per rounding step); allocates O(n) scratch and frees it.
 * Returns 0, -EINVAL (K < 0, n > 0 with x NULL, n_x <= 0 or d_x < 0 or not
 * finite), or -ENOMEM (x untouched then). */
int qos_adaptbf_allocate(qos_adaptbf_job *x, size_t n, int64_t K);

/* The job records of one OST, kept between periods. */
typedef struct qos_adaptbf_ost qos_adaptbf_ost;

/* What the stats controller observed for one active job (sec. III-B). */
typedef struct qos_adaptbf_obs {
	const char *id;  /* job id, at most QOS_ID_MAX-1 bytes; borrowed for the call */
	double nodes;    /* n_x */
	double d;        /* RPCs issued in the last Δt */
} qos_adaptbf_obs;

/* Create the state of an OST serving T tokens/s (T_i), allocating every
 * dt seconds (Δt, the paper uses 0.1).  *out is freed with
 * qos_adaptbf_ost_destroy.  Returns 0, -EINVAL (T < 0, dt <= 0, or not
 * finite) or -ENOMEM. */
int qos_adaptbf_ost_create(double T, double dt, qos_adaptbf_ost **out);
void qos_adaptbf_ost_destroy(qos_adaptbf_ost *ost);
/* Change T_i or Δt from the next period on (records are kept). */
int qos_adaptbf_ost_set_rate(qos_adaptbf_ost *ost, double T, double dt);

/* One period: obs[] are the active jobs (ids unique).  tokens[i] receives
 * the whole tokens of obs[i] for the next Δt and, if records is not NULL,
 * records[i] its record after this period.  Jobs absent from obs keep
 * their record and remainder and count as having had no allocation.
 * Returns 0, -EINVAL (bad obs, duplicate or too long id) or -ENOMEM
 * (state unchanged then). */
int qos_adaptbf_ost_period(qos_adaptbf_ost *ost, const qos_adaptbf_obs *obs,
			   size_t n, int64_t *tokens, double *records);

/* Record of job id on this OST in *r (0 and -ENOENT if unknown). */
int qos_adaptbf_ost_record(const qos_adaptbf_ost *ost, const char *id, double *r);
/* Drop a job that ended.  Returns 0 or -ENOENT. */
int qos_adaptbf_ost_forget(qos_adaptbf_ost *ost, const char *id);
/* Number of jobs with state (active now or holding a record). */
size_t qos_adaptbf_ost_njobs(const qos_adaptbf_ost *ost);
/* Sum of all records held (0 for a job set that never changed). */
double qos_adaptbf_ost_record_sum(const qos_adaptbf_ost *ost);

/* Policy "adaptbf": one qos_adaptbf_ost per OST of the instance (keyed by
 * ost id, or by position when ost_ids is NULL).  T_i = capacity ×
 * tokens_per_unit, Δt = instance period (param "dt" if the instance has
 * none; default 0.1 s).  d_x = demand × tokens_per_unit × Δt: the RPCs that
 * arrived or queued, the paper's observed demand.  Only when the instance
 * has no demand matrix is usage (what was served) taken instead; served
 * usage never exceeds the last allocation, so there an active job counts
 * at least one RPC (an active job issued one, sec. III-C-1) and is never
 * starved by its own zero usage.  A job is active where active[] says so
 * (without active[]: where its demand, else usage, is > 0).  Fills alloc
 * (tokens / Δt back in capacity units), tokens and records; jobs not active
 * on an OST get alloc 0 (no rule: the fallback queue, sec. III-D) and keep
 * their record.  Jobs absent from the instance are forgotten.  effective =
 * Σ min(alloc, demand or usage): the rate the allocation serves if demand
 * repeats.  Params: "dt", "tokens_per_unit" (default 1: capacity in
 * RPCs/s). */
extern const qos_policy_ops qos_policy_adaptbf;

#endif
