/* sim_sched.h — the node-pool scheduler of pfs-sim: FCFS with EASY
 * backfilling (Lifka 1995; Srinivasan et al. 2002, GIFT's ref. [65]).
 *
 * One pure call decides which waiting jobs start now.  Jobs start from the
 * head of the queue, in order, while they fit.  When the head does not fit,
 * it gets a reservation at the "shadow time": the earliest moment enough
 * nodes are free, assuming every running job ends at its estimated end.
 * A later job may then jump ahead (backfill) if it fits in the free nodes
 * now and either ends (by its estimate) before the shadow time or uses only
 * the "extra" nodes the head will not need at the shadow time.  Only the
 * head holds a reservation (that is what makes it EASY, not conservative).
 *
 * Limits: estimates are what the caller says; a running job past its
 * estimate is assumed to end now (it cannot end in the past), so the
 * reservation may slip, as with real user estimates.  A job wider than the
 * whole pool never starts: the caller must reject it up front. */
#ifndef SIM_SCHED_H
#define SIM_SCHED_H

#include <stddef.h>

typedef struct sim_sched_running {
	int nodes;        /* nodes held */
	double est_end;   /* estimated end time (s) */
} sim_sched_running;

typedef struct sim_sched_waiting {
	int nodes;        /* nodes requested */
	double estimate;  /* estimated run time (s) */
} sim_sched_waiting;

/* Which of the waiting jobs (in FCFS order, index 0 = oldest) start at
 * `now` given `free_nodes` idle nodes and the running jobs.  Writes the
 * indices of the jobs to start, ascending, to start[] (caller-allocated,
 * n_wait entries) and their count to *n_start.
 * Returns 0, -EINVAL on bad arguments, -ENOMEM. */
int sim_sched_easy(double now, int free_nodes, const sim_sched_running *run, size_t n_run,
		   const sim_sched_waiting *wait, size_t n_wait, size_t *start, size_t *n_start);

#endif
