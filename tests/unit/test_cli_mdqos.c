/* test_cli_mdqos.c — client/mdqos (the PADLL stage of mount.pfs): nothing
 * waits before the first rates; installed rates are kept by (job, class),
 * unknown jobs get the class's default and unlimited classes pass; the
 * usage report counts each request once; and pfsadmin's qos md checks
 * (client/admin_mdqos.c) refuse bad classes, rates and keys. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "client/admin_mdqos.h"
#include "client/mdqos.h"

static void test_no_rates_no_wait(void **st)
{
	cli_mdqos *q;
	double w;

	assert_int_equal(cli_mdqos_create(NULL, &q), 0);
	for (int i = 0; i < 1000; i++)
		assert_int_equal(cli_mdqos_try(q, "a", PFS_OP_MDS_CREATE, 1, 10.0, &w), 0);
	assert_true(cli_mdqos_rate(q, "a", PFS_MDQ_CREATE) < 0);
	cli_mdqos_destroy(q);
}

static void test_rates_and_usage(void **st)
{
	cli_mdqos *q;
	pfs_mdq_row rows[1] = { { "a", PFS_MDQ_CREATE, 10 } };
	pfs_mdq_rates r = { 0 };
	pfs_mdq_row *u;
	uint32_t n;
	double w, now = 100;
	int passed = 0;

	assert_int_equal(cli_mdqos_create(NULL, &q), 0);
	pfs_mdq_map_default(&r.map);
	r.period_s = 1;
	r.limited[PFS_MDQ_CREATE] = 1;
	r.default_rate[PFS_MDQ_CREATE] = 2;
	r.n = 1;
	r.rows = rows;
	cli_mdqos_apply(q, &r, now);
	assert_true(cli_mdqos_rate(q, "a", PFS_MDQ_CREATE) == 10);
	assert_true(cli_mdqos_rate(q, "other", PFS_MDQ_CREATE) == 2);
	assert_true(cli_mdqos_rate(q, "a", PFS_MDQ_UNLINK) < 0);
	/* over 2 s at 10/s: about 20 pass (plus the bucket's depth) */
	for (int i = 0; i < 2000; i++) {
		now += 0.001;
		passed += cli_mdqos_try(q, "a", PFS_OP_MDS_CREATE, 1, now, &w) == 0;
	}
	assert_true(passed >= 20 && passed <= 23);
	assert_int_equal(cli_mdqos_try(q, "a", PFS_OP_MDS_CREATE, 0, now, &w), -EAGAIN);
	assert_true(w > 0 && w <= 0.1);
	/* unlimited class: never waits */
	assert_int_equal(cli_mdqos_try(q, "a", PFS_OP_MDS_UNLINK, 1, now, &w), 0);
	/* usage: 2000 creates counted once each (the retry above was not first) */
	assert_int_equal(cli_mdqos_take_usage(q, &u, &n), 0);
	uint64_t creates = 0, unlinks = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (!strcmp(u[i].job, "a") && u[i].cls == PFS_MDQ_CREATE)
			creates = (uint64_t)u[i].value;
		if (!strcmp(u[i].job, "a") && u[i].cls == PFS_MDQ_UNLINK)
			unlinks = (uint64_t)u[i].value;
	}
	free(u);
	assert_int_equal(creates, 2000);
	assert_int_equal(unlinks, 1);
	assert_int_equal(cli_mdqos_take_usage(q, &u, &n), 0);
	assert_int_equal(n, 0);
	free(u);
	/* rates withdrawn: the class is free again */
	memset(r.limited, 0, sizeof(r.limited));
	r.n = 0;
	cli_mdqos_apply(q, &r, now);
	assert_int_equal(cli_mdqos_try(q, "a", PFS_OP_MDS_CREATE, 1, now, &w), 0);
	cli_mdqos_destroy(q);
}

static void test_admin_checks(void **st)
{
	char err[256];
	const char *good[] = { "max_r.create=400", "epsilon=0.5", "interval_ms=500" };
	const char *bad_class[] = { "max_r.bogus=4" };
	const char *zero[] = { "max_r.create=0" };
	const char *neg[] = { "max_r.create=-1" };
	const char *key[] = { "frob=1" };
	const char *algo[] = { "fair" };
	const char *dem[] = { "demand.open=5" };

	assert_int_equal(cli_admin_mdqos_check(0, NULL, good, 3, err, sizeof(err)), 0);
	assert_int_equal(cli_admin_mdqos_check(0, NULL, bad_class, 1, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "unknown class"));
	assert_int_equal(cli_admin_mdqos_check(0, NULL, zero, 1, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "> 0"));
	assert_int_equal(cli_admin_mdqos_check(0, NULL, neg, 1, err, sizeof(err)), -EINVAL);
	assert_int_equal(cli_admin_mdqos_check(0, NULL, key, 1, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "unknown key"));
	assert_int_equal(cli_admin_mdqos_check(1, NULL, algo, 1, err, sizeof(err)), -EINVAL);
	assert_int_equal(cli_admin_mdqos_check(0, NULL, dem, 1, err, sizeof(err)), -EINVAL);
	assert_int_equal(cli_admin_mdqos_check(0, "j1", dem, 1, err, sizeof(err)), 0);
	assert_int_equal(cli_admin_mdqos_check(0, "j1", good, 1, err, sizeof(err)), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_rates_no_wait),
		cmocka_unit_test(test_rates_and_usage),
		cmocka_unit_test(test_admin_checks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
