/* cgfs.c — cgroup and sysfs file access for oss/blkio (see cgfs.h). */
#include "oss/cgfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RMDIR_TRIES 200 /* x 1 ms: how long an exiting task may pin a cgroup */

int oss_cgfs_read(const char *path, char *buf, size_t len)
{
	size_t got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	while (got < len - 1) {
		ssize_t n = read(fd, buf + got, len - 1 - got);

		if (n < 0) {
			int rc = -errno;

			close(fd);
			return rc;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	buf[got] = '\0';
	if (got > 0 && buf[got - 1] == '\n')
		buf[got - 1] = '\0';
	return 0;
}

int oss_cgfs_write(const char *dir, const char *file, const char *text)
{
	char path[PATH_MAX];
	size_t n = strlen(text);
	ssize_t w;
	int fd, rc = 0;

	if (snprintf(path, sizeof(path), "%s/%s", dir, file) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	w = write(fd, text, n);
	if (w < 0)
		rc = -errno;
	else if ((size_t)w != n)
		rc = -EIO;
	close(fd);
	return rc;
}

int oss_cgfs_put_tid(int tasks_fd, pid_t tid)
{
	char buf[16];
	int n = snprintf(buf, sizeof(buf), "%d", (int)tid);
	ssize_t w = write(tasks_fd, buf, (size_t)n);

	if (w < 0)
		return -errno;
	return w == n ? 0 : -EIO;
}

/* Move every task listed in dir/tasks to the cgroup of to_fd.  Tasks that
 * exit meanwhile are skipped. */
static int move_tasks(const char *dir, int to_fd)
{
	char path[PATH_MAX];
	char *buf = NULL, *p, *end;
	size_t len = 0, cap = 0;
	ssize_t n;
	int fd, rc = 0;

	if (snprintf(path, sizeof(path), "%s/tasks", dir) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	for (;;) {
		if (cap - len < 4096) {
			char *nb = realloc(buf, cap + 65536);

			if (!nb) {
				rc = -ENOMEM;
				goto out;
			}
			buf = nb;
			cap += 65536;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0) {
			rc = -errno;
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (!buf)
		goto out;
	buf[len] = '\0';
	for (p = buf; *p; p = end) {
		long tid = strtol(p, &end, 10);
		int r;

		if (end == p)
			break;
		while (*end == '\n')
			end++;
		r = oss_cgfs_put_tid(to_fd, (pid_t)tid);
		if (r && r != -ESRCH && !rc)
			rc = r;
	}
out:
	free(buf);
	close(fd);
	return rc;
}

int oss_cgfs_remove(const char *dir, int to_fd)
{
	struct timespec ms = { 0, 1000000 };

	for (int tries = 0;; tries++) {
		int rc = move_tasks(dir, to_fd);

		if (rmdir(dir) == 0 || errno == ENOENT)
			return 0;
		if (errno != EBUSY || tries == RMDIR_TRIES)
			return rc ? rc : -errno;
		nanosleep(&ms, NULL);
	}
}

/* ---- mountinfo, /proc/.../cgroup, sysfs ---- */

/* Undo mountinfo's octal escapes (\040 for a space, ...) in place. */
static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

/* Is word one of the comma-separated items of list? */
static int has_item(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (!strncmp(p, word, n) && (p[n] == ',' || p[n] == '\0'))
			return 1;
	return 0;
}

static void set_mount(oss_cgfs_mount *m, const char *root, const char *point)
{
	if (m->found || strlen(root) >= sizeof(m->root) || strlen(point) >= sizeof(m->point))
		return;
	strcpy(m->root, root);
	strcpy(m->point, point);
	unescape(m->root);
	unescape(m->point);
	m->found = 1;
}

int oss_cgfs_find_mounts(const char *mountinfo, const char *v1_ctl, oss_cgfs_mount *v1,
			 oss_cgfs_mount *v2)
{
	FILE *f = fopen(mountinfo, "re");
	char *line = NULL;
	size_t cap = 0;

	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		char *save, *tok, *field[5] = { 0 }, *type = NULL, *opts = NULL;
		int i = 0, dash = 0;

		for (tok = strtok_r(line, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save)) {
			if (!dash && !strcmp(tok, "-"))
				dash = 1;
			else if (!dash && i < 5)
				field[i++] = tok;
			else if (dash == 1)
				type = tok, dash = 2;
			else if (dash == 2)
				dash = 3; /* source */
			else if (dash == 3)
				opts = tok, dash = 4;
		}
		if (i < 5 || !type || !opts)
			continue;
		if (!strcmp(type, "cgroup") && has_item(opts, v1_ctl))
			set_mount(v1, field[3], field[4]);
		else if (!strcmp(type, "cgroup2"))
			set_mount(v2, field[3], field[4]);
	}
	free(line);
	fclose(f);
	return 0;
}

int oss_cgfs_own(const char *cgfile, const char *ctl, const oss_cgfs_mount *m, char *out,
		 size_t outlen)
{
	FILE *f = fopen(cgfile, "re");
	char *line = NULL, *path = NULL;
	size_t cap = 0, rl = strlen(m->root);
	int rc;

	if (!f)
		return -errno;
	while (!path && getline(&line, &cap, f) > 0) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;

		if (!c2)
			continue;
		*c2 = '\0';
		if (*ctl ? has_item(c1 + 1, ctl) : (c1 - line == 1 && line[0] == '0' && !c1[1]))
			path = c2 + 1;
	}
	rc = -ENOENT;
	if (!path)
		goto out;
	path[strcspn(path, "\n")] = '\0';
	/* The path is relative to the hierarchy root; the mount shows m->root
	 * (a container sees its own cgroup as the root of the mount). */
	if (!strcmp(m->root, "/"))
		rl = 0;
	rc = -EXDEV;
	if (rl && (strncmp(path, m->root, rl) || (path[rl] && path[rl] != '/')))
		goto out;
	rc = -ENAMETOOLONG;
	if (snprintf(out, outlen, "%s%s", m->point, path + rl) >= (int)outlen)
		goto out;
	rc = 0;
out:
	free(line);
	fclose(f);
	return rc;
}

int oss_cgfs_whole_disk(const char *sysfs, unsigned maj, unsigned min, unsigned *disk_maj,
			unsigned *disk_min)
{
	char p[PATH_MAX], real[PATH_MAX], q[PATH_MAX + 16], text[32];
	char *slash;
	int rc;

	snprintf(p, sizeof(p), "%s/dev/block/%u:%u", sysfs, maj, min);
	if (!realpath(p, real))
		return errno == ENOENT ? -ENODEV : -errno;
	snprintf(q, sizeof(q), "%s/partition", real);
	if (access(q, F_OK) != 0) {
		if (errno != ENOENT)
			return -errno;
		*disk_maj = maj;
		*disk_min = min;
		return 0;
	}
	/* A partition's sysfs directory sits inside its disk's. */
	slash = strrchr(real, '/');
	if (!slash || slash == real)
		return -ENODEV;
	*slash = '\0';
	snprintf(q, sizeof(q), "%s/dev", real);
	rc = oss_cgfs_read(q, text, sizeof(text));
	if (rc)
		return rc;
	if (sscanf(text, "%u:%u", disk_maj, disk_min) != 2)
		return -EIO;
	return 0;
}
