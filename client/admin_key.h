/* admin_key.h — `pfsadmin key gen`: write key files (common/auth.h). */
#ifndef PFS_CLI_ADMIN_KEY_H
#define PFS_CLI_ADMIN_KEY_H

/* argv[0] is "key": `key gen --role ROLE [--master SERVERKEY] FILE`.
 * Prints errors itself; returns the exit status (0, 1 error, 2 usage). */
int cli_admin_key_main(int argc, char **argv);

#endif
