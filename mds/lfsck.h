/* lfsck.h — the orphan object scrubber of the MDS (mds/lfsck.c), the
 * `pfsadmin lfsck` of PFS_OP_MDS_LFSCK and the run after a restart.
 *
 * For every OST that is up it lists the objects (OSS_LIST_OBJECTS on the
 * control port), then, in one read transaction begun after the listings,
 * collects every object a layout references (every inode, orphans
 * included: mds/orphan.h) or the destroy log still holds.  An object
 * listed but referenced by nothing is an orphan: a file's layout is
 * committed before a client can write its objects, and object ids are
 * never reused, so an object that existed before the snapshot and is not
 * in it can only be a leftover (a stale client's write after a destroy, a
 * power loss that brought a destroyed object back, objects of a crashed
 * tool).  That ordering is the scrubber's grace period: an object created
 * while it runs is never judged.  Orphans are appended to the destroy log
 * (the destroyer removes them), or only counted with dry_run. */
#ifndef MDS_LFSCK_H
#define MDS_LFSCK_H

#include <stdint.h>

#include "mds/ns.h"

struct pfs_auth_key;

typedef struct mds_lfsck_ost {
	uint32_t ost;
	uint8_t reached;     /* 0: down or did not answer (nothing judged) */
	uint64_t listed;     /* objects on the OST */
	uint64_t orphans;    /* of them referenced by nothing */
	uint64_t queued;     /* orphans given to the destroy log (0 with dry_run) */
} mds_lfsck_ost;

typedef struct mds_lfsck_report {
	uint32_t n;
	mds_lfsck_ost *ost;  /* malloc'd; mds_lfsck_report_free */
	uint64_t referenced; /* objects referenced by layouts and the destroy log */
} mds_lfsck_report;

/* One scan (auth: the MDS key for the OSS control ports, NULL = none). */
int mds_lfsck_run(mds_ns *ns, const struct pfs_auth_key *auth, int dry_run,
		  mds_lfsck_report *out);
void mds_lfsck_report_free(mds_lfsck_report *r);
/* The same over a caller's list of (ost, object) instead of the network,
 * for tests: listed[i] objects on OST osts[i]. */
int mds_lfsck_judge(mds_ns *ns, uint32_t ost, const uint64_t *listed, uint64_t n,
		    int dry_run, uint64_t *orphans, uint64_t *queued);

/* A thread that runs mds_lfsck_run once, delay_ms after it starts (after
 * the restart's orphan hold and the OSSes' first heartbeats). */
typedef struct mds_lfsck_timer mds_lfsck_timer;
int mds_lfsck_timer_start(mds_ns *ns, const struct pfs_auth_key *auth, unsigned delay_ms,
			  mds_lfsck_timer **out);
void mds_lfsck_timer_stop(mds_lfsck_timer *t);

#endif
