/* qosctl.c — the QoS control loop (see qosctl.h): creation from the
 * configuration and the stored records, policy changes, the loop's thread,
 * and writing GIFT's ledger.  The step itself is in qosstep.c, the
 * instance and allocation sets in qosinst.c, the admin views in
 * qosview.c, the policies in qospol.c. */
#include "mds/qosctl.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/proto.h"
#include "mds/qosctl_i.h"

#define DEFAULT_INTERVAL 10.0
#define DEFAULT_QUORUM 80u
#define DEFAULT_ADAPTBF_PERIOD 0.1

int64_t mds_qctl_rt_now(mds_qosctl *c)
{
	struct timespec ts;

	if (c->clock_ns)
		return c->clock_ns(c->clock_arg);
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

double mds_qctl_mono_s(void)
{
	return pfs_clock_s();
}

/* Policy clock: seconds since the stored epoch, never going back. */
double mds_qctl_pol_now(mds_qosctl *c)
{
	double t = (double)(mds_qctl_rt_now(c) - c->st.epoch_ns) * 1e-9;

	return t > c->st.last_now ? t : c->st.last_now;
}

double mds_qosctl_now(mds_qosctl *c)
{
	double t;

	pthread_mutex_lock(&c->lock);
	t = mds_qctl_pol_now(c);
	pthread_mutex_unlock(&c->lock);
	return t;
}

/* Job ids come from the wire (at most PFS_JOBID_MAX bytes) into qos_job.id
 * (QOS_ID_MAX) and back into fixed PFS_JOBID_MAX + 1 fields. */
void mds_qctl_copy_id(char dst[PFS_JOBID_MAX + 1], const char *src)
{
	size_t n = strnlen(src, PFS_JOBID_MAX);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

void mds_qos_report_free(mds_qos_report *r)
{
	free(r->osts);
	free(r->stats);
	memset(r, 0, sizeof(*r));
}

/* Write GIFT's ledger into t (with its parameters). */
int mds_qctl_save_gift(mds_qosctl *c, mds_kv_txn *t)
{
	uint8_t *img = NULL;
	size_t len = 0;
	int rc;

	if (!c->gift)
		return 0;
	rc = qos_gift_save(c->gift, &img, &len);
	if (!rc)
		rc = mds_qos_store_put_gift(t, &c->gift_p, img, len);
	free(img);
	return rc;
}

int mds_qosctl_set(mds_qosctl *c, const char *policy, const qos_param *kv, size_t n)
{
	struct qctl_pol np;
	mds_qos_policy_rec rec;
	qos_gift *ng = NULL;
	qos_gift_params ngp;
	mds_kv_txn *t = NULL;
	double interval, period;
	uint32_t quorum;
	char text[512];
	int rc = -EINVAL;

	for (size_t i = 0; i < n; i++) {
		if (!kv[i].key || !kv[i].key[0] || strlen(kv[i].key) >= PFS_QOS_NAME_MAX ||
		    !isfinite(kv[i].value))
			return -EINVAL;
		for (size_t k = 0; k < i; k++)
			if (!strcmp(kv[k].key, kv[i].key))
				return -EINVAL;
	}
	if (policy && strlen(policy) >= PFS_QOS_NAME_MAX)
		return -EINVAL;
	pthread_mutex_lock(&c->lock);
	interval = c->interval;
	quorum = c->quorum;
	period = c->adaptbf_period;
	memset(&np, 0, sizeof(np));
	if (policy && *policy) {
		strcpy(np.name, policy);
	} else {
		memcpy(np.name, c->pol.name, sizeof(np.name));
		np.n = c->pol.n;
		memcpy(np.keys, c->pol.keys, sizeof(np.keys));
		memcpy(np.vals, c->pol.vals, sizeof(np.vals));
	}
	for (size_t i = 0; i < n; i++) {
		uint32_t k;

		if (mds_qctl_is_ctl_key(kv[i].key)) {
			if (mds_qctl_ctl_key(kv[i].key, kv[i].value, &interval, &quorum, &period))
				goto out;
			continue;
		}
		for (k = 0; k < np.n && strcmp(np.keys[k], kv[i].key); k++)
			;
		if (k == np.n) {
			if (np.n >= PFS_QOS_PARAMS_MAX)
				goto out;
			strcpy(np.keys[np.n++], kv[i].key);
		}
		np.vals[k] = kv[i].value;
	}
	rc = mds_qctl_pol_build(c, &np, 0, &ng, &ngp);
	if (rc)
		goto out;
	mds_qctl_rec_from_pol(&rec, &np, interval, quorum, period);
	rc = mds_ns_kv_begin(c->ns, 1, &t);
	if (!rc)
		rc = mds_qos_store_put_policy(t, &rec);
	/* Leaving GIFT: its ledger as it is now, for the day it comes back. */
	if (!rc && c->pol.kind == QCTL_GIFT && np.kind != QCTL_GIFT)
		rc = mds_qctl_save_gift(c, t);
	if (!rc) {
		rc = mds_ns_kv_commit(t);
		t = NULL;
	}
	if (rc)
		goto out;
	mds_qctl_pol_free(&c->pol);
	c->pol = np;
	memset(&np, 0, sizeof(np));
	if (ng) {
		qos_gift_destroy(c->gift);
		c->gift = ng;
		c->gift_p = ngp;
		ng = NULL;
	}
	c->interval = interval;
	c->quorum = quorum;
	c->adaptbf_period = period;
	if (c->pol.kind == QCTL_NONE)
		for (size_t i = 0; i < c->noss; i++)
			c->oss[i].none_sent = 0;
	pthread_cond_broadcast(&c->cv);
	mds_qctl_pol_text(&c->pol, text, sizeof(text));
	pfs_log(PFS_LOG_NOTICE, "qos: policy %s, interval %g s, quorum %u%%, adaptbf_period %g s",
		text, interval, quorum, period);
out:
	mds_ns_kv_abort(t);
	mds_qctl_pol_free(&np);
	qos_gift_destroy(ng);
	pthread_mutex_unlock(&c->lock);
	return rc;
}
/* ------------------------------------------------------------ create */

/* Load the persisted records; a GIFT image that will not load is kept
 * aside (*bad, malloc'd raw record) and the ledger starts empty. */
static int load_store(mds_qosctl *c, mds_qos_policy_rec *rec, int *has_rec, int *has_st,
		      uint8_t **bad, size_t *bad_len)
{
	mds_kv_txn *t;
	const uint8_t *img;
	size_t len;
	qos_gift_params gp;
	int rc = mds_ns_kv_begin(c->ns, 0, &t);

	if (rc)
		return rc;
	rc = mds_qos_store_get_policy(t, rec);
	*has_rec = rc == 0;
	if (rc == -EBADMSG)
		pfs_log(PFS_LOG_ERR, "qos: stored policy record is damaged; using the configuration");
	rc = mds_qos_store_get_state(t, &c->st);
	*has_st = rc == 0;
	if (rc == -EBADMSG)
		pfs_log(PFS_LOG_ERR, "qos: stored decision record is damaged; starting a new one");
	if (!*has_st)
		memset(&c->st, 0, sizeof(c->st));
	rc = mds_qos_store_get_gift(t, &gp, &img, &len);
	if (rc == 0)
		rc = qos_gift_load(&gp, img, len, &c->gift);
	if (rc == 0) {
		c->gift_p = gp;
	} else if (rc != -ENOENT) {
		const void *raw;
		size_t rlen;

		pfs_log(PFS_LOG_ERR, "qos: stored GIFT ledger does not load (%s); kept as "
			"gift.bad, starting an empty ledger",
			rc == -EBADMSG ? "damaged or of an unknown version" : pfs_strerror(rc));
		if (mds_ns_kv_get(t, MDS_KV_QOS, "gift", 4, &raw, &rlen) == 0 &&
		    (*bad = malloc(rlen ? rlen : 1))) {
			memcpy(*bad, raw, rlen);
			*bad_len = rlen;
		}
	}
	mds_ns_kv_abort(t);
	return 0;
}

int mds_qosctl_create(mds_ns *ns, mds_jobs *jobs, const mds_qosctl_opts *o,
		      mds_qosctl **out, char *err, size_t errlen)
{
	mds_qosctl *c = calloc(1, sizeof(*c));
	struct qctl_pol cfg, dbp;
	mds_qos_policy_rec rec;
	qos_gift *ng = NULL;
	qos_gift_params ngp;
	uint8_t *bad = NULL;
	size_t bad_len = 0;
	int has_rec = 0, has_st = 0, rc;
	char text[512];

	snprintf(err, errlen, "out of memory");
	if (!c)
		return -ENOMEM;
	c->ns = ns;
	c->jobs = jobs;
	c->ops = o->ops;
	c->clock_ns = o->clock_ns;
	c->clock_arg = o->clock_arg;
	pthread_mutex_init(&c->lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&c->cv, &ca);
	pthread_condattr_destroy(&ca);

	/* The configuration, checked even when the database overrides it. */
	memset(&cfg, 0, sizeof(cfg));
	c->interval = o->interval > 0 ? o->interval : DEFAULT_INTERVAL;
	c->quorum = o->quorum ? o->quorum : DEFAULT_QUORUM;
	c->adaptbf_period = o->adaptbf_period > 0 ? o->adaptbf_period : DEFAULT_ADAPTBF_PERIOD;
	rc = -EINVAL;
	if (mds_qctl_ctl_key("interval", c->interval, &c->interval, &c->quorum, &c->adaptbf_period) ||
	    mds_qctl_ctl_key("quorum", c->quorum, &c->interval, &c->quorum, &c->adaptbf_period) ||
	    mds_qctl_ctl_key("adaptbf_period", c->adaptbf_period, &c->interval, &c->quorum,
		    &c->adaptbf_period)) {
		snprintf(err, errlen, "qos_interval must be %g..%g s, qos_quorum 1..100",
			 MDS_QOS_INTERVAL_MIN, MDS_QOS_INTERVAL_MAX);
		goto fail;
	}
	snprintf(cfg.name, sizeof(cfg.name), "%s", o->policy && *o->policy ? o->policy : "none");
	rc = mds_qctl_parse_params(o->params, &cfg, &c->interval, &c->quorum, &c->adaptbf_period, err,
			  errlen);
	if (rc)
		goto fail;
	rc = mds_qctl_pol_build(c, &cfg, 1, NULL, NULL);
	if (rc) {
		snprintf(err, errlen, "qos_policy %s with qos_param '%s': unknown policy, "
			 "unknown key or value out of range", cfg.name, o->params ? o->params : "");
		goto fail;
	}

	rc = load_store(c, &rec, &has_rec, &has_st, &bad, &bad_len);
	if (rc) {
		snprintf(err, errlen, "cannot read the QoS state: %s", pfs_strerror(rc));
		goto fail;
	}
	if (!has_st)
		c->st.epoch_ns = mds_qctl_rt_now(c);
	if (has_rec) {
		mds_qctl_pol_from_rec(&dbp, &rec);
		rc = mds_qctl_pol_build(c, &dbp, 0, &ng, &ngp);
		if (rc) {
			pfs_log(PFS_LOG_ERR, "qos: stored policy %s does not build (%s); using "
				"the configuration", rec.name, pfs_strerror(rc));
			mds_qctl_pol_free(&dbp);
			has_rec = 0;
		} else {
			c->pol = dbp;
			c->interval = rec.interval;
			c->quorum = rec.quorum;
			c->adaptbf_period = rec.adaptbf_period;
			mds_qctl_pol_text(&c->pol, text, sizeof(text));
			pfs_log(PFS_LOG_NOTICE, "qos: policy %s from the database (set with "
				"POLICY_SET; overrides qos_policy)", text);
		}
	}
	if (!has_rec) {
		rc = mds_qctl_pol_build(c, &cfg, 0, &ng, &ngp);
		if (rc) {
			snprintf(err, errlen, "qos_policy %s: %s", cfg.name, pfs_strerror(rc));
			goto fail;
		}
		c->pol = cfg;
		memset(&cfg, 0, sizeof(cfg));
	}
	if (ng) {
		qos_gift_destroy(c->gift);
		c->gift = ng;
		c->gift_p = ngp;
		ng = NULL;
	}
	/* The epoch (and a damaged ledger) are written at once, so the
	 * policy clock is fixed from the first start on. */
	if (!has_st || bad) {
		mds_kv_txn *t;
		rc = mds_ns_kv_begin(ns, 1, &t);
		if (!rc && !has_st)
			rc = mds_qos_store_put_state(t, &c->st);
		if (!rc && bad)
			rc = mds_qos_store_keep_bad(t, "gift", bad, bad_len);
		if (!rc)
			rc = mds_ns_kv_commit(t);
		else
			mds_ns_kv_abort(t);
		if (rc) {
			snprintf(err, errlen, "cannot write the QoS state: %s", pfs_strerror(rc));
			goto fail;
		}
	}
	free(bad);
	*out = c;
	return 0;
fail:
	free(bad);
	mds_qctl_pol_free(&cfg);
	mds_qctl_pol_free(&c->pol);
	qos_gift_destroy(c->gift);
	pthread_cond_destroy(&c->cv);
	pthread_mutex_destroy(&c->lock);
	free(c);
	return rc ? rc : -EINVAL;
}
/* ------------------------------------------------------------ the loop */

static void *loop_main(void *arg)
{
	mds_qosctl *c = arg;

	pthread_mutex_lock(&c->lock);
	while (!c->stop) {
		struct timespec start, dl;
		pthread_mutex_unlock(&c->lock);
		clock_gettime(CLOCK_MONOTONIC, &start);
		mds_qosctl_step(c);
		pthread_mutex_lock(&c->lock);
		/* woken early by a new interval: the deadline moves with it */
		while (!c->stop) {
			double iv = c->interval;
			dl = start;
			dl.tv_sec += (time_t)iv;
			dl.tv_nsec += (long)((iv - floor(iv)) * 1e9);
			if (dl.tv_nsec >= 1000000000L) {
				dl.tv_sec++;
				dl.tv_nsec -= 1000000000L;
			}
			if (pthread_cond_timedwait(&c->cv, &c->lock, &dl) == ETIMEDOUT)
				break;
		}
	}
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

int mds_qosctl_start(mds_qosctl *c)
{
	int rc;

	pthread_mutex_lock(&c->lock);
	if (c->running) {
		pthread_mutex_unlock(&c->lock);
		return -EALREADY;
	}
	c->stop = 0;
	rc = -pthread_create(&c->thr, NULL, loop_main, c);
	c->running = rc == 0;
	pthread_mutex_unlock(&c->lock);
	return rc;
}

void mds_qosctl_destroy(mds_qosctl *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	c->stop = 1;
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->lock);
	if (c->running)
		pthread_join(c->thr, NULL);
	mds_qctl_pol_free(&c->pol);
	qos_gift_destroy(c->gift);
	for (size_t i = 0; i < c->noss; i++) {
		free(c->oss[i].rows);
		free(c->oss[i].last);
	}
	free(c->oss);
	free(c->dec_jobs);
	pthread_cond_destroy(&c->cv);
	pthread_mutex_destroy(&c->lock);
	free(c);
}
