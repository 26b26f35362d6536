/* nrs_tbf.h — the Token Bucket Filter discipline for the OSS scheduler:
 * qos/tbf.h (rules by job id and opcode class, one bucket per (rule, job),
 * deadline heap, unlimited fallback queue) behind oss_sched_class.
 *
 * Every request costs one token (rule rates are RPCs per second, as in
 * Lustre's TBF and AdapTBF's token allocation).  Opcode classes for rules'
 * opc_mask: OSS_TBF_OPC_READ, _WRITE, _OTHER.  With no rules every request
 * goes to the fallback queue, i.e. the discipline behaves as FIFO.
 *
 * Rules are changed at run time through oss_sched_control with
 * oss_sched_tbf as the class: the callback receives the qos_tbf * and the
 * current time in microseconds (convert with OSS_TBF_SECONDS), e.g.
 *
 *	static int set(void *priv, uint64_t now, void *arg)
 *	{
 *		return qos_tbf_rule_change(priv, "job42", 100, 0,
 *					   OSS_TBF_SECONDS(now));
 *	}
 *	oss_sched_control(sched, &oss_sched_tbf, set, NULL);
 *
 * Shutdown drains every queue regardless of tokens (qos_tbf_drain).  Empty
 * classes with full buckets are garbage-collected every
 * OSS_TBF_GC_EVERY enqueues. */
#ifndef OSS_NRS_TBF_H
#define OSS_NRS_TBF_H

#include <stdint.h>

#include "oss/sched.h"

#define OSS_TBF_OPC_READ 0
#define OSS_TBF_OPC_WRITE 1
#define OSS_TBF_OPC_OTHER 2
#define OSS_TBF_GC_EVERY 1024u
#define OSS_TBF_SECONDS(us) ((double)(us) / 1e6)

extern const oss_sched_class oss_sched_tbf;

/* The opcode class of a PFS_OP_OSS_* opcode. */
int oss_nrs_tbf_opc(uint16_t opcode);

#endif
