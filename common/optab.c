/* optab.c — the per-opcode authorization table (see optab.h).  Adding an
 * opcode to proto.h means adding its row here: a sender not listed is
 * refused with -EACCES once authentication is on. */
#include "common/optab.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "common/log.h"
#include "common/proto.h"

#define CLI PFS_ROLE_CLIENT
#define ADM PFS_ROLE_ADMIN
#define MDS PFS_ROLE_MDS
#define OSS PFS_ROLE_OSS
#define PEER PFS_OPTAB_CRED_PEER

#define ROW(op, roles, cred, cls) { PFS_OP_##op, #op, (roles), (cred), PFS_QOS_CLASS_##cls }

/* Sorted by opcode (pfs_optab_find searches it with a binary search). */
static const pfs_optab_row rows[] = {
	ROW(PING, PFS_ROLE_ANY, 0, CONTROL),
	/* namespace: mount.pfs, and pfsadmin (setstripe, getstripe, df) */
	ROW(MDS_LOOKUP, CLI | ADM, PEER, MD_READ),
	ROW(MDS_GETATTR, CLI | ADM, PEER, MD_READ),
	ROW(MDS_SETATTR, CLI | ADM, PEER, MD_WRITE),
	ROW(MDS_CREATE, CLI | ADM, PEER, MD_WRITE),
	ROW(MDS_MKNOD, CLI | ADM, PEER, MD_WRITE),
	ROW(MDS_MKDIR, CLI | ADM, PEER, MD_WRITE),
	ROW(MDS_UNLINK, CLI | ADM, PEER, MD_WRITE),
	ROW(MDS_RMDIR, CLI | ADM, PEER, MD_WRITE),
	ROW(MDS_RENAME, CLI | ADM, PEER, MD_WRITE),
	ROW(MDS_READDIR, CLI | ADM, PEER, MD_READ),
	ROW(MDS_SYMLINK, CLI | ADM, PEER, MD_WRITE),
	ROW(MDS_READLINK, CLI | ADM, PEER, MD_READ),
	ROW(MDS_LINK, CLI | ADM, PEER, MD_WRITE),
	ROW(MDS_STATFS, CLI | ADM, PEER, MD_READ),
	ROW(MDS_SETXATTR, CLI | ADM, PEER, MD_WRITE),
	ROW(MDS_GETXATTR, CLI | ADM, PEER, MD_READ),
	ROW(MDS_LISTXATTR, CLI | ADM, PEER, MD_READ),
	ROW(MDS_REMOVEXATTR, CLI | ADM, PEER, MD_WRITE),
	ROW(MDS_OPEN, CLI | ADM, PEER, MD_READ),
	ROW(MDS_ACCESS, CLI | ADM, PEER, MD_READ),
	ROW(MDS_SETSIZE, CLI | ADM, PEER, MD_WRITE),
	ROW(MDS_GETLAYOUT, CLI | ADM, PEER, MD_READ),
	ROW(MDS_SETSTRIPE, CLI | ADM, PEER, MD_WRITE),
	ROW(MDS_SYNC, CLI | ADM, PEER, MD_WRITE),
	ROW(MDS_CLOSE, CLI | ADM, PEER, MD_WRITE),
	ROW(MDS_LOOKUP_BULK, CLI | ADM, PEER, MD_READ),
	/* the lock service: mount.pfs (fcntl, flock, O_APPEND); no credential */
	ROW(MDS_LOCK_GET, CLI | ADM, 0, MD_READ),
	ROW(MDS_LOCK_SET, CLI | ADM, 0, MD_WRITE),
	ROW(MDS_LOCK_WAIT, CLI | ADM, 0, MD_WRITE),
	ROW(MDS_LOCK_CANCEL, CLI | ADM, 0, MD_WRITE),
	ROW(MDS_LOCK_RELEASE, CLI | ADM, 0, MD_WRITE),
	ROW(MDS_LOCK_RECLAIM, CLI | ADM, 0, CONTROL), /* also the lease ping */
	/* the OST map: clients (osc) and pfsadmin df */
	ROW(MDS_OST_LIST, CLI | ADM, 0, MD_READ),
	ROW(MDS_LFSCK, ADM, 0, ADMIN),
	/* jobs and QoS: pfsadmin (also from the Slurm prolog/epilog) */
	ROW(MDS_JOB_REGISTER, ADM, 0, ADMIN),
	ROW(MDS_JOB_END, ADM, 0, ADMIN),
	/* Read-only; mount.pfs's qos_fetch reads the job weights with it. */
	ROW(MDS_JOB_LIST, CLI | ADM, 0, ADMIN),
	ROW(MDS_JOB_GET, ADM, 0, ADMIN),
	ROW(MDS_QOS_SHOW, ADM, 0, ADMIN),
	ROW(MDS_QOS_POLICY_SET, ADM, 0, ADMIN),
	ROW(MDS_QOS_COUPONS, ADM, 0, ADMIN),
	ROW(MDS_QOS_REGRET, ADM, 0, ADMIN),
	ROW(MDS_JOBSTATS, ADM, 0, ADMIN),
	/* PADLL: the mounts' rate pull (usage report); pfsadmin qos md */
	ROW(MDS_MDQOS_PULL, CLI, 0, CONTROL),
	ROW(MDS_MDQOS_SHOW, ADM, 0, ADMIN),
	ROW(MDS_MDQOS_SET, ADM, 0, ADMIN),
	/* ASCAR rule sets: pfsadmin qos ascar; mount.pfs fetches them */
	ROW(MDS_ASCAR_SET, ADM, 0, ADMIN),
	ROW(MDS_ASCAR_GET, CLI | ADM, 0, CONTROL),
	/* metadata lease invalidations: mount.pfs's notify channel */
	ROW(MDS_NOTIFY_WAIT, CLI, 0, CONTROL),
	/* directory delegations (asynchronous unlink): mount.pfs */
	ROW(MDS_DELEG_GET, CLI, PEER, MD_READ),
	ROW(MDS_DELEG_RETURN, CLI, PEER, CONTROL),
	ROW(MDS_UNLINK_BATCH, CLI, PEER, MD_WRITE),
	ROW(MDS_CREATE_SLOTS, CLI, PEER, MD_WRITE),
	ROW(MDS_CREATE_BATCH, CLI, PEER, MD_WRITE),
	/* OSS -> MDS control channel */
	ROW(MDS_OSS_REGISTER, OSS, 0, CONTROL),
	ROW(MDS_OSS_HEARTBEAT, OSS, 0, CONTROL),
	/* OSS data port: clients, with object capabilities (common/capa.h) */
	ROW(OSS_READ, CLI, 0, DATA_READ),
	ROW(OSS_WRITE, CLI, 0, DATA_WRITE),
	ROW(OSS_TRUNCATE, CLI, 0, DATA_WRITE),
	ROW(OSS_PUNCH, CLI, 0, DATA_WRITE),
	ROW(OSS_STAT, CLI, 0, DATA_READ),
	ROW(OSS_SYNC, CLI, 0, DATA_WRITE),
	ROW(OSS_STATFS, CLI | ADM | MDS, 0, CONTROL),
	ROW(OSS_GRANT, CLI, 0, CONTROL),
	ROW(OSS_WRITEV, CLI, 0, DATA_WRITE),
	/* OSS control port: the MDS; pfsadmin for read-only stats and rules */
	ROW(OSS_DESTROY, MDS, 0, CONTROL),
	ROW(OSS_LIST_OBJECTS, MDS, 0, CONTROL),
	ROW(OSS_JOBSTATS, MDS | ADM, 0, ADMIN),
	ROW(OSS_QOS_STATS, MDS | ADM, 0, ADMIN),
	ROW(OSS_QOS_SET, MDS, 0, CONTROL),
	ROW(OSS_NRS_RULE, MDS | ADM, 0, ADMIN),
};

const pfs_optab_row *pfs_optab_find(uint16_t op)
{
	size_t lo = 0, hi = sizeof(rows) / sizeof(rows[0]);

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (rows[mid].op == op)
			return &rows[mid];
		if (rows[mid].op < op)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

int pfs_optab_allowed(uint16_t op, unsigned role)
{
	const pfs_optab_row *r;

	if (role == PFS_ROLE_ANY)
		return 1;
	r = pfs_optab_find(op);
	/* role must be exactly one proved role, and listed */
	return r && role && (role & (role - 1)) == 0 && (r->roles & role) != 0;
}

const char *pfs_qos_class_name(unsigned cls)
{
	switch (cls) {
	case PFS_QOS_CLASS_MD_READ: return "metadata-read";
	case PFS_QOS_CLASS_MD_WRITE: return "metadata-write";
	case PFS_QOS_CLASS_DATA_READ: return "data-read";
	case PFS_QOS_CLASS_DATA_WRITE: return "data-write";
	case PFS_QOS_CLASS_CONTROL: return "control";
	case PFS_QOS_CLASS_ADMIN: return "admin";
	}
	return "?";
}

const pfs_optab_row *pfs_optab_rows(unsigned *n)
{
	*n = (unsigned)(sizeof(rows) / sizeof(rows[0]));
	return rows;
}

void pfs_optab_log_init(pfs_optab_log *l)
{
	memset(l, 0, sizeof(*l));
	pthread_mutex_init(&l->lock, NULL);
}

void pfs_optab_log_destroy(pfs_optab_log *l)
{
	pthread_mutex_destroy(&l->lock);
}

int pfs_optab_log_refusal(pfs_optab_log *l, const char *who, const char *peer, uint16_t op,
			  unsigned role, const char *why)
{
	const char *p = peer ? peer : "-";
	int seen = 0;

	pthread_mutex_lock(&l->lock);
	for (unsigned i = 0; i < PFS_OPTAB_LOG_PEERS && !seen; i++)
		seen = l->peer[i][0] && strcmp(l->peer[i], p) == 0;
	if (!seen) {
		snprintf(l->peer[l->next], sizeof(l->peer[0]), "%s", p);
		l->next = (l->next + 1) % PFS_OPTAB_LOG_PEERS;
	}
	pthread_mutex_unlock(&l->lock);
	if (seen)
		return 0;
	pfs_log(PFS_LOG_NOTICE, "%s: %s from %s (role %s) refused: %s (further refusals "
		"on this connection are not logged)", who, pfs_op_name(op), p,
		role == PFS_ROLE_ANY ? "any" : pfs_role_name(role), why);
	return 1;
}

int pfs_optab_roles_parse(const char *s, unsigned *mask)
{
	static const struct { const char *name; unsigned role; } names[] = {
		{ "mds", PFS_ROLE_MDS }, { "oss", PFS_ROLE_OSS },
		{ "client", PFS_ROLE_CLIENT }, { "admin", PFS_ROLE_ADMIN },
	};
	unsigned m = 0;

	while (s && *s) {
		size_t n = strcspn(s, ", \t");
		int found = n == 0 || (n == 4 && !strncmp(s, "none", 4));

		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && !found; i++)
			if (strlen(names[i].name) == n && !strncmp(s, names[i].name, n)) {
				m |= names[i].role;
				found = 1;
			}
		if (!found)
			return -EINVAL;
		s += n;
		s += strspn(s, ", \t");
	}
	*mask = m;
	return 0;
}
