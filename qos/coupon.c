/* coupon.c — GIFT coupon table: windows of the last N coupons per job and
 * for the system, FIFO redemption, regret settlement (gift.txt sec. 3.2-3.3).
 *
 * Coupons live in one pool; a coupon is referenced by its job's window, by
 * the system window and, while it has worth left, by its job's outstanding
 * queue.  A reference count frees the slot when the last of these drops it,
 * so a window can keep reporting a coupon's redeemed fraction after the
 * coupon was fully redeemed or settled.  Jobs are found through an
 * open-addressing hash of their id.  Redemption and settlement both take
 * the oldest coupon first, so the outstanding queue is a plain FIFO.
 * Rates cost O(N) per query, which is cheap next to the LP. */
#include "qos/coupon.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A coupon with less than this fraction of its worth left is done: keeps
 * float dust from leaving coupons outstanding forever. */
#define COUPON_EPS 1e-9

struct coupon {
	double value;         /* worth at issuance */
	double redeemed;      /* worth given back so far, <= value */
	double issued_at;     /* seconds */
	double ns_per_worth;  /* node-seconds per unit of worth */
	size_t job;           /* index into t->jobs */
	unsigned refs;        /* windows + outstanding queue holding it */
	int settled;          /* unredeemed part moved to owed_nh */
	long next_free;       /* free list link while unused */
};

struct cjob {
	char *id;
	long *win;            /* ring of pool indices, capacity N; NULL until used */
	unsigned win_n, win_pos;
	long *outq;           /* outstanding coupons, oldest at outq[out_head] */
	size_t out_head, out_n, out_cap;
	double outstanding, issued, redeemed, owed_nh, awarded_nh;
	size_t n_coupons;
};

struct qos_coupon_table {
	unsigned N;
	double tau;
	struct coupon *pool;
	size_t pool_n, pool_cap;
	long free_head;
	struct cjob *jobs;
	size_t njobs, jobs_cap;
	size_t *hash;         /* job index + 1, 0 = empty */
	size_t hcap;          /* power of two */
	long *sys_win;        /* ring of pool indices, capacity N */
	unsigned sys_n, sys_pos;
	double awarded_total;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;  /* FNV-1a */
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ull;
	}
	return h;
}

static long job_find(const qos_coupon_table *t, const char *id)
{
	size_t mask = t->hcap - 1;
	for (size_t h = hash_str(id) & mask;; h = (h + 1) & mask) {
		size_t v = t->hash[h];
		if (!v)
			return -1;
		if (strcmp(t->jobs[v - 1].id, id) == 0)
			return (long)(v - 1);
	}
}

static void hash_put(size_t *hash, size_t hcap, const char *id, size_t idx)
{
	size_t mask = hcap - 1;
	size_t h = hash_str(id) & mask;
	while (hash[h])
		h = (h + 1) & mask;
	hash[h] = idx + 1;
}

/* Index of job id, creating it; -ENOMEM on failure. */
static long job_get(qos_coupon_table *t, const char *id)
{
	long j = job_find(t, id);
	if (j >= 0)
		return j;
	if ((t->njobs + 1) * 2 > t->hcap) {
		size_t ncap = t->hcap * 2;
		size_t *nh = calloc(ncap, sizeof(*nh));
		if (!nh)
			return -ENOMEM;
		for (size_t i = 0; i < t->njobs; i++)
			hash_put(nh, ncap, t->jobs[i].id, i);
		free(t->hash);
		t->hash = nh;
		t->hcap = ncap;
	}
	if (t->njobs == t->jobs_cap) {
		size_t ncap = t->jobs_cap ? t->jobs_cap * 2 : 16;
		struct cjob *nj = realloc(t->jobs, ncap * sizeof(*nj));
		if (!nj)
			return -ENOMEM;
		t->jobs = nj;
		t->jobs_cap = ncap;
	}
	struct cjob *cj = &t->jobs[t->njobs];
	memset(cj, 0, sizeof(*cj));
	cj->id = strdup(id);
	if (!cj->id)
		return -ENOMEM;
	hash_put(t->hash, t->hcap, id, t->njobs);
	return (long)t->njobs++;
}

int qos_coupon_table_create(unsigned N, double tau, qos_coupon_table **out)
{
	int rc = -ENOMEM;
	qos_coupon_table *t;

	*out = NULL;
	if (N < 1 || !(tau >= 0.0 && tau <= 1.0))
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->N = N;
	t->tau = tau;
	t->free_head = -1;
	t->hcap = 64;
	t->hash = calloc(t->hcap, sizeof(*t->hash));
	t->sys_win = malloc(N * sizeof(*t->sys_win));
	if (!t->hash || !t->sys_win)
		goto out;
	*out = t;
	rc = 0;
out:
	if (rc)
		qos_coupon_table_destroy(t);
	return rc;
}

void qos_coupon_table_destroy(qos_coupon_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->njobs; i++) {
		free(t->jobs[i].id);
		free(t->jobs[i].win);
		free(t->jobs[i].outq);
	}
	free(t->jobs);
	free(t->hash);
	free(t->sys_win);
	free(t->pool);
	free(t);
}

static void coupon_unref(qos_coupon_table *t, long c)
{
	if (--t->pool[c].refs == 0) {
		t->pool[c].next_free = t->free_head;
		t->free_head = c;
	}
}

static long coupon_alloc(qos_coupon_table *t)
{
	if (t->free_head >= 0) {
		long c = t->free_head;
		t->free_head = t->pool[c].next_free;
		return c;
	}
	if (t->pool_n == t->pool_cap) {
		size_t ncap = t->pool_cap ? t->pool_cap * 2 : 64;
		struct coupon *np = realloc(t->pool, ncap * sizeof(*np));
		if (!np)
			return -ENOMEM;
		t->pool = np;
		t->pool_cap = ncap;
	}
	return (long)t->pool_n++;
}

static double coupon_frac(const struct coupon *c)
{
	return c->value > 0 ? c->redeemed / c->value : 1.0;
}

/* Sec. 3.2: c = n / N; slots not yet filled count as redeemed. */
static double window_rate(const qos_coupon_table *t, const long *win, unsigned n)
{
	double sum = (double)(t->N - n);
	for (unsigned k = 0; k < n; k++)
		sum += coupon_frac(&t->pool[win[k]]);
	return sum / t->N;
}

double qos_coupon_rate(const qos_coupon_table *t, const char *job)
{
	long j = job_find(t, job);
	if (j < 0 || !t->jobs[j].win)
		return 1.0;
	return window_rate(t, t->jobs[j].win, t->jobs[j].win_n);
}

double qos_coupon_system_rate(const qos_coupon_table *t)
{
	return window_rate(t, t->sys_win, t->sys_n);
}

int qos_coupon_friendly(const qos_coupon_table *t, const char *job)
{
	return qos_coupon_rate(t, job) >= t->tau &&
	       qos_coupon_system_rate(t) >= t->tau;
}

double qos_coupon_outstanding(const qos_coupon_table *t, const char *job)
{
	long j = job_find(t, job);
	return j < 0 ? 0.0 : t->jobs[j].outstanding;
}

int qos_coupon_job_get(const qos_coupon_table *t, const char *job,
		       qos_coupon_job_info *info)
{
	long j = job_find(t, job);
	if (j < 0)
		return -ENOENT;
	const struct cjob *cj = &t->jobs[j];
	info->rate = qos_coupon_rate(t, job);
	info->outstanding = cj->outstanding;
	info->issued = cj->issued;
	info->redeemed = cj->redeemed;
	info->owed_nh = cj->owed_nh;
	info->awarded_nh = cj->awarded_nh;
	info->n_coupons = cj->n_coupons;
	return 0;
}

/* Push coupon c into a ring of capacity N, dropping (unref) the oldest. */
static void ring_push(qos_coupon_table *t, long *win, unsigned *n,
		      unsigned *pos, long c)
{
	if (*n == t->N)
		coupon_unref(t, win[*pos]);
	else
		(*n)++;
	win[*pos] = c;
	*pos = (*pos + 1) % t->N;
	t->pool[c].refs++;
}

int qos_coupon_issue(qos_coupon_table *t, const char *job, double value,
		     double now, double ns_per_worth)
{
	long j, c;
	struct cjob *cj;

	if (!(value > 0) || !(ns_per_worth >= 0))
		return -EINVAL;
	j = job_get(t, job);
	if (j < 0)
		return (int)j;
	cj = &t->jobs[j];
	if (!cj->win) {
		cj->win = malloc(t->N * sizeof(*cj->win));
		if (!cj->win)
			return -ENOMEM;
	}
	if (cj->out_head + cj->out_n == cj->out_cap) {
		if (cj->out_head > 0) {
			/* reuse the popped front before growing */
			memmove(cj->outq, cj->outq + cj->out_head,
				cj->out_n * sizeof(*cj->outq));
			cj->out_head = 0;
		} else {
			size_t ncap = cj->out_cap ? cj->out_cap * 2 : 8;
			long *nq = realloc(cj->outq, ncap * sizeof(*nq));
			if (!nq)
				return -ENOMEM;
			cj->outq = nq;
			cj->out_cap = ncap;
		}
	}
	c = coupon_alloc(t);
	if (c < 0)
		return (int)c;
	t->pool[c] = (struct coupon){
		.value = value, .issued_at = now, .ns_per_worth = ns_per_worth,
		.job = (size_t)j, .refs = 0, .next_free = -1,
	};
	/* Line 8: the new, unredeemed coupon enters both windows. */
	ring_push(t, cj->win, &cj->win_n, &cj->win_pos, c);
	ring_push(t, t->sys_win, &t->sys_n, &t->sys_pos, c);
	cj->outq[cj->out_head + cj->out_n++] = c;
	t->pool[c].refs++;
	cj->outstanding += value;
	cj->issued += value;
	cj->n_coupons++;
	return 0;
}

static void outq_pop(qos_coupon_table *t, struct cjob *cj)
{
	coupon_unref(t, cj->outq[cj->out_head]);
	cj->out_head++;
	cj->out_n--;
	if (cj->out_n == 0)
		cj->out_head = 0;
}

/* Outstanding worth recomputed from the queue, so float dust from many
 * partial redemptions never accumulates. */
static void job_resum(const qos_coupon_table *t, struct cjob *cj)
{
	double sum = 0.0;
	for (size_t k = 0; k < cj->out_n; k++) {
		const struct coupon *c = &t->pool[cj->outq[cj->out_head + k]];
		sum += c->value - c->redeemed;
	}
	cj->outstanding = sum;
}

double qos_coupon_redeem(qos_coupon_table *t, const char *job, double amount)
{
	long j = job_find(t, job);
	double done = 0.0;

	if (j < 0 || !(amount > 0))
		return 0.0;
	struct cjob *cj = &t->jobs[j];
	/* Sec. 3.3: partial (gap < coupon) or several (gap large enough),
	 * oldest coupon first. */
	while (cj->out_n > 0 && amount - done > 0) {
		struct coupon *c = &t->pool[cj->outq[cj->out_head]];
		double left = c->value - c->redeemed;
		double take = left < amount - done ? left : amount - done;
		c->redeemed += take;
		done += take;
		if (c->value - c->redeemed <= COUPON_EPS * c->value) {
			c->redeemed = c->value;
			outq_pop(t, cj);
		}
	}
	cj->redeemed += done;
	job_resum(t, cj);
	return done;
}

void qos_coupon_assess(qos_coupon_table *t, double now, double min_age,
		       double budget_nh, double *awarded_nh)
{
	double paid = 0.0;
	double remaining = budget_nh - t->awarded_total;

	if (remaining < 0)
		remaining = 0;
	for (size_t j = 0; j < t->njobs; j++) {
		struct cjob *cj = &t->jobs[j];
		while (cj->out_n > 0) {
			struct coupon *c = &t->pool[cj->outq[cj->out_head]];
			if (c->issued_at > now - min_age)
				break;
			double left = c->value - c->redeemed;
			cj->owed_nh += left * c->ns_per_worth / 3600.0;
			c->settled = 1;
			outq_pop(t, cj);
		}
		job_resum(t, cj);
		/* Pay what the budget allows, in job order; the rest stays
		 * owed for the next assessment. */
		double pay = cj->owed_nh < remaining ? cj->owed_nh : remaining;
		cj->owed_nh -= pay;
		cj->awarded_nh += pay;
		remaining -= pay;
		paid += pay;
	}
	t->awarded_total += paid;
	/* Sec. 3.2: the system's rate is reset every assessment period. */
	for (unsigned k = 0; k < t->sys_n; k++)
		coupon_unref(t, t->sys_win[k]);
	t->sys_n = 0;
	t->sys_pos = 0;
	if (awarded_nh)
		*awarded_nh = paid;
}

double qos_coupon_awarded_total(const qos_coupon_table *t)
{
	return t->awarded_total;
}

double qos_coupon_liability(const qos_coupon_table *t)
{
	double nh = 0.0;
	for (size_t j = 0; j < t->njobs; j++) {
		const struct cjob *cj = &t->jobs[j];
		nh += cj->owed_nh;
		for (size_t k = 0; k < cj->out_n; k++) {
			const struct coupon *c = &t->pool[cj->outq[cj->out_head + k]];
			nh += (c->value - c->redeemed) * c->ns_per_worth / 3600.0;
		}
	}
	return nh;
}

size_t qos_coupon_njobs(const qos_coupon_table *t)
{
	return t->njobs;
}
