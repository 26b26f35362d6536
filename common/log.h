/* log.h — pfs logging: leveled, printf-checked, with a replaceable sink.
 *
 * Levels follow syslog order (PFS_LOG_ERR is most severe shown by default).
 * The sink is process-wide and thread-safe: the default writes one line per
 * message to stderr with a timestamp and the program name; tests install their
 * own sink to capture messages.  qos/ never logs. */
#ifndef PFS_LOG_H
#define PFS_LOG_H

#include <stdarg.h>

enum pfs_log_level {
	PFS_LOG_ERR = 3,
	PFS_LOG_WARNING = 4,
	PFS_LOG_NOTICE = 5,
	PFS_LOG_INFO = 6,
	PFS_LOG_DEBUG = 7,
};

typedef void (*pfs_log_sink)(int level, const char *msg, void *arg);

/* Set the program name shown in log lines (borrowed; must outlive logging). */
void pfs_log_init(const char *progname, int max_level);
void pfs_log_set_level(int max_level);
int pfs_log_level_parse(const char *s); /* "debug".."err" or a digit; -1 if bad */
/* Replace the sink; NULL restores the default stderr sink. */
void pfs_log_set_sink(pfs_log_sink sink, void *arg);
void pfs_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void pfs_vlog(int level, const char *fmt, va_list ap);

#endif
