/* test_oss_sched.c — the NRS frame and FIFO: order, per-job statistics
 * (counts, bytes, queue depth, periods, the three clocks), shutdown waking
 * workers, a custom class that defers requests (the hook TBF uses), queue
 * caps per job and per OSS (-EBUSY, nothing queued), emulated device
 * pacing, RCC credits, and a request dispatched in its own enqueue
 * (oss_sched_enqueue_now). */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "oss/nrs_tbf.h"
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

/* A class that never serves until shutdown: the queue only grows. */
static int stuck_create(void **priv)
{
	*priv = calloc(1, sizeof(oss_req *));
	return *priv ? 0 : -ENOMEM;
}

static void stuck_destroy(void *priv) { free(priv); }

static int stuck_add(void *priv, oss_req *r, uint64_t now)
{
	oss_req **head = priv;
	r->next = *head;
	*head = r;
	r->limited = 1;
	return 0;
}

static oss_req *stuck_pick(void *priv, uint64_t now, uint64_t *wake_at)
{
	oss_req **head = priv, *r = *head;

	*wake_at = UINT64_MAX;
	if (!r || now != UINT64_MAX)
		return NULL;
	*head = r->next;
	return r;
}

static const oss_sched_class stuck_class = {
	"stuck", stuck_create, stuck_destroy, stuck_add, stuck_pick, NULL,
};

/* Per-job caps: requests and bytes; a job with nothing queued always gets
 * one request in; refusals are counted and nothing is queued. */
static void test_sched_job_caps(void **state)
{
	oss_sched_opts o = { .cls = &stuck_class, .job_max_rpcs = 3, .job_max_bytes = 1000 };
	oss_sched *s;
	oss_req r[10], big, *out;
	oss_job_snap *v;
	oss_sched_info si;
	size_t n;

	assert_int_equal(oss_sched_create_opts(&o, &s), 0);
	for (int i = 0; i < 10; i++) {
		req_init(&r[i], "a", PFS_OP_OSS_WRITE, 100);
		assert_int_equal(oss_sched_enqueue(s, &r[i]), i < 3 ? 0 : -EBUSY);
	}
	/* Larger than the byte cap, but its job has nothing queued: in. */
	req_init(&big, "b", PFS_OP_OSS_WRITE, 5000);
	assert_int_equal(oss_sched_enqueue(s, &big), 0);
	req_init(&r[9], "b", PFS_OP_OSS_WRITE, 1);
	assert_int_equal(oss_sched_enqueue(s, &r[9]), -EBUSY);
	assert_int_equal(oss_sched_queued(s), 4);
	oss_sched_info_get(s, &si);
	assert_int_equal(si.queued, 4);
	assert_int_equal(si.queued_bytes, 5300);
	assert_int_equal(si.busy_rpcs, 8);
	assert_int_equal(oss_sched_jobs(s, OSS_CLOCK_TOTAL, 0, &v, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(v[0].job, "a");
	assert_int_equal(v[0].queued, 3);
	assert_int_equal(v[0].queued_bytes, 300);
	assert_int_equal(v[0].c.busy_rpcs, 7);
	assert_int_equal(v[0].c.arrived_rpcs, 3); /* refusals are not demand */
	assert_int_equal(v[0].c.arrived_bytes, 300);
	assert_int_equal(v[1].c.busy_rpcs, 1);
	free(v);
	oss_sched_shutdown(s);
	for (int i = 0; i < 4; i++)
		assert_int_equal(oss_sched_dequeue(s, &out), 0);
	assert_int_equal(oss_sched_dequeue(s, &out), -ESHUTDOWN);
	/* Throttled time is the waiting of limited requests. */
	assert_int_equal(oss_sched_jobs(s, OSS_CLOCK_TOTAL, 0, &v, &n), 0);
	assert_int_equal(v[0].c.rpcs[OSS_OPC_WRITE], 3);
	assert_int_equal(v[0].c.throttled_us, v[0].c.wait_us);
	free(v);
	oss_sched_destroy(s);
}

/* The per-OSS budget is shared by two schedulers and released as requests
 * leave. */
static void test_sched_oss_budget(void **state)
{
	oss_sched_budget *b;
	oss_sched *s1, *s2;
	oss_req r[8], *out;
	uint64_t rpcs, bytes;

	assert_int_equal(oss_sched_budget_create(5, 1u << 20, &b), 0);
	{
		oss_sched_opts o = { .budget = b };
		assert_int_equal(oss_sched_create_opts(&o, &s1), 0);
		assert_int_equal(oss_sched_create_opts(&o, &s2), 0);
	}
	for (int i = 0; i < 8; i++) {
		req_init(&r[i], i % 2 ? "x" : "y", PFS_OP_OSS_READ, 10);
		assert_int_equal(oss_sched_enqueue(i % 2 ? s1 : s2, &r[i]), i < 5 ? 0 : -EBUSY);
	}
	oss_sched_budget_used(b, &rpcs, &bytes);
	assert_int_equal(rpcs, 5);
	assert_int_equal(bytes, 50);
	assert_int_equal(oss_sched_dequeue(s1, &out), 0);
	oss_sched_budget_used(b, &rpcs, &bytes);
	assert_int_equal(rpcs, 4);
	assert_int_equal(oss_sched_enqueue(s2, &r[7]), 0);
	/* Bytes too: a request that would pass 1 MiB is refused. */
	req_init(&r[6], "z", PFS_OP_OSS_WRITE, 1u << 20);
	assert_int_equal(oss_sched_enqueue(s1, &r[6]), -EBUSY);
	oss_sched_shutdown(s1);
	oss_sched_shutdown(s2);
	while (oss_sched_dequeue(s1, &out) == 0)
		;
	while (oss_sched_dequeue(s2, &out) == 0)
		;
	oss_sched_budget_used(b, &rpcs, &bytes);
	assert_int_equal(rpcs, 0);
	assert_int_equal(bytes, 0);
	oss_sched_destroy(s1);
	oss_sched_destroy(s2);
	oss_sched_budget_destroy(b);
}

static double mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* An emulated device of 20 MB/s: 3 MB of requests take at least the time
 * the bytes beyond one bucket (1 MiB) need; 200 RPCs/s likewise.  Lower
 * bounds only: the rate can never be beaten, a slow machine only adds. */
static void test_sched_pacing(void **state)
{
	oss_sched_opts o = { .pace_bps = 20e6 };
	oss_sched *s;
	oss_req r[30], *out;
	double t0, dt;

	assert_int_equal(oss_sched_create_opts(&o, &s), 0);
	for (int i = 0; i < 30; i++) {
		req_init(&r[i], "p", PFS_OP_OSS_WRITE, 100000);
		assert_int_equal(oss_sched_enqueue(s, &r[i]), 0);
	}
	t0 = mono();
	for (int i = 0; i < 30; i++)
		assert_int_equal(oss_sched_dequeue(s, &out), 0);
	dt = mono() - t0;
	/* 3e6 bytes, the first 1 MiB from a full bucket, the last request
	 * taken on credit: at least (3e6 - 1048576 - 1e5) / 20e6 s. */
	assert_true(dt >= (3e6 - 1048576 - 1e5) / 20e6 * 0.99);
	oss_sched_shutdown(s);
	oss_sched_destroy(s);

	o.pace_bps = 0;
	o.pace_iops = 200;
	assert_int_equal(oss_sched_create_opts(&o, &s), 0);
	for (int i = 0; i < 21; i++) {
		req_init(&r[i], "p", PFS_OP_OSS_READ, 4096);
		assert_int_equal(oss_sched_enqueue(s, &r[i]), 0);
	}
	t0 = mono();
	for (int i = 0; i < 21; i++)
		assert_int_equal(oss_sched_dequeue(s, &out), 0);
	dt = mono() - t0;
	assert_true(dt >= 19 / 200.0 * 0.99); /* one from the bucket, one on credit */
	oss_sched_shutdown(s);
	oss_sched_destroy(s);

	/* Bad rates are refused. */
	o.pace_iops = -1;
	assert_int_equal(oss_sched_create_opts(&o, &s), -EINVAL);
}

/* RCC: a reply's credit is what the client asked for while the OST is
 * lightly loaded (cnr 0 reads as RCCmax); a busy reply gets RCCmin; the
 * client table is bounded. */
static void test_sched_rcc_credits(void **state)
{
	qos_rcc_params p = { .Lmax = 0.1, .Dlow = 4, .RCCmin = 2, .RCCmax = 16 };
	oss_sched_opts o = { .rcc = &p, .rcc_clients_max = 2 };
	oss_sched *s;
	oss_req r[4], *out;
	oss_sched_info si;

	assert_int_equal(oss_sched_create_opts(&o, &s), 0);
	assert_int_equal(oss_sched_busy_credit(s), 2);
	for (int i = 0; i < 3; i++) {
		req_init(&r[i], "c", PFS_OP_OSS_READ, 10);
		r[i].client_id = 100 + (uint64_t)i; /* the third finds the table full */
		r[i].cnr = i == 0 ? 7 : 0;
		assert_int_equal(oss_sched_enqueue(s, &r[i]), 0);
	}
	oss_sched_info_get(s, &si);
	assert_int_equal(si.rcc.D, 2);
	assert_int_equal(si.rcc.C, 2);
	assert_int_equal(si.rcc.clients, 2);
	assert_int_equal(oss_sched_dequeue(s, &out), 0);
	assert_int_equal(oss_sched_done(s, out), 7);   /* light load: cnr */
	assert_int_equal(oss_sched_dequeue(s, &out), 0);
	assert_int_equal(oss_sched_done(s, out), 16);  /* cnr 0: RCCmax */
	assert_int_equal(oss_sched_dequeue(s, &out), 0);
	assert_int_equal(oss_sched_done(s, out), 0);   /* no record: no grant */
	oss_sched_info_get(s, &si);
	assert_int_equal(si.rcc.D, 0);
	assert_int_equal(si.rcc.credit, 16);
	oss_sched_shutdown(s);
	oss_sched_destroy(s);

	/* Without RCC: no credits, no lock. */
	assert_int_equal(oss_sched_create(NULL, &s), 0);
	req_init(&r[3], "c", PFS_OP_OSS_READ, 10);
	assert_int_equal(oss_sched_enqueue(s, &r[3]), 0);
	assert_int_equal(oss_sched_dequeue(s, &out), 0);
	assert_int_equal(oss_sched_done(s, out), 0);
	assert_int_equal(oss_sched_busy_credit(s), 0);
	oss_sched_shutdown(s);
	oss_sched_destroy(s);
}

/* A request a rate rule holds is policy, not congestion: it is not
 * counted in RCC's D and its reply carries no grant (the client keeps its
 * credit), so a throttled job cannot drive the credit of its clients, and
 * of their other jobs, down to RCCmin.  An unlimited request of the same
 * client is counted and granted as before. */
static void test_sched_rcc_ignores_limited(void **state)
{
	qos_rcc_params p = { .Lmax = 0.1, .Dlow = 4, .RCCmin = 2, .RCCmax = 16 };
	oss_sched_opts o = { .cls = &oss_sched_tbf, .rcc = &p };
	qos_tbf_rule_spec sp;
	const char *jobs[] = { "slow" };
	oss_sched *s;
	oss_req r[2], *out;
	oss_sched_info si;

	assert_int_equal(oss_sched_create_opts(&o, &s), 0);
	qos_tbf_rule_spec_init(&sp);
	sp.jobids = jobs;
	sp.n_jobids = 1;
	sp.rate = 1e6; /* RPCs/s: its one request goes at once */
	assert_int_equal(oss_nrs_tbf_rule_start(s, "r", &sp), 0);
	req_init(&r[0], "slow", PFS_OP_OSS_READ, 10);
	req_init(&r[1], "fast", PFS_OP_OSS_READ, 10);
	r[0].client_id = r[1].client_id = 7;
	r[0].cnr = r[1].cnr = 5;
	assert_int_equal(oss_sched_enqueue(s, &r[0]), 0);
	assert_int_equal(r[0].limited, 1);
	oss_sched_info_get(s, &si);
	assert_int_equal(si.rcc.D, 0);
	assert_int_equal(oss_sched_enqueue(s, &r[1]), 0);
	assert_int_equal(r[1].limited, 0);
	oss_sched_info_get(s, &si);
	assert_int_equal(si.rcc.D, 1);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(oss_sched_dequeue(s, &out), 0);
		assert_int_equal(oss_sched_done(s, out), out == &r[0] ? 0 : 5);
	}
	oss_sched_shutdown(s);
	oss_sched_destroy(s);
}

/* The MDS period and the loop period are separate clocks: closing one
 * leaves the other and the totals alone; backlog is the queue when a
 * period began. */
static void test_sched_clocks(void **state)
{
	oss_sched *s;
	oss_req r[3], *out;
	oss_job_snap *v;
	size_t n;

	assert_int_equal(oss_sched_create(NULL, &s), 0);
	for (int i = 0; i < 3; i++) {
		req_init(&r[i], "k", PFS_OP_OSS_WRITE, 10);
		assert_int_equal(oss_sched_enqueue(s, &r[i]), 0);
	}
	assert_int_equal(oss_sched_dequeue(s, &out), 0);
	assert_int_equal(oss_sched_jobs(s, OSS_CLOCK_LOOP, 1, &v, &n), 0);
	assert_int_equal(v[0].c.arrived_rpcs, 3);
	assert_int_equal(v[0].c.rpcs[OSS_OPC_WRITE], 1);
	assert_int_equal(v[0].backlog, 0);
	free(v);
	assert_int_equal(oss_sched_jobs(s, OSS_CLOCK_LOOP, 0, &v, &n), 0);
	assert_int_equal(v[0].c.arrived_rpcs, 0);
	assert_int_equal(v[0].backlog, 2); /* queued when the period began */
	free(v);
	assert_int_equal(oss_sched_jobs(s, OSS_CLOCK_MDS, 1, &v, &n), 0);
	assert_int_equal(v[0].c.arrived_rpcs, 3); /* untouched by the loop's reset */
	free(v);
	assert_int_equal(oss_sched_jobs(s, OSS_CLOCK_MDS, 0, &v, &n), 0);
	assert_int_equal(v[0].c.arrived_rpcs, 0);
	free(v);
	assert_int_equal(oss_sched_jobs(s, OSS_CLOCK_TOTAL, 0, &v, &n), 0);
	assert_int_equal(v[0].c.arrived_rpcs, 3);
	assert_int_equal(v[0].c.arrived_bytes, 30);
	free(v);
	assert_int_equal(oss_sched_jobs(s, OSS_CLOCK_TOTAL, 1, &v, &n), -EINVAL);
	assert_int_equal(oss_sched_jobs(s, 7, 0, &v, &n), -EINVAL);
	oss_sched_shutdown(s);
	while (oss_sched_dequeue(s, &out) == 0)
		;
	oss_sched_destroy(s);
}

/* A full job table refuses new jobs busy (bounded memory). */
static void test_sched_job_table_bound(void **state)
{
	oss_sched_opts o = { .jobs_max = 2 };
	oss_sched *s;
	oss_req r[3], *out;
	oss_sched_info si;

	assert_int_equal(oss_sched_create_opts(&o, &s), 0);
	req_init(&r[0], "one", PFS_OP_OSS_READ, 1);
	req_init(&r[1], "two", PFS_OP_OSS_READ, 1);
	req_init(&r[2], "three", PFS_OP_OSS_READ, 1);
	assert_int_equal(oss_sched_enqueue(s, &r[0]), 0);
	assert_int_equal(oss_sched_enqueue(s, &r[1]), 0);
	assert_int_equal(oss_sched_enqueue(s, &r[2]), -EBUSY);
	oss_sched_info_get(s, &si);
	assert_int_equal(si.busy_rpcs, 1);
	assert_int_equal(si.jobs, 2);
	for (int i = 0; i < 2; i++)
		assert_int_equal(oss_sched_dequeue(s, &out), 0);
	oss_sched_maintain(s, 0); /* both idle now: dropped, room again */
	assert_int_equal(oss_sched_enqueue(s, &r[2]), 0);
	oss_sched_shutdown(s);
	while (oss_sched_dequeue(s, &out) == 0)
		;
	oss_sched_destroy(s);
}

/* oss_sched_enqueue_now (the OSS serves small READs on its loop): a
 * request alone, picked at once, is dispatched in the call with
 * dequeue's statistics; behind another, held by its class or on a paced
 * device it is queued as by enqueue. */
static void test_sched_enqueue_now(void **state)
{
	oss_sched_opts po = { .pace_bps = 20e6 };
	oss_sched_info info;
	oss_sched *s;
	oss_req r[3], *out;
	size_t n = 0;
	pfs_job_stats *js = NULL;
	int now = -1;

	assert_int_equal(oss_sched_create(NULL, &s), 0);
	req_init(&r[0], "a", PFS_OP_OSS_READ, 4096);
	assert_int_equal(oss_sched_enqueue_now(s, &r[0], &now), 0);
	assert_int_equal(now, 1);
	assert_int_equal(oss_sched_queued(s), 0);
	oss_sched_info_get(s, &info);
	assert_int_equal(info.served_io_rpcs, 1);
	assert_int_equal(info.served_bytes, 4096);
	assert_int_equal(info.queued_bytes, 0);
	(void)oss_sched_done(s, &r[0]);
	assert_int_equal(oss_sched_stats(s, OSS_SCHED_TOTAL, &js, &n), 0);
	assert_non_null(find(js, n, "a"));
	assert_int_equal(find(js, n, "a")->read_rpcs, 1);
	free(js);
	/* behind another request: queued, in order */
	req_init(&r[1], "a", PFS_OP_OSS_WRITE, 10);
	req_init(&r[2], "b", PFS_OP_OSS_READ, 10);
	assert_int_equal(oss_sched_enqueue(s, &r[1]), 0);
	assert_int_equal(oss_sched_enqueue_now(s, &r[2], &now), 0);
	assert_int_equal(now, 0);
	assert_int_equal(oss_sched_queued(s), 2);
	assert_int_equal(oss_sched_dequeue(s, &out), 0);
	assert_ptr_equal(out, &r[1]);
	assert_int_equal(oss_sched_dequeue(s, &out), 0);
	assert_ptr_equal(out, &r[2]);
	oss_sched_shutdown(s);
	assert_int_equal(oss_sched_enqueue_now(s, &r[0], &now), -ESHUTDOWN);
	assert_int_equal(now, 0);
	oss_sched_destroy(s);

	/* a class that holds its requests: queued */
	assert_int_equal(oss_sched_create(&hold_class, &s), 0);
	req_init(&r[0], "h", PFS_OP_OSS_READ, 10);
	assert_int_equal(oss_sched_enqueue_now(s, &r[0], &now), 0);
	assert_int_equal(now, 0);
	assert_int_equal(oss_sched_queued(s), 1);
	oss_sched_shutdown(s);
	assert_int_equal(oss_sched_dequeue(s, &out), 0);
	oss_sched_destroy(s);

	/* an emulated device: every request waits for it */
	assert_int_equal(oss_sched_create_opts(&po, &s), 0);
	req_init(&r[0], "p", PFS_OP_OSS_READ, 10);
	assert_int_equal(oss_sched_enqueue_now(s, &r[0], &now), 0);
	assert_int_equal(now, 0);
	assert_int_equal(oss_sched_queued(s), 1);
	assert_int_equal(oss_sched_dequeue(s, &out), 0);
	oss_sched_shutdown(s);
	oss_sched_destroy(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sched_enqueue_now),
		cmocka_unit_test(test_sched_fifo_order),
		cmocka_unit_test(test_sched_job_stats),
		cmocka_unit_test(test_sched_idle_jobs_forgotten),
		cmocka_unit_test(test_sched_shutdown_wakes_workers),
		cmocka_unit_test(test_sched_shutdown_drains_queue),
		cmocka_unit_test(test_sched_custom_class),
		cmocka_unit_test(test_sched_job_caps),
		cmocka_unit_test(test_sched_oss_budget),
		cmocka_unit_test(test_sched_pacing),
		cmocka_unit_test(test_sched_rcc_credits),
		cmocka_unit_test(test_sched_rcc_ignores_limited),
		cmocka_unit_test(test_sched_clocks),
		cmocka_unit_test(test_sched_job_table_bound),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
