/* fuzz_mds.c — libFuzzer target for the MDS dispatcher: each input is one
 * request (fuzz_input.h) executed by mds_server_dispatch_role, as a peer
 * whose role (client, admin, oss, mds or any = unauthenticated) comes from
 * the header's credit field, with root squash and capabilities on, on a real LMDB
 * namespace, job registry and QoS controller in a temporary directory made
 * once per process (the namespace keeps what earlier inputs created, so
 * sequences of requests are explored too).  Any reply is fine; a crash,
 * overread, leak or UB is not.  The listening socket mds_server_start opens
 * is on 127.0.0.1 and never used. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/auth.h"
#include "common/buf.h"
#include "common/log.h"
#include "common/proto.h"
#include "mds/jobs.h"
#include "mds/ns.h"
#include "mds/qosctl.h"
#include "mds/server.h"
#include "tests/fuzz/fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static const uint16_t mds_ops[] = {
	PFS_OP_PING,
	PFS_OP_MDS_LOOKUP, PFS_OP_MDS_GETATTR, PFS_OP_MDS_SETATTR, PFS_OP_MDS_CREATE,
	PFS_OP_MDS_MKNOD, PFS_OP_MDS_MKDIR, PFS_OP_MDS_UNLINK, PFS_OP_MDS_RMDIR,
	PFS_OP_MDS_RENAME, PFS_OP_MDS_READDIR, PFS_OP_MDS_SYMLINK, PFS_OP_MDS_READLINK,
	PFS_OP_MDS_LINK, PFS_OP_MDS_STATFS, PFS_OP_MDS_SETXATTR, PFS_OP_MDS_GETXATTR,
	PFS_OP_MDS_LISTXATTR, PFS_OP_MDS_REMOVEXATTR, PFS_OP_MDS_OPEN, PFS_OP_MDS_ACCESS,
	PFS_OP_MDS_SETSIZE, PFS_OP_MDS_GETLAYOUT, PFS_OP_MDS_SETSTRIPE,
	PFS_OP_MDS_SYNC, PFS_OP_MDS_CLOSE, PFS_OP_MDS_LOOKUP_BULK,
	/* the lock calls that answer at once (LOCK_WAIT and NOTIFY_WAIT are
	 * held on their connection, which this harness has not) */
	PFS_OP_MDS_LOCK_GET, PFS_OP_MDS_LOCK_SET, PFS_OP_MDS_LOCK_CANCEL,
	PFS_OP_MDS_LOCK_RELEASE, PFS_OP_MDS_LOCK_RECLAIM,
	PFS_OP_MDS_OST_LIST, PFS_OP_MDS_LFSCK,
	PFS_OP_MDS_MDQOS_SHOW, PFS_OP_MDS_MDQOS_SET, PFS_OP_MDS_ASCAR_SET, PFS_OP_MDS_ASCAR_GET,
	PFS_OP_MDS_JOB_REGISTER, PFS_OP_MDS_JOB_END, PFS_OP_MDS_JOB_LIST, PFS_OP_MDS_JOB_GET,
	PFS_OP_MDS_QOS_SHOW, PFS_OP_MDS_QOS_POLICY_SET, PFS_OP_MDS_QOS_COUPONS,
	PFS_OP_MDS_QOS_REGRET, PFS_OP_MDS_JOBSTATS,
	PFS_OP_MDS_OSS_REGISTER, PFS_OP_MDS_OSS_HEARTBEAT,
	/* directory delegations (mds/deleg.h) */
	PFS_OP_MDS_DELEG_GET, PFS_OP_MDS_DELEG_RETURN,
	/* batched asynchronous unlinks */
	PFS_OP_MDS_UNLINK_BATCH,
};

static mds_server *srv;
static char dir[] = "/tmp/pfs_fuzz_mds.XXXXXX";

/* The controller's OSS side: nobody answers (no decision step runs). */
static void no_collect(void *ctx, const mds_qos_oss *oss, size_t n, mds_qos_report *out)
{
	for (size_t i = 0; i < n; i++)
		out[i].rc = -ETIMEDOUT;
}

static void no_push(void *ctx, const mds_qos_oss *oss, const pfs_qos_alloc_set *sets,
		    size_t n, int *rc)
{
	for (size_t i = 0; i < n; i++)
		rc[i] = -ETIMEDOUT;
}

static void cleanup(void)
{
	char cmd[128];

	/* the objects stay alive until exit: only the directory goes */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "fuzz_mds: could not remove %s\n", dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static mds_ns *ns;
	static mds_jobs *jobs;
	static mds_qosctl *qos;
	char db[64], err[256];
	mds_ns_opts no = { .path = db, .mapsize = 256ull << 20 };
	mds_qosctl_opts qo = { .policy = "none", .ops = { no_collect, no_push, NULL } };
	static const uint8_t capa_key[32] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	mds_server_opts mo = { .host = "127.0.0.1", .port = 0, .root_squash = 1,
			       .nosquash_roles = PFS_ROLE_ADMIN, .capa_key = capa_key };

	pfs_log_init("fuzz_mds", PFS_LOG_ERR);
	if (!mkdtemp(dir))
		abort();
	atexit(cleanup);
	snprintf(db, sizeof(db), "%s/db", dir);
	if (mds_ns_open(&no, &ns) || mds_jobs_open(ns, NULL, &jobs) ||
	    mds_qosctl_create(ns, jobs, &qo, &qos, err, sizeof(err))) {
		fprintf(stderr, "fuzz_mds: cannot set up the MDS in %s\n", dir);
		abort();
	}
	mo.jobs = jobs;
	mo.qos = qos;
	if (mds_server_start(ns, &mo, &srv))
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const unsigned roles[] = { PFS_ROLE_CLIENT, PFS_ROLE_ADMIN, PFS_ROLE_OSS,
					  PFS_ROLE_MDS, PFS_ROLE_ANY };
	const uint8_t *payload;
	size_t len;
	pfs_hdr h;
	pfs_wbuf out;
	int rc;

	if (size > PFS_HDR_LEN + (64u << 10))
		return -1;
	fuzz_request(data, size, mds_ops, sizeof(mds_ops) / sizeof(mds_ops[0]), &h, &payload,
		     &len);
	pfs_wbuf_init(&out);
	rc = mds_server_dispatch_role(srv, &h, roles[h.credit % 5], payload, len, "fuzz", &out);
	if (rc > 0 || rc < -4095 || (rc && out.len))
		__builtin_trap(); /* a status is 0 or -errno; errors carry nothing */
	pfs_wbuf_free(&out);
	return 0;
}
