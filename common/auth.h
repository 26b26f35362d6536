/* auth.h — node authentication and frame integrity (libsodium).
 *
 * Trust model.  A cluster has one secret, the master key M (32 random
 * bytes).  Every node holds a key file with a role:
 *   mds, oss   — server keys: hold M itself (servers are trusted nodes, as
 *                Lustre's SSK server keys are), so a server can check a peer
 *                of any role and can make object capabilities;
 *   client, admin — hold only K_role = KDF(M, role), so a client key cannot
 *                pass for an admin, OSS or MDS key.
 * K_role for role r is crypto_kdf_derive_from_key(subkey r, ctx "pfs-role", M);
 * the capability key K_cap is the same with ctx "pfs-capk".
 *
 * Key file format (text, one "name = value" per line, '#' comments):
 *     role = client            # mds | oss | client | admin
 *     key  = <64 hex digits>   # M for mds/oss, K_role for client/admin
 * The file must be a regular file owned by the caller's euid (root on a
 * real cluster) with no group/other permission bits (0600 or 0400);
 * anything else is refused with -EPERM and a message saying why.
 *
 * Handshake (every connection, before any frame; fixed sizes, so a server
 * reads at most PFS_AUTH_HELLO_LEN + PFS_AUTH_PROOF_LEN bytes before the
 * peer has proved itself):
 *   1. C -> S  HELLO     "PFSA", u8 version, u8 role r, u8 integrity mode
 *                        the client asks for (ignored: the server decides),
 *                        u8 pad, nonce_c[32]                      (40 bytes)
 *   2. S -> C  CHALLENGE "PFSA", u8 version, u8 status (0 ok, else refused:
 *                        unknown role / no key for it), u8 integrity mode
 *                        (PFS_INTEGRITY_*: the cluster's choice), u8 pad,
 *                        nonce_s[32], proof_s[32]                  (72 bytes)
 *                        proof_s = HMAC-SHA256(K_r, "pfs-s" r nonce_c nonce_s mode)
 *   3. C -> S  PROOF     proof_c[32] = HMAC-SHA256(K_r, "pfs-c" r nonce_c nonce_s mode)
 *   4. S -> C  RESULT    "PFSA", u8 version, u8 status (0 ok), u16 pad (8 bytes)
 * Both sides then derive per-direction session keys
 *   k_c2s, k_s2c = BLAKE2b-512(key = K_r, "pfs-sess" nonce_c nonce_s) split in two
 * and the peer's role is r.  The client checks proof_s, so a client only
 * talks to a server that knows K_r.  Failures are -EACCES (bad proof,
 * wrong role), -EPROTO (malformed handshake bytes).
 *
 * Frames.  With a session, every frame (request and reply) carries a
 * 16-byte tag in the header's mac field: Poly1305 under a one-time key
 * taken from ChaCha20(k_dir, nonce = 64-bit per-direction sequence number),
 * over the 96-byte encoded header with mac zeroed, then the first
 * `covered` payload bytes (pfs_auth_covered).  Sequence numbers start at 0
 * and count every frame sent in that direction; they are not on the wire,
 * so a replayed, reordered, dropped, altered or reflected frame fails the
 * check (-EBADMSG), and the connection is closed.
 *
 * Integrity modes (per cluster, chosen by the server's config `integrity`):
 *   PFS_INTEGRITY_FULL   — the tag covers the whole payload;
 *   PFS_INTEGRITY_HEADER — the tag covers the header and every payload byte
 *                          except bulk data: OSS_WRITE request data bytes and
 *                          OSS_READ reply bytes (so the data path may splice
 *                          them).  Everything else is covered in full.
 *                          The OSS_WRITE fields before the data are the first
 *                          PFS_AUTH_WRITE_FIELDS payload bytes; a change to
 *                          that request's fields must change this constant.
 *
 * Handshake details (refining the above): the client sends PROOF before it
 * checks proof_s (so a server always learns whether the client's key was
 * right: both sides of a wrong key fail with -EACCES), but it sends no frame
 * unless proof_s and RESULT are good.  A refused CHALLENGE (status != 0)
 * gets no PROOF.  A refused RESULT has status 1 and the server closes.
 * Role bytes on the wire are the PFS_ROLE_* values (1, 2, 4, 8); the KDF
 * subkey id of a role is the same value; "mode" in the proofs is one byte.
 */
#ifndef PFS_AUTH_H
#define PFS_AUTH_H

#include <stddef.h>
#include <stdint.h>

#include "common/proto.h"

/* Roles, also used as bits in role masks (see common/optab.h). */
enum pfs_role {
	PFS_ROLE_NONE = 0,
	PFS_ROLE_MDS = 1u << 0,
	PFS_ROLE_OSS = 1u << 1,
	PFS_ROLE_CLIENT = 1u << 2,
	PFS_ROLE_ADMIN = 1u << 3,
};
#define PFS_ROLE_ANY (PFS_ROLE_MDS | PFS_ROLE_OSS | PFS_ROLE_CLIENT | PFS_ROLE_ADMIN)

enum pfs_integrity { PFS_INTEGRITY_HEADER = 1, PFS_INTEGRITY_FULL = 2 };

#define PFS_AUTH_HELLO_LEN 40
#define PFS_AUTH_CHAL_LEN 72
#define PFS_AUTH_PROOF_LEN 32
#define PFS_AUTH_RESULT_LEN 8
#define PFS_AUTH_KEY_LEN 32
#define PFS_AUTH_TAG_LEN 16
#define PFS_AUTH_VERSION 1
/* OSS_WRITE request bytes before the data: u32 ost, u64 object, u64 offset, u32 len. */
#define PFS_AUTH_WRITE_FIELDS 24

/* A loaded key file. */
typedef struct pfs_auth_key {
	unsigned role;                     /* one PFS_ROLE_* */
	uint8_t key[PFS_AUTH_KEY_LEN];     /* M (mds/oss) or K_role */
	int integrity;                     /* servers: mode they impose (PFS_INTEGRITY_*) */
} pfs_auth_key;

/* Per-connection state after a handshake.  Not thread-safe: the caller
 * serialises senders (seal) and receivers (open) of one connection. */
typedef struct pfs_auth_sess {
	unsigned peer_role;                /* role the peer proved */
	int integrity;
	uint8_t k_send[32], k_recv[32];
	uint64_t seq_send, seq_recv;
	int failed;                        /* an open failed: every later open fails */
} pfs_auth_sess;

/* "mds" -> PFS_ROLE_MDS ...; 0 when unknown. */
unsigned pfs_role_parse(const char *s);
const char *pfs_role_name(unsigned role); /* "client"; "none"; "?" */
/* "header"/"full" -> PFS_INTEGRITY_*; -EINVAL otherwise. */
int pfs_integrity_parse(const char *s);

/* Must be called once before anything else here (sodium_init). 0 or -EIO. */
int pfs_auth_init(void);
/* Load and check a key file (see the format and permission rule above).
 * On error *why (if non-NULL) points at a static message. */
int pfs_auth_key_load(const char *path, pfs_auth_key *out, const char **why);
/* For programs: the same, with "PATH: reason" (or "PATH: strerror") in
 * err on failure. */
int pfs_auth_key_load_msg(const char *path, pfs_auth_key *out, char *err, size_t errlen);
/* Write a new key file (mode 0600, refuses to overwrite): role mds/oss get a
 * fresh M, unless master is given; client/admin need master (a server key)
 * and get K_role derived from it. */
int pfs_auth_key_write(const char *path, unsigned role, const pfs_auth_key *master);
/* K_r for a peer role, derivable only from a server key (else -EPERM);
 * a client/admin key yields its own K_role for its own role. */
int pfs_auth_role_key(const pfs_auth_key *k, unsigned role, uint8_t out[PFS_AUTH_KEY_LEN]);
/* K_cap for object capabilities; -EPERM unless k is a server key. */
int pfs_auth_cap_key(const pfs_auth_key *k, uint8_t out[PFS_AUTH_KEY_LEN]);

/* Client side, on a blocking connected socket: the whole handshake,
 * bounded by timeout_ms.  0, -EACCES, -EPROTO or a transport error. */
int pfs_auth_client(int fd, const pfs_auth_key *k, int timeout_ms, pfs_auth_sess *out);

/* Server side, as pure steps for an event loop (no I/O here):
 * step 1: HELLO in -> CHALLENGE out (always written; status != 0 means the
 *         server refuses and closes after sending it);
 * step 2: PROOF in -> RESULT out and the session.
 * The pending state lives in pfs_auth_srv (zeroed on pfs_auth_srv_done). */
typedef struct pfs_auth_srv {
	unsigned role;
	uint8_t kr[PFS_AUTH_KEY_LEN];
	uint8_t nonce_c[32], nonce_s[32];
	int integrity;
} pfs_auth_srv;
/* pfs_auth_srv_hello: 0 (CHALLENGE accepts), -EPROTO (malformed HELLO) or
 * -EACCES (role unknown or not derivable from k); out is written in every
 * case and should be sent before closing.  pfs_auth_srv_proof: 0 with *sess
 * set, or -EACCES (bad proof); out is written in both cases. */
int pfs_auth_srv_hello(pfs_auth_srv *st, const pfs_auth_key *k,
		       const uint8_t in[PFS_AUTH_HELLO_LEN], uint8_t out[PFS_AUTH_CHAL_LEN]);
int pfs_auth_srv_proof(pfs_auth_srv *st, const uint8_t in[PFS_AUTH_PROOF_LEN],
		       uint8_t out[PFS_AUTH_RESULT_LEN], pfs_auth_sess *sess);
void pfs_auth_srv_done(pfs_auth_srv *st);

/* Payload bytes the tag covers for this frame (see integrity modes). */
size_t pfs_auth_covered(const pfs_auth_sess *s, const pfs_hdr *h);
/* Seal: h->mac is set from the header (encoded with mac zeroed) and the
 * first pfs_auth_covered(s, h) bytes of the payload p1||p2 (the payload may
 * come in two pieces, e.g. request fields then bulk; pieces past the
 * covered length may be NULL, as for a spliced bulk); advances seq_send.
 * Open: checks h->mac the same way and advances seq_recv; 0 or -EBADMSG. */
void pfs_auth_seal(pfs_auth_sess *s, pfs_hdr *h, const void *p1, size_t n1,
		   const void *p2, size_t n2);
int pfs_auth_open(pfs_auth_sess *s, const pfs_hdr *h, const void *p1, size_t n1,
		  const void *p2, size_t n2);
/* pfs_auth_seal for a payload of p1 then the nv pieces of v (a scatter
 * list: WRITEV's extents sent from where they are), MACed piece by piece
 * in that order: the tag is the one pfs_auth_open computes over the
 * payload as received, in one piece. */
struct iovec;
void pfs_auth_seal_iov(pfs_auth_sess *s, pfs_hdr *h, const void *p1, size_t n1,
		       const struct iovec *v, int nv);

#endif
