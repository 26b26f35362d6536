/* capa.c — object capabilities (see capa.h): mint, check, wire codec.
 * The MAC is libsodium's keyed BLAKE2b; nothing here is hand-written
 * cryptography. */
#include "common/capa.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <string.h>

#include "common/proto.h"

#define FIELDS_LEN (PFS_CAPA_LEN - PFS_CAPA_MAC_LEN)

_Static_assert(PFS_CAPA_LEN == PFS_OSS_CAPA_LEN, "proto.h documents the capability size");

static const char domain[] = "pfs-capa1";

static void put_le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static void fields(const pfs_capa *c, uint8_t out[FIELDS_LEN])
{
	put_le(out, c->ost, 4);
	put_le(out + 4, c->object, 8);
	put_le(out + 12, c->rights, 4);
	put_le(out + 16, c->expiry, 8);
	put_le(out + 24, c->client_id, 8);
}

static void mac_of(const pfs_capa *c, const uint8_t key[PFS_CAPA_KEY_LEN],
		   uint8_t mac[PFS_CAPA_MAC_LEN])
{
	crypto_generichash_state st;
	uint8_t f[FIELDS_LEN];

	/* idempotent; cheap after the first call */
	if (sodium_init() < 0) {
		memset(mac, 0, PFS_CAPA_MAC_LEN);
		return;
	}
	fields(c, f);
	crypto_generichash_init(&st, key, PFS_CAPA_KEY_LEN, PFS_CAPA_MAC_LEN);
	crypto_generichash_update(&st, (const uint8_t *)domain, sizeof(domain) - 1);
	crypto_generichash_update(&st, f, sizeof(f));
	crypto_generichash_final(&st, mac, PFS_CAPA_MAC_LEN);
	sodium_memzero(&st, sizeof(st));
}

void pfs_capa_mint(pfs_capa *c, const uint8_t key[PFS_CAPA_KEY_LEN])
{
	mac_of(c, key, c->mac);
}

int pfs_capa_mac_ok(const pfs_capa *c, const uint8_t key[PFS_CAPA_KEY_LEN])
{
	uint8_t m[PFS_CAPA_MAC_LEN];
	static const uint8_t zero[PFS_CAPA_MAC_LEN];

	/* an all-zero tag is what a failed sodium_init leaves: never valid */
	if (sodium_memcmp(c->mac, zero, sizeof(zero)) == 0)
		return 0;
	mac_of(c, key, m);
	return sodium_memcmp(m, c->mac, sizeof(m)) == 0;
}

int pfs_capa_check(const pfs_capa *c, const uint8_t key[PFS_CAPA_KEY_LEN], uint32_t ost,
		   uint64_t object, uint64_t client_id, uint32_t need, uint64_t now)
{
	if (!pfs_capa_mac_ok(c, key))
		return -EACCES;
	if (c->ost != ost || c->object != object || c->client_id != client_id)
		return -EACCES;
	if ((c->rights & need) != need)
		return -EACCES;
	if (c->expiry <= now)
		return -EKEYEXPIRED;
	return 0;
}

void pfs_capa_pack(const pfs_capa *c, uint8_t out[PFS_CAPA_LEN])
{
	fields(c, out);
	memcpy(out + FIELDS_LEN, c->mac, PFS_CAPA_MAC_LEN);
}

void pfs_capa_unpack(const uint8_t in[PFS_CAPA_LEN], pfs_capa *c)
{
	c->ost = (uint32_t)get_le(in, 4);
	c->object = get_le(in + 4, 8);
	c->rights = (uint32_t)get_le(in + 12, 4);
	c->expiry = get_le(in + 16, 8);
	c->client_id = get_le(in + 24, 8);
	memcpy(c->mac, in + FIELDS_LEN, PFS_CAPA_MAC_LEN);
}

void pfs_capa_encode(pfs_wbuf *w, const pfs_capa *c)
{
	uint8_t b[PFS_CAPA_LEN];

	pfs_capa_pack(c, b);
	pfs_wbuf_bytes(w, b, sizeof(b));
}

int pfs_capa_decode(pfs_rbuf *b, pfs_capa *c)
{
	const uint8_t *p = pfs_rbuf_bytes(b, PFS_CAPA_LEN);

	if (p)
		pfs_capa_unpack(p, c);
	else
		memset(c, 0, sizeof(*c));
	return pfs_rbuf_error(b);
}

uint32_t pfs_capa_rights_for_flags(uint32_t flags)
{
	switch (flags & O_ACCMODE) {
	case O_RDONLY:
		return (flags & O_TRUNC) ? PFS_CAPA_READ | PFS_CAPA_TRUNCATE : PFS_CAPA_READ;
	case O_WRONLY:
		return PFS_CAPA_WRITE | PFS_CAPA_TRUNCATE;
	default:
		return PFS_CAPA_ALL;
	}
}
