/* test_cli_admin_args.c — pfsadmin without a server: size formatting and
 * tables, the command line of every base command (getopt_long: short and
 * long options as lfs names them, glued and separate values, options after
 * operands, help and version everywhere, bad lines with the message that
 * names the problem), the help texts, target names, error messages, and
 * mountinfo parsing (escaped paths, nested and stacked mounts). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "client/admin_args.h"
#include "client/admin_cmd.h"
#include "client/admin_df.h"
#include "client/admin_fmt.h"
#include "client/admin_i.h"
#include "client/admin_mnt.h"
#include "client/admin_version.h"
#include "common/layout.h"

/* ---------------------------------------------------------------- fmt */

static void test_admin_fmt_size(void **state)
{
	char b[32];

	assert_string_equal(cli_fmt_size(0, 1, b, sizeof(b)), "0B");
	assert_string_equal(cli_fmt_size(1023, 1, b, sizeof(b)), "1023B");
	assert_string_equal(cli_fmt_size(1024, 1, b, sizeof(b)), "1.0K");
	assert_string_equal(cli_fmt_size(1536, 1, b, sizeof(b)), "1.5K");
	assert_string_equal(cli_fmt_size(10 * 1024 - 1, 1, b, sizeof(b)), "10K");
	assert_string_equal(cli_fmt_size(10 * 1024, 1, b, sizeof(b)), "10K");
	assert_string_equal(cli_fmt_size(5u << 19, 1, b, sizeof(b)), "2.5M");
	assert_string_equal(cli_fmt_size(500ull << 30, 1, b, sizeof(b)), "500G");
	assert_string_equal(cli_fmt_size(3ull << 40, 1, b, sizeof(b)), "3.0T");
	assert_string_equal(cli_fmt_size(UINT64_MAX, 1, b, sizeof(b)), "16E");
	assert_string_equal(cli_fmt_size(123456789, 0, b, sizeof(b)), "123456789");
}

static void test_admin_fmt_pct(void **state)
{
	assert_int_equal(cli_fmt_pct(0, 0), 0);
	assert_int_equal(cli_fmt_pct(0, 100), 0);
	assert_int_equal(cli_fmt_pct(50, 100), 50);
	assert_int_equal(cli_fmt_pct(1, 3), 34); /* rounds up, as df */
	assert_int_equal(cli_fmt_pct(100, 100), 100);
	assert_int_equal(cli_fmt_pct(UINT64_MAX, UINT64_MAX), 100);
}

/* Run fn(out) into a memory stream and return the text (caller frees). */
static char *capture_table(const cli_table *t)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	cli_table_print(t, f);
	fclose(f);
	return buf;
}

static void test_admin_fmt_table(void **state)
{
	static const cli_col cols[] = { { "NAME", 0 }, { "N", 1 }, { "NOTE", 0 } };
	const char *r1[] = { "a", "1", "x" };
	const char *r3[] = { "", "7", "" }; /* empty cells: no trailing blanks */
	const char *r2[] = { "longer", "12345", NULL };
	cli_table *t = NULL;
	char *s;

	assert_int_equal(cli_table_create(cols, 0, &t), -EINVAL);
	assert_int_equal(cli_table_create(cols, 3, &t), 0);
	assert_int_equal(cli_table_add(t, r1), 0);
	assert_int_equal(cli_table_add_break(t), 0);
	assert_int_equal(cli_table_add(t, r2), 0);
	assert_int_equal(cli_table_add(t, r3), 0);
	s = capture_table(t);
	assert_string_equal(s, "NAME        N  NOTE\n"
			       "a           1  x\n"
			       "\n"
			       "longer  12345  -\n"
			       "            7\n");
	free(s);
	cli_table_free(t);
}

/* Many rows: the table grows past its first allocation. */
static void test_admin_fmt_table_grow(void **state)
{
	static const cli_col cols[] = { { "I", 1 } };
	cli_table *t = NULL;
	char *s, num[16];
	const char *cells[1] = { num };
	int lines = 0;

	assert_int_equal(cli_table_create(cols, 1, &t), 0);
	for (int i = 0; i < 100; i++) {
		snprintf(num, sizeof(num), "%d", i);
		assert_int_equal(cli_table_add(t, cells), 0);
	}
	s = capture_table(t);
	for (char *p = s; *p; p++)
		lines += *p == '\n';
	assert_int_equal(lines, 101);
	assert_non_null(strstr(s, "\n99\n"));
	assert_non_null(strstr(s, "\n 0\n"));
	free(s);
	cli_table_free(t);
}

/* A span row: first cell padded to its column, then the text, which
 * widens nothing (lfs df's "inactive device" line). */
static void test_admin_fmt_table_span(void **state)
{
	static const cli_col cols[] = { { "UUID", 0 }, { "SIZE", 1 }, { "WHERE", 0 } };
	const char *r1[] = { "pfs-OST0000_UUID", "1024", "[OST:0]" };
	cli_table *t = NULL;
	char *s;

	assert_int_equal(cli_table_create(cols, 1, &t), 0);
	assert_int_equal(cli_table_add_span(t, "a", "b"), -EINVAL);
	cli_table_free(t);
	assert_int_equal(cli_table_create(cols, 3, &t), 0);
	assert_int_equal(cli_table_add(t, r1), 0);
	assert_int_equal(cli_table_add_span(t, "pfs-OST0001_UUID", ": inactive device, wide text"),
			 0);
	s = capture_table(t);
	assert_string_equal(s, "UUID              SIZE  WHERE\n"
			       "pfs-OST0000_UUID  1024  [OST:0]\n"
			       "pfs-OST0001_UUID  : inactive device, wide text\n");
	free(s);
	cli_table_free(t);
}

/* Target names as Lustre writes them: four hex digits. */
static void test_admin_target_name(void **state)
{
	char b[64];

	assert_string_equal(cli_admin_target_name("pfs", "OST", 0, b, sizeof(b)), "pfs-OST0000");
	assert_string_equal(cli_admin_target_name("pfs", "OST", 10, b, sizeof(b)), "pfs-OST000a");
	assert_string_equal(cli_admin_target_name("scratch", "MDT", 0, b, sizeof(b)),
			    "scratch-MDT0000");
	assert_string_equal(cli_admin_target_name("x", "OST", 0x1234f, b, sizeof(b)),
			    "x-OST1234f");
}

/* --------------------------------------------------------------- args */

/* Parse a NULL-terminated list of words after "pfsadmin".  The words are
 * copied into argv (getopt permutes it), which stays valid until the next
 * call, as do the pointers in a. */
static char *argv_keep[40];

static int parse(cli_admin_args *a, char *err, ...)
{
	int argc = 1;
	va_list ap;
	char *s;

	argv_keep[0] = "pfsadmin";
	va_start(ap, err);
	while ((s = va_arg(ap, char *)) != NULL && argc < 39)
		argv_keep[argc++] = s;
	va_end(ap);
	argv_keep[argc] = NULL;
	return cli_admin_parse_args(argc, argv_keep, a, err, 256);
}

static void test_admin_args_good(void **state)
{
	cli_admin_args a;
	char err[256];

	assert_int_equal(parse(&a, err, "ost", "list", NULL), 0);
	assert_int_equal(a.cmd, CLI_ADMIN_OST_LIST);
	assert_int_equal(a.json, 0);
	assert_null(a.mds);
	assert_null(a.path);
	assert_true(a.timeout_s == 0);
	assert_null(a.fsname);

	assert_int_equal(parse(&a, err, "--mds", "h:1", "--json", "df", "-h", "/mnt/p", NULL), 0);
	assert_int_equal(a.cmd, CLI_ADMIN_DF);
	assert_string_equal(a.mds, "h:1");
	assert_int_equal(a.json, 1);
	assert_int_equal(a.human, 1);
	assert_int_equal(a.inodes, 0);
	assert_string_equal(a.path, "/mnt/p");

	/* globals after the command, long options with '=' */
	assert_int_equal(parse(&a, err, "df", "--json", "--mds=x:9", "--timeout", "2.5",
			       "--fsname=scratch", "--inodes", NULL), 0);
	assert_int_equal(a.json, 1);
	assert_int_equal(a.human, 0);
	assert_int_equal(a.inodes, 1);
	assert_string_equal(a.mds, "x:9");
	assert_true(a.timeout_s == 2.5);
	assert_string_equal(a.fsname, "scratch");
	assert_int_equal(parse(&a, err, "df", "-ih", "--human-readable", NULL), 0);
	assert_true(a.inodes && a.human);

	assert_int_equal(parse(&a, err, "setstripe", "-c", "4", "-S", "1M", "/f", NULL), 0);
	assert_int_equal(a.cmd, CLI_ADMIN_SETSTRIPE);
	assert_true(a.stripe.have_count && a.stripe.have_size && !a.stripe.have_index);
	assert_int_equal(a.stripe.count, 4);
	assert_int_equal(a.stripe.size, 1u << 20);
	assert_string_equal(a.path, "/f");

	/* lfs's long names; operands before options; "-1" is a value */
	assert_int_equal(parse(&a, err, "setstripe", "/f", "--stripe-count", "2",
			       "--stripe-size=256K", "--stripe-index", "-1", NULL), 0);
	assert_int_equal(a.stripe.count, 2);
	assert_int_equal(a.stripe.size, 256u << 10);
	assert_true(a.stripe.have_index);
	assert_int_equal(a.stripe.index, CLI_STRIPE_INDEX_ANY);
	assert_string_equal(a.path, "/f");
	assert_int_equal(parse(&a, err, "setstripe", "-i", "3", "/f", NULL), 0);
	assert_int_equal(a.stripe.index, 3);
	assert_int_equal(a.stripe.have_count, 0);
	assert_int_equal(parse(&a, err, "setstripe", "--stripe-index=2", "-c", "2", "/d", NULL), 0);
	assert_true(a.stripe.have_index && a.stripe.have_count);
	assert_int_equal(a.stripe.index, 2);

	assert_int_equal(parse(&a, err, "setstripe", "-c", "-1", "/f", NULL), 0);
	assert_int_equal(a.stripe.count, CLI_STRIPE_ALL);
	assert_int_equal(a.stripe.have_size, 0);

	assert_int_equal(parse(&a, err, "setstripe", "-S64K", "-c64", "--", "-odd", NULL), 0);
	assert_int_equal(a.stripe.size, 64u << 10);
	assert_int_equal(a.stripe.count, 64);
	assert_string_equal(a.path, "-odd");

	assert_int_equal(parse(&a, err, "setstripe", "-d", "/dir", NULL), 0);
	assert_int_equal(a.stripe.del, 1);
	assert_int_equal(parse(&a, err, "setstripe", "--delete", "/dir", NULL), 0);
	assert_int_equal(a.stripe.del, 1);

	assert_int_equal(parse(&a, err, "getstripe", "/a/b", NULL), 0);
	assert_int_equal(a.cmd, CLI_ADMIN_GETSTRIPE);
	assert_string_equal(a.path, "/a/b");
	assert_int_equal(a.npaths, 1);
	assert_int_equal(a.select, 0);
	assert_int_equal(parse(&a, err, "getstripe", "/a", "-c", "/b", "--stripe-size", "/c", "-y",
			       "-d", NULL), 0);
	assert_int_equal(a.npaths, 3);
	assert_string_equal(a.paths[0], "/a");
	assert_string_equal(a.paths[1], "/b");
	assert_string_equal(a.paths[2], "/c");
	assert_int_equal(a.select, CLI_SEL_COUNT | CLI_SEL_SIZE);
	assert_int_equal(a.yaml, 1);
	assert_int_equal(parse(&a, err, "getstripe", "-cSi", "/a", NULL), 0);
	assert_int_equal(a.select, CLI_SEL_COUNT | CLI_SEL_SIZE | CLI_SEL_INDEX);
	assert_int_equal(parse(&a, err, "getstripe", "--stripe-index", "/a", NULL), 0);
	assert_int_equal(a.select, CLI_SEL_INDEX);

	assert_int_equal(parse(&a, err, "ping", NULL), 0);
	assert_int_equal(a.cmd, CLI_ADMIN_PING);
	assert_int_equal(a.ping_count, 1);
	assert_int_equal(parse(&a, err, "ping", "-c", "5", NULL), 0);
	assert_int_equal(a.ping_count, 5);
	assert_int_equal(parse(&a, err, "ping", "--count=7", NULL), 0);
	assert_int_equal(a.ping_count, 7);

	assert_int_equal(parse(&a, err, "lfsck", NULL), 0);
	assert_int_equal(a.cmd, CLI_ADMIN_LFSCK);
	assert_int_equal(a.dry_run, 0);
	assert_int_equal(parse(&a, err, "lfsck", "--dry-run", "--json", NULL), 0);
	assert_int_equal(a.dry_run, 1);
	assert_int_equal(a.json, 1);
	assert_int_equal(parse(&a, err, "lfsck", "-n", NULL), 0);
	assert_int_equal(a.dry_run, 1);
	assert_int_equal(parse(&a, err, "lfsck", "/mnt", NULL), -EINVAL);
	assert_int_equal(parse(&a, err, "lfsck", "--dry", "--force", NULL), -EINVAL);
}

/* Help and version from everywhere; df -h stays human-readable. */
static void test_admin_args_help(void **state)
{
	cli_admin_args a;
	char err[256];

#define HELP(want_cmd, ...) do { \
		assert_int_equal(parse(&a, err, __VA_ARGS__, NULL), 0); \
		assert_int_equal(a.cmd, CLI_ADMIN_HELP); \
		assert_int_equal(a.help_cmd, want_cmd); \
	} while (0)
	HELP(CLI_ADMIN_HELP, "help");
	HELP(CLI_ADMIN_HELP, "help", "--help");
	HELP(CLI_ADMIN_HELP, "--help");
	HELP(CLI_ADMIN_HELP, "-h");
	HELP(CLI_ADMIN_HELP, "--mds", "h:1", "-h", "df");
	HELP(CLI_ADMIN_DF, "df", "--help");
	HELP(CLI_ADMIN_DF, "help", "df");
	HELP(CLI_ADMIN_SETSTRIPE, "setstripe", "-h");
	HELP(CLI_ADMIN_SETSTRIPE, "setstripe", "-c", "2", "--help", "/f");
	HELP(CLI_ADMIN_GETSTRIPE, "getstripe", "--help");
	HELP(CLI_ADMIN_OST_LIST, "ost", "list", "-h");
	HELP(CLI_ADMIN_PING, "ping", "-h");
	HELP(CLI_ADMIN_JOB_LIST, "job", "list", "--help");
	HELP(CLI_ADMIN_NRS_RULE, "nrs", "tbf", "rule", "start", "-h");
	HELP(CLI_ADMIN_QOS_POLICY_SET, "help", "qos", "policy", "set");
	HELP(CLI_ADMIN_HELP, "job", "--help");
	assert_string_equal(a.help_family, "job");
	HELP(CLI_ADMIN_HELP, "help", "qos");
	assert_string_equal(a.help_family, "qos");
	HELP(CLI_ADMIN_HELP, "nrs", "tbf", "-h");
	assert_string_equal(a.help_family, "nrs");
#undef HELP
	assert_int_equal(parse(&a, err, "df", "-h", NULL), 0);
	assert_int_equal(a.cmd, CLI_ADMIN_DF);
	assert_int_equal(a.human, 1);
	assert_int_equal(parse(&a, err, "--version", NULL), 0);
	assert_int_equal(a.cmd, CLI_ADMIN_VERSION);
	assert_int_equal(parse(&a, err, "df", "--version", NULL), 0);
	assert_int_equal(a.cmd, CLI_ADMIN_VERSION);
	assert_int_equal(parse(&a, err, "help", "frob", NULL), -EINVAL);
	assert_non_null(strstr(err, "no command 'frob'"));
}

/* Every bad command line is -EINVAL with a message naming the problem. */
static void test_admin_args_bad(void **state)
{
	cli_admin_args a;
	char err[256];

#define BAD(substr, ...) do { \
		assert_int_equal(parse(&a, err, __VA_ARGS__, NULL), -EINVAL); \
		if (!strstr(err, substr)) \
			fail_msg("error '%s' lacks '%s'", err, substr); \
	} while (0)

	assert_int_equal(parse(&a, err, NULL), -EINVAL);
	assert_non_null(strstr(err, "no command"));
	BAD("no command", "--json");
	BAD("unknown command 'frobnicate'", "frobnicate");
	BAD("unknown option '-x'", "-x", "df");
	BAD("unknown option '--stripe-count'", "--stripe-count", "2");
	BAD("option '--mds' needs a value", "--mds");
	BAD("'ost' needs a subcommand: list", "ost");
	BAD("'ost' needs a subcommand: list", "ost", "show");
	assert_string_equal(a.help_family, "ost");
	BAD("unknown option '-i' for ost list", "ost", "list", "-i");
	BAD("unknown option '-x' for df", "df", "-x");
	BAD("unknown option '--inodez' for df", "df", "--inodez");
	BAD("unknown option '--human-readable=1' for df", "df", "--human-readable=1");
	BAD("unexpected argument '/b'", "df", "/a", "/b");
	BAD("setstripe needs -c COUNT, -S SIZE and/or -i INDEX", "setstripe", "/f");
	BAD("setstripe needs a PATH", "setstripe", "-c", "2");
	assert_int_equal(a.cmd, CLI_ADMIN_SETSTRIPE); /* for "Try 'pfsadmin setstripe --help'" */
	BAD("option '-c' needs a value", "setstripe", "/f", "-c");
	BAD("option '--stripe-size' needs a value", "setstripe", "/f", "--stripe-size");
	BAD("unexpected argument '/g'", "setstripe", "-c", "1", "/f", "/g");
	BAD("stripe count 0 out of range", "setstripe", "-c", "0", "/f");
	BAD("stripe count 65 out of range", "setstripe", "-c", "65", "/f");
	BAD("stripe count -2 out of range", "setstripe", "--stripe-count=-2", "/f");
	BAD("not a number", "setstripe", "-c", "two", "/f");
	BAD("multiple of 64K", "setstripe", "-S", "100K", "/f");
	BAD("multiple of 64K", "setstripe", "-S", "0", "/f");
	BAD("multiple of 64K", "setstripe", "-S", "32K", "/f");
	BAD("multiple of 64K", "setstripe", "-S", "2G", "/f");
	BAD("not a size", "setstripe", "-S", "1X", "/f");
	BAD("not a size", "setstripe", "-S", "-64K", "/f");
	BAD("stripe index '-2'", "setstripe", "-i", "-2", "/f");
	BAD("stripe index '65536'", "setstripe", "-i", "65536", "/f");
	BAD("stripe index 'x'", "setstripe", "--stripe-index", "x", "/f");
	BAD("-d deletes a directory's default: it takes no -c, -S or -i", "setstripe", "-d", "-c",
	    "2", "/d");
	BAD("getstripe needs a PATH", "getstripe");
	BAD("unknown option '-x' for getstripe", "getstripe", "-x", "/f");
	BAD("unknown option '--stripe-count=1' for getstripe", "getstripe", "--stripe-count=1",
	    "/f");
	BAD("ping count", "ping", "-c", "0");
	BAD("ping count", "ping", "-c", "-3");
	BAD("unknown option '-S' for ping", "ping", "-S", "1M");
	BAD("--timeout '0' must be a number of seconds above 0", "--timeout", "0", "df");
	BAD("--timeout 'x'", "df", "--timeout=x");
	BAD("--timeout '-1'", "--timeout", "-1", "df");
	BAD("--timeout 'inf'", "--timeout", "inf", "df");
	BAD("--timeout '99999'", "--timeout", "99999", "df");
	BAD("option '--timeout' needs a value", "df", "--timeout");
	BAD("file system name 'a b' may only have", "--fsname", "a b", "df");
	BAD("file system name '' must be 1..16", "--fsname=", "df");
#undef BAD
}

/* The parser leaves no getopt state behind: a bad line, then a good one. */
static void test_admin_args_reentrant(void **state)
{
	cli_admin_args a;
	char err[256];

	for (int i = 0; i < 3; i++) {
		assert_int_equal(parse(&a, err, "getstripe", "-cx", "/f", NULL), -EINVAL);
		assert_int_equal(parse(&a, err, "setstripe", "-c2", "/f", NULL), 0);
		assert_int_equal(a.stripe.count, 2);
		assert_int_equal(parse(&a, err, "getstripe", "-c", "/f", NULL), 0);
		assert_int_equal(a.select, CLI_SEL_COUNT);
	}
}

static void test_admin_parse_values(void **state)
{
	char err[256];
	double t = 0;
	int32_t i = 0;

	assert_int_equal(cli_admin_parse_timeout("0.25", &t, err, sizeof(err)), 0);
	assert_true(t == 0.25);
	assert_int_equal(cli_admin_parse_timeout("3600", &t, err, sizeof(err)), 0);
	assert_int_equal(cli_admin_parse_timeout("1e3", &t, err, sizeof(err)), 0);
	assert_int_equal(cli_admin_parse_timeout(" 1", &t, err, sizeof(err)), -EINVAL);
	assert_int_equal(cli_admin_parse_timeout("nan", &t, err, sizeof(err)), -EINVAL);
	assert_int_equal(cli_admin_parse_stripe_index("65535", &i, err, sizeof(err)), 0);
	assert_int_equal(i, 65535);
	assert_int_equal(cli_admin_check_fsname("lustre_1-a", err, sizeof(err)), 0);
	assert_int_equal(cli_admin_check_fsname("abcdefghijklmnopq", err, sizeof(err)), -EINVAL);
	assert_int_equal(cli_admin_check_fsname("a/b", err, sizeof(err)), -EINVAL);
}

/* ---------------------------------------------------------------- help */

static char *capture_help(const cli_admin_args *a)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	if (a)
		cli_admin_help(a, f);
	else
		cli_admin_version(f);
	fclose(f);
	return buf;
}

static void test_admin_help_texts(void **state)
{
	cli_admin_args a;
	char err[256], *s;

	/* the usage names every command and the global options */
	assert_int_equal(parse(&a, err, "--help", NULL), 0);
	s = capture_help(&a);
	for (size_t i = 0; i < cli__ncmdwords; i++)
		assert_non_null(strstr(s, cli__cmdwords[i].w[0]));
	assert_non_null(strstr(s, "  df [-h] [-i] [PATH]\n"));
	assert_non_null(strstr(s, "qos policy set [NAME] [KEY=VALUE ...]"));
	assert_non_null(strstr(s, "--timeout SECS"));
	assert_non_null(strstr(s, "Exit status: 0 success, 1 error, 2 usage error"));
	free(s);

	/* one command: its synopsis and options, nothing of the others */
	assert_int_equal(parse(&a, err, "setstripe", "--help", NULL), 0);
	s = capture_help(&a);
	assert_memory_equal(s, "usage: pfsadmin setstripe [-c N] [-S SIZE] [-i IDX] [-d] PATH\n",
			    62);
	assert_non_null(strstr(s, "  -c, --stripe-count N "));
	assert_non_null(strstr(s, "  -S, --stripe-size SIZE "));
	assert_non_null(strstr(s, "  -i, --stripe-index IDX "));
	assert_non_null(strstr(s, "  -d, --delete "));
	assert_non_null(strstr(s, "file\nalready has a layout"));
	assert_null(strstr(s, "getstripe"));
	free(s);

	/* a family: each of its commands */
	assert_int_equal(parse(&a, err, "job", "-h", NULL), 0);
	s = capture_help(&a);
	assert_non_null(strstr(s, "usage: pfsadmin job register JOBID"));
	assert_non_null(strstr(s, "usage: pfsadmin job end JOBID"));
	assert_non_null(strstr(s, "usage: pfsadmin job list [--all]"));
	assert_non_null(strstr(s, "usage: pfsadmin job show JOBID"));
	assert_null(strstr(s, "jobstats"));
	free(s);

	s = capture_help(NULL);
	assert_string_equal(s, "pfsadmin (pfs) " PFS_VERSION "\n");
	free(s);
	assert_string_equal(cli_admin_cmd_name(CLI_ADMIN_QOS_POLICY_SET), "qos policy set");
	assert_string_equal(cli_admin_cmd_name(CLI_ADMIN_HELP), "");
}

/* ------------------------------------------------------------ messages */

/* "<what>: <why>", strerror only when no why was set; transport errors
 * in words. */
static void test_admin_errmsg(void **state)
{
	cli_admin a;
	char buf[512], t[96];

	memset(&a, 0, sizeof(a));
	snprintf(a.what, sizeof(a.what), "getstripe /m/f");
	assert_string_equal(cli_admin_errmsg(&a, -EACCES, buf, sizeof(buf)),
			    "getstripe /m/f: Permission denied");
	snprintf(a.why, sizeof(a.why), "file already has a layout");
	assert_string_equal(cli_admin_errmsg(&a, -EEXIST, buf, sizeof(buf)),
			    "getstripe /m/f: file already has a layout");
	assert_null(cli__transport_text(-ENOENT, 1000, t, sizeof(t)));
	assert_null(cli__transport_text(-EEXIST, 1000, t, sizeof(t)));
	assert_non_null(strstr(cli__transport_text(-ECONNREFUSED, 0, t, sizeof(t)),
			       "not reachable (connection refused"));
	assert_string_equal(cli__transport_text(-ETIMEDOUT, 2500, t, sizeof(t)),
			    "did not answer within 2.5 s (--timeout)");
	assert_non_null(strstr(cli__transport_text(-EHOSTUNREACH, 0, t, sizeof(t)),
			       "not reachable"));
	assert_non_null(strstr(cli__transport_text(-EPIPE, 0, t, sizeof(t)),
			       "closed the connection"));
}

/* ---------------------------------------------------------- mountinfo */

static void test_admin_mnt_unescape(void **state)
{
	char out[64];
	const char *in = "/a\\040b\\011c\\134d\\012";

	assert_int_equal(cli_mnt_unescape(in, strlen(in), out, sizeof(out)), 0);
	assert_string_equal(out, "/a b\tc\\d\n");
	/* Not an escape: kept as is. */
	assert_int_equal(cli_mnt_unescape("x\\9y\\04", 7, out, sizeof(out)), 0);
	assert_string_equal(out, "x\\9y\\04");
	assert_int_equal(cli_mnt_unescape("abcdef", 6, out, 4), -ENAMETOOLONG);
	assert_int_equal(cli_mnt_unescape("abc", 3, out, 4), 0);
}

static void test_admin_mnt_parse_line(void **state)
{
	cli_mnt_entry e;

	assert_int_equal(cli_mnt_parse_line("36 35 98:0 /mnt1 /mnt/parent rw,noatime "
					    "master:1 shared:7 - ext3 /dev/root rw,errors=continue\n",
					    &e), 0);
	assert_string_equal(e.mountpoint, "/mnt/parent");
	assert_string_equal(e.fstype, "ext3");
	assert_string_equal(e.source, "/dev/root");

	/* no optional fields, escaped space in the mount point */
	assert_int_equal(cli_mnt_parse_line("50 1 0:45 / /mnt/my\\040pfs rw,nosuid - fuse.pfs "
					    "10.0.0.5:7000 rw,user_id=0", &e), 0);
	assert_string_equal(e.mountpoint, "/mnt/my pfs");
	assert_string_equal(e.fstype, "fuse.pfs");
	assert_string_equal(e.source, "10.0.0.5:7000");

	assert_int_equal(cli_mnt_parse_line("", &e), -EINVAL);
	assert_int_equal(cli_mnt_parse_line("1 2 3:4 / /x rw", &e), -EINVAL);  /* no "-" */
	assert_int_equal(cli_mnt_parse_line("1 2 3:4 / /x rw - ext4", &e), -EINVAL);
}

static char tmpdir[256];

static int mk_tmpdir(void **state)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/pfs-admin-test.XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int rm_tmpdir(void **state)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static const char fake_mountinfo[] =
	"22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
	"30 22 0:50 / /mnt/pfs rw,nosuid,nodev shared:20 - fuse.pfs mds1:7000 rw,user_id=0\n"
	"31 30 8:2 / /mnt/pfs/scratch rw shared:21 - ext4 /dev/sdb1 rw\n"
	"32 22 0:51 / /mnt/my\\040pfs rw - fuse.pfs [::1]:7100 rw\n"
	"garbage line that is not mountinfo\n"
	"33 22 0:52 / /mnt/stack rw - fuse.pfs old:1 rw\n"
	"34 22 0:53 / /mnt/stack rw - fuse.pfs new:2 rw\n"
	"35 22 0:54 / /mnt/pfsx rw - tmpfs tmpfs rw\n";

static void test_admin_mnt_find(void **state)
{
	char mi[300], addr[64], mnt[256];

	snprintf(mi, sizeof(mi), "%s/mountinfo", tmpdir);
	write_file(mi, fake_mountinfo);

	assert_int_equal(cli_mnt_find(mi, "/mnt/pfs/a/b", addr, sizeof(addr), mnt, sizeof(mnt)),
			 0);
	assert_string_equal(addr, "mds1:7000");
	assert_string_equal(mnt, "/mnt/pfs");
	assert_int_equal(cli_mnt_find(mi, "/mnt/pfs", addr, sizeof(addr), NULL, 0), 0);
	assert_string_equal(addr, "mds1:7000");
	/* escaped space */
	assert_int_equal(cli_mnt_find(mi, "/mnt/my pfs/dir/f", addr, sizeof(addr), mnt,
				      sizeof(mnt)), 0);
	assert_string_equal(addr, "[::1]:7100");
	assert_string_equal(mnt, "/mnt/my pfs");
	/* the later of two mounts on one point is on top */
	assert_int_equal(cli_mnt_find(mi, "/mnt/stack/f", addr, sizeof(addr), NULL, 0), 0);
	assert_string_equal(addr, "new:2");
	/* a non-pfs mount inside a pfs mount hides it */
	assert_int_equal(cli_mnt_find(mi, "/mnt/pfs/scratch/f", addr, sizeof(addr), NULL, 0),
			 -ENOENT);
	/* prefix by whole components only: /mnt/pfsx is not under /mnt/pfs */
	assert_int_equal(cli_mnt_find(mi, "/mnt/pfsx/f", addr, sizeof(addr), NULL, 0), -ENOENT);
	assert_int_equal(cli_mnt_find(mi, "/home/u", addr, sizeof(addr), NULL, 0), -ENOENT);
	/* several pfs mounts and no path: ambiguous */
	assert_int_equal(cli_mnt_find(mi, NULL, addr, sizeof(addr), NULL, 0), -EEXIST);
	/* addr buffer too small */
	assert_int_equal(cli_mnt_find(mi, "/mnt/pfs/a", addr, 4, NULL, 0), -ENAMETOOLONG);
	/* missing file */
	snprintf(mi, sizeof(mi), "%s/nonexistent", tmpdir);
	assert_int_equal(cli_mnt_find(mi, "/mnt/pfs", addr, sizeof(addr), NULL, 0), -ENOENT);
}

static void test_admin_mnt_find_single(void **state)
{
	char mi[300], addr[64], mnt[256];

	snprintf(mi, sizeof(mi), "%s/mountinfo1", tmpdir);
	write_file(mi, "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n"
		       "30 22 0:50 / /scratch\\040space rw - fuse.pfs h:9 rw\n");
	assert_int_equal(cli_mnt_find(mi, NULL, addr, sizeof(addr), mnt, sizeof(mnt)), 0);
	assert_string_equal(addr, "h:9");
	assert_string_equal(mnt, "/scratch space");
	write_file(mi, "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n");
	assert_int_equal(cli_mnt_find(mi, NULL, addr, sizeof(addr), NULL, 0), -ENOENT);
}

static void test_admin_mnt_canon(void **state)
{
	char p[600], out[600], want[4200], real[4096];

	assert_non_null(realpath(tmpdir, real));
	snprintf(p, sizeof(p), "%s/./sub/../newfile", tmpdir);
	/* "sub" does not exist, so realpath of the parent fails */
	assert_int_equal(cli_mnt_canon(p, out, sizeof(out)), -ENOENT);
	snprintf(p, sizeof(p), "%s/./newfile", tmpdir);
	assert_int_equal(cli_mnt_canon(p, out, sizeof(out)), 0);
	snprintf(want, sizeof(want), "%s/newfile", real);
	assert_string_equal(out, want);
	snprintf(p, sizeof(p), "%s//", tmpdir);
	assert_int_equal(cli_mnt_canon(p, out, sizeof(out)), 0);
	assert_string_equal(out, real);
	assert_int_equal(cli_mnt_canon("/", out, sizeof(out)), 0);
	assert_string_equal(out, "/");
	assert_int_equal(cli_mnt_canon(tmpdir, out, 4), -ENAMETOOLONG);
}

int main(void)
{
	const struct CMUnitTest pure[] = {
		cmocka_unit_test(test_admin_fmt_size),
		cmocka_unit_test(test_admin_fmt_pct),
		cmocka_unit_test(test_admin_fmt_table),
		cmocka_unit_test(test_admin_fmt_table_grow),
		cmocka_unit_test(test_admin_fmt_table_span),
		cmocka_unit_test(test_admin_target_name),
		cmocka_unit_test(test_admin_args_good),
		cmocka_unit_test(test_admin_args_help),
		cmocka_unit_test(test_admin_args_bad),
		cmocka_unit_test(test_admin_args_reentrant),
		cmocka_unit_test(test_admin_parse_values),
		cmocka_unit_test(test_admin_help_texts),
		cmocka_unit_test(test_admin_errmsg),
		cmocka_unit_test(test_admin_mnt_unescape),
		cmocka_unit_test(test_admin_mnt_parse_line),
		cmocka_unit_test(test_admin_mnt_find),
		cmocka_unit_test(test_admin_mnt_find_single),
		cmocka_unit_test(test_admin_mnt_canon),
	};

	return cmocka_run_group_tests_name("admin_args", pure, mk_tmpdir, rm_tmpdir);
}
