/* qosview.c — what the QoS controller shows: PFS_OP_MDS_QOS_SHOW,
 * QOS_COUPONS, QOS_REGRET, and the figures the metrics exporter reads.
 * Everything here takes the controller's lock briefly and never touches
 * the network; job ownership comes from the registry (mds/jobs.h).
 *
 * Coupon worth: GIFT's coupons are worth capacity units (bytes/s here)
 * summed over a job's OSTs for one decision interval (qos/coupon.h); the
 * replies give bytes, worth x the current interval, so a changed interval
 * rescales the old coupons too (an approximation admins can live with). */
#include "mds/qosctl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mds/qosctl_i.h"
#include "qos/coupon.h"

int mds_qctl_visible(mds_qosctl *c, const char *job, uint32_t uid)
{
	pfs_job_info info;

	if (uid == 0)
		return 1;
	return uid != MDS_JOB_UID_UNKNOWN && mds_jobs_get(c->jobs, job, &info) == 0 &&
	       info.uid == uid;
}

/* For a named job: 0 if uid may see it, -EACCES if someone else's, -ENOENT
 * if the registry does not know it (root: 0 unless known is 0 too). */
static int may_see(mds_qosctl *c, const char *job, uint32_t uid, int known_here)
{
	pfs_job_info info;
	int rc = mds_jobs_get(c->jobs, job, &info);

	if (uid == 0)
		return rc == 0 || known_here ? 0 : -ENOENT;
	if (rc)
		return -ENOENT;
	return info.uid == uid && uid != MDS_JOB_UID_UNKNOWN ? 0 : -EACCES;
}

static int row_cmp(const void *a, const void *b)
{
	const pfs_qos_row *x = a, *y = b;
	int r = strcmp(x->job, y->job);

	return r ? r : (x->ost > y->ost) - (x->ost < y->ost);
}

static void status_fill(mds_qosctl *c, pfs_qos_status *st)
{
	uint32_t k = 0;

	memset(st, 0, sizeof(*st));
	memcpy(st->policy, c->pol.name, sizeof(st->policy));
	st->decided_ns = c->st.decided_ns;
	st->answered = c->st.answered;
	st->oss_total = c->st.oss_total;
	st->quorum_pct = c->quorum;
	st->interval = c->interval;
	st->decision_ms = c->st.decision_ms;
	st->decisions = c->st.decisions;
	st->skipped = c->st.skipped;
	for (uint32_t i = 0; i < c->pol.n && k < PFS_QOS_PARAMS_MAX; i++, k++) {
		memcpy(st->params[k].key, c->pol.keys[i], PFS_QOS_NAME_MAX);
		st->params[k].value = c->pol.vals[i];
	}
	if (c->pol.kind == QCTL_ADAPTBF && k < PFS_QOS_PARAMS_MAX) {
		strcpy(st->params[k].key, "adaptbf_period");
		st->params[k++].value = c->adaptbf_period;
	}
	st->n_params = k;
}

int mds_qosctl_show(mds_qosctl *c, const char *job, uint32_t uid, uint32_t max_rows,
		    pfs_qos_status *st, pfs_qos_row **rows, uint32_t *nrows)
{
	pfs_qos_row *v = NULL;
	size_t n = 0, cap = 0, keep = 0;
	int rc = 0;

	*rows = NULL;
	*nrows = 0;
	pthread_mutex_lock(&c->lock);
	status_fill(c, st);
	for (size_t i = 0; i < c->noss; i++)
		cap += c->oss[i].nlast;
	if (cap && !(v = malloc(cap * sizeof(*v)))) {
		pthread_mutex_unlock(&c->lock);
		return -ENOMEM;
	}
	for (size_t i = 0; i < c->noss; i++) {
		const struct qctl_oss *m = &c->oss[i];
		for (uint32_t k = 0; k < m->nlast; k++) {
			const struct qctl_stat *s = &m->last[k];
			pfs_qos_row *r;
			if (job[0] && strcmp(job, s->job))
				continue;
			r = &v[n++];
			memcpy(r->job, s->job, sizeof(r->job));
			r->ost = s->ost;
			r->alloc = s->oss_rate < 0 ? -1.0 : s->oss_rate;
			for (uint32_t a = 0; a < m->nrows; a++)
				if (m->rows[a].ost == s->ost && !strcmp(m->rows[a].job, s->job)) {
					r->alloc = m->rows[a].rate;
					break;
				}
			r->achieved = s->achieved;
			r->demand = s->demand;
			r->throttled = s->throttled;
		}
	}
	pthread_mutex_unlock(&c->lock);
	if (job[0]) {
		rc = may_see(c, job, uid, n > 0);
		if (rc) {
			free(v);
			return rc;
		}
	}
	if (n > 1)
		qsort(v, n, sizeof(*v), row_cmp);
	/* ownership once per job (rows are grouped by job now) */
	for (size_t i = 0, ok = 0; i < n && keep < max_rows; i++) {
		if (i == 0 || strcmp(v[i].job, v[i - 1].job))
			ok = mds_qctl_visible(c, v[i].job, uid);
		if (ok)
			v[keep++] = v[i];
	}
	if (!keep) {
		free(v);
		v = NULL;
	}
	*rows = v;
	*nrows = (uint32_t)keep;
	return 0;
}

static int cmp_id(const void *a, const void *b)
{
	return strcmp(a, b);
}

int mds_qosctl_coupons(mds_qosctl *c, const char *job, uint32_t uid,
		       pfs_qos_coupon_info **out, uint32_t *nout)
{
	char (*ids)[PFS_JOBID_MAX + 1] = NULL;
	pfs_job_info *reg = NULL;
	pfs_qos_coupon_info *v = NULL;
	uint32_t nreg = 0;
	size_t nid = 0, n = 0;
	int rc;

	*out = NULL;
	*nout = 0;
	if (job[0]) {
		rc = may_see(c, job, uid, 0);
		if (rc == -ENOENT && uid == 0) {
			/* root may ask about a job the registry forgot */
			pthread_mutex_lock(&c->lock);
			qos_coupon_job_info ci;
			int known = c->gift &&
				    !qos_coupon_job_get(qos_gift_coupons(c->gift), job, &ci);
			pthread_mutex_unlock(&c->lock);
			rc = known ? 0 : -ENOENT;
		}
		if (rc)
			return rc;
	} else {
		rc = mds_jobs_list(c->jobs, 1, &reg, &nreg);
		if (rc)
			return rc;
	}
	pthread_mutex_lock(&c->lock);
	ids = malloc((nreg + c->ndec_jobs + 1) * sizeof(*ids));
	if (!ids) {
		pthread_mutex_unlock(&c->lock);
		free(reg);
		return -ENOMEM;
	}
	if (job[0]) {
		strcpy(ids[nid++], job);
	} else {
		for (uint32_t i = 0; i < nreg; i++)
			strcpy(ids[nid++], reg[i].job);
		for (size_t i = 0; i < c->ndec_jobs; i++)
			strcpy(ids[nid++], c->dec_jobs[i]);
	}
	qsort(ids, nid, sizeof(*ids), cmp_id);
	v = calloc(nid + 1, sizeof(*v));
	if (!v) {
		pthread_mutex_unlock(&c->lock);
		free(ids);
		free(reg);
		return -ENOMEM;
	}
	for (size_t i = 0; c->gift && i < nid; i++) {
		qos_coupon_job_info ci;
		if (i > 0 && !strcmp(ids[i], ids[i - 1]))
			continue;
		if (qos_coupon_job_get(qos_gift_coupons(c->gift), ids[i], &ci))
			continue;
		pfs_qos_coupon_info *r = &v[n++];
		strcpy(r->job, ids[i]);
		r->rate = ci.rate;
		r->outstanding = ci.outstanding * c->interval;
		r->issued = ci.issued * c->interval;
		r->redeemed = ci.redeemed * c->interval;
		r->owed_nh = ci.owed_nh;
		r->awarded_nh = ci.awarded_nh;
		r->n_coupons = ci.n_coupons;
	}
	pthread_mutex_unlock(&c->lock);
	free(ids);
	free(reg);
	/* the listing shows a user only its own jobs */
	size_t keep = 0;
	for (size_t i = 0; i < n; i++)
		if (job[0] || mds_qctl_visible(c, v[i].job, uid))
			v[keep++] = v[i];
	if (!keep) {
		free(v);
		v = NULL;
	}
	*out = v;
	*nout = (uint32_t)keep;
	return 0;
}

int mds_qosctl_regret(mds_qosctl *c, pfs_qos_regret_info *r)
{
	qos_gift_params p;

	memset(r, 0, sizeof(*r));
	pthread_mutex_lock(&c->lock);
	if (c->gift) {
		qos_gift_stats gs;
		qos_gift_stats_get(c->gift, &gs);
		p = c->gift_p;
		r->awarded_nh = gs.awarded_nh;
		r->liability_nh = gs.liability_nh;
		r->c_sys = qos_coupon_system_rate(qos_gift_coupons(c->gift));
		r->coupons_issued = gs.coupons_issued;
		r->redemptions = gs.redemptions;
		r->assessments = gs.assessments;
		r->worth_issued = gs.worth_issued * c->interval;
		r->worth_redeemed = gs.worth_redeemed * c->interval;
	} else {
		qos_gift_params_default(&p);
		r->c_sys = 1.0;
	}
	pthread_mutex_unlock(&c->lock);
	r->budget_nh = p.regret_budget;
	r->period_s = p.regret_period;
	return 0;
}

void mds_qosctl_counters_get(mds_qosctl *c, mds_qosctl_counters *o)
{
	memset(o, 0, sizeof(*o));
	pthread_mutex_lock(&c->lock);
	o->decisions = c->st.decisions;
	o->skipped = c->st.skipped;
	o->push_failures = c->push_failures;
	o->decision_s = c->st.decision_ms * 1e-3;
	o->answered = c->st.answered;
	o->oss_total = c->st.oss_total;
	if (c->gift)
		o->awarded_nh = qos_coupon_awarded_total(qos_gift_coupons(c->gift));
	pthread_mutex_unlock(&c->lock);
}

int mds_qosctl_allocs(mds_qosctl *c, pfs_qos_alloc **rows, uint32_t *n)
{
	size_t cap = 0, k = 0;
	pfs_qos_alloc *v = NULL;

	pthread_mutex_lock(&c->lock);
	for (size_t i = 0; i < c->noss; i++)
		cap += c->oss[i].nrows;
	if (cap && !(v = malloc(cap * sizeof(*v)))) {
		pthread_mutex_unlock(&c->lock);
		return -ENOMEM;
	}
	for (size_t i = 0; i < c->noss; i++)
		for (uint32_t a = 0; a < c->oss[i].nrows; a++)
			v[k++] = c->oss[i].rows[a];
	pthread_mutex_unlock(&c->lock);
	*rows = v;
	*n = (uint32_t)k;
	return 0;
}
