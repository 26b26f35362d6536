/* static_policy.c — fixed priority-proportional shares per OST
 * (adaptbf.txt sec. IV "Static BW"; see static_policy.h). */
#include "qos/static_policy.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

static double static_weight(const qos_job *j)
{
	double n = j->nodes > 0 ? j->nodes : 1;
	double p = j->priority > 0 ? j->priority : 1;

	return n * p;
}

int qos_static_shares(const qos_instance *in, double *alloc)
{
	size_t J, O;

	if (!in || !alloc || (in->n_osts && !in->capacity) ||
	    (in->n_jobs && !in->jobs))
		return -EINVAL;
	J = in->n_jobs;
	O = in->n_osts;
	for (size_t o = 0; o < O; o++)
		if (!isfinite(in->capacity[o]) || in->capacity[o] < 0)
			return -EINVAL;
	for (size_t o = 0; o < O; o++) {
		double W = 0;

		for (size_t j = 0; j < J; j++)
			if (!in->active || in->active[j * O + o])
				W += static_weight(&in->jobs[j]);
		for (size_t j = 0; j < J; j++) {
			int on = !in->active || in->active[j * O + o];
			/* alloc_{j,o} = c_o * w_j / sum_k w_k over active k */
			alloc[j * O + o] = on && W > 0 ?
				in->capacity[o] * static_weight(&in->jobs[j]) / W : 0;
		}
	}
	return 0;
}

struct static_state {
	unsigned long decisions;
};

static int static_create(const qos_params *params, void **state)
{
	static const char *const known[] = { NULL };
	struct static_state *s;
	int rc = qos_params_check(params, known);

	if (rc)
		return rc;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	*state = s;
	return 0;
}

static int static_decide(void *state, const qos_instance *in, qos_result *res)
{
	struct static_state *s = state;
	size_t N;
	double eff = 0;
	int rc;

	if (!res)
		return -EINVAL;
	rc = qos_static_shares(in, res->alloc);
	if (rc)
		return rc;
	N = in->n_jobs * in->n_osts;
	for (size_t i = 0; i < N; i++)
		eff += in->usage ? fmin(res->alloc[i], in->usage[i]) : res->alloc[i];
	res->effective = eff;
	if (s)
		s->decisions++;
	return 0;
}

static void static_destroy(void *state)
{
	free(state);
}

const qos_policy_ops qos_policy_static = {
	.name = "static",
	.summary = "fixed shares of each OST in proportion to nodes x priority "
		   "of the jobs active on it (no params)",
	.create = static_create,
	.decide = static_decide,
	.destroy = static_destroy,
};
