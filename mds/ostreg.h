/* ostreg.h — the OST registry of the MDS (ostreg.c): OSTs, their OSSes'
 * addresses and liveness, and STATFS over them.  Part of the namespace's
 * API: mds/ns.h includes it.  OST choice for new files happens inside
 * mds_ns_create and friends. */
#ifndef MDS_OSTREG_H
#define MDS_OSTREG_H

#include <stdint.h>

#include "common/msg.h"

typedef struct mds_ns mds_ns;

/* One OST as an OSS reports it in REGISTER / HEARTBEAT. */
typedef struct mds_ost_report {
	char uuid[64];   /* REGISTER only */
	uint32_t index;  /* HEARTBEAT only */
	uint64_t total_bytes, free_bytes, objects;
} mds_ost_report;

/* Register n OSTs of one OSS: an uuid seen before keeps its index.  idx[]
 * gets the indices; the OSTs are up from now on. */
int mds_ns_oss_register(mds_ns *ns, const char *oss, const char *host,
			uint16_t data_port, uint16_t ctl_port, const mds_ost_report *r,
			uint32_t n, uint32_t *idx);
/* OSTs registered before this start count as up (with their stored
 * capacity) until heartbeat_timeout_ms pass without a word from them.
 * Update capacity and liveness; -ENOENT for an unknown index, -EPERM if it
 * belongs to another OSS. */
int mds_ns_oss_heartbeat(mds_ns *ns, const char *oss, const mds_ost_report *r, uint32_t n);
/* Called by the MDS's loop at every tick (common/server.h): when a tick
 * comes more than 3 s after the one before, the MDS was stopped or starved
 * and every OST's silence is shortened by that gap; until that late tick
 * runs, liveness is judged as at the last tick. */
void mds_ns_ost_tick(mds_ns *ns);
/* All OSTs, by index, in a malloc'd *out (caller frees); *n the count.
 * up: heard within the timeout (an OST presumed up after a restart is not,
 * though it takes new files). */
int mds_ns_ost_list(mds_ns *ns, pfs_ost_info **out, uint32_t *n);
/* Control address of OST idx (host holds 64 bytes); *up its liveness as
 * in mds_ns_ost_list. */
int mds_ns_ost_addr(mds_ns *ns, uint32_t idx, char *host, uint16_t *ctl_port, int *up);
/* STATFS: the capacity of the OSTs heard since start or presumed up after
 * a restart (block size 4096) and the number of inodes. */
int mds_ns_statfs(mds_ns *ns, const pfs_cred *c, pfs_statfs *out);

#endif
