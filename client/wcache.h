/* wcache.h — mount.pfs's own write-back cache (issue 11 item 1, as
 * Lustre's client cache): a write(2) returns once its bytes are copied
 * here; flusher threads write them to the OSSes later.  The kernel stays
 * write-through (FUSE without writeback_cache), so sizes stay the
 * servers'; fuse_ops.c counts cached bytes in the size it reports.
 *
 * Dirty data: per open file (cli_wc_file, one per inode), in chunks of
 * the file cut at multiples of the stripe size (halved until at most one
 * RPC, PFS_MAX_IO): a chunk lies in one stripe object, and a chunk's
 * dirty extents (sorted, disjoint, neighbours of the same writer merged)
 * are flushed with one writev call per writer (the same callback groups
 * owners that may share a request: fuse_ops.c, the same job, user and
 * rights), i.e. one WRITEV RPC for up to PFS_WRITEV_MAX extents (client/
 * osc.h) instead of one WRITE each: random 4 KiB writes left a chunk with
 * dozens of small extents.  A chunk is flushed when it is full,
 * when its oldest byte is age_ms old, when the cache is half full or a
 * writer waits for room, and at once for cli_wc_flush.  Flushers run
 * `threads` chunks at a time, each through the write callback (fuse_ops.c:
 * cli_osc with the writer's tag and capabilities, so its RCC credits and
 * per-OSS slots limit what is in flight, and QoS charges the writer's
 * job).  While a chunk is being written, newer writes to it wait in the
 * chunk for the next flush, so bytes reach the OST in write order.
 *
 * Limits: dirty bytes in total, per file, per OST and per job (jobs by
 * name; while several jobs have cached bytes, each at most an equal part
 * of the per-OST limit); a writer that would exceed one waits for flushes
 * (throttled), unless the write alone is larger than the limit (then it
 * is written through).  Flushers are shared out the same way: while
 * several jobs have cached bytes, a job's chunks take at most an equal
 * part of the threads, so a throttled job's flushes (waiting at its OSS
 * for tokens) cannot hold every flusher.
 *
 * Grants (oss/grant.h): a write is cached only while the client holds
 * grant for it on its OST: G (granted by the OST, as the client knows it)
 * - U (grant charged to cached bytes) - S (cost of uncached writes in
 * flight) >= PFS_GRANT_COST(len).  Short of it, the cache asks the OST
 * (the grant callback: PFS_OP_OSS_GRANT) for more; refused, the write goes
 * through synchronously, so ENOSPC reaches write(2) as without the cache.
 * Every WRITE the client sends consumes grant on the OST, so the cache
 * mirrors that: a flushed extent takes PFS_GRANT_COST of it from G, and an
 * uncached write must be bracketed by cli_wc_sync_begin/end (which first
 * waits until the cached bytes of that OST stay covered afterwards).  A
 * GRANT reply is corrected for the WRITEs that finished while it was on
 * the wire, so the client can only under-estimate G.  Flushers refresh
 * every held grant each keepalive_ms (the OSS takes back grants of clients
 * silent for OSS_GRANT_TIMEOUT_MS_DEFAULT); cli_wc_destroy gives them back.
 *
 * Errors: a failed flush drops its bytes (they cannot be kept for ever)
 * and is logged; the first error is kept in the file until cli_wc_flush
 * returns it (fuse_ops.c: the next fsync or close of the file).
 *
 * Thread-safe: one mutex for everything; the callbacks run without it. */
#ifndef CLI_WCACHE_H
#define CLI_WCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "client/osc.h"
#include "common/layout.h"

typedef struct cli_wc cli_wc;
typedef struct cli_wc_file cli_wc_file;
typedef struct cli_wc_snap cli_wc_snap;

/* Write len bytes of buf at file offset off, as owner (the pointer given
 * to cli_wc_write) would: 0 or -errno. */
typedef int (*cli_wc_write_fn)(void *arg, void *owner, uint64_t off, size_t len,
			       const void *buf);
/* One dirty extent handed to a cli_wc_writev_fn: cli_osc_writev_caps's
 * extent type (client/osc.h), so a flush hands its table on as it is. */
typedef cli_osc_iov cli_wc_iov;
/* Write the n extents of v (ascending, disjoint, all in one chunk) as
 * owner would, in as few requests as it can: 0 or -errno (for all). */
typedef int (*cli_wc_writev_fn)(void *arg, void *owner, const cli_wc_iov *v, size_t n);
/* May the bytes of owners a and b be written by one request of a (the
 * same job, user and rights)?  1 or 0. */
typedef int (*cli_wc_same_fn)(void *arg, void *a, void *b);
/* PFS_OP_OSS_GRANT on OST ost: give back giveback bytes, ask want more;
 * *granted = the grant the OST holds for this client now.  0 or -errno. */
typedef int (*cli_wc_grant_fn)(void *arg, uint32_t ost, uint64_t want, uint64_t giveback,
			       uint64_t *granted);

typedef struct cli_wc_opts {
	uint64_t total_bytes;  /* dirty bytes of the mount (> 0) */
	uint64_t file_bytes;   /* per file; 0 = total_bytes / 2 */
	uint64_t ost_bytes;    /* per OST; 0 = total_bytes / 2 */
	uint64_t job_bytes;    /* per job; 0 = total_bytes */
	unsigned threads;      /* flushers; 0 = 4 */
	unsigned age_ms;       /* oldest dirty byte flushed after; 0 = 1000 */
	unsigned keepalive_ms; /* grant refresh; 0 = 60000 */
	cli_wc_write_fn write;
	cli_wc_writev_fn writev; /* NULL: write, one call per extent */
	cli_wc_same_fn same;     /* NULL: only extents of one owner go together */
	cli_wc_grant_fn grant; /* NULL: no grants (tests); every write is cacheable */
	void *arg;
} cli_wc_opts;

typedef struct cli_wc_stats {
	uint64_t cached, uncached;     /* writes (calls) */
	uint64_t dirty, peak;          /* dirty bytes now, most ever */
	uint64_t flushed, flush_rpcs;  /* bytes flushed, write/writev calls made */
	uint64_t flush_extents;        /* extents flushed */
	uint64_t flush_errors;
	uint64_t throttled;            /* writers that waited for room */
	uint64_t grant_asks, grant_refused;
	uint64_t granted;              /* G summed over OSTs */
} cli_wc_stats;

/* The flushers start at the first write (after a daemon's fork).  0,
 * -EINVAL or -ENOMEM. */
int cli_wc_create(const cli_wc_opts *opts, cli_wc **out);
/* Flushes everything (errors logged), stops the flushers, gives the
 * grants back.  Every file must be freed first.  NULL is a no-op. */
void cli_wc_destroy(cli_wc *wc);
void cli_wc_stats_get(cli_wc *wc, cli_wc_stats *st);

/* The cache of one file (id: for log lines) with layout l (copied).
 * NULL on ENOMEM or a layout without objects. */
cli_wc_file *cli_wc_file_new(cli_wc *wc, uint64_t id, const pfs_layout *l);
/* Flushes what is left (an error is logged, as nobody can get it any
 * more) and frees f.  No call on f may be in progress.  NULL: no-op. */
void cli_wc_file_free(cli_wc_file *f);

/* Cache a write of [off, off+len) through owner (borrowed until the data
 * is flushed: see cli_wc_flush) for job (copied; NULL = none).  1: cached
 * (may have waited for room); 0: not cached: the caller writes it through
 * itself, between cli_wc_sync_begin (already done by this call) and
 * cli_wc_sync_end; -errno. */
int cli_wc_write(cli_wc_file *f, void *owner, const char *job, uint64_t off, size_t len,
		 const void *buf);
/* Around an uncached write of [off, off+len) (O_DIRECT, O_APPEND, ...):
 * begin writes back the cached bytes it overlaps and waits until the
 * grant it will consume leaves the cached bytes covered; end accounts it
 * (call it whatever the write's outcome). */
void cli_wc_sync_begin(cli_wc_file *f, uint64_t off, size_t len);
void cli_wc_sync_end(cli_wc_file *f, uint64_t off, size_t len);

/* Write back every cached byte of f and wait for it; returns the first
 * flush error since the last call (cleared), or 0. */
int cli_wc_flush(cli_wc_file *f);
/* Write back the cached bytes of [off, off+len) and wait; errors stay
 * for cli_wc_flush. */
void cli_wc_flush_range(cli_wc_file *f, uint64_t off, uint64_t len);
/* The end of f's last cached byte (0: none). */
uint64_t cli_wc_end(cli_wc_file *f);

/* Reads: a copy of the cached bytes of [off, off+len) taken before the
 * read goes to the OSSes, applied to its result after (so bytes flushed in
 * between are not missed).  *full = 1 when they cover the whole range (no
 * need to read).  *out = NULL when nothing is cached there.  0, -ENOMEM. */
int cli_wc_snap_take(cli_wc_file *f, uint64_t off, size_t len, cli_wc_snap **out,
		     int *full);
/* buf holds [off, off+len) of the take. */
void cli_wc_snap_apply(const cli_wc_snap *s, void *buf);
void cli_wc_snap_free(cli_wc_snap *s);

/* Pure helpers, for tests. */
/* The chunk size of a layout: its stripe size halved while above
 * PFS_MAX_IO and even. */
uint64_t cli_wc_chunk_size(const pfs_layout *l);

#endif
