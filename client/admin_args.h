/* admin_args.h — pfsadmin command-line parsing.
 *
 *   pfsadmin [--mds HOST:PORT] [--json] [--timeout SECS] [--fsname NAME]
 *            [--key FILE | --no-auth] COMMAND [ARGS]
 *   pfsadmin -h | --help | help [COMMAND] | --version
 *     ost list [PATH]
 *     df [-h|--human-readable] [-i|--inodes] [PATH]
 *     setstripe [-c|--stripe-count N] [-S|--stripe-size SIZE] [-i|--stripe-index I]
 *               [-d|--delete] PATH       (-d: delete a directory's default)
 *     getstripe [-c|--stripe-count] [-S|--stripe-size] [-i|--stripe-index] [-y|--yaml]
 *               [-d|--directory] PATH...
 *     ping [-c|--count N] [PATH]
 *     lfsck [-n|--dry-run]
 *     job register JOBID [--nodes N] [--priority P] [--uid U] [--limit RATE]
 *                        [--no-throttle]
 *     job end JOBID | job list [--all] | job show JOBID
 *     jobstats [--job ID] [--watch SECS [--count N]]
 *     qos show [--job ID] | qos policy set [NAME] [KEY=VALUE ...]
 *     qos policy show | qos coupons [--job ID] | qos regret
 *     nrs tbf rule start|change NAME EXPR [--ost N]
 *     nrs tbf rule stop NAME [--ost N] | nrs tbf rule list [--ost N]
 *
 * Options are parsed with getopt_long and named as lfs names them; long
 * options take their value as the next word or after '=' ("--nodes=4"),
 * short ones also glued ("-c4").  Global options may also follow the command
 * ("pfsadmin df --json").  -h is help everywhere except in df, where it means
 * human-readable sizes as in lfs df; --help is help everywhere, and
 * "pfsadmin CMD --help" shows that command's help.
 *
 * getopt keeps its state in globals: every call resets it (optind = 0), so
 * parses do not leak into each other, but two threads must not parse at
 * once.  GNU getopt permutes argv (options before operands): the caller's
 * array is reordered, and the pointers in the result borrow its strings.
 * The parser never prints: errors come back as -EINVAL with a message in
 * err, which the caller shows with a pointer to the help (exit status 2).
 * Everything the wire limits (job ids, names, rule text) is checked here
 * against those limits. */
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
	CLI_ADMIN_ASCAR_LOAD,  /* qos ascar load FILE (file in a->path) */
	CLI_ADMIN_ASCAR_SHOW,
	CLI_ADMIN_ASCAR_OFF,
	CLI_ADMIN_NRS_RULE,    /* verb in nrs_verb */
	CLI_ADMIN_MDQOS_SHOW,  /* qos md show */
	CLI_ADMIN_MDQOS_SET,   /* qos md set KEY=VALUE..., qos md algo NAME [KEY=VALUE...] (verb 1) */
	CLI_ADMIN_LFSCK,       /* lfsck [--dry-run] */
	CLI_ADMIN_VERSION,
	CLI_ADMIN_CMD_COUNT,
} cli_admin_cmd;

/* stripe count meaning "every OST" (lfs setstripe -c -1) */
#define CLI_STRIPE_ALL (-1)
/* stripe index meaning "the MDS chooses" (lfs setstripe -i -1) */
#define CLI_STRIPE_INDEX_ANY (-1)
#define CLI_PING_MAX 1000
#define CLI_NODES_MAX 1000000u
#define CLI_PRIORITY_MAX 1e6
#define CLI_WATCH_MAX_S 86400.0
#define CLI_WATCH_COUNT_MAX 1000000u
/* --timeout: default and largest, in seconds. */
#define CLI_TIMEOUT_DEFAULT_S 10.0
#define CLI_TIMEOUT_MAX_S 3600.0
/* --fsname: as long as Lustre allows (8) and then some. */
#define CLI_FSNAME_MAX 16
#define CLI_FSNAME_DEFAULT "pfs"
/* Rule names and text as pfs_nrs_rule_info holds them (with the NUL). */
#define CLI_RULE_NAME_MAX ((int)sizeof(((pfs_nrs_rule_info *)0)->name))
#define CLI_RULE_EXPR_MAX ((int)sizeof(((pfs_nrs_rule_info *)0)->expr))

/* getstripe selectors (lfs getstripe -c / -S / -i). */
#define CLI_SEL_COUNT 0x1u
#define CLI_SEL_SIZE 0x2u
#define CLI_SEL_INDEX 0x4u

/* What setstripe was asked for.  Omitted values (have_* = 0) mean "the
 * default", as with lfs. */
typedef struct cli_stripe_req {
	int have_count, have_size, have_index;
	int32_t count;       /* 1..PFS_MAX_STRIPES or CLI_STRIPE_ALL */
	uint32_t size;       /* bytes, multiple of PFS_MIN_STRIPE_SIZE */
	int32_t index;       /* first OST, or CLI_STRIPE_INDEX_ANY */
	int del;             /* -d: delete a directory's default */
} cli_stripe_req;

/* One KEY=VALUE of "qos policy set". */
typedef struct cli_admin_param {
	char key[PFS_QOS_NAME_MAX];
	double value;
} cli_admin_param;

typedef struct cli_admin_args {
	cli_admin_cmd cmd;
	/* CLI_ADMIN_HELP: which help.  help_cmd CLI_ADMIN_HELP with
	 * help_family NULL is the whole usage; help_family ("job", "qos",
	 * "nrs", "ost") alone is that family's commands. */
	cli_admin_cmd help_cmd;
	const char *help_family;

	/* global options */
	const char *mds;     /* --mds value or NULL */
	int json;
	double timeout_s;    /* --timeout; 0 = not given (CLI_TIMEOUT_DEFAULT_S) */
	const char *fsname;  /* --fsname or NULL */
	const char *key;     /* --key FILE or NULL ($PFS_KEY, then the defaults) */
	int no_auth;         /* --no-auth */

	const char *path;    /* first PATH argument or NULL (= paths[0]) */
	const char *const *paths; /* every PATH (getstripe takes several) */
	int npaths;

	int human;           /* df -h */
	int inodes;          /* df -i */
	cli_stripe_req stripe; /* setstripe */
	unsigned select;     /* getstripe CLI_SEL_* (0 = everything) */
	int yaml;            /* getstripe -y */
	unsigned ping_count; /* ping -c, default 1 */
	int dry_run;         /* lfsck --dry-run */

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
	/* qos md set/algo: KEY=VALUE words as typed (checked), and their count */
	const char *const *mdq_kv;
	int mdq_nkv;
	unsigned nparams;
	cli_admin_param params[PFS_QOS_PARAMS_MAX];
	int nrs_verb;        /* PFS_NRS_START/CHANGE/STOP/LIST */
	const char *rule;    /* rule NAME (NULL for list) */
	const char *expr;    /* rule EXPR (start/change) */
	int have_ost;
	uint32_t ost;        /* --ost N */
} cli_admin_args;

/* Parse argv[1..argc) into a (argv is permuted, see above).  0, or -EINVAL
 * with a message in err; a->cmd is then the command as far as it was
 * recognised (CLI_ADMIN_HELP if none), or a->help_family its family, for a
 * pointer to their help. */
int cli_admin_parse_args(int argc, char **argv, cli_admin_args *a, char *err, size_t errlen);

/* Check a stripe count/size/index given as text, as setstripe does.
 * 0 or -EINVAL with a message in err. */
int cli_admin_parse_count(const char *s, int32_t *count, char *err, size_t errlen);
int cli_admin_parse_stripe_size(const char *s, uint32_t *size, char *err, size_t errlen);
int cli_admin_parse_stripe_index(const char *s, int32_t *index, char *err, size_t errlen);
/* --timeout SECS: a number above 0, at most CLI_TIMEOUT_MAX_S. */
int cli_admin_parse_timeout(const char *s, double *secs, char *err, size_t errlen);
/* A file system name: 1..CLI_FSNAME_MAX of [A-Za-z0-9_-]. */
int cli_admin_check_fsname(const char *s, char *err, size_t errlen);

/* Parse a rate as TBF rule text writes it (qos/tbf_rule.h): a number with
 * an optional SI (K, M, G, T: powers of 1000) or binary (Ki, Mi, Gi, Ti)
 * suffix, then optionally "B", "B/s" or "/s": "100MB/s" = 1e8 bytes/s.
 * 0 or -EINVAL (not a rate, negative, above 1e15). */
int cli_admin_parse_rate(const char *s, double *bytes_per_s);

/* The help texts (admin_help.c).  cli_admin_usage: every command, one line
 * each, and the global options.  cli_admin_help: what args asks for (a
 * command, a family, or the whole usage).  cli_admin_version: one line. */
void cli_admin_usage(FILE *out);
void cli_admin_help(const cli_admin_args *args, FILE *out);
void cli_admin_version(FILE *out);
/* The command's name as typed ("ost list", "qos policy set"); "" for HELP. */
const char *cli_admin_cmd_name(cli_admin_cmd cmd);

#endif
