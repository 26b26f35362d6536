/* jobmap.h — an intrusive hash map keyed by job id, shared by every per-job
 * table of the OSS (scheduler statistics, QoS allocations, AdapTBF state).
 *
 * The caller embeds an oss_jobmap_node as the FIRST member of its entry,
 * fills node.id and inserts it; the map only links nodes, it never
 * allocates or frees them.  Chained buckets, FNV-1a of the id; the bucket
 * count is fixed at init (a power of two), so lookups stay O(1) while the
 * number of entries is within a small multiple of it — the callers bound
 * their tables (OSS_SCHED_JOBS_MAX and friends) for that reason.
 *
 * Iteration: oss_jobmap_next walks every node; removing the node just
 * returned (oss_jobmap_remove) before asking for the next one is allowed.
 *
 * Not thread-safe: the owner's lock guards the map and its nodes. */
#ifndef OSS_JOBMAP_H
#define OSS_JOBMAP_H

#include <stddef.h>

#include "common/proto.h"

typedef struct oss_jobmap_node {
	struct oss_jobmap_node *next;
	char id[PFS_JOBID_MAX + 1]; /* NUL-terminated; set before insert */
} oss_jobmap_node;

typedef struct oss_jobmap {
	oss_jobmap_node **b;
	size_t mask;  /* buckets - 1 */
	size_t n;     /* nodes linked */
} oss_jobmap;

/* An iteration cursor: zero it ({ 0 }) to start. */
typedef struct oss_jobmap_iter {
	int started;
	size_t bucket;          /* next bucket to scan */
	oss_jobmap_node *next;  /* next node to return, taken before the
	                           caller may remove the current one */
} oss_jobmap_iter;

/* buckets is rounded up to a power of two (at least 16).  0 or -ENOMEM. */
int oss_jobmap_init(oss_jobmap *m, size_t buckets);
/* Free the bucket array; nodes still linked are passed to free_node (NULL:
 * left alone). */
void oss_jobmap_fini(oss_jobmap *m, void (*free_node)(oss_jobmap_node *));
oss_jobmap_node *oss_jobmap_find(const oss_jobmap *m, const char *id);
/* Link n (its id must not be in the map). */
void oss_jobmap_insert(oss_jobmap *m, oss_jobmap_node *n);
/* Unlink n (must be linked). */
void oss_jobmap_remove(oss_jobmap *m, oss_jobmap_node *n);
/* Next node, or NULL at the end. */
oss_jobmap_node *oss_jobmap_next(const oss_jobmap *m, oss_jobmap_iter *it);
/* The chain of bucket i modulo the bucket count (follow ->next), for
 * sampling a few entries without walking the map; NULL when empty. */
oss_jobmap_node *oss_jobmap_bucket(const oss_jobmap *m, size_t i);
size_t oss_jobmap_buckets(const oss_jobmap *m);
/* Copy id into n->id (truncated to PFS_JOBID_MAX bytes). */
void oss_jobmap_set_id(oss_jobmap_node *n, const char *id);

#endif
