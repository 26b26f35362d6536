/* config.h — table-driven configuration: INI files (libinih) plus
 * command-line overrides, one table of {key, type, offset, default} per
 * program.
 *
 * Order of precedence: defaults < INI file (--config FILE) < command line
 * (--key=value, --key value, or -o key=value[,key=value]).  In an INI file,
 * keys are read from the program's section (e.g. [mds]) and from keys
 * before any section; other sections are ignored so one file can configure
 * a whole cluster.  Sizes accept K/M/G/T suffixes (powers of 1024).
 * Every error fills err with a readable message and returns -EINVAL. */
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
	PFS_CFG_DOUBLE, /* double */
} pfs_cfg_type;

typedef struct pfs_cfg_opt {
	const char *key;
	pfs_cfg_type type;
	size_t offset;  /* offsetof(struct, field) */
	size_t size;    /* buffer size for PFS_CFG_STR */
	const char *def;
	const char *help;
} pfs_cfg_opt;

#define PFS_CFG_END { NULL, 0, 0, 0, NULL, NULL }

int pfs_cfg_defaults(const pfs_cfg_opt *tab, void *obj, char *err, size_t errlen);
int pfs_cfg_set(const pfs_cfg_opt *tab, void *obj, const char *key, const char *val,
		char *err, size_t errlen);
int pfs_cfg_load_file(const pfs_cfg_opt *tab, void *obj, const char *path,
		      const char *section, char *err, size_t errlen);
/* Apply defaults, then --config/-c FILE, then overrides, from argv.  Other
 * arguments that start with '-' and are in `flags` (e.g. "-f,-d,--foreground")
 * are left for the caller (*nflags).  Positional arguments are returned in
 * pos[0..*npos) (pointers into argv; at most maxpos).  "-h"/"--help" sets
 * *help. */
int pfs_cfg_parse_argv(const pfs_cfg_opt *tab, void *obj, const char *section, int argc,
		       char **argv, char **pos, int maxpos, int *npos, int *help,
		       char *err, size_t errlen);
/* Print "  --key=DEFAULT  help" lines for a usage message. */
void pfs_cfg_usage(const pfs_cfg_opt *tab, FILE *out);
/* Parse "64M" etc.; 0 or -EINVAL. */
int pfs_parse_size(const char *s, uint64_t *out);

#endif
