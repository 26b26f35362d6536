/* cgfs.h — the cgroup and sysfs files oss/blkio reads and writes: where a
 * cgroup hierarchy is mounted (mountinfo), which cgroup the calling thread
 * is in (/proc/thread-self/cgroup), which disk holds a block device
 * (/sys/dev/block), control-file writes, and moving tasks out of a cgroup
 * so it can be removed.
 *
 * Paths are taken as arguments so tests can hand in fake /proc and /sys
 * trees.  Every function is reentrant (no state); none logs.  Limits: a
 * mount point or root longer than PATH_MAX - 1 is ignored; a partition's
 * disk is found by the sysfs layout (partition directory inside its disk's
 * directory, which holds the `dev` file), not by a device-mapper or md
 * stack walk (a dm or md device is its own disk for blk-throttle). */
#ifndef OSS_CGFS_H
#define OSS_CGFS_H

#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct oss_cgfs_mount {
	int found;
	char point[PATH_MAX]; /* mount point, unescaped */
	char root[PATH_MAX];  /* path inside the hierarchy shown at point */
} oss_cgfs_mount;

/* Scan mountinfo for the first cgroup v1 mount whose super options carry
 * controller v1_ctl (e.g. "blkio") and the first cgroup2 mount; either may
 * be not found (found = 0).  0 or -errno of opening mountinfo. */
int oss_cgfs_find_mounts(const char *mountinfo, const char *v1_ctl, oss_cgfs_mount *v1,
			 oss_cgfs_mount *v2);

/* The directory of the calling thread's cgroup in hierarchy m, from cgfile
 * (/proc/thread-self/cgroup): the line whose controller list has ctl, or the
 * v2 line "0::" when ctl is "".  0, -ENOENT (no such line), -EXDEV (the
 * cgroup is not below the mount's root), -ENAMETOOLONG, or -errno of
 * opening cgfile. */
int oss_cgfs_own(const char *cgfile, const char *ctl, const oss_cgfs_mount *m, char *out,
		 size_t outlen);

/* The whole disk holding block device maj:min, from
 * <sysfs>/dev/block/MAJ:MIN (a partition has a `partition` file there and
 * its disk is the parent directory).  0, -ENODEV if maj:min is not a block
 * device (tmpfs, overlay, NFS, btrfs: anonymous devices), -EIO for a
 * malformed `dev` file, or -errno of a sysfs read. */
int oss_cgfs_whole_disk(const char *sysfs, unsigned maj, unsigned min, unsigned *disk_maj,
			unsigned *disk_min);

/* Read a small file whole into buf (NUL-terminated, one trailing newline
 * dropped, truncated to len - 1).  0 or -errno. */
int oss_cgfs_read(const char *path, char *buf, size_t len);
/* Write text to dir/file in one write(2): one command to a control file.
 * 0 or -errno (the kernel's verdict on the command). */
int oss_cgfs_write(const char *dir, const char *file, const char *text);
/* Move task tid into the cgroup whose `tasks` (v1) file is open as
 * tasks_fd.  0 or -errno (-ESRCH: no such task). */
int oss_cgfs_put_tid(int tasks_fd, pid_t tid);
/* Move every task of the cgroup at dir into to_fd's cgroup, then rmdir dir,
 * retrying for up to ~200 ms while exiting tasks keep it busy.  A missing
 * dir is success.  0 or -errno (-EBUSY: tasks could not be moved out). */
int oss_cgfs_remove(const char *dir, int to_fd);

#endif
