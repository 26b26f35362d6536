/* test_config.c — option tables: defaults, INI sections, command-line
 * precedence, sizes, booleans, and readable errors. */
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

struct cfg {
	char listen[64];
	int threads;
	uint64_t cache;
	int odirect;
	double ratio;
	uint64_t count;
};

static const pfs_cfg_opt tab[] = {
	{ "listen", PFS_CFG_STR, offsetof(struct cfg, listen), 64, "0.0.0.0:7700", "address" },
	{ "io_threads", PFS_CFG_INT, offsetof(struct cfg, threads), 0, "8", "threads" },
	{ "cache", PFS_CFG_SIZE, offsetof(struct cfg, cache), 0, "64M", "cache size" },
	{ "o_direct", PFS_CFG_BOOL, offsetof(struct cfg, odirect), 0, "no", "O_DIRECT" },
	{ "ratio", PFS_CFG_DOUBLE, offsetof(struct cfg, ratio), 0, "0.5", "a ratio" },
	{ "count", PFS_CFG_U64, offsetof(struct cfg, count), 0, "3", "a count" },
	PFS_CFG_END,
};

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config_defaults),
		cmocka_unit_test(test_config_sizes),
		cmocka_unit_test(test_config_file_and_argv),
		cmocka_unit_test(test_config_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
