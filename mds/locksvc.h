/* locksvc.h — the MDS lock service: the LOCK_* opcodes of common/proto.h
 * on the lock table of mds/lock.h, with client leases.
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
 * locks of a crashed or cut-off mount go away.  All state is in memory: an
 * MDS restart drops every lock (clients are not told; Lustre would replay
 * them). */
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

/* lease_s 0 = MDS_LOCK_LEASE_S_DEFAULT.  Starts the reaper. */
int mds_locksvc_start(unsigned lease_s, mds_locksvc **out);
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
