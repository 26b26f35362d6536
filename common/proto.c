/* proto.c — frame header codec and opcode names; the one place headers are
 * turned into bytes and back.  Little-endian on the wire whatever the host. */
#include "common/proto.h"

#include <errno.h>
#include <string.h>

static void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static void put32(uint8_t *p, uint32_t v) { put16(p, (uint16_t)v); put16(p + 2, (uint16_t)(v >> 16)); }
static void put64(uint8_t *p, uint64_t v) { put32(p, (uint32_t)v); put32(p + 4, (uint32_t)(v >> 32)); }
static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static uint32_t get32(const uint8_t *p) { return get16(p) | ((uint32_t)get16(p + 2) << 16); }
static uint64_t get64(const uint8_t *p) { return get32(p) | ((uint64_t)get32(p + 4) << 32); }

/* Offsets of the fields in the encoded header. */
enum { OFF_MAGIC = 0, OFF_VERSION = 4, OFF_OPCODE = 6, OFF_FLAGS = 8, OFF_STATUS = 12,
       OFF_REQID = 16, OFF_CLIENT = 24, OFF_PLEN = 32, OFF_CREDIT = 36, OFF_UID = 40,
       OFF_GID = 44, OFF_JOBID = 48, OFF_MAC = 80 };
_Static_assert(OFF_MAC + PFS_MAC_LEN == PFS_HDR_LEN, "header layout");

void pfs_hdr_encode(const pfs_hdr *h, uint8_t *out)
{
	put32(out + OFF_MAGIC, h->magic);
	put16(out + OFF_VERSION, h->version);
	put16(out + OFF_OPCODE, h->opcode);
	put32(out + OFF_FLAGS, h->flags);
	put32(out + OFF_STATUS, (uint32_t)h->status);
	put64(out + OFF_REQID, h->req_id);
	put64(out + OFF_CLIENT, h->client_id);
	put32(out + OFF_PLEN, h->payload_len);
	put32(out + OFF_CREDIT, h->credit);
	put32(out + OFF_UID, h->uid);
	put32(out + OFF_GID, h->gid);
	memcpy(out + OFF_JOBID, h->job_id, PFS_JOBID_MAX);
	memcpy(out + OFF_MAC, h->mac, PFS_MAC_LEN);
}

int pfs_hdr_decode(const uint8_t *in, size_t len, uint32_t max_payload, pfs_hdr *h)
{
	if (len < PFS_HDR_LEN)
		return -EAGAIN;
	h->magic = get32(in + OFF_MAGIC);
	h->version = get16(in + OFF_VERSION);
	h->opcode = get16(in + OFF_OPCODE);
	h->flags = get32(in + OFF_FLAGS);
	h->status = (int32_t)get32(in + OFF_STATUS);
	h->req_id = get64(in + OFF_REQID);
	h->client_id = get64(in + OFF_CLIENT);
	h->payload_len = get32(in + OFF_PLEN);
	h->credit = get32(in + OFF_CREDIT);
	h->uid = get32(in + OFF_UID);
	h->gid = get32(in + OFF_GID);
	memcpy(h->job_id, in + OFF_JOBID, PFS_JOBID_MAX);
	memcpy(h->mac, in + OFF_MAC, PFS_MAC_LEN);
	if (h->magic != PFS_MAGIC || (h->flags & ~PFS_F_MASK))
		return -EBADMSG;
	if (h->version != PFS_PROTO_VERSION)
		return -EPROTONOSUPPORT;
	if (h->payload_len > max_payload)
		return -EMSGSIZE;
	/* A reply status is 0 or a negative errno; anything else is garbage. */
	if (h->status > 0 || h->status < -4095)
		return -EBADMSG;
	return 0;
}

void pfs_hdr_init(pfs_hdr *h, uint16_t opcode, uint64_t req_id, uint64_t client_id,
		  const char *job_id)
{
	memset(h, 0, sizeof(*h));
	h->magic = PFS_MAGIC;
	h->version = PFS_PROTO_VERSION;
	h->opcode = opcode;
	h->req_id = req_id;
	h->client_id = client_id;
	if (job_id) {
		size_t n = strnlen(job_id, PFS_JOBID_MAX);
		memcpy(h->job_id, job_id, n); /* NUL-padded, not terminated when full */
	}
}

void pfs_hdr_jobid(const pfs_hdr *h, char out[PFS_JOBID_MAX + 1])
{
	memcpy(out, h->job_id, PFS_JOBID_MAX);
	out[PFS_JOBID_MAX] = '\0';
}

const char *pfs_op_name(uint16_t op)
{
	switch (op) {
#define N(x) case PFS_OP_##x: return #x
	N(PING);
	N(MDS_LOOKUP); N(MDS_GETATTR); N(MDS_SETATTR); N(MDS_CREATE); N(MDS_MKNOD);
	N(MDS_MKDIR); N(MDS_UNLINK); N(MDS_RMDIR); N(MDS_RENAME); N(MDS_READDIR);
	N(MDS_SYMLINK); N(MDS_READLINK); N(MDS_LINK); N(MDS_STATFS); N(MDS_SETXATTR);
	N(MDS_GETXATTR); N(MDS_LISTXATTR); N(MDS_REMOVEXATTR); N(MDS_OPEN); N(MDS_ACCESS);
	N(MDS_SETSIZE); N(MDS_GETLAYOUT); N(MDS_SETSTRIPE); N(MDS_SYNC); N(MDS_CLOSE); N(MDS_LOOKUP_BULK); N(MDS_OST_LIST); N(MDS_LFSCK);
	N(MDS_LOCK_GET); N(MDS_LOCK_SET); N(MDS_LOCK_WAIT); N(MDS_LOCK_CANCEL);
	N(MDS_LOCK_RELEASE); N(MDS_LOCK_RECLAIM);
	N(MDS_OSS_REGISTER); N(MDS_OSS_HEARTBEAT);
	N(OSS_READ); N(OSS_WRITE); N(OSS_TRUNCATE); N(OSS_PUNCH); N(OSS_STAT); N(OSS_SYNC);
	N(OSS_STATFS); N(OSS_GRANT); N(OSS_WRITEV); N(OSS_DESTROY); N(OSS_LIST_OBJECTS); N(OSS_JOBSTATS);
	N(OSS_QOS_STATS); N(OSS_QOS_SET); N(OSS_NRS_RULE);
	N(MDS_JOB_REGISTER); N(MDS_JOB_END); N(MDS_JOB_LIST); N(MDS_JOB_GET);
	N(MDS_QOS_SHOW); N(MDS_QOS_POLICY_SET); N(MDS_QOS_COUPONS); N(MDS_QOS_REGRET);
	N(MDS_JOBSTATS); N(MDS_MDQOS_PULL); N(MDS_MDQOS_SHOW); N(MDS_MDQOS_SET);
	N(MDS_ASCAR_SET); N(MDS_ASCAR_GET); N(MDS_NOTIFY_WAIT);
	N(MDS_DELEG_GET); N(MDS_DELEG_RETURN); N(MDS_UNLINK_BATCH); N(MDS_CREATE_SLOTS); N(MDS_CREATE_BATCH);
#undef N
	}
	return "?";
}

const char *pfs_strerror(int err)
{
	if (err > 0)
		err = -err;
	switch (err) {
	case 0: return "success";
	case -EBADMSG: return "malformed frame or payload";
	case -EPROTONOSUPPORT: return "unsupported protocol version";
	case -EMSGSIZE: return "frame payload too large";
	case -EOPNOTSUPP: return "unknown opcode";
	case -ECONNRESET: return "connection closed by peer";
	default: return strerror(-err);
	}
}
