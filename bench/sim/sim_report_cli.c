/* sim_report_cli.c — the `pfs-sim report` subcommand: runs a scenario under
 * the reference (POFS) and each policy on the same jobs, optionally a
 * parameter sweep of the first ("focus") policy and the scenario at several
 * contention levels, on a small pool of threads (sim_run is reentrant and
 * the scenarios are read-only), and prints one JSON object with GIFT's
 * evaluation figures (sim_report.h); --csv PREFIX also writes the tables
 * bench/plot_sim.sh draws.  The contract is in bench/sim/README.md. */
#include "bench/sim/sim_report.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/sim/sim_decide.h"
#include "bench/sim/sim_policy.h"
#include "bench/sim/sim_trace.h"

#define EXIT_USAGE 2
#define MAX_POL 16
#define MAX_SWEEP 4
#define MAX_VALUES 16

static void report_usage(FILE *f)
{
	fprintf(f,
		"usage: pfs-sim report SCENARIO.json [--policies P,P,...] [--reference P]\n"
		"                      [--param k=v ...] [--seed N] [--days D] [--states B]\n"
		"                      [--sweep KEY=v1,v2,... ...] [--contention c1,c2,...]\n"
		"                      [--threads T] [--csv PREFIX] [--trace FILE]\n"
		"                      [--schedule pinned|easy]\n"
		"Runs the reference and each policy on SCENARIO's jobs and prints one JSON\n"
		"object: per-application I/O-time improvement CDF, applications worse than\n"
		"the reference, effective bandwidth per system state, sweeps of the first\n"
		"policy's parameters and contention levels (every job's I/O volume x c).\n");
}

typedef struct task {
	const sim_scenario *sc;
	const qos_policy_ops *ops;
	qos_param params[24];
	size_t n_params;
	int want_csv;
	char *csv;
	size_t csv_len;
	sim_run_result res;
	int rc, have;
	char err[512];
	const struct task *pin;     /* replay this reference's start times
				     * (sim_run.h, pinned schedule), or NULL */
} task;

typedef struct pool {
	task **t;
	size_t n, next;
	pthread_mutex_t mu;
} pool;

static void run_task(task *t)
{
	FILE *f = NULL;
	sim_run_opts o = {.ops = t->ops, .params = t->params, .n_params = t->n_params};

	if (t->pin) {
		o.pin = t->pin->res.jobs;
		o.n_pin = t->pin->res.n_jobs;
	}

	if (t->want_csv) {
		f = open_memstream(&t->csv, &t->csv_len);
		if (!f) {
			t->rc = -ENOMEM;
			snprintf(t->err, sizeof(t->err), "out of memory");
			return;
		}
		o.csv = f;
	}
	t->rc = sim_run(t->sc, &o, &t->res, t->err, sizeof(t->err));
	t->have = t->rc == 0;
	if (f && fclose(f) && !t->rc) {
		t->rc = -ENOMEM;
		snprintf(t->err, sizeof(t->err), "cannot keep the time series");
	}
}

static void *worker(void *arg)
{
	pool *p = arg;
	for (;;) {
		pthread_mutex_lock(&p->mu);
		size_t i = p->next < p->n ? p->next++ : p->n;
		pthread_mutex_unlock(&p->mu);
		if (i >= p->n)
			return NULL;
		run_task(p->t[i]);
	}
}

static void run_all(task **t, size_t n, int threads)
{
	pool p = {.t = t, .n = n};
	pthread_t th[16];
	int started = 0;

	pthread_mutex_init(&p.mu, NULL);
	for (int i = 1; i < threads && i < 16; i++) {
		if (pthread_create(&th[started], NULL, worker, &p))
			break;
		started++;
	}
	worker(&p);
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	pthread_mutex_destroy(&p.mu);
}

typedef struct sweep {
	const char *key;
	double v[MAX_VALUES];
	size_t n;
} sweep;

typedef struct args {
	const char *file, *reference, *csv, *trace;
	const char *pol[MAX_POL];
	size_t n_pol;
	qos_param params[16];
	size_t n_params;
	long long seed;
	double days;
	long states;
	int threads;
	int easy;    /* --schedule easy: every run schedules its own jobs */
	sweep sw[MAX_SWEEP];
	size_t n_sw;
	double levels[MAX_VALUES];
	size_t n_levels;
	char *polbuf;
} args;

/* "a,b,c" into numbers; -EINVAL on a bad one or too many. */
static int parse_numbers(const char *s, double *v, size_t max, size_t *n)
{
	*n = 0;
	while (*s) {
		char *e;
		double x = strtod(s, &e);
		if (e == s || !isfinite(x) || (*e && *e != ',') || *n >= max)
			return -EINVAL;
		v[(*n)++] = x;
		s = *e ? e + 1 : e;
	}
	return *n ? 0 : -EINVAL;
}

static int parse_args(int argc, char **argv, args *a)
{
	a->seed = -1;
	a->states = 4;
	a->threads = 2;
	a->reference = "pofs";
	for (int i = 2; i < argc; i++) {
		const char *k = argv[i];
		char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (k[0] != '-' && !a->file) {
			a->file = k;
			continue;
		}
		if (!v || k[0] != '-') {
			fprintf(stderr, "pfs-sim report: %s %s\n", k,
				k[0] == '-' ? "needs a value" : ": unexpected argument");
			return -EINVAL;
		}
		i++;
		char *end = NULL;
		if (!strcmp(k, "--policies")) {
			free(a->polbuf);
			if (!(a->polbuf = strdup(v)))
				return -ENOMEM;
			a->n_pol = 0;
			for (char *sv, *p = strtok_r(a->polbuf, ",", &sv); p;
			     p = strtok_r(NULL, ",", &sv)) {
				if (a->n_pol == MAX_POL) {
					fprintf(stderr, "pfs-sim report: at most %d policies\n",
						MAX_POL);
					return -EINVAL;
				}
				a->pol[a->n_pol++] = p;
			}
		} else if (!strcmp(k, "--reference")) {
			a->reference = v;
		} else if (!strcmp(k, "--schedule")) {
			if (strcmp(v, "pinned") && strcmp(v, "easy"))
				goto bad;
			a->easy = !strcmp(v, "easy");
		} else if (!strcmp(k, "--csv")) {
			a->csv = v;
		} else if (!strcmp(k, "--trace")) {
			a->trace = v; /* the jobs; the scenario gives the cluster */
		} else if (!strcmp(k, "--param")) {
			if (a->n_params == 16 ||
			    sim_decide_param_parse(v, &a->params[a->n_params]) < 0) {
				fprintf(stderr, "pfs-sim report: --param %s: expected key=number "
						"(at most 16)\n", v);
				return -EINVAL;
			}
			a->n_params++;
		} else if (!strcmp(k, "--seed")) {
			a->seed = strtoll(v, &end, 10);
			if (*end || a->seed < 0)
				goto bad;
		} else if (!strcmp(k, "--days")) {
			a->days = strtod(v, &end);
			if (*end || !(a->days > 0))
				goto bad;
		} else if (!strcmp(k, "--states")) {
			a->states = strtol(v, &end, 10);
			if (*end || a->states < 1 || a->states >= SIM_REPORT_MAX_STATES)
				goto bad;
		} else if (!strcmp(k, "--threads")) {
			a->threads = (int)strtol(v, &end, 10);
			if (*end || a->threads < 1 || a->threads > 16)
				goto bad;
		} else if (!strcmp(k, "--contention")) {
			if (parse_numbers(v, a->levels, MAX_VALUES, &a->n_levels))
				goto bad;
			for (size_t j = 0; j < a->n_levels; j++)
				if (!(a->levels[j] > 0))
					goto bad;
		} else if (!strcmp(k, "--sweep")) {
			char *eq = strchr(v, '=');
			if (!eq || eq == v || a->n_sw == MAX_SWEEP)
				goto bad;
			*eq = '\0';
			sweep *s = &a->sw[a->n_sw];
			s->key = v;
			if (parse_numbers(eq + 1, s->v, MAX_VALUES, &s->n)) {
				*eq = '=';
				goto bad;
			}
			a->n_sw++;
		} else {
			fprintf(stderr, "pfs-sim report: unknown option '%s'\n", k);
			return -EINVAL;
		}
		continue;
bad:
		fprintf(stderr, "pfs-sim report: %s %s: bad value\n", k, v);
		return -EINVAL;
	}
	if (!a->file) {
		fprintf(stderr, "pfs-sim report: a scenario file is required\n");
		return -EINVAL;
	}
	if (!a->n_pol) {
		static const char *const def[] = {"gift", "bsip", "mbw", "tsa", "esa", "tmf", "rnd"};
		for (size_t i = 0; i < sizeof(def) / sizeof(def[0]); i++)
			a->pol[a->n_pol++] = def[i];
	}
	return 0;
}

static json_t *num(double v) { return isfinite(v) ? json_real(v) : json_null(); }

static double rel(double a, double b) { return b != 0 && isfinite(a) && isfinite(b) ? a / b - 1 : NAN; }

/* The run's metrics and their change relative to ref (a / ref - 1). */
static json_t *metrics_json(const sim_scenario *sc, const sim_run_result *r,
			    const sim_run_result *ref)
{
	json_t *o = json_object();
	double loss = 0, frac = ref ? sim_run_compare_loss(sc, r, ref, &loss) : NAN;
	if (!o)
		return NULL;
	int bad = json_object_set_new(o, "mean_io_time", num(r->m.mean_io_time));
	bad |= json_object_set_new(o, "mean_run_time", num(r->m.mean_run_time));
	bad |= json_object_set_new(o, "effective_bandwidth", num(r->m.effective_bandwidth));
	bad |= json_object_set_new(o, "effective_system_bandwidth",
				   num(r->m.effective_system_bandwidth));
	bad |= json_object_set_new(o, "throughput", num(r->m.throughput));
	bad |= json_object_set_new(o, "jain", num(r->m.jain));
	bad |= json_object_set_new(o, "completed", json_integer((json_int_t)r->completed));
	bad |= json_object_set_new(o, "outstanding_node_hours",
				   num(r->m.outstanding_node_hours));
	bad |= json_object_set_new(o, "max_outstanding_node_hours", num(r->max_outstanding_nh));
	if (ref) {
		bad |= json_object_set_new(o, "io_time_change",
					   num(rel(r->m.mean_io_time, ref->m.mean_io_time)));
		bad |= json_object_set_new(o, "run_time_change",
					   num(rel(r->m.mean_run_time, ref->m.mean_run_time)));
		bad |= json_object_set_new(o, "effective_bandwidth_change",
					   num(rel(r->m.effective_bandwidth,
						   ref->m.effective_bandwidth)));
		bad |= json_object_set_new(o, "effective_system_bandwidth_change",
					   num(rel(r->m.effective_system_bandwidth,
						   ref->m.effective_system_bandwidth)));
		bad |= json_object_set_new(o, "throughput_change",
					   num(rel(r->m.throughput, ref->m.throughput)));
		bad |= json_object_set_new(o, "frac_worse_than_reference", num(frac));
		bad |= json_object_set_new(o, "mean_loss_worse", num(loss));
	}
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static int set(json_t *o, const char *k, json_t *v)
{
	return !v || json_object_set_new(o, k, v) ? -ENOMEM : 0;
}

static FILE *csv_open(const char *prefix, const char *what)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s-%s.csv", prefix, what);
	FILE *f = fopen(path, "w");
	if (!f)
		fprintf(stderr, "pfs-sim report: %s: %s\n", path, strerror(errno));
	return f;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A copy of sc whose jobs write c times the bytes (jobs[] is new, the rest
 * shared read-only); free with free(copy->jobs). */
static int scale_io(const sim_scenario *sc, double c, sim_scenario *copy)
{
	*copy = *sc;
	copy->jobs = malloc((sc->n_jobs ? sc->n_jobs : 1) * sizeof(*sc->jobs));
	if (!copy->jobs)
		return -ENOMEM;
	for (size_t j = 0; j < sc->n_jobs; j++) {
		copy->jobs[j] = sc->jobs[j];
		copy->jobs[j].io_scale *= c;
	}
	return 0;
}

static task *new_task(task **all, size_t *n, const sim_scenario *sc, const qos_policy_ops *ops,
		      const args *a, int focus, int want_csv)
{
	task *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->sc = sc;
	t->ops = ops;
	t->want_csv = want_csv;
	if (focus) {
		memcpy(t->params, a->params, a->n_params * sizeof(a->params[0]));
		t->n_params = a->n_params;
	}
	all[(*n)++] = t;
	return t;
}

static void set_param(task *t, const char *key, double v)
{
	for (size_t i = 0; i < t->n_params; i++)
		if (!strcmp(t->params[i].key, key)) {
			t->params[i].value = v;
			return;
		}
	t->params[t->n_params++] = (qos_param){.key = key, .value = v};
}

int sim_report_cmd(int argc, char **argv)
{
	args a;
	sim_scenario sc, scaled[MAX_VALUES];
	task **tasks = NULL, *base[MAX_POL + 1] = {0};
	task *swt[MAX_SWEEP][MAX_VALUES] = {{0}}, *ct[MAX_VALUES][2] = {{0}};
	const qos_policy_ops *ops[MAX_POL + 1];
	size_t nt = 0, n_scaled = 0;
	json_t *out = NULL;
	char err[512] = "";
	int rc = EXIT_USAGE;

	memset(&a, 0, sizeof(a));
	memset(&sc, 0, sizeof(sc));
	if (argc > 2 && (!strcmp(argv[2], "-h") || !strcmp(argv[2], "--help"))) {
		report_usage(stdout);
		return 0;
	}
	int r0 = parse_args(argc, argv, &a);
	if (r0) {
		if (r0 == -EINVAL)
			report_usage(stderr);
		rc = r0 == -ENOMEM ? 1 : EXIT_USAGE;
		goto out;
	}
	if (!(ops[0] = sim_policy_find(a.reference))) {
		fprintf(stderr, "pfs-sim report: unknown reference policy '%s'\n", a.reference);
		goto out;
	}
	for (size_t i = 0; i < a.n_pol; i++)
		if (!(ops[i + 1] = sim_policy_find(a.pol[i]))) {
			fprintf(stderr, "pfs-sim report: unknown policy '%s' (see pfs-sim list)\n",
				a.pol[i]);
			goto out;
		}
	r0 = sim_trace_scenario(a.file, a.trace, a.seed, &sc, err, sizeof(err));
	if (r0) {
		fprintf(stderr, "pfs-sim report: %s: %s\n", a.file,
			r0 == -ENOMEM ? "out of memory" : err);
		rc = r0 == -ENOMEM || r0 == -EIO ? 1 : EXIT_USAGE;
		goto out;
	}
	if (a.days > 0 && a.days * 86400.0 < sc.duration)
		sc.duration = a.days * 86400.0;

	rc = 1;
	size_t cap = 1 + a.n_pol + MAX_SWEEP * MAX_VALUES + 2 * MAX_VALUES;
	if (!(tasks = calloc(cap, sizeof(*tasks))))
		goto out;
	for (size_t i = 0; i <= a.n_pol; i++)
		if (!(base[i] = new_task(tasks, &nt, &sc, ops[i], &a, i == 1, 1)))
			goto out;
	for (size_t s = 0; s < a.n_sw; s++)
		for (size_t v = 0; v < a.sw[s].n; v++) {
			if (!(swt[s][v] = new_task(tasks, &nt, &sc, ops[1], &a, 1, 0)))
				goto out;
			set_param(swt[s][v], a.sw[s].key, a.sw[s].v[v]);
		}
	for (size_t l = 0; l < a.n_levels; l++) {
		if (a.levels[l] == 1.0)
			continue; /* the base runs */
		if (scale_io(&sc, a.levels[l], &scaled[n_scaled]))
			goto out;
		const sim_scenario *s = &scaled[n_scaled++];
		if (!(ct[l][0] = new_task(tasks, &nt, s, ops[0], &a, 0, 0)) ||
		    !(ct[l][1] = new_task(tasks, &nt, s, ops[1], &a, 1, 0)))
			goto out;
	}

	/* Pinned (default): the references run first and every other run
	 * replays its reference's start times (sim_run.h). */
	task *refs[MAX_VALUES + 1];
	size_t n_refs = 0, n_rest = 0;
	refs[n_refs++] = base[0];
	for (size_t l = 0; l < a.n_levels; l++)
		if (ct[l][0]) {
			refs[n_refs++] = ct[l][0];
			ct[l][1]->pin = a.easy ? NULL : ct[l][0];
		}
	for (size_t i = 0; i < nt; i++) {
		int is_ref = 0;
		for (size_t k = 0; k < n_refs; k++)
			is_ref |= tasks[i] == refs[k];
		if (is_ref)
			continue;
		if (!a.easy && !tasks[i]->pin)
			tasks[i]->pin = base[0];
		tasks[n_rest++] = tasks[i];
	}
	for (size_t k = 0; k < n_refs; k++)
		tasks[n_rest + k] = refs[k];
	double t0 = now_s();
	if (a.easy) {
		run_all(tasks, nt, a.threads);
	} else {
		int refs_ok = 1;
		run_all(&tasks[n_rest], n_refs, a.threads);
		for (size_t k = 0; k < n_refs; k++)
			refs_ok &= refs[k]->rc == 0;
		if (refs_ok) /* else the failed reference is reported below */
			run_all(tasks, n_rest, a.threads);
	}
	double wall = now_s() - t0;
	for (size_t i = 0; i < nt; i++)
		if (tasks[i]->rc) {
			fprintf(stderr, "pfs-sim report: %s: %s\n", tasks[i]->ops->name,
				tasks[i]->err);
			rc = strstr(tasks[i]->err, "rejected the parameters") ? EXIT_USAGE : 1;
			goto out;
		}

	/* Base comparison. */
	sim_report_series ref_series;
	if (sim_report_series_parse(base[0]->csv, base[0]->csv_len, &ref_series)) {
		fprintf(stderr, "pfs-sim report: cannot read the reference time series\n");
		goto out;
	}
	out = json_object();
	json_t *pols = json_object();
	FILE *fs = NULL, *fsum = NULL;
	sim_report_state states[MAX_POL][SIM_REPORT_MAX_STATES];
	int n_states = 0;
	int bad = !out || !pols;
	char def[256];
	snprintf(def, sizeof(def),
		 "windows of %g s bucketed by the %s run's applications in an I/O phase "
		 "at the window's end (idle, then up to %ld quantile buckets)",
		 sc.csv_interval, ops[0]->name, a.states);
	bad |= set(out, "scenario", json_string(sc.name));
	bad |= set(out, "seed", json_integer((json_int_t)sc.seed));
	bad |= set(out, "duration_s", json_real(sc.duration));
	bad |= set(out, "jobs", json_integer((json_int_t)sc.n_jobs));
	bad |= set(out, "reference", json_string(ops[0]->name));
	bad |= set(out, "state_definition", json_string(def));
	bad |= set(out, "reference_metrics", metrics_json(&sc, &base[0]->res, NULL));
	bad |= set(out, "policies", json_incref(pols));
	if (a.csv) {
		fsum = csv_open(a.csv, "summary");
		fs = csv_open(a.csv, "states");
		if (!fsum || !fs)
			bad = 1;
		else
			fprintf(fsum, "policy,io_time_impr,run_time_impr,eff_bw_gain,"
				      "throughput_gain,frac_worse,mean_loss,max_loss,"
				      "frac_improved_20pct,p50_impr,esb_gain\n");
	}
	for (size_t i = 1; !bad && i <= a.n_pol; i++) {
		task *t = base[i];
		sim_report_apps ap;
		sim_report_series ser;
		json_t *p = json_object();
		if (!p || json_object_set_new(pols, ops[i]->name, p) ||
		    sim_report_apps_compare(&sc, &t->res, &base[0]->res, &ap)) {
			bad = 1;
			break;
		}
		if (sim_report_series_parse(t->csv, t->csv_len, &ser)) {
			sim_report_apps_free(&ap);
			bad = 1;
			break;
		}
		n_states = sim_report_states(&ref_series, &ser, (size_t)a.states, states[i - 1]);
		sim_report_series_free(&ser);
		bad |= n_states < 0;
		bad |= set(p, "metrics", metrics_json(&sc, &t->res, &base[0]->res));
		bad |= set(p, "improvement", sim_report_cdf_json(&ap));
		bad |= set(p, "worse", sim_report_worse_json(&ap));
		if (n_states > 0)
			bad |= set(p, "states", sim_report_states_json(states[i - 1],
								       (size_t)n_states));
		if (fsum) {
			const sim_metrics *m = &t->res.m, *rm = &base[0]->res.m;
			size_t over = 0;
			for (size_t k = 0; k < ap.n; k++)
				over += ap.impr[k] > 0.2;
			fprintf(fsum, "%s,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g\n",
				ops[i]->name, -rel(m->mean_io_time, rm->mean_io_time),
				-rel(m->mean_run_time, rm->mean_run_time),
				rel(m->effective_bandwidth, rm->effective_bandwidth),
				rel(m->throughput, rm->throughput),
				ap.n ? (double)ap.worse / (double)ap.n : NAN, ap.mean_loss,
				ap.max_loss, ap.n ? (double)over / (double)ap.n : NAN,
				sim_report_quantile(ap.impr, ap.n, 0.5),
				rel(m->effective_system_bandwidth, rm->effective_system_bandwidth));
			FILE *fc = csv_open(a.csv, ops[i]->name);
			if (!fc) {
				bad = 1;
			} else {
				fprintf(fc, "improvement,cum_frac\n");
				for (size_t k = 0; k < ap.n; k++)
					fprintf(fc, "%.6g,%.6g\n", ap.impr[k],
						(double)(k + 1) / (double)ap.n);
				fclose(fc);
			}
		}
		sim_report_apps_free(&ap);
	}
	sim_report_series_free(&ref_series);
	if (fs && !bad && n_states > 0) {
		fprintf(fs, "state,lo,hi,windows,ref_effective");
		for (size_t i = 1; i <= a.n_pol; i++)
			fprintf(fs, ",%s", ops[i]->name);
		fprintf(fs, "\n");
		for (int s = 0; s < n_states; s++) {
			fprintf(fs, "%d,%g,%g,%zu,%.6g", s, states[0][s].lo, states[0][s].hi,
				states[0][s].windows, states[0][s].ref_eff);
			for (size_t i = 1; i <= a.n_pol; i++)
				fprintf(fs, ",%.6g", states[i - 1][s].gain);
			fprintf(fs, "\n");
		}
	}
	if (fs)
		fclose(fs);
	if (fsum)
		fclose(fsum);
	json_decref(pols);

	/* Sweeps of the focus policy, each point against the base reference. */
	json_t *sws = json_object();
	bad |= set(out, "sweeps", json_incref(sws));
	for (size_t s = 0; !bad && s < a.n_sw; s++) {
		json_t *arr = json_array();
		FILE *f = NULL;
		char what[128];
		bad |= set(sws, a.sw[s].key, arr);
		if (a.csv) {
			snprintf(what, sizeof(what), "sweep-%s", a.sw[s].key);
			if (!(f = csv_open(a.csv, what)))
				bad = 1;
			else
				fprintf(f, "value,io_time_impr,run_time_impr,eff_bw_gain,"
					   "throughput_gain,frac_worse,mean_loss,max_outstanding_nh,"
					   "esb_gain\n");
		}
		for (size_t v = 0; !bad && v < a.sw[s].n; v++) {
			const sim_run_result *r = &swt[s][v]->res, *rr = &base[0]->res;
			json_t *pt = metrics_json(&sc, r, rr);
			bad |= !pt || set(pt, "value", json_real(a.sw[s].v[v]));
			bad |= !pt || json_array_append_new(arr, pt);
			if (f && pt) {
				double loss = 0, frac = sim_run_compare_loss(&sc, r, rr, &loss);
				fprintf(f, "%g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g\n", a.sw[s].v[v],
					-rel(r->m.mean_io_time, rr->m.mean_io_time),
					-rel(r->m.mean_run_time, rr->m.mean_run_time),
					rel(r->m.effective_bandwidth, rr->m.effective_bandwidth),
					rel(r->m.throughput, rr->m.throughput), frac, loss,
					r->max_outstanding_nh,
					rel(r->m.effective_system_bandwidth,
					    rr->m.effective_system_bandwidth));
			}
		}
		if (f)
			fclose(f);
	}
	json_decref(sws);

	/* Contention levels: the focus policy against the reference, both on
	 * the scaled scenario. */
	if (!bad && a.n_levels) {
		json_t *lv = json_array();
		FILE *f = NULL;
		bad |= set(out, "contention", json_pack("{s:s, s:s, s:O}", "knob",
							"io_scale: every job's I/O volume x level",
							"policy", ops[1]->name, "levels", lv));
		if (a.csv) {
			if (!(f = csv_open(a.csv, "contention")))
				bad = 1;
			else
				fprintf(f, "level,io_time_impr,run_time_impr,eff_bw_gain,"
					   "throughput_gain,frac_worse,ref_mean_io_time,"
					   "ref_completed,esb_gain\n");
		}
		size_t si = 0;
		for (size_t l = 0; !bad && l < a.n_levels; l++) {
			const sim_scenario *s = a.levels[l] == 1.0 ? &sc : &scaled[si++];
			const sim_run_result *rr = ct[l][0] ? &ct[l][0]->res : &base[0]->res;
			const sim_run_result *r = ct[l][1] ? &ct[l][1]->res : &base[1]->res;
			json_t *pt = json_object();
			bad |= !pt || json_array_append_new(lv, pt);
			bad |= !pt || set(pt, "level", json_real(a.levels[l]));
			bad |= !pt || set(pt, "reference", metrics_json(s, rr, NULL));
			bad |= !pt || set(pt, ops[1]->name, metrics_json(s, r, rr));
			if (f && !bad) {
				double frac = sim_run_compare(s, r, rr);
				fprintf(f, "%g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%zu,%.6g\n", a.levels[l],
					-rel(r->m.mean_io_time, rr->m.mean_io_time),
					-rel(r->m.mean_run_time, rr->m.mean_run_time),
					rel(r->m.effective_bandwidth, rr->m.effective_bandwidth),
					rel(r->m.throughput, rr->m.throughput), frac,
					rr->m.mean_io_time, rr->completed,
					rel(r->m.effective_system_bandwidth,
					    rr->m.effective_system_bandwidth));
			}
		}
		json_decref(lv);
		if (f)
			fclose(f);
	}
	bad |= set(out, "wall_s", json_real(wall));
	bad |= set(out, "threads", json_integer(a.threads));
	bad |= set(out, "schedule", json_string(a.easy ? "easy" : "pinned"));
	if (bad) {
		fprintf(stderr, "pfs-sim report: out of memory or cannot write --csv files\n");
		goto out;
	}
	char *txt = json_dumps(out, JSON_REAL_PRECISION(8));
	if (!txt)
		goto out;
	printf("%s\n", txt);
	free(txt);
	fprintf(stderr, "pfs-sim report: %zu runs in %.1f s wall clock on %d threads\n", nt, wall,
		a.threads);
	rc = fflush(stdout) ? 1 : 0;
out:
	json_decref(out);
	for (size_t i = 0; i < nt; i++) {
		if (tasks[i]->have)
			sim_run_result_free(&tasks[i]->res);
		free(tasks[i]->csv);
		free(tasks[i]);
	}
	free(tasks);
	for (size_t i = 0; i < n_scaled; i++)
		free(scaled[i].jobs);
	sim_scen_free(&sc);
	free(a.polbuf);
	return rc;
}
