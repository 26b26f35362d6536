/* sched.c — the NRS frame (locking, sleeping, shutdown, per-job statistics)
 * and the FIFO discipline (see sched.h). */
#include "oss/sched.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define JOB_BUCKETS 256 /* chained; a few thousand live jobs stay cheap */

typedef struct counters {
	uint64_t read_rpcs, write_rpcs, other_rpcs;
	uint64_t read_bytes, write_bytes;
	uint64_t wait_us_sum;
} counters;

typedef struct sjob {
	char id[PFS_JOBID_MAX + 1];
	uint32_t queued;
	unsigned idle_periods; /* closed periods without activity */
	counters total, period;
	struct sjob *next;
} sjob;

struct oss_sched {
	const oss_sched_class *cls;
	void *priv;              /* guarded by lock, as every field below */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int shutdown;
	unsigned queued;
	unsigned sleepers;
	size_t njobs;
	sjob *jobs[JOB_BUCKETS];
};

static uint64_t now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static unsigned job_hash(const char *s)
{
	uint32_t h = 2166136261u; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h % JOB_BUCKETS;
}

static sjob *job_get(oss_sched *s, const char *id)
{
	unsigned b = job_hash(id);
	sjob *j;

	for (j = s->jobs[b]; j; j = j->next)
		if (!strcmp(j->id, id))
			return j;
	j = calloc(1, sizeof(*j));
	if (!j)
		return NULL;
	memcpy(j->id, id, strnlen(id, PFS_JOBID_MAX));
	j->next = s->jobs[b];
	s->jobs[b] = j;
	s->njobs++;
	return j;
}

/* ---- FIFO discipline ---- */

typedef struct fifo {
	oss_req *head, *tail;
} fifo;

static int fifo_create(void **priv)
{
	*priv = calloc(1, sizeof(fifo));
	return *priv ? 0 : -ENOMEM;
}

static void fifo_destroy(void *priv) { free(priv); }

static int fifo_add(void *priv, oss_req *r, uint64_t now)
{
	fifo *f = priv;

	r->next = NULL;
	if (f->tail)
		f->tail->next = r;
	else
		f->head = r;
	f->tail = r;
	return 0;
}

static oss_req *fifo_pick(void *priv, uint64_t now, uint64_t *wake_at)
{
	fifo *f = priv;
	oss_req *r = f->head;

	if (!r) {
		*wake_at = UINT64_MAX;
		return NULL;
	}
	f->head = r->next;
	if (!f->head)
		f->tail = NULL;
	r->next = NULL;
	return r;
}

const oss_sched_class oss_sched_fifo = {
	.name = "fifo",
	.create = fifo_create,
	.destroy = fifo_destroy,
	.add = fifo_add,
	.pick = fifo_pick,
};

/* ---- frame ---- */

int oss_sched_create(const oss_sched_class *cls, oss_sched **out)
{
	oss_sched *s = calloc(1, sizeof(*s));
	pthread_condattr_t ca;
	int rc;

	if (!s)
		return -ENOMEM;
	s->cls = cls ? cls : &oss_sched_fifo;
	rc = s->cls->create(&s->priv);
	if (rc) {
		free(s);
		return rc;
	}
	pthread_mutex_init(&s->lock, NULL);
	/* Timed waits (TBF) use the monotonic clock, like arrival times. */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cond, &ca);
	pthread_condattr_destroy(&ca);
	*out = s;
	return 0;
}

void oss_sched_destroy(oss_sched *s)
{
	if (!s)
		return;
	s->cls->destroy(s->priv);
	for (int b = 0; b < JOB_BUCKETS; b++) {
		sjob *j = s->jobs[b];
		while (j) {
			sjob *n = j->next;
			free(j);
			j = n;
		}
	}
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

const char *oss_sched_name(const oss_sched *s) { return s->cls->name; }

int oss_sched_enqueue(oss_sched *s, oss_req *r)
{
	sjob *j;
	int rc = 0;

	if (!r->arrival_us)
		r->arrival_us = now_us();
	r->job[PFS_JOBID_MAX] = '\0';
	pthread_mutex_lock(&s->lock);
	if (s->shutdown) {
		rc = -ESHUTDOWN;
		goto out;
	}
	j = job_get(s, r->job);
	if (!j) {
		rc = -ENOMEM;
		goto out;
	}
	r->job_priv = j;
	rc = s->cls->add(s->priv, r, r->arrival_us);
	if (rc)
		goto out; /* the job record stays; idle ones are pruned later */
	j->queued++;
	s->queued++;
	if (s->sleepers)
		pthread_cond_signal(&s->cond);
out:
	pthread_mutex_unlock(&s->lock);
	return rc;
}

static void account(sjob *j, const oss_req *r, uint64_t wait)
{
	counters *cs[2] = { &j->total, &j->period };

	for (int i = 0; i < 2; i++) {
		counters *c = cs[i];
		switch (r->opcode) {
		case PFS_OP_OSS_READ:
			c->read_rpcs++;
			c->read_bytes += r->bytes;
			break;
		case PFS_OP_OSS_WRITE:
			c->write_rpcs++;
			c->write_bytes += r->bytes;
			break;
		default:
			c->other_rpcs++;
			break;
		}
		c->wait_us_sum += wait;
	}
}

int oss_sched_dequeue(oss_sched *s, oss_req **out)
{
	oss_req *r;
	int rc = 0;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		uint64_t now = now_us(), wake_at = UINT64_MAX;

		r = s->cls->pick(s->priv, s->shutdown ? UINT64_MAX : now, &wake_at);
		if (r)
			break;
		if (s->shutdown && s->queued == 0) {
			rc = -ESHUTDOWN;
			goto out;
		}
		s->sleepers++;
		if (wake_at == UINT64_MAX) {
			pthread_cond_wait(&s->cond, &s->lock);
		} else {
			struct timespec ts = { (time_t)(wake_at / 1000000u),
					       (long)(wake_at % 1000000u) * 1000 };
			pthread_cond_timedwait(&s->cond, &s->lock, &ts);
		}
		s->sleepers--;
	}
	{
		sjob *j = r->job_priv;
		uint64_t now = now_us();
		uint64_t wait = now > r->arrival_us ? now - r->arrival_us : 0;

		s->queued--;
		j->queued--;
		account(j, r, wait);
	}
	*out = r;
out:
	pthread_mutex_unlock(&s->lock);
	return rc;
}

void oss_sched_shutdown(oss_sched *s)
{
	pthread_mutex_lock(&s->lock);
	s->shutdown = 1;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

int oss_sched_control(oss_sched *s, const oss_sched_class *cls,
		      int (*fn)(void *priv, uint64_t now, void *arg), void *arg)
{
	int rc;

	if (s->cls != cls)
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	rc = fn(cls->control_state ? cls->control_state(s->priv) : s->priv, now_us(), arg);
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

unsigned oss_sched_queued(oss_sched *s)
{
	unsigned n;

	pthread_mutex_lock(&s->lock);
	n = s->queued;
	pthread_mutex_unlock(&s->lock);
	return n;
}

static int cmp_stats(const void *a, const void *b)
{
	return strcmp(((const pfs_job_stats *)a)->job, ((const pfs_job_stats *)b)->job);
}

static int counters_zero(const counters *c)
{
	return !(c->read_rpcs | c->write_rpcs | c->other_rpcs);
}

int oss_sched_stats(oss_sched *s, int mode, pfs_job_stats **out, size_t *n)
{
	pfs_job_stats *v = NULL;
	size_t k = 0;
	int rc = 0;

	*out = NULL;
	*n = 0;
	pthread_mutex_lock(&s->lock);
	if (s->njobs) {
		v = calloc(s->njobs, sizeof(*v));
		if (!v) {
			rc = -ENOMEM;
			goto out;
		}
	}
	for (int b = 0; b < JOB_BUCKETS; b++) {
		for (sjob **pp = &s->jobs[b]; *pp;) {
			sjob *j = *pp;
			const counters *c = mode == OSS_SCHED_TOTAL ? &j->total : &j->period;
			pfs_job_stats *o = &v[k++];

			memcpy(o->job, j->id, sizeof(o->job));
			o->read_rpcs = c->read_rpcs;
			o->write_rpcs = c->write_rpcs;
			o->other_rpcs = c->other_rpcs;
			o->read_bytes = c->read_bytes;
			o->write_bytes = c->write_bytes;
			o->wait_us_sum = c->wait_us_sum;
			o->queued = j->queued;
			if (mode == OSS_SCHED_PERIOD_RESET) {
				j->idle_periods = counters_zero(&j->period) && !j->queued
							  ? j->idle_periods + 1 : 0;
				memset(&j->period, 0, sizeof(j->period));
				if (j->idle_periods >= OSS_SCHED_IDLE_PERIODS) {
					*pp = j->next;
					s->njobs--;
					free(j);
					continue;
				}
			}
			pp = &j->next;
		}
	}
	if (k > 1)
		qsort(v, k, sizeof(*v), cmp_stats);
	*out = v;
	*n = k;
out:
	pthread_mutex_unlock(&s->lock);
	return rc;
}
