/* server.h — the daemons' frame server: an event-driven core on libevent.
 *
 * One listening socket; connection I/O runs on an event loop (libevent),
 * never blocking on a peer.  A complete, verified request frame is handed to
 * the handler on a worker thread of the server's pool (or on the loop itself
 * when the caller says its handler never blocks: opts.inline_handler).  The
 * handler owns the payload (it must free() it, now or later) and replies
 * with pfs_sconn_reply, at once or later from any thread: to reply later it
 * takes a reference with pfs_sconn_get and drops it with pfs_sconn_put after
 * replying.  A reply is offered to the socket without waiting when nothing
 * is queued ahead of it; what the socket does not take is queued on the
 * connection and written by the loop.  pfs_sconn_reply never waits for the
 * peer.
 *
 * Limits, so that a hostile or broken peer cannot stall the server:
 *   - at most max_conns connections; one more is answered with a short
 *     -EBUSY frame (or, before a handshake, just closed) and closed;
 *   - with a key (opts.auth), a connection must complete the handshake of
 *     common/auth.h within handshake_ms, and sends nothing else before;
 *     afterwards every frame's MAC is checked (bad MAC: the connection is
 *     closed) and every reply sealed;
 *   - a payload buffer is allocated as its bytes arrive (never on the
 *     header's promise alone); a frame must arrive within frame_ms of its
 *     first byte (slowloris);
 *   - per connection at most max_inflight requests in handlers and
 *     max_queued_bytes of replies not yet written: above either the server
 *     stops reading that connection until it drains (backpressure).  A
 *     request is in flight from its dispatch to its reply, so every request
 *     must get exactly one reply.  The replies expected from requests in
 *     flight count against max_queued_bytes too (estimated from the
 *     connection's recent reply sizes), so a peer that pipelines large
 *     READs and never reads holds about max_queued_bytes plus one reply;
 *   - a reply that cannot be written for send_timeout_ms, or a connection
 *     idle (no request in flight, nothing received) for idle_ms, is closed;
 *   - TCP keepalive on every connection.
 * Frames that fail to decode (bad magic, version, oversize) close the
 * connection after a best-effort error reply; the server goes on serving
 * others.  Requests of one connection may run concurrently on several
 * workers, so their replies may leave in another order (they carry req_id). */
#ifndef PFS_SERVER_H
#define PFS_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "common/proto.h"

typedef struct pfs_server pfs_server;
typedef struct pfs_sconn pfs_sconn;

typedef void (*pfs_server_handler)(void *ctx, pfs_sconn *c, const pfs_hdr *h,
				   uint8_t *payload);

/* Request bulk received without a copy (the OSS's WRITE data): the loop
 * reads a frame's first `head` payload bytes (every byte of a shorter
 * frame), asks split() how many trailing payload bytes are bulk, and moves
 * those from the socket into a pipe from pipe_get() with splice(2) (page
 * references, no copy through user space).  The whole frame is in before
 * its MAC is checked and before handler() sees it, as for any frame; a
 * frame is spliced only when the session's MAC does not cover its bulk
 * (integrity=header, common/auth.h), so every byte a MAC covers is still
 * checked in memory.  When no pipe can be had, or the pipe fills up before
 * the bulk is in (its slots are pages or parts of pages), the frame is
 * received into memory and goes to the ordinary handler as before.
 * Called on the loop (split, pipe_get, pipe_put) or wherever the frame's
 * handler runs (handler, pipe_put).  Not copied: must outlive the server. */
typedef struct pfs_server_bulk {
	size_t head;
	/* Trailing bulk bytes of frame h given its first head payload bytes;
	 * 0: receive it into memory.  At most payload_len - head. */
	size_t (*split)(void *ctx, const pfs_hdr *h, const uint8_t *head);
	/* An empty pipe (fd[0] read end, fd[1] write end, both non-blocking)
	 * that holds at least the bulk bytes split() asked for: 0 or -errno. */
	int (*pipe_get)(void *ctx, int fd[2]);
	/* Back from pipe_get; empty = 0: bytes may be left in it (close it). */
	void (*pipe_put)(void *ctx, int fd[2], int empty);
	/* A checked frame whose last bulk bytes are in the pipe fd (exactly
	 * those): payload holds the payload_len - bulk bytes before them.  As
	 * pfs_server_handler it owns payload; it owns the pipe too and gives
	 * it back with pipe_put. */
	void (*handler)(void *ctx, pfs_sconn *c, const pfs_hdr *h, uint8_t *payload,
			int fd[2], size_t bulk);
} pfs_server_bulk;

struct pfs_auth_key;

typedef struct pfs_server_opts {
	const char *host;        /* bind address; NULL/"" = all */
	uint16_t port;           /* 0 = any free port */
	unsigned max_conns;      /* default 1024 */
	uint32_t max_payload;    /* default PFS_MAX_PAYLOAD */
	const char *name;        /* for log lines, e.g. "mds" */
	/* Authentication: NULL = none (every peer has role PFS_ROLE_ANY; for
	 * tests and measurements only).  Not copied: must outlive the server. */
	const struct pfs_auth_key *auth;
	unsigned workers;        /* handler threads; default 8 */
	int inline_handler;      /* 1: the handler never blocks, call it on the loop */
	/* Per request, when inline_handler is 0: a non-NULL inline_if that
	 * returns 1 for a request runs that request on the loop (requests the
	 * caller knows never block, e.g. the MDS's read-only lookups: saves the
	 * hand-off to a worker, which costs 20-35 % of a metadata round trip on
	 * a busy 2-CPU node).  Called on the loop with the server's ctx. */
	int (*inline_if)(void *ctx, const pfs_hdr *h);
	/* Largest reply a request with this header can get (bytes with the
	 * header), from header fields only (opcode): the budget of queued
	 * reply bytes then counts each request in flight at its own bound
	 * instead of a running average that starts at the largest frame
	 * (which held a pipelining writer, whose replies are tiny, after a
	 * few requests).  NULL: the running average. */
	size_t (*reply_bound)(const pfs_hdr *h);
	/* Called on the loop at each of its ticks (at most a second apart
	 * while the process runs), with the server's ctx and the monotonic
	 * time in ms: a late tick tells the caller its process was stopped or
	 * starved for that long (the MDS then does not count that time as
	 * silence of its OSTs, mds/ostreg.h).  NULL: none. */
	void (*tick)(void *ctx, uint64_t now_ms);
	/* Spliced request bulk (above); NULL: every frame into memory. */
	const pfs_server_bulk *bulk;
	unsigned max_inflight;   /* per connection; default 64 */
	size_t max_queued_bytes; /* unsent reply bytes per connection; default 8 MiB */
	/* Timeouts: 0 = the default, negative = none. */
	int handshake_ms;        /* default 5000 */
	int frame_ms;            /* default 30000 */
	int send_timeout_ms;     /* default 30000 */
	int idle_ms;             /* default 600000 */
} pfs_server_opts;

int pfs_server_start(const pfs_server_opts *opts, pfs_server_handler fn, void *ctx,
		     pfs_server **out);
/* Process-wide defaults of the limits (max_conns, workers, max_inflight,
 * max_queued_bytes, handshake_ms, frame_ms, send_timeout_ms, idle_ms): a
 * field a caller leaves 0 takes the value set here when that is non-zero,
 * else the built-in default above.  How the daemons' configuration reaches
 * every server they start (mds_main.c, oss_main.c); call it before them.
 * Other fields of d are ignored. */
void pfs_server_set_defaults(const pfs_server_opts *d);
uint16_t pfs_server_port(const pfs_server *s);
/* Stop accepting, close every connection, drop requests not yet given to a
 * handler, wait for running handlers and free the server.  Handlers holding
 * references delay the final free of their connections, not this call:
 * their replies from then on return -EPIPE. */
void pfs_server_stop(pfs_server *s);

/* Send a reply to request h (opcode and req_id copied, PFS_F_REPLY set):
 * queued (payload and bulk copied) for the loop to write; never waits for
 * the peer.  0, -EPIPE once the connection is closed, -ENOMEM. */
int pfs_sconn_reply(pfs_sconn *c, const pfs_hdr *h, int status, const void *payload,
		    size_t len, const void *bulk, size_t bulk_len);
/* The same with an RCC credit grant in the reply header (oss data port). */
int pfs_sconn_reply_credit(pfs_sconn *c, const pfs_hdr *h, int status, uint32_t credit,
			   const void *payload, size_t len, const void *bulk,
			   size_t bulk_len);
/* The same with the bulk (bulk_len bytes) waiting in the pipe pipe_fd
 * (its read end), e.g. spliced there from a file: the pages go from the
 * pipe into the socket with splice(2), without a copy through user
 * space, as far as the socket takes them at once; the rest (or all of it
 * when other replies are queued ahead, or when the session's integrity
 * covers bulk bytes) is read from the pipe and queued like any reply.
 * On return the pipe is empty (whatever the result), so the caller may
 * reuse it; on -EPIPE (closed connection) the bulk is discarded.  With a
 * non-zero status the bulk is discarded and the reply has no payload.
 * The pipe must hold exactly bulk_len bytes, best non-blocking (a failure
 * part way then cannot wait on it).  Copies are made only when the
 * socket is full; the loop never reads the pipe. */
int pfs_sconn_reply_pipe(pfs_sconn *c, const pfs_hdr *h, int status, uint32_t credit,
			 const void *payload, size_t len, int pipe_fd, size_t bulk_len);
/* 1 when the session's MAC of a reply to h with len payload bytes would
 * cover bytes past the first `fields` (integrity=full, or an opcode whose
 * reply bulk is always covered): pfs_sconn_reply_pipe would then copy the
 * bulk out of the pipe, so a caller may as well not splice it. */
int pfs_sconn_reply_covers(pfs_sconn *c, const pfs_hdr *h, size_t fields, size_t len);
void pfs_sconn_get(pfs_sconn *c);
void pfs_sconn_put(pfs_sconn *c);
/* "ip:port" of the peer, for logs. */
const char *pfs_sconn_peer(const pfs_sconn *c);
/* The role the peer proved in the handshake (PFS_ROLE_* of common/auth.h);
 * PFS_ROLE_ANY on a server without authentication. */
unsigned pfs_sconn_role(const pfs_sconn *c);

/* Counters for tests, logs and metrics. */
typedef struct pfs_server_stats {
	unsigned conns;            /* open now */
	uint64_t accepted, refused_full, auth_failed, mac_failed, timed_out, bad_frames;
	uint64_t rx_alloc_bytes;   /* payload buffers of frames being received, now */
	uint64_t queued_bytes;     /* reply bytes not yet written, all connections, now */
	uint64_t queued_peak;      /* most reply bytes ever queued on one connection */
	uint64_t paused;           /* connections not read now (backpressure) */
	uint64_t bulk_spliced;     /* frames whose bulk went through a pipe (opts.bulk) */
	uint64_t bulk_undone;      /* ... of which the pipe filled: into memory instead */
} pfs_server_stats;
void pfs_server_get_stats(pfs_server *s, pfs_server_stats *out);

#endif
