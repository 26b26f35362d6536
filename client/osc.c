/* osc.c — striped object I/O over per-OSS RPC pools (see osc.h).
 *
 * Structure: an endpoint table (one per distinct OSS host:port, never freed
 * before destroy so pool and credit pointers stay valid without reference
 * counts) and an OST map (OST index -> endpoint).  An I/O becomes an array
 * of pieces, each one RPC; run_pieces() resolves their endpoints and runs
 * them in waves, sending again what an OSS refused as busy or did not
 * answer.  Pieces whose data waits in a FUSE pipe are sent from a scratch
 * pipe filled with tee(2) for each send; idle scratch pipes are kept for
 * reuse (as many as calls ran at once, closed at destroy). */
#include "client/osc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "client/credit.h"
#include "client/mdqos.h"
#include "common/clock.h"
#include "common/buf.h"
#include "common/log.h"

#define OSC_MAX_ENDPOINTS 1024
/* Pause before sending again a piece whose connection broke (a restarting
 * OSS): the RPC layer's connect retries pace the rest. */
#define OSC_RESEND_DELAY_MS 50u

typedef struct endpoint {
	char host[64];
	uint16_t port;
	pfs_rpc_pool *pool;
	cli_credit *credit;
	uint64_t busy, resends; /* guarded by cli_osc.lock */
	/* recovery (osc.h "A dead OSS"); guarded by cli_osc.lock */
	int down;               /* the last request failed in transport */
	unsigned users;         /* calls with a piece on this endpoint now */
	uint64_t refused;       /* calls refused: too many waiting while down */
} endpoint;

/* A pipe to splice WRITE data from; empty while idle. */
typedef struct scratch {
	int r, w;
} scratch;

struct cli_osc {
	cli_mdc *mdc;
	cli_osc_opts opts;
	pthread_mutex_t lock;
	endpoint *eps;      /* guarded by lock; grows, entries never move out */
	unsigned neps, capeps;
	int *ost_ep;        /* OST index -> endpoint index, -1 unknown; guarded by lock */
	uint32_t nost;
	pthread_mutex_t refresh_lock; /* one OST_LIST at a time */
	uint64_t pieces, waves, refreshes; /* guarded by lock */
	uint64_t busy, resends, tee_fallbacks; /* guarded by lock */
	uint64_t read_piped, read_pipe_fallbacks; /* guarded by lock */
	int read_pipe_off;  /* READ replies came in memory: no pipes (lock) */
	scratch *spare;     /* idle scratch pipes; guarded by lock */
	unsigned nspare, capspare;
};

/* One RPC of an I/O. */
typedef struct piece {
	uint16_t op;
	uint32_t ost;
	uint64_t object;
	uint64_t obj_off;
	uint64_t len;         /* READ/WRITE length, TRUNCATE size */
	const void *bulk;     /* WRITE data in memory */
	const struct iovec *bv; /* or WRITEV data: nvec pieces, sent where they are */
	const uint64_t *voff; /* WRITEV: object offsets and lengths of its extents */
	const uint32_t *vlen;
	uint32_t nvec;
	int pipe_fd;          /* WRITE data in this pipe (never consumed), or -1 */
	void *rbuf;           /* READ destination */
	const cli_osc_pipe *rpipe; /* or this pipe (cli_osc_read_pipe_caps) */
	int piped;            /* READ: the reply's payload went into rpipe */
	int unpiped;          /* READ: a payload for rpipe came in memory */
	const pfs_capa *cap;  /* the object's capability (in the caller's set) or NULL */
	pfs_extent ext;       /* READ/WRITE: the extent this piece serves */
	int ep;               /* endpoint index: the lock order */
	pfs_rpc_pool *pool;
	cli_credit *credit;
	const char *job;      /* whose credit it holds (the call's tag) */
	int rc;
	size_t got;           /* READ bytes received */
	uint64_t blocks;      /* STAT: 512-byte blocks the object uses */
	uint64_t osize;       /* STAT: the object's size */
	int done;             /* no send pending */
	int tee_failed;       /* pipe data could not be duplicated */
	unsigned busy_n;      /* busy answers in this attempt */
	uint64_t attempt_start; /* ms; 0 = the next send starts an attempt */
	uint64_t sent_us;     /* when this attempt went out (ASCAR, credit.h) */
	uint64_t not_before;  /* ms; busy backoff or resend delay */
} piece;

/* xorshift32 per thread, for backoff jitter only. */
static uint32_t osc_rand(void)
{
	static _Thread_local uint32_t s;
	struct timespec ts;

	if (s == 0) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		s = ((uint32_t)ts.tv_nsec ^ (uint32_t)(uintptr_t)&s) | 1u;
	}
	s ^= s << 13;
	s ^= s >> 17;
	s ^= s << 5;
	return s;
}

int cli_osc_create(cli_mdc *mdc, const cli_osc_opts *opts, cli_osc **out)
{
	cli_osc *o = calloc(1, sizeof(*o));

	if (!o)
		return -ENOMEM;
	o->mdc = mdc;
	if (opts)
		o->opts = *opts;
	/* The pool's defaults, needed here for the retry bounds. */
	if (!o->opts.rpc.max_conns)
		o->opts.rpc.max_conns = 8;
	if (o->opts.rpc.timeout_ms <= 0)
		o->opts.rpc.timeout_ms = 60000;
	if (o->opts.rpc.retry_ms <= 0)
		o->opts.rpc.retry_ms = 30000;
	if (o->opts.rpc.recovery_ms < o->opts.rpc.retry_ms)
		o->opts.rpc.recovery_ms = o->opts.rpc.retry_ms;
	if (!o->opts.recovery_waiters)
		o->opts.recovery_waiters = 16;
	pthread_mutex_init(&o->lock, NULL);
	pthread_mutex_init(&o->refresh_lock, NULL);
	*out = o;
	return 0;
}

void cli_osc_destroy(cli_osc *o)
{
	if (!o)
		return;
	for (unsigned i = 0; i < o->neps; i++) {
		pfs_rpc_pool_destroy(o->eps[i].pool);
		cli_credit_destroy(o->eps[i].credit);
	}
	for (unsigned i = 0; i < o->nspare; i++) {
		close(o->spare[i].r);
		close(o->spare[i].w);
	}
	free(o->spare);
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

void cli_osc_stats_get(cli_osc *o, cli_osc_stats *st)
{
	memset(st, 0, sizeof(*st));
	pthread_mutex_lock(&o->lock);
	st->pieces = o->pieces;
	st->waves = o->waves;
	st->refreshes = o->refreshes;
	st->busy_retries = o->busy;
	st->resends = o->resends;
	st->tee_fallbacks = o->tee_fallbacks;
	st->read_piped = o->read_piped;
	st->read_pipe_fallbacks = o->read_pipe_fallbacks;
	for (unsigned i = 0; i < o->neps; i++) {
		cli_credit_stats cs;

		cli_credit_stats_get(o->eps[i].credit, &cs);
		st->credit_waits += cs.waits;
	}
	pthread_mutex_unlock(&o->lock);
}

void cli_osc_oss_stats_get(cli_osc *o, cli_osc_oss_stats *out, unsigned max, unsigned *n)
{
	pthread_mutex_lock(&o->lock);
	*n = o->neps;
	for (unsigned i = 0; i < o->neps && i < max; i++) {
		const endpoint *e = &o->eps[i];
		cli_credit_stats cs;

		cli_credit_stats_get(e->credit, &cs);
		memset(&out[i], 0, sizeof(out[i]));
		snprintf(out[i].host, sizeof(out[i].host), "%s", e->host);
		out[i].port = e->port;
		out[i].credit = cs.credit;
		out[i].inflight = cs.inflight;
		out[i].waiting = cs.waiting;
		out[i].peak = cs.peak;
		out[i].credit_waits = cs.waits;
		out[i].credit_changes = cs.changes;
		out[i].busy_retries = e->busy;
		out[i].resends = e->resends;
	}
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

unsigned cli_osc_backoff_ms(unsigned n, uint32_t r)
{
	unsigned b = CLI_OSC_BUSY_MAX_MS;

	/* 5 << 7 = 640 > 500: larger n only risk overflowing the shift. */
	if (n < 7 && (CLI_OSC_BUSY_MIN_MS << n) < b)
		b = CLI_OSC_BUSY_MIN_MS << n;
	/* Equal jitter: at least half the step, so a crowd of clients
	 * refused together spreads out without any retrying at once. */
	return b / 2 + r % (b / 2 + 1);
}

/* ---- OST map ---- */

/* Endpoint index for host:port, adding one (with its pool and credit) if
 * new.  Called with o->lock held. */
static int ep_find_or_add(cli_osc *o, const char *host, uint16_t port)
{
	char name[80];
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
	snprintf(name, sizeof(name), "%s:%u", host, port);
	rc = cli_credit_create(o->opts.credits, o->opts.rpc.max_conns, name, &e->credit);
	if (!rc)
		rc = cli_credit_set_policy(e->credit, o->opts.policy);
	if (rc) {
		cli_credit_destroy(e->credit);
		return rc;
	}
	rc = pfs_rpc_pool_create(host, port, &o->opts.rpc, &e->pool);
	if (rc) {
		cli_credit_destroy(e->credit);
		return rc;
	}
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

/* Endpoint of p's OST (filling p's pool and credit), or -1. */
static int ost_lookup(cli_osc *o, piece *p)
{
	int ep = -1;

	pthread_mutex_lock(&o->lock);
	if (p->ost < o->nost && o->ost_ep[p->ost] >= 0) {
		ep = o->ost_ep[p->ost];
		p->pool = o->eps[ep].pool;
		p->credit = o->eps[ep].credit;
	}
	pthread_mutex_unlock(&o->lock);
	return ep;
}

static int resolve(cli_osc *o, const char *job, piece *p)
{
	int rc;

	p->ep = ost_lookup(o, p);
	if (p->ep >= 0)
		return 0;
	/* Serialise refreshes, and skip ours if another thread's refresh
	 * already brought the OST in while we waited. */
	pthread_mutex_lock(&o->refresh_lock);
	p->ep = ost_lookup(o, p);
	if (p->ep < 0) {
		rc = refresh(o, job);
		if (rc == 0)
			p->ep = ost_lookup(o, p);
	}
	pthread_mutex_unlock(&o->refresh_lock);
	if (p->ep >= 0)
		return 0;
	pfs_log(PFS_LOG_ERR, "osc: OST %u is not known to the MDS", p->ost);
	return -EIO;
}

/* ---- scratch pipes (WRITE data from a FUSE pipe) ---- */

static int scratch_get(cli_osc *o, scratch *s)
{
	int fds[2];

	pthread_mutex_lock(&o->lock);
	if (o->nspare > 0) {
		*s = o->spare[--o->nspare];
		pthread_mutex_unlock(&o->lock);
		return 0;
	}
	pthread_mutex_unlock(&o->lock);
	if (pipe2(fds, O_CLOEXEC))
		return -errno;
	/* Room for a whole piece: tee(2) duplicates buffer by buffer and
	 * cannot resume, so a pipe with too few slots for the data (one per
	 * page, one more when it does not start on a page) fails the tee.
	 * 2 MiB is 512 slots; without the privilege to go over
	 * fs.pipe-max-size, 1 MiB still serves writes of 1 MiB - 4 KiB. */
	if (fcntl(fds[1], F_SETPIPE_SZ, 2 * PFS_MAX_IO) < 0)
		(void)fcntl(fds[1], F_SETPIPE_SZ, PFS_MAX_IO);
	s->r = fds[0];
	s->w = fds[1];
	return 0;
}

/* Keep an empty scratch pipe for the next call; close one that may hold
 * bytes (a failed send). */
static void scratch_put(cli_osc *o, scratch *s, int empty)
{
	if (empty) {
		pthread_mutex_lock(&o->lock);
		if (o->nspare == o->capspare) {
			unsigned cap = o->capspare ? o->capspare * 2 : 8;
			scratch *sp = realloc(o->spare, cap * sizeof(*sp));

			if (sp) {
				o->spare = sp;
				o->capspare = cap;
			}
		}
		if (o->nspare < o->capspare) {
			o->spare[o->nspare++] = *s;
			pthread_mutex_unlock(&o->lock);
			return;
		}
		pthread_mutex_unlock(&o->lock);
	}
	close(s->r);
	close(s->w);
}

/* Duplicate the first len bytes of pipe in into the empty pipe out.
 * Returns 0, -EAGAIN when fewer were duplicated (in holds less, or out has
 * too few slots), or -errno. */
static int tee_exact(int in, int out, size_t len)
{
	ssize_t n;

	do
		n = tee(in, out, len, SPLICE_F_NONBLOCK);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EAGAIN;
}

/* pfs_rpc_start for a piece whose data is in p->pipe_fd: the data goes
 * through a scratch pipe, so p->pipe_fd keeps it for a later send. */
static int start_from_pipe(cli_osc *o, piece *p, const pfs_rpc_tag *tag, const void *req,
			   size_t len, pfs_rpc_inflight **call)
{
	scratch s;
	int rc;

	rc = scratch_get(o, &s);
	if (rc == 0) {
		rc = tee_exact(p->pipe_fd, s.w, p->len);
		if (rc) {
			scratch_put(o, &s, 0);
		} else {
			rc = pfs_rpc_start_pipe(p->pool, p->op, tag, req, len, s.r, p->len,
						call);
			/* Sent: every byte left the scratch pipe. */
			scratch_put(o, &s, rc == 0);
			return rc;
		}
	}
	pfs_log(PFS_LOG_INFO, "osc: cannot duplicate %llu bytes of WRITE data from its pipe "
		"(%s); sending from memory", (unsigned long long)p->len, pfs_strerror(rc));
	p->tee_failed = 1;
	return -EXDEV;
}

/* ---- the engine ---- */

static int piece_start(cli_osc *o, const pfs_rpc_tag *tag, piece *p, pfs_rpc_inflight **call)
{
	pfs_rpc_tag t = *tag;
	pfs_wbuf w;
	int rc;

	pfs_wbuf_init(&w);
	pfs_wbuf_u32(&w, p->ost);
	pfs_wbuf_u64(&w, p->object);
	switch (p->op) {
	case PFS_OP_OSS_READ:
	case PFS_OP_OSS_WRITE:
		pfs_wbuf_u64(&w, p->obj_off);
		pfs_wbuf_u32(&w, (uint32_t)p->len);
		break;
	case PFS_OP_OSS_WRITEV:
		pfs_wbuf_u32(&w, p->nvec);
		for (uint32_t i = 0; i < p->nvec; i++) {
			pfs_wbuf_u64(&w, p->voff[i]);
			pfs_wbuf_u32(&w, p->vlen[i]);
		}
		break;
	case PFS_OP_OSS_TRUNCATE:
		pfs_wbuf_u64(&w, p->len);
		break;
	default:
		break;
	}
	/* the capability follows the fixed fields, before a write's bulk */
	if (p->cap)
		pfs_capa_encode(&w, p->cap);
	rc = pfs_wbuf_error(&w);
	if (rc)
		goto out;
	/* May wait for a reply of another call (see the deadlock argument in
	 * osc.h); the credit is ours until piece_finish, or now on failure. */
	p->job = tag->job;
	t.credit = cli_credit_acquire(p->credit, p->job);
	p->sent_us = pfs_clock_us();
	if (!p->attempt_start)
		p->attempt_start = pfs_clock_ms();
	if (p->pipe_fd >= 0)
		rc = start_from_pipe(o, p, &t, w.data, w.len, call);
	else if (p->bv)
		rc = pfs_rpc_start_iov(p->pool, p->op, &t, w.data, w.len, p->bv, (int)p->nvec,
				       call);
	else
		rc = pfs_rpc_start(p->pool, p->op, &t, w.data, w.len, p->bulk,
				   p->op == PFS_OP_OSS_WRITE || p->op == PFS_OP_OSS_WRITEV ?
				   p->len : 0, call);
	if (rc)
		cli_credit_release(p->credit, p->job, 0);
out:
	pfs_wbuf_free(&w);
	return rc;
}

/* Empty a READ pipe of what a failed reply left in it. */
static void pipe_drain(int r)
{
	char junk[16384];
	int n;

	while (ioctl(r, FIONREAD, &n) == 0 && n > 0) {
		ssize_t k = read(r, junk, (size_t)n < sizeof(junk) ? (size_t)n : sizeof(junk));

		if (k <= 0 && !(k < 0 && errno == EINTR))
			break;
	}
}

/* Write len bytes of data (zeros when NULL) into a READ pipe, a page at a
 * time and only while it has room: a full pipe is -ENOBUFS, never a wait.
 * 0 or -errno. */
static int pipe_put(int w, const void *data, size_t len)
{
	static const char zeros[4096];
	const char *c = data;

	while (len > 0) {
		struct pollfd pw = { .fd = w, .events = POLLOUT };
		size_t n = len < sizeof(zeros) ? len : sizeof(zeros);
		ssize_t k;

		if (poll(&pw, 1, 0) < 0 && errno != EINTR)
			return -errno;
		if (!(pw.revents & POLLOUT))
			return -ENOBUFS;
		k = write(w, c ? c : zeros, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? -errno : -EIO;
		if (c)
			c += k;
		len -= (size_t)k;
	}
	return 0;
}

/* A READ reply read into memory goes on into the piece's pipe (a copy:
 * only for sessions whose MAC covers the data).  0 or -errno. */
static int pipe_put_mem(const piece *p, const void *data, size_t len)
{
	return pipe_put(p->rpipe->w, data, len);
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
	p->piped = 0;
	if (p->op == PFS_OP_OSS_READ && p->rpipe) {
		rc = pfs_rpc_finish_pipe(call, &rep, p->rpipe->w, p->rpipe->cap, &p->piped);
		if (rc)
			pipe_drain(p->rpipe->r);
		if (rc == -ENOBUFS)
			rc = -EXDEV; /* the pipe is too small: the caller reads to memory */
	} else {
		rc = pfs_rpc_finish(call, &rep);
	}
	/* The header is zeroed on a transport error: no grant, no reply time. */
	cli_credit_done(p->credit, p->job, rep.hdr.credit, rep.hdr.opcode ? p->sent_us : 0);
	if (rc)
		goto out;
	switch (p->op) {
	case PFS_OP_OSS_READ:
		if (rep.len > p->len) {
			rc = -EBADMSG;
			break;
		}
		p->got = rep.len;
		if (p->rpipe) {
			p->unpiped = !p->piped && rep.len;
			if (p->unpiped && (rc = pipe_put_mem(p, rep.data, rep.len)))
				pipe_drain(p->rpipe->r);
			break;
		}
		/* The payload was read straight into rbuf when it fit. */
		if (rep.data != p->rbuf)
			memcpy(p->rbuf, rep.data, rep.len);
		break;
	case PFS_OP_OSS_WRITE:
	case PFS_OP_OSS_WRITEV:
		pfs_rbuf_init(&r, rep.data, rep.len);
		uint32_t written = pfs_rbuf_u32(&r);
		rc = pfs_rbuf_done(&r);
		if (rc == 0 && written != p->len)
			rc = -EIO;
		break;
	case PFS_OP_OSS_STAT:
		pfs_rbuf_init(&r, rep.data, rep.len);
		p->osize = pfs_rbuf_u64(&r);
		p->blocks = pfs_rbuf_u64(&r);
		rc = pfs_rbuf_done(&r);
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

/* Sent, and then no reply: the OSS may or may not have done it. */
static int lost_err(int rc)
{
	return rc == -ETIMEDOUT || rc == -EPIPE || rc == -ECONNRESET;
}

/* Errors that say "this address does not answer", as when an OSS restarted
 * elsewhere (another port, another node). */
static int transport_err(int rc)
{
	return lost_err(rc) || rc == -ECONNREFUSED || rc == -EHOSTUNREACH ||
	       rc == -ENETUNREACH || rc == -ECONNABORTED;
}

static void count_retry(cli_osc *o, const piece *p, int busy)
{
	pthread_mutex_lock(&o->lock);
	if (busy) {
		o->busy++;
		o->eps[p->ep].busy++;
	} else {
		o->resends++;
		o->eps[p->ep].resends++;
	}
	pthread_mutex_unlock(&o->lock);
}

/* After a send or its reply: should p be sent again (osc.h, "Busy and
 * timeouts")?  t0 is when the I/O began.  Sets the time it may go. */
static int piece_again(cli_osc *o, piece *p, uint64_t t0)
{
	uint64_t now = pfs_clock_ms(), T = (uint64_t)o->opts.rpc.timeout_ms;

	/* -EBUSY: the OSS's queues are full; -EAGAIN: it restarted and its
	 * REGISTER is not answered yet (the MDS is down or stopped), so it
	 * does not know which OSTs it serves (oss_server_lookup).  Nothing was
	 * done either way: sent again after a backoff, within T. */
	if (p->rc == -EBUSY || p->rc == -EAGAIN) {
		unsigned b = cli_osc_backoff_ms(p->busy_n, osc_rand());

		if (now + b < p->attempt_start + T) {
			p->busy_n++;
			p->not_before = now + b;
			count_retry(o, p, 1);
			return 1;
		}
		pfs_log(PFS_LOG_NOTICE, "osc: OST %u busy for %llu ms (the RPC timeout)", p->ost,
			(unsigned long long)(now - p->attempt_start));
		p->rc = -ETIMEDOUT;
	}
	if (!lost_err(p->rc) || now >= t0 + (uint64_t)o->opts.rpc.recovery_ms)
		return 0;
	if (pfs_rpc_interrupted()) {
		p->rc = -EINTR; /* FUSE_INTERRUPT: stop waiting for this OSS */
		return 0;
	}
	pfs_log(PFS_LOG_NOTICE, "osc: OST %u %s: %s; sending again", p->ost,
		pfs_op_name(p->op), pfs_strerror(p->rc));
	p->attempt_start = 0;
	p->busy_n = 0;
	p->not_before = now + OSC_RESEND_DELAY_MS;
	p->got = 0;
	count_retry(o, p, 0);
	return 1;
}

static int cmp_ep(const void *a, const void *b)
{
	const piece *x = a, *y = b;

	return (x->ep > y->ep) - (x->ep < y->ep);
}

/* After a send or a reply: a transport failure puts p's endpoint in
 * recovery, any answer from the OSS takes it out. */
static void ep_note(cli_osc *o, const piece *p)
{
	int down;

	if (transport_err(p->rc))
		down = 1;
	else if (p->rc == 0 || p->rc == -EBUSY || (p->rc < 0 && p->rc > -4096 &&
						    p->rc != -ENOMEM && p->rc != -EXDEV))
		down = 0;
	else
		return;
	pthread_mutex_lock(&o->lock);
	if (o->eps[p->ep].down != down)
		pfs_log(down ? PFS_LOG_WARNING : PFS_LOG_NOTICE, "osc: OSS %s:%u %s",
			o->eps[p->ep].host, o->eps[p->ep].port,
			down ? "does not answer: in recovery" : "answers again");
	o->eps[p->ep].down = down;
	pthread_mutex_unlock(&o->lock);
}

/* Admit a call whose pieces (sorted by endpoint) use eps: each endpoint
 * counts the call as a user; an endpoint in recovery with recovery_waiters
 * users already refuses it (osc.h "A dead OSS").  The endpoints taken are
 * stored in held[] (*nheld); release them with ep_leave. */
static int ep_enter(cli_osc *o, const piece *ps, size_t n, int *held, size_t *nheld)
{
	int rc = 0;

	*nheld = 0;
	pthread_mutex_lock(&o->lock);
	for (size_t i = 0; i < n && rc == 0; i++) {
		endpoint *e = &o->eps[ps[i].ep];

		if (*nheld && held[*nheld - 1] == ps[i].ep)
			continue;
		if (e->down && e->users >= o->opts.recovery_waiters) {
			if (e->refused++ % 1000 == 0)
				pfs_log(PFS_LOG_WARNING, "osc: OSS %s:%u in recovery and %u calls "
					"wait for it: EIO", e->host, e->port, e->users);
			rc = -EIO;
			break;
		}
		held[(*nheld)++] = ps[i].ep;
	}
	for (size_t i = 0; i < *nheld; i++)
		o->eps[held[i]].users += rc == 0;
	if (rc)
		*nheld = 0;
	pthread_mutex_unlock(&o->lock);
	return rc;
}

static void ep_leave(cli_osc *o, const int *held, size_t nheld)
{
	pthread_mutex_lock(&o->lock);
	for (size_t i = 0; i < nheld; i++)
		o->eps[held[i]].users--;
	pthread_mutex_unlock(&o->lock);
}

/* Run the pieces not yet done, in waves (see the deadlock rule in osc.h),
 * until each has a final result in p->rc.  Pieces are reordered. */
static int run_waves(cli_osc *o, const pfs_rpc_tag *tag, piece *ps, size_t n, uint64_t t0)
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
		uint64_t now = pfs_clock_ms(), wake = UINT64_MAX;
		size_t k = 0;
		int last_ep = -1;

		/* Sorted by endpoint: the first pending piece of each endpoint,
		 * in ascending order.  An endpoint whose piece is backing off
		 * gets nothing in this wave. */
		for (size_t i = 0; i < n; i++) {
			piece *p = &ps[i];

			if (p->done || p->ep == last_ep)
				continue;
			last_ep = p->ep;
			if (p->not_before > now) {
				if (p->not_before < wake)
					wake = p->not_before;
				continue;
			}
			p->done = 1;
			left--;
			p->rc = piece_start(o, tag, p, &calls[k]);
			ep_note(o, p);
			if (p->rc == 0) {
				idx[k++] = i;
			} else if (piece_again(o, p, t0)) {
				p->done = 0;
				left++;
			}
		}
		for (size_t j = 0; j < k; j++) {
			piece *p = &ps[idx[j]];

			p->rc = piece_finish(p, calls[j]);
			ep_note(o, p);
			if (piece_again(o, p, t0)) {
				p->done = 0;
				left++;
			}
		}
		if (k > 0) {
			pthread_mutex_lock(&o->lock);
			o->waves++;
			o->pieces += k;
			pthread_mutex_unlock(&o->lock);
		} else if (wake != UINT64_MAX && wake > (now = pfs_clock_ms())) {
			/* Everything left is backing off; nothing is held. */
			usleep((useconds_t)(wake - now) * 1000);
		}
	}
	free(calls);
	free(idx);
	return 0;
}

/* Run every piece.  Pieces that failed in transport are run once more if a
 * fresh OST list from the MDS moved their OST to another address (every
 * piece is idempotent).  Failures that remain in transport become -EIO:
 * the application sees a file-system error, not a network one.  Returns 0
 * or the first error. */
static int run_pieces_in(cli_osc *o, const pfs_rpc_tag *tag, piece *ps, size_t n,
			 uint64_t t0);

static int run_pieces(cli_osc *o, const pfs_rpc_tag *tag, piece *ps, size_t n)
{
	uint64_t t0 = pfs_clock_ms();
	size_t nheld;
	int *held;
	int rc;

	for (size_t i = 0; i < n; i++) {
		rc = resolve(o, tag->job, &ps[i]);
		if (rc)
			return rc;
	}
	/* PADLL's data classes (client/mdqos.h): one token of the job's
	 * (job, class) bucket per call, before the call holds anything. */
	if (n)
		cli_mdqos_wait(cli_mdc_mdqos(o->mdc), tag->job,
			       ps[0].op == PFS_OP_OSS_WRITEV ? PFS_OP_OSS_WRITE : ps[0].op);
	held = malloc(n * sizeof(*held));
	if (!held)
		return -ENOMEM;
	qsort(ps, n, sizeof(*ps), cmp_ep);
	rc = ep_enter(o, ps, n, held, &nheld);
	if (rc == 0) {
		rc = run_pieces_in(o, tag, ps, n, t0);
		ep_leave(o, held, nheld);
	}
	free(held);
	return pfs_rpc_fs_err(rc); /* never a network errno to the application */
}

/* run_pieces once admitted. */
static int run_pieces_in(cli_osc *o, const pfs_rpc_tag *tag, piece *ps, size_t n,
			 uint64_t t0)
{
	int rc = 0, again = 0;

	rc = run_waves(o, tag, ps, n, t0);
	if (rc)
		return rc;
	for (size_t i = 0; i < n && !again; i++)
		again = transport_err(ps[i].rc);
	if (again) {
		pthread_mutex_lock(&o->refresh_lock);
		rc = refresh(o, tag->job);
		pthread_mutex_unlock(&o->refresh_lock);
		for (size_t i = 0; i < n && rc == 0; i++) {
			int old = ps[i].ep;

			if (!transport_err(ps[i].rc) || ost_lookup(o, &ps[i]) < 0)
				continue;
			ps[i].ep = ost_lookup(o, &ps[i]);
			if (ps[i].ep != old) {
				pfs_log(PFS_LOG_NOTICE, "osc: OST %u moved; resending", ps[i].ost);
				ps[i].done = 0;
				ps[i].got = 0;
				ps[i].attempt_start = 0;
				ps[i].busy_n = 0;
				ps[i].not_before = 0;
			}
		}
		if (rc == 0 && (rc = run_waves(o, tag, ps, n, t0)))
			return rc;
	}
	rc = 0;
	for (size_t i = 0; i < n; i++) {
		if (transport_err(ps[i].rc)) {
			pfs_log(PFS_LOG_ERR, "osc: OST %u %s failed: %s", ps[i].ost,
				pfs_op_name(ps[i].op), pfs_strerror(ps[i].rc));
			ps[i].rc = -EIO;
		}
		if (ps[i].rc == -ESTALE) {
			/* The OSS destroyed the object (oss/store.h): this layout
			 * is stale, e.g. the open was lost with the lease.  The
			 * application gets a file-system error. */
			pfs_log(PFS_LOG_WARNING, "osc: OST %u object %llu was destroyed: %s refused",
				ps[i].ost, (unsigned long long)ps[i].object,
				pfs_op_name(ps[i].op));
			ps[i].rc = -EIO;
		}
		if (rc == 0)
			rc = ps[i].rc;
	}
	return rc;
}

static void piece_init(piece *p, uint16_t op, const pfs_layout *l, const cli_caps *caps,
		       const pfs_extent *e)
{
	memset(p, 0, sizeof(*p));
	p->op = op;
	p->pipe_fd = -1;
	p->ost = l->stripe[e->idx].ost;
	p->object = l->stripe[e->idx].object;
	p->cap = cli_caps_find(caps, p->ost, p->object);
	p->obj_off = e->obj_off;
	p->len = e->len;
	p->ext = *e;
}

/* Build the pieces of a read or write of [off, off+len). */
static int io_pieces(const pfs_layout *l, const cli_caps *caps, uint16_t op, uint64_t off,
		     size_t len, void *rbuf, const void *wbuf, piece **out, size_t *nout)
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
		piece_init(&ps[i], op, l, caps, &e[i]);
		if (rbuf)
			ps[i].rbuf = (char *)rbuf + e[i].buf_off;
		if (wbuf)
			ps[i].bulk = (const char *)wbuf + e[i].buf_off;
	}
	free(e);
	*out = ps;
	*nout = n;
	return 0;
}

int cli_osc_read(cli_osc *o, const pfs_rpc_tag *tag, const pfs_layout *l, uint64_t file_size,
		 uint64_t off, size_t len, void *buf, size_t *got)
{
	return cli_osc_read_caps(o, tag, l, NULL, file_size, off, len, buf, got);
}

int cli_osc_read_caps(cli_osc *o, const pfs_rpc_tag *tag, const pfs_layout *l,
		      const cli_caps *caps, uint64_t file_size, uint64_t off, size_t len,
		      void *buf, size_t *got)
{
	piece *ps = NULL;
	size_t n = 0;
	int rc;

	*got = 0;
	len = cli_osc_clip(off, len, file_size);
	if (len == 0)
		return 0;
	rc = io_pieces(l, caps, PFS_OP_OSS_READ, off, len, buf, NULL, &ps, &n);
	if (rc)
		return rc;
	rc = run_pieces(o, tag, ps, n);
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

/* Write n zero bytes into a READ pipe (a hole; short objects). */
static int pipe_put_zeros(const cli_osc_pipe *pp, size_t n)
{
	return pipe_put(pp->w, NULL, n);
}

int cli_osc_read_pipe_caps(cli_osc *o, const pfs_rpc_tag *tag, const pfs_layout *l,
			   const cli_caps *caps, uint64_t file_size, uint64_t off, size_t len,
			   const cli_osc_pipe *pp, size_t *got)
{
	pfs_extent e;
	piece p;
	int rc, off_now;

	*got = 0;
	len = cli_osc_clip(off, len, file_size);
	if (len == 0)
		return 0;
	pthread_mutex_lock(&o->lock);
	off_now = o->read_pipe_off;
	pthread_mutex_unlock(&o->lock);
	if (off_now || len > PFS_MAX_IO || len > pp->cap ||
	    cli_osc_plan(l, off, len, PFS_MAX_IO, &e, 1) != 1)
		goto unfit;
	piece_init(&p, PFS_OP_OSS_READ, l, caps, &e);
	p.rpipe = pp;
	rc = run_pieces(o, tag, &p, 1);
	if (rc == -EXDEV)
		goto unfit; /* nothing is in the pipe */
	if (rc == -ENOENT) {
		rc = 0; /* a missing object is a hole */
		p.got = 0;
	}
	if (rc == 0 && p.got < len)
		rc = pipe_put_zeros(pp, len - p.got);
	if (rc) {
		pipe_drain(pp->r);
		return rc;
	}
	pthread_mutex_lock(&o->lock);
	if (p.piped)
		o->read_piped++;
	if (p.unpiped)
		o->read_pipe_off = 1; /* its MAC covers READ data: memory from now on */
	pthread_mutex_unlock(&o->lock);
	*got = len;
	return 0;
unfit:
	pthread_mutex_lock(&o->lock);
	o->read_pipe_fallbacks++;
	pthread_mutex_unlock(&o->lock);
	return -EXDEV;
}

int cli_osc_write(cli_osc *o, const pfs_rpc_tag *tag, const pfs_layout *l, uint64_t off,
		  size_t len, const void *buf)
{
	return cli_osc_write_caps(o, tag, l, NULL, off, len, buf);
}

int cli_osc_write_caps(cli_osc *o, const pfs_rpc_tag *tag, const pfs_layout *l,
		       const cli_caps *caps, uint64_t off, size_t len, const void *buf)
{
	piece *ps = NULL;
	size_t n = 0;
	int rc;

	if (len == 0)
		return 0;
	rc = io_pieces(l, caps, PFS_OP_OSS_WRITE, off, len, NULL, buf, &ps, &n);
	if (rc == 0)
		rc = run_pieces(o, tag, ps, n);
	free(ps);
	return rc;
}

int cli_osc_write_pipe(cli_osc *o, const pfs_rpc_tag *tag, const pfs_layout *l, uint64_t off,
		       size_t len, int pipe_fd)
{
	return cli_osc_write_pipe_caps(o, tag, l, NULL, off, len, pipe_fd);
}

int cli_osc_write_pipe_caps(cli_osc *o, const pfs_rpc_tag *tag, const pfs_layout *l,
			    const cli_caps *caps, uint64_t off, size_t len, int pipe_fd)
{
	pfs_extent e;
	piece p;
	int rc;

	if (len == 0 || len > PFS_MAX_IO || pfs_layout_map(l, off, len, &e, 1) != 1)
		return -EXDEV;
	piece_init(&p, PFS_OP_OSS_WRITE, l, caps, &e);
	p.pipe_fd = pipe_fd;
	if (resolve(o, tag->job, &p))
		return -EXDEV;
	rc = run_pieces(o, tag, &p, 1);
	if (p.tee_failed) {
		pthread_mutex_lock(&o->lock);
		o->tee_fallbacks++;
		pthread_mutex_unlock(&o->lock);
		return -EXDEV;
	}
	/* -EXDEV means "use the memory path" to the caller: not an OSS's. */
	return rc == -EXDEV ? -EIO : rc;
}

/* Plain WRITEs of v[0..n). */
static int writev_plain(cli_osc *o, const pfs_rpc_tag *tag, const pfs_layout *l,
			const cli_caps *caps, const cli_osc_iov *v, size_t n)
{
	int rc = 0;

	for (size_t i = 0; i < n; i++) {
		int r = cli_osc_write_caps(o, tag, l, caps, v[i].off, v[i].len, v[i].buf);

		if (r && !rc)
			rc = r;
	}
	return rc;
}

/* The extents' buffers are sent as they are, one scatter list per request
 * (pfs_rpc_start_iov): no copy of the data, one allocation for the
 * request tables. */
int cli_osc_writev_caps(cli_osc *o, const pfs_rpc_tag *tag, const pfs_layout *l,
			const cli_caps *caps, const cli_osc_iov *v, size_t n)
{
	size_t np = (n + PFS_WRITEV_MAX - 1) / PFS_WRITEV_MAX, total = 0;
	uint64_t *voff;
	uint32_t *vlen;
	struct iovec *bv;
	void *mem = NULL;
	piece *ps = NULL;
	pfs_extent e, first;
	int rc;

	if (n <= 1)
		return n ? cli_osc_write_caps(o, tag, l, caps, v[0].off, v[0].len, v[0].buf) : 0;
	for (size_t i = 0; i < n; i++) {
		if (!v[i].len || pfs_layout_map(l, v[i].off, v[i].len, &e, 1) != 1 ||
		    (i && (e.idx != first.idx || v[i].off < v[i - 1].off + v[i - 1].len)))
			return writev_plain(o, tag, l, caps, v, n);
		if (i == 0)
			first = e;
		total += v[i].len;
	}
	if (total > PFS_MAX_IO)
		return writev_plain(o, tag, l, caps, v, n);
	/* one block: scatter list, offsets, lengths (largest alignment first) */
	mem = malloc(n * (sizeof(*bv) + sizeof(*voff) + sizeof(*vlen)));
	ps = calloc(np, sizeof(*ps));
	if (!mem || !ps) {
		rc = writev_plain(o, tag, l, caps, v, n);
		goto out;
	}
	bv = mem;
	voff = (uint64_t *)(bv + n);
	vlen = (uint32_t *)(voff + n);
	for (size_t i = 0; i < n; i++) {
		pfs_layout_map(l, v[i].off, v[i].len, &e, 1);
		voff[i] = e.obj_off;
		vlen[i] = (uint32_t)v[i].len;
		bv[i] = (struct iovec){ (void *)v[i].buf, v[i].len };
	}
	for (size_t k = 0; k < np; k++) {
		size_t i0 = k * PFS_WRITEV_MAX, m = n - i0 < PFS_WRITEV_MAX ? n - i0 : PFS_WRITEV_MAX;
		uint64_t bytes = 0;

		for (size_t i = i0; i < i0 + m; i++)
			bytes += vlen[i];
		first.obj_off = voff[i0];
		first.len = bytes;
		piece_init(&ps[k], PFS_OP_OSS_WRITEV, l, caps, &first);
		ps[k].voff = voff + i0;
		ps[k].vlen = vlen + i0;
		ps[k].nvec = (uint32_t)m;
		ps[k].bv = bv + i0;
	}
	rc = run_pieces(o, tag, ps, np);
	if (rc == -EOPNOTSUPP || rc == -EACCES) {
		/* an OSS from before WRITEV refuses it (role table, decoder) */
		pfs_log(PFS_LOG_DEBUG, "osc: OST %u: WRITEV refused (%s): plain WRITEs",
			ps[0].ost, pfs_strerror(rc));
		rc = writev_plain(o, tag, l, caps, v, n);
	}
out:
	free(ps);
	free(mem);
	return rc;
}

/* One piece per object with op; len = per-object size for TRUNCATE. */
static int per_object(cli_osc *o, const pfs_rpc_tag *tag, const pfs_layout *l,
		      const cli_caps *caps, uint16_t op, uint64_t size)
{
	piece *ps;
	int rc;

	if (l->stripe_count == 0)
		return 0;
	ps = calloc(l->stripe_count, sizeof(*ps));
	if (!ps)
		return -ENOMEM;
	for (uint32_t i = 0; i < l->stripe_count; i++) {
		pfs_extent e = { .idx = i, .len = pfs_layout_object_size(l, size, i) };

		piece_init(&ps[i], op, l, caps, &e);
	}
	rc = run_pieces(o, tag, ps, l->stripe_count);
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

int cli_osc_truncate(cli_osc *o, const pfs_rpc_tag *tag, const pfs_layout *l, uint64_t size)
{
	return per_object(o, tag, l, NULL, PFS_OP_OSS_TRUNCATE, size);
}

int cli_osc_truncate_caps(cli_osc *o, const pfs_rpc_tag *tag, const pfs_layout *l,
			  const cli_caps *caps, uint64_t size)
{
	return per_object(o, tag, l, caps, PFS_OP_OSS_TRUNCATE, size);
}

int cli_osc_sync(cli_osc *o, const pfs_rpc_tag *tag, const pfs_layout *l)
{
	return per_object(o, tag, l, NULL, PFS_OP_OSS_SYNC, 0);
}

int cli_osc_sync_caps(cli_osc *o, const pfs_rpc_tag *tag, const pfs_layout *l,
		      const cli_caps *caps)
{
	return per_object(o, tag, l, caps, PFS_OP_OSS_SYNC, 0);
}

/* OSS_STAT of every object of l, in parallel: *blocks = their blocks
 * together, and (sizes non-NULL) sizes[i] = object i's size; a missing
 * object (never written) is 0 of both. */
static int stat_objects(cli_osc *o, const pfs_rpc_tag *tag, const pfs_layout *l,
			const cli_caps *caps, uint64_t *sizes, uint64_t *blocks)
{
	uint64_t sum = 0;
	piece *ps;
	int rc = 0;

	if (l->stripe_count == 0) {
		*blocks = 0;
		return 0;
	}
	ps = calloc(l->stripe_count, sizeof(*ps));
	if (!ps)
		return -ENOMEM;
	for (uint32_t i = 0; i < l->stripe_count; i++) {
		pfs_extent e = { .idx = i };

		piece_init(&ps[i], PFS_OP_OSS_STAT, l, caps, &e);
	}
	(void)run_pieces(o, tag, ps, l->stripe_count);
	for (uint32_t i = 0; i < l->stripe_count && rc == 0; i++) {
		/* run_pieces may reorder them (by endpoint): by extent */
		if (sizes && ps[i].ext.idx < l->stripe_count)
			sizes[ps[i].ext.idx] = ps[i].rc == 0 ? ps[i].osize : 0;
		if (ps[i].rc == 0)
			sum += ps[i].blocks;
		else if (ps[i].rc != -ENOENT) /* not written yet: no block */
			rc = ps[i].rc;
	}
	free(ps);
	if (rc == 0)
		*blocks = sum;
	return rc;
}

int cli_osc_stat_caps(cli_osc *o, const pfs_rpc_tag *tag, const pfs_layout *l,
		      const cli_caps *caps, uint64_t *blocks)
{
	return stat_objects(o, tag, l, caps, NULL, blocks);
}

int cli_osc_glimpse_caps(cli_osc *o, const pfs_rpc_tag *tag, const pfs_layout *l,
			 const cli_caps *caps, uint64_t *size, uint64_t *blocks)
{
	uint64_t sizes[PFS_MAX_STRIPES], b;
	int rc;

	if (l->stripe_count > PFS_MAX_STRIPES)
		return -EINVAL;
	rc = stat_objects(o, tag, l, caps, sizes, &b);
	if (rc)
		return rc;
	*size = l->stripe_count ? cli_osc_size_from_objects(l, sizes) : 0;
	if (blocks)
		*blocks = b;
	return 0;
}

uint64_t cli_osc_size_from_objects(const pfs_layout *l, const uint64_t *sizes)
{
	uint64_t size = 0;

	for (uint32_t i = 0; i < l->stripe_count && i < PFS_MAX_STRIPES; i++) {
		uint64_t end;

		if (sizes[i] == 0)
			continue;
		end = pfs_layout_file_offset(l, i, sizes[i] - 1) + 1;
		if (end > size)
			size = end;
	}
	return size;
}

/* PFS_OP_OSS_GRANT to the OSS of OST ost (client/wcache.h), within this
 * client's credit for that OSS like any of its requests.  Never resent:
 * a give-back executed twice would make the OSS hold less than we think. */
int cli_osc_grant(cli_osc *o, const pfs_rpc_tag *tag, uint32_t ost, uint64_t want,
		  uint64_t giveback, uint64_t *granted)
{
	pfs_rpc_reply rep = { 0 };
	pfs_rpc_tag t = *tag;
	piece p;
	pfs_wbuf w;
	pfs_rbuf r;
	uint64_t sent;
	int rc;

	memset(&p, 0, sizeof(p));
	p.ost = ost;
	rc = resolve(o, tag->job, &p);
	if (rc)
		return rc;
	pfs_wbuf_init(&w);
	pfs_wbuf_u32(&w, ost);
	pfs_wbuf_u64(&w, want);
	pfs_wbuf_u64(&w, giveback);
	rc = pfs_wbuf_error(&w);
	if (rc) {
		pfs_wbuf_free(&w);
		return rc;
	}
	pfs_rpc_reply_init(&rep);
	t.credit = cli_credit_acquire(p.credit, tag->job);
	sent = pfs_clock_us();
	rc = pfs_rpc_call_tag(p.pool, PFS_OP_OSS_GRANT, &t, PFS_RPC_NO_RESEND, w.data, w.len,
			      NULL, 0, &rep);
	cli_credit_done(p.credit, tag->job, rep.hdr.credit, rep.hdr.opcode ? sent : 0);
	if (rc == 0) {
		pfs_rbuf_init(&r, rep.data, rep.len);
		*granted = pfs_rbuf_u64(&r);
		rc = pfs_rbuf_done(&r);
	}
	pfs_rpc_reply_free(&rep);
	pfs_wbuf_free(&w);
	return rc;
}
