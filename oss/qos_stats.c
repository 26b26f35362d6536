/* qos_stats.c — what the QoS engine reports: the PFS_OP_OSS_QOS_STATS
 * reply and the Prometheus metrics of the OSS (see qos.h).
 *
 * Both read every bound OST's scheduler under the engine's mutex (one
 * scheduler lock at a time, O(jobs) each).  A QOS_STATS reply is cut where
 * the next row might not fit one frame (about 5000 (job, OST) rows); in
 * PERIOD mode the rows cut off are reset with the others, as JOBSTATS
 * readers already accept for its own truncation. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "oss/qos_i.h"

/* Room for one more row: a job id of PFS_JOBID_MAX bytes and the fields. */
#define ROW_SLACK 512u

typedef struct ost_view {
	qost *o;
	int64_t index;
	oss_job_snap *v;
	size_t n;
	oss_sched_info si;
} ost_view;

static void views_free(ost_view *vw, size_t n)
{
	for (size_t i = 0; vw && i < n; i++)
		free(vw[i].v);
	free(vw);
}

/* Snapshot every bound OST on clock (reset as asked).  *nv = views. */
static int views_take(oss_qos *q, int clock, int reset, ost_view **out, size_t *nv)
{
	ost_view *vw = calloc(q->n ? q->n : 1, sizeof(*vw));
	size_t k = 0;
	int rc = 0;

	*out = NULL;
	*nv = 0;
	if (!vw)
		return -ENOMEM;
	for (size_t i = 0; i < q->n; i++) {
		int64_t index = oss_ostq_index(q->o[i].q);

		if (index == OSS_INDEX_NONE)
			continue;
		vw[k].o = &q->o[i];
		vw[k].index = index;
		rc = oss_sched_jobs(q->o[i].sched, clock, reset, &vw[k].v, &vw[k].n);
		if (rc)
			break;
		oss_sched_info_get(q->o[i].sched, &vw[k].si);
		k++;
	}
	if (rc) {
		views_free(vw, k);
		return rc;
	}
	*out = vw;
	*nv = k;
	return 0;
}

int oss_qos_stats(oss_qos *q, int mode, pfs_wbuf *w)
{
	ost_view *vw = NULL;
	size_t nv = 0, count_at;
	uint32_t rows = 0;
	int reset = mode == PFS_QOS_STATS_PERIOD;
	double now, period;
	int rc;

	if (mode != PFS_QOS_STATS_TOTAL && mode != PFS_QOS_STATS_PERIOD)
		return -EINVAL;
	pthread_mutex_lock(&q->lock);
	now = oss_qos_now();
	rc = views_take(q, reset ? OSS_CLOCK_MDS : OSS_CLOCK_TOTAL, reset, &vw, &nv);
	if (rc)
		goto out;
	period = now - (reset ? q->mds_period_start : q->start);
	if (reset)
		q->mds_period_start = now;
	pfs_wbuf_u64(w, (uint64_t)oss_qos_realtime_ns());
	pfs_wbuf_f64(w, period);
	pfs_wbuf_u32(w, (uint32_t)nv);
	for (size_t i = 0; i < nv; i++) {
		pfs_qos_ost_info oi = { 0 };
		double bytes = 0;

		for (size_t k = 0; k < vw[i].n; k++)
			bytes += (double)(vw[i].v[k].c.bytes[OSS_OPC_READ] +
					  vw[i].v[k].c.bytes[OSS_OPC_WRITE]);
		oi.ost = (uint32_t)vw[i].index;
		oi.capacity = oss_qos_cap_locked(vw[i].o);
		oi.served = period > 0 ? bytes / period : 0;
		oi.queued = vw[i].si.queued;
		oi.queued_bytes = vw[i].si.queued_bytes;
		oi.credit = vw[i].si.rcc.credit;
		oi.latency = vw[i].si.rcc.latency;
		oi.mode = (uint8_t)vw[i].o->mode;
		pfs_qos_ost_info_encode(w, &oi);
	}
	count_at = w->len;
	pfs_wbuf_u32(w, 0);
	for (size_t i = 0; i < nv; i++) {
		for (size_t k = 0; k < vw[i].n; k++) {
			const oss_job_snap *s = &vw[i].v[k];
			pfs_qos_stat st = { 0 };

			if (w->len >= PFS_MAX_PAYLOAD - ROW_SLACK)
				goto full;
			memcpy(st.job, s->job, sizeof(st.job));
			st.ost = (uint32_t)vw[i].index;
			st.read_rpcs = s->c.rpcs[OSS_OPC_READ];
			st.write_rpcs = s->c.rpcs[OSS_OPC_WRITE];
			st.other_rpcs = s->c.rpcs[OSS_OPC_OTHER];
			st.read_bytes = s->c.bytes[OSS_OPC_READ];
			st.write_bytes = s->c.bytes[OSS_OPC_WRITE];
			st.arrived_rpcs = s->c.arrived_rpcs;
			st.arrived_bytes = s->c.arrived_bytes;
			st.busy_rpcs = s->c.busy_rpcs;
			st.queued = s->queued;
			st.queued_bytes = s->queued_bytes;
			st.wait_us = s->c.wait_us;
			st.throttled_us = s->c.throttled_us;
			st.rate = oss_qos_job_rate_locked(q, vw[i].o, s->job, &st.tokens,
							  &st.record, &st.nodes);
			pfs_qos_stat_encode(w, &st);
			rows++;
		}
	}
full:
	rc = pfs_wbuf_error(w);
	if (!rc) {
		w->data[count_at] = (uint8_t)rows;
		w->data[count_at + 1] = (uint8_t)(rows >> 8);
		w->data[count_at + 2] = (uint8_t)(rows >> 16);
		w->data[count_at + 3] = (uint8_t)(rows >> 24);
	}
out:
	pthread_mutex_unlock(&q->lock);
	views_free(vw, nv);
	return rc;
}

/* ---- metrics ---- */

enum { M_RPCS, M_BYTES, M_WAIT, M_THROTTLED, M_BUSY, M_QUEUED, M_RATE, M_RECORD };

static const struct {
	const char *name, *type, *help;
} families[] = {
	[M_RPCS] = { "pfs_oss_job_rpcs_total", "counter",
		     "RPCs served per job, OST and operation" },
	[M_BYTES] = { "pfs_oss_job_bytes_total", "counter",
		      "Bytes served per job, OST and operation (requested length)" },
	[M_WAIT] = { "pfs_oss_job_queue_wait_seconds_total", "counter",
		     "Queueing delay of served RPCs, summed" },
	[M_THROTTLED] = { "pfs_oss_job_throttled_seconds_total", "counter",
			  "Queueing delay of RPCs a rate rule governed, summed" },
	[M_BUSY] = { "pfs_oss_job_busy_total", "counter", "RPCs refused busy (queue caps)" },
	[M_QUEUED] = { "pfs_oss_job_queued", "gauge", "RPCs queued now" },
	[M_RATE] = { "pfs_oss_job_rate_limit_bytes", "gauge",
		     "Policy rate in force, bytes/s (jobs under a policy rule)" },
	[M_RECORD] = { "pfs_oss_adaptbf_record_tokens", "gauge",
		       "AdapTBF record: tokens lent (+) or borrowed (-)" },
};

static const char *const op_names[3] = { "read", "write", "other" };

/* One per-(job, OST) family over every view. */
static void job_family(oss_qos *q, pfs_metrics_buf *b, const ost_view *vw, size_t nv, int f)
{
	const char *name = families[f].name;
	char ost[24];

	pfs_metrics_family(b, name, families[f].type, families[f].help);
	for (size_t i = 0; i < nv; i++) {
		snprintf(ost, sizeof(ost), "%" PRId64, vw[i].index);
		for (size_t k = 0; k < vw[i].n; k++) {
			const oss_job_snap *s = &vw[i].v[k];
			int64_t tokens;
			double record, nodes, rate;

			switch (f) {
			case M_RPCS:
			case M_BYTES:
				for (int op = 0; op < (f == M_RPCS ? 3 : 2); op++)
					pfs_metrics_sample(b, name,
							   (double)(f == M_RPCS ? s->c.rpcs[op]
										: s->c.bytes[op]),
							   "job", s->job, "ost", ost, "op",
							   op_names[op], NULL);
				break;
			case M_WAIT:
			case M_THROTTLED:
				pfs_metrics_sample(b, name,
						   (double)(f == M_WAIT ? s->c.wait_us
									: s->c.throttled_us) / 1e6,
						   "job", s->job, "ost", ost, NULL);
				break;
			case M_BUSY:
			case M_QUEUED:
				pfs_metrics_sample(b, name,
						   (double)(f == M_BUSY ? s->c.busy_rpcs : s->queued),
						   "job", s->job, "ost", ost, NULL);
				break;
			default:
				rate = oss_qos_job_rate_locked(q, vw[i].o, s->job, &tokens, &record,
							       &nodes);
				if (f == M_RATE && rate >= 0)
					pfs_metrics_sample(b, name, rate, "job", s->job, "ost", ost,
							   NULL);
				if (f == M_RECORD && tokens >= 0)
					pfs_metrics_sample(b, name, record, "job", s->job, "ost",
							   ost, NULL);
				break;
			}
		}
	}
}

int oss_qos_metrics(void *ctx, pfs_metrics_buf *b)
{
	oss_qos *q = ctx;
	ost_view *vw = NULL;
	size_t nv = 0;
	char ost[24];
	int rc;

	pthread_mutex_lock(&q->lock);
	rc = views_take(q, OSS_CLOCK_TOTAL, 0, &vw, &nv);
	if (rc)
		goto out;
	for (int f = M_RPCS; f <= M_RECORD; f++)
		job_family(q, b, vw, nv, f);
	pfs_metrics_family(b, "pfs_oss_ost_capacity_bytes", "gauge",
			   "OST capacity the policies use, bytes/s (0 = unknown)");
	for (size_t i = 0; i < nv; i++) {
		snprintf(ost, sizeof(ost), "%" PRId64, vw[i].index);
		pfs_metrics_sample(b, "pfs_oss_ost_capacity_bytes", oss_qos_cap_locked(vw[i].o),
				   "ost", ost, NULL);
	}
	pfs_metrics_family(b, "pfs_oss_rcc_credit", "gauge",
			   "Last RPC concurrency credit granted on the OST");
	for (size_t i = 0; i < nv; i++) {
		snprintf(ost, sizeof(ost), "%" PRId64, vw[i].index);
		pfs_metrics_sample(b, "pfs_oss_rcc_credit", (double)vw[i].si.rcc.credit, "ost",
				   ost, NULL);
	}
out:
	pthread_mutex_unlock(&q->lock);
	views_free(vw, nv);
	return rc;
}
