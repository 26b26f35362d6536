/* pfs_bench_main.c — pfs-bench: the workload generator bench/run.sh drives
 * against any directory (a pfs mount, the local disk, a FUSE passthrough),
 * so the same code measures all three side by side.
 *
 *   pfs-bench seqwrite DIR --streams N --size BYTES [--bs 1M]   N files, one per thread
 *   pfs-bench seqread  DIR --streams N --size BYTES [--bs 1M]   reads what seqwrite wrote
 *   pfs-bench randwrite DIR --size BYTES --ops K [--bs 4k] [--threads N]
 *   pfs-bench randread  DIR --size BYTES --ops K [--bs 4k] [--threads N]
 *   pfs-bench md DIR --files N [--threads T] [--cold 1]        create, stat, unlink rates
 *
 * With --cold 1 (root only), md drops the kernel's dentry/inode/page caches
 * before the stat and unlink phases, so every lookup reaches the file
 * system (for pfs: the MDS) instead of the client kernel's cache.
 *
 * Prints one line per phase: "<phase> <value> <unit> <seconds>" (MiB/s for
 * data, ops/s for random I/O and metadata).  Writes end with fsync so the
 * number includes getting the data to the servers/disk; so do md's create
 * and unlink phases, with an fsync of the directory (a file system that
 * answers unlinks before its server has them, as pfs under a directory
 * delegation does, is timed until they are on the server's disk; a FUSE
 * file system without fsyncdir, like bench/passthrough_main.c, pays
 * nothing for it); reads do not drop caches themselves (bench/run.sh does,
 * between phases). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/config.h"

struct opts {
	const char *mode, *dir;
	int streams, threads;
	uint64_t size, bs, ops, files, cold;
};

struct worker {
	const struct opts *o;
	int id;
	uint64_t done;
	int err;
	pthread_t t;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void *seq_worker(void *arg)
{
	struct worker *w = arg;
	const struct opts *o = w->o;
	int wr = !strcmp(o->mode, "seqwrite");
	char path[4096];
	char *buf = aligned_alloc(4096, o->bs);
	int fd;

	if (!buf) {
		w->err = ENOMEM;
		return NULL;
	}
	memset(buf, 0x5a + w->id, o->bs);
	snprintf(path, sizeof(path), "%s/seq.%d", o->dir, w->id);
	fd = open(path, wr ? O_WRONLY | O_CREAT | O_TRUNC : O_RDONLY, 0644);
	if (fd < 0) {
		w->err = errno;
		free(buf);
		return NULL;
	}
	for (uint64_t off = 0; off < o->size; off += o->bs) {
		ssize_t n = wr ? pwrite(fd, buf, o->bs, (off_t)off) : pread(fd, buf, o->bs, (off_t)off);
		if (n <= 0) {
			w->err = n < 0 ? errno : EIO;
			break;
		}
		w->done += (uint64_t)n;
	}
	if (wr && fsync(fd))
		w->err = errno;
	close(fd);
	free(buf);
	return NULL;
}

static void *rand_worker(void *arg)
{
	struct worker *w = arg;
	const struct opts *o = w->o;
	int wr = !strcmp(o->mode, "randwrite");
	char path[4096];
	char *buf = aligned_alloc(4096, o->bs);
	uint64_t seed = 0x9e3779b97f4a7c15ull * (uint64_t)(w->id + 1), blocks = o->size / o->bs;
	uint64_t my_ops = o->ops / (uint64_t)o->threads;
	int fd;

	if (!buf) {
		w->err = ENOMEM;
		return NULL;
	}
	memset(buf, 0xa5, o->bs);
	snprintf(path, sizeof(path), "%s/rand.dat", o->dir);
	fd = open(path, wr ? O_WRONLY : O_RDONLY);
	if (fd < 0) {
		w->err = errno;
		free(buf);
		return NULL;
	}
	for (uint64_t i = 0; i < my_ops; i++) {
		off_t off = (off_t)((xorshift(&seed) % blocks) * o->bs);
		ssize_t n = wr ? pwrite(fd, buf, o->bs, off) : pread(fd, buf, o->bs, off);
		if (n != (ssize_t)o->bs) {
			w->err = n < 0 ? errno : EIO;
			break;
		}
		w->done++;
	}
	if (wr && fsync(fd))
		w->err = errno;
	close(fd);
	free(buf);
	return NULL;
}

enum md_phase { MD_CREATE, MD_STAT, MD_UNLINK };
static enum md_phase md_now;

static void *md_worker(void *arg)
{
	struct worker *w = arg;
	const struct opts *o = w->o;
	char path[4096];
	struct stat st;

	for (uint64_t i = (uint64_t)w->id; i < o->files; i += (uint64_t)o->threads) {
		int rc = 0;
		snprintf(path, sizeof(path), "%s/md/f%08llu", o->dir, (unsigned long long)i);
		switch (md_now) {
		case MD_CREATE: {
			int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
			rc = fd < 0 ? -1 : close(fd);
			break;
		}
		case MD_STAT:
			rc = stat(path, &st);
			break;
		case MD_UNLINK:
			rc = unlink(path);
			break;
		}
		if (rc) {
			w->err = errno;
			return NULL;
		}
		w->done++;
	}
	return NULL;
}

/* fsync(2) of directory d; its time is added to *secs. */
static int fsync_dir(const char *d, double *secs)
{
	double t0 = now_s();
	int fd = open(d, O_RDONLY | O_DIRECTORY), err = 0;

	if (fd < 0)
		return errno;
	if (fsync(fd))
		err = errno;
	close(fd);
	*secs += now_s() - t0;
	return err;
}

/* Run n workers of fn; returns elapsed seconds and the sum of done. */
static int run(const struct opts *o, int n, void *(*fn)(void *), double *secs, uint64_t *total)
{
	struct worker *w = calloc((size_t)n, sizeof(*w));
	double t0 = now_s();
	int err = 0;

	if (!w)
		return ENOMEM;
	for (int i = 0; i < n; i++) {
		w[i].o = o;
		w[i].id = i;
		pthread_create(&w[i].t, NULL, fn, &w[i]);
	}
	*total = 0;
	for (int i = 0; i < n; i++) {
		pthread_join(w[i].t, NULL);
		*total += w[i].done;
		if (w[i].err && !err)
			err = w[i].err;
	}
	*secs = now_s() - t0;
	free(w);
	return err;
}

static int prepare_rand(const struct opts *o)
{
	char path[4096];
	char *buf = malloc(1 << 20);
	int fd, rc = 0;

	snprintf(path, sizeof(path), "%s/rand.dat", o->dir);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	if (fd < 0 || !buf) {
		free(buf);
		return errno;
	}
	struct stat st;
	if (fstat(fd, &st) == 0 && (uint64_t)st.st_size >= o->size)
		goto out;
	memset(buf, 0x11, 1 << 20);
	for (uint64_t off = 0; off < o->size; off += 1 << 20)
		if (pwrite(fd, buf, 1 << 20, (off_t)off) != 1 << 20) {
			rc = errno ? errno : EIO;
			break;
		}
	if (!rc && fsync(fd))
		rc = errno;
out:
	close(fd);
	free(buf);
	return rc;
}

static int drop_caches(void)
{
	int fd;

	sync();
	fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
	if (fd < 0)
		return errno;
	if (write(fd, "3", 1) != 1) {
		close(fd);
		return errno;
	}
	close(fd);
	return 0;
}

static int usage(void)
{
	fprintf(stderr,
		"usage: pfs-bench seqwrite|seqread DIR --streams N --size BYTES [--bs 1M]\n"
		"       pfs-bench randwrite|randread DIR --size BYTES --ops K [--bs 4k] [--threads N]\n"
		"       pfs-bench md DIR --files N [--threads T] [--cold 1]\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct opts o = { .streams = 4, .threads = 4, .size = 256u << 20, .bs = 0, .ops = 10000,
			  .files = 10000 };
	double secs;
	uint64_t total;
	int err;

	if (argc < 3)
		return usage();
	o.mode = argv[1];
	o.dir = argv[2];
	for (int i = 3; i + 1 < argc; i += 2) {
		uint64_t v;
		if (pfs_parse_size(argv[i + 1], &v) || v == 0)
			return usage();
		if (!strcmp(argv[i], "--streams"))
			o.streams = (int)v;
		else if (!strcmp(argv[i], "--threads"))
			o.threads = (int)v;
		else if (!strcmp(argv[i], "--size"))
			o.size = v;
		else if (!strcmp(argv[i], "--bs"))
			o.bs = v;
		else if (!strcmp(argv[i], "--ops"))
			o.ops = v;
		else if (!strcmp(argv[i], "--files"))
			o.files = v;
		else if (!strcmp(argv[i], "--cold"))
			o.cold = v;
		else
			return usage();
	}
	if (!strncmp(o.mode, "seq", 3)) {
		if (!o.bs)
			o.bs = 1 << 20;
		err = run(&o, o.streams, seq_worker, &secs, &total);
		if (err)
			goto fail;
		printf("%s %.1f MiB/s %.3f\n", o.mode, (double)total / (1 << 20) / secs, secs);
	} else if (!strncmp(o.mode, "rand", 4)) {
		if (!o.bs)
			o.bs = 4096;
		if ((err = prepare_rand(&o)))
			goto fail;
		err = run(&o, o.threads, rand_worker, &secs, &total);
		if (err)
			goto fail;
		printf("%s %.0f ops/s %.3f\n", o.mode, (double)total / secs, secs);
	} else if (!strcmp(o.mode, "md")) {
		static const char *names[] = { "create", "stat", "unlink" };
		char d[4096];
		snprintf(d, sizeof(d), "%s/md", o.dir);
		if (mkdir(d, 0755) && errno != EEXIST) {
			err = errno;
			goto fail;
		}
		for (int p = MD_CREATE; p <= MD_UNLINK; p++) {
			md_now = (enum md_phase)p;
			if (p != MD_CREATE && o.cold && (err = drop_caches()))
				goto fail;
			err = run(&o, o.threads, md_worker, &secs, &total);
			if (!err && p != MD_STAT)
				err = fsync_dir(d, &secs);
			if (err)
				goto fail;
			printf("%s %.0f ops/s %.3f\n", names[p], (double)total / secs, secs);
		}
		rmdir(d);
	} else {
		return usage();
	}
	return 0;
fail:
	fprintf(stderr, "pfs-bench %s %s: %s\n", o.mode, o.dir, strerror(err));
	return 1;
}
