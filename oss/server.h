/* server.h — the OSS request path: a data port and a control port, each a
 * pfs_server, in front of the local OSTs.
 *
 * Data port (clients): PFS_OP_OSS_READ/WRITE/TRUNCATE/PUNCH/STAT/SYNC/STATFS
 * and PING.  The connection thread decodes and validates a request (bad
 * frame -> -EBADMSG, len > PFS_MAX_IO -> -EINVAL, OST index not served here
 * -> -ENODEV, or -EAGAIN while some local OST has no index yet, unknown
 * opcode -> -EOPNOTSUPP), wraps it in an oss_req classified by the header's
 * job id and enqueues it into the NRS scheduler (sched.h).  A pool of I/O
 * threads dequeues, executes on the store and replies; the connection is
 * referenced (pfs_sconn_get/put) while a request is queued.  READ replies
 * carry the data as bulk straight from the read buffer.  PING is answered
 * on the connection thread (it measures the network, not the queue).
 *
 * Control port (MDS, pfsadmin): PFS_OP_OSS_DESTROY, LIST_OBJECTS, JOBSTATS,
 * STATFS and PING, executed on the connection thread so that control never
 * waits behind bulk data.  JOBSTATS reports cumulative counters since start
 * (readers diff snapshots), sorted by job id, truncated to what fits in one
 * frame (about 12000 jobs).
 *
 * OST indexes: the wire names an OST by its cluster-wide index, which the
 * MDS assigns at registration (mds_link.h).  Each local OST ("slot", its
 * position in opts.osts) starts with no index; oss_server_set_index binds
 * one (tests call it directly).  Thread-safe. */
#ifndef OSS_SERVER_H
#define OSS_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "oss/sched.h"
#include "oss/store.h"

#define OSS_IO_THREADS_DEFAULT 8
#define OSS_LIST_MAX 65536u /* ids per LIST_OBJECTS reply (512 KiB) */
#define OSS_INDEX_NONE (-1)

typedef struct oss_server oss_server;

typedef struct oss_server_opts {
	const char *host;             /* bind address; NULL/"" = all */
	uint16_t data_port, ctl_port; /* 0 = any free port */
	unsigned io_threads;          /* 0 = OSS_IO_THREADS_DEFAULT */
	oss_store *const *osts;       /* borrowed; must outlive the server */
	size_t n_osts;
	const oss_sched_class *sched; /* NULL = FIFO */
} oss_server_opts;

/* Start both ports and the I/O threads.  On error fills err and returns a
 * negative errno (nothing is left running). */
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
/* The scheduler (for stats and, later, the QoS loop); lives as long as s. */
oss_sched *oss_server_sched(oss_server *s);

#endif
