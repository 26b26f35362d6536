/* adaptbf.c — AdapTBF token allocation (adaptbf.txt sec. III-C), per-OST job
 * records, and the "adaptbf" policy.
 *
 * The algorithm works in whole tokens with per-job fractional remainders
 * (Eq. 23-25): every step computes a real-valued target per job, adds the
 * job's carried remainder, floors, and a largest-remainder pass fixes the
 * step's total.  Records move by exactly the whole tokens a job gave or got,
 * so a job's α + r is constant within a period and records sum to zero.
 * Job state per OST lives in an open-addressing hash table keyed by job id
 * (linear probing, load <= 1/2, deletion by re-inserting the rest of the
 * cluster), so one period is O(n log n) in the active jobs, not in the jobs
 * ever seen. */
#include "qos/adaptbf.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- algorithm */

typedef struct ab_rem {
	double rho;
	size_t k;
} ab_rem;

/* Largest remainder first; ties to the lower position so results do not
 * depend on qsort's instability. */
static int ab_rem_cmp(const void *a, const void *b)
{
	const ab_rem *x = a, *y = b;
	if (x->rho > y->rho)
		return -1;
	if (x->rho < y->rho)
		return 1;
	return (x->k > y->k) - (x->k < y->k);
}

/* Eq. (23)-(25) over the m jobs sel[0..m): whole[k] = ⌊raw[k] + ρ⌋ (not
 * below 0), ρ keeps the rest; then the largest-remainder rule of
 * sec. III-C-4 adds or removes single tokens until Σ whole = total. */
static void ab_apportion(qos_adaptbf_job *x, const size_t *sel, size_t m,
			 const double *raw, int64_t *whole, int64_t total,
			 ab_rem *rem)
{
	int64_t sum = 0;

	for (size_t k = 0; k < m; k++) {
		qos_adaptbf_job *j = &x[sel[k]];
		double v = raw[k] + j->rho;
		double f = floor(v);
		if (f < 0)
			f = 0;
		whole[k] = (int64_t)f;
		j->rho = v - f;
		sum += whole[k];
	}
	if (sum == total || m == 0)
		return;
	for (size_t k = 0; k < m; k++) {
		rem[k].rho = x[sel[k]].rho;
		rem[k].k = k;
	}
	qsort(rem, m, sizeof(*rem), ab_rem_cmp);
	/* Shortfall: the jobs owed most get one more token each; a second
	 * round is only reached if rounding drifted by more than m tokens. */
	while (sum < total) {
		for (size_t s = 0; s < m && sum < total; s++) {
			size_t k = rem[s].k;
			whole[k]++;
			x[sel[k]].rho -= 1.0;
			sum++;
		}
	}
	/* Excess: take from the jobs owed least (most ahead of their share). */
	while (sum > total) {
		int64_t before = sum;
		for (size_t s = m; s-- > 0 && sum > total;) {
			size_t k = rem[s].k;
			if (whole[k] == 0)
				continue;
			whole[k]--;
			x[sel[k]].rho += 1.0;
			sum--;
		}
		if (sum == before)
			break; /* all at zero: cannot happen with total >= 0 */
	}
}

static int ab_job_valid(const qos_adaptbf_job *j)
{
	return isfinite(j->n) && j->n > 0 && isfinite(j->d) && j->d >= 0 &&
	       isfinite(j->r) && isfinite(j->rho);
}

int qos_adaptbf_allocate(qos_adaptbf_job *x, size_t n, int64_t K)
{
	double *raw = NULL, *rRD = NULL;
	int64_t *a = NULL, *aRD = NULL, *w = NULL;
	size_t *sel = NULL;
	ab_rem *rem = NULL;
	double N = 0, Ts = 0, sumDF = 0;
	int rc = 0;

	if (K < 0 || (n > 0 && !x))
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!ab_job_valid(&x[i]))
			return -EINVAL;
	if (n == 0)
		return 0;

	raw = malloc(n * sizeof(*raw));
	rRD = malloc(n * sizeof(*rRD));
	a = malloc(n * sizeof(*a));
	aRD = malloc(n * sizeof(*aRD));
	w = malloc(n * sizeof(*w));
	sel = malloc(n * sizeof(*sel));
	rem = malloc(n * sizeof(*rem));
	if (!raw || !rRD || !a || !aRD || !w || !sel || !rem) {
		rc = -ENOMEM;
		goto out;
	}

	/* 1) Priority-based initial allocation. */
	for (size_t i = 0; i < n; i++)
		N += x[i].n;
	for (size_t i = 0; i < n; i++) {
		x[i].p = x[i].n / N;              /* Eq. (1) */
		raw[i] = (double)K * x[i].p;      /* Eq. (2): α_x = T_i·p_x·Δt */
		sel[i] = i;
	}
	ab_apportion(x, sel, n, raw, a, K, rem); /* Eq. (23)-(25) */

	/* 2) Redistribution of surplus tokens. */
	for (size_t i = 0; i < n; i++) {
		/* Eq. (3): u_x = d_x / α_x^{t-1}; without a previous allocation
		 * this period's α_x (or one token) stands in for it. */
		double prev = x[i].prev > 0 ? (double)x[i].prev
			    : a[i] > 0 ? (double)a[i] : 1.0;
		x[i].u = x[i].d / prev;
		/* Eq. (6) */
		x[i].DF = x[i].u > 1 ? x[i].u + x[i].u * x[i].p
				     : x[i].u * x[i].p;
		sumDF += x[i].DF;
		/* Eq. (4): T_s^x = α_x - d_x if α_x > d_x; Eq. (5): T_s = Σ */
		Ts += (double)a[i] > x[i].d ? (double)a[i] - x[i].d : 0;
	}
	if (Ts > 0 && sumDF > 0) {
		for (size_t i = 0; i < n; i++) {
			double Tsx = (double)a[i] > x[i].d ? (double)a[i] - x[i].d : 0;
			/* Eq. (7): α_RD = α - T_s^x + DF_x/ΣDF · T_s */
			raw[i] = (double)a[i] - Tsx + x[i].DF / sumDF * Ts;
		}
		ab_apportion(x, sel, n, raw, aRD, K, rem);
	} else {
		memcpy(aRD, a, n * sizeof(*a));
	}

	/* 3) Re-compensation.  x[i].r is still r_x^t here.
	 * Eq. (8): r_RD = r + (α - α_RD), in the whole tokens moved. */
	double C = 0, sumDFp = 0;
	size_t np = 0, nm = 0;
	for (size_t i = 0; i < n; i++) {
		rRD[i] = x[i].r + (double)(a[i] - aRD[i]);
		if (x[i].r > 0 && rRD[i] > 0) {        /* Eq. (9): J+ */
			/* Eq. (12): ū = d / α_RD (demand assumed to repeat) */
			double ubar = aRD[i] > 0 ? x[i].d / (double)aRD[i]
				    : x[i].d > 0 ? INFINITY : 0;
			/* Eq. (13): C = Σ_{J+} p·(max(1,u) + max(0,1-ū))/2 */
			C += x[i].p * (fmax(1.0, x[i].u) + fmax(0.0, 1.0 - ubar)) / 2;
			sumDFp += x[i].DF;
			np++;
		} else if (x[i].r < 0 && rRD[i] < 0) { /* Eq. (10): J- */
			nm++;
		}
	}
	/* Without a lender that can take tokens (Σ_{J+} DF > 0) nothing is
	 * reclaimed: Eq. (19) would have nobody to give T_R to.  From here on
	 * aRD[] is updated in place to α_RC. */
	int64_t TR = 0;
	if (np > 0 && nm > 0 && sumDFp > 0) {
		for (size_t i = 0; i < n; i++) {
			if (!(x[i].r < 0 && rRD[i] < 0))
				continue;
			/* Eq. (14): T_R^x = min(|r_x|, C·α_RD), also bounded by
			 * |r_RD| and α_RD (see header).  The paper floors C·α_RD;
			 * at a few tokens per period that is 0 for every small
			 * borrower (C < 1/α_RD), so lenders were never paid back.
			 * The fraction is carried instead, as Eq. (23)-(25) do for
			 * the other steps: the job gives ⌈e - ρ⌉ whole tokens and
			 * ρ keeps what it is owed back, so the long-run reclaim is
			 * exactly C·α_RD per period. */
			double e = fmin(fabs(x[i].r), C * (double)aRD[i]);
			e = fmin(e, fabs(rRD[i]));
			e = fmin(e, (double)aRD[i]);
			int64_t TRx = 0;
			if (e > 0) {
				/* |r|, |r_RD| and α_RD are whole: the cap stays whole */
				double cap = fmin(fmin(fabs(x[i].r), fabs(rRD[i])),
						  (double)aRD[i]);
				double whole = ceil(e - x[i].rho - 1e-9);
				if (whole < 0)
					whole = 0;
				if (whole > cap)
					whole = cap;
				TRx = (int64_t)whole;
				x[i].rho += (double)TRx - e;
			}
			aRD[i] -= TRx;   /* Eq. (15); r moves by Eq. (16) below */
			TR += TRx;       /* Eq. (17) */
		}
	}
	if (TR > 0) {
		size_t m = 0;
		int64_t total = TR;
		for (size_t i = 0; i < n; i++) {
			if (!(x[i].r > 0 && rRD[i] > 0))
				continue;
			/* Eq. (18)-(19): α_RC = α_RD + DF/Σ_{J+}DF · T_R */
			raw[m] = (double)aRD[i] + x[i].DF / sumDFp * (double)TR;
			total += aRD[i];
			sel[m++] = i;
		}
		ab_apportion(x, sel, m, raw, w, total, rem);
		for (size_t k = 0; k < m; k++)
			aRD[sel[k]] = w[k];
	}

	/* Records: α + r is invariant within the period (Eq. 7+8, 15+16,
	 * 19+20), so r_RC = r + α - α_RC in whole tokens. */
	for (size_t i = 0; i < n; i++) {
		x[i].r += (double)(a[i] - aRD[i]);
		x[i].alpha = aRD[i];
		x[i].prev = aRD[i];
	}
out:
	free(raw);
	free(rRD);
	free(a);
	free(aRD);
	free(w);
	free(sel);
	free(rem);
	return rc;
}

/* ---------------------------------------------------------- per-OST state */

typedef struct ab_ent {
	char id[QOS_ID_MAX];
	double r, rho;
	int64_t prev;
	uint64_t seen;  /* period number in which the job was last active */
	uint64_t keep;  /* policy sweep mark */
	int used;
} ab_ent;

struct qos_adaptbf_ost {
	double T, dt;
	double carry;       /* part of T_i·Δt not yet handed out as a token */
	ab_ent *tab;
	size_t cap, len;    /* cap is a power of two, len <= cap / 2 */
	uint64_t period;
};

static uint64_t ab_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return h;
}

static size_t ab_find(const qos_adaptbf_ost *o, const char *id)
{
	if (!o->cap)
		return SIZE_MAX;
	size_t mask = o->cap - 1;
	for (size_t i = ab_hash(id) & mask;; i = (i + 1) & mask) {
		if (!o->tab[i].used)
			return SIZE_MAX;
		if (strcmp(o->tab[i].id, id) == 0)
			return i;
	}
}

/* Place e in the table; capacity must already be there. */
static size_t ab_place(qos_adaptbf_ost *o, const ab_ent *e)
{
	size_t mask = o->cap - 1, i = ab_hash(e->id) & mask;
	while (o->tab[i].used)
		i = (i + 1) & mask;
	o->tab[i] = *e;
	o->tab[i].used = 1;
	o->len++;
	return i;
}

/* Make room for `more` new entries at load <= 1/2. */
static int ab_reserve(qos_adaptbf_ost *o, size_t more)
{
	size_t need = o->len + more, cap = o->cap ? o->cap : 16;
	while (cap < 2 * need)
		cap *= 2;
	if (cap == o->cap)
		return 0;
	ab_ent *old = o->tab;
	size_t ocap = o->cap;
	o->tab = calloc(cap, sizeof(*o->tab));
	if (!o->tab) {
		o->tab = old;
		return -ENOMEM;
	}
	o->cap = cap;
	o->len = 0;
	for (size_t i = 0; i < ocap; i++)
		if (old[i].used)
			ab_place(o, &old[i]);
	free(old);
	return 0;
}

/* Linear-probing deletion: empty slot i, then re-place the rest of its
 * cluster so no lookup stops early at the hole. */
static void ab_remove_at(qos_adaptbf_ost *o, size_t i)
{
	size_t mask = o->cap - 1;
	o->tab[i].used = 0;
	o->len--;
	for (size_t j = (i + 1) & mask; o->tab[j].used; j = (j + 1) & mask) {
		ab_ent e = o->tab[j];
		o->tab[j].used = 0;
		o->len--;
		ab_place(o, &e);
	}
}

static int ab_rate_valid(double T, double dt)
{
	/* T·Δt must fit an int64 token count with room for the carry. */
	return isfinite(T) && T >= 0 && isfinite(dt) && dt > 0 && T * dt < 4e18;
}

int qos_adaptbf_ost_create(double T, double dt, qos_adaptbf_ost **out)
{
	if (!out || !ab_rate_valid(T, dt))
		return -EINVAL;
	qos_adaptbf_ost *o = calloc(1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	o->T = T;
	o->dt = dt;
	*out = o;
	return 0;
}

void qos_adaptbf_ost_destroy(qos_adaptbf_ost *ost)
{
	if (!ost)
		return;
	free(ost->tab);
	free(ost);
}

int qos_adaptbf_ost_set_rate(qos_adaptbf_ost *ost, double T, double dt)
{
	if (!ost || !ab_rate_valid(T, dt))
		return -EINVAL;
	ost->T = T;
	ost->dt = dt;
	return 0;
}

/* -EINVAL if two observations name the same job: a throwaway hash set of
 * positions keeps this O(n) where comparing all pairs would dominate a
 * period with many jobs. */
static int ab_check_unique(const qos_adaptbf_obs *obs, size_t n)
{
	size_t cap = 16, *set;
	int rc = 0;

	while (cap < 2 * n)
		cap *= 2;
	set = malloc(cap * sizeof(*set));
	if (!set)
		return -ENOMEM;
	for (size_t i = 0; i < cap; i++)
		set[i] = SIZE_MAX;
	for (size_t i = 0; i < n && !rc; i++) {
		size_t h = ab_hash(obs[i].id) & (cap - 1);
		for (; set[h] != SIZE_MAX; h = (h + 1) & (cap - 1))
			if (strcmp(obs[set[h]].id, obs[i].id) == 0) {
				rc = -EINVAL;
				break;
			}
		set[h] = i;
	}
	free(set);
	return rc;
}

int qos_adaptbf_ost_period(qos_adaptbf_ost *ost, const qos_adaptbf_obs *obs,
			   size_t n, int64_t *tokens, double *records)
{
	qos_adaptbf_job *x = NULL;
	size_t *slot = NULL;
	int rc = 0;

	if (!ost || (n > 0 && (!obs || !tokens)))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (!obs[i].id || strlen(obs[i].id) >= QOS_ID_MAX ||
		    !isfinite(obs[i].nodes) || obs[i].nodes <= 0 ||
		    !isfinite(obs[i].d) || obs[i].d < 0)
			return -EINVAL;
	}
	if (n > 0) {
		x = calloc(n, sizeof(*x));
		slot = malloc(n * sizeof(*slot));
		if (!x || !slot) {
			rc = -ENOMEM;
			goto out;
		}
	}
	rc = ab_reserve(ost, n);
	if (rc)
		goto out;

	/* Find each job's state without creating it yet, so a failure
	 * below leaves the table as it was; a duplicate id is an error. */
	uint64_t now = ost->period + 1;
	for (size_t i = 0; i < n; i++) {
		size_t s = ab_find(ost, obs[i].id);
		slot[i] = s;
		x[i].n = obs[i].nodes;
		x[i].d = obs[i].d;
		x[i].prev = -1;
		if (s != SIZE_MAX) {
			ab_ent *e = &ost->tab[s];
			x[i].r = e->r;
			x[i].rho = e->rho;
			/* α^{t-1} only counts if the job had it last period */
			x[i].prev = e->seen == ost->period ? e->prev : -1;
		}
	}
	rc = ab_check_unique(obs, n);
	if (rc)
		goto out;

	double v = ost->T * ost->dt + ost->carry;
	double K = floor(v);
	rc = qos_adaptbf_allocate(x, n, (int64_t)K);
	if (rc)
		goto out;
	ost->carry = v - K;
	ost->period = now;

	for (size_t i = 0; i < n; i++) {
		ab_ent *e;
		if (slot[i] == SIZE_MAX) {
			ab_ent fresh = {0};
			strcpy(fresh.id, obs[i].id);
			e = &ost->tab[ab_place(ost, &fresh)];
		} else {
			e = &ost->tab[slot[i]];
		}
		e->r = x[i].r;
		e->rho = x[i].rho;
		e->prev = x[i].alpha;
		e->seen = now;
		tokens[i] = x[i].alpha;
		if (records)
			records[i] = x[i].r;
	}
out:
	free(x);
	free(slot);
	return rc;
}

int qos_adaptbf_ost_record(const qos_adaptbf_ost *ost, const char *id, double *r)
{
	if (!ost || !id || !r)
		return -EINVAL;
	size_t s = ab_find(ost, id);
	*r = s == SIZE_MAX ? 0 : ost->tab[s].r;
	return s == SIZE_MAX ? -ENOENT : 0;
}

int qos_adaptbf_ost_forget(qos_adaptbf_ost *ost, const char *id)
{
	if (!ost || !id)
		return -EINVAL;
	size_t s = ab_find(ost, id);
	if (s == SIZE_MAX)
		return -ENOENT;
	ab_remove_at(ost, s);
	return 0;
}

size_t qos_adaptbf_ost_njobs(const qos_adaptbf_ost *ost)
{
	return ost ? ost->len : 0;
}

double qos_adaptbf_ost_record_sum(const qos_adaptbf_ost *ost)
{
	double s = 0;
	for (size_t i = 0; ost && i < ost->cap; i++)
		if (ost->tab[i].used)
			s += ost->tab[i].r;
	return s;
}

/* Drop every job whose keep mark is not `mark`.  After a removal the slot
 * is examined again, since the rest of the cluster may have moved into it;
 * entries only ever move to slots in [i, old position], so none is missed. */
static void ab_sweep(qos_adaptbf_ost *o, uint64_t mark)
{
	for (size_t i = 0; i < o->cap;) {
		if (o->tab[i].used && o->tab[i].keep != mark)
			ab_remove_at(o, i);
		else
			i++;
	}
}

/* ------------------------------------------------------------- the policy */

typedef struct ab_pol_ost {
	char id[QOS_ID_MAX];
	qos_adaptbf_ost *ost;
} ab_pol_ost;

typedef struct ab_policy {
	double dt;      /* Δt when the instance gives no period */
	double tpu;     /* tokens (RPCs) per capacity unit */
	ab_pol_ost *osts;
	size_t n_osts, cap_osts;
	uint64_t mark;
} ab_policy;

static const char *const ab_known[] = {"dt", "tokens_per_unit", NULL};

static int ab_pol_create(const qos_params *params, void **state)
{
	if (!state)
		return -EINVAL;
	int rc = qos_params_check(params, ab_known);
	if (rc)
		return rc;
	double dt = qos_param_get(params, "dt", 0.1);
	double tpu = qos_param_get(params, "tokens_per_unit", 1.0);
	if (!isfinite(dt) || dt <= 0 || !isfinite(tpu) || tpu <= 0)
		return -EINVAL;
	ab_policy *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->dt = dt;
	p->tpu = tpu;
	*state = p;
	return 0;
}

static void ab_pol_destroy(void *state)
{
	ab_policy *p = state;
	if (!p)
		return;
	for (size_t i = 0; i < p->n_osts; i++)
		qos_adaptbf_ost_destroy(p->osts[i].ost);
	free(p->osts);
	free(p);
}

/* The state of OST id, created at rate T on first sight. */
static int ab_pol_find_ost(ab_policy *p, const char *id, double T, double dt,
		      qos_adaptbf_ost **out)
{
	for (size_t i = 0; i < p->n_osts; i++)
		if (strcmp(p->osts[i].id, id) == 0) {
			*out = p->osts[i].ost;
			return qos_adaptbf_ost_set_rate(*out, T, dt);
		}
	if (strlen(id) >= QOS_ID_MAX)
		return -EINVAL;
	if (p->n_osts == p->cap_osts) {
		size_t cap = p->cap_osts ? 2 * p->cap_osts : 8;
		ab_pol_ost *v = realloc(p->osts, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		p->osts = v;
		p->cap_osts = cap;
	}
	int rc = qos_adaptbf_ost_create(T, dt, out);
	if (rc)
		return rc;
	snprintf(p->osts[p->n_osts].id, QOS_ID_MAX, "%s", id);
	p->osts[p->n_osts++].ost = *out;
	return 0;
}

/* d_x as a rate: what arrived or queued (instance demand, the paper's
 * observed demand) or, without it, what was served last period. */
static double ab_pol_want(const qos_instance *in, size_t e)
{
	if (in->demand)
		return in->demand[e];
	return in->usage ? in->usage[e] : 0;
}

static int ab_pol_decide(void *state, const qos_instance *in, qos_result *res)
{
	ab_policy *p = state;
	size_t no, nj;
	qos_adaptbf_obs *obs = NULL;
	size_t *jidx = NULL;
	int64_t *tok = NULL;
	double *rec = NULL;
	qos_adaptbf_ost **ost = NULL;
	int rc = 0;

	if (!p || !in || !res || !res->alloc)
		return -EINVAL;
	no = in->n_osts;
	nj = in->n_jobs;
	if ((no && !in->capacity) || (nj && !in->jobs))
		return -EINVAL;
	double dt = in->period > 0 ? in->period : p->dt;
	for (size_t j = 0; j < nj; j++)
		if (strnlen(in->jobs[j].id, QOS_ID_MAX) >= QOS_ID_MAX)
			return -EINVAL;

	obs = malloc((nj ? nj : 1) * sizeof(*obs));
	jidx = malloc((nj ? nj : 1) * sizeof(*jidx));
	tok = malloc((nj ? nj : 1) * sizeof(*tok));
	rec = malloc((nj ? nj : 1) * sizeof(*rec));
	ost = calloc(no ? no : 1, sizeof(*ost));
	if (!obs || !jidx || !tok || !rec || !ost) {
		rc = -ENOMEM;
		goto out;
	}

	res->effective = 0;
	for (size_t o = 0; o < no; o++) {
		char idx[32];
		const char *oid = in->ost_ids ? in->ost_ids[o] : NULL;
		if (!oid) {
			snprintf(idx, sizeof(idx), "#%zu", o);
			oid = idx;
		}
		double cap = in->capacity[o];
		if (!isfinite(cap) || cap < 0) {
			rc = -EINVAL;
			goto out;
		}
		rc = ab_pol_find_ost(p, oid, cap * p->tpu, dt, &ost[o]);
		if (rc)
			goto out;
		/* the same OST listed twice would run two periods on it */
		for (size_t k = 0; k < o; k++)
			if (ost[k] == ost[o]) {
				rc = -EINVAL;
				goto out;
			}

		size_t n = 0;
		for (size_t j = 0; j < nj; j++) {
			size_t e = j * no + o;
			double want = ab_pol_want(in, e);
			int act = in->active ? in->active[e] != 0 : want > 0;
			if (!isfinite(want) || want < 0) {
				rc = -EINVAL;
				goto out;
			}
			res->alloc[e] = 0;
			if (res->tokens)
				res->tokens[e] = 0;
			if (!act)
				continue;
			obs[n].id = in->jobs[j].id;
			/* a job without a node count weighs as one node */
			obs[n].nodes = in->jobs[j].nodes > 0 ? in->jobs[j].nodes : 1;
			obs[n].d = want * p->tpu * dt;   /* d_x in RPCs per Δt */
			/* Served usage is capped by the last allocation, so a job
			 * that got nothing shows nothing and would get nothing
			 * again; an active job has issued at least one RPC
			 * (sec. III-C-1), which keeps it in the redistribution. */
			if (!in->demand && obs[n].d < 1)
				obs[n].d = 1;
			jidx[n++] = j;
		}
		rc = qos_adaptbf_ost_period(ost[o], obs, n, tok, rec);
		if (rc)
			goto out;
		for (size_t k = 0; k < n; k++) {
			size_t e = jidx[k] * no + o;
			res->alloc[e] = (double)tok[k] / (dt * p->tpu);
			if (res->tokens)
				res->tokens[e] = tok[k];
			res->effective += fmin(res->alloc[e], ab_pol_want(in, e));
		}
	}

	/* Records (inactive jobs keep theirs), and forget jobs that left. */
	p->mark++;
	for (size_t o = 0; o < no; o++) {
		for (size_t j = 0; j < nj; j++) {
			size_t s = ab_find(ost[o], in->jobs[j].id);
			if (s != SIZE_MAX)
				ost[o]->tab[s].keep = p->mark;
			if (res->records)
				res->records[j * no + o] =
					s == SIZE_MAX ? 0 : ost[o]->tab[s].r;
		}
		ab_sweep(ost[o], p->mark);
	}
out:
	free(obs);
	free(jidx);
	free(tok);
	free(rec);
	free(ost);
	return rc;
}

const qos_policy_ops qos_policy_adaptbf = {
	.name = "adaptbf",
	.summary = "AdapTBF: per-OST tokens by node count, lending/borrowing with "
		   "records and re-compensation (params: dt, tokens_per_unit)",
	.create = ab_pol_create,
	.decide = ab_pol_decide,
	.destroy = ab_pol_destroy,
};
