/* dirdeleg.c — what a mount does under directory delegations (see
 * dirdeleg.h): the directories followed (streaks, back-off, the delegation
 * held), the names the kernel got in delegated directories, the queue of
 * answered unlinks and creates and the flusher threads that send them (one
 * UNLINK, or an UNLINK_BATCH or a CREATE_BATCH of one directory's queued
 * jobs); the name sets of complete directories (negative lookups answered
 * here) and the create slots of held directories.
 *
 * One mutex guards everything; RPCs run without it.  A directory with
 * pending unlinks, a delegation, a GET or RETURN in flight or an error to
 * report is never evicted from the table. */
#include "client/dirdeleg.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"

#define DIR_BUCKETS 64
#define NAME_BUCKETS 1024
#define CN_BUCKETS 2048
/* most jobs one request carries: an UNLINK_BATCH's or a CREATE_BATCH's */
#define UQ_BATCH_MAX PFS_UNLINK_BATCH_MAX
_Static_assert(PFS_CREATE_SLOTS_MAX == UQ_BATCH_MAX, "one batch array for both kinds");

/* A name of a complete (or being listed) directory. */
typedef struct dd_cname {
	struct dd_cname *next;
	char name[];
} dd_cname;

typedef struct dd_dir {
	uint64_t ino;
	uint64_t used;         /* last unlink in it (eviction) */
	/* the streak that asks for the delegation */
	pfs_cred streak_cred;
	unsigned streak_n;
	uint64_t streak_last;
	uint64_t retry_at;     /* no DELEG_GET before */
	unsigned backoff_ms;   /* the next wait after a refusal or recall */
	/* the delegation */
	int held;
	int getting;           /* a DELEG_GET in flight */
	int need_return;       /* recalled: no new async; RETURN once pending is 0 */
	int returning;         /* the RETURN in flight */
	unsigned recall_gen;   /* bumped by each recall (a GET answered after one
	                          is returned at once) */
	cli_ctx ctx;           /* the credential it was granted for, and the job */
	uint32_t lease_ms;
	uint64_t valid_until;  /* this clock */
	unsigned pending;      /* unlinks queued or in flight in it */
	int err;               /* first failed unlink since the last fsyncdir */
	/* the name set (dirdeleg.h, "Negative lookups") */
	dd_cname **ctab;       /* CN_BUCKETS chains; non-NULL while collecting */
	unsigned cn;           /* names in it */
	int complete;          /* listed to the end: a name not in it is not there */
	int listing;           /* a listing runs (pins the directory) */
	unsigned cgen;         /* bumped when the set is dropped (a listing in
	                          flight then makes nothing complete) */
	/* create slots (dirdeleg.h, "Asynchronous create"): sino/slay[islot ..
	 * nslot-1] unused; dattr the directory's attributes with them */
	uint64_t sino[PFS_CREATE_SLOTS_MAX];
	pfs_layout *slay;      /* PFS_CREATE_SLOTS_MAX, allocated at the first fetch */
	unsigned nslot, islot;
	int slot_getting;      /* a CREATE_SLOTS in flight */
	uint64_t slot_retry_at; /* no CREATE_SLOTS before (after a refusal) */
	uint64_t slot_until;   /* the slots are not used after (their life on the
	                          MDS, PFS_CREATE_SLOT_TTL_S, less a margin) */
	unsigned slot_gen;     /* bumped when the slots are dropped */
	pfs_attr dattr;
	struct dd_dir *next;
} dd_dir;

typedef struct dd_name {
	uint64_t dir, ino;
	uint32_t mode;
	struct dd_name *hnext;         /* bucket chain */
	struct dd_name *older, *newer; /* age list (eviction) */
	char name[];
} dd_name;

enum { UQ_UNLINK, UQ_CREATE };

typedef struct dd_job {
	uint64_t ino;
	cli_ctx ctx;
	int kind;              /* UQ_UNLINK or UQ_CREATE */
	uint32_t mode;         /* a create's */
	int closed;            /* a create whose file was closed before it left */
	uint64_t ready_at;     /* held until then (opts.hold_ms) */
	struct dd_dir *d;      /* its directory (pinned by its pending count) */
	int inflight;
	unsigned nhash;        /* name_hash of (dir, name): same-name checks */
	struct dd_job *next;
	char name[];
} dd_job;

struct cli_dd {
	cli_dd_opts o;
	pthread_mutex_t mu;
	pthread_cond_t work;  /* flushers: a job queued, a return due, stop */
	pthread_cond_t done;  /* waiters: a job or a return finished */
	int stop;
	dd_dir *dirs[DIR_BUCKETS];
	unsigned ndirs;
	dd_name *names[NAME_BUCKETS];
	dd_name *oldest, *newest;
	unsigned nnames;
	dd_job *head, *tail;  /* FIFO */
	unsigned npending;    /* atomic reads for the fast paths */
	unsigned nheld;       /* atomic reads for the fast paths */
	unsigned nbusy;       /* dirs with need_return/returning/getting (quiesce) */
	unsigned ncn;         /* names in all sets */
	int no_batch;         /* the MDS refused UNLINK_BATCH: single UNLINKs */
	unsigned urgent;      /* callers waiting for jobs: no create is held */
	cli_dd_stats st;
	pthread_t *thr;
	unsigned nthr;
};

static uint64_t now_ms(cli_dd *q)
{
	return q->o.ops.clock ? q->o.ops.clock(q->o.ops.arg) : pfs_clock_ms();
}

static unsigned hash64(uint64_t x)
{
	return (unsigned)((x * 0x9E3779B97F4A7C15ull) >> 40);
}

static unsigned name_hash(uint64_t dir, const char *name)
{
	uint64_t h = 1469598103934665603ull ^ dir;

	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 1099511628211ull;
	return hash64(h) % NAME_BUCKETS;
}

static int cred_eq(const pfs_cred *a, const pfs_cred *b)
{
	if (a->uid != b->uid || a->gid != b->gid || a->ngroups != b->ngroups ||
	    a->ngroups > PFS_MAX_GROUPS)
		return 0;
	return memcmp(a->groups, b->groups, a->ngroups * sizeof(a->groups[0])) == 0;
}

/* The same credential and job: one UNLINK_BATCH may carry both. */
static int ctx_eq(const cli_ctx *a, const cli_ctx *b)
{
	return cred_eq(&a->cred, &b->cred) && strcmp(a->job, b->job) == 0;
}

/* ---- names known in delegated directories (mu held) ---- */

static dd_name **name_slot(cli_dd *q, uint64_t dir, const char *name)
{
	dd_name **pp = &q->names[name_hash(dir, name)];

	while (*pp && ((*pp)->dir != dir || strcmp((*pp)->name, name) != 0))
		pp = &(*pp)->hnext;
	return pp;
}

static void name_unlink(cli_dd *q, dd_name **pp)
{
	dd_name *e = *pp;

	*pp = e->hnext;
	if (e->older)
		e->older->newer = e->newer;
	else
		q->oldest = e->newer;
	if (e->newer)
		e->newer->older = e->older;
	else
		q->newest = e->older;
	q->nnames--;
	free(e);
}

static void name_drop(cli_dd *q, uint64_t dir, const char *name)
{
	dd_name **pp = name_slot(q, dir, name);

	if (*pp)
		name_unlink(q, pp);
}

/* Every name of dir (0: all). */
static void names_drop_dir(cli_dd *q, uint64_t dir)
{
	for (unsigned b = 0; b < NAME_BUCKETS; b++)
		for (dd_name **pp = &q->names[b]; *pp;) {
			if (!dir || (*pp)->dir == dir)
				name_unlink(q, pp);
			else
				pp = &(*pp)->hnext;
		}
}

static void name_put(cli_dd *q, uint64_t dir, const char *name, uint64_t ino, uint32_t mode)
{
	dd_name **pp = name_slot(q, dir, name), *e;
	size_t len = strlen(name);

	if (*pp) {
		(*pp)->ino = ino;
		(*pp)->mode = mode;
		return;
	}
	if (q->nnames >= q->o.max_names && q->oldest)
		name_unlink(q, name_slot(q, q->oldest->dir, q->oldest->name));
	e = malloc(sizeof(*e) + len + 1);
	if (!e)
		return; /* not known: that unlink is synchronous */
	e->dir = dir;
	e->ino = ino;
	e->mode = mode;
	memcpy(e->name, name, len + 1);
	pp = &q->names[name_hash(dir, name)];
	e->hnext = *pp;
	*pp = e;
	e->older = q->newest;
	e->newer = NULL;
	if (q->newest)
		q->newest->newer = e;
	else
		q->oldest = e;
	q->newest = e;
	q->nnames++;
}

/* ---- directories (mu held) ---- */

static int dir_busy(const dd_dir *d)
{
	return d->held || d->getting || d->need_return || d->returning || d->pending || d->err ||
	       d->listing || d->slot_getting;
}

static dd_dir *dir_find(cli_dd *q, uint64_t ino)
{
	dd_dir *d = q->dirs[hash64(ino) % DIR_BUCKETS];

	while (d && d->ino != ino)
		d = d->next;
	return d;
}

/* ---- name sets of complete directories (mu held) ---- */

static unsigned cn_hash(const char *name)
{
	return name_hash(0, name) % CN_BUCKETS;
}

static dd_cname **cn_slot(dd_dir *d, const char *name)
{
	dd_cname **pp = &d->ctab[cn_hash(name)];

	while (*pp && strcmp((*pp)->name, name) != 0)
		pp = &(*pp)->next;
	return pp;
}

/* d's set goes: not complete, a listing in flight makes nothing. */
static void cn_drop(cli_dd *q, dd_dir *d)
{
	d->cgen++;
	d->complete = 0;
	if (!d->ctab)
		return;
	for (unsigned b = 0; b < CN_BUCKETS; b++)
		while (d->ctab[b]) {
			dd_cname *e = d->ctab[b];

			d->ctab[b] = e->next;
			free(e);
		}
	free(d->ctab);
	d->ctab = NULL;
	q->ncn -= d->cn;
	d->cn = 0;
}

/* A failure that may leave the set short: dropped, counted. */
static void cn_fail(cli_dd *q, dd_dir *d)
{
	if (d->ctab)
		q->st.incomplete++;
	cn_drop(q, d);
}

static void cn_add(cli_dd *q, dd_dir *d, const char *name)
{
	dd_cname **pp, *e;
	size_t len;

	if (!d->ctab)
		return;
	pp = cn_slot(d, name);
	if (*pp)
		return;
	len = strlen(name);
	e = q->ncn < q->o.max_cnames ? malloc(sizeof(*e) + len + 1) : NULL;
	if (!e) { /* over the cap (or no memory): the set would be short */
		cn_fail(q, d);
		return;
	}
	memcpy(e->name, name, len + 1);
	e->next = NULL;
	*pp = e;
	d->cn++;
	q->ncn++;
}

static void cn_del(cli_dd *q, dd_dir *d, const char *name)
{
	dd_cname **pp, *e;

	if (!d->ctab)
		return;
	pp = cn_slot(d, name);
	e = *pp;
	if (!e)
		return;
	*pp = e->next;
	free(e);
	d->cn--;
	q->ncn--;
}

/* d's unused slots are forgotten (the delegation went): the MDS lets
 * them expire. */
static void slots_drop(dd_dir *d)
{
	d->nslot = d->islot = 0;
	d->slot_gen++;
}

/* The least recently used directory that holds nothing goes; NULL when
 * every one is busy. */
static int dir_evict(cli_dd *q)
{
	dd_dir **victim = NULL;

	for (unsigned b = 0; b < DIR_BUCKETS; b++)
		for (dd_dir **pp = &q->dirs[b]; *pp; pp = &(*pp)->next)
			if (!dir_busy(*pp) && (!victim || (*pp)->used < (*victim)->used))
				victim = pp;
	if (!victim)
		return -ENOSPC;
	{
		dd_dir *d = *victim;

		*victim = d->next;
		cn_drop(q, d);
		free(d->slay);
		free(d);
		q->ndirs--;
	}
	return 0;
}

static dd_dir *dir_get(cli_dd *q, uint64_t ino)
{
	dd_dir *d = dir_find(q, ino);
	unsigned b = hash64(ino) % DIR_BUCKETS;

	if (d)
		return d;
	if (q->ndirs >= q->o.max_dirs && dir_evict(q))
		return NULL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->ino = ino;
	d->backoff_ms = q->o.backoff_ms;
	d->next = q->dirs[b];
	q->dirs[b] = d;
	q->ndirs++;
	return d;
}

/* A RETURN due or in flight, or a GET in flight: counted in nbusy (the
 * flushers' and quiesce's fast check). */
static int is_busy(const dd_dir *d)
{
	return d->need_return || d->returning || d->getting;
}

/* nbusy after d changed from was (is_busy before). */
static void busy_update(cli_dd *q, dd_dir *d, int was)
{
	int now = is_busy(d);

	if (now && !was)
		q->nbusy++;
	else if (!now && was)
		q->nbusy--;
}

static void held_set(cli_dd *q, dd_dir *d, int held)
{
	if (d->held == held)
		return;
	d->held = held;
	__atomic_store_n(&q->nheld, q->nheld + (held ? 1 : -1), __ATOMIC_RELEASE);
}

/* A refusal or recall: wait, then twice as long next time. */
static void backoff(cli_dd *q, dd_dir *d, uint64_t now)
{
	d->retry_at = now + d->backoff_ms;
	d->backoff_ms = d->backoff_ms * 2 > q->o.backoff_max_ms ? q->o.backoff_max_ms
								 : d->backoff_ms * 2;
}

/* Held and usable for an unlink by c at now. */
static int usable(cli_dd *q, dd_dir *d, const cli_ctx *c, uint64_t now)
{
	if (d->held && now >= d->valid_until) {
		/* ran out on this clock: forgotten, as on the MDS */
		held_set(q, d, 0);
		names_drop_dir(q, d->ino);
		cn_drop(q, d);
		slots_drop(d);
		q->st.expired++;
		d->backoff_ms = q->o.backoff_ms;
	}
	return d->held && !d->need_return && cred_eq(&d->ctx.cred, &c->cred);
}

static void renew(cli_dd *q, dd_dir *d, uint64_t sent)
{
	uint64_t until = sent + (d->lease_ms > q->o.margin_ms ? d->lease_ms - q->o.margin_ms : 0);

	if (until > d->valid_until)
		d->valid_until = until;
}

/* ---- the queue ---- */

static void *flusher_main(void *arg);

/* The flushers start with the first queued unlink: after mount.pfs
 * daemonized (fork keeps no thread but the caller's).  0 when at least
 * one runs (mu held). */
static int start_locked(cli_dd *q)
{
	if (q->nthr || q->stop)
		return q->nthr ? 0 : -ESHUTDOWN;
	for (unsigned i = 0; i < q->o.threads; i++) {
		if (pthread_create(&q->thr[i], NULL, flusher_main, q))
			break;
		q->nthr++;
	}
	if (!q->nthr) {
		pfs_log(PFS_LOG_WARNING, "async unlink: no flusher thread: unlinks stay "
			"synchronous");
		q->stop = 1; /* not tried again */
		return -EAGAIN;
	}
	return 0;
}

/* A pending job of kind (UQ_UNLINK, UQ_CREATE) of name in dir. */
static dd_job *job_named(cli_dd *q, uint64_t dir, const char *name, int kind)
{
	for (dd_job *j = q->head; j; j = j->next)
		if (j->kind == kind && j->d->ino == dir && strcmp(j->name, name) == 0)
			return j;
	return NULL;
}

/* 1 when a job before j in the queue names j's name: j waits for it (a
 * create after an unlink of its name, an unlink after its create). */
static int job_blocked(cli_dd *q, const dd_job *j)
{
	for (const dd_job *e = q->head; e && e != j; e = e->next)
		if (e->nhash == j->nhash && e->d == j->d && strcmp(e->name, j->name) == 0)
			return 1;
	return 0;
}

static int job_conflict(cli_dd *q, uint64_t ino)
{
	for (dd_job *j = q->head; j; j = j->next)
		if (j->d->ino == ino || j->ino == ino)
			return 1;
	return 0;
}

static int queue(cli_dd *q, dd_dir *d, const cli_ctx *c, const char *name, uint64_t ino,
		 int kind, uint32_t mode)
{
	size_t len = strlen(name);
	dd_job *j;

	if (start_locked(q))
		return -EAGAIN;
	j = malloc(sizeof(*j) + len + 1);
	if (!j)
		return -ENOMEM;
	j->ino = ino;
	j->ctx = *c;
	j->kind = kind;
	j->mode = mode;
	j->closed = 0;
	j->ready_at = now_ms(q) + q->o.hold_ms;
	j->d = d;
	j->inflight = 0;
	j->nhash = name_hash(d->ino, name);
	j->next = NULL;
	memcpy(j->name, name, len + 1);
	if (q->tail)
		q->tail->next = j;
	else
		q->head = j;
	q->tail = j;
	d->pending++;
	__atomic_store_n(&q->npending, q->npending + 1, __ATOMIC_RELEASE);
	/* A held job wakes nobody unless the queue was empty (a flusher
	 * then sets its timer): a flusher already waits for the hold of an
	 * earlier one, or for one in flight, whose answer wakes them all. */
	if (!q->o.hold_ms || q->head == j)
		pthread_cond_signal(&q->work);
	return 0;
}

static void job_remove(cli_dd *q, dd_job *j)
{
	dd_job *prev = NULL;

	for (dd_job **pp = &q->head; *pp; prev = *pp, pp = &(*pp)->next)
		if (*pp == j) {
			*pp = j->next;
			if (q->tail == j)
				q->tail = prev;
			break;
		}
	__atomic_store_n(&q->npending, q->npending - 1, __ATOMIC_RELEASE);
}

/* Wait for a job or a return to finish (mu held): held creates go now. */
static void wait_done(cli_dd *q)
{
	q->urgent++;
	pthread_cond_broadcast(&q->work);
	pthread_cond_wait(&q->done, &q->mu);
	q->urgent--;
}

/* Until no CREATE of name in dir is queued or in flight: a request the
 * caller sends naming it next must find it on the MDS (mu held). */
static void create_wait(cli_dd *q, uint64_t dir, const char *name)
{
	while (job_named(q, dir, name, UQ_CREATE)) {
		q->st.waits++;
		wait_done(q);
	}
}

/* ---- flushers ---- */

/* j may be sent now: its hold is over, somebody waits for the queue, or
 * its directory is being given back (mu held).  A create waits out its
 * hold closed or not: the jobs of a storm then leave together, in
 * batches. */
static int job_ready(const cli_dd *q, const dd_job *j, uint64_t now)
{
	return now >= j->ready_at || q->urgent || j->d->need_return;
}

static dd_dir *return_due(cli_dd *q)
{
	if (!q->nbusy)
		return NULL;
	for (unsigned b = 0; b < DIR_BUCKETS; b++)
		for (dd_dir *d = q->dirs[b]; d; d = d->next)
			if (d->need_return && !d->pending && !d->returning && !d->getting)
				return d;
	return NULL;
}

static void send_return(cli_dd *q, dd_dir *d)
{
	cli_ctx c = d->ctx;
	uint64_t dir = d->ino;
	int was = is_busy(d), rc;

	d->returning = 1;
	cn_drop(q, d); /* dropped at the recall already; never past here */
	slots_drop(d);
	busy_update(q, d, was);
	pthread_mutex_unlock(&q->mu);
	rc = q->o.ops.deleg_return(q->o.ops.arg, &c, dir);
	if (rc)
		pfs_log(PFS_LOG_WARNING, "async unlink: DELEG_RETURN of dir %llu: %s (the MDS "
			"forgets it at its expiry)", (unsigned long long)dir, pfs_strerror(rc));
	pthread_mutex_lock(&q->mu);
	was = is_busy(d);
	d->returning = 0;
	d->need_return = 0;
	held_set(q, d, 0);
	busy_update(q, d, was);
	q->st.returned++;
	pthread_cond_broadcast(&q->done);
}

/* j was answered rc (the MDS's status of its UNLINK, or the request's
 * error), sent at `sent`: counted, logged, an error kept for fsyncdir,
 * dir's set and lease updated, j off the queue and freed (mu held; the
 * caller wakes the waiters). */
static void job_answered(cli_dd *q, dd_job *j, int rc, uint64_t sent)
{
	dd_dir *d = j->d; /* pinned by its pending count */
	int create = j->kind == UQ_CREATE;
	/* an unlink's -ENOENT, -ESTALE: somebody else removed or replaced it */
	int gone = !create && (rc == -ENOENT || rc == -ESTALE);

	if (gone) {
		q->st.gone++;
		pfs_log(PFS_LOG_DEBUG, "async unlink: dir %llu \"%s\" (ino %llu): %s: removed or "
			"replaced by someone else", (unsigned long long)d->ino, j->name,
			(unsigned long long)j->ino, pfs_strerror(rc));
	} else if (rc) {
		if (create)
			q->st.create_errors++;
		else
			q->st.errors++;
		/* a create's: the kernel was told the file exists, it is gone */
		pfs_log(PFS_LOG_WARNING, "async %s: dir %llu \"%s\" (ino %llu): %s (%sreported by "
			"the next fsync of the directory)", create ? "create" : "unlink",
			(unsigned long long)d->ino, j->name, (unsigned long long)j->ino,
			pfs_strerror(rc), create ? "the file is lost; " : "");
		if (!d->err)
			d->err = rc;
	}
	/* an unlink's -ESTALE: the name is there with another inode; any
	 * other error: the name may still be there (or, a create's, not) */
	if (rc && (create || rc != -ENOENT))
		cn_fail(q, d);
	/* the MDS had a request of ours naming dir: its lease runs from then */
	if ((rc == 0 || gone) && d->held && cred_eq(&d->ctx.cred, &j->ctx.cred))
		renew(q, d, sent);
	d->pending--;
	job_remove(q, j);
	free(j);
}

/* The jobs one batch (UNLINK_BATCH, CREATE_BATCH) sends with first (not
 * in flight): first and the queued jobs after it of its kind, directory
 * and context not in flight, in queue order, at most UQ_BATCH_MAX into v;
 * an unlink alone without ops.unlink_batch or once the MDS refused it (mu
 * held; the queue is at most max_pending long). */
static unsigned batch_pick(cli_dd *q, dd_job *first, dd_job **v, uint64_t now)
{
	unsigned n = 0;

	if (first->kind == UQ_UNLINK && (!q->o.ops.unlink_batch || q->no_batch)) {
		v[0] = first;
		return 1;
	}
	for (dd_job *j = first; j && n < UQ_BATCH_MAX; j = j->next)
		if (!j->inflight && j->kind == first->kind && j->d == first->d &&
		    ctx_eq(&j->ctx, &first->ctx) &&
		    (j == first || (job_ready(q, j, now) && !job_blocked(q, j))))
			v[n++] = j;
	return n;
}

/* 1 when a batch's own error says the MDS does not know UNLINK_BATCH
 * (unknown to its optab: -EACCES; or refused as unsupported). */
static int batch_unknown(int rc)
{
	return rc == -EACCES || rc == -EOPNOTSUPP || rc == -ENOSYS;
}

/* v[0..n-1] (batch_pick) in one request: creates as one CREATE_BATCH, an
 * unlink alone as UNLINK, more as one UNLINK_BATCH; each status then as
 * job_answered's, a request error as each one's (mu held). */
static void send_jobs(cli_dd *q, dd_job **v, unsigned n)
{
	const char *names[UQ_BATCH_MAX];
	uint64_t inos[UQ_BATCH_MAX];
	uint32_t modes[UQ_BATCH_MAX];
	int status[UQ_BATCH_MAX], closed[UQ_BATCH_MAX];
	uint64_t sent = now_ms(q);
	int rc = 0, creates = v[0]->kind == UQ_CREATE;

	for (unsigned i = 0; i < n; i++) {
		v[i]->inflight = 1;
		names[i] = v[i]->name;
		inos[i] = v[i]->ino;
		modes[i] = v[i]->mode;
		closed[i] = v[i]->closed;
	}
	pthread_mutex_unlock(&q->mu);
	/* the jobs stay put while in flight: only this thread removes them
	 * (a job in flight is never marked closed: cli_dd_created_close) */
	if (creates) {
		rc = q->o.ops.create_batch(q->o.ops.arg, &v[0]->ctx, v[0]->d->ino, n, names, modes,
					   closed, inos, status);
	} else if (n == 1) {
		status[0] = q->o.ops.unlink(q->o.ops.arg, &v[0]->ctx, v[0]->d->ino, names[0],
					    inos[0]);
	} else {
		rc = q->o.ops.unlink_batch(q->o.ops.arg, &v[0]->ctx, v[0]->d->ino, n, names, inos,
					   status);
		if (batch_unknown(rc)) {
			/* nothing ran: the jobs go back to the queue, in
			 * place, and go one by one from now on */
			pthread_mutex_lock(&q->mu);
			if (!q->no_batch)
				pfs_log(PFS_LOG_INFO, "async unlink: the MDS refused UNLINK_BATCH "
					"(%s): they go one at a time", pfs_strerror(rc));
			q->no_batch = 1;
			for (unsigned i = 0; i < n; i++)
				v[i]->inflight = 0;
			pthread_cond_broadcast(&q->work);
			return;
		}
	}
	/* still pending while the caller drops what it fetched meanwhile */
	if (q->o.ops.done)
		for (unsigned i = 0; i < n; i++)
			q->o.ops.done(q->o.ops.arg, v[i]->d->ino, v[i]->name);
	pthread_mutex_lock(&q->mu);
	if (n > 1 && creates) {
		q->st.cbatches++;
		q->st.cbatched += n;
	} else if (n > 1) {
		q->st.batches++;
		q->st.batched += n;
		if (n > q->st.batch_max)
			q->st.batch_max = n;
	}
	for (unsigned i = 0; i < n; i++)
		job_answered(q, v[i], rc ? rc : status[i], sent);
	pthread_cond_broadcast(&q->done);
	if (q->head) /* a job that waited for one of these may go now */
		pthread_cond_broadcast(&q->work);
}

static void *flusher_main(void *arg)
{
	cli_dd *q = arg;

	/* Behind the application (opts.nice): the unlinks were answered
	 * already, and on a busy node every CPU slice a flusher takes is one
	 * the application's next request waits for; the queue's cap and
	 * fsync of the directory still wait for the flushers.  Measured: an
	 * unlink storm 10.9k -> 14.3k unlinks/s (bench/RESULTS.md). */
	if (q->o.nice > 0 && setpriority(PRIO_PROCESS, (id_t)gettid(), q->o.nice))
		pfs_log(PFS_LOG_DEBUG, "async unlink: flusher nice %d: %s", q->o.nice,
			strerror(errno));

	pthread_mutex_lock(&q->mu);
	for (;;) {
		dd_dir *d = return_due(q);
		dd_job *j;

		if (d) {
			send_return(q, d);
			continue;
		}
		uint64_t now = now_ms(q), next = UINT64_MAX;

		for (j = q->head; j; j = j->next) {
			if (j->inflight || job_blocked(q, j))
				continue;
			if (job_ready(q, j, now))
				break;
			if (j->ready_at < next)
				next = j->ready_at;
		}
		if (j) {
			dd_job *v[UQ_BATCH_MAX];

			send_jobs(q, v, batch_pick(q, j, v, now));
			continue;
		}
		if (q->stop)
			break;
		if (next != UINT64_MAX) { /* a held job: until its hold ends */
			struct timespec ts = pfs_clock_deadline(CLOCK_MONOTONIC, next - now);

			pthread_cond_timedwait(&q->work, &q->mu, &ts);
			continue;
		}
		pthread_cond_wait(&q->work, &q->mu);
	}
	pthread_mutex_unlock(&q->mu);
	return NULL;
}

/* ---- the API ---- */

int cli_dd_create(const cli_dd_opts *o, cli_dd **out)
{
	cli_dd *q;

	if (!o->ops.unlink || !o->ops.deleg_get || !o->ops.deleg_return)
		return -EINVAL;
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->o = *o;
	if (!q->o.max_pending)
		q->o.max_pending = 128;
	if (!q->o.threads)
		q->o.threads = 8;
	if (!q->o.streak)
		q->o.streak = 3;
	if (!q->o.streak_ms)
		q->o.streak_ms = 1000;
	if (!q->o.backoff_ms)
		q->o.backoff_ms = 1000;
	if (!q->o.backoff_max_ms)
		q->o.backoff_max_ms = 30000;
	if (q->o.backoff_max_ms < q->o.backoff_ms)
		q->o.backoff_max_ms = q->o.backoff_ms;
	if (!q->o.margin_ms)
		q->o.margin_ms = 1000;
	if (!q->o.max_names)
		q->o.max_names = 4096;
	if (!q->o.max_dirs)
		q->o.max_dirs = 256;
	if (!q->o.max_list)
		q->o.max_list = 4096;
	if (!q->o.max_cnames)
		q->o.max_cnames = 4096 + 65536;
	if (!q->o.list_batch || q->o.list_batch > PFS_LOOKUP_BULK_MAX)
		q->o.list_batch = PFS_LOOKUP_BULK_MAX;
	pthread_mutex_init(&q->mu, NULL);
	{
		pthread_condattr_t ca; /* the flushers' timed waits: monotonic */

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&q->work, &ca);
		pthread_condattr_destroy(&ca);
	}
	pthread_cond_init(&q->done, NULL);
	q->thr = calloc(q->o.threads, sizeof(*q->thr));
	if (!q->thr) {
		cli_dd_destroy(q);
		return -ENOMEM;
	}
	*out = q;
	return 0;
}

void cli_dd_quiesce(cli_dd *q)
{
	if (!q)
		return;
	pthread_mutex_lock(&q->mu);
	for (unsigned b = 0; b < DIR_BUCKETS; b++)
		for (dd_dir *d = q->dirs[b]; d; d = d->next)
			if (d->held && !d->need_return) {
				int was = is_busy(d);

				d->need_return = 1;
				busy_update(q, d, was);
			}
	for (unsigned b = 0; b < DIR_BUCKETS; b++)
		for (dd_dir *d = q->dirs[b]; d; d = d->next) {
			cn_drop(q, d);
			slots_drop(d);
		}
	names_drop_dir(q, 0);
	if (q->nbusy)
		(void)start_locked(q);
	pthread_cond_broadcast(&q->work);
	while (q->nthr && (q->npending || q->nbusy))
		wait_done(q);
	pthread_mutex_unlock(&q->mu);
}

void cli_dd_destroy(cli_dd *q)
{
	if (!q)
		return;
	cli_dd_quiesce(q);
	pthread_mutex_lock(&q->mu);
	q->stop = 1;
	pthread_cond_broadcast(&q->work);
	pthread_mutex_unlock(&q->mu);
	for (unsigned i = 0; i < q->nthr; i++)
		pthread_join(q->thr[i], NULL);
	free(q->thr);
	names_drop_dir(q, 0);
	for (unsigned b = 0; b < DIR_BUCKETS; b++)
		while (q->dirs[b]) {
			dd_dir *d = q->dirs[b];

			q->dirs[b] = d->next;
			cn_drop(q, d);
			free(d->slay);
			free(d);
		}
	while (q->head) { /* none: nothing is queued without a flusher */
		dd_job *j = q->head;

		q->head = j->next;
		free(j);
	}
	pthread_cond_destroy(&q->work);
	pthread_cond_destroy(&q->done);
	pthread_mutex_destroy(&q->mu);
	free(q);
}

/* Count c's unlink in d towards a streak (mu held). */
static void streak(cli_dd *q, dd_dir *d, const cli_ctx *c, uint64_t now)
{
	if (d->streak_n && now - d->streak_last <= q->o.streak_ms &&
	    cred_eq(&d->streak_cred, &c->cred)) {
		d->streak_n++;
	} else {
		d->streak_n = 1;
		d->streak_cred = c->cred;
	}
	d->streak_last = now;
}

/* DELEG_GET of d for c, the mutex dropped meanwhile (mu held). */
static void list_dir(cli_dd *q, dd_dir *d, const cli_ctx *c);
static void deleg_get(cli_dd *q, dd_dir *d, const cli_ctx *c);

/* c's unlink, create or negative lookup in d counts towards a streak;
 * the streak-th asks for the delegation unless it is held, being got or
 * given back, or d waits after a refusal (mu held). */
static void streak_ask(cli_dd *q, dd_dir *d, const cli_ctx *c, uint64_t now, int up)
{
	streak(q, d, c, now);
	if (up && !d->held && !d->getting && !d->need_return && !d->returning &&
	    d->streak_n >= q->o.streak && now >= d->retry_at)
		deleg_get(q, d, c);
}

static void deleg_get(cli_dd *q, dd_dir *d, const cli_ctx *c)
{
	unsigned gen = d->recall_gen;
	uint32_t lease_ms = 0;
	uint64_t sent, now;
	int was = is_busy(d), rc;

	d->getting = 1;
	busy_update(q, d, was);
	pthread_mutex_unlock(&q->mu);
	sent = now_ms(q);
	rc = q->o.ops.deleg_get(q->o.ops.arg, c, d->ino, &lease_ms);
	pthread_mutex_lock(&q->mu);
	now = now_ms(q);
	was = is_busy(d);
	d->getting = 0;
	if (rc == 0) {
		held_set(q, d, 1);
		d->ctx = *c;
		d->lease_ms = lease_ms;
		d->valid_until = 0;
		renew(q, d, sent);
		d->backoff_ms = q->o.backoff_ms;
		q->st.got++;
		/* recalled while the grant was on its way: given back at once */
		if (gen != d->recall_gen) {
			d->need_return = 1;
			(void)start_locked(q);
		}
	} else {
		q->st.refused++;
		backoff(q, d, now);
		pfs_log(PFS_LOG_DEBUG, "async unlink: no delegation of dir %llu: %s",
			(unsigned long long)d->ino, pfs_strerror(rc));
	}
	busy_update(q, d, was);
	pthread_cond_broadcast(&q->work);
	pthread_cond_broadcast(&q->done);
	if (rc == 0 && !d->need_return && q->o.ops.list)
		list_dir(q, d, c);
}

/* Right after a grant: d's names from the MDS into its set, the mutex
 * dropped for each batch (mu held).  d stays in the table: it is held,
 * or has a RETURN due, while the listing runs; a recall, a failed
 * mutation, the cap meanwhile bump cgen and the listing stops. */
static void list_dir(cli_dd *q, dd_dir *d, const cli_ctx *c)
{
	unsigned gen, total = 0;
	uint32_t batch = q->o.list_batch, n = 0;
	cli_bulkent *ents;
	char after[PFS_NAME_MAX + 1] = "";
	int eof = 0, rc = 0;

	if (d->ctab)
		return;
	d->ctab = calloc(CN_BUCKETS, sizeof(*d->ctab));
	if (!d->ctab)
		return;
	gen = ++d->cgen;
	d->listing = 1;
	pthread_mutex_unlock(&q->mu);
	ents = malloc(batch * sizeof(*ents));
	pthread_mutex_lock(&q->mu);
	if (!ents)
		rc = -ENOMEM;
	while (!rc && !eof && d->cgen == gen) {
		pthread_mutex_unlock(&q->mu);
		rc = q->o.ops.list(q->o.ops.arg, c, d->ino, after, batch, ents, &n, &eof);
		pthread_mutex_lock(&q->mu);
		if (rc || d->cgen != gen)
			break;
		if (n > batch || (!n && !eof) || total + n > q->o.max_list) {
			rc = -EFBIG; /* too long, or a short page that is not the end */
			break;
		}
		total += n;
		for (uint32_t i = 0; i < n && d->cgen == gen; i++)
			cn_add(q, d, ents[i].name);
		if (n)
			snprintf(after, sizeof(after), "%s", ents[n - 1].name);
	}
	if (d->cgen == gen) {
		if (rc || !eof) {
			pfs_log(PFS_LOG_DEBUG, "async unlink: dir %llu not complete: %s",
				(unsigned long long)d->ino, rc ? pfs_strerror(rc) : "cut short");
			cn_fail(q, d);
		} else {
			d->complete = 1;
			q->st.listed++;
		}
	}
	d->listing = 0;
	free(ents);
}

int cli_dd_unlink(cli_dd *q, const cli_ctx *c, uint64_t dir, const char *name)
{
	int up = q->o.ops.up ? q->o.ops.up(q->o.ops.arg) : 1;
	int counted = 0;
	dd_name **pp;
	dd_dir *d;
	uint64_t ino, now;

	pthread_mutex_lock(&q->mu);
	for (;;) {
		now = now_ms(q);
		d = dir_get(q, dir);
		if (!d)
			break;
		d->used = now;
		if (!counted) {
			streak_ask(q, d, c, now, up);
			counted = 1;
		}
		if (!up || !usable(q, d, c, now_ms(q)))
			break;
		pp = name_slot(q, dir, name);
		if (!*pp || S_ISDIR((*pp)->mode))
			break;
		if (q->npending >= q->o.max_pending) {
			/* room first; the delegation may be gone after */
			q->st.waits++;
			wait_done(q);
			continue;
		}
		ino = (*pp)->ino;
		if (queue(q, d, c, name, ino, UQ_UNLINK, 0))
			break;
		name_unlink(q, pp);
		cn_del(q, d, name);
		q->st.async++;
		pthread_mutex_unlock(&q->mu);
		/* PADLL paces the application, in its thread, before it is
		 * answered; the flusher's UNLINK is not charged again */
		if (q->o.ops.charge)
			q->o.ops.charge(q->o.ops.arg, c->job);
		return 1;
	}
	/* the delegation that queued a CREATE of it may be gone (an MDS
	 * restart, a recall): the caller's UNLINK follows it */
	create_wait(q, dir, name);
	q->st.sync++;
	pthread_mutex_unlock(&q->mu);
	return 0;
}

/* CREATE_SLOTS for d, the mutex dropped meanwhile (mu held): 0 when d
 * has a slot now. */
static int slots_fetch(cli_dd *q, dd_dir *d, const cli_ctx *c)
{
	uint64_t inos[PFS_CREATE_SLOTS_MAX];
	pfs_layout *lays;
	pfs_attr da;
	unsigned gen = d->slot_gen;
	int rc;

	if (!d->slay && !(d->slay = malloc(PFS_CREATE_SLOTS_MAX * sizeof(*d->slay))))
		return -ENOMEM;
	lays = malloc(PFS_CREATE_SLOTS_MAX * sizeof(*lays));
	if (!lays)
		return -ENOMEM;
	d->slot_getting = 1;
	pthread_mutex_unlock(&q->mu);
	rc = q->o.ops.create_slots(q->o.ops.arg, c, d->ino, PFS_CREATE_SLOTS_MAX, inos, lays, &da);
	pthread_mutex_lock(&q->mu);
	d->slot_getting = 0;
	pthread_cond_broadcast(&q->done);
	if (rc) {
		q->st.slots_refused++;
		d->slot_retry_at = now_ms(q) + q->o.backoff_ms;
		pfs_log(PFS_LOG_DEBUG, "async create: no slots in dir %llu: %s",
			(unsigned long long)d->ino, pfs_strerror(rc));
	} else if (gen != d->slot_gen) {
		rc = -EAGAIN; /* the delegation went meanwhile: they expire */
	} else {
		q->st.slots_got++;
		/* sent before the MDS dated them: a minute to spare */
		d->slot_until = now_ms(q) + ((uint64_t)PFS_CREATE_SLOT_TTL_S - 60) * 1000;
		memcpy(d->sino, inos, sizeof(inos));
		memcpy(d->slay, lays, PFS_CREATE_SLOTS_MAX * sizeof(*lays));
		d->dattr = da;
		d->islot = 0;
		d->nslot = PFS_CREATE_SLOTS_MAX;
	}
	free(lays);
	return rc;
}

/* The attributes the MDS gives a file c creates in a directory with
 * attributes da (mds/ns.c inode_new): owner c, the directory's group
 * and set-gid passed on, set-gid dropped for a non-member. */
static void new_file_attr(const cli_ctx *c, const pfs_attr *da, uint64_t ino, uint32_t mode,
			  pfs_attr *a)
{
	int64_t now = pfs_clock_wall_ns();

	memset(a, 0, sizeof(*a));
	a->ino = ino;
	a->mode = S_IFREG | (mode & 07777);
	a->nlink = 1;
	a->uid = c->cred.uid;
	a->gid = (da->mode & S_ISGID) ? da->gid : c->cred.gid;
	if (c->cred.uid != 0 && (a->mode & S_ISGID) && !pfs_cred_in_group(&c->cred, a->gid))
		a->mode &= ~(uint32_t)S_ISGID;
	a->atime_ns = a->mtime_ns = a->ctime_ns = now;
}

int cli_dd_create_file(cli_dd *q, const cli_ctx *c, uint64_t dir, const char *name,
		       uint32_t mode, pfs_attr *attr, pfs_layout *lay)
{
	int up;
	dd_dir *d;
	uint64_t ino;

	if (!q->o.ops.create_batch || !q->o.ops.create_slots ||
	    !__atomic_load_n(&q->nheld, __ATOMIC_ACQUIRE))
		return 0;
	up = q->o.ops.up ? q->o.ops.up(q->o.ops.arg) : 1;
	if (!up || strlen(name) > PFS_NAME_MAX)
		return 0;
	pthread_mutex_lock(&q->mu);
	for (;;) {
		d = dir_find(q, dir);
		/* complete again after usable(): an expiry there drops it */
		if (!d || !d->complete || !usable(q, d, c, now_ms(q)) || !d->complete ||
		    *cn_slot(d, name))
			break;
		if (q->npending >= q->o.max_pending) {
			q->st.waits++;
			wait_done(q);
			continue;
		}
		if (d->islot < d->nslot && now_ms(q) >= d->slot_until)
			slots_drop(d); /* too old to be sent in time */
		if (d->islot >= d->nslot) {
			if (d->slot_getting) { /* another thread's fetch */
				wait_done(q);
				continue;
			}
			if (now_ms(q) < d->slot_retry_at || slots_fetch(q, d, c))
				break;
			continue; /* the delegation may have gone meanwhile */
		}
		ino = d->sino[d->islot];
		if (queue(q, d, c, name, ino, UQ_CREATE, mode))
			break;
		*lay = d->slay[d->islot];
		d->islot++;
		new_file_attr(c, &d->dattr, ino, mode, attr);
		/* the name is this mount's now, in the set and for unlink */
		cn_add(q, d, name);
		name_put(q, dir, name, ino, attr->mode);
		q->st.acreate++;
		pthread_mutex_unlock(&q->mu);
		if (q->o.ops.charge_create)
			q->o.ops.charge_create(q->o.ops.arg, c->job);
		return 1;
	}
	pthread_mutex_unlock(&q->mu);
	return 0;
}

int cli_dd_created_close(cli_dd *q, uint64_t ino)
{
	int r = 0;

	if (!__atomic_load_n(&q->npending, __ATOMIC_ACQUIRE))
		return 0;
	pthread_mutex_lock(&q->mu);
	for (dd_job *j = q->head; j; j = j->next)
		if (j->kind == UQ_CREATE && j->ino == ino) {
			if (!j->inflight && !j->closed) {
				j->closed = 1;
				q->st.acreate_closed++;
				r = 1;
			}
			break;
		}
	pthread_mutex_unlock(&q->mu);
	return r;
}

void cli_dd_note_entry(cli_dd *q, uint64_t dir, const char *name, uint64_t ino, uint32_t mode)
{
	dd_dir *d;

	if (!__atomic_load_n(&q->nheld, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&q->mu);
	d = dir_find(q, dir);
	if (d && d->held && !d->need_return)
		name_put(q, dir, name, ino, mode);
	if (d)
		cn_add(q, d, name);
	pthread_mutex_unlock(&q->mu);
}

void cli_dd_forget_name(cli_dd *q, uint64_t dir, const char *name)
{
	/* names are known only in delegated directories */
	if (!__atomic_load_n(&q->nheld, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&q->mu);
	name_drop(q, dir, name);
	pthread_mutex_unlock(&q->mu);
}

int cli_dd_pending_name(cli_dd *q, uint64_t dir, const char *name)
{
	int r;

	if (!__atomic_load_n(&q->npending, __ATOMIC_ACQUIRE))
		return 0;
	pthread_mutex_lock(&q->mu);
	create_wait(q, dir, name);
	r = job_named(q, dir, name, UQ_UNLINK) != NULL;
	pthread_mutex_unlock(&q->mu);
	return r;
}

void cli_dd_wait(cli_dd *q, uint64_t ino)
{
	int waited = 0;

	if (!__atomic_load_n(&q->npending, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&q->mu);
	while (job_conflict(q, ino)) {
		waited = 1;
		wait_done(q);
	}
	q->st.waits += waited;
	pthread_mutex_unlock(&q->mu);
}

void cli_dd_wait_all(cli_dd *q)
{
	int waited = 0;

	if (!__atomic_load_n(&q->npending, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&q->mu);
	while (q->npending) {
		waited = 1;
		wait_done(q);
	}
	q->st.waits += waited;
	pthread_mutex_unlock(&q->mu);
}

int cli_dd_fsyncdir(cli_dd *q, uint64_t dir)
{
	dd_dir *d;
	int rc = 0;

	cli_dd_wait(q, dir);
	pthread_mutex_lock(&q->mu);
	d = dir_find(q, dir);
	if (d) {
		rc = d->err;
		d->err = 0;
	}
	pthread_mutex_unlock(&q->mu);
	return rc;
}

/* Recall d (mu held). */
static void recall_one(cli_dd *q, dd_dir *d, uint64_t now)
{
	int was = is_busy(d);

	d->need_return = 1;
	d->recall_gen++;
	names_drop_dir(q, d->ino);
	cn_drop(q, d);
	slots_drop(d);
	backoff(q, d, now);
	busy_update(q, d, was);
	(void)start_locked(q); /* a flusher sends the RETURN */
}

void cli_dd_recall(cli_dd *q, uint64_t dir)
{
	uint64_t now = now_ms(q);

	pthread_mutex_lock(&q->mu);
	q->st.recalled++;
	if (dir) {
		dd_dir *d = dir_get(q, dir);

		if (d)
			recall_one(q, d, now);
		else /* a full table of busy directories: the MDS's recall
		      * times out, the unlinks still go */
			pfs_log(PFS_LOG_WARNING, "async unlink: recall of dir %llu: no room to "
				"follow it", (unsigned long long)dir);
	} else {
		for (unsigned b = 0; b < DIR_BUCKETS; b++)
			for (dd_dir *d = q->dirs[b]; d; d = d->next)
				if (d->held || d->getting)
					recall_one(q, d, now);
				else
					cn_drop(q, d);
		names_drop_dir(q, 0);
	}
	pthread_cond_broadcast(&q->work);
	pthread_mutex_unlock(&q->mu);
}

void cli_dd_get_stats(cli_dd *q, cli_dd_stats *st)
{
	pthread_mutex_lock(&q->mu);
	*st = q->st;
	st->pending = q->npending;
	st->held = q->nheld;
	st->batch_off = q->no_batch;
	pthread_mutex_unlock(&q->mu);
}

uint64_t cli_dd_now(cli_dd *q)
{
	return now_ms(q);
}

void cli_dd_touch(cli_dd *q, const cli_ctx *c, uint64_t dir)
{
	int up;
	uint64_t now;
	dd_dir *d;

	if (!q->o.ops.list)
		return;
	up = q->o.ops.up ? q->o.ops.up(q->o.ops.arg) : 1;
	pthread_mutex_lock(&q->mu);
	now = now_ms(q);
	d = dir_get(q, dir);
	if (d) {
		d->used = now;
		streak_ask(q, d, c, now, up);
	}
	pthread_mutex_unlock(&q->mu);
}

void cli_dd_mutated(cli_dd *q, const cli_ctx *c, uint64_t dir, const char *name, int add,
		    uint64_t sent, int rc)
{
	dd_dir *d;

	if (!__atomic_load_n(&q->nheld, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&q->mu);
	d = dir_find(q, dir);
	if (d) {
		if (rc)
			cn_fail(q, d);
		else if (add)
			cn_add(q, d, name);
		else
			cn_del(q, d, name);
		/* the MDS renews the holder's delegation on its requests */
		if (!rc && sent && d->held && !d->need_return && cred_eq(&d->ctx.cred, &c->cred))
			renew(q, d, sent);
	}
	pthread_mutex_unlock(&q->mu);
}

int cli_dd_negative(cli_dd *q, const cli_ctx *c, uint64_t dir, const char *name)
{
	int r = 0;
	dd_dir *d;

	if (!__atomic_load_n(&q->nheld, __ATOMIC_ACQUIRE))
		return 0;
	if (q->o.ops.up && !q->o.ops.up(q->o.ops.arg))
		return 0;
	pthread_mutex_lock(&q->mu);
	d = dir_find(q, dir);
	/* complete again after usable(): an expiry there drops the set */
	if (d && d->complete && usable(q, d, c, now_ms(q)) && d->complete &&
	    !*cn_slot(d, name)) {
		q->st.neg_local++;
		r = 1;
	}
	pthread_mutex_unlock(&q->mu);
	return r;
}
