/* padll.c — PADLL control algorithms (padll.txt sec. IV): uniform,
 * priority, max-min proportional sharing and PSFA (Algorithm 1), and their
 * qos/policy.h wrappers (one operation class per instance "OST").
 *
 * The dynamic algorithms are water-fills: sort the jobs by what they ask
 * for, then each in turn gets min(ask, what is left / jobs left).  A job
 * asking less than its fair share leaves the rest to the larger ones,
 * which is max-min fairness; sorting costs O(n log n). */
#include "qos/padll.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct pd_key {
	double ask;
	size_t i;
} pd_key;

static int pd_key_cmp(const void *a, const void *b)
{
	const pd_key *x = a, *y = b;
	if (x->ask < y->ask)
		return -1;
	if (x->ask > y->ask)
		return 1;
	return (x->i > y->i) - (x->i < y->i);
}

static int pd_max_valid(double Max_R)
{
	return isfinite(Max_R) && Max_R >= 0;
}

/* demand_i <= 0 means "no limit". */
static double pd_demand(double d)
{
	return d > 0 ? d : INFINITY;
}

/* Water-fill Max_R over ask[] (may hold +inf): rate[i] = min(ask[i],
 * left / jobs left) in increasing order of ask.  Returns the rate left. */
static int pd_waterfill(double Max_R, const double *ask, size_t n,
			double *rate, double *left_out)
{
	pd_key *k = malloc((n ? n : 1) * sizeof(*k));
	if (!k)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		k[i].ask = ask[i];
		k[i].i = i;
	}
	qsort(k, n, sizeof(*k), pd_key_cmp);
	double left_R = Max_R;                            /* Alg. 1 line 2 */
	for (size_t s = 0; s < n; s++) {
		double fair_share = left_R / (double)(n - s); /* line 4 */
		double r = fmin(k[s].ask, fair_share);        /* lines 7, 9 */
		rate[k[s].i] = r;
		left_R -= r;                                  /* line 10 */
		if (left_R < 0)
			left_R = 0; /* float rounding only */
	}
	free(k);
	*left_out = left_R;
	return 0;
}

/* Weight of job i for the static policies (NULL or <= 0: 1). */
static double pd_weight(const double *w, size_t i)
{
	return w && w[i] > 0 ? w[i] : 1.0;
}

int qos_padll_static(double Max_R, const double *w, size_t n, double W,
		     double *rate)
{
	double sum = 0;

	if (!pd_max_valid(Max_R) || !(W >= 0) || isinf(W) || (n && !rate))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (w && (isnan(w[i]) || isinf(w[i])))
			return -EINVAL;
		sum += pd_weight(w, i);
	}
	/* more jobs than configured: shrink rather than exceed Max_R */
	if (sum > W)
		W = sum;
	for (size_t i = 0; i < n; i++)
		rate[i] = Max_R * pd_weight(w, i) / W;
	return 0;
}

int qos_padll_uniform(double Max_R, size_t n, double *rate)
{
	return qos_padll_static(Max_R, NULL, n, (double)n, rate);
}

int qos_padll_priority(double Max_R, const double *w, size_t n, double *rate)
{
	if (n && !w)
		return -EINVAL;
	return qos_padll_static(Max_R, w, n, 0, rate);
}

int qos_padll_maxmin(double Max_R, const double *demand, size_t n,
		     double *rate, double *left)
{
	double *ask = NULL, l = 0;
	int rc = 0;

	if (!pd_max_valid(Max_R) || (n && (!demand || !rate)))
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (isnan(demand[i]))
			return -EINVAL;
	ask = malloc((n ? n : 1) * sizeof(*ask));
	if (!ask)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		ask[i] = pd_demand(demand[i]);
	/* An idle system keeps all of Max_R as leftover. */
	l = Max_R;
	if (n)
		rc = pd_waterfill(Max_R, ask, n, rate, &l);
	if (!rc && left)
		*left = l;
	free(ask);
	return rc;
}

int qos_padll_proportional(double Max_R, const double *demand, size_t n,
			   double *rate)
{
	double left = 0, sum = 0;
	int rc = qos_padll_maxmin(Max_R, demand, n, rate, &left);
	if (rc || n == 0)
		return rc;
	/* Leftover only remains when every demand is met, so every demand
	 * is finite here and Σ demand > 0. */
	for (size_t i = 0; i < n; i++)
		sum += pd_demand(demand[i]);
	if (left > 0 && isfinite(sum) && sum > 0)
		for (size_t i = 0; i < n; i++)
			rate[i] += left * pd_demand(demand[i]) / sum;
	return 0;
}

int qos_padll_psfa(double Max_R, const double *demand, const double *usage,
		   size_t n, double epsilon, double *rate)
{
	double *ask = NULL, left_R = Max_R, total_usage = 0;
	int rc = 0;

	if (!pd_max_valid(Max_R) || (n && (!demand || !usage || !rate)) ||
	    !(epsilon >= 0 && epsilon <= 1))
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (isnan(demand[i]) || !isfinite(usage[i]) || usage[i] < 0)
			return -EINVAL;
	if (n == 0)
		return 0;
	ask = malloc(n * sizeof(*ask));
	if (!ask)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		double demand_i = pd_demand(demand[i]), usage_i = usage[i];
		if (usage_i <= demand_i) {                        /* line 5 */
			/* line 6: threshold_i = (demand_i - usage_i)·ε; with no
			 * limit it is unbounded unless ε = 0 */
			double threshold_i = isinf(demand_i)
				? (epsilon > 0 ? INFINITY : 0)
				: (demand_i - usage_i) * epsilon;
			ask[i] = usage_i + threshold_i;           /* line 7 */
		} else {
			ask[i] = demand_i;                         /* line 9 */
		}
	}
	rc = pd_waterfill(Max_R, ask, n, rate, &left_R);  /* lines 2-10 */
	if (rc)
		goto out;
	for (size_t i = 0; i < n; i++)                     /* line 11 */
		total_usage += usage[i];
	for (size_t i = 0; i < n; i++) {                   /* lines 12-14 */
		double usage_proportion_i = total_usage > 0
			? usage[i] / total_usage : 1.0 / (double)n;
		rate[i] += usage_proportion_i * left_R;
	}
out:
	free(ask);
	return rc;
}

/* ------------------------------------------------------------- policies */

enum pd_kind { PD_UNIFORM, PD_PRIORITY, PD_PROPORTIONAL, PD_PSFA };

typedef struct pd_policy {
	enum pd_kind kind;
	double epsilon;
	double W;        /* static: configured population weight, 0 = none */
	double W_seen;   /* static without W: the largest population so far */
} pd_policy;

static int pd_create(enum pd_kind kind, const qos_params *params, void **state)
{
	static const char *const none[] = {NULL};
	static const char *const uniform[] = {"jobs", NULL};
	static const char *const priority[] = {"weight_sum", NULL};
	static const char *const psfa[] = {"epsilon", NULL};
	const char *const *known = kind == PD_PSFA ? psfa
				 : kind == PD_UNIFORM ? uniform
				 : kind == PD_PRIORITY ? priority : none;
	if (!state)
		return -EINVAL;
	int rc = qos_params_check(params, known);
	if (rc)
		return rc;
	double eps = qos_param_get(params, "epsilon", QOS_PADLL_EPSILON_DEFAULT);
	double W = qos_param_get(params, kind == PD_UNIFORM ? "jobs" : "weight_sum", 0);
	if (!(eps >= 0 && eps <= 1) || !(W >= 0) || isinf(W) ||
	    (kind == PD_UNIFORM && W != floor(W)))
		return -EINVAL;
	pd_policy *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->kind = kind;
	p->epsilon = eps;
	p->W = kind == PD_UNIFORM || kind == PD_PRIORITY ? W : 0;
	*state = p;
	return 0;
}

static int pd_create_uniform(const qos_params *pr, void **s) { return pd_create(PD_UNIFORM, pr, s); }
static int pd_create_priority(const qos_params *pr, void **s) { return pd_create(PD_PRIORITY, pr, s); }
static int pd_create_proportional(const qos_params *pr, void **s) { return pd_create(PD_PROPORTIONAL, pr, s); }
static int pd_create_psfa(const qos_params *pr, void **s) { return pd_create(PD_PSFA, pr, s); }

static void pd_destroy(void *state)
{
	free(state);
}

static int pd_decide(void *state, const qos_instance *in, qos_result *res)
{
	pd_policy *p = state;
	size_t no, nj;
	double *dem = NULL, *use = NULL, *w = NULL, *rate = NULL;
	size_t *jidx = NULL;
	int rc = 0;

	if (!p || !in || !res || !res->alloc)
		return -EINVAL;
	no = in->n_osts;
	nj = in->n_jobs;
	if ((no && !in->capacity) || (nj && !in->jobs))
		return -EINVAL;
	size_t m = nj ? nj : 1;
	dem = malloc(m * sizeof(*dem));
	use = malloc(m * sizeof(*use));
	w = malloc(m * sizeof(*w));
	rate = malloc(m * sizeof(*rate));
	jidx = malloc(m * sizeof(*jidx));
	if (!dem || !use || !w || !rate || !jidx) {
		rc = -ENOMEM;
		goto out;
	}

	/* Static policies: the configured population, or the largest one
	 * seen so far (weights of every job of the instance, active or not). */
	double W = 0;
	if (p->kind == PD_UNIFORM || p->kind == PD_PRIORITY) {
		double sum = 0;
		for (size_t j = 0; j < nj; j++) {
			double wj = p->kind == PD_UNIFORM ? 1.0 : in->jobs[j].priority;
			if (isnan(wj) || isinf(wj)) {
				rc = -EINVAL;
				goto out;
			}
			sum += wj > 0 ? wj : 1.0;
		}
		if (sum > p->W_seen)
			p->W_seen = sum;
		W = p->W > 0 ? p->W : p->W_seen;
	}

	res->effective = 0;
	for (size_t o = 0; o < no; o++) {
		double Max_R = in->capacity[o];
		int dynamic = p->kind == PD_PROPORTIONAL || p->kind == PD_PSFA;
		size_t n = 0;
		for (size_t j = 0; j < nj; j++) {
			size_t e = j * no + o;
			res->alloc[e] = 0;
			if (dynamic && in->active && !in->active[e])
				continue;
			dem[n] = in->demand ? in->demand[e] : in->jobs[j].limit;
			use[n] = in->usage ? in->usage[e] : 0;
			w[n] = in->jobs[j].priority;
			jidx[n++] = j;
		}
		switch (p->kind) {
		case PD_UNIFORM:
			rc = qos_padll_static(Max_R, NULL, n, W, rate);
			break;
		case PD_PRIORITY:
			rc = qos_padll_static(Max_R, w, n, W, rate);
			break;
		case PD_PROPORTIONAL:
			rc = qos_padll_proportional(Max_R, dem, n, rate);
			break;
		case PD_PSFA:
			rc = qos_padll_psfa(Max_R, dem, use, n, p->epsilon, rate);
			break;
		}
		if (rc)
			goto out;
		for (size_t k = 0; k < n; k++) {
			size_t e = jidx[k] * no + o;
			res->alloc[e] = rate[k];
			res->effective += fmin(rate[k], use[k]);
		}
	}
out:
	free(dem);
	free(use);
	free(w);
	free(rate);
	free(jidx);
	return rc;
}

const qos_policy_ops qos_policy_uniform = {
	.name = "uniform",
	.summary = "PADLL uniform: every job gets Max_R / N, fixed (param: jobs = N)",
	.create = pd_create_uniform,
	.decide = pd_decide,
	.destroy = pd_destroy,
};

const qos_policy_ops qos_policy_priority = {
	.name = "priority",
	.summary = "PADLL priority: Max_R·w_i / W by job priority, fixed "
		   "(param: weight_sum = W)",
	.create = pd_create_priority,
	.decide = pd_decide,
	.destroy = pd_destroy,
};

const qos_policy_ops qos_policy_proportional = {
	.name = "proportional",
	.summary = "PADLL proportional sharing: max-min fair with demands, "
		   "leftover by demand",
	.create = pd_create_proportional,
	.decide = pd_decide,
	.destroy = pd_destroy,
};

const qos_policy_ops qos_policy_psfa = {
	.name = "psfa",
	.summary = "PADLL PSFA (Alg. 1): max-min over usage+ε headroom, leftover "
		   "by usage (param: epsilon)",
	.create = pd_create_psfa,
	.decide = pd_decide,
	.destroy = pd_destroy,
};
