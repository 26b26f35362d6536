/* deleg.h — directory delegations of the MDS: asynchronous unlink (issue
 * 11, "unlink >= 0.8 of a FUSE passthrough").
 *
 * A mount that holds a directory's delegation (PFS_OP_MDS_DELEG_GET)
 * answers unlink(2) in it at once and sends the UNLINKs later, with the
 * expected inode (mds_ns_unlink_ino).  Other clients stay correct because
 * their requests that touch the directory wait here, parked, until the
 * holder has sent its pending unlinks and returned the delegation
 * (PFS_OP_MDS_DELEG_RETURN, after a PFS_NOTIFY_RECALL on its notify
 * channel), or until recall_ms passed, or the delegation expired; then
 * they run, in arrival order, from the thread that released them.
 *
 * This is the table alone: dir -> { holder's client id, expiry,
 * recall state, parked requests }.  The namespace conditions of a grant
 * (a directory, not sticky, the cred may remove entries in it, the
 * client has a notify channel and nobody else leases the directory) are
 * checked by the caller (mds/server.c) first.  A request is opaque here:
 * the release callback runs it (status 0) or answers it (an error, when
 * the table goes away).
 *
 * Rules:
 *  - a delegation lasts lease_ms past the holder's last request naming the
 *    directory (mds_deleg_check of the holder renews; so does a repeated
 *    GET); an expired one is forgotten (its late unlinks are conditional);
 *  - a request of another client naming a held directory parks, and the
 *    first one starts the recall (the recall callback, once per recall);
 *    so does a GET of another client, which is refused -EAGAIN;
 *  - during a recall nobody (not even the holder) is granted the
 *    directory; after recall_ms the delegation is taken back (force
 *    expired) and its parked requests run; at once when the holder cannot
 *    hear the recall (the recall callback fails: its channel is gone);
 *  - bounded: max_delegs delegations (more GETs: -EAGAIN), max_parked_dir
 *    parked requests per directory and max_parked in all; a request that
 *    would pass a cap is not parked: the delegation is force expired
 *    (its parked requests are released by the table's thread) and the
 *    request runs at once.
 *
 * Threads: one mutex; a thread (every 100 ms, and at once when a forced
 * expiry is due) releases timed-out and expired delegations' requests.
 * With no delegation held, mds_deleg_any costs one atomic load: the MDS's
 * hot path pays nothing more.  No global state: one table per server. */
#ifndef MDS_DELEG_H
#define MDS_DELEG_H

#include <stddef.h>
#include <stdint.h>

#include "common/msg.h"

typedef struct mds_deleg mds_deleg;

#define MDS_DELEG_LEASE_MS_DEFAULT 10000
#define MDS_DELEG_RECALL_MS_DEFAULT 5000

typedef struct mds_deleg_opts {
	unsigned lease_ms;       /* 0 = MDS_DELEG_LEASE_MS_DEFAULT */
	unsigned recall_ms;      /* 0 = MDS_DELEG_RECALL_MS_DEFAULT */
	unsigned max_delegs;     /* 0 = 4096 */
	unsigned max_parked_dir; /* 0 = 1024 */
	unsigned max_parked;     /* 0 = 16384 */
	int no_thread;           /* tests: no thread, call mds_deleg_tick */
	uint64_t (*clock)(void *arg); /* ms; NULL = pfs_clock_ms */
	/* Queue PFS_NOTIFY_RECALL(dir) to client (mds_lease_recall).  Called
	 * with the table's lock held: must not call back into the table.
	 * Negative: the holder cannot hear it (no notify channel, or its
	 * connection is closed: a killed mount), so nothing would come back
	 * before recall_ms; the delegation is taken back at once (its parked
	 * requests run on the table's thread). */
	int (*recall)(void *arg, uint64_t client, uint64_t dir);
	/* A parked request's turn, without the table's lock: status 0 = run
	 * it (it may be checked again and park elsewhere), else answer it
	 * with status (-ESHUTDOWN: the table is being destroyed). */
	void (*release)(void *arg, void *req, int status);
	void *arg;
} mds_deleg_opts;

int mds_deleg_create(const mds_deleg_opts *o, mds_deleg **out);
/* Stops the thread, answers every parked request -ESHUTDOWN, frees.
 * NULL-safe. */
void mds_deleg_destroy(mds_deleg *d);

/* 1 if any delegation is held (one atomic load; NULL: 0). */
int mds_deleg_any(mds_deleg *d);

/* A DELEG_GET of client on dir, whose namespace conditions (the
 * caller's cred may unlink there, ...) the caller checked: 0 granted or
 * renewed (*lease_ms set), -EAGAIN not now (another holder: its recall
 * starts; a recall under way; the table full).  The table keeps no cred:
 * every UNLINK the holder sends later is checked for its own. */
int mds_deleg_get(mds_deleg *d, uint64_t client, uint64_t dir, uint32_t *lease_ms);
/* A DELEG_RETURN: the holder's delegation of dir ends and its parked
 * requests run here, in arrival order.  Not held (or held by another):
 * nothing happens.  Always 0. */
int mds_deleg_return(mds_deleg *d, uint64_t client, uint64_t dir);
/* A request of client naming the directories (or inodes) dirs[0..n-1]:
 * 1 = parked (req is the table's until the release callback), 0 = run it
 * now (none is delegated to another client; the holder's own renew). */
int mds_deleg_check(mds_deleg *d, uint64_t client, const uint64_t *dirs, unsigned n, void *req);
/* Start the recall of every delegation (a directory's mode or owner
 * changed: what the holders were allowed may have changed). */
void mds_deleg_recall_all(mds_deleg *d);
/* Release what is due: recall timeouts, expired delegations (the thread
 * calls it every 100 ms). */
void mds_deleg_tick(mds_deleg *d);

/* The holder of dir's delegation (0: none; tests and logs). */
uint64_t mds_deleg_holder(mds_deleg *d, uint64_t dir);

typedef struct mds_deleg_stats {
	uint64_t grants;    /* GETs granted (new) */
	uint64_t renewals;  /* GETs that renewed */
	uint64_t refusals;  /* GETs refused by the table (-EAGAIN) */
	uint64_t recalls;   /* recalls started */
	uint64_t returns;   /* DELEG_RETURNs of a held delegation */
	uint64_t timeouts;  /* recalls that ran out of recall_ms */
	uint64_t expired;   /* delegations forgotten at their expiry */
	uint64_t forced;    /* force expired for a cap */
	uint64_t unheard;   /* taken back at once: the holder could not hear the recall */
	uint64_t parked;    /* requests parked, ever */
	unsigned parked_now, held_now;
} mds_deleg_stats;
void mds_deleg_get_stats(mds_deleg *d, mds_deleg_stats *st);

#endif
