/* md_load.c — metadata load for the PADLL tests (t_padll.sh): N threads
 * loop create (open O_CREAT|O_EXCL + close), stat, unlink on files of
 * their own in DIR, for S seconds, and print one CSV line per second:
 *     second,ops      (completed create/stat/unlink rounds in that second)
 * The job id is whatever mount.pfs finds for this process (set PFS_JOBID
 * in its environment).  Errors are counted and reported on stderr; the
 * exit status is 1 if any operation failed.
 *
 * usage: md_load DIR THREADS SECONDS [START_DELAY_S]
 *
 * Storm mode (t_storm.sh, fault injection): N threads, each in DIR/tI of
 * its own, loop round k: create c.k (O_CREAT|O_EXCL, its name written in
 * it, close), stat it, rename it to r.k, and unlink r.k when k % 3 == 0,
 * until the file STOP exists (or MAX_S seconds).  Every acknowledged
 * operation is appended to LOG.I ("C c.k", "R c.k r.k", "U r.k"), every
 * failure with its errno ("E op path errno text"): nothing is retried or
 * forgiven.  At the end it prints "ops N errors N longest_op_ms N".
 *     md_load storm DIR THREADS STOP MAX_S LOG
 * Verify mode: replays each thread's log into the names that must exist,
 * lists DIR/tI and compares (missing, extra), and reads every file back
 * (its content must be its creation name): a create, rename or unlink
 * applied twice or lost shows here or as an error in the log.
 *     md_load verify DIR THREADS LOG        (exit 1 on any difference) */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_SECONDS 3600

static const char *dir;
static double t_end;
static atomic_ulong per_sec[MAX_SECONDS + 1];
static atomic_ulong errors;
static double t0;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *worker(void *arg)
{
	long id = (long)arg;
	char path[4096];
	unsigned long k = 0;
	struct stat st;

	while (now() < t_end) {
		snprintf(path, sizeof(path), "%s/f.%d.%ld.%lu", dir, (int)getpid(), id, k++);
		int fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0644);
		if (fd < 0 || close(fd) || stat(path, &st) || unlink(path)) {
			if (errors++ < 5)
				fprintf(stderr, "md_load: %s: %s\n", path, strerror(errno));
			continue;
		}
		double t = now() - t0;
		if (t >= 0 && t < MAX_SECONDS)
			per_sec[(int)t]++;
	}
	return NULL;
}

/* ---- storm and verify (see the top) ---- */

struct storm {
	const char *dir, *stop, *log;
	long id;
	double t_end;
	unsigned long ops, errs;
	double longest;
};

/* Time one operation's duration into s->longest. */
static void took(struct storm *s, double t)
{
	double d = now() - t;

	if (d > s->longest)
		s->longest = d;
}

static void *storm_worker(void *arg)
{
	struct storm *s = arg;
	char d[4096], a[4200], b[4200], logp[4200], body[64];
	struct stat st;
	FILE *log;
	double t;

	snprintf(d, sizeof(d), "%s/t%ld", s->dir, s->id);
	snprintf(logp, sizeof(logp), "%s.%ld", s->log, s->id);
	log = fopen(logp, "w");
	if (!log) {
		perror(logp);
		s->errs++;
		return NULL;
	}
	if (mkdir(d, 0755)) {
		fprintf(log, "E mkdir %s %d %s\n", d, errno, strerror(errno));
		s->errs++;
		fclose(log);
		return NULL;
	}
	for (unsigned long k = 1; access(s->stop, F_OK) && now() < s->t_end; k++) {
		int fd, len;

		snprintf(a, sizeof(a), "%s/c.%lu", d, k);
		snprintf(b, sizeof(b), "%s/r.%lu", d, k);
		len = snprintf(body, sizeof(body), "c.%lu\n", k);
		t = now();
		fd = open(a, O_CREAT | O_EXCL | O_WRONLY, 0644);
		if (fd < 0) {
			fprintf(log, "E create %s %d %s\n", a, errno, strerror(errno));
			s->errs++;
			break;
		}
		if (write(fd, body, (size_t)len) != len || close(fd)) {
			fprintf(log, "E write/close %s %d %s\n", a, errno, strerror(errno));
			s->errs++;
			break;
		}
		took(s, t);
		fprintf(log, "C c.%lu\n", k);
		t = now();
		if (stat(a, &st) || st.st_size != len) {
			fprintf(log, "E stat %s %d %s (size %lld)\n", a, errno, strerror(errno),
				(long long)st.st_size);
			s->errs++;
			break;
		}
		took(s, t);
		t = now();
		if (rename(a, b)) {
			fprintf(log, "E rename %s %d %s\n", a, errno, strerror(errno));
			s->errs++;
			break;
		}
		took(s, t);
		fprintf(log, "R c.%lu r.%lu\n", k, k);
		s->ops += 3;
		if (k % 3)
			continue;
		t = now();
		if (unlink(b)) {
			fprintf(log, "E unlink %s %d %s\n", b, errno, strerror(errno));
			s->errs++;
			break;
		}
		took(s, t);
		fprintf(log, "U r.%lu\n", k);
		s->ops++;
	}
	if (fclose(log))
		s->errs++;
	return NULL;
}

static int storm(int argc, char **argv)
{
	struct storm s[256];
	pthread_t th[256];
	unsigned long ops = 0, errs = 0;
	double longest = 0;
	int n;

	if (argc != 7 || (n = atoi(argv[3])) < 1 || n > 256 || atoi(argv[5]) < 1) {
		fprintf(stderr, "usage: md_load storm DIR THREADS STOP MAX_S LOG\n");
		return 2;
	}
	if (mkdir(argv[2], 0755) && errno != EEXIST) {
		perror(argv[2]);
		return 1;
	}
	for (long i = 0; i < n; i++) {
		s[i] = (struct storm){ .dir = argv[2], .stop = argv[4], .log = argv[6], .id = i,
				       .t_end = now() + atoi(argv[5]) };
		if (pthread_create(&th[i], NULL, storm_worker, &s[i])) {
			fprintf(stderr, "md_load: pthread_create failed\n");
			return 1;
		}
	}
	for (int i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		ops += s[i].ops;
		errs += s[i].errs;
		if (s[i].longest > longest)
			longest = s[i].longest;
	}
	printf("ops %lu errors %lu longest_op_ms %.0f\n", ops, errs, longest * 1000);
	return errs ? 1 : 0;
}

/* A thread's expected names: present[k] bit 1 = c.k, bit 2 = r.k. */
static int verify_thread(const char *top, long id, const char *logpfx, unsigned long *checked)
{
	char path[4200], line[512], got[64];
	unsigned char *present = NULL;
	unsigned long max = 0, k, k2;
	int bad = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s.%ld", logpfx, id);
	f = fopen(path, "r");
	if (!f) {
		perror(path);
		return 1;
	}
	while (fgets(line, sizeof(line), f)) {
		char op = line[0];

		if (op == 'E') {
			fprintf(stderr, "verify: t%ld: the storm saw an error: %s", id, line + 2);
			bad = 1;
			continue;
		}
		if (sscanf(line + 2, "%*c.%lu", &k) != 1 || k > 100000000ul) {
			fprintf(stderr, "verify: t%ld: bad log line %s", id, line);
			bad = 1;
			break;
		}
		if (k >= max) {
			unsigned char *np = realloc(present, k + 1);

			if (!np) {
				bad = 1;
				break;
			}
			memset(np + max, 0, k + 1 - max);
			present = np;
			max = k + 1;
		}
		if (op == 'C')
			present[k] |= 1;
		else if (op == 'R' && sscanf(line, "R c.%lu r.%lu", &k, &k2) == 2 && k2 == k)
			present[k] = (present[k] & ~1) | 2;
		else if (op == 'U')
			present[k] &= ~2;
	}
	fclose(f);
	for (k = 1; k < max && !bad; k++)
		for (int which = 1; which <= 2; which++) {
			int want = (present[k] & which) != 0, fd;
			ssize_t n;

			snprintf(path, sizeof(path), "%s/t%ld/%c.%lu", top, id, which == 1 ? 'c' : 'r', k);
			fd = open(path, O_RDONLY);
			if (fd < 0 && errno != ENOENT) {
				fprintf(stderr, "verify: %s: %s\n", path, strerror(errno));
				bad = 1;
				continue;
			}
			if ((fd >= 0) != want) {
				fprintf(stderr, "verify: %s %s\n", path,
					want ? "missing (an acknowledged create or rename lost)" :
					       "present (an acknowledged rename or unlink lost)");
				bad = 1;
			}
			if (fd < 0)
				continue;
			n = read(fd, got, sizeof(got) - 1);
			close(fd);
			got[n > 0 ? n : 0] = '\0';
			snprintf(line, sizeof(line), "c.%lu\n", k);
			if (strcmp(got, line)) {
				fprintf(stderr, "verify: %s holds '%s', want 'c.%lu'\n", path, got, k);
				bad = 1;
			}
			(*checked)++;
		}
	/* nothing beyond the logged rounds (an unacknowledged op that ran is
	 * allowed only for the round in flight when the storm stopped: none,
	 * since a round is never cut) */
	snprintf(path, sizeof(path), "%s/t%ld/c.%lu", top, id, max ? max : 1);
	if (!access(path, F_OK)) {
		fprintf(stderr, "verify: %s exists beyond the log\n", path);
		bad = 1;
	}
	free(present);
	return bad;
}

static int verify(int argc, char **argv)
{
	unsigned long checked = 0;
	int n, bad = 0;

	if (argc != 5 || (n = atoi(argv[3])) < 1 || n > 256) {
		fprintf(stderr, "usage: md_load verify DIR THREADS LOG\n");
		return 2;
	}
	for (long i = 0; i < n; i++)
		bad |= verify_thread(argv[2], i, argv[4], &checked);
	printf("verified %lu files\n", checked);
	return bad;
}

int main(int argc, char **argv)
{
	int n, secs;
	double delay = 0;
	pthread_t th[256];

	if (argc > 1 && !strcmp(argv[1], "storm"))
		return storm(argc, argv);
	if (argc > 1 && !strcmp(argv[1], "verify"))
		return verify(argc, argv);
	if (argc < 4 || (n = atoi(argv[2])) < 1 || n > 256 || (secs = atoi(argv[3])) < 1 ||
	    secs > MAX_SECONDS) {
		fprintf(stderr, "usage: md_load DIR THREADS(1..256) SECONDS [START_DELAY_S]\n");
		return 2;
	}
	if (argc > 4)
		delay = atof(argv[4]);
	dir = argv[1];
	if (mkdir(dir, 0755) && errno != EEXIST) {
		perror(dir);
		return 1;
	}
	t0 = now();
	if (delay > 0) {
		struct timespec ts = { (time_t)delay, (long)((delay - (time_t)delay) * 1e9) };
		nanosleep(&ts, NULL);
	}
	t_end = t0 + secs;
	for (long i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)i)) {
			fprintf(stderr, "md_load: pthread_create failed\n");
			return 1;
		}
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	for (int s = 0; s < secs; s++)
		printf("%d,%lu\n", s, (unsigned long)per_sec[s]);
	if (errors)
		fprintf(stderr, "md_load: %lu errors\n", (unsigned long)errors);
	return errors ? 1 : 0;
}
