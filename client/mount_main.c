/* mount_main.c — mount.pfs: mount a pfs file system with FUSE.
 *
 *   mount.pfs HOST:PORT MOUNTPOINT [-o opt[,opt...]] [-f] [-n] [-s] [-v]
 *   mount.pfs --help | --version
 *
 * This is how mount(8) runs /sbin/mount.pfs for `mount -t pfs HOST:PORT DIR
 * -o ...`: -n, -s, -v (and -t TYPE) are accepted and ignored, as are the
 * generic options mount(8) puts in -o (rw, noatime, dev, suid, _netdev,
 * defaults, ...).  Without -f the MDS is probed and the FUSE mount made in
 * the foreground, so any failure is reported with mount(8)'s exit status
 * (below); only then does the process daemonize and the parent exit 0, so
 * `mount.pfs` returns when the mount is usable.  `umount DIR`, SIGTERM and
 * SIGINT end the session loop; the process then unmounts, frees everything
 * and exits 0.  SIGHUP reopens a log=file:PATH (logrotate).
 *
 * Logs: log=stderr|file:PATH|syslog; by default standard error until the
 * mount is made, then syslog once in the background (standard error is
 * /dev/null there).  With a file, once in the background standard error
 * goes to the file too (libfuse's messages, sanitizer reports).
 *
 * Exit status, as mount(8) documents for helpers: 0 mounted; 1 incorrect
 * invocation (usage, an unknown or bad option, a log file that cannot be
 * opened); 2 system error (out of memory, cannot fork); 32 mount failure
 * (the MDS cannot be reached, the FUSE mount fails). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sodium.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* The session loop's thread cap (fuse_loop_cfg_set_max_threads) exists
 * only in the libfuse 3.12 API; the rest of the client uses 3.5's. */
#undef FUSE_USE_VERSION
#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

#include "client/fuse_ops.h"
#include "client/jobid.h"
#include "client/mdc.h"
#include "client/mdqos.h"
#include "client/notify.h"
#include "client/osc.h"
#include "client/qos_fetch.h"
#include "common/auth.h"
#include "common/config.h"
#include "common/file.h"
#include "common/log.h"
#include "common/net.h"
#include "common/version.h"
#include "qos/rcc.h"

/* mount(8)'s exit codes for mount helpers (man 8 mount, RETURN CODES). */
#define MNT_EX_USAGE 1  /* incorrect invocation or permissions */
#define MNT_EX_SYSERR 2 /* system error (out of memory, cannot fork) */
#define MNT_EX_FAIL 32  /* mount failure */

/* The mount's bdi settings, once INIT is through:
 * - readahead_kb: the kernel gives a FUSE mount's bdi 128 KiB of readahead
 *   and lowers it to the INIT reply's max_readahead, never raises it;
 * - dirty_mb (with writeback): a FUSE bdi is held to a strict 1 % share of
 *   the dirty memory (tens of MiB), too little to absorb a burst of small
 *   writes; max_bytes sets the share in bytes.
 * Both are written to /sys/class/bdi/MAJ:MIN/.  A stat of the mount point
 * is the wait: the kernel holds every request until the INIT reply is
 * processed.  Runs on its own thread while the session loop serves that
 * stat; failures are logged and leave the kernel's values. */
typedef struct bdi_arg {
	const char *mnt;
	unsigned ra_kb;      /* 0 = leave */
	unsigned dirty_mb;   /* 0 = leave */
} bdi_arg;

static void bdi_write(unsigned maj, unsigned min, const char *name, unsigned long long v)
{
	char path[96];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/bdi/%u:%u/%s", maj, min, name);
	f = fopen(path, "w");
	if (!f || fprintf(f, "%llu\n", v) < 0 || fclose(f)) {
		pfs_log(PFS_LOG_WARNING, "%s: %s (the kernel's value stays)", path, strerror(errno));
		if (f)
			fclose(f);
		return;
	}
	pfs_log(PFS_LOG_INFO, "%s = %llu", path, v);
}

static void *bdi_main(void *arg)
{
	const bdi_arg *a = arg;
	struct stat st;

	if (stat(a->mnt, &st)) {
		pfs_log(PFS_LOG_WARNING, "bdi: stat %s: %s", a->mnt, strerror(errno));
		return NULL;
	}
	if (a->ra_kb)
		bdi_write(major(st.st_dev), minor(st.st_dev), "read_ahead_kb", a->ra_kb);
	if (a->dirty_mb)
		bdi_write(major(st.st_dev), minor(st.st_dev), "max_bytes",
			  (unsigned long long)a->dirty_mb << 20);
	return NULL;
}

/* The daemon's pid, for pfs-cluster and init scripts to signal it; the
 * mount stands even if it cannot be written.  0 or -errno (logged). */
static int write_pid_file(const char *path)
{
	char text[32];
	int rc;

	snprintf(text, sizeof(text), "%ld\n", (long)getpid());
	rc = pfs_file_write_atomic(path, text);
	if (rc)
		pfs_log(PFS_LOG_ERR, "pid_file %s: %s", path, pfs_strerror(rc));
	return rc;
}

/* Into the background as fuse_daemonize does (fork, setsid, chdir /,
 * stdio on /dev/null), but the parent, which is what mount(8), scripts and
 * init systems wait for, exits only after the daemon wrote its pid file
 * (pid_file non-empty; *written = 1 if it did): with fuse_daemonize it
 * exited first, and a reader right after the mount found no file
 * (systemd's Type=forking reads PIDFile= as soon as the parent exits).
 * 0 in the daemon, -errno if it could not fork; the parent never returns. */
static int daemonize(const char *pid_file, int *written)
{
	int w[2], nullfd;
	char ok = 0;

	if (pipe(w))
		return -errno;
	switch (fork()) {
	case -1:
		close(w[0]);
		close(w[1]);
		return -errno;
	case 0:
		break;
	default:
		close(w[1]);
		_exit(read(w[0], &ok, 1) == 1 && ok ? 0 : MNT_EX_SYSERR);
	}
	close(w[0]);
	if (setsid() == -1)
		pfs_log(PFS_LOG_WARNING, "setsid: %s", strerror(errno));
	if (chdir("/"))
		pfs_log(PFS_LOG_WARNING, "chdir /: %s", strerror(errno));
	nullfd = open("/dev/null", O_RDWR);
	if (nullfd >= 0) {
		(void)dup2(nullfd, 0);
		(void)dup2(nullfd, 1);
		(void)dup2(nullfd, 2);
		if (nullfd > 2)
			close(nullfd);
	}
	if (pid_file[0])
		*written = write_pid_file(pid_file) == 0;
	ok = 1;
	if (write(w[1], &ok, 1) != 1)
		pfs_log(PFS_LOG_WARNING, "daemonize: the parent did not hear the start");
	close(w[1]);
	return 0;
}

typedef struct mount_cfg {
	char jobid_var[512];
	char jobid_source[16];
	char log_level[16];
	char log[1024];
	char pid_file[1024];
	int max_conns;
	int timeout_ms;
	int retry_ms;
	int recovery_window_s;
	int oss_recovery_waiters;
	int jobid_ttl_ms;
	double attr_timeout_s;
	double md_lease_s;
	int allow_other;
	int default_permissions;
	char fsname[256];
	int ro;
	int clone_fd;
	int idle_threads;
	int max_threads;
	int splice;
	int sync_on_close;
	int writeback;
	int readahead_kb;
	int ra_window_mb, ra_total_mb, ra_threads;
	int statahead, statahead_max;
	int async_unlink, async_unlink_max, async_unlink_nice, neg_local, async_create,
	    async_hold_ms;
	int killpriv_v2;
	int dirty_mb;
	int wcache_mb, wcache_file_mb, wcache_ost_mb, wcache_job_mb;
	int wcache_threads, wcache_age_ms, wcache_whole_stripes;
	int rcc_credits;
	int mdqos;
	double rcc_lmax_ms;
	double rcc_lambda;
	double rcc_lnet_ms;
	char key[1024];
	int auth;
	int job_slots;
	int ascar;
	int qos_poll_ms;
} mount_cfg;

/* Rows keyed by their field's name: S(field, default, help) for strings,
 * N(type, field, default, help, min, max) for numbers and booleans. */
#define S(f, d, h) PFS_CFG_OPT(mount_cfg, #f, PFS_CFG_STR, f, d, h, 0, 0)
#define N(t, f, d, h, lo, hi) PFS_CFG_OPT(mount_cfg, #f, t, f, d, h, lo, hi)
static const pfs_cfg_opt mount_opts[] = {
	S(jobid_var, "SLURM_JOB_ID:PFS_JOBID",
	  "environment variables holding the job id, ':'-separated, first set wins"),
	N(PFS_CFG_INT, jobid_ttl_ms, "1000", "how long a process's job id is cached", 0, 3600000),
	S(jobid_source, "auto", "auto (the Slurm job of the caller's cgroup, else jobid_var), "
	  "cgroup, env or both (jobid_var, else the cgroup)"),
	S(log_level, "notice", "err, warning, notice, info, debug"),
	S(log, "", "stderr | file:PATH (reopened on SIGHUP) | syslog (default: stderr, then syslog "
	  "once in the background)"),
	S(pid_file, "", "write the mount daemon's process id here once mounted (removed at exit)"),
	N(PFS_CFG_INT, max_conns, "8", "connections per server", 1, 1024),
	N(PFS_CFG_INT, timeout_ms, "60000",
	  "per-RPC send/receive timeout towards the MDS (OSS: see rcc_*)", 1, 86400000),
	N(PFS_CFG_INT, retry_ms, "30000", "how long to retry connecting to a server that is down",
	  0, 86400000),
	/* Recovery (issue 8): Lustre's windows are a few obd_timeouts (100 s
	 * each); requests wait and are resent that long before EIO. */
	N(PFS_CFG_INT, recovery_window_s, "300",
	  "how long requests wait for, and are resent to, a server that went away (then EIO)",
	  1, 86400),
	N(PFS_CFG_INT, oss_recovery_waiters, "16",
	  "requests that may wait at once for one OSS in recovery (more fail with EIO; "
	  "keep it below max_threads)", 1, 4096),
	N(PFS_CFG_DOUBLE, attr_timeout_s, "1.0", "seconds the kernel caches attributes and names",
	  0, 86400),
	/* Metadata leases (issue 11, client/notify.h): the MDS's md_lease_s
	 * (default 10) and this cap, whichever is shorter.  On by default:
	 * the cold-cache cost once measured was the noise of a loaded
	 * machine (same requests, under 1 % of the CPU; bench/RESULTS.md
	 * "Metadata leases on by default"), and warm stats of unchanged files
	 * gain 10x. */
	N(PFS_CFG_DOUBLE, md_lease_s, "30",
	  "with the MDS's invalidations (a notify channel), cache names and attributes up to "
	  "this long (at most the MDS's lease; 0 = off: attr_timeout_s only)", 0, 30),
	N(PFS_CFG_BOOL, allow_other, "1", "let every user use the mount (the MDS checks permissions)",
	  0, 0),
	/* Off by default: with it the kernel drops a directory's attributes
	 * at every create/unlink in it and asks the MDS again before the next
	 * permission check, one more round trip per create or unlink (create
	 * 3.5k/s against 5.6k/s without it, 4 threads).  The MDS checks every
	 * operation itself; only FIFO and device node opens, which never reach
	 * a FUSE file system, go unchecked without it (mds/README.md). */
	N(PFS_CFG_BOOL, default_permissions, "0",
	  "let the kernel check permissions from mode bits as well (FIFOs and devices: "
	  "their opens never reach the MDS; costs a GETATTR per create/unlink)", 0, 0),
	S(fsname, "", "mount source shown in mount tables (default HOST:PORT)"),
	N(PFS_CFG_BOOL, ro, "0", "mount read-only", 0, 0),
	N(PFS_CFG_BOOL, splice, "1",
	  "move WRITE data from the kernel to the OSS socket with splice (no copy)", 0, 0),
	N(PFS_CFG_BOOL, sync_on_close, "0",
	  "close syncs the data on the OSSes before the size goes to the MDS (data=ordered)",
	  0, 0),
	N(PFS_CFG_BOOL, writeback, "0",
	  "kernel write-back cache: write(2) returns once the page cache has the data, "
	  "the kernel sends it in 1 MiB WRITEs later (at the latest at fsync and close)", 0, 0),
	N(PFS_CFG_INT, readahead_kb, "4096",
	  "the mount's readahead window in KiB (the kernel's FUSE default is 128; 0 keeps it)",
	  0, 65536),
	/* mount.pfs's own stream readahead (client/readahead.h, issue 11) */
	N(PFS_CFG_INT, ra_window_mb, "16",
	  "readahead of mount.pfs: most data prefetched ahead of one sequential stream, MiB "
	  "(whole stripes, several in flight; 0 = off)", 0, 65536),
	N(PFS_CFG_INT, ra_total_mb, "256",
	  "readahead of mount.pfs: most prefetched data held by the mount, MiB (0 = off)", 0,
	  1048576),
	N(PFS_CFG_INT, ra_threads, "16", "readahead of mount.pfs: prefetch threads", 1, 256),
	/* statahead (client/statahead.h, issue 11 item 3) */
	N(PFS_CFG_INT, statahead, "256",
	  "statahead: LOOKUPs walking a directory fetch its next entries with their "
	  "attributes, at most this many per request (0 = off)", 0, PFS_LOOKUP_BULK_MAX),
	N(PFS_CFG_INT, statahead_max, "8192", "statahead: entries the mount may hold", 1,
	  1048576),
	/* asynchronous unlink under directory delegations (client/dirdeleg.h,
	 * issue 11): needs the notify channel (md_lease_s > 0) and an MDS
	 * that grants delegations */
	N(PFS_CFG_BOOL, async_unlink, "1",
	  "unlinks streaming through a directory whose delegation the MDS granted this mount "
	  "are answered at once and sent to the MDS in the background", 0, 0),
	N(PFS_CFG_INT, async_unlink_max, "128",
	  "most unlinks answered and not yet sent (also what a crash of the mount can lose)",
	  1, 65536),
	N(PFS_CFG_INT, async_unlink_nice, "10",
	  "nice value of the threads that send answered unlinks (0 = as the mount): behind "
	  "the application's own requests", 0, 19),
	N(PFS_CFG_BOOL, neg_local, "1",
	  "with async_unlink: creates and negative lookups in one directory ask for its "
	  "delegation too; the mount lists it and answers LOOKUPs of names it lacks itself", 0,
	  0),
	N(PFS_CFG_BOOL, async_create, "1",
	  "with neg_local: creates of new names in a directory this mount holds and has "
	  "listed are answered at once from inode numbers the MDS reserved for it, and sent "
	  "in the background", 0, 0),
	N(PFS_CFG_INT, async_hold_ms, "20",
	  "an asynchronous unlink or create waits this long before it is sent, unless "
	  "something waits for it: the jobs of a storm go in batches of 32, a create "
	  "closed meanwhile with no CLOSE after it", 0, 10000),
	N(PFS_CFG_BOOL, killpriv_v2, "1",
	  "mount.pfs drops set-id bits and security.capability at writes itself "
	  "(FUSE_HANDLE_KILLPRIV_V2), so the kernel stops asking for security.capability "
	  "before every write", 0, 0),
	N(PFS_CFG_INT, dirty_mb, "512",
	  "with writeback: dirty data the mount may hold, MiB (the kernel's FUSE default is "
	  "a strict 1 % of the dirty memory; 0 keeps it)", 0, 1048576),
	/* mount.pfs's own write-back cache (client/wcache.h, issue 11) */
	N(PFS_CFG_INT, wcache_mb, "256",
	  "write-back cache of mount.pfs: dirty data it may hold, MiB (0 = off: every write "
	  "waits for its OSS; off with writeback, whose kernel cache replaces it)", 0, 1048576),
	N(PFS_CFG_INT, wcache_file_mb, "0", "dirty data per file, MiB (0 = half of wcache_mb)",
	  0, 1048576),
	N(PFS_CFG_INT, wcache_ost_mb, "0", "dirty data per OST, MiB (0 = half of wcache_mb)",
	  0, 1048576),
	N(PFS_CFG_INT, wcache_job_mb, "0", "dirty data per job, MiB (0 = wcache_mb)", 0, 1048576),
	N(PFS_CFG_INT, wcache_threads, "4", "write-back cache flusher threads", 1, 256),
	N(PFS_CFG_BOOL, wcache_whole_stripes, "0",
	  "write-back cache: cache writes of whole stripes too (default: they go straight to "
	  "the OSSes, spliced, as they gain nothing from the cache's copy)", 0, 0),
	N(PFS_CFG_INT, wcache_age_ms, "1000",
	  "cached data older than this is written back, ms", 1, 3600000),
	N(PFS_CFG_BOOL, clone_fd, "1",
	  "one /dev/fuse descriptor per worker thread (less lock contention in the kernel)", 0, 0),
	/* Idle workers all wait on one queue of /dev/fuse, and each request
	 * wakes the one that waited longest.  Under CPU contention (load 10-35
	 * on 2 vCPUs) 4 idle workers gave 2.1x random 4 KiB writes, 1.6x
	 * creates and 2.9x cold unlinks against 16 (fewer cold wake-ups); on a
	 * quiet machine, the benchmark of record, 4 cost cold stats about 15 %
	 * and random writes about 7 % (bench/RESULTS.md, "Random 4 KiB writes:
	 * ... fewer idle FUSE workers" and "Core benchmark on a quiet machine,
	 * end of session 16").  16
	 * stays the default; idle_threads=4 is the setting for busy nodes. */
	N(PFS_CFG_INT, idle_threads, "16", "FUSE worker threads kept waiting for requests", 1, 4096),
	/* A request of a throttled job holds its worker while it waits for an
	 * RPC credit or in the OSS's TBF queue; libfuse's default cap of 10
	 * workers let one throttled job stall every other job on the mount. */
	N(PFS_CFG_INT, max_threads, "64",
	  "most FUSE worker threads (requests served at once, throttled ones included)", 1, 4096),
	/* RCC (lustre-rcc-congestion sec. III).  The OSS RPC timeout is
	 * Eq. (6), T = lambda * Lmax + Lnet.  Lmax must be the latency bound
	 * the OSSes hold their queues to (their RCC Lmax, default 100 ms): the
	 * paper leaves it to the administrator "according to the system scale"
	 * (its large simulated clusters use 25 and 60 s; on disks that answer
	 * a 1 MiB RPC in milliseconds, 100 ms is that scale).  lambda 1.5 and
	 * Lnet 5 s are the paper's settings (sec. IV); with Lmax = 100 ms, T is
	 * 5.15 s, dominated by the network allowance. */
	/* Client-side QoS (issue 12, client/credit.h, client/qos_fetch.h). */
	N(PFS_CFG_INT, job_slots, "1",
	  "divide each OSS's RPCs in flight among the jobs using it, weighted by the registry (0 = first come, first served)",
	  0, 1),
	N(PFS_CFG_INT, ascar, "1", "apply the ASCAR rule set the MDS distributes (0 = never)", 0, 1),
	N(PFS_CFG_INT, qos_poll_ms, "3000",
	  "how often the ASCAR rule set and the job weights are fetched from the MDS", 100, 3600000),
	N(PFS_CFG_BOOL, mdqos, "1",
	  "PADLL metadata QoS: hold each job's metadata requests to the rates the MDS gives "
	  "(off: the MDS still holds them, on its side)", 0, 0),
	N(PFS_CFG_INT, rcc_credits, "0",
	  "RPCs in flight per OSS before the OSS's first credit grant (0 = max_conns)", 0, 65535),
	N(PFS_CFG_DOUBLE, rcc_lmax_ms, "100",
	  "the OSSes' latency bound Lmax (RCC), for the OSS RPC timeout", 0, 86400000),
	N(PFS_CFG_DOUBLE, rcc_lambda, "1.5",
	  "amplification factor lambda (>= 1) of the OSS RPC timeout", 1, 1000),
	N(PFS_CFG_DOUBLE, rcc_lnet_ms, "5000", "network latency allowance Lnet of the OSS RPC timeout",
	  0, 86400000),
	S(key, "/etc/pfs/client.key",
	  "key file (role client, 0600, owned by the user mounting: root)"),
	N(PFS_CFG_BOOL, auth, "1",
	  "authenticate to the servers and MAC every frame (0: for measurements only)", 0, 0),
	PFS_CFG_ALIAS("log_file", "log", 0, "file:", "log_file=PATH is log=file:PATH"),
	PFS_CFG_ALIAS("pidfile", "pid_file", 0, NULL, "pidfile=PATH is pid_file=PATH"),
	PFS_CFG_ALIAS("attr_timeout", "attr_timeout_s", 0, NULL, "in seconds"),
	PFS_CFG_END
};

/* Options mount(8) and fstab put in -o that mean nothing to pfs. */
static const char *const generic_opts[] = {
	"rw", "defaults", "auto", "noauto", "user", "nouser", "users", "owner", "group",
	"dev", "nodev", "suid", "nosuid", "exec", "noexec", "async", "sync", "dirsync",
	"atime", "noatime", "relatime", "norelatime", "strictatime", "nostrictatime",
	"lazytime", "nolazytime", "diratime", "nodiratime", "_netdev", "nofail", "silent",
	"loud", "iversion", "noiversion", "nomand", "mand", NULL,
};

static void usage(FILE *out)
{
	fprintf(out, "usage: mount.pfs HOST:PORT MOUNTPOINT [-o opt[,opt...]] [-f] [-n] [-s] [-v]\n"
		     "       mount.pfs --help | --version\n"
		     "  -f  stay in the foreground\n"
		     "exit status: 0 mounted, 1 bad invocation, 2 system error, 32 mount failure\n"
		     "options (-o key=value, several separated by ','):\n");
	pfs_cfg_usage(mount_opts, "", out);
	fprintf(out, "generic mount options (rw, noatime, dev, suid, _netdev, defaults, ...) "
		     "are accepted and ignored\n");
}

static int is_generic(const char *key)
{
	for (int i = 0; generic_opts[i]; i++)
		if (!strcmp(key, generic_opts[i]))
			return 1;
	/* x-systemd.*, x-gvfs-*, comment=... are for other tools. */
	return !strncmp(key, "x-", 2) || !strcmp(key, "comment");
}

/* Apply one -o list. */
static int apply_opts(mount_cfg *cfg, const char *list, char *err, size_t errlen)
{
	char *dup = strdup(list), *save = NULL, *tok;
	int rc = 0;

	if (!dup)
		return -ENOMEM;
	for (tok = strtok_r(dup, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');

		if (eq)
			*eq = '\0';
		if (is_generic(tok))
			continue;
		rc = pfs_cfg_set(mount_opts, cfg, tok, eq ? eq + 1 : NULL, err, errlen);
	}
	free(dup);
	return rc;
}

/* Parse argv; 0, PFS_CFG_HELP for -h/--help, PFS_CFG_VERSION for
 * -V/--version (wherever they are), or -EINVAL with err filled. */
static int parse_args(int argc, char **argv, mount_cfg *cfg, const char **spec,
		      const char **mnt, int *foreground, char *err, size_t errlen)
{
	int npos = 0, rc;

	rc = pfs_cfg_defaults(mount_opts, cfg, err, errlen);
	if (rc)
		return rc;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "-t"))
			i++;
		else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return PFS_CFG_HELP;
		else if (!strcmp(argv[i], "-V") || !strcmp(argv[i], "--version"))
			return PFS_CFG_VERSION;
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-f")) {
			*foreground = 1;
		} else if (!strcmp(a, "-n") || !strcmp(a, "-s") || !strcmp(a, "-v")) {
			/* no mtab, sloppy, verbose: nothing to do */
		} else if (!strcmp(a, "-t") || !strcmp(a, "-o")) {
			if (i + 1 >= argc) {
				snprintf(err, errlen, "%s needs an argument", a);
				return -EINVAL;
			}
			i++;
			if (a[1] == 'o' && (rc = apply_opts(cfg, argv[i], err, errlen)))
				return rc;
		} else if (!strncmp(a, "-o", 2)) {
			if ((rc = apply_opts(cfg, a + 2, err, errlen)))
				return rc;
		} else if (a[0] == '-') {
			snprintf(err, errlen, "unknown option '%s'", a);
			return -EINVAL;
		} else if (npos == 0) {
			*spec = a;
			npos++;
		} else if (npos == 1) {
			*mnt = a;
			npos++;
		} else {
			snprintf(err, errlen, "unexpected argument '%s'", a);
			return -EINVAL;
		}
	}
	if (npos != 2) {
		snprintf(err, errlen, "need HOST:PORT and MOUNTPOINT");
		return -EINVAL;
	}
	return 0;
}

/* Flow control as this client saw it, for the log at unmount (benchmarks
 * and tests read it from log_file). */
static void log_osc_stats(cli_osc *osc)
{
	cli_osc_oss_stats os[64];
	cli_osc_stats st;
	unsigned n = 0;

	cli_osc_stats_get(osc, &st);
	pfs_log(PFS_LOG_NOTICE, "osc: %llu pieces in %llu waves, %llu credit waits, %llu busy "
		"retries, %llu resends, %llu pipe writes sent from memory",
		(unsigned long long)st.pieces, (unsigned long long)st.waves,
		(unsigned long long)st.credit_waits, (unsigned long long)st.busy_retries,
		(unsigned long long)st.resends, (unsigned long long)st.tee_fallbacks);
	cli_osc_oss_stats_get(osc, os, 64, &n);
	for (unsigned i = 0; i < n && i < 64; i++)
		pfs_log(PFS_LOG_NOTICE, "osc: OSS %s:%u credit %u (changed %llu times), at most %u "
			"in flight, %llu credit waits, %llu busy retries, %llu resends", os[i].host,
			os[i].port, os[i].credit, (unsigned long long)os[i].credit_changes, os[i].peak,
			(unsigned long long)os[i].credit_waits,
			(unsigned long long)os[i].busy_retries, (unsigned long long)os[i].resends);
}

/* SIGHUP: reopen the log file.  SIGHUP is blocked in every thread (the
 * mask is set before any is created) and taken here with sigwait, so
 * libfuse's handler, which would end the session, never runs for it. */
static atomic_int hup_stop;

static void *hup_main(void *arg)
{
	sigset_t *set = arg;
	int sig;

	for (;;) {
		if (sigwait(set, &sig))
			continue;
		if (hup_stop)
			return NULL;
		if (pfs_log_reopen() > 0)
			pfs_log(PFS_LOG_NOTICE, "SIGHUP: log file reopened");
	}
}

/* Options that need no connection: the address, numbers that depend on
 * each other, names.  0 or -EINVAL with err filled. */
static int check_cfg(const mount_cfg *cfg, const char *spec, char *host, size_t hostsz,
		     uint16_t *port, double *T, char *err, size_t errlen)
{
	if (pfs_log_level_parse(cfg->log_level) < 0) {
		snprintf(err, errlen, "bad log_level '%s'", cfg->log_level);
		return -EINVAL;
	}
	if (cfg->log[0] && pfs_log_dest_check(cfg->log, err, errlen))
		return -EINVAL;
	if (pfs_addr_parse(spec, host, hostsz, port) || !*host || *port == 0) {
		snprintf(err, errlen, "bad server address '%s' (want HOST:PORT)", spec);
		return -EINVAL;
	}
	if (qos_rcc_timeout(cfg->rcc_lambda, cfg->rcc_lmax_ms / 1000, cfg->rcc_lnet_ms / 1000, T) ||
	    *T * 1000 > 24 * 3600 * 1000.0 || *T * 1000 < 1) {
		snprintf(err, errlen, "want rcc_lambda >= 1, rcc_lmax_ms > 0, rcc_lnet_ms >= 0 and "
			 "an OSS RPC timeout between 1 ms and a day");
		return -EINVAL;
	}
	/* fsname may not hold ',' (the option separator) unescaped. */
	if (strchr(cfg->fsname[0] ? cfg->fsname : spec, ',')) {
		snprintf(err, errlen, "fsname may not contain ','");
		return -EINVAL;
	}
	return 0;
}

int main(int argc, char **argv)
{
	mount_cfg cfg;
	const char *spec = NULL, *mnt = NULL;
	char err[1536] = "", host[256], fopts[1024];
	char *fargv[] = { argv[0], "-o", fopts, NULL };
	static pfs_auth_key key; /* borrowed by every pool */
	struct fuse_args args = FUSE_ARGS_INIT(3, fargv);
	struct fuse_loop_config *lc = NULL;
	struct fuse_session *se = NULL;
	cli_jobid *jobid = NULL;
	cli_mdc *mdc = NULL;
	cli_mdqos *mdq = NULL;
	cli_osc *osc = NULL;
	cli_fs *fs = NULL;
	cli_notify *notify = NULL;
	pfs_rpc_opts ro = { 0 };
	cli_osc_opts oo = { 0 };
	cli_credit_policy pol = { .job_slots = 1 };
	cli_ascar *ascar = NULL;
	cli_qos_fetch *qfetch = NULL;
	double T = 0;
	pfs_statfs st;
	cli_ctx probe;
	uint16_t port;
	sigset_t hup;
	pthread_t hup_thread, ra_thread;
	bdi_arg ra = { 0 };
	int ra_started = 0;
	int foreground = 0, rc, status = MNT_EX_FAIL, mounted = 0, handlers = 0, hup_started = 0;
	int pid_written = 0;

	/* Before any thread exists, so that all of them inherit it. */
	sigemptyset(&hup);
	sigaddset(&hup, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &hup, NULL);

	pfs_log_init("mount.pfs", PFS_LOG_NOTICE);
	rc = parse_args(argc, argv, &cfg, &spec, &mnt, &foreground, err, sizeof(err));
	if (rc == PFS_CFG_VERSION) {
		printf("mount.pfs (pfs) %s\n", PFS_VERSION);
		return 0;
	}
	if (rc == PFS_CFG_HELP) {
		usage(stdout);
		return 0;
	}
	if (rc == 0)
		rc = check_cfg(&cfg, spec, host, sizeof(host), &port, &T, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "mount.pfs: %s\n", err);
		if (rc == -EINVAL)
			fprintf(stderr, "(mount.pfs --help lists the options)\n");
		return rc == -EINVAL ? MNT_EX_USAGE : MNT_EX_SYSERR;
	}
	pfs_log_set_level(pfs_log_level_parse(cfg.log_level));
	if (cfg.log[0] && pfs_log_open(cfg.log, err, sizeof(err))) {
		fprintf(stderr, "mount.pfs: %s\n", err);
		return MNT_EX_USAGE;
	}
	if (cfg.auth) {
		rc = pfs_auth_init();
		if (rc == 0)
			rc = pfs_auth_key_load_msg(cfg.key, &key, err, sizeof(err));
		if (rc) {
			fprintf(stderr, "mount.pfs: %s\n", rc == -EIO ? "libsodium init failed" : err);
			return rc == -EPERM || rc == -EINVAL || rc == -ENOENT ? MNT_EX_USAGE :
				MNT_EX_SYSERR;
		}
		ro.auth = &key;
	}
	ro.max_conns = (unsigned)cfg.max_conns;
	ro.timeout_ms = cfg.timeout_ms;
	ro.retry_ms = cfg.retry_ms ? cfg.retry_ms : 1;
	rc = cli_client_id_new(&ro.client_id);
	if (rc) {
		fprintf(stderr, "mount.pfs: client id: %s\n", pfs_strerror(rc));
		status = MNT_EX_SYSERR;
		goto out;
	}
	rc = cli_jobid_create("/proc", cfg.jobid_var, (unsigned)cfg.jobid_ttl_ms, 0, &jobid);
	if (rc) {
		fprintf(stderr, "mount.pfs: %s%s\n", rc == -EINVAL ? "bad jobid_var: " : "",
			rc == -EINVAL ? cfg.jobid_var : pfs_strerror(rc));
		status = rc == -EINVAL ? MNT_EX_USAGE : MNT_EX_SYSERR;
		goto out;
	}
	{
		enum cli_jobid_source src;

		if (cli_jobid_source_parse(cfg.jobid_source, &src)) {
			fprintf(stderr, "mount.pfs: bad jobid_source: %s\n", cfg.jobid_source);
			status = MNT_EX_USAGE;
			goto out;
		}
		cli_jobid_set_source(jobid, src);
	}
	rc = cli_mdc_create(host, port, &ro, &mdc);
	if (rc == 0 && cfg.mdqos) {
		rc = cli_mdqos_create(cli_mdc_pool(mdc), &mdq);
		if (rc == 0)
			cli_mdc_set_mdqos(mdc, mdq); /* its thread starts after daemonizing */
	}
	oo.rpc = ro;
	oo.rpc.timeout_ms = (int)(T * 1000 + 0.5);
	oo.rpc.recovery_ms = cfg.recovery_window_s * 1000;
	oo.recovery_waiters = (unsigned)cfg.oss_recovery_waiters;
	oo.credits = (unsigned)cfg.rcc_credits;
	pol.job_slots = cfg.job_slots;
	pol.weight = cli_qos_fetch_weight; /* arg set when the fetcher runs */
	if (rc == 0 && cfg.ascar) {
		rc = cli_ascar_create(&ascar);
		pol.ascar = ascar;
	}
	oo.policy = &pol;
	if (rc == 0)
		rc = cli_osc_create(mdc, &oo, &osc);
	if (rc) {
		fprintf(stderr, "mount.pfs: %s\n", pfs_strerror(rc));
		status = rc == -ENOMEM ? MNT_EX_SYSERR : MNT_EX_FAIL;
		goto out;
	}
	/* Fail the mount, not the first ls, when the MDS is unreachable. */
	memset(&probe, 0, sizeof(probe));
	snprintf(probe.job, sizeof(probe.job), "mount.pfs.0");
	rc = cli_mdc_statfs(mdc, &probe, &st);
	if (rc) {
		fprintf(stderr, "mount.pfs: MDS %s: %s\n", spec, pfs_strerror(rc));
		goto out;
	}
	/* Mounted from here on: ride out MDS restarts for the recovery window,
	 * and give applications file-system errors only. */
	pfs_rpc_pool_set_recovery_ms(cli_mdc_pool(mdc), cfg.recovery_window_s * 1000);
	cli_mdc_set_fs_errors(mdc, 1);
	if (cfg.md_lease_s > 0) {
		cli_notify_opts no = { .lease_s = cfg.md_lease_s,
				       .wait_ms = cfg.timeout_ms / 2 < 5000 ?
						  (unsigned)cfg.timeout_ms / 2 : 5000 };

		if (cli_notify_create(mdc, &no, &notify)) {
			fprintf(stderr, "mount.pfs: out of memory\n");
			status = MNT_EX_SYSERR;
			goto out;
		}
	}
	cli_fs_opts fo = { .attr_timeout = cfg.attr_timeout_s, .max_io = PFS_MAX_IO,
			   .splice = cfg.splice, .sync_on_close = cfg.sync_on_close,
			   .writeback = cfg.writeback, .notify = notify };
	if (!cfg.writeback && cfg.wcache_mb > 0) {
		fo.wcache.total_bytes = (uint64_t)cfg.wcache_mb << 20;
		fo.wcache.file_bytes = (uint64_t)cfg.wcache_file_mb << 20;
		fo.wcache.ost_bytes = (uint64_t)cfg.wcache_ost_mb << 20;
		fo.wcache.job_bytes = (uint64_t)cfg.wcache_job_mb << 20;
		fo.wcache.threads = (unsigned)cfg.wcache_threads;
		fo.wcache.age_ms = (unsigned)cfg.wcache_age_ms;
		fo.wcache_whole_stripes = cfg.wcache_whole_stripes;
	}
	if (cfg.ra_window_mb > 0 && cfg.ra_total_mb > 0) {
		fo.ra.window_bytes = (uint64_t)cfg.ra_window_mb << 20;
		fo.ra.total_bytes = (uint64_t)cfg.ra_total_mb << 20;
		fo.ra.threads = (unsigned)cfg.ra_threads;
	}
	fo.statahead = (unsigned)cfg.statahead;
	fo.statahead_max = (unsigned)cfg.statahead_max;
	fo.statahead_age_s = cfg.md_lease_s > cfg.attr_timeout_s ? cfg.md_lease_s
								 : cfg.attr_timeout_s;
	fo.async_unlink = cfg.async_unlink;
	fo.async_unlink_max = (unsigned)cfg.async_unlink_max;
	fo.async_unlink_nice = cfg.async_unlink_nice;
	fo.neg_local = cfg.neg_local;
	fo.async_create = cfg.async_create;
	fo.async_hold_ms = (unsigned)cfg.async_hold_ms;
	fo.killpriv_v2 = cfg.killpriv_v2;
	rc = cli_fs_create(mdc, osc, jobid, &fo, &fs);
	if (rc) {
		fprintf(stderr, "mount.pfs: %s\n", pfs_strerror(rc));
		status = MNT_EX_SYSERR;
		goto out;
	}
	snprintf(fopts, sizeof(fopts), "fsname=%s,subtype=pfs,max_read=%u%s%s%s",
		 cfg.fsname[0] ? cfg.fsname : spec, PFS_MAX_IO,
		 cfg.allow_other ? ",allow_other" : "",
		 cfg.default_permissions ? ",default_permissions" : "", cfg.ro ? ",ro" : "");
	se = fuse_session_new(&args, cli_fs_ops(), sizeof(struct fuse_lowlevel_ops), fs);
	if (!se) {
		fprintf(stderr, "mount.pfs: cannot create the FUSE session (options %s)\n", fopts);
		goto out;
	}
	if (fuse_set_signal_handlers(se)) {
		fprintf(stderr, "mount.pfs: cannot install signal handlers\n");
		status = MNT_EX_SYSERR;
		goto out;
	}
	handlers = 1;
	if (fuse_session_mount(se, mnt)) {
		fprintf(stderr, "mount.pfs: cannot mount on %s\n", mnt);
		goto out;
	}
	mounted = 1;
	rc = cli_fs_wire_io(fs, se);
	if (rc)
		pfs_log(PFS_LOG_WARNING, "killpriv_v2: libfuse refused custom /dev/fuse I/O (%s): "
			"off", pfs_strerror(rc));
	pfs_log(PFS_LOG_NOTICE, "pfs %s: mounted %s on %s (client id %016llx, OSS RPC timeout %d ms)",
		PFS_VERSION, spec, mnt, (unsigned long long)ro.client_id, oo.rpc.timeout_ms);
	/* The parent exits 0 here, after the mount exists; errors from now
	 * on are the daemon's to log. */
	if (foreground ? fuse_daemonize(1) : daemonize(cfg.pid_file, &pid_written)) {
		fprintf(stderr, "mount.pfs: cannot daemonize\n");
		status = MNT_EX_SYSERR;
		goto out;
	}
	if (!foreground) {
		/* stderr is /dev/null now. */
		if (!cfg.log[0] && pfs_log_open("syslog", err, sizeof(err)) == 0)
			pfs_log(PFS_LOG_NOTICE, "mounted %s on %s", spec, mnt);
		pfs_log_capture_stderr();
	} else if (cfg.pid_file[0]) {
		pid_written = write_pid_file(cfg.pid_file) == 0;
	}
	if (pthread_create(&hup_thread, NULL, hup_main, &hup) == 0)
		hup_started = 1;
	else
		pfs_log(PFS_LOG_WARNING, "no SIGHUP thread: the log file will not be reopened");
	/* PADLL's rate puller: a thread, so only now that this is the daemon
	 * (fork keeps no thread but the caller's). */
	/* The notify channel's thread, likewise the daemon's. */
	if (notify && cli_notify_start(notify, se))
		pfs_log(PFS_LOG_WARNING, "md_lease: no notify thread: names and attributes are "
			"cached for attr_timeout_s only");
	if (mdq && cli_mdqos_start(mdq))
		pfs_log(PFS_LOG_WARNING, "mdqos: no rate puller thread: metadata QoS rates stay as they are");
	/* After daemonizing (the thread must be the daemon's).  The credits
	 * read pol.weight_arg when a job first shows up on an OSS; no FUSE
	 * request has run yet. */
	{
		cli_qos_fetch_opts qf = { .poll_ms = (unsigned)cfg.qos_poll_ms,
					  .ascar = cfg.ascar, .weights = cfg.job_slots };

		if ((qf.ascar || qf.weights) && cli_qos_fetch_start(mdc, ascar, &qf, &qfetch) == 0)
			pol.weight_arg = qfetch;
	}
	if (cfg.splice) {
		/* libfuse falls back to read(2) silently when its pipe cannot
		 * hold a whole 1 MiB WRITE; say why the fast path is off. */
		FILE *pf = fopen("/proc/sys/fs/pipe-max-size", "r");
		unsigned long pmax = 0;

		if (pf) {
			if (fscanf(pf, "%lu", &pmax) != 1)
				pmax = 0;
			fclose(pf);
		}
		if (pmax && pmax < PFS_MAX_IO + 4096)
			pfs_log(PFS_LOG_NOTICE, "splice off: fs.pipe-max-size is %lu, needs %u "
				"(sysctl fs.pipe-max-size=2097152)", pmax, 2u * PFS_MAX_IO);
	}
	ra.mnt = mnt;
	ra.ra_kb = (unsigned)cfg.readahead_kb;
	ra.dirty_mb = cfg.writeback ? (unsigned)cfg.dirty_mb : 0;
	if ((ra.ra_kb || ra.dirty_mb) && pthread_create(&ra_thread, NULL, bdi_main, &ra) == 0)
		ra_started = 1;
	else if (ra.ra_kb || ra.dirty_mb)
		pfs_log(PFS_LOG_WARNING, "bdi: no thread: the kernel's readahead and dirty limit stay");
	lc = fuse_loop_cfg_create();
	if (!lc) {
		pfs_log(PFS_LOG_ERR, "out of memory for the session loop");
		status = MNT_EX_SYSERR;
		goto out;
	}
	fuse_loop_cfg_set_clone_fd(lc, (unsigned)cfg.clone_fd);
	fuse_loop_cfg_set_max_threads(lc, (unsigned)cfg.max_threads);
	fuse_loop_cfg_set_idle_threads(lc, (unsigned)(cfg.idle_threads < cfg.max_threads ?
						     cfg.idle_threads : cfg.max_threads));
	rc = fuse_session_loop_mt(se, lc);
	fuse_loop_cfg_destroy(lc);
	/* A positive value is the signal that ended the loop: a clean stop.
	 * mount(8) has long returned; this status is for -f and the logs. */
	status = rc < 0 ? MNT_EX_SYSERR : 0;
	if (rc < 0)
		pfs_log(PFS_LOG_ERR, "session loop failed: %s", strerror(-rc));
	else
		pfs_log(PFS_LOG_NOTICE, "unmounting %s", mnt);
	log_osc_stats(osc);
out:
	/* unlinks answered early go, and the directory delegations back,
	 * while the notify channel still stands */
	cli_fs_quiesce(fs);
	/* before the session goes: the thread invalidates through it */
	cli_notify_stop(notify);
	if (hup_started) {
		hup_stop = 1;
		pthread_kill(hup_thread, SIGHUP);
		pthread_join(hup_thread, NULL);
	}
	if (mounted)
		fuse_session_unmount(se);
	if (handlers)
		fuse_remove_signal_handlers(se);
	if (se)
		fuse_session_destroy(se);
	/* After the session: its stat has an answer or ENOTCONN by now. */
	if (ra_started)
		pthread_join(ra_thread, NULL);
	fuse_opt_free_args(&args);
	cli_fs_destroy(fs);
	cli_notify_destroy(notify);
	cli_osc_destroy(osc);
	cli_qos_fetch_stop(qfetch);
	cli_ascar_destroy(ascar);
	cli_mdqos_destroy(mdq);
	cli_mdc_destroy(mdc);
	cli_jobid_destroy(jobid);
	sodium_memzero(&key, sizeof(key));
	if (pid_written)
		unlink(cfg.pid_file);
	pfs_log_close();
	return status;
}
