/* server.c — OSS data and control ports, request decoding, I/O threads
 * (see server.h). */
#include "oss/server.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/log.h"
#include "common/msg.h"
#include "common/server.h"

/* Room left in a JOBSTATS reply for one more entry (a job id of at most
 * PFS_JOBID_MAX bytes plus the counters). */
#define OSS_JOBSTATS_SLACK 256u

struct oss_server {
	pfs_server *data, *ctl;
	oss_sched *sched;
	oss_store **osts;        /* [n_osts], borrowed stores */
	_Atomic int64_t *index;  /* [n_osts], cluster index or OSS_INDEX_NONE */
	size_t n_osts;
	pthread_t *threads;
	unsigned nthreads;       /* started */
};

/* A decoded data request, from the connection thread to an I/O thread. */
typedef struct oss_io {
	oss_req req;             /* what the scheduler sees */
	oss_server *srv;
	pfs_sconn *conn;         /* referenced while queued */
	pfs_hdr hdr;
	uint8_t *payload;        /* owned: the received frame */
	oss_store *st;
	uint64_t obj, off, len;  /* len: read/write/punch length, truncate size */
	const uint8_t *data;     /* write bulk, inside payload */
} oss_io;

/* The store serving wire index ost: 0, -ENODEV if none does, -EAGAIN if
 * one of ours has no index yet (it might be the one asked for). */
static int ost_lookup(oss_server *s, uint32_t ost, oss_store **out)
{
	int unknown = 0;

	for (size_t i = 0; i < s->n_osts; i++) {
		int64_t x = atomic_load(&s->index[i]);
		if (x == (int64_t)ost) {
			*out = s->osts[i];
			return 0;
		}
		if (x == OSS_INDEX_NONE)
			unknown = 1;
	}
	return unknown ? -EAGAIN : -ENODEV;
}

/* Decode a data request into io.  0 or the errno to reply. */
static int data_decode(oss_server *s, const pfs_hdr *h, const uint8_t *p, oss_io *io)
{
	pfs_rbuf b;
	uint32_t ost;

	pfs_rbuf_init(&b, p, h->payload_len);
	ost = pfs_rbuf_u32(&b);
	switch (h->opcode) {
	case PFS_OP_OSS_READ:
		io->obj = pfs_rbuf_u64(&b);
		io->off = pfs_rbuf_u64(&b);
		io->len = pfs_rbuf_u32(&b);
		if (pfs_rbuf_done(&b))
			return -EBADMSG;
		if (io->len > PFS_MAX_IO)
			return -EINVAL;
		io->req.bytes = io->len;
		break;
	case PFS_OP_OSS_WRITE:
		io->obj = pfs_rbuf_u64(&b);
		io->off = pfs_rbuf_u64(&b);
		io->len = pfs_rbuf_u32(&b);
		if (pfs_rbuf_error(&b))
			return -EBADMSG;
		if (io->len > PFS_MAX_IO)
			return -EINVAL;
		io->data = pfs_rbuf_bytes(&b, (size_t)io->len);
		if (pfs_rbuf_done(&b))
			return -EBADMSG;
		io->req.bytes = io->len;
		break;
	case PFS_OP_OSS_TRUNCATE:
		io->obj = pfs_rbuf_u64(&b);
		io->len = pfs_rbuf_u64(&b);
		break;
	case PFS_OP_OSS_PUNCH:
		io->obj = pfs_rbuf_u64(&b);
		io->off = pfs_rbuf_u64(&b);
		io->len = pfs_rbuf_u64(&b);
		break;
	case PFS_OP_OSS_STAT:
	case PFS_OP_OSS_SYNC:
		io->obj = pfs_rbuf_u64(&b);
		break;
	case PFS_OP_OSS_STATFS:
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (pfs_rbuf_done(&b))
		return -EBADMSG;
	io->req.ost = ost;
	return ost_lookup(s, ost, &io->st);
}

static void io_free(oss_io *io)
{
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

/* Execute one request on the store and reply; runs on an I/O thread. */
static void io_execute(oss_io *io)
{
	uint8_t out[24];
	void *rbuf = NULL;
	size_t got = 0, olen = 0;
	uint64_t a = 0, b = 0, c = 0;
	int rc = 0;

	switch (io->hdr.opcode) {
	case PFS_OP_OSS_READ:
		/* Aligned, so O_DIRECT can read straight into it. */
		if (io->len && posix_memalign(&rbuf, OSS_STORE_ALIGN, io->len)) {
			rc = -ENOMEM;
			break;
		}
		rc = oss_store_read(io->st, io->obj, io->off, rbuf, io->len, &got);
		break;
	case PFS_OP_OSS_WRITE:
		rc = oss_store_write(io->st, io->obj, io->off, io->data, io->len);
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
		pfs_log(PFS_LOG_DEBUG, "oss: %s from %s: %s", pfs_op_name(io->hdr.opcode),
			pfs_sconn_peer(io->conn), pfs_strerror(rc));
	pfs_sconn_reply(io->conn, &io->hdr, rc, out, olen, rbuf, got);
	free(rbuf);
}

static void *io_main(void *arg)
{
	oss_server *s = arg;
	oss_req *r;

	while (oss_sched_dequeue(s->sched, &r) == 0) {
		oss_io *io = (oss_io *)r; /* req is the first member */
		pfs_sconn *c = io->conn;

		io_execute(io);
		io_free(io);
		pfs_sconn_put(c);
	}
	return NULL;
}

static void reply_err(pfs_sconn *c, const pfs_hdr *h, int rc)
{
	pfs_log(PFS_LOG_DEBUG, "oss: %s from %s: %s", pfs_op_name(h->opcode),
		pfs_sconn_peer(c), pfs_strerror(rc));
	pfs_sconn_reply(c, h, rc, NULL, 0, NULL, 0);
}

static void data_handler(void *ctx, pfs_sconn *c, const pfs_hdr *h, uint8_t *payload)
{
	oss_server *s = ctx;
	oss_io *io;
	int rc;

	if (h->opcode == PFS_OP_PING) {
		pfs_sconn_reply(c, h, 0, payload, h->payload_len, NULL, 0);
		free(payload);
		return;
	}
	io = calloc(1, sizeof(*io));
	if (!io) {
		free(payload);
		reply_err(c, h, -ENOMEM);
		return;
	}
	rc = data_decode(s, h, payload, io);
	if (rc) {
		free(io);
		free(payload);
		reply_err(c, h, rc);
		return;
	}
	io->srv = s;
	io->hdr = *h;
	io->payload = payload;
	io->conn = c;
	pfs_hdr_jobid(h, io->req.job);
	io->req.opcode = h->opcode;
	pfs_sconn_get(c);
	rc = oss_sched_enqueue(s->sched, &io->req);
	if (rc) {
		reply_err(c, h, rc);
		io_free(io);
		pfs_sconn_put(c);
	}
}

/* ---- control port ---- */

static int ctl_execute(oss_server *s, const pfs_hdr *h, const uint8_t *p, pfs_wbuf *w)
{
	pfs_rbuf b;
	oss_store *st;
	uint64_t obj, after, a, t, f;
	uint32_t ost, max;
	int rc;

	pfs_rbuf_init(&b, p, h->payload_len);
	switch (h->opcode) {
	case PFS_OP_OSS_DESTROY:
		ost = pfs_rbuf_u32(&b);
		obj = pfs_rbuf_u64(&b);
		if (pfs_rbuf_done(&b))
			return -EBADMSG;
		rc = ost_lookup(s, ost, &st);
		return rc ? rc : oss_store_destroy(st, obj);
	case PFS_OP_OSS_LIST_OBJECTS: {
		uint64_t *ids;
		size_t n;
		int eof;

		ost = pfs_rbuf_u32(&b);
		after = pfs_rbuf_u64(&b);
		max = pfs_rbuf_u32(&b);
		if (pfs_rbuf_done(&b))
			return -EBADMSG;
		rc = ost_lookup(s, ost, &st);
		if (rc)
			return rc;
		if (max > OSS_LIST_MAX)
			max = OSS_LIST_MAX;
		ids = malloc((max ? max : 1) * sizeof(*ids));
		if (!ids)
			return -ENOMEM;
		rc = oss_store_list(st, after, ids, max, &n, &eof);
		if (!rc) {
			pfs_wbuf_u32(w, (uint32_t)n);
			pfs_wbuf_u8(w, (uint8_t)eof);
			for (size_t i = 0; i < n; i++)
				pfs_wbuf_u64(w, ids[i]);
		}
		free(ids);
		return rc ? rc : pfs_wbuf_error(w);
	}
	case PFS_OP_OSS_JOBSTATS: {
		pfs_job_stats *v;
		size_t n, k;

		if (pfs_rbuf_done(&b))
			return -EBADMSG;
		rc = oss_sched_stats(s->sched, OSS_SCHED_TOTAL, &v, &n);
		if (rc)
			return rc;
		/* Stop before the reply outgrows a frame (~12k jobs); the
		 * count is patched to what fits. */
		pfs_wbuf_u32(w, 0);
		for (k = 0; k < n && w->len < PFS_MAX_PAYLOAD - OSS_JOBSTATS_SLACK; k++)
			pfs_job_stats_encode(w, &v[k]);
		free(v);
		if (!pfs_wbuf_error(w)) {
			w->data[0] = (uint8_t)k;
			w->data[1] = (uint8_t)(k >> 8);
			w->data[2] = (uint8_t)(k >> 16);
			w->data[3] = (uint8_t)(k >> 24);
		}
		return pfs_wbuf_error(w);
	}
	case PFS_OP_OSS_STATFS:
		ost = pfs_rbuf_u32(&b);
		if (pfs_rbuf_done(&b))
			return -EBADMSG;
		rc = ost_lookup(s, ost, &st);
		if (!rc)
			rc = oss_store_statfs(st, &t, &f, &a);
		if (rc)
			return rc;
		pfs_wbuf_u64(w, t);
		pfs_wbuf_u64(w, f);
		pfs_wbuf_u64(w, a);
		return pfs_wbuf_error(w);
	default:
		return -EOPNOTSUPP;
	}
}

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
	pfs_wbuf_init(&w);
	rc = ctl_execute(s, h, payload, &w);
	if (rc)
		reply_err(c, h, rc);
	else
		pfs_sconn_reply(c, h, 0, w.data, w.len, NULL, 0);
	pfs_wbuf_free(&w);
	free(payload);
}

/* ---- lifetime ---- */

int oss_server_start(const oss_server_opts *opts, oss_server **out, char *err,
		     size_t errlen)
{
	oss_server *s = calloc(1, sizeof(*s));
	pfs_server_opts so = { 0 };
	char ebuf[128];
	unsigned want = opts->io_threads ? opts->io_threads : OSS_IO_THREADS_DEFAULT;
	int rc = 0;

	if (!err || !errlen) {
		err = ebuf;
		errlen = sizeof(ebuf);
	}
	if (!s)
		return -ENOMEM;
	if (!opts->n_osts) {
		snprintf(err, errlen, "no OSTs to serve");
		rc = -EINVAL;
		goto fail;
	}
	s->n_osts = opts->n_osts;
	s->osts = calloc(s->n_osts, sizeof(*s->osts));
	s->index = calloc(s->n_osts, sizeof(*s->index));
	s->threads = calloc(want, sizeof(*s->threads));
	if (!s->osts || !s->index || !s->threads) {
		snprintf(err, errlen, "out of memory");
		rc = -ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < s->n_osts; i++) {
		s->osts[i] = opts->osts[i];
		atomic_init(&s->index[i], OSS_INDEX_NONE);
	}
	rc = oss_sched_create(opts->sched, &s->sched);
	if (rc) {
		snprintf(err, errlen, "scheduler: %s", pfs_strerror(rc));
		goto fail;
	}
	for (; s->nthreads < want; s->nthreads++) {
		if (pthread_create(&s->threads[s->nthreads], NULL, io_main, s)) {
			snprintf(err, errlen, "cannot start I/O threads");
			rc = -EAGAIN;
			goto fail;
		}
	}
	so.host = opts->host;
	so.port = opts->data_port;
	so.name = "oss-data";
	rc = pfs_server_start(&so, data_handler, s, &s->data);
	if (rc) {
		snprintf(err, errlen, "data port %s:%u: %s", opts->host ? opts->host : "",
			 opts->data_port, pfs_strerror(rc));
		goto fail;
	}
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
	/* The scheduler first: from now on it hands out what is queued
	 * regardless of rate limits (a zero-rate TBF rule would otherwise hold
	 * connection references forever and pfs_server_stop would wait for
	 * them), and refuses new requests with -ESHUTDOWN.  Then the ports,
	 * whose stop waits for the I/O threads to release every reference. */
	if (s->sched)
		oss_sched_shutdown(s->sched);
	pfs_server_stop(s->ctl);
	pfs_server_stop(s->data);
	for (unsigned i = 0; i < s->nthreads; i++)
		pthread_join(s->threads[i], NULL);
	oss_sched_destroy(s->sched);
	free(s->threads);
	free(s->index);
	free(s->osts);
	free(s);
}

uint16_t oss_server_data_port(const oss_server *s) { return pfs_server_port(s->data); }
uint16_t oss_server_ctl_port(const oss_server *s) { return pfs_server_port(s->ctl); }
size_t oss_server_n_osts(const oss_server *s) { return s->n_osts; }
oss_sched *oss_server_sched(oss_server *s) { return s->sched; }

oss_store *oss_server_ost(const oss_server *s, size_t slot)
{
	return slot < s->n_osts ? s->osts[slot] : NULL;
}

int oss_server_set_index(oss_server *s, size_t slot, int64_t index)
{
	if (slot >= s->n_osts || index < OSS_INDEX_NONE || index > (int64_t)UINT32_MAX)
		return -EINVAL;
	atomic_store(&s->index[slot], index);
	return 0;
}

int64_t oss_server_get_index(const oss_server *s, size_t slot)
{
	return slot < s->n_osts ? atomic_load(&s->index[slot]) : OSS_INDEX_NONE;
}
