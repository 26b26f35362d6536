/* test_oss_nrs_tbf.c — the TBF discipline behind oss_sched: a job held by a
 * zero-rate rule waits while unruled jobs (fallback) are served, a rule
 * change through oss_sched_control releases it and wakes a blocked worker,
 * opcode classes, and shutdown draining rate-limited queues.  No timing:
 * rates are either 0 (never) or huge (always). */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "oss/nrs_tbf.h"
#include "qos/tbf.h"

static void req_init(oss_req *r, const char *job, uint16_t op)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->job, sizeof(r->job), "%s", job);
	r->opcode = op;
	r->bytes = 1;
}

typedef struct rule_arg {
	const char *name, *job;
	uint32_t opc_mask;
	double rate;
} rule_arg;

static int add_rule(void *priv, uint64_t now, void *arg)
{
	rule_arg *a = arg;
	qos_tbf_rule_spec sp = { a->name, a->job, a->opc_mask, a->rate, 1.0, 0 };

	return qos_tbf_rule_add(priv, &sp, OSS_TBF_SECONDS(now));
}

static int change_rule(void *priv, uint64_t now, void *arg)
{
	rule_arg *a = arg;

	return qos_tbf_rule_change(priv, a->name, a->rate, 0, OSS_TBF_SECONDS(now));
}

static void test_nrs_tbf_zero_rate_holds_job(void **state)
{
	oss_sched *s;
	oss_req a[3], b[2], *out;
	rule_arg ra = { "slowA", "A", 0, 0.0 };

	assert_int_equal(oss_sched_create(&oss_sched_tbf, &s), 0);
	assert_string_equal(oss_sched_name(s), "tbf");
	assert_int_equal(oss_sched_control(s, &oss_sched_tbf, add_rule, &ra), 0);
	/* The wrong class is refused. */
	assert_int_equal(oss_sched_control(s, &oss_sched_fifo, add_rule, &ra), -EINVAL);
	for (int i = 0; i < 3; i++) {
		req_init(&a[i], "A", PFS_OP_OSS_WRITE);
		assert_int_equal(oss_sched_enqueue(s, &a[i]), 0);
	}
	for (int i = 0; i < 2; i++) {
		req_init(&b[i], "B", PFS_OP_OSS_WRITE);
		assert_int_equal(oss_sched_enqueue(s, &b[i]), 0);
	}
	/* A's bucket starts full (depth 1): one A, then B's fallback queue. */
	assert_int_equal(oss_sched_dequeue(s, &out), 0);
	assert_ptr_equal(out, &a[0]);
	assert_int_equal(oss_sched_dequeue(s, &out), 0);
	assert_ptr_equal(out, &b[0]);
	assert_int_equal(oss_sched_dequeue(s, &out), 0);
	assert_ptr_equal(out, &b[1]);
	assert_int_equal(oss_sched_queued(s), 2);
	/* Open the tap: A's remaining requests flow, in order. */
	ra.rate = 1e12;
	assert_int_equal(oss_sched_control(s, &oss_sched_tbf, change_rule, &ra), 0);
	assert_int_equal(oss_sched_dequeue(s, &out), 0);
	assert_ptr_equal(out, &a[1]);
	assert_int_equal(oss_sched_dequeue(s, &out), 0);
	assert_ptr_equal(out, &a[2]);
	oss_sched_shutdown(s);
	oss_sched_destroy(s);
}

typedef struct worker {
	oss_sched *s;
	oss_req *got;
	int rc;
} worker;

static void *worker_main(void *arg)
{
	worker *w = arg;

	w->rc = oss_sched_dequeue(w->s, &w->got);
	return NULL;
}

static void test_nrs_tbf_control_wakes_worker(void **state)
{
	oss_sched *s;
	oss_req a[2], *out;
	rule_arg ra = { "r", "A*", 0, 0.0 };
	pthread_t th;
	worker w = { 0 };

	assert_int_equal(oss_sched_create(&oss_sched_tbf, &s), 0);
	assert_int_equal(oss_sched_control(s, &oss_sched_tbf, add_rule, &ra), 0);
	req_init(&a[0], "A1", PFS_OP_OSS_READ);
	req_init(&a[1], "A1", PFS_OP_OSS_READ);
	assert_int_equal(oss_sched_enqueue(s, &a[0]), 0);
	assert_int_equal(oss_sched_enqueue(s, &a[1]), 0);
	assert_int_equal(oss_sched_dequeue(s, &out), 0); /* the bucket's one token */
	assert_ptr_equal(out, &a[0]);
	/* The worker sleeps (zero rate: no wake-up time) until the rate rises. */
	w.s = s;
	assert_int_equal(pthread_create(&th, NULL, worker_main, &w), 0);
	ra.rate = 1e12;
	assert_int_equal(oss_sched_control(s, &oss_sched_tbf, change_rule, &ra), 0);
	pthread_join(th, NULL);
	assert_int_equal(w.rc, 0);
	assert_ptr_equal(w.got, &a[1]);
	oss_sched_shutdown(s);
	oss_sched_destroy(s);
}

static void test_nrs_tbf_opcode_classes(void **state)
{
	oss_sched *s;
	oss_req rd, wr, *out;
	/* Only writes of every job are limited (to nothing, after one). */
	rule_arg ra = { "w", "*", 1u << OSS_TBF_OPC_WRITE, 0.0 };
	oss_req w0;

	assert_int_equal(oss_nrs_tbf_opc(PFS_OP_OSS_READ), OSS_TBF_OPC_READ);
	assert_int_equal(oss_nrs_tbf_opc(PFS_OP_OSS_WRITE), OSS_TBF_OPC_WRITE);
	assert_int_equal(oss_nrs_tbf_opc(PFS_OP_OSS_STAT), OSS_TBF_OPC_OTHER);
	assert_int_equal(oss_sched_create(&oss_sched_tbf, &s), 0);
	assert_int_equal(oss_sched_control(s, &oss_sched_tbf, add_rule, &ra), 0);
	req_init(&w0, "J", PFS_OP_OSS_WRITE);
	req_init(&wr, "J", PFS_OP_OSS_WRITE);
	req_init(&rd, "J", PFS_OP_OSS_READ);
	assert_int_equal(oss_sched_enqueue(s, &w0), 0);
	assert_int_equal(oss_sched_enqueue(s, &wr), 0);
	assert_int_equal(oss_sched_enqueue(s, &rd), 0);
	assert_int_equal(oss_sched_dequeue(s, &out), 0);
	assert_ptr_equal(out, &w0);
	/* The read overtakes the held write. */
	assert_int_equal(oss_sched_dequeue(s, &out), 0);
	assert_ptr_equal(out, &rd);
	assert_int_equal(oss_sched_queued(s), 1);
	/* Shutdown hands out the held write anyway, then reports the end. */
	oss_sched_shutdown(s);
	assert_int_equal(oss_sched_dequeue(s, &out), 0);
	assert_ptr_equal(out, &wr);
	assert_int_equal(oss_sched_dequeue(s, &out), -ESHUTDOWN);
	oss_sched_destroy(s);
}

static void test_nrs_tbf_no_rules_is_fifo(void **state)
{
	oss_sched *s;
	oss_req r[5], *out;
	const char *jobs[] = { "x", "y", "x", "z", "y" };
	pfs_job_stats *v;
	size_t n;

	assert_int_equal(oss_sched_create(&oss_sched_tbf, &s), 0);
	for (int i = 0; i < 5; i++) {
		req_init(&r[i], jobs[i], PFS_OP_OSS_READ);
		assert_int_equal(oss_sched_enqueue(s, &r[i]), 0);
	}
	for (int i = 0; i < 5; i++) {
		assert_int_equal(oss_sched_dequeue(s, &out), 0);
		assert_ptr_equal(out, &r[i]);
	}
	/* Statistics are the frame's, whatever the discipline. */
	assert_int_equal(oss_sched_stats(s, OSS_SCHED_TOTAL, &v, &n), 0);
	assert_int_equal(n, 3);
	assert_string_equal(v[1].job, "y");
	assert_int_equal(v[1].read_rpcs, 2);
	free(v);
	oss_sched_shutdown(s);
	oss_sched_destroy(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nrs_tbf_zero_rate_holds_job),
		cmocka_unit_test(test_nrs_tbf_control_wakes_worker),
		cmocka_unit_test(test_nrs_tbf_opcode_classes),
		cmocka_unit_test(test_nrs_tbf_no_rules_is_fifo),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
