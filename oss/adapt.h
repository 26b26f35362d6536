/* adapt.h — AdapTBF on one OST of the OSS (adaptbf.txt sec. III): the
 * "system stats controller" and "rule management daemon" around the token
 * allocation algorithm of qos/adaptbf.h.
 *
 * Every period Δt the caller (oss/qos.c's loop) hands in one observation
 * per job active on the OST and gets back what to do with the job's TBF
 * rule `adaptbf.<job>`:
 *   SET     the job is active and its tokens changed (or it had no rule):
 *           its rule's rate becomes α_x / Δt RPCs/s (α_x its whole tokens
 *           for the next period) with a small depth (at most
 *           OSS_ADAPT_DEPTH_MAX tokens, at most α_x, at least 1); a job
 *           whose tokens did not change gets no action (its rule holds);
 *   CLEAR   the job was active before and is not now: stop its rule, so a
 *           job that comes back starts in the fallback queue (sec. III-D:
 *           jobs without a rule are served opportunistically) until the
 *           next period gives it tokens again; its record is kept, which is
 *           what re-compensates a lender that returns (Eq. 9-20);
 *   FORGET  the job has been absent for forget_periods periods: it ended;
 *           its record is dropped (qos_adaptbf_ost_forget).
 *
 * Demand d_x.  The paper measures d_x as "the number of RPCs issued to the
 * shared storage target during Δt by job x" (III-C-2).  In a closed loop
 * (Lustre's max_rpcs_in_flight, our RCC credits) the RPCs that arrive while
 * a job is throttled are paced by its own service: arrivals ≈ tokens, so
 * u_x ≈ 1 and a starved job could never show a deficit.  What the job
 * asked the OST to do during Δt is better seen as the RPCs that arrived in
 * Δt plus the backlog it already had queued when Δt began (= RPCs served in
 * Δt + RPCs still queued at its end): an unthrottled job has no backlog and
 * this is exactly the paper's count; a throttled job's unmet demand shows
 * as u_x > 1.  The caller computes d_x that way (oss_job_snap.backlog on
 * the loop clock); active jobs are those with d_x > 0.
 *
 * Records, remainders and α^{t-1} live in the qos_adaptbf_ost; this module
 * adds per job the tokens of the current period, whether a rule is
 * installed, and how many periods it has been absent.  Pure (no clock, no
 * scheduler, no locks): the caller's lock guards it. */
#ifndef OSS_ADAPT_H
#define OSS_ADAPT_H

#include <stddef.h>
#include <stdint.h>

#include "common/proto.h"

#define OSS_ADAPT_DEPTH_MAX 3.0      /* Lustre's default TBF depth, RPCs */
#define OSS_ADAPT_FORGET_PERIODS 600 /* 60 s at the default 100 ms */

#define OSS_ADAPT_SET 1
#define OSS_ADAPT_CLEAR 2
#define OSS_ADAPT_FORGET 3

typedef struct oss_adapt oss_adapt;

/* One active job this period. */
typedef struct oss_adapt_obs {
	const char *job;   /* borrowed for the call */
	double d;          /* d_x: RPCs (arrived in Δt + backlog at its start), > 0 */
	double nodes;      /* n_x (> 0) */
} oss_adapt_obs;

/* What to do with one job's rule. */
typedef struct oss_adapt_act {
	char job[PFS_JOBID_MAX + 1];
	int what;          /* OSS_ADAPT_* */
	int64_t tokens;    /* α_x for the next Δt (SET) */
	double rate;       /* α_x / Δt, RPCs/s (SET) */
	double depth;      /* bucket depth, RPCs (SET) */
	double record;     /* r_x after this period */
} oss_adapt_act;

/* forget_periods 0 = OSS_ADAPT_FORGET_PERIODS.  0 or -ENOMEM. */
int oss_adapt_create(unsigned forget_periods, oss_adapt **out);
void oss_adapt_destroy(oss_adapt *a);

/* One period on an OST of T tokens/s (T_i, RPCs/s) every dt seconds.
 * *acts is malloc'd (caller frees; NULL when *n = 0).  On error nothing
 * changed.  0, -EINVAL (T < 0, dt <= 0, a bad observation), -ENOMEM. */
int oss_adapt_period(oss_adapt *a, double T, double dt, const oss_adapt_obs *obs, size_t n,
		     oss_adapt_act **acts, size_t *nacts);

/* A job's state: tokens this period (-1 if it has none: inactive), its
 * record and whether its rule is installed.  0 or -ENOENT. */
int oss_adapt_job(const oss_adapt *a, const char *job, int64_t *tokens, double *record);
/* The period length the last oss_adapt_period used (0 before any). */
double oss_adapt_dt(const oss_adapt *a);
/* Jobs with state. */
size_t oss_adapt_njobs(const oss_adapt *a);
/* Every job that currently has a rule (for stopping them all when the OST
 * leaves AdapTBF): *jobs malloc'd array of ids (caller frees). */
int oss_adapt_ruled(const oss_adapt *a, char (**jobs)[PFS_JOBID_MAX + 1], size_t *n);

#endif
