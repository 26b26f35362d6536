/* policy.h — the one interface every QoS policy offers, so the MDS
 * controller, each OSS and pfs-sim drive any policy the same way.
 *
 * A policy is a named set of operations over an opaque state.  Each
 * decision interval the caller fills a qos_instance (OSTs with capacities,
 * jobs, which job is active on which OST, what each job used on each OST
 * in the previous period) and the policy fills a qos_result (allocations,
 * and where the paper has them coupons, records and whole tokens).  Time is
 * only what the caller passes in (period, now); policies never read a clock,
 * never log and keep no globals.  Jobs may come and go between calls:
 * per-job state is keyed by qos_job.id, not by array position.
 *
 * Matrices are row-major n_jobs x n_osts: element [j * n_osts + o].
 * "Capacity units" are whatever unit the caller gives capacities in
 * (bytes/s, RPCs/s, fraction of an OST); allocations come back in the same
 * unit per second.  For PADLL policies an "OST" is an operation class. */
#ifndef QOS_POLICY_H
#define QOS_POLICY_H

#include <stddef.h>
#include <stdint.h>

#define QOS_ID_MAX 64

typedef struct qos_job {
	char id[QOS_ID_MAX];
	double nodes;            /* node count (GIFT b_i weights, AdapTBF priority) */
	double priority;         /* weight for weighted shares; 1 if unset */
	double limit;            /* configured rate / demand (PADLL demand_i); 0 = none */
	int throttle_friendly;   /* GIFT: job accepts throttling for coupons */
} qos_job;

typedef struct qos_param {
	const char *key;
	double value;
} qos_param;

typedef struct qos_params {
	const qos_param *v;
	size_t n;
	uint64_t seed;           /* for randomised baselines (RND) */
} qos_params;

typedef struct qos_instance {
	size_t n_osts, n_jobs;
	const char *const *ost_ids;  /* [n_osts], may be NULL */
	const double *capacity;      /* [n_osts] */
	const qos_job *jobs;         /* [n_jobs] */
	const uint8_t *active;       /* [n_jobs * n_osts]: job uses OST this interval */
	const double *usage;         /* [n_jobs * n_osts]: done in previous period (rate) */
	const double *demand;        /* [n_jobs * n_osts]: requested rate; NULL = unknown */
	double period;               /* seconds per decision interval */
	double now;                  /* seconds since the policy started */
} qos_instance;

typedef struct qos_result {
	double *alloc;    /* [n_jobs * n_osts] rate per job per OST */
	double *coupons;  /* [n_jobs] outstanding coupon value (GIFT), or NULL */
	double *records;  /* [n_jobs * n_osts] lent(+)/borrowed(-) tokens (AdapTBF), or NULL */
	int64_t *tokens;  /* [n_jobs * n_osts] whole tokens this period (AdapTBF), or NULL */
	double effective; /* the policy's objective (e.g. effective system bandwidth) */
} qos_result;

typedef struct qos_policy_ops {
	const char *name;
	const char *summary;
	/* Create state; params use the paper's symbol names as keys
	 * (e.g. "N", "tau", "B_thres", "DF", "epsilon").  Unknown keys are an
	 * error (-EINVAL) so typos are caught. */
	int (*create)(const qos_params *params, void **state);
	/* One decision.  res arrays are caller-allocated for this instance's
	 * sizes; the policy writes alloc and whichever optional outputs it has
	 * (leaving NULL ones alone).  Returns 0 or a negative errno. */
	int (*decide)(void *state, const qos_instance *in, qos_result *res);
	void (*destroy)(void *state);
} qos_policy_ops;

/* Look a policy up by name ("gift", "pofs", "adaptbf", "psfa", ...);
 * NULL if unknown. */
const qos_policy_ops *qos_policy_find(const char *name);
/* All policies, NULL-terminated. */
const qos_policy_ops *const *qos_policy_all(void);
/* Value of key in params, or def if absent. */
double qos_param_get(const qos_params *p, const char *key, double def);
/* 0 if every key of p is in the NULL-terminated list known, else -EINVAL. */
int qos_params_check(const qos_params *p, const char *const *known);

#endif
