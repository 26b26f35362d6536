/* layout.c — striping arithmetic and the layout wire form (see layout.h). */
#include "common/layout.h"

#include <errno.h>
#include <string.h>

int pfs_layout_check(uint32_t stripe_size, uint32_t stripe_count)
{
	if (stripe_count > PFS_MAX_STRIPES)
		return -EINVAL;
	if (stripe_count == 0)
		return 0;
	if (stripe_size < PFS_MIN_STRIPE_SIZE || stripe_size > PFS_MAX_STRIPE_SIZE ||
	    stripe_size % PFS_MIN_STRIPE_SIZE)
		return -EINVAL;
	return 0;
}

size_t pfs_layout_map(const pfs_layout *l, uint64_t off, uint64_t len,
		      pfs_extent *out, size_t max)
{
	size_t n = 0;
	uint64_t ss = l->stripe_size, sc = l->stripe_count, done = 0;
	pfs_extent cur = { 0, 0, 0, 0 }; /* the extent being grown; emitted when it ends */

	if (sc == 0 || ss == 0)
		return 0;
	while (done < len) {
		uint64_t o = off + done;
		uint64_t unit = o / ss;
		uint32_t idx = (uint32_t)(unit % sc);
		uint64_t in_unit = o % ss;
		uint64_t obj_off = (unit / sc) * ss + in_unit;
		uint64_t piece = ss - in_unit;

		if (piece > len - done)
			piece = len - done;
		if (cur.len && cur.idx == idx && cur.obj_off + cur.len == obj_off &&
		    cur.buf_off + cur.len == done) {
			cur.len += piece;
		} else {
			if (cur.len) {
				if (n < max)
					out[n] = cur;
				n++;
			}
			cur = (pfs_extent){ idx, obj_off, done, piece };
		}
		done += piece;
	}
	if (cur.len) {
		if (n < max)
			out[n] = cur;
		n++;
	}
	return n;
}

uint64_t pfs_layout_object_size(const pfs_layout *l, uint64_t file_size, uint32_t idx)
{
	uint64_t ss = l->stripe_size, sc = l->stripe_count;

	if (sc == 0 || ss == 0 || idx >= sc || file_size == 0)
		return 0;
	uint64_t full_rows = file_size / (ss * sc);
	uint64_t rest = file_size % (ss * sc); /* bytes in the last, partial row */
	uint64_t size = full_rows * ss;
	uint64_t start = (uint64_t)idx * ss;   /* where this stripe's unit starts in a row */

	if (rest > start)
		size += (rest - start < ss) ? rest - start : ss;
	return size;
}

uint64_t pfs_layout_file_offset(const pfs_layout *l, uint32_t idx, uint64_t obj_off)
{
	uint64_t ss = l->stripe_size, sc = l->stripe_count;

	if (ss == 0 || sc == 0)
		return 0;
	return (obj_off / ss) * ss * sc + (uint64_t)idx * ss + obj_off % ss;
}

void pfs_layout_encode(pfs_wbuf *b, const pfs_layout *l)
{
	pfs_wbuf_u32(b, l->stripe_size);
	pfs_wbuf_u32(b, l->stripe_count);
	for (uint32_t i = 0; i < l->stripe_count && i < PFS_MAX_STRIPES; i++) {
		pfs_wbuf_u32(b, l->stripe[i].ost);
		pfs_wbuf_u64(b, l->stripe[i].object);
	}
}

int pfs_layout_decode(pfs_rbuf *b, pfs_layout *l)
{
	memset(l, 0, sizeof(*l));
	l->stripe_size = pfs_rbuf_u32(b);
	l->stripe_count = pfs_rbuf_u32(b);
	if (pfs_rbuf_error(b))
		return pfs_rbuf_error(b);
	if (pfs_layout_check(l->stripe_size, l->stripe_count))
		return -EBADMSG;
	for (uint32_t i = 0; i < l->stripe_count; i++) {
		l->stripe[i].ost = pfs_rbuf_u32(b);
		l->stripe[i].object = pfs_rbuf_u64(b);
	}
	return pfs_rbuf_error(b);
}
