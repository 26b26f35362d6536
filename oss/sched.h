/* sched.h — the OSS Network Request Scheduler (NRS): every data request
 * passes through one oss_sched between the connection thread that decoded
 * it and the I/O thread that executes it.
 *
 * Two layers:
 *  - oss_sched (this file's public API) owns the lock, the condition
 *    variable the I/O threads sleep on, shutdown, and per-job statistics, so
 *    every policy reports the same numbers;
 *  - an oss_sched_class (the queueing discipline: FIFO here, TBF in
 *    nrs_tbf.h) only orders requests.  Its pick() may answer "nothing
 *    eligible before time T" (a token bucket waiting for tokens);
 *    oss_sched_dequeue then sleeps until T, the next enqueue or the next
 *    oss_sched_control.  Class callbacks run under the scheduler lock and
 *    must not block.
 *
 * Requests are classified by job id (from the frame header).  Statistics per
 * job: RPCs (read/write/other) and bytes counted when a request is
 * dispatched to an I/O thread, total queueing delay (dispatch - arrival),
 * and the current queue depth.  They are kept twice: cumulative since start
 * (what PFS_OP_OSS_JOBSTATS reports; readers diff snapshots) and for the
 * current observation period, which a local QoS loop (AdapTBF) closes with
 * oss_sched_stats(..., OSS_SCHED_PERIOD_RESET).  A job that has nothing
 * queued and no activity for OSS_SCHED_IDLE_PERIODS closed periods is
 * forgotten (bounded memory under many short jobs); without a period loop
 * jobs are kept.
 *
 * Shutdown: oss_sched_shutdown makes enqueue fail with -ESHUTDOWN and wakes
 * every sleeper; dequeue keeps handing out what is still queued (ignoring
 * rate limits, so nothing is left behind) and returns -ESHUTDOWN once the
 * queue is empty.  Thread-safe throughout. */
#ifndef OSS_SCHED_H
#define OSS_SCHED_H

#include <stddef.h>
#include <stdint.h>

#include "common/msg.h"
#include "common/proto.h"

#define OSS_SCHED_IDLE_PERIODS 60

/* A request as the scheduler sees it.  The caller embeds it in its own
 * request structure and fills the public fields before enqueue; the
 * scheduler owns the link fields while the request is queued. */
typedef struct oss_req {
	char job[PFS_JOBID_MAX + 1]; /* NUL-terminated job id ("" allowed) */
	uint16_t opcode;             /* PFS_OP_OSS_* */
	uint32_t ost;                /* OST index (wire form) */
	uint64_t bytes;              /* requested read/write length, else 0
	                                (a short read still counts in full) */
	uint64_t arrival_us;         /* monotonic; 0 = set by enqueue */
	uint32_t uid, gid;           /* caller, from the frame header (TBF uid=/gid=) */
	uint64_t client_id;          /* from the frame header (RCC per-client state) */
	uint8_t limited;             /* set by the class at add: 1 = a rate rule
	                                governs it (its wait counts as throttled) */
	/* Scheduler-private. */
	struct oss_req *next;
	void *job_priv;              /* the scheduler's per-job record */
	void *cls_priv;              /* free for the class */
} oss_req;

/* A queueing discipline.  priv is the class's state.  Times are monotonic
 * microseconds; during shutdown pick() is called with now = UINT64_MAX. */
typedef struct oss_sched_class {
	const char *name;
	int (*create)(void **priv);
	void (*destroy)(void *priv); /* queue is empty when called */
	/* Queue r; 0 or -errno (then r is not queued). */
	int (*add)(void *priv, oss_req *r, uint64_t now);
	/* Take the next request to serve: return it, or NULL and set *wake_at
	 * to when one becomes eligible (UINT64_MAX if the queue is empty). */
	oss_req *(*pick)(void *priv, uint64_t now, uint64_t *wake_at);
	/* What oss_sched_control callbacks receive (e.g. the qos_tbf inside
	 * the class's state); NULL = priv itself. */
	void *(*control_state)(void *priv);
} oss_sched_class;

extern const oss_sched_class oss_sched_fifo;

typedef struct oss_sched oss_sched;

/* cls NULL = FIFO.  0 or -ENOMEM (or the class's create error). */
int oss_sched_create(const oss_sched_class *cls, oss_sched **out);
/* Free the scheduler.  Call after shutdown and after every dequeuer has
 * returned; requests still queued are not freed (they belong to the caller),
 * so drain first. */
void oss_sched_destroy(oss_sched *s);
const char *oss_sched_name(const oss_sched *s);

/* Queue r (borrowed until dequeued).  0, or -ESHUTDOWN after shutdown. */
int oss_sched_enqueue(oss_sched *s, oss_req *r);
/* Block until a request may be served and return it in *out.  Returns 0 or
 * -ESHUTDOWN when shut down and empty. */
int oss_sched_dequeue(oss_sched *s, oss_req **out);
void oss_sched_shutdown(oss_sched *s);

/* Run fn(state, now, arg) under the scheduler lock with the class's
 * control state (see control_state):
 * how a QoS loop changes a discipline's parameters (TBF rules and rates)
 * at run time.  Sleeping dequeuers are woken afterwards, since requests may
 * have become eligible.  fn must not block or call into s.  Returns fn's
 * result, or -EINVAL if s does not run class cls. */
int oss_sched_control(oss_sched *s, const oss_sched_class *cls,
		      int (*fn)(void *priv, uint64_t now, void *arg), void *arg);

/* Number of requests queued now (all jobs). */
unsigned oss_sched_queued(oss_sched *s);

#define OSS_SCHED_TOTAL 0        /* cumulative since start */
#define OSS_SCHED_PERIOD 1       /* current period so far */
#define OSS_SCHED_PERIOD_RESET 2 /* current period, then start a new one */
/* Snapshot of per-job statistics: *out is a malloc'd array of *n entries
 * (caller frees; NULL when n = 0), sorted by job id.  queued is the current
 * depth in every mode.  0 or -ENOMEM. */
int oss_sched_stats(oss_sched *s, int mode, pfs_job_stats **out, size_t *n);

#endif
