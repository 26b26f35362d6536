/* test_config.c — option tables: defaults, INI sections, command-line
 * precedence, sizes, booleans, readable errors, empty values, ranges,
 * deprecated aliases, --help and --version. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/config.h"
#include "common/log.h"

struct cfg {
	char listen[64];
	int threads;
	uint64_t cache;
	int odirect;
	double ratio;
	uint64_t count;
	char pid_file[64];
	int hb_ms;
	double interval_s;
	char log[64];
};

#define OPT(k, t, f, d, h, lo, hi) PFS_CFG_OPT(struct cfg, k, t, f, d, h, lo, hi)
static const pfs_cfg_opt tab[] = {
	OPT("listen", PFS_CFG_STR, listen, "0.0.0.0:7700", "address", 0, 0),
	OPT("io_threads", PFS_CFG_INT, threads, "8", "threads", 0, 0),
	OPT("cache", PFS_CFG_SIZE, cache, "64M", "cache size", 0, 0),
	OPT("o_direct", PFS_CFG_BOOL, odirect, "no", "O_DIRECT", 0, 0),
	OPT("ratio", PFS_CFG_DOUBLE, ratio, "0.5", "a ratio", 0, 0),
	OPT("count", PFS_CFG_U64, count, "3", "a count", 0, 0),
	PFS_CFG_END,
};

/* With ranges and deprecated aliases, as the daemons' tables have. */
static const pfs_cfg_opt rtab[] = {
	OPT("listen", PFS_CFG_STR, listen, "0.0.0.0:7700", "address", 0, 0),
	OPT("pid_file", PFS_CFG_STR, pid_file, "", "empty = none", 0, 0),
	OPT("io_threads", PFS_CFG_INT, threads, "8", "threads", 1, 1024),
	OPT("cache", PFS_CFG_SIZE, cache, "64M", "cache size", 1 << 20, 1ull << 30),
	OPT("o_direct", PFS_CFG_BOOL, odirect, "no", "O_DIRECT", 0, 0),
	OPT("ratio", PFS_CFG_DOUBLE, ratio, "0.5", "a ratio", 0, 1),
	OPT("count", PFS_CFG_U64, count, "3", "a count", 1, 100),
	OPT("heartbeat_timeout_ms", PFS_CFG_INT, hb_ms, "10000", "ms", 100, 86400000),
	OPT("interval_s", PFS_CFG_DOUBLE, interval_s, "10", "s", 1, 3600),
	OPT("log", PFS_CFG_STR, log, "stderr", "where", 0, 0),
	PFS_CFG_ALIAS("heartbeat_timeout", "heartbeat_timeout_ms", 1000, NULL, "in seconds"),
	PFS_CFG_ALIAS("interval", "interval_s", 0, NULL, NULL),
	PFS_CFG_ALIAS("log_file", "log", 0, "file:", NULL),
	PFS_CFG_END,
};

/* Captured log lines (deprecation warnings). */
static char logged[2048];

static void capture(int level, const char *msg, void *arg)
{
	size_t n = strlen(logged);

	snprintf(logged + n, sizeof(logged) - n, "%d %s\n", level, msg);
}

static int run(const pfs_cfg_opt *t, struct cfg *c, int argc, char **argv, int *help,
	       char *err, size_t errlen)
{
	char *pos[4];
	int npos;

	return pfs_cfg_parse_argv(t, c, "x", argc, argv, pos, 4, &npos, help, err, errlen);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_config_defaults(void **state)
{
	struct cfg c;
	char err[128];

	assert_int_equal(pfs_cfg_defaults(tab, &c, err, sizeof(err)), 0);
	assert_string_equal(c.listen, "0.0.0.0:7700");
	assert_int_equal(c.threads, 8);
	assert_int_equal(c.cache, 64ull << 20);
	assert_int_equal(c.odirect, 0);
	assert_true(c.ratio == 0.5);
}

static void test_config_sizes(void **state)
{
	uint64_t v;

	assert_int_equal(pfs_parse_size("4096", &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(pfs_parse_size("1K", &v), 0);
	assert_int_equal(v, 1024);
	assert_int_equal(pfs_parse_size("2MiB", &v), 0);
	assert_int_equal(v, 2u << 20);
	assert_int_equal(pfs_parse_size("3g", &v), 0);
	assert_int_equal(v, 3ull << 30);
	assert_int_equal(pfs_parse_size("", &v), -EINVAL);
	assert_int_equal(pfs_parse_size("-1", &v), -EINVAL);
	assert_int_equal(pfs_parse_size("12Q", &v), -EINVAL);
	assert_int_equal(pfs_parse_size("99999999999999999999", &v), -EINVAL);
	assert_int_equal(pfs_parse_size("17000000T", &v), -EINVAL);
}

static void test_config_file_and_argv(void **state)
{
	char path[] = "/tmp/pfs-test-config-XXXXXX";
	int fd = mkstemp(path);
	struct cfg c;
	char err[256];
	char *pos[4];
	int npos, help;

	assert_true(fd >= 0);
	close(fd);
	write_file(path, "io_threads = 4\n[oss]\ncache = 1G\no-direct = yes\n[mds]\ncache = 5K\n");
	char *argv[] = { "prog", "--io_threads=16", "pos1", "-c", path, "--ratio", "0.25",
			 "-o", "count=9,o_direct=off", "pos2", NULL };
	assert_int_equal(pfs_cfg_parse_argv(tab, &c, "oss", 10, argv, pos, 4, &npos, &help,
					    err, sizeof(err)), 0);
	assert_int_equal(c.threads, 16);       /* command line beats the file */
	assert_int_equal(c.cache, 1ull << 30); /* [oss] section, not [mds] */
	assert_int_equal(c.odirect, 0);        /* -o beats the file */
	assert_true(c.ratio == 0.25);
	assert_int_equal(c.count, 9);
	assert_int_equal(npos, 2);
	assert_string_equal(pos[0], "pos1");
	assert_string_equal(pos[1], "pos2");
	assert_int_equal(help, 0);
	unlink(path);
}

static void test_config_errors(void **state)
{
	struct cfg c;
	char err[256];
	char *pos[1];
	int npos, help;

	char *a1[] = { "prog", "--nosuch=1", NULL };
	assert_int_equal(pfs_cfg_parse_argv(tab, &c, "x", 2, a1, pos, 1, &npos, &help, err,
					    sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "nosuch"));
	char *a2[] = { "prog", "--io_threads=abc", NULL };
	assert_int_equal(pfs_cfg_parse_argv(tab, &c, "x", 2, a2, pos, 1, &npos, &help, err,
					    sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "io_threads"));
	char *a3[] = { "prog", "--config=/nonexistent/pfs.ini", NULL };
	assert_int_equal(pfs_cfg_parse_argv(tab, &c, "x", 2, a3, pos, 1, &npos, &help, err,
					    sizeof(err)), -ENOENT);
	char *a4[] = { "prog", "--listen", NULL };
	assert_int_equal(pfs_cfg_parse_argv(tab, &c, "x", 2, a4, pos, 1, &npos, &help, err,
					    sizeof(err)), -EINVAL);
	char big[200];
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(pfs_cfg_set(tab, &c, "listen", big, err, sizeof(err)), -EINVAL);
	assert_int_equal(pfs_cfg_set(tab, &c, "o_direct", "maybe", err, sizeof(err)), -EINVAL);

	char path[] = "/tmp/pfs-test-config-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	write_file(path, "io_threads = 4\nthis line is not ini\n");
	assert_int_equal(pfs_cfg_load_file(tab, &c, path, "x", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, ":2"));
	unlink(path);

	char *a5[] = { "prog", "--help", NULL };
	assert_int_equal(pfs_cfg_parse_argv(tab, &c, "x", 2, a5, pos, 1, &npos, &help, err,
					    sizeof(err)), 0);
	assert_int_equal(help, 1);
}

/* A value may be empty only for a string whose default is empty; a key
 * alone in an -o list is only for booleans. */
static void test_config_empty_values(void **state)
{
	struct cfg c;
	char err[256];
	int help;

	assert_int_equal(pfs_cfg_defaults(rtab, &c, err, sizeof(err)), 0);
	assert_int_equal(pfs_cfg_set(rtab, &c, "listen", "", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "listen: needs a value");
	assert_string_equal(c.listen, "0.0.0.0:7700"); /* untouched */
	assert_int_equal(pfs_cfg_set(rtab, &c, "io_threads", "", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "io_threads: needs a value");
	assert_int_equal(pfs_cfg_set(rtab, &c, "pid_file", "/run/x", err, sizeof(err)), 0);
	assert_int_equal(pfs_cfg_set(rtab, &c, "pid_file", "", err, sizeof(err)), 0);
	assert_string_equal(c.pid_file, "");
	/* -o jobid_var (no '='): refused, not set to "1". */
	assert_int_equal(pfs_cfg_set(rtab, &c, "listen", NULL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "listen: needs a value"));
	assert_string_equal(c.listen, "0.0.0.0:7700");
	assert_int_equal(pfs_cfg_set(rtab, &c, "o_direct", NULL, err, sizeof(err)), 0);
	assert_int_equal(c.odirect, 1);
	assert_int_equal(pfs_cfg_set_list(rtab, &c, "o_direct=0,count", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "count: needs a value"));
	assert_int_equal(c.odirect, 0);

	char *a1[] = { "prog", "--listen=", NULL };
	assert_int_equal(run(rtab, &c, 2, a1, &help, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "listen: needs a value"));
	char *a2[] = { "prog", "-o", "listen=", NULL };
	assert_int_equal(run(rtab, &c, 3, a2, &help, err, sizeof(err)), -EINVAL);
	char *a3[] = { "prog", "--pid_file=", "-o", "o_direct", NULL };
	assert_int_equal(run(rtab, &c, 4, a3, &help, err, sizeof(err)), 0);
	assert_int_equal(c.odirect, 1);

	char path[] = "/tmp/pfs-test-config-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	write_file(path, "[x]\nlisten =\n");
	assert_int_equal(pfs_cfg_load_file(rtab, &c, path, "x", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "listen: needs a value"));
	write_file(path, "[x]\npid_file =\n[other]\nlisten =\nnosuch = 1\n");
	assert_int_equal(pfs_cfg_load_file(rtab, &c, path, "x", err, sizeof(err)), 0);
	unlink(path);
}

static void test_config_ranges(void **state)
{
	struct cfg c;
	char err[256];

	assert_int_equal(pfs_cfg_defaults(rtab, &c, err, sizeof(err)), 0);
	assert_int_equal(pfs_cfg_set(rtab, &c, "io_threads", "0", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "io_threads: 0 is out of range (1..1024)");
	assert_int_equal(c.threads, 8);
	assert_int_equal(pfs_cfg_set(rtab, &c, "io_threads", "1025", err, sizeof(err)), -EINVAL);
	assert_int_equal(pfs_cfg_set(rtab, &c, "io_threads", "-3", err, sizeof(err)), -EINVAL);
	assert_int_equal(pfs_cfg_set(rtab, &c, "io_threads", "99999999999", err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "out of range"));
	assert_int_equal(pfs_cfg_set(rtab, &c, "io_threads", "1024", err, sizeof(err)), 0);
	assert_int_equal(c.threads, 1024);
	/* Decimal, not octal or hex. */
	assert_int_equal(pfs_cfg_set(rtab, &c, "io_threads", "010", err, sizeof(err)), 0);
	assert_int_equal(c.threads, 10);
	assert_int_equal(pfs_cfg_set(rtab, &c, "io_threads", "0x10", err, sizeof(err)), -EINVAL);
	/* Unranged ints still stop at int's limits. */
	assert_int_equal(pfs_cfg_set(tab, &c, "io_threads", "2147483648", err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(pfs_cfg_set(rtab, &c, "cache", "512K", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "cache: 512K is out of range (1048576..1073741824)");
	assert_int_equal(pfs_cfg_set(rtab, &c, "cache", "1G", err, sizeof(err)), 0);
	assert_int_equal(pfs_cfg_set(rtab, &c, "count", "0", err, sizeof(err)), -EINVAL);
	assert_int_equal(pfs_cfg_set(rtab, &c, "count", "-1", err, sizeof(err)), -EINVAL);
	assert_int_equal(pfs_cfg_set(rtab, &c, "count", "100", err, sizeof(err)), 0);
	assert_int_equal(pfs_cfg_set(rtab, &c, "ratio", "1.5", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "ratio: 1.5 is out of range (0..1)");
	assert_true(c.ratio == 0.5);
	assert_int_equal(pfs_cfg_set(rtab, &c, "ratio", "nan", err, sizeof(err)), -EINVAL);
	assert_int_equal(pfs_cfg_set(tab, &c, "ratio", "inf", err, sizeof(err)), -EINVAL);
	assert_int_equal(pfs_cfg_set(tab, &c, "ratio", "-7.5", err, sizeof(err)), 0);
	assert_int_equal(pfs_cfg_set(rtab, &c, "ratio", "1", err, sizeof(err)), 0);
	assert_true(c.ratio == 1);
}

static void test_config_aliases(void **state)
{
	struct cfg c;
	char err[256];
	int help;

	logged[0] = '\0';
	pfs_log_set_sink(capture, NULL);
	assert_int_equal(pfs_cfg_defaults(rtab, &c, err, sizeof(err)), 0);
	/* Seconds become milliseconds, with a warning naming the new key. */
	assert_int_equal(pfs_cfg_set(rtab, &c, "heartbeat_timeout", "5", err, sizeof(err)), 0);
	assert_int_equal(c.hb_ms, 5000);
	assert_non_null(strstr(logged, "4 option 'heartbeat_timeout' is deprecated (in seconds): "
					"use heartbeat_timeout_ms=5000"));
	assert_int_equal(pfs_cfg_set(rtab, &c, "heartbeat-timeout", "2.5", err, sizeof(err)), 0);
	assert_int_equal(c.hb_ms, 2500);
	assert_int_equal(pfs_cfg_set(rtab, &c, "heartbeat_timeout", "0.0001", err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "not a whole number"));
	/* The new key's range applies, and the message names both keys. */
	assert_int_equal(pfs_cfg_set(rtab, &c, "heartbeat_timeout", "4294968", err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "heartbeat_timeout=4294968 (deprecated): heartbeat_timeout_ms: "
				 "4294968000 is out of range (100..86400000)");
	assert_int_equal(c.hb_ms, 2500);
	assert_int_equal(pfs_cfg_set(rtab, &c, "heartbeat_timeout", "", err, sizeof(err)), -EINVAL);
	assert_int_equal(pfs_cfg_set(rtab, &c, "heartbeat_timeout", NULL, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(pfs_cfg_set(rtab, &c, "heartbeat_timeout", "x", err, sizeof(err)), -EINVAL);
	/* Same unit: the value passes through. */
	assert_int_equal(pfs_cfg_set(rtab, &c, "interval", "0.5", err, sizeof(err)), -EINVAL);
	assert_int_equal(pfs_cfg_set(rtab, &c, "interval", "2.5", err, sizeof(err)), 0);
	assert_true(c.interval_s == 2.5);
	/* A string alias gets its prefix. */
	assert_int_equal(pfs_cfg_set(rtab, &c, "log_file", "/var/log/x", err, sizeof(err)), 0);
	assert_string_equal(c.log, "file:/var/log/x");
	assert_non_null(strstr(logged, "use log=file:/var/log/x"));

	/* From a file and from the command line (--key value form too); the
	 * command line still wins, whichever name it uses. */
	char path[] = "/tmp/pfs-test-config-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	write_file(path, "[x]\nheartbeat_timeout = 3\ninterval = 7\n");
	char *a1[] = { "prog", "-c", path, "--interval_s=9", NULL };
	assert_int_equal(run(rtab, &c, 4, a1, &help, err, sizeof(err)), 0);
	assert_int_equal(c.hb_ms, 3000);
	assert_true(c.interval_s == 9);
	char *a2[] = { "prog", "-c", path, "--heartbeat_timeout", "20", NULL };
	assert_int_equal(run(rtab, &c, 5, a2, &help, err, sizeof(err)), 0);
	assert_int_equal(c.hb_ms, 20000);
	unlink(path);
	pfs_log_set_sink(NULL, NULL);

	/* --help lists the keys as --key=DEFAULT and the old names apart. */
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	pfs_cfg_usage(rtab, "--", f);
	fclose(f);
	assert_non_null(strstr(buf, "  --heartbeat_timeout_ms=10000 "));
	assert_null(strstr(buf, "--heartbeat_timeout="));
	assert_non_null(strstr(buf, "deprecated keys"));
	assert_non_null(strstr(buf, "old name of heartbeat_timeout_ms, in seconds"));
	free(buf);
}

static void test_config_help_version(void **state)
{
	struct cfg c;
	char err[256];
	int help;

	/* Found wherever they are, before anything else is read. */
	char *a1[] = { "prog", "--config=/nonexistent/pfs.ini", "--nosuch", "--version", NULL };
	assert_int_equal(run(tab, &c, 4, a1, &help, err, sizeof(err)), 0);
	assert_int_equal(help, PFS_CFG_VERSION);
	char *a2[] = { "prog", "--io_threads=abc", "-h", NULL };
	assert_int_equal(run(tab, &c, 3, a2, &help, err, sizeof(err)), 0);
	assert_int_equal(help, PFS_CFG_HELP);
	char *a3[] = { "prog", "-V", NULL };
	assert_int_equal(run(tab, &c, 2, a3, &help, err, sizeof(err)), 0);
	assert_int_equal(help, PFS_CFG_VERSION);
	/* Not as the value of -o or -c. */
	char *a4[] = { "prog", "-o", "-h", NULL };
	assert_int_equal(run(tab, &c, 3, a4, &help, err, sizeof(err)), -EINVAL);
	assert_int_equal(help, 0);
	char *a5[] = { "prog", "-c", NULL };
	assert_int_equal(run(tab, &c, 2, a5, &help, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "-c needs a file"));
	char *a6[] = { "prog", "-o", "nosuch=1", NULL };
	assert_int_equal(run(tab, &c, 3, a6, &help, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "unknown option 'nosuch'");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config_defaults),
		cmocka_unit_test(test_config_sizes),
		cmocka_unit_test(test_config_file_and_argv),
		cmocka_unit_test(test_config_errors),
		cmocka_unit_test(test_config_empty_values),
		cmocka_unit_test(test_config_ranges),
		cmocka_unit_test(test_config_aliases),
		cmocka_unit_test(test_config_help_version),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
