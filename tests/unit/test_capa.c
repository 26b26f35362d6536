/* test_capa.c — object capabilities (common/capa.h): a minted capability
 * passes; forged, altered, expired, moved and wrong-client ones do not. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "common/capa.h"

static const uint8_t K[PFS_CAPA_KEY_LEN] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };
#define NOW 1700000000ull

static pfs_capa minted(uint32_t rights)
{
	pfs_capa c = { .ost = 3, .object = 77, .rights = rights, .expiry = NOW + 600,
		       .client_id = 0xabcdef };

	pfs_capa_mint(&c, K);
	return c;
}

static void test_good(void **st)
{
	pfs_capa c = minted(PFS_CAPA_ALL);

	assert_int_equal(pfs_capa_check(&c, K, 3, 77, 0xabcdef, PFS_CAPA_WRITE, NOW), 0);
	assert_int_equal(pfs_capa_check(&c, K, 3, 77, 0xabcdef, 0, NOW + 599), 0);
}

static void test_refused(void **st)
{
	pfs_capa c = minted(PFS_CAPA_READ), d;
	uint8_t other[PFS_CAPA_KEY_LEN] = { 9 };

	/* the wrong key (a forger's) */
	d = c;
	pfs_capa_mint(&d, other);
	assert_int_equal(pfs_capa_check(&d, K, 3, 77, 0xabcdef, PFS_CAPA_READ, NOW), -EACCES);
	/* all-zero tag */
	d = c;
	memset(d.mac, 0, sizeof(d.mac));
	assert_int_equal(pfs_capa_check(&d, K, 3, 77, 0xabcdef, PFS_CAPA_READ, NOW), -EACCES);
	/* altered fields, mac kept: rights widened, expiry extended, object moved */
	d = c;
	d.rights = PFS_CAPA_ALL;
	assert_int_equal(pfs_capa_check(&d, K, 3, 77, 0xabcdef, PFS_CAPA_WRITE, NOW), -EACCES);
	d = c;
	d.expiry += 3600;
	assert_int_equal(pfs_capa_check(&d, K, 3, 77, 0xabcdef, PFS_CAPA_READ, NOW), -EACCES);
	d = c;
	d.object = 78;
	assert_int_equal(pfs_capa_check(&d, K, 3, 78, 0xabcdef, PFS_CAPA_READ, NOW), -EACCES);
	d = c;
	d.mac[5] ^= 1;
	assert_int_equal(pfs_capa_check(&d, K, 3, 77, 0xabcdef, PFS_CAPA_READ, NOW), -EACCES);
	/* a good capability used for another object, OST or client */
	assert_int_equal(pfs_capa_check(&c, K, 3, 76, 0xabcdef, PFS_CAPA_READ, NOW), -EACCES);
	assert_int_equal(pfs_capa_check(&c, K, 4, 77, 0xabcdef, PFS_CAPA_READ, NOW), -EACCES);
	assert_int_equal(pfs_capa_check(&c, K, 3, 77, 0xabcdee, PFS_CAPA_READ, NOW), -EACCES);
	/* a right it does not carry */
	assert_int_equal(pfs_capa_check(&c, K, 3, 77, 0xabcdef, PFS_CAPA_WRITE, NOW), -EACCES);
	assert_int_equal(pfs_capa_check(&c, K, 3, 77, 0xabcdef, PFS_CAPA_TRUNCATE, NOW), -EACCES);
	/* expired */
	assert_int_equal(pfs_capa_check(&c, K, 3, 77, 0xabcdef, PFS_CAPA_READ, NOW + 600),
			 -EKEYEXPIRED);
	/* an expired forgery is a forgery */
	d = c;
	d.mac[0] ^= 0x80;
	assert_int_equal(pfs_capa_check(&d, K, 3, 77, 0xabcdef, PFS_CAPA_READ, NOW + 9999),
			 -EACCES);
}

static void test_codec(void **st)
{
	pfs_capa c = minted(PFS_CAPA_WRITE), d;
	pfs_wbuf w;
	pfs_rbuf r;

	pfs_wbuf_init(&w);
	pfs_capa_encode(&w, &c);
	assert_int_equal(w.len, PFS_CAPA_LEN);
	pfs_rbuf_init(&r, w.data, w.len);
	assert_int_equal(pfs_capa_decode(&r, &d), 0);
	assert_int_equal(pfs_rbuf_done(&r), 0);
	assert_memory_equal(&c.mac, &d.mac, sizeof(c.mac));
	assert_int_equal(d.ost, 3);
	assert_int_equal(d.object, 77);
	assert_int_equal(d.expiry, NOW + 600);
	assert_int_equal(pfs_capa_check(&d, K, 3, 77, 0xabcdef, PFS_CAPA_WRITE, NOW), 0);
	/* short */
	pfs_rbuf_init(&r, w.data, w.len - 1);
	assert_int_not_equal(pfs_capa_decode(&r, &d), 0);
	pfs_wbuf_free(&w);
}

static void test_rights_for_flags(void **st)
{
	assert_int_equal(pfs_capa_rights_for_flags(O_RDONLY), PFS_CAPA_READ);
	assert_int_equal(pfs_capa_rights_for_flags(O_WRONLY), PFS_CAPA_WRITE | PFS_CAPA_TRUNCATE);
	assert_int_equal(pfs_capa_rights_for_flags(O_RDWR), PFS_CAPA_ALL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_codec),
		cmocka_unit_test(test_rights_for_flags),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
