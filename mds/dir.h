/* dir.h — reading directories of the MDS namespace (dir.c).  Part of the
 * namespace's API: mds/ns.h includes it. */
#ifndef MDS_DIR_H
#define MDS_DIR_H

#include <stdint.h>

#include "common/msg.h"

typedef struct mds_ns mds_ns;

/* One READDIR entry. */
typedef struct mds_dirent {
	uint64_t ino;
	uint32_t mode;
	uint64_t next_cookie; /* pass back to continue after this entry */
	char name[PFS_NAME_MAX + 1];
} mds_dirent;

/* Entries after cookie (0 = from the start), at most max (capped at
 * PFS_READDIR_MAX) into out[]; *n gets the count, *eof 1 when the directory
 * has no more entries.  Cookies are stable: an entry keeps its cookie until
 * removed, new entries get larger ones, so paging sees every entry that
 * exists throughout exactly once.  Needs read permission on the directory. */
int mds_ns_readdir(mds_ns *ns, const pfs_cred *c, uint64_t ino, uint64_t cookie,
		   uint32_t max, mds_dirent *out, uint32_t *n, int *eof);

#endif
