/* deleg.c — the MDS's table of directory delegations (see deleg.h).
 *
 * One hash table keyed by directory; each entry holds its parked requests
 * as a FIFO list.  Releases collect the requests to run under the mutex
 * and call the release callback after dropping it, in arrival order.  A
 * delegation whose requests must go (recall timeout, expiry, a cap) but
 * which is met on a path that must not run them (mds_deleg_check runs on
 * the server's event loop) is marked due and left to the thread. */
#include "mds/deleg.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/log.h"

#define DBITS 10
#define DBUCKETS (1u << DBITS)
#define TICK_MS 100

typedef struct parked {
	struct parked *next;
	void *req;
} parked;

typedef struct dent {
	uint64_t dir, holder;
	uint64_t expiry;        /* the holder's last request + lease_ms */
	uint64_t recall_at;     /* when the recall began; 0 = none */
	int recalling;
	int due;                /* force expired: the thread releases it */
	parked *ph, *pt;
	unsigned np;
	struct dent *next;
} dent;

struct mds_deleg {
	mds_deleg_opts o;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t thread;
	int have_thread, stop;
	unsigned n;             /* delegations held (atomic: the hot path) */
	unsigned nparked;
	dent *b[DBUCKETS];
	mds_deleg_stats st;
};

/* Requests to release once the mutex is dropped. */
typedef struct rlist {
	parked *h, *t;
} rlist;

static uint64_t now_ms(mds_deleg *d)
{
	return d->o.clock ? d->o.clock(d->o.arg) : pfs_clock_ms();
}

static unsigned hash_dir(uint64_t x)
{
	return (unsigned)((x * 0x9E3779B97F4A7C15ull) >> (64 - DBITS));
}

static dent *find(mds_deleg *d, uint64_t dir)
{
	for (dent *e = d->b[hash_dir(dir)]; e; e = e->next)
		if (e->dir == dir)
			return e;
	return NULL;
}

/* Take e out of the table (under mu); its parked requests go to out. */
static void drop(mds_deleg *d, dent *e, rlist *out)
{
	dent **pp = &d->b[hash_dir(e->dir)];

	while (*pp != e)
		pp = &(*pp)->next;
	*pp = e->next;
	if (e->ph) {
		if (out->t)
			out->t->next = e->ph;
		else
			out->h = e->ph;
		out->t = e->pt;
	}
	d->nparked -= e->np;
	__atomic_sub_fetch(&d->n, 1, __ATOMIC_RELAXED);
	free(e);
}

/* Outside mu: run (status 0) or answer what was released. */
static void run_list(mds_deleg *d, rlist *l, int status)
{
	for (parked *p = l->h, *nx; p; p = nx) {
		nx = p->next;
		d->o.release(d->o.arg, p->req, status);
		free(p);
	}
	l->h = l->t = NULL;
}

static void start_recall(mds_deleg *d, dent *e, uint64_t now)
{
	if (e->recalling)
		return;
	e->recalling = 1;
	e->recall_at = now;
	d->st.recalls++;
	if (d->o.recall && d->o.recall(d->o.arg, e->holder, e->dir) < 0) {
		/* nobody will answer: no point waiting recall_ms */
		pfs_log(PFS_LOG_INFO, "deleg: directory %llu: client %016llx cannot hear "
			"the recall, delegation taken back", (unsigned long long)e->dir,
			(unsigned long long)e->holder);
		d->st.unheard++;
		e->due = 1;
		pthread_cond_signal(&d->cv);
	}
}

static int expired(const dent *e, uint64_t now)
{
	return now >= e->expiry;
}

int mds_deleg_any(mds_deleg *d)
{
	return d && __atomic_load_n(&d->n, __ATOMIC_RELAXED) != 0;
}

int mds_deleg_get(mds_deleg *d, uint64_t client, uint64_t dir, uint32_t *lease_ms)
{
	rlist out = { NULL, NULL }; /* stays empty: expired only without requests */
	uint64_t now;
	dent *e;
	int rc = 0;

	pthread_mutex_lock(&d->mu);
	now = now_ms(d);
	e = find(d, dir);
	if (e && !e->due && !e->np && expired(e, now)) {
		d->st.expired++;
		drop(d, e, &out);
		e = NULL;
	}
	if (e) {
		if (e->holder != client)
			start_recall(d, e, now); /* someone else wants it */
		if (e->holder != client || e->recalling || e->due) {
			d->st.refusals++;
			rc = -EAGAIN;
		} else {
			e->expiry = now + d->o.lease_ms;
			d->st.renewals++;
		}
	} else if (__atomic_load_n(&d->n, __ATOMIC_RELAXED) >= d->o.max_delegs ||
		   !(e = calloc(1, sizeof(*e)))) {
		d->st.refusals++;
		rc = -EAGAIN;
	} else {
		unsigned b = hash_dir(dir);

		e->dir = dir;
		e->holder = client;
		e->expiry = now + d->o.lease_ms;
		e->next = d->b[b];
		d->b[b] = e;
		__atomic_add_fetch(&d->n, 1, __ATOMIC_RELAXED);
		d->st.grants++;
	}
	pthread_mutex_unlock(&d->mu);
	if (!rc && lease_ms)
		*lease_ms = d->o.lease_ms;
	return rc;
}

int mds_deleg_return(mds_deleg *d, uint64_t client, uint64_t dir)
{
	rlist out = { NULL, NULL };
	dent *e;

	pthread_mutex_lock(&d->mu);
	e = find(d, dir);
	if (e && e->holder == client) {
		d->st.returns++;
		drop(d, e, &out);
	}
	pthread_mutex_unlock(&d->mu);
	run_list(d, &out, 0);
	return 0;
}

int mds_deleg_check(mds_deleg *d, uint64_t client, const uint64_t *dirs, unsigned n, void *req)
{
	rlist out = { NULL, NULL }; /* stays empty: dropped here only without requests */
	parked *p = NULL;
	uint64_t now;
	int rc = 0, wake = 0;

	if (!mds_deleg_any(d) || !n)
		return 0;
	pthread_mutex_lock(&d->mu);
	now = now_ms(d);
	for (unsigned i = 0; i < n && !rc; i++) {
		dent *e = find(d, dirs[i]);

		if (!e || e->due)
			continue;
		if (expired(e, now)) {
			/* forgotten; parked requests go by the thread */
			if (e->np) {
				e->due = 1;
				wake = 1;
			} else {
				d->st.expired++;
				drop(d, e, &out);
			}
			continue;
		}
		if (e->holder == client) {
			e->expiry = now + d->o.lease_ms; /* the holder's request: renew */
			continue;
		}
		if (e->np >= d->o.max_parked_dir || d->nparked >= d->o.max_parked ||
		    !(p = malloc(sizeof(*p)))) {
			/* cannot park: take the delegation back (the holder's
			 * late unlinks are conditional) and run the request */
			pfs_log(PFS_LOG_NOTICE, "deleg: directory %llu: %u requests parked, "
				"delegation of client %016llx taken back",
				(unsigned long long)e->dir, e->np, (unsigned long long)e->holder);
			d->st.forced++;
			if (e->np) {
				e->due = 1;
				wake = 1;
			} else {
				drop(d, e, &out);
			}
			continue;
		}
		p->next = NULL;
		p->req = req;
		if (e->pt)
			e->pt->next = p;
		else
			e->ph = p;
		e->pt = p;
		e->np++;
		d->nparked++;
		d->st.parked++;
		start_recall(d, e, now);
		rc = 1;
	}
	if (wake)
		pthread_cond_signal(&d->cv);
	pthread_mutex_unlock(&d->mu);
	return rc;
}

void mds_deleg_recall_all(mds_deleg *d)
{
	uint64_t now;

	if (!mds_deleg_any(d))
		return;
	pthread_mutex_lock(&d->mu);
	now = now_ms(d);
	for (unsigned i = 0; i < DBUCKETS; i++)
		for (dent *e = d->b[i]; e; e = e->next)
			if (!e->due)
				start_recall(d, e, now);
	pthread_mutex_unlock(&d->mu);
}

void mds_deleg_tick(mds_deleg *d)
{
	rlist out = { NULL, NULL };
	uint64_t now;

	if (!mds_deleg_any(d))
		return;
	pthread_mutex_lock(&d->mu);
	now = now_ms(d);
	for (unsigned i = 0; i < DBUCKETS; i++)
		for (dent *e = d->b[i], *nx; e; e = nx) {
			nx = e->next;
			if (e->due) {
				drop(d, e, &out);
			} else if (e->recalling && now - e->recall_at >= d->o.recall_ms) {
				pfs_log(PFS_LOG_INFO, "deleg: recall of directory %llu from "
					"client %016llx timed out after %u ms (%u requests parked)",
					(unsigned long long)e->dir, (unsigned long long)e->holder,
					d->o.recall_ms, e->np);
				d->st.timeouts++;
				drop(d, e, &out);
			} else if (expired(e, now)) {
				d->st.expired++;
				drop(d, e, &out);
			}
		}
	pthread_mutex_unlock(&d->mu);
	run_list(d, &out, 0);
}

uint64_t mds_deleg_holder(mds_deleg *d, uint64_t dir)
{
	uint64_t h = 0;
	dent *e;

	if (!mds_deleg_any(d))
		return 0;
	pthread_mutex_lock(&d->mu);
	e = find(d, dir);
	if (e && !e->due)
		h = e->holder;
	pthread_mutex_unlock(&d->mu);
	return h;
}

void mds_deleg_get_stats(mds_deleg *d, mds_deleg_stats *st)
{
	pthread_mutex_lock(&d->mu);
	*st = d->st;
	st->parked_now = d->nparked;
	st->held_now = __atomic_load_n(&d->n, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&d->mu);
}

static void *deleg_thread(void *arg)
{
	mds_deleg *d = arg;

	pthread_mutex_lock(&d->mu);
	while (!d->stop) {
		struct timespec ts = pfs_clock_deadline(CLOCK_REALTIME, TICK_MS);

		pthread_cond_timedwait(&d->cv, &d->mu, &ts);
		if (d->stop)
			break;
		pthread_mutex_unlock(&d->mu);
		mds_deleg_tick(d);
		pthread_mutex_lock(&d->mu);
	}
	pthread_mutex_unlock(&d->mu);
	return NULL;
}

int mds_deleg_create(const mds_deleg_opts *o, mds_deleg **out)
{
	mds_deleg *d;
	int rc;

	if (!o->release)
		return -EINVAL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->o = *o;
	if (!d->o.lease_ms)
		d->o.lease_ms = MDS_DELEG_LEASE_MS_DEFAULT;
	if (!d->o.recall_ms)
		d->o.recall_ms = MDS_DELEG_RECALL_MS_DEFAULT;
	if (!d->o.max_delegs)
		d->o.max_delegs = 4096;
	if (!d->o.max_parked_dir)
		d->o.max_parked_dir = 1024;
	if (!d->o.max_parked)
		d->o.max_parked = 16384;
	pthread_mutex_init(&d->mu, NULL);
	pthread_cond_init(&d->cv, NULL);
	if (!d->o.no_thread) {
		rc = pthread_create(&d->thread, NULL, deleg_thread, d);
		if (rc) {
			pthread_cond_destroy(&d->cv);
			pthread_mutex_destroy(&d->mu);
			free(d);
			return -rc;
		}
		d->have_thread = 1;
	}
	*out = d;
	return 0;
}

void mds_deleg_destroy(mds_deleg *d)
{
	rlist out = { NULL, NULL };

	if (!d)
		return;
	if (d->have_thread) {
		pthread_mutex_lock(&d->mu);
		d->stop = 1;
		pthread_cond_signal(&d->cv);
		pthread_mutex_unlock(&d->mu);
		pthread_join(d->thread, NULL);
	}
	pthread_mutex_lock(&d->mu);
	for (unsigned i = 0; i < DBUCKETS; i++)
		while (d->b[i])
			drop(d, d->b[i], &out);
	pthread_mutex_unlock(&d->mu);
	run_list(d, &out, -ESHUTDOWN);
	pthread_cond_destroy(&d->cv);
	pthread_mutex_destroy(&d->mu);
	free(d);
}
