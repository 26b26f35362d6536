/* server.c — OSS data port, request decoding and execution, lifetime of
 * the OST queue heads, QoS engine and both ports (see server.h; the
 * control port's requests are in ctl.c).
 *
 * Authorization: on both ports an opcode the peer's role may not send
 * (common/optab.h) is refused with -EACCES before decoding, logged once
 * per connection.  With a capability key every object request (READ,
 * WRITE, TRUNCATE, PUNCH, STAT, SYNC) must carry a capability for its
 * (ost, object) and the frame's client_id with the right it needs
 * (common/capa.h): one MAC per request, nothing cached.  The capability
 * follows the fixed request fields (before a write's bulk); a request
 * without one is still decoded (today's wire) and refused only when this
 * OSS checks capabilities. */
#include "oss/server.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/auth.h"
#include "common/buf.h"
#include "common/capa.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/msg.h"
#include "common/optab.h"
#include "common/server.h"
#include "oss/bufpool.h"
#include "oss/ctl.h"
#include "oss/grant.h"
#include "oss/nrs_tbf.h"
#include "oss/pipepool.h"
#include "oss/req.h"

struct oss_server {
	pfs_server *data, *ctl;
	oss_ostq **q;            /* [n_osts] */
	oss_grant **grant;       /* [n_osts]: write grants (grant.h) */
	size_t n_osts;
	oss_sched_budget *budget;
	oss_qos *qos;
	oss_nrs_admin *admin;
	oss_blkio *blkio;        /* non-NULL only with blkio enforcement */
	oss_bufpool *rbufs;      /* READ reply buffers (no mmap/munmap per READ) */
	oss_pipepool *pipes;     /* spliced READs; NULL: every READ is buffered */
	int splice_writes;       /* WRITE data spliced from the socket (wbulk) */
	atomic_uint wpipes;      /* pipes held by spliced WRITEs now */
	atomic_uint_fast64_t wspliced; /* WRITEs received spliced */
	int inline_reads;        /* small READs may be served on the loop */
	atomic_uint_fast64_t inline_until; /* µs (oss_sched_now_us): none before (a slow one) */
	atomic_uint_fast64_t inlined, inline_slow; /* served on the loop; of them slow */
	pfs_server_bulk wbulk;   /* the data port's hooks for them */
	pfs_optab_log refusals;  /* role and capability refusals, once per peer */
	int have_capa;           /* capa_key holds K_cap: check capabilities */
	uint8_t capa_key[PFS_CAPA_KEY_LEN];
};

/* A decoded data request, from the connection thread to an I/O thread. */
typedef struct oss_io {
	oss_req req;             /* what the scheduler sees; first member */
	pfs_sconn *conn;         /* referenced while queued */
	pfs_hdr hdr;
	uint8_t *payload;        /* owned: the received frame */
	oss_store *st;
	uint64_t obj, off, len;  /* len: read/write/punch length, truncate size */
	const uint8_t *data;     /* write bulk, inside payload */
	uint32_t nvec;           /* WRITEV: extents, their table inside payload */
	const uint8_t *vec;
	oss_pipe wpipe;          /* a WRITE's spliced data (len bytes), or -1 */
} oss_io;

int oss_server_lookup(const oss_server *s, uint32_t ost, oss_ostq **out)
{
	int unknown = 0;

	for (size_t i = 0; i < s->n_osts; i++) {
		int64_t x = oss_ostq_index(s->q[i]);
		if (x == (int64_t)ost) {
			*out = s->q[i];
			return 0;
		}
		if (x == OSS_INDEX_NONE)
			unknown = 1;
	}
	return unknown ? -EAGAIN : -ENODEV;
}

/* Decode a data request into io (oss/req.c, the one decoder) and check
 * its capability; *q receives its OST.  bulk: a WRITE's data bytes left
 * in a pipe (not in p).  0 or the errno to reply. */
static int data_decode(oss_server *s, const pfs_hdr *h, const uint8_t *p, size_t bulk,
		       oss_io *io, oss_ostq **q)
{
	oss_req_msg m;
	int rc = oss_req_decode_split(h->opcode, p, h->payload_len - bulk, bulk, &m);

	if (rc)
		return rc;
	io->obj = m.obj;
	io->off = m.off;
	io->len = m.len;
	io->data = m.data;
	io->nvec = m.nvec;
	io->vec = m.vec;
	if (h->opcode == PFS_OP_OSS_READ || h->opcode == PFS_OP_OSS_WRITE ||
	    h->opcode == PFS_OP_OSS_WRITEV)
		io->req.bytes = m.len;
	if (s->have_capa && h->opcode != PFS_OP_OSS_STATFS) {
		rc = m.has_cap ? pfs_capa_check(&m.cap, s->capa_key, m.ost, m.obj, h->client_id,
						m.need, (uint64_t)time(NULL))
			       : -EACCES;
		if (rc)
			return rc;
	}
	io->req.ost = m.ost;
	rc = oss_server_lookup(s, m.ost, q);
	if (!rc)
		io->st = oss_ostq_store(*q);
	return rc;
}

/* ---- spliced WRITE data (common/server.h pfs_server_bulk) ---- */

/* WRITEs shorter than this are received into memory, as READs shorter
 * than OSS_SPLICE_MIN are buffered (below). */
#define OSS_SPLICE_WRITE_MIN (32u << 10)
/* Pipes spliced WRITEs may hold at once (each two descriptors and up to
 * 1 MiB of pages while its request is queued); past it WRITEs are
 * received into memory. */
#define OSS_SPLICE_WRITE_PIPES 256u

/* The data port's split(): a WRITE's data from OSS_SPLICE_WRITE_MIN bytes
 * on, when a pipe of the pool holds it. */
static size_t wbulk_split(void *ctx, const pfs_hdr *h, const uint8_t *head)
{
	oss_server *s = ctx;
	uint32_t n;

	if (h->opcode != PFS_OP_OSS_WRITE || !s->splice_writes)
		return 0;
	n = oss_req_write_bulk(h->payload_len, head);
	return n >= OSS_SPLICE_WRITE_MIN && n <= oss_pipepool_size(s->pipes) ? n : 0;
}

static int wbulk_get(void *ctx, int fd[2])
{
	oss_server *s = ctx;
	oss_pipe pp;
	int rc;

	if (atomic_fetch_add(&s->wpipes, 1) >= OSS_SPLICE_WRITE_PIPES) {
		atomic_fetch_sub(&s->wpipes, 1);
		return -EBUSY;
	}
	rc = oss_pipepool_get(s->pipes, &pp);
	if (rc) {
		atomic_fetch_sub(&s->wpipes, 1);
		return rc;
	}
	fd[0] = pp.fd[0];
	fd[1] = pp.fd[1];
	return 0;
}

static void wbulk_put(void *ctx, int fd[2], int empty)
{
	oss_server *s = ctx;
	oss_pipe pp = { { fd[0], fd[1] } };

	oss_pipepool_put(s->pipes, &pp, empty);
	atomic_fetch_sub(&s->wpipes, 1);
	fd[0] = fd[1] = -1;
}

static void io_free(oss_server *s, oss_io *io)
{
	if (io->wpipe.fd[0] >= 0) /* not written: what is left is dropped */
		wbulk_put(s, io->wpipe.fd, 0);
	free(io->payload);
	free(io);
}

/* Little-endian v in n bytes at out + pos (the wire byte order, as in
 * buf.h); returns the new position.  Small fixed replies need no wbuf. */
static size_t put_le(uint8_t *out, size_t pos, uint64_t v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		out[pos + i] = (uint8_t)(v >> (8 * i));
	return pos + n;
}

static void reply_err(pfs_sconn *c, const pfs_hdr *h, int rc, uint32_t credit);

/* The grants of q's OST. */
static oss_grant *grant_of(const oss_server *s, const oss_ostq *q)
{
	for (size_t i = 0; i < s->n_osts; i++)
		if (s->q[i] == q)
			return s->grant[i];
	return NULL;
}

static int store_free(void *arg, uint64_t *free_bytes)
{
	uint64_t total, objects;

	return oss_store_statfs(arg, &total, free_bytes, &objects);
}

/* PFS_OP_OSS_GRANT (grant.h), on the server's loop: no store I/O but a
 * statvfs.  Silent clients' grants are taken back first. */
static void grant_handler(oss_server *s, pfs_sconn *c, const pfs_hdr *h, const uint8_t *p)
{
	uint64_t want, back, total = 0, fr = 0, objects, got = 0, now = pfs_clock_ms();
	oss_ostq *q = NULL;
	uint8_t out[8];
	oss_grant *g;
	pfs_rbuf r;
	uint32_t ost;
	int rc;

	pfs_rbuf_init(&r, p, h->payload_len);
	ost = pfs_rbuf_u32(&r);
	want = pfs_rbuf_u64(&r);
	back = pfs_rbuf_u64(&r);
	rc = pfs_rbuf_done(&r);
	if (rc == 0)
		rc = oss_server_lookup(s, ost, &q);
	g = rc == 0 ? grant_of(s, q) : NULL;
	if (rc == 0 && !g)
		rc = -ENODEV;
	if (rc == 0) {
		oss_grant_expire(g, now, OSS_GRANT_TIMEOUT_MS_DEFAULT);
		rc = oss_store_statfs(oss_ostq_store(q), &total, &fr, &objects);
	}
	if (rc == 0)
		rc = oss_grant_request(g, h->client_id, want, back, total, fr, now, &got);
	if (rc) {
		reply_err(c, h, rc, 0);
		return;
	}
	pfs_sconn_reply(c, h, 0, out, put_le(out, 0, got, 8), NULL, 0);
}

/* READs shorter than this are buffered: for a few pages, two copies cost
 * less than the splice's extra system calls (pipe in, header, pipe out). */
#define OSS_SPLICE_MIN (32u << 10)

/* A READ spliced from the object's pages into a pipe of the pool, for
 * pfs_sconn_reply_pipe to move into the socket: no copy through this
 * process (the buffered path copies the bytes out of the page cache and
 * again into the socket).  1: *pp holds *got bytes, or *rc is the error
 * to reply; 0: take the buffered path (no pipe, a short READ, a session
 * whose MAC covers the bulk (integrity=full: the bytes are needed here
 * anyway), a store that reads with O_DIRECT, a pipe that could not take
 * the length). */
static int read_spliced(oss_server *s, oss_io *io, oss_pipe *pp, size_t *got, int *rc)
{
	if (!s->pipes || io->len < OSS_SPLICE_MIN || io->len > oss_pipepool_size(s->pipes) ||
	    pfs_sconn_reply_covers(io->conn, &io->hdr, 0, io->len) ||
	    oss_pipepool_get(s->pipes, pp))
		return 0;
	*rc = oss_store_splice_read(io->st, io->obj, io->off, pp->fd[1], io->len, got);
	if (*rc == -EOPNOTSUPP || *rc == -EAGAIN) {
		oss_pipepool_put(s->pipes, pp, *got == 0); /* not empty: closed */
		*got = 0;
		*rc = 0;
		return 0;
	}
	return 1;
}

/* PFS_OP_OSS_WRITEV: the writer's grant for every extent (as the client
 * counts it), then each run of touching extents with one write. */
static int writev_exec(oss_server *s, oss_ostq *q, oss_io *io)
{
	oss_req_msg m = { .nvec = io->nvec, .vec = io->vec };
	uint64_t cost = 0, off, roff = 0;
	size_t at = 0, rlen = 0;
	uint32_t len;
	int rc;

	for (uint32_t i = 0; i < io->nvec; i++) {
		oss_req_vec(&m, i, &off, &len);
		cost += PFS_GRANT_COST(len);
	}
	rc = oss_grant_consume(grant_of(s, q), io->hdr.client_id, cost, pfs_clock_ms(),
			       store_free, io->st);
	for (uint32_t i = 0; rc == 0 && i <= io->nvec; i++) {
		if (i < io->nvec) {
			oss_req_vec(&m, i, &off, &len);
			if (rlen && off == roff + rlen) {
				rlen += len;
				continue;
			}
		}
		if (rlen)
			rc = oss_store_write(io->st, io->obj, roff, io->data + at, rlen);
		at += rlen;
		roff = off;
		rlen = len;
	}
	return rc;
}

/* Execute one request on the store and reply; runs on an I/O thread of
 * the request's OST, which hands it over here (ostq.h). */
static void io_exec(void *ctx, oss_ostq *q, oss_req *r)
{
	oss_server *s = ctx;
	oss_io *io = (oss_io *)r;
	pfs_sconn *conn = io->conn;
	uint8_t out[24];
	void *rbuf = NULL;
	oss_pipe pp = { { -1, -1 } };
	size_t got = 0, olen = 0;
	uint64_t a = 0, b = 0, c = 0;
	uint32_t credit;
	int rc = 0;

	if (s->blkio) {
		/* The job's cgroup (or back to ours if it has no limit); no
		 * system call when the thread is already there. */
		rc = oss_blkio_enter(s->blkio, r->job);
		if (rc)
			pfs_log(PFS_LOG_DEBUG, "oss: blkio enter %s: %s", r->job, pfs_strerror(rc));
		rc = 0;
	}
	switch (io->hdr.opcode) {
	case PFS_OP_OSS_READ:
		if (read_spliced(s, io, &pp, &got, &rc))
			break;
		/* Aligned, so O_DIRECT can read straight into it. */
		if (io->len && !(rbuf = oss_bufpool_get(s->rbufs, io->len))) {
			rc = -ENOMEM;
			break;
		}
		rc = oss_store_read(io->st, io->obj, io->off, rbuf, io->len, &got);
		break;
	case PFS_OP_OSS_WRITE:
		/* the writer's grant first; space others were granted is theirs */
		rc = oss_grant_write(grant_of(s, q), io->hdr.client_id, io->len, pfs_clock_ms(),
				     store_free, io->st);
		if (rc == 0 && io->wpipe.fd[0] >= 0)
			rc = oss_store_splice_write(io->st, io->obj, io->off, io->wpipe.fd[0],
						    io->len);
		else if (rc == 0)
			rc = oss_store_write(io->st, io->obj, io->off, io->data, io->len);
		if (io->wpipe.fd[0] >= 0) /* before the reply: empty when all went in */
			wbulk_put(s, io->wpipe.fd, rc == 0);
		olen = put_le(out, 0, io->len, 4);
		break;
	case PFS_OP_OSS_WRITEV:
		rc = writev_exec(s, q, io);
		olen = put_le(out, 0, io->len, 4);
		break;
	case PFS_OP_OSS_TRUNCATE:
		rc = oss_store_truncate(io->st, io->obj, io->len);
		break;
	case PFS_OP_OSS_PUNCH:
		rc = oss_store_punch(io->st, io->obj, io->off, io->len);
		break;
	case PFS_OP_OSS_SYNC:
		rc = oss_store_sync(io->st, io->obj);
		break;
	case PFS_OP_OSS_STAT:
		rc = oss_store_stat(io->st, io->obj, &a, &b);
		olen = put_le(out, put_le(out, 0, a, 8), b, 8);
		break;
	case PFS_OP_OSS_STATFS:
		rc = oss_store_statfs(io->st, &a, &b, &c);
		olen = put_le(out, put_le(out, put_le(out, 0, a, 8), b, 8), c, 8);
		break;
	default:
		rc = -EOPNOTSUPP; /* data_decode let it through: cannot happen */
		break;
	}
	if (rc)
		/* a destroyed object's I/O (a stale layout) is worth a line */
		pfs_log(rc == -ESTALE ? PFS_LOG_NOTICE : PFS_LOG_DEBUG,
			"oss: %s of object %llu from %s: %s", pfs_op_name(io->hdr.opcode),
			(unsigned long long)io->obj, pfs_sconn_peer(conn), pfs_strerror(rc));
	/* RCC: the reply leaves now (Alg. 1 ServerSendIOReply). */
	credit = oss_sched_done(oss_ostq_sched(q), r);
	if (pp.fd[0] >= 0) {
		/* the reply empties the pipe, whatever happens */
		pfs_sconn_reply_pipe(conn, &io->hdr, rc, credit, out, olen, pp.fd[0], got);
		oss_pipepool_put(s->pipes, &pp, 1);
	} else {
		pfs_sconn_reply_credit(conn, &io->hdr, rc, credit, out, olen, rbuf, got);
	}
	oss_bufpool_put(s->rbufs, rbuf, io->len); /* the reply copied what it kept */
	io_free(s, io);
	pfs_sconn_put(conn);
}

static void reply_err(pfs_sconn *c, const pfs_hdr *h, int rc, uint32_t credit)
{
	pfs_log(PFS_LOG_DEBUG, "oss: %s from %s: %s", pfs_op_name(h->opcode),
		pfs_sconn_peer(c), pfs_strerror(rc));
	pfs_sconn_reply_credit(c, h, rc, credit, NULL, 0, NULL, 0);
}

static int oss_server_allowed(oss_server *s, pfs_sconn *c, const pfs_hdr *h)
{
	unsigned role = pfs_sconn_role(c);

	if (pfs_optab_allowed(h->opcode, role))
		return 1;
	pfs_optab_log_refusal(&s->refusals, "oss", pfs_sconn_peer(c), h->opcode, role,
			      "role may not send it");
	return 0;
}

/* Small READs on the loop (inline_reads).  A READ of at most
 * OSS_INLINE_READ_MAX bytes that its OST's scheduler would hand out at
 * once (nothing else queued, no rule holding its job, no emulated device
 * pacing: oss_sched_enqueue_now) is served by the loop that decoded it,
 * through the same io_exec, statistics and RCC credit: no hand-off to an
 * I/O thread and back, which on two vCPUs cost as much as the read
 * (futex wake, a context switch, often the other CPU's cache): +14 % of
 * cold 4 KiB random reads (bench/RESULTS.md "Small reads on the loop").
 * The loop waits for the disk meanwhile, so: only small reads; never with
 * blkio enforcement (io_exec moves its thread into the job's cgroup); and
 * a read that took more than OSS_INLINE_SLOW_US and slept (a slow or busy
 * disk, not a preempted loop) sends every READ to the I/O threads for
 * OSS_INLINE_OFF_US, so a slow disk stalls the I/O threads, not the loop
 * and its other connections. */
#define OSS_INLINE_READ_MAX (64u << 10)
#define OSS_INLINE_SLOW_US 2000u
#define OSS_INLINE_OFF_US 100000u

static int read_here(oss_server *s, const pfs_hdr *h, const oss_io *io)
{
	return s->inline_reads && !s->blkio && h->opcode == PFS_OP_OSS_READ &&
	       io->len <= OSS_INLINE_READ_MAX &&
	       oss_sched_now_us() >= atomic_load_explicit(&s->inline_until,
							   memory_order_relaxed);
}

static void serve_here(oss_server *s, oss_ostq *q, oss_io *io)
{
	uint64_t t0 = oss_sched_now_us(), t1;
	/* slow only because the loop was preempted says nothing of the disk */
	long w0 = pfs_thread_sleeps();

	io_exec(s, q, &io->req); /* answers, frees io, puts the connection */
	t1 = oss_sched_now_us();
	atomic_fetch_add_explicit(&s->inlined, 1, memory_order_relaxed);
	if (t1 - t0 > OSS_INLINE_SLOW_US && pfs_thread_sleeps() > w0) {
		atomic_fetch_add_explicit(&s->inline_slow, 1, memory_order_relaxed);
		atomic_store_explicit(&s->inline_until, t1 + OSS_INLINE_OFF_US,
				      memory_order_relaxed);
	}
}

void oss_server_inline_reads(oss_server *s, uint64_t *served, uint64_t *slow)
{
	*served = atomic_load(&s->inlined);
	*slow = atomic_load(&s->inline_slow);
}

/* A data request, its bulk (a WRITE's data) in pipe fd when bulk is not
 * 0: decoded, checked and queued, or answered at once. */
static void data_request(oss_server *s, pfs_sconn *c, const pfs_hdr *h, uint8_t *payload,
			 int fd[2], size_t bulk)
{
	oss_ostq *q = NULL;
	oss_sched *sched;
	oss_io *io;
	int rc;

	if (h->opcode == PFS_OP_PING && !bulk) {
		pfs_sconn_reply(c, h, 0, payload, h->payload_len, NULL, 0);
		free(payload);
		return;
	}
	io = calloc(1, sizeof(*io));
	if (!io) {
		free(payload);
		if (bulk)
			wbulk_put(s, fd, 0);
		reply_err(c, h, -ENOMEM, 0);
		return;
	}
	/* from here io_free releases the payload and the pipe */
	io->payload = payload;
	io->wpipe.fd[0] = io->wpipe.fd[1] = -1;
	if (bulk) {
		io->wpipe.fd[0] = fd[0];
		io->wpipe.fd[1] = fd[1];
	}
	if (!oss_server_allowed(s, c, h)) {
		io_free(s, io);
		reply_err(c, h, -EACCES, 0);
		return;
	}
	if (h->opcode == PFS_OP_OSS_GRANT && !bulk) {
		grant_handler(s, c, h, payload);
		io_free(s, io);
		return;
	}
	rc = data_decode(s, h, payload, bulk, io, &q);
	if (rc == -EACCES)
		pfs_optab_log_refusal(&s->refusals, "oss", pfs_sconn_peer(c), h->opcode,
				      pfs_sconn_role(c), "no valid capability");
	if (rc) {
		io_free(s, io);
		reply_err(c, h, rc, 0);
		return;
	}
	io->hdr = *h;
	io->conn = c;
	pfs_hdr_jobid(h, io->req.job);
	/* QoS (TBF rules, jobstats) sees a WRITEV as the write it is */
	io->req.opcode = h->opcode == PFS_OP_OSS_WRITEV ? PFS_OP_OSS_WRITE : h->opcode;
	io->req.uid = h->uid;
	io->req.gid = h->gid;
	io->req.client_id = h->client_id;
	io->req.cnr = h->credit;
	sched = oss_ostq_sched(q);
	pfs_sconn_get(c);
	if (read_here(s, h, io)) {
		int now = 0;

		rc = oss_sched_enqueue_now(sched, &io->req, &now);
		if (!rc && now) {
			serve_here(s, q, io);
			return;
		}
	} else {
		rc = oss_sched_enqueue(sched, &io->req);
	}
	if (rc) {
		/* -EBUSY: back off to the smallest window (RCCmin). */
		reply_err(c, h, rc, rc == -EBUSY ? oss_sched_busy_credit(sched) : 0);
		io_free(s, io);
		pfs_sconn_put(c);
	}
}

static void data_handler(void *ctx, pfs_sconn *c, const pfs_hdr *h, uint8_t *payload)
{
	int none[2] = { -1, -1 };

	data_request(ctx, c, h, payload, none, 0);
}

static void data_bulk_handler(void *ctx, pfs_sconn *c, const pfs_hdr *h, uint8_t *payload,
			      int fd[2], size_t bulk)
{
	oss_server *s = ctx;

	atomic_fetch_add_explicit(&s->wspliced, 1, memory_order_relaxed);
	data_request(s, c, h, payload, fd, bulk);
}

void oss_server_write_splices(oss_server *s, uint64_t *received, unsigned *held)
{
	*received = atomic_load(&s->wspliced);
	*held = atomic_load(&s->wpipes);
}

/* ---- control port ---- */

static void ctl_handler(void *ctx, pfs_sconn *c, const pfs_hdr *h, uint8_t *payload)
{
	oss_server *s = ctx;
	pfs_wbuf w;
	int rc;

	if (h->opcode == PFS_OP_PING) {
		pfs_sconn_reply(c, h, 0, payload, h->payload_len, NULL, 0);
		free(payload);
		return;
	}
	if (!oss_server_allowed(s, c, h)) {
		free(payload);
		reply_err(c, h, -EACCES, 0);
		return;
	}
	pfs_wbuf_init(&w);
	rc = oss_ctl_execute(s, h, payload, &w);
	if (rc)
		reply_err(c, h, rc, 0);
	else
		pfs_sconn_reply(c, h, 0, w.data, w.len, NULL, 0);
	pfs_wbuf_free(&w);
	free(payload);
}

/* ---- lifetime ---- */

static int start_osts(oss_server *s, const oss_server_opts *opts, char *err, size_t errlen)
{
	unsigned threads = opts->io_threads ? opts->io_threads : OSS_IO_THREADS_DEFAULT;
	qos_rcc_params rp = { 0 };
	int rc;

	rp.Lmax = opts->rcc_lmax > 0 ? opts->rcc_lmax : OSS_RCC_LMAX_DEFAULT;
	rp.Dlow = threads; /* the paper's default: N, the service threads */
	rp.RCCmin = opts->rcc_min > 0 ? opts->rcc_min : OSS_RCC_MIN_DEFAULT;
	rp.RCCmax = opts->rcc_max > 0 ? opts->rcc_max : OSS_RCC_MAX_DEFAULT;
	for (size_t i = 0; i < s->n_osts; i++) {
		oss_ostq_opts o = { 0 };

		o.store = opts->osts[i];
		o.slot = i;
		o.io_threads = threads;
		o.exec = io_exec;
		o.ctx = s;
		o.sched.cls = opts->sched ? opts->sched : &oss_sched_tbf;
		o.sched.job_max_rpcs = opts->job_max_rpcs ? opts->job_max_rpcs
							  : OSS_JOB_MAX_RPCS_DEFAULT;
		o.sched.job_max_bytes = opts->job_max_bytes ? opts->job_max_bytes
							    : OSS_JOB_MAX_BYTES_DEFAULT;
		o.sched.budget = s->budget;
		o.sched.pace_bps = opts->ost_bps ? opts->ost_bps[i] : 0;
		o.sched.pace_iops = opts->ost_iops ? opts->ost_iops[i] : 0;
		o.sched.rcc = opts->rcc_lmax < 0 ? NULL : &rp;
		rc = oss_ostq_start(&o, &s->q[i], err, errlen);
		if (rc)
			return rc;
	}
	return 0;
}

/* Reply bound of a data-port request for the server core's per-connection
 * budget: a READ may bring a whole bulk, every other reply is a few
 * fields. */
static size_t data_reply_bound(const pfs_hdr *h)
{
	return h->opcode == PFS_OP_OSS_READ ? PFS_HDR_LEN + PFS_MAX_PAYLOAD : PFS_HDR_LEN + 256;
}

int oss_server_start(const oss_server_opts *opts, oss_server **out, char *err,
		     size_t errlen)
{
	oss_server *s = calloc(1, sizeof(*s));
	pfs_server_opts so = { 0 };
	oss_qos_opts qo = { 0 };
	char ebuf[128];
	size_t keep;
	int rc = 0;

	if (!err || !errlen) {
		err = ebuf;
		errlen = sizeof(ebuf);
	}
	if (!s)
		return -ENOMEM;
	pfs_optab_log_init(&s->refusals);
	if (opts->capa_key) {
		memcpy(s->capa_key, opts->capa_key, PFS_CAPA_KEY_LEN);
		s->have_capa = 1;
	} else if (opts->auth && pfs_auth_cap_key(opts->auth, s->capa_key) == 0) {
		s->have_capa = 1;
	}
	if (!opts->n_osts) {
		snprintf(err, errlen, "no OSTs to serve");
		rc = -EINVAL;
		goto fail;
	}
	s->n_osts = opts->n_osts;
	s->q = calloc(s->n_osts, sizeof(*s->q));
	s->grant = calloc(s->n_osts, sizeof(*s->grant));
	for (size_t i = 0; s->grant && i < s->n_osts && rc == 0; i++)
		rc = oss_grant_create(&s->grant[i]);
	if (!s->q || !s->grant || rc ||
	    oss_sched_budget_create(opts->oss_max_rpcs ? opts->oss_max_rpcs : OSS_MAX_RPCS_DEFAULT,
				    opts->oss_max_bytes ? opts->oss_max_bytes
							: OSS_MAX_BYTES_DEFAULT,
				    &s->budget)) {
		snprintf(err, errlen, "out of memory");
		rc = -ENOMEM;
		goto fail;
	}
	/* Idle READ buffers kept: one per I/O thread, at most 32 MiB. */
	keep = s->n_osts * (opts->io_threads ? opts->io_threads : OSS_IO_THREADS_DEFAULT);
	rc = oss_bufpool_create(PFS_MAX_IO, OSS_STORE_ALIGN, keep < 32 ? keep : 32, &s->rbufs);
	if (rc) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	/* Pipes for spliced READs, as many idle: twice the largest READ,
	 * since a pipe holds a page (or a folio's part) per slot and an
	 * unaligned 1 MiB spans 257 pages (fs.pipe-max-size; deploy/
	 * pfs-cluster sets 2 MiB); else 1 MiB, and unaligned whole-MiB READs
	 * are buffered; without pipes every READ is buffered. */
	rc = oss_pipepool_create(2 * PFS_MAX_IO, keep < 32 ? keep : 32, &s->pipes);
	if (rc)
		rc = oss_pipepool_create(PFS_MAX_IO, keep < 32 ? keep : 32, &s->pipes);
	if (rc) {
		pfs_log(PFS_LOG_NOTICE, "oss: READs buffered, not spliced: pipes of %u bytes: %s",
			PFS_MAX_IO, pfs_strerror(rc));
		s->pipes = NULL;
	}
	rc = start_osts(s, opts, err, errlen);
	if (rc)
		goto fail;
	qo.enforce = opts->enforce;
	qo.blkio = opts->blkio;
	qo.adaptbf_period = opts->adaptbf_period;
	qo.cap_bps = opts->ost_bps;
	qo.cap_iops = opts->ost_iops;
	qo.job_idle_s = opts->job_idle_s;
	qo.no_thread = opts->qos_no_thread;
	rc = oss_qos_create(&qo, s->q, s->n_osts, &s->qos, err, errlen);
	if (rc)
		goto fail;
	if (oss_qos_enforce(s->qos) & OSS_ENFORCE_BLKIO)
		s->blkio = opts->blkio;
	rc = oss_nrs_admin_create(s->q, s->n_osts, &s->admin);
	if (rc) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	so.host = opts->host;
	so.port = opts->data_port;
	so.name = "oss-data";
	so.auth = opts->auth;
	/* Decoding and enqueueing never block: on the server's loop, no hop
	 * to a worker thread (the I/O threads do the work). */
	so.inline_handler = 1;
	so.reply_bound = data_reply_bound;
	/* WRITE data from the socket into a pipe and from there into the
	 * object (splice), as READs the other way: not with O_DIRECT stores
	 * (nor blkio, which needs them) */
	s->inline_reads = !opts->no_inline_reads;
	s->splice_writes = s->pipes != NULL;
	for (size_t i = 0; i < s->n_osts; i++)
		if (oss_store_direct(opts->osts[i]))
			s->splice_writes = 0;
	s->wbulk.head = OSS_REQ_WRITE_HEAD;
	s->wbulk.split = wbulk_split;
	s->wbulk.pipe_get = wbulk_get;
	s->wbulk.pipe_put = wbulk_put;
	s->wbulk.handler = data_bulk_handler;
	so.bulk = s->splice_writes ? &s->wbulk : NULL;
	rc = pfs_server_start(&so, data_handler, s, &s->data);
	if (rc) {
		snprintf(err, errlen, "data port %s:%u: %s", opts->host ? opts->host : "",
			 opts->data_port, pfs_strerror(rc));
		goto fail;
	}
	so.inline_handler = 0; /* control requests may take a while */
	so.reply_bound = NULL;
	so.bulk = NULL;
	so.port = opts->ctl_port;
	so.name = "oss-ctl";
	rc = pfs_server_start(&so, ctl_handler, s, &s->ctl);
	if (rc) {
		snprintf(err, errlen, "control port %s:%u: %s", opts->host ? opts->host : "",
			 opts->ctl_port, pfs_strerror(rc));
		goto fail;
	}
	*out = s;
	return 0;
fail:
	oss_server_stop(s);
	return rc;
}

void oss_server_stop(oss_server *s)
{
	if (!s)
		return;
	/* The schedulers first: from now on they hand out what is queued
	 * regardless of rate limits (a zero-rate TBF rule would otherwise hold
	 * connection references forever and pfs_server_stop would wait for
	 * them), and refuse new requests with -ESHUTDOWN.  Then the ports,
	 * whose stop waits for control handlers (which use the QoS engine)
	 * and for the I/O threads to release every reference; then the QoS
	 * loop, which uses the schedulers; then the OSTs. */
	for (size_t i = 0; s->q && i < s->n_osts; i++)
		oss_ostq_shutdown(s->q[i]);
	if (s->data && s->inline_reads)
		pfs_log(PFS_LOG_NOTICE, "oss: %llu small READs served on the loop, %llu of them "
			"slow (the I/O threads took the READs for 100 ms after each)",
			(unsigned long long)atomic_load(&s->inlined),
			(unsigned long long)atomic_load(&s->inline_slow));
	if (s->data && s->splice_writes) {
		pfs_server_stats st;

		pfs_server_get_stats(s->data, &st);
		pfs_log(PFS_LOG_NOTICE, "oss: %llu WRITEs spliced, %llu of them received into "
			"memory after all (a pipe filled up)", (unsigned long long)st.bulk_spliced,
			(unsigned long long)st.bulk_undone);
	}
	pfs_server_stop(s->ctl);
	pfs_server_stop(s->data);
	oss_qos_destroy(s->qos);
	for (size_t i = 0; s->q && i < s->n_osts; i++)
		oss_ostq_stop(s->q[i]);
	oss_bufpool_destroy(s->rbufs); /* no I/O thread left */
	oss_pipepool_destroy(s->pipes);
	oss_nrs_admin_destroy(s->admin);
	oss_sched_budget_destroy(s->budget);
	for (size_t i = 0; s->grant && i < s->n_osts; i++)
		oss_grant_destroy(s->grant[i]);
	free(s->grant);
	pfs_optab_log_destroy(&s->refusals);
	explicit_bzero(s->capa_key, sizeof(s->capa_key));
	free(s->q);
	free(s);
}

uint16_t oss_server_data_port(const oss_server *s) { return pfs_server_port(s->data); }
uint16_t oss_server_ctl_port(const oss_server *s) { return pfs_server_port(s->ctl); }
size_t oss_server_n_osts(const oss_server *s) { return s->n_osts; }
oss_qos *oss_server_qos(const oss_server *s) { return s->qos; }
oss_nrs_admin *oss_server_admin(const oss_server *s) { return s->admin; }

oss_ostq *oss_server_ostq(const oss_server *s, size_t slot)
{
	return slot < s->n_osts ? s->q[slot] : NULL;
}

oss_sched *oss_server_sched(const oss_server *s, size_t slot)
{
	return slot < s->n_osts ? oss_ostq_sched(s->q[slot]) : NULL;
}

oss_store *oss_server_ost(const oss_server *s, size_t slot)
{
	return slot < s->n_osts ? oss_ostq_store(s->q[slot]) : NULL;
}

int oss_server_set_index(oss_server *s, size_t slot, int64_t index)
{
	if (slot >= s->n_osts || index < OSS_INDEX_NONE || index > (int64_t)UINT32_MAX - 1)
		return -EINVAL;
	oss_ostq_set_index(s->q[slot], index);
	return 0;
}

int64_t oss_server_get_index(const oss_server *s, size_t slot)
{
	return slot < s->n_osts ? oss_ostq_index(s->q[slot]) : OSS_INDEX_NONE;
}
