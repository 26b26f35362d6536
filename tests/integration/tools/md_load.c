/* md_load.c — metadata load for the PADLL tests (t_padll.sh): N threads
 * loop create (open O_CREAT|O_EXCL + close), stat, unlink on files of
 * their own in DIR, for S seconds, and print one CSV line per second:
 *     second,ops      (completed create/stat/unlink rounds in that second)
 * The job id is whatever mount.pfs finds for this process (set PFS_JOBID
 * in its environment).  Errors are counted and reported on stderr; the
 * exit status is 1 if any operation failed.
 *
 * usage: md_load DIR THREADS SECONDS [START_DELAY_S] */
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

int main(int argc, char **argv)
{
	int n, secs;
	double delay = 0;
	pthread_t th[256];

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
