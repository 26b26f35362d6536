/* qos_load.c — a rate-measuring I/O workload for the QoS tests and
 * bench/qos: N streams (threads) of one process, so of one job (the job id
 * comes from the environment the mount reads at open), each on its own
 * file, measuring client-side what the file system delivers.
 *
 *   qos_load MODE DIR [--streams N] [--bs SIZE] [--size SIZE] [--seconds S]
 *            [--direct] [--fsync] [--interval-ms MS] [--skip S] [--label L]
 *            [--csv FILE] [--prefix P] [--start-at EPOCH_S] [--rate MBPS] [--once]
 *
 * MODE is write, read (sequential, wrapping at --size), randwrite, randread
 * (--bs aligned offsets drawn uniformly in [0, --size)), or prep (write each
 * stream's file once to --size and exit; read modes need prepared files).
 * Files are DIR/P.<stream> (P = --prefix, default "load").  --direct opens
 * with O_DIRECT (reads then reach the OSS, not the page cache); --fsync
 * calls fdatasync after every write.  --rate paces the process to MBPS
 * (10^6 bytes/s, shared evenly by its streams) from the client side: a
 * job with a small, steady demand.  --once: each stream moves its --size
 * once (a job with a fixed amount of I/O) and the run ends when all are
 * done, or at --seconds, whichever comes first.
 *
 * Every --interval-ms (default 100) one CSV row goes to --csv (appended):
 *   t,label,bytes_per_s      t = CLOCK_REALTIME seconds (rows of several
 *                            processes line up), rate = bytes completed in
 *                            the interval / its length
 * At the end one summary line on stdout:
 *   label=L bytes=B seconds=S MBps=R ops=N errors=E elapsed=T
 * over completions after the first --skip seconds: R = bytes completed after
 * the first completion past the skip, up to the last one, divided by the
 * time between those two completions (1 MB = 10^6 bytes), so a window of a
 * few seconds measures a rate exactly to one request, not to one sample.
 * T is the time from the start to the last completion (a job's run time).
 * SIGTERM/SIGINT end the run early (the summary is still printed); SIGSTOP
 * and SIGCONT pause and resume it.
 *
 * Limits: one process is one job; at most 256 streams; sizes take K/M/G
 * (binary) suffixes.  Exit 0, 1 on I/O errors (the first is printed), 2 on
 * usage errors. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define QL_STREAMS_MAX 256

enum { M_WRITE, M_READ, M_RANDWRITE, M_RANDREAD, M_PREP };

static struct {
	int mode, streams, direct, fsync_each, interval_ms, once;
	size_t bs;
	uint64_t size;
	double seconds, skip, start_at, rate;
	const char *dir, *label, *csv, *prefix;
} opt = { .streams = 1, .interval_ms = 100, .bs = 1 << 20, .size = 256ull << 20,
	  .seconds = 10, .prefix = "load" };

static atomic_uint_fast64_t done_bytes, done_ops, errors;
static atomic_int stop_flag, streams_done;
static double last_done = -1; /* guarded by win_lock */
/* Summary window: guarded by win_lock (streams finish requests at once). */
static pthread_mutex_t win_lock = PTHREAD_MUTEX_INITIALIZER;
static double win_t0 = -1, win_t1 = -1, t_start;
static uint64_t win_bytes;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	double v = strtod(s, &end);
	uint64_t m = 1;

	if (end == s || v < 0)
		return -1;
	switch (*end) {
	case 'k': case 'K': m = 1ull << 10; end++; break;
	case 'm': case 'M': m = 1ull << 20; end++; break;
	case 'g': case 'G': m = 1ull << 30; end++; break;
	default: break;
	}
	if (*end == 'i')
		end++;
	if (*end == 'B')
		end++;
	if (*end)
		return -1;
	*out = (uint64_t)(v * (double)m);
	return 0;
}

static void on_stop(int sig) { (void)sig; atomic_store(&stop_flag, 1); }

static void complete(size_t n)
{
	double t = now_s();

	atomic_fetch_add(&done_bytes, n);
	atomic_fetch_add(&done_ops, 1);
	pthread_mutex_lock(&win_lock);
	last_done = t;
	if (t - t_start < opt.skip) {
		pthread_mutex_unlock(&win_lock);
		return;
	}
	if (win_t0 < 0) {
		win_t0 = t; /* the window opens at this completion: its bytes are before it */
	} else {
		win_bytes += n;
		win_t1 = t;
	}
	pthread_mutex_unlock(&win_lock);
}

static void report_error(const char *what, int stream, int err)
{
	if (atomic_fetch_add(&errors, 1) == 0)
		fprintf(stderr, "qos_load: stream %d: %s: %s\n", stream, what, strerror(err));
}

static void *stream_main(void *arg)
{
	int id = (int)(intptr_t)arg, fd, flags;
	char path[4096];
	void *buf;
	uint64_t off = 0, nblocks = opt.size / opt.bs;
	unsigned seed = (unsigned)id * 2654435761u + 1;
	int writing = opt.mode == M_WRITE || opt.mode == M_RANDWRITE || opt.mode == M_PREP;

	snprintf(path, sizeof(path), "%s/%s.%d", opt.dir, opt.prefix, id);
	flags = writing ? O_WRONLY | O_CREAT : O_RDONLY;
	if (opt.direct)
		flags |= O_DIRECT;
	fd = open(path, flags, 0644);
	if (fd < 0) {
		report_error(path, id, errno);
		return NULL;
	}
	if (posix_memalign(&buf, 4096, opt.bs)) {
		report_error("memory", id, ENOMEM);
		close(fd);
		return NULL;
	}
	memset(buf, 'a' + id % 26, opt.bs);
	if (nblocks == 0)
		nblocks = 1;
	for (uint64_t k = 0; !atomic_load(&stop_flag); k++) {
		uint64_t blk;
		ssize_t n;

		if (opt.rate > 0) { /* request k of this stream starts at t_start + k * bs / share */
			double due = t_start + (double)k * (double)opt.bs / (opt.rate * 1e6 / opt.streams);
			double t = now_s();

			if (due > t) {
				usleep((useconds_t)((due - t) * 1e6));
				if (atomic_load(&stop_flag))
					break;
			}
		}

		if (opt.mode == M_RANDWRITE || opt.mode == M_RANDREAD)
			blk = (((uint64_t)rand_r(&seed) << 31) ^ (uint64_t)rand_r(&seed)) % nblocks;
		else
			blk = off++ % nblocks;
		if (writing)
			n = pwrite(fd, buf, opt.bs, (off_t)(blk * opt.bs));
		else
			n = pread(fd, buf, opt.bs, (off_t)(blk * opt.bs));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			report_error(writing ? "write" : "read", id, errno);
			break;
		}
		if (n == 0) { /* read past the end: the file is shorter than --size */
			report_error("read", id, ENODATA);
			break;
		}
		if (writing && opt.fsync_each && fdatasync(fd) < 0) {
			report_error("fdatasync", id, errno);
			break;
		}
		complete((size_t)n);
		if ((opt.mode == M_PREP || opt.once) && off >= nblocks)
			break;
	}
	if (writing && fsync(fd) < 0 && errno != EINVAL)
		report_error("fsync", id, errno);
	close(fd);
	free(buf);
	atomic_fetch_add(&streams_done, 1);
	return NULL;
}

static void usage(void)
{
	fprintf(stderr, "usage: qos_load write|read|randwrite|randread|prep DIR [--streams N] "
			"[--bs SIZE] [--size SIZE] [--seconds S] [--direct] [--fsync] "
			"[--interval-ms MS] [--skip S] [--label L] [--csv FILE] [--prefix P] "
			"[--start-at EPOCH_S] [--rate MBPS] [--once]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const char *modes[] = { "write", "read", "randwrite", "randread", "prep" };
	pthread_t th[QL_STREAMS_MAX];
	FILE *csv = NULL;
	struct sigaction sa = { .sa_handler = on_stop };
	uint64_t last_bytes = 0;
	double last_t, t_end;
	int i, mode = -1;

	if (argc < 3)
		usage();
	for (i = 0; i < 5; i++)
		if (!strcmp(argv[1], modes[i]))
			mode = i;
	if (mode < 0)
		usage();
	opt.mode = mode;
	opt.dir = argv[2];
	if (mode == M_RANDWRITE || mode == M_RANDREAD)
		opt.bs = 4096;
	opt.label = getenv("SLURM_JOB_ID") ? getenv("SLURM_JOB_ID") : "-";
	for (i = 3; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		uint64_t sz;
		int used = 1;

		if (!strcmp(a, "--direct")) { opt.direct = 1; used = 0; }
		else if (!strcmp(a, "--once")) { opt.once = 1; used = 0; }
		else if (!strcmp(a, "--fsync")) { opt.fsync_each = 1; used = 0; }
		else if (!v) usage();
		else if (!strcmp(a, "--streams")) opt.streams = atoi(v);
		else if (!strcmp(a, "--bs")) { if (parse_size(v, &sz) || !sz) usage(); opt.bs = sz; }
		else if (!strcmp(a, "--size")) { if (parse_size(v, &sz) || !sz) usage(); opt.size = sz; }
		else if (!strcmp(a, "--seconds")) opt.seconds = atof(v);
		else if (!strcmp(a, "--interval-ms")) opt.interval_ms = atoi(v);
		else if (!strcmp(a, "--skip")) opt.skip = atof(v);
		else if (!strcmp(a, "--label")) opt.label = v;
		else if (!strcmp(a, "--csv")) opt.csv = v;
		else if (!strcmp(a, "--prefix")) opt.prefix = v;
		else if (!strcmp(a, "--start-at")) opt.start_at = atof(v);
		else if (!strcmp(a, "--rate")) opt.rate = atof(v);
		else usage();
		i += used;
	}
	if (opt.streams < 1 || opt.streams > QL_STREAMS_MAX || opt.interval_ms < 1 ||
	    (mode != M_PREP && opt.seconds <= 0))
		usage();
	if (opt.csv && !(csv = fopen(opt.csv, "a"))) {
		fprintf(stderr, "qos_load: %s: %s\n", opt.csv, strerror(errno));
		return 2;
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	while (opt.start_at > 0 && now_s() < opt.start_at && !atomic_load(&stop_flag))
		usleep(1000);

	t_start = last_t = now_s();
	t_end = t_start + opt.seconds;
	for (i = 0; i < opt.streams; i++)
		if (pthread_create(&th[i], NULL, stream_main, (void *)(intptr_t)i)) {
			fprintf(stderr, "qos_load: cannot start stream %d\n", i);
			return 1;
		}
	if (mode == M_PREP)
		goto join;
	/* Sampler: the main thread.  Sleep to the next tick so rows stay on a
	 * grid even when a stream holds the CPU; after a pause (SIGSTOP) skip
	 * the ticks that passed instead of firing them all at once. */
	for (long k = 1; !atomic_load(&stop_flag); k++) {
		double tick = t_start + k * opt.interval_ms / 1000.0, t;
		uint64_t b;

		while ((t = now_s()) < tick && !atomic_load(&stop_flag))
			usleep((useconds_t)((tick - t) * 1e6) + 1);
		t = now_s();
		b = atomic_load(&done_bytes);
		if (csv) {
			fprintf(csv, "%.3f,%s,%.0f\n", t, opt.label, (double)(b - last_bytes) / (t - last_t));
			fflush(csv);
		}
		last_bytes = b;
		last_t = t;
		if (t >= t_end || atomic_load(&streams_done) == opt.streams)
			atomic_store(&stop_flag, 1);
		if ((t - t_start) * 1000.0 / opt.interval_ms > (double)k + 1)
			k = (long)((t - t_start) * 1000.0 / opt.interval_ms);
	}
	atomic_store(&stop_flag, 1);
join:
	for (i = 0; i < opt.streams; i++)
		pthread_join(th[i], NULL);
	if (csv)
		fclose(csv);
	{
		double span = win_t1 > win_t0 ? win_t1 - win_t0 : 0;
		printf("label=%s bytes=%" PRIu64 " seconds=%.3f MBps=%.3f ops=%" PRIu64
		       " errors=%" PRIu64 " elapsed=%.3f\n", opt.label, win_bytes, span,
		       span > 0 ? (double)win_bytes / span / 1e6 : 0.0,
		       (uint64_t)atomic_load(&done_ops), (uint64_t)atomic_load(&errors),
		       last_done > 0 ? last_done - t_start : 0.0);
	}
	return atomic_load(&errors) ? 1 : 0;
}
