/* dbsync.h — forcing the MDS database to disk (dbsync.c).  Part of the
 * namespace's API: mds/ns.h includes it.  The periodic sync thread of
 * db_sync=periodic runs from mds_ns_open to mds_ns_close. */
#ifndef MDS_DBSYNC_H
#define MDS_DBSYNC_H

typedef struct mds_ns mds_ns;

/* Flush committed transactions to disk (mdb_env_sync, forced). */
int mds_ns_sync(mds_ns *ns);

#endif
