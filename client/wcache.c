/* wcache.c — mount.pfs's write-back cache (see wcache.h).
 *
 * Structures, all under cli_wc.lock:
 *   wchunk  one chunk of one file with dirty bytes: its dirty extents, and
 *           while a flusher writes it (busy) the extents in flight.  Found
 *           by (file, index) in a hash table; linked in its file's list,
 *           and, while it has dirty extents and is not busy, in one of two
 *           queues: `ready` (full, or its file is being flushed) and `aged`
 *           (first dirtied order).
 *   wext    one dirty extent: bytes of one writer (owner, job) inside one
 *           chunk; the extents of a chunk are sorted and disjoint.
 *   wost    per OST: dirty bytes, grant G, U (grant charged to cached
 *           bytes), S (cost of uncached writes in flight), the cost of
 *           WRITEs finished so far (to correct GRANT replies).
 *   wjob    per job: dirty bytes and chunks being written (a small table;
 *           a slot is reused once both are 0; when full, jobs share the
 *           last slot).
 * Memory copies into the cache happen under the lock; the writes to the
 * OSSes and the grant requests never do. */
#include "client/wcache.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/proto.h"

#define WC_HASH 65536u
#define WC_JOBS 64u
/* A job whose cached bytes all went out still counts as sharing the
 * mount for this long (its next write is usually close behind). */
#define WC_JOB_LINGER_MS 500u
/* An idle flusher sleeps until the next thing falls due (flusher_sleep_ms),
 * at most this long. */
#define WC_IDLE_MS 1000u

typedef struct wjob {
	char name[PFS_JOBID_MAX + 1];
	uint64_t bytes;
	unsigned flushing; /* its chunks being written now (flush_chunk) */
	int linger;        /* bytes 0 since idle_ms, still counted in njobs */
	uint64_t idle_ms;
} wjob;

typedef struct wext {
	struct wext *next;
	uint64_t off;
	size_t len, cap;
	uint8_t *buf;
	void *owner;
	wjob *job;
} wext;

enum { Q_NONE, Q_AGED, Q_READY };

typedef struct wchunk {
	cli_wc_file *f;
	uint64_t idx;
	uint32_t ost;
	wext *dirty, *flight;
	uint64_t dbytes, fbytes;  /* bytes in dirty / in flight */
	uint64_t gdirty, gflight; /* grant charged to them */
	uint64_t since_ms;        /* when dirty became non-empty */
	wjob *fjob;               /* while busy: the job counted as flushing it */
	int busy;
	int q;
	struct wchunk *hnext;
	struct wchunk *fprev, *fnext;
	struct wchunk *qprev, *qnext;
} wchunk;

typedef struct wost {
	uint64_t bytes;
	uint64_t G, U, S;
	uint64_t done;    /* grant cost of WRITEs finished (monotonic) */
	int asking;
	uint64_t asked_ms;
} wost;

typedef struct wqueue {
	wchunk *head, *tail;
} wqueue;

struct cli_wc_file {
	cli_wc *wc;
	uint64_t id;
	pfs_layout layout;
	uint64_t chunk;
	wchunk *chunks;
	uint64_t bytes;
	uint64_t end;
	int err;
	unsigned urgent;  /* callers flushing it now */
};

struct cli_wc {
	cli_wc_opts o;
	pthread_mutex_t lock;
	pthread_cond_t work;  /* flushers: something to do */
	pthread_cond_t done;  /* flushes finished, room made, grant answered */
	wchunk **hash;
	wqueue ready, aged;
	uint64_t total;
	wost *ost;
	uint32_t nost;
	wjob jobs[WC_JOBS];
	unsigned njobs;       /* jobs with cached bytes, or lingering */
	unsigned nlinger;     /* jobs lingering (wjob.linger) */
	unsigned waiters;     /* writers waiting for room or grant cover */
	unsigned drain;       /* callers that need every chunk flushed soon */
	int skipped;          /* pick passed a chunk over its job's share */
	unsigned fbusy;       /* flusher threads writing a chunk */
	int stop;
	pthread_t *thr;
	unsigned nthr;
	uint64_t keep_ms;
	cli_wc_stats st;
};

/* ---- small helpers ---- */

static size_t hslot(const cli_wc_file *f, uint64_t idx)
{
	uint64_t h = ((uint64_t)(uintptr_t)f >> 4) * 0x9E3779B97F4A7C15ull ^
		     idx * 0xC2B2AE3D27D4EB4Full;

	return (size_t)(h >> 48) & (WC_HASH - 1);
}

uint64_t cli_wc_chunk_size(const pfs_layout *l)
{
	uint64_t c = l->stripe_size ? l->stripe_size : PFS_DEFAULT_STRIPE_SIZE;

	while (c > PFS_MAX_IO && c % 2 == 0)
		c /= 2;
	return c;
}

static uint64_t sat_sub(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

static wost *ost_get(cli_wc *wc, uint32_t ost)
{
	if (ost >= wc->nost) {
		uint32_t n = ost + 1 > 2 * wc->nost ? ost + 1 : 2 * wc->nost;
		wost *t = realloc(wc->ost, n * sizeof(*t));

		if (!t)
			return NULL;
		memset(t + wc->nost, 0, (n - wc->nost) * sizeof(*t));
		wc->ost = t;
		wc->nost = n;
	}
	return &wc->ost[ost];
}

static wjob *job_get(cli_wc *wc, const char *job)
{
	wjob *free_slot = NULL;

	if (!job)
		job = "";
	for (unsigned i = 0; i < WC_JOBS - 1; i++) {
		if (!strncmp(wc->jobs[i].name, job, PFS_JOBID_MAX))
			return &wc->jobs[i];
		if (!free_slot && wc->jobs[i].bytes == 0 && wc->jobs[i].flushing == 0)
			free_slot = &wc->jobs[i];
	}
	if (!free_slot)
		return &wc->jobs[WC_JOBS - 1];
	if (free_slot->linger) { /* another job takes the slot */
		free_slot->linger = 0;
		wc->nlinger--;
		wc->njobs--;
	}
	strncpy(free_slot->name, job, PFS_JOBID_MAX);
	free_slot->name[PFS_JOBID_MAX] = 0;
	return free_slot;
}

static void q_del(cli_wc *wc, wchunk *c)
{
	wqueue *q = c->q == Q_READY ? &wc->ready : &wc->aged;

	if (c->q == Q_NONE)
		return;
	if (c->qprev)
		c->qprev->qnext = c->qnext;
	else
		q->head = c->qnext;
	if (c->qnext)
		c->qnext->qprev = c->qprev;
	else
		q->tail = c->qprev;
	c->qprev = c->qnext = NULL;
	c->q = Q_NONE;
}

static void q_add(cli_wc *wc, wchunk *c, int which)
{
	wqueue *q = which == Q_READY ? &wc->ready : &wc->aged;

	q_del(wc, c);
	c->q = which;
	c->qnext = NULL;
	c->qprev = q->tail;
	if (q->tail)
		q->tail->qnext = c;
	else
		q->head = c;
	q->tail = c;
}

/* Queue a chunk that has dirty bytes and is idle where it belongs. */
static void requeue(cli_wc *wc, wchunk *c)
{
	if (c->busy || !c->dirty) {
		q_del(wc, c);
		return;
	}
	if (c->dbytes >= c->f->chunk || c->f->urgent)
		q_add(wc, c, Q_READY);
	else if (c->q == Q_NONE)
		q_add(wc, c, Q_AGED);
}

static wchunk *chunk_find(cli_wc *wc, cli_wc_file *f, uint64_t idx)
{
	wchunk *c = wc->hash[hslot(f, idx)];

	while (c && (c->f != f || c->idx != idx))
		c = c->hnext;
	return c;
}

static uint32_t chunk_ost(const cli_wc_file *f, uint64_t idx);

static wchunk *chunk_get(cli_wc *wc, cli_wc_file *f, uint64_t idx)
{
	wchunk *c = chunk_find(wc, f, idx);
	size_t h;

	if (c)
		return c;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->f = f;
	c->idx = idx;
	c->ost = chunk_ost(f, idx);
	h = hslot(f, idx);
	c->hnext = wc->hash[h];
	wc->hash[h] = c;
	c->fnext = f->chunks;
	if (f->chunks)
		f->chunks->fprev = c;
	f->chunks = c;
	return c;
}

/* Free a chunk with nothing dirty and nothing in flight. */
static void chunk_drop(cli_wc *wc, wchunk *c)
{
	wchunk **pp = &wc->hash[hslot(c->f, c->idx)];

	q_del(wc, c);
	while (*pp != c)
		pp = &(*pp)->hnext;
	*pp = c->hnext;
	if (c->fprev)
		c->fprev->fnext = c->fnext;
	else
		c->f->chunks = c->fnext;
	if (c->fnext)
		c->fnext->fprev = c->fprev;
	free(c);
}

static void ext_free(wext *e)
{
	free(e->buf);
	free(e);
}

static wext *ext_new(uint64_t off, size_t len, const void *src, void *owner, wjob *job)
{
	wext *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->cap = len < 4096 ? 4096 : len;
	e->buf = malloc(e->cap);
	if (!e->buf) {
		free(e);
		return NULL;
	}
	memcpy(e->buf, src, len);
	e->off = off;
	e->len = len;
	e->owner = owner;
	e->job = job;
	return e;
}

/* Grow e to hold at least need bytes (doubling, at most max). */
static int ext_reserve(wext *e, size_t need, size_t max)
{
	size_t cap = e->cap;
	uint8_t *b;

	if (need <= cap)
		return 0;
	while (cap < need)
		cap *= 2;
	if (cap > max)
		cap = max > need ? max : need;
	b = realloc(e->buf, cap);
	if (!b)
		return -ENOMEM;
	e->buf = b;
	e->cap = cap;
	return 0;
}

/* Dirty bytes of the whole mount, file, OST and job change by d. */
static void account(cli_wc *wc, cli_wc_file *f, wost *o, wjob *j, int64_t d)
{
	wc->total += (uint64_t)d;
	f->bytes += (uint64_t)d;
	o->bytes += (uint64_t)d;
	if (d && !j->bytes) {
		if (j->linger) {
			j->linger = 0;
			wc->nlinger--;
		} else {
			wc->njobs++;
		}
	}
	j->bytes += (uint64_t)d;
	if (d && !j->bytes) {
		j->linger = 1;
		j->idle_ms = pfs_clock_ms();
		wc->nlinger++;
		/* a flusher ends it (flusher_sleep_ms), perhaps asleep */
		pthread_cond_signal(&wc->work);
	}
	if (wc->total > wc->st.peak)
		wc->st.peak = wc->total;
}

/* account() for bytes of chunk c written for job j; returns |d|. */
static int64_t acct(cli_wc *wc, wchunk *c, wjob *j, int64_t d)
{
	account(wc, c->f, &wc->ost[c->ost], j, d);
	return d < 0 ? -d : d;
}

/* Put [o, o+n) of src, written by owner for job, into chunk c's dirty
 * extents (lock held), accounting every change to the job whose bytes
 * they are.  Returns the change in c's dirty bytes, or
 * -ENOMEM with c unchanged.  Bytes of other extents under the range are
 * cut away (the newer write wins); a neighbour of the same writer that
 * ends where the write starts grows in place (sequential writes append),
 * and one that starts where it ends is absorbed. */
static int64_t ext_put(cli_wc *wc, wchunk *c, uint64_t o, size_t n, const uint8_t *src,
		       void *owner, wjob *job)
{
	uint64_t e = o + n;
	size_t max = c->f->chunk;
	int64_t delta = 0;
	wext **pp, **start = &c->dirty, *d, *nw = NULL, *tail = NULL, *left = NULL;

	/* One walk over the chunk's extents: those that end before o neither
	 * overlap the write nor touch it, so every step below starts after
	 * them (start stays valid: it is c->dirty or the link of one of them). */
	while (*start && (*start)->off + (*start)->len < o)
		start = &(*start)->next;
	/* The common rewrite: one extent of the same writer holds it all. */
	for (d = *start; d && d->off <= o; d = d->next) {
		if (d->off + d->len >= e && d->owner == owner && d->job == job) {
			memcpy(d->buf + (o - d->off), src, n);
			return 0;
		}
	}
	/* Allocate first, so a failure changes nothing: the new extent, and
	 * the tail of an extent the write falls inside of. */
	nw = ext_new(o, n, src, owner, job);
	if (!nw)
		return -ENOMEM;
	for (d = *start; d && d->off < o; d = d->next) {
		if (d->off + d->len > e) {
			tail = ext_new(e, d->off + d->len - e, d->buf + (e - d->off), d->owner,
				       d->job);
			if (!tail) {
				ext_free(nw);
				return -ENOMEM;
			}
			break;
		}
	}
	/* Cut [o, e) out of every extent (sorted and disjoint: none at or
	 * after e can overlap, the walk stops there). */
	for (pp = start; (d = *pp) && d->off < e;) {
		uint64_t de = d->off + d->len;

		if (de <= o) {
			pp = &d->next;
			continue;
		}
		if (d->off >= o && de <= e) {           /* inside: gone */
			delta -= acct(wc, c, d->job, -(int64_t)d->len);
			*pp = d->next;
			ext_free(d);
			continue;
		}
		if (d->off < o && de > e) {             /* around: split */
			delta -= acct(wc, c, d->job, -(int64_t)(de - o));
			d->len = o - d->off;
			delta += acct(wc, c, d->job, (int64_t)tail->len);
			tail->next = d->next;
			d->next = tail;
			tail = NULL;
			pp = &d->next->next;
			continue;
		}
		if (d->off < o) {                       /* its end is cut */
			delta -= acct(wc, c, d->job, -(int64_t)(de - o));
			d->len = o - d->off;
		} else {                                /* its start is cut */
			delta -= acct(wc, c, d->job, -(int64_t)(e - d->off));
			memmove(d->buf, d->buf + (e - d->off), de - e);
			d->len = de - e;
			d->off = e;
		}
		pp = &d->next;
	}
	/* Insert, merging with neighbours of the same writer. */
	delta += acct(wc, c, job, (int64_t)n);
	for (pp = start; *pp && (*pp)->off < o; pp = &(*pp)->next)
		left = *pp; /* an extent before start ends before o: never a neighbour */
	d = *pp; /* first extent at or after e (nothing overlaps now) */
	if (left && left->off + left->len == o && left->owner == owner && left->job == job &&
	    ext_reserve(left, left->len + n, max) == 0) {
		memcpy(left->buf + left->len, src, n);
		left->len += n;
		ext_free(nw);
		nw = left;
	} else {
		nw->next = d;
		*pp = nw;
	}
	if (d && d->off == e && d->owner == owner && d->job == job &&
	    ext_reserve(nw, nw->len + d->len, max) == 0) {
		memcpy(nw->buf + nw->len, d->buf, d->len);
		nw->len += d->len;
		nw->next = d->next;
		ext_free(d);
	}
	return delta;
}

/* ---- flushing ---- */

static void flush_log(const cli_wc_file *f, uint64_t off, size_t len, size_t n, int rc)
{
	pfs_log(PFS_LOG_ERR, "write-back of ino %llu at %llu+%zu (%zu extent%s): %s (the "
		"next fsync or close of the file reports it)", (unsigned long long)f->id,
		(unsigned long long)off, len, n, n == 1 ? "" : "s", pfs_strerror(rc));
}

/* Write the extents of list (a flushing chunk's, sorted; lock not held):
 * with a writev callback one call per group of owners it may put
 * together, else (or without memory for the groups) one write per
 * extent.  Returns the first error. */
static int write_extents(cli_wc *wc, const cli_wc_file *f, wext *list, uint64_t *calls)
{
	size_t n = 0, k;
	cli_wc_iov *v = NULL;
	wext **arr = NULL;
	int err = 0;

	for (wext *e = list; e; e = e->next)
		n++;
	if (wc->o.writev && n > 0) {
		v = malloc(n * sizeof(*v));
		arr = malloc(n * sizeof(*arr));
	}
	if (!v || !arr) {
		free(v);
		free(arr);
		for (wext *e = list; e; e = e->next) {
			int rc = wc->o.write(wc->o.arg, e->owner, e->off, e->len, e->buf);

			(*calls)++;
			if (rc && !err)
				err = rc;
			if (rc)
				flush_log(f, e->off, e->len, 1, rc);
		}
		return err;
	}
	k = 0;
	for (wext *e = list; e; e = e->next)
		arr[k++] = e;
	/* Take each writer's extents out in order (arr[i] = NULL once sent). */
	for (size_t i = 0; i < n; i++) {
		void *owner;
		size_t bytes = 0;
		int rc;

		if (!arr[i])
			continue;
		owner = arr[i]->owner;
		k = 0;
		for (size_t j = i; j < n; j++) {
			if (!arr[j] || (arr[j]->owner != owner &&
					!(wc->o.same && wc->o.same(wc->o.arg, owner, arr[j]->owner))))
				continue;
			v[k++] = (cli_wc_iov){ arr[j]->off, arr[j]->len, arr[j]->buf };
			bytes += arr[j]->len;
			arr[j] = NULL;
		}
		rc = wc->o.writev(wc->o.arg, owner, v, k);
		(*calls)++;
		if (rc && !err)
			err = rc;
		if (rc)
			flush_log(f, v[0].off, bytes, k, rc);
	}
	free(v);
	free(arr);
	return err;
}

/* Write chunk c (queued, not busy) back; lock held, dropped during the
 * writes. */
static void flush_chunk(cli_wc *wc, wchunk *c)
{
	cli_wc_file *f = c->f;
	wost *o = &wc->ost[c->ost];
	uint64_t cost = 0, bytes, calls = 0;
	int err = 0;

	q_del(wc, c);
	c->busy = 1;
	c->fjob = c->dirty ? c->dirty->job : NULL;
	if (c->fjob)
		c->fjob->flushing++;
	c->flight = c->dirty;
	c->dirty = NULL;
	c->fbytes = c->dbytes;
	c->dbytes = 0;
	c->gflight = c->gdirty;
	c->gdirty = 0;
	pthread_mutex_unlock(&wc->lock);
	err = write_extents(wc, f, c->flight, &calls);
	pthread_mutex_lock(&wc->lock);
	wc->st.flush_rpcs += calls;
	o = &wc->ost[c->ost]; /* the table may have moved */
	bytes = 0;
	for (wext *e = c->flight, *nx; e; e = nx) {
		nx = e->next;
		cost += PFS_GRANT_COST(e->len);
		account(wc, f, o, e->job, -(int64_t)e->len);
		bytes += e->len;
		wc->st.flush_extents++;
		ext_free(e);
	}
	c->flight = NULL;
	c->fbytes = 0;
	o->U = sat_sub(o->U, c->gflight);
	c->gflight = 0;
	if (wc->o.grant)
		o->G = sat_sub(o->G, cost);
	o->done += cost;
	wc->st.flushed += bytes;
	if (err) {
		wc->st.flush_errors++;
		if (!f->err)
			f->err = err;
	}
	c->busy = 0;
	if (c->fjob)
		c->fjob->flushing--;
	c->fjob = NULL;
	if (c->dirty)
		requeue(wc, c);
	else
		chunk_drop(wc, c);
	if (wc->skipped) { /* a flusher may be idle for want of a share */
		wc->skipped = 0;
		pthread_cond_broadcast(&wc->work);
	}
	pthread_cond_broadcast(&wc->done);
}

static int under_pressure(const cli_wc *wc)
{
	return wc->waiters || wc->drain || wc->total * 2 >= wc->o.total_bytes;
}

/* Chunks a job may have in flushers' hands while other jobs have cached
 * bytes too: an equal share of the flushers, at least one (UINT_MAX when
 * one job alone has cached bytes); beyond it a job may borrow a flusher
 * only while another one stays idle (within_share).  A throttled job's
 * flush waits at its OSS for tokens and holds its flusher all that time;
 * without the share its chunks, queued as fast as it writes, took every
 * flusher and another job's chunks waited behind them: an unthrottled job
 * sharing the mount ran at about the throttled job's rate (t_qos_wcache). */
static unsigned flush_share(const cli_wc *wc)
{
	unsigned share;

	if (wc->njobs < 2)
		return UINT_MAX;
	share = wc->o.threads / wc->njobs;
	return share ? share : 1;
}

/* May a flusher take c now: its first extent's job under its share, or
 * a flusher left idle after this one takes it (for the next job's chunk:
 * a throttled job's random 4 KiB writes make flushes of a few extents,
 * and two flushers could not keep up with 10 MB/s of them on a loaded
 * machine)? */
static int within_share(cli_wc *wc, const wchunk *c, unsigned share)
{
	if (!c->dirty || c->dirty->job->flushing < share || wc->fbusy + 2 <= wc->nthr)
		return 1;
	wc->skipped = 1;
	return 0;
}

/* The next chunk a flusher should write, or NULL: the first ready chunk,
 * else the oldest aged one that is due, passing over chunks of jobs that
 * hold their share of the flushers (flush_share; a caller's own flush,
 * flush_locked, does not ask). */
static wchunk *pick(cli_wc *wc, uint64_t now)
{
	unsigned share = flush_share(wc);
	wchunk *c;

	for (c = wc->ready.head; c; c = c->qnext)
		if (within_share(wc, c, share))
			return c;
	for (c = wc->aged.head; c; c = c->qnext) {
		if (!under_pressure(wc) && now - c->since_ms < wc->o.age_ms)
			break; /* first dirtied order: the rest are younger */
		if (within_share(wc, c, share))
			return c;
	}
	return NULL;
}

/* Refresh held grants (lock held; dropped around each request). */
static void keepalive(cli_wc *wc, uint64_t now)
{
	for (uint32_t i = 0; i < wc->nost; i++) {
		wost *o = &wc->ost[i];
		uint64_t d0, g;
		int rc;

		if (!o->G || o->asking || now - o->asked_ms < wc->o.keepalive_ms)
			continue;
		o->asking = 1;
		o->asked_ms = now;
		d0 = o->done;
		pthread_mutex_unlock(&wc->lock);
		rc = wc->o.grant(wc->o.arg, i, 0, 0, &g);
		pthread_mutex_lock(&wc->lock);
		o = &wc->ost[i];
		if (rc == 0)
			o->G = sat_sub(g, o->done - d0);
		else
			pfs_log(PFS_LOG_DEBUG, "wcache: grant refresh of OST %u: %s", i,
				pfs_strerror(rc));
		o->asking = 0;
		pthread_cond_broadcast(&wc->done);
	}
}

/* Jobs that lingered WC_JOB_LINGER_MS stop counting (lock held). */
static void linger_expire(cli_wc *wc, uint64_t now)
{
	int changed = 0;

	for (unsigned i = 0; wc->nlinger && i < WC_JOBS; i++) {
		wjob *j = &wc->jobs[i];

		if (j->linger && now - j->idle_ms >= WC_JOB_LINGER_MS) {
			j->linger = 0;
			wc->nlinger--;
			wc->njobs--;
			changed = 1;
		}
	}
	if (changed) /* the other jobs' limits grew */
		pthread_cond_broadcast(&wc->done);
}

/* How long an idle flusher may sleep (lock held): until the oldest aged
 * chunk is due (the aged list is in first-dirtied order, as pick reads
 * it), a lingering job stops counting, or the grants' next keepalive, at
 * most WC_IDLE_MS.  Whatever moves one of those earlier signals the
 * flushers (a write making a new oldest chunk, a job starting to linger),
 * as does everything else that makes work: a ready chunk or pressure (a
 * write), a waiter, a drain or an urgent file, a flush ending while a
 * chunk waits for its job's share.  Polling instead (10 ms) woke each
 * flusher of an idle mount 100 times a second: noise on a compute node. */
static uint64_t flusher_sleep_ms(const cli_wc *wc, uint64_t now)
{
	uint64_t due = now + WC_IDLE_MS;
	uint64_t aged = wc->aged.head ? wc->aged.head->since_ms + wc->o.age_ms : due;

	/* due already: passed over for its job's share, and the flush that
	 * holds the share wakes the flushers when it ends (flush_chunk) */
	if (aged > now && aged < due)
		due = aged;
	for (unsigned i = 0; wc->nlinger && i < WC_JOBS; i++)
		if (wc->jobs[i].linger && wc->jobs[i].idle_ms + WC_JOB_LINGER_MS < due)
			due = wc->jobs[i].idle_ms + WC_JOB_LINGER_MS;
	if (wc->o.grant && wc->keep_ms + wc->o.keepalive_ms / 4 < due)
		due = wc->keep_ms + wc->o.keepalive_ms / 4;
	return due > now ? due - now : 1;
}

static void *flusher(void *arg)
{
	cli_wc *wc = arg;

	pthread_mutex_lock(&wc->lock);
	while (!wc->stop) {
		uint64_t now = pfs_clock_ms();
		wchunk *c;

		if (wc->nlinger)
			linger_expire(wc, now);
		c = pick(wc, now);
		struct timespec ts;

		if (c) {
			wc->fbusy++;
			flush_chunk(wc, c);
			wc->fbusy--;
			continue;
		}
		if (wc->o.grant && now - wc->keep_ms >= wc->o.keepalive_ms / 4) {
			wc->keep_ms = now;
			keepalive(wc, now);
			continue;
		}
		ts = pfs_clock_deadline(CLOCK_MONOTONIC, flusher_sleep_ms(wc, now));
		pthread_cond_timedwait(&wc->work, &wc->lock, &ts);
	}
	pthread_mutex_unlock(&wc->lock);
	return NULL;
}

/* ---- lifetime ---- */

static int start_locked(cli_wc *wc);

int cli_wc_create(const cli_wc_opts *opts, cli_wc **out)
{
	cli_wc *wc;
	pthread_condattr_t ca;
	int rc = 0;

	if (!opts || !opts->total_bytes || !opts->write)
		return -EINVAL;
	wc = calloc(1, sizeof(*wc));
	if (!wc)
		return -ENOMEM;
	wc->o = *opts;
	if (!wc->o.file_bytes)
		wc->o.file_bytes = wc->o.total_bytes / 2;
	if (!wc->o.ost_bytes)
		wc->o.ost_bytes = wc->o.total_bytes / 2;
	if (!wc->o.job_bytes)
		wc->o.job_bytes = wc->o.total_bytes;
	if (!wc->o.threads)
		wc->o.threads = 4;
	if (!wc->o.age_ms)
		wc->o.age_ms = 1000;
	if (!wc->o.keepalive_ms)
		wc->o.keepalive_ms = 60000;
	wc->hash = calloc(WC_HASH, sizeof(*wc->hash));
	wc->thr = calloc(wc->o.threads, sizeof(*wc->thr));
	if (!wc->hash || !wc->thr) {
		free(wc->hash);
		free(wc->thr);
		free(wc);
		return -ENOMEM;
	}
	pthread_mutex_init(&wc->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&wc->work, &ca);
	pthread_condattr_destroy(&ca);
	pthread_cond_init(&wc->done, NULL);
	wc->keep_ms = pfs_clock_ms();
	*out = wc;
	return rc;
}

/* The flushers start with the first write, not at create: mount.pfs
 * daemonizes (forks) between the two, and threads do not survive a fork.
 * Lock held.  0 or pthread's error (then nothing is cached). */
static int start_locked(cli_wc *wc)
{
	int rc = 0;

	while (wc->nthr < wc->o.threads && !wc->stop) {
		rc = -pthread_create(&wc->thr[wc->nthr], NULL, flusher, wc);
		if (rc)
			break;
		wc->nthr++;
	}
	if (wc->nthr)
		return 0;
	pfs_log(PFS_LOG_ERR, "wcache: cannot start a flusher: %s", pfs_strerror(rc));
	return rc;
}

void cli_wc_destroy(cli_wc *wc)
{
	if (!wc)
		return;
	pthread_mutex_lock(&wc->lock);
	/* Files are freed (flushed) first; anything left is written now. */
	while (wc->ready.head || wc->aged.head)
		flush_chunk(wc, wc->ready.head ? wc->ready.head : wc->aged.head);
	wc->stop = 1;
	pthread_cond_broadcast(&wc->work);
	pthread_mutex_unlock(&wc->lock);
	for (unsigned i = 0; i < wc->nthr; i++)
		pthread_join(wc->thr[i], NULL);
	pfs_log(PFS_LOG_NOTICE, "wcache: %llu writes cached, %llu written through, %llu bytes "
		"in %llu extents flushed by %llu writes, %llu flush errors, at most %llu bytes dirty, %llu "
		"writers throttled, %llu grant requests (%llu short)",
		(unsigned long long)wc->st.cached, (unsigned long long)wc->st.uncached,
		(unsigned long long)wc->st.flushed, (unsigned long long)wc->st.flush_extents,
		(unsigned long long)wc->st.flush_rpcs,
		(unsigned long long)wc->st.flush_errors, (unsigned long long)wc->st.peak,
		(unsigned long long)wc->st.throttled, (unsigned long long)wc->st.grant_asks,
		(unsigned long long)wc->st.grant_refused);
	for (uint32_t i = 0; wc->o.grant && i < wc->nost; i++) {
		uint64_t g;

		if (wc->ost[i].G && wc->o.grant(wc->o.arg, i, 0, wc->ost[i].G, &g))
			pfs_log(PFS_LOG_INFO, "wcache: giving back the grant of OST %u failed "
				"(the OSS takes it back when we stay silent)", i);
	}
	pthread_cond_destroy(&wc->work);
	pthread_cond_destroy(&wc->done);
	pthread_mutex_destroy(&wc->lock);
	free(wc->ost);
	free(wc->hash);
	free(wc->thr);
	free(wc);
}

void cli_wc_stats_get(cli_wc *wc, cli_wc_stats *st)
{
	pthread_mutex_lock(&wc->lock);
	*st = wc->st;
	st->dirty = wc->total;
	st->granted = 0;
	for (uint32_t i = 0; i < wc->nost; i++)
		st->granted += wc->ost[i].G;
	pthread_mutex_unlock(&wc->lock);
}

cli_wc_file *cli_wc_file_new(cli_wc *wc, uint64_t id, const pfs_layout *l)
{
	cli_wc_file *f;

	if (!l->stripe_count || !l->stripe_size)
		return NULL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->wc = wc;
	f->id = id;
	f->layout = *l;
	f->chunk = cli_wc_chunk_size(l);
	return f;
}

void cli_wc_file_free(cli_wc_file *f)
{
	int rc;

	if (!f)
		return;
	rc = cli_wc_flush(f);
	if (rc)
		pfs_log(PFS_LOG_ERR, "write-back of ino %llu failed after its last close: %s",
			(unsigned long long)f->id, pfs_strerror(rc));
	free(f);
}

/* ---- flush and wait ---- */

/* Flush f's chunks with index in [lo, hi] and wait for them; lock held. */
static void flush_locked(cli_wc_file *f, uint64_t lo, uint64_t hi)
{
	cli_wc *wc = f->wc;

	f->urgent++;
	for (wchunk *c = f->chunks; c; c = c->fnext)
		if (c->idx >= lo && c->idx <= hi)
			requeue(wc, c);
	pthread_cond_broadcast(&wc->work);
	for (;;) {
		wchunk *c, *busy = NULL;

		for (c = f->chunks; c; c = c->fnext) {
			if (c->idx < lo || c->idx > hi)
				continue;
			if (!c->busy)
				break;
			busy = c;
		}
		if (c) {
			/* help the flushers: this thread writes one too */
			flush_chunk(wc, c);
			continue;
		}
		if (!busy)
			break;
		pthread_cond_wait(&wc->done, &wc->lock);
	}
	f->urgent--;
}

int cli_wc_flush(cli_wc_file *f)
{
	cli_wc *wc = f->wc;
	int rc;

	pthread_mutex_lock(&wc->lock);
	flush_locked(f, 0, UINT64_MAX);
	rc = f->err;
	f->err = 0;
	pthread_mutex_unlock(&wc->lock);
	return rc;
}

void cli_wc_flush_range(cli_wc_file *f, uint64_t off, uint64_t len)
{
	cli_wc *wc = f->wc;

	if (!len)
		return;
	pthread_mutex_lock(&wc->lock);
	if (f->chunks)
		flush_locked(f, off / f->chunk,
			     off + len - 1 < off ? UINT64_MAX : (off + len - 1) / f->chunk);
	pthread_mutex_unlock(&wc->lock);
}

uint64_t cli_wc_end(cli_wc_file *f)
{
	uint64_t end = 0;

	pthread_mutex_lock(&f->wc->lock);
	for (wchunk *c = f->chunks; c; c = c->fnext) {
		for (wext *e = c->dirty; e; e = e->next)
			if (e->off + e->len > end)
				end = e->off + e->len;
		for (wext *e = c->flight; e; e = e->next)
			if (e->off + e->len > end)
				end = e->off + e->len;
	}
	pthread_mutex_unlock(&f->wc->lock);
	return end;
}

/* ---- uncached writes and grants ---- */

/* Grant cost of an uncached write of [off, off+len) per OST, added (sign
 * 1) or removed (-1) from S; lock held. */
static void sync_cost(cli_wc_file *f, uint64_t off, size_t len, int sign, int done)
{
	cli_wc *wc = f->wc;
	pfs_extent ex[PFS_MAX_STRIPES + 2];
	size_t n = pfs_layout_map(&f->layout, off, len, ex, PFS_MAX_STRIPES + 2);

	if (n > PFS_MAX_STRIPES + 2)
		n = PFS_MAX_STRIPES + 2;
	for (size_t i = 0; i < n; i++) {
		wost *o = ost_get(wc, f->layout.stripe[ex[i].idx].ost);
		/* one WRITE per PFS_MAX_IO at most; a page more each, to be safe */
		uint64_t cost = PFS_GRANT_COST(ex[i].len) +
				(ex[i].len / PFS_MAX_IO + 1) * PFS_GRANT_PAGE;

		if (!o)
			continue;
		if (sign > 0) {
			o->S += cost;
		} else {
			o->S = sat_sub(o->S, cost);
			if (done) {
				o->G = sat_sub(o->G, cost);
				o->done += cost;
			}
		}
	}
}

/* Cached bytes of an OST stay covered once an uncached write's cost
 * leaves G (lock held): wait for flushes until they do. */
static void sync_wait_cover(cli_wc_file *f, uint64_t off, size_t len)
{
	cli_wc *wc = f->wc;
	pfs_extent ex[PFS_MAX_STRIPES + 2];
	size_t n;

	if (!wc->o.grant)
		return;
	n = pfs_layout_map(&f->layout, off, len, ex, PFS_MAX_STRIPES + 2);
	if (n > PFS_MAX_STRIPES + 2)
		n = PFS_MAX_STRIPES + 2;
	for (size_t i = 0; i < n; i++) {
		uint32_t ost = f->layout.stripe[ex[i].idx].ost;
		wost *o = ost_get(wc, ost);

		if (!o)
			continue;
		wc->drain++;
		while (o->U > 0 && o->G < o->U + o->S) {
			pthread_cond_broadcast(&wc->work);
			pthread_cond_wait(&wc->done, &wc->lock);
			o = &wc->ost[ost];
		}
		wc->drain--;
	}
}

void cli_wc_sync_begin(cli_wc_file *f, uint64_t off, size_t len)
{
	cli_wc *wc;

	if (!f || !len)
		return;
	wc = f->wc;
	cli_wc_flush_range(f, off, len);
	pthread_mutex_lock(&wc->lock);
	sync_cost(f, off, len, 1, 0);
	sync_wait_cover(f, off, len);
	wc->st.uncached++;
	pthread_mutex_unlock(&wc->lock);
}

void cli_wc_sync_end(cli_wc_file *f, uint64_t off, size_t len)
{
	if (!f || !len)
		return;
	pthread_mutex_lock(&f->wc->lock);
	sync_cost(f, off, len, -1, f->wc->o.grant != NULL);
	pthread_cond_broadcast(&f->wc->done);
	pthread_mutex_unlock(&f->wc->lock);
}

static uint32_t chunk_ost(const cli_wc_file *f, uint64_t idx)
{
	uint64_t soff = idx * f->chunk / f->layout.stripe_size;

	return f->layout.stripe[soff % f->layout.stripe_count].ost;
}

/* Undo the grant reserved for the chunks of [from, to) (lock held). */
static void unreserve(cli_wc_file *f, uint64_t from, uint64_t to)
{
	cli_wc *wc = f->wc;

	for (uint64_t pos = from; wc->o.grant && pos < to;) {
		uint64_t idx = pos / f->chunk, ce = (idx + 1) * f->chunk;
		uint64_t n = (ce < to ? ce : to) - pos;
		wost *o = &wc->ost[chunk_ost(f, idx)];

		o->U = sat_sub(o->U, PFS_GRANT_COST(n));
		pos += n;
	}
	pthread_cond_broadcast(&wc->done);
}

/* Make sure OST ost has cost bytes of grant free for caching (lock held,
 * dropped while asking).  1 yes, 0 no. */
static int grant_cover(cli_wc *wc, uint32_t ost, uint64_t cost)
{
	wost *o;

	if (!wc->o.grant)
		return 1;
	for (;;) {
		uint64_t have, want, d0, g;
		int rc;

		o = ost_get(wc, ost);
		if (!o)
			return 0;
		have = sat_sub(o->G, o->U + o->S);
		if (have >= cost)
			return 1;
		if (o->asking) {
			pthread_cond_wait(&wc->done, &wc->lock);
			continue;
		}
		/* room for a per-OST limit's worth of dirty data */
		want = wc->o.ost_bytes + cost - have;
		o->asking = 1;
		o->asked_ms = pfs_clock_ms();
		d0 = o->done;
		wc->st.grant_asks++;
		pthread_mutex_unlock(&wc->lock);
		rc = wc->o.grant(wc->o.arg, ost, want, 0, &g);
		pthread_mutex_lock(&wc->lock);
		o = &wc->ost[ost];
		o->asking = 0;
		pthread_cond_broadcast(&wc->done);
		if (rc == 0)
			o->G = sat_sub(g, o->done - d0);
		else
			pfs_log(PFS_LOG_DEBUG, "wcache: grant from OST %u: %s", ost,
				pfs_strerror(rc));
		if (sat_sub(o->G, o->U + o->S) >= cost)
			return 1;
		wc->st.grant_refused++;
		return 0;
	}
}

/* Job j's dirty limit now: job_bytes, but while other jobs have cached
 * bytes too (or had, WC_JOB_LINGER_MS ago: a job whose writes the flushers
 * keep up with often has none for a moment) at most an equal part of the per-OST (and total) limit, so
 * that a throttled job, whose bytes leave only at its rate, cannot hold
 * an OST's whole share of the cache and make every other job's writer
 * wait for its flushes (t_qos_wcache: with the default job limit, all of
 * the cache, an unthrottled job on the same OST ran at about twice the
 * throttled job's rate).  A job with no cached bytes may always cache one
 * write (room checks the other limits). */
static uint64_t job_limit(const cli_wc *wc, const wjob *j)
{
	unsigned jobs = wc->njobs + (j->bytes || j->linger ? 0 : 1);
	uint64_t part = wc->o.ost_bytes < wc->o.total_bytes ? wc->o.ost_bytes : wc->o.total_bytes;

	if (jobs < 2)
		return wc->o.job_bytes;
	part /= jobs;
	return part < wc->o.job_bytes ? part : wc->o.job_bytes;
}

/* Room for n more dirty bytes of f on OST ost for job j (lock held):
 * waits while a limit is reached.  0 when a limit is below n itself. */
static int room(cli_wc *wc, cli_wc_file *f, uint32_t ost, wjob *j, uint64_t n)
{
	int waited = 0;

	if (n > wc->o.total_bytes || n > wc->o.file_bytes || n > wc->o.ost_bytes ||
	    n > wc->o.job_bytes)
		return 0;
	for (;;) {
		wost *o = &wc->ost[ost];

		if (wc->total + n <= wc->o.total_bytes && f->bytes + n <= wc->o.file_bytes &&
		    o->bytes + n <= wc->o.ost_bytes &&
		    (!j->bytes || j->bytes + n <= job_limit(wc, j)))
			break;
		if (!waited)
			wc->st.throttled++;
		waited = 1;
		wc->waiters++;
		pthread_cond_broadcast(&wc->work);
		pthread_cond_wait(&wc->done, &wc->lock);
		wc->waiters--;
	}
	return 1;
}

int cli_wc_write(cli_wc_file *f, void *owner, const char *job, uint64_t off, size_t len,
		 const void *buf)
{
	cli_wc *wc = f->wc;
	const uint8_t *src = buf;
	uint64_t pos = off, end = off + len;
	int rc = 1;

	if (!len)
		return 1;
	pthread_mutex_lock(&wc->lock);
	if (len > wc->o.file_bytes || len > wc->o.ost_bytes || len > wc->o.job_bytes ||
	    start_locked(wc))
		pos = off, rc = 0;
	/* Check every chunk first, reserving its grant (U) as it is found
	 * covered: all of the write is cached, or none. */
	for (pos = off; rc && pos < end;) {
		uint64_t idx = pos / f->chunk, ce = (idx + 1) * f->chunk;
		uint64_t n = (ce < end ? ce : end) - pos;
		uint32_t ost = chunk_ost(f, idx);
		wjob *j = job_get(wc, job);

		if (!ost_get(wc, ost) || !room(wc, f, ost, j, n) ||
		    !grant_cover(wc, ost, PFS_GRANT_COST(n))) {
			rc = 0;
			break;
		}
		if (wc->o.grant)
			wc->ost[ost].U += PFS_GRANT_COST(n);
		pos += n;
	}
	if (rc == 0) {
		unreserve(f, off, pos);
		pthread_mutex_unlock(&wc->lock);
		cli_wc_sync_begin(f, off, len);
		return 0;
	}
	for (pos = off; pos < end;) {
		uint64_t idx = pos / f->chunk, ce = (idx + 1) * f->chunk;
		uint64_t n = (ce < end ? ce : end) - pos;
		wjob *j = job_get(wc, job);
		wchunk *c = chunk_get(wc, f, idx);
		int64_t d;
		int was_clean, was_q;

		if (!c) {
			rc = -ENOMEM;
			break;
		}
		was_clean = !c->dirty;
		d = ext_put(wc, c, pos, n, src + (pos - off), owner, j);
		if (d < 0 && !c->dirty && !c->busy)
			chunk_drop(wc, c);
		if (d < 0) {
			rc = (int)d;
			break;
		}
		c->dbytes += (uint64_t)d;
		if (wc->o.grant)
			c->gdirty += PFS_GRANT_COST(n);
		if (was_clean)
			c->since_ms = pfs_clock_ms();
		was_q = c->q;
		requeue(wc, c);
		/* a new head of the aged list is due before anything the idle
		 * flushers sleep for (flusher_sleep_ms) */
		if (c->q == Q_READY || under_pressure(wc) ||
		    (was_q == Q_NONE && wc->aged.head == c))
			pthread_cond_signal(&wc->work);
		pos += n;
	}
	if (rc < 0)
		unreserve(f, pos, end);
	if (pos > off && pos > f->end)
		f->end = pos;
	if (rc == 1)
		wc->st.cached++;
	pthread_mutex_unlock(&wc->lock);
	/* -ENOMEM part-way: what was cached stays cached (it is newer than
	 * what the OSS has); the caller writes all of it through, after it. */
	if (rc < 0) {
		cli_wc_sync_begin(f, off, len);
		return 0;
	}
	return rc;
}

/* ---- reads ---- */

typedef struct spiece {
	uint64_t off;
	size_t len;
	size_t at; /* in data */
} spiece;

struct cli_wc_snap {
	uint64_t off;
	size_t len;
	spiece *p;
	size_t n;
	uint8_t *data;
};

static int cmp_piece(const void *a, const void *b)
{
	const spiece *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

int cli_wc_snap_take(cli_wc_file *f, uint64_t off, size_t len, cli_wc_snap **out, int *full)
{
	cli_wc *wc = f->wc;
	uint64_t end = off + len, lo = off / f->chunk, hi = (end - 1) / f->chunk;
	size_t n = 0, bytes = 0, at = 0;
	cli_wc_snap *s = NULL;
	int pass;

	*out = NULL;
	*full = 0;
	if (!len)
		return 0;
	pthread_mutex_lock(&wc->lock);
	/* Count, then copy: in flight first, then dirty (newer), so applying
	 * in order leaves the newest bytes. */
	for (pass = 0; pass < 2; pass++) {
		for (uint64_t i = lo; i <= hi && (f->chunks != NULL); i++) {
			wchunk *c = chunk_find(wc, f, i);

			for (int k = 0; c && k < 2; k++) {
				for (wext *e = k ? c->dirty : c->flight; e; e = e->next) {
					uint64_t a = e->off > off ? e->off : off;
					uint64_t b = e->off + e->len < end ? e->off + e->len : end;

					if (a >= b)
						continue;
					if (pass == 0) {
						n++;
						bytes += b - a;
						continue;
					}
					s->p[s->n].off = a;
					s->p[s->n].len = b - a;
					s->p[s->n].at = at;
					memcpy(s->data + at, e->buf + (a - e->off), b - a);
					at += b - a;
					s->n++;
				}
			}
			if (i == UINT64_MAX)
				break;
		}
		if (pass == 0) {
			if (!n)
				break;
			s = calloc(1, sizeof(*s));
			if (s) {
				s->p = calloc(n, sizeof(*s->p));
				s->data = malloc(bytes);
			}
			if (!s || !s->p || !s->data) {
				pthread_mutex_unlock(&wc->lock);
				cli_wc_snap_free(s);
				return -ENOMEM;
			}
			s->off = off;
			s->len = len;
		}
	}
	pthread_mutex_unlock(&wc->lock);
	if (!s)
		return 0;
	/* Covered? Sweep a sorted copy of the pieces. */
	{
		spiece *t = malloc(s->n * sizeof(*t));
		uint64_t reach = off;

		if (t) {
			memcpy(t, s->p, s->n * sizeof(*t));
			qsort(t, s->n, sizeof(*t), cmp_piece);
			for (size_t i = 0; i < s->n && t[i].off <= reach; i++)
				if (t[i].off + t[i].len > reach)
					reach = t[i].off + t[i].len;
			*full = reach >= end;
			free(t);
		}
	}
	*out = s;
	return 0;
}

void cli_wc_snap_apply(const cli_wc_snap *s, void *buf)
{
	uint8_t *b = buf;

	for (size_t i = 0; s && i < s->n; i++)
		memcpy(b + (s->p[i].off - s->off), s->data + s->p[i].at, s->p[i].len);
}

void cli_wc_snap_free(cli_wc_snap *s)
{
	if (!s)
		return;
	free(s->p);
	free(s->data);
	free(s);
}
