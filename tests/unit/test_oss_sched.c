/* test_oss_sched.c — the NRS frame and FIFO: order, per-job statistics
 * (counts, bytes, queue depth, periods), shutdown waking workers, and a
 * custom class that defers requests (the hook TBF will use). */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "oss/sched.h"

static void req_init(oss_req *r, const char *job, uint16_t op, uint64_t bytes)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->job, sizeof(r->job), "%s", job);
	r->opcode = op;
	r->bytes = bytes;
}

static const pfs_job_stats *find(const pfs_job_stats *v, size_t n, const char *job)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i].job, job))
			return &v[i];
	return NULL;
}

static void test_sched_fifo_order(void **state)
{
	oss_sched *s;
	oss_req r[10], *out;

	assert_int_equal(oss_sched_create(NULL, &s), 0);
	assert_string_equal(oss_sched_name(s), "fifo");
	for (int i = 0; i < 10; i++) {
		req_init(&r[i], i % 2 ? "a" : "b", PFS_OP_OSS_READ, (uint64_t)i);
		assert_int_equal(oss_sched_enqueue(s, &r[i]), 0);
	}
	assert_int_equal(oss_sched_queued(s), 10);
	for (int i = 0; i < 10; i++) {
		assert_int_equal(oss_sched_dequeue(s, &out), 0);
		assert_ptr_equal(out, &r[i]);
	}
	assert_int_equal(oss_sched_queued(s), 0);
	oss_sched_shutdown(s);
	oss_sched_destroy(s);
}

static void test_sched_job_stats(void **state)
{
	oss_sched *s;
	oss_req r[7], *out;
	pfs_job_stats *v;
	const pfs_job_stats *a, *b;
	size_t n;

	assert_int_equal(oss_sched_create(&oss_sched_fifo, &s), 0);
	req_init(&r[0], "jobA", PFS_OP_OSS_READ, 4096);
	req_init(&r[1], "jobA", PFS_OP_OSS_READ, 100);
	req_init(&r[2], "jobA", PFS_OP_OSS_WRITE, 1000);
	req_init(&r[3], "jobB", PFS_OP_OSS_WRITE, 65536);
	req_init(&r[4], "jobB", PFS_OP_OSS_STAT, 0);
	req_init(&r[5], "jobB", PFS_OP_OSS_TRUNCATE, 0);
	req_init(&r[6], "jobA", PFS_OP_OSS_WRITE, 5);
	/* Arrival times in the past give a known minimum queueing delay. */
	for (int i = 0; i < 7; i++) {
		r[i].arrival_us = 1;
		assert_int_equal(oss_sched_enqueue(s, &r[i]), 0);
	}
	/* Depth before anything is served; no RPCs counted yet. */
	assert_int_equal(oss_sched_stats(s, OSS_SCHED_TOTAL, &v, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(v[0].job, "jobA"); /* sorted */
	assert_int_equal(v[0].queued, 4);
	assert_int_equal(v[1].queued, 3);
	assert_int_equal(v[0].read_rpcs + v[0].write_rpcs + v[0].other_rpcs, 0);
	free(v);
	/* Serve five of seven. */
	for (int i = 0; i < 5; i++)
		assert_int_equal(oss_sched_dequeue(s, &out), 0);
	assert_int_equal(oss_sched_stats(s, OSS_SCHED_PERIOD, &v, &n), 0);
	a = find(v, n, "jobA");
	b = find(v, n, "jobB");
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(a->read_rpcs, 2);
	assert_int_equal(a->read_bytes, 4196);
	assert_int_equal(a->write_rpcs, 1);
	assert_int_equal(a->write_bytes, 1000);
	assert_int_equal(a->other_rpcs, 0);
	assert_int_equal(a->queued, 1);
	assert_int_equal(b->write_rpcs, 1);
	assert_int_equal(b->write_bytes, 65536);
	assert_int_equal(b->other_rpcs, 1);
	assert_int_equal(b->queued, 1);
	assert_true(a->wait_us_sum > 0);
	free(v);
	/* Close the period: the next one starts at zero, totals keep counting. */
	assert_int_equal(oss_sched_stats(s, OSS_SCHED_PERIOD_RESET, &v, &n), 0);
	free(v);
	for (int i = 0; i < 2; i++)
		assert_int_equal(oss_sched_dequeue(s, &out), 0);
	assert_int_equal(oss_sched_stats(s, OSS_SCHED_PERIOD, &v, &n), 0);
	a = find(v, n, "jobA");
	b = find(v, n, "jobB");
	assert_int_equal(a->write_rpcs, 1);
	assert_int_equal(a->write_bytes, 5);
	assert_int_equal(a->read_rpcs, 0);
	assert_int_equal(a->queued, 0);
	assert_int_equal(b->other_rpcs, 1);
	assert_int_equal(b->write_rpcs, 0);
	free(v);
	assert_int_equal(oss_sched_stats(s, OSS_SCHED_TOTAL, &v, &n), 0);
	a = find(v, n, "jobA");
	b = find(v, n, "jobB");
	assert_int_equal(a->write_rpcs, 2);
	assert_int_equal(a->write_bytes, 1005);
	assert_int_equal(a->read_rpcs, 2);
	assert_int_equal(b->other_rpcs, 2);
	assert_int_equal(b->write_bytes, 65536);
	free(v);
	oss_sched_shutdown(s);
	oss_sched_destroy(s);
}

static void test_sched_idle_jobs_forgotten(void **state)
{
	oss_sched *s;
	oss_req r, q, *out;
	pfs_job_stats *v;
	size_t n;

	assert_int_equal(oss_sched_create(NULL, &s), 0);
	req_init(&r, "short", PFS_OP_OSS_READ, 1);
	req_init(&q, "queued", PFS_OP_OSS_READ, 1);
	assert_int_equal(oss_sched_enqueue(s, &r), 0);
	assert_int_equal(oss_sched_dequeue(s, &out), 0);
	assert_int_equal(oss_sched_enqueue(s, &q), 0);
	/* Recently active: kept. */
	oss_sched_maintain(s, 3600u * 1000000u);
	assert_int_equal(oss_sched_stats(s, OSS_SCHED_TOTAL, &v, &n), 0);
	assert_int_equal(n, 2);
	free(v);
	/* Idle bound 0: the idle job goes, the one with a request queued
	 * stays however long it has waited. */
	oss_sched_maintain(s, 0);
	assert_int_equal(oss_sched_stats(s, OSS_SCHED_TOTAL, &v, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(v[0].job, "queued");
	free(v);
	assert_int_equal(oss_sched_dequeue(s, &out), 0);
	oss_sched_maintain(s, 0);
	assert_int_equal(oss_sched_stats(s, OSS_SCHED_TOTAL, &v, &n), 0);
	assert_int_equal(n, 0);
	assert_null(v);
	oss_sched_shutdown(s);
	oss_sched_destroy(s);
}

typedef struct worker {
	oss_sched *s;
	int rc;
	int served;
} worker;

static void *worker_main(void *arg)
{
	worker *w = arg;
	oss_req *r;

	while ((w->rc = oss_sched_dequeue(w->s, &r)) == 0)
		w->served++;
	return NULL;
}

static void test_sched_shutdown_wakes_workers(void **state)
{
	oss_sched *s;
	pthread_t th[4];
	worker w[4];
	oss_req r[3];
	int served = 0;

	assert_int_equal(oss_sched_create(NULL, &s), 0);
	for (int i = 0; i < 4; i++) {
		w[i].s = s;
		w[i].rc = 0;
		w[i].served = 0;
		assert_int_equal(pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
	}
	for (int i = 0; i < 3; i++) {
		req_init(&r[i], "j", PFS_OP_OSS_SYNC, 0);
		assert_int_equal(oss_sched_enqueue(s, &r[i]), 0);
	}
	/* Blocked workers return from shutdown without busy waiting; what
	 * was queued is still handed out. */
	oss_sched_shutdown(s);
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(w[i].rc, -ESHUTDOWN);
		served += w[i].served;
	}
	assert_int_equal(served, 3);
	req_init(&r[0], "j", PFS_OP_OSS_SYNC, 0);
	assert_int_equal(oss_sched_enqueue(s, &r[0]), -ESHUTDOWN);
	oss_sched_destroy(s);
}

static void test_sched_shutdown_drains_queue(void **state)
{
	oss_sched *s;
	oss_req r[2], *out;

	assert_int_equal(oss_sched_create(NULL, &s), 0);
	req_init(&r[0], "j", PFS_OP_OSS_READ, 1);
	req_init(&r[1], "j", PFS_OP_OSS_READ, 1);
	assert_int_equal(oss_sched_enqueue(s, &r[0]), 0);
	assert_int_equal(oss_sched_enqueue(s, &r[1]), 0);
	oss_sched_shutdown(s);
	assert_int_equal(oss_sched_dequeue(s, &out), 0);
	assert_ptr_equal(out, &r[0]);
	assert_int_equal(oss_sched_dequeue(s, &out), 0);
	assert_ptr_equal(out, &r[1]);
	assert_int_equal(oss_sched_dequeue(s, &out), -ESHUTDOWN);
	oss_sched_destroy(s);
}

/* A class that holds every request until "released", then serves them in
 * reverse order: stands in for a rate-limited discipline. */
typedef struct hold {
	oss_req *stack;
	int released;
	uint64_t asked_wake;
} hold;

static hold *the_hold;

static int hold_create(void **priv)
{
	the_hold = calloc(1, sizeof(hold));
	*priv = the_hold;
	return the_hold ? 0 : -ENOMEM;
}

static void hold_destroy(void *priv) { free(priv); }

static int hold_add(void *priv, oss_req *r, uint64_t now)
{
	hold *h = priv;
	r->next = h->stack;
	h->stack = r;
	return 0;
}

static oss_req *hold_pick(void *priv, uint64_t now, uint64_t *wake_at)
{
	hold *h = priv;
	oss_req *r = h->stack;

	if (!r) {
		*wake_at = UINT64_MAX;
		return NULL;
	}
	if (!h->released && now != UINT64_MAX) {
		*wake_at = now + 1000; /* "tokens in 1 ms" */
		__atomic_add_fetch(&h->asked_wake, 1, __ATOMIC_SEQ_CST);
		return NULL;
	}
	h->stack = r->next;
	return r;
}

static const oss_sched_class hold_class = {
	"hold", hold_create, hold_destroy, hold_add, hold_pick, NULL,
};

static void test_sched_custom_class(void **state)
{
	oss_sched *s;
	pthread_t th;
	worker w;
	oss_req r[3];

	assert_int_equal(oss_sched_create(&hold_class, &s), 0);
	assert_string_equal(oss_sched_name(s), "hold");
	w.s = s;
	w.rc = 0;
	w.served = 0;
	for (int i = 0; i < 3; i++) {
		req_init(&r[i], "j", PFS_OP_OSS_WRITE, 10);
		assert_int_equal(oss_sched_enqueue(s, &r[i]), 0);
	}
	assert_int_equal(pthread_create(&th, NULL, worker_main, &w), 0);
	/* The worker keeps asking (timed waits) and gets nothing. */
	while (__atomic_load_n(&the_hold->asked_wake, __ATOMIC_SEQ_CST) < 3)
		usleep(1000);
	assert_int_equal(oss_sched_queued(s), 3);
	/* Shutdown ignores the class's limits: everything is handed out. */
	oss_sched_shutdown(s);
	pthread_join(th, NULL);
	assert_int_equal(w.served, 3);
	assert_int_equal(w.rc, -ESHUTDOWN);
	oss_sched_destroy(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sched_fifo_order),
		cmocka_unit_test(test_sched_job_stats),
		cmocka_unit_test(test_sched_idle_jobs_forgotten),
		cmocka_unit_test(test_sched_shutdown_wakes_workers),
		cmocka_unit_test(test_sched_shutdown_drains_queue),
		cmocka_unit_test(test_sched_custom_class),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
