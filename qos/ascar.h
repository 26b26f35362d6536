/* ascar.h — ASCAR client traffic controller: congestion indicators, rule
 * sets and the congestion-window/rate-gap actions (ascar.txt sec. III-C,
 * III-D, Table I, Table V).
 *
 * One controller (qos_ascar_ctl) runs per (client, server) stream.  On
 * every reply it updates the congestion state C = <ack_ewma, send_ewma,
 * pt_ratio> (Table I):
 *   ack_ewma   EWMA of the gaps between successive replies,
 *   send_ewma  EWMA of the gaps between the send times of the requests
 *              those replies answer,
 *   pt_ratio   this request's process time (reply time - send time) over
 *              the shortest process time seen so far (>= 1).
 * The EWMA gain alpha is not given by the paper; the default 1/8 is
 * Remy's, which ASCAR adapts.  Gaps are kept in milliseconds (Table V's
 * ack_ewma values, 41-60, read as ms); all times passed in are seconds.
 *
 * A rule set maps boxes of the state space to actions A = <m, b, tau>
 * (sec. III-D): cwnd = m * cwnd + b, and tau is the minimum gap between
 * two successive outgoing requests.  The paper says tau is in
 * milliseconds, but its initial action (20000, Alg. 1 line 3) and search
 * limit (70000, Table II) only make sense in microseconds, so pfs reads
 * tau as microseconds.  Actions are applied at most twice a second
 * ("we limit the number of changes to the congestion window ... to two per
 * second"); the window is clamped to [cwnd_min, cwnd_max] (default 1..30,
 * the paper's upper limit of max_rpcs_in_flight).  The controller also
 * records, per rule, how often it was applied and the sum of the
 * indicators when it was (for the means SHARP splits at, sec. III-F).
 *
 * Rule-set text format (qos_ascar_ruleset_parse / _print), one rule per
 * line, boxes as half-open intervals in the paper's notation (Table V):
 *
 *     # ack_ewma(ms)  send_ewma(ms)  pt_ratio     m     b     tau(us)
 *     [41, 48)        [0, inf)       [2.4, 4.5)   1     -1.7  33
 *     [48, inf)       [0, inf)       [0, 4.5)     1     0.9   40
 *
 * '#' starts a comment; blank lines are ignored; numbers are C floating
 * point literals and "inf" for an open upper end.  Each interval needs
 * 0 <= lo < hi; m, b finite; tau finite and >= 0.  Boxes must not overlap
 * (so a state matches at most one rule); they need not cover the whole
 * space: a state outside every box leaves the window unchanged.  At least
 * one rule is required.  Printing uses the shortest %g form (6 to 17
 * significant digits) that reads back to the same double, so print ->
 * parse round-trips exactly.
 *
 * Pure: no clock, no I/O.  A rule set is a plain growable array owned by
 * the struct (free with qos_ascar_ruleset_free).  Not thread-safe. */
#ifndef QOS_ASCAR_H
#define QOS_ASCAR_H

#include <stddef.h>

#define QOS_ASCAR_DIM 3
enum { QOS_ASCAR_ACK = 0, QOS_ASCAR_SEND = 1, QOS_ASCAR_PT = 2 };

typedef struct qos_ascar_action {
	double m;   /* window multiplier */
	double b;   /* window increment */
	double tau; /* minimum gap between sends, microseconds */
} qos_ascar_action;

typedef struct qos_ascar_rule {
	double lo[QOS_ASCAR_DIM], hi[QOS_ASCAR_DIM]; /* box: lo <= c < hi */
	qos_ascar_action a;
	double hits;                 /* times applied (statistics) */
	double sum[QOS_ASCAR_DIM];   /* sum of the state when applied */
} qos_ascar_rule;

typedef struct qos_ascar_ruleset {
	qos_ascar_rule *r;
	size_t n, cap;
} qos_ascar_ruleset;

/* An empty rule set (no allocation). */
void qos_ascar_ruleset_init(qos_ascar_ruleset *rs);
void qos_ascar_ruleset_free(qos_ascar_ruleset *rs);
/* dst = src (dst must be initialised; its old rules are replaced).
 * Returns 0 or -ENOMEM. */
int qos_ascar_ruleset_copy(qos_ascar_ruleset *dst, const qos_ascar_ruleset *src);
/* Append a rule.  Returns 0, -EINVAL (bad box or action, or overlap with
 * an existing rule) or -ENOMEM. */
int qos_ascar_ruleset_add(qos_ascar_ruleset *rs, const double lo[QOS_ASCAR_DIM],
			  const double hi[QOS_ASCAR_DIM], qos_ascar_action a);
/* Alg. 1 line 3: one rule <[0,inf), [0,inf), [1,inf)> -> <1, 0, 20000>,
 * widened to pt_ratio [0, inf) so every state matches.  rs is replaced.
 * Returns 0 or -ENOMEM. */
int qos_ascar_ruleset_default(qos_ascar_ruleset *rs);
/* Index of the rule whose box holds state c, or -ENOENT. */
int qos_ascar_ruleset_lookup(const qos_ascar_ruleset *rs,
			     const double c[QOS_ASCAR_DIM]);
/* Zero every rule's hits and sums. */
void qos_ascar_ruleset_clear_stats(qos_ascar_ruleset *rs);

/* Parse text (format above) into rs (replaced).  Returns 0; -EINVAL with
 * *line set to the 1-based offending line (0: no rule at all); -ENOMEM.
 * line may be NULL.  On error rs is left empty. */
int qos_ascar_ruleset_parse(const char *text, qos_ascar_ruleset *rs, int *line);
/* Print rs in the text format into buf (snprintf-like: always
 * NUL-terminated if size > 0).  Returns the length of the full text
 * (excluding the NUL), so a return >= size means it was truncated. */
size_t qos_ascar_ruleset_print(const qos_ascar_ruleset *rs, char *buf,
			       size_t size);

typedef struct qos_ascar_params {
	double alpha;       /* EWMA gain in (0, 1]; 0: 1/8 */
	double cwnd_min;    /* >= 1; 0: 1 */
	double cwnd_max;    /* >= cwnd_min; 0: 30 */
	double max_changes; /* window changes per second; 0: 2 */
} qos_ascar_params;

typedef struct qos_ascar_ctl {
	qos_ascar_params p;
	double c[QOS_ASCAR_DIM]; /* ack_ewma (ms), send_ewma (ms), pt_ratio */
	double pt_min;           /* shortest process time seen (s) */
	double last_reply, last_sent; /* of the previous reply */
	unsigned long replies;
	double cwnd;             /* congestion window (fractional) */
	double tau;              /* current rate gap (us) */
	double last_change;      /* when an action was last applied */
	int changed;             /* an action has been applied */
	double last_send;        /* when the last request went out */
	int sent;
} qos_ascar_ctl;

/* Start a controller with window cwnd0 and gap tau0 (us).  Returns 0 or
 * -EINVAL (bad params, cwnd0 outside [cwnd_min, cwnd_max], tau0 < 0). */
int qos_ascar_ctl_init(qos_ascar_ctl *ctl, const qos_ascar_params *p,
		       double cwnd0, double tau0);

/* A reply arrived at now for a request sent at sent_at (seconds): update
 * ack_ewma, send_ewma and pt_ratio (Table I).  The first reply only sets
 * pt_min and the reference times; the first gap seeds each EWMA.  Send
 * gaps use |sent_at - previous sent_at| (replies may come out of order). */
void qos_ascar_ctl_reply(qos_ascar_ctl *ctl, double sent_at, double now);

/* Look the current state up in rs and apply the rule's action:
 * cwnd = clamp(m * cwnd + b), tau = rule's tau; count the rule's hit and
 * add the state to its sums.  At most p.max_changes actions per second.
 * Returns the rule index; -EAGAIN if the last action was less than
 * 1/max_changes s ago (nothing changes, no hit counted); -ENOENT if no
 * rule matches (nothing changes). */
int qos_ascar_ctl_apply(qos_ascar_ctl *ctl, qos_ascar_ruleset *rs, double now);

/* Requests allowed in flight: floor(cwnd), at least 1.  The client takes
 * the minimum of this and the server's RCC. */
unsigned qos_ascar_ctl_window(const qos_ascar_ctl *ctl);

/* A request was sent at now. */
void qos_ascar_ctl_sent(qos_ascar_ctl *ctl, double now);
/* Seconds from now until the next request may be sent (tau after the
 * previous one); 0 if it may go now. */
double qos_ascar_ctl_send_wait(const qos_ascar_ctl *ctl, double now);

#endif
