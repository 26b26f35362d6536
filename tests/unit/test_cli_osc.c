/* test_cli_osc.c — the striped I/O path of the object storage client against
 * in-process fake servers: a fake MDS answering OST_LIST and fake OSSes
 * keeping objects in memory.  Covers the split (pieces per OSS, cutting at
 * the RPC payload limit), merge (zero-fill of holes, short object reads and
 * missing objects), truncate (per-object sizes), concurrency of pieces on
 * different OSSes, the one-piece-per-OSS wave rule, OST map refresh, and
 * resending to an OSS that restarted on another address.  Flow control:
 * fake OSSes that grant credits (the client never has more in flight than
 * granted; a grant of 0 keeps the credit), answer -EBUSY (the piece is sent
 * again after a backoff, from memory or from the FUSE pipe, and EBUSY never
 * reaches the caller), or stay silent (a timed-out piece is sent again);
 * the caller's job, uid and gid in every OSS request header.  Reads into a
 * pipe (cli_osc_read_pipe_caps): the bytes of one READ in the pipe, holes
 * and short objects as zeros, a range of two READs refused (-EXDEV) with
 * nothing in the pipe, a busy OSS's READ sent again without stray bytes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "client/mdc.h"
#include "client/osc.h"
#include "common/buf.h"
#include "common/msg.h"
#include "common/server.h"

#define NOSS 4
#define MAXOBJ 64

typedef struct fobj {
	uint32_t ost;
	uint64_t id;
	uint8_t *data;
	size_t size;
} fobj;

typedef struct foss {
	pfs_server *srv;
	pthread_mutex_t lock;
	fobj objs[MAXOBJ];
	int nobj;
	unsigned reqs[400]; /* per opcode - 300 */
	/* Flow-control behaviour, set by a test before its I/O: */
	uint32_t grant;     /* credit put in every reply (0 = none) */
	int busy_left;      /* answer the next n data requests -EBUSY */
	int busy_status;    /* ... or this (-EAGAIN: restarted, no OST index yet) */
	int silent_left;    /* leave the next n data requests unanswered */
	int delay_us;       /* hold each data request this long */
	int no_writev;      /* answer WRITEV -EOPNOTSUPP (an OSS from before it) */
	/* ... and what it saw: */
	int active, max_active;   /* data requests being handled at once */
	unsigned busy_sent;
	uint32_t max_cnr;         /* largest credit request */
	uint32_t last_uid, last_gid;
	char last_job[PFS_JOBID_MAX + 1];
} foss;

/* Rendezvous: when expect > 0, each READ waits until expect requests have
 * arrived over all OSSes, proving they were on the wire together. */
static pthread_mutex_t rv_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t rv_cond = PTHREAD_COND_INITIALIZER;
static int rv_expect, rv_arrived;

typedef struct fmds {
	pfs_server *srv;
	uint32_t nost;
	uint16_t port[16]; /* data port of each OST index */
} fmds;

static foss oss[NOSS];
static fmds mds;

static fobj *find_obj(foss *f, uint32_t ost, uint64_t id, int create)
{
	for (int i = 0; i < f->nobj; i++)
		if (f->objs[i].ost == ost && f->objs[i].id == id)
			return &f->objs[i];
	if (!create || f->nobj == MAXOBJ)
		return NULL;
	f->objs[f->nobj] = (fobj){ ost, id, NULL, 0 };
	return &f->objs[f->nobj++];
}

static int obj_resize(fobj *o, size_t size)
{
	uint8_t *p = realloc(o->data, size ? size : 1);

	if (!p)
		return -ENOMEM;
	if (size > o->size)
		memset(p + o->size, 0, size - o->size);
	o->data = p;
	o->size = size;
	return 0;
}

static void rendezvous(void)
{
	struct timespec ts;

	pthread_mutex_lock(&rv_lock);
	if (rv_expect > 0) {
		rv_arrived++;
		pthread_cond_broadcast(&rv_cond);
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 10; /* only a deadlock guard: failure is rv_arrived < expect */
		while (rv_arrived < rv_expect)
			if (pthread_cond_timedwait(&rv_cond, &rv_lock, &ts))
				break;
	}
	pthread_mutex_unlock(&rv_lock);
}

static void oss_handler(void *ctx, pfs_sconn *c, const pfs_hdr *h, uint8_t *payload)
{
	foss *f = ctx;
	pfs_rbuf r;
	pfs_wbuf w;
	uint32_t ost, len = 0;
	uint64_t id, off = 0;
	fobj *o;
	int rc = 0;
	const uint8_t *data = NULL, *out = NULL;
	size_t outlen = 0;

	pfs_wbuf_init(&w);
	pfs_rbuf_init(&r, payload, h->payload_len);
	ost = pfs_rbuf_u32(&r);
	id = pfs_rbuf_u64(&r);
	if (h->opcode == PFS_OP_OSS_READ)
		rendezvous();
	/* Concurrency as the server sees it: counted before the delay, and
	 * uncounted before the reply leaves (else the client's next request
	 * could be counted while this one still is). */
	pthread_mutex_lock(&f->lock);
	if (++f->active > f->max_active)
		f->max_active = f->active;
	pthread_mutex_unlock(&f->lock);
	if (f->delay_us)
		usleep((useconds_t)f->delay_us);
	pthread_mutex_lock(&f->lock);
	f->active--;
	if (h->opcode >= 300 && h->opcode < 400)
		f->reqs[h->opcode - 300]++;
	if (h->credit > f->max_cnr)
		f->max_cnr = h->credit;
	f->last_uid = h->uid;
	f->last_gid = h->gid;
	pfs_hdr_jobid(h, f->last_job);
	if (f->silent_left > 0) {
		/* Lost: the client's receive timeout must notice. */
		f->silent_left--;
		pthread_mutex_unlock(&f->lock);
		pfs_wbuf_free(&w);
		free(payload);
		return;
	}
	if (f->busy_left > 0) {
		/* Nothing done: the payload (a whole WRITE) is dropped. */
		f->busy_left--;
		f->busy_sent++;
		pfs_sconn_reply_credit(c, h, f->busy_status ? f->busy_status : -EBUSY, f->grant,
				       NULL, 0, NULL, 0);
		pthread_mutex_unlock(&f->lock);
		pfs_wbuf_free(&w);
		free(payload);
		return;
	}
	switch (h->opcode) {
	case PFS_OP_OSS_READ:
		off = pfs_rbuf_u64(&r);
		len = pfs_rbuf_u32(&r);
		if ((rc = pfs_rbuf_done(&r)))
			break;
		o = find_obj(f, ost, id, 0);
		if (!o) {
			rc = -ENOENT;
			break;
		}
		if (off < o->size) {
			out = o->data + off;
			outlen = o->size - off < len ? o->size - off : len;
		}
		break;
	case PFS_OP_OSS_WRITE:
		off = pfs_rbuf_u64(&r);
		len = pfs_rbuf_u32(&r);
		data = pfs_rbuf_bytes(&r, len);
		if ((rc = pfs_rbuf_done(&r)))
			break;
		o = find_obj(f, ost, id, 1);
		if (!o) {
			rc = -ENOSPC;
			break;
		}
		if (off + len > o->size && (rc = obj_resize(o, off + len)))
			break;
		memcpy(o->data + off, data, len);
		pfs_wbuf_u32(&w, len);
		break;
	case PFS_OP_OSS_WRITEV: {
		uint32_t n = pfs_rbuf_u32(&r), total = 0;
		uint64_t vo[300];
		uint32_t vl[300];

		if (f->no_writev || n > 300) {
			rc = -EOPNOTSUPP;
			break;
		}
		for (uint32_t i = 0; i < n; i++) {
			vo[i] = pfs_rbuf_u64(&r);
			vl[i] = pfs_rbuf_u32(&r);
			total += vl[i];
		}
		data = pfs_rbuf_bytes(&r, total);
		if ((rc = pfs_rbuf_done(&r)))
			break;
		o = find_obj(f, ost, id, 1);
		for (uint32_t i = 0; o && i < n; i++) {
			if (vo[i] + vl[i] > o->size && (rc = obj_resize(o, vo[i] + vl[i])))
				break;
			memcpy(o->data + vo[i], data, vl[i]);
			data += vl[i];
		}
		if (!o)
			rc = -ENOSPC;
		pfs_wbuf_u32(&w, total);
		break;
	}
	case PFS_OP_OSS_TRUNCATE:
		off = pfs_rbuf_u64(&r);
		if ((rc = pfs_rbuf_done(&r)))
			break;
		o = find_obj(f, ost, id, 1);
		rc = o ? obj_resize(o, off) : -ENOSPC;
		break;
	case PFS_OP_OSS_SYNC:
		if ((rc = pfs_rbuf_done(&r)))
			break;
		rc = find_obj(f, ost, id, 0) ? 0 : -ENOENT;
		break;
	case PFS_OP_OSS_STAT:
		if ((rc = pfs_rbuf_done(&r)))
			break;
		o = find_obj(f, ost, id, 0);
		rc = o ? 0 : -ENOENT;
		if (o) {
			pfs_wbuf_u64(&w, o->size);
			pfs_wbuf_u64(&w, (o->size + 511) / 512);
		}
		break;
	default:
		rc = -EOPNOTSUPP;
	}
	if (rc == 0 && h->opcode == PFS_OP_OSS_READ)
		pfs_sconn_reply_credit(c, h, 0, f->grant, out, outlen, NULL, 0);
	else
		pfs_sconn_reply_credit(c, h, rc, f->grant, rc ? NULL : w.data, rc ? 0 : w.len,
				       NULL, 0);
	pthread_mutex_unlock(&f->lock);
	pfs_wbuf_free(&w);
	free(payload);
}

static void mds_handler(void *ctx, pfs_sconn *c, const pfs_hdr *h, uint8_t *payload)
{
	fmds *m = ctx;
	pfs_wbuf w;

	pfs_wbuf_init(&w);
	if (h->opcode != PFS_OP_MDS_OST_LIST) {
		pfs_sconn_reply(c, h, -EOPNOTSUPP, NULL, 0, NULL, 0);
		goto out;
	}
	pfs_wbuf_u32(&w, m->nost);
	for (uint32_t i = 0; i < m->nost; i++) {
		pfs_ost_info oi = { .index = i, .up = 1, .data_port = m->port[i] };

		snprintf(oi.uuid, sizeof(oi.uuid), "ost%u", i);
		snprintf(oi.oss, sizeof(oi.oss), "oss");
		/* The wildcard address: the client must use loopback for it. */
		snprintf(oi.host, sizeof(oi.host), "%s", i % 2 ? "127.0.0.1" : "0.0.0.0");
		pfs_ost_info_encode(&w, &oi);
	}
	pfs_sconn_reply(c, h, 0, w.data, w.len, NULL, 0);
out:
	pfs_wbuf_free(&w);
	free(payload);
}

typedef struct fixture {
	cli_mdc *mdc;
	cli_osc *osc;
} fixture;

/* nost OSTs; OST i is served by OSS (i % noss). */
static int start_cluster(void **state, uint32_t nost, unsigned noss)
{
	fixture *fx = calloc(1, sizeof(*fx));
	pfs_server_opts so = { .host = "127.0.0.1", .port = 0, .name = "fake" };
	pfs_rpc_opts ro = { .max_conns = 4, .timeout_ms = 20000, .retry_ms = 1000,
			    .client_id = 42 };

	assert_non_null(fx);
	memset(oss, 0, sizeof(oss));
	memset(&mds, 0, sizeof(mds));
	for (unsigned i = 0; i < NOSS; i++) {
		pthread_mutex_init(&oss[i].lock, NULL);
		assert_int_equal(pfs_server_start(&so, oss_handler, &oss[i], &oss[i].srv), 0);
	}
	mds.nost = nost;
	for (uint32_t i = 0; i < nost; i++)
		mds.port[i] = pfs_server_port(oss[i % noss].srv);
	assert_int_equal(pfs_server_start(&so, mds_handler, &mds, &mds.srv), 0);
	assert_int_equal(cli_mdc_create("127.0.0.1", pfs_server_port(mds.srv), &ro, &fx->mdc), 0);
	assert_int_equal(cli_osc_create(fx->mdc, &(cli_osc_opts){ .rpc = ro }, &fx->osc), 0);
	rv_expect = rv_arrived = 0;
	*state = fx;
	return 0;
}

static int setup4(void **state) { return start_cluster(state, 4, 4); }
static int setup_shared(void **state) { return start_cluster(state, 2, 1); }
static int setup1(void **state) { return start_cluster(state, 1, 1); }

static int teardown(void **state)
{
	fixture *fx = *state;

	cli_osc_destroy(fx->osc);
	cli_mdc_destroy(fx->mdc);
	pfs_server_stop(mds.srv);
	for (unsigned i = 0; i < NOSS; i++) {
		pfs_server_stop(oss[i].srv);
		for (int k = 0; k < oss[i].nobj; k++)
			free(oss[i].objs[k].data);
		pthread_mutex_destroy(&oss[i].lock);
	}
	free(fx);
	return 0;
}

static const pfs_rpc_tag tag1 = { .job = "job1", .uid = 1000, .gid = 1000 };
static const pfs_rpc_tag tag_j = { .job = "j", .uid = 1234, .gid = 567 };

static pfs_layout mklayout(uint32_t ss, uint32_t sc)
{
	pfs_layout l;

	memset(&l, 0, sizeof(l));
	l.stripe_size = ss;
	l.stripe_count = sc;
	for (uint32_t i = 0; i < sc; i++) {
		l.stripe[i].ost = i;
		l.stripe[i].object = 1000 + i;
	}
	return l;
}

static void fill(uint8_t *p, size_t n, uint64_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)((seed + i) * 2654435761u >> 13);
}

/* ---- pure helpers ---- */

static void test_osc_plan_split(void **state)
{
	pfs_layout l = mklayout(64 << 10, 4);
	pfs_extent e[64];
	size_t n;

	/* 200 KiB from 32 KiB: stripes 0 (32K), 1 (64K), 2 (64K), 3 (40K). */
	n = cli_osc_plan(&l, 32 << 10, 200 << 10, PFS_MAX_IO, e, 64);
	assert_int_equal(n, 4);
	assert_int_equal(e[0].idx, 0);
	assert_int_equal(e[0].obj_off, 32 << 10);
	assert_int_equal(e[0].len, 32 << 10);
	assert_int_equal(e[3].idx, 3);
	assert_int_equal(e[3].buf_off, 160 << 10);
	assert_int_equal(e[3].len, 40 << 10);

	/* One stripe: a single contiguous extent, cut at the piece limit. */
	l = mklayout(1 << 20, 1);
	n = cli_osc_plan(&l, 100, 3u << 20, 1 << 20, e, 64);
	assert_int_equal(n, 3);
	assert_int_equal(e[1].obj_off, 100 + (1 << 20));
	assert_int_equal(e[1].buf_off, 1 << 20);
	assert_int_equal(e[2].len, 1 << 20);
	/* Asking with a small array reports the size needed. */
	assert_int_equal(cli_osc_plan(&l, 100, 3u << 20, 1 << 20, e, 1), 3);
}

static void test_osc_clip_zero(void **state)
{
	uint8_t buf[16];
	pfs_extent e = { 0, 0, 4, 8 };

	assert_int_equal(cli_osc_clip(0, 100, 50), 50);
	assert_int_equal(cli_osc_clip(50, 100, 50), 0);
	assert_int_equal(cli_osc_clip(60, 100, 50), 0);
	assert_int_equal(cli_osc_clip(10, 20, 1000), 20);
	memset(buf, 0xAA, sizeof(buf));
	cli_osc_zero_tail(buf, &e, 3);
	for (int i = 0; i < 16; i++)
		assert_int_equal(buf[i], (i >= 7 && i < 12) ? 0 : 0xAA);
}

/* ---- against the fake cluster ---- */

static void test_osc_write_read(void **state)
{
	fixture *fx = *state;
	pfs_layout l = mklayout(64 << 10, 4);
	size_t len = 3u << 20, got;
	uint8_t *src = malloc(len), *dst = malloc(len);
	uint64_t off = 12345;

	assert_non_null(src);
	assert_non_null(dst);
	fill(src, len, 7);
	/* In FUSE-sized calls, at an unaligned offset. */
	for (size_t done = 0; done < len; done += 1u << 20)
		assert_int_equal(cli_osc_write(fx->osc, &tag1, &l, off + done, 1u << 20,
					       src + done), 0);
	memset(dst, 0xEE, len);
	assert_int_equal(cli_osc_read(fx->osc, &tag1, &l, off + len, off, len, dst, &got), 0);
	assert_int_equal(got, len);
	assert_memory_equal(src, dst, len);
	/* 64 KiB stripes over 4 OSSes: every OSS got a quarter of the pieces
	 * (each unaligned 1 MiB call touches 16 + 1 stripe units). */
	unsigned total = 0;
	for (int i = 0; i < NOSS; i++) {
		assert_true(oss[i].reqs[PFS_OP_OSS_WRITE - 300] >= 12);
		total += oss[i].reqs[PFS_OP_OSS_WRITE - 300];
	}
	assert_int_equal(total, 3 * 17);
	/* Per-object sizes are what the layout says. */
	for (uint32_t i = 0; i < 4; i++) {
		fobj *o = find_obj(&oss[i], i, 1000 + i, 0);
		assert_non_null(o);
		assert_int_equal(o->size, pfs_layout_object_size(&l, off + len, i));
	}
	free(src);
	free(dst);
}

static void test_osc_holes(void **state)
{
	fixture *fx = *state;
	pfs_layout l = mklayout(1 << 20, 4);
	uint8_t data[100], *dst = malloc(6u << 20);
	size_t got;

	assert_non_null(dst);
	fill(data, sizeof(data), 3);
	/* Only stripe 1 (OST 1, bytes 5 MiB..) gets data: objects 0, 2 and 3
	 * do not exist at all. */
	assert_int_equal(cli_osc_write(fx->osc, &tag_j, &l, (5u << 20) + 10, sizeof(data), data), 0);
	memset(dst, 0xEE, 6u << 20);
	/* The file is longer than the data: a short object read at the end. */
	assert_int_equal(cli_osc_read(fx->osc, &tag_j, &l, 6u << 20, 0, 6u << 20, dst, &got), 0);
	assert_int_equal(got, 6u << 20);
	for (size_t i = 0; i < (6u << 20); i++) {
		if (i >= (5u << 20) + 10 && i < (5u << 20) + 10 + sizeof(data))
			assert_int_equal(dst[i], data[i - (5u << 20) - 10]);
		else if (dst[i] != 0)
			fail_msg("byte %zu is %u, not a zero", i, dst[i]);
	}
	/* Reads at and past EOF return nothing and touch nothing. */
	assert_int_equal(cli_osc_read(fx->osc, &tag_j, &l, 6u << 20, 6u << 20, 4096, dst, &got), 0);
	assert_int_equal(got, 0);
	/* A read crossing EOF is clipped. */
	assert_int_equal(cli_osc_read(fx->osc, &tag_j, &l, (5u << 20) + 20, 5u << 20, 4096, dst,
				      &got), 0);
	assert_int_equal(got, 20);
	assert_memory_equal(dst + 10, data, 10);
	free(dst);
}

/* Read n bytes out of pipe r into dst; the pipe is empty after them. */
static void pipe_take(int r, uint8_t *dst, size_t n)
{
	size_t done = 0;
	int left = -1;

	while (done < n) {
		ssize_t k = read(r, dst + done, n - done);

		assert_true(k > 0);
		done += (size_t)k;
	}
	assert_int_equal(ioctl(r, FIONREAD, &left), 0);
	assert_int_equal(left, 0);
}

static void test_osc_read_pipe(void **state)
{
	fixture *fx = *state;
	pfs_layout l = mklayout(1 << 20, 4);
	size_t len = (5u << 20) / 2, got;
	uint8_t *src = malloc(len), *dst = malloc(1 << 20);
	int fds[2];
	cli_osc_pipe pp;
	cli_osc_stats st;

	assert_non_null(src);
	assert_non_null(dst);
	assert_int_equal(pipe(fds), 0);
	assert_true(fcntl(fds[1], F_SETPIPE_SZ, 2 << 20) >= (2 << 20));
	pp = (cli_osc_pipe){ fds[0], fds[1], 2 << 20 };
	fill(src, len, 9);
	/* stripes 0, 1 full, 2 half; 3 never written */
	for (size_t done = 0; done < len; done += 1u << 20)
		assert_int_equal(cli_osc_write(fx->osc, &tag_j, &l, done,
					       len - done < (1u << 20) ? len - done : 1u << 20,
					       src + done), 0);
	/* a whole stripe, and a piece inside one */
	assert_int_equal(cli_osc_read_pipe_caps(fx->osc, &tag_j, &l, NULL, 4u << 20, 0, 1 << 20,
						&pp, &got), 0);
	assert_int_equal(got, 1 << 20);
	pipe_take(fds[0], dst, got);
	assert_memory_equal(dst, src, 1 << 20);
	assert_int_equal(cli_osc_read_pipe_caps(fx->osc, &tag_j, &l, NULL, 4u << 20,
						(1u << 20) + 100, 5000, &pp, &got), 0);
	assert_int_equal(got, 5000);
	pipe_take(fds[0], dst, got);
	assert_memory_equal(dst, src + (1u << 20) + 100, 5000);
	/* a short object: zeros after its end; a missing one: all zeros */
	assert_int_equal(cli_osc_read_pipe_caps(fx->osc, &tag_j, &l, NULL, 4u << 20, 2u << 20,
						1 << 20, &pp, &got), 0);
	assert_int_equal(got, 1 << 20);
	pipe_take(fds[0], dst, got);
	assert_memory_equal(dst, src + (2u << 20), len - (2u << 20));
	for (size_t i = len - (2u << 20); i < (1u << 20); i++)
		if (dst[i])
			fail_msg("byte %zu past the object's end is %u", i, dst[i]);
	memset(dst, 0xEE, 1 << 20);
	assert_int_equal(cli_osc_read_pipe_caps(fx->osc, &tag_j, &l, NULL, 4u << 20, 3u << 20,
						1 << 20, &pp, &got), 0);
	pipe_take(fds[0], dst, got);
	for (size_t i = 0; i < (1u << 20); i++)
		if (dst[i])
			fail_msg("byte %zu of a missing object is %u", i, dst[i]);
	/* two READs: refused, nothing in the pipe; clipped at the size */
	assert_int_equal(cli_osc_read_pipe_caps(fx->osc, &tag_j, &l, NULL, 4u << 20, 1000,
						1 << 20, &pp, &got), -EXDEV);
	pipe_take(fds[0], dst, 0);
	assert_int_equal(cli_osc_read_pipe_caps(fx->osc, &tag_j, &l, NULL, 300, 0, 1 << 20, &pp,
						&got), 0);
	assert_int_equal(got, 300);
	pipe_take(fds[0], dst, got);
	assert_memory_equal(dst, src, 300);
	/* busy answers: sent again, the pipe holds the bytes once */
	oss[1].busy_left = 2;
	assert_int_equal(cli_osc_read_pipe_caps(fx->osc, &tag_j, &l, NULL, 4u << 20, 1u << 20,
						1 << 20, &pp, &got), 0);
	pipe_take(fds[0], dst, got);
	assert_memory_equal(dst, src + (1u << 20), 1 << 20);
	cli_osc_stats_get(fx->osc, &st);
	assert_true(st.read_piped >= 5);
	assert_int_equal(st.read_pipe_fallbacks, 1);
	close(fds[0]);
	close(fds[1]);
	free(src);
	free(dst);
}

/* The file size stripe objects make: the end of the object that reaches
 * furthest into the file; empty objects count nothing. */
static void test_osc_size_from_objects(void **state)
{
	pfs_layout l = mklayout(1 << 20, 4);
	uint64_t s[4] = { 0, 0, 0, 0 };

	assert_int_equal(cli_osc_size_from_objects(&l, s), 0);
	s[0] = 1;
	assert_int_equal(cli_osc_size_from_objects(&l, s), 1);
	s[0] = 1 << 20; /* a full first stripe: 1 MiB */
	assert_int_equal(cli_osc_size_from_objects(&l, s), 1 << 20);
	s[2] = 10; /* stripe 2 starts at 2 MiB */
	assert_int_equal(cli_osc_size_from_objects(&l, s), (2u << 20) + 10);
	/* object 1's second stripe unit: file bytes 5 MiB..6 MiB */
	s[1] = (1u << 20) + 7;
	assert_int_equal(cli_osc_size_from_objects(&l, s), (5u << 20) + 7);
	/* object 0 two full units: ends at 4 MiB + 1 MiB */
	s[1] = 0;
	s[0] = 2u << 20;
	assert_int_equal(cli_osc_size_from_objects(&l, s), 5u << 20);
	/* one stripe: the object's size */
	l = mklayout(1 << 20, 1);
	s[0] = 12345;
	assert_int_equal(cli_osc_size_from_objects(&l, s), 12345);
}

/* Glimpse against the servers: 3 MiB + 5 written over 4 objects (the
 * last unit short) and a file with a hole at its start. */
static void test_osc_glimpse(void **state)
{
	fixture *fx = *state;
	pfs_layout l = mklayout(1 << 20, 4), l2 = mklayout(1 << 20, 4);
	size_t n = (3u << 20) + 5;
	uint8_t *data = calloc(1, n);
	uint64_t size = 1, blocks = 0;

	assert_non_null(data);
	assert_int_equal(cli_osc_glimpse_caps(fx->osc, &tag_j, &l, NULL, &size, NULL), 0);
	assert_int_equal(size, 0); /* nothing written: no object at all */
	assert_int_equal(cli_osc_write(fx->osc, &tag_j, &l, 0, n, data), 0);
	assert_int_equal(cli_osc_glimpse_caps(fx->osc, &tag_j, &l, NULL, &size, NULL), 0);
	assert_int_equal(size, n);
	for (uint32_t i = 0; i < 4; i++)
		l2.stripe[i].object += 1000;
	assert_int_equal(cli_osc_write(fx->osc, &tag_j, &l2, (6u << 20) + 3, 1, data), 0);
	assert_int_equal(cli_osc_glimpse_caps(fx->osc, &tag_j, &l2, NULL, &size, &blocks), 0);
	assert_int_equal(size, (6u << 20) + 4);
	assert_int_equal(blocks, ((1u << 20) + 4 + 511) / 512); /* the fake's count */
	free(data);
}

static void test_osc_truncate_sync(void **state)
{
	fixture *fx = *state;
	pfs_layout l = mklayout(64 << 10, 4);
	uint8_t *src = malloc(1 << 20), dst[4096];
	size_t got;
	uint64_t cut = (300 << 10) + 5;

	assert_non_null(src);
	fill(src, 1 << 20, 9);
	assert_int_equal(cli_osc_write(fx->osc, &tag_j, &l, 0, 1 << 20, src), 0);
	assert_int_equal(cli_osc_truncate(fx->osc, &tag_j, &l, cut), 0);
	for (uint32_t i = 0; i < 4; i++) {
		fobj *o = find_obj(&oss[i], i, 1000 + i, 0);
		assert_non_null(o);
		assert_int_equal(o->size, pfs_layout_object_size(&l, cut, i));
		assert_int_equal(oss[i].reqs[PFS_OP_OSS_TRUNCATE - 300], 1);
	}
	/* Grow again: the cut-off bytes read back as zeros, not old data. */
	assert_int_equal(cli_osc_truncate(fx->osc, &tag_j, &l, 1 << 20), 0);
	assert_int_equal(cli_osc_read(fx->osc, &tag_j, &l, 1 << 20, cut - 5, sizeof(dst), dst, &got),
			 0);
	assert_memory_equal(dst, src + cut - 5, 5);
	for (size_t i = 5; i < sizeof(dst); i++)
		assert_int_equal(dst[i], 0);
	assert_int_equal(cli_osc_sync(fx->osc, &tag_j, &l), 0);
	for (int i = 0; i < NOSS; i++)
		assert_int_equal(oss[i].reqs[PFS_OP_OSS_SYNC - 300], 1);
	free(src);
}

static void test_osc_sync_missing(void **state)
{
	fixture *fx = *state;
	pfs_layout l = mklayout(64 << 10, 4);

	/* Nothing written: no object exists, and that is not an error. */
	assert_int_equal(cli_osc_sync(fx->osc, &tag_j, &l), 0);
	assert_int_equal(cli_osc_truncate(fx->osc, &tag_j, &l, 0), 0);
}

static void test_osc_concurrent_pieces(void **state)
{
	fixture *fx = *state;
	pfs_layout l = mklayout(256 << 10, 4);
	uint8_t *src = malloc(1 << 20), *dst = malloc(1 << 20);
	uint64_t pieces, waves, refreshes;
	size_t got;

	assert_non_null(src);
	assert_non_null(dst);
	fill(src, 1 << 20, 11);
	assert_int_equal(cli_osc_write(fx->osc, &tag_j, &l, 0, 1 << 20, src), 0);
	/* Each of the 4 OSSes holds its READ until all 4 have arrived: a client
	 * that waited for one reply before sending the next would never get
	 * there. */
	pthread_mutex_lock(&rv_lock);
	rv_expect = 4;
	rv_arrived = 0;
	pthread_mutex_unlock(&rv_lock);
	assert_int_equal(cli_osc_read(fx->osc, &tag_j, &l, 1 << 20, 0, 1 << 20, dst, &got), 0);
	pthread_mutex_lock(&rv_lock);
	assert_int_equal(rv_arrived, 4);
	rv_expect = 0;
	pthread_mutex_unlock(&rv_lock);
	assert_memory_equal(src, dst, 1 << 20);
	cli_osc_counters(fx->osc, &pieces, &waves, &refreshes);
	assert_int_equal(waves, 2); /* one write, one read: one wave each */
	assert_int_equal(pieces, 8);
	assert_int_equal(refreshes, 1); /* the OST map was loaded once */
	free(src);
	free(dst);
}

static void test_osc_shared_oss_waves(void **state)
{
	fixture *fx = *state;
	pfs_layout l = mklayout(64 << 10, 2); /* both OSTs on the same OSS */
	uint8_t *src = malloc(512 << 10), *dst = malloc(512 << 10);
	uint64_t pieces, waves, refreshes;
	size_t got;

	assert_non_null(src);
	assert_non_null(dst);
	fill(src, 512 << 10, 5);
	assert_int_equal(cli_osc_write(fx->osc, &tag_j, &l, 0, 512 << 10, src), 0);
	cli_osc_counters(fx->osc, &pieces, &waves, &refreshes);
	/* 8 units alternating over 2 objects of one OSS: 8 pieces (not
	 * contiguous in the buffer, so not mergeable), one per wave. */
	assert_int_equal(pieces, 8);
	assert_int_equal(waves, 8);
	assert_int_equal(oss[0].reqs[PFS_OP_OSS_WRITE - 300], 8);
	assert_int_equal(oss[1].reqs[PFS_OP_OSS_WRITE - 300], 0);
	assert_int_equal(cli_osc_read(fx->osc, &tag_j, &l, 512 << 10, 0, 512 << 10, dst, &got), 0);
	assert_memory_equal(src, dst, 512 << 10);
	free(src);
	free(dst);
}

/* cli_osc_writev_caps: 300 small extents of one object go in two WRITEV
 * requests (at most PFS_WRITEV_MAX each) and land where they say, also
 * when their buffers lie in memory in the opposite order (each request's
 * bulk is a scatter list of them, not one run from the first); an OSS
 * that refuses WRITEV gets plain WRITEs; extents of two objects too. */
static void test_osc_writev(void **state)
{
	fixture *fx = *state;
	pfs_layout l = mklayout(64 << 10, 4);
	const size_t span = 768 << 10;
	uint8_t *ref = calloc(1, span), *dst = malloc(span), *src = malloc(30000);
	cli_osc_iov v[300];
	size_t got, n = 0;

	assert_non_null(ref);
	assert_non_null(dst);
	assert_non_null(src);
	for (int pass = 0; pass < 3; pass++) {
		fill(src, 30000, 40 + (uint64_t)pass);
		n = 0;
		/* object 1 holds [64K, 128K) of every 256 KiB */
		for (uint64_t k = 0; k < 3; k++)
			for (uint64_t j = 0; j < 100; j++, n++) {
				v[n].off = (64 << 10) + k * (256 << 10) + j * 200;
				v[n].len = 100;
				v[n].buf = src + (pass == 2 ? 299 - n : n) * 100;
				memcpy(ref + v[n].off, v[n].buf, 100);
			}
		oss[1].no_writev = pass == 1;
		memset(oss[1].reqs, 0, sizeof(oss[1].reqs));
		assert_int_equal(cli_osc_writev_caps(fx->osc, &tag_j, &l, NULL, v, n), 0);
		if (pass != 1) {
			assert_int_equal(oss[1].reqs[PFS_OP_OSS_WRITEV - 300], 2);
			assert_int_equal(oss[1].reqs[PFS_OP_OSS_WRITE - 300], 0);
		} else {
			assert_int_equal(oss[1].reqs[PFS_OP_OSS_WRITEV - 300], 2); /* refused */
			assert_int_equal(oss[1].reqs[PFS_OP_OSS_WRITE - 300], 300);
		}
		assert_int_equal(cli_osc_read(fx->osc, &tag_j, &l, span, 0, span, dst, &got), 0);
		assert_memory_equal(dst, ref, span);
	}
	/* two objects: plain WRITEs */
	oss[1].no_writev = 0;
	memset(oss[0].reqs, 0, sizeof(oss[0].reqs));
	memset(oss[1].reqs, 0, sizeof(oss[1].reqs));
	v[0] = (cli_osc_iov){ 10, 5, "abcde" };
	v[1] = (cli_osc_iov){ (64 << 10) + 10, 5, "fghij" };
	memcpy(ref + 10, "abcde", 5);
	memcpy(ref + (64 << 10) + 10, "fghij", 5);
	assert_int_equal(cli_osc_writev_caps(fx->osc, &tag_j, &l, NULL, v, 2), 0);
	assert_int_equal(oss[0].reqs[PFS_OP_OSS_WRITE - 300], 1);
	assert_int_equal(oss[1].reqs[PFS_OP_OSS_WRITE - 300], 1);
	assert_int_equal(oss[1].reqs[PFS_OP_OSS_WRITEV - 300], 0);
	assert_int_equal(cli_osc_read(fx->osc, &tag_j, &l, span, 0, span, dst, &got), 0);
	assert_memory_equal(dst, ref, span);
	free(ref);
	free(dst);
	free(src);
}

static void test_osc_unknown_ost(void **state)
{
	fixture *fx = *state;
	pfs_layout l = mklayout(64 << 10, 4);
	uint64_t pieces, waves, refreshes;
	uint8_t b[10] = { 0 };

	l.stripe[0].ost = 9; /* the MDS does not know OST 9 */
	assert_int_equal(cli_osc_write(fx->osc, &tag_j, &l, 0, sizeof(b), b), -EIO);
	cli_osc_counters(fx->osc, &pieces, &waves, &refreshes);
	assert_int_equal(refreshes, 1);
	assert_int_equal(pieces, 0);
	/* A known one afterwards needs no further refresh. */
	l.stripe[0].ost = 0;
	assert_int_equal(cli_osc_write(fx->osc, &tag_j, &l, 0, sizeof(b), b), 0);
	cli_osc_counters(fx->osc, &pieces, &waves, &refreshes);
	assert_int_equal(refreshes, 1);
}

static void test_osc_oss_moved(void **state)
{
	fixture *fx = *state;
	pfs_layout l = mklayout(64 << 10, 4);
	pfs_server_opts so = { .host = "127.0.0.1", .port = 0, .name = "fake" };
	uint8_t src[256 << 10], dst[256 << 10];
	uint64_t pieces, waves, refreshes;
	size_t got;

	fill(src, sizeof(src), 21);
	assert_int_equal(cli_osc_write(fx->osc, &tag_j, &l, 0, sizeof(src), src), 0);
	/* OSS 0 restarts on another port; the MDS learns the new address. */
	uint16_t oldport = mds.port[0];
	pfs_server_stop(oss[0].srv);
	assert_int_equal(pfs_server_start(&so, oss_handler, &oss[0], &oss[0].srv), 0);
	mds.port[0] = pfs_server_port(oss[0].srv);
	memset(dst, 0xEE, sizeof(dst));
	assert_int_equal(cli_osc_read(fx->osc, &tag_j, &l, sizeof(src), 0, sizeof(dst), dst, &got), 0);
	assert_int_equal(got, sizeof(dst));
	assert_memory_equal(src, dst, sizeof(src));
	cli_osc_counters(fx->osc, &pieces, &waves, &refreshes);
	/* The first load and the one after the failure (unless the kernel gave
	 * the new server the old port, when nothing failed). */
	if (mds.port[0] != oldport)
		assert_int_equal(refreshes, 2);
}

/* ---- flow control ---- */

static void test_osc_backoff(void **state)
{
	/* The n-th busy answer in a row: half to all of 5 ms << n, at most
	 * 500 ms. */
	for (unsigned n = 0; n < 40; n++) {
		unsigned step = n < 7 && (5u << n) < 500 ? 5u << n : 500;

		for (uint32_t r = 0; r < 2000; r += 7) {
			unsigned b = cli_osc_backoff_ms(n, r * 2654435761u);

			assert_true(b >= step / 2 && b <= step);
		}
	}
	assert_int_equal(cli_osc_backoff_ms(0, 0), 2);
	assert_int_equal(cli_osc_backoff_ms(3, 0), 20);
	assert_int_equal(cli_osc_backoff_ms(30, 250), 500);
	assert_int_equal(cli_osc_backoff_ms(UINT32_MAX, 0), 250);
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The OSS stats of the only OSS the osc knows. */
static cli_osc_oss_stats oss_stats1(cli_osc *o)
{
	cli_osc_oss_stats st[4];
	unsigned n = 0;

	cli_osc_oss_stats_get(o, st, 4, &n);
	assert_int_equal(n, 1);
	return st[0];
}

typedef struct writer {
	cli_osc *osc;
	const pfs_layout *l;
	const uint8_t *src;
	int id;
	int rc;
} writer;

#define NWRITERS 16
#define WCHUNK (64u << 10)
#define WPER 4

/* Writer id writes WPER chunks of its own 256 KiB region. */
static void *writer_main(void *arg)
{
	writer *w = arg;

	for (int k = 0; k < WPER && w->rc == 0; k++) {
		uint64_t off = ((uint64_t)w->id * WPER + (uint64_t)k) * WCHUNK;

		w->rc = cli_osc_write(w->osc, &tag_j, w->l, off, WCHUNK, w->src + off);
	}
	return NULL;
}

static void test_osc_credit_limit(void **state)
{
	fixture *fx = *state;
	pfs_layout l = mklayout(1 << 20, 1); /* everything on OSS 0 */
	size_t total = (size_t)NWRITERS * WPER * WCHUNK;
	uint8_t *src = malloc(total), *dst = malloc(total);
	pthread_t t[NWRITERS];
	writer w[NWRITERS];
	cli_osc_oss_stats os;
	cli_osc_stats st;
	size_t got;

	assert_non_null(src);
	assert_non_null(dst);
	fill(src, total, 31);
	oss[0].grant = 2;
	/* Before any reply the credit is the pool size (4 connections). */
	assert_int_equal(cli_osc_write(fx->osc, &tag_j, &l, 0, 1, src), 0);
	os = oss_stats1(fx->osc);
	assert_int_equal(os.credit, 2);
	assert_int_equal(os.credit_changes, 1);
	pthread_mutex_lock(&oss[0].lock);
	oss[0].max_active = 0;
	oss[0].max_cnr = 0;
	oss[0].delay_us = 3000; /* long enough for requests to pile up */
	pthread_mutex_unlock(&oss[0].lock);
	for (int i = 0; i < NWRITERS; i++) {
		w[i] = (writer){ fx->osc, &l, src, i, 0 };
		assert_int_equal(pthread_create(&t[i], NULL, writer_main, &w[i]), 0);
	}
	for (int i = 0; i < NWRITERS; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(w[i].rc, 0);
	}
	/* 16 writers and 4 connections, but never more than the 2 granted
	 * on the wire at once (and the 2 were used). */
	assert_int_equal(oss[0].max_active, 2);
	os = oss_stats1(fx->osc);
	assert_int_equal(os.peak <= 4, 1); /* the first write's window */
	assert_int_equal(os.inflight, 0);
	assert_int_equal(os.waiting, 0);
	assert_true(os.credit_waits > 0);
	/* Pieces waited: the request asked for more than the grant, and
	 * never for more than the 4 connections could carry. */
	assert_int_equal(oss[0].max_cnr, 4);
	cli_osc_stats_get(fx->osc, &st);
	assert_int_equal(st.credit_waits, os.credit_waits);
	assert_int_equal(st.busy_retries, 0);
	oss[0].delay_us = 0;
	assert_int_equal(cli_osc_read(fx->osc, &tag_j, &l, total, 0, total, dst, &got), 0);
	assert_memory_equal(src + 1, dst + 1, total - 1);
	free(src);
	free(dst);
}

static void test_osc_credit_zero_keeps(void **state)
{
	fixture *fx = *state;
	pfs_layout l = mklayout(1 << 20, 1);
	uint8_t b[100] = { 1 };

	assert_int_equal(cli_osc_write(fx->osc, &tag_j, &l, 0, sizeof(b), b), 0);
	/* No grant yet: the initial credit, the 4 connections. */
	assert_int_equal(oss_stats1(fx->osc).credit, 4);
	oss[0].grant = 3;
	assert_int_equal(cli_osc_write(fx->osc, &tag_j, &l, 0, sizeof(b), b), 0);
	assert_int_equal(oss_stats1(fx->osc).credit, 3);
	oss[0].grant = 0;
	assert_int_equal(cli_osc_write(fx->osc, &tag_j, &l, 0, sizeof(b), b), 0);
	assert_int_equal(cli_osc_sync(fx->osc, &tag_j, &l), 0);
	assert_int_equal(oss_stats1(fx->osc).credit, 3);
	assert_int_equal(oss_stats1(fx->osc).credit_changes, 1);
	/* A busy answer's grant counts too. */
	oss[0].grant = 1;
	oss[0].busy_left = 1;
	assert_int_equal(cli_osc_write(fx->osc, &tag_j, &l, 0, sizeof(b), b), 0);
	assert_int_equal(oss_stats1(fx->osc).credit, 1);
}

static void test_osc_identity(void **state)
{
	fixture *fx = *state;
	pfs_layout l = mklayout(64 << 10, 4);
	pfs_rpc_tag t = { .job = "slurm.4711", .uid = 4242, .gid = 77, .credit = 999 };
	uint8_t b[256 << 10];
	size_t got;

	fill(b, sizeof(b), 1);
	assert_int_equal(cli_osc_write(fx->osc, &t, &l, 0, sizeof(b), b), 0);
	for (int i = 0; i < NOSS; i++) {
		assert_int_equal(oss[i].last_uid, 4242);
		assert_int_equal(oss[i].last_gid, 77);
		assert_string_equal(oss[i].last_job, "slurm.4711");
		/* The osc asks for credits itself: not the tag's 999. */
		assert_true(oss[i].max_cnr >= 1 && oss[i].max_cnr <= 4);
	}
	t.uid = 5;
	t.gid = 6;
	assert_int_equal(cli_osc_read(fx->osc, &t, &l, sizeof(b), 0, sizeof(b), b, &got), 0);
	assert_int_equal(cli_osc_truncate(fx->osc, &t, &l, 10), 0);
	for (int i = 0; i < NOSS; i++) {
		assert_int_equal(oss[i].last_uid, 5);
		assert_int_equal(oss[i].last_gid, 6);
	}
}

static void test_osc_busy_retry(void **state)
{
	fixture *fx = *state;
	pfs_layout l = mklayout(1 << 20, 1);
	uint8_t *src = malloc(1 << 20), *dst = malloc(1 << 20);
	cli_osc_stats st;
	uint64_t t0;
	size_t got;

	assert_non_null(src);
	assert_non_null(dst);
	fill(src, 1 << 20, 41);
	oss[0].busy_left = 3;
	t0 = mono_ms();
	assert_int_equal(cli_osc_write(fx->osc, &tag_j, &l, 0, 1 << 20, src), 0);
	/* Backoffs of at least 2, 5 and 10 ms (half of 5, 10, 20). */
	assert_true(mono_ms() - t0 >= 17);
	cli_osc_stats_get(fx->osc, &st);
	assert_int_equal(st.busy_retries, 3);
	assert_int_equal(oss_stats1(fx->osc).busy_retries, 3);
	assert_int_equal(oss[0].busy_sent, 3);
	assert_int_equal(oss[0].reqs[PFS_OP_OSS_WRITE - 300], 4);
	assert_int_equal(cli_osc_read(fx->osc, &tag_j, &l, 1 << 20, 0, 1 << 20, dst, &got), 0);
	assert_memory_equal(src, dst, 1 << 20);
	/* Reads, truncates and syncs are sent again the same way. */
	oss[0].busy_left = 2;
	memset(dst, 0, 1 << 20);
	assert_int_equal(cli_osc_read(fx->osc, &tag_j, &l, 1 << 20, 0, 1 << 20, dst, &got), 0);
	assert_memory_equal(src, dst, 1 << 20);
	oss[0].busy_left = 1;
	assert_int_equal(cli_osc_sync(fx->osc, &tag_j, &l), 0);
	cli_osc_stats_get(fx->osc, &st);
	assert_int_equal(st.busy_retries, 6);
	/* An OSS just restarted, whose REGISTER the MDS has not answered,
	 * answers -EAGAIN (it knows no OST index yet): sent again the same
	 * way, never seen by the caller. */
	oss[0].busy_status = -EAGAIN;
	oss[0].busy_left = 2;
	fill(src, 1 << 20, 43);
	assert_int_equal(cli_osc_write(fx->osc, &tag_j, &l, 0, 1 << 20, src), 0);
	oss[0].busy_left = 1;
	assert_int_equal(cli_osc_read(fx->osc, &tag_j, &l, 1 << 20, 0, 1 << 20, dst, &got), 0);
	assert_memory_equal(src, dst, 1 << 20);
	oss[0].busy_status = 0;
	cli_osc_stats_get(fx->osc, &st);
	assert_int_equal(st.busy_retries, 9);
	free(src);
	free(dst);
}

/* A pipe holding n bytes of src, as libfuse hands a spliced WRITE over. */
static int pipe_with(const uint8_t *src, size_t n, int fds[2])
{
	assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
	assert_true(fcntl(fds[1], F_SETPIPE_SZ, 1 << 20) >= (int)n);
	assert_int_equal(write(fds[1], src, n), (ssize_t)n);
	return 0;
}

static void test_osc_busy_pipe(void **state)
{
	fixture *fx = *state;
	pfs_layout l = mklayout(1 << 20, 2);
	size_t n = 200 << 10;
	uint8_t *src = malloc(n), *back = malloc(n);
	uint64_t off = (1 << 20) + 4096; /* object 1, OSS 1 */
	cli_osc_stats st;
	fobj *ob;
	int fds[2];

	assert_non_null(src);
	assert_non_null(back);
	fill(src, n, 51);
	pipe_with(src, n, fds);
	oss[1].busy_left = 2;
	assert_int_equal(cli_osc_write_pipe(fx->osc, &tag_j, &l, off, n, fds[0]), 0);
	cli_osc_stats_get(fx->osc, &st);
	assert_int_equal(st.busy_retries, 2);
	assert_int_equal(st.tee_fallbacks, 0);
	assert_int_equal(oss[1].reqs[PFS_OP_OSS_WRITE - 300], 3);
	/* The third send carried the same bytes as the first. */
	ob = find_obj(&oss[1], 1, 1001, 0);
	assert_non_null(ob);
	assert_int_equal(ob->size, 4096 + n);
	assert_memory_equal(ob->data + 4096, src, n);
	/* The pipe was never consumed: the caller drains it. */
	assert_int_equal(read(fds[0], back, n), (ssize_t)n);
	assert_memory_equal(back, src, n);
	/* A write spanning objects is not for this path, and leaves the
	 * pipe alone. */
	pipe_with(src, 100, fds + 0);
	assert_int_equal(cli_osc_write_pipe(fx->osc, &tag_j, &l, (1 << 20) - 50, 100, fds[0]),
			 -EXDEV);
	assert_int_equal(read(fds[0], back, 100), 100);
	close(fds[0]);
	close(fds[1]);
	free(src);
	free(back);
}

/* A second osc on the fixture's MDS with a short RPC timeout (T) and
 * recovery window. */
static cli_osc *short_osc(fixture *fx, int timeout_ms, int retry_ms)
{
	cli_osc_opts oo = { .rpc = { .max_conns = 4, .timeout_ms = timeout_ms,
				     .retry_ms = retry_ms, .client_id = 43 } };
	cli_osc *o;

	assert_int_equal(cli_osc_create(fx->mdc, &oo, &o), 0);
	return o;
}

static void test_osc_busy_forever(void **state)
{
	fixture *fx = *state;
	pfs_layout l = mklayout(1 << 20, 1);
	cli_osc *o = short_osc(fx, 200, 800);
	uint8_t b[1000] = { 0 };
	cli_osc_stats st;
	uint64_t t0;

	oss[0].busy_left = 1 << 30;
	t0 = mono_ms();
	/* Busy for T is a timeout; timeouts are sent again within the
	 * recovery window; then the caller sees EIO, never EBUSY. */
	assert_int_equal(cli_osc_write(o, &tag_j, &l, 0, sizeof(b), b), -EIO);
	assert_true(mono_ms() - t0 >= 800);
	assert_true(mono_ms() - t0 < 800 + 200 + 600);
	cli_osc_stats_get(o, &st);
	assert_true(st.busy_retries >= 4);
	assert_true(st.resends >= 3);
	oss[0].busy_left = 0;
	cli_osc_destroy(o);
}

static void test_osc_timeout_resend(void **state)
{
	fixture *fx = *state;
	pfs_layout l = mklayout(1 << 20, 1);
	cli_osc *o = short_osc(fx, 300, 5000);
	uint8_t src[5000], dst[5000];
	cli_osc_stats st;
	size_t got;

	fill(src, sizeof(src), 61);
	oss[0].silent_left = 1;
	assert_int_equal(cli_osc_write(o, &tag_j, &l, 0, sizeof(src), src), 0);
	cli_osc_stats_get(o, &st);
	assert_int_equal(st.resends, 1);
	assert_int_equal(oss[0].reqs[PFS_OP_OSS_WRITE - 300], 2);
	oss[0].silent_left = 1;
	assert_int_equal(cli_osc_read(o, &tag_j, &l, sizeof(src), 0, sizeof(dst), dst, &got), 0);
	assert_memory_equal(src, dst, sizeof(src));
	cli_osc_stats_get(o, &st);
	assert_int_equal(st.resends, 2);
	cli_osc_destroy(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_osc_plan_split),
		cmocka_unit_test(test_osc_clip_zero),
		cmocka_unit_test_setup_teardown(test_osc_write_read, setup4, teardown),
		cmocka_unit_test_setup_teardown(test_osc_holes, setup4, teardown),
		cmocka_unit_test_setup_teardown(test_osc_truncate_sync, setup4, teardown),
		cmocka_unit_test(test_osc_size_from_objects),
		cmocka_unit_test_setup_teardown(test_osc_glimpse, setup4, teardown),
		cmocka_unit_test_setup_teardown(test_osc_sync_missing, setup4, teardown),
		cmocka_unit_test_setup_teardown(test_osc_concurrent_pieces, setup4, teardown),
		cmocka_unit_test_setup_teardown(test_osc_shared_oss_waves, setup_shared, teardown),
		cmocka_unit_test_setup_teardown(test_osc_writev, setup4, teardown),
		cmocka_unit_test_setup_teardown(test_osc_unknown_ost, setup4, teardown),
		cmocka_unit_test_setup_teardown(test_osc_oss_moved, setup4, teardown),
		cmocka_unit_test(test_osc_backoff),
		cmocka_unit_test_setup_teardown(test_osc_credit_limit, setup1, teardown),
		cmocka_unit_test_setup_teardown(test_osc_credit_zero_keeps, setup1, teardown),
		cmocka_unit_test_setup_teardown(test_osc_identity, setup4, teardown),
		cmocka_unit_test_setup_teardown(test_osc_busy_retry, setup1, teardown),
		cmocka_unit_test_setup_teardown(test_osc_busy_pipe, setup4, teardown),
		cmocka_unit_test_setup_teardown(test_osc_busy_forever, setup1, teardown),
		cmocka_unit_test_setup_teardown(test_osc_timeout_resend, setup1, teardown),
		cmocka_unit_test_setup_teardown(test_osc_read_pipe, setup4, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
