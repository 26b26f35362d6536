/* sim_report.h — `pfs-sim report`: what GIFT's evaluation plots, computed
 * from sim_run results (sim_run.h) of a policy and of the POFS reference on
 * the same jobs.
 *
 *  - per-application I/O-time improvement over POFS (Fig. 9(a)): for each
 *    application, its I/O time summed over the appearances completed in
 *    both runs (as sim_run_compare), improvement = 1 - mine / theirs
 *    (+0.2 = 20% faster); sorted ascending, with quantiles;
 *  - the applications worse than POFS (Fig. 9(c) and the "average
 *    magnitude of I/O time degradation" of sec. 4): the same test as
 *    sim_run_compare, loss = mine / theirs - 1, their mean and maximum;
 *  - effective bandwidth per system state: the run's CSV windows
 *    (sim_run_opts.csv, one row per csv_interval) are put in states by the
 *    reference run's load in the same window, i.e. the number of
 *    applications in an I/O phase (io_jobs, the contention level of
 *    Fig. 4); idle windows (io_jobs 0) form their own state, the busy ones
 *    are cut at the quantiles of their io_jobs into at most n buckets
 *    (equal cuts merge); the gain of a state is
 *    sum(effective) / sum(reference effective) - 1 over its windows.
 *
 * The CLI (sim_report_cli.c) adds sweeps of a policy parameter (Fig. 11)
 * and contention levels (Fig. 14: every job's I/O volume scaled).  No
 * globals; every function here is pure apart from allocation. */
#ifndef SIM_REPORT_H
#define SIM_REPORT_H

#include <stddef.h>

#include <jansson.h>

#include "bench/sim/sim_run.h"
#include "bench/sim/sim_scen.h"

/* Per-application comparison of r against ref (same scenario). */
typedef struct sim_report_apps {
	size_t n;            /* applications completed in both runs */
	double *impr;        /* [n] improvement 1 - mine/theirs, ascending */
	size_t worse;        /* applications worse than ref */
	double mean_loss;    /* mean of mine/theirs - 1 over them; 0 if none */
	double max_loss;     /* their maximum; 0 if none */
} sim_report_apps;

/* Fill *out (free with sim_report_apps_free).  0, -EINVAL if the runs do
 * not have the same jobs, -ENOMEM. */
int sim_report_apps_compare(const sim_scenario *sc, const sim_run_result *r,
			    const sim_run_result *ref, sim_report_apps *out);
void sim_report_apps_free(sim_report_apps *a);

/* Quantile q in [0, 1] of sorted[n] (ascending), linear between closest
 * ranks (position q * (n - 1)); NaN if n is 0. */
double sim_report_quantile(const double *sorted, size_t n, double q);

/* One run's time series, parsed from the CSV sim_run writes. */
typedef struct sim_report_series {
	size_t n;
	double *t;           /* end of each window, s */
	double *eff;         /* mean effective bandwidth in the window */
	double *io_jobs;     /* applications in an I/O phase at its end */
} sim_report_series;

/* Parse text[len] (header line, then rows "time_s,effective,served,
 * capacity,io_jobs,..."): 0, -EINVAL on a malformed row, -ENOMEM. */
int sim_report_series_parse(const char *text, size_t len, sim_report_series *s);
void sim_report_series_free(sim_report_series *s);

#define SIM_REPORT_MAX_STATES 16

typedef struct sim_report_state {
	double lo, hi;       /* reference io_jobs range, inclusive */
	size_t windows;
	double ref_eff;      /* mean reference effective bandwidth */
	double eff;          /* mean effective bandwidth of the policy */
	double gain;         /* eff / ref_eff - 1; NaN if ref_eff is 0 */
} sim_report_state;

/* Cut the reference's busy windows into at most n_buckets states (see
 * the top of this file) and compare s against ref window by window (the
 * first min(ref->n, s->n) windows).  states[0] is the idle state (lo = hi
 * = 0, possibly with 0 windows); returns the number of states written
 * (<= 1 + n_buckets, <= SIM_REPORT_MAX_STATES), -EINVAL if n_buckets is 0
 * or too large, -ENOMEM. */
int sim_report_states(const sim_report_series *ref, const sim_report_series *s,
		      size_t n_buckets, sim_report_state *states);

/* JSON: {"apps", "sorted": [...], "quantiles": {"p0", "p10", "p25", "p50",
 * "p75", "p90", "p100"}, "frac_improved_20pct"} and {"apps", "worse",
 * "frac", "mean_loss", "max_loss"}; states as an array of {"state", "lo",
 * "hi", "windows", "ref_effective", "effective", "gain"}.  NULL on
 * allocation failure. */
json_t *sim_report_cdf_json(const sim_report_apps *a);
json_t *sim_report_worse_json(const sim_report_apps *a);
json_t *sim_report_states_json(const sim_report_state *st, size_t n);

/* `pfs-sim report ...` (sim_report_cli.c); returns the exit status. */
int sim_report_cmd(int argc, char **argv);

#endif
