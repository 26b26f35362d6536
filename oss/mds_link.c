/* mds_link.c — OSS registration and heartbeats to the MDS (see mds_link.h). */
#include "oss/mds_link.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/buf.h"
#include "common/log.h"
#include "common/proto.h"
#include "common/rpc.h"

struct oss_mds_link {
	oss_server *srv;
	pfs_rpc_pool *pool;
	char *name, *host;
	unsigned heartbeat_ms;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int stopping;          /* guarded by lock */
	int registered;        /* guarded by lock */
	unsigned registrations; /* guarded by lock */
};

static int do_register(oss_mds_link *l)
{
	size_t n = oss_server_n_osts(l->srv);
	uint32_t *idx = NULL;
	pfs_rpc_reply rep = { 0 };
	pfs_wbuf w;
	pfs_rbuf b;
	int rc;

	pfs_rpc_reply_init(&rep);
	pfs_wbuf_init(&w);
	pfs_wbuf_str(&w, l->name);
	pfs_wbuf_str(&w, l->host);
	pfs_wbuf_u16(&w, oss_server_data_port(l->srv));
	pfs_wbuf_u16(&w, oss_server_ctl_port(l->srv));
	pfs_wbuf_u32(&w, (uint32_t)n);
	for (size_t i = 0; i < n; i++) {
		oss_store *st = oss_server_ost(l->srv, i);
		uint64_t total = 0, avail = 0, objs = 0;

		rc = oss_store_statfs(st, &total, &avail, &objs);
		if (rc)
			pfs_log(PFS_LOG_WARNING, "oss: statfs %s: %s", oss_store_dir(st),
				pfs_strerror(rc));
		pfs_wbuf_str(&w, oss_store_uuid(st));
		pfs_wbuf_u64(&w, total);
		pfs_wbuf_u64(&w, avail);
		pfs_wbuf_u64(&w, objs);
	}
	rc = pfs_wbuf_error(&w);
	if (rc)
		goto out;
	rc = pfs_rpc_call(l->pool, PFS_OP_MDS_OSS_REGISTER, NULL, PFS_RPC_IDEMPOTENT, w.data,
			  w.len, NULL, 0, &rep);
	if (rc)
		goto out;
	pfs_rbuf_init(&b, rep.data, rep.len);
	if (pfs_rbuf_u32(&b) != n) {
		rc = -EBADMSG;
		goto out;
	}
	idx = calloc(n, sizeof(*idx));
	if (!idx) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		idx[i] = pfs_rbuf_u32(&b);
	rc = pfs_rbuf_done(&b);
	if (rc)
		goto out;
	for (size_t i = 0; i < n; i++) {
		int64_t old = oss_server_get_index(l->srv, i);

		if (old != OSS_INDEX_NONE && old != (int64_t)idx[i])
			pfs_log(PFS_LOG_WARNING, "oss: OST %s changed index %lld -> %u",
				oss_store_uuid(oss_server_ost(l->srv, i)),
				(long long)old, idx[i]);
		else if (old == OSS_INDEX_NONE)
			pfs_log(PFS_LOG_INFO, "oss: OST %s (%s) is index %u",
				oss_store_uuid(oss_server_ost(l->srv, i)),
				oss_store_dir(oss_server_ost(l->srv, i)), idx[i]);
		oss_server_set_index(l->srv, i, idx[i]);
	}
out:
	free(idx);
	pfs_rpc_reply_free(&rep);
	pfs_wbuf_free(&w);
	return rc;
}

static int do_heartbeat(oss_mds_link *l)
{
	size_t n = oss_server_n_osts(l->srv);
	pfs_rpc_reply rep = { 0 };
	pfs_wbuf w;
	int rc;

	pfs_rpc_reply_init(&rep);
	pfs_wbuf_init(&w);
	pfs_wbuf_str(&w, l->name);
	pfs_wbuf_u32(&w, (uint32_t)n);
	for (size_t i = 0; i < n; i++) {
		oss_store *st = oss_server_ost(l->srv, i);
		uint64_t total = 0, avail = 0, objs = 0;

		oss_store_statfs(st, &total, &avail, &objs); /* zeros on error */
		pfs_wbuf_u32(&w, (uint32_t)oss_server_get_index(l->srv, i));
		pfs_wbuf_u64(&w, total);
		pfs_wbuf_u64(&w, avail);
		pfs_wbuf_u64(&w, objs);
	}
	rc = pfs_wbuf_error(&w);
	if (!rc)
		rc = pfs_rpc_call(l->pool, PFS_OP_MDS_OSS_HEARTBEAT, NULL, PFS_RPC_IDEMPOTENT,
				  w.data, w.len, NULL, 0, &rep);
	pfs_rpc_reply_free(&rep);
	pfs_wbuf_free(&w);
	return rc;
}

static void *link_main(void *arg)
{
	oss_mds_link *l = arg;
	int was_up = 0, warned = 0;

	pthread_mutex_lock(&l->lock);
	while (!l->stopping) {
		int registered = l->registered, rc;
		struct timespec ts;

		pthread_mutex_unlock(&l->lock);
		rc = registered ? do_heartbeat(l) : do_register(l);
		pthread_mutex_lock(&l->lock);
		if (rc) {
			/* Whatever failed, register again: the MDS may have
			 * restarted and forgotten us. */
			l->registered = 0;
			if (was_up || !warned)
				pfs_log(PFS_LOG_WARNING, "oss: MDS %s:%u: %s %s; retrying",
					pfs_rpc_pool_host(l->pool), pfs_rpc_pool_port(l->pool),
					registered ? "heartbeat" : "registration",
					pfs_strerror(rc));
			was_up = 0;
			warned = 1;
		} else if (!registered) {
			l->registered = 1;
			l->registrations++;
			pfs_log(PFS_LOG_NOTICE, "oss: registered with MDS %s:%u",
				pfs_rpc_pool_host(l->pool), pfs_rpc_pool_port(l->pool));
			was_up = 1;
			/* Heartbeat at once, so the MDS sees us up. */
			continue;
		}
		ts = pfs_clock_deadline(CLOCK_MONOTONIC, l->heartbeat_ms);
		while (!l->stopping &&
		       pthread_cond_timedwait(&l->cond, &l->lock, &ts) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&l->lock);
	return NULL;
}

int oss_mds_link_start(const oss_mds_link_opts *opts, oss_server *srv, oss_mds_link **out)
{
	oss_mds_link *l = calloc(1, sizeof(*l));
	unsigned hb = opts->heartbeat_ms ? opts->heartbeat_ms : OSS_HEARTBEAT_MS_DEFAULT;
	pfs_rpc_opts ro = { 0 };
	pthread_condattr_t ca;
	int rc;

	if (!l)
		return -ENOMEM;
	l->srv = srv;
	l->heartbeat_ms = hb;
	l->name = strdup(opts->name);
	l->host = strdup(opts->advertise_host);
	pthread_mutex_init(&l->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&l->cond, &ca);
	pthread_condattr_destroy(&ca);
	if (!l->name || !l->host) {
		rc = -ENOMEM;
		goto fail;
	}
	/* One connection; fail fast (the thread does the retrying) but give a
	 * busy MDS a few heartbeats' time to answer. */
	ro.max_conns = 1;
	ro.retry_ms = 1;
	ro.timeout_ms = hb * 3 > 3000 ? (int)(hb * 3) : 3000;
	ro.client_id = 0;
	ro.auth = opts->auth;
	rc = pfs_rpc_pool_create(opts->mds_host, opts->mds_port, &ro, &l->pool);
	if (rc)
		goto fail;
	if (pthread_create(&l->thread, NULL, link_main, l)) {
		rc = -EAGAIN;
		goto fail;
	}
	*out = l;
	return 0;
fail:
	pfs_rpc_pool_destroy(l->pool);
	pthread_cond_destroy(&l->cond);
	pthread_mutex_destroy(&l->lock);
	free(l->name);
	free(l->host);
	free(l);
	return rc;
}

void oss_mds_link_stop(oss_mds_link *l)
{
	if (!l)
		return;
	pthread_mutex_lock(&l->lock);
	l->stopping = 1;
	pthread_cond_broadcast(&l->cond);
	pthread_mutex_unlock(&l->lock);
	pthread_join(l->thread, NULL);
	pfs_rpc_pool_destroy(l->pool);
	pthread_cond_destroy(&l->cond);
	pthread_mutex_destroy(&l->lock);
	free(l->name);
	free(l->host);
	free(l);
}

int oss_mds_link_registered(oss_mds_link *l)
{
	int r;

	pthread_mutex_lock(&l->lock);
	r = l->registered;
	pthread_mutex_unlock(&l->lock);
	return r;
}

unsigned oss_mds_link_registrations(oss_mds_link *l)
{
	unsigned r;

	pthread_mutex_lock(&l->lock);
	r = l->registrations;
	pthread_mutex_unlock(&l->lock);
	return r;
}
