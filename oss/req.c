/* req.c — OSS data-port request payloads decoded without I/O (see req.h).
 * The same rules as the data port's decoder in server.c, which can call
 * this one instead of its own copy. */
#include "oss/req.h"

#include <errno.h>
#include <string.h>

#include "common/buf.h"
#include "common/proto.h"

int oss_req_decode(uint16_t opcode, const uint8_t *p, size_t n, oss_req_msg *out)
{
	pfs_rbuf b;

	memset(out, 0, sizeof(*out));
	out->opcode = opcode;
	pfs_rbuf_init(&b, p, n);
	out->ost = pfs_rbuf_u32(&b);
	switch (opcode) {
	case PFS_OP_OSS_READ:
	case PFS_OP_OSS_WRITE:
		out->obj = pfs_rbuf_u64(&b);
		out->off = pfs_rbuf_u64(&b);
		out->len = pfs_rbuf_u32(&b);
		/* a READ must end here; a WRITE's bulk follows */
		if (opcode == PFS_OP_OSS_READ ? pfs_rbuf_done(&b) != 0 : pfs_rbuf_error(&b) != 0)
			return -EBADMSG;
		if (out->len > PFS_MAX_IO)
			return -EINVAL;
		if (opcode == PFS_OP_OSS_WRITE)
			out->data = pfs_rbuf_bytes(&b, (size_t)out->len);
		break;
	case PFS_OP_OSS_TRUNCATE:
		out->obj = pfs_rbuf_u64(&b);
		out->len = pfs_rbuf_u64(&b);
		break;
	case PFS_OP_OSS_PUNCH:
		out->obj = pfs_rbuf_u64(&b);
		out->off = pfs_rbuf_u64(&b);
		out->len = pfs_rbuf_u64(&b);
		break;
	case PFS_OP_OSS_STAT:
	case PFS_OP_OSS_SYNC:
		out->obj = pfs_rbuf_u64(&b);
		break;
	case PFS_OP_OSS_STATFS:
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (pfs_rbuf_done(&b)) {
		out->data = NULL;
		return -EBADMSG;
	}
	return 0;
}
