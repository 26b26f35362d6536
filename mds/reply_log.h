/* reply_log.h — the reply records that survive an MDS restart (Lustre's
 * last_rcvd): the reply of a namespace mutation is written in the
 * operation's own LMDB transaction, so a request whose commit reached the
 * database but whose reply never left the MDS (it died in between) gets
 * that reply when the client resends it after the restart, instead of
 * running again (a mkdir answering -EEXIST, an unlink -ENOENT).  The
 * in-memory reply cache (mds/reply_cache.h) answers every other resend;
 * this is consulted only when a resend misses it.
 *
 * Use (the dispatcher, mds/server.c), on the thread that runs the request:
 *
 *	mds_ns_reply r = { ns, client, req, opcode, &attr, layout_or_NULL };
 *	mds_ns_reply_set(&r);
 *	rc = mds_ns_mkdir(ns, ..., &attr);   (fills attr before it commits)
 *	mds_ns_reply_set(NULL);
 *
 * While set, the first write transaction of ns that this thread commits
 * successfully (mds_nsi_wend) also stores the record { opcode, *attr if
 * attr, *lay if lay } under (client, req) and sets r.done; a transaction
 * that fails stores nothing (a resend runs again and fails the same way).
 * The operations fill their output structures before the commit, so the
 * record is the reply the request was about to send.
 *
 * Bounds: per client the records of the last MDS_REPLY_LOG_WINDOW request
 * ids (a client's ids grow by one per request; older records are pruned in
 * the same transaction), and records older than MDS_REPLY_LOG_MAX_AGE_S
 * are dropped when the database is opened (a client stops resending after
 * its recovery window, minutes). */
#ifndef MDS_REPLY_LOG_H
#define MDS_REPLY_LOG_H

#include <stdint.h>

#include "common/layout.h"
#include "common/msg.h"

typedef struct mds_ns mds_ns;

#define MDS_REPLY_LOG_WINDOW 128u
#define MDS_REPLY_LOG_MAX_AGE_S (24u * 3600u)

typedef struct mds_ns_reply {
	mds_ns *ns;             /* only this namespace's commits record */
	uint64_t client, req;
	uint16_t opcode;
	const pfs_attr *attr;   /* NULL: the reply carries no attributes */
	const pfs_layout *lay;  /* NULL: no layout */
	int done;               /* set when a commit stored the record */
} mds_ns_reply;

/* Set (r) or clear (NULL) this thread's reply context. */
void mds_ns_reply_set(mds_ns_reply *r);

/* A stored record, as mds_ns_reply_get returns it. */
typedef struct mds_ns_reply_rec {
	uint16_t opcode;
	int has_attr, has_lay;
	pfs_attr attr;
	pfs_layout lay;
} mds_ns_reply_rec;

/* The record of (client, req): 0, -ENOENT if none, or -errno (-EIO for a
 * record that does not decode). */
int mds_ns_reply_get(mds_ns *ns, uint64_t client, uint64_t req, mds_ns_reply_rec *out);

#endif
