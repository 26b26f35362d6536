/* test_oss_store.c — the OST object store: data round trips, holes, short
 * reads, truncate, punch, destroy, listing, uuid persistence, the fd cache
 * under concurrent I/O with destroys, the directory fsyncs that make
 * object create and destroy durable (counted and failed through the
 * injectable hook), destroyed ids refused (-ESTALE) for good, and the
 * write-behind kicks. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "oss/store.h"

typedef struct fixture {
	char dir[64];
	oss_store *st;
} fixture;

static int rm_rf(const char *path)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
	return system(cmd);
}

static int setup(void **state)
{
	fixture *f = calloc(1, sizeof(*f));
	oss_store_opts o = { .fd_cache = 4 }; /* small cache: exercise eviction */
	char err[256];

	snprintf(f->dir, sizeof(f->dir), "/tmp/pfs-test-store-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	/* The store creates its directory: hand it a path below the temp dir. */
	strcat(f->dir, "/ost");
	if (oss_store_open(f->dir, &o, &f->st, err, sizeof(err))) {
		fprintf(stderr, "open: %s\n", err);
		return -1;
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;
	char *slash;

	oss_store_close(f->st);
	slash = strrchr(f->dir, '/');
	*slash = '\0';
	rm_rf(f->dir);
	free(f);
	return 0;
}

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed * 31 + i * 7 + (i >> 8));
}

static void test_store_write_read(void **state)
{
	fixture *f = *state;
	uint8_t w[10000], r[10000];
	size_t got;
	uint64_t size, blocks;

	fill(w, sizeof(w), 1);
	assert_int_equal(oss_store_write(f->st, 42, 0, w, sizeof(w)), 0);
	assert_int_equal(oss_store_read(f->st, 42, 0, r, sizeof(r), &got), 0);
	assert_int_equal(got, sizeof(w));
	assert_memory_equal(r, w, sizeof(w));
	/* A read in the middle. */
	assert_int_equal(oss_store_read(f->st, 42, 1234, r, 100, &got), 0);
	assert_int_equal(got, 100);
	assert_memory_equal(r, w + 1234, 100);
	assert_int_equal(oss_store_stat(f->st, 42, &size, &blocks), 0);
	assert_int_equal(size, sizeof(w));
	assert_true(blocks > 0);
}

static void test_store_missing_reads_empty(void **state)
{
	fixture *f = *state;
	uint8_t r[64];
	size_t got = 99;
	uint64_t size = 9, blocks = 9;

	assert_int_equal(oss_store_read(f->st, 7, 0, r, sizeof(r), &got), 0);
	assert_int_equal(got, 0);
	assert_int_equal(oss_store_stat(f->st, 7, &size, &blocks), 0);
	assert_int_equal(size, 0);
	assert_int_equal(blocks, 0);
	/* Reads, stats, sync and punch of a missing object do not create it. */
	assert_int_equal(oss_store_sync(f->st, 7), 0);
	assert_int_equal(oss_store_punch(f->st, 7, 0, 100), 0);
	assert_int_equal(oss_store_truncate(f->st, 7, 0), 0);
	{
		uint64_t t, fr, objs;
		assert_int_equal(oss_store_statfs(f->st, &t, &fr, &objs), 0);
		assert_int_equal(objs, 0);
		assert_true(t > 0);
		assert_true(fr <= t);
	}
}

static void test_store_holes_and_short_read(void **state)
{
	fixture *f = *state;
	uint8_t w[100], r[300], zero[200] = { 0 };
	size_t got;

	fill(w, sizeof(w), 2);
	/* Write at 200: [0,200) is a hole. */
	assert_int_equal(oss_store_write(f->st, 5, 200, w, sizeof(w)), 0);
	memset(r, 0xAA, sizeof(r));
	assert_int_equal(oss_store_read(f->st, 5, 0, r, sizeof(r), &got), 0);
	assert_int_equal(got, 300);
	assert_memory_equal(r, zero, 200);
	assert_memory_equal(r + 200, w, 100);
	/* Short read at the end, and nothing past it. */
	assert_int_equal(oss_store_read(f->st, 5, 250, r, sizeof(r), &got), 0);
	assert_int_equal(got, 50);
	assert_memory_equal(r, w + 50, 50);
	assert_int_equal(oss_store_read(f->st, 5, 1000, r, sizeof(r), &got), 0);
	assert_int_equal(got, 0);
}

static void test_store_truncate(void **state)
{
	fixture *f = *state;
	uint8_t w[4096], r[8192], zero[4096] = { 0 };
	size_t got;
	uint64_t size, blocks;

	fill(w, sizeof(w), 3);
	assert_int_equal(oss_store_write(f->st, 9, 0, w, sizeof(w)), 0);
	/* Down: data past the size is gone. */
	assert_int_equal(oss_store_truncate(f->st, 9, 1000), 0);
	assert_int_equal(oss_store_stat(f->st, 9, &size, &blocks), 0);
	assert_int_equal(size, 1000);
	assert_int_equal(oss_store_read(f->st, 9, 0, r, sizeof(r), &got), 0);
	assert_int_equal(got, 1000);
	assert_memory_equal(r, w, 1000);
	/* Up: the new range reads as zeros. */
	assert_int_equal(oss_store_truncate(f->st, 9, 5096), 0);
	assert_int_equal(oss_store_read(f->st, 9, 0, r, sizeof(r), &got), 0);
	assert_int_equal(got, 5096);
	assert_memory_equal(r, w, 1000);
	assert_memory_equal(r + 1000, zero, 4096);
	/* Truncating a missing object up creates it. */
	assert_int_equal(oss_store_truncate(f->st, 10, 123), 0);
	assert_int_equal(oss_store_stat(f->st, 10, &size, &blocks), 0);
	assert_int_equal(size, 123);
}

static void test_store_punch(void **state)
{
	fixture *f = *state;
	uint8_t w[16384], r[16384], zero[8192] = { 0 };
	size_t got;
	uint64_t size, blocks;

	fill(w, sizeof(w), 4);
	assert_int_equal(oss_store_write(f->st, 11, 0, w, sizeof(w)), 0);
	assert_int_equal(oss_store_punch(f->st, 11, 4096, 8192), 0);
	assert_int_equal(oss_store_stat(f->st, 11, &size, &blocks), 0);
	assert_int_equal(size, sizeof(w)); /* KEEP_SIZE */
	assert_int_equal(oss_store_read(f->st, 11, 0, r, sizeof(r), &got), 0);
	assert_int_equal(got, sizeof(w));
	assert_memory_equal(r, w, 4096);
	assert_memory_equal(r + 4096, zero, 8192);
	assert_memory_equal(r + 12288, w + 12288, 4096);
	/* len 0 is a no-op. */
	assert_int_equal(oss_store_punch(f->st, 11, 0, 0), 0);
	assert_int_equal(oss_store_read(f->st, 11, 0, r, 16, &got), 0);
	assert_memory_equal(r, w, 16);
}

static void test_store_destroy(void **state)
{
	fixture *f = *state;
	uint8_t w[100], r[100];
	size_t got;
	uint64_t t, fr, objs;

	fill(w, sizeof(w), 5);
	assert_int_equal(oss_store_write(f->st, 3, 0, w, sizeof(w)), 0);
	assert_int_equal(oss_store_statfs(f->st, &t, &fr, &objs), 0);
	assert_int_equal(objs, 1);
	assert_int_equal(oss_store_destroy(f->st, 3), 0);
	assert_int_equal(oss_store_statfs(f->st, &t, &fr, &objs), 0);
	assert_int_equal(objs, 0);
	/* Gone, even though its descriptor was cached: refused, not empty. */
	assert_int_equal(oss_store_read(f->st, 3, 0, r, sizeof(r), &got), -ESTALE);
	assert_int_equal(got, 0);
	/* Missing: success. */
	assert_int_equal(oss_store_destroy(f->st, 3), 0);
	assert_int_equal(oss_store_destroy(f->st, 999999), 0);
	/* Another object is untouched by all this. */
	assert_int_equal(oss_store_write(f->st, 4, 10, w, 5), 0);
	assert_int_equal(oss_store_read(f->st, 4, 0, r, sizeof(r), &got), 0);
	assert_int_equal(got, 15);
}

static int obj_exists(fixture *f, uint64_t obj)
{
	char p[160];
	struct stat st;

	snprintf(p, sizeof(p), "%s/O/%02x/%llx", f->dir, (unsigned)(obj & 0xff),
		 (unsigned long long)obj);
	return stat(p, &st) == 0;
}

/* A destroyed id is refused by every data call, creates nothing, and stays
 * refused after a reopen; a destroy of an id never written counts too. */
static void test_store_destroyed_stale(void **state)
{
	fixture *f = *state;
	oss_store_opts o = { .fd_cache = 4 };
	uint8_t w[100], r[100];
	uint64_t size = 1, blocks = 1, t, fr, objs;
	size_t got = 7;
	char err[256];

	fill(w, sizeof(w), 9);
	assert_int_equal(oss_store_write(f->st, 0x21, 0, w, sizeof(w)), 0);
	assert_int_equal(oss_store_write(f->st, 0x22, 0, w, sizeof(w)), 0);
	assert_int_equal(oss_store_destroy(f->st, 0x21), 0);
	assert_int_equal(oss_store_destroy(f->st, 0x5000), 0); /* never written */
	for (int pass = 0; pass < 2; pass++) {
		const uint64_t ids[] = { 0x21, 0x5000 };

		for (size_t i = 0; i < 2; i++) {
			uint64_t id = ids[i];

			assert_int_equal(oss_store_write(f->st, id, 0, w, 10), -ESTALE);
			assert_int_equal(oss_store_read(f->st, id, 0, r, sizeof(r), &got), -ESTALE);
			assert_int_equal(got, 0);
			assert_int_equal(oss_store_truncate(f->st, id, 4096), -ESTALE);
			assert_int_equal(oss_store_truncate(f->st, id, 0), -ESTALE);
			assert_int_equal(oss_store_punch(f->st, id, 0, 10), -ESTALE);
			assert_int_equal(oss_store_sync(f->st, id), -ESTALE);
			/* stat reports it missing; destroy again is success */
			assert_int_equal(oss_store_stat(f->st, id, &size, &blocks), 0);
			assert_int_equal(size, 0);
			assert_int_equal(oss_store_destroy(f->st, id), 0);
			assert_false(obj_exists(f, id));
		}
		/* the live neighbour is served as before */
		assert_int_equal(oss_store_read(f->st, 0x22, 0, r, sizeof(r), &got), 0);
		assert_int_equal(got, sizeof(w));
		assert_memory_equal(r, w, sizeof(w));
		assert_int_equal(oss_store_write(f->st, 0x23, 0, w, 1), 0);
		assert_int_equal(oss_store_statfs(f->st, &t, &fr, &objs), 0);
		assert_int_equal(objs, 2);
		/* after a restart, the same */
		oss_store_close(f->st);
		f->st = NULL;
		assert_int_equal(oss_store_open(f->dir, &o, &f->st, err, sizeof(err)), 0);
	}
}

/* A crash between the record and the unlink leaves the file: it is
 * refused all the same (and listed, for lfsck to destroy again). */
static void test_store_destroyed_file_left(void **state)
{
	fixture *f = *state;
	char p[160];
	uint8_t r[8];
	size_t got;
	uint64_t ids[8];
	size_t n;
	int eof, fd;

	assert_int_equal(oss_store_destroy(f->st, 0x77), 0);
	snprintf(p, sizeof(p), "%s/O/77/77", f->dir);
	fd = open(p, O_WRONLY | O_CREAT, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "old", 3), 3);
	close(fd);
	assert_int_equal(oss_store_read(f->st, 0x77, 0, r, sizeof(r), &got), -ESTALE);
	assert_int_equal(oss_store_write(f->st, 0x77, 0, "new", 3), -ESTALE);
	assert_int_equal(oss_store_list(f->st, 0, ids, 8, &n, &eof), 0);
	assert_int_equal(n, 1);
	assert_int_equal(ids[0], 0x77);
	assert_int_equal(oss_store_destroy(f->st, 0x77), 0);
	assert_false(obj_exists(f, 0x77));
}

static void test_store_list_paging(void **state)
{
	fixture *f = *state;
	/* Ids spread over subdirectories, inserted out of order. */
	const uint64_t want[] = { 1, 2, 255, 256, 257, 4096, 70000, 0x123456789abull };
	const size_t nw = sizeof(want) / sizeof(want[0]);
	uint64_t ids[3], after = 0;
	size_t n, seen = 0;
	int eof = 0, pages = 0;

	for (size_t i = nw; i-- > 0;)
		assert_int_equal(oss_store_write(f->st, want[i], 0, "x", 1), 0);
	while (!eof) {
		assert_int_equal(oss_store_list(f->st, after, ids, 3, &n, &eof), 0);
		pages++;
		for (size_t i = 0; i < n; i++) {
			assert_true(seen < nw);
			assert_int_equal(ids[i], want[seen]);
			seen++;
		}
		if (n)
			after = ids[n - 1];
		assert_true(pages <= 4);
	}
	assert_int_equal(seen, nw);
	assert_int_equal(pages, 3);
	/* A page that ends exactly at the last id says eof. */
	assert_int_equal(oss_store_list(f->st, 256, ids, 3, &n, &eof), 0);
	assert_int_equal(n, 3);
	assert_int_equal(ids[0], 257);
	assert_false(eof);
	assert_int_equal(oss_store_list(f->st, 4096, ids, 3, &n, &eof), 0);
	assert_int_equal(n, 2);
	assert_true(eof);
	/* Foreign files in the object tree are not objects. */
	{
		char p[128];
		int fd;
		snprintf(p, sizeof(p), "%s/O/01/not-an-object", f->dir);
		fd = open(p, O_CREAT | O_WRONLY, 0644);
		assert_true(fd >= 0);
		close(fd);
	}
	assert_int_equal(oss_store_list(f->st, 0, ids, 3, &n, &eof), 0);
	assert_int_equal(ids[0], 1);
}

static void test_store_uuid_persists(void **state)
{
	fixture *f = *state;
	char uuid[OSS_STORE_UUID_LEN + 1], err[256];
	oss_store *again = NULL, *other = NULL;
	char odir[96];
	uint64_t t, fr, objs;

	strcpy(uuid, oss_store_uuid(f->st));
	assert_int_equal(strlen(uuid), OSS_STORE_UUID_LEN);
	assert_int_equal(uuid[14], '4'); /* version 4 */
	assert_int_equal(oss_store_write(f->st, 77, 0, "abc", 3), 0);
	oss_store_close(f->st);
	f->st = NULL;
	assert_int_equal(oss_store_open(f->dir, NULL, &again, err, sizeof(err)), 0);
	f->st = again;
	assert_string_equal(oss_store_uuid(again), uuid);
	/* The object count is rebuilt from disk. */
	assert_int_equal(oss_store_statfs(again, &t, &fr, &objs), 0);
	assert_int_equal(objs, 1);
	/* Another OST gets another uuid. */
	snprintf(odir, sizeof(odir), "%s2", f->dir);
	assert_int_equal(oss_store_open(odir, NULL, &other, err, sizeof(err)), 0);
	assert_string_not_equal(oss_store_uuid(other), uuid);
	oss_store_close(other);
	rm_rf(odir);
}

static void test_store_bad_uuid_file(void **state)
{
	fixture *f = *state;
	char d[96], p[128], err[256] = "";
	oss_store *st = NULL;
	FILE *fp;

	snprintf(d, sizeof(d), "%s3", f->dir);
	assert_int_equal(mkdir(d, 0755), 0);
	snprintf(p, sizeof(p), "%s/ost.uuid", d);
	fp = fopen(p, "w");
	assert_non_null(fp);
	fputs("garbage\n", fp);
	fclose(fp);
	assert_int_equal(oss_store_open(d, NULL, &st, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not a uuid"));
	rm_rf(d);
}

/* ---- concurrency: writers and readers verify their data while another
 * thread destroys objects under them and the cache (4 entries) churns. ---- */

#define CONC_ITERS 400
#define CONC_ID(t, i) ((uint64_t)(t) * 1000 + 1 + (i))

typedef struct conc {
	oss_store *st;
	unsigned id;
	int errors;
} conc;

static void *conc_io(void *arg)
{
	conc *c = arg;
	uint8_t w[512], r[512];

	for (unsigned i = 0; i < CONC_ITERS; i++) {
		/* Each thread owns the objects CONC_ID(id, k), a fresh one each
		 * round: data it reads back must be its own (whole) or refused
		 * (destroyed meanwhile: -ESTALE, and from then on for good). */
		uint64_t obj = CONC_ID(c->id, i);
		size_t got = 0;
		int wrc, rrc;

		fill(w, sizeof(w), c->id + i);
		wrc = oss_store_write(c->st, obj, 0, w, sizeof(w));
		if (wrc && wrc != -ESTALE)
			c->errors++;
		rrc = oss_store_read(c->st, obj, 0, r, sizeof(r), &got);
		if (rrc && rrc != -ESTALE)
			c->errors++;
		if (wrc == -ESTALE && rrc != -ESTALE)
			c->errors++; /* a destroyed object came back */
		if (!rrc && (got != sizeof(r) || memcmp(r, w, sizeof(r))))
			c->errors++;
	}
	return NULL;
}

static void *conc_destroy(void *arg)
{
	conc *c = arg;

	for (unsigned i = 0; i < CONC_ITERS; i++)
		for (unsigned t = 0; t < 4; t++)
			if (oss_store_destroy(c->st, CONC_ID(t, i)))
				c->errors++;
	return NULL;
}

static void test_store_concurrent_fd_cache(void **state)
{
	fixture *f = *state;
	pthread_t th[5];
	conc c[5];
	uint64_t t, fr, objs, ids[128];
	size_t n;
	int eof;

	for (unsigned i = 0; i < 5; i++) {
		c[i].st = f->st;
		c[i].id = i;
		c[i].errors = 0;
		assert_int_equal(pthread_create(&th[i], NULL, i < 4 ? conc_io : conc_destroy,
						&c[i]), 0);
	}
	for (unsigned i = 0; i < 5; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(c[i].errors, 0);
	}
	/* The object counter agrees with what is on disk. */
	assert_int_equal(oss_store_statfs(f->st, &t, &fr, &objs), 0);
	assert_int_equal(oss_store_list(f->st, 0, ids, 128, &n, &eof), 0);
	assert_true(eof);
	assert_int_equal(objs, n);
	/* every id was destroyed, and none came back */
	assert_int_equal(n, 0);
}

static void test_store_o_direct_option(void **state)
{
	fixture *f = *state;
	char d[96], err[256];
	oss_store_opts o = { .fd_cache = 8, .o_direct = 1 };
	oss_store *st;
	uint8_t *w, *r;
	size_t got;

	/* Aligned and unaligned I/O both work with o_direct (falling back to
	 * buffered I/O where the file system has no O_DIRECT, e.g. tmpfs). */
	snprintf(d, sizeof(d), "%s4", f->dir);
	assert_int_equal(oss_store_open(d, &o, &st, err, sizeof(err)), 0);
	assert_int_equal(posix_memalign((void **)&w, 4096, 8192), 0);
	assert_int_equal(posix_memalign((void **)&r, 4096, 8192), 0);
	fill(w, 8192, 6);
	assert_int_equal(oss_store_write(st, 1, 0, w, 8192), 0);
	assert_int_equal(oss_store_write(st, 1, 8192, w + 1, 100), 0);
	assert_int_equal(oss_store_read(st, 1, 0, r, 8192, &got), 0);
	assert_int_equal(got, 8192);
	assert_memory_equal(r, w, 8192);
	assert_int_equal(oss_store_read(st, 1, 4096, r, 8192, &got), 0);
	assert_int_equal(got, 4096 + 100);
	assert_memory_equal(r, w + 4096, 4096);
	assert_memory_equal(r + 4096, w + 1, 100);
	free(w);
	free(r);
	oss_store_close(st);
	rm_rf(d);
}

/* A WRITE's data waiting in a pipe (oss_store_splice_write): the bytes
 * land at the offset as oss_store_write would put them, creating the
 * object; a pipe short of len is -EIO; a destroyed object -ESTALE with the
 * pipe untouched; an O_DIRECT store -EOPNOTSUPP. */
static void test_store_splice_write(void **state)
{
	fixture *f = *state;
	static uint8_t w[300000], r[300000];
	oss_store_opts o = { .fd_cache = 8, .o_direct = 1 };
	oss_store *st;
	char d[96], err[256];
	size_t got, put = 0;
	int p[2];

	fill(w, sizeof(w), 12);
	assert_int_equal(pipe2(p, O_NONBLOCK | O_CLOEXEC), 0);
	assert_true(fcntl(p[1], F_SETPIPE_SZ, 1 << 20) >= (int)sizeof(w));
	while (put < sizeof(w)) {
		ssize_t n = write(p[1], w + put, sizeof(w) - put);

		assert_true(n > 0);
		put += (size_t)n;
	}
	assert_int_equal(oss_store_splice_write(f->st, 0x31, 5000, p[0], sizeof(w)), 0);
	assert_int_equal(oss_store_read(f->st, 0x31, 5000, r, sizeof(r), &got), 0);
	assert_int_equal(got, sizeof(w));
	assert_memory_equal(r, w, sizeof(w));
	assert_int_equal(oss_store_read(f->st, 0x31, 0, r, 5000, &got), 0);
	assert_int_equal(got, 5000); /* the hole before it */
	for (size_t i = 0; i < 5000; i++)
		assert_int_equal(r[i], 0);
	/* fewer bytes in the pipe than asked: the first go in, then -EIO */
	assert_int_equal(write(p[1], w, 100), 100);
	assert_int_equal(oss_store_splice_write(f->st, 0x32, 0, p[0], 200), -EIO);
	assert_int_equal(oss_store_read(f->st, 0x32, 0, r, 200, &got), 0);
	assert_int_equal(got, 100);
	/* destroyed: refused, nothing taken from the pipe */
	assert_int_equal(oss_store_destroy(f->st, 0x33), 0);
	assert_int_equal(write(p[1], w, 10), 10);
	assert_int_equal(oss_store_splice_write(f->st, 0x33, 0, p[0], 10), -ESTALE);
	assert_int_equal(read(p[0], r, sizeof(r)), 10);
	/* an O_DIRECT store does not splice */
	snprintf(d, sizeof(d), "%s5", f->dir);
	assert_int_equal(oss_store_open(d, &o, &st, err, sizeof(err)), 0);
	assert_true(oss_store_direct(st));
	assert_false(oss_store_direct(f->st));
	assert_int_equal(write(p[1], w, 10), 10);
	assert_int_equal(oss_store_splice_write(st, 1, 0, p[0], 10), -EOPNOTSUPP);
	assert_int_equal(read(p[0], r, sizeof(r)), 10);
	oss_store_close(st);
	rm_rf(d);
	close(p[0]);
	close(p[1]);
}

static void test_store_fd_limit(void **state)
{
	fixture *f = *state;
	char d[96], err[256];
	oss_store_opts o = { .fd_cache = 100000 }; /* a cache far above the fd limit */
	oss_store *st;
	struct rlimit old, low;
	uint8_t r[8];
	size_t got;
	int rc = 0;

	snprintf(d, sizeof(d), "%s5", f->dir);
	assert_int_equal(oss_store_open(d, &o, &st, err, sizeof(err)), 0);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	low = old;
	low.rlim_cur = 64;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	/* More objects than descriptors: the store gives back idle ones. */
	for (uint64_t id = 1; id <= 300 && !rc; id++)
		rc = oss_store_write(st, id, 0, &id, sizeof(id));
	for (uint64_t id = 1; id <= 300 && !rc; id++) {
		rc = oss_store_read(st, id, 0, r, sizeof(r), &got);
		if (!rc && (got != sizeof(id) || memcmp(r, &id, sizeof(id))))
			rc = -EIO;
	}
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
	assert_int_equal(rc, 0);
	oss_store_close(st);
	rm_rf(d);
}

/* The directory-fsync hook: counts calls per object subdirectory, fails
 * while fail is set. */
struct dsync {
	int calls;
	int fail;
	char last[64]; /* the directory's name */
};

static int count_dir_fsync(int dirfd, void *arg)
{
	struct dsync *d = arg;
	char link[64], path[256];
	ssize_t n;

	d->calls++;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", dirfd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n > 0) {
		path[n] = '\0';
		const char *base = strrchr(path, '/');
		base = base ? base + 1 : path;
		memset(d->last, 0, sizeof(d->last));
		memcpy(d->last, base, strnlen(base, sizeof(d->last) - 1));
	}
	return d->fail ? -EIO : 0;
}

static void test_store_dir_sync_on_create_destroy(void **state)
{
	fixture *f = *state;
	struct dsync d = { 0 };
	uint64_t size, blocks;
	uint8_t b[4];
	size_t got;

	oss_store_set_dir_fsync(f->st, count_dir_fsync, &d);
	/* Creating write: one fsync of the object's directory. */
	assert_int_equal(oss_store_write(f->st, 0x105, 0, "abcd", 4), 0);
	assert_int_equal(d.calls, 1);
	assert_string_equal(d.last, "05");
	/* Writes, reads, stat, sync, punch of an existing object: none. */
	assert_int_equal(oss_store_write(f->st, 0x105, 4, "efgh", 4), 0);
	assert_int_equal(oss_store_read(f->st, 0x105, 0, b, 4, &got), 0);
	assert_int_equal(oss_store_stat(f->st, 0x105, &size, &blocks), 0);
	assert_int_equal(oss_store_sync(f->st, 0x105), 0);
	assert_int_equal(oss_store_punch(f->st, 0x105, 0, 2), 0);
	assert_int_equal(d.calls, 1);
	/* Truncate creating an object: one; of a missing object to 0: none. */
	assert_int_equal(oss_store_truncate(f->st, 0x2a, 100), 0);
	assert_int_equal(d.calls, 2);
	assert_string_equal(d.last, "2a");
	assert_int_equal(oss_store_truncate(f->st, 0x2b, 0), 0);
	assert_int_equal(d.calls, 2);
	/* Destroy: one, after the unlink; of a missing object (never written,
	 * or destroyed before): success and none. */
	assert_int_equal(oss_store_destroy(f->st, 0x105), 0);
	assert_int_equal(d.calls, 3);
	assert_string_equal(d.last, "05");
	assert_int_equal(oss_store_destroy(f->st, 0x105), 0);
	assert_int_equal(oss_store_destroy(f->st, 0x777), 0);
	assert_int_equal(d.calls, 3);
	/* Off: no directory fsync at all. */
	oss_store_set_sync_dirs(f->st, 0);
	assert_int_equal(oss_store_write(f->st, 0x300, 0, "x", 1), 0);
	assert_int_equal(oss_store_destroy(f->st, 0x300), 0);
	assert_int_equal(d.calls, 3);
}

/* A batch destroy: every object gone and refused afterwards (-ESTALE),
 * one fsync per directory it unlinked in, none for a batch of objects
 * that were never written. */
static void test_store_destroy_many(void **state)
{
	fixture *f = *state;
	struct dsync d = { 0 };
	const uint64_t objs[] = { 0x105, 0x205, 0x106, 0x500 }, empty[] = { 0x601, 0x602 };
	uint64_t size, blocks, count;
	uint8_t b[4];
	size_t got;

	oss_store_set_dir_fsync(f->st, count_dir_fsync, &d);
	for (int i = 0; i < 3; i++)
		assert_int_equal(oss_store_write(f->st, objs[i], 0, "abcd", 4), 0);
	assert_int_equal(d.calls, 3);
	assert_int_equal(oss_store_statfs(f->st, &size, &blocks, &count), 0);
	assert_int_equal(count, 3);
	assert_int_equal(oss_store_destroy_many(f->st, objs, 4), 0);
	assert_int_equal(d.calls, 5); /* 05 and 06, once each */
	assert_int_equal(oss_store_statfs(f->st, &size, &blocks, &count), 0);
	assert_int_equal(count, 0);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(oss_store_read(f->st, objs[i], 0, b, 4, &got), -ESTALE);
		assert_int_equal(oss_store_write(f->st, objs[i], 0, "x", 1), -ESTALE);
	}
	/* again (a resent batch): success, nothing to sync */
	assert_int_equal(oss_store_destroy_many(f->st, objs, 4), 0);
	assert_int_equal(oss_store_destroy_many(f->st, empty, 2), 0);
	assert_int_equal(d.calls, 5);
	assert_int_equal(oss_store_write(f->st, 0x602, 0, "x", 1), -ESTALE);
}

/* A failed directory fsync is the caller's error, and whoever uses the
 * object next syncs again before succeeding, even after many other
 * objects went through the small cache. */
static void test_store_dir_sync_errors(void **state)
{
	fixture *f = *state;
	struct dsync d = { 0 };
	uint8_t b[4];
	size_t got;

	oss_store_set_dir_fsync(f->st, count_dir_fsync, &d);
	d.fail = 1;
	assert_int_equal(oss_store_write(f->st, 10, 0, "abcd", 4), -EIO);
	assert_int_equal(oss_store_write(f->st, 10, 0, "abcd", 4), -EIO);
	assert_int_equal(oss_store_sync(f->st, 10), -EIO);
	assert_int_equal(d.calls, 3);
	d.fail = 0;
	for (uint64_t id = 100; id < 120; id++) /* cache of 4: evicts idle entries */
		assert_int_equal(oss_store_write(f->st, id, 0, &id, 1), 0);
	d.calls = 0;
	assert_int_equal(oss_store_read(f->st, 10, 0, b, 4, &got), 0);
	assert_int_equal(got, 0); /* created, but the failed writes wrote nothing */
	assert_int_equal(d.calls, 1); /* the retried fsync of object 10's directory */
	assert_string_equal(d.last, "0a");
	assert_int_equal(oss_store_write(f->st, 10, 0, "abcd", 4), 0);
	assert_int_equal(oss_store_read(f->st, 10, 0, b, 4, &got), 0);
	assert_int_equal(got, 4);
	assert_int_equal(d.calls, 1);
	/* Destroy reports its fsync's failure, and its retry (the object is
	 * gone by then) still syncs the directory. */
	d.fail = 1;
	assert_int_equal(oss_store_destroy(f->st, 10), -EIO);
	d.fail = 0;
	d.calls = 0;
	assert_int_equal(oss_store_destroy(f->st, 10), 0);
	assert_int_equal(d.calls, 1);
	assert_int_equal(oss_store_destroy(f->st, 10), 0);
	assert_int_equal(d.calls, 1);
}

/* Write-behind (opts.write_behind): every write_behind bytes written to an
 * object, through pwrite or splice, start its writeback once; 0 never
 * does; the data reads back the same either way; an object's count does
 * not leak into another's. */
static void test_store_write_behind(void **state)
{
	fixture *f = *state;
	static uint8_t w[1 << 20], r[1 << 20];
	oss_store_opts o = { .fd_cache = 8, .write_behind = 1 << 20 };
	oss_store *st;
	char d[96], err[256];
	size_t got;
	int p[2];

	fill(w, sizeof(w), 7);
	assert_int_equal(oss_store_write_behind_kicks(f->st), 0);
	assert_int_equal(oss_store_write(f->st, 0x40, 0, w, sizeof(w)), 0);
	assert_int_equal(oss_store_write_behind_kicks(f->st), 0); /* off */
	snprintf(d, sizeof(d), "%s6", f->dir);
	assert_int_equal(oss_store_open(d, &o, &st, err, sizeof(err)), 0);
	assert_int_equal(oss_store_write(st, 0x41, 0, w, sizeof(w) / 2), 0);
	assert_int_equal(oss_store_write(st, 0x42, 0, w, sizeof(w) / 2), 0);
	assert_int_equal(oss_store_write_behind_kicks(st), 0); /* 512 KiB each */
	assert_int_equal(oss_store_write(st, 0x41, sizeof(w) / 2, w + sizeof(w) / 2,
					 sizeof(w) / 2), 0);
	assert_int_equal(oss_store_write_behind_kicks(st), 1); /* 0x41 reached 1 MiB */
	assert_int_equal(oss_store_write(st, 0x41, sizeof(w), w, sizeof(w)), 0);
	assert_int_equal(oss_store_write_behind_kicks(st), 2);
	/* spliced writes count too */
	assert_int_equal(pipe2(p, O_NONBLOCK | O_CLOEXEC), 0);
	assert_true(fcntl(p[1], F_SETPIPE_SZ, 1 << 20) >= (int)(sizeof(w) / 2));
	assert_int_equal(write(p[1], w, sizeof(w) / 2), (ssize_t)(sizeof(w) / 2));
	assert_int_equal(oss_store_splice_write(st, 0x42, sizeof(w) / 2, p[0], sizeof(w) / 2), 0);
	assert_int_equal(oss_store_write_behind_kicks(st), 3);
	close(p[0]);
	close(p[1]);
	assert_int_equal(oss_store_read(st, 0x41, 0, r, sizeof(r), &got), 0);
	assert_int_equal(got, sizeof(r));
	assert_memory_equal(r, w, sizeof(w));
	assert_int_equal(oss_store_read(st, 0x42, 0, r, sizeof(r), &got), 0);
	assert_int_equal(got, sizeof(r));
	assert_memory_equal(r, w, sizeof(w) / 2);
	assert_memory_equal(r + sizeof(w) / 2, w, sizeof(w) / 2);
	assert_int_equal(oss_store_sync(st, 0x41), 0);
	oss_store_close(st);
	assert_int_equal(rm_rf(d), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_store_write_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_store_missing_reads_empty, setup, teardown),
		cmocka_unit_test_setup_teardown(test_store_holes_and_short_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_store_truncate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_store_punch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_store_destroy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_store_destroyed_stale, setup, teardown),
		cmocka_unit_test_setup_teardown(test_store_destroyed_file_left, setup, teardown),
		cmocka_unit_test_setup_teardown(test_store_list_paging, setup, teardown),
		cmocka_unit_test_setup_teardown(test_store_uuid_persists, setup, teardown),
		cmocka_unit_test_setup_teardown(test_store_bad_uuid_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_store_concurrent_fd_cache, setup, teardown),
		cmocka_unit_test_setup_teardown(test_store_o_direct_option, setup, teardown),
		cmocka_unit_test_setup_teardown(test_store_splice_write, setup, teardown),
		cmocka_unit_test_setup_teardown(test_store_fd_limit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_store_dir_sync_on_create_destroy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_store_dir_sync_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_store_destroy_many, setup, teardown),
		cmocka_unit_test_setup_teardown(test_store_write_behind, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
