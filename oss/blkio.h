/* blkio.h — kernel-level enforcement of per-job OSS bandwidth with block
 * I/O cgroups: the I/O thread that serves a job's request joins that job's
 * cgroup for the request, and the cgroup carries the job's allocation as a
 * device throttle, so the disk itself holds the job to its rate.
 *
 * Supports cgroup v1 (blkio controller: blkio.throttle.read_bps_device /
 * write_bps_device, threads moved by writing their tid to `tasks`) and
 * cgroup v2 where the io controller is enabled (io.max; threads need a
 * threaded subtree).  The device is found from the OST directory (st_dev,
 * mapped to the whole disk when it is a partition).  Cgroups live under
 * <mount>/pfs-oss.<pid>/<job> and are created on first use and removed by
 * oss_blkio_forget / oss_blkio_close (a crashed OSS leaves its directory;
 * the next start removes stale pfs-oss.* directories whose pid is gone).
 *
 * The throttle only bites on I/O that reaches the device from the thread's
 * own context, i.e. O_DIRECT (buffered writes are flushed by writeback
 * threads outside the cgroup): the OSS opens objects O_DIRECT when blkio is
 * in use.
 *
 * Thread-safe: one oss_blkio serves all I/O threads of an OSS. */
#ifndef OSS_BLKIO_H
#define OSS_BLKIO_H

#include <stddef.h>
#include <stdint.h>

typedef struct oss_blkio oss_blkio;

/* Find the cgroup hierarchy and the devices of the OST directories.
 * Returns 0, or -ENOTSUP / -ENODEV / -EACCES with a one-line reason in err
 * (the OSS logs it and falls back to TBF enforcement). */
int oss_blkio_open(const char *const *ost_dirs, size_t n_osts, oss_blkio **out, char *err,
		   size_t errlen);
/* Remove every job cgroup this OSS created (moving its threads back to the
 * parent first) and free.  NULL is a no-op. */
void oss_blkio_close(oss_blkio *b);
/* "v1" or "v2". */
const char *oss_blkio_kind(const oss_blkio *b);

/* Set job's limits on OST slot `slot` (its device) in bytes/s; 0 = no
 * limit.  Creates the job's cgroup on first use.  0 or a negative errno. */
int oss_blkio_set(oss_blkio *b, const char *job, size_t slot, uint64_t read_bps,
		  uint64_t write_bps);
/* Move the calling thread into job's cgroup (NULL or a job without limits:
 * back to the OSS's own cgroup).  Cheap when already there.  0 or -errno. */
int oss_blkio_enter(oss_blkio *b, const char *job);
/* The job ended: move any thread still in its cgroup out, remove it. */
int oss_blkio_forget(oss_blkio *b, const char *job);

#endif
