/* dbsync.h — forcing the MDS database to disk (dbsync.c) and what is known
 * about it.  Part of the namespace's API: mds/ns.h includes it.  The
 * periodic sync thread of db_sync=periodic runs from mds_ns_open to
 * mds_ns_close. */
#ifndef MDS_DBSYNC_H
#define MDS_DBSYNC_H

#include <stdint.h>

typedef struct mds_ns mds_ns;

/* Flush committed transactions to disk (mdb_env_sync, forced).  0, or the
 * error (also logged with the file and counted in mds_ns_sync_stats). */
int mds_ns_sync(mds_ns *ns);

/* The sync state, for health checks and metrics. */
typedef struct mds_sync_stats {
	unsigned long syncs;   /* successful mdb_env_sync calls since open */
	unsigned long errors;  /* failed ones since open */
	int last_error;        /* -errno of the last failure, 0 if none */
	int failing;           /* the last sync failed (a later success clears it) */
	uint64_t durable_txn;  /* LMDB transactions up to this id are on disk */
	uint64_t last_txn;     /* the last committed transaction */
} mds_sync_stats;

void mds_ns_sync_stats(mds_ns *ns, mds_sync_stats *out);

#endif
