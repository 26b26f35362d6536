/* lease.h — metadata leases of the MDS and the invalidations that revoke
 * them (issue 11 item 3).
 *
 * When the MDS answers a LOOKUP, GETATTR, SETATTR or an entry-making
 * request (CREATE, MKNOD, MKDIR, SYMLINK, LINK) of a client that keeps a
 * notify channel open (PFS_OP_MDS_NOTIFY_WAIT), it records a lease:
 * (client, ino) for the attributes it sent, (client, parent) for a name it
 * sent.  A lease lasts lease_ms (plus a small slack for the reply's way to
 * the kernel); the client gives its kernel cache timeouts of at most
 * lease_ms.  When another client changes an inode (setattr, size, xattrs,
 * an open for writing), or a name in a directory (create, unlink, rename,
 * link, rmdir), every OTHER client holding a lease on it gets an
 * invalidation record queued: the inode (the attribute lease is revoked),
 * or the name (the directory's name lease stays: the client may hold other
 * names of it), or a directory's permission change (the client drops the
 * names it caches below).  The records go to the client as the answer of
 * its held NOTIFY_WAIT, at once; a NOTIFY_WAIT holds no thread (the
 * connection is referenced with pfs_sconn_get and answered from whichever
 * thread queues a record, or by the ticker after wait_ms).
 *
 * Races.  A lease is granted after the read it covers, with the change
 * sequence sampled before the read (mds_lease_begin): a change committed
 * between the two (its hook ran first and did not see the lease) is caught
 * by the grant, which then queues the invalidation to the grantee itself.
 * Change hooks run after their commit.  The change sequence is kept per
 * hash bucket of inodes, so a collision only costs a spurious
 * invalidation.
 *
 * Delivery.  Records stay queued until the client acknowledges the batch
 * (the next NOTIFY_WAIT carries the batch's sequence number), so a reply
 * lost with its connection is sent again.  Memory is bounded: at most
 * max_per_client and max_total leases (the oldest is evicted first; an
 * evicted lease that had not expired is revoked like a change, so the
 * client never keeps a cache nobody watches), at most max_queue records
 * per client (more set the batch's RESET flag: the client knows it missed
 * some and its kernel may be stale for at most one lease), at most
 * max_clients channels.  A client is registered while it has a
 * NOTIFY_WAIT held or for wait_ms + MDS_LEASE_REG_GRACE_MS after its last
 * one arrived or was answered; unregistered clients get no leases.  For
 * MDS_LEASE_REG_GRACE_MS + PFS_NOTIFY_WAIT_MAX_MS after the table was
 * created every client is taken as registered (a restarted MDS does not
 * know which mounts cached what under the leases of the previous one,
 * and their resent NOTIFY_WAIT may not have arrived yet).
 *
 * Threads: one mutex guards everything; a ticker thread answers held
 * waits whose time is up and forgets silent clients.  With no client
 * registered and the start grace over, grants and change hooks cost two
 * atomic reads.  Measured (bench/RESULTS.md "Metadata leases on by
 * default"): 0.1-0.5 us per LOOKUP's grants with a channel, under 1 % of
 * the MDS's CPU on a cold create/stat/unlink run. */
#ifndef MDS_LEASE_H
#define MDS_LEASE_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/proto.h"
#include "common/server.h"

typedef struct mds_lease mds_lease;

/* mds_lease_wait's "the reply will be sent later" (== MDS_LOCKSVC_LATER) */
#define MDS_LEASE_LATER 1

#define MDS_LEASE_S_DEFAULT 10
#define MDS_LEASE_SLACK_MS 2000      /* lease beyond lease_ms on the MDS */
#define MDS_LEASE_REG_GRACE_MS 20000 /* registration beyond wait_ms (more than a
                                        mount's own 10 s, client/notify.c) */

/* What a change touched (mds_lease_changed). */
#define MDS_LEASE_ATTR 1u  /* attributes (size, times, mode, nlink, ...) */
#define MDS_LEASE_PERM 2u  /* a directory's mode or owner: cached names below */

typedef struct mds_lease_opts {
	unsigned lease_ms;        /* 0 = leases off: grants do nothing, waits answer
	                             with lease_ms 0 */
	unsigned max_per_client;  /* 0 = 65536 */
	unsigned max_total;       /* 0 = 262144 */
	unsigned max_queue;       /* records per client; 0 = 65536 */
	unsigned max_clients;     /* 0 = 4096 */
	int no_thread;            /* tests: no ticker, call mds_lease_tick */
	/* Tests: the clock (default pfs_clock_ms) and the reply path
	 * (default pfs_sconn_reply / pfs_sconn_get / pfs_sconn_put). */
	uint64_t (*clock)(void *arg);
	int (*reply)(void *arg, pfs_sconn *c, const pfs_hdr *h, int status,
		     const void *payload, size_t len);
	void (*ref)(void *arg, pfs_sconn *c, int get);
	void *arg;
} mds_lease_opts;

int mds_lease_create(const mds_lease_opts *o, mds_lease **out);
/* Answers every held wait -ECANCELED (quietly failing into closed
 * connections after the server stopped) and frees everything.  NULL-safe. */
void mds_lease_destroy(mds_lease *t);

/* The change sequence to pass to the grants of a read about to be made. */
uint64_t mds_lease_begin(mds_lease *t);
/* After a successful read of ino's attributes for client. */
void mds_lease_grant(mds_lease *t, uint64_t client, uint64_t ino, uint64_t since);
/* After a successful read of name in directory parent for client. */
void mds_lease_grant_name(mds_lease *t, uint64_t client, uint64_t parent, const char *name,
			  uint64_t since);
/* 1 if a client other than except holds a lease on ino (callers use it to
 * skip looking up what a change is about to remove). */
int mds_lease_watched(mds_lease *t, uint64_t except, uint64_t ino);
/* 1 if any client has a notify channel (changes are worth reporting). */
int mds_lease_active(mds_lease *t);
/* 1 if client keeps a notify channel: a NOTIFY_WAIT of it was answered
 * and it is held or registered still (directory delegations, mds/deleg.h,
 * are granted only to such clients: they must hear a recall). */
int mds_lease_registered(mds_lease *t, uint64_t client);
/* Queue PFS_NOTIFY_RECALL of directory dir to client (its delegation,
 * mds/deleg.h): 0, -ENOENT when it has no channel, -EPIPE when its held
 * wait could not be answered (the connection is closed: a dead mount;
 * the record stays queued for a wait that comes back). */
int mds_lease_recall(mds_lease *t, uint64_t client, uint64_t dir);
/* After client by changed ino (what: MDS_LEASE_ATTR | MDS_LEASE_PERM). */
void mds_lease_changed(mds_lease *t, uint64_t by, uint64_t ino, unsigned what);
/* After client by changed (created, removed, renamed) name in parent. */
void mds_lease_name_changed(mds_lease *t, uint64_t by, uint64_t parent, const char *name);

/* One PFS_OP_MDS_NOTIFY_WAIT (common/proto.h): 0 with the reply in out,
 * a negative errno, or MDS_LEASE_LATER (held: answered on conn later).
 * conn NULL (tests, fuzzing): never held. */
int mds_lease_wait(mds_lease *t, pfs_sconn *conn, const pfs_hdr *h, pfs_rbuf *b,
		   pfs_wbuf *out);
/* Answer held waits whose time is up, forget silent clients and expired
 * leases (the ticker calls it every 100 ms). */
void mds_lease_tick(mds_lease *t);

typedef struct mds_lease_stats {
	unsigned clients, held, leases;
	uint64_t queued;       /* records waiting */
	uint64_t granted;      /* grants (new or renewed) */
	uint64_t revoked;      /* records queued, ever */
	uint64_t evicted;      /* unexpired leases evicted for room */
	uint64_t lost;         /* records dropped for a full queue */
} mds_lease_stats;
void mds_lease_get_stats(mds_lease *t, mds_lease_stats *st);

#endif
