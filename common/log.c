/* log.c — leveled logging: dated lines to stderr, a file or syslog, or to a
 * replaceable sink; one mutex serialises everything (see log.h). */
#include "common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

enum { DEST_STDERR, DEST_FILE, DEST_SYSLOG };

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
/* Read without the lock by the level filter of every call. */
static atomic_int log_max = PFS_LOG_NOTICE;
/* The rest is guarded by log_lock. */
static const char *log_prog = "pfs";
static pfs_log_sink log_sink;
static void *log_sink_arg;
static pfs_log_clock log_clock;
static int log_dest = DEST_STDERR;
static int log_fd = -1;           /* DEST_FILE */
static char log_path[PATH_MAX];   /* DEST_FILE */
static int log_capture;           /* dup2 the file onto fd 2 */
static int log_journal;           /* stderr is the systemd journal */

static const char *const level_names[] = {
	"emerg", "alert", "crit", "err", "warning", "notice", "info", "debug",
};

/* $JOURNAL_STREAM is "DEV:INO" of the journal's socket when systemd gave it
 * to us as stdout or stderr; it is inherited by children whose stderr may
 * be something else, so compare with what fd 2 is. */
static int stderr_is_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (!js || sscanf(js, "%llu:%llu", &dev, &ino) != 2 || fstat(STDERR_FILENO, &st))
		return 0;
	return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

void pfs_log_init(const char *progname, int max_level)
{
	pthread_mutex_lock(&log_lock);
	if (progname)
		log_prog = progname;
	log_journal = stderr_is_journal();
	pthread_mutex_unlock(&log_lock);
	log_max = max_level;
}

void pfs_log_set_level(int max_level)
{
	log_max = max_level;
}

int pfs_log_level_parse(const char *s)
{
	if (!s || !*s)
		return -1;
	if (s[0] >= '0' && s[0] <= '7' && s[1] == '\0')
		return s[0] - '0';
	for (int i = 0; i < 8; i++)
		if (strcasecmp(s, level_names[i]) == 0)
			return i;
	if (strcasecmp(s, "error") == 0)
		return PFS_LOG_ERR;
	if (strcasecmp(s, "warn") == 0)
		return PFS_LOG_WARNING;
	return -1;
}

void pfs_log_set_sink(pfs_log_sink sink, void *arg)
{
	pthread_mutex_lock(&log_lock);
	log_sink = sink;
	log_sink_arg = arg;
	pthread_mutex_unlock(&log_lock);
}

void pfs_log_set_clock(pfs_log_clock clock)
{
	pthread_mutex_lock(&log_lock);
	log_clock = clock;
	pthread_mutex_unlock(&log_lock);
}

/* Parse dest; *path points into dest for "file:PATH". */
static int dest_parse(const char *dest, int *kind, const char **path, char *err, size_t errlen)
{
	*path = NULL;
	if (!dest || !*dest) {
		snprintf(err, errlen, "log: needs a value (stderr, file:PATH or syslog)");
		return -EINVAL;
	}
	if (!strcmp(dest, "stderr")) {
		*kind = DEST_STDERR;
		return 0;
	}
	if (!strcmp(dest, "syslog")) {
		*kind = DEST_SYSLOG;
		return 0;
	}
	if (strncmp(dest, "file:", 5)) {
		snprintf(err, errlen, "log: unknown destination '%s' (stderr, file:PATH or syslog)",
			 dest);
		return -EINVAL;
	}
	*path = dest + 5;
	if (**path != '/') {
		snprintf(err, errlen, "log=%s: want file:PATH with an absolute PATH", dest);
		return -EINVAL;
	}
	if (strlen(*path) >= PATH_MAX) {
		snprintf(err, errlen, "log=file:...: path longer than %d bytes", PATH_MAX - 1);
		return -EINVAL;
	}
	*kind = DEST_FILE;
	return 0;
}

int pfs_log_dest_check(const char *dest, char *err, size_t errlen)
{
	const char *path;
	int kind;

	return dest_parse(dest, &kind, &path, err, errlen);
}

static int open_file(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOCTTY, 0640);

	return fd < 0 ? -errno : fd;
}

/* Close the current destination; with log_lock held. */
static void dest_close_locked(void)
{
	if (log_dest == DEST_FILE && log_fd >= 0)
		close(log_fd);
	if (log_dest == DEST_SYSLOG)
		closelog();
	log_fd = -1;
	log_path[0] = '\0';
	log_dest = DEST_STDERR;
}

int pfs_log_open(const char *dest, char *err, size_t errlen)
{
	const char *path;
	int kind, fd = -1, rc = dest_parse(dest, &kind, &path, err, errlen);

	if (rc)
		return rc;
	if (kind == DEST_FILE && (fd = open_file(path)) < 0) {
		snprintf(err, errlen, "log=%s: %s", dest, strerror(-fd));
		return fd;
	}
	pthread_mutex_lock(&log_lock);
	dest_close_locked();
	log_dest = kind;
	if (kind == DEST_FILE) {
		log_fd = fd;
		snprintf(log_path, sizeof(log_path), "%s", path);
		if (log_capture)
			dup2(fd, STDERR_FILENO);
	} else if (kind == DEST_SYSLOG) {
		openlog(log_prog, LOG_PID | LOG_NDELAY, LOG_DAEMON);
	} else {
		log_journal = stderr_is_journal();
	}
	pthread_mutex_unlock(&log_lock);
	return 0;
}

int pfs_log_reopen(void)
{
	char path[PATH_MAX];
	int fd, old;

	pthread_mutex_lock(&log_lock);
	if (log_dest != DEST_FILE) {
		pthread_mutex_unlock(&log_lock);
		return 0;
	}
	snprintf(path, sizeof(path), "%s", log_path);
	pthread_mutex_unlock(&log_lock);

	fd = open_file(path);
	if (fd < 0) {
		pfs_log(PFS_LOG_ERR, "log: cannot reopen %s (%s): still writing to the old file",
			path, strerror(-fd));
		return fd;
	}
	pthread_mutex_lock(&log_lock);
	if (log_dest != DEST_FILE || strcmp(path, log_path)) {
		/* Changed meanwhile by pfs_log_open: that one wins. */
		pthread_mutex_unlock(&log_lock);
		close(fd);
		return 0;
	}
	old = log_fd;
	log_fd = fd;
	if (log_capture)
		dup2(fd, STDERR_FILENO);
	pthread_mutex_unlock(&log_lock);
	close(old);
	return 1;
}

void pfs_log_capture_stderr(void)
{
	pthread_mutex_lock(&log_lock);
	log_capture = 1;
	if (log_dest == DEST_FILE)
		dup2(log_fd, STDERR_FILENO);
	pthread_mutex_unlock(&log_lock);
}

void pfs_log_close(void)
{
	pthread_mutex_lock(&log_lock);
	dest_close_locked();
	log_capture = 0;
	log_journal = stderr_is_journal();
	pthread_mutex_unlock(&log_lock);
}

size_t pfs_log_format(char *buf, size_t len, const struct timespec *ts, const char *prog,
		      long pid, int level, const char *msg)
{
	char day[32];
	struct tm tm;
	time_t sec = ts->tv_sec;
	int n;

	if (!gmtime_r(&sec, &tm) || !strftime(day, sizeof(day), "%Y-%m-%dT%H:%M:%S", &tm))
		snprintf(day, sizeof(day), "@%lld", (long long)sec);
	n = snprintf(buf, len, "%s.%03ldZ %s[%ld] %s: %s\n", day, (long)(ts->tv_nsec / 1000000),
		     prog, pid, level_names[level & 7], msg);
	if (n < 0) {
		buf[0] = '\0';
		return 0;
	}
	if ((size_t)n >= len) {
		/* Cut: keep the line a line. */
		buf[len - 2] = '\n';
		buf[len - 1] = '\0';
		return len - 1;
	}
	return (size_t)n;
}

static void write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return; /* nowhere left to say it */
		p += w;
		n -= (size_t)w;
	}
}

void pfs_vlog(int level, const char *fmt, va_list ap)
{
	char msg[PFS_LOG_MSG_MAX], line[PFS_LOG_MSG_MAX + 128];
	struct timespec ts;
	size_t n = 0;
	int saved = errno; /* callers log with %m or strerror(errno) afterwards */

	if (level > log_max)
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	pthread_mutex_lock(&log_lock);
	if (log_sink) {
		log_sink(level, msg, log_sink_arg);
	} else if (log_dest == DEST_SYSLOG) {
		syslog(level & 7, "%s", msg);
	} else {
		if (log_clock)
			log_clock(&ts);
		else
			clock_gettime(CLOCK_REALTIME, &ts);
		if (log_dest == DEST_STDERR && log_journal)
			n = (size_t)snprintf(line, sizeof(line), "<%d>", level & 7);
		n += pfs_log_format(line + n, sizeof(line) - n, &ts, log_prog, (long)getpid(),
				    level, msg);
		write_all(log_dest == DEST_FILE ? log_fd : STDERR_FILENO, line, n);
	}
	pthread_mutex_unlock(&log_lock);
	errno = saved;
}

void pfs_log(int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	pfs_vlog(level, fmt, ap);
	va_end(ap);
}
