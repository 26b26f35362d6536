/* server.c — thread-per-connection frame server (see server.h). */
#include "common/server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/auth.h"
#include "common/log.h"
#include "common/net.h"

struct pfs_sconn {
	pfs_server *srv;
	int fd;
	int refs;               /* guarded by srv->lock */
	pthread_mutex_t send_lock;
	char peer[64];
	pfs_sconn *next, *prev; /* live list; guarded by srv->lock */
};

struct pfs_server {
	pfs_server_opts opts;
	char name[32];
	int lfd;
	int wake[2];            /* pipe to interrupt the accept loop */
	uint16_t port;
	pthread_t acceptor;
	pthread_mutex_t lock;
	pthread_cond_t idle;
	pfs_sconn *conns;       /* guarded by lock */
	unsigned nconns;        /* connection threads running; guarded by lock */
	int stopping;           /* guarded by lock */
	pfs_server_handler fn;
	void *ctx;
};

static void sconn_free(pfs_sconn *c)
{
	close(c->fd);
	pthread_mutex_destroy(&c->send_lock);
	free(c);
}

void pfs_sconn_get(pfs_sconn *c)
{
	pthread_mutex_lock(&c->srv->lock);
	c->refs++;
	pthread_mutex_unlock(&c->srv->lock);
}

void pfs_sconn_put(pfs_sconn *c)
{
	pfs_server *s = c->srv;
	int last;

	pthread_mutex_lock(&s->lock);
	last = --c->refs == 0;
	if (last) {
		if (c->prev)
			c->prev->next = c->next;
		else
			s->conns = c->next;
		if (c->next)
			c->next->prev = c->prev;
		pthread_cond_broadcast(&s->idle);
	}
	pthread_mutex_unlock(&s->lock);
	if (last)
		sconn_free(c);
}

const char *pfs_sconn_peer(const pfs_sconn *c) { return c->peer; }

int pfs_sconn_reply(pfs_sconn *c, const pfs_hdr *req, int status, const void *payload,
		    size_t len, const void *bulk, size_t bulk_len)
{
	return pfs_sconn_reply_credit(c, req, status, 0, payload, len, bulk, bulk_len);
}

int pfs_sconn_reply_credit(pfs_sconn *c, const pfs_hdr *req, int status, uint32_t credit,
			   const void *payload, size_t len, const void *bulk,
			   size_t bulk_len)
{
	pfs_hdr h = *req;
	int rc;

	h.flags = PFS_F_REPLY;
	h.status = status;
	h.credit = credit;
	if (status)
		len = bulk_len = 0;
	pthread_mutex_lock(&c->send_lock);
	rc = pfs_net_send_frame(c->fd, &h, payload, len, bulk, bulk_len);
	pthread_mutex_unlock(&c->send_lock);
	if (rc)
		shutdown(c->fd, SHUT_RDWR); /* let the reader thread notice */
	return rc;
}

static void *conn_main(void *arg)
{
	pfs_sconn *c = arg;
	pfs_server *s = c->srv;

	for (;;) {
		pfs_hdr h;
		uint8_t *dyn, *data;
		int rc = pfs_net_recv_frame(c->fd, &h, s->opts.max_payload, NULL, 0, &dyn, &data);

		if (rc) {
			if (rc != -ECONNRESET && rc != -EPIPE)
				pfs_log(PFS_LOG_NOTICE, "%s: closing %s: %s", s->name, c->peer,
					pfs_strerror(rc));
			if (rc == -EBADMSG || rc == -EPROTONOSUPPORT || rc == -EMSGSIZE) {
				/* Best effort: tell the peer why before closing. */
				pfs_hdr e;
				pfs_hdr_init(&e, h.opcode, h.req_id, 0, NULL);
				pfs_sconn_reply(c, &e, rc, NULL, 0, NULL, 0);
			}
			break;
		}
		if (h.flags & PFS_F_REPLY) {
			free(dyn);
			pfs_sconn_reply(c, &h, -EBADMSG, NULL, 0, NULL, 0);
			continue;
		}
		s->fn(s->ctx, c, &h, dyn);
	}
	shutdown(c->fd, SHUT_RDWR);
	pthread_mutex_lock(&s->lock);
	s->nconns--;
	pthread_cond_broadcast(&s->idle);
	pthread_mutex_unlock(&s->lock);
	pfs_sconn_put(c);
	return NULL;
}

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

static void *accept_main(void *arg)
{
	pfs_server *s = arg;

	for (;;) {
		struct pollfd pfd[2] = { { s->lfd, POLLIN, 0 }, { s->wake[0], POLLIN, 0 } };
		int fd, one = 1;
		pthread_attr_t attr;
		pthread_t t;
		pfs_sconn *c;

		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd[1].revents)
			break;
		fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE)
				usleep(10000);
			continue;
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		pthread_mutex_lock(&s->lock);
		if (s->stopping || s->nconns >= s->opts.max_conns) {
			pthread_mutex_unlock(&s->lock);
			close(fd);
			continue;
		}
		c = calloc(1, sizeof(*c));
		if (!c) {
			pthread_mutex_unlock(&s->lock);
			close(fd);
			continue;
		}
		c->srv = s;
		c->fd = fd;
		c->refs = 1;
		pthread_mutex_init(&c->send_lock, NULL);
		peer_name(fd, c->peer, sizeof(c->peer));
		c->next = s->conns;
		if (s->conns)
			s->conns->prev = c;
		s->conns = c;
		s->nconns++;
		pthread_mutex_unlock(&s->lock);
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		pthread_attr_setstacksize(&attr, 256 << 10);
		if (pthread_create(&t, &attr, conn_main, c)) {
			pthread_mutex_lock(&s->lock);
			s->nconns--;
			pthread_mutex_unlock(&s->lock);
			pfs_sconn_put(c);
		}
		pthread_attr_destroy(&attr);
	}
	return NULL;
}

int pfs_server_start(const pfs_server_opts *opts, pfs_server_handler fn, void *ctx,
		     pfs_server **out)
{
	pfs_server *s = calloc(1, sizeof(*s));
	int rc;

	if (!s)
		return -ENOMEM;
	s->opts = *opts;
	if (!s->opts.max_conns)
		s->opts.max_conns = 1024;
	if (!s->opts.max_payload)
		s->opts.max_payload = PFS_MAX_PAYLOAD;
	snprintf(s->name, sizeof(s->name), "%s", opts->name ? opts->name : "server");
	s->fn = fn;
	s->ctx = ctx;
	s->lfd = -1;
	s->wake[0] = s->wake[1] = -1;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->idle, NULL);
	rc = pfs_net_listen(opts->host, opts->port, &s->lfd);
	if (rc)
		goto fail;
	rc = pfs_net_local_port(s->lfd, &s->port);
	if (rc)
		goto fail;
	if (pipe2(s->wake, O_CLOEXEC)) {
		rc = -errno;
		goto fail;
	}
	if (pthread_create(&s->acceptor, NULL, accept_main, s)) {
		rc = -EAGAIN;
		goto fail;
	}
	*out = s;
	return 0;
fail:
	if (s->lfd >= 0)
		close(s->lfd);
	if (s->wake[0] >= 0) {
		close(s->wake[0]);
		close(s->wake[1]);
	}
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->idle);
	free(s);
	return rc;
}

uint16_t pfs_server_port(const pfs_server *s) { return s->port; }

void pfs_server_stop(pfs_server *s)
{
	if (!s)
		return;
	if (write(s->wake[1], "x", 1) < 0)
		pfs_log(PFS_LOG_WARNING, "%s: wake pipe: %s", s->name, strerror(errno));
	pthread_join(s->acceptor, NULL);
	close(s->lfd);
	pthread_mutex_lock(&s->lock);
	s->stopping = 1;
	for (pfs_sconn *c = s->conns; c; c = c->next)
		shutdown(c->fd, SHUT_RDWR);
	/* Wait for connection threads, then for handlers' references. */
	while (s->nconns > 0 || s->conns)
		pthread_cond_wait(&s->idle, &s->lock);
	pthread_mutex_unlock(&s->lock);
	close(s->wake[0]);
	close(s->wake[1]);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->idle);
	free(s);
}

/* Until the event-driven core with authentication lands, every peer is
 * unauthenticated and may do anything (see server.h). */
unsigned pfs_sconn_role(const pfs_sconn *c)
{
	(void)c;
	return PFS_ROLE_ANY;
}

void pfs_server_get_stats(pfs_server *s, pfs_server_stats *out)
{
	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&s->lock);
	out->conns = s->nconns;
	pthread_mutex_unlock(&s->lock);
}
