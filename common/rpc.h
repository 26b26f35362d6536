/* rpc.h — client side of the protocol: a pool of connections to one server.
 *
 * A pool holds up to max_conns blocking connections to host:port.  A call
 * borrows an idle connection (opening one if the pool is not full, waiting
 * otherwise), sends one request frame, reads one reply frame and gives the
 * connection back.  pfs_rpc_start/pfs_rpc_finish split a call in two so a
 * caller can put requests to several servers on the wire before waiting for
 * any reply (the striped data path does this).
 *
 * Failure rule: a transport error closes that connection.  When the request
 * could not be sent (connect refused, reset before sending), the pool
 * retries with backoff for up to its recovery window (the larger of
 * retry_ms and recovery_ms), which is how clients ride out a server
 * restart.  A request that was sent but got no reply (connection broken,
 * no reply within timeout_ms) is sent again by pfs_rpc_call within the same
 * window, as Lustre resends after a reconnect: with the same client_id and
 * req_id as the first send and PFS_F_RESEND in the header, so a server with
 * a reply cache (mds/reply_cache.h) answers a request it already executed
 * with its original reply instead of running it twice.  Servers without
 * one get only requests that are safe to run twice (OSS data: the same
 * bytes at the same offset); a caller whose request is neither passes
 * PFS_RPC_NO_RESEND.  pfs_rpc_start/finish never resend: their callers
 * (client/osc.c) resend idempotent pieces themselves.
 *
 * Interrupts: a thread may install a check (pfs_rpc_set_interrupt) that the
 * waits between attempts consult; when it says so the call returns -EINTR
 * (a FUSE request the kernel interrupted).  A send or receive in progress
 * is not cut short; it is bounded by timeout_ms.
 *
 * Errors: calls return the server's status or a transport error (-EPIPE,
 * -ECONNREFUSED, -ETIMEDOUT, ...), which admin tools print as such; a file
 * system must turn the latter into -EIO before an application sees them
 * (pfs_rpc_fs_err).
 *
 * Authentication: with opts.auth, every new connection first runs the
 * handshake of common/auth.h (pfs_auth_client, bounded by
 * handshake_timeout_ms) and every frame on it is sealed and checked.  A
 * refused handshake (-EACCES: wrong key or role) is not retried; a bad tag
 * on a reply (-EBADMSG) closes the connection like any transport error.
 *
 * Thread-safe: any number of threads may call into one pool. */
#ifndef PFS_RPC_H
#define PFS_RPC_H

#include <stddef.h>
#include <stdint.h>

#include "common/proto.h"

struct pfs_auth_key;
typedef struct pfs_rpc_pool pfs_rpc_pool;
typedef struct pfs_rpc_inflight pfs_rpc_inflight;

typedef struct pfs_rpc_opts {
	unsigned max_conns;   /* default 8 */
	int timeout_ms;       /* per-call send/receive timeout, default 60000 */
	int retry_ms;         /* how long to keep retrying a failed connect, default 30000 */
	/* The recovery window: how long a call keeps reconnecting and resending
	 * to a server that went away (Lustre's obd_timeout-based windows).
	 * 0 = retry_ms; the effective window is the larger of the two. */
	int recovery_ms;
	uint64_t client_id;   /* put in every header */
	/* Key for the handshake; NULL = no authentication.  Not copied: must
	 * outlive the pool. */
	const struct pfs_auth_key *auth;
	int handshake_timeout_ms; /* default 5000; at most timeout_ms */
} pfs_rpc_opts;

/* A reply: payload is data[0..len).  If the caller set buf/cap before the
 * call and the payload fits, it is read straight into buf (no copy).
 * Initialise a reply before first use: `pfs_rpc_reply r = { 0 };` or with
 * .buf/.cap set; buf and cap are read, everything else is output. */
typedef struct pfs_rpc_reply {
	pfs_hdr hdr;
	uint8_t *data;
	size_t len;
	void *buf;     /* optional caller buffer */
	size_t cap;
	uint8_t *dyn_; /* internal: malloc'd payload, freed by pfs_rpc_reply_free */
} pfs_rpc_reply;

/* Who a request is for, as the frame header carries it: the job id, the
 * caller's uid/gid (QoS rule matching) and the RPC credits the caller asks
 * for (RCC's cnr; 0 = no opinion).  A NULL tag sends none of them. */
typedef struct pfs_rpc_tag {
	const char *job;
	uint32_t uid, gid;
	uint32_t credit;
} pfs_rpc_tag;

/* Flags for calls.  PFS_RPC_IDEMPOTENT is kept for callers that say so
 * (every request is resent now); PFS_RPC_NO_RESEND: a request that was
 * sent is never sent again (the reply's loss is returned as -EPIPE or
 * -ETIMEDOUT). */
#define PFS_RPC_IDEMPOTENT 0x1u
#define PFS_RPC_NO_RESEND 0x2u

int pfs_rpc_pool_create(const char *host, uint16_t port, const pfs_rpc_opts *opts,
			pfs_rpc_pool **out);
/* Closes all connections; no call may be in progress. */
void pfs_rpc_pool_destroy(pfs_rpc_pool *p);
const char *pfs_rpc_pool_host(const pfs_rpc_pool *p);
uint16_t pfs_rpc_pool_port(const pfs_rpc_pool *p);

/* One round trip.  Returns the reply's status (0 or -errno from the server)
 * or a transport error; on success with status 0 the reply payload is in
 * rep (free with pfs_rpc_reply_free, also safe after errors). */
int pfs_rpc_call(pfs_rpc_pool *p, uint16_t op, const char *job_id, unsigned flags,
		 const void *req, size_t len, const void *bulk, size_t bulk_len,
		 pfs_rpc_reply *rep);
/* The tagged form of pfs_rpc_call: the caller's identity and credit request
 * go in the header, and the reply's header (rep->hdr.credit: the server's
 * grant) is there even on a non-zero status.  Retries like pfs_rpc_call. */
int pfs_rpc_call_tag(pfs_rpc_pool *p, uint16_t op, const pfs_rpc_tag *tag, unsigned flags,
		     const void *req, size_t len, const void *bulk, size_t bulk_len,
		     pfs_rpc_reply *rep);
int pfs_rpc_start(pfs_rpc_pool *p, uint16_t op, const pfs_rpc_tag *tag,
		  const void *req, size_t len, const void *bulk, size_t bulk_len,
		  pfs_rpc_inflight **call);
/* pfs_rpc_start with the bulk in nbulk pieces (at most PFS_NET_MAX_SEGS),
 * sent from where they are, in order, without gathering them first
 * (pfs_net_send_frame_iov_sec; a WRITEV's extents).  The pieces are read
 * while the request is sent: they must stay unchanged until this returns.
 * Retried as pfs_rpc_start; -EINVAL for too many pieces. */
struct iovec;
int pfs_rpc_start_iov(pfs_rpc_pool *p, uint16_t op, const pfs_rpc_tag *tag,
		      const void *req, size_t len, const struct iovec *bulk, int nbulk,
		      pfs_rpc_inflight **call);
/* pfs_rpc_start with the bulk taken from a pipe by splice (see
 * pfs_net_send_frame_pipe).  Only the connect is retried: once bytes have
 * left the pipe the request cannot be sent again, so a send failure is
 * returned as it is. */
int pfs_rpc_start_pipe(pfs_rpc_pool *p, uint16_t op, const pfs_rpc_tag *tag,
		       const void *req, size_t len, int pipe_fd, size_t bulk_len,
		       pfs_rpc_inflight **call);
/* Wait for the reply of a started call; always consumes call.  Returns as
 * pfs_rpc_call; rep->hdr is the reply's header whenever a reply came (also
 * with a non-zero status), and all zeros after a transport error. */
int pfs_rpc_finish(pfs_rpc_inflight *call, pfs_rpc_reply *rep);
/* pfs_rpc_finish with the reply's payload spliced into the pipe pipe_w when
 * it may go there (pfs_net_recv_reply_pipe_sec: a READ reply the frame's
 * tag does not cover, at most pipe_cap bytes): then *piped = 1 and the
 * rep->len bytes are in the pipe, not in rep->data.  -ENOBUFS: the pipe
 * had no room for them (the connection is closed).  After a failure the
 * pipe may hold part of a payload: the caller empties it. */
int pfs_rpc_finish_pipe(pfs_rpc_inflight *call, pfs_rpc_reply *rep, int pipe_w, size_t pipe_cap,
			int *piped);
/* Install (check != NULL) or remove the calling thread's interrupt check:
 * while it returns non-zero, the waits of this thread's calls end with
 * -EINTR.  The check runs on the calling thread. */
void pfs_rpc_set_interrupt(int (*check)(void *arg), void *arg);
/* 1 if the calling thread's interrupt check fires now (for callers with
 * their own resend loops, client/osc.c). */
int pfs_rpc_interrupted(void);
/* 1 if rc is a transport or protocol failure (no usable reply): -EPIPE,
 * -ECONNRESET, -ECONNREFUSED, -ETIMEDOUT, -EHOSTUNREACH, -EBADMSG, ... */
int pfs_rpc_transport_err(int rc);
/* rc as a file system reports it: transport and protocol failures (and
 * anything that is not an errno) become -EIO; 0 and POSIX file-system
 * errors pass unchanged. */
int pfs_rpc_fs_err(int rc);
/* Change the pool's recovery window (opts.recovery_ms) while it is in use:
 * a mount probes its MDS with the short retry_ms, then widens it. */
void pfs_rpc_pool_set_recovery_ms(pfs_rpc_pool *p, int ms);
/* Requests sent again after a lost reply (pfs_rpc_call), since creation. */
uint64_t pfs_rpc_pool_resends(pfs_rpc_pool *p);
/* Clear the outputs of rep, keeping its caller buffer (buf, cap). */
void pfs_rpc_reply_init(pfs_rpc_reply *rep);
void pfs_rpc_reply_free(pfs_rpc_reply *rep);

#endif
