/* mds_main.c — pfs-mds: the metadata server daemon.
 *
 *   pfs-mds [--config FILE] [--key=value ...]     (section [mds] of FILE)
 *
 * Opens the namespace (mds/ns.c), starts the object destroyer
 * (mds/destroy.c) and the request server (mds/server.c), writes the port
 * file once it listens, and runs in the foreground until SIGTERM/SIGINT,
 * then stops the server, the destroyer and closes the LMDB environment.
 * Bad configuration: a message on stderr and exit status 2. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/config.h"
#include "common/file.h"
#include "common/layout.h"
#include "common/log.h"
#include "common/net.h"
#include "common/proto.h"
#include "mds/destroy.h"
#include "mds/ns.h"
#include "mds/server.h"

struct mds_cfg {
	char listen[256];
	char db[PATH_MAX];
	char port_file[PATH_MAX];
	char pid_file[PATH_MAX];
	char log_level[16];
	char db_sync[16];
	int sync_interval_ms;
	uint64_t default_stripe_size;
	int default_stripe_count;
	int heartbeat_timeout;
};

#define OPT(k, t, f, d, h) { k, t, offsetof(struct mds_cfg, f), sizeof(((struct mds_cfg *)0)->f), d, h }
static const pfs_cfg_opt mds_opts[] = {
	OPT("listen", PFS_CFG_STR, listen, "0.0.0.0:7700", "address:port to serve (port 0 = any free)"),
	OPT("db", PFS_CFG_STR, db, "", "LMDB directory of the namespace (required)"),
	OPT("port_file", PFS_CFG_STR, port_file, "", "write \"port=N\" here once listening"),
	OPT("pid_file", PFS_CFG_STR, pid_file, "", "write the process id here"),
	OPT("log_level", PFS_CFG_STR, log_level, "notice", "err|warning|notice|info|debug"),
	OPT("db_sync", PFS_CFG_STR, db_sync, "periodic", "full (fsync every commit) | periodic"),
	OPT("sync_interval_ms", PFS_CFG_INT, sync_interval_ms, "1000", "periodic mode: sync interval"),
	OPT("default_stripe_size", PFS_CFG_SIZE, default_stripe_size, "1M", "stripe size of new files"),
	OPT("default_stripe_count", PFS_CFG_INT, default_stripe_count, "0",
	    "stripe count of new files (0 = min(4, OSTs up))"),
	OPT("heartbeat_timeout", PFS_CFG_INT, heartbeat_timeout, "10",
	    "seconds without heartbeat before an OST is down"),
	PFS_CFG_END
};

/* Returns an error message or NULL. */
static const char *validate(const struct mds_cfg *c, int *sync_mode, int *level)
{
	if (!c->db[0])
		return "db is required (--db=DIR)";
	if (strcmp(c->db_sync, "full") == 0)
		*sync_mode = MDS_SYNC_FULL;
	else if (strcmp(c->db_sync, "periodic") == 0)
		*sync_mode = MDS_SYNC_PERIODIC;
	else
		return "db_sync must be full or periodic";
	*level = pfs_log_level_parse(c->log_level);
	if (*level < 0)
		return "bad log_level";
	if (c->sync_interval_ms <= 0)
		return "sync_interval_ms must be > 0";
	if (c->heartbeat_timeout <= 0)
		return "heartbeat_timeout must be > 0";
	if (c->default_stripe_count < 0 || c->default_stripe_count > PFS_MAX_STRIPES)
		return "default_stripe_count must be 0..64";
	if (c->default_stripe_size > UINT32_MAX ||
	    pfs_layout_check((uint32_t)c->default_stripe_size, 1))
		return "default_stripe_size must be a multiple of 64K between 64K and 1G";
	return NULL;
}

int main(int argc, char **argv)
{
	struct mds_cfg cfg;
	char err[512], host[256];
	char *pos[4];
	int npos = 0, help = 0, sync_mode = 0, level = 0, sig, rc, status = 1;
	uint16_t port;
	const char *msg;
	sigset_t set;
	mds_ns *ns = NULL;
	mds_destroyer *d = NULL;
	mds_server *srv = NULL;

	memset(&cfg, 0, sizeof(cfg));
	rc = pfs_cfg_parse_argv(mds_opts, &cfg, "mds", argc, argv, pos, 4, &npos, &help, err,
				sizeof(err));
	if (help) {
		printf("usage: pfs-mds [--config FILE] [--key=value ...]\noptions (section [mds]):\n");
		pfs_cfg_usage(mds_opts, stdout);
		return 0;
	}
	if (rc) {
		fprintf(stderr, "pfs-mds: %s\n", err);
		return 2;
	}
	if (npos) {
		fprintf(stderr, "pfs-mds: unexpected argument '%s'\n", pos[0]);
		return 2;
	}
	msg = validate(&cfg, &sync_mode, &level);
	if (!msg && pfs_addr_parse(cfg.listen, host, sizeof(host), &port))
		msg = "listen must be host:port";
	if (msg) {
		fprintf(stderr, "pfs-mds: %s\n", msg);
		return 2;
	}
	pfs_log_init("pfs-mds", level);

	/* Signals are taken synchronously by sigwait; threads inherit the mask. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);

	mds_ns_opts no = {
		.path = cfg.db,
		.sync_mode = sync_mode,
		.sync_interval_ms = (unsigned)cfg.sync_interval_ms,
		.default_stripe_size = (uint32_t)cfg.default_stripe_size,
		.default_stripe_count = (uint32_t)cfg.default_stripe_count,
		.heartbeat_timeout_ms = (unsigned)cfg.heartbeat_timeout * 1000u,
	};
	rc = mds_ns_open(&no, &ns);
	if (rc) {
		fprintf(stderr, "pfs-mds: cannot open db %s: %s\n", cfg.db, pfs_strerror(rc));
		status = 2;
		goto out;
	}
	rc = mds_destroyer_start(ns, 1000, &d);
	if (rc) {
		pfs_log(PFS_LOG_ERR, "destroyer: %s", pfs_strerror(rc));
		goto out;
	}
	mds_server_opts so = { .host = host, .port = port,
			       .sync_on_setsize = sync_mode == MDS_SYNC_PERIODIC };
	rc = mds_server_start(ns, &so, &srv);
	if (rc) {
		fprintf(stderr, "pfs-mds: cannot listen on %s: %s\n", cfg.listen, pfs_strerror(rc));
		status = 2;
		goto out;
	}
	if (cfg.pid_file[0]) {
		char text[32];
		snprintf(text, sizeof(text), "%ld\n", (long)getpid());
		rc = pfs_file_write_atomic(cfg.pid_file, text);
		if (rc) {
			pfs_log(PFS_LOG_ERR, "pid_file %s: %s", cfg.pid_file, pfs_strerror(rc));
			goto out;
		}
	}
	if (cfg.port_file[0]) {
		char text[32];
		snprintf(text, sizeof(text), "port=%u\n", mds_server_port(srv));
		rc = pfs_file_write_atomic(cfg.port_file, text);
		if (rc) {
			pfs_log(PFS_LOG_ERR, "port_file %s: %s", cfg.port_file, pfs_strerror(rc));
			goto out;
		}
	}
	pfs_log(PFS_LOG_NOTICE, "serving %s on %s port %u (db_sync=%s)", cfg.db, host,
		mds_server_port(srv), cfg.db_sync);
	do {
		sig = 0;
		rc = sigwait(&set, &sig);
	} while (rc == EINTR);
	pfs_log(PFS_LOG_NOTICE, "signal %d: shutting down", sig);
	status = 0;
out:
	mds_server_stop(srv);
	mds_destroyer_stop(d);
	mds_ns_close(ns);
	if (cfg.pid_file[0] && status == 0)
		unlink(cfg.pid_file);
	return status;
}
