/* destroy_log.h — the object destroy log of the MDS (destroy_log.c): what
 * the destroyer (mds/destroy.h) must remove from the OSSes.  Part of the
 * namespace's API: mds/ns.h includes it. */
#ifndef MDS_DESTROY_LOG_H
#define MDS_DESTROY_LOG_H

#include <stddef.h>
#include <stdint.h>

#include "common/layout.h"

typedef struct mds_ns mds_ns;

#define MDS_DESTROY_MAX PFS_MAX_STRIPES

/* Called (outside any transaction) once records appended by a commit are
 * durable (at the commit in db_sync=full and none, after the next sync in
 * periodic mode); the destroyer uses it to wake up.  fn may be NULL. */
void mds_ns_set_destroy_notify(mds_ns *ns, void (*fn)(void *arg), void *arg);
/* The first record with seq > after: *seq, objects in st[] (MDS_DESTROY_MAX
 * room), count in *n.  -ENOENT when there is none. */
int mds_ns_destroy_next(mds_ns *ns, uint64_t after, uint64_t *seq, pfs_stripe *st,
			uint32_t *n);
/* The same, but only a record whose transaction is known to be on disk,
 * so no object goes before the unlink that logged it is durable:
 * -EAGAIN when the next record is not durable yet (db_sync=periodic: the
 * notify hook fires after the sync that makes it so; db_sync=none syncs
 * here first, one sync for the whole batch logged so far). */
int mds_ns_destroy_next_durable(mds_ns *ns, uint64_t after, uint64_t *seq, pfs_stripe *st,
				uint32_t *n);
/* Remove record seq once its objects are gone (missing is fine). */
int mds_ns_destroy_done(mds_ns *ns, uint64_t seq);
/* Remove the records seqs[0..n) in one transaction (one commit for a
 * round of the destroyer, not one per record); a missing one is skipped. */
int mds_ns_destroy_done_many(mds_ns *ns, const uint64_t *seqs, size_t n);
/* Number of records in the log. */
int mds_ns_destroy_count(mds_ns *ns, uint64_t *n);

#endif
