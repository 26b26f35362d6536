/* test_cli_jobid.c — job id resolution from a fake /proc tree: variable
 * order, fallback procname.uid, truncation, cache TTL and pid reuse. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client/jobid.h"

static char root[256];

/* Write PROC/pid/{environ,comm}; env is "A=1\0B=2\0" with explicit length. */
static void fake_proc(pid_t pid, const char *env, size_t envlen, const char *comm)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d", root, (int)pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%d/environ", root, (int)pid);
	f = fopen(path, "w");
	assert_non_null(f);
	fwrite(env, 1, envlen, f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/%d/comm", root, (int)pid);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%s\n", comm);
	fclose(f);
}

static int setup(void **state)
{
	snprintf(root, sizeof(root), "/tmp/test_cli_jobid.XXXXXX");
	assert_non_null(mkdtemp(root));
	return 0;
}

static int teardown(void **state)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_jobid_var_order(void **state)
{
	cli_jobid *j;
	char out[PFS_JOBID_MAX + 1];
	/* PFS_JOBID comes first in environ, but SLURM_JOB_ID is first in the list. */
	static const char env[] = "HOME=/root\0PFS_JOBID=mine\0SLURM_JOB_ID=4242\0";

	fake_proc(100, env, sizeof(env) - 1, "ior");
	assert_int_equal(cli_jobid_create(root, NULL, 0, 0, &j), 0);
	cli_jobid_get(j, 100, 1000, 0, out);
	assert_string_equal(out, "4242");
	cli_jobid_destroy(j);

	assert_int_equal(cli_jobid_create(root, "PFS_JOBID:SLURM_JOB_ID", 0, 0, &j), 0);
	cli_jobid_get(j, 100, 1000, 0, out);
	assert_string_equal(out, "mine");
	cli_jobid_destroy(j);

	/* A prefix of a variable name must not match (SLURM_JOB != SLURM_JOB_ID). */
	assert_int_equal(cli_jobid_create(root, "SLURM_JOB", 0, 0, &j), 0);
	cli_jobid_get(j, 100, 1000, 0, out);
	assert_string_equal(out, "ior.1000");
	cli_jobid_destroy(j);
}

static void test_jobid_fallback(void **state)
{
	cli_jobid *j;
	char out[PFS_JOBID_MAX + 1];
	static const char env[] = "PATH=/bin\0SLURM_JOB_ID=\0";

	/* An empty value does not count as set. */
	fake_proc(200, env, sizeof(env) - 1, "dd");
	assert_int_equal(cli_jobid_create(root, NULL, 0, 0, &j), 0);
	cli_jobid_get(j, 200, 65534, 0, out);
	assert_string_equal(out, "dd.65534");
	/* A vanished process and kernel-originated requests still get an id. */
	cli_jobid_get(j, 999999, 7, 0, out);
	assert_string_equal(out, "unknown.7");
	cli_jobid_get(j, 0, 0, 0, out);
	assert_string_equal(out, "kernel.0");
	cli_jobid_destroy(j);
}

static void test_jobid_truncation(void **state)
{
	cli_jobid *j;
	char out[PFS_JOBID_MAX + 1];
	char env[256];
	int n = snprintf(env, sizeof(env), "PFS_JOBID=%s", "0123456789abcdefghijklmnopqrstuvwxyzXYZ");

	fake_proc(300, env, (size_t)n + 1, "x");
	assert_int_equal(cli_jobid_create(root, NULL, 0, 0, &j), 0);
	cli_jobid_get(j, 300, 0, 0, out);
	assert_int_equal(strlen(out), PFS_JOBID_MAX);
	assert_memory_equal(out, "0123456789abcdefghijklmnopqrstuv", PFS_JOBID_MAX);
	cli_jobid_destroy(j);

	/* Long comm.uid is truncated too. */
	fake_proc(301, "", 0, "averyveryverylongcommandname");
	assert_int_equal(cli_jobid_create(root, NULL, 0, 0, &j), 0);
	cli_jobid_get(j, 301, 4294967294u, 0, out);
	assert_int_equal(strlen(out), PFS_JOBID_MAX);
	assert_memory_equal(out, "averyveryverylongcommandname.429", PFS_JOBID_MAX);
	cli_jobid_destroy(j);
}

static void test_jobid_cache_ttl(void **state)
{
	cli_jobid *j;
	char out[PFS_JOBID_MAX + 1];
	uint64_t hits, misses;
	static const char env1[] = "SLURM_JOB_ID=1\0";
	static const char env2[] = "SLURM_JOB_ID=2\0";

	fake_proc(400, env1, sizeof(env1) - 1, "a");
	assert_int_equal(cli_jobid_create(root, NULL, 1000, 64, &j), 0);
	cli_jobid_get(j, 400, 0, 5000, out);
	assert_string_equal(out, "1");
	/* The pid is reused by another job: within the TTL the cached answer is
	 * served (this is the staleness the TTL bounds)... */
	fake_proc(400, env2, sizeof(env2) - 1, "b");
	cli_jobid_get(j, 400, 0, 5999, out);
	assert_string_equal(out, "1");
	cli_jobid_counters(j, &hits, &misses);
	assert_int_equal(hits, 1);
	assert_int_equal(misses, 1);
	/* ...and after it the new job is seen. */
	cli_jobid_get(j, 400, 0, 6000, out);
	assert_string_equal(out, "2");
	/* A different uid for the same pid is not served from the cache. */
	cli_jobid_get(j, 400, 5, 6001, out);
	assert_string_equal(out, "2");
	cli_jobid_counters(j, &hits, &misses);
	assert_int_equal(hits, 1);
	assert_int_equal(misses, 3);
	/* A clock that goes backwards does not pin an entry forever. */
	cli_jobid_get(j, 400, 5, 10, out);
	cli_jobid_counters(j, &hits, &misses);
	assert_int_equal(misses, 4);
	cli_jobid_destroy(j);
}

static void write_status(pid_t pid, const char *groups_line)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d/status", root, (int)pid);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "Name:\tx\nUid:\t1000\t1000\t1000\t1000\n%s\nVmRSS:\t1 kB\n", groups_line);
	fclose(f);
}

static void test_jobid_groups(void **state)
{
	cli_jobid *j = NULL;
	uint32_t g[PFS_MAX_GROUPS];
	char job[PFS_JOBID_MAX + 1];

	fake_proc(500, "", 0, "mpi");
	write_status(500, "Groups:\t4 24 27 1000 ");
	assert_int_equal(cli_jobid_create(root, NULL, 1000, 0, &j), 0);
	assert_int_equal(cli_jobid_groups(j, 500, 1000, 1000, 10, g, PFS_MAX_GROUPS), 4);
	assert_int_equal(g[0], 4);
	assert_int_equal(g[3], 1000);
	/* max bounds the copy */
	assert_int_equal(cli_jobid_groups(j, 500, 1000, 1000, 20, g, 2), 2);
	/* cached within the TTL, re-read after it; the job id shares the slot */
	write_status(500, "Groups:\t7");
	cli_jobid_get(j, 500, 1000, 30, job);
	assert_string_equal(job, "mpi.1000");
	assert_int_equal(cli_jobid_groups(j, 500, 1000, 1000, 500, g, PFS_MAX_GROUPS), 4);
	assert_int_equal(cli_jobid_groups(j, 500, 1000, 1000, 2000, g, PFS_MAX_GROUPS), 1);
	assert_int_equal(g[0], 7);
	/* another uid in the same pid slot does not see these groups */
	write_status(500, "Groups:");
	assert_int_equal(cli_jobid_groups(j, 500, 0, 0, 2001, g, PFS_MAX_GROUPS), 0);
	/* a vanished process has no supplementary groups */
	assert_int_equal(cli_jobid_groups(j, 999, 1000, 1000, 10, g, PFS_MAX_GROUPS), 0);
	cli_jobid_destroy(j);
}

static void test_jobid_bad_lists(void **state)
{
	cli_jobid *j = NULL;

	assert_int_equal(cli_jobid_create(root, "A,,B", 0, 0, &j), -EINVAL);
	assert_int_equal(cli_jobid_create(root, ":A", 0, 0, &j), -EINVAL);
	assert_int_equal(cli_jobid_create(root, "A,B,C,D,E,F,G,H,I,J,K,L,M,N,O,P,Q", 0, 0, &j),
			 -EINVAL);
	assert_null(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_jobid_var_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_jobid_fallback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_jobid_truncation, setup, teardown),
		cmocka_unit_test_setup_teardown(test_jobid_cache_ttl, setup, teardown),
		cmocka_unit_test_setup_teardown(test_jobid_groups, setup, teardown),
		cmocka_unit_test_setup_teardown(test_jobid_bad_lists, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
