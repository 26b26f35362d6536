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
 * Each window keeps the sum of its coupons' redeemed fractions, updated
 * when a coupon enters or leaves it and when part of it is redeemed, so a
 * rate costs O(1) however long the window.  Fractions are summed as
 * integers in units of 2^-32 (coupon_q), so the sum is exact, independent
 * of order and the same after a save and load. */
#include "qos/coupon.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* A coupon with less than this fraction of its worth left is done: keeps
 * float dust from leaving coupons outstanding forever. */
#define COUPON_EPS 1e-9

#define COUPON_IN_JOB 1u
#define COUPON_IN_SYS 2u

struct coupon {
	double value;         /* worth at issuance */
	double redeemed;      /* worth given back so far, <= value */
	double issued_at;     /* seconds */
	double ns_per_worth;  /* node-seconds per unit of worth */
	size_t job;           /* index into t->jobs */
	unsigned refs;        /* windows + outstanding queue holding it */
	int settled;          /* unredeemed part moved to owed_nh */
	unsigned inwin;       /* COUPON_IN_JOB | COUPON_IN_SYS: windows holding it */
	uint64_t q;           /* coupon_q() as last added to those windows */
	long next_free;       /* free list link while unused */
};

struct cjob {
	char *id;
	long *win;            /* ring of pool indices; NULL until used */
	unsigned win_n, win_pos;
	uint64_t win_sum;     /* sum of q over win */
	unsigned win_cap;     /* slots allocated: grows with the coupons up
			       * to N (win_pos == win_n until it is full),
			       * so a long window (sec. 3.2's sigma < 0.001
			       * needs N = 250,000) costs only what a job
			       * was actually issued */
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
	uint64_t sys_sum;     /* sum of q over sys_win */
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

/* A coupon's redeemed fraction in units of 2^-32. */
static uint64_t coupon_q(const struct coupon *c)
{
	return (uint64_t)llround(coupon_frac(c) * 4294967296.0);
}

/* Sec. 3.2: c = n / N; slots not yet filled count as redeemed.  sum is
 * the window's sum of coupon_q (at most N 2^32 < 2^56). */
static double window_rate(const qos_coupon_table *t, uint64_t sum, unsigned n)
{
	double c = ((double)(t->N - n) + (double)sum / 4294967296.0) / t->N;
	return c > 1 ? 1 : c;
}

double qos_coupon_rate(const qos_coupon_table *t, const char *job)
{
	long j = job_find(t, job);
	if (j < 0 || !t->jobs[j].win)
		return 1.0;
	return window_rate(t, t->jobs[j].win_sum, t->jobs[j].win_n);
}

double qos_coupon_system_rate(const qos_coupon_table *t)
{
	return window_rate(t, t->sys_sum, t->sys_n);
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

/* Push coupon c into a ring of capacity N, dropping (unref) the oldest;
 * *sum follows the ring's redeemed fractions, bit marks membership. */
static void ring_push(qos_coupon_table *t, long *win, unsigned *n,
		      unsigned *pos, uint64_t *sum, unsigned bit, long c)
{
	if (*n == t->N) {
		struct coupon *old = &t->pool[win[*pos]];
		*sum -= old->q;
		old->inwin &= ~bit;
		coupon_unref(t, win[*pos]);
	} else {
		(*n)++;
	}
	win[*pos] = c;
	*pos = (*pos + 1) % t->N;
	t->pool[c].refs++;
	t->pool[c].inwin |= bit;
	t->pool[c].q = coupon_q(&t->pool[c]);
	*sum += t->pool[c].q;
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
	if (cj->win_n == cj->win_cap && cj->win_cap < t->N) {
		unsigned ncap = cj->win_cap ? cj->win_cap * 2 : 16;
		if (ncap > t->N || ncap < cj->win_cap)
			ncap = t->N;
		long *nw = realloc(cj->win, ncap * sizeof(*nw));
		if (!nw)
			return -ENOMEM;
		cj->win = nw;
		cj->win_cap = ncap;
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
	ring_push(t, cj->win, &cj->win_n, &cj->win_pos, &cj->win_sum, COUPON_IN_JOB, c);
	ring_push(t, t->sys_win, &t->sys_n, &t->sys_pos, &t->sys_sum, COUPON_IN_SYS, c);
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
		if (c->value - c->redeemed <= COUPON_EPS * c->value)
			c->redeemed = c->value;
		/* line 4: the windows holding it see the redemption (q
		 * only grows: redeemed never falls) */
		uint64_t q = coupon_q(c);
		if (c->inwin & COUPON_IN_JOB)
			cj->win_sum += q - c->q;
		if (c->inwin & COUPON_IN_SYS)
			t->sys_sum += q - c->q;
		c->q = q;
		if (c->redeemed == c->value)
			outq_pop(t, cj);
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
	for (unsigned k = 0; k < t->sys_n; k++) {
		t->pool[t->sys_win[k]].inwin &= ~COUPON_IN_SYS;
		coupon_unref(t, t->sys_win[k]);
	}
	t->sys_n = 0;
	t->sys_pos = 0;
	t->sys_sum = 0;
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

/* ---- persistence (qos_coupon_table_save / _load) ----
 *
 * Format, little-endian, version 1:
 *   u32 magic "QCPN", u32 version, u32 N, f64 tau, f64 awarded_total,
 *   u32 ncoup, ncoup x { f64 value, redeemed, issued_at, ns_per_worth,
 *                        u32 job, u8 settled },
 *   u32 njobs, njobs x { u32 idlen, id bytes, f64 issued, redeemed, owed_nh,
 *                        awarded_nh, u64 n_coupons,
 *                        u32 win_n, win_n x u32 coupon (oldest first),
 *                        u32 out_n, out_n x u32 coupon (oldest first) },
 *   u32 sys_n, sys_n x u32 coupon (oldest first),
 *   u32 CRC-32 (IEEE) of every byte before it.
 * Coupons are numbered densely over the live pool entries; a window or the
 * outstanding queue refers to them by that number, so sharing survives.
 * The loader checks every count against the bytes left before allocating,
 * every index, every value's range and the cross references (a coupon sits
 * in its own job's window and queue only, an unsettled coupon with worth
 * left is queued, every coupon is referenced), so a damaged blob gives
 * -EBADMSG and never a table that breaks an invariant later. */

#define CPN_MAGIC 0x4e504351u /* "QCPN" */
#define CPN_VERSION 1u
#define CPN_N_MAX 10000000u   /* as qos_gift_params_parse */
#define CPN_ID_MAX 4096u
#define CPN_COUPON_BYTES (4 * 8 + 4 + 1)
#define CPN_JOB_MIN_BYTES (4 + 1 + 4 * 8 + 8 + 4 + 4)

struct cpn_w {
	uint8_t *p;
	size_t len, cap;
	int err;
};

struct cpn_r {
	const uint8_t *p;
	size_t len, pos;
	int err;
};

static void cpn_put(struct cpn_w *w, const void *src, size_t n)
{
	if (w->err)
		return;
	if (w->len + n > w->cap) {
		size_t ncap = w->cap ? w->cap : 256;
		while (ncap < w->len + n)
			ncap *= 2;
		uint8_t *np = realloc(w->p, ncap);
		if (!np) {
			w->err = -ENOMEM;
			return;
		}
		w->p = np;
		w->cap = ncap;
	}
	memcpy(w->p + w->len, src, n);
	w->len += n;
}

static void cpn_u8(struct cpn_w *w, uint8_t v)
{
	cpn_put(w, &v, 1);
}

static void cpn_u32(struct cpn_w *w, uint32_t v)
{
	uint8_t b[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24) };
	cpn_put(w, b, 4);
}

static void cpn_u64(struct cpn_w *w, uint64_t v)
{
	cpn_u32(w, (uint32_t)v);
	cpn_u32(w, (uint32_t)(v >> 32));
}

static void cpn_f64(struct cpn_w *w, double v)
{
	uint64_t u;
	memcpy(&u, &v, 8);
	cpn_u64(w, u);
}

static const uint8_t *cpn_get(struct cpn_r *r, size_t n)
{
	if (r->err || r->len - r->pos < n) {
		r->err = -EBADMSG;
		return NULL;
	}
	r->pos += n;
	return r->p + r->pos - n;
}

static uint8_t cpn_r8(struct cpn_r *r)
{
	const uint8_t *b = cpn_get(r, 1);
	return b ? b[0] : 0;
}

static uint32_t cpn_r32(struct cpn_r *r)
{
	const uint8_t *b = cpn_get(r, 4);
	return b ? (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
			   (uint32_t)b[3] << 24
		 : 0;
}

static uint64_t cpn_r64(struct cpn_r *r)
{
	uint64_t lo = cpn_r32(r);
	return lo | (uint64_t)cpn_r32(r) << 32;
}

/* A finite double >= lo (lo may be -INFINITY); anything else fails r. */
static double cpn_rf(struct cpn_r *r, double lo)
{
	uint64_t u = cpn_r64(r);
	double v;
	memcpy(&v, &u, 8);
	if (!isfinite(v) || !(v >= lo)) {
		r->err = -EBADMSG;
		return 0.0;
	}
	return v;
}

/* Ring entries of capacity N, n used, next write at pos: oldest first. */
static void cpn_ring(struct cpn_w *w, const long *ring, unsigned N, unsigned n,
		     unsigned pos, const long *map)
{
	cpn_u32(w, n);
	for (unsigned k = 0; k < n; k++)
		cpn_u32(w, (uint32_t)map[ring[(pos + N - n + k) % N]]);
}

/* CRC-32 (IEEE 802.3) of an image, from zlib (images stay far below the
 * 4 GiB a uInt length holds; a longer one just fails the check). */
static uint32_t image_crc32(const uint8_t *p, size_t n)
{
	return (uint32_t)crc32(0L, p, (uInt)n);
}

int qos_coupon_table_save(const qos_coupon_table *t, uint8_t **buf, size_t *len)
{
	struct cpn_w w = { 0 };
	long *map = NULL;
	uint32_t live = 0;

	*buf = NULL;
	*len = 0;
	map = malloc((t->pool_n ? t->pool_n : 1) * sizeof(*map));
	if (!map)
		return -ENOMEM;
	for (size_t c = 0; c < t->pool_n; c++)
		map[c] = t->pool[c].refs ? (long)live++ : -1;
	cpn_u32(&w, CPN_MAGIC);
	cpn_u32(&w, CPN_VERSION);
	cpn_u32(&w, t->N);
	cpn_f64(&w, t->tau);
	cpn_f64(&w, t->awarded_total);
	cpn_u32(&w, live);
	for (size_t c = 0; c < t->pool_n; c++) {
		const struct coupon *cp = &t->pool[c];
		if (map[c] < 0)
			continue;
		cpn_f64(&w, cp->value);
		cpn_f64(&w, cp->redeemed);
		cpn_f64(&w, cp->issued_at);
		cpn_f64(&w, cp->ns_per_worth);
		cpn_u32(&w, (uint32_t)cp->job);
		cpn_u8(&w, (uint8_t)(cp->settled != 0));
	}
	cpn_u32(&w, (uint32_t)t->njobs);
	for (size_t j = 0; j < t->njobs; j++) {
		const struct cjob *cj = &t->jobs[j];
		size_t idlen = strlen(cj->id);
		cpn_u32(&w, (uint32_t)idlen);
		cpn_put(&w, cj->id, idlen);
		cpn_f64(&w, cj->issued);
		cpn_f64(&w, cj->redeemed);
		cpn_f64(&w, cj->owed_nh);
		cpn_f64(&w, cj->awarded_nh);
		cpn_u64(&w, cj->n_coupons);
		if (cj->win)
			cpn_ring(&w, cj->win, t->N, cj->win_n, cj->win_pos, map);
		else
			cpn_u32(&w, 0);
		cpn_u32(&w, (uint32_t)cj->out_n);
		for (size_t k = 0; k < cj->out_n; k++)
			cpn_u32(&w, (uint32_t)map[cj->outq[cj->out_head + k]]);
	}
	cpn_ring(&w, t->sys_win, t->N, t->sys_n, t->sys_pos, map);
	if (!w.err)
		cpn_u32(&w, image_crc32(w.p, w.len));
	free(map);
	if (w.err) {
		free(w.p);
		return w.err;
	}
	*buf = w.p;
	*len = w.len;
	return 0;
}

/* Reference bits per coupon while loading. */
#define CPN_IN_WIN 1u
#define CPN_IN_OUT 2u
#define CPN_IN_SYS 4u

/* Read a ring of at most N_saved coupon numbers (< ncoup, not yet marked
 * with bit) into a ring of capacity t->N, keeping the newest t->N. */
static int cpn_load_ring(qos_coupon_table *t, struct cpn_r *r, unsigned N_saved,
			 uint32_t ncoup, uint8_t *seen, uint8_t bit, long job,
			 long *ring, unsigned *n, unsigned *pos, uint64_t *sum, unsigned inbit)
{
	uint32_t cnt = cpn_r32(r);

	if (r->err || cnt > N_saved || cnt > (r->len - r->pos) / 4)
		return -EBADMSG;
	for (uint32_t k = 0; k < cnt; k++) {
		uint32_t c = cpn_r32(r);
		if (c >= ncoup || (seen[c] & bit) ||
		    (job >= 0 && t->pool[c].job != (size_t)job))
			return -EBADMSG;
		seen[c] |= bit;
		if (cnt - k <= t->N)
			ring_push(t, ring, n, pos, sum, inbit, (long)c);
	}
	return 0;
}

int qos_coupon_table_load_with(const uint8_t *buf, size_t len, unsigned N, double tau,
			       qos_coupon_table **out)
{
	struct cpn_r r = { .p = buf, .len = len };
	qos_coupon_table *t = NULL;
	uint8_t *seen = NULL;
	uint32_t ncoup, njobs;
	unsigned N_saved;
	double tau_saved, awarded;
	int rc = -EBADMSG;

	*out = NULL;
	if (!buf || len < 12)
		return -EBADMSG;
	r.len = len - 4;
	{
		const uint8_t *c = buf + len - 4;
		uint32_t crc = (uint32_t)c[0] | (uint32_t)c[1] << 8 | (uint32_t)c[2] << 16 |
			       (uint32_t)c[3] << 24;
		if (crc != image_crc32(buf, len - 4))
			return -EBADMSG;
	}
	if (cpn_r32(&r) != CPN_MAGIC || cpn_r32(&r) != CPN_VERSION)
		return -EBADMSG;
	N_saved = cpn_r32(&r);
	tau_saved = cpn_rf(&r, 0.0);
	awarded = cpn_rf(&r, 0.0);
	if (r.err || N_saved < 1 || N_saved > CPN_N_MAX || tau_saved > 1.0)
		return -EBADMSG;
	rc = qos_coupon_table_create(N ? N : N_saved, tau >= 0 ? tau : tau_saved, &t);
	if (rc)
		return rc;
	t->awarded_total = awarded;

	rc = -EBADMSG;
	ncoup = cpn_r32(&r);
	if (r.err || ncoup > (r.len - r.pos) / CPN_COUPON_BYTES)
		goto out;
	rc = -ENOMEM;
	t->pool = malloc((ncoup ? ncoup : 1) * sizeof(*t->pool));
	seen = calloc(ncoup ? ncoup : 1, 1);
	if (!t->pool || !seen)
		goto out;
	t->pool_cap = ncoup ? ncoup : 1;
	t->pool_n = ncoup;
	rc = -EBADMSG;
	for (uint32_t c = 0; c < ncoup; c++) {
		struct coupon *cp = &t->pool[c];
		cp->value = cpn_rf(&r, 0.0);
		cp->redeemed = cpn_rf(&r, 0.0);
		cp->issued_at = cpn_rf(&r, -INFINITY);
		cp->ns_per_worth = cpn_rf(&r, 0.0);
		cp->job = cpn_r32(&r);
		uint8_t settled = cpn_r8(&r);
		cp->settled = settled;
		cp->refs = 0;
		cp->inwin = 0;
		cp->next_free = -1;
		if (r.err || !(cp->value > 0) || cp->redeemed > cp->value || settled > 1)
			goto out;
	}

	njobs = cpn_r32(&r);
	if (r.err || njobs > (r.len - r.pos) / CPN_JOB_MIN_BYTES)
		goto out;
	for (uint32_t j = 0; j < njobs; j++) {
		char id[CPN_ID_MAX + 1];
		uint32_t idlen = cpn_r32(&r);
		const uint8_t *idp;
		long idx;
		struct cjob *cj;

		if (r.err || idlen < 1 || idlen > CPN_ID_MAX)
			goto out;
		idp = cpn_get(&r, idlen);
		if (!idp || memchr(idp, '\0', idlen))
			goto out;
		memcpy(id, idp, idlen);
		id[idlen] = '\0';
		if (job_find(t, id) >= 0)
			goto out; /* duplicate id */
		idx = job_get(t, id);
		if (idx < 0) {
			rc = (int)idx;
			goto out;
		}
		cj = &t->jobs[idx];
		cj->issued = cpn_rf(&r, 0.0);
		cj->redeemed = cpn_rf(&r, 0.0);
		cj->owed_nh = cpn_rf(&r, 0.0);
		cj->awarded_nh = cpn_rf(&r, 0.0);
		cj->n_coupons = (size_t)cpn_r64(&r);
		if (r.err)
			goto out;
		{
			/* peek at the window's count: allocate what it holds */
			struct cpn_r peek = r;
			uint32_t cnt = cpn_r32(&peek);
			cj->win_cap = cnt < 16 ? 16 : cnt;
			if (cj->win_cap > t->N)
				cj->win_cap = t->N;
		}
		cj->win = malloc(cj->win_cap * sizeof(*cj->win));
		if (!cj->win) {
			rc = -ENOMEM;
			goto out;
		}
		if (cpn_load_ring(t, &r, N_saved, ncoup, seen, CPN_IN_WIN, idx, cj->win,
				  &cj->win_n, &cj->win_pos, &cj->win_sum, COUPON_IN_JOB))
			goto out;
		uint32_t out_n = cpn_r32(&r);
		if (r.err || out_n > (r.len - r.pos) / 4)
			goto out;
		if (out_n) {
			cj->outq = malloc(out_n * sizeof(*cj->outq));
			if (!cj->outq) {
				rc = -ENOMEM;
				goto out;
			}
			cj->out_cap = out_n;
		}
		for (uint32_t k = 0; k < out_n; k++) {
			uint32_t c = cpn_r32(&r);
			if (r.err || c >= ncoup || (seen[c] & CPN_IN_OUT) ||
			    t->pool[c].job != (size_t)idx || t->pool[c].settled ||
			    t->pool[c].value - t->pool[c].redeemed <= COUPON_EPS * t->pool[c].value)
				goto out;
			seen[c] |= CPN_IN_OUT;
			cj->outq[cj->out_n++] = (long)c;
			t->pool[c].refs++;
		}
		job_resum(t, cj);
	}
	if (cpn_load_ring(t, &r, N_saved, ncoup, seen, CPN_IN_SYS, -1, t->sys_win, &t->sys_n,
			  &t->sys_pos, &t->sys_sum, COUPON_IN_SYS))
		goto out;
	if (r.err || r.pos != r.len)
		goto out;
	for (uint32_t c = 0; c < ncoup; c++) {
		struct coupon *cp = &t->pool[c];
		int left = cp->value - cp->redeemed > COUPON_EPS * cp->value;
		/* referenced, by a known job, queued exactly when it has worth
		 * left and is not settled */
		if (!seen[c] || cp->job >= njobs ||
		    ((seen[c] & CPN_IN_OUT) != 0) != (left && !cp->settled))
			goto out;
	}
	/* Coupons only the trimmed (shorter) windows held are free now. */
	for (uint32_t c = ncoup; c-- > 0;)
		if (t->pool[c].refs == 0) {
			t->pool[c].next_free = t->free_head;
			t->free_head = (long)c;
		}
	*out = t;
	t = NULL;
	rc = 0;
out:
	free(seen);
	qos_coupon_table_destroy(t);
	return rc;
}

int qos_coupon_table_load(const uint8_t *buf, size_t len, qos_coupon_table **out)
{
	return qos_coupon_table_load_with(buf, len, 0, -1.0, out);
}
