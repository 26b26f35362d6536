/* net.h — TCP helpers and whole-frame send/receive on blocking sockets.
 *
 * All sockets are blocking with TCP_NODELAY; frames are written with one
 * writev (header + payload + optional bulk) and read with exact-length reads,
 * so a frame is never interleaved on a connection whose writers hold its send
 * lock.  Functions return 0 or a negative errno; -ECONNRESET means the peer
 * closed the connection cleanly at a frame boundary.
 *
 * The _sec forms take the connection's session (common/auth.h; NULL = a
 * connection without authentication, the same as the plain forms): a sent
 * frame is sealed, a received one is checked after its payload is in, and a
 * bad tag is -EBADMSG (the caller must close the connection). */
#ifndef PFS_NET_H
#define PFS_NET_H

#include <stddef.h>
#include <stdint.h>

#include "common/proto.h"

struct pfs_auth_sess;

/* Parse "host:port" (host may be empty = 0.0.0.0, or [v6]); 0 or -EINVAL. */
int pfs_addr_parse(const char *s, char *host, size_t hostsz, uint16_t *port);
/* Listen on host:port (port 0 picks a free port; see pfs_net_local_port). */
int pfs_net_listen(const char *host, uint16_t port, int *fd);
int pfs_net_local_port(int fd, uint16_t *port);
/* Connect with a timeout in milliseconds (0 = system default). */
int pfs_net_connect(const char *host, uint16_t port, int timeout_ms, int *fd);
/* Set send/receive timeouts (0 = none). */
int pfs_net_set_timeout(int fd, int timeout_ms);
int pfs_net_write_all(int fd, const void *p, size_t n);
int pfs_net_read_all(int fd, void *p, size_t n);
/* Send one frame; h->payload_len is set to len + bulk_len. */
int pfs_net_send_frame(int fd, pfs_hdr *h, const void *payload, size_t len,
		       const void *bulk, size_t bulk_len);
/* Send one frame whose bulk (bulk_len bytes) is taken from the pipe pipe_fd
 * with splice(2): the pages move from the pipe into the socket without a
 * copy through user space.  The pipe must hold at least bulk_len bytes.  A
 * failure part way leaves the pipe partly drained: the caller cannot resend. */
int pfs_net_send_frame_pipe(int fd, pfs_hdr *h, const void *payload, size_t len,
			    int pipe_fd, size_t bulk_len);
/* Receive one frame.  The payload goes into buf if it fits in cap bytes,
 * else into a malloc'd buffer returned in *dyn (caller frees; NULL when buf
 * was used).  *data points at the payload either way. */
int pfs_net_recv_frame(int fd, pfs_hdr *h, uint32_t max_payload, void *buf, size_t cap,
		       uint8_t **dyn, uint8_t **data);

/* The same for the client side of a request/reply connection, where the
 * peer sends nothing beyond this one frame: the header and the start of the
 * payload come in with one recv (a small reply costs one system call, not
 * two).  Bytes beyond the frame are a protocol error (-EBADMSG). */
int pfs_net_recv_reply(int fd, pfs_hdr *h, uint32_t max_payload, void *buf, size_t cap,
		       uint8_t **dyn, uint8_t **data);

int pfs_net_send_frame_sec(int fd, struct pfs_auth_sess *s, pfs_hdr *h, const void *payload,
			   size_t len, const void *bulk, size_t bulk_len);
/* pfs_net_send_frame_sec with the bulk in nbulk pieces (at most
 * PFS_NET_MAX_SEGS), sent from where they are in one sendmsg: the frame on
 * the wire, and its tag (covering the pieces in order), are those of
 * their concatenation.  -EINVAL for too many pieces. */
#define PFS_NET_MAX_SEGS 1000
struct iovec;
int pfs_net_send_frame_iov_sec(int fd, struct pfs_auth_sess *s, pfs_hdr *h, const void *payload,
			       size_t len, const struct iovec *bulk, int nbulk);
/* With a session whose integrity covers bytes of the bulk (FULL), the pipe
 * is read into memory first and sent as a plain frame: spliced bytes cannot
 * be MACed. */
int pfs_net_send_frame_pipe_sec(int fd, struct pfs_auth_sess *s, pfs_hdr *h,
				const void *payload, size_t len, int pipe_fd, size_t bulk_len);
int pfs_net_recv_frame_sec(int fd, struct pfs_auth_sess *s, pfs_hdr *h, uint32_t max_payload,
			   void *buf, size_t cap, uint8_t **dyn, uint8_t **data);
int pfs_net_recv_reply_sec(int fd, struct pfs_auth_sess *s, pfs_hdr *h, uint32_t max_payload,
			   void *buf, size_t cap, uint8_t **dyn, uint8_t **data);
/* pfs_net_recv_reply_sec for a reply whose payload may go into a pipe
 * (mount.pfs's READ replies): when the session's tag covers none of the
 * payload (an OSS_READ reply under integrity = header, or no session) and
 * it is 1..pipe_cap bytes, it is spliced from the socket into pipe_w
 * (*piped = 1, *data NULL: no copy through user space; the pipe then holds
 * references to the socket buffers' pages).  Otherwise it is read as by
 * pfs_net_recv_reply_sec (*piped = 0).  -ENOBUFS: the pipe filled up
 * before the payload was in (the pipe holds part of it; the frame
 * boundary is lost: close the connection).  After any failure the pipe
 * may hold part of the payload. */
int pfs_net_recv_reply_pipe_sec(int fd, struct pfs_auth_sess *s, pfs_hdr *h,
				uint32_t max_payload, int pipe_w, size_t pipe_cap, void *buf,
				size_t cap, uint8_t **dyn, uint8_t **data, int *piped);

#endif
