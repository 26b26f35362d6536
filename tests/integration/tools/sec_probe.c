/* sec_probe.c — one hostile or probing request for the security regression
 * test (t_security.sh): connects to a pfs daemon port, authenticates with a
 * chosen key file or not at all, sends one chosen frame and prints what the
 * server did with it.
 *
 *   sec_probe [OPTIONS] HOST:PORT OP [ARGS...]
 * Options:
 *   --key FILE       authenticate with FILE (default: $PFS_KEY if set)
 *   --no-key         no handshake: the frame is the first byte sent
 *   --cred UID:GID   the credential inside namespace payloads (default 0:0)
 *   --client-id N    the header's client id (default 0x5ec)
 *   --capa HEX       the capability (96 hex digits, common/capa.h packed)
 *                    appended to an OSS object request
 *   --mint KEY:RIGHTS:SECS  instead, mint one for the request's ost, object
 *                    and client id under the K_cap of server key file KEY
 *                    ("random": a random key, i.e. a forgery), RIGHTS as a
 *                    number (1 read, 2 write, 4 truncate), expiring SECS
 *                    from now (negative: already expired)
 *   --tamper replay  send a sealed PING, read its reply, then send the same
 *                    bytes again; the second reply is what is printed
 *   --tamper modify  flip one payload byte of the sealed frame before sending
 * Ops (the payloads of common/proto.h):
 *   ping | lookup PARENT NAME | getattr INO | mkdir PARENT NAME MODE |
 *   create PARENT NAME MODE | setsize INO SIZE | open INO r|w|rw |
 *   qos_show | nrs_list | register NAME HOST DPORT CPORT UUID |
 *   heartbeat NAME OSTIDX | destroy OST OBJ | read OST OBJ OFF LEN |
 *   write OST OBJ OFF LEN | truncate OST OBJ SIZE
 * Output, one line: "ok" and what the reply says (lookup/getattr/mkdir/
 * create/setsize: ino mode uid gid size; open: caps=HEX,...; read: len=N),
 * or "status ENAME", or "closed" (no reply: the server dropped the
 * connection), or "handshake refused: ...", or "key refused: ...".
 * Exit 0 ok, 1 a refusal status, 3 closed, 4 handshake refused, 5 key file
 * refused, 2 usage or local error. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "common/auth.h"
#include "common/buf.h"
#include "common/capa.h"
#include "common/layout.h"
#include "common/msg.h"
#include "common/net.h"
#include "common/proto.h"

#define REPLY_CAP (PFS_MAX_PAYLOAD + 16)

static void usage(void)
{
	fprintf(stderr, "usage: sec_probe [--key FILE|--no-key] [--cred UID:GID] [--client-id N]\n"
			"         [--capa HEX | --mint KEY:RIGHTS:SECS] [--tamper replay|modify]\n"
			"         HOST:PORT OP [ARGS...]   (see the top of sec_probe.c)\n");
	exit(2);
}

static int hexdec(const char *s, uint8_t *out, size_t n)
{
	size_t bin = 0;

	if (strlen(s) != 2 * n ||
	    sodium_hex2bin(out, n, s, strlen(s), NULL, &bin, NULL) || bin != n)
		return -EINVAL;
	return 0;
}

/* The capability for (ost, object, client) under --mint's spec. */
static int mint(const char *spec, uint32_t ost, uint64_t obj, uint64_t client, pfs_capa *c)
{
	char path[512];
	const char *p1 = strchr(spec, ':'), *p2 = p1 ? strchr(p1 + 1, ':') : NULL;
	uint8_t kcap[PFS_CAPA_KEY_LEN];

	if (!p1 || !p2 || (size_t)(p1 - spec) >= sizeof(path))
		return -EINVAL;
	memcpy(path, spec, (size_t)(p1 - spec));
	path[p1 - spec] = 0;
	if (!strcmp(path, "random")) {
		randombytes_buf(kcap, sizeof(kcap));
	} else {
		pfs_auth_key k;
		char err[600];

		if (pfs_auth_key_load_msg(path, &k, err, sizeof(err))) {
			fprintf(stderr, "sec_probe: %s\n", err);
			return -EINVAL;
		}
		if (pfs_auth_cap_key(&k, kcap))
			return -EPERM;
		sodium_memzero(&k, sizeof(k));
	}
	memset(c, 0, sizeof(*c));
	c->ost = ost;
	c->object = obj;
	c->client_id = client;
	c->rights = (uint32_t)strtoul(p1 + 1, NULL, 0);
	c->expiry = (uint64_t)((int64_t)time(NULL) + strtoll(p2 + 1, NULL, 0));
	pfs_capa_mint(c, kcap);
	sodium_memzero(kcap, sizeof(kcap));
	return 0;
}

static uint32_t open_flags(const char *s)
{
	if (!strcmp(s, "w"))
		return O_WRONLY;
	if (!strcmp(s, "rw"))
		return O_RDWR;
	return O_RDONLY;
}

/* Print what an attr-carrying reply says. */
static void print_attr(pfs_rbuf *r)
{
	pfs_attr a;

	if (pfs_attr_decode(r, &a)) {
		printf("ok (undecodable attr)\n");
		return;
	}
	printf("ok ino=%llu mode=0%o uid=%u gid=%u size=%llu", (unsigned long long)a.ino,
	       a.mode & 07777, a.uid, a.gid, (unsigned long long)a.size);
}

int main(int argc, char **argv)
{
	const char *keyfile = getenv("PFS_KEY"), *capa_hex = NULL, *mint_spec = NULL;
	const char *tamper = NULL;
	pfs_cred cred = { 0 };
	uint64_t client_id = 0x5ec;
	pfs_auth_key key;
	pfs_auth_sess sess, *ss = NULL;
	char host[256];
	uint16_t port;
	int fd, rc, i;

	for (i = 1; i < argc && argv[i][0] == '-' && argv[i][1] == '-'; i++) {
		if (!strcmp(argv[i], "--no-key"))
			keyfile = NULL;
		else if (i + 1 >= argc)
			usage();
		else if (!strcmp(argv[i], "--key"))
			keyfile = argv[++i];
		else if (!strcmp(argv[i], "--cred")) {
			if (sscanf(argv[++i], "%u:%u", &cred.uid, &cred.gid) != 2)
				usage();
		} else if (!strcmp(argv[i], "--client-id"))
			client_id = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--capa"))
			capa_hex = argv[++i];
		else if (!strcmp(argv[i], "--mint"))
			mint_spec = argv[++i];
		else if (!strcmp(argv[i], "--tamper"))
			tamper = argv[++i];
		else
			usage();
	}
	if (argc - i < 2 || pfs_addr_parse(argv[i], host, sizeof(host), &port))
		usage();
	const char *op = argv[i + 1];
	char **a = argv + i + 2;
	int na = argc - i - 2;

	if (pfs_auth_init())
		return 2;
	if (keyfile && *keyfile) {
		char err[600];

		if (pfs_auth_key_load_msg(keyfile, &key, err, sizeof(err))) {
			printf("key refused: %s\n", err);
			return 5;
		}
	} else {
		keyfile = NULL;
	}

	/* The request. */
	pfs_wbuf w;
	uint16_t opcode;
	uint32_t ost = 0;
	uint64_t obj = 0;
	int objop = 0;

	pfs_wbuf_init(&w);
#define NEED(n) do { if (na != (n)) usage(); } while (0)
	if (!strcmp(op, "ping")) {
		NEED(0);
		opcode = PFS_OP_PING;
		pfs_wbuf_str(&w, "sec_probe");
	} else if (!strcmp(op, "lookup")) {
		NEED(2);
		opcode = PFS_OP_MDS_LOOKUP;
		pfs_cred_encode(&w, &cred);
		pfs_wbuf_u64(&w, strtoull(a[0], NULL, 0));
		pfs_wbuf_str(&w, a[1]);
	} else if (!strcmp(op, "getattr")) {
		NEED(1);
		opcode = PFS_OP_MDS_GETATTR;
		pfs_cred_encode(&w, &cred);
		pfs_wbuf_u64(&w, strtoull(a[0], NULL, 0));
	} else if (!strcmp(op, "mkdir") || !strcmp(op, "create")) {
		NEED(3);
		opcode = op[0] == 'm' ? PFS_OP_MDS_MKDIR : PFS_OP_MDS_CREATE;
		pfs_cred_encode(&w, &cred);
		pfs_wbuf_u64(&w, strtoull(a[0], NULL, 0));
		pfs_wbuf_str(&w, a[1]);
		pfs_wbuf_u32(&w, (uint32_t)strtoul(a[2], NULL, 8) |
					 (op[0] == 'm' ? 0040000u : 0100000u));
		if (opcode == PFS_OP_MDS_CREATE) {
			pfs_wbuf_u32(&w, PFS_CREATE_EXCL);
			pfs_wbuf_u32(&w, 0);
			pfs_wbuf_u32(&w, 0);
		}
	} else if (!strcmp(op, "setsize")) {
		NEED(2);
		opcode = PFS_OP_MDS_SETSIZE;
		pfs_cred_encode(&w, &cred);
		pfs_wbuf_u64(&w, strtoull(a[0], NULL, 0));
		pfs_wbuf_u64(&w, strtoull(a[1], NULL, 0));
		pfs_wbuf_i64(&w, 0);
	} else if (!strcmp(op, "open")) {
		NEED(2);
		opcode = PFS_OP_MDS_OPEN;
		pfs_cred_encode(&w, &cred);
		pfs_wbuf_u64(&w, strtoull(a[0], NULL, 0));
		pfs_wbuf_u32(&w, open_flags(a[1]));
	} else if (!strcmp(op, "qos_show")) {
		NEED(0);
		opcode = PFS_OP_MDS_QOS_SHOW;
		pfs_wbuf_str(&w, "");
	} else if (!strcmp(op, "nrs_list")) {
		NEED(0);
		opcode = PFS_OP_OSS_NRS_RULE;
		pfs_wbuf_u8(&w, PFS_NRS_LIST);
		pfs_wbuf_str(&w, "");
		pfs_wbuf_str(&w, "");
	} else if (!strcmp(op, "register")) {
		NEED(5);
		opcode = PFS_OP_MDS_OSS_REGISTER;
		pfs_wbuf_str(&w, a[0]);
		pfs_wbuf_str(&w, a[1]);
		pfs_wbuf_u16(&w, (uint16_t)atoi(a[2]));
		pfs_wbuf_u16(&w, (uint16_t)atoi(a[3]));
		pfs_wbuf_u32(&w, 1);
		pfs_wbuf_str(&w, a[4]);
		pfs_wbuf_u64(&w, 1ull << 40);
		pfs_wbuf_u64(&w, 1ull << 40);
		pfs_wbuf_u64(&w, 0);
	} else if (!strcmp(op, "heartbeat")) {
		NEED(2);
		opcode = PFS_OP_MDS_OSS_HEARTBEAT;
		pfs_wbuf_str(&w, a[0]);
		pfs_wbuf_u32(&w, 1);
		pfs_wbuf_u32(&w, (uint32_t)atoi(a[1]));
		pfs_wbuf_u64(&w, 1ull << 40);
		pfs_wbuf_u64(&w, 1ull << 40);
		pfs_wbuf_u64(&w, 0);
	} else if (!strcmp(op, "destroy")) {
		NEED(2);
		opcode = PFS_OP_OSS_DESTROY;
		pfs_wbuf_u32(&w, (uint32_t)atoi(a[0]));
		pfs_wbuf_u64(&w, strtoull(a[1], NULL, 0));
	} else if (!strcmp(op, "read") || !strcmp(op, "write") || !strcmp(op, "truncate")) {
		NEED(op[0] == 't' ? 3 : 4);
		opcode = op[0] == 'r' ? PFS_OP_OSS_READ :
			 op[0] == 'w' ? PFS_OP_OSS_WRITE : PFS_OP_OSS_TRUNCATE;
		ost = (uint32_t)atoi(a[0]);
		obj = strtoull(a[1], NULL, 0);
		objop = 1;
		pfs_wbuf_u32(&w, ost);
		pfs_wbuf_u64(&w, obj);
		pfs_wbuf_u64(&w, strtoull(a[2], NULL, 0));
		if (opcode != PFS_OP_OSS_TRUNCATE)
			pfs_wbuf_u32(&w, (uint32_t)strtoul(a[3], NULL, 0));
	} else {
		usage();
	}
	if (objop && (capa_hex || mint_spec)) {
		pfs_capa c;
		uint8_t packed[PFS_CAPA_LEN];

		if (capa_hex) {
			if (hexdec(capa_hex, packed, sizeof(packed)))
				usage();
			pfs_capa_unpack(packed, &c);
		} else if (mint(mint_spec, ost, obj, client_id, &c)) {
			pfs_wbuf_free(&w);
			return 2;
		}
		pfs_capa_encode(&w, &c);
	}
	if (opcode == PFS_OP_OSS_WRITE) {
		uint32_t len = (uint32_t)strtoul(a[3], NULL, 0);

		if (len > PFS_MAX_IO)
			usage();
		memset(pfs_wbuf_reserve(&w, len), 0x5a, len);
	}
	if (pfs_wbuf_error(&w)) {
		fprintf(stderr, "sec_probe: cannot encode the request\n");
		pfs_wbuf_free(&w);
		return 2;
	}

	rc = pfs_net_connect(host, port, 3000, &fd);
	if (rc) {
		fprintf(stderr, "sec_probe: connect %s:%u: %s\n", host, port, strerror(-rc));
		pfs_wbuf_free(&w);
		return 2;
	}
	pfs_net_set_timeout(fd, 5000);
	if (keyfile) {
		rc = pfs_auth_client(fd, &key, 5000, &sess);
		if (rc) {
			printf("handshake refused: %s\n", strerror(-rc));
			close(fd);
			pfs_wbuf_free(&w);
			return 4;
		}
		ss = &sess;
	}

	pfs_hdr h, rh;
	uint8_t *rbuf = malloc(REPLY_CAP), *dyn = NULL, *data = NULL;

	if (!rbuf) {
		close(fd);
		pfs_wbuf_free(&w);
		return 2;
	}
	if (tamper && !strcmp(tamper, "replay")) {
		/* A sealed PING, its reply, then the very same bytes again. */
		uint8_t frame[PFS_HDR_LEN + 64];
		const char *pl = "replay-me";
		size_t n = strlen(pl);

		pfs_hdr_init(&h, PFS_OP_PING, 1, client_id, "secprobe");
		h.payload_len = (uint32_t)n;
		if (ss)
			pfs_auth_seal(ss, &h, pl, n, NULL, 0);
		pfs_hdr_encode(&h, frame);
		memcpy(frame + PFS_HDR_LEN, pl, n);
		rc = pfs_net_write_all(fd, frame, PFS_HDR_LEN + n);
		if (!rc)
			rc = pfs_net_recv_reply_sec(fd, ss, &rh, PFS_MAX_PAYLOAD, rbuf, REPLY_CAP,
						    &dyn, &data);
		free(dyn);
		dyn = NULL;
		if (rc || rh.status) {
			printf("first ping failed: %s\n", strerror(rc ? -rc : -rh.status));
			close(fd);
			pfs_wbuf_free(&w);
			free(rbuf);
			return 2;
		}
		rc = pfs_net_write_all(fd, frame, PFS_HDR_LEN + n);
	} else {
		pfs_hdr_init(&h, opcode, 7, client_id, "secprobe");
		h.uid = cred.uid;
		h.gid = cred.gid;
		if (tamper && !strcmp(tamper, "modify")) {
			/* Sealed over the true bytes, then one of them changes. */
			uint8_t hb[PFS_HDR_LEN];

			h.payload_len = (uint32_t)w.len;
			if (ss)
				pfs_auth_seal(ss, &h, w.data, w.len, NULL, 0);
			pfs_hdr_encode(&h, hb);
			w.data[w.len - 1] ^= 0x01;
			rc = pfs_net_write_all(fd, hb, sizeof(hb));
			if (!rc)
				rc = pfs_net_write_all(fd, w.data, w.len);
		} else if (tamper) {
			usage(); /* exits */
		} else {
			rc = pfs_net_send_frame_sec(fd, ss, &h, w.data, w.len, NULL, 0);
		}
	}
	pfs_wbuf_free(&w);
	if (!rc)
		rc = pfs_net_recv_reply_sec(fd, ss, &rh, PFS_MAX_PAYLOAD, rbuf, REPLY_CAP, &dyn,
					    &data);
	close(fd);
	if (rc) {
		/* Nothing (or nothing valid) came back: the server hung up. */
		printf("closed (%s)\n", strerror(-rc));
		free(rbuf);
		return 3;
	}
	if (rh.status) {
		const char *name = strerrorname_np(-rh.status);

		printf("status %s (%s)\n", name ? name : "?", strerror(-rh.status));
		free(dyn);
		free(rbuf);
		return 1;
	}

	pfs_rbuf r;

	pfs_rbuf_init(&r, data, rh.payload_len);
	switch (opcode) {
	case PFS_OP_MDS_LOOKUP:
	case PFS_OP_MDS_GETATTR:
	case PFS_OP_MDS_MKDIR:
	case PFS_OP_MDS_SETSIZE:
		print_attr(&r);
		printf("\n");
		break;
	case PFS_OP_MDS_CREATE:
	case PFS_OP_MDS_OPEN: {
		pfs_layout l;
		uint32_t n;

		print_attr(&r);
		if (pfs_layout_decode(&r, &l)) {
			printf(" (undecodable layout)\n");
			break;
		}
		n = pfs_rbuf_left(&r) ? pfs_rbuf_u32(&r) : 0;
		printf(" caps=");
		for (uint32_t k = 0; k < n && !pfs_rbuf_error(&r); k++) {
			const uint8_t *cb = pfs_rbuf_bytes(&r, PFS_CAPA_LEN);
			char hex[2 * PFS_CAPA_LEN + 1];

			if (!cb)
				break;
			sodium_bin2hex(hex, sizeof(hex), cb, PFS_CAPA_LEN);
			printf("%s%s", k ? "," : "", hex);
		}
		printf("\n");
		break;
	}
	case PFS_OP_OSS_READ:
		printf("ok len=%u\n", rh.payload_len);
		break;
	default:
		printf("ok len=%u\n", rh.payload_len);
		break;
	}
	free(dyn);
	free(rbuf);
	return 0;
}
