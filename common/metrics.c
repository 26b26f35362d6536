/* metrics.c — Prometheus text exposition over libevent's evhttp.
 *
 * Design: each endpoint owns an event_base, an evhttp listening on a socket
 * made by pfs_net_listen, and a thread that runs the loop.  libevent is used
 * without evthread, so no libevent call may touch the base from another
 * thread while the loop runs.  Stop therefore only write(2)s a byte into a
 * self-pipe; the pipe's read event, on the loop thread, calls
 * event_base_loopbreak.  After pthread_join the owner thread is the only
 * user of the base and frees everything (evhttp_free closes the listener and
 * every connection, with its pending requests).
 *
 * A scrape builds the whole exposition in an evbuffer before answering, so
 * the status line can still say 500 when the fill fails or the buffer would
 * pass PFS_METRICS_MAX_BYTES; memory per scrape is bounded by that size
 * (plus one line).  Costs: one fill per scrape, O(bytes) formatting. */
#include "common/metrics.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>

#include "common/log.h"
#include "common/net.h"

struct pfs_metrics_buf {
	struct evbuffer *eb;
	int err; /* sticky: first error, later appends dropped */
};

struct pfs_metrics {
	struct event_base *base; /* touched only by the loop thread while it runs */
	struct evhttp *http;
	struct event *wake;      /* read side of wake_fd */
	int wake_fd[2];          /* stop writes wake_fd[1] */
	pthread_t thr;
	int started;             /* thr was created */
	uint16_t port;
	pfs_metrics_fill fill;
	void *ctx;
	int last_rc;             /* last fill result, to log failures once */
};

/* ---- exposition helpers ---- */

static void buf_fail(pfs_metrics_buf *b, int err)
{
	if (!b->err)
		b->err = err;
}

static void buf_add(pfs_metrics_buf *b, const char *s, size_t n)
{
	if (b->err)
		return;
	if (evbuffer_get_length(b->eb) + n > PFS_METRICS_MAX_BYTES) {
		buf_fail(b, -EFBIG);
		return;
	}
	if (evbuffer_add(b->eb, s, n))
		buf_fail(b, -ENOMEM);
}

static void buf_puts(pfs_metrics_buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

/* [a-zA-Z_:][a-zA-Z0-9_:]* for metric names; no ':' for label names. */
static int name_ok(const char *s, int colon)
{
	if (!s || !*s || (*s >= '0' && *s <= '9'))
		return 0;
	for (; *s; s++) {
		char c = *s;

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || (colon && c == ':')))
			return 0;
	}
	return 1;
}

/* Escape backslash and newline (HELP text), and double quote too (label
 * values).  Runs of plain bytes are appended in one piece. */
static void buf_escaped(pfs_metrics_buf *b, const char *s, int quote)
{
	const char *run = s;

	for (; *s; s++) {
		const char *rep = NULL;

		if (*s == '\\')
			rep = "\\\\";
		else if (*s == '\n')
			rep = "\\n";
		else if (quote && *s == '"')
			rep = "\\\"";
		if (!rep)
			continue;
		buf_add(b, run, (size_t)(s - run));
		buf_add(b, rep, 2);
		run = s + 1;
	}
	buf_add(b, run, (size_t)(s - run));
}

/* A double as the text format's parser (Go's ParseFloat) reads it. */
static void format_value(char *out, size_t n, double v)
{
	if (isnan(v)) {
		snprintf(out, n, "NaN");
	} else if (isinf(v)) {
		snprintf(out, n, v > 0 ? "+Inf" : "-Inf");
	} else if (v == 0) {
		snprintf(out, n, "0"); /* also -0 */
	} else if (v == trunc(v) && fabs(v) < 1e18) {
		snprintf(out, n, "%.0f", v);
	} else {
		/* Shortest of 15 or 17 significant digits that reads back. */
		snprintf(out, n, "%.15g", v);
		if (strtod(out, NULL) != v)
			snprintf(out, n, "%.17g", v);
	}
}

void pfs_metrics_family(pfs_metrics_buf *b, const char *name, const char *type,
			const char *help)
{
	if (!name_ok(name, 1) || !type ||
	    (strcmp(type, "counter") && strcmp(type, "gauge") && strcmp(type, "untyped"))) {
		buf_fail(b, -EINVAL);
		return;
	}
	if (help) {
		buf_puts(b, "# HELP ");
		buf_puts(b, name);
		buf_puts(b, " ");
		buf_escaped(b, help, 0);
		buf_puts(b, "\n");
	}
	buf_puts(b, "# TYPE ");
	buf_puts(b, name);
	buf_puts(b, " ");
	buf_puts(b, type);
	buf_puts(b, "\n");
}

void pfs_metrics_sample(pfs_metrics_buf *b, const char *name, double value, ...)
{
	va_list ap;
	const char *ln;
	char num[40];
	int first = 1;

	if (b->err)
		return;
	if (!name_ok(name, 1)) {
		buf_fail(b, -EINVAL);
		return;
	}
	buf_puts(b, name);
	va_start(ap, value);
	while ((ln = va_arg(ap, const char *)) != NULL) {
		const char *lv = va_arg(ap, const char *);

		if (!name_ok(ln, 0)) {
			buf_fail(b, -EINVAL);
			break;
		}
		buf_puts(b, first ? "{" : ",");
		buf_puts(b, ln);
		buf_puts(b, "=\"");
		buf_escaped(b, lv ? lv : "", 1);
		buf_puts(b, "\"");
		first = 0;
	}
	va_end(ap);
	if (!first)
		buf_puts(b, "}");
	format_value(num, sizeof(num), value);
	buf_puts(b, " ");
	buf_puts(b, num);
	buf_puts(b, "\n");
}

void pfs_metrics_printf(pfs_metrics_buf *b, const char *fmt, ...)
{
	va_list ap;
	char small[256];
	int n;

	if (b->err)
		return;
	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0) {
		buf_fail(b, -EINVAL);
	} else if ((size_t)n < sizeof(small)) {
		buf_add(b, small, (size_t)n);
	} else if ((size_t)n > PFS_METRICS_MAX_BYTES) {
		buf_fail(b, -EFBIG);
	} else {
		char *big = malloc((size_t)n + 1);

		if (!big) {
			buf_fail(b, -ENOMEM);
			return;
		}
		va_start(ap, fmt);
		vsnprintf(big, (size_t)n + 1, fmt, ap);
		va_end(ap);
		buf_add(b, big, (size_t)n);
		free(big);
	}
}

int pfs_metrics_buf_error(const pfs_metrics_buf *b)
{
	return b->err;
}

/* ---- HTTP ---- */

/* A short text reply; none for HEAD, whose body evhttp 2.1 would send. */
static void reply_text(struct evhttp_request *req, int code, const char *reason,
		       const char *text)
{
	struct evbuffer *eb = NULL;

	evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
			  "text/plain; charset=utf-8");
	if (evhttp_request_get_command(req) != EVHTTP_REQ_HEAD)
		eb = evbuffer_new();
	if (eb)
		evbuffer_add_printf(eb, "%s\n", text);
	evhttp_send_reply(req, code, reason, eb);
	if (eb)
		evbuffer_free(eb);
}

static void on_request(struct evhttp_request *req, void *arg)
{
	pfs_metrics *m = arg;
	const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
	const char *path = uri ? evhttp_uri_get_path(uri) : NULL;
	enum evhttp_cmd_type cmd = evhttp_request_get_command(req);
	pfs_metrics_buf b = { 0 };
	char msg[128];
	int rc;

	if (!path || strcmp(path, "/metrics") != 0) {
		reply_text(req, HTTP_NOTFOUND, "Not Found", "not found; try /metrics");
		return;
	}
	if (cmd != EVHTTP_REQ_GET && cmd != EVHTTP_REQ_HEAD) {
		evhttp_add_header(evhttp_request_get_output_headers(req), "Allow", "GET, HEAD");
		reply_text(req, 405, "Method Not Allowed", "only GET and HEAD");
		return;
	}
	b.eb = evbuffer_new();
	if (!b.eb) {
		reply_text(req, HTTP_INTERNAL, "Internal Server Error", "out of memory");
		return;
	}
	rc = m->fill(m->ctx, &b);
	if (rc == 0)
		rc = b.err;
	if (rc && rc != m->last_rc)
		pfs_log(PFS_LOG_WARNING, "metrics: scrape failed: %s", strerror(-rc));
	m->last_rc = rc;
	if (rc) {
		snprintf(msg, sizeof(msg), "metrics unavailable: %s", strerror(-rc));
		reply_text(req, HTTP_INTERNAL, "Internal Server Error", msg);
	} else {
		struct evkeyvalq *hdr = evhttp_request_get_output_headers(req);

		evhttp_add_header(hdr, "Content-Type", "text/plain; version=0.0.4");
		if (cmd == EVHTTP_REQ_HEAD) {
			/* evhttp 2.1 would send the body after a HEAD reply. */
			snprintf(msg, sizeof(msg), "%zu", evbuffer_get_length(b.eb));
			evhttp_add_header(hdr, "Content-Length", msg);
			evhttp_send_reply(req, HTTP_OK, "OK", NULL);
		} else {
			evhttp_send_reply(req, HTTP_OK, "OK", b.eb);
		}
	}
	evbuffer_free(b.eb);
}

static void on_wake(evutil_socket_t fd, short what, void *arg)
{
	pfs_metrics *m = arg;

	event_base_loopbreak(m->base);
}

static void *loop_main(void *arg)
{
	pfs_metrics *m = arg;

	if (event_base_dispatch(m->base) < 0)
		pfs_log(PFS_LOG_ERR, "metrics: event loop failed");
	return NULL;
}

/* libevent's own warnings (accept failures and such) go to pfs_log. */
static void event_log(int severity, const char *msg)
{
	int level = severity >= EVENT_LOG_ERR ? PFS_LOG_ERR :
		    severity == EVENT_LOG_WARN ? PFS_LOG_WARNING : PFS_LOG_DEBUG;

	pfs_log(level, "metrics: libevent: %s", msg);
}

static void event_log_once(void)
{
	event_set_log_callback(event_log);
}

static void metrics_free(pfs_metrics *m)
{
	if (m->wake)
		event_free(m->wake);
	if (m->http)
		evhttp_free(m->http);
	if (m->base)
		event_base_free(m->base);
	for (int i = 0; i < 2; i++)
		if (m->wake_fd[i] >= 0)
			close(m->wake_fd[i]);
	free(m);
}

int pfs_metrics_start(const char *host, uint16_t port, pfs_metrics_fill fill, void *ctx,
		      pfs_metrics **out, char *err, size_t errlen)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	const char *h = host && *host ? host : "0.0.0.0";
	pfs_metrics *m;
	sigset_t all, old;
	int rc, fd = -1;

	*out = NULL;
	if (!fill) {
		snprintf(err, errlen, "metrics: no fill callback");
		return -EINVAL;
	}
	pthread_once(&once, event_log_once);
	m = calloc(1, sizeof(*m));
	if (!m) {
		snprintf(err, errlen, "metrics: out of memory");
		return -ENOMEM;
	}
	m->wake_fd[0] = m->wake_fd[1] = -1;
	m->fill = fill;
	m->ctx = ctx;
	if (pipe2(m->wake_fd, O_CLOEXEC | O_NONBLOCK)) {
		rc = -errno;
		snprintf(err, errlen, "metrics: pipe: %s", strerror(-rc));
		goto out;
	}
	rc = pfs_net_listen(h, port, &fd);
	if (rc) {
		snprintf(err, errlen, "metrics: listen on %s:%u: %s", h, (unsigned)port,
			 strerror(-rc));
		goto out;
	}
	rc = pfs_net_local_port(fd, &m->port);
	if (rc == 0 && evutil_make_socket_nonblocking(fd))
		rc = -EIO;
	if (rc) {
		snprintf(err, errlen, "metrics: listening socket: %s", strerror(-rc));
		goto out;
	}
	rc = -ENOMEM;
	m->base = event_base_new();
	m->http = m->base ? evhttp_new(m->base) : NULL;
	m->wake = m->base ? event_new(m->base, m->wake_fd[0], EV_READ, on_wake, m) : NULL;
	if (!m->http || !m->wake || event_add(m->wake, NULL)) {
		snprintf(err, errlen, "metrics: libevent setup failed");
		goto out;
	}
	/* Every method reaches on_request, which answers 405 itself (evhttp's
	 * own refusal would be 501). */
	evhttp_set_allowed_methods(m->http, EVHTTP_REQ_GET | EVHTTP_REQ_POST |
				   EVHTTP_REQ_HEAD | EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE |
				   EVHTTP_REQ_OPTIONS | EVHTTP_REQ_TRACE |
				   EVHTTP_REQ_CONNECT | EVHTTP_REQ_PATCH);
	evhttp_set_max_headers_size(m->http, PFS_METRICS_MAX_HEADERS);
	evhttp_set_max_body_size(m->http, 64 << 10);
	evhttp_set_timeout(m->http, PFS_METRICS_TIMEOUT_S);
	evhttp_set_gencb(m->http, on_request, m);
	/* From here the listener owns fd (closed by evhttp_free). */
	if (!evhttp_accept_socket_with_handle(m->http, fd)) {
		snprintf(err, errlen, "metrics: evhttp_accept_socket failed");
		goto out;
	}
	fd = -1;
	/* The loop thread inherits a mask with every signal blocked. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = -pthread_create(&m->thr, NULL, loop_main, m);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		snprintf(err, errlen, "metrics: thread: %s", strerror(-rc));
		goto out;
	}
	m->started = 1;
	*out = m;
	return 0;
out:
	if (fd >= 0)
		close(fd);
	metrics_free(m);
	return rc;
}

uint16_t pfs_metrics_port(const pfs_metrics *m)
{
	return m->port;
}

void pfs_metrics_stop(pfs_metrics *m)
{
	ssize_t n;

	if (!m)
		return;
	if (m->started) {
		/* The pipe is empty and non-blocking: one byte always fits. */
		do
			n = write(m->wake_fd[1], "x", 1);
		while (n < 0 && errno == EINTR);
		assert(n == 1);
		pthread_join(m->thr, NULL);
	}
	metrics_free(m);
}
