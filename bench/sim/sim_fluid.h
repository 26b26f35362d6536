/* sim_fluid.h — the fluid I/O model of pfs-sim: how each OST's bandwidth is
 * shared between the jobs doing I/O on it, between two events.
 *
 * An I/O phase of a job is a set of streams, one per OST the job writes in
 * that phase; a stream carries the bytes all of the job's ranks mapped to
 * that OST write in the phase (ranks on one OST share the job's allocation
 * there equally, so they all finish together and one stream stands for
 * them).  The phase ends when its last stream ends, i.e. at its slowest
 * rank: GIFT's synchronous I/O progress.
 *
 * Progress: with SIM_FLUID_LOCKSTEP (the default of scenarios) a job's
 * ranks advance in step, as in collective I/O rounds where no rank starts
 * its next request before the slowest has finished the current one: every
 * stream of the job is served at p · remaining, p = min over its streams of
 * allocation/remaining, and allocation beyond that on a less contended OST
 * is wasted (GIFT sec. 2, Fig. 5's checkered boxes).  Without it
 * ("independent"), each stream uses its whole allocation, finishes early on
 * a quiet OST and only the phase's end waits for the slowest rank.
 *
 * Rates: a stream is served at most the allocation the policy gave the job
 * on that OST (a cap, as GIFT enforces with blkio cgroups).  If the allocations
 * on an OST add up to more than its capacity they are scaled down
 * proportionally (a policy should never do that; the engine counts it).
 * Non-work-conserving by default: allocation a job does not use (its stream
 * ended, it has none yet, or lockstep holds it back) stays idle.  With
 * SIM_FLUID_WORK_CONSERVING, each OST's unallocated capacity is split
 * equally among its unfinished streams, in one pass before the lockstep
 * cut (no iteration to max-min).
 *
 * Effective bandwidth (GIFT sec. 2, Fig. 5): only bandwidth that advances
 * all of a job's streams in step counts.  With p = min over unfinished
 * streams of rate/total (fraction of the phase done per second on the
 * slowest stream), the job's effective bandwidth is p · Σ total over its
 * unfinished streams; the rest of what it is served is waste.  For equal
 * bytes per OST that is |S_i| · min_j b_ij, the paper's definition. */
#ifndef SIM_FLUID_H
#define SIM_FLUID_H

#include <stddef.h>

typedef struct sim_stream {
	int ost;           /* OST index */
	double total;      /* bytes of this phase on this OST */
	double remaining;  /* bytes still to write; 0 = finished */
	double alloc;      /* policy allocation, capacity units/s */
	double rate;       /* rate served now (set by sim_fluid_rates) */
	double moved;      /* bytes served since the caller last zeroed it */
} sim_stream;

typedef struct sim_fluid_job {
	sim_stream *s;     /* borrowed; n streams */
	size_t n;
} sim_fluid_job;

enum {
	SIM_FLUID_WORK_CONSERVING = 1,
	SIM_FLUID_LOCKSTEP = 2,
};

/* Set every unfinished stream's rate from its allocation and the OST
 * capacities (see above); flags: SIM_FLUID_* bits.  scratch:
 * caller-provided, 2 * n_osts doubles.
 * Returns the number of OSTs whose allocations exceeded capacity (and were
 * scaled), or -EINVAL if a stream names an OST out of range. */
int sim_fluid_rates(sim_fluid_job *jobs, size_t n_jobs, const double *capacity, size_t n_osts,
		    int flags, double *scratch);
/* Time until the first unfinished stream with a positive rate ends;
 * INFINITY if none will. */
double sim_fluid_next_finish(const sim_fluid_job *jobs, size_t n_jobs);
/* Serve every stream at its rate for dt seconds. */
void sim_fluid_advance(sim_fluid_job *jobs, size_t n_jobs, double dt);
/* 1 if every stream of the job has finished. */
int sim_fluid_done(const sim_fluid_job *job);
/* The job's effective and total served bandwidth at the current rates. */
void sim_fluid_bandwidth(const sim_fluid_job *job, double *effective, double *served);
/* Capacity of the OSTs serving I/O now: sum of capacity[o] over the OSTs
 * with at least one unfinished stream (whether or not it has a rate yet).
 * mark: caller's scratch of n_osts bytes.  The bandwidth of these OSTs that
 * does not advance a job in step is GIFT sec. 2's waste (sim_run.h). */
double sim_fluid_busy_capacity(const sim_fluid_job *jobs, size_t n_jobs, const double *capacity,
			       size_t n_osts, unsigned char *mark);

#endif
