/* req.c — OSS data-port request payloads decoded without I/O (see req.h);
 * the data port (server.c) and the fuzz target use this one decoder. */
#include "oss/req.h"

#include <errno.h>
#include <string.h>

#include "common/buf.h"
#include "common/proto.h"

/* The optional capability: present when exactly PFS_CAPA_LEN bytes plus
 * want_after bytes of bulk remain. */
static void get_capa(pfs_rbuf *b, size_t want_after, oss_req_msg *m)
{
	m->has_cap = pfs_rbuf_left(b) == want_after + PFS_CAPA_LEN;
	if (m->has_cap)
		pfs_capa_decode(b, &m->cap);
}

int oss_req_decode(uint16_t opcode, const uint8_t *p, size_t n, oss_req_msg *out)
{
	pfs_rbuf b;

	memset(out, 0, sizeof(*out));
	out->opcode = opcode;
	pfs_rbuf_init(&b, p, n);
	out->ost = pfs_rbuf_u32(&b);
	switch (opcode) {
	case PFS_OP_OSS_READ:
		out->obj = pfs_rbuf_u64(&b);
		out->off = pfs_rbuf_u64(&b);
		out->len = pfs_rbuf_u32(&b);
		get_capa(&b, 0, out);
		if (pfs_rbuf_done(&b)) /* a READ ends here */
			return -EBADMSG;
		if (out->len > PFS_MAX_IO)
			return -EINVAL;
		out->need = PFS_CAPA_READ;
		break;
	case PFS_OP_OSS_WRITE:
		out->obj = pfs_rbuf_u64(&b);
		out->off = pfs_rbuf_u64(&b);
		out->len = pfs_rbuf_u32(&b);
		if (pfs_rbuf_error(&b))
			return -EBADMSG;
		if (out->len > PFS_MAX_IO)
			return -EINVAL;
		get_capa(&b, (size_t)out->len, out);
		out->data = pfs_rbuf_bytes(&b, (size_t)out->len);
		out->need = PFS_CAPA_WRITE;
		break;
	case PFS_OP_OSS_TRUNCATE:
		out->obj = pfs_rbuf_u64(&b);
		out->len = pfs_rbuf_u64(&b);
		get_capa(&b, 0, out);
		out->need = PFS_CAPA_TRUNCATE;
		break;
	case PFS_OP_OSS_PUNCH:
		out->obj = pfs_rbuf_u64(&b);
		out->off = pfs_rbuf_u64(&b);
		out->len = pfs_rbuf_u64(&b);
		get_capa(&b, 0, out);
		out->need = PFS_CAPA_WRITE;
		break;
	case PFS_OP_OSS_STAT:  /* size and blocks: a writer's close sums them */
	case PFS_OP_OSS_SYNC:  /* any right on the object */
		out->obj = pfs_rbuf_u64(&b);
		get_capa(&b, 0, out);
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
