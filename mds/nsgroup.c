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
 * runs a group the next ones queue behind it and are taken together. */
#include "mds/nsgroup.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>

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
	mds_nsgroup_stats st;
};

/* Run one batch (a list linked by next, n members). */
static void run_batch(mds_nsgroup *g, mds_nsgroup_req *list, unsigned n)
{
	struct mds_nsi_group grp;
	int grouped = 0, failed = 0, rc = 0;

	/* skip: prep answered (1), or run did (status set) */
	for (mds_nsgroup_req *r = list; r; r = r->next) {
		r->status = 0;
		r->skip = r->prep && r->prep(r);
	}
	/* one alone is its own transaction: a group would only add a child */
	if (n > 1) {
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
		run_batch(g, list, n);
		pthread_mutex_lock(&g->mu);
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

int mds_nsgroup_submit(mds_nsgroup *g, mds_nsgroup_req *r)
{
	int wake;

	r->next = NULL;
	pthread_mutex_lock(&g->mu);
	if (g->stop) {
		pthread_mutex_unlock(&g->mu);
		return -ESHUTDOWN;
	}
	if (g->tail)
		g->tail->next = r;
	else
		g->head = r;
	g->tail = r;
	wake = g->sleeping;
	pthread_mutex_unlock(&g->mu);
	if (wake)
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
			"them grouped (largest %u, %llu failed)", (unsigned long long)g->st.requests,
			(unsigned long long)g->st.batches, (unsigned long long)g->st.grouped,
			g->st.largest, (unsigned long long)g->st.failed);
	pthread_cond_destroy(&g->cv);
	pthread_mutex_destroy(&g->mu);
	free(g);
}

void mds_nsgroup_get_stats(mds_nsgroup *g, mds_nsgroup_stats *out)
{
	pthread_mutex_lock(&g->mu);
	*out = g->st;
	pthread_mutex_unlock(&g->mu);
}
