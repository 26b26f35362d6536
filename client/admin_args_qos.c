/* admin_args_qos.c — command lines of pfsadmin's job, jobstats, qos and nrs
 * families (see admin_args.h for the grammar).  The command words are
 * matched in admin_args.c; here each command's long options go through
 * cli__getopt and its operands are checked.
 *
 * Every value the wire bounds is checked here, so a command never sends
 * what the server would refuse as malformed: job ids fit the header's
 * PFS_JOBID_MAX bytes and hold no blanks (TBF rules list job ids separated
 * by blanks), policy names and keys fit PFS_QOS_NAME_MAX, at most
 * PFS_QOS_PARAMS_MAX parameters, rule names and text fit pfs_nrs_rule_info.
 * Whether a policy or key exists, or rule text parses, is the server's call
 * (it answers -EINVAL). */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "client/admin_i.h"
#include "client/admin_mdqos.h"

#define RATE_MAX 1e15 /* bytes/s: far above any OST, so only typos are refused */

/* Options of these families: long only, codes above every char. */
enum {
	O_NODES = 300, O_PRIORITY, O_UID, O_LIMIT, O_NO_THROTTLE, O_ALL, O_JOB, O_WATCH,
	O_COUNT, O_OST
};

static const struct option register_opts[] = {
	{ "nodes", required_argument, NULL, O_NODES },
	{ "priority", required_argument, NULL, O_PRIORITY },
	{ "uid", required_argument, NULL, O_UID },
	{ "limit", required_argument, NULL, O_LIMIT },
	{ "no-throttle", no_argument, NULL, O_NO_THROTTLE },
	{ NULL, 0, NULL, 0 },
};
static const struct option list_opts[] = {
	{ "all", no_argument, NULL, O_ALL },
	{ NULL, 0, NULL, 0 },
};
static const struct option job_opts[] = {
	{ "job", required_argument, NULL, O_JOB },
	{ NULL, 0, NULL, 0 },
};
static const struct option jobstats_opts[] = {
	{ "job", required_argument, NULL, O_JOB },
	{ "watch", required_argument, NULL, O_WATCH },
	{ "count", required_argument, NULL, O_COUNT },
	{ NULL, 0, NULL, 0 },
};
static const struct option nrs_opts[] = {
	{ "ost", required_argument, NULL, O_OST },
	{ NULL, 0, NULL, 0 },
};

/* Per command: its options and positional arguments (min, max; max -1 =
 * any number). */
static const struct {
	const struct option *opts;
	int min_pos, max_pos;
} cmds[CLI_ADMIN_CMD_COUNT] = {
	[CLI_ADMIN_JOB_REGISTER] = { register_opts, 1, 1 },
	[CLI_ADMIN_JOB_END] = { NULL, 1, 1 },
	[CLI_ADMIN_JOB_LIST] = { list_opts, 0, 0 },
	[CLI_ADMIN_JOB_SHOW] = { NULL, 1, 1 },
	[CLI_ADMIN_JOBSTATS] = { jobstats_opts, 0, 0 },
	[CLI_ADMIN_QOS_SHOW] = { job_opts, 0, 0 },
	[CLI_ADMIN_QOS_POLICY_SET] = { NULL, 1, -1 },
	[CLI_ADMIN_QOS_POLICY_SHOW] = { NULL, 0, 0 },
	[CLI_ADMIN_QOS_COUPONS] = { job_opts, 0, 0 },
	[CLI_ADMIN_QOS_REGRET] = { NULL, 0, 0 },
	[CLI_ADMIN_ASCAR_LOAD] = { NULL, 1, 1 },
	[CLI_ADMIN_ASCAR_SHOW] = { NULL, 0, 0 },
	[CLI_ADMIN_ASCAR_OFF] = { NULL, 0, 0 },
	[CLI_ADMIN_MDQOS_SHOW] = { NULL, 0, 0 },
	[CLI_ADMIN_MDQOS_SET] = { job_opts, 1, -1 },
	/* the count depends on the verb: positionals() checks it */
	[CLI_ADMIN_NRS_RULE] = { nrs_opts, 0, -1 },
};

static const char *const nrs_verbs[] = {
	[PFS_NRS_START] = "start", [PFS_NRS_CHANGE] = "change",
	[PFS_NRS_STOP] = "stop", [PFS_NRS_LIST] = "list",
};

int cli_admin_parse_rate(const char *s, double *out)
{
	static const struct { const char *sfx; double mul; } units[] = {
		{ "Ki", 1024.0 }, { "Mi", 1048576.0 }, { "Gi", 1073741824.0 },
		{ "Ti", 1099511627776.0 }, { "K", 1e3 }, { "k", 1e3 }, { "M", 1e6 },
		{ "G", 1e9 }, { "T", 1e12 },
	};
	double v, mul = 1;
	char *end;

	/* strtod would take "inf", "nan", hex and leading blanks: want decimal
	 * digits. */
	if ((!isdigit((unsigned char)s[0]) && !(s[0] == '.' && isdigit((unsigned char)s[1]))) ||
	    strpbrk(s, "xX"))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v))
		return -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		size_t n = strlen(units[i].sfx);

		if (strncmp(end, units[i].sfx, n) == 0) {
			mul = units[i].mul;
			end += n;
			break;
		}
	}
	if (strcmp(end, "B") == 0 || strcmp(end, "B/s") == 0 || strcmp(end, "/s") == 0)
		end += strlen(end);
	if (*end)
		return -EINVAL;
	v *= mul;
	if (v > RATE_MAX)
		return -EINVAL;
	*out = v;
	return 0;
}

/* A job id: 1..PFS_JOBID_MAX printable bytes, no blanks. */
static int check_job(const char *s, char *err, size_t errlen)
{
	size_t n = strlen(s);

	if (n == 0 || n > PFS_JOBID_MAX)
		return cli__fail(err, errlen, "job id '%s' must be 1..%d bytes", s, PFS_JOBID_MAX);
	for (size_t k = 0; k < n; k++)
		if (!isgraph((unsigned char)s[k]))
			return cli__fail(err, errlen,
					 "job id '%s' has a blank or control character", s);
	return 0;
}

/* A name (policy, key, rule): 1..max-1 bytes of [A-Za-z0-9_.-]. */
static int check_name(const char *what, const char *s, size_t len, size_t max, char *err,
		      size_t errlen)
{
	if (len == 0 || len >= max)
		return cli__fail(err, errlen, "%s '%.*s' must be 1..%zu characters", what,
				 (int)len, s, max - 1);
	for (size_t k = 0; k < len; k++)
		if (!isalnum((unsigned char)s[k]) && !strchr("_.-", s[k]))
			return cli__fail(err, errlen, "%s '%.*s' may only have letters, digits, "
					 "'_', '.' and '-'", what, (int)len, s);
	return 0;
}

static int parse_u32(const char *opt, const char *s, unsigned long min, unsigned long max,
		     uint32_t *out, char *err, size_t errlen)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || !isdigit((unsigned char)s[0]) || v < min || v > max)
		return cli__fail(err, errlen, "%s '%s' must be a whole number %lu..%lu", opt, s,
				 min, max);
	*out = (uint32_t)v;
	return 0;
}

static int parse_real(const char *opt, const char *s, double min_excl, double max, double *out,
		      char *err, size_t errlen)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || isspace((unsigned char)s[0]) ||
	    !(v > min_excl) || v > max)
		return cli__fail(err, errlen, "%s '%s' must be a number above %g, at most %g",
				 opt, s, min_excl, max);
	*out = v;
	return 0;
}

/* KEY=VALUE of qos policy set. */
static int add_param(cli_admin_args *a, const char *s, char *err, size_t errlen)
{
	const char *eq = strchr(s, '=');
	char *end;
	double v;
	int rc;

	if (!eq)
		return cli__fail(err, errlen, "'%s' is not KEY=VALUE", s);
	rc = check_name("parameter", s, (size_t)(eq - s), PFS_QOS_NAME_MAX, err, errlen);
	if (rc)
		return rc;
	errno = 0;
	v = strtod(eq + 1, &end);
	if (errno || end == eq + 1 || *end || !isfinite(v) || isspace((unsigned char)eq[1]))
		return cli__fail(err, errlen, "value of '%s' is not a number", s);
	for (unsigned k = 0; k < a->nparams; k++)
		if (strlen(a->params[k].key) == (size_t)(eq - s) &&
		    strncmp(a->params[k].key, s, (size_t)(eq - s)) == 0)
			return cli__fail(err, errlen, "parameter '%.*s' given twice",
					 (int)(eq - s), s);
	if (a->nparams >= PFS_QOS_PARAMS_MAX)
		return cli__fail(err, errlen, "at most %d parameters", PFS_QOS_PARAMS_MAX);
	memcpy(a->params[a->nparams].key, s, (size_t)(eq - s));
	a->params[a->nparams].key[eq - s] = '\0';
	a->params[a->nparams++].value = v;
	return 0;
}

/* One option of these families (cli__optfn). */
static int family_opt(int o, const char *val, cli_admin_args *a, char *err, size_t errlen)
{
	switch (o) {
	case O_NODES:
		return parse_u32("--nodes", val, 1, CLI_NODES_MAX, &a->nodes, err, errlen);
	case O_PRIORITY:
		return parse_real("--priority", val, 0, CLI_PRIORITY_MAX, &a->priority, err,
				  errlen);
	case O_UID:
		a->have_uid = 1;
		return parse_u32("--uid", val, 0, UINT32_MAX - 1, &a->uid, err, errlen);
	case O_LIMIT:
		if (cli_admin_parse_rate(val, &a->limit))
			return cli__fail(err, errlen,
					 "--limit '%s' is not a rate (e.g. 100MB/s, 1.5G, 0)", val);
		return 0;
	case O_NO_THROTTLE:
		a->no_throttle = 1;
		return 0;
	case O_ALL:
		a->all = 1;
		return 0;
	case O_JOB:
		a->job = val;
		return check_job(val, err, errlen);
	case O_WATCH:
		return parse_real("--watch", val, 0, CLI_WATCH_MAX_S, &a->watch_s, err, errlen);
	case O_COUNT:
		return parse_u32("--count", val, 1, CLI_WATCH_COUNT_MAX, &a->watch_count, err,
				 errlen);
	default: /* O_OST */
		a->have_ost = 1;
		return parse_u32("--ost", val, 0, PFS_QOS_OST_ALL - 1, &a->ost, err, errlen);
	}
}

/* Put the positional words where the command wants them. */
static int positionals(cli_admin_args *a, const char **pos, int npos, char *err,
		       size_t errlen)
{
	const char *name = cli_admin_cmd_name(a->cmd);
	int rc, k = 0;

	switch (a->cmd) {
	case CLI_ADMIN_JOB_REGISTER:
	case CLI_ADMIN_JOB_END:
	case CLI_ADMIN_JOB_SHOW:
		a->job = pos[0];
		return check_job(pos[0], err, errlen);
	case CLI_ADMIN_ASCAR_LOAD:
		a->path = pos[0]; /* the rule file */
		return 0;
	case CLI_ADMIN_MDQOS_SET:
		a->mdq_kv = pos;
		a->mdq_nkv = npos;
		return cli_admin_mdqos_check(a->nrs_verb == 1, a->job, pos, npos, err, errlen);
	case CLI_ADMIN_QOS_POLICY_SET:
		/* A first word without '=' names the policy; else keep it. */
		a->policy = "";
		if (!strchr(pos[0], '=')) {
			a->policy = pos[k++];
			rc = check_name("policy", a->policy, strlen(a->policy), PFS_QOS_NAME_MAX,
					err, errlen);
			if (rc)
				return rc;
		}
		for (; k < npos; k++) {
			rc = add_param(a, pos[k], err, errlen);
			if (rc)
				return rc;
		}
		return 0;
	case CLI_ADMIN_NRS_RULE: {
		int want = a->nrs_verb == PFS_NRS_LIST ? 0 : a->nrs_verb == PFS_NRS_STOP ? 1 : 2;

		if (npos != want)
			return cli__fail(err, errlen, "%s %s needs %s", name,
					 nrs_verbs[a->nrs_verb], want == 0 ? "no arguments" :
					 want == 1 ? "NAME" : "NAME and EXPR");
		if (want == 0)
			return 0;
		a->rule = pos[0];
		rc = check_name("rule name", pos[0], strlen(pos[0]), CLI_RULE_NAME_MAX, err,
				errlen);
		if (rc || want == 1)
			return rc;
		a->expr = pos[1];
		if (!a->expr[0] || strlen(a->expr) >= (size_t)CLI_RULE_EXPR_MAX)
			return cli__fail(err, errlen, "rule text must be 1..%d characters",
					 CLI_RULE_EXPR_MAX - 1);
		return 0;
	}
	default:
		return 0;
	}
}

int cli__parse_qos(int argc, char **argv, cli_admin_args *a, char *err, size_t errlen)
{
	const char *name = cli_admin_cmd_name(a->cmd);
	int npos, rc, op;

	a->nodes = 1;
	a->priority = 1;
	rc = cli__getopt(argc, argv, "", cmds[a->cmd].opts, family_opt, a, &op, err, errlen);
	if (rc)
		return rc < 0 ? rc : 0;
	npos = argc - op;
	if (npos < cmds[a->cmd].min_pos)
		return cli__fail(err, errlen, "%s needs %s", name,
				 a->cmd == CLI_ADMIN_QOS_POLICY_SET ?
				 "a policy NAME or KEY=VALUE" : "a JOBID");
	if (cmds[a->cmd].max_pos >= 0 && npos > cmds[a->cmd].max_pos)
		return cli__fail(err, errlen, "unexpected argument '%s'",
				 argv[op + cmds[a->cmd].max_pos]);
	if (a->watch_count && a->watch_s == 0)
		return cli__fail(err, errlen, "--count needs --watch SECS");
	return positionals(a, (const char **)argv + op, npos, err, errlen);
}
