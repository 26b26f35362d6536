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

/* Little-endian integer of n bytes at p. */
static uint64_t le(const uint8_t *p, size_t n)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

void oss_req_vec(const oss_req_msg *m, uint32_t i, uint64_t *off, uint32_t *len)
{
	*off = le(m->vec + 12 * (size_t)i, 8);
	*len = (uint32_t)le(m->vec + 12 * (size_t)i + 8, 4);
}

/* WRITEV after the object id: the extent table (ascending, disjoint, each
 * at least a byte, PFS_MAX_IO in all), the capability, the bytes. */
static int decode_writev(pfs_rbuf *b, oss_req_msg *out)
{
	uint64_t end = 0, sum = 0;

	out->nvec = pfs_rbuf_u32(b);
	if (pfs_rbuf_error(b))
		return -EBADMSG;
	if (out->nvec == 0 || out->nvec > PFS_WRITEV_MAX)
		return -EINVAL;
	out->vec = pfs_rbuf_bytes(b, 12 * (size_t)out->nvec);
	if (!out->vec)
		return -EBADMSG;
	for (uint32_t i = 0; i < out->nvec; i++) {
		uint64_t off;
		uint32_t len;

		oss_req_vec(out, i, &off, &len);
		if (len == 0 || (i && off < end) || off + len < off)
			return -EINVAL;
		end = off + len;
		sum += len;
		if (sum > PFS_MAX_IO)
			return -EINVAL;
		if (i == 0)
			out->off = off;
	}
	out->len = sum;
	get_capa(b, (size_t)sum, out);
	out->data = pfs_rbuf_bytes(b, (size_t)sum);
	out->need = PFS_CAPA_WRITE;
	return 0;
}

/* A WRITE's fixed fields after the OST (object, offset, length), the
 * same for a WRITE received whole and one whose data was spliced. */
static int write_fields(pfs_rbuf *b, oss_req_msg *out)
{
	out->obj = pfs_rbuf_u64(b);
	out->off = pfs_rbuf_u64(b);
	out->len = pfs_rbuf_u32(b);
	if (pfs_rbuf_error(b))
		return -EBADMSG;
	return out->len > PFS_MAX_IO ? -EINVAL : 0;
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
	case PFS_OP_OSS_WRITE: {
		int rc = write_fields(&b, out);

		if (rc)
			return rc;
		get_capa(&b, (size_t)out->len, out);
		out->data = pfs_rbuf_bytes(&b, (size_t)out->len);
		out->need = PFS_CAPA_WRITE;
		break;
	}
	case PFS_OP_OSS_WRITEV: {
		int rc;

		out->obj = pfs_rbuf_u64(&b);
		rc = decode_writev(&b, out);
		if (rc)
			return rc;
		break;
	}
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
		out->vec = NULL;
		return -EBADMSG;
	}
	return 0;
}

uint32_t oss_req_write_bulk(uint32_t payload_len, const uint8_t *head)
{
	uint32_t len = (uint32_t)le(head + 20, 4); /* ost, obj, off, then len */

	if (len == 0 || len > PFS_MAX_IO)
		return 0;
	if (payload_len == 24 + len || payload_len == 24 + PFS_CAPA_LEN + len)
		return len;
	return 0;
}

int oss_req_decode_split(uint16_t opcode, const uint8_t *p, size_t n, size_t bulk,
			 oss_req_msg *out)
{
	pfs_rbuf b;
	int rc;

	if (!bulk)
		return oss_req_decode(opcode, p, n, out);
	memset(out, 0, sizeof(*out));
	out->opcode = opcode;
	if (opcode != PFS_OP_OSS_WRITE)
		return -EBADMSG;
	pfs_rbuf_init(&b, p, n);
	out->ost = pfs_rbuf_u32(&b);
	rc = write_fields(&b, out);
	if (rc)
		return rc;
	if (out->len != bulk)
		return -EBADMSG;
	get_capa(&b, 0, out);
	out->need = PFS_CAPA_WRITE;
	return pfs_rbuf_done(&b) ? -EBADMSG : 0;
}
