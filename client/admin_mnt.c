/* admin_mnt.c — mountinfo parsing for pfsadmin (see admin_mnt.h).
 *
 * Line format (proc(5)): id parent maj:min root mountpoint options
 * [optional fields...] - fstype source superoptions.  The optional fields
 * end at a lone "-", so fstype and source are found after it, never by a
 * fixed column. */
#include "client/admin_mnt.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_mnt_unescape(const char *in, size_t inlen, char *out, size_t outsz)
{
	size_t o = 0;

	for (size_t i = 0; i < inlen; i++) {
		char ch = in[i];

		if (ch == '\\' && i + 3 < inlen &&
		    in[i + 1] >= '0' && in[i + 1] <= '3' &&
		    in[i + 2] >= '0' && in[i + 2] <= '7' &&
		    in[i + 3] >= '0' && in[i + 3] <= '7') {
			ch = (char)(((in[i + 1] - '0') << 6) | ((in[i + 2] - '0') << 3) |
				    (in[i + 3] - '0'));
			i += 3;
		}
		if (o + 1 >= outsz)
			return -ENAMETOOLONG;
		out[o++] = ch;
	}
	if (outsz == 0)
		return -ENAMETOOLONG;
	out[o] = '\0';
	return 0;
}

/* Next space-separated field of s starting at *pos; sets *f and *n. */
static int next_field(const char *s, size_t *pos, const char **f, size_t *n)
{
	size_t p = *pos;

	while (s[p] == ' ')
		p++;
	if (s[p] == '\0' || s[p] == '\n')
		return -EINVAL;
	*f = s + p;
	while (s[p] && s[p] != ' ' && s[p] != '\n')
		p++;
	*n = (size_t)(s + p - *f);
	*pos = p;
	return 0;
}

int cli_mnt_parse_line(const char *line, cli_mnt_entry *e)
{
	size_t pos = 0, n;
	const char *f;
	int rc;

	/* id, parent, maj:min, root */
	for (int i = 0; i < 4; i++)
		if (next_field(line, &pos, &f, &n))
			return -EINVAL;
	if (next_field(line, &pos, &f, &n))
		return -EINVAL;
	rc = cli_mnt_unescape(f, n, e->mountpoint, sizeof(e->mountpoint));
	if (rc)
		return -EINVAL;
	/* options, then optional fields up to the "-" separator */
	if (next_field(line, &pos, &f, &n))
		return -EINVAL;
	for (;;) {
		if (next_field(line, &pos, &f, &n))
			return -EINVAL;
		if (n == 1 && f[0] == '-')
			break;
	}
	if (next_field(line, &pos, &f, &n) ||
	    cli_mnt_unescape(f, n, e->fstype, sizeof(e->fstype)))
		return -EINVAL;
	if (next_field(line, &pos, &f, &n) ||
	    cli_mnt_unescape(f, n, e->source, sizeof(e->source)))
		return -EINVAL;
	return 0;
}

/* Length of the mount point if it holds abspath as a whole-component
 * prefix, else 0 ("/" holds everything and has length 1). */
static size_t holds(const char *mnt, const char *abspath)
{
	size_t l = strlen(mnt);

	if (l == 1 && mnt[0] == '/')
		return 1;
	if (strncmp(mnt, abspath, l) != 0)
		return 0;
	if (abspath[l] != '\0' && abspath[l] != '/')
		return 0;
	return l;
}

static int copy_out(const char *s, char *out, size_t outsz)
{
	if (!out)
		return 0;
	if (strlen(s) >= outsz)
		return -ENAMETOOLONG;
	strcpy(out, s);
	return 0;
}

int cli_mnt_find(const char *mountinfo_path, const char *abspath, char *addr,
		 size_t addrsz, char *mnt, size_t mntsz)
{
	FILE *f = fopen(mountinfo_path, "re");
	char *line = NULL;
	size_t cap = 0, best_len = 0;
	cli_mnt_entry *e = NULL, *best = NULL;
	int rc = -ENOENT, npfs = 0;

	if (!f)
		return -errno;
	e = malloc(sizeof(*e));
	best = malloc(sizeof(*best));
	if (!e || !best) {
		rc = -ENOMEM;
		goto out;
	}
	best->fstype[0] = '\0';
	while (getline(&line, &cap, f) >= 0) {
		size_t l;

		if (cli_mnt_parse_line(line, e))
			continue; /* a line we cannot read cannot be ours */
		if (!abspath) {
			if (strcmp(e->fstype, CLI_MNT_FSTYPE) == 0) {
				npfs++;
				*best = *e;
			}
			continue;
		}
		l = holds(e->mountpoint, abspath);
		/* >= : a later mount on the same point is on top. */
		if (l && l >= best_len) {
			best_len = l;
			*best = *e;
		}
	}
	if (ferror(f)) {
		rc = -EIO;
		goto out;
	}
	if (!abspath) {
		rc = npfs == 0 ? -ENOENT : npfs > 1 ? -EEXIST : 0;
	} else {
		rc = best_len && strcmp(best->fstype, CLI_MNT_FSTYPE) == 0 ? 0 : -ENOENT;
	}
	if (rc == 0)
		rc = copy_out(best->source, addr, addrsz);
	if (rc == 0)
		rc = copy_out(best->mountpoint, mnt, mntsz);
out:
	free(line);
	free(e);
	free(best);
	fclose(f);
	return rc;
}

int cli_mnt_canon(const char *path, char *out, size_t outsz)
{
	char buf[PATH_MAX];
	char *dir = NULL, *slash;
	const char *base;
	int rc = 0;

	if (realpath(path, buf)) {
		if (strlen(buf) >= outsz)
			return -ENAMETOOLONG;
		strcpy(out, buf);
		return 0;
	}
	if (errno != ENOENT)
		return -errno;
	/* Does not exist (yet): canonicalise the parent, keep the name. */
	dir = strdup(path);
	if (!dir)
		return -ENOMEM;
	/* Strip trailing slashes so "a/b/" names b. */
	for (size_t l = strlen(dir); l > 1 && dir[l - 1] == '/'; l--)
		dir[l - 1] = '\0';
	slash = strrchr(dir, '/');
	if (!slash) {
		base = dir;
		if (!realpath(".", buf)) {
			rc = -errno;
			goto out;
		}
	} else {
		*slash = '\0';
		base = slash + 1;
		if (!realpath(slash == dir ? "/" : dir, buf)) {
			rc = -errno;
			goto out;
		}
	}
	if (strcmp(base, ".") == 0 || strcmp(base, "..") == 0 || !*base) {
		rc = -ENOENT;
		goto out;
	}
	if (snprintf(out, outsz, "%s%s%s", buf, strcmp(buf, "/") ? "/" : "", base) >=
	    (int)outsz)
		rc = -ENAMETOOLONG;
out:
	free(dir);
	return rc;
}
