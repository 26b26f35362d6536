/* admin_mdqos.h — pfsadmin's view of PADLL, the MDS's metadata QoS
 * (PFS_OP_MDS_MDQOS_SHOW / _SET, mds/mdqos.h):
 *
 *   qos md show                 algorithm, period, ε, Max_R per class, and
 *                               per (job, class): demand, arrived/s,
 *                               served/s, rate
 *   qos md set KEY=VALUE...     algo=NAME, interval_ms=N, epsilon=E,
 *                               jobs=N, weight_sum=W, max_r.CLASS=R|off,
 *                               demand.CLASS=R|off (with --job ID)
 *   qos md algo NAME [KEY=VALUE...]   the same with algo=NAME first
 *
 * Classes: open close getattr setattr create mkdir unlink rename readdir
 * xattr read write.  Unknown keys, classes or algorithms and rates that
 * are not > 0 are refused here with a message, before anything is sent;
 * the MDS checks again and changes nothing on -EINVAL.
 *
 * JSON: {"algo", "interval_ms", "epsilon", "jobs", "weight_sum",
 * "generation", "held", "max_r": {CLASS: rate}, "rates": [{"job",
 * "class", "demand" (null = none), "arrived", "served", "rate" (null = not
 * limited)}]}; rates in requests/s. */
#ifndef CLI_ADMIN_MDQOS_H
#define CLI_ADMIN_MDQOS_H

#include <stddef.h>

#include "client/admin_args.h"
#include "client/admin_cmd.h"

/* Check the words of qos md set (algo = 1: qos md algo, first word is the
 * algorithm).  0 or -EINVAL with err. */
int cli_admin_mdqos_check(int algo, const char *job, const char *const *kv, int n,
			  char *err, size_t errlen);
int cli_admin_mdqos_show(cli_admin *a, const cli_admin_args *args);
int cli_admin_mdqos_set(cli_admin *a, const cli_admin_args *args);

#endif
