/* qosmsg.c — codecs for the job registry and QoS control-plane types (see
 * qosmsg.h).  Decoders read every field, then validate ranges once, so a
 * truncated payload and a bad value both give -EBADMSG. */
#include "common/qosmsg.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* f64 >= 0 and finite, else the buffer's error is set. */
static double rbuf_rate(pfs_rbuf *b)
{
	double v = pfs_rbuf_f64_finite(b);

	if (v < 0)
		pfs_rbuf_fail(b);
	return v;
}

void pfs_job_info_encode(pfs_wbuf *b, const pfs_job_info *j)
{
	pfs_wbuf_str(b, j->job);
	pfs_wbuf_u32(b, j->uid);
	pfs_wbuf_u32(b, j->nodes);
	pfs_wbuf_f64(b, j->priority);
	pfs_wbuf_f64(b, j->limit);
	pfs_wbuf_u8(b, j->throttle_friendly);
	pfs_wbuf_u8(b, j->state);
	pfs_wbuf_u8(b, j->registered);
	pfs_wbuf_i64(b, j->start_ns);
	pfs_wbuf_i64(b, j->end_ns);
}

int pfs_job_info_decode(pfs_rbuf *b, pfs_job_info *j)
{
	memset(j, 0, sizeof(*j));
	pfs_rbuf_cstr(b, j->job, sizeof(j->job));
	j->uid = pfs_rbuf_u32(b);
	j->nodes = pfs_rbuf_u32(b);
	j->priority = pfs_rbuf_f64_finite(b);
	j->limit = rbuf_rate(b);
	j->throttle_friendly = pfs_rbuf_u8(b);
	j->state = pfs_rbuf_u8(b);
	j->registered = pfs_rbuf_u8(b);
	j->start_ns = pfs_rbuf_i64(b);
	j->end_ns = pfs_rbuf_i64(b);
	if (pfs_rbuf_error(b))
		return pfs_rbuf_error(b);
	if (!j->job[0] || j->nodes < 1 || !(j->priority > 0) || j->throttle_friendly > 1 ||
	    j->state > PFS_JOB_ENDED || j->registered > 1)
		return -EBADMSG;
	return 0;
}

static void alloc_encode(pfs_wbuf *b, const pfs_qos_alloc *a)
{
	pfs_wbuf_str(b, a->job);
	pfs_wbuf_u32(b, a->ost);
	pfs_wbuf_f64(b, a->rate);
	pfs_wbuf_f64(b, a->nodes);
}

/* The smallest encoded alloc row: empty job id, ost, rate, nodes. */
#define ALLOC_MIN_BYTES (4u + 4u + 8u + 8u)

void pfs_qos_alloc_set_encode(pfs_wbuf *b, const pfs_qos_alloc_set *s)
{
	pfs_wbuf_u64(b, s->generation);
	pfs_wbuf_u8(b, s->mode);
	pfs_wbuf_f64(b, s->adaptbf_period);
	pfs_wbuf_u32(b, s->n);
	for (uint32_t i = 0; i < s->n; i++)
		alloc_encode(b, &s->rows[i]);
}

int pfs_qos_alloc_set_decode(pfs_rbuf *b, pfs_qos_alloc_set *s)
{
	int rc;

	memset(s, 0, sizeof(*s));
	s->generation = pfs_rbuf_u64(b);
	s->mode = pfs_rbuf_u8(b);
	s->adaptbf_period = pfs_rbuf_f64_finite(b);
	s->n = pfs_rbuf_u32(b);
	if ((rc = pfs_rbuf_error(b)))
		return rc;
	if (s->mode > PFS_QOS_MODE_ADAPTBF || !(s->adaptbf_period > 0) ||
	    s->n > pfs_rbuf_left(b) / ALLOC_MIN_BYTES) {
		s->n = 0;
		return -EBADMSG;
	}
	if (s->n) {
		s->rows = calloc(s->n, sizeof(*s->rows));
		if (!s->rows) {
			s->n = 0;
			return -ENOMEM;
		}
	}
	for (uint32_t i = 0; i < s->n; i++) {
		pfs_qos_alloc *a = &s->rows[i];

		pfs_rbuf_cstr(b, a->job, sizeof(a->job));
		a->ost = pfs_rbuf_u32(b);
		a->rate = rbuf_rate(b);
		a->nodes = rbuf_rate(b);
	}
	rc = pfs_rbuf_error(b);
	if (rc)
		pfs_qos_alloc_set_free(s);
	return rc;
}

void pfs_qos_alloc_set_free(pfs_qos_alloc_set *s)
{
	free(s->rows);
	s->rows = NULL;
	s->n = 0;
}

void pfs_qos_ost_info_encode(pfs_wbuf *b, const pfs_qos_ost_info *o)
{
	pfs_wbuf_u32(b, o->ost);
	pfs_wbuf_f64(b, o->capacity);
	pfs_wbuf_f64(b, o->served);
	pfs_wbuf_u32(b, o->queued);
	pfs_wbuf_u64(b, o->queued_bytes);
	pfs_wbuf_u32(b, o->credit);
	pfs_wbuf_f64(b, o->latency);
	pfs_wbuf_u8(b, o->mode);
}

int pfs_qos_ost_info_decode(pfs_rbuf *b, pfs_qos_ost_info *o)
{
	memset(o, 0, sizeof(*o));
	o->ost = pfs_rbuf_u32(b);
	o->capacity = rbuf_rate(b);
	o->served = rbuf_rate(b);
	o->queued = pfs_rbuf_u32(b);
	o->queued_bytes = pfs_rbuf_u64(b);
	o->credit = pfs_rbuf_u32(b);
	o->latency = rbuf_rate(b);
	o->mode = pfs_rbuf_u8(b);
	if (pfs_rbuf_error(b))
		return pfs_rbuf_error(b);
	return o->mode > PFS_QOS_MODE_ADAPTBF ? -EBADMSG : 0;
}

void pfs_qos_stat_encode(pfs_wbuf *b, const pfs_qos_stat *s)
{
	pfs_wbuf_str(b, s->job);
	pfs_wbuf_u32(b, s->ost);
	pfs_wbuf_u64(b, s->read_rpcs);
	pfs_wbuf_u64(b, s->write_rpcs);
	pfs_wbuf_u64(b, s->other_rpcs);
	pfs_wbuf_u64(b, s->read_bytes);
	pfs_wbuf_u64(b, s->write_bytes);
	pfs_wbuf_u64(b, s->arrived_rpcs);
	pfs_wbuf_u64(b, s->arrived_bytes);
	pfs_wbuf_u64(b, s->busy_rpcs);
	pfs_wbuf_u32(b, s->queued);
	pfs_wbuf_u64(b, s->queued_bytes);
	pfs_wbuf_u64(b, s->wait_us);
	pfs_wbuf_u64(b, s->throttled_us);
	pfs_wbuf_f64(b, s->rate);
	pfs_wbuf_f64(b, s->record);
	pfs_wbuf_i64(b, s->tokens);
	pfs_wbuf_f64(b, s->nodes);
}

int pfs_qos_stat_decode(pfs_rbuf *b, pfs_qos_stat *s)
{
	memset(s, 0, sizeof(*s));
	pfs_rbuf_cstr(b, s->job, sizeof(s->job));
	s->ost = pfs_rbuf_u32(b);
	s->read_rpcs = pfs_rbuf_u64(b);
	s->write_rpcs = pfs_rbuf_u64(b);
	s->other_rpcs = pfs_rbuf_u64(b);
	s->read_bytes = pfs_rbuf_u64(b);
	s->write_bytes = pfs_rbuf_u64(b);
	s->arrived_rpcs = pfs_rbuf_u64(b);
	s->arrived_bytes = pfs_rbuf_u64(b);
	s->busy_rpcs = pfs_rbuf_u64(b);
	s->queued = pfs_rbuf_u32(b);
	s->queued_bytes = pfs_rbuf_u64(b);
	s->wait_us = pfs_rbuf_u64(b);
	s->throttled_us = pfs_rbuf_u64(b);
	s->rate = pfs_rbuf_f64_finite(b);
	s->record = pfs_rbuf_f64_finite(b);
	s->tokens = pfs_rbuf_i64(b);
	s->nodes = rbuf_rate(b);
	return pfs_rbuf_error(b);
}

void pfs_qos_row_encode(pfs_wbuf *b, const pfs_qos_row *r)
{
	pfs_wbuf_str(b, r->job);
	pfs_wbuf_u32(b, r->ost);
	pfs_wbuf_f64(b, r->alloc);
	pfs_wbuf_f64(b, r->achieved);
	pfs_wbuf_f64(b, r->demand);
	pfs_wbuf_u8(b, r->throttled);
}

int pfs_qos_row_decode(pfs_rbuf *b, pfs_qos_row *r)
{
	memset(r, 0, sizeof(*r));
	pfs_rbuf_cstr(b, r->job, sizeof(r->job));
	r->ost = pfs_rbuf_u32(b);
	r->alloc = pfs_rbuf_f64_finite(b);
	r->achieved = rbuf_rate(b);
	r->demand = rbuf_rate(b);
	r->throttled = pfs_rbuf_u8(b);
	if (pfs_rbuf_error(b))
		return pfs_rbuf_error(b);
	return r->throttled > 1 ? -EBADMSG : 0;
}

void pfs_qos_status_encode(pfs_wbuf *b, const pfs_qos_status *s)
{
	uint32_t n = s->n_params > PFS_QOS_PARAMS_MAX ? PFS_QOS_PARAMS_MAX : s->n_params;

	pfs_wbuf_str(b, s->policy);
	pfs_wbuf_i64(b, s->decided_ns);
	pfs_wbuf_u32(b, s->answered);
	pfs_wbuf_u32(b, s->oss_total);
	pfs_wbuf_u32(b, s->quorum_pct);
	pfs_wbuf_f64(b, s->interval);
	pfs_wbuf_f64(b, s->decision_ms);
	pfs_wbuf_u64(b, s->decisions);
	pfs_wbuf_u64(b, s->skipped);
	pfs_wbuf_u32(b, n);
	for (uint32_t i = 0; i < n; i++) {
		pfs_wbuf_str(b, s->params[i].key);
		pfs_wbuf_f64(b, s->params[i].value);
	}
}

int pfs_qos_status_decode(pfs_rbuf *b, pfs_qos_status *s)
{
	memset(s, 0, sizeof(*s));
	pfs_rbuf_cstr(b, s->policy, sizeof(s->policy));
	s->decided_ns = pfs_rbuf_i64(b);
	s->answered = pfs_rbuf_u32(b);
	s->oss_total = pfs_rbuf_u32(b);
	s->quorum_pct = pfs_rbuf_u32(b);
	s->interval = rbuf_rate(b);
	s->decision_ms = rbuf_rate(b);
	s->decisions = pfs_rbuf_u64(b);
	s->skipped = pfs_rbuf_u64(b);
	s->n_params = pfs_rbuf_u32(b);
	if (pfs_rbuf_error(b))
		return pfs_rbuf_error(b);
	if (s->n_params > PFS_QOS_PARAMS_MAX || s->quorum_pct > 100) {
		s->n_params = 0;
		return -EBADMSG;
	}
	for (uint32_t i = 0; i < s->n_params; i++) {
		pfs_rbuf_cstr(b, s->params[i].key, sizeof(s->params[i].key));
		s->params[i].value = pfs_rbuf_f64_finite(b);
	}
	return pfs_rbuf_error(b);
}

void pfs_qos_coupon_info_encode(pfs_wbuf *b, const pfs_qos_coupon_info *c)
{
	pfs_wbuf_str(b, c->job);
	pfs_wbuf_f64(b, c->rate);
	pfs_wbuf_f64(b, c->outstanding);
	pfs_wbuf_f64(b, c->issued);
	pfs_wbuf_f64(b, c->redeemed);
	pfs_wbuf_f64(b, c->owed_nh);
	pfs_wbuf_f64(b, c->awarded_nh);
	pfs_wbuf_u64(b, c->n_coupons);
}

int pfs_qos_coupon_info_decode(pfs_rbuf *b, pfs_qos_coupon_info *c)
{
	memset(c, 0, sizeof(*c));
	pfs_rbuf_cstr(b, c->job, sizeof(c->job));
	c->rate = rbuf_rate(b);
	c->outstanding = rbuf_rate(b);
	c->issued = rbuf_rate(b);
	c->redeemed = rbuf_rate(b);
	c->owed_nh = rbuf_rate(b);
	c->awarded_nh = rbuf_rate(b);
	c->n_coupons = pfs_rbuf_u64(b);
	if (pfs_rbuf_error(b))
		return pfs_rbuf_error(b);
	return c->rate > 1 ? -EBADMSG : 0;
}

void pfs_qos_regret_info_encode(pfs_wbuf *b, const pfs_qos_regret_info *r)
{
	pfs_wbuf_f64(b, r->budget_nh);
	pfs_wbuf_f64(b, r->period_s);
	pfs_wbuf_f64(b, r->awarded_nh);
	pfs_wbuf_f64(b, r->liability_nh);
	pfs_wbuf_f64(b, r->c_sys);
	pfs_wbuf_u64(b, r->coupons_issued);
	pfs_wbuf_u64(b, r->redemptions);
	pfs_wbuf_u64(b, r->assessments);
	pfs_wbuf_f64(b, r->worth_issued);
	pfs_wbuf_f64(b, r->worth_redeemed);
}

int pfs_qos_regret_info_decode(pfs_rbuf *b, pfs_qos_regret_info *r)
{
	memset(r, 0, sizeof(*r));
	r->budget_nh = rbuf_rate(b);
	r->period_s = rbuf_rate(b);
	r->awarded_nh = rbuf_rate(b);
	r->liability_nh = rbuf_rate(b);
	r->c_sys = rbuf_rate(b);
	r->coupons_issued = pfs_rbuf_u64(b);
	r->redemptions = pfs_rbuf_u64(b);
	r->assessments = pfs_rbuf_u64(b);
	r->worth_issued = rbuf_rate(b);
	r->worth_redeemed = rbuf_rate(b);
	return pfs_rbuf_error(b);
}

void pfs_nrs_rule_info_encode(pfs_wbuf *b, const pfs_nrs_rule_info *r)
{
	pfs_wbuf_str(b, r->name);
	pfs_wbuf_str(b, r->expr);
	pfs_wbuf_u32(b, r->ost);
	pfs_wbuf_u32(b, r->queued);
	pfs_wbuf_u8(b, r->origin);
}

int pfs_nrs_rule_info_decode(pfs_rbuf *b, pfs_nrs_rule_info *r)
{
	memset(r, 0, sizeof(*r));
	pfs_rbuf_cstr(b, r->name, sizeof(r->name));
	pfs_rbuf_cstr(b, r->expr, sizeof(r->expr));
	r->ost = pfs_rbuf_u32(b);
	r->queued = pfs_rbuf_u32(b);
	r->origin = pfs_rbuf_u8(b);
	if (pfs_rbuf_error(b))
		return pfs_rbuf_error(b);
	return r->origin > PFS_NRS_ORIGIN_ADAPTBF ? -EBADMSG : 0;
}
