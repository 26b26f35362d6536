/* osc.h — object storage client: striped reads and writes over the OSSes.
 *
 * Maps OST indexes to OSS data addresses with PFS_OP_MDS_OST_LIST (cached;
 * refreshed when an index not in the cache appears) and keeps one
 * pfs_rpc_pool per OSS address.  A read or write is split by the file's
 * layout (pfs_layout_map) into per-object pieces; the pieces are all put on
 * the wire with pfs_rpc_start before any reply is collected with
 * pfs_rpc_finish, so different OSSes serve them concurrently.
 *
 * Deadlock rule: a pending pfs_rpc_start holds one pooled connection until
 * its finish.  A thread that waited for a second connection of a pool while
 * holding one (or for pool B while holding pool A, with another thread doing
 * the reverse) could deadlock once pools are full.  So one I/O runs in waves:
 * in each wave at most one piece per OSS is started, in ascending OSS order
 * (a global lock order), then all of the wave's replies are collected.  The
 * common layouts (one OST per OSS, 1 MiB stripes, 1 MiB FUSE requests) need
 * a single wave; pieces that land on several OSTs of one OSS are serialised,
 * which is the honest cost of the rule.
 *
 * Reads: the range is clipped to the file size; bytes a short object read or
 * a missing object (-ENOENT) does not return are zeros (holes).
 *
 * Thread-safe: any number of threads may call into one cli_osc. */
#ifndef CLI_OSC_H
#define CLI_OSC_H

#include <stddef.h>
#include <stdint.h>

#include "client/mdc.h"
#include "common/layout.h"
#include "common/rpc.h"

typedef struct cli_osc cli_osc;

/* mdc is borrowed (for OST_LIST) and must outlive the osc; opts is copied
 * and used for every OSS pool. */
int cli_osc_create(cli_mdc *mdc, const pfs_rpc_opts *opts, cli_osc **out);
/* No call may be in progress. */
void cli_osc_destroy(cli_osc *o);

/* Read up to len bytes at file offset off of a file of file_size bytes into
 * buf.  *got = bytes valid in buf (len clipped at file_size; 0 at or past
 * EOF).  Returns 0 or the first error of any piece. */
int cli_osc_read(cli_osc *o, const char *job, const pfs_layout *l, uint64_t file_size,
		 uint64_t off, size_t len, void *buf, size_t *got);
/* Write len bytes at off.  Returns 0 when every piece was fully written, else
 * the first error (-EIO for a short write). */
int cli_osc_write(cli_osc *o, const char *job, const pfs_layout *l, uint64_t off, size_t len,
		  const void *buf);
/* Set every object to the size it has in a file of size bytes
 * (pfs_layout_object_size); objects are created or cut as needed. */
/* The same for data waiting in a pipe (a FUSE WRITE received with splice):
 * when [off, off+len) lies in one object, the data goes from the pipe to
 * the OSS's socket with splice, never copied through this process.
 * Returns -EXDEV, with the pipe untouched, when the write spans objects or
 * the OST is unknown (the caller then reads the pipe and uses
 * cli_osc_write); other errors mean the pipe may be partly drained. */
int cli_osc_write_pipe(cli_osc *o, const char *job, const pfs_layout *l, uint64_t off,
		       size_t len, int pipe_fd);
int cli_osc_truncate(cli_osc *o, const char *job, const pfs_layout *l, uint64_t size);
/* PFS_OP_OSS_SYNC on every object (missing objects have nothing to sync). */
int cli_osc_sync(cli_osc *o, const char *job, const pfs_layout *l);

/* Pure helpers, exposed for unit tests. */

/* pfs_layout_map, with every extent also cut to at most max_piece bytes (the
 * largest payload one RPC may carry).  Same return rule as pfs_layout_map. */
size_t cli_osc_plan(const pfs_layout *l, uint64_t off, uint64_t len, uint64_t max_piece,
		    pfs_extent *out, size_t max);
/* How many bytes of [off, off+len) lie below file_size. */
size_t cli_osc_clip(uint64_t off, size_t len, uint64_t file_size);
/* Zero the part of extent e of buf that a reply of got bytes did not fill. */
void cli_osc_zero_tail(void *buf, const pfs_extent *e, size_t got);

/* Counters for tests: pieces sent per wave so far, waves so far. */
void cli_osc_counters(cli_osc *o, uint64_t *pieces, uint64_t *waves, uint64_t *refreshes);

#endif
