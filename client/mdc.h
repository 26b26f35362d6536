/* mdc.h — metadata client: one typed call per PFS_OP_MDS_* opcode.
 *
 * Each function encodes its request with common/buf.h and msg.h, makes one
 * round trip on a pfs_rpc_pool to the MDS, and decodes the reply; a reply
 * with bytes left over or missing is -EBADMSG (pfs_rbuf_done must hold).
 * Every namespace request carries the caller's credentials (cli_ctx.cred) and
 * every request the job id (cli_ctx.job) in its header; the client id is put
 * in every header by the pool (pfs_rpc_opts.client_id).
 *
 * Read-only calls and calls whose repetition has the same effect (getattr,
 * setattr, setsize, open, ...) are marked idempotent, so the RPC layer may
 * resend them after a lost connection; create/unlink/rename and friends are
 * not, and a transport failure after sending surfaces as -EPIPE.
 *
 * Two users: mount.pfs (fuse_ops.c, osc.c) and pfsadmin (admin_*.c), which
 * wraps the pool it also uses for its job and QoS requests (cli_mdc_wrap).
 *
 * Thread-safe: any number of threads may call into one cli_mdc. */
#ifndef CLI_MDC_H
#define CLI_MDC_H

#include <stddef.h>
#include <stdint.h>

#include "common/capa.h"
#include "common/layout.h"
#include "common/msg.h"
#include "common/proto.h"
#include "common/rpc.h"

typedef struct cli_mdc cli_mdc;

/* Object capabilities of one file (common/capa.h) as the MDS gave them
 * with OPEN, CREATE or GETLAYOUT: immutable once made and reference
 * counted, so an open file can swap in renewed ones while I/O still uses
 * the old set.  Without authentication the MDS sends none (NULL sets). */
typedef struct cli_caps {
	unsigned refs;     /* atomic */
	uint64_t got;      /* CLOCK_REALTIME seconds when received */
	uint64_t expiry;   /* earliest expiry of v[] */
	uint32_t n;
	pfs_capa v[];
} cli_caps;
/* NULL-safe. */
cli_caps *cli_caps_get(cli_caps *c);
void cli_caps_put(cli_caps *c);
/* The capability for (ost, object), or NULL. */
const pfs_capa *cli_caps_find(const cli_caps *c, uint32_t ost, uint64_t object);
/* 1 when c should be renewed at now (CLOCK_REALTIME s): three quarters of
 * its lifetime have passed. */
int cli_caps_stale(const cli_caps *c, uint64_t now);

/* Who is asking: credentials and job id of the process behind a request. */
typedef struct cli_ctx {
	pfs_cred cred;
	char job[PFS_JOBID_MAX + 1];
} cli_ctx;

/* Stripe count "every OST that is up" in SETSTRIPE and CREATE (lfs -c -1),
 * resolved by the MDS when a file is created (mds/ns.c). */
#define CLI_MDC_STRIPE_ALL UINT32_MAX

/* One READDIR entry; next_cookie resumes the listing after this entry. */
typedef struct cli_dirent {
	uint64_t ino;
	uint32_t mode;
	uint64_t next_cookie;
	char name[PFS_NAME_MAX + 1];
} cli_dirent;

/* SETATTR arguments; valid is a PFS_SETATTR_* mask saying which fields count. */
typedef struct cli_setattr {
	uint32_t valid;
	uint32_t mode, uid, gid;
	uint64_t size;
	int64_t atime_ns, mtime_ns;
} cli_setattr;

/* Put every metadata call of m through the PADLL stage q (client/mdqos.h;
 * borrowed, must outlive m's calls; NULL = none). */
struct cli_mdqos;
void cli_mdc_set_mdqos(cli_mdc *m, struct cli_mdqos *q);
/* The stage set above, or NULL: client/osc.c puts data requests (PADLL's
 * read and write classes) through it too. */
struct cli_mdqos *cli_mdc_mdqos(cli_mdc *m);

/* A fresh random 64-bit client id (getrandom); 0 or -errno. */
int cli_client_id_new(uint64_t *out);

/* Connect lazily to host:port (nothing is sent until the first call).
 * opts is copied.  0, -EINVAL or -ENOMEM. */
int cli_mdc_create(const char *host, uint16_t port, const pfs_rpc_opts *opts, cli_mdc **out);
/* An mdc over a pool the caller owns and keeps alive until after
 * cli_mdc_destroy, which then frees only the mdc.  0 or -ENOMEM. */
int cli_mdc_wrap(pfs_rpc_pool *pool, cli_mdc **out);
/* No call may be in progress.  Closes the pool unless it was wrapped. */
void cli_mdc_destroy(cli_mdc *m);
/* From now on every call of m returns file-system errors only: transport
 * failures that outlast the pool's recovery window become -EIO
 * (pfs_rpc_fs_err).  mount.pfs sets it after its first contact; pfsadmin
 * keeps the transport errors to explain them. */
void cli_mdc_set_fs_errors(cli_mdc *m, int on);

/* The pool the calls go through (borrowed: lives as long as m), for the
 * requests this module has no typed call for (pfsadmin's job and QoS
 * opcodes). */
pfs_rpc_pool *cli_mdc_pool(const cli_mdc *m);

/* All calls return 0, the MDS's -errno, a transport error, -ENAMETOOLONG
 * (a name longer than PFS_NAME_MAX, checked before sending) or -EBADMSG (a
 * malformed reply). */
int cli_mdc_lookup(cli_mdc *m, const cli_ctx *c, uint64_t parent, const char *name,
		   pfs_attr *attr);
int cli_mdc_getattr(cli_mdc *m, const cli_ctx *c, uint64_t ino, pfs_attr *attr);
int cli_mdc_setattr(cli_mdc *m, const cli_ctx *c, uint64_t ino, const cli_setattr *sa,
		    pfs_attr *attr);
/* flags: PFS_CREATE_EXCL; stripe_size/stripe_count 0 = inherit. */
int cli_mdc_create_file(cli_mdc *m, const cli_ctx *c, uint64_t parent, const char *name,
			uint32_t mode, uint32_t flags, uint32_t stripe_size,
			uint32_t stripe_count, pfs_attr *attr, pfs_layout *layout);
/* The same with the first OST (lfs setstripe -i; PFS_STRIPE_OFFSET_ANY =
 * inherit, as cli_mdc_create_file sends): stripe 0 there, the next ones on
 * the next OSTs up. */
int cli_mdc_create_file_at(cli_mdc *m, const cli_ctx *c, uint64_t parent, const char *name,
			   uint32_t mode, uint32_t flags, uint32_t stripe_size,
			   uint32_t stripe_count, uint32_t stripe_offset, pfs_attr *attr,
			   pfs_layout *layout);
int cli_mdc_mknod(cli_mdc *m, const cli_ctx *c, uint64_t parent, const char *name,
		  uint32_t mode, uint32_t rdev, pfs_attr *attr);
int cli_mdc_mkdir(cli_mdc *m, const cli_ctx *c, uint64_t parent, const char *name,
		  uint32_t mode, pfs_attr *attr);
int cli_mdc_unlink(cli_mdc *m, const cli_ctx *c, uint64_t parent, const char *name);
/* UNLINK with the inode the name is expected to name (ino 0: any, the
 * plain UNLINK): the MDS removes it only if name still names ino, else
 * -ESTALE (an asynchronous unlink, client/dirdeleg.h, never removes a file
 * created again under the name).  flags CLI_MDC_CHARGED: the PADLL stage
 * already admitted this request in the application's thread
 * (cli_mdc_charge), it is not counted nor paced again. */
#define CLI_MDC_CHARGED 0x1u
int cli_mdc_unlink_ino(cli_mdc *m, const cli_ctx *c, uint64_t parent, const char *name,
		       uint64_t ino, unsigned flags);
/* PFS_OP_MDS_UNLINK_BATCH: n (1..PFS_UNLINK_BATCH_MAX) UNLINKs of names[i]
 * in parent, each expecting inos[i] (0: any), run by the MDS in order
 * (the flushers of asynchronous unlink, client/dirdeleg.h).  0 with
 * status[i] = each UNLINK's own 0 or -errno; else the request's error and
 * status[] unset: -EINVAL (n out of range, a name empty) or -ENAMETOOLONG
 * before sending, the MDS's (an MDS without the opcode: -EACCES or
 * -EOPNOTSUPP), a transport error, -EPROTO (a reply without exactly n
 * statuses, or a status > 0).  PADLL: n UNLINKs of c's job unless flags
 * has CLI_MDC_CHARGED. */
int cli_mdc_unlink_batch(cli_mdc *m, const cli_ctx *c, uint64_t parent, uint32_t n,
			 const char *const *names, const uint64_t *inos, int *status,
			 unsigned flags);
/* Count a request of job with opcode op in the PADLL stage and wait for
 * its token, as every call does, for a request sent later with
 * CLI_MDC_CHARGED.  No stage: nothing. */
void cli_mdc_charge(cli_mdc *m, const char *job, uint16_t op);
int cli_mdc_rmdir(cli_mdc *m, const cli_ctx *c, uint64_t parent, const char *name);
int cli_mdc_rename(cli_mdc *m, const cli_ctx *c, uint64_t parent, const char *name,
		   uint64_t newparent, const char *newname, uint32_t flags);
/* One page of directory ino from cookie (0 = start): at most max entries
 * (max <= PFS_READDIR_MAX) into ents, *n of them; *eof set when the listing
 * ends with this page. */
int cli_mdc_readdir(cli_mdc *m, const cli_ctx *c, uint64_t ino, uint64_t cookie, uint32_t max,
		    cli_dirent *ents, uint32_t *n, int *eof);
/* One entry of a LOOKUP_BULK reply. */
typedef struct cli_bulkent {
	pfs_attr a;
	char name[PFS_NAME_MAX + 1];
} cli_bulkent;
/* PFS_OP_MDS_LOOKUP_BULK (statahead, client/statahead.h): the entries of
 * dir after name `after` ("" = from the first) in name order with their
 * attributes, at most max (1..PFS_LOOKUP_BULK_MAX) into out[]; *n of them,
 * *eof when the directory has no more. */
int cli_mdc_lookup_bulk(cli_mdc *m, const cli_ctx *c, uint64_t dir, const char *after,
			uint32_t max, cli_bulkent *out, uint32_t *n, int *eof);
/* Its reply decoder: len bytes at p, at most max entries.  0 or -EBADMSG
 * (short, long, too many entries, a name that is empty, ".", ".." or has
 * a '/'). */
int cli_mdc_lookup_bulk_decode(const void *p, size_t len, uint32_t max, cli_bulkent *out,
			       uint32_t *n, int *eof);
int cli_mdc_symlink(cli_mdc *m, const cli_ctx *c, uint64_t parent, const char *name,
		    const char *target, pfs_attr *attr);
/* Target into buf (NUL-terminated); -ENAMETOOLONG if it does not fit in sz. */
int cli_mdc_readlink(cli_mdc *m, const cli_ctx *c, uint64_t ino, char *buf, size_t sz);
int cli_mdc_link(cli_mdc *m, const cli_ctx *c, uint64_t ino, uint64_t newparent,
		 const char *newname, pfs_attr *attr);
int cli_mdc_statfs(cli_mdc *m, const cli_ctx *c, pfs_statfs *st);
int cli_mdc_setxattr(cli_mdc *m, const cli_ctx *c, uint64_t ino, const char *name,
		     const void *value, size_t size, uint32_t flags);
/* Value (or NUL-separated name list) in a malloc'd *val of *len bytes; the
 * caller frees it.  *val may be NULL when *len is 0. */
int cli_mdc_getxattr(cli_mdc *m, const cli_ctx *c, uint64_t ino, const char *name,
		     void **val, size_t *len);
int cli_mdc_listxattr(cli_mdc *m, const cli_ctx *c, uint64_t ino, void **list, size_t *len);
int cli_mdc_removexattr(cli_mdc *m, const cli_ctx *c, uint64_t ino, const char *name);
/* flags: open(2) flags; the MDS checks access and returns fresh attr + layout. */
int cli_mdc_open(cli_mdc *m, const cli_ctx *c, uint64_t ino, uint32_t flags, pfs_attr *attr,
		 pfs_layout *layout);
int cli_mdc_access(cli_mdc *m, const cli_ctx *c, uint64_t ino, uint32_t mask);
/* MDS_CLOSE: a handle of ino was released and left more stay open on this
 * mount (the MDS's open count; the last close of an open-unlinked file
 * destroys it). */
int cli_mdc_close(cli_mdc *m, const cli_ctx *c, uint64_t ino, uint32_t left);
/* Grow-only size update (size = max(size, current)); mtime_ns 0 = keep. */
int cli_mdc_setsize(cli_mdc *m, const cli_ctx *c, uint64_t ino, uint64_t size,
		    int64_t mtime_ns, pfs_attr *attr);
/* The same with the truncate epoch this mount last saw (pfs_attr.tepoch):
 * the MDS keeps the size if a truncate came after it; and the 512-byte
 * blocks the objects use (CLI_MDC_BLOCKS_UNKNOWN = keep the MDS's).
 * CLI_MDC_EPOCH_ANY sends neither (blocks must then be unknown). */
#define CLI_MDC_EPOCH_ANY UINT64_MAX
#define CLI_MDC_BLOCKS_UNKNOWN UINT64_MAX
int cli_mdc_setsize_epoch(cli_mdc *m, const cli_ctx *c, uint64_t ino, uint64_t size,
			  int64_t mtime_ns, uint64_t epoch, uint64_t blocks, pfs_attr *attr);
/* A file's layout; a directory's reply (its default, no stripes) is
 * -EBADMSG here, see cli_mdc_getlayout_any. */
int cli_mdc_getlayout(cli_mdc *m, const cli_ctx *c, uint64_t ino, pfs_layout *layout);
/* The same three calls keeping the capabilities that follow the layout
 * (*caps = NULL when there are none; the caller puts it).  The plain calls
 * above read and drop them.  GETLAYOUT is also the renewal: an unlinked
 * file has no layout and gets none. */
int cli_mdc_open_caps(cli_mdc *m, const cli_ctx *c, uint64_t ino, uint32_t flags,
		      pfs_attr *attr, pfs_layout *layout, cli_caps **caps);
int cli_mdc_create_file_caps(cli_mdc *m, const cli_ctx *c, uint64_t parent, const char *name,
			     uint32_t mode, uint32_t flags, uint32_t stripe_size,
			     uint32_t stripe_count, pfs_attr *attr, pfs_layout *layout,
			     cli_caps **caps);
int cli_mdc_getlayout_caps(cli_mdc *m, const cli_ctx *c, uint64_t ino, pfs_layout *layout,
			   cli_caps **caps);
/* GETLAYOUT of any inode.  A file: its layout, *nobj = stripe_count (0 for
 * a file without a layout yet).  A directory: the default of files created
 * below, which the MDS sends as stripe_size, stripe_count and first OST
 * alone, so *nobj = 0 and either value may be 0 ("the file system's
 * default") or the count CLI_MDC_STRIPE_ALL.  layout->stripe[0].ost is the
 * first OST in every case: stripe 0's, the directory default's, or
 * PFS_STRIPE_OFFSET_ANY (none given; a file without objects).  A file
 * without a layout and a directory in the old 8-byte form with count 0
 * read the same: the caller knows from the inode's type. */
int cli_mdc_getlayout_any(cli_mdc *m, const cli_ctx *c, uint64_t ino, pfs_layout *layout,
			  uint32_t *nobj);
/* The decoder of that reply: len bytes at p.  0 or -EBADMSG. */
int cli_mdc_layout_decode(const void *p, size_t len, pfs_layout *layout, uint32_t *nobj);
/* stripe_offset: the first OST, PFS_STRIPE_OFFSET_ANY = none (on a
 * directory this clears the default's). */
int cli_mdc_setstripe(cli_mdc *m, const cli_ctx *c, uint64_t ino, uint32_t stripe_size,
		      uint32_t stripe_count, uint32_t stripe_offset);
/* OST table in a malloc'd array *osts of *n entries (caller frees). */
int cli_mdc_ost_list(cli_mdc *m, const char *job, pfs_ost_info **osts, uint32_t *n);
/* PFS_OP_PING with len bytes of msg (len <= 4096); -EBADMSG unless the
 * same bytes come back. */
int cli_mdc_ping(cli_mdc *m, const char *job, const void *msg, size_t len);

/* ---- the MDS lock service (PFS_OP_MDS_LOCK_*, client/fuse_locks.h) ---- */

/* A lock as the wire carries it: kind PFS_LK_POSIX|FLOCK|APPEND, type
 * PFS_LK_READ|WRITE|UNLOCK, [start, end] inclusive (UINT64_MAX = to EOF),
 * the FUSE lock owner and the pid F_GETLK reports.  The client is the
 * pool's client id. */
typedef struct cli_lock {
	uint8_t kind, type;
	uint64_t start, end;
	uint64_t owner;
	uint32_t pid;
} cli_lock;

/* F_GETLK: *conflict = 1 and *out = the first lock in the way, or 0. */
int cli_mdc_lock_get(cli_mdc *m, const char *job, uint64_t ino, const cli_lock *req,
		     int *conflict, cli_lock *out);
/* F_SETLK: 0 or -EAGAIN; *lease_ms (may be NULL) = the MDS's lock lease. */
int cli_mdc_lock_set(cli_mdc *m, const char *job, uint64_t ino, const cli_lock *req,
		     uint32_t *lease_ms);
/* F_SETLKW, one round: 0 granted; -EINPROGRESS not within wait_ms (send
 * again); -EINTR cancelled (cli_mdc_lock_cancel); -EDEADLK. */
int cli_mdc_lock_wait(cli_mdc *m, const char *job, uint64_t ino, const cli_lock *req,
		      uint32_t wait_ms, uint32_t *lease_ms);
/* The same two calls also returning the MDS instance that granted the
 * lock (*instance, may be NULL; 0 from an MDS that sends none). */
int cli_mdc_lock_set_inst(cli_mdc *m, const char *job, uint64_t ino, const cli_lock *req,
			  uint32_t *lease_ms, uint64_t *instance);
int cli_mdc_lock_wait_inst(cli_mdc *m, const char *job, uint64_t ino, const cli_lock *req,
			   uint32_t wait_ms, uint32_t *lease_ms, uint64_t *instance);
/* LOCK_RECLAIM's reply besides the statuses. */
typedef struct cli_lock_rinfo {
	uint64_t instance;         /* the MDS's instance (changes at each start) */
	uint32_t lease_ms;
	uint32_t recovery_left_ms; /* 0: the MDS is not in its recovery window */
} cli_lock_rinfo;
/* LOCK_RECLAIM: re-assert n locks held on inos[i] after an MDS restart
 * (flags PFS_LK_RECLAIM_LAST on the last batch); status[i] = 0 or -errno
 * (-ENOLCK: lost).  n = 0: a probe of the instance.  Statuses of a
 * non-zero return are unset. */
int cli_mdc_lock_reclaim(cli_mdc *m, const char *job, uint32_t flags, uint32_t n,
			 const uint64_t *inos, const cli_lock *locks, int32_t *status,
			 cli_lock_rinfo *info);
/* Answer this client's waiting LOCK_WAITs of owner on ino with -EINTR. */
int cli_mdc_lock_cancel(cli_mdc *m, const char *job, uint64_t ino, uint64_t owner);
/* Drop every lock of owner on ino of the kinds in mask (1 << PFS_LK_*). */
int cli_mdc_lock_release(cli_mdc *m, const char *job, uint64_t ino, uint64_t owner,
			 uint32_t kinds);

/* ---- metadata lease invalidations (issue 11, client/notify.h) ---- */

/* One record of a NOTIFY_WAIT batch: kind PFS_NOTIFY_INO (ino's
 * attributes), PFS_NOTIFY_ENTRY (name in directory ino) or PFS_NOTIFY_PERM
 * (directory ino's permissions: the names cached below it too). */
typedef struct cli_notify_rec {
	uint8_t kind;
	uint64_t ino;
	char name[PFS_NAME_MAX + 1];
} cli_notify_rec;
typedef struct cli_notify_batch {
	uint64_t boot_id;   /* the MDS instance */
	uint32_t lease_ms;  /* 0: the MDS grants no leases */
	uint8_t flags;      /* PFS_NOTIFY_RESET: records were lost */
	uint64_t seq;       /* acknowledge with the next wait */
	uint32_t n;
	cli_notify_rec *v;  /* malloc'd (NULL when n is 0); the caller frees it */
} cli_notify_batch;
/* PFS_OP_MDS_NOTIFY_WAIT: held by the MDS until it has records for this
 * client or wait_ms passed; ack = the seq of the last batch received (0 =
 * none); flags PFS_NOTIFY_BYE closes the channel.  Resent through a
 * server restart like every call (the MDS keeps what it sent until it is
 * acknowledged, so a lost reply loses nothing). */
int cli_mdc_notify_wait(cli_mdc *m, uint64_t ack, uint32_t wait_ms, uint8_t flags,
			cli_notify_batch *out);

/* ---- directory delegations (asynchronous unlink, client/dirdeleg.h) ---- */

/* PFS_OP_MDS_DELEG_GET: ask for (or renew) directory dir's delegation for
 * the credential in c: 0 with *lease_ms (valid that long past this mount's
 * last request naming dir) and dir's attributes in *attr (may be NULL);
 * -EAGAIN not now; the MDS's -errno (an MDS without delegations:
 * -EOPNOTSUPP).  Any error means "no delegation". */
int cli_mdc_deleg_get(cli_mdc *m, const cli_ctx *c, uint64_t dir, uint32_t *lease_ms,
		      pfs_attr *attr);
/* PFS_OP_MDS_DELEG_RETURN: every unlink answered under dir's delegation has
 * been sent; a delegation not held is success too. */
int cli_mdc_deleg_return(cli_mdc *m, const cli_ctx *c, uint64_t dir);

/* PFS_OP_MDS_CREATE_SLOTS: n (1..PFS_CREATE_SLOTS_MAX) inode numbers and
 * layouts reserved for asynchronous creates in dir, whose delegation this
 * mount holds: 0 with inos[0..n-1], lays[0..n-1] and dir_attr (the
 * directory's attributes now), or -errno (-EAGAIN: not the holder, or too
 * many slots held; -EPROTO: a malformed reply; any error means "no slots"
 * and the outputs may hold parts of it). */
int cli_mdc_create_slots(cli_mdc *m, const cli_ctx *c, uint64_t dir, uint32_t n,
			 uint64_t *inos, pfs_layout *lays, pfs_attr *dir_attr);
/* PFS_OP_MDS_CREATE_BATCH: n (1..PFS_CREATE_SLOTS_MAX) asynchronous
 * creates of names[i] in parent into slots inos[i] with modes[i] and
 * closed[i] (PFS_CREATE_CLOSED), charged already: 0 with status[i] each
 * one's 0 or -errno (-ESTALE: no such slot, -EEXIST: the name exists), or
 * the request's -errno (nothing known of the entries; -EPROTO: a
 * malformed reply, status untouched).  The one way asynchronous creates
 * reach the MDS: a lone one is a batch of one. */
int cli_mdc_create_batch(cli_mdc *m, const cli_ctx *c, uint64_t parent, uint32_t n,
			 const char *const *names, const uint32_t *modes, const int *closed,
			 const uint64_t *inos, int *status);

/* ---- durability (issue 8) ---- */

/* PFS_OP_MDS_SYNC: the MDS database is on disk when this returns 0 (every
 * namespace change and size the MDS answered before is durable); the MDS's
 * sync error otherwise.  ino (0 = none) names the file or directory being
 * synced, for the MDS's logs.  Resent through the recovery window. */
int cli_mdc_sync(cli_mdc *m, const cli_ctx *c, uint64_t ino);

#endif
