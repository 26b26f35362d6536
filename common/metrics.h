/* metrics.h — a Prometheus text-exposition endpoint (format 0.0.4) on an
 * HTTP port, served by a libevent evhttp loop on its own thread.
 *
 * GET (or HEAD) /metrics calls the owner's fill callback, which appends the
 * current values with pfs_metrics_* helpers into a pfs_metrics_buf, and
 * answers 200 with `Content-Type: text/plain; version=0.0.4`.  A query
 * string is ignored.  Any other path is 404; /metrics with another method
 * is 405.  A fill error, or a helper given a bad name, or a response larger
 * than PFS_METRICS_MAX_BYTES, answers 500 (a partial exposition is never
 * served: Prometheus would record the missing series as gone).
 *
 * The fill callback runs on the metrics thread: it takes whatever locks the
 * owner's state needs and must not block on the network.  Scrapes are served
 * one at a time; other connections wait (an idle or slow client does not,
 * since the loop is event driven).  Requests are bounded: headers to
 * PFS_METRICS_MAX_HEADERS bytes (libevent 2.1 answers 400 beyond), bodies
 * to 64 KiB, and a connection idle for PFS_METRICS_TIMEOUT_S seconds is
 * closed.  The thread blocks every signal, so SIGTERM and friends reach the
 * daemon's own threads and a write to a reset connection cannot raise
 * SIGPIPE there.
 *
 * Helpers write one `# HELP` / `# TYPE` header per family
 * (pfs_metrics_family) and samples with escaped label values (backslash,
 * double quote and newline, as the format asks).  Label sets are given as
 * alternating name/value strings ended by NULL.  Values are doubles:
 * integral values below 1e18 print without exponent or fraction, NaN as
 * `NaN`, infinities as `+Inf`/`-Inf`, others with the shortest text (15 or
 * 17 digits) that reads back to the same double.  Counters above 2^53 lose
 * precision, as they do in Prometheus itself.  The helpers never fail: the
 * first error (bad metric or label name, -EINVAL; the size bound, -EFBIG)
 * sticks in the buffer, later appends are dropped, and the scrape answers
 * 500.
 *
 * Thread-safety: start/stop/port from one owner thread (several endpoints may
 * run in one process); the buffer helpers only from inside the fill
 * callback, on the buffer it was given (the buffer dies when fill returns). */
#ifndef PFS_METRICS_H
#define PFS_METRICS_H

#include <stddef.h>
#include <stdint.h>

/* Largest exposition served; a bigger one answers 500. */
#define PFS_METRICS_MAX_BYTES (16u << 20)
/* Largest request header block accepted; a bigger one answers 400. */
#define PFS_METRICS_MAX_HEADERS (16u << 10)
/* A connection idle (or stuck mid-request) this long is closed. */
#define PFS_METRICS_TIMEOUT_S 10

typedef struct pfs_metrics pfs_metrics;
typedef struct pfs_metrics_buf pfs_metrics_buf;

/* Append the exposition text; return 0 or a negative errno (the scrape
 * then gets HTTP 500). */
typedef int (*pfs_metrics_fill)(void *ctx, pfs_metrics_buf *b);

/* Listen on host:port (host NULL or "" = all addresses; port 0 = any free
 * port, see pfs_metrics_port) and serve until stop.  fill and ctx are
 * borrowed until pfs_metrics_stop returns.  Returns 0 and *out, or a
 * negative errno (-EADDRINUSE, -ENOMEM, ...) with a reason in err. */
int pfs_metrics_start(const char *host, uint16_t port, pfs_metrics_fill fill, void *ctx,
		      pfs_metrics **out, char *err, size_t errlen);
/* The port actually listened on. */
uint16_t pfs_metrics_port(const pfs_metrics *m);
/* Stop the loop, join its thread, close every connection and free.  A
 * scrape in flight finishes its fill callback first; its reply may be cut
 * off (the client sees the connection close).  NULL is a no-op. */
void pfs_metrics_stop(pfs_metrics *m);

/* "# HELP name help\n# TYPE name type\n"; type is "counter", "gauge" or
 * "untyped"; help may be NULL (no HELP line). */
void pfs_metrics_family(pfs_metrics_buf *b, const char *name, const char *type,
			const char *help);
/* One sample: name{l1="v1",...} value.  Labels: name, value, ..., NULL (the
 * NULL is required even with no labels).  A NULL label value prints as "". */
void pfs_metrics_sample(pfs_metrics_buf *b, const char *name, double value, ...)
	__attribute__((sentinel));
/* Raw printf-style text (for the rare line the helpers do not cover); the
 * caller escapes and validates it. */
void pfs_metrics_printf(pfs_metrics_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The sticky error of b: 0, -EINVAL or -EFBIG (for a fill that wants to
 * stop early). */
int pfs_metrics_buf_error(const pfs_metrics_buf *b);

#endif
