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
 * Thread-safe (one mutex per cli_credit).  The deadlock argument for
 * waiting on a credit while holding others is in client/osc.h. */
#ifndef CLI_CREDIT_H
#define CLI_CREDIT_H

#include <stdint.h>

typedef struct cli_credit cli_credit;

typedef struct cli_credit_stats {
	uint32_t credit;   /* current grant (rcc) */
	uint32_t inflight; /* urc */
	uint32_t waiting;  /* pieces waiting for a credit now */
	uint32_t peak;     /* highest urc seen */
	uint64_t waits;    /* acquisitions that had to wait */
	uint64_t changes;  /* grants that changed the credit */
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

void cli_credit_stats_get(cli_credit *c, cli_credit_stats *st);

#endif
