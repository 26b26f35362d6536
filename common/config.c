/* config.c — INI + command-line configuration from a table (see config.h).
 *
 * A value is parsed into a local and range-checked before it is stored, so
 * a refused value leaves the field as it was.  Lookups scan the table
 * (tens of rows, done once per option at start). */
#include "common/config.h"

#include <errno.h>
#include <ini.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/log.h"

int pfs_parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	unsigned shift = 0;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	switch (*end) {
	case '\0': break;
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	default: return -EINVAL;
	}
	if (*end == 'i' || *end == 'B')
		end++;
	if (*end == 'B')
		end++;
	if (*end || (shift && v > (UINT64_MAX >> shift)))
		return -EINVAL;
	*out = (uint64_t)v << shift;
	return 0;
}

/* Keys are the same with '-' for '_'. */
static int key_eq(const char *a, const char *b)
{
	while (*a && *b && (*a == *b || ((*a == '-' || *a == '_') && (*b == '-' || *b == '_')))) {
		a++;
		b++;
	}
	return !*a && !*b;
}

static const pfs_cfg_opt *find(const pfs_cfg_opt *tab, const char *key)
{
	for (; tab->key; tab++)
		if (key_eq(tab->key, key))
			return tab;
	return NULL;
}

/* The row an alias stands for (itself for an ordinary row); NULL when the
 * table names a key it does not have. */
static const pfs_cfg_opt *target_of(const pfs_cfg_opt *tab, const pfs_cfg_opt *o)
{
	if (!o->alias_of)
		return o;
	for (; tab->key; tab++)
		if (!tab->alias_of && !strcmp(tab->key, o->alias_of))
			return tab;
	return NULL;
}

static int is_number(pfs_cfg_type t)
{
	return t == PFS_CFG_INT || t == PFS_CFG_U64 || t == PFS_CFG_SIZE || t == PFS_CFG_DOUBLE;
}

/* A range bound as people write it: 86400000, not 8.64e+07. */
static const char *num_text(double v, char *buf, size_t len)
{
	if (v == floor(v) && fabs(v) < 1e18)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%g", v);
	return buf;
}

static int out_of_range(const pfs_cfg_opt *o, double v, const char *val, char *err, size_t errlen)
{
	char lo[32], hi[32];

	if (o->min < o->max && !(v >= o->min && v <= o->max)) {
		snprintf(err, errlen, "%s: %s is out of range (%s..%s)", o->key, val,
			 num_text(o->min, lo, sizeof(lo)), num_text(o->max, hi, sizeof(hi)));
		return 1;
	}
	return 0;
}

/* Parse val for row o (not an alias) and store it. */
static int set_one(const pfs_cfg_opt *o, void *obj, const char *val, char *err, size_t errlen)
{
	char *p = (char *)obj + o->offset, *end;

	if (!*val && (o->type != PFS_CFG_STR || (o->def && *o->def))) {
		snprintf(err, errlen, "%s: needs a value", o->key);
		return -EINVAL;
	}
	switch (o->type) {
	case PFS_CFG_STR:
		if (strlen(val) >= o->size) {
			snprintf(err, errlen, "%s: value too long (max %zu)", o->key, o->size - 1);
			return -EINVAL;
		}
		memmove(p, val, strlen(val) + 1);
		return 0;
	case PFS_CFG_INT: {
		long v;
		errno = 0;
		v = strtol(val, &end, 10);
		if ((errno && errno != ERANGE) || *end || end == val)
			break;
		/* The table's range first: it names the limits people need. */
		if (out_of_range(o, (double)v, val, err, errlen))
			return -EINVAL;
		if (errno || v < -2147483647L || v > 2147483647L)
			break;
		*(int *)(void *)p = (int)v;
		return 0;
	}
	case PFS_CFG_U64: {
		unsigned long long v;
		errno = 0;
		if (*val == '-' || *val == ' ')
			break;
		v = strtoull(val, &end, 10);
		if (errno || *end || end == val)
			break;
		if (out_of_range(o, (double)v, val, err, errlen))
			return -EINVAL;
		*(uint64_t *)(void *)p = v;
		return 0;
	}
	case PFS_CFG_SIZE: {
		uint64_t v;
		if (pfs_parse_size(val, &v))
			break;
		if (out_of_range(o, (double)v, val, err, errlen))
			return -EINVAL;
		*(uint64_t *)(void *)p = v;
		return 0;
	}
	case PFS_CFG_BOOL:
		if (!strcasecmp(val, "1") || !strcasecmp(val, "yes") || !strcasecmp(val, "true") ||
		    !strcasecmp(val, "on")) {
			*(int *)(void *)p = 1;
			return 0;
		}
		if (!strcasecmp(val, "0") || !strcasecmp(val, "no") || !strcasecmp(val, "false") ||
		    !strcasecmp(val, "off")) {
			*(int *)(void *)p = 0;
			return 0;
		}
		break;
	case PFS_CFG_DOUBLE: {
		double v;
		errno = 0;
		v = strtod(val, &end);
		if (errno || *end || end == val || !isfinite(v))
			break;
		if (out_of_range(o, v, val, err, errlen))
			return -EINVAL;
		*(double *)(void *)p = v;
		return 0;
	}
	}
	snprintf(err, errlen, "%s: bad value '%s'", o->key, val);
	return -EINVAL;
}

/* A deprecated key: convert val and set the key that replaced it. */
static int set_alias(const pfs_cfg_opt *tab, const pfs_cfg_opt *o, void *obj, const char *val,
		     char *err, size_t errlen)
{
	const pfs_cfg_opt *t = target_of(tab, o);
	char buf[4096], msg[512];
	int rc;

	if (!t) {
		snprintf(err, errlen, "%s: deprecated for unknown key '%s'", o->key, o->alias_of);
		return -EINVAL;
	}
	if (!*val) {
		snprintf(err, errlen, "%s: needs a value", o->key);
		return -EINVAL;
	}
	if (is_number(t->type) && o->scale != 0 && o->scale != 1) {
		char *end;
		double v;

		errno = 0;
		v = strtod(val, &end);
		if (errno || *end || end == val || !isfinite(v)) {
			snprintf(err, errlen, "%s: bad value '%s'", o->key, val);
			return -EINVAL;
		}
		v *= o->scale;
		if (t->type == PFS_CFG_DOUBLE) {
			snprintf(buf, sizeof(buf), "%.17g", v);
		} else if (v == floor(v) && fabs(v) < 1e19) {
			snprintf(buf, sizeof(buf), "%.0f", v);
		} else {
			snprintf(err, errlen, "%s: '%s' gives %s=%g, not a whole number", o->key, val,
				 t->key, v);
			return -EINVAL;
		}
	} else if (snprintf(buf, sizeof(buf), "%s%s", o->prefix ? o->prefix : "", val) >=
		   (int)sizeof(buf)) {
		snprintf(err, errlen, "%s: value too long", o->key);
		return -EINVAL;
	}
	rc = set_one(t, obj, buf, msg, sizeof(msg));
	if (rc) {
		snprintf(err, errlen, "%s=%s (deprecated): %s", o->key, val, msg);
		return rc;
	}
	pfs_log(PFS_LOG_WARNING, "option '%s' is deprecated%s%s%s: use %s=%s", o->key,
		o->help ? " (" : "", o->help ? o->help : "", o->help ? ")" : "", t->key, buf);
	return 0;
}

int pfs_cfg_set(const pfs_cfg_opt *tab, void *obj, const char *key, const char *val,
		char *err, size_t errlen)
{
	const pfs_cfg_opt *o = find(tab, key), *t;

	if (!o) {
		snprintf(err, errlen, "unknown option '%s'", key);
		return -EINVAL;
	}
	if (!val) {
		t = target_of(tab, o);
		if (!t || t->type != PFS_CFG_BOOL) {
			snprintf(err, errlen, "%s: needs a value (%s=...)", o->key, o->key);
			return -EINVAL;
		}
		val = "1";
	}
	if (o->alias_of)
		return set_alias(tab, o, obj, val, err, errlen);
	return set_one(o, obj, val, err, errlen);
}

int pfs_cfg_defaults(const pfs_cfg_opt *tab, void *obj, char *err, size_t errlen)
{
	for (; tab->key; tab++) {
		int rc;

		if (tab->alias_of)
			continue;
		rc = set_one(tab, obj, tab->def ? tab->def : "", err, errlen);
		if (rc)
			return rc;
	}
	return 0;
}

struct ini_ctx {
	const pfs_cfg_opt *tab;
	void *obj;
	const char *section;
	char *err;
	size_t errlen;
	int rc;
};

static int ini_cb(void *arg, const char *section, const char *name, const char *value)
{
	struct ini_ctx *c = arg;

	if (*section && (!c->section || strcmp(section, c->section)))
		return 1;
	if (c->rc == 0)
		c->rc = pfs_cfg_set(c->tab, c->obj, name, value ? value : "", c->err, c->errlen);
	return c->rc == 0;
}

int pfs_cfg_load_file(const pfs_cfg_opt *tab, void *obj, const char *path,
		      const char *section, char *err, size_t errlen)
{
	struct ini_ctx c = { tab, obj, section, err, errlen, 0 };
	char msg[256];
	int rc = ini_parse(path, ini_cb, &c);

	if (c.rc) {
		snprintf(msg, sizeof(msg), "%s", err);
		snprintf(err, errlen, "%s: %s", path, msg);
		return c.rc;
	}
	if (rc < 0) {
		snprintf(err, errlen, "%s: cannot open", path);
		return -ENOENT;
	}
	if (rc > 0) {
		snprintf(err, errlen, "%s:%d: syntax error", path, rc);
		return -EINVAL;
	}
	return 0;
}

int pfs_cfg_set_list(const pfs_cfg_opt *tab, void *obj, const char *list, char *err,
		     size_t errlen)
{
	char *dup = strdup(list), *save = NULL, *tok;
	int rc = 0;

	if (!dup)
		return -ENOMEM;
	for (tok = strtok_r(dup, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		if (eq)
			*eq = '\0';
		rc = pfs_cfg_set(tab, obj, tok, eq ? eq + 1 : NULL, err, errlen);
	}
	free(dup);
	return rc;
}

/* -h/--help or -V/--version among the arguments (skipping values of -c
 * and -o): PFS_CFG_HELP, PFS_CFG_VERSION or 0. */
static int wants_info(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-c") || !strcmp(a, "--config") || !strcmp(a, "-o"))
			i++;
		else if (!strcmp(a, "-h") || !strcmp(a, "--help"))
			return PFS_CFG_HELP;
		else if (!strcmp(a, "-V") || !strcmp(a, "--version"))
			return PFS_CFG_VERSION;
	}
	return 0;
}

int pfs_cfg_parse_argv(const pfs_cfg_opt *tab, void *obj, const char *section, int argc,
		       char **argv, char **pos, int maxpos, int *npos, int *help,
		       char *err, size_t errlen)
{
	int rc = pfs_cfg_defaults(tab, obj, err, errlen);

	*npos = 0;
	*help = 0;
	if (rc)
		return rc;
	*help = wants_info(argc, argv);
	if (*help)
		return 0;
	/* The config file first, wherever it appears, so the command line wins. */
	for (int i = 1; i < argc; i++) {
		const char *f = NULL;
		if (!strcmp(argv[i], "-c") || !strcmp(argv[i], "--config")) {
			if (i + 1 >= argc) {
				snprintf(err, errlen, "%s needs a file", argv[i]);
				return -EINVAL;
			}
			f = argv[++i];
		} else if (!strncmp(argv[i], "--config=", 9)) {
			f = argv[i] + 9;
		} else if (!strcmp(argv[i], "-o")) {
			i++;
		}
		if (f && (rc = pfs_cfg_load_file(tab, obj, f, section, err, errlen)))
			return rc;
	}
	for (int i = 1; i < argc; i++) {
		char *a = argv[i];

		if (!strcmp(a, "-c") || !strcmp(a, "--config")) {
			i++;
			continue;
		}
		if (!strncmp(a, "--config=", 9))
			continue;
		if (!strcmp(a, "-o")) {
			if (i + 1 >= argc) {
				snprintf(err, errlen, "-o needs an argument");
				return -EINVAL;
			}
			rc = pfs_cfg_set_list(tab, obj, argv[++i], err, errlen);
		} else if (!strncmp(a, "-o", 2) && a[2]) {
			rc = pfs_cfg_set_list(tab, obj, a + 2, err, errlen);
		} else if (!strncmp(a, "--", 2) && a[2]) {
			char key[128];
			const char *eq = strchr(a + 2, '=');
			size_t kl = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
			const pfs_cfg_opt *o, *t;

			if (kl >= sizeof(key)) {
				snprintf(err, errlen, "option too long: %s", a);
				return -EINVAL;
			}
			memcpy(key, a + 2, kl);
			key[kl] = '\0';
			o = find(tab, key);
			if (!o) {
				snprintf(err, errlen, "unknown option '%s'", a);
				return -EINVAL;
			}
			t = target_of(tab, o);
			if (eq)
				rc = pfs_cfg_set(tab, obj, key, eq + 1, err, errlen);
			else if (t && t->type == PFS_CFG_BOOL)
				rc = pfs_cfg_set(tab, obj, key, NULL, err, errlen);
			else if (i + 1 < argc)
				rc = pfs_cfg_set(tab, obj, key, argv[++i], err, errlen);
			else {
				snprintf(err, errlen, "option '%s' needs a value", a);
				return -EINVAL;
			}
		} else if (a[0] == '-' && a[1]) {
			snprintf(err, errlen, "unknown option '%s'", a);
			return -EINVAL;
		} else {
			if (*npos >= maxpos) {
				snprintf(err, errlen, "unexpected argument '%s'", a);
				return -EINVAL;
			}
			pos[(*npos)++] = a;
		}
		if (rc)
			return rc;
	}
	return 0;
}

void pfs_cfg_usage(const pfs_cfg_opt *tab, const char *lead, FILE *out)
{
	int deprecated = 0;

	for (const pfs_cfg_opt *o = tab; o->key; o++) {
		char k[96];

		if (o->alias_of) {
			deprecated = 1;
			continue;
		}
		snprintf(k, sizeof(k), "%s%s=%s", lead, o->key, o->def && *o->def ? o->def : "...");
		fprintf(out, "  %-34s %s\n", k, o->help ? o->help : "");
	}
	if (!deprecated)
		return;
	fprintf(out, "deprecated keys, still accepted with a warning:\n");
	for (const pfs_cfg_opt *o = tab; o->key; o++) {
		char k[96];

		if (!o->alias_of)
			continue;
		snprintf(k, sizeof(k), "%s%s", lead, o->key);
		fprintf(out, "  %-34s old name of %s%s%s\n", k, o->alias_of, o->help ? ", " : "",
			o->help ? o->help : "");
	}
}
