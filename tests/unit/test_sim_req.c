/* test_sim_req.c — `pfs-sim req`, the request-level simulator: the event
 * clock's order, conservation of requests, TBF rates honoured on a long
 * run, AdapTBF lending while a job leaves its share unused, determinism
 * for a seed, and malformed scenarios refused with the field named. */
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
#include <unistd.h>

#include "bench/sim/sim_req.h"
#include "bench/sim/sim_req_evq.h"

static void load(const char *text, sim_req_scen *sc)
{
	json_error_t je;
	char err[256] = "";
	json_t *root = json_loads(text, 0, &je);
	assert_non_null(root);
	int rc = sim_req_scen_parse(root, sc, err, sizeof(err));
	json_decref(root);
	if (rc)
		fail_msg("scenario refused: %s", err);
}

static double mbps(const sim_req_result *r, size_t j, double from_s, double to_s)
{
	double sum = 0;
	size_t n = 0;
	for (size_t k = 0; k < r->n_samples; k++) {
		double t = (double)(k + 1) * r->sample_s;
		if (t <= from_s || t > to_s)
			continue;
		sum += r->tput[k * r->n_jobs + j];
		n++;
	}
	return n ? sum / (double)n : 0;
}

static void test_evq_order(void **state)
{
	sim_req_evq q;
	sim_req_evq_init(&q);
	/* times out of order, with ties: 1000 events */
	uint64_t x = 12345;
	for (long i = 0; i < 1000; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		assert_int_equal(sim_req_evq_push(&q, (int64_t)((x >> 33) % 50), 0, i, 0), 0);
	}
	assert_int_equal(sim_req_evq_push(&q, -1, 0, 0, 0), -EINVAL);
	sim_req_ev prev = { .t_us = -1 }, ev;
	long n = 0;
	while (sim_req_evq_pop(&q, &ev) == 0) {
		assert_true(ev.t_us >= prev.t_us);
		if (ev.t_us == prev.t_us)
			assert_true(ev.a > prev.a); /* ties: the order they were pushed */
		prev = ev;
		n++;
	}
	assert_int_equal(n, 1000);
	assert_int_equal(sim_req_evq_pop(&q, &ev), -ENOENT);
	sim_req_evq_free(&q);
}

/* Drops (queue_max), RCC, ASCAR, bursts and think times, cut mid-run. */
static const char *busy =
	"{\"name\": \"busy\", \"duration_s\": 5.0003, \"net_us\": 300,"
	" \"osts\": [{\"rate\": 300, \"threads\": 2, \"queue_max\": 20}, {\"rate\": 200}],"
	" \"rcc\": {\"Lmax\": 0.05}, \"ascar\": true,"
	" \"jobs\": [{\"id\": \"a\", \"priority\": 1, \"procs\": [{\"count\": 6, \"ost\": 0, \"inflight\": 8}]},"
	"            {\"id\": \"b\", \"priority\": 2, \"procs\": [{\"count\": 3, \"ost\": 0, \"burst\": 10, \"gap_ms\": 300},"
	"                                                  {\"count\": 4, \"ost\": 1, \"think_ms\": 2}]}]}";

static void test_conservation(void **state)
{
	sim_req_scen sc;
	load(busy, &sc);
	for (int c = 0; c < SIM_REQ_NCONTROLS; c++) {
		sim_req_result r;
		assert_int_equal(sim_req_run(&sc, c, 7, &r), 0);
		assert_true(r.issued > 500);
		assert_true(r.dropped > 0 || c != SIM_REQ_NOBW);
		assert_int_equal(r.issued, r.served + r.dropped + r.queued + r.in_service + r.in_transit);
		long js = 0, ji = 0, jd = 0;
		double mb = 0;
		for (size_t j = 0; j < r.n_jobs; j++) {
			js += r.jobs[j].served;
			ji += r.jobs[j].issued;
			jd += r.jobs[j].dropped;
			mb += r.jobs[j].mb;
		}
		assert_int_equal(js, r.served);
		assert_int_equal(ji, r.issued);
		assert_int_equal(jd, r.dropped);
		assert_true(fabs(mb - (double)r.served * sc.rpc_mb) < 1e-6);
		/* the samples add up to what was served in whole windows */
		double smb = 0;
		for (size_t k = 0; k < r.n_samples * r.n_jobs; k++)
			smb += r.tput[k] * r.sample_s;
		assert_true(smb <= mb + 1e-6 && smb > mb * 0.9);
		sim_req_result_free(&r);
	}
	sim_req_scen_free(&sc);
}

/* Finite work: everything issued is served, nothing is left anywhere. */
static void test_finite_run_drains(void **state)
{
	sim_req_scen sc;
	load("{\"osts\": [100], \"jobs\": [{\"id\": \"a\", \"procs\": [{\"count\": 3, \"rpcs\": 50}]},"
	     " {\"id\": \"b\", \"priority\": 3, \"procs\": [{\"rpcs\": 70, \"inflight\": 2}]}]}", &sc);
	for (int c = 0; c < SIM_REQ_NCONTROLS; c++) {
		sim_req_result r;
		assert_int_equal(sim_req_run(&sc, c, 1, &r), 0);
		assert_int_equal(r.served, 220);
		assert_int_equal(r.issued, 220);
		assert_int_equal(r.queued + r.in_service + r.in_transit + r.dropped, 0);
		/* 220 RPCs at 100/s take at least 2.2 s */
		assert_true(r.end_s >= 2.2);
		sim_req_result_free(&r);
	}
	sim_req_scen_free(&sc);
}

/* Static TBF rules at 1:3 of 400 RPCs/s: 100 and 300 RPCs/s within 3 %
 * over 60 s, though both jobs could take everything. */
static const char *two =
	"{\"duration_s\": 60, \"osts\": [400],"
	" \"jobs\": [{\"id\": \"lo\", \"priority\": 1, \"procs\": [{\"count\": 8}]},"
	"            {\"id\": \"hi\", \"priority\": 3, \"procs\": [{\"count\": 2}]}]}";

static void test_tbf_rate_honoured(void **state)
{
	sim_req_scen sc;
	sim_req_result r;
	load(two, &sc);
	assert_int_equal(sim_req_run(&sc, SIM_REQ_STATIC, 1, &r), 0);
	double lo = r.jobs[0].mb / 60, hi = r.jobs[1].mb / 60;
	assert_true(fabs(lo - 100) < 3);
	assert_true(fabs(hi - 300) < 9);
	sim_req_result_free(&r);
	/* without rules the job with more writers takes more (FCFS) */
	assert_int_equal(sim_req_run(&sc, SIM_REQ_NOBW, 1, &r), 0);
	assert_true(r.jobs[0].mb > 2 * r.jobs[1].mb);
	sim_req_result_free(&r);
	/* AdapTBF with both always busy: the priority shares, 1:3 */
	assert_int_equal(sim_req_run(&sc, SIM_REQ_ADAPTBF, 1, &r), 0);
	lo = mbps(&r, 0, 1, 60);
	hi = mbps(&r, 1, 1, 60);
	assert_true(fabs(lo - 100) < 5);
	assert_true(fabs(hi - 300) < 10);
	sim_req_result_free(&r);
	sim_req_scen_free(&sc);
}

/* A job that asks for ~20 RPCs/s of its 200 share (one writer, 50 ms
 * think time) lends the rest: under AdapTBF the busy job gets well over its
 * 200 and holds a negative record; under static rules it keeps 200. */
static const char *lend =
	"{\"duration_s\": 20, \"osts\": [400],"
	" \"jobs\": [{\"id\": \"idle\", \"priority\": 1, \"procs\": [{\"inflight\": 1, \"think_ms\": 50}]},"
	"            {\"id\": \"busy\", \"priority\": 1, \"procs\": [{\"count\": 8}]}]}";

static void test_adaptbf_lending(void **state)
{
	sim_req_scen sc;
	sim_req_result r;
	load(lend, &sc);
	assert_int_equal(sim_req_run(&sc, SIM_REQ_ADAPTBF, 1, &r), 0);
	double hot = mbps(&r, 1, 2, 20), idle = mbps(&r, 0, 2, 20);
	assert_true(hot > 250); /* static: 200; not all of the surplus moves (qos/adaptbf DF) */
	assert_true(idle > 15 && idle < 25); /* the lender still gets what it asks */
	assert_true(r.jobs[0].record > 100);  /* lent ... */
	assert_true(r.jobs[1].record < -100); /* ... to the busy job */
	assert_true(fabs(r.jobs[0].record + r.jobs[1].record) < 1e-9);
	/* the record series rises while it lends */
	size_t k = r.n_samples / 2;
	assert_true(r.record[(r.n_samples - 1) * 2] > r.record[k * 2]);
	sim_req_result_free(&r);
	assert_int_equal(sim_req_run(&sc, SIM_REQ_STATIC, 1, &r), 0);
	assert_true(mbps(&r, 1, 2, 20) < 205);
	sim_req_result_free(&r);
	sim_req_scen_free(&sc);
}

static void test_deterministic(void **state)
{
	sim_req_scen sc;
	load(busy, &sc);
	for (int c = 0; c < SIM_REQ_NCONTROLS; c++) {
		sim_req_result a, b, d;
		assert_int_equal(sim_req_run(&sc, c, 42, &a), 0);
		assert_int_equal(sim_req_run(&sc, c, 42, &b), 0);
		assert_int_equal(sim_req_run(&sc, c, 43, &d), 0);
		assert_int_equal(a.events, b.events);
		assert_int_equal(a.n_samples, b.n_samples);
		assert_memory_equal(a.tput, b.tput, a.n_samples * a.n_jobs * sizeof(double));
		assert_memory_equal(a.jobs, b.jobs, a.n_jobs * sizeof(*a.jobs));
		/* the seed matters (service jitter) */
		assert_true(a.events != d.events ||
			    memcmp(a.tput, d.tput, a.n_samples * a.n_jobs * sizeof(double)));
		sim_req_result_free(&a);
		sim_req_result_free(&b);
		sim_req_result_free(&d);
	}
	sim_req_scen_free(&sc);
}

static void test_garbage_refused(void **state)
{
	static const struct {
		const char *text, *msg;
	} bad[] = {
		{ "[1, 2]", "not a JSON object" },
		{ "{\"osts\": [100], \"jobs\": [{\"id\": \"a\", \"procs\": [{}]}], \"speed\": 1}",
		  "unknown key 'speed'" },
		{ "{\"jobs\": [{\"id\": \"a\", \"procs\": [{}]}]}", "osts" },
		{ "{\"osts\": [-5], \"jobs\": [{\"id\": \"a\", \"procs\": [{}]}]}", "osts[0].rate" },
		{ "{\"osts\": [{\"threads\": 2}], \"jobs\": [{\"id\": \"a\", \"procs\": [{}]}]}",
		  "osts[0].rate: required" },
		{ "{\"osts\": [100], \"jobs\": [{\"id\": \"a\", \"procs\": [{\"ost\": 1}]}]}",
		  "jobs[0].procs[0].ost" },
		{ "{\"osts\": [100], \"jobs\": [{\"id\": \"a\", \"procs\": [{}]}, {\"id\": \"a\", \"procs\": [{}]}]}",
		  "jobs[1].id: duplicate" },
		{ "{\"osts\": [100], \"jobs\": [{\"id\": \"a\", \"procs\": [{\"burst\": 5}]}]}",
		  "gap_ms" },
		{ "{\"osts\": [100], \"jobs\": [{\"id\": \"a\", \"procs\": []}]}", "jobs[0].procs" },
		{ "{\"osts\": [100], \"controls\": [\"fifo\"], \"jobs\": [{\"id\": \"a\", \"procs\": [{}]}]}",
		  "controls[0]" },
		{ "{\"osts\": [100], \"jobs\": [{\"id\": \"a\", \"priority\": \"high\", \"procs\": [{}]}]}",
		  "jobs[0].priority: not a number" },
		{ "{\"osts\": [100], \"rcc\": {\"Lmax\": 0.1, \"Lmin\": 1}, \"jobs\": [{\"id\": \"a\", \"procs\": [{}]}]}",
		  "rcc: unknown key 'Lmin'" },
		{ "{\"osts\": [100], \"duration_s\": 0, \"jobs\": [{\"id\": \"a\", \"procs\": [{}]}]}",
		  "duration_s" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_error_t je;
		json_t *root = json_loads(bad[i].text, 0, &je);
		assert_non_null(root);
		sim_req_scen sc;
		char err[256] = "";
		assert_int_equal(sim_req_scen_parse(root, &sc, err, sizeof(err)), -EINVAL);
		json_decref(root);
		if (!strstr(err, bad[i].msg))
			fail_msg("case %zu: '%s' does not name '%s'", i, err, bad[i].msg);
		assert_null(sc.osts);
		assert_null(sc.procs);
	}
	/* not JSON at all: the file and line are named */
	char path[] = "/tmp/test_sim_req_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	assert_non_null(f);
	fputs("{\"osts\": [100],\n garbage", f);
	fclose(f);
	sim_req_scen sc;
	char err[256] = "";
	assert_int_equal(sim_req_scen_load(path, &sc, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, ":2:"));
	unlink(path);
}

static void test_json_output(void **state)
{
	sim_req_scen sc;
	sim_req_result r;
	load(lend, &sc);
	assert_int_equal(sim_req_run(&sc, SIM_REQ_ADAPTBF, 1, &r), 0);
	json_t *o = sim_req_result_json(&sc, &r, 1);
	assert_non_null(o);
	assert_string_equal(json_string_value(json_object_get(o, "control")), "adaptbf");
	json_t *req = json_object_get(o, "requests");
	assert_int_equal(json_integer_value(json_object_get(req, "issued")), r.issued);
	json_t *jobs = json_object_get(o, "jobs");
	assert_int_equal(json_array_size(jobs), 2);
	json_t *ser = json_object_get(json_object_get(o, "series"), "record");
	assert_int_equal(json_array_size(json_object_get(ser, "busy")), r.n_samples);
	json_decref(o);
	sim_req_result_free(&r);
	sim_req_scen_free(&sc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_evq_order),
		cmocka_unit_test(test_conservation),
		cmocka_unit_test(test_finite_run_drains),
		cmocka_unit_test(test_tbf_rate_honoured),
		cmocka_unit_test(test_adaptbf_lending),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_garbage_refused),
		cmocka_unit_test(test_json_output),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
