/* mdqos.c — PADLL's stage in mount.pfs: per-(job, class) token buckets fed
 * by the rates the MDS answers to MDS_MDQOS_PULL (see mdqos.h).
 *
 * One mutex guards the table (at most MAX_JOBS jobs; beyond, a job is
 * neither counted nor limited here — the MDS still holds it).  A waiting
 * thread sleeps at most 50 ms at a time so new rates take effect within
 * that.  Buckets hold 50 ms of their rate (at least one token). */
#include "client/mdqos.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/rpc.h"
#include "qos/bucket.h"

#define MAX_JOBS 1024
#define NBUCKETS 64
#define DEPTH_S 0.05
#define NAP_S 0.05

struct ccell {
	qos_bucket b;
	double rate;      /* < 0: not limited */
	uint64_t count;   /* requests since the last pull */
};

struct cjob {
	char job[PFS_JOBID_MAX + 1];
	struct ccell c[PFS_MDQ_NCLASSES];
	struct cjob *next;
};

struct cli_mdqos {
	pfs_rpc_pool *pool;
	pthread_mutex_t lock;
	pthread_cond_t cv;
	pfs_mdq_map map;
	int have_map;
	uint8_t limited[PFS_MDQ_NCLASSES];
	double default_rate[PFS_MDQ_NCLASSES];
	double period_s;
	struct cjob *jobs[NBUCKETS];
	unsigned njobs;
	int stop, started, off;
	pthread_t thr;
};

static unsigned hash(const char *s)
{
	unsigned h = 5381;

	while (*s)
		h = h * 33 + (unsigned char)*s++;
	return h % NBUCKETS;
}

static void cell_rate(struct ccell *c, double rate, double now)
{
	double depth = rate * DEPTH_S < 1 ? 1 : rate * DEPTH_S;

	c->rate = rate;
	if (rate < 0)
		return;
	if (c->b.depth <= 0)
		qos_bucket_init(&c->b, rate, depth, now);
	else {
		qos_bucket_set_rate(&c->b, rate, now);
		qos_bucket_set_depth(&c->b, depth, now);
	}
}

static struct cjob *job_find(cli_mdqos *q, const char *job, double now)
{
	unsigned b = hash(job);
	struct cjob *j;

	for (j = q->jobs[b]; j; j = j->next)
		if (strcmp(j->job, job) == 0)
			return j;
	if (q->njobs >= MAX_JOBS || !(j = calloc(1, sizeof(*j))))
		return NULL;
	snprintf(j->job, sizeof(j->job), "%s", job);
	for (unsigned c = 0; c < PFS_MDQ_NCLASSES; c++)
		cell_rate(&j->c[c], q->limited[c] ? q->default_rate[c] : -1, now);
	j->next = q->jobs[b];
	q->jobs[b] = j;
	q->njobs++;
	return j;
}

int cli_mdqos_create(pfs_rpc_pool *pool, cli_mdqos **out)
{
	cli_mdqos *q = calloc(1, sizeof(*q));
	pthread_condattr_t ca;

	if (!q)
		return -ENOMEM;
	q->pool = pool;
	q->period_s = 1;
	pfs_mdq_map_default(&q->map);
	pthread_mutex_init(&q->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&q->cv, &ca);
	pthread_condattr_destroy(&ca);
	*out = q;
	return 0;
}

int cli_mdqos_try(cli_mdqos *q, const char *job, uint16_t op, int first, double now,
		  double *wait)
{
	unsigned cls = pfs_mdq_map_class(&q->map, op);
	struct cjob *j;
	int rc = 0;

	*wait = 0;
	if (cls == PFS_MDQ_NONE || !job || !job[0])
		return 0;
	pthread_mutex_lock(&q->lock);
	j = job_find(q, job, now);
	if (j) {
		struct ccell *c = &j->c[cls];
		if (first)
			c->count++;
		if (c->rate >= 0 && !q->stop && qos_bucket_try_take(&c->b, 1, now)) {
			*wait = qos_bucket_wait(&c->b, 1, now);
			rc = -EAGAIN;
		}
	}
	pthread_mutex_unlock(&q->lock);
	return rc;
}

void cli_mdqos_wait(cli_mdqos *q, const char *job, uint16_t op)
{
	double w;
	int first = 1;

	if (!q)
		return;
	while (cli_mdqos_try(q, job, op, first, pfs_clock_s(), &w) == -EAGAIN) {
		struct timespec ts;
		if (!(w < NAP_S))
			w = NAP_S;
		ts.tv_sec = 0;
		ts.tv_nsec = (long)(w * 1e9) + 1000;
		nanosleep(&ts, NULL);
		first = 0;
	}
}

void cli_mdqos_apply(cli_mdqos *q, const pfs_mdq_rates *r, double now)
{
	pthread_mutex_lock(&q->lock);
	q->map = r->map;
	q->have_map = 1;
	memcpy(q->limited, r->limited, sizeof(q->limited));
	memcpy(q->default_rate, r->default_rate, sizeof(q->default_rate));
	q->period_s = r->period_s >= 0.1 && r->period_s <= 60 ? r->period_s : 1;
	for (unsigned b = 0; b < NBUCKETS; b++)
		for (struct cjob *j = q->jobs[b]; j; j = j->next)
			for (unsigned c = 0; c < PFS_MDQ_NCLASSES; c++)
				cell_rate(&j->c[c], q->limited[c] ? q->default_rate[c] : -1, now);
	for (uint32_t i = 0; i < r->n; i++) {
		const pfs_mdq_row *row = &r->rows[i];
		struct cjob *j;
		if (!q->limited[row->cls] || !(j = job_find(q, row->job, now)))
			continue;
		cell_rate(&j->c[row->cls], row->value, now);
	}
	pthread_mutex_unlock(&q->lock);
}

double cli_mdqos_rate(cli_mdqos *q, const char *job, unsigned cls)
{
	double r = -1;

	pthread_mutex_lock(&q->lock);
	for (struct cjob *j = q->jobs[hash(job)]; j; j = j->next)
		if (strcmp(j->job, job) == 0 && cls < PFS_MDQ_NCLASSES)
			r = j->c[cls].rate;
	if (r < 0 && cls < PFS_MDQ_NCLASSES && q->limited[cls])
		r = q->default_rate[cls];
	pthread_mutex_unlock(&q->lock);
	return r;
}

int cli_mdqos_take_usage(cli_mdqos *q, pfs_mdq_row **rows, uint32_t *n)
{
	size_t cap = 0, k = 0;
	pfs_mdq_row *v = NULL;
	int rc = 0;

	pthread_mutex_lock(&q->lock);
	for (unsigned b = 0; b < NBUCKETS && !rc; b++)
		for (struct cjob *j = q->jobs[b]; j && !rc; j = j->next)
			for (unsigned c = 1; c < PFS_MDQ_NCLASSES; c++) {
				if (!j->c[c].count)
					continue;
				if (k == cap) {
					size_t nc = cap ? cap * 2 : 32;
					pfs_mdq_row *nv = nc <= PFS_MDQ_ROWS_MAX ?
						realloc(v, nc * sizeof(*nv)) : NULL;
					if (!nv)
						break; /* the rest is reported next time */
					v = nv;
					cap = nc;
				}
				snprintf(v[k].job, sizeof(v[k].job), "%s", j->job);
				v[k].cls = (uint8_t)c;
				v[k].value = (double)j->c[c].count;
				j->c[c].count = 0;
				k++;
			}
	pthread_mutex_unlock(&q->lock);
	*rows = v;
	*n = (uint32_t)k;
	return rc;
}

int cli_mdqos_pull(cli_mdqos *q)
{
	pfs_mdq_row *rows;
	uint32_t n;
	pfs_wbuf w;
	pfs_rpc_reply rep = { 0 };
	pfs_mdq_rates r;
	pfs_rbuf b;
	int rc = cli_mdqos_take_usage(q, &rows, &n);

	if (rc)
		return rc;
	pfs_wbuf_init(&w);
	rc = pfs_mdq_usage_encode(&w, rows, n);
	free(rows);
	pfs_rpc_reply_init(&rep);
	if (!rc)
		rc = pfs_rpc_call(q->pool, PFS_OP_MDS_MDQOS_PULL, "", PFS_RPC_IDEMPOTENT, w.data,
				  w.len, NULL, 0, &rep);
	pfs_wbuf_free(&w);
	if (!rc) {
		pfs_rbuf_init(&b, rep.data, rep.len);
		rc = pfs_mdq_rates_decode(&b, &r);
		if (!rc) {
			cli_mdqos_apply(q, &r, pfs_clock_s());
			pfs_mdq_rates_free(&r);
		}
	}
	pfs_rpc_reply_free(&rep);
	return rc;
}

/* The thread's RPCs give up (-EINTR) between attempts once it is told
 * to stop: an unmount must not wait out the recovery window of a call to
 * a dead MDS. */
static int stopping(void *arg)
{
	return __atomic_load_n(&((cli_mdqos *)arg)->stop, __ATOMIC_RELAXED);
}

static void *pull_main(void *arg)
{
	cli_mdqos *q = arg;

	pfs_rpc_set_interrupt(stopping, q);
	int warned = 0;

	pthread_mutex_lock(&q->lock);
	while (!q->stop) {
		pthread_mutex_unlock(&q->lock);
		int rc = cli_mdqos_pull(q);
		pthread_mutex_lock(&q->lock);
		if (rc == -EOPNOTSUPP || rc == -EACCES) {
			pfs_log(PFS_LOG_NOTICE, "mdqos: the MDS does not serve rate pulls (%s): "
				"metadata QoS off on this mount", pfs_strerror(rc));
			q->off = 1;
			break;
		}
		if (rc && !warned++)
			pfs_log(PFS_LOG_WARNING, "mdqos: pull: %s (keeping the last rates)",
				pfs_strerror(rc));
		if (!rc)
			warned = 0;
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		uint64_t ns = (uint64_t)ts.tv_nsec + (uint64_t)(q->period_s * 1e9);
		ts.tv_sec += (time_t)(ns / 1000000000u);
		ts.tv_nsec = (long)(ns % 1000000000u);
		while (!q->stop && pthread_cond_timedwait(&q->cv, &q->lock, &ts) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

int cli_mdqos_start(cli_mdqos *q)
{
	int rc = -pthread_create(&q->thr, NULL, pull_main, q);

	if (!rc)
		q->started = 1;
	return rc;
}

void cli_mdqos_destroy(cli_mdqos *q)
{
	if (!q)
		return;
	pthread_mutex_lock(&q->lock);
	q->stop = 1;
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->lock);
	if (q->started)
		pthread_join(q->thr, NULL);
	for (unsigned b = 0; b < NBUCKETS; b++) {
		struct cjob *j = q->jobs[b];
		while (j) {
			struct cjob *n = j->next;
			free(j);
			j = n;
		}
	}
	pthread_cond_destroy(&q->cv);
	pthread_mutex_destroy(&q->lock);
	free(q);
}
