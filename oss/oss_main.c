/* oss_main.c — pfs-oss, the object storage server daemon.
 *
 *   pfs-oss [--config FILE] [--key=value ...]      (section [oss])
 *
 * Opens (formatting on first use) each OST directory, serves the data and
 * control ports (server.h) with one request scheduler and I/O thread pool
 * per OST, runs the QoS engine (qos.h: MDS allocations, AdapTBF, RCC
 * credits, queue caps, emulated OST speed, optional blkio cgroups), serves
 * Prometheus metrics if asked, registers with the MDS and heartbeats
 * (mds_link.h).  Runs in the foreground; SIGTERM/SIGINT stop it cleanly.
 * Exit status: 0 after a clean stop, 2 for a bad configuration, 1 when
 * something fails at start (an OST that cannot be opened, a port in use). */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common/config.h"
#include "common/file.h"
#include "common/log.h"
#include "common/metrics.h"
#include "common/net.h"
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
	char log_level[16];
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
} oss_cfg;

#define STR(f) PFS_CFG_STR, offsetof(oss_cfg, f), sizeof(((oss_cfg *)0)->f)
#define NUM(t, f) t, offsetof(oss_cfg, f), 0
static const pfs_cfg_opt cfg_tab[] = {
	{ "name", STR(name), "", "OSS name (default: host name)" },
	{ "osts", STR(osts), "", "comma-separated OST directories (created if missing)" },
	{ "mds", STR(mds), "", "MDS address host:port (required)" },
	{ "listen_host", STR(listen_host), "0.0.0.0", "bind address" },
	{ "advertise_host", STR(advertise_host), "127.0.0.1", "address given to the MDS" },
	{ "data_port", NUM(PFS_CFG_INT, data_port), "0", "data port (0 = any free)" },
	{ "ctl_port", NUM(PFS_CFG_INT, ctl_port), "0", "control port (0 = any free)" },
	{ "port_file", STR(port_file), "", "write data=N/ctl=N here once listening" },
	{ "pid_file", STR(pid_file), "", "write the process id here" },
	{ "io_threads", NUM(PFS_CFG_INT, io_threads), "8", "I/O worker threads per OST" },
	{ "heartbeat_ms", NUM(PFS_CFG_INT, heartbeat_ms), "1000", "MDS heartbeat interval" },
	{ "o_direct", NUM(PFS_CFG_BOOL, o_direct), "0", "O_DIRECT for aligned I/O" },
	{ "log_level", STR(log_level), "notice", "err, warning, notice, info, debug" },
	{ "fd_cache", NUM(PFS_CFG_INT, fd_cache), "1024", "open object files kept per OST" },
	{ "nrs", STR(nrs), "tbf", "request scheduler per OST: tbf (FIFO until a rule exists) or fifo (no QoS rules)" },
	{ "enforce", STR(enforce), "tbf",
	  "how QoS rates are enforced: tbf (NRS rules), blkio (cgroup v1 throttles, O_DIRECT), both" },
	{ "job_max_rpcs", NUM(PFS_CFG_INT, job_max_rpcs), "256",
	  "requests one job may have queued on one OST; more are answered -EBUSY" },
	{ "job_max_bytes", NUM(PFS_CFG_SIZE, job_max_bytes), "256M",
	  "bytes one job may have queued on one OST (>= 1M)" },
	{ "oss_max_rpcs", NUM(PFS_CFG_INT, oss_max_rpcs), "4096",
	  "requests queued on this OSS, all OSTs and jobs" },
	{ "oss_max_bytes", NUM(PFS_CFG_SIZE, oss_max_bytes), "1G",
	  "bytes queued on this OSS, all OSTs and jobs (>= 1M)" },
	{ "ost_bandwidth", STR(ost_bandwidth), "",
	  "emulated OST speed in MB/s (10^6 bytes): one value for every OST or a comma list per OST; "
	  "empty = not paced, capacity measured" },
	{ "ost_iops", STR(ost_iops), "",
	  "emulated OST read+write RPCs/s: one value or a comma list per OST; empty = not paced" },
	{ "rcc_lmax_ms", NUM(PFS_CFG_INT, rcc_lmax_ms), "100",
	  "RCC latency bound Lmax in ms (0 = no RPC credits in replies)" },
	{ "rcc_min", NUM(PFS_CFG_INT, rcc_min), "1", "smallest RCC credit granted (RCCmin)" },
	{ "rcc_max", NUM(PFS_CFG_INT, rcc_max), "32", "largest RCC credit granted (RCCmax)" },
	{ "adaptbf_period_ms", NUM(PFS_CFG_INT, adaptbf_period_ms), "100",
	  "AdapTBF observation period (the MDS may set another with the AdapTBF policy)" },
	{ "job_idle_s", NUM(PFS_CFG_INT, job_idle_s), "60",
	  "per-job statistics of a job idle this long are dropped" },
	{ "metrics_host", STR(metrics_host), "", "Prometheus metrics address (default: listen_host)" },
	{ "metrics_port", NUM(PFS_CFG_INT, metrics_port), "0",
	  "Prometheus metrics port, GET /metrics (0 = off)" },
	PFS_CFG_END,
};

static void usage(FILE *out)
{
	fprintf(out, "usage: pfs-oss [--config FILE] [--key=value ...]\n"
		     "options (also keys of section [oss] in FILE):\n");
	pfs_cfg_usage(cfg_tab, out);
}

/* Check ranges and required keys; fills err. */
static int cfg_check(oss_cfg *c, char *mds_host, size_t hostsz, uint16_t *mds_port,
		     char *err, size_t errlen)
{
	if (!c->mds[0]) {
		snprintf(err, errlen, "mds=host:port is required");
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
	if (c->data_port < 0 || c->data_port > 65535 || c->ctl_port < 0 || c->ctl_port > 65535) {
		snprintf(err, errlen, "data_port/ctl_port must be 0..65535");
		return -EINVAL;
	}
	if (c->data_port && c->data_port == c->ctl_port) {
		snprintf(err, errlen, "data_port and ctl_port must differ");
		return -EINVAL;
	}
	if (c->io_threads < 1 || c->io_threads > 1024) {
		snprintf(err, errlen, "io_threads must be 1..1024");
		return -EINVAL;
	}
	if (c->heartbeat_ms < 10 || c->heartbeat_ms > 3600000) {
		snprintf(err, errlen, "heartbeat_ms must be 10..3600000");
		return -EINVAL;
	}
	if (c->fd_cache < 1 || c->fd_cache > 1000000) {
		snprintf(err, errlen, "fd_cache must be 1..1000000");
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
	if (c->job_max_rpcs < 1 || c->job_max_rpcs > 1000000 || c->oss_max_rpcs < 1 ||
	    c->oss_max_rpcs > 10000000) {
		snprintf(err, errlen, "job_max_rpcs must be 1..1000000, oss_max_rpcs 1..10000000");
		return -EINVAL;
	}
	if (c->job_max_bytes < PFS_MAX_IO || c->oss_max_bytes < PFS_MAX_IO) {
		snprintf(err, errlen, "job_max_bytes and oss_max_bytes must be at least 1M");
		return -EINVAL;
	}
	if (c->rcc_lmax_ms < 0 || c->rcc_lmax_ms > 600000 || c->rcc_min < 1 ||
	    c->rcc_max < c->rcc_min || c->rcc_max > 65535) {
		snprintf(err, errlen, "rcc_lmax_ms must be 0..600000 and 1 <= rcc_min <= rcc_max <= 65535");
		return -EINVAL;
	}
	if (c->adaptbf_period_ms < 1 || c->adaptbf_period_ms > 60000) {
		snprintf(err, errlen, "adaptbf_period_ms must be 1..60000");
		return -EINVAL;
	}
	if (c->job_idle_s < 1 || c->job_idle_s > 86400) {
		snprintf(err, errlen, "job_idle_s must be 1..86400");
		return -EINVAL;
	}
	if (c->metrics_port < 0 || c->metrics_port > 65535) {
		snprintf(err, errlen, "metrics_port must be 0..65535 (0 = off)");
		return -EINVAL;
	}
	if (pfs_log_level_parse(c->log_level) < 0) {
		snprintf(err, errlen, "log_level: unknown level '%s'", c->log_level);
		return -EINVAL;
	}
	/* The MDS keeps OSS names and hosts in 64-byte fields (pfs_ost_info). */
	if (!c->advertise_host[0] || strlen(c->advertise_host) >= 64) {
		snprintf(err, errlen, "advertise_host must be 1..63 characters");
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
		oss_store_opts o = { (unsigned)cfg->fd_cache, o_direct };
		int rc = oss_store_open(dirs[i], &o, &stores[i], err, errlen);

		if (rc) {
			pfs_log(PFS_LOG_ERR, "OST %s: %s", dirs[i], err);
			return rc;
		}
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

int main(int argc, char **argv)
{
	static oss_cfg cfg; /* large: keep it off the stack */
	char err[512] = "", mds_host[256], text[64];
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

	/* Signals are taken by sigwait in main; every thread started below
	 * inherits the blocked mask. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);

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
	so.adaptbf_period = cfg.adaptbf_period_ms / 1000.0;
	so.job_idle_s = cfg.job_idle_s;
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
		"oss %s: %zu OST(s), data port %u, control port %u, MDS %s, nrs %s, enforce %s%s",
		cfg.name, n, oss_server_data_port(srv), oss_server_ctl_port(srv), cfg.mds,
		oss_sched_name(oss_server_sched(srv, 0)),
		enforce == OSS_ENFORCE_TBF ? "tbf" : enforce == OSS_ENFORCE_BLKIO ? "blkio" : "both",
		metrics ? ", metrics on" : "");

	do {
		rc = sigwait(&sigs, &sig);
	} while (rc == EINTR);
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
	return status;
}
