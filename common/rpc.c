/* rpc.c — connection pool and request/reply calls (see rpc.h).
 *
 * Recovery: a call keeps one req_id for all its sends; a send after a lost
 * reply carries PFS_F_RESEND so the server's reply cache can answer it.
 * Every wait between attempts checks the calling thread's interrupt hook
 * (pfs_rpc_set_interrupt) and gives up with -EINTR when it fires. */
#include "common/clock.h"
#include "common/rpc.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sodium.h>
#include <unistd.h>

#include "common/auth.h"
#include "common/log.h"
#include "common/net.h"

/* One connection: the socket and, with authentication, its session. */
typedef struct rconn {
	int fd;
	pfs_auth_sess sess;
} rconn;

struct pfs_rpc_pool {
	char host[256];
	uint16_t port;
	pfs_rpc_opts opts;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	rconn **idle;       /* idle connections; guarded by lock */
	unsigned nidle;
	unsigned nopen;     /* open fds, idle or borrowed; guarded by lock */
	uint64_t next_req;  /* guarded by lock */
	uint64_t resends;   /* guarded by lock */
};

/* The calling thread's interrupt hook (pfs_rpc_set_interrupt). */
static _Thread_local int (*intr_fn)(void *);
static _Thread_local void *intr_arg;

void pfs_rpc_set_interrupt(int (*check)(void *arg), void *arg)
{
	intr_fn = check;
	intr_arg = arg;
}

static int interrupted(void)
{
	return intr_fn && intr_fn(intr_arg);
}

int pfs_rpc_interrupted(void)
{
	return interrupted();
}

/* The pool's recovery window in ms: how long a call may keep trying. */
static uint64_t window_ms(const pfs_rpc_pool *p)
{
	int r = __atomic_load_n(&p->opts.recovery_ms, __ATOMIC_RELAXED);

	return (uint64_t)(r > p->opts.retry_ms ? r : p->opts.retry_ms);
}

void pfs_rpc_pool_set_recovery_ms(pfs_rpc_pool *p, int ms)
{
	__atomic_store_n(&p->opts.recovery_ms, ms, __ATOMIC_RELAXED);
}

int pfs_rpc_transport_err(int rc)
{
	switch (rc) {
	case -EPIPE: case -ECONNRESET: case -ECONNREFUSED: case -ECONNABORTED:
	case -ETIMEDOUT: case -EHOSTUNREACH: case -ENETUNREACH: case -ENETDOWN:
	case -EHOSTDOWN: case -ENOTCONN: case -EBADMSG: case -EPROTO:
	case -EPROTONOSUPPORT: case -EMSGSIZE: case -EADDRNOTAVAIL:
		return 1;
	default:
		return 0;
	}
}

int pfs_rpc_fs_err(int rc)
{
	if (rc >= 0)
		return rc;
	if (rc < -4095 || pfs_rpc_transport_err(rc))
		return -EIO;
	return rc;
}

uint64_t pfs_rpc_pool_resends(pfs_rpc_pool *p)
{
	uint64_t n;

	pthread_mutex_lock(&p->lock);
	n = p->resends;
	pthread_mutex_unlock(&p->lock);
	return n;
}

struct pfs_rpc_inflight {
	pfs_rpc_pool *pool;
	rconn *conn;
	uint64_t req_id;
	uint16_t op;
};

int pfs_rpc_pool_create(const char *host, uint16_t port, const pfs_rpc_opts *opts,
			pfs_rpc_pool **out)
{
	pfs_rpc_pool *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	if (strlen(host) >= sizeof(p->host)) {
		free(p);
		return -EINVAL;
	}
	strcpy(p->host, host);
	p->port = port;
	if (opts)
		p->opts = *opts;
	if (!p->opts.max_conns)
		p->opts.max_conns = 8;
	if (!p->opts.timeout_ms)
		p->opts.timeout_ms = 60000;
	if (!p->opts.retry_ms)
		p->opts.retry_ms = 30000;
	if (!p->opts.handshake_timeout_ms)
		p->opts.handshake_timeout_ms = 5000;
	p->idle = calloc(p->opts.max_conns, sizeof(*p->idle));
	if (!p->idle) {
		free(p);
		return -ENOMEM;
	}
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	p->next_req = 1;
	*out = p;
	return 0;
}

static void rconn_close(rconn *c)
{
	close(c->fd);
	sodium_memzero(&c->sess, sizeof(c->sess));
	free(c);
}

/* The session of a connection, or NULL on a pool without authentication. */
static pfs_auth_sess *rconn_sess(const pfs_rpc_pool *p, rconn *c)
{
	return p->opts.auth ? &c->sess : NULL;
}

/* Open, configure and (with a key) authenticate a new connection. */
static int rconn_open(pfs_rpc_pool *p, rconn **out)
{
	rconn *c = calloc(1, sizeof(*c));
	int rc;

	if (!c)
		return -ENOMEM;
	rc = pfs_net_connect(p->host, p->port, p->opts.timeout_ms, &c->fd);
	if (rc) {
		free(c);
		return rc;
	}
	if (p->opts.auth) {
		/* Bounded by the call timeout too (a stopped server). */
		int hto = p->opts.handshake_timeout_ms < p->opts.timeout_ms ?
			p->opts.handshake_timeout_ms : p->opts.timeout_ms;

		rc = pfs_auth_client(c->fd, p->opts.auth, hto, &c->sess);
		if (rc == -EACCES || rc == -EPROTO)
			pfs_log(PFS_LOG_WARNING, "rpc %s:%u: authentication %s (%s key): %s",
				p->host, p->port, rc == -EACCES ? "refused" : "failed",
				pfs_role_name(p->opts.auth->role),
				rc == -EACCES ? "wrong key or role" :
				"the peer does not speak the handshake");
	}
	if (rc == 0)
		rc = pfs_net_set_timeout(c->fd, p->opts.timeout_ms);
	if (rc) {
		rconn_close(c);
		return rc;
	}
	*out = c;
	return 0;
}

void pfs_rpc_pool_destroy(pfs_rpc_pool *p)
{
	if (!p)
		return;
	for (unsigned i = 0; i < p->nidle; i++)
		rconn_close(p->idle[i]);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->cond);
	free(p->idle);
	free(p);
}

const char *pfs_rpc_pool_host(const pfs_rpc_pool *p) { return p->host; }
uint16_t pfs_rpc_pool_port(const pfs_rpc_pool *p) { return p->port; }

/* Borrow a connection: an idle one, a new one, or wait for one. */
static int conn_get(pfs_rpc_pool *p, rconn **conn)
{
	int rc;

	pthread_mutex_lock(&p->lock);
	while (p->nidle == 0 && p->nopen >= p->opts.max_conns)
		pthread_cond_wait(&p->cond, &p->lock);
	while (p->nidle > 0) {
		/* An idle connection the server has closed (it restarted) shows
		 * as readable; drop it here so a request is never sent into a
		 * dead socket. */
		rconn *c = p->idle[--p->nidle];
		struct pollfd pfd = { .fd = c->fd, .events = POLLIN | POLLRDHUP };

		if (poll(&pfd, 1, 0) == 0) {
			*conn = c;
			pthread_mutex_unlock(&p->lock);
			return 0;
		}
		rconn_close(c);
		p->nopen--;
	}
	p->nopen++;
	pthread_mutex_unlock(&p->lock);
	rc = rconn_open(p, conn);
	if (rc) {
		pthread_mutex_lock(&p->lock);
		p->nopen--;
		pthread_cond_signal(&p->cond);
		pthread_mutex_unlock(&p->lock);
	}
	return rc;
}

/* Give a connection back; broken ones are closed. */
static void conn_put(pfs_rpc_pool *p, rconn *c, int broken)
{
	pthread_mutex_lock(&p->lock);
	if (broken) {
		rconn_close(c);
		p->nopen--;
	} else {
		p->idle[p->nidle++] = c;
	}
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

/* Drop every idle connection (after a server restart they are all dead). */
static void conn_flush(pfs_rpc_pool *p)
{
	pthread_mutex_lock(&p->lock);
	while (p->nidle > 0) {
		rconn_close(p->idle[--p->nidle]);
		p->nopen--;
	}
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

static uint64_t new_req_id(pfs_rpc_pool *p)
{
	uint64_t id;

	pthread_mutex_lock(&p->lock);
	id = p->next_req++;
	pthread_mutex_unlock(&p->lock);
	return id;
}

/* Borrow a connection and send one request; the bulk comes from memory
 * (bulk, or the nbv pieces of bv when nbv > 0) or, when pipe_fd >= 0, from
 * a pipe by splice.  req_id 0 takes a new id;
 * hflags go into the header (PFS_F_RESEND).  Connect failures are retried
 * with backoff until deadline (ms); a failed send is retried only from
 * memory (a drained pipe cannot be sent again). */
static int start(pfs_rpc_pool *p, uint16_t op, const pfs_rpc_tag *tag, const void *req,
		 size_t len, const void *bulk, const struct iovec *bv, int nbv, int pipe_fd,
		 size_t bulk_len, uint64_t req_id, uint32_t hflags, uint64_t deadline,
		 pfs_rpc_inflight **call)
{
	unsigned delay = 10;
	pfs_rpc_inflight *c;
	int rc;

	c = malloc(sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->req_id = req_id ? req_id : new_req_id(p);
	for (;;) {
		rc = conn_get(p, &c->conn);
		if (rc == 0) {
			pfs_hdr h;

			pfs_hdr_init(&h, op, c->req_id, p->opts.client_id,
				     tag ? tag->job : NULL);
			h.flags = hflags;
			if (tag) {
				h.uid = tag->uid;
				h.gid = tag->gid;
				h.credit = tag->credit;
			}
			pfs_auth_sess *sess = rconn_sess(p, c->conn);

			if (pipe_fd >= 0)
				rc = pfs_net_send_frame_pipe_sec(c->conn->fd, sess, &h, req, len,
								 pipe_fd, bulk_len);
			else if (nbv > 0)
				rc = pfs_net_send_frame_iov_sec(c->conn->fd, sess, &h, req, len,
								bv, nbv);
			else
				rc = pfs_net_send_frame_sec(c->conn->fd, sess, &h, req, len, bulk,
							    bulk_len);
			if (rc == 0)
				break;
			/* A pooled connection the server closed: nothing was
			 * processed, so resending from memory is safe. */
			conn_put(p, c->conn, 1);
			conn_flush(p);
			if (pipe_fd >= 0)
				goto fail;
		}
		/* A refused handshake will be refused again: no retry. */
		if (rc == -EMSGSIZE || rc == -EACCES || rc == -EPROTO || rc == -EINVAL ||
		    pfs_clock_ms() >= deadline)
			goto fail;
		if (interrupted()) {
			rc = -EINTR;
			goto fail;
		}
		usleep(delay * 1000);
		if (delay < 500)
			delay *= 2;
	}
	c->pool = p;
	c->op = op;
	*call = c;
	return 0;
fail:
	free(c);
	return rc;
}

int pfs_rpc_start(pfs_rpc_pool *p, uint16_t op, const pfs_rpc_tag *tag,
		  const void *req, size_t len, const void *bulk, size_t bulk_len,
		  pfs_rpc_inflight **call)
{
	return start(p, op, tag, req, len, bulk, NULL, 0, -1, bulk_len, 0, 0,
		     pfs_clock_ms() + window_ms(p), call);
}

int pfs_rpc_start_iov(pfs_rpc_pool *p, uint16_t op, const pfs_rpc_tag *tag,
		      const void *req, size_t len, const struct iovec *bulk, int nbulk,
		      pfs_rpc_inflight **call)
{
	return start(p, op, tag, req, len, NULL, bulk, nbulk, -1, 0, 0, 0,
		     pfs_clock_ms() + window_ms(p), call);
}

int pfs_rpc_start_pipe(pfs_rpc_pool *p, uint16_t op, const pfs_rpc_tag *tag,
		       const void *req, size_t len, int pipe_fd, size_t bulk_len,
		       pfs_rpc_inflight **call)
{
	return start(p, op, tag, req, len, NULL, NULL, 0, pipe_fd, bulk_len, 0, 0,
		     pfs_clock_ms() + window_ms(p), call);
}

void pfs_rpc_reply_init(pfs_rpc_reply *rep)
{
	void *buf = rep->buf;
	size_t cap = rep->cap;

	memset(rep, 0, sizeof(*rep));
	rep->buf = buf;
	rep->cap = cap;
}

void pfs_rpc_reply_free(pfs_rpc_reply *rep)
{
	if (!rep)
		return;
	free(rep->dyn_);
	rep->dyn_ = NULL;
	rep->data = NULL;
	rep->len = 0;
}

/* pfs_rpc_finish, the payload into pipe_w when it may go there (pipe_w >= 0;
 * *piped says where it went). */
static int finish(pfs_rpc_inflight *c, pfs_rpc_reply *rep, int pipe_w, size_t pipe_cap,
		  int *piped)
{
	pfs_rpc_pool *p = c->pool;
	int rc;

	free(rep->dyn_);
	rep->dyn_ = NULL;
	rep->data = NULL;
	rep->len = 0;
	if (pipe_w >= 0)
		rc = pfs_net_recv_reply_pipe_sec(c->conn->fd, rconn_sess(p, c->conn), &rep->hdr,
						 PFS_MAX_PAYLOAD, pipe_w, pipe_cap, rep->buf,
						 rep->cap, &rep->dyn_, &rep->data, piped);
	else
		rc = pfs_net_recv_reply_sec(c->conn->fd, rconn_sess(p, c->conn), &rep->hdr,
					    PFS_MAX_PAYLOAD, rep->buf, rep->cap, &rep->dyn_,
					    &rep->data);
	if (rc == -EBADMSG && p->opts.auth)
		pfs_log(PFS_LOG_WARNING, "rpc %s:%u: reply to %s failed its integrity check",
			p->host, p->port, pfs_op_name(c->op));
	if (rc == 0 && (!(rep->hdr.flags & PFS_F_REPLY) || rep->hdr.req_id != c->req_id ||
			rep->hdr.opcode != c->op)) {
		pfs_log(PFS_LOG_WARNING, "rpc %s:%u: reply does not match request %s",
			p->host, p->port, pfs_op_name(c->op));
		rc = -EBADMSG;
	}
	if (rc) {
		/* No trustworthy header: callers read hdr (credit) after errors. */
		memset(&rep->hdr, 0, sizeof(rep->hdr));
		pfs_rpc_reply_free(rep);
		conn_put(p, c->conn, 1);
		if (rc == -ECONNRESET)
			rc = -EPIPE; /* the request may have been executed */
		free(c);
		return rc;
	}
	rep->len = rep->hdr.payload_len;
	conn_put(p, c->conn, 0);
	free(c);
	return rep->hdr.status;
}

int pfs_rpc_finish(pfs_rpc_inflight *c, pfs_rpc_reply *rep)
{
	return finish(c, rep, -1, 0, NULL);
}

int pfs_rpc_finish_pipe(pfs_rpc_inflight *c, pfs_rpc_reply *rep, int pipe_w, size_t pipe_cap,
			int *piped)
{
	*piped = 0;
	return finish(c, rep, pipe_w, pipe_cap, piped);
}

int pfs_rpc_call(pfs_rpc_pool *p, uint16_t op, const char *job_id, unsigned flags,
		 const void *req, size_t len, const void *bulk, size_t bulk_len,
		 pfs_rpc_reply *rep)
{
	pfs_rpc_tag tag = { .job = job_id };

	return pfs_rpc_call_tag(p, op, &tag, flags, req, len, bulk, bulk_len, rep);
}

int pfs_rpc_call_tag(pfs_rpc_pool *p, uint16_t op, const pfs_rpc_tag *tag, unsigned flags,
		     const void *req, size_t len, const void *bulk, size_t bulk_len,
		     pfs_rpc_reply *rep)
{
	uint64_t deadline = pfs_clock_ms() + window_ms(p);
	uint64_t req_id = new_req_id(p);
	uint32_t hflags = 0;
	unsigned delay = 50;
	pfs_rpc_inflight *c;
	int rc;

	for (;;) {
		rc = start(p, op, tag, req, len, bulk, NULL, 0, -1, bulk_len, req_id, hflags,
			   deadline, &c);
		if (rc)
			return rc;
		rc = pfs_rpc_finish(c, rep);
		/* Sent, then no reply (broken connection, timeout): send it again
		 * under the same req_id; the server's reply cache answers a
		 * request it already ran. */
		if ((rc != -EPIPE && rc != -ETIMEDOUT) || (flags & PFS_RPC_NO_RESEND) ||
		    pfs_clock_ms() >= deadline)
			return rc;
		if (interrupted())
			return -EINTR;
		if (!hflags)
			pfs_log(PFS_LOG_NOTICE, "rpc %s:%u: %s got no reply (%s); resending",
				p->host, p->port, pfs_op_name(op), pfs_strerror(rc));
		hflags = PFS_F_RESEND;
		pthread_mutex_lock(&p->lock);
		p->resends++;
		pthread_mutex_unlock(&p->lock);
		conn_flush(p);
		usleep(delay * 1000);
		if (delay < 1000)
			delay *= 2;
	}
}
