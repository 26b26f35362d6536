/* test_sim_scen.c — scenarios: Gamma arrival statistics for a fixed seed,
 * the generator's determinism and Table 1 ranges, rank-to-OST byte
 * mapping, and malformed scenarios naming the field. */
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

#include "bench/sim/sim_scen.h"

static void moments(const double *x, size_t n, double *mean, double *var)
{
	double s = 0, s2 = 0;
	for (size_t i = 0; i < n; i++)
		s += x[i];
	*mean = s / (double)n;
	for (size_t i = 0; i < n; i++)
		s2 += (x[i] - *mean) * (x[i] - *mean);
	*var = s2 / (double)(n - 1);
}

/* Gamma(k, theta): mean k theta, variance k theta^2.  With 200,000 draws
 * the standard error of the mean is under 0.25% of it for these shapes. */
static void test_scen_gamma_arrival_statistics(void **state)
{
	static const double shapes[][2] = {{2.0, 340.0}, {0.5, 100.0}, {7.5, 2.0}};
	size_t n = 200000;
	double *g = malloc(n * sizeof(*g));
	assert_non_null(g);
	for (size_t c = 0; c < 3; c++) {
		double k = shapes[c][0], th = shapes[c][1], m, v;
		sim_scen_gamma_gaps(42, k, th, g, n);
		moments(g, n, &m, &v);
		for (size_t i = 0; i < n; i++)
			assert_true(g[i] > 0);
		if (fabs(m - k * th) > 0.01 * k * th || fabs(v - k * th * th) > 0.04 * k * th * th)
			fail_msg("shape %g scale %g: mean %g (want %g), var %g (want %g)", k, th, m,
				 k * th, v, k * th * th);
	}
	/* Same seed, same sequence; another seed, another. */
	double a[4], b[4], d[4];
	sim_scen_gamma_gaps(7, 2, 1, a, 4);
	sim_scen_gamma_gaps(7, 2, 1, b, 4);
	sim_scen_gamma_gaps(8, 2, 1, d, 4);
	assert_memory_equal(a, b, sizeof(a));
	assert_memory_not_equal(a, d, sizeof(a));
	free(g);
}

static const char *gen =
	"{\"seed\": 3, \"duration_days\": 2, \"nodes\": 128, \"osts\": {\"count\": 16, "
	"\"capacity\": 100}, \"generator\": {\"apps\": 20, \"nodes\": [1, 16], "
	"\"osts_per_app\": [2, 8], \"arrival_gamma\": {\"shape\": 2, \"scale\": 600}}}";

static void test_scen_generator_deterministic_and_in_range(void **state)
{
	sim_scenario a, b;
	char err[256];
	assert_int_equal(sim_scen_parse(gen, strlen(gen), -1, &a, err, sizeof(err)), 0);
	assert_int_equal(sim_scen_parse(gen, strlen(gen), -1, &b, err, sizeof(err)), 0);
	assert_int_equal(a.seed, 3);
	assert_int_equal(a.n_apps, 20);
	assert_int_equal(a.n_osts, 16);
	/* About duration / mean gap = 172800 / 1200 = 144 submissions. */
	assert_true(a.n_jobs > 100 && a.n_jobs < 200);
	assert_int_equal(a.n_jobs, b.n_jobs);
	for (size_t j = 0; j < a.n_jobs; j++) {
		assert_true(a.jobs[j].submit == b.jobs[j].submit);
		assert_int_equal(a.jobs[j].app, b.jobs[j].app);
		assert_true(j == 0 || a.jobs[j].submit >= a.jobs[j - 1].submit);
		assert_true(a.jobs[j].submit < 2 * 86400);
		const sim_app *p = &a.apps[a.jobs[j].app];
		for (int i = 0; i < p->n_osts; i++) {
			assert_in_range(a.jobs[j].osts[i], 0, 15);
			for (int k = 0; k < i; k++)
				assert_int_not_equal(a.jobs[j].osts[i], a.jobs[j].osts[k]);
		}
	}
	for (size_t i = 0; i < a.n_apps; i++) {
		const sim_app *p = &a.apps[i];
		assert_in_range(p->nodes, 1, 16);
		assert_int_equal(p->ranks, 4 * p->nodes);
		assert_in_range(p->n_osts, 2, 8);
		assert_in_range(p->phases, 2, 12);
		/* Table 1: compute 1 min .. 3 h; stand-alone phase 10 s .. 30 min. */
		assert_true(p->compute_s >= 60 && p->compute_s <= 10800);
		double alone = p->io_per_rank * p->ranks / (p->n_osts * 100.0);
		assert_true(alone >= 10 - 1e-9 && alone <= 1800 + 1e-9);
	}
	sim_scen_free(&b);
	/* Another seed gives another workload. */
	assert_int_equal(sim_scen_parse(gen, strlen(gen), 4, &b, err, sizeof(err)), 0);
	assert_int_equal(b.seed, 4);
	assert_true(b.n_jobs != a.n_jobs || b.jobs[0].submit != a.jobs[0].submit);
	sim_scen_free(&a);
	sim_scen_free(&b);
}

/* 3 ranks, stripe 2, 4 OSTs: rank r writes to set[(2r) % 4] and
 * set[(2r + 1) % 4]: OSTs 0,1 get ranks 0 and 2, OSTs 2,3 get rank 1. */
/* io_size_gb and io_fraction (GIFT Table 1 row 3, sec. 1's 15-40%): every
 * application's bytes per run fall in one of the classes, and I/O takes a
 * fraction of its stand-alone run time inside io_fraction.  Breaks if the
 * size is taken per phase instead of per run, or the compute interval is
 * still drawn from Table 1's interval classes. */
static void test_scen_generator_size_and_io_fraction(void **state)
{
	static const struct {
		double lo, hi;  /* io_fraction */
	} cases[] = {{0.15, 0.40}, {0.30, 0.30}};
	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		char txt[600], err[256];
		sim_scenario sc;
		snprintf(txt, sizeof(txt),
			 "{\"nodes\": 128, \"duration_s\": 86400, "
			 "\"osts\": {\"count\": 16, \"capacity\": 100}, "
			 "\"generator\": {\"apps\": 200, \"nodes\": [1, 16], "
			 "\"osts_per_app\": [2, 8], \"io_size_gb\": [[10, 100], [100, 1000], "
			 "[1000, 5000]], \"io_fraction\": [%g, %g]}}",
			 cases[c].lo, cases[c].hi);
		assert_int_equal(sim_scen_parse(txt, strlen(txt), -1, &sc, err, sizeof(err)), 0);
		assert_int_equal(sc.n_apps, 200);
		for (size_t a = 0; a < sc.n_apps; a++) {
			const sim_app *p = &sc.apps[a];
			double run_gb = p->io_per_rank * p->ranks * p->phases / 1000.0;
			double io_s = p->io_per_rank * p->ranks / (100.0 * p->n_osts);
			double f = io_s / (io_s + p->compute_s);
			assert_true(run_gb >= 10 * (1 - 1e-9) && run_gb <= 5000 * (1 + 1e-9));
			assert_true(f >= cases[c].lo - 1e-9 && f <= cases[c].hi + 1e-9);
		}
		sim_scen_free(&sc);
	}
}

static void test_scen_phase_bytes(void **state)
{
	const char *s = "{\"duration_s\": 10, \"nodes\": 4, \"osts\": [1, 1, 1, 1],"
			" \"apps\": [{\"id\": \"A\", \"ranks\": 3, \"stripe_count\": 2, \"n_osts\": 4,"
			" \"io_mb_per_rank\": 10}], \"jobs\": [{\"app\": \"A\", \"osts\": [3, 2, 1, 0],"
			" \"io_scale\": 2}]}";
	sim_scenario sc;
	char err[256];
	double bytes[4];
	assert_int_equal(sim_scen_parse(s, strlen(s), -1, &sc, err, sizeof(err)), 0);
	sim_scen_phase_bytes(&sc, &sc.jobs[0], bytes);
	assert_true(bytes[0] == 20 && bytes[1] == 20 && bytes[2] == 10 && bytes[3] == 10);
	assert_int_equal(sc.jobs[0].osts[0], 3);
	assert_int_equal(sc.lockstep, 1);
	assert_int_equal(sc.work_conserving, 0);
	assert_true(sc.decision_interval == 10);
	sim_scen_free(&sc);
}

static void test_scen_malformed(void **state)
{
	static const struct {
		const char *in, *msg;
	} cases[] = {
		{"{", "line 1"},
		{"{\"duration_s\": 10, \"osts\": [1]}", "missing nodes"},
		{"{\"nodes\": 1, \"osts\": [1]}", "missing duration_s or duration_days"},
		{"{\"duration_s\": 10, \"nodes\": 1}", "missing osts"},
		{"{\"duration_s\": 10, \"nodes\": 1, \"osts\": [0]}", "osts[0]: expected a capacity > 0"},
		{"{\"duration_s\": 10, \"nodes\": 1, \"osts\": [1], \"speed\": 1}",
		 "unknown key 'speed'"},
		{"{\"duration_s\": 10, \"nodes\": 1, \"osts\": [1]}", "no jobs"},
		{"{\"duration_s\": 10, \"nodes\": 1, \"osts\": [1], \"apps\": [{\"id\": \"A\", "
		 "\"nodes\": 2}]}",
		 "apps[0].nodes: 2 is out of range [1, 1]"},
		{"{\"duration_s\": 10, \"nodes\": 1, \"osts\": [1], \"apps\": [{\"id\": \"A\"}],"
		 " \"jobs\": [{\"app\": \"B\"}]}",
		 "jobs[0].app: unknown application 'B'"},
		{"{\"duration_s\": 10, \"nodes\": 1, \"osts\": [1, 1], \"apps\": [{\"id\": \"A\"}],"
		 " \"jobs\": [{\"app\": \"A\", \"osts\": [2]}]}",
		 "jobs[0].osts[0]: expected an OST index in [0, 2)"},
		{"{\"duration_s\": 10, \"nodes\": 1, \"osts\": [1], \"progress\": \"async\","
		 " \"apps\": [{\"id\": \"A\"}], \"jobs\": [{\"app\": \"A\"}]}",
		 "progress: expected"},
		{"{\"duration_s\": 10, \"nodes\": 1, \"osts\": [1], \"generator\": {\"apps\": 0}}",
		 "generator.apps: 0 is out of range"},
		{"{\"duration_s\": 10, \"nodes\": 1, \"osts\": [1], \"generator\": "
		 "{\"io_phase_s\": [[1, 2]]}}",
		 "generator.io_phase_s: expected 3 [low, high] classes"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		sim_scenario sc;
		char err[256] = "";
		int rc = sim_scen_parse(cases[i].in, strlen(cases[i].in), -1, &sc, err, sizeof(err));
		if (rc != -EINVAL || !strstr(err, cases[i].msg))
			fail_msg("case %zu: rc %d, err '%s', want '%s'", i, rc, err, cases[i].msg);
		assert_int_equal(sc.n_jobs, 0);
		assert_null(sc.jobs);
	}
}

static void test_scen_load_missing_file(void **state)
{
	sim_scenario sc;
	char err[256] = "";
	assert_int_equal(sim_scen_load("/nonexistent/pfs-sim.json", -1, &sc, err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "/nonexistent/pfs-sim.json"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scen_gamma_arrival_statistics),
		cmocka_unit_test(test_scen_generator_deterministic_and_in_range),
		cmocka_unit_test(test_scen_generator_size_and_io_fraction),
		cmocka_unit_test(test_scen_phase_bytes),
		cmocka_unit_test(test_scen_malformed),
		cmocka_unit_test(test_scen_load_missing_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
