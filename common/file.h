/* file.h — small file helpers shared by the daemons. */
#ifndef PFS_FILE_H
#define PFS_FILE_H

#include <stddef.h>
#include <stdio.h>

/* Write text to path atomically (a temporary file in the same directory,
 * then rename), so a reader polling for the file (a port file, a pid file)
 * never sees it half written.  Returns 0 or a negative errno; on failure
 * path is untouched and the temporary file removed. */
int pfs_file_write_atomic(const char *path, const char *text);

/* Read f to its end into a malloc'd buffer: *buf (caller frees; never NULL
 * on success, even for an empty file) and *len.  0, -ENOMEM or -EIO. */
int pfs_file_read_stream(FILE *f, char **buf, size_t *len);

#endif
