/* sim_policy.h — how pfs-sim finds a policy by name, and its one private
 * policy.
 *
 * Names are looked up in qos/'s registry first (qos_policy_find), so every
 * policy there is usable without pfs-sim knowing it.  pfs-sim adds one
 * policy of its own, "sim-equal": each OST's capacity split equally among
 * the jobs active on it (per-OST fair share without weights, i.e. POFS of
 * GIFT Fig. 5).  It exists so the simulator can be tested without depending
 * on qos/ work, and it is the POFS reference of last resort when qos/ has
 * no "pofs". */
#ifndef SIM_POLICY_H
#define SIM_POLICY_H

#include "qos/policy.h"

extern const qos_policy_ops sim_policy_equal;

/* The policy called name, from qos/ first, then pfs-sim's own; NULL if
 * none. */
const qos_policy_ops *sim_policy_find(const char *name);

#endif
