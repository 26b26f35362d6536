/* frame_spray.c — bad-input driver for integration tests: sends random,
 * truncated, oversized and well-framed-but-garbage requests to a pfs
 * daemon port, then checks that the daemon still answers a PING.
 *
 *   frame_spray HOST:PORT [ROUNDS] [SEED]
 * With a key in $PFS_KEY (common/auth.h; the default cluster has one), three
 * connections in four complete the handshake first and seal the well-framed
 * requests, so the garbage reaches the request decoders behind the MAC
 * check; the fourth sprays before any handshake (refused by it).  The final
 * PING authenticates with the key.  Without PFS_KEY nothing authenticates.
 * Exit 0 if the daemon survived and still serves; prints what it sent. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/auth.h"
#include "common/net.h"
#include "common/proto.h"
#include "common/rpc.h"

static const uint16_t ops[] = {
	PFS_OP_PING, PFS_OP_MDS_LOOKUP, PFS_OP_MDS_GETATTR, PFS_OP_MDS_SETATTR, PFS_OP_MDS_CREATE,
	PFS_OP_MDS_MKNOD, PFS_OP_MDS_MKDIR, PFS_OP_MDS_UNLINK, PFS_OP_MDS_RMDIR, PFS_OP_MDS_RENAME,
	PFS_OP_MDS_READDIR, PFS_OP_MDS_SYMLINK, PFS_OP_MDS_READLINK, PFS_OP_MDS_LINK,
	PFS_OP_MDS_STATFS, PFS_OP_MDS_SETXATTR, PFS_OP_MDS_GETXATTR, PFS_OP_MDS_LISTXATTR,
	PFS_OP_MDS_REMOVEXATTR, PFS_OP_MDS_OPEN, PFS_OP_MDS_ACCESS, PFS_OP_MDS_SETSIZE,
	PFS_OP_MDS_GETLAYOUT, PFS_OP_MDS_SETSTRIPE, PFS_OP_MDS_OST_LIST, PFS_OP_MDS_OSS_REGISTER,
	PFS_OP_MDS_OSS_HEARTBEAT, PFS_OP_OSS_READ, PFS_OP_OSS_WRITE, PFS_OP_OSS_TRUNCATE,
	PFS_OP_OSS_PUNCH, PFS_OP_OSS_STAT, PFS_OP_OSS_SYNC, PFS_OP_OSS_STATFS, PFS_OP_OSS_DESTROY,
	PFS_OP_OSS_LIST_OBJECTS, PFS_OP_OSS_JOBSTATS, 7, 999, 65535,
};

static unsigned seed;
static pfs_auth_key key;
static int have_key;
static unsigned rnd(void) { return (unsigned)rand_r(&seed); }

/* Connect (with a session: authenticate, and seal the frame at the head of
 * b when it has one, i.e. h != NULL), send n bytes, read whatever comes
 * back until close or timeout. */
static int spray(const char *host, uint16_t port, uint8_t *b, size_t cap, size_t n,
		 int half_close, int authed, pfs_hdr *h)
{
	int fd, rc;
	uint8_t junk[4096];

	rc = pfs_net_connect(host, port, 2000, &fd);
	if (rc)
		return rc;
	pfs_net_set_timeout(fd, 3000);
	if (authed) {
		pfs_auth_sess ss;

		rc = pfs_auth_client(fd, &key, 3000, &ss);
		if (rc) {
			close(fd);
			return rc;
		}
		if (h) {
			/* Tag over what the header announces, as far as b (cap
			 * bytes) holds it: a truncated frame has a right tag. */
			size_t have = cap - PFS_HDR_LEN, want = h->payload_len;

			pfs_auth_seal(&ss, h, b + PFS_HDR_LEN, want < have ? want : have, NULL, 0);
			pfs_hdr_encode(h, b);
		}
		memset(&ss, 0, sizeof(ss));
	}
	(void)pfs_net_write_all(fd, b, n);
	if (half_close)
		shutdown(fd, SHUT_WR);
	while (read(fd, junk, sizeof(junk)) > 0)
		;
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	char host[256];
	uint16_t port;
	int rounds = argc > 2 ? atoi(argv[2]) : 300;
	static uint8_t buf[PFS_HDR_LEN + 70000];
	int counts[4] = { 0 };

	const char *kp = getenv("PFS_KEY");
	int authed_rounds = 0;

	seed = argc > 3 ? (unsigned)atoi(argv[3]) : 1;
	if (argc < 2 || pfs_addr_parse(argv[1], host, sizeof(host), &port)) {
		fprintf(stderr, "usage: frame_spray HOST:PORT [ROUNDS] [SEED]  (key: $PFS_KEY)\n");
		return 2;
	}
	if (kp && *kp) {
		char err[512];

		if (pfs_auth_init() || pfs_auth_key_load_msg(kp, &key, err, sizeof(err))) {
			fprintf(stderr, "frame_spray: %s\n", err);
			return 2;
		}
		have_key = 1;
	}
	for (int i = 0; i < rounds; i++) {
		pfs_hdr h;
		size_t plen = rnd() % 2048, n;
		int kind = i % 4;
		/* Every fourth group of four goes in before any handshake. */
		int authed = have_key && (i / 4) % 4 != 3;

		pfs_hdr_init(&h, ops[rnd() % (sizeof(ops) / sizeof(ops[0]))], (uint64_t)i, 77, "spray");
		for (size_t k = 0; k < sizeof(buf); k++)
			buf[k] = (uint8_t)rnd();
		switch (kind) {
		case 0: /* pure garbage */
			n = 1 + rnd() % 512;
			break;
		case 1: /* valid header, random payload of the announced length */
			h.payload_len = (uint32_t)plen;
			pfs_hdr_encode(&h, buf);
			n = PFS_HDR_LEN + plen;
			break;
		case 2: /* truncated: header promises more than is sent */
			h.payload_len = (uint32_t)plen + 100;
			pfs_hdr_encode(&h, buf);
			n = PFS_HDR_LEN + plen / 2;
			break;
		default: /* oversized claim, or a large junk payload */
			h.payload_len = (rnd() & 1) ? 0xfffffff0u : 65536;
			pfs_hdr_encode(&h, buf);
			n = h.payload_len == 65536 ? PFS_HDR_LEN + 65536 : PFS_HDR_LEN;
			break;
		}
		if (spray(host, port, buf, sizeof(buf), n, 1, authed, kind ? &h : NULL)) {
			fprintf(stderr, "frame_spray: %s refused a connection at round %d\n", argv[1], i);
			return 1;
		}
		counts[kind]++;
		authed_rounds += authed;
	}
	/* Still alive and serving? */
	pfs_rpc_opts o = { .max_conns = 1, .timeout_ms = 5000, .retry_ms = 2000,
			   .auth = have_key ? &key : NULL };
	pfs_rpc_pool *p;
	pfs_rpc_reply r = { 0 };
	int rc = pfs_rpc_pool_create(host, port, &o, &p);
	if (rc == 0) {
		rc = pfs_rpc_call(p, PFS_OP_PING, "spray", 0, "alive", 5, NULL, 0, &r);
		if (rc == 0 && (r.len != 5 || memcmp(r.data, "alive", 5)))
			rc = -EBADMSG;
		pfs_rpc_reply_free(&r);
		pfs_rpc_pool_destroy(p);
	}
	printf("frame_spray %s: garbage %d, random payloads %d, truncated %d, oversized %d "
	       "(%d after a handshake); ping after: %s\n", argv[1], counts[0], counts[1],
	       counts[2], counts[3], authed_rounds, rc ? pfs_strerror(rc) : "ok");
	return rc ? 1 : 0;
}
