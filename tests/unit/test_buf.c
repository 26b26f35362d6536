/* test_buf.c — payload codec: round trips, sticky errors, truncated and
 * oversized input, strings with embedded NULs. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "common/buf.h"
#include "common/msg.h"

static void test_buf_roundtrip(void **state)
{
	pfs_wbuf w;
	pfs_rbuf r;
	char s[16];

	pfs_wbuf_init(&w);
	pfs_wbuf_u8(&w, 0xab);
	pfs_wbuf_u16(&w, 0xbeef);
	pfs_wbuf_u32(&w, 0xdeadbeef);
	pfs_wbuf_u64(&w, 0x0102030405060708ull);
	pfs_wbuf_i64(&w, -5);
	pfs_wbuf_str(&w, "hello");
	assert_int_equal(pfs_wbuf_error(&w), 0);
	assert_int_equal(w.len, 1 + 2 + 4 + 8 + 8 + 4 + 5);
	assert_int_equal(w.data[3], 0xef); /* little-endian u32 */

	pfs_rbuf_init(&r, w.data, w.len);
	assert_int_equal(pfs_rbuf_u8(&r), 0xab);
	assert_int_equal(pfs_rbuf_u16(&r), 0xbeef);
	assert_int_equal(pfs_rbuf_u32(&r), 0xdeadbeef);
	assert_int_equal(pfs_rbuf_u64(&r), 0x0102030405060708ull);
	assert_int_equal(pfs_rbuf_i64(&r), -5);
	pfs_rbuf_cstr(&r, s, sizeof(s));
	assert_string_equal(s, "hello");
	assert_int_equal(pfs_rbuf_done(&r), 0);
	pfs_wbuf_free(&w);
}

static void test_buf_truncated(void **state)
{
	pfs_wbuf w;
	pfs_rbuf r;

	pfs_wbuf_init(&w);
	pfs_wbuf_u64(&w, 7);
	pfs_wbuf_str(&w, "name");
	for (size_t cut = 0; cut < w.len; cut++) {
		char s[16];
		pfs_rbuf_init(&r, w.data, cut);
		(void)pfs_rbuf_u64(&r);
		pfs_rbuf_cstr(&r, s, sizeof(s));
		assert_int_equal(pfs_rbuf_done(&r), -EBADMSG);
		/* sticky: further reads give zero and keep the error */
		assert_int_equal(pfs_rbuf_u32(&r), 0);
		assert_int_equal(pfs_rbuf_error(&r), -EBADMSG);
	}
	pfs_wbuf_free(&w);
}

static void test_buf_trailing_bytes(void **state)
{
	uint8_t b[6] = { 1, 0, 0, 0, 9, 9 };
	pfs_rbuf r;

	pfs_rbuf_init(&r, b, sizeof(b));
	assert_int_equal(pfs_rbuf_u32(&r), 1);
	assert_int_equal(pfs_rbuf_left(&r), 2);
	assert_int_equal(pfs_rbuf_done(&r), -EBADMSG);
}

static void test_buf_string_limits(void **state)
{
	pfs_wbuf w;
	pfs_rbuf r;
	char s[4];
	size_t n;

	pfs_wbuf_init(&w);
	pfs_wbuf_str(&w, "toolong");
	pfs_rbuf_init(&r, w.data, w.len);
	pfs_rbuf_cstr(&r, s, sizeof(s));
	assert_int_equal(pfs_rbuf_error(&r), -EBADMSG);
	assert_string_equal(s, "");

	/* A length prefix larger than the data. */
	pfs_wbuf_reset(&w);
	pfs_wbuf_u32(&w, 0xffffffffu);
	pfs_wbuf_bytes(&w, "abc", 3);
	pfs_rbuf_init(&r, w.data, w.len);
	assert_null(pfs_rbuf_str(&r, SIZE_MAX, &n));
	assert_int_equal(pfs_rbuf_error(&r), -EBADMSG);

	/* Embedded NUL is refused for C strings. */
	pfs_wbuf_reset(&w);
	pfs_wbuf_strn(&w, "a\0b", 3);
	pfs_rbuf_init(&r, w.data, w.len);
	pfs_rbuf_cstr(&r, s, sizeof(s));
	assert_int_equal(pfs_rbuf_error(&r), -EBADMSG);
	pfs_wbuf_free(&w);
}

static void test_buf_msg_types(void **state)
{
	pfs_wbuf w;
	pfs_rbuf r;
	pfs_cred c = { 1000, 100, 2, { 5, 6 } }, c2;
	pfs_attr a = { .ino = 9, .mode = 0100644, .nlink = 1, .uid = 1, .gid = 2, .size = 77,
		       .mtime_ns = -3, .blocks = 2048, .tepoch = 0xfffffffeu,
		       .flags = PFS_ATTR_SIZE_STALE }, a2;

	pfs_wbuf_init(&w);
	pfs_cred_encode(&w, &c);
	pfs_attr_encode(&w, &a);
	pfs_rbuf_init(&r, w.data, w.len);
	assert_int_equal(pfs_cred_decode(&r, &c2), 0);
	assert_int_equal(pfs_attr_decode(&r, &a2), 0);
	assert_int_equal(pfs_rbuf_done(&r), 0);
	assert_int_equal(c2.ngroups, 2);
	assert_true(pfs_cred_in_group(&c2, 6));
	assert_false(pfs_cred_in_group(&c2, 7));
	assert_int_equal(a2.ino, a.ino);
	assert_int_equal(a2.mode, a.mode);
	assert_int_equal(a2.nlink, a.nlink);
	assert_int_equal(a2.uid, a.uid);
	assert_int_equal(a2.gid, a.gid);
	assert_int_equal(a2.size, a.size);
	assert_int_equal(a2.mtime_ns, a.mtime_ns);
	assert_int_equal(a2.blocks, a.blocks);
	assert_int_equal(a2.tepoch, a.tepoch);
	assert_int_equal(a2.flags, PFS_ATTR_SIZE_STALE);
	/* the flags come last: an attr cut before them does not decode */
	pfs_rbuf_init(&r, w.data, w.len - 4);
	assert_int_equal(pfs_cred_decode(&r, &c2), 0);
	assert_int_equal(pfs_attr_decode(&r, &a2), -EBADMSG);

	/* Too many groups on the wire. */
	pfs_wbuf_reset(&w);
	pfs_wbuf_u32(&w, 0);
	pfs_wbuf_u32(&w, 0);
	pfs_wbuf_u32(&w, PFS_MAX_GROUPS + 1);
	pfs_rbuf_init(&r, w.data, w.len);
	assert_int_equal(pfs_cred_decode(&r, &c2), -EBADMSG);
	pfs_wbuf_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buf_roundtrip),
		cmocka_unit_test(test_buf_truncated),
		cmocka_unit_test(test_buf_trailing_bytes),
		cmocka_unit_test(test_buf_string_limits),
		cmocka_unit_test(test_buf_msg_types),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
