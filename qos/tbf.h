/* tbf.h — the NRS Token Bucket Filter scheduler as a pure data structure.
 *
 * Implements the Lustre NRS TBF policy described in adaptbf.txt sec. II-A
 * (Fig. 1), which AdapTBF and the static policy drive on each OSS:
 *  - rules, kept in an ordered list, classify a request by job id (exact,
 *    or a prefix ending in '*'; "*" alone matches every job) and optionally
 *    by opcode class; the first matching rule in rank order wins;
 *  - each (rule, job) pair gets its own class (queue): a FIFO of opaque
 *    request pointers and a token bucket at the rule's rate (as Lustre does
 *    for a wildcard rule: every matching job is limited separately);
 *  - a deadline heap orders the backlogged classes by the time their head
 *    request's tokens are available ("next token time"), ties broken by
 *    rule rank (AdapTBF sec. III-D: the rule hierarchy lets idle threads
 *    prefer high-priority queues);
 *  - requests that match no rule go to an unlimited fallback FIFO, served
 *    whenever no class is ready ("processed opportunistically whenever an
 *    idle I/O thread is available");
 *  - rules are added, re-rated, re-ranked and stopped at run time; a stopped
 *    rule's queued requests are re-classified in order against the
 *    remaining rules (the next matching rule, else the fallback);
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
 * Costs: enqueue is O(rules + log classes) (rule scan, hash lookup, heap
 * insert); dequeue O(log classes).  Rule changes scan all classes.
 *
 * Limits: a request's class is fixed when it is enqueued; adding a rule
 * does not re-classify requests already queued (they keep their class
 * until served, or until their rule is stopped).  A class whose queue is
 * empty is kept (so its bucket state is not reset by a job that briefly
 * has nothing queued) until qos_tbf_gc finds its bucket full, at which
 * point dropping it is exact: a new class starts with a full bucket.
 * Fairness between classes that are ready at the same time is by deadline,
 * not by round robin.
 *
 * Ownership: request pointers are the caller's; the scheduler stores them
 * and hands each back exactly once (dequeue or drain).  Strings passed in
 * are copied.  Not thread-safe: the caller holds its NRS lock around every
 * call. */
#ifndef QOS_TBF_H
#define QOS_TBF_H

#include <stddef.h>
#include <stdint.h>

typedef struct qos_tbf qos_tbf;

#define QOS_TBF_ID_MAX        64  /* rule names and job ids, with NUL */
#define QOS_TBF_DEPTH_DEFAULT 3.0 /* Lustre's default bucket depth (II-A) */
#define QOS_TBF_OPC_ANY       (-1) /* request without an opcode class */

typedef struct qos_tbf_rule_spec {
	const char *name;  /* unique rule name */
	const char *jobid; /* "job42" exact, "dd*" prefix, "*" every job */
	uint32_t opc_mask; /* bit k: matches opcode class k; 0: any opcode */
	double rate;       /* tokens per second, >= 0 */
	double depth;      /* bucket depth in tokens; 0: QOS_TBF_DEPTH_DEFAULT */
	int rank;          /* smaller is matched first; ties: older rule first */
} qos_tbf_rule_spec;

/* Create an empty scheduler (no rules: everything goes to the fallback).
 * Returns 0 or -ENOMEM. */
int qos_tbf_create(qos_tbf **out);
/* Free the scheduler.  Requests still queued are not freed (they are the
 * caller's): drain first with qos_tbf_drain if they own memory. */
void qos_tbf_destroy(qos_tbf *t);

/* Work-conserving mode on (1) or off (0). */
void qos_tbf_set_work_conserving(qos_tbf *t, int on);

/* Add a rule.  Returns 0, -EINVAL (bad spec, name or pattern too long),
 * -EEXIST (a rule has that name) or -ENOMEM. */
int qos_tbf_rule_add(qos_tbf *t, const qos_tbf_rule_spec *spec, double now);
/* Change a rule's rate at time now: tokens earned so far are kept (at the
 * old rate), new ones come at the new rate.  depth 0 keeps the depth.
 * Returns 0, -ENOENT (no such rule) or -EINVAL. */
int qos_tbf_rule_change(qos_tbf *t, const char *name, double rate,
			double depth, double now);
/* Move a rule to a new rank (matching order and heap tie-break).
 * Returns 0 or -ENOENT. */
int qos_tbf_rule_rerank(qos_tbf *t, const char *name, int rank);
/* Stop (remove) a rule; its queued requests are re-classified in FIFO
 * order against the remaining rules, else moved to the fallback queue.
 * Returns 0, -ENOENT or -ENOMEM (then the rule is left in place). */
int qos_tbf_rule_stop(qos_tbf *t, const char *name, double now);
/* Number of rules. */
size_t qos_tbf_rule_count(const qos_tbf *t);

/* Queue request req of job `jobid` with opcode class opc (0..31, or
 * QOS_TBF_OPC_ANY) costing `cost` tokens (1 for one RPC; bytes when the
 * rule rates are bytes/s).  Returns 0, -EINVAL (NULL req, cost <= 0,
 * opc out of range, job id too long) or -ENOMEM. */
int qos_tbf_enqueue(qos_tbf *t, const char *jobid, int opc, void *req,
		    double cost, double now);

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
