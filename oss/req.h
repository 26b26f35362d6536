/* req.h — decoding of one OSS data-port request payload, without I/O.
 *
 * The data port (server.h) takes READ, WRITE, WRITEV, TRUNCATE, PUNCH,
 * STAT, SYNC and STATFS; their payloads are laid out in common/proto.h.  This module
 * turns (opcode, payload) into an oss_req_msg and nothing else: no OST
 * lookup, no allocation, no store access, so it can be unit-tested and
 * fuzzed on its own (tests/fuzz/fuzz_oss.c).  The caller then looks the
 * OST up (oss_server_lookup) and queues the request.
 *
 * An object request may carry a capability (common/capa.h) after its fixed
 * fields (before a WRITE's bulk): it is recognised when exactly
 * PFS_CAPA_LEN bytes (plus the bulk) remain, and returned with the right
 * the request needs; checking it is the caller's (it holds K_cap).
 *
 * Errors, as the data port replies them: -EBADMSG for a short payload or
 * trailing bytes, -EINVAL for a READ/WRITE longer than PFS_MAX_IO and a
 * WRITEV whose table breaks its rules (common/proto.h),
 * -EOPNOTSUPP for an opcode the data port does not serve. */
#ifndef OSS_REQ_H
#define OSS_REQ_H

#include <stddef.h>
#include <stdint.h>

#include "common/capa.h"

typedef struct oss_req_msg {
	uint16_t opcode;
	uint32_t ost;             /* cluster-wide OST index */
	uint64_t obj;             /* object id (all but STATFS) */
	uint64_t off;             /* READ/WRITE/PUNCH offset */
	uint64_t len;             /* READ/WRITE/PUNCH length; TRUNCATE size */
	const uint8_t *data;      /* WRITE, WRITEV: len bytes inside the payload
				   * (NULL: a WRITE's spliced data, outside) */
	uint32_t nvec;            /* WRITEV: extents (off = the first's, len = their sum) */
	const uint8_t *vec;       /* WRITEV: their table inside the payload (oss_req_vec) */
	int has_cap;              /* a capability followed the fixed fields */
	pfs_capa cap;
	uint32_t need;            /* PFS_CAPA_* right it needs (0: any; STATFS: none) */
} oss_req_msg;

/* Decode the payload p[0..n) of a data-port request with this opcode into
 * *out (zeroed first).  0 or a negative errno (above). */
int oss_req_decode(uint16_t opcode, const uint8_t *p, size_t n, oss_req_msg *out);

/* Spliced WRITE data (oss/server.c, common/server.h pfs_server_bulk): the
 * data port reads the first OSS_REQ_WRITE_HEAD payload bytes of a frame
 * into memory and may leave a WRITE's data in the socket for splice(2).
 * oss_req_write_bulk: the data length of a WRITE whose payload_len-byte
 * payload starts with head (OSS_REQ_WRITE_HEAD bytes): its fields, an
 * optional capability, then exactly that many data bytes; 0 when the
 * payload is not such a WRITE (the ordinary decoder then says why). */
#define OSS_REQ_WRITE_HEAD (24 + PFS_CAPA_LEN)
uint32_t oss_req_write_bulk(uint32_t payload_len, const uint8_t *head);
/* oss_req_decode for a payload whose last bulk bytes are not in p: p
 * holds the first n bytes (payload_len - bulk).  Only a WRITE whose data
 * are exactly those bulk bytes decodes (out->data NULL); anything else is
 * -EBADMSG.  bulk 0 is oss_req_decode itself. */
int oss_req_decode_split(uint16_t opcode, const uint8_t *p, size_t n, size_t bulk,
			 oss_req_msg *out);

/* Extent i (< m->nvec) of a decoded WRITEV: object offset and length; its
 * bytes follow those of the extents before it in m->data. */
void oss_req_vec(const oss_req_msg *m, uint32_t i, uint64_t *off, uint32_t *len);

#endif
