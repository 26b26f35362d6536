/* log.c — leveled logging with a replaceable, mutex-serialised sink. */
#include "common/log.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <stdlib.h>
#include <time.h>

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static const char *log_prog = "pfs";
static int log_max = PFS_LOG_NOTICE;
static pfs_log_sink log_sink;
static void *log_sink_arg;

static const char *const level_names[] = {
	"emerg", "alert", "crit", "err", "warning", "notice", "info", "debug",
};

void pfs_log_init(const char *progname, int max_level)
{
	pthread_mutex_lock(&log_lock);
	if (progname)
		log_prog = progname;
	log_max = max_level;
	pthread_mutex_unlock(&log_lock);
}

void pfs_log_set_level(int max_level)
{
	pthread_mutex_lock(&log_lock);
	log_max = max_level;
	pthread_mutex_unlock(&log_lock);
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

void pfs_vlog(int level, const char *fmt, va_list ap)
{
	char msg[1024];

	if (level > log_max)
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	pthread_mutex_lock(&log_lock);
	if (log_sink) {
		log_sink(level, msg, log_sink_arg);
	} else {
		struct timespec ts;
		struct tm tm;
		char tbuf[32];

		clock_gettime(CLOCK_REALTIME, &ts);
		localtime_r(&ts.tv_sec, &tm);
		strftime(tbuf, sizeof(tbuf), "%H:%M:%S", &tm);
		fprintf(stderr, "%s.%03ld %s[%s]: %s\n", tbuf, ts.tv_nsec / 1000000,
			log_prog, level_names[level & 7], msg);
	}
	pthread_mutex_unlock(&log_lock);
}

void pfs_log(int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	pfs_vlog(level, fmt, ap);
	va_end(ap);
}
