/* osc.h — object storage client: striped reads and writes over the OSSes.
 *
 * Maps OST indexes to OSS data addresses with PFS_OP_MDS_OST_LIST (cached;
 * refreshed when an index not in the cache appears) and keeps one
 * pfs_rpc_pool and one cli_credit (client/credit.h) per OSS address.  A
 * read or write is split by the file's layout (pfs_layout_map) into
 * per-object pieces; the pieces are all put on the wire with pfs_rpc_start
 * before any reply is collected with pfs_rpc_finish, so different OSSes
 * serve them concurrently.
 *
 * Identity: every request to an OSS carries the caller's tag (job id, uid,
 * gid: what the OSS's QoS rules classify by) and, in the credit field, the
 * credits this client asks of that OSS (RCC's cnr).
 *
 * Flow control (RCC): a piece starts only while the client has fewer RPCs
 * in flight to that OSS than the OSS's last grant (credit.h); otherwise it
 * waits for a reply to free a credit.  A reply's non-zero credit replaces
 * the grant.
 *
 * Deadlock rule: a started piece holds one credit and one pooled connection
 * of its OSS until its finish.  A thread that waited for a second one of an
 * OSS while holding one (or for OSS B while holding A, with another thread
 * doing the reverse) could deadlock once credits or pools run out.  So one
 * I/O runs in waves: in each wave at most one piece per OSS is started, in
 * ascending OSS order (a global lock order), then all of the wave's replies
 * are collected.  The common layouts (one OST per OSS, 1 MiB stripes, 1 MiB
 * FUSE requests) need a single wave; pieces that land on several OSTs of
 * one OSS are serialised, which is the honest cost of the rule.
 *
 * Why waiting for a credit inside a wave cannot deadlock: order all
 * resources as (OSS index, then credit before connection).  Within a wave a
 * thread takes, per OSS in ascending order, a credit and then a connection,
 * and takes nothing else until it has collected every reply of the wave and
 * given everything back; busy backoffs and OST-map refreshes happen between
 * waves, holding nothing.  So a thread only ever waits for a resource above
 * every resource it holds.  Follow "waits for a resource held by" edges from
 * any waiting thread: each step goes to a strictly higher resource, so no
 * chain closes into a cycle, and the last thread of a chain waits for
 * nothing on this client: it is collecting replies, which come back
 * without any client-side resource (or fail after the RPC timeout), and it
 * then frees what it held.  Credits are never 0 (a grant of 0 keeps the
 * old credit), so a credit someone waits for always has a holder that will
 * give it back; a grant that shrinks below the RPCs in flight only makes
 * waiters wait for more of those replies.
 *
 * Busy and timeouts: an OSS answers -EBUSY when its queues are full, and
 * -EAGAIN after a restart until the MDS has answered its REGISTER (it does
 * not know its OST indices yet); nothing was done.  The piece is sent again after a backoff (5 ms doubling
 * to 500 ms, with jitter; cli_osc_backoff_ms) in a later wave, never
 * holding a credit while it waits.  One attempt of a piece (busy answers
 * and backoffs included) lasts at most the OSS RPC timeout T; a piece
 * refused for T counts as timed out.  A piece that timed out, or whose
 * connection broke after it was sent, is sent again (every OSS request is
 * idempotent: a write puts the same bytes at the same offset, a read reads,
 * a truncate sets a size, a sync syncs) until the pool's recovery window
 * (the larger of pfs_rpc_opts.retry_ms and recovery_ms) since the I/O
 * began has passed; a piece whose OST
 * moved (after a fresh OST list from the MDS) is sent to the new address.
 * So the application never sees EBUSY: it sees its I/O take longer, and
 * after the recovery window EIO (the cause is logged).
 *
 * A dead OSS: an OSS whose last request failed in transport (connection
 * refused or broken, no reply) is "in recovery" until one of its requests
 * gets a reply.  While it is, at most recovery_waiters calls (I/Os with a
 * piece on it) may wait for it at once; a further call fails at once with
 * EIO instead of taking one more FUSE worker, so a dead or stopped OSS
 * holds at most recovery_waiters of the mount's max_threads workers and
 * requests to the MDS and to other OSSes are still served.  Calls that
 * wait are bounded by the recovery window and get EIO after it.
 *
 * Capabilities (common/capa.h): the *_caps calls take the file's set
 * (cli_caps of client/mdc.h, borrowed for the call; NULL = none) and send
 * each object's capability after the fixed request fields; an OSS that
 * checks them answers -EACCES without one and -EKEYEXPIRED for an expired
 * one, which the caller (fuse_ops.c) answers by renewing the set with
 * GETLAYOUT and trying once more.  The plain calls send none (a cluster
 * without authentication, tests).
 *
 * Reads: the range is clipped to the file size; bytes a short object read or
 * a missing object (-ENOENT) does not return are zeros (holes).
 *
 * Thread-safe: any number of threads may call into one cli_osc. */
#ifndef CLI_OSC_H
#define CLI_OSC_H

#include <stddef.h>
#include <stdint.h>

#include "client/credit.h"
#include "client/mdc.h"
#include "common/layout.h"
#include "common/rpc.h"

typedef struct cli_osc cli_osc;

typedef struct cli_osc_opts {
	pfs_rpc_opts rpc;  /* every OSS pool; rpc.timeout_ms is T (see mount.pfs:
	                      Eq. (6) of lustre-rcc-congestion) */
	unsigned credits;  /* credit per OSS before its first grant (0 = rpc.max_conns) */
	const cli_credit_policy *policy; /* per-job slots, ASCAR (credit.h); NULL =
	                                    defaults; must outlive the osc */
	/* Calls that may wait at once for an OSS in recovery (see "A dead
	 * OSS" above); 0 = 16. */
	unsigned recovery_waiters;
} cli_osc_opts;

/* mdc is borrowed (for OST_LIST) and must outlive the osc; opts is copied.
 * Returns 0, -EINVAL or -ENOMEM. */
int cli_osc_create(cli_mdc *mdc, const cli_osc_opts *opts, cli_osc **out);
/* No call may be in progress. */
void cli_osc_destroy(cli_osc *o);

/* In every call below, tag says who the I/O is for (job, uid, gid; its
 * credit field is ignored: the osc asks for credits itself).  tag and
 * tag->job are borrowed for the call. */

/* Read up to len bytes at file offset off of a file of file_size bytes into
 * buf.  *got = bytes valid in buf (len clipped at file_size; 0 at or past
 * EOF).  Returns 0 or the first error of any piece. */
int cli_osc_read(cli_osc *o, const pfs_rpc_tag *tag, const pfs_layout *l, uint64_t file_size,
		 uint64_t off, size_t len, void *buf, size_t *got);
/* An empty pipe to read into (cli_osc_read_pipe_caps): its two ends and
 * the bytes it can hold. */
typedef struct cli_osc_pipe {
	int r, w;
	size_t cap;
} cli_osc_pipe;
/* cli_osc_read_caps into the pipe pp instead of memory, for a range that is
 * one READ (one object, at most PFS_MAX_IO bytes, at most pp->cap): the
 * reply's payload is spliced from the OSS's socket into the pipe, never
 * copied through this process (its pages can then be spliced on to
 * /dev/fuse: mount.pfs's readahead).  Holes are written as zeros.  0 and
 * *got = the bytes now in the pipe (len clipped at file_size); -EXDEV:
 * nothing is in the pipe, read with cli_osc_read_caps (the range is more
 * than one READ, or the replies' payloads cannot go into a pipe: a session
 * whose MAC covers READ data, integrity = full; the first such reply is
 * copied into the pipe, the calls after it return -EXDEV at once); other
 * errors as cli_osc_read_caps (the pipe is emptied). */
int cli_osc_read_pipe_caps(cli_osc *o, const pfs_rpc_tag *tag, const pfs_layout *l,
			   const cli_caps *caps, uint64_t file_size, uint64_t off, size_t len,
			   const cli_osc_pipe *pp, size_t *got);
/* Write len bytes at off.  Returns 0 when every piece was fully written, else
 * the first error (-EIO for a short write). */
int cli_osc_write(cli_osc *o, const pfs_rpc_tag *tag, const pfs_layout *l, uint64_t off,
		  size_t len, const void *buf);
/* The same for data waiting in a pipe (a FUSE WRITE received with splice):
 * when [off, off+len) lies in one object, the data goes from the pipe to
 * the OSS's socket without a copy through this process: each send
 * duplicates the pipe's first len bytes with tee(2) into a scratch pipe and
 * splices from that.  The pipe itself is never consumed, so a send refused
 * as busy or lost can be made again; the caller drains the len bytes after
 * a 0 return.  Returns -EXDEV when the write spans objects, the OST is
 * unknown or the data cannot be duplicated (the caller then reads the pipe,
 * still full, and uses cli_osc_write). */
int cli_osc_write_pipe(cli_osc *o, const pfs_rpc_tag *tag, const pfs_layout *l, uint64_t off,
		       size_t len, int pipe_fd);
/* One extent of cli_osc_writev_caps: len bytes of buf at file offset off. */
typedef struct cli_osc_iov {
	uint64_t off;
	size_t len;
	const void *buf;
} cli_osc_iov;
/* Write n extents (ascending, disjoint) that all lie in one stripe object,
 * at most PFS_MAX_IO bytes together, with PFS_OP_OSS_WRITEV: one request
 * per PFS_WRITEV_MAX extents instead of one per extent (mount.pfs's
 * write-back flushes).  One extent, extents outside one object, or an OSS
 * that does not serve WRITEV (-EOPNOTSUPP, -EACCES): plain WRITEs.  0 or
 * the first error. */
int cli_osc_writev_caps(cli_osc *o, const pfs_rpc_tag *tag, const pfs_layout *l,
			const cli_caps *caps, const cli_osc_iov *v, size_t n);
/* Set every object to the size it has in a file of size bytes
 * (pfs_layout_object_size); objects are created or cut as needed. */
int cli_osc_truncate(cli_osc *o, const pfs_rpc_tag *tag, const pfs_layout *l, uint64_t size);
/* PFS_OP_OSS_SYNC on every object (missing objects have nothing to sync). */
int cli_osc_sync(cli_osc *o, const pfs_rpc_tag *tag, const pfs_layout *l);

/* The same five calls with the file's capabilities. */
int cli_osc_read_caps(cli_osc *o, const pfs_rpc_tag *tag, const pfs_layout *l,
		      const cli_caps *caps, uint64_t file_size, uint64_t off, size_t len,
		      void *buf, size_t *got);
int cli_osc_write_caps(cli_osc *o, const pfs_rpc_tag *tag, const pfs_layout *l,
		       const cli_caps *caps, uint64_t off, size_t len, const void *buf);
int cli_osc_write_pipe_caps(cli_osc *o, const pfs_rpc_tag *tag, const pfs_layout *l,
			    const cli_caps *caps, uint64_t off, size_t len, int pipe_fd);
int cli_osc_truncate_caps(cli_osc *o, const pfs_rpc_tag *tag, const pfs_layout *l,
			  const cli_caps *caps, uint64_t size);
int cli_osc_sync_caps(cli_osc *o, const pfs_rpc_tag *tag, const pfs_layout *l,
		      const cli_caps *caps);
/* PFS_OP_OSS_STAT on every object, in parallel: *blocks = the 512-byte
 * blocks they use together (a missing object - never written - counts 0),
 * what st_blocks reports once the MDS has it (SETSIZE at close/fsync).
 * Any right on the object will do (a file opened write-only too). */
int cli_osc_stat_caps(cli_osc *o, const pfs_rpc_tag *tag, const pfs_layout *l,
		      const cli_caps *caps, uint64_t *blocks);
/* Glimpse (issue 8, Lustre's size glimpse): OSS_STAT of every object, in
 * parallel, and *size = the file size they hold
 * (cli_osc_size_from_objects), *blocks (may be NULL) = the blocks they
 * use.  For a file whose writer may have died holding a size it never
 * pushed (PFS_ATTR_SIZE_STALE).  0 or -errno. */
int cli_osc_glimpse_caps(cli_osc *o, const pfs_rpc_tag *tag, const pfs_layout *l,
			 const cli_caps *caps, uint64_t *size, uint64_t *blocks);

/* Write grant (PFS_OP_OSS_GRANT, oss/grant.h) on OST ost: give back
 * giveback bytes, ask for want more; *granted = this client's grant there
 * now.  One attempt (never resent), within the OSS's credit.  0 or -errno. */
int cli_osc_grant(cli_osc *o, const pfs_rpc_tag *tag, uint32_t ost, uint64_t want,
		  uint64_t giveback, uint64_t *granted);

/* Pure helpers, exposed for unit tests. */

/* The file size stripe objects of sizes[0..stripe_count) make: the largest
 * file offset one past an object's last byte (0-size objects: none). */
uint64_t cli_osc_size_from_objects(const pfs_layout *l, const uint64_t *sizes);

/* pfs_layout_map, with every extent also cut to at most max_piece bytes (the
 * largest payload one RPC may carry).  Same return rule as pfs_layout_map. */
size_t cli_osc_plan(const pfs_layout *l, uint64_t off, uint64_t len, uint64_t max_piece,
		    pfs_extent *out, size_t max);
/* How many bytes of [off, off+len) lie below file_size. */
size_t cli_osc_clip(uint64_t off, size_t len, uint64_t file_size);
/* Zero the part of extent e of buf that a reply of got bytes did not fill. */
void cli_osc_zero_tail(void *buf, const pfs_extent *e, size_t got);
/* Backoff before resending after the n-th busy answer in a row (n >= 0):
 * b = min(CLI_OSC_BUSY_MIN_MS << n, CLI_OSC_BUSY_MAX_MS), then "equal
 * jitter": b/2 + r mod (b/2 + 1), with r a random number.  Milliseconds. */
#define CLI_OSC_BUSY_MIN_MS 5u
#define CLI_OSC_BUSY_MAX_MS 500u
unsigned cli_osc_backoff_ms(unsigned n, uint32_t r);

/* Counters for tests: pieces sent per wave so far, waves so far. */
void cli_osc_counters(cli_osc *o, uint64_t *pieces, uint64_t *waves, uint64_t *refreshes);

/* Flow-control statistics, for tests and benchmarks. */
typedef struct cli_osc_stats {
	uint64_t pieces, waves, refreshes; /* as cli_osc_counters */
	uint64_t credit_waits;  /* pieces that waited for a credit */
	uint64_t busy_retries;  /* pieces sent again after -EBUSY */
	uint64_t resends;       /* pieces sent again after a timeout or lost reply */
	uint64_t tee_fallbacks; /* cli_osc_write_pipe calls that returned -EXDEV
	                           because the data could not be duplicated */
	uint64_t read_piped;    /* READ replies spliced into a pipe */
	uint64_t read_pipe_fallbacks; /* cli_osc_read_pipe_caps calls that
	                                 returned -EXDEV */
} cli_osc_stats;
void cli_osc_stats_get(cli_osc *o, cli_osc_stats *st);

/* One OSS as the client sees it. */
typedef struct cli_osc_oss_stats {
	char host[64];
	uint16_t port;
	uint32_t credit;       /* current grant */
	uint32_t inflight;     /* RPCs in flight now */
	uint32_t waiting;      /* pieces waiting for a credit now */
	uint32_t peak;         /* most RPCs ever in flight at once */
	uint64_t credit_waits;
	uint64_t credit_changes;
	uint64_t busy_retries;
	uint64_t resends;
} cli_osc_oss_stats;
/* Writes the first max OSSes known (in the osc's OSS order) to out; *n is
 * how many there are. */
void cli_osc_oss_stats_get(cli_osc *o, cli_osc_oss_stats *out, unsigned max, unsigned *n);

#endif
