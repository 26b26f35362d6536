/* auth.c — key files, the connection handshake and frame MACs (see auth.h).
 *
 * Every primitive comes from libsodium: crypto_kdf (role keys), HMAC-SHA256
 * (handshake proofs), BLAKE2b (session keys), ChaCha20 + Poly1305 (frame
 * tags), sodium_memcmp/crypto_verify_16 for comparisons.  The client side
 * does its own I/O on a blocking socket; the server side is pure steps so
 * the event-driven server core (common/server.c) can drive it. */
#include "common/auth.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/uio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"

#define KEYFILE_MAX 4096

static const struct {
	unsigned role;
	const char *name;
} roles[] = {
	{ PFS_ROLE_MDS, "mds" },
	{ PFS_ROLE_OSS, "oss" },
	{ PFS_ROLE_CLIENT, "client" },
	{ PFS_ROLE_ADMIN, "admin" },
};

unsigned pfs_role_parse(const char *s)
{
	for (size_t i = 0; s && i < sizeof(roles) / sizeof(roles[0]); i++)
		if (strcmp(s, roles[i].name) == 0)
			return roles[i].role;
	return 0;
}

const char *pfs_role_name(unsigned role)
{
	if (role == PFS_ROLE_NONE)
		return "none";
	for (size_t i = 0; i < sizeof(roles) / sizeof(roles[0]); i++)
		if (roles[i].role == role)
			return roles[i].name;
	return "?";
}

static int role_valid(unsigned role)
{
	return pfs_role_parse(pfs_role_name(role)) == role;
}

static int is_server_role(unsigned role)
{
	return role == PFS_ROLE_MDS || role == PFS_ROLE_OSS;
}

int pfs_integrity_parse(const char *s)
{
	if (s && strcmp(s, "header") == 0)
		return PFS_INTEGRITY_HEADER;
	if (s && strcmp(s, "full") == 0)
		return PFS_INTEGRITY_FULL;
	return -EINVAL;
}

int pfs_auth_init(void)
{
	return sodium_init() < 0 ? -EIO : 0;
}

/* ---- key files ---------------------------------------------------------- */

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

/* Parse the text of a key file into out. */
static int key_parse(char *text, pfs_auth_key *out, const char **why)
{
	int have_role = 0, have_key = 0;
	char *save = NULL, *line;

	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *hash = strchr(line, '#'), *eq, *name, *val;

		if (hash)
			*hash = '\0';
		line = trim(line);
		if (!*line)
			continue;
		eq = strchr(line, '=');
		if (!eq) {
			*why = "a line is not \"name = value\"";
			return -EINVAL;
		}
		*eq = '\0';
		name = trim(line);
		val = trim(eq + 1);
		if (strcmp(name, "role") == 0) {
			out->role = pfs_role_parse(val);
			if (!out->role) {
				*why = "unknown role (mds, oss, client or admin)";
				return -EINVAL;
			}
			have_role = 1;
		} else if (strcmp(name, "key") == 0) {
			size_t bin_len = 0;
			const char *end = NULL;

			if (strlen(val) != 2 * PFS_AUTH_KEY_LEN) {
				*why = "the key is not 64 hex digits";
				return -EINVAL;
			}
			if (sodium_hex2bin(out->key, sizeof(out->key), val, strlen(val), NULL,
					   &bin_len, &end) || bin_len != PFS_AUTH_KEY_LEN || *end) {
				*why = "the key is not valid hex";
				return -EINVAL;
			}
			have_key = 1;
		} else {
			*why = "unknown setting (only role and key)";
			return -EINVAL;
		}
	}
	if (!have_role || !have_key) {
		*why = have_role ? "no key line" : "no role line";
		return -EINVAL;
	}
	return 0;
}

int pfs_auth_key_load(const char *path, pfs_auth_key *out, const char **why)
{
	const char *dummy;
	char *text;
	struct stat st;
	ssize_t n;
	size_t got = 0;
	int fd, rc;

	if (!why)
		why = &dummy;
	*why = NULL;
	memset(out, 0, sizeof(*out));
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0) {
		rc = -errno;
		*why = rc == -ELOOP ? "the path is a symbolic link" : strerror(errno);
		return rc;
	}
	if (fstat(fd, &st)) {
		rc = -errno;
		*why = "cannot stat it";
		close(fd);
		return rc;
	}
	if (!S_ISREG(st.st_mode)) {
		*why = "not a regular file";
		close(fd);
		return -EPERM;
	}
	if (st.st_uid != geteuid()) {
		*why = "owned by another user (must be owned by the user running this program)";
		close(fd);
		return -EPERM;
	}
	if (st.st_mode & (S_IRWXG | S_IRWXO)) {
		*why = "group or other permission bits are set (chmod 600 it)";
		close(fd);
		return -EPERM;
	}
	if (st.st_size > KEYFILE_MAX) {
		*why = "too large for a key file";
		close(fd);
		return -EINVAL;
	}
	text = sodium_malloc(KEYFILE_MAX + 1);
	if (!text) {
		close(fd);
		return -ENOMEM;
	}
	while ((n = read(fd, text + got, KEYFILE_MAX - got)) > 0)
		got += (size_t)n;
	rc = n < 0 ? -errno : 0;
	close(fd);
	if (rc) {
		*why = "cannot read it";
	} else if (got == KEYFILE_MAX) {
		*why = "too large for a key file";
		rc = -EINVAL;
	} else {
		text[got] = '\0';
		rc = key_parse(text, out, why);
	}
	sodium_free(text); /* zeroes the copy of the key */
	if (rc) {
		sodium_memzero(out, sizeof(*out));
		return rc;
	}
	out->integrity = PFS_INTEGRITY_HEADER;
	return 0;
}

int pfs_auth_key_load_msg(const char *path, pfs_auth_key *out, char *err, size_t errlen)
{
	const char *why = NULL;
	int rc = pfs_auth_key_load(path, out, &why);

	if (rc)
		snprintf(err, errlen, "key file %s: %s", path, why ? why : strerror(-rc));
	return rc;
}

static int kdf(const uint8_t m[PFS_AUTH_KEY_LEN], uint64_t id, const char ctx[8],
	       uint8_t out[PFS_AUTH_KEY_LEN])
{
	return crypto_kdf_derive_from_key(out, PFS_AUTH_KEY_LEN, id, ctx, m) ? -EIO : 0;
}

int pfs_auth_role_key(const pfs_auth_key *k, unsigned role, uint8_t out[PFS_AUTH_KEY_LEN])
{
	if (!role_valid(role) || role == PFS_ROLE_NONE)
		return -EINVAL;
	if (is_server_role(k->role))
		return kdf(k->key, role, "pfs-role", out);
	if (k->role != role)
		return -EPERM;
	memcpy(out, k->key, PFS_AUTH_KEY_LEN);
	return 0;
}

int pfs_auth_cap_key(const pfs_auth_key *k, uint8_t out[PFS_AUTH_KEY_LEN])
{
	if (!is_server_role(k->role))
		return -EPERM;
	return kdf(k->key, 0, "pfs-capk", out);
}

int pfs_auth_key_write(const char *path, unsigned role, const pfs_auth_key *master)
{
	uint8_t key[PFS_AUTH_KEY_LEN];
	char hex[2 * PFS_AUTH_KEY_LEN + 1], text[256];
	int fd, rc, n;

	if (!role || !role_valid(role))
		return -EINVAL;
	if (master) {
		rc = is_server_role(role) ? (is_server_role(master->role) ?
					     (memcpy(key, master->key, sizeof(key)), 0) : -EPERM) :
			pfs_auth_role_key(master, role, key);
		if (rc)
			return rc;
	} else if (is_server_role(role)) {
		randombytes_buf(key, sizeof(key));
	} else {
		return -EINVAL; /* a client/admin key comes from a master */
	}
	sodium_bin2hex(hex, sizeof(hex), key, sizeof(key));
	n = snprintf(text, sizeof(text),
		     "# pfs %s key (see pfsadmin key gen); keep it 0600, owned by its user\n"
		     "role = %s\nkey = %s\n",
		     is_server_role(role) ? "server" : "node", pfs_role_name(role), hex);
	sodium_memzero(key, sizeof(key));
	sodium_memzero(hex, sizeof(hex));
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		sodium_memzero(text, sizeof(text));
		return -errno;
	}
	rc = fchmod(fd, 0600) ? -errno : 0;
	for (int off = 0; rc == 0 && off < n;) {
		ssize_t w = write(fd, text + off, (size_t)(n - off));
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			rc = -errno;
		else
			off += (int)w;
	}
	if (rc == 0 && fsync(fd))
		rc = -errno;
	if (close(fd) && rc == 0)
		rc = -errno;
	sodium_memzero(text, sizeof(text));
	if (rc)
		unlink(path);
	return rc;
}

/* ---- handshake ---------------------------------------------------------- */

static const uint8_t magic[4] = { 'P', 'F', 'S', 'A' };

/* HMAC-SHA256(K_r, label r nonce_c nonce_s mode). */
static void proof(const uint8_t kr[PFS_AUTH_KEY_LEN], const char *label, unsigned role,
		  const uint8_t nc[32], const uint8_t ns[32], int mode, uint8_t out[32])
{
	crypto_auth_hmacsha256_state st;
	uint8_t rb = (uint8_t)role, mb = (uint8_t)mode;

	crypto_auth_hmacsha256_init(&st, kr, PFS_AUTH_KEY_LEN);
	crypto_auth_hmacsha256_update(&st, (const uint8_t *)label, strlen(label));
	crypto_auth_hmacsha256_update(&st, &rb, 1);
	crypto_auth_hmacsha256_update(&st, nc, 32);
	crypto_auth_hmacsha256_update(&st, ns, 32);
	crypto_auth_hmacsha256_update(&st, &mb, 1);
	crypto_auth_hmacsha256_final(&st, out);
	sodium_memzero(&st, sizeof(st));
}

/* k_c2s || k_s2c = BLAKE2b-512(key = K_r, "pfs-sess" nonce_c nonce_s). */
static void sess_keys(const uint8_t kr[PFS_AUTH_KEY_LEN], const uint8_t nc[32],
		      const uint8_t ns[32], int client, pfs_auth_sess *s)
{
	crypto_generichash_state st;
	uint8_t out[64];

	crypto_generichash_init(&st, kr, PFS_AUTH_KEY_LEN, sizeof(out));
	crypto_generichash_update(&st, (const uint8_t *)"pfs-sess", 8);
	crypto_generichash_update(&st, nc, 32);
	crypto_generichash_update(&st, ns, 32);
	crypto_generichash_final(&st, out, sizeof(out));
	memcpy(client ? s->k_send : s->k_recv, out, 32);
	memcpy(client ? s->k_recv : s->k_send, out + 32, 32);
	s->seq_send = s->seq_recv = 0;
	s->failed = 0;
	sodium_memzero(out, sizeof(out));
	sodium_memzero(&st, sizeof(st));
}

static int mode_valid(int m)
{
	return m == PFS_INTEGRITY_HEADER || m == PFS_INTEGRITY_FULL;
}

int pfs_auth_srv_hello(pfs_auth_srv *st, const pfs_auth_key *k,
		       const uint8_t in[PFS_AUTH_HELLO_LEN], uint8_t out[PFS_AUTH_CHAL_LEN])
{
	int rc = 0;

	memset(st, 0, sizeof(*st));
	memset(out, 0, PFS_AUTH_CHAL_LEN);
	memcpy(out, magic, 4);
	out[4] = PFS_AUTH_VERSION;
	st->integrity = mode_valid(k->integrity) ? k->integrity : PFS_INTEGRITY_HEADER;
	out[6] = (uint8_t)st->integrity;
	if (memcmp(in, magic, 4) || in[4] != PFS_AUTH_VERSION)
		rc = -EPROTO;
	else if (!role_valid(in[5]) || in[5] == PFS_ROLE_NONE ||
		 pfs_auth_role_key(k, in[5], st->kr))
		rc = -EACCES;
	if (rc) {
		out[5] = 1;
		pfs_auth_srv_done(st);
		return rc;
	}
	st->role = in[5];
	memcpy(st->nonce_c, in + 8, 32);
	randombytes_buf(st->nonce_s, 32);
	memcpy(out + 8, st->nonce_s, 32);
	proof(st->kr, "pfs-s", st->role, st->nonce_c, st->nonce_s, st->integrity, out + 40);
	return 0;
}

int pfs_auth_srv_proof(pfs_auth_srv *st, const uint8_t in[PFS_AUTH_PROOF_LEN],
		       uint8_t out[PFS_AUTH_RESULT_LEN], pfs_auth_sess *sess)
{
	uint8_t want[32];
	int ok;

	memset(out, 0, PFS_AUTH_RESULT_LEN);
	memcpy(out, magic, 4);
	out[4] = PFS_AUTH_VERSION;
	if (!st->role) { /* no accepted HELLO before */
		out[5] = 1;
		return -EACCES;
	}
	proof(st->kr, "pfs-c", st->role, st->nonce_c, st->nonce_s, st->integrity, want);
	ok = crypto_verify_32(want, in) == 0;
	sodium_memzero(want, sizeof(want));
	if (!ok) {
		out[5] = 1;
		pfs_auth_srv_done(st);
		return -EACCES;
	}
	memset(sess, 0, sizeof(*sess));
	sess_keys(st->kr, st->nonce_c, st->nonce_s, 0, sess);
	sess->peer_role = st->role;
	sess->integrity = st->integrity;
	pfs_auth_srv_done(st);
	return 0;
}

void pfs_auth_srv_done(pfs_auth_srv *st)
{
	sodium_memzero(st, sizeof(*st));
}

/* Exact-length I/O on a blocking socket, bounded by an absolute deadline
 * (pfs_clock_ms); -ETIMEDOUT past it.  A peer that closes before a message
 * is -ECONNRESET (a transport error: it may be restarting), within one
 * -EPROTO (truncated handshake bytes). */
static int io_wait(int fd, short ev, uint64_t deadline)
{
	for (;;) {
		uint64_t now = pfs_clock_ms();
		struct pollfd p = { .fd = fd, .events = ev };
		int r;

		if (now >= deadline)
			return -ETIMEDOUT;
		r = poll(&p, 1, (int)(deadline - now));
		if (r > 0)
			return 0;
		if (r == 0)
			return -ETIMEDOUT;
		if (errno != EINTR)
			return -errno;
	}
}

static int hs_write(int fd, const uint8_t *p, size_t n, uint64_t deadline)
{
	while (n > 0) {
		ssize_t w;
		int rc = io_wait(fd, POLLOUT, deadline);

		if (rc)
			return rc;
		w = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -errno;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int hs_read(int fd, uint8_t *p, size_t n, uint64_t deadline)
{
	size_t want = n;

	while (n > 0) {
		ssize_t r;
		int rc = io_wait(fd, POLLIN, deadline);

		if (rc)
			return rc;
		r = recv(fd, p, n, MSG_DONTWAIT);
		if (r == 0) /* closed: before a message or within one */
			return n == want ? -ECONNRESET : -EPROTO;
		if (r < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -errno;
		}
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

static int hdr_ok(const uint8_t *b)
{
	return memcmp(b, magic, 4) == 0 && b[4] == PFS_AUTH_VERSION;
}

int pfs_auth_client(int fd, const pfs_auth_key *k, int timeout_ms, pfs_auth_sess *out)
{
	uint64_t deadline = pfs_clock_ms() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 5000);
	uint8_t hello[PFS_AUTH_HELLO_LEN] = { 0 }, chal[PFS_AUTH_CHAL_LEN];
	uint8_t pr[PFS_AUTH_PROOF_LEN], res[PFS_AUTH_RESULT_LEN], want[32], kr[PFS_AUTH_KEY_LEN];
	int rc, mode;

	rc = pfs_auth_role_key(k, k->role, kr);
	if (rc)
		return rc;
	memcpy(hello, magic, 4);
	hello[4] = PFS_AUTH_VERSION;
	hello[5] = (uint8_t)k->role;
	hello[6] = (uint8_t)(mode_valid(k->integrity) ? k->integrity : PFS_INTEGRITY_HEADER);
	randombytes_buf(hello + 8, 32);
	rc = hs_write(fd, hello, sizeof(hello), deadline);
	if (rc == 0)
		rc = hs_read(fd, chal, sizeof(chal), deadline);
	if (rc)
		goto out;
	mode = chal[6];
	if (!hdr_ok(chal) || (chal[5] == 0 && !mode_valid(mode))) {
		rc = -EPROTO;
		goto out;
	}
	if (chal[5] != 0) {
		rc = -EACCES;
		goto out;
	}
	proof(kr, "pfs-c", k->role, hello + 8, chal + 8, mode, pr);
	rc = hs_write(fd, pr, sizeof(pr), deadline);
	if (rc)
		goto out;
	proof(kr, "pfs-s", k->role, hello + 8, chal + 8, mode, want);
	if (crypto_verify_32(want, chal + 40)) {
		rc = -EACCES; /* the server does not know K_r */
		goto out;
	}
	rc = hs_read(fd, res, sizeof(res), deadline);
	if (rc)
		goto out;
	if (!hdr_ok(res)) {
		rc = -EPROTO;
		goto out;
	}
	if (res[5] != 0) {
		rc = -EACCES;
		goto out;
	}
	memset(out, 0, sizeof(*out));
	sess_keys(kr, hello + 8, chal + 8, 1, out);
	out->peer_role = PFS_ROLE_MDS | PFS_ROLE_OSS; /* a server: it knew K_r */
	out->integrity = mode;
out:
	sodium_memzero(kr, sizeof(kr));
	sodium_memzero(want, sizeof(want));
	sodium_memzero(pr, sizeof(pr));
	return rc;
}

/* ---- frames ------------------------------------------------------------- */

size_t pfs_auth_covered(const pfs_auth_sess *s, const pfs_hdr *h)
{
	size_t n = h->payload_len;

	if (s->integrity == PFS_INTEGRITY_FULL)
		return n;
	if (h->opcode == PFS_OP_OSS_WRITE && !(h->flags & PFS_F_REPLY))
		return n < PFS_AUTH_WRITE_FIELDS ? n : PFS_AUTH_WRITE_FIELDS;
	if (h->opcode == PFS_OP_OSS_READ && (h->flags & PFS_F_REPLY))
		return 0;
	return n;
}

/* The tag of header h (mac ignored) and the covered payload bytes, under
 * key k and sequence number seq: the payload is p1 then the nv pieces of
 * v, MACed incrementally in that order (the same tag as over their
 * concatenation). */
static void frame_tag_v(const uint8_t k[32], uint64_t seq, const pfs_hdr *h, size_t covered,
			const void *p1, size_t n1, const struct iovec *v, int nv,
			uint8_t tag[PFS_AUTH_TAG_LEN])
{
	crypto_onetimeauth_poly1305_state st;
	uint8_t otk[crypto_onetimeauth_poly1305_KEYBYTES], nonce[8], hb[PFS_HDR_LEN];
	pfs_hdr hz = *h;
	size_t a;

	for (int i = 0; i < 8; i++)
		nonce[i] = (uint8_t)(seq >> (8 * i));
	crypto_stream_chacha20(otk, sizeof(otk), nonce, k);
	memset(hz.mac, 0, sizeof(hz.mac));
	pfs_hdr_encode(&hz, hb);
	crypto_onetimeauth_poly1305_init(&st, otk);
	crypto_onetimeauth_poly1305_update(&st, hb, sizeof(hb));
	a = covered < n1 ? covered : n1;
	if (a)
		crypto_onetimeauth_poly1305_update(&st, p1, a);
	covered -= a;
	for (int i = 0; i < nv && covered; i++) {
		a = covered < v[i].iov_len ? covered : v[i].iov_len;
		if (a)
			crypto_onetimeauth_poly1305_update(&st, v[i].iov_base, a);
		covered -= a;
	}
	crypto_onetimeauth_poly1305_final(&st, tag);
	sodium_memzero(otk, sizeof(otk));
	sodium_memzero(&st, sizeof(st));
}

static void frame_tag(const uint8_t k[32], uint64_t seq, const pfs_hdr *h, size_t covered,
		      const void *p1, size_t n1, const void *p2, size_t n2,
		      uint8_t tag[PFS_AUTH_TAG_LEN])
{
	struct iovec v = { (void *)p2, n2 };

	frame_tag_v(k, seq, h, covered, p1, n1, &v, p2 ? 1 : 0, tag);
}

void pfs_auth_seal(pfs_auth_sess *s, pfs_hdr *h, const void *p1, size_t n1,
		   const void *p2, size_t n2)
{
	frame_tag(s->k_send, s->seq_send++, h, pfs_auth_covered(s, h), p1, n1, p2, n2, h->mac);
}

void pfs_auth_seal_iov(pfs_auth_sess *s, pfs_hdr *h, const void *p1, size_t n1,
		       const struct iovec *v, int nv)
{
	frame_tag_v(s->k_send, s->seq_send++, h, pfs_auth_covered(s, h), p1, n1, v, nv, h->mac);
}

int pfs_auth_open(pfs_auth_sess *s, const pfs_hdr *h, const void *p1, size_t n1,
		  const void *p2, size_t n2)
{
	uint8_t tag[PFS_AUTH_TAG_LEN];
	size_t covered = pfs_auth_covered(s, h);

	if (s->failed || covered > n1 + (p2 ? n2 : 0) || (!p1 && n1)) {
		s->failed = 1;
		return -EBADMSG;
	}
	frame_tag(s->k_recv, s->seq_recv, h, covered, p1, n1, p2, n2, tag);
	if (crypto_verify_16(tag, h->mac)) {
		s->failed = 1;
		return -EBADMSG;
	}
	s->seq_recv++;
	return 0;
}
