/* store.c — one OST as a directory of object files, with an LRU cache of
 * open descriptors (see store.h for layout, semantics, durability and
 * limits).  Directory fsyncs run outside the store's mutex: an entry whose
 * creation is not yet known durable carries dir_dirty, and whoever gets it
 * from the cache syncs the directory first (concurrent fsyncs of one
 * directory are harmless), so no reply about an object goes out before its
 * directory entry is on disk. */
#include "oss/store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "oss/destroyed.h"

#define UUID_FILE "ost.uuid"
#define OBJ_DIR "O"
#define NSUBDIR 256

/* A cached descriptor.  Fields after obj are guarded by the store's lock,
 * except fd/dfd, which are read without it by the holder of a reference
 * (dfd is only set under the lock, before any reader can see -1 change). */
typedef struct fdent {
	uint64_t obj;
	int fd;        /* O_RDWR, buffered */
	int dfd;       /* O_RDWR|O_DIRECT; -1 = not opened yet, -2 = unsupported */
	unsigned refs; /* I/Os in flight holding this entry */
	int hashed;    /* still reachable by lookup (0 after destroy/evict) */
	int dir_dirty; /* created; its directory entry not yet known synced */
	_Atomic uint64_t unkicked; /* bytes written since the last write-behind kick */
	struct fdent *hnext;
	struct fdent *lprev, *lnext; /* LRU list, most recent at head */
} fdent;

struct oss_store {
	char *dir;
	char uuid[OSS_STORE_UUID_LEN + 1];
	int rootfd; /* DIR */
	int objfd;  /* DIR/O */
	_Atomic int o_direct; /* cleared when the file system refuses O_DIRECT */
	int sync_dirs;
	uint64_t write_behind; /* kick writeback after this many bytes (0 = off) */
	_Atomic uint64_t wb_kicks; /* write-behind kicks so far */
	_Atomic int dir_sync_owed; /* a destroy's directory fsync failed */
	int (*dir_fsync)(int dirfd, void *arg);
	void *dir_fsync_arg;
	pthread_mutex_t lock;
	unsigned cap;         /* fd cache bound */
	unsigned ncached;     /* hashed entries; guarded by lock */
	size_t nbuckets;      /* power of two */
	fdent **buckets;      /* guarded by lock */
	fdent *lru_head, *lru_tail; /* guarded by lock */
	uint64_t objects;     /* guarded by lock */
	oss_destroyed *dead;  /* destroyed ids (its own locks) */
};

__attribute__((format(printf, 3, 4)))
static void seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static size_t bucket_of(const oss_store *s, uint64_t obj)
{
	/* Fibonacci hashing: ids are often sequential. */
	return (size_t)((obj * 0x9E3779B97F4A7C15ull) >> 32) & (s->nbuckets - 1);
}

static void obj_path(uint64_t obj, char *out, size_t n)
{
	snprintf(out, n, "%02x/%" PRIx64, (unsigned)(obj & 0xff), obj);
}

/* ---- fd cache (all under s->lock) ---- */

static void lru_unlink(oss_store *s, fdent *e)
{
	if (e->lprev)
		e->lprev->lnext = e->lnext;
	else
		s->lru_head = e->lnext;
	if (e->lnext)
		e->lnext->lprev = e->lprev;
	else
		s->lru_tail = e->lprev;
	e->lprev = e->lnext = NULL;
}

static void lru_push(oss_store *s, fdent *e)
{
	e->lprev = NULL;
	e->lnext = s->lru_head;
	if (s->lru_head)
		s->lru_head->lprev = e;
	s->lru_head = e;
	if (!s->lru_tail)
		s->lru_tail = e;
}

static fdent *cache_find(oss_store *s, uint64_t obj)
{
	for (fdent *e = s->buckets[bucket_of(s, obj)]; e; e = e->hnext)
		if (e->obj == obj)
			return e;
	return NULL;
}

static void ent_free(fdent *e)
{
	close(e->fd);
	if (e->dfd >= 0)
		close(e->dfd);
	free(e);
}

/* Take e out of the hash and the LRU; it is freed now if idle, else by the
 * last cache_put. */
static void cache_remove(oss_store *s, fdent *e)
{
	fdent **pp = &s->buckets[bucket_of(s, e->obj)];

	while (*pp != e)
		pp = &(*pp)->hnext;
	*pp = e->hnext;
	e->hnext = NULL;
	e->hashed = 0;
	lru_unlink(s, e);
	s->ncached--;
	if (e->refs == 0)
		ent_free(e);
}

/* Close idle descriptors, least recently used first, until at most keep
 * remain cached (entries in use are skipped). */
static void cache_trim(oss_store *s, unsigned keep)
{
	fdent *e = s->lru_tail;

	while (s->ncached > keep && e) {
		fdent *prev = e->lprev;
		if (e->refs == 0 && !e->dir_dirty)
			cache_remove(s, e);
		e = prev;
	}
}

static void cache_evict(oss_store *s)
{
	cache_trim(s, s->cap);
}

/* openat that, when the process is out of descriptors, gives back this
 * store's idle cached ones and tries once more. */
static int open_obj(oss_store *s, const char *path, int flags, mode_t mode)
{
	int fd = openat(s->objfd, path, flags, mode);

	if (fd < 0 && (errno == EMFILE || errno == ENFILE) && s->ncached) {
		cache_trim(s, 0);
		fd = openat(s->objfd, path, flags, mode);
	}
	return fd;
}

static void cache_put(oss_store *s, fdent *e);

/* fsync the directory of obj (DIR/O/<xx>); 0 or -errno, logged by no one
 * here: the caller returns it. */
static int dir_sync(oss_store *s, uint64_t obj)
{
	char sub[4];
	int fd, rc;

	if (!s->sync_dirs)
		return 0;
	snprintf(sub, sizeof(sub), "%02x", (unsigned)(obj & 0xff));
	fd = openat(s->objfd, sub, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 && (errno == EMFILE || errno == ENFILE)) {
		pthread_mutex_lock(&s->lock);
		cache_trim(s, 0); /* give back idle descriptors, as open_obj */
		pthread_mutex_unlock(&s->lock);
		fd = openat(s->objfd, sub, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	if (fd < 0)
		return -errno;
	if (s->dir_fsync)
		rc = s->dir_fsync(fd, s->dir_fsync_arg);
	else
		rc = fsync(fd) ? -errno : 0;
	close(fd);
	return rc;
}

/* Get a referenced entry for obj.  create: make the object if missing.
 * Returns 0, -ENOENT (missing and !create), -ESTALE (destroyed) or another
 * -errno.  A cached entry is never a destroyed object's: destroy records
 * the id, then unhashes the entry and unlinks the file under the lock. */
static int cache_get(oss_store *s, uint64_t obj, int create, fdent **out)
{
	char path[48];
	fdent *e;
	int fd, rc = 0, created = 0, dirty;

	pthread_mutex_lock(&s->lock);
	e = cache_find(s, obj);
	if (e) {
		e->refs++;
		lru_unlink(s, e);
		lru_push(s, e);
		goto out;
	}
	if (oss_destroyed_has(s->dead, obj)) {
		rc = -ESTALE; /* a stale layout's I/O: never brought back */
		goto out;
	}
	obj_path(obj, path, sizeof(path));
	for (;;) {
		fd = open_obj(s, path, O_RDWR | O_CLOEXEC, 0);
		if (fd >= 0 || errno != ENOENT || !create)
			break;
		fd = open_obj(s, path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd >= 0) {
			s->objects++;
			created = 1;
			break;
		}
		if (errno != EEXIST) /* created by someone outside pfs: retry plain open */
			break;
	}
	if (fd < 0) {
		rc = -errno;
		goto out;
	}
	e = calloc(1, sizeof(*e));
	if (!e) {
		close(fd);
		rc = -ENOMEM;
		goto out;
	}
	e->obj = obj;
	e->fd = fd;
	e->dfd = -1;
	e->refs = 1;
	e->hashed = 1;
	e->dir_dirty = created && s->sync_dirs;
	e->hnext = s->buckets[bucket_of(s, obj)];
	s->buckets[bucket_of(s, obj)] = e;
	lru_push(s, e);
	s->ncached++;
	cache_evict(s);
out:
	dirty = !rc && e->dir_dirty;
	pthread_mutex_unlock(&s->lock);
	if (dirty) {
		/* The object's existence is durable before anyone hears of it. */
		rc = dir_sync(s, obj);
		if (rc) {
			cache_put(s, e);
			return rc;
		}
		pthread_mutex_lock(&s->lock);
		e->dir_dirty = 0;
		pthread_mutex_unlock(&s->lock);
	}
	if (!rc)
		*out = e;
	return rc;
}

static void cache_put(oss_store *s, fdent *e)
{
	pthread_mutex_lock(&s->lock);
	if (--e->refs == 0) {
		if (!e->hashed)
			ent_free(e);
		else
			cache_evict(s);
	}
	pthread_mutex_unlock(&s->lock);
}

/* The O_DIRECT descriptor of e, opened on first use; -1 if unavailable. */
static int cache_direct_fd(oss_store *s, fdent *e)
{
	char path[48];
	int fd;

	pthread_mutex_lock(&s->lock);
	if (e->dfd == -1 && e->hashed) {
		obj_path(e->obj, path, sizeof(path));
		fd = open_obj(s, path, O_RDWR | O_DIRECT | O_CLOEXEC, 0);
		e->dfd = fd >= 0 ? fd : -2;
		if (fd < 0 && errno == EINVAL) {
			/* The file system has no O_DIRECT (tmpfs): stop trying. */
			s->o_direct = 0;
		}
	}
	fd = e->dfd;
	pthread_mutex_unlock(&s->lock);
	return fd >= 0 ? fd : -1;
}

static int aligned(uint64_t off, size_t len)
{
	return off % OSS_STORE_ALIGN == 0 && len % OSS_STORE_ALIGN == 0 && len > 0;
}

/* ---- formatting ---- */

static int uuid_make(char out[OSS_STORE_UUID_LEN + 1])
{
	uint8_t u[16];
	size_t got = 0;

	while (got < sizeof(u)) {
		ssize_t r = getrandom(u + got, sizeof(u) - got, 0);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		got += (size_t)r;
	}
	u[6] = (uint8_t)((u[6] & 0x0f) | 0x40); /* version 4 */
	u[8] = (uint8_t)((u[8] & 0x3f) | 0x80); /* RFC 4122 variant */
	snprintf(out, OSS_STORE_UUID_LEN + 1,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11],
		 u[12], u[13], u[14], u[15]);
	return 0;
}

static int uuid_valid(const char *u)
{
	for (int i = 0; i < OSS_STORE_UUID_LEN; i++) {
		int dash = i == 8 || i == 13 || i == 18 || i == 23;
		if (dash ? u[i] != '-' : !strchr("0123456789abcdef", u[i]) || !u[i])
			return 0;
	}
	return u[OSS_STORE_UUID_LEN] == '\0';
}

/* Read DIR/ost.uuid, or create it atomically if it does not exist. */
static int uuid_load(oss_store *s, char *err, size_t errlen)
{
	char buf[OSS_STORE_UUID_LEN + 8];
	ssize_t n;
	int fd, rc = 0;

	fd = openat(s->rootfd, UUID_FILE, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n < 0) {
			rc = -errno;
			seterr(err, errlen, "%s/" UUID_FILE ": %s", s->dir, strerror(-rc));
			return rc;
		}
		buf[n] = '\0';
		buf[strcspn(buf, "\r\n")] = '\0';
		if (!uuid_valid(buf)) {
			if (err && errlen)
				snprintf(err, errlen, "%s/" UUID_FILE ": not a uuid", s->dir);
			return -EINVAL;
		}
		memcpy(s->uuid, buf, sizeof(s->uuid));
		return 0;
	}
	if (errno != ENOENT) {
		rc = -errno;
		seterr(err, errlen, "%s/" UUID_FILE ": %s", s->dir, strerror(-rc));
		return rc;
	}
	rc = uuid_make(s->uuid);
	if (rc) {
		seterr(err, errlen, "%s: getrandom: %s", s->dir, strerror(-rc));
		return rc;
	}
	fd = openat(s->rootfd, UUID_FILE ".tmp", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		rc = -errno;
		goto out;
	}
	n = snprintf(buf, sizeof(buf), "%s\n", s->uuid);
	if (write(fd, buf, (size_t)n) != n || fsync(fd)) {
		rc = errno ? -errno : -EIO;
		close(fd);
		goto out;
	}
	close(fd);
	if (renameat(s->rootfd, UUID_FILE ".tmp", s->rootfd, UUID_FILE) || fsync(s->rootfd))
		rc = -errno;
out:
	if (rc)
		seterr(err, errlen, "%s: cannot write " UUID_FILE ": %s", s->dir, strerror(-rc));
	return rc;
}

static int count_objects(oss_store *s, uint64_t *count)
{
	uint64_t n = 0;

	for (int i = 0; i < NSUBDIR; i++) {
		char sub[4];
		int fd;
		DIR *d;
		struct dirent *de;

		snprintf(sub, sizeof(sub), "%02x", i);
		fd = openat(s->objfd, sub, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		d = fdopendir(fd);
		if (!d) {
			close(fd);
			return -errno;
		}
		while ((de = readdir(d)))
			if (de->d_name[0] != '.')
				n++;
		closedir(d);
	}
	*count = n;
	return 0;
}

int oss_store_open(const char *dir, const oss_store_opts *opts, oss_store **out,
		   char *err, size_t errlen)
{
	oss_store *s = calloc(1, sizeof(*s));
	unsigned cap = opts && opts->fd_cache ? opts->fd_cache : OSS_STORE_FD_CACHE_DEFAULT;
	int rc = 0;

	if (!s)
		return -ENOMEM;
	s->rootfd = s->objfd = -1;
	pthread_mutex_init(&s->lock, NULL);
	s->dir = strdup(dir);
	s->cap = cap;
	s->o_direct = opts ? opts->o_direct : 0;
	s->write_behind = opts ? opts->write_behind : 0;
	s->sync_dirs = 1;
	for (s->nbuckets = 16; s->nbuckets < 2 * (size_t)cap; s->nbuckets *= 2)
		;
	s->buckets = calloc(s->nbuckets, sizeof(*s->buckets));
	if (!s->dir || !s->buckets) {
		rc = -ENOMEM;
		goto out;
	}
	if (mkdir(dir, 0755) && errno != EEXIST) {
		rc = -errno;
		seterr(err, errlen, "mkdir %s: %s", dir, strerror(-rc));
		goto out;
	}
	s->rootfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s->rootfd < 0) {
		rc = -errno;
		seterr(err, errlen, "open %s: %s", dir, strerror(-rc));
		goto out;
	}
	if (mkdirat(s->rootfd, OBJ_DIR, 0755) && errno != EEXIST) {
		rc = -errno;
		seterr(err, errlen, "mkdir %s/" OBJ_DIR ": %s", dir, strerror(-rc));
		goto out;
	}
	s->objfd = openat(s->rootfd, OBJ_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s->objfd < 0) {
		rc = -errno;
		seterr(err, errlen, "open %s/" OBJ_DIR ": %s", dir, strerror(-rc));
		goto out;
	}
	for (int i = 0; i < NSUBDIR; i++) {
		char sub[4];
		snprintf(sub, sizeof(sub), "%02x", i);
		if (mkdirat(s->objfd, sub, 0755) && errno != EEXIST) {
			rc = -errno;
			seterr(err, errlen, "mkdir in %s/" OBJ_DIR ": %s", dir, strerror(-rc));
			goto out;
		}
	}
	/* The tree itself is durable before any object goes in it. */
	if (fsync(s->objfd) || fsync(s->rootfd)) {
		rc = -errno;
		seterr(err, errlen, "fsync %s: %s", dir, strerror(-rc));
		goto out;
	}
	rc = uuid_load(s, err, errlen);
	if (rc)
		goto out;
	rc = oss_destroyed_open(s->rootfd, OSS_DESTROYED_FILE, &s->dead);
	if (rc) {
		seterr(err, errlen, "%s/" OSS_DESTROYED_FILE ": %s", dir,
		       rc == -EINVAL ? "not a record of destroyed objects" : strerror(-rc));
		goto out;
	}
	rc = count_objects(s, &s->objects);
	if (rc)
		seterr(err, errlen, "scan %s: %s", dir, strerror(-rc));
out:
	if (rc) {
		oss_store_close(s);
		return rc;
	}
	*out = s;
	return 0;
}

void oss_store_close(oss_store *s)
{
	if (!s)
		return;
	while (s->lru_head)
		cache_remove(s, s->lru_head); /* no I/O in flight: refs are 0 */
	free(s->buckets);
	oss_destroyed_close(s->dead);
	if (s->objfd >= 0)
		close(s->objfd);
	if (s->rootfd >= 0)
		close(s->rootfd);
	pthread_mutex_destroy(&s->lock);
	free(s->dir);
	free(s);
}

const char *oss_store_uuid(const oss_store *s) { return s->uuid; }
const char *oss_store_dir(const oss_store *s) { return s->dir; }

void oss_store_set_sync_dirs(oss_store *s, int on)
{
	s->sync_dirs = !!on;
}

void oss_store_set_dir_fsync(oss_store *s, int (*fn)(int dirfd, void *arg), void *arg)
{
	s->dir_fsync = fn;
	s->dir_fsync_arg = arg;
}

/* ---- object operations ---- */

static int check_range(uint64_t off, uint64_t len)
{
	if (off > (uint64_t)INT64_MAX || len > (uint64_t)INT64_MAX - off)
		return -EFBIG;
	return 0;
}

int oss_store_read(oss_store *s, uint64_t obj, uint64_t off, void *buf, size_t len,
		   size_t *got)
{
	fdent *e;
	size_t done = 0;
	int fd, rc;

	*got = 0;
	if (len == 0)
		return 0;
	rc = check_range(off, len);
	if (rc)
		return rc;
	rc = cache_get(s, obj, 0, &e);
	if (rc == -ENOENT)
		return 0; /* missing object: empty */
	if (rc)
		return rc;
	fd = e->fd;
	if (s->o_direct && aligned(off, len) && (uintptr_t)buf % OSS_STORE_ALIGN == 0) {
		int dfd = cache_direct_fd(s, e);
		if (dfd >= 0)
			fd = dfd;
	}
	while (done < len) {
		ssize_t r = pread(fd, (char *)buf + done, len - done, (off_t)(off + done));
		if (r < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EINVAL && fd != e->fd) {
				/* Alignment the device does not accept. */
				fd = e->fd;
				continue;
			}
			rc = -errno;
			break;
		}
		if (r == 0)
			break; /* end of object */
		done += (size_t)r;
		/* O_DIRECT may stop at the unaligned end; the rest is buffered. */
		if (fd != e->fd && done % OSS_STORE_ALIGN)
			fd = e->fd;
	}
	cache_put(s, e);
	*got = done;
	return rc;
}

int oss_store_splice_read(oss_store *s, uint64_t obj, uint64_t off, int pipe_wfd, size_t len,
			  size_t *got)
{
	fdent *e;
	size_t done = 0;
	int rc;

	*got = 0;
	if (len == 0)
		return 0;
	if (s->o_direct)
		return -EOPNOTSUPP;
	rc = check_range(off, len);
	if (rc)
		return rc;
	rc = cache_get(s, obj, 0, &e);
	if (rc == -ENOENT)
		return 0; /* missing object: empty */
	if (rc)
		return rc;
	while (done < len) {
		loff_t o = (loff_t)(off + done);
		/* NONBLOCK: a pipe without room says so instead of waiting
		 * for a reader that is this thread. */
		ssize_t r = splice(e->fd, &o, pipe_wfd, NULL, len - done,
				   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			break;
		}
		if (r == 0)
			break; /* end of object */
		done += (size_t)r;
	}
	cache_put(s, e);
	*got = done;
	return rc;
}

/* Write-behind: once write_behind bytes have gone into an object's page
 * cache since the last kick, start their writeback now
 * (SYNC_FILE_RANGE_WRITE queues the dirty pages and does not wait for
 * them), so the disk writes while the clients are still sending and the
 * client's fsync at the end finds little left to do, as an OSS that
 * writes through would.  Without it nothing is written before
 * vm.dirty_background_ratio of the memory is dirty, and the whole stream
 * waits in the final fsync.  The range is the whole object: its dirty
 * pages are found by the page cache's tags, and pages already under
 * writeback are skipped. */
static void write_behind(oss_store *s, fdent *e, size_t len)
{
	if (!s->write_behind)
		return;
	if (atomic_fetch_add(&e->unkicked, len) + len < s->write_behind)
		return;
	atomic_store(&e->unkicked, 0);
	atomic_fetch_add(&s->wb_kicks, 1);
	/* An error here (EIO of an earlier writeback) is the fsync's to
	 * report: the page cache keeps it for the next fsync of the file. */
	(void)sync_file_range(e->fd, 0, 0, SYNC_FILE_RANGE_WRITE);
}

uint64_t oss_store_write_behind_kicks(oss_store *s)
{
	return atomic_load(&s->wb_kicks);
}

int oss_store_write(oss_store *s, uint64_t obj, uint64_t off, const void *buf, size_t len)
{
	fdent *e;
	const char *src = buf;
	void *bounce = NULL;
	size_t done = 0;
	int fd, rc;

	rc = check_range(off, len);
	if (rc)
		return rc;
	rc = cache_get(s, obj, 1, &e);
	if (rc)
		return rc;
	fd = e->fd;
	if (s->o_direct && aligned(off, len)) {
		int dfd = cache_direct_fd(s, e);
		if (dfd >= 0) {
			if ((uintptr_t)buf % OSS_STORE_ALIGN) {
				/* Bulk data sits after the request fields in the
				 * received frame, so it is rarely aligned. */
				if (posix_memalign(&bounce, OSS_STORE_ALIGN, len) == 0) {
					memcpy(bounce, buf, len);
					src = bounce;
					fd = dfd;
				}
			} else {
				fd = dfd;
			}
		}
	}
	while (done < len) {
		ssize_t w = pwrite(fd, src + done, len - done, (off_t)(off + done));
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EINVAL && fd != e->fd) {
				fd = e->fd;
				continue;
			}
			rc = -errno;
			break;
		}
		if (w == 0) {
			rc = -EIO;
			break;
		}
		done += (size_t)w;
		if (fd != e->fd && done % OSS_STORE_ALIGN)
			fd = e->fd;
	}
	if (!rc && fd == e->fd)
		write_behind(s, e, len);
	cache_put(s, e);
	free(bounce);
	return rc;
}

int oss_store_splice_write(oss_store *s, uint64_t obj, uint64_t off, int pipe_rfd, size_t len)
{
	fdent *e;
	size_t done = 0;
	int rc;

	if (s->o_direct)
		return -EOPNOTSUPP;
	rc = check_range(off, len);
	if (rc)
		return rc;
	rc = cache_get(s, obj, 1, &e);
	if (rc)
		return rc;
	while (done < len) {
		loff_t o = (loff_t)(off + done);
		/* NONBLOCK: a pipe short of len says so (EAGAIN) instead of
		 * waiting for a writer that will never come */
		ssize_t w = splice(pipe_rfd, NULL, e->fd, &o, len - done,
				   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno != EAGAIN) {
			rc = -errno;
			break;
		}
		if (w <= 0) {
			rc = -EIO;
			break;
		}
		done += (size_t)w;
	}
	if (!rc)
		write_behind(s, e, len);
	cache_put(s, e);
	return rc;
}

int oss_store_direct(const oss_store *s)
{
	return s->o_direct;
}

int oss_store_truncate(oss_store *s, uint64_t obj, uint64_t size)
{
	fdent *e;
	int rc;

	if (size > (uint64_t)INT64_MAX)
		return -EFBIG;
	rc = cache_get(s, obj, size > 0, &e);
	if (rc == -ENOENT)
		return 0; /* missing object truncated to 0 */
	if (rc)
		return rc;
	if (ftruncate(e->fd, (off_t)size))
		rc = -errno;
	cache_put(s, e);
	return rc;
}

/* Fallback for file systems without PUNCH_HOLE: write zeros over the part
 * of the range that lies inside the object, so it reads as zeros. */
static int punch_zero(int fd, uint64_t off, uint64_t len)
{
	static const char zeros[65536];
	struct stat st;
	uint64_t end;

	if (fstat(fd, &st))
		return -errno;
	end = off + len < (uint64_t)st.st_size ? off + len : (uint64_t)st.st_size;
	while (off < end) {
		size_t n = end - off < sizeof(zeros) ? (size_t)(end - off) : sizeof(zeros);
		ssize_t w = pwrite(fd, zeros, n, (off_t)off);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		off += (uint64_t)w;
	}
	return 0;
}

int oss_store_punch(oss_store *s, uint64_t obj, uint64_t off, uint64_t len)
{
	fdent *e;
	int rc;

	if (len == 0)
		return 0;
	if (off > (uint64_t)INT64_MAX)
		return -EFBIG;
	if (len > (uint64_t)INT64_MAX - off)
		len = (uint64_t)INT64_MAX - off; /* "to the end" */
	rc = cache_get(s, obj, 0, &e);
	if (rc == -ENOENT)
		return 0;
	if (rc)
		return rc;
	if (fallocate(e->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off,
		      (off_t)len)) {
		rc = -errno;
		if (rc == -EOPNOTSUPP)
			rc = punch_zero(e->fd, off, len);
	}
	cache_put(s, e);
	return rc;
}

int oss_store_destroy(oss_store *s, uint64_t obj)
{
	return oss_store_destroy_many(s, &obj, 1);
}

int oss_store_destroy_many(oss_store *s, const uint64_t *objs, size_t n)
{
	char path[48];
	uint8_t unlinked[256 / 8] = { 0 }; /* directories O/<xx> to fsync */
	fdent *e;
	int rc, had = 0, err = 0;

	/* First the records, so that no write after this call can bring an
	 * object back.  They must be on disk before an object file goes (a
	 * crash between the two would let a stale write re-create it); for
	 * objects that were never written there is nothing to lose, so their
	 * records are only appended and become durable with the next synced
	 * one (a crash before that at worst lets a stale client make an orphan
	 * that lfsck removes).  This keeps unlinks of empty files, which never
	 * had objects, free of fsyncs on the OSS; a batch costs one write and
	 * at most one fdatasync, and one fsync per directory it unlinked in. */
	rc = oss_destroyed_add_many(s->dead, objs, n, 0);
	if (rc)
		return rc;
	for (size_t i = 0; i < n && !had; i++) {
		obj_path(objs[i], path, sizeof(path));
		had = faccessat(s->objfd, path, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
	}
	if (had && s->sync_dirs) {
		rc = oss_destroyed_sync(s->dead);
		if (rc)
			return rc;
	}
	for (size_t i = 0; i < n; i++) {
		obj_path(objs[i], path, sizeof(path));
		pthread_mutex_lock(&s->lock); /* per object: I/O goes on between */
		e = cache_find(s, objs[i]);
		if (e)
			cache_remove(s, e); /* in-flight I/O keeps its descriptor */
		if (unlinkat(s->objfd, path, 0) == 0) {
			unlinked[(objs[i] & 0xff) / 8] |= (uint8_t)(1u << (objs[i] & 7));
			if (s->objects)
				s->objects--;
		} else if (errno != ENOENT && !err) {
			err = -errno;
		}
		pthread_mutex_unlock(&s->lock);
	}
	/* Each directory after its unlinks, and when an earlier destroy's
	 * fsync failed every directory of this batch (its retry finds the
	 * objects gone). */
	if (err)
		return err;
	if (s->dir_sync_owed)
		for (size_t i = 0; i < n; i++)
			unlinked[(objs[i] & 0xff) / 8] |= (uint8_t)(1u << (objs[i] & 7));
	for (unsigned x = 0; x < 256 && !err; x++)
		if (unlinked[x / 8] & (1u << (x % 8)))
			err = dir_sync(s, x);
	s->dir_sync_owed = err != 0;
	return err;
}

int oss_store_stat(oss_store *s, uint64_t obj, uint64_t *size, uint64_t *blocks)
{
	char path[48];
	struct stat st;

	obj_path(obj, path, sizeof(path));
	*size = *blocks = 0;
	if (fstatat(s->objfd, path, &st, 0)) {
		if (errno == ENOENT)
			return 0;
		return -errno;
	}
	*size = (uint64_t)st.st_size;
	*blocks = (uint64_t)st.st_blocks;
	return 0;
}

int oss_store_sync(oss_store *s, uint64_t obj)
{
	fdent *e;
	int rc = cache_get(s, obj, 0, &e);

	if (rc == -ENOENT)
		return 0;
	if (rc)
		return rc;
	if (fsync(e->fd))
		rc = -errno;
	cache_put(s, e);
	return rc;
}

int oss_store_statfs(oss_store *s, uint64_t *total_bytes, uint64_t *free_bytes,
		     uint64_t *objects)
{
	struct statvfs v;

	if (fstatvfs(s->rootfd, &v))
		return -errno;
	*total_bytes = (uint64_t)v.f_blocks * v.f_frsize;
	*free_bytes = (uint64_t)v.f_bavail * v.f_frsize;
	pthread_mutex_lock(&s->lock);
	*objects = s->objects;
	pthread_mutex_unlock(&s->lock);
	return 0;
}

/* Parse an object file name: lower-case hex without leading zeros (the
 * form obj_path writes); anything else is not ours and is skipped. */
static int parse_id(const char *name, uint64_t *id)
{
	uint64_t v = 0;
	size_t n = strlen(name);

	if (n == 0 || n > 16 || (n > 1 && name[0] == '0'))
		return -1;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		unsigned d;
		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else
			return -1;
		v = v << 4 | d;
	}
	*id = v;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int oss_store_list(oss_store *s, uint64_t after, uint64_t *ids, size_t max, size_t *n,
		   int *eof)
{
	uint64_t *all = NULL;
	size_t cnt = 0, cap = 0;
	int rc = 0;

	*n = 0;
	*eof = 1;
	for (int i = 0; i < NSUBDIR; i++) {
		char sub[4];
		DIR *d;
		struct dirent *de;
		int fd;

		snprintf(sub, sizeof(sub), "%02x", i);
		fd = openat(s->objfd, sub, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0) {
			rc = -errno;
			goto out;
		}
		d = fdopendir(fd);
		if (!d) {
			rc = -errno;
			close(fd);
			goto out;
		}
		while ((de = readdir(d))) {
			uint64_t id;
			if (parse_id(de->d_name, &id) || id <= after || (id & 0xff) != (uint64_t)i)
				continue;
			if (cnt == cap) {
				size_t ncap = cap ? cap * 2 : 256;
				uint64_t *p = realloc(all, ncap * sizeof(*p));
				if (!p) {
					rc = -ENOMEM;
					closedir(d);
					goto out;
				}
				all = p;
				cap = ncap;
			}
			all[cnt++] = id;
		}
		closedir(d);
	}
	if (cnt)
		qsort(all, cnt, sizeof(*all), cmp_u64);
	*n = cnt < max ? cnt : max;
	if (*n)
		memcpy(ids, all, *n * sizeof(*ids));
	*eof = cnt <= max;
out:
	free(all);
	return rc;
}
