/* admin_cmd.c — what every pfsadmin command shares (see admin_cmd.h): the
 * cli_admin context, the MDS requests that go around mdc (job and QoS
 * opcodes), error messages, JSON helpers; and ping and the dispatch table.
 *
 * Every command first gathers all its data, then prints: a failed request
 * never leaves half a table or a truncated JSON document on stdout.  JSON
 * numbers are emitted as JSON integers (jansson's json_int_t, 64-bit
 * signed); object ids are also given as a hex string, since ids above
 * 2^63 would not survive as JSON integers. */
#include "client/admin_cmd.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client/admin_df.h"
#include "client/admin_lfsck.h"
#include "client/admin_i.h"
#include "client/admin_job.h"
#include "client/admin_nrs.h"
#include "client/admin_qos.h"
#include "client/admin_mdqos.h"
#include "client/admin_ascar.h"
#include "client/admin_stats.h"
#include "client/admin_stripe.h"
#include "common/clock.h"
#include "common/buf.h"

void cli__what(cli_admin *a, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(a->what, sizeof(a->what), fmt, ap);
	va_end(ap);
	a->why[0] = '\0';
}

void cli__rewhat(cli_admin *a, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(a->what, sizeof(a->what), fmt, ap);
	va_end(ap);
}

void cli__why(cli_admin *a, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(a->why, sizeof(a->why), fmt, ap);
	va_end(ap);
}

const char *cli__transport_text(int rc, int timeout_ms, char *buf, size_t sz)
{
	switch (rc) {
	case -ECONNREFUSED:
		return "not reachable (connection refused: nothing listens on that port)";
	case -ETIMEDOUT:
	case -EAGAIN:
		if (timeout_ms > 0) {
			snprintf(buf, sz, "did not answer within %g s (--timeout)",
				 timeout_ms / 1000.0);
			return buf;
		}
		return "did not answer in time (--timeout)";
	case -EHOSTUNREACH:
	case -ENETUNREACH:
	case -EHOSTDOWN:
	case -ENETDOWN:
	case -EADDRNOTAVAIL:
		return "not reachable (no route to it from here)";
	case -EPIPE:
	case -ECONNRESET:
	case -ECONNABORTED:
	case -ENOTCONN:
		return "closed the connection before answering";
	default:
		return NULL;
	}
}

void cli__fail_rpc(cli_admin *a, int rc, const char *server, const char *doing)
{
	const char *hint = NULL;
	char buf[96];

	switch (rc) {
	case -EACCES:
	case -EPERM:
		hint = "permission denied: only root, or the job's owner for its own job, "
		       "may do this";
		break;
	case -ENOENT:
		hint = "no such job, or it is not yours";
		break;
	case -EOPNOTSUPP:
		hint = "the server does not know this request (an older pfs?)";
		break;
	case -EBADMSG:
		hint = "malformed reply";
		break;
	default:
		hint = cli__transport_text(rc, a->timeout_ms, buf, sizeof(buf));
		break;
	}
	cli__what(a, "%s on %s", doing, server);
	if (hint)
		cli__why(a, "%s", hint);
}

void cli__fail_mds(cli_admin *a, int rc, const char *doing, const char *request)
{
	const char *t;
	char mds[300], buf[96];

	if (doing)
		cli__what(a, "%s", doing);
	else
		a->why[0] = '\0';
	cli__mds_name(a, mds, sizeof(mds));
	t = cli__transport_text(rc, a->timeout_ms, buf, sizeof(buf));
	if (t)
		cli__why(a, "%s %s", mds, t);
	else if (rc == -EBADMSG)
		cli__why(a, "malformed %s reply from %s", request, mds);
	else if (rc == -EOPNOTSUPP)
		cli__why(a, "%s does not know the %s request (an older pfs?)", mds, request);
}

const char *cli_admin_errmsg(const cli_admin *a, int rc, char *buf, size_t sz)
{
	const char *why = a->why[0] ? a->why : pfs_strerror(rc);

	if (a->what[0])
		snprintf(buf, sz, "%s: %s", a->what, why);
	else
		snprintf(buf, sz, "%s", why);
	return buf;
}

void cli__report(cli_admin *a, int rc)
{
	char msg[900];

	fprintf(a->err, "pfsadmin: %s\n", cli_admin_errmsg(a, rc, msg, sizeof(msg)));
	a->reported = 1;
}

int cli_admin_init(cli_admin *a, pfs_rpc_pool *pool, FILE *out, int json)
{
	gid_t groups[PFS_MAX_GROUPS];
	int n;

	memset(a, 0, sizeof(*a));
	a->pool = pool;
	a->out = out;
	a->err = stderr;
	a->json = json;
	a->fsname = CLI_FSNAME_DEFAULT;
	a->mnt = "";
	a->ctx.cred.uid = (uint32_t)getuid();
	a->ctx.cred.gid = (uint32_t)getgid();
	/* More than PFS_MAX_GROUPS supplementary groups makes getgroups fail
	 * with EINVAL; then only the primary group is sent, which can deny
	 * access but never grants too much. */
	n = getgroups(PFS_MAX_GROUPS, groups);
	for (int i = 0; i < n; i++)
		a->ctx.cred.groups[a->ctx.cred.ngroups++] = (uint32_t)groups[i];
	snprintf(a->ctx.job, sizeof(a->ctx.job), "pfsadmin.%u", (unsigned)a->ctx.cred.uid);
	a->oss_timeout_ms = CLI_ADMIN_OSS_TIMEOUT_MS;
	return cli_mdc_wrap(pool, &a->mdc);
}

void cli_admin_fini(cli_admin *a)
{
	cli_mdc_destroy(a->mdc);
	a->mdc = NULL;
}

pfs_rpc_tag cli__tag(const cli_admin *a)
{
	pfs_rpc_tag t = { .job = a->ctx.job, .uid = a->ctx.cred.uid, .gid = a->ctx.cred.gid };

	return t;
}

int cli__call(cli_admin *a, uint16_t op, const pfs_wbuf *w, unsigned flags, pfs_rpc_reply *rep)
{
	pfs_rpc_tag tag = cli__tag(a);
	int rc = pfs_wbuf_error(w);

	pfs_rpc_reply_init(rep);
	if (rc)
		return rc;
	return pfs_rpc_call_tag(a->pool, op, &tag, flags, w->data, w->len, NULL, 0, rep);
}

const char *cli__mds_name(cli_admin *a, char *buf, size_t sz)
{
	snprintf(buf, sz, "MDS %s:%u", pfs_rpc_pool_host(a->pool), pfs_rpc_pool_port(a->pool));
	return buf;
}

uint32_t cli__rcount(pfs_rbuf *r, size_t min_wire)
{
	uint32_t n = pfs_rbuf_u32(r);

	if (!pfs_rbuf_error(r) && min_wire && n > pfs_rbuf_left(r) / min_wire) {
		pfs_rbuf_fail(r);
		return 0;
	}
	return pfs_rbuf_error(r) ? 0 : n;
}

int cli__rarray(pfs_rbuf *r, size_t min_wire, size_t elem, int (*dec)(pfs_rbuf *, void *),
		void **out, uint32_t *n)
{
	uint32_t cnt = cli__rcount(r, min_wire);
	uint8_t *v = NULL;
	int rc = pfs_rbuf_error(r);

	*out = NULL;
	*n = 0;
	if (rc == 0) {
		v = calloc(cnt ? cnt : 1, elem);
		rc = v ? 0 : -ENOMEM;
	}
	for (uint32_t i = 0; rc == 0 && i < cnt; i++)
		rc = dec(r, v + (size_t)i * elem);
	if (rc == 0)
		rc = pfs_rbuf_done(r);
	if (rc) {
		free(v);
		return rc == -ENOMEM ? rc : -EBADMSG;
	}
	*out = v;
	*n = cnt;
	return 0;
}

int cli_admin_get_osts(cli_admin *a, pfs_ost_info **osts, uint32_t *n)
{
	int rc = cli_mdc_ost_list(a->mdc, a->ctx.job, osts, n);

	if (rc) {
		*osts = NULL;
		*n = 0;
		cli__fail_mds(a, rc, "OST list", "OST list");
	}
	return rc;
}

int cli_admin_get_statfs(cli_admin *a, pfs_statfs *s)
{
	int rc = cli_mdc_statfs(a->mdc, &a->ctx, s);

	if (rc)
		cli__fail_mds(a, rc, "statfs", "statfs");
	return rc;
}

int cli_admin_get_layout(cli_admin *a, uint64_t ino, pfs_layout *l, uint32_t *nobj)
{
	int rc = cli_mdc_getlayout_any(a->mdc, &a->ctx, ino, l, nobj);

	if (rc)
		cli__fail_mds(a, rc, "layout", "layout");
	return rc;
}

int cli__emit(cli_admin *a, json_t *root)
{
	if (!root) {
		cli__what(a, "building JSON output");
		return -ENOMEM;
	}
	/* Ten significant digits: 0.5003906, not 0.50039062599999995. */
	json_dumpf(root, a->out, JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10) |
		   (a->json_lines ? JSON_COMPACT : JSON_INDENT(2)));
	fputc('\n', a->out);
	json_decref(root);
	return 0;
}

json_int_t cli__ji(uint64_t v)
{
	return v > (uint64_t)INT64_MAX ? (json_int_t)INT64_MAX : (json_int_t)v;
}

json_t *cli__jrate(double v)
{
	if (v < 0)
		return json_null();
	return json_integer(v >= 9.2e18 ? (json_int_t)INT64_MAX : (json_int_t)(v + 0.5));
}

void cli__jpush(json_t **arr, json_t *v)
{
	if (!*arr) {
		json_decref(v);
		return;
	}
	/* json_array_append_new takes v even when it fails (and NULL fails). */
	if (json_array_append_new(*arr, v)) {
		json_decref(*arr);
		*arr = NULL;
	}
}

int cli_admin_ping(cli_admin *a, unsigned count)
{
	uint64_t *rtt = calloc(count ? count : 1, sizeof(*rtt));
	uint64_t min = UINT64_MAX, max = 0, sum = 0;
	char mds[300];
	int rc = 0;

	snprintf(mds, sizeof(mds), "%s:%u", pfs_rpc_pool_host(a->pool),
		 pfs_rpc_pool_port(a->pool));
	if (!rtt || count == 0) {
		free(rtt);
		cli__what(a, "ping MDS %s", mds);
		return count ? -ENOMEM : -EINVAL;
	}
	for (unsigned i = 0; i < count; i++) {
		uint8_t msg[16];
		uint64_t t0 = pfs_clock_ns();

		/* A sequence number and the send time: an echo of another
		 * request's bytes would not match. */
		memcpy(msg, &i, sizeof(i));
		memset(msg + sizeof(i), 0, sizeof(msg) - sizeof(i));
		memcpy(msg + 8, &t0, sizeof(t0));
		rc = cli_mdc_ping(a->mdc, a->ctx.job, msg, sizeof(msg));
		rtt[i] = pfs_clock_ns() - t0;
		if (rc) {
			cli__fail_mds(a, rc, "ping", "ping");
			goto out;
		}
		min = rtt[i] < min ? rtt[i] : min;
		max = rtt[i] > max ? rtt[i] : max;
		sum += rtt[i];
	}
	if (a->json) {
		json_t *arr = json_array();

		for (unsigned i = 0; arr && i < count; i++)
			if (json_array_append_new(arr, json_integer(cli__ji(rtt[i] / 1000)))) {
				json_decref(arr);
				arr = NULL;
			}
		rc = cli__emit(a, !arr ? NULL :
			       json_pack("{s:s,s:I,s:o,s:I,s:I,s:I}", "address", mds,
					 "count", (json_int_t)count, "rtt_us", arr,
					 "min_us", cli__ji(min / 1000),
					 "avg_us", cli__ji(sum / count / 1000),
					 "max_us", cli__ji(max / 1000)));
		goto out;
	}
	for (unsigned i = 0; i < count; i++)
		fprintf(a->out, "%s: seq=%u time=%.3f ms\n", mds, i + 1, (double)rtt[i] / 1e6);
	fprintf(a->out, "rtt min/avg/max = %.3f/%.3f/%.3f ms\n", (double)min / 1e6,
		(double)sum / count / 1e6, (double)max / 1e6);
out:
	free(rtt);
	return rc;
}

static int run_ping(cli_admin *a, const cli_admin_args *args)
{
	return cli_admin_ping(a, args->ping_count);
}

/* Each command's entry point; every one takes the parsed arguments. */
static int (*const run_table[CLI_ADMIN_CMD_COUNT])(cli_admin *, const cli_admin_args *) = {
	[CLI_ADMIN_OST_LIST] = cli_admin_run_ost_list,
	[CLI_ADMIN_DF] = cli_admin_run_df,
	[CLI_ADMIN_SETSTRIPE] = cli_admin_run_setstripe,
	[CLI_ADMIN_GETSTRIPE] = cli_admin_run_getstripe,
	[CLI_ADMIN_PING] = run_ping,
	[CLI_ADMIN_LFSCK] = cli_admin_lfsck,
	[CLI_ADMIN_JOB_REGISTER] = cli_admin_job_register,
	[CLI_ADMIN_JOB_END] = cli_admin_job_end,
	[CLI_ADMIN_JOB_LIST] = cli_admin_job_list,
	[CLI_ADMIN_JOB_SHOW] = cli_admin_job_show,
	[CLI_ADMIN_JOBSTATS] = cli_admin_jobstats,
	[CLI_ADMIN_QOS_SHOW] = cli_admin_qos_show,
	[CLI_ADMIN_QOS_POLICY_SET] = cli_admin_qos_policy_set,
	[CLI_ADMIN_QOS_POLICY_SHOW] = cli_admin_qos_policy_show,
	[CLI_ADMIN_QOS_COUPONS] = cli_admin_qos_coupons,
	[CLI_ADMIN_QOS_REGRET] = cli_admin_qos_regret,
	[CLI_ADMIN_ASCAR_LOAD] = cli_admin_ascar_load,
	[CLI_ADMIN_ASCAR_SHOW] = cli_admin_ascar_show,
	[CLI_ADMIN_ASCAR_OFF] = cli_admin_ascar_off,
	[CLI_ADMIN_MDQOS_SHOW] = cli_admin_mdqos_show,
	[CLI_ADMIN_MDQOS_SET] = cli_admin_mdqos_set,
	[CLI_ADMIN_NRS_RULE] = cli_admin_nrs_rule,
};

int cli_admin_run(cli_admin *a, const cli_admin_args *args)
{
	a->what[0] = a->why[0] = '\0';
	a->reported = 0;
	if ((unsigned)args->cmd < CLI_ADMIN_CMD_COUNT && run_table[args->cmd])
		return run_table[args->cmd](a, args);
	cli__what(a, "no command to run");
	return -EINVAL;
}
