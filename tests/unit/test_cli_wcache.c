/* test_cli_wcache.c — the client write-back cache against an in-memory
 * "OSS": sequential writes merged into one WRITE per chunk, random
 * overlapping writes of several writers ending as a reference image says,
 * reads seeing cached bytes, dirty limits throttling (not failing) a
 * writer, grants deciding what is cached, flush errors reported once, and
 * old data flushed by age, flushes by writev grouped by writer,
 * small extents made, grown and freed without losing or keeping bytes,
 * and two jobs sharing the flushers and the room of an OST while one
 * job's flushes are held (a throttled job). */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "client/wcache.h"
#include "common/clock.h"
#include "common/proto.h"

#define IMG (8u << 20)

typedef struct fake {
	pthread_mutex_t lock;
	uint8_t img[IMG];
	unsigned writes;
	size_t maxlen;
	int fail;           /* error every write returns */
	unsigned delay_us;  /* each write takes this long (a slow OSS) */
	uint64_t grant_left; /* what the "OST" still grants */
	uint64_t granted;    /* what it granted in total, less give-backs and use */
	unsigned asks;
	void *last_owner;
	unsigned writevs;    /* writev calls, extents they carried */
	size_t vext;
	uint64_t chunk;      /* the layout's chunk size (fake_writev checks) */
	void *hold_owner;    /* this owner's writes wait until hold_owner is NULL */
	pthread_cond_t held;
	unsigned holding;    /* writes waiting so */
} fake;

static int fake_write(void *arg, void *owner, uint64_t off, size_t len, const void *buf)
{
	fake *f = arg;

	if (f->delay_us)
		usleep(f->delay_us);
	pthread_mutex_lock(&f->lock);
	if (f->hold_owner && f->hold_owner == owner) {
		f->holding++;
		while (f->hold_owner == owner)
			pthread_cond_wait(&f->held, &f->lock);
		f->holding--;
	}
	f->writes++;
	f->last_owner = owner;
	if (len > f->maxlen)
		f->maxlen = len;
	if (!f->fail && off + len <= IMG)
		memcpy(f->img + off, buf, len);
	if (f->granted)
		f->granted -= f->granted < PFS_GRANT_COST(len) ? f->granted : PFS_GRANT_COST(len);
	pthread_mutex_unlock(&f->lock);
	return f->fail;
}

/* The writev callback: the extents must be ascending, disjoint and in one
 * chunk (f->chunk); each is applied as a write. */
static int fake_writev(void *arg, void *owner, const cli_wc_iov *v, size_t n)
{
	fake *f = arg;
	int rc = 0;

	pthread_mutex_lock(&f->lock);
	f->writevs++;
	f->vext += n;
	pthread_mutex_unlock(&f->lock);
	assert_true(n >= 1);
	for (size_t i = 0; i < n; i++) {
		if (i)
			assert_true(v[i].off >= v[i - 1].off + v[i - 1].len);
		assert_true(v[i].off / f->chunk == v[0].off / f->chunk);
		rc = fake_write(arg, owner, v[i].off, v[i].len, v[i].buf);
	}
	return rc;
}

/* Owners are ints: equal values may share a request. */
static int fake_same(void *arg, void *a, void *b)
{
	return *(int *)a == *(int *)b;
}

static int fake_grant(void *arg, uint32_t ost, uint64_t want, uint64_t back, uint64_t *g)
{
	fake *f = arg;
	uint64_t give;

	pthread_mutex_lock(&f->lock);
	f->asks++;
	back = back < f->granted ? back : f->granted;
	f->granted -= back;
	give = want < f->grant_left ? want : f->grant_left;
	f->grant_left -= give;
	f->granted += give;
	*g = f->granted;
	pthread_mutex_unlock(&f->lock);
	return 0;
}

static pfs_layout layout1(uint32_t stripe)
{
	pfs_layout l;

	memset(&l, 0, sizeof(l));
	l.stripe_size = stripe;
	l.stripe_count = 1;
	l.stripe[0].ost = 0;
	l.stripe[0].object = 7;
	return l;
}

static fake *fake_new(void)
{
	fake *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	pthread_mutex_init(&f->lock, NULL);
	pthread_cond_init(&f->held, NULL);
	return f;
}

static cli_wc *mk_v(fake *f, uint64_t total, uint64_t file, int grants, unsigned age,
		    int vec, int same)
{
	cli_wc_opts o = { 0 };
	cli_wc *wc;

	o.total_bytes = total;
	o.file_bytes = file;
	o.threads = 2;
	o.age_ms = age ? age : 60000;
	o.write = fake_write;
	o.writev = vec ? fake_writev : NULL;
	o.same = same ? fake_same : NULL;
	o.grant = grants ? fake_grant : NULL;
	o.arg = f;
	assert_int_equal(cli_wc_create(&o, &wc), 0);
	return wc;
}

static cli_wc *mk(fake *f, uint64_t total, uint64_t file, int grants, unsigned age)
{
	cli_wc_opts o = { 0 };
	cli_wc *wc;

	o.total_bytes = total;
	o.file_bytes = file;
	o.threads = 2;
	o.age_ms = age ? age : 60000;
	o.write = fake_write;
	o.grant = grants ? fake_grant : NULL;
	o.arg = f;
	assert_int_equal(cli_wc_create(&o, &wc), 0);
	return wc;
}

static void test_wc_chunk_size(void **state)
{
	pfs_layout l = layout1(1u << 20);

	assert_int_equal(cli_wc_chunk_size(&l), 1u << 20);
	l.stripe_size = 4u << 20;
	assert_int_equal(cli_wc_chunk_size(&l), 1u << 20);
	l.stripe_size = 3u << 19; /* 1.5 MiB */
	assert_int_equal(cli_wc_chunk_size(&l), 3u << 18);
	l.stripe_size = 64u << 10;
	assert_int_equal(cli_wc_chunk_size(&l), 64u << 10);
}

static void test_wc_sequential_merge(void **state)
{
	fake *f = fake_new();
	cli_wc *wc = mk(f, 64u << 20, 0, 0, 0);
	pfs_layout l = layout1(1u << 20);
	cli_wc_file *wf = cli_wc_file_new(wc, 1, &l);
	uint8_t b[4096];
	int x;

	/* 3/4 of a chunk, 4 KiB at a time: stays cached (not full, not old) */
	for (unsigned i = 0; i < 192; i++) {
		memset(b, (int)(i + 1), sizeof(b));
		assert_int_equal(cli_wc_write(wf, &x, "job", (uint64_t)i * 4096, 4096, b), 1);
	}
	usleep(50000);
	assert_int_equal(f->writes, 0);
	assert_int_equal(cli_wc_end(wf), 192u * 4096);
	assert_int_equal(cli_wc_flush(wf), 0);
	/* one extent: one WRITE */
	assert_int_equal(f->writes, 1);
	assert_int_equal(f->maxlen, 192u * 4096);
	assert_ptr_equal(f->last_owner, &x);
	for (unsigned i = 0; i < 192; i++)
		assert_int_equal(f->img[i * 4096 + 100], (uint8_t)(i + 1));
	assert_int_equal(cli_wc_end(wf), 0);
	/* A full chunk is written without being asked. */
	f->writes = 0;
	for (unsigned i = 0; i < 256; i++)
		assert_int_equal(cli_wc_write(wf, &x, "job", (1u << 20) + i * 4096, 4096, b), 1);
	for (int i = 0; i < 200 && f->writes == 0; i++)
		usleep(10000);
	assert_int_equal(f->writes, 1);
	cli_wc_file_free(wf);
	cli_wc_destroy(wc);
	free(f);
}

/* Random writes of three writers, reads in between, against a reference;
 * flushed by write or (vec) by writev, where writers 1 and 2 may share
 * requests. */
static void random_reference(int vec)
{
	fake *f = fake_new();
	cli_wc *wc = mk_v(f, 64u << 20, 0, 0, 0, vec, vec);
	pfs_layout l = layout1(64u << 10);
	cli_wc_file *wf = cli_wc_file_new(wc, 2, &l);
	const size_t span = 512u << 10;
	uint8_t *ref = calloc(1, span), *buf = malloc(span), *rd = malloc(span);
	int owners[3] = { 0, 1, 1 };
	unsigned seed = 12345;

	f->chunk = cli_wc_chunk_size(&l);

	for (int it = 0; it < 3000; it++) {
		uint64_t off = (uint64_t)(rand_r(&seed) % span);
		size_t len = 1 + (size_t)(rand_r(&seed) % 20000);
		int who = rand_r(&seed) % 3;

		if (off + len > span)
			len = span - off;
		for (size_t k = 0; k < len; k++)
			buf[k] = (uint8_t)rand_r(&seed);
		assert_int_equal(cli_wc_write(wf, &owners[who], who ? "b" : "a", off, len, buf), 1);
		memcpy(ref + off, buf, len);
		if (it % 97 == 0) {
			/* what a read sees: the "OSS" image plus the cache */
			cli_wc_snap *s;
			int full;
			uint64_t ro = (uint64_t)(rand_r(&seed) % (span - 70000));

			assert_int_equal(cli_wc_snap_take(wf, ro, 70000, &s, &full), 0);
			pthread_mutex_lock(&f->lock);
			memcpy(rd, f->img + ro, 70000);
			pthread_mutex_unlock(&f->lock);
			cli_wc_snap_apply(s, rd);
			cli_wc_snap_free(s);
			assert_memory_equal(rd, ref + ro, 70000);
		}
		if (it % 501 == 0)
			assert_int_equal(cli_wc_flush(wf), 0);
	}
	assert_int_equal(cli_wc_flush(wf), 0);
	assert_memory_equal(f->img, ref, span);
	assert_true(vec ? f->writevs > 0 : f->writevs == 0);
	cli_wc_file_free(wf);
	cli_wc_destroy(wc);
	free(ref);
	free(buf);
	free(rd);
	free(f);
}

static void test_wc_random_reference(void **state)
{
	random_reference(0);
}

static void test_wc_random_reference_writev(void **state)
{
	random_reference(1);
}

/* Random 4 KiB writes of four writers, two of whom may share requests:
 * one writev per group of writers per chunk, not one write per extent. */
static void test_wc_writev_groups(void **state)
{
	fake *f = fake_new();
	cli_wc *wc = mk_v(f, 64u << 20, 0, 0, 0, 1, 1);
	pfs_layout l = layout1(1u << 20);
	cli_wc_file *wf = cli_wc_file_new(wc, 9, &l);
	int owners[4] = { 7, 7, 8, 9 };
	uint8_t b[4096], *ref = calloc(1, 1u << 20);
	cli_wc_stats st;

	f->chunk = cli_wc_chunk_size(&l);
	/* 60 blocks, every other one: no two extents touch */
	for (unsigned i = 0; i < 60; i++) {
		unsigned blk = (i * 37) % 120 * 2;

		memset(b, (int)(i + 1), sizeof(b));
		assert_int_equal(cli_wc_write(wf, &owners[i % 4], "j", (uint64_t)blk * 4096,
					      sizeof(b), b), 1);
		memcpy(ref + (size_t)blk * 4096, b, sizeof(b));
	}
	assert_int_equal(f->writes, 0);
	assert_int_equal(cli_wc_flush(wf), 0);
	/* owners 0 and 1 together, 2 and 3 alone: three calls, 60 extents */
	assert_int_equal(f->writevs, 3);
	assert_int_equal(f->vext, 60);
	assert_int_equal(f->writes, 60);
	assert_memory_equal(f->img, ref, 1u << 20);
	cli_wc_stats_get(wc, &st);
	assert_int_equal(st.flush_rpcs, 3);
	assert_int_equal(st.flush_extents, 60);
	cli_wc_file_free(wf);
	cli_wc_destroy(wc);
	free(ref);
	free(f);
}

/* Small extents made, grown and freed over and over: writes of 1..4096
 * bytes, some appending to the last one (an extent that grows past 4 KiB),
 * some overwriting the middle of a grown extent, flushed every 37 writes,
 * each flush checked against a reference image: an extent that kept stale
 * bytes, length or room, a grown one that lost its first bytes, or a write
 * put in the wrong place of a chunk's list, shows. */
static void test_wc_small_extents_recycled(void **state)
{
	fake *f = fake_new();
	cli_wc *wc = mk_v(f, 64u << 20, 0, 0, 0, 1, 0);
	pfs_layout l = layout1(256u << 10);
	cli_wc_file *wf = cli_wc_file_new(wc, 3, &l);
	const size_t span = 1u << 20;
	uint8_t *ref = calloc(1, span), buf[4096];
	uint64_t last_end = 0;
	unsigned seed = 777;
	int owner = 1;

	assert_non_null(ref);
	f->chunk = cli_wc_chunk_size(&l);
	for (int it = 0; it < 6000; it++) {
		size_t len = 1 + (size_t)(rand_r(&seed) % 4096);
		int kind = rand_r(&seed) % 4;
		uint64_t off;

		if (kind == 0 && last_end + len <= span)
			off = last_end;                    /* append: the extent grows */
		else if (kind == 1 && last_end > 6000)
			off = last_end - 6000;             /* inside a grown one */
		else
			off = (uint64_t)(rand_r(&seed) % (span - len));
		for (size_t k = 0; k < len; k++)
			buf[k] = (uint8_t)(rand_r(&seed) | 1);
		assert_int_equal(cli_wc_write(wf, &owner, "j", off, len, buf), 1);
		memcpy(ref + off, buf, len);
		if (off + len > last_end || kind != 1)
			last_end = off + len;
		if (it % 37 == 36) {
			assert_int_equal(cli_wc_flush(wf), 0);
			pthread_mutex_lock(&f->lock);
			assert_memory_equal(f->img, ref, span);
			pthread_mutex_unlock(&f->lock);
		}
	}
	assert_int_equal(cli_wc_flush(wf), 0);
	assert_memory_equal(f->img, ref, span);
	cli_wc_file_free(wf);
	cli_wc_destroy(wc);
	free(ref);
	free(f);
}

static void test_wc_snap_full(void **state)
{
	fake *f = fake_new();
	cli_wc *wc = mk(f, 64u << 20, 0, 0, 0);
	pfs_layout l = layout1(64u << 10);
	cli_wc_file *wf = cli_wc_file_new(wc, 3, &l);
	uint8_t b[100000], r[100000];
	cli_wc_snap *s;
	int full, x;

	memset(b, 'a', sizeof(b));
	/* across a chunk boundary */
	assert_int_equal(cli_wc_write(wf, &x, NULL, 60000, 10000, b), 1);
	assert_int_equal(cli_wc_snap_take(wf, 61000, 5000, &s, &full), 0);
	assert_non_null(s);
	assert_true(full);
	memset(r, 0, sizeof(r));
	cli_wc_snap_apply(s, r);
	assert_memory_equal(r, b, 5000);
	cli_wc_snap_free(s);
	assert_int_equal(cli_wc_snap_take(wf, 59000, 5000, &s, &full), 0);
	assert_false(full);
	cli_wc_snap_free(s);
	assert_int_equal(cli_wc_snap_take(wf, 0, 5000, &s, &full), 0);
	assert_null(s);
	assert_int_equal(cli_wc_flush(wf), 0);
	assert_int_equal(f->writes, 2); /* one per chunk */
	cli_wc_file_free(wf);
	cli_wc_destroy(wc);
	free(f);
}

typedef struct wargs {
	cli_wc_file *wf;
	int rc;
} wargs;

static void test_wc_limits_throttle(void **state)
{
	fake *f = fake_new();
	/* 256 KiB in total, 128 KiB per file */
	cli_wc *wc = mk(f, 256u << 10, 128u << 10, 0, 0);
	pfs_layout l = layout1(64u << 10);
	cli_wc_file *wf = cli_wc_file_new(wc, 4, &l);
	uint8_t b[16384];
	cli_wc_stats st;
	int x;

	/* flushes slower than the writer fills the window, whatever the load */
	f->delay_us = 2000;
	for (unsigned i = 0; i < 128; i++) {
		memset(b, (int)i, sizeof(b));
		/* 2 MiB through a 128 KiB window: writers wait, never fail */
		assert_int_equal(cli_wc_write(wf, &x, "j", (uint64_t)i * sizeof(b), sizeof(b), b), 1);
		cli_wc_stats_get(wc, &st);
		assert_true(st.dirty <= 128u << 10);
	}
	assert_int_equal(cli_wc_flush(wf), 0);
	for (unsigned i = 0; i < 128; i++)
		assert_int_equal(f->img[i * sizeof(b) + 5], (uint8_t)i);
	cli_wc_stats_get(wc, &st);
	assert_true(st.throttled > 0);
	assert_true(st.peak <= 128u << 10);
	assert_int_equal(st.dirty, 0);
	/* A write larger than a limit is not cached at all. */
	{
		uint8_t *big = calloc(1, 200u << 10);

		assert_int_equal(cli_wc_write(wf, &x, "j", 0, 200u << 10, big), 0);
		cli_wc_sync_end(wf, 0, 200u << 10);
		free(big);
	}
	cli_wc_file_free(wf);
	cli_wc_destroy(wc);
	free(f);
}

typedef struct jw {
	cli_wc_file *wf;
	void *owner;
	uint64_t off;
	const uint8_t *buf;
	int rc;
	int done;
} jw;

static void *jw_main(void *arg)
{
	jw *w = arg;

	w->rc = cli_wc_write(w->wf, w->owner, "slow", w->off, 4096, w->buf);
	__atomic_store_n(&w->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/* Wait up to 5 s for byte off of the fake OSS to be v. */
static int img_becomes(fake *f, uint64_t off, uint8_t v)
{
	for (int i = 0; i < 500; i++) {
		uint8_t b;

		pthread_mutex_lock(&f->lock);
		b = f->img[off];
		pthread_mutex_unlock(&f->lock);
		if (b == v)
			return 1;
		usleep(10000);
	}
	return 0;
}

/* Jobs "slow" (its flushes held at the OSS, as a throttled job's wait for
 * tokens) and "free" in one cache of 4 flushers, 1 MiB (per-OST limit
 * 512 KiB): slow's full chunks take at most 3 flushers (its share of 2
 * and one borrowed while another stays idle), so free's full chunk is
 * flushed at once; slow holds at most half of the per-OST limit (its
 * next write waits) while free still caches. */
static void test_wc_jobs_share(void **state)
{
	fake *f = fake_new();
	cli_wc_opts o = { 0 };
	cli_wc *wc;
	pfs_layout l = layout1(64u << 10); /* both files on one object of the fake */
	cli_wc_file *ws, *wfr;
	static uint8_t sb[64u << 10], fb[64u << 10];
	int slow = 1, freej = 2;
	pthread_t th;
	jw w;

	o.total_bytes = 1u << 20;
	o.file_bytes = 1u << 20;
	o.threads = 4;
	o.age_ms = 60000;
	o.write = fake_write;
	o.writev = fake_writev;
	o.arg = f;
	f->chunk = 64u << 10;
	assert_int_equal(cli_wc_create(&o, &wc), 0);
	ws = cli_wc_file_new(wc, 1, &l);
	wfr = cli_wc_file_new(wc, 2, &l);
	assert_non_null(ws);
	assert_non_null(wfr);
	memset(sb, 's', sizeof(sb));
	memset(fb, 'f', sizeof(fb));
	pthread_mutex_lock(&f->lock);
	f->hold_owner = &slow;
	pthread_mutex_unlock(&f->lock);
	/* free has bytes cached (4 KiB, not due for 60 s): two jobs now */
	assert_int_equal(cli_wc_write(wfr, &freej, "free", 3u << 20, 4096, fb), 1);
	/* slow: 4 full chunks (256 KiB, its part), ready at once */
	for (unsigned i = 0; i < 4; i++)
		assert_int_equal(cli_wc_write(ws, &slow, "slow", (uint64_t)i << 16, sizeof(sb), sb), 1);
	for (int i = 0; i < 500; i++) {
		pthread_mutex_lock(&f->lock);
		if (f->holding >= 3) {
			pthread_mutex_unlock(&f->lock);
			break;
		}
		pthread_mutex_unlock(&f->lock);
		usleep(10000);
	}
	usleep(50000);
	pthread_mutex_lock(&f->lock);
	assert_int_equal(f->holding, 3);
	pthread_mutex_unlock(&f->lock);
	/* free's full chunk goes out while slow's flushes wait */
	assert_int_equal(cli_wc_write(wfr, &freej, "free", 1u << 20, sizeof(fb), fb), 1);
	assert_true(img_becomes(f, (1u << 20) + 100, 'f'));
	/* slow is at its part: its next write waits; free's does not */
	w = (jw){ .wf = ws, .owner = &slow, .off = 4u << 16, .buf = sb };
	assert_int_equal(pthread_create(&th, NULL, jw_main, &w), 0);
	assert_int_equal(cli_wc_write(wfr, &freej, "free", 2u << 20, sizeof(fb), fb), 1);
	usleep(200000);
	assert_int_equal(__atomic_load_n(&w.done, __ATOMIC_SEQ_CST), 0);
	/* released: everything goes out */
	pthread_mutex_lock(&f->lock);
	f->hold_owner = NULL;
	pthread_cond_broadcast(&f->held);
	pthread_mutex_unlock(&f->lock);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(w.rc, 1);
	assert_int_equal(cli_wc_flush(ws), 0);
	assert_int_equal(cli_wc_flush(wfr), 0);
	for (unsigned i = 0; i < 4; i++)
		assert_int_equal(f->img[((uint64_t)i << 16) + 7], 's');
	assert_int_equal(f->img[(4u << 16) + 7], 's');
	assert_int_equal(f->img[(3u << 20) + 7], 'f');
	assert_int_equal(f->img[(2u << 20) + 7], 'f');
	cli_wc_file_free(ws);
	cli_wc_file_free(wfr);
	cli_wc_destroy(wc);
	free(f);
}

static void test_wc_grants(void **state)
{
	fake *f = fake_new();
	cli_wc *wc = mk(f, 64u << 20, 0, 1, 0);
	pfs_layout l = layout1(1u << 20);
	cli_wc_file *wf = cli_wc_file_new(wc, 5, &l);
	uint8_t b[65536];
	cli_wc_stats st;
	int x, cached = 0, uncached = 0;

	memset(b, 7, sizeof(b));
	/* The OST can grant 10 writes' worth. */
	f->grant_left = 10 * PFS_GRANT_COST(sizeof(b));
	for (unsigned i = 0; i < 16; i++) {
		int rc = cli_wc_write(wf, &x, "j", (uint64_t)i * sizeof(b), sizeof(b), b);

		assert_true(rc == 0 || rc == 1);
		if (rc == 1) {
			cached++;
		} else {
			/* written through: the cached bytes of the OST still
			 * covered after this write consumes its grant */
			uncached++;
			fake_write(f, &x, (uint64_t)i * sizeof(b), sizeof(b), b);
			cli_wc_sync_end(wf, (uint64_t)i * sizeof(b), sizeof(b));
		}
	}
	assert_int_equal(cached, 10);
	assert_int_equal(uncached, 6);
	assert_true(f->asks >= 1);
	cli_wc_stats_get(wc, &st);
	assert_true(st.granted <= f->granted); /* never more than the OST says */
	assert_int_equal(cli_wc_flush(wf), 0);
	cli_wc_stats_get(wc, &st);
	assert_true(st.granted <= f->granted);
	for (unsigned i = 0; i < 16; i++)
		assert_int_equal(f->img[i * sizeof(b)], 7);
	/* More grant: cached again. */
	f->grant_left = 4u << 20;
	assert_int_equal(cli_wc_write(wf, &x, "j", 0, sizeof(b), b), 1);
	cli_wc_file_free(wf);
	cli_wc_destroy(wc);
	/* and given back at the end */
	assert_int_equal(f->granted, 0);
	free(f);
}

static void test_wc_error_reported_once(void **state)
{
	fake *f = fake_new();
	cli_wc *wc = mk(f, 64u << 20, 0, 0, 0);
	pfs_layout l = layout1(1u << 20);
	cli_wc_file *wf = cli_wc_file_new(wc, 6, &l);
	uint8_t b[4096] = { 1 };
	int x;

	assert_int_equal(cli_wc_write(wf, &x, "j", 0, sizeof(b), b), 1);
	f->fail = -ENOSPC;
	cli_wc_flush_range(wf, 0, 4096); /* keeps the error for the next flush */
	assert_int_equal(cli_wc_flush(wf), -ENOSPC);
	assert_int_equal(cli_wc_flush(wf), 0);
	f->fail = 0;
	cli_wc_file_free(wf);
	cli_wc_destroy(wc);
	free(f);
}

static void test_wc_age(void **state)
{
	fake *f = fake_new();
	cli_wc *wc = mk(f, 64u << 20, 0, 0, 50);
	pfs_layout l = layout1(1u << 20);
	cli_wc_file *wf = cli_wc_file_new(wc, 7, &l);
	uint8_t b[4096] = { 9 };
	int x;

	assert_int_equal(cli_wc_write(wf, &x, "j", 4096, sizeof(b), b), 1);
	for (int i = 0; i < 300 && f->writes == 0; i++)
		usleep(10000);
	assert_int_equal(f->writes, 1);
	assert_int_equal(f->img[4096], 9);
	/* the cache is empty, the job no longer lingers (500 ms) and the
	 * flushers sleep their longest (1 s): a new write is still flushed
	 * after its 50 ms, not at the end of that sleep (the write wakes one,
	 * which sleeps until the chunk is due instead) */
	usleep(600000);
	uint64_t t0 = pfs_clock_ms();
	b[0] = 8;
	assert_int_equal(cli_wc_write(wf, &x, "j", 8192, sizeof(b), b), 1);
	while (f->writes < 2 && pfs_clock_ms() - t0 < 3000)
		usleep(5000);
	assert_int_equal(f->writes, 2);
	assert_true(pfs_clock_ms() - t0 < 400);
	assert_int_equal(f->img[8192], 8);
	cli_wc_file_free(wf);
	cli_wc_destroy(wc);
	free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wc_chunk_size),
		cmocka_unit_test(test_wc_sequential_merge),
		cmocka_unit_test(test_wc_random_reference),
		cmocka_unit_test(test_wc_random_reference_writev),
		cmocka_unit_test(test_wc_writev_groups),
		cmocka_unit_test(test_wc_small_extents_recycled),
		cmocka_unit_test(test_wc_snap_full),
		cmocka_unit_test(test_wc_limits_throttle),
		cmocka_unit_test(test_wc_jobs_share),
		cmocka_unit_test(test_wc_grants),
		cmocka_unit_test(test_wc_error_reported_once),
		cmocka_unit_test(test_wc_age),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
