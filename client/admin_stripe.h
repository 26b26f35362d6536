/* admin_stripe.h — pfsadmin setstripe and getstripe, as lfs has them.
 *
 * setstripe on a directory sets (or with -d deletes) the default layout of
 * files created below it.  A file gets its layout when it is created, as in
 * Lustre: setstripe on a PATH that does not exist creates it empty with the
 * layout (CREATE, exclusive), and on an existing file that has a layout it
 * is refused with -EEXIST, "file already has a layout" — whether the file
 * is empty or not.  Only a regular file without any layout yet (count 0,
 * e.g. made by mknod) may get one.  -i/--stripe-index N puts stripe 0 on
 * OST N and the next stripes on the next OSTs up that are up, wrapping (as
 * lfs; the MDS skips OSTs that are down); -1 (the default) lets the MDS
 * choose.  On a directory it is part of the default that files inherit.
 * An index that is no OST is refused by the MDS (-EINVAL, said in words).
 *
 * getstripe prints each PATH's layout (a directory's default); selectors
 * print single values (lfs getstripe -c/-S/-i), -y YAML.  The first OST
 * (stripe_index, lfs's lmm_stripe_offset) is a file's stripe 0's or a
 * directory default's; -1 when none was given or a file has no layout. */
#ifndef CLI_ADMIN_STRIPE_H
#define CLI_ADMIN_STRIPE_H

#include "client/admin_args.h"
#include "client/admin_cmd.h"

/* 0, -EEXIST (file has a layout), -EOPNOTSUPP (-i N), -ENOTDIR (-d on a
 * non-directory), a stat/MDS/transport errno.  Prints the resulting layout
 * (or default) as getstripe does. */
int cli_admin_setstripe(cli_admin *a, const char *path, const cli_stripe_req *req);
/* select: CLI_SEL_* (0 = the whole layout); yaml: YAML instead of text.
 * With several paths every one is tried; each failure is reported on
 * a->err as it happens (a->reported) and the first one is returned. */
int cli_admin_getstripe(cli_admin *a, const char *const *paths, int npaths, unsigned select,
			int yaml);

/* cli_admin_run's entries. */
int cli_admin_run_setstripe(cli_admin *a, const cli_admin_args *args);
int cli_admin_run_getstripe(cli_admin *a, const cli_admin_args *args);

#endif
