/* test_auth.c — common/auth: key files (permissions, owner, format), role
 * key derivation, the handshake over a socketpair (client in a thread, the
 * server steps in the test), refusals (wrong key, a client key claiming
 * another role, garbage and truncated handshake bytes), and frame tags
 * (roundtrip; altered header or payload, replayed, reordered and reflected
 * frames; what header-only integrity leaves uncovered). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <sodium.h>

#include "common/auth.h"
#include "common/proto.h"

static char dir[64];

static const char *HEX64 = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

static int setup(void **state)
{
	strcpy(dir, "/tmp/pfs-test-auth-XXXXXX");
	assert_non_null(mkdtemp(dir));
	assert_int_equal(pfs_auth_init(), 0);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
	return 0;
}

/* Write text to dir/name with exactly this mode; returns the path. */
static const char *put(const char *name, const char *text, mode_t mode)
{
	static char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
	return path;
}

static void test_key_load(void **state)
{
	char text[256];
	pfs_auth_key k;
	const char *why = NULL;

	snprintf(text, sizeof(text), "# a comment\nrole = client\nkey = %s  # trailing\n", HEX64);
	assert_int_equal(pfs_auth_key_load(put("ok", text, 0600), &k, &why), 0);
	assert_int_equal(k.role, PFS_ROLE_CLIENT);
	assert_int_equal(k.key[0], 0x00);
	assert_int_equal(k.key[1], 0x11);
	assert_int_equal(k.key[31], 0xff);
	assert_int_equal(pfs_auth_key_load(put("ro", text, 0400), &k, &why), 0);

	/* Permissions: any group/other bit is refused, with a reason. */
	why = NULL;
	assert_int_equal(pfs_auth_key_load(put("p644", text, 0644), &k, &why), -EPERM);
	assert_non_null(why);
	assert_non_null(strstr(why, "permission"));
	assert_int_equal(pfs_auth_key_load(put("p640", text, 0640), &k, &why), -EPERM);
	assert_int_equal(pfs_auth_key_load(put("p604", text, 0604), &k, &why), -EPERM);
	assert_int_equal(pfs_auth_key_load(put("p610", text, 0610), &k, &why), -EPERM);
	/* A refused key leaves nothing behind. */
	for (size_t i = 0; i < sizeof(k.key); i++)
		assert_int_equal(k.key[i], 0);

	/* Wrong owner (needs root to give the file away). */
	if (geteuid() == 0) {
		const char *p = put("owner", text, 0600);

		assert_int_equal(chown(p, 65534, 65534), 0);
		why = NULL;
		assert_int_equal(pfs_auth_key_load(p, &k, &why), -EPERM);
		assert_non_null(strstr(why, "owned"));
	} else {
		print_message("not root: wrong-owner case skipped\n");
	}

	/* Not a regular file, a symlink, missing. */
	assert_int_equal(pfs_auth_key_load(dir, &k, &why), -EPERM);
	{
		char lp[128], tp[128];

		snprintf(tp, sizeof(tp), "%s/ok", dir);
		snprintf(lp, sizeof(lp), "%s/link", dir);
		assert_int_equal(symlink(tp, lp), 0);
		assert_true(pfs_auth_key_load(lp, &k, &why) < 0);
	}
	assert_int_equal(pfs_auth_key_load("/nonexistent/pfs.key", &k, &why), -ENOENT);

	/* Format errors. */
	snprintf(text, sizeof(text), "role = client\nkey = %.62szz\n", HEX64);
	assert_int_equal(pfs_auth_key_load(put("hex", text, 0600), &k, &why), -EINVAL);
	assert_non_null(strstr(why, "hex"));
	snprintf(text, sizeof(text), "role = wizard\nkey = %s\n", HEX64);
	assert_int_equal(pfs_auth_key_load(put("role", text, 0600), &k, &why), -EINVAL);
	assert_non_null(strstr(why, "role"));
	snprintf(text, sizeof(text), "role = client\nkey = %.62s\n", HEX64);
	assert_int_equal(pfs_auth_key_load(put("short", text, 0600), &k, &why), -EINVAL);
	snprintf(text, sizeof(text), "role = client\nkey = %s00\n", HEX64);
	assert_int_equal(pfs_auth_key_load(put("long", text, 0600), &k, &why), -EINVAL);
	snprintf(text, sizeof(text), "role = client\n");
	assert_int_equal(pfs_auth_key_load(put("nokey", text, 0600), &k, &why), -EINVAL);
	snprintf(text, sizeof(text), "key = %s\n", HEX64);
	assert_int_equal(pfs_auth_key_load(put("norole", text, 0600), &k, &why), -EINVAL);
	snprintf(text, sizeof(text), "role = client\nkey = %s\ncolour = blue\n", HEX64);
	assert_int_equal(pfs_auth_key_load(put("extra", text, 0600), &k, &why), -EINVAL);
	assert_int_equal(pfs_auth_key_load(put("junk", "just junk\n", 0600), &k, &why), -EINVAL);
}

static void path_of(char *out, size_t n, const char *name)
{
	snprintf(out, n, "%s/%s", dir, name);
	unlink(out);
}

static void test_key_derivation(void **state)
{
	char pm[128], pc[128], pa[128], pm2[128], px[128];
	pfs_auth_key m, c, a, m2;
	uint8_t kr[PFS_AUTH_KEY_LEN], kr2[PFS_AUTH_KEY_LEN];
	struct stat st;

	path_of(pm, sizeof(pm), "mds.key");
	path_of(pc, sizeof(pc), "client.key");
	path_of(pa, sizeof(pa), "admin.key");
	path_of(pm2, sizeof(pm2), "oss.key");
	path_of(px, sizeof(px), "x.key");
	assert_int_equal(pfs_auth_key_write(pm, PFS_ROLE_MDS, NULL), 0);
	assert_int_equal(stat(pm, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(pfs_auth_key_write(pm, PFS_ROLE_MDS, NULL), -EEXIST);
	assert_int_equal(pfs_auth_key_load(pm, &m, NULL), 0);
	assert_int_equal(m.role, PFS_ROLE_MDS);

	/* client/admin keys need a server master; an oss key from the master
	 * holds the same M. */
	assert_int_equal(pfs_auth_key_write(px, PFS_ROLE_CLIENT, NULL), -EINVAL);
	assert_int_equal(pfs_auth_key_write(pc, PFS_ROLE_CLIENT, &m), 0);
	assert_int_equal(pfs_auth_key_write(pa, PFS_ROLE_ADMIN, &m), 0);
	assert_int_equal(pfs_auth_key_write(pm2, PFS_ROLE_OSS, &m), 0);
	assert_int_equal(pfs_auth_key_load(pc, &c, NULL), 0);
	assert_int_equal(pfs_auth_key_load(pa, &a, NULL), 0);
	assert_int_equal(pfs_auth_key_load(pm2, &m2, NULL), 0);
	assert_int_equal(c.role, PFS_ROLE_CLIENT);
	assert_int_equal(m2.role, PFS_ROLE_OSS);
	assert_memory_equal(m2.key, m.key, PFS_AUTH_KEY_LEN);

	/* The server derives the same K_client the client file holds, and
	 * K_admin differs from it. */
	assert_int_equal(pfs_auth_role_key(&m, PFS_ROLE_CLIENT, kr), 0);
	assert_memory_equal(kr, c.key, PFS_AUTH_KEY_LEN);
	assert_memory_not_equal(c.key, m.key, PFS_AUTH_KEY_LEN);
	assert_int_equal(pfs_auth_role_key(&m2, PFS_ROLE_ADMIN, kr), 0);
	assert_memory_equal(kr, a.key, PFS_AUTH_KEY_LEN);
	assert_memory_not_equal(a.key, c.key, PFS_AUTH_KEY_LEN);

	/* A client key yields its own K_role and nothing else. */
	assert_int_equal(pfs_auth_role_key(&c, PFS_ROLE_CLIENT, kr), 0);
	assert_memory_equal(kr, c.key, PFS_AUTH_KEY_LEN);
	assert_int_equal(pfs_auth_role_key(&c, PFS_ROLE_ADMIN, kr), -EPERM);
	assert_int_equal(pfs_auth_role_key(&c, PFS_ROLE_OSS, kr), -EPERM);
	assert_int_equal(pfs_auth_role_key(&c, PFS_ROLE_MDS, kr), -EPERM);
	assert_int_equal(pfs_auth_role_key(&a, PFS_ROLE_CLIENT, kr), -EPERM);
	assert_int_equal(pfs_auth_role_key(&m, 0x40, kr), -EINVAL);
	assert_int_equal(pfs_auth_cap_key(&c, kr), -EPERM);
	assert_int_equal(pfs_auth_cap_key(&a, kr), -EPERM);
	assert_int_equal(pfs_auth_cap_key(&m, kr), 0);
	assert_int_equal(pfs_auth_cap_key(&m2, kr2), 0);
	assert_memory_equal(kr, kr2, PFS_AUTH_KEY_LEN);
	assert_int_equal(pfs_auth_key_write(px, PFS_ROLE_ADMIN, &c), -EPERM);
	assert_int_equal(pfs_auth_key_write(px, PFS_ROLE_OSS, &c), -EPERM);
	assert_int_equal(access(px, F_OK), -1);

	assert_int_equal(pfs_role_parse("oss"), PFS_ROLE_OSS);
	assert_int_equal(pfs_role_parse("root"), 0);
	assert_string_equal(pfs_role_name(PFS_ROLE_ADMIN), "admin");
	assert_int_equal(pfs_integrity_parse("full"), PFS_INTEGRITY_FULL);
	assert_int_equal(pfs_integrity_parse("header"), PFS_INTEGRITY_HEADER);
	assert_int_equal(pfs_integrity_parse("none"), -EINVAL);
}

/* ---- handshake ---------------------------------------------------------- */

typedef struct cli_run {
	int fd;
	pfs_auth_key key;
	int timeout_ms;
	int rc;
	pfs_auth_sess sess;
} cli_run;

static void *cli_thread(void *arg)
{
	cli_run *r = arg;

	r->rc = pfs_auth_client(r->fd, &r->key, r->timeout_ms, &r->sess);
	return NULL;
}

static void rd(int fd, void *p, size_t n)
{
	uint8_t *c = p;

	while (n > 0) {
		ssize_t r = recv(fd, c, n, 0);
		assert_true(r > 0);
		c += r;
		n -= (size_t)r;
	}
}

static void wr(int fd, const void *p, size_t n)
{
	(void)!send(fd, p, n, MSG_NOSIGNAL); /* the client may have gone */
}

static void mk_master(pfs_auth_key *m, unsigned role)
{
	memset(m, 0, sizeof(*m));
	m->role = role;
	m->integrity = PFS_INTEGRITY_HEADER;
	randombytes_buf(m->key, sizeof(m->key));
}

/* A client/admin key derived from server key m. */
static void mk_node(pfs_auth_key *k, const pfs_auth_key *m, unsigned role)
{
	memset(k, 0, sizeof(*k));
	k->role = role;
	assert_int_equal(pfs_auth_role_key(m, role, k->key), 0);
}

/* Run a handshake: client key ck in a thread, server key sk here.  Returns
 * the server's result; *crc the client's. */
static int handshake(const pfs_auth_key *sk, const pfs_auth_key *ck, pfs_auth_sess *cs,
		     pfs_auth_sess *ss, int *crc)
{
	int sv[2], rc;
	pthread_t t;
	cli_run r = { .key = *ck, .timeout_ms = 5000 };
	uint8_t hello[PFS_AUTH_HELLO_LEN], chal[PFS_AUTH_CHAL_LEN];
	uint8_t proof[PFS_AUTH_PROOF_LEN], res[PFS_AUTH_RESULT_LEN];
	pfs_auth_srv st;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	r.fd = sv[0];
	assert_int_equal(pthread_create(&t, NULL, cli_thread, &r), 0);
	rd(sv[1], hello, sizeof(hello));
	rc = pfs_auth_srv_hello(&st, sk, hello, chal);
	wr(sv[1], chal, sizeof(chal));
	if (rc == 0) {
		rd(sv[1], proof, sizeof(proof));
		rc = pfs_auth_srv_proof(&st, proof, res, ss);
		wr(sv[1], res, sizeof(res));
	}
	pfs_auth_srv_done(&st);
	if (rc)
		shutdown(sv[1], SHUT_RDWR);
	pthread_join(t, NULL);
	close(sv[0]);
	close(sv[1]);
	*cs = r.sess;
	*crc = r.rc;
	return rc;
}

static void test_handshake_ok(void **state)
{
	pfs_auth_key m, c, a;
	pfs_auth_sess cs, ss;
	int crc;

	mk_master(&m, PFS_ROLE_MDS);
	mk_node(&c, &m, PFS_ROLE_CLIENT);
	m.integrity = PFS_INTEGRITY_FULL;
	assert_int_equal(handshake(&m, &c, &cs, &ss, &crc), 0);
	assert_int_equal(crc, 0);
	assert_int_equal(ss.peer_role, PFS_ROLE_CLIENT);
	assert_int_equal(ss.integrity, PFS_INTEGRITY_FULL);
	assert_int_equal(cs.integrity, PFS_INTEGRITY_FULL);
	assert_memory_equal(cs.k_send, ss.k_recv, 32);
	assert_memory_equal(cs.k_recv, ss.k_send, 32);
	assert_memory_not_equal(cs.k_send, cs.k_recv, 32);
	assert_int_equal(cs.seq_send + cs.seq_recv + ss.seq_send + ss.seq_recv, 0);

	/* Admin key; a server key as a client (an OSS talking to the MDS). */
	m.integrity = PFS_INTEGRITY_HEADER;
	mk_node(&a, &m, PFS_ROLE_ADMIN);
	assert_int_equal(handshake(&m, &a, &cs, &ss, &crc), 0);
	assert_int_equal(crc, 0);
	assert_int_equal(ss.peer_role, PFS_ROLE_ADMIN);
	assert_int_equal(cs.integrity, PFS_INTEGRITY_HEADER);
	{
		pfs_auth_key o = m;
		pfs_auth_sess cs2;

		o.role = PFS_ROLE_OSS;
		assert_int_equal(handshake(&m, &o, &cs2, &ss, &crc), 0);
		assert_int_equal(crc, 0);
		assert_int_equal(ss.peer_role, PFS_ROLE_OSS);
		/* Fresh nonces: a second session has other keys. */
		assert_memory_not_equal(cs2.k_send, cs.k_send, 32);
	}
}

static void test_handshake_refused(void **state)
{
	pfs_auth_key m, other, c, bad, fake;
	pfs_auth_sess cs, ss;
	uint8_t hello[PFS_AUTH_HELLO_LEN] = { 'P', 'F', 'S', 'A', PFS_AUTH_VERSION };
	uint8_t chal[PFS_AUTH_CHAL_LEN];
	pfs_auth_srv st;
	int crc;

	mk_master(&m, PFS_ROLE_MDS);
	mk_master(&other, PFS_ROLE_MDS);
	mk_node(&c, &m, PFS_ROLE_CLIENT);

	/* A key of another cluster: both sides -EACCES. */
	mk_node(&bad, &other, PFS_ROLE_CLIENT);
	assert_int_equal(handshake(&m, &bad, &cs, &ss, &crc), -EACCES);
	assert_int_equal(crc, -EACCES);
	/* A server key of another cluster as a client, and a client facing a
	 * server that has the wrong master. */
	assert_int_equal(handshake(&m, &other, &cs, &ss, &crc), -EACCES);
	assert_int_equal(crc, -EACCES);
	assert_int_equal(handshake(&other, &c, &cs, &ss, &crc), -EACCES);
	assert_int_equal(crc, -EACCES);

	/* A client key claiming role admin or oss (it only has K_client). */
	fake = c;
	fake.role = PFS_ROLE_ADMIN;
	assert_int_equal(handshake(&m, &fake, &cs, &ss, &crc), -EACCES);
	assert_int_equal(crc, -EACCES);
	fake.role = PFS_ROLE_OSS; /* pfs_auth_client takes it for a server key */
	assert_int_equal(handshake(&m, &fake, &cs, &ss, &crc), -EACCES);
	assert_int_equal(crc, -EACCES);

	/* A server that only has a client key cannot take other roles. */
	hello[5] = PFS_ROLE_ADMIN;
	assert_int_equal(pfs_auth_srv_hello(&st, &c, hello, chal), -EACCES);
	assert_int_not_equal(chal[5], 0);
	hello[5] = 0x40; /* no such role */
	assert_int_equal(pfs_auth_srv_hello(&st, &m, hello, chal), -EACCES);
	assert_int_not_equal(chal[5], 0);
	hello[5] = PFS_ROLE_CLIENT;
	assert_int_equal(pfs_auth_srv_hello(&st, &m, hello, chal), 0);
	assert_int_equal(chal[5], 0);
	pfs_auth_srv_done(&st);
}

/* A fake server that sends `n` bytes of `bytes` after the HELLO, then closes. */
typedef struct fake_srv {
	int fd;
	const uint8_t *bytes;
	size_t n;
} fake_srv;

static void *fake_thread(void *arg)
{
	fake_srv *f = arg;
	uint8_t hello[PFS_AUTH_HELLO_LEN];

	rd(f->fd, hello, sizeof(hello));
	wr(f->fd, f->bytes, f->n);
	shutdown(f->fd, SHUT_WR);
	return NULL;
}

static int client_against(const uint8_t *bytes, size_t n, int timeout_ms)
{
	int sv[2], rc;
	pthread_t t;
	fake_srv f = { .bytes = bytes, .n = n };
	pfs_auth_key m, c;
	pfs_auth_sess s;

	mk_master(&m, PFS_ROLE_MDS);
	mk_node(&c, &m, PFS_ROLE_CLIENT);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	f.fd = sv[1];
	assert_int_equal(pthread_create(&t, NULL, fake_thread, &f), 0);
	rc = pfs_auth_client(sv[0], &c, timeout_ms, &s);
	pthread_join(t, NULL);
	close(sv[0]);
	close(sv[1]);
	return rc;
}

static void test_handshake_garbage(void **state)
{
	uint8_t junk[PFS_AUTH_CHAL_LEN], res[PFS_AUTH_RESULT_LEN], proof[32] = { 0 };
	uint8_t hello[PFS_AUTH_HELLO_LEN], chal[PFS_AUTH_CHAL_LEN];
	pfs_auth_key m;
	pfs_auth_srv st;
	pfs_auth_sess s;

	mk_master(&m, PFS_ROLE_MDS);
	/* Server: a HELLO of garbage, a wrong version, a frame header. */
	memset(hello, 0xa5, sizeof(hello));
	assert_int_equal(pfs_auth_srv_hello(&st, &m, hello, chal), -EPROTO);
	assert_int_not_equal(chal[5], 0);
	memcpy(hello, "PFSA", 4);
	hello[4] = PFS_AUTH_VERSION + 1;
	hello[5] = PFS_ROLE_CLIENT;
	assert_int_equal(pfs_auth_srv_hello(&st, &m, hello, chal), -EPROTO);
	memcpy(hello, "PFS1", 4);
	hello[4] = PFS_AUTH_VERSION;
	assert_int_equal(pfs_auth_srv_hello(&st, &m, hello, chal), -EPROTO);
	/* A PROOF without an accepted HELLO. */
	memset(&st, 0, sizeof(st));
	assert_int_equal(pfs_auth_srv_proof(&st, proof, res, &s), -EACCES);
	assert_int_not_equal(res[5], 0);

	/* Client: garbage, a truncated challenge, silence. */
	memset(junk, 0x5a, sizeof(junk));
	assert_int_equal(client_against(junk, sizeof(junk), 2000), -EPROTO);
	memcpy(junk, "PFSA", 4);
	junk[4] = PFS_AUTH_VERSION;
	junk[5] = 0;
	junk[6] = 9; /* no such integrity mode */
	assert_int_equal(client_against(junk, sizeof(junk), 2000), -EPROTO);
	junk[6] = PFS_INTEGRITY_HEADER; /* well-formed, but proof_s is junk */
	assert_int_equal(client_against(junk, sizeof(junk), 2000), -EACCES);
	assert_int_equal(client_against(junk, 30, 2000), -EPROTO);
	assert_int_equal(client_against(junk, 0, 2000), -ECONNRESET);
}

static void *silent_thread(void *arg)
{
	int fd = *(int *)arg;
	uint8_t b[PFS_AUTH_HELLO_LEN];

	rd(fd, b, sizeof(b));
	return NULL;
}

static void test_handshake_timeout(void **state)
{
	int sv[2];
	pthread_t t;
	pfs_auth_key m, c;
	pfs_auth_sess s;

	mk_master(&m, PFS_ROLE_MDS);
	mk_node(&c, &m, PFS_ROLE_CLIENT);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(pthread_create(&t, NULL, silent_thread, &sv[1]), 0);
	assert_int_equal(pfs_auth_client(sv[0], &c, 100, &s), -ETIMEDOUT);
	pthread_join(t, NULL);
	close(sv[0]);
	close(sv[1]);
}

/* ---- frames ------------------------------------------------------------- */

static void sessions(int integrity, pfs_auth_sess *cs, pfs_auth_sess *ss)
{
	pfs_auth_key m, c;
	int crc;

	mk_master(&m, PFS_ROLE_MDS);
	m.integrity = integrity;
	mk_node(&c, &m, PFS_ROLE_CLIENT);
	assert_int_equal(handshake(&m, &c, cs, ss, &crc), 0);
	assert_int_equal(crc, 0);
}

static void req(pfs_hdr *h, uint16_t op, uint32_t len, int reply)
{
	pfs_hdr_init(h, op, 77, 42, "job-1");
	h->uid = 1000;
	h->payload_len = len;
	if (reply)
		h->flags |= PFS_F_REPLY;
}

static void test_frame_roundtrip_and_tamper(void **state)
{
	pfs_auth_sess cs, ss, t;
	pfs_hdr h, h2, d;
	uint8_t p[64], hb[PFS_HDR_LEN];
	int decoded = 0;

	sessions(PFS_INTEGRITY_FULL, &cs, &ss);
	for (size_t i = 0; i < sizeof(p); i++)
		p[i] = (uint8_t)i;
	req(&h, PFS_OP_MDS_LOOKUP, sizeof(p), 0);
	pfs_auth_seal(&cs, &h, p, 40, p + 40, sizeof(p) - 40);
	assert_int_equal(cs.seq_send, 1);
	assert_memory_not_equal(h.mac, (uint8_t[16]){ 0 }, 16);

	/* Any header byte changed: either it no longer decodes or the tag fails. */
	pfs_hdr_encode(&h, hb);
	for (size_t i = 0; i < PFS_HDR_LEN; i++) {
		hb[i] ^= 0x04;
		if (pfs_hdr_decode(hb, sizeof(hb), PFS_MAX_PAYLOAD, &d) == 0) {
			t = ss;
			decoded++;
			assert_int_equal(pfs_auth_open(&t, &d, p, sizeof(p), NULL, 0), -EBADMSG);
		}
		hb[i] ^= 0x04;
	}
	assert_true(decoded > 70); /* most bytes reach the tag check */
	/* Any payload byte changed. */
	for (size_t i = 0; i < sizeof(p); i++) {
		t = ss;
		p[i] ^= 0x80;
		assert_int_equal(pfs_auth_open(&t, &h, p, sizeof(p), NULL, 0), -EBADMSG);
		p[i] ^= 0x80;
	}
	/* Short payload given to open. */
	t = ss;
	assert_int_equal(pfs_auth_open(&t, &h, p, sizeof(p) - 1, NULL, 0), -EBADMSG);
	/* Intact (in one piece or two): accepted once; a replay is not. */
	t = ss;
	assert_int_equal(pfs_auth_open(&t, &h, p, 10, p + 10, sizeof(p) - 10), 0);
	assert_int_equal(pfs_auth_open(&ss, &h, p, sizeof(p), NULL, 0), 0);
	assert_int_equal(ss.seq_recv, 1);
	assert_int_equal(pfs_auth_open(&ss, &h, p, sizeof(p), NULL, 0), -EBADMSG);
	/* After a failure the session refuses everything, even a good frame. */
	req(&h2, PFS_OP_MDS_GETATTR, 0, 0);
	pfs_auth_seal(&cs, &h2, NULL, 0, NULL, 0);
	assert_int_equal(pfs_auth_open(&ss, &h2, NULL, 0, NULL, 0), -EBADMSG);
}

static void test_frame_order_and_reflection(void **state)
{
	pfs_auth_sess cs, ss, t;
	pfs_hdr a, b, r;

	sessions(PFS_INTEGRITY_HEADER, &cs, &ss);
	req(&a, PFS_OP_MDS_GETATTR, 0, 0);
	req(&b, PFS_OP_MDS_STATFS, 0, 0);
	pfs_auth_seal(&cs, &a, NULL, 0, NULL, 0);
	pfs_auth_seal(&cs, &b, NULL, 0, NULL, 0);
	/* Reordered: b first fails. */
	t = ss;
	assert_int_equal(pfs_auth_open(&t, &b, NULL, 0, NULL, 0), -EBADMSG);
	/* Dropped a: b alone fails too; in order both pass. */
	t = ss;
	assert_int_equal(pfs_auth_open(&t, &a, NULL, 0, NULL, 0), 0);
	assert_int_equal(pfs_auth_open(&t, &b, NULL, 0, NULL, 0), 0);
	/* Reflected: the client's own request sent back to it. */
	t = cs;
	assert_int_equal(pfs_auth_open(&t, &a, NULL, 0, NULL, 0), -EBADMSG);
	/* A reply from the server opens at the client; reflected to the server
	 * it does not. */
	assert_int_equal(pfs_auth_open(&ss, &a, NULL, 0, NULL, 0), 0);
	req(&r, PFS_OP_MDS_GETATTR, 0, 1);
	pfs_auth_seal(&ss, &r, NULL, 0, NULL, 0);
	t = ss;
	assert_int_equal(pfs_auth_open(&t, &r, NULL, 0, NULL, 0), -EBADMSG);
	assert_int_equal(pfs_auth_open(&cs, &r, NULL, 0, NULL, 0), 0);
	/* A frame of another session (same key, other nonces) fails. */
	{
		pfs_auth_sess cs2, ss2;

		sessions(PFS_INTEGRITY_HEADER, &cs2, &ss2);
		req(&a, PFS_OP_MDS_GETATTR, 0, 0);
		pfs_auth_seal(&cs2, &a, NULL, 0, NULL, 0);
		t = ss;
		t.seq_recv = 0;
		assert_int_equal(pfs_auth_open(&t, &a, NULL, 0, NULL, 0), -EBADMSG);
	}
}

/* Flip byte i of the payload and report whether the receiver still accepts. */
static int accepts_flip(const pfs_auth_sess *rs, const pfs_hdr *h, uint8_t *p, size_t n,
			size_t i)
{
	pfs_auth_sess t = *rs;
	int rc;

	p[i] ^= 1;
	rc = pfs_auth_open(&t, h, p, n, NULL, 0);
	p[i] ^= 1;
	return rc == 0;
}

static void test_frame_integrity_modes(void **state)
{
	enum { N = PFS_AUTH_WRITE_FIELDS + 1000 };
	pfs_auth_sess cs, ss, t;
	pfs_hdr h;
	static uint8_t p[N];

	for (size_t i = 0; i < N; i++)
		p[i] = (uint8_t)(i * 7);

	/* HEADER: OSS_WRITE data bytes uncovered, its fields covered. */
	sessions(PFS_INTEGRITY_HEADER, &cs, &ss);
	req(&h, PFS_OP_OSS_WRITE, N, 0);
	assert_int_equal(pfs_auth_covered(&cs, &h), PFS_AUTH_WRITE_FIELDS);
	/* Sealed without the bulk in memory (spliced), opened with it. */
	pfs_auth_seal(&cs, &h, p, PFS_AUTH_WRITE_FIELDS, NULL, N - PFS_AUTH_WRITE_FIELDS);
	for (size_t i = 0; i < PFS_AUTH_WRITE_FIELDS; i++)
		assert_false(accepts_flip(&ss, &h, p, N, i));
	assert_true(accepts_flip(&ss, &h, p, N, PFS_AUTH_WRITE_FIELDS));
	assert_true(accepts_flip(&ss, &h, p, N, N - 1));
	t = ss;
	assert_int_equal(pfs_auth_open(&t, &h, p, PFS_AUTH_WRITE_FIELDS, NULL, 0), 0);
	assert_int_equal(pfs_auth_open(&ss, &h, p, N, NULL, 0), 0);

	/* HEADER: the OSS_READ reply's bytes are uncovered, its header is. */
	req(&h, PFS_OP_OSS_READ, N, 1);
	assert_int_equal(pfs_auth_covered(&ss, &h), 0);
	pfs_auth_seal(&ss, &h, NULL, N, NULL, 0);
	assert_true(accepts_flip(&cs, &h, p, N, 0));
	h.payload_len--; /* the header still is */
	t = cs;
	assert_int_equal(pfs_auth_open(&t, &h, p, N, NULL, 0), -EBADMSG);
	h.payload_len++;
	assert_int_equal(pfs_auth_open(&cs, &h, p, N, NULL, 0), 0);

	/* HEADER: everything else is covered in full — an OSS_READ request,
	 * an OSS_WRITE reply, a metadata request. */
	req(&h, PFS_OP_OSS_READ, N, 0);
	assert_int_equal(pfs_auth_covered(&cs, &h), N);
	pfs_auth_seal(&cs, &h, p, N, NULL, 0);
	assert_false(accepts_flip(&ss, &h, p, N, N - 1));
	req(&h, PFS_OP_OSS_WRITE, 4, 1);
	assert_int_equal(pfs_auth_covered(&cs, &h), 4);
	req(&h, PFS_OP_MDS_CREATE, N, 0);
	assert_int_equal(pfs_auth_covered(&cs, &h), N);
	/* A short OSS_WRITE (fewer bytes than its fields) is covered whole. */
	req(&h, PFS_OP_OSS_WRITE, 10, 0);
	assert_int_equal(pfs_auth_covered(&cs, &h), 10);

	/* FULL: the bulk is covered both ways. */
	sessions(PFS_INTEGRITY_FULL, &cs, &ss);
	req(&h, PFS_OP_OSS_WRITE, N, 0);
	assert_int_equal(pfs_auth_covered(&cs, &h), N);
	pfs_auth_seal(&cs, &h, p, PFS_AUTH_WRITE_FIELDS, p + PFS_AUTH_WRITE_FIELDS,
		      N - PFS_AUTH_WRITE_FIELDS);
	assert_false(accepts_flip(&ss, &h, p, N, N - 1));
	assert_false(accepts_flip(&ss, &h, p, N, PFS_AUTH_WRITE_FIELDS));
	assert_int_equal(pfs_auth_open(&ss, &h, p, N, NULL, 0), 0);
	req(&h, PFS_OP_OSS_READ, N, 1);
	pfs_auth_seal(&ss, &h, p, N, NULL, 0);
	assert_false(accepts_flip(&cs, &h, p, N, 0));
	assert_false(accepts_flip(&cs, &h, p, N, N - 1));
	assert_int_equal(pfs_auth_open(&cs, &h, p, N, NULL, 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_key_load),
		cmocka_unit_test(test_key_derivation),
		cmocka_unit_test(test_handshake_ok),
		cmocka_unit_test(test_handshake_refused),
		cmocka_unit_test(test_handshake_garbage),
		cmocka_unit_test(test_handshake_timeout),
		cmocka_unit_test(test_frame_roundtrip_and_tamper),
		cmocka_unit_test(test_frame_order_and_reflection),
		cmocka_unit_test(test_frame_integrity_modes),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
