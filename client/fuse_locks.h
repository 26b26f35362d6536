/* fuse_locks.h — mount.pfs's file locks: fcntl record locks (getlk,
 * setlk), flock, and the append lock that makes O_APPEND writes of several
 * mounts land at the true end of file, all granted by the MDS lock service
 * (mds/locksvc.h) so that they hold across clients.
 *
 * The kernel routes locks here only when the ops table has getlk/setlk and
 * flock (libfuse then asks for FUSE_CAP_POSIX_LOCKS / FUSE_CAP_FLOCK_LOCKS
 * by default; fuse_ops.c's init leaves them on).  A lock's owner is FUSE's
 * lock_owner: the process's files table for fcntl locks, the open file for
 * flock.  POSIX locks of an owner go at any close of the file by it (FUSE
 * sends FLUSH with that owner: cli_locks_flush), flock locks at the last
 * close of the open file (RELEASE with flock_release: cli_locks_release);
 * a crashed or cut-off mount's locks go when its lease on the MDS expires.
 * While it holds locks, the mount pings the MDS every third of the lease.
 *
 * Blocking requests (F_SETLKW, flock without LOCK_NB) wait on the MDS in
 * rounds of a few seconds; a FUSE interrupt (a signal to the caller) sends
 * LOCK_CANCEL and the request returns EINTR (the kernel restarts it for an
 * SA_RESTART handler).  Each waiting request keeps one connection of the
 * MDS pool busy.
 *
 * O_APPEND: cli_locks_append_lock takes a whole-file write lock of the
 * append kind (independent of the user's locks) that the caller holds for
 * the write and the size update; cost: two more MDS round trips per append
 * write (lock, release) besides the GETATTR and SETSIZE around it. */
#ifndef CLI_FUSE_LOCKS_H
#define CLI_FUSE_LOCKS_H

#include <stdint.h>

#include <fuse_lowlevel.h>

#include "client/mdc.h"

typedef struct cli_locks cli_locks;

/* mdc is borrowed.  Starts the (idle) lease pinger.  0 or -errno. */
int cli_locks_create(cli_mdc *mdc, cli_locks **out);
/* NULL-safe; stops the pinger. */
void cli_locks_destroy(cli_locks *l);

/* The FUSE handlers: userdata is the cli_fs, cli_fs_locks gives l. */
void cli_locks_getlk(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi,
		     struct flock *lock);
void cli_locks_setlk(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi,
		     struct flock *lock, int sleep);
void cli_locks_flock(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi, int op);

/* FLUSH: drop fi->lock_owner's POSIX locks on ino (only asks the MDS if
 * this mount ever locked ino).  RELEASE: its flock lock if it had one.
 * Errors are logged: a lock left behind goes with the lease at worst. */
void cli_locks_flush(cli_locks *l, uint64_t ino, const struct fuse_file_info *fi);
void cli_locks_release(cli_locks *l, uint64_t ino, const struct fuse_file_info *fi);
/* A file was opened: keep the MDS lease alive from now on (the MDS ends the
 * opens of a client it has not heard from, mds/open.h), like a lock. */
void cli_locks_keepalive(cli_locks *l);

/* Take / drop the append lock of ino; *token names it for the unlock. */
int cli_locks_append_lock(cli_locks *l, uint64_t ino, uint64_t *token);
void cli_locks_append_unlock(cli_locks *l, uint64_t ino, uint64_t token);

#endif
