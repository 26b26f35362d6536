/* admin_args_qos.c — command lines of pfsadmin's job, jobstats, qos and nrs
 * families (see admin_args.h for the grammar).
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
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "client/admin_i.h"

#define RATE_MAX 1e15 /* bytes/s: far above any OST, so only typos are refused */

/* Options of these families and the commands that take them. */
enum {
	O_NODES, O_PRIORITY, O_UID, O_LIMIT, O_NO_THROTTLE, O_ALL, O_JOB, O_WATCH,
	O_COUNT, O_OST, O_N
};

static const struct {
	const char *name;
	int has_value;
} opts[O_N] = {
	[O_NODES] = { "--nodes", 1 },   [O_PRIORITY] = { "--priority", 1 },
	[O_UID] = { "--uid", 1 },       [O_LIMIT] = { "--limit", 1 },
	[O_NO_THROTTLE] = { "--no-throttle", 0 }, [O_ALL] = { "--all", 0 },
	[O_JOB] = { "--job", 1 },       [O_WATCH] = { "--watch", 1 },
	[O_COUNT] = { "--count", 1 },   [O_OST] = { "--ost", 1 },
};

#define B(o) (1u << (o))

/* Per command: allowed options, positional arguments (min, max; max -1 =
 * any number) and the command's name in messages. */
static const struct {
	unsigned opts;
	int min_pos, max_pos;
	const char *name;
} cmds[CLI_ADMIN_CMD_COUNT] = {
	[CLI_ADMIN_JOB_REGISTER] = { B(O_NODES) | B(O_PRIORITY) | B(O_UID) | B(O_LIMIT) |
				     B(O_NO_THROTTLE), 1, 1, "job register" },
	[CLI_ADMIN_JOB_END] = { 0, 1, 1, "job end" },
	[CLI_ADMIN_JOB_LIST] = { B(O_ALL), 0, 0, "job list" },
	[CLI_ADMIN_JOB_SHOW] = { 0, 1, 1, "job show" },
	[CLI_ADMIN_JOBSTATS] = { B(O_JOB) | B(O_WATCH) | B(O_COUNT), 0, 0, "jobstats" },
	[CLI_ADMIN_QOS_SHOW] = { B(O_JOB), 0, 0, "qos show" },
	[CLI_ADMIN_QOS_POLICY_SET] = { 0, 1, -1, "qos policy set" },
	[CLI_ADMIN_QOS_POLICY_SHOW] = { 0, 0, 0, "qos policy show" },
	[CLI_ADMIN_QOS_COUPONS] = { B(O_JOB), 0, 0, "qos coupons" },
	[CLI_ADMIN_QOS_REGRET] = { 0, 0, 0, "qos regret" },
	/* the count depends on the verb: positionals() checks it */
	[CLI_ADMIN_NRS_RULE] = { B(O_OST), 0, -1, "nrs tbf rule" },
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

/* Take the sub-command word(s); sets a->cmd.  Returns the next index or
 * -EINVAL. */
static int subcommand(const char *cmd, int argc, char **argv, int i, cli_admin_args *a,
		      char *err, size_t errlen)
{
	const char *w = i < argc ? argv[i] : "";
	const char *w2 = i + 1 < argc ? argv[i + 1] : "";

	if (strcmp(cmd, "jobstats") == 0) {
		a->cmd = CLI_ADMIN_JOBSTATS;
		return i;
	}
	if (strcmp(cmd, "job") == 0) {
		if (strcmp(w, "register") == 0)
			a->cmd = CLI_ADMIN_JOB_REGISTER;
		else if (strcmp(w, "end") == 0)
			a->cmd = CLI_ADMIN_JOB_END;
		else if (strcmp(w, "list") == 0)
			a->cmd = CLI_ADMIN_JOB_LIST;
		else if (strcmp(w, "show") == 0)
			a->cmd = CLI_ADMIN_JOB_SHOW;
		else
			return cli__fail(err, errlen,
					 "'job' needs a subcommand: register, end, list, show");
		return i + 1;
	}
	if (strcmp(cmd, "qos") == 0) {
		if (strcmp(w, "show") == 0) {
			a->cmd = CLI_ADMIN_QOS_SHOW;
		} else if (strcmp(w, "coupons") == 0) {
			a->cmd = CLI_ADMIN_QOS_COUPONS;
		} else if (strcmp(w, "regret") == 0) {
			a->cmd = CLI_ADMIN_QOS_REGRET;
		} else if (strcmp(w, "policy") == 0) {
			if (strcmp(w2, "set") == 0)
				a->cmd = CLI_ADMIN_QOS_POLICY_SET;
			else if (strcmp(w2, "show") == 0)
				a->cmd = CLI_ADMIN_QOS_POLICY_SHOW;
			else
				return cli__fail(err, errlen, "'qos policy' needs set or show");
			return i + 2;
		} else {
			return cli__fail(err, errlen,
					 "'qos' needs a subcommand: show, policy, coupons, regret");
		}
		return i + 1;
	}
	/* nrs tbf rule VERB */
	if (strcmp(w, "tbf") != 0 || strcmp(w2, "rule") != 0)
		return cli__fail(err, errlen, "'nrs' needs: nrs tbf rule start|change|stop|list");
	w = i + 2 < argc ? argv[i + 2] : "";
	a->cmd = CLI_ADMIN_NRS_RULE;
	for (int v = PFS_NRS_START; v <= PFS_NRS_LIST; v++)
		if (strcmp(w, nrs_verbs[v]) == 0)
			a->nrs_verb = v;
	if (!a->nrs_verb)
		return cli__fail(err, errlen, "'nrs tbf rule' needs start, change, stop or list");
	return i + 3;
}

/* An option of these families at argv[*i]; 1 if taken, 0 if not one. */
static int family_opt(int argc, char **argv, int *i, cli_admin_args *a, char *err,
		      size_t errlen)
{
	const char *s = argv[*i], *val = NULL;
	int o;

	for (o = 0; o < O_N; o++) {
		size_t n = strlen(opts[o].name);

		if (strncmp(s, opts[o].name, n) != 0)
			continue;
		if (s[n] == '=' && opts[o].has_value) {
			val = s + n + 1;
			break;
		}
		if (s[n] == '\0')
			break;
	}
	if (o == O_N || !(cmds[a->cmd].opts & B(o)))
		return cli__fail(err, errlen, "unknown option '%s' for %s", s, cmds[a->cmd].name);
	if (opts[o].has_value && !val) {
		if (*i + 1 >= argc)
			return cli__fail(err, errlen, "option '%s' needs a value", s);
		val = argv[++*i];
	}
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
	case O_OST:
		a->have_ost = 1;
		return parse_u32("--ost", val, 0, PFS_QOS_OST_ALL - 1, &a->ost, err, errlen);
	}
	return cli__fail(err, errlen, "unknown option '%s'", s);
}

/* Put the positional words where the command wants them. */
static int positionals(cli_admin_args *a, const char **pos, int npos, char *err,
		       size_t errlen)
{
	const char *name = cmds[a->cmd].name;
	int rc, k = 0;

	switch (a->cmd) {
	case CLI_ADMIN_JOB_REGISTER:
	case CLI_ADMIN_JOB_END:
	case CLI_ADMIN_JOB_SHOW:
		a->job = pos[0];
		return check_job(pos[0], err, errlen);
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

int cli__parse_qos(const char *cmd, int argc, char **argv, int i, cli_admin_args *a,
			 char *err, size_t errlen)
{
	const char **pos = calloc((size_t)argc + 1, sizeof(*pos));
	int npos = 0, rc;

	if (!pos)
		return cli__fail(err, errlen, "out of memory");
	a->nodes = 1;
	a->priority = 1;
	rc = subcommand(cmd, argc, argv, i, a, err, errlen);
	if (rc < 0)
		goto out;
	for (i = rc, rc = 0; i < argc; i++) {
		const char *s = argv[i];

		rc = cli__global_opt(argc, argv, &i, a, err, errlen);
		if (rc == 2) {
			rc = 0;
			goto out;
		}
		if (rc < 0)
			goto out;
		if (rc == 1)
			continue;
		if (strcmp(s, "--") == 0) {
			while (++i < argc)
				pos[npos++] = argv[i];
			break;
		}
		if (s[0] == '-' && s[1] != '\0') {
			rc = family_opt(argc, argv, &i, a, err, errlen);
			if (rc < 0)
				goto out;
			continue;
		}
		pos[npos++] = s;
	}
	rc = 0;
	if (npos < cmds[a->cmd].min_pos) {
		rc = cli__fail(err, errlen, "%s needs %s", cmds[a->cmd].name,
			       a->cmd == CLI_ADMIN_QOS_POLICY_SET ? "a policy NAME or KEY=VALUE" :
			       "a JOBID");
		goto out;
	}
	if (cmds[a->cmd].max_pos >= 0 && npos > cmds[a->cmd].max_pos) {
		rc = cli__fail(err, errlen, "unexpected argument '%s'", pos[cmds[a->cmd].max_pos]);
		goto out;
	}
	if (a->watch_count && a->watch_s == 0) {
		rc = cli__fail(err, errlen, "--count needs --watch SECS");
		goto out;
	}
	rc = positionals(a, pos, npos, err, errlen);
out:
	free(pos);
	return rc;
}
