/* config.c — INI + command-line configuration from a table (see config.h). */
#include "common/config.h"

#include <errno.h>
#include <ini.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

static const pfs_cfg_opt *find(const pfs_cfg_opt *tab, const char *key)
{
	for (; tab->key; tab++) {
		const char *a = tab->key, *b = key;
		/* '-' and '_' are the same in keys. */
		while (*a && *b && (*a == *b || ((*a == '-' || *a == '_') && (*b == '-' || *b == '_')))) {
			a++;
			b++;
		}
		if (!*a && !*b)
			return tab;
	}
	return NULL;
}

static int set_one(const pfs_cfg_opt *o, void *obj, const char *val, char *err, size_t errlen)
{
	char *p = (char *)obj + o->offset, *end;

	switch (o->type) {
	case PFS_CFG_STR:
		if (strlen(val) >= o->size) {
			snprintf(err, errlen, "%s: value too long (max %zu)", o->key, o->size - 1);
			return -EINVAL;
		}
		strcpy(p, val);
		return 0;
	case PFS_CFG_INT: {
		long v;
		errno = 0;
		v = strtol(val, &end, 0);
		if (errno || *end || end == val || v < -2147483647L || v > 2147483647L)
			break;
		*(int *)(void *)p = (int)v;
		return 0;
	}
	case PFS_CFG_U64: {
		unsigned long long v;
		errno = 0;
		if (*val == '-')
			break;
		v = strtoull(val, &end, 0);
		if (errno || *end || end == val)
			break;
		*(uint64_t *)(void *)p = v;
		return 0;
	}
	case PFS_CFG_SIZE:
		if (pfs_parse_size(val, (uint64_t *)(void *)p))
			break;
		return 0;
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
		if (errno || *end || end == val)
			break;
		*(double *)(void *)p = v;
		return 0;
	}
	}
	snprintf(err, errlen, "%s: bad value '%s'", o->key, val);
	return -EINVAL;
}

int pfs_cfg_set(const pfs_cfg_opt *tab, void *obj, const char *key, const char *val,
		char *err, size_t errlen)
{
	const pfs_cfg_opt *o = find(tab, key);

	if (!o) {
		snprintf(err, errlen, "unknown option '%s'", key);
		return -EINVAL;
	}
	return set_one(o, obj, val ? val : "", err, errlen);
}

int pfs_cfg_defaults(const pfs_cfg_opt *tab, void *obj, char *err, size_t errlen)
{
	for (; tab->key; tab++) {
		int rc = set_one(tab, obj, tab->def ? tab->def : "", err, errlen);
		if (rc && !(tab->type == PFS_CFG_STR))
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
		c->rc = pfs_cfg_set(c->tab, c->obj, name, value, c->err, c->errlen);
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

/* Apply "k=v,k2=v2". */
static int set_list(const pfs_cfg_opt *tab, void *obj, const char *list, char *err, size_t errlen)
{
	char *dup = strdup(list), *save = NULL, *tok;
	int rc = 0;

	if (!dup)
		return -ENOMEM;
	for (tok = strtok_r(dup, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		if (eq)
			*eq = '\0';
		rc = pfs_cfg_set(tab, obj, tok, eq ? eq + 1 : "1", err, errlen);
	}
	free(dup);
	return rc;
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
	/* The config file first, wherever it appears, so the command line wins. */
	for (int i = 1; i < argc; i++) {
		const char *f = NULL;
		if ((!strcmp(argv[i], "-c") || !strcmp(argv[i], "--config")) && i + 1 < argc)
			f = argv[++i];
		else if (!strncmp(argv[i], "--config=", 9))
			f = argv[i] + 9;
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
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			*help = 1;
			continue;
		}
		if (!strcmp(a, "-o")) {
			if (i + 1 >= argc) {
				snprintf(err, errlen, "-o needs an argument");
				return -EINVAL;
			}
			rc = set_list(tab, obj, argv[++i], err, errlen);
		} else if (!strncmp(a, "-o", 2) && a[2]) {
			rc = set_list(tab, obj, a + 2, err, errlen);
		} else if (!strncmp(a, "--", 2) && a[2]) {
			char key[128];
			const char *eq = strchr(a + 2, '=');
			size_t kl = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
			const pfs_cfg_opt *o;

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
			if (eq)
				rc = set_one(o, obj, eq + 1, err, errlen);
			else if (o->type == PFS_CFG_BOOL)
				rc = set_one(o, obj, "1", err, errlen);
			else if (i + 1 < argc)
				rc = set_one(o, obj, argv[++i], err, errlen);
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

void pfs_cfg_usage(const pfs_cfg_opt *tab, FILE *out)
{
	for (; tab->key; tab++) {
		char k[96];
		snprintf(k, sizeof(k), "--%s=%s", tab->key, tab->def && *tab->def ? tab->def : "...");
		fprintf(out, "  %-34s %s\n", k, tab->help ? tab->help : "");
	}
}
