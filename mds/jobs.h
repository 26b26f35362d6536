/* jobs.h — the MDS job registry: the QoS unit's node count, priority,
 * throttle-friendliness and cap, kept in LMDB (a kv table of mds/ns.h) with
 * an in-memory copy for lookups on the request path.
 *
 * Two kinds of entries:
 *  - registered: PFS_OP_MDS_JOB_REGISTER (pfsadmin, a Slurm prolog), with
 *    owner uid, nodes, priority, limit, throttle_friendly; ended by
 *    PFS_OP_MDS_JOB_END (the epilog) and forgotten ended_keep_ns after.
 *  - automatic: a job id seen on the wire (any MDS request carrying it in
 *    its header) or in the OSS statistics the QoS controller collects, never
 *    registered: defaults nodes 1, priority 1, throttle-friendly, no limit
 *    (DESIGN.md: "unknown job ids seen on the wire are tracked with default
 *    weight").  At most max_auto of them exist; one idle (not seen) for
 *    auto_idle_ns is forgotten, so random job ids cannot grow the database
 *    without bound.  Beyond max_auto a new id is simply not recorded: the
 *    controller treats an unknown job with the same defaults.
 *
 * Who may do what: registering or ending a job takes root (uid 0) or the
 * job's owner; a non-root caller registers only jobs owned by itself.  The
 * uid is the caller's header uid (pfs_hdr.uid), which is the client's word
 * until node authentication exists (DESIGN.md "Trust", another issue): a
 * client that lies about its uid can register or end anybody's job.  An
 * automatic entry is owned by the uid of the first MDS request that carried
 * it (MDS_JOB_UID_UNKNOWN when it was first seen in OSS statistics, until an
 * MDS request tells).
 *
 * Limits: at most max_registered registered jobs (running or ended and not
 * yet forgotten); a registration beyond is -ENOSPC.  The defaults keep
 * JOB_LIST's reply (about 79 bytes a job) under PFS_MAX_PAYLOAD.  "Seen"
 * times are written back at most once an hour per job (mds_jobs_prune), so
 * an idle expiry after a restart is accurate to an hour.  A registered job
 * whose epilog never ran stays until an END.
 *
 * Thread-safe: one mutex guards the in-memory table; LMDB writes happen
 * under it (rare: registration, END, first sight of an id, prune). */
#ifndef MDS_JOBS_H
#define MDS_JOBS_H

#include <stddef.h>
#include <stdint.h>

#include "common/qosmsg.h"
#include "mds/ns.h"

typedef struct mds_jobs mds_jobs;

#define MDS_JOB_UID_UNKNOWN UINT32_MAX /* owner of an automatic entry not yet known */
#define MDS_JOB_NODES_MAX (1u << 24)
#define MDS_JOB_PRIORITY_MAX 1e6

typedef struct mds_jobs_opts {
	unsigned max_auto;        /* automatic entries kept; default 4096 */
	unsigned max_registered;  /* registered entries kept; default 8192 */
	int64_t auto_idle_ns;     /* forget an automatic entry idle this long; default 1 day */
	int64_t ended_keep_ns;    /* forget an ended job this long after END; default 7 days */
	/* CLOCK_REALTIME in ns; NULL = the real clock.  Tests drive time. */
	int64_t (*clock_ns)(void *arg);
	void *clock_arg;
} mds_jobs_opts;

/* Load the registry from ns (borrowed; must outlive it) and forget what is
 * due.  opts may be NULL (defaults).  Records that do not decode are
 * skipped with a warning.  0, -ENOMEM, -EIO. */
int mds_jobs_open(mds_ns *ns, const mds_jobs_opts *opts, mds_jobs **out);
void mds_jobs_close(mds_jobs *j);

/* PFS_OP_MDS_JOB_REGISTER by caller_uid: in->job, uid, nodes, priority,
 * limit, throttle_friendly are used; start/end/state/registered are the
 * MDS's (start = now; re-registering a running registered job updates it
 * and keeps its start).  -EINVAL (empty or long id, nodes 0 or above
 * MDS_JOB_NODES_MAX, priority not in (0, MDS_JOB_PRIORITY_MAX], limit
 * negative or not finite, flags above 1), -EPERM (see the header comment),
 * -ENOSPC (registry full), -EIO. */
int mds_jobs_register(mds_jobs *j, uint32_t caller_uid, const pfs_job_info *in);
/* PFS_OP_MDS_JOB_END: state ended, end = now (again on an ended job: no
 * change).  -ENOENT, -EPERM (not root, not the owner; an automatic entry of
 * unknown owner is root's), -EIO. */
int mds_jobs_end(mds_jobs *j, uint32_t caller_uid, const char *job);
/* Copy job's entry into *out; -ENOENT. */
int mds_jobs_get(mds_jobs *j, const char *job, pfs_job_info *out);
/* Every entry (all != 0) or the running ones, sorted by id, in a malloc'd
 * *out (caller frees; NULL when *n is 0).  0 or -ENOMEM. */
int mds_jobs_list(mds_jobs *j, int all, pfs_job_info **out, uint32_t *n);
/* A request or a statistics row carried job (uid: the header's, or
 * MDS_JOB_UID_UNKNOWN).  Known: its seen time moves (memory only).  New:
 * an automatic entry is written.  "" is ignored (0).  -ENOSPC when
 * max_auto entries exist (nothing recorded), -EINVAL for an id longer than
 * PFS_JOBID_MAX, -EIO. */
int mds_jobs_seen(mds_jobs *j, const char *job, uint32_t uid);
/* Forget automatic entries idle for auto_idle_ns and ended jobs older than
 * ended_keep_ns, and write back seen times that moved by an hour; one
 * write transaction, only when there is something to do.  *forgot (may be
 * NULL) gets the number of entries removed.  0 or -EIO (nothing changed). */
int mds_jobs_prune(mds_jobs *j, size_t *forgot);
/* Entries now: all of them, and the automatic ones. */
void mds_jobs_count(mds_jobs *j, size_t *total, size_t *automatic);

#endif
