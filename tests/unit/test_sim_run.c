/* test_sim_run.c — the simulation engine on hand-checked scenarios: a job
 * alone gets the full bandwidth, two jobs on one OST split it per the
 * policy's allocations, a phase ends at its slowest rank, the node pool
 * queues and backfills, metrics and the POFS comparison, determinism, and
 * the pinned schedule that replays a reference run's start times. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/sim/sim_policy.h"
#include "bench/sim/sim_run.h"

#define NEAR(a, b) (fabs((a) - (b)) < 1e-6)

/* Job "A" gets 25% and everyone else 75% of every OST it is active on. */
static int fixed_create(const qos_params *p, void **st)
{
	*st = NULL;
	return 0;
}
static int fixed_decide(void *st, const qos_instance *in, qos_result *res)
{
	for (size_t j = 0; j < in->n_jobs; j++)
		for (size_t o = 0; o < in->n_osts; o++) {
			size_t ix = j * in->n_osts + o;
			double f = strcmp(in->jobs[j].id, "A") == 0 ? 0.25 : 0.75;
			res->alloc[ix] = in->active[ix] ? f * in->capacity[o] : 0;
		}
	return 0;
}
static void fixed_destroy(void *st) { (void)st; }
static const qos_policy_ops fixed = {"fixed", "test", fixed_create, fixed_decide, fixed_destroy};

static void run_text(const char *text, const qos_policy_ops *ops, sim_run_result *r)
{
	sim_scenario sc;
	char err[256] = "";
	sim_run_opts o = {.ops = ops};
	if (sim_scen_parse(text, strlen(text), -1, &sc, err, sizeof(err)))
		fail_msg("scenario: %s", err);
	if (sim_run(&sc, &o, r, err, sizeof(err)))
		fail_msg("run: %s", err);
	sim_scen_free(&sc);
}

/* 1000 MB on one 100 MB/s OST, alone: 10 s of I/O, 10 s run. */
static void test_run_alone_full_bandwidth(void **state)
{
	const char *s = "{\"duration_s\": 100, \"nodes\": 1, \"osts\": [100],"
			" \"apps\": [{\"id\": \"A\", \"io_mb_per_rank\": 1000}],"
			" \"jobs\": [{\"app\": \"A\"}]}";
	sim_run_result r;
	run_text(s, &sim_policy_equal, &r);
	assert_int_equal(r.completed, 1);
	assert_true(NEAR(r.jobs[0].io_time, 10));
	assert_true(NEAR(r.jobs[0].io_alone, 10));
	assert_true(NEAR(r.jobs[0].end, 10));
	assert_true(NEAR(r.m.mean_io_time, 10));
	assert_true(NEAR(r.m.effective_bandwidth, 100));
	assert_true(NEAR(r.m.jain, 1));
	assert_true(NEAR(r.m.throughput, 36)); /* 1 job in 100 s */
	assert_true(NEAR(r.busy_time, 10));
	sim_run_result_free(&r);
}

/* A and B write 750 MB each on OST 0 (100 MB/s).  fixed: B at 75 MB/s
 * ends at 10 s; A keeps its 25 MB/s cap (not work-conserving): 30 s.
 * Equal share: both 50 MB/s until 15 s. */
static const char *two =
	"{\"duration_s\": 100, \"nodes\": 2, \"osts\": [100],"
	" \"apps\": [{\"id\": \"A\", \"io_mb_per_rank\": 750},"
	"          {\"id\": \"B\", \"io_mb_per_rank\": 750}],"
	" \"jobs\": [{\"app\": \"A\"}, {\"app\": \"B\"}]}";

static void test_run_two_jobs_split_per_allocations(void **state)
{
	sim_run_result r;
	run_text(two, &fixed, &r);
	assert_true(NEAR(r.jobs[0].io_time, 30));
	assert_true(NEAR(r.jobs[1].io_time, 10));
	assert_true(NEAR(r.m.mean_io_time, 20));
	sim_run_result_free(&r);
	run_text(two, &sim_policy_equal, &r);
	assert_true(NEAR(r.jobs[0].io_time, 15));
	assert_true(NEAR(r.jobs[1].io_time, 15));
	sim_run_result_free(&r);
}

/* GIFT sec. 4's effective system bandwidth: capacity minus the waste of
 * the OSTs serving I/O.  With a second OST nobody uses (it wastes
 * nothing): fixed gives B 75 and A 25 MB/s for 10 s (no waste), then A
 * alone keeps its 25 MB/s cap for 20 s (75 wasted): mean waste over the
 * 30 s busy = 50, system 200 - 50 = 150; useful 1500 MB / 30 s = 50.
 * Alone on one OST: no waste, 200 - 0. */
static void test_run_effective_system_bandwidth(void **state)
{
	const char *s = "{\"duration_s\": 100, \"nodes\": 2, \"osts\": [100, 100],"
			" \"apps\": [{\"id\": \"A\", \"io_mb_per_rank\": 750},"
			"          {\"id\": \"B\", \"io_mb_per_rank\": 750}],"
			" \"jobs\": [{\"app\": \"A\", \"osts\": [0]}, {\"app\": \"B\", \"osts\": [0]}]}";
	const char *alone = "{\"duration_s\": 100, \"nodes\": 1, \"osts\": [100, 100],"
			    " \"apps\": [{\"id\": \"A\", \"io_mb_per_rank\": 1000}],"
			    " \"jobs\": [{\"app\": \"A\", \"osts\": [0]}]}";
	sim_run_result r;
	run_text(s, &fixed, &r);
	assert_true(NEAR(r.busy_time, 30));
	assert_true(NEAR(r.m.effective_bandwidth, 50));
	assert_true(NEAR(r.waste_bandwidth, 50));
	assert_true(NEAR(r.m.effective_system_bandwidth, 150));
	sim_run_result_free(&r);
	run_text(alone, &sim_policy_equal, &r);
	assert_true(NEAR(r.m.effective_bandwidth, 100));
	assert_true(NEAR(r.waste_bandwidth, 0));
	assert_true(NEAR(r.m.effective_system_bandwidth, 200));
	sim_run_result_free(&r);
}

/* The same with work_conserving: A gets B's capacity once B is done:
 * 750 - 10 x 25 = 500 MB left at 10 s, at 100 MB/s -> 15 s (30 s without). */
static void test_run_work_conserving(void **state)
{
	char s[512];
	snprintf(s, sizeof(s), "%.*s, \"work_conserving\": true}", (int)strlen(two) - 1, two);
	sim_run_result r;
	run_text(s, &fixed, &r);
	assert_true(NEAR(r.jobs[0].io_time, 15));
	assert_true(NEAR(r.jobs[1].io_time, 10));
	sim_run_result_free(&r);
}

/* A: 2 ranks, 600 MB each, on OSTs 0 and 1.  B: 2000 MB on OST 0.
 * Equal share: A's OST-1 rank (alone, 100 MB/s) would be done at 6 s;
 * on OST 0 A and B get 50 MB/s: at 10 s A has 100 MB left there, then
 * 50 MB/s -> 12 s.  A's phase ends at its slowest rank: 12 s.  B: 1500 MB
 * left at 10 s, 100 MB by 12 s, 400 by 20 s (its cap stays 50 until the
 * next decision), then 1000 MB alone at 100 MB/s: 30 s.  Lockstep gives
 * the same times (A's fast rank just waits at 50 MB/s). */
static void test_run_phase_ends_at_slowest_rank(void **state)
{
	static const char *modes[] = {"independent", "lockstep"};
	for (size_t m = 0; m < 2; m++) {
		char s[768];
		snprintf(s, sizeof(s),
			 "{\"duration_s\": 100, \"nodes\": 3, \"osts\": [100, 100],"
			 " \"progress\": \"%s\","
			 " \"apps\": [{\"id\": \"A\", \"nodes\": 2, \"ranks\": 2, \"n_osts\": 2,"
			 " \"io_mb_per_rank\": 600}, {\"id\": \"B\", \"io_mb_per_rank\": 2000}],"
			 " \"jobs\": [{\"app\": \"A\", \"osts\": [0, 1]},"
			 " {\"app\": \"B\", \"osts\": [0]}]}",
			 modes[m]);
		sim_run_result r;
		run_text(s, &sim_policy_equal, &r);
		if (!NEAR(r.jobs[0].io_time, 12) || !NEAR(r.jobs[1].io_time, 30))
			fail_msg("%s: A %g s, B %g s", modes[m], r.jobs[0].io_time,
				 r.jobs[1].io_time);
		assert_true(NEAR(r.jobs[0].io_alone, 6));
		sim_run_result_free(&r);
	}
}

/* Node pool of 4: A (2 nodes, 100 s compute) and B (3 nodes) cannot run
 * together; B waits for A; C (1 node, 10 s) backfills beside A because it
 * ends before A's estimated end (the head's shadow time).  A second
 * appearance of A waits for the first even though nodes are free. */
static void test_run_queue_and_backfill(void **state)
{
	const char *s = "{\"duration_s\": 1000, \"nodes\": 4, \"osts\": [100],"
			" \"estimate_factor\": 1,"
			" \"apps\": [{\"id\": \"A\", \"nodes\": 2, \"compute_s\": 100},"
			"  {\"id\": \"B\", \"nodes\": 3, \"compute_s\": 50},"
			"  {\"id\": \"C\", \"nodes\": 1, \"compute_s\": 10}],"
			" \"jobs\": [{\"app\": \"A\", \"submit\": 0}, {\"app\": \"B\", \"submit\": 1},"
			"  {\"app\": \"C\", \"submit\": 2}, {\"app\": \"A\", \"submit\": 3}]}";
	sim_run_result r;
	run_text(s, &sim_policy_equal, &r);
	assert_int_equal(r.completed, 4);
	assert_true(NEAR(r.jobs[0].start, 0) && NEAR(r.jobs[0].end, 100));
	assert_true(NEAR(r.jobs[2].start, 2) && NEAR(r.jobs[2].end, 12));
	assert_true(NEAR(r.jobs[1].start, 100) && NEAR(r.jobs[1].end, 150));
	/* The second A: nodes are free at 100 but B (head) needs 3 of 4 and
	 * A needs 2, so A waits for B: starts at 150. */
	assert_true(NEAR(r.jobs[3].start, 150) && NEAR(r.jobs[3].end, 250));
	assert_true(NEAR(r.m.mean_run_time, (100 + 50 + 10 + 100) / 4.0));
	sim_run_result_free(&r);
}

static void test_run_compare_and_determinism(void **state)
{
	const char *s = "{\"seed\": 5, \"duration_s\": 43200, \"nodes\": 64, \"osts\": {\"count\": 8,"
			" \"capacity\": 100}, \"generator\": {\"apps\": 10, \"nodes\": [1, 16],"
			" \"osts_per_app\": [1, 8], \"arrival_gamma\": {\"shape\": 2, \"scale\": 300},"
			" \"io_interval_s\": [[60, 120], [120, 300], [300, 600]], \"phases\": [2, 4]}}";
	sim_scenario sc;
	sim_run_result a, b, c;
	char err[256];
	sim_run_opts eq = {.ops = &sim_policy_equal}, fx = {.ops = &fixed};
	assert_int_equal(sim_scen_parse(s, strlen(s), -1, &sc, err, sizeof(err)), 0);
	assert_int_equal(sim_run(&sc, &eq, &a, err, sizeof(err)), 0);
	assert_int_equal(sim_run(&sc, &eq, &b, err, sizeof(err)), 0);
	assert_true(a.completed > 10);
	assert_memory_equal(&a.m, &b.m, sizeof(a.m));
	for (size_t j = 0; j < a.n_jobs; j++)
		assert_true(a.jobs[j].io_time == b.jobs[j].io_time);
	/* Compared with itself nothing is worse. */
	assert_true(sim_run_compare(&sc, &a, &b) == 0);
	assert_true(a.m.jain > 0 && a.m.jain <= 1);
	/* Every job alone at least as fast as in the mix. */
	for (size_t j = 0; j < a.n_jobs; j++)
		if (a.jobs[j].done)
			assert_true(a.jobs[j].io_alone <= a.jobs[j].io_time + 1e-6);
	/* fixed wastes capacity (never more than 75% of an OST to a job): it
	 * must lose to equal share for some application, and the comparison
	 * must see it. */
	assert_int_equal(sim_run(&sc, &fx, &c, err, sizeof(err)), 0);
	double f = sim_run_compare(&sc, &c, &a);
	assert_true(f > 0 && f <= 1);
	assert_true(c.m.mean_io_time > a.m.mean_io_time);
	sim_run_result_free(&a);
	sim_run_result_free(&b);
	sim_run_result_free(&c);
	sim_scen_free(&sc);
}

/* Equal share, and every job holds a coupon worth 50 (capacity units over
 * its OSTs for one interval). */
static int coupon_decide(void *st, const qos_instance *in, qos_result *res)
{
	int rc = sim_policy_equal.decide(st, in, res);
	for (size_t j = 0; rc == 0 && res->coupons && j < in->n_jobs; j++)
		res->coupons[j] = 50;
	return rc;
}
static const qos_policy_ops coupons = {"coupons", "test", fixed_create, coupon_decide,
				       fixed_destroy};

/* A (2 nodes, 2 ranks) writes 2 x 1000 MB alone on one 100 MB/s OST: its
 * per-OST rate is 100 MB/s, so a coupon worth 50 x 10 s = 500 MB is 5 s of
 * its I/O on 2 nodes: 10 node-seconds.  The CSV has a header and one row per 600 s. */
static void test_run_outstanding_node_hours_and_csv(void **state)
{
	const char *s = "{\"duration_s\": 1800, \"nodes\": 2, \"osts\": [100],"
			" \"apps\": [{\"id\": \"A\", \"nodes\": 2, \"io_mb_per_rank\": 1000}],"
			" \"jobs\": [{\"app\": \"A\"}]}";
	sim_scenario sc;
	sim_run_result r;
	char err[256], *buf = NULL, line[256];
	size_t len = 0, rows = 0;
	assert_int_equal(sim_scen_parse(s, strlen(s), -1, &sc, err, sizeof(err)), 0);
	FILE *f = open_memstream(&buf, &len);
	sim_run_opts o = {.ops = &coupons, .csv = f};
	assert_int_equal(sim_run(&sc, &o, &r, err, sizeof(err)), 0);
	fclose(f);
	assert_true(NEAR(r.m.outstanding_node_hours, 10.0 / 3600.0));
	assert_true(NEAR(r.mean_objective, 100));
	FILE *in = fmemopen(buf, len, "r");
	assert_non_null(in);
	assert_non_null(fgets(line, sizeof(line), in));
	assert_string_equal(line, "time_s,effective,served,capacity,io_jobs,running_jobs,"
				  "queued_jobs,busy_nodes,outstanding_coupons,"
				  "outstanding_node_hours\n");
	assert_non_null(fgets(line, sizeof(line), in));
	rows++;
	/* First window: 20 s of 100 MB/s over 600 s; coupon 50 outstanding. */
	assert_string_equal(line, "600,3.33333,3.33333,100,0,0,0,0,50,0.00277778\n");
	while (fgets(line, sizeof(line), in))
		rows++;
	assert_int_equal(rows, 3);
	fclose(in);
	free(buf);
	sim_run_result_free(&r);
	sim_scen_free(&sc);
}

/* Pinned schedule (sim_run.h): a run replays the reference's start times.
 * Pool of 2: A and B (1 node each) write 750 MB on OST 0 from t = 0, C (2
 * nodes, 10 s compute, 100 MB) is submitted at 1.  Equal share: A and B end
 * at 15, so C starts at 15.  fixed: B ends at 10, A (25 MB/s) at 30; EASY
 * starts C at 30, pinned at 15 on one node A still holds (overcommit 1).
 * Replaying the reference's own policy gives the reference back. */
static const char *pin_scen =
	"{\"duration_s\": 1000, \"nodes\": 2, \"osts\": [100],"
	" \"apps\": [{\"id\": \"A\", \"io_mb_per_rank\": 750},"
	"  {\"id\": \"B\", \"io_mb_per_rank\": 750},"
	"  {\"id\": \"C\", \"nodes\": 2, \"compute_s\": 10, \"io_mb_per_rank\": 50,"
	"   \"ranks\": 2}],"
	" \"jobs\": [{\"app\": \"A\"}, {\"app\": \"B\"}, {\"app\": \"C\", \"submit\": 1}]}";

/* Pool of 2: A@0, B@0, a second A@1.  Equal share: both end at 15 and the
 * second A starts then; under fixed the first A runs until 30, so the
 * pinned second A must wait for it (one appearance at a time). */
static const char *pin_delay_scen =
	"{\"duration_s\": 1000, \"nodes\": 2, \"osts\": [100],"
	" \"apps\": [{\"id\": \"A\", \"io_mb_per_rank\": 750},"
	"  {\"id\": \"B\", \"io_mb_per_rank\": 750}],"
	" \"jobs\": [{\"app\": \"A\"}, {\"app\": \"B\"}, {\"app\": \"A\", \"submit\": 1}]}";

static void test_run_pinned_schedule(void **state)
{
	sim_scenario sc;
	sim_run_result ref, easy, pin, self;
	char err[256] = "";
	sim_run_opts eq = {.ops = &sim_policy_equal}, fx = {.ops = &fixed};

	assert_int_equal(sim_scen_parse(pin_scen, strlen(pin_scen), -1, &sc, err, sizeof(err)), 0);
	assert_int_equal(sim_run(&sc, &eq, &ref, err, sizeof(err)), 0);
	assert_true(NEAR(ref.jobs[2].start, 15));
	assert_int_equal(sim_run(&sc, &fx, &easy, err, sizeof(err)), 0);
	assert_true(NEAR(easy.jobs[0].end, 30) && NEAR(easy.jobs[2].start, 30));
	assert_int_equal(easy.pin_overcommit_nodes, 0);
	fx.pin = ref.jobs;
	fx.n_pin = ref.n_jobs;
	assert_int_equal(sim_run(&sc, &fx, &pin, err, sizeof(err)), 0);
	assert_true(NEAR(pin.jobs[0].end, 30));
	assert_true(NEAR(pin.jobs[2].start, 15));
	assert_int_equal(pin.pin_overcommit_nodes, 1);
	assert_int_equal(pin.pin_delayed, 0);
	assert_int_equal(pin.completed, 3);
	eq.pin = ref.jobs;
	eq.n_pin = ref.n_jobs;
	assert_int_equal(sim_run(&sc, &eq, &self, err, sizeof(err)), 0);
	for (size_t j = 0; j < ref.n_jobs; j++) {
		assert_true(self.jobs[j].start == ref.jobs[j].start);
		assert_true(self.jobs[j].end == ref.jobs[j].end);
		assert_true(self.jobs[j].io_time == ref.jobs[j].io_time);
	}
	assert_memory_equal(&self.m, &ref.m, sizeof(ref.m));
	sim_run_result_free(&self);
	/* a pin of another scenario's jobs is refused */
	eq.n_pin = ref.n_jobs - 1;
	assert_int_equal(sim_run(&sc, &eq, &self, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "pinned schedule"));
	sim_run_result_free(&ref);
	sim_run_result_free(&easy);
	sim_run_result_free(&pin);
	sim_scen_free(&sc);

	assert_int_equal(sim_scen_parse(pin_delay_scen, strlen(pin_delay_scen), -1, &sc, err,
					sizeof(err)), 0);
	eq.pin = NULL;
	eq.n_pin = 0;
	fx.pin = NULL;
	assert_int_equal(sim_run(&sc, &eq, &ref, err, sizeof(err)), 0);
	assert_true(NEAR(ref.jobs[2].start, 15));
	fx.pin = ref.jobs;
	fx.n_pin = ref.n_jobs;
	assert_int_equal(sim_run(&sc, &fx, &pin, err, sizeof(err)), 0);
	assert_true(NEAR(pin.jobs[0].end, 30));
	assert_true(NEAR(pin.jobs[2].start, 30));
	assert_int_equal(pin.pin_delayed, 1);
	sim_run_result_free(&ref);
	sim_run_result_free(&pin);
	sim_scen_free(&sc);
}

/* A phase that starts between decisions.  A writes 2000 MB on the 100 MB/s
 * OST from 0 (equal share: all of it); B's 100 MB phase starts at 5.
 * share: B may take 100 / 2 at once, the OST is overcommitted (150) and
 * both are scaled: B gets 33.3 MB/s and is done at 8 (3 s of I/O).  wait:
 * B gets nothing until the decision at 10, then 50 MB/s: done at 12. */
#define NEWCOMERS_FMT                                                                      \
	"{\"duration_s\": 100, \"nodes\": 2, \"osts\": [100],%s"                           \
	" \"apps\": [{\"id\": \"A\", \"io_mb_per_rank\": 2000},"                          \
	"  {\"id\": \"B\", \"io_mb_per_rank\": 100}],"                                     \
	" \"jobs\": [{\"app\": \"A\"}, {\"app\": \"B\", \"submit\": 5}]}"
static void test_run_newcomers(void **state)
{
	char text[512];
	sim_run_result r;
	sim_scenario sc;
	char err[256] = "";

	snprintf(text, sizeof(text), NEWCOMERS_FMT, "");
	run_text(text, &sim_policy_equal, &r);
	assert_true(NEAR(r.jobs[1].start, 5));
	assert_true(NEAR(r.jobs[1].io_time, 3));
	assert_true(NEAR(r.jobs[1].end, 8));
	sim_run_result_free(&r);
	snprintf(text, sizeof(text), NEWCOMERS_FMT, " \"newcomers\": \"share\",");
	run_text(text, &sim_policy_equal, &r);
	assert_true(NEAR(r.jobs[1].end, 8));
	sim_run_result_free(&r);
	snprintf(text, sizeof(text), NEWCOMERS_FMT, " \"newcomers\": \"wait\",");
	run_text(text, &sim_policy_equal, &r);
	assert_true(NEAR(r.jobs[1].io_time, 7));
	assert_true(NEAR(r.jobs[1].end, 12));
	sim_run_result_free(&r);
	snprintf(text, sizeof(text), NEWCOMERS_FMT, " \"newcomers\": \"later\",");
	assert_int_equal(sim_scen_parse(text, strlen(text), -1, &sc, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "newcomers"));
}

/* A policy that fails, and one that rejects its parameters. */
static int bad_decide(void *st, const qos_instance *in, qos_result *res) { return -EIO; }
static const qos_policy_ops failing = {"failing", "test", fixed_create, bad_decide,
				       fixed_destroy};

static void test_run_policy_errors(void **state)
{
	sim_scenario sc;
	sim_run_result r;
	char err[256] = "";
	qos_param p = {"tau", 1};
	sim_run_opts o = {.ops = &failing};
	assert_int_equal(sim_scen_parse(two, strlen(two), -1, &sc, err, sizeof(err)), 0);
	assert_int_equal(sim_run(&sc, &o, &r, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "policy failing failed"));
	assert_null(r.jobs);
	o.ops = &sim_policy_equal;
	o.params = &p;
	o.n_params = 1;
	assert_int_equal(sim_run(&sc, &o, &r, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "rejected the parameters"));
	sim_scen_free(&sc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_run_alone_full_bandwidth),
		cmocka_unit_test(test_run_two_jobs_split_per_allocations),
		cmocka_unit_test(test_run_work_conserving),
		cmocka_unit_test(test_run_effective_system_bandwidth),
		cmocka_unit_test(test_run_phase_ends_at_slowest_rank),
		cmocka_unit_test(test_run_queue_and_backfill),
		cmocka_unit_test(test_run_compare_and_determinism),
		cmocka_unit_test(test_run_outstanding_node_hours_and_csv),
		cmocka_unit_test(test_run_policy_errors),
		cmocka_unit_test(test_run_pinned_schedule),
		cmocka_unit_test(test_run_newcomers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
