/* version.h — the version of pfs, the one place it is written down.
 *
 * Every program answers --version with "PROGRAM (pfs) PFS_VERSION"
 * (pfs-mds, pfs-oss, mount.pfs, pfsadmin); the Makefile reads the define
 * below for packages (keep it on one line, in this form).  A build may set
 * it instead: make CFLAGS+=-DPFS_VERSION='"x"'. */
#ifndef PFS_VERSION_H
#define PFS_VERSION_H

#ifndef PFS_VERSION
#define PFS_VERSION "0.9.0"
#endif

#endif
