/* qos_store.h — the QoS controller's records in the MDS environment (the
 * MDS_KV_QOS table of mds/ns.h), so a restarted MDS (kill -9 included)
 * continues with the same policy, decision numbering, policy clock and
 * GIFT ledger.
 *
 * Three records, each versioned (a reader refuses a version it does not
 * know with -EBADMSG):
 *   "policy"  the policy chosen with PFS_OP_MDS_QOS_POLICY_SET, its
 *             parameters and the loop's interval, quorum and AdapTBF
 *             period; absent until the first POLICY_SET (config decides
 *             until then).
 *   "state"   the decision record: policy clock epoch, last policy time,
 *             allocation generation, counters and the last decision's
 *             quorum and cost; written with every decision.
 *   "gift"    GIFT's parameters and its qos_gift_save image (coupons,
 *             windows, regret ledger); written in the same transaction as
 *             "state" after each GIFT decision, and when GIFT is left.
 * A "gift" image that does not load is kept under "gift.bad" for a human
 * and a fresh ledger starts (mds/qosctl.c).
 *
 * All functions work inside a caller's transaction (mds_ns_kv_begin), so
 * the controller writes a decision and the ledger atomically. */
#ifndef MDS_QOS_STORE_H
#define MDS_QOS_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "common/qosmsg.h"
#include "mds/ns.h"
#include "qos/gift.h"

typedef struct mds_qos_policy_rec {
	char name[PFS_QOS_NAME_MAX];
	uint32_t n;
	struct {
		char key[PFS_QOS_NAME_MAX];
		double value;
	} params[PFS_QOS_PARAMS_MAX];
	double interval;       /* seconds between decisions */
	uint32_t quorum;       /* percent of OSSes that must answer */
	double adaptbf_period; /* AdapTBF's Δt pushed to OSSes, seconds */
} mds_qos_policy_rec;

typedef struct mds_qos_state_rec {
	int64_t epoch_ns;      /* CLOCK_REALTIME when QoS first ran here */
	double last_now;       /* policy clock (seconds since epoch) at the last decision */
	uint64_t generation;   /* last pfs_qos_alloc_set.generation handed out */
	uint64_t decisions, skipped;
	int64_t decided_ns;    /* CLOCK_REALTIME of the last decision */
	double decision_ms;    /* what the policy took */
	uint32_t answered, oss_total;
} mds_qos_state_rec;

/* Each get returns 0, -ENOENT (no record), -EBADMSG (unknown version or
 * damaged), or another kv error. */
int mds_qos_store_get_policy(mds_kv_txn *t, mds_qos_policy_rec *out);
int mds_qos_store_put_policy(mds_kv_txn *t, const mds_qos_policy_rec *p);
int mds_qos_store_get_state(mds_kv_txn *t, mds_qos_state_rec *out);
int mds_qos_store_put_state(mds_kv_txn *t, const mds_qos_state_rec *s);
/* The GIFT parameters and image; *img is borrowed from the transaction
 * (valid until its next write or end). */
int mds_qos_store_get_gift(mds_kv_txn *t, qos_gift_params *p, const uint8_t **img,
			   size_t *len);
int mds_qos_store_put_gift(mds_kv_txn *t, const qos_gift_params *p, const uint8_t *img,
			   size_t len);
/* Keep a record that would not load under "<key>.bad". */
int mds_qos_store_keep_bad(mds_kv_txn *t, const char *key, const void *val, size_t len);

#endif
