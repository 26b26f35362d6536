/* test_mds_mdqos.c — mds/mdqos: options and settings refused with clear
 * errors, each algorithm's rates after a control step (injected clock, no
 * threads), the MDS's own enforcement (admit, defer, pace at the rate),
 * the pull (usage in, per-mount rates out), the LMDB record across a
 * reopen, and requests that cost several operations (UNLINK_BATCH: n
 * unlinks) admitted and released with as many tokens. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/log.h"
#include "mds/mdqos.h"
#include "mds/nsdb.h"

static double fake_now;
static double clk(void *arg) { return fake_now; }

static mds_mdqos *make(const char *algo, const char *max_r, const char *params)
{
	mds_mdqos_opts o = { .algo = algo, .max_r = max_r, .params = params,
			     .no_threads = 1, .now = clk };
	mds_mdqos *q = NULL;
	char err[256];

	assert_int_equal(mds_mdqos_create(NULL, NULL, &o, &q, err, sizeof(err)), 0);
	return q;
}

static double rate_of(mds_mdqos *q, const char *job, unsigned cls)
{
	pfs_mdq_status st;
	double r = -1;

	assert_int_equal(mds_mdqos_show(q, &st), 0);
	for (uint32_t i = 0; i < st.n; i++)
		if (!strcmp(st.rows[i].job, job) && st.rows[i].cls == cls)
			r = st.rows[i].rate;
	pfs_mdq_status_free(&st);
	return r;
}

/* n requests of job's creates at the current time, admitted or not */
static int admit_n(mds_mdqos *q, const char *job, int n)
{
	int ok = 0;

	for (int i = 0; i < n; i++)
		ok += mds_mdqos_admit(q, job, PFS_OP_MDS_CREATE, 1) == 0;
	return ok;
}

static void test_bad_options(void **st)
{
	const char *bad[][3] = {
		{ "fair", "", "" },
		{ "uniform", "bogus=10", "" },
		{ "uniform", "create=0", "" },
		{ "uniform", "create=-4", "" },
		{ "uniform", "create=abc", "" },
		{ "psfa", "", "epsilon=2" },
		{ "psfa", "", "nope=1" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		mds_mdqos_opts o = { .algo = bad[i][0], .max_r = bad[i][1], .params = bad[i][2],
				     .no_threads = 1 };
		mds_mdqos *q = NULL;
		char err[256] = "";
		assert_int_equal(mds_mdqos_create(NULL, NULL, &o, &q, err, sizeof(err)), -EINVAL);
		assert_null(q);
		assert_true(err[0] != '\0');
	}
	mds_mdqos_opts o = { .map = "MDS_LOOKUP=nope", .no_threads = 1 };
	mds_mdqos *q = NULL;
	char err[256] = "";
	assert_int_equal(mds_mdqos_create(NULL, NULL, &o, &q, err, sizeof(err)), -EINVAL);
}

static void test_bad_settings(void **st)
{
	mds_mdqos *q = make("uniform", "create=100", "");
	char err[256];
	const char *k1[] = { "max_r.bogus" }, *v1[] = { "10" };
	const char *k2[] = { "max_r.open", "max_r.create" }, *v2[] = { "50", "0" };
	const char *k3[] = { "max_r.create" }, *v3[] = { "-3" };
	const char *k4[] = { "demand.create" }, *v4[] = { "10" };
	const char *k5[] = { "algo" }, *v5[] = { "fast" };

	assert_int_equal(mds_mdqos_set(q, "", k1, v1, 1, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "unknown class"));
	/* all or nothing: the good first key is not applied either */
	assert_int_equal(mds_mdqos_set(q, "", k2, v2, 2, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "> 0"));
	assert_int_equal(mds_mdqos_set(q, "", k3, v3, 1, err, sizeof(err)), -EINVAL);
	assert_int_equal(mds_mdqos_set(q, "", k4, v4, 1, err, sizeof(err)), -EINVAL);
	assert_int_equal(mds_mdqos_set(q, "", k5, v5, 1, err, sizeof(err)), -EINVAL);
	pfs_mdq_status s;
	assert_int_equal(mds_mdqos_show(q, &s), 0);
	assert_string_equal(s.algo, "uniform");
	assert_true(s.max_r[PFS_MDQ_OPEN] == 0);
	assert_true(s.max_r[PFS_MDQ_CREATE] == 100);
	pfs_mdq_status_free(&s);
	mds_mdqos_destroy(q);
}

static void test_uniform_and_enforce(void **st)
{
	mds_mdqos *q;
	int ok;

	fake_now = 1000;
	q = make("uniform", "create=100", "jobs=4");
	admit_n(q, "a", 1);
	admit_n(q, "b", 1);
	fake_now += 1;
	mds_mdqos_step(q);
	assert_true(fabs(rate_of(q, "a", PFS_MDQ_CREATE) - 25) < 1e-9);
	assert_true(fabs(rate_of(q, "b", PFS_MDQ_CREATE) - 25) < 1e-9);
	/* unlimited classes and job-less requests always pass */
	assert_int_equal(mds_mdqos_admit(q, "a", PFS_OP_MDS_GETATTR, 1), 0);
	assert_int_equal(mds_mdqos_admit(q, "", PFS_OP_MDS_CREATE, 1), 0);
	/* a burst: the bucket's depth passes, the rest must be deferred */
	ok = admit_n(q, "a", 50);
	assert_true(ok >= 1 && ok <= 3);
	assert_int_equal(mds_mdqos_admit(q, "a", PFS_OP_MDS_CREATE, 1), -EAGAIN);
	mds_mdqos_destroy(q);
}

static int released;
static int shut;
static void on_release(void *arg, int status)
{
	if (status == 0)
		released++;
	else
		shut++;
}

static void test_defer_paced(void **st)
{
	mds_mdqos *q;

	fake_now = 2000;
	q = make("uniform", "create=10", "jobs=1");
	admit_n(q, "a", 1);
	fake_now += 1;
	mds_mdqos_step(q);
	admit_n(q, "a", 10); /* empty the bucket */
	released = shut = 0;
	for (int i = 0; i < 30; i++)
		assert_int_equal(mds_mdqos_defer(q, "a", PFS_OP_MDS_CREATE, 1, on_release, NULL), 0);
	/* 10/s: after 1 s about 10 released, after 2 s about 20 */
	for (int t = 0; t < 100; t++) {
		fake_now += 0.01;
		mds_mdqos_pace(q);
	}
	assert_true(released >= 9 && released <= 11);
	for (int t = 0; t < 100; t++) {
		fake_now += 0.01;
		mds_mdqos_pace(q);
	}
	assert_true(released >= 19 && released <= 21);
	/* what is left is answered at destroy */
	int left = 30 - released;
	mds_mdqos_destroy(q);
	assert_int_equal(shut, left);
}

static void test_priority_proportional_psfa(void **st)
{
	mds_mdqos *q;
	char err[256];

	/* proportional with demands 10, 100: 10 and 90 of Max_R 100 */
	fake_now = 3000;
	q = make("proportional", "create=100", "");
	const char *k[] = { "demand.create" }, *v10[] = { "10" }, *v100[] = { "100" };
	assert_int_equal(mds_mdqos_set(q, "a", k, v10, 1, err, sizeof(err)), 0);
	assert_int_equal(mds_mdqos_set(q, "b", k, v100, 1, err, sizeof(err)), 0);
	admit_n(q, "a", 1);
	admit_n(q, "b", 1);
	fake_now += 1;
	mds_mdqos_step(q);
	assert_true(fabs(rate_of(q, "a", PFS_MDQ_CREATE) - 10) < 1e-6);
	assert_true(fabs(rate_of(q, "b", PFS_MDQ_CREATE) - 90) < 1e-6);
	/* PSFA: an idle job drops to the trickle, its headroom goes to b */
	const char *ka[] = { "algo" }, *va[] = { "psfa" };
	assert_int_equal(mds_mdqos_set(q, "", ka, va, 1, err, sizeof(err)), 0);
	admit_n(q, "b", 1);
	fake_now += 1;
	mds_mdqos_step(q);
	assert_true(fabs(rate_of(q, "b", PFS_MDQ_CREATE) - 100) < 1e-6);
	assert_true(fabs(rate_of(q, "a", PFS_MDQ_CREATE) - 1) < 1e-6); /* 1 % of 100 */
	mds_mdqos_destroy(q);

	/* priority without a registry: every weight 1 -> uniform over W */
	fake_now = 4000;
	q = make("priority", "unlink=90", "weight_sum=3");
	mds_mdqos_admit(q, "x", PFS_OP_MDS_UNLINK, 1);
	fake_now += 1;
	mds_mdqos_step(q);
	assert_true(fabs(rate_of(q, "x", PFS_MDQ_UNLINK) - 30) < 1e-6);
	mds_mdqos_destroy(q);
}

static void test_pull(void **st)
{
	mds_mdqos *q;
	pfs_mdq_row use[1] = { { "a", PFS_MDQ_CREATE, 5 } };
	pfs_wbuf req, rep;
	pfs_rbuf r;
	pfs_mdq_rates rt;

	fake_now = 5000;
	q = make("uniform", "create=100", "jobs=2");
	for (uint64_t client = 1; client <= 2; client++) {
		pfs_wbuf_init(&req);
		pfs_wbuf_init(&rep);
		pfs_mdq_usage_encode(&req, use, 1);
		pfs_rbuf_init(&r, req.data, req.len);
		assert_int_equal(mds_mdqos_pull(q, client, &r, &rep), 0);
		pfs_wbuf_free(&req);
		pfs_wbuf_free(&rep);
	}
	fake_now += 1;
	mds_mdqos_step(q);
	/* job a's 50/s is shared by the two mounts that report it */
	pfs_wbuf_init(&req);
	pfs_wbuf_init(&rep);
	pfs_mdq_usage_encode(&req, use, 1);
	pfs_rbuf_init(&r, req.data, req.len);
	assert_int_equal(mds_mdqos_pull(q, 1, &r, &rep), 0);
	pfs_rbuf_init(&r, rep.data, rep.len);
	assert_int_equal(pfs_mdq_rates_decode(&r, &rt), 0);
	assert_int_equal(rt.limited[PFS_MDQ_CREATE], 1);
	assert_int_equal(rt.limited[PFS_MDQ_GETATTR], 0);
	assert_int_equal(rt.map.cls[PFS_OP_MDS_CREATE], PFS_MDQ_CREATE);
	assert_int_equal(rt.n, 1);
	assert_string_equal(rt.rows[0].job, "a");
	assert_true(fabs(rt.rows[0].value - 25) < 1e-6);
	pfs_mdq_rates_free(&rt);
	pfs_wbuf_free(&req);
	pfs_wbuf_free(&rep);
	/* a malformed usage report */
	uint8_t junk[5] = { 1, 0, 0, 0, 9 };
	pfs_wbuf_init(&rep);
	pfs_rbuf_init(&r, junk, sizeof(junk));
	assert_int_equal(mds_mdqos_pull(q, 1, &r, &rep), -EBADMSG);
	pfs_wbuf_free(&rep);
	mds_mdqos_destroy(q);
}

static void test_persisted(void **st)
{
	char dir[] = "/tmp/test_mds_mdqos.XXXXXX", db[64], cmd[128], err[256];
	mds_ns_opts no = { .mapsize = 1ull << 26 };
	mds_mdqos_opts o = { .algo = "none", .no_threads = 1 };
	mds_ns *ns;
	mds_mdqos *q;
	const char *k[] = { "algo", "max_r.mkdir" }, *v[] = { "psfa", "77" };
	const char *kd[] = { "demand.mkdir" }, *vd[] = { "5" };

	assert_non_null(mkdtemp(dir));
	snprintf(db, sizeof(db), "%s/db", dir);
	no.path = db;
	assert_int_equal(mds_ns_open(&no, &ns), 0);
	assert_int_equal(mds_mdqos_create(ns, NULL, &o, &q, err, sizeof(err)), 0);
	assert_int_equal(mds_mdqos_set(q, "", k, v, 2, err, sizeof(err)), 0);
	assert_int_equal(mds_mdqos_set(q, "j", kd, vd, 1, err, sizeof(err)), 0);
	mds_mdqos_destroy(q);
	mds_ns_close(ns);
	assert_int_equal(mds_ns_open(&no, &ns), 0);
	assert_int_equal(mds_mdqos_create(ns, NULL, &o, &q, err, sizeof(err)), 0);
	pfs_mdq_status s;
	assert_int_equal(mds_mdqos_show(q, &s), 0);
	assert_string_equal(s.algo, "psfa"); /* stored wins over the option */
	assert_true(s.max_r[PFS_MDQ_MKDIR] == 77);
	int found = 0;
	for (uint32_t i = 0; i < s.n; i++)
		found |= !strcmp(s.rows[i].job, "j") && s.rows[i].demand == 5;
	assert_true(found);
	pfs_mdq_status_free(&s);
	mds_mdqos_destroy(q);
	mds_ns_close(ns);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}


static double rel_at[8];
static int nrel_at;
static void on_release_at(void *arg, int status)
{
	if (status == 0 && nrel_at < 8)
		rel_at[nrel_at++] = fake_now;
}

/* Pace in steps of 10 ms for at most s seconds or until want released. */
static void pace_for(mds_mdqos *q, double s, int want)
{
	for (int t = 0; t < (int)(s * 100 + 0.5) && nrel_at < want; t++) {
		fake_now += 0.01;
		mds_mdqos_pace(q);
	}
}

/* A batch of n unlinks costs n tokens: admitted on a full bucket it takes
 * 10 of its 10.3 (100/s, +3 % slack, 100 ms deep), so the next unlink
 * waits; deferred, it goes only when 10 tokens are there.  A cost above
 * the depth (32) is not starved: it goes on a full bucket and leaves it in
 * debt, which the next request waits for (the long-run rate holds). */
static void test_batch_cost(void **st)
{
	mds_mdqos *q;
	double t0;

	fake_now = 3000;
	q = make("uniform", "unlink=100", "jobs=1");
	assert_int_equal(mds_mdqos_admit(q, "a", PFS_OP_MDS_UNLINK, 1), 0);
	fake_now += 1;
	mds_mdqos_step(q);
	assert_true(fabs(rate_of(q, "a", PFS_MDQ_UNLINK) - 100) < 1e-9);
	/* full: a batch of 10 passes, then 0.3 tokens are left */
	assert_int_equal(mds_mdqos_admit(q, "a", PFS_OP_MDS_UNLINK_BATCH, 10), 0);
	assert_int_equal(mds_mdqos_admit(q, "a", PFS_OP_MDS_UNLINK, 1), -EAGAIN);
	/* the same batch again: deferred until 10 tokens (9.7 / 103 s = 94 ms) */
	assert_int_equal(mds_mdqos_admit(q, "a", PFS_OP_MDS_UNLINK_BATCH, 10), -EAGAIN);
	nrel_at = 0;
	t0 = fake_now;
	assert_int_equal(mds_mdqos_defer(q, "a", PFS_OP_MDS_UNLINK_BATCH, 10, on_release_at,
					   NULL), 0);
	/* while it waits, a lone unlink queues behind it (FIFO) */
	assert_int_equal(mds_mdqos_admit(q, "a", PFS_OP_MDS_UNLINK, 1), -EAGAIN);
	pace_for(q, 0.09, 1);
	assert_int_equal(nrel_at, 0);
	pace_for(q, 0.02, 1);
	assert_int_equal(nrel_at, 1);
	assert_true(rel_at[0] - t0 > 0.09 && rel_at[0] - t0 < 0.11);
	/* 32 > the depth: waits for a full bucket (about 94 ms), goes */
	nrel_at = 0;
	t0 = fake_now;
	assert_int_equal(mds_mdqos_defer(q, "a", PFS_OP_MDS_UNLINK_BATCH, 32, on_release_at,
					   NULL), 0);
	assert_int_equal(mds_mdqos_defer(q, "a", PFS_OP_MDS_UNLINK, 1, on_release_at, NULL), 0);
	pace_for(q, 2, 1);
	assert_int_equal(nrel_at, 1);
	assert_true(rel_at[0] - t0 > 0.08 && rel_at[0] - t0 < 0.11);
	/* then the debt (32 - 10.3 tokens) and one more: about 220 ms */
	pace_for(q, 2, 2);
	assert_int_equal(nrel_at, 2);
	assert_true(rel_at[1] - rel_at[0] > 0.2 && rel_at[1] - rel_at[0] < 0.24);
	/* admitted at once too: on a full bucket, then the next waits */
	fake_now += 1;
	assert_int_equal(mds_mdqos_admit(q, "a", PFS_OP_MDS_UNLINK_BATCH, 32), 0);
	fake_now += 0.15;
	assert_int_equal(mds_mdqos_admit(q, "a", PFS_OP_MDS_UNLINK, 1), -EAGAIN);
	mds_mdqos_destroy(q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_options),
		cmocka_unit_test(test_bad_settings),
		cmocka_unit_test(test_uniform_and_enforce),
		cmocka_unit_test(test_defer_paced),
		cmocka_unit_test(test_priority_proportional_psfa),
		cmocka_unit_test(test_pull),
		cmocka_unit_test(test_persisted),
		cmocka_unit_test(test_batch_cost),
	};
	pfs_log_init("test", PFS_LOG_ERR);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
