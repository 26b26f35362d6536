/* admin_i.h — helpers shared by the pfsadmin modules (client/admin_*.c) and
 * by nothing else: argument-parsing pieces, the one way to call the MDS, and
 * the JSON and error-message conventions every command follows.
 *
 * Conventions (see admin_cmd.h): a command gathers everything, then prints
 * one table set or one JSON document; on failure it sets a->what through
 * cli__what / cli__fail_rpc and returns a negative errno.  JSON
 * counters are integers (saturated at INT64_MAX), rates integer bytes/s
 * (null where there is no limit), ratios and node-hours reals, times
 * CLOCK_REALTIME nanoseconds. */
#ifndef CLI_ADMIN_I_H
#define CLI_ADMIN_I_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "client/admin_args.h"
#include "client/admin_cmd.h"
#include "common/buf.h"
#include "common/rpc.h"

/* ---- admin_args.c ---- */

/* Format a message into err; returns -EINVAL. */
int cli__fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* --json, --mds, --help at argv[*i]: 1 consumed, 2 help, 0 not one, -EINVAL. */
int cli__global_opt(int argc, char **argv, int *i, cli_admin_args *a, char *err,
			  size_t errlen);

/* ---- admin_args_qos.c ---- */

/* Parse the rest of a job/jobstats/qos/nrs command line from argv[i]; cmd
 * is the command word.  Same contract as cli_admin_parse_args. */
int cli__parse_qos(const char *cmd, int argc, char **argv, int i, cli_admin_args *a,
			 char *err, size_t errlen);

/* ---- admin_cmd.c ---- */

void cli__what(cli_admin *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Set a->what for a failed request: "<doing> on MDS host:port", plus a hint
 * for the errors a user can act on (EACCES: only root or the job's owner;
 * ENOENT: no such job; EOPNOTSUPP: server too old; EBADMSG: bad reply). */
void cli__fail_rpc(cli_admin *a, int rc, const char *server, const char *doing);
/* "host:port" of the MDS into buf. */
const char *cli__mds_name(cli_admin *a, char *buf, size_t sz);
/* One MDS request: payload w (its sticky error is returned first), header
 * tagged with a->job_id and the caller's uid/gid (the MDS filters what a
 * non-root caller may see by them).  flags: PFS_RPC_IDEMPOTENT or 0.  The
 * reply is left in rep (free with pfs_rpc_reply_free, also on error). */
int cli__call(cli_admin *a, uint16_t op, const pfs_wbuf *w, unsigned flags,
		    pfs_rpc_reply *rep);
/* The header tag of pfsadmin's requests (borrows a). */
pfs_rpc_tag cli__tag(const cli_admin *a);
/* Print root as one JSON document and free it; NULL = could not be built
 * (-ENOMEM).  With a->json_lines the document is one compact line. */
int cli__emit(cli_admin *a, json_t *root);
json_int_t cli__ji(uint64_t v);
/* A rate in bytes/s as a JSON integer; negative = no limit = null. */
json_t *cli__jrate(double v);
/* Append v to arr, or drop arr (set to NULL) when either is NULL or the
 * append fails: lets a builder loop run straight and check once. */
void cli__jpush(json_t **arr, json_t *v);
/* An array count read from r, refused (-EBADMSG in r) when the bytes left
 * cannot hold that many entries of at least min_wire bytes each. */
uint32_t cli__rcount(pfs_rbuf *r, size_t min_wire);

#endif
