/* credit.c — per-OSS RPC credits of the client (see credit.h). */
#include "client/credit.h"

#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/log.h"

struct cli_credit {
	pthread_mutex_t lock;
	pthread_cond_t cond;     /* a credit was freed or the grant grew */
	unsigned max;            /* constant */
	unsigned credit;         /* rcc, >= 1; guarded by lock */
	unsigned inflight;       /* urc; guarded by lock */
	unsigned waiting;        /* guarded by lock */
	unsigned peak;           /* guarded by lock */
	uint64_t waits, changes; /* guarded by lock */
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

uint32_t cli_credit_acquire(cli_credit *c)
{
	unsigned want;

	pthread_mutex_lock(&c->lock);
	if (c->inflight >= usable(c)) {
		c->waits++;
		c->waiting++;
		while (c->inflight >= usable(c))
			pthread_cond_wait(&c->cond, &c->lock);
		c->waiting--;
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

void cli_credit_release(cli_credit *c, uint32_t grant)
{
	unsigned old;

	pthread_mutex_lock(&c->lock);
	assert(c->inflight > 0);
	c->inflight--;
	old = c->credit;
	if (grant && grant != old) {
		c->credit = grant;
		c->changes++;
	}
	/* A grown grant may let several waiters go; a freed credit one. */
	if (c->credit > old)
		pthread_cond_broadcast(&c->cond);
	else if (c->waiting)
		pthread_cond_signal(&c->cond);
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
