/* admin_oss.h — the OSSes as pfsadmin reaches them: the MDS's OST list
 * grouped by control address (pfs_ost_info.host, ctl_port), and one control
 * request sent to several OSSes at once.
 *
 * cli_oss_call puts the request to every selected OSS on its own thread, so
 * a dead or unreachable OSS costs its timeout once, not once per OSS, and
 * never stops the others: each OSS's outcome (0, its error status, or a
 * transport error such as -ECONNREFUSED / -ETIMEDOUT) lands in its entry.
 * Requests go with pfsadmin's header tag (job "pfsadmin.<uid>", real
 * uid/gid).  A connect is retried for at most CLI_OSS_RETRY_MS; replies wait
 * a->oss_timeout_ms.
 *
 * Not thread-safe: one caller uses a set at a time.  The set owns every
 * entry's pool, OST list and reply; cli_oss_set_free releases them. */
#ifndef CLI_ADMIN_OSS_H
#define CLI_ADMIN_OSS_H

#include <stddef.h>
#include <stdint.h>

#include "client/admin_cmd.h"
#include "common/msg.h"
#include "common/rpc.h"

#define CLI_OSS_RETRY_MS 200

typedef struct cli_oss {
	char name[64];          /* pfs_ost_info.oss of its first OST */
	char host[64];
	uint16_t ctl_port;
	char addr[80];          /* "host:port" for messages */
	uint32_t *osts;         /* indices of the OSTs it serves (malloc'd) */
	uint32_t n_osts;
	int up;                 /* the MDS counts at least one of its OSTs up */
	pfs_rpc_pool *pool;
	/* outcome of the last cli_oss_call that selected this entry */
	int called;
	int rc;
	pfs_rpc_reply rep;      /* rep.data/len valid when rc == 0 */
} cli_oss;

typedef struct cli_oss_set {
	cli_oss *v;
	uint32_t n;
} cli_oss_set;

/* Group n OSTs into s (in order of first appearance); OSTs whose OSS gave
 * no control address (port 0 or empty host) are left out.  0 or -ENOMEM;
 * on error s is empty. */
int cli_oss_set_build(cli_admin *a, const pfs_ost_info *o, uint32_t n, cli_oss_set *s);
/* Fetch the OST list from the MDS and group it (sets a->what on failure). */
int cli_oss_set_load(cli_admin *a, cli_oss_set *s);
/* Index in s of the OSS serving OST ost, or -ENOENT. */
int cli_oss_set_find(const cli_oss_set *s, uint32_t ost);
/* Send op with payload req[0..len) to every OSS (only s->v[only] when
 * only >= 0) and wait for all; outcomes in each entry.  flags:
 * PFS_RPC_IDEMPOTENT or 0.  Returns the number of OSSes that failed. */
uint32_t cli_oss_call(cli_admin *a, cli_oss_set *s, int only, uint16_t op, unsigned flags,
		      const void *req, size_t len);
void cli_oss_set_free(cli_oss_set *s);

/* What an outcome means to an admin: "ok", "no answer" (connection refused,
 * timed out, unreachable, reset), "malformed reply" (-EBADMSG) or "error"
 * (a status the OSS sent). */
const char *cli_oss_outcome(int rc);
/* 1 if rc is a transport failure ("no answer"). */
int cli_oss_no_answer(int rc);

#endif
