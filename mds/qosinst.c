/* qosinst.c — one decision's inputs and outputs: the qos_instance built
 * from the answering OSSes' statistics (qosctl.h, step 4) and the
 * pfs_qos_alloc_set per OSS made of the policy's allocations (step 5).
 *
 * The statistics rows are sorted once by (job, OST): O(R log R) for R
 * rows; jobs are the distinct ids, OSTs those with a known capacity. */
#include "mds/qosctl.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/log.h"
#include "common/proto.h"
#include "mds/qosctl_i.h"

/* Rows of one pfs_qos_alloc_set that fit a frame (a row is at most
 * 4 + 32 + 4 + 8 + 8 bytes). */
#define MAX_SET_ROWS ((PFS_MAX_PAYLOAD - 64u) / 56u)

static int owns_ost(const mds_qos_oss *o, uint32_t ost)
{
	for (uint32_t i = 0; i < o->n_osts; i++)
		if (o->osts[i] == ost)
			return 1;
	return 0;
}

struct qrow {
	const char *job;
	uint32_t col;
	double usage, demand;
	int active;
};

void mds_qctl_inst_free(struct qctl_inst *x)
{
	free(x->cap);
	free(x->col_ost);
	free(x->col_oss);
	free(x->jobs);
	free(x->limit);
	free(x->active);
	free(x->usage);
	free(x->demand);
	free(x->alloc);
	free(x->coupons);
	free(x->rows);
	memset(x, 0, sizeof(*x));
}

static int qrow_cmp(const void *a, const void *b)
{
	const struct qrow *x = a, *y = b;
	int r = strcmp(x->job, y->job);

	return r ? r : (x->col > y->col) - (x->col < y->col);
}

/* The policy's view of the answering OSSes' period (qosctl.h, step 4). */
int mds_qctl_inst_build(mds_qosctl *c, const mds_qos_oss *oss, const mds_qos_report *rep,
		      size_t n, struct qctl_inst *x)
{
	uint32_t maxost = 0;
	size_t nostmax = 0, nrow = 0;
	int32_t *colmap = NULL;
	int rc = -ENOMEM;

	memset(x, 0, sizeof(*x));
	for (size_t i = 0; i < n; i++)
		if (!rep[i].rc) {
			nostmax += rep[i].n_osts;
			nrow += rep[i].n;
			for (uint32_t k = 0; k < rep[i].n_osts; k++)
				if (rep[i].osts[k].ost > maxost)
					maxost = rep[i].osts[k].ost;
		}
	if (maxost >= 1u << 20)
		maxost = (1u << 20) - 1; /* larger indices are not ours: ignored below */
	colmap = malloc(((size_t)maxost + 1) * sizeof(*colmap));
	x->cap = malloc((nostmax + 1) * sizeof(*x->cap));
	x->col_ost = malloc((nostmax + 1) * sizeof(*x->col_ost));
	x->col_oss = malloc((nostmax + 1) * sizeof(*x->col_oss));
	x->rows = malloc((nrow + 1) * sizeof(*x->rows));
	if (!colmap || !x->cap || !x->col_ost || !x->col_oss || !x->rows)
		goto out;
	for (uint32_t k = 0; k <= maxost; k++)
		colmap[k] = -1;
	for (size_t i = 0; i < n; i++) {
		if (rep[i].rc)
			continue;
		for (uint32_t k = 0; k < rep[i].n_osts; k++) {
			const pfs_qos_ost_info *o = &rep[i].osts[k];
			if (o->ost > maxost || colmap[o->ost] >= 0 || !owns_ost(&oss[i], o->ost) ||
			    !(o->capacity > 0) || !isfinite(o->capacity))
				continue;
			colmap[o->ost] = (int32_t)x->no;
			x->cap[x->no] = o->capacity;
			x->col_ost[x->no] = o->ost;
			x->col_oss[x->no] = i;
			x->no++;
		}
	}
	nrow = 0;
	for (size_t i = 0; i < n; i++) {
		double per;
		if (rep[i].rc)
			continue;
		per = rep[i].period_s > 0 && isfinite(rep[i].period_s) ? rep[i].period_s
								       : c->interval;
		for (uint32_t k = 0; k < rep[i].n; k++) {
			const pfs_qos_stat *s = &rep[i].stats[k];
			int32_t col = s->ost <= maxost ? colmap[s->ost] : -1;
			if (col < 0 || x->col_oss[col] != i)
				continue;
			x->rows[nrow] = (struct qrow){
				.job = s->job, .col = (uint32_t)col,
				.usage = (double)(s->read_bytes + s->write_bytes) / per,
				.demand = (double)s->arrived_bytes / per,
				.active = s->arrived_rpcs > 0 || s->queued > 0,
			};
			nrow++;
		}
	}
	qsort(x->rows, nrow, sizeof(*x->rows), qrow_cmp);
	for (size_t r = 0; r < nrow; r++)
		if (r == 0 || strcmp(x->rows[r].job, x->rows[r - 1].job))
			x->nj++;
	x->jobs = calloc(x->nj + 1, sizeof(*x->jobs));
	x->limit = calloc(x->nj + 1, sizeof(*x->limit));
	x->active = calloc(x->nj * x->no + 1, 1);
	x->usage = calloc(x->nj * x->no + 1, sizeof(double));
	x->demand = calloc(x->nj * x->no + 1, sizeof(double));
	x->alloc = calloc(x->nj * x->no + 1, sizeof(double));
	x->coupons = calloc(x->nj + 1, sizeof(double));
	if (!x->jobs || !x->limit || !x->active || !x->usage || !x->demand || !x->alloc ||
	    !x->coupons)
		goto out;
	for (size_t r = 0, j = 0; r < nrow; r++) {
		if (r > 0 && strcmp(x->rows[r].job, x->rows[r - 1].job))
			j++;
		size_t e = j * x->no + x->rows[r].col;
		x->active[e] |= (uint8_t)x->rows[r].active;
		x->usage[e] += x->rows[r].usage;   /* an OSS reporting a pair twice: sum */
		x->demand[e] += x->rows[r].demand;
		if (r == 0 || strcmp(x->rows[r].job, x->rows[r - 1].job)) {
			qos_job *jb = &x->jobs[j];
			pfs_job_info info;
			snprintf(jb->id, sizeof(jb->id), "%s", x->rows[r].job);
			jb->nodes = 1;
			jb->priority = 1;
			jb->throttle_friendly = 1;
			if (mds_jobs_get(c->jobs, jb->id, &info) == 0) {
				jb->nodes = info.nodes;
				jb->priority = info.priority;
				jb->throttle_friendly = info.throttle_friendly;
				x->limit[j] = info.registered ? info.limit : 0;
			}
		}
	}
	rc = 0;
out:
	free(colmap);
	if (rc)
		mds_qctl_inst_free(x);
	return rc;
}

/* ------------------------------------------------------------ the sets */

void mds_qctl_sets_free(pfs_qos_alloc_set *s, size_t n)
{
	if (!s)
		return;
	for (size_t i = 0; i < n; i++)
		free(s[i].rows);
	free(s);
}

/* MODE_RATES sets from the decision: sets[i] for answering OSS i. */
int mds_qctl_sets_rates(const struct qctl_inst *x, size_t n, pfs_qos_alloc_set *sets)
{
	uint32_t *cnt = calloc(n + 1, sizeof(*cnt));

	if (!cnt)
		return -ENOMEM;
	for (size_t j = 0; j < x->nj; j++)
		for (size_t k = 0; k < x->no; k++)
			if (x->active[j * x->no + k])
				cnt[x->col_oss[k]]++;
	for (size_t i = 0; i < n; i++) {
		if (cnt[i] > MAX_SET_ROWS) {
			pfs_log(PFS_LOG_WARNING, "qos: %u allocations for one OSS, only %u sent",
				cnt[i], (unsigned)MAX_SET_ROWS);
			cnt[i] = MAX_SET_ROWS;
		}
		if (cnt[i] && !(sets[i].rows = calloc(cnt[i], sizeof(*sets[i].rows)))) {
			free(cnt);
			return -ENOMEM;
		}
	}
	for (size_t j = 0; j < x->nj; j++)
		for (size_t k = 0; k < x->no; k++) {
			size_t i = x->col_oss[k];
			double rate = x->alloc[j * x->no + k];
			if (!x->active[j * x->no + k] || sets[i].n >= cnt[i])
				continue;
			if (!(rate >= 0) || !isfinite(rate))
				rate = 0;
			/* a registered job's limit caps whatever the policy gave */
			if (x->limit[j] > 0 && rate > x->limit[j])
				rate = x->limit[j];
			pfs_qos_alloc *a = &sets[i].rows[sets[i].n++];
			mds_qctl_copy_id(a->job, x->jobs[j].id);
			a->ost = x->col_ost[k];
			a->rate = rate;
			a->nodes = x->jobs[j].nodes;
		}
	free(cnt);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* MODE_ADAPTBF set of one OSS: node counts of the jobs in its statistics
 * and of every running registered job. */
int mds_qctl_set_adaptbf(mds_qosctl *c, const mds_qos_report *r, const pfs_job_info *reg,
		       uint32_t nreg, pfs_qos_alloc_set *s)
{
	size_t cap = (size_t)r->n + nreg, k = 0, m = 0;
	const char **ids = malloc((cap + 1) * sizeof(*ids));

	if (!ids)
		return -ENOMEM;
	for (uint32_t i = 0; i < r->n; i++)
		ids[k++] = r->stats[i].job;
	for (uint32_t i = 0; i < nreg; i++)
		if (reg[i].registered && reg[i].state == PFS_JOB_RUNNING)
			ids[k++] = reg[i].job;
	qsort(ids, k, sizeof(*ids), cmp_str);
	s->rows = calloc(k + 1, sizeof(*s->rows));
	if (!s->rows) {
		free(ids);
		return -ENOMEM;
	}
	for (size_t i = 0; i < k && m < MAX_SET_ROWS; i++) {
		pfs_job_info info;
		pfs_qos_alloc *a;
		if (i > 0 && !strcmp(ids[i], ids[i - 1]))
			continue;
		a = &s->rows[m++];
		snprintf(a->job, sizeof(a->job), "%s", ids[i]);
		a->ost = PFS_QOS_OST_ALL;
		a->nodes = mds_jobs_get(c->jobs, ids[i], &info) == 0 ? info.nodes : 1;
	}
	s->n = (uint32_t)m;
	free(ids);
	return 0;
}

/* 1 if set s differs from what OSS m has in force by more than 1%. */
int mds_qctl_set_changed(const struct qctl_oss *m, const pfs_qos_alloc_set *s)
{
	if (!m || m->gen == 0 || m->mode != s->mode || m->nrows != s->n)
		return 1;
	if (s->mode != PFS_QOS_MODE_RATES)
		return 0;
	for (uint32_t i = 0; i < s->n; i++) {
		const pfs_qos_alloc *a = &s->rows[i], *b = &m->rows[i];
		double big = fabs(a->rate) > fabs(b->rate) ? fabs(a->rate) : fabs(b->rate);
		if (strcmp(a->job, b->job) || a->ost != b->ost || fabs(a->rate - b->rate) > 0.01 * big)
			return 1;
	}
	return 0;
}
