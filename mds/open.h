/* open.h — the MDS open table: which client has which inode open, under
 * leases, and the end of open-unlinked files (mds/open.c).
 *
 * Every OPEN and CREATE of a regular file counts one open of (client id,
 * ino); MDS_CLOSE carries how many the client still has, which repairs a
 * count that an MDS restart left too low (a CLOSE lost for good leaves it
 * one too high: the orphan then lives until that client's lease ends,
 * never shorter than an open).  The table installs the namespace's open hook
 * (mds/orphan.h): the last name of an open file leaves an orphan, which is
 * destroyed when its last open goes, by a CLOSE or because the holding
 * client was not heard from (any request) for lease_s seconds (the lock
 * service's lease, mds/locksvc.h; mount.pfs pings while it holds files
 * open).  The table is in memory; the orphan list is in LMDB: after a
 * restart every orphan is held for one lease, during which a client that
 * still has it open claims it again (GETLAYOUT, SETSIZE or CLOSE for it);
 * the rest are destroyed.
 *
 * Races with UNLINK: mds_open_add is called before the open reads the
 * inode, and an inode the hook let go is remembered (the last
 * MDS_OPEN_GONE_MAX of them), so an open that loses the race gets -ENOENT
 * rather than a file whose objects are going. */
#ifndef MDS_OPEN_H
#define MDS_OPEN_H

#include <stdint.h>

#include "mds/ns.h"

typedef struct mds_open mds_open;

#define MDS_OPEN_GONE_MAX 4096

/* lease_s 0 = 30.  Installs the hook on ns, loads the orphan list, starts
 * the reaper thread unless no_thread (tests drive mds_open_reap). */
int mds_open_create(mds_ns *ns, unsigned lease_s, int no_thread, mds_open **out);
/* Removes the hook, stops the reaper, frees o.  NULL-safe. */
void mds_open_destroy(mds_open *o);
/* One more open of ino by client: 0, or -ENOENT when ino was just destroyed. */
int mds_open_add(mds_open *o, uint64_t client, uint64_t ino);
/* The client closed ino and still has left opens of it: the count becomes
 * max(count - 1, left), since an OPEN the client sent after counting left
 * may have arrived first.  At the last open
 * of an orphan anywhere, the orphan is destroyed. */
void mds_open_close(mds_open *o, uint64_t client, uint64_t ino, uint32_t left);
/* Size recovery (issue 8): client's open of ino (counted by mds_open_add)
 * is for writing: set the inode's "size may be stale" flag
 * (PFS_ATTR_SIZE_STALE), which readers see and then glimpse the size from
 * the objects.  It is cleared when the last writer closes (after its
 * SETSIZE), or at a SETSIZE when no writer is open (mds_open_size_pushed:
 * a reader's glimpse after the writer's lease expired).  0 or -errno. */
int mds_open_writer(mds_open *o, uint64_t client, uint64_t ino);
void mds_open_size_pushed(mds_open *o, uint64_t ino);
/* Take back one mds_open_add (the OPEN failed or was no regular file). */
void mds_open_undo(mds_open *o, uint64_t client, uint64_t ino);
/* 1 if client has ino open (claiming a restored orphan: see the top). */
int mds_open_held(mds_open *o, uint64_t client, uint64_t ino);
/* A request from client: renew its lease. */
void mds_open_seen(mds_open *o, uint64_t client);
/* Expire the leases older than now_ms (mds_open_now_ms's clock) minus the
 * lease and the restart hold, destroying what that orphans.  The reaper
 * calls it; tests call it with a time of their own. */
void mds_open_reap(mds_open *o, int64_t now_ms);
int64_t mds_open_now_ms(void);
/* Opens and clients in the table, orphans held since the start. */
void mds_open_counts(mds_open *o, unsigned *opens, unsigned *clients, unsigned *restored);

#endif
