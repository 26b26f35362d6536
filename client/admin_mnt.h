/* admin_mnt.h — find the pfs mount that holds a path, and with it the MDS
 * address, from /proc/self/mountinfo.
 *
 * A pfs mount shows in mountinfo with fstype "fuse.pfs" and the MDS address
 * "HOST:PORT" as its mount source (mount.pfs sets fsname=HOST:PORT and
 * subtype=pfs).  The mount that holds a path is the one whose mount point is
 * the longest whole-component prefix of the path; when two mounts share a
 * mount point the later line wins, because it is mounted on top.  If that
 * mount is not a pfs mount the path is not in pfs (-ENOENT from the finder,
 * even when a pfs mount further up is shadowed by it).
 *
 * mountinfo escapes space, tab, newline and backslash in paths as octal
 * "\040", "\011", "\012", "\134"; the parser undoes that. */
#ifndef CLI_ADMIN_MNT_H
#define CLI_ADMIN_MNT_H

#include <stddef.h>

#define CLI_MNT_FSTYPE "fuse.pfs"

/* One parsed mountinfo line (fields we use, unescaped). */
typedef struct cli_mnt_entry {
	char mountpoint[4096];
	char fstype[64];
	char source[256];
} cli_mnt_entry;

/* Parse one mountinfo line (no trailing newline needed).  0 or -EINVAL if
 * the line is malformed or a field does not fit. */
int cli_mnt_parse_line(const char *line, cli_mnt_entry *e);

/* Undo mountinfo octal escapes from in into out (outsz bytes, NUL-terminated).
 * 0 or -ENAMETOOLONG. */
int cli_mnt_unescape(const char *in, size_t inlen, char *out, size_t outsz);

/* Find the mount holding abspath (absolute, canonical: no "." / ".." / "//",
 * no symlinks) in mountinfo file mountinfo_path.  If abspath is NULL, find
 * the only pfs mount (-ENOENT if none, -EEXIST if more than one).
 * On success copies the source ("HOST:PORT") into addr and the mount point
 * into mnt (either may be NULL).  Returns 0, -ENOENT (not in a pfs mount),
 * -ENAMETOOLONG, or the errno of opening/reading the file. */
int cli_mnt_find(const char *mountinfo_path, const char *abspath, char *addr,
		 size_t addrsz, char *mnt, size_t mntsz);

/* Make path absolute and canonical for cli_mnt_find: realpath(path), or for
 * a path that does not exist yet, realpath(dirname) + "/" + basename.
 * 0 or a negative errno (from realpath, or -ENAMETOOLONG). */
int cli_mnt_canon(const char *path, char *out, size_t outsz);

#endif
