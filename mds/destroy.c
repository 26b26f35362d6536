/* destroy.c — drains the destroy log by sending PFS_OP_OSS_DESTROY to OSSes.
 *
 * One thread.  A pass walks the log in sequence order; a record is deleted
 * only after every one of its objects was destroyed (or found missing), so
 * a crash between the two leaves the record and the next pass re-sends
 * destroys, which are idempotent.  Connections: one small pfs_rpc pool per
 * OST index, recreated when the OST's registered address changes.  Connect
 * failures fail fast (retry window 1 ms) so one dead OSS does not stall the
 * pass; its records wait for a later pass.  An object on an OST index the
 * registry does not know can never be reached and counts as gone (logged).
 *
 * Batches.  A round takes up to ROUND_RECS durable records, sends each OST
 * its objects in one PFS_OP_OSS_DESTROY per OSS_BATCH ids (the OSS records
 * them with one write and at most one fdatasync), and deletes the records
 * whose objects are all gone in one transaction: unlinking N files costs
 * about N / ROUND_RECS round trips per OST and commits, not N of each.  An
 * OSS that refuses a batch with -EBADMSG (one that predates batches) gets
 * its objects one per request from then on. */
#include "mds/destroy.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/buf.h"
#include "common/log.h"
#include "common/rpc.h"

#define ROUND_RECS 256 /* records per round */
#define OSS_BATCH 512  /* object ids per DESTROY request */

struct ost_pool {
	char host[64];
	uint16_t port;
	pfs_rpc_pool *pool;
	int single;           /* the OSS takes one id per request */
};

/* One object of a round and the record (index in the round) it is from. */
struct item {
	uint32_t ost;
	uint32_t rec;
	uint64_t obj;
};

struct mds_destroyer {
	mds_ns *ns;
	unsigned interval_ms;
	const struct pfs_auth_key *auth; /* borrowed; NULL = no authentication */
	pthread_t thr;
	pthread_mutex_t lock; /* guards wake, stop */
	pthread_cond_t cv;
	int wake, stop;
	struct ost_pool *pools; /* thread-private */
	uint32_t npools;
	unsigned long destroyed; /* guarded by lock */
};

static pfs_rpc_pool *pool_for(mds_destroyer *d, uint32_t ost, int *down)
{
	char host[64];
	uint16_t port;
	int up, rc;

	*down = 0;
	rc = mds_ns_ost_addr(d->ns, ost, host, &port, &up);
	if (rc)
		return NULL;
	if (!up) {
		*down = 1;
		return NULL;
	}
	if (ost >= d->npools) {
		struct ost_pool *np = realloc(d->pools, (size_t)(ost + 1) * sizeof(*np));
		if (!np) {
			*down = 1;
			return NULL;
		}
		memset(np + d->npools, 0, (size_t)(ost + 1 - d->npools) * sizeof(*np));
		d->pools = np;
		d->npools = ost + 1;
	}
	struct ost_pool *p = &d->pools[ost];
	if (p->pool && (p->port != port || strcmp(p->host, host) != 0)) {
		pfs_rpc_pool_destroy(p->pool);
		p->pool = NULL;
	}
	if (!p->pool) {
		pfs_rpc_opts o = { .max_conns = 2, .timeout_ms = 5000, .retry_ms = 1,
				   .auth = d->auth };
		if (pfs_rpc_pool_create(host, port, &o, &p->pool)) {
			*down = 1;
			return NULL;
		}
		memcpy(p->host, host, sizeof(p->host));
		p->port = port;
		p->single = 0;
	}
	return p->pool;
}

/* 0 when the object is gone, else a negative errno (retry later). */
static int destroy_one(mds_destroyer *d, const pfs_stripe *s)
{
	pfs_rpc_reply rep = { 0 };
	pfs_wbuf b;
	int down, rc;
	pfs_rpc_pool *p = pool_for(d, s->ost, &down);

	if (!p) {
		if (down)
			return -EHOSTDOWN;
		pfs_log(PFS_LOG_WARNING, "destroy: object %llu on unknown OST %u dropped",
			(unsigned long long)s->object, s->ost);
		return 0;
	}
	pfs_wbuf_init(&b);
	pfs_wbuf_u32(&b, s->ost);
	pfs_wbuf_u64(&b, s->object);
	rc = pfs_wbuf_error(&b);
	pfs_rpc_reply_init(&rep);
	if (!rc)
		rc = pfs_rpc_call(p, PFS_OP_OSS_DESTROY, "mds", PFS_RPC_IDEMPOTENT, b.data, b.len,
				  NULL, 0, &rep);
	pfs_rpc_reply_free(&rep);
	pfs_wbuf_free(&b);
	if (rc == -ENOENT)
		rc = 0;
	if (rc)
		pfs_log(PFS_LOG_INFO, "destroy: OST %u object %llu: %s (will retry)", s->ost,
			(unsigned long long)s->object, pfs_strerror(rc));
	return rc;
}

static int stopping(mds_destroyer *d)
{
	int s;

	pthread_mutex_lock(&d->lock);
	s = d->stop;
	pthread_mutex_unlock(&d->lock);
	return s;
}

/* Destroy it[0..n) (all on one OST) in batches; 0 when all are gone, else
 * a negative errno (the round's records of this OST wait for a later one). */
static int destroy_ost(mds_destroyer *d, const struct item *it, size_t n)
{
	uint32_t ost = it[0].ost;
	int down, rc = 0;
	pfs_rpc_pool *p = pool_for(d, ost, &down);

	if (!p) {
		if (down)
			return -EHOSTDOWN;
		pfs_log(PFS_LOG_WARNING, "destroy: %zu object(s) on unknown OST %u dropped", n,
			ost);
		return 0;
	}
	for (size_t i = 0; i < n && !rc;) {
		size_t m = n - i < OSS_BATCH ? n - i : OSS_BATCH;
		struct ost_pool *op = &d->pools[ost];
		pfs_rpc_reply rep = { 0 };
		pfs_wbuf b;

		if (op->single) {
			pfs_stripe st = { .ost = ost, .object = it[i].obj };
			rc = destroy_one(d, &st);
			i++;
			continue;
		}
		pfs_wbuf_init(&b);
		pfs_wbuf_u32(&b, ost);
		for (size_t j = 0; j < m; j++)
			pfs_wbuf_u64(&b, it[i + j].obj);
		rc = pfs_wbuf_error(&b);
		pfs_rpc_reply_init(&rep);
		if (!rc)
			rc = pfs_rpc_call(p, PFS_OP_OSS_DESTROY, "mds", PFS_RPC_IDEMPOTENT, b.data,
					  b.len, NULL, 0, &rep);
		pfs_rpc_reply_free(&rep);
		pfs_wbuf_free(&b);
		if (rc == -EBADMSG && m > 1) {
			pfs_log(PFS_LOG_NOTICE, "destroy: OST %u takes one object per request",
				ost);
			op->single = 1;
			rc = 0;
			continue;
		}
		if (rc == -ENOENT)
			rc = 0;
		if (rc)
			pfs_log(PFS_LOG_INFO, "destroy: OST %u, %zu object(s): %s (will retry)", ost,
				m, pfs_strerror(rc));
		i += m;
	}
	return rc;
}

static int item_cmp(const void *a, const void *b)
{
	const struct item *x = a, *y = b;

	if (x->ost != y->ost)
		return x->ost < y->ost ? -1 : 1;
	return x->obj < y->obj ? -1 : x->obj > y->obj;
}

/* One round from the record after *after: 1 if it took records (more may
 * follow), 0 when the log has no durable record left, -ENOMEM. */
static int round_run(mds_destroyer *d, uint64_t *after, uint64_t *seqs, uint8_t *failed,
		     struct item *it)
{
	pfs_stripe st[MDS_DESTROY_MAX];
	size_t nrec = 0, nit = 0, ndone = 0;
	uint64_t seq;
	uint32_t n;

	while (nrec < ROUND_RECS && !stopping(d) &&
	       mds_ns_destroy_next_durable(d->ns, *after, &seq, st, &n) == 0) {
		*after = seq;
		for (uint32_t i = 0; i < n; i++)
			it[nit++] = (struct item){ .ost = st[i].ost, .rec = (uint32_t)nrec,
						   .obj = st[i].object };
		failed[nrec] = 0;
		seqs[nrec++] = seq;
	}
	if (nrec == 0)
		return 0;
	qsort(it, nit, sizeof(*it), item_cmp);
	for (size_t i = 0; i < nit;) {
		size_t j = i + 1;

		while (j < nit && it[j].ost == it[i].ost)
			j++;
		if (stopping(d) || destroy_ost(d, it + i, j - i))
			for (size_t k = i; k < j; k++)
				failed[it[k].rec] = 1;
		i = j;
	}
	for (size_t r = 0; r < nrec; r++)
		if (!failed[r])
			seqs[ndone++] = seqs[r];
	if (ndone && mds_ns_destroy_done_many(d->ns, seqs, ndone) == 0) {
		pthread_mutex_lock(&d->lock);
		for (size_t k = 0; k < nit; k++)
			d->destroyed += !failed[it[k].rec];
		pthread_mutex_unlock(&d->lock);
	}
	return 1;
}

static void pass(mds_destroyer *d)
{
	uint64_t after = 0, *seqs = malloc(ROUND_RECS * sizeof(*seqs));
	uint8_t *failed = malloc(ROUND_RECS);
	struct item *it = malloc((size_t)ROUND_RECS * MDS_DESTROY_MAX * sizeof(*it));

	if (seqs && failed && it)
		while (!stopping(d) && round_run(d, &after, seqs, failed, it) > 0)
			;
	free(seqs);
	free(failed);
	free(it);
}

static void *destroyer_main(void *arg)
{
	mds_destroyer *d = arg;
	struct timespec ts;

	for (;;) {
		pass(d);
		pthread_mutex_lock(&d->lock);
		ts = pfs_clock_deadline(CLOCK_MONOTONIC, d->interval_ms);
		while (!d->wake && !d->stop)
			if (pthread_cond_timedwait(&d->cv, &d->lock, &ts) == ETIMEDOUT)
				break;
		d->wake = 0;
		if (d->stop) {
			pthread_mutex_unlock(&d->lock);
			break;
		}
		pthread_mutex_unlock(&d->lock);
	}
	return NULL;
}

static void notify_cb(void *arg)
{
	mds_destroyer_wake(arg);
}

int mds_destroyer_start(mds_ns *ns, unsigned interval_ms, mds_destroyer **out)
{
	return mds_destroyer_start_auth(ns, interval_ms, NULL, out);
}

int mds_destroyer_start_auth(mds_ns *ns, unsigned interval_ms, const struct pfs_auth_key *auth,
			     mds_destroyer **out)
{
	mds_destroyer *d = calloc(1, sizeof(*d));
	pthread_condattr_t ca;
	int rc;

	if (!d)
		return -ENOMEM;
	d->ns = ns;
	d->auth = auth;
	d->interval_ms = interval_ms ? interval_ms : 1000;
	pthread_mutex_init(&d->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&d->cv, &ca);
	pthread_condattr_destroy(&ca);
	rc = -pthread_create(&d->thr, NULL, destroyer_main, d);
	if (rc) {
		pthread_cond_destroy(&d->cv);
		pthread_mutex_destroy(&d->lock);
		free(d);
		return rc;
	}
	mds_ns_set_destroy_notify(ns, notify_cb, d);
	*out = d;
	return 0;
}

void mds_destroyer_wake(mds_destroyer *d)
{
	pthread_mutex_lock(&d->lock);
	d->wake = 1;
	pthread_cond_signal(&d->cv);
	pthread_mutex_unlock(&d->lock);
}

unsigned long mds_destroyer_destroyed(mds_destroyer *d)
{
	unsigned long n;

	pthread_mutex_lock(&d->lock);
	n = d->destroyed;
	pthread_mutex_unlock(&d->lock);
	return n;
}

void mds_destroyer_stop(mds_destroyer *d)
{
	if (!d)
		return;
	mds_ns_set_destroy_notify(d->ns, NULL, NULL);
	pthread_mutex_lock(&d->lock);
	d->stop = 1;
	pthread_cond_signal(&d->cv);
	pthread_mutex_unlock(&d->lock);
	pthread_join(d->thr, NULL);
	for (uint32_t i = 0; i < d->npools; i++)
		if (d->pools[i].pool)
			pfs_rpc_pool_destroy(d->pools[i].pool);
	free(d->pools);
	pthread_cond_destroy(&d->cv);
	pthread_mutex_destroy(&d->lock);
	free(d);
}
