/* test_rpc.c — the threaded frame server and the client pool together on
 * loopback: echo round trips, concurrent callers, split start/finish, bulk
 * payloads, garbage/truncated/oversized frames (the server closes the bad
 * connection and keeps serving), a client riding out a server restart, and
 * tagged calls (uid, gid and credit out; the reply header's credit back,
 * also with an error status, and none after a transport error), and a pool
 * with a key against a small authenticating server built from the server
 * steps of common/auth.h (echo, bulk both ways, pipe bulk in both integrity
 * modes, a wrong key refused without retries, a tampered reply refused),
 * and resends: a server that executes a request and drops the connection
 * before replying gets it again with the same client and request id and
 * PFS_F_RESEND and answers from its reply cache (executed once); the same
 * for a reply that does not come within the timeout; PFS_RPC_NO_RESEND
 * gets the loss; a server that stays down ends in the recovery window, or
 * at once when the thread's interrupt check fires (-EINTR); and bulk sent
 * in pieces (pfs_rpc_start_iov): in order, the same frame and tag as their
 * concatenation, a changed byte of any piece refused; replies received
 * into a pipe (pfs_rpc_finish_pipe): the payload in the pipe byte for
 * byte, in memory when it exceeds the pipe's room, nothing for an error
 * status, a pipe without room is -ENOBUFS and the pool goes on. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/auth.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/net.h"
#include "common/rpc.h"
#include "common/server.h"

/* Echo: PING returns its payload; opcode 7 replies -ENOENT; others EOPNOTSUPP. */
static void echo(void *ctx, pfs_sconn *c, const pfs_hdr *h, uint8_t *payload)
{
	if (h->opcode == PFS_OP_PING)
		pfs_sconn_reply(c, h, 0, payload, h->payload_len, NULL, 0);
	else if (h->opcode == 7)
		pfs_sconn_reply(c, h, -ENOENT, NULL, 0, NULL, 0);
	else
		pfs_sconn_reply(c, h, -EOPNOTSUPP, NULL, 0, NULL, 0);
	free(payload);
}

static pfs_server *start(uint16_t port)
{
	pfs_server_opts o = { .host = "127.0.0.1", .port = port, .name = "test" };
	pfs_server *s = NULL;

	assert_int_equal(pfs_server_start(&o, echo, NULL, &s), 0);
	return s;
}

static pfs_rpc_pool *pool_for(pfs_server *s)
{
	pfs_rpc_opts o = { .max_conns = 4, .timeout_ms = 5000, .retry_ms = 3000, .client_id = 42 };
	pfs_rpc_pool *p = NULL;

	assert_int_equal(pfs_rpc_pool_create("127.0.0.1", pfs_server_port(s), &o, &p), 0);
	return p;
}

static void test_rpc_echo(void **state)
{
	pfs_server *s = start(0);
	pfs_rpc_pool *p = pool_for(s);
	pfs_rpc_reply r = { 0 };

	assert_int_equal(pfs_rpc_call(p, PFS_OP_PING, "job1", 0, "abc", 3, "defg", 4, &r), 0);
	assert_int_equal(r.len, 7);
	assert_memory_equal(r.data, "abcdefg", 7);
	assert_int_equal(r.hdr.client_id, 42);
	pfs_rpc_reply_free(&r);
	assert_int_equal(pfs_rpc_call(p, 7, "job1", 0, NULL, 0, NULL, 0, &r), -ENOENT);
	assert_int_equal(pfs_rpc_call(p, 999, "job1", 0, NULL, 0, NULL, 0, &r), -EOPNOTSUPP);
	pfs_rpc_reply_free(&r);
	pfs_rpc_pool_destroy(p);
	pfs_server_stop(s);
}

static void test_rpc_bulk_into_caller_buffer(void **state)
{
	pfs_server *s = start(0);
	pfs_rpc_pool *p = pool_for(s);
	size_t n = PFS_MAX_IO;
	uint8_t *big = malloc(n), *dst = malloc(n);
	pfs_rpc_reply r = { .buf = dst, .cap = n };

	for (size_t i = 0; i < n; i++)
		big[i] = (uint8_t)(i * 7);
	assert_int_equal(pfs_rpc_call(p, PFS_OP_PING, NULL, 0, NULL, 0, big, n, &r), 0);
	assert_ptr_equal(r.data, dst); /* no copy */
	assert_int_equal(r.len, n);
	assert_memory_equal(dst, big, n);
	pfs_rpc_reply_free(&r);
	/* Over the limit: refused before sending. */
	uint8_t *over = calloc(1, PFS_MAX_PAYLOAD + 1);
	assert_int_equal(pfs_rpc_call(p, PFS_OP_PING, NULL, 0, NULL, 0, over, PFS_MAX_PAYLOAD + 1,
				      &r), -EMSGSIZE);
	free(over);
	free(big);
	free(dst);
	pfs_rpc_pool_destroy(p);
	pfs_server_stop(s);
}

struct worker {
	pfs_rpc_pool *p;
	int id, ok;
};

static void *hammer(void *arg)
{
	struct worker *w = arg;

	for (int i = 0; i < 200; i++) {
		char msg[32];
		pfs_rpc_reply r = { 0 };
		int n = snprintf(msg, sizeof(msg), "w%d-%d", w->id, i);
		if (pfs_rpc_call(w->p, PFS_OP_PING, NULL, 0, msg, (size_t)n, NULL, 0, &r) == 0 &&
		    r.len == (size_t)n && memcmp(r.data, msg, (size_t)n) == 0)
			w->ok++;
		pfs_rpc_reply_free(&r);
	}
	return NULL;
}

static void test_rpc_concurrent(void **state)
{
	pfs_server *s = start(0);
	pfs_rpc_pool *p = pool_for(s);
	pthread_t t[8];
	struct worker w[8];

	for (int i = 0; i < 8; i++) {
		w[i] = (struct worker){ p, i, 0 };
		pthread_create(&t[i], NULL, hammer, &w[i]);
	}
	for (int i = 0; i < 8; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(w[i].ok, 200);
	}
	/* start/finish: three in flight at once on one pool */
	pfs_rpc_inflight *c[3];
	for (int i = 0; i < 3; i++)
		assert_int_equal(pfs_rpc_start(p, PFS_OP_PING, NULL, "x", 1, NULL, 0, &c[i]), 0);
	for (int i = 0; i < 3; i++) {
		pfs_rpc_reply r = { 0 };
		assert_int_equal(pfs_rpc_finish(c[i], &r), 0);
		assert_int_equal(r.len, 1);
		pfs_rpc_reply_free(&r);
	}
	pfs_rpc_pool_destroy(p);
	pfs_server_stop(s);
}

static void send_raw_and_close(uint16_t port, const void *b, size_t n)
{
	int fd;
	uint8_t junk[256];

	assert_int_equal(pfs_net_connect("127.0.0.1", port, 2000, &fd), 0);
	pfs_net_set_timeout(fd, 2000);
	pfs_net_write_all(fd, b, n);
	shutdown(fd, SHUT_WR);
	while (read(fd, junk, sizeof(junk)) > 0)
		; /* the server answers with an error or just closes */
	close(fd);
}

static void test_rpc_garbage(void **state)
{
	pfs_server *s = start(0);
	pfs_rpc_pool *p = pool_for(s);
	uint16_t port = pfs_server_port(s);
	uint8_t buf[4096];
	unsigned seed = 99;
	pfs_hdr h;
	pfs_rpc_reply r = { 0 };

	pfs_log_set_level(PFS_LOG_ERR); /* the server logs each bad frame */
	for (int i = 0; i < 50; i++) {
		for (size_t k = 0; k < sizeof(buf); k++)
			buf[k] = (uint8_t)rand_r(&seed);
		send_raw_and_close(port, buf, 1 + (size_t)rand_r(&seed) % sizeof(buf));
	}
	/* truncated header, truncated payload, oversized payload claim */
	pfs_hdr_init(&h, PFS_OP_PING, 1, 1, "j");
	h.payload_len = 100;
	pfs_hdr_encode(&h, buf);
	send_raw_and_close(port, buf, 10);
	send_raw_and_close(port, buf, PFS_HDR_LEN + 50);
	h.payload_len = 0xffffffffu;
	pfs_hdr_encode(&h, buf);
	send_raw_and_close(port, buf, PFS_HDR_LEN);

	/* An oversized frame gets an error reply before the close. */
	int fd;
	pfs_hdr e;
	uint8_t *dyn, *data;
	assert_int_equal(pfs_net_connect("127.0.0.1", port, 2000, &fd), 0);
	pfs_net_set_timeout(fd, 2000);
	assert_int_equal(pfs_net_write_all(fd, buf, PFS_HDR_LEN), 0);
	assert_int_equal(pfs_net_recv_frame(fd, &e, 0, NULL, 0, &dyn, &data), 0);
	assert_int_equal(e.status, -EMSGSIZE);
	free(dyn);
	close(fd);

	/* Still serving. */
	assert_int_equal(pfs_rpc_call(p, PFS_OP_PING, NULL, 0, "ok", 2, NULL, 0, &r), 0);
	assert_memory_equal(r.data, "ok", 2);
	pfs_rpc_reply_free(&r);
	pfs_log_set_level(PFS_LOG_NOTICE);
	pfs_rpc_pool_destroy(p);
	pfs_server_stop(s);
}

static void test_rpc_server_restart(void **state)
{
	pfs_server *s = start(0);
	uint16_t port = pfs_server_port(s);
	pfs_rpc_pool *p = pool_for(s);
	pfs_rpc_reply r = { 0 };

	assert_int_equal(pfs_rpc_call(p, PFS_OP_PING, NULL, 0, "a", 1, NULL, 0, &r), 0);
	pfs_server_stop(s); /* pooled connection is now dead */
	s = start(port);
	assert_int_equal(pfs_rpc_call(p, PFS_OP_PING, NULL, 0, "b", 1, NULL, 0, &r), 0);
	assert_memory_equal(r.data, "b", 1);
	pfs_rpc_reply_free(&r);
	pfs_server_stop(s);
	/* No server: a bounded wait, then a connection error. */
	assert_int_equal(pfs_rpc_call(p, PFS_OP_PING, NULL, 0, "c", 1, NULL, 0, &r), -ECONNREFUSED);
	pfs_rpc_pool_destroy(p);
}

static void test_rpc_bulk_from_pipe(void **state)
{
	pfs_server *s = start(0);
	pfs_rpc_pool *p = pool_for(s);
	size_t n = 200000;
	uint8_t *src = malloc(n);
	int pfd[2];
	pfs_rpc_inflight *c;
	pfs_rpc_reply r = { 0 };

	assert_int_equal(pipe(pfd), 0);
	assert_true(fcntl(pfd[0], F_SETPIPE_SZ, 1 << 20) >= (int)n);
	for (size_t i = 0; i < n; i++)
		src[i] = (uint8_t)(i * 13 + 1);
	assert_int_equal(write(pfd[1], src, n), (ssize_t)n);
	/* header payload "hd" then the piped bytes; the echo returns both */
	assert_int_equal(pfs_rpc_start_pipe(p, PFS_OP_PING, &(pfs_rpc_tag){ .job = "j" }, "hd", 2, pfd[0], n, &c), 0);
	assert_int_equal(pfs_rpc_finish(c, &r), 0);
	assert_int_equal(r.len, n + 2);
	assert_memory_equal(r.data, "hd", 2);
	assert_memory_equal(r.data + 2, src, n);
	pfs_rpc_reply_free(&r);
	/* A pipe holding less than promised: an error, not a hang. */
	assert_int_equal(write(pfd[1], src, 10), 10);
	close(pfd[1]);
	assert_true(pfs_rpc_start_pipe(p, PFS_OP_PING, &(pfs_rpc_tag){ .job = "j" }, NULL, 0, pfd[0], 100, &c) < 0);
	close(pfd[0]);
	free(src);
	pfs_rpc_pool_destroy(p);
	pfs_server_stop(s);
}

static int ioctl_nread(int fd, int *n)
{
	return ioctl(fd, FIONREAD, n);
}

/* The pipe holds exactly n bytes, those of want. */
static void pipe_holds(int r, const uint8_t *want, size_t n)
{
	uint8_t *got = malloc(n ? n : 1);
	size_t done = 0;
	int left = -1;

	while (done < n) {
		ssize_t k = read(r, got + done, n - done);

		assert_true(k > 0);
		done += (size_t)k;
	}
	assert_memory_equal(got, want, n);
	assert_int_equal(ioctl_nread(r, &left), 0);
	assert_int_equal(left, 0);
	free(got);
}

static void test_rpc_reply_into_pipe(void **state)
{
	pfs_server *s = start(0);
	pfs_rpc_pool *p = pool_for(s);
	size_t n = 300000;
	uint8_t *src = malloc(n);
	int pfd[2], piped = -1;
	pfs_rpc_inflight *c;
	pfs_rpc_reply r = { 0 };

	for (size_t i = 0; i < n; i++)
		src[i] = (uint8_t)(i * 31 + i / 4096);
	assert_int_equal(pipe(pfd), 0);
	assert_true(fcntl(pfd[1], F_SETPIPE_SZ, 1 << 20) >= (int)(1 << 20));
	/* into the pipe */
	assert_int_equal(pfs_rpc_start(p, PFS_OP_PING, NULL, NULL, 0, src, n, &c), 0);
	assert_int_equal(pfs_rpc_finish_pipe(c, &r, pfd[1], 1 << 20, &piped), 0);
	assert_int_equal(piped, 1);
	assert_int_equal(r.len, n);
	assert_null(r.data);
	pipe_holds(pfd[0], src, n);
	pfs_rpc_reply_free(&r);
	/* more than the pipe may take: memory */
	assert_int_equal(pfs_rpc_start(p, PFS_OP_PING, NULL, NULL, 0, src, n, &c), 0);
	assert_int_equal(pfs_rpc_finish_pipe(c, &r, pfd[1], n - 1, &piped), 0);
	assert_int_equal(piped, 0);
	assert_int_equal(r.len, n);
	assert_memory_equal(r.data, src, n);
	pipe_holds(pfd[0], src, 0);
	pfs_rpc_reply_free(&r);
	/* an error status: nothing in the pipe */
	assert_int_equal(pfs_rpc_start(p, 7, NULL, NULL, 0, NULL, 0, &c), 0);
	assert_int_equal(pfs_rpc_finish_pipe(c, &r, pfd[1], 1 << 20, &piped), -ENOENT);
	assert_int_equal(piped, 0);
	pipe_holds(pfd[0], src, 0);
	pfs_rpc_reply_free(&r);
	/* a pipe with less room than it claims: -ENOBUFS, not a hang */
	assert_int_equal(fcntl(pfd[1], F_SETPIPE_SZ, 65536), 65536);
	assert_int_equal(pfs_rpc_start(p, PFS_OP_PING, NULL, NULL, 0, src, n, &c), 0);
	assert_int_equal(pfs_rpc_finish_pipe(c, &r, pfd[1], 1 << 20, &piped), -ENOBUFS);
	pfs_rpc_reply_free(&r);
	/* the pool goes on (that connection was closed) */
	assert_int_equal(pfs_rpc_call(p, PFS_OP_PING, NULL, 0, "ok", 2, NULL, 0, &r), 0);
	assert_int_equal(r.len, 2);
	pfs_rpc_reply_free(&r);
	close(pfd[0]);
	close(pfd[1]);
	free(src);
	pfs_rpc_pool_destroy(p);
	pfs_server_stop(s);
}

/* The header fields of a tagged call reach the server; a reply's header
 * (its credit grant) is there with an error status too, and zeroed after a
 * transport error (no reply: no grant).  Opcode 8: -EBUSY with credit 7;
 * opcode 9: echo uid, gid and credit as the payload with credit 3;
 * opcode 10: no reply at all. */
static void tagged(void *ctx, pfs_sconn *c, const pfs_hdr *h, uint8_t *payload)
{
	uint32_t v[3] = { h->uid, h->gid, h->credit };

	if (h->opcode == 8)
		pfs_sconn_reply_credit(c, h, -EBUSY, 7, NULL, 0, NULL, 0);
	else if (h->opcode == 9)
		pfs_sconn_reply_credit(c, h, 0, 3, v, sizeof(v), NULL, 0);
	free(payload);
}

static void test_rpc_tag_and_reply_header(void **state)
{
	pfs_server_opts so = { .host = "127.0.0.1", .port = 0, .name = "test" };
	pfs_rpc_opts o = { .max_conns = 2, .timeout_ms = 200, .retry_ms = 500, .client_id = 9 };
	pfs_rpc_tag tag = { .job = "j", .uid = 1001, .gid = 2002, .credit = 5 };
	pfs_rpc_reply r = { 0 };
	pfs_rpc_inflight *c;
	pfs_server *s = NULL;
	pfs_rpc_pool *p = NULL;
	uint32_t v[3];

	assert_int_equal(pfs_server_start(&so, tagged, NULL, &s), 0);
	assert_int_equal(pfs_rpc_pool_create("127.0.0.1", pfs_server_port(s), &o, &p), 0);
	assert_int_equal(pfs_rpc_call_tag(p, 9, &tag, 0, NULL, 0, NULL, 0, &r), 0);
	assert_int_equal(r.len, sizeof(v));
	memcpy(v, r.data, sizeof(v));
	assert_int_equal(v[0], 1001);
	assert_int_equal(v[1], 2002);
	assert_int_equal(v[2], 5);
	assert_int_equal(r.hdr.credit, 3);
	assert_int_equal(pfs_rpc_call_tag(p, 8, &tag, 0, NULL, 0, NULL, 0, &r), -EBUSY);
	assert_int_equal(r.hdr.credit, 7);
	assert_int_equal(r.hdr.status, -EBUSY);
	assert_int_equal(r.len, 0);
	/* No reply within the timeout: -ETIMEDOUT, and no header left over
	 * from the call before. */
	assert_int_equal(pfs_rpc_start(p, 10, &tag, NULL, 0, NULL, 0, &c), 0);
	assert_int_equal(pfs_rpc_finish(c, &r), -ETIMEDOUT);
	assert_int_equal(r.hdr.credit, 0);
	assert_int_equal(r.hdr.magic, 0);
	/* The pool still works (the timed-out connection was dropped). */
	assert_int_equal(pfs_rpc_call_tag(p, 9, &tag, 0, NULL, 0, NULL, 0, &r), 0);
	pfs_rpc_reply_free(&r);
	pfs_rpc_pool_destroy(p);
	pfs_server_stop(s);
}

static void test_rpc_addr_parse(void **state)
{
	char host[64];
	uint16_t port;

	assert_int_equal(pfs_addr_parse("10.0.0.1:7700", host, sizeof(host), &port), 0);
	assert_string_equal(host, "10.0.0.1");
	assert_int_equal(port, 7700);
	assert_int_equal(pfs_addr_parse("[::1]:80", host, sizeof(host), &port), 0);
	assert_string_equal(host, "::1");
	assert_int_equal(pfs_addr_parse(":9", host, sizeof(host), &port), 0);
	assert_string_equal(host, "");
	assert_int_equal(pfs_addr_parse("nohost", host, sizeof(host), &port), -EINVAL);
	assert_int_equal(pfs_addr_parse("h:70000", host, sizeof(host), &port), -EINVAL);
	assert_int_equal(pfs_addr_parse("h:", host, sizeof(host), &port), -EINVAL);
	assert_int_equal(pfs_addr_parse("h:12x", host, sizeof(host), &port), -EINVAL);
}

/* ---- a pool with a key ---------------------------------------------------
 * A minimal blocking server: one thread accepts, one thread per connection
 * runs the server steps, then echoes PING frames (sealed) until the peer
 * closes.  With `tamper`, a byte of each reply payload is flipped after
 * sealing. */
typedef struct asrv {
	int lfd;
	uint16_t port;
	pfs_auth_key key;
	int tamper;
	pthread_t acceptor;
	pthread_t conns[16];
	int fds[16];
	unsigned nconns;
	int auth_failed, mac_failed, served;
	pthread_mutex_t lock;
} asrv;

typedef struct aconn {
	asrv *s;
	int fd;
} aconn;

static void *asrv_conn(void *arg)
{
	aconn *ac = arg;
	asrv *s = ac->s;
	int fd = ac->fd;
	uint8_t hello[PFS_AUTH_HELLO_LEN], chal[PFS_AUTH_CHAL_LEN];
	uint8_t proof[PFS_AUTH_PROOF_LEN], res[PFS_AUTH_RESULT_LEN];
	pfs_auth_srv st;
	pfs_auth_sess sess;
	int rc;

	free(ac);
	rc = pfs_net_read_all(fd, hello, sizeof(hello));
	if (rc == 0) {
		rc = pfs_auth_srv_hello(&st, &s->key, hello, chal);
		pfs_net_write_all(fd, chal, sizeof(chal));
	}
	if (rc == 0) {
		rc = pfs_net_read_all(fd, proof, sizeof(proof));
		if (rc == 0) {
			rc = pfs_auth_srv_proof(&st, proof, res, &sess);
			pfs_net_write_all(fd, res, sizeof(res));
		}
	}
	pfs_auth_srv_done(&st);
	pthread_mutex_lock(&s->lock);
	if (rc == -EACCES)
		s->auth_failed++;
	pthread_mutex_unlock(&s->lock);
	while (rc == 0) {
		pfs_hdr h;
		uint8_t *dyn, *data;

		rc = pfs_net_recv_frame_sec(fd, &sess, &h, PFS_MAX_PAYLOAD, NULL, 0, &dyn, &data);
		if (rc == -EBADMSG) {
			pthread_mutex_lock(&s->lock);
			s->mac_failed++;
			pthread_mutex_unlock(&s->lock);
		}
		if (rc)
			break;
		h.flags |= PFS_F_REPLY;
		if (!s->tamper) {
			rc = pfs_net_send_frame_sec(fd, &sess, &h, data, h.payload_len, NULL, 0);
		} else {
			uint8_t hb[PFS_HDR_LEN];

			pfs_auth_seal(&sess, &h, data, h.payload_len, NULL, 0);
			if (h.payload_len)
				data[h.payload_len - 1] ^= 1;
			pfs_hdr_encode(&h, hb);
			rc = pfs_net_write_all(fd, hb, sizeof(hb));
			if (rc == 0)
				rc = pfs_net_write_all(fd, data, h.payload_len);
		}
		free(dyn);
		pthread_mutex_lock(&s->lock);
		s->served++;
		pthread_mutex_unlock(&s->lock);
	}
	shutdown(fd, SHUT_RDWR);
	return NULL;
}

static void *asrv_accept(void *arg)
{
	asrv *s = arg;

	for (;;) {
		int fd = accept(s->lfd, NULL, NULL);
		aconn *ac;

		if (fd < 0)
			return NULL;
		pthread_mutex_lock(&s->lock);
		if (s->nconns == 16) {
			pthread_mutex_unlock(&s->lock);
			close(fd);
			continue;
		}
		ac = malloc(sizeof(*ac));
		assert_non_null(ac);
		ac->s = s;
		ac->fd = fd;
		s->fds[s->nconns] = fd;
		assert_int_equal(pthread_create(&s->conns[s->nconns], NULL, asrv_conn, ac), 0);
		s->nconns++;
		pthread_mutex_unlock(&s->lock);
	}
}

static void asrv_start(asrv *s, const pfs_auth_key *k)
{
	memset(s, 0, sizeof(*s));
	s->key = *k;
	pthread_mutex_init(&s->lock, NULL);
	assert_int_equal(pfs_net_listen("127.0.0.1", 0, &s->lfd), 0);
	assert_int_equal(pfs_net_local_port(s->lfd, &s->port), 0);
	assert_int_equal(pthread_create(&s->acceptor, NULL, asrv_accept, s), 0);
}

static void asrv_stop(asrv *s)
{
	shutdown(s->lfd, SHUT_RDWR);
	pthread_join(s->acceptor, NULL);
	close(s->lfd);
	for (unsigned i = 0; i < s->nconns; i++) {
		shutdown(s->fds[i], SHUT_RDWR);
		pthread_join(s->conns[i], NULL);
		close(s->fds[i]);
	}
	pthread_mutex_destroy(&s->lock);
}

static void keys(pfs_auth_key *m, pfs_auth_key *c, int integrity)
{
	assert_int_equal(pfs_auth_init(), 0);
	memset(m, 0, sizeof(*m));
	m->role = PFS_ROLE_MDS;
	m->integrity = integrity;
	for (size_t i = 0; i < sizeof(m->key); i++)
		m->key[i] = (uint8_t)(rand() ^ integrity);
	memset(c, 0, sizeof(*c));
	c->role = PFS_ROLE_CLIENT;
	assert_int_equal(pfs_auth_role_key(m, PFS_ROLE_CLIENT, c->key), 0);
}

static void pipe_roundtrip(pfs_rpc_pool *p, size_t n)
{
	uint8_t *src = malloc(n), fields[PFS_AUTH_WRITE_FIELDS] = "ost/object/offset/len";
	int pfd[2];
	pfs_rpc_inflight *c;
	pfs_rpc_reply r = { 0 };

	assert_int_equal(pipe(pfd), 0);
	assert_true(fcntl(pfd[0], F_SETPIPE_SZ, 1 << 20) >= (int)n);
	for (size_t i = 0; i < n; i++)
		src[i] = (uint8_t)(i * 17 + 3);
	assert_int_equal(write(pfd[1], src, n), (ssize_t)n);
	/* OSS_WRITE: in header mode its bulk is uncovered and spliced. */
	assert_int_equal(pfs_rpc_start_pipe(p, PFS_OP_OSS_WRITE, &(pfs_rpc_tag){ .job = "j" },
					    fields, sizeof(fields), pfd[0], n, &c), 0);
	assert_int_equal(pfs_rpc_finish(c, &r), 0);
	assert_int_equal(r.len, n + sizeof(fields));
	assert_memory_equal(r.data, fields, sizeof(fields));
	assert_memory_equal(r.data + sizeof(fields), src, n);
	pfs_rpc_reply_free(&r);
	close(pfd[0]);
	close(pfd[1]);
	free(src);
}

static void test_rpc_auth(void **state)
{
	pfs_auth_key m, ck;
	asrv s;
	pfs_rpc_opts o = { .max_conns = 2, .timeout_ms = 5000, .retry_ms = 3000,
			   .client_id = 5, .auth = &ck };
	pfs_rpc_pool *p = NULL;
	pfs_rpc_reply r = { 0 };
	size_t n = PFS_MAX_IO;
	uint8_t *big = malloc(n);

	for (int mode = PFS_INTEGRITY_HEADER; mode <= PFS_INTEGRITY_FULL; mode++) {
		keys(&m, &ck, mode);
		asrv_start(&s, &m);
		assert_int_equal(pfs_rpc_pool_create("127.0.0.1", s.port, &o, &p), 0);
		for (int i = 0; i < 5; i++) { /* sequence numbers advance both ways */
			assert_int_equal(pfs_rpc_call(p, PFS_OP_PING, "j", 0, "abc", 3, "de", 2, &r), 0);
			assert_int_equal(r.len, 5);
			assert_memory_equal(r.data, "abcde", 5);
		}
		for (size_t i = 0; i < n; i++)
			big[i] = (uint8_t)(i + mode);
		assert_int_equal(pfs_rpc_call(p, PFS_OP_PING, "j", 0, NULL, 0, big, n - 2, &r), 0);
		assert_int_equal(r.len, n - 2);
		assert_memory_equal(r.data, big, n - 2);
		/* Bulk from a pipe: spliced in header mode, read into
		 * memory and MACed in full mode. */
		pipe_roundtrip(p, 300000);
		pfs_rpc_reply_free(&r);
		pfs_rpc_pool_destroy(p);
		asrv_stop(&s);
		assert_int_equal(s.auth_failed, 0);
		assert_int_equal(s.mac_failed, 0);
		assert_int_equal(s.served, 7);
	}
	free(big);
}

static void test_rpc_auth_refused(void **state)
{
	pfs_auth_key m, ck, m2, bad;
	asrv s;
	pfs_rpc_opts o = { .max_conns = 2, .timeout_ms = 2000, .retry_ms = 20000,
			   .client_id = 5, .auth = &bad };
	pfs_rpc_pool *p = NULL;
	pfs_rpc_reply r = { 0 };
	uint64_t t0;

	keys(&m, &ck, PFS_INTEGRITY_HEADER);
	keys(&m2, &bad, PFS_INTEGRITY_FULL); /* another cluster's client key */
	asrv_start(&s, &m);
	assert_int_equal(pfs_rpc_pool_create("127.0.0.1", s.port, &o, &p), 0);
	/* Refused at once: not retried for the 20 s retry window. */
	t0 = pfs_clock_ms();
	assert_int_equal(pfs_rpc_call(p, PFS_OP_PING, "j", PFS_RPC_IDEMPOTENT, "a", 1, NULL, 0,
				      &r), -EACCES);
	assert_true(pfs_clock_ms() - t0 < 15000);
	pfs_rpc_pool_destroy(p);

	/* A reply altered on the wire: -EBADMSG, the connection is dropped. */
	o.auth = &ck;
	s.tamper = 1;
	assert_int_equal(pfs_rpc_pool_create("127.0.0.1", s.port, &o, &p), 0);
	assert_int_equal(pfs_rpc_call(p, PFS_OP_PING, "j", 0, "abc", 3, NULL, 0, &r), -EBADMSG);
	assert_null(r.data);
	pfs_rpc_reply_free(&r);
	pfs_rpc_pool_destroy(p);

	/* A pool without a key against the authenticating server: its frame
	 * is not a HELLO, so the server refuses (-EPROTO) and closes. */
	o.auth = NULL;
	o.retry_ms = 200;
	assert_int_equal(pfs_rpc_pool_create("127.0.0.1", s.port, &o, &p), 0);
	assert_true(pfs_rpc_call(p, PFS_OP_PING, "j", 0, "abc", 3, NULL, 0, &r) < 0);
	pfs_rpc_pool_destroy(p);
	asrv_stop(&s);
	assert_int_equal(s.auth_failed, 1);
	assert_int_equal(s.served, 1);
}

/* ---- resends ---- */

/* A raw server with a reply cache of one request: it executes every
 * request whose id it has not seen (count executions), drops the
 * connection without replying the first `drops` times, and answers a
 * resend of an executed request with the cached reply.  mode 1: instead of
 * dropping, stay silent past the client's timeout. */
struct dropper {
	int lfd, mode, drops, stop;
	pthread_t t;
	pthread_mutex_t lock;
	int executed, sends, resends_seen;
	uint64_t req_ids[8], client_ids[8];
	uint32_t flags[8];
	uint64_t done_req; /* the cached request id (0 = none) */
	char done_reply[32];
};

static void *dropper_main(void *arg)
{
	struct dropper *d = arg;

	while (!d->stop) {
		struct pollfd pfd = { .fd = d->lfd, .events = POLLIN };
		int fd;

		if (poll(&pfd, 1, 50) <= 0)
			continue;
		fd = accept(d->lfd, NULL, NULL);
		if (fd < 0)
			continue;
		pfs_net_set_timeout(fd, 2000);
		for (;;) {
			pfs_hdr h;
			uint8_t *dyn = NULL, *data;
			int drop;

			if (pfs_net_recv_frame(fd, &h, PFS_MAX_PAYLOAD, NULL, 0, &dyn, &data))
				break;
			free(dyn);
			pthread_mutex_lock(&d->lock);
			if (d->sends < 8) {
				d->req_ids[d->sends] = h.req_id;
				d->client_ids[d->sends] = h.client_id;
				d->flags[d->sends] = h.flags;
			}
			d->sends++;
			d->resends_seen += !!(h.flags & PFS_F_RESEND);
			if (!(d->done_req == h.req_id && (h.flags & PFS_F_RESEND))) {
				d->executed++; /* the operation's effect */
				d->done_req = h.req_id;
				snprintf(d->done_reply, sizeof(d->done_reply), "done #%d", d->executed);
			}
			drop = d->drops > 0;
			if (drop)
				d->drops--;
			pthread_mutex_unlock(&d->lock);
			if (drop && d->mode == 1) {
				usleep(400 * 1000); /* past the client's timeout */
				break;
			}
			if (drop)
				break; /* executed, connection dropped before the reply */
			h.flags = PFS_F_REPLY;
			h.status = 0;
			if (pfs_net_send_frame(fd, &h, d->done_reply, strlen(d->done_reply), NULL, 0))
				break;
		}
		close(fd);
	}
	return NULL;
}

static uint16_t dropper_start(struct dropper *d, int mode, int drops)
{
	uint16_t port;

	memset(d, 0, sizeof(*d));
	d->mode = mode;
	d->drops = drops;
	pthread_mutex_init(&d->lock, NULL);
	assert_int_equal(pfs_net_listen("127.0.0.1", 0, &d->lfd), 0);
	assert_int_equal(pfs_net_local_port(d->lfd, &port), 0);
	assert_int_equal(pthread_create(&d->t, NULL, dropper_main, d), 0);
	return port;
}

static void dropper_stop(struct dropper *d)
{
	d->stop = 1;
	pthread_join(d->t, NULL);
	close(d->lfd);
	pthread_mutex_destroy(&d->lock);
}

static void test_rpc_resend_gets_cached_reply(void **state)
{
	pfs_rpc_opts o = { .max_conns = 2, .timeout_ms = 3000, .retry_ms = 3000,
			   .client_id = 4242 };
	pfs_rpc_reply r = { 0 };
	pfs_rpc_pool *p;
	struct dropper d;
	uint16_t port = dropper_start(&d, 0, 2);

	pfs_log_set_level(PFS_LOG_ERR);
	assert_int_equal(pfs_rpc_pool_create("127.0.0.1", port, &o, &p), 0);
	/* not marked idempotent: resent anyway, the server's cache answers */
	assert_int_equal(pfs_rpc_call(p, PFS_OP_MDS_MKDIR, "j", 0, "x", 1, NULL, 0, &r), 0);
	assert_int_equal(r.len, strlen("done #1"));
	assert_memory_equal(r.data, "done #1", r.len);
	pfs_rpc_reply_free(&r);
	assert_int_equal(d.executed, 1); /* executed once, answered on the third send */
	assert_int_equal(d.sends, 3);
	assert_int_equal(d.resends_seen, 2);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(d.req_ids[i], d.req_ids[0]);
		assert_int_equal(d.client_ids[i], 4242);
		assert_int_equal(d.flags[i], i ? PFS_F_RESEND : 0);
	}
	assert_int_equal(pfs_rpc_pool_resends(p), 2);
	/* the next call is a new request: a new id, no resend flag */
	assert_int_equal(pfs_rpc_call(p, PFS_OP_MDS_MKDIR, "j", 0, "y", 1, NULL, 0, &r), 0);
	assert_memory_equal(r.data, "done #2", r.len);
	pfs_rpc_reply_free(&r);
	assert_true(d.req_ids[3] != d.req_ids[0]);
	assert_int_equal(d.flags[3], 0);
	/* PFS_RPC_NO_RESEND: the loss is the caller's */
	d.drops = 1;
	assert_int_equal(pfs_rpc_call(p, PFS_OP_MDS_MKDIR, "j", PFS_RPC_NO_RESEND, "z", 1, NULL,
				      0, &r), -EPIPE);
	assert_int_equal(d.executed, 3);
	pfs_rpc_pool_destroy(p);
	dropper_stop(&d);
	pfs_log_set_level(PFS_LOG_NOTICE);
}

/* No reply within timeout_ms: resent, and the cached reply comes back. */
static void test_rpc_resend_after_timeout(void **state)
{
	pfs_rpc_opts o = { .max_conns = 2, .timeout_ms = 200, .retry_ms = 100,
			   .recovery_ms = 5000, .client_id = 7 };
	pfs_rpc_reply r = { 0 };
	pfs_rpc_pool *p;
	struct dropper d;
	uint16_t port = dropper_start(&d, 1, 1);

	pfs_log_set_level(PFS_LOG_ERR);
	assert_int_equal(pfs_rpc_pool_create("127.0.0.1", port, &o, &p), 0);
	assert_int_equal(pfs_rpc_call(p, PFS_OP_MDS_UNLINK, "j", 0, "x", 1, NULL, 0, &r), 0);
	assert_memory_equal(r.data, "done #1", r.len);
	pfs_rpc_reply_free(&r);
	assert_int_equal(d.executed, 1);
	assert_int_equal(d.sends, 2);
	assert_int_equal(d.flags[1], PFS_F_RESEND);
	assert_int_equal(d.req_ids[1], d.req_ids[0]);
	pfs_rpc_pool_destroy(p);
	dropper_stop(&d);
	pfs_log_set_level(PFS_LOG_NOTICE);
}

static int always(void *arg)
{
	return *(int *)arg;
}

/* A server that stays down: the recovery window bounds the wait, the
 * interrupt check ends it early with -EINTR; pfs_rpc_fs_err turns what
 * is left into -EIO. */
static void test_rpc_window_and_interrupt(void **state)
{
	pfs_rpc_opts o = { .max_conns = 2, .timeout_ms = 500, .retry_ms = 100,
			   .recovery_ms = 600, .client_id = 7 };
	pfs_rpc_reply r = { 0 };
	pfs_rpc_pool *p;
	uint16_t port;
	int lfd, fire = 0;
	uint64_t t0;

	/* a port nobody listens on */
	assert_int_equal(pfs_net_listen("127.0.0.1", 0, &lfd), 0);
	assert_int_equal(pfs_net_local_port(lfd, &port), 0);
	close(lfd);
	assert_int_equal(pfs_rpc_pool_create("127.0.0.1", port, &o, &p), 0);
	t0 = pfs_clock_ms();
	assert_int_equal(pfs_rpc_call(p, PFS_OP_PING, "j", 0, "x", 1, NULL, 0, &r),
			 -ECONNREFUSED);
	assert_true(pfs_clock_ms() - t0 >= 500); /* it kept trying through the window */
	pfs_rpc_pool_set_recovery_ms(p, 60000);
	fire = 1;
	pfs_rpc_set_interrupt(always, &fire);
	assert_int_equal(pfs_rpc_call(p, PFS_OP_PING, "j", 0, "x", 1, NULL, 0, &r), -EINTR);
	pfs_rpc_set_interrupt(NULL, NULL);
	pfs_rpc_pool_destroy(p);
	assert_int_equal(pfs_rpc_fs_err(-ECONNREFUSED), -EIO);
	assert_int_equal(pfs_rpc_fs_err(-EPIPE), -EIO);
	assert_int_equal(pfs_rpc_fs_err(-ETIMEDOUT), -EIO);
	assert_int_equal(pfs_rpc_fs_err(-ECONNRESET), -EIO);
	assert_int_equal(pfs_rpc_fs_err(-EHOSTUNREACH), -EIO);
	assert_int_equal(pfs_rpc_fs_err(-5000), -EIO);
	assert_int_equal(pfs_rpc_fs_err(-ENOSPC), -ENOSPC);
	assert_int_equal(pfs_rpc_fs_err(-EDQUOT), -EDQUOT);
	assert_int_equal(pfs_rpc_fs_err(-EINTR), -EINTR);
	assert_int_equal(pfs_rpc_fs_err(0), 0);
}

/* ---- bulk in pieces (pfs_rpc_start_iov, pfs_net_send_frame_iov_sec) ---- */

/* n pieces of different lengths and contents; their concatenation in cat. */
static struct iovec *pieces(size_t n, uint8_t **cat, size_t *total)
{
	struct iovec *v = calloc(n, sizeof(*v));
	size_t at = 0;

	assert_non_null(v);
	*total = 0;
	for (size_t i = 0; i < n; i++)
		*total += 1 + i % 7 * 301;
	*cat = malloc(*total);
	assert_non_null(*cat);
	for (size_t i = 0; i < n; i++) {
		size_t len = 1 + i % 7 * 301;
		uint8_t *b = malloc(len);

		assert_non_null(b);
		for (size_t j = 0; j < len; j++)
			b[j] = (uint8_t)(i * 31 + j * 7 + 1);
		memcpy(*cat + at, b, len);
		at += len;
		v[i] = (struct iovec){ b, len };
	}
	return v;
}

static void pieces_free(struct iovec *v, size_t n, uint8_t *cat)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].iov_base);
	free(v);
	free(cat);
}

/* Through the pool, in both integrity modes: a WRITEV-like request whose
 * bulk is 3, 256 and 300 pieces (on the stack and allocated) reaches the
 * server in order (echoed back whole) with a tag the server accepts; too
 * many pieces are refused before anything is sent. */
static void test_rpc_iov_pieces(void **state)
{
	pfs_auth_key m, ck;
	asrv s;
	pfs_rpc_opts o = { .max_conns = 2, .timeout_ms = 5000, .retry_ms = 3000,
			   .client_id = 5, .auth = &ck };
	static const size_t counts[] = { 3, 256, 300 };
	uint8_t fields[12] = "ost+obj+nvec";

	for (int mode = PFS_INTEGRITY_HEADER; mode <= PFS_INTEGRITY_FULL; mode++) {
		pfs_rpc_pool *p = NULL;
		pfs_rpc_inflight *c;

		keys(&m, &ck, mode);
		asrv_start(&s, &m);
		assert_int_equal(pfs_rpc_pool_create("127.0.0.1", s.port, &o, &p), 0);
		for (size_t k = 0; k < 3; k++) {
			pfs_rpc_reply r = { 0 };
			uint8_t *cat;
			size_t total;
			struct iovec *v = pieces(counts[k], &cat, &total);

			assert_int_equal(pfs_rpc_start_iov(p, PFS_OP_OSS_WRITEV,
							   &(pfs_rpc_tag){ .job = "j" }, fields,
							   sizeof(fields), v, (int)counts[k], &c), 0);
			assert_int_equal(pfs_rpc_finish(c, &r), 0);
			assert_int_equal(r.len, sizeof(fields) + total);
			assert_memory_equal(r.data, fields, sizeof(fields));
			assert_memory_equal(r.data + sizeof(fields), cat, total);
			pfs_rpc_reply_free(&r);
			pieces_free(v, counts[k], cat);
		}
		{
			struct iovec one = { fields, 1 };
			struct iovec *many = calloc(PFS_NET_MAX_SEGS + 1, sizeof(*many));

			assert_non_null(many);
			for (int i = 0; i <= PFS_NET_MAX_SEGS; i++)
				many[i] = one;
			assert_int_equal(pfs_rpc_start_iov(p, PFS_OP_OSS_WRITEV, NULL, fields, 4,
							   many, PFS_NET_MAX_SEGS + 1, &c), -EINVAL);
			free(many);
		}
		pfs_rpc_pool_destroy(p);
		asrv_stop(&s);
		assert_int_equal(s.auth_failed, 0);
		assert_int_equal(s.mac_failed, 0);
		assert_int_equal(s.served, 3);
	}
}

/* Read one whole frame's bytes (header and payload) from fd. */
static uint8_t *raw_frame(int fd, size_t *n)
{
	uint8_t hb[PFS_HDR_LEN], *b;
	pfs_hdr h;

	assert_int_equal(pfs_net_read_all(fd, hb, sizeof(hb)), 0);
	assert_int_equal(pfs_hdr_decode(hb, sizeof(hb), PFS_MAX_PAYLOAD, &h), 0);
	*n = PFS_HDR_LEN + h.payload_len;
	b = malloc(*n);
	assert_non_null(b);
	memcpy(b, hb, sizeof(hb));
	assert_int_equal(pfs_net_read_all(fd, b + PFS_HDR_LEN, h.payload_len), 0);
	return b;
}

/* The frame sent from pieces is byte for byte the frame of their
 * concatenation (same header, same tag), in both integrity modes; and a
 * receiver with the peer's session refuses it when any one byte of any
 * piece (first, middle, last) was changed on the way, so the tag covers
 * every piece. */
static void test_rpc_iov_tag_covers_every_piece(void **state)
{
	uint8_t fields[12] = "ost+obj+nvec", *cat;
	size_t total, n = 5;
	struct iovec *v = pieces(n, &cat, &total);

	assert_int_equal(pfs_auth_init(), 0);
	for (int mode = PFS_INTEGRITY_HEADER; mode <= PFS_INTEGRITY_FULL; mode++) {
		pfs_auth_sess tx = { .integrity = mode }, rx = { .integrity = mode };
		/* -1: untouched; then a byte in the first, a middle and the last piece */
		size_t flips[] = { SIZE_MAX, 0, v[0].iov_len + v[1].iov_len + 3, total - 1 };

		for (size_t i = 0; i < sizeof(tx.k_send); i++)
			tx.k_send[i] = rx.k_recv[i] = (uint8_t)(i * 13 + mode);
		for (size_t f = 0; f < sizeof(flips) / sizeof(flips[0]); f++) {
			int a[2], b[2];
			pfs_hdr h, got;
			uint8_t *frame, *flat, *dyn = NULL, *data = NULL;
			size_t fn, flatn;
			pfs_auth_sess tx2 = tx;

			assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, a), 0);
			assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, b), 0);
			pfs_hdr_init(&h, PFS_OP_OSS_WRITEV, 9, 5, "job");
			assert_int_equal(pfs_net_send_frame_iov_sec(a[0], &tx, &h, fields,
								   sizeof(fields), v, (int)n), 0);
			frame = raw_frame(a[1], &fn);
			/* the same frame from one piece, same sequence number */
			pfs_hdr_init(&h, PFS_OP_OSS_WRITEV, 9, 5, "job");
			assert_int_equal(pfs_net_send_frame_sec(a[0], &tx2, &h, fields,
							       sizeof(fields), cat, total), 0);
			flat = raw_frame(a[1], &flatn);
			assert_int_equal(fn, flatn);
			assert_memory_equal(frame, flat, fn);
			if (flips[f] != SIZE_MAX)
				frame[PFS_HDR_LEN + sizeof(fields) + flips[f]] ^= 0x40;
			assert_int_equal(pfs_net_write_all(b[0], frame, fn), 0);
			rx.seq_recv = tx2.seq_send - 1;
			rx.failed = 0;
			if (flips[f] == SIZE_MAX) {
				assert_int_equal(pfs_net_recv_frame_sec(b[1], &rx, &got,
									PFS_MAX_PAYLOAD, NULL, 0,
									&dyn, &data), 0);
				assert_int_equal(got.payload_len, sizeof(fields) + total);
				assert_memory_equal(data + sizeof(fields), cat, total);
			} else {
				assert_int_equal(pfs_net_recv_frame_sec(b[1], &rx, &got,
									PFS_MAX_PAYLOAD, NULL, 0,
									&dyn, &data), -EBADMSG);
			}
			free(dyn);
			free(frame);
			free(flat);
			close(a[0]);
			close(a[1]);
			close(b[0]);
			close(b[1]);
			tx = tx2;
		}
	}
	pieces_free(v, n, cat);
}

/* The frame server (an OSS's data port) under authentication: a WRITEV
 * whose bulk went out in pieces is accepted (answered); the same request
 * with one byte of its middle piece changed after sealing (on the wire)
 * is refused: the connection is closed and counted as a bad tag. */
static void test_rpc_iov_server_refuses_tampered_piece(void **state)
{
	pfs_auth_key m, ck;
	pfs_server_opts so = { .host = "127.0.0.1", .name = "iov" };
	pfs_server *srv = NULL;
	pfs_server_stats st;
	pfs_auth_sess ss, tx;
	uint8_t fields[12] = "ost+obj+nvec", *cat, *frame, *dyn = NULL, *data = NULL, b[256];
	size_t total, fn, n = 3;
	struct iovec *v = pieces(n, &cat, &total);
	pfs_hdr h, r;
	int fd, sp[2];
	ssize_t got;

	keys(&m, &ck, PFS_INTEGRITY_HEADER);
	so.auth = &m;
	assert_int_equal(pfs_server_start(&so, echo, NULL, &srv), 0);
	assert_int_equal(pfs_net_connect("127.0.0.1", pfs_server_port(srv), 2000, &fd), 0);
	assert_int_equal(pfs_auth_client(fd, &ck, 2000, &ss), 0);
	/* good: answered (the echo server does not serve WRITEV: a status) */
	pfs_hdr_init(&h, PFS_OP_OSS_WRITEV, 1, 5, "j");
	assert_int_equal(pfs_net_send_frame_iov_sec(fd, &ss, &h, fields, sizeof(fields), v,
						    (int)n), 0);
	assert_int_equal(pfs_net_recv_reply_sec(fd, &ss, &r, PFS_MAX_PAYLOAD, NULL, 0, &dyn,
						&data), 0);
	assert_int_equal(r.req_id, 1);
	assert_true(r.status < 0);
	free(dyn);
	/* tampered: sealed for this connection, changed on the way */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
	tx = ss;
	pfs_hdr_init(&h, PFS_OP_OSS_WRITEV, 2, 5, "j");
	assert_int_equal(pfs_net_send_frame_iov_sec(sp[0], &tx, &h, fields, sizeof(fields), v,
						    (int)n), 0);
	frame = raw_frame(sp[1], &fn);
	frame[PFS_HDR_LEN + sizeof(fields) + v[0].iov_len + v[1].iov_len / 2] ^= 1;
	assert_int_equal(pfs_net_write_all(fd, frame, fn), 0);
	assert_int_equal(pfs_net_set_timeout(fd, 3000), 0);
	do
		got = recv(fd, b, sizeof(b), 0);
	while (got > 0);   /* at most an error reply, then the close */
	assert_true(got == 0 || errno == ECONNRESET);
	pfs_server_get_stats(srv, &st);
	assert_int_equal(st.mac_failed, 1);
	close(fd);
	close(sp[0]);
	close(sp[1]);
	free(frame);
	pfs_server_stop(srv);
	pieces_free(v, n, cat);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rpc_echo),
		cmocka_unit_test(test_rpc_bulk_into_caller_buffer),
		cmocka_unit_test(test_rpc_concurrent),
		cmocka_unit_test(test_rpc_garbage),
		cmocka_unit_test(test_rpc_server_restart),
		cmocka_unit_test(test_rpc_bulk_from_pipe),
		cmocka_unit_test(test_rpc_reply_into_pipe),
		cmocka_unit_test(test_rpc_tag_and_reply_header),
		cmocka_unit_test(test_rpc_addr_parse),
		cmocka_unit_test(test_rpc_auth),
		cmocka_unit_test(test_rpc_auth_refused),
		cmocka_unit_test(test_rpc_resend_gets_cached_reply),
		cmocka_unit_test(test_rpc_resend_after_timeout),
		cmocka_unit_test(test_rpc_window_and_interrupt),
		cmocka_unit_test(test_rpc_iov_pieces),
		cmocka_unit_test(test_rpc_iov_tag_covers_every_piece),
		cmocka_unit_test(test_rpc_iov_server_refuses_tampered_piece),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
