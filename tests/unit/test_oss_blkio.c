/* test_oss_blkio.c — per-job blkio cgroups: job-name encoding and the
 * cgroup v2 refusal against fake /proc files; then, as root
 * on a cgroup v1 blkio machine, a real ext4 file system on a loop device:
 * rules written, O_DIRECT writes and reads held to 20 MB/s against an
 * unthrottled control, threads moved out by forget, junk job ids, stale
 * directories of dead OSSes, tmpfs refused, and the cost of a switch.
 * Without root, a loop device, mkfs.ext4 or a v1 blkio hierarchy the kernel
 * tests are skipped with the reason. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/log.h"
#include "oss/blkio.h"
#include "oss/blkio_i.h"

#define MIB (1024 * 1024)
#define RATE 20000000ull /* bytes/s: the limit under test */
#define IO_MIB 40        /* MiB moved per timed pass */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static int rm_rf(const char *path)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
	return system(cmd);
}

static int exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* ---- pure: no privileges needed ---- */

static void test_blkio_job_name(void **state)
{
	static const struct {
		const char *job, *name;
	} tab[] = {
		{ "alice.42", "j.alice.42" },
		{ "a/b", "j.a%2fb" },
		{ "a%2fb", "j.a%252fb" }, /* the escape is escaped: no collision */
		{ "/", "j.%2f" },
		{ "tasks", "j.tasks" },
		{ "x y\n", "j.x%20y%0a" },
		{ "\x01\xff", "j.%01%ff" },
		{ "dd_0-1", "j.dd_0-1" },
	};
	char name[OSS_BLKIO_NAME_MAX], other[OSS_BLKIO_NAME_MAX], job[OSS_BLKIO_JOB_MAX + 2];

	(void)state;
	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		assert_int_equal(oss_blkio_job_name(tab[i].job, name), 0);
		assert_string_equal(name, tab[i].name);
	}
	/* "." and ".." keep their dots but can never be "." or "..". */
	assert_int_equal(oss_blkio_job_name(".", name), 0);
	assert_int_equal(oss_blkio_job_name("..", other), 0);
	assert_string_equal(name, "j..");
	assert_string_equal(other, "j...");

	/* The longest id, all bytes unsafe, fits; one more byte does not. */
	memset(job, 0xfe, OSS_BLKIO_JOB_MAX);
	job[OSS_BLKIO_JOB_MAX] = '\0';
	assert_int_equal(oss_blkio_job_name(job, name), 0);
	assert_int_equal(strlen(name), OSS_BLKIO_NAME_MAX - 1);
	assert_null(strchr(name, '/'));
	job[OSS_BLKIO_JOB_MAX] = 'x';
	job[OSS_BLKIO_JOB_MAX + 1] = '\0';
	assert_int_equal(oss_blkio_job_name(job, name), -EINVAL);
	assert_int_equal(oss_blkio_job_name("", name), -EINVAL);
	assert_int_equal(oss_blkio_job_name(NULL, name), -EINVAL);

	/* Every single byte gives a distinct, slash-free name. */
	for (int c = 1; c < 256; c++) {
		char a[2] = { (char)c, 0 };

		assert_int_equal(oss_blkio_job_name(a, name), 0);
		assert_null(strchr(name, '/'));
		for (int d = 1; d < c; d++) {
			char bb[2] = { (char)d, 0 };

			assert_int_equal(oss_blkio_job_name(bb, other), 0);
			assert_string_not_equal(name, other);
		}
	}
}

/* Fake mountinfo and cgroup files: only cgroup2 (mounted at a path with a
 * space, escaped as mountinfo does), with and without io. */
static void test_blkio_v2_refused(void **state)
{
	char dir[] = "/tmp/pfs-test-blkio-v2-XXXXXX", cg2[256], p[PATH_MAX],
	     mi[PATH_MAX], cgf[PATH_MAX], err[256];
	const char *osts[] = { "/" };
	static char sentinel;
	oss_blkio_env env;
	oss_blkio *b = (oss_blkio *)&sentinel;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(cg2, sizeof(cg2), "%s/cg v2", dir);
	snprintf(p, sizeof(p), "%s/oss.slice", cg2);
	assert_int_equal(mkdir(cg2, 0755), 0);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(mi, sizeof(mi), "%s/mountinfo", dir);
	snprintf(cgf, sizeof(cgf), "%s/cgroup", dir);
	snprintf(p, sizeof(p),
		 "22 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n"
		 "35 22 0:30 / %s/cg\\040v2 rw,nosuid - cgroup2 cgroup2 rw\n",
		 dir);
	write_file(mi, p);
	write_file(cgf, "0::/oss.slice\n");
	snprintf(p, sizeof(p), "%s/oss.slice/cgroup.controllers", cg2);
	write_file(p, "cpu io memory pids\n");
	env = (oss_blkio_env){ mi, cgf, NULL };

	err[0] = '\0';
	assert_int_equal(oss_blkio_open_env(&env, osts, 1, &b, err, sizeof(err)), -ENOTSUP);
	assert_null(b);
	assert_non_null(strstr(err, "domain controller"));

	write_file(p, "cpu memory\n");
	err[0] = '\0';
	assert_int_equal(oss_blkio_open_env(&env, osts, 1, &b, err, sizeof(err)), -ENOTSUP);
	assert_non_null(strstr(err, "no io"));
	assert_non_null(strstr(err, "cg v2/oss.slice")); /* the unescaped mount point */

	/* No cgroup hierarchy at all. */
	write_file(mi, "22 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n");
	err[0] = '\0';
	assert_int_equal(oss_blkio_open_env(&env, osts, 1, &b, err, sizeof(err)), -ENOTSUP);
	assert_non_null(strstr(err, "no cgroup"));

	assert_int_equal(oss_blkio_open(osts, 0, &b, err, sizeof(err)), -EINVAL);
	rm_rf(dir);
}

/* ---- kernel: root, loop device, ext4, cgroup v1 blkio ---- */

typedef struct kfix {
	char skip[160]; /* non-empty: why the kernel tests cannot run */
	char dir[64];   /* temp dir */
	char img[96], mnt[96], loopdev[64];
	char ost[2][128]; /* two OSTs on the one loop disk */
	int mounted;
	unsigned maj, min;
	oss_blkio *b; /* the test's instance: closed by close_b even on failure */
	char cgmnt[256];    /* the v1 blkio mount point */
	pid_t sleeper;      /* test_blkio_stale's child */
	char made[3][300];  /* test_blkio_stale's directories, children first */
} kfix;

static int have_v1_blkio(kfix *k)
{
	FILE *f = fopen("/proc/self/mounts", "r");
	char line[512];
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		char dev[128], point[256], type[32], opts[256];

		if (sscanf(line, "%127s %255s %31s %255s", dev, point, type, opts) == 4 &&
		    !strcmp(type, "cgroup") && strstr(opts, "blkio")) {
			snprintf(k->cgmnt, sizeof(k->cgmnt), "%s", point);
			found = 1;
		}
	}
	fclose(f);
	return found;
}

static int kernel_setup(void **state)
{
	kfix *k = calloc(1, sizeof(*k));
	char cmd[512];
	FILE *p;
	struct stat st;
	int fd;

	*state = k;
	if (geteuid() != 0) {
		snprintf(k->skip, sizeof(k->skip), "not root");
		return 0;
	}
	if (!have_v1_blkio(k)) {
		snprintf(k->skip, sizeof(k->skip), "no cgroup v1 blkio hierarchy mounted");
		return 0;
	}
	snprintf(k->dir, sizeof(k->dir), "/tmp/pfs-test-blkio-XXXXXX");
	if (!mkdtemp(k->dir)) {
		snprintf(k->skip, sizeof(k->skip), "mkdtemp: %s", strerror(errno));
		return 0;
	}
	snprintf(k->img, sizeof(k->img), "%s/disk.img", k->dir);
	snprintf(k->mnt, sizeof(k->mnt), "%s/mnt", k->dir);
	fd = open(k->img, O_CREAT | O_WRONLY, 0600);
	if (fd < 0 || ftruncate(fd, 256 * MIB) || mkdir(k->mnt, 0755)) {
		snprintf(k->skip, sizeof(k->skip), "image: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return 0;
	}
	close(fd);
	snprintf(cmd, sizeof(cmd), "mkfs.ext4 -q -F '%s' >/dev/null 2>&1", k->img);
	if (system(cmd) != 0) {
		snprintf(k->skip, sizeof(k->skip), "mkfs.ext4 failed (e2fsprogs installed?)");
		return 0;
	}
	snprintf(cmd, sizeof(cmd), "losetup -f --show '%s' 2>/dev/null", k->img);
	p = popen(cmd, "r");
	if (!p || !fgets(k->loopdev, sizeof(k->loopdev), p)) {
		if (p)
			pclose(p);
		snprintf(k->skip, sizeof(k->skip), "no loop device (losetup -f failed)");
		return 0;
	}
	pclose(p);
	k->loopdev[strcspn(k->loopdev, "\n")] = '\0';
	if (mount(k->loopdev, k->mnt, "ext4", 0, NULL)) {
		snprintf(k->skip, sizeof(k->skip), "mount %s: %s", k->loopdev, strerror(errno));
		return 0;
	}
	k->mounted = 1;
	stat(k->loopdev, &st);
	k->maj = major(st.st_rdev);
	k->min = minor(st.st_rdev);
	for (int i = 0; i < 2; i++) {
		snprintf(k->ost[i], sizeof(k->ost[i]), "%s/ost%d", k->mnt, i);
		mkdir(k->ost[i], 0755);
	}
	return 0;
}

static int kernel_teardown(void **state)
{
	kfix *k = *state;
	char cmd[256];

	if (k->mounted && umount(k->mnt) && umount2(k->mnt, MNT_DETACH))
		fprintf(stderr, "umount %s: %s\n", k->mnt, strerror(errno));
	if (k->loopdev[0]) {
		snprintf(cmd, sizeof(cmd), "losetup -d '%s'", k->loopdev);
		if (system(cmd) != 0)
			fprintf(stderr, "%s failed\n", cmd);
	}
	if (k->dir[0] && strncmp(k->dir, "/tmp/pfs-test-blkio-", 20) == 0)
		rm_rf(k->dir);
	free(k);
	return 0;
}

static kfix *need_kernel(void **state)
{
	kfix *k = *state;

	if (k->skip[0]) {
		print_message("skipped: %s\n", k->skip);
		skip();
	}
	return k;
}

static int close_b(void **state)
{
	kfix *k = *state;

	oss_blkio_close(k->b);
	k->b = NULL;
	return 0;
}

static oss_blkio *open_both(kfix *k)
{
	const char *osts[] = { k->ost[0], k->ost[1] };
	char err[256] = "";
	oss_blkio *b = NULL;
	int rc = oss_blkio_open(osts, 2, &b, err, sizeof(err));

	if (rc)
		print_message("open: %s\n", err);
	assert_int_equal(rc, 0);
	assert_non_null(b);
	k->b = b;
	return b;
}

/* The blkio path of thread tid (0 = the caller), relative to the root of
 * the hierarchy. */
static void blkio_path_of(pid_t tid, char *out, size_t len)
{
	char path[64], line[512];
	FILE *f;

	if (tid) {
		snprintf(path, sizeof(path), "/proc/self/task/%d/cgroup", (int)tid);
		if (!exists(path)) /* another process */
			snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)tid);
	} else
		snprintf(path, sizeof(path), "/proc/thread-self/cgroup");
	f = fopen(path, "r");
	assert_non_null(f);
	out[0] = '\0';
	while (fgets(line, sizeof(line), f)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;

		if (c2 && !strncmp(c1 + 1, "blkio:", 6)) {
			c2[1 + strcspn(c2 + 1, "\n")] = '\0';
			snprintf(out, len, "%s", c2 + 1);
		}
	}
	fclose(f);
}

/* The hierarchy-relative path of job's cgroup (the mount shows the root). */
static void job_rel(oss_blkio *b, const char *job, char *out, size_t len)
{
	char name[OSS_BLKIO_NAME_MAX];
	const char *root = oss_blkio_root(b);

	assert_int_equal(oss_blkio_job_name(job, name), 0);
	snprintf(out, len, "%s/%s", strrchr(root, '/'), name);
}

static void job_file(oss_blkio *b, const char *job, const char *file, char *out, size_t len)
{
	char name[OSS_BLKIO_NAME_MAX];

	assert_int_equal(oss_blkio_job_name(job, name), 0);
	snprintf(out, len, "%s/%s%s%s", oss_blkio_root(b), name, file ? "/" : "", file ? file : "");
}

static void read_text(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	assert_true(fd >= 0);
	n = read(fd, buf, len - 1);
	close(fd);
	assert_true(n >= 0);
	buf[n] = '\0';
}

static void test_blkio_open_close(void **state)
{
	kfix *k = need_kernel(state);
	oss_blkio *b = open_both(k), *b2 = (oss_blkio *)k;
	const char *osts[] = { k->ost[0] };
	char root[PATH_MAX], err[256] = "";

	assert_string_equal(oss_blkio_kind(b), "v1");
	snprintf(root, sizeof(root), "%s", oss_blkio_root(b));
	assert_true(exists(root));
	assert_int_equal(oss_blkio_open(osts, 1, &b2, err, sizeof(err)), -EBUSY);
	assert_null(b2);
	assert_non_null(strstr(err, "one oss_blkio per process"));
	assert_true(exists(root)); /* the failed open did not take it away */
	close_b(state);
	assert_false(exists(root));
	oss_blkio_close(NULL);
}

static void test_blkio_tmpfs_enodev(void **state)
{
	kfix *k = need_kernel(state);
	char tdir[PATH_MAX], root[PATH_MAX], err[256] = "";
	const char *osts[2];
	oss_blkio *b = (oss_blkio *)k;
	int rc;

	snprintf(tdir, sizeof(tdir), "%s/tmpfs", k->dir);
	assert_int_equal(mkdir(tdir, 0755), 0);
	assert_int_equal(mount("tmpfs", tdir, "tmpfs", 0, "size=1m"), 0);
	osts[0] = k->ost[0];
	osts[1] = tdir;
	rc = oss_blkio_open(osts, 2, &b, err, sizeof(err));
	umount(tdir);
	rmdir(tdir);
	print_message("tmpfs: %s\n", err);
	assert_int_equal(rc, -ENODEV);
	assert_null(b);
	assert_non_null(strstr(err, "no block device"));
	assert_non_null(strstr(err, tdir));
	/* Nothing left behind. */
	snprintf(root, sizeof(root), "%s/pfs-oss.%d", k->cgmnt, (int)getpid());
	assert_false(exists(root));
}

static void test_blkio_rules(void **state)
{
	kfix *k = need_kernel(state);
	oss_blkio *b = open_both(k);
	char path[PATH_MAX], text[256], want[64], jdir[PATH_MAX];

	/* Both OSTs are on the one disk: its rule is the sum of the two. */
	assert_int_equal(oss_blkio_set(b, "job1", 0, 0, RATE), 0);
	job_file(b, "job1", "blkio.throttle.write_bps_device", path, sizeof(path));
	read_text(path, text, sizeof(text));
	snprintf(want, sizeof(want), "%u:%u %llu\n", k->maj, k->min, RATE);
	assert_string_equal(text, want);
	assert_int_equal(oss_blkio_set(b, "job1", 1, 7000000, 5000000), 0);
	read_text(path, text, sizeof(text));
	snprintf(want, sizeof(want), "%u:%u %llu\n", k->maj, k->min, RATE + 5000000);
	assert_string_equal(text, want);
	job_file(b, "job1", "blkio.throttle.read_bps_device", path, sizeof(path));
	read_text(path, text, sizeof(text));
	snprintf(want, sizeof(want), "%u:%u 7000000\n", k->maj, k->min);
	assert_string_equal(text, want);

	/* Back to 0 everywhere: no rule left, the cgroup stays until forget. */
	assert_int_equal(oss_blkio_set(b, "job1", 0, 0, 0), 0);
	assert_int_equal(oss_blkio_set(b, "job1", 1, 0, 0), 0);
	read_text(path, text, sizeof(text));
	assert_string_equal(text, "");
	job_file(b, "job1", "blkio.throttle.write_bps_device", path, sizeof(path));
	read_text(path, text, sizeof(text));
	assert_string_equal(text, "");
	job_file(b, "job1", NULL, jdir, sizeof(jdir));
	assert_true(exists(jdir));
	assert_int_equal(oss_blkio_forget(b, "job1"), 0);
	assert_false(exists(jdir));
	assert_int_equal(oss_blkio_forget(b, "job1"), 0); /* unknown: success */

	/* Zero limits for an unknown job create nothing. */
	assert_int_equal(oss_blkio_set(b, "job2", 0, 0, 0), 0);
	job_file(b, "job2", NULL, jdir, sizeof(jdir));
	assert_false(exists(jdir));
	assert_int_equal(oss_blkio_set(b, "job2", 2, 1, 1), -EINVAL);
	assert_int_equal(oss_blkio_set(b, "", 0, 1, 1), -EINVAL);
	assert_int_equal(oss_blkio_set(b, "0123456789abcdef0123456789abcdefX", 0, 1, 1),
			 -EINVAL);
	assert_int_equal(oss_blkio_enter(b, "0123456789abcdef0123456789abcdefX"), -EINVAL);
	close_b(state);
}

static double timed_io(const char *path, int write, char *buf)
{
	int fd = open(path, (write ? O_WRONLY | O_CREAT | O_TRUNC : O_RDONLY) | O_DIRECT, 0600);
	double t0 = now_s();

	assert_true(fd >= 0);
	for (int i = 0; i < IO_MIB; i++) {
		ssize_t n = write ? pwrite(fd, buf, MIB, (off_t)i * MIB)
				  : pread(fd, buf, MIB, (off_t)i * MIB);

		assert_int_equal(n, MIB);
	}
	t0 = now_s() - t0;
	close(fd);
	return t0;
}

/* Bytes the job's cgroup sent to the disk in direction dir ("Read"/"Write"). */
static unsigned long long charged(oss_blkio *b, const char *job, kfix *k, const char *dir)
{
	char path[PATH_MAX], text[4096], key[64];
	unsigned long long v = 0;
	char *p;

	job_file(b, job, "blkio.throttle.io_service_bytes", path, sizeof(path));
	read_text(path, text, sizeof(text));
	snprintf(key, sizeof(key), "%u:%u %s ", k->maj, k->min, dir);
	p = strstr(text, key);
	if (p)
		v = strtoull(p + strlen(key), NULL, 10);
	return v;
}

static void test_blkio_throttle(void **state)
{
	kfix *k = need_kernel(state);
	oss_blkio *b = open_both(k);
	char f1[PATH_MAX], f2[PATH_MAX], where[PATH_MAX], want[PATH_MAX], orig[PATH_MAX];
	char *buf = NULL;
	double tw, tc, tr, trc, total = IO_MIB * (double)MIB;

	assert_int_equal(posix_memalign((void **)&buf, 4096, MIB), 0);
	memset(buf, 0x5a, MIB);
	snprintf(f1, sizeof(f1), "%s/throttled", k->ost[0]);
	snprintf(f2, sizeof(f2), "%s/control", k->ost[1]);
	blkio_path_of(0, orig, sizeof(orig));

	assert_int_equal(oss_blkio_set(b, "wjob", 0, 0, RATE), 0);
	assert_int_equal(oss_blkio_set(b, "rjob", 1, RATE, 0), 0);

	assert_int_equal(oss_blkio_enter(b, "wjob"), 0);
	blkio_path_of(0, where, sizeof(where));
	job_rel(b, "wjob", want, sizeof(want));
	assert_string_equal(where, want);
	tw = timed_io(f1, 1, buf);
	assert_int_equal(oss_blkio_enter(b, NULL), 0);
	blkio_path_of(0, where, sizeof(where));
	assert_string_equal(where, orig);
	tc = timed_io(f2, 1, buf);

	/* Reads: rjob is limited on slot 1, i.e. on the same disk. */
	assert_int_equal(oss_blkio_enter(b, "rjob"), 0);
	tr = timed_io(f1, 0, buf);
	assert_int_equal(oss_blkio_enter(b, ""), 0);
	trc = timed_io(f2, 0, buf);

	print_message("O_DIRECT %d MiB: write at %.1f MB/s limited (%.2f s) vs %.1f MB/s free "
		      "(%.2f s); read %.1f MB/s limited (%.2f s) vs %.1f MB/s free (%.2f s); "
		      "limit %.1f MB/s\n",
		      IO_MIB, total / tw / 1e6, tw, total / tc / 1e6, tc, total / tr / 1e6, tr,
		      total / trc / 1e6, trc, RATE / 1e6);
	/* 41.9 MB at 20 MB/s is 2.1 s; blk-throttle lets a slice through early. */
	assert_true(tw >= 1.5);
	assert_true(tw < 10.0);
	assert_true(tc * 3 < tw);
	assert_true(tr >= 1.5);
	assert_true(tr < 10.0);
	assert_true(trc * 3 < tr);
	/* The bytes were charged to the job cgroups, not elsewhere. */
	assert_true(charged(b, "wjob", k, "Write") >= (unsigned long long)IO_MIB * MIB);
	assert_true(charged(b, "rjob", k, "Read") >= (unsigned long long)IO_MIB * MIB);
	/* wjob only read what ext4 needed for allocation, rjob wrote nothing. */
	assert_true(charged(b, "wjob", k, "Read") < (unsigned long long)IO_MIB * MIB / 10);
	assert_true(charged(b, "rjob", k, "Write") < (unsigned long long)IO_MIB * MIB / 10);
	free(buf);
	unlink(f1);
	unlink(f2);
}

/* A helper thread that enters a job on command and reports its tid. */
typedef struct helper {
	oss_blkio *b;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int cmd, done, rc; /* cmd: 1 = enter job, 2 = exit; done counts commands */
	const char *job;
	pid_t tid;
} helper;

static void *helper_main(void *arg)
{
	helper *h = arg;

	pthread_mutex_lock(&h->mu);
	h->tid = gettid();
	for (;;) {
		while (!h->cmd)
			pthread_cond_wait(&h->cv, &h->mu);
		if (h->cmd == 2)
			break;
		h->rc = oss_blkio_enter(h->b, h->job);
		h->cmd = 0;
		h->done++;
		pthread_cond_broadcast(&h->cv);
	}
	pthread_mutex_unlock(&h->mu);
	return NULL;
}

static int helper_do(helper *h, int cmd, const char *job)
{
	int want;

	pthread_mutex_lock(&h->mu);
	want = h->done + 1;
	h->job = job;
	h->cmd = cmd;
	pthread_cond_broadcast(&h->cv);
	while (cmd == 1 && h->done < want)
		pthread_cond_wait(&h->cv, &h->mu);
	pthread_mutex_unlock(&h->mu);
	return h->rc;
}

static void test_blkio_forget_moves_out(void **state)
{
	kfix *k = need_kernel(state);
	oss_blkio *b = open_both(k);
	helper h = { .b = b };
	pthread_t th;
	char where[PATH_MAX], want[PATH_MAX], orig[PATH_MAX], jdir[PATH_MAX];

	pthread_mutex_init(&h.mu, NULL);
	pthread_cond_init(&h.cv, NULL);
	blkio_path_of(0, orig, sizeof(orig));
	assert_int_equal(pthread_create(&th, NULL, helper_main, &h), 0);
	assert_int_equal(oss_blkio_set(b, "gone", 0, RATE, RATE), 0);
	assert_int_equal(helper_do(&h, 1, "gone"), 0);
	blkio_path_of(h.tid, where, sizeof(where));
	job_rel(b, "gone", want, sizeof(want));
	assert_string_equal(where, want);

	/* forget moves the helper out although it is busy elsewhere. */
	assert_int_equal(oss_blkio_forget(b, "gone"), 0);
	job_file(b, "gone", NULL, jdir, sizeof(jdir));
	assert_false(exists(jdir));
	blkio_path_of(h.tid, where, sizeof(where));
	assert_string_equal(where, orig);

	/* The job comes back: the helper's cached placement must not fool it. */
	assert_int_equal(oss_blkio_set(b, "gone", 1, 0, RATE), 0);
	assert_int_equal(helper_do(&h, 1, "gone"), 0);
	blkio_path_of(h.tid, where, sizeof(where));
	assert_string_equal(where, want);

	/* A job whose limits all drop to 0 sends its threads home on enter. */
	assert_int_equal(oss_blkio_set(b, "gone", 1, 0, 0), 0);
	assert_int_equal(helper_do(&h, 1, "gone"), 0);
	blkio_path_of(h.tid, where, sizeof(where));
	assert_string_equal(where, orig);
	assert_int_equal(oss_blkio_set(b, "gone", 1, 0, RATE), 0);
	assert_int_equal(helper_do(&h, 1, "gone"), 0);
	blkio_path_of(h.tid, where, sizeof(where));
	assert_string_equal(where, want);

	/* close moves it out too. */
	close_b(state);
	blkio_path_of(h.tid, where, sizeof(where));
	assert_string_equal(where, orig);
	helper_do(&h, 2, NULL);
	pthread_join(th, NULL);
	pthread_cond_destroy(&h.cv);
	pthread_mutex_destroy(&h.mu);
}

/* Threads switching among jobs while the jobs are forgotten and re-created
 * under them: no call fails, and each thread's last enter is where it ends
 * up (a placement cached before a forget must not be trusted after it). */
typedef struct churn {
	oss_blkio *b;
	pthread_barrier_t *bar;
	int errors, wrong;
	unsigned seed;
	int idx; /* which of churn_jobs to end in */
} churn;

static const char *const churn_jobs[] = { "A", "B", "C", NULL };

static void *churn_main(void *arg)
{
	churn *c = arg;
	char where[PATH_MAX], want[PATH_MAX], orig[PATH_MAX];
	const char *last = NULL;

	blkio_path_of(0, orig, sizeof(orig));
	pthread_barrier_wait(c->bar);
	for (int i = 0; i < 2000; i++) {
		last = churn_jobs[rand_r(&c->seed) % 4];
		c->errors += oss_blkio_enter(c->b, last) != 0;
	}
	/* Each thread ends on its own job: thread 2 in C, which is forgotten
	 * and re-created next; thread 1 in B, which has no limits yet. */
	last = churn_jobs[c->idx];
	c->errors += oss_blkio_enter(c->b, last) != 0;
	pthread_barrier_wait(c->bar); /* the main thread stops churning */
	pthread_barrier_wait(c->bar); /* and has re-created every job */
	c->errors += oss_blkio_enter(c->b, last) != 0;
	blkio_path_of(0, where, sizeof(where));
	if (last) {
		char name[OSS_BLKIO_NAME_MAX];

		oss_blkio_job_name(last, name);
		snprintf(want, sizeof(want), "%s/%s", strrchr(oss_blkio_root(c->b), '/'), name);
	} else {
		snprintf(want, sizeof(want), "%s", orig);
	}
	c->wrong += strcmp(where, want) != 0;
	/* Leave the job before close so the next test starts at home. */
	c->errors += oss_blkio_enter(c->b, NULL) != 0;
	return NULL;
}

static void test_blkio_threads(void **state)
{
	enum { NTH = 4 };
	kfix *k = need_kernel(state);
	oss_blkio *b = open_both(k);
	pthread_barrier_t bar;
	pthread_t th[NTH];
	churn c[NTH];
	int rounds = 0;

	for (int i = 0; i < 3; i++)
		assert_int_equal(oss_blkio_set(b, churn_jobs[i], 0, RATE, RATE), 0);
	pthread_barrier_init(&bar, NULL, NTH + 1);
	for (int i = 0; i < NTH; i++) {
		c[i] = (churn){ b, &bar, 0, 0, (unsigned)i + 1, i };
		assert_int_equal(pthread_create(&th[i], NULL, churn_main, &c[i]), 0);
	}
	pthread_barrier_wait(&bar);
	/* Forget and re-create C (and drop B's limits) while they switch. */
	for (; rounds < 50; rounds++) {
		assert_int_equal(oss_blkio_forget(b, "C"), 0);
		assert_int_equal(oss_blkio_set(b, "C", 1, 0, RATE), 0);
		assert_int_equal(oss_blkio_set(b, "B", 0, 0, rounds % 2 ? RATE : 0), 0);
	}
	assert_int_equal(oss_blkio_set(b, "B", 0, 0, 0), 0);
	pthread_barrier_wait(&bar);
	assert_int_equal(oss_blkio_forget(b, "C"), 0);
	assert_int_equal(oss_blkio_set(b, "C", 1, 0, RATE), 0);
	assert_int_equal(oss_blkio_set(b, "B", 0, 0, RATE), 0);
	pthread_barrier_wait(&bar);
	for (int i = 0; i < NTH; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&bar);
	for (int i = 0; i < NTH; i++) {
		assert_int_equal(c[i].errors, 0);
		assert_int_equal(c[i].wrong, 0);
	}
}

static void test_blkio_junk_jobs(void **state)
{
	static const char *const jobs[] = {
		"../../../etc", "a/b", "/", "..", ".", "tasks", "cgroup.procs",
		"notify_on_release", "\x01\x7f\xff", "sp ace", "0123456789abcdef0123456789abcdef",
	};
	enum { NJOB = sizeof(jobs) / sizeof(jobs[0]) };
	kfix *k = need_kernel(state);
	oss_blkio *b = open_both(k);
	char root[PATH_MAX], name[OSS_BLKIO_NAME_MAX], where[PATH_MAX], want[PATH_MAX];
	int seen[NJOB] = { 0 }, ndirs = 0;
	struct dirent *e;
	DIR *d;

	snprintf(root, sizeof(root), "%s", oss_blkio_root(b));
	for (int i = 0; i < NJOB; i++)
		assert_int_equal(oss_blkio_set(b, jobs[i], 0, 0, RATE + (uint64_t)i), 0);
	/* Exactly one directory per job, right under the root. */
	d = opendir(root);
	assert_non_null(d);
	while ((e = readdir(d))) {
		struct stat st;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
		    fstatat(dirfd(d), e->d_name, &st, 0) || !S_ISDIR(st.st_mode))
			continue;
		ndirs++;
		for (int i = 0; i < NJOB; i++) {
			assert_int_equal(oss_blkio_job_name(jobs[i], name), 0);
			if (!strcmp(name, e->d_name))
				seen[i]++;
		}
	}
	closedir(d);
	assert_int_equal(ndirs, NJOB);
	for (int i = 0; i < NJOB; i++)
		assert_int_equal(seen[i], 1);
	/* Each carries its own limit. */
	for (int i = 0; i < NJOB; i++) {
		char path[PATH_MAX], text[128], w[64];

		job_file(b, jobs[i], "blkio.throttle.write_bps_device", path, sizeof(path));
		read_text(path, text, sizeof(text));
		snprintf(w, sizeof(w), "%u:%u %llu\n", k->maj, k->min, RATE + (unsigned)i);
		assert_string_equal(text, w);
	}
	assert_int_equal(oss_blkio_enter(b, "../../../etc"), 0);
	blkio_path_of(0, where, sizeof(where));
	job_rel(b, "../../../etc", want, sizeof(want));
	assert_string_equal(where, want);
	close_b(state);
	assert_false(exists(root));
}

static int stale_seen;
static void stale_sink(int level, const char *msg, void *arg)
{
	(void)level;
	if (strstr(msg, "removed stale") && strstr(msg, (const char *)arg))
		stale_seen = 1;
}

/* Undo what test_blkio_stale made, whatever it got to. */
static int stale_teardown(void **state)
{
	kfix *k = *state;

	pfs_log_set_sink(NULL, NULL);
	close_b(state);
	if (k->sleeper > 0) {
		kill(k->sleeper, SIGKILL);
		waitpid(k->sleeper, NULL, 0);
		k->sleeper = 0;
	}
	for (int i = 0; i < 3; i++) {
		if (k->made[i][0] && rmdir(k->made[i]) && errno != ENOENT)
			fprintf(stderr, "rmdir %s: %s\n", k->made[i], strerror(errno));
		k->made[i][0] = '\0';
	}
	return 0;
}

static void test_blkio_stale(void **state)
{
	kfix *k = need_kernel(state);
	char *dead = k->made[1], *deadjob = k->made[0], *live = k->made[2];
	char path[PATH_MAX], buf[32], where[PATH_MAX], orig[PATH_MAX];
	pid_t gone;

	/* A pid that existed and is gone. */
	gone = fork();
	assert_true(gone >= 0);
	if (gone == 0)
		_exit(0);
	assert_int_equal(waitpid(gone, NULL, 0), gone);
	snprintf(dead, sizeof(k->made[1]), "%s/pfs-oss.%d", k->cgmnt, (int)gone);
	assert_int_equal(mkdir(dead, 0755), 0);
	assert_true(snprintf(deadjob, sizeof(k->made[0]), "%s/j.old", dead) <
		    (int)sizeof(k->made[0]));
	assert_int_equal(mkdir(deadjob, 0755), 0);
	/* A process still inside the dead OSS's job cgroup is moved out. */
	k->sleeper = fork();
	assert_true(k->sleeper >= 0);
	if (k->sleeper == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		alarm(60);
		pause();
		_exit(0);
	}
	snprintf(path, sizeof(path), "%s/tasks", deadjob);
	snprintf(buf, sizeof(buf), "%d", (int)k->sleeper);
	write_file(path, buf);
	blkio_path_of(k->sleeper, where, sizeof(where));
	assert_non_null(strstr(where, "/j.old"));
	/* pid 1 is alive: its directory is not stale. */
	snprintf(live, sizeof(k->made[2]), "%s/pfs-oss.1", k->cgmnt);
	if (mkdir(live, 0755))
		live[0] = '\0'; /* exists already (or cannot be made): not ours */

	stale_seen = 0;
	pfs_log_set_sink(stale_sink, dead);
	open_both(k);
	pfs_log_set_sink(NULL, NULL);
	assert_true(stale_seen);
	assert_false(exists(deadjob));
	assert_false(exists(dead));
	if (live[0])
		assert_true(exists(live));
	blkio_path_of(0, orig, sizeof(orig));
	blkio_path_of(k->sleeper, where, sizeof(where));
	assert_string_equal(where, orig);
}

static void test_blkio_enter_cost(void **state)
{
	enum { SWITCHES = 4000, SAME = 1000000 };
	kfix *k = need_kernel(state);
	oss_blkio *b = open_both(k);
	char where[PATH_MAX], want[PATH_MAX];
	double t;

	assert_int_equal(oss_blkio_set(b, "A", 0, RATE, RATE), 0);
	assert_int_equal(oss_blkio_set(b, "B", 0, RATE, RATE), 0);
	t = now_s();
	for (int i = 0; i < SWITCHES / 2; i++) {
		assert_int_equal(oss_blkio_enter(b, "A"), 0);
		assert_int_equal(oss_blkio_enter(b, "B"), 0);
	}
	t = now_s() - t;
	blkio_path_of(0, where, sizeof(where));
	job_rel(b, "B", want, sizeof(want));
	assert_string_equal(where, want);
	print_message("oss_blkio_enter: %.1f us per switch between two jobs\n",
		      t / SWITCHES * 1e6);

	t = now_s();
	for (int i = 0; i < SAME; i++)
		assert_int_equal(oss_blkio_enter(b, "B"), 0);
	t = now_s() - t;
	print_message("oss_blkio_enter: %.1f ns when already in the job\n", t / SAME * 1e9);

	t = now_s();
	for (int i = 0; i < SWITCHES / 2; i++) {
		assert_int_equal(oss_blkio_enter(b, "A"), 0);
		assert_int_equal(oss_blkio_enter(b, NULL), 0);
	}
	t = now_s() - t;
	print_message("oss_blkio_enter: %.1f us per switch between a job and the OSS cgroup\n",
		      t / SWITCHES * 1e6);
	close_b(state);
}

int main(void)
{
	const struct CMUnitTest pure[] = {
		cmocka_unit_test(test_blkio_job_name),
		cmocka_unit_test(test_blkio_v2_refused),
	};
	const struct CMUnitTest kernel[] = {
		cmocka_unit_test_teardown(test_blkio_open_close, close_b),
		cmocka_unit_test_teardown(test_blkio_tmpfs_enodev, close_b),
		cmocka_unit_test_teardown(test_blkio_rules, close_b),
		cmocka_unit_test_teardown(test_blkio_throttle, close_b),
		cmocka_unit_test_teardown(test_blkio_forget_moves_out, close_b),
		cmocka_unit_test_teardown(test_blkio_threads, close_b),
		cmocka_unit_test_teardown(test_blkio_junk_jobs, close_b),
		cmocka_unit_test_teardown(test_blkio_stale, stale_teardown),
		cmocka_unit_test_teardown(test_blkio_enter_cost, close_b),
	};
	int rc = cmocka_run_group_tests_name("blkio_pure", pure, NULL, NULL);

	return rc + cmocka_run_group_tests_name("blkio_kernel", kernel, kernel_setup,
						kernel_teardown);
}
