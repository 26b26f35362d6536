/* capa.h — object capabilities: the MDS's proof, checked by an OSS, that a
 * client may read or write one object until a time.
 *
 * A capability is
 *   u32 ost, u64 object, u32 rights (PFS_CAPA_*), u64 expiry (CLOCK_REALTIME
 *   seconds), u64 client_id (the mount's pfs_hdr.client_id), 16-byte mac
 * (PFS_CAPA_LEN = 48 bytes on the wire, little-endian, in this order).
 * mac = keyed BLAKE2b-128 (libsodium crypto_generichash) under K_cap
 * (pfs_auth_cap_key of common/auth.h: MDS and OSSes derive it from the
 * master key; clients never hold it) over "pfs-capa1" and the 32 field
 * bytes.  A client cannot mint, widen, extend or move a capability to
 * another object or client without K_cap.
 *
 * The MDS mints one per stripe object with OPEN, CREATE and GETLAYOUT
 * (mds/README.md "Capabilities"); the client appends it to every OSS
 * READ/WRITE/TRUNCATE/PUNCH/STAT/SYNC request after the fixed request
 * fields (common/proto.h); the OSS checks it with pfs_capa_check.  Without
 * authentication there is no K_cap: nothing is minted or checked.
 *
 * Pure functions, thread-safe (pfs_auth_init / sodium_init must have run,
 * or pfs_capa_mint/verify call sodium_init themselves: it is idempotent). */
#ifndef PFS_CAPA_H
#define PFS_CAPA_H

#include <stdint.h>

#include "common/buf.h"

#define PFS_CAPA_LEN 48
#define PFS_CAPA_MAC_LEN 16
#define PFS_CAPA_KEY_LEN 32

/* Rights. */
#define PFS_CAPA_READ 0x1u
#define PFS_CAPA_WRITE 0x2u      /* WRITE and PUNCH */
#define PFS_CAPA_TRUNCATE 0x4u
#define PFS_CAPA_ALL (PFS_CAPA_READ | PFS_CAPA_WRITE | PFS_CAPA_TRUNCATE)

#define PFS_CAPA_LIFETIME_DEFAULT 600 /* seconds */

typedef struct pfs_capa {
	uint32_t ost;
	uint64_t object;
	uint32_t rights;
	uint64_t expiry;
	uint64_t client_id;
	uint8_t mac[PFS_CAPA_MAC_LEN];
} pfs_capa;

/* Fill c->mac for the other fields of c. */
void pfs_capa_mint(pfs_capa *c, const uint8_t key[PFS_CAPA_KEY_LEN]);
/* 1 if c->mac is right for c's fields under key (constant-time compare). */
int pfs_capa_mac_ok(const pfs_capa *c, const uint8_t key[PFS_CAPA_KEY_LEN]);
/* The OSS's whole check of capability c for a request on (ost, object)
 * from client_id that needs every right in need, at time now (CLOCK_REALTIME
 * seconds): 0; -EACCES for a bad mac, another ost/object/client or missing
 * rights; -EKEYEXPIRED when expired (checked after the mac, so an expired
 * forgery is still -EACCES). */
int pfs_capa_check(const pfs_capa *c, const uint8_t key[PFS_CAPA_KEY_LEN], uint32_t ost,
		   uint64_t object, uint64_t client_id, uint32_t need, uint64_t now);

void pfs_capa_encode(pfs_wbuf *w, const pfs_capa *c);
/* Sticky-error decode (a short buffer leaves b's error set, see buf.h);
 * returns pfs_rbuf_error(b). */
int pfs_capa_decode(pfs_rbuf *b, pfs_capa *c);
/* Exactly PFS_CAPA_LEN bytes at out / from in. */
void pfs_capa_pack(const pfs_capa *c, uint8_t out[PFS_CAPA_LEN]);
void pfs_capa_unpack(const uint8_t in[PFS_CAPA_LEN], pfs_capa *c);

/* The capability rights an open(2) with flags grants (after the MDS's
 * permission check for those flags): O_RDONLY read; O_WRONLY write and
 * truncate; O_RDWR all. */
uint32_t pfs_capa_rights_for_flags(uint32_t flags);

#endif
