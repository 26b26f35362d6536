/* qosctl_i.h — the QoS controller's state, shared by mds/qosctl.c (the
 * loop), qospol.c, qosinst.c, qosstep.c and qosview.c.  Not for other
 * modules: use qosctl.h. */
#ifndef MDS_QOSCTL_I_H
#define MDS_QOSCTL_I_H

#include <pthread.h>
#include <stdint.h>

#include "common/qosmsg.h"
#include "mds/qos_store.h"
#include "mds/qosctl.h"
#include "qos/gift.h"
#include "qos/policy.h"

struct qrow;

enum qctl_kind {
	QCTL_NONE,    /* no MDS rules: MODE_NONE once per OSS */
	QCTL_ADAPTBF, /* AdapTBF on the OSSes: node counts, no rates */
	QCTL_OPS,     /* a qos/policy.h policy deciding rates */
	QCTL_GIFT,    /* GIFT through qos/gift.h, with its persisted ledger */
};

/* The policy in force: its name, the parameters as given, its state. */
struct qctl_pol {
	enum qctl_kind kind;
	char name[PFS_QOS_NAME_MAX];
	uint32_t n;
	char keys[PFS_QOS_PARAMS_MAX][PFS_QOS_NAME_MAX];
	double vals[PFS_QOS_PARAMS_MAX];
	const qos_policy_ops *ops; /* QCTL_OPS */
	void *state;               /* QCTL_OPS */
};

/* What an OSS reported for one (job, OST) in its last answered period. */
struct qctl_stat {
	char job[PFS_JOBID_MAX + 1];
	uint32_t ost;
	double achieved, demand; /* bytes/s */
	double oss_rate;         /* TBF rate the OSS had in force (< 0: none) */
	uint8_t throttled;
};

/* Per OSS, by name, for as long as the MDS runs. */
struct qctl_oss {
	char name[64];
	int none_sent;           /* MODE_NONE acknowledged since policy none began */
	int push_failing;        /* the last push failed (log the change only) */
	uint64_t gen;            /* generation in force there */
	uint8_t mode;            /* mode in force there */
	pfs_qos_alloc *rows;     /* MODE_RATES rows in force */
	uint32_t nrows;
	struct qctl_stat *last;  /* its last answered period */
	uint32_t nlast;
};

struct mds_qosctl {
	mds_ns *ns;
	mds_jobs *jobs;
	mds_qos_oss_ops ops;
	int64_t (*clock_ns)(void *arg);
	void *clock_arg;

	pthread_mutex_t lock;    /* guards everything below */
	pthread_cond_t cv;       /* stop, or a new interval */
	pthread_t thr;
	int running, stop;

	struct qctl_pol pol;
	double interval;         /* seconds */
	uint32_t quorum;         /* percent */
	double adaptbf_period;   /* seconds */
	qos_gift *gift;          /* GIFT's ledger: in use under QCTL_GIFT, else parked (may be NULL) */
	qos_gift_params gift_p;  /* its parameters */
	mds_qos_state_rec st;    /* the decision record (persisted) */
	uint64_t push_failures;
	int last_skipped;        /* the last step lacked quorum (log changes only) */

	struct qctl_oss *oss;
	size_t noss;
	char (*dec_jobs)[PFS_JOBID_MAX + 1]; /* jobs of the last decision */
	size_t ndec_jobs;
};

/* One decision's instance (qosinst.c).  Matrices are n_jobs x n_osts,
 * row-major, as in qos/policy.h. */
struct qctl_inst {
	size_t no, nj;
	double *cap;            /* [no] bytes/s */
	uint32_t *col_ost;      /* [no] cluster OST index */
	size_t *col_oss;        /* [no] index into the answering OSS list */
	qos_job *jobs;          /* [nj] */
	double *limit;          /* [nj] registered caps, 0 = none */
	uint8_t *active;        /* [nj * no] */
	double *usage, *demand, *alloc, *coupons;
	struct qrow *rows;      /* the sorted statistics rows (borrowed ids) */
};

/* ---- shared inside the controller (mds_qctl_ = internal) ---- */

/* qosctl.c */
int64_t mds_qctl_rt_now(mds_qosctl *c);           /* CLOCK_REALTIME ns, or the test's */
double mds_qctl_mono_s(void);                     /* CLOCK_MONOTONIC seconds */
double mds_qctl_pol_now(mds_qosctl *c);           /* policy clock; lock held */
void mds_qctl_copy_id(char dst[PFS_JOBID_MAX + 1], const char *src);
int mds_qctl_save_gift(mds_qosctl *c, mds_kv_txn *t); /* GIFT's ledger into t; lock held */

/* qospol.c: building policies; nothing of c changes */
void mds_qctl_pol_free(struct qctl_pol *p);
int mds_qctl_is_ctl_key(const char *k);
int mds_qctl_ctl_key(const char *k, double v, double *interval, uint32_t *quorum,
		     double *period);
int mds_qctl_pol_build(mds_qosctl *c, struct qctl_pol *p, int validate_only,
		       qos_gift **gift_out, qos_gift_params *gp_out);
int mds_qctl_parse_params(const char *s, struct qctl_pol *p, double *interval,
			  uint32_t *quorum, double *period, char *err, size_t errlen);
void mds_qctl_pol_from_rec(struct qctl_pol *p, const mds_qos_policy_rec *r);
void mds_qctl_rec_from_pol(mds_qos_policy_rec *r, const struct qctl_pol *p, double interval,
			   uint32_t quorum, double period);
void mds_qctl_pol_text(const struct qctl_pol *p, char *out, size_t len);

/* qosinst.c */
int mds_qctl_inst_build(mds_qosctl *c, const mds_qos_oss *oss, const mds_qos_report *rep,
			size_t n, struct qctl_inst *x);
void mds_qctl_inst_free(struct qctl_inst *x);
int mds_qctl_sets_rates(const struct qctl_inst *x, size_t n, pfs_qos_alloc_set *sets);
int mds_qctl_set_adaptbf(mds_qosctl *c, const mds_qos_report *r, const pfs_job_info *reg,
			 uint32_t nreg, pfs_qos_alloc_set *s);
int mds_qctl_set_changed(const struct qctl_oss *m, const pfs_qos_alloc_set *s);
void mds_qctl_sets_free(pfs_qos_alloc_set *s, size_t n);

/* qosstep.c; lock held */
struct qctl_oss *mds_qctl_oss_mem(mds_qosctl *c, const char *name);

/* qosview.c: 1 if uid may see job's QoS state (root, or the registry's
 * owner). */
int mds_qctl_visible(mds_qosctl *c, const char *job, uint32_t uid);

#endif
