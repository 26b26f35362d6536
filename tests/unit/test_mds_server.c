/* test_mds_server.c — the MDS dispatcher over real sockets: a server on
 * port 0 in-process, real frames through common/rpc.c, malformed frames on a
 * raw socket, the destroyer talking to a fake OSS control port, and the job
 * registry, QoS and job statistics opcodes with the caller's uid. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/auth.h"
#include "common/buf.h"
#include "common/capa.h"
#include "common/log.h"
#include "common/msg.h"
#include "common/net.h"
#include "common/rpc.h"
#include "common/server.h"
#include "common/qosmsg.h"
#include "mds/destroy.h"
#include "mds/jobs.h"
#include "mds/mdqos.h"
#include "mds/ns.h"
#include "mds/qosctl.h"
#include "mds/server.h"

/* A fake OSS control port that records destroyed objects.  With batch
 * it takes several ids per DESTROY (today's OSS), else exactly one (an
 * older OSS: -EBADMSG for a batch). */
struct fake_oss {
	pfs_server *srv;
	pthread_mutex_t lock;
	uint64_t objs[256];
	uint32_t osts[256];
	int n;
	int batch;
	int reqs;           /* DESTROY requests answered 0 */
};

struct fx {
	char dir[64], db[96];
	mds_ns *ns;
	mds_destroyer *d;
	mds_server *s;
	mds_jobs *jobs;
	mds_qosctl *qos;
	pfs_rpc_pool *pool;
	struct fake_oss oss;
};

/* The QoS controller's OSS side: nobody answers (no step runs here). */
static void no_collect(void *ctx, const mds_qos_oss *oss, size_t n, mds_qos_report *out)
{
	for (size_t i = 0; i < n; i++)
		out[i].rc = -ETIMEDOUT;
}

static void no_push(void *ctx, const mds_qos_oss *oss, const pfs_qos_alloc_set *sets,
		    size_t n, int *rc)
{
	for (size_t i = 0; i < n; i++)
		rc[i] = -ETIMEDOUT;
}

static void oss_handler(void *ctx, pfs_sconn *c, const pfs_hdr *h, uint8_t *payload)
{
	struct fake_oss *o = ctx;
	pfs_rbuf b;
	int rc = -EOPNOTSUPP;

	pfs_rbuf_init(&b, payload, payload ? h->payload_len : 0);
	if (h->opcode == PFS_OP_OSS_DESTROY) {
		uint32_t ost = pfs_rbuf_u32(&b);
		uint64_t obj[256];
		int n = 0;

		pthread_mutex_lock(&o->lock);
		do
			obj[n++] = pfs_rbuf_u64(&b);
		while (o->batch && n < 256 && pfs_rbuf_left(&b) >= 8);
		rc = pfs_rbuf_done(&b);
		if (!rc) {
			o->reqs++;
			for (int i = 0; i < n && o->n < 256; i++) {
				o->osts[o->n] = ost;
				o->objs[o->n++] = obj[i];
			}
		}
		pthread_mutex_unlock(&o->lock);
	}
	pfs_sconn_reply(c, h, rc, NULL, 0, NULL, 0);
	free(payload);
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	pfs_server_opts so = { .host = "127.0.0.1", .port = 0, .name = "fake-oss" };
	mds_server_opts mo = { .host = "127.0.0.1", .port = 0, .sync_on_setsize = 1 };
	pfs_rpc_opts ro = { .max_conns = 4, .timeout_ms = 10000, .retry_ms = 100 };

	pfs_log_init("test", PFS_LOG_ERR);
	strcpy(f->dir, "/tmp/test_mds_server.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->db, sizeof(f->db), "%s/db", f->dir);
	mds_ns_opts no = { .path = f->db, .mapsize = 1ull << 30 };
	assert_int_equal(mds_ns_open(&no, &f->ns), 0);
	assert_int_equal(mds_destroyer_start(f->ns, 50, &f->d), 0);
	assert_int_equal(mds_jobs_open(f->ns, NULL, &f->jobs), 0);
	char err[256];
	mds_qosctl_opts qo = { .policy = "none", .ops = { no_collect, no_push, NULL } };
	assert_int_equal(mds_qosctl_create(f->ns, f->jobs, &qo, &f->qos, err, sizeof(err)), 0);
	mo.jobs = f->jobs;
	mo.qos = f->qos;
	assert_int_equal(mds_server_start(f->ns, &mo, &f->s), 0);
	assert_true(mds_server_port(f->s) != 0);
	pthread_mutex_init(&f->oss.lock, NULL);
	assert_int_equal(pfs_server_start(&so, oss_handler, &f->oss, &f->oss.srv), 0);
	assert_int_equal(pfs_rpc_pool_create("127.0.0.1", mds_server_port(f->s), &ro, &f->pool), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char p[160];

	pfs_rpc_pool_destroy(f->pool);
	mds_server_stop(f->s);
	mds_qosctl_destroy(f->qos);
	mds_jobs_close(f->jobs);
	mds_destroyer_stop(f->d);
	pfs_server_stop(f->oss.srv);
	pthread_mutex_destroy(&f->oss.lock);
	mds_ns_close(f->ns);
	snprintf(p, sizeof(p), "%s/data.mdb", f->db);
	unlink(p);
	snprintf(p, sizeof(p), "%s/lock.mdb", f->db);
	unlink(p);
	snprintf(p, sizeof(p), "%s/mds.lock", f->db);
	unlink(p);
	rmdir(f->db);
	rmdir(f->dir);
	free(f);
	return 0;
}

static const pfs_cred root = { 0, 0, 0, { 0 } };

/* One call; the reply payload is copied into *out (caller frees). */
static int call(struct fx *f, uint16_t op, const char *job, pfs_wbuf *req, uint8_t **out,
		size_t *outlen)
{
	pfs_rpc_reply rep = { 0 };
	int rc;

	pfs_rpc_reply_init(&rep);
	assert_int_equal(pfs_wbuf_error(req), 0);
	rc = pfs_rpc_call(f->pool, op, job, 0, req->data, req->len, NULL, 0, &rep);
	if (out) {
		*out = NULL;
		*outlen = 0;
		if (rc == 0) {
			*out = malloc(rep.len + 1);
			memcpy(*out, rep.data, rep.len);
			*outlen = rep.len;
		}
	}
	pfs_rpc_reply_free(&rep);
	pfs_wbuf_reset(req);
	return rc;
}

/* call() with the caller's uid in the header. */
static int call_as(struct fx *f, uint16_t op, const char *job, uint32_t uid, pfs_wbuf *req,
		   uint8_t **out, size_t *outlen)
{
	pfs_rpc_reply rep = { 0 };
	pfs_rpc_tag tag = { .job = job, .uid = uid, .gid = uid };
	int rc;

	assert_int_equal(pfs_wbuf_error(req), 0);
	rc = pfs_rpc_call_tag(f->pool, op, &tag, 0, req->data, req->len, NULL, 0, &rep);
	if (out) {
		*out = NULL;
		*outlen = 0;
		if (rc == 0) {
			*out = malloc(rep.len + 1);
			memcpy(*out, rep.data, rep.len);
			*outlen = rep.len;
		}
	}
	pfs_rpc_reply_free(&rep);
	pfs_wbuf_reset(req);
	return rc;
}

static void register_ost(struct fx *f)
{
	pfs_wbuf b;
	uint8_t *out;
	size_t len;
	pfs_rbuf r;

	pfs_wbuf_init(&b);
	pfs_wbuf_str(&b, "oss0");
	pfs_wbuf_str(&b, "127.0.0.1");
	pfs_wbuf_u16(&b, 1);
	pfs_wbuf_u16(&b, pfs_server_port(f->oss.srv));
	pfs_wbuf_u32(&b, 2);
	for (int i = 0; i < 2; i++) {
		pfs_wbuf_str(&b, i ? "ost-b" : "ost-a");
		pfs_wbuf_u64(&b, 1ull << 40);
		pfs_wbuf_u64(&b, 1ull << 39);
		pfs_wbuf_u64(&b, 0);
	}
	assert_int_equal(call(f, PFS_OP_MDS_OSS_REGISTER, "oss", &b, &out, &len), 0);
	pfs_rbuf_init(&r, out, len);
	assert_int_equal(pfs_rbuf_u32(&r), 2);
	assert_int_equal(pfs_rbuf_u32(&r), 0);
	assert_int_equal(pfs_rbuf_u32(&r), 1);
	assert_int_equal(pfs_rbuf_done(&r), 0);
	free(out);
	pfs_wbuf_free(&b);
}

static void test_server_ops(void **state)
{
	struct fx *f = *state;
	pfs_wbuf b;
	pfs_rbuf r;
	uint8_t *out;
	size_t len;
	pfs_attr a;
	pfs_layout l;

	pfs_wbuf_init(&b);
	register_ost(f);

	/* Heartbeat, then OST_LIST. */
	pfs_wbuf_str(&b, "oss0");
	pfs_wbuf_u32(&b, 1);
	pfs_wbuf_u32(&b, 1);
	pfs_wbuf_u64(&b, 1ull << 40);
	pfs_wbuf_u64(&b, 1ull << 38);
	pfs_wbuf_u64(&b, 7);
	assert_int_equal(call(f, PFS_OP_MDS_OSS_HEARTBEAT, "oss", &b, NULL, NULL), 0);
	assert_int_equal(call(f, PFS_OP_MDS_OST_LIST, "admin", &b, &out, &len), 0);
	pfs_rbuf_init(&r, out, len);
	assert_int_equal(pfs_rbuf_u32(&r), 2);
	pfs_ost_info oi;
	assert_int_equal(pfs_ost_info_decode(&r, &oi), 0);
	assert_string_equal(oi.uuid, "ost-a");
	assert_int_equal(oi.up, 1);
	assert_int_equal(pfs_ost_info_decode(&r, &oi), 0);
	assert_int_equal(oi.index, 1);
	assert_int_equal(oi.free_bytes, 1ull << 38);
	assert_int_equal(oi.objects, 7);
	assert_int_equal(pfs_rbuf_done(&r), 0);
	free(out);

	/* MKDIR + CREATE + LOOKUP + READDIR. */
	pfs_cred_encode(&b, &root);
	pfs_wbuf_u64(&b, 1);
	pfs_wbuf_str(&b, "dir");
	pfs_wbuf_u32(&b, 0755);
	assert_int_equal(call(f, PFS_OP_MDS_MKDIR, "jobA", &b, &out, &len), 0);
	pfs_rbuf_init(&r, out, len);
	assert_int_equal(pfs_attr_decode(&r, &a), 0);
	assert_int_equal(pfs_rbuf_done(&r), 0);
	assert_true(S_ISDIR(a.mode));
	uint64_t dir = a.ino;
	free(out);

	pfs_cred_encode(&b, &root);
	pfs_wbuf_u64(&b, dir);
	pfs_wbuf_str(&b, "file");
	pfs_wbuf_u32(&b, 0644);
	pfs_wbuf_u32(&b, PFS_CREATE_EXCL);
	pfs_wbuf_u32(&b, 0);
	pfs_wbuf_u32(&b, 0);
	assert_int_equal(call(f, PFS_OP_MDS_CREATE, "jobA", &b, &out, &len), 0);
	pfs_rbuf_init(&r, out, len);
	assert_int_equal(pfs_attr_decode(&r, &a), 0);
	assert_int_equal(pfs_layout_decode(&r, &l), 0);
	assert_int_equal(pfs_rbuf_done(&r), 0);
	assert_int_equal(l.stripe_count, 2);
	free(out);

	pfs_cred_encode(&b, &root);
	pfs_wbuf_u64(&b, dir);
	pfs_wbuf_str(&b, "file");
	assert_int_equal(call(f, PFS_OP_MDS_LOOKUP, "jobA", &b, &out, &len), 0);
	pfs_attr a2;
	pfs_rbuf_init(&r, out, len);
	assert_int_equal(pfs_attr_decode(&r, &a2), 0);
	assert_int_equal(a2.ino, a.ino);
	free(out);

	pfs_cred_encode(&b, &root);
	pfs_wbuf_u64(&b, dir);
	pfs_wbuf_u64(&b, 0);
	pfs_wbuf_u32(&b, 100000); /* capped by the server */
	assert_int_equal(call(f, PFS_OP_MDS_READDIR, "jobA", &b, &out, &len), 0);
	pfs_rbuf_init(&r, out, len);
	assert_int_equal(pfs_rbuf_u32(&r), 1);
	assert_int_equal(pfs_rbuf_u8(&r), 1);
	assert_int_equal(pfs_rbuf_u64(&r), a.ino);
	assert_true(S_ISREG(pfs_rbuf_u32(&r)));
	pfs_rbuf_u64(&r);
	char nm[64];
	pfs_rbuf_cstr(&r, nm, sizeof(nm));
	assert_string_equal(nm, "file");
	assert_int_equal(pfs_rbuf_done(&r), 0);
	free(out);

	/* GETLAYOUT: a file's full layout; a directory's default as size,
	 * count and first OST only.  SETSTRIPE without a stripe_offset (an
	 * older client) means any; with one, the default keeps it. */
	for (int with_off = 0; with_off < 2; with_off++) {
		pfs_cred_encode(&b, &root);
		pfs_wbuf_u64(&b, dir);
		pfs_wbuf_u32(&b, 2 << 20);
		pfs_wbuf_u32(&b, 1);
		if (with_off)
			pfs_wbuf_u32(&b, 0);
		assert_int_equal(call(f, PFS_OP_MDS_SETSTRIPE, "jobA", &b, NULL, NULL), 0);
		pfs_cred_encode(&b, &root);
		pfs_wbuf_u64(&b, dir);
		assert_int_equal(call(f, PFS_OP_MDS_GETLAYOUT, "jobA", &b, &out, &len), 0);
		pfs_rbuf_init(&r, out, len);
		assert_int_equal(pfs_rbuf_u32(&r), 2 << 20);
		assert_int_equal(pfs_rbuf_u32(&r), 1);
		assert_int_equal(pfs_rbuf_u32(&r), with_off ? 0 : PFS_STRIPE_OFFSET_ANY);
		assert_int_equal(pfs_rbuf_done(&r), 0);
		free(out);
	}
	pfs_cred_encode(&b, &root);
	pfs_wbuf_u64(&b, a.ino);
	assert_int_equal(call(f, PFS_OP_MDS_GETLAYOUT, "jobA", &b, &out, &len), 0);
	pfs_layout l2;
	pfs_rbuf_init(&r, out, len);
	assert_int_equal(pfs_layout_decode(&r, &l2), 0);
	assert_int_equal(pfs_rbuf_done(&r), 0);
	assert_int_equal(l2.stripe_count, 2);
	assert_memory_equal(l2.stripe, l.stripe, 2 * sizeof(pfs_stripe));
	free(out);

	/* SETSIZE then GETATTR. */
	pfs_cred_encode(&b, &root);
	pfs_wbuf_u64(&b, a.ino);
	pfs_wbuf_u64(&b, 5000);
	pfs_wbuf_i64(&b, 0);
	assert_int_equal(call(f, PFS_OP_MDS_SETSIZE, "jobA", &b, NULL, NULL), 0);
	pfs_cred_encode(&b, &root);
	pfs_wbuf_u64(&b, a.ino);
	assert_int_equal(call(f, PFS_OP_MDS_GETATTR, "jobA", &b, &out, &len), 0);
	pfs_rbuf_init(&r, out, len);
	assert_int_equal(pfs_attr_decode(&r, &a2), 0);
	assert_int_equal(a2.size, 5000);
	free(out);

	/* MDS_SYNC (fsync, fsyncdir): after a commit that is not synced
	 * (SETXATTR), the reply comes once the database is on disk; an empty
	 * reply; a malformed request syncs nothing.  (The periodic thread
	 * syncs once a second: it may add syncs, hardly in this window.) */
	mds_sync_stats st0, st1;
	pfs_cred_encode(&b, &root);
	pfs_wbuf_u64(&b, a.ino);
	pfs_wbuf_str(&b, "user.sync");
	pfs_wbuf_str(&b, "v");
	pfs_wbuf_u32(&b, 0);
	assert_int_equal(call(f, PFS_OP_MDS_SETXATTR, "jobA", &b, NULL, NULL), 0);
	mds_ns_sync_stats(f->ns, &st0);
	pfs_cred_encode(&b, &root);
	pfs_wbuf_u64(&b, a.ino);
	assert_int_equal(call(f, PFS_OP_MDS_SYNC, "jobA", &b, &out, &len), 0);
	assert_int_equal(len, 0);
	free(out);
	mds_ns_sync_stats(f->ns, &st1);
	assert_true(st1.syncs >= st0.syncs + 1);
	assert_true(st1.durable_txn >= st0.last_txn);
	pfs_cred_encode(&b, &root);
	pfs_wbuf_u64(&b, 0);
	pfs_wbuf_u8(&b, 1);
	assert_int_equal(call(f, PFS_OP_MDS_SYNC, "jobA", &b, NULL, NULL), -EBADMSG);

	/* xattr round trip. */
	pfs_cred_encode(&b, &root);
	pfs_wbuf_u64(&b, a.ino);
	pfs_wbuf_str(&b, "user.k");
	pfs_wbuf_str(&b, "value");
	pfs_wbuf_u32(&b, 0);
	assert_int_equal(call(f, PFS_OP_MDS_SETXATTR, "jobA", &b, NULL, NULL), 0);
	pfs_cred_encode(&b, &root);
	pfs_wbuf_u64(&b, a.ino);
	pfs_wbuf_str(&b, "user.k");
	assert_int_equal(call(f, PFS_OP_MDS_GETXATTR, "jobA", &b, &out, &len), 0);
	pfs_rbuf_init(&r, out, len);
	size_t vl;
	const char *v = pfs_rbuf_str(&r, 100, &vl);
	assert_int_equal(vl, 5);
	assert_memory_equal(v, "value", 5);
	free(out);

	/* STATFS. */
	pfs_cred_encode(&b, &root);
	assert_int_equal(call(f, PFS_OP_MDS_STATFS, "jobA", &b, &out, &len), 0);
	pfs_statfs st;
	pfs_rbuf_init(&r, out, len);
	assert_int_equal(pfs_statfs_decode(&r, &st), 0);
	assert_int_equal(st.blocks, 2 * ((1ull << 40) / 4096));
	assert_int_equal(st.bfree, ((1ull << 39) + (1ull << 38)) / 4096);
	free(out);

	/* Errors: trailing garbage, truncated, unknown opcode, long name. */
	pfs_cred_encode(&b, &root);
	pfs_wbuf_u64(&b, a.ino);
	pfs_wbuf_u8(&b, 0);
	assert_int_equal(call(f, PFS_OP_MDS_GETATTR, "jobA", &b, NULL, NULL), -EBADMSG);
	pfs_cred_encode(&b, &root);
	pfs_wbuf_u32(&b, 1);
	assert_int_equal(call(f, PFS_OP_MDS_GETATTR, "jobA", &b, NULL, NULL), -EBADMSG);
	assert_int_equal(call(f, 9999, "jobA", &b, NULL, NULL), -EOPNOTSUPP);
	assert_int_equal(call(f, PFS_OP_OSS_READ, "jobA", &b, NULL, NULL), -EOPNOTSUPP);
	char longname[400];
	memset(longname, 'n', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	pfs_cred_encode(&b, &root);
	pfs_wbuf_u64(&b, 1);
	pfs_wbuf_str(&b, longname);
	assert_int_equal(call(f, PFS_OP_MDS_LOOKUP, "jobA", &b, NULL, NULL), -ENAMETOOLONG);
	pfs_wbuf_u32(&b, 0);
	pfs_wbuf_u32(&b, 0);
	pfs_wbuf_u32(&b, 1000); /* ngroups too large */
	assert_int_equal(call(f, PFS_OP_MDS_GETATTR, "jobA", &b, NULL, NULL), -EBADMSG);
	pfs_wbuf_str(&b, "oss0");
	pfs_wbuf_u32(&b, 0x7fffffff); /* count beyond the payload */
	assert_int_equal(call(f, PFS_OP_MDS_OSS_HEARTBEAT, "oss", &b, NULL, NULL), -EBADMSG);

	/* Per-job counters. */
	assert_int_equal(mds_server_job_ops(f->s, "jobA", PFS_OP_MDS_MKDIR), 1);
	assert_int_equal(mds_server_job_ops(f->s, "jobA", PFS_OP_MDS_GETATTR), 4);
	assert_int_equal(mds_server_job_ops(f->s, "jobB", PFS_OP_MDS_GETATTR), 0);

	/* Close (CREATE counted an open: an open file would stay as an
	 * orphan), then unlink: the destroyer sends DESTROY for both objects
	 * to the OSS. */
	pfs_cred_encode(&b, &root);
	pfs_wbuf_u64(&b, a.ino);
	pfs_wbuf_u32(&b, 0);
	assert_int_equal(call(f, PFS_OP_MDS_CLOSE, "jobA", &b, NULL, NULL), 0);
	/* UNLINK with an expected inode: another inode -ESTALE (kept), a
	 * garbled tail -EBADMSG, the right one removes it */
	pfs_cred_encode(&b, &root);
	pfs_wbuf_u64(&b, dir);
	pfs_wbuf_str(&b, "file");
	pfs_wbuf_u64(&b, a.ino + 1000);
	assert_int_equal(call(f, PFS_OP_MDS_UNLINK, "jobA", &b, NULL, NULL), -ESTALE);
	pfs_cred_encode(&b, &root);
	pfs_wbuf_u64(&b, dir);
	pfs_wbuf_str(&b, "file");
	pfs_wbuf_u32(&b, 7);
	assert_int_equal(call(f, PFS_OP_MDS_UNLINK, "jobA", &b, NULL, NULL), -EBADMSG);
	pfs_cred_encode(&b, &root);
	pfs_wbuf_u64(&b, dir);
	pfs_wbuf_str(&b, "file");
	pfs_wbuf_u64(&b, a.ino);
	pfs_wbuf_u8(&b, 1);
	assert_int_equal(call(f, PFS_OP_MDS_UNLINK, "jobA", &b, NULL, NULL), -EBADMSG);
	pfs_cred_encode(&b, &root);
	pfs_wbuf_u64(&b, dir);
	pfs_wbuf_str(&b, "file");
	pfs_wbuf_u64(&b, a.ino);
	assert_int_equal(call(f, PFS_OP_MDS_UNLINK, "jobA", &b, NULL, NULL), 0);
	uint64_t left = 1;
	for (int i = 0; i < 1000 && left; i++) {
		struct timespec ts = { 0, 10 * 1000000L };
		nanosleep(&ts, NULL);
		assert_int_equal(mds_ns_destroy_count(f->ns, &left), 0);
	}
	assert_int_equal(left, 0);
	pthread_mutex_lock(&f->oss.lock);
	assert_int_equal(f->oss.n, 2);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(f->oss.osts[i], l.stripe[i].ost);
		assert_int_equal(f->oss.objs[i], l.stripe[i].object);
	}
	pthread_mutex_unlock(&f->oss.lock);
	assert_int_equal(mds_destroyer_destroyed(f->d), 2);
	pfs_wbuf_free(&b);
}

/* Destroy records wait while the OSS is down and drain when it is back. */
static void test_server_destroy_retry(void **state)
{
	struct fx *f = *state;
	pfs_attr a;
	pfs_layout l;
	uint64_t left = 0;
	pfs_server_opts so = { .host = "127.0.0.1", .port = 0, .name = "fake-oss" };

	register_ost(f);
	/* Point the registry at a port nobody listens on. */
	pfs_server *tmp;
	assert_int_equal(pfs_server_start(&so, oss_handler, &f->oss, &tmp), 0);
	uint16_t dead = pfs_server_port(tmp);
	pfs_server_stop(tmp);
	mds_ost_report r[2];
	uint32_t idx[2];
	memset(r, 0, sizeof(r));
	strcpy(r[0].uuid, "ost-a");
	strcpy(r[1].uuid, "ost-b");
	r[0].free_bytes = r[1].free_bytes = 1ull << 30;
	assert_int_equal(mds_ns_oss_register(f->ns, "oss0", "127.0.0.1", 1, dead, r, 2, idx), 0);
	assert_int_equal(mds_ns_create(f->ns, &root, 1, "f", 0644, 0, 0, 2, &a, &l), 0);
	assert_int_equal(mds_ns_unlink(f->ns, &root, 1, "f"), 0);
	/* Let a few passes fail. */
	for (int i = 0; i < 20; i++) {
		struct timespec ts = { 0, 10 * 1000000L };
		nanosleep(&ts, NULL);
	}
	assert_int_equal(mds_ns_destroy_count(f->ns, &left), 0);
	assert_int_equal(left, 1);
	pthread_mutex_lock(&f->oss.lock);
	assert_int_equal(f->oss.n, 0);
	pthread_mutex_unlock(&f->oss.lock);
	/* OSS back (re-registers with its real port): the record drains. */
	register_ost(f);
	for (int i = 0; i < 1000 && left; i++) {
		struct timespec ts = { 0, 10 * 1000000L };
		nanosleep(&ts, NULL);
		assert_int_equal(mds_ns_destroy_count(f->ns, &left), 0);
	}
	assert_int_equal(left, 0);
	/* Both objects destroyed; a pass racing the re-registration may have
	 * sent one of them twice (destroys are idempotent). */
	pthread_mutex_lock(&f->oss.lock);
	assert_true(f->oss.n >= 2 && f->oss.n <= 4);
	for (uint32_t s = 0; s < 2; s++) {
		int found = 0;
		for (int i = 0; i < f->oss.n; i++)
			found |= f->oss.osts[i] == l.stripe[s].ost &&
				 f->oss.objs[i] == l.stripe[s].object;
		assert_true(found);
	}
	pthread_mutex_unlock(&f->oss.lock);
}

/* Records that piled up while the OSS was unreachable go in one round:
 * one DESTROY per OST for all their objects, and the records in one
 * commit.  An OSS that takes one id per request still gets every object
 * (the destroyer falls back after its -EBADMSG). */
static void destroy_piled_up(struct fx *f, int batch)
{
	pfs_attr a;
	pfs_layout l[20];
	uint64_t left = 0;
	pfs_server_opts so = { .host = "127.0.0.1", .port = 0, .name = "fake-oss" };
	pfs_server *tmp;
	mds_ost_report r[2];
	uint32_t idx[2];
	char name[16];

	f->oss.batch = batch;
	register_ost(f);
	assert_int_equal(pfs_server_start(&so, oss_handler, &f->oss, &tmp), 0);
	uint16_t dead = pfs_server_port(tmp);
	pfs_server_stop(tmp);
	memset(r, 0, sizeof(r));
	strcpy(r[0].uuid, "ost-a");
	strcpy(r[1].uuid, "ost-b");
	r[0].free_bytes = r[1].free_bytes = 1ull << 30;
	assert_int_equal(mds_ns_oss_register(f->ns, "oss0", "127.0.0.1", 1, dead, r, 2, idx), 0);
	for (int i = 0; i < 20; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		assert_int_equal(mds_ns_create(f->ns, &root, 1, name, 0644, 0, 0, 2, &a, &l[i]), 0);
		assert_int_equal(mds_ns_unlink(f->ns, &root, 1, name), 0);
	}
	for (int i = 0; i < 10; i++) {
		struct timespec ts = { 0, 10 * 1000000L };
		nanosleep(&ts, NULL);
	}
	assert_int_equal(mds_ns_destroy_count(f->ns, &left), 0);
	assert_int_equal(left, 20);
	register_ost(f);
	for (int i = 0; i < 1000 && left; i++) {
		struct timespec ts = { 0, 10 * 1000000L };
		nanosleep(&ts, NULL);
		assert_int_equal(mds_ns_destroy_count(f->ns, &left), 0);
	}
	assert_int_equal(left, 0);
	pthread_mutex_lock(&f->oss.lock);
	/* every object, each on its own OST; a round racing the
	 * re-registration may have sent some twice (idempotent) */
	for (int i = 0; i < 20; i++)
		for (uint32_t s = 0; s < 2; s++) {
			int found = 0;
			for (int k = 0; k < f->oss.n; k++)
				found |= f->oss.osts[k] == l[i].stripe[s].ost &&
					 f->oss.objs[k] == l[i].stripe[s].object;
			assert_true(found);
		}
	if (batch)
		assert_true(f->oss.reqs >= 2 && f->oss.reqs <= 6);
	else
		assert_true(f->oss.reqs >= 40);
	pthread_mutex_unlock(&f->oss.lock);
}

static void test_server_destroy_batched(void **state)
{
	destroy_piled_up(*state, 1);
}

static void test_server_destroy_one_by_one(void **state)
{
	destroy_piled_up(*state, 0);
}

static int raw_connect(struct fx *f)
{
	int fd;

	assert_int_equal(pfs_net_connect("127.0.0.1", mds_server_port(f->s), 5000, &fd), 0);
	assert_int_equal(pfs_net_set_timeout(fd, 5000), 0);
	return fd;
}

static void ping_ok(struct fx *f)
{
	int fd = raw_connect(f);
	pfs_hdr h, rh;
	uint8_t *dyn = NULL, *data;

	pfs_hdr_init(&h, PFS_OP_PING, 77, 1, "j");
	assert_int_equal(pfs_net_send_frame(fd, &h, "abc", 3, NULL, 0), 0);
	assert_int_equal(pfs_net_recv_frame(fd, &rh, PFS_MAX_PAYLOAD, NULL, 0, &dyn, &data), 0);
	assert_int_equal(rh.status, 0);
	assert_int_equal(rh.req_id, 77);
	assert_int_equal(rh.payload_len, 3);
	assert_memory_equal(data, "abc", 3);
	free(dyn);
	close(fd);
}

/* 1 if the server closed the connection or answered with an error. */
static int closed_or_error(int fd)
{
	pfs_hdr rh;
	uint8_t *dyn = NULL, *data;
	int rc = pfs_net_recv_frame(fd, &rh, PFS_MAX_PAYLOAD, NULL, 0, &dyn, &data);

	free(dyn);
	if (rc)
		return 1;
	return rh.status < 0;
}

static void test_server_garbage(void **state)
{
	struct fx *f = *state;
	uint8_t junk[200], hb[PFS_HDR_LEN];
	pfs_hdr h;
	int fd;

	ping_ok(f);
	/* Bad magic. */
	fd = raw_connect(f);
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)(i * 37 + 11);
	assert_int_equal(pfs_net_write_all(fd, junk, sizeof(junk)), 0);
	assert_true(closed_or_error(fd));
	close(fd);
	ping_ok(f);
	/* Oversized payload length. */
	fd = raw_connect(f);
	pfs_hdr_init(&h, PFS_OP_MDS_GETATTR, 1, 1, "j");
	h.payload_len = PFS_MAX_PAYLOAD + 1;
	pfs_hdr_encode(&h, hb);
	assert_int_equal(pfs_net_write_all(fd, hb, sizeof(hb)), 0);
	assert_true(closed_or_error(fd));
	close(fd);
	ping_ok(f);
	/* Truncated frame: header promises 100 bytes, 10 arrive, then EOF. */
	fd = raw_connect(f);
	h.payload_len = 100;
	pfs_hdr_encode(&h, hb);
	assert_int_equal(pfs_net_write_all(fd, hb, sizeof(hb)), 0);
	assert_int_equal(pfs_net_write_all(fd, junk, 10), 0);
	shutdown(fd, SHUT_WR);
	assert_true(closed_or_error(fd));
	close(fd);
	ping_ok(f);
	/* A reply frame sent as a request. */
	fd = raw_connect(f);
	pfs_hdr_init(&h, PFS_OP_PING, 5, 1, "j");
	h.flags = PFS_F_REPLY;
	assert_int_equal(pfs_net_send_frame(fd, &h, NULL, 0, NULL, 0), 0);
	assert_true(closed_or_error(fd));
	close(fd);

	/* Random payloads for every MDS opcode: always a reply, never a crash. */
	uint16_t ops[64];
	int nops = 0;
	for (uint16_t op = PFS_OP_MDS_LOOKUP; op <= PFS_OP_MDS_SETSTRIPE; op++)
		ops[nops++] = op;
	ops[nops++] = PFS_OP_MDS_OST_LIST;
	ops[nops++] = PFS_OP_MDS_UNLINK_BATCH;
	ops[nops++] = PFS_OP_MDS_CREATE_SLOTS;
	ops[nops++] = PFS_OP_MDS_CREATE_BATCH;
	ops[nops++] = PFS_OP_MDS_OSS_HEARTBEAT;
	ops[nops++] = PFS_OP_MDS_OSS_REGISTER;
	for (uint16_t op = PFS_OP_MDS_JOB_REGISTER; op <= PFS_OP_MDS_JOBSTATS; op++)
		ops[nops++] = op;
	unsigned seed = 12345;
	fd = raw_connect(f);
	for (int it = 0; it < 3000; it++) {
		uint8_t p[256];
		size_t n = (size_t)(rand_r(&seed) % (int)sizeof(p));
		for (size_t i = 0; i < n; i++)
			p[i] = (uint8_t)rand_r(&seed);
		/* Mostly-valid prefixes reach deeper: a root cred, small numbers. */
		if (n >= 12 && (it & 1)) {
			memset(p, 0, 12);
			if (n >= 20)
				memset(p + 12, 0, 8), p[12] = 1;
		}
		pfs_hdr_init(&h, ops[it % nops], (uint64_t)it, 1, "fuzz");
		h.uid = (it & 2) ? 1000 : 0;
		assert_int_equal(pfs_net_send_frame(fd, &h, p, n, NULL, 0), 0);
		pfs_hdr rh;
		uint8_t *dyn = NULL, *data;
		assert_int_equal(pfs_net_recv_frame(fd, &rh, PFS_MAX_PAYLOAD, NULL, 0, &dyn, &data), 0);
		assert_int_equal(rh.req_id, (uint64_t)it);
		free(dyn);
	}
	close(fd);
	ping_ok(f);
}

/* A job_info as the wire has it (written by hand, so ids of any length
 * can be sent). */
static void job_encode(pfs_wbuf *b, const char *id, uint32_t uid, uint32_t nodes, double prio)
{
	pfs_wbuf_str(b, id);
	pfs_wbuf_u32(b, uid);
	pfs_wbuf_u32(b, nodes);
	pfs_wbuf_f64(b, prio);
	pfs_wbuf_f64(b, 0.0);  /* limit */
	pfs_wbuf_u8(b, 1);     /* throttle_friendly */
	pfs_wbuf_u8(b, 0);     /* state */
	pfs_wbuf_u8(b, 0);     /* registered */
	pfs_wbuf_i64(b, 0);
	pfs_wbuf_i64(b, 0);
}

/* Find job's count of opcode op in a JOBSTATS reply; -1 if absent.  Also
 * checks the reply is well formed and *njobs gets its job count. */
static int64_t jobstats_count(const uint8_t *p, size_t len, const char *job, uint16_t op,
			      uint32_t *njobs)
{
	pfs_rbuf r;
	int64_t found = -1;
	char name[PFS_JOBID_MAX + 1];

	pfs_rbuf_init(&r, p, len);
	assert_true(pfs_rbuf_u64(&r) > 0);
	*njobs = pfs_rbuf_u32(&r);
	for (uint32_t i = 0; i < *njobs; i++) {
		pfs_rbuf_cstr(&r, name, sizeof(name));
		assert_true(name[0] != '\0'); /* requests without a job id are no job */
		uint32_t k = pfs_rbuf_u32(&r);
		for (uint32_t x = 0; x < k; x++) {
			uint16_t o = pfs_rbuf_u16(&r);
			uint64_t c = pfs_rbuf_u64(&r);
			assert_true(c > 0);
			if (!strcmp(name, job) && o == op)
				found = (int64_t)c;
		}
	}
	assert_int_equal(pfs_rbuf_done(&r), 0);
	return found;
}

static void test_server_jobs_and_qos(void **state)
{
	struct fx *f = *state;
	pfs_wbuf b;
	pfs_rbuf r;
	uint8_t *out;
	size_t len;
	pfs_job_info ji;
	uint32_t n;

	pfs_wbuf_init(&b);
	/* a user registers its own job, not someone else's */
	job_encode(&b, "slurm.1", 1000, 8, 2.0);
	assert_int_equal(call_as(f, PFS_OP_MDS_JOB_REGISTER, "", 1000, &b, NULL, NULL), 0);
	job_encode(&b, "slurm.2", 2000, 8, 2.0);
	assert_int_equal(call_as(f, PFS_OP_MDS_JOB_REGISTER, "", 1000, &b, NULL, NULL), -EPERM);
	job_encode(&b, "slurm.2", 2000, 4, 1.0);
	assert_int_equal(call_as(f, PFS_OP_MDS_JOB_REGISTER, "", 0, &b, NULL, NULL), 0);
	pfs_wbuf_str(&b, "slurm.1");
	assert_int_equal(call_as(f, PFS_OP_MDS_JOB_GET, "", 2000, &b, &out, &len), 0);
	pfs_rbuf_init(&r, out, len);
	assert_int_equal(pfs_job_info_decode(&r, &ji), 0);
	assert_int_equal(pfs_rbuf_done(&r), 0);
	assert_int_equal(ji.uid, 1000);
	assert_int_equal(ji.nodes, 8);
	assert_int_equal(ji.registered, 1);
	free(out);
	pfs_wbuf_str(&b, "nosuch");
	assert_int_equal(call_as(f, PFS_OP_MDS_JOB_GET, "", 0, &b, NULL, NULL), -ENOENT);

	/* any request carrying a job id leaves an automatic entry */
	pfs_cred_encode(&b, &root);
	pfs_wbuf_u64(&b, 1);
	assert_int_equal(call_as(f, PFS_OP_MDS_GETATTR, "autojob", 1234, &b, NULL, NULL), 0);
	assert_int_equal(mds_jobs_get(f->jobs, "autojob", &ji), 0);
	assert_int_equal(ji.registered, 0);
	assert_int_equal(ji.uid, 1234);

	pfs_wbuf_str(&b, "slurm.1");
	assert_int_equal(call_as(f, PFS_OP_MDS_JOB_END, "", 2000, &b, NULL, NULL), -EPERM);
	pfs_wbuf_str(&b, "slurm.1");
	assert_int_equal(call_as(f, PFS_OP_MDS_JOB_END, "", 1000, &b, NULL, NULL), 0);
	pfs_wbuf_str(&b, "nosuch");
	assert_int_equal(call_as(f, PFS_OP_MDS_JOB_END, "", 0, &b, NULL, NULL), -ENOENT);
	for (int all = 0; all < 2; all++) {
		pfs_wbuf_u8(&b, (uint8_t)all);
		assert_int_equal(call_as(f, PFS_OP_MDS_JOB_LIST, "", 1000, &b, &out, &len), 0);
		pfs_rbuf_init(&r, out, len);
		n = pfs_rbuf_u32(&r);
		assert_int_equal(n, all ? 3 : 2); /* autojob, slurm.2 (+ ended slurm.1) */
		for (uint32_t i = 0; i < n; i++)
			assert_int_equal(pfs_job_info_decode(&r, &ji), 0);
		assert_int_equal(pfs_rbuf_done(&r), 0);
		free(out);
	}

	/* the policy: root only, validated, shown */
	pfs_wbuf_str(&b, "pofs");
	pfs_wbuf_u32(&b, 0);
	assert_int_equal(call_as(f, PFS_OP_MDS_QOS_POLICY_SET, "", 1000, &b, NULL, NULL), -EPERM);
	pfs_wbuf_str(&b, "gift");
	pfs_wbuf_u32(&b, 2);
	pfs_wbuf_str(&b, "B_thres");
	pfs_wbuf_f64(&b, 0.3);
	pfs_wbuf_str(&b, "interval");
	pfs_wbuf_f64(&b, 5);
	assert_int_equal(call_as(f, PFS_OP_MDS_QOS_POLICY_SET, "", 0, &b, NULL, NULL), 0);
	pfs_wbuf_str(&b, "gift");
	pfs_wbuf_u32(&b, 1);
	pfs_wbuf_str(&b, "B_thres");
	pfs_wbuf_f64(&b, 3);
	assert_int_equal(call_as(f, PFS_OP_MDS_QOS_POLICY_SET, "", 0, &b, NULL, NULL), -EINVAL);
	pfs_wbuf_str(&b, "");
	assert_int_equal(call_as(f, PFS_OP_MDS_QOS_SHOW, "", 1000, &b, &out, &len), 0);
	pfs_qos_status st;
	pfs_rbuf_init(&r, out, len);
	assert_int_equal(pfs_qos_status_decode(&r, &st), 0);
	assert_string_equal(st.policy, "gift");
	assert_true(st.interval == 5);
	assert_int_equal(st.n_params, 1);
	assert_string_equal(st.params[0].key, "B_thres");
	assert_int_equal(pfs_rbuf_u32(&r), 0);
	assert_int_equal(pfs_rbuf_done(&r), 0);
	free(out);
	pfs_wbuf_str(&b, "slurm.2");
	assert_int_equal(call_as(f, PFS_OP_MDS_QOS_SHOW, "", 1000, &b, NULL, NULL), -EACCES);
	pfs_wbuf_str(&b, "slurm.2");
	assert_int_equal(call_as(f, PFS_OP_MDS_QOS_SHOW, "", 2000, &b, NULL, NULL), 0);
	pfs_wbuf_str(&b, "slurm.2");
	assert_int_equal(call_as(f, PFS_OP_MDS_QOS_COUPONS, "", 1000, &b, NULL, NULL), -EACCES);
	pfs_wbuf_str(&b, "");
	assert_int_equal(call_as(f, PFS_OP_MDS_QOS_COUPONS, "", 0, &b, &out, &len), 0);
	pfs_rbuf_init(&r, out, len);
	assert_int_equal(pfs_rbuf_u32(&r), 0); /* no decision yet, no coupons */
	assert_int_equal(pfs_rbuf_done(&r), 0);
	free(out);
	assert_int_equal(call_as(f, PFS_OP_MDS_QOS_REGRET, "", 1000, &b, &out, &len), 0);
	pfs_qos_regret_info rg;
	pfs_rbuf_init(&r, out, len);
	assert_int_equal(pfs_qos_regret_info_decode(&r, &rg), 0);
	assert_int_equal(pfs_rbuf_done(&r), 0);
	assert_true(rg.budget_nh == 15) /* GIFT default: 15 node-hours per regret period */;
	assert_true(rg.c_sys == 1.0);
	free(out);

	/* job statistics per opcode: root sees every job */
	for (int i = 0; i < 3; i++) {
		pfs_cred_encode(&b, &root);
		pfs_wbuf_u64(&b, 1);
		assert_int_equal(call_as(f, PFS_OP_MDS_GETATTR, "slurm.2", 2000, &b, NULL, NULL), 0);
	}
	pfs_wbuf_str(&b, "");
	assert_int_equal(call_as(f, PFS_OP_MDS_JOBSTATS, "", 0, &b, &out, &len), 0);
	assert_int_equal(jobstats_count(out, len, "slurm.2", PFS_OP_MDS_GETATTR, &n), 3);
	assert_int_equal(jobstats_count(out, len, "autojob", PFS_OP_MDS_GETATTR, &n), 1);
	assert_int_equal(jobstats_count(out, len, "slurm.2", PFS_OP_MDS_MKDIR, &n), -1);
	assert_true(n >= 3); /* autojob, slurm.2, "(other)"; never "" */
	free(out);
	/* a user sees its own jobs only */
	pfs_wbuf_str(&b, "");
	assert_int_equal(call_as(f, PFS_OP_MDS_JOBSTATS, "", 2000, &b, &out, &len), 0);
	assert_int_equal(jobstats_count(out, len, "slurm.2", PFS_OP_MDS_GETATTR, &n), 3);
	assert_int_equal(n, 1);
	free(out);
	pfs_wbuf_str(&b, "slurm.2");
	assert_int_equal(call_as(f, PFS_OP_MDS_JOBSTATS, "", 1000, &b, NULL, NULL), -EACCES);
	pfs_wbuf_str(&b, "never-seen");
	assert_int_equal(call_as(f, PFS_OP_MDS_JOBSTATS, "", 0, &b, NULL, NULL), -ENOENT);
	/* unknown opcodes are counted under 0 */
	assert_int_equal(call_as(f, 9999, "slurm.2", 2000, &b, NULL, NULL), -EOPNOTSUPP);
	pfs_wbuf_str(&b, "slurm.2");
	assert_int_equal(call_as(f, PFS_OP_MDS_JOBSTATS, "", 0, &b, &out, &len), 0);
	assert_int_equal(jobstats_count(out, len, "slurm.2", 0, &n), 1);
	assert_int_equal(n, 1);
	free(out);
	pfs_wbuf_free(&b);
}

/* Each new opcode with truncated, padded, oversized and out-of-range
 * payloads: a clean error reply, nothing changed. */
static void test_server_jobs_qos_malformed(void **state)
{
	struct fx *f = *state;
	pfs_wbuf b, full;
	char big[200];
	pfs_qos_status st;
	pfs_qos_row *rows = NULL;
	uint32_t n;

	pfs_wbuf_init(&b);
	pfs_wbuf_init(&full);
	memset(big, 'j', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';

	/* JOB_REGISTER: every truncation of a good record, a trailing byte,
	 * bad values */
	job_encode(&full, "trunc", 0, 2, 1.0);
	for (size_t cut = 0; cut < full.len; cut++) {
		pfs_wbuf_bytes(&b, full.data, cut);
		assert_int_equal(call_as(f, PFS_OP_MDS_JOB_REGISTER, "", 0, &b, NULL, NULL),
				 -EBADMSG);
	}
	pfs_wbuf_bytes(&b, full.data, full.len);
	pfs_wbuf_u8(&b, 0);
	assert_int_equal(call_as(f, PFS_OP_MDS_JOB_REGISTER, "", 0, &b, NULL, NULL), -EBADMSG);
	job_encode(&b, big, 0, 2, 1.0);                 /* id longer than 32 */
	assert_int_equal(call_as(f, PFS_OP_MDS_JOB_REGISTER, "", 0, &b, NULL, NULL), -EBADMSG);
	job_encode(&b, "x", 0, 0, 1.0);                 /* no nodes */
	assert_int_equal(call_as(f, PFS_OP_MDS_JOB_REGISTER, "", 0, &b, NULL, NULL), -EBADMSG);
	job_encode(&b, "x", 0, 2, NAN);
	assert_int_equal(call_as(f, PFS_OP_MDS_JOB_REGISTER, "", 0, &b, NULL, NULL), -EBADMSG);
	job_encode(&b, "x", 0, 2, 1e9);                 /* priority above the cap */
	assert_int_equal(call_as(f, PFS_OP_MDS_JOB_REGISTER, "", 0, &b, NULL, NULL), -EINVAL);
	pfs_job_info ji;
	assert_int_equal(mds_jobs_get(f->jobs, "trunc", &ji), -ENOENT);
	assert_int_equal(mds_jobs_get(f->jobs, "x", &ji), -ENOENT);

	/* the str-job opcodes: empty payload, long id, bogus length, padding */
	uint16_t strops[] = { PFS_OP_MDS_JOB_END, PFS_OP_MDS_JOB_GET, PFS_OP_MDS_QOS_SHOW,
			      PFS_OP_MDS_QOS_COUPONS, PFS_OP_MDS_JOBSTATS };
	for (size_t i = 0; i < sizeof(strops) / sizeof(strops[0]); i++) {
		assert_int_equal(call_as(f, strops[i], "", 0, &b, NULL, NULL), -EBADMSG);
		pfs_wbuf_str(&b, big);
		assert_int_equal(call_as(f, strops[i], "", 0, &b, NULL, NULL), -EBADMSG);
		pfs_wbuf_u32(&b, 0xfffffff0u);
		pfs_wbuf_bytes(&b, "abc", 3);
		assert_int_equal(call_as(f, strops[i], "", 0, &b, NULL, NULL), -EBADMSG);
		pfs_wbuf_str(&b, "");
		pfs_wbuf_u32(&b, 7);
		assert_int_equal(call_as(f, strops[i], "", 0, &b, NULL, NULL), -EBADMSG);
		pfs_wbuf_strn(&b, "a\0b", 3);                /* NUL inside an id */
		assert_int_equal(call_as(f, strops[i], "", 0, &b, NULL, NULL), -EBADMSG);
	}
	/* JOB_LIST: flag 0/1 only, exactly one byte */
	assert_int_equal(call_as(f, PFS_OP_MDS_JOB_LIST, "", 0, &b, NULL, NULL), -EBADMSG);
	pfs_wbuf_u8(&b, 2);
	assert_int_equal(call_as(f, PFS_OP_MDS_JOB_LIST, "", 0, &b, NULL, NULL), -EINVAL);
	pfs_wbuf_u16(&b, 0);
	assert_int_equal(call_as(f, PFS_OP_MDS_JOB_LIST, "", 0, &b, NULL, NULL), -EBADMSG);
	/* QOS_REGRET takes nothing */
	pfs_wbuf_u8(&b, 0);
	assert_int_equal(call_as(f, PFS_OP_MDS_QOS_REGRET, "", 0, &b, NULL, NULL), -EBADMSG);

	/* POLICY_SET: counts beyond the payload, too many keys, long names,
	 * NaN values, truncations, padding */
	pfs_wbuf_str(&b, "gift");
	pfs_wbuf_u32(&b, 0x7fffffff);
	assert_int_equal(call_as(f, PFS_OP_MDS_QOS_POLICY_SET, "", 0, &b, NULL, NULL), -EBADMSG);
	pfs_wbuf_str(&b, "gift");
	pfs_wbuf_u32(&b, 40);
	for (int i = 0; i < 40; i++) {
		pfs_wbuf_str(&b, "tau");
		pfs_wbuf_f64(&b, 0.5);
	}
	assert_int_equal(call_as(f, PFS_OP_MDS_QOS_POLICY_SET, "", 0, &b, NULL, NULL), -EBADMSG);
	pfs_wbuf_str(&b, big);
	pfs_wbuf_u32(&b, 0);
	assert_int_equal(call_as(f, PFS_OP_MDS_QOS_POLICY_SET, "", 0, &b, NULL, NULL), -EBADMSG);
	pfs_wbuf_str(&b, "gift");
	pfs_wbuf_u32(&b, 1);
	pfs_wbuf_str(&b, big);
	pfs_wbuf_f64(&b, 0.5);
	assert_int_equal(call_as(f, PFS_OP_MDS_QOS_POLICY_SET, "", 0, &b, NULL, NULL), -EBADMSG);
	pfs_wbuf_str(&b, "gift");
	pfs_wbuf_u32(&b, 1);
	pfs_wbuf_str(&b, "tau");
	pfs_wbuf_f64(&b, NAN);
	assert_int_equal(call_as(f, PFS_OP_MDS_QOS_POLICY_SET, "", 0, &b, NULL, NULL), -EBADMSG);
	pfs_wbuf_reset(&full);
	pfs_wbuf_str(&full, "gift");
	pfs_wbuf_u32(&full, 1);
	pfs_wbuf_str(&full, "tau");
	pfs_wbuf_f64(&full, 0.5);
	for (size_t cut = 0; cut < full.len; cut++) {
		pfs_wbuf_bytes(&b, full.data, cut);
		assert_int_equal(call_as(f, PFS_OP_MDS_QOS_POLICY_SET, "", 0, &b, NULL, NULL),
				 -EBADMSG);
	}
	pfs_wbuf_bytes(&b, full.data, full.len);
	pfs_wbuf_u8(&b, 1);
	assert_int_equal(call_as(f, PFS_OP_MDS_QOS_POLICY_SET, "", 0, &b, NULL, NULL), -EBADMSG);
	/* none of it changed the policy */
	assert_int_equal(mds_qosctl_show(f->qos, "", 0, 10, &st, &rows, &n), 0);
	assert_string_equal(st.policy, "none");
	free(rows);
	/* an oversized frame for a new opcode closes that connection only */
	int fd = raw_connect(f);
	pfs_hdr h;
	uint8_t hb[PFS_HDR_LEN];
	pfs_hdr_init(&h, PFS_OP_MDS_QOS_POLICY_SET, 1, 1, "j");
	h.payload_len = PFS_MAX_PAYLOAD + 1;
	pfs_hdr_encode(&h, hb);
	assert_int_equal(pfs_net_write_all(fd, hb, sizeof(hb)), 0);
	assert_true(closed_or_error(fd));
	close(fd);
	ping_ok(f);
	pfs_wbuf_free(&b);
	pfs_wbuf_free(&full);
}

struct worker {
	struct fx *f;
	uint64_t dir;
	int id, errors;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	pfs_wbuf b;
	char name[32];

	pfs_wbuf_init(&b);
	for (int i = 0; i < 100; i++) {
		snprintf(name, sizeof(name), "w%d-%d", w->id, i);
		pfs_cred_encode(&b, &root);
		pfs_wbuf_u64(&b, w->dir);
		pfs_wbuf_str(&b, name);
		pfs_wbuf_u32(&b, 0644);
		pfs_wbuf_u32(&b, PFS_CREATE_EXCL);
		pfs_wbuf_u32(&b, 0);
		pfs_wbuf_u32(&b, 0);
		pfs_rpc_reply rep = { 0 };
		pfs_rpc_reply_init(&rep);
		if (pfs_rpc_call(w->f->pool, PFS_OP_MDS_CREATE, "par", 0, b.data, b.len, NULL, 0,
				 &rep))
			w->errors++;
		pfs_rpc_reply_free(&rep);
		pfs_wbuf_reset(&b);
		if (i % 3 == 0) {
			pfs_cred_encode(&b, &root);
			pfs_wbuf_u64(&b, w->dir);
			pfs_wbuf_str(&b, name);
			pfs_rpc_reply_init(&rep);
			if (pfs_rpc_call(w->f->pool, PFS_OP_MDS_UNLINK, "par", 0, b.data, b.len, NULL,
					 0, &rep))
				w->errors++;
			pfs_rpc_reply_free(&rep);
			pfs_wbuf_reset(&b);
		}
	}
	pfs_wbuf_free(&b);
	return NULL;
}

/* Concurrent creates and unlinks from several connections. */
static void test_server_concurrent(void **state)
{
	struct fx *f = *state;
	pthread_t t[8];
	struct worker w[8];
	pfs_attr a;
	mds_dirent *e = calloc(PFS_READDIR_MAX, sizeof(*e));
	uint32_t n;
	int eof;

	register_ost(f);
	assert_int_equal(mds_ns_mkdir(f->ns, &root, 1, "par", 0755, &a), 0);
	for (int i = 0; i < 8; i++) {
		w[i] = (struct worker){ f, a.ino, i, 0 };
		assert_int_equal(pthread_create(&t[i], NULL, worker_main, &w[i]), 0);
	}
	for (int i = 0; i < 8; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(w[i].errors, 0);
	}
	assert_int_equal(mds_ns_readdir(f->ns, &root, a.ino, 0, PFS_READDIR_MAX, e, &n, &eof), 0);
	assert_int_equal(n, 8 * (100 - 34));
	assert_int_equal(eof, 1);
	assert_int_equal(mds_server_job_ops(f->s, "par", PFS_OP_MDS_CREATE), 800);
	assert_int_equal(mds_server_job_ops(f->s, "par", PFS_OP_MDS_UNLINK), 8 * 34);
	free(e);
}

/* ---- authorization (common/optab.h, root squash, capabilities) ---- */

static const uint8_t KCAP[PFS_CAPA_KEY_LEN] = { 42, 1, 2, 3 };

/* One request straight into the dispatcher as a peer of role. */
static int as_role(mds_server *s, unsigned role, uint16_t op, pfs_wbuf *req, pfs_wbuf *out)
{
	pfs_hdr h;
	int rc;

	pfs_hdr_init(&h, op, 1, 0x5151, "");
	h.payload_len = (uint32_t)req->len;
	pfs_wbuf_reset(out);
	rc = mds_server_dispatch_role(s, &h, role, req->data, req->len, "127.0.0.1:9", out);
	pfs_wbuf_reset(req);
	return rc;
}

static uint32_t ost_count(mds_server *s)
{
	pfs_wbuf q, o;
	pfs_rbuf r;
	uint32_t n;

	pfs_wbuf_init(&q);
	pfs_wbuf_init(&o);
	assert_int_equal(as_role(s, PFS_ROLE_ADMIN, PFS_OP_MDS_OST_LIST, &q, &o), 0);
	pfs_rbuf_init(&r, o.data, o.len);
	n = pfs_rbuf_u32(&r);
	pfs_wbuf_free(&q);
	pfs_wbuf_free(&o);
	return n;
}

static void put_register(pfs_wbuf *b, const char *uuid, const char *host, uint16_t port)
{
	pfs_wbuf_str(b, "evil");
	pfs_wbuf_str(b, host);
	pfs_wbuf_u16(b, port);
	pfs_wbuf_u16(b, port);
	pfs_wbuf_u32(b, 1);
	pfs_wbuf_str(b, uuid);
	pfs_wbuf_u64(b, 1ull << 40);
	pfs_wbuf_u64(b, 1ull << 39);
	pfs_wbuf_u64(b, 0);
}

static void test_server_authz(void **state)
{
	struct fx *f = *state;
	mds_server_opts mo = { .host = "127.0.0.1", .port = 0, .root_squash = 1,
			       .nosquash_roles = PFS_ROLE_ADMIN, .capa_key = KCAP,
			       .capa_lifetime_s = 100, .jobs = f->jobs, .qos = f->qos };
	pfs_cred user = { 4242, 4242, 0, { 0 } };
	mds_server *s;
	pfs_wbuf b, o;
	pfs_rbuf r;
	pfs_attr a;
	pfs_layout l;
	uint64_t secret, file;

	assert_int_equal(mds_server_start(f->ns, &mo, &s), 0);
	pfs_wbuf_init(&b);
	pfs_wbuf_init(&o);
	register_ost(f);
	assert_int_equal(ost_count(s), 2);

	/* OSS control opcodes only from oss keys; the OST list is unchanged */
	put_register(&b, "ost-evil", "10.0.0.66", 999);
	assert_int_equal(as_role(s, PFS_ROLE_CLIENT, PFS_OP_MDS_OSS_REGISTER, &b, &o), -EACCES);
	put_register(&b, "ost-evil", "10.0.0.66", 999);
	assert_int_equal(as_role(s, PFS_ROLE_ADMIN, PFS_OP_MDS_OSS_REGISTER, &b, &o), -EACCES);
	pfs_wbuf_str(&b, "oss0");
	pfs_wbuf_u32(&b, 0);
	assert_int_equal(as_role(s, PFS_ROLE_CLIENT, PFS_OP_MDS_OSS_HEARTBEAT, &b, &o), -EACCES);
	assert_int_equal(ost_count(s), 2);
	/* an oss key may not move a live OST's uuid to another address */
	put_register(&b, "ost-a", "10.0.0.66", 999);
	assert_int_equal(as_role(s, PFS_ROLE_OSS, PFS_OP_MDS_OSS_REGISTER, &b, &o), -EADDRINUSE);
	assert_int_equal(as_role(s, PFS_ROLE_ADMIN, PFS_OP_MDS_OST_LIST, &b, &o), 0);
	pfs_rbuf_init(&r, o.data, o.len);
	pfs_ost_info oi;
	assert_int_equal(pfs_rbuf_u32(&r), 2);
	assert_int_equal(pfs_ost_info_decode(&r, &oi), 0);
	assert_string_equal(oi.uuid, "ost-a");
	assert_string_equal(oi.host, "127.0.0.1");

	/* admin commands only from admin keys */
	pfs_wbuf_str(&b, "job1");
	assert_int_equal(as_role(s, PFS_ROLE_CLIENT, PFS_OP_MDS_JOB_END, &b, &o), -EACCES);
	pfs_wbuf_str(&b, "");
	pfs_wbuf_u32(&b, 0);
	assert_int_equal(as_role(s, PFS_ROLE_CLIENT, PFS_OP_MDS_QOS_POLICY_SET, &b, &o), -EACCES);
	/* namespace not from servers */
	pfs_cred_encode(&b, &root);
	pfs_wbuf_u64(&b, 1);
	pfs_wbuf_str(&b, "x");
	pfs_wbuf_u32(&b, 0755);
	assert_int_equal(as_role(s, PFS_ROLE_OSS, PFS_OP_MDS_MKDIR, &b, &o), -EACCES);

	/* root's 0700 directory (admin keys are not squashed) */
	pfs_cred_encode(&b, &root);
	pfs_wbuf_u64(&b, 1);
	pfs_wbuf_str(&b, "secret");
	pfs_wbuf_u32(&b, 0700);
	assert_int_equal(as_role(s, PFS_ROLE_ADMIN, PFS_OP_MDS_MKDIR, &b, &o), 0);
	pfs_rbuf_init(&r, o.data, o.len);
	assert_int_equal(pfs_attr_decode(&r, &a), 0);
	assert_int_equal(a.uid, 0);
	secret = a.ino;
	/* uid 0 over a client key is squashed: refused */
	pfs_cred_encode(&b, &root);
	pfs_wbuf_u64(&b, secret);
	pfs_wbuf_str(&b, "in");
	pfs_wbuf_u32(&b, 0755);
	assert_int_equal(as_role(s, PFS_ROLE_CLIENT, PFS_OP_MDS_MKDIR, &b, &o), -EACCES);
	/* the same frame without authentication (role ANY): today's trust */
	pfs_cred_encode(&b, &root);
	pfs_wbuf_u64(&b, secret);
	pfs_wbuf_str(&b, "in");
	pfs_wbuf_u32(&b, 0755);
	assert_int_equal(as_role(s, PFS_ROLE_ANY, PFS_OP_MDS_MKDIR, &b, &o), 0);

	/* root's 0600 file in / created over an admin key: layout, no caps */
	pfs_cred_encode(&b, &root);
	pfs_wbuf_u64(&b, 1);
	pfs_wbuf_str(&b, "rootfile");
	pfs_wbuf_u32(&b, 0600);
	pfs_wbuf_u32(&b, PFS_CREATE_EXCL);
	pfs_wbuf_u32(&b, 0);
	pfs_wbuf_u32(&b, 0);
	assert_int_equal(as_role(s, PFS_ROLE_ADMIN, PFS_OP_MDS_CREATE, &b, &o), 0);
	pfs_rbuf_init(&r, o.data, o.len);
	assert_int_equal(pfs_attr_decode(&r, &a), 0);
	assert_int_equal(pfs_layout_decode(&r, &l), 0);
	assert_int_equal(pfs_rbuf_done(&r), 0);
	file = a.ino;
	/* SETSIZE as uid 4242: refused, the size stays */
	pfs_cred_encode(&b, &user);
	pfs_wbuf_u64(&b, file);
	pfs_wbuf_u64(&b, 1u << 30);
	pfs_wbuf_i64(&b, 0);
	assert_int_equal(as_role(s, PFS_ROLE_CLIENT, PFS_OP_MDS_SETSIZE, &b, &o), -EACCES);
	pfs_cred_encode(&b, &root);
	pfs_wbuf_u64(&b, file);
	assert_int_equal(as_role(s, PFS_ROLE_ADMIN, PFS_OP_MDS_GETATTR, &b, &o), 0);
	pfs_rbuf_init(&r, o.data, o.len);
	assert_int_equal(pfs_attr_decode(&r, &a), 0);
	assert_int_equal(a.size, 0);

	/* a client's OPEN O_RDONLY of its own file: one read capability per
	 * stripe object, bound to the frame's client id */
	pfs_cred_encode(&b, &user);
	pfs_wbuf_u64(&b, 1);
	pfs_wbuf_str(&b, "userfile");
	pfs_wbuf_u32(&b, 0644);
	pfs_wbuf_u32(&b, PFS_CREATE_EXCL);
	pfs_wbuf_u32(&b, 0);
	pfs_wbuf_u32(&b, 0);
	/* / is root's 0755: the user cannot create there */
	assert_int_equal(as_role(s, PFS_ROLE_CLIENT, PFS_OP_MDS_CREATE, &b, &o), -EACCES);
	pfs_cred_encode(&b, &root);
	pfs_wbuf_u64(&b, file);
	pfs_wbuf_u32(&b, O_RDWR);
	assert_int_equal(as_role(s, PFS_ROLE_ADMIN, PFS_OP_MDS_OPEN, &b, &o), 0);
	pfs_rbuf_init(&r, o.data, o.len);
	assert_int_equal(pfs_attr_decode(&r, &a), 0);
	assert_int_equal(pfs_layout_decode(&r, &l), 0);
	assert_int_equal(pfs_rbuf_done(&r), 0); /* admin: no capabilities */
	/* the file readable by the client (chmod by root over admin) */
	pfs_cred_encode(&b, &root);
	pfs_wbuf_u64(&b, file);
	pfs_wbuf_u32(&b, PFS_SETATTR_MODE);
	pfs_wbuf_u32(&b, 0644);
	pfs_wbuf_u32(&b, 0);
	pfs_wbuf_u32(&b, 0);
	pfs_wbuf_u64(&b, 0);
	pfs_wbuf_i64(&b, 0);
	pfs_wbuf_i64(&b, 0);
	assert_int_equal(as_role(s, PFS_ROLE_ADMIN, PFS_OP_MDS_SETATTR, &b, &o), 0);
	pfs_cred_encode(&b, &user);
	pfs_wbuf_u64(&b, file);
	pfs_wbuf_u32(&b, O_RDWR);
	assert_int_equal(as_role(s, PFS_ROLE_CLIENT, PFS_OP_MDS_OPEN, &b, &o), -EACCES);
	pfs_cred_encode(&b, &user);
	pfs_wbuf_u64(&b, file);
	pfs_wbuf_u32(&b, O_RDONLY);
	assert_int_equal(as_role(s, PFS_ROLE_CLIENT, PFS_OP_MDS_OPEN, &b, &o), 0);
	pfs_rbuf_init(&r, o.data, o.len);
	assert_int_equal(pfs_attr_decode(&r, &a), 0);
	assert_int_equal(pfs_layout_decode(&r, &l), 0);
	assert_int_equal(pfs_rbuf_u32(&r), l.stripe_count);
	assert_true(l.stripe_count > 0);
	for (uint32_t i = 0; i < l.stripe_count; i++) {
		pfs_capa c;

		assert_int_equal(pfs_capa_decode(&r, &c), 0);
		assert_int_equal(c.rights, PFS_CAPA_READ);
		assert_int_equal(c.client_id, 0x5151);
		assert_int_equal(pfs_capa_check(&c, KCAP, l.stripe[i].ost, l.stripe[i].object,
						0x5151, PFS_CAPA_READ, (uint64_t)time(NULL)), 0);
		assert_int_equal(pfs_capa_check(&c, KCAP, l.stripe[i].ost, l.stripe[i].object,
						0x5151, PFS_CAPA_WRITE, (uint64_t)time(NULL)),
				 -EACCES);
		/* the lifetime of 100 s, read on the MDS's clock: time(2) is
		 * the coarse clock and may still be a second behind the
		 * clock_gettime(CLOCK_REALTIME) the MDS minted with */
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		assert_true(c.expiry <= (uint64_t)ts.tv_sec + 100);
	}
	assert_int_equal(pfs_rbuf_done(&r), 0);
	/* renewal (GETLAYOUT) gives what access allows now: read only */
	pfs_cred_encode(&b, &user);
	pfs_wbuf_u64(&b, file);
	assert_int_equal(as_role(s, PFS_ROLE_CLIENT, PFS_OP_MDS_GETLAYOUT, &b, &o), 0);
	pfs_rbuf_init(&r, o.data, o.len);
	assert_int_equal(pfs_layout_decode(&r, &l), 0);
	assert_int_equal(pfs_rbuf_u32(&r), l.stripe_count);
	pfs_capa c0;
	assert_int_equal(pfs_capa_decode(&r, &c0), 0);
	assert_int_equal(c0.rights, PFS_CAPA_READ);
	/* once closed and unlinked there is nothing to renew: the three opens
	 * of this client id (CREATE and OPEN as admin, OPEN as client) close
	 * one by one, as a mount's releases do (each CLOSE is one open less) */
	for (uint32_t left = 3; left-- > 0;) {
		pfs_cred_encode(&b, &root);
		pfs_wbuf_u64(&b, file);
		pfs_wbuf_u32(&b, left);
		assert_int_equal(as_role(s, PFS_ROLE_CLIENT, PFS_OP_MDS_CLOSE, &b, &o), 0);
	}
	pfs_cred_encode(&b, &root);
	pfs_wbuf_u64(&b, 1);
	pfs_wbuf_str(&b, "rootfile");
	assert_int_equal(as_role(s, PFS_ROLE_ADMIN, PFS_OP_MDS_UNLINK, &b, &o), 0);
	pfs_cred_encode(&b, &user);
	pfs_wbuf_u64(&b, file);
	assert_int_not_equal(as_role(s, PFS_ROLE_CLIENT, PFS_OP_MDS_GETLAYOUT, &b, &o), 0);

	pfs_wbuf_free(&b);
	pfs_wbuf_free(&o);
	mds_server_stop(s);
}


/* ---- UNLINK_BATCH: n unlinks of names in one directory, one status each ---- */

static const pfs_cred alice = { 1000, 1000, 0, { 0 } };

static uint64_t fifo_as(struct fx *f, const pfs_cred *c, uint64_t dir, const char *name)
{
	pfs_attr a;

	assert_int_equal(mds_ns_mknod(f->ns, c, dir, name, S_IFIFO | 0644, 0, &a), 0);
	return a.ino;
}

static uint64_t dir_as(struct fx *f, const pfs_cred *c, uint64_t parent, const char *name,
		       uint32_t mode)
{
	pfs_attr a;

	assert_int_equal(mds_ns_mkdir(f->ns, c, parent, name, mode, &a), 0);
	return a.ino;
}

/* The inode name names in dir, 0 if none. */
static uint64_t ino_of(struct fx *f, uint64_t dir, const char *name)
{
	pfs_attr a;

	return mds_ns_lookup(f->ns, &root, dir, name, &a) == 0 ? a.ino : 0;
}

static void batch_put(pfs_wbuf *w, const pfs_cred *c, uint64_t dir, uint32_t n,
		      const char *const *names, const uint64_t *inos)
{
	pfs_cred_encode(w, c);
	pfs_wbuf_u64(w, dir);
	pfs_wbuf_u32(w, n);
	for (uint32_t i = 0; i < n; i++) {
		pfs_wbuf_str(w, names[i]);
		pfs_wbuf_u64(w, inos[i]);
	}
}

/* Check a reply: u32 n, n x i32 status, equal to want[0..n). */
static void batch_check(const uint8_t *p, size_t len, uint32_t n, const int *want)
{
	pfs_rbuf r;

	pfs_rbuf_init(&r, p, len);
	assert_int_equal(pfs_rbuf_u32(&r), n);
	for (uint32_t i = 0; i < n; i++)
		assert_int_equal((int32_t)pfs_rbuf_u32(&r), want[i]);
	assert_int_equal(pfs_rbuf_done(&r), 0);
}

/* Send w's batch: over the socket (via 0: the event loop hands it to the
 * group commit) or straight into mds_server_dispatch (via 1); a success
 * must carry want's n statuses. */
static int batch_send(struct fx *f, int via, pfs_wbuf *w, uint32_t n, const int *want)
{
	uint8_t *out = NULL;
	size_t len = 0;
	int rc;

	if (via == 0) {
		rc = call(f, PFS_OP_MDS_UNLINK_BATCH, "bj", w, &out, &len);
		if (!rc)
			batch_check(out, len, n, want);
		free(out);
		return rc;
	}
	pfs_hdr h;
	pfs_wbuf o;

	pfs_wbuf_init(&o);
	pfs_hdr_init(&h, PFS_OP_MDS_UNLINK_BATCH, (uint64_t)rand() + 1, 0x4242, "bj");
	h.payload_len = (uint32_t)w->len;
	rc = mds_server_dispatch(f->s, &h, w->data, w->len, "test", &o);
	if (!rc)
		batch_check(o.data, o.len, n, want);
	else
		assert_int_equal(o.len, 0);
	pfs_wbuf_free(&o);
	pfs_wbuf_reset(w);
	return rc;
}

/* A mixed batch: removed, missing, re-created under the name (another
 * inode), a directory, sticky (another owner's file: -EPERM), removed (any inode):
 * each entry its own status, in order, one failing stops none; and a cred
 * that may not write the directory.  Over the socket and through dispatch. */
static void test_server_unlink_batch(void **state)
{
	struct fx *f = *state;
	pfs_wbuf w;

	pfs_wbuf_init(&w);
	for (int via = 0; via < 2; via++) {
		char dn[16];

		snprintf(dn, sizeof(dn), "b%d", via);
		uint64_t d = dir_as(f, &root, 1, dn, 01777);
		uint64_t mine = fifo_as(f, &alice, d, "mine");
		uint64_t old = fifo_as(f, &alice, d, "re");
		assert_int_equal(mds_ns_unlink(f->ns, &alice, d, "re"), 0);
		uint64_t now = fifo_as(f, &alice, d, "re");
		uint64_t sub = dir_as(f, &alice, d, "sub", 0755);
		uint64_t rootf = fifo_as(f, &root, d, "rootf");
		fifo_as(f, &alice, d, "mine2");
		const char *names[] = { "mine", "gone", "re", "sub", "rootf", "mine2" };
		const uint64_t inos[] = { mine, 12345, old, sub, rootf, 0 };
		const int want[] = { 0, -ENOENT, -ESTALE, -EISDIR, -EPERM, 0 };

		assert_int_not_equal(old, now);
		batch_put(&w, &alice, d, 6, names, inos);
		assert_int_equal(batch_send(f, via, &w, 6, want), 0);
		assert_int_equal(ino_of(f, d, "mine"), 0);
		assert_int_equal(ino_of(f, d, "mine2"), 0);
		assert_int_equal(ino_of(f, d, "re"), now);
		assert_int_equal(ino_of(f, d, "sub"), sub);
		assert_int_equal(ino_of(f, d, "rootf"), rootf);
		/* again: what went is gone, the rest as before */
		const int again[] = { -ENOENT, -ENOENT, -ESTALE, -EISDIR, -EPERM, -ENOENT };
		batch_put(&w, &alice, d, 6, names, inos);
		assert_int_equal(batch_send(f, via, &w, 6, again), 0);

		/* alice may not write ro: every entry -EACCES, nothing goes */
		snprintf(dn, sizeof(dn), "ro%d", via);
		uint64_t ro = dir_as(f, &root, 1, dn, 0755);
		uint64_t x = fifo_as(f, &root, ro, "x"), y = fifo_as(f, &root, ro, "y");
		const char *rn[] = { "x", "y" };
		const uint64_t ri[] = { x, y };
		const int racc[] = { -EACCES, -EACCES };
		batch_put(&w, &alice, ro, 2, rn, ri);
		assert_int_equal(batch_send(f, via, &w, 2, racc), 0);
		assert_int_equal(ino_of(f, ro, "x"), x);
		assert_int_equal(ino_of(f, ro, "y"), y);
		/* root may: both go */
		const int rok[] = { 0, 0 };
		batch_put(&w, &root, ro, 2, rn, ri);
		assert_int_equal(batch_send(f, via, &w, 2, rok), 0);
		assert_int_equal(ino_of(f, ro, "x"), 0);
	}
	pfs_wbuf_free(&w);
}

/* Malformed batches: -EINVAL and nothing removed, even the valid entries
 * before the bad one (everything is decoded before anything runs); 32
 * entries is the most. */
static void test_server_unlink_batch_malformed(void **state)
{
	struct fx *f = *state;
	char names[PFS_UNLINK_BATCH_MAX + 1][16], longname[PFS_NAME_MAX + 2];
	const char *np[PFS_UNLINK_BATCH_MAX + 1];
	uint64_t inos[PFS_UNLINK_BATCH_MAX + 1];
	int ok[PFS_UNLINK_BATCH_MAX];
	pfs_wbuf w;

	pfs_wbuf_init(&w);
	uint64_t d = dir_as(f, &root, 1, "bad", 0777);
	for (int i = 0; i <= PFS_UNLINK_BATCH_MAX; i++) {
		snprintf(names[i], sizeof(names[i]), "f%02d", i);
		np[i] = names[i];
		inos[i] = fifo_as(f, &root, d, names[i]);
	}
	memset(longname, 'l', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	for (int via = 0; via < 2; via++) {
		/* n = 0 */
		batch_put(&w, &root, d, 0, np, inos);
		assert_int_equal(batch_send(f, via, &w, 0, NULL), -EINVAL);
		/* n = 33, all valid */
		batch_put(&w, &root, d, PFS_UNLINK_BATCH_MAX + 1, np, inos);
		assert_int_equal(batch_send(f, via, &w, 0, NULL), -EINVAL);
		/* a huge n with one entry */
		pfs_cred_encode(&w, &root);
		pfs_wbuf_u64(&w, d);
		pfs_wbuf_u32(&w, 0xffffffffu);
		pfs_wbuf_str(&w, np[0]);
		pfs_wbuf_u64(&w, inos[0]);
		assert_int_equal(batch_send(f, via, &w, 0, NULL), -EINVAL);
		/* n = 3, two entries (truncated) */
		pfs_cred_encode(&w, &root);
		pfs_wbuf_u64(&w, d);
		pfs_wbuf_u32(&w, 3);
		for (int i = 0; i < 2; i++) {
			pfs_wbuf_str(&w, np[i]);
			pfs_wbuf_u64(&w, inos[i]);
		}
		assert_int_equal(batch_send(f, via, &w, 0, NULL), -EINVAL);
		/* the last entry's inode cut short */
		batch_put(&w, &root, d, 2, np, inos);
		w.len -= 4;
		assert_int_equal(batch_send(f, via, &w, 0, NULL), -EINVAL);
		/* a trailing byte */
		batch_put(&w, &root, d, 2, np, inos);
		pfs_wbuf_u8(&w, 0);
		assert_int_equal(batch_send(f, via, &w, 0, NULL), -EINVAL);
		/* a name too long after a valid entry */
		const char *ln[] = { np[0], longname };
		batch_put(&w, &root, d, 2, ln, inos);
		assert_int_equal(batch_send(f, via, &w, 0, NULL), -EINVAL);
		/* a name with a NUL in it after a valid entry */
		pfs_cred_encode(&w, &root);
		pfs_wbuf_u64(&w, d);
		pfs_wbuf_u32(&w, 2);
		pfs_wbuf_str(&w, np[0]);
		pfs_wbuf_u64(&w, inos[0]);
		pfs_wbuf_strn(&w, "f0\0x", 4);
		pfs_wbuf_u64(&w, inos[1]);
		assert_int_equal(batch_send(f, via, &w, 0, NULL), -EINVAL);
		/* no parent, no n */
		pfs_cred_encode(&w, &root);
		assert_int_equal(batch_send(f, via, &w, 0, NULL), -EINVAL);
	}
	/* nothing went */
	for (int i = 0; i <= PFS_UNLINK_BATCH_MAX; i++)
		assert_int_equal(ino_of(f, d, names[i]), inos[i]);
	/* 32 entries: all go (over the socket: one group member, in a group
	 * of its own: one commit, not 32; the job's first sight may add one) */
	mds_sync_stats before, after;
	for (int i = 0; i < PFS_UNLINK_BATCH_MAX; i++)
		ok[i] = 0;
	batch_put(&w, &root, d, PFS_UNLINK_BATCH_MAX, np, inos);
	mds_ns_sync_stats(f->ns, &before);
	assert_int_equal(batch_send(f, 0, &w, PFS_UNLINK_BATCH_MAX, ok), 0);
	mds_ns_sync_stats(f->ns, &after);
	assert_true(after.last_txn - before.last_txn <= 2);
	for (int i = 0; i < PFS_UNLINK_BATCH_MAX; i++)
		assert_int_equal(ino_of(f, d, names[i]), 0);
	assert_int_equal(ino_of(f, d, names[PFS_UNLINK_BATCH_MAX]), inos[PFS_UNLINK_BATCH_MAX]);
	pfs_wbuf_free(&w);
}

/* One batch frame on a raw socket as client 0x77; the reply's statuses
 * into st (at most max).  Returns the frame's status. */
static int raw_batch(int fd, uint64_t req, uint16_t flags, pfs_wbuf *w, int *st, uint32_t max)
{
	pfs_hdr h, rh;
	uint8_t *dyn = NULL, *data;
	pfs_rbuf r;
	int rc;

	pfs_hdr_init(&h, PFS_OP_MDS_UNLINK_BATCH, req, 0x77, "bj");
	h.flags |= flags;
	assert_int_equal(pfs_net_send_frame(fd, &h, w->data, w->len, NULL, 0), 0);
	pfs_wbuf_reset(w);
	assert_int_equal(pfs_net_recv_frame(fd, &rh, PFS_MAX_PAYLOAD, NULL, 0, &dyn, &data), 0);
	assert_int_equal(rh.req_id, req);
	rc = rh.status;
	if (!rc) {
		pfs_rbuf_init(&r, data, rh.payload_len);
		uint32_t n = pfs_rbuf_u32(&r);
		assert_true(n <= max);
		for (uint32_t i = 0; i < n; i++)
			st[i] = (int32_t)pfs_rbuf_u32(&r);
		assert_int_equal(pfs_rbuf_done(&r), 0);
	}
	free(dyn);
	return rc;
}

/* A resend (PFS_F_RESEND, same client and request id) gets the first
 * reply from the reply cache, not a second run's -ENOENT; a new request
 * id runs again. */
static void test_server_unlink_batch_resend(void **state)
{
	struct fx *f = *state;
	uint64_t d = dir_as(f, &root, 1, "rs", 0777);
	uint64_t a = fifo_as(f, &root, d, "a"), b = fifo_as(f, &root, d, "b");
	const char *names[] = { "a", "b", "c" };
	const uint64_t inos[] = { a, b, 0 };
	int st[4];
	pfs_wbuf w;
	int fd = raw_connect(f);

	pfs_wbuf_init(&w);
	batch_put(&w, &root, d, 3, names, inos);
	assert_int_equal(raw_batch(fd, 900, 0, &w, st, 4), 0);
	assert_int_equal(st[0], 0);
	assert_int_equal(st[1], 0);
	assert_int_equal(st[2], -ENOENT);
	assert_int_equal(ino_of(f, d, "a"), 0);
	/* the resend: the cached reply */
	memset(st, 0x5a, sizeof(st));
	batch_put(&w, &root, d, 3, names, inos);
	assert_int_equal(raw_batch(fd, 900, PFS_F_RESEND, &w, st, 4), 0);
	assert_int_equal(st[0], 0);
	assert_int_equal(st[1], 0);
	assert_int_equal(st[2], -ENOENT);
	/* and through the dispatcher (same cache) */
	pfs_hdr h;
	pfs_wbuf o;
	pfs_wbuf_init(&o);
	batch_put(&w, &root, d, 3, names, inos);
	pfs_hdr_init(&h, PFS_OP_MDS_UNLINK_BATCH, 900, 0x77, "bj");
	h.flags |= PFS_F_RESEND;
	h.payload_len = (uint32_t)w.len;
	assert_int_equal(mds_server_dispatch(f->s, &h, w.data, w.len, "test", &o), 0);
	const int cached[] = { 0, 0, -ENOENT };
	batch_check(o.data, o.len, 3, cached);
	pfs_wbuf_free(&o);
	pfs_wbuf_reset(&w);
	/* a new request: runs again */
	batch_put(&w, &root, d, 3, names, inos);
	assert_int_equal(raw_batch(fd, 901, 0, &w, st, 4), 0);
	assert_int_equal(st[0], -ENOENT);
	assert_int_equal(st[1], -ENOENT);
	assert_int_equal(st[2], -ENOENT);
	close(fd);
	pfs_wbuf_free(&w);
}

static double pq_now;
static double pq_clk(void *arg) { return pq_now; }

/* PADLL on the MDS counts a batch of 10 unlinks as 10 (its arrivals), a
 * lone UNLINK as 1: the server charges the batch its n (mdq_cost). */
static void test_server_unlink_batch_padll(void **state)
{
	struct fx *f = *state;
	mds_mdqos_opts qo = { .algo = "uniform", .max_r = "unlink=1000", .params = "jobs=1",
			      .no_threads = 1, .now = pq_clk };
	mds_server_opts mo = { .host = "127.0.0.1", .port = 0 };
	pfs_rpc_opts ro = { .max_conns = 2, .timeout_ms = 10000, .retry_ms = 100 };
	pfs_rpc_pool *pool;
	mds_mdqos *q = NULL;
	pfs_mdq_status st;
	char err[256], names[10][8];
	const char *np[10];
	uint64_t inos[10];
	const int want[10] = { 0 };
	pfs_rpc_reply rep;
	pfs_wbuf w;

	pq_now = 5000;
	assert_int_equal(mds_mdqos_create(NULL, NULL, &qo, &q, err, sizeof(err)), 0);
	mds_server_stop(f->s);
	mo.mdqos = q;
	assert_int_equal(mds_server_start(f->ns, &mo, &f->s), 0);
	assert_int_equal(pfs_rpc_pool_create("127.0.0.1", mds_server_port(f->s), &ro, &pool), 0);
	uint64_t d = dir_as(f, &root, 1, "pq", 0777);
	for (int i = 0; i < 10; i++) {
		snprintf(names[i], sizeof(names[i]), "p%d", i);
		np[i] = names[i];
		inos[i] = fifo_as(f, &root, d, names[i]);
	}
	uint64_t lone = fifo_as(f, &root, d, "lone");
	pfs_wbuf_init(&w);
	batch_put(&w, &root, d, 10, np, inos);
	pfs_rpc_reply_init(&rep);
	assert_int_equal(pfs_rpc_call(pool, PFS_OP_MDS_UNLINK_BATCH, "pj", 0, w.data, w.len, NULL,
				      0, &rep), 0);
	batch_check(rep.data, rep.len, 10, want);
	pfs_rpc_reply_free(&rep);
	pfs_wbuf_reset(&w);
	pfs_cred_encode(&w, &root);
	pfs_wbuf_u64(&w, d);
	pfs_wbuf_str(&w, "lone");
	pfs_wbuf_u64(&w, lone);
	pfs_rpc_reply_init(&rep);
	assert_int_equal(pfs_rpc_call(pool, PFS_OP_MDS_UNLINK, "pj", 0, w.data, w.len, NULL, 0,
				      &rep), 0);
	pfs_rpc_reply_free(&rep);
	for (int i = 0; i < 10; i++)
		assert_int_equal(ino_of(f, d, names[i]), 0);
	pq_now += 1;
	mds_mdqos_step(q);
	assert_int_equal(mds_mdqos_show(q, &st), 0);
	double arrived = -1;
	for (uint32_t i = 0; i < st.n; i++)
		if (!strcmp(st.rows[i].job, "pj") && st.rows[i].cls == PFS_MDQ_UNLINK)
			arrived = st.rows[i].arrived;
	pfs_mdq_status_free(&st);
	assert_true(fabs(arrived - 11) < 1e-9);
	pfs_wbuf_free(&w);
	pfs_rpc_pool_destroy(pool);
	mds_mdqos_stop(q);
	mds_server_stop(f->s);
	f->s = NULL;
	mds_mdqos_destroy(q);
}

/* ---- asynchronous create: CREATE_SLOTS and CREATE_BATCH ---- */

static void cbatch_put(pfs_wbuf *w, const pfs_cred *c, uint64_t dir, uint32_t n,
		       const char *const *names, const uint64_t *inos)
{
	pfs_cred_encode(w, c);
	pfs_wbuf_u64(w, dir);
	pfs_wbuf_u32(w, n);
	for (uint32_t i = 0; i < n; i++) {
		pfs_wbuf_str(w, names[i]);
		pfs_wbuf_u32(w, S_IFREG | 0644);
		pfs_wbuf_u32(w, PFS_CREATE_CLOSED);
		pfs_wbuf_u64(w, inos[i]);
	}
}

/* Without a delegation (this server has no leases, so none can be held)
 * CREATE_SLOTS is -EAGAIN, and a malformed one -EINVAL; CREATE_BATCH
 * decodes everything first (-EINVAL and nothing made for n out of range,
 * a truncated entry, trailing bytes, an unknown entry flag), then refuses
 * each entry whose slot this client was never given (-ESTALE: a client
 * cannot choose inode numbers), a batch of one the same; a CREATE with an
 * unknown flag is -EINVAL. */
static void test_server_create_slots_refused(void **state)
{
	struct fx *f = *state;
	char names[PFS_CREATE_SLOTS_MAX + 1][16];
	const char *np[PFS_CREATE_SLOTS_MAX + 1];
	uint64_t inos[PFS_CREATE_SLOTS_MAX + 1];
	int stale[PFS_CREATE_SLOTS_MAX];
	uint8_t *out = NULL;
	size_t len = 0;
	pfs_wbuf w;

	pfs_wbuf_init(&w);
	uint64_t d = dir_as(f, &root, 1, "cs", 0777);
	for (int i = 0; i <= PFS_CREATE_SLOTS_MAX; i++) {
		snprintf(names[i], sizeof(names[i]), "n%02d", i);
		np[i] = names[i];
		inos[i] = 900000 + (uint64_t)i;
		if (i < PFS_CREATE_SLOTS_MAX)
			stale[i] = -ESTALE;
	}
	/* CREATE_SLOTS */
	pfs_cred_encode(&w, &root);
	pfs_wbuf_u64(&w, d);
	pfs_wbuf_u32(&w, 4);
	assert_int_equal(call(f, PFS_OP_MDS_CREATE_SLOTS, "cj", &w, NULL, NULL), -EAGAIN);
	pfs_cred_encode(&w, &root);
	pfs_wbuf_u64(&w, d);
	pfs_wbuf_u32(&w, 0);
	assert_int_equal(call(f, PFS_OP_MDS_CREATE_SLOTS, "cj", &w, NULL, NULL), -EINVAL);
	pfs_cred_encode(&w, &root);
	pfs_wbuf_u64(&w, d);
	pfs_wbuf_u32(&w, PFS_CREATE_SLOTS_MAX + 1);
	assert_int_equal(call(f, PFS_OP_MDS_CREATE_SLOTS, "cj", &w, NULL, NULL), -EINVAL);
	pfs_cred_encode(&w, &root);
	pfs_wbuf_u64(&w, d);
	assert_int_equal(call(f, PFS_OP_MDS_CREATE_SLOTS, "cj", &w, NULL, NULL), -EBADMSG);

	/* CREATE_BATCH, malformed */
	cbatch_put(&w, &root, d, 0, np, inos);
	assert_int_equal(call(f, PFS_OP_MDS_CREATE_BATCH, "cj", &w, NULL, NULL), -EINVAL);
	cbatch_put(&w, &root, d, PFS_CREATE_SLOTS_MAX + 1, np, inos);
	assert_int_equal(call(f, PFS_OP_MDS_CREATE_BATCH, "cj", &w, NULL, NULL), -EINVAL);
	cbatch_put(&w, &root, d, 2, np, inos);
	w.len -= 4;
	assert_int_equal(call(f, PFS_OP_MDS_CREATE_BATCH, "cj", &w, NULL, NULL), -EINVAL);
	cbatch_put(&w, &root, d, 2, np, inos);
	pfs_wbuf_u8(&w, 0);
	assert_int_equal(call(f, PFS_OP_MDS_CREATE_BATCH, "cj", &w, NULL, NULL), -EINVAL);
	/* well formed, no such slots: each entry -ESTALE, nothing made */
	cbatch_put(&w, &root, d, PFS_CREATE_SLOTS_MAX, np, inos);
	assert_int_equal(call(f, PFS_OP_MDS_CREATE_BATCH, "cj", &w, &out, &len), 0);
	batch_check(out, len, PFS_CREATE_SLOTS_MAX, stale);
	free(out);
	/* a batch of one, the same */
	cbatch_put(&w, &root, d, 1, np, inos);
	assert_int_equal(call(f, PFS_OP_MDS_CREATE_BATCH, "cj", &w, &out, &len), 0);
	batch_check(out, len, 1, stale);
	free(out);
	/* an entry flag other than CLOSED: malformed, nothing runs */
	pfs_cred_encode(&w, &root);
	pfs_wbuf_u64(&w, d);
	pfs_wbuf_u32(&w, 1);
	pfs_wbuf_str(&w, "single");
	pfs_wbuf_u32(&w, S_IFREG | 0644);
	pfs_wbuf_u32(&w, PFS_CREATE_CLOSED | PFS_CREATE_EXCL);
	pfs_wbuf_u64(&w, 900100);
	assert_int_equal(call(f, PFS_OP_MDS_CREATE_BATCH, "cj", &w, NULL, NULL), -EINVAL);
	/* a CREATE with a flag of no meaning (0x8 named a slot once; the
	 * MDS's own MDS_CREATE_WRITER is never taken from the wire) */
	for (int k = 0; k < 2; k++) {
		pfs_cred_encode(&w, &root);
		pfs_wbuf_u64(&w, d);
		pfs_wbuf_str(&w, "single");
		pfs_wbuf_u32(&w, S_IFREG | 0644);
		pfs_wbuf_u32(&w, PFS_CREATE_EXCL | (k ? MDS_CREATE_WRITER : 0x8u));
		pfs_wbuf_u32(&w, 0);
		pfs_wbuf_u32(&w, 0);
		pfs_wbuf_u32(&w, PFS_STRIPE_OFFSET_ANY);
		assert_int_equal(call(f, PFS_OP_MDS_CREATE, "cj", &w, NULL, NULL), -EINVAL);
	}
	for (int i = 0; i <= PFS_CREATE_SLOTS_MAX; i++)
		assert_int_equal(ino_of(f, d, names[i]), 0);
	assert_int_equal(ino_of(f, d, "single"), 0);
	pfs_wbuf_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_server_ops, setup, teardown),
		cmocka_unit_test_setup_teardown(test_server_authz, setup, teardown),
		cmocka_unit_test_setup_teardown(test_server_destroy_retry, setup, teardown),
		cmocka_unit_test_setup_teardown(test_server_destroy_batched, setup, teardown),
		cmocka_unit_test_setup_teardown(test_server_destroy_one_by_one, setup, teardown),
		cmocka_unit_test_setup_teardown(test_server_garbage, setup, teardown),
		cmocka_unit_test_setup_teardown(test_server_unlink_batch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_server_unlink_batch_malformed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_server_create_slots_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_server_unlink_batch_resend, setup, teardown),
		cmocka_unit_test_setup_teardown(test_server_unlink_batch_padll, setup, teardown),
		cmocka_unit_test_setup_teardown(test_server_concurrent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_server_jobs_and_qos, setup, teardown),
		cmocka_unit_test_setup_teardown(test_server_jobs_qos_malformed, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
