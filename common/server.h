/* server.h — a threaded frame server: one listening socket, one thread per
 * connection reading frames and handing each to a handler.
 *
 * The handler runs on the connection's thread and owns the payload (it must
 * free() it, now or later).  It replies with pfs_sconn_reply, at once or
 * later from another thread: to reply later it takes a reference with
 * pfs_sconn_get and drops it with pfs_sconn_put after replying.  Replies on
 * one connection are serialised by the connection's send lock, so several
 * worker threads may reply on one connection.
 *
 * Frames that fail to decode (bad magic, version, oversize) close the
 * connection after a best-effort error reply; the server goes on serving
 * others.  At most max_conns connections are served at once; more are
 * accepted and closed at once. */
#ifndef PFS_SERVER_H
#define PFS_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "common/proto.h"

typedef struct pfs_server pfs_server;
typedef struct pfs_sconn pfs_sconn;

typedef void (*pfs_server_handler)(void *ctx, pfs_sconn *c, const pfs_hdr *h,
				   uint8_t *payload);

typedef struct pfs_server_opts {
	const char *host;        /* bind address; NULL/"" = all */
	uint16_t port;           /* 0 = any free port */
	unsigned max_conns;      /* default 1024 */
	uint32_t max_payload;    /* default PFS_MAX_PAYLOAD */
	const char *name;        /* for log lines, e.g. "mds" */
} pfs_server_opts;

int pfs_server_start(const pfs_server_opts *opts, pfs_server_handler fn, void *ctx,
		     pfs_server **out);
uint16_t pfs_server_port(const pfs_server *s);
/* Stop accepting, shut every connection down, wait for connection threads
 * and free the server.  Handlers holding references delay the final free of
 * their connections, not this call. */
void pfs_server_stop(pfs_server *s);

/* Send a reply to request h (opcode and req_id copied, PFS_F_REPLY set). */
int pfs_sconn_reply(pfs_sconn *c, const pfs_hdr *h, int status, const void *payload,
		    size_t len, const void *bulk, size_t bulk_len);
/* The same with an RCC credit grant in the reply header (oss data port). */
int pfs_sconn_reply_credit(pfs_sconn *c, const pfs_hdr *h, int status, uint32_t credit,
			   const void *payload, size_t len, const void *bulk,
			   size_t bulk_len);
void pfs_sconn_get(pfs_sconn *c);
void pfs_sconn_put(pfs_sconn *c);
/* "ip:port" of the peer, for logs. */
const char *pfs_sconn_peer(const pfs_sconn *c);

#endif
