/* admin_args.h — pfsadmin command-line parsing.
 *
 *   pfsadmin [--mds HOST:PORT] [--json] COMMAND [ARGS]
 *     ost list [PATH]
 *     df [-h] [PATH]
 *     setstripe [-c COUNT] [-S SIZE] PATH    (at least one of -c, -S)
 *     getstripe PATH
 *     ping [-c COUNT] [PATH]
 *     help
 *
 * Global options may also follow the command ("pfsadmin df --json").  The
 * parser is re-entrant (no getopt state) and never prints: errors come back
 * as -EINVAL with a message in err, which the caller shows with the usage
 * (exit status 2).  Pointers in the result borrow argv. */
#ifndef CLI_ADMIN_ARGS_H
#define CLI_ADMIN_ARGS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum cli_admin_cmd {
	CLI_ADMIN_HELP = 0,
	CLI_ADMIN_OST_LIST,
	CLI_ADMIN_DF,
	CLI_ADMIN_SETSTRIPE,
	CLI_ADMIN_GETSTRIPE,
	CLI_ADMIN_PING,
} cli_admin_cmd;

/* stripe count meaning "every OST" (lfs setstripe -c -1) */
#define CLI_STRIPE_ALL (-1)
#define CLI_PING_MAX 1000

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
} cli_admin_args;

/* Parse argv[1..argc) into a.  0, or -EINVAL with a message in err. */
int cli_admin_parse_args(int argc, char **argv, cli_admin_args *a, char *err, size_t errlen);

/* Check a stripe count/size given as text, as setstripe does.
 * 0 or -EINVAL with a message in err. */
int cli_admin_parse_count(const char *s, int32_t *count, char *err, size_t errlen);
int cli_admin_parse_stripe_size(const char *s, uint32_t *size, char *err, size_t errlen);

void cli_admin_usage(FILE *out);

#endif
