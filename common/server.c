/* server.c — the event-driven frame server (see server.h).
 *
 * Threads.  One loop thread owns the listening socket and every
 * connection's socket, events, input buffer and frame being received;
 * opts.workers threads run handlers.  libevent is used without evthread:
 * only the loop calls it.  Other threads reach the loop through the kick
 * list (connections with replies to write or with a held frame to retry)
 * and an eventfd.
 *
 * A connection (pfs_sconn) has three kinds of fields:
 *   - loop only: events, input evbuffer, handshake state, the frame being
 *     received (header, payload buffer grown as bytes arrive), a frame held
 *     back by backpressure, timestamps;
 *   - under c->lock: the output evbuffer, requests in flight, the closed
 *     flag, the send side of the auth session, the reply size estimate;
 *   - refs (under c->lock): the loop holds one until it closes the
 *     connection, every dispatched request one until its handler returns,
 *     handlers more (pfs_sconn_get).  A closed connection is an inert shell:
 *     replies on it return -EPIPE without touching the server, so it may
 *     outlive pfs_server_stop; the last pfs_sconn_put frees it.
 *
 * Receiving.  The loop reads into the input evbuffer (during the handshake
 * only the bytes the next handshake message needs), cuts the header off,
 * and moves payload bytes into a buffer that starts at 64 KiB (or what is
 * already there) and doubles as bytes arrive, up to payload_len; once the
 * input buffer is empty the payload is read straight into that buffer.
 * A complete frame is checked (MAC), then dispatched if the connection's
 * budget allows it (can_dispatch), else held and the read event removed
 * until replies drain.  With opts.bulk (the OSS's WRITE data) the loop
 * reads no further than a header and the head split() needs, and a frame
 * split() names has its tail spliced from the socket into a pipe as it
 * arrives (bulk_*: page references, no copy); a pipe that fills up first
 * is read back into the payload buffer and the frame received as any.
 *
 * Sending.  pfs_sconn_reply seals the header under c->lock (so seal order
 * is wire order).  When nothing is queued ahead it offers the frame to the
 * socket at once with one non-blocking sendmsg (never waiting: a full
 * socket takes what it can); the rest is copied into the output evbuffer
 * and the loop is kicked, which writes with evbuffer_write (writev) and
 * keeps a write event while bytes remain.  So a reply costs no thread
 * hop and no user-space copy when the peer keeps up, and at most one copy
 * of what it has not taken yet when it does not.  pfs_sconn_reply_pipe
 * does the same with a bulk waiting in a pipe (the OSS splices READ data
 * there from the page cache): the pages go to the socket with splice(2);
 * what the socket does not take is read out of the pipe into the output
 * buffer by the replying thread, so the loop never touches the pipe.
 *
 * Budget per connection: at most max_inflight requests in handlers, and
 * queued reply bytes plus the replies expected from the requests in flight
 * (their number times a running average of this connection's reply sizes,
 * starting at the largest frame) at most max_queued_bytes; one request is
 * always allowed while nothing is in flight and the queue is below the
 * limit.  So a peer that pipelines large READs and does not read holds at
 * most about max_queued_bytes plus one reply.
 *
 * Timeouts are checked by one periodic sweep over the connections (an
 * eighth of the shortest timeout, 5 ms to 1 s). */
#include "common/server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "common/auth.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/net.h"

#define BODY_MIN (64u << 10)   /* first payload buffer, when less has arrived */
#define READ_CHUNK (64u << 10) /* bytes read at once into the input buffer */
#define ACCEPT_BATCH 64

enum cstate { CS_HELLO, CS_PROOF, CS_HDR, CS_BODY };

struct pfs_sconn {
	pfs_server *srv;          /* not used once closed */
	int fd;
	char peer[64];
	pthread_mutex_t lock;
	/* under lock */
	int refs;
	int closed;
	int authed;
	int held;                 /* the loop holds a frame back (paused) */
	struct evbuffer *out;
	unsigned inflight;
	size_t expect;          /* sum of reply_bound over requests in flight */
	size_t est;               /* running average of reply frame sizes */
	uint64_t tx_ms;           /* last write progress, or when out filled */
	pfs_auth_sess sess;       /* send side under lock, receive side loop */
	unsigned role;
	/* under srv->klock */
	int kicked;
	pfs_sconn *knext;
	/* loop only */
	struct event *rev, *wev;
	int rev_on, wev_on;
	struct evbuffer *in;
	enum cstate st;
	pfs_auth_srv asrv;
	pfs_hdr h;                /* frame being received */
	uint8_t *body;
	size_t got, cap;
	int asked;                /* opts.bulk->split was asked about this frame */
	int pfd[2];               /* its spliced bulk: pipe, bytes, bytes in */
	size_t bulk, bgot;
	int paused;               /* a complete frame is held (ph, pbody, ppfd) */
	pfs_hdr ph;
	uint8_t *pbody;
	int ppfd[2];
	size_t pbulk;
	int flush_close;          /* close once the output is written */
	uint64_t open_ms, rx_ms, frame_ms0;
	pfs_sconn *next, *prev;
};

typedef struct job {
	struct job *next;
	pfs_sconn *c;
	pfs_hdr h;
	uint8_t *payload;
	int pfd[2];               /* spliced bulk (bulk bytes), or -1 */
	size_t bulk;
} job;

struct pfs_server {
	pfs_server_opts opts;
	char name[32];
	pfs_server_handler fn;
	void *ctx;
	int lfd, efd;
	uint16_t port;
	struct event_base *base;
	struct event *lev, *eev, *tick, *lretry;
	pthread_t loop, loop_tid;
	int loop_tid_set;         /* written by the loop before any connection */
	atomic_int stopping;
	pfs_sconn *conns;         /* loop only */
	uint64_t refuse_log_ms;   /* loop only */
	/* kick list */
	pthread_mutex_t klock;
	pfs_sconn *kick;
	/* worker pool */
	pthread_mutex_t plock;
	pthread_cond_t pcond;
	job *jh, *jt;
	int pstop;
	pthread_t *workers;
	unsigned nworkers;
	/* stats */
	atomic_uint nconns;
	atomic_uint_fast64_t accepted, refused_full, auth_failed, mac_failed, timed_out,
		bad_frames, rx_alloc, queued, queued_peak, paused, bulk_spliced, bulk_undone;
};

#define ST_ADD(s, f, n) atomic_fetch_add_explicit(&(s)->f, (n), memory_order_relaxed)
#define ST_SUB(s, f, n) atomic_fetch_sub_explicit(&(s)->f, (n), memory_order_relaxed)

static void conn_close(pfs_sconn *c, const char *why, int level);
static int process(pfs_sconn *c);

/* ---- references ---- */

void pfs_sconn_get(pfs_sconn *c)
{
	pthread_mutex_lock(&c->lock);
	c->refs++;
	pthread_mutex_unlock(&c->lock);
}

void pfs_sconn_put(pfs_sconn *c)
{
	int last;

	pthread_mutex_lock(&c->lock);
	last = --c->refs == 0;
	pthread_mutex_unlock(&c->lock);
	if (last) {
		explicit_bzero(&c->sess, sizeof(c->sess));
		pthread_mutex_destroy(&c->lock);
		free(c);
	}
}

const char *pfs_sconn_peer(const pfs_sconn *c) { return c->peer; }

unsigned pfs_sconn_role(const pfs_sconn *c) { return c->role; }

/* ---- sending ---- */

static int on_loop(const pfs_server *s)
{
	return s->loop_tid_set && pthread_equal(pthread_self(), s->loop_tid);
}

/* Have the loop look at c (write its output, retry a held frame).  Called
 * with c->lock held and c open; the kick list holds a reference. */
static void kick(pfs_sconn *c)
{
	pfs_server *s = c->srv;
	uint64_t one = 1;
	int wake = 0;

	if (on_loop(s)) {
		event_active(c->wev, EV_WRITE, 0);
		return;
	}
	pthread_mutex_lock(&s->klock);
	if (!c->kicked) {
		c->kicked = 1;
		c->refs++;
		c->knext = s->kick;
		wake = !s->kick;
		s->kick = c;
	}
	pthread_mutex_unlock(&s->klock);
	if (wake && write(s->efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		pfs_log(PFS_LOG_WARNING, "%s: eventfd: %s", s->name, strerror(errno));
}

/* Append raw bytes (handshake messages); loop only. */
static void send_raw(pfs_sconn *c, const void *p, size_t n)
{
	pthread_mutex_lock(&c->lock);
	if (!evbuffer_get_length(c->out))
		c->tx_ms = pfs_clock_ms();
	if (evbuffer_add(c->out, p, n) == 0)
		ST_ADD(c->srv, queued, n);
	kick(c);
	pthread_mutex_unlock(&c->lock);
}

/* What every reply does once its bytes went to the socket or the output
 * buffer (was: the buffer's length before; frame: the frame's size; rc:
 * the frame could not be queued whole).  c->lock held, c open. */
static void reply_end(pfs_sconn *c, const pfs_hdr *req, size_t was, size_t frame, int counted,
		      int rc)
{
	pfs_server *s = c->srv;
	size_t now;

	if (rc) /* a partial frame would desynchronise the peer: drop it */
		shutdown(c->fd, SHUT_RDWR);
	now = evbuffer_get_length(c->out);
	if (!was && now)
		c->tx_ms = pfs_clock_ms();
	ST_ADD(s, queued, now - was);
	for (uint64_t peak = atomic_load(&s->queued_peak);
	     now > peak && !atomic_compare_exchange_weak(&s->queued_peak, &peak, now);)
		;
	c->est = c->est - c->est / 8 + frame / 8;
	if (counted && c->inflight) {
		c->inflight--;
		if (s->opts.reply_bound) {
			size_t b = s->opts.reply_bound(req);

			c->expect -= b < c->expect ? b : c->expect;
		}
	}
	if (now != was || c->held || rc)
		kick(c);
}

/* counted: a handler's reply, which ends one request in flight. */
static int reply(pfs_sconn *c, const pfs_hdr *req, int status, uint32_t credit,
		 const void *payload, size_t len, const void *bulk, size_t bulk_len, int counted)
{
	uint8_t hb[PFS_HDR_LEN];
	pfs_hdr h = *req;
	struct iovec iov[3];
	size_t total, was, skip = 0;
	int n = 0, rc = 0;

	if (status)
		len = bulk_len = 0;
	total = len + bulk_len;
	if (total > UINT32_MAX)
		return -EMSGSIZE;
	h.flags = PFS_F_REPLY;
	h.status = status;
	h.credit = credit;
	h.payload_len = (uint32_t)total;
	memset(h.mac, 0, sizeof(h.mac));
	pthread_mutex_lock(&c->lock);
	if (c->closed) {
		pthread_mutex_unlock(&c->lock);
		return -EPIPE;
	}
	if (c->authed)
		pfs_auth_seal(&c->sess, &h, payload, len, bulk, bulk_len);
	pfs_hdr_encode(&h, hb);
	iov[n++] = (struct iovec){ hb, sizeof(hb) };
	if (len)
		iov[n++] = (struct iovec){ (void *)payload, len };
	if (bulk_len)
		iov[n++] = (struct iovec){ (void *)bulk, bulk_len };
	was = evbuffer_get_length(c->out);
	if (!was) {
		/* Nothing queued ahead: offer the frame to the socket at once,
		 * without waiting (the loop would do the same a wake-up later);
		 * only what the socket does not take is copied and queued. */
		struct msghdr m = { .msg_iov = iov, .msg_iovlen = (size_t)n };
		ssize_t w = sendmsg(c->fd, &m, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (w > 0)
			skip = (size_t)w; /* errors: the loop's write sees them */
	}
	for (int i = 0; i < n && !rc; i++) {
		size_t l = iov[i].iov_len;

		if (skip >= l) {
			skip -= l;
			continue;
		}
		if (evbuffer_add(c->out, (uint8_t *)iov[i].iov_base + skip, l - skip))
			rc = -ENOMEM;
		skip = 0;
	}
	reply_end(c, req, was, sizeof(hb) + total, counted, rc);
	pthread_mutex_unlock(&c->lock);
	return rc;
}

int pfs_sconn_reply(pfs_sconn *c, const pfs_hdr *req, int status, const void *payload,
		    size_t len, const void *bulk, size_t bulk_len)
{
	return reply(c, req, status, 0, payload, len, bulk, bulk_len, 1);
}

int pfs_sconn_reply_credit(pfs_sconn *c, const pfs_hdr *req, int status, uint32_t credit,
			   const void *payload, size_t len, const void *bulk,
			   size_t bulk_len)
{
	return reply(c, req, status, credit, payload, len, bulk, bulk_len, 1);
}

static ssize_t read_into(struct evbuffer *in, int fd, size_t want);

/* Read and drop n bytes from the pipe fd. */
static void pipe_drain(int fd, size_t n)
{
	char junk[16384];

	while (n) {
		ssize_t r = read(fd, junk, n < sizeof(junk) ? n : sizeof(junk));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n -= (size_t)r;
	}
}

/* Move n bytes from the pipe fd into out (a copy); 0 or -errno. */
static int pipe_to_evbuffer(struct evbuffer *out, int fd, size_t n)
{
	while (n) {
		ssize_t r = read_into(out, fd, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		n -= (size_t)r;
	}
	return 0;
}

/* A session whose MAC covers bulk bytes: the bulk is needed in memory. */
static int reply_pipe_copy(pfs_sconn *c, const pfs_hdr *req, uint32_t credit,
			   const void *payload, size_t len, int pipe_fd, size_t bulk_len)
{
	uint8_t *bulk = malloc(bulk_len);
	size_t got = 0;
	int rc;

	while (bulk && got < bulk_len) {
		ssize_t r = read(pipe_fd, bulk + got, bulk_len - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	if (!bulk || got < bulk_len) {
		pipe_drain(pipe_fd, bulk_len - got);
		rc = reply(c, req, bulk ? -EIO : -ENOMEM, credit, NULL, 0, NULL, 0, 1);
	} else {
		rc = reply(c, req, 0, credit, payload, len, bulk, bulk_len, 1);
	}
	free(bulk);
	return rc;
}

int pfs_sconn_reply_covers(pfs_sconn *c, const pfs_hdr *req, size_t fields, size_t len)
{
	pfs_hdr h = *req;
	int covers;

	h.flags = PFS_F_REPLY;
	h.payload_len = (uint32_t)(len < UINT32_MAX ? len : UINT32_MAX);
	pthread_mutex_lock(&c->lock);
	covers = c->authed && pfs_auth_covered(&c->sess, &h) > fields;
	pthread_mutex_unlock(&c->lock);
	return covers;
}

int pfs_sconn_reply_pipe(pfs_sconn *c, const pfs_hdr *req, int status, uint32_t credit,
			 const void *payload, size_t len, int pipe_fd, size_t bulk_len)
{
	uint8_t hb[PFS_HDR_LEN];
	pfs_hdr h = *req;
	struct iovec iov[2];
	size_t head, left = bulk_len, was, skip = 0;
	int n = 0, rc = 0;

	if (status || !bulk_len || len + bulk_len > UINT32_MAX) {
		pipe_drain(pipe_fd, bulk_len);
		if (!status && bulk_len)
			return -EMSGSIZE; /* as reply() */
		return reply(c, req, status, credit, payload, len, NULL, 0, 1);
	}
	h.flags = PFS_F_REPLY;
	h.status = 0;
	h.credit = credit;
	h.payload_len = (uint32_t)(len + bulk_len);
	memset(h.mac, 0, sizeof(h.mac));
	pthread_mutex_lock(&c->lock);
	if (c->closed) {
		pthread_mutex_unlock(&c->lock);
		pipe_drain(pipe_fd, bulk_len);
		return -EPIPE;
	}
	if (c->authed && pfs_auth_covered(&c->sess, &h) > len) {
		pthread_mutex_unlock(&c->lock);
		return reply_pipe_copy(c, req, credit, payload, len, pipe_fd, bulk_len);
	}
	if (c->authed)
		pfs_auth_seal(&c->sess, &h, payload, len, NULL, bulk_len);
	pfs_hdr_encode(&h, hb);
	iov[n++] = (struct iovec){ hb, sizeof(hb) };
	if (len)
		iov[n++] = (struct iovec){ (void *)payload, len };
	head = sizeof(hb) + len;
	was = evbuffer_get_length(c->out);
	if (!was) {
		/* Nothing queued ahead: the head, then the pages, as far as
		 * the socket takes them now (it is non-blocking). */
		struct msghdr m = { .msg_iov = iov, .msg_iovlen = (size_t)n };
		ssize_t w = sendmsg(c->fd, &m, MSG_DONTWAIT | MSG_NOSIGNAL | MSG_MORE);

		if (w > 0)
			skip = (size_t)w; /* errors: the loop's write sees them */
		while (skip == head && left) {
			ssize_t r = splice(pipe_fd, NULL, c->fd, NULL, left,
					   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);

			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			left -= (size_t)r;
		}
	}
	for (int i = 0; i < n && !rc; i++) {
		size_t l = iov[i].iov_len;

		if (skip >= l) {
			skip -= l;
			continue;
		}
		if (evbuffer_add(c->out, (uint8_t *)iov[i].iov_base + skip, l - skip))
			rc = -ENOMEM;
		skip = 0;
	}
	if (!rc && left) {
		rc = pipe_to_evbuffer(c->out, pipe_fd, left);
		if (rc)
			pipe_drain(pipe_fd, left);
	}
	reply_end(c, req, was, head + bulk_len, 1, rc);
	pthread_mutex_unlock(&c->lock);
	return rc;
}

/* Write what the socket takes; keep the write event while bytes remain.
 * Loop only, c->lock held.  0 or -errno (the connection is broken). */
static int flush_locked(pfs_sconn *c)
{
	size_t before = evbuffer_get_length(c->out), left;
	int n;

	if (before) {
		n = evbuffer_write(c->out, c->fd);
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return -errno;
		if (n > 0) {
			c->tx_ms = pfs_clock_ms();
			ST_SUB(c->srv, queued, (uint64_t)n);
		}
	}
	left = evbuffer_get_length(c->out);
	if (left && !c->wev_on) {
		event_add(c->wev, NULL);
		c->wev_on = 1;
	} else if (!left && c->wev_on) {
		event_del(c->wev);
		c->wev_on = 0;
	}
	return 0;
}

/* ---- receiving ---- */

/* May one more request of c go to a handler?  c->lock held. */
static int can_dispatch(const pfs_sconn *c, const pfs_hdr *h)
{
	const pfs_server_opts *o = &c->srv->opts;
	size_t q = evbuffer_get_length(c->out);

	if (c->inflight >= o->max_inflight || q >= o->max_queued_bytes)
		return 0;
	if (!c->inflight)
		return 1;
	if (o->reply_bound)
		return q + c->expect + o->reply_bound(h) <= o->max_queued_bytes;
	return q + (size_t)(c->inflight + 1) * c->est <= o->max_queued_bytes;
}

/* Count one more request in flight (c->lock held). */
static void inflight_add(pfs_sconn *c, const pfs_hdr *h)
{
	c->inflight++;
	if (c->srv->opts.reply_bound)
		c->expect += c->srv->opts.reply_bound(h);
}

static void rev_set(pfs_sconn *c, int on)
{
	if (on && !c->rev_on)
		event_add(c->rev, NULL);
	else if (!on && c->rev_on)
		event_del(c->rev);
	c->rev_on = on;
}

static void *worker_main(void *arg)
{
	pfs_server *s = arg;

	for (;;) {
		job *j;

		pthread_mutex_lock(&s->plock);
		while (!s->jh && !s->pstop)
			pthread_cond_wait(&s->pcond, &s->plock);
		j = s->jh;
		if (j) {
			s->jh = j->next;
			if (!s->jh)
				s->jt = NULL;
		}
		pthread_mutex_unlock(&s->plock);
		if (!j)
			break;
		if (j->bulk)
			s->opts.bulk->handler(s->ctx, j->c, &j->h, j->payload, j->pfd, j->bulk);
		else
			s->fn(s->ctx, j->c, &j->h, j->payload);
		pfs_sconn_put(j->c);
		free(j);
	}
	return NULL;
}

/* A spliced bulk's pipe back to its owner (bulk: bytes left in it). */
static void bulk_put(pfs_server *s, int fd[2], size_t bulk)
{
	if (fd[0] >= 0)
		s->opts.bulk->pipe_put(s->ctx, fd, !bulk);
	fd[0] = fd[1] = -1;
}

/* Hand a complete request to its handler (inflight already counted); its
 * last bulk payload bytes in the pipe pfd when bulk is not 0. */
static void dispatch(pfs_sconn *c, const pfs_hdr *h, uint8_t *p, int pfd[2], size_t bulk)
{
	pfs_server *s = c->srv;
	job *j;

	if (!s->fn) {
		free(p);
		bulk_put(s, pfd, bulk);
		reply(c, h, -EOPNOTSUPP, 0, NULL, 0, NULL, 0, 1);
		return;
	}
	if (s->opts.inline_handler || (s->opts.inline_if && s->opts.inline_if(s->ctx, h))) {
		if (bulk)
			s->opts.bulk->handler(s->ctx, c, h, p, pfd, bulk);
		else
			s->fn(s->ctx, c, h, p);
		return;
	}
	j = malloc(sizeof(*j));
	if (!j) {
		free(p);
		bulk_put(s, pfd, bulk);
		reply(c, h, -ENOMEM, 0, NULL, 0, NULL, 0, 1);
		return;
	}
	j->next = NULL;
	j->c = c;
	j->h = *h;
	j->payload = p;
	j->pfd[0] = pfd[0];
	j->pfd[1] = pfd[1];
	j->bulk = bulk;
	pfs_sconn_get(c);
	pthread_mutex_lock(&s->plock);
	if (s->jt)
		s->jt->next = j;
	else
		s->jh = j;
	s->jt = j;
	pthread_cond_signal(&s->pcond);
	pthread_mutex_unlock(&s->plock);
}

/* Close once what is queued (an error reply, a refused CHALLENGE) is out. */
static void close_after_flush(pfs_sconn *c)
{
	c->flush_close = 1;
	rev_set(c, 0);
	pthread_mutex_lock(&c->lock);
	kick(c);
	pthread_mutex_unlock(&c->lock);
}

static void body_free(pfs_sconn *c)
{
	free(c->body);
	ST_SUB(c->srv, rx_alloc, c->cap);
	c->body = NULL;
	c->got = c->cap = 0;
}

/* Make room for at least want payload bytes: double, never past the
 * payload length, never below what is asked. */
static int body_grow(pfs_sconn *c, size_t want)
{
	size_t plen = c->h.payload_len, ncap;
	uint8_t *nb;

	if (want <= c->cap)
		return 0;
	ncap = c->cap * 2;
	if (ncap < BODY_MIN)
		ncap = BODY_MIN;
	if (ncap < want)
		ncap = want;
	if (ncap > plen)
		ncap = plen;
	nb = realloc(c->body, ncap);
	if (!nb)
		return -ENOMEM;
	ST_ADD(c->srv, rx_alloc, ncap - c->cap);
	c->body = nb;
	c->cap = ncap;
	return 0;
}

/* ---- spliced request bulk (server.h pfs_server_bulk) ---- */

/* Write n bytes at p into the pipe fd (bulk bytes that were read into
 * memory before the split); 0, or -1 when the pipe did not take them. */
static int pipe_put_bytes(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* The pipe of the frame being received could not take its bulk: read
 * what it holds back into the payload buffer and receive the rest into
 * memory as any frame.  0, or -1 when c was closed. */
static int bulk_undo(pfs_sconn *c)
{
	size_t n = c->bgot;

	ST_ADD(c->srv, bulk_undone, 1);
	c->bulk = c->bgot = 0;
	if (body_grow(c, c->got + n)) {
		bulk_put(c->srv, c->pfd, 1);
		conn_close(c, "out of memory", PFS_LOG_WARNING);
		return -1;
	}
	while (n) {
		ssize_t r = read(c->pfd[0], c->body + c->got, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		c->got += (size_t)r;
		n -= (size_t)r;
	}
	bulk_put(c->srv, c->pfd, n);
	if (n) {
		conn_close(c, "bulk pipe lost bytes", PFS_LOG_WARNING);
		return -1;
	}
	return 0;
}

/* The first bulk->head payload bytes of c's frame are in c->body: ask
 * whether its tail is bulk to splice, and if so take a pipe and move the
 * bulk bytes already read (past the fields) into it. */
static void bulk_start(pfs_sconn *c)
{
	pfs_server *s = c->srv;
	const pfs_server_bulk *b = s->opts.bulk;
	size_t plen = c->h.payload_len, n, fields;

	c->asked = 1;
	n = b->split(s->ctx, &c->h, c->body);
	if (!n || n > plen)
		return;
	fields = plen - n;
	/* what a MAC covers must be checked in memory */
	if (c->authed && pfs_auth_covered(&c->sess, &c->h) > fields)
		return;
	if (b->pipe_get(s->ctx, c->pfd)) {
		c->pfd[0] = c->pfd[1] = -1;
		return;
	}
	if (c->got > fields && pipe_put_bytes(c->pfd[1], c->body + fields, c->got - fields)) {
		/* cannot happen (an empty pipe, a few bytes); the bytes are
		 * still in the payload buffer: receive the frame there */
		bulk_put(s, c->pfd, 1);
		return;
	}
	c->bulk = n;
	c->bgot = c->got > fields ? c->got - fields : 0;
	c->got -= c->bgot;
	ST_ADD(s, bulk_spliced, 1);
}

/* Bulk bytes of c's frame already in its input buffer into its pipe.  0,
 * or -1 when c was closed. */
static int bulk_feed(pfs_sconn *c)
{
	size_t n = evbuffer_get_length(c->in);

	if (n > c->bulk - c->bgot)
		n = c->bulk - c->bgot;
	while (n) {
		int w = evbuffer_write_atmost(c->in, c->pfd[1], (ev_ssize_t)n);

		if (w <= 0)
			return bulk_undo(c); /* the rest follows into memory */
		c->bgot += (size_t)w;
		n -= (size_t)w;
	}
	return 0;
}

/* The socket is readable and c's frame wants bulk: splice what is there
 * into its pipe.  0 with *n > 0 (go on), 1 when nothing moved (*n 0 at
 * the end of the stream, else -1 with errno set, as read(2)), or -1 when
 * c was closed. */
static int bulk_splice(pfs_sconn *c, ssize_t *n)
{
	int avail = 0;

	*n = splice(c->fd, NULL, c->pfd[1], NULL, c->bulk - c->bgot,
		    SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
	if (*n > 0) {
		c->bgot += (size_t)*n;
		return 0;
	}
	if (*n < 0 && errno == EAGAIN && ioctl(c->fd, FIONREAD, &avail) == 0 && avail > 0) {
		/* bytes wait but the pipe is full: into memory instead */
		if (bulk_undo(c))
			return -1;
		*n = 1;
		return 0;
	}
	return 1;
}

/* A whole frame is in c->h / c->body (and its bulk in c->pfd).  0, or -1
 * when c was closed. */
static int frame_done(pfs_sconn *c)
{
	pfs_server *s = c->srv;
	uint8_t *p = c->body;
	int pfd[2] = { c->pfd[0], c->pfd[1] };
	size_t bulk = c->bulk;
	int ok;

	if (!p) /* payload_len 0: handlers get a buffer all the same */
		p = malloc(1);
	else
		ST_SUB(s, rx_alloc, c->cap);
	c->body = NULL;
	c->got = c->cap = 0;
	c->pfd[0] = c->pfd[1] = -1;
	c->bulk = c->bgot = 0;
	c->frame_ms0 = 0;
	c->st = CS_HDR;
	if (!p) {
		bulk_put(s, pfd, bulk);
		conn_close(c, "out of memory", PFS_LOG_WARNING);
		return -1;
	}
	if (c->authed &&
	    pfs_auth_open(&c->sess, &c->h, p, c->h.payload_len - bulk, NULL, 0)) {
		free(p);
		bulk_put(s, pfd, bulk);
		ST_ADD(s, mac_failed, 1);
		conn_close(c, "bad frame MAC", PFS_LOG_NOTICE);
		return -1;
	}
	if (c->h.flags & PFS_F_REPLY) {
		free(p);
		bulk_put(s, pfd, bulk);
		ST_ADD(s, bad_frames, 1);
		reply(c, &c->h, -EBADMSG, 0, NULL, 0, NULL, 0, 0);
		return 0;
	}
	pthread_mutex_lock(&c->lock);
	ok = can_dispatch(c, &c->h);
	if (ok)
		inflight_add(c, &c->h);
	else
		c->held = 1;
	pthread_mutex_unlock(&c->lock);
	if (ok) {
		dispatch(c, &c->h, p, pfd, bulk);
		return 0;
	}
	c->paused = 1;
	c->ph = c->h;
	c->pbody = p;
	c->ppfd[0] = pfd[0];
	c->ppfd[1] = pfd[1];
	c->pbulk = bulk;
	ST_ADD(s, paused, 1);
	rev_set(c, 0);
	return 0;
}

/* One handshake message complete in c->in?  0 to go on, 1 to wait. */
static int handshake_step(pfs_sconn *c)
{
	pfs_server *s = c->srv;
	uint8_t in[PFS_AUTH_HELLO_LEN], out[PFS_AUTH_CHAL_LEN];
	pfs_auth_sess sess;
	size_t need = c->st == CS_HELLO ? PFS_AUTH_HELLO_LEN : PFS_AUTH_PROOF_LEN;
	int rc;

	if (evbuffer_get_length(c->in) < need)
		return 1;
	evbuffer_remove(c->in, in, need);
	if (c->st == CS_HELLO) {
		rc = pfs_auth_srv_hello(&c->asrv, s->opts.auth, in, out);
		send_raw(c, out, PFS_AUTH_CHAL_LEN);
		if (rc || out[5]) {
			ST_ADD(s, auth_failed, 1);
			pfs_log(PFS_LOG_NOTICE, "%s: %s: handshake refused: %s", s->name, c->peer,
				pfs_strerror(rc ? rc : -EACCES));
			close_after_flush(c);
			return 1;
		}
		c->st = CS_PROOF;
		return 0;
	}
	rc = pfs_auth_srv_proof(&c->asrv, in, out, &sess);
	send_raw(c, out, PFS_AUTH_RESULT_LEN);
	if (rc) {
		ST_ADD(s, auth_failed, 1);
		pfs_log(PFS_LOG_NOTICE, "%s: %s: handshake failed: %s", s->name, c->peer,
			pfs_strerror(rc));
		close_after_flush(c);
		return 1;
	}
	pthread_mutex_lock(&c->lock);
	c->sess = sess;
	c->authed = 1;
	c->role = sess.peer_role;
	pthread_mutex_unlock(&c->lock);
	explicit_bzero(&sess, sizeof(sess));
	c->st = CS_HDR;
	return 0;
}

/* Must split() be asked about c's frame, now or once its head is in? */
static int split_pending(const pfs_sconn *c)
{
	const pfs_server_bulk *b = c->srv->opts.bulk;

	return b && !c->asked && c->h.payload_len > b->head;
}

/* Is the head of c's frame in, and split() not asked yet? */
static int split_due(const pfs_sconn *c)
{
	return split_pending(c) && c->got >= c->srv->opts.bulk->head;
}

/* Payload bytes of c's frame to read into memory before the next step. */
static size_t body_want(const pfs_sconn *c)
{
	if (split_pending(c))
		return c->srv->opts.bulk->head;
	return c->h.payload_len - c->bulk;
}

/* Cut frames out of c->in.  0, or -1 when c was closed. */
static int process(pfs_sconn *c)
{
	pfs_server *s = c->srv;

	while (!c->paused && !c->flush_close) {
		size_t avail = evbuffer_get_length(c->in);

		if (c->st == CS_HELLO || c->st == CS_PROOF) {
			if (handshake_step(c))
				return 0;
			continue;
		}
		if (c->st == CS_HDR) {
			uint8_t hb[PFS_HDR_LEN];
			int rc;

			if (avail && !c->frame_ms0)
				c->frame_ms0 = pfs_clock_ms();
			if (avail < PFS_HDR_LEN)
				return 0;
			evbuffer_remove(c->in, hb, sizeof(hb));
			avail -= sizeof(hb);
			memset(&c->h, 0, sizeof(c->h));
			rc = pfs_hdr_decode(hb, sizeof(hb), s->opts.max_payload, &c->h);
			if (rc) {
				pfs_hdr e;

				ST_ADD(s, bad_frames, 1);
				pfs_log(PFS_LOG_NOTICE, "%s: closing %s: %s", s->name, c->peer,
					pfs_strerror(rc));
				/* Best effort: tell the peer why before closing. */
				pfs_hdr_init(&e, c->h.opcode, c->h.req_id, 0, NULL);
				reply(c, &e, rc, 0, NULL, 0, NULL, 0, 0);
				close_after_flush(c);
				return 0;
			}
			c->st = CS_BODY;
			c->got = 0;
			c->asked = 0;
		}
		/* CS_BODY: the bytes for memory (first the head split() needs),
		 * then those of a spliced bulk */
		size_t mem = body_want(c);

		if (c->got < mem) {
			size_t take = mem - c->got;

			if (take > avail)
				take = avail;
			if (!take)
				return 0;
			if (body_grow(c, c->got + take)) {
				conn_close(c, "out of memory", PFS_LOG_WARNING);
				return -1;
			}
			evbuffer_remove(c->in, c->body + c->got, take);
			c->got += take;
			if (c->got < mem)
				return 0;
		}
		if (split_due(c)) {
			bulk_start(c);
			continue;
		}
		if (c->bgot < c->bulk) {
			if (bulk_feed(c))
				return -1;
			if (c->bgot < c->bulk)
				return 0;
		}
		if (frame_done(c))
			return -1;
	}
	return 0;
}

/* Up to want bytes from fd appended to in: one readv into reserved
 * space (evbuffer_read would first ask FIONREAD how much is there: one
 * more system call per read event, i.e. per small request).  As read(2). */
static ssize_t read_into(struct evbuffer *in, int fd, size_t want)
{
	struct evbuffer_iovec v[2];
	struct iovec iov[2];
	int nv = evbuffer_reserve_space(in, (ev_ssize_t)want, v, 2);
	ssize_t n;

	if (nv <= 0) {
		errno = ENOMEM;
		return -1;
	}
	/* the space reserved may be larger than asked: read no more */
	size_t room = want;

	for (int i = 0; i < nv; i++) {
		iov[i].iov_base = v[i].iov_base;
		iov[i].iov_len = v[i].iov_len < room ? v[i].iov_len : room;
		room -= iov[i].iov_len;
	}
	n = readv(fd, iov, nv);
	if (n <= 0) {
		evbuffer_commit_space(in, v, 0);
		return n;
	}
	/* commit exactly what arrived: the vectors it filled */
	size_t left = (size_t)n;
	int used = 0;
	while (used < nv && left) {
		if (v[used].iov_len > left)
			v[used].iov_len = left;
		left -= v[used].iov_len;
		used++;
	}
	if (evbuffer_commit_space(in, v, used)) {
		errno = EIO;
		return -1;
	}
	return n;
}

static void on_read(evutil_socket_t fd, short what, void *arg)
{
	pfs_sconn *c = arg;
	ssize_t n;

	if (c->st == CS_BODY && !evbuffer_get_length(c->in) && c->bgot < c->bulk) {
		/* Bulk bytes from the socket into the frame's pipe; n as
		 * read(2) would say (0: the peer closed mid-frame). */
		if (bulk_splice(c, &n) < 0)
			return;
	} else if (c->st == CS_BODY && !evbuffer_get_length(c->in)) {
		/* Payload bytes straight into the frame's buffer (no further
		 * than the head while split() is still to be asked). */
		size_t lim = body_want(c);

		if (c->got == c->cap && body_grow(c, c->got + 1)) {
			conn_close(c, "out of memory", PFS_LOG_WARNING);
			return;
		}
		if (lim > c->cap)
			lim = c->cap;
		if (lim <= c->got) { /* cannot happen: process() took them */
			process(c);
			return;
		}
		n = read(fd, c->body + c->got, lim - c->got);
		if (n > 0)
			c->got += (size_t)n;
	} else {
		size_t want = READ_CHUNK, have = evbuffer_get_length(c->in);
		const pfs_server_bulk *b = c->srv->opts.bulk;

		if (c->st == CS_HELLO)
			want = PFS_AUTH_HELLO_LEN > have ? PFS_AUTH_HELLO_LEN - have : 0;
		else if (c->st == CS_PROOF)
			want = PFS_AUTH_PROOF_LEN > have ? PFS_AUTH_PROOF_LEN - have : 0;
		else if (b && c->st == CS_HDR && have < PFS_HDR_LEN + b->head)
			/* no further than a header and the head split() needs:
			 * a bulk behind them stays in the socket for splice */
			want = PFS_HDR_LEN + b->head - have;
		if (!want) { /* cannot happen: process() took the message */
			process(c);
			return;
		}
		n = read_into(c->in, fd, want);
	}
	if (n == 0) {
		conn_close(c, NULL, 0);
		return;
	}
	if (n < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return;
		conn_close(c, errno == ECONNRESET ? NULL : strerror(errno), PFS_LOG_NOTICE);
		return;
	}
	c->rx_ms = pfs_clock_ms();
	process(c);
}

/* The loop's look at a kicked connection: write, then retry a held frame. */
static void service(pfs_sconn *c)
{
	int err, empty, resume = 0;

	pthread_mutex_lock(&c->lock);
	if (c->closed) {
		pthread_mutex_unlock(&c->lock);
		return;
	}
	err = flush_locked(c);
	empty = !evbuffer_get_length(c->out);
	if (!err && c->paused && !c->flush_close && can_dispatch(c, &c->h)) {
		inflight_add(c, &c->h);
		c->held = 0;
		resume = 1;
	}
	pthread_mutex_unlock(&c->lock);
	if (err) {
		conn_close(c, err == -EPIPE || err == -ECONNRESET ? NULL : strerror(-err),
			   PFS_LOG_NOTICE);
		return;
	}
	if (c->flush_close) {
		if (empty)
			conn_close(c, NULL, 0);
		return;
	}
	if (!resume)
		return;
	c->paused = 0;
	ST_SUB(c->srv, paused, 1);
	if (c->frame_ms0) /* we, not the peer, held the rest back */
		c->frame_ms0 = pfs_clock_ms();
	dispatch(c, &c->ph, c->pbody, c->ppfd, c->pbulk);
	c->pbody = NULL;
	c->ppfd[0] = c->ppfd[1] = -1;
	c->pbulk = 0;
	if (process(c) == 0 && !c->paused && !c->flush_close)
		rev_set(c, 1);
}

static void on_write(evutil_socket_t fd, short what, void *arg)
{
	service(arg);
}

/* ---- connections ---- */

static void peer_name(int fd, char *out, size_t n)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char ip[INET6_ADDRSTRLEN] = "?";
	unsigned port = 0;

	if (getpeername(fd, (struct sockaddr *)&ss, &sl) == 0) {
		if (ss.ss_family == AF_INET) {
			struct sockaddr_in *a = (struct sockaddr_in *)&ss;
			inet_ntop(AF_INET, &a->sin_addr, ip, sizeof(ip));
			port = ntohs(a->sin_port);
		} else if (ss.ss_family == AF_INET6) {
			struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
			inet_ntop(AF_INET6, &a->sin6_addr, ip, sizeof(ip));
			port = ntohs(a->sin6_port);
		}
	}
	snprintf(out, n, "%s:%u", ip, port);
}

static void conn_close(pfs_sconn *c, const char *why, int level)
{
	pfs_server *s = c->srv;
	size_t q;

	pthread_mutex_lock(&c->lock);
	if (c->closed) {
		pthread_mutex_unlock(&c->lock);
		return;
	}
	c->closed = 1;
	q = evbuffer_get_length(c->out);
	pthread_mutex_unlock(&c->lock);
	if (why)
		pfs_log(level, "%s: closing %s: %s", s->name, c->peer, why);
	ST_SUB(s, queued, q);
	event_free(c->rev);
	event_free(c->wev);
	close(c->fd);
	evbuffer_free(c->in);
	evbuffer_free(c->out);
	c->out = NULL;
	if (c->body)
		body_free(c);
	bulk_put(s, c->pfd, 1);
	if (c->paused) {
		free(c->pbody);
		bulk_put(s, c->ppfd, 1);
		ST_SUB(s, paused, 1);
	}
	pfs_auth_srv_done(&c->asrv);
	if (c->prev)
		c->prev->next = c->next;
	else
		s->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	atomic_fetch_sub(&s->nconns, 1);
	pfs_sconn_put(c);
}

static void sock_opts(int fd)
{
	int one = 1, idle = 60, intvl = 10, cnt = 6;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
}

static int conn_new(pfs_server *s, int fd)
{
	pfs_sconn *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->srv = s;
	c->fd = fd;
	c->refs = 1;
	c->pfd[0] = c->pfd[1] = c->ppfd[0] = c->ppfd[1] = -1;
	pthread_mutex_init(&c->lock, NULL);
	c->in = evbuffer_new();
	c->out = evbuffer_new();
	c->rev = event_new(s->base, fd, EV_READ | EV_PERSIST, on_read, c);
	c->wev = event_new(s->base, fd, EV_WRITE | EV_PERSIST, on_write, c);
	if (!c->in || !c->out || !c->rev || !c->wev) {
		if (c->in)
			evbuffer_free(c->in);
		if (c->out)
			evbuffer_free(c->out);
		if (c->rev)
			event_free(c->rev);
		if (c->wev)
			event_free(c->wev);
		pthread_mutex_destroy(&c->lock);
		free(c);
		return -ENOMEM;
	}
	sock_opts(fd);
	peer_name(fd, c->peer, sizeof(c->peer));
	c->est = (size_t)s->opts.max_payload + PFS_HDR_LEN;
	c->st = s->opts.auth ? CS_HELLO : CS_HDR;
	c->role = s->opts.auth ? PFS_ROLE_NONE : PFS_ROLE_ANY;
	c->open_ms = c->rx_ms = pfs_clock_ms();
	c->next = s->conns;
	if (s->conns)
		s->conns->prev = c;
	s->conns = c;
	atomic_fetch_add(&s->nconns, 1);
	rev_set(c, 1);
	return 0;
}

/* Over max_conns: a short -EBUSY frame (not before a handshake), close. */
static void refuse(pfs_server *s, int fd)
{
	uint64_t now = pfs_clock_ms();

	ST_ADD(s, refused_full, 1);
	if (!s->opts.auth) {
		uint8_t hb[PFS_HDR_LEN];
		pfs_hdr e;

		pfs_hdr_init(&e, PFS_OP_PING, 0, 0, NULL);
		e.flags = PFS_F_REPLY;
		e.status = -EBUSY;
		pfs_hdr_encode(&e, hb);
		if (send(fd, hb, sizeof(hb), MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
			pfs_log(PFS_LOG_DEBUG, "%s: refuse: %s", s->name, strerror(errno));
	}
	close(fd);
	if (now - s->refuse_log_ms >= 1000) {
		s->refuse_log_ms = now;
		pfs_log(PFS_LOG_WARNING, "%s: %u connections (max_conns): refusing new ones",
			s->name, atomic_load(&s->nconns));
	}
}

static void on_accept(evutil_socket_t lfd, short what, void *arg)
{
	pfs_server *s = arg;

	for (int i = 0; i < ACCEPT_BATCH; i++) {
		int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			    errno == ENOMEM) {
				/* Out of descriptors: pause accepting for 100 ms
				 * rather than spin on a pending connection. */
				struct timeval tv = { 0, 100000 };

				pfs_log(PFS_LOG_WARNING, "%s: accept: %s", s->name,
					strerror(errno));
				event_del(s->lev);
				evtimer_add(s->lretry, &tv);
			}
			return;
		}
		if (atomic_load(&s->nconns) >= s->opts.max_conns) {
			refuse(s, fd);
			continue;
		}
		if (conn_new(s, fd)) {
			close(fd);
			continue;
		}
		ST_ADD(s, accepted, 1);
	}
}

static void on_accept_retry(evutil_socket_t fd, short what, void *arg)
{
	pfs_server *s = arg;

	event_add(s->lev, NULL);
}

/* Timeouts: handshake, frame (slowloris), send, idle. */
static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	pfs_server *s = arg;
	const pfs_server_opts *o = &s->opts;
	uint64_t now = pfs_clock_ms();
	pfs_sconn *c, *n;

	if (o->tick)
		o->tick(s->ctx, now);
	for (c = s->conns; c; c = n) {
		const char *why = NULL;
		size_t q;
		unsigned inflight;
		uint64_t tx;

		n = c->next;
		pthread_mutex_lock(&c->lock);
		q = evbuffer_get_length(c->out);
		inflight = c->inflight;
		tx = c->tx_ms;
		pthread_mutex_unlock(&c->lock);
		if (q && o->send_timeout_ms > 0 && now - tx >= (uint64_t)o->send_timeout_ms)
			why = "send timeout (peer does not read)";
		else if ((c->st == CS_HELLO || c->st == CS_PROOF) && o->handshake_ms > 0 &&
			 now - c->open_ms >= (uint64_t)o->handshake_ms)
			why = "handshake timeout";
		else if (c->frame_ms0 && !c->paused && !c->flush_close && o->frame_ms > 0 &&
			 now - c->frame_ms0 >= (uint64_t)o->frame_ms)
			why = "frame timeout (incomplete frame)";
		if (why) {
			ST_ADD(s, timed_out, 1);
			conn_close(c, why, PFS_LOG_NOTICE);
			continue;
		}
		if (o->idle_ms > 0 && !q && !inflight && !c->paused && !c->frame_ms0 &&
		    c->st == CS_HDR && now - c->rx_ms >= (uint64_t)o->idle_ms) {
			ST_ADD(s, timed_out, 1);
			conn_close(c, "idle", PFS_LOG_INFO);
		}
	}
}

/* The eventfd: kicked connections, and the stop request. */
static void on_kick(evutil_socket_t fd, short what, void *arg)
{
	pfs_server *s = arg;
	uint64_t v;
	pfs_sconn *list;

	if (read(fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		pfs_log(PFS_LOG_WARNING, "%s: eventfd: %s", s->name, strerror(errno));
	pthread_mutex_lock(&s->klock);
	list = s->kick;
	s->kick = NULL;
	for (pfs_sconn *c = list; c; c = c->knext)
		c->kicked = 0;
	pthread_mutex_unlock(&s->klock);
	while (list) {
		pfs_sconn *c = list;

		list = c->knext;
		service(c);
		pfs_sconn_put(c);
	}
	if (atomic_load(&s->stopping)) {
		event_del(s->lev);
		event_del(s->lretry);
		event_del(s->tick);
		while (s->conns)
			conn_close(s->conns, NULL, 0);
		event_base_loopbreak(s->base);
	}
}

static void *loop_main(void *arg)
{
	pfs_server *s = arg;

	s->loop_tid = pthread_self();
	s->loop_tid_set = 1;
	event_base_dispatch(s->base);
	return NULL;
}

/* ---- lifetime ---- */

static void server_free(pfs_server *s)
{
	if (s->lev)
		event_free(s->lev);
	if (s->eev)
		event_free(s->eev);
	if (s->tick)
		event_free(s->tick);
	if (s->lretry)
		event_free(s->lretry);
	if (s->base)
		event_base_free(s->base);
	if (s->lfd >= 0)
		close(s->lfd);
	if (s->efd >= 0)
		close(s->efd);
	free(s->workers);
	pthread_mutex_destroy(&s->klock);
	pthread_mutex_destroy(&s->plock);
	pthread_cond_destroy(&s->pcond);
	free(s);
}

static void stop_workers(pfs_server *s)
{
	job *j;

	pthread_mutex_lock(&s->plock);
	s->pstop = 1;
	j = s->jh; /* requests not started: dropped */
	s->jh = s->jt = NULL;
	pthread_cond_broadcast(&s->pcond);
	pthread_mutex_unlock(&s->plock);
	while (j) {
		job *n = j->next;

		free(j->payload);
		bulk_put(s, j->pfd, j->bulk);
		pfs_sconn_put(j->c);
		free(j);
		j = n;
	}
	for (unsigned i = 0; i < s->nworkers; i++)
		pthread_join(s->workers[i], NULL);
	s->nworkers = 0;
}

static pthread_mutex_t defaults_lock = PTHREAD_MUTEX_INITIALIZER;
static pfs_server_opts defaults; /* the daemon's configuration, see server.h */

void pfs_server_set_defaults(const pfs_server_opts *d)
{
	pthread_mutex_lock(&defaults_lock);
	defaults = *d;
	defaults.host = defaults.name = NULL;
	defaults.auth = NULL;
	pthread_mutex_unlock(&defaults_lock);
}

/* Fill the limits left 0: configured defaults, then built-in ones. */
static void apply_defaults(pfs_server_opts *o)
{
	pfs_server_opts d;

	pthread_mutex_lock(&defaults_lock);
	d = defaults;
	pthread_mutex_unlock(&defaults_lock);
#define DEF(f, v) \
	do { \
		if (!o->f) \
			o->f = d.f ? d.f : (v); \
	} while (0)
	DEF(max_conns, 1024);
	DEF(max_payload, PFS_MAX_PAYLOAD);
	DEF(workers, 8);
	DEF(max_inflight, 64);
	DEF(max_queued_bytes, 8u << 20);
	DEF(handshake_ms, 5000);
	DEF(frame_ms, 30000);
	DEF(send_timeout_ms, 30000);
	DEF(idle_ms, 600000);
#undef DEF
}

static int tick_ms(const pfs_server_opts *o)
{
	int t = 1000;
	int v[] = { o->auth ? o->handshake_ms : 0, o->frame_ms, o->send_timeout_ms, o->idle_ms };

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		if (v[i] > 0 && v[i] / 8 < t)
			t = v[i] / 8;
	return t < 5 ? 5 : t;
}

int pfs_server_start(const pfs_server_opts *opts, pfs_server_handler fn, void *ctx,
		     pfs_server **out)
{
	pfs_server *s = calloc(1, sizeof(*s));
	sigset_t all, old;
	struct timeval tv;
	int rc, t;

	if (!s)
		return -ENOMEM;
	s->opts = *opts;
	apply_defaults(&s->opts);
	snprintf(s->name, sizeof(s->name), "%s", opts->name ? opts->name : "server");
	s->fn = fn;
	s->ctx = ctx;
	s->lfd = s->efd = -1;
	pthread_mutex_init(&s->klock, NULL);
	pthread_mutex_init(&s->plock, NULL);
	pthread_cond_init(&s->pcond, NULL);
	rc = pfs_net_listen(opts->host, opts->port, &s->lfd);
	if (rc)
		goto fail;
	rc = pfs_net_local_port(s->lfd, &s->port);
	if (rc)
		goto fail;
	if (fcntl(s->lfd, F_SETFL, fcntl(s->lfd, F_GETFL) | O_NONBLOCK) < 0) {
		rc = -errno;
		goto fail;
	}
	s->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (s->efd < 0) {
		rc = -errno;
		goto fail;
	}
	rc = -ENOMEM;
	s->base = event_base_new();
	if (!s->base)
		goto fail;
	s->lev = event_new(s->base, s->lfd, EV_READ | EV_PERSIST, on_accept, s);
	s->eev = event_new(s->base, s->efd, EV_READ | EV_PERSIST, on_kick, s);
	s->tick = event_new(s->base, -1, EV_PERSIST, on_tick, s);
	s->lretry = evtimer_new(s->base, on_accept_retry, s);
	s->workers = calloc(s->opts.workers, sizeof(*s->workers));
	if (!s->lev || !s->eev || !s->tick || !s->lretry || !s->workers)
		goto fail;
	t = tick_ms(&s->opts);
	tv.tv_sec = t / 1000;
	tv.tv_usec = (t % 1000) * 1000;
	event_add(s->lev, NULL);
	event_add(s->eev, NULL);
	event_add(s->tick, &tv);
	/* Threads block every signal: the daemons handle them on main. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (; !s->opts.inline_handler && s->nworkers < s->opts.workers; s->nworkers++)
		if (pthread_create(&s->workers[s->nworkers], NULL, worker_main, s))
			break;
	rc = 0;
	if (!s->opts.inline_handler && s->nworkers < s->opts.workers)
		rc = -EAGAIN;
	else if (pthread_create(&s->loop, NULL, loop_main, s))
		rc = -EAGAIN;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		stop_workers(s);
		goto fail;
	}
	*out = s;
	return 0;
fail:
	server_free(s);
	return rc;
}

uint16_t pfs_server_port(const pfs_server *s) { return s->port; }

void pfs_server_stop(pfs_server *s)
{
	uint64_t one = 1;
	pfs_sconn *list;

	if (!s)
		return;
	/* The loop closes every connection (handlers' replies from now on
	 * return -EPIPE), then exits. */
	atomic_store(&s->stopping, 1);
	if (write(s->efd, &one, sizeof(one)) < 0)
		pfs_log(PFS_LOG_WARNING, "%s: eventfd: %s", s->name, strerror(errno));
	pthread_join(s->loop, NULL);
	/* Requests not yet started are dropped; running handlers finish. */
	stop_workers(s);
	pthread_mutex_lock(&s->klock);
	list = s->kick;
	s->kick = NULL;
	pthread_mutex_unlock(&s->klock);
	while (list) {
		pfs_sconn *c = list;

		list = c->knext;
		pfs_sconn_put(c);
	}
	server_free(s);
}

void pfs_server_get_stats(pfs_server *s, pfs_server_stats *out)
{
	memset(out, 0, sizeof(*out));
	out->conns = atomic_load(&s->nconns);
	out->accepted = atomic_load(&s->accepted);
	out->refused_full = atomic_load(&s->refused_full);
	out->auth_failed = atomic_load(&s->auth_failed);
	out->mac_failed = atomic_load(&s->mac_failed);
	out->timed_out = atomic_load(&s->timed_out);
	out->bad_frames = atomic_load(&s->bad_frames);
	out->rx_alloc_bytes = atomic_load(&s->rx_alloc);
	out->queued_bytes = atomic_load(&s->queued);
	out->queued_peak = atomic_load(&s->queued_peak);
	out->paused = atomic_load(&s->paused);
	out->bulk_spliced = atomic_load(&s->bulk_spliced);
	out->bulk_undone = atomic_load(&s->bulk_undone);
}
