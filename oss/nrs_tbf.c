/* nrs_tbf.c — qos_tbf as an oss_sched_class (see nrs_tbf.h).  Runs under
 * the scheduler's lock, which is the "NRS lock" qos/tbf.h asks for. */
#include "oss/nrs_tbf.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "common/proto.h"
#include "qos/tbf.h"

typedef struct nrs_tbf {
	qos_tbf *tbf;
	unsigned since_gc;
} nrs_tbf;

int oss_nrs_tbf_opc(uint16_t opcode)
{
	switch (opcode) {
	case PFS_OP_OSS_READ:
		return OSS_TBF_OPC_READ;
	case PFS_OP_OSS_WRITE:
		return OSS_TBF_OPC_WRITE;
	default:
		return OSS_TBF_OPC_OTHER;
	}
}

static int tbf_create(void **priv)
{
	nrs_tbf *n = calloc(1, sizeof(*n));
	int rc;

	if (!n)
		return -ENOMEM;
	rc = qos_tbf_create(&n->tbf);
	if (rc) {
		free(n);
		return rc;
	}
	*priv = n;
	return 0;
}

static void tbf_destroy(void *priv)
{
	nrs_tbf *n = priv;

	qos_tbf_destroy(n->tbf);
	free(n);
}

static int tbf_add(void *priv, oss_req *r, uint64_t now)
{
	nrs_tbf *n = priv;
	double t = OSS_TBF_SECONDS(now);

	if (++n->since_gc >= OSS_TBF_GC_EVERY) {
		n->since_gc = 0;
		qos_tbf_gc(n->tbf, t);
	}
	return qos_tbf_enqueue(n->tbf, r->job, oss_nrs_tbf_opc(r->opcode), r, 1.0, t);
}

static oss_req *tbf_pick(void *priv, uint64_t now, uint64_t *wake_at)
{
	nrs_tbf *n = priv;
	void *req = NULL;
	double wait = INFINITY;
	int rc;

	*wake_at = UINT64_MAX;
	if (now == UINT64_MAX) /* shutdown: tokens no longer matter */
		return qos_tbf_drain(n->tbf, &req) ? NULL : req;
	rc = qos_tbf_dequeue(n->tbf, OSS_TBF_SECONDS(now), &req, &wait);
	if (rc == 0)
		return req;
	if (rc == -EAGAIN && isfinite(wait)) {
		/* Round up so the wake-up does not come a microsecond early
		 * and spin; cap at an hour (a rule change wakes us anyway). */
		double us = ceil(wait * 1e6);
		*wake_at = now + (us < 3600e6 ? (uint64_t)us + 1 : (uint64_t)3600e6);
	}
	return NULL;
}

static void *tbf_control_state(void *priv)
{
	return ((nrs_tbf *)priv)->tbf;
}

const oss_sched_class oss_sched_tbf = {
	.name = "tbf",
	.create = tbf_create,
	.destroy = tbf_destroy,
	.add = tbf_add,
	.pick = tbf_pick,
	.control_state = tbf_control_state,
};
