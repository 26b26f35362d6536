/* store.h — one OST: a directory on a local disk holding one file per object.
 *
 * Layout of an OST directory DIR:
 *   DIR/ost.uuid            uuid written when the OST is first formatted; the
 *                           MDS keys its OST index on it, so it must survive
 *                           restarts (written via tmp + fsync + rename).
 *   DIR/O/<xx>/<id>         object <id> (lower-case hex, no leading zeros),
 *                           xx = id % 256 as two hex digits, so no directory
 *                           grows past 1/256 of the objects.
 *   DIR/destroyed           the ids destroyed so far (oss/destroyed.h).
 *
 * Semantics (what the client relies on): a missing object reads as empty (a
 * short read of 0 bytes) and stats as size 0; holes read as zeros; reads
 * past the end are short and the client zero-fills.  Writes create the
 * object.  Destroying a missing object is success.  Ids are never reused
 * (the MDS's promise), so a destroyed id stays destroyed: read, write,
 * truncate, punch and sync of it return -ESTALE and create nothing (a
 * client whose layout is stale, e.g. evicted while it had the file open,
 * gets an error, not zeros, and leaves no orphan); stat still reports a
 * destroyed object as missing (0, 0).  Destroy records the id durably
 * before it unlinks the file, so a crash in between leaves an object that
 * is refused all the same (and that lfsck lists and destroys again).
 *
 * Durability: creating an object (the first write, or truncate to a
 * non-zero size) fsyncs its directory DIR/O/<xx> before the call returns,
 * and so does destroy, so an object a reply said exists (or is gone) stays
 * so after a power loss; oss_store_sync then makes its data durable.  A
 * failed directory fsync is returned, and every later call on the object
 * tries again before touching it (the entry is not evicted meanwhile).
 * Opening fsyncs DIR and DIR/O.  oss_store_set_sync_dirs(s, 0)
 * (sync_dirs=off) skips the directory fsyncs of create and destroy.
 *
 * Open file descriptors are kept in a bounded LRU cache (fd_cache entries)
 * so that small I/Os do not pay an open()/close() each.  Entries are
 * refcounted: an I/O holds its entry for the duration of the syscall, and a
 * destroy that races with it unlinks the file and unhashes the entry; the
 * last holder closes the descriptor.  When every cached entry is in use the
 * cache may exceed its bound until they are released.  When the process
 * runs out of descriptors (EMFILE), the store closes its idle cached ones
 * and retries the open once.  Limits: one mutex
 * guards the cache, and open()/unlink() run under it, which keeps object
 * creation, destroy and the object counter exact but serialises cache
 * misses (a hit is a hash lookup).
 *
 * With o_direct set, I/Os whose offset and length are multiples of
 * OSS_STORE_ALIGN go through a second O_DIRECT descriptor (writes from an
 * unaligned buffer through an aligned bounce buffer); anything else, or a
 * file system without O_DIRECT support, uses the buffered descriptor.
 *
 * Thread-safe: any number of threads may call into one store.  Object id 0
 * is a valid object but is never returned by oss_store_list (ids are listed
 * strictly after `after`, which starts at 0), so allocate ids from 1. */
#ifndef OSS_STORE_H
#define OSS_STORE_H

#include <stddef.h>
#include <stdint.h>

#define OSS_STORE_UUID_LEN 36 /* "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" */
#define OSS_STORE_ALIGN 4096u
#define OSS_STORE_FD_CACHE_DEFAULT 1024u

typedef struct oss_store oss_store;

typedef struct oss_store_opts {
	unsigned fd_cache; /* open descriptors kept; 0 = OSS_STORE_FD_CACHE_DEFAULT */
	int o_direct;      /* use O_DIRECT for aligned I/O */
	uint64_t write_behind; /* start an object's writeback after this many
				* bytes written to it (0 = leave it to the kernel) */
} oss_store_opts;

/* Open (and on first use format) the OST at dir, creating dir if missing.
 * opts may be NULL for defaults.  On error fills err (if errlen) with a
 * readable message and returns a negative errno. */
int oss_store_open(const char *dir, const oss_store_opts *opts, oss_store **out,
		   char *err, size_t errlen);
/* Close every cached descriptor and free the store.  No call may be in
 * progress.  NULL is a no-op. */
void oss_store_close(oss_store *s);
/* The OST's uuid (NUL-terminated, OSS_STORE_UUID_LEN chars); lives as long as s. */
const char *oss_store_uuid(const oss_store *s);
/* The directory the store was opened on; lives as long as s. */
const char *oss_store_dir(const oss_store *s);
/* Directory fsyncs on object create/destroy: on (1, the default) or off.
 * Call before any I/O. */
void oss_store_set_sync_dirs(oss_store *s, int on);
/* Replace the directory fsync of create/destroy (NULL = fsync(2)); for
 * tests: count the calls, make them fail (return 0 or -errno).  Call
 * before any I/O. */
void oss_store_set_dir_fsync(oss_store *s, int (*fn)(int dirfd, void *arg), void *arg);

/* Read up to len bytes at off into buf; *got receives the count (less than
 * len at the object's end, 0 for a missing object).  0 or -errno. */
int oss_store_read(oss_store *s, uint64_t obj, uint64_t off, void *buf, size_t len,
		   size_t *got);
/* The same, but the bytes go into the pipe pipe_wfd with splice(2) (page
 * references, no copy through user space); the pipe must have room for
 * len bytes.  -EOPNOTSUPP when the store does O_DIRECT (its reads bypass
 * the page cache) and -EAGAIN when the pipe filled before len bytes or
 * the object's end: nothing usable was read, and the caller drains the
 * pipe and reads with oss_store_read.  Other errors as oss_store_read. */
int oss_store_splice_read(oss_store *s, uint64_t obj, uint64_t off, int pipe_wfd, size_t len,
			  size_t *got);
/* Write len bytes at off, creating the object.  0 or -errno (-ENOSPC, -EFBIG...);
 * on success all len bytes are written. */
int oss_store_write(oss_store *s, uint64_t obj, uint64_t off, const void *buf, size_t len);
/* The same with the len bytes waiting in the pipe pipe_rfd (a WRITE's
 * data spliced there from the client's socket): they go into the object
 * with splice(2), so the only copy is the kernel's into the page cache.
 * -EOPNOTSUPP when the store does O_DIRECT (nothing read from the pipe),
 * -EIO when the pipe holds fewer than len bytes; on an error the pipe may
 * hold the rest.  Other errors as oss_store_write. */
int oss_store_splice_write(oss_store *s, uint64_t obj, uint64_t off, int pipe_rfd, size_t len);
/* Write-behind kicks so far (opts.write_behind): each started the
 * writeback of one object's dirty pages without waiting for it. */
uint64_t oss_store_write_behind_kicks(oss_store *s);
/* 1 when the store does O_DIRECT (o_direct set): no spliced writes. */
int oss_store_direct(const oss_store *s);
/* Set the object's size (creates it if size > 0; a missing object truncated
 * to 0 stays missing). */
int oss_store_truncate(oss_store *s, uint64_t obj, uint64_t size);
/* Deallocate [off, off+len) keeping the size; the range then reads as zeros.
 * Missing object or len 0: success. */
int oss_store_punch(oss_store *s, uint64_t obj, uint64_t off, uint64_t len);
/* Record the id as destroyed (fdatasync'ed unless sync_dirs is off), then
 * remove the object and fsync its directory; missing is success. */
int oss_store_destroy(oss_store *s, uint64_t obj);
/* The same for n objects at once: their records in one write and at most
 * one fdatasync (only when one of them exists), one fsync per directory
 * unlinked in.  The first error is returned (the caller retries the whole
 * batch: destroying is idempotent). */
int oss_store_destroy_many(oss_store *s, const uint64_t *objs, size_t n);
/* Size in bytes and allocated 512-byte blocks; a missing object is 0, 0. */
int oss_store_stat(oss_store *s, uint64_t obj, uint64_t *size, uint64_t *blocks);
/* fsync the object (missing: success). */
int oss_store_sync(oss_store *s, uint64_t obj);
/* Capacity of the file system holding the OST and the number of objects. */
int oss_store_statfs(oss_store *s, uint64_t *total_bytes, uint64_t *free_bytes,
		     uint64_t *objects);
/* List object ids > after in increasing order: at most max into ids[],
 * count in *n, *eof = 1 if no more ids follow.  Cost: a scan of the whole
 * OST per page (it serves leak checks, not the data path). */
int oss_store_list(oss_store *s, uint64_t after, uint64_t *ids, size_t max, size_t *n,
		   int *eof);

#endif
