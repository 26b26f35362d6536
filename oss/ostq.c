/* ostq.c — one OST's scheduler and I/O threads (see ostq.h). */
#include "oss/ostq.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/proto.h"

struct oss_ostq {
	oss_store *store;
	size_t slot;
	oss_sched *sched;
	oss_ostq_exec exec;
	void *ctx;
	_Atomic int64_t index;
	pthread_t *threads;
	unsigned nthreads;       /* started */
};

static void *io_main(void *arg)
{
	oss_ostq *q = arg;
	oss_req *r;

	while (oss_sched_dequeue(q->sched, &r) == 0)
		q->exec(q->ctx, q, r);
	return NULL;
}

int oss_ostq_start(const oss_ostq_opts *o, oss_ostq **out, char *err, size_t errlen)
{
	oss_ostq *q = calloc(1, sizeof(*q));
	int rc;

	if (!q) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	q->store = o->store;
	q->slot = o->slot;
	q->exec = o->exec;
	q->ctx = o->ctx;
	atomic_init(&q->index, OSS_INDEX_NONE);
	q->threads = calloc(o->io_threads ? o->io_threads : 1, sizeof(*q->threads));
	if (!q->threads) {
		snprintf(err, errlen, "out of memory");
		rc = -ENOMEM;
		goto fail;
	}
	rc = oss_sched_create_opts(&o->sched, &q->sched);
	if (rc) {
		snprintf(err, errlen, "OST %zu scheduler: %s", o->slot, pfs_strerror(rc));
		goto fail;
	}
	for (; q->nthreads < o->io_threads; q->nthreads++) {
		if (pthread_create(&q->threads[q->nthreads], NULL, io_main, q)) {
			snprintf(err, errlen, "OST %zu: cannot start I/O threads", o->slot);
			rc = -EAGAIN;
			goto fail;
		}
	}
	*out = q;
	return 0;
fail:
	oss_ostq_shutdown(q);
	oss_ostq_stop(q);
	return rc;
}

void oss_ostq_shutdown(oss_ostq *q)
{
	if (q && q->sched)
		oss_sched_shutdown(q->sched);
}

void oss_ostq_stop(oss_ostq *q)
{
	if (!q)
		return;
	for (unsigned i = 0; i < q->nthreads; i++)
		pthread_join(q->threads[i], NULL);
	oss_sched_destroy(q->sched);
	free(q->threads);
	free(q);
}

oss_store *oss_ostq_store(const oss_ostq *q) { return q->store; }
oss_sched *oss_ostq_sched(const oss_ostq *q) { return q->sched; }
size_t oss_ostq_slot(const oss_ostq *q) { return q->slot; }
unsigned oss_ostq_threads(const oss_ostq *q) { return q->nthreads; }
int64_t oss_ostq_index(const oss_ostq *q) { return atomic_load(&q->index); }
void oss_ostq_set_index(oss_ostq *q, int64_t index) { atomic_store(&q->index, index); }
