/* test_sim_trace.c — pfs-sim's job-trace reader (bench/sim/sim_trace.h):
 * a table of malformed traces, each refused with its line and reason; a
 * table of good ones and what they turn into (bytes per rank, stripes, the
 * OST rules, application groups); and a trace of tiny.json's jobs, which
 * must simulate exactly as tiny.json does under GIFT and POFS. */
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

#include "bench/sim/sim_run.h"
#include "bench/sim/sim_trace.h"
#include "qos/gift.h"

/* A cluster of n OSTs of 100 MB/s and `nodes` nodes, no workload, shaped
 * like tiny.json's. */
static void cluster(sim_scenario *sc, size_t n, int nodes)
{
	memset(sc, 0, sizeof(*sc));
	snprintf(sc->name, sizeof(sc->name), "tiny");
	sc->seed = 1;
	sc->duration = 7200;
	sc->decision_interval = 10;
	sc->csv_interval = 600;
	sc->estimate_factor = 1.5;
	sc->lockstep = 1;
	sc->nodes = nodes;
	sc->n_osts = n;
	sc->capacity = malloc(n * sizeof(double));
	assert_non_null(sc->capacity);
	for (size_t o = 0; o < n; o++)
		sc->capacity[o] = 100;
}

#define H "job,submit,nodes,osts,phases,io_mb,compute_s\n"

static const struct bad_case {
	const char *name, *text, *want; /* want: a substring of the error */
} bad[] = {
	{"empty", "", "line 0: no header"},
	{"comments only", "# nothing\n\n", "no header"},
	{"header only", H, "line 1: no jobs"},
	{"garbage", "\x01\x02 binary junk\n", "line 1: header: unknown column"},
	{"unknown column", "job,submit,nodes,osts,phases,io_mb,compute_s,colour\n", "unknown column 'colour'"},
	{"column twice", "job,submit,nodes,osts,phases,io_mb,compute_s,job\n", "column 'job' twice"},
	{"missing column", "job,submit,nodes,osts,phases,io_mb\n", "missing column 'compute_s'"},
	{"truncated last line", H "a,0,1,0,1,100,10\nb,5,1,1,1,1", "line 3: no newline"},
	{"short line", H "a,0,1,0,1,100,10\nb,5,1\n", "line 3: 3 fields, the header has 7"},
	{"long line", H "a,0,1,0,1,100,10,9\n", "line 2: 8 fields"},
	{"too many fields", H "a,0,1,0,1,100,10,1,2,3,4,5,6,7,8\n", "more than 12 fields"},
	{"NUL byte", H "a,0,1,0\0,1,100,10\n", "line 2: NUL byte"},
	{"quotes", H "\"a\",0,1,0,1,100,10\n", "line 2: quotes"},
	{"duplicate id", H "a,0,1,0,1,100,10\nb,1,1,0,1,100,10\na,2,1,1,1,100,10\n",
	 "line 4: job: duplicate id 'a' (first on line 2)"},
	{"time goes back", H "a,10,1,0,1,100,10\nb,9.5,1,0,1,100,10\n", "line 3: submit: 9.5 is before"},
	{"negative submit", H "a,-1,1,0,1,100,10\n", "submit: -1 is out of range"},
	{"hex number", H "a,0x10,1,0,1,100,10\n", "submit: '0x10' is not a decimal"},
	{"nan", H "a,nan,1,0,1,100,10\n", "is not a decimal"},
	{"inf", H "a,0,1,0,1,inf,10\n", "io_mb: 'inf' is not a decimal"},
	{"word", H "a,0,one,0,1,100,10\n", "nodes: 'one' is not a decimal"},
	{"fractional nodes", H "a,0,1.5,0,1,100,10\n", "nodes: '1.5' is not an integer"},
	{"more nodes than the cluster", H "a,0,9,0,1,100,10\n", "nodes: 9 is out of range [1, 8]"},
	{"zero phases", H "a,0,1,0,0,100,10\n", "phases: 0 is out of range"},
	{"oversized io", H "a,0,1,0,1,2e12,10\n", "io_mb: 2e12 is out of range"},
	{"negative compute", H "a,0,1,0,1,100,-5\n", "compute_s: -5 is out of range"},
	{"empty field", H "a,,1,0,1,100,10\n", "submit: empty"},
	{"empty id", H ",0,1,0,1,100,10\n", "job: empty"},
	{"id with space", H "a b,0,1,0,1,100,10\n", "job: character ' ' not allowed"},
	{"id too long", H "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa,0,1,0,1,1,1\n",
	 "job: longer than 63"},
	{"OST out of range", H "a,0,1,0;4,1,100,10\n", "osts: 4 is out of range [0, 3]"},
	{"OST twice", H "a,0,1,1;2;1,1,100,10\n", "osts: OST 1 twice"},
	{"OST list empty item", H "a,0,1,1;;2,1,100,10\n", "osts: empty"},
	{"no OSTs", H "a,0,1,,1,100,10\n", "osts: empty"},
	{"random too many", H "a,0,1,random:5,1,100,10\n", "osts: 5 is out of range [1, 4]"},
	{"rr zero", H "a,0,1,rr:0,1,100,10\n", "osts: 0 is out of range"},
	{"unknown rule", H "a,0,1,first:2,1,100,10\n", "osts: 'first:2' is not a decimal"},
	{"stripe over set", "job,submit,nodes,osts,phases,io_mb,compute_s,stripe_count\n"
			    "a,0,1,0;1,1,100,10,3\n", "stripe_count: 3 is out of range [1, 2]"},
	{"OSTs without data", "job,submit,nodes,osts,phases,io_mb,compute_s,stripe_count,ranks\n"
			      "a,0,1,0;1;2;3,1,100,10,1,2\n", "4 OSTs but ranks x stripe_count = 2"},
	{"throttle_friendly 2", "job,submit,nodes,osts,phases,io_mb,compute_s,throttle_friendly\n"
				"a,0,1,0,1,100,10,2\n", "throttle_friendly: 2 is out of range"},
	{"zero priority", "job,submit,nodes,osts,phases,io_mb,compute_s,priority\n"
			  "a,0,1,0,1,100,10,0\n", "priority: 0 is out of range"},
	{"bad app id", "job,submit,nodes,osts,phases,io_mb,compute_s,app\n"
		       "a,0,1,0,1,100,10,my app\n", "app: character ' ' not allowed"},
};

static void test_bad_traces(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		sim_scenario sc;
		char err[512] = "";
		size_t len = strlen(bad[i].text);
		if (!strcmp(bad[i].name, "NUL byte"))
			len = sizeof(H "a,0,1,0\0,1,100,10\n") - 1;
		cluster(&sc, 4, 8);
		int rc = sim_trace_parse(bad[i].text, len, &sc, err, sizeof(err));
		if (rc != -EINVAL || !strstr(err, bad[i].want)) {
			print_error("case '%s': rc %d, error '%s', want '%s'\n", bad[i].name, rc, err,
				    bad[i].want);
			fail();
		}
		/* freed on error */
		assert_null(sc.jobs);
		assert_null(sc.capacity);
		assert_int_equal(sc.n_jobs, 0);
	}
}

/* Lines over the limit, and more jobs than SIM_TRACE_MAX_JOBS (refused
 * before any job is parsed). */
static void test_oversized(void **state)
{
	sim_scenario sc;
	char err[512] = "";
	(void)state;

	size_t n = strlen(H) + SIM_TRACE_MAX_LINE + 16;
	char *t = malloc(n + 1);
	assert_non_null(t);
	strcpy(t, H "a,0,1,0,1,100,");
	size_t k = strlen(t);
	memset(t + k, '1', SIM_TRACE_MAX_LINE);
	strcpy(t + k + SIM_TRACE_MAX_LINE, "\n");
	cluster(&sc, 4, 8);
	assert_int_equal(sim_trace_parse(t, strlen(t), &sc, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "line 2: longer than 4096 bytes"));
	free(t);

	size_t jobs = (size_t)SIM_TRACE_MAX_JOBS + 1;
	t = malloc(strlen(H) + jobs * 2 + 1);
	assert_non_null(t);
	strcpy(t, H);
	k = strlen(t);
	for (size_t i = 0; i < jobs; i++) {
		t[k++] = 'x';
		t[k++] = '\n';
	}
	t[k] = '\0';
	cluster(&sc, 4, 8);
	assert_int_equal(sim_trace_parse(t, k, &sc, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "more than 1000000 jobs"));
	/* the job past the limit is on line 1 (header) + 1,000,001 */
	assert_non_null(strstr(err, "line 1000002:"));
	free(t);
}

/* What good traces turn into. */
static void test_good_traces(void **state)
{
	sim_scenario sc;
	char err[512] = "";
	(void)state;

	/* columns in any order, blanks, CRLF, comments, equal submit times */
	const char *t = "# site \"X\", week 12\n"
			"app, ranks ,job,submit,nodes,osts,phases,io_mb,compute_s,stripe_count\r\n"
			"\n"
			"sim, 8, 100, 0, 2, 3;1, 4, 6400, 30.5, 1\r\n"
			",  ,101,0,1,2,1,50,0,\n"
			"sim,,102,7,1,rr:3,2,10,1,\n"
			"# a comment between jobs\n"
			"post,,103,7,1,rr:2,1,10,1,\n";
	cluster(&sc, 4, 8);
	assert_int_equal(sim_trace_parse(t, strlen(t), &sc, err, sizeof(err)), 0);
	assert_int_equal(sc.n_jobs, 4);
	assert_int_equal(sc.n_apps, 4);
	const sim_app *a = &sc.apps[0];
	assert_string_equal(a->id, "sim");
	assert_int_equal(a->nodes, 2);
	assert_int_equal(a->ranks, 8);
	assert_int_equal(a->n_osts, 2);
	assert_int_equal(a->stripe, 1);
	assert_int_equal(a->phases, 4);
	/* 6400 MB over 4 phases and 8 ranks */
	assert_true(a->io_per_rank == 200.0);
	assert_true(a->compute_s == 30.5);
	assert_true(a->priority == 1.0 && a->throttle_friendly == 1);
	assert_int_equal(sc.jobs[0].osts[0], 3);
	assert_int_equal(sc.jobs[0].osts[1], 1);
	assert_true(sc.jobs[0].io_scale == 1.0 && sc.jobs[0].compute_scale == 1.0);
	/* bytes: 8 ranks x 1 stripe over 2 OSTs, 4 ranks each */
	double bytes[2];
	sim_scen_phase_bytes(&sc, &sc.jobs[0], bytes);
	assert_true(bytes[0] == 800.0 && bytes[1] == 800.0);
	/* empty app: its own application named by its job id; ranks = nodes;
	 * stripe = the whole set */
	assert_string_equal(sc.apps[1].id, "101");
	assert_int_equal(sc.apps[1].ranks, 1);
	assert_int_equal(sc.apps[1].stripe, 1);
	assert_true(sc.apps[1].io_per_rank == 50.0);
	/* rr continues where the previous rr job stopped */
	assert_int_equal(sc.apps[2].n_osts, 3);
	assert_int_equal(sc.apps[2].stripe, 3);
	assert_int_equal(sc.jobs[2].osts[0], 0);
	assert_int_equal(sc.jobs[2].osts[1], 1);
	assert_int_equal(sc.jobs[2].osts[2], 2);
	assert_int_equal(sc.jobs[3].osts[0], 3);
	assert_int_equal(sc.jobs[3].osts[1], 0);
	/* groups: both "sim" jobs are application 0 */
	assert_non_null(sc.app_group);
	assert_int_equal(sim_scen_group(&sc, 0), 0);
	assert_int_equal(sim_scen_group(&sc, 1), 1);
	assert_int_equal(sim_scen_group(&sc, 2), 0);
	assert_int_equal(sim_scen_group(&sc, 3), 3);
	assert_true(sc.jobs[1].submit == 0 && sc.jobs[2].submit == 7 && sc.jobs[3].submit == 7);
	sim_scen_free(&sc);

	/* random:N: distinct, in range, the same for the same seed, another
	 * set for another seed */
	const char *r = H "a,0,1,random:3,1,10,1\nb,0,1,random:3,1,10,1\n";
	int first[6], differs = 0;
	for (int seed = 1; seed <= 3; seed++) {
		cluster(&sc, 16, 8);
		sc.seed = seed == 3 ? 2 : 1;
		assert_int_equal(sim_trace_parse(r, strlen(r), &sc, err, sizeof(err)), 0);
		for (size_t j = 0; j < 2; j++)
			for (int i = 0; i < 3; i++) {
				int o = sc.jobs[j].osts[i];
				assert_true(o >= 0 && o < 16);
				for (int q = 0; q < i; q++)
					assert_int_not_equal(o, sc.jobs[j].osts[q]);
				if (seed == 1)
					first[j * 3 + (size_t)i] = o;
				else if (seed == 2)
					assert_int_equal(o, first[j * 3 + (size_t)i]);
				else
					differs |= o != first[j * 3 + (size_t)i];
			}
		sim_scen_free(&sc);
	}
	assert_true(differs);

}

/* bench/scenarios/tiny.json's jobs as a trace simulate exactly as the
 * scenario does (same ids, bytes, OSTs, order, one appearance of A at a
 * time), under GIFT (coupons follow "A" across its two jobs) and POFS. */
static const char tiny_json[] =
	"{\"name\": \"tiny\", \"seed\": 1, \"duration_s\": 7200, \"decision_interval\": 10,"
	" \"nodes\": 4, \"osts\": [100, 100],"
	" \"apps\": ["
	"  {\"id\": \"A\", \"nodes\": 1, \"ranks\": 1, \"n_osts\": 1, \"phases\": 3, \"io_mb_per_rank\": 3000, \"compute_s\": 60},"
	"  {\"id\": \"B\", \"nodes\": 2, \"ranks\": 2, \"n_osts\": 2, \"phases\": 3, \"io_mb_per_rank\": 3000, \"compute_s\": 60},"
	"  {\"id\": \"C\", \"nodes\": 1, \"ranks\": 1, \"n_osts\": 1, \"phases\": 2, \"io_mb_per_rank\": 1500, \"compute_s\": 100}],"
	" \"jobs\": [{\"app\": \"A\", \"submit\": 0, \"osts\": [0]},"
	"  {\"app\": \"B\", \"submit\": 0, \"osts\": [0, 1]},"
	"  {\"app\": \"C\", \"submit\": 5, \"osts\": [1]},"
	"  {\"app\": \"A\", \"submit\": 600, \"osts\": [1]}]}";
static const char tiny_trace[] = "job,submit,nodes,osts,phases,io_mb,compute_s,app,ranks\n"
				 "1,0,1,0,3,9000,60,A,1\n"
				 "2,0,2,0;1,3,18000,60,B,2\n"
				 "3,5,1,1,2,3000,100,C,1\n"
				 "4,600,1,1,3,9000,60,A,1\n";

static void same_run(const sim_run_result *x, const sim_run_result *y)
{
	assert_int_equal(x->n_jobs, y->n_jobs);
	assert_int_equal(x->completed, y->completed);
	assert_int_equal(x->decisions, y->decisions);
	for (size_t j = 0; j < x->n_jobs; j++) {
		assert_true(x->jobs[j].start == y->jobs[j].start);
		assert_true(x->jobs[j].end == y->jobs[j].end);
		assert_true(x->jobs[j].io_time == y->jobs[j].io_time);
		assert_true(x->jobs[j].io_alone == y->jobs[j].io_alone);
	}
	assert_true(x->m.effective_bandwidth == y->m.effective_bandwidth);
	assert_true(x->m.outstanding_node_hours == y->m.outstanding_node_hours);
	assert_true(x->max_outstanding_nh == y->max_outstanding_nh);
	assert_int_equal(x->has_gift, y->has_gift);
	assert_int_equal(x->gift.coupons_issued, y->gift.coupons_issued);
	assert_int_equal(x->gift.redemptions, y->gift.redemptions);
	assert_int_equal(x->gift_gate.candidates, y->gift_gate.candidates);
}

static void test_tiny_equivalence(void **state)
{
	const qos_policy_ops *pols[] = {&qos_policy_gift, qos_policy_find("pofs")};
	sim_scenario js, ts;
	char err[512] = "";
	(void)state;

	assert_int_equal(sim_scen_parse(tiny_json, strlen(tiny_json), -1, &js, err, sizeof(err)),
			 0);
	cluster(&ts, 2, 4);
	assert_int_equal(sim_trace_parse(tiny_trace, strlen(tiny_trace), &ts, err, sizeof(err)),
			 0);
	/* a scenario that already has jobs is refused (and freed) */
	assert_int_equal(sim_trace_parse(tiny_trace, strlen(tiny_trace), &js, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "a cluster and no jobs"));
	assert_null(js.jobs);
	assert_int_equal(sim_scen_parse(tiny_json, strlen(tiny_json), -1, &js, err, sizeof(err)),
			 0);
	/* A's two jobs: one application, as in the scenario */
	assert_int_equal(sim_scen_group(&ts, 3), 0);
	for (size_t p = 0; p < 2; p++) {
		sim_run_result a, b;
		sim_run_opts o = {.ops = pols[p]};
		assert_non_null(o.ops);
		assert_int_equal(sim_run(&js, &o, &a, err, sizeof(err)), 0);
		assert_int_equal(sim_run(&ts, &o, &b, err, sizeof(err)), 0);
		same_run(&a, &b);
		/* per application: A, B, C (A's second job is app 0 in both) */
		assert_int_equal(b.jobs[3].app, 0);
		if (p == 0) {
			/* GIFT's counters come back and add up */
			const qos_gift_gate_stats *g = &b.gift_gate;
			assert_int_equal(b.has_gift, 1);
			assert_true(b.gift.coupons_issued > 0);
			assert_true(g->decisions > 0 && g->coupon_decisions > 0);
			assert_true(g->coupon_decisions <= g->decisions);
			assert_int_equal(g->candidates, g->in_y + g->excl_redeemed +
								g->excl_budget + g->excl_csys +
								g->excl_ci);
			assert_int_equal(g->periods, 1);
		} else {
			assert_int_equal(b.has_gift, 0);
		}
		sim_run_result_free(&a);
		sim_run_result_free(&b);
	}
	sim_scen_free(&js);
	sim_scen_free(&ts);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_traces),
		cmocka_unit_test(test_oversized),
		cmocka_unit_test(test_good_traces),
		cmocka_unit_test(test_tiny_equivalence),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
