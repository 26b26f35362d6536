/* destroyed.h — the record of one OST's destroyed object ids (used by
 * oss/store.c), so that a write from a client that still holds a destroyed
 * object's layout is refused (-ESTALE) instead of re-creating the object.
 *
 * Object ids are never reused (the MDS reserves them per OST in durably
 * synced batches), so "destroyed" is forever, and since ids are handed out
 * densely per OST the destroyed ones form few ranges: the set is kept in
 * memory as sorted disjoint ranges [lo, hi], and on disk as an append-only
 * file of 16-byte records (le64 first id, le32 count, le32 check), after a
 * 16-byte header.  Each oss_destroyed_add appends one record and, with
 * sync, fdatasyncs it before returning (so a destroy's reply never precedes
 * its record); oss_destroyed_add_many appends a batch's records in one
 * write and syncs them once.  A torn or damaged record (power loss during an append)
 * fails its check and is skipped.  The file is rewritten compacted (tmp +
 * fsync + rename + directory fsync) at open and whenever it holds more
 * than twice the records the set needs plus 1024, so its size is bounded
 * by the set's: 16 bytes per range, and ranges are at most the OST's live
 * objects plus one per MDS restart (the unused tail of a reserved batch).
 *
 * Thread-safe: oss_destroyed_has may run during an add (it takes a short
 * lock, never one held across disk I/O). */
#ifndef OSS_DESTROYED_H
#define OSS_DESTROYED_H

#include <stddef.h>
#include <stdint.h>

#define OSS_DESTROYED_FILE "destroyed"

typedef struct oss_destroyed oss_destroyed;

/* Load (or start empty) the record NAME in the directory dirfd (which the
 * caller keeps open while d lives).  0 or -errno. */
int oss_destroyed_open(int dirfd, const char *name, oss_destroyed **out);
/* NULL is a no-op. */
void oss_destroyed_close(oss_destroyed *d);
/* 1 if id was destroyed, else 0. */
int oss_destroyed_has(oss_destroyed *d, uint64_t id);
/* Record id as destroyed (already recorded: nothing written); with sync the
 * record is on disk when it returns 0.  On error id is not in the set. */
int oss_destroyed_add(oss_destroyed *d, uint64_t id, int sync);
/* Record n ids (any order, duplicates and known ones allowed) with one
 * write: one record per run of consecutive new ids; with sync one
 * fdatasync for all (a group commit of the batch).  On error no id of the
 * batch is in the set (the file may hold some of them: they load at the
 * next open, which only destroys more). */
int oss_destroyed_add_many(oss_destroyed *d, const uint64_t *ids, size_t n, int sync);
/* Make every record added so far durable (fdatasync); 0 or -errno. */
int oss_destroyed_sync(oss_destroyed *d);
/* Ranges in memory and records in the file (for tests and statistics). */
void oss_destroyed_counts(oss_destroyed *d, size_t *ranges, size_t *records);

#endif
