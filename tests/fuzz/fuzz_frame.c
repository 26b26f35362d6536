/* fuzz_frame.c — libFuzzer target for the frame decoder and the payload
 * codecs: any byte string must decode to a clean error or a value that
 * re-encodes to the same bytes; never a crash, overread or leak. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/buf.h"
#include "common/layout.h"
#include "common/msg.h"
#include "common/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pfs_hdr h;
	uint8_t re[PFS_HDR_LEN];

	if (pfs_hdr_decode(data, size, PFS_MAX_PAYLOAD, &h) == 0) {
		pfs_hdr_encode(&h, re);
		if (memcmp(re, data, PFS_HDR_LEN) != 0)
			__builtin_trap();
		if (h.payload_len > PFS_MAX_PAYLOAD)
			__builtin_trap();
	}
	/* The rest as a payload, through every shared value decoder. */
	const uint8_t *p = size > PFS_HDR_LEN ? data + PFS_HDR_LEN : data;
	size_t n = size > PFS_HDR_LEN ? size - PFS_HDR_LEN : size;
	pfs_rbuf r;
	pfs_cred c;
	pfs_attr a;
	pfs_layout l;
	pfs_statfs s;
	pfs_ost_info o;
	pfs_job_stats js;
	char name[PFS_NAME_MAX + 1];

	pfs_rbuf_init(&r, p, n);
	(void)pfs_cred_decode(&r, &c);
	pfs_rbuf_cstr(&r, name, sizeof(name));
	(void)pfs_attr_decode(&r, &a);
	(void)pfs_rbuf_done(&r);

	pfs_rbuf_init(&r, p, n);
	if (pfs_layout_decode(&r, &l) == 0) {
		pfs_extent ex[32];
		if (l.stripe_count > PFS_MAX_STRIPES)
			__builtin_trap();
		(void)pfs_layout_map(&l, (uint64_t)n * 4093, n * 17, ex, 32);
	}
	pfs_rbuf_init(&r, p, n);
	(void)pfs_statfs_decode(&r, &s);
	pfs_rbuf_init(&r, p, n);
	(void)pfs_ost_info_decode(&r, &o);
	pfs_rbuf_init(&r, p, n);
	(void)pfs_job_stats_decode(&r, &js);
	return 0;
}
