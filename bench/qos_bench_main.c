/* qos_bench_main.c — pfs-qosbench: times the QoS decisions the papers
 * report costs for, from outside (qos/ reads no clock):
 *   - one GIFT decision for J jobs on O OSTs (gift.txt reports 5 ms for
 *     1,000 jobs on 200 OSTs, with COIN-OR CLP),
 *   - one AdapTBF period per job (adaptbf.txt: under 30 µs per job),
 *   - one PSFA computation for J jobs.
 *   pfs-qosbench [--jobs 1000] [--osts 200] [--reps 15]
 * Prints medians, minima and maxima in one line each. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "qos/adaptbf.h"
#include "qos/gift.h"
#include "qos/padll.h"
#include "qos/policy.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void report(const char *what, double *t, int n, double scale, const char *unit)
{
	qsort(t, (size_t)n, sizeof(*t), cmp_d);
	printf("%-40s median %10.3f %s  min %10.3f  max %10.3f  (n=%d)\n", what,
	       t[n / 2] * scale, unit, t[0] * scale, t[n - 1] * scale, n);
}

static int bench_gift(size_t jobs, size_t osts, int reps)
{
	qos_gift_params p;
	double *t = calloc((size_t)reps, sizeof(double));
	int rc = 0;

	qos_gift_params_default(&p);
	for (int r = 0; r < reps && !rc; r++) {
		qos_gift_synth s;
		rc = qos_gift_synth_make(jobs, osts, 8, (uint64_t)r + 1, &s);
		if (rc)
			break;
		double *alloc = calloc(jobs * osts, sizeof(double));
		double *coupons = calloc(jobs, sizeof(double));
		qos_result res = { .alloc = alloc, .coupons = coupons };
		double t0 = now_s();
		rc = qos_gift_decide_once(&p, &s.in, &res);
		t[r] = now_s() - t0;
		free(alloc);
		free(coupons);
		qos_gift_synth_free(&s);
	}
	if (!rc) {
		char what[80];
		snprintf(what, sizeof(what), "gift decision %zu jobs x %zu OSTs", jobs, osts);
		report(what, t, reps, 1e3, "ms");
	}
	free(t);
	return rc;
}

static int bench_adaptbf(size_t jobs, int reps)
{
	qos_adaptbf_job *x = calloc(jobs, sizeof(*x));
	double *t = calloc((size_t)reps, sizeof(double));
	unsigned seed = 1;
	int rc = 0;

	for (size_t i = 0; i < jobs; i++) {
		x[i].n = 1 + rand_r(&seed) % 64;
		x[i].prev = -1;
	}
	for (int r = 0; r < reps && !rc; r++) {
		for (size_t i = 0; i < jobs; i++)
			x[i].d = rand_r(&seed) % 200; /* RPCs seen in the last period */
		double t0 = now_s();
		rc = qos_adaptbf_allocate(x, jobs, 10000 * (int64_t)jobs / 10);
		t[r] = (now_s() - t0) / (double)jobs;
	}
	if (!rc) {
		char what[80];
		snprintf(what, sizeof(what), "adaptbf period, per job (%zu jobs)", jobs);
		report(what, t, reps, 1e6, "us");
	}
	free(x);
	free(t);
	return rc;
}

static int bench_policy(const char *name, size_t jobs, size_t osts, int reps)
{
	const qos_policy_ops *ops = qos_policy_find(name);
	qos_gift_synth s;
	double *t = calloc((size_t)reps, sizeof(double));
	void *st = NULL;
	int rc;

	if (!ops)
		return -ENOENT;
	rc = qos_gift_synth_make(jobs, osts, 8, 7, &s);
	if (rc)
		return rc;
	rc = ops->create(NULL, &st);
	double *alloc = calloc(jobs * osts, sizeof(double));
	for (int r = 0; r < reps && !rc; r++) {
		qos_result res = { .alloc = alloc };
		s.in.now = r * s.in.period;
		double t0 = now_s();
		rc = ops->decide(st, &s.in, &res);
		t[r] = now_s() - t0;
	}
	if (!rc) {
		char what[80];
		snprintf(what, sizeof(what), "%s decision %zu jobs x %zu OSTs", name, jobs, osts);
		report(what, t, reps, 1e3, "ms");
	}
	if (st)
		ops->destroy(st);
	free(alloc);
	free(t);
	qos_gift_synth_free(&s);
	return rc;
}

int main(int argc, char **argv)
{
	size_t jobs = 1000, osts = 200;
	int reps = 15, rc;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--jobs"))
			jobs = strtoul(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--osts"))
			osts = strtoul(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--reps"))
			reps = atoi(argv[i + 1]);
	}
	if (!jobs || !osts || reps < 1) {
		fprintf(stderr, "usage: pfs-qosbench [--jobs N] [--osts N] [--reps N]\n");
		return 2;
	}
	rc = bench_gift(jobs, osts, reps);
	if (!rc)
		rc = bench_adaptbf(jobs, reps * 100);
	if (!rc)
		rc = bench_policy("pofs", jobs, osts, reps);
	if (!rc)
		rc = bench_policy("adaptbf", jobs, osts, reps);
	if (rc) {
		fprintf(stderr, "pfs-qosbench: %s\n", strerror(-rc));
		return 1;
	}
	return 0;
}
