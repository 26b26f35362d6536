/* server.h — the MDS request dispatcher: decodes each frame on a pfs_server
 * (common/server.h), calls mds_ns, the job registry (mds/jobs.h) or the
 * QoS controller (mds/qosctl.h) and replies.
 *
 * Every payload is decoded with common/buf.h + msg.h and must be consumed
 * exactly (trailing bytes -> -EBADMSG reply).  Unknown opcodes get
 * -EOPNOTSUPP.  No input crashes the server: a frame that cannot be framed is
 * closed by common/server.c, anything inside a frame gets an error reply.
 *
 * Per-job operation counters (job id from the frame header) are kept for
 * every request, per opcode, and answer PFS_OP_MDS_JOBSTATS:
 *   u64 snapshot_ns (CLOCK_REALTIME), u32 n,
 *   n x { str job, u32 k, k x { u16 opcode, u64 count } }
 * with only the opcodes a job used (unknown opcodes counted as opcode 0),
 * jobs sorted by id, "(other)" for ids beyond the table's 4096.  A request
 * with a job id also gives the registry its first sight of the job.
 * mds_server_admit() in server.c is where a PADLL rate limiter will hook
 * in (delay or refuse a job's operation class). */
#ifndef MDS_SERVER_H
#define MDS_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/proto.h"
#include "mds/deleg.h"
#include "mds/jobs.h"
#include "mds/ns.h"
#include "mds/qosctl.h"

typedef struct mds_server mds_server;
struct pfs_auth_key;

typedef struct mds_server_opts {
	const char *host;     /* bind address; NULL/"" = all */
	uint16_t port;        /* 0 = any free port */
	int sync_on_setsize;  /* mds_ns_sync after each SETSIZE (periodic sync mode) */
	mds_jobs *jobs;       /* job registry (borrowed); NULL: JOB_* opcodes -EOPNOTSUPP */
	mds_qosctl *qos;      /* QoS controller (borrowed); NULL: QOS_* -EOPNOTSUPP */
	struct mds_mdqos *mdqos; /* PADLL (mds/mdqos.h, borrowed); NULL: MDQOS_*
	                          -EOPNOTSUPP, nothing limited */
	/* Authorization (mds/README.md "Authorization").  The role of each
	 * peer comes from common/server.h (pfs_sconn_role); the opcode table
	 * common/optab.h says what each role may send. */
	const struct pfs_auth_key *auth; /* the MDS's key for the frame server;
	                                    NULL = no authentication (tests) */
	int root_squash;      /* 1: uid/gid 0 in a squashed peer's cred are mapped */
	uint32_t root_squash_uid, root_squash_gid; /* 0 = 65534 */
	unsigned nosquash_roles; /* PFS_ROLE_* never squashed (mds.conf default admin) */
	/* Object capabilities (common/capa.h): K_cap (32 bytes, borrowed) or
	 * NULL = none minted (no authentication). */
	const uint8_t *capa_key;
	unsigned capa_lifetime_s; /* 0 = PFS_CAPA_LIFETIME_DEFAULT */
	unsigned lock_lease_s;    /* lock leases (mds/locksvc.h); 0 = default 30; also
	                             the open leases of mds/open.h */
	unsigned md_lease_s;      /* metadata leases and invalidations (mds/lease.h),
	                             seconds; 0 = off (NOTIFY_WAIT -EOPNOTSUPP) */
	int lfsck_after_start;    /* run the orphan object scrub (mds/lfsck.h) once,
	                             two leases after the start */
	/* Directory delegations (mds/deleg.h, asynchronous unlink): on with
	 * leases unless deleg_off; deleg_ms 0 = md_lease_s; deleg_recall_ms 0
	 * = MDS_DELEG_RECALL_MS_DEFAULT. */
	int deleg_off;
	unsigned deleg_ms, deleg_recall_ms;
} mds_server_opts;

/* Create the dispatcher on ns (borrowed, as are opts->jobs and opts->qos;
 * all must outlive the server) and start listening. */
int mds_server_start(mds_ns *ns, const mds_server_opts *opts, mds_server **out);
uint16_t mds_server_port(const mds_server *s);
/* Stop listening, wait for connection threads, free s.  NULL is a no-op. */
void mds_server_stop(mds_server *s);

/* Decode and execute one request without a socket (the handler's core; also
 * used by tests).  The reply payload is appended to out; returns the reply
 * status (0 or -errno).  On error out is reset to empty. */
int mds_server_dispatch(mds_server *s, const pfs_hdr *h, const uint8_t *payload,
			size_t len, const char *peer, pfs_wbuf *out);
/* The same for a peer that proved role (PFS_ROLE_* of common/auth.h;
 * PFS_ROLE_ANY = no authentication, which is what mds_server_dispatch
 * passes): an opcode the role may not send is -EACCES (common/optab.h),
 * a squashed role's uid/gid 0 are mapped, capabilities go to clients. */
int mds_server_dispatch_role(mds_server *s, const pfs_hdr *h, unsigned role,
			     const uint8_t *payload, size_t len, const char *peer,
			     pfs_wbuf *out);

/* The delegation table's counters (mds/deleg.h): 0, or -ENOENT when
 * delegations are off. */
int mds_server_deleg_stats(mds_server *s, mds_deleg_stats *st);

/* Requests of opcode op counted for job (0 if never seen). */
uint64_t mds_server_job_ops(mds_server *s, const char *job, uint16_t op);
/* Call fn for every (job, opcode, count) with count > 0 (opcode 0:
 * unknown opcodes), on a copy taken under the counters' lock, so fn may
 * take its time.  0 or -ENOMEM. */
int mds_server_job_ops_each(mds_server *s,
			    void (*fn)(void *arg, const char *job, uint16_t op, uint64_t count),
			    void *arg);

#endif
