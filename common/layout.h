/* layout.h — file layouts and RAID-0 striping arithmetic (as Lustre's LOV).
 *
 * A file's bytes are cut into stripe_size units dealt round-robin over
 * stripe_count objects, one per OST: byte o lives in stripe
 * (o / stripe_size) % stripe_count at object offset
 * (o / (stripe_size * stripe_count)) * stripe_size + o % stripe_size.
 * All functions are pure; a layout is a plain value type. */
#ifndef PFS_LAYOUT_H
#define PFS_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"

#define PFS_MAX_STRIPES 64
#define PFS_DEFAULT_STRIPE_SIZE (1u << 20)
#define PFS_DEFAULT_STRIPE_COUNT 4
#define PFS_MIN_STRIPE_SIZE (64u << 10) /* stripe sizes are multiples of this */
#define PFS_MAX_STRIPE_SIZE (1u << 30)

typedef struct pfs_stripe {
	uint32_t ost;    /* OST index */
	uint64_t object; /* object id on that OST */
} pfs_stripe;

typedef struct pfs_layout {
	uint32_t stripe_size;  /* bytes, multiple of PFS_MIN_STRIPE_SIZE */
	uint32_t stripe_count; /* 0 = no objects (dirs, symlinks) */
	pfs_stripe stripe[PFS_MAX_STRIPES];
} pfs_layout;

/* One piece of an I/O: len bytes at obj_off of stripe idx, which are bytes
 * [buf_off, buf_off + len) of the caller's buffer. */
typedef struct pfs_extent {
	uint32_t idx;
	uint64_t obj_off;
	uint64_t buf_off;
	uint64_t len;
} pfs_extent;

/* 0 if stripe_size/stripe_count are acceptable, else -EINVAL.  count may be
 * 0 only for a layout without objects. */
int pfs_layout_check(uint32_t stripe_size, uint32_t stripe_count);
/* Split [off, off+len) into per-object extents in file order, merging
 * neighbours that are contiguous in both object and buffer.  Writes at most
 * max extents; returns the exact number needed (may exceed max: the caller
 * retries with a larger array). */
size_t pfs_layout_map(const pfs_layout *l, uint64_t off, uint64_t len,
		      pfs_extent *out, size_t max);
/* Size object idx has when the file is file_size bytes long. */
uint64_t pfs_layout_object_size(const pfs_layout *l, uint64_t file_size, uint32_t idx);
/* File offset of byte obj_off in object idx (inverse of the mapping). */
uint64_t pfs_layout_file_offset(const pfs_layout *l, uint32_t idx, uint64_t obj_off);

/* Wire form: u32 stripe_size, u32 stripe_count, count x { u32 ost, u64 object }. */
void pfs_layout_encode(pfs_wbuf *b, const pfs_layout *l);
/* Decodes and validates (pfs_layout_check); returns 0 or -EBADMSG/-EINVAL. */
int pfs_layout_decode(pfs_rbuf *b, pfs_layout *l);

#endif
