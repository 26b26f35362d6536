/* test_mds_deleg.c — directory delegations of the MDS.
 *
 * The table alone (mds/deleg.h) with an injected clock and recall/release
 * callbacks: grants and refusals, a conflicting request parks and is
 * released by the holder's return, by the recall timeout and by the
 * expiry, in arrival order; the holder never parks and its requests
 * renew; caps (delegations, parked per directory and in all) never fail a
 * request; recall of all; destroy answers what is parked.  Then the
 * server (mds/server.h, no socket): DELEG_GET's namespace rules (sticky,
 * permissions, not a directory, no notify channel, another client's
 * lease) and garbage, truncated and oversized DELEG_GET/RETURN payloads
 * answered -EBADMSG.  Over sockets: another client's LOOKUP parks until
 * the holder has heard the RECALL, sent its conditional UNLINK and
 * returned the delegation (so it sees the unlink), and a READDIR parked
 * on a holder that never returns runs after the recall time; another
 * client's UNLINK_BATCH parks the same way and runs after the holder's own
 * batch and return; a 32-entry batch over names another mount looked up
 * gets every one of its revocations (held past 8 until its commit). */
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
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/msg.h"
#include "common/rpc.h"
#include "mds/deleg.h"
#include "mds/server.h"

#define A 0xaaaa
#define B 0xbbbb
#define C 0xcccc

typedef struct fake {
	uint64_t now;
	int nrecall, recall_rc;
	uint64_t recall_client[16], recall_dir[16];
	int nrel;
	intptr_t rel[64];
	int rel_status[64];
} fake;

static uint64_t fclock(void *arg)
{
	return ((fake *)arg)->now;
}

static int frecall(void *arg, uint64_t client, uint64_t dir)
{
	fake *f = arg;

	if (f->nrecall < 16) {
		f->recall_client[f->nrecall] = client;
		f->recall_dir[f->nrecall] = dir;
	}
	f->nrecall++;
	return f->recall_rc;
}

static void frelease(void *arg, void *req, int status)
{
	fake *f = arg;

	if (f->nrel < 64) {
		f->rel[f->nrel] = (intptr_t)req;
		f->rel_status[f->nrel] = status;
	}
	f->nrel++;
}

static const pfs_cred alice = { 1000, 1000, 1, { 2000 } };

static mds_deleg *mk(fake *f, unsigned max_delegs, unsigned per_dir, unsigned total)
{
	mds_deleg_opts o = { 0 };
	mds_deleg *d;

	memset(f, 0, sizeof(*f));
	f->now = 1000000;
	o.lease_ms = 10000;
	o.recall_ms = 5000;
	o.max_delegs = max_delegs;
	o.max_parked_dir = per_dir;
	o.max_parked = total;
	o.no_thread = 1;
	o.clock = fclock;
	o.recall = frecall;
	o.release = frelease;
	o.arg = f;
	assert_int_equal(mds_deleg_create(&o, &d), 0);
	return d;
}

#define REQ(n) ((void *)(intptr_t)(n))

static int check1(mds_deleg *d, uint64_t client, uint64_t dir, intptr_t req)
{
	return mds_deleg_check(d, client, &dir, 1, REQ(req));
}

static void test_grant_rules(void **st)
{
	fake f;
	mds_deleg *d = mk(&f, 0, 0, 0);
	mds_deleg_stats ss;
	uint32_t lms = 0;

	assert_false(mds_deleg_any(NULL));
	assert_false(mds_deleg_any(d));
	assert_int_equal(mds_deleg_get(d, A, 10, &lms), 0);
	assert_int_equal(lms, 10000);
	assert_true(mds_deleg_any(d));
	assert_int_equal(mds_deleg_holder(d, 10), A);
	/* the holder again: renewed */
	assert_int_equal(mds_deleg_get(d, A, 10, &lms), 0);
	/* another client: refused, and the recall starts (once) */
	assert_int_equal(mds_deleg_get(d, B, 10, &lms), -EAGAIN);
	assert_int_equal(f.nrecall, 1);
	assert_int_equal(f.recall_client[0], A);
	assert_int_equal(f.recall_dir[0], 10);
	assert_int_equal(mds_deleg_get(d, B, 10, &lms), -EAGAIN);
	assert_int_equal(f.nrecall, 1);
	/* during the recall not even the holder */
	assert_int_equal(mds_deleg_get(d, A, 10, &lms), -EAGAIN);
	/* returned: B may have it; a return by a non-holder is nothing */
	assert_int_equal(mds_deleg_return(d, B, 10), 0);
	assert_int_equal(mds_deleg_holder(d, 10), A);
	assert_int_equal(mds_deleg_return(d, A, 10), 0);
	assert_false(mds_deleg_any(d));
	assert_int_equal(mds_deleg_return(d, A, 10), 0); /* not held: success */
	assert_int_equal(mds_deleg_get(d, B, 10, &lms), 0);
	assert_int_equal(mds_deleg_holder(d, 10), B);
	/* another directory for A */
	assert_int_equal(mds_deleg_get(d, A, 11, &lms), 0);
	mds_deleg_get_stats(d, &ss);
	assert_int_equal(ss.grants, 3);
	assert_int_equal(ss.renewals, 1);
	assert_int_equal(ss.refusals, 3);
	assert_int_equal(ss.recalls, 1);
	assert_int_equal(ss.returns, 1);
	assert_int_equal(ss.held_now, 2);
	assert_int_equal(f.nrel, 0);
	mds_deleg_destroy(d);
}

static void test_park_released_by_return(void **st)
{
	fake f;
	mds_deleg *d = mk(&f, 0, 0, 0);
	mds_deleg_stats ss;
	uint64_t two[2] = { 99, 10 };

	assert_int_equal(mds_deleg_get(d, A, 10, NULL), 0);
	/* the holder never parks; undelegated directories never park */
	assert_int_equal(check1(d, A, 10, 1), 0);
	assert_int_equal(check1(d, B, 11, 2), 0);
	assert_int_equal(f.nrecall, 0);
	/* B and C park (any target of a request), in arrival order, one recall */
	assert_int_equal(check1(d, B, 10, 3), 1);
	assert_int_equal(f.nrecall, 1);
	assert_int_equal(mds_deleg_check(d, C, two, 2, REQ(4)), 1);
	assert_int_equal(check1(d, B, 10, 5), 1);
	assert_int_equal(f.nrecall, 1);
	mds_deleg_get_stats(d, &ss);
	assert_int_equal(ss.parked_now, 3);
	/* the holder's requests still run */
	assert_int_equal(check1(d, A, 10, 6), 0);
	/* time passes (short of the timeout): nothing */
	f.now += 4000;
	mds_deleg_tick(d);
	assert_int_equal(f.nrel, 0);
	assert_int_equal(mds_deleg_return(d, A, 10), 0);
	assert_int_equal(f.nrel, 3);
	assert_int_equal(f.rel[0], 3);
	assert_int_equal(f.rel[1], 4);
	assert_int_equal(f.rel[2], 5);
	assert_int_equal(f.rel_status[0], 0);
	mds_deleg_get_stats(d, &ss);
	assert_int_equal(ss.parked_now, 0);
	assert_int_equal(ss.parked, 3);
	assert_int_equal(ss.timeouts, 0);
	/* afterwards nothing parks */
	assert_int_equal(check1(d, B, 10, 7), 0);
	mds_deleg_destroy(d);
}

static void test_park_released_by_timeout(void **st)
{
	fake f;
	mds_deleg *d = mk(&f, 0, 0, 0);
	mds_deleg_stats ss;

	assert_int_equal(mds_deleg_get(d, A, 10, NULL), 0);
	f.now += 1000;
	assert_int_equal(check1(d, B, 10, 1), 1);
	/* the holder keeps renewing (its unlinks): the recall still ends */
	for (int i = 0; i < 49; i++) {
		f.now += 100;
		assert_int_equal(check1(d, A, 10, 100), 0);
		mds_deleg_tick(d);
	}
	assert_int_equal(f.nrel, 0);
	f.now += 100;
	mds_deleg_tick(d);
	assert_int_equal(f.nrel, 1);
	assert_int_equal(f.rel[0], 1);
	assert_int_equal(f.rel_status[0], 0);
	assert_false(mds_deleg_any(d));
	mds_deleg_get_stats(d, &ss);
	assert_int_equal(ss.timeouts, 1);
	/* a recall started by a GET times out alike, with nothing parked */
	assert_int_equal(mds_deleg_get(d, A, 10, NULL), 0);
	assert_int_equal(mds_deleg_get(d, B, 10, NULL), -EAGAIN);
	f.now += 5000;
	mds_deleg_tick(d);
	assert_int_equal(mds_deleg_get(d, B, 10, NULL), 0);
	mds_deleg_destroy(d);
}

/* A holder that cannot hear the recall (its notify connection is closed:
 * a killed mount) loses the delegation at the next tick, not after
 * recall_ms: what waited for it runs. */
static void test_unheard_recall(void **st)
{
	fake f;
	mds_deleg *d = mk(&f, 0, 0, 0);
	mds_deleg_stats ss;

	assert_int_equal(mds_deleg_get(d, A, 10, NULL), 0);
	f.recall_rc = -EPIPE;
	assert_int_equal(check1(d, B, 10, 1), 1);
	assert_int_equal(f.nrecall, 1);
	assert_int_equal(f.nrel, 0);
	f.now += 1; /* well inside recall_ms */
	mds_deleg_tick(d);
	assert_int_equal(f.nrel, 1);
	assert_int_equal(f.rel[0], 1);
	assert_int_equal(f.rel_status[0], 0);
	assert_int_equal(mds_deleg_holder(d, 10), 0);
	mds_deleg_get_stats(d, &ss);
	assert_int_equal(ss.unheard, 1);
	assert_int_equal(ss.timeouts, 0);
	/* a holder that hears it keeps it until it returns or recall_ms */
	f.recall_rc = 0;
	assert_int_equal(mds_deleg_get(d, A, 11, NULL), 0);
	assert_int_equal(check1(d, B, 11, 2), 1);
	f.now += 1;
	mds_deleg_tick(d);
	assert_int_equal(f.nrel, 1);
	assert_int_equal(mds_deleg_holder(d, 11), A);
	mds_deleg_destroy(d);
}

static void test_expiry_and_renew(void **st)
{
	fake f;
	mds_deleg *d = mk(&f, 0, 0, 0);
	mds_deleg_stats ss;

	assert_int_equal(mds_deleg_get(d, A, 10, NULL), 0);
	/* the holder's requests renew: 3 x 9 s is past one lease */
	for (int i = 0; i < 3; i++) {
		f.now += 9000;
		mds_deleg_tick(d);
		assert_int_equal(check1(d, A, 10, 1), 0);
	}
	assert_int_equal(mds_deleg_holder(d, 10), A);
	/* silent for a lease: forgotten (no recall), B runs at once */
	f.now += 10000;
	assert_int_equal(check1(d, B, 10, 2), 0);
	assert_int_equal(f.nrecall, 0);
	assert_false(mds_deleg_any(d));
	/* parked, then the delegation expires before the recall's timeout */
	assert_int_equal(mds_deleg_get(d, A, 10, NULL), 0);
	f.now += 9000;
	assert_int_equal(check1(d, B, 10, 3), 1);
	f.now += 1000;
	mds_deleg_tick(d);
	assert_int_equal(f.nrel, 1);
	assert_int_equal(f.rel[0], 3);
	/* a GET of the holder renews too */
	assert_int_equal(mds_deleg_get(d, A, 12, NULL), 0);
	f.now += 9000;
	assert_int_equal(mds_deleg_get(d, A, 12, NULL), 0);
	f.now += 9000;
	mds_deleg_tick(d);
	assert_int_equal(mds_deleg_holder(d, 12), A);
	f.now += 1000;
	mds_deleg_tick(d);
	assert_int_equal(mds_deleg_holder(d, 12), 0);
	mds_deleg_get_stats(d, &ss);
	assert_int_equal(ss.expired, 3);
	assert_int_equal(ss.timeouts, 0);
	mds_deleg_destroy(d);
}

/* A request that cannot be parked still runs: the delegation is taken
 * back and what was parked is released by the thread (here: the tick). */
static void test_caps(void **st)
{
	fake f;
	mds_deleg *d = mk(&f, 2, 2, 3);
	mds_deleg_stats ss;

	assert_int_equal(mds_deleg_get(d, A, 10, NULL), 0);
	assert_int_equal(mds_deleg_get(d, A, 11, NULL), 0);
	assert_int_equal(mds_deleg_get(d, A, 12, NULL), -EAGAIN); /* full */
	assert_int_equal(check1(d, B, 10, 1), 1);
	assert_int_equal(check1(d, B, 10, 2), 1);
	/* the third in dir 10: over the per-directory cap */
	assert_int_equal(check1(d, B, 10, 3), 0);
	assert_int_equal(f.nrel, 0);
	/* taken back: nothing new parks there, no grant until released */
	assert_int_equal(check1(d, C, 10, 4), 0);
	assert_int_equal(mds_deleg_get(d, A, 10, NULL), -EAGAIN);
	mds_deleg_tick(d);
	assert_int_equal(f.nrel, 2);
	assert_int_equal(f.rel[0], 1);
	assert_int_equal(f.rel[1], 2);
	/* the global cap (3): two in 11 and one in 11 ... */
	assert_int_equal(check1(d, B, 11, 5), 1);
	assert_int_equal(check1(d, B, 11, 6), 1);
	assert_int_equal(mds_deleg_get(d, C, 13, NULL), 0);
	assert_int_equal(check1(d, B, 13, 7), 1);
	/* ... the fourth anywhere is over it */
	assert_int_equal(check1(d, A, 13, 8), 0);
	mds_deleg_get_stats(d, &ss);
	assert_int_equal(ss.forced, 2);
	assert_int_equal(ss.parked_now, 3);
	mds_deleg_tick(d);
	assert_int_equal(f.nrel, 3);
	assert_int_equal(f.rel[2], 7);
	mds_deleg_get_stats(d, &ss);
	assert_int_equal(ss.parked_now, 2);
	assert_int_equal(mds_deleg_holder(d, 13), 0);
	assert_int_equal(mds_deleg_holder(d, 11), A);
	mds_deleg_destroy(d);
	/* destroy answered the two still parked */
	assert_int_equal(f.nrel, 5);
	assert_int_equal(f.rel[3], 5);
	assert_int_equal(f.rel[4], 6);
	assert_int_equal(f.rel_status[3], -ESHUTDOWN);
	assert_int_equal(f.rel_status[4], -ESHUTDOWN);
}

static void test_recall_all(void **st)
{
	fake f;
	mds_deleg *d = mk(&f, 0, 0, 0);

	mds_deleg_recall_all(d); /* empty: nothing */
	assert_int_equal(mds_deleg_get(d, A, 10, NULL), 0);
	assert_int_equal(mds_deleg_get(d, B, 11, NULL), 0);
	mds_deleg_recall_all(d);
	assert_int_equal(f.nrecall, 2);
	/* once per recall */
	mds_deleg_recall_all(d);
	assert_int_equal(check1(d, C, 10, 1), 1);
	assert_int_equal(f.nrecall, 2);
	assert_int_equal(mds_deleg_get(d, A, 10, NULL), -EAGAIN);
	mds_deleg_destroy(d);
	assert_int_equal(f.nrel, 1);
	assert_int_equal(f.rel_status[0], -ESHUTDOWN);
}

/* ---- the server's side: DELEG_GET / DELEG_RETURN through dispatch ---- */

struct sfx {
	char dir[64];
	char db[96];
	mds_ns *ns;
	mds_server *s;
};

static int sfx_setup(void **state)
{
	struct sfx *f = calloc(1, sizeof(*f));
	mds_server_opts mo = { .host = "127.0.0.1", .port = 0, .md_lease_s = 10,
			       .deleg_recall_ms = 1500 };

	pfs_log_init("test", PFS_LOG_ERR);
	strcpy(f->dir, "/tmp/test_mds_deleg.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->db, sizeof(f->db), "%s/db", f->dir);
	mds_ns_opts no = { .path = f->db, .mapsize = 1ull << 30 };
	assert_int_equal(mds_ns_open(&no, &f->ns), 0);
	assert_int_equal(mds_server_start(f->ns, &mo, &f->s), 0);
	*state = f;
	return 0;
}

static int sfx_teardown(void **state)
{
	struct sfx *f = *state;
	char p[160];

	mds_server_stop(f->s);
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

static int sdisp(struct sfx *f, uint64_t client, uint16_t op, pfs_wbuf *req, pfs_wbuf *out)
{
	pfs_hdr h;
	int rc;

	memset(&h, 0, sizeof(h));
	h.opcode = op;
	h.client_id = client;
	h.req_id = (uint64_t)rand() + 1;
	h.payload_len = (uint32_t)req->len;
	pfs_wbuf_reset(out);
	rc = mds_server_dispatch(f->s, &h, req->data, req->len, "test", out);
	pfs_wbuf_reset(req);
	return rc;
}

/* A notify channel for client: its first NOTIFY_WAIT (answered at once). */
static void channel(struct sfx *f, uint64_t client)
{
	pfs_wbuf w, o;

	pfs_wbuf_init(&w);
	pfs_wbuf_init(&o);
	pfs_wbuf_u64(&w, 0);
	pfs_wbuf_u32(&w, 5000);
	pfs_wbuf_u8(&w, 0);
	assert_int_equal(sdisp(f, client, PFS_OP_MDS_NOTIFY_WAIT, &w, &o), 0);
	pfs_wbuf_free(&w);
	pfs_wbuf_free(&o);
}

static int deleg_get(struct sfx *f, uint64_t client, const pfs_cred *c, uint64_t dir,
		     pfs_attr *a)
{
	pfs_wbuf w, o;
	pfs_rbuf r;
	int rc;

	pfs_wbuf_init(&w);
	pfs_wbuf_init(&o);
	pfs_cred_encode(&w, c);
	pfs_wbuf_u64(&w, dir);
	rc = sdisp(f, client, PFS_OP_MDS_DELEG_GET, &w, &o);
	if (!rc) {
		pfs_rbuf_init(&r, o.data, o.len);
		assert_int_equal(pfs_rbuf_u32(&r), 10000);
		assert_int_equal(pfs_attr_decode(&r, a), 0);
		assert_int_equal(pfs_rbuf_done(&r), 0);
	}
	pfs_wbuf_free(&w);
	pfs_wbuf_free(&o);
	return rc;
}

static uint64_t mkdir_as(struct sfx *f, const pfs_cred *c, uint64_t parent, const char *name,
			 uint32_t mode)
{
	pfs_attr a;

	assert_int_equal(mds_ns_mkdir(f->ns, c, parent, name, mode, &a), 0);
	return a.ino;
}

static void test_server_get_rules(void **st)
{
	struct sfx *f = *st;
	pfs_attr a;
	pfs_wbuf w, o;
	mds_deleg_stats ds;
	uint64_t d = mkdir_as(f, &root, 1, "d", 0777);
	uint64_t sticky = mkdir_as(f, &root, 1, "t", 01777);
	uint64_t ro = mkdir_as(f, &root, 1, "ro", 0755);

	/* a FIFO: no OST needed */
	assert_int_equal(mds_ns_mknod(f->ns, &root, d, "file", S_IFIFO | 0644, 0, &a), 0);
	uint64_t file = a.ino;
	pfs_wbuf_init(&w);
	pfs_wbuf_init(&o);
	/* no notify channel: not now */
	assert_int_equal(deleg_get(f, A, &alice, d, &a), -EAGAIN);
	channel(f, A);
	channel(f, B);
	assert_int_equal(deleg_get(f, A, &alice, d, &a), 0);
	assert_int_equal(a.ino, d);
	assert_true(S_ISDIR(a.mode));
	/* the holder renews, B is refused */
	assert_int_equal(deleg_get(f, A, &alice, d, &a), 0);
	assert_int_equal(deleg_get(f, B, &alice, d, &a), -EAGAIN);
	/* not a directory, missing, sticky, no write permission */
	assert_int_equal(deleg_get(f, A, &alice, file, &a), -ENOTDIR);
	assert_int_equal(deleg_get(f, A, &alice, 987654, &a), -ENOENT);
	assert_int_equal(deleg_get(f, A, &alice, sticky, &a), -EAGAIN);
	assert_int_equal(deleg_get(f, A, &alice, ro, &a), -EACCES);
	/* return (twice: not held is success), then B may */
	pfs_cred_encode(&w, &alice);
	pfs_wbuf_u64(&w, d);
	assert_int_equal(sdisp(f, A, PFS_OP_MDS_DELEG_RETURN, &w, &o), 0);
	assert_int_equal(o.len, 0);
	pfs_cred_encode(&w, &alice);
	pfs_wbuf_u64(&w, d);
	assert_int_equal(sdisp(f, A, PFS_OP_MDS_DELEG_RETURN, &w, &o), 0);
	assert_int_equal(deleg_get(f, B, &alice, d, &a), 0);
	pfs_cred_encode(&w, &alice);
	pfs_wbuf_u64(&w, d);
	assert_int_equal(sdisp(f, B, PFS_OP_MDS_DELEG_RETURN, &w, &o), 0);
	/* A leases d (a LOOKUP in it): B is refused while it lasts */
	pfs_cred_encode(&w, &root);
	pfs_wbuf_u64(&w, d);
	pfs_wbuf_str(&w, "file");
	assert_int_equal(sdisp(f, A, PFS_OP_MDS_LOOKUP, &w, &o), 0);
	assert_int_equal(deleg_get(f, B, &alice, d, &a), -EAGAIN);
	assert_int_equal(mds_server_deleg_stats(f->s, &ds), 0);
	assert_int_equal(ds.recalls, 1); /* the first B's, above */
	assert_int_equal(deleg_get(f, A, &alice, d, &a), 0);
	/* B asks while A holds it (and leases it): refused, A's recall starts */
	assert_int_equal(deleg_get(f, B, &alice, d, &a), -EAGAIN);
	assert_int_equal(mds_server_deleg_stats(f->s, &ds), 0);
	assert_int_equal(ds.recalls, 2);
	assert_int_equal(ds.held_now, 1);
	pfs_wbuf_free(&w);
	pfs_wbuf_free(&o);
}

/* Garbage, truncated and oversized payloads: -EBADMSG, nothing granted. */
static void test_server_garbage(void **st)
{
	struct sfx *f = *st;
	pfs_wbuf w, o;
	uint64_t d = mkdir_as(f, &root, 1, "g", 0777);
	static const uint16_t ops[2] = { PFS_OP_MDS_DELEG_GET, PFS_OP_MDS_DELEG_RETURN };

	channel(f, A);
	pfs_wbuf_init(&w);
	pfs_wbuf_init(&o);
	for (int i = 0; i < 2; i++) {
		/* empty */
		assert_int_equal(sdisp(f, A, ops[i], &w, &o), -EBADMSG);
		/* cred only */
		pfs_cred_encode(&w, &alice);
		assert_int_equal(sdisp(f, A, ops[i], &w, &o), -EBADMSG);
		/* truncated dir */
		pfs_cred_encode(&w, &alice);
		pfs_wbuf_u32(&w, (uint32_t)d);
		assert_int_equal(sdisp(f, A, ops[i], &w, &o), -EBADMSG);
		/* a trailing byte */
		pfs_cred_encode(&w, &alice);
		pfs_wbuf_u64(&w, d);
		pfs_wbuf_u8(&w, 0);
		assert_int_equal(sdisp(f, A, ops[i], &w, &o), -EBADMSG);
		/* oversized: 64 KiB of garbage */
		for (int k = 0; k < 8192; k++)
			pfs_wbuf_u64(&w, 0xdeadbeefdeadbeefull * (uint64_t)(k + 1));
		assert_int_equal(sdisp(f, A, ops[i], &w, &o), -EBADMSG);
		/* a cred with too many groups */
		pfs_wbuf_u32(&w, 1000);
		pfs_wbuf_u32(&w, 1000);
		pfs_wbuf_u32(&w, 100000);
		pfs_wbuf_u64(&w, d);
		assert_int_equal(sdisp(f, A, ops[i], &w, &o), -EBADMSG);
		assert_int_equal(o.len, 0);
	}
	/* nothing was granted */
	assert_int_equal(deleg_get(f, B, &alice, d, NULL), -EAGAIN); /* B: no channel */
	channel(f, B);
	pfs_attr a;
	assert_int_equal(deleg_get(f, B, &alice, d, &a), 0);
	pfs_wbuf_free(&w);
	pfs_wbuf_free(&o);
}

/* ---- over sockets: parking in the server's handler ---- */

static pfs_rpc_pool *pool_for(struct sfx *f, uint64_t client)
{
	pfs_rpc_opts ro = { .max_conns = 2, .timeout_ms = 10000, .retry_ms = 100,
			    .client_id = client };
	pfs_rpc_pool *p;

	assert_int_equal(pfs_rpc_pool_create("127.0.0.1", mds_server_port(f->s), &ro, &p), 0);
	return p;
}

/* One call; the reply payload copied into out (if not NULL). */
static int rcall(pfs_rpc_pool *p, uint16_t op, pfs_wbuf *req, pfs_wbuf *out)
{
	pfs_rpc_reply rep = { 0 };
	int rc;

	pfs_rpc_reply_init(&rep);
	assert_int_equal(pfs_wbuf_error(req), 0);
	rc = pfs_rpc_call(p, op, "job", 0, req->data, req->len, NULL, 0, &rep);
	if (out) {
		pfs_wbuf_reset(out);
		if (!rc)
			pfs_wbuf_bytes(out, rep.data, rep.len);
	}
	pfs_rpc_reply_free(&rep);
	pfs_wbuf_reset(req);
	return rc;
}

struct bg {
	pfs_rpc_pool *p;
	uint16_t op;
	pfs_wbuf req;
	pfs_wbuf *out; /* the reply's payload, if set */
	int rc, done;
	uint64_t ms;   /* how long it took */
};

static void *bg_main(void *arg)
{
	struct bg *g = arg;
	uint64_t t0 = pfs_clock_ms();

	g->rc = rcall(g->p, g->op, &g->req, g->out);
	g->ms = pfs_clock_ms() - t0;
	__atomic_store_n(&g->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static void test_server_park(void **st)
{
	struct sfx *f = *st;
	pfs_rpc_pool *pa = pool_for(f, A), *pb = pool_for(f, B);
	pfs_wbuf w, o;
	pfs_rbuf r;
	pfs_attr a;
	pthread_t th;
	struct bg g = { 0 };
	mds_deleg_stats ds;
	uint64_t d = mkdir_as(f, &root, 1, "pd", 0777), seq;

	assert_int_equal(mds_ns_mknod(f->ns, &alice, d, "x", S_IFIFO | 0644, 0, &a), 0);
	uint64_t x = a.ino;
	pfs_wbuf_init(&w);
	pfs_wbuf_init(&o);
	/* A's channel (its first wait is answered at once), its delegation */
	pfs_wbuf_u64(&w, 0);
	pfs_wbuf_u32(&w, 5000);
	pfs_wbuf_u8(&w, 0);
	assert_int_equal(rcall(pa, PFS_OP_MDS_NOTIFY_WAIT, &w, &o), 0);
	pfs_rbuf_init(&r, o.data, o.len);
	(void)pfs_rbuf_u64(&r);
	(void)pfs_rbuf_u32(&r);
	(void)pfs_rbuf_u8(&r);
	seq = pfs_rbuf_u64(&r);
	pfs_cred_encode(&w, &alice);
	pfs_wbuf_u64(&w, d);
	assert_int_equal(rcall(pa, PFS_OP_MDS_DELEG_GET, &w, &o), 0);

	/* B looks x up: parked */
	g.p = pb;
	g.op = PFS_OP_MDS_LOOKUP;
	pfs_wbuf_init(&g.req);
	pfs_cred_encode(&g.req, &root);
	pfs_wbuf_u64(&g.req, d);
	pfs_wbuf_str(&g.req, "x");
	assert_int_equal(pthread_create(&th, NULL, bg_main, &g), 0);
	for (int i = 0; i < 500; i++) {
		assert_true(mds_server_deleg_stats(f->s, &ds) == 0);
		if (ds.parked_now == 1)
			break;
		sleep_ms(10);
	}
	assert_int_equal(ds.parked_now, 1);
	assert_false(__atomic_load_n(&g.done, __ATOMIC_ACQUIRE));
	/* A hears the recall on its channel */
	pfs_wbuf_u64(&w, seq);
	pfs_wbuf_u32(&w, 2000);
	pfs_wbuf_u8(&w, 0);
	assert_int_equal(rcall(pa, PFS_OP_MDS_NOTIFY_WAIT, &w, &o), 0);
	pfs_rbuf_init(&r, o.data, o.len);
	(void)pfs_rbuf_u64(&r);
	(void)pfs_rbuf_u32(&r);
	(void)pfs_rbuf_u8(&r);
	seq = pfs_rbuf_u64(&r);
	assert_int_equal(pfs_rbuf_u32(&r), 1);
	assert_int_equal(pfs_rbuf_u8(&r), PFS_NOTIFY_RECALL);
	assert_int_equal(pfs_rbuf_u64(&r), d);
	/* A's pending unlink (the holder never parks), then its return */
	pfs_cred_encode(&w, &alice);
	pfs_wbuf_u64(&w, d);
	pfs_wbuf_str(&w, "x");
	pfs_wbuf_u64(&w, x);
	assert_int_equal(rcall(pa, PFS_OP_MDS_UNLINK, &w, &o), 0);
	assert_false(__atomic_load_n(&g.done, __ATOMIC_ACQUIRE));
	pfs_cred_encode(&w, &alice);
	pfs_wbuf_u64(&w, d);
	assert_int_equal(rcall(pa, PFS_OP_MDS_DELEG_RETURN, &w, &o), 0);
	pthread_join(th, NULL);
	/* B's lookup ran after the unlink */
	assert_int_equal(g.rc, -ENOENT);

	/* a holder that never returns: B's READDIR runs after the recall time */
	pfs_cred_encode(&w, &alice);
	pfs_wbuf_u64(&w, d);
	assert_int_equal(rcall(pa, PFS_OP_MDS_DELEG_GET, &w, &o), 0);
	memset(&g.done, 0, sizeof(g.done));
	g.op = PFS_OP_MDS_READDIR;
	pfs_cred_encode(&g.req, &root);
	pfs_wbuf_u64(&g.req, d);
	pfs_wbuf_u64(&g.req, 0);
	pfs_wbuf_u32(&g.req, 100);
	assert_int_equal(pthread_create(&th, NULL, bg_main, &g), 0);
	pthread_join(th, NULL);
	assert_int_equal(g.rc, 0);
	assert_true(g.ms >= 1000); /* it waited for the recall (1.5 s) */
	assert_int_equal(mds_server_deleg_stats(f->s, &ds), 0);
	assert_int_equal(ds.timeouts, 1);
	assert_int_equal(ds.returns, 1);
	assert_int_equal(ds.parked, 2);
	assert_int_equal(ds.parked_now, 0);
	assert_int_equal(ds.held_now, 0);
	pfs_wbuf_free(&g.req);
	pfs_wbuf_free(&w);
	pfs_wbuf_free(&o);
	pfs_rpc_pool_destroy(pa);
	pfs_rpc_pool_destroy(pb);
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

/* A first NOTIFY_WAIT of p's client (answered at once): its seq. */
static uint64_t rchannel(pfs_rpc_pool *p)
{
	pfs_wbuf w, o;
	pfs_rbuf r;
	uint64_t seq;

	pfs_wbuf_init(&w);
	pfs_wbuf_init(&o);
	pfs_wbuf_u64(&w, 0);
	pfs_wbuf_u32(&w, 5000);
	pfs_wbuf_u8(&w, 0);
	assert_int_equal(rcall(p, PFS_OP_MDS_NOTIFY_WAIT, &w, &o), 0);
	pfs_rbuf_init(&r, o.data, o.len);
	(void)pfs_rbuf_u64(&r);
	(void)pfs_rbuf_u32(&r);
	(void)pfs_rbuf_u8(&r);
	seq = pfs_rbuf_u64(&r);
	pfs_wbuf_free(&w);
	pfs_wbuf_free(&o);
	return seq;
}

/* Another client's UNLINK_BATCH on a delegated directory parks like its
 * UNLINK would, the holder's own batch does not, and the parked one runs
 * after the return: it sees the holder's unlink. */
static void test_server_park_batch(void **st)
{
	struct sfx *f = *st;
	pfs_rpc_pool *pa = pool_for(f, A), *pb = pool_for(f, B);
	pfs_wbuf w, o, bo;
	pfs_rbuf r;
	pfs_attr a;
	pthread_t th;
	struct bg g = { 0 };
	mds_deleg_stats ds;
	uint64_t d = mkdir_as(f, &root, 1, "bd", 0777);

	assert_int_equal(mds_ns_mknod(f->ns, &alice, d, "x", S_IFIFO | 0644, 0, &a), 0);
	uint64_t x = a.ino;
	assert_int_equal(mds_ns_mknod(f->ns, &alice, d, "y", S_IFIFO | 0644, 0, &a), 0);
	uint64_t y = a.ino;
	const char *names[] = { "x", "y" };
	const uint64_t inos[] = { x, y };
	pfs_wbuf_init(&w);
	pfs_wbuf_init(&o);
	pfs_wbuf_init(&bo);
	(void)rchannel(pa);
	pfs_cred_encode(&w, &alice);
	pfs_wbuf_u64(&w, d);
	assert_int_equal(rcall(pa, PFS_OP_MDS_DELEG_GET, &w, &o), 0);

	/* B's batch of x and y: parked */
	g.p = pb;
	g.op = PFS_OP_MDS_UNLINK_BATCH;
	g.out = &bo;
	pfs_wbuf_init(&g.req);
	batch_put(&g.req, &alice, d, 2, names, inos);
	assert_int_equal(pthread_create(&th, NULL, bg_main, &g), 0);
	for (int i = 0; i < 500; i++) {
		assert_true(mds_server_deleg_stats(f->s, &ds) == 0);
		if (ds.parked_now == 1)
			break;
		sleep_ms(10);
	}
	assert_int_equal(ds.parked_now, 1);
	assert_false(__atomic_load_n(&g.done, __ATOMIC_ACQUIRE));
	assert_int_equal(ds.recalls, 1);
	/* the holder's own batch (x) runs at once */
	batch_put(&w, &alice, d, 1, names, inos);
	assert_int_equal(rcall(pa, PFS_OP_MDS_UNLINK_BATCH, &w, &o), 0);
	pfs_rbuf_init(&r, o.data, o.len);
	assert_int_equal(pfs_rbuf_u32(&r), 1);
	assert_int_equal((int32_t)pfs_rbuf_u32(&r), 0);
	assert_int_equal(pfs_rbuf_done(&r), 0);
	sleep_ms(50);
	assert_false(__atomic_load_n(&g.done, __ATOMIC_ACQUIRE));
	/* the return releases B's: x is gone already, y goes */
	pfs_cred_encode(&w, &alice);
	pfs_wbuf_u64(&w, d);
	assert_int_equal(rcall(pa, PFS_OP_MDS_DELEG_RETURN, &w, &o), 0);
	pthread_join(th, NULL);
	assert_int_equal(g.rc, 0);
	pfs_rbuf_init(&r, bo.data, bo.len);
	assert_int_equal(pfs_rbuf_u32(&r), 2);
	assert_int_equal((int32_t)pfs_rbuf_u32(&r), -ENOENT);
	assert_int_equal((int32_t)pfs_rbuf_u32(&r), 0);
	assert_int_equal(pfs_rbuf_done(&r), 0);
	assert_int_equal(mds_ns_lookup(f->ns, &root, d, "y", &a), -ENOENT);
	assert_int_equal(mds_server_deleg_stats(f->s, &ds), 0);
	assert_int_equal(ds.parked, 1);
	assert_int_equal(ds.returns, 1);
	assert_int_equal(ds.parked_now, 0);
	pfs_wbuf_free(&g.req);
	pfs_wbuf_free(&w);
	pfs_wbuf_free(&o);
	pfs_wbuf_free(&bo);
	pfs_rpc_pool_destroy(pa);
	pfs_rpc_pool_destroy(pb);
}

/* B looked up 32 names; A's batch removes them all (over the socket: a
 * group commit member, whose revocations are held until its commit, 3 a
 * name, far more than the 8 held inline): B's channel gets an ENTRY for
 * every name and an INO for every removed inode. */
static void test_server_batch_revocations(void **st)
{
	struct sfx *f = *st;
	pfs_rpc_pool *pa = pool_for(f, A), *pb = pool_for(f, B);
	char names[PFS_UNLINK_BATCH_MAX][8];
	const char *np[PFS_UNLINK_BATCH_MAX];
	uint64_t inos[PFS_UNLINK_BATCH_MAX];
	int got_ino[PFS_UNLINK_BATCH_MAX] = { 0 }, got_ent[PFS_UNLINK_BATCH_MAX] = { 0 };
	pfs_wbuf w, o;
	pfs_rbuf r;
	pfs_attr a;
	uint64_t d = mkdir_as(f, &root, 1, "rv", 0777), seq;

	pfs_wbuf_init(&w);
	pfs_wbuf_init(&o);
	seq = rchannel(pb);
	for (int i = 0; i < PFS_UNLINK_BATCH_MAX; i++) {
		snprintf(names[i], sizeof(names[i]), "n%02d", i);
		np[i] = names[i];
		assert_int_equal(mds_ns_mknod(f->ns, &root, d, names[i], S_IFIFO | 0644, 0, &a),
				 0);
		inos[i] = a.ino;
		/* B caches the name and the inode */
		pfs_cred_encode(&w, &root);
		pfs_wbuf_u64(&w, d);
		pfs_wbuf_str(&w, names[i]);
		assert_int_equal(rcall(pb, PFS_OP_MDS_LOOKUP, &w, &o), 0);
	}
	batch_put(&w, &root, d, PFS_UNLINK_BATCH_MAX, np, inos);
	assert_int_equal(rcall(pa, PFS_OP_MDS_UNLINK_BATCH, &w, &o), 0);
	pfs_rbuf_init(&r, o.data, o.len);
	assert_int_equal(pfs_rbuf_u32(&r), PFS_UNLINK_BATCH_MAX);
	for (int i = 0; i < PFS_UNLINK_BATCH_MAX; i++)
		assert_int_equal((int32_t)pfs_rbuf_u32(&r), 0);
	/* B's next wait: queued already, answered at once */
	for (int round = 0; round < 4; round++) {
		pfs_wbuf_u64(&w, seq);
		pfs_wbuf_u32(&w, 200);
		pfs_wbuf_u8(&w, 0);
		assert_int_equal(rcall(pb, PFS_OP_MDS_NOTIFY_WAIT, &w, &o), 0);
		pfs_rbuf_init(&r, o.data, o.len);
		(void)pfs_rbuf_u64(&r);
		(void)pfs_rbuf_u32(&r);
		assert_int_equal(pfs_rbuf_u8(&r) & PFS_NOTIFY_RESET, 0);
		seq = pfs_rbuf_u64(&r);
		uint32_t n = pfs_rbuf_u32(&r);
		for (uint32_t k = 0; k < n; k++) {
			uint8_t kind = pfs_rbuf_u8(&r);
			uint64_t ino = pfs_rbuf_u64(&r);
			size_t len;
			const char *nm = pfs_rbuf_str(&r, 255, &len);
			for (int i = 0; i < PFS_UNLINK_BATCH_MAX; i++) {
				if (kind == PFS_NOTIFY_INO && ino == inos[i])
					got_ino[i]++;
				if (kind == PFS_NOTIFY_ENTRY && ino == d && nm &&
				    len == strlen(names[i]) && !memcmp(nm, names[i], len))
					got_ent[i]++;
			}
		}
		assert_int_equal(pfs_rbuf_done(&r), 0);
		if (n == 0)
			break;
	}
	for (int i = 0; i < PFS_UNLINK_BATCH_MAX; i++) {
		assert_int_equal(got_ino[i], 1);
		assert_int_equal(got_ent[i], 1);
	}
	pfs_wbuf_free(&w);
	pfs_wbuf_free(&o);
	pfs_rpc_pool_destroy(pa);
	pfs_rpc_pool_destroy(pb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_grant_rules),
		cmocka_unit_test(test_park_released_by_return),
		cmocka_unit_test(test_park_released_by_timeout),
		cmocka_unit_test(test_unheard_recall),
		cmocka_unit_test(test_expiry_and_renew),
		cmocka_unit_test(test_caps),
		cmocka_unit_test(test_recall_all),
		cmocka_unit_test_setup_teardown(test_server_get_rules, sfx_setup, sfx_teardown),
		cmocka_unit_test_setup_teardown(test_server_garbage, sfx_setup, sfx_teardown),
		cmocka_unit_test_setup_teardown(test_server_park, sfx_setup, sfx_teardown),
		cmocka_unit_test_setup_teardown(test_server_park_batch, sfx_setup, sfx_teardown),
		cmocka_unit_test_setup_teardown(test_server_batch_revocations, sfx_setup,
						sfx_teardown),
	};

	pfs_log_init("test", PFS_LOG_ERR);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
