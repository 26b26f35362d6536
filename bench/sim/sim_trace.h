/* sim_trace.h — job-trace replay for pfs-sim: a site's own job history
 * (arrivals, nodes, OST sets, I/O phases) as the workload of `pfs-sim run`
 * and `pfs-sim report` (--trace FILE), on the cluster of a scenario file.
 *
 * Format (the contract, with an example, is bench/sim/README.md, "Trace
 * replay"): CSV, one header line naming the columns (any order), then one
 * job per line; lines starting with '#' and empty lines are skipped.
 *   required  job, submit, nodes, osts, phases, io_mb, compute_s
 *   optional  app, ranks, stripe_count, priority, throttle_friendly
 * osts is an explicit OST list "3;7;12", or a rule: "random:N" (N distinct
 * OSTs, seeded by the scenario's seed) or "rr:N" (N OSTs round-robin from
 * where the previous rr job stopped, as Lustre's default allocator).  A job
 * is `phases` x (compute_s of compute, then an I/O phase writing io_mb /
 * phases MB, all ranks together).
 *
 * Each trace job becomes its own sim_app (so jobs of one application may
 * differ in nodes, OSTs and volume); jobs naming the same `app` form one
 * application through sim_scenario.app_group: one qos_job id (GIFT's
 * coupons follow it), one appearance at a time, one entry in per-application
 * metrics.  An empty or absent app makes the job its own application.
 *
 * The parser is strict: every error names its line, and the whole trace is
 * refused (unknown or missing columns, wrong field counts, numbers that are
 * not plain decimal or out of range, duplicate job ids, submit times that go
 * back, OSTs outside the cluster, a last line without newline (a truncated
 * file), NUL bytes, lines over SIM_TRACE_MAX_LINE bytes, more than
 * SIM_TRACE_MAX_JOBS jobs). */
#ifndef SIM_TRACE_H
#define SIM_TRACE_H

#include <stddef.h>

#include "bench/sim/sim_scen.h"

#define SIM_TRACE_MAX_JOBS 1000000
#define SIM_TRACE_MAX_LINE 4096

/* Add the jobs of trace text[len] to sc, which must hold a cluster and no
 * workload (sim_scen_load_cluster).  Returns 0; -EINVAL with "line N: ..."
 * in err; -ENOMEM.  On error sc is freed (sim_scen_free). */
int sim_trace_parse(const char *text, size_t len, sim_scenario *sc, char *err, size_t errlen);
/* The same from a file; -errno if it cannot be read (message in err). */
int sim_trace_load(const char *path, sim_scenario *sc, char *err, size_t errlen);
/* What the CLIs load: scen_path alone (trace_path NULL: sim_scen_load), or
 * the cluster of scen_path with the jobs of trace_path (errors from the
 * trace are prefixed with its path).  Same returns. */
int sim_trace_scenario(const char *scen_path, const char *trace_path, long long seed_override,
		       sim_scenario *sc, char *err, size_t errlen);

#endif
