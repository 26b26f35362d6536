/* admin_lfsck.h — pfsadmin lfsck [--dry-run]: the MDS's orphan object
 * scrubber (PFS_OP_MDS_LFSCK, mds/lfsck.h) run on demand.
 *
 * The MDS lists the objects of every OST that is up, compares them with
 * every layout (open-unlinked files included) and its destroy log, and
 * queues the objects nothing references to the destroyer (with --dry-run
 * it only counts them).  Printed per OST: objects seen, referenced,
 * orphaned, destroyed (queued; 0 with --dry-run); an OST the MDS could not
 * list is shown as not reached.  Root on an admin key only (the MDS says
 * EACCES/EPERM otherwise).
 *
 * JSON: {"dry_run", "osts": [{"index", "name", "reached", "seen",
 * "referenced", "orphaned", "destroyed"}], "seen", "referenced",
 * "orphaned", "destroyed"}: counts are null for an OST not reached, the
 * totals sum the reached ones. */
#ifndef CLI_ADMIN_LFSCK_H
#define CLI_ADMIN_LFSCK_H

#include "client/admin_args.h"
#include "client/admin_cmd.h"

int cli_admin_lfsck(cli_admin *a, const cli_admin_args *args);

#endif
