/* test_oss_cgfs.c — the cgroup/sysfs helpers of oss/blkio against fake
 * trees: mountinfo parsing (escapes, optional fields, co-mounted
 * controllers), the calling thread's cgroup directory (including a mount
 * whose root is not the hierarchy root, as in a container), and the
 * partition-to-disk mapping (this machine's kernel has no partition table
 * support, so a fake /sys is the only place a partition can be tested). */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "oss/cgfs.h"

typedef struct fixture {
	char dir[64];
} fixture;

static int setup(void **state)
{
	fixture *f = calloc(1, sizeof(*f));

	snprintf(f->dir, sizeof(f->dir), "/tmp/pfs-test-cgfs-XXXXXX");
	if (!f || !mkdtemp(f->dir)) {
		free(f);
		return -1;
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd) != 0)
		fprintf(stderr, "%s failed\n", cmd);
	free(f);
	return 0;
}

static void put(const fixture *f, const char *name, const char *text)
{
	char path[PATH_MAX];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", f->dir, name);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(text, fp);
	assert_int_equal(fclose(fp), 0);
}

static void test_cgfs_find_mounts(void **state)
{
	fixture *f = *state;
	char mi[PATH_MAX];
	oss_cgfs_mount v1, v2;

	snprintf(mi, sizeof(mi), "%s/mountinfo", f->dir);
	put(f, "mountinfo",
	    "22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n"
	    "31 22 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw,mode=755\n"
	    /* "blkio" as a substring of another option must not match */
	    "32 31 0:29 / /sys/fs/cgroup/x rw - cgroup cgroup rw,noblkio\n"
	    "33 31 0:30 /docker/abc /sys/fs/cgroup/cpu\\040and\\040blkio rw master:7 "
	    "- cgroup cgroup rw,cpu,blkio\n"
	    "34 31 0:31 / /sys/fs/cgroup/blkio2 rw - cgroup cgroup rw,blkio\n"
	    "35 31 0:32 / /sys/fs/cgroup/unified rw,nosuid - cgroup2 cgroup2 rw\n");
	memset(&v1, 0x55, sizeof(v1));
	memset(&v2, 0x55, sizeof(v2));
	v1.found = v2.found = 0;
	assert_int_equal(oss_cgfs_find_mounts(mi, "blkio", &v1, &v2), 0);
	assert_true(v1.found);
	assert_string_equal(v1.point, "/sys/fs/cgroup/cpu and blkio"); /* the first one */
	assert_string_equal(v1.root, "/docker/abc");
	assert_true(v2.found);
	assert_string_equal(v2.point, "/sys/fs/cgroup/unified");
	assert_string_equal(v2.root, "/");

	put(f, "mountinfo", "22 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n");
	v1.found = v2.found = 0;
	assert_int_equal(oss_cgfs_find_mounts(mi, "blkio", &v1, &v2), 0);
	assert_false(v1.found);
	assert_false(v2.found);
	snprintf(mi, sizeof(mi), "%s/missing", f->dir);
	assert_int_equal(oss_cgfs_find_mounts(mi, "blkio", &v1, &v2), -ENOENT);
}

static void test_cgfs_own(void **state)
{
	fixture *f = *state;
	char cg[PATH_MAX], out[PATH_MAX];
	oss_cgfs_mount m = { 1, "/sys/fs/cgroup/blkio", "/" };

	snprintf(cg, sizeof(cg), "%s/cgroup", f->dir);
	put(f, "cgroup",
	    "9:name=systemd:/user.slice\n"
	    "7:cpu,blkio:/docker/abc/oss\n"
	    "4:memory:/x\n"
	    "0::/system.slice/pfs-oss.service\n");
	assert_int_equal(oss_cgfs_own(cg, "blkio", &m, out, sizeof(out)), 0);
	assert_string_equal(out, "/sys/fs/cgroup/blkio/docker/abc/oss");
	/* A container's mount shows its own cgroup as the root. */
	snprintf(m.root, sizeof(m.root), "/docker/abc");
	assert_int_equal(oss_cgfs_own(cg, "blkio", &m, out, sizeof(out)), 0);
	assert_string_equal(out, "/sys/fs/cgroup/blkio/oss");
	snprintf(m.root, sizeof(m.root), "/docker/ab"); /* a prefix, not a parent */
	assert_int_equal(oss_cgfs_own(cg, "blkio", &m, out, sizeof(out)), -EXDEV);
	snprintf(m.root, sizeof(m.root), "/");
	snprintf(m.point, sizeof(m.point), "/sys/fs/cgroup/unified");
	assert_int_equal(oss_cgfs_own(cg, "", &m, out, sizeof(out)), 0);
	assert_string_equal(out, "/sys/fs/cgroup/unified/system.slice/pfs-oss.service");
	assert_int_equal(oss_cgfs_own(cg, "io", &m, out, sizeof(out)), -ENOENT);
	assert_int_equal(oss_cgfs_own(cg, "blkio", &m, out, 10), -ENAMETOOLONG);
}

/* A fake /sys: sda (8:0) with partition sda1 (8:1), and loop0 (7:0). */
static void test_cgfs_whole_disk(void **state)
{
	fixture *f = *state;
	char p[PATH_MAX];
	unsigned maj = 0, min = 0;

	snprintf(p, sizeof(p), "mkdir -p %s/dev/block %s/devices/pci0/block/sda/sda1 "
			       "%s/devices/virtual/block/loop0",
		 f->dir, f->dir, f->dir);
	assert_int_equal(system(p), 0);
	put(f, "devices/pci0/block/sda/dev", "8:0\n");
	put(f, "devices/pci0/block/sda/sda1/dev", "8:1\n");
	put(f, "devices/pci0/block/sda/sda1/partition", "1\n");
	put(f, "devices/virtual/block/loop0/dev", "7:0\n");
	snprintf(p, sizeof(p), "%s/dev/block/8:0", f->dir);
	assert_int_equal(symlink("../../devices/pci0/block/sda", p), 0);
	snprintf(p, sizeof(p), "%s/dev/block/8:1", f->dir);
	assert_int_equal(symlink("../../devices/pci0/block/sda/sda1", p), 0);
	snprintf(p, sizeof(p), "%s/dev/block/7:0", f->dir);
	assert_int_equal(symlink("../../devices/virtual/block/loop0", p), 0);

	assert_int_equal(oss_cgfs_whole_disk(f->dir, 8, 1, &maj, &min), 0);
	assert_int_equal(maj, 8);
	assert_int_equal(min, 0);
	assert_int_equal(oss_cgfs_whole_disk(f->dir, 8, 0, &maj, &min), 0);
	assert_int_equal(maj, 8);
	assert_int_equal(min, 0);
	assert_int_equal(oss_cgfs_whole_disk(f->dir, 7, 0, &maj, &min), 0);
	assert_int_equal(maj, 7);
	assert_int_equal(min, 0);
	/* Anonymous devices (tmpfs, overlay) are not under /sys/dev/block. */
	assert_int_equal(oss_cgfs_whole_disk(f->dir, 0, 45, &maj, &min), -ENODEV);
	/* A partition whose disk has a bad or no dev file is an error, not a guess. */
	put(f, "devices/pci0/block/sda/dev", "garbage\n");
	assert_int_equal(oss_cgfs_whole_disk(f->dir, 8, 1, &maj, &min), -EIO);
	snprintf(p, sizeof(p), "%s/devices/pci0/block/sda/dev", f->dir);
	assert_int_equal(unlink(p), 0);
	assert_int_equal(oss_cgfs_whole_disk(f->dir, 8, 1, &maj, &min), -ENOENT);
}

static void test_cgfs_read_write(void **state)
{
	fixture *f = *state;
	char p[PATH_MAX], buf[8];

	put(f, "ctl", "");
	assert_int_equal(oss_cgfs_write(f->dir, "ctl", "7:0 100"), 0);
	snprintf(p, sizeof(p), "%s/ctl", f->dir);
	assert_int_equal(oss_cgfs_read(p, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "7:0 100"); /* truncated to fit, NUL-terminated */
	put(f, "ctl", "1:2\n");
	assert_int_equal(oss_cgfs_read(p, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "1:2");
	assert_int_equal(oss_cgfs_write(f->dir, "nope/ctl", "x"), -ENOENT);
	/* Removing a cgroup that is already gone is success. */
	snprintf(p, sizeof(p), "%s/gone", f->dir);
	assert_int_equal(oss_cgfs_remove(p, -1), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_cgfs_find_mounts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cgfs_own, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cgfs_whole_disk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cgfs_read_write, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
