/* statahead.c — the statahead cache of mount.pfs (see statahead.h).
 *
 * Semantics (what client/fuse_ops.c may answer from this cache).  An
 * answer served from it must be one the kernel could have served from its
 * own dentry and attribute caches had it kept the entry:
 *  - positive entries only, each no older than the entry and attribute
 *    timeouts the mount would give it now (entry_timeout/attr_timeout in
 *    fuse_ops.c: attr_timeout_s, or the metadata lease while the notify
 *    channel is up), and the kernel gets what is left of them, so nothing
 *    is cached longer in total than a LOOKUP's reply would be;
 *  - names only below a directory everyone may search (the rule of
 *    entry_timeout: the kernel checks no search permission on cached
 *    dentries, so below a 0700 directory every LOOKUP goes to the MDS with
 *    its caller's credentials);
 *  - never the size of a file a writer may be moving (PFS_ATTR_SIZE_STALE)
 *    or one with this mount's unpushed writes: those LOOKUPs go to the
 *    MDS and the glimpse as before; nor a file with several hard links
 *    (an unlink through another name changes its nlink unseen);
 *  - a name the cache does not hold is a miss: no negative answer is ever
 *    given (one would be exact only under a directory lease that every
 *    creation revokes; a timeout alone is not enough);
 *  - this mount's own creates, unlinks, renames, links, setattrs, xattr
 *    changes and writes drop what they touch at once (cli_sa_drop_*), and
 *    with metadata leases the MDS's revocations do (cli_sa_revoke: the
 *    bulk reply is leased on the MDS like a LOOKUP's, mds/server.c).
 * The fetch runs with the credentials of the LOOKUP that started it; the
 * MDS checks read and search on the directory and search along its path
 * for them (mds/dirplus.h).
 *
 * Structures: entries are in a hash of (dir, name), a hash of ino, a list
 * per directory and one age-ordered list (eviction); directories in a
 * fixed table of CLI_SA_DIRS. */
#include "client/statahead.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/log.h"

#define BACKOFF_MIN_MS 1000
#define SA_FIRST_BATCH 32     /* a walk's first fetch; doubling up to o.batch */
#define BACKOFF_MAX_MS 32000
#define SA_LATE_MAX 8         /* misses behind a window in use taken as late ones */

typedef struct sa_dir sa_dir;

typedef struct sa_ent {
	struct sa_ent *hnext, **hprev;   /* (dir, name) hash */
	struct sa_ent *inext, **iprev;   /* ino hash */
	struct sa_ent *dnext, **dprev;   /* its directory's list */
	struct sa_ent *anext, *aprev;    /* age list (circular, sa->age head) */
	sa_dir *d;
	uint64_t born_ms, seq;
	pfs_attr a;
	char name[];
} sa_ent;

struct sa_dir {
	uint64_t ino;                   /* 0 = free slot */
	uint64_t used_ms;               /* LRU */
	uint64_t miss_ms;               /* last miss counted */
	unsigned misses;
	char last_miss[PFS_NAME_MAX + 1];
	int inflight, eof;
	int stop;                       /* the last answer was mostly cached: no chaining */
	char from[PFS_NAME_MAX + 1];    /* the fetch in flight starts after this */
	char next[PFS_NAME_MAX + 1];    /* the last name fetched */
	char lo[PFS_NAME_MAX + 1];      /* the walk's fetches started after this */
	uint64_t fetched_ms;            /* the last fetch answered */
	uint64_t hit_ms;                /* the last hit */
	uint64_t seq;                   /* of the last entry fetched */
	uint64_t batch_hits;            /* hits since the last fetch was queued */
	unsigned overtook;              /* misses past the start of the fetch in flight */
	int judged;                     /* the last batch was found unused (backed off) */
	unsigned late;                  /* misses behind the window since the walk started */
	unsigned batch;                 /* entries of the next fetch */
	uint64_t backoff_until, backoff_ms;
	cli_ctx ctx;                    /* whom the next fetch is for */
	sa_ent *ents;
};

typedef struct sa_drop {
	uint64_t gen;
	int kind;                       /* DROP_NAME, DROP_INO, DROP_BELOW */
	uint64_t ino;                   /* the dir of DROP_NAME */
	uint64_t hash;                  /* DROP_NAME: of the name */
} sa_drop;

enum { DROP_NAME = 1, DROP_INO, DROP_BELOW };

typedef struct sa_job {
	struct sa_job *next;
	uint64_t dir, gen;
	unsigned max;
	cli_ctx ctx;
	char after[PFS_NAME_MAX + 1];
} sa_job;

struct cli_sa {
	cli_sa_opts o;
	pthread_mutex_t mu;
	pthread_cond_t cv;       /* jobs queued, stop */
	pthread_cond_t done;     /* a fetch finished */
	pthread_t thread;
	int started, stop;
	sa_job *jobs, **jobs_tail;
	size_t nbuckets;         /* power of two */
	sa_ent **byname, **byino;
	sa_ent age;              /* list head */
	unsigned nents;
	sa_dir dirs[CLI_SA_DIRS];
	uint64_t gen;            /* drops so far */
	sa_drop ring[CLI_SA_RING];
	cli_sa_stats st;
	cli_sa_ent *buf;         /* the fetch's output (one fetch at a time) */
	uint8_t skip[PFS_LOOKUP_BULK_MAX]; /* its entries dropped meanwhile */
};

static uint64_t now_ms(cli_sa *sa)
{
	return sa->o.clock ? sa->o.clock(sa->o.clock_arg) : pfs_clock_ms();
}

static uint64_t name_hash(uint64_t dir, const char *name)
{
	uint64_t h = 1469598103934665603ull ^ (dir * 0x9e3779b97f4a7c15ull);

	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 1099511628211ull;
	return h;
}

static size_t ino_slot(const cli_sa *sa, uint64_t ino)
{
	return (size_t)((ino * 0x9e3779b97f4a7c15ull) >> 20) & (sa->nbuckets - 1);
}

int cli_sa_create(const cli_sa_opts *o, cli_sa **out)
{
	cli_sa *sa;

	if (!o->fetch || o->batch == 0 || o->batch > PFS_LOOKUP_BULK_MAX)
		return -EINVAL;
	sa = calloc(1, sizeof(*sa));
	if (!sa)
		return -ENOMEM;
	sa->o = *o;
	if (!sa->o.max_entries)
		sa->o.max_entries = 8192;
	if (!sa->o.max_age_ms)
		sa->o.max_age_ms = 1000;
	if (!sa->o.trigger)
		sa->o.trigger = 2;
	if (!sa->o.window_ms)
		sa->o.window_ms = 1000;
	if (!sa->o.wait_ms)
		sa->o.wait_ms = 1000;
	sa->nbuckets = 64;
	while (sa->nbuckets < sa->o.max_entries && sa->nbuckets < (1u << 20))
		sa->nbuckets <<= 1;
	sa->byname = calloc(sa->nbuckets, sizeof(*sa->byname));
	sa->byino = calloc(sa->nbuckets, sizeof(*sa->byino));
	sa->buf = malloc(sa->o.batch * sizeof(*sa->buf));
	if (!sa->byname || !sa->byino || !sa->buf) {
		free(sa->byname);
		free(sa->byino);
		free(sa->buf);
		free(sa);
		return -ENOMEM;
	}
	sa->age.anext = sa->age.aprev = &sa->age;
	sa->jobs_tail = &sa->jobs;
	pthread_mutex_init(&sa->mu, NULL);
	pthread_cond_init(&sa->cv, NULL);
	{
		pthread_condattr_t ca;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&sa->done, &ca);
		pthread_condattr_destroy(&ca);
	}
	*out = sa;
	return 0;
}

/* ---- entries (sa->mu held) ---- */

static void ent_free(cli_sa *sa, sa_ent *e)
{
	*e->hprev = e->hnext;
	if (e->hnext)
		e->hnext->hprev = e->hprev;
	*e->iprev = e->inext;
	if (e->inext)
		e->inext->iprev = e->iprev;
	*e->dprev = e->dnext;
	if (e->dnext)
		e->dnext->dprev = e->dprev;
	e->aprev->anext = e->anext;
	e->anext->aprev = e->aprev;
	sa->nents--;
	free(e);
}

static sa_ent *ent_find(cli_sa *sa, uint64_t dir, const char *name)
{
	sa_ent *e = sa->byname[name_hash(dir, name) & (sa->nbuckets - 1)];

	for (; e; e = e->hnext)
		if (e->d->ino == dir && strcmp(e->name, name) == 0)
			return e;
	return NULL;
}

static void dir_clear(cli_sa *sa, sa_dir *d)
{
	while (d->ents)
		ent_free(sa, d->ents);
}

/* Put one fetched entry of d in (replacing an older copy); 1 if a fresh
 * copy was there already. */
static int ent_put(cli_sa *sa, sa_dir *d, const cli_sa_ent *in, uint64_t now)
{
	size_t nl = strlen(in->name);
	sa_ent *e, *old = ent_find(sa, d->ino, in->name);
	size_t hs, is;
	int had = 0;

	if (old) {
		had = now - old->born_ms < sa->o.max_age_ms / 2;
		ent_free(sa, old);
	}
	while (sa->nents >= sa->o.max_entries && sa->age.anext != &sa->age) {
		ent_free(sa, sa->age.anext);
		sa->st.evicted++;
	}
	e = malloc(sizeof(*e) + nl + 1);
	if (!e)
		return had;
	memcpy(e->name, in->name, nl + 1);
	e->a = in->a;
	e->d = d;
	e->born_ms = now;
	e->seq = ++d->seq;
	hs = name_hash(d->ino, e->name) & (sa->nbuckets - 1);
	is = ino_slot(sa, e->a.ino);
	e->hnext = sa->byname[hs];
	e->hprev = &sa->byname[hs];
	if (e->hnext)
		e->hnext->hprev = &e->hnext;
	sa->byname[hs] = e;
	e->inext = sa->byino[is];
	e->iprev = &sa->byino[is];
	if (e->inext)
		e->inext->iprev = &e->inext;
	sa->byino[is] = e;
	e->dnext = d->ents;
	e->dprev = &d->ents;
	if (e->dnext)
		e->dnext->dprev = &e->dnext;
	d->ents = e;
	e->aprev = sa->age.aprev;
	e->anext = &sa->age;
	sa->age.aprev->anext = e;
	sa->age.aprev = e;
	sa->nents++;
	return had;
}

/* ---- directories (sa->mu held) ---- */

static sa_dir *dir_find(cli_sa *sa, uint64_t ino)
{
	for (int i = 0; i < CLI_SA_DIRS; i++)
		if (sa->dirs[i].ino == ino)
			return &sa->dirs[i];
	return NULL;
}

/* ino's slot, taking the least recently used one without a fetch in
 * flight (its entries go); NULL if every slot has one. */
static sa_dir *dir_get(cli_sa *sa, uint64_t ino, uint64_t now)
{
	sa_dir *d = dir_find(sa, ino), *lru = NULL;

	if (d)
		return d;
	for (int i = 0; i < CLI_SA_DIRS; i++) {
		sa_dir *x = &sa->dirs[i];

		if (x->inflight)
			continue;
		if (!x->ino) {
			lru = x;
			break;
		}
		if (!lru || x->used_ms < lru->used_ms)
			lru = x;
	}
	if (!lru)
		return NULL;
	dir_clear(sa, lru);
	memset(lru, 0, sizeof(*lru));
	lru->ino = ino;
	lru->used_ms = now;
	return lru;
}

/* ---- drops ---- */

static void ring_add(cli_sa *sa, int kind, uint64_t ino, uint64_t hash)
{
	sa_drop *r = &sa->ring[sa->gen % CLI_SA_RING];

	r->gen = ++sa->gen;
	r->kind = kind;
	r->ino = ino;
	r->hash = hash;
}

/* Mark in sa->skip[] the n entries of job j's answer (sa->buf) that a
 * drop after the job started covers: the drops since are looked up in two
 * small open-addressed tables of the answer (by name hash and by ino), so
 * the cost is the drops plus the entries. */
#define MARK_SLOTS (2 * PFS_LOOKUP_BULK_MAX)
static void mark_dropped(cli_sa *sa, const sa_job *j, uint32_t n)
{
	uint64_t hk[MARK_SLOTS], ik[MARK_SLOTS];
	uint16_t hv[MARK_SLOTS], iv[MARK_SLOTS]; /* entry + 1; 0 = empty */

	memset(hv, 0, sizeof(hv));
	memset(iv, 0, sizeof(iv));
	for (uint32_t i = 0; i < n; i++) {
		uint64_t h = name_hash(j->dir, sa->buf[i].name), k = sa->buf[i].a.ino;
		size_t x = (size_t)h % MARK_SLOTS, y = (size_t)(k * 0x9e3779b97f4a7c15ull >> 32) %
							 MARK_SLOTS;

		while (hv[x])
			x = (x + 1) % MARK_SLOTS;
		hk[x] = h;
		hv[x] = (uint16_t)(i + 1);
		while (iv[y])
			y = (y + 1) % MARK_SLOTS;
		ik[y] = k;
		iv[y] = (uint16_t)(i + 1);
	}
	for (uint64_t g = j->gen + 1; g <= sa->gen; g++) {
		const sa_drop *r = &sa->ring[(g - 1) % CLI_SA_RING];
		size_t x;

		if (r->ino == 0 || (r->kind == DROP_BELOW && r->ino == j->dir)) {
			memset(sa->skip, 1, n);
			return;
		}
		if (r->kind == DROP_NAME) {
			if (r->ino != j->dir)
				continue;
			for (x = (size_t)r->hash % MARK_SLOTS; hv[x]; x = (x + 1) % MARK_SLOTS)
				if (hk[x] == r->hash)
					sa->skip[hv[x] - 1] = 1;
		} else {
			for (x = (size_t)(r->ino * 0x9e3779b97f4a7c15ull >> 32) % MARK_SLOTS; iv[x];
			     x = (x + 1) % MARK_SLOTS)
				if (ik[x] == r->ino)
					sa->skip[iv[x] - 1] = 1;
		}
	}
}

void cli_sa_drop_name(cli_sa *sa, uint64_t dir, const char *name)
{
	sa_ent *e;

	if (!sa)
		return;
	pthread_mutex_lock(&sa->mu);
	ring_add(sa, DROP_NAME, dir, name_hash(dir, name));
	e = ent_find(sa, dir, name);
	if (e) {
		sa->st.dropped++;
		ent_free(sa, e);
	}
	pthread_mutex_unlock(&sa->mu);
}

static void drop_ino_locked(cli_sa *sa, uint64_t ino)
{
	sa_ent *e = sa->byino[ino_slot(sa, ino)], *nx;

	for (; e; e = nx) {
		nx = e->inext;
		if (e->a.ino == ino) {
			sa->st.dropped++;
			ent_free(sa, e);
		}
	}
}

void cli_sa_drop_ino(cli_sa *sa, uint64_t ino)
{
	if (!sa)
		return;
	pthread_mutex_lock(&sa->mu);
	ring_add(sa, DROP_INO, ino, 0);
	drop_ino_locked(sa, ino);
	pthread_mutex_unlock(&sa->mu);
}

void cli_sa_revoke(cli_sa *sa, uint64_t ino)
{
	if (!sa)
		return;
	pthread_mutex_lock(&sa->mu);
	ring_add(sa, DROP_BELOW, ino, 0);
	if (ino == 0) {
		while (sa->age.anext != &sa->age) {
			sa->st.dropped++;
			ent_free(sa, sa->age.anext);
		}
	} else {
		sa_dir *d = dir_find(sa, ino);

		drop_ino_locked(sa, ino);
		while (d && d->ents) {
			sa->st.dropped++;
			ent_free(sa, d->ents);
		}
	}
	pthread_mutex_unlock(&sa->mu);
}

/* ---- fetching ---- */

/* Queue a fetch of d after `after` for c (sa->mu held). */
static void fetch_queue(cli_sa *sa, sa_dir *d, const cli_ctx *c, const char *after)
{
	sa_job *j = malloc(sizeof(*j));

	if (!j)
		return;
	j->next = NULL;
	j->dir = d->ino;
	j->gen = sa->gen;
	j->max = d->batch;
	j->ctx = *c;
	snprintf(j->after, sizeof(j->after), "%s", after);
	d->inflight = 1;
	d->eof = 0;
	d->stop = 0;
	d->batch_hits = 0;
	d->overtook = 0;
	d->judged = 0;
	snprintf(d->from, sizeof(d->from), "%s", after);
	*sa->jobs_tail = j;
	sa->jobs_tail = &j->next;
	sa->st.fetches++;
}

/* Back off: the directory's next walk fetch waits (sa->mu held). */
static void backoff(cli_sa *sa, sa_dir *d, uint64_t now)
{
	d->backoff_ms = d->backoff_ms ? d->backoff_ms * 2 : BACKOFF_MIN_MS;
	if (d->backoff_ms > BACKOFF_MAX_MS)
		d->backoff_ms = BACKOFF_MAX_MS;
	d->backoff_until = now + d->backoff_ms;
	sa->st.backoffs++;
}

/* Run job j (sa->mu held; dropped around the callback). */
static void fetch_run(cli_sa *sa, sa_job *j)
{
	uint32_t n = 0, had = 0;
	int eof = 0, rc;
	sa_dir *d;
	uint64_t now;

	pthread_mutex_unlock(&sa->mu);
	rc = sa->o.fetch(sa->o.arg, &j->ctx, j->dir, j->after, j->max, sa->buf, &n, &eof);
	pthread_mutex_lock(&sa->mu);
	now = now_ms(sa);
	d = dir_find(sa, j->dir);
	if (rc) {
		sa->st.fetch_errors++;
		pfs_log(PFS_LOG_DEBUG, "statahead: dir %llu after \"%s\": %s",
			(unsigned long long)j->dir, j->after, pfs_strerror(rc));
	}
	if (d) {
		/* the walk's window before this answer (a fetch behind it that
		 * runs into it does not pull its end back) */
		char old_next[PFS_NAME_MAX + 1];
		int old_eof = d->eof, old_recent = d->seq && now - d->fetched_ms < sa->o.max_age_ms / 2;

		snprintf(old_next, sizeof(old_next), "%s", d->next);
		d->inflight = 0;
		d->fetched_ms = now;
		d->eof = rc ? 1 : eof;
		if (rc) {
			/* refused (a directory this caller may search but not
			 * read) or failed: not again at every second miss */
			backoff(sa, d, now);
		}
		if (!rc && n)
			snprintf(d->next, sizeof(d->next), "%s", sa->buf[n - 1].name);
		if (!rc && sa->gen - j->gen >= CLI_SA_RING) {
			sa->st.discarded += n; /* too many drops meanwhile to tell */
			n = 0;
		}
		memset(sa->skip, 0, sizeof(sa->skip));
		if (!rc && n && sa->gen != j->gen)
			mark_dropped(sa, j, n);
		for (uint32_t i = 0; !rc && i < n; i++) {
			const cli_sa_ent *x = &sa->buf[i];

			if (sa->skip[i]) {
				sa->st.discarded++;
				continue;
			}
			had += ent_put(sa, d, x, now);
			sa->st.fetched++;
		}
		/* mostly what the cache held fresh already (a second walk
		 * starting just before the first one's fetches): no chaining
		 * from here (a walk going on past the cached names misses
		 * there and jumps, cli_sa_miss); the window keeps its end */
		if (!rc && n && had * 2 > n) {
			d->stop = 1;
			if (old_recent && strcmp(old_next, d->next) > 0) {
				snprintf(d->next, sizeof(d->next), "%s", old_next);
				d->eof = old_eof;
			}
		}
	}
	pthread_cond_broadcast(&sa->done);
}

static void *fetch_main(void *arg)
{
	cli_sa *sa = arg;

	pthread_mutex_lock(&sa->mu);
	for (;;) {
		sa_job *j;

		while (!sa->stop && !sa->jobs)
			pthread_cond_wait(&sa->cv, &sa->mu);
		if (sa->stop && !sa->jobs)
			break;
		j = sa->jobs;
		sa->jobs = j->next;
		if (!sa->jobs)
			sa->jobs_tail = &sa->jobs;
		fetch_run(sa, j);
		free(j);
	}
	pthread_mutex_unlock(&sa->mu);
	return NULL;
}

/* Start the queued fetches: wake the thread (started on first use), or
 * run them here (no_thread).  sa->mu held. */
static void fetch_kick(cli_sa *sa)
{
	if (!sa->jobs)
		return;
	if (sa->o.no_thread) {
		while (sa->jobs) {
			sa_job *j = sa->jobs;

			sa->jobs = j->next;
			if (!sa->jobs)
				sa->jobs_tail = &sa->jobs;
			fetch_run(sa, j);
			free(j);
		}
		return;
	}
	if (!sa->started) {
		if (pthread_create(&sa->thread, NULL, fetch_main, sa)) {
			/* no thread: give the jobs up */
			while (sa->jobs) {
				sa_job *j = sa->jobs;
				sa_dir *d = dir_find(sa, j->dir);

				if (d)
					d->inflight = 0;
				sa->jobs = j->next;
				free(j);
			}
			sa->jobs_tail = &sa->jobs;
			return;
		}
		sa->started = 1;
	}
	pthread_cond_signal(&sa->cv);
}

/* ---- the lookup path ---- */

/* e if it is still fresh, else NULL (an old one is freed). */
static sa_ent *fresh(cli_sa *sa, sa_ent *e, uint64_t now)
{
	if (e && now - e->born_ms >= sa->o.max_age_ms) {
		sa->st.expired++;
		ent_free(sa, e);
		return NULL;
	}
	return e;
}

int cli_sa_lookup(cli_sa *sa, const cli_ctx *c, uint64_t dir, const char *name, pfs_attr *a,
		  uint64_t *age_ms)
{
	struct timespec ts = { 0, 0 };
	uint64_t now;
	sa_dir *d;
	sa_ent *e = NULL;
	int rc = -ENOENT, waited = 0;

	if (!sa)
		return -ENOENT;
	pthread_mutex_lock(&sa->mu);
	now = now_ms(sa);
	d = dir_find(sa, dir);
	if (!d)
		goto out;
	/* a fetch in flight whose range may hold the name: wait for it (the
	 * deadline in real monotonic time, whatever clock the tests give) */
	while (!(e = fresh(sa, ent_find(sa, dir, name), now)) && d->ino == dir && d->inflight &&
	       strcmp(name, d->from) > 0) {
		if (!waited++) {
			sa->st.waits++;
			ts = pfs_clock_deadline(CLOCK_MONOTONIC, sa->o.wait_ms);
		}
		if (pthread_cond_timedwait(&sa->done, &sa->mu, &ts) == ETIMEDOUT) {
			e = fresh(sa, ent_find(sa, dir, name), now_ms(sa));
			break;
		}
		now = now_ms(sa);
	}
	if (!e || d->ino != dir)
		goto out;
	*a = e->a;
	*age_ms = now - e->born_ms;
	rc = 0;
	sa->st.hits++;
	d->used_ms = now;
	d->hit_ms = now;
	d->batch_hits++;
	d->ctx = *c;
	/* less than a batch left ahead of the walk: the next one, twice as
	 * large (up to `batch`), so a walk faster than a fetch's round trip
	 * still finds its entries there */
	if (!d->inflight && !d->eof && !d->stop && d->seq - e->seq < d->batch && d->next[0]) {
		d->batch = d->batch * 2 < sa->o.batch ? d->batch * 2 : sa->o.batch;
		fetch_queue(sa, d, c, d->next);
	}
	fetch_kick(sa);
out:
	if (rc)
		sa->st.misses++;
	pthread_mutex_unlock(&sa->mu);
	return rc;
}

void cli_sa_miss(cli_sa *sa, const cli_ctx *c, uint64_t dir, const char *name)
{
	uint64_t now;
	sa_dir *d;
	int window;

	if (!sa)
		return;
	pthread_mutex_lock(&sa->mu);
	now = now_ms(sa);
	d = dir_get(sa, dir, now);
	if (!d)
		goto out;
	d->used_ms = now;
	if (d->misses && now - d->miss_ms < sa->o.window_ms && strcmp(name, d->last_miss) > 0)
		d->misses++;
	else
		d->misses = 1;
	d->miss_ms = now;
	snprintf(d->last_miss, sizeof(d->last_miss), "%s", name);
	if (d->inflight) {
		/* a LOOKUP past the fetch's start that did not wait for it
		 * (it was on its way to the MDS before the fetch started, or
		 * its wait ran out): the walk is overtaking the fetch */
		if (strcmp(name, d->from) > 0)
			d->overtook++;
		goto out;
	}
	if (d->misses < sa->o.trigger)
		goto out;
	/* the walk's window [lo, next] (to the end at eof), fetched recently */
	window = d->seq && now - d->fetched_ms < sa->o.max_age_ms / 2;
	/* a name inside it: missing there means absent or dropped, and the
	 * hits keep the fetches going; fetching it all again would only cost
	 * the MDS (a second walk, an unlink walk after a stat walk) */
	if (window && d->ents && strcmp(name, d->lo) >= 0 &&
	    (d->eof || strcmp(name, d->next) <= 0))
		goto out;
	/* behind a window the walk is still going through (answered or hit
	 * within window_ms): LOOKUPs that left before the fetches covered
	 * them (other walkers', delayed; about as many as there are
	 * walkers), not a new walk: starting one here would pull the window
	 * back.  More of them are a second walk. */
	if (window && strcmp(name, d->lo) < 0 && !d->eof && !d->stop &&
	    (now - d->hit_ms < sa->o.window_ms || now - d->fetched_ms < sa->o.window_ms) &&
	    d->late++ < SA_LATE_MAX) {
		sa->st.behind++;
		goto out;
	}
	/* past the window's end while the walk was using it (hits since its
	 * last fetch started) or overtook the fetch in flight: the walk is
	 * faster than the fetches; start the next one at the walk, larger,
	 * instead of judging the window useless */
	if (window && !d->eof && strcmp(name, d->next) > 0 &&
	    (d->batch_hits || d->overtook >= sa->o.trigger)) {
		sa->st.jumps++;
		pfs_log(PFS_LOG_DEBUG, "statahead: dir %llu: the walk at \"%s\" passed \"%s\": "
			"jumps there", (unsigned long long)dir, name, d->next);
		d->backoff_ms = 0;
		d->backoff_until = 0;
		d->misses = 0;
		d->ctx = *c;
		d->batch = d->batch * 2 < sa->o.batch ? d->batch * 2 : sa->o.batch;
		if (!d->batch)
			d->batch = sa->o.batch < SA_FIRST_BATCH ? sa->o.batch : SA_FIRST_BATCH;
		d->late = 0;
		snprintf(d->lo, sizeof(d->lo), "%s", name);
		fetch_queue(sa, d, c, name);
		fetch_kick(sa);
		goto out;
	}
	if (now < d->backoff_until)
		goto out;
	/* the walk left what was fetched: was the last batch of any use?
	 * (random LOOKUPs in a large directory: not the MDS reading batches
	 * for each pair of them) */
	if (d->seq && !d->batch_hits && !d->judged) {
		backoff(sa, d, now);
		pfs_log(PFS_LOG_DEBUG, "statahead: dir %llu: batch after \"%s\" unused: "
			"no fetch for %llu ms", (unsigned long long)dir, d->from,
			(unsigned long long)d->backoff_ms);
		d->judged = 1; /* the next trigger after the wait fetches */
		goto out;
	}
	if (d->batch_hits)
		d->backoff_ms = 0;
	d->misses = 0;
	d->ctx = *c;
	d->batch = sa->o.batch < SA_FIRST_BATCH ? sa->o.batch : SA_FIRST_BATCH;
	d->late = 0;
	snprintf(d->lo, sizeof(d->lo), "%s", name);
	fetch_queue(sa, d, c, name);
	fetch_kick(sa);
out:
	pthread_mutex_unlock(&sa->mu);
}

void cli_sa_get_stats(cli_sa *sa, cli_sa_stats *st)
{
	pthread_mutex_lock(&sa->mu);
	*st = sa->st;
	st->entries = sa->nents;
	pthread_mutex_unlock(&sa->mu);
}

void cli_sa_destroy(cli_sa *sa)
{
	if (!sa)
		return;
	pthread_mutex_lock(&sa->mu);
	sa->stop = 1;
	/* queued jobs are not run: drop them */
	while (sa->jobs) {
		sa_job *j = sa->jobs;

		sa->jobs = j->next;
		free(j);
	}
	sa->jobs_tail = &sa->jobs;
	pthread_cond_broadcast(&sa->cv);
	pthread_mutex_unlock(&sa->mu);
	if (sa->started)
		pthread_join(sa->thread, NULL);
	for (int i = 0; i < CLI_SA_DIRS; i++)
		dir_clear(sa, &sa->dirs[i]);
	pthread_cond_destroy(&sa->done);
	pthread_cond_destroy(&sa->cv);
	pthread_mutex_destroy(&sa->mu);
	free(sa->buf);
	free(sa->byname);
	free(sa->byino);
	free(sa);
}
