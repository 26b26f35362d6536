/* lktab.h — a lock table: POSIX record locks, flock locks and the clients'
 * internal append locks, per inode, as a pure data structure (no sockets,
 * no threads, no clock: the caller serialises calls and says what time it
 * is).  The MDS's lock service (mds/locksvc.c) decides with it and puts it
 * on the wire; each mount keeps one as the record of the locks it holds
 * (client/lock_held.c, with pfs_lktab_apply: the MDS already decided).
 *
 * A lock belongs to (client, owner): client is the mount's 64-bit client id
 * (frame header), owner the kernel's lock owner as FUSE passes it (the
 * process's files table for fcntl locks, the open file for flock and OFD
 * locks).  Locks of different kinds never conflict with each other (Linux:
 * flock and fcntl locks are independent); within a kind two locks conflict
 * when their owners differ, their byte ranges overlap and one is a write
 * lock.  Ranges are [start, end] with end inclusive (PFS_LK_EOF = to the end
 * of file, however far it grows); flock and append locks cover [0, EOF].
 *
 * Setting a lock follows POSIX for the owner's own locks of that kind:
 * the new range replaces whatever the owner held there (upgrade, downgrade,
 * unlock of a middle range splits a lock in two), and locks of the same
 * type that overlap or touch are merged into one.  A request that conflicts
 * is refused (-EAGAIN) or, with pfs_lktab_wait, queued: waiters of an inode
 * are retried in arrival order whenever locks of that inode go away, and
 * handed to the table's grant callback, which delivers the answer; the
 * lock is applied only if the callback says it was delivered.  A waiter
 * whose POSIX request would wait on a chain of owners that ends in itself
 * is refused with -EDEADLK instead.
 *
 * Not thread-safe: one mutex around every call (locksvc.c).  Grant
 * callbacks run inside the calls and must not call back into the table. */
#ifndef PFS_LKTAB_H
#define PFS_LKTAB_H

#include <stddef.h>
#include <stdint.h>

#include "common/proto.h"

#define PFS_LK_EOF UINT64_MAX

/* Types and kinds are the wire's (common/proto.h): PFS_LK_READ, WRITE,
 * UNLOCK; PFS_LK_POSIX (fcntl and OFD byte-range locks), FLOCK (whole
 * file, per open file), APPEND (a client's O_APPEND write: whole file,
 * short). */
#define PFS_LK_NKINDS 3

typedef struct pfs_lock {
	uint64_t client;
	uint64_t owner;
	uint32_t pid;      /* reported by F_GETLK */
	uint8_t type;      /* PFS_LK_READ, WRITE, UNLOCK */
	uint8_t kind;      /* PFS_LK_POSIX, FLOCK, APPEND */
	uint64_t start;
	uint64_t end;      /* inclusive; PFS_LK_EOF = whole tail */
} pfs_lock;

typedef struct pfs_lktab pfs_lktab;

/* Called for a queued waiter: status 0 = it may have its lock now (return
 * 0 if the answer reached the client: the table then applies the lock;
 * non-zero: the waiter is dropped and nothing is applied), or a negative
 * errno (-EINTR cancelled, -EINPROGRESS deadline passed, -ENOLCK its client
 * was evicted, -ENOMEM): the waiter is gone, the return value is ignored. */
typedef int (*pfs_lktab_grant_fn)(void *arg, void *cookie, int status);

pfs_lktab *pfs_lktab_new(pfs_lktab_grant_fn grant, void *arg);
/* Frees every lock; remaining waiters get status -ENOLCK first. */
void pfs_lktab_free(pfs_lktab *t);

/* 0, or -EINVAL for a bad type/kind/range (start > end). */
int pfs_lktab_check(const pfs_lock *l);
/* F_GETLK: 1 and *conflict = the first lock that would block req (its
 * owner, pid, type, range), 0 if req could be granted now. */
int pfs_lktab_test(pfs_lktab *t, uint64_t ino, const pfs_lock *req, pfs_lock *conflict);
/* F_SETLK: 0 granted (or unlocked), -EAGAIN conflict, -ENOMEM, -EINVAL.
 * Setting again a lock the owner already holds is granted and changes
 * nothing (a conflict needs another owner), so a resent LOCK_SET whose
 * first copy was granted never fails against itself. */
int pfs_lktab_set(pfs_lktab *t, uint64_t ino, const pfs_lock *req);
/* F_SETLKW: 0 granted now; 1 queued (cookie will reach the grant callback
 * exactly once, unless cancelled by pfs_lktab_cancel_cookie); -EDEADLK,
 * -ENOMEM, -EINVAL.  deadline_ms: when pfs_lktab_expire answers
 * -EINPROGRESS (0 = never). */
int pfs_lktab_wait(pfs_lktab *t, uint64_t ino, const pfs_lock *req, void *cookie,
		  uint64_t deadline_ms);
/* The client's interrupt: waiters of (client, owner) on ino get -EINTR.
 * Returns how many. */
int pfs_lktab_cancel(pfs_lktab *t, uint64_t ino, uint64_t client, uint64_t owner);
/* Waiters whose deadline is <= now_ms get -EINPROGRESS; how many. */
int pfs_lktab_expire(pfs_lktab *t, uint64_t now_ms);
/* Release every lock of (client, owner) on ino whose kind is in kinds
 * (mask of 1 << PFS_LK_*), as close/flush/release do.  Waiters of that
 * owner stay.  Returns how many locks went. */
int pfs_lktab_release_owner(pfs_lktab *t, uint64_t ino, uint64_t client, uint64_t owner,
			   unsigned kinds);
/* Eviction: every lock and waiter (-ENOLCK) of client, on every inode. */
int pfs_lktab_release_client(pfs_lktab *t, uint64_t client);
/* 1 if client holds a lock or has a waiter anywhere. */
int pfs_lktab_client_busy(pfs_lktab *t, uint64_t client);
/* 1 if req's (client, owner, kind) holds a lock of req's type over all
 * of [req->start, req->end] on ino (what it reclaims after an MDS restart
 * is still its own), else 0. */
int pfs_lktab_holds(pfs_lktab *t, uint64_t ino, const pfs_lock *req);
/* Apply a lock or unlock the holder of the table decided elsewhere (a
 * mount's mirror of what the MDS granted): the owner's own locks of that
 * kind merge and split as for pfs_lktab_set, other owners' locks are not
 * checked and waiters are not retried.  0, -EINVAL or -ENOMEM (then
 * nothing changed). */
int pfs_lktab_apply(pfs_lktab *t, uint64_t ino, const pfs_lock *l);
/* Copies of every granted lock: *inos and *locks malloc'd arrays of *n
 * entries (NULL when none), freed by the caller.  0 or -ENOMEM. */
int pfs_lktab_list(pfs_lktab *t, uint64_t **inos, pfs_lock **locks, size_t *n);
/* Locks and waiters in the table, for tests and logs. */
unsigned pfs_lktab_count(pfs_lktab *t);
unsigned pfs_lktab_waiters(pfs_lktab *t);

#endif
