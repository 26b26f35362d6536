/* sim_main.c — pfs-sim, the QoS policy simulator: `decide` replays JSON
 * decision instances through a policy, `run` simulates a cluster scenario
 * under a policy and reports GIFT's metrics against a POFS reference run.
 * The contract is in bench/sim/README.md.  Exit status: 0 success, 1 a
 * failure while running, 2 bad usage or malformed input. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "common/file.h"
#include "bench/sim/sim_decide.h"
#include "bench/sim/sim_policy.h"
#include "bench/sim/sim_report.h"
#include "bench/sim/sim_req.h"
#include "bench/sim/sim_run.h"
#include "bench/sim/sim_scen.h"
#include "bench/sim/sim_trace.h"

#define EXIT_USAGE 2

static void usage(FILE *f)
{
	fprintf(f,
		"usage: pfs-sim decide --policy P [--param k=v ...] [--seed N] [FILE|-]\n"
		"       pfs-sim run SCENARIO.json --policy P [--param k=v ...] [--seed N]\n"
		"                   [--json] [--csv FILE] [--plot FILE.png] [--reference P]\n"
		"                   [--trace TRACE.csv] [--schedule pinned|easy]\n"
		"       pfs-sim req SCENARIO.json [--control C ...] [--seed N] [--json] [--csv PREFIX]\n"
		"       pfs-sim report SCENARIO.json [--policies P,...] [--sweep K=a,b] [--contention c,...]\n"
		"       pfs-sim list\n"
		"decide reads instances (JSON) from FILE or stdin and prints one JSON line\n"
		"per instance; run simulates SCENARIO and prints GIFT's metrics.\n"
		"See bench/sim/README.md.\n");
}

static void list_policies(FILE *f)
{
	const qos_policy_ops *const *all = qos_policy_all();
	for (size_t i = 0; all[i]; i++)
		fprintf(f, "  %-10s %s\n", all[i]->name, all[i]->summary ? all[i]->summary : "");
	fprintf(f, "  %-10s %s\n", sim_policy_equal.name, sim_policy_equal.summary);
}

static const qos_policy_ops *policy_or_die(const char *name)
{
	const qos_policy_ops *p = sim_policy_find(name);
	if (!p) {
		fprintf(stderr, "pfs-sim: unknown policy '%s'; known policies:\n", name);
		list_policies(stderr);
	}
	return p;
}

static char *read_all(FILE *f, size_t *len)
{
	char *buf;

	return pfs_file_read_stream(f, &buf, len) ? NULL : buf;
}

typedef struct cli {
	const char *policy, *file, *csv, *plot, *reference, *trace;
	int easy; /* --schedule easy: each run schedules its own jobs */
	qos_param *params;
	size_t n_params;
	long long seed;
	int json;
} cli;

static int parse_args(int argc, char **argv, cli *c, int want_file)
{
	c->seed = -1;
	c->params = calloc((size_t)argc, sizeof(*c->params));
	if (!c->params)
		return -ENOMEM;
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "--json") == 0) {
			c->json = 1;
		} else if (!strcmp(a, "--policy") || !strcmp(a, "--param") || !strcmp(a, "--seed") ||
			   !strcmp(a, "--csv") || !strcmp(a, "--plot") || !strcmp(a, "--reference") ||
			   !strcmp(a, "--trace") || !strcmp(a, "--schedule")) {
			if (!v) {
				fprintf(stderr, "pfs-sim: %s needs a value\n", a);
				return -EINVAL;
			}
			i++;
			if (!strcmp(a, "--policy")) {
				c->policy = v;
			} else if (!strcmp(a, "--param")) {
				if (sim_decide_param_parse(argv[i], &c->params[c->n_params]) < 0) {
					fprintf(stderr, "pfs-sim: --param %s: expected key=number\n",
						v);
					return -EINVAL;
				}
				c->n_params++;
			} else if (!strcmp(a, "--seed")) {
				char *end;
				c->seed = strtoll(v, &end, 10);
				if (*end || c->seed < 0) {
					fprintf(stderr, "pfs-sim: --seed %s: expected an integer >= 0\n",
						v);
					return -EINVAL;
				}
			} else if (!strcmp(a, "--csv")) {
				c->csv = v;
			} else if (!strcmp(a, "--plot")) {
				c->plot = v;
			} else if (!strcmp(a, "--trace")) {
				c->trace = v; /* sim_trace.h: jobs from a trace */
			} else if (!strcmp(a, "--schedule")) {
				/* sim_run.h: pinned to the reference's starts, or EASY */
				if (strcmp(v, "pinned") && strcmp(v, "easy")) {
					fprintf(stderr, "pfs-sim: --schedule %s: expected pinned or "
							"easy\n",
						v);
					return -EINVAL;
				}
				c->easy = !strcmp(v, "easy");
			} else {
				c->reference = v;
			}
		} else if ((a[0] != '-' || !strcmp(a, "-")) && want_file && !c->file) {
			c->file = a;
		} else {
			fprintf(stderr, "pfs-sim: unexpected argument '%s'\n", a);
			return -EINVAL;
		}
	}
	if (!c->policy) {
		fprintf(stderr, "pfs-sim: --policy is required\n");
		return -EINVAL;
	}
	return 0;
}

static int cmd_decide(int argc, char **argv)
{
	cli c = {0};
	sim_decide *d = NULL;
	char *text = NULL, err[512] = "";
	size_t len = 0;
	int rc = EXIT_USAGE;
	FILE *in = stdin;

	if (parse_args(argc, argv, &c, 1))
		goto out;
	const qos_policy_ops *ops = policy_or_die(c.policy);
	if (!ops)
		goto out;
	if (c.file && strcmp(c.file, "-") && !(in = fopen(c.file, "rb"))) {
		fprintf(stderr, "pfs-sim decide: %s: %s\n", c.file, strerror(errno));
		goto out;
	}
	text = read_all(in, &len);
	if (in != stdin)
		fclose(in);
	if (!text) {
		fprintf(stderr, "pfs-sim decide: cannot read the input\n");
		rc = 1;
		goto out;
	}
	int r = sim_decide_parse(text, len, &d, err, sizeof(err));
	if (r) {
		fprintf(stderr, "pfs-sim decide: malformed input: %s\n",
			r == -ENOMEM ? "out of memory" : err);
		rc = r == -ENOMEM ? 1 : EXIT_USAGE;
		goto out;
	}
	if (c.seed >= 0)
		sim_decide_set_seed(d, (uint64_t)c.seed);
	r = sim_decide_run(d, ops, c.params, c.n_params, stdout, err, sizeof(err));
	if (r) {
		fprintf(stderr, "pfs-sim decide: %s\n", r == -ENOMEM ? "out of memory" : err);
		/* Parameters the policy rejects are bad input too. */
		rc = strstr(err, "rejected the parameters") ? EXIT_USAGE : 1;
		goto out;
	}
	rc = 0;
out:
	sim_decide_free(d);
	free(text);
	free(c.params);
	return rc;
}

static int have_gnuplot(void)
{
	const char *path = getenv("PATH");
	char buf[4096];
	if (!path)
		return 0;
	while (*path) {
		size_t n = strcspn(path, ":");
		if (n && n < sizeof(buf) - 9) {
			memcpy(buf, path, n);
			memcpy(buf + n, "/gnuplot", 9);
			if (access(buf, X_OK) == 0)
				return 1;
		}
		path += n + (path[n] == ':');
	}
	return 0;
}

static int plot(const char *csv, const char *png, const char *title)
{
	FILE *g;
	if (!have_gnuplot()) {
		fprintf(stderr, "pfs-sim: gnuplot is not installed; skipping --plot %s\n", png);
		return 0;
	}
	if (strchr(csv, '\'') || strchr(png, '\'') || strchr(title, '\'')) {
		fprintf(stderr, "pfs-sim: --plot: file names must not contain quotes\n");
		return -EINVAL;
	}
	g = popen("gnuplot", "w");
	if (!g) {
		fprintf(stderr, "pfs-sim: cannot run gnuplot: %s\n", strerror(errno));
		return -errno;
	}
	fprintf(g,
		"set terminal pngcairo size 1200,800\nset output '%s'\n"
		"set datafile separator ','\nset key autotitle columnhead\n"
		"set multiplot layout 2,1 title '%s'\n"
		"set ylabel 'bandwidth'\nset xlabel 'days'\n"
		"plot '%s' using ($1/86400):2 with lines title 'effective', "
		"'' using ($1/86400):3 with lines title 'served'\n"
		"set ylabel 'jobs'\n"
		"plot '%s' using ($1/86400):5 with lines title 'in I/O', "
		"'' using ($1/86400):6 with lines title 'running', "
		"'' using ($1/86400):7 with lines title 'queued'\n"
		"unset multiplot\n",
		png, title, csv, csv);
	int st = pclose(g);
	if (st != 0) {
		fprintf(stderr, "pfs-sim: gnuplot failed (status %d)\n", st);
		return -EIO;
	}
	return 0;
}

/* The POFS reference run, on the second core while the policy runs on
 * the first: runs share nothing but the read-only scenario. */
typedef struct ref_job {
	const sim_scenario *sc;
	sim_run_opts opts;
	sim_run_result res;
	char err[512];
	int rc;
} ref_job;

static void *ref_thread(void *arg)
{
	ref_job *r = arg;
	r->rc = sim_run(r->sc, &r->opts, &r->res, r->err, sizeof(r->err));
	return NULL;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static json_t *num_or_null(double v) { return isfinite(v) ? json_real(v) : json_null(); }

static double ratio(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : NAN;
}

/* GIFT's gate statistics (qos_gift_gate_get) for --json. */
/* The headline metrics of one run into o (the run's own keys, and the
 * reference's under "reference"). */
static void put_headline(json_t *o, const sim_run_result *r)
{
	json_object_set_new(o, "mean_io_time", num_or_null(r->m.mean_io_time));
	json_object_set_new(o, "mean_run_time", num_or_null(r->m.mean_run_time));
	json_object_set_new(o, "effective_bandwidth", num_or_null(r->m.effective_bandwidth));
	json_object_set_new(o, "effective_system_bandwidth",
			    num_or_null(r->m.effective_system_bandwidth));
	json_object_set_new(o, "waste_bandwidth", num_or_null(r->waste_bandwidth));
	json_object_set_new(o, "throughput", num_or_null(r->m.throughput));
}

static json_t *gate_json(const sim_run_result *r)
{
	const qos_gift_gate_stats *g = &r->gift_gate;
	json_t *o = json_object(), *x = json_object();
	if (!o || !x) {
		json_decref(o);
		json_decref(x);
		return NULL;
	}
	json_object_set_new(o, "decisions", json_integer((json_int_t)r->gift.decisions));
	json_object_set_new(o, "decisions_with_candidates", json_integer((json_int_t)g->decisions));
	json_object_set_new(o, "csys_blocked_frac", num_or_null(ratio(g->csys_blocked, g->decisions)));
	json_object_set_new(o, "budget_blocked_frac",
			    num_or_null(ratio(g->budget_blocked, g->decisions)));
	json_object_set_new(o, "coupon_decisions_frac",
			    num_or_null(ratio(g->coupon_decisions, g->decisions)));
	json_object_set_new(o, "redeem_decisions_frac",
			    num_or_null(ratio(g->redeem_decisions, g->decisions)));
	json_object_set_new(o, "candidates", json_integer((json_int_t)g->candidates));
	json_object_set_new(o, "in_y", json_integer((json_int_t)g->in_y));
	json_object_set_new(x, "redeemed", json_integer((json_int_t)g->excl_redeemed));
	json_object_set_new(x, "budget", json_integer((json_int_t)g->excl_budget));
	json_object_set_new(x, "c_sys", json_integer((json_int_t)g->excl_csys));
	json_object_set_new(x, "c_i", json_integer((json_int_t)g->excl_ci));
	json_object_set_new(o, "excluded", x);
	json_object_set_new(o, "coupons_issued", json_integer((json_int_t)r->gift.coupons_issued));
	json_object_set_new(o, "redemptions", json_integer((json_int_t)r->gift.redemptions));
	json_object_set_new(o, "regret_periods", json_integer((json_int_t)g->periods));
	json_object_set_new(o, "redemptions_per_period",
			    num_or_null(ratio(r->gift.redemptions, g->periods)));
	json_object_set_new(o, "coupons_per_period",
			    num_or_null(ratio(r->gift.coupons_issued, g->periods)));
	json_object_set_new(o, "worth_issued", num_or_null(r->gift.worth_issued));
	json_object_set_new(o, "worth_redeemed", num_or_null(r->gift.worth_redeemed));
	json_object_set_new(o, "awarded_node_hours", num_or_null(r->gift.awarded_nh));
	json_object_set_new(o, "lp_failures", json_integer((json_int_t)r->gift.lp_failures));
	return o;
}

static void print_table(const sim_scenario *sc, const char *pol, const char *ref,
			const sim_run_result *r, const sim_run_result *rr, double secs, int pinned)
{
	struct {
		const char *name, *unit;
		double a, b;
		int higher_better;
	} rows[] = {
		{"mean_io_time", "s", r->m.mean_io_time, rr->m.mean_io_time, 0},
		{"mean_run_time", "s", r->m.mean_run_time, rr->m.mean_run_time, 0},
		{"effective_bandwidth", "MB/s", r->m.effective_bandwidth,
		 rr->m.effective_bandwidth, 1},
		{"effective_system_bandwidth", "MB/s", r->m.effective_system_bandwidth,
		 rr->m.effective_system_bandwidth, 1},
		{"waste_bandwidth", "MB/s", r->waste_bandwidth, rr->waste_bandwidth, 0},
		{"throughput", "jobs/h", r->m.throughput, rr->m.throughput, 1},
		{"jain", "", r->m.jain, rr->m.jain, 1},
		{"outstanding_node_hours", "node-h", r->m.outstanding_node_hours,
		 rr->m.outstanding_node_hours, 0},
		{"served_bandwidth", "MB/s", r->served_bandwidth, rr->served_bandwidth, 1},
		{"policy_objective", "per decision", r->mean_objective, rr->mean_objective, 1},
	};
	size_t n_apps = 0;
	for (size_t a = 0; a < sc->n_apps; a++)
		n_apps += sim_scen_group(sc, a) == a; /* a trace's jobs of one app count once */
	printf("scenario %s: %zu OSTs, %d nodes, %zu jobs of %zu applications, %.1f days, "
	       "seed %llu\n",
	       sc->name[0] ? sc->name : "(unnamed)", sc->n_osts, sc->nodes, sc->n_jobs,
	       n_apps, sc->duration / 86400.0, (unsigned long long)sc->seed);
	printf("%-36s %12s %12s %9s\n", "metric", pol, ref, "change");
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char name[48], ch[32] = "-";
		if (rows[i].b != 0 && isfinite(rows[i].a) && isfinite(rows[i].b))
			snprintf(ch, sizeof(ch), "%+.2f%%",
				 (rows[i].a - rows[i].b) / rows[i].b * 100);
		snprintf(name, sizeof(name), "%s%s%s%s", rows[i].name, rows[i].unit[0] ? " (" : "",
			 rows[i].unit, rows[i].unit[0] ? ")" : "");
		printf("%-36s %12.6g %12.6g %9s\n", name, rows[i].a, rows[i].b, ch);
	}
	printf("%-36s %12.6g\n", "frac_worse_than_pofs", r->m.frac_worse_than_pofs);
	printf("completed jobs %zu / %zu (reference %zu); decisions %llu; busy %.1f%% of the "
	       "time; allocations over capacity in %llu decisions\n",
	       r->completed, r->n_jobs, rr->completed, (unsigned long long)r->decisions,
	       100.0 * r->busy_time / sc->duration, (unsigned long long)r->overcommits);
	if (r->has_gift) {
		const qos_gift_gate_stats *g = &r->gift_gate;
		printf("GIFT gates: %llu decisions with candidates; c_sys < tau in %.1f%%, regret "
		       "budget full in %.1f%%, coupons issued in %.1f%%, redemptions in %.1f%%; "
		       "%llu coupons, %llu redemptions over %llu regret periods\n",
		       (unsigned long long)g->decisions, 100 * ratio(g->csys_blocked, g->decisions),
		       100 * ratio(g->budget_blocked, g->decisions),
		       100 * ratio(g->coupon_decisions, g->decisions),
		       100 * ratio(g->redeem_decisions, g->decisions),
		       (unsigned long long)r->gift.coupons_issued,
		       (unsigned long long)r->gift.redemptions, (unsigned long long)g->periods);
	}
	if (pinned)
		printf("schedule pinned to the reference's start times: %llu jobs started "
		       "later (their application still ran), at most %d nodes over the pool\n",
		       (unsigned long long)r->pin_delayed, r->pin_overcommit_nodes);
	else
		printf("schedule easy: each run schedules its own jobs (FCFS + EASY)\n");
	printf("simulated in %.1f s wall clock (both runs)\n", secs);
}

static int cmd_run(int argc, char **argv)
{
	cli c = {0};
	sim_scenario sc;
	sim_run_result r, rr;
	char err[512] = "", tmpcsv[] = "/tmp/pfs-sim-XXXXXX";
	const char *csvpath = NULL;
	FILE *csv = NULL;
	int rc = EXIT_USAGE, tmpfd = -1, have_r = 0, have_rr = 0;

	memset(&sc, 0, sizeof(sc));
	memset(&r, 0, sizeof(r));
	memset(&rr, 0, sizeof(rr));
	if (parse_args(argc, argv, &c, 1))
		goto out;
	if (!c.file) {
		fprintf(stderr, "pfs-sim run: a scenario file is required\n");
		goto out;
	}
	const qos_policy_ops *ops = policy_or_die(c.policy);
	if (!ops)
		goto out;
	/* The reference: POFS from qos/, else pfs-sim's equal share. */
	const char *refname = c.reference ? c.reference : "pofs";
	const qos_policy_ops *ref = sim_policy_find(refname);
	if (!ref && !c.reference) {
		ref = &sim_policy_equal;
		fprintf(stderr, "pfs-sim run: qos/ has no 'pofs'; using '%s' as the POFS "
				"reference\n",
			ref->name);
	}
	if (!ref && !(ref = policy_or_die(refname)))
		goto out;
	int r0 = sim_trace_scenario(c.file, c.trace, c.seed, &sc, err, sizeof(err));
	if (r0) {
		if (r0 == -EINVAL)
			fprintf(stderr, "pfs-sim run: %s: %s\n", c.file, err);
		else
			fprintf(stderr, "pfs-sim run: %s\n", r0 == -ENOMEM ? "out of memory" : err);
		/* Malformed or unreadable scenario: the caller's mistake. */
		rc = r0 == -ENOMEM || r0 == -EIO ? 1 : EXIT_USAGE;
		goto out;
	}
	if (c.csv)
		csvpath = c.csv;
	else if (c.plot) {
		if ((tmpfd = mkstemp(tmpcsv)) < 0) {
			fprintf(stderr, "pfs-sim run: %s: %s\n", tmpcsv, strerror(errno));
			rc = 1;
			goto out;
		}
		csvpath = tmpcsv;
	}
	if (csvpath && !(csv = fopen(csvpath, "w"))) {
		fprintf(stderr, "pfs-sim run: %s: %s\n", csvpath, strerror(errno));
		rc = 1;
		goto out;
	}

	double t0 = now_s();
	int self_ref = ref == ops && c.n_params == 0, threaded = 0;
	ref_job *rj = NULL;
	pthread_t th;
	if (!self_ref) {
		if (!(rj = calloc(1, sizeof(*rj)))) {
			rc = 1;
			goto out;
		}
		rj->sc = &sc;
		rj->opts.ops = ref;
		/* pinned: the policy replays the reference's start times, so
		 * the reference runs first; easy: both at once */
		threaded = c.easy && pthread_create(&th, NULL, ref_thread, rj) == 0;
		if (!threaded)
			ref_thread(rj); /* no thread: run it here, one after the other */
	}
	sim_run_opts o = {.ops = ops, .params = c.params, .n_params = c.n_params, .csv = csv};
	if (rj && !c.easy && rj->rc == 0) {
		o.pin = rj->res.jobs;
		o.n_pin = rj->res.n_jobs;
	}
	if (rj && !threaded && rj->rc)
		r0 = 0; /* the reference failed: reported below */
	else
		r0 = sim_run(&sc, &o, &r, err, sizeof(err));
	if (threaded)
		pthread_join(th, NULL);
	have_r = r0 == 0;
	if (rj) {
		rr = rj->res;
		have_rr = rj->rc == 0;
	}
	if (r0) {
		fprintf(stderr, "pfs-sim run: %s\n", err);
		rc = strstr(err, "rejected the parameters") ? EXIT_USAGE : 1;
		free(rj);
		goto out;
	}
	if (rj && rj->rc) {
		fprintf(stderr, "pfs-sim run: reference %s: %s\n", ref->name, rj->err);
		rc = 1;
		free(rj);
		goto out;
	}
	free(rj);
	if (csv) {
		fclose(csv);
		csv = NULL;
	}
	double loss_worse = 0;
	if (self_ref) {
		r.m.frac_worse_than_pofs = 0; /* the run is its own reference */
		rr = r;
		rr.jobs = NULL;
	} else {
		r.m.frac_worse_than_pofs = sim_run_compare_loss(&sc, &r, &rr, &loss_worse);
	}
	double secs = now_s() - t0;

	if (c.json) {
		json_t *j = json_object();
		if (!j) {
			rc = 1;
			goto out;
		}
		put_headline(j, &r);
		json_object_set_new(j, "frac_worse_than_pofs",
				    num_or_null(r.m.frac_worse_than_pofs));
		json_object_set_new(j, "outstanding_node_hours",
				    num_or_null(r.m.outstanding_node_hours));
		json_object_set_new(j, "jain", num_or_null(r.m.jain));
		json_object_set_new(j, "mean_loss_worse", num_or_null(loss_worse));
		json_object_set_new(j, "max_outstanding_node_hours",
				    num_or_null(r.max_outstanding_nh));
		json_object_set_new(j, "schedule",
				    json_string(c.easy || self_ref ? "easy" : "pinned"));
		json_object_set_new(j, "pin_delayed", json_integer((json_int_t)r.pin_delayed));
		json_object_set_new(j, "pin_overcommit_nodes",
				    json_integer(r.pin_overcommit_nodes));
		/* the reference's headline metrics, so one run gives both */
		json_t *rf = json_object();
		if (!rf || json_object_set_new(j, "reference", rf)) {
			json_decref(j);
			rc = 1;
			goto out;
		}
		json_object_set_new(rf, "policy", json_string(ref->name));
		put_headline(rf, &rr);
		if (r.has_gift && json_object_set_new(j, "gift_gate", gate_json(&r))) {
			json_decref(j);
			rc = 1;
			goto out;
		}
		char *s = json_dumps(j, JSON_REAL_PRECISION(10));
		json_decref(j);
		if (!s) {
			rc = 1;
			goto out;
		}
		printf("%s\n", s);
		free(s);
	} else {
		print_table(&sc, ops->name, ref->name, &r, &rr, secs, !c.easy && !self_ref);
	}
	fflush(stdout);
	rc = 0;
	if (c.plot) {
		char title[128];
		snprintf(title, sizeof(title), "pfs-sim %s, policy %s", sc.name, ops->name);
		if (plot(csvpath, c.plot, title))
			rc = 1;
	}
out:
	if (csv)
		fclose(csv);
	if (tmpfd >= 0) {
		close(tmpfd);
		unlink(tmpcsv);
	}
	if (have_r)
		sim_run_result_free(&r);
	if (have_rr)
		sim_run_result_free(&rr);
	sim_scen_free(&sc);
	free(c.params);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "decide"))
		return cmd_decide(argc, argv);
	if (!strcmp(argv[1], "run"))
		return cmd_run(argc, argv);
	if (!strcmp(argv[1], "req"))
		return sim_req_cmd(argc, argv);
	if (!strcmp(argv[1], "report"))
		return sim_report_cmd(argc, argv);
	if (!strcmp(argv[1], "list")) {
		list_policies(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	fprintf(stderr, "pfs-sim: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return EXIT_USAGE;
}
