/* sched.c — the NRS frame of one OST (locking, sleeping, shutdown, caps,
 * emulated device pacing, RCC, statistics) and the FIFO discipline (see
 * sched.h). */
#include "oss/sched.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "qos/bucket.h"

#include "common/clock.h"

#define US_PER_S 1000000.0

struct oss_sched_budget {
	_Atomic uint64_t rpcs, bytes;
	uint64_t max_rpcs, max_bytes;
};

struct oss_sched {
	const oss_sched_class *cls;
	oss_sched_budget *budget;    /* borrowed, atomic */
	uint32_t job_max_rpcs;       /* constant after create */
	uint64_t job_max_bytes;
	int paced;                   /* constant: pace_b or pace_i has a rate */
	pthread_mutex_t lock;        /* the OST's request-path lock: guards all below */
	pthread_cond_t cond;
	void *priv;
	int shutdown;
	unsigned queued;
	uint64_t queued_bytes;
	unsigned sleepers;
	uint64_t served_io_rpcs, served_bytes, busy_rpcs;
	uint64_t last_arrival;       /* latest arrival time handed out */
	oss_jobstats *jobs;
	qos_bucket pace_b, pace_i;   /* emulated device: bytes, RPCs (rate 0 = off) */
	oss_rcc_srv *rcc;            /* NULL = no RCC */
};

uint64_t oss_sched_now_us(void)
{
	return pfs_clock_us();
}

static double secs(uint64_t us) { return (double)us / US_PER_S; }

/* ---- per-OSS budget ---- */

int oss_sched_budget_create(uint64_t max_rpcs, uint64_t max_bytes, oss_sched_budget **out)
{
	oss_sched_budget *b = calloc(1, sizeof(*b));

	if (!b)
		return -ENOMEM;
	atomic_init(&b->rpcs, 0);
	atomic_init(&b->bytes, 0);
	b->max_rpcs = max_rpcs;
	b->max_bytes = max_bytes;
	*out = b;
	return 0;
}

void oss_sched_budget_destroy(oss_sched_budget *b) { free(b); }

void oss_sched_budget_used(oss_sched_budget *b, uint64_t *rpcs, uint64_t *bytes)
{
	*rpcs = atomic_load(&b->rpcs);
	*bytes = atomic_load(&b->bytes);
}

/* Reserve room for one request; 0 or -EBUSY.  Add first, then check, so
 * two OSTs racing for the last slot can both lose but never both win. */
static int budget_take(oss_sched_budget *b, uint64_t bytes)
{
	uint64_t r = atomic_fetch_add(&b->rpcs, 1) + 1;
	uint64_t y = atomic_fetch_add(&b->bytes, bytes) + bytes;

	if ((b->max_rpcs && r > b->max_rpcs) || (b->max_bytes && y > b->max_bytes)) {
		atomic_fetch_sub(&b->rpcs, 1);
		atomic_fetch_sub(&b->bytes, bytes);
		return -EBUSY;
	}
	return 0;
}

static void budget_put(oss_sched_budget *b, uint64_t bytes)
{
	atomic_fetch_sub(&b->rpcs, 1);
	atomic_fetch_sub(&b->bytes, bytes);
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

/* ---- lifetime ---- */

int oss_sched_create(const oss_sched_class *cls, oss_sched **out)
{
	oss_sched_opts o = { .cls = cls };

	return oss_sched_create_opts(&o, out);
}

int oss_sched_create_opts(const oss_sched_opts *o, oss_sched **out)
{
	oss_sched *s;
	pthread_condattr_t ca;
	double now = secs(oss_sched_now_us());
	int rc;

	if (!isfinite(o->pace_bps) || o->pace_bps < 0 || !isfinite(o->pace_iops) ||
	    o->pace_iops < 0)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->cls = o->cls ? o->cls : &oss_sched_fifo;
	s->budget = o->budget;
	s->job_max_rpcs = o->job_max_rpcs;
	s->job_max_bytes = o->job_max_bytes;
	/* Depth: one largest request of bytes, one RPC; the debt model
	 * (take after pick) keeps the long-run rate exact. */
	qos_bucket_init(&s->pace_b, o->pace_bps, PFS_MAX_IO, now);
	qos_bucket_init(&s->pace_i, o->pace_iops, 1, now);
	s->paced = o->pace_bps > 0 || o->pace_iops > 0;
	rc = oss_jobstats_create(o->jobs_max ? o->jobs_max : OSS_SCHED_JOBS_MAX, &s->jobs);
	if (rc)
		goto fail;
	if (o->rcc) {
		rc = oss_rcc_srv_create(o->rcc, o->rcc_clients_max, now, &s->rcc);
		if (rc)
			goto fail;
	}
	rc = s->cls->create(&s->priv);
	if (rc)
		goto fail;
	pthread_mutex_init(&s->lock, NULL);
	/* Timed waits (TBF, pacing) use the monotonic clock, like arrival times. */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cond, &ca);
	pthread_condattr_destroy(&ca);
	*out = s;
	return 0;
fail:
	oss_rcc_srv_destroy(s->rcc);
	oss_jobstats_destroy(s->jobs);
	free(s);
	return rc;
}

void oss_sched_destroy(oss_sched *s)
{
	if (!s)
		return;
	s->cls->destroy(s->priv);
	oss_rcc_srv_destroy(s->rcc);
	oss_jobstats_destroy(s->jobs);
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

const char *oss_sched_name(const oss_sched *s) { return s->cls->name; }
const oss_sched_class *oss_sched_class_of(const oss_sched *s) { return s->cls; }

/* ---- request path ---- */

/* Account r as dispatched at now (mu held): what oss_sched_dequeue does
 * for the request it returns. */
static void served(oss_sched *s, oss_req *r, uint64_t now)
{
	uint64_t wait = now > r->arrival_us ? now - r->arrival_us : 0;
	int opc = oss_opc(r->opcode);

	s->queued--;
	s->queued_bytes -= r->bytes;
	if (s->budget)
		budget_put(s->budget, r->bytes);
	oss_jobstat_serve(r->job_priv, opc, r->bytes, wait, r->limited, now);
	if (opc != OSS_OPC_OTHER) {
		s->served_io_rpcs++;
		s->served_bytes += r->bytes;
		if (s->pace_b.rate > 0)
			qos_bucket_take(&s->pace_b, (double)r->bytes, secs(now));
		if (s->pace_i.rate > 0)
			qos_bucket_take(&s->pace_i, 1, secs(now));
	}
}

/* enqueue, and with at_once != NULL: when r is the only request queued,
 * the device is not paced and the class picks r at once, r is dispatched
 * right here (*at_once = 1: the caller serves it itself, no I/O thread
 * woken) */
static int enqueue(oss_sched *s, oss_req *r, int *at_once)
{
	oss_jobstat *j;
	int rc = 0, reserved = 0;

	r->job[PFS_JOBID_MAX] = '\0';
	r->limited = 0;
	r->rcc_priv = NULL;
	pthread_mutex_lock(&s->lock);
	if (!r->arrival_us) {
		/* Strictly increasing per OST, so two requests that arrive in
		 * the same microsecond still have their arrival order in the
		 * timestamps the class orders by (TBF deadlines), rather than
		 * a tie broken by rule rank. */
		uint64_t now = oss_sched_now_us();
		r->arrival_us = now > s->last_arrival ? now : s->last_arrival + 1;
		s->last_arrival = r->arrival_us;
	}
	if (s->shutdown) {
		rc = -ESHUTDOWN;
		goto out;
	}
	j = oss_jobstats_get(s->jobs, r->job);
	if (!j) {
		s->busy_rpcs++; /* job table full: refuse rather than grow */
		rc = -EBUSY;
		goto out;
	}
	if (oss_jobstat_queued(j) &&
	    ((s->job_max_rpcs && oss_jobstat_queued(j) >= s->job_max_rpcs) ||
	     (s->job_max_bytes && oss_jobstat_queued_bytes(j) + r->bytes > s->job_max_bytes)))
		rc = -EBUSY;
	else if (s->budget && budget_take(s->budget, r->bytes))
		rc = -EBUSY;
	else
		reserved = 1;
	if (rc) {
		oss_jobstat_busy(j, r->arrival_us);
		s->busy_rpcs++;
		goto out;
	}
	r->job_priv = j;
	rc = s->cls->add(s->priv, r, r->arrival_us);
	if (rc)
		goto out; /* the job record stays; idle ones are pruned later */
	oss_jobstat_arrive(j, r->bytes, r->arrival_us);
	s->queued++;
	s->queued_bytes += r->bytes;
	/* RCC measures congestion.  A request a rate rule holds (limited)
	 * waits by policy, not because the OST is slow: counted in D it made
	 * every client of the throttled job look congested, so their credit
	 * fell to RCCmin and the client's other jobs queued behind the
	 * throttled one.  Its reply carries no grant (the client keeps its
	 * credit); its backlog is bounded by the per-job caps (-EBUSY) and by
	 * the client's fair share of its credit per job (client/credit.h). */
	if (s->rcc && !r->limited)
		r->rcc_priv = oss_rcc_srv_recv(s->rcc, r->client_id, secs(r->arrival_us));
	if (at_once && s->queued == 1 && !s->paced) {
		uint64_t wake_at = UINT64_MAX, t = oss_sched_now_us();

		if (s->cls->pick(s->priv, t, &wake_at) == r) {
			served(s, r, t);
			*at_once = 1;
			goto out;
		}
		/* not at once (a rule holds it): queued as any other */
	}
	if (s->sleepers)
		pthread_cond_signal(&s->cond);
out:
	if (rc && reserved && s->budget)
		budget_put(s->budget, r->bytes);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int oss_sched_enqueue(oss_sched *s, oss_req *r)
{
	return enqueue(s, r, NULL);
}

int oss_sched_enqueue_now(oss_sched *s, oss_req *r, int *now)
{
	*now = 0;
	return enqueue(s, r, now);
}

/* Seconds until the emulated device can take another request (0: now).
 * Debt model: the buckets must be out of debt, not hold a whole request. */
static double pace_wait(const oss_sched *s, double now)
{
	double w = 0;

	if (s->pace_b.rate > 0) {
		double t = qos_bucket_peek(&s->pace_b, now);
		if (t < 0)
			w = -t / s->pace_b.rate;
	}
	if (s->pace_i.rate > 0) {
		double t = qos_bucket_peek(&s->pace_i, now);
		if (t < 0 && -t / s->pace_i.rate > w)
			w = -t / s->pace_i.rate;
	}
	return w;
}

static uint64_t us_after(uint64_t now, double wait_s)
{
	double us = ceil(wait_s * US_PER_S);

	/* Round up so the wake-up is not a microsecond early and spins; cap
	 * at an hour (a control call or an enqueue wakes us anyway). */
	return now + (us < 3600e6 ? (uint64_t)us + 1 : (uint64_t)3600e6);
}

int oss_sched_dequeue(oss_sched *s, oss_req **out)
{
	oss_req *r;
	uint64_t now;
	int rc = 0;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		uint64_t wake_at = UINT64_MAX;

		now = oss_sched_now_us();

		r = NULL;
		if (s->paced && s->queued && !s->shutdown) {
			double w = pace_wait(s, secs(now));
			if (w > 0)
				wake_at = us_after(now, w);
		}
		if (wake_at == UINT64_MAX) {
			r = s->cls->pick(s->priv, s->shutdown ? UINT64_MAX : now, &wake_at);
			if (r)
				break;
			if (s->shutdown && s->queued == 0) {
				rc = -ESHUTDOWN;
				goto out;
			}
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
	/* The time of the pick is the dispatch time: one clock read. */
	served(s, r, now);
	*out = r;
out:
	pthread_mutex_unlock(&s->lock);
	return rc;
}

uint32_t oss_sched_done(oss_sched *s, oss_req *r)
{
	uint32_t credit;

	if (!s->rcc)
		return 0;
	pthread_mutex_lock(&s->lock);
	credit = oss_rcc_srv_reply(s->rcc, r->rcc_priv, secs(r->arrival_us), r->cnr,
				   secs(oss_sched_now_us()));
	pthread_mutex_unlock(&s->lock);
	r->rcc_priv = NULL;
	return credit;
}

uint32_t oss_sched_busy_credit(const oss_sched *s)
{
	return s->rcc ? oss_rcc_srv_min(s->rcc) : 0; /* constant: no lock */
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
	rc = fn(cls->control_state ? cls->control_state(s->priv) : s->priv,
		oss_sched_now_us(), arg);
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

/* ---- statistics ---- */

unsigned oss_sched_queued(oss_sched *s)
{
	unsigned n;

	pthread_mutex_lock(&s->lock);
	n = s->queued;
	pthread_mutex_unlock(&s->lock);
	return n;
}

void oss_sched_info_get(oss_sched *s, oss_sched_info *out)
{
	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&s->lock);
	out->queued = s->queued;
	out->queued_bytes = s->queued_bytes;
	out->served_io_rpcs = s->served_io_rpcs;
	out->served_bytes = s->served_bytes;
	out->busy_rpcs = s->busy_rpcs;
	out->jobs = oss_jobstats_count(s->jobs);
	if (s->rcc)
		oss_rcc_srv_info(s->rcc, &out->rcc);
	pthread_mutex_unlock(&s->lock);
}

int oss_sched_jobs(oss_sched *s, int clock, int reset, oss_job_snap **out, size_t *n)
{
	int rc;

	pthread_mutex_lock(&s->lock);
	rc = oss_jobstats_snapshot(s->jobs, clock, reset, out, n);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

void oss_sched_maintain(oss_sched *s, uint64_t idle_us)
{
	uint64_t now = oss_sched_now_us();

	pthread_mutex_lock(&s->lock);
	oss_jobstats_prune(s->jobs, idle_us, now);
	if (s->rcc)
		oss_rcc_srv_sweep(s->rcc, secs(now));
	pthread_mutex_unlock(&s->lock);
}

int oss_sched_stats(oss_sched *s, int mode, pfs_job_stats **out, size_t *n)
{
	oss_job_snap *v;
	pfs_job_stats *o = NULL;
	size_t k;
	int rc;

	*out = NULL;
	*n = 0;
	if (mode < OSS_SCHED_TOTAL || mode > OSS_SCHED_PERIOD_RESET)
		return -EINVAL;
	rc = oss_sched_jobs(s, mode == OSS_SCHED_TOTAL ? OSS_CLOCK_TOTAL : OSS_CLOCK_MDS,
			    mode == OSS_SCHED_PERIOD_RESET, &v, &k);
	if (rc)
		return rc;
	if (k) {
		o = calloc(k, sizeof(*o));
		if (!o) {
			free(v);
			return -ENOMEM;
		}
	}
	for (size_t i = 0; i < k; i++) {
		memcpy(o[i].job, v[i].job, sizeof(o[i].job));
		o[i].read_rpcs = v[i].c.rpcs[OSS_OPC_READ];
		o[i].write_rpcs = v[i].c.rpcs[OSS_OPC_WRITE];
		o[i].other_rpcs = v[i].c.rpcs[OSS_OPC_OTHER];
		o[i].read_bytes = v[i].c.bytes[OSS_OPC_READ];
		o[i].write_bytes = v[i].c.bytes[OSS_OPC_WRITE];
		o[i].wait_us_sum = v[i].c.wait_us;
		o[i].queued = v[i].queued;
	}
	free(v);
	*out = o;
	*n = k;
	return 0;
}
