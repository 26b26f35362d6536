/* fuse_wire.h — INIT flags that mount.pfs announces to the kernel itself.
 *
 * libfuse turns the kernel's INIT offer into conn->capable and conn->want
 * back into the INIT reply, but only for the flags it knows.  Debian 12's
 * libfuse 3.14 does not know FUSE_HANDLE_KILLPRIV_V2 (libfuse has it from
 * 3.17), and without it the kernel asks the file system for
 * security.capability before every write(2): file_remove_privs runs in
 * full unless the inode is S_NOSEC, which FUSE grants only to a file
 * system that kills privileges itself.  That is one more FUSE round trip,
 * under the file's lock, per write.
 *
 * mount.pfs therefore reads and writes /dev/fuse through libfuse's custom
 * I/O hooks (fuse_ops.c) and passes each request it reads and each reply
 * it writes through here: the INIT request's offer is noted, and the INIT
 * reply gains the flags that were asked for and offered.  Every other
 * message is left as it is.  The promises such a flag makes are the file
 * system's to keep (for HANDLE_KILLPRIV_V2: fuse_ops.c kill_privs and the
 * MDS's PFS_SETATTR_KILLPRIV).
 *
 * The functions work on buffers only (no I/O), so they are tested without
 * a kernel.  INIT is read and answered before the kernel sends anything
 * else; the state is atomic so that later replies on other threads see it
 * finished. */
#ifndef CLI_FUSE_WIRE_H
#define CLI_FUSE_WIRE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

/* FUSE_HANDLE_KILLPRIV_V2 of <linux/fuse.h> (fuse_wire.c checks it). */
#define CLI_FUSE_HANDLE_KILLPRIV_V2 (1u << 28)

typedef struct cli_fuse_wire {
	uint32_t want;            /* flags to add to the INIT reply if offered */
	_Atomic uint64_t init_unique; /* the INIT request's id; 0 = not seen */
	_Atomic uint32_t offered; /* the kernel's INIT flags (low word) */
	_Atomic uint32_t added;   /* flags the INIT reply gained */
	atomic_int done;          /* INIT answered: nothing more to edit */
	uint32_t out[16];          /* the edited INIT reply's argument (struct
	                              fuse_init_out, 64 bytes) */
} cli_fuse_wire;

/* want: FUSE_* INIT flags of <linux/fuse.h> (its first word of flags)
 * to announce when offered. */
void cli_fuse_wire_init(cli_fuse_wire *w, uint32_t want);

/* A request of len bytes as read from /dev/fuse: an INIT's offer is
 * noted; anything else, or a short or garbled INIT, is ignored. */
void cli_fuse_wire_saw_request(cli_fuse_wire *w, const void *buf, size_t len);

/* The kernel offered all of flags in its INIT (0 before INIT is read). */
int cli_fuse_wire_offered(const cli_fuse_wire *w, uint32_t flags);

/* A reply about to be written.  For a successful reply to the INIT,
 * iov[0..count) is copied to out (room for count entries) with out's
 * argument replaced by a copy in w with the wanted and offered flags
 * added, and 1 returned: write out.  Else 0: write iov as it is. */
int cli_fuse_wire_edit_reply(cli_fuse_wire *w, const struct iovec *iov, int count,
			     struct iovec *out);

/* The flags the INIT reply gained (0 until it is written). */
uint32_t cli_fuse_wire_added(const cli_fuse_wire *w);

#endif
