/* qosstep.c — one collect-decide-push round of the QoS controller
 * (qosctl.h, steps 1-6): the OSS list from the OST registry, the quorum,
 * the decision under the lock, the decision record and GIFT's ledger in
 * one transaction, the pushes outside the lock.
 *
 * Cost: the policy (GIFT: one LP, see qos/gift_lp.h) plus one LMDB write
 * of the GIFT image, whose size grows with the jobs that ever held
 * coupons (about N x 4 bytes each, plus ~40 bytes per live coupon). */
#include "mds/qosctl.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/log.h"
#include "common/proto.h"
#include "mds/qosctl_i.h"

/* ------------------------------------------------------------ the OSSes */

static void oss_list_free(mds_qos_oss *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].osts);
	free(v);
}

/* The distinct OSSes of the OST registry, with their OSTs. */
static int oss_list(mds_qosctl *c, mds_qos_oss **out, size_t *nout)
{
	pfs_ost_info *v = NULL;
	uint32_t nv = 0;
	mds_qos_oss *o = NULL;
	size_t n = 0;
	int rc = mds_ns_ost_list(c->ns, &v, &nv);

	if (rc)
		return rc;
	o = calloc(nv ? nv : 1, sizeof(*o));
	if (!o) {
		free(v);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < nv; i++) {
		size_t k;
		for (k = 0; k < n && strncmp(o[k].name, v[i].oss, sizeof(o[k].name)); k++)
			;
		if (k == n) {
			memcpy(o[n].name, v[i].oss, sizeof(o[n].name));
			memcpy(o[n].host, v[i].host, sizeof(o[n].host));
			o[n].name[63] = o[n].host[63] = '\0';
			o[n].ctl_port = v[i].ctl_port;
			o[n].osts = malloc(nv * sizeof(*o[n].osts));
			if (!o[n].osts) {
				oss_list_free(o, n);
				free(v);
				return -ENOMEM;
			}
			n++;
		}
		o[k].osts[o[k].n_osts++] = v[i].index;
		o[k].up |= v[i].up;
	}
	free(v);
	*out = o;
	*nout = n;
	return 0;
}

struct qctl_oss *mds_qctl_oss_mem(mds_qosctl *c, const char *name)
{
	for (size_t i = 0; i < c->noss; i++)
		if (!strcmp(c->oss[i].name, name))
			return &c->oss[i];
	struct qctl_oss *no = realloc(c->oss, (c->noss + 1) * sizeof(*no));
	if (!no)
		return NULL;
	c->oss = no;
	memset(&no[c->noss], 0, sizeof(no[0]));
	snprintf(no[c->noss].name, sizeof(no[0].name), "%s", name);
	return &no[c->noss++];
}

/* Remember each answering OSS's period for QOS_SHOW; lock held. */
static void keep_last(mds_qosctl *c, const mds_qos_oss *oss, const mds_qos_report *rep,
		      size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const mds_qos_report *r = &rep[i];
		struct qctl_oss *m;
		struct qctl_stat *s;
		double per;

		if (r->rc || !(m = mds_qctl_oss_mem(c, oss[i].name)))
			continue;
		s = calloc(r->n ? r->n : 1, sizeof(*s));
		if (!s)
			continue;
		per = r->period_s > 0 && isfinite(r->period_s) ? r->period_s : c->interval;
		for (uint32_t k = 0; k < r->n; k++) {
			const pfs_qos_stat *x = &r->stats[k];
			memcpy(s[k].job, x->job, sizeof(s[k].job));
			s[k].ost = x->ost;
			s[k].achieved = (double)(x->read_bytes + x->write_bytes) / per;
			s[k].demand = (double)x->arrived_bytes / per;
			s[k].oss_rate = x->rate;
			s[k].throttled = x->throttled_us > 0;
		}
		free(m->last);
		m->last = s;
		m->nlast = r->n;
	}
}
/* ------------------------------------------------------------ one step */

/* Push sets to the OSSes (lock not held), then record what is in force. */
static void push_and_record(mds_qosctl *c, const mds_qos_oss *oss, pfs_qos_alloc_set *sets,
			    size_t n)
{
	int *rc = calloc(n + 1, sizeof(*rc));

	if (!rc) {
		pthread_mutex_lock(&c->lock);
		c->push_failures += n;
		pthread_mutex_unlock(&c->lock);
		return;
	}
	if (n)
		c->ops.push(c->ops.ctx, oss, sets, n, rc);
	pthread_mutex_lock(&c->lock);
	for (size_t i = 0; i < n; i++) {
		struct qctl_oss *m = mds_qctl_oss_mem(c, oss[i].name);
		if (!m)
			continue;
		if (rc[i]) {
			c->push_failures++;
			pfs_log(m->push_failing ? PFS_LOG_DEBUG : PFS_LOG_WARNING,
				"qos: push to %s (%s:%u) failed: %s", oss[i].name, oss[i].host,
				oss[i].ctl_port, pfs_strerror(rc[i]));
			m->push_failing = 1;
			continue;
		}
		m->push_failing = 0;
		m->gen = sets[i].generation;
		m->mode = sets[i].mode;
		if (sets[i].mode == PFS_QOS_MODE_NONE)
			m->none_sent = 1;
		free(m->rows);
		m->rows = NULL;
		m->nrows = 0;
		if (sets[i].mode == PFS_QOS_MODE_RATES) {
			m->rows = sets[i].rows;
			m->nrows = sets[i].n;
			sets[i].rows = NULL;
		}
	}
	pthread_mutex_unlock(&c->lock);
	free(rc);
}

/* Write the decision record (and GIFT's ledger) in one transaction. */
static void persist_locked(mds_qosctl *c)
{
	mds_kv_txn *t;
	int rc = mds_ns_kv_begin(c->ns, 1, &t);

	if (!rc)
		rc = mds_qos_store_put_state(t, &c->st);
	if (!rc && c->pol.kind == QCTL_GIFT)
		rc = mds_qctl_save_gift(c, t);
	if (!rc)
		rc = mds_ns_kv_commit(t);
	else
		mds_ns_kv_abort(t);
	if (rc)
		pfs_log(PFS_LOG_ERR, "qos: cannot save decision %llu: %s",
			(unsigned long long)c->st.decisions, pfs_strerror(rc));
}

/* Remember the jobs of this decision (for QOS_COUPONS listings). */
static void keep_dec_jobs(mds_qosctl *c, const struct qctl_inst *x)
{
	char (*v)[PFS_JOBID_MAX + 1] = malloc((x->nj + 1) * sizeof(*v));

	if (!v)
		return;
	for (size_t j = 0; j < x->nj; j++)
		mds_qctl_copy_id(v[j], x->jobs[j].id);
	free(c->dec_jobs);
	c->dec_jobs = v;
	c->ndec_jobs = x->nj;
}

/* Policy none: MODE_NONE to each answering OSS that has not had it. */
static int step_none(mds_qosctl *c, const mds_qos_oss *oss, const mds_qos_report *rep,
		     size_t n)
{
	mds_qos_oss *to = calloc(n + 1, sizeof(*to));
	pfs_qos_alloc_set *sets = calloc(n + 1, sizeof(*sets));
	size_t k = 0;

	if (!to || !sets) {
		pthread_mutex_unlock(&c->lock);
		free(to);
		free(sets);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		struct qctl_oss *m = mds_qctl_oss_mem(c, oss[i].name);
		if (rep[i].rc || !m || m->none_sent)
			continue;
		to[k] = oss[i];
		sets[k].mode = PFS_QOS_MODE_NONE;
		sets[k].adaptbf_period = c->adaptbf_period;
		k++;
	}
	if (k) {
		c->st.generation++;
		for (size_t i = 0; i < k; i++)
			sets[i].generation = c->st.generation;
		persist_locked(c);
		pfs_log(PFS_LOG_INFO, "qos: policy none: clearing MDS rules on %zu OSS(es)", k);
	}
	pthread_mutex_unlock(&c->lock);
	push_and_record(c, to, sets, k);
	mds_qctl_sets_free(sets, k);
	free(to);
	return 0;
}

int mds_qosctl_step(mds_qosctl *c)
{
	mds_qos_oss *oss = NULL;
	mds_qos_report *rep = NULL;
	pfs_qos_alloc_set *sets = NULL;
	mds_qos_oss *to = NULL;
	pfs_job_info *reg = NULL;
	uint32_t nreg = 0;
	struct qctl_inst x;
	size_t n = 0, answered = 0, total = 0, k = 0;
	int rc, changed = 0;
	double t0, dt = 0;

	memset(&x, 0, sizeof(x));
	mds_jobs_prune(c->jobs, NULL);
	rc = oss_list(c, &oss, &n);
	if (rc)
		return rc;
	if (!n) {
		free(oss);
		return -ENODEV;
	}
	rep = calloc(n, sizeof(*rep));
	if (!rep) {
		oss_list_free(oss, n);
		return -ENOMEM;
	}
	c->ops.collect(c->ops.ctx, oss, n, rep);
	for (size_t i = 0; i < n; i++) {
		if (rep[i].rc == 0) {
			answered++;
			/* every job id an OSS reports gets a registry entry */
			for (uint32_t s = 0; s < rep[i].n; s++)
				mds_jobs_seen(c->jobs, rep[i].stats[s].job, MDS_JOB_UID_UNKNOWN);
		}
		if (rep[i].rc == 0 || oss[i].up)
			total++;
	}

	/* AdapTBF's sets name every running registered job: read the
	 * registry before taking the lock (a policy change in between only
	 * means one set more or less of the old kind). */
	pthread_mutex_lock(&c->lock);
	int want_reg = c->pol.kind == QCTL_ADAPTBF;
	pthread_mutex_unlock(&c->lock);
	if (want_reg && (rc = mds_jobs_list(c->jobs, 0, &reg, &nreg)))
		goto out;

	pthread_mutex_lock(&c->lock);
	keep_last(c, oss, rep, n);
	if (c->pol.kind == QCTL_NONE) {
		rc = step_none(c, oss, rep, n); /* unlocks */
		goto out;
	}
	if (!answered || answered * 100 < (size_t)c->quorum * total) {
		int was = c->last_skipped;
		c->st.skipped++;
		c->last_skipped = 1;
		pfs_log(was ? PFS_LOG_DEBUG : PFS_LOG_INFO,
			"qos: no quorum: %zu of %zu OSS(es) answered, %u%% needed; interval "
			"skipped (%llu so far)", answered, total, c->quorum,
			(unsigned long long)c->st.skipped);
		pthread_mutex_unlock(&c->lock);
		rc = -EAGAIN;
		goto out;
	}
	rc = mds_qctl_inst_build(c, oss, rep, n, &x);
	if (rc) {
		pthread_mutex_unlock(&c->lock);
		goto out;
	}
	to = calloc(n, sizeof(*to));
	sets = calloc(n, sizeof(*sets));
	if (!to || !sets) {
		pthread_mutex_unlock(&c->lock);
		rc = -ENOMEM;
		goto out;
	}
	/* answering OSSes, in report order: sets[i] goes to to[i] */
	size_t *slot = calloc(n, sizeof(*slot));
	if (!slot) {
		pthread_mutex_unlock(&c->lock);
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		if (!rep[i].rc) {
			slot[i] = k;
			to[k++] = oss[i];
		}
	for (size_t col = 0; col < x.no; col++)
		x.col_oss[col] = slot[x.col_oss[col]];
	free(slot);

	double now = mds_qctl_pol_now(c);
	if (c->pol.kind == QCTL_ADAPTBF) {
		for (size_t i = 0, s = 0; !rc && i < n; i++)
			if (!rep[i].rc)
				rc = mds_qctl_set_adaptbf(c, &rep[i], reg, nreg, &sets[s++]);
		for (size_t s = 0; s < k; s++)
			sets[s].mode = PFS_QOS_MODE_ADAPTBF;
	} else {
		qos_instance in = {
			.n_osts = x.no, .n_jobs = x.nj, .capacity = x.cap, .jobs = x.jobs,
			.active = x.active, .usage = x.usage, .demand = x.demand,
			.period = c->interval, .now = now,
		};
		qos_result res = { .alloc = x.alloc, .coupons = x.coupons };
		t0 = mds_qctl_mono_s();
		rc = c->pol.kind == QCTL_GIFT ? qos_gift_decide(c->gift, &in, &res)
					      : c->pol.ops->decide(c->pol.state, &in, &res);
		dt = mds_qctl_mono_s() - t0;
		if (!rc)
			rc = mds_qctl_sets_rates(&x, k, sets);
		for (size_t s = 0; s < k; s++)
			sets[s].mode = PFS_QOS_MODE_RATES;
	}
	if (rc) {
		pfs_log(PFS_LOG_ERR, "qos: policy %s failed: %s", c->pol.name, pfs_strerror(rc));
		pthread_mutex_unlock(&c->lock);
		goto out;
	}
	c->st.generation++;
	for (size_t s = 0; s < k; s++) {
		sets[s].generation = c->st.generation;
		sets[s].adaptbf_period = c->adaptbf_period;
		changed |= mds_qctl_set_changed(mds_qctl_oss_mem(c, to[s].name), &sets[s]);
	}
	changed |= c->last_skipped || c->st.answered != answered || c->st.oss_total != total;
	c->last_skipped = 0;
	c->st.decisions++;
	c->st.last_now = now;
	c->st.decided_ns = mds_qctl_rt_now(c);
	c->st.decision_ms = dt * 1e3;
	c->st.answered = (uint32_t)answered;
	c->st.oss_total = (uint32_t)total;
	keep_dec_jobs(c, &x);
	persist_locked(c);
	pfs_log(changed ? PFS_LOG_INFO : PFS_LOG_DEBUG,
		"qos: decision %llu (%s): %zu of %zu OSS(es) answered, %zu job(s) on %zu "
		"OST(s), %.3f ms", (unsigned long long)c->st.decisions, c->pol.name, answered,
		total, x.nj, x.no, dt * 1e3);
	pthread_mutex_unlock(&c->lock);
	push_and_record(c, to, sets, k);
	rc = 0;
out:
	mds_qctl_sets_free(sets, k);
	free(to);
	free(reg);
	mds_qctl_inst_free(&x);
	for (size_t i = 0; i < n; i++)
		mds_qos_report_free(&rep[i]);
	free(rep);
	oss_list_free(oss, n);
	return rc;
}
