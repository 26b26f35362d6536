/* pfs_lazyfs.c — a FUSE layer for power-loss tests (like LazyFS): it
 * mirrors a backing directory, keeps every change that was not synced in
 * memory, and drops them all when the test says "crash".  No device-mapper
 * is needed; the backing directory plays the disk.
 *
 *   pfs_lazyfs BACKING_DIR MOUNTPOINT [FUSE options, e.g. -f]
 *   echo crash >MOUNTPOINT/.lazyfs_ctl    power off: drop unsynced changes
 *   echo sync  >MOUNTPOINT/.lazyfs_ctl    syncfs: make everything durable
 *   cat MOUNTPOINT/.lazyfs_ctl            stats (state, dirty_files, ...)
 *
 * Model.  At mount the backing tree is loaded into memory (one node per
 * inode; each regular file and directory keeps a descriptor to its backing
 * inode, hard links are one node).  Every operation through the mount acts
 * on the in-memory view only, which readers see at once (like a page
 * cache); the backing directory changes only when something is synced:
 *   - fsync/fdatasync of a file: its data, size, mode, owner and times go
 *     to its backing inode (fsync'ed).  Not its name: a new file that was
 *     fsync'ed lives in an unnamed O_TMPFILE inode until its directory is
 *     synced, so it is gone after a crash.
 *   - fsyncdir (fsync of a directory fd): the backing directory's entries
 *     are made equal to the in-memory ones (creates, unlinks, renames into
 *     or out of it, mkdir/rmdir, symlink, link), and the directory's mode
 *     and times; the directory itself is fsync'ed.  A file whose entry is
 *     added this way keeps its durable data (empty if never fsync'ed, like
 *     a size-0 inode after a journal commit without the data).  A directory
 *     that is not yet durable itself gets its own entry (and those of its
 *     ancestors) made durable first, as ext4 commits the mkdir with it.
 *   - rename: ext4's rule for directories (atomic: the move is applied in
 *     the backing tree when either the source or the target directory is
 *     synced); for files the conservative rule: the old name goes when the
 *     source directory is synced, the new name appears when the target
 *     directory is synced, so the rename is durable when both were synced
 *     after it (only the target synced: both names exist after a crash;
 *     only the source: the file is gone).
 *   - "sync" through the control file (the kernel sends no SYNCFS to a
 *     FUSE file system, so sync(1) and syncfs(2) cannot be seen here):
 *     every directory from the root down, then every file.  A clean
 *     unmount does the same.
 *   - "crash": every unsynced change is dropped, every backing descriptor
 *     closed (unnamed inodes vanish), and from then on every operation
 *     returns EIO (the control file still answers stats) until unmounted;
 *     the backing directory is then exactly what was durable.
 * Data is kept per 4 KiB page: a written page is filled from the durable
 * contents first; a truncate clips what may still be read from the backing
 * inode.  mmap works (no direct_io: the kernel page cache writes back
 * through WRITE and msync/fdatasync send FSYNC), so LMDB runs on top.
 * Open-unlinked files stay readable and writable (hard_remove; their
 * fsync has no durable name to reach).  fallocate supports plain extension
 * and PUNCH_HOLE|KEEP_SIZE (as zeros); no xattrs, no device nodes or FIFOs.
 * One big lock, no performance goals.  Needs root (fds of every file and
 * directory are held: the descriptor limit is raised to its hard maximum). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/time.h>
#include <unistd.h>

#define LZ_PAGE 4096
#define LZ_CTL ".lazyfs_ctl"

typedef struct lz_page {
	uint64_t idx;
	unsigned char *buf;
} lz_page;

typedef struct lz_node lz_node;

typedef struct lz_dirent {
	char *name;
	lz_node *node;
} lz_dirent;

struct lz_node {
	uint64_t ino;
	mode_t mode;
	uid_t uid;
	gid_t gid;
	struct timespec atime, mtime, ctime;
	unsigned nlink; /* names in the in-memory view */
	unsigned opens; /* open handles */
	int dfd;        /* backing inode (file: O_RDWR, dir: O_DIRECTORY), or -1 */
	ino_t bino;     /* its st_ino in the backing file system, 0 = none */
	int meta_dirty; /* mode/owner/times not yet durable */
	int data_dirty; /* file: data or size not yet durable */
	unsigned ns_dirty; /* dir: entry changes since it was last synced */
	/* regular file */
	off_t size;  /* current size */
	off_t clip;  /* backing bytes at or past clip read as zeros (<= dsize) */
	off_t dsize; /* durable size */
	lz_page *pages;
	size_t npages, pcap;
	/* directory */
	lz_dirent *ents;
	size_t nents, ecap;
	lz_node *parent;  /* in-memory location (NULL: root or removed) */
	char *name;
	lz_node *dparent; /* durable location (NULL: root or none) */
	char *dname;
	/* symlink */
	char *target;
	lz_node *prev, *next; /* every node */
};

typedef struct lz_fs {
	pthread_mutex_t lock;
	int crashed;
	int rootfd; /* backing root, for unnamed inodes */
	uint64_t next_ino;
	lz_node *root;
	lz_node *all;
	uint64_t syncs; /* durable syncs done (fsync, fsyncdir, sync) */
	int ctl_tag;    /* &ctl_tag is the control file's handle */
} lz_fs;

static lz_fs *FS(void)
{
	return fuse_get_context()->private_data;
}

static void now(struct timespec *ts)
{
	clock_gettime(CLOCK_REALTIME, ts);
}

/* ---- nodes ---- */

static lz_node *node_new(lz_fs *fs, mode_t mode)
{
	lz_node *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->ino = fs->next_ino++;
	n->mode = mode;
	n->dfd = -1;
	now(&n->mtime);
	n->atime = n->ctime = n->mtime;
	n->next = fs->all;
	if (fs->all)
		fs->all->prev = n;
	fs->all = n;
	return n;
}

static void node_drop_pages(lz_node *n, uint64_t from_idx)
{
	size_t keep = 0;

	while (keep < n->npages && n->pages[keep].idx < from_idx)
		keep++;
	for (size_t i = keep; i < n->npages; i++)
		free(n->pages[i].buf);
	n->npages = keep;
}

static void node_free(lz_fs *fs, lz_node *n)
{
	if (n->prev)
		n->prev->next = n->next;
	else
		fs->all = n->next;
	if (n->next)
		n->next->prev = n->prev;
	if (n->dfd >= 0)
		close(n->dfd);
	node_drop_pages(n, 0);
	free(n->pages);
	for (size_t i = 0; i < n->nents; i++)
		free(n->ents[i].name);
	free(n->ents);
	free(n->name);
	free(n->dname);
	free(n->target);
	free(n);
}

/* A file with no name and no handle is gone; directories stay allocated
 * until unmount (others may point at them as their durable parent). */
static void node_maybe_free(lz_fs *fs, lz_node *n)
{
	if (!S_ISDIR(n->mode) && n->nlink == 0 && n->opens == 0)
		node_free(fs, n);
}

static lz_dirent *dir_find(lz_node *d, const char *name)
{
	for (size_t i = 0; i < d->nents; i++)
		if (strcmp(d->ents[i].name, name) == 0)
			return &d->ents[i];
	return NULL;
}

static int dir_add(lz_node *d, const char *name, lz_node *n)
{
	char *nm;

	if (d->nents == d->ecap) {
		size_t cap = d->ecap ? d->ecap * 2 : 8;
		lz_dirent *e = realloc(d->ents, cap * sizeof(*e));

		if (!e)
			return -ENOMEM;
		d->ents = e;
		d->ecap = cap;
	}
	nm = strdup(name);
	if (!nm)
		return -ENOMEM;
	if (S_ISDIR(n->mode)) {
		char *nm2 = strdup(name);

		if (!nm2) {
			free(nm);
			return -ENOMEM;
		}
		free(n->name);
		n->name = nm2;
		n->parent = d;
	}
	d->ents[d->nents].name = nm;
	d->ents[d->nents].node = n;
	d->nents++;
	n->nlink++;
	d->ns_dirty++;
	now(&d->mtime);
	d->ctime = d->mtime;
	d->meta_dirty = 1;
	return 0;
}

/* Remove entry e of d; the node is freed when nothing holds it. */
static void dir_del(lz_fs *fs, lz_node *d, lz_dirent *e)
{
	lz_node *n = e->node;

	free(e->name);
	*e = d->ents[--d->nents];
	n->nlink--;
	if (S_ISDIR(n->mode) && n->nlink == 0)
		n->parent = NULL;
	d->ns_dirty++;
	now(&d->mtime);
	d->ctime = d->mtime;
	d->meta_dirty = 1;
	node_maybe_free(fs, n);
}

/* ---- paths ---- */

static int walk(lz_fs *fs, const char *path, lz_node **out)
{
	char buf[PATH_MAX], *save = NULL, *c;
	lz_node *n = fs->root;

	if (strlen(path) >= sizeof(buf))
		return -ENAMETOOLONG;
	strcpy(buf, path);
	for (c = strtok_r(buf, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		lz_dirent *e;

		if (!S_ISDIR(n->mode))
			return -ENOTDIR;
		e = dir_find(n, c);
		if (!e)
			return -ENOENT;
		n = e->node;
	}
	*out = n;
	return 0;
}

/* The directory holding path's last component, and that component. */
static int walk_parent(lz_fs *fs, const char *path, lz_node **dir, const char **name)
{
	char buf[PATH_MAX];
	const char *slash = strrchr(path, '/');
	size_t len;
	int rc;

	if (!slash || !slash[1])
		return -EINVAL;
	len = (size_t)(slash - path);
	if (len >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, len);
	buf[len] = 0;
	rc = walk(fs, buf, dir);
	if (rc)
		return rc;
	if (!S_ISDIR((*dir)->mode))
		return -ENOTDIR;
	if (strlen(slash + 1) > NAME_MAX)
		return -ENAMETOOLONG;
	*name = slash + 1;
	return 0;
}

static int is_ctl(const char *path)
{
	return path && strcmp(path, "/" LZ_CTL) == 0;
}

/* ---- file data: dirty pages over the durable inode ---- */

static lz_page *page_find(lz_node *n, uint64_t idx, size_t *pos)
{
	size_t lo = 0, hi = n->npages;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (n->pages[mid].idx < idx)
			lo = mid + 1;
		else
			hi = mid;
	}
	*pos = lo;
	return lo < n->npages && n->pages[lo].idx == idx ? &n->pages[lo] : NULL;
}

/* Read the durable view of [off, off+len) (zeros at or past clip). */
static int durable_read(lz_node *n, char *buf, size_t len, off_t off)
{
	size_t got = 0;

	memset(buf, 0, len);
	if (n->dfd < 0 || off >= n->clip)
		return 0;
	if ((off_t)len > n->clip - off)
		len = (size_t)(n->clip - off);
	while (got < len) {
		ssize_t r = pread(n->dfd, buf + got, len - got, off + (off_t)got);

		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return 0;
}

/* The dirty page idx, created from the durable view if needed. */
static int page_get(lz_node *n, uint64_t idx, lz_page **out)
{
	size_t pos;
	lz_page *p = page_find(n, idx, &pos);
	unsigned char *buf;
	int rc;

	if (p) {
		*out = p;
		return 0;
	}
	if (n->npages == n->pcap) {
		size_t cap = n->pcap ? n->pcap * 2 : 16;
		lz_page *np = realloc(n->pages, cap * sizeof(*np));

		if (!np)
			return -ENOMEM;
		n->pages = np;
		n->pcap = cap;
	}
	buf = malloc(LZ_PAGE);
	if (!buf)
		return -ENOMEM;
	rc = durable_read(n, (char *)buf, LZ_PAGE, (off_t)(idx * LZ_PAGE));
	if (rc) {
		free(buf);
		return rc;
	}
	memmove(&n->pages[pos + 1], &n->pages[pos], (n->npages - pos) * sizeof(*p));
	n->pages[pos].idx = idx;
	n->pages[pos].buf = buf;
	n->npages++;
	*out = &n->pages[pos];
	return 0;
}

static int file_read(lz_node *n, char *buf, size_t len, off_t off)
{
	size_t done = 0;

	if (off >= n->size)
		return 0;
	if ((off_t)len > n->size - off)
		len = (size_t)(n->size - off);
	while (done < len) {
		off_t pos = off + (off_t)done;
		uint64_t idx = (uint64_t)pos / LZ_PAGE;
		size_t in = (size_t)(pos % LZ_PAGE), chunk = LZ_PAGE - in, ppos;
		lz_page *p = page_find(n, idx, &ppos);

		if (chunk > len - done)
			chunk = len - done;
		if (p) {
			memcpy(buf + done, p->buf + in, chunk);
		} else {
			int rc = durable_read(n, buf + done, chunk, pos);

			if (rc)
				return rc;
		}
		done += chunk;
	}
	return (int)done;
}

/* Overwrite [off, off+len) with buf (NULL: zeros). */
static int file_write(lz_node *n, const char *buf, size_t len, off_t off)
{
	size_t done = 0;

	while (done < len) {
		off_t pos = off + (off_t)done;
		size_t in = (size_t)(pos % LZ_PAGE), chunk = LZ_PAGE - in;
		lz_page *p;
		int rc = page_get(n, (uint64_t)pos / LZ_PAGE, &p);

		if (rc)
			return rc;
		if (chunk > len - done)
			chunk = len - done;
		if (buf)
			memcpy(p->buf + in, buf + done, chunk);
		else
			memset(p->buf + in, 0, chunk);
		done += chunk;
	}
	if (off + (off_t)len > n->size)
		n->size = off + (off_t)len;
	n->data_dirty = 1;
	return (int)len;
}

static void file_truncate(lz_node *n, off_t size)
{
	if (size < n->size) {
		uint64_t idx = (uint64_t)size / LZ_PAGE;
		size_t pos;
		lz_page *p;

		node_drop_pages(n, idx + (size % LZ_PAGE ? 1 : 0));
		p = page_find(n, idx, &pos);
		if (p)
			memset(p->buf + size % LZ_PAGE, 0, LZ_PAGE - (size_t)(size % LZ_PAGE));
		if (size < n->clip)
			n->clip = size;
	}
	n->size = size;
	n->data_dirty = 1;
}

/* ---- making things durable ---- */

static int write_all(int fd, const unsigned char *buf, size_t len, off_t off)
{
	while (len) {
		ssize_t w = pwrite(fd, buf, len, off);

		if (w < 0)
			return -errno;
		buf += w;
		len -= (size_t)w;
		off += w;
	}
	return 0;
}

static int apply_meta(lz_node *n)
{
	struct timespec ts[2] = { n->atime, n->mtime };

	if (fchmod(n->dfd, n->mode & 07777) || fchown(n->dfd, n->uid, n->gid) ||
	    futimens(n->dfd, ts))
		return -errno;
	n->meta_dirty = 0;
	return 0;
}

/* A new unnamed backing inode for file n (O_TMPFILE, linkable later),
 * holding the first len bytes of from (-1: none). */
static int file_new_inode(lz_fs *fs, lz_node *n, int from, off_t len)
{
	struct stat st;
	int fd = openat(fs->rootfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, n->mode & 07777);
	off_t off = 0;

	if (fd < 0)
		return -errno;
	while (from >= 0 && off < len) {
		unsigned char buf[65536];
		ssize_t r = pread(from, buf, sizeof(buf), off);
		int rc;

		if (r <= 0) {
			rc = r < 0 ? -errno : -EIO;
			close(fd);
			return rc;
		}
		rc = write_all(fd, buf, (size_t)r, off);
		if (rc) {
			close(fd);
			return rc;
		}
		off += r;
	}
	if (fstat(fd, &st) || fchown(fd, n->uid, n->gid)) {
		int rc = -errno;

		close(fd);
		return rc;
	}
	if (n->dfd >= 0)
		close(n->dfd);
	n->dfd = fd;
	n->bino = st.st_ino;
	n->dsize = from >= 0 ? len : 0;
	if (from < 0)
		n->clip = 0;
	return 0;
}

/* fsync: data, size and attributes of file n to its backing inode. */
static int file_sync(lz_fs *fs, lz_node *n)
{
	int rc;

	if (n->dfd < 0) {
		rc = file_new_inode(fs, n, -1, 0);
		if (rc)
			return rc;
	}
	if (n->clip < n->dsize && ftruncate(n->dfd, n->clip))
		return -errno;
	if (ftruncate(n->dfd, n->size))
		return -errno;
	for (size_t i = 0; i < n->npages; i++) {
		off_t off = (off_t)(n->pages[i].idx * LZ_PAGE);
		size_t len = LZ_PAGE;

		if (off >= n->size)
			break;
		if ((off_t)len > n->size - off)
			len = (size_t)(n->size - off);
		rc = write_all(n->dfd, n->pages[i].buf, len, off);
		if (rc)
			return rc;
	}
	rc = apply_meta(n);
	if (rc)
		return rc;
	if (fsync(n->dfd))
		return -errno;
	node_drop_pages(n, 0);
	n->dsize = n->clip = n->size;
	n->data_dirty = 0;
	fs->syncs++;
	return 0;
}

static lz_node *live_dir_by_bino(lz_fs *fs, ino_t bino)
{
	for (lz_node *n = fs->all; n; n = n->next)
		if (S_ISDIR(n->mode) && n->bino == bino && n->nlink && n->dfd >= 0)
			return n;
	return NULL;
}

static lz_node *live_file_by_bino(lz_fs *fs, ino_t bino)
{
	for (lz_node *n = fs->all; n; n = n->next)
		if (!S_ISDIR(n->mode) && n->bino == bino && n->dfd >= 0)
			return n;
	return NULL;
}

static int dir_durable(lz_fs *fs, lz_node *d);
static int place(lz_fs *fs, lz_node *d, const char *name, lz_node *n);

/* Remove backing entry d/name (a stale one): a directory still alive
 * elsewhere in memory is moved there (rename is atomic); a dead one is
 * emptied the same way, then removed; the last backing name of a file
 * still named in memory is first replaced by an unnamed copy (so a later
 * place() can link it). */
static int unplace(lz_fs *fs, lz_node *d, const char *name)
{
	struct stat st;

	if (fstatat(d->dfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return errno == ENOENT ? 0 : -errno;
	if (S_ISDIR(st.st_mode)) {
		lz_node *x = live_dir_by_bino(fs, st.st_ino);
		int fd, rc = 0;
		DIR *dp;
		struct dirent *de;

		if (x && x->parent && !(x->parent == d && strcmp(x->name, name) == 0)) {
			rc = dir_durable(fs, x->parent);
			return rc ? rc : place(fs, x->parent, x->name, x);
		}
		fd = openat(d->dfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		dp = fdopendir(fd);
		if (!dp) {
			close(fd);
			return -errno;
		}
		{
			lz_node tmp = { .dfd = fd, .mode = S_IFDIR };

			while (!rc && (de = readdir(dp))) {
				if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
					continue;
				rc = unplace(fs, &tmp, de->d_name);
				if (!rc)
					rewinddir(dp);
			}
		}
		closedir(dp);
		if (rc)
			return rc;
		if (unlinkat(d->dfd, name, AT_REMOVEDIR))
			return -errno;
		return 0;
	}
	if (S_ISREG(st.st_mode) && st.st_nlink == 1) {
		lz_node *x = live_file_by_bino(fs, st.st_ino);

		if (x && x->nlink) {
			int rc = file_new_inode(fs, x, x->dfd, x->dsize);

			if (rc)
				return rc;
		}
	}
	if (unlinkat(d->dfd, name, 0))
		return -errno;
	return 0;
}

/* Make the single backing entry d/name point at n (d is durable). */
static int place(lz_fs *fs, lz_node *d, const char *name, lz_node *n)
{
	struct stat st;
	char proc[64];
	int rc;

	if (fstatat(d->dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (n->bino && st.st_ino == n->bino &&
		    (st.st_mode & S_IFMT) == (n->mode & S_IFMT))
			return 0;
		rc = unplace(fs, d, name);
		if (rc)
			return rc;
	}
	if (S_ISREG(n->mode)) {
		if (n->dfd < 0) {
			rc = file_new_inode(fs, n, -1, 0);
			if (rc)
				return rc;
		}
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", n->dfd);
		if (linkat(AT_FDCWD, proc, d->dfd, name, AT_SYMLINK_FOLLOW))
			return -errno;
	} else if (S_ISDIR(n->mode)) {
		if (n->dfd >= 0 && n->dparent && n->dparent->dfd >= 0) {
			char *nm = strdup(name);

			if (!nm)
				return -ENOMEM;
			if (renameat(n->dparent->dfd, n->dname, d->dfd, name)) {
				free(nm);
				return -errno;
			}
			free(n->dname);
			n->dname = nm;
			n->dparent = d;
		} else {
			char *nm = strdup(name);
			int fd;

			if (!nm)
				return -ENOMEM;
			if (mkdirat(d->dfd, name, n->mode & 07777) ||
			    (fd = openat(d->dfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
				free(nm);
				return -errno;
			}
			if (n->dfd >= 0)
				close(n->dfd);
			n->dfd = fd;
			if (fstat(fd, &st) || fchown(fd, n->uid, n->gid)) {
				free(nm);
				return -errno;
			}
			n->bino = st.st_ino;
			free(n->dname);
			n->dname = nm;
			n->dparent = d;
		}
	} else if (S_ISLNK(n->mode)) {
		if (symlinkat(n->target, d->dfd, name) ||
		    fstatat(d->dfd, name, &st, AT_SYMLINK_NOFOLLOW) ||
		    fchownat(d->dfd, name, n->uid, n->gid, AT_SYMLINK_NOFOLLOW))
			return -errno;
		n->bino = st.st_ino;
	} else {
		return -EOPNOTSUPP;
	}
	return 0;
}

/* Make directory d's own entry (and its ancestors') durable. */
static int dir_durable(lz_fs *fs, lz_node *d)
{
	int rc;

	if (d->dfd >= 0 && (d == fs->root || d->dparent))
		return 0;
	if (!d->parent)
		return -ENOENT; /* removed: nothing to make durable */
	rc = dir_durable(fs, d->parent);
	if (rc)
		return rc;
	rc = place(fs, d->parent, d->name, d);
	if (rc)
		return rc;
	return fsync(d->parent->dfd) ? -errno : 0;
}

/* fsyncdir: the backing entries of d become its in-memory entries. */
static int dir_sync(lz_fs *fs, lz_node *d)
{
	int rc, fd;
	DIR *dp;
	struct dirent *de;

	rc = dir_durable(fs, d);
	if (rc)
		return rc == -ENOENT ? 0 : rc;
	/* Stale backing entries first (rewind after each change). */
	fd = openat(d->dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	dp = fdopendir(fd);
	if (!dp) {
		close(fd);
		return -errno;
	}
	while (!rc && (de = readdir(dp))) {
		lz_dirent *e;
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		e = dir_find(d, de->d_name);
		if (fstatat(d->dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW))
			continue;
		if (e && e->node->bino == st.st_ino &&
		    (e->node->mode & S_IFMT) == (st.st_mode & S_IFMT))
			continue;
		rc = unplace(fs, d, de->d_name);
		if (!rc)
			rewinddir(dp);
	}
	closedir(dp);
	for (size_t i = 0; !rc && i < d->nents; i++)
		rc = place(fs, d, d->ents[i].name, d->ents[i].node);
	if (!rc)
		rc = apply_meta(d);
	if (!rc && fsync(d->dfd))
		rc = -errno;
	if (!rc) {
		d->ns_dirty = 0;
		fs->syncs++;
	}
	return rc;
}

/* Every directory from the root down, then every file. */
static int sync_tree(lz_fs *fs, lz_node *d)
{
	int rc = dir_sync(fs, d);

	for (size_t i = 0; !rc && i < d->nents; i++)
		if (S_ISDIR(d->ents[i].node->mode))
			rc = sync_tree(fs, d->ents[i].node);
	return rc;
}

static int sync_all(lz_fs *fs)
{
	int rc = sync_tree(fs, fs->root);

	for (lz_node *n = fs->all; !rc && n; n = n->next)
		if (S_ISREG(n->mode) && n->nlink && (n->data_dirty || n->meta_dirty || n->dfd < 0))
			rc = file_sync(fs, n);
	if (!rc && syncfs(fs->rootfd))
		rc = -errno;
	return rc;
}

static void crash(lz_fs *fs)
{
	fs->crashed = 1;
	for (lz_node *n = fs->all; n; n = n->next) {
		if (n->dfd >= 0)
			close(n->dfd);
		n->dfd = -1;
		node_drop_pages(n, 0);
	}
	if (fs->rootfd >= 0)
		close(fs->rootfd);
	fs->rootfd = -1;
}

/* ---- loading the backing tree ---- */

static int load_dir(lz_fs *fs, lz_node *d);

static int load_entry(lz_fs *fs, lz_node *d, const char *name)
{
	struct stat st;
	lz_node *n = NULL;
	int rc;

	if (fstatat(d->dfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return -errno;
	if (d == fs->root && strcmp(name, LZ_CTL) == 0)
		return 0;
	if (S_ISREG(st.st_mode) && st.st_nlink > 1)
		n = live_file_by_bino(fs, st.st_ino);
	if (!n) {
		if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode) && !S_ISLNK(st.st_mode)) {
			fprintf(stderr, "pfs_lazyfs: skipping %s (not a file, directory or symlink)\n",
				name);
			return 0;
		}
		n = node_new(fs, st.st_mode);
		if (!n)
			return -ENOMEM;
		n->uid = st.st_uid;
		n->gid = st.st_gid;
		n->atime = st.st_atim;
		n->mtime = st.st_mtim;
		n->ctime = st.st_ctim;
		n->bino = st.st_ino;
		if (S_ISREG(st.st_mode)) {
			n->dfd = openat(d->dfd, name, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
			n->size = n->clip = n->dsize = st.st_size;
		} else if (S_ISDIR(st.st_mode)) {
			n->dfd = openat(d->dfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			n->dparent = d;
			n->dname = strdup(name);
			if (!n->dname)
				return -ENOMEM;
		} else {
			char buf[PATH_MAX];
			ssize_t len = readlinkat(d->dfd, name, buf, sizeof(buf) - 1);

			if (len < 0)
				return -errno;
			buf[len] = 0;
			n->target = strdup(buf);
			if (!n->target)
				return -ENOMEM;
		}
		if (!S_ISLNK(st.st_mode) && n->dfd < 0)
			return -errno;
	}
	rc = dir_add(d, name, n);
	if (rc)
		return rc;
	return S_ISDIR(n->mode) ? load_dir(fs, n) : 0;
}

static int load_dir(lz_fs *fs, lz_node *d)
{
	int fd = openat(d->dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc = 0;
	struct timespec mtime = d->mtime, ctime = d->ctime;
	DIR *dp;
	struct dirent *de;

	if (fd < 0)
		return -errno;
	dp = fdopendir(fd);
	if (!dp) {
		close(fd);
		return -errno;
	}
	while (!rc && (de = readdir(dp)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			rc = load_entry(fs, d, de->d_name);
	closedir(dp);
	d->ns_dirty = 0;
	d->meta_dirty = 0;
	d->mtime = mtime; /* dir_add stamped them */
	d->ctime = ctime;
	return rc;
}

/* ---- FUSE operations (all under fs->lock) ---- */

/* Run body under the lock (EIO once crashed); needs fs in scope. */
#define LOCKED(body)                                      \
	do {                                              \
		int rc_;                                  \
		pthread_mutex_lock(&fs->lock);            \
		rc_ = fs->crashed ? -EIO : (body);        \
		pthread_mutex_unlock(&fs->lock);          \
		return rc_;                               \
	} while (0)

static lz_node *fh_node(struct fuse_file_info *fi)
{
	return (lz_node *)(uintptr_t)fi->fh;
}

/* The node of path, or of the open handle when there is one. */
static int get_node(lz_fs *fs, const char *path, struct fuse_file_info *fi, lz_node **n)
{
	if (fi && fi->fh) {
		*n = fh_node(fi);
		return 0;
	}
	if (!path)
		return -ENOENT;
	return walk(fs, path, n);
}

static void fill_stat(const lz_node *n, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = n->ino;
	st->st_mode = n->mode;
	st->st_uid = n->uid;
	st->st_gid = n->gid;
	st->st_atim = n->atime;
	st->st_mtim = n->mtime;
	st->st_ctim = n->ctime;
	st->st_blksize = LZ_PAGE;
	if (S_ISDIR(n->mode)) {
		st->st_nlink = 2;
		for (size_t i = 0; i < n->nents; i++)
			if (S_ISDIR(n->ents[i].node->mode))
				st->st_nlink++;
		st->st_size = 4096;
	} else {
		st->st_nlink = n->nlink;
		st->st_size = S_ISLNK(n->mode) ? (off_t)strlen(n->target) : n->size;
	}
	st->st_blocks = (st->st_size + 511) / 512;
}

static int ctl_stats(lz_fs *fs, char *buf, size_t len)
{
	uint64_t dfiles = 0, dbytes = 0, ddirs = 0, dentries = 0;

	for (lz_node *n = fs->all; n; n = n->next) {
		if (S_ISREG(n->mode) && (n->data_dirty || n->meta_dirty)) {
			dfiles++;
			dbytes += (uint64_t)n->npages * LZ_PAGE;
		}
		if (S_ISDIR(n->mode) && n->ns_dirty) {
			ddirs++;
			dentries += n->ns_dirty;
		}
	}
	return snprintf(buf, len,
			"state=%s\ndirty_files=%" PRIu64 "\ndirty_bytes=%" PRIu64
			"\ndirty_dirs=%" PRIu64 "\ndirty_entries=%" PRIu64 "\nsyncs=%" PRIu64 "\n",
			fs->crashed ? "crashed" : "running", dfiles, dbytes, ddirs, dentries,
			fs->syncs);
}

static int op_getattr_l(lz_fs *fs, const char *path, struct stat *st, struct fuse_file_info *fi)
{
	lz_node *n;
	int rc = get_node(fs, path, fi, &n);

	if (!rc)
		fill_stat(n, st);
	return rc;
}

static int op_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	lz_fs *fs = FS();

	if ((fi && fi->fh == (uintptr_t)&fs->ctl_tag) || (!(fi && fi->fh) && is_ctl(path))) {
		memset(st, 0, sizeof(*st));
		st->st_mode = S_IFREG | 0600;
		st->st_nlink = 1;
		st->st_ino = 1ull << 62;
		return 0;
	}
	LOCKED(op_getattr_l(fs, path, st, fi));
}

static int op_readlink_l(lz_fs *fs, const char *path, char *buf, size_t len)
{
	lz_node *n;
	int rc = walk(fs, path, &n);

	if (rc)
		return rc;
	if (!S_ISLNK(n->mode))
		return -EINVAL;
	snprintf(buf, len, "%s", n->target);
	return 0;
}

static int op_readlink(const char *path, char *buf, size_t len)
{
	lz_fs *fs = FS();

	LOCKED(op_readlink_l(fs, path, buf, len));
}

/* A new node named path; *out is it.  target: for symlinks. */
static int make_node(lz_fs *fs, const char *path, mode_t mode, const char *target, lz_node **out)
{
	struct fuse_context *cx = fuse_get_context();
	lz_node *d, *n;
	const char *name;
	int rc = walk_parent(fs, path, &d, &name);

	if (rc)
		return rc;
	if (dir_find(d, name) || (d == fs->root && strcmp(name, LZ_CTL) == 0))
		return -EEXIST;
	n = node_new(fs, mode);
	if (!n)
		return -ENOMEM;
	n->uid = cx->uid;
	n->gid = cx->gid;
	n->meta_dirty = 1;
	if (S_ISREG(mode))
		n->data_dirty = 1;
	if (target) {
		n->target = strdup(target);
		if (!n->target) {
			node_free(fs, n);
			return -ENOMEM;
		}
	}
	rc = dir_add(d, name, n);
	if (rc) {
		node_free(fs, n);
		return rc;
	}
	if (out)
		*out = n;
	return 0;
}

static int op_mknod(const char *path, mode_t mode, dev_t dev)
{
	lz_fs *fs = FS();

	if (!S_ISREG(mode))
		return -EPERM;
	LOCKED(make_node(fs, path, mode, NULL, NULL));
}

static int op_mkdir(const char *path, mode_t mode)
{
	lz_fs *fs = FS();

	LOCKED(make_node(fs, path, S_IFDIR | (mode & 07777), NULL, NULL));
}

static int op_symlink(const char *target, const char *path)
{
	lz_fs *fs = FS();

	LOCKED(make_node(fs, path, S_IFLNK | 0777, target, NULL));
}

static int op_unlink_l(lz_fs *fs, const char *path, int dir)
{
	lz_node *d;
	const char *name;
	lz_dirent *e;
	int rc = walk_parent(fs, path, &d, &name);

	if (rc)
		return rc;
	e = dir_find(d, name);
	if (!e)
		return -ENOENT;
	if (dir && !S_ISDIR(e->node->mode))
		return -ENOTDIR;
	if (!dir && S_ISDIR(e->node->mode))
		return -EISDIR;
	if (dir && e->node->nents)
		return -ENOTEMPTY;
	now(&e->node->ctime);
	dir_del(fs, d, e);
	return 0;
}

static int op_unlink(const char *path)
{
	lz_fs *fs = FS();

	LOCKED(op_unlink_l(fs, path, 0));
}

static int op_rmdir(const char *path)
{
	lz_fs *fs = FS();

	LOCKED(op_unlink_l(fs, path, 1));
}

static int is_ancestor(const lz_node *a, const lz_node *d)
{
	for (; d; d = d->parent)
		if (d == a)
			return 1;
	return 0;
}

static int op_rename_l(lz_fs *fs, const char *from, const char *to, unsigned flags)
{
	lz_node *sd, *td, *n;
	const char *sname, *tname;
	lz_dirent *se, *te;
	int rc;

	if (flags & ~RENAME_NOREPLACE)
		return -EINVAL;
	rc = walk_parent(fs, from, &sd, &sname);
	if (!rc)
		rc = walk_parent(fs, to, &td, &tname);
	if (rc)
		return rc;
	if (td == fs->root && strcmp(tname, LZ_CTL) == 0)
		return -EPERM;
	se = dir_find(sd, sname);
	if (!se)
		return -ENOENT;
	n = se->node;
	if (S_ISDIR(n->mode) && is_ancestor(n, td))
		return -EINVAL;
	te = dir_find(td, tname);
	if (te) {
		if (flags & RENAME_NOREPLACE)
			return -EEXIST;
		if (te->node == n)
			return 0;
		if (S_ISDIR(n->mode) && !S_ISDIR(te->node->mode))
			return -ENOTDIR;
		if (!S_ISDIR(n->mode) && S_ISDIR(te->node->mode))
			return -EISDIR;
		if (S_ISDIR(te->node->mode) && te->node->nents)
			return -ENOTEMPTY;
	}
	n->nlink++; /* hold it while its old entry goes */
	if (te)
		dir_del(fs, td, te);
	dir_del(fs, sd, dir_find(sd, sname));
	rc = dir_add(td, tname, n);
	n->nlink--;
	now(&n->ctime);
	if (rc)
		node_maybe_free(fs, n);
	return rc;
}

static int op_rename(const char *from, const char *to, unsigned flags)
{
	lz_fs *fs = FS();

	LOCKED(op_rename_l(fs, from, to, flags));
}

static int op_link_l(lz_fs *fs, const char *from, const char *to)
{
	lz_node *n, *d;
	const char *name;
	int rc = walk(fs, from, &n);

	if (!rc)
		rc = walk_parent(fs, to, &d, &name);
	if (rc)
		return rc;
	if (S_ISDIR(n->mode))
		return -EPERM;
	if (dir_find(d, name) || (d == fs->root && strcmp(name, LZ_CTL) == 0))
		return -EEXIST;
	now(&n->ctime);
	return dir_add(d, name, n);
}

static int op_link(const char *from, const char *to)
{
	lz_fs *fs = FS();

	LOCKED(op_link_l(fs, from, to));
}

static int op_chmod_l(lz_fs *fs, const char *path, mode_t mode, struct fuse_file_info *fi)
{
	lz_node *n;
	int rc = get_node(fs, path, fi, &n);

	if (rc)
		return rc;
	n->mode = (n->mode & S_IFMT) | (mode & 07777);
	now(&n->ctime);
	n->meta_dirty = 1;
	return 0;
}

static int op_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	lz_fs *fs = FS();

	if (is_ctl(path))
		return 0;
	LOCKED(op_chmod_l(fs, path, mode, fi));
}

static int op_chown_l(lz_fs *fs, const char *path, uid_t uid, gid_t gid,
		      struct fuse_file_info *fi)
{
	lz_node *n;
	int rc = get_node(fs, path, fi, &n);

	if (rc)
		return rc;
	if (uid != (uid_t)-1)
		n->uid = uid;
	if (gid != (gid_t)-1)
		n->gid = gid;
	now(&n->ctime);
	n->meta_dirty = 1;
	return 0;
}

static int op_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi)
{
	lz_fs *fs = FS();

	if (is_ctl(path))
		return 0;
	LOCKED(op_chown_l(fs, path, uid, gid, fi));
}

static int op_truncate_l(lz_fs *fs, const char *path, off_t size, struct fuse_file_info *fi)
{
	lz_node *n;
	int rc = get_node(fs, path, fi, &n);

	if (rc)
		return rc;
	if (S_ISDIR(n->mode))
		return -EISDIR;
	if (!S_ISREG(n->mode))
		return -EINVAL;
	if (size < 0)
		return -EINVAL;
	file_truncate(n, size);
	now(&n->mtime);
	n->ctime = n->mtime;
	n->meta_dirty = 1;
	return 0;
}

static int op_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	lz_fs *fs = FS();

	if ((fi && fi->fh == (uintptr_t)&fs->ctl_tag) || is_ctl(path))
		return 0;
	LOCKED(op_truncate_l(fs, path, size, fi));
}

static int op_utimens_l(lz_fs *fs, const char *path, const struct timespec tv[2],
			struct fuse_file_info *fi)
{
	lz_node *n;
	struct timespec t;
	int rc = get_node(fs, path, fi, &n);

	if (rc)
		return rc;
	now(&t);
	if (tv[0].tv_nsec != UTIME_OMIT)
		n->atime = tv[0].tv_nsec == UTIME_NOW ? t : tv[0];
	if (tv[1].tv_nsec != UTIME_OMIT)
		n->mtime = tv[1].tv_nsec == UTIME_NOW ? t : tv[1];
	n->ctime = t;
	n->meta_dirty = 1;
	return 0;
}

static int op_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi)
{
	lz_fs *fs = FS();

	if (is_ctl(path))
		return 0;
	LOCKED(op_utimens_l(fs, path, tv, fi));
}

static int op_open_l(lz_fs *fs, const char *path, struct fuse_file_info *fi)
{
	lz_node *n;
	int rc = walk(fs, path, &n);

	if (rc)
		return rc;
	if (S_ISDIR(n->mode))
		return -EISDIR;
	n->opens++;
	fi->fh = (uintptr_t)n;
	return 0;
}

static int op_open(const char *path, struct fuse_file_info *fi)
{
	lz_fs *fs = FS();

	if (is_ctl(path)) {
		fi->fh = (uintptr_t)&fs->ctl_tag;
		fi->direct_io = 1;
		return 0;
	}
	LOCKED(op_open_l(fs, path, fi));
}

static int op_create_l(lz_fs *fs, const char *path, mode_t mode, struct fuse_file_info *fi)
{
	lz_node *n;
	int rc = make_node(fs, path, S_IFREG | (mode & 07777), NULL, &n);

	if (rc)
		return rc;
	n->opens++;
	fi->fh = (uintptr_t)n;
	return 0;
}

static int op_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	lz_fs *fs = FS();

	LOCKED(op_create_l(fs, path, mode, fi));
}

static int op_read(const char *path, char *buf, size_t len, off_t off, struct fuse_file_info *fi)
{
	lz_fs *fs = FS();

	if (fi->fh == (uintptr_t)&fs->ctl_tag) {
		char text[512];
		int n;

		pthread_mutex_lock(&fs->lock);
		n = ctl_stats(fs, text, sizeof(text));
		pthread_mutex_unlock(&fs->lock);
		if (off >= n)
			return 0;
		if ((off_t)len > n - off)
			len = (size_t)(n - off);
		memcpy(buf, text + off, len);
		return (int)len;
	}
	LOCKED(file_read(fh_node(fi), buf, len, off));
}

static int ctl_write(lz_fs *fs, const char *buf, size_t len)
{
	int rc = (int)len;

	pthread_mutex_lock(&fs->lock);
	if (len >= 5 && strncmp(buf, "crash", 5) == 0) {
		if (!fs->crashed)
			crash(fs);
	} else if (len >= 4 && strncmp(buf, "sync", 4) == 0) {
		if (fs->crashed)
			rc = -EIO;
		else if (sync_all(fs))
			rc = -EIO;
	} else {
		rc = -EINVAL;
	}
	pthread_mutex_unlock(&fs->lock);
	return rc;
}

static int op_write_l(lz_node *n, const char *buf, size_t len, off_t off)
{
	int rc = file_write(n, buf, len, off);

	if (rc >= 0) {
		now(&n->mtime);
		n->ctime = n->mtime;
		n->meta_dirty = 1;
	}
	return rc;
}

static int op_write(const char *path, const char *buf, size_t len, off_t off,
		    struct fuse_file_info *fi)
{
	lz_fs *fs = FS();

	if (fi->fh == (uintptr_t)&fs->ctl_tag)
		return ctl_write(fs, buf, len);
	LOCKED(op_write_l(fh_node(fi), buf, len, off));
}

static int op_statfs(const char *path, struct statvfs *sv)
{
	lz_fs *fs = FS();

	LOCKED(fstatvfs(fs->rootfd, sv) ? -errno : 0);
}

static int op_release(const char *path, struct fuse_file_info *fi)
{
	lz_fs *fs = FS();
	lz_node *n = fh_node(fi);

	if (fi->fh == (uintptr_t)&fs->ctl_tag)
		return 0;
	pthread_mutex_lock(&fs->lock);
	n->opens--;
	node_maybe_free(fs, n);
	pthread_mutex_unlock(&fs->lock);
	return 0;
}

static int op_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	lz_fs *fs = FS();

	if (fi->fh == (uintptr_t)&fs->ctl_tag)
		return 0;
	LOCKED(S_ISDIR(fh_node(fi)->mode) ? dir_sync(fs, fh_node(fi)) : file_sync(fs, fh_node(fi)));
}

static int op_fallocate_l(lz_node *n, int mode, off_t off, off_t len)
{
	if (!S_ISREG(n->mode))
		return -ENODEV;
	if (off < 0 || len <= 0)
		return -EINVAL;
	if (mode == 0) {
		if (off + len > n->size) {
			n->size = off + len;
			n->data_dirty = 1;
		}
		return 0;
	}
	if (mode == (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE)) {
		if (off >= n->size)
			return 0;
		if (len > n->size - off)
			len = n->size - off;
		return file_write(n, NULL, (size_t)len, off) < 0 ? -ENOMEM : 0;
	}
	return -EOPNOTSUPP;
}

static int op_fallocate(const char *path, int mode, off_t off, off_t len, struct fuse_file_info *fi)
{
	lz_fs *fs = FS();

	LOCKED(op_fallocate_l(fh_node(fi), mode, off, len));
}

static int op_opendir_l(lz_fs *fs, const char *path, struct fuse_file_info *fi)
{
	lz_node *n;
	int rc = walk(fs, path, &n);

	if (rc)
		return rc;
	if (!S_ISDIR(n->mode))
		return -ENOTDIR;
	n->opens++;
	fi->fh = (uintptr_t)n;
	return 0;
}

static int op_opendir(const char *path, struct fuse_file_info *fi)
{
	lz_fs *fs = FS();

	LOCKED(op_opendir_l(fs, path, fi));
}

static int op_readdir_l(lz_node *d, void *buf, fuse_fill_dir_t fill)
{
	struct stat st;

	memset(&st, 0, sizeof(st));
	st.st_mode = S_IFDIR;
	st.st_ino = d->ino;
	if (fill(buf, ".", &st, 0, 0))
		return 0;
	st.st_ino = d->parent ? d->parent->ino : d->ino;
	if (fill(buf, "..", &st, 0, 0))
		return 0;
	for (size_t i = 0; i < d->nents; i++) {
		st.st_ino = d->ents[i].node->ino;
		st.st_mode = d->ents[i].node->mode & S_IFMT;
		if (fill(buf, d->ents[i].name, &st, 0, 0))
			return -ENOMEM; /* buffer full without offsets: too many names */
	}
	return 0;
}

static int op_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
		      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	lz_fs *fs = FS();

	LOCKED(op_readdir_l(fh_node(fi), buf, fill));
}

static int op_releasedir(const char *path, struct fuse_file_info *fi)
{
	return op_release(path, fi);
}

static int op_fsyncdir(const char *path, int datasync, struct fuse_file_info *fi)
{
	lz_fs *fs = FS();

	LOCKED(dir_sync(fs, fh_node(fi)));
}

static void *op_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	cfg->use_ino = 1;
	cfg->nullpath_ok = 1;
	cfg->hard_remove = 1;
	cfg->attr_timeout = 1.0;
	cfg->entry_timeout = 1.0;
	cfg->negative_timeout = 0;
	return FS();
}

/* A clean unmount syncs everything (after a crash there is nothing left). */
static void op_destroy(void *data)
{
	lz_fs *fs = data;

	pthread_mutex_lock(&fs->lock);
	if (!fs->crashed && sync_all(fs))
		fprintf(stderr, "pfs_lazyfs: sync at unmount failed\n");
	pthread_mutex_unlock(&fs->lock);
}

static const struct fuse_operations lz_ops = {
	.getattr = op_getattr,
	.readlink = op_readlink,
	.mknod = op_mknod,
	.mkdir = op_mkdir,
	.unlink = op_unlink,
	.rmdir = op_rmdir,
	.symlink = op_symlink,
	.rename = op_rename,
	.link = op_link,
	.chmod = op_chmod,
	.chown = op_chown,
	.truncate = op_truncate,
	.open = op_open,
	.read = op_read,
	.write = op_write,
	.statfs = op_statfs,
	.release = op_release,
	.fsync = op_fsync,
	.opendir = op_opendir,
	.readdir = op_readdir,
	.releasedir = op_releasedir,
	.fsyncdir = op_fsyncdir,
	.init = op_init,
	.destroy = op_destroy,
	.create = op_create,
	.utimens = op_utimens,
	.fallocate = op_fallocate,
};

static void fs_free(lz_fs *fs)
{
	while (fs->all)
		node_free(fs, fs->all);
	if (fs->rootfd >= 0)
		close(fs->rootfd);
	pthread_mutex_destroy(&fs->lock);
}

int main(int argc, char **argv)
{
	lz_fs fs = { .rootfd = -1, .next_ino = 2 };
	struct rlimit rl;
	struct stat st;
	char **fargv;
	int rc;

	if (argc < 3) {
		fprintf(stderr, "usage: %s BACKING_DIR MOUNTPOINT [FUSE options]\n", argv[0]);
		return 2;
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	pthread_mutex_init(&fs.lock, NULL);
	fs.rootfd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fs.rootfd < 0 || fstat(fs.rootfd, &st)) {
		fprintf(stderr, "pfs_lazyfs: %s: %s\n", argv[1], strerror(errno));
		fs_free(&fs);
		return 1;
	}
	fs.root = node_new(&fs, st.st_mode);
	if (!fs.root || (fs.root->dfd = dup(fs.rootfd)) < 0) {
		fprintf(stderr, "pfs_lazyfs: out of memory or descriptors\n");
		fs_free(&fs);
		return 1;
	}
	fs.root->uid = st.st_uid;
	fs.root->gid = st.st_gid;
	fs.root->atime = st.st_atim;
	fs.root->mtime = st.st_mtim;
	fs.root->ctime = st.st_ctim;
	fs.root->bino = st.st_ino;
	fs.root->nlink = 1;
	rc = load_dir(&fs, fs.root);
	if (rc) {
		fprintf(stderr, "pfs_lazyfs: loading %s: %s\n", argv[1], strerror(-rc));
		fs_free(&fs);
		return 1;
	}
	fargv = calloc((size_t)argc, sizeof(*fargv));
	if (!fargv) {
		fs_free(&fs);
		return 1;
	}
	fargv[0] = argv[0];
	for (int i = 2; i < argc; i++)
		fargv[i - 1] = argv[i];
	rc = fuse_main(argc - 1, fargv, &lz_ops, &fs);
	free(fargv);
	fs_free(&fs);
	return rc;
}
