/* static_policy.h — the "static" QoS policy: fixed priority-proportional
 * shares of each OST's capacity among the jobs active on it.
 *
 * This is the "Static BW" baseline of adaptbf.txt sec. IV (static TBF rules
 * set from each job's priority, "the proportion of allocated resources
 * relative to the total resources available"): on OST o with capacity c_o,
 * job j active on o gets
 *     alloc_{j,o} = c_o * w_j / sum_{k active on o} w_k,
 *     w_j = nodes_j * priority_j
 * (a missing or non-positive node count or priority counts as 1, so with
 * no priorities set the shares follow node counts, as in the paper).
 * Shares ignore usage and demand: capacity a job leaves unused is wasted,
 * which is exactly what the adaptive policies improve on.  A job inactive
 * on an OST gets 0 there.  effective = sum min(alloc, usage) when the
 * instance has usage (the rate the allocation serves if demand repeats),
 * else sum alloc.  The policy keeps no per-job state and takes no
 * parameters (any key is -EINVAL). */
#ifndef QOS_STATIC_POLICY_H
#define QOS_STATIC_POLICY_H

#include "qos/policy.h"

/* Fill alloc[n_jobs * n_osts] with the static shares of instance in.
 * active == NULL means every job is active on every OST.
 * Returns 0, or -EINVAL (NULL arrays, negative or non-finite capacity). */
int qos_static_shares(const qos_instance *in, double *alloc);

extern const qos_policy_ops qos_policy_static;

#endif
