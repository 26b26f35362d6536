/* qos.c — the OSS QoS engine: modes, MDS allocation sets, the AdapTBF
 * loop, capacity estimates, blkio limits (see qos.h).  Statistics and
 * metrics are in qos_stats.c. */
#include "oss/qos.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/log.h"
#include "oss/nrs_tbf.h"
#include "oss/qos_i.h"
#include "qos/tbf_rule.h"

#define MDS_PREFIX "mds."
#define ADAPT_PREFIX "adaptbf."
#define MAINT_EVERY 1.0   /* s between scheduler housekeeping runs */
#define CAP_WINDOW 1.0    /* s: capacity measurement window */

double oss_qos_now(void)
{
	return pfs_clock_s();
}

int64_t oss_qos_realtime_ns(void)
{
	return pfs_clock_wall_ns();
}

/* ---- per-job policy records ---- */

static qjob *qjob_find(qost *o, const char *job)
{
	return (qjob *)oss_jobmap_find(&o->jobs, job);
}

static qjob *qjob_get(qost *o, const char *job)
{
	qjob *j = qjob_find(o, job);

	if (j)
		return j;
	j = calloc(1, sizeof(*j));
	if (!j)
		return NULL;
	oss_jobmap_set_id(&j->node, job);
	j->rate = -1;
	oss_jobmap_insert(&o->jobs, &j->node);
	return j;
}

/* Free a record that holds nothing any more. */
static void qjob_tidy(qost *o, qjob *j)
{
	if (j->mds_rule || j->blkio_bps || j->nodes > 0 || j->rate >= 0)
		return;
	oss_jobmap_remove(&o->jobs, &j->node);
	free(j);
}

static void free_qjob(oss_jobmap_node *n) { free(n); }

/* ---- rules ---- */

/* Whether a job id can be the exact pattern of a policy rule: a TBF
 * pattern ending in '*' is a prefix, and the text form refuses blanks and
 * braces. */
static int job_ruleable(const char *job)
{
	size_t l = strlen(job);

	if (!l || job[l - 1] == '*')
		return 0;
	for (const char *p = job; *p; p++)
		if ((unsigned char)*p <= ' ' || *p == '{' || *p == '}' || *p == 0x7f)
			return 0;
	return 1;
}

static void rule_name(char *out, size_t len, const char *prefix, const char *job)
{
	snprintf(out, len, "%s%s", prefix, job);
}

/* Start the rule or change it in place (queued requests stay queued). */
static int rule_upsert(oss_sched *s, const char *prefix, const char *job, int unit,
		       double rate, double depth)
{
	char name[QOS_TBF_ID_MAX];
	const char *pat[1] = { job };
	qos_tbf_rule_spec sp;
	int rc;

	rule_name(name, sizeof(name), prefix, job);
	rc = oss_nrs_tbf_rule_change(s, name, rate, depth, OSS_QOS_RANK_POLICY);
	if (rc != -ENOENT)
		return rc;
	qos_tbf_rule_spec_init(&sp);
	sp.jobids = pat;
	sp.n_jobids = 1;
	sp.unit = unit;
	sp.rate = rate;
	sp.depth = depth;
	sp.rank = OSS_QOS_RANK_POLICY;
	return oss_nrs_tbf_rule_start(s, name, &sp);
}

static int rule_stop(oss_sched *s, const char *prefix, const char *job)
{
	char name[QOS_TBF_ID_MAX];
	int rc;

	rule_name(name, sizeof(name), prefix, job);
	rc = oss_nrs_tbf_rule_stop(s, name);
	if (rc && rc != -ENOENT)
		pfs_log(PFS_LOG_WARNING, "qos: stop rule %s: %s", name, pfs_strerror(rc));
	return rc == -ENOENT ? 0 : rc;
}

/* Set job's blkio limit on this OST (0 = none); when no OST of the OSS
 * limits the job any more, its cgroup is removed.  May create the job's
 * record, never frees it (callers iterate over the records): callers tidy. */
static void blkio_limit(oss_qos *q, qost *o, const char *job, double bps)
{
	uint64_t v = bps > 0 ? (uint64_t)llround(bps) : 0;
	qjob *j;
	int rc;

	if (!(q->enforce & OSS_ENFORCE_BLKIO))
		return;
	j = qjob_find(o, job);
	if ((j ? j->blkio_bps : 0) == v)
		return;
	if (v && !j && !(j = qjob_get(o, job)))
		return;
	rc = oss_blkio_set(q->blkio, job, o->slot, v, v);
	if (rc) {
		pfs_log(PFS_LOG_WARNING, "qos: blkio limit of %s on OST slot %zu: %s", job,
			o->slot, pfs_strerror(rc));
		return;
	}
	j->blkio_bps = v;
	if (v == 0) {
		for (size_t i = 0; i < q->n; i++) {
			qjob *x = qjob_find(&q->o[i], job);
			if (x && x->blkio_bps)
				return;
		}
		oss_blkio_forget(q->blkio, job);
	}
}

/* ---- modes ---- */

static void set_work_conserving(qost *o, int on)
{
	if (o->work_conserving == on)
		return;
	if (oss_nrs_tbf_set_work_conserving(o->sched, on) == 0)
		o->work_conserving = on;
}

/* Leave the current mode: every policy rule and limit of that mode goes. */
static void leave_mode(oss_qos *q, qost *o)
{
	if (o->mode == PFS_QOS_MODE_ADAPTBF && o->adapt) {
		char (*jobs)[PFS_JOBID_MAX + 1] = NULL;
		size_t n = 0;

		if (oss_adapt_ruled(o->adapt, &jobs, &n) == 0) {
			for (size_t i = 0; i < n; i++) {
				qjob *j;

				if (q->enforce & OSS_ENFORCE_TBF)
					rule_stop(o->sched, ADAPT_PREFIX, jobs[i]);
				blkio_limit(q, o, jobs[i], 0);
				if ((j = qjob_find(o, jobs[i])))
					qjob_tidy(o, j);
			}
		}
		free(jobs);
		oss_adapt_destroy(o->adapt);
		o->adapt = NULL;
		set_work_conserving(o, 0);
	}
	if (o->mode == PFS_QOS_MODE_RATES) {
		oss_jobmap_iter it = { 0 };
		oss_jobmap_node *n;

		while ((n = oss_jobmap_next(&o->jobs, &it))) {
			qjob *j = (qjob *)n;

			if (j->mds_rule && rule_stop(o->sched, MDS_PREFIX, j->node.id) == 0)
				j->mds_rule = 0;
			blkio_limit(q, o, j->node.id, 0);
			j->rate = -1;
		}
	}
	o->mode = PFS_QOS_MODE_NONE;
}

static int enter_adaptbf(oss_qos *q, qost *o)
{
	oss_job_snap *v;
	size_t n;
	int rc = oss_adapt_create(0, &o->adapt);

	if (rc)
		return rc;
	/* Start the first period clean: what arrived before does not count. */
	if (oss_sched_jobs(o->sched, OSS_CLOCK_LOOP, 1, &v, &n) == 0)
		free(v);
	if (q->tbf && o->cap_bps <= 0 && o->cap_iops <= 0)
		set_work_conserving(o, 1);
	o->mode = PFS_QOS_MODE_ADAPTBF;
	return 0;
}

/* ---- capacity ---- */

double oss_qos_cap_locked(const qost *o)
{
	return o->cap_bps > 0 ? o->cap_bps : o->peak_bps;
}

double oss_qos_T_locked(const qost *o)
{
	double T;

	if (o->cap_bps > 0) {
		T = o->cap_bps / OSS_QOS_TOKEN_BYTES;
		return o->cap_iops > 0 && o->cap_iops < T ? o->cap_iops : T;
	}
	return o->cap_iops > 0 ? o->cap_iops : o->peak_rps;
}

static void measure(qost *o, double now)
{
	oss_sched_info si;
	double dt = now - o->win_t0;

	if (dt < CAP_WINDOW)
		return;
	oss_sched_info_get(o->sched, &si);
	if (o->win_t0 > 0) {
		double bps = (double)(si.served_bytes - o->win_bytes0) / dt;
		double rps = (double)(si.served_io_rpcs - o->win_rpcs0) / dt;

		if (bps > o->peak_bps)
			o->peak_bps = bps;
		if (rps > o->peak_rps)
			o->peak_rps = rps;
	}
	o->win_t0 = now;
	o->win_bytes0 = si.served_bytes;
	o->win_rpcs0 = si.served_io_rpcs;
}

/* ---- AdapTBF period ---- */

static void adapt_apply(oss_qos *q, qost *o, const oss_adapt_act *a)
{
	int rc = 0;

	switch (a->what) {
	case OSS_ADAPT_SET:
		if (q->enforce & OSS_ENFORCE_TBF)
			rc = rule_upsert(o->sched, ADAPT_PREFIX, a->job, QOS_TBF_UNIT_RPC, a->rate,
					 a->depth);
		blkio_limit(q, o, a->job, a->rate * OSS_QOS_TOKEN_BYTES);
		break;
	case OSS_ADAPT_CLEAR:
	case OSS_ADAPT_FORGET: {
		qjob *j;

		if (q->enforce & OSS_ENFORCE_TBF)
			rc = rule_stop(o->sched, ADAPT_PREFIX, a->job);
		blkio_limit(q, o, a->job, 0);
		/* A record only held for its blkio limit goes with it. */
		if ((j = qjob_find(o, a->job)))
			qjob_tidy(o, j);
		break;
	}
	}
	if (rc)
		pfs_log(PFS_LOG_WARNING, "qos: adaptbf rule of %s on OST slot %zu: %s", a->job,
			o->slot, pfs_strerror(rc));
}

static void adapt_period(oss_qos *q, qost *o)
{
	oss_job_snap *v = NULL;
	oss_adapt_obs *obs = NULL;
	oss_adapt_act *acts = NULL;
	size_t n = 0, k = 0, na = 0;
	double T = oss_qos_T_locked(o);
	int rc;

	rc = oss_sched_jobs(o->sched, OSS_CLOCK_LOOP, 1, &v, &n);
	if (rc)
		goto out;
	if (!(T > 0))
		goto out; /* capacity unknown: leave the OST unlimited */
	obs = calloc(n ? n : 1, sizeof(*obs));
	if (!obs)
		goto out;
	for (size_t i = 0; i < n; i++) {
		double d = (double)v[i].c.arrived_rpcs + (double)v[i].backlog;
		qjob *j;

		if (d <= 0 || !job_ruleable(v[i].job))
			continue;
		j = qjob_find(o, v[i].job);
		obs[k].job = v[i].job;
		obs[k].d = d;
		obs[k].nodes = j && j->nodes > 0 ? j->nodes : 1;
		k++;
	}
	rc = oss_adapt_period(o->adapt, T, q->period, obs, k, &acts, &na);
	if (rc) {
		pfs_log(PFS_LOG_WARNING, "qos: adaptbf period on OST slot %zu: %s", o->slot,
			pfs_strerror(rc));
		goto out;
	}
	for (size_t i = 0; i < na; i++)
		adapt_apply(q, o, &acts[i]);
out:
	free(acts);
	free(obs);
	free(v);
}

/* ---- the loop ---- */

static void tick_locked(oss_qos *q, double now)
{
	for (size_t i = 0; i < q->n; i++)
		measure(&q->o[i], now);
	if (now >= q->next_adapt) {
		for (size_t i = 0; i < q->n; i++)
			if (q->o[i].mode == PFS_QOS_MODE_ADAPTBF && q->o[i].adapt)
				adapt_period(q, &q->o[i]);
		/* Keep the cadence; after a stall, restart it from now. */
		q->next_adapt += q->period;
		if (q->next_adapt <= now)
			q->next_adapt = now + q->period;
	}
	if (now >= q->next_maint) {
		for (size_t i = 0; i < q->n; i++)
			oss_sched_maintain(q->o[i].sched, (uint64_t)(q->idle_s * 1e6));
		q->next_maint = now + MAINT_EVERY;
	}
}

void oss_qos_tick(oss_qos *q, double now)
{
	pthread_mutex_lock(&q->lock);
	tick_locked(q, now);
	pthread_mutex_unlock(&q->lock);
}

static void *loop_main(void *arg)
{
	oss_qos *q = arg;

	pthread_mutex_lock(&q->lock);
	while (!q->stopping) {
		double now = oss_qos_now(), next;
		struct timespec ts;

		tick_locked(q, now);
		next = q->next_adapt < q->next_maint ? q->next_adapt : q->next_maint;
		if (next - now > CAP_WINDOW)
			next = now + CAP_WINDOW;
		ts.tv_sec = (time_t)next;
		ts.tv_nsec = (long)((next - (double)ts.tv_sec) * 1e9);
		if (ts.tv_nsec >= 1000000000L)
			ts.tv_nsec = 999999999L;
		pthread_cond_timedwait(&q->cond, &q->lock, &ts);
	}
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

/* ---- lifetime ---- */

int oss_qos_create(const oss_qos_opts *o, oss_ostq *const *osts, size_t n, oss_qos **out,
		   char *err, size_t errlen)
{
	oss_qos *q;
	pthread_condattr_t ca;
	double period = o->adaptbf_period > 0 ? o->adaptbf_period : OSS_ADAPTBF_PERIOD_DEFAULT;
	unsigned enforce = o->enforce ? o->enforce : OSS_ENFORCE_TBF;

	if (!(period >= OSS_ADAPTBF_PERIOD_MIN && period <= OSS_ADAPTBF_PERIOD_MAX)) {
		snprintf(err, errlen, "adaptbf period must be %g..%g s", OSS_ADAPTBF_PERIOD_MIN,
			 OSS_ADAPTBF_PERIOD_MAX);
		return -EINVAL;
	}
	if ((enforce & OSS_ENFORCE_BLKIO) && !o->blkio) {
		snprintf(err, errlen, "blkio enforcement without a blkio hierarchy");
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++) {
		double b = o->cap_bps ? o->cap_bps[i] : 0, r = o->cap_iops ? o->cap_iops[i] : 0;
		if (!isfinite(b) || b < 0 || !isfinite(r) || r < 0) {
			snprintf(err, errlen, "OST slot %zu: bad capacity", i);
			return -EINVAL;
		}
	}
	q = calloc(1, sizeof(*q));
	if (q && !(q->o = calloc(n ? n : 1, sizeof(*q->o)))) {
		free(q);
		q = NULL;
	}
	if (!q) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	pthread_mutex_init(&q->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&q->cond, &ca);
	pthread_condattr_destroy(&ca);
	q->n = n;
	for (size_t i = 0; i < n; i++) {
		qost *x = &q->o[i];

		x->q = osts[i];
		x->sched = oss_ostq_sched(osts[i]);
		x->slot = i;
		x->mode = PFS_QOS_MODE_NONE;
		x->cap_bps = o->cap_bps ? o->cap_bps[i] : 0;
		x->cap_iops = o->cap_iops ? o->cap_iops[i] : 0;
		if (oss_jobmap_init(&x->jobs, 256)) {
			oss_qos_destroy(q);
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
	}
	q->tbf = n && oss_sched_class_of(q->o[0].sched) == &oss_sched_tbf;
	q->enforce = enforce;
	q->blkio = o->blkio;
	q->period_cfg = q->period = period;
	q->idle_s = o->job_idle_s > 0 ? o->job_idle_s : OSS_QOS_JOB_IDLE_DEFAULT;
	q->start = q->mds_period_start = oss_qos_now();
	if (!o->no_thread) {
		if (pthread_create(&q->thread, NULL, loop_main, q)) {
			snprintf(err, errlen, "cannot start the QoS loop thread");
			oss_qos_destroy(q);
			return -EAGAIN;
		}
		q->running = 1;
	}
	*out = q;
	return 0;
}

void oss_qos_destroy(oss_qos *q)
{
	if (!q)
		return;
	if (q->running) {
		pthread_mutex_lock(&q->lock);
		q->stopping = 1;
		pthread_cond_broadcast(&q->cond);
		pthread_mutex_unlock(&q->lock);
		pthread_join(q->thread, NULL);
	}
	pthread_cond_destroy(&q->cond);
	pthread_mutex_destroy(&q->lock);
	for (size_t i = 0; i < q->n; i++) {
		oss_adapt_destroy(q->o[i].adapt);
		oss_jobmap_fini(&q->o[i].jobs, free_qjob);
	}
	free(q->o);
	free(q);
}

/* ---- QOS_SET ---- */

typedef struct rowref {
	const pfs_qos_alloc *r;
	size_t i;
} rowref;

static int cmp_row(const void *a, const void *b)
{
	const pfs_qos_alloc *x = ((const rowref *)a)->r, *y = ((const rowref *)b)->r;

	if (x->ost != y->ost)
		return x->ost < y->ost ? -1 : 1;
	return strcmp(x->job, y->job);
}

/* Every check before anything changes. */
static int set_check(const pfs_qos_alloc_set *set, char *err, size_t errlen)
{
	rowref *v;
	int rc = 0;

	if (set->mode > PFS_QOS_MODE_ADAPTBF) {
		snprintf(err, errlen, "unknown mode %u", set->mode);
		return -EINVAL;
	}
	if (set->mode == PFS_QOS_MODE_ADAPTBF &&
	    !(set->adaptbf_period >= OSS_ADAPTBF_PERIOD_MIN &&
	      set->adaptbf_period <= OSS_ADAPTBF_PERIOD_MAX)) {
		snprintf(err, errlen, "adaptbf period %g s out of %g..%g", set->adaptbf_period,
			 OSS_ADAPTBF_PERIOD_MIN, OSS_ADAPTBF_PERIOD_MAX);
		return -EINVAL;
	}
	for (uint32_t i = 0; i < set->n; i++) {
		const pfs_qos_alloc *r = &set->rows[i];

		if (!isfinite(r->rate) || r->rate < 0 || r->rate > QOS_TBF_RATE_MAX) {
			snprintf(err, errlen, "job %s: rate %g out of 0..%g", r->job, r->rate,
				 QOS_TBF_RATE_MAX);
			return -EINVAL;
		}
		if (!isfinite(r->nodes) || r->nodes < 0 || r->nodes > OSS_QOS_NODES_MAX) {
			snprintf(err, errlen, "job %s: node count %g out of 0..%g", r->job,
				 r->nodes, OSS_QOS_NODES_MAX);
			return -EINVAL;
		}
	}
	if (set->n < 2)
		return 0;
	v = malloc(set->n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (uint32_t i = 0; i < set->n; i++) {
		v[i].r = &set->rows[i];
		v[i].i = i;
	}
	qsort(v, set->n, sizeof(*v), cmp_row);
	for (uint32_t i = 1; i < set->n; i++) {
		if (!cmp_row(&v[i - 1], &v[i])) {
			snprintf(err, errlen, "job %s twice for OST %u", v[i].r->job, v[i].r->ost);
			rc = -EINVAL;
			break;
		}
	}
	free(v);
	return rc;
}

/* Mark the rows of set that apply to OST o (its own rows win over
 * PFS_QOS_OST_ALL rows) in o's job records; returns how many. */
static int set_mark(qost *o, int64_t index, const pfs_qos_alloc_set *set, size_t *count)
{
	oss_jobmap_iter it = { 0 };
	oss_jobmap_node *n;

	*count = 0;
	while ((n = oss_jobmap_next(&o->jobs, &it)))
		((qjob *)n)->in_set = 0;
	for (int pass = 0; pass < 2; pass++) {
		uint32_t want = pass == 0 ? PFS_QOS_OST_ALL : (uint32_t)index;

		for (uint32_t i = 0; i < set->n; i++) {
			const pfs_qos_alloc *r = &set->rows[i];
			qjob *j;

			if (r->ost != want || !job_ruleable(r->job))
				continue;
			j = qjob_get(o, r->job);
			if (!j)
				return -ENOMEM;
			if (!j->in_set)
				(*count)++;
			j->in_set = 1;
			j->nodes = r->nodes;
			j->gen = set->generation;
			if (set->mode == PFS_QOS_MODE_RATES)
				j->rate = r->rate; /* installed below */
		}
	}
	return 0;
}

static int apply_rates(oss_qos *q, qost *o)
{
	oss_jobmap_iter it = { 0 };
	oss_jobmap_node *n;
	int rc = 0;

	while ((n = oss_jobmap_next(&o->jobs, &it))) {
		qjob *j = (qjob *)n;

		if (!j->in_set) {
			if (j->mds_rule && rule_stop(o->sched, MDS_PREFIX, j->node.id) == 0)
				j->mds_rule = 0;
			blkio_limit(q, o, j->node.id, 0);
			j->rate = -1;
			j->nodes = 0;
			qjob_tidy(o, j);
			continue;
		}
		if (q->enforce & OSS_ENFORCE_TBF) {
			/* depth 0: the byte unit's default, three 1 MiB RPCs. */
			int r = rule_upsert(o->sched, MDS_PREFIX, j->node.id, QOS_TBF_UNIT_BYTE,
					    j->rate, 0);
			if (r) {
				pfs_log(PFS_LOG_WARNING, "qos: rule %s%s on OST slot %zu: %s",
					MDS_PREFIX, j->node.id, o->slot, pfs_strerror(r));
				if (!rc)
					rc = r;
				continue;
			}
			j->mds_rule = 1;
		}
		blkio_limit(q, o, j->node.id, j->rate);
	}
	return rc;
}

/* Node counts only (ADAPTBF: the loop reads them; NONE: kept for stats). */
static void apply_nodes(qost *o)
{
	oss_jobmap_iter it = { 0 };
	oss_jobmap_node *n;

	while ((n = oss_jobmap_next(&o->jobs, &it))) {
		qjob *j = (qjob *)n;

		if (!j->in_set) {
			j->nodes = 0;
			qjob_tidy(o, j);
		}
	}
}

int oss_qos_set(oss_qos *q, const pfs_qos_alloc_set *set, char *err, size_t errlen)
{
	int rc;

	rc = set_check(set, err, errlen);
	if (rc)
		return rc;
	if (set->mode != PFS_QOS_MODE_NONE && (q->enforce & OSS_ENFORCE_TBF) && !q->tbf) {
		snprintf(err, errlen, "the request scheduler is not TBF (nrs=tbf)");
		return -EOPNOTSUPP;
	}
	pthread_mutex_lock(&q->lock);
	if (q->have_generation && set->generation < q->generation) {
		pfs_log(PFS_LOG_INFO, "qos: allocation set %llu older than %llu: ignored",
			(unsigned long long)set->generation, (unsigned long long)q->generation);
		goto out;
	}
	q->generation = set->generation;
	q->have_generation = 1;
	q->period = set->mode == PFS_QOS_MODE_ADAPTBF ? set->adaptbf_period : q->period_cfg;
	for (size_t i = 0; i < q->n; i++) {
		qost *o = &q->o[i];
		int64_t index = oss_ostq_index(o->q);
		size_t count;
		int r;

		if (index == OSS_INDEX_NONE)
			continue;
		if (o->mode != set->mode)
			leave_mode(q, o);
		r = set_mark(o, index, set, &count);
		if (!r && set->mode == PFS_QOS_MODE_ADAPTBF && !o->adapt)
			r = enter_adaptbf(q, o);
		if (!r) {
			o->mode = set->mode;
			if (set->mode == PFS_QOS_MODE_RATES)
				r = apply_rates(q, o);
			else
				apply_nodes(o);
		}
		if (r && !rc) {
			rc = r;
			snprintf(err, errlen, "OST %lld: %s", (long long)index, pfs_strerror(r));
		}
	}
out:
	pthread_mutex_unlock(&q->lock);
	return rc;
}

/* ---- queries ---- */

double oss_qos_job_rate_locked(const oss_qos *q, const qost *o, const char *job,
			       int64_t *tokens, double *record, double *nodes)
{
	const qjob *j = (const qjob *)oss_jobmap_find(&o->jobs, job);
	double rate = -1;

	*tokens = -1;
	*record = 0;
	*nodes = j ? j->nodes : 0;
	if (o->mode == PFS_QOS_MODE_RATES && j && j->rate >= 0)
		rate = j->rate;
	if (o->mode == PFS_QOS_MODE_ADAPTBF && o->adapt) {
		int64_t t;
		double r;

		if (oss_adapt_job(o->adapt, job, &t, &r) == 0) {
			*record = r;
			*tokens = t < 0 ? 0 : t;
			if (t >= 0)
				rate = (double)t / q->period * OSS_QOS_TOKEN_BYTES;
		}
	}
	return rate;
}

double oss_qos_capacity(oss_qos *q, size_t slot)
{
	double c = 0;

	pthread_mutex_lock(&q->lock);
	if (slot < q->n)
		c = oss_qos_cap_locked(&q->o[slot]);
	pthread_mutex_unlock(&q->lock);
	return c;
}

double oss_qos_tokens_rate(oss_qos *q, size_t slot)
{
	double t = 0;

	pthread_mutex_lock(&q->lock);
	if (slot < q->n)
		t = oss_qos_T_locked(&q->o[slot]);
	pthread_mutex_unlock(&q->lock);
	return t;
}

int oss_qos_mode(oss_qos *q, size_t slot)
{
	int m = -1;

	pthread_mutex_lock(&q->lock);
	if (slot < q->n)
		m = q->o[slot].mode;
	pthread_mutex_unlock(&q->lock);
	return m;
}

unsigned oss_qos_enforce(const oss_qos *q) { return q->enforce; }
