/* qosmsg.h — value types of the job registry and the live QoS control
 * plane (PFS_OP_MDS_JOB_*, PFS_OP_MDS_QOS_*, PFS_OP_MDS_JOBSTATS,
 * PFS_OP_OSS_QOS_*, PFS_OP_OSS_NRS_RULE) and their codecs, as msg.h does
 * for the namespace.  Each decode validates and returns 0 or a negative
 * errno (-EBADMSG for malformed input); each encode appends to a pfs_wbuf
 * (errors are sticky in the buffer).  Rates are bytes per second unless a
 * field says otherwise; times are CLOCK_REALTIME nanoseconds.  Job ids and
 * names that do not fit their fixed fields are refused (-EBADMSG), never
 * truncated. */

#ifndef PFS_QOSMSG_H
#define PFS_QOSMSG_H

#include <stdint.h>

#include "common/buf.h"
#include "common/proto.h"

#define PFS_JOB_RUNNING 0
#define PFS_JOB_ENDED 1

/* A job in the MDS registry. */
typedef struct pfs_job_info {
	char job[PFS_JOBID_MAX + 1];
	uint32_t uid;              /* owner: may read the job's QoS state */
	uint32_t nodes;            /* node count, >= 1 (GIFT b_i, AdapTBF n_x) */
	double priority;           /* weight, > 0 (1 = default) */
	double limit;              /* admin cap per OST, bytes/s (0 = none) */
	uint8_t throttle_friendly; /* GIFT: may be throttled for coupons */
	uint8_t state;             /* PFS_JOB_RUNNING / PFS_JOB_ENDED */
	uint8_t registered;        /* 0: only seen on the wire (defaults) */
	int64_t start_ns, end_ns;  /* end_ns 0 while running */
} pfs_job_info;

/* What sets the TBF rates of an OSS (pfs_qos_alloc_set.mode). */
#define PFS_QOS_MODE_NONE 0    /* no policy: admin rules only */
#define PFS_QOS_MODE_RATES 1   /* per-(job, OST) rates from the MDS policy */
#define PFS_QOS_MODE_ADAPTBF 2 /* AdapTBF in the OSS per OST; the MDS sends
                                  node counts (rate ignored) */

#define PFS_QOS_OST_ALL UINT32_MAX /* pfs_qos_alloc.ost: every OST of the OSS */

/* One allocation row pushed by the MDS. */
typedef struct pfs_qos_alloc {
	char job[PFS_JOBID_MAX + 1];
	uint32_t ost;     /* cluster OST index or PFS_QOS_OST_ALL */
	double rate;      /* bytes/s (MODE_RATES); ignored in MODE_ADAPTBF */
	double nodes;     /* n_x for AdapTBF (>= 1) */
} pfs_qos_alloc;

/* PFS_OP_OSS_QOS_SET payload: u64 generation, u8 mode, f64 adaptbf_period,
 * u32 n, n x alloc.  The rows are borrowed by encode and malloc'd by decode
 * (free with pfs_qos_alloc_set_free). */
typedef struct pfs_qos_alloc_set {
	uint64_t generation;    /* decision number; an OSS ignores an older one */
	uint8_t mode;           /* PFS_QOS_MODE_* */
	double adaptbf_period;  /* seconds, > 0 (AdapTBF's Δt) */
	uint32_t n;
	pfs_qos_alloc *rows;
} pfs_qos_alloc_set;

/* Per-OST state of an OSS, in PFS_OP_OSS_QOS_STATS. */
typedef struct pfs_qos_ost_info {
	uint32_t ost;
	double capacity;     /* bytes/s the policies use (ost_bandwidth, else the
	                        measured estimate; 0 = unknown) */
	double served;       /* bytes/s served in the period */
	uint32_t queued;     /* requests queued now */
	uint64_t queued_bytes;
	uint32_t credit;     /* last RCC credit granted on this OST */
	double latency;      /* RCC queue latency estimate D/IOPS, seconds */
	uint8_t mode;        /* PFS_QOS_MODE_* in force */
} pfs_qos_ost_info;

/* Per-(job, OST) statistics of an OSS, in PFS_OP_OSS_QOS_STATS. */
typedef struct pfs_qos_stat {
	char job[PFS_JOBID_MAX + 1];
	uint32_t ost;
	uint64_t read_rpcs, write_rpcs, other_rpcs; /* served (dispatched) */
	uint64_t read_bytes, write_bytes;
	uint64_t arrived_rpcs, arrived_bytes;       /* demand: what arrived */
	uint64_t busy_rpcs;       /* refused with -EBUSY (queue caps) */
	uint32_t queued;          /* now */
	uint64_t queued_bytes;    /* now */
	uint64_t wait_us;         /* sum of queueing delays of dispatched RPCs */
	uint64_t throttled_us;    /* time with requests queued and none eligible */
	double rate;              /* TBF rate in force, bytes/s (< 0: no rule) */
	double record;            /* AdapTBF record r_x, tokens (+ lent, - borrowed) */
	int64_t tokens;           /* AdapTBF α_x this period (-1: not under AdapTBF) */
	double nodes;             /* n_x the OSS knows (0: default) */
} pfs_qos_stat;

/* One allocation row of PFS_OP_MDS_QOS_SHOW. */
typedef struct pfs_qos_row {
	char job[PFS_JOBID_MAX + 1];
	uint32_t ost;
	double alloc;       /* bytes/s allocated (< 0: unlimited, no rule) */
	double achieved;    /* bytes/s served in the last period */
	double demand;      /* bytes/s that arrived in the last period */
	uint8_t throttled;  /* requests waited for tokens in the last period */
} pfs_qos_row;

#define PFS_QOS_PARAMS_MAX 16
#define PFS_QOS_NAME_MAX 32

/* PFS_OP_MDS_QOS_SHOW reply: this, then u32 n, n x pfs_qos_row. */
typedef struct pfs_qos_status {
	char policy[PFS_QOS_NAME_MAX];
	int64_t decided_ns;       /* last decision (0: none yet) */
	uint32_t answered, oss_total; /* quorum of the last decision */
	uint32_t quorum_pct;      /* needed, percent of OSSes */
	double interval;          /* seconds between decisions */
	double decision_ms;       /* time the policy took */
	uint64_t decisions, skipped; /* decisions made / intervals without quorum */
	uint32_t n_params;
	struct { char key[PFS_QOS_NAME_MAX]; double value; } params[PFS_QOS_PARAMS_MAX];
} pfs_qos_status;

/* PFS_OP_MDS_QOS_COUPONS row (GIFT's coupon table, qos/coupon.h). */
typedef struct pfs_qos_coupon_info {
	char job[PFS_JOBID_MAX + 1];
	double rate;         /* c_i */
	double outstanding, issued, redeemed; /* worth in bytes */
	double owed_nh, awarded_nh;
	uint64_t n_coupons;
} pfs_qos_coupon_info;

/* PFS_OP_MDS_QOS_REGRET reply. */
typedef struct pfs_qos_regret_info {
	double budget_nh, period_s;  /* regret_budget, regret_period */
	double awarded_nh, liability_nh;
	double c_sys;                /* system redemption rate */
	uint64_t coupons_issued, redemptions, assessments;
	double worth_issued, worth_redeemed; /* bytes */
} pfs_qos_regret_info;

/* An NRS TBF rule as PFS_OP_OSS_NRS_RULE LIST reports it. */
#define PFS_NRS_ORIGIN_ADMIN 0
#define PFS_NRS_ORIGIN_MDS 1
#define PFS_NRS_ORIGIN_ADAPTBF 2
typedef struct pfs_nrs_rule_info {
	char name[64];
	char expr[256];      /* the rule text (qos/tbf_rule.h) */
	uint32_t ost;        /* PFS_QOS_OST_ALL for an admin rule on every OST */
	uint32_t queued;
	uint8_t origin;      /* PFS_NRS_ORIGIN_* */
} pfs_nrs_rule_info;

void pfs_job_info_encode(pfs_wbuf *b, const pfs_job_info *j);
int pfs_job_info_decode(pfs_rbuf *b, pfs_job_info *j);
void pfs_qos_alloc_set_encode(pfs_wbuf *b, const pfs_qos_alloc_set *s);
/* Validates rates and nodes (finite, >= 0), the mode, the period (> 0 and
 * finite) and n against the bytes left before allocating.  On success
 * s->rows is malloc'd (NULL when n = 0); on error nothing is allocated. */
int pfs_qos_alloc_set_decode(pfs_rbuf *b, pfs_qos_alloc_set *s);
void pfs_qos_alloc_set_free(pfs_qos_alloc_set *s);
void pfs_qos_ost_info_encode(pfs_wbuf *b, const pfs_qos_ost_info *o);
int pfs_qos_ost_info_decode(pfs_rbuf *b, pfs_qos_ost_info *o);
void pfs_qos_stat_encode(pfs_wbuf *b, const pfs_qos_stat *s);
int pfs_qos_stat_decode(pfs_rbuf *b, pfs_qos_stat *s);
void pfs_qos_row_encode(pfs_wbuf *b, const pfs_qos_row *r);
int pfs_qos_row_decode(pfs_rbuf *b, pfs_qos_row *r);
void pfs_qos_status_encode(pfs_wbuf *b, const pfs_qos_status *s);
int pfs_qos_status_decode(pfs_rbuf *b, pfs_qos_status *s);
void pfs_qos_coupon_info_encode(pfs_wbuf *b, const pfs_qos_coupon_info *c);
int pfs_qos_coupon_info_decode(pfs_rbuf *b, pfs_qos_coupon_info *c);
void pfs_qos_regret_info_encode(pfs_wbuf *b, const pfs_qos_regret_info *r);
int pfs_qos_regret_info_decode(pfs_rbuf *b, pfs_qos_regret_info *r);
void pfs_nrs_rule_info_encode(pfs_wbuf *b, const pfs_nrs_rule_info *r);
int pfs_nrs_rule_info_decode(pfs_rbuf *b, pfs_nrs_rule_info *r);

#endif
