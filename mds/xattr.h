/* xattr.h — extended attributes in the MDS namespace (xattr.c).  Part of
 * the namespace's API: mds/ns.h includes it. */
#ifndef MDS_XATTR_H
#define MDS_XATTR_H

#include <stddef.h>
#include <stdint.h>

#include "common/msg.h"

typedef struct mds_ns mds_ns;

/* flags: XATTR_CREATE / XATTR_REPLACE.  Namespaces: user.* needs write
 * permission (read for get), trusted.* and security.* need root to set,
 * system.* is not supported (-EOPNOTSUPP, so no POSIX ACLs). */
int mds_ns_setxattr(mds_ns *ns, const pfs_cred *c, uint64_t ino, const char *name,
		    const void *value, size_t len, uint32_t flags);
/* The whole value into a malloc'd *value (caller frees), length in *len. */
int mds_ns_getxattr(mds_ns *ns, const pfs_cred *c, uint64_t ino, const char *name,
		    void **value, size_t *len);
/* NUL-separated names (each NUL-terminated) in a malloc'd *list. */
int mds_ns_listxattr(mds_ns *ns, const pfs_cred *c, uint64_t ino, char **list,
		     size_t *len);
int mds_ns_removexattr(mds_ns *ns, const pfs_cred *c, uint64_t ino, const char *name);

#endif
