/* credit.c — per-OSS RPC credits of the client (see credit.h). */
#include "client/credit.h"

#include <assert.h>
#include <errno.h>
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

typedef struct credit_job {
	char job[PFS_JOBID_MAX + 1];
	unsigned inflight, waiting;
	uint64_t last_ms;           /* when its last RPC ended */
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
	uint64_t waits, changes; /* guarded by lock */
	credit_job jobs[CREDIT_JOBS]; /* guarded by lock */
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
	snprintf(c->name, sizeof(c->name), "%s", name ? name : "?");
	*out = c;
	return 0;
}

void cli_credit_destroy(cli_credit *c)
{
	if (!c)
		return;
	assert(c->inflight == 0 && c->waiting == 0);
	pthread_mutex_destroy(&c->lock);
	pthread_cond_destroy(&c->cond);
	free(c);
}

/* The RPCs that may be in flight now; called with c->lock held. */
static unsigned usable(const cli_credit *c)
{
	return c->credit < c->max ? c->credit : c->max;
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
		snprintf(free_slot->job, sizeof(free_slot->job), "%s", job);
		free_slot->last_ms = 0;
	}
	return free_slot;
}

/* May a piece of job j start now?  urc below the credit, and when several
 * jobs want this OSS, j below its fair share ⌈usable / jobs⌉ (so a
 * throttled job whose RPCs wait long in the OSS's queue cannot hold every
 * credit of the client while another job's request waits behind it).
 * The shares add up to at least the credit, and a job with nothing in
 * flight is always under its share, so a free credit is never left idle
 * while someone waits for it. */
static int may_start(const cli_credit *c, const credit_job *j, int *by_share)
{
	unsigned active = 0, lim = usable(c);
	uint64_t now;

	*by_share = 0;
	if (c->inflight >= lim)
		return 0;
	if (!j || j->inflight == 0) /* every share is at least 1 */
		return 1;
	now = pfs_clock_ms();
	for (unsigned i = 0; i < CREDIT_JOBS; i++)
		active += job_active(&c->jobs[i], now);
	if (active <= 1 || j->inflight < (lim + active - 1) / active)
		return 1;
	*by_share = 1;
	return 0;
}

uint32_t cli_credit_acquire(cli_credit *c, const char *job)
{
	credit_job *j;
	unsigned want;
	int by_share;

	pthread_mutex_lock(&c->lock);
	j = job_slot(c, job, pfs_clock_ms());
	if (j)
		j->waiting++; /* counts this job as active for the shares */
	if (!may_start(c, j, &by_share)) {
		c->waits++;
		c->waiting++;
		while (!may_start(c, j, &by_share)) {
			/* A share grows without a release when another job goes
			 * quiet (CREDIT_ACTIVE_MS): look again now and then. */
			if (by_share) {
				struct timespec ts;

				clock_gettime(CLOCK_REALTIME, &ts);
				ts.tv_nsec += 50 * 1000000L;
				if (ts.tv_nsec >= 1000000000L) {
					ts.tv_sec++;
					ts.tv_nsec -= 1000000000L;
				}
				pthread_cond_timedwait(&c->cond, &c->lock, &ts);
			} else {
				pthread_cond_wait(&c->cond, &c->lock);
			}
		}
		c->waiting--;
	}
	if (j) {
		j->waiting--;
		j->inflight++;
	}
	c->inflight++;
	if (c->inflight > c->peak)
		c->peak = c->inflight;
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
	unsigned old;

	pthread_mutex_lock(&c->lock);
	assert(c->inflight > 0);
	c->inflight--;
	if (!job)
		job = "";
	for (unsigned i = 0; i < CREDIT_JOBS; i++) {
		credit_job *j = &c->jobs[i];

		if (j->inflight && !strncmp(j->job, job, PFS_JOBID_MAX)) {
			j->inflight--;
			j->last_ms = pfs_clock_ms();
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
	pthread_mutex_unlock(&c->lock);
}
