/* admin_key.c — `pfsadmin key gen --role ROLE [--master SERVERKEY] FILE`.
 *
 * Runs without an MDS: role mds or oss without --master makes a new
 * cluster master key M; with --master (a server key file) an oss/mds key
 * holds the same M and a client/admin key holds K_role derived from it
 * (common/auth.h).  The file is created 0600 and never overwritten. */
#include "client/admin_key.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include <sodium.h>

#include "common/auth.h"
#include "common/proto.h"

static int usage(FILE *f, int status)
{
	fprintf(f, "usage: pfsadmin key gen --role mds|oss|client|admin [--master SERVERKEY] FILE\n"
		"  a new master key (role mds or oss, no --master), or a key derived from the\n"
		"  server key SERVERKEY; FILE is created mode 0600 and never overwritten\n");
	return status;
}

int cli_admin_key_main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "role", required_argument, NULL, 'r' },
		{ "master", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *role_s = NULL, *master_s = NULL;
	char err[1200];
	pfs_auth_key master;
	unsigned role;
	int opt, rc;

	if (argc < 2 || strcmp(argv[1], "gen") != 0) {
		if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")))
			return usage(stdout, 0);
		fprintf(stderr, "pfsadmin: key: unknown command '%s'\n", argc < 2 ? "" : argv[1]);
		return usage(stderr, 2);
	}
	argc--;
	argv++;
	optind = 0;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":r:m:h", lo, NULL)) != -1) {
		if (opt == 'r') {
			role_s = optarg;
		} else if (opt == 'm') {
			master_s = optarg;
		} else if (opt == 'h') {
			return usage(stdout, 0);
		} else {
			fprintf(stderr, "pfsadmin: key gen: %s '%s'\n",
				opt == ':' ? "option needs a value" : "unknown option",
				argv[optind - 1]);
			return usage(stderr, 2);
		}
	}
	if (!role_s || optind != argc - 1) {
		fprintf(stderr, "pfsadmin: key gen: %s\n",
			!role_s ? "--role is required" : "exactly one FILE is needed");
		return usage(stderr, 2);
	}
	role = pfs_role_parse(role_s);
	if (!role) {
		fprintf(stderr, "pfsadmin: key gen: unknown role '%s' (mds, oss, client or admin)\n",
			role_s);
		return 2;
	}
	if (pfs_auth_init()) {
		fprintf(stderr, "pfsadmin: key gen: libsodium init failed\n");
		return 1;
	}
	if (master_s) {
		rc = pfs_auth_key_load_msg(master_s, &master, err, sizeof(err));
		if (rc) {
			fprintf(stderr, "pfsadmin: key gen: --master: %s\n", err);
			return 1;
		}
		if (master.role != PFS_ROLE_MDS && master.role != PFS_ROLE_OSS) {
			fprintf(stderr, "pfsadmin: key gen: --master %s: role %s, not a server key "
				"(mds or oss)\n", master_s, pfs_role_name(master.role));
			sodium_memzero(&master, sizeof(master));
			return 1;
		}
	} else if (role != PFS_ROLE_MDS && role != PFS_ROLE_OSS) {
		fprintf(stderr, "pfsadmin: key gen: a %s key is derived from the cluster's server "
			"key: give --master SERVERKEY\n", role_s);
		return 2;
	}
	rc = pfs_auth_key_write(argv[optind], role, master_s ? &master : NULL);
	sodium_memzero(&master, sizeof(master));
	if (rc) {
		fprintf(stderr, "pfsadmin: key gen: %s: %s\n", argv[optind],
			rc == -EEXIST ? "exists (not overwritten)" : pfs_strerror(rc));
		return 1;
	}
	return 0;
}
