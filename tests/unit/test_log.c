/* test_log.c — the dated line format (with an injected clock, and a
 * pattern check against the real one), levels, destinations (file, its
 * reopen after a move, bad destinations, the journal's priority prefix,
 * stderr captured into the file) and the test sink. */
#include <errno.h>
#include <fcntl.h>
#include <regex.h>
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

#include "common/log.h"

/* 2026-11-26T03:05:22.123456789Z */
static void fixed_clock(struct timespec *ts)
{
	ts->tv_sec = 1795662322;
	ts->tv_nsec = 123456789;
}

static char dir[64];

static int setup(void **state)
{
	snprintf(dir, sizeof(dir), "/tmp/pfs-test-log-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	pfs_log_init("pfs-test", PFS_LOG_DEBUG);
	pfs_log_set_clock(fixed_clock);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	pfs_log_close();
	pfs_log_set_clock(NULL);
	pfs_log_set_sink(NULL, NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* The whole of path, NUL-terminated, in a static buffer. */
static const char *slurp(const char *path)
{
	static char buf[8192];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return "";
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* The line pfs_log writes for msg at level, with the fixed clock. */
static const char *expect(const char *level, const char *msg)
{
	static char line[256];

	snprintf(line, sizeof(line), "2026-11-26T03:05:22.123Z pfs-test[%ld] %s: %s\n",
		 (long)getpid(), level, msg);
	return line;
}

static void test_log_format(void **state)
{
	struct timespec ts = { 1795662322, 999999999 };
	char buf[256];
	size_t n;

	n = pfs_log_format(buf, sizeof(buf), &ts, "pfs-oss", 123, PFS_LOG_NOTICE, "hello");
	assert_string_equal(buf, "2026-11-26T03:05:22.999Z pfs-oss[123] notice: hello\n");
	assert_int_equal(n, strlen(buf));
	ts.tv_sec = 0;
	ts.tv_nsec = 5000000;
	pfs_log_format(buf, sizeof(buf), &ts, "pfs-mds", 7, PFS_LOG_ERR, "x");
	assert_string_equal(buf, "1970-01-01T00:00:00.005Z pfs-mds[7] err: x\n");
	pfs_log_format(buf, sizeof(buf), &ts, "p", 1, PFS_LOG_WARNING, "");
	assert_string_equal(buf, "1970-01-01T00:00:00.005Z p[1] warning: \n");

	/* Cut to fit, still one line. */
	char small[64], big[300];
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	n = pfs_log_format(small, sizeof(small), &ts, "p", 1, PFS_LOG_INFO, big);
	assert_int_equal(n, sizeof(small) - 1);
	assert_int_equal(strlen(small), n);
	assert_ptr_equal(strchr(small, '\n'), small + n - 1);
}

static void test_log_file_and_reopen(void **state)
{
	char path[128], moved[128], dest[160], err[256], want[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s/pfs.log", dir);
	snprintf(moved, sizeof(moved), "%s/pfs.log.1", dir);
	snprintf(dest, sizeof(dest), "file:%s", path);
	assert_int_equal(pfs_log_open(dest, err, sizeof(err)), 0);
	pfs_log(PFS_LOG_NOTICE, "first %d", 1);
	pfs_log(PFS_LOG_DEBUG, "second");
	snprintf(want, sizeof(want), "%s", expect("notice", "first 1"));
	strcat(want, expect("debug", "second"));
	assert_string_equal(slurp(path), want);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777 & ~0640, 0); /* 0640 less the umask */

	/* logrotate: move, then reopen: a new file at the old path. */
	assert_int_equal(rename(path, moved), 0);
	pfs_log(PFS_LOG_NOTICE, "still the old file");
	assert_int_equal(pfs_log_reopen(), 1);
	pfs_log(PFS_LOG_WARNING, "new file");
	strcat(want, expect("notice", "still the old file"));
	assert_string_equal(slurp(moved), want);
	assert_string_equal(slurp(path), expect("warning", "new file"));

	/* Appends, never truncates. */
	assert_int_equal(pfs_log_open(dest, err, sizeof(err)), 0);
	pfs_log(PFS_LOG_ERR, "again");
	snprintf(want, sizeof(want), "%s", expect("warning", "new file"));
	strcat(want, expect("err", "again"));
	assert_string_equal(slurp(path), want);

	/* A reopen that fails (a directory took the path: even root cannot
	 * open it for writing) keeps the old file and says so there. */
	assert_int_equal(rename(path, moved), 0);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(pfs_log_reopen(), -EISDIR);
	pfs_log(PFS_LOG_NOTICE, "after");
	assert_non_null(strstr(slurp(moved), "err: log: cannot reopen"));
	assert_non_null(strstr(slurp(moved), expect("notice", "after")));
	assert_int_equal(rmdir(path), 0);

	/* Other destinations: nothing to reopen. */
	pfs_log_close();
	assert_int_equal(pfs_log_reopen(), 0);
}

static void test_log_levels(void **state)
{
	char path[128], dest[160], err[256];

	snprintf(path, sizeof(path), "%s/levels.log", dir);
	snprintf(dest, sizeof(dest), "file:%s", path);
	assert_int_equal(pfs_log_open(dest, err, sizeof(err)), 0);
	pfs_log_set_level(PFS_LOG_NOTICE);
	pfs_log(PFS_LOG_INFO, "dropped");
	pfs_log(PFS_LOG_DEBUG, "dropped");
	pfs_log(PFS_LOG_NOTICE, "kept");
	assert_string_equal(slurp(path), expect("notice", "kept"));
	pfs_log_set_level(PFS_LOG_DEBUG);

	assert_int_equal(pfs_log_level_parse("err"), PFS_LOG_ERR);
	assert_int_equal(pfs_log_level_parse("WARNING"), PFS_LOG_WARNING);
	assert_int_equal(pfs_log_level_parse("warn"), PFS_LOG_WARNING);
	assert_int_equal(pfs_log_level_parse("7"), PFS_LOG_DEBUG);
	assert_int_equal(pfs_log_level_parse(""), -1);
	assert_int_equal(pfs_log_level_parse("loud"), -1);
}

static void test_log_bad_destinations(void **state)
{
	char path[128], dest[160], err[256];

	assert_int_equal(pfs_log_dest_check("stderr", err, sizeof(err)), 0);
	assert_int_equal(pfs_log_dest_check("syslog", err, sizeof(err)), 0);
	assert_int_equal(pfs_log_dest_check("file:/var/log/pfs.log", err, sizeof(err)), 0);
	assert_int_equal(pfs_log_dest_check("", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "needs a value"));
	assert_int_equal(pfs_log_dest_check("journal", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "log: unknown destination 'journal' (stderr, file:PATH or syslog)");
	assert_int_equal(pfs_log_dest_check("file:", err, sizeof(err)), -EINVAL);
	assert_int_equal(pfs_log_dest_check("file:pfs.log", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "absolute"));
	assert_int_equal(pfs_log_dest_check("/var/log/pfs.log", err, sizeof(err)), -EINVAL);

	/* A file that cannot be opened: an error, the destination unchanged. */
	snprintf(path, sizeof(path), "%s/kept.log", dir);
	snprintf(dest, sizeof(dest), "file:%s", path);
	assert_int_equal(pfs_log_open(dest, err, sizeof(err)), 0);
	assert_int_equal(pfs_log_open("file:/nonexistent/dir/pfs.log", err, sizeof(err)), -ENOENT);
	assert_string_equal(err, "log=file:/nonexistent/dir/pfs.log: No such file or directory");
	assert_int_equal(pfs_log_open("bogus", err, sizeof(err)), -EINVAL);
	pfs_log(PFS_LOG_NOTICE, "here");
	assert_string_equal(slurp(path), expect("notice", "here"));
	assert_int_equal(pfs_log_open("syslog", err, sizeof(err)), 0);
	pfs_log(PFS_LOG_NOTICE, "to syslog");
	assert_string_equal(slurp(path), expect("notice", "here"));
}

/* stderr: the dated line; under the journal, its priority first. */
static void test_log_stderr_and_journal(void **state)
{
	char path[128], err[256], js[64], want[300];
	int saved = dup(STDERR_FILENO), fd;
	struct stat st;

	snprintf(path, sizeof(path), "%s/stderr.log", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0 && saved >= 0);
	assert_int_equal(dup2(fd, STDERR_FILENO), STDERR_FILENO);
	assert_int_equal(fstat(fd, &st), 0);
	close(fd);

	unsetenv("JOURNAL_STREAM");
	assert_int_equal(pfs_log_open("stderr", err, sizeof(err)), 0);
	pfs_log(PFS_LOG_ERR, "plain");
	snprintf(js, sizeof(js), "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino + 1);
	setenv("JOURNAL_STREAM", js, 1); /* another stream: not ours */
	assert_int_equal(pfs_log_open("stderr", err, sizeof(err)), 0);
	pfs_log(PFS_LOG_ERR, "still plain");
	snprintf(js, sizeof(js), "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino);
	setenv("JOURNAL_STREAM", js, 1);
	assert_int_equal(pfs_log_open("stderr", err, sizeof(err)), 0);
	pfs_log(PFS_LOG_WARNING, "journal");
	unsetenv("JOURNAL_STREAM");
	pfs_log_close();

	dup2(saved, STDERR_FILENO);
	close(saved);
	snprintf(want, sizeof(want), "%s", expect("err", "plain"));
	strcat(want, expect("err", "still plain"));
	strcat(want, "<4>");
	strcat(want, expect("warning", "journal"));
	assert_string_equal(slurp(path), want);
}

/* A daemonized mount.pfs: what others print on fd 2 lands in the file,
 * also after a reopen. */
static void test_log_capture_stderr(void **state)
{
	char path[128], moved[128], dest[160], err[256], want[300];
	int saved = dup(STDERR_FILENO);

	assert_true(saved >= 0);
	snprintf(path, sizeof(path), "%s/captured.log", dir);
	snprintf(moved, sizeof(moved), "%s/captured.log.1", dir);
	snprintf(dest, sizeof(dest), "file:%s", path);
	assert_int_equal(pfs_log_open(dest, err, sizeof(err)), 0);
	pfs_log_capture_stderr();
	pfs_log(PFS_LOG_NOTICE, "a");
	assert_int_equal(write(STDERR_FILENO, "raw\n", 4), 4);
	assert_int_equal(rename(path, moved), 0);
	assert_int_equal(pfs_log_reopen(), 1);
	assert_int_equal(write(STDERR_FILENO, "raw2\n", 5), 5);
	pfs_log_close();
	dup2(saved, STDERR_FILENO);
	close(saved);
	snprintf(want, sizeof(want), "%sraw\n", expect("notice", "a"));
	assert_string_equal(slurp(moved), want);
	assert_string_equal(slurp(path), "raw2\n");
}

/* The real clock: the pattern of a line, and a date close to now. */
static void test_log_real_clock(void **state)
{
	char path[128], dest[160], err[256], re_text[128], today[16];
	regex_t re;
	time_t now = time(NULL);
	struct tm tm;

	pfs_log_set_clock(NULL);
	snprintf(path, sizeof(path), "%s/real.log", dir);
	snprintf(dest, sizeof(dest), "file:%s", path);
	assert_int_equal(pfs_log_open(dest, err, sizeof(err)), 0);
	pfs_log(PFS_LOG_INFO, "now");
	snprintf(re_text, sizeof(re_text),
		 "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z "
		 "pfs-test\\[%ld\\] info: now\n$", (long)getpid());
	assert_int_equal(regcomp(&re, re_text, REG_EXTENDED | REG_NEWLINE), 0);
	assert_int_equal(regexec(&re, slurp(path), 0, NULL, 0), 0);
	regfree(&re);
	gmtime_r(&now, &tm);
	strftime(today, sizeof(today), "%Y-%m-%d", &tm);
	if (strncmp(slurp(path), today, 10) != 0) { /* midnight may have passed */
		now = time(NULL);
		gmtime_r(&now, &tm);
		strftime(today, sizeof(today), "%Y-%m-%d", &tm);
	}
	assert_memory_equal(slurp(path), today, 10);
	pfs_log_set_clock(fixed_clock);
}

static char sunk[512];

static void sink(int level, const char *msg, void *arg)
{
	size_t n = strlen(sunk);

	snprintf(sunk + n, sizeof(sunk) - n, "%s%d:%s|", (const char *)arg, level, msg);
}

static void test_log_sink(void **state)
{
	char path[128], dest[160], err[256];

	snprintf(path, sizeof(path), "%s/sink.log", dir);
	snprintf(dest, sizeof(dest), "file:%s", path);
	assert_int_equal(pfs_log_open(dest, err, sizeof(err)), 0);
	sunk[0] = '\0';
	pfs_log_set_sink(sink, "s");
	pfs_log(PFS_LOG_NOTICE, "to the sink %s", "only");
	errno = EAGAIN;
	pfs_log(PFS_LOG_ERR, "b");
	assert_int_equal(errno, EAGAIN); /* logging keeps errno */
	pfs_log_set_sink(NULL, NULL);
	pfs_log(PFS_LOG_NOTICE, "to the file");
	assert_string_equal(sunk, "s5:to the sink only|s3:b|");
	assert_string_equal(slurp(path), expect("notice", "to the file"));

	/* Long messages are cut, one line each. */
	char big[3000];
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	pfs_log(PFS_LOG_NOTICE, "%s", big);
	const char *second = strchr(slurp(path), '\n') + 1, *nl = strchr(second, '\n');
	assert_non_null(nl);
	assert_int_equal(nl[1], '\0');
	assert_int_equal(strspn(strstr(second, "notice: ") + 8, "x"), PFS_LOG_MSG_MAX - 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_log_format),
		cmocka_unit_test_setup_teardown(test_log_file_and_reopen, setup, teardown),
		cmocka_unit_test_setup_teardown(test_log_levels, setup, teardown),
		cmocka_unit_test_setup_teardown(test_log_bad_destinations, setup, teardown),
		cmocka_unit_test_setup_teardown(test_log_stderr_and_journal, setup, teardown),
		cmocka_unit_test_setup_teardown(test_log_capture_stderr, setup, teardown),
		cmocka_unit_test_setup_teardown(test_log_real_clock, setup, teardown),
		cmocka_unit_test_setup_teardown(test_log_sink, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
