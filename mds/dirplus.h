/* dirplus.h — PFS_OP_MDS_LOOKUP_BULK, the MDS half of mount.pfs's
 * statahead (client/statahead.h): the entries of one directory that
 * follow a name, in the MDS's key order (name order, the `dirents` table
 * of mds/dir.c), each with the full attributes a LOOKUP of it would
 * return, in one read transaction.
 *
 * Permissions are those of LOOKUP and READDIR together for the caller:
 * read and search on the directory and search on every directory above it
 * (mds_ns_access, as LOOKUP's path check), so a caller learns nothing a
 * READDIR followed by LOOKUPs would not tell it.  The reply is bounded:
 * at most MDS_DIRPLUS_MAX entries (PFS_LOOKUP_BULK_MAX), and stops early
 * once its encoding passes MDS_DIRPLUS_BYTES. */
#ifndef MDS_DIRPLUS_H
#define MDS_DIRPLUS_H

#include <stdint.h>

#include "common/buf.h"
#include "common/msg.h"
#include "common/proto.h"

typedef struct mds_ns mds_ns;

#define MDS_DIRPLUS_MAX PFS_LOOKUP_BULK_MAX
#define MDS_DIRPLUS_BYTES (256u * 1024)

typedef struct mds_dirplus_ent {
	pfs_attr a;
	char name[PFS_NAME_MAX + 1];
} mds_dirplus_ent;

/* The request after its cred: dir, after ("" = from the first name; NUL-
 * terminated into after[PFS_NAME_MAX + 1]) and max (capped at
 * MDS_DIRPLUS_MAX; 0 is -EINVAL).  0 or -EBADMSG/-EINVAL. */
int mds_dirplus_decode(pfs_rbuf *b, uint64_t *dir, char *after, uint32_t *max);

/* The entries of dir strictly after name `after` ("" = all), at most max
 * of them into out[]; *n the count, *eof 1 when no entry follows the last.
 * 0 or -errno (-ENOTDIR, -EACCES, -ENOENT, ...). */
int mds_ns_lookup_bulk(mds_ns *ns, const pfs_cred *c, uint64_t dir, const char *after,
		       uint32_t max, mds_dirplus_ent *out, uint32_t *n, int *eof);

/* The whole request (after its cred) to its reply in out: decode, read,
 * encode `u32 n, u8 eof, n x { str name, attr }`.  grant(arg, dir, name,
 * ino) is called for each entry sent (metadata leases; may be NULL). */
int mds_dirplus_serve(mds_ns *ns, const pfs_cred *c, pfs_rbuf *b, pfs_wbuf *out,
		      void (*grant)(void *arg, uint64_t dir, const char *name, uint64_t ino),
		      void *arg);

#endif
