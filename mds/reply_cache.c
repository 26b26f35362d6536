/* reply_cache.c — replies of recent requests per (client, request id), for
 * resends (see reply_cache.h).
 *
 * Clients are in a hash table and on a list ordered by last use (the least
 * recently used is dropped above max_clients).  Each client keeps a ring of
 * per_client entries, newest last; a lookup scans it from the newest (a
 * resend is for one of the last few requests).  One mutex guards it all; a
 * resend waiting for its running original sleeps on one condition variable
 * that every recorded reply broadcasts. */
#include "mds/reply_cache.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"

#define NBUCKETS 1024

enum { E_EMPTY = 0, E_RUNNING, E_DONE };

struct entry {
	uint64_t req;
	int state;
	int status;
	int have_data; /* data/len hold the payload (0: too large, re-execute) */
	uint8_t *data;
	size_t len;
};

struct rclient {
	uint64_t id;
	struct entry *ring;  /* per_client entries */
	unsigned head;       /* next slot to fill */
	struct rclient *hnext;
	struct rclient *prev, *next; /* LRU list: most recent at lru_head */
};

struct mds_rcache {
	mds_rcache_opts o;
	pthread_mutex_t lock;
	pthread_cond_t cv;
	struct rclient *bucket[NBUCKETS];
	struct rclient *lru_head, *lru_tail;
	unsigned nclients;
	mds_rcache_stats st;
};

static unsigned bucket_of(uint64_t id)
{
	id ^= id >> 33;
	id *= 0xff51afd7ed558ccdull;
	id ^= id >> 33;
	return (unsigned)(id % NBUCKETS);
}

int mds_rc_create(const mds_rcache_opts *opts, mds_rcache **out)
{
	mds_rcache *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	if (opts)
		c->o = *opts;
	if (!c->o.per_client)
		c->o.per_client = 256;
	if (!c->o.max_clients)
		c->o.max_clients = 4096;
	if (!c->o.max_reply)
		c->o.max_reply = 64 * 1024;
	if (c->o.wait_ms <= 0)
		c->o.wait_ms = 30000;
	pthread_mutex_init(&c->lock, NULL);
	{
		pthread_condattr_t a;

		pthread_condattr_init(&a);
		pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
		pthread_cond_init(&c->cv, &a);
		pthread_condattr_destroy(&a);
	}
	*out = c;
	return 0;
}

static void entry_clear(struct entry *e)
{
	free(e->data);
	memset(e, 0, sizeof(*e));
}

static void client_free(mds_rcache *c, struct rclient *cl)
{
	for (unsigned i = 0; i < c->o.per_client; i++)
		free(cl->ring[i].data);
	free(cl->ring);
	free(cl);
}

void mds_rc_destroy(mds_rcache *c)
{
	if (!c)
		return;
	for (struct rclient *cl = c->lru_head; cl;) {
		struct rclient *n = cl->next;

		client_free(c, cl);
		cl = n;
	}
	pthread_mutex_destroy(&c->lock);
	pthread_cond_destroy(&c->cv);
	free(c);
}

static void lru_unlink(mds_rcache *c, struct rclient *cl)
{
	if (cl->prev)
		cl->prev->next = cl->next;
	else
		c->lru_head = cl->next;
	if (cl->next)
		cl->next->prev = cl->prev;
	else
		c->lru_tail = cl->prev;
	cl->prev = cl->next = NULL;
}

static void lru_push(mds_rcache *c, struct rclient *cl)
{
	cl->next = c->lru_head;
	if (c->lru_head)
		c->lru_head->prev = cl;
	c->lru_head = cl;
	if (!c->lru_tail)
		c->lru_tail = cl;
}

static void client_drop(mds_rcache *c, struct rclient *cl)
{
	struct rclient **pp = &c->bucket[bucket_of(cl->id)];

	while (*pp != cl)
		pp = &(*pp)->hnext;
	*pp = cl->hnext;
	lru_unlink(c, cl);
	client_free(c, cl);
	c->nclients--;
	c->st.evicted++;
}

/* The client's record (moved to the LRU front), created if create; NULL
 * when absent, or out of memory (then nothing is recorded). */
static struct rclient *client_get(mds_rcache *c, uint64_t id, int create)
{
	unsigned b = bucket_of(id);
	struct rclient *cl;

	for (cl = c->bucket[b]; cl; cl = cl->hnext)
		if (cl->id == id)
			break;
	if (cl) {
		lru_unlink(c, cl);
		lru_push(c, cl);
		return cl;
	}
	if (!create)
		return NULL;
	cl = calloc(1, sizeof(*cl));
	if (!cl)
		return NULL;
	cl->ring = calloc(c->o.per_client, sizeof(*cl->ring));
	if (!cl->ring) {
		free(cl);
		return NULL;
	}
	cl->id = id;
	if (c->nclients >= c->o.max_clients && c->lru_tail)
		client_drop(c, c->lru_tail);
	cl->hnext = c->bucket[b];
	c->bucket[b] = cl;
	lru_push(c, cl);
	c->nclients++;
	return cl;
}

static struct entry *entry_find(const mds_rcache *c, struct rclient *cl, uint64_t req)
{
	for (unsigned k = 1; k <= c->o.per_client; k++) {
		struct entry *e = &cl->ring[(cl->head + c->o.per_client - k) % c->o.per_client];

		if (e->state != E_EMPTY && e->req == req)
			return e;
	}
	return NULL;
}

static struct entry *entry_new(mds_rcache *c, struct rclient *cl, uint64_t req)
{
	struct entry *e = &cl->ring[cl->head];

	cl->head = (cl->head + 1) % c->o.per_client;
	entry_clear(e);
	e->req = req;
	e->state = E_RUNNING;
	return e;
}

static int copy_hit(const struct entry *e, mds_rc_hit *hit)
{
	hit->status = e->status;
	hit->data = NULL;
	hit->len = e->len;
	if (e->len) {
		hit->data = malloc(e->len);
		if (!hit->data)
			return -ENOMEM;
		memcpy(hit->data, e->data, e->len);
	}
	return 0;
}

int mds_rc_begin(mds_rcache *c, uint64_t client, uint64_t req, int resend, mds_rc_hit *hit)
{
	struct timespec dl;
	struct rclient *cl;
	struct entry *e;
	int rc = MDS_RC_RUN, waited = 0;

	memset(hit, 0, sizeof(*hit));
	dl = pfs_clock_deadline(CLOCK_MONOTONIC, c->o.wait_ms);
	pthread_mutex_lock(&c->lock);
	for (;;) {
		cl = client_get(c, client, 1);
		if (!cl) {
			rc = MDS_RC_NOTRACK;
			break;
		}
		e = resend ? entry_find(c, cl, req) : NULL;
		if (!e) {
			/* a first send, or a resend of a request not (or no
			 * longer) known: it runs */
			if (resend)
				c->st.reexec++;
			entry_new(c, cl, req);
			break;
		}
		if (e->state == E_DONE && e->have_data) {
			rc = copy_hit(e, hit) ? -ENOMEM : MDS_RC_CACHED;
			if (rc == MDS_RC_CACHED)
				c->st.hits++;
			break;
		}
		if (e->state == E_DONE) {
			/* its reply was too large to keep: run it again */
			c->st.reexec++;
			entry_clear(e);
			e->req = req;
			e->state = E_RUNNING;
			break;
		}
		/* the original still runs: wait for its reply */
		if (!waited++)
			c->st.waits++;
		if (pthread_cond_timedwait(&c->cv, &c->lock, &dl) == ETIMEDOUT) {
			cl = client_get(c, client, 0);
			e = cl ? entry_find(c, cl, req) : NULL;
			if (e && e->state == E_RUNNING) {
				rc = -EBUSY;
				break;
			}
		}
		/* look again: the client or the entry may have gone meanwhile */
	}
	if (rc == MDS_RC_RUN)
		c->st.recorded++;
	pthread_mutex_unlock(&c->lock);
	return rc;
}

void mds_rc_end(mds_rcache *c, uint64_t client, uint64_t req, int status, const void *data,
		size_t len)
{
	struct rclient *cl;
	struct entry *e;

	pthread_mutex_lock(&c->lock);
	cl = client_get(c, client, 0);
	e = cl ? entry_find(c, cl, req) : NULL;
	if (e && e->state == E_RUNNING) {
		e->state = E_DONE;
		e->status = status;
		e->len = 0;
		e->have_data = 0;
		if (len <= c->o.max_reply) {
			e->data = len ? malloc(len) : NULL;
			if (!len || e->data) {
				if (len)
					memcpy(e->data, data, len);
				e->len = len;
				e->have_data = 1;
			}
		}
	}
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->lock);
}

void mds_rc_abandon(mds_rcache *c, uint64_t client, uint64_t req)
{
	struct rclient *cl;
	struct entry *e;

	pthread_mutex_lock(&c->lock);
	cl = client_get(c, client, 0);
	e = cl ? entry_find(c, cl, req) : NULL;
	if (e && e->state == E_RUNNING)
		entry_clear(e);
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->lock);
}

void mds_rc_hit_free(mds_rc_hit *hit)
{
	if (!hit)
		return;
	free(hit->data);
	hit->data = NULL;
	hit->len = 0;
}

void mds_rc_stats(mds_rcache *c, mds_rcache_stats *out)
{
	pthread_mutex_lock(&c->lock);
	*out = c->st;
	out->clients = c->nclients;
	pthread_mutex_unlock(&c->lock);
}
