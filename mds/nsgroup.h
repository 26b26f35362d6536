/* nsgroup.h — group commit of namespace mutations: one thread (the
 * committer) runs the mutations queued by the server, as many as are
 * waiting (up to a batch), each in its own LMDB child transaction of one
 * write transaction, then commits that transaction once and only then
 * lets each request answer.
 *
 * Why: every LMDB commit writes the pages of every B-tree path it touched
 * (20-26 pages for a create) and the meta page, and every request handed
 * to a worker of the frame server costs a wake-up; concurrent creates and
 * unlinks of one directory share most of those pages.  The committer takes
 * a whole queue with one wake-up and writes the shared pages once.
 *
 * What each member keeps (mds/README.md "Group commit"): a member that
 * fails is undone alone (its child is aborted); its reply log record goes
 * in with its own child; ids it reserved are synced after the one commit
 * and before any reply, as a lone transaction's are (mds_nsi_wend); the
 * destroyer is woken after the commit as for a lone transaction.  No
 * member is answered before the commit: a commit (or id sync) failure is
 * the error of every member that had succeeded.
 *
 * Use: embed an mds_nsgroup_req in the request, set prep (optional: called
 * on the committer before the group begins), run (called on the committer
 * inside the group: do the mutation, return its status) and done (called
 * on the committer after the commit with the final status: answer, free),
 * and submit it.  run holds the database's writer lock: it must not block
 * on anything but the database, must not take a lock that another thread
 * holds while it begins a write transaction (that belongs in prep), must
 * not begin a write transaction while one of its own is open, and may not
 * sync (a sync inside the group would not cover the group).  No global
 * state.
 *
 * Inline runs (issue 11, unlink): a request whose submitter sets inline_ok
 * runs on the submitting thread itself (prep, run and done before submit
 * returns), as a batch of one, when the committer sleeps with nothing
 * queued, no other request runs inline, the last batch ended at least the
 * inline gap before (default MDS_NSGROUP_INLINE_GAP_US), and no batch of
 * the last second was slow (took more than MDS_NSGROUP_SLOW_US and its
 * thread slept meanwhile: not only preempted on a busy CPU); never
 * with db_sync=full (every commit fsyncs).  A lone mutation then costs no
 * hand-off to the committer (a wake-up, on this 2-CPU VM often another
 * CPU's), while a submitter that comes back at once (a burst: requests
 * that waited in its socket while it ran one) hands them to the committer,
 * which groups them as before, and a slow disk (dirty page throttling, a
 * sync) stalls the committer rather than the submitter.  The submitter
 * (the MDS's event loop) then waits for the writer lock like any writer:
 * it must hold no lock that a writer-lock holder may wait for.  Which
 * requests are allowed is the submitter's choice: mds/server.c lets
 * UNLINK and RMDIR (which never reserve ids, so never sync). */
#ifndef MDS_NSGROUP_H
#define MDS_NSGROUP_H

#include <stdint.h>

#include "mds/ns.h"

typedef struct mds_nsgroup mds_nsgroup;

typedef struct mds_nsgroup_req {
	struct mds_nsgroup_req *next; /* the committer's */
	/* Optional, before the group begins (no transaction open): what takes
	 * locks that other threads hold while they wait for the writer lock
	 * the group holds.  0: go on to run; 1: skip run, the status is
	 * r->status. */
	int (*prep)(struct mds_nsgroup_req *r);
	int (*run)(struct mds_nsgroup_req *r);
	void (*done)(struct mds_nsgroup_req *r, int status);
	int inline_ok;                /* the submitter's: may run inline (above) */
	/* the submitter's: a group even when alone (a member that begins many
	 * write transactions, UNLINK_BATCH: one commit rather than one each) */
	int group_alone;
	int status, skip;             /* the committer's */
} mds_nsgroup_req;

#define MDS_NSGROUP_INLINE_GAP_US 20 /* a request sooner after a batch's end: a burst */
#define MDS_NSGROUP_SLOW_US 10000    /* a batch this long keeps inline runs off for 1 s */

typedef struct mds_nsgroup_stats {
	uint64_t batches;  /* batches run (a batch of one without a group) */
	uint64_t grouped;  /* batches run as one group */
	uint64_t requests; /* members run */
	uint64_t failed;   /* groups whose begin, commit or id sync failed */
	unsigned largest;  /* most members in one group */
	uint64_t inlined;  /* batches (of one) run on the submitter's thread */
} mds_nsgroup_stats;

/* max_batch: most members per group (0 = 32). */
int mds_nsgroup_start(mds_ns *ns, unsigned max_batch, mds_nsgroup **out);
/* Queue r (run and done set); -ESHUTDOWN once stopping (r untouched). */
int mds_nsgroup_submit(mds_nsgroup *g, mds_nsgroup_req *r);
/* Run what is queued, stop the committer, free g.  Later submits: never
 * (the caller stops its sources first). */
void mds_nsgroup_stop(mds_nsgroup *g);
void mds_nsgroup_get_stats(mds_nsgroup *g, mds_nsgroup_stats *out);
/* The inline gap in microseconds (< 0: no inline runs at all). */
void mds_nsgroup_set_inline_gap(mds_nsgroup *g, int64_t gap_us);

#endif
