/* fuse_ops.h — the FUSE low-level file system of mount.pfs.
 *
 * Maps each FUSE request to MDS calls (mdc) and striped OSS I/O (osc), with
 * the caller's credentials (uid, gid, supplementary groups) and job id on
 * every request.  Requests through an open file carry the job id of the
 * process that opened it (resolved at OPEN/CREATE; see ctx_fh in the .c for
 * why data requests never read /proc), and its OSS requests the opener's
 * uid and gid too (fh_tag).  FUSE inode numbers are pfs inode numbers (the
 * MDS root is 1 = FUSE_ROOT_ID), so st_ino is the pfs ino.
 *
 * Consistency model (as NFS): attribute and entry timeouts of about a second,
 * close-to-open; write-through unless the writeback option asks for the
 * kernel's write-back cache (client/README.md "Write-back and readahead").  OPEN fetches fresh attributes from the
 * MDS and keeps the kernel page cache only when size and mtime are what this
 * client last saw; writes go to mount.pfs's own write-back cache (client/
 * wcache.h; written back at the latest by close and fsync) or straight to
 * the OSSes (wcache_mb=0, O_DIRECT, O_APPEND), and each open inode keeps
 * the highest byte written by this client, pushed to the MDS with the
 * grow-only SETSIZE on flush, fsync and release.  GETATTR on an inode with
 * unpushed writes reports max(MDS size, local high-water mark).
 *
 * Every handler replies exactly once.  The ops table is static; the cli_fs
 * is the session's userdata. */
#ifndef CLI_FUSE_OPS_H
#define CLI_FUSE_OPS_H

#include <fuse_lowlevel.h>

#include "client/jobid.h"
#include "client/mdc.h"
#include "client/osc.h"
#include "client/readahead.h"
#include "client/wcache.h"

typedef struct cli_fs cli_fs;

typedef struct cli_fs_opts {
	double attr_timeout;  /* seconds; also used for entries */
	unsigned max_io;      /* max_read/max_write in bytes (<= PFS_MAX_IO) */
	int splice;           /* receive WRITE data by splice and pass it on by splice */
	int sync_on_close;    /* close (FLUSH) syncs the objects written through the
	                         descriptor on their OSSes before the size goes to
	                         the MDS: data before metadata, like ext4
	                         data=ordered (client/README.md "Durability") */
	int writeback;        /* ask the kernel for FUSE_CAP_WRITEBACK_CACHE */
	struct cli_notify *notify; /* metadata leases (client/notify.h; borrowed):
	                              timeouts up to the lease while its channel
	                              is up; NULL = attr_timeout always */
	cli_ra_opts ra;       /* mount.pfs's stream readahead (client/readahead.h):
	                         window, total, threads; total_bytes 0 = off; the
	                         callback is set here */
	cli_wc_opts wcache;   /* mount.pfs's own write-back cache (client/wcache.h):
	                         limits, threads, age; total_bytes 0 = off (every
	                         write synchronous); the callbacks are set here */
	int wcache_whole_stripes; /* cache writes of whole stripes too; 0: they go
	                             straight to the OSSes (spliced, no copy) */
	unsigned statahead;   /* statahead (client/statahead.h): entries per bulk
	                         fetch; 0 = off */
	unsigned statahead_max; /* entries the statahead cache holds */
	double statahead_age_s; /* longest any of them may be served (the
	                           longest timeout: attr_timeout or the lease) */
	int async_unlink;     /* unlinks in a directory this mount holds the
	                         delegation of are answered at once and sent
	                         later (client/dirdeleg.h); needs notify */
	unsigned async_unlink_max; /* most unlinks answered and not yet sent */
	int async_unlink_nice;     /* the flushers' nice value */
	int killpriv_v2;      /* announce FUSE_HANDLE_KILLPRIV_V2: set-id bits and
	                         security.capability are dropped at writes by
	                         mount.pfs, and the kernel stops asking for
	                         security.capability before each write */
	int neg_local;        /* with async_unlink: creates and negative lookups
	                         ask for the directory's delegation too, and a
	                         LOOKUP of a name not in a held directory this
	                         mount listed is answered ENOENT here */
	int async_create;     /* with neg_local: a create of a name a held, listed
	                         directory lacks is answered at once from a slot
	                         the MDS reserved, and sent later (client/dirdeleg.h
	                         "Asynchronous create") */
	unsigned async_hold_ms; /* how long an asynchronous unlink or create
	                           waits before it is sent */
} cli_fs_opts;

/* mdc, osc and jobid are borrowed and must outlive the cli_fs. */
int cli_fs_create(cli_mdc *mdc, cli_osc *osc, cli_jobid *jobid, const cli_fs_opts *opts,
		  cli_fs **out);
/* Route the session's /dev/fuse I/O through fs (libfuse's custom I/O)
 * so that the INIT reply can carry the flags libfuse does not know
 * (client/fuse_wire.h); after fuse_session_mount, before the loop.  0
 * also when there is nothing to add (killpriv_v2 off, or a libfuse that
 * announces HANDLE_KILLPRIV_V2 itself); -errno if libfuse refused. */
int cli_fs_wire_io(cli_fs *fs, struct fuse_session *se);
/* Send every unlink answered early and return every directory
 * delegation (unmount: before the notify channel closes).  NULL-safe. */
void cli_fs_quiesce(cli_fs *fs);
/* Frees the inode table; the session must be gone. */
void cli_fs_destroy(cli_fs *fs);
/* The low-level operations; pass the cli_fs as userdata to fuse_session_new. */
const struct fuse_lowlevel_ops *cli_fs_ops(void);
/* The mount's lock service client (client/fuse_locks.h). */
struct cli_locks *cli_fs_locks(cli_fs *fs);
/* Number of inodes the table holds (looked up or open), for tests. */
size_t cli_fs_inode_count(cli_fs *fs);

#endif
