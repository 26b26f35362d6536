/* qosctl.h — the MDS QoS control loop (DESIGN.md "The QoS control loop",
 * cluster level; gift.txt sec. 3.5): collect per-(job, OST) statistics from
 * every OSS, decide with the configured policy, push per-(job, OST) rates.
 *
 * One decision (mds_qosctl_step, every `interval` seconds on the loop's
 * thread):
 *  1. The OSSes are the distinct OSS names of the OST registry (mds/ns.h),
 *     each with its control address and OSTs.
 *  2. Every OSS is asked at once for PFS_OP_OSS_QOS_STATS, mode PERIOD,
 *     through ops.collect (mds/qosnet.c: concurrent RPCs, 1 s timeout).
 *     Job ids in the answers become automatic registry entries.
 *  3. Quorum: answered * 100 >= quorum * total, where total counts the OSSes
 *     that are up by heartbeat plus any that answered while marked down (a
 *     decommissioned OSS stops counting once its heartbeats stop).  Without
 *     quorum the interval is skipped (counted); nobody is pushed anything.
 *  4. The instance (qos/policy.h): OSTs = those of the answering OSSes with
 *     a known capacity (pfs_qos_ost_info.capacity > 0; an OST of unknown
 *     capacity gets no MDS rules); jobs = every job id in their statistics,
 *     with nodes, priority and throttle_friendly from the registry (unknown
 *     jobs: 1 node, priority 1, throttle-friendly); active = arrivals or
 *     queued requests on that OST in the period; usage = served bytes/s;
 *     demand = arrived bytes/s.  Rates are bytes/s throughout.  period =
 *     interval; now = policy clock (below).
 *  5. The policy decides; the result becomes one pfs_qos_alloc_set per
 *     answering OSS: MODE_RATES rows for every active (job, OST) pair of its
 *     OSTs, capped by a registered job's limit; generation = the decision's
 *     generation number.  Policy "adaptbf" decides nothing here: each OSS
 *     gets MODE_ADAPTBF with a row {job, PFS_QOS_OST_ALL, nodes} for every
 *     job in its statistics and every running registered job.  Policy
 *     "none" pushes MODE_NONE once to each OSS (again after a restart, and
 *     when policy none is chosen anew) and needs no quorum.
 *  6. The decision record and, under GIFT, the whole GIFT state (coupons,
 *     windows, regret ledger) are written in one LMDB write transaction
 *     (mds/qos_store.h); then the sets are pushed through ops.push.
 * An OSS that did not answer is not pushed: it keeps its last rates and
 * gets fresh ones with the first decision after it answers again.
 *
 * Time: the policy clock is seconds since the epoch stored with the first
 * decision record (CLOCK_REALTIME then), never below its value at the last
 * decision, so GIFT's regret periods go on across restarts and a clock
 * stepped backwards does not run it backwards.
 *
 * Policy state: GIFT's is persisted (above) and kept while another policy
 * runs, so going back to GIFT continues the same ledger; the other
 * policies' state (TMF's appearance counts, RND's stream) starts afresh at
 * each start or change.  A persisted policy choice (made by POLICY_SET)
 * wins over the configuration at start; until the first POLICY_SET the
 * configuration decides at every start.
 *
 * Logging: a decision is logged at info level when something changed (the
 * policy, the quorum, or any OSS's allocation by more than 1%), else at
 * debug level; so is a skipped interval.
 *
 * Thread-safety: one mutex guards the policy, the counters and the last
 * period's figures; the loop drops it while collecting and pushing, so
 * admin calls never wait on the network.  mds_qosctl_step must not run on
 * two threads at once (the loop's thread, or a test's).  GLPK is driven by
 * the stepping thread only. */
#ifndef MDS_QOSCTL_H
#define MDS_QOSCTL_H

#include <stddef.h>
#include <stdint.h>

#include "common/qosmsg.h"
#include "mds/jobs.h"
#include "mds/ns.h"
#include "qos/policy.h"

typedef struct mds_qosctl mds_qosctl;

/* One OSS as the registry knows it (borrowed by the ops for the call). */
typedef struct mds_qos_oss {
	char name[64];
	char host[64];
	uint16_t ctl_port;
	int up;              /* any of its OSTs up by heartbeat */
	uint32_t n_osts;
	uint32_t *osts;      /* cluster OST indices */
} mds_qos_oss;

/* What one OSS answered to PFS_OP_OSS_QOS_STATS. */
typedef struct mds_qos_report {
	int rc;                 /* 0: answered; else why not (-ETIMEDOUT, ...) */
	uint64_t snapshot_ns;
	double period_s;        /* length of the reported period */
	uint32_t n_osts;
	pfs_qos_ost_info *osts; /* malloc'd */
	uint32_t n;
	pfs_qos_stat *stats;    /* malloc'd */
} mds_qos_report;

/* Free the arrays of r and zero it. */
void mds_qos_report_free(mds_qos_report *r);

/* How the loop talks to OSSes (mds/qosnet.c for the real thing; tests plug
 * fakes).  Both are called on the stepping thread without the controller's
 * lock and must return within about the RPC timeout. */
typedef struct mds_qos_oss_ops {
	/* Ask oss[0..n) for QOS_STATS PERIOD concurrently; fill out[i] (zeroed
	 * by the caller): rc = 0 and the arrays (malloc'd, freed by the
	 * controller) when oss[i] answered, else rc < 0. */
	void (*collect)(void *ctx, const mds_qos_oss *oss, size_t n, mds_qos_report *out);
	/* Push sets[i] to oss[i] concurrently with PFS_OP_OSS_QOS_SET; rc[i]
	 * gets 0 or a negative errno. */
	void (*push)(void *ctx, const mds_qos_oss *oss, const pfs_qos_alloc_set *sets,
		     size_t n, int *rc);
	void *ctx;
} mds_qos_oss_ops;

#define MDS_QOS_INTERVAL_MIN 1.0
#define MDS_QOS_INTERVAL_MAX 3600.0
#define MDS_QOS_ADAPTBF_PERIOD_MIN 0.001
#define MDS_QOS_ADAPTBF_PERIOD_MAX 60.0

typedef struct mds_qosctl_opts {
	const char *policy;     /* qos_policy: none (NULL/"" too), static, pofs, bsip,
				   mbw, gift, tsa, esa, tmf, rnd, adaptbf */
	const char *params;     /* qos_param: "key=value,..." with the paper's symbols
				   and interval, quorum, adaptbf_period; NULL = none */
	double interval;        /* qos_interval seconds; 0 = 10 */
	unsigned quorum;        /* qos_quorum percent; 0 = 80 */
	double adaptbf_period;  /* 0 = 0.1 */
	mds_qos_oss_ops ops;
	/* CLOCK_REALTIME in ns; NULL = the real clock (tests inject one). */
	int64_t (*clock_ns)(void *arg);
	void *clock_arg;
} mds_qosctl_opts;

/* Load the persisted state from ns, validate the configuration (even when
 * a persisted policy overrides it), create the policy.  ns and jobs are
 * borrowed and must outlive the controller.  Returns 0, or -EINVAL with a
 * reason in err (bad configuration), -ENOMEM, -EIO.  The loop does not run
 * until mds_qosctl_start. */
int mds_qosctl_create(mds_ns *ns, mds_jobs *jobs, const mds_qosctl_opts *opts,
		      mds_qosctl **out, char *err, size_t errlen);
/* Start the loop's thread (a decision every interval).  0 or -errno. */
int mds_qosctl_start(mds_qosctl *c);
/* Stop the thread if running and free (GIFT's state was saved with the
 * last decision or policy change).  NULL is a no-op. */
void mds_qosctl_destroy(mds_qosctl *c);

/* One collect-decide-push round now (what the thread runs).  Returns 0
 * (decided, or policy none handled), -EAGAIN (no quorum: skipped),
 * -ENODEV (no OSS registered), or an error of the policy (-EINVAL,
 * -ENOMEM) with nothing pushed. */
int mds_qosctl_step(mds_qosctl *c);

/* PFS_OP_MDS_QOS_POLICY_SET: policy "" or NULL keeps the current policy and
 * merges kv into its parameters; a named policy (even the current one)
 * gets exactly the policy keys of kv, its defaults for the rest.  The keys
 * interval, quorum, adaptbf_period set the loop and are always merged;
 * none and adaptbf take no other keys.  The new parameters are checked with the policy's own create, so an
 * unknown policy or key, a duplicate key or a value out of range is
 * -EINVAL and nothing changes.  The choice is written to LMDB (with GIFT's
 * state when leaving GIFT) before it takes effect, and logged.  0,
 * -EINVAL, -ENOMEM, -EIO. */
int mds_qosctl_set(mds_qosctl *c, const char *policy, const qos_param *kv, size_t n);

/* Who may see what: uid 0 sees every job; any other uid only jobs the
 * registry says it owns (-EACCES for another's job id, -ENOENT for a job
 * nobody knows). */

/* PFS_OP_MDS_QOS_SHOW: the status, and in a malloc'd *rows (caller frees;
 * NULL when *n is 0) one row per (job, OST) of the last period each OSS
 * reported, sorted by job then OST, for job ("" = all visible ones), at
 * most max_rows of them. */
int mds_qosctl_show(mds_qosctl *c, const char *job, uint32_t uid, uint32_t max_rows,
		    pfs_qos_status *st, pfs_qos_row **rows, uint32_t *n);
/* PFS_OP_MDS_QOS_COUPONS: GIFT's per-job coupon state for job ("" = every
 * visible job the registry or the last decision knows, that has coupon
 * history), worth in bytes (capacity units x interval), sorted by job.
 * Works while another policy runs (the parked ledger). */
int mds_qosctl_coupons(mds_qosctl *c, const char *job, uint32_t uid,
		       pfs_qos_coupon_info **out, uint32_t *n);
/* PFS_OP_MDS_QOS_REGRET: the system regret ledger (zeros and the current
 * or default GIFT parameters if GIFT never ran). */
int mds_qosctl_regret(mds_qosctl *c, pfs_qos_regret_info *out);

/* For the metrics exporter: counters and the allocation rows last pushed
 * (malloc'd copy; caller frees). */
typedef struct mds_qosctl_counters {
	uint64_t decisions, skipped, push_failures;
	double decision_s;     /* last decision's policy time */
	uint32_t answered, oss_total;
	double awarded_nh;     /* GIFT node-hours awarded so far */
} mds_qosctl_counters;
void mds_qosctl_counters_get(mds_qosctl *c, mds_qosctl_counters *out);
int mds_qosctl_allocs(mds_qosctl *c, pfs_qos_alloc **rows, uint32_t *n);

/* The policy clock now (seconds), for tests. */
double mds_qosctl_now(mds_qosctl *c);

#endif
