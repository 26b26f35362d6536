/* locksvc.h — the MDS lock service: the LOCK_* opcodes of common/proto.h
 * on the lock table of common/lktab.h, with client leases.
 *
 * Blocking requests (LOCK_WAIT) hold no thread: the request's connection
 * and header are kept with the waiter (pfs_sconn_get) and the answer is
 * sent from whichever thread frees the range (a LOCK_SET unlock, a
 * LOCK_RELEASE, the lease reaper), or -EINTR from LOCK_CANCEL, or
 * -EINPROGRESS when the client's wait_ms (at most PFS_LK_WAIT_MAX_MS)
 * passes, so a waiter never outlives the client's RPC timeout and the
 * client simply sends the request again.  A grant whose reply cannot be
 * sent (connection gone) is not applied.
 *
 * Leases: a client that holds a lock or waits for one is remembered with
 * the time it was last heard from; every request it sends to the MDS
 * renews it (mds_locksvc_seen, called by the dispatcher), and mount.pfs
 * pings while it holds locks.  A reaper thread (4 times per lease) releases
 * every lock and waiter of a client silent for lease_s seconds, so the
 * locks of a crashed or cut-off mount go away.
 *
 * Recovery after a restart (Lustre's lock replay): the locks are in memory,
 * but the ids of the mounts that hold any are kept in the namespace's
 * MDS_KV_LOCKS table (written when a mount's lease starts, deleted when it
 * ends).  An MDS that finds ids there at start opens a recovery window of
 * one lease (the restart hold mds/open.h gives its orphans): the mounts,
 * which notice the new MDS instance (a random id in every grant and in the
 * LOCK_RECLAIM reply that is their lease ping), re-assert the locks they
 * hold with LOCK_RECLAIM.  During the window a request that would take a
 * lock (LOCK_SET, LOCK_WAIT, LOCK_GET) is answered -PFS_LK_ERECOVER (send
 * again later), unless a reclaimed lock already conflicts with it
 * (LOCK_SET: -EAGAIN, LOCK_GET: that lock); unlocks, releases and cancels
 * run as usual.  The window closes when its time is up or when every mount
 * of the table sent its last reclaim batch (PFS_LK_RECLAIM_LAST); the locks
 * nobody reclaimed are gone then, and a reclaim after the window is refused
 * (-ENOLCK) for every lock the mount does not still hold.  A reclaim that
 * conflicts with an already reclaimed lock is refused too (-ENOLCK).
 *
 * Resends: LOCK_SET and LOCK_RELEASE are in the reply cache; a resend the
 * cache does not know (after a restart) runs again, which is harmless since
 * setting a lock its owner already holds is granted (common/lktab.h). */
#ifndef MDS_LOCKSVC_H
#define MDS_LOCKSVC_H

#include <stdint.h>

#include "common/buf.h"
#include "common/proto.h"
#include "common/server.h"

typedef struct mds_locksvc mds_locksvc;

/* mds_locksvc_handle's "the reply will be sent later" */
#define MDS_LOCKSVC_LATER 1
#define MDS_LOCK_LEASE_S_DEFAULT 30

/* Most LOCK_RECLAIM entries one request may carry. */
#define MDS_LOCKSVC_RECLAIM_MAX 4096u

typedef struct mds_ns mds_ns;

typedef struct mds_locksvc_opts {
	unsigned lease_s;      /* 0 = MDS_LOCK_LEASE_S_DEFAULT; also the recovery window */
	mds_ns *ns;            /* where lock holders are remembered (borrowed);
	                          NULL = nowhere: no recovery after a restart */
	/* Clock of the recovery window in ms; NULL = pfs_clock_ms.  Tests. */
	uint64_t (*clock_ms)(void *arg);
	void *clock_arg;
} mds_locksvc_opts;

/* lease_s 0 = MDS_LOCK_LEASE_S_DEFAULT.  Starts the reaper. */
int mds_locksvc_start(unsigned lease_s, mds_locksvc **out);
/* The same with a namespace: reads the lock holders of the previous
 * instance and, if there are any, opens the recovery window. */
int mds_locksvc_start_opts(const mds_locksvc_opts *o, mds_locksvc **out);
/* 1 while the recovery window is open (closing it if it is over). */
int mds_locksvc_recovering(mds_locksvc *s);
/* Stops the reaper; waiters are answered -ENOLCK (after the server has
 * stopped that reply fails quietly), every lock is dropped.  NULL-safe. */
void mds_locksvc_stop(mds_locksvc *s);
/* A request from client: renew its lease if it has one. */
void mds_locksvc_seen(mds_locksvc *s, uint64_t client);
/* One LOCK_* request (h->opcode) with its payload in b: 0 and the reply
 * payload in out, a negative errno, or MDS_LOCKSVC_LATER (LOCK_WAIT that
 * must wait: the service replies on conn itself).  conn NULL (tests,
 * fuzzing): LOCK_WAIT that would wait is answered -EINPROGRESS. */
int mds_locksvc_handle(mds_locksvc *s, pfs_sconn *conn, const pfs_hdr *h, pfs_rbuf *b,
		       pfs_wbuf *out);
/* Locks and waiters held, for tests and logs. */
void mds_locksvc_counts(mds_locksvc *s, unsigned *locks, unsigned *waiters,
			unsigned *clients);

#endif
