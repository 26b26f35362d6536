/* fuzz_oss.c — libFuzzer target for the OSS request decoders: each input is
 * one request (fuzz_input.h).  Data-port opcodes go through oss_req_decode
 * (oss/req.h, no I/O) and its result is checked against the payload (a
 * WRITEV's extent table against its rules too), and through the spliced
 * WRITE's split decoder, which must agree with it;
 * control-port opcodes (DESTROY, LIST_OBJECTS, JOBSTATS, STATFS, QOS_STATS,
 * QOS_SET, NRS_RULE) are executed by oss_ctl_execute on a real OSS with one
 * OST in a temporary directory made once per process (its ports listen on
 * 127.0.0.1 and are never used). */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/log.h"
#include "common/proto.h"
#include "oss/ctl.h"
#include "oss/req.h"
#include "oss/server.h"
#include "oss/store.h"
#include "tests/fuzz/fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define OST_INDEX 0

static const uint16_t oss_ops[] = {
	PFS_OP_OSS_READ, PFS_OP_OSS_WRITE, PFS_OP_OSS_TRUNCATE, PFS_OP_OSS_PUNCH,
	PFS_OP_OSS_STAT, PFS_OP_OSS_SYNC, PFS_OP_OSS_STATFS, PFS_OP_OSS_WRITEV,
	PFS_OP_OSS_DESTROY, PFS_OP_OSS_LIST_OBJECTS, PFS_OP_OSS_JOBSTATS,
	PFS_OP_OSS_QOS_STATS, PFS_OP_OSS_QOS_SET, PFS_OP_OSS_NRS_RULE,
};

static oss_server *srv;
static char dir[] = "/tmp/pfs_fuzz_oss.XXXXXX";

static void cleanup(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "fuzz_oss: could not remove %s\n", dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static oss_store *st;
	oss_server_opts so = { 0 };
	char ost[64], err[256];

	pfs_log_init("fuzz_oss", PFS_LOG_ERR);
	if (!mkdtemp(dir))
		abort();
	atexit(cleanup);
	snprintf(ost, sizeof(ost), "%s/ost0", dir);
	if (oss_store_open(ost, NULL, &st, err, sizeof(err))) {
		fprintf(stderr, "fuzz_oss: %s\n", err);
		abort();
	}
	so.host = "127.0.0.1";
	so.io_threads = 1;
	so.osts = &st;
	so.n_osts = 1;
	if (oss_server_start(&so, &srv, err, sizeof(err)) ||
	    oss_server_set_index(srv, 0, OST_INDEX)) {
		fprintf(stderr, "fuzz_oss: %s\n", err);
		abort();
	}
	return 0;
}

/* The spliced-WRITE split (oss_req_write_bulk, oss_req_decode_split): a
 * bulk the server would splice is the tail of a payload the whole-frame
 * decoder takes as that WRITE, and the split decoder reads only the bytes
 * before it (an exact-size copy: ASan sees an overread) and agrees with
 * the whole-frame decoder; any other bulk it refuses. */
static void split_request(const pfs_hdr *h, const uint8_t *p, size_t n)
{
	oss_req_msg m, whole;
	uint32_t bulk = 0;
	uint8_t *copy;
	int rc, rcw;

	if (n >= OSS_REQ_WRITE_HEAD && n <= UINT32_MAX)
		bulk = oss_req_write_bulk((uint32_t)n, p);
	if (bulk > n - 24)
		__builtin_trap();
	if (!bulk) /* try the payload's last byte as a bulk length anyway */
		bulk = n ? p[n - 1] % (n + 1) : 0;
	copy = malloc(n - bulk + 1);
	if (!copy)
		return;
	memcpy(copy, p, n - bulk);
	rc = oss_req_decode_split(h->opcode, copy, n - bulk, bulk, &m);
	rcw = oss_req_decode(h->opcode, p, n, &whole);
	if (rc != 0 && rc != -EBADMSG && rc != -EINVAL && rc != -EOPNOTSUPP)
		__builtin_trap();
	if (rc == 0 && bulk) {
		if (h->opcode != PFS_OP_OSS_WRITE || m.data || m.len != bulk || rcw != 0 ||
		    m.ost != whole.ost || m.obj != whole.obj || m.off != whole.off ||
		    m.len != whole.len || m.has_cap != whole.has_cap)
			__builtin_trap();
	}
	free(copy);
}

static void data_request(const pfs_hdr *h, const uint8_t *p, size_t n)
{
	oss_req_msg m;
	int rc = oss_req_decode(h->opcode, p, n, &m);

	split_request(h, p, n);

	if (rc != 0 && rc != -EBADMSG && rc != -EINVAL && rc != -EOPNOTSUPP)
		__builtin_trap();
	if (rc)
		return;
	if ((h->opcode == PFS_OP_OSS_READ || h->opcode == PFS_OP_OSS_WRITE) &&
	    m.len > PFS_MAX_IO)
		__builtin_trap();
	if (h->opcode == PFS_OP_OSS_WRITEV) {
		/* the table's rules (common/proto.h): 1..PFS_WRITEV_MAX extents,
		 * each non-empty, ascending and disjoint, summing to len, the
		 * first at off; the bulk is exactly the payload's tail */
		uint64_t sum_len = 0, end = 0;

		if (!m.nvec || m.nvec > PFS_WRITEV_MAX || m.len > PFS_MAX_IO || !m.data ||
		    m.data + m.len != p + n)
			__builtin_trap();
		for (uint32_t i = 0; i < m.nvec; i++) {
			uint64_t off;
			uint32_t len;

			oss_req_vec(&m, i, &off, &len);
			if (!len || (i && off < end) || (!i && off != m.off))
				__builtin_trap();
			end = off + len;
			sum_len += len;
		}
		if (sum_len != m.len)
			__builtin_trap();
	}
	if (h->opcode == PFS_OP_OSS_WRITE || h->opcode == PFS_OP_OSS_WRITEV) {
		/* the bulk is exactly the payload's tail */
		if (!m.data || m.data + m.len != p + n)
			__builtin_trap();
		volatile uint8_t sum = 0;
		for (uint64_t i = 0; i < m.len; i++)
			sum ^= m.data[i];
		(void)sum;
	} else if (m.data) {
		__builtin_trap();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *payload;
	size_t len;
	pfs_hdr h;

	if (size > PFS_HDR_LEN + (64u << 10))
		return -1;
	fuzz_request(data, size, oss_ops, sizeof(oss_ops) / sizeof(oss_ops[0]), &h, &payload,
		     &len);
	if (h.opcode >= PFS_OP_OSS_READ && h.opcode < PFS_OP_OSS_DESTROY) {
		data_request(&h, payload, len);
	} else {
		pfs_wbuf w;
		int rc;

		/* the decoders must never read past payload_len: give them a
		 * copy of exactly that size (ASan sees an overread) */
		uint8_t *copy = len ? malloc(len) : NULL;
		if (len && !copy)
			return 0;
		if (len)
			memcpy(copy, payload, len);
		pfs_wbuf_init(&w);
		rc = oss_ctl_execute(srv, &h, copy, &w);
		if (rc > 0 || rc < -4095)
			__builtin_trap();
		pfs_wbuf_free(&w);
		free(copy);
	}
	return 0;
}
