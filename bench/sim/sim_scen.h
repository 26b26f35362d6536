/* sim_scen.h — pfs-sim scenarios: the cluster (OSTs, node pool) and the
 * workload (applications and their appearances), read from JSON and, when
 * the scenario has a "generator", synthesised the way GIFT sec. 4 describes
 * its simulation.
 *
 * Model.  An application has a node count, MPI ranks, the number of OSTs
 * its files land on, a stripe count, bytes each rank writes per I/O phase,
 * a compute interval and a number of I/O phases per run.  A run is
 * (compute, I/O phase) repeated `phases` times.  Each rank writes its own
 * file striped over stripe_count OSTs of the run's OST set (rank r, stripe
 * t -> set[(r * stripe + t) mod n_osts]).  Each appearance (a job) gets its
 * own OST set, as new files do from the MDS, and a small variation of I/O
 * size and compute time (GIFT Fig. 2(c): <5% std. dev.).
 *
 * Generator (all in the "generator" object; GIFT Table 1 and sec. 4):
 * stripe_count 0 (the default) stripes every rank's file over the run's
 * whole OST set, so all OSTs of a job carry equal bytes as GIFT assumes;
 * submissions follow a Gamma renewal process; each picks an application
 * with Zipf popularity (so applications repeat, Fig. 2(a)); the stand-alone
 * I/O phase length is drawn from Table 1's three classes (<1 min, 1-15 min,
 * >15 min, equally likely, log-uniform inside a class) and turned into
 * bytes at the OSTs' mean capacity; the compute interval likewise from
 * Table 1's I/O-interval classes (<5 min, 5-30 min, 30 min-3 h).  With
 * "io_size_gb" the bytes come instead from Table 1's output-size classes
 * (<100 GB, 100 GB-1 TB, >1 TB; we read them as the output of one run,
 * split evenly over its phases), and with "io_fraction" [lo, hi] the
 * compute interval is set so that I/O is a fraction f ~ U(lo, hi) of the
 * stand-alone run time (sec. 1: 15-40%).  Each application keeps its node
 * count, OST count, stripe count and phases across all its appearances
 * (Observation 1).  Units: capacity in MB/s, sizes in MB, times in seconds.
 *
 * Limits: the workload is synthetic (Table 1 gives classes, not
 * distributions; we chose log-uniform inside each and equal class
 * weights); node counts, OST counts and phases per run are log-uniform or
 * uniform in the configured ranges, not fitted to any trace. */
#ifndef SIM_SCEN_H
#define SIM_SCEN_H

#include <stddef.h>
#include <stdint.h>

#include "qos/policy.h"

typedef struct sim_app {
	char id[QOS_ID_MAX];
	int nodes;
	int ranks;
	int n_osts;            /* OSTs per run */
	int stripe;            /* OSTs per rank's file */
	int phases;            /* I/O phases per run */
	double io_per_rank;    /* MB each rank writes per phase */
	double compute_s;      /* compute interval before each phase */
	double priority;
	int throttle_friendly;
} sim_app;

typedef struct sim_jobspec {
	size_t app;            /* index into apps */
	double submit;         /* seconds */
	int *osts;             /* [apps[app].n_osts] OST indices, distinct */
	double io_scale;       /* multiplies io_per_rank */
	double compute_scale;  /* multiplies compute_s */
} sim_jobspec;

typedef struct sim_scenario {
	char name[64];
	uint64_t seed;
	double duration;           /* simulated seconds */
	double decision_interval;  /* seconds between policy decisions */
	double csv_interval;       /* seconds per CSV row */
	double estimate_factor;    /* user run-time estimate / stand-alone run time */
	int work_conserving;       /* share idle OST capacity (sim_fluid.h) */
	int lockstep;              /* ranks progress in step (sim_fluid.h) */
	int newcomer_wait;         /* "newcomers": "wait": a phase that starts
				    * between two decisions gets nothing until
				    * the next one; "share" (default): it gets
				    * an equal share of each of its OSTs at once
				    * (sim_run.h) */
	int nodes;                 /* node pool */
	size_t n_osts;
	double *capacity;          /* [n_osts] MB/s */
	size_t n_apps;
	sim_app *apps;
	size_t n_jobs;
	sim_jobspec *jobs;         /* sorted by submit time */
	size_t *app_group;         /* [n_apps] or NULL: the first app of each
				    * app's application (a replayed trace,
				    * sim_trace.h, makes one sim_app per job
				    * and groups a named application's jobs:
				    * one id, one at a time, one set of
				    * metrics); NULL: every app is its own */
} sim_scenario;

/* Parse a scenario from JSON text.  seed_override >= 0 replaces the file's
 * seed.  Returns 0, -EINVAL with a message naming the field in err, or
 * -ENOMEM.  Free with sim_scen_free (also safe on a zeroed struct). */
int sim_scen_parse(const char *text, size_t len, long long seed_override, sim_scenario *sc,
		   char *err, size_t errlen);
/* Read and parse a file; -errno if it cannot be read. */
int sim_scen_load(const char *path, long long seed_override, sim_scenario *sc, char *err,
		  size_t errlen);
void sim_scen_free(sim_scenario *sc);
/* The cluster only (OSTs, nodes, times, sharing model) of a scenario file,
 * for a replayed trace: its apps, jobs and generator are not read (and
 * may be absent).  Same returns as sim_scen_load. */
int sim_scen_load_cluster(const char *path, long long seed_override, sim_scenario *sc,
			  char *err, size_t errlen);
/* The application of app a: app_group[a], or a without groups. */
size_t sim_scen_group(const sim_scenario *sc, size_t a);

/* Draw n Gamma(shape, scale) inter-arrival gaps with seed into gaps[]:
 * the arrival process of the generator, exposed for its test. */
void sim_scen_gamma_gaps(uint64_t seed, double shape, double scale, double *gaps, size_t n);

/* Bytes (MB) a job writes on each of its OSTs per phase, [n_osts of its
 * app], in the order of its osts[]. */
void sim_scen_phase_bytes(const sim_scenario *sc, const sim_jobspec *j, double *bytes);

#endif
