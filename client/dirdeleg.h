/* dirdeleg.h — what a mount does under the delegation of a directory
 * (issue 11, "unlink >= 0.8", "create >= 1.0 of a FUSE passthrough"), the
 * mount's side of mds/deleg.h: unlinks and creates answered at once and
 * sent later, in batches, by one queue and its flushers; lookups of names
 * the directory lacks answered here.  (It was unlinkq.[ch], named for the
 * unlinks it began with.)
 *
 * The kernel serialises the unlinks of one directory (it holds the
 * directory's lock across LOOKUP and UNLINK), so a stream of unlinks in one
 * directory goes at one UNLINK round trip each.  A mount that holds the
 * directory's *delegation* (PFS_OP_MDS_DELEG_GET, mds/deleg.h) may answer
 * unlink(2) at once and send the UNLINKs later, several in flight, each
 * with the inode the name is expected to name (the MDS answers -ESTALE
 * instead of removing a file created again under the name).  Any other
 * client's request touching the directory waits at the MDS until this
 * mount has sent them and returned the delegation (PFS_NOTIFY_RECALL on
 * the notify channel, client/notify.h).
 *
 * Rules (fuse_ops.c calls in; RPCs go through cli_dd_ops, so this module
 * is testable without a server):
 * - Asking: the `streak`-th unlink in one directory by one credential
 *   within streak_ms of the one before sends DELEG_GET once, in the
 *   unlinking thread, while the notify channel is up.  A refusal (any
 *   error: -EAGAIN, an MDS without delegations) or a recall makes the
 *   directory wait backoff_ms before the next, doubling up to
 *   backoff_max_ms while it keeps failing.
 * - Asynchronous: unlink(dir, name) while the delegation is held, not
 *   recalled, valid on this clock (the send time of the last request that
 *   renewed it, GET or an UNLINK in dir, + lease_ms - margin_ms), the
 *   channel up, the caller's credential (uid, gid, groups) the one it was
 *   granted for, and name -> (ino, mode) known from an entry this mount
 *   gave the kernel in dir since the grant (cli_dd_note_entry), not a
 *   directory.  Otherwise the caller unlinks synchronously.  At most
 *   max_pending unlinks wait to be sent; one more waits for room.
 * - Sending: `threads` flushers send queued unlinks in order, several in
 *   flight, each once its hold_ms is over (see "Holding" below).  -ENOENT and -ESTALE (somebody else removed or replaced the
 *   name) are logged at debug level; any other error is logged, counted and
 *   kept on the directory: its next cli_dd_fsyncdir returns it.
 * - Batches (ops.unlink_batch set): the flusher that takes the first job
 *   not in flight takes with it every later queued job not in flight of
 *   the same directory and context (credential and job id), in queue
 *   order, up to PFS_UNLINK_BATCH_MAX, and sends them in one UNLINK_BATCH
 *   (a job alone goes as UNLINK).  Each entry's status counts as that
 *   UNLINK's reply; a request error (transport, -EPROTO, ...) as each
 *   entry's.  -EACCES, -EOPNOTSUPP or -ENOSYS for the request (an MDS
 *   without the opcode; nothing ran) turns batches off for this queue's
 *   life: its jobs go back in place and go singly.  Pending counts and the
 *   ordering waits are the same: a batch only changes how queued jobs are
 *   sent.
 * - Ordering on this mount: cli_dd_wait before an MDS request naming a
 *   directory with pending unlinks or an inode with one; cli_dd_wait_all
 *   before RENAME, RMDIR and LINK; cli_dd_pending_name says a LOOKUP must
 *   answer ENOENT.
 * - Recall (cli_dd_recall, from the notify thread, never blocks on an
 *   RPC): no new asynchronous unlink in the directory, its names forgotten;
 *   a flusher sends DELEG_RETURN once its pending unlinks are answered.
 *   dir 0: every directory (the MDS restarted, the channel went down).
 * - cli_dd_quiesce / cli_dd_destroy send everything and return every
 *   delegation.
 *
 * Negative lookups in a held directory (create storms; ops.list set, the
 * mount option neg_local):
 * - Asking: a create (CREATE, MKNOD, MKDIR, SYMLINK, LINK into dir) or a
 *   LOOKUP the MDS answered ENOENT counts towards the same streak as the
 *   unlinks (cli_dd_touch); the same DELEG_GET and back-off.
 * - Complete: right after any grant, the granted thread lists dir with
 *   ops.list (LOOKUP_BULK from "" until eof), at most max_list names (more:
 *   not complete, the delegation stays).  Each name listed, each entry this
 *   mount gives the kernel in dir from the grant on (cli_dd_note_entry,
 *   also during the listing: union) and each name its own successful
 *   mutations make (cli_dd_mutated add=1), minus what its own successful
 *   unlinks, rmdirs and renames remove, is dir's name set.  At most
 *   max_cnames names in all sets; over it the directory stops being
 *   complete.
 * - cli_dd_negative: a LOOKUP of a name not in the set of a complete,
 *   held, valid (as for an asynchronous unlink: not recalled, not expired
 *   on this clock, channel up) directory, by the delegation's credential,
 *   is answered ENOENT without the MDS.  Anything else asks the MDS.
 * - Losing complete: a recall (also dir 0: channel down, MDS restart),
 *   the return, the expiry, quiesce, a failed or too long listing, the
 *   table's cap, and any failed mutation of this mount in dir (its own
 *   state of the name is then unknown), including an asynchronous unlink
 *   the MDS refused otherwise than -ENOENT.
 * - Why it is right: while this mount holds the delegation no other
 *   client changes dir: its request parks at the MDS until DELEG_RETURN,
 *   and the recall that starts the return drops completeness first (under
 *   the mutex, before a flusher can send the RETURN), so no answer given
 *   after the recall relies on the set.  The listing runs after the grant,
 *   so it sees every name other clients made before; every change this
 *   mount makes after goes through the calls above before the kernel hears
 *   of it.  A stale name in the set (listed, then removed) only sends a
 *   LOOKUP to the MDS; a name missing from it would be wrong, so every
 *   doubt drops completeness.
 *
 * Asynchronous create (ops.create and ops.create_slots set; the mount
 * option async_create):
 * - When: create(2) of name in dir by c (cli_dd_create_file) while dir is
 *   held, usable as for an asynchronous unlink and complete (above), and
 *   name is not in its set: the name surely does not exist, so the create
 *   cannot fail for EEXIST, and only this mount can make it meanwhile.
 * - Slots: the inode number and layout come from slots the MDS reserved
 *   for this mount in dir (PFS_OP_MDS_CREATE_SLOTS), fetched
 *   PFS_CREATE_SLOTS_MAX at a time in the creating thread when none is
 *   left, with dir's attributes; the new file's attributes are the MDS's
 *   rules applied here (owner c, group and set-gid from dir).  Slots are
 *   forgotten when the delegation goes (recall, return, expiry, quiesce).
 * - Sending: as an unlink, by the flushers: one CREATE_BATCH of one
 *   directory's queued creates of one context (1 to 32, each naming its
 *   slot), in queue order.  No two jobs of one name are in flight at once
 *   (a create after an unlink of its name, or an unlink after its create,
 *   waits for the one before).  An error is logged, counted, kept for fsyncdir and
 *   drops dir's completeness; the file the kernel was given is then gone.
 * - Holding: a queued create (as a queued unlink) is sent hold_ms after
 *   it was answered, or at once when any caller waits for the queue (an
 *   ordering wait, fsyncdir, room, quiesce) or its directory is being
 *   given back.  If its file was closed meanwhile (cli_dd_created_close) it
 *   goes with PFS_CREATE_CLOSED and no CLOSE is due.  A create storm then
 *   costs the MDS one CREATE_BATCH per 32 files and no CLOSEs; an unlink
 *   storm one UNLINK_BATCH per 32.
 * - Ordering: cli_dd_wait(ino) waits for the file's CREATE (an MDS request
 *   naming it, a capability it needs before its first I/O), cli_dd_wait(dir)
 *   and cli_dd_wait_all as for unlinks; cli_dd_pending_name waits for a
 *   pending CREATE of the name before it answers.
 *
 * Thread-safe: one mutex, never held across an RPC. */
#ifndef CLI_DIRDELEG_H
#define CLI_DIRDELEG_H

#include <stdint.h>

#include "client/mdc.h"

typedef struct cli_dd cli_dd;

typedef struct cli_dd_ops {
	/* UNLINK of name in dir expecting ino, for c; the PADLL stage has
	 * admitted it already (charge).  0 or -errno. */
	int (*unlink)(void *arg, const cli_ctx *c, uint64_t dir, const char *name, uint64_t ino);
	/* UNLINK_BATCH: n (2..PFS_UNLINK_BATCH_MAX) UNLINKs of names[i] in
	 * dir expecting inos[i], for c, charged as unlink's: 0 with status[i]
	 * each one's 0 or -errno, or the request's -errno (nothing known of
	 * the entries; -EACCES, -EOPNOTSUPP, -ENOSYS: the MDS does not know
	 * the opcode and nothing ran).  NULL = single UNLINKs only. */
	int (*unlink_batch)(void *arg, const cli_ctx *c, uint64_t dir, unsigned n,
			    const char *const *names, const uint64_t *inos, int *status);
	/* DELEG_GET of dir for c: 0 with *lease_ms, or -errno. */
	int (*deleg_get)(void *arg, const cli_ctx *c, uint64_t dir, uint32_t *lease_ms);
	/* DELEG_RETURN of dir. */
	int (*deleg_return)(void *arg, const cli_ctx *c, uint64_t dir);
	/* 1 while the notify channel is up; NULL = always. */
	int (*up)(void *arg);
	/* PADLL admission of an UNLINK of job in the application's thread;
	 * NULL = none. */
	void (*charge)(void *arg, const char *job);
	/* A pending unlink was answered (any result): the caller drops what
	 * it may have fetched meanwhile (the statahead); NULL = none. */
	void (*done)(void *arg, uint64_t dir, const char *name);
	/* LOOKUP_BULK of dir for c after name `after` ("" = from the first),
	 * at most max entries into out: 0 with *n, *eof, or -errno.  NULL =
	 * no complete directories (no negative answers, and creates and
	 * negative lookups do not ask for delegations). */
	int (*list)(void *arg, const cli_ctx *c, uint64_t dir, const char *after, uint32_t max,
		    cli_bulkent *out, uint32_t *n, int *eof);
	/* CREATE_SLOTS of dir for c: 0 with n inos/lays and dir's attributes,
	 * or -errno.  NULL (or create_batch NULL) = no asynchronous creates. */
	int (*create_slots)(void *arg, const cli_ctx *c, uint64_t dir, uint32_t n,
			    uint64_t *inos, pfs_layout *lays, pfs_attr *dir_attr);
	/* CREATE_BATCH: n (1..PFS_CREATE_SLOTS_MAX) creates of names[i] in
	 * dir into slots inos[i] with modes[i], for c; closed[i]: the creator
	 * closed it already; charged already (charge_create): 0 with
	 * status[i] each one's 0 or -errno, or the request's -errno (nothing
	 * ran). */
	int (*create_batch)(void *arg, const cli_ctx *c, uint64_t dir, unsigned n,
			    const char *const *names, const uint32_t *modes, const int *closed,
			    const uint64_t *inos, int *status);
	/* PADLL admission of a CREATE of job in the application's thread;
	 * NULL = none. */
	void (*charge_create)(void *arg, const char *job);
	/* Monotonic ms; NULL = pfs_clock_ms (tests inject a clock). */
	uint64_t (*clock)(void *arg);
	void *arg;
} cli_dd_ops;

typedef struct cli_dd_opts {
	unsigned max_pending;    /* unlinks answered and not yet sent (async_unlink_max); 0 = 128 */
	unsigned threads;        /* flushers; 0 = 8 */
	unsigned streak;         /* unlinks in a row that ask for the delegation; 0 = 3 */
	unsigned streak_ms;      /* each within this long of the one before; 0 = 1000 */
	unsigned backoff_ms;     /* first wait after a refusal or recall; 0 = 1000 */
	unsigned backoff_max_ms; /* longest; 0 = 30000 */
	unsigned margin_ms;      /* the delegation ends this much before the MDS's
	                            lease on this clock; 0 = 1000 */
	unsigned max_names;      /* names known in delegated directories; 0 = 4096 */
	unsigned max_dirs;       /* directories followed; 0 = 256 */
	unsigned max_list;       /* names a listing may bring; 0 = 4096 */
	unsigned max_cnames;     /* names in all complete sets; 0 = 4096 + 65536 */
	unsigned list_batch;     /* entries per ops.list; 0 = PFS_LOOKUP_BULK_MAX */
	int nice;                /* the flushers' nice value (0..19; 0 = as the mount) */
	unsigned hold_ms;        /* a queued unlink or create waits this long
	                            before it is sent, unless something waits
	                            for it (0 = none) */
	cli_dd_ops ops;
} cli_dd_opts;

/* 0, -EINVAL (no unlink/deleg_get/deleg_return) or -ENOMEM.  The
 * flusher threads start with the first asynchronous unlink (after
 * mount.pfs daemonized); if none can, unlinks stay synchronous. */
int cli_dd_create(const cli_dd_opts *o, cli_dd **out);
/* Sends every pending unlink, returns every delegation, joins the
 * flushers, frees.  NULL-safe. */
void cli_dd_destroy(cli_dd *q);
/* Sends every pending unlink and returns every delegation; no new
 * asynchronous unlink until the next grant (unmount, before the notify
 * channel closes). */
void cli_dd_quiesce(cli_dd *q);

/* unlink(2) of name in dir by c: 1 = queued (reply success now; the
 * PADLL stage charged c's job), 0 = unlink synchronously, after the
 * name's pending CREATE (waited for here).  May send DELEG_GET; may wait
 * for room. */
int cli_dd_unlink(cli_dd *q, const cli_ctx *c, uint64_t dir, const char *name);
/* create(2) of name in dir by c with mode (S_IFREG | permissions, the
 * umask applied; the access mode does not matter: the file is new and
 * its creator may open it any way): 1 = queued, *attr and
 * *lay are the new file's (reply now; PADLL charged c's job); 0 = create
 * synchronously.  May send CREATE_SLOTS; may wait for room. */
int cli_dd_create_file(cli_dd *q, const cli_ctx *c, uint64_t dir, const char *name,
		       uint32_t mode, pfs_attr *attr, pfs_layout *lay);
/* The last close of ino: 1 when its CREATE is still queued (it now goes
 * with PFS_CREATE_CLOSED: no CLOSE is due), else 0. */
int cli_dd_created_close(cli_dd *q, uint64_t ino);
/* The kernel got the entry name -> (ino, mode) in dir (a LOOKUP answered,
 * from the MDS or the statahead; a create). */
void cli_dd_note_entry(cli_dd *q, uint64_t dir, const char *name, uint64_t ino, uint32_t mode);
/* This mount changed name in dir (made, removed, renamed from or to). */
void cli_dd_forget_name(cli_dd *q, uint64_t dir, const char *name);
/* 1 when name in dir has an unlink pending (a LOOKUP answers ENOENT); a
 * pending create of it is waited for first. */
int cli_dd_pending_name(cli_dd *q, uint64_t dir, const char *name);
/* Wait until no pending unlink or create is in directory ino or of
 * inode ino. */
void cli_dd_wait(cli_dd *q, uint64_t ino);
/* Wait until no unlink is pending. */
void cli_dd_wait_all(cli_dd *q);
/* FSYNCDIR of dir: wait for its pending unlinks, then 0 or the first
 * error one of them got since the last call (cleared). */
int cli_dd_fsyncdir(cli_dd *q, uint64_t dir);
/* The MDS recalls dir's delegation (0: all of them).  Never blocks. */
void cli_dd_recall(cli_dd *q, uint64_t dir);

/* This clock (ms): the send time to give cli_dd_mutated. */
uint64_t cli_dd_now(cli_dd *q);
/* A create or a LOOKUP answered ENOENT by c in dir (after replying):
 * counts towards the streak; may send DELEG_GET and list dir. */
void cli_dd_touch(cli_dd *q, const cli_ctx *c, uint64_t dir);
/* This mount's own mutation of name in dir by c, sent at `sent`
 * (cli_dd_now; 0 = it renews nothing) and answered rc, before the kernel
 * is answered: rc != 0 drops dir's completeness; else name joins (add 1:
 * made, renamed to) or leaves (add 0: unlinked, removed, renamed from)
 * dir's set, and the request renews the delegation held for c. */
void cli_dd_mutated(cli_dd *q, const cli_ctx *c, uint64_t dir, const char *name, int add,
		    uint64_t sent, int rc);
/* 1 when name surely is not in dir for c (reply ENOENT now), else 0. */
int cli_dd_negative(cli_dd *q, const cli_ctx *c, uint64_t dir, const char *name);

typedef struct cli_dd_stats {
	uint64_t async;        /* unlinks answered at once */
	uint64_t sync;         /* unlinks sent synchronously (no usable delegation) */
	uint64_t got;          /* delegations granted (renewals not counted) */
	uint64_t refused;      /* DELEG_GETs that failed */
	uint64_t recalled;     /* recalls received */
	uint64_t returned;     /* DELEG_RETURNs sent */
	uint64_t expired;      /* delegations that ran out on this clock */
	uint64_t gone;         /* unlinks the MDS answered -ENOENT/-ESTALE */
	uint64_t errors;       /* unlinks that failed otherwise */
	uint64_t waits;        /* callers that waited for room or for ordering */
	uint64_t batches;      /* UNLINK_BATCHes sent (not counting a refused one) */
	uint64_t batched;      /* unlinks they carried */
	unsigned batch_max;    /* the largest */
	int batch_off;         /* the MDS refused UNLINK_BATCH: single UNLINKs */
	uint64_t neg_local;    /* LOOKUPs answered ENOENT from a complete directory */
	uint64_t acreate;      /* creates answered at once */
	uint64_t acreate_closed; /* of them, sent after their last close */
	uint64_t slots_got;    /* CREATE_SLOTS answered */
	uint64_t slots_refused; /* CREATE_SLOTS that failed */
	uint64_t create_errors; /* asynchronous creates the MDS refused */
	uint64_t cbatches;     /* CREATE_BATCHes sent (not counting a refused one) */
	uint64_t cbatched;     /* creates they carried */
	uint64_t listed;       /* directories made complete by a listing */
	uint64_t incomplete;   /* listings that failed, were too long or overflowed */
	unsigned pending;      /* unlinks pending now */
	unsigned held;         /* delegations held now */
} cli_dd_stats;
void cli_dd_get_stats(cli_dd *q, cli_dd_stats *st);

#endif
