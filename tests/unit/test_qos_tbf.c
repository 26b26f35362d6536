/* test_qos_tbf.c — NRS TBF scheduler: rates held within 1% over simulated
 * seconds, work-conserving mode, fallback queue, rule matching, rule
 * change/rerank/stop at run time, class garbage collection. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "qos/tbf.h"

#define NJOB 4
static const char *const job_names[NJOB] = { "A", "B", "C", "X" };
static int job_tag[NJOB]; /* request pointers point here: &job_tag[j] */

static int job_of(void *req)
{
	return (int)((int *)req - job_tag);
}

static void add_rule(qos_tbf *t, const char *name, const char *pat,
		     double rate, int rank)
{
	qos_tbf_rule_spec s = { .name = name, .jobid = pat, .rate = rate,
				.rank = rank };
	assert_int_equal(qos_tbf_rule_add(t, &s, 0), 0);
}

/* Closed-loop simulation: every job in `active` keeps `backlog` requests
 * queued; one server serves one request every `service` seconds; runs
 * from t0 to t1 and adds per-job completions to served[]. */
static void simulate(qos_tbf *t, const int *active, int backlog,
		     double service, double t0, double t1, long *served)
{
	double now = t0;

	for (int j = 0; j < NJOB; j++)
		if (active[j])
			for (int k = 0; k < backlog; k++)
				assert_int_equal(qos_tbf_enqueue(t, job_names[j],
					QOS_TBF_OPC_ANY, &job_tag[j], 1, now), 0);
	while (now < t1) {
		void *req;
		double wait;
		int rc = qos_tbf_dequeue(t, now, &req, &wait);
		if (rc == 0) {
			int j = job_of(req);
			served[j]++;
			now += service;
			assert_int_equal(qos_tbf_enqueue(t, job_names[j],
				QOS_TBF_OPC_ANY, &job_tag[j], 1, now), 0);
			continue;
		}
		assert_int_equal(rc, -EAGAIN);
		assert_true(wait > 0 && isfinite(wait));
		now += wait;
	}
	/* take the closed loop's requests back out */
	void *req;
	while (qos_tbf_drain(t, &req) == 0)
		;
	assert_int_equal(qos_tbf_queued(t), 0);
}

static void assert_near(double got, double want, double rel)
{
	if (fabs(got - want) > rel * want) {
		fprintf(stderr, "got %.3f want %.3f (+-%.1f%%)\n", got, want,
			rel * 100);
		fail();
	}
}

static void test_tbf_rates_held_within_1pct(void **state)
{
	qos_tbf *t;
	long served[NJOB] = { 0 };
	const int active[NJOB] = { 1, 1, 1, 0 };
	const double rate[3] = { 100, 250, 1000 };

	(void)state;
	assert_int_equal(qos_tbf_create(&t), 0);
	add_rule(t, "a", "A", rate[0], 0);
	add_rule(t, "b", "B", rate[1], 0);
	add_rule(t, "c", "C", rate[2], 0);
	/* server far faster than the sum of the rates (10k/s vs 1350/s) */
	simulate(t, active, 8, 1e-4, 0, 10.0, served);
	for (int j = 0; j < 3; j++)
		assert_near((double)served[j], rate[j] * 10.0, 0.01);
	qos_tbf_destroy(t);
}

static void test_tbf_not_work_conserving_leaves_idle(void **state)
{
	qos_tbf *t;
	long served[NJOB] = { 0 };
	const int active[NJOB] = { 1, 1, 0, 0 };

	(void)state;
	assert_int_equal(qos_tbf_create(&t), 0);
	add_rule(t, "a", "A", 100, 0);
	add_rule(t, "b", "B", 300, 0);
	simulate(t, active, 4, 1e-3, 0, 10.0, served);
	assert_near((double)served[0], 1000, 0.01);
	assert_near((double)served[1], 3000, 0.01);
	qos_tbf_destroy(t);
}

static void test_tbf_work_conserving_uses_idle_capacity(void **state)
{
	qos_tbf *t;
	long served[NJOB] = { 0 };
	const int active[NJOB] = { 1, 1, 0, 0 };

	(void)state;
	assert_int_equal(qos_tbf_create(&t), 0);
	qos_tbf_set_work_conserving(t, 1);
	add_rule(t, "a", "A", 100, 0);
	add_rule(t, "b", "B", 300, 0);
	/* capacity 1000/s: everything is used, nobody below its rate */
	simulate(t, active, 4, 1e-3, 0, 10.0, served);
	assert_near((double)(served[0] + served[1]), 10000, 0.001);
	assert_true(served[0] >= 990);
	assert_true(served[1] >= 2970);
	/* idle capacity goes to the nearest deadline, which is more often
	 * the faster class: B gets more of the surplus than A */
	assert_true(served[1] - 3000 > served[0] - 1000);
	qos_tbf_destroy(t);
}

static void test_tbf_fallback_unlimited(void **state)
{
	qos_tbf *t;
	long served[NJOB] = { 0 };
	const int active[NJOB] = { 1, 0, 0, 1 };

	(void)state;
	assert_int_equal(qos_tbf_create(&t), 0);
	add_rule(t, "a", "A", 50, 0);
	/* X matches no rule: fallback, served whenever A is not ready */
	assert_int_equal(qos_tbf_enqueue(t, "X", 0, &job_tag[3], 1, 0), 0);
	assert_int_equal(qos_tbf_fallback_queued(t), 1);
	void *req;
	assert_int_equal(qos_tbf_drain(t, &req), 0);
	assert_ptr_equal(req, &job_tag[3]);
	simulate(t, active, 4, 1e-3, 0, 10.0, served);
	assert_near((double)served[0], 500, 0.01);
	assert_near((double)served[3], 9500, 0.01);
	qos_tbf_destroy(t);
}

static void test_tbf_rule_change_at_run_time(void **state)
{
	qos_tbf *t;
	long s1[NJOB] = { 0 }, s2[NJOB] = { 0 };
	const int active[NJOB] = { 1, 1, 0, 0 };

	(void)state;
	assert_int_equal(qos_tbf_create(&t), 0);
	add_rule(t, "a", "A", 100, 0);
	add_rule(t, "b", "B", 200, 0);
	simulate(t, active, 4, 1e-4, 0, 5.0, s1);
	assert_int_equal(qos_tbf_rule_change(t, "a", 400, 0, 5.0), 0);
	assert_int_equal(qos_tbf_rule_change(t, "nope", 1, 0, 5.0), -ENOENT);
	assert_int_equal(qos_tbf_rule_change(t, "a", -1, 0, 5.0), -EINVAL);
	simulate(t, active, 4, 1e-4, 5.0, 10.0, s2);
	assert_near((double)s1[0], 500, 0.01);
	assert_near((double)s2[0], 2000, 0.01);
	assert_near((double)(s1[1] + s2[1]), 2000, 0.01);
	qos_tbf_destroy(t);
}

static void test_tbf_rule_stop_moves_requests(void **state)
{
	qos_tbf *t;
	void *req;

	(void)state;
	assert_int_equal(qos_tbf_create(&t), 0);
	add_rule(t, "a", "A", 10, 0);
	add_rule(t, "all", "*", 5, 10);
	int tags[6];
	for (int i = 0; i < 6; i++)
		assert_int_equal(qos_tbf_enqueue(t, "A", QOS_TBF_OPC_ANY,
						 &tags[i], 1, 0), 0);
	assert_int_equal(qos_tbf_class_queued(t, "a", "A"), 6);
	/* stop the exact rule: A's requests go to the next matching rule */
	assert_int_equal(qos_tbf_rule_stop(t, "a", 1.0), 0);
	assert_int_equal(qos_tbf_rule_stop(t, "a", 1.0), -ENOENT);
	assert_int_equal(qos_tbf_class_queued(t, "all", "A"), 6);
	assert_int_equal(qos_tbf_rule_count(t), 1);
	/* stop the last rule: they go to the fallback, in order */
	assert_int_equal(qos_tbf_rule_stop(t, "all", 1.0), 0);
	assert_int_equal(qos_tbf_fallback_queued(t), 6);
	assert_int_equal(qos_tbf_class_count(t), 0);
	for (int i = 0; i < 6; i++) {
		assert_int_equal(qos_tbf_dequeue(t, 1.0, &req, NULL), 0);
		assert_ptr_equal(req, &tags[i]);
	}
	double wait = 0;
	assert_int_equal(qos_tbf_dequeue(t, 1.0, &req, &wait), -ENOENT);
	assert_true(isinf(wait));
	qos_tbf_destroy(t);
}

static void test_tbf_matching_rank_wildcard_opcode(void **state)
{
	qos_tbf *t;
	int r1, r2, r3, r4;

	(void)state;
	assert_int_equal(qos_tbf_create(&t), 0);
	add_rule(t, "dd", "dd*", 10, 5);
	add_rule(t, "ddx", "ddx", 10, 1);
	qos_tbf_rule_spec s = { .name = "wr", .jobid = "*", .opc_mask = 1u << 3,
				.rate = 10, .rank = 9 };
	assert_int_equal(qos_tbf_rule_add(t, &s, 0), 0);
	assert_int_equal(qos_tbf_rule_add(t, &s, 0), -EEXIST);
	assert_int_equal(qos_tbf_enqueue(t, "ddx", 0, &r1, 1, 0), 0);
	assert_int_equal(qos_tbf_enqueue(t, "ddy", 0, &r2, 1, 0), 0);
	assert_int_equal(qos_tbf_enqueue(t, "zz", 3, &r3, 1, 0), 0);
	assert_int_equal(qos_tbf_enqueue(t, "zz", 2, &r4, 1, 0), 0);
	assert_int_equal(qos_tbf_class_queued(t, "ddx", "ddx"), 1);
	assert_int_equal(qos_tbf_class_queued(t, "dd", "ddy"), 1);
	assert_int_equal(qos_tbf_class_queued(t, "dd", "ddx"), 0);
	assert_int_equal(qos_tbf_class_queued(t, "wr", "zz"), 1);
	assert_int_equal(qos_tbf_fallback_queued(t), 1);
	/* rerank: "dd*" now before "ddx", so ddx goes to the prefix rule */
	assert_int_equal(qos_tbf_rule_rerank(t, "dd", 0), 0);
	assert_int_equal(qos_tbf_rule_rerank(t, "none", 0), -ENOENT);
	assert_int_equal(qos_tbf_enqueue(t, "ddx", 0, &r1, 1, 0), 0);
	assert_int_equal(qos_tbf_class_queued(t, "dd", "ddx"), 1);
	assert_int_equal(qos_tbf_queued(t), 5);
	void *req;
	while (qos_tbf_drain(t, &req) == 0)
		;
	qos_tbf_destroy(t);
}

static void test_tbf_deadline_and_rank_tiebreak(void **state)
{
	qos_tbf *t;
	int a[3], b[3];
	void *req;
	double wait;

	(void)state;
	assert_int_equal(qos_tbf_create(&t), 0);
	qos_tbf_rule_spec sa = { .name = "a", .jobid = "A", .rate = 10,
				 .depth = 1, .rank = 2 };
	qos_tbf_rule_spec sb = { .name = "b", .jobid = "B", .rate = 10,
				 .depth = 1, .rank = 1 };
	assert_int_equal(qos_tbf_rule_add(t, &sa, 0), 0);
	assert_int_equal(qos_tbf_rule_add(t, &sb, 0), 0);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(qos_tbf_enqueue(t, "A", 0, &a[i], 1, 0), 0);
		assert_int_equal(qos_tbf_enqueue(t, "B", 0, &b[i], 1, 0), 0);
	}
	/* both ready at 0: the better rank (B) first */
	assert_int_equal(qos_tbf_dequeue(t, 0, &req, &wait), 0);
	assert_ptr_equal(req, &b[0]);
	assert_int_equal(qos_tbf_dequeue(t, 0, &req, &wait), 0);
	assert_ptr_equal(req, &a[0]);
	/* next tokens in 1/10 s */
	assert_int_equal(qos_tbf_dequeue(t, 0, &req, &wait), -EAGAIN);
	assert_true(fabs(wait - 0.1) < 1e-12);
	assert_int_equal(qos_tbf_dequeue(t, 0.1, &req, &wait), 0);
	assert_ptr_equal(req, &b[1]);
	while (qos_tbf_drain(t, &req) == 0)
		;
	qos_tbf_destroy(t);
}

static void test_tbf_gc_frees_idle_classes(void **state)
{
	qos_tbf *t;
	int r;
	void *req;

	(void)state;
	assert_int_equal(qos_tbf_create(&t), 0);
	add_rule(t, "all", "*", 10, 0); /* depth 3 */
	assert_int_equal(qos_tbf_enqueue(t, "J1", 0, &r, 1, 0), 0);
	assert_int_equal(qos_tbf_enqueue(t, "J2", 0, &r, 1, 0), 0);
	assert_int_equal(qos_tbf_class_count(t), 2);
	assert_int_equal(qos_tbf_dequeue(t, 0, &req, NULL), 0);
	assert_int_equal(qos_tbf_dequeue(t, 0, &req, NULL), 0);
	/* buckets at 2 of 3 tokens: refilled after 0.1 s, not before */
	assert_int_equal(qos_tbf_gc(t, 0.05), 0);
	assert_int_equal(qos_tbf_class_count(t), 2);
	assert_int_equal(qos_tbf_gc(t, 0.1), 2);
	assert_int_equal(qos_tbf_class_count(t), 0);
	qos_tbf_destroy(t);
}

static void test_tbf_enqueue_invalid(void **state)
{
	qos_tbf *t;
	int r;
	char longid[QOS_TBF_ID_MAX + 1];

	(void)state;
	memset(longid, 'j', sizeof(longid) - 1);
	longid[sizeof(longid) - 1] = 0;
	assert_int_equal(qos_tbf_create(&t), 0);
	assert_int_equal(qos_tbf_enqueue(t, "A", 0, NULL, 1, 0), -EINVAL);
	assert_int_equal(qos_tbf_enqueue(t, "A", 0, &r, 0, 0), -EINVAL);
	assert_int_equal(qos_tbf_enqueue(t, "A", 32, &r, 1, 0), -EINVAL);
	assert_int_equal(qos_tbf_enqueue(t, longid, 0, &r, 1, 0), -EINVAL);
	qos_tbf_rule_spec s = { .name = "x", .jobid = "", .rate = 1 };
	assert_int_equal(qos_tbf_rule_add(t, &s, 0), -EINVAL);
	s.jobid = "A";
	s.rate = -1;
	assert_int_equal(qos_tbf_rule_add(t, &s, 0), -EINVAL);
	assert_int_equal(qos_tbf_queued(t), 0);
	qos_tbf_destroy(t);
}

static void test_tbf_wildcard_limits_each_job(void **state)
{
	qos_tbf *t;
	long served[NJOB] = { 0 };
	const int active[NJOB] = { 1, 1, 1, 0 };

	(void)state;
	assert_int_equal(qos_tbf_create(&t), 0);
	/* one rule, three jobs: each job gets its own class at 200/s */
	add_rule(t, "all", "*", 200, 0);
	simulate(t, active, 4, 1e-4, 0, 10.0, served);
	for (int j = 0; j < 3; j++)
		assert_near((double)served[j], 2000, 0.01);
	assert_int_equal(qos_tbf_class_count(t), 3);
	qos_tbf_destroy(t);
}

static void test_tbf_byte_rate_with_mixed_sizes(void **state)
{
	qos_tbf *t;
	static int small, big;
	double now = 0, bytes = 0;
	void *req;
	double wait;

	(void)state;
	assert_int_equal(qos_tbf_create(&t), 0);
	/* 10 MiB/s, a 1 MiB bucket; requests of 64 KiB and 4 MiB (larger
	 * than the bucket is allowed: it runs into debt) */
	qos_tbf_rule_spec s = { .name = "a", .jobid = "A", .rate = 10 << 20,
				.depth = 1 << 20 };
	assert_int_equal(qos_tbf_rule_add(t, &s, 0), 0);
	for (int k = 0; k < 4; k++) {
		assert_int_equal(qos_tbf_enqueue(t, "A", 0, &small, 64 << 10, 0), 0);
		assert_int_equal(qos_tbf_enqueue(t, "A", 0, &big, 4 << 20, 0), 0);
	}
	while (now < 20.0) {
		int rc = qos_tbf_dequeue(t, now, &req, &wait);
		if (rc == -EAGAIN) {
			now += wait;
			continue;
		}
		assert_int_equal(rc, 0);
		double c = req == &big ? 4 << 20 : 64 << 10;
		bytes += c;
		assert_int_equal(qos_tbf_enqueue(t, "A", 0, req, c, now), 0);
	}
	/* 20 s at 10 MiB/s, give or take the bucket and one large request */
	assert_near(bytes, 200.0 * (1 << 20), 0.03);
	while (qos_tbf_drain(t, &req) == 0)
		;
	qos_tbf_destroy(t);
}

/* Random operations; every request must come back exactly once. */
static void test_tbf_random_ops_conserve_requests(void **state)
{
	enum { NREQ = 4000 };
	static int reqs[NREQ];
	static unsigned char seen[NREQ];
	static const char *const jobs[] = { "j1", "j2", "k1", "k2", "x" };
	static const char *const rules[] = { "r0", "r1", "r2", "r3" };
	static const char *const pats[] = { "j*", "k1", "*", "j2" };
	qos_tbf *t;
	unsigned long rng = 12345;
	size_t in = 0, out = 0;
	double now = 0;
	void *req;

	(void)state;
	memset(seen, 0, sizeof(seen));
	assert_int_equal(qos_tbf_create(&t), 0);
	for (int step = 0; step < 40000; step++) {
		rng = rng * 6364136223846793005UL + 1442695040888963407UL;
		unsigned r = (unsigned)(rng >> 33);
		now += (r % 7) * 1e-4;
		switch (r % 10) {
		case 0: case 1: case 2: case 3:
			if (in < NREQ) {
				assert_int_equal(qos_tbf_enqueue(t, jobs[(r >> 4) % 5],
					(int)((r >> 8) % 3) - 1, &reqs[in], 1, now), 0);
				in++;
			}
			break;
		case 4: case 5: case 6:
			if (qos_tbf_dequeue(t, now, &req, NULL) == 0) {
				size_t k = (size_t)((int *)req - reqs);
				assert_true(k < in && !seen[k]);
				seen[k] = 1;
				out++;
			}
			break;
		case 7: {
			unsigned k = (r >> 4) % 4;
			qos_tbf_rule_spec s = { .name = rules[k], .jobid = pats[k],
				.opc_mask = k == 3 ? 1u : 0, .rate = 50 + (r >> 8) % 500,
				.rank = (int)((r >> 12) % 5) };
			int rc = qos_tbf_rule_add(t, &s, now);
			assert_true(rc == 0 || rc == -EEXIST);
			break;
		}
		case 8: {
			int rc = qos_tbf_rule_stop(t, rules[(r >> 4) % 4], now);
			assert_true(rc == 0 || rc == -ENOENT);
			break;
		}
		default:
			if (r & 0x100)
				qos_tbf_rule_change(t, rules[(r >> 4) % 4],
						    10 + (r >> 9) % 1000, 0, now);
			else if (r & 0x200)
				qos_tbf_gc(t, now);
			else
				qos_tbf_set_work_conserving(t, (r >> 10) & 1);
		}
		assert_int_equal(qos_tbf_queued(t), in - out);
	}
	for (;;) {
		int rc = qos_tbf_dequeue(t, now, &req, NULL);
		if (rc == -ENOENT)
			break;
		if (rc == -EAGAIN) {
			now += 0.01;
			continue;
		}
		assert_int_equal(rc, 0);
		size_t k = (size_t)((int *)req - reqs);
		assert_true(k < in && !seen[k]);
		seen[k] = 1;
		out++;
	}
	assert_int_equal(out, in);
	assert_int_equal(qos_tbf_queued(t), 0);
	qos_tbf_destroy(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tbf_rates_held_within_1pct),
		cmocka_unit_test(test_tbf_not_work_conserving_leaves_idle),
		cmocka_unit_test(test_tbf_work_conserving_uses_idle_capacity),
		cmocka_unit_test(test_tbf_fallback_unlimited),
		cmocka_unit_test(test_tbf_rule_change_at_run_time),
		cmocka_unit_test(test_tbf_rule_stop_moves_requests),
		cmocka_unit_test(test_tbf_matching_rank_wildcard_opcode),
		cmocka_unit_test(test_tbf_deadline_and_rank_tiebreak),
		cmocka_unit_test(test_tbf_gc_frees_idle_classes),
		cmocka_unit_test(test_tbf_enqueue_invalid),
		cmocka_unit_test(test_tbf_wildcard_limits_each_job),
		cmocka_unit_test(test_tbf_byte_rate_with_mixed_sizes),
		cmocka_unit_test(test_tbf_random_ops_conserve_requests),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
