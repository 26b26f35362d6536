/* jobstat.h — per-job request statistics of one OST (the "job stats
 * tracker" AdapTBF reads, sec. III-B, and what the MDS collects).
 *
 * For every job seen on the OST: RPCs served by opcode class (read, write,
 * other) and bytes served (read, write), RPCs and bytes that arrived (the
 * demand, counted at enqueue whether or not they were served yet), requests
 * refused busy (queue caps), the queueing delay of served requests, and the
 * part of it spent by requests a rate rule governed (throttled time); plus
 * the queue now (requests and bytes).
 *
 * Counters are kept on three clocks that never reset each other:
 *   OSS_CLOCK_TOTAL  since the OST started (JOBSTATS, metrics);
 *   OSS_CLOCK_MDS    the MDS control loop's period (PFS_QOS_STATS_PERIOD);
 *   OSS_CLOCK_LOOP   the local loop's period (AdapTBF, every 100 ms).
 * Closing a period of one clock zeroes only that clock's counters and
 * records the queue depth at the start of the new period ("backlog").
 *
 * Bounded: at most `max` jobs; a job with nothing queued and no activity
 * for a given time is dropped by oss_jobstats_prune (its totals go with
 * it).  When the table is full, a new job takes the place of the least
 * recently active job with nothing queued among a sample of about 32
 * entries (an approximate LRU, so a flood of random job ids recycles its
 * own entries); only when every sampled job has requests queued is the new
 * one refused.  Costs: get O(1) (hash; O(32) when full); snapshot and
 * prune O(jobs).
 *
 * Not thread-safe: the scheduler's lock guards the table and its entries. */
#ifndef OSS_JOBSTAT_H
#define OSS_JOBSTAT_H

#include <stddef.h>
#include <stdint.h>

#include "common/proto.h"

#define OSS_OPC_READ 0
#define OSS_OPC_WRITE 1
#define OSS_OPC_OTHER 2

#define OSS_CLOCK_TOTAL 0
#define OSS_CLOCK_MDS 1
#define OSS_CLOCK_LOOP 2
#define OSS_CLOCKS 3

typedef struct oss_counters {
	uint64_t rpcs[3];        /* served, by OSS_OPC_* */
	uint64_t bytes[2];       /* served bytes: read, write (requested length) */
	uint64_t arrived_rpcs, arrived_bytes;
	uint64_t busy_rpcs;      /* refused -EBUSY */
	uint64_t wait_us;        /* sum of queueing delays of served requests */
	uint64_t throttled_us;   /* the part of wait_us of rate-limited requests */
} oss_counters;

/* One job as a snapshot reports it. */
typedef struct oss_job_snap {
	char job[PFS_JOBID_MAX + 1];
	oss_counters c;          /* on the clock asked for */
	uint32_t queued;         /* now */
	uint64_t queued_bytes;   /* now */
	uint32_t backlog;        /* queued when that clock's period began (TOTAL: 0) */
} oss_job_snap;

typedef struct oss_jobstats oss_jobstats;
typedef struct oss_jobstat oss_jobstat; /* one job's entry */

/* The opcode class of a PFS_OP_OSS_* opcode. */
int oss_opc(uint16_t opcode);

/* max = most jobs kept.  0 or -ENOMEM. */
int oss_jobstats_create(size_t max, oss_jobstats **out);
void oss_jobstats_destroy(oss_jobstats *t);
size_t oss_jobstats_count(const oss_jobstats *t);

/* The entry of job id, created if missing (evicting an idle job when the
 * table is full, see above).  NULL when no room can be made (or out of
 * memory).  Entries with requests queued are never dropped. */
oss_jobstat *oss_jobstats_get(oss_jobstats *t, const char *id);
/* Jobs dropped to make room so far. */
uint64_t oss_jobstats_evicted(const oss_jobstats *t);

/* Accounting; now is monotonic microseconds. */
void oss_jobstat_arrive(oss_jobstat *j, uint64_t bytes, uint64_t now);
void oss_jobstat_busy(oss_jobstat *j, uint64_t now);
/* A queued request left the queue for an I/O thread after waiting wait_us. */
void oss_jobstat_serve(oss_jobstat *j, int opc, uint64_t bytes, uint64_t wait_us,
		       int limited, uint64_t now);
uint32_t oss_jobstat_queued(const oss_jobstat *j);
uint64_t oss_jobstat_queued_bytes(const oss_jobstat *j);

/* Snapshot every job on `clock` into a malloc'd array (caller frees; NULL
 * when *n = 0), sorted by job id; with reset, the clock's period is then
 * closed (TOTAL cannot be reset).  0, -EINVAL or -ENOMEM (nothing reset). */
int oss_jobstats_snapshot(oss_jobstats *t, int clock, int reset, oss_job_snap **out,
			  size_t *n);
/* Drop jobs with nothing queued and no arrival or service since
 * now - idle_us.  Returns how many were dropped. */
size_t oss_jobstats_prune(oss_jobstats *t, uint64_t idle_us, uint64_t now);

#endif
