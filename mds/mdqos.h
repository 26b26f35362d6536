/* mdqos.h — PADLL on the MDS (padll.txt sec. III-B): the metadata QoS
 * controller and the MDS's own per-(job, class) enforcement.
 *
 * Control cycle, every interval_ms (default 1000): collect (the usage the
 * mounts report in their MDS_MDQOS_PULL requests, and the MDS's own
 * arrival and service counts) -> compute (qos/padll.h: uniform, priority,
 * proportional sharing or PSFA, one Max_R per class) -> publish (the next
 * pulls get the rates; the MDS's token buckets take them at once) -> sleep.
 *
 * Enforcement on the MDS: mds_mdqos_admit takes a token of the (job,
 * class) bucket; without one the request is handed over with
 * mds_mdqos_defer and queued per (job, class), and a pacer thread releases
 * it to a small pool of release threads when its bucket has a token.  So
 * no server worker ever waits, and a client that ignores its rates is
 * still held (its connection stops being read once its in-flight limit is
 * queued here, common/server.h).
 *
 * Configuration: algo, interval_ms, epsilon (PSFA's ε), jobs (uniform's N),
 * weight_sum (priority's W), max_r per class, demand per (job, class);
 * set with mds_mdqos_set (pfsadmin qos md set), kept in the `qos` LMDB
 * table under "mdqos", which wins over the daemon's keys at start. */
#ifndef MDS_MDQOS_H
#define MDS_MDQOS_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/mdqos.h"
#include "mds/jobs.h"
#include "mds/ns.h"

typedef struct mds_mdqos mds_mdqos;

typedef struct mds_mdqos_opts {
	const char *algo;       /* none uniform priority proportional psfa; NULL = none */
	unsigned interval_ms;   /* 0 = 1000 */
	const char *max_r;      /* "create=400,getattr=800"; NULL/"" = no class limited */
	const char *params;     /* "epsilon=0.5,jobs=4,weight_sum=10" */
	const char *map;        /* opcode -> class overrides (common/mdqos.h) */
	unsigned release_threads; /* 0 = 2 */
	int no_threads;         /* tests: no threads; call mds_mdqos_step / _pace */
	double (*now)(void *arg); /* tests: the clock (s); NULL = pfs_clock_s */
	void *now_arg;
} mds_mdqos_opts;

/* ns and jobs are borrowed and may be NULL (no persistence, priority 1 for
 * every job).  -EINVAL with a message in err for a bad option. */
int mds_mdqos_create(mds_ns *ns, mds_jobs *jobs, const mds_mdqos_opts *o, mds_mdqos **out,
		     char *err, size_t errlen);
/* Start the control, pacer and release threads.  0 or -errno. */
int mds_mdqos_start(mds_mdqos *q);
/* Stop the threads; every request still queued gets fn(arg, -ESHUTDOWN)
 * and later ones are admitted at once.  Call before stopping the server
 * whose handlers the callbacks run.  Idempotent; NULL is a no-op. */
void mds_mdqos_stop(mds_mdqos *q);
/* Stop (if not yet) and free.  NULL is a no-op. */
void mds_mdqos_destroy(mds_mdqos *q);

unsigned mds_mdqos_class(mds_mdqos *q, uint16_t op);
/* A request of job with opcode op arrives, counting as cost (>= 1)
 * operations of op's class (UNLINK_BATCH: its n unlinks; anything else
 * 1): it takes cost tokens.  0 = run it now, -EAGAIN = its bucket is
 * empty (or its queue is not): hand it to mds_mdqos_defer.  A cost above
 * the bucket's depth (100 ms of the rate, at least 2) is never refused for
 * good: it goes when the bucket is full and leaves it in debt (qos/bucket.h
 * qos_bucket_try_take), so the job's long-run rate still holds. */
int mds_mdqos_admit(mds_mdqos *q, const char *job, uint16_t op, unsigned cost);
typedef void (*mds_mdqos_fn)(void *arg, int status);
/* Queue a request admit refused, with its cost; fn(arg, 0) runs on a
 * release thread when it may go: when its bucket has cost tokens (a full
 * bucket if cost exceeds its depth), in arrival order behind the requests
 * of its (job, class) queued before it (fn(arg, -ESHUTDOWN) at destroy).
 * 0, or -EBUSY (more than MDS_MDQOS_QUEUED_MAX queued) / -ENOMEM: fn is
 * not called. */
#define MDS_MDQOS_QUEUED_MAX 65536
int mds_mdqos_defer(mds_mdqos *q, const char *job, uint16_t op, unsigned cost,
		    mds_mdqos_fn fn, void *arg);

/* MDS_MDQOS_PULL from client_id: record its usage, encode its rates. */
int mds_mdqos_pull(mds_mdqos *q, uint64_t client_id, pfs_rbuf *req, pfs_wbuf *out);
/* MDS_MDQOS_SHOW; st->rows malloc'd (pfs_mdq_status_free). */
int mds_mdqos_show(mds_mdqos *q, pfs_mdq_status *st);
/* MDS_MDQOS_SET: all n key=value pairs or none (-EINVAL, err says why);
 * job "" for the global keys, a job for demand.CLASS.  Persisted before
 * it takes effect. */
int mds_mdqos_set(mds_mdqos *q, const char *job, const char *const *keys,
		  const char *const *vals, uint32_t n, char *err, size_t errlen);

/* One control round now (the thread calls it every interval). */
void mds_mdqos_step(mds_mdqos *q);
/* Release what may go now (the pacer thread's body); with no_threads the
 * callbacks run on the caller.  Returns seconds until the next release
 * is due (INFINITY: nothing queued that a rate lets go). */
double mds_mdqos_pace(mds_mdqos *q);

/* Metrics and jobstats: fn per (job, class) with a rate or counts. */
void mds_mdqos_each(mds_mdqos *q, void (*fn)(void *arg, const pfs_mdq_jobrow *r), void *arg);

#endif
