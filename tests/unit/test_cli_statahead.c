/* test_cli_statahead.c — mount.pfs's statahead cache (client/statahead.h)
 * against an in-memory directory of sorted names and a fake clock: a walk
 * of misses in name order starts a fetch, a lone miss or misses out of
 * order do not; hits carry the entry's age and end at max_age; hits near
 * the end of a batch fetch the next one, the directory's end stops it;
 * this mount's drops (name, ino) and the MDS's revocations (an inode, a
 * directory, everything) take entries out at once, also when they come
 * while a fetch is in flight; the entry bound evicts the oldest; a batch
 * the walk never used makes the directory back off; with the thread, a
 * LOOKUP waits for the fetch in flight that covers it.  A walk that
 * overtakes the fetch in flight, late LOOKUPs of other walkers behind the
 * window, and a second walk that goes past what the first one fetched keep
 * being served (the window jumps to the walk; no back-off); sparse random
 * LOOKUPs still back off, doubling.  Also the LOOKUP_BULK
 * reply decoder (cli_mdc_lookup_bulk_decode) on good, garbage, truncated
 * and oversized input. */
#include <errno.h>
#include <pthread.h>
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

#include "client/mdc.h"
#include "client/statahead.h"
#include "common/buf.h"

#define DIR_INO 7
#define NFILES 1000

typedef struct fake {
	uint64_t now;
	unsigned fetches;
	char last_after[PFS_NAME_MAX + 1];
	uint64_t last_dir;
	uint32_t last_max, max_seen;
	unsigned delay_ms;
	cli_sa *sa;           /* drop during the fetch: */
	uint64_t drop_ino;    /*   this ino (0 = none) */
	unsigned drop_others; /*   and this many unrelated names and inos */
	int fail;
	int gate_fd;          /* > 0: the first fetch waits for a byte here */
} fake;

static uint64_t fclock(void *arg)
{
	return ((fake *)arg)->now;
}

static void fname(char *out, unsigned i)
{
	snprintf(out, PFS_NAME_MAX + 1, "f%04u", i);
}

static int ffetch(void *arg, const cli_ctx *c, uint64_t dir, const char *after, uint32_t max,
		  cli_sa_ent *out, uint32_t *n, int *eof)
{
	fake *f = arg;
	unsigned i = 0, got = 0;

	(void)c;
	f->fetches++;
	f->last_dir = dir;
	f->last_max = max;
	if (max > f->max_seen)
		f->max_seen = max;
	snprintf(f->last_after, sizeof(f->last_after), "%s", after);
	if (f->delay_ms)
		usleep(f->delay_ms * 1000);
	if (f->gate_fd > 0 && f->fetches == 1) {
		char b;

		if (read(f->gate_fd, &b, 1) != 1)
			return -EIO;
	}
	if (f->drop_ino)
		cli_sa_drop_ino(f->sa, f->drop_ino);
	for (unsigned k = 0; k < f->drop_others; k++) {
		cli_sa_drop_ino(f->sa, 900000 + k);
		cli_sa_drop_name(f->sa, DIR_INO, "zz");
		cli_sa_drop_name(f->sa, DIR_INO + 1, "f0009");
	}
	if (f->fail)
		return -EACCES;
	if (after[0])
		i = (unsigned)atoi(after + 1) + 1;
	for (; i < NFILES && got < max; i++, got++) {
		fname(out[got].name, i);
		memset(&out[got].a, 0, sizeof(out[got].a));
		out[got].a.ino = 100 + i;
		out[got].a.mode = S_IFREG | 0644;
		out[got].a.nlink = 1;
		out[got].a.size = i;
	}
	*n = got;
	*eof = i >= NFILES;
	return 0;
}

static cli_sa *mk(fake *f, unsigned batch, unsigned max_entries)
{
	cli_sa_opts o = { .batch = batch, .max_entries = max_entries, .max_age_ms = 1000,
			  .trigger = 2, .window_ms = 500, .fetch = ffetch, .arg = f,
			  .clock = fclock, .clock_arg = f, .no_thread = 1 };
	cli_sa *sa = NULL;

	assert_int_equal(cli_sa_create(&o, &sa), 0);
	f->sa = sa;
	return sa;
}

static const cli_ctx ctx0;

/* lookup i: 0 hit, -ENOENT miss (then reported as the MDS's answer) */
static int look(cli_sa *sa, unsigned i, pfs_attr *a, uint64_t *age)
{
	char name[PFS_NAME_MAX + 1];
	pfs_attr tmp;
	uint64_t tage;
	int rc;

	fname(name, i);
	rc = cli_sa_lookup(sa, &ctx0, DIR_INO, name, a ? a : &tmp, age ? age : &tage);
	if (rc)
		cli_sa_miss(sa, &ctx0, DIR_INO, name);
	return rc;
}

static void test_bad_opts(void **st)
{
	fake f = { 0 };
	cli_sa_opts o = { .batch = 0, .fetch = ffetch, .arg = &f };
	cli_sa *sa = NULL;

	(void)st;
	assert_int_equal(cli_sa_create(&o, &sa), -EINVAL);
	o.batch = PFS_LOOKUP_BULK_MAX + 1;
	assert_int_equal(cli_sa_create(&o, &sa), -EINVAL);
	o.batch = 8;
	o.fetch = NULL;
	assert_int_equal(cli_sa_create(&o, &sa), -EINVAL);
	cli_sa_destroy(NULL);
}

static void test_detect_and_hit(void **st)
{
	fake f = { .now = 1000 };
	cli_sa *sa = mk(&f, 16, 0);
	pfs_attr a;
	uint64_t age;

	(void)st;
	/* a lone miss fetches nothing */
	assert_int_equal(look(sa, 10, NULL, NULL), -ENOENT);
	assert_int_equal(f.fetches, 0);
	/* out of order: still nothing */
	assert_int_equal(look(sa, 5, NULL, NULL), -ENOENT);
	assert_int_equal(f.fetches, 0);
	/* the next one after it: a walk, fetched after the last miss */
	assert_int_equal(look(sa, 6, NULL, NULL), -ENOENT);
	assert_int_equal(f.fetches, 1);
	assert_string_equal(f.last_after, "f0006");
	assert_int_equal(f.last_dir, DIR_INO);
	f.now += 250;
	assert_int_equal(look(sa, 7, &a, &age), 0);
	assert_int_equal(a.ino, 107);
	assert_int_equal(a.size, 7);
	assert_int_equal(age, 250);
	/* another directory holds nothing */
	assert_int_equal(cli_sa_lookup(sa, &ctx0, DIR_INO + 1, "f0007", &a, &age), -ENOENT);
	/* too old */
	f.now += 800;
	assert_int_equal(cli_sa_lookup(sa, &ctx0, DIR_INO, "f0008", &a, &age), -ENOENT);
	{
		cli_sa_stats s;

		cli_sa_get_stats(sa, &s);
		assert_int_equal(s.hits, 1);
		assert_true(s.expired >= 1);
	}
	cli_sa_destroy(sa);
}

static void test_window(void **st)
{
	fake f = { .now = 1000 };
	cli_sa *sa = mk(&f, 16, 0);

	(void)st;
	/* two misses further apart than window_ms are no walk */
	assert_int_equal(look(sa, 1, NULL, NULL), -ENOENT);
	f.now += 600;
	assert_int_equal(look(sa, 2, NULL, NULL), -ENOENT);
	assert_int_equal(f.fetches, 0);
	cli_sa_destroy(sa);
}

static void test_walk_ahead_to_eof(void **st)
{
	fake f = { .now = 1000 };
	cli_sa *sa = mk(&f, 64, 4096);
	unsigned hits = 0;

	(void)st;
	look(sa, 0, NULL, NULL);
	look(sa, 1, NULL, NULL);
	assert_int_equal(f.fetches, 1);
	assert_int_equal(f.last_max, 32);
	for (unsigned i = 2; i < NFILES; i++) {
		f.now++;
		if (look(sa, i, NULL, NULL) == 0)
			hits++;
	}
	/* every one after the trigger came from the cache: a first fetch of
	 * 32, then batches of 64 (the cap) fetched a batch ahead */
	assert_int_equal(hits, NFILES - 2);
	assert_int_equal(f.fetches, 1 + (NFILES - 2 - 32 + 63) / 64);
	assert_int_equal(f.max_seen, 64);
	/* at the end of the directory: no more fetches */
	f.now++;
	assert_int_equal(look(sa, NFILES - 1, NULL, NULL), 0);
	assert_int_equal(f.fetches, 1 + (NFILES - 2 - 32 + 63) / 64);
	/* a second walk of the same names (an unlink walk after a stat walk):
	 * its misses are the names before the first fetch; the rest are hits
	 * and nothing is fetched again while the entries are fresh */
	f.now++;
	look(sa, 0, NULL, NULL);
	look(sa, 1, NULL, NULL);
	assert_int_equal(f.fetches, 1 + (NFILES - 2 - 32 + 63) / 64);
	/* names inside the fetched range that went missing (dropped) do not
	 * start a fetch either */
	cli_sa_drop_name(sa, DIR_INO, "f0500");
	cli_sa_drop_name(sa, DIR_INO, "f0501");
	assert_int_equal(look(sa, 500, NULL, NULL), -ENOENT);
	assert_int_equal(look(sa, 501, NULL, NULL), -ENOENT);
	assert_int_equal(f.fetches, 1 + (NFILES - 2 - 32 + 63) / 64);
	assert_int_equal(look(sa, 502, NULL, NULL), 0);
	/* once they are old, a walk fetches again */
	f.now += 1100;
	look(sa, 700, NULL, NULL);
	look(sa, 701, NULL, NULL);
	assert_int_equal(f.fetches, 2 + (NFILES - 2 - 32 + 63) / 64);
	cli_sa_destroy(sa);
}

/* a second walk that starts before the first one's fetches: one fetch
 * that brings mostly cached entries, then no more */
static void test_second_walk(void **st)
{
	fake f = { .now = 1000 };
	cli_sa *sa = mk(&f, 64, 4096);
	unsigned first, hits = 0;

	(void)st;
	look(sa, 10, NULL, NULL);
	look(sa, 11, NULL, NULL);
	for (unsigned i = 12; i < 400; i++)
		assert_int_equal(look(sa, i, NULL, NULL), 0);
	first = f.fetches;
	for (unsigned i = 0; i < 400; i++)
		if (look(sa, i, NULL, NULL) == 0)
			hits++;
	/* its first misses lie behind the window the first walk is still
	 * going through: the first few are taken for late LOOKUPs of that
	 * walk and fetch nothing, then one batch, mostly cached */
	assert_true(f.fetches <= first + 1);
	assert_true(hits >= 400 - 10);
	cli_sa_destroy(sa);
}

/* walkers whose LOOKUPs left before the window covered them report their
 * misses late, behind it, in name order: not a new walk (which would
 * fetch the window again, find it cached and end the chain, leaving the
 * rest of the walk unserved) */
static void test_late_behind(void **st)
{
	fake f = { .now = 1000 };
	cli_sa *sa = mk(&f, 64, 4096);
	unsigned hits = 0;
	cli_sa_stats s;

	(void)st;
	look(sa, 0, NULL, NULL);
	look(sa, 4, NULL, NULL);
	assert_int_equal(f.fetches, 1);
	assert_string_equal(f.last_after, "f0004");
	for (unsigned i = 5; i < 9; i++)
		assert_int_equal(look(sa, i, NULL, NULL), 0);
	/* the late ones */
	assert_int_equal(look(sa, 2, NULL, NULL), -ENOENT);
	assert_int_equal(look(sa, 3, NULL, NULL), -ENOENT);
	for (unsigned i = 9; i < NFILES; i++) {
		f.now++;
		if (look(sa, i, NULL, NULL) == 0)
			hits++;
	}
	assert_int_equal(hits, NFILES - 9);
	cli_sa_get_stats(sa, &s);
	assert_true(s.behind >= 1);
	assert_int_equal(s.backoffs, 0);
	cli_sa_destroy(sa);

	/* the late ones before the walk's first hit: no back-off either */
	memset(&f, 0, sizeof(f));
	f.now = 1000;
	sa = mk(&f, 64, 4096);
	look(sa, 0, NULL, NULL);
	look(sa, 4, NULL, NULL);
	f.now++;
	assert_int_equal(look(sa, 2, NULL, NULL), -ENOENT);
	assert_int_equal(look(sa, 3, NULL, NULL), -ENOENT);
	hits = 0;
	for (unsigned i = 5; i < NFILES; i++) {
		f.now++;
		if (look(sa, i, NULL, NULL) == 0)
			hits++;
	}
	assert_int_equal(hits, NFILES - 5);
	cli_sa_get_stats(sa, &s);
	assert_int_equal(s.backoffs, 0);
	cli_sa_destroy(sa);
}

/* random LOOKUPs in a large directory (a few names at a time among many:
 * a batch gets no hit before its entries age) still back off: few
 * fetches */
static void test_random_backs_off(void **st)
{
	fake f = { .now = 1000 };
	cli_sa *sa = mk(&f, 64, 4096);
	uint64_t seed = 12345;
	cli_sa_stats s;

	(void)st;
	for (unsigned k = 0; k < 3000; k++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		f.now += 50;
		look(sa, (unsigned)(seed >> 33) % NFILES, NULL, NULL);
	}
	cli_sa_get_stats(sa, &s);
	print_message("random: %u fetches, %llu backoffs, %llu jumps, %llu hits\n", f.fetches,
		      (unsigned long long)s.backoffs, (unsigned long long)s.jumps,
		      (unsigned long long)s.hits);
	/* 150 s of them: 1 + 2 + 4 + ... s of back-off.  Before, 175: the
	 * mark that a batch had been judged counted as a hit and reset the
	 * doubling, so the back-off stayed at 1 s */
	assert_true(f.fetches <= 20);
	assert_true(s.backoffs >= 1);
	cli_sa_destroy(sa);
}

/* with the thread: the walk overtakes the fetch in flight (its LOOKUPs'
 * waits run out while the MDS is slow to answer) and goes on past the
 * batch when it lands, none of which it used: the window jumps to the walk
 * and the rest is served, no back-off */
static void test_overtake_inflight(void **st)
{
	int gate[2];
	fake f = { .now = 1000 };
	cli_sa_opts o = { .batch = 64, .max_entries = 4096, .max_age_ms = 4000, .trigger = 2,
			  .window_ms = 500, .wait_ms = 20, .fetch = ffetch, .arg = &f,
			  .clock = fclock, .clock_arg = &f };
	cli_sa *sa = NULL;
	cli_sa_stats s;
	unsigned hits = 0;

	(void)st;
	assert_int_equal(pipe(gate), 0);
	f.gate_fd = gate[0];
	assert_int_equal(cli_sa_create(&o, &sa), 0);
	f.sa = sa;
	look(sa, 0, NULL, NULL);
	look(sa, 1, NULL, NULL);
	/* the first fetch (after f0001) hangs on the gate: these wait 20 ms
	 * each, miss and go to the MDS */
	for (unsigned i = 40; i < 44; i++)
		assert_int_equal(look(sa, i, NULL, NULL), -ENOENT);
	assert_int_equal(write(gate[1], "x", 1), 1);
	for (int k = 0; k < 500; k++) {
		cli_sa_get_stats(sa, &s);
		if (s.fetched >= 32)
			break;
		usleep(10000);
	}
	assert_int_equal(s.fetched, 32);
	for (unsigned i = 44; i < NFILES; i++)
		if (look(sa, i, NULL, NULL) == 0)
			hits++;
	cli_sa_get_stats(sa, &s);
	/* the two misses that start the jump, and at most a few whose
	 * wait ran out on a loaded machine */
	assert_true(hits >= NFILES - 44 - 10);
	assert_true(s.jumps >= 1);
	assert_int_equal(s.backoffs, 0);
	cli_sa_destroy(sa);
	close(gate[0]);
	close(gate[1]);
}

/* a second walk after the first one stopped halfway: its first fetch runs
 * into the names the first walk fetched (mostly cached: no chaining from
 * there), it walks through them, and past their end it is served again
 * (the window jumps; before, the directory was taken as fetched to its
 * end and nothing more was fetched) */
static void test_second_walk_goes_on(void **st)
{
	fake f = { .now = 1000 };
	cli_sa_opts o = { .batch = 64, .max_entries = 4096, .max_age_ms = 4000, .trigger = 2,
			  .window_ms = 500, .fetch = ffetch, .arg = &f, .clock = fclock,
			  .clock_arg = &f, .no_thread = 1 };
	cli_sa *sa = NULL;
	unsigned hits = 0;

	(void)st;
	assert_int_equal(cli_sa_create(&o, &sa), 0);
	f.sa = sa;
	look(sa, 10, NULL, NULL);
	look(sa, 11, NULL, NULL);
	for (unsigned i = 12; i < 300; i++)
		assert_int_equal(look(sa, i, NULL, NULL), 0);
	f.now += 600; /* the first walk is over */
	for (unsigned i = 0; i < NFILES; i++) {
		f.now++;
		if (look(sa, i, NULL, NULL) == 0)
			hits++;
	}
	/* the second walk's two triggering misses, and the two that start
	 * the jump past the first walk's last fetch */
	assert_true(hits >= NFILES - 4);
	cli_sa_destroy(sa);
}

static void start_walk(fake *f, cli_sa *sa)
{
	look(sa, 0, NULL, NULL);
	look(sa, 1, NULL, NULL);
	assert_int_equal(f->fetches, 1);
}

static void test_drops(void **st)
{
	fake f = { .now = 1000 };
	cli_sa *sa = mk(&f, 32, 0);
	pfs_attr a;
	uint64_t age;

	(void)st;
	start_walk(&f, sa);
	assert_int_equal(cli_sa_lookup(sa, &ctx0, DIR_INO, "f0002", &a, &age), 0);
	/* this mount unlinked f0002, chmod'ed f0003 (ino 103) */
	cli_sa_drop_name(sa, DIR_INO, "f0002");
	cli_sa_drop_ino(sa, 103);
	assert_int_equal(cli_sa_lookup(sa, &ctx0, DIR_INO, "f0002", &a, &age), -ENOENT);
	assert_int_equal(cli_sa_lookup(sa, &ctx0, DIR_INO, "f0003", &a, &age), -ENOENT);
	assert_int_equal(cli_sa_lookup(sa, &ctx0, DIR_INO, "f0004", &a, &age), 0);
	/* a name in another directory with the same spelling stays */
	cli_sa_drop_name(sa, DIR_INO + 1, "f0004");
	assert_int_equal(cli_sa_lookup(sa, &ctx0, DIR_INO, "f0004", &a, &age), 0);
	/* the MDS revoked ino 105; then the directory's permissions */
	cli_sa_revoke(sa, 105);
	assert_int_equal(cli_sa_lookup(sa, &ctx0, DIR_INO, "f0005", &a, &age), -ENOENT);
	assert_int_equal(cli_sa_lookup(sa, &ctx0, DIR_INO, "f0006", &a, &age), 0);
	cli_sa_revoke(sa, DIR_INO);
	assert_int_equal(cli_sa_lookup(sa, &ctx0, DIR_INO, "f0006", &a, &age), -ENOENT);
	assert_int_equal(cli_sa_lookup(sa, &ctx0, DIR_INO, "f0007", &a, &age), -ENOENT);
	cli_sa_destroy(sa);
}

static void test_revoke_all(void **st)
{
	fake f = { .now = 1000 };
	cli_sa *sa = mk(&f, 32, 0);
	cli_sa_stats s;

	(void)st;
	start_walk(&f, sa);
	cli_sa_get_stats(sa, &s);
	assert_int_equal(s.entries, 32);
	cli_sa_revoke(sa, 0);
	cli_sa_get_stats(sa, &s);
	assert_int_equal(s.entries, 0);
	cli_sa_destroy(sa);
}

/* a drop that comes while the fetch is in flight (its answer may be from
 * before the change): the entry does not come back with the answer */
static void test_drop_during_fetch(void **st)
{
	fake f = { .now = 1000, .drop_ino = 105 };
	cli_sa *sa = mk(&f, 32, 0);
	pfs_attr a;
	uint64_t age;
	cli_sa_stats s;

	(void)st;
	start_walk(&f, sa);
	assert_int_equal(cli_sa_lookup(sa, &ctx0, DIR_INO, "f0004", &a, &age), 0);
	assert_int_equal(cli_sa_lookup(sa, &ctx0, DIR_INO, "f0005", &a, &age), -ENOENT);
	cli_sa_get_stats(sa, &s);
	assert_int_equal(s.discarded, 1);
	cli_sa_destroy(sa);

	/* many unrelated drops meanwhile (an unlink walk elsewhere): only
	 * the one dropped entry goes */
	memset(&f, 0, sizeof(f));
	f.now = 1000;
	f.drop_ino = 106;
	f.drop_others = 1000;
	sa = mk(&f, 32, 0);
	start_walk(&f, sa);
	assert_int_equal(cli_sa_lookup(sa, &ctx0, DIR_INO, "f0005", &a, &age), 0);
	assert_int_equal(cli_sa_lookup(sa, &ctx0, DIR_INO, "f0009", &a, &age), 0);
	assert_int_equal(cli_sa_lookup(sa, &ctx0, DIR_INO, "f0006", &a, &age), -ENOENT);
	cli_sa_get_stats(sa, &s);
	assert_int_equal(s.discarded, 1);
	cli_sa_destroy(sa);

	/* more drops than the ring holds: the batch is not trusted */
	memset(&f, 0, sizeof(f));
	f.now = 1000;
	f.drop_others = CLI_SA_RING;
	sa = mk(&f, 32, 0);
	start_walk(&f, sa);
	assert_int_equal(cli_sa_lookup(sa, &ctx0, DIR_INO, "f0005", &a, &age), -ENOENT);
	cli_sa_get_stats(sa, &s);
	assert_int_equal(s.entries, 0);
	cli_sa_destroy(sa);
}

static void test_bound(void **st)
{
	fake f = { .now = 1000 };
	cli_sa *sa = mk(&f, 64, 20);
	pfs_attr a;
	uint64_t age;
	cli_sa_stats s;

	(void)st;
	start_walk(&f, sa);
	cli_sa_get_stats(sa, &s);
	assert_int_equal(s.entries, 20);
	assert_int_equal(s.evicted, 12);
	/* the oldest went: f0002.. (first fetched); the last 20 of the 32 stay */
	assert_int_equal(cli_sa_lookup(sa, &ctx0, DIR_INO, "f0002", &a, &age), -ENOENT);
	assert_int_equal(cli_sa_lookup(sa, &ctx0, DIR_INO, "f0033", &a, &age), 0);
	cli_sa_destroy(sa);
}

static void test_backoff(void **st)
{
	fake f = { .now = 1000 };
	cli_sa *sa = mk(&f, 16, 0);

	(void)st;
	start_walk(&f, sa);
	/* the walk jumps elsewhere: the batch was of no use */
	f.now += 10;
	look(sa, 500, NULL, NULL);
	look(sa, 501, NULL, NULL);
	assert_int_equal(f.fetches, 1);
	/* within the backoff: nothing */
	f.now += 10;
	look(sa, 600, NULL, NULL);
	look(sa, 601, NULL, NULL);
	assert_int_equal(f.fetches, 1);
	/* after it */
	f.now += 1500;
	look(sa, 700, NULL, NULL);
	look(sa, 701, NULL, NULL);
	assert_int_equal(f.fetches, 2);
	assert_string_equal(f.last_after, "f0701");
	cli_sa_destroy(sa);
}

static void test_fetch_error(void **st)
{
	fake f = { .now = 1000, .fail = 1 };
	cli_sa *sa = mk(&f, 16, 0);
	cli_sa_stats s;

	(void)st;
	start_walk(&f, sa);
	assert_int_equal(look(sa, 2, NULL, NULL), -ENOENT);
	cli_sa_get_stats(sa, &s);
	assert_int_equal(s.fetch_errors, 1);
	assert_int_equal(s.entries, 0);
	/* a refused directory is not asked again at every second miss */
	for (unsigned i = 3; i < 20; i++)
		assert_int_equal(look(sa, i, NULL, NULL), -ENOENT);
	assert_int_equal(f.fetches, 1);
	f.now += 1500;
	look(sa, 30, NULL, NULL);
	look(sa, 31, NULL, NULL);
	assert_int_equal(f.fetches, 2);
	cli_sa_destroy(sa);
}

/* with the fetch thread: a LOOKUP of a name after the fetch's start waits
 * for it and hits */
static void test_thread_wait(void **st)
{
	fake f = { .now = 1000, .delay_ms = 100 };
	cli_sa_opts o = { .batch = 32, .max_age_ms = 1000, .window_ms = 500, .fetch = ffetch,
			  .arg = &f, .clock = fclock, .clock_arg = &f };
	cli_sa *sa = NULL;
	pfs_attr a;
	uint64_t age;
	cli_sa_stats s;

	(void)st;
	assert_int_equal(cli_sa_create(&o, &sa), 0);
	f.sa = sa;
	look(sa, 0, NULL, NULL);
	look(sa, 1, NULL, NULL);
	assert_int_equal(cli_sa_lookup(sa, &ctx0, DIR_INO, "f0003", &a, &age), 0);
	assert_int_equal(a.ino, 103);
	/* a name before the fetch's start does not wait */
	assert_int_equal(cli_sa_lookup(sa, &ctx0, DIR_INO, "f0000", &a, &age), -ENOENT);
	cli_sa_get_stats(sa, &s);
	assert_int_equal(s.waits, 1);
	cli_sa_destroy(sa);
}

/* ---- the LOOKUP_BULK reply decoder ---- */

static void enc_ent(pfs_wbuf *w, const char *name, uint64_t ino)
{
	pfs_attr a = { .ino = ino, .mode = S_IFREG | 0600, .nlink = 1, .size = 5 };

	pfs_wbuf_str(w, name);
	pfs_attr_encode(w, &a);
}

static void test_decode(void **st)
{
	cli_bulkent *e = calloc(8, sizeof(*e));
	pfs_wbuf w;
	uint32_t n = 99;
	int eof = 7;

	(void)st;
	assert_non_null(e);
	pfs_wbuf_init(&w);
	pfs_wbuf_u32(&w, 2);
	pfs_wbuf_u8(&w, 1);
	enc_ent(&w, "a", 11);
	enc_ent(&w, "bb", 12);
	assert_int_equal(cli_mdc_lookup_bulk_decode(w.data, w.len, 8, e, &n, &eof), 0);
	assert_int_equal(n, 2);
	assert_int_equal(eof, 1);
	assert_string_equal(e[1].name, "bb");
	assert_int_equal(e[1].a.ino, 12);
	assert_int_equal(e[1].a.size, 5);
	/* more entries than asked for */
	assert_int_equal(cli_mdc_lookup_bulk_decode(w.data, w.len, 1, e, &n, &eof), -EBADMSG);
	/* every truncation */
	for (size_t l = 0; l < w.len; l++)
		assert_int_equal(cli_mdc_lookup_bulk_decode(w.data, l, 8, e, &n, &eof), -EBADMSG);
	/* a trailing byte */
	pfs_wbuf_u8(&w, 0);
	assert_int_equal(cli_mdc_lookup_bulk_decode(w.data, w.len, 8, e, &n, &eof), -EBADMSG);
	pfs_wbuf_free(&w);
	/* a huge count with few bytes; a bad eof byte; bad names */
	pfs_wbuf_init(&w);
	pfs_wbuf_u32(&w, 0xffffffffu);
	pfs_wbuf_u8(&w, 0);
	enc_ent(&w, "a", 1);
	assert_int_equal(cli_mdc_lookup_bulk_decode(w.data, w.len, PFS_LOOKUP_BULK_MAX, e, &n,
						    &eof), -EBADMSG);
	pfs_wbuf_free(&w);
	pfs_wbuf_init(&w);
	pfs_wbuf_u32(&w, 0);
	pfs_wbuf_u8(&w, 2);
	assert_int_equal(cli_mdc_lookup_bulk_decode(w.data, w.len, 8, e, &n, &eof), -EBADMSG);
	pfs_wbuf_free(&w);
	{
		static const char *bad[] = { "", ".", "..", "a/b" };

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			pfs_wbuf_init(&w);
			pfs_wbuf_u32(&w, 1);
			pfs_wbuf_u8(&w, 0);
			enc_ent(&w, bad[i], 1);
			assert_int_equal(cli_mdc_lookup_bulk_decode(w.data, w.len, 8, e, &n, &eof),
					 -EBADMSG);
			pfs_wbuf_free(&w);
		}
	}
	/* an overlong name */
	{
		char big[PFS_NAME_MAX + 2];

		memset(big, 'x', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		pfs_wbuf_init(&w);
		pfs_wbuf_u32(&w, 1);
		pfs_wbuf_u8(&w, 0);
		enc_ent(&w, big, 1);
		assert_int_equal(cli_mdc_lookup_bulk_decode(w.data, w.len, 8, e, &n, &eof),
				 -EBADMSG);
		pfs_wbuf_free(&w);
	}
	/* garbage */
	{
		uint8_t g[512];
		unsigned seed = 12345;

		for (int r = 0; r < 2000; r++) {
			size_t l = (size_t)(seed % sizeof(g));

			for (size_t i = 0; i < l; i++) {
				seed = seed * 1103515245u + 12345u;
				g[i] = (uint8_t)(seed >> 16);
			}
			if (l >= 4)
				g[0] = (uint8_t)(g[0] % 4), g[1] = g[2] = g[3] = 0;
			n = 0;
			if (cli_mdc_lookup_bulk_decode(g, l, 8, e, &n, &eof) == 0)
				assert_true(n <= 8);
		}
	}
	free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_opts),
		cmocka_unit_test(test_detect_and_hit),
		cmocka_unit_test(test_window),
		cmocka_unit_test(test_walk_ahead_to_eof),
		cmocka_unit_test(test_second_walk),
		cmocka_unit_test(test_late_behind),
		cmocka_unit_test(test_random_backs_off),
		cmocka_unit_test(test_overtake_inflight),
		cmocka_unit_test(test_second_walk_goes_on),
		cmocka_unit_test(test_drops),
		cmocka_unit_test(test_revoke_all),
		cmocka_unit_test(test_drop_during_fetch),
		cmocka_unit_test(test_bound),
		cmocka_unit_test(test_backoff),
		cmocka_unit_test(test_fetch_error),
		cmocka_unit_test(test_thread_wait),
		cmocka_unit_test(test_decode),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
