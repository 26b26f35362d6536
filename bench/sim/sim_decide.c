/* sim_decide.c — JSON decision instances in, JSON results out (see
 * sim_decide.h).  Everything is validated before the first decision, so a
 * malformed file prints nothing but the error. */
#include "bench/sim/sim_decide.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "bench/sim/sim_json.h"

typedef struct sim_decide_inst {
	size_t n_jobs;
	size_t *job_ix;     /* [n_jobs] index into sim_decide.jobs */
	uint8_t *active;    /* [n_jobs * n_osts] */
	double *usage;      /* [n_jobs * n_osts] */
	double *demand;     /* [n_jobs * n_osts] or NULL */
	double now, period;
} sim_decide_inst;

struct sim_decide {
	size_t n_osts;
	char **ost_ids;
	double *capacity;
	size_t n_jobs;
	qos_job *jobs;
	size_t n_params;
	qos_param *params;
	char **param_keys;
	uint64_t seed;
	size_t n_inst;
	sim_decide_inst *inst;
};

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

static int get_num(json_t *obj, const char *key, double def, double *out, const char *where,
		   char *err, size_t len)
{
	json_t *v = json_object_get(obj, key);
	if (!v) {
		*out = def;
		return 0;
	}
	if (!json_is_number(v))
		return sim_json_fail(err, len, "%s.%s: expected a number", where, key);
	*out = json_number_value(v);
	if (!isfinite(*out))
		return sim_json_fail(err, len, "%s.%s: not a finite number", where, key);
	return 0;
}

static long find_ost(const sim_decide *d, const char *id)
{
	for (size_t o = 0; o < d->n_osts; o++)
		if (d->ost_ids[o] && strcmp(d->ost_ids[o], id) == 0)
			return (long)o;
	return -1;
}

static long find_job(const sim_decide *d, const char *id)
{
	for (size_t j = 0; j < d->n_jobs; j++)
		if (strcmp(d->jobs[j].id, id) == 0)
			return (long)j;
	return -1;
}

static int parse_osts(sim_decide *d, json_t *a, char *err, size_t len)
{
	static const char *const known[] = {"id", "capacity", NULL};
	char where[64];
	if (!json_is_array(a) || json_array_size(a) == 0)
		return sim_json_fail(err, len, "osts: expected a non-empty array");
	d->n_osts = json_array_size(a);
	d->ost_ids = calloc(d->n_osts, sizeof(*d->ost_ids));
	d->capacity = calloc(d->n_osts, sizeof(*d->capacity));
	if (!d->ost_ids || !d->capacity)
		return -ENOMEM;
	for (size_t o = 0; o < d->n_osts; o++) {
		json_t *e = json_array_get(a, o), *id;
		int rc;
		snprintf(where, sizeof(where), "osts[%zu]", o);
		if (!json_is_object(e))
			return sim_json_fail(err, len, "%s: expected an object", where);
		if ((rc = sim_json_check_keys(e, known, where, err, len)))
			return rc;
		id = json_object_get(e, "id");
		if (!json_is_string(id) || json_string_length(id) == 0 ||
		    json_string_length(id) >= QOS_ID_MAX)
			return sim_json_fail(err, len, "%s.id: expected a string of 1..%d characters", where,
				    QOS_ID_MAX - 1);
		if (find_ost(d, json_string_value(id)) >= 0)
			return sim_json_fail(err, len, "%s.id: duplicate OST '%s'", where,
				    json_string_value(id));
		if (!(d->ost_ids[o] = strdup(json_string_value(id))))
			return -ENOMEM;
		if (!json_object_get(e, "capacity"))
			return sim_json_fail(err, len, "%s: missing capacity", where);
		if ((rc = get_num(e, "capacity", 0, &d->capacity[o], where, err, len)))
			return rc;
		if (d->capacity[o] <= 0)
			return sim_json_fail(err, len, "%s.capacity: must be > 0", where);
	}
	return 0;
}

static int parse_jobs(sim_decide *d, json_t *a, char *err, size_t len)
{
	static const char *const known[] = {"id", "nodes", "priority", "limit",
					    "throttle_friendly", NULL};
	char where[64];
	/* No "jobs" at all is an empty list: instances can then hold none. */
	if (a && !json_is_array(a))
		return sim_json_fail(err, len, "jobs: expected an array");
	d->n_jobs = a ? json_array_size(a) : 0;
	d->jobs = calloc(d->n_jobs ? d->n_jobs : 1, sizeof(*d->jobs));
	if (!d->jobs)
		return -ENOMEM;
	for (size_t j = 0; j < d->n_jobs; j++) {
		json_t *e = json_array_get(a, j), *id, *tf;
		qos_job *job = &d->jobs[j];
		int rc;
		snprintf(where, sizeof(where), "jobs[%zu]", j);
		if (!json_is_object(e))
			return sim_json_fail(err, len, "%s: expected an object", where);
		if ((rc = sim_json_check_keys(e, known, where, err, len)))
			return rc;
		id = json_object_get(e, "id");
		if (!json_is_string(id) || json_string_length(id) == 0 ||
		    json_string_length(id) >= QOS_ID_MAX)
			return sim_json_fail(err, len, "%s.id: expected a string of 1..%d characters", where,
				    QOS_ID_MAX - 1);
		/* Check duplicates among the jobs parsed so far only. */
		size_t n = d->n_jobs;
		d->n_jobs = j;
		long dup = find_job(d, json_string_value(id));
		d->n_jobs = n;
		if (dup >= 0)
			return sim_json_fail(err, len, "%s.id: duplicate job '%s'", where,
				    json_string_value(id));
		snprintf(job->id, sizeof(job->id), "%s", json_string_value(id));
		if ((rc = get_num(e, "nodes", 1, &job->nodes, where, err, len)) ||
		    (rc = get_num(e, "priority", 1, &job->priority, where, err, len)) ||
		    (rc = get_num(e, "limit", 0, &job->limit, where, err, len)))
			return rc;
		if (job->nodes < 0 || job->priority < 0 || job->limit < 0)
			return sim_json_fail(err, len, "%s: nodes, priority and limit must be >= 0", where);
		tf = json_object_get(e, "throttle_friendly");
		if (tf && !json_is_boolean(tf))
			return sim_json_fail(err, len, "%s.throttle_friendly: expected true or false", where);
		job->throttle_friendly = tf ? json_is_true(tf) : 1;
	}
	return 0;
}

static int parse_params(sim_decide *d, json_t *o, char *err, size_t len)
{
	const char *key;
	json_t *v;
	size_t i = 0;
	if (!o)
		return 0;
	if (!json_is_object(o))
		return sim_json_fail(err, len, "params: expected an object of numbers");
	d->n_params = json_object_size(o);
	d->params = calloc(d->n_params ? d->n_params : 1, sizeof(*d->params));
	d->param_keys = calloc(d->n_params ? d->n_params : 1, sizeof(*d->param_keys));
	if (!d->params || !d->param_keys)
		return -ENOMEM;
	json_object_foreach(o, key, v) {
		if (!json_is_number(v))
			return sim_json_fail(err, len, "params.%s: expected a number", key);
		if (!(d->param_keys[i] = strdup(key)))
			return -ENOMEM;
		d->params[i].key = d->param_keys[i];
		d->params[i].value = json_number_value(v);
		i++;
	}
	return 0;
}

/* Collect the jobs of an instance: those named in active/usage/demand. */
static int inst_jobs(const sim_decide *d, json_t *in, sim_decide_inst *ins, const char *where,
		     char *err, size_t len)
{
	static const char *const maps[] = {"active", "usage", "demand"};
	uint8_t *used = calloc(d->n_jobs ? d->n_jobs : 1, 1);
	int rc = 0;
	if (!used)
		return -ENOMEM;
	if (!json_object_get(in, "active"))
		memset(used, 1, d->n_jobs);
	for (size_t m = 0; m < 3; m++) {
		json_t *map = json_object_get(in, maps[m]), *v;
		const char *key;
		if (!map)
			continue;
		if (!json_is_object(map)) {
			rc = sim_json_fail(err, len, "%s.%s: expected an object keyed by job id", where,
				  maps[m]);
			goto out;
		}
		json_object_foreach(map, key, v) {
			long j = find_job(d, key);
			if (j < 0) {
				rc = sim_json_fail(err, len, "%s.%s: unknown job '%s' (not in \"jobs\")", where,
					  maps[m], key);
				goto out;
			}
			used[j] = 1;
		}
	}
	ins->job_ix = calloc(d->n_jobs ? d->n_jobs : 1, sizeof(*ins->job_ix));
	if (!ins->job_ix) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t j = 0; j < d->n_jobs; j++)
		if (used[j])
			ins->job_ix[ins->n_jobs++] = j;
out:
	free(used);
	return rc;
}

static long inst_row(const sim_decide *d, const sim_decide_inst *ins, const char *id)
{
	long j = find_job(d, id);
	for (size_t r = 0; r < ins->n_jobs; r++)
		if ((long)ins->job_ix[r] == j)
			return (long)r;
	return -1;
}

/* Parse {job: {ost: number}} into m. */
static int parse_matrix(const sim_decide *d, const sim_decide_inst *ins, json_t *map, double *m,
			const char *where, const char *name, char *err, size_t len)
{
	const char *jid, *oid;
	json_t *row, *v;
	json_object_foreach(map, jid, row) {
		long r = inst_row(d, ins, jid);
		if (!json_is_object(row))
			return sim_json_fail(err, len, "%s.%s.%s: expected an object keyed by OST id", where,
				    name, jid);
		json_object_foreach(row, oid, v) {
			long o = find_ost(d, oid);
			if (o < 0)
				return sim_json_fail(err, len, "%s.%s.%s: unknown OST '%s'", where, name, jid,
					    oid);
			if (!json_is_number(v) || json_number_value(v) < 0 ||
			    !isfinite(json_number_value(v)))
				return sim_json_fail(err, len, "%s.%s.%s.%s: expected a number >= 0", where,
					    name, jid, oid);
			m[(size_t)r * d->n_osts + (size_t)o] = json_number_value(v);
		}
	}
	return 0;
}

static int parse_instance(sim_decide *d, json_t *in, size_t k, double period, char *err,
			  size_t len)
{
	static const char *const known[] = {"active", "usage", "demand", "now", "period", NULL};
	sim_decide_inst *ins = &d->inst[k];
	char where[64];
	json_t *act, *dem, *u;
	int rc;

	snprintf(where, sizeof(where), "instances[%zu]", k);
	if (!json_is_object(in))
		return sim_json_fail(err, len, "%s: expected an object", where);
	if ((rc = sim_json_check_keys(in, known, where, err, len)) ||
	    (rc = get_num(in, "period", period, &ins->period, where, err, len)))
		return rc;
	if (ins->period <= 0)
		return sim_json_fail(err, len, "%s.period: must be > 0", where);
	if ((rc = get_num(in, "now", (double)k * period, &ins->now, where, err, len)))
		return rc;
	if ((rc = inst_jobs(d, in, ins, where, err, len)))
		return rc;
	size_t cells = (ins->n_jobs ? ins->n_jobs : 1) * d->n_osts;
	ins->active = calloc(cells, 1);
	ins->usage = calloc(cells, sizeof(double));
	if (!ins->active || !ins->usage)
		return -ENOMEM;
	act = json_object_get(in, "active");
	if (!act) {
		memset(ins->active, 1, ins->n_jobs * d->n_osts);
	} else {
		const char *jid;
		json_t *list;
		json_object_foreach(act, jid, list) {
			long r = inst_row(d, ins, jid);
			size_t i;
			json_t *v;
			if (!json_is_array(list))
				return sim_json_fail(err, len, "%s.active.%s: expected an array of OST ids",
					    where, jid);
			json_array_foreach(list, i, v) {
				long o = json_is_string(v) ? find_ost(d, json_string_value(v)) : -1;
				if (!json_is_string(v))
					return sim_json_fail(err, len, "%s.active.%s[%zu]: expected an OST id",
						    where, jid, i);
				if (o < 0)
					return sim_json_fail(err, len, "%s.active.%s[%zu]: unknown OST '%s'",
						    where, jid, i, json_string_value(v));
				ins->active[(size_t)r * d->n_osts + (size_t)o] = 1;
			}
		}
	}
	if ((u = json_object_get(in, "usage")) &&
	    (rc = parse_matrix(d, ins, u, ins->usage, where, "usage", err, len)))
		return rc;
	if ((dem = json_object_get(in, "demand"))) {
		if (!(ins->demand = calloc(cells, sizeof(double))))
			return -ENOMEM;
		if ((rc = parse_matrix(d, ins, dem, ins->demand, where, "demand", err, len)))
			return rc;
	}
	return 0;
}

int sim_decide_parse(const char *text, size_t len, sim_decide **out, char *err, size_t errlen)
{
	static const char *const known[] = {"osts", "jobs", "params", "period", "seed",
					    "instances", NULL};
	json_error_t jerr;
	json_t *root = NULL, *insts, *seed;
	sim_decide *d = NULL;
	double period;
	int rc;

	*out = NULL;
	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		rc = sim_json_fail(err, errlen, "line %d column %d: %s", jerr.line, jerr.column, jerr.text);
		goto out;
	}
	if (!json_is_object(root)) {
		rc = sim_json_fail(err, errlen, "top level: expected an object");
		goto out;
	}
	if (!(d = calloc(1, sizeof(*d)))) {
		rc = -ENOMEM;
		goto out;
	}
	if ((rc = sim_json_check_keys(root, known, "top level", err, errlen)) ||
	    (rc = parse_osts(d, json_object_get(root, "osts"), err, errlen)) ||
	    (rc = parse_jobs(d, json_object_get(root, "jobs"), err, errlen)) ||
	    (rc = parse_params(d, json_object_get(root, "params"), err, errlen)) ||
	    (rc = get_num(root, "period", 10.0, &period, "top level", err, errlen)))
		goto out;
	if (period <= 0) {
		rc = sim_json_fail(err, errlen, "period: must be > 0");
		goto out;
	}
	seed = json_object_get(root, "seed");
	if (seed && (!json_is_integer(seed) || json_integer_value(seed) < 0)) {
		rc = sim_json_fail(err, errlen, "seed: expected an integer >= 0");
		goto out;
	}
	d->seed = seed ? (uint64_t)json_integer_value(seed) : 0;
	insts = json_object_get(root, "instances");
	if (!json_is_array(insts)) {
		rc = sim_json_fail(err, errlen, "instances: expected an array");
		goto out;
	}
	d->n_inst = json_array_size(insts);
	if (!(d->inst = calloc(d->n_inst ? d->n_inst : 1, sizeof(*d->inst)))) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t k = 0; k < d->n_inst; k++)
		if ((rc = parse_instance(d, json_array_get(insts, k), k, period, err, errlen)))
			goto out;
	*out = d;
	d = NULL;
	rc = 0;
out:
	sim_decide_free(d);
	json_decref(root);
	return rc;
}

void sim_decide_free(sim_decide *d)
{
	if (!d)
		return;
	for (size_t o = 0; o < d->n_osts && d->ost_ids; o++)
		free(d->ost_ids[o]);
	for (size_t i = 0; i < d->n_params && d->param_keys; i++)
		free(d->param_keys[i]);
	for (size_t k = 0; k < d->n_inst && d->inst; k++) {
		free(d->inst[k].job_ix);
		free(d->inst[k].active);
		free(d->inst[k].usage);
		free(d->inst[k].demand);
	}
	free(d->ost_ids);
	free(d->capacity);
	free(d->jobs);
	free(d->params);
	free(d->param_keys);
	free(d->inst);
	free(d);
}

void sim_decide_set_seed(sim_decide *d, uint64_t seed)
{
	if (d)
		d->seed = seed;
}

size_t sim_decide_count(const sim_decide *d) { return d ? d->n_inst : 0; }

int sim_decide_param_parse(char *s, qos_param *p)
{
	char *eq = strchr(s, '='), *end;
	if (!eq || eq == s || !eq[1])
		return -EINVAL;
	*eq = '\0';
	p->key = s;
	p->value = strtod(eq + 1, &end);
	if (*end || !isfinite(p->value))
		return -EINVAL;
	return 0;
}

/* Build one output line; NULL on ENOMEM. */
static char *result_line(const sim_decide *d, const sim_decide_inst *ins, size_t k,
			 const qos_result *res)
{
	json_t *o = json_object(), *alloc = json_object(), *coup = json_object(),
	       *rec = json_object(), *tok = json_object();
	char *line = NULL;
	size_t n = d->n_osts;

	if (!o || !alloc || !coup || !rec || !tok)
		goto out;
	for (size_t r = 0; r < ins->n_jobs; r++) {
		const char *jid = d->jobs[ins->job_ix[r]].id;
		json_t *ja = json_object(), *jr = json_object(), *jt = json_object();
		if (!ja || !jr || !jt) {
			json_decref(ja);
			json_decref(jr);
			json_decref(jt);
			goto out;
		}
		for (size_t c = 0; c < n; c++) {
			size_t ix = r * n + c;
			if (ins->active[ix] || res->alloc[ix] != 0)
				json_object_set_new(ja, d->ost_ids[c], json_real(res->alloc[ix]));
			if (!isnan(res->records[ix]))
				json_object_set_new(jr, d->ost_ids[c], json_real(res->records[ix]));
			if (res->tokens[ix] != INT64_MIN)
				json_object_set_new(jt, d->ost_ids[c],
						    json_integer((json_int_t)res->tokens[ix]));
		}
		json_object_set_new(alloc, jid, ja);
		if (!isnan(res->coupons[r]))
			json_object_set_new(coup, jid, json_real(res->coupons[r]));
		if (json_object_size(jr))
			json_object_set_new(rec, jid, jr);
		else
			json_decref(jr);
		if (json_object_size(jt))
			json_object_set_new(tok, jid, jt);
		else
			json_decref(jt);
	}
	json_object_set_new(o, "instance", json_integer((json_int_t)k));
	json_object_set(o, "alloc", alloc);
	if (json_object_size(coup))
		json_object_set(o, "coupons", coup);
	if (json_object_size(rec))
		json_object_set(o, "records", rec);
	if (json_object_size(tok))
		json_object_set(o, "tokens", tok);
	if (!isnan(res->effective))
		json_object_set_new(o, "effective", json_real(res->effective));
	line = json_dumps(o, JSON_REAL_PRECISION(12));
out:
	json_decref(o);
	json_decref(alloc);
	json_decref(coup);
	json_decref(rec);
	json_decref(tok);
	return line;
}

int sim_decide_run(const sim_decide *d, const qos_policy_ops *ops, const qos_param *extra,
		   size_t n_extra, FILE *out, char *err, size_t errlen)
{
	qos_param *pv = NULL;
	void *state = NULL;
	int created = 0, rc = 0;
	size_t np = 0, cells = 0;
	double *alloc = NULL, *coupons = NULL, *records = NULL;
	int64_t *tokens = NULL;
	qos_job *jobs = NULL;
	const char **ost_ids = NULL;

	/* Merge: command-line values replace the file's for the same key. */
	pv = calloc(d->n_params + n_extra + 1, sizeof(*pv));
	if (!pv) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < d->n_params; i++) {
		size_t e;
		for (e = 0; e < n_extra; e++)
			if (strcmp(extra[e].key, d->params[i].key) == 0)
				break;
		if (e == n_extra)
			pv[np++] = d->params[i];
	}
	for (size_t e = 0; e < n_extra; e++)
		pv[np++] = extra[e];
	qos_params params = {.v = pv, .n = np, .seed = d->seed};
	rc = ops->create(&params, &state);
	if (rc) {
		char list[256];
		sim_json_fail(err, errlen, "policy %s rejected the parameters (given: %s): %s", ops->name,
		     param_list(pv, np, list, sizeof(list)), strerror(-rc));
		goto out;
	}
	created = 1;

	for (size_t k = 0; k < d->n_inst; k++)
		if (d->inst[k].n_jobs * d->n_osts > cells)
			cells = d->inst[k].n_jobs * d->n_osts;
	cells = cells ? cells : 1;
	alloc = calloc(cells, sizeof(*alloc));
	records = calloc(cells, sizeof(*records));
	tokens = calloc(cells, sizeof(*tokens));
	coupons = calloc(d->n_jobs + 1, sizeof(*coupons));
	jobs = calloc(d->n_jobs + 1, sizeof(*jobs));
	ost_ids = calloc(d->n_osts, sizeof(*ost_ids));
	if (!alloc || !records || !tokens || !coupons || !jobs || !ost_ids) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t o = 0; o < d->n_osts; o++)
		ost_ids[o] = d->ost_ids[o];

	for (size_t k = 0; k < d->n_inst; k++) {
		const sim_decide_inst *ins = &d->inst[k];
		size_t c = ins->n_jobs * d->n_osts;
		for (size_t r = 0; r < ins->n_jobs; r++)
			jobs[r] = d->jobs[ins->job_ix[r]];
		/* Sentinels tell which optional outputs the policy wrote. */
		for (size_t i = 0; i < c; i++) {
			alloc[i] = 0;
			records[i] = NAN;
			tokens[i] = INT64_MIN;
		}
		for (size_t r = 0; r < ins->n_jobs; r++)
			coupons[r] = NAN;
		qos_instance in = {
			.n_osts = d->n_osts,
			.n_jobs = ins->n_jobs,
			.ost_ids = ost_ids,
			.capacity = d->capacity,
			.jobs = jobs,
			.active = ins->active,
			.usage = ins->usage,
			.demand = ins->demand,
			.period = ins->period,
			.now = ins->now,
		};
		qos_result res = {.alloc = alloc, .coupons = coupons, .records = records,
				  .tokens = tokens, .effective = NAN};
		rc = ops->decide(state, &in, &res);
		if (rc) {
			sim_json_fail(err, errlen, "instances[%zu]: policy %s failed (%s)", k, ops->name,
			     strerror(-rc));
			goto out;
		}
		char *line = result_line(d, ins, k, &res);
		if (!line) {
			rc = -ENOMEM;
			goto out;
		}
		fprintf(out, "%s\n", line);
		free(line);
	}
	fflush(out);
out:
	if (created)
		ops->destroy(state);
	free(pv);
	free(alloc);
	free(records);
	free(tokens);
	free(coupons);
	free(jobs);
	free(ost_ids);
	return rc;
}
