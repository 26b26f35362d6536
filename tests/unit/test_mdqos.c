/* test_mdqos.c — common/mdqos: class names, the opcode map and its
 * overrides, and the PULL / SHOW codecs (round trips and refusals). */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/mdqos.h"

static void test_classes(void **st)
{
	unsigned c;

	for (unsigned i = 0; i < PFS_MDQ_NCLASSES; i++) {
		assert_int_equal(pfs_mdq_class_parse(pfs_mdq_class_name(i), &c), 0);
		assert_int_equal(c, i);
	}
	assert_int_equal(pfs_mdq_class_parse("bogus", &c), -EINVAL);
	assert_int_equal(pfs_mdq_class_parse("", &c), -EINVAL);
	assert_string_equal(pfs_mdq_class_name(99), "?");
}

static void test_map(void **st)
{
	pfs_mdq_map m;
	char err[200];

	pfs_mdq_map_default(&m);
	assert_int_equal(pfs_mdq_map_class(&m, PFS_OP_MDS_LOOKUP), PFS_MDQ_GETATTR);
	assert_int_equal(pfs_mdq_map_class(&m, PFS_OP_MDS_MKNOD), PFS_MDQ_CREATE);
	assert_int_equal(pfs_mdq_map_class(&m, PFS_OP_MDS_RMDIR), PFS_MDQ_UNLINK);
	assert_int_equal(pfs_mdq_map_class(&m, PFS_OP_MDS_LISTXATTR), PFS_MDQ_XATTR);
	assert_int_equal(pfs_mdq_map_class(&m, PFS_OP_OSS_WRITE), PFS_MDQ_WRITE);
	assert_int_equal(pfs_mdq_map_class(&m, PFS_OP_MDS_MDQOS_PULL), PFS_MDQ_NONE);
	assert_int_equal(pfs_mdq_map_class(&m, PFS_OP_PING), PFS_MDQ_NONE);
	assert_int_equal(pfs_mdq_map_class(&m, 60000), PFS_MDQ_NONE);
	assert_int_equal(pfs_mdq_map_parse(&m, "MDS_ACCESS=none,MDS_STATFS=readdir", err,
					   sizeof(err)), 0);
	assert_int_equal(pfs_mdq_map_class(&m, PFS_OP_MDS_ACCESS), PFS_MDQ_NONE);
	assert_int_equal(pfs_mdq_map_class(&m, PFS_OP_MDS_STATFS), PFS_MDQ_READDIR);
	/* refusals leave the map as it was */
	assert_int_equal(pfs_mdq_map_parse(&m, "MDS_LOOKUP=create,MDS_NOPE=open", err,
					   sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "MDS_NOPE"));
	assert_int_equal(pfs_mdq_map_class(&m, PFS_OP_MDS_LOOKUP), PFS_MDQ_GETATTR);
	assert_int_equal(pfs_mdq_map_parse(&m, "MDS_LOOKUP=fast", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "fast"));
	assert_int_equal(pfs_mdq_map_parse(&m, "MDS_LOOKUP", err, sizeof(err)), -EINVAL);
	assert_int_equal(pfs_mdq_map_parse(&m, "", err, sizeof(err)), 0);
}

static void test_usage_roundtrip(void **st)
{
	pfs_mdq_row in[2] = { { "job1", PFS_MDQ_CREATE, 12 }, { "j2", PFS_MDQ_WRITE, 0 } };
	pfs_mdq_row *out;
	uint32_t n;
	pfs_wbuf w;
	pfs_rbuf r;

	pfs_wbuf_init(&w);
	assert_int_equal(pfs_mdq_usage_encode(&w, in, 2), 0);
	pfs_rbuf_init(&r, w.data, w.len);
	assert_int_equal(pfs_mdq_usage_decode(&r, &out, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(out[0].job, "job1");
	assert_int_equal(out[0].cls, PFS_MDQ_CREATE);
	assert_true(out[0].value == 12);
	free(out);
	/* truncated, trailing byte, bad class, empty job, huge count */
	for (size_t cut = 0; cut < w.len; cut++) {
		pfs_rbuf_init(&r, w.data, cut);
		assert_int_equal(pfs_mdq_usage_decode(&r, &out, &n), -EBADMSG);
		assert_null(out);
	}
	pfs_wbuf_u8(&w, 0);
	pfs_rbuf_init(&r, w.data, w.len);
	assert_int_equal(pfs_mdq_usage_decode(&r, &out, &n), -EBADMSG);
	pfs_wbuf_free(&w);

	pfs_mdq_row bad[1] = { { "x", PFS_MDQ_NCLASSES, 1 } };
	pfs_wbuf_init(&w);
	pfs_mdq_usage_encode(&w, bad, 1);
	pfs_rbuf_init(&r, w.data, w.len);
	assert_int_equal(pfs_mdq_usage_decode(&r, &out, &n), -EBADMSG);
	pfs_wbuf_free(&w);

	pfs_wbuf_init(&w);
	pfs_wbuf_u32(&w, 1);
	pfs_wbuf_str(&w, "");
	pfs_wbuf_u8(&w, PFS_MDQ_OPEN);
	pfs_wbuf_u64(&w, 1);
	pfs_rbuf_init(&r, w.data, w.len);
	assert_int_equal(pfs_mdq_usage_decode(&r, &out, &n), -EBADMSG);
	pfs_wbuf_free(&w);

	/* a count that claims more rows than bytes */
	pfs_wbuf_init(&w);
	pfs_wbuf_u32(&w, 4000000000u);
	pfs_rbuf_init(&r, w.data, w.len);
	assert_int_equal(pfs_mdq_usage_decode(&r, &out, &n), -EBADMSG);
	pfs_wbuf_free(&w);
}

static void test_rates_roundtrip(void **st)
{
	pfs_mdq_row rows[1] = { { "j", PFS_MDQ_CREATE, 33.5 } };
	pfs_mdq_rates in = { 0 }, out;
	pfs_wbuf w;
	pfs_rbuf r;

	in.generation = 7;
	in.period_s = 1;
	pfs_mdq_map_default(&in.map);
	in.limited[PFS_MDQ_CREATE] = 1;
	in.default_rate[PFS_MDQ_CREATE] = 4;
	in.n = 1;
	in.rows = rows;
	pfs_wbuf_init(&w);
	assert_int_equal(pfs_mdq_rates_encode(&w, &in), 0);
	pfs_rbuf_init(&r, w.data, w.len);
	assert_int_equal(pfs_mdq_rates_decode(&r, &out), 0);
	assert_int_equal(out.generation, 7);
	assert_memory_equal(&out.map, &in.map, sizeof(in.map));
	assert_int_equal(out.limited[PFS_MDQ_CREATE], 1);
	assert_int_equal(out.limited[PFS_MDQ_OPEN], 0);
	assert_true(out.default_rate[PFS_MDQ_CREATE] == 4);
	assert_int_equal(out.n, 1);
	assert_true(out.rows[0].value == 33.5);
	pfs_mdq_rates_free(&out);
	for (size_t cut = 0; cut < w.len; cut++) {
		pfs_rbuf_init(&r, w.data, cut);
		assert_int_equal(pfs_mdq_rates_decode(&r, &out), -EBADMSG);
	}
	pfs_wbuf_free(&w);
	/* a negative rate is malformed */
	rows[0].value = -1;
	pfs_wbuf_init(&w);
	pfs_mdq_rates_encode(&w, &in);
	pfs_rbuf_init(&r, w.data, w.len);
	assert_int_equal(pfs_mdq_rates_decode(&r, &out), -EBADMSG);
	pfs_wbuf_free(&w);
}

static void test_status_roundtrip(void **st)
{
	pfs_mdq_jobrow rows[1] = { { "j", PFS_MDQ_UNLINK, 0, 10, 9, 8 } };
	pfs_mdq_status in = { .algo = "psfa", .interval_ms = 1000, .epsilon = 0.5,
			      .generation = 3, .held = 2, .n = 1, .rows = rows }, out;
	pfs_wbuf w;
	pfs_rbuf r;

	in.max_r[PFS_MDQ_UNLINK] = 400;
	pfs_wbuf_init(&w);
	assert_int_equal(pfs_mdq_status_encode(&w, &in), 0);
	pfs_rbuf_init(&r, w.data, w.len);
	assert_int_equal(pfs_mdq_status_decode(&r, &out), 0);
	assert_string_equal(out.algo, "psfa");
	assert_true(out.max_r[PFS_MDQ_UNLINK] == 400);
	assert_int_equal(out.n, 1);
	assert_true(out.rows[0].rate == 8);
	pfs_mdq_status_free(&out);
	for (size_t cut = 0; cut < w.len; cut++) {
		pfs_rbuf_init(&r, w.data, cut);
		assert_int_equal(pfs_mdq_status_decode(&r, &out), -EBADMSG);
	}
	pfs_wbuf_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classes),
		cmocka_unit_test(test_map),
		cmocka_unit_test(test_usage_roundtrip),
		cmocka_unit_test(test_rates_roundtrip),
		cmocka_unit_test(test_status_roundtrip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
