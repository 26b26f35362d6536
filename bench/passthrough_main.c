/* passthrough_main.c — pfs-passthrough: a plain FUSE passthrough of a local
 * directory, the baseline that bench/run.sh compares pfs against (the FUSE
 * cost without any network or striping).
 *
 *   pfs-passthrough SOURCE_DIR MOUNTPOINT [FUSE options, e.g. -f]
 *
 * High-level libfuse API, path based, multi-threaded, with the same 1 MiB
 * max_write/max_read as mount.pfs so the kernel sends requests of the same
 * size to both.  No caching tricks: attribute/entry timeouts of 1 s as pfs. */
#define FUSE_USE_VERSION 35
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/time.h>
#include <unistd.h>

static char src_root[PATH_MAX];

/* Map a mount path to the source path. */
static int real(const char *path, char *out)
{
	int n = snprintf(out, PATH_MAX, "%s%s", src_root, path);

	return n < 0 || n >= PATH_MAX ? -ENAMETOOLONG : 0;
}

#define REAL(p, buf)                         \
	char buf[PATH_MAX];                  \
	do {                                 \
		int rc_ = real(p, buf);      \
		if (rc_)                     \
			return rc_;          \
	} while (0)

static void *pt_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	cfg->attr_timeout = 1.0;
	cfg->entry_timeout = 1.0;
	cfg->negative_timeout = 0;
	cfg->use_ino = 1;
	conn->max_write = 1 << 20;
	conn->max_read = 1 << 20; /* must match -o max_read */
	return NULL;
}

static int pt_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	int rc;

	if (fi)
		rc = fstat((int)fi->fh, st);
	else {
		REAL(path, p);
		rc = lstat(p, st);
	}
	return rc ? -errno : 0;
}

static int pt_readlink(const char *path, char *buf, size_t size)
{
	REAL(path, p);
	ssize_t n = readlink(p, buf, size - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

static int pt_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
		      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	REAL(path, p);
	DIR *d = opendir(p);
	struct dirent *e;

	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		struct stat st = { .st_ino = e->d_ino, .st_mode = (mode_t)(DTTOIF(e->d_type)) };
		if (fill(buf, e->d_name, &st, 0, 0))
			break;
	}
	closedir(d);
	return 0;
}

static int pt_mknod(const char *path, mode_t mode, dev_t rdev)
{
	REAL(path, p);
	return mknod(p, mode, rdev) ? -errno : 0;
}

static int pt_mkdir(const char *path, mode_t mode)
{
	REAL(path, p);
	return mkdir(p, mode) ? -errno : 0;
}

static int pt_unlink(const char *path)
{
	REAL(path, p);
	return unlink(p) ? -errno : 0;
}

static int pt_rmdir(const char *path)
{
	REAL(path, p);
	return rmdir(p) ? -errno : 0;
}

static int pt_symlink(const char *target, const char *path)
{
	REAL(path, p);
	return symlink(target, p) ? -errno : 0;
}

static int pt_rename(const char *from, const char *to, unsigned int flags)
{
	REAL(from, a);
	REAL(to, b);
	return renameat2(AT_FDCWD, a, AT_FDCWD, b, flags) ? -errno : 0;
}

static int pt_link(const char *from, const char *to)
{
	REAL(from, a);
	REAL(to, b);
	return link(a, b) ? -errno : 0;
}

static int pt_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	REAL(path, p);
	return chmod(p, mode) ? -errno : 0;
}

static int pt_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi)
{
	REAL(path, p);
	return lchown(p, uid, gid) ? -errno : 0;
}

static int pt_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	if (fi)
		return ftruncate((int)fi->fh, size) ? -errno : 0;
	REAL(path, p);
	return truncate(p, size) ? -errno : 0;
}

static int pt_utimens(const char *path, const struct timespec ts[2], struct fuse_file_info *fi)
{
	REAL(path, p);
	return utimensat(AT_FDCWD, p, ts, AT_SYMLINK_NOFOLLOW) ? -errno : 0;
}

static int pt_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	REAL(path, p);
	int fd = open(p, fi->flags, mode);
	if (fd < 0)
		return -errno;
	fi->fh = (uint64_t)fd;
	return 0;
}

static int pt_open(const char *path, struct fuse_file_info *fi)
{
	REAL(path, p);
	int fd = open(p, fi->flags);
	if (fd < 0)
		return -errno;
	fi->fh = (uint64_t)fd;
	return 0;
}

static int pt_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	ssize_t n = pread((int)fi->fh, buf, size, off);
	return n < 0 ? -errno : (int)n;
}

static int pt_write(const char *path, const char *buf, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	ssize_t n = pwrite((int)fi->fh, buf, size, off);
	return n < 0 ? -errno : (int)n;
}

static int pt_statfs(const char *path, struct statvfs *st)
{
	REAL(path, p);
	return statvfs(p, st) ? -errno : 0;
}

static int pt_release(const char *path, struct fuse_file_info *fi)
{
	close((int)fi->fh);
	return 0;
}

static int pt_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	int rc = datasync ? fdatasync((int)fi->fh) : fsync((int)fi->fh);
	return rc ? -errno : 0;
}

static const struct fuse_operations pt_ops = {
	.init = pt_init,
	.getattr = pt_getattr,
	.readlink = pt_readlink,
	.readdir = pt_readdir,
	.mknod = pt_mknod,
	.mkdir = pt_mkdir,
	.unlink = pt_unlink,
	.rmdir = pt_rmdir,
	.symlink = pt_symlink,
	.rename = pt_rename,
	.link = pt_link,
	.chmod = pt_chmod,
	.chown = pt_chown,
	.truncate = pt_truncate,
	.utimens = pt_utimens,
	.create = pt_create,
	.open = pt_open,
	.read = pt_read,
	.write = pt_write,
	.statfs = pt_statfs,
	.release = pt_release,
	.fsync = pt_fsync,
};

int main(int argc, char **argv)
{
	char *fargv[64];
	int fargc = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: pfs-passthrough SOURCE_DIR MOUNTPOINT [fuse options]\n");
		return 2;
	}
	if (!realpath(argv[1], src_root)) {
		perror(argv[1]);
		return 1;
	}
	fargv[fargc++] = argv[0];
	fargv[fargc++] = argv[2];
	fargv[fargc++] = "-o";
	fargv[fargc++] = "max_read=1048576,fsname=passthrough,allow_other,default_permissions";
	for (int i = 3; i < argc && fargc < 63; i++)
		fargv[fargc++] = argv[i];
	fargv[fargc] = NULL;
	umask(0);
	return fuse_main(fargc, fargv, &pt_ops, NULL);
}
