/* test_layout.c — striping arithmetic against a brute-force byte mapping,
 * object sizes, the inverse mapping, and the layout wire form. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/layout.h"

static pfs_layout mk(uint32_t ss, uint32_t sc)
{
	pfs_layout l;

	memset(&l, 0, sizeof(l));
	l.stripe_size = ss;
	l.stripe_count = sc;
	for (uint32_t i = 0; i < sc; i++) {
		l.stripe[i].ost = i * 3;
		l.stripe[i].object = 100 + i;
	}
	return l;
}

/* The DESIGN.md formula, one byte at a time. */
static void byte_map(const pfs_layout *l, uint64_t o, uint32_t *idx, uint64_t *obj_off)
{
	uint64_t ss = l->stripe_size, sc = l->stripe_count;

	*idx = (uint32_t)((o / ss) % sc);
	*obj_off = (o / (ss * sc)) * ss + o % ss;
}

static void test_layout_map_matches_formula(void **state)
{
	const uint32_t ss = 64 << 10;
	unsigned seed = 7;

	for (uint32_t sc = 1; sc <= 5; sc++) {
		pfs_layout l = mk(ss, sc);
		for (int iter = 0; iter < 300; iter++) {
			uint64_t off = (uint64_t)rand_r(&seed) % (10u * ss * sc);
			uint64_t len = 1 + (uint64_t)rand_r(&seed) % (3u * ss * sc);
			pfs_extent ex[64];
			size_t n = pfs_layout_map(&l, off, len, ex, 64);
			uint64_t covered = 0;

			assert_true(n <= 64);
			for (size_t i = 0; i < n; i++) {
				assert_int_equal(ex[i].buf_off, covered); /* in file order, no gaps */
				/* check the first and last byte of each extent */
				uint64_t probes[2] = { 0, ex[i].len - 1 };
				for (int p = 0; p < 2; p++) {
					uint32_t idx;
					uint64_t oo;
					byte_map(&l, off + ex[i].buf_off + probes[p], &idx, &oo);
					assert_int_equal(idx, ex[i].idx);
					assert_int_equal(oo, ex[i].obj_off + probes[p]);
				}
				covered += ex[i].len;
			}
			assert_int_equal(covered, len);
		}
	}
}

static void test_layout_map_pieces(void **state)
{
	pfs_layout l = mk(1 << 20, 4);
	pfs_extent ex[8];

	/* 1 MiB aligned: one piece. */
	assert_int_equal(pfs_layout_map(&l, 5u << 20, 1 << 20, ex, 8), 1);
	assert_int_equal(ex[0].idx, 1);
	assert_int_equal(ex[0].obj_off, 1 << 20);
	/* Unaligned 1 MiB straddles two stripes. */
	assert_int_equal(pfs_layout_map(&l, 4096, 1 << 20, ex, 8), 2);
	assert_int_equal(ex[0].idx, 0);
	assert_int_equal(ex[0].len, (1 << 20) - 4096);
	assert_int_equal(ex[1].idx, 1);
	assert_int_equal(ex[1].obj_off, 0);
	/* Single stripe: consecutive units merge into one extent. */
	l = mk(64 << 10, 1);
	assert_int_equal(pfs_layout_map(&l, 1000, 1 << 20, ex, 8), 1);
	assert_int_equal(ex[0].len, 1 << 20);
	/* Too small an array: the exact needed count comes back, merges
	 * included (one stripe: 16 units merge into 1). */
	l = mk(64 << 10, 4);
	assert_int_equal(pfs_layout_map(&l, 0, 1 << 20, ex, 2), 16);
	l = mk(64 << 10, 1);
	assert_int_equal(pfs_layout_map(&l, 0, 1 << 20, NULL, 0), 1);
	/* No objects: nothing to map. */
	l = mk(1 << 20, 0);
	assert_int_equal(pfs_layout_map(&l, 0, 100, ex, 8), 0);
}

static void test_layout_object_size(void **state)
{
	const uint32_t ss = 64 << 10;

	for (uint32_t sc = 1; sc <= 4; sc++) {
		pfs_layout l = mk(ss, sc);
		uint64_t sizes[] = { 0, 1, ss - 1, ss, ss + 1, 3ull * ss + 17, 7ull * ss * sc + 5 };
		for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
			uint64_t fsz = sizes[k], total = 0;
			for (uint32_t i = 0; i < sc; i++) {
				uint64_t os = pfs_layout_object_size(&l, fsz, i);
				total += os;
				/* the object's last byte is the file byte just below fsz
				 * in this stripe, and the next is at or beyond fsz */
				if (os)
					assert_true(pfs_layout_file_offset(&l, i, os - 1) < fsz);
				assert_true(pfs_layout_file_offset(&l, i, os) >= fsz);
			}
			assert_int_equal(total, fsz);
		}
	}
	/* The example: 1 GiB over 4 stripes = 4 x 256 MiB. */
	pfs_layout l = mk(1 << 20, 4);
	for (uint32_t i = 0; i < 4; i++)
		assert_int_equal(pfs_layout_object_size(&l, 1ull << 30, i), 256ull << 20);
}

static void test_layout_inverse(void **state)
{
	pfs_layout l = mk(128 << 10, 3);

	for (uint64_t o = 0; o < 5ull * (128 << 10) * 3; o += 4099) {
		uint32_t idx;
		uint64_t oo;
		byte_map(&l, o, &idx, &oo);
		assert_int_equal(pfs_layout_file_offset(&l, idx, oo), o);
	}
}

static void test_layout_wire(void **state)
{
	pfs_layout l = mk(1 << 20, 3), d;
	pfs_wbuf w;
	pfs_rbuf r;

	pfs_wbuf_init(&w);
	pfs_layout_encode(&w, &l);
	pfs_rbuf_init(&r, w.data, w.len);
	assert_int_equal(pfs_layout_decode(&r, &d), 0);
	assert_int_equal(pfs_rbuf_done(&r), 0);
	assert_int_equal(d.stripe_count, 3);
	assert_int_equal(d.stripe[2].ost, 6);
	assert_int_equal(d.stripe[2].object, 102);

	/* truncated */
	pfs_rbuf_init(&r, w.data, w.len - 1);
	assert_int_equal(pfs_layout_decode(&r, &d), -EBADMSG);
	/* bad stripe size / count */
	pfs_wbuf_reset(&w);
	pfs_wbuf_u32(&w, 1000);
	pfs_wbuf_u32(&w, 1);
	pfs_rbuf_init(&r, w.data, w.len);
	assert_int_equal(pfs_layout_decode(&r, &d), -EBADMSG);
	pfs_wbuf_reset(&w);
	pfs_wbuf_u32(&w, 1 << 20);
	pfs_wbuf_u32(&w, PFS_MAX_STRIPES + 1);
	pfs_rbuf_init(&r, w.data, w.len);
	assert_int_equal(pfs_layout_decode(&r, &d), -EBADMSG);
	pfs_wbuf_free(&w);

	assert_int_equal(pfs_layout_check(64 << 10, 1), 0);
	assert_int_equal(pfs_layout_check(96 << 10, 1), -EINVAL);
	assert_int_equal(pfs_layout_check(0, 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout_map_matches_formula),
		cmocka_unit_test(test_layout_map_pieces),
		cmocka_unit_test(test_layout_object_size),
		cmocka_unit_test(test_layout_inverse),
		cmocka_unit_test(test_layout_wire),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
