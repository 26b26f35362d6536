/* test_server_pipe.c — replies whose bulk comes from a pipe
 * (pfs_sconn_reply_pipe, common/server.h; the OSS's spliced READs) over
 * real sockets on 127.0.0.1: the frame is byte for byte the one
 * pfs_sconn_reply sends, the pipe is empty afterwards whatever the path
 * (spliced at once, partly queued behind a peer that does not read, an
 * error status, a session whose MAC covers the bulk), and sealed replies
 * check on both integrity modes. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/auth.h"
#include "common/net.h"
#include "common/server.h"

#define BULK (1u << 20)
#define OP_FAIL 9 /* the bulk is made, the reply is -EIO */

static uint8_t pattern[BULK];
static int expect_covers; /* pfs_sconn_reply_covers of a READ reply */

/* Requests carry u32 n (bulk bytes wanted) and u32 seed; the reply is
 * "F1" then n pattern bytes from offset seed, sent through a pipe. */
static void handler(void *ctx, pfs_sconn *c, const pfs_hdr *h, uint8_t *payload)
{
	uint32_t n = 0, seed = 0;
	int pfd[2];
	size_t put = 0;
	char x;

	if (h->payload_len == 8) {
		memcpy(&n, payload, 4);
		memcpy(&seed, payload + 4, 4);
	}
	free(payload);
	assert_true(n <= BULK / 2 && seed < BULK / 2);
	assert_int_equal(pipe2(pfd, O_NONBLOCK | O_CLOEXEC), 0);
	assert_true(fcntl(pfd[1], F_SETPIPE_SZ, 2 * BULK) >= (int)BULK);
	while (put < n) {
		ssize_t w = write(pfd[1], pattern + seed + put, n - put);

		assert_true(w > 0);
		put += (size_t)w;
	}
	/* what the session covers: the OSS's test before splicing */
	if (h->opcode == PFS_OP_OSS_READ)
		assert_int_equal(pfs_sconn_reply_covers(c, h, 2, 2 + n), expect_covers);
	pfs_sconn_reply_pipe(c, h, h->opcode == OP_FAIL ? -EIO : 0, 0, "F1", 2, pfd[0], n);
	/* the reply took (or dropped) every byte */
	assert_int_equal(read(pfd[0], &x, 1), -1);
	assert_int_equal(errno, EAGAIN);
	close(pfd[0]);
	close(pfd[1]);
}

static void send_req(int fd, pfs_auth_sess *ss, uint16_t op, uint64_t id, uint32_t n,
		     uint32_t seed)
{
	uint8_t p[8];
	pfs_hdr h;

	memcpy(p, &n, 4);
	memcpy(p + 4, &seed, 4);
	pfs_hdr_init(&h, op, id, 1, NULL);
	assert_int_equal(pfs_net_send_frame_sec(fd, ss, &h, p, sizeof(p), NULL, 0), 0);
}

/* The reply to id: status, and with status 0 "F1" + n pattern bytes. */
static int check_reply(int fd, pfs_auth_sess *ss, uint16_t op, uint64_t id, uint32_t n,
		       uint32_t seed)
{
	uint8_t *dyn = NULL, *data;
	pfs_hdr r;
	int rc = pfs_net_recv_reply_sec(fd, ss, &r, PFS_MAX_PAYLOAD, NULL, 0, &dyn, &data);

	assert_int_equal(rc, 0);
	assert_int_equal(r.opcode, op);
	assert_int_equal(r.req_id, id);
	if (r.status == 0) {
		assert_int_equal(r.payload_len, 2 + n);
		assert_memory_equal(data, "F1", 2);
		assert_memory_equal(data + 2, pattern + seed, n);
	} else {
		assert_int_equal(r.payload_len, 0);
	}
	free(dyn);
	return r.status;
}

static pfs_server *start(pfs_server_opts *o)
{
	pfs_server *s;

	o->host = "127.0.0.1";
	o->name = "test-pipe";
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

static void fill_pattern(void)
{
	for (size_t i = 0; i < BULK; i++)
		pattern[i] = (uint8_t)(i * 13 + (i >> 9));
}

static void test_pipe_reply_plain(void **state)
{
	pfs_server_opts o = { 0 };
	pfs_server *s;
	pfs_server_stats st;
	int fd;

	(void)state;
	fill_pattern();
	s = start(&o);
	fd = dial(s);
	send_req(fd, NULL, PFS_OP_OSS_READ, 1, BULK / 2, 0);
	assert_int_equal(check_reply(fd, NULL, PFS_OP_OSS_READ, 1, BULK / 2, 0), 0);
	send_req(fd, NULL, PFS_OP_OSS_READ, 2, 4097, 3);
	assert_int_equal(check_reply(fd, NULL, PFS_OP_OSS_READ, 2, 4097, 3), 0);
	send_req(fd, NULL, PFS_OP_OSS_READ, 3, 0, 0);
	assert_int_equal(check_reply(fd, NULL, PFS_OP_OSS_READ, 3, 0, 0), 0);
	send_req(fd, NULL, OP_FAIL, 4, 5000, 1);
	assert_int_equal(check_reply(fd, NULL, OP_FAIL, 4, 5000, 1), -EIO);
	/* the connection is still in step */
	send_req(fd, NULL, PFS_OP_OSS_READ, 5, 12345, 7);
	assert_int_equal(check_reply(fd, NULL, PFS_OP_OSS_READ, 5, 12345, 7), 0);
	pfs_server_get_stats(s, &st);
	assert_int_equal(st.queued_bytes, 0);
	close(fd);
	pfs_server_stop(s);
}

/* A peer that sends many requests before reading: replies find the socket
 * full (the rest read from the pipe and queued) or others queued ahead
 * (queued whole); every frame must still arrive intact and in step. */
static void test_pipe_reply_behind_full_socket(void **state)
{
	pfs_server_opts o = { .workers = 4, .max_inflight = 64, .max_queued_bytes = 64u << 20 };
	pfs_server *s;
	int fd;
	const int n = 24;
	int seen[24] = { 0 };

	(void)state;
	fill_pattern();
	s = start(&o);
	fd = dial(s);
	for (int i = 0; i < n; i++)
		send_req(fd, NULL, PFS_OP_OSS_READ, 100 + (uint64_t)i, BULK / 2 - (uint32_t)i,
			 (uint32_t)i);
	usleep(200000); /* let the replies pile up against the unread socket */
	for (int i = 0; i < n; i++) {
		uint8_t *dyn = NULL, *data;
		pfs_hdr r;
		uint64_t k;

		assert_int_equal(pfs_net_recv_reply(fd, &r, PFS_MAX_PAYLOAD, NULL, 0, &dyn, &data),
				 0);
		k = r.req_id - 100;
		assert_true(k < (uint64_t)n);
		assert_int_equal(r.status, 0);
		assert_int_equal(r.payload_len, 2 + BULK / 2 - k);
		assert_memory_equal(data, "F1", 2);
		assert_memory_equal(data + 2, pattern + k, BULK / 2 - k);
		seen[k]++;
		free(dyn);
	}
	for (int i = 0; i < n; i++)
		assert_int_equal(seen[i], 1);
	close(fd);
	pfs_server_stop(s);
}

static void keys(pfs_auth_key *srv, pfs_auth_key *cli, int integrity)
{
	memset(srv, 0, sizeof(*srv));
	srv->role = PFS_ROLE_OSS;
	srv->integrity = integrity;
	for (int i = 0; i < PFS_AUTH_KEY_LEN; i++)
		srv->key[i] = (uint8_t)(i * 5 + 3);
	memset(cli, 0, sizeof(*cli));
	cli->role = PFS_ROLE_CLIENT;
	assert_int_equal(pfs_auth_role_key(srv, PFS_ROLE_CLIENT, cli->key), 0);
}

/* Sealed replies: with integrity=header a READ reply's bulk is not
 * covered (spliced); with integrity=full, and for any other opcode, it is
 * (read into memory first).  The client's check of every tag passes. */
static void test_pipe_reply_sealed(void **state)
{
	static const int modes[2] = { PFS_INTEGRITY_HEADER, PFS_INTEGRITY_FULL };

	(void)state;
	fill_pattern();
	assert_int_equal(pfs_auth_init(), 0);
	for (int m = 0; m < 2; m++) {
		pfs_auth_key sk, ck;
		pfs_server_opts o = { .auth = &sk };
		pfs_auth_sess ss;
		pfs_server *s;
		int fd;

		keys(&sk, &ck, modes[m]);
		expect_covers = modes[m] == PFS_INTEGRITY_FULL;
		s = start(&o);
		fd = dial(s);
		assert_int_equal(pfs_auth_client(fd, &ck, 2000, &ss), 0);
		for (uint64_t i = 0; i < 4; i++) {
			send_req(fd, &ss, PFS_OP_OSS_READ, 10 + i, BULK / 2 - (uint32_t)i * 999,
				 (uint32_t)i);
			assert_int_equal(check_reply(fd, &ss, PFS_OP_OSS_READ, 10 + i,
						     BULK / 2 - (uint32_t)i * 999, (uint32_t)i),
					 0);
		}
		send_req(fd, &ss, PFS_OP_PING, 20, 777, 5);
		assert_int_equal(check_reply(fd, &ss, PFS_OP_PING, 20, 777, 5), 0);
		send_req(fd, &ss, OP_FAIL, 21, 777, 5);
		assert_int_equal(check_reply(fd, &ss, OP_FAIL, 21, 777, 5), -EIO);
		close(fd);
		pfs_server_stop(s);
	}
	expect_covers = 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pipe_reply_plain),
		cmocka_unit_test(test_pipe_reply_behind_full_socket),
		cmocka_unit_test(test_pipe_reply_sealed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
