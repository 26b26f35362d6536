/* test_mds_slots.c — the MDS's count of create slots per client
 * (mds/slots.h).
 *
 * With the clock passed in: a put slot is taken once, by its client in its
 * directory; another client's or directory's take is -ESTALE and leaves
 * the slot counted; a slot lives ttl_ms (takeable at put + ttl - 1, gone
 * at put + ttl) and mds_slots_expire/count follow; the per-client cap
 * (-EAGAIN, mds_slots_room) frees up on take and expiry; ino 0 is -EINVAL
 * and a known ino -EEXIST (owner unchanged); a few thousand random
 * put/take/expire/room against a reference model; and freeing a table that
 * still holds slots leaks nothing (mallinfo2 over many rounds, and
 * LeakSanitizer under SAN=1). */
#include <errno.h>
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "mds/slots.h"

#define A 0xaaaa
#define B 0xbbbb
#define D1 100
#define D2 200

static void test_put_take(void **state)
{
	mds_slots *t = mds_slots_new(0, 0);

	assert_non_null(t);
	assert_int_equal(mds_slots_put(t, A, D1, 42, 0), 0);
	assert_int_equal(mds_slots_put(t, A, D1, 43, 0), 0);
	assert_int_equal(mds_slots_count(t), 2);
	assert_int_equal(mds_slots_room(t, A, 0), MDS_SLOTS_PER_CLIENT - 2);
	assert_int_equal(mds_slots_take(t, A, D1, 42, 1), 0);
	assert_int_equal(mds_slots_count(t), 1);
	assert_int_equal(mds_slots_take(t, A, D1, 42, 2), -ESTALE);
	assert_int_equal(mds_slots_count(t), 1);
	assert_int_equal(mds_slots_take(t, A, D1, 43, 3), 0);
	assert_int_equal(mds_slots_take(t, A, D1, 99, 3), -ESTALE);
	assert_int_equal(mds_slots_count(t), 0);
	assert_int_equal(mds_slots_room(t, A, 3), MDS_SLOTS_PER_CLIENT);
	mds_slots_free(t);
}

static void test_wrong_taker(void **state)
{
	mds_slots *t = mds_slots_new(0, 0);

	assert_non_null(t);
	assert_int_equal(mds_slots_put(t, A, D1, 7, 0), 0);
	assert_int_equal(mds_slots_take(t, B, D1, 7, 1), -ESTALE);
	assert_int_equal(mds_slots_take(t, A, D2, 7, 1), -ESTALE);
	assert_int_equal(mds_slots_take(t, B, D2, 7, 1), -ESTALE);
	assert_int_equal(mds_slots_count(t), 1);
	assert_int_equal(mds_slots_room(t, A, 1), MDS_SLOTS_PER_CLIENT - 1);
	assert_int_equal(mds_slots_room(t, B, 1), MDS_SLOTS_PER_CLIENT);
	assert_int_equal(mds_slots_take(t, A, D1, 7, 2), 0);
	assert_int_equal(mds_slots_count(t), 0);
	mds_slots_free(t);
}

static void test_expiry(void **state)
{
	mds_slots *t = mds_slots_new(0, 1000);

	assert_non_null(t);
	for (uint64_t ino = 1; ino <= 4; ino++)
		assert_int_equal(mds_slots_put(t, A, D1, ino, 0), 0);
	for (uint64_t ino = 5; ino <= 6; ino++)
		assert_int_equal(mds_slots_put(t, A, D1, ino, 500), 0);
	assert_int_equal(mds_slots_count(t), 6);
	assert_int_equal(mds_slots_take(t, A, D1, 1, 999), 0);
	assert_int_equal(mds_slots_expire(t, 999), 0);
	assert_int_equal(mds_slots_count(t), 5);
	assert_int_equal(mds_slots_take(t, A, D1, 2, 1000), -ESTALE);
	assert_int_equal(mds_slots_count(t), 2); /* the take dropped 2..4 */
	assert_int_equal(mds_slots_expire(t, 1000), 0);
	assert_int_equal(mds_slots_expire(t, 1499), 0);
	assert_int_equal(mds_slots_expire(t, 1500), 2);
	assert_int_equal(mds_slots_count(t), 0);
	/* expire alone, no take in between */
	assert_int_equal(mds_slots_put(t, A, D1, 8, 2000), 0);
	assert_int_equal(mds_slots_put(t, B, D2, 9, 2000), 0);
	assert_int_equal(mds_slots_expire(t, 2999), 0);
	assert_int_equal(mds_slots_expire(t, 3000), 2);
	assert_int_equal(mds_slots_take(t, B, D2, 9, 3000), -ESTALE);
	assert_int_equal(mds_slots_count(t), 0);
	mds_slots_free(t);
}

static void test_cap(void **state)
{
	mds_slots *t = mds_slots_new(3, 1000);

	assert_non_null(t);
	assert_int_equal(mds_slots_room(t, A, 0), 3);
	for (uint64_t ino = 1; ino <= 3; ino++) {
		assert_int_equal(mds_slots_put(t, A, D1, ino, 0), 0);
		assert_int_equal(mds_slots_room(t, A, 0), 3 - ino);
	}
	assert_int_equal(mds_slots_put(t, A, D2, 4, 0), -EAGAIN);
	assert_int_equal(mds_slots_count(t), 3);
	assert_int_equal(mds_slots_room(t, B, 0), 3);
	assert_int_equal(mds_slots_put(t, B, D1, 4, 0), 0);
	assert_int_equal(mds_slots_room(t, B, 0), 2);
	assert_int_equal(mds_slots_room(t, A, 0), 0);
	assert_int_equal(mds_slots_take(t, A, D1, 2, 10), 0);
	assert_int_equal(mds_slots_room(t, A, 10), 1);
	assert_int_equal(mds_slots_put(t, A, D1, 5, 10), 0);
	assert_int_equal(mds_slots_put(t, A, D1, 6, 10), -EAGAIN);
	assert_int_equal(mds_slots_room(t, A, 999), 0);
	assert_int_equal(mds_slots_room(t, A, 1000), 2); /* 1 and 3 went */
	assert_int_equal(mds_slots_room(t, A, 1010), 3);
	assert_int_equal(mds_slots_room(t, B, 1010), 3);
	assert_int_equal(mds_slots_count(t), 0);
	mds_slots_free(t);
}

static void test_bad_input(void **state)
{
	mds_slots *t = mds_slots_new(0, 0);

	assert_non_null(t);
	assert_int_equal(mds_slots_put(t, A, D1, 0, 0), -EINVAL);
	assert_int_equal(mds_slots_count(t), 0);
	assert_int_equal(mds_slots_room(t, A, 0), MDS_SLOTS_PER_CLIENT);
	assert_int_equal(mds_slots_take(t, A, D1, 0, 0), -ESTALE);

	assert_int_equal(mds_slots_put(t, A, D1, 5, 0), 0);
	assert_int_equal(mds_slots_put(t, A, D1, 5, 0), -EEXIST);
	assert_int_equal(mds_slots_put(t, B, D2, 5, 0), -EEXIST);
	assert_int_equal(mds_slots_count(t), 1);
	assert_int_equal(mds_slots_room(t, A, 0), MDS_SLOTS_PER_CLIENT - 1);
	assert_int_equal(mds_slots_room(t, B, 0), MDS_SLOTS_PER_CLIENT);
	assert_int_equal(mds_slots_take(t, B, D2, 5, 0), -ESTALE);
	assert_int_equal(mds_slots_take(t, A, D1, 5, 0), 0);
	assert_int_equal(mds_slots_count(t), 0);
	mds_slots_free(t);
}

/* Reference model: ino 1..NINO, each at most one live slot. */
#define NINO 48
#define NCLI 3
#define CAP 6
#define TTL 50

typedef struct mslot {
	int live;
	uint64_t client, dir, expiry;
} mslot;

static uint64_t xs(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static unsigned model_expire(mslot *m, uint64_t now)
{
	unsigned n = 0;

	for (int i = 1; i <= NINO; i++)
		if (m[i].live && m[i].expiry <= now) {
			m[i].live = 0;
			n++;
		}
	return n;
}

static unsigned model_held(const mslot *m, uint64_t client)
{
	unsigned n = 0;

	for (int i = 1; i <= NINO; i++)
		n += m[i].live && m[i].client == client;
	return n;
}

static void test_random_model(void **state)
{
	mds_slots *t = mds_slots_new(CAP, TTL);
	mslot m[NINO + 1] = { 0 };
	uint64_t seed = 0x9e3779b97f4a7c15ull, now = 0;
	unsigned ok_put = 0, ok_take = 0, expired = 0;

	for (int step = 0; step < 5000; step++) {
		uint64_t r = xs(&seed);
		uint64_t ino = 1 + (r >> 8) % NINO, client = 1 + (r >> 16) % NCLI;
		uint64_t dir = 1 + (r >> 24) % 2;
		unsigned op = (unsigned)(r % 10), held;
		int rc, want;

		now += (r >> 32) % 4; /* a monotonic clock, often standing */
		if (op < 5) {
			model_expire(m, now);
			held = model_held(m, client);
			want = held >= CAP ? -EAGAIN : m[ino].live ? -EEXIST : 0;
			rc = mds_slots_put(t, client, dir, ino, now);
			assert_int_equal(rc, want);
			if (!rc) {
				m[ino] = (mslot){ 1, client, dir, now + TTL };
				ok_put++;
			}
		} else if (op < 9) {
			/* half the takes aim at the slot's own client and dir */
			if (op < 7 && m[ino].live) {
				client = m[ino].client;
				dir = m[ino].dir;
			}
			model_expire(m, now);
			want = m[ino].live && m[ino].client == client && m[ino].dir == dir;
			rc = mds_slots_take(t, client, dir, ino, now);
			assert_int_equal(rc, want ? 0 : -ESTALE);
			if (want) {
				m[ino].live = 0;
				ok_take++;
			}
		} else if ((r >> 40) % 2) {
			unsigned n = model_expire(m, now);

			assert_int_equal(mds_slots_expire(t, now), n);
			expired += n;
		} else {
			model_expire(m, now);
			assert_int_equal(mds_slots_room(t, client, now),
					 CAP - model_held(m, client));
		}
		held = 0;
		for (int i = 1; i <= NINO; i++)
			held += m[i].live;
		assert_int_equal(mds_slots_count(t), held);
	}
	/* the walk went through every path, not just one */
	assert_true(ok_put > 500 && ok_take > 200 && expired > 20);
	mds_slots_free(t);
}

/* Tables freed with slots of 20 clients (2 each) in them, many times over:
 * a leaked table, slot or owner record would add up to megabytes, while
 * glibc's tcache (counted as in use by mallinfo2) holds a few KB at most.
 * Under ASan mallinfo2 does not see the heap: LeakSanitizer checks at exit. */
static void test_free_nonempty(void **state)
{
	struct mallinfo2 before, after;

	mds_slots_free(NULL);
	before = mallinfo2();
	for (int round = 0; round < 1000; round++) {
		mds_slots *t = mds_slots_new(0, 0);

		assert_non_null(t);
		for (uint64_t ino = 1; ino <= 40; ino++)
			assert_int_equal(mds_slots_put(t, 1 + ino % 20, D1, ino, ino), 0);
		assert_int_equal(mds_slots_count(t), 40);
		mds_slots_free(t);
	}
	after = mallinfo2();
	assert_true(after.uordblks < before.uordblks + (256u << 10));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_put_take),
		cmocka_unit_test(test_wrong_taker),
		cmocka_unit_test(test_expiry),
		cmocka_unit_test(test_cap),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_random_model),
		cmocka_unit_test(test_free_nonempty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
