/* slots.h — the MDS's count of the create slots each client holds
 * (asynchronous create, issue 11): the cap on them.
 *
 * A mount that holds a directory's delegation (mds/deleg.h) reserves inode
 * numbers and layouts in advance (PFS_OP_MDS_CREATE_SLOTS), answers
 * create(2) in that directory from them and sends the creates later in
 * CREATE_BATCHes, each entry naming its slot's inode number.  The slots
 * themselves (owner, directory, layout, expiry) are records in the
 * namespace's database (mds_ns_create_slots, mds_ns_create_slot): they
 * survive a restart of the MDS, and each create takes its record in its
 * own transaction.  This table only follows which slots each client holds in
 * memory, so that one client cannot reserve without bound: at most
 * per_client at once, each counted until it is taken or ttl_ms passed.
 * After a restart it starts empty (the records stay good).  Thread-safe
 * (one mutex, a leaf: never held across anything else). */
#ifndef MDS_SLOTS_H
#define MDS_SLOTS_H

#include <stdint.h>

#include "common/proto.h"

typedef struct mds_slots mds_slots;

/* The default cap per client: a mount's queue of answered creates (128
 * by default) plus what it fetched, with room to spare. */
#define MDS_SLOTS_PER_CLIENT (32 * PFS_CREATE_SLOTS_MAX)

/* per_client: most slots one client holds (0 = MDS_SLOTS_PER_CLIENT);
 * ttl_ms: life of an unused slot (0 = PFS_CREATE_SLOT_TTL_S).  NULL on
 * ENOMEM. */
mds_slots *mds_slots_new(unsigned per_client, uint64_t ttl_ms);
void mds_slots_free(mds_slots *t);
/* How many more slots client may reserve now (expired ones dropped). */
unsigned mds_slots_room(mds_slots *t, uint64_t client, uint64_t now_ms);
/* Count slot ino of client in dir: 0, -EAGAIN (client at its cap),
 * -EEXIST (ino counted already), -EINVAL (ino 0) or -ENOMEM. */
int mds_slots_put(mds_slots *t, uint64_t client, uint64_t dir, uint64_t ino,
		  uint64_t now_ms);
/* Slot ino was taken by a CREATE of client in dir: 0 (no longer
 * counted), or -ESTALE (unknown, expired, another client's or directory's:
 * nothing changes). */
int mds_slots_take(mds_slots *t, uint64_t client, uint64_t dir, uint64_t ino,
		   uint64_t now_ms);
/* Drop the slots past their life; returns how many went. */
unsigned mds_slots_expire(mds_slots *t, uint64_t now_ms);
/* Slots held now (all clients). */
unsigned mds_slots_count(mds_slots *t);

#endif
