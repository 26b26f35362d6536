/* statahead.h — mount.pfs's statahead (issue 11 item 3, after Lustre's):
 * when LOOKUPs that the kernel could not answer from its dentry cache walk
 * through one directory, the following entries of that directory are
 * fetched with their attributes in bulk (PFS_OP_MDS_LOOKUP_BULK, name
 * order, mds/dirplus.h) into a bounded per-mount cache, and the next
 * LOOKUPs are answered from it without a round trip.  Fetching keeps one
 * batch ahead of the walk, on a thread of the module, while hits go on.
 *
 * What the cache may answer is decided by its caller (client/fuse_ops.c,
 * see the rules at the top of statahead.c): this module keeps entries,
 * ages, the walk's detection and the invalidations; it answers positive
 * entries only (a name it does not hold is a miss, never "absent").
 *
 * Detection: a LOOKUP the MDS answered positively, that the cache did not
 * hold, is a miss of its directory; `trigger` misses in one directory
 * within window_ms, each after the one before in name order, start a
 * fetch of 32 entries (or `batch`, if smaller) after the last missed
 * name.  A hit less than a fetch's size before the last entry fetched
 * starts the next fetch after it, twice as large up to `batch` (one fetch
 * in flight per directory: the next one starts after the last name of the
 * one before, which is known only when it is answered), so a walk faster
 * than a fetch's round trip still finds a batch ahead of it.  A LOOKUP
 * that misses while a fetch that may cover its name is in flight waits for
 * it (at most wait_ms).  A walk over names the cache fetched recently (a
 * second walk, an unlink walk after a stat walk) fetches nothing again:
 * misses inside the fetched range start nothing, and a fetch whose answer
 * was mostly cached already does not chain (the walk's window keeps its
 * end).  Misses past the window's end while the walk was using it (hits
 * since its last fetch started), or after LOOKUPs overtook the fetch in
 * flight (past its start, not waiting), jump the window to the walk: the
 * next fetch starts there, twice as large.  A few misses behind a window
 * the walk is still using (LOOKUPs of other walkers that left before it
 * covered them, answered late) start nothing.  Otherwise a fetch none of
 * whose entries was used before the walk triggered again, or one that
 * failed (the MDS refused it), makes the directory wait (1 s, doubling up
 * to 32 s) before its next one: random LOOKUPs in a large directory do
 * not keep the MDS reading batches.
 *
 * Invalidation: cli_sa_drop_name / cli_sa_drop_ino at once for this
 * mount's own changes, cli_sa_revoke for the MDS's (metadata leases);
 * a fetch answered before such a drop and delivered after it does not
 * bring the dropped entries back (each fetch notes the drop generation it
 * started under, and the last CLI_SA_RING drops are compared; older than
 * that, its batch is discarded).
 *
 * Memory: at most max_entries entries (the oldest goes first), at most
 * CLI_SA_DIRS directories followed (the least recently used goes with its
 * entries), entries older than max_age_ms are dropped when met.
 *
 * Threads: one mutex; the fetch callback runs without it on the module's
 * thread, started at the first fetch (after mount.pfs daemonized). */
#ifndef CLI_STATAHEAD_H
#define CLI_STATAHEAD_H

#include <stdint.h>

#include "client/mdc.h"
#include "common/msg.h"

typedef struct cli_sa cli_sa;

#define CLI_SA_DIRS 64
#define CLI_SA_RING 4096

/* One entry of a bulk fetch. */
typedef cli_bulkent cli_sa_ent;

/* The entries of dir after name `after` ("" = from the first), at most max
 * into out[]: 0 with *n and *eof (no entry after the last), or -errno. */
typedef int (*cli_sa_fetch_fn)(void *arg, const cli_ctx *c, uint64_t dir, const char *after,
			       uint32_t max, cli_sa_ent *out, uint32_t *n, int *eof);

typedef struct cli_sa_opts {
	unsigned batch;        /* most entries per fetch (statahead=N, <= PFS_LOOKUP_BULK_MAX) */
	unsigned max_entries;  /* entries held (statahead_max); 0 = 8192 */
	unsigned max_age_ms;   /* longest an entry is kept; 0 = 1000 */
	unsigned trigger;      /* misses that start a walk; 0 = 2 */
	unsigned window_ms;    /* within this long of each other; 0 = 1000 */
	unsigned wait_ms;      /* a LOOKUP's wait for a fetch in flight; 0 = 1000 */
	cli_sa_fetch_fn fetch;
	void *arg;
	uint64_t (*clock)(void *arg); /* ms; tests (default pfs_clock_ms) */
	void *clock_arg;
	int no_thread;         /* tests: a fetch runs in the call that starts it */
} cli_sa_opts;

/* 0, -EINVAL (batch 0 or too large, no callback) or -ENOMEM. */
int cli_sa_create(const cli_sa_opts *o, cli_sa **out);
/* Waits for the fetch in flight.  NULL-safe. */
void cli_sa_destroy(cli_sa *sa);

/* A LOOKUP of name in dir: 0 with *a and *age_ms (since the MDS sent it)
 * when the cache holds it; -ENOENT when it does not (ask the MDS).  May
 * wait for a fetch in flight; a hit may start the next fetch (for c). */
int cli_sa_lookup(cli_sa *sa, const cli_ctx *c, uint64_t dir, const char *name, pfs_attr *a,
		  uint64_t *age_ms);
/* The MDS found name in dir for c after cli_sa_lookup missed: counts
 * towards a walk, which may start a fetch (for c). */
void cli_sa_miss(cli_sa *sa, const cli_ctx *c, uint64_t dir, const char *name);

/* This mount changed name in dir (made, removed, renamed from or to). */
void cli_sa_drop_name(cli_sa *sa, uint64_t dir, const char *name);
/* This mount changed ino's attributes (setattr, write, link, a change in
 * the directory ino, ...). */
void cli_sa_drop_ino(cli_sa *sa, uint64_t ino);
/* The MDS revoked ino: its entries and every entry below it (a
 * directory's permissions) go; ino 0: everything (records were lost). */
void cli_sa_revoke(cli_sa *sa, uint64_t ino);

typedef struct cli_sa_stats {
	uint64_t hits, misses, waits, fetches, fetched, fetch_errors, discarded, evicted,
		 expired, dropped;
	uint64_t jumps;    /* the walk passed the fetched window: fetched at the walk */
	uint64_t behind;   /* misses behind a window in use, not taken for a walk */
	uint64_t backoffs; /* a batch unused or a fetch failed: the directory waited */
	unsigned entries;
} cli_sa_stats;
void cli_sa_get_stats(cli_sa *sa, cli_sa_stats *st);

#endif
