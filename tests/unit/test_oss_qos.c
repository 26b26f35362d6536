/* test_oss_qos.c — the OSS QoS engine through its control port, in-process
 * (two temporary OSTs, indexes 5 and 6, OST 5 with an emulated capacity of
 * 100 MiB/s, the QoS loop driven by hand with synthetic times): MDS
 * allocation sets (rules installed, changed in place under a backlog
 * without losing a request, stopped when gone, older generations ignored,
 * garbage refused with nothing changed), AdapTBF shares 10/10/30/50 % from
 * node counts 1/1/3/5 on a saturated OST, admin NRS rules, queue caps
 * (-EBUSY, the queue stays at the cap), RCC credits in reply headers,
 * QOS_STATS and the Prometheus families. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "oss/blkio.h"

#include <cmocka.h>

#include "common/buf.h"
#include "common/log.h"
#include "common/metrics.h"
#include "common/net.h"
#include "common/qosmsg.h"
#include "common/rpc.h"
#include "oss/nrs_tbf.h"
#include "oss/server.h"

#define OST_A 5   /* slot 0, 100 MiB/s emulated */
#define OST_B 6   /* slot 1, capacity measured */
#define JOB_CAP 8 /* job_max_rpcs */
#define MIB 1048576.0

typedef struct fixture {
	char tmp[64];
	oss_store *st[2];
	oss_server *srv;
	pfs_rpc_pool *data, *ctl;
} fixture;

static void quiet(int level, const char *msg, void *arg) {}

static int setup(void **state)
{
	fixture *f = calloc(1, sizeof(*f));
	static const double bps[2] = { 100 * MIB, 0 };
	oss_server_opts so = { 0 };
	pfs_rpc_opts ro = { 0 };
	char err[256], dir[128];

	pfs_log_set_sink(quiet, NULL);
	snprintf(f->tmp, sizeof(f->tmp), "/tmp/pfs-test-qos-XXXXXX");
	if (!mkdtemp(f->tmp))
		return -1;
	for (int i = 0; i < 2; i++) {
		snprintf(dir, sizeof(dir), "%s/ost%d", f->tmp, i);
		if (oss_store_open(dir, NULL, &f->st[i], err, sizeof(err)))
			return -1;
	}
	so.host = "127.0.0.1";
	so.io_threads = 2;
	so.osts = f->st;
	so.n_osts = 2;
	so.job_max_rpcs = JOB_CAP;
	so.ost_bps = bps;
	so.qos_no_thread = 1;
	if (oss_server_start(&so, &f->srv, err, sizeof(err))) {
		fprintf(stderr, "start: %s\n", err);
		return -1;
	}
	if (oss_server_set_index(f->srv, 0, OST_A) || oss_server_set_index(f->srv, 1, OST_B))
		return -1;
	ro.max_conns = 4;
	ro.timeout_ms = 10000;
	ro.retry_ms = 100;
	ro.client_id = 77;
	if (pfs_rpc_pool_create("127.0.0.1", oss_server_data_port(f->srv), &ro, &f->data) ||
	    pfs_rpc_pool_create("127.0.0.1", oss_server_ctl_port(f->srv), &ro, &f->ctl))
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;
	char cmd[128];

	pfs_rpc_pool_destroy(f->data);
	pfs_rpc_pool_destroy(f->ctl);
	oss_server_stop(f->srv);
	oss_store_close(f->st[0]);
	oss_store_close(f->st[1]);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->tmp);
	if (system(cmd))
		return -1;
	free(f);
	pfs_log_set_sink(NULL, NULL);
	return 0;
}

/* ---- control helpers ---- */

static int ctl(fixture *f, uint16_t op, const void *p, size_t len, pfs_rpc_reply *rep)
{
	pfs_rpc_reply local = { 0 };
	int rc;

	if (!rep)
		rep = &local;
	pfs_rpc_reply_init(rep);
	rc = pfs_rpc_call(f->ctl, op, NULL, 0, p, len, NULL, 0, rep);
	if (rep == &local)
		pfs_rpc_reply_free(&local);
	return rc;
}

static int qos_set(fixture *f, uint64_t gen, uint8_t mode, const pfs_qos_alloc *rows,
		   uint32_t n)
{
	pfs_qos_alloc_set set = { gen, mode, 0.1, n, (pfs_qos_alloc *)rows };
	pfs_wbuf w;
	int rc;

	pfs_wbuf_init(&w);
	pfs_qos_alloc_set_encode(&w, &set);
	assert_int_equal(pfs_wbuf_error(&w), 0);
	rc = ctl(f, PFS_OP_OSS_QOS_SET, w.data, w.len, NULL);
	pfs_wbuf_free(&w);
	return rc;
}

static int nrs(fixture *f, uint8_t verb, const char *name, const char *text)
{
	pfs_wbuf w;
	int rc;

	pfs_wbuf_init(&w);
	pfs_wbuf_u8(&w, verb);
	pfs_wbuf_str(&w, name);
	if (text)
		pfs_wbuf_str(&w, text);
	rc = ctl(f, PFS_OP_OSS_NRS_RULE, w.data, w.len, NULL);
	pfs_wbuf_free(&w);
	return rc;
}

typedef struct rules {
	size_t n;
	pfs_nrs_rule_info r[64];
} rules;

static int list_rules(fixture *f, const char *name, rules *out)
{
	pfs_rpc_reply rep = { 0 };
	pfs_wbuf w;
	pfs_rbuf b;
	int rc;

	pfs_wbuf_init(&w);
	pfs_wbuf_u8(&w, PFS_NRS_LIST);
	pfs_wbuf_str(&w, name);
	rc = ctl(f, PFS_OP_OSS_NRS_RULE, w.data, w.len, &rep);
	pfs_wbuf_free(&w);
	out->n = 0;
	if (rc == 0) {
		pfs_rbuf_init(&b, rep.data, rep.len);
		out->n = pfs_rbuf_u32(&b);
		assert_true(out->n <= 64);
		for (size_t i = 0; i < out->n; i++)
			assert_int_equal(pfs_nrs_rule_info_decode(&b, &out->r[i]), 0);
		assert_int_equal(pfs_rbuf_done(&b), 0);
	}
	pfs_rpc_reply_free(&rep);
	return rc;
}

static const pfs_nrs_rule_info *rule(const rules *rs, const char *name, uint32_t ost)
{
	for (size_t i = 0; i < rs->n; i++)
		if (!strcmp(rs->r[i].name, name) && rs->r[i].ost == ost)
			return &rs->r[i];
	return NULL;
}

typedef struct stats {
	uint64_t snapshot_ns;
	double period;
	uint32_t n_osts, n;
	pfs_qos_ost_info ost[4];
	pfs_qos_stat s[64];
} stats;

static void get_stats(fixture *f, uint8_t mode, stats *st)
{
	pfs_rpc_reply rep = { 0 };
	pfs_rbuf b;

	assert_int_equal(ctl(f, PFS_OP_OSS_QOS_STATS, &mode, 1, &rep), 0);
	pfs_rbuf_init(&b, rep.data, rep.len);
	st->snapshot_ns = pfs_rbuf_u64(&b);
	st->period = pfs_rbuf_f64(&b);
	st->n_osts = pfs_rbuf_u32(&b);
	assert_true(st->n_osts <= 4);
	for (uint32_t i = 0; i < st->n_osts; i++)
		assert_int_equal(pfs_qos_ost_info_decode(&b, &st->ost[i]), 0);
	st->n = pfs_rbuf_u32(&b);
	assert_true(st->n <= 64);
	for (uint32_t i = 0; i < st->n; i++)
		assert_int_equal(pfs_qos_stat_decode(&b, &st->s[i]), 0);
	assert_int_equal(pfs_rbuf_done(&b), 0);
	pfs_rpc_reply_free(&rep);
}

static const pfs_qos_stat *stat_of(const stats *st, const char *job, uint32_t ost)
{
	for (uint32_t i = 0; i < st->n; i++)
		if (!strcmp(st->s[i].job, job) && st->s[i].ost == ost)
			return &st->s[i];
	return NULL;
}

/* ---- data helpers ---- */

static int write_tag(fixture *f, const char *job, uint32_t ost, uint64_t obj, size_t len,
		     uint32_t cnr, uint32_t *credit)
{
	static uint8_t data[1 << 20];
	pfs_rpc_tag tag = { job, 1000, 1000, cnr };
	pfs_rpc_reply rep = { 0 };
	pfs_wbuf w;
	int rc;

	pfs_wbuf_init(&w);
	pfs_wbuf_u32(&w, ost);
	pfs_wbuf_u64(&w, obj);
	pfs_wbuf_u64(&w, 0);
	pfs_wbuf_u32(&w, (uint32_t)len);
	pfs_rpc_reply_init(&rep);
	rc = pfs_rpc_call_tag(f->data, PFS_OP_OSS_WRITE, &tag, 0, w.data, w.len, data, len, &rep);
	if (credit)
		*credit = rep.hdr.credit;
	pfs_rpc_reply_free(&rep);
	pfs_wbuf_free(&w);
	return rc;
}

static int raw_connect(uint16_t port)
{
	int fd = -1;

	assert_int_equal(pfs_net_connect("127.0.0.1", port, 5000, &fd), 0);
	assert_int_equal(pfs_net_set_timeout(fd, 10000), 0);
	return fd;
}

/* Send n writes of len bytes for job without waiting; request ids from id0. */
static void send_writes(int fd, const char *job, uint32_t ost, int n, size_t len, uint64_t id0)
{
	static uint8_t data[1 << 20];
	pfs_wbuf w;

	pfs_wbuf_init(&w);
	for (int i = 0; i < n; i++) {
		pfs_hdr h;
		pfs_wbuf_reset(&w);
		pfs_wbuf_u32(&w, ost);
		pfs_wbuf_u64(&w, 1000 + id0 + (uint64_t)i);
		pfs_wbuf_u64(&w, 0);
		pfs_wbuf_u32(&w, (uint32_t)len);
		pfs_hdr_init(&h, PFS_OP_OSS_WRITE, id0 + (uint64_t)i, 9, job);
		assert_int_equal(pfs_net_send_frame(fd, &h, w.data, w.len, data, len), 0);
	}
	pfs_wbuf_free(&w);
}

/* Read n replies; count those with status 0 and -EBUSY. */
static void recv_replies(int fd, int n, int *ok, int *busy, uint32_t *busy_credit)
{
	*ok = *busy = 0;
	for (int i = 0; i < n; i++) {
		pfs_hdr r;
		uint8_t *dyn = NULL, *data;

		assert_int_equal(pfs_net_recv_frame(fd, &r, PFS_MAX_PAYLOAD, NULL, 0, &dyn, &data), 0);
		if (r.status == 0)
			(*ok)++;
		else if (r.status == -EBUSY) {
			(*busy)++;
			if (busy_credit)
				*busy_credit = r.credit;
		} else
			fail_msg("unexpected status %d", r.status);
		free(dyn);
	}
}

/* Wait (generously; not a speed test) until slot has n requests queued. */
static void wait_queued(fixture *f, size_t slot, unsigned n)
{
	for (int i = 0; i < 20000 && oss_sched_queued(oss_server_sched(f->srv, slot)) != n; i++)
		usleep(1000);
	assert_int_equal(oss_sched_queued(oss_server_sched(f->srv, slot)), n);
}

/* ---- tests ---- */

/* MDS rates become mds.<job> byte rules; a rate change under a backlog
 * changes the rule in place and every queued request is answered; jobs
 * missing from a newer set lose their rule; older sets are ignored;
 * MODE_NONE removes policy rules and keeps admin rules. */
static void test_qos_set_rates(void **state)
{
	fixture *f = *state;
	pfs_qos_alloc rows[2] = { { "slow", PFS_QOS_OST_ALL, 1.0, 1 },
				  { "fast", OST_A, 1e9, 2 } };
	rules rs;
	stats st;
	int fd, ok, busy;

	assert_int_equal(nrs(f, PFS_NRS_START, "admin1", "jobid={zz} rpcs=1000"), 0);
	assert_int_equal(qos_set(f, 1, PFS_QOS_MODE_RATES, rows, 2), 0);
	assert_int_equal(oss_qos_mode(oss_server_qos(f->srv), 0), PFS_QOS_MODE_RATES);
	assert_int_equal(list_rules(f, "", &rs), 0);
	assert_int_equal(rs.n, 4); /* admin1, mds.slow x2, mds.fast */
	assert_non_null(rule(&rs, "mds.slow", OST_A));
	assert_non_null(rule(&rs, "mds.slow", OST_B));
	assert_non_null(rule(&rs, "mds.fast", OST_A));
	assert_null(rule(&rs, "mds.fast", OST_B));
	assert_int_equal(rule(&rs, "mds.fast", OST_A)->origin, PFS_NRS_ORIGIN_MDS);
	assert_non_null(strstr(rule(&rs, "mds.fast", OST_A)->expr, "rate=1GB/s"));
	assert_int_equal(rule(&rs, "admin1", PFS_QOS_OST_ALL)->origin, PFS_NRS_ORIGIN_ADMIN);

	/* 1 byte/s with a 3 MiB bucket: three 1 MiB writes pass, three wait. */
	fd = raw_connect(oss_server_data_port(f->srv));
	send_writes(fd, "slow", OST_A, 6, 1 << 20, 1);
	recv_replies(fd, 3, &ok, &busy, NULL);
	assert_int_equal(ok, 3);
	wait_queued(f, 0, 3);
	get_stats(f, PFS_QOS_STATS_TOTAL, &st);
	assert_non_null(stat_of(&st, "slow", OST_A));
	assert_int_equal(stat_of(&st, "slow", OST_A)->queued, 3);
	assert_int_equal(stat_of(&st, "slow", OST_A)->queued_bytes, 3u << 20);
	assert_int_equal(stat_of(&st, "slow", OST_A)->arrived_rpcs, 6);
	assert_true(stat_of(&st, "slow", OST_A)->rate == 1.0);
	assert_true(stat_of(&st, "slow", OST_A)->nodes == 1);
	assert_true(stat_of(&st, "slow", OST_A)->tokens == -1);

	/* Change the rate: in place, the backlog is served, nothing lost. */
	rows[0].rate = 1e12;
	assert_int_equal(qos_set(f, 2, PFS_QOS_MODE_RATES, rows, 2), 0);
	recv_replies(fd, 3, &ok, &busy, NULL);
	assert_int_equal(ok, 3);
	close(fd);
	get_stats(f, PFS_QOS_STATS_TOTAL, &st);
	assert_int_equal(stat_of(&st, "slow", OST_A)->write_rpcs, 6);
	assert_int_equal(stat_of(&st, "slow", OST_A)->queued, 0);
	assert_true(stat_of(&st, "slow", OST_A)->throttled_us > 0);
	assert_true(stat_of(&st, "slow", OST_A)->rate == 1e12);

	/* An older generation is ignored. */
	assert_int_equal(qos_set(f, 1, PFS_QOS_MODE_RATES, NULL, 0), 0);
	assert_int_equal(list_rules(f, "", &rs), 0);
	assert_int_equal(rs.n, 4);
	/* A newer set without "slow": its rules go. */
	assert_int_equal(qos_set(f, 3, PFS_QOS_MODE_RATES, &rows[1], 1), 0);
	assert_int_equal(list_rules(f, "", &rs), 0);
	assert_int_equal(rs.n, 2);
	assert_null(rule(&rs, "mds.slow", OST_A));
	assert_non_null(rule(&rs, "mds.fast", OST_A));
	/* MODE_NONE: policy rules gone, the admin rule stays. */
	assert_int_equal(qos_set(f, 4, PFS_QOS_MODE_NONE, NULL, 0), 0);
	assert_int_equal(list_rules(f, "", &rs), 0);
	assert_int_equal(rs.n, 1);
	assert_string_equal(rs.r[0].name, "admin1");
	assert_int_equal(oss_qos_mode(oss_server_qos(f->srv), 1), PFS_QOS_MODE_NONE);
}

/* Garbage, truncated, oversized and absurd sets are refused and change
 * nothing. */
static void test_qos_set_bad_payloads(void **state)
{
	fixture *f = *state;
	pfs_qos_alloc good[1] = { { "g", PFS_QOS_OST_ALL, 1e6, 1 } };
	pfs_qos_alloc dup[2] = { { "d", OST_A, 1e6, 1 }, { "d", OST_A, 2e6, 1 } };
	pfs_qos_alloc absurd[1] = { { "a", OST_A, 1e13, 1 } };
	pfs_qos_alloc nodes[1] = { { "a", OST_A, 1, 1e9 } };
	pfs_qos_alloc_set set = { 5, PFS_QOS_MODE_RATES, 0.1, 1, good };
	uint8_t junk[64];
	rules rs;
	pfs_wbuf w;

	assert_int_equal(qos_set(f, 1, PFS_QOS_MODE_RATES, good, 1), 0);
	pfs_wbuf_init(&w);
	pfs_qos_alloc_set_encode(&w, &set);
	/* Truncated at every length, and one trailing byte. */
	for (size_t cut = 0; cut < w.len; cut++)
		assert_int_equal(ctl(f, PFS_OP_OSS_QOS_SET, w.data, cut, NULL), -EBADMSG);
	pfs_wbuf_u8(&w, 0);
	assert_int_equal(ctl(f, PFS_OP_OSS_QOS_SET, w.data, w.len, NULL), -EBADMSG);
	/* A row count far beyond the payload. */
	pfs_wbuf_reset(&w);
	pfs_wbuf_u64(&w, 6);
	pfs_wbuf_u8(&w, PFS_QOS_MODE_RATES);
	pfs_wbuf_f64(&w, 0.1);
	pfs_wbuf_u32(&w, 0xffffffffu);
	assert_int_equal(ctl(f, PFS_OP_OSS_QOS_SET, w.data, w.len, NULL), -EBADMSG);
	/* NaN rate, unknown mode, non-positive period. */
	pfs_wbuf_reset(&w);
	pfs_wbuf_u64(&w, 6);
	pfs_wbuf_u8(&w, PFS_QOS_MODE_RATES);
	pfs_wbuf_f64(&w, 0.1);
	pfs_wbuf_u32(&w, 1);
	pfs_wbuf_str(&w, "n");
	pfs_wbuf_u32(&w, OST_A);
	pfs_wbuf_f64(&w, NAN);
	pfs_wbuf_f64(&w, 1);
	assert_int_equal(ctl(f, PFS_OP_OSS_QOS_SET, w.data, w.len, NULL), -EBADMSG);
	pfs_wbuf_reset(&w);
	set.mode = 9;
	pfs_qos_alloc_set_encode(&w, &set);
	assert_int_equal(ctl(f, PFS_OP_OSS_QOS_SET, w.data, w.len, NULL), -EBADMSG);
	pfs_wbuf_reset(&w);
	set.mode = PFS_QOS_MODE_ADAPTBF;
	set.adaptbf_period = 0;
	pfs_qos_alloc_set_encode(&w, &set);
	assert_int_equal(ctl(f, PFS_OP_OSS_QOS_SET, w.data, w.len, NULL), -EBADMSG);
	pfs_wbuf_free(&w);
	/* Well-formed but refused: absurd rate or node count, a period of
	 * 1000 s, a (job, OST) twice. */
	assert_int_equal(qos_set(f, 7, PFS_QOS_MODE_RATES, absurd, 1), -EINVAL);
	assert_int_equal(qos_set(f, 7, PFS_QOS_MODE_RATES, nodes, 1), -EINVAL);
	assert_int_equal(qos_set(f, 7, PFS_QOS_MODE_RATES, dup, 2), -EINVAL);
	set.adaptbf_period = 1000;
	pfs_wbuf_init(&w);
	pfs_qos_alloc_set_encode(&w, &set);
	assert_int_equal(ctl(f, PFS_OP_OSS_QOS_SET, w.data, w.len, NULL), -EINVAL);
	pfs_wbuf_free(&w);
	/* Random junk. */
	for (int k = 0; k < 50; k++) {
		for (size_t i = 0; i < sizeof(junk); i++)
			junk[i] = (uint8_t)(i * 31 + (size_t)k * 7);
		assert_true(ctl(f, PFS_OP_OSS_QOS_SET, junk, (size_t)k + 1, NULL) < 0);
	}
	/* Nothing changed: still generation 1's rules. */
	assert_int_equal(list_rules(f, "", &rs), 0);
	assert_int_equal(rs.n, 2);
	assert_non_null(rule(&rs, "mds.g", OST_A));
	assert_non_null(rule(&rs, "mds.g", OST_B));
	assert_int_equal(oss_qos_mode(oss_server_qos(f->srv), 0), PFS_QOS_MODE_RATES);
}

/* Node counts 1/1/3/5 on a saturated OST of T = 100 RPCs/s: with
 * Δt = 0.1 s the loop hands out 10 tokens a period, 1/1/3/5, i.e. rules
 * of 10/10/30/50 RPCs/s.  Saturation is made with an admin rule that
 * holds every job (admin rules rank first), so the backlog stays put. */
static void test_qos_adaptbf_loop(void **state)
{
	fixture *f = *state;
	static const char *const jobs[4] = { "j1", "j2", "j3", "j5" };
	static const double want[4] = { 10, 10, 30, 50 };
	pfs_qos_alloc rows[4] = { { "j1", PFS_QOS_OST_ALL, 0, 1 },
				  { "j2", PFS_QOS_OST_ALL, 0, 1 },
				  { "j3", PFS_QOS_OST_ALL, 0, 3 },
				  { "j5", PFS_QOS_OST_ALL, 0, 5 } };
	oss_qos *q = oss_server_qos(f->srv);
	rules rs;
	stats st;
	int fd, ok, busy;

	assert_true(fabs(oss_qos_tokens_rate(q, 0) - 100) < 1e-9);
	assert_true(oss_qos_tokens_rate(q, 1) == 0); /* nothing measured yet */
	assert_int_equal(nrs(f, PFS_NRS_START, "hold", "jobid={j*} rpcs=0 depth=1"), 0);
	assert_int_equal(qos_set(f, 10, PFS_QOS_MODE_ADAPTBF, rows, 4), 0);
	assert_int_equal(oss_qos_mode(q, 0), PFS_QOS_MODE_ADAPTBF);
	fd = raw_connect(oss_server_data_port(f->srv));
	/* Each job: one write on the hold rule's token (answered before the
	 * rest is sent, so it does not count against the cap), JOB_CAP
	 * queued. */
	for (int j = 0; j < 4; j++) {
		send_writes(fd, jobs[j], OST_A, 1, 4096, 100 * (uint64_t)(j + 1));
		recv_replies(fd, 1, &ok, &busy, NULL);
		assert_int_equal(ok, 1);
		send_writes(fd, jobs[j], OST_A, JOB_CAP, 4096, 100 * (uint64_t)(j + 1) + 1);
	}
	wait_queued(f, 0, 4 * JOB_CAP);

	oss_qos_tick(q, 1000.0);
	assert_int_equal(list_rules(f, "", &rs), 0);
	for (int j = 0; j < 4; j++) {
		char name[64], want_text[64];
		const pfs_nrs_rule_info *r;

		snprintf(name, sizeof(name), "adaptbf.%s", jobs[j]);
		r = rule(&rs, name, OST_A);
		assert_non_null(r);
		assert_int_equal(r->origin, PFS_NRS_ORIGIN_ADAPTBF);
		snprintf(want_text, sizeof(want_text), "rpcs=%g ", want[j]);
		assert_non_null(strstr(r->expr, want_text));
		assert_null(rule(&rs, name, OST_B)); /* OST B: capacity unknown */
	}
	get_stats(f, PFS_QOS_STATS_TOTAL, &st);
	for (int j = 0; j < 4; j++) {
		const pfs_qos_stat *s = stat_of(&st, jobs[j], OST_A);
		assert_non_null(s);
		assert_int_equal(s->tokens, (int64_t)want[j] / 10);
		assert_true(s->nodes == rows[j].nodes);
		assert_true(fabs(s->rate - want[j] * MIB) < 1e-3);
		assert_true(fabs(s->record) < 1e-9);
	}
	assert_int_equal(st.ost[0].mode, PFS_QOS_MODE_ADAPTBF);
	/* The next period sees the same backlog: the same shares. */
	oss_qos_tick(q, 1000.1);
	get_stats(f, PFS_QOS_STATS_TOTAL, &st);
	for (int j = 0; j < 4; j++)
		assert_int_equal(stat_of(&st, jobs[j], OST_A)->tokens, (int64_t)want[j] / 10);

	/* Leave AdapTBF, release the hold: every queued request is served. */
	assert_int_equal(qos_set(f, 11, PFS_QOS_MODE_NONE, NULL, 0), 0);
	assert_int_equal(list_rules(f, "", &rs), 0);
	assert_int_equal(rs.n, 1);
	assert_int_equal(nrs(f, PFS_NRS_STOP, "hold", NULL), 0);
	recv_replies(fd, 4 * JOB_CAP, &ok, &busy, NULL);
	assert_int_equal(ok, 4 * JOB_CAP);
	close(fd);
}

/* Admin rules: start, change, stop, list; every refusal changes nothing. */
static void test_qos_nrs_rules(void **state)
{
	fixture *f = *state;
	char longtext[400];
	uint8_t verb_only = PFS_NRS_START;
	oss_nrs_tbf_rule_snap *v;
	rules rs;
	size_t n;

	assert_int_equal(nrs(f, PFS_NRS_START, "cap", "jobid={a*} rpcs=100 rank=5"), 0);
	assert_int_equal(nrs(f, PFS_NRS_START, "cap", "rpcs=1"), -EEXIST);
	assert_int_equal(nrs(f, PFS_NRS_START, "x", "jobid={a} rat=5"), -EINVAL);
	assert_int_equal(nrs(f, PFS_NRS_START, "x", "rpcs=1 rank=2000000"), -EINVAL);
	assert_int_equal(nrs(f, PFS_NRS_START, "x", "rpcs=-1"), -EINVAL);
	assert_int_equal(nrs(f, PFS_NRS_START, "x", "rate=1e15"), -EINVAL);
	assert_int_equal(nrs(f, PFS_NRS_START, "mds.x", "rpcs=1"), -EPERM);
	assert_int_equal(nrs(f, PFS_NRS_START, "", "rpcs=1"), -EINVAL);
	assert_int_equal(nrs(f, PFS_NRS_START, "a b", "rpcs=1"), -EINVAL);
	assert_int_equal(nrs(f, PFS_NRS_START, "x", NULL), -EBADMSG);
	assert_int_equal(nrs(f, PFS_NRS_START, "o9", "rpcs=5 ost=9"), -ENODEV);
	assert_int_equal(nrs(f, PFS_NRS_START, "o6", "rpcs=5 ost=6"), 0);
	memset(longtext, 'r', sizeof(longtext) - 1);
	longtext[sizeof(longtext) - 1] = '\0';
	assert_int_equal(nrs(f, PFS_NRS_START, "x", longtext), -EINVAL);
	assert_int_equal(nrs(f, 9, "x", "rpcs=1"), -EINVAL);
	assert_int_equal(ctl(f, PFS_OP_OSS_NRS_RULE, &verb_only, 1, NULL), -EBADMSG);
	assert_int_equal(ctl(f, PFS_OP_OSS_NRS_RULE, NULL, 0, NULL), -EBADMSG);

	assert_int_equal(list_rules(f, "", &rs), 0);
	assert_int_equal(rs.n, 2);
	assert_non_null(rule(&rs, "cap", PFS_QOS_OST_ALL));
	assert_non_null(rule(&rs, "o6", OST_B));
	/* Installed where they should be. */
	assert_int_equal(oss_nrs_tbf_rule_list(oss_server_sched(f->srv, 0), &v, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(v[0].name, "cap");
	free(v);
	assert_int_equal(oss_nrs_tbf_rule_list(oss_server_sched(f->srv, 1), &v, &n), 0);
	assert_int_equal(n, 2);
	free(v);

	/* CHANGE keeps what it does not name (rank 5 here). */
	assert_int_equal(nrs(f, PFS_NRS_CHANGE, "cap", "rpcs=50"), 0);
	assert_int_equal(list_rules(f, "cap", &rs), 0);
	assert_int_equal(rs.n, 1);
	assert_non_null(strstr(rs.r[0].expr, "rpcs=50"));
	assert_non_null(strstr(rs.r[0].expr, "rank=5"));
	assert_non_null(strstr(rs.r[0].expr, "jobid={a*}"));
	assert_int_equal(nrs(f, PFS_NRS_CHANGE, "cap", "rate=5MB/s"), -EINVAL); /* unit */
	assert_int_equal(nrs(f, PFS_NRS_CHANGE, "cap", "jobid={b} rpcs=5"), -EINVAL);
	assert_int_equal(nrs(f, PFS_NRS_CHANGE, "cap", "rpcs=5 rank=9999999"), -EINVAL);
	assert_int_equal(nrs(f, PFS_NRS_CHANGE, "nope", "rpcs=1"), -ENOENT);
	assert_int_equal(list_rules(f, "cap", &rs), 0);
	assert_non_null(strstr(rs.r[0].expr, "rpcs=50"));

	assert_int_equal(nrs(f, PFS_NRS_STOP, "cap", NULL), 0);
	assert_int_equal(nrs(f, PFS_NRS_STOP, "cap", NULL), -ENOENT);
	assert_int_equal(nrs(f, PFS_NRS_STOP, "adaptbf.x", NULL), -EPERM);
	assert_int_equal(list_rules(f, "cap", &rs), -ENOENT);
	assert_int_equal(list_rules(f, "", &rs), 0);
	assert_int_equal(rs.n, 1);
	assert_int_equal(oss_nrs_tbf_rule_list(oss_server_sched(f->srv, 0), &v, &n), 0);
	assert_int_equal(n, 0);
	free(v);
}

/* Over the per-job cap requests are answered -EBUSY at once with the
 * smallest credit; the queue stays at the cap however much more comes. */
static void test_qos_busy_caps(void **state)
{
	fixture *f = *state;
	stats st;
	uint32_t credit = 99;
	int fd, ok, busy;

	assert_int_equal(nrs(f, PFS_NRS_START, "hold", "jobid={h} rpcs=0 depth=1"), 0);
	fd = raw_connect(oss_server_data_port(f->srv));
	/* One on the token (answered first: then it has left the queue),
	 * JOB_CAP queued, three refused. */
	send_writes(fd, "h", OST_A, 1, 4096, 1);
	recv_replies(fd, 1, &ok, &busy, NULL);
	assert_int_equal(ok, 1);
	send_writes(fd, "h", OST_A, JOB_CAP + 3, 4096, 2);
	recv_replies(fd, 3, &ok, &busy, &credit);
	assert_int_equal(busy, 3);
	assert_int_equal(credit, OSS_RCC_MIN_DEFAULT);
	wait_queued(f, 0, JOB_CAP);
	send_writes(fd, "h", OST_A, 20, 4096, 100);
	recv_replies(fd, 20, &ok, &busy, NULL);
	assert_int_equal(busy, 20);
	assert_int_equal(oss_sched_queued(oss_server_sched(f->srv, 0)), JOB_CAP);
	get_stats(f, PFS_QOS_STATS_TOTAL, &st);
	assert_int_equal(stat_of(&st, "h", OST_A)->busy_rpcs, 23);
	assert_int_equal(stat_of(&st, "h", OST_A)->queued, JOB_CAP);
	assert_int_equal(stat_of(&st, "h", OST_A)->arrived_rpcs, JOB_CAP + 1);
	assert_int_equal(st.ost[0].queued, JOB_CAP);
	/* Another job is not affected by h's cap. */
	assert_int_equal(write_tag(f, "other", OST_A, 7, 100, 0, NULL), 0);
	assert_int_equal(nrs(f, PFS_NRS_STOP, "hold", NULL), 0);
	recv_replies(fd, JOB_CAP, &ok, &busy, NULL);
	assert_int_equal(ok, JOB_CAP);
	close(fd);
}

/* Every data reply carries the OST's RCC credit: what the client asked
 * for under light load, RCCmax when it asked nothing. */
static void test_qos_rcc_credit(void **state)
{
	fixture *f = *state;
	uint32_t credit = 0;
	stats st;

	assert_int_equal(write_tag(f, "r", OST_A, 1, 4096, 5, &credit), 0);
	assert_int_equal(credit, 5);
	assert_int_equal(write_tag(f, "r", OST_B, 1, 4096, 0, &credit), 0);
	assert_int_equal(credit, OSS_RCC_MAX_DEFAULT);
	/* A refused request (OST not here) carries no grant. */
	assert_int_equal(write_tag(f, "r", 99, 1, 4096, 5, &credit), -ENODEV);
	assert_int_equal(credit, 0);
	get_stats(f, PFS_QOS_STATS_TOTAL, &st);
	assert_int_equal(st.n_osts, 2);
	assert_int_equal(st.ost[0].ost, OST_A);
	assert_int_equal(st.ost[0].credit, 5);
	assert_int_equal(st.ost[1].credit, OSS_RCC_MAX_DEFAULT);
}

/* QOS_STATS: OST capacity and mode, totals vs periods, bad requests. */
static void test_qos_stats(void **state)
{
	fixture *f = *state;
	uint8_t bad[2] = { 7, 0 };
	stats st;

	assert_int_equal(ctl(f, PFS_OP_OSS_QOS_STATS, NULL, 0, NULL), -EBADMSG);
	assert_int_equal(ctl(f, PFS_OP_OSS_QOS_STATS, bad, 1, NULL), -EINVAL);
	bad[0] = PFS_QOS_STATS_TOTAL;
	assert_int_equal(ctl(f, PFS_OP_OSS_QOS_STATS, bad, 2, NULL), -EBADMSG);

	assert_int_equal(write_tag(f, "s", OST_A, 1, 1000, 0, NULL), 0);
	assert_int_equal(write_tag(f, "s", OST_A, 1, 24, 0, NULL), 0);
	get_stats(f, PFS_QOS_STATS_PERIOD, &st);
	assert_true(st.snapshot_ns > 0);
	assert_true(st.period > 0);
	assert_int_equal(st.n_osts, 2);
	assert_true(st.ost[0].capacity == 100 * MIB);
	assert_true(st.ost[1].capacity == 0);
	assert_int_equal(st.ost[0].mode, PFS_QOS_MODE_NONE);
	assert_true(st.ost[0].served > 0);
	assert_int_equal(st.n, 1);
	assert_int_equal(st.s[0].write_rpcs, 2);
	assert_int_equal(st.s[0].write_bytes, 1024);
	assert_int_equal(st.s[0].arrived_bytes, 1024);
	assert_true(st.s[0].rate < 0);
	assert_int_equal(st.s[0].tokens, -1);
	/* A new period starts at zero; the totals go on. */
	get_stats(f, PFS_QOS_STATS_PERIOD, &st);
	assert_int_equal(st.s[0].write_rpcs, 0);
	assert_true(st.ost[0].served == 0);
	get_stats(f, PFS_QOS_STATS_TOTAL, &st);
	assert_int_equal(st.s[0].write_rpcs, 2);
	/* JOBSTATS still works, summed over OSTs. */
	assert_int_equal(write_tag(f, "s", OST_B, 1, 10, 0, NULL), 0);
	{
		pfs_rpc_reply rep = { 0 };
		pfs_rbuf b;
		pfs_job_stats js;

		assert_int_equal(ctl(f, PFS_OP_OSS_JOBSTATS, NULL, 0, &rep), 0);
		pfs_rbuf_init(&b, rep.data, rep.len);
		assert_int_equal(pfs_rbuf_u32(&b), 1);
		assert_int_equal(pfs_job_stats_decode(&b, &js), 0);
		assert_string_equal(js.job, "s");
		assert_int_equal(js.write_rpcs, 3);
		assert_int_equal(js.write_bytes, 1034);
		assert_int_equal(pfs_rbuf_done(&b), 0);
		pfs_rpc_reply_free(&rep);
	}
}

/* The Prometheus families, scraped over HTTP. */
static void test_qos_metrics(void **state)
{
	fixture *f = *state;
	pfs_metrics *m;
	char err[256], req[] = "GET /metrics HTTP/1.0\r\n\r\n";
	static char body[1 << 16];
	size_t got = 0;
	ssize_t k;
	int fd;

	assert_int_equal(write_tag(f, "m", OST_A, 1, 100, 0, NULL), 0);
	assert_int_equal(pfs_metrics_start("127.0.0.1", 0, oss_qos_metrics, oss_server_qos(f->srv),
					   &m, err, sizeof(err)), 0);
	fd = raw_connect(pfs_metrics_port(m));
	assert_int_equal(pfs_net_write_all(fd, req, strlen(req)), 0);
	while (got < sizeof(body) - 1 && (k = read(fd, body + got, sizeof(body) - 1 - got)) > 0)
		got += (size_t)k;
	body[got] = '\0';
	close(fd);
	pfs_metrics_stop(m);
	assert_non_null(strstr(body, "200 OK"));
	assert_non_null(strstr(body, "pfs_oss_job_rpcs_total{job=\"m\",ost=\"5\",op=\"write\"} 1\n"));
	assert_non_null(strstr(body, "pfs_oss_job_bytes_total{job=\"m\",ost=\"5\",op=\"write\"} 100\n"));
	assert_non_null(strstr(body, "# TYPE pfs_oss_job_queue_wait_seconds_total counter"));
	assert_non_null(strstr(body, "# TYPE pfs_oss_job_throttled_seconds_total counter"));
	assert_non_null(strstr(body, "pfs_oss_job_busy_total{job=\"m\",ost=\"5\"} 0\n"));
	assert_non_null(strstr(body, "pfs_oss_job_queued{job=\"m\",ost=\"5\"} 0\n"));
	assert_non_null(strstr(body, "# TYPE pfs_oss_job_rate_limit_bytes gauge"));
	assert_non_null(strstr(body, "pfs_oss_ost_capacity_bytes{ost=\"5\"} 104857600\n"));
	assert_non_null(strstr(body, "pfs_oss_rcc_credit{ost=\"5\"} 32\n"));
}

/* The blkio hierarchy's mount point (cgroup v1 with the blkio controller),
 * or "" if there is none. */
static void blkio_mount(char *out, size_t len)
{
	FILE *fp = fopen("/proc/mounts", "r");
	char dev[256], dir[256], type[64], opts[512];

	out[0] = '\0';
	if (!fp)
		return;
	while (fscanf(fp, "%255s %255s %63s %511s %*d %*d", dev, dir, type, opts) == 4) {
		if (!strcmp(type, "cgroup") && strstr(opts, "blkio")) {
			snprintf(out, len, "%s", dir);
			break;
		}
	}
	fclose(fp);
}

/* The job's write limit in its cgroup ("" when it has no cgroup). */
static void blkio_limit_of(const char *mnt, const char *job, char *out, size_t len)
{
	char path[512];
	FILE *fp;
	size_t n;

	snprintf(path, sizeof(path), "%s/pfs-oss.%ld/j.%s/blkio.throttle.write_bps_device", mnt,
		 (long)getpid(), job);
	out[0] = '\0';
	fp = fopen(path, "r");
	if (!fp)
		return;
	n = fread(out, 1, len - 1, fp);
	out[n] = '\0';
	fclose(fp);
}

/* enforce=blkio: MDS rates become the jobs' cgroup throttles, no TBF rate
 * rule is installed, requests still run (the I/O thread enters the job's
 * cgroup), and a job dropped from the set loses its cgroup.  Skipped where
 * there is no cgroup v1 blkio hierarchy over a block device. */
static void test_qos_blkio_enforce(void **state)
{
	char tmp[64] = "/var/tmp/pfs-test-qosbk-XXXXXX", dir[96], err[256], mnt[256], lim[128];
	const char *dirs[1] = { dir };
	pfs_qos_alloc rows[1] = { { "bj", PFS_QOS_OST_ALL, 5e6, 1 } };
	oss_server_opts so = { 0 };
	oss_blkio *bk = NULL;
	fixture f = { 0 };
	rules rs;

	blkio_mount(mnt, sizeof(mnt));
	assert_non_null(mkdtemp(tmp));
	snprintf(dir, sizeof(dir), "%s/ost", tmp);
	snprintf(f.tmp, sizeof(f.tmp), "%s", tmp);
	{
		oss_store_opts o = { .fd_cache = 0, .o_direct = 1 };
		assert_int_equal(oss_store_open(dir, &o, &f.st[0], err, sizeof(err)), 0);
	}
	if (!mnt[0] || oss_blkio_open(dirs, 1, &bk, err, sizeof(err))) {
		oss_store_close(f.st[0]);
		snprintf(err, sizeof(err), "rm -rf '%s'", tmp);
		assert_int_equal(system(err), 0);
		skip();
	}
	so.host = "127.0.0.1";
	so.io_threads = 2;
	so.osts = f.st;
	so.n_osts = 1;
	so.enforce = OSS_ENFORCE_BLKIO;
	so.blkio = bk;
	so.qos_no_thread = 1;
	assert_int_equal(oss_server_start(&so, &f.srv, err, sizeof(err)), 0);
	assert_int_equal(oss_server_set_index(f.srv, 0, OST_A), 0);
	assert_int_equal(oss_qos_enforce(oss_server_qos(f.srv)), OSS_ENFORCE_BLKIO);
	assert_int_equal(pfs_rpc_pool_create("127.0.0.1", oss_server_data_port(f.srv), NULL,
					     &f.data), 0);
	assert_int_equal(pfs_rpc_pool_create("127.0.0.1", oss_server_ctl_port(f.srv), NULL,
					     &f.ctl), 0);

	assert_int_equal(qos_set(&f, 1, PFS_QOS_MODE_RATES, rows, 1), 0);
	blkio_limit_of(mnt, "bj", lim, sizeof(lim));
	assert_non_null(strstr(lim, " 5000000"));
	assert_int_equal(list_rules(&f, "", &rs), 0);
	assert_int_equal(rs.n, 0); /* the kernel enforces: no TBF rate rule */
	assert_int_equal(write_tag(&f, "bj", OST_A, 3, 4096, 0, NULL), 0);
	assert_int_equal(write_tag(&f, "free", OST_A, 4, 4096, 0, NULL), 0);
	/* Dropped from the set: its cgroup goes. */
	assert_int_equal(qos_set(&f, 2, PFS_QOS_MODE_RATES, NULL, 0), 0);
	blkio_limit_of(mnt, "bj", lim, sizeof(lim));
	assert_string_equal(lim, "");

	pfs_rpc_pool_destroy(f.data);
	pfs_rpc_pool_destroy(f.ctl);
	oss_server_stop(f.srv);
	oss_blkio_close(bk);
	oss_store_close(f.st[0]);
	snprintf(err, sizeof(err), "rm -rf '%s'", tmp);
	assert_int_equal(system(err), 0);
}

/* Enforcement asked for without what it needs is refused at start. */
static void test_qos_create_refusals(void **state)
{
	oss_qos_opts o = { .enforce = OSS_ENFORCE_BLKIO };
	double bad_cap[1] = { -1 };
	oss_qos *q;
	char err[128];

	assert_int_equal(oss_qos_create(&o, NULL, 0, &q, err, sizeof(err)), -EINVAL);
	o.enforce = OSS_ENFORCE_TBF;
	o.adaptbf_period = 1000;
	assert_int_equal(oss_qos_create(&o, NULL, 0, &q, err, sizeof(err)), -EINVAL);
	o.adaptbf_period = 0;
	o.cap_bps = bad_cap;
	assert_int_equal(oss_qos_create(&o, NULL, 1, &q, err, sizeof(err)), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_qos_set_rates, setup, teardown),
		cmocka_unit_test_setup_teardown(test_qos_set_bad_payloads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_qos_adaptbf_loop, setup, teardown),
		cmocka_unit_test_setup_teardown(test_qos_nrs_rules, setup, teardown),
		cmocka_unit_test_setup_teardown(test_qos_busy_caps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_qos_rcc_credit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_qos_stats, setup, teardown),
		cmocka_unit_test_setup_teardown(test_qos_metrics, setup, teardown),
		cmocka_unit_test(test_qos_blkio_enforce),
		cmocka_unit_test(test_qos_create_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
