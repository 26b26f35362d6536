/* exporter.h — the MDS's Prometheus endpoint (common/metrics.h): QoS
 * controller, GIFT ledger and per-job operation counters.
 *
 * Families (all read at scrape time, under the owners' locks briefly):
 *   pfs_mds_qos_decisions_total             counter  decisions made
 *   pfs_mds_qos_skipped_total               counter  intervals without quorum
 *   pfs_mds_qos_push_failures_total         counter  allocation sets not delivered
 *   pfs_mds_qos_decision_seconds            gauge    the last decision's policy time
 *   pfs_mds_qos_quorum_answered             gauge    OSSes that answered the last decision
 *   pfs_mds_qos_quorum_total                gauge    OSSes counted for it
 *   pfs_mds_qos_alloc_bytes{job,ost}        gauge    rate in force, bytes/s
 *   pfs_mds_gift_coupon_outstanding{job}    gauge    unredeemed coupon worth, bytes
 *   pfs_mds_gift_regret_awarded_nodehours   counter  node-hours awarded so far
 *   pfs_mds_jobs{kind}                      gauge    registry entries (registered, automatic)
 *   pfs_mds_job_ops_total{job,op}           counter  requests per job and opcode
 * Cardinality is bounded by the job registry's and the counters' caps
 * (mds/jobs.h, mds/server.h). */
#ifndef MDS_EXPORTER_H
#define MDS_EXPORTER_H

#include <stddef.h>
#include <stdint.h>

#include "mds/jobs.h"
#include "mds/qosctl.h"
#include "mds/server.h"

typedef struct mds_exporter mds_exporter;

/* Serve on host:port (port 0 = any free port).  srv, jobs, qos are
 * borrowed and must outlive the exporter; any may be NULL (its families
 * are left out).  0, or a negative errno with a reason in err. */
int mds_exporter_start(const char *host, uint16_t port, mds_server *srv, mds_jobs *jobs,
		       mds_qosctl *qos, mds_exporter **out, char *err, size_t errlen);
uint16_t mds_exporter_port(const mds_exporter *e);
/* Add PADLL's families (borrowed; must outlive e): pfs_mds_mdqos_max_r{class},
 * pfs_mds_mdqos_rate{job,class}, pfs_mds_mdqos_served{job,class} (requests/s
 * of the last period), pfs_mds_mdqos_held_total. */
struct mds_mdqos;
void mds_exporter_set_mdqos(mds_exporter *e, struct mds_mdqos *q);
/* NULL is a no-op. */
void mds_exporter_stop(mds_exporter *e);

#endif
