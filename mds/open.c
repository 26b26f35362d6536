/* open.c — the MDS open table (see open.h).
 *
 * Two hash tables under one mutex: entries (client, ino, count) hashed by
 * ino, and clients (id, last heard) hashed by id; plus the orphans loaded
 * at start (held until one lease has passed) and a ring of inodes the hook
 * let go.  Orphans are destroyed outside the mutex (mds_ns_orphan_destroy
 * runs a write transaction and asks the hook again inside it, so an open
 * that came in meanwhile keeps the file). */
#include "mds/open.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/log.h"
#include "mds/orphan.h"

#define OBUCKETS 1024
#define CBUCKETS 256

struct oent {
	uint64_t client, ino;
	uint32_t count;
	int orphan;     /* ino has no name left (the hook kept it) */
	int writer;     /* opened for writing at least once (until the count is 0) */
	struct oent *next;
};

struct ocli {
	uint64_t client;
	int64_t seen_ms;
	unsigned nopen; /* entries of this client */
	struct ocli *next;
};

struct mds_open {
	mds_ns *ns;
	int64_t lease_ms;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int stop, thread_on;
	pthread_t reaper;
	struct oent *ob[OBUCKETS];
	struct ocli *cb[CBUCKETS];
	unsigned nopen, nclients;
	uint64_t *restored; /* orphans found at start, held until hold_until_ms */
	size_t nrestored;
	int64_t hold_until_ms;
	uint64_t gone[MDS_OPEN_GONE_MAX];
	unsigned ngone, gone_pos;
};

int64_t mds_open_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static unsigned hash64(uint64_t v, unsigned n)
{
	v ^= v >> 33;
	v *= 0xff51afd7ed558ccdull;
	v ^= v >> 33;
	return (unsigned)(v % n);
}

static struct oent **ent_slot(mds_open *o, uint64_t client, uint64_t ino)
{
	struct oent **p = &o->ob[hash64(ino, OBUCKETS)];

	while (*p && !((*p)->client == client && (*p)->ino == ino))
		p = &(*p)->next;
	return p;
}

static int ino_open(mds_open *o, uint64_t ino)
{
	for (struct oent *e = o->ob[hash64(ino, OBUCKETS)]; e; e = e->next)
		if (e->ino == ino)
			return 1;
	return 0;
}

/* 1 if some client has ino open for writing. */
static int ino_written(mds_open *o, uint64_t ino)
{
	for (struct oent *e = o->ob[hash64(ino, OBUCKETS)]; e; e = e->next)
		if (e->ino == ino && e->writer)
			return 1;
	return 0;
}

/* 1 if ino is an orphan some entry knows of. */
static int ino_orphan(mds_open *o, uint64_t ino)
{
	for (struct oent *e = o->ob[hash64(ino, OBUCKETS)]; e; e = e->next)
		if (e->ino == ino && e->orphan)
			return 1;
	return 0;
}

static int ino_restored(mds_open *o, uint64_t ino)
{
	for (size_t i = 0; i < o->nrestored; i++)
		if (o->restored[i] == ino)
			return 1;
	return 0;
}

static int ino_gone(mds_open *o, uint64_t ino)
{
	for (unsigned i = 0; i < o->ngone; i++)
		if (o->gone[i] == ino)
			return 1;
	return 0;
}

static struct ocli **cli_slot(mds_open *o, uint64_t client)
{
	struct ocli **p = &o->cb[hash64(client, CBUCKETS)];

	while (*p && (*p)->client != client)
		p = &(*p)->next;
	return p;
}

/* Caller holds mu.  Set (client, ino)'s count; 0 removes the entry. */
static int ent_set(mds_open *o, uint64_t client, uint64_t ino, uint32_t count)
{
	struct oent **p = ent_slot(o, client, ino), *e = *p;
	struct ocli **cp = cli_slot(o, client), *c = *cp;
	int rc = 0;

	if (!e && count == 0)
		return 0;
	if (!c) {
		c = calloc(1, sizeof(*c));
		if (!c)
			return -ENOMEM;
		c->client = client;
		c->next = o->cb[hash64(client, CBUCKETS)];
		o->cb[hash64(client, CBUCKETS)] = c;
		o->nclients++;
		cp = cli_slot(o, client);
	}
	c->seen_ms = mds_open_now_ms();
	if (!e) {
		e = calloc(1, sizeof(*e));
		if (!e) {
			rc = -ENOMEM;
			goto drop_cli;
		}
		e->client = client;
		e->ino = ino;
		e->orphan = ino_orphan(o, ino) || ino_restored(o, ino);
		e->next = o->ob[hash64(ino, OBUCKETS)];
		o->ob[hash64(ino, OBUCKETS)] = e;
		c->nopen++;
		o->nopen++;
	}
	e->count = count;
	if (count > 0)
		return 0;
	*ent_slot(o, client, ino) = e->next;
	free(e);
	c->nopen--;
	o->nopen--;
drop_cli:
	if (c->nopen == 0) {
		*cp = c->next;
		free(c);
		o->nclients--;
	}
	return rc;
}

/* The namespace's hook (orphan.h), inside a write transaction. */
static int hook(void *arg, uint64_t ino)
{
	mds_open *o = arg;
	int open;

	pthread_mutex_lock(&o->mu);
	open = ino_open(o, ino) || ino_restored(o, ino);
	for (struct oent *e = o->ob[hash64(ino, OBUCKETS)]; open && e; e = e->next)
		if (e->ino == ino)
			e->orphan = 1;
	if (!open && !ino_gone(o, ino)) {
		o->gone[o->gone_pos] = ino;
		o->gone_pos = (o->gone_pos + 1) % MDS_OPEN_GONE_MAX;
		if (o->ngone < MDS_OPEN_GONE_MAX)
			o->ngone++;
	}
	pthread_mutex_unlock(&o->mu);
	return open;
}

static void destroy_orphans(mds_open *o, const uint64_t *inos, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int rc = mds_ns_orphan_destroy(o->ns, inos[i]);

		if (rc && rc != -ENOENT && rc != -EBUSY)
			pfs_log(PFS_LOG_WARNING, "open: orphan ino %llu not destroyed: %s "
				"(lfsck or the next start will)", (unsigned long long)inos[i],
				pfs_strerror(rc));
	}
}

/* Set or clear ino's "size may be stale" flag (mds_ns_size_stale),
 * outside mu; a failure to clear only costs readers a glimpse. */
static int size_stale(mds_open *o, uint64_t ino, int stale)
{
	int rc = mds_ns_size_stale(o->ns, ino, stale);

	if (rc && rc != -ENOENT)
		pfs_log(PFS_LOG_WARNING, "open: size flag of ino %llu not %s: %s",
			(unsigned long long)ino, stale ? "set" : "cleared", pfs_strerror(rc));
	return rc == -ENOENT ? 0 : rc;
}

int mds_open_add(mds_open *o, uint64_t client, uint64_t ino)
{
	struct oent *e;
	int rc;

	pthread_mutex_lock(&o->mu);
	if (ino_gone(o, ino)) {
		rc = -ENOENT;
	} else {
		e = *ent_slot(o, client, ino);
		rc = ent_set(o, client, ino, e ? e->count + 1 : 1);
	}
	pthread_mutex_unlock(&o->mu);
	return rc;
}

void mds_open_close(mds_open *o, uint64_t client, uint64_t ino, uint32_t left)
{
	int last, orphan, was_writer, clear;
	struct oent *e;

	pthread_mutex_lock(&o->mu);
	orphan = ino_orphan(o, ino);
	e = *ent_slot(o, client, ino);
	was_writer = e && e->writer;
	/* One open fewer, but never fewer than the client says it still has.
	 * The client counts left before its CLOSE goes out, while an OPEN of
	 * the same inode from another of its threads may already be counted
	 * here: setting the count to left would forget that open (and destroy
	 * an open-unlinked file under it).  left still repairs a count that
	 * a lost CLOSE or an MDS restart left too low. */
	if (e && e->count > 0 && e->count - 1 > left)
		left = e->count - 1;
	if (ent_set(o, client, ino, left))
		pfs_log(PFS_LOG_WARNING, "open: no memory for the opens of ino %llu",
			(unsigned long long)ino);
	last = orphan && !ino_open(o, ino) && !ino_restored(o, ino);
	/* The client pushes its size (SETSIZE) before its last CLOSE: with
	 * no writer left the MDS's size is the file's. */
	clear = was_writer && !ino_written(o, ino);
	pthread_mutex_unlock(&o->mu);
	if (clear && !last)
		size_stale(o, ino, 0);
	if (last)
		destroy_orphans(o, &ino, 1);
}

int mds_open_writer(mds_open *o, uint64_t client, uint64_t ino)
{
	struct oent *e;
	int rc = 0;

	pthread_mutex_lock(&o->mu);
	e = *ent_slot(o, client, ino);
	if (e)
		e->writer = 1;
	pthread_mutex_unlock(&o->mu);
	/* Set each time (a transaction only when it changes): a writer that
	 * opened before an MDS restart is not in the table, so the flag of
	 * an earlier writer may be gone by now (mds/README.md). */
	if (e)
		rc = size_stale(o, ino, 1);
	return rc;
}

void mds_open_size_pushed(mds_open *o, uint64_t ino)
{
	int written;

	pthread_mutex_lock(&o->mu);
	written = ino_written(o, ino);
	pthread_mutex_unlock(&o->mu);
	if (!written)
		size_stale(o, ino, 0);
}

int mds_open_held(mds_open *o, uint64_t client, uint64_t ino)
{
	int held;

	pthread_mutex_lock(&o->mu);
	held = *ent_slot(o, client, ino) != NULL;
	if (!held && ino_restored(o, ino))
		held = ent_set(o, client, ino, 1) == 0;
	pthread_mutex_unlock(&o->mu);
	return held;
}

void mds_open_undo(mds_open *o, uint64_t client, uint64_t ino)
{
	struct oent *e;

	pthread_mutex_lock(&o->mu);
	e = *ent_slot(o, client, ino);
	if (e)
		ent_set(o, client, ino, e->count - 1);
	pthread_mutex_unlock(&o->mu);
}

void mds_open_seen(mds_open *o, uint64_t client)
{
	struct ocli *c;

	if (!o)
		return;
	pthread_mutex_lock(&o->mu);
	c = *cli_slot(o, client);
	if (c)
		c->seen_ms = mds_open_now_ms();
	pthread_mutex_unlock(&o->mu);
}

void mds_open_reap(mds_open *o, int64_t now_ms)
{
	uint64_t *cand = NULL;
	size_t n = 0, cap = 0;

	pthread_mutex_lock(&o->mu);
	for (unsigned b = 0; b < OBUCKETS; b++) {
		struct oent **p = &o->ob[b];

		while (*p) {
			struct oent *e = *p;
			struct ocli **cp = cli_slot(o, e->client), *c = *cp;

			if (c && now_ms - c->seen_ms <= o->lease_ms) {
				p = &e->next;
				continue;
			}
			if (n == cap) {
				size_t nc = cap ? cap * 2 : 16;
				uint64_t *nv = realloc(cand, nc * sizeof(*nv));

				if (!nv) /* the next round tries again */
					break;
				cand = nv;
				cap = nc;
			}
			pfs_log(PFS_LOG_INFO, "open: lease of client %016llx expired: its open "
				"of ino %llu dropped", (unsigned long long)e->client,
				(unsigned long long)e->ino);
			if (e->orphan)
				cand[n++] = e->ino;
			/* a writer's size flag stays set: readers glimpse
			 * the size it never pushed from the objects */
			*p = e->next;
			free(e);
			o->nopen--;
			if (c && --c->nopen == 0) {
				*cp = c->next;
				free(c);
				o->nclients--;
			}
		}
	}
	if (o->nrestored && now_ms >= o->hold_until_ms) {
		for (size_t i = 0; i < o->nrestored; i++) {
			if (n == cap) {
				size_t nc = cap ? cap * 2 : 16;
				uint64_t *nv = realloc(cand, nc * sizeof(*nv));

				if (!nv)
					break;
				cand = nv;
				cap = nc;
			}
			cand[n++] = o->restored[i];
		}
		if (n >= o->nrestored) {
			free(o->restored);
			o->restored = NULL;
			o->nrestored = 0;
		}
	}
	/* only inodes nobody holds any more */
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (!ino_open(o, cand[i]) && !ino_restored(o, cand[i]))
			cand[k++] = cand[i];
	pthread_mutex_unlock(&o->mu);
	destroy_orphans(o, cand, k);
	free(cand);
}

void mds_open_counts(mds_open *o, unsigned *opens, unsigned *clients, unsigned *restored)
{
	pthread_mutex_lock(&o->mu);
	*opens = o->nopen;
	*clients = o->nclients;
	*restored = (unsigned)o->nrestored;
	pthread_mutex_unlock(&o->mu);
}

static void *reaper(void *arg)
{
	mds_open *o = arg;
	int64_t period = o->lease_ms / 4 > 0 ? o->lease_ms / 4 : 1;

	pthread_mutex_lock(&o->mu);
	while (!o->stop) {
		struct timespec ts = pfs_clock_deadline(CLOCK_REALTIME, period);

		pthread_cond_timedwait(&o->cv, &o->mu, &ts);
		if (o->stop)
			break;
		pthread_mutex_unlock(&o->mu);
		mds_open_reap(o, mds_open_now_ms());
		pthread_mutex_lock(&o->mu);
	}
	pthread_mutex_unlock(&o->mu);
	return NULL;
}

int mds_open_create(mds_ns *ns, unsigned lease_s, int no_thread, mds_open **out)
{
	mds_open *o = calloc(1, sizeof(*o));
	int rc;

	if (!o)
		return -ENOMEM;
	o->ns = ns;
	o->lease_ms = (int64_t)(lease_s ? lease_s : 30) * 1000;
	pthread_mutex_init(&o->mu, NULL);
	pthread_cond_init(&o->cv, NULL);
	rc = mds_ns_orphan_list(ns, &o->restored, &o->nrestored);
	if (rc) {
		pthread_cond_destroy(&o->cv);
		pthread_mutex_destroy(&o->mu);
		free(o);
		return rc;
	}
	o->hold_until_ms = mds_open_now_ms() + o->lease_ms;
	if (o->nrestored)
		pfs_log(PFS_LOG_NOTICE, "open: %zu open-unlinked file(s) from before the restart "
			"held %lld s for their clients", o->nrestored,
			(long long)(o->lease_ms / 1000));
	mds_ns_set_open_hook(ns, hook, o);
	if (!no_thread) {
		rc = pthread_create(&o->reaper, NULL, reaper, o);
		if (rc) {
			mds_open_destroy(o);
			return -rc;
		}
		o->thread_on = 1;
	}
	*out = o;
	return 0;
}

void mds_open_destroy(mds_open *o)
{
	if (!o)
		return;
	mds_ns_set_open_hook(o->ns, NULL, NULL);
	if (o->thread_on) {
		pthread_mutex_lock(&o->mu);
		o->stop = 1;
		pthread_cond_broadcast(&o->cv);
		pthread_mutex_unlock(&o->mu);
		pthread_join(o->reaper, NULL);
	}
	for (unsigned b = 0; b < OBUCKETS; b++)
		while (o->ob[b]) {
			struct oent *e = o->ob[b];

			o->ob[b] = e->next;
			free(e);
		}
	for (unsigned b = 0; b < CBUCKETS; b++)
		while (o->cb[b]) {
			struct ocli *c = o->cb[b];

			o->cb[b] = c->next;
			free(c);
		}
	free(o->restored);
	pthread_cond_destroy(&o->cv);
	pthread_mutex_destroy(&o->mu);
	free(o);
}
