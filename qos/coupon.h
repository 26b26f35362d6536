/* coupon.h — GIFT's coupon table: issuance, partial and multiple redemption,
 * receding-window redemption rates per job and for the system, and the
 * regret ledger in node-hours (gift.txt sec. 3.2, 3.3; Algorithm 1 lines
 * 3, 4, 7, 8).
 *
 * A coupon records bandwidth withheld from a throttled job.  Its worth is in
 * "capacity units summed over the job's OSTs for one decision interval": a
 * job throttled by d on each of its |S_i| OSTs gets a coupon worth d*|S_i|
 * (Fig. 6: A throttled from 0.50 to 0.35 on one OST holds a coupon worth
 * 0.15 of an OST).  Redemption adds worth back the same way.  Multiplying by
 * the decision period gives bytes if capacities are bytes/s.
 *
 * Redemption rate (sec. 3.2): c_i(k) = n_i(k) / N over the last N coupons
 * issued to job i, where a coupon counts as redeemed by the fraction of its
 * worth given back (a half-redeemed coupon counts 0.5; the paper counts
 * whole coupons and has no partial case to count).  Jobs with no coupon
 * history: the empty slots of a window that holds fewer than N coupons count
 * as redeemed, so a new job starts at c_i = 1 and is throttle-friendly; it
 * can then accumulate at most (1 - tau) * N unredeemed coupons before c_i
 * drops below tau and GIFT stops issuing to it ("more coupons are issued
 * only until c_i(k) >= tau"), which bounds the unfairness towards a job that
 * never redeems while still letting GIFT learn about new jobs.  The system
 * window (last N coupons issued to any job) is treated the same way and is
 * emptied at every regret assessment.
 *
 * Regret: a coupon carries the node-seconds its job lost per unit of worth
 * (nodes * period / (b_bsip * |S_i|): a job slowed by a fraction x of its
 * fair rate for one period keeps its nodes x * period longer).  At each
 * regret assessment the unredeemed part of every coupon at least one
 * assessment period old is settled: its node-hours are awarded to the job
 * out of the system regret budget, never more than the budget in total;
 * what the budget cannot pay stays owed.  Settled coupons stay in the
 * windows with their final redeemed fraction.
 *
 * Limits: job state is kept for every job id ever seen (GIFT needs the
 * history of future runs of the same application); memory grows with the
 * number of distinct ids and the coupons each was issued (a job window
 * holds at most its last N, 8 bytes each, allocated as it fills; the
 * system window N up front).  Not thread-safe: one caller at a time.
 *
 * Ownership: the table owns everything it allocates; job id strings are
 * copied.  All values are in the caller's units; no clock is read ("now" is
 * a parameter, in seconds). */
#ifndef QOS_COUPON_H
#define QOS_COUPON_H

#include <stddef.h>
#include <stdint.h>

typedef struct qos_coupon_table qos_coupon_table;

/* Per-job summary, for admin listings and the simulator. */
typedef struct qos_coupon_job_info {
	double rate;         /* c_i(k), in [0, 1] */
	double outstanding;  /* unredeemed, unsettled worth */
	double issued;       /* total worth ever issued */
	double redeemed;     /* total worth ever redeemed */
	double owed_nh;      /* node-hours of settled coupons not yet paid */
	double awarded_nh;   /* node-hours awarded from the regret budget */
	size_t n_coupons;    /* coupons ever issued */
} qos_coupon_job_info;

/* Create a table with window length N >= 1 coupons and threshold tau in
 * [0, 1].  Returns 0, -EINVAL or -ENOMEM; *out is freed with
 * qos_coupon_table_destroy. */
int qos_coupon_table_create(unsigned N, double tau, qos_coupon_table **out);
void qos_coupon_table_destroy(qos_coupon_table *t);

/* c_i(k) of job (1 for a job never seen: see the header comment). */
double qos_coupon_rate(const qos_coupon_table *t, const char *job);
/* The system's redemption rate over its last N coupons since the last
 * assessment (1 when it has none). */
double qos_coupon_system_rate(const qos_coupon_table *t);
/* c_i >= tau and c_sys >= tau: job i may be put in Y (sec. 3.2). */
int qos_coupon_friendly(const qos_coupon_table *t, const char *job);
/* Unredeemed, unsettled coupon worth of job (0 if none). */
double qos_coupon_outstanding(const qos_coupon_table *t, const char *job);
/* Fill *info for job; -ENOENT if the table has never seen it. */
int qos_coupon_job_get(const qos_coupon_table *t, const char *job,
		       qos_coupon_job_info *info);

/* Issue a coupon worth value > 0 to job at time now (Algorithm 1 line 7);
 * ns_per_worth >= 0 converts worth into node-seconds for regret.  Pushes
 * it into the job's and the system's windows (line 8).  Returns 0,
 * -EINVAL or -ENOMEM. */
int qos_coupon_issue(qos_coupon_table *t, const char *job, double value,
		     double now, double ns_per_worth);
/* Redeem up to amount >= 0 of job's outstanding coupons, oldest first,
 * partially or several at once (sec. 3.3; line 4 raises the rates).
 * Returns the worth actually redeemed (0 if the job holds none). */
double qos_coupon_redeem(qos_coupon_table *t, const char *job, double amount);

/* Regret assessment at time now: settle coupons issued at or before
 * now - min_age, award their node-hours (and earlier owed ones) out of the
 * budget remaining (budget_nh minus everything awarded so far, never
 * below 0), then empty the system window.  *awarded_nh (may be NULL) gets
 * the node-hours awarded by this call. */
void qos_coupon_assess(qos_coupon_table *t, double now, double min_age,
		       double budget_nh, double *awarded_nh);
/* Node-hours awarded so far by all assessments. */
double qos_coupon_awarded_total(const qos_coupon_table *t);
/* Node-hours that outstanding and owed coupons would cost if settled now. */
double qos_coupon_liability(const qos_coupon_table *t);
/* Number of jobs the table knows. */
size_t qos_coupon_njobs(const qos_coupon_table *t);

/* ---- persistence ----
 * A versioned, self-checking byte image of the whole table (coupons,
 * windows, outstanding queues, the system window, the regret ledger), so a
 * daemon can store it and continue the same ledger after a restart.  Pure:
 * the caller does the I/O. */

/* Serialise t into a malloc'd *buf of *len bytes (caller frees).
 * Returns 0 or -ENOMEM (then *buf is NULL). */
int qos_coupon_table_save(const qos_coupon_table *t, uint8_t **buf, size_t *len);
/* Rebuild a table from a qos_coupon_table_save image, with the N and tau it
 * was saved with.  A blob that is truncated, has trailing bytes, an unknown
 * magic or version, a bad checksum, or any value or reference out of range
 * is refused with -EBADMSG (nothing is allocated then); -ENOMEM.  *out is
 * freed with qos_coupon_table_destroy. */
int qos_coupon_table_load(const uint8_t *buf, size_t len, qos_coupon_table **out);
/* The same with window length N (0 = as saved) and threshold tau (< 0 = as
 * saved): a shorter window keeps the newest N coupons of each window. */
int qos_coupon_table_load_with(const uint8_t *buf, size_t len, unsigned N, double tau,
			       qos_coupon_table **out);

#endif
