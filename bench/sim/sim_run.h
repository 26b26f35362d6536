/* sim_run.h — `pfs-sim run`: the time-stepped fluid simulation of a cluster
 * under any QoS policy, and GIFT's metrics (gift.txt sec. 4).
 *
 * Time advances from event to event (submission, end of a compute
 * interval, end of a stream, decision instance), never by more than one
 * decision interval while any I/O is in flight, so the result does not
 * depend on a step size.  Every decision interval (default 10 s) with I/O
 * in flight, the policy gets one qos_instance: the jobs in an I/O phase,
 * each active on the OSTs it still has bytes for; usage = bytes it moved on
 * each OST in the last interval / interval; demand = the rate that would
 * finish its remaining bytes within one interval, capped at the OST's
 * capacity.  Between decisions each stream is served at its allocation
 * (sim_fluid.h: a cap, not work-conserving unless the scenario says so).  A
 * phase that starts between two decisions ("newcomers": "share", the
 * default) gets an equal share of each of its OSTs at once, C_o / (1 + the
 * streams already there), scaled down with the others there if that
 * overcommits the OST, until the next decision: an OSS serves a job the
 * controller has not limited yet.  With "newcomers": "wait" it gets nothing
 * until the next decision (up to one interval: for a phase of a few
 * seconds that wait, which depends on where the phase falls on the
 * decision grid, outweighs its I/O).
 *
 * Jobs, two schedules (sim_run_opts.pin):
 *  - pinned (pin != NULL; what `pfs-sim run` and `report` use by default):
 *    job j starts at pin[j].start, the start time it had in the reference
 *    run (POFS, itself scheduled by EASY below), or, if the application's
 *    previous appearance still runs then, as soon as that one ends; a job
 *    the reference never started never starts.  So every policy meets the
 *    same co-runners at the same times, and an application's runs are
 *    paired run by run (GIFT sec. 4 attributes an application's loss
 *    against POFS to coupons it could not redeem, which presumes the same
 *    schedule; the paper schedules FCFS + EASY but does not say whether
 *    per policy).  The node pool is not enforced: a job that runs longer
 *    than in the reference can overlap the next one's nodes (counted in
 *    pin_overcommit_nodes), as when a trace's start times are replayed.
 *  - easy (pin == NULL): each run schedules its own jobs: FCFS with EASY
 *    backfilling (sim_sched.h) on the node pool, using
 *    estimate_factor x stand-alone run time as the user's estimate.  A job
 *    that ends earlier frees nodes sooner, so later jobs start at other
 *    times than in the reference and meet other contention.  The
 * appearances of one application run one after the other (a refinement
 * series): an appearance waits in the queue, without blocking others,
 * while the same application still runs.  That also keeps qos_job.id =
 * application id unique in every instance, so GIFT's coupons follow the
 * application across its appearances, as sec. 3.1 intends.
 *
 * Metrics, over jobs completed within the simulated duration:
 *   mean_io_time         s, time a job spends in its I/O phases
 *   mean_run_time        s, start to end
 *   effective_bandwidth  capacity units (MB/s), useful bandwidth: the
 *                        bandwidth that advances jobs in step (sim_fluid.h),
 *                        averaged over the time any I/O is in flight.  An
 *                        open workload pins it (every byte must move
 *                        anyway): it changes only with the work completed.
 *   effective_system_bandwidth  capacity units (MB/s), GIFT sec. 4's
 *                        "Effective System Bandwidth ... overall system
 *                        bandwidth minus the wasted bandwidth (Sec. 2)",
 *                        at each instant
 *                          sum_j C_j - sum_{j serving I/O} (C_j - useful_j)
 *                        averaged over the time any I/O is in flight.
 *                        Waste (sec. 2, Figs. 5-6) is bandwidth of an OST
 *                        serving I/O that does not advance its jobs in
 *                        step: POFS's excess over a job's most contended
 *                        OST (Fig. 5's checkered boxes) and the gaps BSIP
 *                        leaves (sec. 3.3: BSIP "would have ... incurred
 *                        50% bandwidth waste on OST2").  An OST no job
 *                        does I/O on wastes nothing: no application asked
 *                        for it.  So a policy that finishes the same bytes
 *                        with less waste scores higher, which the useful
 *                        bandwidth above cannot show.
 *   throughput           jobs completed per hour
 *   frac_worse_than_pofs fraction of applications whose I/O time (summed
 *                        over appearances completed in both runs) is
 *                        worse than in a POFS run of the same scenario
 *                        (sim_run_compare); NaN until compared
 *   outstanding_node_hours  coupons still outstanding at the end, in
 *                        node-hours: worth x interval of bandwidth, at the
 *                        application's mean per-OST rate, times its nodes
 *   jain                 Jain's index of stand-alone/actual I/O time
 *
 * Limits: no metadata or network model; ranks of a job on one OST share
 * its allocation equally; a job never fails or is killed at its estimate. */
#ifndef SIM_RUN_H
#define SIM_RUN_H

#include <stdint.h>
#include <stdio.h>

#include "bench/sim/sim_scen.h"
#include "qos/gift.h"
#include "qos/policy.h"

typedef struct sim_job_result {
	size_t app;                 /* its application: sim_scen_group() */
	double submit, start, end;  /* start/end < 0: not reached */
	double io_time;             /* s in I/O phases (completed phases) */
	double io_alone;            /* s the same phases take alone */
	int done;
} sim_job_result;

typedef struct sim_metrics {
	double mean_io_time;
	double mean_run_time;
	double effective_bandwidth;         /* useful, see above */
	double effective_system_bandwidth;  /* GIFT sec. 4, see above */
	double throughput;
	double frac_worse_than_pofs;
	double outstanding_node_hours;
	double jain;
} sim_metrics;

typedef struct sim_run_result {
	sim_metrics m;
	size_t n_jobs;
	sim_job_result *jobs;       /* [n_jobs], in scenario order */
	size_t completed;
	uint64_t decisions;
	uint64_t overcommits;       /* decisions whose allocations exceeded an OST */
	double busy_time;           /* s with I/O in flight */
	double served_bandwidth;    /* mean served rate while busy */
	double waste_bandwidth;     /* mean waste while busy: capacity of the
				     * OSTs serving I/O minus useful */
	double mean_objective;      /* mean of the policy's qos_result.effective
				     * over decisions (NaN if it never sets it) */
	double max_outstanding_nh;  /* largest outstanding_node_hours after any
				     * decision (GIFT sec. 4: "at any time") */
	int has_gift;               /* the policy is qos_policy_gift: */
	qos_gift_stats gift;        /* its counters at the end of the run */
	qos_gift_gate_stats gift_gate;
	uint64_t pin_delayed;       /* pinned: jobs that started after their
				     * pinned time (their application still ran) */
	int pin_overcommit_nodes;   /* pinned: most nodes in use beyond the pool */
} sim_run_result;

typedef struct sim_run_opts {
	const qos_policy_ops *ops;
	const qos_param *params;
	size_t n_params;
	FILE *csv;                  /* time series rows, or NULL */
	const sim_job_result *pin;  /* [n_pin]: the reference run's jobs, whose
				     * start times this run replays (above);
				     * NULL: EASY backfilling */
	size_t n_pin;               /* must be the scenario's n_jobs */
} sim_run_opts;

/* Simulate sc under opts->ops.  Fills *out (free with
 * sim_run_result_free).  Returns 0; -EINVAL with a message in err if the
 * policy rejects its params or a decision fails, or opts->pin does not
 * match the scenario's jobs; -ENOMEM. */
int sim_run(const sim_scenario *sc, const sim_run_opts *opts, sim_run_result *out, char *err,
	    size_t errlen);
void sim_run_result_free(sim_run_result *r);
/* Fraction of applications worse in r than in ref (same scenario and
 * seed); NaN if no application completed in both. */
double sim_run_compare(const sim_scenario *sc, const sim_run_result *r,
		       const sim_run_result *ref);
/* The same, and *mean_loss (if not NULL) gets the mean relative I/O-time
 * loss of the applications that are worse (mine / theirs - 1; 0 if none,
 * NaN when the fraction is NaN): GIFT sec. 4's "average magnitude of I/O
 * time degradation" (about 1.2% in the paper). */
double sim_run_compare_loss(const sim_scenario *sc, const sim_run_result *r,
			    const sim_run_result *ref, double *mean_loss);

#endif
