/* test_mds_exporter.c — the MDS Prometheus families after one GIFT
 * decision (Fig. 6 k1) and a few requests, read over HTTP. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/buf.h"
#include "common/log.h"
#include "common/msg.h"
#include "common/net.h"
#include "mds/exporter.h"
#include "mds/jobs.h"
#include "mds/ns.h"
#include "mds/qosctl.h"
#include "mds/server.h"

/* One OSS ("oss0") with OSTs 0 and 1 of 100 MB/s: A on OST 0, B on both. */
static void collect(void *ctx, const mds_qos_oss *oss, size_t n, mds_qos_report *out)
{
	const char *job[3] = { "A", "B", "B" };
	uint32_t ost[3] = { 0, 0, 1 };

	for (size_t i = 0; i < n; i++) {
		mds_qos_report *r = &out[i];
		r->period_s = 10;
		r->n_osts = 2;
		r->osts = calloc(2, sizeof(*r->osts));
		r->n = 3;
		r->stats = calloc(3, sizeof(*r->stats));
		assert_non_null(r->osts);
		assert_non_null(r->stats);
		for (uint32_t o = 0; o < 2; o++) {
			r->osts[o].ost = o;
			r->osts[o].capacity = 100e6;
		}
		for (int k = 0; k < 3; k++) {
			strcpy(r->stats[k].job, job[k]);
			r->stats[k].ost = ost[k];
			r->stats[k].arrived_rpcs = 1;
			r->stats[k].arrived_bytes = 1000000000;
		}
	}
}

static void push(void *ctx, const mds_qos_oss *oss, const pfs_qos_alloc_set *sets, size_t n,
		 int *rc)
{
	for (size_t i = 0; i < n; i++)
		rc[i] = 0;
}

/* GET /metrics; the whole response into a malloc'd string. */
static char *scrape(uint16_t port)
{
	const char *req = "GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n";
	size_t len = 0, cap = 1 << 16;
	char *buf = malloc(cap + 1);
	int fd;
	ssize_t r;

	assert_non_null(buf);
	assert_int_equal(pfs_net_connect("127.0.0.1", port, 2000, &fd), 0);
	assert_int_equal(pfs_net_write_all(fd, req, strlen(req)), 0);
	while ((r = read(fd, buf + len, cap - len)) > 0) {
		len += (size_t)r;
		if (len == cap) {
			cap *= 2;
			buf = realloc(buf, cap + 1);
			assert_non_null(buf);
		}
	}
	close(fd);
	buf[len] = '\0';
	return buf;
}

static void test_exporter_families(void **state)
{
	char dir[64] = "/tmp/test_mds_exporter.XXXXXX", db[96], err[256], p[160];
	mds_ns *ns;
	mds_jobs *jobs;
	mds_qosctl *qos;
	mds_server *srv;
	mds_exporter *e;
	mds_ost_report rep[2];
	uint32_t idx[2];
	pfs_wbuf req, out;
	pfs_hdr h;
	(void)state;

	pfs_log_init("test", PFS_LOG_ERR);
	assert_non_null(mkdtemp(dir));
	snprintf(db, sizeof(db), "%s/db", dir);
	mds_ns_opts no = { .path = db, .mapsize = 1ull << 28 };
	assert_int_equal(mds_ns_open(&no, &ns), 0);
	memset(rep, 0, sizeof(rep));
	strcpy(rep[0].uuid, "u0");
	strcpy(rep[1].uuid, "u1");
	assert_int_equal(mds_ns_oss_register(ns, "oss0", "127.0.0.1", 1, 2, rep, 2, idx), 0);
	assert_int_equal(mds_jobs_open(ns, NULL, &jobs), 0);
	mds_qosctl_opts qo = { .policy = "gift", .params = "B_thres=0.3",
			       .ops = { collect, push, NULL } };
	assert_int_equal(mds_qosctl_create(ns, jobs, &qo, &qos, err, sizeof(err)), 0);
	mds_server_opts so = { .host = "127.0.0.1", .jobs = jobs, .qos = qos };
	assert_int_equal(mds_server_start(ns, &so, &srv), 0);
	assert_int_equal(mds_qosctl_step(qos), 0);

	/* two GETATTRs of job "x" through the dispatcher */
	pfs_wbuf_init(&req);
	pfs_wbuf_init(&out);
	pfs_cred c = { 0 };
	pfs_cred_encode(&req, &c);
	pfs_wbuf_u64(&req, 1);
	pfs_hdr_init(&h, PFS_OP_MDS_GETATTR, 1, 1, "x");
	for (int i = 0; i < 2; i++) {
		assert_int_equal(mds_server_dispatch(srv, &h, req.data, req.len, NULL, &out), 0);
		pfs_wbuf_reset(&out);
	}

	assert_int_equal(mds_exporter_start("127.0.0.1", 0, srv, jobs, qos, &e, err, sizeof(err)),
			 0);
	char *text = scrape(mds_exporter_port(e));
	assert_non_null(strstr(text, "200 OK"));
	assert_non_null(strstr(text, "\npfs_mds_qos_decisions_total 1\n"));
	assert_non_null(strstr(text, "\npfs_mds_qos_quorum_answered 1\n"));
	assert_non_null(strstr(text, "# TYPE pfs_mds_qos_decision_seconds gauge"));
	assert_non_null(strstr(text, "\npfs_mds_qos_alloc_bytes{job=\"A\",ost=\"0\"} 35000000\n"));
	assert_non_null(strstr(text, "\npfs_mds_qos_alloc_bytes{job=\"B\",ost=\"1\"} 65000000\n"));
	assert_non_null(strstr(text, "\npfs_mds_gift_coupon_outstanding{job=\"A\"} 150000000\n"));
	assert_non_null(strstr(text, "\npfs_mds_gift_regret_awarded_nodehours 0\n"));
	assert_non_null(strstr(text, "\npfs_mds_jobs{kind=\"automatic\"} 3\n")); /* A, B, x */
	assert_non_null(strstr(text, "\npfs_mds_job_ops_total{job=\"x\",op=\"MDS_GETATTR\"} 2\n"));
	free(text);

	mds_exporter_stop(e);
	mds_server_stop(srv);
	mds_qosctl_destroy(qos);
	mds_jobs_close(jobs);
	mds_ns_close(ns);
	pfs_wbuf_free(&req);
	pfs_wbuf_free(&out);
	const char *files[] = { "data.mdb", "lock.mdb", "mds.lock" };
	for (size_t i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s/%s", db, files[i]);
		unlink(p);
	}
	rmdir(db);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exporter_families),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
