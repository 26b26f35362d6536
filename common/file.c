/* file.c — small file helpers (see file.h). */
#include "common/file.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int pfs_file_write_atomic(const char *path, const char *text)
{
	char tmp[PATH_MAX + 32];
	FILE *f;
	int rc = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	f = fopen(tmp, "w");
	if (!f)
		return -errno;
	if (fputs(text, f) < 0)
		rc = -EIO;
	if (fclose(f) && !rc)
		rc = -errno;
	if (!rc && rename(tmp, path))
		rc = -errno;
	if (rc)
		unlink(tmp);
	return rc;
}

int pfs_file_read_stream(FILE *f, char **buf, size_t *len)
{
	size_t n = 0, cap = 65536;
	char *b = malloc(cap);

	if (!b)
		return -ENOMEM;
	for (;;) {
		size_t got = fread(b + n, 1, cap - n, f);

		n += got;
		if (got == 0)
			break;
		if (n == cap) {
			char *nb = realloc(b, cap * 2);

			if (!nb) {
				free(b);
				return -ENOMEM;
			}
			b = nb;
			cap *= 2;
		}
	}
	if (ferror(f)) {
		free(b);
		return -EIO;
	}
	*buf = b;
	*len = n;
	return 0;
}
