/* server.h — the OSS request path: a data port and a control port, each a
 * pfs_server, in front of the local OSTs, each OST with its own queue head
 * (ostq.h: scheduler + I/O threads), and the QoS engine (qos.h) and admin
 * rules (nrs_admin.h) that drive the schedulers.
 *
 * Data port (clients): PFS_OP_OSS_READ/WRITE/TRUNCATE/PUNCH/STAT/SYNC/STATFS
 * and PING.  The connection thread decodes and validates a request (bad
 * frame -> -EBADMSG, len > PFS_MAX_IO -> -EINVAL, OST index not served here
 * -> -ENODEV, or -EAGAIN while some local OST has no index yet, unknown
 * opcode -> -EOPNOTSUPP), wraps it in an oss_req classified by the header's
 * job id, uid, gid and client id, and enqueues it into that OST's scheduler.
 * Over a queue cap the request is answered -EBUSY at once (nothing queued).
 * The OST's I/O threads dequeue, execute on the store (after entering the
 * job's blkio cgroup when blkio enforcement is on) and reply; every reply
 * of a queued request carries the OST's RCC credit for that client in the
 * header (a -EBUSY reply carries RCCmin); the connection is referenced
 * (pfs_sconn_get/put) while a request is queued.  READ replies carry the
 * data as bulk straight from the read buffer.  PING is answered on the
 * connection thread (it measures the network, not the queue).
 *
 * Control port (MDS, pfsadmin): see ctl.h.  Executed on the connection
 * thread so that control never waits behind bulk data.
 *
 * OST indexes: the wire names an OST by its cluster-wide index, which the
 * MDS assigns at registration (mds_link.h).  Each local OST ("slot", its
 * position in opts.osts) starts with no index; oss_server_set_index binds
 * one (tests call it directly).  Thread-safe. */
#ifndef OSS_SERVER_H
#define OSS_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "oss/blkio.h"
#include "oss/nrs_admin.h"
#include "oss/ostq.h"
#include "oss/qos.h"
#include "oss/sched.h"
#include "oss/store.h"

#define OSS_IO_THREADS_DEFAULT 8
#define OSS_LIST_MAX 65536u /* ids per LIST_OBJECTS reply (512 KiB) */
#define OSS_JOB_MAX_RPCS_DEFAULT 256u
#define OSS_JOB_MAX_BYTES_DEFAULT (256ull << 20)
#define OSS_MAX_RPCS_DEFAULT 4096u
#define OSS_MAX_BYTES_DEFAULT (1ull << 30)
/* RCC latency bound Lmax.  The paper's runs use 25-60 s against Lustre's
 * timeouts of minutes; ours must sit inside the client's RPC timeout by
 * Eq. (6) (λ·Lmax + Lnet) and, more tightly, inside one AdapTBF period:
 * a queue longer than Δt = 100 ms means requests admitted under one
 * period's token rates are still waiting when the next period's rates
 * apply, so re-allocations lag by the queue length.  100 ms keeps the OSS
 * backlog of a saturated OST to about one period of service (D ≈ Lmax ·
 * IOPS), which is also what bounds its memory (sec. III-C). */
#define OSS_RCC_LMAX_DEFAULT 0.1
#define OSS_RCC_MIN_DEFAULT 1
#define OSS_RCC_MAX_DEFAULT 32

typedef struct oss_server oss_server;
struct pfs_auth_key;

typedef struct oss_server_opts {
	const char *host;             /* bind address of both ports; NULL/"" = all */
	uint16_t data_port, ctl_port; /* 0 = any free port */
	unsigned io_threads;          /* per OST; 0 = OSS_IO_THREADS_DEFAULT */
	oss_store *const *osts;       /* borrowed; must outlive the server */
	size_t n_osts;
	const oss_sched_class *sched; /* NULL = TBF (no rule: FIFO behaviour) */
	/* Queue caps; 0 = the defaults above. */
	uint32_t job_max_rpcs;
	uint64_t job_max_bytes;
	uint64_t oss_max_rpcs, oss_max_bytes;
	/* Emulated OST speed, [n_osts] each (0 = not paced); NULL = none. */
	const double *ost_bps, *ost_iops;
	/* RCC: Lmax in seconds (0 = default, < 0 = no credits), RCCmin/max
	 * (0 = default); Dlow is io_threads (the paper's N). */
	double rcc_lmax, rcc_min, rcc_max;
	/* QoS engine (qos.h). */
	unsigned enforce;             /* OSS_ENFORCE_*; 0 = TBF */
	oss_blkio *blkio;             /* borrowed; for OSS_ENFORCE_BLKIO */
	double adaptbf_period;        /* s; 0 = default */
	double job_idle_s;            /* 0 = default */
	int qos_no_thread;            /* tests: drive oss_qos_tick themselves */
	/* Authorization (oss/README.md "Authorization"): the OSS's key for
	 * both ports (borrowed; NULL = no authentication, every peer trusted:
	 * tests and measurements only).  With a key, K_cap is derived from it
	 * and every object request needs a capability (common/capa.h). */
	const struct pfs_auth_key *auth;
	const uint8_t *capa_key;      /* K_cap given directly (tests); else from auth */
	/* 1: every READ goes to an I/O thread (server.c "Small READs on the
	 * loop"; pfs-oss inline_reads=0) */
	int no_inline_reads;
} oss_server_opts;

/* Start both ports, the OSTs' I/O threads and the QoS loop.  On error
 * fills err and returns a negative errno (nothing is left running). */
int oss_server_start(const oss_server_opts *opts, oss_server **out, char *err,
		     size_t errlen);
/* Stop accepting, close connections, finish queued requests, join the I/O
 * threads and free the server (the stores stay open).  NULL is a no-op. */
void oss_server_stop(oss_server *s);
uint16_t oss_server_data_port(const oss_server *s);
uint16_t oss_server_ctl_port(const oss_server *s);
size_t oss_server_n_osts(const oss_server *s);
oss_store *oss_server_ost(const oss_server *s, size_t slot);
/* Bind local OST slot to a cluster index (OSS_INDEX_NONE unbinds).
 * 0, or -EINVAL for a bad slot or index. */
int oss_server_set_index(oss_server *s, size_t slot, int64_t index);
int64_t oss_server_get_index(const oss_server *s, size_t slot);
/* Spliced WRITE data (oss/README.md): WRITEs received with their data in
 * a pipe since start, and pipes such WRITEs hold now (tests). */
void oss_server_write_splices(oss_server *s, uint64_t *received, unsigned *held);
/* READs served on the data port's loop so far, and those of them that
 * were slow (each sent READs to the I/O threads for 100 ms). */
void oss_server_inline_reads(oss_server *s, uint64_t *served, uint64_t *slow);
/* The queue head of a slot (NULL if out of range); lives as long as s. */
oss_ostq *oss_server_ostq(const oss_server *s, size_t slot);
/* The scheduler of a slot (NULL if out of range); lives as long as s. */
oss_sched *oss_server_sched(const oss_server *s, size_t slot);
/* The queue head serving wire index ost: 0, -ENODEV if none does, -EAGAIN
 * if one of ours has no index yet (it might be the one asked for). */
int oss_server_lookup(const oss_server *s, uint32_t ost, oss_ostq **out);
oss_qos *oss_server_qos(const oss_server *s);
oss_nrs_admin *oss_server_admin(const oss_server *s);

#endif
