/* mdqos.c — PADLL's controller and the MDS's own enforcement (see
 * mdqos.h and mds/README.md "PADLL").
 *
 * One mutex guards everything: the configuration, the job table (at most
 * MAX_JOBS jobs; more are not limited and not counted), each (job, class)
 * cell's counters, token bucket and FIFO of deferred requests.  Three
 * kinds of thread: the control thread (mds_mdqos_step every interval), the
 * pacer (moves deferred requests whose bucket has a token to the release
 * list) and the release threads (run the requests' callbacks, i.e. the
 * MDS handlers, without the lock).
 *
 * Choices: a job's rate on a class is shared equally among the mounts
 * that reported it in the last three periods; under the dynamic algorithms
 * a job not active on a class gets a trickle of 1 % of Max_R (at least 1
 * request/s) so its first requests are seen and counted, under the static
 * ones the share of one more job (a job is present for the static ones
 * when it had requests in the last PRESENT_PERIODS periods); the MDS's
 * buckets hold 100 ms of their rate (at least 2 tokens), twice the
 * clients', so cooperating clients are seldom held twice. */
#include "mds/mdqos.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/log.h"
#include "qos/bucket.h"
#include "qos/padll.h"

#define MAX_JOBS 4096
#define NBUCKETS 256
#define MAX_CLIENTS 16
#define MAX_DEMANDS 1024
#define FORGET_PERIODS 60
#define PRESENT_PERIODS 5
#define CLIENT_PERIODS 3
#define TRICKLE 0.01
#define DEPTH_S 0.1
/* The MDS's buckets run this much above the allocation: they are the
 * backstop for a client that ignores its rates (held within Max_R + 5 %),
 * while a cooperating client, already paced by its own bucket, is not
 * slowed a second time by the phase between the two buckets (that cost
 * the 40/s job of the priority case 10 %). */
#define MDS_SLACK 1.03
#define REC_VERSION 1u

enum algo { A_NONE, A_UNIFORM, A_PRIORITY, A_PROPORTIONAL, A_PSFA };
static const char *const algo_names[] = { "none", "uniform", "priority", "proportional", "psfa" };

struct item {
	mds_mdqos_fn fn;
	void *arg;
	unsigned cost;     /* operations it counts as (>= 1) */
	struct item *next;
};

struct cell {
	uint64_t arrived, served, cli;   /* this period */
	double arr_rate, srv_rate;       /* last period, per second */
	double rate;                     /* the job's rate (all mounts) */
	int has_rate;
	qos_bucket b;
	struct item *head, *tail;
	unsigned queued;
};

struct mjob {
	char job[PFS_JOBID_MAX + 1];
	struct cell c[PFS_MDQ_NCLASSES];
	struct { uint64_t id, gen; } cl[MAX_CLIENTS];
	uint64_t active_gen;             /* last generation with arrivals */
	struct mjob *next;
};

struct demand {
	char job[PFS_JOBID_MAX + 1];
	uint8_t cls;
	double v;
};

struct cfg {
	enum algo algo;
	unsigned interval_ms;
	double epsilon, jobs, weight_sum;
	double max_r[PFS_MDQ_NCLASSES];
	unsigned nd;
	struct demand d[MAX_DEMANDS];
};

struct mds_mdqos {
	mds_ns *ns;
	mds_jobs *reg;
	mds_mdqos_opts o;
	pfs_mdq_map map;
	pthread_mutex_t lock;
	pthread_cond_t pace_cv, rel_cv, ctl_cv;
	struct cfg cfg;
	struct mjob *jobs[NBUCKETS];
	unsigned njobs, queued;
	uint64_t generation, held;
	double last_step, default_rate[PFS_MDQ_NCLASSES];
	struct item *rel_head, *rel_tail;
	int stop, started;
	unsigned nrel;
	pthread_t ctl, pacer, rel[8];
};

static double now_s(mds_mdqos *q)
{
	return q->o.now ? q->o.now(q->o.now_arg) : pfs_clock_s();
}

static unsigned hash(const char *s)
{
	unsigned h = 5381;

	while (*s)
		h = h * 33 + (unsigned char)*s++;
	return h % NBUCKETS;
}

static struct mjob *job_find(mds_mdqos *q, const char *job, int create)
{
	unsigned b = hash(job);
	struct mjob *j;

	for (j = q->jobs[b]; j; j = j->next)
		if (strcmp(j->job, job) == 0)
			return j;
	if (!create || q->njobs >= MAX_JOBS || !(j = calloc(1, sizeof(*j))))
		return NULL;
	snprintf(j->job, sizeof(j->job), "%s", job);
	j->active_gen = q->generation;
	j->next = q->jobs[b];
	q->jobs[b] = j;
	q->njobs++;
	return j;
}

static int limited(const mds_mdqos *q, unsigned cls)
{
	return q->cfg.algo != A_NONE && cls > PFS_MDQ_NONE && cls < PFS_MDQ_NCLASSES &&
	       q->cfg.max_r[cls] > 0;
}

static double cell_rate(const mds_mdqos *q, const struct cell *c, unsigned cls)
{
	return c->has_rate ? c->rate : q->default_rate[cls];
}

static void cell_set_rate(struct cell *c, double rate, double now)
{
	double depth;

	rate *= MDS_SLACK;
	depth = rate * DEPTH_S;

	if (depth < 2)
		depth = 2;
	if (c->b.depth <= 0)
		qos_bucket_init(&c->b, rate, depth, now);
	else {
		qos_bucket_set_rate(&c->b, rate, now);
		qos_bucket_set_depth(&c->b, depth, now);
	}
}

/* ------------------------------------------------------ configuration */

static int algo_parse(const char *s, enum algo *a)
{
	for (unsigned i = 0; i < sizeof(algo_names) / sizeof(algo_names[0]); i++)
		if (strcmp(s, algo_names[i]) == 0) {
			*a = (enum algo)i;
			return 0;
		}
	return -EINVAL;
}

static int num_parse(const char *s, double *v)
{
	char *end;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	*v = strtod(s, &end);
	return errno || *end || !isfinite(*v) ? -EINVAL : 0;
}

static struct demand *demand_find(struct cfg *c, const char *job, unsigned cls)
{
	for (unsigned i = 0; i < c->nd; i++)
		if (c->d[i].cls == cls && strcmp(c->d[i].job, job) == 0)
			return &c->d[i];
	return NULL;
}

/* Apply key=value to c; -EINVAL with err. */
static int cfg_apply(struct cfg *c, const char *job, const char *key, const char *val,
		     char *err, size_t errlen)
{
	double v = 0;
	unsigned cls;
	int off = val && strcmp(val, "off") == 0;

	if (!key || !val) {
		snprintf(err, errlen, "missing key or value");
		return -EINVAL;
	}
	if (job && job[0] && strncmp(key, "demand.", 7) != 0) {
		snprintf(err, errlen, "%s: only demand.CLASS is per job", key);
		return -EINVAL;
	}
	if (strcmp(key, "algo") == 0) {
		enum algo a;
		if (algo_parse(val, &a)) {
			snprintf(err, errlen, "unknown algo '%s' (none uniform priority "
				 "proportional psfa)", val);
			return -EINVAL;
		}
		c->algo = a;
		return 0;
	}
	if (strncmp(key, "max_r.", 6) == 0 || strncmp(key, "demand.", 7) == 0) {
		int is_max = key[0] == 'm';
		const char *cn = key + (is_max ? 6 : 7);

		if (pfs_mdq_class_parse(cn, &cls) || cls == PFS_MDQ_NONE) {
			snprintf(err, errlen, "%s: unknown class '%s' (open close getattr setattr "
				 "create mkdir unlink rename readdir xattr read write)", key, cn);
			return -EINVAL;
		}
		if (!off && (num_parse(val, &v) || !(v > 0))) {
			snprintf(err, errlen, "%s: '%s' is not a rate > 0 (requests/s) or off",
				 key, val);
			return -EINVAL;
		}
		if (is_max) {
			c->max_r[cls] = off ? 0 : v;
			return 0;
		}
		if (!job || !job[0] || strlen(job) > PFS_JOBID_MAX) {
			snprintf(err, errlen, "%s needs a job", key);
			return -EINVAL;
		}
		struct demand *d = demand_find(c, job, cls);
		if (off) {
			if (d)
				*d = c->d[--c->nd];
			return 0;
		}
		if (!d) {
			if (c->nd >= MAX_DEMANDS) {
				snprintf(err, errlen, "too many demands (%d)", MAX_DEMANDS);
				return -ENOSPC;
			}
			d = &c->d[c->nd++];
			snprintf(d->job, sizeof(d->job), "%s", job);
			d->cls = (uint8_t)cls;
		}
		d->v = v;
		return 0;
	}
	if (num_parse(val, &v)) {
		snprintf(err, errlen, "%s: '%s' is not a number", key, val);
		return -EINVAL;
	}
	if (strcmp(key, "interval_ms") == 0 && v >= 100 && v <= 60000 && v == floor(v))
		c->interval_ms = (unsigned)v;
	else if (strcmp(key, "epsilon") == 0 && v >= 0 && v <= 1)
		c->epsilon = v;
	else if (strcmp(key, "jobs") == 0 && v >= 0 && v <= 1e6 && v == floor(v))
		c->jobs = v;
	else if (strcmp(key, "weight_sum") == 0 && v >= 0 && v <= 1e12)
		c->weight_sum = v;
	else if (strcmp(key, "interval_ms") && strcmp(key, "epsilon") && strcmp(key, "jobs") &&
		 strcmp(key, "weight_sum")) {
		snprintf(err, errlen, "unknown key '%s' (algo interval_ms epsilon jobs weight_sum "
			 "max_r.CLASS demand.CLASS)", key);
		return -EINVAL;
	} else {
		snprintf(err, errlen, "%s: %s is out of range (interval_ms 100..60000, epsilon "
			 "0..1, jobs a whole number >= 0, weight_sum >= 0)", key, val);
		return -EINVAL;
	}
	return 0;
}

/* "k=v,k=v" into c. */
static int cfg_apply_list(struct cfg *c, const char *list, char *err, size_t errlen)
{
	char buf[1024], *save = NULL;
	int rc = 0;

	if (!list || !list[0])
		return 0;
	if (strlen(list) >= sizeof(buf)) {
		snprintf(err, errlen, "list too long");
		return -EINVAL;
	}
	strcpy(buf, list);
	for (char *it = strtok_r(buf, ",", &save); it && !rc; it = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(it, '=');
		if (!eq) {
			snprintf(err, errlen, "'%s' is not key=value", it);
			return -EINVAL;
		}
		*eq = '\0';
		rc = cfg_apply(c, "", it, eq + 1, err, errlen);
	}
	return rc;
}

/* ------------------------------------------------------- persistence
 * "mdqos" v1: u32 1, str algo, u32 interval_ms, f64 epsilon, f64 jobs,
 * f64 weight_sum, u32 nc, nc x { u8 class, f64 max_r }, u32 nd,
 * nd x { str job, u8 class, f64 demand } */
static int store_put(mds_mdqos *q, const struct cfg *c)
{
	mds_kv_txn *t;
	pfs_wbuf w;
	uint32_t nc = 0;
	int rc;

	if (!q->ns)
		return 0;
	pfs_wbuf_init(&w);
	pfs_wbuf_u32(&w, REC_VERSION);
	pfs_wbuf_str(&w, algo_names[c->algo]);
	pfs_wbuf_u32(&w, c->interval_ms);
	pfs_wbuf_f64(&w, c->epsilon);
	pfs_wbuf_f64(&w, c->jobs);
	pfs_wbuf_f64(&w, c->weight_sum);
	for (unsigned i = 1; i < PFS_MDQ_NCLASSES; i++)
		nc += c->max_r[i] > 0;
	pfs_wbuf_u32(&w, nc);
	for (unsigned i = 1; i < PFS_MDQ_NCLASSES; i++)
		if (c->max_r[i] > 0) {
			pfs_wbuf_u8(&w, (uint8_t)i);
			pfs_wbuf_f64(&w, c->max_r[i]);
		}
	pfs_wbuf_u32(&w, c->nd);
	for (unsigned i = 0; i < c->nd; i++) {
		pfs_wbuf_str(&w, c->d[i].job);
		pfs_wbuf_u8(&w, c->d[i].cls);
		pfs_wbuf_f64(&w, c->d[i].v);
	}
	rc = pfs_wbuf_error(&w);
	if (!rc)
		rc = mds_ns_kv_begin(q->ns, 1, &t);
	if (!rc) {
		rc = mds_ns_kv_put(t, MDS_KV_QOS, "mdqos", 5, w.data, w.len);
		if (rc)
			mds_ns_kv_abort(t);
		else
			rc = mds_ns_kv_commit(t);
	}
	pfs_wbuf_free(&w);
	return rc;
}

/* 0 and *c filled, -ENOENT (none stored), -EBADMSG (damaged). */
static int store_get(mds_mdqos *q, struct cfg *c)
{
	mds_kv_txn *t;
	const void *v;
	size_t len;
	pfs_rbuf r;
	char algo[PFS_MDQ_ALGO_MAX];
	int rc;

	if (!q->ns)
		return -ENOENT;
	rc = mds_ns_kv_begin(q->ns, 0, &t);
	if (rc)
		return rc;
	rc = mds_ns_kv_get(t, MDS_KV_QOS, "mdqos", 5, &v, &len);
	if (rc) {
		mds_ns_kv_abort(t);
		return rc;
	}
	memset(c, 0, sizeof(*c));
	pfs_rbuf_init(&r, v, len);
	if (pfs_rbuf_u32(&r) != REC_VERSION)
		pfs_rbuf_fail(&r);
	pfs_rbuf_cstr(&r, algo, sizeof(algo));
	c->interval_ms = pfs_rbuf_u32(&r);
	c->epsilon = pfs_rbuf_f64_finite(&r);
	c->jobs = pfs_rbuf_f64_finite(&r);
	c->weight_sum = pfs_rbuf_f64_finite(&r);
	uint32_t nc = pfs_rbuf_u32(&r);
	if (nc >= PFS_MDQ_NCLASSES)
		pfs_rbuf_fail(&r);
	for (uint32_t i = 0; i < nc && !pfs_rbuf_error(&r); i++) {
		uint8_t k = pfs_rbuf_u8(&r);
		double m = pfs_rbuf_f64_finite(&r);
		if (k == 0 || k >= PFS_MDQ_NCLASSES || !(m > 0))
			pfs_rbuf_fail(&r);
		else
			c->max_r[k] = m;
	}
	uint32_t nd = pfs_rbuf_u32(&r);
	if (nd > MAX_DEMANDS)
		pfs_rbuf_fail(&r);
	for (uint32_t i = 0; i < nd && !pfs_rbuf_error(&r); i++) {
		pfs_rbuf_cstr(&r, c->d[i].job, sizeof(c->d[i].job));
		c->d[i].cls = pfs_rbuf_u8(&r);
		c->d[i].v = pfs_rbuf_f64_finite(&r);
		if (!c->d[i].job[0] || c->d[i].cls == 0 || c->d[i].cls >= PFS_MDQ_NCLASSES ||
		    !(c->d[i].v > 0))
			pfs_rbuf_fail(&r);
	}
	c->nd = nd;
	rc = pfs_rbuf_done(&r) ? -EBADMSG : 0;
	if (!rc && (algo_parse(algo, &c->algo) || c->interval_ms < 100 ||
		    c->interval_ms > 60000 || !(c->epsilon >= 0 && c->epsilon <= 1) ||
		    c->jobs < 0 || c->weight_sum < 0))
		rc = -EBADMSG;
	mds_ns_kv_abort(t);
	return rc;
}

/* ------------------------------------------------------------ compute */

static double job_weight(mds_mdqos *q, const char *job)
{
	pfs_job_info ji;

	if (q->reg && mds_jobs_get(q->reg, job, &ji) == 0 && ji.priority > 0)
		return ji.priority;
	return 1;
}

/* Compute the rates of class cls over the jobs (locked). */
static void compute_class(mds_mdqos *q, unsigned cls, double now)
{
	double Max_R = q->cfg.max_r[cls];
	int dynamic = q->cfg.algo == A_PROPORTIONAL || q->cfg.algo == A_PSFA;
	struct mjob **v;
	double *dem, *use, *w, *rate, wsum = 0;
	size_t n = 0;
	int rc = -ENOMEM;

	v = malloc((q->njobs + 1) * sizeof(*v));
	dem = malloc((q->njobs + 1) * sizeof(double));
	use = malloc((q->njobs + 1) * sizeof(double));
	w = malloc((q->njobs + 1) * sizeof(double));
	rate = malloc((q->njobs + 1) * sizeof(double));
	if (!v || !dem || !use || !w || !rate)
		goto out;
	for (unsigned b = 0; b < NBUCKETS; b++)
		for (struct mjob *j = q->jobs[b]; j; j = j->next) {
			struct cell *c = &j->c[cls];
			int active = c->arr_rate > 0 || c->queued;
			int present = q->generation - j->active_gen <= PRESENT_PERIODS;

			c->has_rate = 0;
			if (!j->job[0] || (dynamic ? !active : !present))
				continue;
			struct demand *d = demand_find(&q->cfg, j->job, cls);
			v[n] = j;
			dem[n] = d ? d->v : 0;
			use[n] = c->srv_rate;
			w[n] = q->cfg.algo == A_PRIORITY ? job_weight(q, j->job) : 1;
			wsum += w[n];
			n++;
		}
	switch (q->cfg.algo) {
	case A_UNIFORM:
		rc = qos_padll_static(Max_R, NULL, n, q->cfg.jobs, rate);
		q->default_rate[cls] = Max_R / (q->cfg.jobs > n ? q->cfg.jobs : (double)n + 1);
		break;
	case A_PRIORITY:
		rc = qos_padll_static(Max_R, w, n, q->cfg.weight_sum, rate);
		q->default_rate[cls] = Max_R / (q->cfg.weight_sum > wsum ? q->cfg.weight_sum
									: wsum + 1);
		break;
	case A_PROPORTIONAL:
		rc = qos_padll_proportional(Max_R, dem, n, rate);
		break;
	case A_PSFA:
		rc = qos_padll_psfa(Max_R, dem, use, n, q->cfg.epsilon, rate);
		break;
	default:
		rc = 0;
		n = 0;
	}
	if (dynamic)
		q->default_rate[cls] = Max_R * TRICKLE > 1 ? Max_R * TRICKLE : 1;
	if (rc) {
		pfs_log(PFS_LOG_WARNING, "mdqos: %s: %s", pfs_mdq_class_name(cls), pfs_strerror(rc));
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		struct cell *c = &v[i]->c[cls];
		c->rate = rate[i];
		c->has_rate = 1;
	}
out:
	/* every cell's bucket follows its (new) rate */
	for (unsigned b = 0; b < NBUCKETS; b++)
		for (struct mjob *j = q->jobs[b]; j; j = j->next)
			cell_set_rate(&j->c[cls], cell_rate(q, &j->c[cls], cls), now);
	free(v);
	free(dem);
	free(use);
	free(w);
	free(rate);
}

static void free_items(struct item *it, int status)
{
	while (it) {
		struct item *n = it->next;
		it->fn(it->arg, status);
		free(it);
		it = n;
	}
}

void mds_mdqos_step(mds_mdqos *q)
{
	double now;

	pthread_mutex_lock(&q->lock);
	now = now_s(q);
	double period = now - q->last_step;
	if (!(period > 0.001))
		period = 0.001;
	q->last_step = now;
	q->generation++;
	for (unsigned b = 0; b < NBUCKETS; b++) {
		struct mjob **pp = &q->jobs[b];
		while (*pp) {
			struct mjob *j = *pp;
			int any = 0, busy = 0;
			for (unsigned c = 1; c < PFS_MDQ_NCLASSES; c++) {
				struct cell *x = &j->c[c];
				uint64_t arr = x->arrived > x->cli ? x->arrived : x->cli;
				x->arr_rate = (double)arr / period;
				x->srv_rate = (double)x->served / period;
				any |= arr > 0;
				busy |= x->queued > 0;
				x->arrived = x->served = x->cli = 0;
			}
			if (any || busy)
				j->active_gen = q->generation;
			if (!busy && q->generation - j->active_gen > FORGET_PERIODS) {
				*pp = j->next;
				free(j);
				q->njobs--;
				continue;
			}
			pp = &j->next;
		}
	}
	for (unsigned c = 1; c < PFS_MDQ_NCLASSES; c++) {
		if (limited(q, c))
			compute_class(q, c, now);
		else
			q->default_rate[c] = 0;
	}
	pthread_cond_signal(&q->pace_cv);
	pthread_mutex_unlock(&q->lock);
}

/* ------------------------------------------------------- enforcement */

unsigned mds_mdqos_class(mds_mdqos *q, uint16_t op)
{
	return pfs_mdq_map_class(&q->map, op);
}

int mds_mdqos_admit(mds_mdqos *q, const char *job, uint16_t op, unsigned cost)
{
	unsigned cls = pfs_mdq_map_class(&q->map, op);
	struct mjob *j;
	int rc = 0;

	if (cls == PFS_MDQ_NONE || !job[0])
		return 0;
	if (cost < 1)
		cost = 1;
	pthread_mutex_lock(&q->lock);
	j = q->stop ? NULL : job_find(q, job, 1);
	if (j) {
		struct cell *c = &j->c[cls];
		c->arrived += cost;
		if (limited(q, cls)) {
			double now = now_s(q);
			if (c->b.depth <= 0)
				cell_set_rate(c, cell_rate(q, c, cls), now);
			if (c->queued || qos_bucket_try_take(&c->b, cost, now))
				rc = -EAGAIN;
		}
		if (!rc)
			c->served += cost;
	}
	pthread_mutex_unlock(&q->lock);
	return rc;
}

int mds_mdqos_defer(mds_mdqos *q, const char *job, uint16_t op, unsigned cost,
		    mds_mdqos_fn fn, void *arg)
{
	unsigned cls = pfs_mdq_map_class(&q->map, op);
	struct item *it = calloc(1, sizeof(*it));
	struct mjob *j;
	int rc = 0;

	if (!it)
		return -ENOMEM;
	it->fn = fn;
	it->arg = arg;
	it->cost = cost ? cost : 1;
	pthread_mutex_lock(&q->lock);
	j = job_find(q, job, 0);
	if (q->stop)
		rc = -ESHUTDOWN;
	else if (!j || q->queued >= MDS_MDQOS_QUEUED_MAX)
		rc = -EBUSY;
	if (!rc) {
		struct cell *c = &j->c[cls];
		if (c->tail)
			c->tail->next = it;
		else
			c->head = it;
		c->tail = it;
		c->queued++;
		q->queued++;
		q->held++;
		pthread_cond_signal(&q->pace_cv);
	}
	pthread_mutex_unlock(&q->lock);
	if (rc)
		free(it);
	return rc;
}

/* Move releasable items to the release list (locked); seconds to the next. */
static double pace_locked(mds_mdqos *q, struct item **out)
{
	double now = now_s(q), next = INFINITY;

	for (unsigned b = 0; b < NBUCKETS && q->queued; b++)
		for (struct mjob *j = q->jobs[b]; j; j = j->next)
			for (unsigned cls = 1; cls < PFS_MDQ_NCLASSES; cls++) {
				struct cell *c = &j->c[cls];
				while (c->head && (!limited(q, cls) ||
						   qos_bucket_try_take(&c->b, c->head->cost, now) == 0)) {
					struct item *it = c->head;
					c->head = it->next;
					if (!c->head)
						c->tail = NULL;
					c->queued--;
					q->queued--;
					c->served += it->cost;
					it->next = *out;
					*out = it;
				}
				if (c->head) {
					/* capped at the depth, as the take */
					double w = qos_bucket_wait(&c->b, c->head->cost, now);
					if (w < next)
						next = w;
				}
			}
	return next;
}

double mds_mdqos_pace(mds_mdqos *q)
{
	struct item *rel = NULL;
	double next;

	pthread_mutex_lock(&q->lock);
	next = pace_locked(q, &rel);
	pthread_mutex_unlock(&q->lock);
	/* rel is newest first: run in arrival order */
	struct item *rev = NULL;
	while (rel) {
		struct item *n = rel->next;
		rel->next = rev;
		rev = rel;
		rel = n;
	}
	free_items(rev, 0);
	return next;
}

static void *pacer_main(void *arg)
{
	mds_mdqos *q = arg;

	pthread_mutex_lock(&q->lock);
	while (!q->stop) {
		struct item *rel = NULL;
		double next = pace_locked(q, &rel);
		/* append in arrival order to the release list */
		struct item *rev = NULL;
		while (rel) {
			struct item *n = rel->next;
			rel->next = rev;
			rev = rel;
			rel = n;
		}
		while (rev) {
			struct item *n = rev->next;
			rev->next = NULL;
			if (q->rel_tail)
				q->rel_tail->next = rev;
			else
				q->rel_head = rev;
			q->rel_tail = rev;
			rev = n;
			pthread_cond_signal(&q->rel_cv);
		}
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		if (next > 0.1)
			next = 0.1; /* rates change with each step */
		if (next < 0.0002)
			next = 0.0002;
		uint64_t ns = (uint64_t)ts.tv_nsec + (uint64_t)(next * 1e9);
		ts.tv_sec += (time_t)(ns / 1000000000u);
		ts.tv_nsec = (long)(ns % 1000000000u);
		pthread_cond_timedwait(&q->pace_cv, &q->lock, &ts);
	}
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

static void *release_main(void *arg)
{
	mds_mdqos *q = arg;

	pthread_mutex_lock(&q->lock);
	for (;;) {
		while (!q->stop && !q->rel_head)
			pthread_cond_wait(&q->rel_cv, &q->lock);
		if (!q->rel_head)
			break;
		struct item *it = q->rel_head;
		q->rel_head = it->next;
		if (!q->rel_head)
			q->rel_tail = NULL;
		pthread_mutex_unlock(&q->lock);
		it->fn(it->arg, 0);
		free(it);
		pthread_mutex_lock(&q->lock);
	}
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

static void *ctl_main(void *arg)
{
	mds_mdqos *q = arg;

	pthread_mutex_lock(&q->lock);
	while (!q->stop) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		uint64_t ns = (uint64_t)ts.tv_nsec + (uint64_t)q->cfg.interval_ms * 1000000u;
		ts.tv_sec += (time_t)(ns / 1000000000u);
		ts.tv_nsec = (long)(ns % 1000000000u);
		while (!q->stop && pthread_cond_timedwait(&q->ctl_cv, &q->lock, &ts) != ETIMEDOUT)
			;
		if (q->stop)
			break;
		pthread_mutex_unlock(&q->lock);
		mds_mdqos_step(q);
		pthread_mutex_lock(&q->lock);
	}
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

/* ------------------------------------------------------------- pulls */

int mds_mdqos_pull(mds_mdqos *q, uint64_t client_id, pfs_rbuf *req, pfs_wbuf *out)
{
	pfs_mdq_row *u;
	uint32_t n;
	pfs_mdq_rates r;
	int rc = pfs_mdq_usage_decode(req, &u, &n);

	if (rc)
		return rc;
	memset(&r, 0, sizeof(r));
	pthread_mutex_lock(&q->lock);
	for (uint32_t i = 0; i < n; i++) {
		struct mjob *j = job_find(q, u[i].job, 1);
		if (!j)
			continue;
		j->c[u[i].cls].cli += (uint64_t)u[i].value;
		int k, free_k = -1, old_k = 0;
		for (k = 0; k < MAX_CLIENTS; k++) {
			if (j->cl[k].id == client_id)
				break;
			if (!j->cl[k].id && free_k < 0)
				free_k = k;
			if (j->cl[k].gen < j->cl[old_k].gen)
				old_k = k;
		}
		if (k == MAX_CLIENTS)
			k = free_k >= 0 ? free_k : old_k;
		j->cl[k].id = client_id;
		j->cl[k].gen = q->generation;
	}
	r.generation = q->generation;
	r.period_s = q->cfg.interval_ms / 1000.0;
	r.map = q->map;
	size_t cap = 0;
	for (unsigned c = 1; c < PFS_MDQ_NCLASSES; c++)
		if (limited(q, c)) {
			r.limited[c] = 1;
			r.default_rate[c] = q->default_rate[c];
		}
	for (unsigned b = 0; b < NBUCKETS && !rc; b++)
		for (struct mjob *j = q->jobs[b]; j && !rc; j = j->next) {
			unsigned mine = 0, ncl = 0;
			for (int k = 0; k < MAX_CLIENTS; k++)
				if (j->cl[k].id && q->generation - j->cl[k].gen < CLIENT_PERIODS) {
					ncl++;
					mine |= j->cl[k].id == client_id;
				}
			if (!mine)
				continue;
			for (unsigned c = 1; c < PFS_MDQ_NCLASSES; c++) {
				if (!limited(q, c))
					continue;
				if (r.n == cap) {
					size_t nc = cap ? cap * 2 : 64;
					pfs_mdq_row *nr = nc <= PFS_MDQ_ROWS_MAX ?
						realloc(r.rows, nc * sizeof(*nr)) : NULL;
					if (!nr) {
						rc = r.n ? 0 : -ENOMEM;
						goto done;
					}
					r.rows = nr;
					cap = nc;
				}
				pfs_mdq_row *row = &r.rows[r.n++];
				snprintf(row->job, sizeof(row->job), "%s", j->job);
				row->cls = (uint8_t)c;
				row->value = cell_rate(q, &j->c[c], c) / (ncl ? ncl : 1);
			}
		}
done:
	pthread_mutex_unlock(&q->lock);
	free(u);
	if (!rc)
		rc = pfs_mdq_rates_encode(out, &r);
	pfs_mdq_rates_free(&r);
	return rc;
}

/* ------------------------------------------------------- admin views */

/* One more zeroed row in st (grown by doubling, at most PFS_MDQ_ROWS_MAX);
 * NULL when full or out of memory. */
static pfs_mdq_jobrow *row_add(pfs_mdq_status *st, size_t *cap)
{
	pfs_mdq_jobrow *r;

	if (st->n == *cap) {
		size_t nc = *cap ? *cap * 2 : 64;
		pfs_mdq_jobrow *nr = nc <= PFS_MDQ_ROWS_MAX ?
			realloc(st->rows, nc * sizeof(*nr)) : NULL;

		if (!nr)
			return NULL;
		st->rows = nr;
		*cap = nc;
	}
	r = &st->rows[st->n++];
	memset(r, 0, sizeof(*r));
	return r;
}

int mds_mdqos_show(mds_mdqos *q, pfs_mdq_status *st)
{
	size_t cap = 0;

	memset(st, 0, sizeof(*st));
	pthread_mutex_lock(&q->lock);
	snprintf(st->algo, sizeof(st->algo), "%s", algo_names[q->cfg.algo]);
	st->interval_ms = q->cfg.interval_ms;
	st->epsilon = q->cfg.epsilon;
	st->jobs = q->cfg.jobs;
	st->weight_sum = q->cfg.weight_sum;
	st->generation = q->generation;
	st->held = q->held;
	memcpy(st->max_r, q->cfg.max_r, sizeof(st->max_r));
	for (unsigned b = 0; b < NBUCKETS; b++)
		for (struct mjob *j = q->jobs[b]; j; j = j->next)
			for (unsigned c = 1; c < PFS_MDQ_NCLASSES; c++) {
				struct cell *x = &j->c[c];
				struct demand *d = demand_find(&q->cfg, j->job, c);
				if (!j->job[0] || (!x->arr_rate && !x->srv_rate && !x->has_rate && !d))
					continue;
				pfs_mdq_jobrow *r = row_add(st, &cap);
				if (!r)
					break;
				snprintf(r->job, sizeof(r->job), "%s", j->job);
				r->cls = (uint8_t)c;
				r->demand = d ? d->v : 0;
				r->arrived = x->arr_rate;
				r->served = x->srv_rate;
				r->rate = limited(q, c) ? cell_rate(q, x, c) : 0;
			}
	/* demands of jobs not seen (yet) */
	for (unsigned i = 0; i < q->cfg.nd; i++) {
		const struct demand *d = &q->cfg.d[i];
		if (job_find(q, d->job, 0))
			continue;
		pfs_mdq_jobrow *r = row_add(st, &cap);
		if (!r)
			break;
		snprintf(r->job, sizeof(r->job), "%s", d->job);
		r->cls = d->cls;
		r->demand = d->v;
	}
	pthread_mutex_unlock(&q->lock);
	return 0;
}

void mds_mdqos_each(mds_mdqos *q, void (*fn)(void *arg, const pfs_mdq_jobrow *r), void *arg)
{
	pfs_mdq_status st;

	if (mds_mdqos_show(q, &st))
		return;
	for (uint32_t i = 0; i < st.n; i++)
		fn(arg, &st.rows[i]);
	pfs_mdq_status_free(&st);
}

int mds_mdqos_set(mds_mdqos *q, const char *job, const char *const *keys,
		  const char *const *vals, uint32_t n, char *err, size_t errlen)
{
	struct cfg *c = malloc(sizeof(*c));
	int rc = 0;

	if (!c)
		return -ENOMEM;
	pthread_mutex_lock(&q->lock);
	*c = q->cfg;
	for (uint32_t i = 0; i < n && !rc; i++)
		rc = cfg_apply(c, job, keys[i], vals[i], err, errlen);
	if (!rc) {
		rc = store_put(q, c);
		if (rc)
			snprintf(err, errlen, "storing: %s", pfs_strerror(rc));
	}
	if (!rc) {
		int wake = c->interval_ms != q->cfg.interval_ms;
		q->cfg = *c;
		if (wake)
			pthread_cond_signal(&q->ctl_cv);
	}
	pthread_mutex_unlock(&q->lock);
	free(c);
	if (!rc)
		mds_mdqos_step(q); /* new limits take effect now */
	return rc;
}

/* ------------------------------------------------------ create/destroy */

int mds_mdqos_create(mds_ns *ns, mds_jobs *jobs, const mds_mdqos_opts *o, mds_mdqos **out,
		     char *err, size_t errlen)
{
	mds_mdqos *q = calloc(1, sizeof(*q));
	struct cfg *stored = malloc(sizeof(*stored));
	int rc;

	if (!q || !stored) {
		free(q);
		free(stored);
		return -ENOMEM;
	}
	q->ns = ns;
	q->reg = jobs;
	q->o = *o;
	q->cfg.interval_ms = o->interval_ms ? o->interval_ms : 1000;
	q->cfg.epsilon = QOS_PADLL_EPSILON_DEFAULT;
	pfs_mdq_map_default(&q->map);
	rc = pfs_mdq_map_parse(&q->map, o->map, err, errlen);
	if (!rc && o->algo && o->algo[0] && algo_parse(o->algo, &q->cfg.algo)) {
		snprintf(err, errlen, "mdqos_algo: unknown '%s' (none uniform priority "
			 "proportional psfa)", o->algo);
		rc = -EINVAL;
	}
	if (!rc && (q->cfg.interval_ms < 100 || q->cfg.interval_ms > 60000)) {
		snprintf(err, errlen, "mdqos_interval_ms: 100..60000");
		rc = -EINVAL;
	}
	if (!rc && o->max_r && o->max_r[0]) {
		char buf[1100];
		/* "create=400" -> max_r.create=400 */
		char tmp[1024], *save = NULL;
		size_t len = 0;
		snprintf(tmp, sizeof(tmp), "%s", o->max_r);
		buf[0] = '\0';
		for (char *it = strtok_r(tmp, ",", &save); it; it = strtok_r(NULL, ",", &save))
			len += (size_t)snprintf(buf + len, len < sizeof(buf) ? sizeof(buf) - len : 0,
						"%smax_r.%s", len ? "," : "", it);
		rc = len < sizeof(buf) ? cfg_apply_list(&q->cfg, buf, err, errlen) : -EINVAL;
	}
	if (!rc)
		rc = cfg_apply_list(&q->cfg, o->params, err, errlen);
	if (rc) {
		free(stored);
		free(q);
		return rc;
	}
	rc = store_get(q, stored);
	if (rc == 0) {
		q->cfg = *stored;
		pfs_log(PFS_LOG_NOTICE, "mdqos: stored settings (algo %s) win over the configuration",
			algo_names[q->cfg.algo]);
	} else if (rc != -ENOENT) {
		pfs_log(PFS_LOG_WARNING, "mdqos: stored settings unreadable (%s), using the "
			"configuration", pfs_strerror(rc));
	}
	free(stored);
	pthread_mutex_init(&q->lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&q->pace_cv, &ca);
	pthread_cond_init(&q->ctl_cv, &ca);
	pthread_cond_init(&q->rel_cv, &ca);
	pthread_condattr_destroy(&ca);
	q->last_step = now_s(q);
	for (unsigned c = 1; c < PFS_MDQ_NCLASSES; c++)
		if (limited(q, c))
			compute_class(q, c, q->last_step);
	*out = q;
	return 0;
}

int mds_mdqos_start(mds_mdqos *q)
{
	unsigned n = q->o.release_threads ? q->o.release_threads : 2;
	int rc;

	if (q->o.no_threads)
		return 0;
	if (n > 8)
		n = 8;
	rc = -pthread_create(&q->ctl, NULL, ctl_main, q);
	if (rc)
		return rc;
	q->started = 1;
	rc = -pthread_create(&q->pacer, NULL, pacer_main, q);
	if (rc)
		return rc;
	q->started = 2;
	for (q->nrel = 0; q->nrel < n; q->nrel++) {
		rc = -pthread_create(&q->rel[q->nrel], NULL, release_main, q);
		if (rc)
			return rc;
	}
	return 0;
}

void mds_mdqos_stop(mds_mdqos *q)
{
	struct item *left = NULL;

	if (!q)
		return;
	pthread_mutex_lock(&q->lock);
	if (q->stop == 2) {
		pthread_mutex_unlock(&q->lock);
		return;
	}
	q->stop = 1;
	pthread_cond_broadcast(&q->ctl_cv);
	pthread_cond_broadcast(&q->pace_cv);
	pthread_cond_broadcast(&q->rel_cv);
	pthread_mutex_unlock(&q->lock);
	if (q->started >= 1)
		pthread_join(q->ctl, NULL);
	if (q->started >= 2)
		pthread_join(q->pacer, NULL);
	for (unsigned i = 0; i < q->nrel; i++)
		pthread_join(q->rel[i], NULL);
	/* the release list was drained by the release threads (they run
	 * until it is empty); queued ones are refused */
	left = q->rel_head;
	for (unsigned b = 0; b < NBUCKETS; b++) {
		struct mjob *j = q->jobs[b];
		while (j) {
			struct mjob *n = j->next;
			for (unsigned c = 0; c < PFS_MDQ_NCLASSES; c++)
				free_items(j->c[c].head, -ESHUTDOWN);
			free(j);
			j = n;
		}
	}
	q->rel_head = q->rel_tail = NULL;
	q->queued = 0;
	memset(q->jobs, 0, sizeof(q->jobs));
	q->njobs = 0;
	q->stop = 2;
	free_items(left, -ESHUTDOWN);
}

void mds_mdqos_destroy(mds_mdqos *q)
{
	if (!q)
		return;
	mds_mdqos_stop(q);
	pthread_cond_destroy(&q->pace_cv);
	pthread_cond_destroy(&q->ctl_cv);
	pthread_cond_destroy(&q->rel_cv);
	pthread_mutex_destroy(&q->lock);
	free(q);
}
