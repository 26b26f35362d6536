/* test_qosmsg.c — codecs of the job registry and QoS control-plane types:
 * round trips, every truncation of a valid encoding, out-of-range values
 * (negative or non-finite rates, bad modes, counts larger than the payload
 * could hold) refused with -EBADMSG and nothing allocated. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "common/qosmsg.h"

static void test_qosmsg_f64(void **state)
{
	pfs_wbuf w;
	pfs_rbuf r;

	pfs_wbuf_init(&w);
	pfs_wbuf_f64(&w, 1.5e9);
	pfs_wbuf_f64(&w, -0.25);
	pfs_wbuf_f64(&w, NAN);
	pfs_wbuf_f64(&w, INFINITY);
	pfs_rbuf_init(&r, w.data, w.len);
	assert_true(pfs_rbuf_f64(&r) == 1.5e9);
	assert_true(pfs_rbuf_f64_finite(&r) == -0.25);
	assert_true(isnan(pfs_rbuf_f64(&r)));
	assert_int_equal(pfs_rbuf_error(&r), 0);
	assert_true(pfs_rbuf_f64_finite(&r) == 0);
	assert_int_equal(pfs_rbuf_error(&r), -EBADMSG);
	pfs_wbuf_free(&w);
}

static void test_qosmsg_job_info(void **state)
{
	pfs_job_info j = { .job = "slurm.4242", .uid = 1000, .nodes = 5, .priority = 2.5,
			   .limit = 1e8, .throttle_friendly = 1, .registered = 1,
			   .start_ns = 123, .end_ns = 0 }, d;
	pfs_wbuf w;
	pfs_rbuf r;

	pfs_wbuf_init(&w);
	pfs_job_info_encode(&w, &j);
	pfs_rbuf_init(&r, w.data, w.len);
	assert_int_equal(pfs_job_info_decode(&r, &d), 0);
	assert_int_equal(pfs_rbuf_done(&r), 0);
	assert_string_equal(d.job, "slurm.4242");
	assert_int_equal(d.nodes, 5);
	assert_true(d.priority == 2.5 && d.limit == 1e8);
	assert_int_equal(d.throttle_friendly, 1);
	for (size_t cut = 0; cut < w.len; cut++) {
		pfs_rbuf_init(&r, w.data, cut);
		assert_int_equal(pfs_job_info_decode(&r, &d), -EBADMSG);
	}
	/* zero nodes, zero priority, negative limit, empty id */
	j.nodes = 0;
	pfs_wbuf_reset(&w);
	pfs_job_info_encode(&w, &j);
	pfs_rbuf_init(&r, w.data, w.len);
	assert_int_equal(pfs_job_info_decode(&r, &d), -EBADMSG);
	j.nodes = 1;
	j.priority = 0;
	pfs_wbuf_reset(&w);
	pfs_job_info_encode(&w, &j);
	pfs_rbuf_init(&r, w.data, w.len);
	assert_int_equal(pfs_job_info_decode(&r, &d), -EBADMSG);
	j.priority = 1;
	j.limit = -1;
	pfs_wbuf_reset(&w);
	pfs_job_info_encode(&w, &j);
	pfs_rbuf_init(&r, w.data, w.len);
	assert_int_equal(pfs_job_info_decode(&r, &d), -EBADMSG);
	j.limit = 0;
	j.job[0] = '\0';
	pfs_wbuf_reset(&w);
	pfs_job_info_encode(&w, &j);
	pfs_rbuf_init(&r, w.data, w.len);
	assert_int_equal(pfs_job_info_decode(&r, &d), -EBADMSG);
	pfs_wbuf_free(&w);
}

static void test_qosmsg_alloc_set(void **state)
{
	pfs_qos_alloc rows[2] = { { .job = "a", .ost = 0, .rate = 35e6, .nodes = 1 },
				  { .job = "b", .ost = PFS_QOS_OST_ALL, .rate = 65e6,
				    .nodes = 3 } };
	pfs_qos_alloc_set s = { .generation = 7, .mode = PFS_QOS_MODE_RATES,
				.adaptbf_period = 0.1, .n = 2, .rows = rows }, d;
	pfs_wbuf w;
	pfs_rbuf r;

	pfs_wbuf_init(&w);
	pfs_qos_alloc_set_encode(&w, &s);
	pfs_rbuf_init(&r, w.data, w.len);
	assert_int_equal(pfs_qos_alloc_set_decode(&r, &d), 0);
	assert_int_equal(pfs_rbuf_done(&r), 0);
	assert_int_equal(d.generation, 7);
	assert_int_equal(d.n, 2);
	assert_string_equal(d.rows[1].job, "b");
	assert_int_equal(d.rows[1].ost, PFS_QOS_OST_ALL);
	assert_true(d.rows[0].rate == 35e6 && d.rows[1].nodes == 3);
	pfs_qos_alloc_set_free(&d);
	assert_null(d.rows);
	for (size_t cut = 0; cut < w.len; cut++) {
		pfs_rbuf_init(&r, w.data, cut);
		assert_int_not_equal(pfs_qos_alloc_set_decode(&r, &d), 0);
		assert_null(d.rows);
	}
	/* a count the payload cannot hold is refused before allocating */
	pfs_wbuf_reset(&w);
	pfs_wbuf_u64(&w, 1);
	pfs_wbuf_u8(&w, PFS_QOS_MODE_RATES);
	pfs_wbuf_f64(&w, 0.1);
	pfs_wbuf_u32(&w, 0xffffffffu);
	pfs_rbuf_init(&r, w.data, w.len);
	assert_int_equal(pfs_qos_alloc_set_decode(&r, &d), -EBADMSG);
	assert_null(d.rows);
	/* negative rate, NaN rate, bad mode, zero period */
	rows[0].rate = -1;
	pfs_wbuf_reset(&w);
	pfs_qos_alloc_set_encode(&w, &s);
	pfs_rbuf_init(&r, w.data, w.len);
	assert_int_equal(pfs_qos_alloc_set_decode(&r, &d), -EBADMSG);
	assert_null(d.rows);
	rows[0].rate = NAN;
	pfs_wbuf_reset(&w);
	pfs_qos_alloc_set_encode(&w, &s);
	pfs_rbuf_init(&r, w.data, w.len);
	assert_int_equal(pfs_qos_alloc_set_decode(&r, &d), -EBADMSG);
	rows[0].rate = 1;
	s.mode = 9;
	pfs_wbuf_reset(&w);
	pfs_qos_alloc_set_encode(&w, &s);
	pfs_rbuf_init(&r, w.data, w.len);
	assert_int_equal(pfs_qos_alloc_set_decode(&r, &d), -EBADMSG);
	s.mode = PFS_QOS_MODE_ADAPTBF;
	s.adaptbf_period = 0;
	pfs_wbuf_reset(&w);
	pfs_qos_alloc_set_encode(&w, &s);
	pfs_rbuf_init(&r, w.data, w.len);
	assert_int_equal(pfs_qos_alloc_set_decode(&r, &d), -EBADMSG);
	pfs_wbuf_free(&w);
}

static void test_qosmsg_stats_and_status(void **state)
{
	pfs_qos_stat st = { .job = "j", .ost = 3, .write_rpcs = 10, .write_bytes = 10 << 20,
			    .arrived_rpcs = 12, .queued = 2, .throttled_us = 5,
			    .rate = -1, .record = -4, .tokens = 9, .nodes = 5 }, sd;
	pfs_qos_ost_info oi = { .ost = 3, .capacity = 1e8, .credit = 4,
				.mode = PFS_QOS_MODE_ADAPTBF }, od;
	pfs_qos_status qs = { .policy = "gift", .answered = 3, .oss_total = 4,
			      .quorum_pct = 80, .interval = 10, .n_params = 2 }, qd;
	pfs_qos_row row = { .job = "j", .ost = 1, .alloc = 35e6, .achieved = 34e6,
			    .throttled = 1 }, rd;
	pfs_qos_coupon_info ci = { .job = "A", .rate = 1, .outstanding = 0.15,
				   .n_coupons = 1 }, cd;
	pfs_qos_regret_info ri = { .budget_nh = 360, .period_s = 86400, .c_sys = 1,
				   .coupons_issued = 1 }, rgd;
	pfs_nrs_rule_info ni = { .name = "r1", .expr = "jobid={a} rate=10MB/s",
				 .ost = PFS_QOS_OST_ALL, .origin = PFS_NRS_ORIGIN_ADMIN }, nd;
	pfs_wbuf w;
	pfs_rbuf r;

	strcpy(qs.params[0].key, "B_thres");
	qs.params[0].value = 0.3;
	strcpy(qs.params[1].key, "tau");
	qs.params[1].value = 0.8;
	pfs_wbuf_init(&w);
	pfs_qos_stat_encode(&w, &st);
	pfs_qos_ost_info_encode(&w, &oi);
	pfs_qos_status_encode(&w, &qs);
	pfs_qos_row_encode(&w, &row);
	pfs_qos_coupon_info_encode(&w, &ci);
	pfs_qos_regret_info_encode(&w, &ri);
	pfs_nrs_rule_info_encode(&w, &ni);
	pfs_rbuf_init(&r, w.data, w.len);
	assert_int_equal(pfs_qos_stat_decode(&r, &sd), 0);
	assert_int_equal(pfs_qos_ost_info_decode(&r, &od), 0);
	assert_int_equal(pfs_qos_status_decode(&r, &qd), 0);
	assert_int_equal(pfs_qos_row_decode(&r, &rd), 0);
	assert_int_equal(pfs_qos_coupon_info_decode(&r, &cd), 0);
	assert_int_equal(pfs_qos_regret_info_decode(&r, &rgd), 0);
	assert_int_equal(pfs_nrs_rule_info_decode(&r, &nd), 0);
	assert_int_equal(pfs_rbuf_done(&r), 0);
	assert_true(sd.record == -4 && sd.rate == -1 && sd.tokens == 9);
	assert_int_equal(sd.write_bytes, 10 << 20);
	assert_int_equal(od.mode, PFS_QOS_MODE_ADAPTBF);
	assert_string_equal(qd.policy, "gift");
	assert_int_equal(qd.n_params, 2);
	assert_string_equal(qd.params[1].key, "tau");
	assert_true(rd.alloc == 35e6 && rd.throttled == 1);
	assert_true(cd.outstanding == 0.15);
	assert_true(rgd.budget_nh == 360);
	assert_string_equal(nd.expr, "jobid={a} rate=10MB/s");
	/* every truncation of the whole sequence fails somewhere */
	for (size_t cut = 0; cut < w.len; cut++) {
		int rc = 0;

		pfs_rbuf_init(&r, w.data, cut);
		rc = rc ? rc : pfs_qos_stat_decode(&r, &sd);
		rc = rc ? rc : pfs_qos_ost_info_decode(&r, &od);
		rc = rc ? rc : pfs_qos_status_decode(&r, &qd);
		rc = rc ? rc : pfs_qos_row_decode(&r, &rd);
		rc = rc ? rc : pfs_qos_coupon_info_decode(&r, &cd);
		rc = rc ? rc : pfs_qos_regret_info_decode(&r, &rgd);
		rc = rc ? rc : pfs_nrs_rule_info_decode(&r, &nd);
		assert_int_equal(rc, -EBADMSG);
	}
	/* too many params; a coupon rate above 1 */
	qs.n_params = PFS_QOS_PARAMS_MAX + 1;
	pfs_wbuf_reset(&w);
	pfs_wbuf_str(&w, "gift");
	pfs_wbuf_i64(&w, 0);
	pfs_wbuf_u32(&w, 0);
	pfs_wbuf_u32(&w, 0);
	pfs_wbuf_u32(&w, 80);
	pfs_wbuf_f64(&w, 10);
	pfs_wbuf_f64(&w, 0);
	pfs_wbuf_u64(&w, 0);
	pfs_wbuf_u64(&w, 0);
	pfs_wbuf_u32(&w, PFS_QOS_PARAMS_MAX + 1);
	pfs_rbuf_init(&r, w.data, w.len);
	assert_int_equal(pfs_qos_status_decode(&r, &qd), -EBADMSG);
	ci.rate = 1.5;
	pfs_wbuf_reset(&w);
	pfs_qos_coupon_info_encode(&w, &ci);
	pfs_rbuf_init(&r, w.data, w.len);
	assert_int_equal(pfs_qos_coupon_info_decode(&r, &cd), -EBADMSG);
	pfs_wbuf_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_qosmsg_f64),
		cmocka_unit_test(test_qosmsg_job_info),
		cmocka_unit_test(test_qosmsg_alloc_set),
		cmocka_unit_test(test_qosmsg_stats_and_status),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
