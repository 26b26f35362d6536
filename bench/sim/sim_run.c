/* sim_run.c — the event-stepped fluid simulation behind `pfs-sim run` (see
 * sim_run.h).  Cost per step is O(jobs in I/O x their OSTs); a decision
 * adds one policy call on a (jobs in I/O) x OSTs instance. */
#include "bench/sim/sim_run.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "bench/sim/sim_fluid.h"
#include "bench/sim/sim_sched.h"

enum { J_PENDING, J_QUEUED, J_COMPUTE, J_IO, J_DONE };

typedef struct job_rt {
	int state;
	int phase;            /* I/O phases completed */
	double t_event;       /* end of the current compute interval */
	double est;           /* run-time estimate */
	double phase_start;
	double phase_alone;   /* one phase alone, s */
	sim_stream *s;        /* [n] while running */
	size_t n;
} job_rt;

typedef struct sim {
	const sim_scenario *sc;
	const sim_run_opts *opts;
	sim_run_result *out;
	job_rt *rt;
	size_t *queue, n_queue;    /* FCFS order */
	size_t *running, n_running;
	size_t *io, n_io;          /* jobs in an I/O phase */
	sim_fluid_job *fj;         /* parallel to io */
	uint8_t *app_busy;         /* an appearance of the app is running */
	unsigned char *ost_mark;   /* scratch for sim_fluid_busy_capacity */
	unsigned *ost_n;           /* scratch for newcomer_share */
	double cap_total;          /* sum of the OSTs' capacities */
	double *app_coupon;        /* last outstanding worth reported */
	double *app_bytes, *app_ost_time; /* for the per-OST rate of an app */
	int free_nodes;
	double *scratch;
	void *state;
	/* decision buffers */
	size_t inst_cap;
	qos_job *jobs;
	uint8_t *active;
	double *usage, *demand, *alloc, *coupons, *records;
	int64_t *tokens;
	const char **ost_ids;
	char (*ost_names)[32];
	/* CSV window */
	double csv_next, w_eff, w_served;
	/* totals */
	double eff_bytes, served_bytes, waste_bytes;
	double objective;
	uint64_t n_objective;
} sim;

/* "k=v, ..." of params into buf, for error messages. */
static const char *param_list(const qos_param *v, size_t n, char *buf, size_t len)
{
	size_t off = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < n && off < len; i++) {
		int w = snprintf(buf + off, len - off, "%s%s=%g", i ? ", " : "", v[i].key,
				 v[i].value);
		if (w < 0)
			break;
		off += (size_t)w;
	}
	return n ? buf : "none";
}

static double outstanding_nh(const sim *S);

static int fail(char *err, size_t len, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int fail(char *err, size_t len, int rc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (err && len)
		vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return rc;
}

static int fluid_flags(const sim_scenario *sc)
{
	return (sc->work_conserving ? SIM_FLUID_WORK_CONSERVING : 0) |
	       (sc->lockstep ? SIM_FLUID_LOCKSTEP : 0);
}

static void list_remove(size_t *list, size_t *n, size_t v)
{
	for (size_t i = 0; i < *n; i++)
		if (list[i] == v) {
			memmove(&list[i], &list[i + 1], (*n - i - 1) * sizeof(*list));
			(*n)--;
			return;
		}
}

static void io_remove(sim *S, size_t j)
{
	for (size_t i = 0; i < S->n_io; i++)
		if (S->io[i] == j) {
			memmove(&S->io[i], &S->io[i + 1], (S->n_io - i - 1) * sizeof(*S->io));
			memmove(&S->fj[i], &S->fj[i + 1], (S->n_io - i - 1) * sizeof(*S->fj));
			S->n_io--;
			return;
		}
}

static void start_compute(sim *S, size_t j, double t)
{
	const sim_jobspec *js = &S->sc->jobs[j];
	job_rt *r = &S->rt[j];
	r->state = J_COMPUTE;
	r->t_event = t + S->sc->apps[js->app].compute_s * js->compute_scale;
}

/* A phase that starts between two decisions (sim_run.h): until the next
 * decision each of its streams may take an equal share of its OST, C_o /
 * (1 + the unfinished streams already there), as an OSS serves a job the
 * controller has not limited yet; where that overcommits the OST,
 * sim_fluid_rates scales every stream there down in proportion.  A decision
 * at the same instant replaces it. */
static void newcomer_share(sim *S, job_rt *r)
{
	memset(S->ost_n, 0, S->sc->n_osts * sizeof(*S->ost_n));
	for (size_t i = 0; i < S->n_io; i++)
		for (size_t k = 0; k < S->fj[i].n; k++)
			if (S->fj[i].s[k].remaining > 0)
				S->ost_n[S->fj[i].s[k].ost]++;
	for (size_t k = 0; k < r->n; k++) {
		int o = r->s[k].ost;
		r->s[k].alloc = S->sc->capacity[o] / (double)(1 + S->ost_n[o]);
	}
}

static void start_io(sim *S, size_t j, double t)
{
	job_rt *r = &S->rt[j];
	r->state = J_IO;
	r->phase_start = t;
	for (size_t k = 0; k < r->n; k++) {
		r->s[k].remaining = r->s[k].total;
		r->s[k].alloc = 0;
		r->s[k].rate = 0;
		r->s[k].moved = 0;
	}
	if (!S->sc->newcomer_wait)
		newcomer_share(S, r);
	S->io[S->n_io] = j;
	S->fj[S->n_io].s = r->s;
	S->fj[S->n_io].n = r->n;
	S->n_io++;
}

/* Start the jobs EASY backfilling picks. */
static int schedule(sim *S, double t)
{
	const sim_scenario *sc = S->sc;
	sim_sched_running *run = NULL;
	sim_sched_waiting *wait = NULL;
	size_t *widx = NULL, *start = NULL, n_wait = 0, n_start = 0;
	uint8_t *seen = NULL;
	int rc = -ENOMEM;

	if (S->n_queue == 0)
		return 0;
	run = malloc((S->n_running + 1) * sizeof(*run));
	wait = malloc(S->n_queue * sizeof(*wait));
	widx = malloc(S->n_queue * sizeof(*widx));
	start = malloc(S->n_queue * sizeof(*start));
	seen = calloc(sc->n_apps, 1);
	if (!run || !wait || !widx || !start || !seen)
		goto out;
	for (size_t i = 0; i < S->n_running; i++) {
		size_t j = S->running[i];
		run[i].nodes = sc->apps[sc->jobs[j].app].nodes;
		run[i].est_end = S->out->jobs[j].start + S->rt[j].est;
	}
	/* One appearance of an application at a time (see sim_run.h). */
	for (size_t q = 0; q < S->n_queue; q++) {
		size_t j = S->queue[q], a = sim_scen_group(sc, sc->jobs[j].app);
		if (S->app_busy[a] || seen[a])
			continue;
		seen[a] = 1;
		wait[n_wait].nodes = sc->apps[sc->jobs[j].app].nodes;
		wait[n_wait].estimate = S->rt[j].est;
		widx[n_wait++] = j;
	}
	rc = sim_sched_easy(t, S->free_nodes, run, S->n_running, wait, n_wait, start, &n_start);
	if (rc)
		goto out;
	for (size_t k = 0; k < n_start; k++) {
		size_t j = widx[start[k]], a = sc->jobs[j].app;
		list_remove(S->queue, &S->n_queue, j);
		S->running[S->n_running++] = j;
		S->free_nodes -= sc->apps[a].nodes;
		S->app_busy[sim_scen_group(sc, a)] = 1;
		S->out->jobs[j].start = t;
		start_compute(S, j, t);
	}
out:
	free(run);
	free(wait);
	free(widx);
	free(start);
	free(seen);
	return rc;
}

/* Pinned schedule (sim_run.h): start the queued jobs whose reference start
 * time has come and whose application is not running.  Returns how many
 * started. */
static int pin_schedule(sim *S, double t)
{
	const sim_scenario *sc = S->sc;
	const sim_job_result *pin = S->opts->pin;
	int started = 0;

	for (size_t q = 0; q < S->n_queue;) {
		size_t j = S->queue[q], a = sc->jobs[j].app, g = sim_scen_group(sc, a);
		if (pin[j].start < 0 || pin[j].start > t + 1e-9 || S->app_busy[g]) {
			q++;
			continue;
		}
		list_remove(S->queue, &S->n_queue, j);
		S->running[S->n_running++] = j;
		S->free_nodes -= sc->apps[a].nodes;
		if (-S->free_nodes > S->out->pin_overcommit_nodes)
			S->out->pin_overcommit_nodes = -S->free_nodes;
		if (t > pin[j].start + 1e-6)
			S->out->pin_delayed++;
		S->app_busy[g] = 1;
		S->out->jobs[j].start = t;
		start_compute(S, j, t);
		started++;
	}
	return started;
}

/* Pinned schedule: the earliest pinned start after t of a queued job. */
static double pin_next(const sim *S, double t, double te)
{
	for (size_t q = 0; q < S->n_queue; q++) {
		double p = S->opts->pin[S->queue[q]].start;
		if (p > t + 1e-9 && p < te)
			te = p;
	}
	return te;
}

static int ensure_inst(sim *S, size_t rows)
{
	size_t n = S->sc->n_osts;
	if (rows <= S->inst_cap)
		return 0;
	size_t cap = rows * 2;
	free(S->jobs);
	free(S->active);
	free(S->usage);
	free(S->demand);
	free(S->alloc);
	free(S->coupons);
	free(S->records);
	free(S->tokens);
	S->jobs = calloc(cap, sizeof(*S->jobs));
	S->active = calloc(cap * n, 1);
	S->usage = calloc(cap * n, sizeof(double));
	S->demand = calloc(cap * n, sizeof(double));
	S->alloc = calloc(cap * n, sizeof(double));
	S->coupons = calloc(cap, sizeof(double));
	S->records = calloc(cap * n, sizeof(double));
	S->tokens = calloc(cap * n, sizeof(int64_t));
	S->inst_cap = cap;
	if (!S->jobs || !S->active || !S->usage || !S->demand || !S->alloc || !S->coupons ||
	    !S->records || !S->tokens) {
		S->inst_cap = 0;
		return -ENOMEM;
	}
	return 0;
}

/* One decision instance at time t. */
static int decide(sim *S, double t, char *err, size_t errlen)
{
	const sim_scenario *sc = S->sc;
	size_t n = sc->n_osts, rows = 0;
	double dt = sc->decision_interval;
	int rc;

	if ((rc = ensure_inst(S, S->n_io)))
		return rc;
	memset(S->active, 0, S->n_io * n);
	memset(S->usage, 0, S->n_io * n * sizeof(double));
	memset(S->demand, 0, S->n_io * n * sizeof(double));
	memset(S->alloc, 0, S->n_io * n * sizeof(double));
	for (size_t i = 0; i < S->n_io; i++) {
		size_t j = S->io[i];
		const sim_app *a = &sc->apps[sc->jobs[j].app];
		job_rt *r = &S->rt[j];
		qos_job *q = &S->jobs[rows];
		memset(q, 0, sizeof(*q));
		snprintf(q->id, sizeof(q->id), "%s", a->id);
		q->nodes = a->nodes;
		q->priority = a->priority;
		q->throttle_friendly = a->throttle_friendly;
		for (size_t k = 0; k < r->n; k++) {
			size_t ix = rows * n + (size_t)r->s[k].ost;
			S->usage[ix] = r->s[k].moved / dt;
			r->s[k].moved = 0;
			if (r->s[k].remaining <= 0)
				continue;
			S->active[ix] = 1;
			double d = r->s[k].remaining / dt, cap = sc->capacity[r->s[k].ost];
			S->demand[ix] = d < cap ? d : cap;
		}
		S->coupons[rows] = NAN;
		rows++;
	}
	for (size_t i = 0; i < rows * n; i++) {
		S->records[i] = NAN;
		S->tokens[i] = INT64_MIN;
	}
	qos_instance in = {
		.n_osts = n, .n_jobs = rows, .ost_ids = S->ost_ids, .capacity = sc->capacity,
		.jobs = S->jobs, .active = S->active, .usage = S->usage, .demand = S->demand,
		.period = dt, .now = t,
	};
	qos_result res = {.alloc = S->alloc, .coupons = S->coupons, .records = S->records,
			  .tokens = S->tokens, .effective = NAN};
	rc = S->opts->ops->decide(S->state, &in, &res);
	if (rc)
		return fail(err, errlen, -EINVAL, "policy %s failed at t=%.0f s (%s)",
			    S->opts->ops->name, t, strerror(-rc));
	S->out->decisions++;
	if (isfinite(res.effective)) {
		S->objective += res.effective;
		S->n_objective++;
	}
	for (size_t i = 0; i < rows; i++) {
		job_rt *r = &S->rt[S->io[i]];
		for (size_t k = 0; k < r->n; k++) {
			double v = S->alloc[i * n + (size_t)r->s[k].ost];
			r->s[k].alloc = isfinite(v) && v > 0 ? v : 0;
		}
		if (!isnan(S->coupons[i]))
			S->app_coupon[sim_scen_group(sc, sc->jobs[S->io[i]].app)] =
				S->coupons[i];
	}
	if (rows && !isnan(S->coupons[0])) {
		/* GIFT sec. 4: outstanding node-hours "at any time" */
		double nh = outstanding_nh(S);
		if (nh > S->out->max_outstanding_nh)
			S->out->max_outstanding_nh = nh;
	}
	int over = sim_fluid_rates(S->fj, S->n_io, sc->capacity, n, fluid_flags(sc),
				   S->scratch);
	if (over > 0)
		S->out->overcommits++;
	return 0;
}

static double app_rate(const sim *S, size_t a)
{
	if (S->app_ost_time[a] > 0 && S->app_bytes[a] > 0)
		return S->app_bytes[a] / S->app_ost_time[a];
	double m = 0;
	for (size_t o = 0; o < S->sc->n_osts; o++)
		m += S->sc->capacity[o] / (double)S->sc->n_osts;
	return m;
}

static double outstanding_nh(const sim *S)
{
	double nh = 0;
	for (size_t a = 0; a < S->sc->n_apps; a++) {
		const sim_app *p = &S->sc->apps[a];
		if (S->app_coupon[a] <= 0)
			continue;
		/* coupon.h: worth is capacity units summed over the job's OSTs
		 * for one interval; at the app's per-OST rate over its n_osts
		 * that is this many seconds of extra I/O on all its nodes. */
		nh += p->nodes * S->app_coupon[a] * S->sc->decision_interval /
		      (app_rate(S, a) * p->n_osts) / 3600.0;
	}
	return nh;
}

static void csv_rows(sim *S, double t)
{
	FILE *f = S->opts->csv;
	if (!f)
		return;
	while (S->csv_next <= t + 1e-9) {
		double w = S->sc->csv_interval, cap = 0, coup = 0;
		for (size_t o = 0; o < S->sc->n_osts; o++)
			cap += S->sc->capacity[o];
		for (size_t a = 0; a < S->sc->n_apps; a++)
			coup += S->app_coupon[a];
		fprintf(f, "%.0f,%.6g,%.6g,%.6g,%zu,%zu,%zu,%d,%.6g,%.6g\n", S->csv_next,
			S->w_eff / w, S->w_served / w, cap, S->n_io, S->n_running, S->n_queue,
			S->sc->nodes - S->free_nodes, coup, outstanding_nh(S));
		S->w_eff = S->w_served = 0;
		S->csv_next += w;
	}
}

static void finish_metrics(sim *S)
{
	const sim_scenario *sc = S->sc;
	sim_run_result *o = S->out;
	double io = 0, run = 0, js = 0, js2 = 0;
	size_t n = 0;
	for (size_t j = 0; j < o->n_jobs; j++) {
		const sim_job_result *r = &o->jobs[j];
		if (!r->done)
			continue;
		n++;
		io += r->io_time;
		run += r->end - r->start;
		double x = r->io_time > 0 ? r->io_alone / r->io_time : 1.0;
		js += x;
		js2 += x * x;
	}
	o->completed = n;
	o->m.mean_io_time = n ? io / (double)n : NAN;
	o->m.mean_run_time = n ? run / (double)n : NAN;
	o->m.throughput = (double)n / (sc->duration / 3600.0);
	o->m.effective_bandwidth = o->busy_time > 0 ? S->eff_bytes / o->busy_time : 0;
	o->served_bandwidth = o->busy_time > 0 ? S->served_bytes / o->busy_time : 0;
	o->waste_bandwidth = o->busy_time > 0 ? S->waste_bytes / o->busy_time : 0;
	/* GIFT sec. 4: overall system bandwidth minus the wasted bandwidth */
	o->m.effective_system_bandwidth = o->busy_time > 0 ? S->cap_total - o->waste_bandwidth : 0;
	o->m.jain = n && js2 > 0 ? js * js / ((double)n * js2) : NAN;
	o->m.outstanding_node_hours = outstanding_nh(S);
	o->m.frac_worse_than_pofs = NAN;
	o->mean_objective = S->n_objective ? S->objective / (double)S->n_objective : NAN;
}

static int sim_init(sim *S, const sim_scenario *sc)
{
	size_t nj = sc->n_jobs, n = sc->n_osts;
	S->rt = calloc(nj, sizeof(*S->rt));
	S->queue = malloc(nj * sizeof(size_t));
	S->running = malloc(nj * sizeof(size_t));
	S->io = malloc(nj * sizeof(size_t));
	S->fj = malloc(nj * sizeof(*S->fj));
	S->app_busy = calloc(sc->n_apps, 1);
	S->app_coupon = calloc(sc->n_apps, sizeof(double));
	S->app_bytes = calloc(sc->n_apps, sizeof(double));
	S->app_ost_time = calloc(sc->n_apps, sizeof(double));
	S->scratch = malloc(2 * n * sizeof(double));
	S->ost_mark = malloc(n ? n : 1);
	S->ost_n = malloc((n ? n : 1) * sizeof(*S->ost_n));
	S->ost_ids = malloc(n * sizeof(*S->ost_ids));
	S->ost_names = malloc(n * sizeof(*S->ost_names));
	S->out->jobs = calloc(nj, sizeof(*S->out->jobs));
	if (!S->rt || !S->queue || !S->running || !S->io || !S->fj || !S->app_busy ||
	    !S->app_coupon || !S->app_bytes || !S->app_ost_time || !S->scratch || !S->ost_mark ||
	    !S->ost_n ||
	    !S->ost_ids || !S->ost_names || !S->out->jobs)
		return -ENOMEM;
	S->out->n_jobs = nj;
	S->cap_total = 0;
	for (size_t o = 0; o < n; o++)
		S->cap_total += sc->capacity[o];
	for (size_t o = 0; o < n; o++) {
		snprintf(S->ost_names[o], sizeof(S->ost_names[o]), "ost%zu", o);
		S->ost_ids[o] = S->ost_names[o];
	}
	for (size_t j = 0; j < nj; j++) {
		const sim_jobspec *js = &sc->jobs[j];
		const sim_app *a = &sc->apps[js->app];
		job_rt *r = &S->rt[j];
		double *bytes = malloc((size_t)a->n_osts * sizeof(double));
		r->s = calloc((size_t)a->n_osts, sizeof(*r->s));
		if (!bytes || !r->s) {
			free(bytes);
			return -ENOMEM;
		}
		r->n = (size_t)a->n_osts;
		sim_scen_phase_bytes(sc, js, bytes);
		r->phase_alone = 0;
		for (size_t k = 0; k < r->n; k++) {
			r->s[k].ost = js->osts[k];
			r->s[k].total = bytes[k];
			double alone = bytes[k] / sc->capacity[js->osts[k]];
			if (alone > r->phase_alone)
				r->phase_alone = alone;
		}
		free(bytes);
		r->est = sc->estimate_factor * a->phases * (a->compute_s * js->compute_scale +
							    r->phase_alone);
		r->state = J_PENDING;
		/* per application: a trace's jobs of one app count as one */
		S->out->jobs[j].app = sim_scen_group(sc, js->app);
		S->out->jobs[j].submit = js->submit;
		S->out->jobs[j].start = S->out->jobs[j].end = -1;
	}
	S->free_nodes = sc->nodes;
	S->csv_next = sc->csv_interval;
	return 0;
}

static void sim_fini(sim *S)
{
	if (S->rt)
		for (size_t j = 0; j < S->sc->n_jobs; j++)
			free(S->rt[j].s);
	free(S->rt);
	free(S->queue);
	free(S->running);
	free(S->io);
	free(S->fj);
	free(S->app_busy);
	free(S->app_coupon);
	free(S->app_bytes);
	free(S->app_ost_time);
	free(S->scratch);
	free(S->ost_mark);
	free(S->ost_n);
	free(S->ost_ids);
	free(S->ost_names);
	free(S->jobs);
	free(S->active);
	free(S->usage);
	free(S->demand);
	free(S->alloc);
	free(S->coupons);
	free(S->records);
	free(S->tokens);
}

/* Handle everything due at t; *changed if the scheduler must run.
 * Returns the number of state changes made. */
static int events(sim *S, double t, size_t *next_arrival, int *changed)
{
	int acted = 0;
	const sim_scenario *sc = S->sc;
	sim_run_result *o = S->out;

	/* Phases whose slowest stream just ended. */
	for (size_t i = 0; i < S->n_io;) {
		size_t j = S->io[i];
		job_rt *r = &S->rt[j];
		if (!sim_fluid_done(&S->fj[i])) {
			i++;
			continue;
		}
		size_t a = sc->jobs[j].app, ga = sim_scen_group(sc, a);
		double len = t - r->phase_start;
		acted++;
		o->jobs[j].io_time += len;
		o->jobs[j].io_alone += r->phase_alone;
		for (size_t k = 0; k < r->n; k++)
			S->app_bytes[ga] += r->s[k].total;
		S->app_ost_time[ga] += len * (double)r->n;
		io_remove(S, j);
		r->phase++;
		if (r->phase >= sc->apps[a].phases) {
			r->state = J_DONE;
			o->jobs[j].end = t;
			o->jobs[j].done = 1;
			list_remove(S->running, &S->n_running, j);
			S->free_nodes += sc->apps[a].nodes;
			S->app_busy[ga] = 0;
			*changed = 1;
		} else {
			start_compute(S, j, t);
		}
	}
	/* Compute intervals that ended. */
	for (size_t i = 0; i < S->n_running; i++) {
		size_t j = S->running[i];
		if (S->rt[j].state == J_COMPUTE && S->rt[j].t_event <= t) {
			start_io(S, j, t);
			acted++;
		}
	}
	while (*next_arrival < sc->n_jobs && sc->jobs[*next_arrival].submit <= t) {
		S->rt[*next_arrival].state = J_QUEUED;
		S->queue[S->n_queue++] = (*next_arrival)++;
		*changed = 1;
		acted++;
	}
	return acted;
}

int sim_run(const sim_scenario *sc, const sim_run_opts *opts, sim_run_result *out, char *err,
	    size_t errlen)
{
	sim S;
	int rc, created = 0;
	size_t next_arrival = 0;
	double t = 0, next_dec = 0, iv = sc->decision_interval;

	memset(&S, 0, sizeof(S));
	memset(out, 0, sizeof(*out));
	S.sc = sc;
	S.opts = opts;
	S.out = out;
	if (opts->pin && opts->n_pin != sc->n_jobs)
		return fail(err, errlen, -EINVAL,
			    "pinned schedule of %zu jobs for a scenario of %zu jobs", opts->n_pin,
			    sc->n_jobs);
	if ((rc = sim_init(&S, sc)))
		goto out;
	qos_params params = {.v = opts->params, .n = opts->n_params, .seed = sc->seed};
	rc = opts->ops->create(&params, &S.state);
	if (rc) {
		char list[256];
		fail(err, errlen, rc, "policy %s rejected the parameters (given: %s): %s",
		     opts->ops->name, param_list(opts->params, opts->n_params, list, sizeof(list)),
		     strerror(-rc));
		goto out;
	}
	created = 1;
	if (opts->csv)
		fprintf(opts->csv, "time_s,effective,served,capacity,io_jobs,running_jobs,"
				   "queued_jobs,busy_nodes,outstanding_coupons,"
				   "outstanding_node_hours\n");

	while (t < sc->duration) {
		/* Until nothing more happens at t: a job may start, begin I/O
		 * at once (no compute interval), finish an empty phase, end
		 * and free nodes for another, all at the same instant. */
		for (;;) {
			int changed = 0, acted = events(&S, t, &next_arrival, &changed);
			if (opts->pin)
				acted += pin_schedule(&S, t);
			else if (changed && (rc = schedule(&S, t)))
				goto out;
			if (!acted && !changed)
				break;
		}
		if (t >= next_dec - 1e-9) {
			if (S.n_io && (rc = decide(&S, t, err, errlen)))
				goto out;
			while (next_dec <= t + 1e-9)
				next_dec += iv;
		}
		if ((rc = sim_fluid_rates(S.fj, S.n_io, sc->capacity, sc->n_osts,
					  fluid_flags(sc), S.scratch)) < 0)
			goto out;

		double te = sc->duration;
		if (next_arrival < sc->n_jobs && sc->jobs[next_arrival].submit < te)
			te = sc->jobs[next_arrival].submit;
		for (size_t i = 0; i < S.n_running; i++) {
			job_rt *r = &S.rt[S.running[i]];
			if (r->state == J_COMPUTE && r->t_event < te)
				te = r->t_event;
		}
		if (opts->pin)
			te = pin_next(&S, t, te);
		if (S.n_io) {
			double f = t + sim_fluid_next_finish(S.fj, S.n_io);
			if (f < te)
				te = f;
			if (next_dec < te)
				te = next_dec;
		} else if (te > next_dec) {
			/* Nothing to decide while no I/O is in flight: the
			 * next decision is the first interval boundary at or
			 * after the next event. */
			next_dec = ceil(te / iv) * iv;
		}
		if (te < t)
			te = t;
		double dt = te - t, eff = 0, served = 0;
		for (size_t i = 0; i < S.n_io; i++) {
			double e, s;
			sim_fluid_bandwidth(&S.fj[i], &e, &s);
			eff += e;
			served += s;
		}
		if (S.n_io) {
			/* sec. 2 waste: what the OSTs serving I/O do not
			 * turn into in-step progress */
			double w = sim_fluid_busy_capacity(S.fj, S.n_io, sc->capacity,
							   sc->n_osts, S.ost_mark) - eff;
			out->busy_time += dt;
			S.waste_bytes += (w > 0 ? w : 0) * dt;
			S.eff_bytes += eff * dt;
			S.served_bytes += served * dt;
			S.w_eff += eff * dt;
			S.w_served += served * dt;
		}
		sim_fluid_advance(S.fj, S.n_io, dt);
		t = te;
		csv_rows(&S, t);
	}
	finish_metrics(&S);
	if (opts->ops == &qos_policy_gift) {
		/* GIFT's own counters (issue 9: how often its gates block) */
		out->has_gift = 1;
		qos_gift_stats_get(S.state, &out->gift);
		qos_gift_gate_get(S.state, &out->gift_gate);
	}
	rc = 0;
out:
	if (created)
		opts->ops->destroy(S.state);
	sim_fini(&S);
	if (rc) {
		if (rc == -ENOMEM)
			fail(err, errlen, rc, "out of memory");
		sim_run_result_free(out);
	}
	return rc;
}

void sim_run_result_free(sim_run_result *r)
{
	if (!r)
		return;
	free(r->jobs);
	memset(r, 0, sizeof(*r));
}

double sim_run_compare(const sim_scenario *sc, const sim_run_result *r,
		       const sim_run_result *ref)
{
	return sim_run_compare_loss(sc, r, ref, NULL);
}

double sim_run_compare_loss(const sim_scenario *sc, const sim_run_result *r,
			    const sim_run_result *ref, double *mean_loss)
{
	double *mine = calloc(sc->n_apps, sizeof(double)), *theirs = calloc(sc->n_apps,
									    sizeof(double));
	uint8_t *seen = calloc(sc->n_apps, 1);
	double frac = NAN;
	size_t apps = 0, worse = 0;
	double loss = 0;

	if (mean_loss)
		*mean_loss = NAN;
	if (!mine || !theirs || !seen || r->n_jobs != ref->n_jobs)
		goto out;
	for (size_t j = 0; j < r->n_jobs; j++) {
		if (!r->jobs[j].done || !ref->jobs[j].done)
			continue;
		size_t a = r->jobs[j].app;
		mine[a] += r->jobs[j].io_time;
		theirs[a] += ref->jobs[j].io_time;
		seen[a] = 1;
	}
	for (size_t a = 0; a < sc->n_apps; a++) {
		if (!seen[a])
			continue;
		apps++;
		/* A relative margin so float noise in equal runs is not "worse". */
		if (mine[a] > theirs[a] * (1 + 1e-6) + 1e-6) {
			worse++;
			loss += mine[a] / theirs[a] - 1.0;
		}
	}
	if (apps)
		frac = (double)worse / (double)apps;
	if (mean_loss)
		*mean_loss = worse ? loss / (double)worse : 0.0;
out:
	free(mine);
	free(theirs);
	free(seen);
	return frac;
}
