/* ostq.h — the queue head of one local OST: its store, its cluster index,
 * its NRS scheduler (sched.h) and its own pool of I/O threads.
 *
 * One per OST, so an OST's emulated speed, TBF rules, RCC credits and
 * statistics are its own, and a slow or throttled OST never holds the I/O
 * threads of another.  The I/O threads loop on oss_sched_dequeue and hand
 * each request to the owner's exec callback, which executes it, calls
 * oss_sched_done for the reply's credit, replies and frees the request.
 *
 * Stop in two steps: oss_ostq_shutdown (the scheduler refuses new requests
 * and drains what is queued regardless of rate limits), then, once nothing
 * can enqueue any more, oss_ostq_stop (joins the threads, frees).
 * Thread-safe: index get/set are atomic; the rest is constant. */
#ifndef OSS_OSTQ_H
#define OSS_OSTQ_H

#include <stddef.h>
#include <stdint.h>

#include "oss/sched.h"
#include "oss/store.h"

#define OSS_INDEX_NONE (-1)

typedef struct oss_ostq oss_ostq;

/* Execute r (dequeued from q's scheduler) and free it; runs on one of q's
 * I/O threads. */
typedef void (*oss_ostq_exec)(void *ctx, oss_ostq *q, oss_req *r);

typedef struct oss_ostq_opts {
	oss_store *store;        /* borrowed; must outlive the queue */
	size_t slot;             /* position among the OSS's OSTs */
	unsigned io_threads;     /* >= 1 */
	oss_sched_opts sched;    /* the scheduler's options */
	oss_ostq_exec exec;
	void *ctx;               /* for exec */
} oss_ostq_opts;

/* Create the scheduler and start the I/O threads.  0, or a negative errno
 * with a reason in err (nothing left running). */
int oss_ostq_start(const oss_ostq_opts *o, oss_ostq **out, char *err, size_t errlen);
void oss_ostq_shutdown(oss_ostq *q);
/* Join the I/O threads and free (after shutdown; NULL is a no-op). */
void oss_ostq_stop(oss_ostq *q);

oss_store *oss_ostq_store(const oss_ostq *q);
oss_sched *oss_ostq_sched(const oss_ostq *q);
size_t oss_ostq_slot(const oss_ostq *q);
unsigned oss_ostq_threads(const oss_ostq *q);
/* The cluster index bound to this OST, or OSS_INDEX_NONE. */
int64_t oss_ostq_index(const oss_ostq *q);
void oss_ostq_set_index(oss_ostq *q, int64_t index);

#endif
