/* blkio.h — kernel-level enforcement of per-job OSS bandwidth with block
 * I/O cgroups: the I/O thread that serves a job's request joins that job's
 * cgroup for the request, and the cgroup carries the job's allocation as a
 * device throttle, so the disk itself holds the job to its rate.
 *
 * Hierarchy.  cgroup v1 with the blkio controller: one cgroup per job at
 * <blkio mount>/pfs-oss.<pid>/j.<job>, limits in blkio.throttle.read_bps_device
 * and write_bps_device ("MAJ:MIN BPS"), a thread moved by writing its tid to
 * `tasks`.  cgroup v2 is refused with -ENOTSUP: io is a domain controller,
 * and the kernel offers only threaded controllers (cpu, cpuset, perf_event,
 * pids) inside a threaded subtree, so v2 cannot throttle one thread apart
 * from the rest of its process.  oss_blkio_kind() therefore says "v1".
 *
 * Devices.  Each OST directory's st_dev is mapped through
 * /sys/dev/block/MAJ:MIN to its whole disk (a partition to its parent), the
 * unit blk-throttle keys its rules on; open checks that the kernel accepts a
 * rule for it.  A directory on tmpfs, overlay, NFS or btrfs (anonymous
 * st_dev) has no such disk: -ENODEV.  OSTs sharing one disk share its rule:
 * the job's limit on that disk is the sum of its non-zero limits on those
 * OSTs (0 everywhere = no rule).
 *
 * What is throttled.  Only bios a thread submits itself are charged to its
 * cgroup: O_DIRECT reads and writes, and reads that miss the page cache.
 * Buffered writes are flushed later by writeback threads outside the job's
 * cgroup (v1 has no writeback attribution) and are not limited, so the OSS
 * opens objects O_DIRECT when blkio is in use.  The throttle delays the
 * submitting thread, so an I/O thread held by a slow job serves no one else
 * meanwhile: give the OSS enough I/O threads.
 *
 * Lifetime.  Job cgroups are created by the first oss_blkio_set with a
 * non-zero limit and removed by oss_blkio_forget / oss_blkio_close.  A
 * crashed OSS leaves its pfs-oss.<pid> directory; oss_blkio_open removes
 * such directories whose pid no longer exists (pids are those of the
 * caller's pid namespace: OSSes in different pid namespaces must not share
 * a blkio hierarchy).  One oss_blkio per process (the directory is named by
 * pid): a second open in the same process fails with -EBUSY.
 *
 * Threads.  One oss_blkio serves all I/O threads of an OSS; every call is
 * thread-safe except close, which no other call may overlap.  Each thread
 * remembers in thread-local storage where it last put itself, so an
 * oss_blkio_enter that changes nothing costs a few compares and no system
 * call (~10 ns); a switch is one write(2) to `tasks` under the instance's
 * mutex (~5-20 us measured on a 6.18 kernel; the kernel serialises cgroup
 * migrations anyway).  A thread that forget or close moves out stays in the
 * opener's cgroup until its next enter.  Requires root (or write access to
 * the blkio hierarchy). */
#ifndef OSS_BLKIO_H
#define OSS_BLKIO_H

#include <stddef.h>
#include <stdint.h>

/* Longest job id in bytes (the protocol's PFS_JOBID_MAX), without the NUL. */
#define OSS_BLKIO_JOB_MAX 32

typedef struct oss_blkio oss_blkio;

/* Find the blkio hierarchy and the disks under the n_osts OST directories
 * (slot i is ost_dirs[i]; the strings are only read during the call),
 * remove stale pfs-oss.* directories and create this process's.  Returns 0
 * and *out (free with oss_blkio_close), or a negative errno with a one-line
 * reason in err (if errlen): -ENOTSUP (no usable hierarchy, cgroup v2),
 * -ENODEV (an OST not on a block device the throttle accepts), -EACCES
 * (not allowed to create cgroups), -EBUSY (already open in this process),
 * -EINVAL (n_osts == 0), or the errno of a failed stat/read.  The OSS logs
 * the reason and falls back to TBF enforcement. */
int oss_blkio_open(const char *const *ost_dirs, size_t n_osts, oss_blkio **out, char *err,
		   size_t errlen);
/* Move every thread out of the job cgroups (back to the cgroup of the thread
 * that called open), remove them and this process's pfs-oss.<pid>, and free.
 * Failures to remove are logged.  No other call on b may be in progress.
 * NULL is a no-op. */
void oss_blkio_close(oss_blkio *b);
/* "v1" (see above for v2).  The string is static. */
const char *oss_blkio_kind(const oss_blkio *b);

/* Set job's limits on OST slot `slot` in bytes/s, 0 = no limit in that
 * direction.  Creates the job's cgroup on first use with a non-zero limit
 * (all zero for an unknown job does nothing).  job: 1..OSS_BLKIO_JOB_MAX
 * arbitrary bytes, NUL-terminated (read only during the call).  0, -EINVAL
 * (bad job or slot), or the -errno of a cgroup operation (the previous
 * limits then stay recorded; the kernel may hold the new read limit only). */
int oss_blkio_set(oss_blkio *b, const char *job, size_t slot, uint64_t read_bps,
		  uint64_t write_bps);
/* Move the calling thread into job's cgroup; NULL, "", a job never set, or
 * a job whose limits are all 0 move it back to the cgroup of the thread that
 * called open.  No system call when the thread is already there.  0,
 * -EINVAL (job too long), or the -errno of the write to `tasks`. */
int oss_blkio_enter(oss_blkio *b, const char *job);
/* The job ended: move any thread still in its cgroup out (as above) and
 * remove the cgroup.  An unknown job is success.  0 or a negative errno
 * (-EBUSY if a task could not be moved out; the cgroup then stays known and
 * close retries). */
int oss_blkio_forget(oss_blkio *b, const char *job);

#endif
