/* adapt.c — AdapTBF per OST: observations in, rule actions out (see
 * adapt.h).  The token algorithm and records are qos/adaptbf's. */
#include "oss/adapt.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "oss/jobmap.h"
#include "qos/adaptbf.h"

typedef struct ajob {
	oss_jobmap_node node;  /* first: linked by it */
	int64_t tokens;        /* α_x this period, -1 = inactive */
	double record;
	int ruled;             /* a SET was issued and no CLEAR since */
	unsigned absent;       /* periods since last active */
	uint64_t seen;         /* period number last active */
	int fresh;             /* created by the period in progress */
} ajob;

struct oss_adapt {
	qos_adaptbf_ost *ost;  /* created by the first period (needs T, Δt) */
	oss_jobmap jobs;
	unsigned forget;
	double T, dt;
	uint64_t period;
};

int oss_adapt_create(unsigned forget_periods, oss_adapt **out)
{
	oss_adapt *a = calloc(1, sizeof(*a));

	if (!a)
		return -ENOMEM;
	if (oss_jobmap_init(&a->jobs, 256)) {
		free(a);
		return -ENOMEM;
	}
	a->forget = forget_periods ? forget_periods : OSS_ADAPT_FORGET_PERIODS;
	*out = a;
	return 0;
}

static void free_job(oss_jobmap_node *n) { free(n); }

void oss_adapt_destroy(oss_adapt *a)
{
	if (!a)
		return;
	qos_adaptbf_ost_destroy(a->ost);
	oss_jobmap_fini(&a->jobs, free_job);
	free(a);
}

/* Undo the entries a failed period created. */
static void drop_fresh(oss_adapt *a)
{
	oss_jobmap_iter it = { 0 };
	oss_jobmap_node *n;

	while ((n = oss_jobmap_next(&a->jobs, &it))) {
		if (((ajob *)n)->fresh) {
			oss_jobmap_remove(&a->jobs, n);
			free(n);
		}
	}
}

/* The depth of a job's bucket: Lustre's 3, but never more than the period's
 * tokens (a depth above α_x would let a job that saved up run past its
 * share at the start of a period), and at least 1 (a bucket needs one). */
static double depth_for(int64_t tokens)
{
	double d = (double)tokens;

	return d > OSS_ADAPT_DEPTH_MAX ? OSS_ADAPT_DEPTH_MAX : d < 1 ? 1 : d;
}

int oss_adapt_period(oss_adapt *a, double T, double dt, const oss_adapt_obs *obs, size_t n,
		     oss_adapt_act **acts, size_t *nacts)
{
	qos_adaptbf_obs *q = NULL;
	int64_t *tok = NULL;
	double *rec = NULL;
	ajob **js = NULL;
	oss_adapt_act *v = NULL;
	oss_jobmap_iter it = { 0 };
	oss_jobmap_node *node;
	size_t k = 0;
	int rc = 0;

	*acts = NULL;
	*nacts = 0;
	if (!isfinite(T) || T < 0 || !isfinite(dt) || dt <= 0)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!obs[i].job || strlen(obs[i].job) > PFS_JOBID_MAX || !isfinite(obs[i].d) ||
		    obs[i].d < 0 || !isfinite(obs[i].nodes) || obs[i].nodes <= 0)
			return -EINVAL;
	if (!a->ost) {
		rc = qos_adaptbf_ost_create(T, dt, &a->ost);
		if (rc)
			return rc;
		a->T = T;
		a->dt = dt;
	} else if (T != a->T || dt != a->dt) {
		rc = qos_adaptbf_ost_set_rate(a->ost, T, dt);
		if (rc)
			return rc;
		a->T = T;
		a->dt = dt;
	}
	q = calloc(n ? n : 1, sizeof(*q));
	tok = calloc(n ? n : 1, sizeof(*tok));
	rec = calloc(n ? n : 1, sizeof(*rec));
	js = calloc(n ? n : 1, sizeof(*js));
	/* At most one action per job known after this period. */
	v = calloc(a->jobs.n + n + 1, sizeof(*v));
	if (!q || !tok || !rec || !js || !v) {
		rc = -ENOMEM;
		goto out;
	}
	a->period++;
	for (size_t i = 0; i < n; i++) {
		ajob *j = (ajob *)oss_jobmap_find(&a->jobs, obs[i].job);

		if (!j) {
			j = calloc(1, sizeof(*j));
			if (!j) {
				rc = -ENOMEM;
				goto undo;
			}
			oss_jobmap_set_id(&j->node, obs[i].job);
			j->tokens = -1;
			j->fresh = 1;
			oss_jobmap_insert(&a->jobs, &j->node);
		} else if (j->seen == a->period) {
			rc = -EINVAL; /* the same job twice */
			goto undo;
		}
		j->seen = a->period;
		js[i] = j;
		q[i].id = j->node.id;
		q[i].nodes = obs[i].nodes;
		q[i].d = obs[i].d;
	}
	/* Eq. (1)-(25) for this OST: whole tokens for the next Δt. */
	rc = qos_adaptbf_ost_period(a->ost, q, n, tok, rec);
	if (rc)
		goto undo;
	for (size_t i = 0; i < n; i++) {
		ajob *j = js[i];
		int same = j->ruled && j->tokens == tok[i];
		oss_adapt_act *x;

		j->fresh = 0;
		j->tokens = tok[i];
		j->record = rec[i];
		j->ruled = 1;
		j->absent = 0;
		if (same)
			continue; /* the rule already holds this rate */
		x = &v[k++];
		memcpy(x->job, j->node.id, sizeof(x->job));
		x->what = OSS_ADAPT_SET;
		x->tokens = tok[i];
		x->rate = (double)tok[i] / dt;
		x->depth = depth_for(tok[i]);
		x->record = rec[i];
	}
	while ((node = oss_jobmap_next(&a->jobs, &it))) {
		ajob *j = (ajob *)node;
		oss_adapt_act *x;

		if (j->seen == a->period)
			continue;
		j->tokens = -1;
		qos_adaptbf_ost_record(a->ost, j->node.id, &j->record);
		if (++j->absent >= a->forget) {
			x = &v[k++];
			memcpy(x->job, j->node.id, sizeof(x->job));
			x->what = OSS_ADAPT_FORGET;
			x->record = j->record;
			qos_adaptbf_ost_forget(a->ost, j->node.id);
			oss_jobmap_remove(&a->jobs, node);
			free(j);
		} else if (j->ruled) {
			j->ruled = 0;
			x = &v[k++];
			memcpy(x->job, j->node.id, sizeof(x->job));
			x->what = OSS_ADAPT_CLEAR;
			x->record = j->record;
		}
	}
	*acts = k ? v : NULL;
	*nacts = k;
	if (k)
		v = NULL;
	goto out;
undo:
	/* Before the fresh entries are freed: js may point at them.  seen is
	 * only compared with the period in progress, so 0 is a safe value. */
	for (size_t i = 0; i < n; i++)
		if (js[i])
			js[i]->seen = 0;
	drop_fresh(a);
	a->period--;
out:
	free(v);
	free(js);
	free(rec);
	free(tok);
	free(q);
	return rc;
}

int oss_adapt_job(const oss_adapt *a, const char *job, int64_t *tokens, double *record)
{
	const ajob *j = (const ajob *)oss_jobmap_find(&a->jobs, job);

	if (!j)
		return -ENOENT;
	*tokens = j->tokens;
	*record = j->record;
	return 0;
}

double oss_adapt_dt(const oss_adapt *a) { return a->ost ? a->dt : 0; }
size_t oss_adapt_njobs(const oss_adapt *a) { return a->jobs.n; }

int oss_adapt_ruled(const oss_adapt *a, char (**jobs)[PFS_JOBID_MAX + 1], size_t *n)
{
	oss_jobmap_iter it = { 0 };
	oss_jobmap_node *node;
	char (*v)[PFS_JOBID_MAX + 1] = malloc((a->jobs.n ? a->jobs.n : 1) * sizeof(*v));
	size_t k = 0;

	*jobs = NULL;
	*n = 0;
	if (!v)
		return -ENOMEM;
	while ((node = oss_jobmap_next(&a->jobs, &it)))
		if (((const ajob *)node)->ruled)
			memcpy(v[k++], node->id, sizeof(v[0]));
	*jobs = v;
	*n = k;
	return 0;
}
