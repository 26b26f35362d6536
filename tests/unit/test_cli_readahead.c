/* test_cli_readahead.c — mount.pfs's stream readahead against an
 * in-memory "OSS" whose reads take a little time: a sequential stream is
 * served from prefetched units with several fetches in flight and the
 * window within its cap; reads after a generation change see the new
 * bytes, never the prefetched old ones; random reads prefetch nothing; the
 * mount's total caps what two streams hold; unaligned reads are copied
 * across units; close waits for running fetches; failed fetches only
 * cost misses.  With pipes (readahead.h "Pipes"): in-order READs get the
 * unit's pipe with exactly their bytes at its front, out-of-order ones the
 * right bytes from memory, a READ that took fewer bytes than it said
 * drops the unit (nothing misaligned is served after it), a fetch that
 * cannot use a pipe falls back to memory, and stale piped units are never
 * served. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "client/readahead.h"

#define MB (1u << 20)
#define IMG (32u * MB)

typedef struct fake {
	pthread_mutex_t lock;
	uint8_t *img;
	unsigned fetches, active, peak_active;
	int fail;
	unsigned delay_us;
	void *owner_seen;
	int bad_owner;
	unsigned pipe_fetches;
	size_t pipe_max_len;  /* longest fetch into a pipe */
	int pipe_exdev;       /* fetch_pipe answers -EXDEV */
} fake;

static void fill(uint8_t *img, uint8_t seed)
{
	for (size_t i = 0; i < IMG; i++)
		img[i] = (uint8_t)(i * 7 + i / 4096 + seed);
}

static int fake_fetch(void *arg, void *owner, uint64_t off, size_t len, void *buf, size_t *got)
{
	fake *f = arg;

	pthread_mutex_lock(&f->lock);
	f->fetches++;
	if (++f->active > f->peak_active)
		f->peak_active = f->active;
	if (f->owner_seen && owner != f->owner_seen)
		f->bad_owner = 1;
	pthread_mutex_unlock(&f->lock);
	usleep(f->delay_us);
	pthread_mutex_lock(&f->lock);
	if (!f->fail)
		memcpy(buf, f->img + off, len);
	f->active--;
	pthread_mutex_unlock(&f->lock);
	if (f->fail)
		return f->fail;
	*got = len;
	return 0;
}

/* The "OSS" into a pipe: the bytes written into it (as the osc splices
 * them). */
static int fake_fetch_pipe(void *arg, void *owner, uint64_t off, size_t len, int pipe_r,
			   int pipe_w, size_t pipe_cap, size_t *got)
{
	fake *f = arg;
	uint8_t *tmp;
	size_t done = 0;

	(void)owner;
	(void)pipe_r;
	assert_true(len <= pipe_cap);
	if (f->pipe_exdev)
		return -EXDEV;
	tmp = malloc(len);
	assert_non_null(tmp);
	pthread_mutex_lock(&f->lock);
	f->active++;
	if (len > f->pipe_max_len)
		f->pipe_max_len = len;
	memcpy(tmp, f->img + off, len);
	pthread_mutex_unlock(&f->lock);
	usleep(f->delay_us);
	while (done < len) {
		ssize_t k = write(pipe_w, tmp + done, len - done);

		assert_true(k > 0);
		done += (size_t)k;
	}
	free(tmp);
	pthread_mutex_lock(&f->lock);
	f->pipe_fetches++;
	f->active--;
	pthread_mutex_unlock(&f->lock);
	*got = len;
	return 0;
}

static fake *fake_new(void)
{
	fake *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->img = malloc(IMG);
	assert_non_null(f->img);
	fill(f->img, 0);
	pthread_mutex_init(&f->lock, NULL);
	f->delay_us = 3000;
	return f;
}

static void fake_free(fake *f)
{
	pthread_mutex_destroy(&f->lock);
	free(f->img);
	free(f);
}

static cli_ra *ra_new_opt(fake *f, uint64_t window, uint64_t total, int pipes)
{
	cli_ra_opts o = { .window_bytes = window, .total_bytes = total, .threads = 4,
			  .fetch = fake_fetch, .fetch_pipe = pipes ? fake_fetch_pipe : NULL,
			  .arg = f };
	cli_ra *ra = NULL;

	assert_int_equal(cli_ra_create(&o, &ra), 0);
	return ra;
}

static cli_ra *ra_new(fake *f, uint64_t window, uint64_t total)
{
	return ra_new_opt(f, window, total, 0);
}

/* One READ as fuse_ops.c does it: from the readahead, else from the
 * "OSS"; checked against the image as it is now.  1 on a hit. */
static int do_read(fake *f, cli_ra_stream *s, uint64_t gen, uint64_t off, size_t len)
{
	uint8_t *buf = malloc(len), *want = malloc(len);
	const void *data = NULL;
	cli_ra_ref *ref = NULL;
	int hit;

	assert_non_null(buf);
	assert_non_null(want);
	hit = cli_ra_read(s, gen, IMG, off, len, buf, &data, &ref);
	pthread_mutex_lock(&f->lock);
	memcpy(want, f->img + off, len);
	pthread_mutex_unlock(&f->lock);
	if (hit) {
		assert_non_null(data);
		assert_memory_equal(data, want, len);
	} else {
		assert_null(ref);
	}
	cli_ra_put(ref);
	free(buf);
	free(want);
	return hit;
}

static void wait_idle(fake *f, cli_ra *ra);

/* do_read as fuse_ops.c's ra_serve does it with pipes: a pipe hit is
 * spliced out by the caller, who takes `take` bytes (len when 0) and
 * reports success.  *piped (may be NULL) = 1 when the READ got a pipe. */
static int do_read_pipe(fake *f, cli_ra_stream *s, uint64_t gen, uint64_t off, size_t len,
			size_t take, int *piped)
{
	uint8_t *buf = malloc(len), *want = malloc(len);
	const void *data = NULL;
	cli_ra_ref *ref = NULL;
	int hit, pfd = -1;

	assert_non_null(buf);
	assert_non_null(want);
	hit = cli_ra_read_pipe(s, gen, IMG, off, len, buf, &data, &pfd, &ref);
	pthread_mutex_lock(&f->lock);
	memcpy(want, f->img + off, len);
	pthread_mutex_unlock(&f->lock);
	if (piped)
		*piped = hit && pfd >= 0;
	if (hit && pfd >= 0) {
		size_t n = take ? take : len, done = 0;
		uint8_t *got = malloc(n);

		assert_non_null(got);
		assert_null(data);
		while (done < n) {
			ssize_t k = read(pfd, got + done, n - done);

			assert_true(k > 0);
			done += (size_t)k;
		}
		assert_memory_equal(got, want, n);
		free(got);
		cli_ra_put_pipe(ref, 1);
	} else if (hit) {
		assert_non_null(data);
		assert_memory_equal(data, want, len);
		cli_ra_put(ref);
	} else {
		assert_null(ref);
	}
	free(buf);
	free(want);
	return hit;
}

static void test_pipe_sequential(void **state)
{
	fake *f = fake_new();
	cli_ra *ra = ra_new_opt(f, 8 * MB, 64 * MB, 1);
	cli_ra_stream *s = cli_ra_open(ra, NULL, MB);
	cli_ra_stats st;
	unsigned hits = 0, piped = 0;

	(void)state;
	for (uint64_t off = 0; off < IMG; off += MB) {
		int p;

		hits += (unsigned)do_read_pipe(f, s, 0, off, MB, 0, &p);
		piped += (unsigned)p;
	}
	cli_ra_close(s);
	cli_ra_stats_get(ra, &st);
	assert_true(hits >= 28);
	assert_true(piped >= 28);
	assert_int_equal(st.pipe_hits, piped);
	assert_true(st.piped >= 28);
	assert_int_equal(f->fetches, 0); /* no unit went to memory */
	assert_int_equal(st.materialized, 0);
	assert_int_equal(st.used_bytes, 0);
	cli_ra_destroy(ra);
	fake_free(f);
}

/* 2 MiB stripes: 1 MiB units, each one READ into a pipe */
static void test_pipe_big_stripes(void **state)
{
	fake *f = fake_new();
	cli_ra *ra = ra_new_opt(f, 8 * MB, 64 * MB, 1);
	cli_ra_stream *s = cli_ra_open(ra, NULL, 2 * MB);
	cli_ra_stats st;
	unsigned piped = 0;

	(void)state;
	for (uint64_t off = 0; off < 16 * MB; off += MB) {
		int p;

		do_read_pipe(f, s, 0, off, MB, 0, &p);
		piped += (unsigned)p;
	}
	cli_ra_close(s);
	cli_ra_stats_get(ra, &st);
	assert_true(piped >= 12);
	assert_true(f->pipe_max_len <= MB);
	assert_int_equal(f->fetches, 0);
	cli_ra_destroy(ra);
	fake_free(f);
}

static void test_pipe_partial(void **state)
{
	fake *f = fake_new();
	cli_ra *ra = ra_new_opt(f, 8 * MB, 64 * MB, 1);
	cli_ra_stream *s = cli_ra_open(ra, NULL, MB);
	cli_ra_stats st;
	int p;

	(void)state;
	for (uint64_t off = 0; off < 4 * MB; off += MB)
		do_read_pipe(f, s, 0, off, MB, 0, NULL);
	wait_idle(f, ra);
	/* halves in order: both from the pipe's front */
	assert_int_equal(do_read_pipe(f, s, 0, 4 * MB, MB / 2, 0, &p), 1);
	assert_int_equal(p, 1);
	assert_int_equal(do_read_pipe(f, s, 0, 4 * MB + MB / 2, MB / 2, 0, &p), 1);
	assert_int_equal(p, 1);
	/* the second half first: served from memory, and then the first */
	assert_int_equal(do_read_pipe(f, s, 0, 5 * MB + MB / 2, MB / 2, 0, &p), 1);
	assert_int_equal(p, 0);
	assert_int_equal(do_read_pipe(f, s, 0, 5 * MB, MB / 2, 0, &p), 1);
	assert_int_equal(p, 0);
	cli_ra_stats_get(ra, &st);
	assert_true(st.materialized >= 1);
	/* a READ across two piped units: copied, right bytes */
	assert_int_equal(do_read_pipe(f, s, 0, 6 * MB + MB / 2, MB, 0, &p), 1);
	assert_int_equal(p, 0);
	/* a caller that took fewer bytes than the READ: the unit goes, and
	 * nothing after it is served misaligned (do_read_pipe checks bytes) */
	assert_int_equal(do_read_pipe(f, s, 0, 8 * MB, MB / 2, MB / 4, &p), 1);
	assert_int_equal(p, 1);
	assert_int_equal(do_read_pipe(f, s, 0, 8 * MB + MB / 2, MB / 2, 0, &p), 0);
	for (uint64_t off = 9 * MB; off < 16 * MB; off += MB)
		do_read_pipe(f, s, 0, off, MB, 0, NULL);
	cli_ra_close(s);
	cli_ra_stats_get(ra, &st);
	assert_int_equal(st.used_bytes, 0);
	cli_ra_destroy(ra);
	fake_free(f);
}

static void test_pipe_fallback(void **state)
{
	fake *f = fake_new();
	cli_ra *ra = ra_new_opt(f, 8 * MB, 64 * MB, 1);
	cli_ra_stream *s = cli_ra_open(ra, NULL, MB);
	cli_ra_stats st;
	unsigned hits = 0;

	(void)state;
	f->pipe_exdev = 1;
	for (uint64_t off = 0; off < 16 * MB; off += MB) {
		int p;

		hits += (unsigned)do_read_pipe(f, s, 0, off, MB, 0, &p);
		assert_int_equal(p, 0);
	}
	cli_ra_close(s);
	cli_ra_stats_get(ra, &st);
	assert_true(hits >= 12);
	assert_int_equal(st.piped, 0);
	assert_true(f->fetches >= 12);
	cli_ra_destroy(ra);
	fake_free(f);
}

static void test_pipe_generation(void **state)
{
	fake *f = fake_new();
	cli_ra *ra = ra_new_opt(f, 8 * MB, 64 * MB, 1);
	cli_ra_stream *s = cli_ra_open(ra, NULL, MB);
	cli_ra_stats st;
	unsigned hits = 0;

	(void)state;
	for (uint64_t off = 0; off < 4 * MB; off += MB)
		do_read_pipe(f, s, 0, off, MB, 0, NULL);
	wait_idle(f, ra);
	cli_ra_stats_get(ra, &st);
	assert_true(st.used_bytes >= 2 * MB);
	pthread_mutex_lock(&f->lock);
	fill(f->img, 99);
	pthread_mutex_unlock(&f->lock);
	/* every byte checked against the new image */
	for (uint64_t off = 4 * MB; off < IMG; off += MB)
		hits += (unsigned)do_read_pipe(f, s, 1, off, MB, 0, NULL);
	cli_ra_stats_get(ra, &st);
	assert_true(st.stale_drops >= 2);
	assert_true(hits >= 20);
	cli_ra_close(s);
	cli_ra_destroy(ra);
	fake_free(f);
}

static void test_sequential(void **state)
{
	fake *f = fake_new();
	cli_ra *ra = ra_new(f, 8 * MB, 64 * MB);
	int owner;
	cli_ra_stream *s = cli_ra_open(ra, &owner, MB);
	cli_ra_stats st;
	unsigned hits = 0;

	(void)state;
	f->owner_seen = &owner;
	for (uint64_t off = 0; off < IMG; off += MB) {
		hits += (unsigned)do_read(f, s, 0, off, MB);
		cli_ra_stats_get(ra, &st);
		/* the window and what the stream holds stay within the cap
		 * (a unit being read may still be held) */
		assert_true(st.used_bytes <= 8 * MB + 2 * MB);
	}
	cli_ra_close(s);
	cli_ra_stats_get(ra, &st);
	/* all but the first reads come from prefetched units */
	assert_true(hits >= 28);
	assert_int_equal(st.hits, hits);
	/* each unit fetched once, several at a time */
	assert_true(f->fetches <= 32);
	assert_true(f->peak_active >= 2);
	assert_false(f->bad_owner);
	assert_int_equal(st.used_bytes, 0);
	assert_true(st.peak_bytes <= 10 * MB);
	cli_ra_destroy(ra);
	fake_free(f);
}

static void wait_idle(fake *f, cli_ra *ra)
{
	cli_ra_stats st;

	for (int i = 0; i < 2000; i++) {
		unsigned active, done;

		pthread_mutex_lock(&f->lock);
		active = f->active;
		done = f->fetches + f->pipe_fetches;
		pthread_mutex_unlock(&f->lock);
		cli_ra_stats_get(ra, &st);
		if (!active && st.fetches + st.fetch_errors == done && i > 20)
			return;
		usleep(1000);
	}
	fail_msg("fetches did not settle");
}

static void test_generation(void **state)
{
	fake *f = fake_new();
	cli_ra *ra = ra_new(f, 8 * MB, 64 * MB);
	cli_ra_stream *s = cli_ra_open(ra, NULL, MB);
	cli_ra_stats st;
	unsigned hits = 0;

	(void)state;
	for (uint64_t off = 0; off < 4 * MB; off += MB)
		do_read(f, s, 0, off, MB);
	wait_idle(f, ra);
	cli_ra_stats_get(ra, &st);
	assert_true(st.used_bytes >= 2 * MB); /* units ahead are held */
	/* the file changes (a write of this mount reached the OSSes) */
	pthread_mutex_lock(&f->lock);
	fill(f->img, 99);
	pthread_mutex_unlock(&f->lock);
	/* do_read checks every byte against the new image */
	for (uint64_t off = 4 * MB; off < IMG; off += MB)
		hits += (unsigned)do_read(f, s, 1, off, MB);
	cli_ra_stats_get(ra, &st);
	assert_true(st.stale_drops >= 2);
	assert_true(hits >= 20); /* the stream goes on under the new generation */
	cli_ra_close(s);
	cli_ra_destroy(ra);
	fake_free(f);
}

static void test_random(void **state)
{
	fake *f = fake_new();
	cli_ra *ra = ra_new(f, 8 * MB, 64 * MB);
	cli_ra_stream *s = cli_ra_open(ra, NULL, MB);
	unsigned seed = 7;

	(void)state;
	for (int i = 0; i < 300; i++) {
		uint64_t off = (uint64_t)(rand_r(&seed) % (IMG / 4096)) * 4096;

		assert_int_equal(do_read(f, s, 0, off, 4096), 0);
	}
	assert_true(f->fetches <= 2); /* a lucky neighbour at most */
	cli_ra_close(s);
	cli_ra_destroy(ra);
	fake_free(f);
}

static void test_total_cap(void **state)
{
	fake *f = fake_new();
	cli_ra *ra = ra_new(f, 8 * MB, 4 * MB);
	cli_ra_stream *a = cli_ra_open(ra, NULL, MB), *b = cli_ra_open(ra, NULL, MB);
	cli_ra_stats st;

	(void)state;
	for (uint64_t off = 0; off < 16 * MB; off += MB) {
		do_read(f, a, 0, off, MB);
		do_read(f, b, 0, IMG / 2 + off, MB);
		cli_ra_stats_get(ra, &st);
		assert_true(st.used_bytes <= 4 * MB);
	}
	cli_ra_stats_get(ra, &st);
	assert_true(st.no_room > 0);
	assert_true(st.peak_bytes <= 4 * MB);
	assert_true(st.hits > 0);
	cli_ra_close(a);
	cli_ra_close(b);
	cli_ra_destroy(ra);
	fake_free(f);
}

static void test_unaligned(void **state)
{
	fake *f = fake_new();
	cli_ra *ra = ra_new(f, 8 * MB, 64 * MB);
	cli_ra_stream *s = cli_ra_open(ra, NULL, MB);
	unsigned hits = 0;

	(void)state;
	/* 768 KiB reads from 100 KiB: most span two units */
	for (uint64_t off = 100 * 1024; off + 768 * 1024 <= IMG; off += 768 * 1024)
		hits += (unsigned)do_read(f, s, 0, off, 768 * 1024);
	assert_true(hits >= 30);
	cli_ra_close(s);
	cli_ra_destroy(ra);
	fake_free(f);
}

static void test_close_waits(void **state)
{
	fake *f = fake_new();
	cli_ra *ra = ra_new(f, 16 * MB, 64 * MB);
	cli_ra_stream *s = cli_ra_open(ra, NULL, 4 * MB);
	cli_ra_stats st;

	(void)state;
	f->delay_us = 30000;
	do_read(f, s, 0, 0, MB);
	do_read(f, s, 0, MB, MB); /* starts the prefetches */
	cli_ra_close(s);          /* returns once none runs */
	pthread_mutex_lock(&f->lock);
	assert_int_equal(f->active, 0);
	pthread_mutex_unlock(&f->lock);
	cli_ra_stats_get(ra, &st);
	assert_int_equal(st.used_bytes, 0);
	cli_ra_destroy(ra);
	fake_free(f);
}

static void test_fetch_errors(void **state)
{
	fake *f = fake_new();
	cli_ra *ra = ra_new(f, 8 * MB, 64 * MB);
	cli_ra_stream *s = cli_ra_open(ra, NULL, MB);
	cli_ra_stats st;

	(void)state;
	f->fail = -EIO;
	for (uint64_t off = 0; off < 8 * MB; off += MB)
		assert_int_equal(do_read(f, s, 0, off, MB), 0);
	cli_ra_close(s);
	cli_ra_stats_get(ra, &st);
	assert_true(st.fetch_errors > 0);
	assert_int_equal(st.used_bytes, 0);
	cli_ra_destroy(ra);
	fake_free(f);
}

static void test_bad_opts(void **state)
{
	cli_ra_opts o = { .window_bytes = MB, .total_bytes = 0, .fetch = fake_fetch };
	cli_ra *ra = NULL;

	(void)state;
	assert_int_equal(cli_ra_create(&o, &ra), -EINVAL);
	o.total_bytes = MB;
	o.fetch = NULL;
	assert_int_equal(cli_ra_create(&o, &ra), -EINVAL);
	assert_null(cli_ra_open(NULL, NULL, MB));
	cli_ra_close(NULL);
	cli_ra_put(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sequential),  cmocka_unit_test(test_generation),
		cmocka_unit_test(test_random),      cmocka_unit_test(test_total_cap),
		cmocka_unit_test(test_unaligned),   cmocka_unit_test(test_close_waits),
		cmocka_unit_test(test_fetch_errors), cmocka_unit_test(test_bad_opts),
		cmocka_unit_test(test_pipe_sequential), cmocka_unit_test(test_pipe_partial),
		cmocka_unit_test(test_pipe_fallback), cmocka_unit_test(test_pipe_generation),
		cmocka_unit_test(test_pipe_big_stripes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
