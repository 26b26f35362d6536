/* file.c — small file helpers (see file.h). */
#include "common/file.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
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
