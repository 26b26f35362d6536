/* admin_args.h — pfsadmin command-line parsing.
 *
 *   pfsadmin [--mds HOST:PORT] [--json] COMMAND [ARGS]
 *     ost list [PATH]
 *     df [-h] [PATH]
 *     setstripe [-c COUNT] [-S SIZE] PATH    (at least one of -c, -S)
 *     getstripe PATH
 *     ping [-c COUNT] [PATH]
 *     job register JOBID [--nodes N] [--priority P] [--uid U] [--limit RATE]
 *                        [--no-throttle]
 *     job end JOBID | job list [--all] | job show JOBID
 *     jobstats [--job ID] [--watch SECS [--count N]]
 *     qos show [--job ID] | qos policy set [NAME] [KEY=VALUE ...]
 *     qos policy show | qos coupons [--job ID] | qos regret
 *     nrs tbf rule start|change NAME EXPR [--ost N]
 *     nrs tbf rule stop NAME [--ost N] | nrs tbf rule list [--ost N]
 *     help
 *
 * Global options may also follow the command ("pfsadmin df --json").  Options
 * with a value take it as the next word or after '=' ("--nodes=4").  The
 * parser is re-entrant (no getopt state) and never prints: errors come back
 * as -EINVAL with a message in err, which the caller shows with the usage
 * (exit status 2).  Pointers in the result borrow argv; everything the wire
 * limits (job ids, names, rule text) is checked here against those limits. */
#ifndef CLI_ADMIN_ARGS_H
#define CLI_ADMIN_ARGS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/qosmsg.h"

typedef enum cli_admin_cmd {
	CLI_ADMIN_HELP = 0,
	CLI_ADMIN_OST_LIST,
	CLI_ADMIN_DF,
	CLI_ADMIN_SETSTRIPE,
	CLI_ADMIN_GETSTRIPE,
	CLI_ADMIN_PING,
	CLI_ADMIN_JOB_REGISTER,
	CLI_ADMIN_JOB_END,
	CLI_ADMIN_JOB_LIST,
	CLI_ADMIN_JOB_SHOW,
	CLI_ADMIN_JOBSTATS,
	CLI_ADMIN_QOS_SHOW,
	CLI_ADMIN_QOS_POLICY_SET,
	CLI_ADMIN_QOS_POLICY_SHOW,
	CLI_ADMIN_QOS_COUPONS,
	CLI_ADMIN_QOS_REGRET,
	CLI_ADMIN_NRS_RULE,    /* verb in nrs_verb */
	CLI_ADMIN_CMD_COUNT,
} cli_admin_cmd;

/* stripe count meaning "every OST" (lfs setstripe -c -1) */
#define CLI_STRIPE_ALL (-1)
#define CLI_PING_MAX 1000
#define CLI_NODES_MAX 1000000u
#define CLI_PRIORITY_MAX 1e6
#define CLI_WATCH_MAX_S 86400.0
#define CLI_WATCH_COUNT_MAX 1000000u
/* Rule names and text as pfs_nrs_rule_info holds them (with the NUL). */
#define CLI_RULE_NAME_MAX ((int)sizeof(((pfs_nrs_rule_info *)0)->name))
#define CLI_RULE_EXPR_MAX ((int)sizeof(((pfs_nrs_rule_info *)0)->expr))

/* One KEY=VALUE of "qos policy set". */
typedef struct cli_admin_param {
	char key[PFS_QOS_NAME_MAX];
	double value;
} cli_admin_param;

typedef struct cli_admin_args {
	cli_admin_cmd cmd;
	const char *mds;     /* --mds value or NULL */
	int json;
	int human;           /* df -h */
	int have_count, have_size;
	int32_t count;       /* setstripe -c: 1..PFS_MAX_STRIPES or CLI_STRIPE_ALL */
	uint32_t size;       /* setstripe -S: bytes, multiple of PFS_MIN_STRIPE_SIZE */
	unsigned ping_count; /* ping -c, default 1 */
	const char *path;    /* PATH argument or NULL */

	/* job, jobstats, qos, nrs */
	const char *job;     /* JOBID of job register/end/show, or --job ID (NULL: all) */
	int all;             /* job list --all */
	uint32_t nodes;      /* job register --nodes, default 1 */
	double priority;     /* --priority, default 1 */
	int have_uid;
	uint32_t uid;        /* --uid (have_uid), else the caller's uid */
	double limit;        /* --limit, bytes/s (0 = none) */
	int no_throttle;     /* --no-throttle */
	double watch_s;      /* jobstats --watch (0 = one report) */
	unsigned watch_count; /* --count (0 = until interrupted) */
	const char *policy;  /* qos policy set NAME ("" = keep the policy) */
	unsigned nparams;
	cli_admin_param params[PFS_QOS_PARAMS_MAX];
	int nrs_verb;        /* PFS_NRS_START/CHANGE/STOP/LIST */
	const char *rule;    /* rule NAME (NULL for list) */
	const char *expr;    /* rule EXPR (start/change) */
	int have_ost;
	uint32_t ost;        /* --ost N */
} cli_admin_args;

/* Parse argv[1..argc) into a.  0, or -EINVAL with a message in err. */
int cli_admin_parse_args(int argc, char **argv, cli_admin_args *a, char *err, size_t errlen);

/* Check a stripe count/size given as text, as setstripe does.
 * 0 or -EINVAL with a message in err. */
int cli_admin_parse_count(const char *s, int32_t *count, char *err, size_t errlen);
int cli_admin_parse_stripe_size(const char *s, uint32_t *size, char *err, size_t errlen);

/* Parse a rate as TBF rule text writes it (oss/tbf_rule.h): a number with
 * an optional SI (K, M, G, T: powers of 1000) or binary (Ki, Mi, Gi, Ti)
 * suffix, then optionally "B", "B/s" or "/s": "100MB/s" = 1e8 bytes/s.
 * 0 or -EINVAL (not a rate, negative, above 1e15). */
int cli_admin_parse_rate(const char *s, double *bytes_per_s);

void cli_admin_usage(FILE *out);

#endif
