/* admin_stats.h — pfsadmin jobstats: I/O per job and OST from every OSS and
 * MDS operations per job, like Lustre's obdfilter.*.job_stats and
 * mdt.*.job_stats:
 *
 *   jobstats [--job ID] [--watch SECS [--count N]]
 *
 * A snapshot asks the MDS (PFS_OP_MDS_JOBSTATS: requests per opcode and job)
 * and every OSS at once (PFS_OP_OSS_QOS_STATS, mode TOTAL: cumulative
 * counters per job and OST since the OSS started).  A server that does not
 * answer (an OSS within a->oss_timeout_ms), answers badly, or does not know
 * the request is listed as such and its rows are missing; that is not an
 * error.  Only when no server answered does the command fail (the MDS's
 * error), and the OST list must come from the MDS first.
 *
 * Without --watch one report covers the time since each server started:
 * rates are bytes over the OSS's period_s; MDS operation rates are unknown
 * (the MDS reports no start time).  With --watch, a snapshot is taken every
 * SECS and each report covers the interval between the last two: counters
 * are the interval's increase and rates divide by the time between the two
 * snapshots of that server.  An OSS that restarted in between (its period is
 * shorter than the interval), or that did not answer the time before, is
 * reported since its start for that report.  --count bounds the number of
 * reports (default: until interrupted); output is flushed after each.
 *
 * --job keeps one job's rows (the MDS filters its reply; OSS rows are
 * filtered here).  A non-root caller gets from the MDS only its own jobs.
 *
 * Tables: servers (the MDS, then each OSS: address, snapshot time, window,
 * status), then per job and OST: read/write/other RPCs, read/write bytes,
 * read/write rates (MB/s), average queue wait, time throttled, requests
 * queued now, TBF rate in force; then per job and MDS operation: count and
 * rate.  The first line gives the MDS's snapshot time (else the latest
 * OSS's).
 *
 * JSON (one document per report; with --watch one compact line each):
 *   {"snapshot_ns" (the MDS's, else the latest OSS's),
 *    "window": "since_start" | "interval",
 *    "mds_window_s" (null since start or when a snapshot is missing),
 *    "mds": {"address", "status", then "errno", "error" when not ok, else
 *            "snapshot_ns", "window_s"},
 *    "oss": [{"oss", "address", "status", ... as for "mds"}],
 *    "jobs": [{"job",
 *              "osts": [{"ost", "oss", "read_rpcs", "write_rpcs", "other_rpcs",
 *                        "read_bytes", "write_bytes", "read_bytes_per_s",
 *                        "write_bytes_per_s", "busy_rpcs", "wait_us",
 *                        "avg_wait_us" (null: no RPC), "throttled_us",
 *                        "queued", "queued_bytes",
 *                        "tbf_rate_bytes_per_s" (null: no rule), "window_s"}],
 *              "mds_ops": [{"op" (name), "opcode", "count",
 *                           "per_s" (null since start)}]}]} */
#ifndef CLI_ADMIN_STATS_H
#define CLI_ADMIN_STATS_H

#include "client/admin_args.h"
#include "client/admin_cmd.h"

/* Uses args->job, ->watch_s, ->watch_count.  0, or the MDS's error (OST
 * list, or JOBSTATS when no OSS answered either; with --watch possibly
 * after earlier reports). */
int cli_admin_jobstats(cli_admin *a, const cli_admin_args *args);

#endif
