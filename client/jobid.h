/* jobid.h — the job id of the process behind a request, as Lustre's jobid_var.
 *
 * The job id is the QoS unit carried in every request header.  It is taken
 * from the first of a configurable list of environment variables (default
 * SLURM_JOB_ID, then PFS_JOBID) found in /proc/PID/environ of the calling
 * process; without one it is "procname.uid" (comm from /proc/PID/comm and the
 * caller's uid), as Lustre's "%e.%u".  Results are truncated to
 * PFS_JOBID_MAX bytes.
 *
 * Reading /proc on every request would cost two opens and reads per FUSE
 * call, so results are cached per pid for a short TTL.  Pids are reused and a
 * process may change its comm, so the TTL bounds how long a stale answer can
 * live; entries also record the uid they were computed for.  The cache is a
 * fixed-size direct-mapped table (slot = hash(pid) % size): bounded memory,
 * O(1) lookup, and a colliding pid simply evicts the older entry.  All calls
 * are thread-safe (one mutex around the table; /proc is read outside it).
 *
 * Trusted source (jobid_source): the environment is the caller's to write, so
 * a job could spend another job's share by setting SLURM_JOB_ID.  Slurm puts
 * every job's processes in a cgroup the user cannot leave for another job's
 * (root-owned directories), so the job id is also taken from
 * /proc/PID/cgroup: cgroup v1 ".../slurm[_NODE]/uid_U/job_ID/..." on any
 * controller line, v2 ".../[NODE_]slurmstepd.scope/job_ID/..." or
 * ".../slurm[_NODE]/uid_U/job_ID/...", giving "ID" (the digits, exactly
 * what SLURM_JOB_ID holds, so QoS rules keep matching).  Lines naming
 * different jobs make the cgroup ambiguous: no job is taken from it, and
 * the environment is not trusted either (auto gives the default job).
 *   CLI_JOBID_AUTO    the cgroup's job when it names one, else the
 *                     environment, else the default (the default source);
 *   CLI_JOBID_CGROUP  the cgroup's job, else the default (never the env);
 *   CLI_JOBID_ENV     the environment, else the default (before cgroups);
 *   CLI_JOBID_BOTH    the environment, else the cgroup's job, else the
 *                     default (users may name sub-jobs with PFS_JOBID;
 *                     processes that dropped their environment, e.g.
 *                     after sudo or env -i, still count for their job).
 * The default job is "procname.uid" as above.
 *
 * Pid reuse: FUSE names the caller by pid only.  The caller's thread is
 * blocked in the request while it is resolved, so the pid is its own unless
 * it was killed meanwhile; /proc/PID is opened once and cgroup, environ and
 * comm are read relative to that directory, so a process that exits half
 * way gives errors (the default job), never a mix of two processes' files.
 * A cached answer can outlive its process by at most the TTL, and only for
 * a new process of the same uid that got the same pid (counted in the
 * tests; jobid_ttl_ms=0 turns the cache off).
 *
 * The /proc root is a parameter so tests can point it at a fake tree, and the
 * current time comes in as a parameter so the TTL is testable. */
#ifndef CLI_JOBID_H
#define CLI_JOBID_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/msg.h"
#include "common/proto.h"

#define CLI_JOBID_DEFAULT_VARS "SLURM_JOB_ID,PFS_JOBID"
#define CLI_JOBID_MAX_VARS 16

/* Where the job id comes from (see above). */
enum cli_jobid_source {
	CLI_JOBID_AUTO = 0,
	CLI_JOBID_CGROUP,
	CLI_JOBID_ENV,
	CLI_JOBID_BOTH,
};

typedef struct cli_jobid cli_jobid;

/* Create a resolver.  proc_root: "/proc" or a test tree (copied).  vars: a
 * list of variable names separated by ',' or ':' (NULL or "" = the default
 * list).  ttl_ms: how long a cached answer is used (0 = no caching).
 * slots: cache size (0 = 1024).  Returns 0, -EINVAL (bad list: empty name,
 * more than CLI_JOBID_MAX_VARS names) or -ENOMEM. */
int cli_jobid_create(const char *proc_root, const char *vars, unsigned ttl_ms, size_t slots,
		     cli_jobid **out);
void cli_jobid_destroy(cli_jobid *j);

/* "auto", "cgroup", "env" or "both" -> *out; 0 or -EINVAL. */
int cli_jobid_source_parse(const char *s, enum cli_jobid_source *out);
/* Choose the source (CLI_JOBID_AUTO after create).  Call before the first
 * cli_jobid_get (not synchronised with lookups). */
void cli_jobid_set_source(cli_jobid *j, enum cli_jobid_source src);

/* The Slurm job named by the text of a /proc/PID/cgroup file (buf[0..len),
 * need not be NUL-terminated) into out: 1 found, 0 none, -EBADMSG lines
 * naming different jobs.  Exposed for tests. */
int cli_jobid_parse_cgroup(const char *buf, size_t len, char out[PFS_JOBID_MAX + 1]);

/* Job id of process pid acting as uid, at time now_ms (any monotonic clock),
 * into out (NUL-terminated, at most PFS_JOBID_MAX bytes before the NUL).
 * Never fails: a process that vanished gets "unknown.UID", pid 0 (requests
 * the kernel makes on its own) gets "kernel.UID". */
void cli_jobid_get(cli_jobid *j, pid_t pid, uid_t uid, uint64_t now_ms,
		   char out[PFS_JOBID_MAX + 1]);

/* Supplementary groups of process pid (uid, primary gid) from the "Groups:"
 * line of /proc/PID/status, cached in the same per-pid slot and TTL as the
 * job id (libfuse's fuse_req_getgroups reads /proc on every call, which cost
 * a fifth of the client's CPU in a create benchmark).  Writes at most max
 * (<= PFS_MAX_GROUPS) ids; returns how many (0 if the process is gone).  A
 * process that changes its groups is seen with the new ones within the TTL. */
unsigned cli_jobid_groups(cli_jobid *j, pid_t pid, uid_t uid, gid_t gid, uint64_t now_ms,
			  uint32_t *groups, unsigned max);

/* Cache counters, for tests and statistics: hits and misses so far. */
void cli_jobid_counters(cli_jobid *j, uint64_t *hits, uint64_t *misses);

#endif
