/* sim_req_cli.c — the `pfs-sim req` subcommand: load a request-level
 * scenario, run it under each control (nobw, static, adaptbf, or those
 * given with --control), print a per-job table or one JSON object, and
 * optionally write per-sample CSV time series for bench/plot_sim.sh. */
#include "bench/sim/sim_req.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EXIT_USAGE 2

static void req_usage(FILE *f)
{
	fprintf(f, "usage: pfs-sim req SCENARIO.json [--control nobw|static|adaptbf ...]\n"
		   "                   [--seed N] [--json] [--series] [--csv PREFIX]\n"
		   "Simulates SCENARIO request by request under each control; --csv writes\n"
		   "PREFIX-<control>.csv (time, per-job MB/s, demand, record).\n");
}

static int write_csv(const char *prefix, const sim_req_scen *sc, const sim_req_result *r)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s-%s.csv", prefix, sim_req_control_name(r->control));
	FILE *f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "pfs-sim req: %s: %s\n", path, strerror(errno));
		return -errno;
	}
	fprintf(f, "time_s");
	static const char *const what[3] = { "mbps", "demand", "record" };
	for (int m = 0; m < 3; m++)
		for (size_t j = 0; j < sc->n_jobs; j++)
			fprintf(f, ",%s_%s", sc->jobs[j].id, what[m]);
	fprintf(f, "\n");
	for (size_t k = 0; k < r->n_samples; k++) {
		fprintf(f, "%.3f", (double)(k + 1) * r->sample_s);
		const double *src[3] = { r->tput, r->demand, r->record };
		for (int m = 0; m < 3; m++)
			for (size_t j = 0; j < sc->n_jobs; j++)
				fprintf(f, ",%.6g", src[m][k * sc->n_jobs + j]);
		fprintf(f, "\n");
	}
	if (fclose(f)) {
		fprintf(stderr, "pfs-sim req: %s: write failed\n", path);
		return -EIO;
	}
	return 0;
}

static void print_table(const sim_req_scen *sc, const sim_req_result *res, int n)
{
	printf("scenario %s: %zu OST(s), %zu jobs, %zu processes\n", sc->name, sc->n_osts,
	       sc->n_jobs, sc->n_procs);
	printf("%-10s %8s", "job", "priority");
	for (int c = 0; c < n; c++)
		printf(" %10s MB/s %8s", sim_req_control_name(res[c].control), "end s");
	printf("\n");
	for (size_t j = 0; j < sc->n_jobs; j++) {
		printf("%-10s %8g", sc->jobs[j].id, sc->jobs[j].priority);
		for (int c = 0; c < n; c++) {
			const sim_req_jobres *jr = &res[c].jobs[j];
			double span = jr->finish_s > jr->start_s ? jr->finish_s - jr->start_s : 0;
			printf(" %15.1f %8.1f", span > 0 ? jr->mb / span : 0.0, jr->finish_s);
		}
		printf("\n");
	}
	printf("%-19s", "total (MB/s, end)");
	for (int c = 0; c < n; c++)
		printf(" %15.1f %8.1f", res[c].end_s > 0 ? res[c].total_mb / res[c].end_s : 0.0,
		       res[c].end_s);
	printf("\n");
	for (int c = 0; c < n; c++)
		printf("%s: issued %ld = served %ld + dropped %ld + queued %ld + in service %ld"
		       " + in transit %ld; %llu events\n",
		       sim_req_control_name(res[c].control), res[c].issued, res[c].served,
		       res[c].dropped, res[c].queued, res[c].in_service, res[c].in_transit,
		       (unsigned long long)res[c].events);
}

int sim_req_cmd(int argc, char **argv)
{
	const char *path = NULL, *csv = NULL;
	unsigned controls = 0;
	int json = 0, series = 0, have_seed = 0;
	unsigned long long seed = 0;
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--json")) {
			json = 1;
		} else if (!strcmp(a, "--series")) {
			series = 1;
		} else if ((!strcmp(a, "--control") || !strcmp(a, "--seed") ||
			    !strcmp(a, "--csv")) && i + 1 < argc) {
			const char *v = argv[++i];
			if (!strcmp(a, "--control")) {
				int c = sim_req_control_parse(v);
				if (c < 0) {
					fprintf(stderr, "pfs-sim req: unknown control '%s'\n", v);
					return EXIT_USAGE;
				}
				controls |= 1u << c;
			} else if (!strcmp(a, "--seed")) {
				char *end;
				errno = 0;
				seed = strtoull(v, &end, 10);
				if (errno || *end || !*v) {
					fprintf(stderr, "pfs-sim req: bad seed '%s'\n", v);
					return EXIT_USAGE;
				}
				have_seed = 1;
			} else {
				csv = v;
			}
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			req_usage(stdout);
			return 0;
		} else if (a[0] != '-' && !path) {
			path = a;
		} else {
			fprintf(stderr, "pfs-sim req: unexpected argument '%s'\n", a);
			req_usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (!path) {
		req_usage(stderr);
		return EXIT_USAGE;
	}
	sim_req_scen sc;
	char err[512] = "";
	int rc = sim_req_scen_load(path, &sc, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "pfs-sim req: %s: %s\n", path,
			rc == -ENOMEM ? "out of memory" : err);
		return rc == -ENOMEM ? 1 : EXIT_USAGE;
	}
	if (!controls)
		controls = sc.controls;
	if (!have_seed)
		seed = sc.seed;
	sim_req_result res[SIM_REQ_NCONTROLS];
	int n = 0, status = 0;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int c = 0; c < SIM_REQ_NCONTROLS; c++) {
		if (!(controls & (1u << c)))
			continue;
		rc = sim_req_run(&sc, c, seed, &res[n]);
		if (rc) {
			fprintf(stderr, "pfs-sim req: %s under %s failed: %s\n", sc.name,
				sim_req_control_name(c), strerror(-rc));
			status = 1;
			goto out;
		}
		n++;
		if (csv && write_csv(csv, &sc, &res[n - 1])) {
			status = 1;
			goto out;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (json) {
		json_t *o = json_object(), *ctl = json_object();
		if (!o || !ctl) {
			json_decref(o);
			json_decref(ctl);
			status = 1;
			goto out;
		}
		json_object_set_new(o, "scenario", json_string(sc.name));
		json_object_set_new(o, "seed", json_integer((json_int_t)seed));
		for (int c = 0; c < n; c++) {
			json_t *x = sim_req_result_json(&sc, &res[c], series);
			if (!x) {
				status = 1;
				break;
			}
			json_object_set_new(ctl, sim_req_control_name(res[c].control), x);
		}
		json_object_set_new(o, "controls", ctl);
		if (!status) {
			char *s = json_dumps(o, JSON_REAL_PRECISION(10));
			if (s)
				printf("%s\n", s);
			else
				status = 1;
			free(s);
		}
		json_decref(o);
	} else {
		print_table(&sc, res, n);
		printf("simulated in %.2f s wall clock\n",
		       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	}
out:
	for (int c = 0; c < n; c++)
		sim_req_result_free(&res[c]);
	sim_req_scen_free(&sc);
	return status;
}
