/* test_mds_reply_cache.c — the MDS reply cache (mds/reply_cache.h): a
 * resend gets the original status and payload, a first send always runs,
 * per-client and per-cache bounds, too-large replies re-executed, a resend
 * waiting for its running original (and giving up with -EBUSY), abandon;
 * then through the dispatcher on a real namespace: a resent MKDIR, UNLINK
 * and RENAME that already ran answer with their original replies instead of
 * -EEXIST/-ENOENT, while a new request (new id) still gets -EEXIST; and
 * across a restart (mds/reply_log.h): replies stored with their operation
 * answer the resends the emptied cache does not know. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/buf.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/msg.h"
#include "common/proto.h"
#include "common/qosmsg.h"
#include "mds/jobs.h"
#include "mds/ns.h"
#include "mds/reply_cache.h"
#include "mds/reply_log.h"
#include "mds/server.h"

static void test_rc_hit_after_end(void **state)
{
	mds_rcache *c;
	mds_rc_hit hit;
	mds_rcache_stats st;

	assert_int_equal(mds_rc_create(NULL, &c), 0);
	assert_int_equal(mds_rc_begin(c, 7, 100, 0, &hit), MDS_RC_RUN);
	mds_rc_end(c, 7, 100, 0, "attr", 4);
	/* the resend gets the original reply */
	assert_int_equal(mds_rc_begin(c, 7, 100, 1, &hit), MDS_RC_CACHED);
	assert_int_equal(hit.status, 0);
	assert_int_equal(hit.len, 4);
	assert_memory_equal(hit.data, "attr", 4);
	mds_rc_hit_free(&hit);
	/* an error status is kept too */
	assert_int_equal(mds_rc_begin(c, 7, 101, 0, &hit), MDS_RC_RUN);
	mds_rc_end(c, 7, 101, -EEXIST, NULL, 0);
	assert_int_equal(mds_rc_begin(c, 7, 101, 1, &hit), MDS_RC_CACHED);
	assert_int_equal(hit.status, -EEXIST);
	assert_int_equal(hit.len, 0);
	mds_rc_hit_free(&hit);
	/* another client with the same request id is another request */
	assert_int_equal(mds_rc_begin(c, 8, 100, 1, &hit), MDS_RC_RUN);
	mds_rc_end(c, 8, 100, 0, NULL, 0);
	/* a first send never hits, even with a known id */
	assert_int_equal(mds_rc_begin(c, 7, 100, 0, &hit), MDS_RC_RUN);
	mds_rc_end(c, 7, 100, -ENOENT, NULL, 0);
	assert_int_equal(mds_rc_begin(c, 7, 100, 1, &hit), MDS_RC_CACHED);
	assert_int_equal(hit.status, -ENOENT); /* the newest */
	mds_rc_hit_free(&hit);
	mds_rc_stats(c, &st);
	assert_int_equal(st.hits, 3);
	assert_int_equal(st.reexec, 1); /* client 8's unknown resend */
	assert_int_equal(st.clients, 2);
	mds_rc_destroy(c);
}

static void test_rc_bounds(void **state)
{
	mds_rcache_opts o = { .per_client = 4, .max_clients = 2, .max_reply = 8 };
	mds_rcache *c;
	mds_rc_hit hit;

	assert_int_equal(mds_rc_create(&o, &c), 0);
	for (uint64_t r = 1; r <= 5; r++) {
		assert_int_equal(mds_rc_begin(c, 1, r, 0, &hit), MDS_RC_RUN);
		mds_rc_end(c, 1, r, 0, &r, sizeof(r));
	}
	/* request 1 fell out of the client's last 4: it runs again */
	assert_int_equal(mds_rc_begin(c, 1, 1, 1, &hit), MDS_RC_RUN);
	mds_rc_end(c, 1, 1, 0, NULL, 0);
	assert_int_equal(mds_rc_begin(c, 1, 5, 1, &hit), MDS_RC_CACHED);
	assert_int_equal(*(uint64_t *)hit.data, 5);
	mds_rc_hit_free(&hit);
	/* too large to keep: the resend runs again */
	assert_int_equal(mds_rc_begin(c, 1, 9, 0, &hit), MDS_RC_RUN);
	mds_rc_end(c, 1, 9, 0, "123456789", 9);
	assert_int_equal(mds_rc_begin(c, 1, 9, 1, &hit), MDS_RC_RUN);
	mds_rc_end(c, 1, 9, 0, "1", 1);
	assert_int_equal(mds_rc_begin(c, 1, 9, 1, &hit), MDS_RC_CACHED);
	mds_rc_hit_free(&hit);
	/* a third client evicts the least recently seen (client 2) */
	assert_int_equal(mds_rc_begin(c, 2, 1, 0, &hit), MDS_RC_RUN);
	mds_rc_end(c, 2, 1, 0, NULL, 0);
	assert_int_equal(mds_rc_begin(c, 1, 5, 1, &hit), MDS_RC_CACHED); /* 1 is recent */
	mds_rc_hit_free(&hit);
	assert_int_equal(mds_rc_begin(c, 3, 1, 0, &hit), MDS_RC_RUN);
	mds_rc_end(c, 3, 1, 0, NULL, 0);
	assert_int_equal(mds_rc_begin(c, 1, 5, 1, &hit), MDS_RC_CACHED);
	mds_rc_hit_free(&hit);
	assert_int_equal(mds_rc_begin(c, 2, 1, 1, &hit), MDS_RC_RUN); /* forgotten */
	mds_rc_abandon(c, 2, 1);
	/* abandoned: a resend runs */
	assert_int_equal(mds_rc_begin(c, 2, 1, 1, &hit), MDS_RC_RUN);
	mds_rc_end(c, 2, 1, 0, NULL, 0);
	mds_rc_destroy(c);
}

struct waiter {
	mds_rcache *c;
	int rc, status;
	uint64_t waited_ms;
};

static void *resend_thread(void *arg)
{
	struct waiter *w = arg;
	mds_rc_hit hit;
	uint64_t t0 = pfs_clock_ms();

	w->rc = mds_rc_begin(w->c, 1, 42, 1, &hit);
	w->waited_ms = pfs_clock_ms() - t0;
	w->status = hit.status;
	mds_rc_hit_free(&hit);
	return NULL;
}

/* A resend that arrives while its original runs waits for its reply. */
static void test_rc_resend_waits_for_original(void **state)
{
	mds_rcache_opts o = { .wait_ms = 5000 };
	struct waiter w = { 0 };
	mds_rc_hit hit;
	pthread_t t;

	assert_int_equal(mds_rc_create(&o, &w.c), 0);
	assert_int_equal(mds_rc_begin(w.c, 1, 42, 0, &hit), MDS_RC_RUN);
	assert_int_equal(pthread_create(&t, NULL, resend_thread, &w), 0);
	usleep(200 * 1000);
	mds_rc_end(w.c, 1, 42, -ENOTEMPTY, NULL, 0);
	pthread_join(t, NULL);
	assert_int_equal(w.rc, MDS_RC_CACHED);
	assert_int_equal(w.status, -ENOTEMPTY);
	assert_true(w.waited_ms >= 100); /* it did wait (not a speed assertion) */
	mds_rc_destroy(w.c);

	/* The original never answers: the resend gives up with -EBUSY. */
	o.wait_ms = 100;
	assert_int_equal(mds_rc_create(&o, &w.c), 0);
	assert_int_equal(mds_rc_begin(w.c, 1, 42, 0, &hit), MDS_RC_RUN);
	resend_thread(&w);
	assert_int_equal(w.rc, -EBUSY);
	mds_rc_end(w.c, 1, 42, 0, NULL, 0);
	mds_rc_destroy(w.c);
}

/* ---- through the dispatcher ---- */

struct fx {
	char dir[64], db[96];
	mds_ns *ns;
	mds_server *s;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	mds_server_opts mo = { .host = "127.0.0.1", .port = 0 };

	pfs_log_init("test", PFS_LOG_ERR);
	strcpy(f->dir, "/tmp/test_mds_rc.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->db, sizeof(f->db), "%s/db", f->dir);
	mds_ns_opts no = { .path = f->db, .mapsize = 1ull << 28 };
	assert_int_equal(mds_ns_open(&no, &f->ns), 0);
	assert_int_equal(mds_server_start(f->ns, &mo, &f->s), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[128];

	mds_server_stop(f->s);
	mds_ns_close(f->ns);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

/* Dispatch op with payload w as request req_id of client 77; resend sets
 * PFS_F_RESEND.  The reply payload is left in out. */
static int send_op(struct fx *f, uint16_t op, uint64_t req_id, int resend, pfs_wbuf *w,
		   pfs_wbuf *out)
{
	pfs_hdr h;

	pfs_hdr_init(&h, op, req_id, 77, "job");
	if (resend)
		h.flags = PFS_F_RESEND;
	pfs_wbuf_reset(out);
	return mds_server_dispatch(f->s, &h, w->data, w->len, "test", out);
}

static void name_req(pfs_wbuf *w, uint64_t parent, const char *name)
{
	pfs_cred cr = { .uid = 0, .gid = 0 };

	pfs_wbuf_reset(w);
	pfs_cred_encode(w, &cr);
	pfs_wbuf_u64(w, parent);
	pfs_wbuf_str(w, name);
}

static void test_rc_dispatch_resends(void **state)
{
	struct fx *f = *state;
	pfs_wbuf w, out;
	uint8_t first[512];
	size_t first_len;
	pfs_rbuf r;
	pfs_attr a;

	pfs_wbuf_init(&w);
	pfs_wbuf_init(&out);
	/* MKDIR runs once; its resend gets the same attributes */
	name_req(&w, 1, "d");
	pfs_wbuf_u32(&w, 0755);
	assert_int_equal(send_op(f, PFS_OP_MDS_MKDIR, 10, 0, &w, &out), 0);
	assert_true(out.len > 0 && out.len <= sizeof(first));
	memcpy(first, out.data, out.len);
	first_len = out.len;
	assert_int_equal(send_op(f, PFS_OP_MDS_MKDIR, 10, 1, &w, &out), 0);
	assert_int_equal(out.len, first_len);
	assert_memory_equal(out.data, first, first_len);
	pfs_rbuf_init(&r, out.data, out.len);
	assert_int_equal(pfs_attr_decode(&r, &a), 0);
	assert_true(S_ISDIR(a.mode));
	/* a new request (new id) for the same name is a second mkdir */
	assert_int_equal(send_op(f, PFS_OP_MDS_MKDIR, 11, 0, &w, &out), -EEXIST);

	/* RENAME d -> e, resent: success, not -ENOENT */
	name_req(&w, 1, "d");
	pfs_wbuf_u64(&w, 1);
	pfs_wbuf_str(&w, "e");
	pfs_wbuf_u32(&w, 0);
	assert_int_equal(send_op(f, PFS_OP_MDS_RENAME, 12, 0, &w, &out), 0);
	assert_int_equal(send_op(f, PFS_OP_MDS_RENAME, 12, 1, &w, &out), 0);
	assert_int_equal(send_op(f, PFS_OP_MDS_RENAME, 13, 0, &w, &out), -ENOENT);

	/* RMDIR e, resent: success, not -ENOENT */
	name_req(&w, 1, "e");
	assert_int_equal(send_op(f, PFS_OP_MDS_RMDIR, 14, 0, &w, &out), 0);
	assert_int_equal(send_op(f, PFS_OP_MDS_RMDIR, 14, 1, &w, &out), 0);
	assert_int_equal(send_op(f, PFS_OP_MDS_RMDIR, 15, 0, &w, &out), -ENOENT);

	/* A resend of a request never seen (lost before it arrived) runs. */
	name_req(&w, 1, "g");
	pfs_wbuf_u32(&w, 0700);
	assert_int_equal(send_op(f, PFS_OP_MDS_MKDIR, 16, 1, &w, &out), 0);
	/* Reads are not cached: a resent LOOKUP sees the present. */
	name_req(&w, 1, "g");
	assert_int_equal(send_op(f, PFS_OP_MDS_LOOKUP, 17, 0, &w, &out), 0);
	name_req(&w, 1, "g");
	assert_int_equal(send_op(f, PFS_OP_MDS_RMDIR, 18, 0, &w, &out), 0);
	name_req(&w, 1, "g");
	assert_int_equal(send_op(f, PFS_OP_MDS_LOOKUP, 17, 1, &w, &out), -ENOENT);
	pfs_wbuf_free(&w);
	pfs_wbuf_free(&out);
}

/* The MDS dies after committing and before replying: stop the server and
 * close the namespace (the replies are dropped), open both again (an empty
 * reply cache). */
static void fx_restart(struct fx *f)
{
	mds_server_opts mo = { .host = "127.0.0.1", .port = 0 };
	mds_ns_opts no = { .path = f->db, .mapsize = 1ull << 28 };

	mds_server_stop(f->s);
	assert_int_equal(mds_ns_close(f->ns), 0);
	assert_int_equal(mds_ns_open(&no, &f->ns), 0);
	assert_int_equal(mds_server_start(f->ns, &mo, &f->s), 0);
}

static void mkdir_req(pfs_wbuf *w, const char *name)
{
	name_req(w, 1, name);
	pfs_wbuf_u32(w, 0755);
}

/* Across a restart: a resent MKDIR, CREATE (O_EXCL) and UNLINK that had
 * committed get their original replies from the replies table, not
 * -EEXIST/-ENOENT; a resend of a request that never ran or that failed
 * runs; records that left the per-client window are gone. */
static void test_rc_log_survives_restart(void **state)
{
	struct fx *f = *state;
	mds_ost_report r[2];
	uint32_t idx[2];
	pfs_wbuf w, out;
	uint8_t mk[512], cr[4096];
	size_t mk_len, cr_len;
	pfs_rbuf rb;
	pfs_attr a;
	pfs_layout *lay = malloc(sizeof(*lay));

	assert_non_null(lay);
	memset(r, 0, sizeof(r));
	for (int i = 0; i < 2; i++) {
		snprintf(r[i].uuid, sizeof(r[i].uuid), "uuid-%d", i);
		r[i].total_bytes = 1ull << 40;
		r[i].free_bytes = 1ull << 39;
	}
	assert_int_equal(mds_ns_oss_register(f->ns, "oss0", "127.0.0.1", 7800, 7801, r, 2, idx),
			 0);
	pfs_wbuf_init(&w);
	pfs_wbuf_init(&out);
	mkdir_req(&w, "d");
	assert_int_equal(send_op(f, PFS_OP_MDS_MKDIR, 30, 0, &w, &out), 0);
	assert_true(out.len <= sizeof(mk));
	memcpy(mk, out.data, out.len);
	mk_len = out.len;
	name_req(&w, 1, "f");
	pfs_wbuf_u32(&w, 0644);
	pfs_wbuf_u32(&w, PFS_CREATE_EXCL | PFS_CREATE_READ | PFS_CREATE_WRITE);
	pfs_wbuf_u32(&w, 0);
	pfs_wbuf_u32(&w, 2);
	assert_int_equal(send_op(f, PFS_OP_MDS_CREATE, 31, 0, &w, &out), 0);
	assert_true(out.len <= sizeof(cr));
	memcpy(cr, out.data, out.len);
	cr_len = out.len;
	name_req(&w, 1, "u");
	pfs_wbuf_u32(&w, S_IFREG | 0600);
	pfs_wbuf_u32(&w, 0);
	assert_int_equal(send_op(f, PFS_OP_MDS_MKNOD, 32, 0, &w, &out), 0);
	name_req(&w, 1, "u");
	assert_int_equal(send_op(f, PFS_OP_MDS_UNLINK, 33, 0, &w, &out), 0);
	mkdir_req(&w, "d");
	assert_int_equal(send_op(f, PFS_OP_MDS_MKDIR, 34, 0, &w, &out), -EEXIST);

	fx_restart(f);
	/* MKDIR: the stored attributes, byte for byte; not run again */
	mkdir_req(&w, "d");
	assert_int_equal(send_op(f, PFS_OP_MDS_MKDIR, 30, 1, &w, &out), 0);
	assert_int_equal(out.len, mk_len);
	assert_memory_equal(out.data, mk, mk_len);
	/* a second resend is answered by the memory cache, the same */
	assert_int_equal(send_op(f, PFS_OP_MDS_MKDIR, 30, 1, &w, &out), 0);
	assert_memory_equal(out.data, mk, mk_len);
	/* CREATE with O_EXCL: attributes and layout (run again: -EEXIST) */
	name_req(&w, 1, "f");
	pfs_wbuf_u32(&w, 0644);
	pfs_wbuf_u32(&w, PFS_CREATE_EXCL | PFS_CREATE_READ | PFS_CREATE_WRITE);
	pfs_wbuf_u32(&w, 0);
	pfs_wbuf_u32(&w, 2);
	assert_int_equal(send_op(f, PFS_OP_MDS_CREATE, 31, 1, &w, &out), 0);
	assert_int_equal(out.len, cr_len);
	assert_memory_equal(out.data, cr, cr_len);
	pfs_rbuf_init(&rb, out.data, out.len);
	assert_int_equal(pfs_attr_decode(&rb, &a), 0);
	assert_true(S_ISREG(a.mode));
	assert_int_equal(pfs_layout_decode(&rb, lay), 0);
	assert_int_equal(lay->stripe_count, 2);
	/* the same request id without PFS_F_RESEND is a new request: runs */
	assert_int_equal(send_op(f, PFS_OP_MDS_CREATE, 31, 0, &w, &out), -EEXIST);
	/* UNLINK: success, not -ENOENT */
	name_req(&w, 1, "u");
	assert_int_equal(send_op(f, PFS_OP_MDS_UNLINK, 33, 1, &w, &out), 0);
	/* a failed request stored nothing: its resend runs and fails again */
	mkdir_req(&w, "d");
	assert_int_equal(send_op(f, PFS_OP_MDS_MKDIR, 34, 1, &w, &out), -EEXIST);
	/* a resend of a request that never arrived runs */
	mkdir_req(&w, "z");
	assert_int_equal(send_op(f, PFS_OP_MDS_MKDIR, 35, 1, &w, &out), 0);
	name_req(&w, 1, "z");
	assert_int_equal(send_op(f, PFS_OP_MDS_LOOKUP, 36, 0, &w, &out), 0);

	/* Request 30 + MDS_REPLY_LOG_WINDOW pushes 30 out of the window (31
	 * stays); after a restart a resend of 30 runs again (-EEXIST). */
	mkdir_req(&w, "y");
	assert_int_equal(send_op(f, PFS_OP_MDS_MKDIR, 30 + MDS_REPLY_LOG_WINDOW, 0, &w, &out), 0);
	fx_restart(f);
	mkdir_req(&w, "d");
	assert_int_equal(send_op(f, PFS_OP_MDS_MKDIR, 30, 1, &w, &out), -EEXIST);
	name_req(&w, 1, "f");
	pfs_wbuf_u32(&w, 0644);
	pfs_wbuf_u32(&w, PFS_CREATE_EXCL | PFS_CREATE_READ | PFS_CREATE_WRITE);
	pfs_wbuf_u32(&w, 0);
	pfs_wbuf_u32(&w, 2);
	assert_int_equal(send_op(f, PFS_OP_MDS_CREATE, 31, 1, &w, &out), 0);
	assert_memory_equal(out.data, cr, cr_len);
	/* another client with the same request id is another request */
	mds_ns_reply_rec *rec = malloc(sizeof(*rec));
	assert_non_null(rec);
	assert_int_equal(mds_ns_reply_get(f->ns, 78, 31, rec), -ENOENT);
	assert_int_equal(mds_ns_reply_get(f->ns, 77, 31, rec), 0);
	assert_int_equal(rec->opcode, PFS_OP_MDS_CREATE);
	assert_true(rec->has_attr && rec->has_lay);
	free(rec);
	free(lay);
	pfs_wbuf_free(&w);
	pfs_wbuf_free(&out);
}

/* The admin mutations are not in the replies table: a resend the memory
 * cache does not know (the MDS restarted after running it) runs again,
 * which mds/README.md says is harmless for JOB_REGISTER and JOB_END:
 * the same job, registered once with the same fields and start; ended
 * once with the same end time. */
static void jobs_restart(struct fx *f, mds_jobs **jobs)
{
	mds_server_opts mo = { .host = "127.0.0.1", .port = 0 };
	mds_ns_opts no = { .path = f->db, .mapsize = 1ull << 28 };

	mds_server_stop(f->s);
	mds_jobs_close(*jobs);
	*jobs = NULL;
	assert_int_equal(mds_ns_close(f->ns), 0);
	assert_int_equal(mds_ns_open(&no, &f->ns), 0);
	assert_int_equal(mds_jobs_open(f->ns, NULL, jobs), 0);
	mo.jobs = *jobs;
	assert_int_equal(mds_server_start(f->ns, &mo, &f->s), 0);
}

static void test_rc_admin_resend_after_restart(void **state)
{
	struct fx *f = *state;
	mds_jobs *jobs = NULL;
	pfs_job_info j = { .uid = 1000, .nodes = 4, .priority = 2, .limit = 0,
			   .throttle_friendly = 1 }, got, first;
	pfs_wbuf w, out;

	strcpy(j.job, "job42");
	pfs_wbuf_init(&w);
	pfs_wbuf_init(&out);
	jobs_restart(f, &jobs);
	pfs_job_info_encode(&w, &j);
	assert_int_equal(send_op(f, PFS_OP_MDS_JOB_REGISTER, 50, 0, &w, &out), 0);
	assert_int_equal(mds_jobs_get(jobs, "job42", &first), 0);
	jobs_restart(f, &jobs);
	assert_int_equal(send_op(f, PFS_OP_MDS_JOB_REGISTER, 50, 1, &w, &out), 0);
	assert_int_equal(mds_jobs_get(jobs, "job42", &got), 0);
	assert_int_equal(got.state, PFS_JOB_RUNNING);
	assert_int_equal(got.nodes, 4);
	assert_int_equal(got.uid, 1000);
	assert_true(got.start_ns == first.start_ns);
	/* END, then its resend after a restart: still ended, same end time */
	pfs_wbuf_reset(&w);
	pfs_wbuf_str(&w, "job42");
	assert_int_equal(send_op(f, PFS_OP_MDS_JOB_END, 51, 0, &w, &out), 0);
	assert_int_equal(mds_jobs_get(jobs, "job42", &first), 0);
	assert_int_equal(first.state, PFS_JOB_ENDED);
	jobs_restart(f, &jobs);
	assert_int_equal(send_op(f, PFS_OP_MDS_JOB_END, 51, 1, &w, &out), 0);
	assert_int_equal(mds_jobs_get(jobs, "job42", &got), 0);
	assert_int_equal(got.state, PFS_JOB_ENDED);
	assert_true(got.end_ns == first.end_ns);
	pfs_wbuf_free(&w);
	pfs_wbuf_free(&out);
	/* the fixture's teardown stops the server first: jobs must outlive it */
	mds_server_stop(f->s);
	f->s = NULL;
	mds_jobs_close(jobs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rc_hit_after_end),
		cmocka_unit_test(test_rc_bounds),
		cmocka_unit_test(test_rc_resend_waits_for_original),
		cmocka_unit_test_setup_teardown(test_rc_dispatch_resends, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rc_log_survives_restart, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rc_admin_resend_after_restart, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
