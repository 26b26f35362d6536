/* net.c — sockets and frames (see net.h). */
#include "common/net.h"

#include "common/auth.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

int pfs_addr_parse(const char *s, char *host, size_t hostsz, uint16_t *port)
{
	const char *colon, *hs = s;
	size_t hl;
	char *end;
	unsigned long p;

	if (!s)
		return -EINVAL;
	if (s[0] == '[') {
		const char *rb = strchr(s, ']');
		if (!rb || rb[1] != ':')
			return -EINVAL;
		hs = s + 1;
		hl = (size_t)(rb - hs);
		colon = rb + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon)
			return -EINVAL;
		hl = (size_t)(colon - s);
	}
	if (hl >= hostsz)
		return -EINVAL;
	memcpy(host, hs, hl);
	host[hl] = '\0';
	errno = 0;
	p = strtoul(colon + 1, &end, 10);
	if (errno || *end || colon[1] == '\0' || p > 65535)
		return -EINVAL;
	*port = (uint16_t)p;
	return 0;
}

static int resolve(const char *host, uint16_t port, int passive, struct addrinfo **res)
{
	struct addrinfo hints;
	char ps[8];
	int rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = passive ? AI_PASSIVE : 0;
	snprintf(ps, sizeof(ps), "%u", port);
	rc = getaddrinfo(host && *host ? host : NULL, ps, &hints, res);
	if (rc)
		return rc == EAI_SYSTEM ? -errno : -EHOSTUNREACH;
	return 0;
}

int pfs_net_listen(const char *host, uint16_t port, int *fd)
{
	struct addrinfo *res, *ai;
	int rc, s = -1, one = 1;

	rc = resolve(host, port, 1, &res);
	if (rc)
		return rc;
	rc = -EADDRNOTAVAIL;
	for (ai = res; ai; ai = ai->ai_next) {
		s = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (s < 0) {
			rc = -errno;
			continue;
		}
		setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(s, ai->ai_addr, ai->ai_addrlen) == 0 && listen(s, 512) == 0)
			break;
		rc = -errno;
		close(s);
		s = -1;
	}
	freeaddrinfo(res);
	if (s < 0)
		return rc;
	*fd = s;
	return 0;
}

int pfs_net_local_port(int fd, uint16_t *port)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &sl))
		return -errno;
	if (ss.ss_family == AF_INET)
		*port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
	else
		*port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	return 0;
}

int pfs_net_set_timeout(int fd, int timeout_ms)
{
	struct timeval tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 };

	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)))
		return -errno;
	return 0;
}

static int connect_one(const struct addrinfo *ai, int timeout_ms, int *fd)
{
	int s, rc, one = 1;

	s = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
	if (s < 0)
		return -errno;
	rc = connect(s, ai->ai_addr, ai->ai_addrlen);
	if (rc && errno == EINPROGRESS) {
		struct pollfd pfd = { .fd = s, .events = POLLOUT };
		int err = 0;
		socklen_t el = sizeof(err);

		rc = poll(&pfd, 1, timeout_ms > 0 ? timeout_ms : -1);
		if (rc == 0) {
			close(s);
			return -ETIMEDOUT;
		}
		if (rc < 0 || getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &el) || err) {
			rc = err ? -err : -errno;
			close(s);
			return rc;
		}
	} else if (rc) {
		rc = -errno;
		close(s);
		return rc;
	}
	fcntl(s, F_SETFL, fcntl(s, F_GETFL) & ~O_NONBLOCK);
	setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	*fd = s;
	return 0;
}

int pfs_net_connect(const char *host, uint16_t port, int timeout_ms, int *fd)
{
	struct addrinfo *res, *ai;
	int rc;

	rc = resolve(host, port, 0, &res);
	if (rc)
		return rc;
	rc = -ECONNREFUSED;
	for (ai = res; ai; ai = ai->ai_next) {
		rc = connect_one(ai, timeout_ms, fd);
		if (rc == 0)
			break;
	}
	freeaddrinfo(res);
	return rc;
}

int pfs_net_write_all(int fd, const void *p, size_t n)
{
	const uint8_t *c = p;

	while (n > 0) {
		ssize_t w = send(fd, c, n, MSG_NOSIGNAL);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		}
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

int pfs_net_read_all(int fd, void *p, size_t n)
{
	uint8_t *c = p;
	size_t got = 0;

	while (got < n) {
		ssize_t r = recv(fd, c + got, n - got, 0);
		if (r == 0)
			return got == 0 ? -ECONNRESET : -EPIPE;
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		}
		got += (size_t)r;
	}
	return 0;
}

/* Write the iovec completely with sendmsg(flags). */
static int send_iov(int fd, struct iovec *iov, int n, size_t total, int flags)
{
	while (total > 0) {
		struct msghdr mh = { .msg_iov = iov, .msg_iovlen = (size_t)n };
		ssize_t w = sendmsg(fd, &mh, MSG_NOSIGNAL | flags);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		}
		total -= (size_t)w;
		while (w > 0 && n > 0) {
			if ((size_t)w >= iov->iov_len) {
				w -= (ssize_t)iov->iov_len;
				memmove(iov, iov + 1, sizeof(*iov) * (size_t)(--n));
			} else {
				iov->iov_base = (uint8_t *)iov->iov_base + w;
				iov->iov_len -= (size_t)w;
				w = 0;
			}
		}
	}
	return 0;
}

/* Read exactly n bytes from a pipe (the bulk of a frame to be MACed). */
static int pipe_read_all(int pipe_fd, uint8_t *p, size_t n)
{
	while (n > 0) {
		ssize_t r = read(pipe_fd, p, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -EPIPE; /* the pipe ran dry: fewer bytes than promised */
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

int pfs_net_send_frame_pipe_sec(int fd, struct pfs_auth_sess *s, pfs_hdr *h,
				const void *payload, size_t len, int pipe_fd, size_t bulk_len)
{
	uint8_t hb[PFS_HDR_LEN];
	struct iovec iov[2];
	int n = 0, rc;

	if (len + bulk_len > PFS_MAX_PAYLOAD)
		return -EMSGSIZE;
	h->payload_len = (uint32_t)(len + bulk_len);
	if (s && pfs_auth_covered(s, h) > len) {
		uint8_t *bulk = malloc(bulk_len ? bulk_len : 1);

		if (!bulk)
			return -ENOMEM;
		rc = pipe_read_all(pipe_fd, bulk, bulk_len);
		if (rc == 0)
			rc = pfs_net_send_frame_sec(fd, s, h, payload, len, bulk, bulk_len);
		free(bulk);
		return rc;
	}
	if (s)
		pfs_auth_seal(s, h, payload, len, NULL, bulk_len);
	pfs_hdr_encode(h, hb);
	iov[n++] = (struct iovec){ hb, PFS_HDR_LEN };
	if (len)
		iov[n++] = (struct iovec){ (void *)payload, len };
	rc = send_iov(fd, iov, n, PFS_HDR_LEN + len, bulk_len ? MSG_MORE : 0);
	while (rc == 0 && bulk_len > 0) {
		ssize_t w = splice(pipe_fd, NULL, fd, NULL, bulk_len, SPLICE_F_MOVE);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			rc = errno == EAGAIN ? -ETIMEDOUT : -errno;
		else if (w == 0)
			rc = -EPIPE; /* the pipe ran dry: fewer bytes than promised */
		else
			bulk_len -= (size_t)w;
	}
	return rc;
}

int pfs_net_send_frame_pipe(int fd, pfs_hdr *h, const void *payload, size_t len,
			    int pipe_fd, size_t bulk_len)
{
	return pfs_net_send_frame_pipe_sec(fd, NULL, h, payload, len, pipe_fd, bulk_len);
}

int pfs_net_send_frame(int fd, pfs_hdr *h, const void *payload, size_t len,
		       const void *bulk, size_t bulk_len)
{
	return pfs_net_send_frame_sec(fd, NULL, h, payload, len, bulk, bulk_len);
}

int pfs_net_send_frame_sec(int fd, struct pfs_auth_sess *s, pfs_hdr *h, const void *payload,
			   size_t len, const void *bulk, size_t bulk_len)
{
	uint8_t hb[PFS_HDR_LEN];
	struct iovec iov[3];
	int n = 0;
	size_t total;

	if (len + bulk_len > PFS_MAX_PAYLOAD)
		return -EMSGSIZE;
	h->payload_len = (uint32_t)(len + bulk_len);
	if (s)
		pfs_auth_seal(s, h, payload, len, bulk, bulk_len);
	pfs_hdr_encode(h, hb);
	iov[n++] = (struct iovec){ hb, PFS_HDR_LEN };
	if (len)
		iov[n++] = (struct iovec){ (void *)payload, len };
	if (bulk_len)
		iov[n++] = (struct iovec){ (void *)bulk, bulk_len };
	total = PFS_HDR_LEN + len + bulk_len;
	return send_iov(fd, iov, n, total, 0);
}

/* Header, payload and the bulk pieces in one sendmsg iovec: on the stack
 * up to this many bulk pieces (a WRITEV's extents), else allocated. */
#define NET_STACK_SEGS 258

int pfs_net_send_frame_iov_sec(int fd, struct pfs_auth_sess *s, pfs_hdr *h, const void *payload,
			       size_t len, const struct iovec *bulk, int nbulk)
{
	uint8_t hb[PFS_HDR_LEN];
	struct iovec stack[NET_STACK_SEGS + 2], *iov = stack;
	size_t total = PFS_HDR_LEN + len, bulk_len = 0;
	int n = 0, rc;

	if (nbulk < 0 || nbulk > PFS_NET_MAX_SEGS)
		return -EINVAL;
	for (int i = 0; i < nbulk; i++)
		bulk_len += bulk[i].iov_len;
	if (len + bulk_len > PFS_MAX_PAYLOAD)
		return -EMSGSIZE;
	if (nbulk > NET_STACK_SEGS) {
		iov = malloc((size_t)(nbulk + 2) * sizeof(*iov));
		if (!iov)
			return -ENOMEM;
	}
	h->payload_len = (uint32_t)(len + bulk_len);
	if (s)
		pfs_auth_seal_iov(s, h, payload, len, bulk, nbulk);
	pfs_hdr_encode(h, hb);
	iov[n++] = (struct iovec){ hb, PFS_HDR_LEN };
	if (len)
		iov[n++] = (struct iovec){ (void *)payload, len };
	for (int i = 0; i < nbulk; i++)
		if (bulk[i].iov_len)
			iov[n++] = bulk[i];
	total += bulk_len;
	rc = send_iov(fd, iov, n, total, 0);
	if (iov != stack)
		free(iov);
	return rc;
}

/* Read the payload of a decoded header h, of which the first `extra`
 * bytes were already received into pre: into buf if it fits in cap, else
 * into a malloc'd buffer returned in *dyn. */
static int recv_payload(int fd, const pfs_hdr *h, const uint8_t *pre, size_t extra, void *buf,
			size_t cap, uint8_t **dyn, uint8_t **data)
{
	uint8_t *p;
	int rc;

	if (h->payload_len <= cap && buf) {
		p = buf;
	} else {
		p = malloc(h->payload_len ? h->payload_len : 1);
		if (!p)
			return -ENOMEM;
		*dyn = p;
	}
	if (extra)
		memcpy(p, pre, extra);
	rc = pfs_net_read_all(fd, p + extra, h->payload_len - extra);
	if (rc) {
		free(*dyn);
		*dyn = NULL;
		return rc == -ECONNRESET ? -EPIPE : rc;
	}
	*data = p;
	return 0;
}

/* Check the tag of a received frame; on failure the payload is dropped. */
static int recv_check(struct pfs_auth_sess *s, const pfs_hdr *h, uint8_t **dyn, uint8_t **data)
{
	if (!s || pfs_auth_open(s, h, *data, h->payload_len, NULL, 0) == 0)
		return 0;
	free(*dyn);
	*dyn = NULL;
	*data = NULL;
	return -EBADMSG;
}

int pfs_net_recv_frame(int fd, pfs_hdr *h, uint32_t max_payload, void *buf, size_t cap,
		       uint8_t **dyn, uint8_t **data)
{
	return pfs_net_recv_frame_sec(fd, NULL, h, max_payload, buf, cap, dyn, data);
}

int pfs_net_recv_reply(int fd, pfs_hdr *h, uint32_t max_payload, void *buf, size_t cap,
		       uint8_t **dyn, uint8_t **data)
{
	return pfs_net_recv_reply_sec(fd, NULL, h, max_payload, buf, cap, dyn, data);
}

/* Exactly a frame's header from the socket, decoded: nothing of its
 * payload is read. */
static int recv_header(int fd, uint32_t max_payload, pfs_hdr *h)
{
	uint8_t hb[PFS_HDR_LEN];
	int rc = pfs_net_read_all(fd, hb, sizeof(hb));

	return rc ? rc : pfs_hdr_decode(hb, sizeof(hb), max_payload, h);
}

int pfs_net_recv_frame_sec(int fd, struct pfs_auth_sess *s, pfs_hdr *h, uint32_t max_payload,
			   void *buf, size_t cap, uint8_t **dyn, uint8_t **data)
{
	int rc;

	*dyn = NULL;
	*data = NULL;
	rc = recv_header(fd, max_payload, h);
	if (rc)
		return rc;
	rc = recv_payload(fd, h, NULL, 0, buf, cap, dyn, data);
	return rc ? rc : recv_check(s, h, dyn, data);
}

int pfs_net_recv_reply_sec(int fd, struct pfs_auth_sess *s, pfs_hdr *h, uint32_t max_payload,
			   void *buf, size_t cap, uint8_t **dyn, uint8_t **data)
{
	uint8_t tmp[PFS_HDR_LEN + 4096];
	size_t got = 0, extra;
	int rc;

	*dyn = NULL;
	*data = NULL;
	while (got < PFS_HDR_LEN) {
		ssize_t r = recv(fd, tmp + got, sizeof(tmp) - got, 0);
		if (r == 0)
			return got == 0 ? -ECONNRESET : -EPIPE;
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		}
		got += (size_t)r;
	}
	rc = pfs_hdr_decode(tmp, got, max_payload, h);
	if (rc)
		return rc;
	extra = got - PFS_HDR_LEN;
	if (extra > h->payload_len)
		return -EBADMSG;
	rc = recv_payload(fd, h, tmp + PFS_HDR_LEN, extra, buf, cap, dyn, data);
	return rc ? rc : recv_check(s, h, dyn, data);
}

/* Move exactly n bytes from the socket into the pipe.  The pipe is checked
 * for room before each splice, so a full pipe is an error (-ENOBUFS), never
 * a wait; the socket's receive timeout bounds the wait for data. */
static int splice_sock_to_pipe(int fd, int pipe_w, size_t n)
{
	while (n > 0) {
		struct pollfd pw = { .fd = pipe_w, .events = POLLOUT };
		ssize_t r;

		if (poll(&pw, 1, 0) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (!(pw.revents & POLLOUT))
			return -ENOBUFS;
		r = splice(fd, NULL, pipe_w, NULL, n, SPLICE_F_MOVE);
		if (r == 0)
			return -EPIPE;
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		}
		n -= (size_t)r;
	}
	return 0;
}

int pfs_net_recv_reply_pipe_sec(int fd, struct pfs_auth_sess *s, pfs_hdr *h,
				uint32_t max_payload, int pipe_w, size_t pipe_cap, void *buf,
				size_t cap, uint8_t **dyn, uint8_t **data, int *piped)
{
	int rc;

	*dyn = NULL;
	*data = NULL;
	*piped = 0;
	/* the header alone: the payload must stay in the socket */
	rc = recv_header(fd, max_payload, h);
	if (rc)
		return rc;
	if (h->payload_len == 0 || h->payload_len > pipe_cap ||
	    (s && pfs_auth_covered(s, h) > 0)) {
		rc = recv_payload(fd, h, NULL, 0, buf, cap, dyn, data);
		return rc ? rc : recv_check(s, h, dyn, data);
	}
	rc = splice_sock_to_pipe(fd, pipe_w, h->payload_len);
	if (rc)
		return rc == -ECONNRESET ? -EPIPE : rc;
	if (s && pfs_auth_open(s, h, NULL, 0, NULL, 0))
		return -EBADMSG;
	*piped = 1;
	return 0;
}
