/* test_oss_req.c — the OSS data-port request decoder (oss/req.c): every
 * opcode's layout, short and long payloads, oversized I/O, unknown opcodes,
 * WRITEV's extent table. */
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

/* WRITEV: n extents, their table, the capability, their bytes; a table
 * out of order, overlapping, with an empty extent or over the limits is
 * -EINVAL, a short or long payload -EBADMSG. */
static void writev_req(pfs_wbuf *w, uint32_t n, const uint64_t *off, const uint32_t *len,
		       int data)
{
	uint32_t sum = 0;

	pfs_wbuf_init(w);
	pfs_wbuf_u32(w, 2);
	pfs_wbuf_u64(w, 9);
	pfs_wbuf_u32(w, n);
	for (uint32_t i = 0; i < n; i++) {
		pfs_wbuf_u64(w, off[i]);
		pfs_wbuf_u32(w, len[i]);
		sum += len[i];
	}
	for (uint32_t i = 0; data && i < sum; i++)
		pfs_wbuf_u8(w, (uint8_t)('a' + i));
}

static void test_req_writev(void **state)
{
	uint64_t off[3] = { 100, 103, 4096 }, o;
	uint32_t len[3] = { 3, 2, 4 }, l;
	pfs_wbuf w;
	oss_req_msg m;

	writev_req(&w, 3, off, len, 1);
	assert_int_equal(oss_req_decode(PFS_OP_OSS_WRITEV, w.data, w.len, &m), 0);
	assert_int_equal(m.ost, 2);
	assert_int_equal(m.obj, 9);
	assert_int_equal(m.nvec, 3);
	assert_int_equal(m.off, 100);
	assert_int_equal(m.len, 9);
	assert_int_equal(m.need, PFS_CAPA_WRITE);
	assert_false(m.has_cap);
	assert_memory_equal(m.data, "abcdefghi", 9);
	oss_req_vec(&m, 2, &o, &l);
	assert_int_equal(o, 4096);
	assert_int_equal(l, 4);
	/* one byte short, one too many */
	assert_int_equal(oss_req_decode(PFS_OP_OSS_WRITEV, w.data, w.len - 1, &m), -EBADMSG);
	assert_null(m.data);
	pfs_wbuf_u8(&w, 0);
	assert_int_equal(oss_req_decode(PFS_OP_OSS_WRITEV, w.data, w.len, &m), -EBADMSG);
	pfs_wbuf_free(&w);
	/* overlapping, descending, empty */
	off[1] = 102;
	writev_req(&w, 3, off, len, 1);
	assert_int_equal(oss_req_decode(PFS_OP_OSS_WRITEV, w.data, w.len, &m), -EINVAL);
	pfs_wbuf_free(&w);
	off[1] = 103;
	off[2] = 50;
	writev_req(&w, 3, off, len, 1);
	assert_int_equal(oss_req_decode(PFS_OP_OSS_WRITEV, w.data, w.len, &m), -EINVAL);
	pfs_wbuf_free(&w);
	off[2] = 4096;
	len[1] = 0;
	writev_req(&w, 3, off, len, 1);
	assert_int_equal(oss_req_decode(PFS_OP_OSS_WRITEV, w.data, w.len, &m), -EINVAL);
	pfs_wbuf_free(&w);
	/* no extent, too many, more than PFS_MAX_IO (the bulk is not looked at) */
	writev_req(&w, 0, off, len, 0);
	assert_int_equal(oss_req_decode(PFS_OP_OSS_WRITEV, w.data, w.len, &m), -EINVAL);
	pfs_wbuf_free(&w);
	pfs_wbuf_init(&w);
	pfs_wbuf_u32(&w, 2);
	pfs_wbuf_u64(&w, 9);
	pfs_wbuf_u32(&w, PFS_WRITEV_MAX + 1);
	assert_int_equal(oss_req_decode(PFS_OP_OSS_WRITEV, w.data, w.len, &m), -EINVAL);
	pfs_wbuf_free(&w);
	len[0] = PFS_MAX_IO;
	len[1] = 1;
	off[1] = 100 + PFS_MAX_IO;
	off[2] = 200 + PFS_MAX_IO;
	writev_req(&w, 3, off, len, 0);
	assert_int_equal(oss_req_decode(PFS_OP_OSS_WRITEV, w.data, w.len, &m), -EINVAL);
	pfs_wbuf_free(&w);
	/* a table cut short */
	writev_req(&w, 2, off, len, 0);
	assert_int_equal(oss_req_decode(PFS_OP_OSS_WRITEV, w.data, 16 + 12, &m), -EBADMSG);
	for (size_t n = 0; n < 16; n++)
		assert_int_equal(oss_req_decode(PFS_OP_OSS_WRITEV, w.data, n, &m), -EBADMSG);
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

/* A WRITE's spliced data (oss_req_write_bulk, oss_req_decode_split): the
 * data length is named only for a payload of exactly the fields, an
 * optional capability and that many bytes; the split decoder takes the
 * fields (and capability) alone and refuses anything else. */
static void test_req_write_split(void **state)
{
	uint8_t capb[PFS_CAPA_LEN] = { 0 };
	uint8_t head[OSS_REQ_WRITE_HEAD];
	pfs_capa cap = { 0 };
	pfs_wbuf w;
	oss_req_msg m;

	cap.ost = 3;
	cap.object = 77;
	cap.rights = PFS_CAPA_WRITE;
	pfs_capa_pack(&cap, capb);
	pfs_wbuf_init(&w);
	pfs_wbuf_u32(&w, 3);
	pfs_wbuf_u64(&w, 77);
	pfs_wbuf_u64(&w, 8192);
	pfs_wbuf_u32(&w, 65536);
	pfs_wbuf_bytes(&w, capb, sizeof(capb));
	assert_int_equal(w.len, OSS_REQ_WRITE_HEAD);
	memcpy(head, w.data, sizeof(head));
	/* fields + capability + data, or fields + data */
	assert_int_equal(oss_req_write_bulk(OSS_REQ_WRITE_HEAD + 65536, head), 65536);
	assert_int_equal(oss_req_write_bulk(24 + 65536, head), 65536);
	/* any other length, no data, or more than PFS_MAX_IO: not split */
	assert_int_equal(oss_req_write_bulk(OSS_REQ_WRITE_HEAD + 65535, head), 0);
	assert_int_equal(oss_req_write_bulk(OSS_REQ_WRITE_HEAD + 65537, head), 0);
	assert_int_equal(oss_req_write_bulk(24 + 65536 + 1, head), 0);
	head[20] = head[21] = head[22] = head[23] = 0;
	assert_int_equal(oss_req_write_bulk(OSS_REQ_WRITE_HEAD, head), 0);
	memcpy(head + 20, &(uint32_t){ PFS_MAX_IO + 1 }, 4);
	assert_int_equal(oss_req_write_bulk(OSS_REQ_WRITE_HEAD + PFS_MAX_IO + 1, head), 0);

	/* the split decoder: fields and capability, the data outside */
	assert_int_equal(oss_req_decode_split(PFS_OP_OSS_WRITE, w.data, w.len, 65536, &m), 0);
	assert_int_equal(m.ost, 3);
	assert_int_equal(m.obj, 77);
	assert_int_equal(m.off, 8192);
	assert_int_equal(m.len, 65536);
	assert_null(m.data);
	assert_true(m.has_cap);
	assert_int_equal(m.cap.object, 77);
	assert_int_equal(m.need, PFS_CAPA_WRITE);
	/* without the capability */
	assert_int_equal(oss_req_decode_split(PFS_OP_OSS_WRITE, w.data, 24, 65536, &m), 0);
	assert_false(m.has_cap);
	/* a bulk that is not the data, trailing or missing bytes, other opcodes */
	assert_int_equal(oss_req_decode_split(PFS_OP_OSS_WRITE, w.data, w.len, 65535, &m),
			 -EBADMSG);
	assert_int_equal(oss_req_decode_split(PFS_OP_OSS_WRITE, w.data, w.len - 1, 65536, &m),
			 -EBADMSG);
	assert_int_equal(oss_req_decode_split(PFS_OP_OSS_WRITE, w.data, 23, 65536, &m),
			 -EBADMSG);
	assert_int_equal(oss_req_decode_split(PFS_OP_OSS_WRITEV, w.data, w.len, 65536, &m),
			 -EBADMSG);
	assert_int_equal(oss_req_decode_split(PFS_OP_OSS_READ, w.data, w.len, 65536, &m),
			 -EBADMSG);
	/* bulk 0 is the ordinary decoder */
	assert_int_equal(oss_req_decode_split(PFS_OP_OSS_WRITE, w.data, w.len, 0, &m), -EBADMSG);
	pfs_wbuf_free(&w);
	(void)state;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_req_read_write),
		cmocka_unit_test(test_req_others),
		cmocka_unit_test(test_req_writev),
		cmocka_unit_test(test_req_write_split),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
