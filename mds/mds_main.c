/* mds_main.c — pfs-mds: the metadata server daemon.
 *
 *   pfs-mds [--config FILE] [--key=value ...]     (section [mds] of FILE)
 *   pfs-mds --help | --version
 *
 * Opens the namespace (mds/ns.c) and the job registry (mds/jobs.c), creates
 * the QoS controller (mds/qosctl.c, talking to OSSes through mds/qosnet.c),
 * starts the object destroyer (mds/destroy.c), the request server
 * (mds/server.c), the QoS loop and, if metrics_port is set, the Prometheus
 * endpoint (mds/exporter.c); writes the port file once it listens, and runs
 * in the foreground until SIGTERM/SIGINT, then stops everything in reverse
 * and closes the LMDB environment.  SIGHUP reopens a log=file:PATH
 * (logrotate).
 *
 * Durations end in their unit (_ms, _s); the keys they replaced
 * (heartbeat_timeout in seconds, qos_interval, job_idle) are deprecated
 * aliases that still work, with a warning.
 *
 * QoS configuration: qos_policy, qos_interval_s, qos_quorum and qos_param
 * ("B_thres=0.3,tau=0.8"; also interval, quorum, adaptbf_period) give the
 * initial policy.  Once an admin has set a policy with
 * PFS_OP_MDS_QOS_POLICY_SET (pfsadmin), that stored choice wins over this
 * configuration at every start; the configuration is still checked.
 * Authentication (common/auth.h): with auth = on (the default) the MDS
 * loads auth_key (a server key, default /etc/pfs/mds.key, 0600), passes it
 * to its frame server (every peer must prove a role), to its RPC pools to
 * the OSS control ports (destroyer, QoS transport) and derives the object
 * capability key from it; integrity = header|full is the frame MAC
 * coverage it imposes.  A key file that is missing, readable by others or
 * malformed stops the start with a message naming the file.
 * Bad configuration: a message on stderr and exit status 2. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <sodium.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/auth.h"
#include "common/config.h"
#include "common/file.h"
#include "common/layout.h"
#include "common/log.h"
#include "common/net.h"
#include "common/optab.h"
#include "common/proto.h"
#include "common/server.h"
#include "common/version.h"
#include "mds/destroy.h"
#include "mds/exporter.h"
#include "mds/jobs.h"
#include "mds/ns.h"
#include "mds/qosctl.h"
#include "mds/qosnet.h"
#include "mds/mdqos.h"
#include "mds/server.h"

struct mds_cfg {
	char listen[256];
	char db[PATH_MAX];
	char port_file[PATH_MAX];
	char pid_file[PATH_MAX];
	char log_level[16];
	char log[PATH_MAX + 8];
	char db_sync[16];
	int sync_interval_ms;
	uint64_t default_stripe_size;
	int default_stripe_count;
	int heartbeat_timeout_ms;
	char qos_policy[32];
	double qos_interval_s;
	int qos_quorum;
	char qos_param[512];
	int qos_timeout_ms;
	int job_idle_s;
	char mdqos_algo[32];
	int mdqos_interval_ms;
	char mdqos_max_r[512];
	char mdqos_param[256];
	char mdqos_map[1024];
	char metrics_host[256];
	int metrics_port;
	int root_squash;
	int root_squash_uid, root_squash_gid;
	char nosquash_roles[64];
	int capa_lifetime_s;
	int max_conns, conn_max_inflight, conn_idle_ms, conn_send_timeout_ms, conn_frame_ms;
	int handshake_ms;
	uint64_t conn_max_queued_bytes;
	int lock_lease_s;
	int md_lease_s;
	int deleg, deleg_ms, deleg_recall_ms;
	char auth_key[PATH_MAX];
	int auth;
	char integrity[16];
};

#define OPT(k, t, f, d, h, lo, hi) PFS_CFG_OPT(struct mds_cfg, k, t, f, d, h, lo, hi)
#define STR(k, f, d, h) OPT(k, PFS_CFG_STR, f, d, h, 0, 0)
static const pfs_cfg_opt mds_opts[] = {
	STR("listen", listen, "0.0.0.0:7700", "address:port to serve (port 0 = any free)"),
	STR("db", db, "", "LMDB directory of the namespace (required)"),
	STR("port_file", port_file, "", "write \"port=N\" here once listening"),
	STR("pid_file", pid_file, "", "write the process id here"),
	STR("log_level", log_level, "notice", "err|warning|notice|info|debug"),
	STR("log", log, "stderr", "stderr | file:PATH (reopened on SIGHUP) | syslog"),
	STR("db_sync", db_sync, "periodic",
	    "full (alias always: fsync every commit) | periodic | none (mds/README.md)"),
	OPT("sync_interval_ms", PFS_CFG_INT, sync_interval_ms, "1000",
	    "periodic mode: sync interval (1..3600000)", 1, 3600000),
	OPT("default_stripe_size", PFS_CFG_SIZE, default_stripe_size, "1M",
	    "stripe size of new files", 64 << 10, 1 << 30),
	OPT("default_stripe_count", PFS_CFG_INT, default_stripe_count, "0",
	    "stripe count of new files (0 = min(4, OSTs up))", 0, PFS_MAX_STRIPES),
	OPT("heartbeat_timeout_ms", PFS_CFG_INT, heartbeat_timeout_ms, "10000",
	    "time without heartbeat before an OST is down (100..86400000)", 100, 86400000),
	STR("qos_policy", qos_policy, "none",
	    "none|static|pofs|bsip|mbw|gift|tsa|esa|tmf|rnd|adaptbf (a policy set with "
	    "pfsadmin wins once set)"),
	OPT("qos_interval_s", PFS_CFG_DOUBLE, qos_interval_s, "10",
	    "seconds between QoS decisions (1..3600)", MDS_QOS_INTERVAL_MIN, MDS_QOS_INTERVAL_MAX),
	OPT("qos_quorum", PFS_CFG_INT, qos_quorum, "80", "percent of OSSes that must answer",
	    1, 100),
	STR("qos_param", qos_param, "", "policy parameters, paper symbols: e.g. B_thres=0.3,tau=0.8"),
	OPT("qos_timeout_ms", PFS_CFG_INT, qos_timeout_ms, "1000",
	    "timeout of the QoS statistics and allocation RPCs to OSSes (1..60000)", 1, 60000),
	OPT("job_idle_s", PFS_CFG_INT, job_idle_s, "86400",
	    "seconds before an unregistered job id not seen is forgotten (>= 60)", 60, INT_MAX),
	STR("mdqos_algo", mdqos_algo, "none",
	    "PADLL metadata QoS: none|uniform|priority|proportional|psfa (pfsadmin qos md wins)"),
	OPT("mdqos_interval_ms", PFS_CFG_INT, mdqos_interval_ms, "1000",
	    "PADLL control period (100..60000)", 100, 60000),
	STR("mdqos_max_r", mdqos_max_r, "", "PADLL Max_R per class, requests/s: create=400,getattr=800"),
	STR("mdqos_param", mdqos_param, "", "PADLL parameters: epsilon=0.5,jobs=4,weight_sum=10"),
	STR("mdqos_map", mdqos_map, "", "opcode -> PADLL class overrides: MDS_ACCESS=getattr,..."),
	STR("metrics_host", metrics_host, "0.0.0.0", "Prometheus endpoint address"),
	OPT("metrics_port", PFS_CFG_INT, metrics_port, "0", "Prometheus endpoint port (0 = off)",
	    0, 65535),
	OPT("root_squash", PFS_CFG_BOOL, root_squash, "on",
	    "map uid/gid 0 of client keys to root_squash_uid/gid", 0, 1),
	OPT("root_squash_uid", PFS_CFG_INT, root_squash_uid, "65534", "uid root is mapped to",
	    1, INT_MAX),
	OPT("root_squash_gid", PFS_CFG_INT, root_squash_gid, "65534", "gid root is mapped to",
	    1, INT_MAX),
	STR("nosquash_roles", nosquash_roles, "admin", "key roles never squashed (admin,client|none)"),
	OPT("capa_lifetime_s", PFS_CFG_INT, capa_lifetime_s, "600",
	    "lifetime of object capabilities in seconds (5..86400)", 5, 86400),
	OPT("max_conns", PFS_CFG_INT, max_conns, "1024",
	    "connections; one more is refused (-EBUSY)", 1, 1000000),
	OPT("conn_max_inflight", PFS_CFG_INT, conn_max_inflight, "64",
	    "requests of one connection in handlers; above, it is not read", 1, 65536),
	OPT("conn_max_queued_bytes", PFS_CFG_SIZE, conn_max_queued_bytes, "8M",
	    "unsent reply bytes of one connection; above, it is not read", 64 << 10, 1ull << 40),
	OPT("conn_idle_ms", PFS_CFG_INT, conn_idle_ms, "600000",
	    "close a connection idle this long (0 = never)", 0, 86400000),
	OPT("conn_send_timeout_ms", PFS_CFG_INT, conn_send_timeout_ms, "30000",
	    "close a connection whose replies make no progress this long", 100, 3600000),
	OPT("conn_frame_ms", PFS_CFG_INT, conn_frame_ms, "30000",
	    "close a connection whose frame does not complete this long after its first byte",
	    100, 3600000),
	OPT("handshake_ms", PFS_CFG_INT, handshake_ms, "5000",
	    "authentication handshake time limit of a new connection", 100, 600000),
	OPT("lock_lease_s", PFS_CFG_INT, lock_lease_s, "30",
	    "seconds without a request after which a client's fcntl/flock locks are released",
	    1, 3600),
	OPT("md_lease_s", PFS_CFG_INT, md_lease_s, "10",
	    "metadata leases: mounts with a notify channel may cache names and attributes "
	    "this long, revoked when another mount changes them (0 = off)", 0, 30),
	OPT("deleg", PFS_CFG_BOOL, deleg, "on",
	    "directory delegations: a mount may answer unlinks in a directory it holds and "
	    "send them later (asynchronous unlink; off with md_lease_s = 0)", 0, 1),
	OPT("deleg_ms", PFS_CFG_INT, deleg_ms, "0",
	    "a delegation lasts this long past its holder's last request on the directory "
	    "(0 = md_lease_s)", 0, 60000),
	OPT("deleg_recall_ms", PFS_CFG_INT, deleg_recall_ms, "5000",
	    "how long another client's request waits for a recalled delegation before it is "
	    "taken back", 100, 600000),
	STR("auth_key", auth_key, "/etc/pfs/mds.key",
	    "key file (role mds, 0600; pfsadmin key gen --role mds FILE)"),
	OPT("auth", PFS_CFG_BOOL, auth, "on",
	    "authenticate every connection and MAC every frame (off: for measurements only)",
	    0, 1),
	STR("integrity", integrity, "header",
	    "frame MAC coverage the cluster uses: header (bulk data uncovered) | full"),
	PFS_CFG_ALIAS("heartbeat_timeout", "heartbeat_timeout_ms", 1000, NULL, "in seconds"),
	PFS_CFG_ALIAS("qos_interval", "qos_interval_s", 0, NULL, "in seconds"),
	PFS_CFG_ALIAS("job_idle", "job_idle_s", 0, NULL, "in seconds"),
	PFS_CFG_END
};

/* What the table's ranges do not say.  Returns an error message or NULL
 * (err may hold it). */
static const char *validate(const struct mds_cfg *c, int *sync_mode, int *level, char *err,
			    size_t errlen)
{
	if (!c->db[0])
		return "db is required (--db=DIR)";
	if (strcmp(c->db_sync, "full") == 0 || strcmp(c->db_sync, "always") == 0)
		*sync_mode = MDS_SYNC_FULL;
	else if (strcmp(c->db_sync, "periodic") == 0)
		*sync_mode = MDS_SYNC_PERIODIC;
	else if (strcmp(c->db_sync, "none") == 0)
		*sync_mode = MDS_SYNC_NONE;
	else
		return "db_sync must be full, always, periodic or none";
	*level = pfs_log_level_parse(c->log_level);
	if (*level < 0)
		return "bad log_level";
	if (pfs_log_dest_check(c->log, err, errlen))
		return err;
	if (pfs_integrity_parse(c->integrity) < 0)
		return "integrity must be header or full";
	if (c->default_stripe_size > UINT32_MAX ||
	    pfs_layout_check((uint32_t)c->default_stripe_size, 1))
		return "default_stripe_size must be a multiple of 64K between 64K and 1G";
	return NULL;
}

int main(int argc, char **argv)
{
	struct mds_cfg cfg;
	char err[PATH_MAX + 512], host[256];
	char *pos[4];
	int npos = 0, help = 0, sync_mode = 0, level = 0, sig, rc, status = 1;
	uint16_t port;
	const char *msg;
	sigset_t set;
	mds_ns *ns = NULL;
	mds_destroyer *d = NULL;
	mds_server *srv = NULL;
	mds_jobs *jobs = NULL;
	mds_qosnet *qnet = NULL;
	mds_qosctl *qos = NULL;
	mds_mdqos *mdq = NULL;
	mds_exporter *exp = NULL;
	pfs_auth_key key;
	const pfs_auth_key *authp = NULL;
	uint8_t capa_key[PFS_AUTH_KEY_LEN];

	memset(&cfg, 0, sizeof(cfg));
	/* Before parsing: deprecated keys are warned about as they are read. */
	pfs_log_init("pfs-mds", PFS_LOG_NOTICE);
	rc = pfs_cfg_parse_argv(mds_opts, &cfg, "mds", argc, argv, pos, 4, &npos, &help, err,
				sizeof(err));
	if (help == PFS_CFG_VERSION) {
		printf("pfs-mds (pfs) %s\n", PFS_VERSION);
		return 0;
	}
	if (help) {
		printf("usage: pfs-mds [--config FILE] [--key=value ...]\n"
		       "       pfs-mds --help | --version\n"
		       "SIGTERM/SIGINT stop it, SIGHUP reopens a log file.\n"
		       "options (section [mds]):\n");
		pfs_cfg_usage(mds_opts, "--", stdout);
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
	msg = validate(&cfg, &sync_mode, &level, err, sizeof(err));
	if (!msg && pfs_addr_parse(cfg.listen, host, sizeof(host), &port))
		msg = "listen must be host:port";
	if (msg) {
		fprintf(stderr, "pfs-mds: %s\n", msg);
		return 2;
	}
	pfs_log_set_level(level);
	if (pfs_log_open(cfg.log, err, sizeof(err))) {
		fprintf(stderr, "pfs-mds: %s\n", err);
		return 2;
	}

	/* Signals are taken synchronously by sigwait; threads inherit the mask. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);

	mds_ns_opts no = {
		.path = cfg.db,
		.sync_mode = sync_mode,
		.sync_interval_ms = (unsigned)cfg.sync_interval_ms,
		.default_stripe_size = (uint32_t)cfg.default_stripe_size,
		.default_stripe_count = (uint32_t)cfg.default_stripe_count,
		.heartbeat_timeout_ms = (unsigned)cfg.heartbeat_timeout_ms,
	};
	rc = mds_ns_open(&no, &ns);
	if (rc) {
		fprintf(stderr, "pfs-mds: cannot open db %s: %s\n", cfg.db, pfs_strerror(rc));
		status = 2;
		goto out;
	}
	mds_jobs_opts jo = { .auto_idle_ns = (int64_t)cfg.job_idle_s * 1000000000 };
	rc = mds_jobs_open(ns, &jo, &jobs);
	if (rc) {
		fprintf(stderr, "pfs-mds: cannot load the job registry: %s\n", pfs_strerror(rc));
		status = 2;
		goto out;
	}
	if (cfg.auth) {
		rc = pfs_auth_init();
		if (rc == 0)
			rc = pfs_auth_key_load_msg(cfg.auth_key, &key, err, sizeof(err));
		if (rc == 0 && key.role != PFS_ROLE_MDS && key.role != PFS_ROLE_OSS) {
			snprintf(err, sizeof(err), "key file %s: role %s, not a server key (mds)",
				 cfg.auth_key, pfs_role_name(key.role));
			rc = -EPERM;
		}
		if (rc == 0)
			rc = pfs_auth_cap_key(&key, capa_key);
		if (rc) {
			fprintf(stderr, "pfs-mds: %s\n", rc == -EIO ? "libsodium init failed" : err);
			status = 2;
			goto out;
		}
		key.integrity = pfs_integrity_parse(cfg.integrity);
		authp = &key;
	} else {
		pfs_log(PFS_LOG_WARNING, "auth = off: no authentication, no frame integrity "
			"(for measurements only)");
	}
	mds_qosnet_opts qno = { .timeout_ms = cfg.qos_timeout_ms, .auth = authp };
	rc = mds_qosnet_create(&qno, &qnet);
	if (rc)
		goto out;
	mds_qosctl_opts qo = {
		.policy = cfg.qos_policy, .params = cfg.qos_param, .interval = cfg.qos_interval_s,
		.quorum = (unsigned)cfg.qos_quorum, .ops = mds_qosnet_ops(qnet),
	};
	rc = mds_qosctl_create(ns, jobs, &qo, &qos, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "pfs-mds: %s\n", err);
		status = 2;
		goto out;
	}
	mds_mdqos_opts mqo = { .algo = cfg.mdqos_algo,
			       .interval_ms = (unsigned)cfg.mdqos_interval_ms,
			       .max_r = cfg.mdqos_max_r, .params = cfg.mdqos_param,
			       .map = cfg.mdqos_map };
	rc = mds_mdqos_create(ns, jobs, &mqo, &mdq, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "pfs-mds: %s\n", err);
		status = 2;
		goto out;
	}
	rc = mds_destroyer_start_auth(ns, 1000, authp, &d);
	if (rc) {
		pfs_log(PFS_LOG_ERR, "destroyer: %s", pfs_strerror(rc));
		goto out;
	}
	mds_server_opts so = { .host = host, .port = port,
			       .sync_on_setsize = sync_mode != MDS_SYNC_FULL,
			       .jobs = jobs, .qos = qos, .mdqos = mdq, .root_squash = cfg.root_squash,
			       .root_squash_uid = (uint32_t)cfg.root_squash_uid,
			       .root_squash_gid = (uint32_t)cfg.root_squash_gid,
			       .capa_lifetime_s = (unsigned)cfg.capa_lifetime_s,
			       .lock_lease_s = (unsigned)cfg.lock_lease_s,
			       .md_lease_s = (unsigned)cfg.md_lease_s,
			       .deleg_off = !cfg.deleg,
			       .deleg_ms = (unsigned)cfg.deleg_ms,
			       .deleg_recall_ms = (unsigned)cfg.deleg_recall_ms,
			       .lfsck_after_start = 1,
			       .auth = authp, .capa_key = authp ? capa_key : NULL };
	if (pfs_optab_roles_parse(cfg.nosquash_roles, &so.nosquash_roles)) {
		fprintf(stderr, "pfs-mds: nosquash_roles: unknown role in \"%s\"\n",
			cfg.nosquash_roles);
		status = 2;
		goto out;
	}
	pfs_server_set_defaults(&(pfs_server_opts){
		.max_conns = (unsigned)cfg.max_conns, .max_inflight = (unsigned)cfg.conn_max_inflight,
		.max_queued_bytes = cfg.conn_max_queued_bytes, .handshake_ms = cfg.handshake_ms,
		.frame_ms = cfg.conn_frame_ms, .send_timeout_ms = cfg.conn_send_timeout_ms,
		.idle_ms = cfg.conn_idle_ms ? cfg.conn_idle_ms : -1 });
	rc = mds_server_start(ns, &so, &srv);
	if (rc) {
		fprintf(stderr, "pfs-mds: cannot listen on %s: %s\n", cfg.listen, pfs_strerror(rc));
		status = 2;
		goto out;
	}
	rc = mds_mdqos_start(mdq);
	if (rc) {
		pfs_log(PFS_LOG_ERR, "mdqos: %s", pfs_strerror(rc));
		goto out;
	}
	rc = mds_qosctl_start(qos);
	if (rc) {
		pfs_log(PFS_LOG_ERR, "qos loop: %s", pfs_strerror(rc));
		goto out;
	}
	if (cfg.metrics_port) {
		rc = mds_exporter_start(cfg.metrics_host, (uint16_t)cfg.metrics_port, srv, jobs, qos,
					&exp, err, sizeof(err));
		mds_exporter_set_mdqos(exp, rc ? NULL : mdq);
		if (rc) {
			fprintf(stderr, "pfs-mds: metrics on %s:%d: %s\n", cfg.metrics_host,
				cfg.metrics_port, err);
			status = 2;
			goto out;
		}
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
	pfs_log(PFS_LOG_NOTICE, "pfs %s serving %s on %s port %u (db_sync=%s)", PFS_VERSION,
		cfg.db, host, mds_server_port(srv), cfg.db_sync);
	for (;;) {
		sig = 0;
		rc = sigwait(&set, &sig);
		if (rc == EINTR)
			continue;
		if (rc == 0 && sig == SIGHUP) {
			if (pfs_log_reopen() > 0)
				pfs_log(PFS_LOG_NOTICE, "SIGHUP: log file %s reopened", cfg.log + 5);
			continue;
		}
		break;
	}
	pfs_log(PFS_LOG_NOTICE, "signal %d: shutting down", sig);
	status = 0;
out:
	mds_exporter_stop(exp);
	mds_mdqos_stop(mdq);       /* its held requests run server handlers */
	mds_server_stop(srv);
	mds_mdqos_destroy(mdq);
	mds_qosctl_destroy(qos);
	mds_qosnet_destroy(qnet);
	mds_destroyer_stop(d);
	mds_jobs_close(jobs);
	mds_ns_close(ns);
	sodium_memzero(&key, sizeof(key));
	sodium_memzero(capa_key, sizeof(capa_key));
	if (cfg.pid_file[0] && status == 0)
		unlink(cfg.pid_file);
	pfs_log_close();
	return status;
}
