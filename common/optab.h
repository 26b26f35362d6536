/* optab.h — the authorization table: one row per opcode of the wire
 * protocol (common/proto.h) saying who may send it and how it is treated.
 *
 * Each row holds
 *   name   the opcode's name (as pfs_op_name);
 *   roles  mask of PFS_ROLE_* (common/auth.h) of the peers that may send it
 *          (the role a peer proved in the handshake, pfs_sconn_role);
 *   cred   PFS_OPTAB_CRED_PEER when the payload carries a pfs_cred that the
 *          server takes from the peer: a client's after root squash (see
 *          mds/README.md "Authorization"), an admin's as is; 0 when the
 *          opcode has no credential (mds/oss frames, data and control);
 *   cls    its QoS class (PFS_QOS_CLASS_*).
 *
 * The servers consult it before any decoding: pfs_optab_allowed(op, role)
 * false means -EACCES.  Without authentication every peer has role
 * PFS_ROLE_ANY, which every row admits (today's open behaviour, for tests
 * and measurements only).  An opcode without a row is admitted to nobody
 * (the caller answers -EOPNOTSUPP as before, see pfs_optab_find). */
#ifndef PFS_OPTAB_H
#define PFS_OPTAB_H

#include <pthread.h>
#include <stdint.h>

#include "common/auth.h"

enum pfs_qos_class {
	PFS_QOS_CLASS_MD_READ = 1,
	PFS_QOS_CLASS_MD_WRITE,
	PFS_QOS_CLASS_DATA_READ,
	PFS_QOS_CLASS_DATA_WRITE,
	PFS_QOS_CLASS_CONTROL,
	PFS_QOS_CLASS_ADMIN,
};

#define PFS_OPTAB_CRED_PEER 0x1u

typedef struct pfs_optab_row {
	uint16_t op;
	const char *name;
	unsigned roles;   /* PFS_ROLE_* mask */
	unsigned cred;    /* PFS_OPTAB_CRED_* */
	unsigned cls;     /* enum pfs_qos_class */
} pfs_optab_row;

/* The row of op, or NULL for an opcode pfs does not define. */
const pfs_optab_row *pfs_optab_find(uint16_t op);
/* 1 if a peer of role (one PFS_ROLE_* or PFS_ROLE_ANY) may send op.
 * PFS_ROLE_ANY (no authentication) may send any defined opcode; an
 * unknown opcode is allowed to nobody but ANY (which then gets
 * -EOPNOTSUPP from the dispatcher). */
int pfs_optab_allowed(uint16_t op, unsigned role);
/* "metadata-read", ... ; "?" for an unknown class. */
const char *pfs_qos_class_name(unsigned cls);
/* Refusals are logged once per connection (peer "ip:port"): the last
 * PFS_OPTAB_LOG_PEERS peers logged are remembered. */
#define PFS_OPTAB_LOG_PEERS 64
typedef struct pfs_optab_log {
	pthread_mutex_t lock;
	char peer[PFS_OPTAB_LOG_PEERS][64];
	unsigned next;
} pfs_optab_log;
void pfs_optab_log_init(pfs_optab_log *l);
void pfs_optab_log_destroy(pfs_optab_log *l);
/* Log (notice) "who: OPCODE from peer (role r) refused" unless peer was
 * the last one logged for; returns 1 when it logged. */
int pfs_optab_log_refusal(pfs_optab_log *l, const char *who, const char *peer, uint16_t op,
			  unsigned role, const char *why);

/* "admin,client" (comma-separated role names; "none" or "" = 0) -> mask
 * of PFS_ROLE_*; -EINVAL for an unknown name. */
int pfs_optab_roles_parse(const char *s, unsigned *mask);

/* Every row, for tests and documentation; *n rows. */
const pfs_optab_row *pfs_optab_rows(unsigned *n);

#endif
