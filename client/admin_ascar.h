/* admin_ascar.h — pfsadmin qos ascar load|show|off: the ASCAR rule set the
 * MDS distributes to the clients (PFS_OP_MDS_ASCAR_SET/GET; client/ascar_ctl.h). */
#ifndef CLI_ADMIN_ASCAR_H
#define CLI_ADMIN_ASCAR_H

#include "client/admin_cmd.h"

/* Reads args->path, checks it with qos/ascar's parser (errors name the
 * file and the line), stores it on the MDS (root only). */
int cli_admin_ascar_load(cli_admin *a, const cli_admin_args *args);
int cli_admin_ascar_show(cli_admin *a, const cli_admin_args *args);
int cli_admin_ascar_off(cli_admin *a, const cli_admin_args *args);

#endif
