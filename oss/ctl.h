/* ctl.h — the OSS control port's requests (MDS, pfsadmin), one table row
 * per opcode:
 *
 *   DESTROY, LIST_OBJECTS, STATFS   object housekeeping on one OST;
 *   JOBSTATS       cumulative per-job counters summed over the OSTs, sorted
 *                  by job id, cut to what fits one frame (about 12000 jobs);
 *   QOS_STATS      per-OST state and per-(job, OST) statistics (qos.h);
 *   QOS_SET        the MDS's allocation set (qos.h);
 *   NRS_RULE       admin TBF rules (nrs_admin.h).
 *
 * Requests are decoded strictly (trailing bytes, short payloads, unknown
 * modes: -EBADMSG or -EINVAL) and refused ones change nothing; the reason
 * of a refused QoS request is logged at notice level, since the reply
 * carries only the status. */
#ifndef OSS_CTL_H
#define OSS_CTL_H

#include "common/buf.h"
#include "common/proto.h"
#include "oss/server.h"

/* Execute control request h (payload p) on s, the reply payload into w.
 * 0 or a negative errno (-EOPNOTSUPP for an opcode not served here). */
int oss_ctl_execute(oss_server *s, const pfs_hdr *h, const uint8_t *p, pfs_wbuf *w);

#endif
