/* admin_version.h — the one place pfs's version is written down (pfsadmin
 * --version).  A build may set it instead: make CFLAGS+=-DPFS_VERSION='"x"'. */
#ifndef CLI_ADMIN_VERSION_H
#define CLI_ADMIN_VERSION_H

#ifndef PFS_VERSION
#define PFS_VERSION "0.9.0"
#endif

#endif
