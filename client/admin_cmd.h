/* admin_cmd.h — the pfsadmin commands, as functions over an RPC pool to the
 * MDS and an output stream, so they can run against a fake MDS in tests.
 *
 * Each command sends its requests with pfs_rpc_call, prints either aligned
 * tables (admin_fmt.h) or exactly one JSON document (jansson) to a->out,
 * and returns 0 or a negative errno.  On error nothing is printed to a->out
 * and a->what says what failed (e.g. "getstripe /mnt/pfs/f"), so the caller
 * can print "pfsadmin: <what>: <strerror>".
 *
 * Path-based commands (setstripe, getstripe) stat(2) the path: inside a pfs
 * mount, st_ino is the pfs inode number, which the MDS opcodes take.  They do
 * not check that the path is on a pfs mount; the caller picked the MDS from
 * that mount (admin_mnt.h) or was told the address explicitly.
 *
 * Namespace requests carry the caller's credentials (a->cred, filled by
 * cli_admin_init from getuid/getgid/getgroups), so the MDS applies the same
 * permission checks as for the FUSE client.  Every request carries the job id
 * "pfsadmin.<uid>" (the procname.uid convention of DESIGN.md) and the real
 * uid/gid in its header, by which the MDS shows a non-root caller only its
 * own jobs.
 *
 * The job and QoS commands live in admin_job.h, admin_qos.h, admin_stats.h
 * and admin_nrs.h.  Two print before they can fail: nrs shows every OSS's
 * result and fails when one failed; jobstats --watch prints a report per
 * interval before any later error.  jobstats lists the servers that did not
 * answer and fails only when none did. */
#ifndef CLI_ADMIN_CMD_H
#define CLI_ADMIN_CMD_H

#include <stdint.h>
#include <stdio.h>

#include "client/admin_args.h"
#include "common/layout.h"
#include "common/msg.h"
#include "common/rpc.h"

/* Stripe count "all OSTs up" on the wire (SETSTRIPE, CREATE), the MDS's
 * convention (mds/ns.c); not yet named in common/proto.h. */
#define CLI_STRIPE_ALL_WIRE UINT32_MAX

/* An OSS that has not answered in this time is reported as not answering;
 * the others are shown (an admin wants the cluster's view, not a hang). */
#define CLI_ADMIN_OSS_TIMEOUT_MS 5000

typedef struct cli_admin {
	pfs_rpc_pool *pool; /* borrowed; outlives the calls */
	FILE *out;          /* borrowed */
	int json;           /* 1 = one JSON document instead of tables */
	int json_lines;     /* with json: compact, one document per line (--watch) */
	int oss_timeout_ms; /* per OSS request (jobstats, nrs); default
			     * CLI_ADMIN_OSS_TIMEOUT_MS */
	pfs_cred cred;
	char job_id[PFS_JOBID_MAX + 1];
	char what[512];     /* set when a command fails */
} cli_admin;

/* Fill a with the pool, stream, format and the process's credentials. */
void cli_admin_init(cli_admin *a, pfs_rpc_pool *pool, FILE *out, int json);

/* Fetch the OST table (PFS_OP_MDS_OST_LIST).  *osts is malloc'd (caller
 * frees, also when *n is 0).  0, a server/transport errno, or -EBADMSG. */
int cli_admin_get_osts(cli_admin *a, pfs_ost_info **osts, uint32_t *n);
/* File system totals (PFS_OP_MDS_STATFS). */
int cli_admin_get_statfs(cli_admin *a, pfs_statfs *s);
/* Layout of ino (PFS_OP_MDS_GETLAYOUT).  *nobj gets the number of stripes
 * that have objects: stripe_count for a file, 0 for a directory's default
 * layout, which comes as size and count with no stripe list (0/0 = none
 * set; the MDS of today sends the size and count 0). */
int cli_admin_get_layout(cli_admin *a, uint64_t ino, pfs_layout *l, uint32_t *nobj);

/* The commands (see admin_args.h for their command lines). */
int cli_admin_ost_list(cli_admin *a);
int cli_admin_df(cli_admin *a, int human);
/* Omitted values (have_* = 0) go as 0, "the default", as with lfs: a
 * directory's default, then the file system's.  count CLI_STRIPE_ALL goes
 * as CLI_STRIPE_ALL_WIRE, which the MDS resolves to every OST that is up
 * when a file is created.  A regular file that has data is refused with
 * -EBUSY before asking the MDS (which refuses it too). */
int cli_admin_setstripe(cli_admin *a, const char *path, int have_count, int32_t count,
			int have_size, uint32_t size);
int cli_admin_getstripe(cli_admin *a, const char *path);
/* count round trips of PFS_OP_PING; checks the echo. */
int cli_admin_ping(cli_admin *a, unsigned count);

/* Run the command in args (not HELP): one row of a table per command. */
int cli_admin_run(cli_admin *a, const cli_admin_args *args);

#endif
