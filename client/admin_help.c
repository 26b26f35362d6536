/* admin_help.c — pfsadmin's help texts: the usage (one line per command),
 * each command's help (pfsadmin CMD --help, pfsadmin help CMD), a family's
 * (pfsadmin job --help) and the version line.
 *
 * One table row per command holds its synopsis, one-line summary and option
 * text, so the usage and the per-command help cannot disagree. */
#include <string.h>

#include "client/admin_args.h"
#include "client/admin_i.h"
#include "client/admin_version.h"

static const struct {
	cli_admin_cmd cmd;
	const char *synopsis;  /* after "pfsadmin " */
	const char *summary;
	const char *text;      /* options and details; may be "" */
} helps[] = {
	{ CLI_ADMIN_OST_LIST, "ost list [PATH]",
	  "the OSTs: name, uuid, OSS, address, state, space, objects", "" },
	{ CLI_ADMIN_DF, "df [-h] [-i] [PATH]",
	  "space (or inodes) of the MDT and of each OST, and their sum, as lfs df",
	  "  -h, --human-readable  sizes in K/M/G/T (powers of 1024)\n"
	  "  -i, --inodes          inodes instead of space: the MDT's, and the objects\n"
	  "                        each OST holds\n"
	  "An OST that is down is listed as inactive and left out of the summary.\n"
	  "Names are FSNAME-OSTxxxx_UUID (hex index), FSNAME from --fsname, else\n"
	  "$PFS_FSNAME, else \"pfs\".\n" },
	{ CLI_ADMIN_SETSTRIPE, "setstripe [-c N] [-S SIZE] [-i IDX] [-d] PATH",
	  "the default layout of a directory, or create PATH empty with a layout",
	  "  -c, --stripe-count N   stripes (OSTs) per file, 1..64; -1 = every OST up\n"
	  "  -S, --stripe-size SIZE bytes per stripe: a multiple of 64K, 64K..1G (1M, 256K)\n"
	  "  -i, --stripe-index IDX the OST of stripe 0, the next stripes on the next OSTs\n"
	  "                         up (down ones skipped); -1 = the MDS chooses\n"
	  "  -d, --delete           delete the default of directory PATH: new files there\n"
	  "                         get the file system's\n"
	  "A file gets its layout when it is created: an existing file is refused (\"file\n"
	  "already has a layout\"); a PATH that does not exist is created empty with the\n"
	  "layout.  Omitted values come from the parent directory, then the file system.\n" },
	{ CLI_ADMIN_GETSTRIPE, "getstripe [-c] [-S] [-i] [-y] PATH...",
	  "the layout of files, or the default of directories",
	  "  -c, --stripe-count  print the stripe count only\n"
	  "  -S, --stripe-size   print the stripe size only\n"
	  "  -i, --stripe-index  print the first OST only (-1: none given, the MDS chooses)\n"
	  "  -y, --yaml          YAML: every field, one list entry per PATH\n"
	  "  -d, --directory     a directory itself, not its entries (always so here)\n"
	  "With one PATH and one selector the value alone is printed.  --json prints\n"
	  "every field: the PATH's object, or {\"paths\": [...]} for several PATHs.\n" },
	{ CLI_ADMIN_PING, "ping [-c N] [PATH]", "round trip time to the MDS",
	  "  -c, --count N  N round trips, 1..1000 (default 1)\n" },
	{ CLI_ADMIN_LFSCK, "lfsck [--dry-run]",
	  "find (and destroy) objects on the OSTs that no file references",
	  "  -n, --dry-run  count the orphan objects, destroy nothing\n"
	  "Per OST that answered: objects seen, referenced (by a layout, an open-unlinked\n"
	  "file or the destroy log), orphaned, and destroyed (queued to the destroyer,\n"
	  "which removes them in the background).  Root on an admin key only.  A large\n"
	  "file system may need a longer --timeout.\n" },
	{ CLI_ADMIN_JOB_REGISTER,
	  "job register JOBID [--nodes N] [--priority P] [--uid U] [--limit RATE] "
	  "[--no-throttle]",
	  "register or update a job (Slurm prolog)",
	  "  --nodes N       nodes of the job (default 1)\n"
	  "  --priority P    weight in QoS decisions (default 1)\n"
	  "  --uid U         owner (default: the caller)\n"
	  "  --limit RATE    bandwidth cap, e.g. 100MB/s (default: none)\n"
	  "  --no-throttle   the job may not be throttled below its share\n" },
	{ CLI_ADMIN_JOB_END, "job end JOBID", "mark a job ended (Slurm epilog)", "" },
	{ CLI_ADMIN_JOB_LIST, "job list [--all]", "running jobs",
	  "  --all  ended jobs too\n" },
	{ CLI_ADMIN_JOB_SHOW, "job show JOBID", "one job", "" },
	{ CLI_ADMIN_JOBSTATS, "jobstats [--job ID] [--watch SECS [--count N]]",
	  "I/O per job and OST from every OSS, MDS operations per job",
	  "  --job ID      one job only\n"
	  "  --watch SECS  rates over each SECS interval (else totals since start)\n"
	  "  --count N     stop after N reports\n" },
	{ CLI_ADMIN_QOS_SHOW, "qos show [--job ID]", "policy, last decision, allocations",
	  "  --job ID  one job's allocations only\n" },
	{ CLI_ADMIN_QOS_POLICY_SET, "qos policy set [NAME] [KEY=VALUE ...]",
	  "switch policy and/or set its parameters (qos policy set gift B_thres=0.3)", "" },
	{ CLI_ADMIN_QOS_POLICY_SHOW, "qos policy show", "the policy and its parameters", "" },
	{ CLI_ADMIN_QOS_COUPONS, "qos coupons [--job ID]", "GIFT coupons per job",
	  "  --job ID  one job only\n" },
	{ CLI_ADMIN_QOS_REGRET, "qos regret", "GIFT regret ledger", "" },
	{ CLI_ADMIN_ASCAR_LOAD, "qos ascar load FILE", "distribute an ASCAR rule set (qos/ascar.h text) to the clients", "" },
	{ CLI_ADMIN_ASCAR_SHOW, "qos ascar show", "the ASCAR rule set and its version", "" },
	{ CLI_ADMIN_ASCAR_OFF, "qos ascar off", "turn ASCAR control off on every client", "" },
	{ CLI_ADMIN_MDQOS_SHOW, "qos md show", "PADLL metadata QoS: algorithm, Max_R per class, per-job rates", "" },
	{ CLI_ADMIN_MDQOS_SET, "qos md set KEY=VALUE... | qos md algo NAME [KEY=VALUE...]", "PADLL: algo, interval_ms, epsilon, jobs, weight_sum, max_r.CLASS, demand.CLASS (--job)", "" },
	{ CLI_ADMIN_NRS_RULE, "nrs tbf rule start|change|stop|list [NAME [EXPR]] [--ost N]",
	  "TBF rules on every OSS",
	  "  start NAME EXPR, change NAME EXPR, stop NAME, list\n"
	  "  --ost N  only the OSS serving OST N (start/change then add ost=N to EXPR)\n"
	  "EXPR e.g. 'jobid={j1 j2} opcode={write} rate=100MB/s'.\n" },
};
#define N_HELPS (sizeof(helps) / sizeof(helps[0]))

static const char globals[] =
	"global options (before or after the command):\n"
	"  --mds HOST:PORT   the MDS (else $PFS_MDS, else the fuse.pfs mount holding PATH,\n"
	"                    or the only pfs mount when no PATH is given)\n"
	"  --json            one JSON document instead of tables (jobstats --watch: one\n"
	"                    compact document per line and report); keys in client/README.md\n"
	"  --timeout SECS    give up on a request after SECS seconds (default 10)\n"
	"  --fsname NAME     the file system's name in df (else $PFS_FSNAME, else pfs)\n"
	"  --key FILE        the key file (else $PFS_KEY, else /etc/pfs/admin.key, else\n"
	"                    /etc/pfs/client.key); root-only (0600), see 'key gen'\n"
	"  --no-auth         no authentication handshake (a cluster with auth = off)\n"
	"  -h, --help        this text; 'pfsadmin COMMAND --help' for one command\n"
	"  --version         the version\n"
	"\n"
	"RATE is bytes/s with K/M/G (1000s) or Ki/Mi/Gi suffix: 100MB/s, 1.5G.\n"
	"Exit status: 0 success, 1 error, 2 usage error (a bad command line, option,\n"
	"or MDS address, whether from --mds or $PFS_MDS).\n";

void cli_admin_version(FILE *out)
{
	fputs("pfsadmin (pfs) " PFS_VERSION "\n", out);
}

void cli_admin_usage(FILE *out)
{
	fputs("usage: pfsadmin [--mds HOST:PORT] [--json] [--timeout SECS] COMMAND [ARGS]\n"
	      "\ncommands:\n", out);
	for (size_t i = 0; i < N_HELPS; i++) {
		if (helps[i].cmd == CLI_ADMIN_JOB_REGISTER)
			fputs("\njobs and QoS:\n", out);
		fprintf(out, "  %s\n      %s\n", helps[i].synopsis, helps[i].summary);
	}
	fputs("  key gen --role ROLE [--master SERVERKEY] FILE\n"
	      "      make a key file (ROLE mds|oss|client|admin; no MDS needed)\n", out);
	fputs("  help [COMMAND]\n      this text, or one command's\n\n", out);
	fputs(globals, out);
}

static void one(size_t i, FILE *out)
{
	fprintf(out, "usage: pfsadmin %s\n%s\n", helps[i].synopsis, helps[i].summary);
	if (helps[i].text[0])
		fprintf(out, "\n%s", helps[i].text);
}

void cli_admin_help(const cli_admin_args *args, FILE *out)
{
	int shown = 0;

	for (size_t i = 0; i < N_HELPS; i++) {
		const char *family = NULL;

		for (size_t r = 0; r < cli__ncmdwords; r++)
			if (cli__cmdwords[r].cmd == helps[i].cmd)
				family = cli__cmdwords[r].w[0];
		if ((args->help_cmd != CLI_ADMIN_HELP && helps[i].cmd == args->help_cmd) ||
		    (args->help_cmd == CLI_ADMIN_HELP && args->help_family && family &&
		     strcmp(family, args->help_family) == 0)) {
			if (shown++)
				fputc('\n', out);
			one(i, out);
		}
	}
	if (!shown) {
		cli_admin_usage(out);
		return;
	}
	fputs("\nglobal options: --mds HOST:PORT, --json, --timeout SECS, --fsname NAME "
	      "(pfsadmin --help)\n", out);
}
