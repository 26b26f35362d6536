/* qos_store.c — encode and decode the QoS controller's records (see
 * qos_store.h) with the common/buf.h codec; little-endian, each led by a
 * u32 version.
 *   policy v1: u32 1, str name, f64 interval, u32 quorum, f64 adaptbf_period,
 *              u32 n, n x { str key, f64 value }
 *   state  v1: u32 1, i64 epoch_ns, f64 last_now, u64 generation,
 *              u64 decisions, u64 skipped, i64 decided_ns, f64 decision_ms,
 *              u32 answered, u32 oss_total
 *   gift   v1: u32 1, u32 N, f64 tau, f64 B_thres, f64 regret_period,
 *              f64 regret_budget, u32 len, len bytes (qos_gift_save)
 * Values are range-checked on the way in so a damaged record cannot start
 * a controller with nonsense. */
#include "mds/qos_store.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/buf.h"

#define REC_VERSION 1u

static int put(mds_kv_txn *t, const char *key, pfs_wbuf *w)
{
	int rc = pfs_wbuf_error(w);

	if (!rc)
		rc = mds_ns_kv_put(t, MDS_KV_QOS, key, strlen(key), w->data, w->len);
	pfs_wbuf_free(w);
	return rc;
}

static int get(mds_kv_txn *t, const char *key, pfs_rbuf *r)
{
	const void *v;
	size_t len;
	int rc = mds_ns_kv_get(t, MDS_KV_QOS, key, strlen(key), &v, &len);

	if (rc)
		return rc;
	pfs_rbuf_init(r, v, len);
	return pfs_rbuf_u32(r) == REC_VERSION ? 0 : -EBADMSG;
}

int mds_qos_store_put_policy(mds_kv_txn *t, const mds_qos_policy_rec *p)
{
	pfs_wbuf w;

	if (p->n > PFS_QOS_PARAMS_MAX)
		return -EINVAL;
	pfs_wbuf_init(&w);
	pfs_wbuf_u32(&w, REC_VERSION);
	pfs_wbuf_str(&w, p->name);
	pfs_wbuf_f64(&w, p->interval);
	pfs_wbuf_u32(&w, p->quorum);
	pfs_wbuf_f64(&w, p->adaptbf_period);
	pfs_wbuf_u32(&w, p->n);
	for (uint32_t i = 0; i < p->n; i++) {
		pfs_wbuf_str(&w, p->params[i].key);
		pfs_wbuf_f64(&w, p->params[i].value);
	}
	return put(t, "policy", &w);
}

int mds_qos_store_get_policy(mds_kv_txn *t, mds_qos_policy_rec *p)
{
	pfs_rbuf r;
	int rc = get(t, "policy", &r);

	if (rc)
		return rc;
	memset(p, 0, sizeof(*p));
	pfs_rbuf_cstr(&r, p->name, sizeof(p->name));
	p->interval = pfs_rbuf_f64_finite(&r);
	p->quorum = pfs_rbuf_u32(&r);
	p->adaptbf_period = pfs_rbuf_f64_finite(&r);
	p->n = pfs_rbuf_u32(&r);
	if (pfs_rbuf_error(&r) || p->n > PFS_QOS_PARAMS_MAX)
		return -EBADMSG;
	for (uint32_t i = 0; i < p->n; i++) {
		pfs_rbuf_cstr(&r, p->params[i].key, sizeof(p->params[i].key));
		p->params[i].value = pfs_rbuf_f64_finite(&r);
	}
	if (pfs_rbuf_done(&r) || !p->name[0] || !(p->interval > 0) || p->quorum > 100 ||
	    !(p->adaptbf_period > 0))
		return -EBADMSG;
	return 0;
}

int mds_qos_store_put_state(mds_kv_txn *t, const mds_qos_state_rec *s)
{
	pfs_wbuf w;

	pfs_wbuf_init(&w);
	pfs_wbuf_u32(&w, REC_VERSION);
	pfs_wbuf_i64(&w, s->epoch_ns);
	pfs_wbuf_f64(&w, s->last_now);
	pfs_wbuf_u64(&w, s->generation);
	pfs_wbuf_u64(&w, s->decisions);
	pfs_wbuf_u64(&w, s->skipped);
	pfs_wbuf_i64(&w, s->decided_ns);
	pfs_wbuf_f64(&w, s->decision_ms);
	pfs_wbuf_u32(&w, s->answered);
	pfs_wbuf_u32(&w, s->oss_total);
	return put(t, "state", &w);
}

int mds_qos_store_get_state(mds_kv_txn *t, mds_qos_state_rec *s)
{
	pfs_rbuf r;
	int rc = get(t, "state", &r);

	if (rc)
		return rc;
	memset(s, 0, sizeof(*s));
	s->epoch_ns = pfs_rbuf_i64(&r);
	s->last_now = pfs_rbuf_f64_finite(&r);
	s->generation = pfs_rbuf_u64(&r);
	s->decisions = pfs_rbuf_u64(&r);
	s->skipped = pfs_rbuf_u64(&r);
	s->decided_ns = pfs_rbuf_i64(&r);
	s->decision_ms = pfs_rbuf_f64_finite(&r);
	s->answered = pfs_rbuf_u32(&r);
	s->oss_total = pfs_rbuf_u32(&r);
	if (pfs_rbuf_done(&r) || s->last_now < 0 || s->decision_ms < 0)
		return -EBADMSG;
	return 0;
}

int mds_qos_store_put_gift(mds_kv_txn *t, const qos_gift_params *p, const uint8_t *img,
			   size_t len)
{
	pfs_wbuf w;

	if (len > UINT32_MAX)
		return -EFBIG;
	pfs_wbuf_init(&w);
	pfs_wbuf_u32(&w, REC_VERSION);
	pfs_wbuf_u32(&w, p->N);
	pfs_wbuf_f64(&w, p->tau);
	pfs_wbuf_f64(&w, p->B_thres);
	pfs_wbuf_f64(&w, p->regret_period);
	pfs_wbuf_f64(&w, p->regret_budget);
	pfs_wbuf_u32(&w, (uint32_t)len);
	pfs_wbuf_bytes(&w, img, len);
	return put(t, "gift", &w);
}

int mds_qos_store_get_gift(mds_kv_txn *t, qos_gift_params *p, const uint8_t **img,
			   size_t *len)
{
	pfs_rbuf r;
	uint32_t n;
	int rc = get(t, "gift", &r);

	if (rc)
		return rc;
	p->N = pfs_rbuf_u32(&r);
	p->tau = pfs_rbuf_f64_finite(&r);
	p->B_thres = pfs_rbuf_f64_finite(&r);
	p->regret_period = pfs_rbuf_f64_finite(&r);
	p->regret_budget = pfs_rbuf_f64_finite(&r);
	n = pfs_rbuf_u32(&r);
	*img = pfs_rbuf_bytes(&r, n);
	*len = n;
	if (pfs_rbuf_done(&r) || p->N < 1 || !(p->tau >= 0 && p->tau <= 1) ||
	    !(p->B_thres >= 0 && p->B_thres <= 1) || !(p->regret_period > 0) ||
	    !(p->regret_budget >= 0))
		return -EBADMSG;
	return 0;
}

int mds_qos_store_keep_bad(mds_kv_txn *t, const char *key, const void *val, size_t len)
{
	char k[64];

	snprintf(k, sizeof(k), "%s.bad", key);
	return mds_ns_kv_put(t, MDS_KV_QOS, k, strlen(k), val, len);
}
