/* test_oss_bufpool.c — the READ buffer pool: a buffer given back is
 * handed out again (no new allocation), buffers are aligned, at most
 * `keep` idle ones are held, larger requests bypass the pool. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "oss/bufpool.h"

static void test_bufpool_reuse(void **state)
{
	oss_bufpool *p;
	void *a, *b, *c, *big;

	(void)state;
	assert_int_equal(oss_bufpool_create(1 << 16, 4096, 2, &p), 0);
	assert_null(oss_bufpool_get(p, 0));
	a = oss_bufpool_get(p, 100);
	b = oss_bufpool_get(p, 1 << 16);
	c = oss_bufpool_get(p, 4096);
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(c);
	assert_int_equal((uintptr_t)a % 4096, 0);
	assert_int_equal((uintptr_t)b % 4096, 0);
	memset(a, 1, 1 << 16); /* a small request still got a whole buffer */
	assert_int_equal(oss_bufpool_idle(p), 0);
	oss_bufpool_put(p, a, 100);
	oss_bufpool_put(p, b, 1 << 16);
	oss_bufpool_put(p, c, 4096); /* beyond keep: freed */
	assert_int_equal(oss_bufpool_idle(p), 2);
	/* last in, first out: the warm one */
	assert_ptr_equal(oss_bufpool_get(p, 10), b);
	assert_ptr_equal(oss_bufpool_get(p, 10), a);
	assert_int_equal(oss_bufpool_idle(p), 0);
	big = oss_bufpool_get(p, (1 << 16) + 1);
	assert_non_null(big);
	assert_int_equal((uintptr_t)big % 4096, 0);
	memset(big, 2, (1 << 16) + 1);
	oss_bufpool_put(p, big, (1 << 16) + 1); /* not kept */
	assert_int_equal(oss_bufpool_idle(p), 0);
	oss_bufpool_put(p, a, 10);
	oss_bufpool_put(p, b, 10);
	oss_bufpool_put(p, NULL, 10);
	oss_bufpool_destroy(p); /* frees the idle ones (ASan: no leak) */
	oss_bufpool_destroy(NULL);
}

static void test_bufpool_bad_align(void **state)
{
	oss_bufpool *p = NULL;

	(void)state;
	assert_int_equal(oss_bufpool_create(4096, 3000, 1, &p), -EINVAL);
	assert_null(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bufpool_reuse),
		cmocka_unit_test(test_bufpool_bad_align),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
