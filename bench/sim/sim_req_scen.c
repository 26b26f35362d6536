/* sim_req_scen.c — the scenario reader of `pfs-sim req` (format in
 * bench/sim/README.md, "pfs-sim req"): JSON into a sim_req_scen, every
 * unknown key or out-of-range value refused with the field named. */
#include "bench/sim/sim_req.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/sim/sim_json.h"

#define MAX_OSTS  64
#define MAX_JOBS  256
#define MAX_PROCS 4096
#define MAX_DURATION_S 3600.0

static const char *const ctl_names[SIM_REQ_NCONTROLS] = { "nobw", "static", "adaptbf" };

const char *sim_req_control_name(int control)
{
	if (control < 0 || control >= SIM_REQ_NCONTROLS)
		return "?";
	return ctl_names[control];
}

int sim_req_control_parse(const char *name)
{
	for (int i = 0; i < SIM_REQ_NCONTROLS; i++)
		if (!strcmp(name, ctl_names[i]))
			return i;
	return -1;
}

/* A number in [lo, hi] at obj[key] into *out (default def if absent). */
static int num(json_t *obj, const char *key, double def, double lo, double hi, double *out,
	       const char *where, char *err, size_t len)
{
	json_t *v = json_object_get(obj, key);
	if (!v) {
		*out = def;
		return 0;
	}
	if (!json_is_number(v))
		return sim_json_fail(err, len, "%s.%s: not a number", where, key);
	double x = json_number_value(v);
	if (!isfinite(x) || x < lo || x > hi)
		return sim_json_fail(err, len, "%s.%s: %g out of range [%g, %g]", where, key, x,
				     lo, hi);
	*out = x;
	return 0;
}

static int64_t us(double s)
{
	return (int64_t)llround(s * 1e6);
}

static int parse_osts(json_t *a, sim_req_scen *sc, char *err, size_t len)
{
	static const char *const keys[] = { "rate", "threads", "queue_max", NULL };
	if (!json_is_array(a) || json_array_size(a) == 0 || json_array_size(a) > MAX_OSTS)
		return sim_json_fail(err, len, "osts: need an array of 1 to %d OSTs", MAX_OSTS);
	sc->n_osts = json_array_size(a);
	sc->osts = calloc(sc->n_osts, sizeof(*sc->osts));
	if (!sc->osts)
		return -ENOMEM;
	for (size_t i = 0; i < sc->n_osts; i++) {
		json_t *o = json_array_get(a, i);
		char where[32];
		snprintf(where, sizeof(where), "osts[%zu]", i);
		double rate, thr, qmax;
		if (json_is_number(o)) {
			o = json_pack("{s:O}", "rate", o);
			if (!o)
				return -ENOMEM;
		} else if (json_is_object(o)) {
			json_incref(o);
		} else {
			return sim_json_fail(err, len, "%s: not a number or object", where);
		}
		int rc = sim_json_check_keys(o, keys, where, err, len);
		if (!rc)
			rc = num(o, "rate", NAN, 1e-3, 1e7, &rate, where, err, len);
		if (!rc && isnan(rate))
			rc = sim_json_fail(err, len, "%s.rate: required", where);
		if (!rc)
			rc = num(o, "threads", 1, 1, 1024, &thr, where, err, len);
		if (!rc)
			rc = num(o, "queue_max", 0, 0, 1e9, &qmax, where, err, len);
		json_decref(o);
		if (rc)
			return rc;
		sc->osts[i] = (sim_req_ost){ .rate = rate, .threads = (int)thr, .queue_max = (long)qmax };
	}
	return 0;
}

static int parse_proc(json_t *p, sim_req_scen *sc, size_t job, const char *where,
		      sim_req_proc *out, long *count, char *err, size_t len)
{
	static const char *const keys[] = { "count", "ost", "rpcs", "inflight", "think_ms",
					    "burst", "gap_ms", "start_s", NULL };
	if (!json_is_object(p))
		return sim_json_fail(err, len, "%s: not an object", where);
	int rc = sim_json_check_keys(p, keys, where, err, len);
	if (rc)
		return rc;
	double cnt, ost, rpcs, infl, think, burst, gap, start;
	if ((rc = num(p, "count", 1, 1, MAX_PROCS, &cnt, where, err, len)) ||
	    (rc = num(p, "ost", 0, 0, 1e9, &ost, where, err, len)) ||
	    (rc = num(p, "rpcs", 0, 0, 1e9, &rpcs, where, err, len)) ||
	    (rc = num(p, "inflight", 8, 1, 1024, &infl, where, err, len)) ||
	    (rc = num(p, "think_ms", 0, 0, 1e6, &think, where, err, len)) ||
	    (rc = num(p, "burst", 0, 0, 1e9, &burst, where, err, len)) ||
	    (rc = num(p, "gap_ms", 0, 0, 1e7, &gap, where, err, len)) ||
	    (rc = num(p, "start_s", 0, 0, MAX_DURATION_S, &start, where, err, len)))
		return rc;
	if ((size_t)ost >= sc->n_osts)
		return sim_json_fail(err, len, "%s.ost: index %g out of range (%zu OSTs)", where,
				     ost, sc->n_osts);
	if (burst > 0 && gap <= 0)
		return sim_json_fail(err, len, "%s.gap_ms: a burst needs a gap > 0", where);
	*out = (sim_req_proc){ .job = (int)job, .ost = (int)ost, .rpcs = (long)rpcs,
			       .inflight = (int)infl, .think_us = us(think / 1e3),
			       .burst = (long)burst, .gap_us = us(gap / 1e3),
			       .start_us = us(start) };
	*count = (long)cnt;
	return 0;
}

static int parse_jobs(json_t *a, sim_req_scen *sc, char *err, size_t len)
{
	static const char *const keys[] = { "id", "priority", "procs", NULL };
	if (!json_is_array(a) || json_array_size(a) == 0 || json_array_size(a) > MAX_JOBS)
		return sim_json_fail(err, len, "jobs: need an array of 1 to %d jobs", MAX_JOBS);
	sc->n_jobs = json_array_size(a);
	sc->jobs = calloc(sc->n_jobs, sizeof(*sc->jobs));
	if (!sc->jobs)
		return -ENOMEM;
	size_t cap = 0;
	for (size_t j = 0; j < sc->n_jobs; j++) {
		json_t *o = json_array_get(a, j);
		char where[48];
		snprintf(where, sizeof(where), "jobs[%zu]", j);
		if (!json_is_object(o))
			return sim_json_fail(err, len, "%s: not an object", where);
		int rc = sim_json_check_keys(o, keys, where, err, len);
		if (rc)
			return rc;
		json_t *id = json_object_get(o, "id");
		if (!json_is_string(id) || !json_string_length(id) ||
		    json_string_length(id) >= SIM_REQ_ID_MAX)
			return sim_json_fail(err, len, "%s.id: need a string of 1 to %d bytes",
					     where, SIM_REQ_ID_MAX - 1);
		for (size_t k = 0; k < j; k++)
			if (!strcmp(sc->jobs[k].id, json_string_value(id)))
				return sim_json_fail(err, len, "%s.id: duplicate '%s'", where,
						     json_string_value(id));
		snprintf(sc->jobs[j].id, SIM_REQ_ID_MAX, "%s", json_string_value(id));
		if ((rc = num(o, "priority", 1, 1e-6, 1e9, &sc->jobs[j].priority, where, err, len)))
			return rc;
		json_t *ps = json_object_get(o, "procs");
		if (!json_is_array(ps) || !json_array_size(ps))
			return sim_json_fail(err, len, "%s.procs: need a non-empty array", where);
		for (size_t i = 0; i < json_array_size(ps); i++) {
			char pw[96];
			snprintf(pw, sizeof(pw), "%s.procs[%zu]", where, i);
			sim_req_proc p;
			long cnt = 0;
			if ((rc = parse_proc(json_array_get(ps, i), sc, j, pw, &p, &cnt, err, len)))
				return rc;
			if (sc->n_procs + (size_t)cnt > MAX_PROCS)
				return sim_json_fail(err, len, "%s.count: more than %d processes",
						     pw, MAX_PROCS);
			if (sc->n_procs + (size_t)cnt > cap) {
				size_t nc = cap ? cap : 16;
				while (nc < sc->n_procs + (size_t)cnt)
					nc *= 2;
				sim_req_proc *np = realloc(sc->procs, nc * sizeof(*np));
				if (!np)
					return -ENOMEM;
				sc->procs = np;
				cap = nc;
			}
			for (long c = 0; c < cnt; c++)
				sc->procs[sc->n_procs++] = p;
		}
	}
	return 0;
}

static int parse_rcc(json_t *o, sim_req_scen *sc, char *err, size_t len)
{
	static const char *const keys[] = { "Lmax", "Dlow", "RCCmin", "RCCmax", "STL", "window",
					    NULL };
	if (!o)
		return 0;
	if (json_is_false(o))
		return 0;
	if (!json_is_object(o))
		return sim_json_fail(err, len, "rcc: need an object (or false)");
	int rc = sim_json_check_keys(o, keys, "rcc", err, len);
	qos_rcc_params *p = &sc->rccp;
	if (rc || (rc = num(o, "Lmax", 0.05, 1e-6, 3600, &p->Lmax, "rcc", err, len)) ||
	    (rc = num(o, "Dlow", 0, 0, 1e9, &p->Dlow, "rcc", err, len)) ||
	    (rc = num(o, "RCCmin", 0, 0, 1e6, &p->RCCmin, "rcc", err, len)) ||
	    (rc = num(o, "RCCmax", 0, 0, 1e6, &p->RCCmax, "rcc", err, len)) ||
	    (rc = num(o, "STL", 0, 0, 1e6, &p->STL, "rcc", err, len)) ||
	    (rc = num(o, "window", 0, 0, 1e6, &p->window, "rcc", err, len)))
		return rc;
	qos_rcc probe;
	if (qos_rcc_init(&probe, p, 0) < 0)
		return sim_json_fail(err, len, "rcc: parameters refused by qos/rcc");
	sc->rcc = 1;
	return 0;
}

int sim_req_scen_parse(json_t *root, sim_req_scen *sc, char *err, size_t len)
{
	static const char *const keys[] = { "name", "note", "seed", "duration_s", "sample_ms",
					    "period_ms", "net_us", "rpc_mb", "jitter",
					    "work_conserving", "controls", "osts", "jobs", "rcc",
					    "ascar", NULL };
	memset(sc, 0, sizeof(*sc));
	if (!json_is_object(root))
		return sim_json_fail(err, len, "scenario: not a JSON object");
	int rc = sim_json_check_keys(root, keys, "scenario", err, len);
	if (rc)
		return rc;
	json_t *v = json_object_get(root, "name");
	if (v && (!json_is_string(v) || json_string_length(v) >= SIM_REQ_ID_MAX))
		return sim_json_fail(err, len, "name: need a string of at most %d bytes",
				     SIM_REQ_ID_MAX - 1);
	snprintf(sc->name, sizeof(sc->name), "%s", v ? json_string_value(v) : "unnamed");
	v = json_object_get(root, "note");
	if (v && !json_is_string(v))
		return sim_json_fail(err, len, "note: not a string");
	double seed, dur, sample, period, net, jit;
	if ((rc = num(root, "seed", 1, 0, 9007199254740992.0, &seed, "scenario", err, len)) ||
	    (rc = num(root, "duration_s", 60, 1e-3, MAX_DURATION_S, &dur, "scenario", err, len)) ||
	    (rc = num(root, "sample_ms", 100, 1, 1e6, &sample, "scenario", err, len)) ||
	    (rc = num(root, "period_ms", 100, 1, 1e6, &period, "scenario", err, len)) ||
	    (rc = num(root, "net_us", 50, 0, 1e6, &net, "scenario", err, len)) ||
	    (rc = num(root, "rpc_mb", 1, 1e-6, 1e3, &sc->rpc_mb, "scenario", err, len)) ||
	    (rc = num(root, "jitter", 0.1, 0, 0.9, &jit, "scenario", err, len)))
		goto fail;
	sc->seed = (uint64_t)seed;
	sc->duration_us = us(dur);
	sc->sample_us = us(sample / 1e3);
	sc->period_us = us(period / 1e3);
	sc->net_us = (int64_t)net;
	sc->jitter = jit;
	v = json_object_get(root, "work_conserving");
	if (v && !json_is_boolean(v)) {
		rc = sim_json_fail(err, len, "work_conserving: not a boolean");
		goto fail;
	}
	sc->work_conserving = v && json_is_true(v);
	v = json_object_get(root, "ascar");
	if (v && !json_is_boolean(v)) {
		rc = sim_json_fail(err, len, "ascar: not a boolean");
		goto fail;
	}
	sc->ascar = v && json_is_true(v);
	v = json_object_get(root, "controls");
	if (v) {
		if (!json_is_array(v) || !json_array_size(v)) {
			rc = sim_json_fail(err, len, "controls: need a non-empty array of names");
			goto fail;
		}
		for (size_t i = 0; i < json_array_size(v); i++) {
			json_t *s = json_array_get(v, i);
			int c = json_is_string(s) ? sim_req_control_parse(json_string_value(s)) : -1;
			if (c < 0) {
				rc = sim_json_fail(err, len,
						   "controls[%zu]: unknown control (nobw, static, adaptbf)",
						   i);
				goto fail;
			}
			sc->controls |= 1u << c;
		}
	} else {
		sc->controls = (1u << SIM_REQ_NCONTROLS) - 1;
	}
	if ((rc = parse_osts(json_object_get(root, "osts"), sc, err, len)) ||
	    (rc = parse_jobs(json_object_get(root, "jobs"), sc, err, len)) ||
	    (rc = parse_rcc(json_object_get(root, "rcc"), sc, err, len)))
		goto fail;
	return 0;
fail:
	sim_req_scen_free(sc);
	return rc;
}

int sim_req_scen_load(const char *path, sim_req_scen *sc, char *err, size_t len)
{
	json_error_t je;
	memset(sc, 0, sizeof(*sc));
	json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
	if (!root)
		return sim_json_fail(err, len, "%s:%d: %s", path, je.line, je.text);
	int rc = sim_req_scen_parse(root, sc, err, len);
	json_decref(root);
	return rc;
}

void sim_req_scen_free(sim_req_scen *sc)
{
	free(sc->osts);
	free(sc->jobs);
	free(sc->procs);
	memset(sc, 0, sizeof(*sc));
}
