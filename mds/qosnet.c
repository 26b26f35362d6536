/* qosnet.c — concurrent QOS_STATS / QOS_SET RPCs to OSS control ports
 * (see qosnet.h): a pool per OSS name, a thread per call of a round. */
#include "mds/qosnet.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/log.h"
#include "common/qosmsg.h"
#include "common/rpc.h"

/* Smallest encoded pfs_qos_ost_info and pfs_qos_stat (empty job id). */
#define OST_INFO_MIN (4 + 8 + 8 + 4 + 8 + 4 + 8 + 1)
#define STAT_MIN (4 + 4 + 8 * 8 + 4 + 8 * 7)

struct npool {
	char name[64], host[64];
	uint16_t port;
	pfs_rpc_pool *pool;
};

struct mds_qosnet {
	mds_qosnet_opts o;
	struct npool *pools;   /* the stepping thread's */
	size_t npools;
};

/* One RPC of a round. */
struct call {
	pfs_rpc_pool *pool;
	uint16_t op;
	pfs_wbuf req;
	int rc;
	mds_qos_report *rep;   /* QOS_STATS: decoded here */
};

int mds_qosnet_create(const mds_qosnet_opts *opts, mds_qosnet **out)
{
	mds_qosnet *n = calloc(1, sizeof(*n));

	if (!n)
		return -ENOMEM;
	if (opts)
		n->o = *opts;
	if (n->o.timeout_ms <= 0)
		n->o.timeout_ms = 1000;
	if (!n->o.max_threads)
		n->o.max_threads = 64;
	*out = n;
	return 0;
}

void mds_qosnet_destroy(mds_qosnet *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->npools; i++)
		pfs_rpc_pool_destroy(n->pools[i].pool);
	free(n->pools);
	free(n);
}

/* The pool of OSS o, made or re-made for its current address. */
static pfs_rpc_pool *pool_for(mds_qosnet *n, const mds_qos_oss *o)
{
	struct npool *p = NULL;
	pfs_rpc_opts ro = {
		.max_conns = 2, .timeout_ms = n->o.timeout_ms,
		.retry_ms = 1, /* a dead OSS fails at once; the next round retries */
		.auth = n->o.auth,
	};

	for (size_t i = 0; i < n->npools; i++)
		if (!strcmp(n->pools[i].name, o->name))
			p = &n->pools[i];
	if (p && (strcmp(p->host, o->host) || p->port != o->ctl_port)) {
		pfs_rpc_pool_destroy(p->pool);
		p->pool = NULL;
	}
	if (!p) {
		struct npool *np = realloc(n->pools, (n->npools + 1) * sizeof(*np));
		if (!np)
			return NULL;
		n->pools = np;
		p = &np[n->npools++];
		memset(p, 0, sizeof(*p));
		memcpy(p->name, o->name, sizeof(p->name));
	}
	if (!p->pool) {
		memcpy(p->host, o->host, sizeof(p->host));
		p->port = o->ctl_port;
		if (pfs_rpc_pool_create(p->host, p->port, &ro, &p->pool))
			p->pool = NULL;
	}
	return p->pool;
}

int mds_qosnet_decode_stats(const uint8_t *p, size_t len, mds_qos_report *r)
{
	pfs_rbuf b;
	int rc;

	memset(r, 0, sizeof(*r));
	pfs_rbuf_init(&b, p, len);
	r->snapshot_ns = pfs_rbuf_u64(&b);
	r->period_s = pfs_rbuf_f64_finite(&b);
	r->n_osts = pfs_rbuf_u32(&b);
	if (pfs_rbuf_error(&b) || r->period_s < 0 ||
	    r->n_osts > pfs_rbuf_left(&b) / OST_INFO_MIN)
		goto bad;
	r->osts = calloc(r->n_osts ? r->n_osts : 1, sizeof(*r->osts));
	if (!r->osts)
		goto nomem;
	for (uint32_t i = 0; i < r->n_osts; i++)
		if (pfs_qos_ost_info_decode(&b, &r->osts[i]))
			goto bad;
	r->n = pfs_rbuf_u32(&b);
	if (pfs_rbuf_error(&b) || r->n > pfs_rbuf_left(&b) / STAT_MIN)
		goto bad;
	r->stats = calloc(r->n ? r->n : 1, sizeof(*r->stats));
	if (!r->stats)
		goto nomem;
	for (uint32_t i = 0; i < r->n; i++)
		if (pfs_qos_stat_decode(&b, &r->stats[i]))
			goto bad;
	if (pfs_rbuf_done(&b))
		goto bad;
	return 0;
bad:
	rc = -EBADMSG;
	goto out;
nomem:
	rc = -ENOMEM;
out:
	mds_qos_report_free(r);
	return rc;
}

static void *call_main(void *arg)
{
	struct call *c = arg;
	pfs_rpc_reply rep = { 0 };

	if (!c->pool) {
		c->rc = -ENOMEM;
		return NULL;
	}
	c->rc = pfs_wbuf_error(&c->req);
	if (!c->rc)
		c->rc = pfs_rpc_call(c->pool, c->op, NULL, 0, c->req.data, c->req.len, NULL, 0,
				     &rep);
	if (!c->rc && c->rep)
		c->rc = mds_qosnet_decode_stats(rep.data, rep.len, c->rep);
	pfs_rpc_reply_free(&rep);
	return NULL;
}

/* Run calls[0..n) concurrently, max_threads at a time. */
static void run(mds_qosnet *n, struct call *calls, size_t cnt)
{
	pthread_t *t = malloc(n->o.max_threads * sizeof(*t));
	uint8_t *started = malloc(n->o.max_threads);

	if (!t || !started) {
		/* no memory for threads: one call after another */
		for (size_t i = 0; i < cnt; i++)
			call_main(&calls[i]);
		goto out;
	}
	for (size_t base = 0; base < cnt; base += n->o.max_threads) {
		size_t m = cnt - base < n->o.max_threads ? cnt - base : n->o.max_threads;
		for (size_t i = 0; i < m; i++) {
			/* no thread: this call runs here, in turn */
			started[i] = pthread_create(&t[i], NULL, call_main, &calls[base + i]) == 0;
			if (!started[i])
				call_main(&calls[base + i]);
		}
		for (size_t i = 0; i < m; i++)
			if (started[i])
				pthread_join(t[i], NULL);
	}
out:
	free(t);
	free(started);
}

static void collect(void *ctx, const mds_qos_oss *oss, size_t cnt, mds_qos_report *out)
{
	mds_qosnet *n = ctx;
	struct call *calls = calloc(cnt ? cnt : 1, sizeof(*calls));

	if (!calls) {
		for (size_t i = 0; i < cnt; i++)
			out[i].rc = -ENOMEM;
		return;
	}
	for (size_t i = 0; i < cnt; i++) {
		calls[i].pool = pool_for(n, &oss[i]);
		calls[i].op = PFS_OP_OSS_QOS_STATS;
		calls[i].rep = &out[i];
		pfs_wbuf_init(&calls[i].req);
		pfs_wbuf_u8(&calls[i].req, PFS_QOS_STATS_PERIOD);
	}
	run(n, calls, cnt);
	for (size_t i = 0; i < cnt; i++) {
		out[i].rc = calls[i].rc;
		if (calls[i].rc)
			pfs_log(PFS_LOG_DEBUG, "qos: stats from %s (%s:%u): %s", oss[i].name,
				oss[i].host, oss[i].ctl_port, pfs_strerror(calls[i].rc));
		pfs_wbuf_free(&calls[i].req);
	}
	free(calls);
}

static void push(void *ctx, const mds_qos_oss *oss, const pfs_qos_alloc_set *sets, size_t cnt,
		 int *rc)
{
	mds_qosnet *n = ctx;
	struct call *calls = calloc(cnt ? cnt : 1, sizeof(*calls));

	if (!calls) {
		for (size_t i = 0; i < cnt; i++)
			rc[i] = -ENOMEM;
		return;
	}
	for (size_t i = 0; i < cnt; i++) {
		calls[i].pool = pool_for(n, &oss[i]);
		calls[i].op = PFS_OP_OSS_QOS_SET;
		pfs_wbuf_init(&calls[i].req);
		pfs_qos_alloc_set_encode(&calls[i].req, &sets[i]);
	}
	run(n, calls, cnt);
	for (size_t i = 0; i < cnt; i++) {
		rc[i] = calls[i].rc;
		pfs_wbuf_free(&calls[i].req);
	}
	free(calls);
}

mds_qos_oss_ops mds_qosnet_ops(mds_qosnet *n)
{
	return (mds_qos_oss_ops){ .collect = collect, .push = push, .ctx = n };
}
