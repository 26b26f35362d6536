/* test_mds_qosctl.c — the MDS QoS control loop driven step by step with
 * fake OSSes (collect/push function pointers) and an injected clock: no
 * sockets, no sleeps.  Quorum, an OSS that misses a round, policy changes
 * at run time and refused ones, GIFT's Fig. 6 with its ledger surviving a
 * close/reopen of the MDS environment, limits, automatic job entries and
 * who sees what. */
#include <errno.h>
#include <math.h>
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

#include "common/log.h"
#include "mds/jobs.h"
#include "mds/ns.h"
#include "mds/qosctl.h"

#define SEC 1000000000ll
#define MAXOSS 4
#define MAXST 64
#define MB 1e6
#define TOL 1.0 /* bytes/s */

struct fake_stat {
	char job[PFS_JOBID_MAX + 1];
	uint32_t ost;
	uint64_t served, arrived; /* bytes in the 10 s period */
};

struct fx {
	char dir[64], db[96];
	mds_ns *ns;
	mds_jobs *jobs;
	mds_qosctl *ctl;
	int64_t now;       /* realtime ns for jobs and the controller */
	uint64_t now_ms;   /* monotonic ms for OST liveness */
	/* the fake OSSes: "oss<i>" serves OST i */
	int n_oss;
	int answer[MAXOSS];
	int push_fail[MAXOSS];
	double cap[MAXOSS];
	struct fake_stat st[MAXST];
	int nst;
	int ncollect;
	int npush[MAXOSS];
	pfs_qos_alloc_set last[MAXOSS];
};

static int64_t fx_rt(void *arg)
{
	return ((struct fx *)arg)->now;
}

static uint64_t fx_mono(void *arg)
{
	return ((struct fx *)arg)->now_ms;
}

static int oss_index(const char *name)
{
	return atoi(name + 3);
}

static void fake_collect(void *ctx, const mds_qos_oss *oss, size_t n, mds_qos_report *out)
{
	struct fx *f = ctx;

	f->ncollect++;
	for (size_t i = 0; i < n; i++) {
		int k = oss_index(oss[i].name);
		mds_qos_report *r = &out[i];
		if (!f->answer[k]) {
			r->rc = -ETIMEDOUT;
			continue;
		}
		r->period_s = 10.0;
		r->osts = calloc(oss[i].n_osts, sizeof(*r->osts));
		r->stats = calloc(MAXST, sizeof(*r->stats));
		assert_non_null(r->osts);
		assert_non_null(r->stats);
		for (uint32_t o = 0; o < oss[i].n_osts; o++) {
			r->osts[o].ost = oss[i].osts[o];
			r->osts[o].capacity = f->cap[oss[i].osts[o]];
		}
		r->n_osts = oss[i].n_osts;
		for (int s = 0; s < f->nst; s++) {
			uint32_t o;
			for (o = 0; o < oss[i].n_osts && oss[i].osts[o] != f->st[s].ost; o++)
				;
			if (o == oss[i].n_osts)
				continue;
			pfs_qos_stat *x = &r->stats[r->n++];
			strcpy(x->job, f->st[s].job);
			x->ost = f->st[s].ost;
			x->write_bytes = f->st[s].served;
			x->arrived_bytes = f->st[s].arrived;
			x->arrived_rpcs = f->st[s].arrived ? 1 : 0;
			x->rate = -1;
		}
	}
}

static void fake_push(void *ctx, const mds_qos_oss *oss, const pfs_qos_alloc_set *sets,
		      size_t n, int *rc)
{
	struct fx *f = ctx;

	for (size_t i = 0; i < n; i++) {
		int k = oss_index(oss[i].name);
		if (f->push_fail[k]) {
			rc[i] = -ECONNREFUSED;
			continue;
		}
		pfs_qos_alloc_set_free(&f->last[k]);
		f->last[k] = sets[i];
		f->last[k].rows = NULL;
		if (sets[i].n) {
			f->last[k].rows = malloc(sets[i].n * sizeof(*sets[i].rows));
			assert_non_null(f->last[k].rows);
			memcpy(f->last[k].rows, sets[i].rows, sets[i].n * sizeof(*sets[i].rows));
		}
		f->npush[k]++;
		rc[i] = 0;
	}
}

static void ctl_open(struct fx *f, const char *policy, const char *params)
{
	char err[256] = "";
	mds_qosctl_opts o = {
		.policy = policy, .params = params, .interval = 10,
		.ops = { fake_collect, fake_push, f }, .clock_ns = fx_rt, .clock_arg = f,
	};
	int rc = mds_qosctl_create(f->ns, f->jobs, &o, &f->ctl, err, sizeof(err));
	if (rc)
		fprintf(stderr, "mds_qosctl_create: %s\n", err);
	assert_int_equal(rc, 0);
}

static void env_open(struct fx *f)
{
	mds_ns_opts no = { .path = f->db, .mapsize = 1ull << 28, .clock_ms = fx_mono,
			   .clock_arg = f };
	mds_jobs_opts jo = { .clock_ns = fx_rt, .clock_arg = f };

	assert_int_equal(mds_ns_open(&no, &f->ns), 0);
	assert_int_equal(mds_jobs_open(f->ns, &jo, &f->jobs), 0);
}

static void env_close(struct fx *f)
{
	mds_qosctl_destroy(f->ctl);
	mds_jobs_close(f->jobs);
	mds_ns_close(f->ns);
	f->ctl = NULL;
	f->jobs = NULL;
	f->ns = NULL;
}

/* Register OSS k with one OST (indices are handed out in registration
 * order, so OSS k serves OST k). */
static void oss_register(struct fx *f, int k)
{
	mds_ost_report r;
	uint32_t idx;
	char name[16];

	memset(&r, 0, sizeof(r));
	snprintf(name, sizeof(name), "oss%d", k);
	snprintf(r.uuid, sizeof(r.uuid), "ost-uuid-%d", k);
	r.total_bytes = 1ull << 40;
	r.free_bytes = 1ull << 39;
	assert_int_equal(mds_ns_oss_register(f->ns, name, "127.0.0.1", 7000 + k, 8000 + k, &r,
					     1, &idx), 0);
	assert_int_equal(idx, k);
}

static void fx_init(struct fx *f, int n_oss)
{
	pfs_log_init("test", PFS_LOG_ERR);
	strcpy(f->dir, "/tmp/test_mds_qosctl.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->db, sizeof(f->db), "%s/db", f->dir);
	f->now = 1700000000ll * SEC;
	f->now_ms = 5000000;
	f->n_oss = n_oss;
	env_open(f);
	for (int k = 0; k < n_oss; k++) {
		oss_register(f, k);
		f->answer[k] = 1;
	}
	for (int o = 0; o < MAXOSS; o++)
		f->cap[o] = 100 * MB;
}

static int setup4(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	fx_init(f, 4);
	ctl_open(f, "pofs", NULL);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char p[160];

	env_close(f);
	for (int k = 0; k < MAXOSS; k++)
		pfs_qos_alloc_set_free(&f->last[k]);
	const char *files[] = { "data.mdb", "lock.mdb", "mds.lock" };
	for (size_t i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s/%s", f->db, files[i]);
		unlink(p);
	}
	rmdir(f->db);
	rmdir(f->dir);
	free(f);
	return 0;
}

static void stat_add(struct fx *f, const char *job, uint32_t ost, double served_bps,
		     double demand_bps)
{
	struct fake_stat *s = &f->st[f->nst++];
	snprintf(s->job, sizeof(s->job), "%s", job);
	s->ost = ost;
	s->served = (uint64_t)(served_bps * 10);
	s->arrived = (uint64_t)(demand_bps * 10);
}

/* Rate pushed to OSS k for (job, ost); -1 if no row. */
static double rate(const struct fx *f, int k, const char *job, uint32_t ost)
{
	for (uint32_t i = 0; i < f->last[k].n; i++)
		if (!strcmp(f->last[k].rows[i].job, job) && f->last[k].rows[i].ost == ost)
			return f->last[k].rows[i].rate;
	return -1;
}

static void status(struct fx *f, pfs_qos_status *st)
{
	pfs_qos_row *rows = NULL;
	uint32_t n = 0;
	assert_int_equal(mds_qosctl_show(f->ctl, "", 0, 1000, st, &rows, &n), 0);
	free(rows);
}

static void reg(struct fx *f, const char *job, uint32_t uid, uint32_t nodes, double limit)
{
	pfs_job_info j;
	memset(&j, 0, sizeof(j));
	snprintf(j.job, sizeof(j.job), "%s", job);
	j.uid = uid;
	j.nodes = nodes;
	j.priority = 1;
	j.limit = limit;
	j.throttle_friendly = 1;
	assert_int_equal(mds_jobs_register(f->jobs, 0, &j), 0);
}

/* ------------------------------------------------------------------ tests */

static void test_qosctl_quorum(void **state)
{
	struct fx *f = *state;
	pfs_qos_status st;

	stat_add(f, "A", 0, 50 * MB, 80 * MB);
	stat_add(f, "B", 0, 50 * MB, 80 * MB);
	stat_add(f, "A", 1, 10 * MB, 10 * MB);
	/* 3 of 4 answer: 75% < 80%: skipped, nothing pushed */
	f->answer[3] = 0;
	assert_int_equal(mds_qosctl_step(f->ctl), -EAGAIN);
	status(f, &st);
	assert_int_equal(st.decisions, 0);
	assert_int_equal(st.skipped, 1);
	for (int k = 0; k < 4; k++)
		assert_int_equal(f->npush[k], 0);
	/* with quorum 75 the same round decides */
	qos_param q = { "quorum", 75 };
	assert_int_equal(mds_qosctl_set(f->ctl, NULL, &q, 1), 0);
	assert_int_equal(mds_qosctl_step(f->ctl), 0);
	status(f, &st);
	assert_int_equal(st.decisions, 1);
	assert_int_equal(st.answered, 3);
	assert_int_equal(st.oss_total, 4);
	assert_int_equal(st.quorum_pct, 75);
	for (int k = 0; k < 3; k++)
		assert_int_equal(f->npush[k], 1);
	assert_int_equal(f->npush[3], 0);
	assert_float_equal(rate(f, 0, "A", 0), 50 * MB, TOL);
	assert_float_equal(rate(f, 0, "B", 0), 50 * MB, TOL);
	assert_float_equal(rate(f, 1, "A", 1), 100 * MB, TOL);
	assert_int_equal(f->last[0].mode, PFS_QOS_MODE_RATES);
	assert_int_equal(f->last[0].generation, 1);
	/* 2 of 4: skipped and counted */
	f->answer[2] = 0;
	assert_int_equal(mds_qosctl_step(f->ctl), -EAGAIN);
	status(f, &st);
	assert_int_equal(st.decisions, 1);
	assert_int_equal(st.skipped, 2);
	assert_int_equal(f->npush[0], 1);
	/* an OSS that stopped heartbeating no longer counts: 2 of 2 up */
	f->now_ms += 60000;
	mds_ost_report hb = { .index = 0, .total_bytes = 1 };
	assert_int_equal(mds_ns_oss_heartbeat(f->ns, "oss0", &hb, 1), 0);
	hb.index = 1;
	assert_int_equal(mds_ns_oss_heartbeat(f->ns, "oss1", &hb, 1), 0);
	assert_int_equal(mds_qosctl_step(f->ctl), 0);
	status(f, &st);
	assert_int_equal(st.answered, 2);
	assert_int_equal(st.oss_total, 2);
}

static void test_qosctl_missing_oss_keeps_rates(void **state)
{
	struct fx *f = *state;

	qos_param q = { "quorum", 75 };
	assert_int_equal(mds_qosctl_set(f->ctl, NULL, &q, 1), 0);
	stat_add(f, "A", 3, 10 * MB, 10 * MB);
	stat_add(f, "B", 3, 10 * MB, 10 * MB);
	stat_add(f, "A", 0, 10 * MB, 10 * MB);
	assert_int_equal(mds_qosctl_step(f->ctl), 0);
	for (int k = 0; k < 4; k++) {
		assert_int_equal(f->npush[k], 1);
		assert_int_equal(f->last[k].generation, 1);
	}
	assert_float_equal(rate(f, 3, "A", 3), 50 * MB, TOL);
	/* oss3 misses a round: not pushed, keeps generation 1 */
	f->answer[3] = 0;
	f->st[2].arrived = 0;   /* A idle on OST 0 now */
	assert_int_equal(mds_qosctl_step(f->ctl), 0);
	assert_int_equal(f->npush[3], 1);
	assert_int_equal(f->last[3].generation, 1);
	assert_int_equal(f->last[0].generation, 2);
	assert_int_equal(f->last[0].n, 0);      /* no active pair left on OST 0 */
	/* back, with C joining: fresh rates and the newest generation */
	f->answer[3] = 1;
	stat_add(f, "C", 3, 10 * MB, 10 * MB);
	assert_int_equal(mds_qosctl_step(f->ctl), 0);
	assert_int_equal(f->npush[3], 2);
	assert_int_equal(f->last[3].generation, 3);
	assert_float_equal(rate(f, 3, "A", 3), 100 * MB / 3, TOL);
	assert_float_equal(rate(f, 3, "C", 3), 100 * MB / 3, TOL);

	/* a push that fails is counted and retried with the next decision */
	mds_qosctl_counters cnt;
	f->push_fail[1] = 1;
	assert_int_equal(mds_qosctl_step(f->ctl), 0);
	mds_qosctl_counters_get(f->ctl, &cnt);
	assert_int_equal(cnt.push_failures, 1);
	assert_int_equal(f->last[1].generation, 3);
	f->push_fail[1] = 0;
	assert_int_equal(mds_qosctl_step(f->ctl), 0);
	assert_int_equal(f->last[1].generation, 5);
}

static void test_qosctl_policy_switch(void **state)
{
	struct fx *f = *state;
	pfs_qos_status st;
	int pushes;

	reg(f, "B", 1000, 3, 0);
	stat_add(f, "A", 0, 10 * MB, 10 * MB);
	stat_add(f, "B", 0, 10 * MB, 10 * MB);
	assert_int_equal(mds_qosctl_set(f->ctl, "static", NULL, 0), 0);
	assert_int_equal(mds_qosctl_step(f->ctl), 0);
	/* static: shares by nodes x priority: 1 : 3 */
	assert_float_equal(rate(f, 0, "A", 0), 25 * MB, TOL);
	assert_float_equal(rate(f, 0, "B", 0), 75 * MB, TOL);
	assert_int_equal(mds_qosctl_set(f->ctl, "pofs", NULL, 0), 0);
	assert_int_equal(mds_qosctl_step(f->ctl), 0);
	assert_float_equal(rate(f, 0, "A", 0), 50 * MB, TOL);
	/* none: MODE_NONE once to every OSS, then nothing */
	assert_int_equal(mds_qosctl_set(f->ctl, "none", NULL, 0), 0);
	assert_int_equal(mds_qosctl_step(f->ctl), 0);
	for (int k = 0; k < 4; k++) {
		assert_int_equal(f->last[k].mode, PFS_QOS_MODE_NONE);
		assert_int_equal(f->last[k].generation, 3);
	}
	pushes = f->npush[0];
	assert_int_equal(mds_qosctl_step(f->ctl), 0);
	assert_int_equal(f->npush[0], pushes);
	/* adaptbf: node counts, every running registered job, no rates */
	qos_param p = { "adaptbf_period", 0.25 };
	assert_int_equal(mds_qosctl_set(f->ctl, "adaptbf", &p, 1), 0);
	assert_int_equal(mds_qosctl_step(f->ctl), 0);
	assert_int_equal(f->last[0].mode, PFS_QOS_MODE_ADAPTBF);
	assert_true(f->last[0].adaptbf_period == 0.25);
	assert_int_equal(f->last[0].n, 2);
	assert_string_equal(f->last[0].rows[0].job, "A");
	assert_true(f->last[0].rows[0].nodes == 1);
	assert_string_equal(f->last[0].rows[1].job, "B");
	assert_true(f->last[0].rows[1].nodes == 3);
	assert_int_equal(f->last[0].rows[1].ost, PFS_QOS_OST_ALL);
	assert_int_equal(f->last[1].n, 1); /* B: registered, running */
	status(f, &st);
	assert_string_equal(st.policy, "adaptbf");

	/* the choice persists and wins over the configuration */
	mds_qosctl_destroy(f->ctl);
	ctl_open(f, "static", "interval=20");
	status(f, &st);
	assert_string_equal(st.policy, "adaptbf");
	assert_true(st.interval == 10);
	assert_int_equal(st.decisions, 3);  /* static, pofs, adaptbf (none decides nothing) */
	assert_int_equal(st.n_params, 1);
	assert_string_equal(st.params[0].key, "adaptbf_period");
	assert_true(st.params[0].value == 0.25);
	/* the generation goes on after a restart (OSSes ignore older ones) */
	assert_int_equal(mds_qosctl_step(f->ctl), 0);
	assert_int_equal(f->last[0].generation, 5);
}

static void test_qosctl_bad_params_refused(void **state)
{
	struct fx *f = *state;
	pfs_qos_status a, b;
	qos_param ok[] = { { "B_thres", 0.3 }, { "tau", 0.7 }, { "interval", 5 } };
	char err[256];

	assert_int_equal(mds_qosctl_set(f->ctl, "gift", ok, 3), 0);
	status(f, &a);
	assert_string_equal(a.policy, "gift");
	assert_int_equal(a.n_params, 2);
	assert_true(a.interval == 5);

	struct { const char *pol; qos_param kv[2]; size_t n; } bad[] = {
		{ "gift", { { "bogus", 1 } }, 1 },
		{ "gift", { { "tau", 2 } }, 1 },
		{ "gift", { { "B_thres", -0.1 } }, 1 },
		{ "gift", { { "N", 0.5 } }, 1 },
		{ "", { { "tau", 1.5 } }, 1 },
		{ "nosuch", { { "tau", 0.5 } }, 0 },
		{ "uniform", { { "tau", 0.5 } }, 0 },   /* PADLL's: not an OST policy */
		{ "none", { { "tau", 0.5 } }, 1 },
		{ "adaptbf", { { "dt", 0.5 } }, 1 },
		{ "static", { { "tau", 0.5 } }, 1 },
		{ "", { { "interval", 0.5 } }, 1 },
		{ "", { { "interval", 7200 } }, 1 },
		{ "", { { "quorum", 101 } }, 1 },
		{ "", { { "quorum", 50.5 } }, 1 },
		{ "", { { "adaptbf_period", 0 } }, 1 },
		{ "", { { "tau", NAN } }, 1 },
		{ "", { { "tau", 0.5 }, { "tau", 0.6 } }, 2 },
		{ "", { { "", 0.5 } }, 1 },
		{ "", { { "a_key_that_is_far_too_long_for_it", 1 } }, 1 },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(mds_qosctl_set(f->ctl, bad[i].pol, bad[i].kv, bad[i].n), -EINVAL);

	status(f, &b);
	assert_string_equal(b.policy, "gift");
	assert_int_equal(b.n_params, 2);
	assert_string_equal(b.params[0].key, "B_thres");
	assert_true(b.params[0].value == 0.3);
	assert_true(b.params[1].value == 0.7);
	assert_true(b.interval == 5);
	assert_int_equal(b.quorum_pct, 80);
	/* and nothing reached the database either */
	mds_qosctl_destroy(f->ctl);
	ctl_open(f, "pofs", NULL);
	status(f, &b);
	assert_string_equal(b.policy, "gift");
	assert_true(b.params[1].value == 0.7);
	assert_true(b.interval == 5);

	/* merging: "" keeps gift and changes tau only */
	qos_param t = { "tau", 0.9 };
	assert_int_equal(mds_qosctl_set(f->ctl, "", &t, 1), 0);
	status(f, &b);
	assert_int_equal(b.n_params, 2);
	assert_true(b.params[0].value == 0.3);
	assert_true(b.params[1].value == 0.9);
	/* naming the policy starts its parameters afresh */
	assert_int_equal(mds_qosctl_set(f->ctl, "gift", &t, 1), 0);
	status(f, &b);
	assert_int_equal(b.n_params, 1);

	/* a bad configuration is refused with a reason */
	mds_qosctl *c2 = NULL;
	mds_qosctl_opts o = { .policy = "gift", .params = "B_thres=3",
			      .ops = { fake_collect, fake_push, f } };
	assert_int_equal(mds_qosctl_create(f->ns, f->jobs, &o, &c2, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "gift"));
	o.params = "tau";
	assert_int_equal(mds_qosctl_create(f->ns, f->jobs, &o, &c2, err, sizeof(err)), -EINVAL);
	o.params = NULL;
	o.policy = "fancy";
	assert_int_equal(mds_qosctl_create(f->ns, f->jobs, &o, &c2, err, sizeof(err)), -EINVAL);
	o.policy = "none";
	o.interval = 0.1;
	assert_int_equal(mds_qosctl_create(f->ns, f->jobs, &o, &c2, err, sizeof(err)), -EINVAL);
	assert_null(c2);
}

static void coupon_of(struct fx *f, const char *job, pfs_qos_coupon_info *out)
{
	pfs_qos_coupon_info *v = NULL;
	uint32_t n = 0;
	assert_int_equal(mds_qosctl_coupons(f->ctl, job, 0, &v, &n), 0);
	assert_int_equal(n, 1);
	*out = v[0];
	free(v);
}

/* gift.txt Fig. 6 on two OSTs of 100 MB/s with B_thres = 0.3: A is
 * throttled to 35 MB/s for B's 65 MB/s and gets a coupon (k1); the MDS
 * restarts; the coupon is redeemed partly at k2 and fully at k3. */
static void test_qosctl_gift_fig6_survives_restart(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	pfs_qos_coupon_info c1, c2;
	pfs_qos_regret_info rg;
	pfs_qos_status st;
	double now1;
	(void)state;

	fx_init(f, 2);
	*state = f;
	ctl_open(f, "none", NULL);
	qos_param p = { "B_thres", 0.3 };
	assert_int_equal(mds_qosctl_set(f->ctl, "gift", &p, 1), 0);
	/* k1: OST0 {A, B}, OST1 {B} */
	stat_add(f, "A", 0, 50 * MB, 100 * MB);
	stat_add(f, "B", 0, 50 * MB, 100 * MB);
	stat_add(f, "B", 1, 50 * MB, 100 * MB);
	assert_int_equal(mds_qosctl_step(f->ctl), 0);
	assert_float_equal(rate(f, 0, "A", 0), 35 * MB, TOL);
	assert_float_equal(rate(f, 0, "B", 0), 65 * MB, TOL);
	assert_float_equal(rate(f, 1, "B", 1), 65 * MB, TOL);
	coupon_of(f, "A", &c1);
	/* worth 0.15 of an OST for one 10 s interval: 15 MB/s x 10 s */
	assert_float_equal(c1.outstanding, 150 * MB, 10);
	assert_int_equal(c1.n_coupons, 1);
	assert_true(c1.rate < 1.0);
	now1 = mds_qosctl_now(f->ctl);

	/* restart (the ledger was written with the decision); the clock even
	 * steps back, the policy clock does not */
	env_close(f);
	f->now -= 3600 * SEC;
	env_open(f);
	ctl_open(f, "pofs", NULL);
	status(f, &st);
	assert_string_equal(st.policy, "gift");
	assert_int_equal(st.decisions, 1);
	assert_true(mds_qosctl_now(f->ctl) >= now1);
	coupon_of(f, "A", &c2);
	assert_true(c2.outstanding == c1.outstanding);
	assert_true(c2.issued == c1.issued);
	assert_true(c2.redeemed == c1.redeemed);
	assert_true(c2.rate == c1.rate);
	assert_int_equal(c2.n_coupons, c1.n_coupons);

	/* k2: OST0 {A, B, C}, OST1 {B, D, E, F}: A takes OST0's whole gap */
	f->now += 3610 * SEC;
	f->nst = 0;
	stat_add(f, "A", 0, 30 * MB, 100 * MB);
	stat_add(f, "B", 0, 30 * MB, 100 * MB);
	stat_add(f, "C", 0, 30 * MB, 100 * MB);
	stat_add(f, "B", 1, 25 * MB, 100 * MB);
	stat_add(f, "D", 1, 25 * MB, 100 * MB);
	stat_add(f, "E", 1, 25 * MB, 100 * MB);
	stat_add(f, "F", 1, 25 * MB, 100 * MB);
	assert_int_equal(mds_qosctl_step(f->ctl), 0);
	assert_float_equal(rate(f, 0, "A", 0), (1.0 / 3 + 1.0 / 12) * 100 * MB, TOL);
	assert_float_equal(rate(f, 0, "B", 0), 25 * MB, TOL);
	assert_float_equal(rate(f, 0, "C", 0), 100 * MB / 3, TOL);
	coupon_of(f, "A", &c2);
	assert_float_equal(c2.outstanding, (0.15 - 1.0 / 12) * 100 * MB * 10, 10);
	assert_true(c2.redeemed > 0);
	/* k3: the rest is redeemed */
	f->now += 10 * SEC;
	assert_int_equal(mds_qosctl_step(f->ctl), 0);
	coupon_of(f, "A", &c2);
	assert_float_equal(c2.outstanding, 0, 1);
	assert_float_equal(c2.redeemed, c2.issued, 10);
	assert_int_equal(mds_qosctl_regret(f->ctl, &rg), 0);
	assert_int_equal(rg.coupons_issued, 1);
	assert_int_equal(rg.redemptions, 2);
	assert_true(rg.budget_nh == 15) /* GIFT default: 15 node-hours per regret period */;
	assert_true(rg.period_s == 7 * 86400); /* GIFT default: weekly */

	/* leaving GIFT parks the ledger; coming back continues it */
	assert_int_equal(mds_qosctl_set(f->ctl, "pofs", NULL, 0), 0);
	coupon_of(f, "A", &c1);
	assert_true(c1.issued == c2.issued);
	assert_int_equal(mds_qosctl_set(f->ctl, "gift", &p, 1), 0);
	assert_int_equal(mds_qosctl_regret(f->ctl, &rg), 0);
	assert_int_equal(rg.coupons_issued, 1);
}

static void test_qosctl_limit_auto_entries_and_views(void **state)
{
	struct fx *f = *state;
	pfs_qos_status st;
	pfs_qos_row *rows = NULL;
	pfs_job_info ji;
	uint32_t n = 0;

	reg(f, "A", 1000, 1, 10 * MB);   /* capped at 10 MB/s per OST */
	reg(f, "B", 2000, 1, 0);
	stat_add(f, "A", 0, 10 * MB, 90 * MB);
	stat_add(f, "B", 0, 40 * MB, 90 * MB);
	stat_add(f, "Z", 1, 1 * MB, 2 * MB);   /* only ever seen on an OSS */
	f->st[2].arrived = 0;                  /* Z: queued nothing, arrived nothing */
	assert_int_equal(mds_qosctl_step(f->ctl), 0);
	assert_float_equal(rate(f, 0, "A", 0), 10 * MB, TOL);
	assert_float_equal(rate(f, 0, "B", 0), 50 * MB, TOL);
	assert_float_equal(rate(f, 1, "Z", 1), -1, 0);   /* not active: no rule */
	assert_int_equal(mds_jobs_get(f->jobs, "Z", &ji), 0);
	assert_int_equal(ji.registered, 0);
	assert_int_equal(ji.uid, MDS_JOB_UID_UNKNOWN);

	/* root sees every row, sorted; the owner of A only A's */
	assert_int_equal(mds_qosctl_show(f->ctl, "", 0, 100, &st, &rows, &n), 0);
	assert_int_equal(n, 3);
	assert_string_equal(rows[0].job, "A");
	assert_float_equal(rows[0].alloc, 10 * MB, TOL);
	assert_float_equal(rows[0].achieved, 10 * MB, TOL);
	assert_float_equal(rows[0].demand, 90 * MB, TOL);
	assert_string_equal(rows[2].job, "Z");
	assert_true(rows[2].alloc < 0);
	free(rows);
	assert_int_equal(mds_qosctl_show(f->ctl, "", 1000, 100, &st, &rows, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(rows[0].job, "A");
	free(rows);
	assert_int_equal(mds_qosctl_show(f->ctl, "B", 1000, 100, &st, &rows, &n), -EACCES);
	assert_int_equal(mds_qosctl_show(f->ctl, "Z", 1000, 100, &st, &rows, &n), -EACCES);
	assert_int_equal(mds_qosctl_show(f->ctl, "nosuch", 1000, 100, &st, &rows, &n), -ENOENT);
	assert_int_equal(mds_qosctl_show(f->ctl, "nosuch", 0, 100, &st, &rows, &n), -ENOENT);
	assert_int_equal(mds_qosctl_show(f->ctl, "B", 2000, 100, &st, &rows, &n), 0);
	assert_int_equal(n, 1);
	free(rows);
	assert_int_equal(mds_qosctl_show(f->ctl, "", 0, 2, &st, &rows, &n), 0);
	assert_int_equal(n, 2);                /* max_rows */
	free(rows);
	/* what is in force, for the metrics */
	pfs_qos_alloc *al = NULL;
	assert_int_equal(mds_qosctl_allocs(f->ctl, &al, &n), 0);
	assert_int_equal(n, 2);
	free(al);
	/* no GIFT yet: no coupons, regret from the defaults */
	pfs_qos_coupon_info *cv = NULL;
	pfs_qos_regret_info rg;
	assert_int_equal(mds_qosctl_coupons(f->ctl, "", 0, &cv, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(mds_qosctl_coupons(f->ctl, "B", 1000, &cv, &n), -EACCES);
	assert_int_equal(mds_qosctl_regret(f->ctl, &rg), 0);
	assert_true(rg.c_sys == 1.0);
	assert_true(rg.budget_nh == 15) /* GIFT default: 15 node-hours per regret period */;
}

/* The loop's thread: it steps at once, and stopping it does not wait for
 * the interval to run out. */
static void test_qosctl_thread_starts_and_stops(void **state)
{
	struct fx *f = *state;
	struct timespec t0, t1, nap = { 0, 5 * 1000000L };

	stat_add(f, "A", 0, 10 * MB, 10 * MB);
	assert_int_equal(mds_qosctl_start(f->ctl), 0);
	assert_int_equal(mds_qosctl_start(f->ctl), -EALREADY);
	for (int i = 0; i < 400 && !f->npush[0]; i++)
		nanosleep(&nap, NULL);
	assert_int_equal(f->npush[0], 1);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	mds_qosctl_destroy(f->ctl);   /* the interval is 10 s */
	f->ctl = NULL;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_true((t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9 < 1.0);
	assert_int_equal(f->ncollect, 1);
}

/* A damaged GIFT ledger in the database: the MDS starts with an empty
 * one, keeps the damaged bytes as "gift.bad", and a damaged policy record
 * falls back to the configuration. */
static void test_qosctl_damaged_records(void **state)
{
	struct fx *f = *state;
	pfs_qos_coupon_info *v = NULL;
	pfs_qos_status st;
	mds_kv_txn *t;
	const void *val;
	size_t len;
	uint32_t n;
	qos_param p = { "B_thres", 0.3 };

	assert_int_equal(mds_qosctl_set(f->ctl, "gift", &p, 1), 0);
	stat_add(f, "A", 0, 50 * MB, 100 * MB);
	stat_add(f, "B", 0, 50 * MB, 100 * MB);
	stat_add(f, "B", 1, 50 * MB, 100 * MB);
	qos_param q = { "quorum", 50 };
	assert_int_equal(mds_qosctl_set(f->ctl, NULL, &q, 1), 0);
	assert_int_equal(mds_qosctl_step(f->ctl), 0);
	assert_int_equal(mds_qosctl_coupons(f->ctl, "", 0, &v, &n), 0);
	assert_int_equal(n, 1);
	free(v);
	mds_qosctl_destroy(f->ctl);
	f->ctl = NULL;

	/* flip one byte inside the stored image */
	assert_int_equal(mds_ns_kv_begin(f->ns, 1, &t), 0);
	assert_int_equal(mds_ns_kv_get(t, MDS_KV_QOS, "gift", 4, &val, &len), 0);
	uint8_t *copy = malloc(len);
	assert_non_null(copy);
	memcpy(copy, val, len);
	copy[len / 2] ^= 0x40;
	assert_int_equal(mds_ns_kv_put(t, MDS_KV_QOS, "gift", 4, copy, len), 0);
	assert_int_equal(mds_ns_kv_commit(t), 0);

	ctl_open(f, "pofs", NULL);
	status(f, &st);
	assert_string_equal(st.policy, "gift");
	assert_int_equal(mds_qosctl_coupons(f->ctl, "", 0, &v, &n), 0);
	assert_int_equal(n, 0);                       /* an empty ledger */
	assert_int_equal(mds_ns_kv_begin(f->ns, 0, &t), 0);
	assert_int_equal(mds_ns_kv_get(t, MDS_KV_QOS, "gift.bad", 8, &val, &len), 0);
	assert_memory_equal(val, copy, len);
	mds_ns_kv_abort(t);
	free(copy);
	/* decisions go on with the new ledger */
	assert_int_equal(mds_qosctl_step(f->ctl), 0);
	assert_float_equal(rate(f, 0, "A", 0), 35 * MB, TOL);
	mds_qosctl_destroy(f->ctl);
	f->ctl = NULL;

	/* a policy record of an unknown version: the configuration decides */
	assert_int_equal(mds_ns_kv_begin(f->ns, 1, &t), 0);
	assert_int_equal(mds_ns_kv_put(t, MDS_KV_QOS, "policy", 6, "\x09\0\0\0", 4), 0);
	assert_int_equal(mds_ns_kv_commit(t), 0);
	ctl_open(f, "pofs", NULL);
	status(f, &st);
	assert_string_equal(st.policy, "pofs");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_qosctl_quorum, setup4, teardown),
		cmocka_unit_test_setup_teardown(test_qosctl_missing_oss_keeps_rates, setup4, teardown),
		cmocka_unit_test_setup_teardown(test_qosctl_policy_switch, setup4, teardown),
		cmocka_unit_test_setup_teardown(test_qosctl_bad_params_refused, setup4, teardown),
		cmocka_unit_test_teardown(test_qosctl_gift_fig6_survives_restart, teardown),
		cmocka_unit_test_setup_teardown(test_qosctl_limit_auto_entries_and_views, setup4,
						teardown),
		cmocka_unit_test_setup_teardown(test_qosctl_thread_starts_and_stops, setup4,
						teardown),
		cmocka_unit_test_setup_teardown(test_qosctl_damaged_records, setup4, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
