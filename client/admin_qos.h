/* admin_qos.h — pfsadmin's view of the MDS QoS controller
 * (PFS_OP_MDS_QOS_*):
 *
 *   qos show [--job ID]       policy, parameters, last decision and its
 *                             quorum; per job and OST the allocation, the
 *                             achieved rate, the demand, throttled or not
 *   qos policy set [NAME] [KEY=VALUE ...]
 *                             switch the policy and/or set parameters (the
 *                             papers' symbols, e.g. gift B_thres=0.3 tau=0.8;
 *                             also interval, quorum, adaptbf_period); then
 *                             shows the policy as the MDS now has it
 *   qos policy show
 *   qos coupons [--job ID]    GIFT's coupon table per job
 *   qos regret                GIFT's regret ledger
 *
 * A non-root caller sees only its own jobs (the MDS filters by the header
 * uid); an -EACCES from the MDS is shown with that rule.  A policy set the
 * MDS refuses (-EINVAL: unknown policy or key, value out of range) changes
 * nothing, and the message says so.
 *
 * JSON (rates integer bytes/s, null = no limit; times ns CLOCK_REALTIME):
 *   show / policy show / policy set:
 *     {"policy", "params": {KEY: value, ...}, "interval_s", "decided_ns"
 *      (0 = none yet), "decision_ms", "quorum": {"answered", "oss_total",
 *      "needed_pct"}, "decisions", "skipped",
 *      "allocations": [{"job", "ost", "alloc_bytes_per_s", "achieved_bytes_per_s",
 *                       "demand_bytes_per_s", "throttled"}]}   (show only)
 *   coupons: {"coupons": [{"job", "rate" (c_i, 0..1), "outstanding_bytes",
 *             "issued_bytes", "redeemed_bytes", "owed_nh", "awarded_nh",
 *             "coupons"}]}
 *   regret:  {"budget_nh", "period_s", "awarded_nh", "liability_nh", "c_sys",
 *             "coupons_issued", "redemptions", "assessments",
 *             "worth_issued_bytes", "worth_redeemed_bytes"} */
#ifndef CLI_ADMIN_QOS_H
#define CLI_ADMIN_QOS_H

#include "client/admin_args.h"
#include "client/admin_cmd.h"

/* Each: 0, a server or transport errno, or -EBADMSG for a malformed reply. */
int cli_admin_qos_show(cli_admin *a, const cli_admin_args *args);
int cli_admin_qos_policy_set(cli_admin *a, const cli_admin_args *args);
int cli_admin_qos_policy_show(cli_admin *a, const cli_admin_args *args);
int cli_admin_qos_coupons(cli_admin *a, const cli_admin_args *args);
int cli_admin_qos_regret(cli_admin *a, const cli_admin_args *args);

#endif
