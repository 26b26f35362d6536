/* admin_job.h — pfsadmin's job registry commands (PFS_OP_MDS_JOB_*):
 *
 *   job register JOBID [--nodes N] [--priority P] [--uid U] [--limit RATE]
 *                      [--no-throttle]
 *   job end JOBID
 *   job list [--all]
 *   job show JOBID
 *
 * register sends a pfs_job_info: the owner is --uid, else the caller; the
 * job may be throttled for GIFT coupons unless --no-throttle; --limit is an
 * admin cap per OST in bytes/s (0 = none).  Registering a running job again
 * updates it and keeps its start, and ending an ended job changes nothing
 * (mds/jobs.h), so a Slurm prolog and epilog may run on every node of a job
 * and both requests are resent after a lost reply.
 *
 * The MDS decides who may do what (register/end: root, or the owner for a
 * job of its own; list/show: a non-root caller sees its own jobs), from the
 * uid in the request header; its -EPERM/-EACCES and -ENOENT come back with a
 * message saying so.
 *
 * JSON:
 *   register: {"action": "register", "job": JOB}     (JOB without state/times)
 *   end:      {"action": "end", "job": "ID"}
 *   list:     {"jobs": [JOB, ...]}
 *   show:     JOB
 *   JOB = {"job", "uid", "nodes", "priority" (real), "limit_bytes_per_s"
 *          (0 = none), "throttle_friendly" (bool), "state" ("running" |
 *          "ended"), "registered" (bool; false = only seen on the wire),
 *          "start_ns", "end_ns" (0 while running)} */
#ifndef CLI_ADMIN_JOB_H
#define CLI_ADMIN_JOB_H

#include "client/admin_args.h"
#include "client/admin_cmd.h"

/* Each: 0, a server or transport errno, or -EBADMSG for a malformed reply;
 * uses args->job, ->all, ->nodes, ->priority, ->have_uid/uid, ->limit,
 * ->no_throttle as the command line set them. */
int cli_admin_job_register(cli_admin *a, const cli_admin_args *args);
int cli_admin_job_end(cli_admin *a, const cli_admin_args *args);
int cli_admin_job_list(cli_admin *a, const cli_admin_args *args);
int cli_admin_job_show(cli_admin *a, const cli_admin_args *args);

#endif
