/* test_mds_qosnet.c — the controller's OSS transport over real sockets:
 * QOS_STATS answers decoded, QOS_SET sets received intact, a silent OSS
 * and a closed port reported as failures, silent OSSes asked concurrently
 * (a round takes about one timeout, not one per OSS), and the reply
 * decoder refusing truncated, padded and lying payloads. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/buf.h"
#include "common/log.h"
#include "common/net.h"
#include "common/qosmsg.h"
#include "common/server.h"
#include "mds/qosnet.h"

struct fake {
	pfs_server *srv;
	int silent;               /* never reply */
	pthread_mutex_t lock;
	int sets;
	pfs_qos_alloc_set last;   /* decoded copy of the last QOS_SET */
	uint8_t mode_asked;
};

/* The payload a fake OSS answers QOS_STATS with. */
static void stats_payload(pfs_wbuf *w)
{
	pfs_qos_ost_info o = { .ost = 3, .capacity = 100e6, .served = 1e6, .queued = 2 };
	pfs_qos_stat s = { .job = "job-7", .ost = 3, .write_bytes = 5000, .arrived_bytes = 7000,
			   .arrived_rpcs = 3, .queued = 1, .rate = -1, .tokens = -1 };

	pfs_wbuf_u64(w, 123456789);
	pfs_wbuf_f64(w, 10.0);
	pfs_wbuf_u32(w, 1);
	pfs_qos_ost_info_encode(w, &o);
	pfs_wbuf_u32(w, 1);
	pfs_qos_stat_encode(w, &s);
}

static void handler(void *ctx, pfs_sconn *c, const pfs_hdr *h, uint8_t *payload)
{
	struct fake *f = ctx;
	pfs_rbuf b;
	pfs_wbuf w;
	int rc = -EOPNOTSUPP;

	if (f->silent) {
		free(payload);
		return;
	}
	pfs_wbuf_init(&w);
	pfs_rbuf_init(&b, payload, payload ? h->payload_len : 0);
	if (h->opcode == PFS_OP_OSS_QOS_STATS) {
		f->mode_asked = pfs_rbuf_u8(&b);
		rc = pfs_rbuf_done(&b);
		if (!rc)
			stats_payload(&w);
	} else if (h->opcode == PFS_OP_OSS_QOS_SET) {
		pfs_qos_alloc_set s;
		rc = pfs_qos_alloc_set_decode(&b, &s);
		if (!rc)
			rc = pfs_rbuf_done(&b);
		pthread_mutex_lock(&f->lock);
		if (!rc) {
			pfs_qos_alloc_set_free(&f->last);
			f->last = s;
			f->sets++;
		} else {
			pfs_qos_alloc_set_free(&s);
		}
		pthread_mutex_unlock(&f->lock);
	}
	pfs_sconn_reply(c, h, rc, w.data, rc ? 0 : w.len, NULL, 0);
	pfs_wbuf_free(&w);
	free(payload);
}

static void fake_start(struct fake *f, int silent)
{
	pfs_server_opts so = { .host = "127.0.0.1", .port = 0, .name = "fake-oss" };

	memset(f, 0, sizeof(*f));
	f->silent = silent;
	pthread_mutex_init(&f->lock, NULL);
	assert_int_equal(pfs_server_start(&so, handler, f, &f->srv), 0);
}

static void fake_stop(struct fake *f)
{
	pfs_server_stop(f->srv);
	pfs_qos_alloc_set_free(&f->last);
	pthread_mutex_destroy(&f->lock);
}

static mds_qos_oss oss_at(const char *name, uint16_t port)
{
	mds_qos_oss o;

	memset(&o, 0, sizeof(o));
	snprintf(o.name, sizeof(o.name), "%s", name);
	snprintf(o.host, sizeof(o.host), "127.0.0.1");
	o.ctl_port = port;
	o.up = 1;
	return o;
}

static double since(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) * 1e-9;
}

static void test_qosnet_collect_and_push(void **state)
{
	struct fake good, mute1, mute2;
	mds_qosnet *n = NULL;
	mds_qosnet_opts no = { .timeout_ms = 1000 };
	mds_qos_report rep[4];
	struct timespec t0;
	uint16_t closed_port;
	int fd, rcs[4];
	(void)state;

	pfs_log_init("test", PFS_LOG_ERR);
	fake_start(&good, 0);
	fake_start(&mute1, 1);
	fake_start(&mute2, 1);
	/* a port nobody listens on */
	assert_int_equal(pfs_net_listen("127.0.0.1", 0, &fd), 0);
	assert_int_equal(pfs_net_local_port(fd, &closed_port), 0);
	close(fd);

	mds_qos_oss oss[4] = {
		oss_at("good", pfs_server_port(good.srv)),
		oss_at("mute1", pfs_server_port(mute1.srv)),
		oss_at("mute2", pfs_server_port(mute2.srv)),
		oss_at("closed", closed_port),
	};
	assert_int_equal(mds_qosnet_create(&no, &n), 0);
	mds_qos_oss_ops ops = mds_qosnet_ops(n);
	memset(rep, 0, sizeof(rep));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ops.collect(ops.ctx, oss, 4, rep);
	/* two silent OSSes cost one timeout, not two */
	assert_true(since(&t0) < 1.8);
	assert_int_equal(rep[0].rc, 0);
	assert_int_equal(good.mode_asked, PFS_QOS_STATS_PERIOD);
	assert_int_equal(rep[0].snapshot_ns, 123456789);
	assert_true(rep[0].period_s == 10.0);
	assert_int_equal(rep[0].n_osts, 1);
	assert_int_equal(rep[0].osts[0].ost, 3);
	assert_true(rep[0].osts[0].capacity == 100e6);
	assert_int_equal(rep[0].n, 1);
	assert_string_equal(rep[0].stats[0].job, "job-7");
	assert_int_equal(rep[0].stats[0].arrived_bytes, 7000);
	assert_true(rep[1].rc < 0);
	assert_true(rep[2].rc < 0);
	assert_true(rep[3].rc < 0);
	for (int i = 0; i < 4; i++)
		mds_qos_report_free(&rep[i]);

	/* push: the set arrives intact; the others fail */
	pfs_qos_alloc rows[2] = {
		{ .job = "job-7", .ost = 3, .rate = 35e6, .nodes = 4 },
		{ .job = "job-8", .ost = 3, .rate = 65e6, .nodes = 1 },
	};
	pfs_qos_alloc_set sets[4];
	for (int i = 0; i < 4; i++)
		sets[i] = (pfs_qos_alloc_set){ .generation = 42, .mode = PFS_QOS_MODE_RATES,
					       .adaptbf_period = 0.1, .n = 2, .rows = rows };
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ops.push(ops.ctx, oss, sets, 4, rcs);
	assert_true(since(&t0) < 1.8);
	assert_int_equal(rcs[0], 0);
	assert_true(rcs[1] < 0 && rcs[2] < 0 && rcs[3] < 0);
	pthread_mutex_lock(&good.lock);
	assert_int_equal(good.sets, 1);
	assert_int_equal(good.last.generation, 42);
	assert_int_equal(good.last.n, 2);
	assert_string_equal(good.last.rows[1].job, "job-8");
	assert_true(good.last.rows[1].rate == 65e6);
	assert_true(good.last.rows[0].nodes == 4);
	pthread_mutex_unlock(&good.lock);

	/* a new address for an OSS name: the pool follows it */
	oss[3].ctl_port = pfs_server_port(good.srv);
	ops.push(ops.ctx, &oss[3], &sets[3], 1, rcs);
	assert_int_equal(rcs[0], 0);
	assert_int_equal(good.sets, 2);

	mds_qosnet_destroy(n);
	fake_stop(&good);
	fake_stop(&mute1);
	fake_stop(&mute2);
}

static void test_qosnet_decode_refuses_bad_replies(void **state)
{
	pfs_wbuf w;
	mds_qos_report r;
	uint8_t *buf;
	(void)state;

	pfs_wbuf_init(&w);
	stats_payload(&w);
	assert_int_equal(mds_qosnet_decode_stats(w.data, w.len, &r), 0);
	mds_qos_report_free(&r);
	/* every truncation, and a trailing byte */
	for (size_t n = 0; n < w.len; n++)
		assert_int_equal(mds_qosnet_decode_stats(w.data, n, &r), -EBADMSG);
	buf = malloc(w.len + 1);
	assert_non_null(buf);
	memcpy(buf, w.data, w.len);
	buf[w.len] = 0;
	assert_int_equal(mds_qosnet_decode_stats(buf, w.len + 1, &r), -EBADMSG);
	/* counts that promise more than the bytes hold */
	memcpy(buf, w.data, w.len);
	buf[16] = 0xff; /* n_osts low byte */
	buf[19] = 0x7f;
	assert_int_equal(mds_qosnet_decode_stats(buf, w.len, &r), -EBADMSG);
	assert_null(r.osts);
	/* a NaN period */
	memcpy(buf, w.data, w.len);
	memset(buf + 8, 0xff, 8);
	assert_int_equal(mds_qosnet_decode_stats(buf, w.len, &r), -EBADMSG);
	free(buf);
	pfs_wbuf_free(&w);
	assert_int_equal(mds_qosnet_decode_stats(NULL, 0, &r), -EBADMSG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_qosnet_collect_and_push),
		cmocka_unit_test(test_qosnet_decode_refuses_bad_replies),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
