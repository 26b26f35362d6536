/* mds_link.h — the OSS's control link to the MDS: registration and
 * heartbeats.
 *
 * A background thread registers the OSS (PFS_OP_MDS_OSS_REGISTER: OSS name,
 * advertised host, data and control ports, and each OST's uuid, capacity
 * and object count); the reply's OST indexes are bound into the server
 * (oss_server_set_index), after which data requests for those OSTs are
 * served.  Then it sends PFS_OP_MDS_OSS_HEARTBEAT every heartbeat_ms.
 *
 * When the MDS goes away (transport error, or an error status such as an
 * MDS that no longer knows us), the OSS keeps serving data with the indexes
 * it has, and the thread retries registration every heartbeat_ms until the
 * MDS answers again — an MDS restart never needs an OSS restart.  The MDS
 * keys OSTs on their uuid, so re-registration gives the same indexes; if it
 * does not, the new ones are bound (and a warning logged). */
#ifndef OSS_MDS_LINK_H
#define OSS_MDS_LINK_H

#include <stdint.h>

#include "oss/server.h"

#define OSS_HEARTBEAT_MS_DEFAULT 1000

struct pfs_auth_key;
typedef struct oss_mds_link oss_mds_link;

typedef struct oss_mds_link_opts {
	const char *mds_host;       /* copied */
	uint16_t mds_port;
	const char *name;           /* OSS name, copied */
	const char *advertise_host; /* host clients use to reach us, copied */
	unsigned heartbeat_ms;      /* 0 = OSS_HEARTBEAT_MS_DEFAULT */
	/* The OSS key (role oss; common/auth.h) for the connection to the
	 * MDS; NULL = no authentication.  Borrowed: must outlive the link. */
	const struct pfs_auth_key *auth;
} oss_mds_link_opts;

/* Start the link thread for srv (borrowed; must outlive the link).  Returns
 * at once: registration happens in the background.  0 or -errno. */
int oss_mds_link_start(const oss_mds_link_opts *opts, oss_server *srv, oss_mds_link **out);
/* Stop the thread (waits for an RPC in progress, at most its timeout) and
 * free the link.  NULL is a no-op. */
void oss_mds_link_stop(oss_mds_link *l);
/* 1 if the last exchange with the MDS succeeded. */
int oss_mds_link_registered(oss_mds_link *l);
/* Number of successful registrations so far (re-registrations count). */
unsigned oss_mds_link_registrations(oss_mds_link *l);

#endif
