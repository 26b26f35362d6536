/* admin_args.c — the pfsadmin command line (see admin_args.h): global
 * options, the command words, and the options of ost list, df, setstripe,
 * getstripe, ping and lfsck.  The job, jobstats, qos and nrs families take their
 * options in admin_args_qos.c through the same cli__getopt.
 *
 * Commands are found in one table of words (cli__cmdwords), longest match
 * first, so "qos policy set" and "nrs tbf rule start" are rows like "df";
 * the same table names commands in messages and finds help entries.
 * getopt_long does the option syntax; its messages are switched off
 * (opterr = 0) and ours name the word and the command. */
#include "client/admin_args.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "client/admin_i.h"
#include "common/config.h"
#include "common/layout.h"

/* Long-option codes of the global options: above every char. */
enum { G_JSON = 256, G_MDS, G_TIMEOUT, G_FSNAME, G_KEY, G_NO_AUTH, G_HELP, G_VERSION };

static const struct option global_opts[] = {
	{ "json", no_argument, NULL, G_JSON },
	{ "mds", required_argument, NULL, G_MDS },
	{ "timeout", required_argument, NULL, G_TIMEOUT },
	{ "fsname", required_argument, NULL, G_FSNAME },
	{ "key", required_argument, NULL, G_KEY },
	{ "no-auth", no_argument, NULL, G_NO_AUTH },
	{ "help", no_argument, NULL, G_HELP },
	{ "version", no_argument, NULL, G_VERSION },
};
#define N_GLOBAL (sizeof(global_opts) / sizeof(global_opts[0]))
/* Room for one command's long options plus the globals. */
#define LONGOPTS_MAX 24

const cli__cmdword cli__cmdwords[] = {
	{ CLI_ADMIN_OST_LIST, 0, { "ost", "list" } },
	{ CLI_ADMIN_DF, 0, { "df" } },
	{ CLI_ADMIN_SETSTRIPE, 0, { "setstripe" } },
	{ CLI_ADMIN_GETSTRIPE, 0, { "getstripe" } },
	{ CLI_ADMIN_PING, 0, { "ping" } },
	{ CLI_ADMIN_LFSCK, 0, { "lfsck" } },
	{ CLI_ADMIN_JOB_REGISTER, 0, { "job", "register" } },
	{ CLI_ADMIN_JOB_END, 0, { "job", "end" } },
	{ CLI_ADMIN_JOB_LIST, 0, { "job", "list" } },
	{ CLI_ADMIN_JOB_SHOW, 0, { "job", "show" } },
	{ CLI_ADMIN_JOBSTATS, 0, { "jobstats" } },
	{ CLI_ADMIN_QOS_SHOW, 0, { "qos", "show" } },
	{ CLI_ADMIN_QOS_POLICY_SET, 0, { "qos", "policy", "set" } },
	{ CLI_ADMIN_QOS_POLICY_SHOW, 0, { "qos", "policy", "show" } },
	{ CLI_ADMIN_QOS_COUPONS, 0, { "qos", "coupons" } },
	{ CLI_ADMIN_QOS_REGRET, 0, { "qos", "regret" } },
	{ CLI_ADMIN_ASCAR_LOAD, 0, { "qos", "ascar", "load" } },
	{ CLI_ADMIN_ASCAR_SHOW, 0, { "qos", "ascar", "show" } },
	{ CLI_ADMIN_ASCAR_OFF, 0, { "qos", "ascar", "off" } },
	{ CLI_ADMIN_MDQOS_SHOW, 0, { "qos", "md", "show" } },
	{ CLI_ADMIN_MDQOS_SET, 0, { "qos", "md", "set" } },
	{ CLI_ADMIN_MDQOS_SET, 1, { "qos", "md", "algo" } },
	{ CLI_ADMIN_NRS_RULE, PFS_NRS_START, { "nrs", "tbf", "rule", "start" } },
	{ CLI_ADMIN_NRS_RULE, PFS_NRS_CHANGE, { "nrs", "tbf", "rule", "change" } },
	{ CLI_ADMIN_NRS_RULE, PFS_NRS_STOP, { "nrs", "tbf", "rule", "stop" } },
	{ CLI_ADMIN_NRS_RULE, PFS_NRS_LIST, { "nrs", "tbf", "rule", "list" } },
};
const size_t cli__ncmdwords = sizeof(cli__cmdwords) / sizeof(cli__cmdwords[0]);

int cli__fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

const char *cli_admin_cmd_name(cli_admin_cmd cmd)
{
	static const char *const names[CLI_ADMIN_CMD_COUNT] = {
		[CLI_ADMIN_HELP] = "",
		[CLI_ADMIN_OST_LIST] = "ost list", [CLI_ADMIN_DF] = "df",
		[CLI_ADMIN_SETSTRIPE] = "setstripe", [CLI_ADMIN_GETSTRIPE] = "getstripe",
		[CLI_ADMIN_PING] = "ping", [CLI_ADMIN_LFSCK] = "lfsck",
		[CLI_ADMIN_JOB_REGISTER] = "job register",
		[CLI_ADMIN_JOB_END] = "job end", [CLI_ADMIN_JOB_LIST] = "job list",
		[CLI_ADMIN_JOB_SHOW] = "job show", [CLI_ADMIN_JOBSTATS] = "jobstats",
		[CLI_ADMIN_QOS_SHOW] = "qos show", [CLI_ADMIN_QOS_POLICY_SET] = "qos policy set",
		[CLI_ADMIN_QOS_POLICY_SHOW] = "qos policy show",
		[CLI_ADMIN_QOS_COUPONS] = "qos coupons", [CLI_ADMIN_QOS_REGRET] = "qos regret",
		[CLI_ADMIN_ASCAR_LOAD] = "qos ascar load", [CLI_ADMIN_ASCAR_SHOW] = "qos ascar show",
		[CLI_ADMIN_ASCAR_OFF] = "qos ascar off",
		[CLI_ADMIN_MDQOS_SHOW] = "qos md show", [CLI_ADMIN_MDQOS_SET] = "qos md set",
		[CLI_ADMIN_NRS_RULE] = "nrs tbf rule", [CLI_ADMIN_VERSION] = "--version",
	};

	return (unsigned)cmd < CLI_ADMIN_CMD_COUNT && names[cmd] ? names[cmd] : "";
}

int cli_admin_parse_count(const char *s, int32_t *count, char *err, size_t errlen)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end)
		return cli__fail(err, errlen, "stripe count '%s' is not a number", s);
	if (v == CLI_STRIPE_ALL) {
		*count = CLI_STRIPE_ALL;
		return 0;
	}
	if (v < 1 || v > PFS_MAX_STRIPES)
		return cli__fail(err, errlen,
				 "stripe count %ld out of range (1..%d, or -1 for all OSTs)", v,
				 PFS_MAX_STRIPES);
	*count = (int32_t)v;
	return 0;
}

int cli_admin_parse_stripe_size(const char *s, uint32_t *size, char *err, size_t errlen)
{
	uint64_t v;

	if (pfs_parse_size(s, &v))
		return cli__fail(err, errlen, "stripe size '%s' is not a size (e.g. 1M, 256K)", s);
	if (v < PFS_MIN_STRIPE_SIZE || v > PFS_MAX_STRIPE_SIZE || v % PFS_MIN_STRIPE_SIZE)
		return cli__fail(err, errlen, "stripe size '%s' must be a multiple of 64K "
				 "between 64K and 1G", s);
	*size = (uint32_t)v;
	return 0;
}

int cli_admin_parse_stripe_index(const char *s, int32_t *index, char *err, size_t errlen)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < CLI_STRIPE_INDEX_ANY || v > 65535)
		return cli__fail(err, errlen, "stripe index '%s' must be an OST index 0..65535, "
				 "or -1 to let the MDS choose", s);
	*index = (int32_t)v;
	return 0;
}

int cli_admin_parse_timeout(const char *s, double *secs, char *err, size_t errlen)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || !isdigit((unsigned char)s[0]) ||
	    !(v > 0) || v > CLI_TIMEOUT_MAX_S)
		return cli__fail(err, errlen, "--timeout '%s' must be a number of seconds above 0, "
				 "at most %g", s, CLI_TIMEOUT_MAX_S);
	*secs = v;
	return 0;
}

int cli_admin_check_fsname(const char *s, char *err, size_t errlen)
{
	size_t n = strlen(s);

	if (n == 0 || n > CLI_FSNAME_MAX)
		return cli__fail(err, errlen, "file system name '%s' must be 1..%d characters", s,
				 CLI_FSNAME_MAX);
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '-')
			return cli__fail(err, errlen, "file system name '%s' may only have "
					 "letters, digits, '_' and '-'", s);
	return 0;
}

static int parse_ping_count(const char *s, unsigned *out, char *err, size_t errlen)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v < 1 || v > CLI_PING_MAX)
		return cli__fail(err, errlen, "ping count '%s' must be 1..%d", s, CLI_PING_MAX);
	*out = (unsigned)v;
	return 0;
}

/* A global option; 1 = help asked, 0 = taken, -EINVAL. */
static int global_opt(int opt, const char *val, cli_admin_args *a, char *err, size_t errlen)
{
	switch (opt) {
	case G_JSON:
		a->json = 1;
		return 0;
	case G_MDS:
		a->mds = val;
		return 0;
	case G_TIMEOUT:
		return cli_admin_parse_timeout(val, &a->timeout_s, err, errlen);
	case G_FSNAME:
		a->fsname = val;
		return cli_admin_check_fsname(val, err, errlen);
	case G_KEY:
		a->key = val;
		return 0;
	case G_NO_AUTH:
		a->no_auth = 1;
		return 0;
	case G_VERSION:
		a->cmd = CLI_ADMIN_VERSION;
		return 1;
	default: /* G_HELP */
		return 1;
	}
}

/* The word getopt complained about: a long option as typed (without any
 * "=VALUE" when the value is what is missing), else "-c". */
static const char *bad_word(char **argv, int strip_value, char *buf, size_t sz)
{
	const char *w = optind > 0 ? argv[optind - 1] : NULL;

	if (w && strncmp(w, "--", 2) == 0 && w[2]) {
		size_t n = strip_value && strchr(w, '=') ? (size_t)(strchr(w, '=') - w) :
			strlen(w);

		snprintf(buf, sz, "%.*s", (int)n, w);
	} else if (optopt > 0 && optopt < 256) {
		snprintf(buf, sz, "-%c", optopt);
	} else {
		snprintf(buf, sz, "%s", w ? w : "?");
	}
	return buf;
}

int cli__getopt(int argc, char **argv, const char *shortopts, const struct option *longopts,
		cli__optfn fn, cli_admin_args *a, int *operand, char *err, size_t errlen)
{
	struct option lo[LONGOPTS_MAX + N_GLOBAL + 1];
	char so[32];
	const char *name = cli_admin_cmd_name(a->cmd);
	size_t n = 0;
	int opt, rc, idx;

	/* ':' first: a missing value comes back as ':' (not '?'); '+' at the
	 * top level stops at the command word.  -h is help unless the command
	 * has its own (df -h). */
	snprintf(so, sizeof(so), "%s%s%s", fn ? ":" : "+:", shortopts,
		 strchr(shortopts, 'h') ? "" : "h");
	for (; longopts && longopts[n].name && n < LONGOPTS_MAX; n++)
		lo[n] = longopts[n];
	memcpy(lo + n, global_opts, sizeof(global_opts));
	memset(lo + n + N_GLOBAL, 0, sizeof(lo[0]));
	optind = 0; /* glibc: start afresh, forgetting any earlier parse */
	opterr = 0;
	while ((opt = getopt_long(argc, argv, so, lo, &idx)) != -1) {
		char w[64];

		if (opt == '?')
			return *name ? cli__fail(err, errlen, "unknown option '%s' for %s",
						 bad_word(argv, 0, w, sizeof(w)), name) :
				cli__fail(err, errlen, "unknown option '%s'",
					  bad_word(argv, 0, w, sizeof(w)));
		if (opt == ':')
			return cli__fail(err, errlen, "option '%s' needs a value",
					 bad_word(argv, 1, w, sizeof(w)));
		if (opt >= G_JSON && opt <= G_VERSION) {
			rc = global_opt(opt, optarg, a, err, errlen);
		} else if (opt == 'h' && !strchr(shortopts, 'h')) {
			rc = 1;
		} else {
			rc = fn(opt, optarg, a, err, errlen);
		}
		if (rc == 1) {
			if (a->cmd != CLI_ADMIN_VERSION) {
				a->help_cmd = a->cmd;
				a->cmd = CLI_ADMIN_HELP;
			}
			return 1;
		}
		if (rc)
			return rc;
	}
	*operand = optind;
	return 0;
}

/* The longest row of cli__cmdwords matching words[0..n); its word count
 * in *used, or -1 (no row). */
int cli__match_cmd(char *const *words, int n, int *used)
{
	int best = -1, best_len = 0;

	for (size_t r = 0; r < cli__ncmdwords; r++) {
		int k = 0;

		while (k < 4 && cli__cmdwords[r].w[k] && k < n &&
		       strcmp(cli__cmdwords[r].w[k], words[k]) == 0)
			k++;
		if (k < 4 && cli__cmdwords[r].w[k])
			continue; /* the row wants more words */
		if (k > best_len) {
			best = (int)r;
			best_len = k;
		}
	}
	*used = best_len;
	return best;
}

/* "register, end, list, show": the words that may follow prefix[0..depth). */
static void next_words(char *const *prefix, int depth, char *buf, size_t sz)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t r = 0; r < cli__ncmdwords; r++) {
		const char *const *w = cli__cmdwords[r].w;
		int k = 0, dup = 0;

		while (k < depth && w[k] && strcmp(w[k], prefix[k]) == 0)
			k++;
		if (k < depth || !w[depth])
			continue;
		for (size_t q = 0; q < r; q++) {
			const char *const *v = cli__cmdwords[q].w;
			int same = 1;

			for (int i = 0; i <= depth; i++)
				same = same && v[i] && strcmp(v[i], w[i]) == 0;
			dup |= same;
		}
		if (!dup && len < sz)
			len += (size_t)snprintf(buf + len, sz - len, "%s%s", len ? ", " : "",
						w[depth]);
	}
}

/* Words that are a family's prefix but no whole command ("job",
 * "qos policy", "nrs tbf"): how many match, 0 if not a family. */
static int family_depth(char *const *words, int n)
{
	int best = 0;

	for (size_t r = 0; r < cli__ncmdwords; r++) {
		int k = 0;

		while (k < 4 && cli__cmdwords[r].w[k] && k < n &&
		       strcmp(cli__cmdwords[r].w[k], words[k]) == 0)
			k++;
		if (k > best)
			best = k;
	}
	return best;
}

static int is_help_word(const char *s)
{
	return s && (strcmp(s, "--help") == 0 || strcmp(s, "-h") == 0);
}

/* "pfsadmin help [WORDS]". */
static int parse_help(int n, char *const *words, cli_admin_args *a, char *err, size_t errlen)
{
	int used, row;

	a->cmd = CLI_ADMIN_HELP;
	a->help_cmd = CLI_ADMIN_HELP;
	if (n == 0 || is_help_word(words[0]))
		return 0;
	row = cli__match_cmd(words, n, &used);
	if (row >= 0 && used == n) {
		a->help_cmd = cli__cmdwords[row].cmd;
		return 0;
	}
	if (row < 0 && family_depth(words, n) == n) {
		a->help_family = words[0];
		return 0;
	}
	return cli__fail(err, errlen, "no command '%s' to help with", words[0]);
}

/* ---- the options of ost list, df, setstripe, getstripe, ping, lfsck ---- */

enum { O_HUMAN = 'h', O_INODES = 'i' };

static const struct option df_opts[] = {
	{ "human-readable", no_argument, NULL, 'h' },
	{ "inodes", no_argument, NULL, 'i' },
	{ NULL, 0, NULL, 0 },
};
static const struct option setstripe_opts[] = {
	{ "stripe-count", required_argument, NULL, 'c' },
	{ "stripe-size", required_argument, NULL, 'S' },
	{ "stripe-index", required_argument, NULL, 'i' },
	{ "delete", no_argument, NULL, 'd' },
	{ NULL, 0, NULL, 0 },
};
static const struct option getstripe_opts[] = {
	{ "stripe-count", no_argument, NULL, 'c' },
	{ "stripe-size", no_argument, NULL, 'S' },
	{ "stripe-index", no_argument, NULL, 'i' },
	{ "yaml", no_argument, NULL, 'y' },
	{ "directory", no_argument, NULL, 'd' },
	{ NULL, 0, NULL, 0 },
};
static const struct option ping_opts[] = {
	{ "count", required_argument, NULL, 'c' },
	{ NULL, 0, NULL, 0 },
};
static const struct option lfsck_opts[] = {
	{ "dry-run", no_argument, NULL, 'n' },
	{ NULL, 0, NULL, 0 },
};

static int base_opt(int opt, const char *val, cli_admin_args *a, char *err, size_t errlen)
{
	cli_stripe_req *s = &a->stripe;

	switch (a->cmd) {
	case CLI_ADMIN_DF:
		if (opt == 'h')
			a->human = 1;
		else
			a->inodes = 1;
		return 0;
	case CLI_ADMIN_SETSTRIPE:
		switch (opt) {
		case 'c':
			s->have_count = 1;
			return cli_admin_parse_count(val, &s->count, err, errlen);
		case 'S':
			s->have_size = 1;
			return cli_admin_parse_stripe_size(val, &s->size, err, errlen);
		case 'i':
			s->have_index = 1;
			return cli_admin_parse_stripe_index(val, &s->index, err, errlen);
		default:
			s->del = 1;
			return 0;
		}
	case CLI_ADMIN_GETSTRIPE:
		a->select |= opt == 'c' ? CLI_SEL_COUNT : opt == 'S' ? CLI_SEL_SIZE :
			opt == 'i' ? CLI_SEL_INDEX : 0;
		a->yaml |= opt == 'y';
		return 0; /* -d: the directory itself, which is all pfsadmin shows */
	case CLI_ADMIN_LFSCK:
		a->dry_run = 1;
		return 0;
	default: /* CLI_ADMIN_PING */
		return parse_ping_count(val, &a->ping_count, err, errlen);
	}
}

static int parse_base(int argc, char **argv, cli_admin_args *a, char *err, size_t errlen)
{
	static const struct {
		const char *so;
		const struct option *lo;
		int max_pos; /* -1 = any number */
	} spec[] = {
		[CLI_ADMIN_OST_LIST] = { "", NULL, 1 },
		[CLI_ADMIN_DF] = { "hi", df_opts, 1 },
		[CLI_ADMIN_SETSTRIPE] = { "c:S:i:d", setstripe_opts, 1 },
		[CLI_ADMIN_GETSTRIPE] = { "cSiyd", getstripe_opts, -1 },
		[CLI_ADMIN_PING] = { "c:", ping_opts, 1 },
		[CLI_ADMIN_LFSCK] = { "n", lfsck_opts, 0 },
	};
	const char *name = cli_admin_cmd_name(a->cmd);
	const cli_stripe_req *s = &a->stripe;
	int rc, op;

	rc = cli__getopt(argc, argv, spec[a->cmd].so, spec[a->cmd].lo, base_opt, a, &op, err,
			 errlen);
	if (rc)
		return rc < 0 ? rc : 0;
	a->paths = (const char *const *)argv + op;
	a->npaths = argc - op;
	a->path = a->npaths ? argv[op] : NULL;
	if (spec[a->cmd].max_pos >= 0 && a->npaths > spec[a->cmd].max_pos)
		return cli__fail(err, errlen, "unexpected argument '%s'",
				 argv[op + spec[a->cmd].max_pos]);
	switch (a->cmd) {
	case CLI_ADMIN_SETSTRIPE:
		if (s->del && (s->have_count || s->have_size || s->have_index))
			return cli__fail(err, errlen, "setstripe -d deletes a directory's default: "
					 "it takes no -c, -S or -i");
		if (!s->del && !s->have_count && !s->have_size && !s->have_index)
			return cli__fail(err, errlen, "setstripe needs -c COUNT, -S SIZE and/or "
					 "-i INDEX (or -d DIR to delete a default)");
		/* fall through */
	case CLI_ADMIN_GETSTRIPE:
		if (!a->path)
			return cli__fail(err, errlen, "%s needs a PATH", name);
		break;
	default:
		break;
	}
	return 0;
}

int cli_admin_parse_args(int argc, char **argv, cli_admin_args *a, char *err, size_t errlen)
{
	int rc, i, row, used, depth;

	memset(a, 0, sizeof(*a));
	a->ping_count = 1;
	a->cmd = CLI_ADMIN_HELP;
	a->help_cmd = CLI_ADMIN_HELP;
	err[0] = '\0';

	rc = cli__getopt(argc, argv, "", NULL, NULL, a, &i, err, errlen);
	if (rc)
		return rc < 0 ? rc : 0;
	if (i >= argc)
		return cli__fail(err, errlen, "no command given");
	if (strcmp(argv[i], "help") == 0)
		return parse_help(argc - i - 1, argv + i + 1, a, err, errlen);
	row = cli__match_cmd(argv + i, argc - i, &used);
	if (row < 0) {
		char next[128], prefix[128];
		size_t len = 0;

		depth = family_depth(argv + i, argc - i);
		if (depth == 0)
			return cli__fail(err, errlen, "unknown command '%s'", argv[i]);
		if (i + depth < argc && is_help_word(argv[i + depth])) {
			a->help_family = argv[i];
			return 0;
		}
		prefix[0] = '\0';
		for (int k = 0; k < depth && len < sizeof(prefix); k++)
			len += (size_t)snprintf(prefix + len, sizeof(prefix) - len, "%s%s",
						k ? " " : "", argv[i + k]);
		next_words(argv + i, depth, next, sizeof(next));
		a->help_family = argv[i]; /* for the caller's pointer to help */
		return cli__fail(err, errlen, "'%s' needs a subcommand: %s", prefix, next);
	}
	a->cmd = cli__cmdwords[row].cmd;
	a->nrs_verb = cli__cmdwords[row].verb;
	/* The command's own parse sees its last word as argv[0]. */
	i += used - 1;
	switch (a->cmd) {
	case CLI_ADMIN_OST_LIST:
	case CLI_ADMIN_DF:
	case CLI_ADMIN_SETSTRIPE:
	case CLI_ADMIN_GETSTRIPE:
	case CLI_ADMIN_PING:
	case CLI_ADMIN_LFSCK:
		return parse_base(argc - i, argv + i, a, err, errlen);
	default:
		return cli__parse_qos(argc - i, argv + i, a, err, errlen);
	}
}
