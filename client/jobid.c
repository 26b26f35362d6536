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

/* Read up to max bytes of PROC/pid/name into a malloc'd buffer (NUL added
 * after the data).  Returns the length or a negative errno. */
static ssize_t read_proc(const cli_jobid *j, pid_t pid, const char *name, size_t max,
			 char **out)
{
	char path[4096];
	char *buf = NULL;
	size_t len = 0;
	ssize_t rc;
	int fd;

	snprintf(path, sizeof(path), "%s/%d/%s", j->proc_root, (int)pid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
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
	*out = buf;
	buf = NULL;
	rc = (ssize_t)len;
out:
	free(buf);
	close(fd);
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

/* The uncached lookup: the first configured variable with a non-empty value,
 * else comm.uid. */
static void resolve(const cli_jobid *j, pid_t pid, uid_t uid, char out[PFS_JOBID_MAX + 1])
{
	char *env = NULL, *comm = NULL, tmp[PFS_JOBID_MAX + 64];
	ssize_t n;

	if (pid <= 0) {
		snprintf(tmp, sizeof(tmp), "kernel.%u", (unsigned)uid);
		set_job(out, tmp, strlen(tmp));
		return;
	}
	n = read_proc(j, pid, "environ", ENVIRON_MAX, &env);
	if (n > 0) {
		/* Variable order wins over environ order: the list says which
		 * variable is preferred when several are set. */
		for (unsigned v = 0; v < j->nvars; v++) {
			size_t vl = strlen(j->vars[v]);

			for (char *p = env; p < env + n; p += strlen(p) + 1) {
				if (!strncmp(p, j->vars[v], vl) && p[vl] == '=' && p[vl + 1]) {
					set_job(out, p + vl + 1, strlen(p + vl + 1));
					free(env);
					return;
				}
			}
		}
	}
	free(env);
	n = read_proc(j, pid, "comm", 64, &comm);
	if (n > 0) {
		if (comm[n - 1] == '\n')
			comm[--n] = '\0';
		snprintf(tmp, sizeof(tmp), "%.*s.%u", (int)(n > 32 ? 32 : n), comm, (unsigned)uid);
	} else {
		snprintf(tmp, sizeof(tmp), "unknown.%u", (unsigned)uid);
	}
	free(comm);
	set_job(out, tmp, strlen(tmp));
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

	if (pid <= 0 || read_proc(j, pid, "status", 16384, &st) <= 0)
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
