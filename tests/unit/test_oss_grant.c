/* test_oss_grant.c — write grants of one OST: grants within free space
 * less the reserve and the others' grants, give-back, writes consuming the
 * writer's grant, uncovered writes refused when they would eat another
 * client's grant, expiry of silent clients. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/proto.h"
#include "oss/grant.h"

#define MB (1024ull * 1024)
#define TOTAL (64 * MB)

static uint64_t free_now;
static int free_calls;

static int free_fn(void *arg, uint64_t *out)
{
	free_calls++;
	*out = free_now;
	return 0;
}

static void test_grant_within_free(void **state)
{
	oss_grant *g;
	uint64_t got, avail = 32 * MB - oss_grant_reserve(TOTAL);

	assert_int_equal(oss_grant_create(&g), 0);
	/* A asks for less than there is: all of it. */
	assert_int_equal(oss_grant_request(g, 1, 8 * MB, 0, TOTAL, 32 * MB, 0, &got), 0);
	assert_int_equal(got, 8 * MB);
	/* B asks for more than is left: what is left. */
	assert_int_equal(oss_grant_request(g, 2, 100 * MB, 0, TOTAL, 32 * MB, 0, &got), 0);
	assert_int_equal(got, avail - 8 * MB);
	assert_int_equal(oss_grant_total(g), avail);
	/* Nothing left for C; A asking again keeps what it has. */
	assert_int_equal(oss_grant_request(g, 3, MB, 0, TOTAL, 32 * MB, 0, &got), 0);
	assert_int_equal(got, 0);
	assert_int_equal(oss_grant_request(g, 1, MB, 0, TOTAL, 32 * MB, 0, &got), 0);
	assert_int_equal(got, 8 * MB);
	/* Free space shrinking never takes a grant back by itself. */
	assert_int_equal(oss_grant_request(g, 1, 0, 0, TOTAL, 1 * MB, 0, &got), 0);
	assert_int_equal(got, 8 * MB);
	/* Give-back, capped at what the client holds. */
	assert_int_equal(oss_grant_request(g, 1, 0, 3 * MB, TOTAL, 32 * MB, 0, &got), 0);
	assert_int_equal(got, 5 * MB);
	assert_int_equal(oss_grant_request(g, 1, 0, 100 * MB, TOTAL, 32 * MB, 0, &got), 0);
	assert_int_equal(got, 0);
	assert_int_equal(oss_grant_of(g, 1), 0);
	assert_int_equal(oss_grant_total(g), avail - 8 * MB);
	oss_grant_destroy(g);
}

static void test_grant_writes_consume(void **state)
{
	oss_grant *g;
	uint64_t got;

	assert_int_equal(oss_grant_create(&g), 0);
	assert_int_equal(oss_grant_request(g, 1, 4 * MB, 0, TOTAL, 32 * MB, 0, &got), 0);
	free_now = 32 * MB;
	free_calls = 0;
	/* Covered: no free-space check, the grant shrinks by the cost. */
	assert_int_equal(oss_grant_write(g, 1, MB, 1, free_fn, NULL), 0);
	assert_int_equal(free_calls, 0);
	assert_int_equal(oss_grant_of(g, 1), 4 * MB - PFS_GRANT_COST(MB));
	/* A 1-byte write costs two pages. */
	assert_int_equal(oss_grant_write(g, 1, 1, 1, free_fn, NULL), 0);
	assert_int_equal(oss_grant_of(g, 1), 4 * MB - PFS_GRANT_COST(MB) - 2 * PFS_GRANT_PAGE);
	/* A client without grant, with room besides the grants: allowed. */
	assert_int_equal(oss_grant_write(g, 2, MB, 1, free_fn, NULL), 0);
	assert_int_equal(free_calls, 1);
	/* ... without: refused, and nobody's grant changes. */
	free_now = 3 * MB;
	got = oss_grant_total(g);
	assert_int_equal(oss_grant_write(g, 2, MB, 1, free_fn, NULL), -ENOSPC);
	assert_int_equal(oss_grant_total(g), got);
	/* The holder's grant runs out inside a write: the rest is uncovered
	 * and checked (only its own grant was left, so free space suffices). */
	free_now = 8 * MB;
	assert_int_equal(oss_grant_write(g, 1, 4 * MB, 1, free_fn, NULL), 0);
	assert_int_equal(oss_grant_of(g, 1), 0);
	assert_int_equal(oss_grant_total(g), 0);
	/* No grants anywhere: no check at all (the store says ENOSPC). */
	free_calls = 0;
	free_now = 0;
	assert_int_equal(oss_grant_write(g, 3, MB, 1, free_fn, NULL), 0);
	assert_int_equal(free_calls, 0);
	oss_grant_destroy(g);
}

static void test_grant_expire(void **state)
{
	oss_grant *g;
	uint64_t got;

	assert_int_equal(oss_grant_create(&g), 0);
	assert_int_equal(oss_grant_request(g, 1, MB, 0, TOTAL, 32 * MB, 1000, &got), 0);
	assert_int_equal(oss_grant_request(g, 2, MB, 0, TOTAL, 32 * MB, 1000, &got), 0);
	/* client 2 writes later: it is not silent */
	assert_int_equal(oss_grant_write(g, 2, 4096, 5000, free_fn, NULL), 0);
	assert_int_equal(oss_grant_expire(g, 5500, 4000), MB);
	assert_int_equal(oss_grant_of(g, 1), 0);
	assert_int_equal(oss_grant_of(g, 2), MB - PFS_GRANT_COST(4096));
	assert_int_equal(oss_grant_total(g), MB - PFS_GRANT_COST(4096));
	assert_int_equal(oss_grant_expire(g, 8500, 4000), 0);
	assert_int_equal(oss_grant_expire(g, 9001, 4000), MB - PFS_GRANT_COST(4096));
	assert_int_equal(oss_grant_total(g), 0);
	oss_grant_destroy(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_grant_within_free),
		cmocka_unit_test(test_grant_writes_consume),
		cmocka_unit_test(test_grant_expire),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
