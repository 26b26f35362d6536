/* test_qos_coupon.c — GIFT coupon table: windows, partial and multiple
 * redemption, system reset, regret settlement within the budget. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qos/coupon.h"

#define EPS 1e-12

static qos_coupon_table *mk(unsigned N, double tau)
{
	qos_coupon_table *t = NULL;
	assert_int_equal(qos_coupon_table_create(N, tau, &t), 0);
	assert_non_null(t);
	return t;
}

static void test_coupon_create_invalid(void **st)
{
	qos_coupon_table *t = (qos_coupon_table *)1;
	(void)st;
	assert_int_equal(qos_coupon_table_create(0, 0.8, &t), -EINVAL);
	assert_null(t);
	assert_int_equal(qos_coupon_table_create(10, 1.5, &t), -EINVAL);
	assert_int_equal(qos_coupon_table_create(10, -0.1, &t), -EINVAL);
}

static void test_coupon_new_job_is_friendly(void **st)
{
	qos_coupon_table *t = mk(10, 0.8);
	qos_coupon_job_info info;
	(void)st;
	/* no history: empty slots count as redeemed */
	assert_true(qos_coupon_rate(t, "A") == 1.0);
	assert_true(qos_coupon_system_rate(t) == 1.0);
	assert_true(qos_coupon_friendly(t, "A"));
	assert_true(qos_coupon_outstanding(t, "A") == 0.0);
	assert_int_equal(qos_coupon_job_get(t, "A", &info), -ENOENT);
	assert_true(qos_coupon_redeem(t, "A", 1.0) == 0.0);
	assert_int_equal(qos_coupon_issue(t, "A", 0.0, 0, 0), -EINVAL);
	assert_int_equal(qos_coupon_issue(t, "A", -1.0, 0, 0), -EINVAL);
	qos_coupon_table_destroy(t);
}

static void test_coupon_rate_falls_until_tau(void **st)
{
	qos_coupon_table *t = mk(10, 0.8);
	int issued = 0;
	(void)st;
	/* sec. 3.2: issue only while c_i >= tau; with N = 10, tau = 0.8
	 * that is three unredeemed coupons (1.0, 0.9, 0.8 -> 0.7). */
	for (int k = 0; k < 10; k++)
		if (qos_coupon_friendly(t, "A")) {
			assert_int_equal(qos_coupon_issue(t, "A", 0.1, k, 0), 0);
			issued++;
		}
	assert_int_equal(issued, 3);
	assert_float_equal(qos_coupon_rate(t, "A"), 0.7, EPS);
	assert_float_equal(qos_coupon_outstanding(t, "A"), 0.3, EPS);
	/* Another job is not friendly either: the system window is at 0.7. */
	assert_float_equal(qos_coupon_system_rate(t), 0.7, EPS);
	assert_false(qos_coupon_friendly(t, "B"));
	assert_true(qos_coupon_rate(t, "B") == 1.0);
	qos_coupon_table_destroy(t);
}

static void test_coupon_partial_redemption(void **st)
{
	qos_coupon_table *t = mk(4, 0.8);
	qos_coupon_job_info info;
	(void)st;
	/* Fig. 6: a coupon worth 0.15, then 1/12 redeemed, then the rest */
	assert_int_equal(qos_coupon_issue(t, "A", 0.15, 0, 0), 0);
	assert_float_equal(qos_coupon_rate(t, "A"), 0.75, EPS);
	assert_float_equal(qos_coupon_redeem(t, "A", 1.0 / 12), 1.0 / 12, EPS);
	assert_float_equal(qos_coupon_outstanding(t, "A"), 0.15 - 1.0 / 12, EPS);
	assert_float_equal(qos_coupon_rate(t, "A"), (3 + (1.0 / 12) / 0.15) / 4, EPS);
	/* asking for more than is owed redeems only what is owed */
	assert_float_equal(qos_coupon_redeem(t, "A", 1.0 / 12), 0.15 - 1.0 / 12, EPS);
	assert_true(qos_coupon_outstanding(t, "A") == 0.0);
	assert_float_equal(qos_coupon_rate(t, "A"), 1.0, EPS);
	assert_true(qos_coupon_redeem(t, "A", 1.0) == 0.0);
	assert_int_equal(qos_coupon_job_get(t, "A", &info), 0);
	assert_float_equal(info.issued, 0.15, EPS);
	assert_float_equal(info.redeemed, 0.15, EPS);
	assert_int_equal(info.n_coupons, 1);
	qos_coupon_table_destroy(t);
}

static void test_coupon_multiple_redemption(void **st)
{
	qos_coupon_table *t = mk(4, 0.5);
	(void)st;
	assert_int_equal(qos_coupon_issue(t, "A", 0.1, 0, 0), 0);
	assert_int_equal(qos_coupon_issue(t, "A", 0.2, 1, 0), 0);
	/* one redemption pays the first coupon and half the second */
	assert_float_equal(qos_coupon_redeem(t, "A", 0.2), 0.2, EPS);
	assert_float_equal(qos_coupon_outstanding(t, "A"), 0.1, EPS);
	assert_float_equal(qos_coupon_rate(t, "A"), (2 + 1.0 + 0.5) / 4, EPS);
	qos_coupon_table_destroy(t);
}

static void test_coupon_window_recedes(void **st)
{
	qos_coupon_table *t = mk(2, 0.0);
	(void)st;
	assert_int_equal(qos_coupon_issue(t, "A", 1.0, 0, 0), 0);
	assert_int_equal(qos_coupon_issue(t, "A", 1.0, 1, 0), 0);
	assert_int_equal(qos_coupon_issue(t, "A", 1.0, 2, 0), 0);
	assert_float_equal(qos_coupon_rate(t, "A"), 0.0, EPS);
	/* Redemption is oldest first: the first coupon left the window, so
	 * paying it back does not move the rate of the last N. */
	assert_float_equal(qos_coupon_redeem(t, "A", 1.0), 1.0, EPS);
	assert_float_equal(qos_coupon_rate(t, "A"), 0.0, EPS);
	assert_float_equal(qos_coupon_redeem(t, "A", 1.0), 1.0, EPS);
	assert_float_equal(qos_coupon_rate(t, "A"), 0.5, EPS);
	assert_float_equal(qos_coupon_outstanding(t, "A"), 1.0, EPS);
	qos_coupon_table_destroy(t);
}

static void test_coupon_system_reset_at_assessment(void **st)
{
	qos_coupon_table *t = mk(4, 0.8);
	double paid = -1;
	(void)st;
	assert_int_equal(qos_coupon_issue(t, "A", 0.1, 0, 0), 0);
	assert_int_equal(qos_coupon_issue(t, "B", 0.1, 0, 0), 0);
	assert_float_equal(qos_coupon_system_rate(t), 0.5, EPS);
	assert_false(qos_coupon_friendly(t, "C"));
	/* too young to settle, but the system window is reset anyway */
	qos_coupon_assess(t, 10, 100, 1000, &paid);
	assert_true(paid == 0.0);
	assert_true(qos_coupon_system_rate(t) == 1.0);
	assert_true(qos_coupon_friendly(t, "C"));
	/* job windows are not reset */
	assert_float_equal(qos_coupon_rate(t, "A"), 0.75, EPS);
	assert_float_equal(qos_coupon_outstanding(t, "A"), 0.1, EPS);
	qos_coupon_table_destroy(t);
}

static void test_coupon_regret_budget_bounds_awards(void **st)
{
	qos_coupon_table *t = mk(8, 0.0);
	qos_coupon_job_info ia, ib;
	double paid;
	(void)st;
	/* 3600 node-seconds per unit of worth: 0.5 worth = 0.5 node-hours */
	assert_int_equal(qos_coupon_issue(t, "A", 0.5, 0, 3600), 0);
	assert_int_equal(qos_coupon_issue(t, "B", 0.4, 0, 3600), 0);
	assert_int_equal(qos_coupon_issue(t, "B", 1.0, 150, 3600), 0);
	assert_float_equal(qos_coupon_redeem(t, "B", 0.1), 0.1, EPS);
	assert_float_equal(qos_coupon_liability(t), 0.5 + 0.3 + 1.0, EPS);
	/* settle coupons issued at or before 200 - 100: A's 0.5 and B's
	 * unredeemed 0.3, with a budget of 0.6 node-hours */
	qos_coupon_assess(t, 200, 100, 0.6, &paid);
	assert_float_equal(paid, 0.6, EPS);
	assert_float_equal(qos_coupon_awarded_total(t), 0.6, EPS);
	assert_int_equal(qos_coupon_job_get(t, "A", &ia), 0);
	assert_int_equal(qos_coupon_job_get(t, "B", &ib), 0);
	assert_float_equal(ia.awarded_nh, 0.5, EPS);
	assert_float_equal(ib.awarded_nh, 0.1, EPS);
	assert_float_equal(ib.owed_nh, 0.2, EPS);
	assert_float_equal(ia.outstanding, 0.0, EPS);
	assert_float_equal(ib.outstanding, 1.0, EPS);  /* the young coupon */
	/* settled coupons stay unredeemed in the window */
	assert_float_equal(qos_coupon_rate(t, "A"), 7.0 / 8, EPS);
	/* budget exhausted: nothing more is paid, even though more is owed */
	qos_coupon_assess(t, 300, 100, 0.6, &paid);
	assert_true(paid == 0.0);
	assert_float_equal(qos_coupon_awarded_total(t), 0.6, EPS);
	assert_float_equal(qos_coupon_liability(t), 0.2 + 1.0, EPS);
	/* a larger budget pays what is owed, never more than the budget */
	qos_coupon_assess(t, 400, 100, 1.0, &paid);
	assert_float_equal(paid, 0.4, EPS);
	assert_float_equal(qos_coupon_awarded_total(t), 1.0, EPS);
	assert_int_equal(qos_coupon_job_get(t, "B", &ib), 0);
	assert_float_equal(ib.owed_nh, 0.8, EPS);
	qos_coupon_table_destroy(t);
}

static void test_coupon_many_jobs_and_coupons(void **st)
{
	qos_coupon_table *t = mk(3, 0.0);
	char id[32];
	(void)st;
	/* exercises hash growth, ring wrap-around and pool reuse */
	for (int k = 0; k < 50; k++)
		for (int j = 0; j < 200; j++) {
			snprintf(id, sizeof(id), "job-%d", j);
			assert_int_equal(qos_coupon_issue(t, id, 1.0, k, 1), 0);
			if (k % 2)
				assert_float_equal(qos_coupon_redeem(t, id, 1.5), 1.5, EPS);
		}
	assert_int_equal(qos_coupon_njobs(t), 200);
	/* each job: 50 coupons issued, 25 * 1.5 = 37.5 redeemed */
	assert_float_equal(qos_coupon_outstanding(t, "job-7"), 12.5, 1e-9);
	qos_coupon_assess(t, 1000, 0, 1e9, NULL);
	assert_true(qos_coupon_outstanding(t, "job-7") == 0.0);
	assert_float_equal(qos_coupon_awarded_total(t), 200 * 12.5 / 3600, 1e-9);
	qos_coupon_table_destroy(t);
}

/* ---- persistence ---- */

/* Everything a caller can observe about job id in t and u is the same. */
static void same_job(const qos_coupon_table *t, const qos_coupon_table *u, const char *id)
{
	qos_coupon_job_info a, b;
	int ra = qos_coupon_job_get(t, id, &a), rb = qos_coupon_job_get(u, id, &b);
	assert_int_equal(ra, rb);
	assert_true(qos_coupon_rate(t, id) == qos_coupon_rate(u, id));
	assert_true(qos_coupon_outstanding(t, id) == qos_coupon_outstanding(u, id));
	assert_int_equal(qos_coupon_friendly(t, id), qos_coupon_friendly(u, id));
	if (ra)
		return;
	assert_true(a.rate == b.rate);
	assert_true(a.outstanding == b.outstanding);
	assert_true(a.issued == b.issued);
	assert_true(a.redeemed == b.redeemed);
	assert_true(a.owed_nh == b.owed_nh);
	assert_true(a.awarded_nh == b.awarded_nh);
	assert_int_equal(a.n_coupons, b.n_coupons);
}

static void same_table(const qos_coupon_table *t, const qos_coupon_table *u, int njobs)
{
	char id[32];
	assert_int_equal(qos_coupon_njobs(t), qos_coupon_njobs(u));
	assert_true(qos_coupon_system_rate(t) == qos_coupon_system_rate(u));
	assert_true(qos_coupon_awarded_total(t) == qos_coupon_awarded_total(u));
	assert_float_equal(qos_coupon_liability(t), qos_coupon_liability(u), 1e-12);
	for (int j = 0; j < njobs; j++) {
		snprintf(id, sizeof(id), "job-%d", j);
		same_job(t, u, id);
	}
}

/* Issue, redeem partly, settle some, wrap windows: a table with every kind
 * of coupon state (queued, partly redeemed, fully redeemed but windowed,
 * settled, freed and reused). */
static qos_coupon_table *busy_table(void)
{
	qos_coupon_table *t = mk(4, 0.5);
	char id[32];
	for (int k = 0; k < 9; k++)
		for (int j = 0; j < 5; j++) {
			snprintf(id, sizeof(id), "job-%d", j);
			assert_int_equal(qos_coupon_issue(t, id, 0.1 * (j + 1), k, 7.0 * j), 0);
			if ((k + j) % 3 == 0)
				qos_coupon_redeem(t, id, 0.05 * (k + 1));
			if (k == 5)
				qos_coupon_assess(t, k, 2, 0.001, NULL);
		}
	return t;
}

/* Apply the same further operations to both tables. */
static void same_future(qos_coupon_table *t, qos_coupon_table *u)
{
	char id[32];
	for (int k = 10; k < 14; k++)
		for (int j = 0; j < 6; j++) {
			snprintf(id, sizeof(id), "job-%d", j);
			assert_int_equal(qos_coupon_issue(t, id, 0.2, k, 1), 0);
			assert_int_equal(qos_coupon_issue(u, id, 0.2, k, 1), 0);
			assert_true(qos_coupon_redeem(t, id, 0.3) == qos_coupon_redeem(u, id, 0.3));
		}
	qos_coupon_assess(t, 20, 5, 1e6, NULL);
	qos_coupon_assess(u, 20, 5, 1e6, NULL);
	same_table(t, u, 7);
}

static void test_coupon_save_load_round_trip(void **st)
{
	qos_coupon_table *t = busy_table(), *u = NULL;
	uint8_t *buf = NULL, *buf2 = NULL;
	size_t len = 0, len2 = 0;
	(void)st;
	assert_int_equal(qos_coupon_table_save(t, &buf, &len), 0);
	assert_non_null(buf);
	assert_int_equal(qos_coupon_table_load(buf, len, &u), 0);
	same_table(t, u, 7);
	/* a loaded table saves to the same bytes */
	assert_int_equal(qos_coupon_table_save(u, &buf2, &len2), 0);
	assert_int_equal(len, len2);
	assert_memory_equal(buf, buf2, len);
	/* and behaves the same from now on */
	same_future(t, u);
	free(buf);
	free(buf2);
	qos_coupon_table_destroy(t);
	qos_coupon_table_destroy(u);

	/* an empty table */
	t = mk(10, 0.8);
	assert_int_equal(qos_coupon_table_save(t, &buf, &len), 0);
	assert_int_equal(qos_coupon_table_load(buf, len, &u), 0);
	same_table(t, u, 1);
	assert_true(qos_coupon_system_rate(u) == 1.0);
	free(buf);
	qos_coupon_table_destroy(t);
	qos_coupon_table_destroy(u);
}

static void test_coupon_load_shorter_window(void **st)
{
	qos_coupon_table *t = mk(4, 0.5), *u = NULL;
	uint8_t *buf = NULL;
	size_t len = 0;
	(void)st;
	/* A's window after the fifth coupon pushed out the first (fully
	 * redeemed) one, oldest first: 0.5, 0, 0, 0 */
	for (int k = 0; k < 4; k++)
		assert_int_equal(qos_coupon_issue(t, "A", 1.0, k, 0), 0);
	assert_float_equal(qos_coupon_redeem(t, "A", 1.5), 1.5, EPS);
	assert_int_equal(qos_coupon_issue(t, "A", 1.0, 5, 0), 0);
	assert_float_equal(qos_coupon_rate(t, "A"), 0.5 / 4, EPS);
	assert_int_equal(qos_coupon_table_save(t, &buf, &len), 0);
	/* N = 2 keeps the two newest, both unredeemed */
	assert_int_equal(qos_coupon_table_load_with(buf, len, 2, 0.9, &u), 0);
	assert_float_equal(qos_coupon_rate(u, "A"), 0.0, EPS);
	assert_float_equal(qos_coupon_outstanding(u, "A"), qos_coupon_outstanding(t, "A"), EPS);
	assert_false(qos_coupon_friendly(u, "B"));
	/* freed pool slots are reused without harm */
	for (int k = 0; k < 20; k++)
		assert_int_equal(qos_coupon_issue(u, "B", 1.0, 10 + k, 0), 0);
	assert_float_equal(qos_coupon_outstanding(u, "B"), 20.0, EPS);
	qos_coupon_table_destroy(u);
	/* a bad override is -EINVAL */
	assert_int_equal(qos_coupon_table_load_with(buf, len, 0, 1.5, &u), -EINVAL);
	assert_null(u);
	free(buf);
	qos_coupon_table_destroy(t);
}

static uint32_t crc32_ref(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffffu;
	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
	}
	return ~c;
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Patch bytes of a copy, fix its checksum, expect load to refuse it. */
static void refuse_patched(const uint8_t *buf, size_t len, size_t off, const void *val,
			   size_t n)
{
	uint8_t *c = malloc(len);
	qos_coupon_table *u = (qos_coupon_table *)1;
	assert_non_null(c);
	memcpy(c, buf, len);
	memcpy(c + off, val, n);
	put32(c + len - 4, crc32_ref(c, len - 4));
	assert_int_equal(qos_coupon_table_load(c, len, &u), -EBADMSG);
	assert_null(u);
	free(c);
}

static void test_coupon_load_refuses_corrupt(void **st)
{
	qos_coupon_table *t = busy_table(), *u = (qos_coupon_table *)1;
	uint8_t *buf = NULL, *c, v[8];
	size_t len = 0;
	double d;
	(void)st;
	assert_int_equal(qos_coupon_table_save(t, &buf, &len), 0);
	assert_int_equal(crc32_ref(buf, len - 4),
			 (uint32_t)buf[len - 4] | (uint32_t)buf[len - 3] << 8 |
			 (uint32_t)buf[len - 2] << 16 | (uint32_t)buf[len - 1] << 24);
	assert_int_equal(qos_coupon_table_load(NULL, 0, &u), -EBADMSG);
	assert_null(u);
	/* every truncation */
	for (size_t n = 0; n < len; n++)
		assert_int_equal(qos_coupon_table_load(buf, n, &u), -EBADMSG);
	/* every single-byte change (the checksum catches it) */
	c = malloc(len + 1);
	assert_non_null(c);
	memcpy(c, buf, len);
	for (size_t i = 0; i < len; i++) {
		c[i] ^= 0x5a;
		assert_int_equal(qos_coupon_table_load(c, len, &u), -EBADMSG);
		c[i] ^= 0x5a;
	}
	/* trailing byte */
	c[len] = 0;
	assert_int_equal(qos_coupon_table_load(c, len + 1, &u), -EBADMSG);
	free(c);
	/* well-checksummed but wrong: version, N, tau, counts, values, refs.
	 * Layout: 0 magic, 4 version, 8 N, 12 tau, 20 awarded, 28 ncoup,
	 * 32 first coupon {value, redeemed, issued_at, ns_per_worth, job,
	 * settled}. */
	put32(v, 2);
	refuse_patched(buf, len, 4, v, 4);
	put32(v, 0);
	refuse_patched(buf, len, 8, v, 4);
	d = 1.5;
	refuse_patched(buf, len, 12, &d, 8);
	d = -1.0;
	refuse_patched(buf, len, 20, &d, 8);
	put32(v, 0xffffffffu);
	refuse_patched(buf, len, 28, v, 4);
	d = NAN;
	refuse_patched(buf, len, 32, &d, 8);
	d = 0.0;
	refuse_patched(buf, len, 32, &d, 8);
	d = 1e9;                                 /* redeemed > value */
	refuse_patched(buf, len, 40, &d, 8);
	d = INFINITY;
	refuse_patched(buf, len, 48, &d, 8);
	put32(v, 9999);                          /* unknown job */
	refuse_patched(buf, len, 64, v, 4);
	put32(v, 1);                             /* in job-0's window, says job-1 */
	refuse_patched(buf, len, 64, v, 4);
	v[0] = 2;                                /* settled is 0 or 1 */
	refuse_patched(buf, len, 68, v, 1);
	free(buf);
	qos_coupon_table_destroy(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_coupon_create_invalid),
		cmocka_unit_test(test_coupon_new_job_is_friendly),
		cmocka_unit_test(test_coupon_rate_falls_until_tau),
		cmocka_unit_test(test_coupon_partial_redemption),
		cmocka_unit_test(test_coupon_multiple_redemption),
		cmocka_unit_test(test_coupon_window_recedes),
		cmocka_unit_test(test_coupon_system_reset_at_assessment),
		cmocka_unit_test(test_coupon_regret_budget_bounds_awards),
		cmocka_unit_test(test_coupon_many_jobs_and_coupons),
		cmocka_unit_test(test_coupon_save_load_round_trip),
		cmocka_unit_test(test_coupon_load_shorter_window),
		cmocka_unit_test(test_coupon_load_refuses_corrupt),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
