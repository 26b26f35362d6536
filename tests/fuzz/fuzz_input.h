/* fuzz_input.h — shared by the libFuzzer targets: turn the fuzz input into
 * a request header + payload that gets past frame checks, so the bytes
 * reach the handlers.  The first PFS_HDR_LEN bytes are a v3 header (short
 * inputs are zero-padded); magic, version, flags, status and payload_len
 * are forced valid; an opcode that is not one of the target's is mapped
 * onto them (op % n) unless its top bit is set, which keeps a path for
 * unknown opcodes.  The rest of the input is the payload. */
#ifndef PFS_FUZZ_INPUT_H
#define PFS_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/proto.h"

static inline void fuzz_request(const uint8_t *data, size_t size, const uint16_t *ops,
				size_t nops, pfs_hdr *h, const uint8_t **payload, size_t *len)
{
	uint8_t raw[PFS_HDR_LEN] = { 0 };
	size_t hl = size < PFS_HDR_LEN ? size : PFS_HDR_LEN;
	int known = 0;

	memcpy(raw, data, hl);
	/* valid magic/version/flags/status so that decode always succeeds */
	raw[0] = 'P';
	raw[1] = 'F';
	raw[2] = 'S';
	raw[3] = '1';
	raw[4] = PFS_PROTO_VERSION;
	raw[5] = 0;
	memset(raw + 8, 0, 8); /* flags, status */
	(void)pfs_hdr_decode(raw, PFS_HDR_LEN, UINT32_MAX, h);
	h->flags = 0;
	h->status = 0;
	for (size_t i = 0; i < nops; i++)
		known |= h->opcode == ops[i];
	if (!known && !(h->opcode & 0x8000))
		h->opcode = ops[h->opcode % nops];
	*payload = data + hl;
	*len = size - hl;
	h->payload_len = (uint32_t)*len;
}

#endif
