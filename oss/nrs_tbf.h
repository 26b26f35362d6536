/* nrs_tbf.h — the Token Bucket Filter discipline for the OSS scheduler:
 * qos/tbf.h (rules by job id list, uid, gid and opcode class, one bucket
 * per (rule, job), deadline heap, unlimited fallback queue) behind
 * oss_sched_class, and the rule API the OSS QoS engine and admin commands
 * use (Lustre's `nrs_tbf_rule start|change|stop`, and a listing).
 *
 * A request is classified by its oss_req fields: job, uid, gid, opcode
 * (mapped to OSS_TBF_OPC_READ, _WRITE or _OTHER for rules' opc_mask) and
 * bytes.  It costs one token under an RPC rule and its byte count under a
 * byte rule (a 0-byte request costs 1; bytes is the requested length, so a
 * short read is charged in full).  The class sets oss_req.limited when it
 * queues a request: 1 if a rule matched (its wait counts as throttled), 0
 * for the fallback.  That flag is not revised if the rule is stopped while
 * the request waits.  With no rules every request goes to the fallback
 * queue, i.e. the discipline behaves as FIFO.
 *
 * Every rule API call below runs under the scheduler lock through
 * oss_sched_control (which wakes sleeping I/O threads afterwards, so a
 * raised rate takes effect at once) and returns -EINVAL if the scheduler
 * does not run oss_sched_tbf.  Rules accepted by oss_nrs_tbf_rule_start
 * always have a text form (qos/tbf_rule.h), so the listing never fails to
 * format one.  ost= in rule text is not matched here: the caller starts an
 * ost= rule only on the scheduler of that OST (one per OST, oss/ostq.h),
 * and keeps the rule's OST (and origin) for its own listing.
 *
 * For anything else, oss_sched_control with oss_sched_tbf as the class
 * hands the callback the qos_tbf * and the current time in microseconds
 * (convert with OSS_TBF_SECONDS).
 *
 * Shutdown drains every queue regardless of tokens (qos_tbf_drain).  Empty
 * classes with full buckets are garbage-collected every OSS_TBF_GC_EVERY
 * enqueues. */
#ifndef OSS_NRS_TBF_H
#define OSS_NRS_TBF_H

#include <stddef.h>
#include <stdint.h>

#include "oss/sched.h"
#include "qos/tbf_rule.h"
#include "qos/tbf.h"

#define OSS_TBF_OPC_READ QOS_TBF_OPC_READ
#define OSS_TBF_OPC_WRITE QOS_TBF_OPC_WRITE
#define OSS_TBF_OPC_OTHER QOS_TBF_OPC_OTHER
#define OSS_TBF_GC_EVERY 1024u
#define OSS_TBF_SECONDS(us) ((double)(us) / 1e6)

extern const oss_sched_class oss_sched_tbf;

/* The opcode class of a PFS_OP_OSS_* opcode. */
int oss_nrs_tbf_opc(uint16_t opcode);

/* Start rule `name` (spec->name is ignored) at the rank spec->rank.
 * Requests already queued keep their class; new ones are matched against
 * it.  Returns 0, -EEXIST (a rule has that name), -EINVAL (name empty or
 * of QOS_TBF_ID_MAX bytes or more, or spec fails qos_tbf_rule_check or
 * qos_tbf_rule_add) or -ENOMEM. */
int oss_nrs_tbf_rule_start(oss_sched *s, const char *name, const qos_tbf_rule_spec *spec);

/* Change rule `name`: rate (in the rule's unit), depth (0 keeps it), rank
 * (INT_MIN keeps it).  Queued requests are kept; tokens earned so far count
 * at the old rate.  Returns 0, -ENOENT, or -EINVAL (rate or depth negative,
 * not finite or above QOS_TBF_RATE_MAX). */
int oss_nrs_tbf_rule_change(oss_sched *s, const char *name, double rate, double depth,
			    int rank);

/* Stop rule `name`: its queued requests are re-classified against the
 * other rules (else the fallback queue), never dropped.  Returns 0,
 * -ENOENT, or -ENOMEM (see qos_tbf_rule_stop). */
int oss_nrs_tbf_rule_stop(oss_sched *s, const char *name);

/* One rule as listed: its name, its canonical text (every OST: the OST is
 * the caller's, see above; depth always shown; empty only for a rule
 * changed beyond the text form's bounds by a direct qos_tbf call) and the
 * requests queued in its classes. */
typedef struct oss_nrs_tbf_rule_snap {
	char name[64];
	char text[QOS_TBF_RULE_TEXT_MAX];
	uint32_t queued;
} oss_nrs_tbf_rule_snap;

/* Snapshot of the rules in rank (matching) order: *out is a malloc'd array
 * of *n entries (caller frees; NULL when n = 0).  Returns 0, -ENOMEM or
 * -EINVAL. */
int oss_nrs_tbf_rule_list(oss_sched *s, oss_nrs_tbf_rule_snap **out, size_t *n);

/* Work-conserving mode (qos_tbf_set_work_conserving): on (1) lets idle
 * I/O threads serve rate-limited queues above their rates when nothing
 * else is eligible; off (0, the default) keeps every rate strict.
 * Returns 0 or -EINVAL. */
int oss_nrs_tbf_set_work_conserving(oss_sched *s, int on);

#endif
