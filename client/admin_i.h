/* admin_i.h — helpers shared by the pfsadmin modules (client/admin_*.c) and
 * by nothing else: argument-parsing pieces, the MDS requests mdc has no call
 * for, and the JSON and error-message conventions every command follows.
 *
 * Conventions (see admin_cmd.h, whose JSON vocabulary every command uses): a
 * command gathers everything, then prints one table set or one JSON
 * document; on failure it sets a->what (and a->why when strerror would not
 * say it) through cli__what / cli__why / cli__fail_rpc / cli__fail_mds and
 * returns a negative errno. */
#ifndef CLI_ADMIN_I_H
#define CLI_ADMIN_I_H

#include <getopt.h>
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

/* A command's handler of its own options: getopt's code (a short option's
 * char, or a long option's val) and its value (NULL without one).  0 or
 * -EINVAL with a message in err. */
typedef int (*cli__optfn)(int opt, const char *val, cli_admin_args *a, char *err,
			  size_t errlen);
/* getopt_long over argv[0..argc), argv[0] being the command word, with the
 * command's shortopts/longopts (longopts NULL-terminated or NULL) and the
 * global options added; fn NULL = the top level (stops at the first
 * operand).  0 with the operands at argv[*operand..argc), 1 when help or
 * the version was asked (a->cmd set to CLI_ADMIN_HELP with help_cmd, or to
 * CLI_ADMIN_VERSION), or -EINVAL. */
int cli__getopt(int argc, char **argv, const char *shortopts, const struct option *longopts,
		cli__optfn fn, cli_admin_args *a, int *operand, char *err, size_t errlen);

/* The command words: "qos policy set" is { "qos", "policy", "set" }. */
typedef struct cli__cmdword {
	cli_admin_cmd cmd;
	int verb;              /* nrs: PFS_NRS_*; else 0 */
	const char *w[4];      /* NULL after the last word */
} cli__cmdword;
extern const cli__cmdword cli__cmdwords[];
extern const size_t cli__ncmdwords;
/* Row of cli__cmdwords matching most of words[0..n) (whole rows only),
 * with its number of words in *used; -1 if none. */
int cli__match_cmd(char *const *words, int n, int *used);

/* ---- admin_args_qos.c ---- */

/* Options and operands of a job/jobstats/qos/nrs command (a->cmd and
 * a->nrs_verb set), argv[0] being its last command word.  Same contract as
 * cli_admin_parse_args. */
int cli__parse_qos(int argc, char **argv, cli_admin_args *a, char *err, size_t errlen);

/* ---- admin_cmd.c ---- */

/* a->what (and a->why cleared); cli__rewhat keeps a->why; cli__why sets
 * only a->why (the text shown instead of strerror). */
void cli__what(cli_admin *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cli__rewhat(cli_admin *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cli__why(cli_admin *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* What a transport error means for a server ("not reachable (connection
 * refused: ...)", "did not answer within 10 s (--timeout)"), or NULL when
 * rc is not one.  buf (64 bytes or more) may hold the text. */
const char *cli__transport_text(int rc, int timeout_ms, char *buf, size_t sz);
/* A failed request: what = "<doing> on <server>", why = a hint for the
 * errors a user can act on (EACCES: only root or the job's owner; ENOENT:
 * no such job; EOPNOTSUPP: server too old; EBADMSG: malformed reply) or
 * what a transport error means; otherwise strerror stays. */
void cli__fail_rpc(cli_admin *a, int rc, const char *server, const char *doing);
/* A failed MDS request of a command: what = doing (NULL: a->what as it
 * is); why names the MDS and what happened for transport errors, malformed
 * replies (of request, e.g. "OST list") and unknown requests; otherwise
 * strerror stays. */
void cli__fail_mds(cli_admin *a, int rc, const char *doing, const char *request);
/* Write "pfsadmin: <message>" for rc to a->err and mark a->reported: a
 * command that goes on after a failure (getstripe over several paths). */
void cli__report(cli_admin *a, int rc);
/* "host:port" of the MDS into buf. */
const char *cli__mds_name(cli_admin *a, char *buf, size_t sz);
/* One MDS request: payload w (its sticky error is returned first), header
 * tagged with a->ctx.job and the caller's uid/gid (the MDS filters what a
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
/* The rest of r as a counted array (u32 n, n entries of at least min_wire
 * bytes, decoded by dec into elems of elem bytes) ending the payload:
 * *out is malloc'd (caller frees; NULL on error), *n its length.
 * Returns 0, -ENOMEM, or -EBADMSG for anything malformed or left over. */
int cli__rarray(pfs_rbuf *r, size_t min_wire, size_t elem, int (*dec)(pfs_rbuf *, void *),
		void **out, uint32_t *n);

#endif
