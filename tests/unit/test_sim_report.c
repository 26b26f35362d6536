/* test_sim_report.c — `pfs-sim report`'s numbers on hand-made inputs:
 * quantiles, per-application improvement and the worse-than-reference
 * accounting (consistent with sim_run_compare_loss), the CSV series reader,
 * bucketing of windows into system states and the per-state gain, the JSON
 * forms, and the subcommand end to end on a tiny scenario (JSON shape,
 * CSV files, usage errors). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "bench/sim/sim_report.h"

#define NEAR(a, b) (fabs((a) - (b)) < 1e-9)

static void test_quantile(void **state)
{
	const double v[] = {1, 2, 3, 4, 5}, two[] = {0, 10}, one[] = {7};
	assert_true(NEAR(sim_report_quantile(v, 5, 0), 1));
	assert_true(NEAR(sim_report_quantile(v, 5, 0.25), 2));
	assert_true(NEAR(sim_report_quantile(v, 5, 0.5), 3));
	assert_true(NEAR(sim_report_quantile(v, 5, 0.1), 1.4));
	assert_true(NEAR(sim_report_quantile(v, 5, 0.9), 4.6));
	assert_true(NEAR(sim_report_quantile(v, 5, 1), 5));
	assert_true(NEAR(sim_report_quantile(two, 2, 0.25), 2.5));
	assert_true(NEAR(sim_report_quantile(one, 1, 0.5), 7));
	assert_true(isnan(sim_report_quantile(v, 0, 0.5)));
}

/* Five applications, eight jobs:
 *   app 0: two appearances, 10+10 s vs 15+15 s (improvement 1/3), and a
 *          third done only in the policy run (ignored);
 *   app 1: 12 s vs 10 s (worse, loss 0.2);
 *   app 2: 15 s vs 10 s (worse, loss 0.5);
 *   app 3: done only in the reference (no comparison);
 *   app 4: 10 s vs 10 s (equal: not worse). */
static void make_runs(sim_scenario *sc, sim_run_result *r, sim_run_result *ref,
		      sim_job_result *jr, sim_job_result *jref)
{
	static const struct {
		size_t app;
		double mine, theirs;
		int done_mine, done_theirs;
	} j[] = {{0, 10, 15, 1, 1}, {1, 12, 10, 1, 1}, {0, 10, 15, 1, 1}, {2, 15, 10, 1, 1},
		 {3, 5, 50, 0, 1},   {0, 1, 100, 1, 0}, {4, 10, 10, 1, 1}, {4, 3, 3, 0, 0}};
	memset(sc, 0, sizeof(*sc));
	memset(r, 0, sizeof(*r));
	memset(ref, 0, sizeof(*ref));
	sc->n_apps = 5;
	for (size_t i = 0; i < 8; i++) {
		jr[i] = (sim_job_result){.app = j[i].app, .io_time = j[i].mine,
					 .done = j[i].done_mine};
		jref[i] = (sim_job_result){.app = j[i].app, .io_time = j[i].theirs,
					   .done = j[i].done_theirs};
	}
	r->jobs = jr;
	ref->jobs = jref;
	r->n_jobs = ref->n_jobs = 8;
}

static void test_apps_compare(void **state)
{
	sim_scenario sc;
	sim_run_result r, ref;
	sim_job_result jr[8], jref[8];
	sim_report_apps a;

	make_runs(&sc, &r, &ref, jr, jref);
	assert_int_equal(sim_report_apps_compare(&sc, &r, &ref, &a), 0);
	assert_int_equal(a.n, 4);
	assert_true(NEAR(a.impr[0], -0.5));
	assert_true(NEAR(a.impr[1], -0.2));
	assert_true(NEAR(a.impr[2], 0.0));
	assert_true(NEAR(a.impr[3], 1.0 / 3.0));
	assert_int_equal(a.worse, 2);
	assert_true(NEAR(a.mean_loss, 0.35));
	assert_true(NEAR(a.max_loss, 0.5));

	/* The same accounting as pfs-sim run's frac_worse_than_pofs. */
	double loss = -1, frac = sim_run_compare_loss(&sc, &r, &ref, &loss);
	assert_true(NEAR(frac, (double)a.worse / (double)a.n));
	assert_true(NEAR(loss, a.mean_loss));
	sim_report_apps_free(&a);
	assert_null(a.impr);

	/* Runs of different scenarios are refused. */
	ref.n_jobs = 7;
	assert_int_equal(sim_report_apps_compare(&sc, &r, &ref, &a), -EINVAL);
	ref.n_jobs = 8;
	jref[1].app = 2;
	assert_int_equal(sim_report_apps_compare(&sc, &r, &ref, &a), -EINVAL);
}

static void test_apps_none_worse(void **state)
{
	sim_scenario sc;
	sim_run_result r, ref;
	sim_job_result jr[8], jref[8];
	sim_report_apps a;

	make_runs(&sc, &r, &ref, jr, jref);
	jr[1].io_time = 10 * (1 + 1e-9); /* float noise is not "worse" */
	jr[3].io_time = 5;
	assert_int_equal(sim_report_apps_compare(&sc, &r, &ref, &a), 0);
	assert_int_equal(a.worse, 0);
	assert_true(NEAR(a.mean_loss, 0));
	assert_true(NEAR(a.max_loss, 0));
	assert_true(NEAR(a.impr[a.n - 1], 0.5));
	sim_report_apps_free(&a);
}

static void test_series_parse(void **state)
{
	const char *ok = "time_s,effective,served,capacity,io_jobs,running_jobs\n"
			 "600,10.5,11,200,3,4\n"
			 "1200,0,0,200,0,1\n";
	const char *bad[] = {"h\n600,abc,1,2,3\n", "h\n600,1,2,3\n", "h\n600,1,2,3,x\n",
			     "h\n600,1,,3,4\n"};
	sim_report_series s;

	assert_int_equal(sim_report_series_parse(ok, strlen(ok), &s), 0);
	assert_int_equal(s.n, 2);
	assert_true(NEAR(s.t[0], 600) && NEAR(s.eff[0], 10.5) && NEAR(s.io_jobs[0], 3));
	assert_true(NEAR(s.t[1], 1200) && NEAR(s.eff[1], 0) && NEAR(s.io_jobs[1], 0));
	sim_report_series_free(&s);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(sim_report_series_parse(bad[i], strlen(bad[i]), &s), -EINVAL);
	assert_int_equal(sim_report_series_parse("h\n", 2, &s), 0);
	assert_int_equal(s.n, 0);
	sim_report_series_free(&s);
}

static void test_states_buckets_and_gain(void **state)
{
	/* Reference load 0,0,1..8 in ten windows: idle, then quartiles
	 * [1,2] [3,4] [5,6] [7,8]; the policy gets +10% per bucket above
	 * idle, except the first busy bucket, where the gain is the ratio of
	 * sums (10+30 -> 20+30: +25%), not the mean of ratios (+50%). */
	double io[] = {0, 0, 1, 2, 3, 4, 5, 6, 7, 8};
	double re[] = {4, 6, 10, 30, 10, 10, 10, 10, 10, 10};
	double pe[] = {4, 6, 20, 30, 12, 12, 13, 13, 14, 14};
	double t[10] = {0};
	sim_report_series ref = {.n = 10, .t = t, .eff = re, .io_jobs = io};
	sim_report_series pol = {.n = 10, .t = t, .eff = pe, .io_jobs = io};
	sim_report_state st[SIM_REPORT_MAX_STATES];

	assert_int_equal(sim_report_states(&ref, &pol, 4, st), 5);
	const double lo[] = {0, 1, 3, 5, 7}, hi[] = {0, 2, 4, 6, 8};
	const double gain[] = {0, 0.25, 0.2, 0.3, 0.4};
	for (int i = 0; i < 5; i++) {
		assert_int_equal(st[i].windows, 2);
		assert_true(NEAR(st[i].lo, lo[i]));
		assert_true(NEAR(st[i].hi, hi[i]));
		assert_true(NEAR(st[i].gain, gain[i]));
	}
	assert_true(NEAR(st[0].ref_eff, 5) && NEAR(st[0].eff, 5));
	assert_true(NEAR(st[1].ref_eff, 20) && NEAR(st[1].eff, 25));

	/* The state is the reference's load, not the policy's. */
	double pio[] = {9, 9, 9, 9, 9, 9, 9, 9, 9, 9};
	pol.io_jobs = pio;
	assert_int_equal(sim_report_states(&ref, &pol, 4, st), 5);
	assert_int_equal(st[0].windows, 2);
	assert_true(NEAR(st[4].hi, 8));
	pol.io_jobs = io;

	/* Two buckets: [1,4] and [5,8]. */
	assert_int_equal(sim_report_states(&ref, &pol, 2, st), 3);
	assert_true(NEAR(st[1].hi, 4) && NEAR(st[2].lo, 5));
	assert_int_equal(st[1].windows, 4);

	/* Equal cuts merge; an empty idle state has no gain. */
	double io2[] = {1, 1, 1, 1, 5}, e2[] = {1, 1, 1, 1, 1};
	sim_report_series r2 = {.n = 5, .t = t, .eff = e2, .io_jobs = io2};
	assert_int_equal(sim_report_states(&r2, &r2, 4, st), 3);
	assert_int_equal(st[0].windows, 0);
	assert_true(isnan(st[0].gain));
	assert_int_equal(st[1].windows, 4);
	assert_true(NEAR(st[1].lo, 1) && NEAR(st[1].hi, 1));
	assert_int_equal(st[2].windows, 1);
	assert_true(NEAR(st[2].gain, 0));

	/* Only the windows both runs have. */
	pol.n = 4;
	assert_int_equal(sim_report_states(&ref, &pol, 4, st), 3);
	assert_int_equal(st[1].windows, 1);

	assert_int_equal(sim_report_states(&ref, &pol, 0, st), -EINVAL);
	assert_int_equal(sim_report_states(&ref, &pol, SIM_REPORT_MAX_STATES, st), -EINVAL);
}

static void test_json_forms(void **state)
{
	double impr[] = {-0.5, -0.2, 0.0, 0.25, 0.3};
	sim_report_apps a = {.n = 5, .impr = impr, .worse = 2, .mean_loss = 0.35,
			     .max_loss = 0.5};
	json_t *c = sim_report_cdf_json(&a), *w = sim_report_worse_json(&a);
	assert_non_null(c);
	assert_non_null(w);
	assert_int_equal(json_integer_value(json_object_get(c, "apps")), 5);
	json_t *sorted = json_object_get(c, "sorted");
	assert_true(json_is_array(sorted));
	assert_int_equal(json_array_size(sorted), 5);
	assert_true(NEAR(json_real_value(json_array_get(sorted, 0)), -0.5));
	json_t *q = json_object_get(c, "quantiles");
	assert_int_equal(json_object_size(q), 7);
	assert_true(NEAR(json_real_value(json_object_get(q, "p50")), 0.0));
	assert_true(NEAR(json_real_value(json_object_get(q, "p100")), 0.3));
	assert_true(NEAR(json_real_value(json_object_get(q, "p25")), -0.2));
	assert_true(NEAR(json_real_value(json_object_get(c, "frac_improved_20pct")), 0.4));
	assert_int_equal(json_integer_value(json_object_get(w, "worse")), 2);
	assert_true(NEAR(json_real_value(json_object_get(w, "frac")), 0.4));
	assert_true(NEAR(json_real_value(json_object_get(w, "mean_loss")), 0.35));
	assert_true(NEAR(json_real_value(json_object_get(w, "max_loss")), 0.5));
	json_decref(c);
	json_decref(w);

	/* No application: quantiles are null, not 0. */
	sim_report_apps none = {0};
	c = sim_report_cdf_json(&none);
	assert_true(json_is_null(json_object_get(json_object_get(c, "quantiles"), "p50")));
	json_decref(c);

	sim_report_state st[2] = {{.lo = 0, .hi = 0, .windows = 0, .ref_eff = NAN, .eff = NAN,
				   .gain = NAN},
				  {.lo = 1, .hi = 3, .windows = 4, .ref_eff = 10, .eff = 11,
				   .gain = 0.1}};
	json_t *s = sim_report_states_json(st, 2);
	assert_int_equal(json_array_size(s), 2);
	assert_true(json_is_null(json_object_get(json_array_get(s, 0), "gain")));
	json_t *s1 = json_array_get(s, 1);
	assert_int_equal(json_integer_value(json_object_get(s1, "state")), 1);
	assert_int_equal(json_integer_value(json_object_get(s1, "windows")), 4);
	assert_true(NEAR(json_real_value(json_object_get(s1, "hi")), 3));
	assert_true(NEAR(json_real_value(json_object_get(s1, "gain")), 0.1));
	json_decref(s);
}

/* Run `pfs-sim report ARGS` with stdout captured into *out (malloc'd). */
static int run_cmd(int argc, char **argv, char **out)
{
	char path[] = "/tmp/test_sim_report-XXXXXX";
	int fd = mkstemp(path), saved;
	assert_true(fd >= 0);
	unlink(path);
	fflush(stdout);
	saved = dup(1);
	assert_true(saved >= 0);
	assert_true(dup2(fd, 1) >= 0);
	int rc = sim_report_cmd(argc, argv);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	off_t len = lseek(fd, 0, SEEK_END);
	*out = calloc(1, (size_t)len + 1);
	assert_non_null(*out);
	assert_int_equal(pread(fd, *out, (size_t)len, 0), len);
	close(fd);
	return rc;
}

static const char tiny[] =
	"{\"name\": \"t\", \"duration_s\": 3600, \"nodes\": 4, \"osts\": [100, 100],"
	" \"csv_interval\": 60,"
	" \"apps\": [{\"id\": \"A\", \"nodes\": 1, \"ranks\": 1, \"n_osts\": 1, \"phases\": 3,"
	"             \"io_mb_per_rank\": 3000, \"compute_s\": 60},"
	"            {\"id\": \"B\", \"nodes\": 2, \"ranks\": 2, \"n_osts\": 2, \"phases\": 2,"
	"             \"io_mb_per_rank\": 2000, \"compute_s\": 30}],"
	" \"jobs\": [{\"app\": \"A\", \"submit\": 0, \"osts\": [0]},"
	"          {\"app\": \"B\", \"submit\": 0, \"osts\": [0, 1]},"
	"          {\"app\": \"A\", \"submit\": 10, \"osts\": [1]}]}";

static void test_cmd_end_to_end(void **state)
{
	char dir[] = "/tmp/test_sim_report-d-XXXXXX", scen[128], prefix[128], path[160];
	assert_non_null(mkdtemp(dir));
	snprintf(scen, sizeof(scen), "%s/s.json", dir);
	snprintf(prefix, sizeof(prefix), "%s/r", dir);
	FILE *f = fopen(scen, "w");
	assert_non_null(f);
	fputs(tiny, f);
	fclose(f);

	char *argv[] = {"pfs-sim", "report", scen, "--policies", "gift,mbw", "--sweep",
			(char[]){"B_thres=0.1,0.5"}, "--contention", "0.5,1",
			"--threads", "2", "--csv", prefix, NULL};
	char *out = NULL;
	assert_int_equal(run_cmd(13, argv, &out), 0);
	json_error_t je;
	json_t *j = json_loads(out, 0, &je);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "reference")), "pofs");
	assert_non_null(json_object_get(j, "state_definition"));
	json_t *pol = json_object_get(j, "policies");
	assert_int_equal(json_object_size(pol), 2);
	json_t *g = json_object_get(pol, "gift");
	assert_non_null(g);
	json_t *imp = json_object_get(g, "improvement");
	assert_int_equal(json_integer_value(json_object_get(imp, "apps")), 2);
	assert_int_equal(json_array_size(json_object_get(imp, "sorted")), 2);
	json_t *w = json_object_get(g, "worse");
	assert_int_equal(json_integer_value(json_object_get(w, "apps")), 2);
	assert_true(json_is_number(json_object_get(w, "frac")));
	assert_true(json_array_size(json_object_get(g, "states")) >= 2);
	json_t *m = json_object_get(g, "metrics");
	assert_true(json_is_number(json_object_get(m, "io_time_change")));
	/* frac in "worse" is pfs-sim run's frac_worse_than_pofs. */
	assert_true(NEAR(json_real_value(json_object_get(w, "frac")),
			 json_real_value(json_object_get(m, "frac_worse_than_reference"))));
	json_t *sw = json_object_get(json_object_get(j, "sweeps"), "B_thres");
	assert_int_equal(json_array_size(sw), 2);
	assert_true(NEAR(json_real_value(json_object_get(json_array_get(sw, 1), "value")), 0.5));
	json_t *ct = json_object_get(j, "contention");
	assert_string_equal(json_string_value(json_object_get(ct, "policy")), "gift");
	json_t *lv = json_object_get(ct, "levels");
	assert_int_equal(json_array_size(lv), 2);
	json_t *l0 = json_array_get(lv, 0), *l1 = json_array_get(lv, 1);
	assert_true(NEAR(json_real_value(json_object_get(l0, "level")), 0.5));
	/* Half the I/O volume: the reference's I/O time drops; level 1 is
	 * the base run. */
	double io0 = json_real_value(
		json_object_get(json_object_get(l0, "reference"), "mean_io_time"));
	double io1 = json_real_value(
		json_object_get(json_object_get(l1, "reference"), "mean_io_time"));
	double base = json_real_value(
		json_object_get(json_object_get(j, "reference_metrics"), "mean_io_time"));
	assert_true(io0 < io1);
	assert_true(NEAR(io1, base));
	json_decref(j);
	free(out);

	static const char *const files[] = {"summary", "states", "gift", "mbw",
					    "sweep-B_thres", "contention"};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s-%s.csv", prefix, files[i]);
		f = fopen(path, "r");
		assert_non_null(f);
		char line[512];
		int lines = 0;
		while (fgets(line, sizeof(line), f))
			lines++;
		fclose(f);
		assert_true(lines >= 2);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s-summary.csv", prefix);

	/* Usage errors: exit 2. */
	char *bad1[] = {"pfs-sim", "report", scen, "--policies", "nosuch", NULL};
	char *bad2[] = {"pfs-sim", "report", scen, "--contention", "0,1", NULL};
	char *bad3[] = {"pfs-sim", "report", "--states", "2", NULL};
	char *bad4[] = {"pfs-sim", "report", scen, "--policies", "gift", "--param",
			(char[]){"B_thres=7"}, NULL};
	assert_int_equal(run_cmd(5, bad1, &out), 2);
	free(out);
	assert_int_equal(run_cmd(5, bad2, &out), 2);
	free(out);
	assert_int_equal(run_cmd(4, bad3, &out), 2);
	free(out);
	assert_int_equal(run_cmd(7, bad4, &out), 2);
	free(out);
	unlink(scen);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quantile),
		cmocka_unit_test(test_apps_compare),
		cmocka_unit_test(test_apps_none_worse),
		cmocka_unit_test(test_series_parse),
		cmocka_unit_test(test_states_buckets_and_gain),
		cmocka_unit_test(test_json_forms),
		cmocka_unit_test(test_cmd_end_to_end),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
