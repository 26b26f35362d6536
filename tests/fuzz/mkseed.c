/* mkseed.c — writes the seed corpora of the fuzz targets (run.sh builds
 * and runs it): whole v3 requests (a PFS_HDR_LEN-byte header from
 * pfs_hdr_encode plus a payload from the real encoders), so the seeds
 * follow the wire format when it changes.  Usage: mkseed DIR; writes
 * DIR/{frame,mds,oss,msg}/seed-NN. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/buf.h"
#include "common/proto.h"

static const char *root;

static void put(const char *target, int idx, const void *a, size_t an, const void *b,
		size_t bn)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, target);
	if (mkdir(path, 0755) && errno != EEXIST) {
		perror(path);
		exit(1);
	}
	snprintf(path, sizeof(path), "%s/%s/seed-%02d", root, target, idx);
	f = fopen(path, "wb");
	if (!f || fwrite(a, 1, an, f) != an || (bn && fwrite(b, 1, bn, f) != bn) || fclose(f)) {
		perror(path);
		exit(1);
	}
}

/* A request: header for op with job id "jobA", uid 0, and payload w. */
static void req(const char *target, int idx, uint16_t op, const pfs_wbuf *w)
{
	pfs_hdr h;
	uint8_t raw[PFS_HDR_LEN];

	pfs_hdr_init(&h, op, (uint64_t)idx + 1, 42, "jobA");
	/* fuzz_mds.c takes the peer's role from credit % 5: client (0) for
	 * namespace requests, admin (1) for job/QoS ones, oss (2) for the
	 * control channel, so each seed reaches its handler */
	h.credit = op >= PFS_OP_MDS_OSS_REGISTER ? 2 : op >= PFS_OP_MDS_OST_LIST ? 1 : 0;
	h.payload_len = (uint32_t)w->len;
	pfs_hdr_encode(&h, raw);
	put(target, idx, raw, sizeof(raw), w->data, w->len);
}

static void cred(pfs_wbuf *w)
{
	/* pfs_cred: uid, gid, u32 ngroups (msg.h) */
	pfs_wbuf_u32(w, 0);
	pfs_wbuf_u32(w, 0);
	pfs_wbuf_u32(w, 0);
}

static void str(pfs_wbuf *w, const char *s)
{
	pfs_wbuf_u32(w, (uint32_t)strlen(s));
	pfs_wbuf_bytes(w, s, strlen(s));
}

static void mds_seeds(void)
{
	pfs_wbuf w;
	int i = 0;

	pfs_wbuf_init(&w);
#define NEXT(op) do { req("mds", i++, (op), &w); req("frame", i, (op), &w); pfs_wbuf_reset(&w); } while (0)
	cred(&w); pfs_wbuf_u64(&w, 1); str(&w, "a");
	NEXT(PFS_OP_MDS_LOOKUP);
	cred(&w); pfs_wbuf_u64(&w, 1); str(&w, "d"); pfs_wbuf_u32(&w, 040755);
	NEXT(PFS_OP_MDS_MKDIR);
	cred(&w); pfs_wbuf_u64(&w, 1); str(&w, "f"); pfs_wbuf_u32(&w, 0100644);
	pfs_wbuf_u32(&w, 0); pfs_wbuf_u32(&w, 0); pfs_wbuf_u32(&w, 0);
	NEXT(PFS_OP_MDS_CREATE);
	cred(&w); pfs_wbuf_u64(&w, 1); pfs_wbuf_u64(&w, 0); pfs_wbuf_u32(&w, 100);
	NEXT(PFS_OP_MDS_READDIR);
	cred(&w); pfs_wbuf_u64(&w, 1); str(&w, "a"); pfs_wbuf_u32(&w, 64);
	NEXT(PFS_OP_MDS_LOOKUP_BULK);
	cred(&w); pfs_wbuf_u64(&w, 1); str(&w, "user.x"); str(&w, "v"); pfs_wbuf_u32(&w, 0);
	NEXT(PFS_OP_MDS_SETXATTR);
	cred(&w); pfs_wbuf_u64(&w, 1); str(&w, "f"); pfs_wbuf_u64(&w, 1); str(&w, "g");
	pfs_wbuf_u32(&w, 0);
	NEXT(PFS_OP_MDS_RENAME);
	cred(&w); pfs_wbuf_u64(&w, 1); pfs_wbuf_u64(&w, 4096); pfs_wbuf_i64(&w, 0);
	NEXT(PFS_OP_MDS_SETSIZE);
	cred(&w);
	NEXT(PFS_OP_MDS_STATFS);
	str(&w, "");
	NEXT(PFS_OP_MDS_QOS_SHOW);
	str(&w, "gift"); pfs_wbuf_u32(&w, 1); str(&w, "interval"); pfs_wbuf_f64(&w, 5.0);
	NEXT(PFS_OP_MDS_QOS_POLICY_SET);
	str(&w, "");
	NEXT(PFS_OP_MDS_JOBSTATS);
	str(&w, "oss0"); str(&w, "127.0.0.1"); pfs_wbuf_u16(&w, 7000); pfs_wbuf_u16(&w, 7001);
	pfs_wbuf_u32(&w, 1); str(&w, "ost-uuid-0"); pfs_wbuf_u64(&w, 1 << 30);
	pfs_wbuf_u64(&w, 1 << 29); pfs_wbuf_u64(&w, 0);
	NEXT(PFS_OP_MDS_OSS_REGISTER);
	str(&w, "oss0"); pfs_wbuf_u32(&w, 1); pfs_wbuf_u32(&w, 0); pfs_wbuf_u64(&w, 1 << 30);
	pfs_wbuf_u64(&w, 1 << 29); pfs_wbuf_u64(&w, 0);
	NEXT(PFS_OP_MDS_OSS_HEARTBEAT);
	cred(&w); pfs_wbuf_u64(&w, 1); str(&w, "f"); pfs_wbuf_u64(&w, 2);
	NEXT(PFS_OP_MDS_UNLINK);
	cred(&w); pfs_wbuf_u64(&w, 1);
	NEXT(PFS_OP_MDS_DELEG_GET);
	cred(&w); pfs_wbuf_u64(&w, 1);
	NEXT(PFS_OP_MDS_DELEG_RETURN);
	cred(&w); pfs_wbuf_u64(&w, 1); pfs_wbuf_u32(&w, 2); str(&w, "f"); pfs_wbuf_u64(&w, 2);
	str(&w, "g"); pfs_wbuf_u64(&w, 0);
	NEXT(PFS_OP_MDS_UNLINK_BATCH);
#undef NEXT
	pfs_wbuf_free(&w);
}

static void oss_seeds(void)
{
	pfs_wbuf w;
	int i = 0;

	pfs_wbuf_init(&w);
#define NEXT(op) do { req("oss", i++, (op), &w); pfs_wbuf_reset(&w); } while (0)
	pfs_wbuf_u32(&w, 0); pfs_wbuf_u64(&w, 1); pfs_wbuf_u64(&w, 0); pfs_wbuf_u32(&w, 4096);
	NEXT(PFS_OP_OSS_READ);
	pfs_wbuf_u32(&w, 0); pfs_wbuf_u64(&w, 1); pfs_wbuf_u64(&w, 0); pfs_wbuf_u32(&w, 4);
	pfs_wbuf_bytes(&w, "data", 4);
	NEXT(PFS_OP_OSS_WRITE);
	/* two extents of one object: 4 bytes at 0, 3 bytes at 100 */
	pfs_wbuf_u32(&w, 0); pfs_wbuf_u64(&w, 1); pfs_wbuf_u32(&w, 2);
	pfs_wbuf_u64(&w, 0); pfs_wbuf_u32(&w, 4); pfs_wbuf_u64(&w, 100); pfs_wbuf_u32(&w, 3);
	pfs_wbuf_bytes(&w, "datamor", 7);
	NEXT(PFS_OP_OSS_WRITEV);
	pfs_wbuf_u32(&w, 0); pfs_wbuf_u64(&w, 1); pfs_wbuf_u64(&w, 0); pfs_wbuf_u64(&w, 10);
	NEXT(PFS_OP_OSS_PUNCH);
	pfs_wbuf_u32(&w, 0); pfs_wbuf_u64(&w, 1);
	NEXT(PFS_OP_OSS_DESTROY);
	pfs_wbuf_u32(&w, 0); pfs_wbuf_u64(&w, 0); pfs_wbuf_u32(&w, 16);
	NEXT(PFS_OP_OSS_LIST_OBJECTS);
	NEXT(PFS_OP_OSS_JOBSTATS);
	pfs_wbuf_u8(&w, PFS_QOS_STATS_TOTAL);
	NEXT(PFS_OP_OSS_QOS_STATS);
	pfs_wbuf_u8(&w, PFS_NRS_START); str(&w, "r1"); str(&w, "jobid={jobA} rate=100");
	NEXT(PFS_OP_OSS_NRS_RULE);
	pfs_wbuf_u8(&w, PFS_NRS_LIST); str(&w, ""); str(&w, "");
	NEXT(PFS_OP_OSS_NRS_RULE);
#undef NEXT
	pfs_wbuf_free(&w);
}

static void msg_seeds(void)
{
	uint8_t b[64] = { 0 };

	/* one selector byte per decoder, then zeros: most decode to empty values */
	for (int i = 0; i < 16; i++) {
		b[0] = (uint8_t)i;
		put("msg", i, b, sizeof(b), NULL, 0);
	}
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: mkseed DIR\n");
		return 2;
	}
	root = argv[1];
	if (mkdir(root, 0755) && errno != EEXIST) {
		perror(root);
		return 1;
	}
	mds_seeds();
	oss_seeds();
	msg_seeds();
	return 0;
}
