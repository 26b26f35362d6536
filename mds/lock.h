/* lock.h — the MDS's lock table: POSIX record locks, flock locks and the
 * clients' internal append locks, per inode, as a pure data structure (no
 * sockets, no threads, no clock: the caller serialises calls and says what
 * time it is).  mds/locksvc.c puts it on the wire.
 *
 * A lock belongs to (client, owner): client is the mount's 64-bit client id
 * (frame header), owner the kernel's lock owner as FUSE passes it (the
 * process's files table for fcntl locks, the open file for flock and OFD
 * locks).  Locks of different kinds never conflict with each other (Linux:
 * flock and fcntl locks are independent); within a kind two locks conflict
 * when their owners differ, their byte ranges overlap and one is a write
 * lock.  Ranges are [start, end] with end inclusive (MDS_LK_EOF = to the end
 * of file, however far it grows); flock and append locks cover [0, EOF].
 *
 * Setting a lock follows POSIX for the owner's own locks of that kind:
 * the new range replaces whatever the owner held there (upgrade, downgrade,
 * unlock of a middle range splits a lock in two), and locks of the same
 * type that overlap or touch are merged into one.  A request that conflicts
 * is refused (-EAGAIN) or, with mds_lock_wait, queued: waiters of an inode
 * are retried in arrival order whenever locks of that inode go away, and
 * handed to the table's grant callback, which delivers the answer; the
 * lock is applied only if the callback says it was delivered.  A waiter
 * whose POSIX request would wait on a chain of owners that ends in itself
 * is refused with -EDEADLK instead.
 *
 * Not thread-safe: one mutex around every call (locksvc.c).  Grant
 * callbacks run inside the calls and must not call back into the table. */
#ifndef MDS_LOCK_H
#define MDS_LOCK_H

#include <stdint.h>

#define MDS_LK_EOF UINT64_MAX

enum mds_lk_type {
	MDS_LK_READ = 1,
	MDS_LK_WRITE = 2,
	MDS_LK_UNLOCK = 3,
};

enum mds_lk_kind {
	MDS_LK_POSIX = 0,   /* fcntl F_SETLK (and OFD) byte-range locks */
	MDS_LK_FLOCK = 1,   /* flock(2): whole file, per open file */
	MDS_LK_APPEND = 2,  /* a client's O_APPEND write: whole file, short */
	MDS_LK_NKINDS
};

typedef struct mds_lock {
	uint64_t client;
	uint64_t owner;
	uint32_t pid;      /* reported by F_GETLK */
	uint8_t type;      /* enum mds_lk_type */
	uint8_t kind;      /* enum mds_lk_kind */
	uint64_t start;
	uint64_t end;      /* inclusive; MDS_LK_EOF = whole tail */
} mds_lock;

typedef struct mds_lock_tab mds_lock_tab;

/* Called for a queued waiter: status 0 = it may have its lock now (return
 * 0 if the answer reached the client: the table then applies the lock;
 * non-zero: the waiter is dropped and nothing is applied), or a negative
 * errno (-EINTR cancelled, -EINPROGRESS deadline passed, -ENOLCK its client
 * was evicted, -ENOMEM): the waiter is gone, the return value is ignored. */
typedef int (*mds_lock_grant_fn)(void *arg, void *cookie, int status);

mds_lock_tab *mds_lock_tab_new(mds_lock_grant_fn grant, void *arg);
/* Frees every lock; remaining waiters get status -ENOLCK first. */
void mds_lock_tab_free(mds_lock_tab *t);

/* 0, or -EINVAL for a bad type/kind/range (start > end). */
int mds_lock_check(const mds_lock *l);
/* F_GETLK: 1 and *conflict = the first lock that would block req (its
 * owner, pid, type, range), 0 if req could be granted now. */
int mds_lock_test(mds_lock_tab *t, uint64_t ino, const mds_lock *req, mds_lock *conflict);
/* F_SETLK: 0 granted (or unlocked), -EAGAIN conflict, -ENOMEM, -EINVAL.
 * Setting again a lock the owner already holds is granted and changes
 * nothing (a conflict needs another owner), so a resent LOCK_SET whose
 * first copy was granted never fails against itself. */
int mds_lock_set(mds_lock_tab *t, uint64_t ino, const mds_lock *req);
/* F_SETLKW: 0 granted now; 1 queued (cookie will reach the grant callback
 * exactly once, unless cancelled by mds_lock_cancel_cookie); -EDEADLK,
 * -ENOMEM, -EINVAL.  deadline_ms: when mds_lock_expire answers
 * -EINPROGRESS (0 = never). */
int mds_lock_wait(mds_lock_tab *t, uint64_t ino, const mds_lock *req, void *cookie,
		  uint64_t deadline_ms);
/* The client's interrupt: waiters of (client, owner) on ino get -EINTR.
 * Returns how many. */
int mds_lock_cancel(mds_lock_tab *t, uint64_t ino, uint64_t client, uint64_t owner);
/* Waiters whose deadline is <= now_ms get -EINPROGRESS; how many. */
int mds_lock_expire(mds_lock_tab *t, uint64_t now_ms);
/* Release every lock of (client, owner) on ino whose kind is in kinds
 * (mask of 1 << MDS_LK_*), as close/flush/release do.  Waiters of that
 * owner stay.  Returns how many locks went. */
int mds_lock_release_owner(mds_lock_tab *t, uint64_t ino, uint64_t client, uint64_t owner,
			   unsigned kinds);
/* Eviction: every lock and waiter (-ENOLCK) of client, on every inode. */
int mds_lock_release_client(mds_lock_tab *t, uint64_t client);
/* 1 if client holds a lock or has a waiter anywhere. */
int mds_lock_client_busy(mds_lock_tab *t, uint64_t client);
/* 1 if req's (client, owner, kind) holds a lock of req's type over all
 * of [req->start, req->end] on ino (what it reclaims after an MDS restart
 * is still its own), else 0. */
int mds_lock_holds(mds_lock_tab *t, uint64_t ino, const mds_lock *req);
/* Locks and waiters in the table, for tests and logs. */
unsigned mds_lock_count(mds_lock_tab *t);
unsigned mds_lock_waiters(mds_lock_tab *t);

#endif
