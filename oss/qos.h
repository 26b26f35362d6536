/* qos.h — the OSS QoS engine: what sets the TBF rules of each local OST
 * (and the blkio cgroup limits), and what the OSS reports about QoS.
 *
 * Per OST one mode (pfs_qos_ost_info.mode):
 *   NONE     no policy rules: admin rules (nrs_admin.h) only; jobs without
 *            a rule share the unlimited fallback queue (FIFO);
 *   RATES    the MDS's per-(job, OST) byte rates (PFS_OP_OSS_QOS_SET): one
 *            TBF byte-rate rule `mds.<job>` per job, changed in place when
 *            it exists (queued requests are never dropped), stopped when a
 *            newer set no longer has the job;
 *   ADAPTBF  AdapTBF in the OSS (adapt.h): every period Δt (default 100 ms,
 *            adaptbf_period; the MDS may send another) the per-job RPC
 *            counts of the OST's loop clock and the node counts of the last
 *            QOS_SET feed qos_adaptbf; each active job gets an RPC-rate
 *            rule `adaptbf.<job>` = α_x / Δt.
 * Policy rules rank after every admin rule (OSS_QOS_RANK_POLICY), so an
 * admin rule that matches a job wins.  Job ids a TBF pattern cannot express
 * exactly (empty, ending in '*', containing braces or blanks) get no rule:
 * they stay in the fallback queue.
 *
 * Enforcement (enforce): TBF rules, blkio cgroup limits (oss_blkio_set per
 * job and OST: RATES the MDS's rate, ADAPTBF α_x/Δt × 1 MiB; the I/O thread
 * enters the job's cgroup before executing), or both.  With blkio alone no
 * TBF rate rules are installed.
 *
 * Capacity of an OST (what policies see, pfs_qos_ost_info.capacity): the
 * configured ost_bandwidth when set, else a measured estimate: the highest
 * bytes/s served over any 1 s window since start.  The estimate never goes
 * down, so rules derived from it cannot ratchet it down (served ≤ rules ≤
 * estimate would otherwise shrink it period after period); it is 0
 * ("unknown") until traffic was seen.  AdapTBF's T_i in RPCs/s: configured
 * bandwidth ÷ 1 MiB (and at most ost_iops when that is set), else ost_iops,
 * else the highest read+write RPCs/s served over a 1 s window.  While T_i
 * is unknown an OST in ADAPTBF installs no rules (it stays unlimited); with
 * a measured T_i the OST's TBF runs work-conserving so the estimate can
 * still grow to what the device really does.
 *
 * Loop: one thread wakes every min(Δt, 1 s): capacity windows, the AdapTBF
 * period of OSTs in ADAPTBF, and once a second scheduler housekeeping (idle
 * jobs dropped after job_idle_s, RCC ping sweep).  Tests drive it with
 * oss_qos_tick and synthetic times instead.
 *
 * Locking: one mutex guards the engine; it is taken by the control port,
 * the loop and metrics scrapes, never by the data path.  Lock order: the
 * engine's mutex, then a scheduler's lock (inside sched/nrs_tbf calls). */
#ifndef OSS_QOS_H
#define OSS_QOS_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/metrics.h"
#include "common/qosmsg.h"
#include "oss/blkio.h"
#include "oss/ostq.h"

#define OSS_ENFORCE_TBF 0x1u
#define OSS_ENFORCE_BLKIO 0x2u
#define OSS_ADAPTBF_PERIOD_DEFAULT 0.1  /* s, the paper's Δt */
#define OSS_ADAPTBF_PERIOD_MIN 0.001
#define OSS_ADAPTBF_PERIOD_MAX 60.0
#define OSS_QOS_RANK_POLICY (1 << 20)   /* admin rules must rank below this */
#define OSS_QOS_TOKEN_BYTES 1048576.0   /* one AdapTBF token (one RPC) in bytes */
#define OSS_QOS_NODES_MAX 1e7           /* n_x above this is refused as absurd */
#define OSS_QOS_JOB_IDLE_DEFAULT 60.0   /* s */

typedef struct oss_qos oss_qos;

typedef struct oss_qos_opts {
	unsigned enforce;          /* OSS_ENFORCE_* bits; 0 = TBF */
	oss_blkio *blkio;          /* borrowed (must outlive q); needed for BLKIO */
	double adaptbf_period;     /* s; 0 = OSS_ADAPTBF_PERIOD_DEFAULT */
	const double *cap_bps;     /* [n] configured bandwidth, bytes/s (0 = measure);
	                              NULL = measure all */
	const double *cap_iops;    /* [n] configured read+write RPCs/s (0 = none) */
	double job_idle_s;         /* 0 = OSS_QOS_JOB_IDLE_DEFAULT */
	int no_thread;             /* 1: no loop thread (tests call oss_qos_tick) */
} oss_qos_opts;

/* Create the engine over the OSS's n queue heads (borrowed; they must
 * outlive q) and start its loop.  0, or a negative errno with a reason in
 * err (-EINVAL: BLKIO without blkio, a bad period or capacity). */
int oss_qos_create(const oss_qos_opts *o, oss_ostq *const *osts, size_t n, oss_qos **out,
		   char *err, size_t errlen);
/* Stop the loop and free.  The rules stay in the schedulers (which the
 * server destroys right after).  NULL is a no-op. */
void oss_qos_destroy(oss_qos *q);

/* One loop step at monotonic time now (seconds). */
void oss_qos_tick(oss_qos *q, double now);

/* Apply an MDS allocation set (PFS_OP_OSS_QOS_SET).  An older generation
 * than the last applied is ignored (0).  0; -EINVAL with a reason in err
 * (absurd rate or node count, duplicate (job, OST) row, bad period) and
 * nothing changed; -EOPNOTSUPP (the schedulers do not run TBF and TBF
 * enforcement is asked for); or the error of a rule operation (the rows
 * before it are applied). */
int oss_qos_set(oss_qos *q, const pfs_qos_alloc_set *set, char *err, size_t errlen);

/* The PFS_OP_OSS_QOS_STATS reply payload for mode PFS_QOS_STATS_* into w
 * (rows truncated to fit one frame).  0, -EINVAL (mode), -ENOMEM. */
int oss_qos_stats(oss_qos *q, int mode, pfs_wbuf *w);

/* pfs_metrics_fill callback (ctx = the oss_qos). */
int oss_qos_metrics(void *ctx, pfs_metrics_buf *b);

/* Capacity of slot in bytes/s (0 = unknown), its T_i in RPCs/s, its mode. */
double oss_qos_capacity(oss_qos *q, size_t slot);
double oss_qos_tokens_rate(oss_qos *q, size_t slot);
int oss_qos_mode(oss_qos *q, size_t slot);
/* The enforcement in force (BLKIO only if a blkio handle was given). */
unsigned oss_qos_enforce(const oss_qos *q);

#endif
