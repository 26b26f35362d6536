/* test_optab.c — the per-opcode authorization table (common/optab.h). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "common/optab.h"
#include "common/proto.h"

static void test_sorted_and_named(void **st)
{
	unsigned n;
	const pfs_optab_row *r = pfs_optab_rows(&n);

	assert_true(n > 40);
	for (unsigned i = 0; i < n; i++) {
		if (i)
			assert_true(r[i - 1].op < r[i].op);
		assert_ptr_equal(pfs_optab_find(r[i].op), &r[i]);
		/* the row's name is proto's name of the opcode */
		assert_string_equal(r[i].name, pfs_op_name(r[i].op));
		assert_true(r[i].roles != 0);
		assert_string_not_equal(pfs_qos_class_name(r[i].cls), "?");
	}
	assert_null(pfs_optab_find(7));
	assert_null(pfs_optab_find(65535));
}

static void test_rules(void **st)
{
	/* OSS control channel: only oss keys */
	assert_true(pfs_optab_allowed(PFS_OP_MDS_OSS_REGISTER, PFS_ROLE_OSS));
	assert_false(pfs_optab_allowed(PFS_OP_MDS_OSS_REGISTER, PFS_ROLE_CLIENT));
	assert_false(pfs_optab_allowed(PFS_OP_MDS_OSS_REGISTER, PFS_ROLE_ADMIN));
	assert_false(pfs_optab_allowed(PFS_OP_MDS_OSS_HEARTBEAT, PFS_ROLE_CLIENT));
	assert_false(pfs_optab_allowed(PFS_OP_MDS_OSS_HEARTBEAT, PFS_ROLE_MDS));
	/* destroy and allocations: only the MDS */
	assert_true(pfs_optab_allowed(PFS_OP_OSS_DESTROY, PFS_ROLE_MDS));
	assert_false(pfs_optab_allowed(PFS_OP_OSS_DESTROY, PFS_ROLE_CLIENT));
	assert_false(pfs_optab_allowed(PFS_OP_OSS_DESTROY, PFS_ROLE_ADMIN));
	assert_false(pfs_optab_allowed(PFS_OP_OSS_DESTROY, PFS_ROLE_OSS));
	assert_false(pfs_optab_allowed(PFS_OP_OSS_LIST_OBJECTS, PFS_ROLE_ADMIN));
	assert_false(pfs_optab_allowed(PFS_OP_OSS_QOS_SET, PFS_ROLE_ADMIN));
	assert_true(pfs_optab_allowed(PFS_OP_OSS_QOS_SET, PFS_ROLE_MDS));
	/* pfsadmin's OSS requests */
	assert_true(pfs_optab_allowed(PFS_OP_OSS_NRS_RULE, PFS_ROLE_ADMIN));
	assert_true(pfs_optab_allowed(PFS_OP_OSS_QOS_STATS, PFS_ROLE_ADMIN));
	assert_false(pfs_optab_allowed(PFS_OP_OSS_NRS_RULE, PFS_ROLE_CLIENT));
	/* admin commands: admin keys */
	assert_true(pfs_optab_allowed(PFS_OP_MDS_JOB_REGISTER, PFS_ROLE_ADMIN));
	assert_false(pfs_optab_allowed(PFS_OP_MDS_JOB_REGISTER, PFS_ROLE_CLIENT));
	/* the job registry is readable by mounts (qos_fetch: job weights) */
	assert_true(pfs_optab_allowed(PFS_OP_MDS_JOB_LIST, PFS_ROLE_CLIENT));
	assert_false(pfs_optab_allowed(PFS_OP_MDS_JOB_LIST, PFS_ROLE_OSS));
	assert_false(pfs_optab_allowed(PFS_OP_MDS_QOS_POLICY_SET, PFS_ROLE_CLIENT));
	assert_false(pfs_optab_allowed(PFS_OP_MDS_JOB_END, PFS_ROLE_OSS));
	/* namespace: clients and admin, not servers */
	assert_true(pfs_optab_allowed(PFS_OP_MDS_MKDIR, PFS_ROLE_CLIENT));
	assert_true(pfs_optab_allowed(PFS_OP_MDS_MKDIR, PFS_ROLE_ADMIN));
	assert_false(pfs_optab_allowed(PFS_OP_MDS_MKDIR, PFS_ROLE_OSS));
	assert_int_equal(pfs_optab_find(PFS_OP_MDS_SETSIZE)->cred, PFS_OPTAB_CRED_PEER);
	assert_int_equal(pfs_optab_find(PFS_OP_OSS_READ)->cred, 0);
	/* data: clients only */
	assert_true(pfs_optab_allowed(PFS_OP_OSS_WRITE, PFS_ROLE_CLIENT));
	assert_false(pfs_optab_allowed(PFS_OP_OSS_WRITE, PFS_ROLE_ADMIN));
	assert_int_equal(pfs_optab_find(PFS_OP_OSS_WRITE)->cls, PFS_QOS_CLASS_DATA_WRITE);
	assert_int_equal(pfs_optab_find(PFS_OP_MDS_LOOKUP)->cls, PFS_QOS_CLASS_MD_READ);
	/* no authentication: anything goes; no role / a mask: nothing */
	assert_true(pfs_optab_allowed(PFS_OP_OSS_DESTROY, PFS_ROLE_ANY));
	assert_true(pfs_optab_allowed(7, PFS_ROLE_ANY));
	assert_false(pfs_optab_allowed(7, PFS_ROLE_ADMIN));
	assert_false(pfs_optab_allowed(PFS_OP_MDS_MKDIR, PFS_ROLE_NONE));
	assert_false(pfs_optab_allowed(PFS_OP_OSS_DESTROY, PFS_ROLE_MDS | PFS_ROLE_CLIENT));
	/* ping: everyone */
	assert_true(pfs_optab_allowed(PFS_OP_PING, PFS_ROLE_CLIENT));
}

static void test_roles_parse(void **st)
{
	unsigned m = 99;

	assert_int_equal(pfs_optab_roles_parse("admin", &m), 0);
	assert_int_equal(m, PFS_ROLE_ADMIN);
	assert_int_equal(pfs_optab_roles_parse("admin, client", &m), 0);
	assert_int_equal(m, PFS_ROLE_ADMIN | PFS_ROLE_CLIENT);
	assert_int_equal(pfs_optab_roles_parse("none", &m), 0);
	assert_int_equal(m, 0);
	assert_int_equal(pfs_optab_roles_parse("", &m), 0);
	assert_int_equal(m, 0);
	assert_int_equal(pfs_optab_roles_parse("root", &m), -EINVAL);
	assert_int_equal(pfs_optab_roles_parse("adminx", &m), -EINVAL);
}

static void test_log_once(void **st)
{
	pfs_optab_log l;

	pfs_optab_log_init(&l);
	assert_int_equal(pfs_optab_log_refusal(&l, "t", "127.0.0.1:5", 350, PFS_ROLE_CLIENT, "x"), 1);
	assert_int_equal(pfs_optab_log_refusal(&l, "t", "127.0.0.1:5", 350, PFS_ROLE_CLIENT, "x"), 0);
	assert_int_equal(pfs_optab_log_refusal(&l, "t", "127.0.0.1:6", 350, PFS_ROLE_CLIENT, "x"), 1);
	pfs_optab_log_destroy(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sorted_and_named),
		cmocka_unit_test(test_rules),
		cmocka_unit_test(test_roles_parse),
		cmocka_unit_test(test_log_once),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
