/* qos_i.h — the QoS engine's state, shared by qos.c (control, loop) and
 * qos_stats.c (QOS_STATS, metrics).  Not for use outside oss/qos*.c. */
#ifndef OSS_QOS_I_H
#define OSS_QOS_I_H

#include <pthread.h>
#include <stdint.h>

#include "oss/adapt.h"
#include "oss/jobmap.h"
#include "oss/qos.h"

/* Policy state of one job on one OST. */
typedef struct qjob {
	oss_jobmap_node node;    /* first: linked by it */
	double nodes;            /* n_x from the last QOS_SET (0: default 1) */
	double rate;             /* MDS rate in force, bytes/s (< 0: none) */
	int mds_rule;            /* mds.<job> is installed */
	uint64_t blkio_bps;      /* blkio limit set on this OST (0: none) */
	uint64_t gen;            /* QOS_SET generation that last named it */
	int in_set;              /* scratch while applying a set */
} qjob;

/* One OST. */
typedef struct qost {
	oss_ostq *q;             /* borrowed */
	oss_sched *sched;
	size_t slot;
	int mode;                /* PFS_QOS_MODE_* */
	double cap_bps, cap_iops;  /* configured (0: none) */
	double peak_bps, peak_rps; /* measured: highest 1 s window since start */
	double win_t0;           /* current measurement window */
	uint64_t win_bytes0, win_rpcs0;
	int work_conserving;     /* set on the TBF class */
	oss_jobmap jobs;         /* qjob */
	oss_adapt *adapt;        /* mode ADAPTBF only */
} qost;

struct oss_qos {
	pthread_mutex_t lock;    /* guards everything below */
	pthread_cond_t cond;     /* loop sleeps on it (monotonic clock) */
	pthread_t thread;
	int running, stopping;
	unsigned enforce;
	oss_blkio *blkio;
	int tbf;                 /* the schedulers run the TBF class */
	double period_cfg;       /* adaptbf_period from the configuration */
	double period;           /* Δt in force */
	double idle_s;
	uint64_t generation;     /* last QOS_SET applied */
	int have_generation;
	double start;            /* monotonic s at create */
	double mds_period_start; /* start of the MDS stats period */
	double next_adapt, next_maint;
	size_t n;
	qost *o;                 /* [n] */
};

/* Monotonic and real time in seconds / nanoseconds. */
double oss_qos_now(void);
int64_t oss_qos_realtime_ns(void);
/* The capacity an OST reports (bytes/s) and its token rate T_i (RPCs/s). */
double oss_qos_cap_locked(const qost *o);
double oss_qos_T_locked(const qost *o);
/* The rate a job's policy rule holds, in bytes/s (< 0: none), and its
 * AdapTBF tokens and record (-1 / 0 when not under AdapTBF). */
double oss_qos_job_rate_locked(const oss_qos *q, const qost *o, const char *job,
			       int64_t *tokens, double *record, double *nodes);

#endif
