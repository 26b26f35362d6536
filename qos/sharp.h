/* sharp.h — SHARP, ASCAR's offline traffic-rule producer (ascar.txt
 * sec. III-F, Algorithm 1, Table II).
 *
 * Starting from one rule mapping the whole state space to <1, 0, 20000>
 * (Alg. 1 line 3), SHARP runs epochs.  In each epoch it optimises only the
 * hottest rule (the one applied most often): every round builds candidate
 * rule sets from the Cartesian product of values for m, b and tau, each
 * moved geometrically from its current value (line 12):
 *     x, x +- g, x +- g*k, x +- g*k^2, ..., x +- g*k^steps
 * with g = delta_gran and the step size k = ((upper - lower) / g)^(1/steps)
 * (the paper's step-size formula), clamped to [lower, upper]; it
 * benchmarks every candidate (lines 14-22) and continues from the best.
 * When a round does not beat the epoch's best (line 28) the hottest rule
 * of the epoch's best set is split at the observed mean of each indicator
 * into up to 2^3 boxes that inherit its action (line 30), and the next
 * epoch starts.  Table II's settings are the defaults: m in [0.3, 2] with
 * delta 0.05 and 4 steps; b in [-2.3, 2.3], 0.3, 4; tau in [0, 70000],
 * 500, 6.
 *
 * Deviations, all because the paper's loop is written for a noisy real
 * system that an operator stops by hand:
 *  - the search stops after max_epochs epochs or max_evals benchmark runs;
 *  - scores may be negative (Eq. (1): tp - alpha*var), so best scores
 *    start at -infinity rather than 0;
 *  - "until roundBestScore < epochBestScore" would never end with a
 *    deterministic benchmark (the current rule set is itself a candidate
 *    and scores the same again), so a round ends the epoch when it does
 *    not improve on the epoch's best;
 *  - each epoch starts by benchmarking the current rule set once, to get
 *    the per-rule statistics that name the hottest rule after a split;
 *  - the paper's re-runs of the top candidates against noise are left to
 *    the benchmark callback (it may average several runs).
 * A dimension whose observed mean is not strictly inside the hottest
 * rule's box is not split; a hottest rule with no hits ends the search.
 *
 * Budgeted search (qos_sharp_search): Algorithm 1 benchmarks the whole
 * Cartesian product of every round (up to 11 x 11 x 15 runs), which a
 * live cluster cannot afford.  qos_sharp_search spends exactly a stated
 * number of runs instead, drawing candidates from the same value grids
 * (qos_sharp_values) with a seeded generator:
 *  - QOS_SHARP_HILL: stochastic hill climbing.  Run 1 benchmarks the start
 *    set.  Each later run moves the hottest rule of the current set (the
 *    one applied most often in its last run; any rule when none was hit):
 *    each of m, b and tau is drawn uniformly from its grid around the
 *    rule's current value.  A candidate that scores above the current set
 *    becomes the current set.  After `patience` runs without improvement
 *    the hottest rule of the current set is split at its observed means
 *    (Alg. 1 line 30) and the split set, benchmarked once, becomes the
 *    current set, so the rest of the budget tunes finer rules.
 *  - QOS_SHARP_SAMPLED: random sampling.  Every run draws every rule's
 *    action from the grids around the start set's actions (geometric, so
 *    they span each variable's whole range); no splits.
 * The result is the best-scoring set benchmarked (noisy benchmarks: the
 * callback may average runs; the caller should re-run the winner).
 *
 * Score: qos_sharp_score combines throughput and 99th-percentile latency
 * relative to a reference run (usually the first), with a weight.
 *
 * Pure: the benchmark is the caller's callback (a simulator, a test
 * function, or a harness that deploys the rules to real clients), the
 * random draws come from the caller's seed. */
#ifndef QOS_SHARP_H
#define QOS_SHARP_H

#include <stddef.h>

#include "qos/ascar.h"

/* Run the signature workload with rule set rs deployed; fill each rule's
 * statistics (hits, sum: qos_ascar_ctl_apply does this when the
 * controllers use rs) and set *score = objFunc(result).  rs arrives with
 * statistics cleared.  Return 0, or a negative errno to abort the search
 * (qos_sharp_run returns it). */
typedef int (*qos_sharp_bench_fn)(void *arg, qos_ascar_ruleset *rs,
				  double *score);

typedef struct qos_sharp_var {
	double lower, upper; /* limits of the action variable */
	double delta_gran;   /* smallest move, > 0 */
	double steps;        /* geometric steps, >= 1 */
} qos_sharp_var;

enum { QOS_SHARP_M = 0, QOS_SHARP_B = 1, QOS_SHARP_TAU = 2 };

typedef struct qos_sharp_params {
	qos_sharp_var var[3];     /* m, b, tau; all-zero entry: Table II */
	unsigned max_epochs;      /* 0: 4 (1 rule -> 29 rules, sec. III-F) */
	unsigned long max_evals;  /* 0: no limit */
	const qos_ascar_ruleset *start; /* NULL: Alg. 1 line 3's single rule */
} qos_sharp_params;

typedef struct qos_sharp_result {
	qos_ascar_ruleset best;   /* best rule set benchmarked, with its stats */
	double best_score;
	unsigned epochs;          /* epochs completed */
	unsigned long evals;      /* benchmark runs */
} qos_sharp_result;

/* Table II's setting for variable QOS_SHARP_M, _B or _TAU. */
qos_sharp_var qos_sharp_table2(int var);

/* Step size k = ((upper - lower) / delta_gran)^(1 / steps). */
double qos_sharp_step_size(const qos_sharp_var *v);

/* Candidate values for a variable at current value x (sorted, distinct,
 * within the limits, x itself included after clamping).  Writes at most
 * cap values; returns how many there are (at most 2 * (steps + 1) + 1),
 * or -EINVAL for a bad setting. */
int qos_sharp_values(const qos_sharp_var *v, double x, double *out, size_t cap);

/* Split rule i of rs at its observed means (sum / hits) into up to 8 rules
 * with the same action and no statistics: the first replaces rule i, the
 * others are appended.  Returns the number of rules it became (1 if no
 * dimension could be split), -EINVAL (bad index or no hits) or -ENOMEM. */
int qos_sharp_split(qos_ascar_ruleset *rs, size_t i);

/* Algorithm 1.  out->best must be freed with qos_sharp_result_free, also
 * on error.  Returns 0 (budget reached or no rule left to split), the
 * callback's negative errno, -EINVAL (bad params) or -ENOMEM. */
int qos_sharp_run(const qos_sharp_params *p, qos_sharp_bench_fn bench,
		  void *arg, qos_sharp_result *out);
void qos_sharp_result_free(qos_sharp_result *r);

enum qos_sharp_mode { QOS_SHARP_HILL = 0, QOS_SHARP_SAMPLED = 1 };

typedef struct qos_sharp_budget {
	qos_sharp_var var[3];     /* m, b, tau; all-zero entry: Table II */
	unsigned long runs;       /* benchmark runs to spend, >= 1 */
	int mode;                 /* enum qos_sharp_mode */
	unsigned long long seed;  /* the draws (same seed, same candidates) */
	unsigned patience;        /* HILL: failed runs before a split;
	                             0: max(3, runs / 4) */
	const qos_ascar_ruleset *start; /* NULL: Alg. 1 line 3's single rule */
} qos_sharp_budget;

/* The budgeted search (see the top).  Spends exactly p->runs benchmark
 * runs unless the callback fails.  out as for qos_sharp_run (epochs =
 * splits made).  Returns 0, the callback's negative errno, -EINVAL (bad
 * settings, runs = 0, unknown mode) or -ENOMEM. */
int qos_sharp_search(const qos_sharp_budget *p, qos_sharp_bench_fn bench,
		     void *arg, qos_sharp_result *out);

/* Score of a run with throughput tp and 99th-percentile latency p99
 * against a reference run (tp_ref, p99_ref; <= 0 counts as 1):
 *     (1 - w) * tp / tp_ref - w * p99 / p99_ref
 * w in [0, 1] (clamped): 0 = throughput only, 1 = latency only.  A
 * non-finite or negative tp or p99 scores -infinity. */
double qos_sharp_score(double tp, double p99, double tp_ref, double p99_ref,
		       double w);

#endif
