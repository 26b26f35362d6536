/* nrs_tbf.c — qos_tbf as an oss_sched_class, and the rule API on top of
 * oss_sched_control (see nrs_tbf.h).  Everything here runs under the
 * scheduler's lock, which is the "NRS lock" qos/tbf.h asks for. */
#include "oss/nrs_tbf.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/proto.h"
#include "common/qosmsg.h"

_Static_assert(sizeof(((oss_nrs_tbf_rule_snap *)0)->name) >= QOS_TBF_ID_MAX,
	       "a rule name fits a snapshot");

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
	qos_tbf_key k = {
		.jobid = r->job,
		.opc = oss_nrs_tbf_opc(r->opcode),
		.uid = r->uid,
		.gid = r->gid,
		.bytes = r->bytes,
	};
	int limited = 0, rc;

	if (++n->since_gc >= OSS_TBF_GC_EVERY) {
		n->since_gc = 0;
		qos_tbf_gc(n->tbf, t);
	}
	rc = qos_tbf_enqueue(n->tbf, &k, r, t, &limited);
	if (rc == 0)
		r->limited = (uint8_t)limited;
	return rc;
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

/* ---- rule API ------------------------------------------------------------ */

typedef struct rule_op {
	const char *name;
	const qos_tbf_rule_spec *spec;
	double rate, depth;
	int rank, on;
	oss_nrs_tbf_rule_snap *snaps;
	size_t n;
} rule_op;

static int do_start(void *priv, uint64_t now, void *arg)
{
	rule_op *op = arg;
	qos_tbf_rule_spec sp = *op->spec;

	sp.name = op->name;
	return qos_tbf_rule_add(priv, &sp, OSS_TBF_SECONDS(now));
}

int oss_nrs_tbf_rule_start(oss_sched *s, const char *name, const qos_tbf_rule_spec *spec)
{
	rule_op op = { .name = name, .spec = spec };

	if (!name || !name[0] || strnlen(name, QOS_TBF_ID_MAX) >= QOS_TBF_ID_MAX ||
	    qos_tbf_rule_check(spec, NULL, 0))
		return -EINVAL;
	return oss_sched_control(s, &oss_sched_tbf, do_start, &op);
}

static int do_change(void *priv, uint64_t now, void *arg)
{
	rule_op *op = arg;

	return qos_tbf_rule_change(priv, op->name, op->rate, op->depth, op->rank,
				   OSS_TBF_SECONDS(now));
}

int oss_nrs_tbf_rule_change(oss_sched *s, const char *name, double rate, double depth,
			    int rank)
{
	rule_op op = { .name = name, .rate = rate, .depth = depth, .rank = rank };

	/* The same bounds as rule text, so the listing can always show it. */
	if (!isfinite(rate) || rate < 0 || rate > QOS_TBF_RATE_MAX ||
	    !isfinite(depth) || depth < 0 || depth > QOS_TBF_RATE_MAX)
		return -EINVAL;
	if (!name)
		return -EINVAL;
	return oss_sched_control(s, &oss_sched_tbf, do_change, &op);
}

static int do_stop(void *priv, uint64_t now, void *arg)
{
	return qos_tbf_rule_stop(priv, ((rule_op *)arg)->name, OSS_TBF_SECONDS(now));
}

int oss_nrs_tbf_rule_stop(oss_sched *s, const char *name)
{
	rule_op op = { .name = name };

	if (!name)
		return -EINVAL;
	return oss_sched_control(s, &oss_sched_tbf, do_stop, &op);
}

static int do_list(void *priv, uint64_t now, void *arg)
{
	rule_op *op = arg;
	size_t n = qos_tbf_rule_count(priv), q;
	qos_tbf_rule_spec sp;

	if (!n)
		return 0;
	op->snaps = calloc(n, sizeof(*op->snaps));
	if (!op->snaps)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		oss_nrs_tbf_rule_snap *o = &op->snaps[i];
		int rc = qos_tbf_rule_get(priv, i, &sp, &q);

		if (rc < 0) {
			free(op->snaps);
			op->snaps = NULL;
			return rc;
		}
		/* Rules started and changed through this API stay within the
		 * text form's bounds; one changed beyond them by a direct
		 * qos_tbf call is listed with an empty text rather than
		 * failing the whole listing. */
		if (qos_tbf_rule_format(&sp, PFS_QOS_OST_ALL, o->text, sizeof(o->text)) < 0)
			o->text[0] = 0;
		snprintf(o->name, sizeof(o->name), "%s", sp.name);
		o->queued = q > UINT32_MAX ? UINT32_MAX : (uint32_t)q;
	}
	op->n = n;
	return 0;
}

int oss_nrs_tbf_rule_list(oss_sched *s, oss_nrs_tbf_rule_snap **out, size_t *n)
{
	rule_op op = { 0 };
	int rc;

	*out = NULL;
	*n = 0;
	rc = oss_sched_control(s, &oss_sched_tbf, do_list, &op);
	if (rc)
		return rc;
	*out = op.snaps;
	*n = op.n;
	return 0;
}

static int do_wc(void *priv, uint64_t now, void *arg)
{
	qos_tbf_set_work_conserving(priv, ((rule_op *)arg)->on);
	return 0;
}

int oss_nrs_tbf_set_work_conserving(oss_sched *s, int on)
{
	rule_op op = { .on = on };

	return oss_sched_control(s, &oss_sched_tbf, do_wc, &op);
}
