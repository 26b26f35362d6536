/* test_oss_req.c — the OSS data-port request decoder (oss/req.c): every
 * opcode's layout, short and long payloads, oversized I/O, unknown opcodes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "common/buf.h"
#include "common/proto.h"
#include "oss/req.h"

static void test_req_read_write(void **state)
{
	pfs_wbuf w;
	oss_req_msg m;

	pfs_wbuf_init(&w);
	pfs_wbuf_u32(&w, 3);
	pfs_wbuf_u64(&w, 77);
	pfs_wbuf_u64(&w, 4096);
	pfs_wbuf_u32(&w, 5);
	assert_int_equal(oss_req_decode(PFS_OP_OSS_READ, w.data, w.len, &m), 0);
	assert_int_equal(m.ost, 3);
	assert_int_equal(m.obj, 77);
	assert_int_equal(m.off, 4096);
	assert_int_equal(m.len, 5);
	assert_null(m.data);
	/* a WRITE of 5 needs its 5 bytes, exactly */
	assert_int_equal(oss_req_decode(PFS_OP_OSS_WRITE, w.data, w.len, &m), -EBADMSG);
	assert_null(m.data);
	pfs_wbuf_bytes(&w, "hello", 5);
	assert_int_equal(oss_req_decode(PFS_OP_OSS_WRITE, w.data, w.len, &m), 0);
	assert_memory_equal(m.data, "hello", 5);
	assert_ptr_equal(m.data, w.data + w.len - 5);
	/* ...and a READ has no trailing bytes */
	assert_int_equal(oss_req_decode(PFS_OP_OSS_READ, w.data, w.len, &m), -EBADMSG);
	pfs_wbuf_u8(&w, 0);
	assert_int_equal(oss_req_decode(PFS_OP_OSS_WRITE, w.data, w.len, &m), -EBADMSG);
	assert_null(m.data);
	/* short header: every prefix is refused */
	for (size_t n = 0; n < 24; n++) {
		assert_int_equal(oss_req_decode(PFS_OP_OSS_READ, w.data, n, &m), -EBADMSG);
		assert_int_equal(oss_req_decode(PFS_OP_OSS_WRITE, w.data, n, &m), -EBADMSG);
	}
	pfs_wbuf_free(&w);

	/* over PFS_MAX_IO: -EINVAL, and the bulk is never looked at */
	pfs_wbuf_init(&w);
	pfs_wbuf_u32(&w, 0);
	pfs_wbuf_u64(&w, 1);
	pfs_wbuf_u64(&w, 0);
	pfs_wbuf_u32(&w, PFS_MAX_IO + 1);
	assert_int_equal(oss_req_decode(PFS_OP_OSS_READ, w.data, w.len, &m), -EINVAL);
	assert_int_equal(oss_req_decode(PFS_OP_OSS_WRITE, w.data, w.len, &m), -EINVAL);
	pfs_wbuf_free(&w);
}

static void test_req_others(void **state)
{
	pfs_wbuf w;
	oss_req_msg m;

	pfs_wbuf_init(&w);
	pfs_wbuf_u32(&w, 9);
	assert_int_equal(oss_req_decode(PFS_OP_OSS_STATFS, w.data, w.len, &m), 0);
	assert_int_equal(m.ost, 9);
	assert_int_equal(oss_req_decode(PFS_OP_OSS_STAT, w.data, w.len, &m), -EBADMSG);
	pfs_wbuf_u64(&w, 11);
	assert_int_equal(oss_req_decode(PFS_OP_OSS_STAT, w.data, w.len, &m), 0);
	assert_int_equal(m.obj, 11);
	assert_int_equal(oss_req_decode(PFS_OP_OSS_SYNC, w.data, w.len, &m), 0);
	assert_int_equal(oss_req_decode(PFS_OP_OSS_STATFS, w.data, w.len, &m), -EBADMSG);
	assert_int_equal(oss_req_decode(PFS_OP_OSS_TRUNCATE, w.data, w.len, &m), -EBADMSG);
	pfs_wbuf_u64(&w, 1ull << 40);
	assert_int_equal(oss_req_decode(PFS_OP_OSS_TRUNCATE, w.data, w.len, &m), 0);
	assert_int_equal(m.len, 1ull << 40);
	assert_int_equal(oss_req_decode(PFS_OP_OSS_PUNCH, w.data, w.len, &m), -EBADMSG);
	pfs_wbuf_u64(&w, 8192);
	assert_int_equal(oss_req_decode(PFS_OP_OSS_PUNCH, w.data, w.len, &m), 0);
	assert_int_equal(m.off, 1ull << 40);
	assert_int_equal(m.len, 8192);
	/* control-port and unknown opcodes are not data-port requests */
	assert_int_equal(oss_req_decode(PFS_OP_OSS_DESTROY, w.data, w.len, &m), -EOPNOTSUPP);
	assert_int_equal(oss_req_decode(PFS_OP_PING, w.data, w.len, &m), -EOPNOTSUPP);
	assert_int_equal(oss_req_decode(0xffff, NULL, 0, &m), -EOPNOTSUPP);
	assert_int_equal(oss_req_decode(PFS_OP_OSS_STATFS, NULL, 0, &m), -EBADMSG);
	pfs_wbuf_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_req_read_write),
		cmocka_unit_test(test_req_others),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
