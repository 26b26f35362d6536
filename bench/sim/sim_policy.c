/* sim_policy.c — policy lookup and the private "sim-equal" policy. */
#include "bench/sim/sim_policy.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int equal_create(const qos_params *params, void **state)
{
	static const char *const known[] = {NULL};
	int rc = qos_params_check(params, known);
	if (rc)
		return rc;
	*state = NULL; /* stateless */
	return 0;
}

static int equal_decide(void *state, const qos_instance *in, qos_result *res)
{
	if (!in || !res || !res->alloc || (in->n_osts && !in->capacity) ||
	    (in->n_jobs && (!in->jobs || !in->active)))
		return -EINVAL;
	double eff = 0;
	for (size_t o = 0; o < in->n_osts; o++) {
		size_t n = 0;
		for (size_t j = 0; j < in->n_jobs; j++)
			n += in->active[j * in->n_osts + o] != 0;
		for (size_t j = 0; j < in->n_jobs; j++) {
			size_t ix = j * in->n_osts + o;
			res->alloc[ix] = in->active[ix] ? in->capacity[o] / (double)n : 0;
		}
	}
	/* Objective: effective bandwidth, each job at its slowest OST's pace. */
	for (size_t j = 0; j < in->n_jobs; j++) {
		double b = -1;
		size_t cnt = 0;
		for (size_t o = 0; o < in->n_osts; o++) {
			size_t ix = j * in->n_osts + o;
			if (!in->active[ix])
				continue;
			if (b < 0 || res->alloc[ix] < b)
				b = res->alloc[ix];
			cnt++;
		}
		if (cnt)
			eff += b * (double)cnt;
	}
	res->effective = eff;
	return 0;
}

static void equal_destroy(void *state) { (void)state; }

const qos_policy_ops sim_policy_equal = {
	.name = "sim-equal",
	.summary = "pfs-sim's own per-OST equal share (POFS without weights), for tests",
	.create = equal_create,
	.decide = equal_decide,
	.destroy = equal_destroy,
};

const qos_policy_ops *sim_policy_find(const char *name)
{
	const qos_policy_ops *p;
	if (!name)
		return NULL;
	p = qos_policy_find(name);
	if (p)
		return p;
	if (strcmp(name, sim_policy_equal.name) == 0)
		return &sim_policy_equal;
	return NULL;
}
