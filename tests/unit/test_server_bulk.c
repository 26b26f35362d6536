/* test_server_bulk.c — request bulk spliced past user space
 * (pfs_server_bulk, common/server.h; the OSS's WRITE data) over real
 * sockets on 127.0.0.1: a frame split() names reaches the bulk handler
 * with exactly its bulk bytes in the pipe and the bytes before them in
 * memory; others, and frames whose pipe fills up before the bulk is in,
 * reach the ordinary handler whole and intact; pipelined frames stay in
 * step; a session whose MAC covers the bulk (integrity=full) is never
 * spliced, a bad MAC closes the connection before any handler sees the
 * frame, and every pipe taken is given back. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
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
#define FIELDS PFS_AUTH_WRITE_FIELDS /* what a WRITE's MAC covers */
#define SPLIT_MIN 1000u              /* smaller bulks are not split */

static uint8_t pattern[BULK];
static int pipe_size = 2 * BULK;     /* F_SETPIPE_SZ of the pipes handed out */
static atomic_int n_gets, n_puts, mem_frames, bulk_frames;

/* Frames are PFS_OP_OSS_WRITE: FIELDS bytes (u32 seed at 0, u32 n at
 * FIELDS - 4), then n pattern bytes from offset seed. */
static void check_data(const uint8_t *p, uint32_t seed, size_t n)
{
	assert_true(seed + n <= BULK);
	assert_memory_equal(p, pattern + seed, n);
}

static size_t split(void *ctx, const pfs_hdr *h, const uint8_t *head)
{
	uint32_t n;

	(void)ctx;
	memcpy(&n, head + FIELDS - 4, 4);
	if (h->opcode != PFS_OP_OSS_WRITE || n < SPLIT_MIN || h->payload_len != FIELDS + n)
		return 0;
	return n;
}

static int pipe_get(void *ctx, int fd[2])
{
	(void)ctx;
	if (pipe2(fd, O_NONBLOCK | O_CLOEXEC))
		return -errno;
	if (fcntl(fd[1], F_SETPIPE_SZ, pipe_size) < 0) {
		int rc = -errno;

		close(fd[0]);
		close(fd[1]);
		return rc;
	}
	atomic_fetch_add(&n_gets, 1);
	return 0;
}

static void pipe_put(void *ctx, int fd[2], int empty)
{
	(void)ctx;
	(void)empty;
	close(fd[0]);
	close(fd[1]);
	fd[0] = fd[1] = -1;
	atomic_fetch_add(&n_puts, 1);
}

/* Ordinary frames: the whole payload in memory; reply "M". */
static void handler(void *ctx, pfs_sconn *c, const pfs_hdr *h, uint8_t *payload)
{
	uint32_t seed, n;

	(void)ctx;
	assert_true(h->payload_len >= FIELDS);
	memcpy(&seed, payload, 4);
	memcpy(&n, payload + FIELDS - 4, 4);
	assert_int_equal(h->payload_len, FIELDS + n);
	check_data(payload + FIELDS, seed, n);
	free(payload);
	atomic_fetch_add(&mem_frames, 1);
	pfs_sconn_reply(c, h, 0, "M", 1, NULL, 0);
}

/* Spliced frames: the fields in memory, exactly bulk bytes in the pipe;
 * reply "P". */
static void bulk_handler(void *ctx, pfs_sconn *c, const pfs_hdr *h, uint8_t *payload,
			 int fd[2], size_t bulk)
{
	uint8_t *buf = malloc(BULK); /* handlers run on several workers */
	uint32_t seed, n;
	size_t got = 0;
	char x;

	assert_non_null(buf);
	assert_int_equal(h->payload_len - bulk, FIELDS);
	memcpy(&seed, payload, 4);
	memcpy(&n, payload + FIELDS - 4, 4);
	assert_int_equal(n, bulk);
	free(payload);
	while (got < bulk) {
		ssize_t r = read(fd[0], buf + got, bulk - got);

		assert_true(r > 0);
		got += (size_t)r;
	}
	assert_int_equal(read(fd[0], &x, 1), -1); /* nothing more */
	assert_int_equal(errno, EAGAIN);
	check_data(buf, seed, bulk);
	free(buf);
	pipe_put(ctx, fd, 1);
	atomic_fetch_add(&bulk_frames, 1);
	pfs_sconn_reply(c, h, 0, "P", 1, NULL, 0);
}

static pfs_server_bulk hooks = {
	.head = FIELDS,
	.split = split,
	.pipe_get = pipe_get,
	.pipe_put = pipe_put,
	.handler = bulk_handler,
};

static void reset(void)
{
	for (size_t i = 0; i < BULK; i++)
		pattern[i] = (uint8_t)(i * 31 + (i >> 11));
	atomic_store(&n_gets, 0);
	atomic_store(&n_puts, 0);
	atomic_store(&mem_frames, 0);
	atomic_store(&bulk_frames, 0);
	pipe_size = 2 * BULK;
	hooks.head = FIELDS;
}

static pfs_server *start(pfs_server_opts *o)
{
	pfs_server *s;

	o->host = "127.0.0.1";
	o->name = "test-bulk";
	o->bulk = &hooks;
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

static void send_write(int fd, pfs_auth_sess *ss, uint64_t id, uint32_t seed, uint32_t n)
{
	uint8_t f[FIELDS] = { 0 };
	pfs_hdr h;

	memcpy(f, &seed, 4);
	memcpy(f + FIELDS - 4, &n, 4);
	pfs_hdr_init(&h, PFS_OP_OSS_WRITE, id, 1, NULL);
	assert_int_equal(pfs_net_send_frame_sec(fd, ss, &h, f, sizeof(f), pattern + seed, n), 0);
}

/* The next reply: its req_id into *id, 'M' (received into memory) or 'P'
 * (spliced); 0 when the connection is gone. */
static char next_reply(int fd, pfs_auth_sess *ss, uint64_t *id)
{
	uint8_t *dyn = NULL, *data;
	pfs_hdr r;
	char k;

	/* exact reads: several replies may wait in the socket */
	if (pfs_net_recv_frame_sec(fd, ss, &r, PFS_MAX_PAYLOAD, NULL, 0, &dyn, &data))
		return 0;
	*id = r.req_id;
	assert_int_equal(r.status, 0);
	assert_int_equal(r.payload_len, 1);
	k = (char)data[0];
	free(dyn);
	return k;
}

/* The reply to id, the only request in flight. */
static char reply_kind(int fd, pfs_auth_sess *ss, uint64_t id)
{
	uint64_t got = 0;
	char k = next_reply(fd, ss, &got);

	if (k)
		assert_int_equal(got, id);
	return k;
}

static void test_bulk_spliced(void **state)
{
	pfs_server_opts o = { 0 };
	pfs_server_stats st;
	pfs_server *s;
	int fd;

	(void)state;
	reset();
	s = start(&o);
	fd = dial(s);
	send_write(fd, NULL, 1, 0, BULK);
	assert_int_equal(reply_kind(fd, NULL, 1), 'P');
	send_write(fd, NULL, 2, 7, 65536 + 3);
	assert_int_equal(reply_kind(fd, NULL, 2), 'P');
	send_write(fd, NULL, 3, 5, SPLIT_MIN - 1); /* split() says no */
	assert_int_equal(reply_kind(fd, NULL, 3), 'M');
	send_write(fd, NULL, 4, 9, 0);
	assert_int_equal(reply_kind(fd, NULL, 4), 'M');
	/* pipelined: each frame's bulk ends where the next header starts */
	for (uint64_t i = 0; i < 6; i++)
		send_write(fd, NULL, 10 + i, (uint32_t)i * 3, i % 2 ? 100 : BULK / 4 + (uint32_t)i);
	for (int i = 0; i < 6; i++) { /* workers may answer in any order */
		uint64_t id = 0;
		char k = next_reply(fd, NULL, &id);

		assert_true(id >= 10 && id < 16);
		assert_int_equal(k, (id - 10) % 2 ? 'M' : 'P');
	}
	assert_int_equal(atomic_load(&bulk_frames), 5);
	assert_int_equal(atomic_load(&mem_frames), 5);
	pfs_server_get_stats(s, &st);
	assert_int_equal(st.rx_alloc_bytes, 0);
	assert_int_equal(st.bulk_spliced, 5);
	assert_int_equal(st.bulk_undone, 0);
	/* a frame cut off in the middle of its bulk: its pipe goes back */
	{
		uint8_t f[FIELDS] = { 0 };
		uint32_t n = BULK;
		pfs_hdr h;
		uint8_t hb[PFS_HDR_LEN];

		memcpy(f + FIELDS - 4, &n, 4);
		pfs_hdr_init(&h, PFS_OP_OSS_WRITE, 99, 1, NULL);
		h.payload_len = FIELDS + n;
		pfs_hdr_encode(&h, hb);
		assert_int_equal(write(fd, hb, sizeof(hb)), (ssize_t)sizeof(hb));
		assert_int_equal(write(fd, f, sizeof(f)), (ssize_t)sizeof(f));
		assert_int_equal(write(fd, pattern, 5000), 5000);
		usleep(100000);
	}
	close(fd);
	pfs_server_stop(s);
	assert_int_equal(atomic_load(&n_gets), 6);
	assert_int_equal(atomic_load(&n_puts), atomic_load(&n_gets));
}

/* A pipe too small for the bulk (one page): the frame goes on into
 * memory, with the bytes already in the pipe read back, in order. */
static void test_bulk_pipe_full(void **state)
{
	pfs_server_opts o = { 0 };
	pfs_server_stats st;
	pfs_server *s;
	int fd;

	(void)state;
	reset();
	pipe_size = 4096;
	s = start(&o);
	fd = dial(s);
	for (uint64_t i = 0; i < 3; i++) {
		send_write(fd, NULL, 1 + i, (uint32_t)i * 11, BULK / 2 + (uint32_t)i);
		assert_int_equal(reply_kind(fd, NULL, 1 + i), 'M');
	}
	pfs_server_get_stats(s, &st);
	assert_int_equal(st.bulk_spliced, 3);
	assert_int_equal(st.bulk_undone, 3);
	close(fd);
	pfs_server_stop(s);
	assert_int_equal(atomic_load(&mem_frames), 3);
	assert_int_equal(atomic_load(&n_gets), 3);
	assert_int_equal(atomic_load(&n_puts), atomic_load(&n_gets));
}

/* split() needs more than the fields (the OSS reads a capability's room):
 * bulk bytes read into memory with the head go into the pipe first. */
static void test_bulk_head_past_fields(void **state)
{
	pfs_server_opts o = { 0 };
	pfs_server *s;
	int fd;

	(void)state;
	reset();
	hooks.head = FIELDS + 48;
	s = start(&o);
	fd = dial(s);
	send_write(fd, NULL, 1, 3, BULK - 3);
	assert_int_equal(reply_kind(fd, NULL, 1), 'P');
	send_write(fd, NULL, 2, 0, 40); /* shorter than the head: no split */
	assert_int_equal(reply_kind(fd, NULL, 2), 'M');
	send_write(fd, NULL, 3, 1, SPLIT_MIN);
	assert_int_equal(reply_kind(fd, NULL, 3), 'P');
	close(fd);
	pfs_server_stop(s);
	assert_int_equal(atomic_load(&n_puts), atomic_load(&n_gets));
}

static void keys(pfs_auth_key *srv, pfs_auth_key *cli, int integrity)
{
	memset(srv, 0, sizeof(*srv));
	srv->role = PFS_ROLE_OSS;
	srv->integrity = integrity;
	for (int i = 0; i < PFS_AUTH_KEY_LEN; i++)
		srv->key[i] = (uint8_t)(i * 7 + 1);
	memset(cli, 0, sizeof(*cli));
	cli->role = PFS_ROLE_CLIENT;
	assert_int_equal(pfs_auth_role_key(srv, PFS_ROLE_CLIENT, cli->key), 0);
}

/* integrity=header: WRITE data is not covered, so it is spliced;
 * integrity=full covers it: received into memory and checked.  A frame
 * whose MAC fails closes the connection: no handler sees it. */
static void test_bulk_sealed(void **state)
{
	static const int modes[2] = { PFS_INTEGRITY_HEADER, PFS_INTEGRITY_FULL };

	(void)state;
	assert_int_equal(pfs_auth_init(), 0);
	for (int m = 0; m < 2; m++) {
		pfs_auth_key sk, ck;
		pfs_server_opts o = { .auth = &sk };
		pfs_auth_sess ss;
		pfs_server *s;
		char want = modes[m] == PFS_INTEGRITY_HEADER ? 'P' : 'M';
		int fd, before;

		reset();
		keys(&sk, &ck, modes[m]);
		s = start(&o);
		fd = dial(s);
		assert_int_equal(pfs_auth_client(fd, &ck, 2000, &ss), 0);
		send_write(fd, &ss, 1, 0, BULK);
		assert_int_equal(reply_kind(fd, &ss, 1), want);
		send_write(fd, &ss, 2, 4, 70000);
		assert_int_equal(reply_kind(fd, &ss, 2), want);
		/* a frame sealed out of sequence */
		before = atomic_load(&mem_frames) + atomic_load(&bulk_frames);
		ss.seq_send++;
		send_write(fd, &ss, 3, 0, BULK / 2);
		assert_int_equal(reply_kind(fd, &ss, 3), 0);
		assert_int_equal(atomic_load(&mem_frames) + atomic_load(&bulk_frames), before);
		close(fd);
		pfs_server_stop(s);
		assert_int_equal(atomic_load(&n_puts), atomic_load(&n_gets));
		assert_int_equal(atomic_load(&n_gets), modes[m] == PFS_INTEGRITY_HEADER ? 3 : 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bulk_spliced),
		cmocka_unit_test(test_bulk_pipe_full),
		cmocka_unit_test(test_bulk_head_past_fields),
		cmocka_unit_test(test_bulk_sealed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
