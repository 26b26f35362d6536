/* test_metrics.c — the Prometheus endpoint on loopback, scraped with a plain
 * socket client: the exposition text byte for byte (escaping, value
 * formatting), status codes for wrong paths, methods and malformed or
 * oversized requests, keep-alive, an idle client beside a scrape, the size
 * bound, clients hanging up mid-reply, the loop thread's signal mask, stop
 * with a scrape in flight, and 50 start/stop rounds without leaking memory or descriptors. */
#include <errno.h>
#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/log.h"
#include "common/metrics.h"
#include "common/net.h"

enum mode { M_BASIC, M_VALUES, M_FAIL, M_BAD_NAME, M_BAD_LABEL, M_HUGE, M_BLOCK, M_BIG };

struct fx {
	enum mode mode;
	int calls;
	int huge_err;          /* pfs_metrics_buf_error seen by M_HUGE */
	pthread_mutex_t lock;  /* guards entered, release (M_BLOCK) */
	pthread_cond_t cond;
	int entered, release;
};

static const double values[] = {
	0, -0.0, 1, -1, 42, 1e15, 9007199254740992.0 /* 2^53 */, 0.1, 1.5, -2.25, 1e-9,
	1.0 / 3, 1e300, 123456789.125,
};
static const char *const values_text[] = {
	"0", "0", "1", "-1", "42", "1000000000000000", "9007199254740992", "0.1", "1.5",
	"-2.25", "1e-09", "0.33333333333333331", "1e+300",
	"123456789.125",
};

static int fill(void *ctx, pfs_metrics_buf *b)
{
	struct fx *f = ctx;

	f->calls++;
	switch (f->mode) {
	case M_BASIC:
		pfs_metrics_family(b, "pfs_test_bytes_total", "counter",
				   "Bytes moved\\by a job\nsecond line");
		pfs_metrics_sample(b, "pfs_test_bytes_total", 1024, "job", "a\"b\\c\nd", "op",
				   "write", NULL);
		pfs_metrics_sample(b, "pfs_test_bytes_total", 7, "job", "", "op", NULL, NULL);
		pfs_metrics_family(b, "pfs_test_up", "gauge", NULL);
		pfs_metrics_sample(b, "pfs_test_up", 1, NULL);
		pfs_metrics_printf(b, "pfs_test_raw{x=\"%d\"} %d\n", 5, 6);
		return 0;
	case M_VALUES:
		pfs_metrics_family(b, "v", "untyped", NULL);
		for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++)
			pfs_metrics_sample(b, "v", values[i], NULL);
		pfs_metrics_sample(b, "v", NAN, NULL);
		pfs_metrics_sample(b, "v", INFINITY, NULL);
		pfs_metrics_sample(b, "v", -INFINITY, NULL);
		return 0;
	case M_FAIL:
		pfs_metrics_sample(b, "pfs_test_up", 1, NULL);
		return -EIO;
	case M_BAD_NAME:
		pfs_metrics_sample(b, "pfs_test_up", 1, NULL);
		pfs_metrics_sample(b, "9bad-name", 1, NULL);
		return 0;
	case M_BAD_LABEL:
		pfs_metrics_sample(b, "pfs_test_up", 1, "ost:id", "0", NULL);
		return 0;
	case M_HUGE: {
		char v[64];

		memset(v, 'x', sizeof(v) - 1);
		v[sizeof(v) - 1] = '\0';
		/* ~100 bytes a line: 200,000 lines pass 16 MiB. */
		for (int i = 0; i < 200000 && !pfs_metrics_buf_error(b); i++)
			pfs_metrics_sample(b, "pfs_test_line", i, "v", v, NULL);
		f->huge_err = pfs_metrics_buf_error(b);
		return 0;
	}
	case M_BIG: /* 8 MiB in 512-byte raw lines, within the bound */
		for (int i = 0; i < 16384; i++)
			pfs_metrics_printf(b, "# %0500d\n", i);
		return 0;
	case M_BLOCK:
		pthread_mutex_lock(&f->lock);
		f->entered = 1;
		pthread_cond_broadcast(&f->cond);
		while (!f->release)
			pthread_cond_wait(&f->cond, &f->lock);
		pthread_mutex_unlock(&f->lock);
		pfs_metrics_sample(b, "pfs_test_up", 1, NULL);
		return 0;
	}
	return -EINVAL;
}

/* ---- a plain HTTP client ---- */

struct resp {
	int status;        /* 0 = no status line (connection closed first) */
	char *raw;         /* everything received, NUL-terminated */
	size_t len;
	const char *body;  /* into raw */
	size_t body_len;
};

static int dial(uint16_t port)
{
	int fd = -1;

	assert_int_equal(pfs_net_connect("127.0.0.1", port, 5000, &fd), 0);
	assert_int_equal(pfs_net_set_timeout(fd, 10000), 0);
	return fd;
}

static void send_all(int fd, const char *s, size_t n)
{
	assert_int_equal(pfs_net_write_all(fd, s, n), 0);
}

static void parse(struct resp *r)
{
	const char *end = strstr(r->raw, "\r\n\r\n");

	r->status = 0;
	r->body = NULL;
	r->body_len = 0;
	if (sscanf(r->raw, "HTTP/1.%*d %d", &r->status) != 1)
		r->status = 0;
	if (end) {
		r->body = end + 4;
		r->body_len = r->len - (size_t)(r->body - r->raw);
	}
}

/* Read until EOF (the request said Connection: close). */
static void read_to_eof(int fd, struct resp *r)
{
	size_t cap = 1 << 16;
	ssize_t n;

	r->raw = malloc(cap);
	assert_non_null(r->raw);
	r->len = 0;
	for (;;) {
		if (cap - r->len < 4096) {
			cap *= 2;
			r->raw = realloc(r->raw, cap);
			assert_non_null(r->raw);
		}
		n = recv(fd, r->raw + r->len, cap - r->len - 1, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == ECONNRESET)
			break;
		assert_true(n >= 0); /* a timeout here means the server hung */
		if (n == 0)
			break;
		r->len += (size_t)n;
	}
	r->raw[r->len] = '\0';
	parse(r);
}

static const char *header(const struct resp *r, const char *name, char *out, size_t n)
{
	char pat[64];
	const char *p, *e;

	snprintf(pat, sizeof(pat), "\r\n%s: ", name);
	p = strcasestr(r->raw, pat);
	if (!p || (r->body && p > r->body))
		return NULL;
	p += strlen(pat);
	e = strstr(p, "\r\n");
	snprintf(out, n, "%.*s", (int)(e - p), p);
	return out;
}

static void request(uint16_t port, const char *req, size_t len, struct resp *r)
{
	int fd = dial(port);

	send_all(fd, req, len);
	read_to_eof(fd, r);
	close(fd);
}

static void request_str(uint16_t port, const char *req, struct resp *r)
{
	request(port, req, strlen(req), r);
}

static void get(uint16_t port, const char *method, const char *path, struct resp *r)
{
	char req[256];
	int n = snprintf(req, sizeof(req), "%s %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
			 method, path);

	request(port, req, (size_t)n, r);
}

static void resp_free(struct resp *r)
{
	free(r->raw);
	r->raw = NULL;
}

static pfs_metrics *start(struct fx *f)
{
	pfs_metrics *m = NULL;
	char err[256] = "";

	assert_int_equal(pfs_metrics_start("127.0.0.1", 0, fill, f, &m, err, sizeof(err)), 0);
	assert_non_null(m);
	assert_int_not_equal(pfs_metrics_port(m), 0);
	return m;
}

static void fx_init(struct fx *f, enum mode mode)
{
	memset(f, 0, sizeof(*f));
	f->mode = mode;
	pthread_mutex_init(&f->lock, NULL);
	pthread_cond_init(&f->cond, NULL);
}

static void fx_fini(struct fx *f)
{
	pthread_mutex_destroy(&f->lock);
	pthread_cond_destroy(&f->cond);
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	assert_non_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* ---- tests ---- */

static const char basic_text[] =
	"# HELP pfs_test_bytes_total Bytes moved\\\\by a job\\nsecond line\n"
	"# TYPE pfs_test_bytes_total counter\n"
	"pfs_test_bytes_total{job=\"a\\\"b\\\\c\\nd\",op=\"write\"} 1024\n"
	"pfs_test_bytes_total{job=\"\",op=\"\"} 7\n"
	"# TYPE pfs_test_up gauge\n"
	"pfs_test_up 1\n"
	"pfs_test_raw{x=\"5\"} 6\n";

static void test_metrics_scrape(void **state)
{
	struct fx f;
	pfs_metrics *m;
	struct resp r;
	char ct[128], cl[32];

	fx_init(&f, M_BASIC);
	m = start(&f);
	get(pfs_metrics_port(m), "GET", "/metrics", &r);
	assert_int_equal(r.status, 200);
	assert_non_null(header(&r, "Content-Type", ct, sizeof(ct)));
	assert_string_equal(ct, "text/plain; version=0.0.4");
	assert_non_null(header(&r, "Content-Length", cl, sizeof(cl)));
	assert_int_equal(atoi(cl), strlen(basic_text));
	assert_int_equal(r.body_len, strlen(basic_text));
	assert_string_equal(r.body, basic_text);
	resp_free(&r);

	/* A query string does not change the path. */
	get(pfs_metrics_port(m), "GET", "/metrics?name[]=up", &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body, basic_text);
	resp_free(&r);

	/* HEAD: headers only. */
	get(pfs_metrics_port(m), "HEAD", "/metrics", &r);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.body_len, 0);
	assert_non_null(header(&r, "Content-Length", cl, sizeof(cl)));
	assert_int_equal(atoi(cl), strlen(basic_text));
	resp_free(&r);
	assert_int_equal(f.calls, 3);
	pfs_metrics_stop(m);
	fx_fini(&f);
}

static void test_metrics_values(void **state)
{
	struct fx f;
	pfs_metrics *m;
	struct resp r;
	char expect[2048] = "# TYPE v untyped\n";
	const char *line;
	size_t i;

	fx_init(&f, M_VALUES);
	m = start(&f);
	for (i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		strcat(expect, "v ");
		strcat(expect, values_text[i]);
		strcat(expect, "\n");
	}
	strcat(expect, "v NaN\nv +Inf\nv -Inf\n");
	get(pfs_metrics_port(m), "GET", "/metrics", &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body, expect);
	/* Every finite value reads back exactly, and no integer has an exponent. */
	line = strchr(r.body, '\n') + 1;
	for (i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		double v = strtod(line + 2, NULL);

		assert_true(v == values[i]);
		if (values[i] == trunc(values[i]) && fabs(values[i]) < 1e18)
			assert_null(memchr(line, 'e', (size_t)(strchr(line, '\n') - line)));
		line = strchr(line, '\n') + 1;
	}
	resp_free(&r);
	pfs_metrics_stop(m);
	fx_fini(&f);
}

static void test_metrics_fill_errors(void **state)
{
	static const enum mode bad[] = { M_FAIL, M_BAD_NAME, M_BAD_LABEL };
	struct fx f;
	pfs_metrics *m;
	struct resp r;

	fx_init(&f, M_FAIL);
	m = start(&f);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		f.mode = bad[i];
		get(pfs_metrics_port(m), "GET", "/metrics", &r);
		assert_int_equal(r.status, 500);
		/* No partial exposition escapes with the error. */
		assert_null(strstr(r.body, "pfs_test_up"));
		resp_free(&r);
		/* The endpoint keeps serving. */
		f.mode = M_BASIC;
		get(pfs_metrics_port(m), "GET", "/metrics", &r);
		assert_int_equal(r.status, 200);
		resp_free(&r);
	}
	pfs_metrics_stop(m);
	fx_fini(&f);
}

static void test_metrics_size_bound(void **state)
{
	struct fx f;
	pfs_metrics *m;
	struct resp r;

	fx_init(&f, M_HUGE);
	m = start(&f);
	get(pfs_metrics_port(m), "GET", "/metrics", &r);
	assert_int_equal(r.status, 500);
	assert_int_equal(f.huge_err, -EFBIG);
	assert_true(r.len < 4096);
	resp_free(&r);
	/* Just under the bound is served whole. */
	f.mode = M_BIG;
	get(pfs_metrics_port(m), "GET", "/metrics", &r);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.body_len, 16384 * 503);
	resp_free(&r);
	pfs_metrics_stop(m);
	fx_fini(&f);
}

static void test_metrics_http_errors(void **state)
{
	struct fx f;
	pfs_metrics *m;
	struct resp r;
	char allow[64];
	uint16_t port;
	char *big;
	size_t n;

	fx_init(&f, M_BASIC);
	m = start(&f);
	port = pfs_metrics_port(m);

	get(port, "GET", "/other", &r);
	assert_int_equal(r.status, 404);
	resp_free(&r);
	get(port, "GET", "/metrics/x", &r);
	assert_int_equal(r.status, 404);
	resp_free(&r);
	get(port, "HEAD", "/other", &r);
	assert_int_equal(r.status, 404);
	assert_int_equal(r.body_len, 0);
	resp_free(&r);

	request_str(port, "POST /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
			  "Content-Length: 3\r\n\r\nabc", &r);
	assert_int_equal(r.status, 405);
	assert_non_null(header(&r, "Allow", allow, sizeof(allow)));
	assert_string_equal(allow, "GET, HEAD");
	resp_free(&r);
	get(port, "DELETE", "/metrics", &r);
	assert_int_equal(r.status, 405);
	resp_free(&r);

	/* Garbage request line: 400 (or a plain close), never a 200. */
	request_str(port, "\x01\x02 garbage \xff\r\n\r\n", &r);
	assert_true(r.status == 400 || r.len == 0);
	resp_free(&r);
	request_str(port, "GET\r\n\r\n", &r);
	assert_true(r.status == 400 || r.len == 0);
	resp_free(&r);

	/* A 100 KB header: refused (libevent 2.1 says 400; 413 would do), and
	 * the fill is not called. */
	n = 100 * 1024;
	big = malloc(n + 128);
	assert_non_null(big);
	strcpy(big, "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: ");
	memset(big + strlen(big), 'a', n);
	big[39 + n] = '\0';
	strcat(big, "\r\nConnection: close\r\n\r\n");
	f.calls = 0;
	{
		int fd = dial(port);

		/* The server may answer and close before taking it all. */
		(void)pfs_net_write_all(fd, big, strlen(big));
		read_to_eof(fd, &r);
		close(fd);
	}
	assert_true(r.status == 400 || r.status == 413);
	assert_int_equal(f.calls, 0);
	resp_free(&r);
	free(big);

	/* Still serving. */
	get(port, "GET", "/metrics", &r);
	assert_int_equal(r.status, 200);
	resp_free(&r);
	pfs_metrics_stop(m);
	fx_fini(&f);
}

/* Two scrapes on one HTTP/1.1 connection, as Prometheus does. */
static void test_metrics_keepalive(void **state)
{
	static const char req[] = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
	struct fx f;
	pfs_metrics *m;
	char buf[4096];
	size_t got;
	int fd;

	fx_init(&f, M_BASIC);
	m = start(&f);
	fd = dial(pfs_metrics_port(m));
	for (int round = 0; round < 2; round++) {
		const char *body;
		char *cl;

		send_all(fd, req, sizeof(req) - 1);
		got = 0;
		/* Read until the headers and Content-Length bytes of body are in. */
		for (;;) {
			ssize_t n = recv(fd, buf + got, sizeof(buf) - 1 - got, 0);

			assert_true(n > 0);
			got += (size_t)n;
			buf[got] = '\0';
			body = strstr(buf, "\r\n\r\n");
			cl = strcasestr(buf, "Content-Length: ");
			if (body && cl && got - (size_t)(body + 4 - buf) >= (size_t)atoi(cl + 16))
				break;
		}
		assert_int_equal(strncmp(buf, "HTTP/1.1 200", 12), 0);
		assert_string_equal(body + 4, basic_text);
	}
	close(fd);
	assert_int_equal(f.calls, 2);
	pfs_metrics_stop(m);
	fx_fini(&f);
}

/* A client that connects and sends nothing, and one stuck mid-request,
 * do not hold up a scrape. */
static void test_metrics_idle_client(void **state)
{
	struct fx f;
	pfs_metrics *m;
	struct resp r;
	struct timespec t0, t1;
	int idle, half;

	fx_init(&f, M_BASIC);
	m = start(&f);
	idle = dial(pfs_metrics_port(m));
	half = dial(pfs_metrics_port(m));
	send_all(half, "GET /metr", 9);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	get(pfs_metrics_port(m), "GET", "/metrics", &r);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body, basic_text);
	assert_true(t1.tv_sec - t0.tv_sec < 2);
	resp_free(&r);
	assert_int_equal(f.calls, 1);
	/* Stop with both still open: they are closed, not leaked. */
	pfs_metrics_stop(m);
	{
		char c;
		assert_int_equal(recv(idle, &c, 1, 0), 0);
		assert_int_equal(recv(half, &c, 1, 0), 0);
	}
	close(idle);
	close(half);
	fx_fini(&f);
}

/* Clients that send a scrape and hang up before the 8 MiB reply is written
 * (one at once, two after the reply has begun, which resets the connection
 * with data unread): the server drops them and goes on serving. */
static void test_metrics_client_hangs_up(void **state)
{
	static const char req[] = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
	struct fx f;
	pfs_metrics *m;
	struct resp r;

	fx_init(&f, M_BIG);
	m = start(&f);
	for (int i = 0; i < 3; i++) {
		int fd = dial(pfs_metrics_port(m));

		send_all(fd, req, sizeof(req) - 1);
		if (i > 0) {
			char c;

			assert_int_equal(recv(fd, &c, 1, 0), 1);
		}
		close(fd);
	}
	f.mode = M_BASIC;
	get(pfs_metrics_port(m), "GET", "/metrics", &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body, basic_text);
	resp_free(&r);
	pfs_metrics_stop(m);
	fx_fini(&f);
}

/* The signal mask named field (SigBlk, ...) in /proc/self/task/tid/status, as a number. */
static unsigned long long task_sigmask(pid_t tid, const char *field)
{
	char path[64], line[256];
	unsigned long long mask = 0;
	size_t fl = strlen(field);
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)tid);
	fp = fopen(path, "r");
	assert_non_null(fp);
	while (fgets(line, sizeof(line), fp))
		if (strncmp(line, field, fl) == 0 && line[fl] == ':')
			mask = strtoull(line + fl + 1, NULL, 16);
	fclose(fp);
	return mask;
}

/* The tids of this process's threads into out (at most n). */
static int task_ids(pid_t *out, int n)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int k = 0;

	assert_non_null(d);
	while ((e = readdir(d)) && k < n)
		if (e->d_name[0] != '.')
			out[k++] = (pid_t)atoi(e->d_name);
	closedir(d);
	return k;
}

/* The loop thread blocks every signal: SIGTERM reaches the daemon's own
 * threads and a write to a reset connection cannot raise SIGPIPE there. */
static void test_metrics_thread_blocks_signals(void **state)
{
	struct fx f;
	pfs_metrics *m;
	pid_t before[64], after[64], loop = 0;
	int nb, na;

	fx_init(&f, M_BASIC);
	nb = task_ids(before, 64);
	m = start(&f);
	na = task_ids(after, 64);
	assert_int_equal(na, nb + 1);
	for (int i = 0; i < na; i++) {
		int seen = 0;

		for (int j = 0; j < nb; j++)
			seen |= after[i] == before[j];
		if (!seen)
			loop = after[i];
	}
	assert_int_not_equal(loop, 0);
	{
		unsigned long long blk = task_sigmask(loop, "SigBlk");

		assert_true(blk & (1ull << (SIGPIPE - 1)));
		assert_true(blk & (1ull << (SIGTERM - 1)));
		assert_true(blk & (1ull << (SIGINT - 1)));
		assert_true(blk & (1ull << (SIGHUP - 1)));
	}
	/* ... and the caller's mask is as it was. */
	assert_false(task_sigmask(gettid(), "SigBlk") &
		     (1ull << (SIGTERM - 1)));
	pfs_metrics_stop(m);
	fx_fini(&f);
}

struct inflight {
	uint16_t port;
	pfs_metrics *m;
	struct resp r;
};

static void *client_main(void *arg)
{
	struct inflight *x = arg;

	get(x->port, "GET", "/metrics", &x->r);
	return NULL;
}

static void *stopper_main(void *arg)
{
	struct inflight *x = arg;

	pfs_metrics_stop(x->m);
	return NULL;
}

/* Stop while the fill callback of a scrape is running: stop waits for the
 * callback, then returns; the client gets the reply or a clean close. */
static void test_metrics_stop_in_flight(void **state)
{
	struct fx f;
	struct inflight x = { 0 };
	pthread_t client, stopper;
	struct timespec ts = { 0, 100 * 1000 * 1000 };

	fx_init(&f, M_BLOCK);
	x.m = start(&f);
	x.port = pfs_metrics_port(x.m);
	assert_int_equal(pthread_create(&client, NULL, client_main, &x), 0);
	pthread_mutex_lock(&f.lock);
	while (!f.entered)
		pthread_cond_wait(&f.cond, &f.lock);
	pthread_mutex_unlock(&f.lock);
	assert_int_equal(pthread_create(&stopper, NULL, stopper_main, &x), 0);
	nanosleep(&ts, NULL); /* stop has asked the loop to break */
	pthread_mutex_lock(&f.lock);
	f.release = 1;
	pthread_cond_broadcast(&f.cond);
	pthread_mutex_unlock(&f.lock);
	assert_int_equal(pthread_join(stopper, NULL), 0);
	assert_int_equal(pthread_join(client, NULL), 0);
	assert_true(x.r.len == 0 || (x.r.status == 200 && strcmp(x.r.body, "pfs_test_up 1\n") == 0));
	resp_free(&x.r);
	fx_fini(&f);
}

static void test_metrics_start_stop_many(void **state)
{
	struct fx f;
	struct resp r;
	int fds0;

	fx_init(&f, M_BASIC);
	pfs_metrics_stop(NULL);
	/* Warm up whatever libevent and libc set up once. */
	pfs_metrics_stop(start(&f));
	fds0 = count_fds();
	for (int i = 0; i < 50; i++) {
		pfs_metrics *m = start(&f);
		int idle = dial(pfs_metrics_port(m));

		if (i % 5 == 0) {
			get(pfs_metrics_port(m), "GET", "/metrics", &r);
			assert_int_equal(r.status, 200);
			resp_free(&r);
		}
		pfs_metrics_stop(m);
		close(idle);
	}
	assert_int_equal(count_fds(), fds0);
	fx_fini(&f);
}

static void test_metrics_start_errors(void **state)
{
	struct fx f;
	pfs_metrics *m, *m2 = (pfs_metrics *)&f;
	char err[256] = "";

	fx_init(&f, M_BASIC);
	m = start(&f);
	assert_int_equal(pfs_metrics_start("127.0.0.1", pfs_metrics_port(m), fill, &f, &m2, err,
					   sizeof(err)),
			 -EADDRINUSE);
	assert_null(m2);
	assert_non_null(strstr(err, "127.0.0.1"));
	pfs_metrics_stop(m);
	err[0] = '\0';
	assert_true(pfs_metrics_start("no.such.host.invalid", 0, fill, &f, &m2, err,
				      sizeof(err)) < 0);
	assert_null(m2);
	assert_true(err[0] != '\0');
	assert_int_equal(pfs_metrics_start("127.0.0.1", 0, NULL, &f, &m2, err, sizeof(err)),
			 -EINVAL);
	fx_fini(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_metrics_scrape),
		cmocka_unit_test(test_metrics_values),
		cmocka_unit_test(test_metrics_fill_errors),
		cmocka_unit_test(test_metrics_size_bound),
		cmocka_unit_test(test_metrics_http_errors),
		cmocka_unit_test(test_metrics_keepalive),
		cmocka_unit_test(test_metrics_idle_client),
		cmocka_unit_test(test_metrics_client_hangs_up),
		cmocka_unit_test(test_metrics_thread_blocks_signals),
		cmocka_unit_test(test_metrics_stop_in_flight),
		cmocka_unit_test(test_metrics_start_stop_many),
		cmocka_unit_test(test_metrics_start_errors),
	};

	pfs_log_init("test_metrics", PFS_LOG_ERR);
	/* A hung server fails the run instead of stalling it. */
	alarm(120);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
