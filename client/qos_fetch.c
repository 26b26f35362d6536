/* qos_fetch.c — ASCAR rules and job weights from the MDS (see qos_fetch.h). */
#include "client/qos_fetch.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/buf.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/proto.h"
#include "common/qosmsg.h"
#include "common/rpc.h"

typedef struct weight {
	char job[PFS_JOBID_MAX + 1];
	double w;
} weight;

struct cli_qos_fetch {
	cli_mdc *mdc;
	cli_ascar *ascar;
	cli_qos_fetch_opts opts;
	pthread_mutex_t lock;      /* guards w, nw, stop */
	pthread_cond_t cond;       /* stop */
	weight *w;
	size_t nw;
	int stop;
	int have_thread;
	pthread_t thread;
	uint64_t version;          /* rule set installed (thread only) */
	int warned;
};

static int fetch_rules(cli_qos_fetch *f)
{
	pfs_rpc_reply rep = { 0 };
	pfs_rbuf r;
	const char *p;
	char *text;
	size_t n;
	uint64_t v;
	int rc, line = 0;

	rc = pfs_rpc_call(cli_mdc_pool(f->mdc), PFS_OP_MDS_ASCAR_GET, "", PFS_RPC_IDEMPOTENT,
			  NULL, 0, NULL, 0, &rep);
	if (rc)
		goto out;
	pfs_rbuf_init(&r, rep.data, rep.len);
	v = pfs_rbuf_u64(&r);
	p = pfs_rbuf_str(&r, PFS_MAX_PAYLOAD, &n);
	rc = pfs_rbuf_done(&r);
	if (rc || v == f->version)
		goto out;
	text = strndup(p ? p : "", p ? n : 0);
	if (!text) {
		rc = -ENOMEM;
		goto out;
	}
	rc = cli_ascar_set(f->ascar, text, v, &line);
	free(text);
	if (rc) {
		pfs_log(PFS_LOG_WARNING, "ascar: rule set v%llu from the MDS refused: line %d: %s",
			(unsigned long long)v, line, pfs_strerror(rc));
	} else {
		pfs_log(PFS_LOG_NOTICE, "ascar: rule set v%llu installed (%s)",
			(unsigned long long)v, n ? "on" : "off");
	}
	f->version = v; /* a bad version is not tried again */
out:
	pfs_rpc_reply_free(&rep);
	return rc;
}

static int fetch_weights(cli_qos_fetch *f)
{
	pfs_rpc_reply rep = { 0 };
	pfs_job_info ji;
	weight *w = NULL;
	pfs_rbuf r;
	uint8_t all = 0;
	uint32_t n;
	size_t k = 0;
	int rc;

	rc = pfs_rpc_call(cli_mdc_pool(f->mdc), PFS_OP_MDS_JOB_LIST, "", PFS_RPC_IDEMPOTENT,
			  &all, 1, NULL, 0, &rep);
	if (rc)
		goto out;
	pfs_rbuf_init(&r, rep.data, rep.len);
	n = pfs_rbuf_u32(&r);
	if (n > rep.len / 8) { /* each entry is far longer than 8 bytes */
		rc = -EBADMSG;
		goto out;
	}
	w = calloc(n ? n : 1, sizeof(*w));
	if (!w) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < n; i++) {
		rc = pfs_job_info_decode(&r, &ji);
		if (rc)
			goto out;
		snprintf(w[k].job, sizeof(w[k].job), "%s", ji.job);
		w[k].w = ji.priority * (ji.nodes ? ji.nodes : 1);
		if (w[k].w > 0)
			k++;
	}
	pthread_mutex_lock(&f->lock);
	free(f->w);
	f->w = w;
	f->nw = k;
	pthread_mutex_unlock(&f->lock);
	w = NULL;
out:
	free(w);
	pfs_rpc_reply_free(&rep);
	return rc;
}

double cli_qos_fetch_weight(void *arg, const char *job)
{
	cli_qos_fetch *f = arg;
	double w = 1;

	if (!f || !job)
		return 1;
	pthread_mutex_lock(&f->lock);
	for (size_t i = 0; i < f->nw; i++)
		if (!strcmp(f->w[i].job, job)) {
			w = f->w[i].w;
			break;
		}
	pthread_mutex_unlock(&f->lock);
	return w;
}

int cli_qos_fetch_once(cli_qos_fetch *f)
{
	int rc = 0, r;

	if (f->opts.ascar && f->ascar) {
		r = fetch_rules(f);
		if (r && !rc)
			rc = r;
	}
	if (f->opts.weights) {
		r = fetch_weights(f);
		if (r && !rc)
			rc = r;
	}
	if (rc && !f->warned) {
		f->warned = 1; /* once: an older MDS answers -EOPNOTSUPP forever */
		pfs_log(PFS_LOG_INFO, "qos fetch: %s (keeping what the client has)",
			pfs_strerror(rc));
	}
	return rc;
}

/* The thread's RPCs give up (-EINTR) between attempts once it is told
 * to stop: an unmount must not wait out the recovery window of a call to
 * a dead MDS. */
static int stopping(void *arg)
{
	return __atomic_load_n(&((cli_qos_fetch *)arg)->stop, __ATOMIC_RELAXED);
}

static void *fetch_main(void *arg)
{
	cli_qos_fetch *f = arg;

	pfs_rpc_set_interrupt(stopping, f);

	pthread_mutex_lock(&f->lock);
	while (!f->stop) {
		struct timespec ts;

		ts = pfs_clock_deadline(CLOCK_REALTIME, f->opts.poll_ms);
		pthread_cond_timedwait(&f->cond, &f->lock, &ts);
		if (f->stop)
			break;
		pthread_mutex_unlock(&f->lock);
		cli_qos_fetch_once(f);
		pthread_mutex_lock(&f->lock);
	}
	pthread_mutex_unlock(&f->lock);
	return NULL;
}

int cli_qos_fetch_start(cli_mdc *mdc, cli_ascar *ascar, const cli_qos_fetch_opts *opts,
			cli_qos_fetch **out)
{
	cli_qos_fetch *f = calloc(1, sizeof(*f));
	int rc;

	if (!f)
		return -ENOMEM;
	f->mdc = mdc;
	f->ascar = ascar;
	f->opts = *opts;
	if (!f->opts.poll_ms)
		f->opts.poll_ms = 3000;
	pthread_mutex_init(&f->lock, NULL);
	pthread_cond_init(&f->cond, NULL);
	cli_qos_fetch_once(f);
	rc = pthread_create(&f->thread, NULL, fetch_main, f);
	if (rc) {
		cli_qos_fetch_stop(f);
		return -rc;
	}
	f->have_thread = 1;
	*out = f;
	return 0;
}

void cli_qos_fetch_stop(cli_qos_fetch *f)
{
	if (!f)
		return;
	if (f->have_thread) {
		pthread_mutex_lock(&f->lock);
		f->stop = 1;
		pthread_cond_signal(&f->cond);
		pthread_mutex_unlock(&f->lock);
		pthread_join(f->thread, NULL);
	}
	free(f->w);
	pthread_mutex_destroy(&f->lock);
	pthread_cond_destroy(&f->cond);
	free(f);
}
