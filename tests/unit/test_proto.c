/* test_proto.c — frame header codec: round trip, field placement, and
 * rejection of bad magic, versions, oversized payloads and garbage. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/proto.h"

static void make_hdr(pfs_hdr *h)
{
	pfs_hdr_init(h, PFS_OP_OSS_WRITE, 0x1122334455667788ull, 0xa1a2a3a4a5a6a7a8ull, "job.42");
	h->payload_len = 1234;
	h->status = -ENOENT;
	h->flags = PFS_F_REPLY;
}

static void test_proto_roundtrip(void **state)
{
	pfs_hdr h, d;
	uint8_t b[PFS_HDR_LEN];
	char job[PFS_JOBID_MAX + 1];

	make_hdr(&h);
	pfs_hdr_encode(&h, b);
	assert_int_equal(pfs_hdr_decode(b, sizeof(b), PFS_MAX_PAYLOAD, &d), 0);
	assert_int_equal(d.opcode, PFS_OP_OSS_WRITE);
	assert_int_equal(d.req_id, 0x1122334455667788ull);
	assert_int_equal(d.client_id, 0xa1a2a3a4a5a6a7a8ull);
	assert_int_equal(d.payload_len, 1234);
	assert_int_equal(d.status, -ENOENT);
	assert_int_equal(d.flags, PFS_F_REPLY);
	pfs_hdr_jobid(&d, job);
	assert_string_equal(job, "job.42");
}

static void test_proto_little_endian(void **state)
{
	pfs_hdr h;
	uint8_t b[PFS_HDR_LEN];

	make_hdr(&h);
	pfs_hdr_encode(&h, b);
	/* magic "PFS1", then version 2 and the opcode, least significant byte first */
	assert_memory_equal(b, "PFS1", 4);
	assert_int_equal(b[4], PFS_PROTO_VERSION);
	assert_int_equal(b[5], 0);
	assert_int_equal(b[6], PFS_OP_OSS_WRITE & 0xff);
	assert_int_equal(b[16], 0x88);
	assert_int_equal(b[23], 0x11);
	assert_int_equal(b[32], 1234 & 0xff);
	assert_memory_equal(b + 48, "job.42", 6);
}

static void test_proto_rejects(void **state)
{
	pfs_hdr h, d;
	uint8_t b[PFS_HDR_LEN];

	make_hdr(&h);
	pfs_hdr_encode(&h, b);
	assert_int_equal(pfs_hdr_decode(b, PFS_HDR_LEN - 1, PFS_MAX_PAYLOAD, &d), -EAGAIN);
	assert_int_equal(pfs_hdr_decode(b, sizeof(b), 1000, &d), -EMSGSIZE);

	b[0] ^= 0xff;
	assert_int_equal(pfs_hdr_decode(b, sizeof(b), PFS_MAX_PAYLOAD, &d), -EBADMSG);
	b[0] ^= 0xff;

	h.version = 9;
	pfs_hdr_encode(&h, b);
	assert_int_equal(pfs_hdr_decode(b, sizeof(b), PFS_MAX_PAYLOAD, &d), -EPROTONOSUPPORT);

	/* credit, uid and gid round-trip at full width */
	make_hdr(&h);
	h.credit = 0xfffffff0u;
	h.uid = 4242;
	h.gid = 0xfffffffeu;
	pfs_hdr_encode(&h, b);
	assert_int_equal(pfs_hdr_decode(b, sizeof(b), PFS_MAX_PAYLOAD, &d), 0);
	assert_int_equal(d.credit, 0xfffffff0u);
	assert_int_equal(d.uid, 4242);
	assert_int_equal(d.gid, 0xfffffffeu);

	make_hdr(&h);
	h.flags = 0x80;
	pfs_hdr_encode(&h, b);
	assert_int_equal(pfs_hdr_decode(b, sizeof(b), PFS_MAX_PAYLOAD, &d), -EBADMSG);

	make_hdr(&h);
	h.status = 5; /* statuses are 0 or negative errnos */
	pfs_hdr_encode(&h, b);
	assert_int_equal(pfs_hdr_decode(b, sizeof(b), PFS_MAX_PAYLOAD, &d), -EBADMSG);
}

static void test_proto_jobid_full_width(void **state)
{
	pfs_hdr h, d;
	uint8_t b[PFS_HDR_LEN];
	char job[PFS_JOBID_MAX + 1];
	const char *lng = "0123456789abcdef0123456789abcdefTRUNCATED";

	pfs_hdr_init(&h, PFS_OP_PING, 1, 2, lng);
	pfs_hdr_encode(&h, b);
	assert_int_equal(pfs_hdr_decode(b, sizeof(b), PFS_MAX_PAYLOAD, &d), 0);
	pfs_hdr_jobid(&d, job);
	assert_int_equal(strlen(job), PFS_JOBID_MAX);
	assert_memory_equal(job, lng, PFS_JOBID_MAX);
}

static void test_proto_random_garbage(void **state)
{
	uint8_t b[PFS_HDR_LEN];
	pfs_hdr d;
	unsigned seed = 12345;
	int accepted = 0;

	for (int i = 0; i < 100000; i++) {
		for (size_t k = 0; k < sizeof(b); k++)
			b[k] = (uint8_t)rand_r(&seed);
		if (i & 1)
			memcpy(b, "PFS1\x01\x00", 6); /* valid prefix, garbage rest */
		if (pfs_hdr_decode(b, sizeof(b), PFS_MAX_PAYLOAD, &d) == 0) {
			accepted++;
			assert_true(d.payload_len <= PFS_MAX_PAYLOAD);
			assert_int_equal(d.magic, PFS_MAGIC);
		}
	}
	/* Random bytes essentially never form a valid header. */
	assert_true(accepted < 10);
}

static void test_proto_names(void **state)
{
	assert_string_equal(pfs_op_name(PFS_OP_MDS_LOOKUP), "MDS_LOOKUP");
	assert_string_equal(pfs_op_name(PFS_OP_OSS_READ), "OSS_READ");
	assert_string_equal(pfs_op_name(9999), "?");
	assert_string_equal(pfs_strerror(-EBADMSG), "malformed frame or payload");
	assert_string_equal(pfs_strerror(-ENOENT), strerror(ENOENT));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_proto_roundtrip),
		cmocka_unit_test(test_proto_little_endian),
		cmocka_unit_test(test_proto_rejects),
		cmocka_unit_test(test_proto_jobid_full_width),
		cmocka_unit_test(test_proto_random_garbage),
		cmocka_unit_test(test_proto_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
