/* qos_fetch.h — what mount.pfs fetches from the MDS for its client-side
 * QoS (issue 12): the ASCAR rule set (PFS_OP_MDS_ASCAR_GET) into a
 * cli_ascar, and the job registry's weights (PFS_OP_MDS_JOB_LIST: priority
 * times node count) for the per-job RPC slots of client/credit.h.
 *
 * Fetched once at mount and then every poll_ms by a thread of its own; a
 * rule set is installed only when its version changed.  A failed fetch
 * (MDS down, an older MDS without the opcode, a client key that may not
 * list jobs) keeps what was there; jobs the registry does not know weigh 1,
 * so with no registry every job has an equal share.  The weight table is a
 * copy under a mutex: cli_qos_fetch_weight never blocks on the network (it
 * is called under a credit's mutex). */
#ifndef CLI_QOS_FETCH_H
#define CLI_QOS_FETCH_H

#include "client/ascar_ctl.h"
#include "client/mdc.h"

typedef struct cli_qos_fetch cli_qos_fetch;

typedef struct cli_qos_fetch_opts {
	unsigned poll_ms;  /* 0: 3000 */
	int ascar;         /* fetch rule sets */
	int weights;       /* fetch job weights */
} cli_qos_fetch_opts;

/* mdc and ascar are borrowed and must outlive it (ascar may be NULL when
 * opts->ascar is 0).  Fetches once, then starts the thread.  0, -ENOMEM,
 * or a pthread error. */
int cli_qos_fetch_start(cli_mdc *mdc, cli_ascar *ascar, const cli_qos_fetch_opts *opts,
			cli_qos_fetch **out);
/* Stop the thread and free.  NULL is a no-op. */
void cli_qos_fetch_stop(cli_qos_fetch *f);
/* One round now (tests, the thread): 0 or the first error. */
int cli_qos_fetch_once(cli_qos_fetch *f);
/* A cli_credit_weight_fn: arg is the cli_qos_fetch. */
double cli_qos_fetch_weight(void *arg, const char *job);

#endif
