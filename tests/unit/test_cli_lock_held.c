/* test_cli_lock_held.c — the mount's record of the locks it holds
 * (client/lock_held.h), which it reclaims after an MDS restart: merge of
 * touching locks of one type, split by an unlock of a middle range,
 * upgrade of part of a range, owners and kinds kept apart, release by
 * owner and kinds, the list. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "client/lock_held.h"
#include "common/proto.h"

#define E UINT64_MAX

static cli_lock L(uint8_t kind, uint8_t type, uint64_t s, uint64_t e, uint64_t owner)
{
	cli_lock l = { .kind = kind, .type = type, .start = s, .end = e, .owner = owner };

	return l;
}

static int apply(cli_lkheld *h, uint64_t ino, uint8_t kind, uint8_t type, uint64_t s,
		 uint64_t e, uint64_t owner)
{
	cli_lock l = L(kind, type, s, e, owner);

	return cli_lkheld_apply(h, ino, &l);
}

/* 1 if the list has exactly this lock */
static int has(cli_lkheld *h, uint64_t ino, uint8_t kind, uint8_t type, uint64_t s,
	       uint64_t e, uint64_t owner)
{
	uint64_t *inos;
	cli_lock *v;
	size_t n;
	int found = 0;

	assert_int_equal(cli_lkheld_list(h, &inos, &v, &n), 0);
	for (size_t i = 0; i < n; i++)
		found |= inos[i] == ino && v[i].kind == kind && v[i].type == type &&
			 v[i].start == s && v[i].end == e && v[i].owner == owner;
	free(inos);
	free(v);
	return found;
}

static void t_merge_split(void **st)
{
	cli_lkheld *h = cli_lkheld_new();

	assert_non_null(h);
	assert_int_equal(apply(h, 1, PFS_LK_POSIX, PFS_LK_WRITE, 0, 9, 5), 0);
	assert_int_equal(apply(h, 1, PFS_LK_POSIX, PFS_LK_WRITE, 10, 19, 5), 0);
	assert_int_equal(cli_lkheld_count(h), 1);
	assert_true(has(h, 1, PFS_LK_POSIX, PFS_LK_WRITE, 0, 19, 5));
	/* unlock the middle: two pieces */
	assert_int_equal(apply(h, 1, PFS_LK_POSIX, PFS_LK_UNLOCK, 5, 14, 5), 0);
	assert_int_equal(cli_lkheld_count(h), 2);
	assert_true(has(h, 1, PFS_LK_POSIX, PFS_LK_WRITE, 0, 4, 5));
	assert_true(has(h, 1, PFS_LK_POSIX, PFS_LK_WRITE, 15, 19, 5));
	/* a read lock over part of one: replaced there */
	assert_int_equal(apply(h, 1, PFS_LK_POSIX, PFS_LK_READ, 3, 16, 5), 0);
	assert_int_equal(cli_lkheld_count(h), 3);
	assert_true(has(h, 1, PFS_LK_POSIX, PFS_LK_WRITE, 0, 2, 5));
	assert_true(has(h, 1, PFS_LK_POSIX, PFS_LK_READ, 3, 16, 5));
	assert_true(has(h, 1, PFS_LK_POSIX, PFS_LK_WRITE, 17, 19, 5));
	/* to EOF, then unlock everything */
	assert_int_equal(apply(h, 1, PFS_LK_POSIX, PFS_LK_WRITE, 0, E, 5), 0);
	assert_int_equal(cli_lkheld_count(h), 1);
	assert_true(has(h, 1, PFS_LK_POSIX, PFS_LK_WRITE, 0, E, 5));
	assert_int_equal(apply(h, 1, PFS_LK_POSIX, PFS_LK_UNLOCK, 0, E, 5), 0);
	assert_int_equal(cli_lkheld_count(h), 0);
	cli_lkheld_free(h);
}

static void t_owners_kinds_release(void **st)
{
	cli_lkheld *h = cli_lkheld_new();
	uint64_t *inos;
	cli_lock *v;
	size_t n;

	assert_int_equal(apply(h, 1, PFS_LK_POSIX, PFS_LK_READ, 0, 9, 5), 0);
	assert_int_equal(apply(h, 1, PFS_LK_POSIX, PFS_LK_READ, 0, 9, 6), 0);
	assert_int_equal(apply(h, 1, PFS_LK_FLOCK, PFS_LK_WRITE, 0, E, 5), 0);
	assert_int_equal(apply(h, 2, PFS_LK_POSIX, PFS_LK_WRITE, 0, E, 5), 0);
	assert_int_equal(cli_lkheld_count(h), 4);
	/* an unlock of owner 6 leaves owner 5 alone */
	assert_int_equal(apply(h, 1, PFS_LK_POSIX, PFS_LK_UNLOCK, 0, E, 6), 0);
	assert_int_equal(cli_lkheld_count(h), 3);
	/* close: owner 5's POSIX locks on ino 1 go, its flock stays */
	cli_lkheld_release(h, 1, 5, 1u << PFS_LK_POSIX);
	assert_int_equal(cli_lkheld_count(h), 2);
	assert_true(has(h, 1, PFS_LK_FLOCK, PFS_LK_WRITE, 0, E, 5));
	assert_true(has(h, 2, PFS_LK_POSIX, PFS_LK_WRITE, 0, E, 5));
	cli_lkheld_release(h, 1, 5, 1u << PFS_LK_FLOCK);
	cli_lkheld_release(h, 2, 5, ~0u);
	assert_int_equal(cli_lkheld_count(h), 0);
	assert_int_equal(cli_lkheld_list(h, &inos, &v, &n), 0);
	assert_int_equal(n, 0);
	assert_null(inos);
	/* unlocking what is not held changes nothing */
	assert_int_equal(apply(h, 9, PFS_LK_POSIX, PFS_LK_UNLOCK, 0, E, 5), 0);
	assert_int_equal(cli_lkheld_count(h), 0);
	cli_lkheld_free(h);
	cli_lkheld_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_merge_split),
		cmocka_unit_test(t_owners_kinds_release),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
