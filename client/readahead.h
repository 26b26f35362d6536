/* readahead.h — mount.pfs's stream readahead (issue 11 item 2, after
 * Lustre's client readahead): per open file, a sequential stream is
 * detected from the READs the kernel sends, and whole-stripe prefetches
 * are kept in flight ahead of it, so several stripes (several OSSes) are
 * read at once while the kernel's own readahead asks for them.  A READ
 * that lies in prefetched data is answered from memory without a round
 * trip.
 *
 * Stream: a READ is "in the stream" when it starts at most one window
 * behind the furthest byte the stream has read and at most one window
 * past what it has read or prefetched (the kernel's readahead READs run on
 * several FUSE workers and arrive out of order).  From the second READ in
 * the stream on, prefetching runs: the window starts at two units (a unit
 * is the file's stripe size, at most 4 MiB) and doubles with every READ
 * that reaches a new unit, up to window_bytes; the units between the
 * furthest byte read and that plus the window are fetched, each one
 * fetch (one cli_osc read: its pieces go to their OSSes under the RCC
 * credits, with the opener's job id and capabilities, see fuse_ops.c).
 * A READ outside the stream starts a new one: the window closes and the
 * prefetched data that does not cover it is dropped (random reads never
 * prefetch).
 *
 * Memory: every prefetched unit is reserved against total_bytes (per
 * mount) before it is fetched; a unit that does not fit is not fetched.
 * A unit is freed once each of its bytes was served (the kernel's page
 * cache has them then), when the stream moves more than a window past it,
 * when the stream restarts elsewhere, and at close.
 *
 * Coherence: the caller passes a generation with every READ (fuse_ops.c
 * bumps it per inode after each write of this mount reached the OSSes,
 * after truncates and on the MDS's invalidations); a prefetch remembers
 * the generation it was issued under and is dropped, never served, once a
 * READ comes with another.  Bytes in mount.pfs's write-back cache are laid
 * over by the caller, as over bytes read from the OSSes.
 *
 * Pipes (fetch_pipe set): units are CLI_RA_PIPE_UNIT when the stripe
 * size is a multiple of it, and a unit of at most CLI_RA_PIPE_UNIT bytes is
 * fetched into a pipe rather than memory: the OSS's reply is spliced from
 * the socket into it (page references, no copy), and a READ that starts at
 * the front of what the pipe holds gets the pipe itself (cli_ra_read_pipe):
 * the caller splices the bytes on to /dev/fuse, where the kernel copies
 * them into the page cache - one copy of each byte in mount.pfs instead of
 * two (socket -> unit, unit -> /dev/fuse).  The kernel's readahead READs
 * are whole units in order, so that is the common case; a READ elsewhere in
 * a piped unit (out of order, across units, or with cached writes to lay
 * over) first reads what is left of the pipe into memory and is served
 * from there; bytes already taken from a pipe are gone (a READ of them
 * again misses and reads the OSSes).  A READ holds a piped unit from
 * cli_ra_read_pipe to cli_ra_put_pipe; other READs of that unit wait.
 * Pipes are kept for reuse (empty, up to 64); when a pipe cannot be had
 * (descriptors, fs.pipe-max-size) or the fetch says so (-EXDEV), the unit
 * is fetched into memory as before.
 *
 * Threads: fetches run on `threads` threads of the mount (started at the
 * first fetch, i.e. after the daemon's fork).  A READ whose range is being
 * fetched waits for that fetch rather than reading the same bytes twice.
 * One mutex per mount; the fetch callback runs without it. */
#ifndef CLI_READAHEAD_H
#define CLI_READAHEAD_H

#include <stddef.h>
#include <stdint.h>

typedef struct cli_ra cli_ra;
typedef struct cli_ra_stream cli_ra_stream;
typedef struct cli_ra_buf cli_ra_ref;

/* Read len bytes at off of the file owner stands for into buf (len lies
 * below the file size the stream knew): 0 and *got = bytes valid, or
 * -errno. */
typedef int (*cli_ra_fetch_fn)(void *arg, void *owner, uint64_t off, size_t len, void *buf,
			       size_t *got);
/* The same into the empty pipe (pipe_r, pipe_w) that holds pipe_cap bytes:
 * 0 and *got = bytes now in the pipe; -EXDEV: nothing was done (the unit is
 * then fetched with cli_ra_fetch_fn); other -errno: failed, the pipe
 * emptied. */
typedef int (*cli_ra_fetch_pipe_fn)(void *arg, void *owner, uint64_t off, size_t len,
				    int pipe_r, int pipe_w, size_t pipe_cap, size_t *got);

#define CLI_RA_UNIT_MAX (4u << 20)
/* Units of at most this size go into pipes of CLI_RA_PIPE_BYTES (an
 * unaligned 1 MiB spans 257 pages, and a pipe slot holds at most a page of
 * a socket's fragments: 512 slots). */
#define CLI_RA_PIPE_UNIT (1u << 20)
#define CLI_RA_PIPE_BYTES (2u << 20)

typedef struct cli_ra_opts {
	uint64_t window_bytes; /* most prefetched ahead per stream (ra_window_mb) */
	uint64_t total_bytes;  /* most prefetched per mount (ra_total_mb); 0 = off */
	unsigned threads;      /* fetch threads; 0 = 16 */
	cli_ra_fetch_fn fetch;
	cli_ra_fetch_pipe_fn fetch_pipe; /* NULL: units in memory only */
	void *arg;
} cli_ra_opts;

/* 0, -EINVAL (no callback, zero window or total) or -ENOMEM. */
int cli_ra_create(const cli_ra_opts *o, cli_ra **out);
/* Every stream must be closed. */
void cli_ra_destroy(cli_ra *ra);

/* A stream for one open file; owner is given to the fetch callback and
 * must stay valid until cli_ra_close.  unit = the file's stripe size (cut
 * to CLI_RA_UNIT_MAX, 1 MiB when 0).  NULL when ra is NULL or out of
 * memory (the file then reads without readahead). */
cli_ra_stream *cli_ra_open(cli_ra *ra, void *owner, uint64_t unit);
/* Drops the stream's data, cancels its queued fetches and waits for those
 * running.  NULL-safe. */
void cli_ra_close(cli_ra_stream *s);

/* A READ of [off, off+len) (len > 0, already clipped to the file size
 * fsize) under generation gen: notes it in the stream, starts the
 * prefetches it calls for, and serves it from prefetched data if they
 * cover it.  Returns 1 on a hit: *data points at the len bytes, either
 * inside a prefetched unit (*ref is set: give it back with cli_ra_put
 * after use) or, when the range spans units, in buf (copied; *ref NULL).
 * Returns 0 on a miss (the caller reads the OSSes). */
int cli_ra_read(cli_ra_stream *s, uint64_t gen, uint64_t fsize, uint64_t off, size_t len,
		void *buf, const void **data, cli_ra_ref **ref);
/* NULL-safe. */
void cli_ra_put(cli_ra_ref *ref);

/* cli_ra_read where a hit may also be a pipe: when *pipe_fd >= 0 the len
 * bytes are the first len bytes in the pipe *pipe_fd (*data NULL); the
 * caller takes exactly those out of it (splice to /dev/fuse), then gives
 * *ref back with cli_ra_put_pipe (ok = 0 when it could not be sure it took
 * exactly them: the unit is dropped).  Else as cli_ra_read (give *ref back
 * with cli_ra_put). */
int cli_ra_read_pipe(cli_ra_stream *s, uint64_t gen, uint64_t fsize, uint64_t off, size_t len,
		     void *buf, const void **data, int *pipe_fd, cli_ra_ref **ref);
void cli_ra_put_pipe(cli_ra_ref *ref, int ok);

typedef struct cli_ra_stats {
	uint64_t hits;          /* READs served from prefetched data */
	uint64_t misses;        /* READs that went to the OSSes */
	uint64_t ready;         /* units a READ found fetched */
	uint64_t waits;         /* units a READ waited for (being fetched) */
	uint64_t fetched_here;  /* units a READ fetched itself (still queued) */
	uint64_t fetches;       /* prefetches completed */
	uint64_t fetch_errors;
	uint64_t fetched_bytes;
	uint64_t unused_bytes;  /* fetched bytes freed without being served */
	uint64_t stale_drops;   /* units dropped for a newer generation */
	uint64_t no_room;       /* prefetches not made: total_bytes reached */
	uint64_t piped;         /* units fetched into pipes */
	uint64_t pipe_hits;     /* READs answered with a pipe */
	uint64_t materialized;  /* piped units read into memory for a READ */
	uint64_t used_bytes;    /* reserved now */
	uint64_t peak_bytes;    /* most ever reserved */
} cli_ra_stats;
void cli_ra_stats_get(cli_ra *ra, cli_ra_stats *st);

#endif
