/* sim_scen.c — scenario JSON and the GIFT-shaped workload generator (see
 * sim_scen.h). */
#include "bench/sim/sim_scen.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/file.h"
#include "bench/sim/sim_json.h"
#include "bench/sim/sim_rng.h"

/* Number at obj.key in [lo, hi], def if absent. */
static int num(json_t *obj, const char *key, double def, double lo, double hi, double *out,
	       const char *where, char *err, size_t len)
{
	json_t *v = json_object_get(obj, key);
	if (!v) {
		*out = def;
		return 0;
	}
	if (!json_is_number(v))
		return sim_json_fail(err, len, "%s.%s: expected a number", where, key);
	*out = json_number_value(v);
	if (!(*out >= lo && *out <= hi))
		return sim_json_fail(err, len, "%s.%s: %g is out of range [%g, %g]", where, key, *out, lo,
			    hi);
	return 0;
}

static int inum(json_t *obj, const char *key, int def, int lo, int hi, int *out,
		const char *where, char *err, size_t len)
{
	double d;
	int rc = num(obj, key, def, lo, hi, &d, where, err, len);
	if (rc)
		return rc;
	if (d != floor(d))
		return sim_json_fail(err, len, "%s.%s: expected an integer", where, key);
	*out = (int)d;
	return 0;
}

/* A [lo, hi] pair with lo <= hi, both in [min, max]. */
static int range(json_t *obj, const char *key, double dlo, double dhi, double min, double max,
		 double *lo, double *hi, const char *where, char *err, size_t len)
{
	json_t *v = json_object_get(obj, key);
	if (!v) {
		*lo = dlo;
		*hi = dhi;
		return 0;
	}
	if (!json_is_array(v) || json_array_size(v) != 2 ||
	    !json_is_number(json_array_get(v, 0)) || !json_is_number(json_array_get(v, 1)))
		return sim_json_fail(err, len, "%s.%s: expected [low, high]", where, key);
	*lo = json_number_value(json_array_get(v, 0));
	*hi = json_number_value(json_array_get(v, 1));
	if (!(*lo >= min && *hi <= max && *lo <= *hi))
		return sim_json_fail(err, len, "%s.%s: need %g <= low <= high <= %g", where, key, min, max);
	return 0;
}

#define SIM_CLASSES 3

typedef struct gen_cfg {
	int apps;
	double shape, scale, zipf;
	double nodes_lo, nodes_hi, osts_lo, osts_hi, phases_lo, phases_hi;
	int ranks_per_node, stripe;
	double io_cls[SIM_CLASSES][2], cmp_cls[SIM_CLASSES][2];
	double variation, tf_frac;
	/* Table 1 row 3 (GB per I/O phase) and the I/O fraction of run time
	 * (sec. 1: 15-40%); each used only when its key is given */
	int use_size, use_frac;
	double size_cls[SIM_CLASSES][2];
	double frac_lo, frac_hi;
} gen_cfg;

static int classes(json_t *g, const char *key, double cls[SIM_CLASSES][2], char *err,
		   size_t len)
{
	json_t *v = json_object_get(g, key);
	if (!v)
		return 0;
	if (!json_is_array(v) || json_array_size(v) != SIM_CLASSES)
		return sim_json_fail(err, len, "generator.%s: expected %d [low, high] classes", key,
			    SIM_CLASSES);
	for (size_t c = 0; c < SIM_CLASSES; c++) {
		json_t *p = json_array_get(v, c);
		if (!json_is_array(p) || json_array_size(p) != 2 ||
		    !json_is_number(json_array_get(p, 0)) || !json_is_number(json_array_get(p, 1)))
			return sim_json_fail(err, len, "generator.%s[%zu]: expected [low, high]", key, c);
		cls[c][0] = json_number_value(json_array_get(p, 0));
		cls[c][1] = json_number_value(json_array_get(p, 1));
		if (!(cls[c][0] > 0 && cls[c][0] <= cls[c][1]))
			return sim_json_fail(err, len, "generator.%s[%zu]: need 0 < low <= high", key, c);
	}
	return 0;
}

static int parse_gen(json_t *g, const sim_scenario *sc, gen_cfg *c, char *err, size_t len)
{
	static const char *const known[] = {
		"apps", "arrival_gamma", "popularity_zipf", "nodes", "ranks_per_node",
		"osts_per_app", "stripe_count", "io_phase_s", "io_interval_s", "phases",
		"variation", "throttle_friendly", "io_size_gb", "io_fraction", NULL};
	/* Table 1 rows 1 and 2 (seconds). */
	static const double io_def[SIM_CLASSES][2] = {{10, 60}, {60, 900}, {900, 1800}};
	static const double cmp_def[SIM_CLASSES][2] = {{60, 300}, {300, 1800}, {1800, 10800}};
	const char *w = "generator";
	json_t *arr;
	int rc;

	if (!json_is_object(g))
		return sim_json_fail(err, len, "generator: expected an object");
	memcpy(c->io_cls, io_def, sizeof(io_def));
	memcpy(c->cmp_cls, cmp_def, sizeof(cmp_def));
	if ((rc = sim_json_check_keys(g, known, w, err, len)) ||
	    (rc = inum(g, "apps", 500, 1, 1000000, &c->apps, w, err, len)) ||
	    (rc = num(g, "popularity_zipf", 0.5, 0, 10, &c->zipf, w, err, len)) ||
	    (rc = range(g, "nodes", 1, 64, 1, sc->nodes, &c->nodes_lo, &c->nodes_hi, w, err, len)) ||
	    (rc = inum(g, "ranks_per_node", 4, 1, 1024, &c->ranks_per_node, w, err, len)) ||
	    (rc = range(g, "osts_per_app", 2, 32, 1, (double)sc->n_osts, &c->osts_lo, &c->osts_hi,
			w, err, len)) ||
	    (rc = inum(g, "stripe_count", 0, 0, (int)sc->n_osts, &c->stripe, w, err, len)) ||
	    (rc = classes(g, "io_phase_s", c->io_cls, err, len)) ||
	    (rc = classes(g, "io_interval_s", c->cmp_cls, err, len)) ||
	    (rc = range(g, "phases", 2, 12, 1, 1e6, &c->phases_lo, &c->phases_hi, w, err, len)) ||
	    (rc = num(g, "variation", 0.05, 0, 0.5, &c->variation, w, err, len)) ||
	    (rc = num(g, "throttle_friendly", 1.0, 0, 1, &c->tf_frac, w, err, len)) ||
	    (rc = classes(g, "io_size_gb", c->size_cls, err, len)) ||
	    (rc = range(g, "io_fraction", 0.15, 0.40, 0.01, 0.99, &c->frac_lo, &c->frac_hi, w,
			err, len)))
		return rc;
	c->use_size = json_object_get(g, "io_size_gb") != NULL;
	c->use_frac = json_object_get(g, "io_fraction") != NULL;
	c->shape = 2.0;
	c->scale = 600.0;
	if ((arr = json_object_get(g, "arrival_gamma"))) {
		static const char *const ak[] = {"shape", "scale", NULL};
		if (!json_is_object(arr))
			return sim_json_fail(err, len, "generator.arrival_gamma: expected {shape, scale}");
		if ((rc = sim_json_check_keys(arr, ak, "generator.arrival_gamma", err, len)) ||
		    (rc = num(arr, "shape", 2.0, 1e-3, 1e6, &c->shape, "generator.arrival_gamma",
			      err, len)) ||
		    (rc = num(arr, "scale", 600.0, 1e-6, 1e12, &c->scale,
			      "generator.arrival_gamma", err, len)))
			return rc;
	}
	return 0;
}

/* n distinct OSTs out of n_osts (partial Fisher-Yates). */
static int pick_osts(sim_rng *r, size_t n_osts, int n, int *out)
{
	int *perm = malloc(n_osts * sizeof(*perm));
	if (!perm)
		return -ENOMEM;
	for (size_t i = 0; i < n_osts; i++)
		perm[i] = (int)i;
	for (int i = 0; i < n; i++) {
		size_t k = (size_t)sim_rng_int(r, i, (long)n_osts - 1);
		int t = perm[i];
		perm[i] = perm[k];
		perm[k] = t;
		out[i] = perm[i];
	}
	free(perm);
	return 0;
}

static double vary(sim_rng *r, double variation)
{
	double x = 1.0 + variation * sim_rng_normal(r);
	return x < 0.5 ? 0.5 : x;
}

static int grow_jobs(sim_scenario *sc, size_t *cap)
{
	if (sc->n_jobs < *cap)
		return 0;
	size_t n = *cap ? *cap * 2 : 64;
	sim_jobspec *j = realloc(sc->jobs, n * sizeof(*j));
	if (!j)
		return -ENOMEM;
	sc->jobs = j;
	*cap = n;
	return 0;
}

static int generate(sim_scenario *sc, const gen_cfg *c, size_t *jobs_cap)
{
	sim_rng ra, rj, rt;
	double mean_cap = 0, *cum = NULL;
	size_t base = sc->n_apps;
	int rc = 0;

	for (size_t o = 0; o < sc->n_osts; o++)
		mean_cap += sc->capacity[o] / (double)sc->n_osts;
	sim_rng_seed(&ra, sc->seed * 4 + 1);
	sim_rng_seed(&rt, sc->seed * 4 + 2);
	sim_rng_seed(&rj, sc->seed * 4 + 3);

	sim_app *apps = realloc(sc->apps, (base + (size_t)c->apps) * sizeof(*apps));
	if (!apps)
		return -ENOMEM;
	sc->apps = apps;
	cum = malloc((size_t)c->apps * sizeof(*cum));
	if (!cum)
		return -ENOMEM;
	double wsum = 0;
	for (int a = 0; a < c->apps; a++) {
		sim_app *p = &sc->apps[base + (size_t)a];
		memset(p, 0, sizeof(*p));
		snprintf(p->id, sizeof(p->id), "app%03d", a);
		p->nodes = (int)floor(sim_rng_loguniform(&ra, c->nodes_lo, c->nodes_hi + 0.999));
		if (p->nodes > sc->nodes)
			p->nodes = sc->nodes;
		if (p->nodes < 1)
			p->nodes = 1;
		p->ranks = p->nodes * c->ranks_per_node;
		p->n_osts = (int)floor(sim_rng_loguniform(&ra, c->osts_lo, c->osts_hi + 0.999));
		if (p->n_osts > (int)sc->n_osts)
			p->n_osts = (int)sc->n_osts;
		/* stripe_count 0: every rank's file spans the run's whole OST
		 * set, so each OST carries the same bytes (GIFT's model: all
		 * requests of a job get the same bandwidth on all its OSTs). */
		p->stripe = c->stripe ? c->stripe : p->n_osts;
		if (p->n_osts > p->ranks * p->stripe)
			p->n_osts = p->ranks * p->stripe;
		if (p->n_osts < p->stripe)
			p->n_osts = p->stripe;
		p->phases = (int)sim_rng_int(&ra, (long)c->phases_lo, (long)c->phases_hi);
		/* Table 1: stand-alone phase length by class, turned into bytes
		 * at the mean OST capacity on all of the run's OSTs. */
		int ci = (int)sim_rng_int(&ra, 0, SIM_CLASSES - 1);
		double io_s;
		if (c->use_size) {
			/* Table 1 row 3: the bytes one run writes (all ranks,
			 * all phases; GB = 1000 MB), split evenly over its
			 * phases; the stand-alone phase length follows from
			 * the app's OSTs */
			double gb = sim_rng_loguniform(&ra, c->size_cls[ci][0], c->size_cls[ci][1]) /
				    p->phases;
			p->io_per_rank = gb * 1000.0 / p->ranks;
			io_s = gb * 1000.0 / (mean_cap * p->n_osts);
		} else {
			io_s = sim_rng_loguniform(&ra, c->io_cls[ci][0], c->io_cls[ci][1]);
			p->io_per_rank = io_s * mean_cap * p->n_osts / p->ranks;
		}
		if (c->use_frac) {
			/* I/O takes a fraction f of the stand-alone run time
			 * (f uniform in io_fraction, sec. 1: 15-40%): the
			 * compute interval is io_s (1 - f) / f */
			double f = c->frac_lo + (c->frac_hi - c->frac_lo) * sim_rng_uniform(&ra);
			p->compute_s = io_s * (1.0 - f) / f;
		} else {
			ci = (int)sim_rng_int(&ra, 0, SIM_CLASSES - 1);
			p->compute_s = sim_rng_loguniform(&ra, c->cmp_cls[ci][0], c->cmp_cls[ci][1]);
		}
		p->priority = 1;
		p->throttle_friendly = sim_rng_uniform(&ra) < c->tf_frac;
		/* Zipf popularity: app a is chosen with weight (a + 1)^-s. */
		wsum += pow((double)a + 1.0, -c->zipf);
		cum[a] = wsum;
	}
	sc->n_apps = base + (size_t)c->apps;

	for (double t = sim_rng_gamma(&rt, c->shape, c->scale); t < sc->duration;
	     t += sim_rng_gamma(&rt, c->shape, c->scale)) {
		double u = sim_rng_uniform(&rj) * wsum;
		size_t lo = 0, hi = (size_t)c->apps - 1;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (cum[mid] < u)
				lo = mid + 1;
			else
				hi = mid;
		}
		if ((rc = grow_jobs(sc, jobs_cap)))
			goto out;
		sim_jobspec *j = &sc->jobs[sc->n_jobs];
		memset(j, 0, sizeof(*j));
		j->app = base + lo;
		j->submit = t;
		j->io_scale = vary(&rj, c->variation);
		j->compute_scale = vary(&rj, c->variation);
		j->osts = malloc((size_t)sc->apps[j->app].n_osts * sizeof(int));
		if (!j->osts) {
			rc = -ENOMEM;
			goto out;
		}
		sc->n_jobs++;
		if ((rc = pick_osts(&rj, sc->n_osts, sc->apps[j->app].n_osts, j->osts)))
			goto out;
	}
out:
	free(cum);
	return rc;
}

static int parse_osts(json_t *v, sim_scenario *sc, char *err, size_t len)
{
	if (json_is_object(v)) {
		static const char *const known[] = {"count", "capacity", NULL};
		int n, rc;
		double cap;
		if ((rc = sim_json_check_keys(v, known, "osts", err, len)) ||
		    (rc = inum(v, "count", 0, 1, 100000, &n, "osts", err, len)) ||
		    (rc = num(v, "capacity", 102, 1e-9, 1e15, &cap, "osts", err, len)))
			return rc;
		if (!json_object_get(v, "count"))
			return sim_json_fail(err, len, "osts: missing count");
		sc->n_osts = (size_t)n;
		if (!(sc->capacity = malloc(sc->n_osts * sizeof(double))))
			return -ENOMEM;
		for (size_t o = 0; o < sc->n_osts; o++)
			sc->capacity[o] = cap;
		return 0;
	}
	if (!json_is_array(v) || json_array_size(v) == 0)
		return sim_json_fail(err, len, "osts: expected {\"count\", \"capacity\"} or an "
					       "array of capacities");
	sc->n_osts = json_array_size(v);
	if (!(sc->capacity = malloc(sc->n_osts * sizeof(double))))
		return -ENOMEM;
	for (size_t o = 0; o < sc->n_osts; o++) {
		json_t *e = json_array_get(v, o);
		if (!json_is_number(e) || json_number_value(e) <= 0)
			return sim_json_fail(err, len, "osts[%zu]: expected a capacity > 0", o);
		sc->capacity[o] = json_number_value(e);
	}
	return 0;
}

static int parse_apps(json_t *v, sim_scenario *sc, char *err, size_t len)
{
	static const char *const known[] = {"id", "nodes", "ranks", "n_osts", "stripe_count",
					    "phases", "io_mb_per_rank", "compute_s", "priority",
					    "throttle_friendly", NULL};
	char w[64];
	if (!v)
		return 0;
	if (!json_is_array(v))
		return sim_json_fail(err, len, "apps: expected an array");
	sc->n_apps = json_array_size(v);
	if (!(sc->apps = calloc(sc->n_apps ? sc->n_apps : 1, sizeof(*sc->apps))))
		return -ENOMEM;
	for (size_t a = 0; a < sc->n_apps; a++) {
		json_t *e = json_array_get(v, a), *id, *tf;
		sim_app *p = &sc->apps[a];
		int rc;
		snprintf(w, sizeof(w), "apps[%zu]", a);
		if (!json_is_object(e))
			return sim_json_fail(err, len, "%s: expected an object", w);
		id = json_object_get(e, "id");
		if ((rc = sim_json_check_keys(e, known, w, err, len)))
			return rc;
		if (!json_is_string(id) || json_string_length(id) == 0 ||
		    json_string_length(id) >= QOS_ID_MAX)
			return sim_json_fail(err, len, "%s.id: expected a string of 1..%d characters", w,
				    QOS_ID_MAX - 1);
		snprintf(p->id, sizeof(p->id), "%s", json_string_value(id));
		for (size_t b = 0; b < a; b++)
			if (strcmp(sc->apps[b].id, p->id) == 0)
				return sim_json_fail(err, len, "%s.id: duplicate application '%s'", w, p->id);
		if ((rc = inum(e, "nodes", 1, 1, sc->nodes, &p->nodes, w, err, len)) ||
		    (rc = inum(e, "ranks", p->nodes, 1, 1 << 24, &p->ranks, w, err, len)) ||
		    (rc = inum(e, "stripe_count", 1, 1, (int)sc->n_osts, &p->stripe, w, err, len)) ||
		    (rc = inum(e, "n_osts", 1, 1, (int)sc->n_osts, &p->n_osts, w, err, len)) ||
		    (rc = inum(e, "phases", 1, 1, 1 << 24, &p->phases, w, err, len)) ||
		    (rc = num(e, "io_mb_per_rank", 0, 0, 1e15, &p->io_per_rank, w, err, len)) ||
		    (rc = num(e, "compute_s", 0, 0, 1e12, &p->compute_s, w, err, len)) ||
		    (rc = num(e, "priority", 1, 0, 1e9, &p->priority, w, err, len)))
			return rc;
		if (p->n_osts > p->ranks * p->stripe || p->n_osts < p->stripe)
			return sim_json_fail(err, len, "%s: need stripe_count <= n_osts <= ranks * stripe_count",
				    w);
		tf = json_object_get(e, "throttle_friendly");
		if (tf && !json_is_boolean(tf))
			return sim_json_fail(err, len, "%s.throttle_friendly: expected true or false", w);
		p->throttle_friendly = tf ? json_is_true(tf) : 1;
	}
	return 0;
}

static int parse_jobs(json_t *v, sim_scenario *sc, sim_rng *r, size_t *cap, char *err,
		      size_t len)
{
	static const char *const known[] = {"app", "submit", "osts", "io_scale",
					    "compute_scale", NULL};
	char w[64];
	int rc;
	if (!v)
		return 0;
	if (!json_is_array(v))
		return sim_json_fail(err, len, "jobs: expected an array");
	for (size_t k = 0; k < json_array_size(v); k++) {
		json_t *e = json_array_get(v, k), *app, *osts;
		size_t a;
		snprintf(w, sizeof(w), "jobs[%zu]", k);
		if (!json_is_object(e))
			return sim_json_fail(err, len, "%s: expected an object", w);
		if ((rc = sim_json_check_keys(e, known, w, err, len)))
			return rc;
		app = json_object_get(e, "app");
		if (!json_is_string(app))
			return sim_json_fail(err, len, "%s.app: expected an application id", w);
		for (a = 0; a < sc->n_apps; a++)
			if (strcmp(sc->apps[a].id, json_string_value(app)) == 0)
				break;
		if (a == sc->n_apps)
			return sim_json_fail(err, len, "%s.app: unknown application '%s'", w,
				    json_string_value(app));
		if ((rc = grow_jobs(sc, cap)))
			return rc;
		sim_jobspec *j = &sc->jobs[sc->n_jobs];
		memset(j, 0, sizeof(*j));
		j->app = a;
		int n = sc->apps[a].n_osts;
		if (!(j->osts = malloc((size_t)n * sizeof(int))))
			return -ENOMEM;
		sc->n_jobs++;
		if ((rc = num(e, "submit", 0, 0, 1e12, &j->submit, w, err, len)) ||
		    (rc = num(e, "io_scale", 1, 0, 1e6, &j->io_scale, w, err, len)) ||
		    (rc = num(e, "compute_scale", 1, 0, 1e6, &j->compute_scale, w, err, len)))
			return rc;
		osts = json_object_get(e, "osts");
		if (!osts) {
			if ((rc = pick_osts(r, sc->n_osts, n, j->osts)))
				return rc;
			continue;
		}
		if (!json_is_array(osts) || json_array_size(osts) != (size_t)n)
			return sim_json_fail(err, len, "%s.osts: expected %d OST indices (the app's n_osts)", w,
				    n);
		for (int i = 0; i < n; i++) {
			json_t *o = json_array_get(osts, (size_t)i);
			if (!json_is_integer(o) || json_integer_value(o) < 0 ||
			    json_integer_value(o) >= (json_int_t)sc->n_osts)
				return sim_json_fail(err, len, "%s.osts[%d]: expected an OST index in [0, %zu)",
					    w, i, sc->n_osts);
			j->osts[i] = (int)json_integer_value(o);
			for (int p = 0; p < i; p++)
				if (j->osts[p] == j->osts[i])
					return sim_json_fail(err, len, "%s.osts[%d]: duplicate OST %d", w, i,
						    j->osts[i]);
		}
	}
	return 0;
}

static int scen_parse(const char *text, size_t len, long long seed_override, sim_scenario *sc,
		      char *err, size_t errlen, int cluster_only)
{
	static const char *const known[] = {"name", "seed", "duration_s", "duration_days",
					    "decision_interval", "csv_interval",
					    "estimate_factor", "work_conserving", "nodes", "osts",
					    "generator", "apps", "jobs", "description", "progress",
					    "newcomers", NULL};
	const char *w = "scenario";
	json_error_t jerr;
	json_t *root, *v;
	size_t jobs_cap = 0;
	double d;
	int rc;

	memset(sc, 0, sizeof(*sc));
	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root)
		return sim_json_fail(err, errlen, "line %d column %d: %s", jerr.line, jerr.column, jerr.text);
	if (!json_is_object(root)) {
		rc = sim_json_fail(err, errlen, "top level: expected an object");
		goto out;
	}
	if ((rc = sim_json_check_keys(root, known, w, err, errlen)))
		goto out;
	v = json_object_get(root, "name");
	snprintf(sc->name, sizeof(sc->name), "%s", json_is_string(v) ? json_string_value(v) : "");
	if ((rc = num(root, "seed", 1, 0, 9007199254740992.0, &d, w, err, errlen)))
		goto out;
	sc->seed = seed_override >= 0 ? (uint64_t)seed_override : (uint64_t)d;
	if ((rc = num(root, "duration_days", 0, 0, 36500, &d, w, err, errlen)) ||
	    (rc = num(root, "duration_s", d * 86400, 1e-3, 1e10, &sc->duration, w, err, errlen)) ||
	    (rc = num(root, "decision_interval", 10, 1e-3, 1e6, &sc->decision_interval, w, err,
		      errlen)) ||
	    (rc = num(root, "csv_interval", 600, 1e-3, 1e9, &sc->csv_interval, w, err, errlen)) ||
	    (rc = num(root, "estimate_factor", 1.5, 1, 100, &sc->estimate_factor, w, err,
		      errlen)) ||
	    (rc = inum(root, "nodes", 0, 1, 1 << 30, &sc->nodes, w, err, errlen)))
		goto out;
	if (!json_object_get(root, "nodes")) {
		rc = sim_json_fail(err, errlen, "scenario: missing nodes (the node pool size)");
		goto out;
	}
	if (!json_object_get(root, "duration_s") && !json_object_get(root, "duration_days")) {
		rc = sim_json_fail(err, errlen, "scenario: missing duration_s or duration_days");
		goto out;
	}
	v = json_object_get(root, "work_conserving");
	if (v && !json_is_boolean(v)) {
		rc = sim_json_fail(err, errlen, "scenario.work_conserving: expected true or false");
		goto out;
	}
	sc->work_conserving = v ? json_is_true(v) : 0;
	v = json_object_get(root, "progress");
	if (v && (!json_is_string(v) || (strcmp(json_string_value(v), "lockstep") &&
					 strcmp(json_string_value(v), "independent")))) {
		rc = sim_json_fail(err, errlen, "scenario.progress: expected \"lockstep\" or \"independent\"");
		goto out;
	}
	sc->lockstep = !v || strcmp(json_string_value(v), "lockstep") == 0;
	v = json_object_get(root, "newcomers");
	if (v && (!json_is_string(v) || (strcmp(json_string_value(v), "share") &&
					 strcmp(json_string_value(v), "wait")))) {
		rc = sim_json_fail(err, errlen, "scenario.newcomers: expected \"share\" or \"wait\"");
		goto out;
	}
	sc->newcomer_wait = v && strcmp(json_string_value(v), "wait") == 0;
	if (!(v = json_object_get(root, "osts"))) {
		rc = sim_json_fail(err, errlen, "scenario: missing osts");
		goto out;
	}
	if ((rc = parse_osts(v, sc, err, errlen)))
		goto out;
	if (cluster_only) {
		rc = 0;
		goto out;
	}
	if ((rc = parse_apps(json_object_get(root, "apps"), sc, err, errlen)))
		goto out;
	sim_rng r;
	sim_rng_seed(&r, sc->seed * 4);
	if ((rc = parse_jobs(json_object_get(root, "jobs"), sc, &r, &jobs_cap, err, errlen)))
		goto out;
	if ((v = json_object_get(root, "generator"))) {
		gen_cfg c;
		memset(&c, 0, sizeof(c));
		if ((rc = parse_gen(v, sc, &c, err, errlen)) || (rc = generate(sc, &c, &jobs_cap)))
			goto out;
	}
	if (sc->n_jobs == 0) {
		rc = sim_json_fail(err, errlen, "scenario: no jobs (give \"jobs\" or a \"generator\")");
		goto out;
	}
	/* Sort by submit time, stably (ties keep file order, then generated
	 * order); insertion sort because qsort is not stable and the list is
	 * already sorted except for explicit jobs mixed with generated ones. */
	for (size_t i = 1; i < sc->n_jobs; i++) {
		sim_jobspec t = sc->jobs[i];
		size_t k = i;
		while (k > 0 && sc->jobs[k - 1].submit > t.submit) {
			sc->jobs[k] = sc->jobs[k - 1];
			k--;
		}
		sc->jobs[k] = t;
	}
	rc = 0;
out:
	json_decref(root);
	if (rc)
		sim_scen_free(sc);
	return rc;
}

int sim_scen_parse(const char *text, size_t len, long long seed_override, sim_scenario *sc,
		   char *err, size_t errlen)
{
	return scen_parse(text, len, seed_override, sc, err, errlen, 0);
}

static int scen_load(const char *path, long long seed_override, sim_scenario *sc, char *err,
		     size_t errlen, int cluster_only)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t n = 0;
	int rc;

	memset(sc, 0, sizeof(*sc));
	if (!f) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return rc;
	}
	rc = pfs_file_read_stream(f, &buf, &n);
	if (rc) {
		snprintf(err, errlen, "%s: %s", path, rc == -ENOMEM ? "out of memory" : "read error");
		goto out;
	}
	rc = scen_parse(buf, n, seed_override, sc, err, errlen, cluster_only);
out:
	free(buf);
	fclose(f);
	return rc;
}

int sim_scen_load(const char *path, long long seed_override, sim_scenario *sc, char *err,
		  size_t errlen)
{
	return scen_load(path, seed_override, sc, err, errlen, 0);
}

int sim_scen_load_cluster(const char *path, long long seed_override, sim_scenario *sc,
			  char *err, size_t errlen)
{
	return scen_load(path, seed_override, sc, err, errlen, 1);
}

size_t sim_scen_group(const sim_scenario *sc, size_t a)
{
	return sc->app_group ? sc->app_group[a] : a;
}

void sim_scen_free(sim_scenario *sc)
{
	if (!sc)
		return;
	for (size_t j = 0; j < sc->n_jobs; j++)
		free(sc->jobs[j].osts);
	free(sc->jobs);
	free(sc->apps);
	free(sc->app_group);
	free(sc->capacity);
	memset(sc, 0, sizeof(*sc));
}

void sim_scen_gamma_gaps(uint64_t seed, double shape, double scale, double *gaps, size_t n)
{
	sim_rng r;
	sim_rng_seed(&r, seed);
	for (size_t i = 0; i < n; i++)
		gaps[i] = sim_rng_gamma(&r, shape, scale);
}

void sim_scen_phase_bytes(const sim_scenario *sc, const sim_jobspec *j, double *bytes)
{
	const sim_app *a = &sc->apps[j->app];
	double per = a->io_per_rank * j->io_scale / a->stripe;
	for (int i = 0; i < a->n_osts; i++)
		bytes[i] = 0;
	for (int r = 0; r < a->ranks; r++)
		for (int t = 0; t < a->stripe; t++)
			bytes[(r * a->stripe + t) % a->n_osts] += per;
}
