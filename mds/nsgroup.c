/* nsgroup.c — the committer of group commit (mds/nsgroup.h): one thread
 * takes every queued mutation (up to max_batch), runs them one after the
 * other inside one group (mds_nsi_group_begin: each write transaction a
 * child of the group's, nsdb.c), commits the group once, and calls each
 * member's done with its status, or the commit's error for those that
 * succeeded.  A batch of one runs as a lone transaction (a group would
 * only add a child transaction), and so does a group that cannot begin
 * (no writer transaction: map full, I/O error).
 *
 * Wake-ups: a submit signals the committer only when it sleeps; while it
 * runs a group the next ones queue behind it and are taken together.  A
 * request allowed inline runs on the submitter's thread instead when the
 * committer is idle and the submitter is not in a burst (nsgroup.h): the
 * same run_batch of one, so it is the lone transaction it would have been
 * on the committer. */
#include "mds/nsgroup.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>

#include "common/clock.h"
#include "common/log.h"
#include "mds/ns_i.h"

#define BATCH_DEFAULT 32u

struct mds_nsgroup {
	mds_ns *ns;
	unsigned max_batch;
	pthread_t thr;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	/* under mu */
	mds_nsgroup_req *head, *tail;
	int stop, sleeping;
	int inline_busy;        /* a request runs on its submitter's thread */
	int64_t gap_ns;         /* inline gap; < 0: never inline */
	uint64_t last_end;      /* monotonic ns: the last batch answered */
	uint64_t slow_until;    /* no inline runs before (a slow batch) */
	mds_nsgroup_stats st;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* When a batch ran: monotonic ns at its start and commit, and whether its
 * thread slept in between. */
struct batch_time {
	uint64_t t0, t1;
	long waits;
};

/* Under mu, after a batch answered: when it ended, and whether it was slow:
 * longer than MDS_NSGROUP_SLOW_US *and* its thread slept (a disk or a lock
 * held it; a thread that was only preempted on a busy CPU, which is no
 * reason to keep the loop off the database, never slept). */
static void batch_ended(mds_nsgroup *g, const struct batch_time *bt)
{
	g->last_end = mono_ns();
	if (bt->t1 - bt->t0 > (uint64_t)MDS_NSGROUP_SLOW_US * 1000u && bt->waits)
		g->slow_until = g->last_end + 1000000000u;
}

/* Under mu: may a request submitted at now run on its submitter's thread? */
static int may_inline(const mds_nsgroup *g, uint64_t now)
{
	return g->gap_ns >= 0 && g->sleeping && !g->head && !g->inline_busy &&
	       now >= g->slow_until && now >= g->last_end + (uint64_t)g->gap_ns;
}

/* Run one batch (a list linked by next, n members); *bt: when it began
 * and when it was committed (before the answers), and whether it slept. */
static void run_batch(mds_nsgroup *g, mds_nsgroup_req *list, unsigned n,
		      struct batch_time *bt)
{
	struct mds_nsi_group grp;
	int grouped = 0, failed = 0, rc = 0;

	bt->t0 = mono_ns();
	bt->waits = pfs_thread_sleeps();
	/* skip: prep answered (1), or run did (status set) */
	for (mds_nsgroup_req *r = list; r; r = r->next) {
		r->status = 0;
		r->skip = r->prep && r->prep(r);
	}
	/* one alone is its own transaction: a group would only add a child
	 * (unless it begins many: group_alone) */
	if (n > 1 || (list->group_alone && !list->skip)) {
		grouped = mds_nsi_group_begin(g->ns, &grp) == 0;
		failed = !grouped;
	}
	for (mds_nsgroup_req *r = list; r; r = r->next)
		if (!r->skip)
			r->status = r->run(r);
	if (grouped)
		rc = mds_nsi_group_end(g->ns, 1);
	failed |= rc != 0;
	if (rc)
		pfs_log(PFS_LOG_ERR, "group commit of %u mutation(s) failed: %s", n,
			pfs_strerror(rc));
	pthread_mutex_lock(&g->mu);
	g->st.batches++;
	g->st.requests += n;
	if (failed)
		g->st.failed++;
	if (grouped)
		g->st.grouped++;
	if (n > g->st.largest)
		g->st.largest = n;
	pthread_mutex_unlock(&g->mu);
	bt->t1 = mono_ns();
	if (bt->t1 - bt->t0 > (uint64_t)MDS_NSGROUP_SLOW_US * 1000u)
		bt->waits = pfs_thread_sleeps() - bt->waits;
	else
		bt->waits = 0;
	while (list) {
		mds_nsgroup_req *r = list;

		list = r->next;
		r->done(r, r->status || r->skip ? r->status : rc);
	}
}

static void *committer(void *arg)
{
	mds_nsgroup *g = arg;

	pthread_mutex_lock(&g->mu);
	for (;;) {
		mds_nsgroup_req *list, *last;
		struct batch_time bt;
		unsigned n = 1;

		while (!g->head && !g->stop) {
			g->sleeping = 1;
			pthread_cond_wait(&g->cv, &g->mu);
			g->sleeping = 0;
		}
		if (!g->head)
			break;
		list = last = g->head;
		while (last->next && n < g->max_batch) {
			last = last->next;
			n++;
		}
		g->head = last->next;
		if (!g->head)
			g->tail = NULL;
		last->next = NULL;
		pthread_mutex_unlock(&g->mu);
		run_batch(g, list, n, &bt);
		pthread_mutex_lock(&g->mu);
		batch_ended(g, &bt);
	}
	pthread_mutex_unlock(&g->mu);
	return NULL;
}

int mds_nsgroup_start(mds_ns *ns, unsigned max_batch, mds_nsgroup **out)
{
	mds_nsgroup *g = calloc(1, sizeof(*g));
	sigset_t all, old;
	int rc;

	if (!g)
		return -ENOMEM;
	g->ns = ns;
	g->max_batch = max_batch ? max_batch : BATCH_DEFAULT;
	/* with db_sync=full every commit fsyncs: never on the submitter */
	g->gap_ns = ns->opts.sync_mode == MDS_SYNC_FULL ? -1
						       : (int64_t)MDS_NSGROUP_INLINE_GAP_US * 1000;
	pthread_mutex_init(&g->mu, NULL);
	pthread_cond_init(&g->cv, NULL);
	/* the daemon handles signals on its main thread */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = -pthread_create(&g->thr, NULL, committer, g);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		pthread_cond_destroy(&g->cv);
		pthread_mutex_destroy(&g->mu);
		free(g);
		return rc;
	}
	*out = g;
	return 0;
}

/* r alone, here, on the submitter's thread (inline_busy is set). */
static void run_inline(mds_nsgroup *g, mds_nsgroup_req *r)
{
	struct batch_time bt;

	run_batch(g, r, 1, &bt);
	pthread_mutex_lock(&g->mu);
	g->inline_busy = 0;
	g->st.inlined++;
	batch_ended(g, &bt);
	pthread_mutex_unlock(&g->mu);
}

int mds_nsgroup_submit(mds_nsgroup *g, mds_nsgroup_req *r)
{
	uint64_t now = r->inline_ok ? mono_ns() : 0;
	int wake, here;

	r->next = NULL;
	pthread_mutex_lock(&g->mu);
	if (g->stop) {
		pthread_mutex_unlock(&g->mu);
		return -ESHUTDOWN;
	}
	here = r->inline_ok && may_inline(g, now);
	if (here) {
		g->inline_busy = 1;
	} else {
		if (g->tail)
			g->tail->next = r;
		else
			g->head = r;
		g->tail = r;
	}
	wake = !here && g->sleeping;
	pthread_mutex_unlock(&g->mu);
	if (here)
		run_inline(g, r);
	else if (wake)
		pthread_cond_signal(&g->cv);
	return 0;
}

void mds_nsgroup_stop(mds_nsgroup *g)
{
	if (!g)
		return;
	pthread_mutex_lock(&g->mu);
	g->stop = 1;
	pthread_cond_signal(&g->cv);
	pthread_mutex_unlock(&g->mu);
	pthread_join(g->thr, NULL);
	if (g->st.batches)
		pfs_log(PFS_LOG_NOTICE, "group commit: %llu mutations in %llu batches, %llu of "
			"them grouped (largest %u, %llu failed), %llu run inline",
			(unsigned long long)g->st.requests, (unsigned long long)g->st.batches,
			(unsigned long long)g->st.grouped, g->st.largest,
			(unsigned long long)g->st.failed, (unsigned long long)g->st.inlined);
	pthread_cond_destroy(&g->cv);
	pthread_mutex_destroy(&g->mu);
	free(g);
}

void mds_nsgroup_set_inline_gap(mds_nsgroup *g, int64_t gap_us)
{
	pthread_mutex_lock(&g->mu);
	g->gap_ns = gap_us < 0 || g->ns->opts.sync_mode == MDS_SYNC_FULL ? -1 : gap_us * 1000;
	pthread_mutex_unlock(&g->mu);
}

void mds_nsgroup_get_stats(mds_nsgroup *g, mds_nsgroup_stats *out)
{
	pthread_mutex_lock(&g->mu);
	*out = g->st;
	pthread_mutex_unlock(&g->mu);
}
