/* tbf_rule.h — the text form of an NRS TBF rule, as admins type it
 * (`pfsadmin nrs tbf rule start NAME 'EXPR'`) and as the OSS lists it,
 * modelled on Lustre's `lctl set_param ost.OSS.ost_io.nrs_tbf_rule`:
 *
 *   [jobid={PAT PAT ...}] [uid=N] [gid=N] [opcode={read write other}]
 *   (rate=BYTES[/s] | rpcs=N) [depth=TOKENS] [rank=N] [ost=INDEX]
 *
 * Conditions are ANDed; a list matches any of its members; a job pattern is
 * an exact id, a prefix ending in '*', or '*'.  rate takes SI (K, M, G:
 * 10^3, 10^6, 10^9) or binary (Ki, Mi, Gi) suffixes, optionally followed by
 * "B", "B/s" or "/s" ("100MB/s" = 1e8 bytes/s); rpcs is RPCs per second.
 * depth is the bucket depth in tokens of the rule's unit (bytes for rate=,
 * RPCs for rpcs=; default: QOS_TBF_DEPTH_DEFAULT RPCs, or 1 MiB x that for
 * byte rules).  rank orders matching (smaller first; default 0).  ost=
 * limits the rule to one OST index (default: every OST of the OSS).
 *
 * Errors name the offending word: unknown keys, a value that is negative,
 * not finite, absurd (rate above OSS_TBF_RATE_MAX) or malformed, an empty
 * list, a missing rate/rpcs or both given, a pattern or id list too long.
 *
 * Pure: no allocation beyond the struct itself, no globals. */
#ifndef OSS_TBF_RULE_H
#define OSS_TBF_RULE_H

#include <stddef.h>
#include <stdint.h>

#include "qos/tbf.h"

#define OSS_TBF_RULE_JOBS_MAX 16          /* patterns in one jobid={...} */
#define OSS_TBF_RATE_MAX 1e12             /* bytes/s or RPCs/s: 1 TB/s */
#define OSS_TBF_RULE_TEXT_MAX 256         /* formatted rule, with NUL */

/* A parsed rule: owns the storage its spec points into. */
typedef struct oss_tbf_rule {
	qos_tbf_rule_spec spec;   /* spec.name is left NULL: the caller names it */
	uint32_t ost;             /* PFS_QOS_OST_ALL (common/qosmsg.h) = every OST */
	char jobs[OSS_TBF_RULE_JOBS_MAX][QOS_TBF_ID_MAX];
	const char *jobv[OSS_TBF_RULE_JOBS_MAX];
} oss_tbf_rule;

/* Parse text into *out.  Returns 0, or -EINVAL with a one-line reason in
 * err (e.g. "unknown key 'rat'", "rate: negative"). */
int oss_tbf_rule_parse(const char *text, oss_tbf_rule *out, char *err, size_t errlen);

/* Format spec (and ost) back into canonical rule text in buf (at most
 * OSS_TBF_RULE_TEXT_MAX bytes): parse(format(x)) == x.  Returns the length,
 * or -ENOSPC if it did not fit. */
int oss_tbf_rule_format(const qos_tbf_rule_spec *spec, uint32_t ost, char *buf, size_t len);

#endif
