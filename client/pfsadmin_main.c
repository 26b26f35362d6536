/* pfsadmin_main.c — pfsadmin entry point: parse the command line, find the
 * MDS, run one command (admin_cmd.h), map the result to an exit status.
 *
 * MDS address: --mds, else $PFS_MDS, else the fuse.pfs mount holding PATH
 * (or the only pfs mount when the command has no PATH), read from
 * /proc/self/mountinfo.  setstripe/getstripe refuse a PATH outside a pfs
 * mount whatever the address source.  Exit status: 0 success, 1 error (one line
 * "pfsadmin: <what>: <strerror>" on stderr), 2 usage error. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/admin_args.h"
#include "client/admin_cmd.h"
#include "client/admin_mnt.h"
#include "common/log.h"
#include "common/net.h"
#include "common/rpc.h"

#define MOUNTINFO "/proc/self/mountinfo"

/* A CLI should fail fast when the MDS is down rather than retry for the
 * pool's default 30 s; 2 s still rides out a connection reset. */
#define ADMIN_RETRY_MS 2000
#define ADMIN_TIMEOUT_MS 30000

/* Path-based commands turn PATH into a pfs inode number with stat(2), which
 * means nothing outside a pfs mount: refuse such a path up front, even when
 * the MDS address was given explicitly. */
static int check_pfs_path(const char *path, char *what, size_t whatsz)
{
	char canon[PFS_PATH_MAX];
	int rc = cli_mnt_canon(path, canon, sizeof(canon));

	if (rc) {
		snprintf(what, whatsz, "%s", path);
		return rc;
	}
	rc = cli_mnt_find(MOUNTINFO, canon, NULL, 0, NULL, 0);
	if (rc)
		snprintf(what, whatsz, "%s is not in a pfs mount", path);
	return rc;
}

static int resolve_mds(const cli_admin_args *args, char *addr, size_t addrsz, char *what,
		       size_t whatsz)
{
	const char *env = getenv("PFS_MDS");
	char canon[PFS_PATH_MAX];
	int rc;

	if (args->mds) {
		snprintf(what, whatsz, "--mds %s", args->mds);
		if (strlen(args->mds) >= addrsz)
			return -ENAMETOOLONG;
		strcpy(addr, args->mds);
		return 0;
	}
	if (env && *env) {
		snprintf(what, whatsz, "PFS_MDS=%s", env);
		if (strlen(env) >= addrsz)
			return -ENAMETOOLONG;
		strcpy(addr, env);
		return 0;
	}
	if (!args->path) {
		rc = cli_mnt_find(MOUNTINFO, NULL, addr, addrsz, NULL, 0);
		if (rc == -EEXIST)
			snprintf(what, whatsz, "several pfs mounts: give a PATH, --mds or PFS_MDS");
		else if (rc)
			snprintf(what, whatsz, "no pfs mount found: give --mds or set PFS_MDS");
		return rc;
	}
	rc = cli_mnt_canon(args->path, canon, sizeof(canon));
	if (rc) {
		snprintf(what, whatsz, "%s", args->path);
		return rc;
	}
	rc = cli_mnt_find(MOUNTINFO, canon, addr, addrsz, NULL, 0);
	if (rc)
		snprintf(what, whatsz, "%s is not in a pfs mount (give --mds or set PFS_MDS)",
			 args->path);
	return rc;
}

int main(int argc, char **argv)
{
	cli_admin_args args;
	cli_admin a;
	pfs_rpc_opts opts = { .max_conns = 1, .timeout_ms = ADMIN_TIMEOUT_MS,
			      .retry_ms = ADMIN_RETRY_MS };
	pfs_rpc_pool *pool = NULL;
	char err[256], addr[300], host[256], what[600];
	uint16_t port;
	int rc;

	pfs_log_init("pfsadmin", PFS_LOG_ERR);
	if (cli_admin_parse_args(argc, argv, &args, err, sizeof(err))) {
		fprintf(stderr, "pfsadmin: %s (see 'pfsadmin help')\n", err);
		return 2;
	}
	if (args.cmd == CLI_ADMIN_HELP) {
		cli_admin_usage(stdout);
		return 0;
	}
	if (args.cmd == CLI_ADMIN_SETSTRIPE || args.cmd == CLI_ADMIN_GETSTRIPE) {
		rc = check_pfs_path(args.path, what, sizeof(what));
		if (rc)
			goto fail;
	}
	rc = resolve_mds(&args, addr, sizeof(addr), what, sizeof(what));
	if (rc)
		goto fail;
	if (pfs_addr_parse(addr, host, sizeof(host), &port) || !host[0] || port == 0) {
		/* A bad address the user typed is a usage error; one read
		 * from a mount or the environment is an ordinary error. */
		fprintf(stderr, "pfsadmin: bad MDS address '%s' (want HOST:PORT)\n", addr);
		return args.mds ? 2 : 1;
	}
	rc = pfs_rpc_pool_create(host, port, &opts, &pool);
	if (rc) {
		snprintf(what, sizeof(what), "connecting to MDS %s", addr);
		goto fail;
	}
	cli_admin_init(&a, pool, stdout, args.json);
	rc = cli_admin_run(&a, &args);
	pfs_rpc_pool_destroy(pool);
	if (rc) {
		snprintf(what, sizeof(what), "%s", a.what);
		goto fail;
	}
	if (fflush(stdout) != 0) {
		rc = -errno;
		snprintf(what, sizeof(what), "writing output");
		goto fail;
	}
	return 0;
fail:
	fprintf(stderr, "pfsadmin: %s: %s\n", what, pfs_strerror(rc));
	return 1;
}
