/* nrs_admin.h — admin TBF rules of an OSS (PFS_OP_OSS_NRS_RULE, Lustre's
 * `lctl set_param ost.OSS.ost_io.nrs_tbf_rule="start|change|stop ..."`).
 *
 * An admin rule has a name and rule text (qos/tbf_rule.h); `ost=INDEX` in
 * the text puts it on that OST only, else on every OST of the OSS.  The
 * rules are installed in the OSTs' TBF schedulers next to the policy rules
 * of the QoS engine (qos.h), which rank after every admin rule: an admin
 * rank must be below OSS_QOS_RANK_POLICY.  Names starting with "mds." or
 * "adaptbf." belong to the policies: START refuses them (-EPERM), CHANGE
 * and STOP too, and LIST shows them with their origin.
 *
 * Verbs:
 *   START  name, text: install on the OST(s).  All or nothing: a failure
 *          on one OST stops it on those already done.
 *   CHANGE name, text with rate=/rpcs= (the rule's unit), and optionally
 *          depth= and rank= (left out: kept); queued requests stay.
 *   STOP   name: the rule's queued requests are re-classified, not lost.
 *   LIST   name ("" = all): admin rules (queued summed over OSTs), then the
 *          policy rules of every OST.
 * Errors: -EINVAL (bad text, verb, name; a reason in err), -EEXIST,
 * -ENOENT, -EPERM, -ENODEV (ost= not served here), -ENOSPC (more than
 * OSS_NRS_ADMIN_MAX rules), -EOPNOTSUPP (schedulers not TBF), -EBADMSG
 * (malformed payload).  Nothing changes on any error.
 *
 * Thread-safe (one mutex; rule calls take the schedulers' locks inside). */
#ifndef OSS_NRS_ADMIN_H
#define OSS_NRS_ADMIN_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "oss/ostq.h"

#define OSS_NRS_ADMIN_MAX 256

typedef struct oss_nrs_admin oss_nrs_admin;

/* osts[n] are borrowed and must outlive a.  0 or -ENOMEM. */
int oss_nrs_admin_create(oss_ostq *const *osts, size_t n, oss_nrs_admin **out);
void oss_nrs_admin_destroy(oss_nrs_admin *a);

/* One PFS_OP_OSS_NRS_RULE request: u8 verb, str name, then str text for
 * START/CHANGE (optional, and ignored, for STOP/LIST).  LIST appends the
 * reply (u32 n, n x pfs_nrs_rule_info) to w. */
int oss_nrs_admin_request(oss_nrs_admin *a, const uint8_t *p, size_t len, pfs_wbuf *w,
			  char *err, size_t errlen);

#endif
