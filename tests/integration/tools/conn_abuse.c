/* conn_abuse.c — hostile peers for the resource-exhaustion test
 * (t_exhaust.sh): each mode misbehaves against one daemon port for a while
 * and prints one line saying what it did and what the server did to it.
 *
 *   conn_abuse idle      HOST:PORT N SECONDS       N connections that send nothing
 *   conn_abuse slowloris HOST:PORT SECONDS         a header at 1 byte per 100 ms,
 *                                                  reconnecting when closed
 *   conn_abuse slowread  HOST:PORT SECONDS         pipelined 1 MiB requests with
 *                                                  1 MiB replies (PING echo, needs
 *                                                  no capability), replies read at
 *                                                  40 KB/s
 *   conn_abuse pipeline  HOST:PORT SECONDS         the same, replies never read
 *   conn_abuse jobids    HOST:PORT OST N           N STATFS of OST (through the
 *                                                  OST's scheduler and job table),
 *                                                  each with a new random job id,
 *                                                  64 in flight
 *   conn_abuse statlat   DIR N                     stat DIR/f0..f(N-1) one by one;
 *                                                  prints p50/p99/max in ms
 * With --key FILE first (a client key file, common/auth.h), every
 * connection completes the handshake first and its frames are sealed, so
 * the abuse reaches the server past authentication.  Without --key, the
 * modes that must reach request processing (slowread, pipeline, jobids)
 * take the key from $PFS_KEY when it is set; idle and slowloris then stay
 * unauthenticated (peers that never finish, or never start, a handshake).
 * Exit status 0 when the mode ran (whatever the server did), 1 on a local
 * error (bad arguments, cannot connect at all). */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/auth.h"
#include "common/buf.h"
#include "common/clock.h"
#include "common/net.h"
#include "common/proto.h"

static char host[256];
static uint16_t port;
static pfs_auth_key key;
static int use_key;

/* Connect (and authenticate with --key); sess may be NULL. */
static int dial_sess(pfs_auth_sess *sess)
{
	pfs_auth_sess tmp;
	int fd;

	if (pfs_net_connect(host, port, 5000, &fd))
		return -1;
	if (use_key && pfs_auth_client(fd, &key, 5000, sess ? sess : &tmp)) {
		close(fd);
		return -1;
	}
	return fd;
}

static int dial(void) { return dial_sess(NULL); }

static uint8_t mib[PFS_MAX_IO];

/* One request whose reply is 1 MiB: a PING echoes its payload. */
static int send_big(int fd, pfs_auth_sess *ss, uint64_t id)
{
	pfs_hdr h;

	pfs_hdr_init(&h, PFS_OP_PING, id, 0xabu, "abuse");
	return pfs_net_send_frame_sec(fd, ss, &h, mib, sizeof(mib), NULL, 0);
}

static int mode_idle(int n, int secs)
{
	int *fd = calloc((size_t)n, sizeof(*fd)), open_n = 0, lost = 0;
	char c;

	if (!fd)
		return 1;
	for (int i = 0; i < n; i++) {
		fd[i] = dial();
		if (fd[i] >= 0)
			open_n++;
	}
	printf("idle: %d of %d connections open\n", open_n, n);
	fflush(stdout);
	sleep((unsigned)secs);
	for (int i = 0; i < n; i++) {
		if (fd[i] < 0)
			continue;
		if (recv(fd[i], &c, 1, MSG_DONTWAIT) == 0 ||
		    (errno != EAGAIN && errno != EWOULDBLOCK))
			lost++;
		close(fd[i]);
	}
	printf("idle: %d of %d closed by the server after %d s\n", lost, open_n, secs);
	free(fd);
	return open_n ? 0 : 1;
}

static int mode_slowloris(int secs)
{
	uint64_t end = pfs_clock_ms() + (uint64_t)secs * 1000;
	uint8_t hb[PFS_HDR_LEN];
	pfs_hdr h;
	int closed = 0, conns = 0;

	pfs_hdr_init(&h, PFS_OP_PING, 1, 0xabu, "abuse");
	h.payload_len = 16;
	pfs_hdr_encode(&h, hb);
	while (pfs_clock_ms() < end) {
		int fd = dial(), gone = 0; /* the header is never complete: no MAC needed */
		char c;

		if (fd < 0)
			return 1;
		conns++;
		for (size_t i = 0; pfs_clock_ms() < end && !gone; i = (i + 1) % sizeof(hb)) {
			if (send(fd, hb + i, 1, MSG_NOSIGNAL) != 1)
				gone = 1;
			else if (recv(fd, &c, 1, MSG_DONTWAIT) == 0)
				gone = 1;
			else if (errno != EAGAIN && errno != EWOULDBLOCK)
				gone = 1;
			usleep(100000);
		}
		closed += gone;
		close(fd);
	}
	printf("slowloris: %d connections, %d closed by the server\n", conns, closed);
	return 0;
}

struct sender { int fd; pfs_auth_sess ss; uint64_t end; int sent; };

static void *sender_main(void *arg)
{
	struct sender *s = arg;

	while (pfs_clock_ms() < s->end) {
		/* Stops when the server stops reading us (send timeout) or
		 * closes the connection. */
		if (send_big(s->fd, use_key ? &s->ss : NULL, (uint64_t)s->sent + 1))
			break;
		s->sent++;
	}
	return NULL;
}

static int mode_reader(int slow, int secs)
{
	struct sender s = { 0 };
	uint64_t got = 0;
	int rcv = 4096, closed = 0;
	pthread_t t;
	char buf[4096];

	s.end = pfs_clock_ms() + (uint64_t)secs * 1000;
	s.fd = dial_sess(&s.ss);
	if (s.fd < 0)
		return 1;
	setsockopt(s.fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
	pfs_net_set_timeout(s.fd, 3000);
	if (pthread_create(&t, NULL, sender_main, &s))
		return 1;
	while (pfs_clock_ms() < s.end) {
		usleep(100000);
		if (!slow)
			continue;
		ssize_t r = recv(s.fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
			closed = 1;
			break;
		}
		if (r > 0)
			got += (uint64_t)r;
	}
	s.end = 0;
	shutdown(s.fd, SHUT_RDWR);
	pthread_join(t, NULL);
	close(s.fd);
	printf("%s: %d 1 MiB requests sent, %llu reply bytes read, closed by the server: %s\n",
	       slow ? "slowread" : "pipeline", s.sent, (unsigned long long)got,
	       closed ? "yes" : "no (or not seen)");
	return 0;
}

static int mode_jobids(uint32_t ost, long n)
{
	uint64_t t0 = pfs_clock_ms(), seed = (uint64_t)getpid() * 0x9e3779b97f4a7c15ull ^ t0;
	long ok = 0, busy = 0, other = 0, sent = 0;
	pfs_auth_sess ss;
	pfs_auth_sess *ssp = use_key ? &ss : NULL;
	int fd = dial_sess(&ss), rc = 0;

	if (fd < 0)
		return 1;
	pfs_net_set_timeout(fd, 30000);
	while (sent < n) {
		int batch = n - sent < 64 ? (int)(n - sent) : 64;

		for (int i = 0; i < batch; i++) {
			pfs_wbuf b;
			pfs_hdr h;
			char job[PFS_JOBID_MAX + 1];

			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			snprintf(job, sizeof(job), "rnd-%016llx", (unsigned long long)seed);
			pfs_wbuf_init(&b);
			pfs_wbuf_u32(&b, ost);
			pfs_hdr_init(&h, PFS_OP_OSS_STATFS, (uint64_t)(sent + i), 0xabu, job);
			rc = pfs_net_send_frame_sec(fd, ssp, &h, b.data, b.len, NULL, 0);
			pfs_wbuf_free(&b);
			if (rc)
				goto out;
		}
		for (int i = 0; i < batch; i++) {
			pfs_hdr r;
			uint8_t *dyn, *data;

			rc = pfs_net_recv_frame_sec(fd, ssp, &r, PFS_MAX_PAYLOAD, NULL, 0, &dyn,
						    &data);
			if (rc)
				goto out;
			free(dyn);
			if (!r.status)
				ok++;
			else if (r.status == -EBUSY)
				busy++;
			else
				other++;
		}
		sent += batch;
	}
out:
	close(fd);
	printf("jobids: %ld random job ids sent in %.1f s: %ld ok, %ld busy, %ld other%s%s\n",
	       sent, (double)(pfs_clock_ms() - t0) / 1000.0, ok, busy, other,
	       rc ? "; stopped: " : "", rc ? pfs_strerror(rc) : "");
	return sent == n ? 0 : 1;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int mode_statlat(const char *dir, int n)
{
	uint64_t *us = calloc((size_t)n, sizeof(*us));
	char p[4096];
	struct stat st;
	int bad = 0;

	if (!us)
		return 1;
	for (int i = 0; i < n; i++) {
		uint64_t t0 = pfs_clock_us();

		snprintf(p, sizeof(p), "%s/f%d", dir, i);
		if (stat(p, &st))
			bad++;
		us[i] = pfs_clock_us() - t0;
	}
	qsort(us, (size_t)n, sizeof(*us), cmp_u64);
	printf("statlat: n=%d failed=%d p50_ms=%.3f p99_ms=%.3f max_ms=%.3f\n", n, bad,
	       us[n / 2] / 1000.0, us[(n * 99) / 100 < n ? (n * 99) / 100 : n - 1] / 1000.0,
	       us[n - 1] / 1000.0);
	free(us);
	return bad ? 1 : 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: conn_abuse [--key FILE] idle|slowloris|slowread|pipeline|jobids "
			"HOST:PORT ...   (slowread/pipeline/jobids: key from $PFS_KEY)\n"
			"       conn_abuse statlat DIR N\n");
	exit(1);
}

int main(int argc, char **argv)
{
	struct rlimit rl;

	if (argc > 2 && !strcmp(argv[1], "--key")) {
		const char *why = NULL;

		if (pfs_auth_init() || pfs_auth_key_load(argv[2], &key, &why)) {
			fprintf(stderr, "conn_abuse: %s: %s\n", argv[2], why ? why : "cannot load");
			return 1;
		}
		use_key = 1;
		argv += 2;
		argc -= 2;
	}
	if (argc < 3)
		usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!use_key && getenv("PFS_KEY") && *getenv("PFS_KEY") &&
	    (!strcmp(argv[1], "slowread") || !strcmp(argv[1], "pipeline") ||
	     !strcmp(argv[1], "jobids"))) {
		char err[512];

		if (pfs_auth_init() || pfs_auth_key_load_msg(getenv("PFS_KEY"), &key, err, sizeof(err))) {
			fprintf(stderr, "conn_abuse: %s\n", err);
			return 1;
		}
		use_key = 1;
	}
	if (!strcmp(argv[1], "statlat"))
		return mode_statlat(argv[2], argc > 3 ? atoi(argv[3]) : 100);
	if (pfs_addr_parse(argv[2], host, sizeof(host), &port))
		usage();
	/* Many sockets: as many descriptors as we may have. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (!strcmp(argv[1], "idle") && argc == 5)
		return mode_idle(atoi(argv[3]), atoi(argv[4]));
	if (!strcmp(argv[1], "slowloris") && argc == 4)
		return mode_slowloris(atoi(argv[3]));
	if ((!strcmp(argv[1], "slowread") || !strcmp(argv[1], "pipeline")) && argc == 4)
		return mode_reader(argv[1][0] == 's', atoi(argv[3]));
	if (!strcmp(argv[1], "jobids") && argc == 5)
		return mode_jobids((uint32_t)strtoul(argv[3], NULL, 0), atol(argv[4]));
	usage();
	return 1;
}
