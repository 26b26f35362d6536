/* test_cli_jobid.c — job id resolution from a fake /proc tree: variable
 * order, fallback procname.uid, truncation, cache TTL and pid reuse; the
 * Slurm job from /proc/PID/cgroup (v1, v2, non-Slurm, garbage, very long
 * lines) and the precedence of jobid_source auto|cgroup|env|both. */
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

/* Write PROC/pid/cgroup with len bytes of text. */
static void fake_cgroup(pid_t pid, const char *text, size_t len)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d/cgroup", root, (int)pid);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
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

static int parse(const char *text, char out[PFS_JOBID_MAX + 1])
{
	strcpy(out, "untouched");
	return cli_jobid_parse_cgroup(text, strlen(text), out);
}

static void test_cgroup_parse(void **state)
{
	char out[PFS_JOBID_MAX + 1];

	/* cgroup v1: the job on any controller line, with or without steps */
	assert_int_equal(parse("12:pids:/\n11:freezer:/slurm/uid_1000/job_4242/step_0/task_1\n"
			       "0::/\n", out), 1);
	assert_string_equal(out, "4242");
	assert_int_equal(parse("5:devices:/slurm/uid_0/job_7\n", out), 1);
	assert_string_equal(out, "7");
	assert_int_equal(parse("4:memory:/slurm_node17/uid_5/job_31/step_batch/\n", out), 1);
	assert_string_equal(out, "31");
	/* cgroup v2, both layouts, no trailing newline */
	assert_int_equal(parse("0::/system.slice/slurmstepd.scope/job_123456/step_0/user/task_0",
			       out), 1);
	assert_string_equal(out, "123456");
	assert_int_equal(parse("0::/system.slice/n3_slurmstepd.scope/job_9/step_extern", out), 1);
	assert_string_equal(out, "9");
	assert_int_equal(parse("0::/slurm/uid_1000/job_88/step_0/\n", out), 1);
	assert_string_equal(out, "88");
	/* several lines naming the same job are fine; different jobs are not */
	assert_int_equal(parse("3:cpu:/slurm/uid_1/job_5/step_0\n"
			       "0::/system.slice/slurmstepd.scope/job_5/step_0\n", out), 1);
	assert_string_equal(out, "5");
	assert_int_equal(parse("3:cpu:/slurm/uid_1/job_5/step_0\n4:pids:/slurm/uid_1/job_6\n",
			       out), -EBADMSG);
	/* not Slurm: systemd users, docker, job_ without Slurm's parents, bad ids */
	assert_int_equal(parse("0::/user.slice/user-1000.slice/session-3.scope\n", out), 0);
	assert_int_equal(parse("4:memory:/docker/0123abcd\n0::/\n", out), 0);
	assert_int_equal(parse("4:memory:/job_12/step_0\n", out), 0);
	assert_int_equal(parse("4:memory:/slurm/job_12/step_0\n", out), 0);
	assert_int_equal(parse("4:memory:/slurm/uid_/job_12\n", out), 0);
	assert_int_equal(parse("4:memory:/slurm/uid_1/job_\n", out), 0);
	assert_int_equal(parse("4:memory:/slurm/uid_1/job_12x/step_0\n", out), 0);
	assert_int_equal(parse("4:memory:/slurm/uid_1/job_-1\n", out), 0);
	assert_int_equal(parse("4:memory:/notslurm/uid_1/job_12\n", out), 0);
	assert_int_equal(parse("0::/system.slice/slurmstepd.scopex/job_12\n", out), 0);
	assert_int_equal(parse("0::/system.slice/job_12\n", out), 0);
	assert_string_equal(out, "untouched");
	/* an id longer than a job id field is not a job */
	assert_int_equal(parse("0::/slurm/uid_1/job_123456789012345678901234567890123\n", out),
			 0);
	/* garbage: no colons, one colon, empty lines, NULs, only a path */
	assert_int_equal(parse("", out), 0);
	assert_int_equal(parse("\n\n\n", out), 0);
	assert_int_equal(parse("/slurm/uid_1/job_12\n", out), 0);
	assert_int_equal(parse("x:/slurm/uid_1/job_12\n", out), 0);
	assert_int_equal(cli_jobid_parse_cgroup("1:a:/slurm/uid_1/jo\0b_2\n", 24, out), 0);
	/* a ':' inside the path is part of the path */
	assert_int_equal(parse("1:name=a:/x:y/slurm/uid_1/job_3\n", out), 1);
	assert_string_equal(out, "3");
	/* garbage lines around a good one do not hide it */
	assert_int_equal(parse("::::\n:\n9:\n0::/slurm/uid_2/job_44/\n\xff\xfe\n", out), 1);
	assert_string_equal(out, "44");
}

static void test_cgroup_long_lines(void **state)
{
	cli_jobid *j;
	char out[PFS_JOBID_MAX + 1];
	size_t big = 200000, n = 0;
	char *text = malloc(big + 256);
	static const char env[] = "SLURM_JOB_ID=999\0";

	assert_non_null(text);
	/* a 100 kB path before the Slurm line: still found in the parser */
	n += (size_t)sprintf(text, "1:pids:/");
	memset(text + n, 'a', 100000);
	n += 100000;
	n += (size_t)sprintf(text + n, "\n0::/slurm/uid_1/job_77/step_0\n");
	assert_int_equal(cli_jobid_parse_cgroup(text, n, out), 1);
	assert_string_equal(out, "77");
	/* ... but the file is read up to a bound: a job line past it is not
	 * seen (the env decides), and a giant single line is dropped whole */
	fake_proc(700, env, sizeof(env) - 1, "big");
	fake_cgroup(700, text, n);
	assert_int_equal(cli_jobid_create(root, NULL, 0, 0, &j), 0);
	cli_jobid_get(j, 700, 1, 0, out);
	assert_string_equal(out, "999");
	n = (size_t)sprintf(text, "0::/slurm/uid_1/job_78/");
	memset(text + n, 'b', big);
	n += big;
	fake_cgroup(700, text, n);
	cli_jobid_get(j, 700, 1, 0, out);
	assert_string_equal(out, "999");
	/* the same job line first, then a long tail: found */
	n = (size_t)sprintf(text, "0::/slurm/uid_1/job_79/\n1:pids:/");
	memset(text + n, 'c', big);
	n += big;
	fake_cgroup(700, text, n);
	cli_jobid_get(j, 700, 1, 0, out);
	assert_string_equal(out, "79");
	cli_jobid_destroy(j);
	free(text);
}

static void test_source_precedence(void **state)
{
	static const char v1[] = "7:blkio:/slurm/uid_1000/job_4242/step_0\n0::/\n";
	static const char other[] = "0::/user.slice/user-1000.slice\n";
	static const char amb[] = "7:blkio:/slurm/uid_1000/job_1/step_0\n"
				  "8:pids:/slurm/uid_1000/job_2/step_0\n";
	static const char env[] = "SLURM_JOB_ID=999\0PFS_JOBID=sub\0";
	enum cli_jobid_source src;
	const struct {
		const char *source;
		const char *cg;  /* NULL: no cgroup file */
		int with_env;
		const char *want;
	} cases[] = {
		/* auto: the cgroup's job beats a forged environment... */
		{ "auto", v1, 1, "4242" },
		/* ...the environment counts where the cgroup is not Slurm's... */
		{ "auto", other, 1, "999" },
		{ "auto", NULL, 1, "999" },
		{ "auto", other, 0, "ior.1000" },
		/* ...and an ambiguous cgroup gives the default job, not the env */
		{ "auto", amb, 1, "ior.1000" },
		/* cgroup: never the environment */
		{ "cgroup", v1, 1, "4242" },
		{ "cgroup", other, 1, "ior.1000" },
		{ "cgroup", NULL, 1, "ior.1000" },
		{ "cgroup", amb, 1, "ior.1000" },
		/* env: today's behaviour, the cgroup is ignored */
		{ "env", v1, 1, "999" },
		{ "env", v1, 0, "ior.1000" },
		/* both: the environment first, then the cgroup */
		{ "both", v1, 1, "999" },
		{ "both", v1, 0, "4242" },
		{ "both", other, 0, "ior.1000" },
		{ "both", amb, 0, "ior.1000" },
	};

	assert_int_equal(cli_jobid_source_parse("auto", &src), 0);
	assert_int_equal(src, CLI_JOBID_AUTO);
	assert_int_equal(cli_jobid_source_parse("both", &src), 0);
	assert_int_equal(src, CLI_JOBID_BOTH);
	assert_int_equal(cli_jobid_source_parse("cgroups", &src), -EINVAL);
	assert_int_equal(cli_jobid_source_parse("", &src), -EINVAL);
	assert_int_equal(cli_jobid_source_parse(NULL, &src), -EINVAL);

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		pid_t pid = (pid_t)(800 + i);
		char out[PFS_JOBID_MAX + 1], path[512];
		cli_jobid *j;

		if (cases[i].with_env)
			fake_proc(pid, env, sizeof(env) - 1, "ior");
		else
			fake_proc(pid, "", 0, "ior");
		if (cases[i].cg)
			fake_cgroup(pid, cases[i].cg, strlen(cases[i].cg));
		assert_int_equal(cli_jobid_create(root, NULL, 0, 0, &j), 0);
		assert_int_equal(cli_jobid_source_parse(cases[i].source, &src), 0);
		cli_jobid_set_source(j, src);
		cli_jobid_get(j, pid, 1000, 0, out);
		if (strcmp(out, cases[i].want))
			fail_msg("case %zu (%s): got '%s', want '%s'", i, cases[i].source, out,
				 cases[i].want);
		cli_jobid_destroy(j);
		snprintf(path, sizeof(path), "%s/%d/cgroup", root, (int)pid);
		unlink(path);
	}
}

static void test_cgroup_default_is_auto(void **state)
{
	cli_jobid *j;
	char out[PFS_JOBID_MAX + 1];
	static const char env[] = "SLURM_JOB_ID=999\0";
	static const char v2[] = "0::/system.slice/slurmstepd.scope/job_31337/step_0/user/task_0\n";

	/* A resolver as created (mount.pfs's default) already trusts the
	 * cgroup; the configured variables still apply in the fallback. */
	fake_proc(900, env, sizeof(env) - 1, "x");
	fake_cgroup(900, v2, strlen(v2));
	assert_int_equal(cli_jobid_create(root, "PFS_JOBID", 1000, 0, &j), 0);
	cli_jobid_get(j, 900, 0, 1, out);
	assert_string_equal(out, "31337");
	cli_jobid_destroy(j);
	fake_cgroup(900, "0::/\n", 5);
	assert_int_equal(cli_jobid_create(root, "SLURM_JOB_ID", 1000, 0, &j), 0);
	cli_jobid_get(j, 900, 0, 1, out);
	assert_string_equal(out, "999");
	cli_jobid_destroy(j);
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
		cmocka_unit_test(test_cgroup_parse),
		cmocka_unit_test_setup_teardown(test_cgroup_long_lines, setup, teardown),
		cmocka_unit_test_setup_teardown(test_source_precedence, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cgroup_default_is_auto, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
