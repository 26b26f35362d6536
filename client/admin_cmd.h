/* admin_cmd.h — the pfsadmin commands, as functions over an RPC pool to the
 * MDS and an output stream, so they can run against a fake MDS in tests.
 *
 * The MDS is reached through client/mdc (the typed calls mount.pfs uses
 * too) wrapped around the caller's pool; the job and QoS requests, which
 * mdc has no calls for, go over the same pool (cli__call).  Each command
 * prints either aligned tables (admin_fmt.h) or exactly one JSON document
 * (jansson) to a->out, and returns 0 or a negative errno.  On error nothing
 * is printed to a->out, and a->what says what failed (e.g. "getstripe
 * /mnt/pfs/f") and a->why, when set, why; cli_admin_errmsg puts the two
 * together for "pfsadmin: <message>".
 *
 * Error messages say what went wrong in words, not with an errno text that
 * would mislead: a transport failure names the server and what happened to
 * the request ("MDS 10.0.0.1:7000 not reachable (connection refused)", "did
 * not answer within 10 s"), a refused setstripe "file already has a
 * layout", a malformed reply "malformed reply"; only a status the server
 * sent for its own reasons is shown as strerror text.
 *
 * Path-based commands (setstripe, getstripe) stat(2) the path: inside a pfs
 * mount, st_ino is the pfs inode number, which the MDS opcodes take.  They do
 * not check that the path is on a pfs mount; the caller picked the MDS from
 * that mount (admin_mnt.h) or was told the address explicitly.
 *
 * Namespace requests carry the caller's credentials (a->ctx.cred, filled by
 * cli_admin_init from getuid/getgid/getgroups), so the MDS applies the same
 * permission checks as for the FUSE client.  Every request carries the job id
 * "pfsadmin.<uid>" (the procname.uid convention of DESIGN.md); the job and
 * QoS requests also the real uid/gid in their header, by which the MDS
 * shows a non-root caller only its own jobs.
 *
 * The commands live in admin_df.h (ost list, df), admin_stripe.h
 * (setstripe, getstripe), admin_job.h, admin_qos.h, admin_stats.h and
 * admin_nrs.h, admin_lfsck.h.  Some print before they can fail: nrs shows every OSS's
 * result and fails when one failed; jobstats --watch prints a report per
 * interval before any later error; getstripe with several paths prints the
 * ones it could read and reports each failure on a->err.  jobstats lists
 * the servers that did not answer and fails only when none did.
 *
 * JSON vocabulary — every command uses the same key for the same thing
 * (client/README.md has the list with examples):
 *   units by suffix: _bytes (integer bytes), _bytes_per_s (integer; null =
 *     no limit), _ns (CLOCK_REALTIME nanoseconds, integer), _us (integer),
 *     _ms and _s (reals), _pct (integer percent, rounded up as df does),
 *     _nh (node-hours, real), _inodes (integer count);
 *   space, wherever it appears (ost list, df OSTs, MDTs and summary):
 *     total_bytes, used_bytes (total - free), free_bytes, available_bytes
 *     (what a user may still write; an OST reports free = available),
 *     used_pct; inodes: total_inodes, used_inodes, free_inodes,
 *     used_inodes_pct; null where the server does not report a number;
 *   names: index (position in its own list: OST index, stripe number),
 *     name (the lfs-style target name "pfs-OST0000", "pfs-MDT0000"), uuid
 *     (an OST's own uuid), oss (OSS name), host, address ("HOST:PORT" of a
 *     server), job, uid, path, ino, type ("file", "directory"), state ("up",
 *     "down" for servers; "running", "ended" for jobs);
 *   a server that failed in a many-server reply: errno (negative errno),
 *     error (its message);
 *   object ids: object (integer, saturated at 2^63-1) and object_id (hex
 *     string, exact).
 * Counters are integers saturated at INT64_MAX. */
#ifndef CLI_ADMIN_CMD_H
#define CLI_ADMIN_CMD_H

#include <stdint.h>
#include <stdio.h>

#include "client/admin_args.h"
#include "client/mdc.h"
#include "common/layout.h"
#include "common/msg.h"
#include "common/rpc.h"

/* Stripe count "all OSTs up" on the wire (SETSTRIPE, CREATE). */
#define CLI_STRIPE_ALL_WIRE CLI_MDC_STRIPE_ALL

/* An OSS that has not answered in this time is reported as not answering;
 * the others are shown (an admin wants the cluster's view, not a hang). */
#define CLI_ADMIN_OSS_TIMEOUT_MS 5000

struct pfs_auth_key;
typedef struct cli_admin {
	pfs_rpc_pool *pool; /* borrowed; the MDS; outlives the calls */
	cli_mdc *mdc;       /* typed MDS calls over pool (owned: cli_admin_fini) */
	FILE *out;          /* borrowed */
	FILE *err;          /* borrowed; per-item failures (getstripe); stderr */
	int json;           /* 1 = one JSON document instead of tables */
	int json_lines;     /* with json: compact, one document per line (--watch) */
	int timeout_ms;     /* the pool's per-request timeout, for messages (0 =
			     * not known) */
	const struct pfs_auth_key *auth; /* key for every pool (NULL = none) */
	int oss_timeout_ms; /* per OSS request (jobstats, nrs); default
			     * CLI_ADMIN_OSS_TIMEOUT_MS */
	const char *fsname; /* borrowed; target names in df ("pfs") */
	const char *mnt;    /* borrowed; mount point df shows, "" = not known */
	cli_ctx ctx;        /* credentials and job id of every request */
	char what[512];     /* set when a command fails: what failed */
	char why[256];      /* and why, when strerror would not say it ("" = use it) */
	int reported;       /* the failures were already written to err */
} cli_admin;

/* Fill a with the pool, stream, format and the process's credentials.
 * 0 or -ENOMEM; cli_admin_fini in any case. */
int cli_admin_init(cli_admin *a, pfs_rpc_pool *pool, FILE *out, int json);
void cli_admin_fini(cli_admin *a);

/* The message for a failure rc of a command on a: "<what>: <why>", with
 * strerror(rc) when no why was set.  Returns buf. */
const char *cli_admin_errmsg(const cli_admin *a, int rc, char *buf, size_t sz);

/* Fetch the OST table (PFS_OP_MDS_OST_LIST).  *osts is malloc'd (caller
 * frees, also when *n is 0).  0, a server/transport errno, or -EBADMSG. */
int cli_admin_get_osts(cli_admin *a, pfs_ost_info **osts, uint32_t *n);
/* MDS statfs (PFS_OP_MDS_STATFS). */
int cli_admin_get_statfs(cli_admin *a, pfs_statfs *s);
/* Layout of ino (PFS_OP_MDS_GETLAYOUT, cli_mdc_getlayout_any).  *nobj gets
 * the number of stripes that have objects: stripe_count for a file, 0 for a
 * directory's default layout (0/0 = none set). */
int cli_admin_get_layout(cli_admin *a, uint64_t ino, pfs_layout *l, uint32_t *nobj);

/* count round trips of PFS_OP_PING; checks the echo. */
int cli_admin_ping(cli_admin *a, unsigned count);

/* Run the command in args (not HELP or VERSION). */
int cli_admin_run(cli_admin *a, const cli_admin_args *args);

#endif
