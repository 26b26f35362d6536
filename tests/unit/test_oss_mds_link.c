/* test_oss_mds_link.c — registration and heartbeats against a fake MDS
 * (a pfs_server in-process): the REGISTER payload, indexes bound into the
 * server, heartbeats carrying them, data served while the MDS is away, and
 * re-registration when an MDS comes back on the same port. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/buf.h"
#include "common/log.h"
#include "common/rpc.h"
#include "common/server.h"
#include "oss/mds_link.h"

#define NOSTS 2

typedef struct fake_mds {
	pthread_mutex_t lock;
	unsigned registers, heartbeats, bad;
	uint32_t base;               /* index of the first OST */
	char name[64], host[64];
	uint16_t data_port, ctl_port;
	char uuid[NOSTS][64];
	uint32_t hb_index[NOSTS];
	int refuse_heartbeat;        /* reply -ENOENT: "who are you?" */
} fake_mds;

static void fake_handler(void *ctx, pfs_sconn *c, const pfs_hdr *h, uint8_t *payload)
{
	fake_mds *m = ctx;
	pfs_rbuf b;
	pfs_wbuf w;

	pfs_rbuf_init(&b, payload, h->payload_len);
	pfs_wbuf_init(&w);
	pthread_mutex_lock(&m->lock);
	if (h->opcode == PFS_OP_MDS_OSS_REGISTER) {
		uint32_t n;

		pfs_rbuf_cstr(&b, m->name, sizeof(m->name));
		pfs_rbuf_cstr(&b, m->host, sizeof(m->host));
		m->data_port = pfs_rbuf_u16(&b);
		m->ctl_port = pfs_rbuf_u16(&b);
		n = pfs_rbuf_u32(&b);
		if (n != NOSTS)
			m->bad++;
		for (uint32_t i = 0; i < n && i < NOSTS; i++) {
			pfs_rbuf_cstr(&b, m->uuid[i], sizeof(m->uuid[i]));
			uint64_t total = pfs_rbuf_u64(&b), avail = pfs_rbuf_u64(&b);
			pfs_rbuf_u64(&b);
			if (!total || avail > total)
				m->bad++;
		}
		if (pfs_rbuf_done(&b))
			m->bad++;
		m->registers++;
		pfs_wbuf_u32(&w, NOSTS);
		for (uint32_t i = 0; i < NOSTS; i++)
			pfs_wbuf_u32(&w, m->base + i);
		pfs_sconn_reply(c, h, 0, w.data, w.len, NULL, 0);
	} else if (h->opcode == PFS_OP_MDS_OSS_HEARTBEAT) {
		char name[64];
		uint32_t n;

		pfs_rbuf_cstr(&b, name, sizeof(name));
		n = pfs_rbuf_u32(&b);
		for (uint32_t i = 0; i < n && i < NOSTS; i++) {
			m->hb_index[i] = pfs_rbuf_u32(&b);
			pfs_rbuf_u64(&b);
			pfs_rbuf_u64(&b);
			pfs_rbuf_u64(&b);
		}
		if (pfs_rbuf_done(&b) || n != NOSTS || strcmp(name, m->name))
			m->bad++;
		m->heartbeats++;
		pfs_sconn_reply(c, h, m->refuse_heartbeat ? -ENOENT : 0, NULL, 0, NULL, 0);
	} else {
		pfs_sconn_reply(c, h, -EOPNOTSUPP, NULL, 0, NULL, 0);
	}
	pthread_mutex_unlock(&m->lock);
	pfs_wbuf_free(&w);
	free(payload);
}

static unsigned get_count(fake_mds *m, unsigned *field)
{
	unsigned v;
	pthread_mutex_lock(&m->lock);
	v = *field;
	pthread_mutex_unlock(&m->lock);
	return v;
}

/* Wait (generously; this is not a speed test) until cond holds. */
#define WAIT_FOR(cond)                                                  \
	do {                                                            \
		int waited_ = 0;                                        \
		while (!(cond) && waited_ < 20000) {                    \
			usleep(1000);                                   \
			waited_++;                                      \
		}                                                       \
		assert_true(cond);                                      \
	} while (0)

static void quiet(int level, const char *msg, void *arg) {}

static void test_mds_link_register_heartbeat_restart(void **state)
{
	char tmp[64] = "/tmp/pfs-test-link-XXXXXX", dir[96], err[256], cmd[128];
	oss_store *st[NOSTS];
	oss_server *srv;
	oss_mds_link *link;
	oss_server_opts so = { 0 };
	oss_mds_link_opts lo = { 0 };
	pfs_server_opts mo = { 0 };
	pfs_server *mds;
	fake_mds m;
	uint16_t mport;

	pfs_log_set_sink(quiet, NULL);
	memset(&m, 0, sizeof(m));
	pthread_mutex_init(&m.lock, NULL);
	m.base = 10;
	assert_non_null(mkdtemp(tmp));
	for (int i = 0; i < NOSTS; i++) {
		snprintf(dir, sizeof(dir), "%s/ost%d", tmp, i);
		assert_int_equal(oss_store_open(dir, NULL, &st[i], err, sizeof(err)), 0);
	}
	so.host = "127.0.0.1";
	so.io_threads = 2;
	so.osts = st;
	so.n_osts = NOSTS;
	assert_int_equal(oss_server_start(&so, &srv, err, sizeof(err)), 0);
	mo.host = "127.0.0.1";
	mo.name = "fake-mds";
	assert_int_equal(pfs_server_start(&mo, fake_handler, &m, &mds), 0);
	mport = pfs_server_port(mds);

	lo.mds_host = "127.0.0.1";
	lo.mds_port = mport;
	lo.name = "oss-test";
	lo.advertise_host = "10.1.2.3";
	lo.heartbeat_ms = 20;
	assert_int_equal(oss_mds_link_start(&lo, srv, &link), 0);

	/* Registration carries who we are; the indexes get bound. */
	WAIT_FOR(get_count(&m, &m.heartbeats) >= 2);
	assert_int_equal(get_count(&m, &m.bad), 0);
	assert_int_equal(get_count(&m, &m.registers), 1);
	assert_string_equal(m.name, "oss-test");
	assert_string_equal(m.host, "10.1.2.3");
	assert_int_equal(m.data_port, oss_server_data_port(srv));
	assert_int_equal(m.ctl_port, oss_server_ctl_port(srv));
	assert_string_equal(m.uuid[0], oss_store_uuid(st[0]));
	assert_string_equal(m.uuid[1], oss_store_uuid(st[1]));
	assert_int_equal(oss_server_get_index(srv, 0), 10);
	assert_int_equal(oss_server_get_index(srv, 1), 11);
	pthread_mutex_lock(&m.lock);
	assert_int_equal(m.hb_index[0], 10);
	assert_int_equal(m.hb_index[1], 11);
	pthread_mutex_unlock(&m.lock);
	WAIT_FOR(oss_mds_link_registered(link));

	/* The MDS goes away: the link notices, the indexes stay bound. */
	pfs_server_stop(mds);
	WAIT_FOR(!oss_mds_link_registered(link));
	assert_int_equal(oss_server_get_index(srv, 1), 11);
	{
		/* ... and data is still served for them. */
		pfs_rpc_pool *pool;
		pfs_rpc_reply rep = { 0 };
		pfs_wbuf w;

		assert_int_equal(pfs_rpc_pool_create("127.0.0.1", oss_server_data_port(srv),
						     NULL, &pool), 0);
		pfs_wbuf_init(&w);
		pfs_wbuf_u32(&w, 11);
		pfs_wbuf_u64(&w, 1);
		pfs_wbuf_u64(&w, 0);
		pfs_wbuf_u32(&w, 5);
		assert_int_equal(pfs_rpc_call(pool, PFS_OP_OSS_WRITE, "j", 0, w.data, w.len,
					      "hello", 5, &rep), 0);
		pfs_rpc_reply_free(&rep);
		pfs_wbuf_free(&w);
		pfs_rpc_pool_destroy(pool);
		{
			char back[8];
			size_t got;
			assert_int_equal(oss_store_read(st[1], 1, 0, back, 5, &got), 0);
			assert_int_equal(got, 5);
			assert_memory_equal(back, "hello", 5);
		}
	}

	/* A new MDS on the same port: re-registration without an OSS restart.
	 * It gives new indexes, which are bound. */
	pthread_mutex_lock(&m.lock);
	m.registers = m.heartbeats = 0;
	m.base = 20;
	pthread_mutex_unlock(&m.lock);
	mo.port = mport;
	assert_int_equal(pfs_server_start(&mo, fake_handler, &m, &mds), 0);
	WAIT_FOR(get_count(&m, &m.heartbeats) >= 1);
	WAIT_FOR(oss_mds_link_registered(link));
	assert_int_equal(get_count(&m, &m.registers), 1);
	assert_int_equal(oss_server_get_index(srv, 0), 20);
	assert_int_equal(oss_mds_link_registrations(link), 2);

	/* An MDS that forgets us (error on heartbeat) gets a new REGISTER. */
	pthread_mutex_lock(&m.lock);
	m.refuse_heartbeat = 1;
	pthread_mutex_unlock(&m.lock);
	WAIT_FOR(get_count(&m, &m.registers) >= 2);
	pthread_mutex_lock(&m.lock);
	m.refuse_heartbeat = 0;
	pthread_mutex_unlock(&m.lock);
	assert_int_equal(get_count(&m, &m.bad), 0);

	oss_mds_link_stop(link);
	pfs_server_stop(mds);
	oss_server_stop(srv);
	for (int i = 0; i < NOSTS; i++)
		oss_store_close(st[i]);
	pthread_mutex_destroy(&m.lock);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	assert_int_equal(system(cmd), 0);
	pfs_log_set_sink(NULL, NULL);
}

static void test_mds_link_no_mds(void **state)
{
	char tmp[64] = "/tmp/pfs-test-link-XXXXXX", dir[96], err[256], cmd[128];
	oss_store *st;
	oss_server *srv;
	oss_mds_link *link;
	oss_server_opts so = { 0 };
	oss_mds_link_opts lo = { 0 };
	pfs_server_opts mo = { 0 };
	pfs_server *probe;
	uint16_t dead;

	pfs_log_set_sink(quiet, NULL);
	assert_non_null(mkdtemp(tmp));
	snprintf(dir, sizeof(dir), "%s/ost", tmp);
	assert_int_equal(oss_store_open(dir, NULL, &st, err, sizeof(err)), 0);
	so.host = "127.0.0.1";
	so.osts = &st;
	so.n_osts = 1;
	assert_int_equal(oss_server_start(&so, &srv, err, sizeof(err)), 0);
	/* A port nobody listens on: take a free one and release it. */
	mo.host = "127.0.0.1";
	assert_int_equal(pfs_server_start(&mo, NULL, NULL, &probe), 0);
	dead = pfs_server_port(probe);
	pfs_server_stop(probe);
	lo.mds_host = "127.0.0.1";
	lo.mds_port = dead;
	lo.name = "lonely";
	lo.advertise_host = "127.0.0.1";
	lo.heartbeat_ms = 10;
	assert_int_equal(oss_mds_link_start(&lo, srv, &link), 0);
	usleep(50000);
	/* Never registered, index unknown, and stop returns promptly. */
	assert_false(oss_mds_link_registered(link));
	assert_int_equal(oss_mds_link_registrations(link), 0);
	assert_int_equal(oss_server_get_index(srv, 0), OSS_INDEX_NONE);
	oss_mds_link_stop(link);
	oss_server_stop(srv);
	oss_store_close(st);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	assert_int_equal(system(cmd), 0);
	pfs_log_set_sink(NULL, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mds_link_register_heartbeat_restart),
		cmocka_unit_test(test_mds_link_no_mds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
