/* mdqos.h — PADLL's data-plane stage in mount.pfs (padll.txt sec. III-A):
 * one token bucket per (job, operation class) that delays requests over
 * the rate the MDS's controller gave (mds/mdqos.h).
 *
 * client/mdc.c calls cli_mdqos_wait before every metadata RPC (the one
 * place they go through), and client/osc.c before every data call (read,
 * write, truncate/punch: the read and write classes); it counts the
 * request (the usage report) and sleeps the calling thread until its
 * bucket has a token.
 *
 * Data classes are counted in operations, as PADLL controls operations:
 * one token per read or write call of the file system (one FUSE request,
 * up to 1 MiB, whatever number of stripe RPCs it becomes), taken before
 * the call holds a credit or a connection.  A bytes/s unit would take
 * len tokens instead; it is not offered yet (the MDS would have to send
 * the unit with the rates).  The OSS does not enforce PADLL's read and
 * write rates a second time: its per-job TBF rules (pfsadmin nrs, the
 * OSS's own token buckets) are the server-side hold for data, and an
 * admin who needs a client that ignores PADLL held on the data path sets
 * a TBF rule for the job; PADLL's rates are not turned into TBF rules
 * automatically (two controllers on one job's data would fight).  A thread pulls
 * the rates every control period with MDS_MDQOS_PULL, which carries the
 * per-(job, class) counts since the last pull (common/mdqos.h).  Until the
 * first answer, and for classes the MDS does not limit, nothing waits.
 * An MDS that does not know the opcode (-EOPNOTSUPP) ends the pulling.
 *
 * Thread-safe. */
#ifndef CLI_MDQOS_H
#define CLI_MDQOS_H

#include <stdint.h>

#include "common/mdqos.h"
#include "common/rpc.h"

typedef struct cli_mdqos cli_mdqos;

/* pool (borrowed) reaches the MDS. */
int cli_mdqos_create(pfs_rpc_pool *pool, cli_mdqos **out);
/* Start the pull thread.  0 or -errno. */
int cli_mdqos_start(cli_mdqos *q);
/* Stop the thread, wake waiters, free.  NULL is a no-op. */
void cli_mdqos_destroy(cli_mdqos *q);

/* Count a request of job with opcode op and wait for its token. */
void cli_mdqos_wait(cli_mdqos *q, const char *job, uint16_t op);
/* The core of wait at time now (seconds): count it when first, take a
 * token: 0, or -EAGAIN and *wait seconds until one is due. */
int cli_mdqos_try(cli_mdqos *q, const char *job, uint16_t op, int first, double now,
		  double *wait);
/* Install the rates of a pull reply at time now. */
void cli_mdqos_apply(cli_mdqos *q, const pfs_mdq_rates *r, double now);
/* The counts since the last call, reset (rows malloc'd, *n of them). */
int cli_mdqos_take_usage(cli_mdqos *q, pfs_mdq_row **rows, uint32_t *n);
/* One pull now: report, fetch, apply.  0 or -errno. */
int cli_mdqos_pull(cli_mdqos *q);
/* The rate in force for (job, class); < 0 = not limited. */
double cli_mdqos_rate(cli_mdqos *q, const char *job, unsigned cls);

#endif
