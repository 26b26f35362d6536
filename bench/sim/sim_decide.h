/* sim_decide.h — `pfs-sim decide`: replay decision instances given as JSON
 * through any policy and print one JSON line per instance.
 *
 * The input contract (bench/sim/README.md has examples):
 *   {"osts": [{"id": "ost1", "capacity": 1.0}, ...],
 *    "jobs": [{"id": "A", "nodes": 4, "priority": 1, "limit": 500,
 *              "throttle_friendly": true}, ...],
 *    "params": {"tau": 0.8, ...}, "period": 10, "seed": 1,
 *    "instances": [{"active": {"A": ["ost1"]}, "usage": {"A": {"ost1": 120}},
 *                   "demand": {...}, "now": 0, "period": 10}, ...]}
 * Job defaults: nodes 1, priority 1, limit 0 (none), throttle_friendly
 * true.  period defaults to 10 s (GIFT's decision interval), now to
 * k·period.  An instance holds the jobs named in its active/usage/demand
 * maps, in the order of "jobs"; without "active" every job is active on
 * every OST.  Unknown keys anywhere are errors (typos must not pass).
 *
 * Output per instance, keys in this order, each optional one present only
 * if the policy wrote it: {"instance": k (0-based), "alloc": {job: {ost:
 * rate}}, "coupons": {job: value}, "records": {job: {ost: r}}, "tokens":
 * {job: {ost: n}}, "effective": x}.  alloc lists a job's active OSTs and
 * any other OST where it got a non-zero rate. */
#ifndef SIM_DECIDE_H
#define SIM_DECIDE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "qos/policy.h"

typedef struct sim_decide sim_decide;

/* Parse and validate the whole input.  On error returns -EINVAL (or
 * -ENOMEM) and writes a message naming the offending field to err.
 * The caller frees *out with sim_decide_free. */
int sim_decide_parse(const char *text, size_t len, sim_decide **out, char *err, size_t errlen);
void sim_decide_free(sim_decide *d);
/* Replace the input's "seed" (the command line's --seed). */
void sim_decide_set_seed(sim_decide *d, uint64_t seed);
size_t sim_decide_count(const sim_decide *d);

/* Run every instance through ops; params are the input's "params"
 * overridden by extra (the command line's --param).  Prints one line per
 * instance to out.  Returns 0; -EINVAL if the policy rejects the params
 * (message in err); the policy's error from decide, with the instance
 * named in err. */
int sim_decide_run(const sim_decide *d, const qos_policy_ops *ops, const qos_param *extra,
		   size_t n_extra, FILE *out, char *err, size_t errlen);

/* Parse "k=v" (v a number) into a param; key is borrowed from s and
 * the '=' replaced by NUL.  -EINVAL if malformed. */
int sim_decide_param_parse(char *s, qos_param *p);

#endif
