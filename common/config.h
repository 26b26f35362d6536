/* config.h — table-driven configuration: INI files (libinih) plus
 * command-line overrides, one table of {key, type, offset, default, help,
 * range} per program.
 *
 * Order of precedence: defaults < INI file (--config FILE) < command line
 * (--key=value, --key value, or -o key=value[,key=value]).  In an INI file,
 * keys are read from the program's section (e.g. [mds]) and from keys
 * before any section; other sections are ignored so one file can configure
 * a whole cluster.  In keys, '-' and '_' are the same.
 *
 * Values are checked as they are set, with a message naming the key:
 *  - an unknown key is an error (in the file and on the command line);
 *  - every number is decimal; sizes accept K/M/G/T suffixes (powers of
 *    1024); a row with min < max refuses numbers outside [min, max];
 *  - a value may be empty only for a string whose default is empty (there
 *    "" means "not set"); "-o key" without '=' is only for booleans
 *    (key=1), so `-o jobid_var` is refused instead of setting "1".
 *
 * Units: every duration key ends in its unit, _ms or _s.  A renamed key
 * stays as a deprecated alias row: setting it logs a warning naming the
 * new key and sets that key, its number multiplied by `scale` (seconds to
 * milliseconds: 1000) or its string preceded by `prefix`.
 *
 * Every error fills err with a readable message and returns -EINVAL (or
 * -ENOENT for a config file that cannot be opened). */
#ifndef PFS_CONFIG_H
#define PFS_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum pfs_cfg_type {
	PFS_CFG_STR,    /* char[size] */
	PFS_CFG_INT,    /* int */
	PFS_CFG_U64,    /* uint64_t */
	PFS_CFG_SIZE,   /* uint64_t, with K/M/G/T suffixes */
	PFS_CFG_BOOL,   /* int: 1/0, yes/no, true/false, on/off */
	PFS_CFG_DOUBLE, /* double, finite */
} pfs_cfg_type;

typedef struct pfs_cfg_opt {
	const char *key;
	pfs_cfg_type type;
	size_t offset;  /* offsetof(struct, field) */
	size_t size;    /* buffer size for PFS_CFG_STR */
	const char *def;
	const char *help;
	double min, max;      /* numbers: the accepted range, when min < max */
	/* A deprecated alias row has only key, help and these: */
	const char *alias_of; /* the key that replaces this one (in the same table) */
	double scale;         /* numbers: value * scale is set (0 = 1) */
	const char *prefix;   /* strings: prefix + value is set */
} pfs_cfg_opt;

/* A row for field f of struct st (lo < hi: the range of a number). */
#define PFS_CFG_OPT(st, k, t, f, d, h, lo, hi)                                          \
	{ .key = (k), .type = (t), .offset = offsetof(st, f), .size = sizeof(((st *)0)->f), \
	  .def = (d), .help = (h), .min = (lo), .max = (hi) }
#define PFS_CFG_END { NULL, 0, 0, 0, NULL, NULL, 0, 0, NULL, 0, NULL }
/* A deprecated key: PFS_CFG_ALIAS("heartbeat_timeout", "heartbeat_timeout_ms", 1000, NULL,
 * "seconds"). */
#define PFS_CFG_ALIAS(old, new, sc, pre, h) \
	{ old, 0, 0, 0, NULL, h, 0, 0, new, sc, pre }

/* What pfs_cfg_parse_argv found besides settings (*help). */
#define PFS_CFG_HELP 1    /* -h, --help */
#define PFS_CFG_VERSION 2 /* -V, --version */

int pfs_cfg_defaults(const pfs_cfg_opt *tab, void *obj, char *err, size_t errlen);
/* Set key to val.  val NULL means the key was given alone ("-o ro"): a
 * boolean is set to 1, any other type needs a value.  0 or -EINVAL. */
int pfs_cfg_set(const pfs_cfg_opt *tab, void *obj, const char *key, const char *val,
		char *err, size_t errlen);
int pfs_cfg_load_file(const pfs_cfg_opt *tab, void *obj, const char *path,
		      const char *section, char *err, size_t errlen);
/* Apply "k=v,k2=v2" (an -o list) with pfs_cfg_set. */
int pfs_cfg_set_list(const pfs_cfg_opt *tab, void *obj, const char *list, char *err,
		     size_t errlen);
/* -h/--help or -V/--version anywhere in argv (not as the value of -c or
 * -o) stops everything: *help = PFS_CFG_HELP or PFS_CFG_VERSION and 0 is
 * returned with only the defaults applied, so --help works whatever else
 * is wrong.  Otherwise apply defaults, then --config/-c FILE, then
 * overrides, from argv; *help = 0.  Positional arguments are returned in
 * pos[0..*npos) (pointers into argv; at most maxpos). */
int pfs_cfg_parse_argv(const pfs_cfg_opt *tab, void *obj, const char *section, int argc,
		       char **argv, char **pos, int maxpos, int *npos, int *help,
		       char *err, size_t errlen);
/* Print "  LEAD key=DEFAULT  help" lines for a usage message (lead "--" for
 * the daemons, "" for mount.pfs's -o options), then the deprecated keys. */
void pfs_cfg_usage(const pfs_cfg_opt *tab, const char *lead, FILE *out);
/* Parse "64M" etc.; 0 or -EINVAL. */
int pfs_parse_size(const char *s, uint64_t *out);

#endif
