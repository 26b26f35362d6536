/* test_server.c — the event-driven frame server (common/server.c) over real
 * sockets on 127.0.0.1: round trips, concurrency, late replies, the
 * connection limit, slowloris and idle timeouts, backpressure against a
 * peer that pipelines and never reads, payload allocation as bytes arrive,
 * stop while handlers hold references, and the authenticated handshake. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/auth.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/net.h"
#include "common/server.h"

#define OP_BIG 2   /* reply: 1 MiB of bulk */
#define OP_LATE 3  /* reply 50 ms later from another thread */
#define OP_HOLD 4  /* keep a reference and never reply */
#define OP_SLOW 5  /* sleep 300 ms in the handler, then reply */
#define BIG (1u << 20)

static uint8_t big[BIG];
static atomic_int big_calls;

struct held {
	pthread_mutex_t lock;
	pfs_sconn *c[64];
	pfs_hdr h[64];
	int n;
	int slow_done;
};

static struct held held = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void *late_main(void *arg)
{
	struct { pfs_sconn *c; pfs_hdr h; } *l = arg;

	usleep(50000);
	pfs_sconn_reply(l->c, &l->h, 0, "late", 4, NULL, 0);
	pfs_sconn_put(l->c);
	free(l);
	return NULL;
}

static void handler(void *ctx, pfs_sconn *c, const pfs_hdr *h, uint8_t *payload)
{
	switch (h->opcode) {
	case PFS_OP_PING:
		pfs_sconn_reply(c, h, 0, payload, h->payload_len, NULL, 0);
		break;
	case OP_BIG:
		atomic_fetch_add(&big_calls, 1);
		pfs_sconn_reply(c, h, 0, NULL, 0, big, BIG);
		break;
	case OP_LATE: {
		struct { pfs_sconn *c; pfs_hdr h; } *l = malloc(sizeof(*l));
		pthread_t t;

		l->c = c;
		l->h = *h;
		pfs_sconn_get(c);
		assert_int_equal(pthread_create(&t, NULL, late_main, l), 0);
		pthread_detach(t);
		break;
	}
	case OP_HOLD:
		pfs_sconn_get(c);
		pthread_mutex_lock(&held.lock);
		held.c[held.n] = c;
		held.h[held.n++] = *h;
		pthread_mutex_unlock(&held.lock);
		break;
	case OP_SLOW:
		usleep(300000);
		pfs_sconn_reply(c, h, 0, NULL, 0, NULL, 0);
		pthread_mutex_lock(&held.lock);
		held.slow_done = 1;
		pthread_mutex_unlock(&held.lock);
		break;
	default:
		pfs_sconn_reply(c, h, -EOPNOTSUPP, NULL, 0, NULL, 0);
		break;
	}
	free(payload);
}

static pfs_server *start(pfs_server_opts *o)
{
	pfs_server *s;

	o->host = "127.0.0.1";
	o->name = "test";
	assert_int_equal(pfs_server_start(o, handler, NULL, &s), 0);
	return s;
}

static int dial(pfs_server *s)
{
	int fd;

	assert_int_equal(pfs_net_connect("127.0.0.1", pfs_server_port(s), 5000, &fd), 0);
	assert_int_equal(pfs_net_set_timeout(fd, 10000), 0);
	return fd;
}

/* One request, one reply; the reply's payload (if any) is checked against
 * want.  Returns the reply status. */
static int call(int fd, uint16_t op, uint64_t id, const void *p, size_t n, const void *want,
		size_t wantn)
{
	pfs_hdr h, r;
	uint8_t *dyn, *data;
	int rc;

	pfs_hdr_init(&h, op, id, 1, NULL);
	assert_int_equal(pfs_net_send_frame(fd, &h, p, n, NULL, 0), 0);
	rc = pfs_net_recv_reply(fd, &r, PFS_MAX_PAYLOAD, NULL, 0, &dyn, &data);
	if (rc)
		return rc;
	assert_true(r.flags & PFS_F_REPLY);
	assert_int_equal(r.req_id, id);
	if (!r.status && want) {
		assert_int_equal(r.payload_len, wantn);
		assert_memory_equal(data, want, wantn);
	}
	free(dyn);
	return r.status;
}

/* Has the server closed fd?  Reads (and drops) whatever comes first. */
static int closed_within(int fd, int ms)
{
	uint64_t end = pfs_clock_ms() + (uint64_t)ms;
	char b[65536];

	pfs_net_set_timeout(fd, 100);
	while (pfs_clock_ms() < end) {
		ssize_t r = recv(fd, b, sizeof(b), 0);
		if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
			return 1;
	}
	return 0;
}

static void wait_stat(pfs_server *s, size_t off, uint64_t want, int ms)
{
	uint64_t end = pfs_clock_ms() + (uint64_t)ms;
	pfs_server_stats st;

	for (;;) {
		pfs_server_get_stats(s, &st);
		if (*(uint64_t *)((char *)&st + off) >= want)
			return;
		assert_true(pfs_clock_ms() < end);
		usleep(10000);
	}
}

static void test_server_echo(void **state)
{
	pfs_server_opts o = { 0 };
	pfs_server *s = start(&o);
	int fd = dial(s);
	pfs_server_stats st;

	for (int i = 0; i < 3; i++)
		assert_int_equal(call(fd, PFS_OP_PING, 10 + i, "hello", 5, "hello", 5), 0);
	assert_int_equal(call(fd, PFS_OP_PING, 20, NULL, 0, "", 0), 0);
	/* A 1 MiB request and a 1 MiB reply. */
	assert_int_equal(call(fd, PFS_OP_PING, 21, big, BIG, big, BIG), 0);
	assert_int_equal(call(fd, OP_BIG, 22, NULL, 0, big, BIG), 0);
	assert_int_equal(call(fd, 77, 23, NULL, 0, NULL, 0), -EOPNOTSUPP);
	pfs_server_get_stats(s, &st);
	assert_int_equal(st.conns, 1);
	assert_int_equal(st.accepted, 1);
	assert_int_equal(st.queued_bytes, 0);
	assert_int_equal(st.rx_alloc_bytes, 0);
	close(fd);
	pfs_server_stop(s);
}

struct many { pfs_server *s; int ok; };

static void *many_main(void *arg)
{
	struct many *m = arg;
	int fd = dial(m->s);
	char buf[64];

	for (int i = 0; i < 50; i++) {
		int n = snprintf(buf, sizeof(buf), "req %d %p", i, (void *)m);
		if (call(fd, PFS_OP_PING, (uint64_t)i, buf, (size_t)n, buf, (size_t)n))
			return NULL;
	}
	close(fd);
	m->ok = 1;
	return NULL;
}

static void test_server_many_conns(void **state)
{
	pfs_server_opts o = { .workers = 4 };
	pfs_server *s = start(&o);
	enum { N = 64 };
	pthread_t t[N];
	struct many m[N];

	for (int i = 0; i < N; i++) {
		m[i] = (struct many){ s, 0 };
		assert_int_equal(pthread_create(&t[i], NULL, many_main, &m[i]), 0);
	}
	for (int i = 0; i < N; i++) {
		pthread_join(t[i], NULL);
		assert_true(m[i].ok);
	}
	pfs_server_stop(s);
}

static void test_server_late_reply(void **state)
{
	pfs_server_opts o = { 0 };
	pfs_server *s = start(&o);
	int fd = dial(s);

	for (int i = 0; i < 5; i++)
		assert_int_equal(call(fd, OP_LATE, 30 + i, NULL, 0, "late", 4), 0);
	close(fd);
	usleep(100000);
	pfs_server_stop(s);
}

static void test_server_inline(void **state)
{
	pfs_server_opts o = { .inline_handler = 1 };
	pfs_server *s = start(&o);
	int fd = dial(s);

	assert_int_equal(call(fd, PFS_OP_PING, 1, "x", 1, "x", 1), 0);
	assert_int_equal(call(fd, OP_BIG, 2, NULL, 0, big, BIG), 0);
	close(fd);
	pfs_server_stop(s);
}

static void test_server_max_conns(void **state)
{
	pfs_server_opts o = { .max_conns = 4 };
	pfs_server *s = start(&o);
	int fd[4], extra;
	pfs_hdr r;
	uint8_t *dyn, *data;
	pfs_server_stats st;

	for (int i = 0; i < 4; i++) {
		fd[i] = dial(s);
		assert_int_equal(call(fd[i], PFS_OP_PING, 1, "a", 1, "a", 1), 0);
	}
	/* The fifth is told -EBUSY at once and closed. */
	extra = dial(s);
	assert_int_equal(pfs_net_recv_reply(extra, &r, PFS_MAX_PAYLOAD, NULL, 0, &dyn, &data), 0);
	free(dyn);
	assert_true(r.flags & PFS_F_REPLY);
	assert_int_equal(r.status, -EBUSY);
	assert_true(closed_within(extra, 2000));
	close(extra);
	pfs_server_get_stats(s, &st);
	assert_int_equal(st.refused_full, 1);
	assert_int_equal(st.conns, 4);
	for (int i = 0; i < 4; i++)
		assert_int_equal(call(fd[i], PFS_OP_PING, 2, "b", 1, "b", 1), 0);
	/* A slot freed is a slot again. */
	close(fd[0]);
	wait_stat(s, offsetof(pfs_server_stats, accepted), 4, 1000);
	for (int tries = 0;; tries++) {
		pfs_server_get_stats(s, &st);
		if (st.conns == 3)
			break;
		assert_true(tries < 200);
		usleep(10000);
	}
	fd[0] = dial(s);
	assert_int_equal(call(fd[0], PFS_OP_PING, 3, "c", 1, "c", 1), 0);
	for (int i = 0; i < 4; i++)
		close(fd[i]);
	pfs_server_stop(s);
}

static void test_server_defaults(void **state)
{
	pfs_server_opts d = { .max_conns = 2 }, zero = { 0 }, o = { 0 };
	pfs_server *s;
	int fd[3];
	pfs_server_stats st;

	pfs_server_set_defaults(&d);
	s = start(&o);
	pfs_server_set_defaults(&zero);
	for (int i = 0; i < 3; i++)
		fd[i] = dial(s);
	assert_int_equal(call(fd[0], PFS_OP_PING, 1, "a", 1, "a", 1), 0);
	assert_int_equal(call(fd[1], PFS_OP_PING, 1, "a", 1, "a", 1), 0);
	assert_true(closed_within(fd[2], 2000));
	pfs_server_get_stats(s, &st);
	assert_int_equal(st.refused_full, 1);
	for (int i = 0; i < 3; i++)
		close(fd[i]);
	pfs_server_stop(s);
}

static void test_server_slowloris(void **state)
{
	pfs_server_opts o = { .frame_ms = 500 };
	pfs_server *s = start(&o);
	int slow = dial(s), good = dial(s), closed = 0;
	uint8_t hb[PFS_HDR_LEN];
	pfs_hdr h;
	pfs_server_stats st;

	pfs_hdr_init(&h, PFS_OP_PING, 1, 1, NULL);
	h.payload_len = 4;
	pfs_hdr_encode(&h, hb);
	/* One byte every 100 ms: the header would take 9.6 s. */
	for (size_t i = 0; i < sizeof(hb) && !closed; i++) {
		if (send(slow, hb + i, 1, MSG_NOSIGNAL) != 1)
			closed = 1;
		/* The other client is served meanwhile. */
		if (i == 3)
			assert_int_equal(call(good, PFS_OP_PING, 2, "ok", 2, "ok", 2), 0);
		if (i > 5 && closed_within(slow, 100))
			closed = 1;
	}
	assert_true(closed);
	pfs_server_get_stats(s, &st);
	assert_true(st.timed_out >= 1);
	assert_int_equal(call(good, PFS_OP_PING, 3, "ok", 2, "ok", 2), 0);
	close(slow);
	close(good);
	pfs_server_stop(s);
}

struct pipeliner { int fd; int sent; };

static void *pipeline_main(void *arg)
{
	struct pipeliner *p = arg;

	for (int i = 0; i < 1000; i++) {
		pfs_hdr h;
		pfs_hdr_init(&h, OP_BIG, (uint64_t)i, 1, NULL);
		if (pfs_net_send_frame(p->fd, &h, NULL, 0, NULL, 0))
			break;
		p->sent++;
	}
	return NULL;
}

static void test_server_pipeline_no_read(void **state)
{
	pfs_server_opts o = { .max_queued_bytes = 4u << 20, .send_timeout_ms = 1500 };
	pfs_server *s = start(&o);
	int bad, good, rcv = 4096;
	struct pipeliner p = { 0 };
	pthread_t t;
	pfs_server_stats st;
	uint64_t t0;

	/* A small receive window, so the kernel holds little for it. */
	bad = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(bad >= 0);
	setsockopt(bad, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
	{
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(pfs_server_port(s)) };
		a.sin_addr.s_addr = htonl(0x7f000001);
		assert_int_equal(connect(bad, (struct sockaddr *)&a, sizeof(a)), 0);
	}
	pfs_net_set_timeout(bad, 5000);
	p.fd = bad;
	atomic_store(&big_calls, 0);
	assert_int_equal(pthread_create(&t, NULL, pipeline_main, &p), 0);
	/* The server stops reading it ... */
	wait_stat(s, offsetof(pfs_server_stats, paused), 1, 5000);
	/* ... while another client is answered, big replies included. */
	good = dial(s);
	t0 = pfs_clock_ms();
	for (int i = 0; i < 10; i++) {
		assert_int_equal(call(good, PFS_OP_PING, 100 + i, "g", 1, "g", 1), 0);
		assert_int_equal(call(good, OP_BIG, 200 + i, NULL, 0, big, BIG), 0);
	}
	assert_true(pfs_clock_ms() - t0 < 1400); /* sanity: not behind the hostile peer */
	pfs_server_get_stats(s, &st);
	print_message("pipeliner: %d requests sent, %d served, peak queue %llu bytes\n",
		      p.sent, atomic_load(&big_calls) - 10, (unsigned long long)st.queued_peak);
	assert_true(st.queued_peak <= o.max_queued_bytes + BIG + PFS_HDR_LEN);
	/* Served: what fits in the queue and the kernel's buffers, not 1000. */
	assert_true(atomic_load(&big_calls) - 10 < 50);
	/* After send_timeout_ms without progress it is closed. */
	wait_stat(s, offsetof(pfs_server_stats, timed_out), 1, 6000);
	pthread_join(t, NULL);
	for (int tries = 0;; tries++) {
		pfs_server_get_stats(s, &st);
		if (st.conns == 1 && st.queued_bytes == 0 && st.paused == 0)
			break;
		assert_true(tries < 300);
		usleep(10000);
	}
	assert_int_equal(call(good, PFS_OP_PING, 300, "g", 1, "g", 1), 0);
	close(bad);
	close(good);
	pfs_server_stop(s);
}

static void test_server_payload_as_it_arrives(void **state)
{
	pfs_server_opts o = { 0 };
	pfs_server *s = start(&o);
	int fd = dial(s);
	uint8_t hb[PFS_HDR_LEN];
	pfs_hdr h;
	pfs_server_stats st;

	pfs_hdr_init(&h, PFS_OP_PING, 1, 1, NULL);
	h.payload_len = PFS_MAX_PAYLOAD;
	pfs_hdr_encode(&h, hb);
	assert_int_equal(pfs_net_write_all(fd, hb, sizeof(hb)), 0);
	assert_int_equal(pfs_net_write_all(fd, "0123456789", 10), 0);
	usleep(200000);
	pfs_server_get_stats(s, &st);
	/* Some buffer for what arrived, nowhere near the promised 1 MiB. */
	assert_true(st.rx_alloc_bytes > 0);
	assert_true(st.rx_alloc_bytes <= 64u << 10);
	close(fd);
	for (int tries = 0;; tries++) {
		pfs_server_get_stats(s, &st);
		if (st.rx_alloc_bytes == 0 && st.conns == 0)
			break;
		assert_true(tries < 200);
		usleep(10000);
	}
	pfs_server_stop(s);
}

static void test_server_idle(void **state)
{
	pfs_server_opts o = { .idle_ms = 300 };
	pfs_server *s = start(&o);
	int idle = dial(s), busy = dial(s);
	uint64_t t0 = pfs_clock_ms();

	/* A request in flight for longer than idle_ms is not idleness. */
	assert_int_equal(call(busy, OP_SLOW, 1, NULL, 0, NULL, 0), 0);
	assert_true(pfs_clock_ms() - t0 >= 300);
	assert_true(closed_within(idle, 3000));
	assert_true(pfs_clock_ms() - t0 >= 300);
	close(idle);
	close(busy);
	pfs_server_stop(s);
}

static void test_server_bad_frame(void **state)
{
	pfs_server_opts o = { 0 };
	pfs_server *s = start(&o);
	int bad = dial(s), good = dial(s);
	uint8_t junk[PFS_HDR_LEN];
	pfs_server_stats st;

	memset(junk, 0xa5, sizeof(junk));
	assert_int_equal(pfs_net_write_all(bad, junk, sizeof(junk)), 0);
	assert_true(closed_within(bad, 2000));
	pfs_server_get_stats(s, &st);
	assert_int_equal(st.bad_frames, 1);
	assert_int_equal(call(good, PFS_OP_PING, 1, "ok", 2, "ok", 2), 0);
	close(bad);
	close(good);
	pfs_server_stop(s);
}

static void test_server_stop_with_refs(void **state)
{
	pfs_server_opts o = { .workers = 2 };
	pfs_server *s = start(&o);
	int fd = dial(s), fd2 = dial(s);
	pfs_hdr h;
	int n;

	held.n = 0;
	held.slow_done = 0;
	for (int i = 0; i < 3; i++) {
		pfs_hdr_init(&h, OP_HOLD, (uint64_t)i, 1, NULL);
		assert_int_equal(pfs_net_send_frame(fd, &h, NULL, 0, NULL, 0), 0);
	}
	pfs_hdr_init(&h, OP_SLOW, 9, 1, NULL);
	assert_int_equal(pfs_net_send_frame(fd2, &h, NULL, 0, NULL, 0), 0);
	for (int tries = 0;; tries++) {
		pthread_mutex_lock(&held.lock);
		n = held.n;
		pthread_mutex_unlock(&held.lock);
		if (n == 3)
			break;
		assert_true(tries < 500);
		usleep(10000);
	}
	usleep(50000); /* OP_SLOW is in its handler */
	pfs_server_stop(s);
	/* Running handlers finished before stop returned ... */
	assert_int_equal(held.slow_done, 1);
	/* ... and connections still referenced are inert shells. */
	for (int i = 0; i < n; i++) {
		assert_int_equal(pfs_sconn_reply(held.c[i], &held.h[i], 0, "x", 1, NULL, 0), -EPIPE);
		assert_non_null(pfs_sconn_peer(held.c[i]));
		pfs_sconn_put(held.c[i]);
	}
	assert_true(closed_within(fd, 1000));
	close(fd);
	close(fd2);
}

/* ---- authentication ---- */

static void keys(pfs_auth_key *srv, pfs_auth_key *cli, unsigned role)
{
	memset(srv, 0, sizeof(*srv));
	srv->role = PFS_ROLE_MDS;
	srv->integrity = PFS_INTEGRITY_FULL;
	for (int i = 0; i < PFS_AUTH_KEY_LEN; i++)
		srv->key[i] = (uint8_t)(i * 7 + 1);
	memset(cli, 0, sizeof(*cli));
	cli->role = role;
	assert_int_equal(pfs_auth_role_key(srv, role, cli->key), 0);
}

static int call_sec(int fd, pfs_auth_sess *ss, uint16_t op, uint64_t id, const void *p,
		    size_t n)
{
	pfs_hdr h, r;
	uint8_t *dyn, *data;
	int rc;

	pfs_hdr_init(&h, op, id, 1, NULL);
	assert_int_equal(pfs_net_send_frame_sec(fd, ss, &h, p, n, NULL, 0), 0);
	rc = pfs_net_recv_reply_sec(fd, ss, &r, PFS_MAX_PAYLOAD, NULL, 0, &dyn, &data);
	if (rc)
		return rc;
	assert_int_equal(r.req_id, id);
	if (!r.status && op == PFS_OP_PING) {
		assert_int_equal(r.payload_len, n);
		assert_memory_equal(data, p, n);
	}
	free(dyn);
	return r.status;
}

static pfs_auth_key srv_key;

static void role_handler(void *ctx, pfs_sconn *c, const pfs_hdr *h, uint8_t *payload)
{
	uint32_t role = pfs_sconn_role(c);

	if (h->opcode == OP_HOLD) /* tell the role */
		pfs_sconn_reply(c, h, 0, &role, sizeof(role), NULL, 0);
	else
		handler(ctx, c, h, payload);
	if (h->opcode == OP_HOLD)
		free(payload);
}

static void test_server_auth(void **state)
{
	pfs_auth_key cli;
	pfs_server_opts o = { .host = "127.0.0.1", .name = "auth", .auth = &srv_key,
			      .handshake_ms = 400 };
	pfs_server *s;
	pfs_auth_sess ss;
	pfs_server_stats st;
	pfs_hdr h, r;
	uint8_t *dyn, *data;
	uint32_t role;
	int fd;

	assert_int_equal(pfs_auth_init(), 0);
	keys(&srv_key, &cli, PFS_ROLE_CLIENT);
	assert_int_equal(pfs_server_start(&o, role_handler, NULL, &s), 0);

	/* A good client: handshake, sealed frames both ways, its role. */
	fd = dial(s);
	assert_int_equal(pfs_auth_client(fd, &cli, 2000, &ss), 0);
	assert_int_equal(call_sec(fd, &ss, PFS_OP_PING, 1, "hi", 2), 0);
	assert_int_equal(call_sec(fd, &ss, PFS_OP_PING, 2, big, BIG), 0);
	pfs_hdr_init(&h, OP_HOLD, 3, 1, NULL);
	assert_int_equal(pfs_net_send_frame_sec(fd, &ss, &h, NULL, 0, NULL, 0), 0);
	assert_int_equal(pfs_net_recv_reply_sec(fd, &ss, &r, 64, NULL, 0, &dyn, &data), 0);
	memcpy(&role, data, sizeof(role));
	free(dyn);
	assert_int_equal(role, PFS_ROLE_CLIENT);
	/* A frame with a wrong tag closes the connection. */
	pfs_hdr_init(&h, PFS_OP_PING, 4, 1, NULL);
	ss.seq_send += 5; /* as a replayed/reordered frame would be */
	assert_int_equal(pfs_net_send_frame_sec(fd, &ss, &h, "x", 1, NULL, 0), 0);
	assert_true(closed_within(fd, 2000));
	close(fd);
	pfs_server_get_stats(s, &st);
	assert_int_equal(st.mac_failed, 1);

	/* A frame instead of a handshake: never dispatched, closed. */
	fd = dial(s);
	pfs_hdr_init(&h, PFS_OP_PING, 5, 1, NULL);
	assert_int_equal(pfs_net_send_frame(fd, &h, "y", 1, NULL, 0), 0);
	assert_true(closed_within(fd, 2000));
	close(fd);
	/* Silence: closed after handshake_ms. */
	fd = dial(s);
	assert_true(closed_within(fd, 3000));
	close(fd);
	/* A key of the wrong cluster. */
	cli.key[0] ^= 1;
	fd = dial(s);
	assert_int_not_equal(pfs_auth_client(fd, &cli, 2000, &ss), 0);
	close(fd);
	pfs_server_get_stats(s, &st);
	assert_true(st.auth_failed >= 1);
	assert_true(st.timed_out >= 1);
	pfs_server_stop(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_server_echo),
		cmocka_unit_test(test_server_many_conns),
		cmocka_unit_test(test_server_late_reply),
		cmocka_unit_test(test_server_inline),
		cmocka_unit_test(test_server_max_conns),
		cmocka_unit_test(test_server_defaults),
		cmocka_unit_test(test_server_slowloris),
		cmocka_unit_test(test_server_pipeline_no_read),
		cmocka_unit_test(test_server_payload_as_it_arrives),
		cmocka_unit_test(test_server_idle),
		cmocka_unit_test(test_server_bad_frame),
		cmocka_unit_test(test_server_stop_with_refs),
		cmocka_unit_test(test_server_auth),
	};

	pfs_log_init("test_server", PFS_LOG_ERR);
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i * 31 + 7);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
