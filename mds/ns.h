/* ns.h — the pfs namespace: inodes, directory entries, layouts, xattrs, the
 * OST registry and the object destroy log, all in one LMDB environment,
 * plus key-value tables other MDS modules keep there (jobs, QoS state).
 * This header declares the namespace operations (ns.c) and includes the
 * headers of the other parts, one per file: nsdb.h (open, close, options),
 * dir.h (READDIR), xattr.h, ostreg.h (OST registry, STATFS), destroy_log.h,
 * dbsync.h (mds_ns_sync), kv.h (key-value tables).  Callers include ns.h.
 *
 * Every mutating call is one LMDB write transaction, so it is applied
 * completely or not at all; LMDB serialises writers, readers never block.
 * Permission checks follow POSIX with the caller's pfs_cred (see ns.c).
 * Inode 1 is the root directory (FUSE_ROOT_ID).  Names are at most
 * PFS_NAME_MAX bytes without '/' or NUL; "." and ".." are never stored
 * (READDIR does not return them; LOOKUP resolves them).
 *
 * Functions return 0 or a negative errno; out-parameters are written only
 * on success.  An mds_ns is thread-safe: any number of threads may call into
 * one handle. */
#ifndef MDS_NS_H
#define MDS_NS_H

#include <stddef.h>
#include <stdint.h>

#include "common/layout.h"
#include "common/msg.h"
#include "mds/dbsync.h"
#include "mds/destroy_log.h"
#include "mds/dir.h"
#include "mds/kv.h"
#include "mds/nsdb.h"
#include "mds/ostreg.h"
#include "mds/xattr.h"

typedef struct mds_ns mds_ns;

/* ---- namespace operations (the PFS_OP_MDS_* opcodes) ---- */
int mds_ns_lookup(mds_ns *ns, const pfs_cred *c, uint64_t parent, const char *name,
		  pfs_attr *out);
int mds_ns_getattr(mds_ns *ns, const pfs_cred *c, uint64_t ino, pfs_attr *out);
/* valid = PFS_SETATTR_* bits; out gets the new attributes.  Checks as
 * Linux: chown/chgrp rules without CAP_CHOWN; a size change needs write
 * permission unless PFS_SETATTR_FD (through a descriptor opened for
 * writing); a size change or PFS_SETATTR_KILLPRIV by a non-root caller
 * clears S_ISUID (and S_ISGID with group-exec), and KILLPRIV with a chown
 * for root too; KILLPRIV also drops security.capability (any caller);
 * search permission along the path unless PFS_SETATTR_FD. */
int mds_ns_setattr(mds_ns *ns, const pfs_cred *c, uint64_t ino, uint32_t valid,
		   uint32_t mode, uint32_t uid, uint32_t gid, uint64_t size,
		   int64_t atime_ns, int64_t mtime_ns, pfs_attr *out);
/* Regular file with a layout; stripe_size/count 0 = inherit (directory
 * default, then file system default).  flags: PFS_CREATE_EXCL,
 * PFS_CREATE_READ/WRITE.  Without EXCL an existing regular file is returned
 * as is (open(O_CREAT)) if the caller may open it for READ/WRITE (neither
 * bit: both), else -EACCES.
 * -ENOSPC when no OST is up. */
int mds_ns_create(mds_ns *ns, const pfs_cred *c, uint64_t parent, const char *name,
		  uint32_t mode, uint32_t flags, uint32_t stripe_size, uint32_t stripe_count,
		  pfs_attr *out, pfs_layout *lay);
/* The same with the first OST (lfs setstripe -i): stripe 0 on OST
 * stripe_offset, the next stripes on the next indices up that are up,
 * wrapping; PFS_STRIPE_OFFSET_ANY = inherit (the directory's default, else
 * the MDS chooses).  -EINVAL for an index that is no registered OST.
 * mds_ns_create is this with PFS_STRIPE_OFFSET_ANY. */
int mds_ns_create_at(mds_ns *ns, const pfs_cred *c, uint64_t parent, const char *name,
		     uint32_t mode, uint32_t flags, uint32_t stripe_size, uint32_t stripe_count,
		     uint32_t stripe_offset, pfs_attr *out, pfs_layout *lay);
/* Asynchronous create (PFS_OP_MDS_CREATE_SLOTS): n (1..PFS_CREATE_SLOTS_MAX)
 * inode numbers and layouts (dir's default striping) reserved for c of
 * client in one transaction, each stored as a slot record (owner client,
 * directory dir, good for ttl_ms; mds/slotrec.c) that survives a restart;
 * expired records are swept in the same transaction.  dir_attr gets dir's
 * attributes.  c must be allowed to create in dir (W_OK|X_OK, search on
 * the path). */
int mds_ns_create_slots(mds_ns *ns, const pfs_cred *c, uint64_t dir, unsigned n,
			uint64_t client, uint64_t ttl_ms, uint64_t *inos, pfs_layout *lays,
			pfs_attr *dir_attr);
/* mds_ns_create of name in parent into client's slot ino: the file gets
 * that inode number and the slot's layout, and the slot record goes in
 * the same transaction; EXCL implied (-EEXIST when name exists, the slot
 * kept); -ESTALE when client has no such slot in parent (unknown, taken,
 * expired) or inode ino exists. */
int mds_ns_create_slot(mds_ns *ns, const pfs_cred *c, uint64_t parent, const char *name,
		       uint32_t mode, uint32_t flags, uint64_t client, uint64_t ino,
		       pfs_attr *out, pfs_layout *lay);
/* mds_ns_create flag of the MDS's own (never from the wire): the creator
 * opens the new file for writing, so it starts with its size flagged
 * stale (mds_ns_size_stale, mds/open.h) in the creating transaction rather
 * than a second one.  The attributes returned do not show the flag. */
#define MDS_CREATE_WRITER 0x80000000u
/* Any non-directory type; S_IFREG gets a layout like create. */
int mds_ns_mknod(mds_ns *ns, const pfs_cred *c, uint64_t parent, const char *name,
		 uint32_t mode, uint32_t rdev, pfs_attr *out);
int mds_ns_mkdir(mds_ns *ns, const pfs_cred *c, uint64_t parent, const char *name,
		 uint32_t mode, pfs_attr *out);
int mds_ns_unlink(mds_ns *ns, const pfs_cred *c, uint64_t parent, const char *name);
/* Conditional unlink (PFS_OP_MDS_UNLINK with an inode): as mds_ns_unlink
 * when name names inode ino (0: any), else -ESTALE and nothing changes;
 * checked in the removal's transaction. */
int mds_ns_unlink_ino(mds_ns *ns, const pfs_cred *c, uint64_t parent, const char *name,
		      uint64_t ino);
int mds_ns_rmdir(mds_ns *ns, const pfs_cred *c, uint64_t parent, const char *name);
/* flags: PFS_RENAME_NOREPLACE | PFS_RENAME_EXCHANGE. */
int mds_ns_rename(mds_ns *ns, const pfs_cred *c, uint64_t parent, const char *name,
		  uint64_t newparent, const char *newname, uint32_t flags);
int mds_ns_symlink(mds_ns *ns, const pfs_cred *c, uint64_t parent, const char *name,
		   const char *target, pfs_attr *out);
/* target must hold PFS_PATH_MAX + 1 bytes; NUL-terminated. */
int mds_ns_readlink(mds_ns *ns, const pfs_cred *c, uint64_t ino, char *target);
int mds_ns_link(mds_ns *ns, const pfs_cred *c, uint64_t ino, uint64_t newparent,
		const char *newname, pfs_attr *out);
/* Permission check for the O_ACCMODE of flags (O_TRUNC also needs write);
 * -EISDIR for writing a directory.  Returns attributes and layout. */
int mds_ns_open_file(mds_ns *ns, const pfs_cred *c, uint64_t ino, uint32_t flags,
		     pfs_attr *out, pfs_layout *lay);
/* mask = R_OK|W_OK|X_OK or F_OK, checked on the inode and, unless mask has
 * MDS_ACCESS_NOPATH (the MDS's own checks for an open file: capability
 * rights, SETSIZE), search permission along its primary parent's path. */
#define MDS_ACCESS_NOPATH 0x100u
int mds_ns_access(mds_ns *ns, const pfs_cred *c, uint64_t ino, uint32_t mask);
/* size = max(size, current); mtime_ns != 0 sets mtime.  No permission check:
 * the client wrote through a descriptor it was allowed to open. */
int mds_ns_setsize(mds_ns *ns, const pfs_cred *c, uint64_t ino, uint64_t size,
		   int64_t mtime_ns, pfs_attr *out);
/* The same with the truncate epoch the writer last saw (pfs_attr.tepoch;
 * MDS_EPOCH_ANY = unknown, no check) and the 512-byte blocks its objects
 * use now (MDS_BLOCKS_UNKNOWN = keep the stored count).  A SETSIZE from an
 * older epoch than the inode's, i.e. from before a truncate, changes
 * neither size nor blocks (mtime still): what it wrote before the truncate
 * was cut with the objects. */
#define MDS_EPOCH_ANY UINT64_MAX
#define MDS_BLOCKS_UNKNOWN UINT64_MAX
int mds_ns_setsize_epoch(mds_ns *ns, const pfs_cred *c, uint64_t ino, uint64_t size,
			 int64_t mtime_ns, uint64_t epoch, uint64_t blocks, pfs_attr *out);
/* Set (stale 1) or clear the "size may be stale" flag of regular file ino
 * (PFS_ATTR_SIZE_STALE; mds/open.h sets it at a write open, clears it when
 * no writer is left).  No permission check: the open table decides.  A
 * write transaction only when the flag changes; other types: no-op. */
int mds_ns_size_stale(mds_ns *ns, uint64_t ino, int stale);
/* Layout of a file; stripe_count 0 for other non-directories.  For a
 * directory *is_dir is set and lay holds its default for new files:
 * stripe_size and stripe_count as given to setstripe (0 = file system
 * default, count UINT32_MAX = all OSTs up), no stripes; stripe[0].ost is its
 * first OST (PFS_STRIPE_OFFSET_ANY = the MDS chooses). */
int mds_ns_getlayout(mds_ns *ns, const pfs_cred *c, uint64_t ino, pfs_layout *lay,
		     int *is_dir);
/* Directory: default layout of files created below (0 = file system
 * default), inherited by subdirectories created afterwards.  File: a new
 * layout, only while its size is 0 (else -EBUSY); old objects go to the
 * destroy log.  Owner or root only. */
int mds_ns_setstripe(mds_ns *ns, const pfs_cred *c, uint64_t ino, uint32_t stripe_size,
		     uint32_t stripe_count);
/* The same with a first OST as mds_ns_create_at's (PFS_STRIPE_OFFSET_ANY:
 * none; on a directory it replaces the default's, so -d resets it). */
int mds_ns_setstripe_at(mds_ns *ns, const pfs_cred *c, uint64_t ino, uint32_t stripe_size,
			uint32_t stripe_count, uint32_t stripe_offset);

#endif
