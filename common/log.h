/* log.h — pfs logging: leveled, printf-checked, one dated line format, a
 * destination chosen by configuration, and a replaceable sink for tests.
 *
 * Levels follow syslog order (PFS_LOG_ERR is the most severe pfs uses); a
 * message above the maximum level is dropped before it is formatted.
 *
 * One line format, for standard error and files:
 *
 *   2026-11-26T03:05:22.123Z pfs-oss[123] notice: message
 *
 * ISO 8601 in UTC with milliseconds ('Z' is the time zone: the nodes of a
 * cluster agree on it whatever their local zones), the program name, the
 * process id and the level.  Each line is one write(2), so lines of several
 * threads, or of several processes appending to one file, never interleave.
 * A message is cut at PFS_LOG_MSG_MAX bytes.
 *
 * Destinations (the log= option of every daemon and of mount.pfs):
 *   stderr     the default.  When standard error is the systemd journal
 *              ($JOURNAL_STREAM names it), each line is preceded by "<N>",
 *              its syslog priority, which journald strips and records, so
 *              `journalctl -p err` works.
 *   file:PATH  appended to PATH (absolute: a daemonized process changes its
 *              directory), created with mode 0640.  pfs_log_reopen() opens
 *              PATH again: after logrotate moved the file away, the daemons
 *              reopen on SIGHUP and go on in a new file.
 *   syslog     syslog(3), facility daemon, with the program name and pid;
 *              syslog dates the lines itself.
 * A sink installed with pfs_log_set_sink takes every line instead (tests).
 *
 * Threads: every function may be called from any thread; one mutex
 * serialises sink calls, writes and changes of destination.  Nothing here
 * is async-signal-safe: take SIGHUP with sigwait and call pfs_log_reopen
 * from that thread. */
#ifndef PFS_LOG_H
#define PFS_LOG_H

#include <stdarg.h>
#include <stddef.h>
#include <time.h>

enum pfs_log_level {
	PFS_LOG_ERR = 3,
	PFS_LOG_WARNING = 4,
	PFS_LOG_NOTICE = 5,
	PFS_LOG_INFO = 6,
	PFS_LOG_DEBUG = 7,
};

#define PFS_LOG_MSG_MAX 1024

typedef void (*pfs_log_sink)(int level, const char *msg, void *arg);
/* A clock for the line's date (tests); fills ts like CLOCK_REALTIME. */
typedef void (*pfs_log_clock)(struct timespec *ts);

/* Set the program name shown in log lines (borrowed; must outlive logging,
 * and syslog keeps it as its ident) and the maximum level. */
void pfs_log_init(const char *progname, int max_level);
void pfs_log_set_level(int max_level);
int pfs_log_level_parse(const char *s); /* "debug".."err" or a digit; -1 if bad */
/* Replace the sink; NULL restores the destination (stderr by default). */
void pfs_log_set_sink(pfs_log_sink sink, void *arg);
/* Replace the clock of the dates; NULL restores CLOCK_REALTIME. */
void pfs_log_set_clock(pfs_log_clock clock);

/* Check a destination ("stderr", "file:PATH", "syslog") without opening
 * anything: 0, or -EINVAL with err filled ("log: ..."). */
int pfs_log_dest_check(const char *dest, char *err, size_t errlen);
/* Send the lines to dest from now on, closing the previous destination.
 * 0; -EINVAL for a bad dest; or the -errno of open(2) for a file that
 * cannot be opened (err filled; the previous destination stays). */
int pfs_log_open(const char *dest, char *err, size_t errlen);
/* With a file destination, open its path again (logrotate moved it):
 * 1 when a file was reopened, 0 for the other destinations (nothing to
 * do), or -errno with the old file kept and a line logged there to say
 * why. */
int pfs_log_reopen(void);
/* Make descriptor 2 a copy of the log file now and after every reopen, so
 * what libraries and sanitizers print to stderr lands in the log (for a
 * daemonized process, whose stderr is /dev/null).  No-op for the other
 * destinations. */
void pfs_log_capture_stderr(void);
/* Close the destination; lines go to stderr again. */
void pfs_log_close(void);

/* Format one line into buf (len >= 64): date ts, program, pid, level name
 * and msg, ending in '\n' (cut to fit).  Returns its length. */
size_t pfs_log_format(char *buf, size_t len, const struct timespec *ts, const char *prog,
		      long pid, int level, const char *msg);

void pfs_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void pfs_vlog(int level, const char *fmt, va_list ap);

#endif
