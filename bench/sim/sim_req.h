/* sim_req.h — `pfs-sim req`: a request-level simulation of one or more
 * OSTs, in which the OSS-side mechanisms of qos/ run per request at their
 * native periods: NRS TBF (qos/tbf.h) queues and tokens, AdapTBF lending
 * every 100 ms (qos/adaptbf.h), RCC credits (qos/rcc.h) and ASCAR client
 * rules (qos/ascar.h).
 *
 * The model (bench/sim/README.md, "pfs-sim req"):
 *  - time is integer microseconds on a discrete-event clock
 *    (sim_req_evq.h); a run is a pure function of (scenario, control, seed);
 *  - an OST serves `threads` requests at once, each in threads/rate seconds
 *    times U[1-jitter, 1+jitter], so it serves `rate` RPCs/s when busy;
 *  - a process (client stream) sends RPCs of rpc_mb MB to one OST, keeps at
 *    most `inflight` in flight (less when RCC credits or the ASCAR window
 *    say so), waits think_ms after each reply before reusing the slot, and
 *    may issue in bursts of `burst` requests separated by gap_ms;
 *  - requests travel net_us each way; an OST whose queue holds queue_max
 *    requests drops new ones (the client sees the drop after net_us and
 *    sends again);
 *  - the control decides who is served: "nobw" (no TBF rule: Lustre's FCFS
 *    fallback queue), "static" (one TBF rule per job at rate × its priority
 *    share, fixed), "adaptbf" (qos_adaptbf_ost every period_ms sets each
 *    active job's rule to tokens/Δt; a job with nothing arrived or queued in
 *    the period has no rule, so its first requests go to the fallback).
 *    AdapTBF's d_x is what the job asked for: requests served in the period
 *    plus those still queued at its end (issue 9: demand, not usage).
 *
 * Ownership: a scenario is parsed into a sim_req_scen the caller frees; a
 * run fills a sim_req_result the caller frees.  No globals. */
#ifndef SIM_REQ_H
#define SIM_REQ_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "qos/rcc.h"

enum sim_req_control {
	SIM_REQ_NOBW = 0,
	SIM_REQ_STATIC = 1,
	SIM_REQ_ADAPTBF = 2,
	SIM_REQ_NCONTROLS = 3,
};

#define SIM_REQ_ID_MAX 64

typedef struct sim_req_ost {
	double rate;     /* RPCs/s when busy, > 0 */
	int threads;     /* requests in service at once, >= 1 */
	long queue_max;  /* queued requests before drops; 0 = unlimited */
} sim_req_ost;

typedef struct sim_req_job {
	char id[SIM_REQ_ID_MAX];
	double priority; /* AdapTBF's n_x and the static share, > 0 */
} sim_req_job;

typedef struct sim_req_proc {
	int job;          /* index into jobs */
	int ost;          /* index into osts */
	long rpcs;        /* RPCs to complete; 0 = until the end of the run */
	int inflight;     /* max_rpcs_in_flight, >= 1 */
	int64_t think_us; /* after a reply, before the slot is used again */
	long burst;       /* requests per burst; 0 = continuous */
	int64_t gap_us;   /* pause after a burst has been answered */
	int64_t start_us; /* first request */
} sim_req_proc;

typedef struct sim_req_scen {
	char name[SIM_REQ_ID_MAX];
	uint64_t seed;
	int64_t duration_us, sample_us, period_us, net_us;
	double rpc_mb, jitter;
	int work_conserving;     /* TBF work-conserving mode */
	unsigned controls;       /* bit per enum sim_req_control to run */
	int rcc;                 /* RCC credits on */
	qos_rcc_params rccp;
	int ascar;               /* ASCAR controller per process */
	size_t n_osts, n_jobs, n_procs;
	sim_req_ost *osts;
	sim_req_job *jobs;
	sim_req_proc *procs;
} sim_req_scen;

/* Parse a scenario; on error returns -EINVAL with the field named in err
 * (e.g. "jobs[1].procs[0].ost: index 3 out of range"), or -ENOMEM. */
int sim_req_scen_parse(json_t *root, sim_req_scen *sc, char *err, size_t len);
int sim_req_scen_load(const char *path, sim_req_scen *sc, char *err, size_t len);
void sim_req_scen_free(sim_req_scen *sc);

const char *sim_req_control_name(int control);
/* -1 if unknown */
int sim_req_control_parse(const char *name);

typedef struct sim_req_jobres {
	long issued, served, dropped;
	double mb;          /* MB served (at the OST) */
	double start_s;     /* first request sent (-1: none) */
	double finish_s;    /* last reply received (-1: none) */
	double lat_sum_s;   /* sum of send-to-reply times of served requests */
	long replies;       /* replies of served requests */
	double record;      /* AdapTBF record summed over OSTs at the end */
} sim_req_jobres;

typedef struct sim_req_result {
	int control;
	size_t n_jobs, n_samples;
	double sample_s;
	sim_req_jobres *jobs;
	double *tput;    /* n_samples x n_jobs: MB/s served in each sample window */
	double *demand;  /* n_samples x n_jobs: RPCs arrived at the OSTs in it */
	double *record;  /* n_samples x n_jobs: AdapTBF records at its end (0 otherwise) */
	/* conservation at the end: issued = served + dropped + queued +
	 * in_service + in_transit (sent, not yet at the OST) */
	long issued, served, dropped, queued, in_service, in_transit;
	double end_s;    /* simulated time at the end */
	double total_mb;
	double busy_s;   /* OST-seconds with a request in service */
	uint64_t events;
	long adapt_periods;
} sim_req_result;

/* Simulate sc under control with seed.  Returns 0, -EINVAL (bad control)
 * or -ENOMEM, or a qos/ error (negative errno). */
int sim_req_run(const sim_req_scen *sc, int control, uint64_t seed, sim_req_result *out);
void sim_req_result_free(sim_req_result *r);

/* The result as a JSON object (new reference; NULL on -ENOMEM);
 * with_series adds the per-sample time series. */
json_t *sim_req_result_json(const sim_req_scen *sc, const sim_req_result *r, int with_series);

/* `pfs-sim req ...` (argv[1] is "req"): exit status 0, 1 or 2. */
int sim_req_cmd(int argc, char **argv);

#endif
