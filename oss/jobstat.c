/* jobstat.c — per-job statistics of one OST on three clocks (see jobstat.h). */
#include "oss/jobstat.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "oss/jobmap.h"

struct oss_jobstat {
	oss_jobmap_node node;    /* first: the map links entries by it */
	oss_counters c[OSS_CLOCKS];
	uint32_t backlog[OSS_CLOCKS];
	uint32_t queued;
	uint64_t queued_bytes;
	uint64_t last_active_us;
};

struct oss_jobstats {
	oss_jobmap map;
	size_t max;
	size_t cursor;           /* bucket where the next eviction search starts */
	uint64_t evicted;
};

/* Entries an eviction search looks at (at least; whole buckets). */
#define EVICT_SAMPLE 32

int oss_opc(uint16_t opcode)
{
	switch (opcode) {
	case PFS_OP_OSS_READ:
		return OSS_OPC_READ;
	case PFS_OP_OSS_WRITE:
		return OSS_OPC_WRITE;
	default:
		return OSS_OPC_OTHER;
	}
}

int oss_jobstats_create(size_t max, oss_jobstats **out)
{
	oss_jobstats *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	/* Buckets for a typical load (hundreds of jobs), not for max: a
	 * table near max has chains of a few entries, still cheap. */
	if (oss_jobmap_init(&t->map, max < 1024 ? max : 1024)) {
		free(t);
		return -ENOMEM;
	}
	t->max = max;
	*out = t;
	return 0;
}

static void free_entry(oss_jobmap_node *n) { free(n); }

void oss_jobstats_destroy(oss_jobstats *t)
{
	if (!t)
		return;
	oss_jobmap_fini(&t->map, free_entry);
	free(t);
}

size_t oss_jobstats_count(const oss_jobstats *t) { return t->map.n; }

/* The table is full: drop the least recently active job with nothing
 * queued among the entries of a few buckets (EVICT_SAMPLE or more, or all),
 * searching on from where the last search stopped.  An approximate LRU in
 * O(EVICT_SAMPLE), so a flood of new job ids recycles its own entries and
 * never locks a real new job out until the idle prune.  0 or -EBUSY (all
 * sampled jobs have requests queued). */
static int evict_one(oss_jobstats *t)
{
	size_t nb = oss_jobmap_buckets(&t->map), seen = 0, i;
	oss_jobstat *old = NULL;

	for (i = 0; i < nb && seen < EVICT_SAMPLE; i++) {
		oss_jobmap_node *n = oss_jobmap_bucket(&t->map, t->cursor + i);

		for (; n; n = n->next, seen++) {
			oss_jobstat *j = (oss_jobstat *)n;

			if (!j->queued && (!old || j->last_active_us < old->last_active_us))
				old = j;
		}
	}
	t->cursor = (t->cursor + i) % nb;
	if (!old)
		return -EBUSY;
	oss_jobmap_remove(&t->map, &old->node);
	free(old);
	t->evicted++;
	return 0;
}

uint64_t oss_jobstats_evicted(const oss_jobstats *t) { return t->evicted; }

oss_jobstat *oss_jobstats_get(oss_jobstats *t, const char *id)
{
	oss_jobstat *j = (oss_jobstat *)oss_jobmap_find(&t->map, id);

	if (j || (t->map.n >= t->max && evict_one(t)))
		return j;
	j = calloc(1, sizeof(*j));
	if (!j)
		return NULL;
	oss_jobmap_set_id(&j->node, id);
	oss_jobmap_insert(&t->map, &j->node);
	return j;
}

void oss_jobstat_arrive(oss_jobstat *j, uint64_t bytes, uint64_t now)
{
	for (int k = 0; k < OSS_CLOCKS; k++) {
		j->c[k].arrived_rpcs++;
		j->c[k].arrived_bytes += bytes;
	}
	j->queued++;
	j->queued_bytes += bytes;
	j->last_active_us = now;
}

void oss_jobstat_busy(oss_jobstat *j, uint64_t now)
{
	for (int k = 0; k < OSS_CLOCKS; k++)
		j->c[k].busy_rpcs++;
	j->last_active_us = now;
}

void oss_jobstat_serve(oss_jobstat *j, int opc, uint64_t bytes, uint64_t wait_us,
		       int limited, uint64_t now)
{
	assert(j->queued > 0 && j->queued_bytes >= bytes);
	for (int k = 0; k < OSS_CLOCKS; k++) {
		oss_counters *c = &j->c[k];

		c->rpcs[opc]++;
		if (opc != OSS_OPC_OTHER)
			c->bytes[opc] += bytes;
		c->wait_us += wait_us;
		if (limited)
			c->throttled_us += wait_us;
	}
	j->queued--;
	j->queued_bytes -= bytes;
	j->last_active_us = now;
}

uint32_t oss_jobstat_queued(const oss_jobstat *j) { return j->queued; }
uint64_t oss_jobstat_queued_bytes(const oss_jobstat *j) { return j->queued_bytes; }

static int cmp_snap(const void *a, const void *b)
{
	return strcmp(((const oss_job_snap *)a)->job, ((const oss_job_snap *)b)->job);
}

int oss_jobstats_snapshot(oss_jobstats *t, int clock, int reset, oss_job_snap **out,
			  size_t *n)
{
	oss_jobmap_iter it = { 0 };
	oss_jobmap_node *node;
	oss_job_snap *v = NULL;
	size_t k = 0;

	*out = NULL;
	*n = 0;
	if (clock < 0 || clock >= OSS_CLOCKS || (reset && clock == OSS_CLOCK_TOTAL))
		return -EINVAL;
	if (t->map.n) {
		v = malloc(t->map.n * sizeof(*v));
		if (!v)
			return -ENOMEM;
	}
	while ((node = oss_jobmap_next(&t->map, &it))) {
		oss_jobstat *j = (oss_jobstat *)node;
		oss_job_snap *o = &v[k++];

		memcpy(o->job, j->node.id, sizeof(o->job));
		o->c = j->c[clock];
		o->queued = j->queued;
		o->queued_bytes = j->queued_bytes;
		o->backlog = clock == OSS_CLOCK_TOTAL ? 0 : j->backlog[clock];
		if (reset) {
			memset(&j->c[clock], 0, sizeof(j->c[clock]));
			j->backlog[clock] = j->queued;
		}
	}
	if (k > 1)
		qsort(v, k, sizeof(*v), cmp_snap);
	*out = v;
	*n = k;
	return 0;
}

size_t oss_jobstats_prune(oss_jobstats *t, uint64_t idle_us, uint64_t now)
{
	oss_jobmap_iter it = { 0 };
	oss_jobmap_node *node;
	size_t dropped = 0;

	while ((node = oss_jobmap_next(&t->map, &it))) {
		oss_jobstat *j = (oss_jobstat *)node;

		if (j->queued || now < j->last_active_us || now - j->last_active_us < idle_us)
			continue;
		oss_jobmap_remove(&t->map, node);
		free(j);
		dropped++;
	}
	return dropped;
}
