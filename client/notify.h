/* notify.h — mount.pfs's end of the metadata leases (issue 11 item 3,
 * mds/lease.h): a thread keeps one PFS_OP_MDS_NOTIFY_WAIT outstanding and
 * turns each invalidation the MDS sends into fuse_lowlevel_notify_inval_*
 * calls; while the channel is up, fuse_ops.c may give the kernel entry
 * and attribute timeouts up to the MDS's lease instead of attr_timeout_s.
 *
 * Up means: the MDS answered the last wait (so it has this mount
 * registered and records leases for it), the wait in flight was sent less
 * than wait_ms + 10 s ago (the MDS keeps a registration wait_ms + 20 s past
 * each wait, so it outlasts the client's belief), and the MDS grants
 * leases.  Down (MDS restart, network cut, md_lease=0 on either side):
 * the short timeouts of before.  A batch that says the leases went
 * unwatched (another MDS instance, a sequence started again: the MDS forgot
 * this mount, or RESET: records were dropped) makes the mount drop the
 * names it cached below every directory it knows; what stays (attributes
 * of inodes in use) is stale for at most one lease: no kernel timeout
 * exceeds it.
 *
 * Names: the kernel checks no search permission on a cached dentry
 * (fuse_ops.c entry_timeout), so a directory whose mode or owner changes
 * must lose the names cached below it.  The MDS sends PFS_NOTIFY_PERM for
 * it; this module then invalidates the directory's own dentry (the kernel
 * drops the unused dentries below it with it), which it finds in a table
 * of the directories the kernel got entries for.  Names below a directory
 * not in that table (the root, a full table) keep the short timeout.
 * Names just invalidated in a directory keep it for 2 s too: a LOOKUP
 * answered before a change and delivered after its invalidation must not
 * be cached for a lease.
 *
 * Thread-safe; the timeout calls are cheap (one mutex, no RPC). */
#ifndef CLI_NOTIFY_H
#define CLI_NOTIFY_H

#include <stdint.h>

#include "client/mdc.h"
#include "common/msg.h"

struct fuse_session;
typedef struct cli_notify cli_notify;

typedef struct cli_notify_opts {
	double lease_s;       /* the mount's cap on cache timeouts while up (md_lease) */
	unsigned wait_ms;     /* NOTIFY_WAIT hold time; 0 = 5000 */
	unsigned max_dirs;    /* directory table; 0 = 65536 */
} cli_notify_opts;

/* mdc is borrowed and must outlive n. */
int cli_notify_create(cli_mdc *mdc, const cli_notify_opts *o, cli_notify **out);
/* Start the thread (after daemonizing); invalidations go to se. */
int cli_notify_start(cli_notify *n, struct fuse_session *se);
/* Close the channel (BYE, bounded to a few seconds when the MDS is away)
 * and join the thread; before the session is destroyed.  NULL-safe,
 * idempotent. */
void cli_notify_stop(cli_notify *n);
void cli_notify_destroy(cli_notify *n);

/* Seconds the kernel may cache attributes just received: dflt unless the
 * channel is up. */
double cli_notify_attr_timeout(cli_notify *n, double dflt);
/* Seconds the kernel may cache the entry name -> a in directory parent
 * (the caller has decided the name may be cached at all: dflt > 0).
 * Also notes a directory's entry for PFS_NOTIFY_PERM. */
double cli_notify_entry_timeout(cli_notify *n, double dflt, uint64_t parent, const char *name,
				const pfs_attr *a);
/* fn(arg, ino) for each inode the MDS invalidates (attributes, or a
 * directory's permissions: what was cached below it too), and fn(arg, 0) when
 * invalidations were lost (a RESET batch); from the notify thread, no
 * lock held.  Set before cli_notify_start (fuse_ops.c drops the
 * readahead's prefetched data of the inode with it). */
void cli_notify_on_inval(cli_notify *n, void (*fn)(void *arg, uint64_t ino), void *arg);
/* fn(arg, dir) for each PFS_NOTIFY_RECALL of directory dir's delegation
 * (client/dirdeleg.h), and fn(arg, 0) when every delegation is gone: the
 * MDS restarted or forgot this mount, records were lost, or the channel
 * went down.  From the notify thread, no lock held; fn must not block on
 * an RPC.  Set before cli_notify_start. */
void cli_notify_on_recall(cli_notify *n, void (*fn)(void *arg, uint64_t dir), void *arg);
/* 1 while the channel is up. */
int cli_notify_up(cli_notify *n);

typedef struct cli_notify_stats {
	uint64_t batches, inval_inode, inval_entry, inval_perm, resets, failures;
	uint64_t recalls;   /* PFS_NOTIFY_RECALL records */
} cli_notify_stats;
void cli_notify_get_stats(cli_notify *n, cli_notify_stats *st);

#endif
