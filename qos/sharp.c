/* sharp.c — SHARP rule-set search (ascar.txt Algorithm 1, Table II); see
 * sharp.h for the algorithm and where this departs from the paper. */
#include "qos/sharp.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SHARP_MAX_STEPS 32

qos_sharp_var qos_sharp_table2(int var)
{
	/* Table II: lower, upper, delta gran, search steps */
	switch (var) {
	case QOS_SHARP_M:
		return (qos_sharp_var){ 0.3, 2, 0.05, 4 };
	case QOS_SHARP_B:
		return (qos_sharp_var){ -2.3, 2.3, 0.3, 4 };
	case QOS_SHARP_TAU:
		return (qos_sharp_var){ 0, 70000, 500, 6 };
	default:
		return (qos_sharp_var){ 0, 0, 0, 0 };
	}
}

static int var_valid(const qos_sharp_var *v)
{
	return isfinite(v->lower) && isfinite(v->upper) && v->lower < v->upper &&
	       isfinite(v->delta_gran) && v->delta_gran > 0 &&
	       v->steps >= 1 && v->steps <= SHARP_MAX_STEPS;
}

double qos_sharp_step_size(const qos_sharp_var *v)
{
	/* step_size = ((var_upper_limit - var_lower_limit) / delta_gran)^(1/step) */
	return pow((v->upper - v->lower) / v->delta_gran, 1.0 / v->steps);
}

static double clampd(double x, double lo, double hi)
{
	return x < lo ? lo : x > hi ? hi : x;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int qos_sharp_values(const qos_sharp_var *v, double x, double *out, size_t cap)
{
	double tmp[2 * (SHARP_MAX_STEPS + 1) + 1];
	size_t n = 0, u = 0;
	double k, off;
	int S;

	if (!var_valid(v) || !isfinite(x))
		return -EINVAL;
	S = (int)v->steps;
	k = qos_sharp_step_size(v);
	x = clampd(x, v->lower, v->upper);
	tmp[n++] = x;
	/* Alg. 1 line 12: x +- g, x +- g*k, ..., x +- g*k^S; the last move
	 * spans the whole range, so every round can still reach far points
	 * while most candidates stay near x. */
	off = v->delta_gran;
	for (int i = 0; i <= S; i++) {
		tmp[n++] = clampd(x + off, v->lower, v->upper);
		tmp[n++] = clampd(x - off, v->lower, v->upper);
		off *= k;
	}
	qsort(tmp, n, sizeof(tmp[0]), cmp_double);
	for (size_t i = 0; i < n; i++)
		if (u == 0 || tmp[i] != tmp[u - 1])
			tmp[u++] = tmp[i];
	for (size_t i = 0; i < u && i < cap; i++)
		out[i] = tmp[i];
	return (int)u;
}

int qos_sharp_split(qos_ascar_ruleset *rs, size_t i)
{
	qos_ascar_rule r, *child;
	double mean[QOS_ASCAR_DIM];
	int cut[QOS_ASCAR_DIM], ncut = 0, count, made = 0;

	if (i >= rs->n || !(rs->r[i].hits > 0))
		return -EINVAL;
	r = rs->r[i];
	for (int d = 0; d < QOS_ASCAR_DIM; d++) {
		/* Alg. 1 line 29: split at the observed mean of each
		 * indicator, where that mean lies inside the box. */
		mean[d] = r.sum[d] / r.hits;
		cut[d] = mean[d] > r.lo[d] && mean[d] < r.hi[d];
		ncut += cut[d];
	}
	count = 1 << ncut;
	if (count > 1) {
		size_t need = rs->n + (size_t)count - 1;
		if (need > rs->cap) {
			size_t cap = rs->cap ? rs->cap : 8;
			while (cap < need)
				cap *= 2;
			qos_ascar_rule *nr = realloc(rs->r, cap * sizeof(*nr));
			if (!nr)
				return -ENOMEM;
			rs->r = nr;
			rs->cap = cap;
		}
	}
	for (int mask = 0; mask < (1 << QOS_ASCAR_DIM); mask++) {
		int skip = 0;
		for (int d = 0; d < QOS_ASCAR_DIM; d++)
			if ((mask & (1 << d)) && !cut[d])
				skip = 1;
		if (skip)
			continue;
		child = made == 0 ? &rs->r[i] : &rs->r[rs->n++];
		memset(child, 0, sizeof(*child));
		child->a = r.a;
		for (int d = 0; d < QOS_ASCAR_DIM; d++) {
			child->lo[d] = r.lo[d];
			child->hi[d] = r.hi[d];
			if (cut[d]) {
				if (mask & (1 << d))
					child->lo[d] = mean[d];
				else
					child->hi[d] = mean[d];
			}
		}
		made++;
	}
	return made;
}

static void rs_swap(qos_ascar_ruleset *a, qos_ascar_ruleset *b)
{
	qos_ascar_ruleset t = *a;

	*a = *b;
	*b = t;
}

struct sharp_run {
	const qos_sharp_params *p;
	qos_sharp_bench_fn bench;
	void *arg;
	qos_sharp_result *out;
	unsigned long max_evals;
};

/* Benchmark rs (stats cleared first) and remember it if it is the best so
 * far.  Returns 0, the callback's error, -ENOMEM, or 1 when the budget is
 * used up (rs was not run). */
static int sharp_eval(struct sharp_run *s, qos_ascar_ruleset *rs, double *score)
{
	int rc;

	if (s->max_evals && s->out->evals >= s->max_evals)
		return 1;
	qos_ascar_ruleset_clear_stats(rs);
	*score = -INFINITY;
	rc = s->bench(s->arg, rs, score);
	s->out->evals++;
	if (rc)
		return rc < 0 ? rc : -EINVAL;
	if (isnan(*score))
		*score = -INFINITY;
	if (*score > s->out->best_score) {
		rc = qos_ascar_ruleset_copy(&s->out->best, rs);
		if (rc)
			return rc;
		s->out->best_score = *score;
	}
	return 0;
}

static size_t hottest(const qos_ascar_ruleset *rs)
{
	size_t h = 0;

	for (size_t i = 1; i < rs->n; i++)
		if (rs->r[i].hits > rs->r[h].hits)
			h = i;
	return h;
}

/* One epoch's rounds on rule `hot` of cur (lines 10-28).  Leaves the
 * epoch's best set, with its statistics, in ebest. */
static int sharp_epoch(struct sharp_run *s, const qos_sharp_var *var,
		       qos_ascar_ruleset *cur, size_t hot, qos_ascar_ruleset *ebest)
{
	qos_ascar_ruleset cand, rbest;
	double vals[3][2 * (SHARP_MAX_STEPS + 1) + 1];
	double epoch_best = -INFINITY;
	int nv[3], rc = 0;

	qos_ascar_ruleset_init(&cand);
	qos_ascar_ruleset_init(&rbest);
	for (;;) {
		const qos_ascar_action a0 = cur->r[hot].a;
		const double x0[3] = { a0.m, a0.b, a0.tau };
		double round_best = -INFINITY, score;

		for (int d = 0; d < 3; d++) {
			nv[d] = qos_sharp_values(&var[d], x0[d], vals[d],
						 sizeof(vals[d]) / sizeof(vals[d][0]));
			if (nv[d] < 0) {
				rc = nv[d];
				goto out;
			}
		}
		/* Lines 12-22: the Cartesian product of the three lists. */
		for (int i = 0; i < nv[0]; i++)
			for (int j = 0; j < nv[1]; j++)
				for (int k = 0; k < nv[2]; k++) {
					rc = qos_ascar_ruleset_copy(&cand, cur);
					if (rc)
						goto out;
					cand.r[hot].a = (qos_ascar_action){
						vals[0][i], vals[1][j], vals[2][k] };
					rc = sharp_eval(s, &cand, &score);
					if (rc)
						goto out;
					if (score > round_best) {
						round_best = score;
						rs_swap(&rbest, &cand);
					}
				}
		if (rbest.n == 0)
			goto out; /* every candidate scored -inf or NaN */
		/* Lines 20 and 23-28: continue from the round's best; stop
		 * when the round did not beat the epoch's best. */
		rc = qos_ascar_ruleset_copy(cur, &rbest);
		if (rc)
			goto out;
		if (!(round_best > epoch_best))
			break;
		epoch_best = round_best;
		rc = qos_ascar_ruleset_copy(ebest, cur);
		if (rc)
			goto out;
	}
out:
	qos_ascar_ruleset_free(&cand);
	qos_ascar_ruleset_free(&rbest);
	return rc;
}

int qos_sharp_run(const qos_sharp_params *p, qos_sharp_bench_fn bench,
		  void *arg, qos_sharp_result *out)
{
	qos_sharp_var var[3];
	qos_ascar_ruleset cur, ebest;
	struct sharp_run s = { p, bench, arg, out, 0 };
	unsigned max_epochs;
	double score;
	int rc;

	qos_ascar_ruleset_init(&out->best);
	out->best_score = -INFINITY;
	out->epochs = 0;
	out->evals = 0;
	qos_ascar_ruleset_init(&cur);
	qos_ascar_ruleset_init(&ebest);
	if (!bench) {
		rc = -EINVAL;
		goto out;
	}
	for (int d = 0; d < 3; d++) {
		const qos_sharp_var *v = p ? &p->var[d] : NULL;
		if (!v || (v->lower == 0 && v->upper == 0 && v->delta_gran == 0 &&
			   v->steps == 0))
			var[d] = qos_sharp_table2(d);
		else
			var[d] = *v;
		if (!var_valid(&var[d])) {
			rc = -EINVAL;
			goto out;
		}
	}
	max_epochs = p && p->max_epochs ? p->max_epochs : 4;
	s.max_evals = p ? p->max_evals : 0;
	/* Line 3: one rule over the whole space, unless the caller starts
	 * from an earlier result. */
	if (p && p->start && p->start->n)
		rc = qos_ascar_ruleset_copy(&cur, p->start);
	else
		rc = qos_ascar_ruleset_default(&cur);
	if (rc)
		goto out;
	while (out->epochs < max_epochs) {
		size_t hot;

		/* Statistics of the current set name the hottest rule. */
		rc = sharp_eval(&s, &cur, &score);
		if (rc)
			break;
		hot = hottest(&cur);
		qos_ascar_ruleset_clear_stats(&ebest);
		ebest.n = 0;
		rc = sharp_epoch(&s, var, &cur, hot, &ebest);
		if (rc)
			break;
		out->epochs++;
		if (ebest.n == 0 || !(ebest.r[hot].hits > 0))
			break; /* nothing observed in the hottest rule: no split */
		/* Line 30: split the hottest rule of the epoch's best set. */
		rc = qos_sharp_split(&ebest, hot);
		if (rc < 0)
			break;
		rc = qos_ascar_ruleset_copy(&cur, &ebest);
		if (rc)
			break;
	}
	if (rc == 1)
		rc = 0; /* evaluation budget used up */
out:
	qos_ascar_ruleset_free(&cur);
	qos_ascar_ruleset_free(&ebest);
	return rc > 0 ? 0 : rc;
}

void qos_sharp_result_free(qos_sharp_result *r)
{
	qos_ascar_ruleset_free(&r->best);
}

/* ---- budgeted search (sharp.h "Budgeted search") ---- */

/* splitmix64: the caller's seed, no global state. */
static unsigned long long sm_next(unsigned long long *s)
{
	unsigned long long z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static size_t sm_below(unsigned long long *s, size_t n)
{
	return n ? (size_t)(sm_next(s) % n) : 0;
}

static int vars_resolve(const qos_sharp_var in[3], qos_sharp_var var[3])
{
	for (int d = 0; d < 3; d++) {
		const qos_sharp_var *v = &in[d];
		if (v->lower == 0 && v->upper == 0 && v->delta_gran == 0 && v->steps == 0)
			var[d] = qos_sharp_table2(d);
		else
			var[d] = *v;
		if (!var_valid(&var[d]))
			return -EINVAL;
	}
	return 0;
}

/* Draw an action from the grids around a0.  Returns 0 or -EINVAL. */
static int draw_action(const qos_sharp_var var[3], qos_ascar_action a0,
		       unsigned long long *seed, qos_ascar_action *out)
{
	double vals[2 * (SHARP_MAX_STEPS + 1) + 1];
	const double x0[3] = { a0.m, a0.b, a0.tau };
	double x[3];

	for (int d = 0; d < 3; d++) {
		int n = qos_sharp_values(&var[d], x0[d], vals, sizeof(vals) / sizeof(vals[0]));
		if (n <= 0)
			return -EINVAL;
		x[d] = vals[sm_below(seed, (size_t)n)];
	}
	*out = (qos_ascar_action){ x[0], x[1], x[2] };
	return 0;
}

static int action_eq(qos_ascar_action a, qos_ascar_action b)
{
	return a.m == b.m && a.b == b.b && a.tau == b.tau;
}

static size_t hot_or_any(const qos_ascar_ruleset *rs, unsigned long long *seed)
{
	size_t h = hottest(rs);

	return rs->r[h].hits > 0 ? h : sm_below(seed, rs->n);
}

int qos_sharp_search(const qos_sharp_budget *p, qos_sharp_bench_fn bench,
		     void *arg, qos_sharp_result *out)
{
	qos_sharp_var var[3];
	qos_ascar_ruleset start, cur, cand;
	struct sharp_run s = { NULL, bench, arg, out, 0 };
	unsigned long long seed;
	unsigned patience, stall = 0;
	double cur_score, score;
	int rc;

	qos_ascar_ruleset_init(&out->best);
	out->best_score = -INFINITY;
	out->epochs = 0;
	out->evals = 0;
	qos_ascar_ruleset_init(&start);
	qos_ascar_ruleset_init(&cur);
	qos_ascar_ruleset_init(&cand);
	if (!p || !bench || p->runs == 0 ||
	    (p->mode != QOS_SHARP_HILL && p->mode != QOS_SHARP_SAMPLED)) {
		rc = -EINVAL;
		goto out;
	}
	rc = vars_resolve(p->var, var);
	if (rc)
		goto out;
	seed = p->seed;
	s.max_evals = p->runs;
	patience = p->patience ? p->patience : (p->runs / 4 > 3 ? (unsigned)(p->runs / 4) : 3);
	if (p->start && p->start->n)
		rc = qos_ascar_ruleset_copy(&start, p->start);
	else
		rc = qos_ascar_ruleset_default(&start);
	if (!rc)
		rc = qos_ascar_ruleset_copy(&cur, &start);
	if (rc)
		goto out;
	rc = sharp_eval(&s, &cur, &cur_score);
	while (!rc) {
		if (p->mode == QOS_SHARP_SAMPLED) {
			rc = qos_ascar_ruleset_copy(&cand, &start);
			for (size_t i = 0; !rc && i < cand.n; i++)
				rc = draw_action(var, start.r[i].a, &seed, &cand.r[i].a);
		} else if (stall >= patience && cur.r[hottest(&cur)].hits > 0) {
			/* Alg. 1 line 30 on the current set; if nothing can
			 * be split, keep climbing. */
			rc = qos_ascar_ruleset_copy(&cand, &cur);
			if (!rc)
				rc = qos_sharp_split(&cand, hottest(&cur));
			if (rc > 1) {
				rc = sharp_eval(&s, &cand, &score);
				if (rc)
					break;
				out->epochs++;
				stall = 0;
				cur_score = score;
				rs_swap(&cur, &cand);
				continue;
			}
			stall = 0;
			if (rc < 0)
				break;
			rc = 0; /* nothing to split: climb on */
			continue;
		} else {
			size_t h = hot_or_any(&cur, &seed);
			qos_ascar_action a = cur.r[h].a;

			rc = qos_ascar_ruleset_copy(&cand, &cur);
			/* A draw equal to the current action wastes a run:
			 * draw again (a few times; a one-point grid cannot
			 * move). */
			for (int t = 0; !rc && t < 8 && action_eq(a, cur.r[h].a); t++)
				rc = draw_action(var, cur.r[h].a, &seed, &a);
			cand.r[h].a = a;
		}
		if (rc)
			break;
		rc = sharp_eval(&s, &cand, &score);
		if (rc)
			break;
		if (p->mode == QOS_SHARP_HILL) {
			if (score > cur_score) {
				cur_score = score;
				rs_swap(&cur, &cand);
				stall = 0;
			} else {
				stall++;
			}
		}
	}
	if (rc == 1)
		rc = 0; /* budget spent */
out:
	qos_ascar_ruleset_free(&start);
	qos_ascar_ruleset_free(&cur);
	qos_ascar_ruleset_free(&cand);
	return rc > 0 ? 0 : rc;
}

double qos_sharp_score(double tp, double p99, double tp_ref, double p99_ref,
		       double w)
{
	if (!isfinite(tp) || !isfinite(p99) || tp < 0 || p99 < 0)
		return -INFINITY;
	if (!(tp_ref > 0) || !isfinite(tp_ref))
		tp_ref = 1;
	if (!(p99_ref > 0) || !isfinite(p99_ref))
		p99_ref = 1;
	if (!(w >= 0))
		w = 0;
	if (w > 1)
		w = 1;
	return (1 - w) * tp / tp_ref - w * p99 / p99_ref;
}
