/* test_oss_nrs_tbf.c — the TBF discipline behind oss_sched: a job held by a
 * zero-rate rule waits while unruled jobs (fallback) are served, a rule
 * change releases it and wakes a blocked worker, opcode classes, uid and
 * byte costs from the oss_req, the limited flag, the rule API (start,
 * change, stop, list, work-conserving; errors and a FIFO scheduler), and
 * shutdown draining rate-limited queues.  No timing: rates are either 0
 * (never) or huge (always). */
#include <errno.h>
#include <limits.h>
#include <math.h>
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

/* An RPC rule with one job pattern (or none), depth 1. */
static int start_rule(oss_sched *s, const char *name, const char *job,
		      uint32_t opc_mask, double rate)
{
	qos_tbf_rule_spec sp;

	qos_tbf_rule_spec_init(&sp);
	sp.jobids = job ? &job : NULL;
	sp.n_jobids = job ? 1 : 0;
	sp.opc_mask = opc_mask;
	sp.rate = rate;
	sp.depth = 1;
	return oss_nrs_tbf_rule_start(s, name, &sp);
}

static void test_nrs_tbf_zero_rate_holds_job(void **state)
{
	oss_sched *s;
	oss_req a[3], b[2], *out;

	assert_int_equal(oss_sched_create(&oss_sched_tbf, &s), 0);
	assert_string_equal(oss_sched_name(s), "tbf");
	assert_int_equal(start_rule(s, "slowA", "A", 0, 0.0), 0);
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
	assert_int_equal(a[0].limited, 1);
	assert_int_equal(b[0].limited, 0);
	/* Open the tap: A's remaining requests flow, in order. */
	assert_int_equal(oss_nrs_tbf_rule_change(s, "slowA", 1e12, 0, INT_MIN), 0);
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
	pthread_t th;
	worker w = { 0 };

	assert_int_equal(oss_sched_create(&oss_sched_tbf, &s), 0);
	assert_int_equal(start_rule(s, "r", "A*", 0, 0.0), 0);
	req_init(&a[0], "A1", PFS_OP_OSS_READ);
	req_init(&a[1], "A1", PFS_OP_OSS_READ);
	assert_int_equal(oss_sched_enqueue(s, &a[0]), 0);
	assert_int_equal(oss_sched_enqueue(s, &a[1]), 0);
	assert_int_equal(oss_sched_dequeue(s, &out), 0); /* the bucket's one token */
	assert_ptr_equal(out, &a[0]);
	/* The worker sleeps (zero rate: no wake-up time) until the rate rises. */
	w.s = s;
	assert_int_equal(pthread_create(&th, NULL, worker_main, &w), 0);
	assert_int_equal(oss_nrs_tbf_rule_change(s, "r", 1e12, 0, INT_MIN), 0);
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
	oss_req w0;

	assert_int_equal(oss_nrs_tbf_opc(PFS_OP_OSS_READ), OSS_TBF_OPC_READ);
	assert_int_equal(oss_nrs_tbf_opc(PFS_OP_OSS_WRITE), OSS_TBF_OPC_WRITE);
	assert_int_equal(oss_nrs_tbf_opc(PFS_OP_OSS_STAT), OSS_TBF_OPC_OTHER);
	assert_int_equal(oss_sched_create(&oss_sched_tbf, &s), 0);
	/* Only writes of every job are limited (to nothing, after one). */
	assert_int_equal(start_rule(s, "w", "*", 1u << OSS_TBF_OPC_WRITE, 0.0), 0);
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

/* uid selects the rule and bytes are the cost under a byte rule. */
static void test_nrs_tbf_uid_and_bytes(void **state)
{
	oss_sched *s;
	oss_req a, b, c, *out;
	qos_tbf_rule_spec sp;

	assert_int_equal(oss_sched_create(&oss_sched_tbf, &s), 0);
	qos_tbf_rule_spec_init(&sp);
	sp.uid = 5;
	sp.unit = QOS_TBF_UNIT_BYTE;
	sp.rate = 0;
	sp.depth = 1000; /* bytes */
	assert_int_equal(oss_nrs_tbf_rule_start(s, "u5", &sp), 0);
	req_init(&a, "J", PFS_OP_OSS_WRITE);
	a.uid = 5;
	a.bytes = 600;
	b = a;
	req_init(&c, "J", PFS_OP_OSS_WRITE);
	c.uid = 6;
	c.bytes = 600;
	assert_int_equal(oss_sched_enqueue(s, &a), 0);
	assert_int_equal(oss_sched_enqueue(s, &b), 0);
	assert_int_equal(oss_sched_enqueue(s, &c), 0);
	assert_int_equal(a.limited, 1);
	assert_int_equal(c.limited, 0);
	/* 1000 bytes in the bucket: a (600) runs, b (600 more) must wait,
	 * c (another uid) is not limited */
	assert_int_equal(oss_sched_dequeue(s, &out), 0);
	assert_ptr_equal(out, &a);
	assert_int_equal(oss_sched_dequeue(s, &out), 0);
	assert_ptr_equal(out, &c);
	assert_int_equal(oss_sched_queued(s), 1);
	/* work-conserving: the idle thread serves b above its rate */
	assert_int_equal(oss_nrs_tbf_set_work_conserving(s, 1), 0);
	assert_int_equal(oss_sched_dequeue(s, &out), 0);
	assert_ptr_equal(out, &b);
	assert_int_equal(oss_nrs_tbf_set_work_conserving(s, 0), 0);
	oss_sched_shutdown(s);
	oss_sched_destroy(s);
}

static void test_nrs_tbf_rule_api(void **state)
{
	oss_sched *s, *fifo;
	oss_nrs_tbf_rule_snap *v;
	size_t n;
	oss_req r[4], *out;
	qos_tbf_rule_spec sp;
	char err[128];
	const char *bad_pat = "a b";

	assert_int_equal(oss_sched_create(&oss_sched_tbf, &s), 0);
	assert_int_equal(oss_nrs_tbf_rule_list(s, &v, &n), 0);
	assert_int_equal(n, 0);
	assert_null(v);
	assert_int_equal(start_rule(s, "hold", "H*", 0, 0.0), 0);
	assert_int_equal(start_rule(s, "hold", "X", 0, 1.0), -EEXIST);
	assert_int_equal(start_rule(s, "", "X", 0, 1.0), -EINVAL);
	assert_int_equal(start_rule(s, NULL, "X", 0, 1.0), -EINVAL);
	assert_int_equal(start_rule(s, "n", "a*b", 0, 1.0), -EINVAL);
	assert_int_equal(start_rule(s, "n", "X", 0, 2e12), -EINVAL);
	assert_int_equal(start_rule(s, "n", "X", 1u << 7, 1.0), -EINVAL);
	qos_tbf_rule_spec_init(&sp);
	sp.jobids = &bad_pat; /* cannot be written as rule text */
	sp.n_jobids = 1;
	assert_int_equal(oss_nrs_tbf_rule_start(s, "n", &sp), -EINVAL);
	assert_int_equal(oss_nrs_tbf_rule_start(s, "n", NULL), -EINVAL);
	char longname[QOS_TBF_ID_MAX + 1];
	memset(longname, 'n', QOS_TBF_ID_MAX);
	longname[QOS_TBF_ID_MAX] = 0;
	assert_int_equal(start_rule(s, longname, "X", 0, 1.0), -EINVAL);
	longname[QOS_TBF_ID_MAX - 1] = 0;
	assert_int_equal(start_rule(s, longname, NULL, 0, 1.0), 0);
	assert_int_equal(oss_nrs_tbf_rule_stop(s, longname), 0);

	/* a byte rule from rule text, ranked before "hold" */
	qos_tbf_rule tr;
	assert_int_equal(qos_tbf_rule_parse("jobid={H1} uid=3 rate=1.5MB/s rank=-1",
					    &tr, err, sizeof(err)), 0);
	assert_int_equal(oss_nrs_tbf_rule_start(s, "bytes", &tr.spec), 0);
	/* three held requests (two under "hold", one under "bytes" is
	 * served, its second held) */
	req_init(&r[0], "H2", PFS_OP_OSS_READ);
	req_init(&r[1], "H2", PFS_OP_OSS_READ);
	req_init(&r[2], "H1", PFS_OP_OSS_READ);
	r[2].uid = 3;
	for (int i = 0; i < 3; i++)
		assert_int_equal(oss_sched_enqueue(s, &r[i]), 0);
	assert_int_equal(oss_sched_dequeue(s, &out), 0); /* hold's one token */
	assert_ptr_equal(out, &r[0]);
	assert_int_equal(oss_sched_dequeue(s, &out), 0); /* bytes' full bucket */
	assert_ptr_equal(out, &r[2]);

	assert_int_equal(oss_nrs_tbf_rule_list(s, &v, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(v[0].name, "bytes");
	assert_string_equal(v[0].text,
			    "jobid={H1} uid=3 rate=1.5MB/s depth=3MiB rank=-1");
	assert_int_equal(v[0].queued, 0);
	assert_string_equal(v[1].name, "hold");
	assert_string_equal(v[1].text, "jobid={H*} rpcs=0 depth=1");
	assert_int_equal(v[1].queued, 1);
	free(v);

	/* change: depth 0 and rank INT_MIN keep; a new rank reorders */
	assert_int_equal(oss_nrs_tbf_rule_change(s, "hold", 0, 0, INT_MIN), 0);
	assert_int_equal(oss_nrs_tbf_rule_change(s, "bytes", 2e6, 0, 5), 0);
	assert_int_equal(oss_nrs_tbf_rule_change(s, "nope", 1, 0, 0), -ENOENT);
	assert_int_equal(oss_nrs_tbf_rule_change(s, "hold", -1, 0, 0), -EINVAL);
	assert_int_equal(oss_nrs_tbf_rule_change(s, "hold", NAN, 0, 0), -EINVAL);
	assert_int_equal(oss_nrs_tbf_rule_change(s, "hold", 2e12, 0, 0), -EINVAL);
	assert_int_equal(oss_nrs_tbf_rule_change(s, "hold", 1, INFINITY, 0), -EINVAL);
	assert_int_equal(oss_nrs_tbf_rule_change(s, NULL, 1, 0, 0), -EINVAL);
	assert_int_equal(oss_nrs_tbf_rule_list(s, &v, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(v[0].name, "hold");
	assert_string_equal(v[0].text, "jobid={H*} rpcs=0 depth=1");
	assert_int_equal(v[0].queued, 1);
	assert_string_equal(v[1].name, "bytes");
	assert_string_equal(v[1].text, "jobid={H1} uid=3 rate=2MB/s depth=3MiB rank=5");
	/* every listed text parses back to the rule */
	for (size_t i = 0; i < n; i++)
		assert_int_equal(qos_tbf_rule_parse(v[i].text, &tr, err, sizeof(err)), 0);
	free(v);

	/* stop re-classifies the held request: no other rule, so the
	 * fallback serves it */
	assert_int_equal(oss_nrs_tbf_rule_stop(s, "hold"), 0);
	assert_int_equal(oss_nrs_tbf_rule_stop(s, "hold"), -ENOENT);
	assert_int_equal(oss_nrs_tbf_rule_stop(s, NULL), -EINVAL);
	assert_int_equal(oss_sched_dequeue(s, &out), 0);
	assert_ptr_equal(out, &r[1]);
	assert_int_equal(oss_sched_queued(s), 0);
	assert_int_equal(oss_nrs_tbf_rule_list(s, &v, &n), 0);
	assert_int_equal(n, 1);
	free(v);
	oss_sched_shutdown(s);
	oss_sched_destroy(s);

	/* a FIFO scheduler refuses every rule call */
	assert_int_equal(oss_sched_create(&oss_sched_fifo, &fifo), 0);
	assert_int_equal(start_rule(fifo, "x", "X", 0, 1.0), -EINVAL);
	assert_int_equal(oss_nrs_tbf_rule_change(fifo, "x", 1, 0, 0), -EINVAL);
	assert_int_equal(oss_nrs_tbf_rule_stop(fifo, "x"), -EINVAL);
	v = (oss_nrs_tbf_rule_snap *)&n;
	assert_int_equal(oss_nrs_tbf_rule_list(fifo, &v, &n), -EINVAL);
	assert_null(v);
	assert_int_equal(n, 0);
	assert_int_equal(oss_nrs_tbf_set_work_conserving(fifo, 1), -EINVAL);
	oss_sched_shutdown(fifo);
	oss_sched_destroy(fifo);
}

/* Stopping a rule while another matches moves its queue there, in order,
 * and nothing is lost across start/stop/change under a backlog. */
static void test_nrs_tbf_stop_moves_to_next_rule(void **state)
{
	enum { N = 50 };
	oss_sched *s;
	oss_req r[N], *out;
	oss_nrs_tbf_rule_snap *v;
	size_t n;

	assert_int_equal(oss_sched_create(&oss_sched_tbf, &s), 0);
	assert_int_equal(start_rule(s, "exact", "J", 0, 0.0), 0);
	assert_int_equal(start_rule(s, "all", NULL, 0, 0.0), 0);
	for (int i = 0; i < N; i++) {
		req_init(&r[i], "J", PFS_OP_OSS_WRITE);
		assert_int_equal(oss_sched_enqueue(s, &r[i]), 0);
	}
	assert_int_equal(oss_sched_dequeue(s, &out), 0); /* exact's token */
	assert_ptr_equal(out, &r[0]);
	assert_int_equal(oss_nrs_tbf_rule_change(s, "all", 0, 5, -1), 0);
	assert_int_equal(oss_nrs_tbf_rule_stop(s, "exact"), 0);
	assert_int_equal(oss_nrs_tbf_rule_list(s, &v, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(v[0].name, "all");
	assert_int_equal(v[0].queued, N - 1);
	free(v);
	/* the new class's full bucket (depth 5) lets 5 through, in order */
	for (int i = 1; i <= 5; i++) {
		assert_int_equal(oss_sched_dequeue(s, &out), 0);
		assert_ptr_equal(out, &r[i]);
	}
	assert_int_equal(oss_sched_queued(s), N - 6);
	/* shutdown drains the rest, in order */
	oss_sched_shutdown(s);
	for (int i = 6; i < N; i++) {
		assert_int_equal(oss_sched_dequeue(s, &out), 0);
		assert_ptr_equal(out, &r[i]);
	}
	assert_int_equal(oss_sched_dequeue(s, &out), -ESHUTDOWN);
	oss_sched_destroy(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nrs_tbf_zero_rate_holds_job),
		cmocka_unit_test(test_nrs_tbf_control_wakes_worker),
		cmocka_unit_test(test_nrs_tbf_opcode_classes),
		cmocka_unit_test(test_nrs_tbf_no_rules_is_fifo),
		cmocka_unit_test(test_nrs_tbf_uid_and_bytes),
		cmocka_unit_test(test_nrs_tbf_rule_api),
		cmocka_unit_test(test_nrs_tbf_stop_moves_to_next_rule),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
