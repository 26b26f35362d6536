/* qosnet.h — the QoS controller's OSS transport (mds_qos_oss_ops of
 * mds/qosctl.h over the wire): PFS_OP_OSS_QOS_STATS (mode PERIOD) and
 * PFS_OP_OSS_QOS_SET on each OSS's control port.
 *
 * All OSSes of a round are asked at once: one thread per OSS (at most
 * max_threads at a time, the rest in further waves), each with a blocking
 * RPC whose connect, send and receive each time out after timeout_ms
 * (GIFT's 1 s), so a round takes about one timeout however many OSSes are
 * silent.  Neither request is retried: a lost QOS_STATS reply loses that
 * OSS's period (the OSS has started a new one), a lost QOS_SET is replaced
 * by the next decision's.  Connections are pooled per OSS and re-made
 * when its registered address changes.
 *
 * Thread-safety: collect and push are called from one thread at a time
 * (the controller's step); the worker threads only use their own pool. */
#ifndef MDS_QOSNET_H
#define MDS_QOSNET_H

#include <stddef.h>
#include <stdint.h>

#include "mds/qosctl.h"

struct pfs_auth_key;
typedef struct mds_qosnet mds_qosnet;

typedef struct mds_qosnet_opts {
	int timeout_ms;        /* default 1000 */
	unsigned max_threads;  /* concurrent RPCs per round; default 64 */
	/* The MDS key for the OSS control ports (common/auth.h); NULL = none.
	 * Borrowed: must outlive the qosnet. */
	const struct pfs_auth_key *auth;
} mds_qosnet_opts;

/* opts may be NULL.  0 or -ENOMEM. */
int mds_qosnet_create(const mds_qosnet_opts *opts, mds_qosnet **out);
/* Close every pool.  No round may be in progress.  NULL is a no-op. */
void mds_qosnet_destroy(mds_qosnet *n);
/* The ops to hand to mds_qosctl_create (ctx = n, borrowed). */
mds_qos_oss_ops mds_qosnet_ops(mds_qosnet *n);

/* Decode a PFS_OP_OSS_QOS_STATS reply payload into *r (arrays malloc'd;
 * free with mds_qos_report_free).  Counts are checked against the bytes
 * left before anything is allocated.  0, -EBADMSG (nothing allocated then)
 * or -ENOMEM. */
int mds_qosnet_decode_stats(const uint8_t *p, size_t len, mds_qos_report *r);

#endif
