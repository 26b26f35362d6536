/* tbf.h — the NRS Token Bucket Filter scheduler as a pure data structure.
 *
 * Implements the Lustre NRS TBF policy described in adaptbf.txt sec. II-A
 * (Fig. 1), which AdapTBF, the static policy and admin rules drive on each
 * OSS:
 *  - rules, kept in an ordered list, classify a request by its key: job id
 *    (a list of patterns, each exact, a prefix ending in '*', or "*"; an
 *    empty list matches every job), caller uid and gid, and opcode class.
 *    Conditions are ANDed, a list matches any member; the first matching
 *    rule in rank order wins;
 *  - a rule counts tokens in RPCs (QOS_TBF_UNIT_RPC: one token per request)
 *    or bytes (QOS_TBF_UNIT_BYTE: one token per byte of the request, a
 *    0-byte request costing 1), so rates are RPCs/s or bytes/s;
 *  - each (rule, job) pair gets its own class (queue): a FIFO of opaque
 *    request pointers and a token bucket at the rule's rate (as Lustre does
 *    for a wildcard rule: every matching job is limited separately);
 *  - a deadline heap orders the backlogged classes by the time their head
 *    request's tokens are available ("next token time"), ties broken by
 *    rule rank (AdapTBF sec. III-D: the rule hierarchy lets idle threads
 *    prefer high-priority queues);
 *  - a request larger than its bucket's depth waits for a full bucket, runs,
 *    and leaves the bucket in debt, so it is served and the long-run rate
 *    stays exact;
 *  - requests that match no rule go to an unlimited fallback FIFO, served
 *    whenever no class is ready ("processed opportunistically whenever an
 *    idle I/O thread is available");
 *  - rules are added, re-rated, re-ranked and stopped at run time without
 *    losing queued requests; a stopped rule's queued requests are
 *    re-classified in order against the remaining rules (the next matching
 *    rule, else the fallback);
 *  - work-conserving mode (off by default, as in Lustre): when no class has
 *    tokens and the fallback is empty, the class with the nearest deadline
 *    is served anyway, above its rate, without being charged tokens, so idle
 *    capacity is used but the class's rate-limited share is not reduced.
 *    The surplus is not split in proportion to rates: the class with the
 *    nearest next-token time keeps it until that time, which favours
 *    classes with higher rates (they are nearer more often).
 *
 * The scheduler never reads a clock: every call takes `now` in seconds.
 * The caller (an OSS worker loop) calls qos_tbf_dequeue when a worker is
 * free; on -EAGAIN it sleeps `wait` seconds or until a new request arrives.
 *
 * Costs: enqueue is O(rules x patterns + log classes) (rule scan with at
 * most QOS_TBF_JOBS_MAX patterns per rule, hash lookup, heap insert);
 * dequeue O(log classes).  Rule changes and stops scan all classes; rule
 * listing by index walks the rule list.
 *
 * Limits: a request's class (and so its cost unit) is fixed when it is
 * enqueued; adding or re-ranking a rule does not re-classify requests
 * already queued (they keep their class until served, or until their rule
 * is stopped).  A class whose queue is empty is kept (so its bucket state
 * is not reset by a job that briefly has nothing queued) until qos_tbf_gc
 * finds its bucket full, at which point dropping it is exact: a new class
 * starts with a full bucket.  Fairness between classes that are ready at
 * the same time is by deadline, not by round robin.  Costs are doubles:
 * byte counts are exact up to 2^53.
 *
 * Ownership: request pointers are the caller's; the scheduler stores them
 * and hands each back exactly once (dequeue or drain).  Strings passed in
 * are copied.  Not thread-safe: the caller holds its NRS lock around every
 * call. */
#ifndef QOS_TBF_H
#define QOS_TBF_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

typedef struct qos_tbf qos_tbf;

#define QOS_TBF_ID_MAX        64  /* rule names, job ids and patterns, with NUL */
#define QOS_TBF_JOBS_MAX      16  /* job patterns in one rule */
#define QOS_TBF_DEPTH_DEFAULT 3.0 /* Lustre's default bucket depth (II-A), RPCs */
/* Default depth of a byte rule: the same three requests, of 1 MiB each. */
#define QOS_TBF_DEPTH_DEFAULT_BYTES (QOS_TBF_DEPTH_DEFAULT * 1048576.0)
#define QOS_TBF_OPC_ANY       (-1) /* request without an opcode class */
#define QOS_TBF_RANK_KEEP     INT_MIN /* qos_tbf_rule_change: keep the rank */

#define QOS_TBF_UNIT_RPC  0 /* one token per request: rate in RPCs/s */
#define QOS_TBF_UNIT_BYTE 1 /* one token per byte: rate in bytes/s */

/* A rule.  Zero-filled it would match uid 0 and gid 0 only: start from
 * qos_tbf_rule_spec_init, which sets every condition to "any". */
typedef struct qos_tbf_rule_spec {
	const char *name;           /* unique rule name */
	const char *const *jobids;  /* n_jobids patterns: "job42" exact, "dd*"
	                               prefix, "*" every job */
	size_t n_jobids;            /* 0: any job (jobids may be NULL) */
	int64_t uid, gid;           /* caller uid / gid; -1: any */
	uint32_t opc_mask;          /* bit k: matches opcode class k; 0: any opcode */
	int unit;                   /* QOS_TBF_UNIT_RPC or QOS_TBF_UNIT_BYTE */
	double rate;                /* tokens per second, >= 0 */
	double depth;               /* bucket depth in tokens; 0: the unit's default
	                               (QOS_TBF_DEPTH_DEFAULT[_BYTES]) */
	int rank;                   /* smaller is matched first; ties: older rule
	                               first; not QOS_TBF_RANK_KEEP */
} qos_tbf_rule_spec;

/* What a request is classified by (qos_tbf_enqueue). */
typedef struct qos_tbf_key {
	const char *jobid; /* "" allowed (matches only "*" and prefix "*" rules) */
	int opc;           /* opcode class 0..31, or QOS_TBF_OPC_ANY */
	uint32_t uid, gid; /* caller */
	uint64_t bytes;    /* the cost under a byte rule (0 counts as 1) */
} qos_tbf_key;

/* Fill *spec with: no name, any job, uid, gid and opcode, RPC unit, rate 0,
 * default depth, rank 0. */
void qos_tbf_rule_spec_init(qos_tbf_rule_spec *spec);

/* Create an empty scheduler (no rules: everything goes to the fallback).
 * Returns 0 or -ENOMEM. */
int qos_tbf_create(qos_tbf **out);
/* Free the scheduler.  Requests still queued are not freed (they are the
 * caller's): drain first with qos_tbf_drain if they own memory. */
void qos_tbf_destroy(qos_tbf *t);

/* Work-conserving mode on (1) or off (0). */
void qos_tbf_set_work_conserving(qos_tbf *t, int on);

/* Add a rule.  Returns 0, -EINVAL (bad spec: name or pattern empty or too
 * long, more than QOS_TBF_JOBS_MAX patterns, uid/gid out of range, unknown
 * unit, rate or depth negative or not finite, rank QOS_TBF_RANK_KEEP),
 * -EEXIST (a rule has that name) or -ENOMEM. */
int qos_tbf_rule_add(qos_tbf *t, const qos_tbf_rule_spec *spec, double now);
/* Change a rule at time now, keeping its queued requests: the rate (tokens
 * earned so far are kept, at the old rate; new ones come at the new rate),
 * the depth (0 keeps it; tokens above a smaller depth are dropped) and the
 * rank (QOS_TBF_RANK_KEEP keeps it; a new rank orders matching of future
 * requests and the deadline tie-break at once).  All or nothing.
 * Returns 0, -ENOENT (no such rule) or -EINVAL (bad rate or depth). */
int qos_tbf_rule_change(qos_tbf *t, const char *name, double rate,
			double depth, int rank, double now);
/* Stop (remove) a rule; its queued requests are re-classified in FIFO
 * order against the remaining rules, else moved to the fallback queue.
 * Returns 0, -ENOENT, -ENOMEM before anything moved (then the rule is left
 * in place), or -ENOMEM after (the rule is gone and some of its requests
 * went to the fallback instead of a matching rule; none is lost). */
int qos_tbf_rule_stop(qos_tbf *t, const char *name, double now);
/* Number of rules. */
size_t qos_tbf_rule_count(const qos_tbf *t);
/* The i-th rule in rank (matching) order: its spec, with the effective
 * depth (never 0), and in *queued (may be NULL) the requests queued in its
 * classes.  The strings spec->name and spec->jobids[] are borrowed from t
 * and valid until the next call that adds, changes or stops a rule or
 * destroys t.  O(i).  Returns 0 or -ENOENT (i >= qos_tbf_rule_count). */
int qos_tbf_rule_get(const qos_tbf *t, size_t i, qos_tbf_rule_spec *spec,
		     size_t *queued);

/* Queue request req with key k.  The first matching rule decides its
 * class and cost (1 token under an RPC rule, max(bytes, 1) under a byte
 * rule); no match: the fallback queue.  *limited (if not NULL) is set to 1
 * when a rule matched (its rate governs the request), 0 for the fallback.
 * Returns 0, -EINVAL (NULL k, key job id or req, opc out of range, job id
 * too long) or -ENOMEM. */
int qos_tbf_enqueue(qos_tbf *t, const qos_tbf_key *k, void *req, double now,
		    int *limited);

/* Next request that may run at time now.
 * Returns 0 with *req set; -EAGAIN with *wait = seconds until the nearest
 * class has tokens (INFINITY if only zero-rate classes are backlogged);
 * -ENOENT if nothing is queued (*wait = INFINITY).  wait may be NULL. */
int qos_tbf_dequeue(qos_tbf *t, double now, void **req, double *wait);

/* Hand back any queued request, ignoring tokens (shutdown).
 * Returns 0 or -ENOENT when empty. */
int qos_tbf_drain(qos_tbf *t, void **req);

/* Free classes with an empty queue and a full bucket at time now.
 * Returns how many were freed. */
size_t qos_tbf_gc(qos_tbf *t, double now);

/* Requests queued in all classes and the fallback. */
size_t qos_tbf_queued(const qos_tbf *t);
/* Requests queued in the fallback queue. */
size_t qos_tbf_fallback_queued(const qos_tbf *t);
/* Number of classes (queues) that exist. */
size_t qos_tbf_class_count(const qos_tbf *t);
/* Requests queued in the class of (rule, job); 0 if there is none. */
size_t qos_tbf_class_queued(const qos_tbf *t, const char *rule,
			    const char *jobid);

#endif
