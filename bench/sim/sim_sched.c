/* sim_sched.c — FCFS + EASY backfilling (see sim_sched.h). O(R log R + W)
 * per call for R running and W waiting jobs. */
#include "bench/sim/sim_sched.h"

#include <errno.h>
#include <stdlib.h>

static int cmp_end(const void *a, const void *b)
{
	const sim_sched_running *x = a, *y = b;
	return (x->est_end > y->est_end) - (x->est_end < y->est_end);
}

int sim_sched_easy(double now, int free_nodes, const sim_sched_running *run, size_t n_run,
		   const sim_sched_waiting *wait, size_t n_wait, size_t *start, size_t *n_start)
{
	sim_sched_running *ends = NULL;
	size_t k = 0, head;
	int rc = 0;

	if (!n_start || (n_wait && (!wait || !start)) || (n_run && !run) || free_nodes < 0)
		return -EINVAL;
	*n_start = 0;

	/* FCFS: start from the head while jobs fit. */
	for (head = 0; head < n_wait && wait[head].nodes <= free_nodes; head++) {
		free_nodes -= wait[head].nodes;
		start[k++] = head;
	}
	if (head >= n_wait)
		goto out;

	/* The head is blocked: find its shadow time and extra nodes.  Jobs
	 * just started above count as running with end now + estimate. */
	size_t n_ends = n_run + k;
	ends = malloc((n_ends ? n_ends : 1) * sizeof(*ends));
	if (!ends) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n_run; i++) {
		ends[i] = run[i];
		if (ends[i].est_end < now)
			ends[i].est_end = now;
	}
	for (size_t i = 0; i < k; i++) {
		ends[n_run + i].nodes = wait[start[i]].nodes;
		ends[n_run + i].est_end = now + wait[start[i]].estimate;
	}
	qsort(ends, n_ends, sizeof(*ends), cmp_end);

	double shadow = -1;
	int avail = free_nodes, extra = 0;
	for (size_t i = 0; i < n_ends; i++) {
		avail += ends[i].nodes;
		if (avail >= wait[head].nodes) {
			shadow = ends[i].est_end;
			extra = avail - wait[head].nodes;
			break;
		}
	}
	if (shadow < 0)
		goto out; /* the head can never fit; nothing may pass it either */

	/* Backfill: a later job may start if it fits now and does not delay
	 * the head's reservation. */
	for (size_t i = head + 1; i < n_wait && free_nodes > 0; i++) {
		if (wait[i].nodes > free_nodes)
			continue;
		if (now + wait[i].estimate <= shadow) {
			free_nodes -= wait[i].nodes;
			start[k++] = i;
		} else if (wait[i].nodes <= extra) {
			free_nodes -= wait[i].nodes;
			extra -= wait[i].nodes;
			start[k++] = i;
		}
	}
out:
	*n_start = k;
	free(ends);
	return rc;
}
