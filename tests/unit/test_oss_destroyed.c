/* test_oss_destroyed.c — the record of destroyed object ids: membership,
 * merging into ranges, persistence across a reopen, a torn or damaged
 * record skipped, compaction bounding the file, a foreign file refused. */
#include <errno.h>
#include <fcntl.h>
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

#include "oss/destroyed.h"

typedef struct fixture {
	char dir[64];
	int dirfd;
} fixture;

static int setup(void **state)
{
	fixture *f = calloc(1, sizeof(*f));

	snprintf(f->dir, sizeof(f->dir), "/tmp/pfs-test-destroyed-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	f->dirfd = open(f->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	*state = f;
	return f->dirfd < 0 ? -1 : 0;
}

static int teardown(void **state)
{
	fixture *f = *state;
	char cmd[128];

	close(f->dirfd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd))
		return -1;
	free(f);
	return 0;
}

static off_t file_size(fixture *f)
{
	struct stat st;

	if (fstatat(f->dirfd, OSS_DESTROYED_FILE, &st, 0))
		return -1;
	return st.st_size;
}

static void test_destroyed_ranges(void **state)
{
	fixture *f = *state;
	oss_destroyed *d;
	size_t ranges, recs;

	assert_int_equal(oss_destroyed_open(f->dirfd, OSS_DESTROYED_FILE, &d), 0);
	assert_int_equal(file_size(f), 16); /* the header, written at once */
	assert_false(oss_destroyed_has(d, 5));
	/* 5, 7, then 6 joins them; 9 apart; 8 joins everything */
	assert_int_equal(oss_destroyed_add(d, 5, 1), 0);
	assert_int_equal(oss_destroyed_add(d, 7, 1), 0);
	oss_destroyed_counts(d, &ranges, &recs);
	assert_int_equal(ranges, 2);
	assert_int_equal(oss_destroyed_add(d, 6, 1), 0);
	assert_int_equal(oss_destroyed_add(d, 9, 1), 0);
	oss_destroyed_counts(d, &ranges, &recs);
	assert_int_equal(ranges, 2);
	assert_int_equal(oss_destroyed_add(d, 8, 1), 0);
	oss_destroyed_counts(d, &ranges, &recs);
	assert_int_equal(ranges, 1);
	assert_int_equal(recs, 5);
	for (uint64_t id = 5; id <= 9; id++)
		assert_true(oss_destroyed_has(d, id));
	assert_false(oss_destroyed_has(d, 4));
	assert_false(oss_destroyed_has(d, 10));
	/* Again: nothing written. */
	assert_int_equal(oss_destroyed_add(d, 7, 1), 0);
	oss_destroyed_counts(d, &ranges, &recs);
	assert_int_equal(recs, 5);
	assert_int_equal(file_size(f), 16 * 6);
	/* The extremes. */
	assert_int_equal(oss_destroyed_add(d, 0, 0), 0);
	assert_int_equal(oss_destroyed_add(d, UINT64_MAX, 0), 0);
	assert_true(oss_destroyed_has(d, 0));
	assert_true(oss_destroyed_has(d, UINT64_MAX));
	assert_false(oss_destroyed_has(d, UINT64_MAX - 1));
	oss_destroyed_close(d);
}

/* A batch: one record per run of consecutive new ids, in one write; ids
 * already known and duplicates add nothing; all of it survives a reopen. */
static void test_destroyed_add_many(void **state)
{
	fixture *f = *state;
	oss_destroyed *d;
	size_t ranges, recs;
	const uint64_t a[] = { 9, 5, 7, 6, 5, 100 }, b[] = { 6, 101, 5, 101 };

	assert_int_equal(oss_destroyed_open(f->dirfd, OSS_DESTROYED_FILE, &d), 0);
	assert_int_equal(oss_destroyed_add_many(d, a, 6, 1), 0);
	oss_destroyed_counts(d, &ranges, &recs);
	assert_int_equal(recs, 3); /* 5-7, 9, 100 */
	assert_int_equal(ranges, 3);
	assert_int_equal(file_size(f), 16 + 3 * 16);
	for (uint64_t id = 5; id <= 7; id++)
		assert_true(oss_destroyed_has(d, id));
	assert_false(oss_destroyed_has(d, 8));
	assert_true(oss_destroyed_has(d, 9));
	assert_true(oss_destroyed_has(d, 100));
	assert_int_equal(oss_destroyed_add_many(d, b, 4, 0), 0);
	oss_destroyed_counts(d, &ranges, &recs);
	assert_int_equal(recs, 4); /* only 101 was new */
	assert_int_equal(ranges, 3); /* 100-101 */
	assert_int_equal(oss_destroyed_add_many(d, b, 0, 1), 0);
	oss_destroyed_close(d);
	assert_int_equal(oss_destroyed_open(f->dirfd, OSS_DESTROYED_FILE, &d), 0);
	for (uint64_t id = 5; id <= 7; id++)
		assert_true(oss_destroyed_has(d, id));
	assert_true(oss_destroyed_has(d, 101));
	assert_false(oss_destroyed_has(d, 8));
	assert_false(oss_destroyed_has(d, 102));
	oss_destroyed_close(d);
}

static void test_destroyed_persists(void **state)
{
	fixture *f = *state;
	oss_destroyed *d;
	size_t ranges, recs;

	assert_int_equal(oss_destroyed_open(f->dirfd, OSS_DESTROYED_FILE, &d), 0);
	for (uint64_t id = 100; id < 200; id += 2)
		assert_int_equal(oss_destroyed_add(d, id, 1), 0);
	oss_destroyed_close(d);
	assert_int_equal(oss_destroyed_open(f->dirfd, OSS_DESTROYED_FILE, &d), 0);
	for (uint64_t id = 98; id < 202; id++)
		assert_int_equal(oss_destroyed_has(d, id), id >= 100 && id < 200 && id % 2 == 0);
	oss_destroyed_counts(d, &ranges, &recs);
	assert_int_equal(ranges, 50);
	assert_int_equal(recs, 50);
	oss_destroyed_close(d);
}

/* A torn last record and a damaged one are skipped; the rest stays. */
static void test_destroyed_torn(void **state)
{
	fixture *f = *state;
	oss_destroyed *d;
	uint8_t junk[16];
	int fd;

	assert_int_equal(oss_destroyed_open(f->dirfd, OSS_DESTROYED_FILE, &d), 0);
	assert_int_equal(oss_destroyed_add(d, 10, 1), 0);
	assert_int_equal(oss_destroyed_add(d, 20, 1), 0);
	assert_int_equal(oss_destroyed_add(d, 30, 1), 0);
	oss_destroyed_close(d);
	fd = openat(f->dirfd, OSS_DESTROYED_FILE, O_RDWR);
	assert_true(fd >= 0);
	/* record 2 (id 20): flip a byte of its id */
	assert_int_equal(pread(fd, junk, 16, 32), 16);
	junk[0] ^= 0x40;
	assert_int_equal(pwrite(fd, junk, 16, 32), 16);
	/* a record of zeros (a power loss's extended size), then half a one */
	memset(junk, 0, sizeof(junk));
	assert_int_equal(pwrite(fd, junk, 16, 64), 16);
	assert_int_equal(pwrite(fd, junk, 7, 80), 7);
	close(fd);
	assert_int_equal(oss_destroyed_open(f->dirfd, OSS_DESTROYED_FILE, &d), 0);
	assert_true(oss_destroyed_has(d, 10));
	assert_false(oss_destroyed_has(d, 20));
	assert_false(oss_destroyed_has(d, 20 ^ 0x40));
	assert_true(oss_destroyed_has(d, 30));
	assert_false(oss_destroyed_has(d, 0));
	/* rewritten clean: header and two records; appends line up again */
	assert_int_equal(file_size(f), 48);
	assert_int_equal(oss_destroyed_add(d, 40, 1), 0);
	oss_destroyed_close(d);
	assert_int_equal(oss_destroyed_open(f->dirfd, OSS_DESTROYED_FILE, &d), 0);
	assert_true(oss_destroyed_has(d, 40));
	assert_true(oss_destroyed_has(d, 30));
	oss_destroyed_close(d);
}

/* Dense ids: the file is compacted while it grows, and stays small. */
static void test_destroyed_compaction(void **state)
{
	fixture *f = *state;
	oss_destroyed *d;
	size_t ranges, recs;
	const uint64_t n = 5000;

	assert_int_equal(oss_destroyed_open(f->dirfd, OSS_DESTROYED_FILE, &d), 0);
	/* out of order, as a destroyer finishing files in any order would */
	for (uint64_t i = 0; i < n; i++)
		assert_int_equal(oss_destroyed_add(d, 1 + (i * 7919) % n, 0), 0);
	oss_destroyed_counts(d, &ranges, &recs);
	assert_int_equal(ranges, 1);
	assert_true(recs <= 2 * ranges + 1024);
	assert_true(file_size(f) <= (off_t)(16 * (recs + 1)));
	assert_true(file_size(f) < (off_t)(16 * n / 2));
	oss_destroyed_close(d);
	assert_int_equal(oss_destroyed_open(f->dirfd, OSS_DESTROYED_FILE, &d), 0);
	assert_false(oss_destroyed_has(d, 0));
	for (uint64_t id = 1; id <= n; id++)
		if (!oss_destroyed_has(d, id))
			fail_msg("id %llu lost", (unsigned long long)id);
	assert_false(oss_destroyed_has(d, n + 1));
	oss_destroyed_counts(d, &ranges, &recs);
	assert_int_equal(ranges, 1);
	oss_destroyed_close(d);
}

static void test_destroyed_foreign_file(void **state)
{
	fixture *f = *state;
	oss_destroyed *d = NULL;
	int fd = openat(f->dirfd, OSS_DESTROYED_FILE, O_WRONLY | O_CREAT, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, "something else entirely\n", 24), 24);
	close(fd);
	assert_int_equal(oss_destroyed_open(f->dirfd, OSS_DESTROYED_FILE, &d), -EINVAL);
	assert_null(d);
	assert_int_equal(file_size(f), 24); /* left alone */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_destroyed_ranges, setup, teardown),
		cmocka_unit_test_setup_teardown(test_destroyed_add_many, setup, teardown),
		cmocka_unit_test_setup_teardown(test_destroyed_persists, setup, teardown),
		cmocka_unit_test_setup_teardown(test_destroyed_torn, setup, teardown),
		cmocka_unit_test_setup_teardown(test_destroyed_compaction, setup, teardown),
		cmocka_unit_test_setup_teardown(test_destroyed_foreign_file, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
