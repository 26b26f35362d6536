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

typedef struct cli_jobid cli_jobid;

/* Create a resolver.  proc_root: "/proc" or a test tree (copied).  vars: a
 * list of variable names separated by ',' or ':' (NULL or "" = the default
 * list).  ttl_ms: how long a cached answer is used (0 = no caching).
 * slots: cache size (0 = 1024).  Returns 0, -EINVAL (bad list: empty name,
 * more than CLI_JOBID_MAX_VARS names) or -ENOMEM. */
int cli_jobid_create(const char *proc_root, const char *vars, unsigned ttl_ms, size_t slots,
		     cli_jobid **out);
void cli_jobid_destroy(cli_jobid *j);

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
