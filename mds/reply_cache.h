/* reply_cache.h — the MDS's reply cache: the replies of recent requests,
 * keyed by (client id, request id), so that a request a client sends again
 * after a lost reply (PFS_F_RESEND, common/rpc.h) gets its original reply
 * instead of running twice: a resent MKDIR that had succeeded answers with
 * its attributes, not -EEXIST; a resent UNLINK with success, not -ENOENT.
 * Lustre's reply reconstruction from last_rcvd is the model.
 *
 * Use, around one request's execution:
 *
 *	rc = mds_rc_begin(rc_, client, req, resend, &hit);
 *	  MDS_RC_RUN:    execute, then mds_rc_end(rc_, client, req, status, data, len)
 *	                 (or mds_rc_abandon if no reply will be recorded)
 *	  MDS_RC_CACHED: hit holds the original status and payload; answer with
 *	                 them and free with mds_rc_hit_free
 *	  MDS_RC_NOTRACK: not recorded (the table is disabled); just execute
 *
 * A resend that arrives while its original still runs (the connection
 * broke, the handler did not) waits for the original's reply, up to
 * wait_ms, then runs itself (-EBUSY if the original is still running).
 * Every request is recorded (not only resends): the first send cannot
 * know that its reply will be lost.
 *
 * Bounds: per client the last per_client replies (older ones are dropped:
 * a client has at most as many requests outstanding as its connections,
 * far fewer than per_client); at most max_clients clients, the least
 * recently seen dropped first; replies larger than max_reply bytes are
 * recorded by status only and a resend of one re-executes (only READDIR-
 * sized replies, which are idempotent anyway).
 *
 * Lifetime: in memory.  It survives a client's reconnects (the key is the
 * client id, not the connection) but not an MDS restart; the namespace
 * mutations also store their reply in their own transaction
 * (mds/reply_log.h), which answers a resend after a restart (see
 * mds/README.md "Recovery").
 *
 * Thread-safe; no global state. */
#ifndef MDS_REPLY_CACHE_H
#define MDS_REPLY_CACHE_H

#include <stddef.h>
#include <stdint.h>

typedef struct mds_rcache mds_rcache;

typedef struct mds_rcache_opts {
	unsigned per_client;  /* replies kept per client; default 256 */
	unsigned max_clients; /* clients tracked; default 4096 */
	size_t max_reply;     /* largest payload kept; default 64 KiB */
	int wait_ms;          /* a resend waits for its running original; default 30000 */
} mds_rcache_opts;

/* A cached reply, as mds_rc_begin returns it. */
typedef struct mds_rc_hit {
	int status;
	uint8_t *data; /* malloc'd copy (NULL when len == 0) */
	size_t len;
} mds_rc_hit;

enum { MDS_RC_RUN = 0, MDS_RC_CACHED = 1, MDS_RC_NOTRACK = 2 };

typedef struct mds_rcache_stats {
	uint64_t recorded, hits, waits, evicted, reexec;
	unsigned clients;
} mds_rcache_stats;

int mds_rc_create(const mds_rcache_opts *opts, mds_rcache **out);
void mds_rc_destroy(mds_rcache *c);
/* See above.  resend: the request carries PFS_F_RESEND (a first send never
 * waits or hits, so a client reusing request ids after a restart of its
 * own - new client id anyway - cannot get a stale reply).  Returns
 * MDS_RC_RUN, MDS_RC_CACHED, MDS_RC_NOTRACK, or -EBUSY (resend of a
 * request still running after wait_ms: answer -EBUSY, the client resends). */
int mds_rc_begin(mds_rcache *c, uint64_t client, uint64_t req, int resend, mds_rc_hit *hit);
/* Record the reply of a request begun with MDS_RC_RUN and wake resends
 * waiting for it.  A copy of data is kept (status only if len > max_reply). */
void mds_rc_end(mds_rcache *c, uint64_t client, uint64_t req, int status, const void *data,
		size_t len);
/* Forget a request begun with MDS_RC_RUN whose reply is not recorded (it
 * will be answered later, elsewhere); waiting resends then run. */
void mds_rc_abandon(mds_rcache *c, uint64_t client, uint64_t req);
void mds_rc_hit_free(mds_rc_hit *hit);
void mds_rc_stats(mds_rcache *c, mds_rcache_stats *out);

#endif
