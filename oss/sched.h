/* sched.h — the OSS Network Request Scheduler (NRS) of one OST: every data
 * request for that OST passes through its oss_sched between the connection
 * thread that decoded it and the OST's I/O thread that executes it.
 *
 * Two layers:
 *  - oss_sched (this file's public API) owns the one lock of the OST's
 *    request path, the condition variable the I/O threads sleep on,
 *    shutdown, the queue caps, the emulated device speed, RCC credits and
 *    per-job statistics, so every discipline reports the same numbers;
 *  - an oss_sched_class (the queueing discipline: FIFO here, TBF in
 *    nrs_tbf.h) only orders requests.  Its pick() may answer "nothing
 *    eligible before time T" (a token bucket waiting for tokens);
 *    oss_sched_dequeue then sleeps until T, the next enqueue or the next
 *    oss_sched_control.  Class callbacks run under the scheduler lock and
 *    must not block.
 *
 * Request path, one lock per step: enqueue (caps, job statistics, class,
 * RCC recv), dequeue (emulated device pacing, class pick, statistics),
 * done (RCC reply: the credit for the reply header; no lock without RCC).
 *
 * Queue caps (bounded memory): per job (on this OST) at most job_max_rpcs
 * requests and job_max_bytes bytes queued, and per OSS (a budget shared by
 * the schedulers of all its OSTs) max_rpcs and max_bytes.  A request over a
 * cap is refused with -EBUSY (counted in the job's busy_rpcs) and nothing is
 * queued; a job with nothing queued always gets one request in, so a cap
 * smaller than one request cannot starve it.
 *
 * Emulated device: with pace_bps and/or pace_iops the I/O threads take
 * read/write requests no faster than that (token buckets of qos/bucket.h,
 * one request of debt allowed, so the long-run rate is exact whatever the
 * request size); the wait happens before the class picks, i.e. it is
 * queueing delay and the NRS decides who goes when the "device" is free.
 *
 * Statistics: see jobstat.h (three clocks: total, the MDS's period, the
 * local loop's period).  Jobs idle for a while are dropped by
 * oss_sched_maintain.
 *
 * Shutdown: oss_sched_shutdown makes enqueue fail with -ESHUTDOWN and wakes
 * every sleeper; dequeue keeps handing out what is still queued (ignoring
 * rate limits and pacing, so nothing is left behind) and returns -ESHUTDOWN
 * once the queue is empty.  Thread-safe throughout. */
#ifndef OSS_SCHED_H
#define OSS_SCHED_H

#include <stddef.h>
#include <stdint.h>

#include "common/msg.h"
#include "common/proto.h"
#include "oss/jobstat.h"
#include "oss/rcc_srv.h"
#include "qos/rcc.h"

#define OSS_SCHED_JOBS_MAX 16384 /* job records per OST by default */

/* A request as the scheduler sees it.  The caller embeds it in its own
 * request structure and fills the public fields before enqueue; the
 * scheduler owns the link fields while the request is queued. */
typedef struct oss_req {
	char job[PFS_JOBID_MAX + 1]; /* NUL-terminated job id ("" allowed) */
	uint16_t opcode;             /* PFS_OP_OSS_* */
	uint32_t ost;                /* OST index (wire form) */
	uint64_t bytes;              /* requested read/write length, else 0
	                                (a short read still counts in full) */
	uint64_t arrival_us;         /* monotonic; 0 = set by enqueue (strictly
	                                increasing per scheduler) */
	uint32_t uid, gid;           /* caller, from the frame header (TBF uid=/gid=) */
	uint64_t client_id;          /* from the frame header (RCC per-client state) */
	uint32_t cnr;                /* RCC: credits the client asks for (header) */
	uint8_t limited;             /* set by the class at add: 1 = a rate rule
	                                governs it (its wait counts as throttled) */
	/* Scheduler-private. */
	struct oss_req *next;
	void *job_priv;              /* the scheduler's per-job record */
	void *cls_priv;              /* free for the class */
	oss_rcc_cl *rcc_priv;        /* the client's RCC record (or NULL) */
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

/* The per-OSS queue caps, shared by the schedulers of one OSS (atomic
 * counters: enqueue on one OST does not take another OST's lock). */
typedef struct oss_sched_budget oss_sched_budget;

/* max_rpcs / max_bytes 0 = no cap.  0 or -ENOMEM. */
int oss_sched_budget_create(uint64_t max_rpcs, uint64_t max_bytes, oss_sched_budget **out);
/* Free; every scheduler using it must be destroyed first.  NULL is a no-op. */
void oss_sched_budget_destroy(oss_sched_budget *b);
/* Requests and bytes queued now on all OSTs sharing b. */
void oss_sched_budget_used(oss_sched_budget *b, uint64_t *rpcs, uint64_t *bytes);

typedef struct oss_sched_opts {
	const oss_sched_class *cls;   /* NULL = FIFO */
	uint32_t job_max_rpcs;        /* queued requests per job; 0 = no cap */
	uint64_t job_max_bytes;       /* queued bytes per job; 0 = no cap */
	oss_sched_budget *budget;     /* per-OSS caps (borrowed); NULL = none */
	size_t jobs_max;              /* job records kept; 0 = OSS_SCHED_JOBS_MAX */
	double pace_bps;              /* emulated device bytes/s; 0 = unpaced */
	double pace_iops;             /* emulated device read+write RPCs/s; 0 = unpaced */
	const qos_rcc_params *rcc;    /* RCC parameters (copied); NULL = no credits */
	size_t rcc_clients_max;       /* 0 = OSS_RCC_CLIENTS_MAX */
} oss_sched_opts;

/* A scheduler with class cls (NULL = FIFO) and no caps, pacing or RCC.
 * 0 or -ENOMEM (or the class's create error). */
int oss_sched_create(const oss_sched_class *cls, oss_sched **out);
/* The same with options.  0, -EINVAL (bad pacing or RCC parameters) or
 * -ENOMEM. */
int oss_sched_create_opts(const oss_sched_opts *o, oss_sched **out);
/* Free the scheduler.  Call after shutdown and after every dequeuer has
 * returned; requests still queued are not freed (they belong to the caller),
 * so drain first. */
void oss_sched_destroy(oss_sched *s);
const char *oss_sched_name(const oss_sched *s);
const oss_sched_class *oss_sched_class_of(const oss_sched *s);

/* Queue r (borrowed until dequeued).  0; -EBUSY over a queue cap or with
 * the job table full (nothing queued; the caller answers -EBUSY at once);
 * -ESHUTDOWN after shutdown; the class's error. */
int oss_sched_enqueue(oss_sched *s, oss_req *r);
/* The same, but when r is the only request queued, the device is not
 * paced (pace_bps/pace_iops) and the class would hand r out at once (no
 * rule holds it), r is dispatched here as oss_sched_dequeue would (the
 * same statistics, no I/O thread woken): *now = 1 and the caller serves
 * it itself (then oss_sched_done as for any dequeued request).  Else
 * *now = 0 and r is queued as by oss_sched_enqueue (or refused). */
int oss_sched_enqueue_now(oss_sched *s, oss_req *r, int *now);
/* Block until a request may be served and return it in *out.  Returns 0 or
 * -ESHUTDOWN when shut down and empty. */
int oss_sched_dequeue(oss_sched *s, oss_req **out);
/* A dequeued request is about to be answered: returns the RCC credit for
 * the reply header (0 without RCC).  Call exactly once per dequeued
 * request. */
uint32_t oss_sched_done(oss_sched *s, oss_req *r);
/* The credit for a reply to a request refused busy (0 without RCC). */
uint32_t oss_sched_busy_credit(const oss_sched *s);
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

/* The OST as a whole. */
typedef struct oss_sched_info {
	uint32_t queued;
	uint64_t queued_bytes;
	uint64_t served_io_rpcs;   /* read + write requests dispatched, cumulative */
	uint64_t served_bytes;     /* their bytes */
	uint64_t busy_rpcs;        /* refusals, cumulative (also jobs without a record) */
	size_t jobs;               /* job records */
	oss_rcc_info rcc;          /* all zero without RCC */
} oss_sched_info;
void oss_sched_info_get(oss_sched *s, oss_sched_info *out);

/* Per-job snapshot on clock OSS_CLOCK_* (jobstat.h), optionally closing
 * that clock's period (not TOTAL); see oss_jobstats_snapshot.  Caller frees
 * *out.  0, -EINVAL or -ENOMEM. */
int oss_sched_jobs(oss_sched *s, int clock, int reset, oss_job_snap **out, size_t *n);

/* Housekeeping, every second or so: drop jobs idle for idle_us (nothing
 * queued), the RCC ping check and client-table cleanup. */
void oss_sched_maintain(oss_sched *s, uint64_t idle_us);

/* PFS_OP_OSS_JOBSTATS form: per-job totals (TOTAL), or the MDS clock's
 * period (PERIOD; PERIOD_RESET closes it).  *out malloc'd (caller frees;
 * NULL when n = 0), sorted by job id.  0 or -ENOMEM. */
#define OSS_SCHED_TOTAL 0
#define OSS_SCHED_PERIOD 1
#define OSS_SCHED_PERIOD_RESET 2
int oss_sched_stats(oss_sched *s, int mode, pfs_job_stats **out, size_t *n);

/* Monotonic clock in microseconds (the scheduler's time base). */
uint64_t oss_sched_now_us(void);

#endif
