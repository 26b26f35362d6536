/* admin_job.c — job register/end/list/show (see admin_job.h).
 *
 * Replies are decoded whole before anything is printed; a list reply's
 * count is checked against the bytes that came before allocating. */
#include "client/admin_job.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/admin_fmt.h"
#include "client/admin_i.h"
#include "common/buf.h"
#include "common/qosmsg.h"

/* Smallest job_info on the wire: a 1-byte job id, uid, nodes, priority,
 * limit, three u8, start, end. */
#define JOB_INFO_MIN_WIRE (4 + 1 + 4 + 4 + 8 + 8 + 3 + 8 + 8)

/* A job as JSON; with_state = 0 leaves out what the MDS sets (state,
 * registered, times), for register's echo of what was sent.  No limit
 * (0 on the wire) is null, as for every _bytes_per_s. */
static json_t *job_json(const pfs_job_info *j, int with_state)
{
	json_t *o = json_pack("{s:s,s:I,s:I,s:f,s:o,s:b}", "job", j->job,
			      "uid", (json_int_t)j->uid, "nodes", (json_int_t)j->nodes,
			      "priority", j->priority,
			      "limit_bytes_per_s", cli__jrate(j->limit > 0 ? j->limit : -1),
			      "throttle_friendly", (int)j->throttle_friendly);

	if (o && with_state &&
	    (json_object_set_new(o, "state", json_string(j->state == PFS_JOB_ENDED ?
							  "ended" : "running")) ||
	     json_object_set_new(o, "registered", json_boolean(j->registered)) ||
	     json_object_set_new(o, "start_ns", json_integer(j->start_ns)) ||
	     json_object_set_new(o, "end_ns", json_integer(j->end_ns)))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static const char *limit_text(double limit, char *buf, size_t sz)
{
	if (limit <= 0)
		return "none";
	return cli_fmt_rate(limit, buf, sz);
}

/* Send str job with op; an empty reply is the only good one. */
static int job_op(cli_admin *a, uint16_t op, unsigned flags, const char *job, const char *verb)
{
	pfs_rpc_reply rep = { 0 };
	pfs_wbuf w;
	char mds[300], doing[128];
	int rc;

	pfs_wbuf_init(&w);
	pfs_wbuf_str(&w, job);
	rc = cli__call(a, op, &w, flags, &rep);
	if (rc == 0 && rep.len != 0)
		rc = -EBADMSG;
	if (rc) {
		snprintf(doing, sizeof(doing), "job %s %s", verb, job);
		cli__fail_rpc(a, rc, cli__mds_name(a, mds, sizeof(mds)), doing);
	}
	pfs_wbuf_free(&w);
	pfs_rpc_reply_free(&rep);
	return rc;
}

int cli_admin_job_register(cli_admin *a, const cli_admin_args *args)
{
	pfs_rpc_reply rep = { 0 };
	pfs_job_info j = { 0 };
	pfs_wbuf w;
	char mds[300], doing[128], lim[24];
	int rc;

	snprintf(j.job, sizeof(j.job), "%s", args->job);
	j.uid = args->have_uid ? args->uid : a->ctx.cred.uid;
	j.nodes = args->nodes;
	j.priority = args->priority;
	j.limit = args->limit;
	j.throttle_friendly = !args->no_throttle;
	j.state = PFS_JOB_RUNNING;
	j.registered = 1;
	pfs_wbuf_init(&w);
	pfs_job_info_encode(&w, &j);
	rc = cli__call(a, PFS_OP_MDS_JOB_REGISTER, &w, PFS_RPC_IDEMPOTENT, &rep);
	if (rc == 0 && rep.len != 0)
		rc = -EBADMSG;
	pfs_wbuf_free(&w);
	pfs_rpc_reply_free(&rep);
	if (rc) {
		snprintf(doing, sizeof(doing), "job register %s", j.job);
		cli__fail_rpc(a, rc, cli__mds_name(a, mds, sizeof(mds)), doing);
		return rc;
	}
	if (a->json)
		return cli__emit(a, json_pack("{s:s,s:o}", "action", "register",
					      "job", job_json(&j, 0)));
	fprintf(a->out, "job %s registered: uid %u, %u node%s, priority %g, limit %s, %s\n",
		j.job, j.uid, j.nodes, j.nodes == 1 ? "" : "s", j.priority,
		limit_text(j.limit, lim, sizeof(lim)),
		j.throttle_friendly ? "may be throttled" : "never throttled");
	return 0;
}

int cli_admin_job_end(cli_admin *a, const cli_admin_args *args)
{
	int rc = job_op(a, PFS_OP_MDS_JOB_END, PFS_RPC_IDEMPOTENT, args->job, "end");

	if (rc)
		return rc;
	if (a->json)
		return cli__emit(a, json_pack("{s:s,s:s}", "action", "end", "job", args->job));
	fprintf(a->out, "job %s ended\n", args->job);
	return 0;
}

/* JOB_LIST: *v malloc'd (caller frees, also when *n is 0). */
static int dec_job(pfs_rbuf *r, void *e) { return pfs_job_info_decode(r, e); }

static int get_jobs(cli_admin *a, int all, pfs_job_info **v, uint32_t *n)
{
	pfs_rpc_reply rep = { 0 };
	pfs_wbuf w;
	pfs_rbuf r;
	char mds[300];
	void *p = NULL;
	int rc;

	*v = NULL;
	*n = 0;
	pfs_wbuf_init(&w);
	pfs_wbuf_u8(&w, all ? 1 : 0);
	rc = cli__call(a, PFS_OP_MDS_JOB_LIST, &w, PFS_RPC_IDEMPOTENT, &rep);
	pfs_wbuf_free(&w);
	if (rc)
		goto out;
	pfs_rbuf_init(&r, rep.data, rep.len);
	rc = cli__rarray(&r, JOB_INFO_MIN_WIRE, sizeof(**v), dec_job, &p, n);
	*v = p;
out:
	if (rc)
		cli__fail_rpc(a, rc, cli__mds_name(a, mds, sizeof(mds)), "job list");
	pfs_rpc_reply_free(&rep);
	return rc;
}

int cli_admin_job_list(cli_admin *a, const cli_admin_args *args)
{
	static const cli_col cols[] = {
		{ "JOB", 0 }, { "UID", 1 }, { "NODES", 1 }, { "PRIORITY", 1 }, { "LIMIT", 1 },
		{ "THROTTLE", 0 }, { "STATE", 0 }, { "SOURCE", 0 }, { "START", 0 }, { "END", 0 },
	};
	pfs_job_info *v = NULL;
	cli_table *t = NULL;
	uint32_t n;
	int rc = get_jobs(a, args->all, &v, &n);

	if (rc)
		return rc;
	if (a->json) {
		json_t *arr = json_array();

		for (uint32_t i = 0; i < n; i++)
			cli__jpush(&arr, job_json(&v[i], 1));
		free(v);
		return cli__emit(a, arr ? json_pack("{s:o}", "jobs", arr) : NULL);
	}
	rc = cli_table_create(cols, sizeof(cols) / sizeof(cols[0]), &t);
	for (uint32_t i = 0; rc == 0 && i < n; i++) {
		char uid[16], nodes[16], prio[32], lim[24], start[40], end[40];
		const char *cells[10] = {
			v[i].job, uid, nodes, prio, limit_text(v[i].limit, lim, sizeof(lim)),
			v[i].throttle_friendly ? "yes" : "no",
			v[i].state == PFS_JOB_ENDED ? "ended" : "running",
			v[i].registered ? "registered" : "seen",
			cli_fmt_time(v[i].start_ns, start, sizeof(start)),
			cli_fmt_time(v[i].end_ns, end, sizeof(end)),
		};

		snprintf(uid, sizeof(uid), "%u", v[i].uid);
		snprintf(nodes, sizeof(nodes), "%u", v[i].nodes);
		snprintf(prio, sizeof(prio), "%g", v[i].priority);
		rc = cli_table_add(t, cells);
	}
	if (rc)
		cli__what(a, "job list");
	else
		cli_table_print(t, a->out);
	cli_table_free(t);
	free(v);
	return rc;
}

int cli_admin_job_show(cli_admin *a, const cli_admin_args *args)
{
	pfs_rpc_reply rep = { 0 };
	pfs_job_info j;
	pfs_wbuf w;
	pfs_rbuf r;
	char mds[300], doing[128], lim[24], start[40], end[40];
	int rc;

	pfs_wbuf_init(&w);
	pfs_wbuf_str(&w, args->job);
	rc = cli__call(a, PFS_OP_MDS_JOB_GET, &w, PFS_RPC_IDEMPOTENT, &rep);
	pfs_wbuf_free(&w);
	if (rc == 0) {
		pfs_rbuf_init(&r, rep.data, rep.len);
		if (pfs_job_info_decode(&r, &j) || pfs_rbuf_done(&r))
			rc = -EBADMSG;
	}
	pfs_rpc_reply_free(&rep);
	if (rc) {
		snprintf(doing, sizeof(doing), "job show %s", args->job);
		cli__fail_rpc(a, rc, cli__mds_name(a, mds, sizeof(mds)), doing);
		return rc;
	}
	if (a->json)
		return cli__emit(a, job_json(&j, 1));
	fprintf(a->out,
		"job:               %s\n"
		"uid:               %u\n"
		"nodes:             %u\n"
		"priority:          %g\n"
		"limit:             %s\n"
		"throttle_friendly: %s\n"
		"state:             %s\n"
		"registered:        %s\n"
		"start:             %s\n"
		"end:               %s\n",
		j.job, j.uid, j.nodes, j.priority, limit_text(j.limit, lim, sizeof(lim)),
		j.throttle_friendly ? "yes" : "no", j.state == PFS_JOB_ENDED ? "ended" : "running",
		j.registered ? "yes" : "no (only seen on the wire)",
		cli_fmt_time(j.start_ns, start, sizeof(start)),
		cli_fmt_time(j.end_ns, end, sizeof(end)));
	return 0;
}
