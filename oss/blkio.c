/* blkio.c — per-job block-I/O cgroups on the OSS (cgroup v1 blkio
 * throttling); see blkio.h for the model, what is throttled, and limits.
 *
 * Design.  open finds the blkio mount in mountinfo and the opener's cgroup
 * in /proc/thread-self/cgroup, maps each OST to its disk, clears stale
 * pfs-oss.<pid> directories and creates its own.  Jobs live in a small
 * chained hash table (NBUCKET buckets, so lookups are O(jobs / NBUCKET))
 * guarded by one mutex; each job keeps its `tasks` file open so a switch
 * is a single write(2).  Every oss_blkio and every job cgroup gets a serial
 * that is never reused; a thread records (instance serial, epoch, job it
 * asked for, serial of the cgroup it is in).  The epoch moves whenever a
 * recorded placement may have become wrong (a job forgotten, a job gaining
 * or losing all its limits), so enter's fast path is "same instance, same
 * epoch, same job" without taking the lock.  Removing a cgroup moves the
 * tids listed in its `tasks` to the opener's cgroup first (oss/cgfs). */
#include "oss/blkio.h"
#include "oss/blkio_i.h"
#include "oss/cgfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "common/log.h"
#include "common/proto.h"

_Static_assert(OSS_BLKIO_JOB_MAX == PFS_JOBID_MAX, "a job id is the protocol's job id");

#define NBUCKET 64
#define STALE_PREFIX "pfs-oss."

enum { RD, WR };
static const char *const rule_file[2] = { "blkio.throttle.read_bps_device",
					  "blkio.throttle.write_bps_device" };

typedef struct blk_job {
	struct blk_job *next; /* hash chain */
	uint64_t serial;      /* never reused, never 0 */
	int tasks_fd;         /* <root>/<name>/tasks, O_WRONLY */
	int limited;          /* some limit in lim[] is non-zero */
	char id[OSS_BLKIO_JOB_MAX + 1];
	char name[OSS_BLKIO_NAME_MAX];
	uint64_t lim[][2]; /* per slot: bytes/s read, write; 0 = none */
} blk_job;

typedef struct blk_dev {
	unsigned maj, min; /* whole disk */
} blk_dev;

struct oss_blkio {
	uint64_t serial; /* immutable after open */
	char *root;      /* <mount>/pfs-oss.<pid>; NULL until created */
	int orig_fd;     /* tasks of the opener's cgroup, O_WRONLY */
	size_t n_osts;
	blk_dev *dev; /* [n_osts], immutable after open */
	pthread_mutex_t lock;
	_Atomic uint64_t epoch;   /* written under lock; read by enter's fast path */
	blk_job *bucket[NBUCKET]; /* guarded by lock, as is every job's content */
};

/* Serials of instances and job cgroups; 0 means "the opener's cgroup". */
static _Atomic uint64_t serials;

/* Where the calling thread last put itself (see the top of the file). */
static _Thread_local struct {
	uint64_t inst;  /* instance serial; 0 = placement unknown */
	uint64_t epoch; /* instance epoch when recorded */
	uint64_t where; /* serial of the job cgroup, 0 = the opener's */
	int has_job;    /* job below is meaningful (enter's argument was a job) */
	char job[OSS_BLKIO_JOB_MAX + 1];
} tl;

__attribute__((format(printf, 3, 4))) static void seterr(char *err, size_t errlen,
							 const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* The calling thread's cgroup in m, with a message on failure. */
static int own_cgroup(const char *cgfile, const char *ctl, const oss_cgfs_mount *m, char *out,
		      size_t outlen, char *err, size_t errlen)
{
	int rc = oss_cgfs_own(cgfile, ctl, m, out, outlen);

	if (rc == -ENOENT)
		seterr(err, errlen, "blkio: no %s line in %s", *ctl ? ctl : "cgroup2", cgfile);
	else if (rc == -EXDEV)
		seterr(err, errlen, "blkio: own cgroup is outside the mount of %s at %s", m->root,
		       m->point);
	else if (rc)
		seterr(err, errlen, "blkio: %s: %s", cgfile, strerror(-rc));
	return rc == -ENOENT || rc == -EXDEV ? -ENOTSUP : rc;
}

/* Why cgroup v2 cannot do this; always -ENOTSUP. */
static int v2_refuse(const char *cgfile, const oss_cgfs_mount *v2, char *err, size_t errlen)
{
	char dir[PATH_MAX], path[PATH_MAX + 32], ctl[512];
	int io = 0;

	if (own_cgroup(cgfile, "", v2, dir, sizeof(dir), err, errlen))
		return -ENOTSUP;
	snprintf(path, sizeof(path), "%s/cgroup.controllers", dir);
	if (oss_cgfs_read(path, ctl, sizeof(ctl)) == 0)
		for (char *sp, *t = strtok_r(ctl, " ", &sp); t; t = strtok_r(NULL, " ", &sp))
			io |= !strcmp(t, "io");
	if (!io)
		seterr(err, errlen,
		       "blkio: no cgroup v1 blkio mount, and cgroup v2 offers no io controller "
		       "at %s",
		       dir);
	else
		seterr(err, errlen,
		       "blkio: cgroup v2 io is a domain controller, absent from threaded cgroups, "
		       "so an I/O thread cannot be throttled apart from its process; needs a "
		       "cgroup v1 blkio hierarchy");
	return -ENOTSUP;
}

/* Remove pfs-oss.<pid> directories under the blkio mount whose pid is gone. */
static void remove_stale(const char *point, int to_fd)
{
	DIR *d = opendir(point);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char dir[PATH_MAX], sub[PATH_MAX * 2];
		const char *num = e->d_name + strlen(STALE_PREFIX);
		char *end;
		long pid;
		DIR *jd;
		struct dirent *je;
		int rc;

		if (strncmp(e->d_name, STALE_PREFIX, strlen(STALE_PREFIX)) || *num < '0' ||
		    *num > '9')
			continue;
		pid = strtol(num, &end, 10);
		if (*end || pid <= 0 || pid > INT_MAX || pid == getpid())
			continue;
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		if (snprintf(dir, sizeof(dir), "%s/%s", point, e->d_name) >= (int)sizeof(dir))
			continue;
		jd = opendir(dir);
		while (jd && (je = readdir(jd))) {
			struct stat st;

			if (je->d_name[0] == '.' ||
			    fstatat(dirfd(jd), je->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
			    !S_ISDIR(st.st_mode))
				continue;
			snprintf(sub, sizeof(sub), "%s/%s", dir, je->d_name);
			rc = oss_cgfs_remove(sub, to_fd);
			if (rc)
				pfs_log(PFS_LOG_WARNING, "blkio: stale %s: %s", sub, strerror(-rc));
		}
		if (jd)
			closedir(jd);
		rc = oss_cgfs_remove(dir, to_fd);
		if (rc)
			pfs_log(PFS_LOG_WARNING, "blkio: stale %s: %s", dir, strerror(-rc));
		else
			pfs_log(PFS_LOG_NOTICE, "blkio: removed stale %s", dir);
	}
	closedir(d);
}

/* ---- jobs ---- */

static unsigned job_hash(const char *job)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	for (; *job; job++)
		h = (h ^ (unsigned char)*job) * 16777619u;
	return h % NBUCKET;
}

static blk_job *job_find(const oss_blkio *b, const char *job)
{
	blk_job *j = b->bucket[job_hash(job)];

	while (j && strcmp(j->id, job))
		j = j->next;
	return j;
}

static void bump_epoch(oss_blkio *b)
{
	atomic_fetch_add_explicit(&b->epoch, 1, memory_order_release);
}

/* Write job's rules for the disk of `slot`: per direction, the sum of its
 * non-zero limits over the OSTs on that disk (0 = no rule). */
static int job_apply(const oss_blkio *b, const blk_job *j, size_t slot)
{
	const blk_dev *d = &b->dev[slot];
	char dir[PATH_MAX], text[64];

	snprintf(dir, sizeof(dir), "%s/%s", b->root, j->name);
	for (int rw = RD; rw <= WR; rw++) {
		uint64_t sum = 0;
		int rc;

		for (size_t t = 0; t < b->n_osts; t++) {
			if (b->dev[t].maj != d->maj || b->dev[t].min != d->min)
				continue;
			sum = j->lim[t][rw] > UINT64_MAX - sum ? UINT64_MAX : sum + j->lim[t][rw];
		}
		snprintf(text, sizeof(text), "%u:%u %llu", d->maj, d->min,
			 (unsigned long long)sum);
		rc = oss_cgfs_write(dir, rule_file[rw], text);
		if (rc)
			return rc;
	}
	return 0;
}

static int job_create(oss_blkio *b, const char *job, const char *name, blk_job **out)
{
	char dir[PATH_MAX], path[PATH_MAX + 8];
	blk_job *j = calloc(1, sizeof(*j) + b->n_osts * sizeof(j->lim[0]));

	if (!j)
		return -ENOMEM;
	strcpy(j->id, job);
	strcpy(j->name, name);
	snprintf(dir, sizeof(dir), "%s/%s", b->root, name);
	if (mkdir(dir, 0755)) {
		int rc = -errno;

		free(j);
		return rc;
	}
	snprintf(path, sizeof(path), "%s/tasks", dir);
	j->tasks_fd = open(path, O_WRONLY | O_CLOEXEC);
	if (j->tasks_fd < 0) {
		int rc = -errno;

		rmdir(dir);
		free(j);
		return rc;
	}
	j->serial = atomic_fetch_add(&serials, 1) + 1;
	*out = j;
	return 0;
}

/* Empty and remove j's cgroup and free j (unless removal fails). */
static int job_destroy(const oss_blkio *b, blk_job *j)
{
	char dir[PATH_MAX];
	int rc;

	snprintf(dir, sizeof(dir), "%s/%s", b->root, j->name);
	rc = oss_cgfs_remove(dir, b->orig_fd);
	if (rc)
		return rc;
	close(j->tasks_fd);
	free(j);
	return 0;
}

/* ---- API ---- */

static void blk_free(oss_blkio *b)
{
	if (b->root && rmdir(b->root) && errno != ENOENT)
		pfs_log(PFS_LOG_WARNING, "blkio: rmdir %s: %s", b->root, strerror(errno));
	if (b->orig_fd >= 0)
		close(b->orig_fd);
	pthread_mutex_destroy(&b->lock);
	free(b->root);
	free(b->dev);
	free(b);
}

/* Map every OST to its disk and check the kernel takes rules for it. */
static int map_devices(oss_blkio *b, const char *sysfs, const char *const *dirs, char *err,
		       size_t errlen)
{
	for (size_t i = 0; i < b->n_osts; i++) {
		struct stat st;
		unsigned maj, min;
		int rc;

		if (stat(dirs[i], &st)) {
			rc = -errno;
			seterr(err, errlen, "blkio: %s: %s", dirs[i], strerror(-rc));
			return rc;
		}
		maj = major(st.st_dev);
		min = minor(st.st_dev);
		rc = oss_cgfs_whole_disk(sysfs, maj, min, &b->dev[i].maj, &b->dev[i].min);
		if (rc == -ENODEV)
			seterr(err, errlen,
			       "blkio: %s is on %u:%u, which is no block device (tmpfs, "
			       "overlay, NFS or btrfs?): nothing to throttle",
			       dirs[i], maj, min);
		else if (rc)
			seterr(err, errlen, "blkio: %s: disk of %u:%u: %s", dirs[i], maj, min,
			       strerror(-rc));
		if (rc)
			return rc;
	}
	return 0;
}

/* Writing a 0 rule removes nothing but makes the kernel look the disk up. */
static int check_devices(const oss_blkio *b, const char *const *dirs, char *err, size_t errlen)
{
	for (size_t i = 0; i < b->n_osts; i++) {
		char text[32];
		int rc;

		snprintf(text, sizeof(text), "%u:%u 0", b->dev[i].maj, b->dev[i].min);
		rc = oss_cgfs_write(b->root, rule_file[WR], text);
		if (rc == -ENODEV || rc == -EINVAL)
			seterr(err, errlen, "blkio: %s: the kernel takes no throttle rule for disk %s",
			       dirs[i], text);
		else if (rc)
			seterr(err, errlen, "blkio: %s/%s: %s", b->root, rule_file[WR],
			       strerror(-rc));
		if (rc)
			return rc == -EINVAL ? -ENODEV : rc;
	}
	return 0;
}

int oss_blkio_open_env(const oss_blkio_env *env, const char *const *ost_dirs, size_t n_osts,
		       oss_blkio **out, char *err, size_t errlen)
{
	const char *mountinfo = env && env->mountinfo ? env->mountinfo : "/proc/self/mountinfo";
	const char *cgfile = env && env->cgroup ? env->cgroup : "/proc/thread-self/cgroup";
	const char *sysfs = env && env->sysfs ? env->sysfs : "/sys";
	char orig[PATH_MAX], path[PATH_MAX + 8];
	oss_cgfs_mount v1 = { 0 }, v2 = { 0 };
	oss_blkio *b;
	int rc;

	*out = NULL;
	if (n_osts == 0 || !ost_dirs) {
		seterr(err, errlen, "blkio: no OST directory");
		return -EINVAL;
	}
	rc = oss_cgfs_find_mounts(mountinfo, "blkio", &v1, &v2);
	if (rc) {
		seterr(err, errlen, "blkio: %s: %s", mountinfo, strerror(-rc));
		return rc;
	}
	if (!v1.found && v2.found)
		return v2_refuse(cgfile, &v2, err, errlen);
	if (!v1.found) {
		seterr(err, errlen, "blkio: no cgroup v1 blkio or cgroup v2 hierarchy mounted");
		return -ENOTSUP;
	}
	b = calloc(1, sizeof(*b));
	if (!b || !(b->dev = calloc(n_osts, sizeof(*b->dev)))) {
		free(b);
		seterr(err, errlen, "blkio: out of memory");
		return -ENOMEM;
	}
	b->orig_fd = -1;
	b->n_osts = n_osts;
	pthread_mutex_init(&b->lock, NULL);
	rc = own_cgroup(cgfile, "blkio", &v1, orig, sizeof(orig), err, errlen);
	if (rc)
		goto fail;
	snprintf(path, sizeof(path), "%s/tasks", orig);
	b->orig_fd = open(path, O_WRONLY | O_CLOEXEC);
	if (b->orig_fd < 0) {
		rc = errno == EACCES || errno == EPERM || errno == EROFS ? -EACCES : -errno;
		seterr(err, errlen, "blkio: %s: %s", path, strerror(errno));
		goto fail;
	}
	rc = map_devices(b, sysfs, ost_dirs, err, errlen);
	if (rc)
		goto fail;
	remove_stale(v1.point, b->orig_fd);
	if (asprintf(&b->root, "%s/" STALE_PREFIX "%d", v1.point, (int)getpid()) < 0) {
		b->root = NULL;
		rc = -ENOMEM;
		seterr(err, errlen, "blkio: out of memory");
		goto fail;
	}
	if (strlen(b->root) + 1 + OSS_BLKIO_NAME_MAX + 64 > PATH_MAX) {
		rc = -ENAMETOOLONG;
		seterr(err, errlen, "blkio: %s: path too long", b->root);
		free(b->root);
		b->root = NULL;
		goto fail;
	}
	if (mkdir(b->root, 0755)) {
		rc = errno == EEXIST ? -EBUSY
		     : errno == EACCES || errno == EPERM || errno == EROFS ? -EACCES
									    : -errno;
		seterr(err, errlen, "blkio: mkdir %s: %s%s", b->root, strerror(errno),
		       rc == -EBUSY ? " (one oss_blkio per process)" : "");
		free(b->root);
		b->root = NULL;
		goto fail;
	}
	rc = check_devices(b, ost_dirs, err, errlen);
	if (rc)
		goto fail;
	b->serial = atomic_fetch_add(&serials, 1) + 1;
	*out = b;
	return 0;
fail:
	blk_free(b);
	return rc;
}

int oss_blkio_open(const char *const *ost_dirs, size_t n_osts, oss_blkio **out, char *err,
		   size_t errlen)
{
	return oss_blkio_open_env(NULL, ost_dirs, n_osts, out, err, errlen);
}

void oss_blkio_close(oss_blkio *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < NBUCKET; i++) {
		while (b->bucket[i]) {
			blk_job *j = b->bucket[i];
			int rc;

			b->bucket[i] = j->next;
			rc = job_destroy(b, j);
			if (rc) {
				pfs_log(PFS_LOG_WARNING, "blkio: remove %s/%s: %s", b->root,
					j->name, strerror(-rc));
				close(j->tasks_fd);
				free(j);
			}
		}
	}
	bump_epoch(b);
	blk_free(b);
}

const char *oss_blkio_kind(const oss_blkio *b)
{
	(void)b;
	return "v1";
}

const char *oss_blkio_root(const oss_blkio *b)
{
	return b->root;
}

int oss_blkio_job_name(const char *job, char out[OSS_BLKIO_NAME_MAX])
{
	static const char hex[] = "0123456789abcdef";
	size_t len;
	char *o = out;

	if (!job)
		return -EINVAL;
	len = strnlen(job, OSS_BLKIO_JOB_MAX + 1);
	if (len == 0 || len > OSS_BLKIO_JOB_MAX)
		return -EINVAL;
	*o++ = 'j';
	*o++ = '.';
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)job[i];

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '.' || c == '_' || c == '-') {
			*o++ = (char)c;
		} else {
			*o++ = '%';
			*o++ = hex[c >> 4];
			*o++ = hex[c & 15];
		}
	}
	*o = '\0';
	return 0;
}

int oss_blkio_set(oss_blkio *b, const char *job, size_t slot, uint64_t read_bps,
		  uint64_t write_bps)
{
	char name[OSS_BLKIO_NAME_MAX];
	uint64_t old[2];
	blk_job *j;
	int rc, created = 0, limited = 0;

	rc = oss_blkio_job_name(job, name);
	if (rc)
		return rc;
	if (slot >= b->n_osts)
		return -EINVAL;
	pthread_mutex_lock(&b->lock);
	j = job_find(b, job);
	if (!j) {
		if (!read_bps && !write_bps)
			goto out;
		rc = job_create(b, job, name, &j);
		if (rc)
			goto out;
		created = 1;
	}
	memcpy(old, j->lim[slot], sizeof(old));
	j->lim[slot][RD] = read_bps;
	j->lim[slot][WR] = write_bps;
	rc = job_apply(b, j, slot);
	if (rc) {
		memcpy(j->lim[slot], old, sizeof(old));
		if (created) {
			if (job_destroy(b, j) == 0)
				goto out;
			/* Could not remove it: keep it known so close retries. */
		} else {
			(void)job_apply(b, j, slot); /* best effort: back to the old rules */
			goto out;
		}
	}
	if (created) {
		unsigned h = job_hash(job);

		j->next = b->bucket[h];
		b->bucket[h] = j;
	}
	for (size_t t = 0; t < b->n_osts; t++)
		limited |= j->lim[t][RD] || j->lim[t][WR];
	if (limited != j->limited || created) {
		j->limited = limited;
		bump_epoch(b);
	}
out:
	pthread_mutex_unlock(&b->lock);
	return rc;
}

int oss_blkio_enter(oss_blkio *b, const char *job)
{
	size_t len = 0;
	blk_job *j = NULL;
	uint64_t target;
	int rc = 0;

	if (job) {
		len = strnlen(job, OSS_BLKIO_JOB_MAX + 1);
		if (len > OSS_BLKIO_JOB_MAX)
			return -EINVAL;
		if (len == 0)
			job = NULL;
	}
	if (tl.inst == b->serial &&
	    tl.epoch == atomic_load_explicit(&b->epoch, memory_order_acquire) &&
	    (job ? tl.has_job && !memcmp(tl.job, job, len + 1) : !tl.has_job))
		return 0;
	pthread_mutex_lock(&b->lock);
	if (job)
		j = job_find(b, job);
	target = j && j->limited ? j->serial : 0;
	if (tl.inst != b->serial || tl.where != target)
		rc = oss_cgfs_put_tid(target ? j->tasks_fd : b->orig_fd, gettid());
	if (rc == 0) {
		tl.inst = b->serial;
		tl.epoch = atomic_load_explicit(&b->epoch, memory_order_relaxed);
		tl.where = target;
		tl.has_job = job != NULL;
		if (job)
			memcpy(tl.job, job, len + 1);
	} else {
		tl.inst = 0; /* where the thread is is no longer known */
	}
	pthread_mutex_unlock(&b->lock);
	return rc;
}

int oss_blkio_forget(oss_blkio *b, const char *job)
{
	char name[OSS_BLKIO_NAME_MAX];
	blk_job **pp, *j;
	int rc;

	rc = oss_blkio_job_name(job, name);
	if (rc)
		return rc;
	pthread_mutex_lock(&b->lock);
	for (pp = &b->bucket[job_hash(job)]; *pp && strcmp((*pp)->id, job); pp = &(*pp)->next)
		;
	j = *pp;
	if (j) {
		blk_job *next = j->next;

		/* Threads recorded as inside j are about to be moved out. */
		bump_epoch(b);
		rc = job_destroy(b, j);
		if (rc == 0)
			*pp = next;
	}
	pthread_mutex_unlock(&b->lock);
	return rc;
}
