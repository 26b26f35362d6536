/* test_oss_server.c — the OSS data and control ports in-process on port 0
 * with a temporary OST (no MDS: the OST index is bound directly): real
 * frames for every operation, error replies, and garbage, truncated and
 * oversized frames after which the server still answers. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/buf.h"
#include "common/capa.h"
#include <time.h>
#include "common/log.h"
#include "common/msg.h"
#include "common/net.h"
#include "common/rpc.h"
#include "oss/nrs_tbf.h"
#include "oss/server.h"
#include "qos/tbf.h"

#define OST_INDEX 5

typedef struct fixture {
	char tmp[64], dir[96];
	oss_store *st;
	oss_server *srv;
	pfs_rpc_pool *data, *ctl;
} fixture;

static void quiet(int level, const char *msg, void *arg) {}

/* K_cap of the server setup_capa starts (NULL: setup, no capabilities). */
static const uint8_t *setup_key;
/* setup_noinline: the server of setup with inline_reads off. */
static int setup_no_inline;
static const uint8_t KCAP[PFS_CAPA_KEY_LEN] = { 7, 7, 7 };

static int setup(void **state)
{
	fixture *f = calloc(1, sizeof(*f));
	oss_server_opts so = { 0 };
	pfs_rpc_opts ro = { 0 };
	char err[256];

	pfs_log_set_sink(quiet, NULL);
	snprintf(f->tmp, sizeof(f->tmp), "/tmp/pfs-test-oss-XXXXXX");
	if (!mkdtemp(f->tmp))
		return -1;
	snprintf(f->dir, sizeof(f->dir), "%s/ost0", f->tmp);
	if (oss_store_open(f->dir, NULL, &f->st, err, sizeof(err)))
		return -1;
	so.host = "127.0.0.1";
	so.io_threads = 3;
	so.osts = &f->st;
	so.n_osts = 1;
	so.capa_key = setup_key;
	so.no_inline_reads = setup_no_inline;
	if (oss_server_start(&so, &f->srv, err, sizeof(err))) {
		fprintf(stderr, "start: %s\n", err);
		return -1;
	}
	if (oss_server_set_index(f->srv, 0, OST_INDEX))
		return -1;
	ro.max_conns = 4;
	ro.timeout_ms = 10000;
	ro.retry_ms = 100;
	ro.client_id = 77;
	if (pfs_rpc_pool_create("127.0.0.1", oss_server_data_port(f->srv), &ro, &f->data) ||
	    pfs_rpc_pool_create("127.0.0.1", oss_server_ctl_port(f->srv), &ro, &f->ctl))
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;
	char cmd[128];

	pfs_rpc_pool_destroy(f->data);
	pfs_rpc_pool_destroy(f->ctl);
	oss_server_stop(f->srv);
	oss_store_close(f->st);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->tmp);
	if (system(cmd))
		return -1;
	free(f);
	pfs_log_set_sink(NULL, NULL);
	return 0;
}

/* ---- request helpers: return the status, payload copied to out ---- */

static int call(pfs_rpc_pool *p, uint16_t op, const char *job, pfs_wbuf *req,
		const void *bulk, size_t bulk_len, uint8_t *out, size_t cap, size_t *outlen)
{
	pfs_rpc_reply rep = { 0 };
	int rc;

	pfs_rpc_reply_init(&rep);
	rc = pfs_rpc_call(p, op, job, 0, req ? req->data : NULL, req ? req->len : 0, bulk,
			  bulk_len, &rep);
	if (outlen)
		*outlen = rep.len;
	if (rc == 0 && out) {
		assert_true(rep.len <= cap);
		memcpy(out, rep.data, rep.len);
	}
	pfs_rpc_reply_free(&rep);
	if (req)
		pfs_wbuf_reset(req);
	return rc;
}

static int do_write(fixture *f, const char *job, uint32_t ost, uint64_t obj, uint64_t off,
		    const void *data, uint32_t len)
{
	pfs_wbuf w;
	uint8_t out[8];
	size_t n = 0;
	int rc;

	pfs_wbuf_init(&w);
	pfs_wbuf_u32(&w, ost);
	pfs_wbuf_u64(&w, obj);
	pfs_wbuf_u64(&w, off);
	pfs_wbuf_u32(&w, len);
	rc = call(f->data, PFS_OP_OSS_WRITE, job, &w, data, len, out, sizeof(out), &n);
	if (rc == 0) {
		pfs_rbuf b;
		pfs_rbuf_init(&b, out, n);
		assert_int_equal(pfs_rbuf_u32(&b), len);
		assert_int_equal(pfs_rbuf_done(&b), 0);
	}
	pfs_wbuf_free(&w);
	return rc;
}

static int do_read(fixture *f, const char *job, uint32_t ost, uint64_t obj, uint64_t off,
		   uint32_t len, uint8_t *out, size_t *got)
{
	pfs_wbuf w;
	int rc;

	pfs_wbuf_init(&w);
	pfs_wbuf_u32(&w, ost);
	pfs_wbuf_u64(&w, obj);
	pfs_wbuf_u64(&w, off);
	pfs_wbuf_u32(&w, len);
	rc = call(f->data, PFS_OP_OSS_READ, job, &w, NULL, 0, out, len, got);
	pfs_wbuf_free(&w);
	return rc;
}

static int do_obj_op(pfs_rpc_pool *p, uint16_t op, uint32_t ost, uint64_t obj, int nextra,
		     uint64_t x1, uint64_t x2, uint8_t *out, size_t cap, size_t *n)
{
	pfs_wbuf w;
	int rc;

	pfs_wbuf_init(&w);
	pfs_wbuf_u32(&w, ost);
	pfs_wbuf_u64(&w, obj);
	if (nextra > 0)
		pfs_wbuf_u64(&w, x1);
	if (nextra > 1)
		pfs_wbuf_u64(&w, x2);
	rc = call(p, op, "job-x", &w, NULL, 0, out, cap, n);
	pfs_wbuf_free(&w);
	return rc;
}

static void stat_obj(fixture *f, uint64_t obj, uint64_t *size, uint64_t *blocks)
{
	uint8_t out[16];
	size_t n;
	pfs_rbuf b;

	assert_int_equal(do_obj_op(f->data, PFS_OP_OSS_STAT, OST_INDEX, obj, 0, 0, 0, out,
				   sizeof(out), &n), 0);
	pfs_rbuf_init(&b, out, n);
	*size = pfs_rbuf_u64(&b);
	*blocks = pfs_rbuf_u64(&b);
	assert_int_equal(pfs_rbuf_done(&b), 0);
}

static void ping(pfs_rpc_pool *p)
{
	uint8_t out[8];
	size_t n;
	pfs_wbuf w;

	pfs_wbuf_init(&w);
	pfs_wbuf_u32(&w, 0xfeedbeef);
	assert_int_equal(call(p, PFS_OP_PING, NULL, &w, NULL, 0, out, sizeof(out), &n), 0);
	assert_int_equal(n, 4);
	assert_int_equal(out[0], 0xef);
	pfs_wbuf_free(&w);
}

static void test_server_write_read_stat(void **state)
{
	fixture *f = *state;
	static uint8_t data[PFS_MAX_IO], back[PFS_MAX_IO];
	size_t got;
	uint64_t size, blocks;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 13 + (i >> 12));
	/* A full 1 MiB write, read back whole. */
	assert_int_equal(do_write(f, "jobA", OST_INDEX, 1, 0, data, PFS_MAX_IO), 0);
	assert_int_equal(do_read(f, "jobA", OST_INDEX, 1, 0, PFS_MAX_IO, back, &got), 0);
	assert_int_equal(got, PFS_MAX_IO);
	assert_memory_equal(back, data, PFS_MAX_IO);
	/* Short read at the end, empty read of a missing object. */
	assert_int_equal(do_read(f, "jobA", OST_INDEX, 1, PFS_MAX_IO - 10, 100, back, &got), 0);
	assert_int_equal(got, 10);
	assert_memory_equal(back, data + PFS_MAX_IO - 10, 10);
	assert_int_equal(do_read(f, "jobA", OST_INDEX, 2, 0, 100, back, &got), 0);
	assert_int_equal(got, 0);
	stat_obj(f, 1, &size, &blocks);
	assert_int_equal(size, PFS_MAX_IO);
	assert_true(blocks >= PFS_MAX_IO / 512);
	/* And the data really is in the OST directory. */
	{
		size_t g;
		assert_int_equal(oss_store_read(f->st, 1, 4096, back, 16, &g), 0);
		assert_memory_equal(back, data + 4096, 16);
	}
	ping(f->data);
	ping(f->ctl);
}

/* Small READs on the loop (oss/server.c): a READ of at most 64 KiB alone
 * in its OST's queue is served by the loop, the same bytes as from an
 * I/O thread; a larger one is not; inline_reads off serves none there. */
static void inline_reads_case(fixture *f, int on)
{
	static uint8_t data[PFS_MAX_IO], back[PFS_MAX_IO];
	uint64_t served, slow, before;
	size_t got;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7 + (i >> 10));
	assert_int_equal(do_write(f, "jobI", OST_INDEX, 3, 0, data, PFS_MAX_IO), 0);
	oss_server_inline_reads(f->srv, &before, &slow);
	for (unsigned i = 0; i < 16; i++) {
		uint64_t off = (uint64_t)i * 61440 + i;
		size_t len = i == 15 ? 65536 : 4096;

		assert_int_equal(do_read(f, "jobI", OST_INDEX, 3, off, len, back, &got), 0);
		assert_int_equal(got, len);
		assert_memory_equal(back, data + off, len);
	}
	oss_server_inline_reads(f->srv, &served, &slow);
	/* a read of the page cache is never slow enough to turn them off */
	assert_int_equal(served - before, on ? 16 : 0);
	assert_int_equal(slow, 0);
	/* 1 MiB: to an I/O thread */
	assert_int_equal(do_read(f, "jobI", OST_INDEX, 3, 0, PFS_MAX_IO, back, &got), 0);
	assert_int_equal(got, PFS_MAX_IO);
	assert_memory_equal(back, data, PFS_MAX_IO);
	oss_server_inline_reads(f->srv, &before, &slow);
	assert_int_equal(before, served);
}

static void test_server_inline_reads(void **state)
{
	inline_reads_case(*state, 1);
}

static void test_server_no_inline_reads(void **state)
{
	inline_reads_case(*state, 0);
}

static int setup_noinline(void **state)
{
	int rc;

	setup_no_inline = 1;
	rc = setup(state);
	setup_no_inline = 0;
	return rc;
}

static void test_server_truncate_punch_sync(void **state)
{
	fixture *f = *state;
	uint8_t data[8192], back[8192], zero[4096] = { 0 };
	size_t got;
	uint64_t size, blocks;

	memset(data, 0x5a, sizeof(data));
	assert_int_equal(do_write(f, "jobB", OST_INDEX, 9, 0, data, sizeof(data)), 0);
	assert_int_equal(do_obj_op(f->data, PFS_OP_OSS_PUNCH, OST_INDEX, 9, 2, 0, 4096, NULL, 0,
				   NULL), 0);
	assert_int_equal(do_read(f, "jobB", OST_INDEX, 9, 0, sizeof(back), back, &got), 0);
	assert_int_equal(got, sizeof(back));
	assert_memory_equal(back, zero, 4096);
	assert_memory_equal(back + 4096, data, 4096);
	assert_int_equal(do_obj_op(f->data, PFS_OP_OSS_TRUNCATE, OST_INDEX, 9, 1, 100, 0, NULL,
				   0, NULL), 0);
	stat_obj(f, 9, &size, &blocks);
	assert_int_equal(size, 100);
	assert_int_equal(do_obj_op(f->data, PFS_OP_OSS_SYNC, OST_INDEX, 9, 0, 0, 0, NULL, 0,
				   NULL), 0);
}

static void list_all(fixture *f, uint32_t max, uint64_t *ids, size_t *nids)
{
	uint64_t after = 0;
	int eof = 0, pages = 0;

	*nids = 0;
	while (!eof) {
		pfs_wbuf w;
		pfs_rpc_reply rep = { 0 };
		pfs_rbuf b;
		uint32_t n;

		pfs_wbuf_init(&w);
		pfs_wbuf_u32(&w, OST_INDEX);
		pfs_wbuf_u64(&w, after);
		pfs_wbuf_u32(&w, max);
		pfs_rpc_reply_init(&rep);
		assert_int_equal(pfs_rpc_call(f->ctl, PFS_OP_OSS_LIST_OBJECTS, NULL, 0, w.data,
					      w.len, NULL, 0, &rep), 0);
		pfs_rbuf_init(&b, rep.data, rep.len);
		n = pfs_rbuf_u32(&b);
		eof = pfs_rbuf_u8(&b);
		assert_true(n <= max);
		for (uint32_t i = 0; i < n; i++) {
			after = pfs_rbuf_u64(&b);
			ids[(*nids)++] = after;
		}
		assert_int_equal(pfs_rbuf_done(&b), 0);
		pfs_rpc_reply_free(&rep);
		pfs_wbuf_free(&w);
		assert_true(++pages < 100);
	}
}

/* A batched DESTROY (the MDS destroyer's): every listed object goes,
 * missing ones included, and a later write to one is refused; a batch
 * with a torn id is malformed and destroys nothing. */
static void test_server_destroy_batch(void **state)
{
	fixture *f = *state;
	uint64_t ids[64];
	size_t n;
	pfs_wbuf w;

	for (uint64_t id = 1; id <= 4; id++)
		assert_int_equal(do_write(f, "jobC", OST_INDEX, id * 1000, 0, "abc", 3), 0);
	pfs_wbuf_init(&w);
	pfs_wbuf_u32(&w, OST_INDEX);
	pfs_wbuf_u64(&w, 4000);
	pfs_wbuf_u32(&w, 7); /* half an id */
	assert_int_equal(call(f->ctl, PFS_OP_OSS_DESTROY, NULL, &w, NULL, 0, NULL, 0, NULL),
			 -EBADMSG);
	pfs_wbuf_u32(&w, OST_INDEX);
	assert_int_equal(call(f->ctl, PFS_OP_OSS_DESTROY, NULL, &w, NULL, 0, NULL, 0, NULL),
			 -EBADMSG); /* no id at all */
	pfs_wbuf_u32(&w, OST_INDEX);
	pfs_wbuf_u64(&w, 3000);
	pfs_wbuf_u64(&w, 99999);
	pfs_wbuf_u64(&w, 1000);
	assert_int_equal(call(f->ctl, PFS_OP_OSS_DESTROY, NULL, &w, NULL, 0, NULL, 0, NULL), 0);
	pfs_wbuf_free(&w);
	list_all(f, 100, ids, &n);
	assert_int_equal(n, 2);
	assert_int_equal(ids[0], 2000);
	assert_int_equal(ids[1], 4000);
	assert_int_equal(do_write(f, "jobC", OST_INDEX, 3000, 0, "abc", 3), -ESTALE);
	assert_int_equal(do_write(f, "jobC", OST_INDEX, 99999, 0, "abc", 3), -ESTALE);
	assert_int_equal(do_write(f, "jobC", OST_INDEX, 4000, 0, "abc", 3), 0);
}

static void test_server_destroy_list_statfs(void **state)
{
	fixture *f = *state;
	uint64_t ids[64];
	size_t n;
	uint8_t out[32];
	size_t olen;
	pfs_rbuf b;

	for (uint64_t id = 1; id <= 7; id++)
		assert_int_equal(do_write(f, "jobC", OST_INDEX, id * 1000, 0, "abc", 3), 0);
	list_all(f, 3, ids, &n);
	assert_int_equal(n, 7);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(ids[i], (i + 1) * 1000);
	/* Destroy two (one twice: missing is success) and list again. */
	assert_int_equal(do_obj_op(f->ctl, PFS_OP_OSS_DESTROY, OST_INDEX, 2000, 0, 0, 0, NULL, 0,
				   NULL), 0);
	assert_int_equal(do_obj_op(f->ctl, PFS_OP_OSS_DESTROY, OST_INDEX, 5000, 0, 0, 0, NULL, 0,
				   NULL), 0);
	assert_int_equal(do_obj_op(f->ctl, PFS_OP_OSS_DESTROY, OST_INDEX, 5000, 0, 0, 0, NULL, 0,
				   NULL), 0);
	list_all(f, 100, ids, &n);
	assert_int_equal(n, 5);
	assert_int_equal(ids[1], 3000);
	assert_int_equal(ids[3], 6000);
	/* STATFS on both ports: objects counted. */
	for (int port = 0; port < 2; port++) {
		pfs_wbuf w;
		pfs_wbuf_init(&w);
		pfs_wbuf_u32(&w, OST_INDEX);
		assert_int_equal(call(port ? f->ctl : f->data, PFS_OP_OSS_STATFS, NULL, &w, NULL,
				      0, out, sizeof(out), &olen), 0);
		pfs_wbuf_free(&w);
		pfs_rbuf_init(&b, out, olen);
		uint64_t total = pfs_rbuf_u64(&b), avail = pfs_rbuf_u64(&b);
		assert_true(total > 0 && avail <= total);
		assert_int_equal(pfs_rbuf_u64(&b), 5);
		assert_int_equal(pfs_rbuf_done(&b), 0);
	}
}

static void test_server_jobstats(void **state)
{
	fixture *f = *state;
	uint8_t buf[4096] = { 0 };
	size_t got;
	pfs_rpc_reply rep = { 0 };
	pfs_rbuf b;
	uint32_t n;
	int seen_a = 0, seen_b = 0;

	assert_int_equal(do_write(f, "alpha", OST_INDEX, 1, 0, buf, 1000), 0);
	assert_int_equal(do_write(f, "alpha", OST_INDEX, 1, 1000, buf, 24), 0);
	assert_int_equal(do_read(f, "beta", OST_INDEX, 1, 0, 4096, buf, &got), 0);
	assert_int_equal(got, 1024);
	assert_int_equal(do_obj_op(f->data, PFS_OP_OSS_SYNC, OST_INDEX, 1, 0, 0, 0, NULL, 0,
				   NULL), 0); /* job "job-x": other */
	pfs_rpc_reply_init(&rep);
	assert_int_equal(pfs_rpc_call(f->ctl, PFS_OP_OSS_JOBSTATS, NULL, 0, NULL, 0, NULL, 0,
				      &rep), 0);
	pfs_rbuf_init(&b, rep.data, rep.len);
	n = pfs_rbuf_u32(&b);
	assert_int_equal(n, 3);
	for (uint32_t i = 0; i < n; i++) {
		pfs_job_stats js;
		assert_int_equal(pfs_job_stats_decode(&b, &js), 0);
		assert_int_equal(js.queued, 0);
		if (!strcmp(js.job, "alpha")) {
			seen_a = 1;
			assert_int_equal(js.write_rpcs, 2);
			assert_int_equal(js.write_bytes, 1024);
			assert_int_equal(js.read_rpcs, 0);
		} else if (!strcmp(js.job, "beta")) {
			seen_b = 1;
			assert_int_equal(js.read_rpcs, 1);
			assert_int_equal(js.read_bytes, 4096); /* requested bytes */
		} else {
			assert_string_equal(js.job, "job-x");
			assert_int_equal(js.other_rpcs, 1);
		}
	}
	assert_int_equal(pfs_rbuf_done(&b), 0);
	assert_true(seen_a && seen_b);
	pfs_rpc_reply_free(&rep);
}

/* WRITEV: its extents land where they say (touching ones in one write),
 * the reply is the bytes written, and jobstats count it as one write of
 * the job (QoS sees the write it is). */
static void test_server_writev(void **state)
{
	fixture *f = *state;
	uint8_t out[8], buf[16];
	pfs_rpc_reply rep = { 0 };
	size_t n = 0, got = 0;
	const uint64_t off[3] = { 2, 4, 8 };
	const uint32_t len[3] = { 2, 2, 1 };
	pfs_wbuf w;
	pfs_rbuf b;
	uint32_t nj;
	int seen = 0;

	assert_int_equal(do_write(f, "vjob", OST_INDEX, 5, 0, "0123456789", 10), 0);
	pfs_wbuf_init(&w);
	pfs_wbuf_u32(&w, OST_INDEX);
	pfs_wbuf_u64(&w, 5);
	pfs_wbuf_u32(&w, 3);
	for (int i = 0; i < 3; i++) {
		pfs_wbuf_u64(&w, off[i]);
		pfs_wbuf_u32(&w, len[i]);
	}
	assert_int_equal(call(f->data, PFS_OP_OSS_WRITEV, "vjob", &w, "abcdZ", 5, out,
			      sizeof(out), &n), 0);
	pfs_rbuf_init(&b, out, n);
	assert_int_equal(pfs_rbuf_u32(&b), 5);
	assert_int_equal(pfs_rbuf_done(&b), 0);
	/* a table the decoder refuses: nothing written */
	pfs_wbuf_u32(&w, OST_INDEX);
	pfs_wbuf_u64(&w, 5);
	pfs_wbuf_u32(&w, 2);
	pfs_wbuf_u64(&w, 0);
	pfs_wbuf_u32(&w, 2);
	pfs_wbuf_u64(&w, 1);
	pfs_wbuf_u32(&w, 1);
	assert_int_equal(call(f->data, PFS_OP_OSS_WRITEV, "vjob", &w, "xyz", 3, NULL, 0, NULL),
			 -EINVAL);
	pfs_wbuf_free(&w);
	assert_int_equal(do_read(f, "vjob", OST_INDEX, 5, 0, 10, buf, &got), 0);
	assert_int_equal(got, 10);
	assert_memory_equal(buf, "01abcd67Z9", 10);
	pfs_rpc_reply_init(&rep);
	assert_int_equal(pfs_rpc_call(f->ctl, PFS_OP_OSS_JOBSTATS, NULL, 0, NULL, 0, NULL, 0,
				      &rep), 0);
	pfs_rbuf_init(&b, rep.data, rep.len);
	nj = pfs_rbuf_u32(&b);
	for (uint32_t i = 0; i < nj; i++) {
		pfs_job_stats js;

		assert_int_equal(pfs_job_stats_decode(&b, &js), 0);
		if (strcmp(js.job, "vjob"))
			continue;
		seen = 1;
		assert_int_equal(js.write_rpcs, 2);
		assert_int_equal(js.write_bytes, 15);
	}
	assert_true(seen);
	pfs_rpc_reply_free(&rep);
}

static void test_server_request_errors(void **state)
{
	fixture *f = *state;
	uint8_t buf[16];
	size_t got;
	pfs_wbuf w;

	pfs_wbuf_init(&w);
	/* OST not served here. */
	assert_int_equal(do_read(f, "j", OST_INDEX + 1, 1, 0, 10, buf, &got), -ENODEV);
	assert_int_equal(do_obj_op(f->ctl, PFS_OP_OSS_DESTROY, 99, 1, 0, 0, 0, NULL, 0, NULL),
			 -ENODEV);
	/* Too long a read. */
	assert_int_equal(do_read(f, "j", OST_INDEX, 1, 0, PFS_MAX_IO + 1, buf, &got), -EINVAL);
	/* Malformed: a READ missing its length, one with a trailing byte, and a
	 * WRITE announcing more bytes than it carries. */
	pfs_wbuf_u32(&w, OST_INDEX);
	pfs_wbuf_u64(&w, 1);
	pfs_wbuf_u64(&w, 0);
	assert_int_equal(call(f->data, PFS_OP_OSS_READ, NULL, &w, NULL, 0, NULL, 0, NULL),
			 -EBADMSG);
	pfs_wbuf_u32(&w, OST_INDEX);
	pfs_wbuf_u64(&w, 1);
	pfs_wbuf_u64(&w, 0);
	pfs_wbuf_u32(&w, 4);
	pfs_wbuf_u8(&w, 0);
	assert_int_equal(call(f->data, PFS_OP_OSS_READ, NULL, &w, NULL, 0, NULL, 0, NULL),
			 -EBADMSG);
	pfs_wbuf_u32(&w, OST_INDEX);
	pfs_wbuf_u64(&w, 1);
	pfs_wbuf_u64(&w, 0);
	pfs_wbuf_u32(&w, 100);
	assert_int_equal(call(f->data, PFS_OP_OSS_WRITE, NULL, &w, "abc", 3, NULL, 0, NULL),
			 -EBADMSG);
	/* A WRITE announcing more than PFS_MAX_IO. */
	pfs_wbuf_u32(&w, OST_INDEX);
	pfs_wbuf_u64(&w, 1);
	pfs_wbuf_u64(&w, 0);
	pfs_wbuf_u32(&w, PFS_MAX_IO + 1);
	assert_int_equal(call(f->data, PFS_OP_OSS_WRITE, NULL, &w, "abc", 3, NULL, 0, NULL),
			 -EINVAL);
	/* Offsets past what a file can hold. */
	assert_int_equal(do_write(f, "j", OST_INDEX, 1, UINT64_MAX - 1, "ab", 2), -EFBIG);
	/* Unknown opcodes, and each port's opcodes on the other port. */
	assert_int_equal(call(f->data, 9999, NULL, NULL, NULL, 0, NULL, 0, NULL), -EOPNOTSUPP);
	assert_int_equal(call(f->ctl, 9999, NULL, NULL, NULL, 0, NULL, 0, NULL), -EOPNOTSUPP);
	pfs_wbuf_u32(&w, OST_INDEX);
	pfs_wbuf_u64(&w, 1);
	assert_int_equal(call(f->data, PFS_OP_OSS_DESTROY, NULL, &w, NULL, 0, NULL, 0, NULL),
			 -EOPNOTSUPP);
	pfs_wbuf_u32(&w, OST_INDEX);
	pfs_wbuf_u64(&w, 1);
	assert_int_equal(call(f->ctl, PFS_OP_OSS_STAT, NULL, &w, NULL, 0, NULL, 0, NULL),
			 -EOPNOTSUPP);
	/* JOBSTATS takes no payload. */
	pfs_wbuf_u32(&w, 1);
	assert_int_equal(call(f->ctl, PFS_OP_OSS_JOBSTATS, NULL, &w, NULL, 0, NULL, 0, NULL),
			 -EBADMSG);
	pfs_wbuf_free(&w);
	/* Still serving. */
	assert_int_equal(do_write(f, "j", OST_INDEX, 1, 0, "ok", 2), 0);
}

static void test_server_index_unknown(void **state)
{
	fixture *f = *state;
	uint8_t buf[16];
	size_t got;

	/* Before registration: -EAGAIN (the client retries), not -ENODEV. */
	assert_int_equal(oss_server_set_index(f->srv, 0, OSS_INDEX_NONE), 0);
	assert_int_equal(do_read(f, "j", OST_INDEX, 1, 0, 10, buf, &got), -EAGAIN);
	assert_int_equal(do_read(f, "j", 1234, 1, 0, 10, buf, &got), -EAGAIN);
	assert_int_equal(oss_server_set_index(f->srv, 0, 42), 0);
	assert_int_equal(oss_server_get_index(f->srv, 0), 42);
	assert_int_equal(do_read(f, "j", OST_INDEX, 1, 0, 10, buf, &got), -ENODEV);
	assert_int_equal(do_read(f, "j", 42, 1, 0, 10, buf, &got), 0);
	assert_int_equal(oss_server_set_index(f->srv, 1, 1), -EINVAL);
	assert_int_equal(oss_server_set_index(f->srv, 0, -2), -EINVAL);
}

/* ---- raw frames ---- */

/* Wait (generously; not a speed test) until n requests are queued. */
#define WAIT_QUEUED(srv, n)                                                     \
	do {                                                                    \
		for (int w_ = 0; w_ < 20000 &&                                  \
				 oss_sched_queued(oss_server_sched(srv, 0)) != (n); w_++)  \
			usleep(1000);                                           \
		assert_int_equal(oss_sched_queued(oss_server_sched(srv, 0)), (n)); \
	} while (0)

static int raw_connect(uint16_t port)
{
	int fd = -1;

	assert_int_equal(pfs_net_connect("127.0.0.1", port, 5000, &fd), 0);
	assert_int_equal(pfs_net_set_timeout(fd, 5000), 0);
	return fd;
}

/* After garbage the server either answers with an error or closes:
 * never a success, never a hang (the socket has a timeout). */
static void expect_error_or_close(int fd)
{
	pfs_hdr h;
	uint8_t *dyn = NULL, *data;
	int rc = pfs_net_recv_frame(fd, &h, PFS_MAX_PAYLOAD, NULL, 0, &dyn, &data);

	if (rc == 0) {
		assert_true(h.flags & PFS_F_REPLY);
		assert_true(h.status < 0);
	} else {
		assert_true(rc == -ECONNRESET || rc == -EPIPE);
	}
	free(dyn);
}

static void send_hdr(int fd, uint16_t op, uint32_t payload_len, uint32_t magic)
{
	pfs_hdr h;
	uint8_t b[PFS_HDR_LEN];

	pfs_hdr_init(&h, op, 1, 1, "raw");
	h.payload_len = payload_len;
	pfs_hdr_encode(&h, b);
	if (magic) {
		b[0] = (uint8_t)magic;
		b[1] = (uint8_t)(magic >> 8);
	}
	assert_int_equal(pfs_net_write_all(fd, b, sizeof(b)), 0);
}

static void test_server_garbage_frames(void **state)
{
	fixture *f = *state;
	uint16_t ports[2] = { oss_server_data_port(f->srv), oss_server_ctl_port(f->srv) };
	uint8_t junk[200];
	size_t got;

	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)(i * 37 + 11);
	for (int p = 0; p < 2; p++) {
		int fd;

		/* Random bytes. */
		fd = raw_connect(ports[p]);
		assert_int_equal(pfs_net_write_all(fd, junk, sizeof(junk)), 0);
		expect_error_or_close(fd);
		close(fd);
		/* Bad magic in an otherwise good header. */
		fd = raw_connect(ports[p]);
		send_hdr(fd, PFS_OP_PING, 0, 0xdead);
		expect_error_or_close(fd);
		close(fd);
		/* Oversized payload announced. */
		fd = raw_connect(ports[p]);
		send_hdr(fd, PFS_OP_OSS_WRITE, PFS_MAX_PAYLOAD + 1, 0);
		expect_error_or_close(fd);
		close(fd);
		/* Truncated: header promises 100 bytes, 10 arrive, then EOF. */
		fd = raw_connect(ports[p]);
		send_hdr(fd, PFS_OP_OSS_READ, 100, 0);
		assert_int_equal(pfs_net_write_all(fd, junk, 10), 0);
		shutdown(fd, SHUT_WR);
		expect_error_or_close(fd);
		close(fd);
		/* Half a header, then EOF. */
		fd = raw_connect(ports[p]);
		assert_int_equal(pfs_net_write_all(fd, junk, PFS_HDR_LEN / 2), 0);
		shutdown(fd, SHUT_WR);
		expect_error_or_close(fd);
		close(fd);
		/* A well-formed frame whose payload is junk, per opcode. */
		for (uint16_t op = PFS_OP_OSS_READ; op <= PFS_OP_OSS_STATFS; op++) {
			fd = raw_connect(ports[p]);
			send_hdr(fd, op, 7, 0);
			assert_int_equal(pfs_net_write_all(fd, junk, 7), 0);
			expect_error_or_close(fd);
			close(fd);
		}
		for (uint16_t op = PFS_OP_OSS_DESTROY; op <= PFS_OP_OSS_JOBSTATS; op++) {
			fd = raw_connect(ports[p]);
			send_hdr(fd, op, 3, 0);
			assert_int_equal(pfs_net_write_all(fd, junk, 3), 0);
			expect_error_or_close(fd);
			close(fd);
		}
	}
	/* The server still answers good requests. */
	assert_int_equal(do_write(f, "j", OST_INDEX, 3, 0, "still", 5), 0);
	assert_int_equal(do_read(f, "j", OST_INDEX, 3, 0, 5, junk, &got), 0);
	assert_int_equal(got, 5);
	assert_memory_equal(junk, "still", 5);
	ping(f->ctl);
}

/* A connection that closes with requests queued must not leak or crash:
 * the queued requests still run and their replies fail quietly. */
static void test_server_close_with_requests_queued(void **state)
{
	fixture *f = *state;
	static uint8_t data[65536];
	uint8_t buf[8];
	size_t got;
	pfs_wbuf w;

	pfs_wbuf_init(&w);
	for (int k = 0; k < 3; k++) {
		int fd = raw_connect(oss_server_data_port(f->srv));
		for (int i = 0; i < 20; i++) {
			pfs_hdr h;
			pfs_wbuf_reset(&w);
			pfs_wbuf_u32(&w, OST_INDEX);
			pfs_wbuf_u64(&w, 50 + (uint64_t)i);
			pfs_wbuf_u64(&w, 0);
			pfs_wbuf_u32(&w, sizeof(data));
			pfs_hdr_init(&h, PFS_OP_OSS_WRITE, (uint64_t)i + 1, 1, "burst");
			assert_int_equal(pfs_net_send_frame(fd, &h, w.data, w.len, data,
							    sizeof(data)), 0);
		}
		close(fd);
	}
	pfs_wbuf_free(&w);
	assert_int_equal(do_read(f, "j", OST_INDEX, 50, 0, 8, buf, &got), 0);
}

/* Deterministic fuzzing: well-framed requests with every opcode of both
 * ports and random payloads (random lengths, random fields, sometimes a
 * valid prefix); every one must get a reply on the same connection. */
static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void test_server_fuzz_payloads(void **state)
{
	fixture *f = *state;
	static const uint16_t ops[] = {
		PFS_OP_PING, PFS_OP_OSS_READ, PFS_OP_OSS_WRITE, PFS_OP_OSS_TRUNCATE,
		PFS_OP_OSS_PUNCH, PFS_OP_OSS_STAT, PFS_OP_OSS_SYNC, PFS_OP_OSS_STATFS,
		PFS_OP_OSS_DESTROY, PFS_OP_OSS_LIST_OBJECTS, PFS_OP_OSS_JOBSTATS, PFS_OP_OSS_WRITEV,
		PFS_OP_MDS_LOOKUP, 0, 65535,
	};
	uint8_t buf[256];
	size_t got;

	for (int p = 0; p < 2; p++) {
		int fd = raw_connect(p ? oss_server_ctl_port(f->srv) : oss_server_data_port(f->srv));

		for (int i = 0; i < 2000; i++) {
			uint16_t op = ops[rnd() % (sizeof(ops) / sizeof(ops[0]))];
			size_t len = rnd() % 40;
			pfs_hdr h, r;
			uint8_t *dyn = NULL, *data;

			for (size_t k = 0; k < len; k++)
				buf[k] = (uint8_t)rnd();
			/* Often a real OST index and small numbers, so requests
			 * get past the first checks and reach the store. */
			if (len >= 4 && rnd() % 2) {
				buf[0] = OST_INDEX;
				buf[1] = buf[2] = buf[3] = 0;
			}
			if (len >= 12 && rnd() % 2)
				memset(buf + 7, 0, 5);
			pfs_hdr_init(&h, op, (uint64_t)i + 1, 1, "fuzz");
			assert_int_equal(pfs_net_send_frame(fd, &h, buf, len, NULL, 0), 0);
			assert_int_equal(pfs_net_recv_frame(fd, &r, PFS_MAX_PAYLOAD, NULL, 0, &dyn,
							    &data), 0);
			assert_int_equal(r.req_id, (uint64_t)i + 1);
			assert_true(r.flags & PFS_F_REPLY);
			if (op == PFS_OP_PING) {
				assert_int_equal(r.status, 0);
				assert_int_equal(r.payload_len, len);
			}
			free(dyn);
		}
		close(fd);
	}
	/* The OST is still consistent and served. */
	assert_int_equal(do_write(f, "j", OST_INDEX, 3, 0, "fine", 4), 0);
	assert_int_equal(do_read(f, "j", OST_INDEX, 3, 0, 4, buf, &got), 0);
	assert_int_equal(got, 4);
	assert_memory_equal(buf, "fine", 4);
}

static int hold_job(oss_sched *s)
{
	static const char *const held[] = { "held" };
	qos_tbf_rule_spec sp;

	qos_tbf_rule_spec_init(&sp);
	sp.jobids = held;
	sp.n_jobids = 1;
	sp.rate = 0.0;
	sp.depth = 1.0;
	return oss_nrs_tbf_rule_start(s, "hold", &sp);
}

/* With the TBF discipline, a job whose rule has rate 0 gets one request
 * (the bucket's token) and then waits; other jobs are served meanwhile;
 * stopping the server with such requests queued must neither hang nor
 * leak (they are drained and answered). */
static void test_server_tbf_held_requests_and_stop(void **state)
{
	char tmp[64] = "/tmp/pfs-test-oss-XXXXXX", dir[96], err[256], cmd[128];
	oss_server_opts so = { 0 };
	fixture f = { 0 };
	pfs_wbuf w;
	int fd;
	uint8_t buf[8];
	size_t got;

	pfs_log_set_sink(quiet, NULL);
	assert_non_null(mkdtemp(tmp));
	snprintf(dir, sizeof(dir), "%s/ost", tmp);
	assert_int_equal(oss_store_open(dir, NULL, &f.st, err, sizeof(err)), 0);
	so.host = "127.0.0.1";
	so.io_threads = 2;
	so.osts = &f.st;
	so.n_osts = 1;
	so.sched = &oss_sched_tbf;
	assert_int_equal(oss_server_start(&so, &f.srv, err, sizeof(err)), 0);
	assert_int_equal(oss_server_set_index(f.srv, 0, OST_INDEX), 0);
	assert_string_equal(oss_sched_name(oss_server_sched(f.srv, 0)), "tbf");
	assert_int_equal(hold_job(oss_server_sched(f.srv, 0)), 0);
	assert_int_equal(pfs_rpc_pool_create("127.0.0.1", oss_server_data_port(f.srv), NULL,
					     &f.data), 0);
	/* Three writes of the held job, without waiting for replies. */
	fd = raw_connect(oss_server_data_port(f.srv));
	pfs_wbuf_init(&w);
	for (int i = 0; i < 3; i++) {
		pfs_hdr h;
		pfs_wbuf_reset(&w);
		pfs_wbuf_u32(&w, OST_INDEX);
		pfs_wbuf_u64(&w, 10 + (uint64_t)i);
		pfs_wbuf_u64(&w, 0);
		pfs_wbuf_u32(&w, 4);
		pfs_hdr_init(&h, PFS_OP_OSS_WRITE, (uint64_t)i + 1, 1, "held");
		assert_int_equal(pfs_net_send_frame(fd, &h, w.data, w.len, "held", 4), 0);
	}
	pfs_wbuf_free(&w);
	/* The first one is answered (the bucket's only token) ... */
	{
		pfs_hdr r;
		uint8_t *dyn = NULL, *data;
		assert_int_equal(pfs_net_recv_frame(fd, &r, PFS_MAX_PAYLOAD, NULL, 0, &dyn, &data),
				 0);
		assert_int_equal(r.status, 0);
		assert_int_equal(r.req_id, 1);
		free(dyn);
	}
	/* ... another job is not held behind the other two ... */
	assert_int_equal(do_write(&f, "free", OST_INDEX, 1, 0, "go", 2), 0);
	assert_int_equal(do_read(&f, "free", OST_INDEX, 1, 0, 2, buf, &got), 0);
	assert_int_equal(got, 2);
	WAIT_QUEUED(f.srv, 2);
	/* ... and stop returns, having drained them. */
	pfs_rpc_pool_destroy(f.data);
	oss_server_stop(f.srv);
	close(fd);
	assert_int_equal(oss_store_read(f.st, 12, 0, buf, 4, &got), 0);
	assert_int_equal(got, 4);
	oss_store_close(f.st);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	assert_int_equal(system(cmd), 0);
	pfs_log_set_sink(NULL, NULL);
}

typedef struct par {
	fixture *f;
	int id, errors;
} par;

static void *par_main(void *arg)
{
	par *p = arg;
	uint8_t w[3000], r[3000];
	char job[16];

	snprintf(job, sizeof(job), "par%d", p->id);
	for (int i = 0; i < 50; i++) {
		size_t got = 0;
		memset(w, p->id * 16 + i, sizeof(w));
		if (do_write(p->f, job, OST_INDEX, 100 + (uint64_t)p->id, (uint64_t)i * 3000, w,
			     sizeof(w)))
			p->errors++;
		if (do_read(p->f, job, OST_INDEX, 100 + (uint64_t)p->id, (uint64_t)i * 3000,
			    sizeof(r), r, &got) || got != sizeof(r) || memcmp(r, w, sizeof(r)))
			p->errors++;
	}
	return NULL;
}

static void test_server_parallel_clients(void **state)
{
	fixture *f = *state;
	pthread_t th[4];
	par p[4];

	for (int i = 0; i < 4; i++) {
		p[i].f = f;
		p[i].id = i;
		p[i].errors = 0;
		assert_int_equal(pthread_create(&th[i], NULL, par_main, &p[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(p[i].errors, 0);
	}
}

static int setup_capa(void **state)
{
	int rc;

	setup_key = KCAP;
	rc = setup(state);
	setup_key = NULL;
	return rc;
}

static pfs_capa capa(uint64_t obj, uint32_t rights, uint64_t expiry, uint64_t client,
		     const uint8_t *key)
{
	pfs_capa c = { .ost = OST_INDEX, .object = obj, .rights = rights, .expiry = expiry,
		       .client_id = client };

	pfs_capa_mint(&c, key);
	return c;
}

/* WRITE/READ/TRUNCATE of object obj with capability c (NULL: none). */
static int capa_op(fixture *f, uint16_t op, uint64_t obj, const pfs_capa *c)
{
	static const char data[] = "0123456789";
	uint8_t out[64];
	pfs_wbuf w;
	size_t n;
	int rc;

	pfs_wbuf_init(&w);
	pfs_wbuf_u32(&w, OST_INDEX);
	pfs_wbuf_u64(&w, obj);
	if (op == PFS_OP_OSS_WRITE || op == PFS_OP_OSS_READ) {
		pfs_wbuf_u64(&w, 0);
		pfs_wbuf_u32(&w, 10);
	} else if (op == PFS_OP_OSS_TRUNCATE) {
		pfs_wbuf_u64(&w, 5);
	}
	if (c)
		pfs_capa_encode(&w, c);
	rc = call(f->data, op, "job-c", &w, op == PFS_OP_OSS_WRITE ? data : NULL,
		  op == PFS_OP_OSS_WRITE ? 10 : 0, out, sizeof(out), &n);
	pfs_wbuf_free(&w);
	return rc;
}

/* Every object request needs a capability for its object and client. */
static void test_capabilities(void **state)
{
	fixture *f = *state;
	uint64_t now = (uint64_t)time(NULL);
	uint8_t other[PFS_CAPA_KEY_LEN] = { 1 };
	pfs_capa good = capa(9, PFS_CAPA_ALL, now + 600, 77, KCAP);
	pfs_capa ro = capa(9, PFS_CAPA_READ, now + 600, 77, KCAP);
	pfs_capa c;

	/* without, forged, altered, expired, for another client or object */
	assert_int_equal(capa_op(f, PFS_OP_OSS_WRITE, 9, NULL), -EACCES);
	assert_int_equal(capa_op(f, PFS_OP_OSS_READ, 9, NULL), -EACCES);
	assert_int_equal(capa_op(f, PFS_OP_OSS_TRUNCATE, 9, NULL), -EACCES);
	assert_int_equal(capa_op(f, PFS_OP_OSS_SYNC, 9, NULL), -EACCES);
	c = capa(9, PFS_CAPA_ALL, now + 600, 77, other);
	assert_int_equal(capa_op(f, PFS_OP_OSS_WRITE, 9, &c), -EACCES);
	c = ro;
	c.rights = PFS_CAPA_ALL;
	assert_int_equal(capa_op(f, PFS_OP_OSS_WRITE, 9, &c), -EACCES);
	c = capa(9, PFS_CAPA_ALL, now - 1, 77, KCAP);
	assert_int_equal(capa_op(f, PFS_OP_OSS_WRITE, 9, &c), -EKEYEXPIRED);
	assert_int_equal(capa_op(f, PFS_OP_OSS_READ, 9, &c), -EKEYEXPIRED);
	c = capa(9, PFS_CAPA_ALL, now + 600, 78, KCAP);
	assert_int_equal(capa_op(f, PFS_OP_OSS_WRITE, 9, &c), -EACCES);
	assert_int_equal(capa_op(f, PFS_OP_OSS_WRITE, 10, &good), -EACCES);
	/* nothing was written: the object is still empty */
	pfs_wbuf w;
	uint8_t so[16];
	size_t sn = 0;
	pfs_wbuf_init(&w);
	pfs_wbuf_u32(&w, OST_INDEX);
	pfs_wbuf_u64(&w, 9);
	pfs_capa_encode(&w, &ro);
	assert_int_equal(call(f->data, PFS_OP_OSS_STAT, "job-c", &w, NULL, 0, so, sizeof(so), &sn),
			 0);
	assert_int_equal(sn, 16);
	assert_int_equal(so[0] | so[1] | so[2] | so[3], 0);
	/* read-only: read yes, write and truncate no */
	assert_int_equal(capa_op(f, PFS_OP_OSS_WRITE, 9, &ro), -EACCES);
	assert_int_equal(capa_op(f, PFS_OP_OSS_WRITE, 9, &good), 0);
	assert_int_equal(capa_op(f, PFS_OP_OSS_READ, 9, &ro), 0);
	assert_int_equal(capa_op(f, PFS_OP_OSS_TRUNCATE, 9, &ro), -EACCES);
	assert_int_equal(capa_op(f, PFS_OP_OSS_TRUNCATE, 9, &good), 0);
	assert_int_equal(capa_op(f, PFS_OP_OSS_SYNC, 9, &ro), 0);
	/* statfs is not about an object */
	pfs_wbuf_u32(&w, OST_INDEX);
	assert_int_equal(call(f->data, PFS_OP_OSS_STATFS, NULL, &w, NULL, 0, NULL, 0, NULL), 0);
	pfs_wbuf_free(&w);
}

/* WRITE data spliced from the socket into the object (oss/README.md):
 * large WRITEs take that path and land byte for byte, small ones are
 * received into memory, and a spliced WRITE without a valid capability,
 * or to a destroyed object, writes nothing; every pipe goes back. */
static void test_spliced_writes(void **state)
{
	fixture *f = *state;
	uint64_t now = (uint64_t)time(NULL), n0, n1;
	pfs_capa good = capa(21, PFS_CAPA_ALL, now + 600, 77, KCAP);
	pfs_capa bad = capa(21, PFS_CAPA_ALL, now + 600, 78, KCAP);
	pfs_capa gone = capa(22, PFS_CAPA_ALL, now + 600, 77, KCAP);
	static uint8_t data[1 << 20], back[1 << 20];
	unsigned held;
	size_t got = 0;
	uint8_t out[64];
	pfs_wbuf w;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 13 + (i >> 10));
	pfs_wbuf_init(&w);
	oss_server_write_splices(f->srv, &n0, &held);
	/* 1 MiB at 0, 64 KiB + 5 at an odd offset, 1000 bytes at the end */
	const struct { uint64_t off; uint32_t len; const pfs_capa *c; int rc; } ws[] = {
		{ 0, 1 << 20, &good, 0 },
		{ 4097, 65541, &good, 0 },
		{ (1 << 20) + 10, 1000, &good, 0 },
		{ 0, 1 << 20, &bad, -EACCES },
	};
	for (size_t i = 0; i < sizeof(ws) / sizeof(ws[0]); i++) {
		pfs_wbuf_u32(&w, OST_INDEX);
		pfs_wbuf_u64(&w, 21);
		pfs_wbuf_u64(&w, ws[i].off);
		pfs_wbuf_u32(&w, ws[i].len);
		pfs_capa_encode(&w, ws[i].c);
		assert_int_equal(call(f->data, PFS_OP_OSS_WRITE, "job-s", &w,
				      i == 3 ? back : data, ws[i].len, out, sizeof(out), NULL),
				 ws[i].rc);
	}
	oss_server_write_splices(f->srv, &n1, &held);
	assert_int_equal(n1 - n0, 3); /* the two large good ones and the refused one */
	assert_int_equal(held, 0);
	/* what is in the object: the 1 MiB with the second write over it */
	memcpy(back, data, sizeof(back));
	memcpy(back + 4097, data, 65541);
	{
		static uint8_t r[1 << 20];

		assert_int_equal(oss_store_read(f->st, 21, 0, r, sizeof(r), &got), 0);
		assert_int_equal(got, sizeof(r));
		assert_memory_equal(r, back, sizeof(r));
		assert_int_equal(oss_store_read(f->st, 21, (1 << 20) + 10, r, 2000, &got), 0);
		assert_int_equal(got, 1000);
		assert_memory_equal(r, data, 1000);
	}
	/* a destroyed object: -ESTALE, not created */
	assert_int_equal(oss_store_destroy(f->st, 22), 0);
	pfs_wbuf_u32(&w, OST_INDEX);
	pfs_wbuf_u64(&w, 22);
	pfs_wbuf_u64(&w, 0);
	pfs_wbuf_u32(&w, 1 << 19);
	pfs_capa_encode(&w, &gone);
	assert_int_equal(call(f->data, PFS_OP_OSS_WRITE, "job-s", &w, data, 1 << 19, out,
			      sizeof(out), NULL),
			 -ESTALE);
	oss_server_write_splices(f->srv, &n1, &held);
	assert_int_equal(n1 - n0, 4);
	assert_int_equal(held, 0);
	pfs_wbuf_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_server_inline_reads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_server_no_inline_reads, setup_noinline, teardown),
		cmocka_unit_test_setup_teardown(test_server_write_read_stat, setup, teardown),
		cmocka_unit_test_setup_teardown(test_capabilities, setup_capa, teardown),
		cmocka_unit_test_setup_teardown(test_spliced_writes, setup_capa, teardown),
		cmocka_unit_test_setup_teardown(test_server_truncate_punch_sync, setup, teardown),
		cmocka_unit_test_setup_teardown(test_server_destroy_list_statfs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_server_destroy_batch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_server_jobstats, setup, teardown),
		cmocka_unit_test_setup_teardown(test_server_writev, setup, teardown),
		cmocka_unit_test_setup_teardown(test_server_request_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_server_index_unknown, setup, teardown),
		cmocka_unit_test_setup_teardown(test_server_garbage_frames, setup, teardown),
		cmocka_unit_test_setup_teardown(test_server_close_with_requests_queued, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_server_fuzz_payloads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_server_parallel_clients, setup, teardown),
		cmocka_unit_test(test_server_tbf_held_requests_and_stop),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
