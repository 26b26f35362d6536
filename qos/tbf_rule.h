/* tbf_rule.h — the text form of an NRS TBF rule, as admins type it
 * (`pfsadmin nrs tbf rule start NAME 'EXPR'`) and as the OSS lists it,
 * modelled on Lustre's `lctl set_param ost.OSS.ost_io.nrs_tbf_rule`:
 *
 *   [jobid={PAT PAT ...}] [uid=N] [gid=N] [opcode={read write other}]
 *   (rate=BYTES[/s] | rpcs=N) [depth=TOKENS] [rank=N] [ost=INDEX]
 *
 * Words are separated by spaces or tabs, keys may come in any order, each
 * at most once.  Conditions are ANDed; a list matches any of its members
 * and a one-member list may drop the braces (jobid=dd*).  A job pattern is
 * an exact id, a prefix ending in '*', or '*': printable ASCII or UTF-8
 * bytes other than '{' and '}', '*' only at the end, at most
 * QOS_TBF_ID_MAX - 1 bytes; one list holds at most QOS_TBF_RULE_JOBS_MAX
 * distinct patterns of at most QOS_TBF_RULE_JOBS_TEXT_MAX bytes together
 * (with the spaces between them).
 *
 * Numbers are decimal (digits, optional fraction, optional exponent:
 * "1.5", "2e6").  rate is bytes per second and takes an SI (K, M, G: 10^3,
 * 10^6, 10^9) or binary (Ki, Mi, Gi) suffix, optionally followed by "B",
 * "B/s" or "/s" ("100MB/s" = 1e8 bytes/s); rpcs is RPCs per second, a
 * plain number.  rate=0 / rpcs=0 holds the matching jobs.  depth is the
 * bucket depth in tokens of the rule's unit: bytes for rate= (suffixes and
 * "B" allowed), RPCs for rpcs= (a plain number); it must be positive;
 * default QOS_TBF_DEPTH_DEFAULT RPCs, or QOS_TBF_DEPTH_DEFAULT_BYTES (1 MiB
 * x that) for byte rules.  rank orders matching (smaller first; default 0;
 * an int other than INT_MIN).  uid, gid: 0 .. 2^32-1.  ost= limits the
 * rule to one OST index (0 .. 2^32-2; default: every OST of the OSS).
 *
 * Errors are one line naming the offending word: an unknown key, a
 * duplicated key, a word that is not key=value, a value that is negative,
 * not finite, absurd (rate, rpcs or depth above QOS_TBF_RATE_MAX, ids out
 * of range) or malformed, an empty or overlong list, a bad pattern, a
 * missing rate/rpcs or both given, text longer than QOS_TBF_RULE_TEXT_MAX
 * - 1 bytes, e.g. "unknown key 'rat'", "rate: negative '-5'".
 *
 * Canonical form (qos_tbf_rule_format): keys in the order of the grammar
 * line above, lists always braced, defaults left out, numbers in the
 * shortest form that reads back exactly (a byte rate with the shortest
 * suffix, "rate=1.5GB/s", a byte depth as "depth=3MiB").  For every rule
 * accepted by parse or check, format succeeds and parse(format(x)) == x;
 * the bounds above leave room in QOS_TBF_RULE_TEXT_MAX for any later change
 * of rate, depth and rank within their limits.
 *
 * Pure: no allocation, no globals, thread-safe. */
#ifndef QOS_TBF_RULE_H
#define QOS_TBF_RULE_H

#include <stddef.h>
#include <stdint.h>

#include "qos/tbf.h"

/* Opcode classes of the OSS data opcodes, the bits of a rule's opc_mask
 * (opcode={read write other}). */
#define QOS_TBF_OPC_READ 0
#define QOS_TBF_OPC_WRITE 1
#define QOS_TBF_OPC_OTHER 2

#define QOS_TBF_RULE_JOBS_MAX QOS_TBF_JOBS_MAX /* patterns in one jobid={...} */
#define QOS_TBF_RULE_JOBS_TEXT_MAX 90     /* bytes of the patterns and spaces
                                             inside jobid={...} */
#define QOS_TBF_RATE_MAX 1e12             /* bytes/s or RPCs/s: 1 TB/s; also
                                             the largest depth */
#define QOS_TBF_RULE_TEXT_MAX 256         /* rule text, with NUL (the size of
                                             pfs_nrs_rule_info.expr) */

/* A parsed rule: owns the storage its spec points into (spec.jobids points
 * at jobv, jobv[i] at jobs[i]), so it must not be copied by value; pass a
 * pointer, or copy the spec's strings out. */
typedef struct qos_tbf_rule {
	qos_tbf_rule_spec spec;   /* spec.name is left NULL: the caller names it */
	uint32_t ost;             /* PFS_QOS_OST_ALL (common/qosmsg.h) = every OST */
	char jobs[QOS_TBF_RULE_JOBS_MAX][QOS_TBF_ID_MAX];
	const char *jobv[QOS_TBF_RULE_JOBS_MAX];
} qos_tbf_rule;

/* Parse text into *out.  Returns 0, or -EINVAL with a one-line reason in
 * err (e.g. "unknown key 'rat'", "rate: negative '-5'"; err may be NULL
 * when errlen is 0) and *out reset to an empty rule. */
int qos_tbf_rule_parse(const char *text, qos_tbf_rule *out, char *err, size_t errlen);

/* Whether spec (name ignored) can be written as rule text within the
 * bounds above, i.e. whether format will succeed on it and on any later
 * change of rate, depth and rank within their limits.  Returns 0, or
 * -EINVAL with a one-line reason in err. */
int qos_tbf_rule_check(const qos_tbf_rule_spec *spec, char *err, size_t errlen);

/* Format spec (name ignored) and ost back into canonical rule text in buf
 * (len bytes; QOS_TBF_RULE_TEXT_MAX always suffices): parse(format(x)) ==
 * x.  Returns the length (without the NUL), -EINVAL if spec fails
 * qos_tbf_rule_check (or buf is NULL with len > 0), or -ENOSPC if it did
 * not fit in len (buf then holds "" when len > 0). */
int qos_tbf_rule_format(const qos_tbf_rule_spec *spec, uint32_t ost, char *buf, size_t len);

#endif
