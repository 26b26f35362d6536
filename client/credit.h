/* credit.h — RPC concurrency credits of one client towards one OSS: the
 * client side of RCC (lustre-rcc-congestion sec. III-B, Algorithm 1).
 *
 * The OSS grants each client a number of RPCs it may have in flight there
 * (the paper's arc, in every data reply's header).  The client keeps that
 * grant (rcc), the RPCs it has in flight (urc) and the pieces waiting for a
 * credit, and lets a piece start only while urc < rcc; one that finds no
 * credit sleeps on a condition variable until a reply frees one or raises
 * the grant.  So when an OSS is congested, a job's backlog waits here, in
 * the client that produced it, and not in the OSS's memory.
 *
 * Grants: 0 means "no grant" and keeps the current credit (so the credit is
 * never 0 and a waiter always has a holder to wait for).  A credit is used
 * up to `max`, the connections the client has to that OSS: a grant above it
 * is remembered and reported but cannot put more RPCs on the wire.
 *
 * What the client asks for (the paper's cnr, sent in every request):
 * max(current credit, in flight + waiting), at most `max`.  In flight plus
 * waiting is this client's demand on the OSS; asking for at least the
 * current credit keeps a lightly loaded OSS (which grants cnr, Alg. 2
 * line 3) from shrinking the credit each time the demand dips between
 * bursts, which would make the next burst wait a round trip for credits
 * the OSS would have granted anyway.  Under load the OSS computes the grant
 * from Lmax, IOPS and C and the request does not matter.
 *
 * Jobs sharing the client: when several jobs want the same OSS, each may
 * hold at most its fair share ⌈credit / jobs⌉ of the credits (jobs that
 * have RPCs in flight or waiting, or had one end in the last 500 ms, so a
 * job sending one request at a time keeps its share; up to 32 tracked per
 * OSS).  A throttled
 * job's RPCs wait long in the OSS's queue; without the share they took
 * every credit of the mount and another job's request waited behind them
 * (a login node, several jobs on one node).
 *
 * Per-job slots (cli_credit_policy, issue 12): the share is weighted,
 * share_j = max(1, ⌈usable · w_j / Σ w⌉) over the active jobs, with w_j
 * the job's weight from the registry (its priority times its node count,
 * client/jobweight.h; 1 when unknown).  When a credit frees, a waiting
 * job furthest below its share (lowest in-flight / share) goes first, so
 * even with a credit of 1 or 2 jobs alternate instead of racing 16
 * writers against 1.  Work-conserving: a job at or above its share may
 * still take a free credit when no other job is waiting for one (the
 * credit is lent; it comes back when that RPC ends).  job_slots = 0 turns
 * all of this off (first come, first served, for comparisons: mount option
 * job_slots=0).
 *
 * ASCAR (client/ascar_ctl.h): with policy.ascar set, the OSS's stream of
 * this credit also limits the RPCs in flight to its congestion window (the
 * window is taken within the credit: min(window, credit, max)) and spaces
 * sends by its rate gap; cli_credit_done feeds it reply times.
 *
 * Thread-safe (one mutex per cli_credit).  The deadlock argument for
 * waiting on a credit while holding others is in client/osc.h. */
#ifndef CLI_CREDIT_H
#define CLI_CREDIT_H

#include <stdint.h>

#include "client/ascar_ctl.h"

typedef struct cli_credit cli_credit;

/* A job's weight (> 0; called with the credit's mutex held, so it must not
 * block: a cache lookup). */
typedef double (*cli_credit_weight_fn)(void *arg, const char *job);

typedef struct cli_credit_policy {
	int job_slots;             /* per-job shares on (the default) */
	cli_credit_weight_fn weight; /* NULL: equal weights */
	void *weight_arg;
	cli_ascar *ascar;          /* NULL: no ASCAR control */
} cli_credit_policy;

typedef struct cli_credit_stats {
	uint32_t credit;   /* current grant (rcc) */
	uint32_t inflight; /* urc */
	uint32_t waiting;  /* pieces waiting for a credit now */
	uint32_t peak;     /* highest urc seen */
	uint64_t waits;    /* acquisitions that had to wait */
	uint64_t changes;  /* grants that changed the credit */
	uint64_t share_waits; /* waits a job's share (not the credit) caused */
} cli_credit_stats;

/* initial: the credit before any grant (>= 1; 0 = max).  max: the most
 * RPCs that can be in flight (>= 1).  name: for log lines (copied, e.g.
 * "127.0.0.1:7001").  Returns 0, -EINVAL or -ENOMEM. */
int cli_credit_create(unsigned initial, unsigned max, const char *name, cli_credit **out);
/* Nothing may be in flight or waiting.  NULL is a no-op. */
void cli_credit_destroy(cli_credit *c);

/* Take a credit for a request of job (NULL = no job), waiting while urc >=
 * min(rcc, max) or the job holds its fair share.  Returns the cnr to put
 * in the request this credit is for. */
uint32_t cli_credit_acquire(cli_credit *c, const char *job);
/* Give a credit back when its RPC ended (reply, error or not sent); grant
 * is the reply header's credit (0 when there was no reply, or none given).
 * A changed credit is logged at debug level. */
void cli_credit_release(cli_credit *c, const char *job, uint32_t grant);

/* As cli_credit_release, for an RPC sent at sent_us (pfs_clock_us) whose
 * reply came now (sent_us 0: no reply): feeds ASCAR's indicators. */
void cli_credit_done(cli_credit *c, const char *job, uint32_t grant, uint64_t sent_us);

/* Set the policy (copied; NULL = job slots on, equal weights, no ASCAR)
 * before the first acquire.  0, -ENOMEM. */
int cli_credit_set_policy(cli_credit *c, const cli_credit_policy *p);

void cli_credit_stats_get(cli_credit *c, cli_credit_stats *st);
/* The ASCAR stream's state; -ENOENT without ASCAR. */
int cli_credit_ascar_stats(cli_credit *c, cli_ascar_stats *st);

#endif
