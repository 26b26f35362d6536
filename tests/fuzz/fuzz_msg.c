/* fuzz_msg.c — libFuzzer target for the payload value codecs of
 * common/msg.c, common/qosmsg.c and common/layout.c: the first input byte
 * picks a decoder, the rest is its input.  A value that decodes must
 * re-encode to bytes that decode again, consume exactly those bytes and
 * re-encode to the same bytes (encode . decode is stable); nothing may
 * crash, overread or leak. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/buf.h"
#include "common/layout.h"
#include "common/msg.h"
#include "common/proto.h"
#include "common/qosmsg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* decode from p[0..n); when it succeeds, check the round trip. */
#define ROUNDTRIP(type, dec, enc, fin)                                           \
	do {                                                                     \
		type v1, v2;                                                     \
		pfs_rbuf r;                                                      \
		pfs_wbuf w1, w2;                                                 \
		memset(&v1, 0, sizeof(v1));                                      \
		memset(&v2, 0, sizeof(v2));                                      \
		pfs_rbuf_init(&r, p, n);                                         \
		if (dec(&r, &v1) != 0)                                           \
			break;                                                   \
		pfs_wbuf_init(&w1);                                              \
		pfs_wbuf_init(&w2);                                              \
		enc(&w1, &v1);                                                   \
		if (pfs_wbuf_error(&w1))                                         \
			__builtin_trap();                                        \
		pfs_rbuf_init(&r, w1.data, w1.len);                              \
		if (dec(&r, &v2) != 0 || pfs_rbuf_done(&r) != 0)                 \
			__builtin_trap();                                        \
		enc(&w2, &v2);                                                   \
		if (w1.len != w2.len || (w1.len && memcmp(w1.data, w2.data, w1.len))) \
			__builtin_trap();                                        \
		fin(&v1);                                                        \
		fin(&v2);                                                        \
		pfs_wbuf_free(&w1);                                              \
		pfs_wbuf_free(&w2);                                              \
	} while (0)

#define NOFREE(x) (void)(x)

/* pfs_qos_alloc_set_decode frees nothing on error and allocates rows on
 * success; the others own no memory. */
static void set_free(pfs_qos_alloc_set *s)
{
	pfs_qos_alloc_set_free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p;
	size_t n;

	if (size < 1)
		return 0;
	p = data + 1;
	n = size - 1;
	switch (data[0] % 16) {
	case 0:
		ROUNDTRIP(pfs_cred, pfs_cred_decode, pfs_cred_encode, NOFREE);
		break;
	case 1:
		ROUNDTRIP(pfs_attr, pfs_attr_decode, pfs_attr_encode, NOFREE);
		break;
	case 2:
		ROUNDTRIP(pfs_statfs, pfs_statfs_decode, pfs_statfs_encode, NOFREE);
		break;
	case 3:
		ROUNDTRIP(pfs_ost_info, pfs_ost_info_decode, pfs_ost_info_encode, NOFREE);
		break;
	case 4:
		ROUNDTRIP(pfs_job_stats, pfs_job_stats_decode, pfs_job_stats_encode, NOFREE);
		break;
	case 5:
		ROUNDTRIP(pfs_layout, pfs_layout_decode, pfs_layout_encode, NOFREE);
		break;
	case 6:
		ROUNDTRIP(pfs_job_info, pfs_job_info_decode, pfs_job_info_encode, NOFREE);
		break;
	case 7:
		ROUNDTRIP(pfs_qos_alloc_set, pfs_qos_alloc_set_decode, pfs_qos_alloc_set_encode,
			  set_free);
		break;
	case 8:
		ROUNDTRIP(pfs_qos_ost_info, pfs_qos_ost_info_decode, pfs_qos_ost_info_encode,
			  NOFREE);
		break;
	case 9:
		ROUNDTRIP(pfs_qos_stat, pfs_qos_stat_decode, pfs_qos_stat_encode, NOFREE);
		break;
	case 10:
		ROUNDTRIP(pfs_qos_row, pfs_qos_row_decode, pfs_qos_row_encode, NOFREE);
		break;
	case 11:
		ROUNDTRIP(pfs_qos_status, pfs_qos_status_decode, pfs_qos_status_encode, NOFREE);
		break;
	case 12:
		ROUNDTRIP(pfs_qos_coupon_info, pfs_qos_coupon_info_decode,
			  pfs_qos_coupon_info_encode, NOFREE);
		break;
	case 13:
		ROUNDTRIP(pfs_qos_regret_info, pfs_qos_regret_info_decode,
			  pfs_qos_regret_info_encode, NOFREE);
		break;
	case 14:
		ROUNDTRIP(pfs_nrs_rule_info, pfs_nrs_rule_info_decode, pfs_nrs_rule_info_encode,
			  NOFREE);
		break;
	default: {
		/* layout mapping over a decoded layout */
		pfs_rbuf r;
		pfs_layout l;
		pfs_extent ex[32];

		pfs_rbuf_init(&r, p, n);
		if (pfs_layout_decode(&r, &l) == 0 && n >= 16) {
			uint64_t off, len;
			memcpy(&off, p + n - 16, 8);
			memcpy(&len, p + n - 8, 8);
			(void)pfs_layout_map(&l, off, (size_t)(len & 0xffffff), ex, 32);
		}
		break;
	}
	}
	return 0;
}
