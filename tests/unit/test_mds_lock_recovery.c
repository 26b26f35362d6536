/* test_mds_lock_recovery.c — the lock service's recovery after an MDS
 * restart (mds/locksvc.h), driven through mds_locksvc_handle with a clock
 * of the test's own: lock holders remembered in the namespace, the window
 * opened only when there were some, lock requests of other mounts held
 * back (-PFS_LK_ERECOVER) or refused against a reclaimed lock, the early
 * close when every holder reclaimed, the close on time with the unclaimed
 * locks gone, a reclaim after the window refused, and a resent LOCK_SET of
 * a granted lock granted again. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/buf.h"
#include "common/log.h"
#include "common/proto.h"
#include "mds/locksvc.h"
#include "mds/ns.h"

#define A 0xa1
#define B 0xb2
#define C 0xc3
#define INO 42
#define LEASE_S 5

struct fx {
	char dir[64], db[96];
	mds_ns *ns;
	mds_locksvc *s;
	uint64_t now;
};

static uint64_t fake_clock(void *arg)
{
	return ((struct fx *)arg)->now;
}

static void svc_start(struct fx *f)
{
	mds_locksvc_opts o = { .lease_s = LEASE_S, .ns = f->ns, .clock_ms = fake_clock,
			       .clock_arg = f };

	assert_int_equal(mds_locksvc_start_opts(&o, &f->s), 0);
}

/* kill -9 and restart: the lock table goes, the namespace stays */
static void svc_restart(struct fx *f)
{
	mds_locksvc_stop(f->s);
	f->now += 1000;
	svc_start(f);
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	pfs_log_init("test", PFS_LOG_ERR);
	strcpy(f->dir, "/tmp/test_mds_lkrec.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->db, sizeof(f->db), "%s/db", f->dir);
	mds_ns_opts no = { .path = f->db, .mapsize = 1ull << 28 };
	assert_int_equal(mds_ns_open(&no, &f->ns), 0);
	f->now = 100000;
	svc_start(f);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[128];

	mds_locksvc_stop(f->s);
	mds_ns_close(f->ns);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

static void put_lock(pfs_wbuf *w, uint64_t ino, uint8_t kind, uint8_t type, uint64_t start,
		     uint64_t end, uint64_t owner)
{
	pfs_wbuf_u64(w, ino);
	pfs_wbuf_u8(w, kind);
	pfs_wbuf_u8(w, type);
	pfs_wbuf_u64(w, start);
	pfs_wbuf_u64(w, end);
	pfs_wbuf_u64(w, owner);
	pfs_wbuf_u32(w, 1234);
}

static int call(struct fx *f, uint16_t op, uint64_t client, pfs_wbuf *w, pfs_wbuf *out)
{
	pfs_hdr h;
	pfs_rbuf b;
	int rc;

	pfs_hdr_init(&h, op, 1, client, "");
	pfs_rbuf_init(&b, w->data, w->len);
	pfs_wbuf_reset(out);
	rc = mds_locksvc_handle(f->s, NULL, &h, &b, out);
	pfs_wbuf_free(w);
	return rc;
}

/* LOCK_SET of [start, end] (type) by client's owner 7 */
static int lk_set(struct fx *f, uint64_t client, uint8_t kind, uint8_t type, uint64_t start,
		  uint64_t end)
{
	pfs_wbuf w, out;
	int rc;

	pfs_wbuf_init(&w);
	pfs_wbuf_init(&out);
	put_lock(&w, INO, kind, type, start, end, 7);
	rc = call(f, PFS_OP_MDS_LOCK_SET, client, &w, &out);
	if (rc == 0)
		assert_int_equal(out.len, 12); /* lease_ms, instance */
	pfs_wbuf_free(&out);
	return rc;
}

/* LOCK_GET: 1 conflict, 0 none, or -errno */
static int lk_get(struct fx *f, uint64_t client, uint64_t start, uint64_t end)
{
	pfs_wbuf w, out;
	int rc;

	pfs_wbuf_init(&w);
	pfs_wbuf_init(&out);
	put_lock(&w, INO, PFS_LK_POSIX, PFS_LK_WRITE, start, end, 7);
	rc = call(f, PFS_OP_MDS_LOCK_GET, client, &w, &out);
	if (rc == 0)
		rc = out.data[0];
	pfs_wbuf_free(&out);
	return rc;
}

/* LOCK_RECLAIM of n locks (POSIX write [10*i, 10*i + 9] unless given);
 * statuses to st, the window's time left to *left. */
static int reclaim(struct fx *f, uint64_t client, uint8_t flags, uint32_t n, uint8_t kind,
		   uint64_t start, int32_t *st, uint32_t *left)
{
	pfs_wbuf w, out;
	pfs_rbuf r;
	int rc;

	pfs_wbuf_init(&w);
	pfs_wbuf_init(&out);
	pfs_wbuf_u8(&w, flags);
	pfs_wbuf_u32(&w, n);
	for (uint32_t i = 0; i < n; i++)
		put_lock(&w, INO, kind, PFS_LK_WRITE, start + 10 * i, start + 10 * i + 9, 7);
	rc = call(f, PFS_OP_MDS_LOCK_RECLAIM, client, &w, &out);
	if (rc == 0) {
		pfs_rbuf_init(&r, out.data, out.len);
		assert_int_not_equal(pfs_rbuf_u64(&r), 0);
		assert_int_equal(pfs_rbuf_u32(&r), LEASE_S * 1000);
		uint32_t l = pfs_rbuf_u32(&r);
		if (left)
			*left = l;
		assert_int_equal(pfs_rbuf_u32(&r), n);
		for (uint32_t i = 0; i < n; i++)
			st[i] = (int32_t)pfs_rbuf_u32(&r);
		assert_int_equal(pfs_rbuf_done(&r), 0);
	}
	pfs_wbuf_free(&out);
	return rc;
}

static void counts(struct fx *f, unsigned *locks)
{
	unsigned w, c;

	mds_locksvc_counts(f->s, locks, &w, &c);
}

/* No lock holder before the restart: no window. */
static void t_no_holders_no_window(void **state)
{
	struct fx *f = *state;

	svc_restart(f);
	assert_int_equal(mds_locksvc_recovering(f->s), 0);
	assert_int_equal(lk_set(f, B, PFS_LK_POSIX, PFS_LK_WRITE, 0, 99), 0);
}

/* A holds a write lock and a flock; restart; B is held back until A
 * reclaims, then refused; A's last batch closes the window early. */
static void t_reclaim_then_conflict(void **state)
{
	struct fx *f = *state;
	int32_t st[4];
	uint32_t left = 0;
	unsigned n;

	assert_int_equal(lk_set(f, A, PFS_LK_POSIX, PFS_LK_WRITE, 0, 9), 0);
	assert_int_equal(lk_set(f, A, PFS_LK_FLOCK, PFS_LK_WRITE, 0, UINT64_MAX), 0);
	svc_restart(f);
	assert_int_equal(mds_locksvc_recovering(f->s), 1);
	counts(f, &n);
	assert_int_equal(n, 0);
	/* in the window, before A came back: B must wait, whatever it asks */
	assert_int_equal(lk_set(f, B, PFS_LK_POSIX, PFS_LK_WRITE, 5, 5), -PFS_LK_ERECOVER);
	assert_int_equal(lk_set(f, B, PFS_LK_POSIX, PFS_LK_READ, 500, 600), -PFS_LK_ERECOVER);
	assert_int_equal(lk_get(f, B, 0, 9), -PFS_LK_ERECOVER);
	/* unlocks are never held back */
	assert_int_equal(lk_set(f, B, PFS_LK_POSIX, PFS_LK_UNLOCK, 0, 9), 0);
	/* A reclaims its POSIX lock (not yet the last batch) */
	assert_int_equal(reclaim(f, A, 0, 1, PFS_LK_POSIX, 0, st, &left), 0);
	assert_int_equal(st[0], 0);
	assert_true(left > 0 && left <= LEASE_S * 1000);
	/* a known conflict is answered at once, the rest still waits */
	assert_int_equal(lk_set(f, B, PFS_LK_POSIX, PFS_LK_WRITE, 5, 5), -EAGAIN);
	assert_int_equal(lk_get(f, B, 0, 9), 1);
	assert_int_equal(lk_set(f, B, PFS_LK_FLOCK, PFS_LK_WRITE, 0, UINT64_MAX),
			 -PFS_LK_ERECOVER);
	/* the flock in the last batch: the window closes (A was the only holder) */
	assert_int_equal(reclaim(f, A, PFS_LK_RECLAIM_LAST, 1, PFS_LK_FLOCK, 0, st, &left), 0);
	assert_int_equal(st[0], 0);
	assert_int_equal(left, 0);
	assert_int_equal(mds_locksvc_recovering(f->s), 0);
	assert_int_equal(lk_set(f, B, PFS_LK_FLOCK, PFS_LK_WRITE, 0, UINT64_MAX), -EAGAIN);
	assert_int_equal(lk_set(f, B, PFS_LK_POSIX, PFS_LK_WRITE, 0, 9), -EAGAIN);
	assert_int_equal(lk_set(f, B, PFS_LK_POSIX, PFS_LK_WRITE, 10, 19), 0);
	counts(f, &n);
	assert_int_equal(n, 3);
}

/* Two holders, one never comes back: the window closes on time, its locks
 * are gone, and its late reclaim is refused; the other's survive. */
static void t_window_times_out(void **state)
{
	struct fx *f = *state;
	int32_t st[2];
	uint32_t left;

	assert_int_equal(lk_set(f, A, PFS_LK_POSIX, PFS_LK_WRITE, 0, 9), 0);
	assert_int_equal(lk_set(f, C, PFS_LK_POSIX, PFS_LK_WRITE, 100, 109), 0);
	svc_restart(f);
	assert_int_equal(reclaim(f, A, PFS_LK_RECLAIM_LAST, 1, PFS_LK_POSIX, 0, st, &left), 0);
	assert_int_equal(st[0], 0);
	assert_true(left > 0);
	assert_int_equal(mds_locksvc_recovering(f->s), 1); /* C has not come */
	assert_int_equal(lk_set(f, B, PFS_LK_POSIX, PFS_LK_WRITE, 100, 109), -PFS_LK_ERECOVER);
	f->now += LEASE_S * 1000;
	assert_int_equal(mds_locksvc_recovering(f->s), 0);
	/* C's lock is gone: B takes its range; A's is still A's */
	assert_int_equal(lk_set(f, B, PFS_LK_POSIX, PFS_LK_WRITE, 100, 109), 0);
	assert_int_equal(lk_set(f, B, PFS_LK_POSIX, PFS_LK_WRITE, 0, 9), -EAGAIN);
	/* too late for C */
	assert_int_equal(reclaim(f, C, PFS_LK_RECLAIM_LAST, 1, PFS_LK_POSIX, 100, st, &left), 0);
	assert_int_equal(st[0], -ENOLCK);
	assert_int_equal(left, 0);
	/* a late reclaim of what A still holds is confirmed */
	assert_int_equal(reclaim(f, A, 0, 1, PFS_LK_POSIX, 0, st, NULL), 0);
	assert_int_equal(st[0], 0);
}

/* Two mounts reclaiming conflicting locks (one's was lost by eviction):
 * the second is refused. */
static void t_conflicting_reclaims(void **state)
{
	struct fx *f = *state;
	int32_t st[1];

	assert_int_equal(lk_set(f, A, PFS_LK_POSIX, PFS_LK_WRITE, 0, 9), 0);
	svc_restart(f);
	assert_int_equal(reclaim(f, A, 0, 1, PFS_LK_POSIX, 0, st, NULL), 0);
	assert_int_equal(st[0], 0);
	assert_int_equal(reclaim(f, C, 0, 1, PFS_LK_POSIX, 0, st, NULL), 0);
	assert_int_equal(st[0], -ENOLCK);
}

/* Holders stay remembered across restarts until they reclaim or their
 * lease ends: an MDS killed again in the window opens a new one. */
static void t_restart_in_window(void **state)
{
	struct fx *f = *state;
	int32_t st[1];

	assert_int_equal(lk_set(f, A, PFS_LK_POSIX, PFS_LK_WRITE, 0, 9), 0);
	svc_restart(f);
	assert_int_equal(mds_locksvc_recovering(f->s), 1);
	svc_restart(f);
	assert_int_equal(mds_locksvc_recovering(f->s), 1);
	assert_int_equal(reclaim(f, A, PFS_LK_RECLAIM_LAST, 1, PFS_LK_POSIX, 0, st, NULL), 0);
	assert_int_equal(st[0], 0);
	assert_int_equal(mds_locksvc_recovering(f->s), 0);
}

/* A resent LOCK_SET whose first copy was granted (the reply was lost) is
 * granted again, not refused against itself; the table is unchanged. */
static void t_resent_set_idempotent(void **state)
{
	struct fx *f = *state;
	unsigned n;

	assert_int_equal(lk_set(f, A, PFS_LK_POSIX, PFS_LK_WRITE, 0, 9), 0);
	assert_int_equal(lk_set(f, A, PFS_LK_POSIX, PFS_LK_WRITE, 0, 9), 0);
	assert_int_equal(lk_set(f, A, PFS_LK_FLOCK, PFS_LK_WRITE, 0, UINT64_MAX), 0);
	assert_int_equal(lk_set(f, A, PFS_LK_FLOCK, PFS_LK_WRITE, 0, UINT64_MAX), 0);
	counts(f, &n);
	assert_int_equal(n, 2);
	assert_int_equal(lk_set(f, B, PFS_LK_POSIX, PFS_LK_WRITE, 0, 9), -EAGAIN);
}

/* Malformed reclaims: an unlock, a bad range, a short payload. */
static void t_bad_reclaim(void **state)
{
	struct fx *f = *state;
	pfs_wbuf w, out;

	pfs_wbuf_init(&w);
	pfs_wbuf_init(&out);
	pfs_wbuf_u8(&w, 0);
	pfs_wbuf_u32(&w, 1);
	put_lock(&w, INO, PFS_LK_POSIX, PFS_LK_UNLOCK, 0, 9, 7);
	assert_int_equal(call(f, PFS_OP_MDS_LOCK_RECLAIM, A, &w, &out), -EINVAL);
	pfs_wbuf_init(&w);
	pfs_wbuf_u8(&w, 0);
	pfs_wbuf_u32(&w, 1);
	put_lock(&w, INO, PFS_LK_POSIX, PFS_LK_WRITE, 9, 0, 7);
	assert_int_equal(call(f, PFS_OP_MDS_LOCK_RECLAIM, A, &w, &out), -EINVAL);
	pfs_wbuf_init(&w);
	pfs_wbuf_u8(&w, 0);
	pfs_wbuf_u32(&w, 2);
	put_lock(&w, INO, PFS_LK_POSIX, PFS_LK_WRITE, 0, 9, 7);
	assert_int_equal(call(f, PFS_OP_MDS_LOCK_RECLAIM, A, &w, &out), -EBADMSG);
	pfs_wbuf_init(&w);
	pfs_wbuf_u8(&w, 0);
	pfs_wbuf_u32(&w, MDS_LOCKSVC_RECLAIM_MAX + 1);
	assert_int_equal(call(f, PFS_OP_MDS_LOCK_RECLAIM, A, &w, &out), -EINVAL);
	pfs_wbuf_free(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(t_no_holders_no_window, setup, teardown),
		cmocka_unit_test_setup_teardown(t_reclaim_then_conflict, setup, teardown),
		cmocka_unit_test_setup_teardown(t_window_times_out, setup, teardown),
		cmocka_unit_test_setup_teardown(t_conflicting_reclaims, setup, teardown),
		cmocka_unit_test_setup_teardown(t_restart_in_window, setup, teardown),
		cmocka_unit_test_setup_teardown(t_resent_set_idempotent, setup, teardown),
		cmocka_unit_test_setup_teardown(t_bad_reclaim, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
