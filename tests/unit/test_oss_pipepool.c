/* test_oss_pipepool.c — the pipes of the OSS's spliced READs: pipes hold
 * a whole READ, come back for reuse only when empty, at most `keep` are
 * held; and the spliced store read (oss_store_splice_read) puts exactly
 * the bytes a buffered read gives into the pipe: whole, short at the
 * object's end, empty for a missing object, refused (-EAGAIN) when the
 * pipe cannot take the length, -EOPNOTSUPP on an O_DIRECT store. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "oss/pipepool.h"
#include "oss/store.h"

#define PSZ (1u << 20)

static void test_pipepool_reuse(void **state)
{
	oss_pipepool *p;
	oss_pipe a, b, c;
	char x = 'x';

	(void)state;
	assert_int_equal(oss_pipepool_create(0, 2, &p), -EINVAL);
	assert_int_equal(oss_pipepool_create(PSZ, 2, &p), 0);
	assert_true(oss_pipepool_size(p) >= PSZ);
	assert_int_equal(oss_pipepool_idle(p), 1); /* the probe pipe */
	assert_int_equal(oss_pipepool_get(p, &a), 0);
	assert_int_equal(oss_pipepool_get(p, &b), 0);
	assert_int_equal(oss_pipepool_get(p, &c), 0);
	assert_int_equal(oss_pipepool_idle(p), 0);
	assert_true(fcntl(a.fd[1], F_GETPIPE_SZ) >= (int)PSZ);
	assert_true(fcntl(b.fd[0], F_GETFL) & O_NONBLOCK);
	/* an empty pipe's read end says EAGAIN, never waits */
	assert_int_equal(read(a.fd[0], &x, 1), -1);
	assert_int_equal(errno, EAGAIN);
	oss_pipepool_put(p, &a, 1);
	assert_int_equal(a.fd[0], -1);
	oss_pipepool_put(p, &b, 1);
	oss_pipepool_put(p, &c, 1); /* beyond keep: closed */
	assert_int_equal(oss_pipepool_idle(p), 2);
	/* a pipe given back with bytes in it is closed, not kept */
	assert_int_equal(oss_pipepool_get(p, &a), 0);
	assert_int_equal(write(a.fd[1], &x, 1), 1);
	oss_pipepool_put(p, &a, 0);
	assert_int_equal(oss_pipepool_idle(p), 1);
	oss_pipepool_destroy(p); /* closes the idle ones */
	oss_pipepool_destroy(NULL);
}

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed * 31 + i * 7 + (i >> 8));
}

/* Everything in the pipe (non-blocking read end) into out; its length. */
static size_t drain(int fd, uint8_t *out, size_t cap)
{
	size_t n = 0;

	for (;;) {
		ssize_t r = read(fd, out + n, cap - n);

		if (r <= 0)
			return n;
		n += (size_t)r;
	}
}

static void test_store_splice_read(void **state)
{
	char dir[64], err[256], cmd[128];
	oss_store_opts o = { .fd_cache = 4 };
	oss_store *st;
	oss_pipepool *p;
	oss_pipe pp;
	size_t n = 3 * PSZ / 2, got;
	uint8_t *w = malloc(n), *r = malloc(PSZ), *b = malloc(PSZ);

	(void)state;
	assert_non_null(w);
	assert_non_null(r);
	assert_non_null(b);
	snprintf(dir, sizeof(dir), "/tmp/pfs-test-pipe-XXXXXX");
	assert_non_null(mkdtemp(dir));
	strcat(dir, "/ost");
	assert_int_equal(oss_store_open(dir, &o, &st, err, sizeof(err)), 0);
	/* twice the read: an unaligned 1 MiB spans 257 pages (pipe slots) */
	assert_int_equal(oss_pipepool_create(2 * PSZ, 1, &p), 0);
	fill(w, n, 3);
	assert_int_equal(oss_store_write(st, 7, 0, w, n), 0);

	/* a whole 1 MiB, unaligned start: as the buffered read */
	assert_int_equal(oss_pipepool_get(p, &pp), 0);
	assert_int_equal(oss_store_splice_read(st, 7, 100, pp.fd[1], PSZ, &got), 0);
	assert_int_equal(got, PSZ);
	assert_int_equal(drain(pp.fd[0], r, PSZ), PSZ);
	assert_int_equal(oss_store_read(st, 7, 100, b, PSZ, &got), 0);
	assert_memory_equal(r, b, PSZ);
	assert_memory_equal(r, w + 100, PSZ);
	/* short at the object's end */
	assert_int_equal(oss_store_splice_read(st, 7, n - 5000, pp.fd[1], 65536, &got), 0);
	assert_int_equal(got, 5000);
	assert_int_equal(drain(pp.fd[0], r, PSZ), 5000);
	assert_memory_equal(r, w + n - 5000, 5000);
	/* past the end, a missing object, nothing asked: empty */
	assert_int_equal(oss_store_splice_read(st, 7, n + 10, pp.fd[1], 4096, &got), 0);
	assert_int_equal(got, 0);
	assert_int_equal(oss_store_splice_read(st, 8, 0, pp.fd[1], 4096, &got), 0);
	assert_int_equal(got, 0);
	assert_int_equal(oss_store_splice_read(st, 7, 0, pp.fd[1], 0, &got), 0);
	assert_int_equal(got, 0);
	assert_int_equal(drain(pp.fd[0], r, PSZ), 0);
	/* a pipe with room for less than the length: -EAGAIN, and got says
	 * what is in it (the caller drops it) */
	assert_int_equal(write(pp.fd[1], w, 4096), 4096);
	{
		size_t cap = oss_pipepool_size(p);
		uint8_t *big = malloc(cap);

		assert_non_null(big);
		memset(big, 0, cap);
		/* fill all but a little of the pipe */
		assert_true(write(pp.fd[1], big, cap - 8192) > 0);
		free(big);
	}
	assert_int_equal(oss_store_splice_read(st, 7, 0, pp.fd[1], 65536, &got), -EAGAIN);
	assert_true(got < 65536);
	oss_pipepool_put(p, &pp, 0);
	/* out of range, as oss_store_read */
	assert_int_equal(oss_pipepool_get(p, &pp), 0);
	assert_int_equal(oss_store_splice_read(st, 7, UINT64_MAX - 10, pp.fd[1], 4096, &got),
			 -EFBIG);
	oss_pipepool_put(p, &pp, 1);
	oss_store_close(st);

	/* an O_DIRECT store reads around the page cache: not spliced */
	o.o_direct = 1;
	assert_int_equal(oss_store_open(dir, &o, &st, err, sizeof(err)), 0);
	assert_int_equal(oss_pipepool_get(p, &pp), 0);
	assert_int_equal(oss_store_splice_read(st, 7, 0, pp.fd[1], 4096, &got), -EOPNOTSUPP);
	assert_int_equal(got, 0);
	oss_pipepool_put(p, &pp, 1);
	oss_store_close(st);
	oss_pipepool_destroy(p);
	*strrchr(dir, '/') = '\0';
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	free(w);
	free(r);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pipepool_reuse),
		cmocka_unit_test(test_store_splice_read),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
