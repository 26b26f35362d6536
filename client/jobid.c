/* jobid.c — job id of a calling process from /proc, with a per-pid TTL cache
 * (see jobid.h). */
#include "client/jobid.h"

#include <ctype.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* environ of a batch job can be large; the variables we want are usually set
 * early, and a bounded read keeps one request from costing megabytes. */
#define ENVIRON_MAX (256u << 10)
/* /proc/PID/cgroup: a line per v1 hierarchy plus the v2 one; paths are at
 * most PATH_MAX each in practice.  A longer file is cut at its last whole
 * line. */
#define CGROUP_MAX (64u << 10)

typedef struct slot {
	pid_t pid;        /* 0 = empty */
	uid_t uid;
	uint64_t stamp_ms;
	char job[PFS_JOBID_MAX + 1];
	/* supplementary groups, cached separately (gstamp_ms, 0 = none yet) */
	gid_t gid;
	uint64_t gstamp_ms;
	unsigned ngroups;
	uint32_t groups[PFS_MAX_GROUPS];
} slot;

struct cli_jobid {
	char *proc_root;
	char *vars[CLI_JOBID_MAX_VARS];
	unsigned nvars;
	unsigned ttl_ms;
	enum cli_jobid_source source;
	size_t nslots;
	pthread_mutex_t lock;
	slot *slots;      /* guarded by lock */
	uint64_t hits, misses; /* guarded by lock */
};

int cli_jobid_create(const char *proc_root, const char *vars, unsigned ttl_ms, size_t slots,
		     cli_jobid **out)
{
	cli_jobid *j;
	char *dup = NULL, *save = NULL, *tok;
	int rc = -ENOMEM;

	if (!vars || !*vars)
		vars = CLI_JOBID_DEFAULT_VARS;
	j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	j->ttl_ms = ttl_ms;
	j->nslots = slots ? slots : 1024;
	j->proc_root = strdup(proc_root ? proc_root : "/proc");
	j->slots = calloc(j->nslots, sizeof(*j->slots));
	dup = strdup(vars);
	if (!j->proc_root || !j->slots || !dup)
		goto out;
	/* strtok_r would silently skip an empty name ("A,,B"); reject it
	 * instead, since it is almost certainly a typo in a mount option. */
	for (char *p = dup;; p = NULL) {
		tok = strtok_r(p, ",:", &save);
		if (!tok)
			break;
		if (j->nvars >= CLI_JOBID_MAX_VARS) {
			rc = -EINVAL;
			goto out;
		}
		j->vars[j->nvars] = strdup(tok);
		if (!j->vars[j->nvars])
			goto out;
		j->nvars++;
	}
	if (j->nvars == 0 || strstr(vars, ",,") || strstr(vars, "::") || vars[0] == ',' ||
	    vars[0] == ':') {
		rc = -EINVAL;
		goto out;
	}
	pthread_mutex_init(&j->lock, NULL);
	*out = j;
	j = NULL;
	rc = 0;
out:
	free(dup);
	if (j) {
		for (unsigned i = 0; i < j->nvars; i++)
			free(j->vars[i]);
		free(j->slots);
		free(j->proc_root);
		free(j);
	}
	return rc;
}

void cli_jobid_destroy(cli_jobid *j)
{
	if (!j)
		return;
	for (unsigned i = 0; i < j->nvars; i++)
		free(j->vars[i]);
	pthread_mutex_destroy(&j->lock);
	free(j->slots);
	free(j->proc_root);
	free(j);
}

int cli_jobid_source_parse(const char *s, enum cli_jobid_source *out)
{
	static const char *const names[] = { "auto", "cgroup", "env", "both" };

	for (unsigned i = 0; s && i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcmp(s, names[i])) {
			*out = (enum cli_jobid_source)i;
			return 0;
		}
	}
	return -EINVAL;
}

void cli_jobid_set_source(cli_jobid *j, enum cli_jobid_source src)
{
	j->source = src;
}

/* Open PROC/pid as a directory: every file of one lookup is read relative to
 * it, so they all describe the same process (see jobid.h).  fd or -errno. */
static int open_pid(const cli_jobid *j, pid_t pid)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/%d", j->proc_root, (int)pid);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* Read up to max bytes of DIRFD/name into a malloc'd buffer (NUL added after
 * the data).  *full is set when max bytes were read (the file may go on).
 * Returns the length or a negative errno. */
static ssize_t read_at(int dirfd, const char *name, size_t max, char **out, int *full)
{
	char *buf = NULL;
	size_t len = 0;
	ssize_t rc;
	int fd;

	if (dirfd < 0)
		return dirfd;
	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	buf = malloc(max + 1);
	if (!buf) {
		rc = -ENOMEM;
		goto out;
	}
	while (len < max) {
		rc = read(fd, buf + len, max - len);
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc < 0) {
			rc = -errno;
			goto out;
		}
		if (rc == 0)
			break;
		len += (size_t)rc;
	}
	buf[len] = '\0';
	if (full)
		*full = len == max;
	*out = buf;
	buf = NULL;
	rc = (ssize_t)len;
out:
	free(buf);
	close(fd);
	return rc;
}

/* Does component c[0..n) start with prefix and, if digits, continue with
 * 1..PFS_JOBID_MAX digits only? */
static int comp_is(const char *c, size_t n, const char *prefix, int digits)
{
	size_t pl = strlen(prefix);

	if (n < pl || memcmp(c, prefix, pl))
		return 0;
	if (!digits)
		return 1;
	if (n == pl || n - pl > PFS_JOBID_MAX)
		return 0;
	for (size_t i = pl; i < n; i++)
		if (c[i] < '0' || c[i] > '9')
			return 0;
	return 1;
}

/* "slurm" or "slurm_NODE" (multiple-slurmd) */
static int comp_slurm(const char *c, size_t n)
{
	return (n == 5 && !memcmp(c, "slurm", 5)) || (n > 6 && !memcmp(c, "slurm_", 6));
}

/* "slurmstepd.scope" or "NODE_slurmstepd.scope" */
static int comp_stepd(const char *c, size_t n)
{
	static const char s[] = "slurmstepd.scope";
	size_t sl = sizeof(s) - 1;

	return (n == sl && !memcmp(c, s, sl)) ||
	       (n > sl + 1 && c[n - sl - 1] == '_' && !memcmp(c + n - sl, s, sl));
}

/* The Slurm job in one cgroup path p[0..n): a "job_ID" component right after
 * "slurm[_NODE]/uid_U" or "[NODE_]slurmstepd.scope".  1 (id in out) or 0. */
static int path_job(const char *p, size_t n, char out[PFS_JOBID_MAX + 1])
{
	const char *c[3] = { NULL, NULL, NULL }; /* the two components before, this one */
	size_t cl[3] = { 0, 0, 0 };
	size_t i = 0;

	while (i < n) {
		size_t s, e;

		while (i < n && p[i] == '/')
			i++;
		s = i;
		while (i < n && p[i] != '/')
			i++;
		e = i;
		if (e == s)
			break;
		c[0] = c[1];
		cl[0] = cl[1];
		c[1] = c[2];
		cl[1] = cl[2];
		c[2] = p + s;
		cl[2] = e - s;
		if (!comp_is(c[2], cl[2], "job_", 1) || !c[1])
			continue;
		if (comp_stepd(c[1], cl[1]) ||
		    (c[0] && comp_is(c[1], cl[1], "uid_", 1) && comp_slurm(c[0], cl[0]))) {
			memcpy(out, c[2] + 4, cl[2] - 4);
			out[cl[2] - 4] = '\0';
			return 1;
		}
	}
	return 0;
}

int cli_jobid_parse_cgroup(const char *buf, size_t len, char out[PFS_JOBID_MAX + 1])
{
	char job[PFS_JOBID_MAX + 1];
	const char *p = buf, *end = buf + len;
	int found = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		const char *c1, *c2;

		/* "ID:CONTROLLERS:PATH"; the path may itself hold ':' */
		c1 = memchr(p, ':', (size_t)(le - p));
		c2 = c1 ? memchr(c1 + 1, ':', (size_t)(le - c1 - 1)) : NULL;
		if (c2 && path_job(c2 + 1, (size_t)(le - c2 - 1), job)) {
			if (found && strcmp(job, out))
				return -EBADMSG;
			memcpy(out, job, sizeof(job));
			found = 1;
		}
		p = le + 1;
	}
	return found;
}

/* The Slurm job of the process behind dirfd from its cgroup file: as
 * cli_jobid_parse_cgroup, or a negative errno when it cannot be read. */
static int cgroup_job(int dirfd, char out[PFS_JOBID_MAX + 1])
{
	char *buf = NULL;
	int full = 0, rc;
	ssize_t n = read_at(dirfd, "cgroup", CGROUP_MAX, &buf, &full);

	if (n < 0)
		return (int)n;
	if (full) {
		/* cut at the last whole line; a single giant line is dropped */
		char *nl = memrchr(buf, '\n', (size_t)n);
		n = nl ? nl - buf : 0;
	}
	rc = cli_jobid_parse_cgroup(buf, (size_t)n, out);
	free(buf);
	return rc;
}

/* Copy at most PFS_JOBID_MAX bytes of s[0..n) into out, NUL-terminated. */
static void set_job(char out[PFS_JOBID_MAX + 1], const char *s, size_t n)
{
	if (n > PFS_JOBID_MAX)
		n = PFS_JOBID_MAX;
	memcpy(out, s, n);
	out[n] = '\0';
}

/* The first configured variable with a non-empty value: 1 (in out) or 0. */
static int env_job(const cli_jobid *j, int dirfd, char out[PFS_JOBID_MAX + 1])
{
	char *env = NULL;
	ssize_t n = read_at(dirfd, "environ", ENVIRON_MAX, &env, NULL);

	if (n > 0) {
		/* Variable order wins over environ order: the list says which
		 * variable is preferred when several are set. */
		for (unsigned v = 0; v < j->nvars; v++) {
			size_t vl = strlen(j->vars[v]);

			for (char *p = env; p < env + n; p += strlen(p) + 1) {
				if (!strncmp(p, j->vars[v], vl) && p[vl] == '=' && p[vl + 1]) {
					set_job(out, p + vl + 1, strlen(p + vl + 1));
					free(env);
					return 1;
				}
			}
		}
	}
	free(env);
	return 0;
}

/* The uncached lookup, by the source (see jobid.h), else comm.uid. */
static void resolve(const cli_jobid *j, pid_t pid, uid_t uid, char out[PFS_JOBID_MAX + 1])
{
	char *comm = NULL, tmp[PFS_JOBID_MAX + 64];
	int dirfd, cg = 0;
	ssize_t n;

	if (pid <= 0) {
		snprintf(tmp, sizeof(tmp), "kernel.%u", (unsigned)uid);
		set_job(out, tmp, strlen(tmp));
		return;
	}
	dirfd = open_pid(j, pid);
	if (j->source != CLI_JOBID_ENV)
		cg = cgroup_job(dirfd, out);
	switch (j->source) {
	case CLI_JOBID_AUTO:
		/* an ambiguous cgroup (-EBADMSG) does not let the environment
		 * decide: the default job */
		if (cg == 1 || (cg != -EBADMSG && env_job(j, dirfd, out)))
			goto done;
		break;
	case CLI_JOBID_CGROUP:
		if (cg == 1)
			goto done;
		break;
	case CLI_JOBID_ENV:
		if (env_job(j, dirfd, out))
			goto done;
		break;
	case CLI_JOBID_BOTH:
		if (env_job(j, dirfd, out) || cg == 1)
			goto done;
		break;
	}
	n = read_at(dirfd, "comm", 64, &comm, NULL);
	if (n > 0) {
		if (comm[n - 1] == '\n')
			comm[--n] = '\0';
		snprintf(tmp, sizeof(tmp), "%.*s.%u", (int)(n > 32 ? 32 : n), comm, (unsigned)uid);
	} else {
		snprintf(tmp, sizeof(tmp), "unknown.%u", (unsigned)uid);
	}
	free(comm);
	set_job(out, tmp, strlen(tmp));
done:
	if (dirfd >= 0)
		close(dirfd);
}

void cli_jobid_get(cli_jobid *j, pid_t pid, uid_t uid, uint64_t now_ms,
		   char out[PFS_JOBID_MAX + 1])
{
	size_t i = ((uint64_t)(uint32_t)pid * 2654435761u) % j->nslots;
	slot *s;

	pthread_mutex_lock(&j->lock);
	s = &j->slots[i];
	if (j->ttl_ms && pid > 0 && s->pid == pid && s->uid == uid && s->job[0] &&
	    now_ms >= s->stamp_ms && now_ms - s->stamp_ms < j->ttl_ms) {
		memcpy(out, s->job, PFS_JOBID_MAX + 1);
		j->hits++;
		pthread_mutex_unlock(&j->lock);
		return;
	}
	j->misses++;
	pthread_mutex_unlock(&j->lock);

	resolve(j, pid, uid, out);

	if (!j->ttl_ms || pid <= 0)
		return;
	pthread_mutex_lock(&j->lock);
	s = &j->slots[i];
	if (s->pid != pid || s->uid != uid)
		s->gstamp_ms = 0; /* another process's groups */
	s->pid = pid;
	s->uid = uid;
	s->stamp_ms = now_ms;
	memcpy(s->job, out, PFS_JOBID_MAX + 1);
	pthread_mutex_unlock(&j->lock);
}

void cli_jobid_counters(cli_jobid *j, uint64_t *hits, uint64_t *misses)
{
	pthread_mutex_lock(&j->lock);
	*hits = j->hits;
	*misses = j->misses;
	pthread_mutex_unlock(&j->lock);
}

/* The uncached groups lookup: the "Groups:" line of PROC/pid/status. */
static unsigned resolve_groups(const cli_jobid *j, pid_t pid, uint32_t *groups, unsigned max)
{
	char *st = NULL, *line, *end;
	unsigned n = 0;
	int dirfd = pid > 0 ? open_pid(j, pid) : -ESRCH;
	ssize_t len = read_at(dirfd, "status", 16384, &st, NULL);

	if (dirfd >= 0)
		close(dirfd);
	if (len <= 0)
		goto out;
	line = strstr(st, "\nGroups:");
	if (!line)
		goto out;
	line += 8;
	while (n < max) {
		unsigned long g;
		while (*line == ' ' || *line == '\t')
			line++;
		if (!isdigit((unsigned char)*line))
			break;
		g = strtoul(line, &end, 10);
		groups[n++] = (uint32_t)g;
		line = end;
	}
out:
	free(st);
	return n;
}

unsigned cli_jobid_groups(cli_jobid *j, pid_t pid, uid_t uid, gid_t gid, uint64_t now_ms,
			  uint32_t *groups, unsigned max)
{
	size_t i = ((uint64_t)(uint32_t)pid * 2654435761u) % j->nslots;
	slot *s;
	unsigned n;

	if (max > PFS_MAX_GROUPS)
		max = PFS_MAX_GROUPS;
	pthread_mutex_lock(&j->lock);
	s = &j->slots[i];
	if (j->ttl_ms && pid > 0 && s->pid == pid && s->uid == uid && s->gid == gid &&
	    s->gstamp_ms && now_ms >= s->gstamp_ms && now_ms - s->gstamp_ms < j->ttl_ms) {
		n = s->ngroups < max ? s->ngroups : max;
		memcpy(groups, s->groups, n * sizeof(*groups));
		j->hits++;
		pthread_mutex_unlock(&j->lock);
		return n;
	}
	j->misses++;
	pthread_mutex_unlock(&j->lock);
	n = resolve_groups(j, pid, groups, max);
	if (!j->ttl_ms || pid <= 0)
		return n;
	pthread_mutex_lock(&j->lock);
	s = &j->slots[i];
	if (s->pid != pid || s->uid != uid) {
		/* The slot belongs to another process: take it over, its job
		 * id is not known yet. */
		s->pid = pid;
		s->uid = uid;
		s->stamp_ms = 0;
		s->job[0] = '\0';
	}
	s->gid = gid;
	s->gstamp_ms = now_ms ? now_ms : 1;
	s->ngroups = n;
	memcpy(s->groups, groups, n * sizeof(*groups));
	pthread_mutex_unlock(&j->lock);
	return n;
}
