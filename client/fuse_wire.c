/* fuse_wire.c — the INIT flags mount.pfs adds itself (see fuse_wire.h).
 *
 * The kernel's messages are read as the kernel's ABI defines them
 * (<linux/fuse.h>); libfuse's own headers do not include that file, so it
 * stays out of fuse_wire.h. */
#include "client/fuse_wire.h"

#include <string.h>

#include <linux/fuse.h>

_Static_assert(CLI_FUSE_HANDLE_KILLPRIV_V2 == FUSE_HANDLE_KILLPRIV_V2,
	       "the kernel's FUSE_HANDLE_KILLPRIV_V2");
_Static_assert(sizeof(struct fuse_init_out) == sizeof(((cli_fuse_wire *)0)->out),
	       "cli_fuse_wire.out holds a struct fuse_init_out");

void cli_fuse_wire_init(cli_fuse_wire *w, uint32_t want)
{
	memset(w, 0, sizeof(*w));
	w->want = want;
}

void cli_fuse_wire_saw_request(cli_fuse_wire *w, const void *buf, size_t len)
{
	struct fuse_in_header h;
	struct fuse_init_in in;

	if (atomic_load_explicit(&w->done, memory_order_relaxed) || len < sizeof(h))
		return;
	memcpy(&h, buf, sizeof(h));
	if (h.opcode != FUSE_INIT || h.unique == 0 || h.len != len)
		return;
	/* flags sits in the first 16 bytes, which every kernel since 7.6
	 * sends (the rest of fuse_init_in is newer) */
	if (len < sizeof(h) + offsetof(struct fuse_init_in, flags2))
		return;
	memset(&in, 0, sizeof(in));
	memcpy(&in, (const char *)buf + sizeof(h),
	       len - sizeof(h) < sizeof(in) ? len - sizeof(h) : sizeof(in));
	if (in.major != FUSE_KERNEL_VERSION)
		return;
	atomic_store(&w->offered, in.flags);
	atomic_store(&w->init_unique, h.unique);
}

int cli_fuse_wire_offered(const cli_fuse_wire *w, uint32_t flags)
{
	return (atomic_load(&w->offered) & flags) == flags;
}

int cli_fuse_wire_edit_reply(cli_fuse_wire *w, const struct iovec *iov, int count,
			     struct iovec *out)
{
	struct fuse_out_header h;
	uint64_t unique;
	uint32_t add;

	if (atomic_load_explicit(&w->done, memory_order_acquire))
		return 0;
	unique = atomic_load(&w->init_unique);
	if (!unique || count != 2 || iov[0].iov_len != sizeof(h))
		return 0;
	memcpy(&h, iov[0].iov_base, sizeof(h));
	if (h.unique != unique)
		return 0;
	/* the reply to INIT, whatever it says: nothing after it is edited */
	atomic_store_explicit(&w->done, 1, memory_order_release);
	add = w->want & atomic_load(&w->offered);
	/* an error, or an answer shorter than the flags2-era reply (a kernel
	 * this old does not offer the flag anyway), goes as it is */
	if (h.error != 0 || !add || iov[1].iov_len != sizeof(struct fuse_init_out))
		return 0;
	memcpy(out, iov, (size_t)count * sizeof(*iov));
	memcpy(w->out, iov[1].iov_base, sizeof(w->out));
	((struct fuse_init_out *)(void *)w->out)->flags |= add;
	out[1].iov_base = w->out;
	atomic_store(&w->added, add);
	return 1;
}

uint32_t cli_fuse_wire_added(const cli_fuse_wire *w)
{
	return atomic_load(&w->added);
}
