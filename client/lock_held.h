/* lock_held.h — the locks this mount holds on the MDS, as the mount sees
 * them: a pure data structure (no I/O, no threads) that client/fuse_locks.c
 * keeps up to date after every grant, unlock and release, so that after an
 * MDS restart it can re-assert each of them with LOCK_RECLAIM (Lustre's
 * lock replay; mds/locksvc.h).
 *
 * A common/lktab.h table, so the same rules as the MDS for one owner's own locks of
 * one kind: a new range replaces what the owner held there (an unlock of a
 * middle range splits a lock), and touching or overlapping locks of the
 * same type are merged.  Locks of different owners or kinds are kept side
 * by side and never checked against each other (the MDS did that).
 *
 * Not thread-safe: the caller serialises calls. */
#ifndef CLI_LOCK_HELD_H
#define CLI_LOCK_HELD_H

#include <stddef.h>
#include <stdint.h>

#include "client/mdc.h"

typedef struct cli_lkheld cli_lkheld;

cli_lkheld *cli_lkheld_new(void);
void cli_lkheld_free(cli_lkheld *h);  /* NULL-safe */
/* A granted lock (type READ/WRITE) or unlock (UNLOCK) of l on ino.  0 or
 * -ENOMEM (then nothing changed). */
int cli_lkheld_apply(cli_lkheld *h, uint64_t ino, const cli_lock *l);
/* Forget every lock of owner on ino whose kind is in kinds (1 << PFS_LK_*). */
void cli_lkheld_release(cli_lkheld *h, uint64_t ino, uint64_t owner, unsigned kinds);
/* Copies of every lock held: *inos and *locks malloc'd arrays of *n entries
 * (NULL when none), the caller frees them.  0 or -ENOMEM. */
int cli_lkheld_list(const cli_lkheld *h, uint64_t **inos, cli_lock **locks, size_t *n);
size_t cli_lkheld_count(const cli_lkheld *h);

#endif
