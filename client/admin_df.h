/* admin_df.h — pfsadmin ost list and df: the OSTs as the MDS registers
 * them, and space or inodes per target in the form of lfs df.
 *
 * Targets are named as Lustre names them: FSNAME-OSTxxxx_UUID with the
 * index in four hex digits (pfs-OST000a_UUID), FSNAME-MDT0000_UUID for the
 * MDS; the OST's own uuid stays in ost list and in JSON ("uuid").
 *
 * df's summary is the sum over the OSTs that are up: a down OST is listed
 * as "inactive device" and counted neither in the space nor in the use
 * percentage, so the summary says what can be written now.  The MDT line
 * comes from the MDS's statfs: its inodes are the records in its LMDB.
 * Limits of what the MDS reports today (mds/ns.c mds_ns_statfs): no space
 * of its own (the MDT's byte columns are "-", JSON null), and no inode
 * limit — its LMDB has no inode table, and it says so by reporting exactly
 * CLI_MDS_INODES_UNLIMITED free inodes, which df shows as "-" (null)
 * rather than as a number nobody configured.  OSTs report the objects they
 * hold (IUsed) but no inode limit either. */
#ifndef CLI_ADMIN_DF_H
#define CLI_ADMIN_DF_H

#include <stddef.h>
#include <stdint.h>

#include "client/admin_args.h"
#include "client/admin_cmd.h"

/* ffree of an MDS statfs that means "no fixed number of inodes". */
#define CLI_MDS_INODES_UNLIMITED (1ull << 32)

/* "pfs-OST000a" (kind "OST" or "MDT"), into buf.  Returns buf. */
char *cli_admin_target_name(const char *fsname, const char *kind, uint32_t index, char *buf,
			    size_t sz);

int cli_admin_ost_list(cli_admin *a);
/* human: sizes as 1.5G (else 1K blocks, as lfs df); inodes: df -i. */
int cli_admin_df(cli_admin *a, int human, int inodes);

/* cli_admin_run's entries. */
int cli_admin_run_ost_list(cli_admin *a, const cli_admin_args *args);
int cli_admin_run_df(cli_admin *a, const cli_admin_args *args);

#endif
