/* nsdb.h — opening and closing the MDS's namespace database (nsdb.c), one
 * LMDB environment that holds the namespace, the OST registry, the destroy
 * log and the key-value tables.  Part of the namespace's API: mds/ns.h
 * includes it. */
#ifndef MDS_NSDB_H
#define MDS_NSDB_H

#include <stdint.h>

typedef struct mds_ns mds_ns;

/* What each mode promises after a machine crash: mds/README.md. */
#define MDS_SYNC_PERIODIC 0 /* MDB_NOSYNC + mdb_env_sync every sync_interval_ms */
#define MDS_SYNC_FULL 1     /* fsync on every commit ("always") */
#define MDS_SYNC_NONE 2     /* MDB_NOSYNC, no thread: syncs only when asked */

#define MDS_ID_BATCH_DEFAULT 1024u

typedef struct mds_ns_opts {
	const char *path;              /* LMDB directory (created if missing) */
	int sync_mode;                 /* MDS_SYNC_* */
	unsigned sync_interval_ms;     /* periodic mode; default 1000 */
	uint32_t default_stripe_size;  /* 0 = PFS_DEFAULT_STRIPE_SIZE */
	uint32_t default_stripe_count; /* 0 = min(4, OSTs up) */
	unsigned heartbeat_timeout_ms; /* OST "up" window; default 10000 */
	uint64_t mapsize;              /* 0 = 64 GiB (sparse) */
	unsigned id_batch;             /* inode numbers / object ids reserved per
					* synced transaction; 0 = MDS_ID_BATCH_DEFAULT */
	/* Monotonic clock in ms for OST liveness; NULL = CLOCK_MONOTONIC.
	 * Tests set it to drive time. */
	uint64_t (*clock_ms)(void *arg);
	void *clock_arg;
} mds_ns_opts;

/* Open (creating the root on first use) / close.  On error *out is untouched
 * and everything is released.  Open syncs what it finds, so all of it is
 * durable.  close stops the sync thread, syncs and frees; no call may be in
 * progress; it returns the final sync's error (logged), 0 for NULL. */
int mds_ns_open(const mds_ns_opts *opts, mds_ns **out);
int mds_ns_close(mds_ns *ns);

#endif
