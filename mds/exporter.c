/* exporter.c — the MDS metrics families (see exporter.h) written by the
 * fill callback of a common/metrics.h endpoint. */
#include "mds/exporter.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/metrics.h"
#include "common/proto.h"
#include "mds/mdqos.h"

struct mds_exporter {
	pfs_metrics *m;
	mds_server *srv;
	mds_jobs *jobs;
	mds_qosctl *qos;
	mds_mdqos *mdq; /* atomic: set after start */
};

static void op_sample(void *arg, const char *job, uint16_t op, uint64_t count)
{
	pfs_metrics_sample(arg, "pfs_mds_job_ops_total", (double)count, "job", job, "op",
			   op ? pfs_op_name(op) : "other", NULL);
}

static int fill_qos(mds_exporter *e, pfs_metrics_buf *b)
{
	mds_qosctl_counters c;
	pfs_qos_alloc *al = NULL;
	pfs_qos_coupon_info *cp = NULL;
	uint32_t n = 0;
	char ost[16];
	int rc;

	mds_qosctl_counters_get(e->qos, &c);
	pfs_metrics_family(b, "pfs_mds_qos_decisions_total", "counter",
			   "QoS decisions made by the MDS controller");
	pfs_metrics_sample(b, "pfs_mds_qos_decisions_total", (double)c.decisions, NULL);
	pfs_metrics_family(b, "pfs_mds_qos_skipped_total", "counter",
			   "QoS intervals skipped for lack of quorum");
	pfs_metrics_sample(b, "pfs_mds_qos_skipped_total", (double)c.skipped, NULL);
	pfs_metrics_family(b, "pfs_mds_qos_push_failures_total", "counter",
			   "allocation sets an OSS did not take");
	pfs_metrics_sample(b, "pfs_mds_qos_push_failures_total", (double)c.push_failures, NULL);
	pfs_metrics_family(b, "pfs_mds_qos_decision_seconds", "gauge",
			   "time the policy took in the last decision");
	pfs_metrics_sample(b, "pfs_mds_qos_decision_seconds", c.decision_s, NULL);
	pfs_metrics_family(b, "pfs_mds_qos_quorum_answered", "gauge",
			   "OSSes that answered for the last decision");
	pfs_metrics_sample(b, "pfs_mds_qos_quorum_answered", c.answered, NULL);
	pfs_metrics_family(b, "pfs_mds_qos_quorum_total", "gauge",
			   "OSSes counted for the last decision's quorum");
	pfs_metrics_sample(b, "pfs_mds_qos_quorum_total", c.oss_total, NULL);

	rc = mds_qosctl_allocs(e->qos, &al, &n);
	if (rc)
		return rc;
	pfs_metrics_family(b, "pfs_mds_qos_alloc_bytes", "gauge",
			   "rate allocated to a job on an OST, bytes/s");
	for (uint32_t i = 0; i < n; i++) {
		snprintf(ost, sizeof(ost), "%u", al[i].ost);
		pfs_metrics_sample(b, "pfs_mds_qos_alloc_bytes", al[i].rate, "job", al[i].job,
				   "ost", ost, NULL);
	}
	free(al);

	rc = mds_qosctl_coupons(e->qos, "", 0, &cp, &n);
	if (rc)
		return rc;
	pfs_metrics_family(b, "pfs_mds_gift_coupon_outstanding", "gauge",
			   "GIFT coupon worth not yet redeemed, bytes");
	for (uint32_t i = 0; i < n; i++)
		pfs_metrics_sample(b, "pfs_mds_gift_coupon_outstanding", cp[i].outstanding,
				   "job", cp[i].job, NULL);
	free(cp);
	pfs_metrics_family(b, "pfs_mds_gift_regret_awarded_nodehours", "counter",
			   "node-hours GIFT awarded from the regret budget");
	pfs_metrics_sample(b, "pfs_mds_gift_regret_awarded_nodehours", c.awarded_nh, NULL);
	return 0;
}

static int fill_mdqos(mds_mdqos *q, pfs_metrics_buf *b)
{
	pfs_mdq_status st;
	int rc = mds_mdqos_show(q, &st);

	if (rc)
		return rc;
	pfs_metrics_family(b, "pfs_mds_mdqos_held_total", "counter",
			   "requests the MDS held back (PADLL enforcement)");
	pfs_metrics_sample(b, "pfs_mds_mdqos_held_total", (double)st.held, NULL);
	pfs_metrics_family(b, "pfs_mds_mdqos_max_r", "gauge", "PADLL Max_R per class, requests/s");
	for (unsigned c = 1; c < PFS_MDQ_NCLASSES; c++)
		if (st.max_r[c] > 0)
			pfs_metrics_sample(b, "pfs_mds_mdqos_max_r", st.max_r[c], "class",
					   pfs_mdq_class_name(c), NULL);
	pfs_metrics_family(b, "pfs_mds_mdqos_rate", "gauge",
			   "PADLL rate per job and class, requests/s");
	for (uint32_t i = 0; i < st.n; i++)
		if (st.rows[i].rate > 0)
			pfs_metrics_sample(b, "pfs_mds_mdqos_rate", st.rows[i].rate, "job",
					   st.rows[i].job, "class",
					   pfs_mdq_class_name(st.rows[i].cls), NULL);
	pfs_metrics_family(b, "pfs_mds_mdqos_served", "gauge",
			   "requests/s served per job and class in the last PADLL period");
	for (uint32_t i = 0; i < st.n; i++)
		pfs_metrics_sample(b, "pfs_mds_mdqos_served", st.rows[i].served, "job",
				   st.rows[i].job, "class", pfs_mdq_class_name(st.rows[i].cls),
				   NULL);
	pfs_mdq_status_free(&st);
	return 0;
}

void mds_exporter_set_mdqos(mds_exporter *e, mds_mdqos *q)
{
	if (e)
		__atomic_store_n(&e->mdq, q, __ATOMIC_RELEASE);
}

/* Directory delegations (mds/deleg.h); nothing when they are off:
 *   pfs_mds_deleg_total{event}   counter  grant, renew, refusal, recall, return,
 *                                         recall_timeout, expiry, forced,
 *                                         unheard (the holder's channel was gone)
 *   pfs_mds_deleg_parked_total   counter  requests that waited for a recall
 *   pfs_mds_deleg_parked         gauge    requests waiting now
 *   pfs_mds_deleg_held           gauge    delegations held now */
static void fill_deleg(mds_server *srv, pfs_metrics_buf *b)
{
	mds_deleg_stats st;

	if (mds_server_deleg_stats(srv, &st))
		return;
	pfs_metrics_family(b, "pfs_mds_deleg_total", "counter",
			   "directory delegation events (asynchronous unlink)");
	pfs_metrics_sample(b, "pfs_mds_deleg_total", (double)st.grants, "event", "grant", NULL);
	pfs_metrics_sample(b, "pfs_mds_deleg_total", (double)st.renewals, "event", "renew",
			   NULL);
	pfs_metrics_sample(b, "pfs_mds_deleg_total", (double)st.refusals, "event", "refusal",
			   NULL);
	pfs_metrics_sample(b, "pfs_mds_deleg_total", (double)st.recalls, "event", "recall",
			   NULL);
	pfs_metrics_sample(b, "pfs_mds_deleg_total", (double)st.returns, "event", "return",
			   NULL);
	pfs_metrics_sample(b, "pfs_mds_deleg_total", (double)st.timeouts, "event",
			   "recall_timeout", NULL);
	pfs_metrics_sample(b, "pfs_mds_deleg_total", (double)st.expired, "event", "expiry",
			   NULL);
	pfs_metrics_sample(b, "pfs_mds_deleg_total", (double)st.forced, "event", "forced",
			   NULL);
	pfs_metrics_sample(b, "pfs_mds_deleg_total", (double)st.unheard, "event", "unheard",
			   NULL);
	pfs_metrics_family(b, "pfs_mds_deleg_parked_total", "counter",
			   "requests that waited for a delegation's recall");
	pfs_metrics_sample(b, "pfs_mds_deleg_parked_total", (double)st.parked, NULL);
	pfs_metrics_family(b, "pfs_mds_deleg_parked", "gauge",
			   "requests waiting for a delegation's recall now");
	pfs_metrics_sample(b, "pfs_mds_deleg_parked", st.parked_now, NULL);
	pfs_metrics_family(b, "pfs_mds_deleg_held", "gauge", "directory delegations held now");
	pfs_metrics_sample(b, "pfs_mds_deleg_held", st.held_now, NULL);
}

static int fill(void *ctx, pfs_metrics_buf *b)
{
	mds_exporter *e = ctx;
	mds_mdqos *mdq = __atomic_load_n(&e->mdq, __ATOMIC_ACQUIRE);
	int rc;

	if (mdq && (rc = fill_mdqos(mdq, b)))
		return rc;

	if (e->qos && (rc = fill_qos(e, b)))
		return rc;
	if (e->jobs) {
		size_t total, aut;
		mds_jobs_count(e->jobs, &total, &aut);
		pfs_metrics_family(b, "pfs_mds_jobs", "gauge", "job registry entries");
		pfs_metrics_sample(b, "pfs_mds_jobs", (double)(total - aut), "kind", "registered",
				   NULL);
		pfs_metrics_sample(b, "pfs_mds_jobs", (double)aut, "kind", "automatic", NULL);
	}
	if (e->srv) {
		pfs_metrics_family(b, "pfs_mds_job_ops_total", "counter",
				   "MDS requests per job and opcode");
		rc = mds_server_job_ops_each(e->srv, op_sample, b);
		if (rc)
			return rc;
		fill_deleg(e->srv, b);
	}
	return 0;
}

int mds_exporter_start(const char *host, uint16_t port, mds_server *srv, mds_jobs *jobs,
		       mds_qosctl *qos, mds_exporter **out, char *err, size_t errlen)
{
	mds_exporter *e = calloc(1, sizeof(*e));
	int rc;

	if (!e) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	e->srv = srv;
	e->jobs = jobs;
	e->qos = qos;
	rc = pfs_metrics_start(host, port, fill, e, &e->m, err, errlen);
	if (rc) {
		free(e);
		return rc;
	}
	*out = e;
	return 0;
}

uint16_t mds_exporter_port(const mds_exporter *e)
{
	return pfs_metrics_port(e->m);
}

void mds_exporter_stop(mds_exporter *e)
{
	if (!e)
		return;
	pfs_metrics_stop(e->m);
	free(e);
}
