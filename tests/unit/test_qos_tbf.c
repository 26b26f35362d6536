/* test_qos_tbf.c — NRS TBF scheduler: rates held within 1% over simulated
 * seconds in RPC and byte units, oversize requests, work-conserving mode,
 * fallback queue, rule matching (job lists, uid, gid, opcode, rank), rule
 * change/rerank/stop at run time under a backlog, rule listing, class
 * garbage collection, and conservation of requests under random
 * operations. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
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

/* A key for job `job`, opcode class opc, uid/gid 0, `bytes` bytes. */
static qos_tbf_key key(const char *job, int opc, uint64_t bytes)
{
	qos_tbf_key k = { .jobid = job, .opc = opc, .bytes = bytes };
	return k;
}

static int enq(qos_tbf *t, const char *job, int opc, void *req, double now)
{
	qos_tbf_key k = key(job, opc, 0);
	return qos_tbf_enqueue(t, &k, req, now, NULL);
}

/* An RPC rule for one job pattern. */
static void add_rule(qos_tbf *t, const char *name, const char *pat,
		     double rate, int rank)
{
	qos_tbf_rule_spec s;

	qos_tbf_rule_spec_init(&s);
	s.name = name;
	s.jobids = &pat;
	s.n_jobids = 1;
	s.rate = rate;
	s.rank = rank;
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
				assert_int_equal(enq(t, job_names[j],
					QOS_TBF_OPC_ANY, &job_tag[j], now), 0);
	while (now < t1) {
		void *req;
		double wait;
		int rc = qos_tbf_dequeue(t, now, &req, &wait);
		if (rc == 0) {
			int j = job_of(req);
			served[j]++;
			now += service;
			assert_int_equal(enq(t, job_names[j],
				QOS_TBF_OPC_ANY, &job_tag[j], now), 0);
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
	assert_int_equal(enq(t, "X", 0, &job_tag[3], 0), 0);
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
	assert_int_equal(qos_tbf_rule_change(t, "a", 400, 0, QOS_TBF_RANK_KEEP, 5.0), 0);
	assert_int_equal(qos_tbf_rule_change(t, "nope", 1, 0, QOS_TBF_RANK_KEEP, 5.0),
			 -ENOENT);
	assert_int_equal(qos_tbf_rule_change(t, "a", -1, 0, QOS_TBF_RANK_KEEP, 5.0),
			 -EINVAL);
	assert_int_equal(qos_tbf_rule_change(t, "a", NAN, 0, QOS_TBF_RANK_KEEP, 5.0),
			 -EINVAL);
	assert_int_equal(qos_tbf_rule_change(t, "a", 1, INFINITY, QOS_TBF_RANK_KEEP,
					     5.0), -EINVAL);
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
		assert_int_equal(enq(t, "A", QOS_TBF_OPC_ANY, &tags[i], 0), 0);
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
	const char *star = "*";
	qos_tbf_rule_spec s;
	qos_tbf_rule_spec_init(&s);
	s.name = "wr";
	s.jobids = &star;
	s.n_jobids = 1;
	s.opc_mask = 1u << 3;
	s.rate = 10;
	s.rank = 9;
	assert_int_equal(qos_tbf_rule_add(t, &s, 0), 0);
	assert_int_equal(qos_tbf_rule_add(t, &s, 0), -EEXIST);
	assert_int_equal(enq(t, "ddx", 0, &r1, 0), 0);
	assert_int_equal(enq(t, "ddy", 0, &r2, 0), 0);
	assert_int_equal(enq(t, "zz", 3, &r3, 0), 0);
	assert_int_equal(enq(t, "zz", 2, &r4, 0), 0);
	assert_int_equal(qos_tbf_class_queued(t, "ddx", "ddx"), 1);
	assert_int_equal(qos_tbf_class_queued(t, "dd", "ddy"), 1);
	assert_int_equal(qos_tbf_class_queued(t, "dd", "ddx"), 0);
	assert_int_equal(qos_tbf_class_queued(t, "wr", "zz"), 1);
	assert_int_equal(qos_tbf_fallback_queued(t), 1);
	/* re-rank: "dd*" now before "ddx", so a new ddx request goes to the
	 * prefix rule; the one already queued keeps its class */
	assert_int_equal(qos_tbf_rule_change(t, "dd", 10, 0, 0, 0), 0);
	assert_int_equal(qos_tbf_rule_change(t, "none", 10, 0, 0, 0), -ENOENT);
	assert_int_equal(enq(t, "ddx", 0, &r1, 0), 0);
	assert_int_equal(qos_tbf_class_queued(t, "dd", "ddx"), 1);
	assert_int_equal(qos_tbf_class_queued(t, "ddx", "ddx"), 1);
	assert_int_equal(qos_tbf_queued(t), 5);
	void *req;
	while (qos_tbf_drain(t, &req) == 0)
		;
	qos_tbf_destroy(t);
}

/* Matching by job list, uid, gid and opcode: each key goes to the expected
 * rule's class (or the fallback), and `limited` says which. */
static void test_tbf_matching_by_key(void **state)
{
	static const char *const list[] = { "a1", "b*" };
	static const char *const cstar[] = { "c*" };
	static const char *const star[] = { "*" };
	static const char *const yonly[] = { "y" };
	static const struct {
		const char *name;
		const char *const *jobs;
		size_t n;
		int64_t uid, gid;
		uint32_t opc_mask;
	} rules[] = {
		{ "list", list, 2, -1, -1, 0 },
		{ "uid", NULL, 0, 1000, -1, 0 },
		{ "gid", NULL, 0, -1, 50, 1u << 0 },
		{ "both", cstar, 1, 7, 8, 0 },
		{ "wr", star, 1, -1, -1, 1u << 1 },
		{ "gid0", yonly, 1, -1, 0, 0 },
	};
	static const struct {
		const char *job;
		int opc;
		uint32_t uid, gid;
		const char *want; /* NULL: fallback */
	} cases[] = {
		{ "a1", 0, 0, 0, "list" },
		{ "a12", 0, 0, 0, NULL },   /* exact pattern, not a prefix */
		{ "a", 0, 0, 0, NULL },
		{ "b", QOS_TBF_OPC_ANY, 0, 0, "list" },
		{ "bzz", 2, 0, 0, "list" },
		{ "x", 0, 1000, 0, "uid" },
		{ "a1", 0, 1000, 0, "list" }, /* rank order: list first */
		{ "x", 0, 0, 50, "gid" },
		{ "x", 1, 0, 50, "wr" },    /* gid rule is for reads only */
		{ "x", QOS_TBF_OPC_ANY, 0, 50, NULL }, /* no opcode: no mask */
		{ "c9", 2, 7, 8, "both" },
		{ "c9", 2, 7, 9, NULL },
		{ "c9", 2, 8, 8, NULL },
		{ "d9", 2, 7, 8, NULL },
		{ "c9", 1, 7, 9, "wr" },
		{ "", 1, 0, 0, "wr" },      /* "*" matches an empty job id */
		{ "", 0, 0, 0, NULL },
		{ "x", 2, UINT32_MAX, UINT32_MAX, NULL },
		{ "y", 2, 5, 0, "gid0" },   /* gid 0 is a gid, not "any" */
		{ "y", 2, 0, 1, NULL },
	};
	enum { N = sizeof(cases) / sizeof(cases[0]) };
	qos_tbf *t;
	int tags[N];
	void *req;

	(void)state;
	assert_int_equal(qos_tbf_create(&t), 0);
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		qos_tbf_rule_spec s;
		qos_tbf_rule_spec_init(&s);
		s.name = rules[i].name;
		s.jobids = rules[i].jobs;
		s.n_jobids = rules[i].n;
		s.uid = rules[i].uid;
		s.gid = rules[i].gid;
		s.opc_mask = rules[i].opc_mask;
		s.rate = 1;
		s.rank = (int)i;
		assert_int_equal(qos_tbf_rule_add(t, &s, 0), 0);
	}
	for (size_t i = 0; i < N; i++) {
		qos_tbf_key k = { cases[i].job, cases[i].opc, cases[i].uid,
				  cases[i].gid, 100 };
		size_t before = cases[i].want
			? qos_tbf_class_queued(t, cases[i].want, cases[i].job)
			: qos_tbf_fallback_queued(t);
		int limited = -1;
		assert_int_equal(qos_tbf_enqueue(t, &k, &tags[i], 0, &limited), 0);
		size_t after = cases[i].want
			? qos_tbf_class_queued(t, cases[i].want, cases[i].job)
			: qos_tbf_fallback_queued(t);
		if (after != before + 1 || limited != (cases[i].want != NULL)) {
			fprintf(stderr, "case %zu (%s): want %s, limited %d\n", i,
				cases[i].job, cases[i].want ? cases[i].want : "fallback",
				limited);
			fail();
		}
	}
	assert_int_equal(qos_tbf_queued(t), N);
	while (qos_tbf_drain(t, &req) == 0)
		;
	qos_tbf_destroy(t);
}

/* Pseudo-random request size in [4 KiB, 1 MiB]. */
static uint64_t next_size(unsigned long *rng)
{
	*rng = *rng * 6364136223846793005UL + 1442695040888963407UL;
	return 4096 + (*rng >> 33) % ((1 << 20) - 4096 + 1);
}

/* Closed loop on one byte rule and one RPC rule with mixed request sizes
 * (all within the byte bucket): served bytes and RPCs over T seconds are
 * within 1% of rate x T + depth. */
static void test_tbf_byte_and_rpc_units_accurate(void **state)
{
	enum { T = 20 };
	const double brate = 10e6, bdepth = 1 << 20, rrate = 100;
	const char *bj = "B", *rj = "R";
	static int breq, rreq;
	qos_tbf *t;
	qos_tbf_rule_spec s;
	double now = 0, bytes = 0, rpcs = 0, wait;
	unsigned long rng = 7;
	void *req;

	(void)state;
	assert_int_equal(qos_tbf_create(&t), 0);
	qos_tbf_rule_spec_init(&s);
	s.name = "bytes";
	s.jobids = &bj;
	s.n_jobids = 1;
	s.unit = QOS_TBF_UNIT_BYTE;
	s.rate = brate;
	s.depth = bdepth;
	assert_int_equal(qos_tbf_rule_add(t, &s, 0), 0);
	s.name = "rpcs";
	s.jobids = &rj;
	s.unit = QOS_TBF_UNIT_RPC;
	s.rate = rrate;
	s.depth = 0; /* default: 3 RPCs */
	assert_int_equal(qos_tbf_rule_add(t, &s, 0), 0);
	/* one request of each job queued at a time, of 4 KiB .. 1 MiB */
	qos_tbf_key kb = key("B", 1, next_size(&rng)), kr = key("R", 0, next_size(&rng));
	assert_int_equal(qos_tbf_enqueue(t, &kb, &breq, 0, NULL), 0);
	assert_int_equal(qos_tbf_enqueue(t, &kr, &rreq, 0, NULL), 0);
	for (;;) {
		int rc = qos_tbf_dequeue(t, now, &req, &wait);
		if (rc == -EAGAIN) {
			assert_true(wait > 0 && isfinite(wait));
			if (now + wait > T)
				break;
			now += wait;
			continue;
		}
		assert_int_equal(rc, 0);
		if (req == &breq) {
			bytes += (double)kb.bytes;
			kb.bytes = next_size(&rng);
			assert_int_equal(qos_tbf_enqueue(t, &kb, &breq, now, NULL), 0);
		} else {
			assert_ptr_equal(req, &rreq);
			rpcs++;
			kr.bytes = next_size(&rng); /* no matter to an RPC rule */
			assert_int_equal(qos_tbf_enqueue(t, &kr, &rreq, now, NULL), 0);
		}
	}
	/* Never above the bound (every request fits the bucket), and close to
	 * it. */
	assert_true(bytes <= brate * T + bdepth);
	assert_near(bytes, brate * T + bdepth, 0.01);
	assert_true(rpcs <= rrate * T + QOS_TBF_DEPTH_DEFAULT);
	assert_near(rpcs, rrate * T + QOS_TBF_DEPTH_DEFAULT, 0.01);
	while (qos_tbf_drain(t, &req) == 0)
		;
	qos_tbf_destroy(t);
}

/* A 0-byte request costs one byte; a request larger than the depth waits
 * for a full bucket, runs, and leaves the bucket in debt. */
static void test_tbf_zero_byte_and_oversize(void **state)
{
	qos_tbf *t;
	qos_tbf_rule_spec s;
	const char *j = "J";
	int z, o1, o2;
	void *req;
	double wait;

	(void)state;
	assert_int_equal(qos_tbf_create(&t), 0);
	qos_tbf_rule_spec_init(&s);
	s.name = "b";
	s.jobids = &j;
	s.n_jobids = 1;
	s.unit = QOS_TBF_UNIT_BYTE;
	s.rate = 1000;
	s.depth = 100;
	assert_int_equal(qos_tbf_rule_add(t, &s, 0), 0);
	qos_tbf_key k0 = key("J", 0, 0), k1 = key("J", 1, 500);
	assert_int_equal(qos_tbf_enqueue(t, &k0, &z, 0, NULL), 0);
	assert_int_equal(qos_tbf_enqueue(t, &k1, &o1, 0, NULL), 0);
	assert_int_equal(qos_tbf_enqueue(t, &k1, &o2, 0, NULL), 0);
	assert_int_equal(qos_tbf_dequeue(t, 0, &req, &wait), 0);
	assert_ptr_equal(req, &z);
	/* 99 tokens left: the oversize request waits for the one missing
	 * byte (it would not wait at all had z cost nothing) */
	assert_int_equal(qos_tbf_dequeue(t, 0, &req, &wait), -EAGAIN);
	assert_true(fabs(wait - 0.001) < 1e-9);
	assert_int_equal(qos_tbf_dequeue(t, 0.001, &req, &wait), 0);
	assert_ptr_equal(req, &o1);
	/* 100 - 500 = -400 tokens: a full bucket again in 0.5 s */
	assert_int_equal(qos_tbf_dequeue(t, 0.001, &req, &wait), -EAGAIN);
	assert_true(fabs(wait - 0.5) < 1e-9);
	assert_int_equal(qos_tbf_dequeue(t, 0.3, &req, &wait), -EAGAIN);
	assert_int_equal(qos_tbf_dequeue(t, 0.501, &req, &wait), 0);
	assert_ptr_equal(req, &o2);
	assert_int_equal(qos_tbf_queued(t), 0);
	qos_tbf_destroy(t);
}

/* Rule changes (rate, depth, rank, several times) under a backlog keep every
 * request, in per-job FIFO order; a new rank applies to new requests. */
static void test_tbf_rule_change_under_backlog(void **state)
{
	enum { N = 300 };
	static const char *const jobs[] = { "A1", "A2", "B", "X" };
	static int tags[N];
	static unsigned char seen[N];
	int last[4] = { -1, -1, -1, -1 };
	qos_tbf *t;
	qos_tbf_rule_spec s;
	const char *pb = "B";
	size_t qa, qa1, qb;
	void *req;
	double now = 0;

	(void)state;
	memset(seen, 0, sizeof(seen));
	assert_int_equal(qos_tbf_create(&t), 0);
	add_rule(t, "a", "A*", 10, 0);
	add_rule(t, "a1", "A1", 10, 5);
	qos_tbf_rule_spec_init(&s);
	s.name = "b";
	s.jobids = &pb;
	s.n_jobids = 1;
	s.unit = QOS_TBF_UNIT_BYTE;
	s.rate = 1000;
	s.depth = 4096;
	s.rank = 2;
	assert_int_equal(qos_tbf_rule_add(t, &s, 0), 0);
	for (int i = 0; i < N; i++) {
		qos_tbf_key k = key(jobs[i % 4], 0, 512);
		assert_int_equal(qos_tbf_enqueue(t, &k, &tags[i], 0, NULL), 0);
	}
	assert_int_equal(qos_tbf_rule_get(t, 0, &s, &qa), 0);
	assert_string_equal(s.name, "a");
	assert_int_equal(qa, N / 2);
	/* re-rate, re-depth (smaller, then larger), re-rank both ways */
	const struct { const char *rule; double rate, depth; int rank; } ch[] = {
		{ "a", 0, 1, QOS_TBF_RANK_KEEP },
		{ "b", 5, 10, -3 },
		{ "a", 1e3, 0, 10 },     /* a1 now matches A1 first */
		{ "b", 0, 1e6, 2 },
		{ "a1", 7, 2, QOS_TBF_RANK_KEEP },
	};
	for (size_t i = 0; i < sizeof(ch) / sizeof(ch[0]); i++) {
		now += 0.01;
		assert_int_equal(qos_tbf_rule_change(t, ch[i].rule, ch[i].rate,
						     ch[i].depth, ch[i].rank, now), 0);
		assert_int_equal(qos_tbf_queued(t), N);
		assert_int_equal(qos_tbf_class_queued(t, "a", "A1"), N / 4);
		assert_int_equal(qos_tbf_class_queued(t, "a", "A2"), N / 4);
		assert_int_equal(qos_tbf_class_queued(t, "b", "B"), N / 4);
		assert_int_equal(qos_tbf_fallback_queued(t), N / 4);
	}
	/* order now: b (2), a1 (5), a (10) */
	assert_int_equal(qos_tbf_rule_get(t, 0, &s, &qb), 0);
	assert_string_equal(s.name, "b");
	assert_int_equal(qb, N / 4);
	assert_true(s.rate == 0 && s.depth == 1e6 && s.rank == 2);
	assert_int_equal(qos_tbf_rule_get(t, 1, &s, &qa1), 0);
	assert_string_equal(s.name, "a1");
	assert_int_equal(qa1, 0);
	assert_int_equal(qos_tbf_rule_get(t, 2, &s, &qa), 0);
	assert_string_equal(s.name, "a");
	assert_true(s.rate == 1e3 && s.depth == 1 && s.rank == 10);
	assert_int_equal(qa, N / 2);
	/* the new rank governs a new A1 request */
	static int extra;
	qos_tbf_key k = key("A1", 0, 0);
	assert_int_equal(qos_tbf_enqueue(t, &k, &extra, now, NULL), 0);
	assert_int_equal(qos_tbf_class_queued(t, "a1", "A1"), 1);
	assert_int_equal(qos_tbf_class_queued(t, "a", "A1"), N / 4);
	/* open every tap and take everything back: once each, in order */
	assert_int_equal(qos_tbf_rule_change(t, "b", 1e9, 0, QOS_TBF_RANK_KEEP, now), 0);
	assert_int_equal(qos_tbf_rule_change(t, "a", 1e9, 0, QOS_TBF_RANK_KEEP, now), 0);
	size_t out = 0;
	int extra_seen = 0;
	while (out < N + 1) {
		int rc = qos_tbf_dequeue(t, now, &req, NULL);
		if (rc == -EAGAIN) {
			now += 1e-3;
			continue;
		}
		assert_int_equal(rc, 0);
		out++;
		if (req == &extra) {
			assert_int_equal(extra_seen++, 0);
			continue;
		}
		int i = (int)((int *)req - tags);
		assert_true(i >= 0 && i < N && !seen[i]);
		seen[i] = 1;
		assert_true(i > last[i % 4]);
		last[i % 4] = i;
	}
	assert_int_equal(qos_tbf_dequeue(t, now, &req, NULL), -ENOENT);
	qos_tbf_destroy(t);
}

/* qos_tbf_rule_get lists rules in rank order with their specs, effective
 * depths and queue depths. */
static void test_tbf_rule_listing(void **state)
{
	static const char *const pats[] = { "x1", "y*" };
	qos_tbf *t;
	qos_tbf_rule_spec s, g;
	size_t q;
	int r[3];
	void *req;

	(void)state;
	assert_int_equal(qos_tbf_create(&t), 0);
	assert_int_equal(qos_tbf_rule_get(t, 0, &g, &q), -ENOENT);
	qos_tbf_rule_spec_init(&s);
	s.name = "late";
	s.rate = 5;
	s.rank = 9;
	assert_int_equal(qos_tbf_rule_add(t, &s, 0), 0);
	s.name = "bytes";
	s.jobids = pats;
	s.n_jobids = 2;
	s.uid = 12;
	s.gid = 34;
	s.opc_mask = 3;
	s.unit = QOS_TBF_UNIT_BYTE;
	s.rate = 2.5e6;
	s.rank = -1;
	assert_int_equal(qos_tbf_rule_add(t, &s, 0), 0);
	s.name = "same_rank_newer";
	s.n_jobids = 0;
	s.uid = s.gid = -1;
	s.opc_mask = 0;
	s.unit = QOS_TBF_UNIT_RPC;
	s.depth = 7;
	s.rank = 9;
	assert_int_equal(qos_tbf_rule_add(t, &s, 0), 0);
	qos_tbf_key k = { "y2", 1, 12, 34, 10 };
	assert_int_equal(qos_tbf_enqueue(t, &k, &r[0], 0, NULL), 0);
	k.jobid = "x1";
	assert_int_equal(qos_tbf_enqueue(t, &k, &r[1], 0, NULL), 0);
	k.uid = 13;
	assert_int_equal(qos_tbf_enqueue(t, &k, &r[2], 0, NULL), 0); /* "late" */
	assert_int_equal(qos_tbf_rule_count(t), 3);

	assert_int_equal(qos_tbf_rule_get(t, 0, &g, &q), 0);
	assert_string_equal(g.name, "bytes");
	assert_int_equal(g.n_jobids, 2);
	assert_string_equal(g.jobids[0], "x1");
	assert_string_equal(g.jobids[1], "y*");
	assert_int_equal(g.uid, 12);
	assert_int_equal(g.gid, 34);
	assert_int_equal(g.opc_mask, 3);
	assert_int_equal(g.unit, QOS_TBF_UNIT_BYTE);
	assert_true(g.rate == 2.5e6);
	assert_true(g.depth == QOS_TBF_DEPTH_DEFAULT_BYTES);
	assert_int_equal(g.rank, -1);
	assert_int_equal(q, 2);
	assert_int_equal(qos_tbf_rule_get(t, 1, &g, &q), 0);
	assert_string_equal(g.name, "late");
	assert_int_equal(g.n_jobids, 0);
	assert_int_equal(g.uid, -1);
	assert_int_equal(g.unit, QOS_TBF_UNIT_RPC);
	assert_true(g.depth == QOS_TBF_DEPTH_DEFAULT);
	assert_int_equal(q, 1);
	assert_int_equal(qos_tbf_rule_get(t, 2, &g, NULL), 0);
	assert_string_equal(g.name, "same_rank_newer");
	assert_true(g.depth == 7);
	assert_int_equal(qos_tbf_rule_get(t, 3, &g, &q), -ENOENT);
	/* served requests leave the count */
	assert_int_equal(qos_tbf_dequeue(t, 0, &req, NULL), 0);
	assert_int_equal(qos_tbf_dequeue(t, 0, &req, NULL), 0);
	assert_int_equal(qos_tbf_dequeue(t, 0, &req, NULL), 0);
	assert_int_equal(qos_tbf_rule_get(t, 0, &g, &q), 0);
	assert_int_equal(q, 0);
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
	qos_tbf_rule_spec sa, sb;
	const char *ja = "A", *jb = "B";
	qos_tbf_rule_spec_init(&sa);
	sa.name = "a";
	sa.jobids = &ja;
	sa.n_jobids = 1;
	sa.rate = 10;
	sa.depth = 1;
	sa.rank = 2;
	sb = sa;
	sb.name = "b";
	sb.jobids = &jb;
	sb.rank = 1;
	assert_int_equal(qos_tbf_rule_add(t, &sa, 0), 0);
	assert_int_equal(qos_tbf_rule_add(t, &sb, 0), 0);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(enq(t, "A", 0, &a[i], 0), 0);
		assert_int_equal(enq(t, "B", 0, &b[i], 0), 0);
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
	assert_int_equal(qos_tbf_dequeue(t, 0.1, &req, &wait), 0);
	assert_ptr_equal(req, &a[1]);
	/* both due at 0.2 again; re-rank at run time: A now wins the tie */
	assert_int_equal(qos_tbf_rule_change(t, "a", 10, 0, 0, 0.1), 0);
	assert_int_equal(qos_tbf_dequeue(t, 0.2, &req, &wait), 0);
	assert_ptr_equal(req, &a[2]);
	assert_int_equal(qos_tbf_dequeue(t, 0.2, &req, &wait), 0);
	assert_ptr_equal(req, &b[2]);
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
	assert_int_equal(enq(t, "J1", 0, &r, 0), 0);
	assert_int_equal(enq(t, "J2", 0, &r, 0), 0);
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

static void test_tbf_invalid(void **state)
{
	qos_tbf *t;
	int r;
	char longid[QOS_TBF_ID_MAX + 1];
	const char *many[QOS_TBF_JOBS_MAX + 1];
	const char *bad[] = { "ok", "" };

	(void)state;
	memset(longid, 'j', sizeof(longid) - 1);
	longid[sizeof(longid) - 1] = 0;
	for (int i = 0; i <= QOS_TBF_JOBS_MAX; i++)
		many[i] = "j*";
	assert_int_equal(qos_tbf_create(&t), 0);
	qos_tbf_key k = key("A", 0, 1);
	assert_int_equal(qos_tbf_enqueue(t, NULL, &r, 0, NULL), -EINVAL);
	assert_int_equal(qos_tbf_enqueue(t, &k, NULL, 0, NULL), -EINVAL);
	k.opc = 32;
	assert_int_equal(qos_tbf_enqueue(t, &k, &r, 0, NULL), -EINVAL);
	k.opc = -2;
	assert_int_equal(qos_tbf_enqueue(t, &k, &r, 0, NULL), -EINVAL);
	k.opc = 0;
	k.jobid = longid;
	assert_int_equal(qos_tbf_enqueue(t, &k, &r, 0, NULL), -EINVAL);
	k.jobid = NULL;
	assert_int_equal(qos_tbf_enqueue(t, &k, &r, 0, NULL), -EINVAL);

	qos_tbf_rule_spec s, ok;
	qos_tbf_rule_spec_init(&ok);
	ok.name = "x";
	ok.jobids = bad;
	ok.n_jobids = 1;
	ok.rate = 1;
	assert_int_equal(qos_tbf_rule_add(t, NULL, 0), -EINVAL);
	s = ok; s.n_jobids = 2;           /* empty pattern */
	assert_int_equal(qos_tbf_rule_add(t, &s, 0), -EINVAL);
	s = ok; s.jobids = NULL;          /* n_jobids without patterns */
	assert_int_equal(qos_tbf_rule_add(t, &s, 0), -EINVAL);
	s = ok; s.jobids = many; s.n_jobids = QOS_TBF_JOBS_MAX + 1;
	assert_int_equal(qos_tbf_rule_add(t, &s, 0), -EINVAL);
	s = ok; s.name = longid;
	assert_int_equal(qos_tbf_rule_add(t, &s, 0), -EINVAL);
	s = ok; s.name = "";
	assert_int_equal(qos_tbf_rule_add(t, &s, 0), -EINVAL);
	s = ok; s.rate = -1;
	assert_int_equal(qos_tbf_rule_add(t, &s, 0), -EINVAL);
	s = ok; s.rate = NAN;
	assert_int_equal(qos_tbf_rule_add(t, &s, 0), -EINVAL);
	s = ok; s.depth = INFINITY;
	assert_int_equal(qos_tbf_rule_add(t, &s, 0), -EINVAL);
	s = ok; s.uid = -2;
	assert_int_equal(qos_tbf_rule_add(t, &s, 0), -EINVAL);
	s = ok; s.gid = (int64_t)UINT32_MAX + 1;
	assert_int_equal(qos_tbf_rule_add(t, &s, 0), -EINVAL);
	s = ok; s.unit = 2;
	assert_int_equal(qos_tbf_rule_add(t, &s, 0), -EINVAL);
	s = ok; s.rank = QOS_TBF_RANK_KEEP;
	assert_int_equal(qos_tbf_rule_add(t, &s, 0), -EINVAL);
	assert_int_equal(qos_tbf_rule_count(t), 0);
	/* the limits themselves are fine */
	s = ok; s.jobids = many; s.n_jobids = QOS_TBF_JOBS_MAX;
	s.uid = UINT32_MAX; s.gid = 0;
	longid[QOS_TBF_ID_MAX - 1] = 0;
	s.name = longid;
	assert_int_equal(qos_tbf_rule_add(t, &s, 0), 0);
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
	const char *j = "A";

	(void)state;
	assert_int_equal(qos_tbf_create(&t), 0);
	/* 10 MiB/s, a 1 MiB bucket; requests of 64 KiB and 4 MiB (larger
	 * than the bucket is allowed: it runs into debt) */
	qos_tbf_rule_spec s;
	qos_tbf_rule_spec_init(&s);
	s.name = "a";
	s.jobids = &j;
	s.n_jobids = 1;
	s.unit = QOS_TBF_UNIT_BYTE;
	s.rate = 10 << 20;
	s.depth = 1 << 20;
	assert_int_equal(qos_tbf_rule_add(t, &s, 0), 0);
	qos_tbf_key ks = key("A", 0, 64 << 10), kb = key("A", 0, 4 << 20);
	for (int k = 0; k < 4; k++) {
		assert_int_equal(qos_tbf_enqueue(t, &ks, &small, 0, NULL), 0);
		assert_int_equal(qos_tbf_enqueue(t, &kb, &big, 0, NULL), 0);
	}
	while (now < 20.0) {
		int rc = qos_tbf_dequeue(t, now, &req, &wait);
		if (rc == -EAGAIN) {
			now += wait;
			continue;
		}
		assert_int_equal(rc, 0);
		qos_tbf_key *kk = req == &big ? &kb : &ks;
		bytes += (double)kk->bytes;
		assert_int_equal(qos_tbf_enqueue(t, kk, req, now, NULL), 0);
	}
	/* 20 s at 10 MiB/s, give or take the bucket and one large request */
	assert_near(bytes, 200.0 * (1 << 20), 0.03);
	while (qos_tbf_drain(t, &req) == 0)
		;
	qos_tbf_destroy(t);
}

/* Sum of the rules' queue depths and the fallback is the total. */
static void assert_counts_add_up(const qos_tbf *t)
{
	size_t sum = qos_tbf_fallback_queued(t), q, n = qos_tbf_rule_count(t);
	qos_tbf_rule_spec s;

	for (size_t i = 0; i < n; i++) {
		assert_int_equal(qos_tbf_rule_get(t, i, &s, &q), 0);
		if (i > 0) {
			qos_tbf_rule_spec p;
			assert_int_equal(qos_tbf_rule_get(t, i - 1, &p, NULL), 0);
			assert_true(p.rank <= s.rank);
		}
		sum += q;
	}
	assert_int_equal(sum, qos_tbf_queued(t));
}

/* Random operations over mixed keys and rules of both units; every request
 * must come back exactly once and the counts must always add up. */
static void test_tbf_random_ops_conserve_requests(void **state)
{
	enum { NREQ = 4000 };
	static int reqs[NREQ];
	static unsigned char seen[NREQ];
	static const char *const jobs[] = { "j1", "j2", "k1", "k2", "x", "" };
	static const char *const rules[] = { "r0", "r1", "r2", "r3", "r4" };
	static const char *const p0[] = { "j*" }, *const p1[] = { "k1", "x" },
			  *const p2[] = { "*" }, *const p3[] = { "j2", "k*" };
	static const char *const *const pats[] = { p0, p1, p2, p3, NULL };
	static const size_t npats[] = { 1, 2, 1, 2, 0 };
	qos_tbf *t;
	unsigned long rng = 12345;
	size_t in = 0, out = 0;
	double now = 0;
	void *req;

	(void)state;
	memset(seen, 0, sizeof(seen));
	assert_int_equal(qos_tbf_create(&t), 0);
	for (int step = 0; step < 60000; step++) {
		rng = rng * 6364136223846793005UL + 1442695040888963407UL;
		unsigned r = (unsigned)(rng >> 33);
		now += (r % 7) * 1e-4;
		switch (r % 10) {
		case 0: case 1: case 2: case 3:
			if (in < NREQ) {
				qos_tbf_key k = { jobs[(r >> 4) % 6],
					(int)((r >> 8) % 3) - 1, (r >> 10) & 1,
					(r >> 11) & 1, (r >> 12) % 3 ? (r >> 14) % 65536 : 0 };
				int lim = -1;
				assert_int_equal(qos_tbf_enqueue(t, &k, &reqs[in], now,
								 &lim), 0);
				assert_true(lim == 0 || lim == 1);
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
			unsigned k = (r >> 4) % 5;
			qos_tbf_rule_spec s;
			qos_tbf_rule_spec_init(&s);
			s.name = rules[k];
			s.jobids = pats[k];
			s.n_jobids = npats[k];
			s.opc_mask = k == 3 ? 1u : 0;
			s.uid = k == 1 ? 1 : -1;
			s.gid = k == 4 ? 0 : -1;
			s.unit = (r >> 7) & 1 ? QOS_TBF_UNIT_BYTE : QOS_TBF_UNIT_RPC;
			s.rate = s.unit == QOS_TBF_UNIT_BYTE ? 1e5 + (r >> 8) % 1000000
							     : 50 + (r >> 8) % 500;
			s.rank = (int)((r >> 12) % 5);
			int rc = qos_tbf_rule_add(t, &s, now);
			assert_true(rc == 0 || rc == -EEXIST);
			break;
		}
		case 8: {
			int rc = qos_tbf_rule_stop(t, rules[(r >> 4) % 5], now);
			assert_true(rc == 0 || rc == -ENOENT);
			break;
		}
		default:
			if (r & 0x100) {
				int rc = qos_tbf_rule_change(t, rules[(r >> 4) % 5],
					10 + (r >> 9) % 100000, (r >> 20) & 1 ? 0 : 1 + (r >> 21) % 70000,
					(r >> 12) & 1 ? QOS_TBF_RANK_KEEP : (int)((r >> 13) % 7) - 3,
					now);
				assert_true(rc == 0 || rc == -ENOENT);
			} else if (r & 0x200) {
				qos_tbf_gc(t, now);
			} else {
				qos_tbf_set_work_conserving(t, (r >> 10) & 1);
			}
		}
		assert_int_equal(qos_tbf_queued(t), in - out);
		assert_counts_add_up(t);
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
	assert_counts_add_up(t);
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
		cmocka_unit_test(test_tbf_matching_by_key),
		cmocka_unit_test(test_tbf_byte_and_rpc_units_accurate),
		cmocka_unit_test(test_tbf_zero_byte_and_oversize),
		cmocka_unit_test(test_tbf_rule_change_under_backlog),
		cmocka_unit_test(test_tbf_rule_listing),
		cmocka_unit_test(test_tbf_deadline_and_rank_tiebreak),
		cmocka_unit_test(test_tbf_gc_frees_idle_classes),
		cmocka_unit_test(test_tbf_invalid),
		cmocka_unit_test(test_tbf_wildcard_limits_each_job),
		cmocka_unit_test(test_tbf_byte_rate_with_mixed_sizes),
		cmocka_unit_test(test_tbf_random_ops_conserve_requests),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
