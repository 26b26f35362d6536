/* destroy.h — the object destroyer: a thread that drains the MDS destroy log.
 *
 * For each record (the objects of a file whose last link went away) it sends
 * PFS_OP_OSS_DESTROY to the control port of each object's OSS and deletes
 * the record once every object is gone (a missing object counts as gone).
 * Records whose OSS is down or unreachable stay and are retried on the next
 * pass.  Passes run when woken (new records: mds_ns's destroy notify is
 * wired to mds_destroyer_wake) and every interval_ms otherwise. */
#ifndef MDS_DESTROY_H
#define MDS_DESTROY_H

#include "mds/ns.h"

typedef struct mds_destroyer mds_destroyer;

/* Start the thread on ns (borrowed: must outlive the destroyer) and install
 * the wake-up notify on ns.  interval_ms 0 = 1000. */
int mds_destroyer_start(mds_ns *ns, unsigned interval_ms, mds_destroyer **out);
/* The same with the MDS key for the OSS control ports (common/auth.h;
 * borrowed, must outlive the destroyer; NULL = no authentication). */
struct pfs_auth_key;
int mds_destroyer_start_auth(mds_ns *ns, unsigned interval_ms, const struct pfs_auth_key *auth,
			     mds_destroyer **out);
/* Ask for a pass now.  Thread-safe, never blocks on the network. */
void mds_destroyer_wake(mds_destroyer *d);
/* Number of objects confirmed destroyed since start (for tests and stats). */
unsigned long mds_destroyer_destroyed(mds_destroyer *d);
/* Call after the request server is stopped (no more namespace calls that
 * could notify).  Removes the notify, stops the thread (waits for an RPC in flight, at most
 * its 5 s timeout), close the connections and free d.  NULL is a no-op. */
void mds_destroyer_stop(mds_destroyer *d);

#endif
