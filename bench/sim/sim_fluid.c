/* sim_fluid.c — per-OST bandwidth sharing and progress (see sim_fluid.h).
 * Every call is O(streams + OSTs). */
#include "bench/sim/sim_fluid.h"

#include <errno.h>
#include <math.h>
#include <string.h>

/* A stream whose remainder is below this fraction of its total is done:
 * it absorbs the rounding of remaining -= rate * dt at its own end time. */
#define SIM_FLUID_EPS 1e-9

int sim_fluid_rates(sim_fluid_job *jobs, size_t n_jobs, const double *capacity, size_t n_osts,
		    int flags, double *scratch)
{
	double *sum = scratch, *cnt = scratch + n_osts;
	int over = 0;

	memset(scratch, 0, 2 * n_osts * sizeof(*scratch));
	for (size_t j = 0; j < n_jobs; j++)
		for (size_t k = 0; k < jobs[j].n; k++) {
			sim_stream *s = &jobs[j].s[k];
			if (s->ost < 0 || (size_t)s->ost >= n_osts)
				return -EINVAL;
			s->rate = 0;
			if (s->remaining <= 0)
				continue;
			s->rate = s->alloc > 0 ? s->alloc : 0;
			sum[s->ost] += s->rate;
			cnt[s->ost] += 1;
		}
	for (size_t o = 0; o < n_osts; o++)
		if (sum[o] > capacity[o] * (1 + 1e-9))
			over++;
	for (size_t j = 0; j < n_jobs; j++)
		for (size_t k = 0; k < jobs[j].n; k++) {
			sim_stream *s = &jobs[j].s[k];
			if (s->remaining <= 0)
				continue;
			double cap = capacity[s->ost], used = sum[s->ost];
			if (used > cap)
				s->rate *= cap / used;
			else if ((flags & SIM_FLUID_WORK_CONSERVING) && cnt[s->ost] > 0)
				s->rate += (cap - used) / cnt[s->ost];
		}
	if (!(flags & SIM_FLUID_LOCKSTEP))
		return over;
	for (size_t j = 0; j < n_jobs; j++) {
		double p = INFINITY;
		for (size_t k = 0; k < jobs[j].n; k++) {
			const sim_stream *s = &jobs[j].s[k];
			if (s->remaining > 0 && s->rate / s->remaining < p)
				p = s->rate / s->remaining;
		}
		/* Every stream at the pace of the slowest: all end together. */
		for (size_t k = 0; k < jobs[j].n; k++) {
			sim_stream *s = &jobs[j].s[k];
			if (s->remaining > 0)
				s->rate = p * s->remaining;
		}
	}
	return over;
}

double sim_fluid_next_finish(const sim_fluid_job *jobs, size_t n_jobs)
{
	double t = INFINITY;
	for (size_t j = 0; j < n_jobs; j++)
		for (size_t k = 0; k < jobs[j].n; k++) {
			const sim_stream *s = &jobs[j].s[k];
			if (s->remaining > 0 && s->rate > 0 && s->remaining / s->rate < t)
				t = s->remaining / s->rate;
		}
	return t;
}

void sim_fluid_advance(sim_fluid_job *jobs, size_t n_jobs, double dt)
{
	for (size_t j = 0; j < n_jobs; j++)
		for (size_t k = 0; k < jobs[j].n; k++) {
			sim_stream *s = &jobs[j].s[k];
			if (s->remaining <= 0)
				continue;
			double d = s->rate * dt;
			if (d > s->remaining)
				d = s->remaining;
			s->remaining -= d;
			s->moved += d;
			if (s->remaining <= SIM_FLUID_EPS * s->total) {
				s->moved += s->remaining;
				s->remaining = 0;
			}
		}
}

int sim_fluid_done(const sim_fluid_job *job)
{
	for (size_t k = 0; k < job->n; k++)
		if (job->s[k].remaining > 0)
			return 0;
	return 1;
}

void sim_fluid_bandwidth(const sim_fluid_job *job, double *effective, double *served)
{
	double p = INFINITY, bytes = 0, rate = 0;
	for (size_t k = 0; k < job->n; k++) {
		const sim_stream *s = &job->s[k];
		if (s->remaining <= 0 || s->total <= 0)
			continue;
		/* Eq. of Fig. 5: the slowest stream sets the pace of all. */
		if (s->rate / s->total < p)
			p = s->rate / s->total;
		bytes += s->total;
		rate += s->rate;
	}
	*effective = isfinite(p) ? p * bytes : 0;
	*served = rate;
}

double sim_fluid_busy_capacity(const sim_fluid_job *jobs, size_t n_jobs, const double *capacity,
			       size_t n_osts, unsigned char *mark)
{
	double c = 0;
	memset(mark, 0, n_osts);
	for (size_t j = 0; j < n_jobs; j++)
		for (size_t k = 0; k < jobs[j].n; k++) {
			const sim_stream *s = &jobs[j].s[k];
			if (s->remaining <= 0 || s->ost < 0 || (size_t)s->ost >= n_osts ||
			    mark[s->ost])
				continue;
			mark[s->ost] = 1;
			c += capacity[s->ost];
		}
	return c;
}
