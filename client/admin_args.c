/* admin_args.c — pfsadmin argument parsing (see admin_args.h).
 *
 * Hand-written rather than getopt: the parser runs many times in one
 * process under the unit tests, and getopt's hidden optind state would
 * leak between runs. */
#include "client/admin_args.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "client/admin_i.h"
#include "common/config.h"
#include "common/layout.h"

int cli__fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

void cli_admin_usage(FILE *out)
{
	fputs("usage: pfsadmin [--mds HOST:PORT] [--json] COMMAND [ARGS]\n"
	      "\n"
	      "commands:\n"
	      "  ost list [PATH]                     list OSTs: uuid, OSS, address, state, space\n"
	      "  df [-h] [PATH]                      space per OST and for the file system\n"
	      "  setstripe [-c COUNT] [-S SIZE] PATH set the layout of a directory (default for\n"
	      "                                      new files), of an empty file, or create\n"
	      "                                      PATH as an empty file with that layout;\n"
	      "                                      COUNT -1 = all OSTs, SIZE a multiple of 64K\n"
	      "  getstripe PATH                      show a file's layout or a directory's default\n"
	      "  ping [-c COUNT] [PATH]              round trip time to the MDS\n"
	      "\n"
	      "jobs and QoS:\n"
	      "  job register JOBID [--nodes N] [--priority P] [--uid U] [--limit RATE]\n"
	      "               [--no-throttle]       register or update a job (Slurm prolog)\n"
	      "  job end JOBID                       mark a job ended (Slurm epilog)\n"
	      "  job list [--all]                    running jobs (--all: ended ones too)\n"
	      "  job show JOBID                      one job\n"
	      "  jobstats [--job ID] [--watch SECS [--count N]]\n"
	      "                                      I/O per job and OST from every OSS, and\n"
	      "                                      MDS operations per job; --watch: rates\n"
	      "                                      over each SECS interval (else since start)\n"
	      "  qos show [--job ID]                 policy, last decision, allocations\n"
	      "  qos policy set [NAME] [KEY=VALUE ...]\n"
	      "                                      switch policy and/or set its parameters\n"
	      "                                      (e.g. qos policy set gift B_thres=0.3)\n"
	      "  qos policy show                     the policy and its parameters\n"
	      "  qos coupons [--job ID]              GIFT coupons per job\n"
	      "  qos regret                          GIFT regret ledger\n"
	      "  nrs tbf rule start NAME EXPR [--ost N]\n"
	      "  nrs tbf rule change NAME EXPR [--ost N]\n"
	      "  nrs tbf rule stop NAME [--ost N]\n"
	      "  nrs tbf rule list [--ost N]         TBF rules on every OSS (or the one\n"
	      "                                      serving OST N; start/change then add\n"
	      "                                      ost=N to EXPR), e.g. 'jobid={j1 j2}\n"
	      "                                      opcode={write} rate=100MB/s'\n"
	      "  help                                this text\n"
	      "\n"
	      "RATE is bytes/s with K/M/G (1000s) or Ki/Mi/Gi suffix: 100MB/s, 1.5G.\n"
	      "The MDS is --mds, else $PFS_MDS, else the source (HOST:PORT) of the fuse.pfs\n"
	      "mount holding PATH (or the only pfs mount when no PATH is given).\n"
	      "--json prints one JSON document instead of tables (jobstats --watch: one\n"
	      "compact document per line and report).\n"
	      "Exit status: 0 success, 1 error, 2 usage error.\n", out);
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

/* Global options, accepted before and after the command.  Returns 1 if
 * argv[*i] was one (and consumed), 2 for --help, 0 if not, -EINVAL on a bad
 * one. */
int cli__global_opt(int argc, char **argv, int *i, cli_admin_args *a, char *err,
			  size_t errlen)
{
	const char *s = argv[*i];

	if (strcmp(s, "--json") == 0) {
		a->json = 1;
		return 1;
	}
	if (strcmp(s, "--mds") == 0) {
		if (*i + 1 >= argc)
			return cli__fail(err, errlen, "--mds needs HOST:PORT");
		a->mds = argv[++*i];
		return 1;
	}
	if (strncmp(s, "--mds=", 6) == 0) {
		a->mds = s + 6;
		return 1;
	}
	if (strcmp(s, "--help") == 0) {
		a->cmd = CLI_ADMIN_HELP;
		return 2;
	}
	return 0;
}

int cli_admin_parse_args(int argc, char **argv, cli_admin_args *a, char *err, size_t errlen)
{
	int i = 1, rc, npos = 0;
	const char *cmd = NULL;
	const char *pos[2] = { NULL, NULL };

	memset(a, 0, sizeof(*a));
	a->ping_count = 1;
	err[0] = '\0';

	/* Globals, then the command word (and "list" after "ost"). */
	for (; i < argc; i++) {
		rc = cli__global_opt(argc, argv, &i, a, err, errlen);
		if (rc < 0)
			return rc;
		if (rc == 2)
			return 0;
		if (rc == 1)
			continue;
		if (argv[i][0] == '-')
			return cli__fail(err, errlen, "unknown option '%s'", argv[i]);
		cmd = argv[i++];
		break;
	}
	if (!cmd)
		return cli__fail(err, errlen, "no command given");
	if (strcmp(cmd, "help") == 0) {
		a->cmd = CLI_ADMIN_HELP;
		return 0;
	} else if (strcmp(cmd, "ost") == 0) {
		if (i >= argc || strcmp(argv[i], "list") != 0)
			return cli__fail(err, errlen, "'ost' needs a subcommand: ost list");
		i++;
		a->cmd = CLI_ADMIN_OST_LIST;
	} else if (strcmp(cmd, "df") == 0) {
		a->cmd = CLI_ADMIN_DF;
	} else if (strcmp(cmd, "setstripe") == 0) {
		a->cmd = CLI_ADMIN_SETSTRIPE;
	} else if (strcmp(cmd, "getstripe") == 0) {
		a->cmd = CLI_ADMIN_GETSTRIPE;
	} else if (strcmp(cmd, "ping") == 0) {
		a->cmd = CLI_ADMIN_PING;
	} else if (strcmp(cmd, "job") == 0 || strcmp(cmd, "jobstats") == 0 ||
		   strcmp(cmd, "qos") == 0 || strcmp(cmd, "nrs") == 0) {
		return cli__parse_qos(cmd, argc, argv, i, a, err, errlen);
	} else {
		return cli__fail(err, errlen, "unknown command '%s'", cmd);
	}

	for (; i < argc; i++) {
		const char *s = argv[i];
		/* -cVALUE and -c VALUE both work, as with getopt. */
		const char *val = NULL;

		rc = cli__global_opt(argc, argv, &i, a, err, errlen);
		if (rc < 0)
			return rc;
		if (rc == 2)
			return 0;
		if (rc == 1)
			continue;
		if (strcmp(s, "--") == 0) {
			for (i++; i < argc; i++) {
				if (npos >= 1)
					return cli__fail(err, errlen, "unexpected argument '%s'",
							 argv[i]);
				pos[npos++] = argv[i];
			}
			break;
		}
		if (s[0] != '-' || s[1] == '\0') {
			if (npos >= 1)
				return cli__fail(err, errlen, "unexpected argument '%s'", s);
			pos[npos++] = s;
			continue;
		}
		if ((s[1] == 'c' || s[1] == 'S') &&
		    (a->cmd == CLI_ADMIN_SETSTRIPE || (a->cmd == CLI_ADMIN_PING && s[1] == 'c'))) {
			if (s[2])
				val = s + 2;
			else if (i + 1 < argc)
				val = argv[++i];
			else
				return cli__fail(err, errlen, "option '%s' needs a value", s);
			if (a->cmd == CLI_ADMIN_PING)
				rc = parse_ping_count(val, &a->ping_count, err, errlen);
			else if (s[1] == 'c')
				rc = cli_admin_parse_count(val, &a->count, err, errlen);
			else
				rc = cli_admin_parse_stripe_size(val, &a->size, err, errlen);
			if (rc)
				return rc;
			if (s[1] == 'c')
				a->have_count = 1;
			else
				a->have_size = 1;
			continue;
		}
		if (strcmp(s, "-h") == 0 && a->cmd == CLI_ADMIN_DF) {
			a->human = 1;
			continue;
		}
		return cli__fail(err, errlen, "unknown option '%s' for %s", s, cmd);
	}
	a->path = pos[0];
	switch (a->cmd) {
	case CLI_ADMIN_SETSTRIPE:
		if (!a->have_count && !a->have_size)
			return cli__fail(err, errlen, "setstripe needs -c COUNT and/or -S SIZE");
		/* fall through */
	case CLI_ADMIN_GETSTRIPE:
		if (!a->path)
			return cli__fail(err, errlen, "%s needs a PATH", cmd);
		break;
	default:
		break;
	}
	return 0;
}
