/* osc.c — striped object I/O over per-OSS RPC pools (see osc.h).
 *
 * Structure: an endpoint table (one per distinct OSS host:port, never freed
 * before destroy so pool pointers stay valid without reference counts) and
 * an OST map (OST index -> endpoint).  An I/O becomes an array of pieces,
 * each one RPC; run_pieces() resolves their pools and runs them in waves. */
#include "client/osc.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/log.h"

#define OSC_MAX_ENDPOINTS 1024

typedef struct endpoint {
	char host[64];
	uint16_t port;
	pfs_rpc_pool *pool;
} endpoint;

struct cli_osc {
	cli_mdc *mdc;
	pfs_rpc_opts opts;
	pthread_mutex_t lock;
	endpoint *eps;      /* guarded by lock; grows, entries never move out */
	unsigned neps, capeps;
	int *ost_ep;        /* OST index -> endpoint index, -1 unknown; guarded by lock */
	uint32_t nost;
	pthread_mutex_t refresh_lock; /* one OST_LIST at a time */
	uint64_t pieces, waves, refreshes; /* guarded by lock */
};

/* One RPC of an I/O. */
typedef struct piece {
	uint16_t op;
	uint32_t ost;
	uint64_t object;
	uint64_t obj_off;
	uint64_t len;         /* READ/WRITE length, TRUNCATE size */
	const void *bulk;     /* WRITE data */
	void *rbuf;           /* READ destination */
	pfs_extent ext;       /* READ/WRITE: the extent this piece serves */
	int ep;               /* endpoint index: the lock order */
	pfs_rpc_pool *pool;
	int rc;
	size_t got;           /* READ bytes received */
	int done;
} piece;

int cli_osc_create(cli_mdc *mdc, const pfs_rpc_opts *opts, cli_osc **out)
{
	cli_osc *o = calloc(1, sizeof(*o));

	if (!o)
		return -ENOMEM;
	o->mdc = mdc;
	if (opts)
		o->opts = *opts;
	pthread_mutex_init(&o->lock, NULL);
	pthread_mutex_init(&o->refresh_lock, NULL);
	*out = o;
	return 0;
}

void cli_osc_destroy(cli_osc *o)
{
	if (!o)
		return;
	for (unsigned i = 0; i < o->neps; i++)
		pfs_rpc_pool_destroy(o->eps[i].pool);
	free(o->eps);
	free(o->ost_ep);
	pthread_mutex_destroy(&o->lock);
	pthread_mutex_destroy(&o->refresh_lock);
	free(o);
}

void cli_osc_counters(cli_osc *o, uint64_t *pieces, uint64_t *waves, uint64_t *refreshes)
{
	pthread_mutex_lock(&o->lock);
	*pieces = o->pieces;
	*waves = o->waves;
	*refreshes = o->refreshes;
	pthread_mutex_unlock(&o->lock);
}

/* ---- pure helpers ---- */

size_t cli_osc_plan(const pfs_layout *l, uint64_t off, uint64_t len, uint64_t max_piece,
		    pfs_extent *out, size_t max)
{
	size_t n = pfs_layout_map(l, off, len, NULL, 0), k = 0;
	pfs_extent *tmp;

	if (n == 0 || max_piece == 0)
		return 0;
	tmp = malloc(n * sizeof(*tmp));
	if (!tmp)
		return 0;
	n = pfs_layout_map(l, off, len, tmp, n);
	for (size_t i = 0; i < n; i++) {
		for (uint64_t done = 0; done < tmp[i].len; done += max_piece) {
			uint64_t piece_len = tmp[i].len - done;

			if (piece_len > max_piece)
				piece_len = max_piece;
			if (k < max)
				out[k] = (pfs_extent){ tmp[i].idx, tmp[i].obj_off + done,
						       tmp[i].buf_off + done, piece_len };
			k++;
		}
	}
	free(tmp);
	return k;
}

size_t cli_osc_clip(uint64_t off, size_t len, uint64_t file_size)
{
	if (off >= file_size)
		return 0;
	return file_size - off < len ? (size_t)(file_size - off) : len;
}

void cli_osc_zero_tail(void *buf, const pfs_extent *e, size_t got)
{
	if (got < e->len)
		memset((char *)buf + e->buf_off + got, 0, e->len - got);
}

/* ---- OST map ---- */

/* Endpoint index for host:port, adding one (and its pool) if new.  Called
 * with o->lock held. */
static int ep_find_or_add(cli_osc *o, const char *host, uint16_t port)
{
	endpoint *e;
	int rc;

	for (unsigned i = 0; i < o->neps; i++)
		if (o->eps[i].port == port && !strcmp(o->eps[i].host, host))
			return (int)i;
	if (o->neps >= OSC_MAX_ENDPOINTS)
		return -ENOSPC;
	if (o->neps == o->capeps) {
		unsigned cap = o->capeps ? o->capeps * 2 : 8;

		e = realloc(o->eps, cap * sizeof(*e));
		if (!e)
			return -ENOMEM;
		o->eps = e;
		o->capeps = cap;
	}
	e = &o->eps[o->neps];
	memset(e, 0, sizeof(*e));
	snprintf(e->host, sizeof(e->host), "%s", host);
	e->port = port;
	rc = pfs_rpc_pool_create(host, port, &o->opts, &e->pool);
	if (rc)
		return rc;
	return (int)o->neps++;
}

/* Reload the OST table from the MDS. */
static int refresh(cli_osc *o, const char *job)
{
	pfs_ost_info *osts = NULL;
	uint32_t n = 0, maxidx = 0;
	int rc, *map;

	rc = cli_mdc_ost_list(o->mdc, job, &osts, &n);
	if (rc) {
		pfs_log(PFS_LOG_WARNING, "osc: OST list from MDS failed: %s", pfs_strerror(rc));
		return rc;
	}
	for (uint32_t i = 0; i < n; i++)
		if (osts[i].index + 1 > maxidx)
			maxidx = osts[i].index + 1;
	pthread_mutex_lock(&o->lock);
	o->refreshes++;
	if (maxidx > o->nost) {
		map = realloc(o->ost_ep, maxidx * sizeof(*map));
		if (!map) {
			rc = -ENOMEM;
			goto unlock;
		}
		for (uint32_t i = o->nost; i < maxidx; i++)
			map[i] = -1;
		o->ost_ep = map;
		o->nost = maxidx;
	}
	for (uint32_t i = 0; i < n; i++) {
		const char *host = osts[i].host;
		int ep;

		if (osts[i].data_port == 0)
			continue;
		/* An OSS bound to the wildcard address registers as such; it
		 * is then reachable where the MDS is, as on a one-host test
		 * cluster. */
		if (!*host || !strcmp(host, "0.0.0.0") || !strcmp(host, "::"))
			host = "127.0.0.1";
		ep = ep_find_or_add(o, host, osts[i].data_port);
		if (ep < 0) {
			rc = ep;
			goto unlock;
		}
		o->ost_ep[osts[i].index] = ep;
	}
unlock:
	pthread_mutex_unlock(&o->lock);
	free(osts);
	return rc;
}

/* Endpoint of an OST under o->lock, or -1. */
static int ost_lookup(cli_osc *o, uint32_t ost, pfs_rpc_pool **pool)
{
	int ep = -1;

	pthread_mutex_lock(&o->lock);
	if (ost < o->nost && o->ost_ep[ost] >= 0) {
		ep = o->ost_ep[ost];
		*pool = o->eps[ep].pool;
	}
	pthread_mutex_unlock(&o->lock);
	return ep;
}

static int resolve(cli_osc *o, const char *job, piece *p)
{
	int rc;

	p->ep = ost_lookup(o, p->ost, &p->pool);
	if (p->ep >= 0)
		return 0;
	/* Serialise refreshes, and skip ours if another thread's refresh
	 * already brought the OST in while we waited. */
	pthread_mutex_lock(&o->refresh_lock);
	p->ep = ost_lookup(o, p->ost, &p->pool);
	if (p->ep < 0) {
		rc = refresh(o, job);
		if (rc == 0)
			p->ep = ost_lookup(o, p->ost, &p->pool);
	}
	pthread_mutex_unlock(&o->refresh_lock);
	if (p->ep >= 0)
		return 0;
	pfs_log(PFS_LOG_ERR, "osc: OST %u is not known to the MDS", p->ost);
	return -EIO;
}

/* ---- the engine ---- */

static int piece_start(const char *job, piece *p, pfs_rpc_inflight **call)
{
	pfs_wbuf w;
	int rc;

	pfs_wbuf_init(&w);
	pfs_wbuf_u32(&w, p->ost);
	pfs_wbuf_u64(&w, p->object);
	switch (p->op) {
	case PFS_OP_OSS_READ:
		pfs_wbuf_u64(&w, p->obj_off);
		pfs_wbuf_u32(&w, (uint32_t)p->len);
		break;
	case PFS_OP_OSS_WRITE:
		pfs_wbuf_u64(&w, p->obj_off);
		pfs_wbuf_u32(&w, (uint32_t)p->len);
		break;
	case PFS_OP_OSS_TRUNCATE:
		pfs_wbuf_u64(&w, p->len);
		break;
	default:
		break;
	}
	rc = pfs_wbuf_error(&w);
	if (rc == 0)
		rc = pfs_rpc_start(p->pool, p->op, &(pfs_rpc_tag){ .job = job }, w.data, w.len, p->bulk,
				   p->op == PFS_OP_OSS_WRITE ? p->len : 0, call);
	pfs_wbuf_free(&w);
	return rc;
}

static int piece_finish(piece *p, pfs_rpc_inflight *call)
{
	pfs_rpc_reply rep = { 0 };
	pfs_rbuf r;
	int rc;

	if (p->op == PFS_OP_OSS_READ) {
		rep.buf = p->rbuf;
		rep.cap = p->len;
	}
	pfs_rpc_reply_init(&rep);
	rc = pfs_rpc_finish(call, &rep);
	if (rc)
		goto out;
	switch (p->op) {
	case PFS_OP_OSS_READ:
		if (rep.len > p->len) {
			rc = -EBADMSG;
			break;
		}
		/* The payload was read straight into rbuf when it fit. */
		if (rep.data != p->rbuf)
			memcpy(p->rbuf, rep.data, rep.len);
		p->got = rep.len;
		break;
	case PFS_OP_OSS_WRITE:
		pfs_rbuf_init(&r, rep.data, rep.len);
		uint32_t written = pfs_rbuf_u32(&r);
		rc = pfs_rbuf_done(&r);
		if (rc == 0 && written != p->len)
			rc = -EIO;
		break;
	default:
		pfs_rbuf_init(&r, rep.data, rep.len);
		rc = pfs_rbuf_done(&r);
		break;
	}
out:
	pfs_rpc_reply_free(&rep);
	return rc;
}

static int cmp_ep(const void *a, const void *b)
{
	const piece *x = a, *y = b;

	return (x->ep > y->ep) - (x->ep < y->ep);
}

/* Run the pieces not yet done, in waves (see the deadlock rule in osc.h).
 * Pieces are reordered; each piece's result is in p->rc. */
static int run_waves(cli_osc *o, const char *job, piece *ps, size_t n)
{
	pfs_rpc_inflight **calls = NULL;
	size_t *idx = NULL, left = 0;

	for (size_t i = 0; i < n; i++)
		left += !ps[i].done;
	qsort(ps, n, sizeof(*ps), cmp_ep);
	calls = calloc(n, sizeof(*calls));
	idx = calloc(n, sizeof(*idx));
	if (!calls || !idx) {
		free(calls);
		free(idx);
		return -ENOMEM;
	}
	while (left > 0) {
		size_t k = 0;
		int last_ep = -1;

		/* Sorted by endpoint: the first pending piece of each endpoint,
		 * in ascending order. */
		for (size_t i = 0; i < n; i++) {
			if (ps[i].done || ps[i].ep == last_ep)
				continue;
			last_ep = ps[i].ep;
			ps[i].done = 1;
			left--;
			ps[i].rc = piece_start(job, &ps[i], &calls[k]);
			if (ps[i].rc == 0)
				idx[k++] = i;
		}
		for (size_t j = 0; j < k; j++)
			ps[idx[j]].rc = piece_finish(&ps[idx[j]], calls[j]);
		pthread_mutex_lock(&o->lock);
		o->waves++;
		o->pieces += k;
		pthread_mutex_unlock(&o->lock);
	}
	free(calls);
	free(idx);
	return 0;
}

/* Errors that say "this address does not answer", as when an OSS restarted
 * elsewhere (another port, another node). */
static int transport_err(int rc)
{
	return rc == -ECONNREFUSED || rc == -ECONNRESET || rc == -EPIPE || rc == -ETIMEDOUT ||
	       rc == -EHOSTUNREACH || rc == -ENETUNREACH || rc == -ECONNABORTED;
}

/* Run every piece.  Pieces that failed in transport are run once more if a
 * fresh OST list from the MDS moved their OST to another address: every
 * piece is idempotent (a write puts the same bytes at the same offset).
 * Returns 0 or the first error. */
static int run_pieces(cli_osc *o, const char *job, piece *ps, size_t n)
{
	int rc = 0, again = 0;

	for (size_t i = 0; i < n; i++) {
		rc = resolve(o, job, &ps[i]);
		if (rc)
			return rc;
	}
	rc = run_waves(o, job, ps, n);
	if (rc)
		return rc;
	for (size_t i = 0; i < n && !again; i++)
		again = transport_err(ps[i].rc);
	if (again) {
		pthread_mutex_lock(&o->refresh_lock);
		rc = refresh(o, job);
		pthread_mutex_unlock(&o->refresh_lock);
		for (size_t i = 0; i < n && rc == 0; i++) {
			int old = ps[i].ep;

			if (!transport_err(ps[i].rc) || ost_lookup(o, ps[i].ost, &ps[i].pool) < 0)
				continue;
			ps[i].ep = ost_lookup(o, ps[i].ost, &ps[i].pool);
			if (ps[i].ep != old) {
				pfs_log(PFS_LOG_NOTICE, "osc: OST %u moved; resending", ps[i].ost);
				ps[i].done = 0;
				ps[i].got = 0;
			}
		}
		if (rc == 0 && (rc = run_waves(o, job, ps, n)))
			return rc;
	}
	rc = 0;
	for (size_t i = 0; i < n && !rc; i++)
		rc = ps[i].rc;
	return rc;
}

/* Build the pieces of a read or write of [off, off+len). */
static int io_pieces(const pfs_layout *l, uint16_t op, uint64_t off, size_t len, void *rbuf,
		     const void *wbuf, piece **out, size_t *nout)
{
	size_t n = cli_osc_plan(l, off, len, PFS_MAX_IO, NULL, 0);
	pfs_extent *e;
	piece *ps;

	if (n == 0)
		return l->stripe_count == 0 ? -EINVAL : 0;
	e = calloc(n, sizeof(*e));
	ps = calloc(n, sizeof(*ps));
	if (!e || !ps) {
		free(e);
		free(ps);
		return -ENOMEM;
	}
	cli_osc_plan(l, off, len, PFS_MAX_IO, e, n);
	for (size_t i = 0; i < n; i++) {
		ps[i].op = op;
		ps[i].ost = l->stripe[e[i].idx].ost;
		ps[i].object = l->stripe[e[i].idx].object;
		ps[i].obj_off = e[i].obj_off;
		ps[i].len = e[i].len;
		if (rbuf)
			ps[i].rbuf = (char *)rbuf + e[i].buf_off;
		if (wbuf)
			ps[i].bulk = (const char *)wbuf + e[i].buf_off;
		ps[i].ext = e[i];
	}
	free(e);
	*out = ps;
	*nout = n;
	return 0;
}

int cli_osc_read(cli_osc *o, const char *job, const pfs_layout *l, uint64_t file_size,
		 uint64_t off, size_t len, void *buf, size_t *got)
{
	piece *ps = NULL;
	size_t n = 0;
	int rc;

	*got = 0;
	len = cli_osc_clip(off, len, file_size);
	if (len == 0)
		return 0;
	rc = io_pieces(l, PFS_OP_OSS_READ, off, len, buf, NULL, &ps, &n);
	if (rc)
		return rc;
	rc = run_pieces(o, job, ps, n);
	if (rc == -ENOENT)
		rc = 0; /* recomputed per piece below */
	for (size_t i = 0; i < n && rc == 0; i++) {
		/* A missing object is a hole that was never written. */
		if (ps[i].rc && ps[i].rc != -ENOENT)
			rc = ps[i].rc;
		if (ps[i].rc == -ENOENT)
			ps[i].got = 0;
		/* Zero what the object did not return (a hole). */
		cli_osc_zero_tail(buf, &ps[i].ext, ps[i].got);
	}
	if (rc == 0)
		*got = len;
	free(ps);
	return rc;
}

int cli_osc_write(cli_osc *o, const char *job, const pfs_layout *l, uint64_t off, size_t len,
		  const void *buf)
{
	piece *ps = NULL;
	size_t n = 0;
	int rc;

	if (len == 0)
		return 0;
	rc = io_pieces(l, PFS_OP_OSS_WRITE, off, len, NULL, buf, &ps, &n);
	if (rc == 0)
		rc = run_pieces(o, job, ps, n);
	free(ps);
	return rc;
}

/* One piece per object with op; len = per-object size for TRUNCATE. */
int cli_osc_write_pipe(cli_osc *o, const char *job, const pfs_layout *l, uint64_t off,
		       size_t len, int pipe_fd)
{
	pfs_extent e;
	piece p;
	pfs_wbuf w;
	pfs_rpc_inflight *call;
	int rc;

	if (len == 0 || len > PFS_MAX_IO || pfs_layout_map(l, off, len, &e, 1) != 1)
		return -EXDEV;
	memset(&p, 0, sizeof(p));
	p.op = PFS_OP_OSS_WRITE;
	p.ost = l->stripe[e.idx].ost;
	p.object = l->stripe[e.idx].object;
	p.obj_off = e.obj_off;
	p.len = len;
	p.ext = e;
	if (resolve(o, job, &p))
		return -EXDEV;
	pfs_wbuf_init(&w);
	pfs_wbuf_u32(&w, p.ost);
	pfs_wbuf_u64(&w, p.object);
	pfs_wbuf_u64(&w, p.obj_off);
	pfs_wbuf_u32(&w, (uint32_t)p.len);
	rc = pfs_wbuf_error(&w);
	if (rc == 0)
		rc = pfs_rpc_start_pipe(p.pool, PFS_OP_OSS_WRITE, &(pfs_rpc_tag){ .job = job }, w.data, w.len, pipe_fd, len,
					&call);
	pfs_wbuf_free(&w);
	if (rc == 0)
		rc = piece_finish(&p, call);
	if (rc == 0) {
		pthread_mutex_lock(&o->lock);
		o->pieces++;
		o->waves++;
		pthread_mutex_unlock(&o->lock);
	}
	return rc == -EXDEV ? -EIO : rc;
}

static int per_object(cli_osc *o, const char *job, const pfs_layout *l, uint16_t op,
		      uint64_t size)
{
	piece *ps;
	int rc;

	if (l->stripe_count == 0)
		return 0;
	ps = calloc(l->stripe_count, sizeof(*ps));
	if (!ps)
		return -ENOMEM;
	for (uint32_t i = 0; i < l->stripe_count; i++) {
		ps[i].op = op;
		ps[i].ost = l->stripe[i].ost;
		ps[i].object = l->stripe[i].object;
		ps[i].len = pfs_layout_object_size(l, size, i);
	}
	rc = run_pieces(o, job, ps, l->stripe_count);
	if (rc == -ENOENT) {
		/* Sync of a never-written object, or cutting a missing object
		 * to 0 bytes: nothing to do.  Anything else is an error. */
		rc = 0;
		for (uint32_t i = 0; i < l->stripe_count && rc == 0; i++)
			if (ps[i].rc == -ENOENT && (op == PFS_OP_OSS_SYNC || ps[i].len == 0))
				continue;
			else
				rc = ps[i].rc;
	}
	free(ps);
	return rc;
}

int cli_osc_truncate(cli_osc *o, const char *job, const pfs_layout *l, uint64_t size)
{
	return per_object(o, job, l, PFS_OP_OSS_TRUNCATE, size);
}

int cli_osc_sync(cli_osc *o, const char *job, const pfs_layout *l)
{
	return per_object(o, job, l, PFS_OP_OSS_SYNC, 0);
}
