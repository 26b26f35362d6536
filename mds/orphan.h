/* orphan.h — open-unlinked files in the namespace (mds/orphan.c).
 *
 * When the last name of a regular file goes (UNLINK, RENAME over it) while
 * some client has it open (the open hook says so: mds/open.h installs it),
 * the inode is kept with nlink 0 and recorded in the orphan list, a `meta`
 * key "orphan" + be64 ino, in the same transaction; its objects stay on the
 * OSTs and GETATTR, SETSIZE and GETLAYOUT keep serving it.  The orphan is
 * destroyed (objects to the destroy log, inode and key deleted, in one
 * transaction) by mds_ns_orphan_destroy when its last open goes (a CLOSE or
 * the holder's lease expiring, mds/open.c).  The list survives restarts. */
#ifndef MDS_ORPHAN_H
#define MDS_ORPHAN_H

#include <stddef.h>
#include <stdint.h>

#include "mds/ns.h"

/* fn(arg, ino) is called inside the write transaction that drops the last
 * link of regular file ino: 1 = open somewhere (keep it as an orphan),
 * 0 = not open (destroy it now; fn must then refuse later opens of ino).
 * fn must not call into ns.  fn NULL = no open tracking (destroy at once). */
void mds_ns_set_open_hook(mds_ns *ns, int (*fn)(void *arg, uint64_t ino), void *arg);
/* Destroy orphan ino unless the open hook says it is open again (then
 * -EBUSY) or it got a name back (the orphan record alone goes).  -ENOENT
 * when ino is not an orphan. */
int mds_ns_orphan_destroy(mds_ns *ns, uint64_t ino);
/* The orphan list, in a malloc'd *inos (caller frees; NULL when empty). */
int mds_ns_orphan_list(mds_ns *ns, uint64_t **inos, size_t *n);

#endif
