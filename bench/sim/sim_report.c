/* sim_report.c — the numbers behind `pfs-sim report` (sim_report.h):
 * per-application improvement over the reference and its CDF, the
 * applications worse than the reference, and effective bandwidth per
 * system state from the runs' CSV time series; their JSON forms. */
#include "bench/sim/sim_report.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int sim_report_apps_compare(const sim_scenario *sc, const sim_run_result *r,
			    const sim_run_result *ref, sim_report_apps *out)
{
	double *mine = NULL, *theirs = NULL;
	uint8_t *seen = NULL;
	int rc = -ENOMEM;

	memset(out, 0, sizeof(*out));
	if (r->n_jobs != ref->n_jobs)
		return -EINVAL;
	mine = calloc(sc->n_apps ? sc->n_apps : 1, sizeof(double));
	theirs = calloc(sc->n_apps ? sc->n_apps : 1, sizeof(double));
	seen = calloc(sc->n_apps ? sc->n_apps : 1, 1);
	out->impr = calloc(sc->n_apps ? sc->n_apps : 1, sizeof(double));
	if (!mine || !theirs || !seen || !out->impr)
		goto out;
	for (size_t j = 0; j < r->n_jobs; j++) {
		if (!r->jobs[j].done || !ref->jobs[j].done)
			continue;
		size_t a = r->jobs[j].app;
		if (a >= sc->n_apps || ref->jobs[j].app != a) {
			rc = -EINVAL;
			goto out;
		}
		mine[a] += r->jobs[j].io_time;
		theirs[a] += ref->jobs[j].io_time;
		seen[a] = 1;
	}
	for (size_t a = 0; a < sc->n_apps; a++) {
		if (!seen[a])
			continue;
		/* The same test as sim_run_compare: a relative margin so
		 * float noise in equal runs is not "worse". */
		if (mine[a] > theirs[a] * (1 + 1e-6) + 1e-6) {
			double loss = mine[a] / theirs[a] - 1.0;
			out->worse++;
			out->mean_loss += loss;
			if (loss > out->max_loss)
				out->max_loss = loss;
		}
		out->impr[out->n++] = theirs[a] > 0 ? 1.0 - mine[a] / theirs[a] : 0.0;
	}
	if (out->worse)
		out->mean_loss /= (double)out->worse;
	qsort(out->impr, out->n, sizeof(double), cmp_double);
	rc = 0;
out:
	free(mine);
	free(theirs);
	free(seen);
	if (rc)
		sim_report_apps_free(out);
	return rc;
}

void sim_report_apps_free(sim_report_apps *a)
{
	if (!a)
		return;
	free(a->impr);
	memset(a, 0, sizeof(*a));
}

double sim_report_quantile(const double *sorted, size_t n, double q)
{
	if (!n)
		return NAN;
	if (q <= 0)
		return sorted[0];
	if (q >= 1)
		return sorted[n - 1];
	double pos = q * (double)(n - 1);
	size_t i = (size_t)pos;
	double f = pos - (double)i;
	if (i + 1 >= n)
		return sorted[n - 1];
	return sorted[i] + f * (sorted[i + 1] - sorted[i]);
}

void sim_report_series_free(sim_report_series *s)
{
	if (!s)
		return;
	free(s->t);
	free(s->eff);
	free(s->io_jobs);
	memset(s, 0, sizeof(*s));
}

int sim_report_series_parse(const char *text, size_t len, sim_report_series *s)
{
	size_t rows = 0, cap = 0;
	const char *p = text, *end = text + len;

	memset(s, 0, sizeof(*s));
	/* Skip the header line. */
	while (p < end && *p != '\n')
		p++;
	if (p < end)
		p++;
	for (const char *q = p; q < end; q++)
		cap += *q == '\n';
	cap++;
	s->t = malloc(cap * sizeof(double));
	s->eff = malloc(cap * sizeof(double));
	s->io_jobs = malloc(cap * sizeof(double));
	if (!s->t || !s->eff || !s->io_jobs) {
		sim_report_series_free(s);
		return -ENOMEM;
	}
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t ll = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char line[512];
		double f[5];
		int nf = 0;

		if (ll == 0) {
			p += 1;
			continue;
		}
		if (ll >= sizeof(line))
			goto bad;
		memcpy(line, p, ll);
		line[ll] = '\0';
		char *c = line;
		while (nf < 5) {
			char *e;
			f[nf] = strtod(c, &e);
			if (e == c || (*e != ',' && *e != '\0') || !isfinite(f[nf]))
				goto bad;
			nf++;
			if (*e == '\0')
				break;
			c = e + 1;
		}
		if (nf < 5)
			goto bad;
		s->t[rows] = f[0];
		s->eff[rows] = f[1];
		s->io_jobs[rows] = f[4];
		rows++;
		p += ll + (nl != NULL);
	}
	s->n = rows;
	return 0;
bad:
	sim_report_series_free(s);
	return -EINVAL;
}

int sim_report_states(const sim_report_series *ref, const sim_report_series *s,
		      size_t n_buckets, sim_report_state *states)
{
	size_t n = ref->n < s->n ? ref->n : s->n, m = 0, ns = 0;
	double cuts[SIM_REPORT_MAX_STATES];
	double sum_ref[SIM_REPORT_MAX_STATES] = {0}, sum[SIM_REPORT_MAX_STATES] = {0};

	if (n_buckets == 0 || n_buckets + 1 > SIM_REPORT_MAX_STATES)
		return -EINVAL;
	double *busy = malloc((n ? n : 1) * sizeof(double));
	if (!busy)
		return -ENOMEM;
	for (size_t w = 0; w < n; w++)
		if (ref->io_jobs[w] > 0)
			busy[m++] = ref->io_jobs[w];
	qsort(busy, m, sizeof(double), cmp_double);

	/* Upper cut of each busy bucket: the nearest-rank quantile k/B,
	 * always a value that occurs, so no bucket between cuts is empty;
	 * equal cuts merge. */
	size_t nc = 0;
	for (size_t k = 1; m && k <= n_buckets; k++) {
		size_t rank = (k * m + n_buckets - 1) / n_buckets; /* ceil(k m / B) */
		double c = busy[rank ? rank - 1 : 0];
		if (k == n_buckets)
			c = busy[m - 1];
		if (nc && c <= cuts[nc - 1])
			continue;
		cuts[nc++] = c;
	}
	free(busy);

	ns = 1 + nc;
	for (size_t i = 0; i < ns; i++) {
		states[i] = (sim_report_state){.lo = INFINITY, .hi = -INFINITY};
	}
	states[0].lo = states[0].hi = 0;
	for (size_t w = 0; w < n; w++) {
		double x = ref->io_jobs[w];
		size_t b = 0;
		if (x > 0) {
			b = 1;
			while (b < nc && x > cuts[b - 1])
				b++;
		}
		states[b].windows++;
		if (x < states[b].lo)
			states[b].lo = x;
		if (x > states[b].hi)
			states[b].hi = x;
		sum_ref[b] += ref->eff[w];
		sum[b] += s->eff[w];
	}
	for (size_t i = 0; i < ns; i++) {
		sim_report_state *st = &states[i];
		if (!st->windows) {
			st->ref_eff = st->eff = st->gain = NAN;
			if (i > 0)
				st->lo = st->hi = NAN;
			continue;
		}
		st->ref_eff = sum_ref[i] / (double)st->windows;
		st->eff = sum[i] / (double)st->windows;
		st->gain = sum_ref[i] > 0 ? sum[i] / sum_ref[i] - 1.0 : NAN;
	}
	return (int)ns;
}

static json_t *num(double v) { return isfinite(v) ? json_real(v) : json_null(); }

json_t *sim_report_cdf_json(const sim_report_apps *a)
{
	static const struct {
		const char *key;
		double q;
	} qs[] = {{"p0", 0}, {"p10", 0.1}, {"p25", 0.25}, {"p50", 0.5},
		  {"p75", 0.75}, {"p90", 0.9}, {"p100", 1}};
	json_t *o = json_object(), *sorted = json_array(), *q = json_object();
	size_t over20 = 0;

	if (!o || !sorted || !q)
		goto fail;
	for (size_t i = 0; i < a->n; i++) {
		if (json_array_append_new(sorted, json_real(a->impr[i])))
			goto fail;
		over20 += a->impr[i] > 0.2;
	}
	for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++)
		if (json_object_set_new(q, qs[i].key,
					num(sim_report_quantile(a->impr, a->n, qs[i].q))))
			goto fail;
	/* json_object_set_new takes the value even when it fails. */
	int bad = json_object_set_new(o, "apps", json_integer((json_int_t)a->n));
	bad |= json_object_set_new(o, "sorted", sorted);
	sorted = NULL;
	bad |= json_object_set_new(o, "quantiles", q);
	q = NULL;
	bad |= json_object_set_new(o, "frac_improved_20pct",
				   num(a->n ? (double)over20 / (double)a->n : NAN));
	if (bad)
		goto fail;
	return o;
fail:
	json_decref(o);
	json_decref(sorted);
	json_decref(q);
	return NULL;
}

json_t *sim_report_worse_json(const sim_report_apps *a)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	if (json_object_set_new(o, "apps", json_integer((json_int_t)a->n)) ||
	    json_object_set_new(o, "worse", json_integer((json_int_t)a->worse)) ||
	    json_object_set_new(o, "frac", num(a->n ? (double)a->worse / (double)a->n : NAN)) ||
	    json_object_set_new(o, "mean_loss", num(a->mean_loss)) ||
	    json_object_set_new(o, "max_loss", num(a->max_loss))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

json_t *sim_report_states_json(const sim_report_state *st, size_t n)
{
	json_t *arr = json_array();
	if (!arr)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		json_t *o = json_object();
		if (!o || json_array_append_new(arr, o) ||
		    json_object_set_new(o, "state", json_integer((json_int_t)i)) ||
		    json_object_set_new(o, "lo", num(st[i].lo)) ||
		    json_object_set_new(o, "hi", num(st[i].hi)) ||
		    json_object_set_new(o, "windows", json_integer((json_int_t)st[i].windows)) ||
		    json_object_set_new(o, "ref_effective", num(st[i].ref_eff)) ||
		    json_object_set_new(o, "effective", num(st[i].eff)) ||
		    json_object_set_new(o, "gain", num(st[i].gain))) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}
