/* posix_check.c — POSIX system-call checks against a mounted file system.
 *
 *   posix_check MOUNTPOINT
 *
 * Works in a fresh directory MOUNTPOINT/posix_check.PID (removed at the
 * end) and checks: create/write/read across stripes, truncate down and up,
 * sparse files (holes read as zeros), O_APPEND, rename over files and
 * directories (and RENAME_NOREPLACE), hard links (nlink), symlinks,
 * mkdir/rmdir/ENOTEMPTY, readdir of a large directory, xattrs, chmod/chown,
 * and, in a child that drops to uid/gid 65534, the permission refusals:
 * search permission on a parent whose name the kernel has cached (chmod,
 * chown, truncate, link, open below a directory made 0644), a FIFO's mode,
 * chown by a non-owner to the current owner and group, a write by a
 * non-owner to a set-id file (succeeds, bits cleared), ftruncate through a
 * writable descriptor of a file made 0444, and a refused truncate that
 * must leave the data intact.
 *
 *   posix_check MOUNTPOINT [mds-only]
 *
 * mds-only: the mount has no default_permissions, so the MDS alone checks;
 * FIFOs and device nodes are then not checked at all (the kernel never
 * sends OPEN for them) and that case is skipped.
 * Open-but-unlinked files on the same mount: read, write, fstat (nlink 0)
 * and fsync through a descriptor whose file was unlinked, and one whose
 * name was renamed over (the new file untouched).  fsync of a directory
 * after a rename in it, also as uid 65534 (check_fsyncdir).  Prints one line per check
 * and "N passed, M failed"; exits 1 if anything failed.
 *
 * Built by `make` into build/tests/tools/ (needs root for chown and the
 * uid switch; as another user those checks are reported as skipped). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

static int passed, failed;
static char base[2048];
static int mds_only; /* no default_permissions on this mount */

static void result(int ok, const char *name, const char *fmt, ...)
{
	va_list ap;

	if (ok) {
		passed++;
		printf("ok   %s\n", name);
		return;
	}
	failed++;
	printf("FAIL %s: ", name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

/* CHECK(name, cond): record, and say what errno was when it fails. */
#define CHECK(name, cond)                                                                   \
	do {                                                                                 \
		int ok_ = (cond), e_ = errno; /* before anything else can touch errno */    \
		result(ok_, (name), "%s (errno %d %s) at line %d", #cond, e_, strerror(e_),  \
		       __LINE__);                                                            \
	} while (0)

static char *p(const char *rel)
{
	static char bufs[8][4096];
	static int i;
	char *b = bufs[i++ % 8];

	snprintf(b, 4096, "%s/%s", base, rel);
	return b;
}

static void pattern(uint8_t *buf, size_t n, uint64_t seed)
{
	for (size_t i = 0; i < n; i++)
		buf[i] = (uint8_t)(((seed + i) * 2654435761u) >> 11);
}

static int write_file(const char *path, const void *data, size_t n, int flags, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | flags, mode);
	ssize_t w;

	if (fd < 0)
		return -1;
	w = write(fd, data, n);
	if (close(fd) || w != (ssize_t)n)
		return -1;
	return 0;
}

/* Read the whole file into a malloc'd buffer; *n = length; NULL on error. */
static uint8_t *read_file(const char *path, size_t *n)
{
	struct stat st;
	uint8_t *buf;
	size_t got = 0;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st)) {
		close(fd);
		return NULL;
	}
	buf = malloc((size_t)st.st_size + 1);
	while (buf && got < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	if (buf && got != (size_t)st.st_size) {
		free(buf);
		return NULL;
	}
	*n = got;
	return buf;
}

static int all_zero(const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (b[i])
			return 0;
	return 1;
}

static void check_rw(void)
{
	size_t n = (5u << 20) + 12345, got = 0;
	uint8_t *src = malloc(n), *dst;
	struct stat st;

	pattern(src, n, 1);
	CHECK("create+write 5 MiB", write_file(p("f1"), src, n, O_TRUNC, 0644) == 0);
	CHECK("stat size after close", stat(p("f1"), &st) == 0 && st.st_size == (off_t)n);
	dst = read_file(p("f1"), &got);
	CHECK("read back equal", dst && got == n && memcmp(src, dst, n) == 0);
	free(dst);

	/* Overwrite a range in the middle across a stripe boundary. */
	int fd = open(p("f1"), O_RDWR);
	uint8_t mid[300000];
	pattern(mid, sizeof(mid), 99);
	CHECK("pwrite middle", fd >= 0 && pwrite(fd, mid, sizeof(mid), (1u << 20) - 1000) ==
					       (ssize_t)sizeof(mid));
	memcpy(src + (1u << 20) - 1000, mid, sizeof(mid));
	uint8_t chk[300000];
	CHECK("pread middle (same fd)", pread(fd, chk, sizeof(chk), (1u << 20) - 1000) ==
						(ssize_t)sizeof(chk) && !memcmp(chk, mid, sizeof(mid)));
	CHECK("fsync", fsync(fd) == 0);
	close(fd);
	dst = read_file(p("f1"), &got);
	CHECK("read back after overwrite", dst && got == n && memcmp(src, dst, n) == 0);
	free(dst);

	/* Reading past EOF returns 0. */
	fd = open(p("f1"), O_RDONLY);
	CHECK("read at EOF is 0", fd >= 0 && pread(fd, chk, 10, (off_t)n) == 0);
	CHECK("short read at EOF", pread(fd, chk, 100, (off_t)n - 10) == 10);
	close(fd);

	/* O_EXCL on an existing file. */
	errno = 0;
	CHECK("O_EXCL existing -> EEXIST", open(p("f1"), O_CREAT | O_EXCL | O_WRONLY, 0644) < 0 &&
						     errno == EEXIST);
	/* O_TRUNC empties it. */
	fd = open(p("f1"), O_WRONLY | O_TRUNC);
	CHECK("O_TRUNC", fd >= 0 && fstat(fd, &st) == 0 && st.st_size == 0);
	close(fd);
	CHECK("O_TRUNC size after close", stat(p("f1"), &st) == 0 && st.st_size == 0);

	/* O_APPEND. */
	CHECK("append 1", write_file(p("ap"), "abc", 3, O_APPEND, 0644) == 0);
	CHECK("append 2", write_file(p("ap"), "defg", 4, O_APPEND, 0644) == 0);
	dst = read_file(p("ap"), &got);
	CHECK("append content", dst && got == 7 && !memcmp(dst, "abcdefg", 7));
	free(dst);
	free(src);
}

static void check_truncate_sparse(void)
{
	size_t n = 3u << 20, got;
	uint8_t *src = malloc(n), *dst;
	struct stat st;
	int fd;

	pattern(src, n, 7);
	CHECK("write for truncate", write_file(p("t"), src, n, O_TRUNC, 0644) == 0);
	fd = open(p("t"), O_RDWR);
	CHECK("ftruncate down", fd >= 0 && ftruncate(fd, 1500000) == 0);
	CHECK("size after ftruncate", fstat(fd, &st) == 0 && st.st_size == 1500000);
	close(fd);
	CHECK("truncate up", truncate(p("t"), 2500000) == 0);
	dst = read_file(p("t"), &got);
	CHECK("truncated content kept", dst && got == 2500000 && !memcmp(dst, src, 1500000));
	CHECK("grown part is zeros (no stale data)", dst && all_zero(dst + 1500000, 1000000));
	free(dst);
	CHECK("truncate to 0", truncate(p("t"), 0) == 0 && stat(p("t"), &st) == 0 &&
				       st.st_size == 0);

	/* Sparse: data only far out. */
	fd = open(p("sparse"), O_RDWR | O_CREAT | O_TRUNC, 0644);
	off_t far = (10 << 20) + 77;
	CHECK("pwrite far", fd >= 0 && pwrite(fd, "hole", 4, far) == 4);
	close(fd);
	CHECK("sparse size", stat(p("sparse"), &st) == 0 && st.st_size == far + 4);
	dst = read_file(p("sparse"), &got);
	CHECK("holes read as zeros", dst && got == (size_t)far + 4 && all_zero(dst, (size_t)far));
	CHECK("data after hole", dst && !memcmp(dst + far, "hole", 4));
	free(dst);
	free(src);
}

static void check_rename(void)
{
	size_t got;
	uint8_t *d;
	struct stat st;

	write_file(p("ra"), "AAAA", 4, O_TRUNC, 0644);
	write_file(p("rb"), "BB", 2, O_TRUNC, 0644);
	CHECK("rename over file", rename(p("ra"), p("rb")) == 0);
	d = read_file(p("rb"), &got);
	CHECK("target has source content", d && got == 4 && !memcmp(d, "AAAA", 4));
	free(d);
	errno = 0;
	CHECK("source gone", stat(p("ra"), &st) < 0 && errno == ENOENT);

	mkdir(p("d1"), 0755);
	mkdir(p("d2"), 0755);
	write_file(p("d1/x"), "x", 1, O_TRUNC, 0644);
	CHECK("rename dir over empty dir", rename(p("d1"), p("d2")) == 0);
	CHECK("moved dir content", stat(p("d2/x"), &st) == 0);
	mkdir(p("d3"), 0755);
	errno = 0;
	CHECK("rename dir over non-empty dir -> ENOTEMPTY/EEXIST",
	      rename(p("d3"), p("d2")) < 0 && (errno == ENOTEMPTY || errno == EEXIST));
	errno = 0;
	CHECK("rename file over dir -> EISDIR", rename(p("rb"), p("d3")) < 0 && errno == EISDIR);
	errno = 0;
	CHECK("rename dir over file -> ENOTDIR", rename(p("d3"), p("rb")) < 0 && errno == ENOTDIR);
	write_file(p("rc"), "C", 1, O_TRUNC, 0644);
	errno = 0;
	CHECK("RENAME_NOREPLACE -> EEXIST",
	      renameat2(AT_FDCWD, p("rc"), AT_FDCWD, p("rb"), RENAME_NOREPLACE) < 0 &&
	      errno == EEXIST);
	CHECK("rename into subdir", rename(p("rc"), p("d3/rc")) == 0 && stat(p("d3/rc"), &st) == 0);
	unlink(p("d2/x"));
	unlink(p("d3/rc"));
	rmdir(p("d2"));
	rmdir(p("d3"));
	unlink(p("rb"));
}

static void check_links(void)
{
	struct stat st;
	char buf[256];
	ssize_t n;
	size_t got;
	uint8_t *d;

	write_file(p("l1"), "linkdata", 8, O_TRUNC, 0644);
	CHECK("link", link(p("l1"), p("l2")) == 0);
	CHECK("nlink 2", stat(p("l1"), &st) == 0 && st.st_nlink == 2);
	struct stat st2;
	CHECK("same inode", stat(p("l2"), &st2) == 0 && st2.st_ino == st.st_ino);
	CHECK("unlink one name", unlink(p("l1")) == 0);
	CHECK("nlink 1", stat(p("l2"), &st) == 0 && st.st_nlink == 1);
	d = read_file(p("l2"), &got);
	CHECK("data via other name", d && got == 8 && !memcmp(d, "linkdata", 8));
	free(d);
	errno = 0;
	CHECK("link to existing -> EEXIST", link(p("l2"), p("l2")) < 0 && errno == EEXIST);

	CHECK("symlink", symlink("l2", p("s1")) == 0);
	n = readlink(p("s1"), buf, sizeof(buf));
	CHECK("readlink", n == 2 && !memcmp(buf, "l2", 2));
	CHECK("lstat is link", lstat(p("s1"), &st) == 0 && S_ISLNK(st.st_mode) && st.st_size == 2);
	CHECK("stat follows", stat(p("s1"), &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 8);
	CHECK("dangling symlink", symlink("nowhere", p("s2")) == 0);
	errno = 0;
	CHECK("stat dangling -> ENOENT", stat(p("s2"), &st) < 0 && errno == ENOENT);
	char longt[1024];
	memset(longt, 'y', sizeof(longt) - 1);
	longt[sizeof(longt) - 1] = 0;
	CHECK("long symlink target", symlink(longt, p("s3")) == 0 &&
					     readlink(p("s3"), buf, sizeof(buf)) == sizeof(buf));
	unlink(p("s1"));
	unlink(p("s2"));
	unlink(p("s3"));
	unlink(p("l2"));
	errno = 0;
	CHECK("unlink missing -> ENOENT", unlink(p("l2")) < 0 && errno == ENOENT);
}

static void check_dirs(void)
{
	struct stat st;
	DIR *d;
	struct dirent *de;
	int n = 0, dots = 0, fd;
	char name[64];

	CHECK("mkdir", mkdir(p("dd"), 0750) == 0);
	CHECK("mkdir mode", stat(p("dd"), &st) == 0 && S_ISDIR(st.st_mode) &&
				    (st.st_mode & 07777) == 0750);
	errno = 0;
	CHECK("mkdir existing -> EEXIST", mkdir(p("dd"), 0755) < 0 && errno == EEXIST);
	write_file(p("dd/f"), "", 0, O_TRUNC, 0644);
	errno = 0;
	CHECK("rmdir non-empty -> ENOTEMPTY", rmdir(p("dd")) < 0 && errno == ENOTEMPTY);
	errno = 0;
	CHECK("rmdir file -> ENOTDIR", rmdir(p("dd/f")) < 0 && errno == ENOTDIR);
	errno = 0;
	CHECK("unlink dir -> EISDIR", unlink(p("dd")) < 0 && (errno == EISDIR || errno == EPERM));
	unlink(p("dd/f"));
	CHECK("rmdir", rmdir(p("dd")) == 0);
	errno = 0;
	CHECK("rmdir missing -> ENOENT", rmdir(p("dd")) < 0 && errno == ENOENT);

	/* A directory larger than one READDIR page. */
	mkdir(p("big"), 0755);
	for (int i = 0; i < 1500; i++) {
		snprintf(name, sizeof(name), "big/entry-with-a-longish-name-%04d", i);
		fd = open(p(name), O_CREAT | O_WRONLY, 0644);
		if (fd >= 0)
			close(fd);
	}
	d = opendir(p("big"));
	while (d && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			dots++;
		else
			n++;
	}
	if (d)
		closedir(d);
	CHECK("readdir 1500 entries + . and ..", n == 1500 && dots == 2);
	for (int i = 0; i < 1500; i++) {
		snprintf(name, sizeof(name), "big/entry-with-a-longish-name-%04d", i);
		unlink(p(name));
	}
	CHECK("rmdir emptied big dir", rmdir(p("big")) == 0);
}

static void check_xattr_attr(void)
{
	char buf[256];
	ssize_t n;
	struct stat st;

	write_file(p("x"), "x", 1, O_TRUNC, 0644);
	CHECK("setxattr", setxattr(p("x"), "user.pfs", "value1", 6, 0) == 0);
	n = getxattr(p("x"), "user.pfs", buf, sizeof(buf));
	CHECK("getxattr", n == 6 && !memcmp(buf, "value1", 6));
	CHECK("getxattr size query", getxattr(p("x"), "user.pfs", NULL, 0) == 6);
	errno = 0;
	CHECK("getxattr small buffer -> ERANGE", getxattr(p("x"), "user.pfs", buf, 2) < 0 &&
							 errno == ERANGE);
	errno = 0;
	CHECK("XATTR_CREATE existing -> EEXIST",
	      setxattr(p("x"), "user.pfs", "v", 1, XATTR_CREATE) < 0 && errno == EEXIST);
	setxattr(p("x"), "user.other", "o", 1, 0);
	n = listxattr(p("x"), buf, sizeof(buf));
	int found = 0;
	for (ssize_t i = 0; n > 0 && i < n; i += (ssize_t)strlen(buf + i) + 1)
		found += !strcmp(buf + i, "user.pfs") + !strcmp(buf + i, "user.other");
	CHECK("listxattr", found == 2);
	CHECK("removexattr", removexattr(p("x"), "user.pfs") == 0);
	errno = 0;
	CHECK("getxattr removed -> ENODATA", getxattr(p("x"), "user.pfs", buf, sizeof(buf)) < 0 &&
						     errno == ENODATA);

	CHECK("chmod", chmod(p("x"), 0600) == 0 && stat(p("x"), &st) == 0 &&
			       (st.st_mode & 07777) == 0600);
	if (geteuid() == 0)
		CHECK("chown", chown(p("x"), 1234, 5678) == 0 && stat(p("x"), &st) == 0 &&
				       st.st_uid == 1234 && st.st_gid == 5678);
	struct timespec ts[2] = { { 1000000, 5 }, { 2000000, 7 } };
	CHECK("utimensat", utimensat(AT_FDCWD, p("x"), ts, 0) == 0 && stat(p("x"), &st) == 0 &&
				   st.st_mtim.tv_sec == 2000000 && st.st_atim.tv_sec == 1000000);
	unlink(p("x"));
}

/* In a child running as 65534: what it must not be able to do. */
static void check_permissions(void)
{
	int pipefd[2], status;
	pid_t pid;

	if (geteuid() != 0) {
		printf("skip permission checks (not root)\n");
		return;
	}
	write_file(p("secret"), "s", 1, O_TRUNC, 0600);
	write_file(p("public"), "pub", 3, O_TRUNC, 0644);
	mkdir(p("rootdir"), 0755);
	/* Root walks into its private directory first, so a client that
	 * caches names for everyone would let the child in. */
	mkdir(p("private"), 0700);
	write_file(p("private/f"), "hidden", 6, O_TRUNC, 0644);
	{
		struct stat pst;
		stat(p("private/f"), &pst);
	}
	mkdir(p("shared"), 01777);
	chmod(p("shared"), 01777);
	chmod(base, 0755);
	/* Issue 8: a directory that loses its x bits while the kernel still
	 * has its names cached (root stats them just before). */
	size_t glen = 2u << 20;
	uint8_t *gdata = malloc(glen);

	if (!gdata)
		return;
	pattern(gdata, glen, 42);
	mkdir(p("sx"), 0777);
	chmod(p("sx"), 0777);
	write_file(p("sx/f"), "abcdef", 6, O_TRUNC, 0666);
	chmod(p("sx/f"), 0666);
	CHECK("setup: chown sx/f to 65534", chown(p("sx/f"), 65534, 65534) == 0);
	write_file(p("sx/g"), gdata, glen, O_TRUNC, 0666);
	chmod(p("sx/g"), 0666);
	{
		struct stat xst;
		stat(p("sx/f"), &xst);
		stat(p("sx/g"), &xst);
	}
	CHECK("setup: chmod sx 0644", chmod(p("sx"), 0644) == 0);
	/* A FIFO only root may open; a root file for chown; set-id files
	 * everyone may write. */
	CHECK("setup: mkfifo 0600", mkfifo(p("fifo"), 0600) == 0 && chmod(p("fifo"), 0600) == 0);
	write_file(p("own"), "o", 1, O_TRUNC, 0644);
	write_file(p("suid"), "0123456789", 10, O_TRUNC, 0666);
	CHECK("setup: chmod 06777", chmod(p("suid"), 06777) == 0);
	write_file(p("sgid"), "0123456789", 10, O_TRUNC, 0666);
	CHECK("setup: chmod 02666", chmod(p("sgid"), 02666) == 0);
	if (pipe(pipefd)) {
		free(gdata);
		return;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int bad = 0, fd;
		char line[256];

#define CCHECK(name, cond)                                                                   \
	do {                                                                                 \
		int ok_ = (cond);                                                            \
		snprintf(line, sizeof(line), "%s %s (errno %d)\n", ok_ ? "ok  " : "FAIL", name, \
			 errno);                                                             \
		if (write(pipefd[1], line, strlen(line)) < 0)                                \
			_exit(2);                                                            \
		bad += !ok_;                                                                 \
	} while (0)
		close(pipefd[0]);
		/* Work from inside the test directory with relative names:
		 * the directories above the mount point (a 0700 mktemp -d) are
		 * not ours to open up, and a cwd keeps working after setresuid
		 * as it does for `cd MNT; setpriv ... cat f`. */
		if (chdir(base))
			_exit(3);
		if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(3);
		/* Positive control first: every refusal below would pass
		 * trivially if the child could not reach the directory at all
		 * (e.g. a 0700 directory above the mount point). */
		errno = 0;
		CCHECK("uid 65534: can reach the test directory", access(".", X_OK) == 0);
		if (access(".", X_OK))
			_exit(1);
		errno = 0;
		CCHECK("uid 65534: read 0600 file -> EACCES",
		       open("secret", O_RDONLY) < 0 && errno == EACCES);
		errno = 0;
		CCHECK("uid 65534: read a file in a 0700 dir -> EACCES",
		       open("private/f", O_RDONLY) < 0 && errno == EACCES);
		errno = 0;
		CCHECK("uid 65534: list a 0700 dir -> EACCES",
		       opendir("private") == NULL && errno == EACCES);
		errno = 0;
		CCHECK("uid 65534: write 0644 file -> EACCES",
		       open("public", O_WRONLY) < 0 && errno == EACCES);
		errno = 0;
		fd = open("public", O_RDONLY);
		CCHECK("uid 65534: read 0644 file", fd >= 0);
		if (fd >= 0)
			close(fd);
		errno = 0;
		CCHECK("uid 65534: create in 0755 root dir -> EACCES",
		       open("rootdir/new", O_CREAT | O_WRONLY, 0644) < 0 && errno == EACCES);
		errno = 0;
		CCHECK("uid 65534: unlink in root dir -> EACCES",
		       unlink("public") < 0 && errno == EACCES);
		errno = 0;
		CCHECK("uid 65534: chmod root's file -> EPERM",
		       chmod("public", 0777) < 0 && errno == EPERM);
		errno = 0;
		CCHECK("uid 65534: truncate root's file -> EACCES",
		       truncate("public", 0) < 0 && errno == EACCES);
		errno = 0;
		CCHECK("uid 65534: mkdir in root dir -> EACCES",
		       mkdir("rootdir/d", 0755) < 0 && errno == EACCES);
		errno = 0;
		CCHECK("uid 65534: create in 1777 dir",
		       (fd = open("shared/mine", O_CREAT | O_WRONLY, 0644)) >= 0 &&
		       write(fd, "m", 1) == 1 && close(fd) == 0);
		errno = 0;
		CCHECK("uid 65534: access(W_OK) on 0644 root file -> EACCES",
		       access("public", W_OK) < 0 && errno == EACCES);
		errno = 0;
		CCHECK("uid 65534: setxattr on root's file -> EACCES/EPERM",
		       setxattr("public", "user.y", "y", 1, 0) < 0 &&
		       (errno == EACCES || errno == EPERM));

		/* Search permission whatever the kernel has cached. */
		errno = 0;
		CCHECK("uid 65534: chmod own file in a 0644 dir -> EACCES",
		       chmod("sx/f", 0600) < 0 && errno == EACCES);
		errno = 0;
		CCHECK("uid 65534: chown own file in a 0644 dir -> EACCES",
		       chown("sx/f", 65534, 65534) < 0 && errno == EACCES);
		errno = 0;
		CCHECK("uid 65534: truncate 0666 file in a 0644 dir -> EACCES",
		       truncate("sx/g", 0) < 0 && errno == EACCES);
		errno = 0;
		CCHECK("uid 65534: link from a 0644 dir -> EACCES",
		       link("sx/f", "shared/lnk") < 0 && errno == EACCES);
		errno = 0;
		CCHECK("uid 65534: open a file in a 0644 dir -> EACCES",
		       open("sx/f", O_RDONLY) < 0 && errno == EACCES);
		if (!mds_only) {
			errno = 0;
			CCHECK("uid 65534: open root's 0600 FIFO -> EACCES",
			       open("fifo", O_RDONLY | O_NONBLOCK) < 0 && errno == EACCES);
		}
		/* chown rules without CAP_CHOWN. */
		errno = 0;
		CCHECK("uid 65534: chown root's file to its owner -> EPERM",
		       chown("own", 0, 0) < 0 && errno == EPERM);
		errno = 0;
		CCHECK("uid 65534: chgrp root's file to its group -> EPERM",
		       chown("own", (uid_t)-1, 0) < 0 && errno == EPERM);
		/* A write by a non-owner drops S_ISUID, and S_ISGID with
		 * group-exec; S_ISGID without group-exec stays. */
		{
			struct stat sst;

			errno = 0;
			fd = open("suid", O_WRONLY);
			CCHECK("uid 65534: write to a 06777 file succeeds",
			       fd >= 0 && write(fd, "abcd", 4) == 4 && close(fd) == 0);
			errno = 0;
			CCHECK("uid 65534: ... and clears S_ISUID and S_ISGID",
			       stat("suid", &sst) == 0 && (sst.st_mode & 07777) == 0777);
			errno = 0;
			fd = open("sgid", O_WRONLY);
			CCHECK("uid 65534: write to a 02666 file succeeds",
			       fd >= 0 && write(fd, "abcd", 4) == 4 && close(fd) == 0);
			errno = 0;
			CCHECK("uid 65534: ... and keeps S_ISGID (no group-exec)",
			       stat("sgid", &sst) == 0 && (sst.st_mode & 07777) == 02666);
		}
		/* ftruncate through a writable descriptor of a file whose mode
		 * no longer allows writing. */
		{
			struct stat tst;
			char buf100[100];

			memset(buf100, 'q', sizeof(buf100));
			errno = 0;
			fd = open("shared/tf", O_CREAT | O_RDWR, 0644);
			CCHECK("uid 65534: create+write shared/tf",
			       fd >= 0 && write(fd, buf100, sizeof(buf100)) == 100);
			errno = 0;
			CCHECK("uid 65534: ftruncate after fchmod 0444 succeeds",
			       fchmod(fd, 0444) == 0 && ftruncate(fd, 10) == 0 &&
			       fstat(fd, &tst) == 0 && tst.st_size == 10);
			if (fd >= 0)
				close(fd);
			unlink("shared/tf");
		}
		_exit(bad ? 1 : 0);
	}
	close(pipefd[1]);
	{
		char buf[4096];
		ssize_t n;
		FILE *f = fdopen(pipefd[0], "r");

		while (f && fgets(buf, sizeof(buf), f)) {
			n = (ssize_t)strlen(buf);
			if (n > 0 && buf[n - 1] == '\n')
				buf[n - 1] = 0;
			if (!strncmp(buf, "ok", 2))
				passed++;
			else
				failed++;
			printf("%s\n", buf);
		}
		if (f)
			fclose(f);
	}
	waitpid(pid, &status, 0);
	CHECK("child ran", WIFEXITED(status) && WEXITSTATUS(status) <= 1);
	{
		size_t got = 0;
		uint8_t *d = read_file(p("sx/g"), &got);
		struct stat fst;

		CHECK("refused truncate left the data intact",
		      d && got == glen && memcmp(d, gdata, glen) == 0);
		free(d);
		CHECK("refused chmod left the mode", stat(p("sx/f"), &fst) == 0 &&
							     (fst.st_mode & 07777) == 0666);
	}
	free(gdata);
	unlink(p("shared/lnk"));
	unlink(p("sx/f"));
	unlink(p("sx/g"));
	rmdir(p("sx"));
	unlink(p("fifo"));
	unlink(p("own"));
	unlink(p("suid"));
	unlink(p("sgid"));
	CHECK("root removes what 65534 made in the sticky dir", unlink(p("shared/mine")) == 0);
	unlink(p("secret"));
	unlink(p("public"));
	rmdir(p("rootdir"));
	unlink(p("private/f"));
	rmdir(p("private"));
	rmdir(p("shared"));
}

/* One descriptor whose file loses its last name (how: 0 unlink, 1 renamed
 * over) on this mount: the old bytes, writes, fstat nlink 0, fsync. */
static void check_open_unlinked_one(int how)
{
	const char *tag = how ? "renamed over" : "unlinked";
	const size_t n = 3u << 20; /* several stripes of 1M */
	uint8_t *w = malloc(n), *r = malloc(n);
	char name[160];
	struct stat st;
	size_t got = 0;
	int fd = -1;

	if (!w || !r) {
		result(0, "open-unlinked: memory", "malloc");
		goto out;
	}
	pattern(w, n, 4242 + (uint64_t)how);
	snprintf(name, sizeof(name), "open-unlinked (%s): setup", tag);
	CHECK(name, write_file(p("ou"), w, n, O_TRUNC, 0644) == 0 &&
		    (fd = open(p("ou"), O_RDWR)) >= 0);
	if (fd < 0)
		goto out;
	if (how) {
		snprintf(name, sizeof(name), "open-unlinked (%s): rename over it", tag);
		CHECK(name, write_file(p("ou.new"), "new file\n", 9, O_TRUNC, 0644) == 0 &&
			    rename(p("ou.new"), p("ou")) == 0);
	} else {
		snprintf(name, sizeof(name), "open-unlinked (%s): unlink", tag);
		CHECK(name, unlink(p("ou")) == 0 && stat(p("ou"), &st) < 0 && errno == ENOENT);
	}
	snprintf(name, sizeof(name), "open-unlinked (%s): fstat nlink 0, size kept", tag);
	CHECK(name, fstat(fd, &st) == 0 && st.st_nlink == 0 && (size_t)st.st_size == n);
	snprintf(name, sizeof(name), "open-unlinked (%s): read the old bytes", tag);
	memset(r, 0, n);
	while (got < n) {
		ssize_t k = pread(fd, r + got, n - got, (off_t)got);

		if (k <= 0)
			break;
		got += (size_t)k;
	}
	CHECK(name, got == n && memcmp(r, w, n) == 0);
	snprintf(name, sizeof(name), "open-unlinked (%s): write, fsync, read back", tag);
	CHECK(name, pwrite(fd, "tail after unlink", 17, (off_t)n) == 17 && fsync(fd) == 0 &&
		    pread(fd, r, 17, (off_t)n) == 17 && memcmp(r, "tail after unlink", 17) == 0);
	snprintf(name, sizeof(name), "open-unlinked (%s): fstat sees the write", tag);
	CHECK(name, fstat(fd, &st) == 0 && (size_t)st.st_size == n + 17 && st.st_nlink == 0);
	snprintf(name, sizeof(name), "open-unlinked (%s): close", tag);
	CHECK(name, close(fd) == 0);
	fd = -1;
	if (how) {
		uint8_t *c;

		snprintf(name, sizeof(name), "open-unlinked (%s): the new file untouched", tag);
		c = read_file(p("ou"), &got);
		CHECK(name, c && got == 9 && memcmp(c, "new file\n", 9) == 0);
		free(c);
		unlink(p("ou"));
	}
out:
	if (fd >= 0)
		close(fd);
	free(w);
	free(r);
}

static void check_open_unlinked(void)
{
	check_open_unlinked_one(0);
	check_open_unlinked_one(1);
}

/* Issue 8: fsync of a directory after a rename in it (FSYNCDIR, which
 * mount.pfs answers with MDS_SYNC; t_powerloss checks that it is durable):
 * it succeeds through a read-only directory descriptor, fdatasync too, and
 * the rename is what everyone sees after it.  As uid 65534 (a sync needs
 * no write permission): fsync of root's directory and of a file opened
 * read-only succeed. */
static void check_fsyncdir(void)
{
	struct stat st;
	int dfd, fd, status;
	pid_t pid;

	mkdir(p("fsd"), 0755);
	chmod(p("fsd"), 0755);
	CHECK("fsyncdir: setup, file written and fsync'ed",
	      write_file(p("fsd/a"), "durable", 7, O_TRUNC, 0644) == 0 &&
		      (fd = open(p("fsd/a"), O_RDWR)) >= 0 && fsync(fd) == 0 && close(fd) == 0);
	CHECK("fsyncdir: rename in the directory", rename(p("fsd/a"), p("fsd/b")) == 0);
	dfd = open(p("fsd"), O_RDONLY | O_DIRECTORY);
	CHECK("fsyncdir: fsync and fdatasync of the directory",
	      dfd >= 0 && fsync(dfd) == 0 && fdatasync(dfd) == 0);
	if (dfd >= 0)
		close(dfd);
	CHECK("fsyncdir: the new name is there, the old one gone",
	      stat(p("fsd/b"), &st) == 0 && st.st_size == 7 && stat(p("fsd/a"), &st) < 0 &&
		      errno == ENOENT);
	if (geteuid() == 0) {
		pid = fork();
		if (pid == 0) {
			/* relative names: the directories above the mount
			 * point are not ours to search (see check_permissions) */
			if (chdir(base) || setgroups(0, NULL) || setgid(65534) || setuid(65534))
				_exit(1);
			dfd = open("fsd", O_RDONLY | O_DIRECTORY);
			if (dfd < 0)
				_exit(2);
			if (fsync(dfd))
				_exit(errno < 100 ? 100 + errno : 3);
			fd = open("fsd/b", O_RDONLY);
			if (fd < 0)
				_exit(4);
			if (fsync(fd) || fdatasync(fd))
				_exit(errno < 100 ? 150 + errno : 5);
			_exit(0);
		}
		status = -1;
		if (pid > 0)
			waitpid(pid, &status, 0);
		/* exit 2/4: open failed; 100 + errno: fsync of the directory;
		 * 150 + errno: of the file */
		result(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		       "fsyncdir: uid 65534 fsyncs root's directory and a read-only file",
		       "child status 0x%x", (unsigned)status);
	}
	unlink(p("fsd/b"));
	rmdir(p("fsd"));
}

int main(int argc, char **argv)
{
	struct stat st;

	if (argc < 2 || argc > 3 || (argc == 3 && strcmp(argv[2], "mds-only"))) {
		fprintf(stderr, "usage: posix_check MOUNTPOINT [mds-only]\n");
		return 2;
	}
	mds_only = argc == 3;
	snprintf(base, sizeof(base), "%s/posix_check.%d", argv[1], (int)getpid());
	if (mkdir(base, 0755)) {
		fprintf(stderr, "posix_check: mkdir %s: %s\n", base, strerror(errno));
		return 2;
	}
	umask(022);
	check_rw();
	check_truncate_sparse();
	check_rename();
	check_links();
	check_dirs();
	check_xattr_attr();
	check_permissions();
	check_open_unlinked();
	check_fsyncdir();
	unlink(p("f1"));
	unlink(p("ap"));
	unlink(p("t"));
	unlink(p("sparse"));
	CHECK("test directory empty at the end", rmdir(base) == 0 && stat(base, &st) < 0);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
