/* metrics.h — a Prometheus text-exposition endpoint (format 0.0.4) on an
 * HTTP port, served by a libevent evhttp loop on its own thread.
 *
 * GET /metrics calls the owner's fill callback, which appends the current
 * values with pfs_metrics_* helpers into a pfs_metrics_buf; any other path
 * is 404, any other method 405.  The fill callback runs on the metrics
 * thread: it takes whatever locks the owner's state needs and must not
 * block on the network.  Scrapes are served one at a time.
 *
 * Helpers write one `# HELP` / `# TYPE` header per family
 * (pfs_metrics_family) and samples with escaped label values
 * (backslash, double quote and newline, as the format asks).
 * Label sets are given as alternating name/value strings, NULL-terminated.
 *
 * Thread-safety: start/stop from one thread; the buffer helpers are called
 * only from inside the fill callback. */
#ifndef PFS_METRICS_H
#define PFS_METRICS_H

#include <stddef.h>
#include <stdint.h>

typedef struct pfs_metrics pfs_metrics;
typedef struct pfs_metrics_buf pfs_metrics_buf;

/* Append the exposition text; return 0 or a negative errno (the scrape
 * then gets HTTP 500). */
typedef int (*pfs_metrics_fill)(void *ctx, pfs_metrics_buf *b);

/* Listen on host:port (port 0 = any free port) and serve until stop.
 * Returns 0, or a negative errno with a reason in err. */
int pfs_metrics_start(const char *host, uint16_t port, pfs_metrics_fill fill, void *ctx,
		      pfs_metrics **out, char *err, size_t errlen);
uint16_t pfs_metrics_port(const pfs_metrics *m);
/* Stop the loop, join its thread, free.  NULL is a no-op. */
void pfs_metrics_stop(pfs_metrics *m);

/* "# HELP name help\n# TYPE name type\n"; type is "counter" or "gauge". */
void pfs_metrics_family(pfs_metrics_buf *b, const char *name, const char *type,
			const char *help);
/* One sample: name{l1="v1",...} value.  Labels: name, value, ..., NULL. */
void pfs_metrics_sample(pfs_metrics_buf *b, const char *name, double value, ...);
/* Raw printf-style text (for the rare line the helpers do not cover). */
void pfs_metrics_printf(pfs_metrics_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
