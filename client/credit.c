/* credit.c — per-OSS RPC credits of the client: RCC grants, weighted
 * per-job slots with lending, and the ASCAR window and rate gap (see
 * credit.h). */
#include "client/credit.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/proto.h"

/* Jobs of one client with RPCs in flight or waiting on one OSS: the fair
 * share is taken over these.  A job beyond the table is not limited by a
 * share (it still counts in urc). */
#define CREDIT_JOBS 32
/* A job counts as active this long after its last RPC ended: a job that
 * sends one request at a time (dd, a checkpoint writer) has nothing in
 * flight between two of them, and must not lose its share then. */
#define CREDIT_ACTIVE_MS 500
/* A credit below a job's share is not lent to a job above its own for
 * this long after that job's last RPC ended: a synchronous writer sends
 * its next request a FUSE round trip after the reply, and a credit lent in
 * that gap would take its share away (anticipation, as in the anticipatory
 * disk scheduler).  Short enough that an idle job's credits are lent at
 * once in practice. */
#define CREDIT_HOLD_US 2000

typedef struct credit_job {
	char job[PFS_JOBID_MAX + 1];
	unsigned inflight, waiting;
	uint64_t last_ms;           /* when its last RPC ended */
	uint64_t last_us;           /* the same, pfs_clock_us */
	double weight;              /* > 0, looked up when the slot was taken */
} credit_job;

static int job_active(const credit_job *j, uint64_t now)
{
	return j->inflight || j->waiting || (j->last_ms && now - j->last_ms < CREDIT_ACTIVE_MS);
}

struct cli_credit {
	pthread_mutex_t lock;
	pthread_cond_t cond;     /* a credit was freed or the grant grew */
	unsigned max;            /* constant */
	unsigned credit;         /* rcc, >= 1; guarded by lock */
	unsigned inflight;       /* urc; guarded by lock */
	unsigned waiting;        /* guarded by lock */
	unsigned peak;           /* guarded by lock */
	uint64_t waits, changes, share_waits; /* guarded by lock */
	credit_job jobs[CREDIT_JOBS]; /* guarded by lock */
	cli_credit_policy pol;   /* set before use */
	cli_ascar_stream *ascar; /* guarded by lock; NULL without ASCAR */
	char name[72];
};

int cli_credit_create(unsigned initial, unsigned max, const char *name, cli_credit **out)
{
	cli_credit *c;

	if (max == 0)
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->cond, NULL);
	c->max = max;
	c->credit = initial ? initial : max;
	c->pol.job_slots = 1;
	snprintf(c->name, sizeof(c->name), "%s", name ? name : "?");
	*out = c;
	return 0;
}

void cli_credit_destroy(cli_credit *c)
{
	if (!c)
		return;
	assert(c->inflight == 0 && c->waiting == 0);
	cli_ascar_stream_destroy(c->ascar);
	pthread_mutex_destroy(&c->lock);
	pthread_cond_destroy(&c->cond);
	free(c);
}

int cli_credit_set_policy(cli_credit *c, const cli_credit_policy *p)
{
	cli_ascar_stream *s = NULL;
	int rc;

	if (p && p->ascar) {
		rc = cli_ascar_stream_create(p->ascar, c->name, &s);
		if (rc)
			return rc;
	}
	pthread_mutex_lock(&c->lock);
	if (p)
		c->pol = *p;
	else
		c->pol = (cli_credit_policy){ .job_slots = 1 };
	cli_ascar_stream_destroy(c->ascar);
	c->ascar = s;
	pthread_mutex_unlock(&c->lock);
	return 0;
}

/* The RPCs that may be in flight now: the credit, at most max, at most
 * the ASCAR window; called with c->lock held. */
static unsigned usable(const cli_credit *c)
{
	unsigned u = c->credit < c->max ? c->credit : c->max;
	unsigned w = c->ascar ? cli_ascar_window(c->ascar) : 0;

	return w && w < u ? w : u;
}

/* The slot of job (created if free), or NULL when the table is full;
 * called with c->lock held. */
static credit_job *job_slot(cli_credit *c, const char *job, uint64_t now)
{
	credit_job *free_slot = NULL;

	if (!job)
		job = "";
	for (unsigned i = 0; i < CREDIT_JOBS; i++) {
		credit_job *j = &c->jobs[i];

		if (job_active(j, now)) {
			if (!strncmp(j->job, job, PFS_JOBID_MAX))
				return j;
		} else if (!free_slot) {
			free_slot = j;
		}
	}
	if (free_slot) {
		double w = c->pol.weight ? c->pol.weight(c->pol.weight_arg, job) : 1;

		snprintf(free_slot->job, sizeof(free_slot->job), "%s", job);
		free_slot->last_ms = 0;
		free_slot->weight = w > 0 && w < 1e12 ? w : 1;
	}
	return free_slot;
}

/* A job's share of lim: max(1, ⌈lim · w / W⌉). */
static unsigned share_of(const credit_job *j, unsigned lim, double wsum)
{
	double sh = ceil((double)lim * j->weight / wsum - 1e-9);

	return sh < 1 ? 1 : sh > lim ? lim : (unsigned)sh;
}

/* May a piece of job j start now?  urc below the usable credit, and when
 * several jobs want this OSS (credit.h "Per-job slots"):
 *  - j below its weighted share, and no other waiting job further below
 *    its own (in-flight / share lower than j's), or
 *  - j at or above its share but no other job waiting (a lent credit).
 * A job with nothing in flight is always below its share (every share is
 * at least 1), so a free credit is never left idle while someone waits
 * for it and no job starves. */
static int may_start(const cli_credit *c, const credit_job *j, int *by_share)
{
	unsigned active = 0, lim = usable(c), sh;
	double wsum = 0, mine;
	int others_wait = 0, before_me = 0;
	uint64_t now, now_us = pfs_clock_us();

	*by_share = 0;
	if (c->inflight >= lim)
		return 0;
	if (!j || !c->pol.job_slots)
		return 1;
	now = pfs_clock_ms();
	for (unsigned i = 0; i < CREDIT_JOBS; i++)
		if (job_active(&c->jobs[i], now)) {
			active++;
			wsum += c->jobs[i].weight;
		}
	if (active <= 1)
		return 1;
	sh = share_of(j, lim, wsum);
	mine = (double)j->inflight / sh;
	for (unsigned i = 0; i < CREDIT_JOBS; i++) {
		const credit_job *k = &c->jobs[i];

		if (k == j || !job_active(k, now))
			continue;
		if (!k->waiting) {
			/* about to send again: hold its unused share */
			if (k->inflight < share_of(k, lim, wsum) && now_us - k->last_us < CREDIT_HOLD_US)
				others_wait = 2;
			continue;
		}
		others_wait = 1;
		if ((double)k->inflight / share_of(k, lim, wsum) < mine)
			before_me = 1;
	}
	if (j->inflight < sh && !before_me)
		return 1;
	if (j->inflight >= sh && !others_wait)
		return 1; /* lent: nobody else wants it now */
	*by_share = others_wait == 2 ? 2 : 1;
	return 0;
}

/* Wait on c->cond at most us microseconds (c->lock held). */
static void wait_us(cli_credit *c, uint64_t us)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += (time_t)(us / 1000000);
	ts.tv_nsec += (long)(us % 1000000) * 1000;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_cond_timedwait(&c->cond, &c->lock, &ts);
}

uint32_t cli_credit_acquire(cli_credit *c, const char *job)
{
	credit_job *j;
	unsigned want;
	int by_share, counted = 0;

	pthread_mutex_lock(&c->lock);
	j = job_slot(c, job, pfs_clock_ms());
	if (j)
		j->waiting++; /* counts this job as active for the shares */
	if (c->ascar)
		cli_ascar_refresh(c->ascar);
	for (;;) {
		int ok = may_start(c, j, &by_share);
		uint64_t gap = ok && c->ascar ? cli_ascar_wait_us(c->ascar, pfs_clock_us()) : 0;

		if (ok && !gap)
			break;
		if (!counted) {
			counted = 1;
			c->waits++;
			c->waiting++;
			if (by_share)
				c->share_waits++;
		}
		if (gap)
			wait_us(c, gap); /* ASCAR's rate gap */
		else if (by_share == 2)
			wait_us(c, CREDIT_HOLD_US / 2); /* a held share */
		else if (by_share || c->ascar)
			/* A share grows without a release when another job
			 * goes quiet (CREDIT_ACTIVE_MS), a window with new
			 * rules: look again now and then. */
			wait_us(c, 50 * 1000);
		else
			pthread_cond_wait(&c->cond, &c->lock);
	}
	if (counted)
		c->waiting--;
	if (j) {
		j->waiting--;
		j->inflight++;
	}
	c->inflight++;
	if (c->inflight > c->peak)
		c->peak = c->inflight;
	if (c->ascar)
		cli_ascar_sent(c->ascar, pfs_clock_us());
	/* cnr: the demand (this RPC, the others in flight, the waiters), at
	 * least the current credit, at most what could be used (credit.h). */
	want = c->inflight + c->waiting;
	if (want < c->credit)
		want = c->credit;
	if (want > c->max)
		want = c->max;
	pthread_mutex_unlock(&c->lock);
	return want;
}

void cli_credit_release(cli_credit *c, const char *job, uint32_t grant)
{
	cli_credit_done(c, job, grant, 0);
}

void cli_credit_done(cli_credit *c, const char *job, uint32_t grant, uint64_t sent_us)
{
	unsigned old;

	pthread_mutex_lock(&c->lock);
	if (c->ascar && sent_us)
		cli_ascar_reply(c->ascar, sent_us, pfs_clock_us());
	assert(c->inflight > 0);
	c->inflight--;
	if (!job)
		job = "";
	for (unsigned i = 0; i < CREDIT_JOBS; i++) {
		credit_job *j = &c->jobs[i];

		if (j->inflight && !strncmp(j->job, job, PFS_JOBID_MAX)) {
			j->inflight--;
			j->last_ms = pfs_clock_ms();
			j->last_us = pfs_clock_us();
			break;
		}
	}
	old = c->credit;
	if (grant && grant != old) {
		c->credit = grant;
		c->changes++;
	}
	/* Who may go depends on the waiter's job (its share), so every
	 * waiter looks again; they are few (at most the FUSE workers). */
	if (c->waiting)
		pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
	if (grant && grant != old)
		pfs_log(PFS_LOG_DEBUG, "osc %s: credit %u -> %u", c->name, old, grant);
}

void cli_credit_stats_get(cli_credit *c, cli_credit_stats *st)
{
	pthread_mutex_lock(&c->lock);
	st->credit = c->credit;
	st->inflight = c->inflight;
	st->waiting = c->waiting;
	st->peak = c->peak;
	st->waits = c->waits;
	st->changes = c->changes;
	st->share_waits = c->share_waits;
	pthread_mutex_unlock(&c->lock);
}

int cli_credit_ascar_stats(cli_credit *c, cli_ascar_stats *st)
{
	int rc = -ENOENT;

	pthread_mutex_lock(&c->lock);
	if (c->ascar) {
		cli_ascar_stream_stats(c->ascar, st);
		rc = 0;
	}
	pthread_mutex_unlock(&c->lock);
	return rc;
}
