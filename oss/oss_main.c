/* oss_main.c — pfs-oss, the object storage server daemon.
 *
 *   pfs-oss [--config FILE] [--key=value ...]      (section [oss])
 *   pfs-oss --help | --version
 *
 * Opens (formatting on first use) each OST directory, serves the data and
 * control ports (server.h) with one request scheduler and I/O thread pool
 * per OST, runs the QoS engine (qos.h: MDS allocations, AdapTBF, RCC
 * credits, queue caps, emulated OST speed, optional blkio cgroups), serves
 * Prometheus metrics if asked, registers with the MDS and heartbeats
 * (mds_link.h).  Runs in the foreground; SIGTERM/SIGINT stop it cleanly,
 * SIGHUP reopens a log=file:PATH (logrotate).
 *
 * The address given to the MDS (and by it to clients) is advertise_host;
 * when it is not set, a specific listen_host is the one clients can reach,
 * else the local address of a TCP connection to the MDS (what the MDS sees
 * this host as), else — MDS down at start — the source address the kernel
 * would route to the MDS from (a UDP connect(), no packet sent).  The
 * choice is logged.
 * Exit status: 0 after a clean stop, 2 for a bad configuration, 1 when
 * something fails at start (an OST that cannot be opened, a port in use). */
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <signal.h>
#include <sodium.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/auth.h"
#include "common/config.h"
#include "common/file.h"
#include "common/log.h"
#include "common/metrics.h"
#include "common/net.h"
#include "common/server.h"
#include "common/version.h"
#include "oss/blkio.h"
#include "oss/mds_link.h"
#include "oss/nrs_tbf.h"
#include "oss/server.h"
#include "oss/store.h"

#define MAX_OSTS 64

typedef struct oss_cfg {
	char name[64];
	char osts[8192];
	char mds[300];
	char listen_host[256];
	char advertise_host[256];
	int data_port, ctl_port;
	char port_file[PATH_MAX];
	char pid_file[PATH_MAX];
	int io_threads;
	int heartbeat_ms;
	int o_direct;
	int sync_dirs;
	uint64_t write_behind;
	int inline_reads;
	char log_level[16];
	char log[PATH_MAX + 8];
	int fd_cache;
	char nrs[16];
	char enforce[16];
	int job_max_rpcs, oss_max_rpcs;
	uint64_t job_max_bytes, oss_max_bytes;
	char ost_bandwidth[1024];
	char ost_iops[1024];
	int rcc_lmax_ms, rcc_min, rcc_max;
	int adaptbf_period_ms;
	int job_idle_s;
	char metrics_host[256];
	int metrics_port;
	int max_conns, conn_max_inflight, conn_idle_ms, conn_send_timeout_ms, conn_frame_ms;
	int handshake_ms;
	uint64_t conn_max_queued_bytes;
	char auth_key[PATH_MAX];
	int auth;
	char integrity[16];
} oss_cfg;

/* Rows keyed by their field's name: S(field, default, help) for strings,
 * N(type, field, default, help, min, max) for numbers and booleans. */
#define S(f, d, h) PFS_CFG_OPT(oss_cfg, #f, PFS_CFG_STR, f, d, h, 0, 0)
#define N(t, f, d, h, lo, hi) PFS_CFG_OPT(oss_cfg, #f, t, f, d, h, lo, hi)
static const pfs_cfg_opt cfg_tab[] = {
	S(name, "", "OSS name (default: host name)"),
	S(osts, "", "comma-separated OST directories (created if missing)"),
	S(mds, "", "MDS address host:port (required)"),
	S(listen_host, "0.0.0.0", "bind address"),
	S(advertise_host, "",
	  "address given to the MDS and clients (default: listen_host if specific, else the "
	  "local address of a connection to the MDS)"),
	N(PFS_CFG_INT, data_port, "0", "data port (0 = any free)", 0, 65535),
	N(PFS_CFG_INT, ctl_port, "0", "control port (0 = any free)", 0, 65535),
	S(port_file, "", "write data=N/ctl=N here once listening"),
	S(pid_file, "", "write the process id here"),
	N(PFS_CFG_INT, io_threads, "8", "I/O worker threads per OST (1..1024)",
	  1, 1024),
	N(PFS_CFG_INT, heartbeat_ms, "1000",
	  "MDS heartbeat interval (10..3600000)", 10, 3600000),
	N(PFS_CFG_BOOL, o_direct, "0", "O_DIRECT for aligned I/O", 0, 0),
	N(PFS_CFG_BOOL, sync_dirs, "1",
	  "fsync an object's directory on create and destroy (off: a power loss may lose them)",
	  0, 0),
	N(PFS_CFG_SIZE, write_behind, "2M",
	  "start writing an object's data to disk once this much was written to it since the "
	  "last start (0 = when the kernel decides; a client's fsync then waits for all of it)",
	  0, 1ull << 40),
	N(PFS_CFG_BOOL, inline_reads, "1",
	  "serve a READ of at most 64 KiB on the connection loop when its OST has nothing "
	  "queued (no I/O thread hand-off; off for 100 ms after a read slower than 2 ms)", 0, 0),
	S(log_level, "notice", "err, warning, notice, info, debug"),
	S(log, "stderr", "stderr | file:PATH (reopened on SIGHUP) | syslog"),
	N(PFS_CFG_INT, fd_cache, "1024", "open object files kept per OST",
	  1, 1000000),
	S(nrs, "tbf", "request scheduler per OST: tbf (FIFO until a rule exists) or fifo (no QoS rules)"),
	S(enforce, "tbf",
	  "how QoS rates are enforced: tbf (NRS rules), blkio (cgroup v1 throttles, O_DIRECT), both"),
	N(PFS_CFG_INT, job_max_rpcs, "256",
	  "requests one job may have queued on one OST; more are answered -EBUSY", 1, 1000000),
	N(PFS_CFG_SIZE, job_max_bytes, "256M",
	  "bytes one job may have queued on one OST (>= 1M)", PFS_MAX_IO, 1ull << 50),
	N(PFS_CFG_INT, oss_max_rpcs, "4096",
	  "requests queued on this OSS, all OSTs and jobs", 1, 10000000),
	N(PFS_CFG_SIZE, oss_max_bytes, "1G",
	  "bytes queued on this OSS, all OSTs and jobs (>= 1M)", PFS_MAX_IO, 1ull << 50),
	S(ost_bandwidth, "",
	  "emulated OST speed in MB/s (10^6 bytes): one value for every OST or a comma list per OST; "
	  "empty = not paced, capacity measured"),
	S(ost_iops, "",
	  "emulated OST read+write RPCs/s: one value or a comma list per OST; empty = not paced"),
	N(PFS_CFG_INT, rcc_lmax_ms, "100",
	  "RCC latency bound Lmax in ms (0 = no RPC credits in replies)", 0, 600000),
	N(PFS_CFG_INT, rcc_min, "1", "smallest RCC credit granted (RCCmin)",
	  1, 65535),
	N(PFS_CFG_INT, rcc_max, "32", "largest RCC credit granted (RCCmax)",
	  1, 65535),
	N(PFS_CFG_INT, adaptbf_period_ms, "100",
	  "AdapTBF observation period (the MDS may set another with the AdapTBF policy)", 1, 60000),
	N(PFS_CFG_INT, job_idle_s, "60",
	  "per-job statistics of a job idle this long are dropped", 1, 86400),
	S(metrics_host, "", "Prometheus metrics address (default: listen_host)"),
	N(PFS_CFG_INT, metrics_port, "0",
	  "Prometheus metrics port, GET /metrics (0 = off)", 0, 65535),
	N(PFS_CFG_INT, max_conns, "1024",
	  "connections per port; one more is refused (-EBUSY)", 1, 1000000),
	N(PFS_CFG_INT, conn_max_inflight, "64",
	  "requests of one connection in handlers; above, it is not read", 1, 65536),
	N(PFS_CFG_SIZE, conn_max_queued_bytes, "8M",
	  "unsent reply bytes of one connection; above, it is not read", 64 << 10, 1ull << 40),
	N(PFS_CFG_INT, conn_idle_ms, "600000",
	  "close a connection idle this long (0 = never)", 0, 86400000),
	N(PFS_CFG_INT, conn_send_timeout_ms, "30000",
	  "close a connection whose replies make no progress this long", 100, 3600000),
	N(PFS_CFG_INT, conn_frame_ms, "30000",
	  "close a connection whose frame does not complete this long after its first byte",
	  100, 3600000),
	N(PFS_CFG_INT, handshake_ms, "5000",
	  "authentication handshake time limit of a new connection", 100, 600000),
	S(auth_key, "/etc/pfs/oss.key",
	  "key file (role oss, 0600): for both ports and as a client of the MDS"),
	N(PFS_CFG_BOOL, auth, "on",
	  "authenticate every connection and MAC every frame (off: for measurements only)", 0, 1),
	S(integrity, "header", "frame MAC coverage: header (bulk data uncovered) | full"),
	PFS_CFG_END,
};

static void usage(FILE *out)
{
	fprintf(out, "usage: pfs-oss [--config FILE] [--key=value ...]\n"
		     "       pfs-oss --help | --version\n"
		     "SIGTERM/SIGINT stop it, SIGHUP reopens a log file.\n"
		     "options (also keys of section [oss] in FILE):\n");
	pfs_cfg_usage(cfg_tab, "--", out);
}

/* Check what the table's ranges do not: required keys, names, pairs of
 * keys; fills err. */
static int cfg_check(oss_cfg *c, char *mds_host, size_t hostsz, uint16_t *mds_port,
		     char *err, size_t errlen)
{
	if (!c->mds[0]) {
		snprintf(err, errlen, "mds=host:port is required");
		return -EINVAL;
	}
	if (pfs_integrity_parse(c->integrity) < 0) {
		snprintf(err, errlen, "integrity must be header or full");
		return -EINVAL;
	}
	if (pfs_addr_parse(c->mds, mds_host, hostsz, mds_port) || !*mds_port) {
		snprintf(err, errlen, "mds: bad address '%s' (want host:port)", c->mds);
		return -EINVAL;
	}
	if (!c->osts[0]) {
		snprintf(err, errlen, "osts=DIR[,DIR...] is required");
		return -EINVAL;
	}
	if (c->data_port && c->data_port == c->ctl_port) {
		snprintf(err, errlen, "data_port and ctl_port must differ");
		return -EINVAL;
	}
	if (strcmp(c->nrs, "fifo") && strcmp(c->nrs, "tbf")) {
		snprintf(err, errlen, "nrs: unknown scheduler '%s' (fifo, tbf)", c->nrs);
		return -EINVAL;
	}
	if (strcmp(c->enforce, "tbf") && strcmp(c->enforce, "blkio") && strcmp(c->enforce, "both")) {
		snprintf(err, errlen, "enforce: unknown mode '%s' (tbf, blkio, both)", c->enforce);
		return -EINVAL;
	}
	if (strcmp(c->enforce, "blkio") && !strcmp(c->nrs, "fifo")) {
		snprintf(err, errlen, "enforce=%s needs nrs=tbf", c->enforce);
		return -EINVAL;
	}
	if (c->rcc_max < c->rcc_min) {
		snprintf(err, errlen, "rcc_min (%d) must not be above rcc_max (%d)", c->rcc_min,
			 c->rcc_max);
		return -EINVAL;
	}
	if (pfs_log_level_parse(c->log_level) < 0) {
		snprintf(err, errlen, "log_level: unknown level '%s'", c->log_level);
		return -EINVAL;
	}
	if (pfs_log_dest_check(c->log, err, errlen))
		return -EINVAL;
	/* The MDS keeps OSS names and hosts in 64-byte fields (pfs_ost_info);
	 * empty = found at start (choose_advertise). */
	if (strlen(c->advertise_host) >= 64) {
		snprintf(err, errlen, "advertise_host must be at most 63 characters");
		return -EINVAL;
	}
	if (!c->name[0] && gethostname(c->name, sizeof(c->name) - 1))
		snprintf(c->name, sizeof(c->name), "oss");
	return 0;
}

/* Split the osts list in place; 0 or -EINVAL. */
static int split_osts(char *list, char **dirs, size_t *n, char *err, size_t errlen)
{
	char *save = NULL;

	*n = 0;
	for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		while (*t == ' ')
			t++;
		if (!*t)
			continue;
		if (*n >= MAX_OSTS) {
			snprintf(err, errlen, "osts: at most %d OSTs per OSS", MAX_OSTS);
			return -EINVAL;
		}
		dirs[(*n)++] = t;
	}
	if (!*n) {
		snprintf(err, errlen, "osts: no directory given");
		return -EINVAL;
	}
	return 0;
}

/* A per-OST value list: "" (all 0), one value for every OST, or one per
 * OST; values are scaled by scale (MB/s -> bytes/s).  0 or -EINVAL. */
static int split_values(const char *key, const char *list, size_t n, double scale, double *out,
			char *err, size_t errlen)
{
	size_t k = 0;
	const char *p = list;

	for (size_t i = 0; i < n; i++)
		out[i] = 0;
	while (*p == ' ')
		p++;
	if (!*p)
		return 0;
	while (*p) {
		char *end;
		double v = strtod(p, &end);

		while (*end == ' ')
			end++;
		if (end == p || (*end && *end != ',') || !(v >= 0) || v > 1e12) {
			snprintf(err, errlen, "%s: bad value list '%s' (numbers >= 0, comma separated)",
				 key, list);
			return -EINVAL;
		}
		if (k >= n) {
			snprintf(err, errlen, "%s: %zu values for %zu OSTs", key, k + 1, n);
			return -EINVAL;
		}
		out[k++] = v * scale;
		p = *end ? end + 1 : end;
		while (*p == ' ')
			p++;
	}
	if (k == 1) {
		for (size_t i = 1; i < n; i++)
			out[i] = out[0];
	} else if (k != n) {
		snprintf(err, errlen, "%s: %zu values for %zu OSTs (give one or one per OST)", key,
			 k, n);
		return -EINVAL;
	}
	return 0;
}

/* The fd caches (fd_cache per OST, twice with O_DIRECT) plus connections
 * need more descriptors than the usual soft limit of 1024: raise it toward
 * the hard limit.  Running short is not fatal (the store closes idle
 * descriptors when open fails with EMFILE), so only warn. */
static void raise_fd_limit(uint64_t want)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return;
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
		rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ? want
										 : rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want)
		pfs_log(PFS_LOG_WARNING,
			"open file limit %llu is below the %llu the fd caches may use",
			(unsigned long long)rl.rlim_cur, (unsigned long long)want);
}

/* Open the n stores (O_DIRECT if o_direct); 0 or -errno (logged). */
static int open_stores(const oss_cfg *cfg, char **dirs, size_t n, int o_direct,
		       oss_store **stores, char *err, size_t errlen)
{
	for (size_t i = 0; i < n; i++) {
		oss_store_opts o = { .fd_cache = (unsigned)cfg->fd_cache, .o_direct = o_direct,
				     .write_behind = cfg->write_behind };
		int rc = oss_store_open(dirs[i], &o, &stores[i], err, errlen);

		if (rc) {
			pfs_log(PFS_LOG_ERR, "OST %s: %s", dirs[i], err);
			return rc;
		}
		oss_store_set_sync_dirs(stores[i], cfg->sync_dirs);
		pfs_log(PFS_LOG_INFO, "OST %s uuid %s", dirs[i], oss_store_uuid(stores[i]));
	}
	return 0;
}

static void close_stores(oss_store **stores, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		oss_store_close(stores[i]);
		stores[i] = NULL;
	}
}

/* blkio enforcement: open the cgroup hierarchy, or say why not and fall
 * back to TBF.  Returns the OSS_ENFORCE_* bits in force. */
static unsigned open_blkio(const char *mode, char **dirs, size_t n, oss_blkio **out)
{
	char err[256] = "";
	int rc;

	*out = NULL;
	if (!strcmp(mode, "tbf"))
		return OSS_ENFORCE_TBF;
	rc = oss_blkio_open((const char *const *)dirs, n, out, err, sizeof(err));
	if (rc) {
		pfs_log(PFS_LOG_WARNING, "enforce=%s: blkio unavailable (%s): enforcing with tbf",
			mode, err[0] ? err : pfs_strerror(rc));
		return OSS_ENFORCE_TBF;
	}
	pfs_log(PFS_LOG_NOTICE, "enforce=%s: blkio cgroup %s", mode, oss_blkio_kind(*out));
	return !strcmp(mode, "blkio") ? OSS_ENFORCE_BLKIO : OSS_ENFORCE_TBF | OSS_ENFORCE_BLKIO;
}

/* The numeric local address of a socket; 0 or -EINVAL. */
static int sock_local_host(int fd, char *out, size_t outlen)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &sl) ||
	    getnameinfo((struct sockaddr *)&ss, sl, out, outlen, NULL, 0, NI_NUMERICHOST))
		return -EINVAL;
	return 0;
}

/* The source address the kernel would use towards host:port: connect() on
 * a UDP socket only picks a route and an address, it sends nothing.
 * 0 or -errno. */
static int routed_local_host(const char *host, uint16_t port, char *out, size_t outlen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_DGRAM }, *res, *ai;
	char ps[8];
	int rc = -EHOSTUNREACH;

	snprintf(ps, sizeof(ps), "%u", port);
	if (getaddrinfo(host, ps, &hints, &res))
		return -EHOSTUNREACH;
	for (ai = res; ai; ai = ai->ai_next) {
		int fd = socket(ai->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);

		if (fd < 0)
			continue;
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			rc = sock_local_host(fd, out, outlen);
		else
			rc = -errno;
		close(fd);
		if (rc == 0)
			break;
	}
	freeaddrinfo(res);
	return rc;
}

/* advertise_host when the configuration leaves it empty (see the top of
 * the file): listen_host if it names one address, else the local end of a
 * TCP connection to the MDS, else the routed source address.  Fills
 * c->advertise_host and logs the choice; 0, or -errno with err filled. */
static int choose_advertise(oss_cfg *c, const char *mds_host, uint16_t mds_port, char *err,
			    size_t errlen)
{
	char host[64];
	const char *how;
	int fd, rc;

	if (c->advertise_host[0])
		return 0;
	if (c->listen_host[0] && strcmp(c->listen_host, "0.0.0.0") && strcmp(c->listen_host, "::") &&
	    strlen(c->listen_host) < sizeof(host)) {
		snprintf(host, sizeof(host), "%s", c->listen_host);
		how = "listen_host";
	} else if (pfs_net_connect(mds_host, mds_port, 3000, &fd) == 0) {
		rc = sock_local_host(fd, host, sizeof(host));
		close(fd);
		if (rc)
			goto routed;
		how = "the local address of a connection to the MDS";
	} else {
routed:
		rc = routed_local_host(mds_host, mds_port, host, sizeof(host));
		if (rc) {
			snprintf(err, errlen, "advertise_host: not set, and no route to the MDS %s "
				 "to find this host's address (%s): set advertise_host", c->mds,
				 pfs_strerror(rc));
			return rc;
		}
		how = "the address routed towards the MDS (the MDS did not answer)";
	}
	snprintf(c->advertise_host, sizeof(c->advertise_host), "%s", host);
	pfs_log(PFS_LOG_NOTICE, "advertise_host not set: advertising %s, %s %s", host, how,
		strcmp(how, "listen_host") ? c->mds : "");
	return 0;
}

int main(int argc, char **argv)
{
	static oss_cfg cfg; /* large: keep it off the stack */
	char err[PATH_MAX + 512] = "", mds_host[256], text[64];
	static pfs_auth_key key; /* borrowed by the servers and the MDS link */
	char *dirs[MAX_OSTS];
	oss_store *stores[MAX_OSTS] = { 0 };
	double bps[MAX_OSTS], iops[MAX_OSTS];
	size_t n = 0;
	uint16_t mds_port = 0;
	oss_server *srv = NULL;
	oss_mds_link *link = NULL;
	oss_blkio *blkio = NULL;
	pfs_metrics *metrics = NULL;
	oss_server_opts so = { 0 };
	oss_mds_link_opts lo = { 0 };
	sigset_t sigs;
	unsigned enforce;
	int help = 0, npos = 0, rc, status = 1, pid_written = 0, sig;
	char *pos[1];

	pfs_log_init("pfs-oss", PFS_LOG_NOTICE);
	rc = pfs_cfg_parse_argv(cfg_tab, &cfg, "oss", argc, argv, pos, 0, &npos, &help, err,
				sizeof(err));
	if (help == PFS_CFG_VERSION) {
		printf("pfs-oss (pfs) %s\n", PFS_VERSION);
		return 0;
	}
	if (help) {
		usage(stdout);
		return 0;
	}
	if (!rc)
		rc = cfg_check(&cfg, mds_host, sizeof(mds_host), &mds_port, err, sizeof(err));
	if (!rc)
		rc = split_osts(cfg.osts, dirs, &n, err, sizeof(err));
	if (!rc)
		rc = split_values("ost_bandwidth", cfg.ost_bandwidth, n, 1e6, bps, err,
				  sizeof(err));
	if (!rc)
		rc = split_values("ost_iops", cfg.ost_iops, n, 1, iops, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "pfs-oss: %s\n", err);
		usage(stderr);
		return 2;
	}
	pfs_log_set_level(pfs_log_level_parse(cfg.log_level));
	if (pfs_log_open(cfg.log, err, sizeof(err))) {
		fprintf(stderr, "pfs-oss: %s\n", err);
		return 2;
	}

	/* Signals are taken by sigwait in main; every thread started below
	 * inherits the blocked mask. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (cfg.auth) {
		rc = pfs_auth_init();
		if (rc == 0)
			rc = pfs_auth_key_load_msg(cfg.auth_key, &key, err, sizeof(err));
		if (rc == 0 && key.role != PFS_ROLE_OSS && key.role != PFS_ROLE_MDS) {
			snprintf(err, sizeof(err), "key file %s: role %s, not a server key (oss)",
				 cfg.auth_key, pfs_role_name(key.role));
			rc = -EPERM;
		}
		if (rc) {
			fprintf(stderr, "pfs-oss: %s\n", rc == -EIO ? "libsodium init failed" : err);
			return 2;
		}
		/* As a client of the MDS the OSS proves role oss. */
		key.role = PFS_ROLE_OSS;
		key.integrity = pfs_integrity_parse(cfg.integrity);
		so.auth = &key;
		lo.auth = &key;
	} else {
		pfs_log(PFS_LOG_WARNING, "auth = off: no authentication, no frame integrity "
			"(for measurements only)");
	}
	raise_fd_limit((uint64_t)cfg.fd_cache * n * 2 + 1024);
	/* The stores create the OST directories blkio needs to find the
	 * disks; blkio only throttles O_DIRECT I/O, so with blkio in force
	 * the stores are opened again with O_DIRECT. */
	rc = open_stores(&cfg, dirs, n, cfg.o_direct, stores, err, sizeof(err));
	if (rc)
		goto out;
	enforce = open_blkio(cfg.enforce, dirs, n, &blkio);
	if ((enforce & OSS_ENFORCE_BLKIO) && !cfg.o_direct) {
		close_stores(stores, n);
		rc = open_stores(&cfg, dirs, n, 1, stores, err, sizeof(err));
		if (rc)
			goto out;
	}
	so.host = cfg.listen_host;
	so.data_port = (uint16_t)cfg.data_port;
	so.ctl_port = (uint16_t)cfg.ctl_port;
	so.io_threads = (unsigned)cfg.io_threads;
	so.osts = stores;
	so.n_osts = n;
	so.sched = strcmp(cfg.nrs, "tbf") ? &oss_sched_fifo : &oss_sched_tbf;
	so.job_max_rpcs = (uint32_t)cfg.job_max_rpcs;
	so.job_max_bytes = cfg.job_max_bytes;
	so.oss_max_rpcs = (uint64_t)cfg.oss_max_rpcs;
	so.oss_max_bytes = cfg.oss_max_bytes;
	so.ost_bps = bps;
	so.ost_iops = iops;
	so.rcc_lmax = cfg.rcc_lmax_ms ? cfg.rcc_lmax_ms / 1000.0 : -1;
	so.rcc_min = cfg.rcc_min;
	so.rcc_max = cfg.rcc_max;
	so.enforce = enforce;
	so.blkio = blkio;
	so.no_inline_reads = !cfg.inline_reads;
	so.adaptbf_period = cfg.adaptbf_period_ms / 1000.0;
	so.job_idle_s = cfg.job_idle_s;
	pfs_server_set_defaults(&(pfs_server_opts){
		.max_conns = (unsigned)cfg.max_conns, .max_inflight = (unsigned)cfg.conn_max_inflight,
		.max_queued_bytes = cfg.conn_max_queued_bytes, .handshake_ms = cfg.handshake_ms,
		.frame_ms = cfg.conn_frame_ms, .send_timeout_ms = cfg.conn_send_timeout_ms,
		.idle_ms = cfg.conn_idle_ms ? cfg.conn_idle_ms : -1 });
	rc = oss_server_start(&so, &srv, err, sizeof(err));
	if (rc) {
		pfs_log(PFS_LOG_ERR, "%s", err);
		goto out;
	}
	if (cfg.metrics_port) {
		rc = pfs_metrics_start(cfg.metrics_host[0] ? cfg.metrics_host : cfg.listen_host,
				       (uint16_t)cfg.metrics_port, oss_qos_metrics,
				       oss_server_qos(srv), &metrics, err, sizeof(err));
		if (rc) {
			pfs_log(PFS_LOG_ERR, "metrics: %s", err);
			goto out;
		}
	}
	if (cfg.pid_file[0]) {
		snprintf(text, sizeof(text), "%ld\n", (long)getpid());
		rc = pfs_file_write_atomic(cfg.pid_file, text);
		if (rc) {
			pfs_log(PFS_LOG_ERR, "pid_file %s: %s", cfg.pid_file, pfs_strerror(rc));
			goto out;
		}
		pid_written = 1;
	}
	if (cfg.port_file[0]) {
		snprintf(text, sizeof(text), "data=%u\nctl=%u\n", oss_server_data_port(srv),
			 oss_server_ctl_port(srv));
		rc = pfs_file_write_atomic(cfg.port_file, text);
		if (rc) {
			pfs_log(PFS_LOG_ERR, "port_file %s: %s", cfg.port_file, pfs_strerror(rc));
			goto out;
		}
	}
	rc = choose_advertise(&cfg, mds_host, mds_port, err, sizeof(err));
	if (rc) {
		pfs_log(PFS_LOG_ERR, "%s", err);
		goto out;
	}
	lo.mds_host = mds_host;
	lo.mds_port = mds_port;
	lo.name = cfg.name;
	lo.advertise_host = cfg.advertise_host;
	lo.heartbeat_ms = (unsigned)cfg.heartbeat_ms;
	rc = oss_mds_link_start(&lo, srv, &link);
	if (rc) {
		pfs_log(PFS_LOG_ERR, "MDS link: %s", pfs_strerror(rc));
		goto out;
	}
	pfs_log(PFS_LOG_NOTICE,
		"pfs %s oss %s: %zu OST(s), data port %u, control port %u, advertised as %s, "
		"MDS %s, nrs %s, enforce %s%s", PFS_VERSION,
		cfg.name, n, oss_server_data_port(srv), oss_server_ctl_port(srv), cfg.advertise_host,
		cfg.mds,
		oss_sched_name(oss_server_sched(srv, 0)),
		enforce == OSS_ENFORCE_TBF ? "tbf" : enforce == OSS_ENFORCE_BLKIO ? "blkio" : "both",
		metrics ? ", metrics on" : "");

	for (;;) {
		sig = 0;
		rc = sigwait(&sigs, &sig);
		if (rc == EINTR)
			continue;
		if (rc == 0 && sig == SIGHUP) {
			if (pfs_log_reopen() > 0)
				pfs_log(PFS_LOG_NOTICE, "SIGHUP: log file %s reopened", cfg.log + 5);
			continue;
		}
		break;
	}
	pfs_log(PFS_LOG_NOTICE, "oss %s: signal %d, stopping", cfg.name, sig);
	status = 0;
out:
	oss_mds_link_stop(link);
	pfs_metrics_stop(metrics);
	oss_server_stop(srv);
	oss_blkio_close(blkio);
	close_stores(stores, n);
	if (pid_written)
		unlink(cfg.pid_file);
	sodium_memzero(&key, sizeof(key));
	pfs_log_close();
	return status;
}
