/* test_lktab.c — the lock table (common/lktab.h) against the POSIX
 * rules: conflicts of overlapping ranges, read sharing, merge of touching
 * locks, split by an unlock of a middle range, upgrade and downgrade,
 * flock independent of fcntl locks, release by owner (close) and by client
 * (eviction), waiters granted in order, cancelled, expired, not delivered,
 * and deadlock detection. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/lktab.h"

#define INO 42
#define E PFS_LK_EOF

struct grants {
	int n;
	void *cookie[16];
	int status[16];
	int refuse;   /* return non-zero for status 0: "not delivered" */
};

static int grant_cb(void *arg, void *cookie, int status)
{
	struct grants *g = arg;

	if (g->n < 16) {
		g->cookie[g->n] = cookie;
		g->status[g->n] = status;
	}
	g->n++;
	return status == 0 && g->refuse ? -1 : 0;
}

static pfs_lock L(uint64_t client, uint64_t owner, int type, uint64_t s, uint64_t e)
{
	pfs_lock l = { .client = client, .owner = owner, .pid = (uint32_t)(100 + owner),
		       .type = (uint8_t)type, .kind = PFS_LK_POSIX, .start = s, .end = e };
	return l;
}

static pfs_lock F(uint64_t client, uint64_t owner, int type)
{
	pfs_lock l = L(client, owner, type, 0, E);

	l.kind = PFS_LK_FLOCK;
	return l;
}

/* 1 if a probe by another owner of type over [s, e] conflicts */
static int held(pfs_lktab *t, int type, uint64_t s, uint64_t e)
{
	pfs_lock c, p = L(99, 99, type, s, e);

	return pfs_lktab_test(t, INO, &p, &c);
}

static void t_conflict_and_getlk(void **state)
{
	struct grants g = { 0 };
	pfs_lktab *t = pfs_lktab_new(grant_cb, &g);
	pfs_lock a = L(1, 1, PFS_LK_WRITE, 100, 199), c;

	assert_int_equal(pfs_lktab_set(t, INO, &a), 0);
	/* overlapping write and read by another owner: refused */
	pfs_lock b = L(2, 7, PFS_LK_READ, 150, 300);
	assert_int_equal(pfs_lktab_set(t, INO, &b), -EAGAIN);
	assert_int_equal(pfs_lktab_test(t, INO, &b, &c), 1);
	assert_int_equal(c.client, 1);
	assert_int_equal(c.pid, 101);
	assert_int_equal(c.type, PFS_LK_WRITE);
	assert_int_equal(c.start, 100);
	assert_int_equal(c.end, 199);
	/* touching but not overlapping: fine */
	b = L(2, 7, PFS_LK_WRITE, 200, 300);
	assert_int_equal(pfs_lktab_test(t, INO, &b, &c), 0);
	assert_int_equal(pfs_lktab_set(t, INO, &b), 0);
	/* the same owner on another client is another owner */
	b = L(2, 1, PFS_LK_READ, 120, 120);
	assert_int_equal(pfs_lktab_set(t, INO, &b), -EAGAIN);
	/* another inode is independent */
	assert_int_equal(pfs_lktab_set(t, INO + 1, &b), 0);
	/* the owner's own locks never conflict with its requests */
	b = L(1, 1, PFS_LK_READ, 0, 150);
	assert_int_equal(pfs_lktab_test(t, INO, &b, &c), 0);
	assert_int_equal(pfs_lktab_count(t), 3);
	pfs_lktab_free(t);
	assert_int_equal(g.n, 0);
}

static void t_readers_share(void **state)
{
	struct grants g = { 0 };
	pfs_lktab *t = pfs_lktab_new(grant_cb, &g);
	pfs_lock a = L(1, 1, PFS_LK_READ, 0, E), b = L(2, 2, PFS_LK_READ, 10, 20);

	assert_int_equal(pfs_lktab_set(t, INO, &a), 0);
	assert_int_equal(pfs_lktab_set(t, INO, &b), 0);
	b = L(3, 3, PFS_LK_WRITE, 1000, 1000);
	assert_int_equal(pfs_lktab_set(t, INO, &b), -EAGAIN);
	/* upgrade of a shared range refused while the other reader holds it */
	b = L(2, 2, PFS_LK_WRITE, 10, 20);
	assert_int_equal(pfs_lktab_set(t, INO, &b), -EAGAIN);
	pfs_lktab_free(t);
}

/* What a resend and a reclaim rely on: setting a lock again is granted
 * without change, and mds_lock_holds sees a range inside an own lock of
 * that type only. */
static void t_reset_and_holds(void **state)
{
	struct grants g = { 0 };
	pfs_lktab *t = pfs_lktab_new(grant_cb, &g);
	pfs_lock a = L(1, 1, PFS_LK_WRITE, 0, 19), in = L(1, 1, PFS_LK_WRITE, 5, 9),
		 rd = L(1, 1, PFS_LK_READ, 5, 9), out = L(1, 1, PFS_LK_WRITE, 15, 25),
		 other = L(2, 1, PFS_LK_WRITE, 5, 9);

	assert_int_equal(pfs_lktab_set(t, INO, &a), 0);
	assert_int_equal(pfs_lktab_set(t, INO, &a), 0);
	assert_int_equal(pfs_lktab_count(t), 1);
	assert_int_equal(pfs_lktab_holds(t, INO, &a), 1);
	assert_int_equal(pfs_lktab_holds(t, INO, &in), 1);
	assert_int_equal(pfs_lktab_holds(t, INO, &rd), 0);
	assert_int_equal(pfs_lktab_holds(t, INO, &out), 0);
	assert_int_equal(pfs_lktab_holds(t, INO, &other), 0);
	assert_int_equal(pfs_lktab_holds(t, INO + 1, &a), 0);
	pfs_lktab_free(t);
}

static void t_merge(void **state)
{
	struct grants g = { 0 };
	pfs_lktab *t = pfs_lktab_new(grant_cb, &g);
	pfs_lock a = L(1, 1, PFS_LK_WRITE, 0, 9), b = L(1, 1, PFS_LK_WRITE, 10, 19),
		 c = L(1, 1, PFS_LK_WRITE, 30, 39), d = L(1, 1, PFS_LK_WRITE, 15, 35);

	assert_int_equal(pfs_lktab_set(t, INO, &a), 0);
	assert_int_equal(pfs_lktab_set(t, INO, &b), 0);
	assert_int_equal(pfs_lktab_count(t), 1); /* touching: merged */
	assert_int_equal(pfs_lktab_set(t, INO, &c), 0);
	assert_int_equal(pfs_lktab_count(t), 2);
	assert_int_equal(pfs_lktab_set(t, INO, &d), 0);
	assert_int_equal(pfs_lktab_count(t), 1); /* [0, 39] */
	assert_int_equal(held(t, PFS_LK_READ, 0, 0), 1);
	assert_int_equal(held(t, PFS_LK_READ, 39, 39), 1);
	assert_int_equal(held(t, PFS_LK_READ, 40, E), 0);
	/* a read lock touching a write lock is not merged with it */
	pfs_lock r = L(1, 1, PFS_LK_READ, 40, 49);
	assert_int_equal(pfs_lktab_set(t, INO, &r), 0);
	assert_int_equal(pfs_lktab_count(t), 2);
	/* locks to EOF merge too (no overflow at the end) */
	pfs_lock x = L(1, 1, PFS_LK_READ, 100, E), y = L(1, 1, PFS_LK_READ, 50, 99);
	assert_int_equal(pfs_lktab_set(t, INO, &x), 0);
	assert_int_equal(pfs_lktab_set(t, INO, &y), 0);
	assert_int_equal(pfs_lktab_count(t), 2); /* [0,39] W, [40, EOF] R */
	assert_int_equal(held(t, PFS_LK_WRITE, 1u << 30, E), 1);
	assert_int_equal(held(t, PFS_LK_READ, 1u << 30, E), 0);
	pfs_lktab_free(t);
}

static void t_unlock_middle_splits(void **state)
{
	struct grants g = { 0 };
	pfs_lktab *t = pfs_lktab_new(grant_cb, &g);
	pfs_lock a = L(1, 1, PFS_LK_WRITE, 0, 99), u = L(1, 1, PFS_LK_UNLOCK, 40, 59);

	assert_int_equal(pfs_lktab_set(t, INO, &a), 0);
	assert_int_equal(pfs_lktab_set(t, INO, &u), 0);
	assert_int_equal(pfs_lktab_count(t), 2);
	assert_int_equal(held(t, PFS_LK_READ, 39, 39), 1);
	assert_int_equal(held(t, PFS_LK_READ, 40, 59), 0);
	assert_int_equal(held(t, PFS_LK_READ, 60, 60), 1);
	assert_int_equal(held(t, PFS_LK_READ, 100, 100), 0);
	/* unlock of a range over both ends and the gap */
	u = L(1, 1, PFS_LK_UNLOCK, 30, 69);
	assert_int_equal(pfs_lktab_set(t, INO, &u), 0);
	assert_int_equal(pfs_lktab_count(t), 2);
	assert_int_equal(held(t, PFS_LK_WRITE, 30, 69), 0);
	assert_int_equal(held(t, PFS_LK_WRITE, 29, 29), 1);
	/* unlock of everything; unlock of nothing is fine */
	u = L(1, 1, PFS_LK_UNLOCK, 0, E);
	assert_int_equal(pfs_lktab_set(t, INO, &u), 0);
	assert_int_equal(pfs_lktab_count(t), 0);
	assert_int_equal(pfs_lktab_set(t, INO, &u), 0);
	/* another owner's unlock removes nothing */
	assert_int_equal(pfs_lktab_set(t, INO, &a), 0);
	u = L(2, 1, PFS_LK_UNLOCK, 0, E);
	assert_int_equal(pfs_lktab_set(t, INO, &u), 0);
	assert_int_equal(held(t, PFS_LK_READ, 0, 0), 1);
	pfs_lktab_free(t);
}

static void t_upgrade_downgrade(void **state)
{
	struct grants g = { 0 };
	pfs_lktab *t = pfs_lktab_new(grant_cb, &g);
	pfs_lock a = L(1, 1, PFS_LK_READ, 0, 99), w = L(1, 1, PFS_LK_WRITE, 20, 29);

	assert_int_equal(pfs_lktab_set(t, INO, &a), 0);
	/* upgrade of a middle range: read [0,19], write [20,29], read [30,99] */
	assert_int_equal(pfs_lktab_set(t, INO, &w), 0);
	assert_int_equal(pfs_lktab_count(t), 3);
	assert_int_equal(held(t, PFS_LK_READ, 0, 19), 0);
	assert_int_equal(held(t, PFS_LK_WRITE, 0, 19), 1);
	assert_int_equal(held(t, PFS_LK_READ, 25, 25), 1);
	assert_int_equal(held(t, PFS_LK_READ, 30, 99), 0);
	/* downgrade back: all read again, merged into one */
	pfs_lock r = L(1, 1, PFS_LK_READ, 20, 29);
	assert_int_equal(pfs_lktab_set(t, INO, &r), 0);
	assert_int_equal(pfs_lktab_count(t), 1);
	assert_int_equal(held(t, PFS_LK_READ, 0, 99), 0);
	assert_int_equal(held(t, PFS_LK_WRITE, 99, 99), 1);
	/* an upgrade that conflicts changes nothing */
	pfs_lock o = L(2, 2, PFS_LK_READ, 50, 50);
	assert_int_equal(pfs_lktab_set(t, INO, &o), 0);
	w = L(1, 1, PFS_LK_WRITE, 0, 99);
	assert_int_equal(pfs_lktab_set(t, INO, &w), -EAGAIN);
	assert_int_equal(pfs_lktab_count(t), 2);
	assert_int_equal(held(t, PFS_LK_READ, 0, 99), 0);
	pfs_lktab_free(t);
}

static void t_flock_independent(void **state)
{
	struct grants g = { 0 };
	pfs_lktab *t = pfs_lktab_new(grant_cb, &g);
	pfs_lock p = L(1, 1, PFS_LK_WRITE, 0, E), f = F(2, 2, PFS_LK_WRITE), c;

	assert_int_equal(pfs_lktab_set(t, INO, &p), 0);
	assert_int_equal(pfs_lktab_set(t, INO, &f), 0); /* kinds never conflict */
	pfs_lock f2 = F(1, 5, PFS_LK_READ);
	assert_int_equal(pfs_lktab_set(t, INO, &f2), -EAGAIN);
	assert_int_equal(pfs_lktab_test(t, INO, &f2, &c), 1);
	assert_int_equal(c.kind, PFS_LK_FLOCK);
	assert_int_equal(c.owner, 2);
	/* conversion of one's own flock: exclusive -> shared, then another shares */
	pfs_lock f3 = F(2, 2, PFS_LK_READ);
	assert_int_equal(pfs_lktab_set(t, INO, &f3), 0);
	assert_int_equal(pfs_lktab_set(t, INO, &f2), 0);
	assert_int_equal(pfs_lktab_count(t), 3);
	/* release of the owner's POSIX locks leaves its flock lock */
	pfs_lock f4 = F(1, 1, PFS_LK_READ);
	assert_int_equal(pfs_lktab_set(t, INO, &f4), 0);
	assert_int_equal(pfs_lktab_release_owner(t, INO, 1, 1, 1u << PFS_LK_POSIX), 1);
	assert_int_equal(pfs_lktab_count(t), 3);
	assert_int_equal(pfs_lktab_release_owner(t, INO, 1, 1, 1u << PFS_LK_FLOCK), 1);
	assert_int_equal(pfs_lktab_count(t), 2);
	pfs_lktab_free(t);
}

static void t_release_owner_and_client(void **state)
{
	struct grants g = { 0 };
	pfs_lktab *t = pfs_lktab_new(grant_cb, &g);
	pfs_lock a = L(1, 1, PFS_LK_WRITE, 0, 9), b = L(1, 1, PFS_LK_WRITE, 20, 29),
		 c = L(1, 2, PFS_LK_WRITE, 40, 49), d = L(2, 1, PFS_LK_WRITE, 60, 69);

	assert_int_equal(pfs_lktab_set(t, INO, &a), 0);
	assert_int_equal(pfs_lktab_set(t, INO, &b), 0);
	assert_int_equal(pfs_lktab_set(t, INO + 1, &a), 0);
	assert_int_equal(pfs_lktab_set(t, INO, &c), 0);
	assert_int_equal(pfs_lktab_set(t, INO, &d), 0);
	/* close by owner 1 of client 1 on INO: only those two */
	assert_int_equal(pfs_lktab_release_owner(t, INO, 1, 1, ~0u), 2);
	assert_int_equal(held(t, PFS_LK_READ, 0, 29), 0);
	assert_int_equal(held(t, PFS_LK_READ, 40, 40), 1);
	assert_int_equal(pfs_lktab_count(t), 3);
	assert_int_equal(pfs_lktab_client_busy(t, 1), 1);
	/* eviction of client 1: its locks everywhere */
	pfs_lock w = L(1, 3, PFS_LK_WRITE, 60, 60);
	assert_int_equal(pfs_lktab_wait(t, INO, &w, (void *)1, 0), 1);
	assert_int_equal(pfs_lktab_release_client(t, 1), 2);
	assert_int_equal(g.n, 1);
	assert_int_equal(g.status[0], -ENOLCK);
	assert_int_equal(pfs_lktab_count(t), 1);
	assert_int_equal(pfs_lktab_waiters(t), 0);
	assert_int_equal(pfs_lktab_client_busy(t, 1), 0);
	assert_int_equal(pfs_lktab_client_busy(t, 2), 1);
	pfs_lktab_free(t);
}

static void t_waiters(void **state)
{
	struct grants g = { 0 };
	pfs_lktab *t = pfs_lktab_new(grant_cb, &g);
	pfs_lock a = L(1, 1, PFS_LK_WRITE, 0, 99), w1 = L(2, 2, PFS_LK_WRITE, 50, 50),
		 w2 = L(3, 3, PFS_LK_READ, 50, 60), w3 = L(4, 4, PFS_LK_READ, 200, 300);

	assert_int_equal(pfs_lktab_set(t, INO, &a), 0);
	assert_int_equal(pfs_lktab_wait(t, INO, &w1, (void *)1, 0), 1);
	assert_int_equal(pfs_lktab_wait(t, INO, &w2, (void *)2, 0), 1);
	/* no conflict: granted at once, no callback */
	assert_int_equal(pfs_lktab_wait(t, INO, &w3, (void *)3, 0), 0);
	assert_int_equal(g.n, 0);
	assert_int_equal(pfs_lktab_waiters(t), 2);
	/* unlocking [40,59] does not free 60: w1 gets 50, w2 still waits */
	pfs_lock u = L(1, 1, PFS_LK_UNLOCK, 40, 59);
	assert_int_equal(pfs_lktab_set(t, INO, &u), 0);
	assert_int_equal(g.n, 1);
	assert_ptr_equal(g.cookie[0], (void *)1);
	assert_int_equal(g.status[0], 0);
	assert_int_equal(held(t, PFS_LK_READ, 50, 50), 1);
	/* the holder goes: w2 still blocked by w1's lock at 50 */
	assert_int_equal(pfs_lktab_release_client(t, 1), 2);
	assert_int_equal(g.n, 1);
	assert_int_equal(pfs_lktab_release_owner(t, INO, 2, 2, ~0u), 1);
	assert_int_equal(g.n, 2);
	assert_ptr_equal(g.cookie[1], (void *)2);
	assert_int_equal(pfs_lktab_waiters(t), 0);
	pfs_lktab_free(t);
}

static void t_cancel_expire_undelivered(void **state)
{
	struct grants g = { 0 };
	pfs_lktab *t = pfs_lktab_new(grant_cb, &g);
	pfs_lock a = F(1, 1, PFS_LK_WRITE), w1 = F(2, 2, PFS_LK_WRITE), w2 = F(3, 3, PFS_LK_READ);

	assert_int_equal(pfs_lktab_set(t, INO, &a), 0);
	assert_int_equal(pfs_lktab_wait(t, INO, &w1, (void *)1, 1000), 1);
	assert_int_equal(pfs_lktab_wait(t, INO, &w2, (void *)2, 5000), 1);
	assert_int_equal(pfs_lktab_cancel(t, INO, 2, 9), 0); /* other owner: nothing */
	assert_int_equal(pfs_lktab_cancel(t, INO, 2, 2), 1);
	assert_int_equal(g.status[0], -EINTR);
	assert_int_equal(pfs_lktab_expire(t, 4999), 0);
	assert_int_equal(pfs_lktab_expire(t, 5000), 1);
	assert_int_equal(g.status[1], -EINPROGRESS);
	/* a grant the client did not get is not applied */
	assert_int_equal(pfs_lktab_wait(t, INO, &w2, (void *)3, 0), 1);
	g.refuse = 1;
	assert_int_equal(pfs_lktab_release_owner(t, INO, 1, 1, ~0u), 1);
	assert_int_equal(g.n, 3);
	assert_int_equal(g.status[2], 0);
	assert_int_equal(pfs_lktab_count(t), 0);
	assert_int_equal(pfs_lktab_waiters(t), 0);
	pfs_lktab_free(t);
}

static void t_deadlock(void **state)
{
	struct grants g = { 0 };
	pfs_lktab *t = pfs_lktab_new(grant_cb, &g);
	pfs_lock a = L(1, 1, PFS_LK_WRITE, 0, 0), b = L(2, 2, PFS_LK_WRITE, 0, 0);

	assert_int_equal(pfs_lktab_set(t, INO, &a), 0);
	assert_int_equal(pfs_lktab_set(t, INO + 1, &b), 0);
	/* owner 1 waits for owner 2's lock on INO+1 */
	pfs_lock w = L(1, 1, PFS_LK_WRITE, 0, 0);
	assert_int_equal(pfs_lktab_wait(t, INO + 1, &w, (void *)1, 0), 1);
	/* owner 2 asking for owner 1's lock closes the cycle */
	w = L(2, 2, PFS_LK_WRITE, 0, 0);
	assert_int_equal(pfs_lktab_wait(t, INO, &w, (void *)2, 0), -EDEADLK);
	/* a third owner just waits */
	w = L(3, 3, PFS_LK_WRITE, 0, 0);
	assert_int_equal(pfs_lktab_wait(t, INO, &w, (void *)3, 0), 1);
	assert_int_equal(pfs_lktab_waiters(t), 2);
	pfs_lktab_free(t);
	assert_int_equal(g.n, 2); /* both told -ENOLCK at free */
	assert_int_equal(g.status[0], -ENOLCK);
}

static void t_bad_input(void **state)
{
	struct grants g = { 0 };
	pfs_lktab *t = pfs_lktab_new(grant_cb, &g);
	pfs_lock a = L(1, 1, PFS_LK_WRITE, 10, 9), c;

	assert_int_equal(pfs_lktab_set(t, INO, &a), -EINVAL);
	a = L(1, 1, 7, 0, 9);
	assert_int_equal(pfs_lktab_test(t, INO, &a, &c), -EINVAL);
	a = L(1, 1, PFS_LK_READ, 0, 9);
	a.kind = PFS_LK_NKINDS;
	assert_int_equal(pfs_lktab_wait(t, INO, &a, NULL, 0), -EINVAL);
	pfs_lktab_free(t);
}

/* pfs_lktab_apply, a mirror of grants decided elsewhere: other owners'
 * locks are not checked (the MDS did), the owner's own merge and split as
 * for pfs_lktab_set, and pfs_lktab_list returns exactly what is held. */
static void t_apply_and_list(void **state)
{
	pfs_lktab *t = pfs_lktab_new(NULL, NULL);
	pfs_lock a = L(0, 1, PFS_LK_WRITE, 0, 99), b = L(0, 2, PFS_LK_WRITE, 50, 149);
	pfs_lock u = L(0, 1, PFS_LK_UNLOCK, 10, 19), bad = a;
	uint64_t *inos;
	pfs_lock *locks;
	size_t n, found = 0;

	(void)state;
	assert_int_equal(pfs_lktab_apply(t, INO, &a), 0);
	assert_int_equal(pfs_lktab_apply(t, INO, &b), 0);  /* set would say -EAGAIN */
	assert_int_equal(pfs_lktab_count(t), 2);
	assert_int_equal(pfs_lktab_apply(t, INO, &u), 0);   /* splits owner 1's lock */
	assert_int_equal(pfs_lktab_count(t), 3);
	assert_int_equal(pfs_lktab_apply(t, INO + 1, &a), 0);
	bad.start = 5;
	bad.end = 4;
	assert_int_equal(pfs_lktab_apply(t, INO, &bad), -EINVAL);
	assert_int_equal(pfs_lktab_list(t, &inos, &locks, &n), 0);
	assert_int_equal(n, 4);
	for (size_t i = 0; i < n; i++) {
		if (inos[i] == INO + 1) {
			assert_int_equal(locks[i].start, 0);
			assert_int_equal(locks[i].end, 99);
			continue;
		}
		assert_int_equal(inos[i], INO);
		if (locks[i].owner == 2) {
			assert_int_equal(locks[i].start, 50);
			assert_int_equal(locks[i].end, 149);
		} else {
			assert_true((locks[i].start == 0 && locks[i].end == 9) ||
				    (locks[i].start == 20 && locks[i].end == 99));
		}
		found++;
	}
	assert_int_equal(found, 3);
	free(inos);
	free(locks);
	/* waiters are never retried by apply: none exist, and unlocking all
	 * empties the table */
	assert_int_equal(pfs_lktab_release_owner(t, INO, 0, 1, 1u << PFS_LK_POSIX), 2);
	assert_int_equal(pfs_lktab_apply(t, INO, &(pfs_lock){ .owner = 2, .type = PFS_LK_UNLOCK,
							   .kind = PFS_LK_POSIX, .start = 0,
							   .end = E }), 0);
	assert_int_equal(pfs_lktab_apply(t, INO + 1, &(pfs_lock){ .owner = 1, .type = PFS_LK_UNLOCK,
							       .kind = PFS_LK_POSIX, .start = 0,
							       .end = E }), 0);
	assert_int_equal(pfs_lktab_count(t), 0);
	assert_int_equal(pfs_lktab_list(t, &inos, &locks, &n), 0);
	assert_int_equal(n, 0);
	assert_null(inos);
	pfs_lktab_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_conflict_and_getlk),
		cmocka_unit_test(t_readers_share),
		cmocka_unit_test(t_reset_and_holds),
		cmocka_unit_test(t_merge),
		cmocka_unit_test(t_unlock_middle_splits),
		cmocka_unit_test(t_upgrade_downgrade),
		cmocka_unit_test(t_flock_independent),
		cmocka_unit_test(t_release_owner_and_client),
		cmocka_unit_test(t_waiters),
		cmocka_unit_test(t_cancel_expire_undelivered),
		cmocka_unit_test(t_deadlock),
		cmocka_unit_test(t_bad_input),
		cmocka_unit_test(t_apply_and_list),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
