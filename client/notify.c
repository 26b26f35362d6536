/* notify.c — the notify thread and the lease-length cache timeouts of
 * mount.pfs (see notify.h). */
#include "client/notify.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <fuse_lowlevel.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/rpc.h"

#define DIR_BUCKETS 4096
#define RECENT 256
#define RECENT_MS 2000
/* < MDS_LEASE_REG_GRACE_MS: the MDS keeps a registration longer than a
 * mount believes in it */
#define UP_SLACK_MS 10000
#define RETRY_MS 1000

/* A directory the kernel got an entry for: where its dentry is. */
typedef struct dirent_rec {
	uint64_t ino, parent;
	uint64_t until_ms;    /* names below were given long timeouts until then */
	struct dirent_rec *next;
	char name[];
} dirent_rec;

struct cli_notify {
	cli_mdc *mdc;
	cli_notify_opts o;
	struct fuse_session *se;
	pthread_t thread;
	int started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int stop;                  /* guarded by mu; also read by the interrupt check */
	/* channel state (mu) */
	int ok;                    /* the last wait was answered */
	uint64_t sent_ms;          /* when the wait in flight was sent */
	uint32_t lease_ms;         /* the effective lease (min of MDS's and ours) */
	uint64_t boot_id, ack;
	/* directories (mu) */
	dirent_rec *dirs[DIR_BUCKETS];
	unsigned ndirs;
	uint64_t swept_ms;
	/* directories with names invalidated lately (mu) */
	struct { uint64_t ino, ms; } recent[RECENT];
	cli_notify_stats st;
	void (*inval_fn)(void *arg, uint64_t ino); /* cli_notify_on_inval */
	void *inval_arg;
	void (*recall_fn)(void *arg, uint64_t dir); /* cli_notify_on_recall */
	void *recall_arg;
};

static unsigned hash64(uint64_t x, unsigned mod)
{
	return (unsigned)((x * 0x9E3779B97F4A7C15ull) >> 40) % mod;
}

static int up_locked(cli_notify *n, uint64_t now)
{
	return n->ok && n->lease_ms && now < n->sent_ms + n->o.wait_ms + UP_SLACK_MS;
}

void cli_notify_on_inval(cli_notify *n, void (*fn)(void *arg, uint64_t ino), void *arg)
{
	n->inval_fn = fn;
	n->inval_arg = arg;
}

void cli_notify_on_recall(cli_notify *n, void (*fn)(void *arg, uint64_t dir), void *arg)
{
	n->recall_fn = fn;
	n->recall_arg = arg;
}

int cli_notify_up(cli_notify *n)
{
	int up;

	if (!n)
		return 0;
	pthread_mutex_lock(&n->mu);
	up = up_locked(n, pfs_clock_ms());
	pthread_mutex_unlock(&n->mu);
	return up;
}

double cli_notify_attr_timeout(cli_notify *n, double dflt)
{
	double t = dflt;

	if (!n)
		return dflt;
	pthread_mutex_lock(&n->mu);
	if (up_locked(n, pfs_clock_ms()) && n->lease_ms / 1000.0 > dflt)
		t = n->lease_ms / 1000.0;
	pthread_mutex_unlock(&n->mu);
	return t;
}

static dirent_rec **dir_slot(cli_notify *n, uint64_t ino)
{
	dirent_rec **pp = &n->dirs[hash64(ino, DIR_BUCKETS)];

	while (*pp && (*pp)->ino != ino)
		pp = &(*pp)->next;
	return pp;
}

/* Forget directories below which no long timeout is left (mu held; at
 * most once a second). */
static void dir_sweep(cli_notify *n, uint64_t now)
{
	if (now - n->swept_ms < 1000)
		return;
	n->swept_ms = now;
	for (unsigned b = 0; b < DIR_BUCKETS; b++)
		for (dirent_rec **pp = &n->dirs[b]; *pp;) {
			dirent_rec *d = *pp;

			if (d->until_ms < now) {
				*pp = d->next;
				free(d);
				n->ndirs--;
			} else {
				pp = &d->next;
			}
		}
}

/* Note directory ino's entry (parent, name) (mu held). */
static void dir_note(cli_notify *n, uint64_t ino, uint64_t parent, const char *name,
		     uint64_t now)
{
	dirent_rec **pp = dir_slot(n, ino), *d = *pp;
	size_t len = strlen(name);

	if (d && d->parent == parent && strcmp(d->name, name) == 0)
		return;
	if (d) {
		/* renamed since: the dentry the kernel has now is this one */
		*pp = d->next;
		free(d);
		n->ndirs--;
	}
	if (n->ndirs >= n->o.max_dirs)
		dir_sweep(n, now);
	if (n->ndirs >= n->o.max_dirs || !(d = malloc(sizeof(*d) + len + 1)))
		return;
	d->ino = ino;
	d->parent = parent;
	d->until_ms = now;
	memcpy(d->name, name, len + 1);
	pp = &n->dirs[hash64(ino, DIR_BUCKETS)];
	d->next = *pp;
	*pp = d;
	n->ndirs++;
}

double cli_notify_entry_timeout(cli_notify *n, double dflt, uint64_t parent, const char *name,
				const pfs_attr *a)
{
	double t = dflt;
	uint64_t now;
	dirent_rec *d;
	unsigned r = hash64(parent, RECENT);

	if (!n)
		return dflt;
	now = pfs_clock_ms();
	pthread_mutex_lock(&n->mu);
	if (S_ISDIR(a->mode))
		dir_note(n, a->ino, parent, name, now);
	/* the names of a directory this mount can drop on a PERM record, and
	 * none just invalidated there */
	d = up_locked(n, now) && dflt > 0 ? *dir_slot(n, parent) : NULL;
	if (d && !(n->recent[r].ino == parent && now - n->recent[r].ms < RECENT_MS) &&
	    n->lease_ms / 1000.0 > dflt) {
		t = n->lease_ms / 1000.0;
		if (d->until_ms < now + n->lease_ms)
			d->until_ms = now + n->lease_ms;
	}
	pthread_mutex_unlock(&n->mu);
	return t;
}

/* ---- the thread ---- */

static void note_recent(cli_notify *n, uint64_t dir, uint64_t now)
{
	unsigned r = hash64(dir, RECENT);

	pthread_mutex_lock(&n->mu);
	n->recent[r].ino = dir;
	n->recent[r].ms = now;
	pthread_mutex_unlock(&n->mu);
}

/* Apply a batch; counts into st (the caller adds them under mu). */
static void apply(cli_notify *n, const cli_notify_batch *b, cli_notify_stats *st)
{
	uint64_t now = pfs_clock_ms();

	for (uint32_t i = 0; i < b->n; i++) {
		const cli_notify_rec *r = &b->v[i];
		char name[PFS_NAME_MAX + 1];
		uint64_t parent = 0;

		switch (r->kind) {
		case PFS_NOTIFY_INO:
			/* attributes only (offset < 0): the page cache is the
			 * open's to judge (close-to-open, fuse_ops.c) */
			(void)fuse_lowlevel_notify_inval_inode(n->se, r->ino, -1, 0);
			if (n->inval_fn)
				n->inval_fn(n->inval_arg, r->ino);
			st->inval_inode++;
			break;
		case PFS_NOTIFY_ENTRY:
			note_recent(n, r->ino, now);
			(void)fuse_lowlevel_notify_inval_entry(n->se, r->ino, r->name,
							       strlen(r->name));
			st->inval_entry++;
			break;
		case PFS_NOTIFY_PERM:
			note_recent(n, r->ino, now);
			(void)fuse_lowlevel_notify_inval_inode(n->se, r->ino, -1, 0);
			if (n->inval_fn) /* the directory's attributes, names below */
				n->inval_fn(n->inval_arg, r->ino);
			pthread_mutex_lock(&n->mu);
			{
				dirent_rec *d = *dir_slot(n, r->ino);

				if (d) {
					parent = d->parent;
					memcpy(name, d->name, strlen(d->name) + 1);
				}
			}
			pthread_mutex_unlock(&n->mu);
			/* the directory's own dentry: the kernel drops the
			 * names below it with it */
			if (parent)
				(void)fuse_lowlevel_notify_inval_entry(n->se, parent, name,
								       strlen(name));
			st->inval_perm++;
			break;
		case PFS_NOTIFY_RECALL:
			/* a directory delegation: its unlinks go, then it goes
			 * back (dirdeleg.h); never waits here */
			if (n->recall_fn)
				n->recall_fn(n->recall_arg, r->ino);
			st->recalls++;
			break;
		default:
			break;
		}
	}
}

/* What this mount cached under leases that went unwatched (the MDS
 * restarted or forgot the mount, or dropped records for it): the names
 * below every directory it knows go (each directory's own dentry: the
 * kernel drops the unused ones below with it), and the root's attributes.
 * Inodes still in use (open files, working directories) keep their cached
 * attributes for at most one lease. */
static void flush_all(cli_notify *n)
{
	struct ent { uint64_t parent; char name[PFS_NAME_MAX + 1]; } *v;
	size_t k = 0, cap;

	pthread_mutex_lock(&n->mu);
	cap = n->ndirs;
	v = cap ? malloc(cap * sizeof(*v)) : NULL;
	for (unsigned b = 0; v && b < DIR_BUCKETS; b++)
		for (dirent_rec *d = n->dirs[b]; d && k < cap; d = d->next) {
			v[k].parent = d->parent;
			memcpy(v[k].name, d->name, strlen(d->name) + 1);
			k++;
		}
	pthread_mutex_unlock(&n->mu);
	(void)fuse_lowlevel_notify_inval_inode(n->se, FUSE_ROOT_ID, -1, 0);
	for (size_t i = 0; i < k; i++)
		(void)fuse_lowlevel_notify_inval_entry(n->se, v[i].parent, v[i].name,
						       strlen(v[i].name));
	if (cap && !v)
		pfs_log(PFS_LOG_WARNING, "md_lease: no memory to drop the cached names: they "
			"may be stale for one lease at most");
	free(v);
	if (n->inval_fn)
		n->inval_fn(n->inval_arg, 0);
	/* the MDS's delegation table went with it */
	if (n->recall_fn)
		n->recall_fn(n->recall_arg, 0);
}

static int stop_check(void *arg)
{
	cli_notify *n = arg;
	int s;

	pthread_mutex_lock(&n->mu);
	s = n->stop;
	pthread_mutex_unlock(&n->mu);
	return s;
}

/* Sleep ms unless stopped; 1 if stopped. */
static int nap(cli_notify *n, unsigned ms)
{
	struct timespec ts = pfs_clock_deadline(CLOCK_REALTIME, ms);
	int s;

	pthread_mutex_lock(&n->mu);
	if (!n->stop)
		pthread_cond_timedwait(&n->cv, &n->mu, &ts);
	s = n->stop;
	pthread_mutex_unlock(&n->mu);
	return s;
}

static void *notify_main(void *arg)
{
	cli_notify *n = arg;
	int logged_down = 0;

	pfs_rpc_set_interrupt(stop_check, n);
	while (!stop_check(n)) {
		cli_notify_batch b;
		cli_notify_stats st = { 0 };
		uint64_t ack;
		int rc;

		pthread_mutex_lock(&n->mu);
		n->sent_ms = pfs_clock_ms();
		ack = n->ack;
		pthread_mutex_unlock(&n->mu);
		rc = cli_mdc_notify_wait(n->mdc, ack, n->o.wait_ms, 0, &b);
		{
			uint64_t late = pfs_clock_ms() - n->sent_ms;

			/* answered after the channel counted as down: say so (once
			 * per outage); the kernel had the short timeouts meanwhile */
			if (!rc && late > n->o.wait_ms + UP_SLACK_MS && !logged_down)
				pfs_log(PFS_LOG_NOTICE, "md_lease: the MDS answered after %llu ms "
					"(the channel counted as down meanwhile)",
					(unsigned long long)late);
		}
		if (stop_check(n)) {
			free(b.v);
			break;
		}
		if (rc || !b.lease_ms) {
			pthread_mutex_lock(&n->mu);
			n->ok = 0;
			n->st.failures += rc != 0;
			pthread_mutex_unlock(&n->mu);
			if (!logged_down)
				pfs_log(PFS_LOG_NOTICE, "md_lease: notify channel down (%s): names "
					"and attributes cached for the short timeout",
					rc ? pfs_strerror(rc) : "the MDS grants no leases");
			/* no recall could reach this mount now: its directory
			 * delegations are given up (their unlinks still go) */
			if (!logged_down && n->recall_fn)
				n->recall_fn(n->recall_arg, 0);
			logged_down = 1;
			free(b.v);
			/* an MDS without leases is asked again now and then */
			if (nap(n, rc ? RETRY_MS : 30000))
				break;
			continue;
		}
		if (logged_down || !n->boot_id)
			pfs_log(PFS_LOG_NOTICE, "md_lease: notify channel up (lease %u ms)",
				b.lease_ms);
		logged_down = 0;
		if (n->boot_id && b.boot_id != n->boot_id) {
			pfs_log(PFS_LOG_NOTICE, "md_lease: the MDS restarted: the names cached "
				"under its leases are dropped");
			flush_all(n);
		} else if (n->boot_id && n->ack && b.seq <= n->ack) {
			/* its sequence started again: it forgot this mount */
			pfs_log(PFS_LOG_NOTICE, "md_lease: the MDS had forgotten this mount: the "
				"names cached under its leases are dropped");
			flush_all(n);
		} else if (b.flags & PFS_NOTIFY_RESET) {
			pfs_log(PFS_LOG_NOTICE, "md_lease: the MDS dropped invalidations: the names "
				"cached under its leases are dropped");
			st.resets++;
			flush_all(n);
		}
		{
			uint64_t t0 = pfs_clock_ms(), dt;

			apply(n, &b, &st);
			dt = pfs_clock_ms() - t0;
			if (dt > 1000)
				pfs_log(PFS_LOG_NOTICE, "md_lease: %u invalidation(s) took %llu ms",
					b.n, (unsigned long long)dt);
		}
		pthread_mutex_lock(&n->mu);
		n->boot_id = b.boot_id;
		n->ack = b.seq;
		n->lease_ms = b.lease_ms;
		if (n->o.lease_s * 1000.0 < n->lease_ms)
			n->lease_ms = (uint32_t)(n->o.lease_s * 1000.0);
		n->ok = 1;
		n->st.batches++;
		n->st.inval_inode += st.inval_inode;
		n->st.inval_entry += st.inval_entry;
		n->st.inval_perm += st.inval_perm;
		n->st.resets += st.resets;
		n->st.recalls += st.recalls;
		pthread_mutex_unlock(&n->mu);
		free(b.v);
	}
	pfs_rpc_set_interrupt(NULL, NULL);
	return NULL;
}

int cli_notify_create(cli_mdc *mdc, const cli_notify_opts *o, cli_notify **out)
{
	cli_notify *n = calloc(1, sizeof(*n));

	if (!n)
		return -ENOMEM;
	n->mdc = mdc;
	n->o = *o;
	if (!n->o.wait_ms)
		n->o.wait_ms = 5000;
	if (n->o.wait_ms > PFS_NOTIFY_WAIT_MAX_MS)
		n->o.wait_ms = PFS_NOTIFY_WAIT_MAX_MS;
	if (!n->o.max_dirs)
		n->o.max_dirs = 65536;
	pthread_mutex_init(&n->mu, NULL);
	pthread_cond_init(&n->cv, NULL);
	*out = n;
	return 0;
}

int cli_notify_start(cli_notify *n, struct fuse_session *se)
{
	int rc;

	n->se = se;
	rc = pthread_create(&n->thread, NULL, notify_main, n);
	if (rc)
		return -rc;
	n->started = 1;
	return 0;
}

/* The BYE's own interrupt: give up after a few seconds. */
static int bye_check(void *arg)
{
	return pfs_clock_ms() > *(uint64_t *)arg;
}

void cli_notify_stop(cli_notify *n)
{
	cli_notify_batch b;
	uint64_t deadline;
	int ok;

	if (!n || !n->started)
		return;
	pthread_mutex_lock(&n->mu);
	n->stop = 1;
	ok = n->ok;
	pthread_cond_broadcast(&n->cv);
	pthread_mutex_unlock(&n->mu);
	/* the MDS answers the held wait (-ECANCELED) and forgets the leases */
	if (ok) {
		deadline = pfs_clock_ms() + 3000;
		pfs_rpc_set_interrupt(bye_check, &deadline);
		if (cli_mdc_notify_wait(n->mdc, 0, 0, PFS_NOTIFY_BYE, &b) == 0)
			free(b.v);
		pfs_rpc_set_interrupt(NULL, NULL);
	}
	pthread_join(n->thread, NULL);
	n->started = 0;
	pfs_log(PFS_LOG_NOTICE, "md_lease: %llu batches, %llu inode, %llu entry and %llu "
		"directory invalidations, %llu resets, %llu failed waits, %llu delegation "
		"recalls", (unsigned long long)n->st.batches, (unsigned long long)n->st.inval_inode,
		(unsigned long long)n->st.inval_entry, (unsigned long long)n->st.inval_perm,
		(unsigned long long)n->st.resets, (unsigned long long)n->st.failures,
		(unsigned long long)n->st.recalls);
}

void cli_notify_destroy(cli_notify *n)
{
	if (!n)
		return;
	cli_notify_stop(n);
	for (unsigned b = 0; b < DIR_BUCKETS; b++)
		while (n->dirs[b]) {
			dirent_rec *d = n->dirs[b];

			n->dirs[b] = d->next;
			free(d);
		}
	pthread_cond_destroy(&n->cv);
	pthread_mutex_destroy(&n->mu);
	free(n);
}

void cli_notify_get_stats(cli_notify *n, cli_notify_stats *st)
{
	pthread_mutex_lock(&n->mu);
	*st = n->st;
	pthread_mutex_unlock(&n->mu);
}
