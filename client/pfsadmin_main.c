/* pfsadmin_main.c — pfsadmin entry point: parse the command line, find the
 * MDS, run one command (admin_cmd.h), map the result to an exit status.
 *
 * MDS address: --mds, else $PFS_MDS, else the fuse.pfs mount holding PATH
 * (or the only pfs mount when the command has no PATH), read from
 * /proc/self/mountinfo.  setstripe/getstripe refuse a PATH outside a pfs
 * mount whatever the address source.  The host is resolved here, before any
 * request, so a name that does not resolve says so ("cannot resolve HOST")
 * instead of surfacing later as a connect error.
 *
 * Exit status: 0 success; 1 error, one line "pfsadmin: <what>: <why>" on
 * stderr; 2 usage error: a bad command line, option value or MDS address,
 * the same whether the address came from --mds or from $PFS_MDS (one read
 * from a mount is not the user's typing: 1).  Every request is bounded by
 * --timeout (default CLI_TIMEOUT_DEFAULT_S): the connect, the send and the
 * wait for the reply each, and the retries of a refused connect within it.
 *
 * Key (common/auth.h): --key FILE, else $PFS_KEY, else /etc/pfs/admin.key,
 * else /etc/pfs/client.key when admin.key does not exist (an unprivileged
 * key then: admin commands are refused by the servers); --no-auth sends no
 * handshake (servers with auth = off), as does PFS_AUTH=off in the
 * environment (the switch deploy/pfs-cluster uses).  `pfsadmin key gen ...` writes key
 * files and needs no MDS (admin_key.c). */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sodium.h>

#include "client/admin_args.h"
#include "client/admin_cmd.h"
#include "client/admin_key.h"
#include "client/admin_mnt.h"
#include "common/auth.h"
#include "common/log.h"
#include "common/net.h"
#include "common/rpc.h"

#define MOUNTINFO "/proc/self/mountinfo"
#define ADMIN_KEY_DEFAULT "/etc/pfs/admin.key"
#define CLIENT_KEY_DEFAULT "/etc/pfs/client.key"

/* A CLI should fail fast when the MDS is down rather than retry for the
 * pool's default 30 s; 2 s (or less with a shorter --timeout) still rides
 * out a connection reset. */
#define ADMIN_RETRY_MS 2000

/* A failure before any command ran: what, and why (NULL = strerror). */
typedef struct early_err {
	char what[PFS_PATH_MAX + 128];
	const char *why;
	char whybuf[1024];
} early_err;

/* Path-based commands turn PATH into a pfs inode number with stat(2), which
 * means nothing outside a pfs mount: refuse such a path up front, even when
 * the MDS address was given explicitly.  addr gets the mount's source. */
static int check_pfs_path(const char *path, char *addr, size_t addrsz, early_err *e)
{
	char canon[PFS_PATH_MAX];
	int rc = cli_mnt_canon(path, canon, sizeof(canon));

	if (rc) {
		snprintf(e->what, sizeof(e->what), "%s", path);
		return rc;
	}
	rc = cli_mnt_find(MOUNTINFO, canon, addr, addrsz, NULL, 0);
	if (rc == -ENOENT) {
		snprintf(e->what, sizeof(e->what), "%s", path);
		e->why = "not in a pfs mount";
	} else if (rc) {
		snprintf(e->what, sizeof(e->what), "%s: reading " MOUNTINFO, path);
	}
	return rc;
}

/* Where the MDS address comes from. */
enum { SRC_OPTION, SRC_ENV, SRC_MOUNT };

static int resolve_mds(const cli_admin_args *args, char *addr, size_t addrsz, int *src,
		       char *mnt, size_t mntsz, early_err *e)
{
	const char *env = getenv("PFS_MDS");
	const char *given = args->mds ? args->mds : env && *env ? env : NULL;
	char canon[PFS_PATH_MAX], maddr[300];
	int rc;

	mnt[0] = '\0';
	if (given) {
		*src = args->mds ? SRC_OPTION : SRC_ENV;
		snprintf(e->what, sizeof(e->what), "%s%s", args->mds ? "--mds " : "PFS_MDS=",
			 given);
		if (strlen(given) >= addrsz)
			return -ENAMETOOLONG;
		strcpy(addr, given);
		/* The mount point df shows: PATH's mount, or the only pfs
		 * mount, when it is this MDS's. */
		if (args->path && cli_mnt_canon(args->path, canon, sizeof(canon)) == 0)
			rc = cli_mnt_find(MOUNTINFO, canon, maddr, sizeof(maddr), mnt, mntsz);
		else
			rc = cli_mnt_find(MOUNTINFO, NULL, maddr, sizeof(maddr), mnt, mntsz);
		if (rc || strcmp(maddr, addr) != 0)
			mnt[0] = '\0';
		return 0;
	}
	*src = SRC_MOUNT;
	if (!args->path) {
		rc = cli_mnt_find(MOUNTINFO, NULL, addr, addrsz, mnt, mntsz);
		if (rc == -EEXIST)
			e->why = "several pfs mounts: give a PATH, --mds or PFS_MDS";
		else if (rc == -ENOENT)
			e->why = "no pfs mount found: give --mds or set PFS_MDS";
		snprintf(e->what, sizeof(e->what), "finding the MDS");
		return rc;
	}
	rc = cli_mnt_canon(args->path, canon, sizeof(canon));
	if (rc) {
		snprintf(e->what, sizeof(e->what), "%s", args->path);
		return rc;
	}
	rc = cli_mnt_find(MOUNTINFO, canon, addr, addrsz, mnt, mntsz);
	snprintf(e->what, sizeof(e->what), "%s", args->path);
	if (rc == -ENOENT)
		e->why = "not in a pfs mount (give --mds or set PFS_MDS)";
	return rc;
}

/* Resolve host now: a name that does not resolve is named as such. */
/* PFS_AUTH=off (or 0/no) in the environment: the same as --no-auth. */
static int auth_off_env(void)
{
	const char *v = getenv("PFS_AUTH");

	return v && (!strcmp(v, "off") || !strcmp(v, "0") || !strcmp(v, "no"));
}

static int check_host(const char *host, uint16_t port, early_err *e)
{
	struct addrinfo hints, *res = NULL;
	char ps[8];
	int rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	snprintf(ps, sizeof(ps), "%u", port);
	rc = getaddrinfo(host, ps, &hints, &res);
	if (rc == 0) {
		freeaddrinfo(res);
		return 0;
	}
	snprintf(e->whybuf, sizeof(e->whybuf), "cannot resolve %s (%s)", host,
		 rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
	e->why = e->whybuf;
	return -EHOSTUNREACH;
}

static int fail(int rc, const early_err *e)
{
	fprintf(stderr, "pfsadmin: %s: %s\n", e->what, e->why ? e->why : pfs_strerror(rc));
	return 1;
}

int main(int argc, char **argv)
{
	cli_admin_args args;
	cli_admin a;
	pfs_rpc_opts opts = { .max_conns = 1 };
	pfs_rpc_pool *pool = NULL;
	early_err e = { .why = NULL };
	char err[1536], addr[300], host[256], mnt[PFS_PATH_MAX], msg[1024];
	static pfs_auth_key key;
	const char *fsname;
	double timeout_s;
	uint16_t port;
	int rc, src;

	pfs_log_init("pfsadmin", PFS_LOG_ERR);
	if (argc >= 2 && strcmp(argv[1], "key") == 0)
		return cli_admin_key_main(argc - 1, argv + 1);
	if (cli_admin_parse_args(argc, argv, &args, err, sizeof(err))) {
		const char *name = args.help_family ? args.help_family :
			cli_admin_cmd_name(args.cmd);

		fprintf(stderr, "pfsadmin: %s\nTry 'pfsadmin %s%s--help'.\n", err, name,
			*name ? " " : "");
		return 2;
	}
	if (args.cmd == CLI_ADMIN_HELP) {
		cli_admin_help(&args, stdout);
		return fflush(stdout) ? 1 : 0;
	}
	if (args.cmd == CLI_ADMIN_VERSION) {
		cli_admin_version(stdout);
		return fflush(stdout) ? 1 : 0;
	}
	fsname = args.fsname ? args.fsname : getenv("PFS_FSNAME");
	if (!fsname || !*fsname)
		fsname = CLI_FSNAME_DEFAULT;
	else if (cli_admin_check_fsname(fsname, err, sizeof(err))) {
		fprintf(stderr, "pfsadmin: PFS_FSNAME: %s\n", err);
		return 2;
	}
	timeout_s = args.timeout_s > 0 ? args.timeout_s : CLI_TIMEOUT_DEFAULT_S;

	rc = resolve_mds(&args, addr, sizeof(addr), &src, mnt, sizeof(mnt), &e);
	if (rc)
		return fail(rc, &e);
	if (pfs_addr_parse(addr, host, sizeof(host), &port) || !host[0] || port == 0) {
		/* A bad address the user gave is a usage error, typed or
		 * exported; one read from a mount is an ordinary error. */
		fprintf(stderr, "pfsadmin: %s: bad MDS address '%s' (want HOST:PORT)\n",
			src == SRC_OPTION ? "--mds" : src == SRC_ENV ? "PFS_MDS" : mnt, addr);
		return src == SRC_MOUNT ? 1 : 2;
	}
	if (args.cmd == CLI_ADMIN_SETSTRIPE || args.cmd == CLI_ADMIN_GETSTRIPE) {
		for (int i = 0; i < args.npaths; i++) {
			char paddr[300];

			rc = check_pfs_path(args.paths[i], paddr, sizeof(paddr), &e);
			if (rc)
				return fail(rc, &e);
			if (src == SRC_MOUNT && strcmp(paddr, addr) != 0) {
				snprintf(e.what, sizeof(e.what), "%s", args.paths[i]);
				snprintf(e.whybuf, sizeof(e.whybuf), "on another pfs (MDS %s) than "
					 "%s (MDS %s): one file system at a time", paddr,
					 args.paths[0], addr);
				e.why = e.whybuf;
				return fail(-EXDEV, &e);
			}
		}
	}
	rc = check_host(host, port, &e);
	if (rc)
		return fail(rc, &e);

	if (!args.no_auth && !auth_off_env()) {
		const char *kp = args.key ? args.key : getenv("PFS_KEY");

		if (!kp || !*kp)
			kp = access(ADMIN_KEY_DEFAULT, F_OK) == 0 ? ADMIN_KEY_DEFAULT :
				CLIENT_KEY_DEFAULT;
		rc = pfs_auth_init();
		if (rc == 0)
			rc = pfs_auth_key_load_msg(kp, &key, err, sizeof(err));
		if (rc) {
			fprintf(stderr, "pfsadmin: %s%s\n", rc == -EIO ? "libsodium init failed" : err,
				rc == -ENOENT ? " (--key FILE or PFS_KEY; --no-auth for a cluster "
				"without authentication)" : "");
			return 1;
		}
		opts.auth = &key;
	}
	opts.timeout_ms = (int)(timeout_s * 1000 + 0.5);
	if (opts.timeout_ms < 1)
		opts.timeout_ms = 1;
	opts.retry_ms = opts.timeout_ms < ADMIN_RETRY_MS ? opts.timeout_ms : ADMIN_RETRY_MS;
	rc = pfs_rpc_pool_create(host, port, &opts, &pool);
	if (rc) {
		snprintf(e.what, sizeof(e.what), "connecting to MDS %s", addr);
		return fail(rc, &e);
	}
	rc = cli_admin_init(&a, pool, stdout, args.json);
	a.timeout_ms = opts.timeout_ms;
	a.auth = opts.auth;
	/* OSSes get the default's shorter wait unless --timeout was given. */
	a.oss_timeout_ms = args.timeout_s > 0 || opts.timeout_ms < CLI_ADMIN_OSS_TIMEOUT_MS ?
		opts.timeout_ms : CLI_ADMIN_OSS_TIMEOUT_MS;
	a.fsname = fsname;
	a.mnt = mnt;
	if (rc == 0)
		rc = cli_admin_run(&a, &args);
	else
		snprintf(a.what, sizeof(a.what), "starting");
	if (rc == 0 && fflush(stdout) != 0) {
		rc = -errno;
		snprintf(a.what, sizeof(a.what), "writing output");
		a.why[0] = '\0';
	}
	if (rc && !a.reported)
		fprintf(stderr, "pfsadmin: %s\n", cli_admin_errmsg(&a, rc, msg, sizeof(msg)));
	cli_admin_fini(&a);
	pfs_rpc_pool_destroy(pool);
	sodium_memzero(&key, sizeof(key));
	return rc ? 1 : 0;
}
