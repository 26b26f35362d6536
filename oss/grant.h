/* grant.h — write grants of one OST: space promised to clients in advance
 * (Lustre's grants), so that data a client caches (client/wcache.h) never
 * meets ENOSPC when it is written back.
 *
 * Per client (the frame's client_id) the OST keeps the bytes it granted;
 * their sum never exceeds what the OST had free, less a reserve, when each
 * grant was given.  Units are grant bytes: every WRITE costs
 * PFS_GRANT_COST(len) of them (its length rounded up to pages, plus one
 * page for a misaligned start), on the client and here alike.
 *
 * - PFS_OP_OSS_GRANT (want, giveback): the client gives back giveback bytes,
 *   then gets up to want more, within free - reserve - (all grants).
 * - Every WRITE from a client consumes its grant first (saturating at 0):
 *   the client mirrors this for every WRITE it sends, so both sides agree
 *   (the client may only under-estimate, see client/wcache.h).  The part of
 *   a write its grant does not cover may only use space nobody was
 *   granted: free - uncovered >= the others' grants, else -ENOSPC.
 * - A client not heard from (GRANT or WRITE) for the timeout loses its
 *   grant (oss_grant_expire): a mount that died gives its space back.
 *
 * Pure accounting (free space comes from the caller); thread-safe, one
 * mutex. */
#ifndef OSS_GRANT_H
#define OSS_GRANT_H

#include <stdint.h>

#define OSS_GRANT_TIMEOUT_MS_DEFAULT (300u * 1000u)

typedef struct oss_grant oss_grant;

/* Free space of the OST now (bytes), for the uncovered part of a write. */
typedef int (*oss_grant_free_fn)(void *arg, uint64_t *free_bytes);

int oss_grant_create(oss_grant **out);
void oss_grant_destroy(oss_grant *g);

/* The reserve kept out of grants on an OST of total bytes. */
uint64_t oss_grant_reserve(uint64_t total);

/* A GRANT request from client at now_ms on an OST of total bytes with
 * free_bytes free: take back giveback, then add up to want.  Returns the
 * client's grant now (*out) and 0, or -ENOMEM. */
int oss_grant_request(oss_grant *g, uint64_t client, uint64_t want, uint64_t giveback,
		      uint64_t total, uint64_t free_bytes, uint64_t now_ms, uint64_t *out);

/* A WRITE of len bytes from client at now_ms: consumes its grant; the part
 * not covered is checked against free space (free_fn, asked only when
 * grants exist).  0, or -ENOSPC (nothing consumed then), or free_fn's
 * error. */
int oss_grant_write(oss_grant *g, uint64_t client, uint64_t len, uint64_t now_ms,
		    oss_grant_free_fn free_fn, void *arg);
/* The same for a request that costs cost grant bytes (a WRITEV: the sum
 * of PFS_GRANT_COST of its extents, as the client counts it). */
int oss_grant_consume(oss_grant *g, uint64_t client, uint64_t cost, uint64_t now_ms,
		      oss_grant_free_fn free_fn, void *arg);

/* Take back the grants of clients silent since now_ms - timeout_ms;
 * returns the bytes taken back. */
uint64_t oss_grant_expire(oss_grant *g, uint64_t now_ms, uint64_t timeout_ms);

/* The grant of client, and of all clients. */
uint64_t oss_grant_of(oss_grant *g, uint64_t client);
uint64_t oss_grant_total(oss_grant *g);

#endif
