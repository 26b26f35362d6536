/* admin_qos.c — qos show, policy set/show, coupons, regret (see admin_qos.h).
 *
 * Each command decodes its whole reply into plain structs first, then prints
 * either a table set or one JSON document. */
#include "client/admin_qos.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/admin_fmt.h"
#include "client/admin_i.h"
#include "common/buf.h"
#include "common/qosmsg.h"

/* Smallest wire sizes: a qos_row with a 1-byte job id; a coupon row. */
#define QOS_ROW_MIN_WIRE (4 + 1 + 4 + 3 * 8 + 1)
#define COUPON_MIN_WIRE (4 + 1 + 6 * 8 + 8)

/* A worth in bytes (double on the wire, >= 0) for cli_fmt_size. */
static uint64_t dbytes(double v)
{
	return v >= 1.8e19 ? UINT64_MAX : (uint64_t)(v + 0.5);
}

static int dec_row(pfs_rbuf *r, void *e) { return pfs_qos_row_decode(r, e); }
static int dec_coupon(pfs_rbuf *r, void *e) { return pfs_qos_coupon_info_decode(r, e); }

/* QOS_SHOW for job ("" = all); rows malloc'd (caller frees, also when 0). */
static int get_status(cli_admin *a, const char *job, pfs_qos_status *st, pfs_qos_row **rows,
		      uint32_t *n, const char *doing)
{
	pfs_rpc_reply rep = { 0 };
	pfs_wbuf w;
	pfs_rbuf r;
	char mds[300];
	void *p = NULL;
	int rc;

	*rows = NULL;
	*n = 0;
	pfs_wbuf_init(&w);
	pfs_wbuf_str(&w, job);
	rc = cli__call(a, PFS_OP_MDS_QOS_SHOW, &w, PFS_RPC_IDEMPOTENT, &rep);
	pfs_wbuf_free(&w);
	if (rc)
		goto out;
	pfs_rbuf_init(&r, rep.data, rep.len);
	rc = pfs_qos_status_decode(&r, st) ? -EBADMSG :
	     cli__rarray(&r, QOS_ROW_MIN_WIRE, sizeof(**rows), dec_row, &p, n);
	*rows = p;
out:
	if (rc) {
		cli__fail_rpc(a, rc, cli__mds_name(a, mds, sizeof(mds)), doing);
	}
	pfs_rpc_reply_free(&rep);
	return rc;
}

static json_t *status_json(const pfs_qos_status *st)
{
	json_t *params = json_object();

	for (uint32_t i = 0; params && i < st->n_params; i++) {
		json_t *v = json_real(st->params[i].value);

		if (json_object_set_new(params, st->params[i].key, v)) {
			json_decref(params);
			params = NULL;
		}
	}
	if (!params)
		return NULL;
	return json_pack("{s:s,s:o,s:f,s:I,s:f,s:{s:I,s:I,s:I},s:I,s:I}",
			 "policy", st->policy, "params", params, "interval_s", st->interval,
			 "decided_ns", (json_int_t)st->decided_ns, "decision_ms", st->decision_ms,
			 "quorum", "answered", (json_int_t)st->answered,
			 "oss_total", (json_int_t)st->oss_total,
			 "needed_pct", (json_int_t)st->quorum_pct,
			 "decisions", cli__ji(st->decisions), "skipped", cli__ji(st->skipped));
}

/* The policy block, lctl get_param style. */
static void print_status(cli_admin *a, const pfs_qos_status *st)
{
	char when[40];

	fprintf(a->out, "policy:         %s\n", st->policy[0] ? st->policy : "none");
	fputs("parameters:    ", a->out);
	if (st->n_params == 0)
		fputs(" -", a->out);
	for (uint32_t i = 0; i < st->n_params; i++)
		fprintf(a->out, " %s=%g", st->params[i].key, st->params[i].value);
	fputc('\n', a->out);
	fprintf(a->out, "interval:       %gs\n", st->interval);
	if (st->decided_ns > 0)
		fprintf(a->out, "last decision:  %s (took %.3f ms)\n",
			cli_fmt_time(st->decided_ns, when, sizeof(when)), st->decision_ms);
	else
		fputs("last decision:  none yet\n", a->out);
	fprintf(a->out, "quorum:         %u of %u OSSes answered (%u%% needed)\n", st->answered,
		st->oss_total, st->quorum_pct);
	fprintf(a->out, "decisions:      %" PRIu64 " made, %" PRIu64 " skipped without quorum\n",
		st->decisions, st->skipped);
}

static int show(cli_admin *a, const char *job, int with_rows, const char *doing)
{
	static const cli_col cols[] = {
		{ "JOB", 0 }, { "OST", 1 }, { "ALLOCATED", 1 }, { "ACHIEVED", 1 },
		{ "DEMAND", 1 }, { "THROTTLED", 0 },
	};
	pfs_qos_status st;
	pfs_qos_row *rows = NULL;
	cli_table *t = NULL;
	uint32_t n;
	int rc = get_status(a, job, &st, &rows, &n, doing);

	if (rc)
		return rc;
	if (a->json) {
		json_t *doc = status_json(&st), *arr = with_rows ? json_array() : NULL;

		for (uint32_t i = 0; arr && i < n; i++)
			cli__jpush(&arr, json_pack("{s:s,s:I,s:o,s:o,s:o,s:b}", "job", rows[i].job,
						   "ost", (json_int_t)rows[i].ost,
						   "alloc_bytes_per_s", cli__jrate(rows[i].alloc),
						   "achieved_bytes_per_s",
						   cli__jrate(rows[i].achieved),
						   "demand_bytes_per_s", cli__jrate(rows[i].demand),
						   "throttled", (int)rows[i].throttled));
		if (doc && with_rows && (!arr || json_object_set_new(doc, "allocations", arr))) {
			json_decref(doc);
			doc = NULL;
		}
		free(rows);
		return cli__emit(a, doc);
	}
	if (with_rows && n > 0)
		rc = cli_table_create(cols, sizeof(cols) / sizeof(cols[0]), &t);
	for (uint32_t i = 0; rc == 0 && with_rows && i < n; i++) {
		char ost[16], al[24], ac[24], de[24];
		const char *cells[6] = {
			rows[i].job, ost, cli_fmt_rate(rows[i].alloc, al, sizeof(al)),
			cli_fmt_rate(rows[i].achieved, ac, sizeof(ac)),
			cli_fmt_rate(rows[i].demand, de, sizeof(de)),
			rows[i].throttled ? "yes" : "no",
		};

		snprintf(ost, sizeof(ost), "%u", rows[i].ost);
		rc = cli_table_add(t, cells);
	}
	if (rc) {
		cli__what(a, "%s", doing);
	} else {
		print_status(a, &st);
		if (t) {
			fputc('\n', a->out);
			cli_table_print(t, a->out);
		} else if (with_rows) {
			fputs("\nallocations:    none\n", a->out);
		}
	}
	cli_table_free(t);
	free(rows);
	return rc;
}

int cli_admin_qos_show(cli_admin *a, const cli_admin_args *args)
{
	char doing[80];

	snprintf(doing, sizeof(doing), "qos show%s%s", args->job ? " --job " : "",
		 args->job ? args->job : "");
	return show(a, args->job ? args->job : "", 1, doing);
}

int cli_admin_qos_policy_show(cli_admin *a, const cli_admin_args *args)
{
	return show(a, "", 0, "qos policy show");
}

int cli_admin_qos_policy_set(cli_admin *a, const cli_admin_args *args)
{
	pfs_rpc_reply rep = { 0 };
	pfs_wbuf w;
	char mds[300];
	int rc;

	pfs_wbuf_init(&w);
	pfs_wbuf_str(&w, args->policy ? args->policy : "");
	pfs_wbuf_u32(&w, args->nparams);
	for (unsigned i = 0; i < args->nparams; i++) {
		pfs_wbuf_str(&w, args->params[i].key);
		pfs_wbuf_f64(&w, args->params[i].value);
	}
	rc = cli__call(a, PFS_OP_MDS_QOS_POLICY_SET, &w, PFS_RPC_IDEMPOTENT, &rep);
	if (rc == 0 && rep.len != 0)
		rc = -EBADMSG;
	pfs_wbuf_free(&w);
	pfs_rpc_reply_free(&rep);
	if (rc == -EINVAL) {
		cli__what(a, "qos policy set on %s (unknown policy or parameter, or a value out "
			  "of range; nothing was changed)", cli__mds_name(a, mds, sizeof(mds)));
		return rc;
	}
	if (rc) {
		cli__fail_rpc(a, rc, cli__mds_name(a, mds, sizeof(mds)), "qos policy set");
		return rc;
	}
	/* Show what the MDS now runs: defaults for keys not given included. */
	return show(a, "", 0, "qos policy set: reading the policy back");
}

int cli_admin_qos_coupons(cli_admin *a, const cli_admin_args *args)
{
	static const cli_col cols[] = {
		{ "JOB", 0 }, { "RATE", 1 }, { "OUTSTANDING", 1 }, { "ISSUED", 1 },
		{ "REDEEMED", 1 }, { "OWED_NH", 1 }, { "AWARDED_NH", 1 }, { "COUPONS", 1 },
	};
	pfs_rpc_reply rep = { 0 };
	pfs_qos_coupon_info *v = NULL;
	cli_table *t = NULL;
	pfs_wbuf w;
	pfs_rbuf r;
	char mds[300], doing[80];
	uint32_t n = 0;
	int rc;

	snprintf(doing, sizeof(doing), "qos coupons%s%s", args->job ? " --job " : "",
		 args->job ? args->job : "");
	pfs_wbuf_init(&w);
	pfs_wbuf_str(&w, args->job ? args->job : "");
	rc = cli__call(a, PFS_OP_MDS_QOS_COUPONS, &w, PFS_RPC_IDEMPOTENT, &rep);
	pfs_wbuf_free(&w);
	if (rc == 0) {
		void *p = NULL;

		pfs_rbuf_init(&r, rep.data, rep.len);
		rc = cli__rarray(&r, COUPON_MIN_WIRE, sizeof(*v), dec_coupon, &p, &n);
		v = p;
	}
	pfs_rpc_reply_free(&rep);
	if (rc) {
		cli__fail_rpc(a, rc, cli__mds_name(a, mds, sizeof(mds)), doing);
		goto out;
	}
	if (a->json) {
		json_t *arr = json_array();

		for (uint32_t i = 0; i < n; i++)
			cli__jpush(&arr, json_pack("{s:s,s:f,s:o,s:o,s:o,s:f,s:f,s:I}",
						   "job", v[i].job, "rate", v[i].rate,
						   "outstanding_bytes",
						   cli__jrate(v[i].outstanding),
						   "issued_bytes", cli__jrate(v[i].issued),
						   "redeemed_bytes", cli__jrate(v[i].redeemed),
						   "owed_nh", v[i].owed_nh,
						   "awarded_nh", v[i].awarded_nh,
						   "coupons", cli__ji(v[i].n_coupons)));
		rc = cli__emit(a, arr ? json_pack("{s:o}", "coupons", arr) : NULL);
		goto out;
	}
	rc = cli_table_create(cols, sizeof(cols) / sizeof(cols[0]), &t);
	for (uint32_t i = 0; rc == 0 && i < n; i++) {
		char rate[16], out_[16], iss[16], red[16], owed[32], aw[32], cnt[24];
		const char *cells[8] = { v[i].job, rate, out_, iss, red, owed, aw, cnt };

		snprintf(rate, sizeof(rate), "%.2f", v[i].rate);
		cli_fmt_size(dbytes(v[i].outstanding), 1, out_,
			     sizeof(out_));
		cli_fmt_size(dbytes(v[i].issued), 1, iss, sizeof(iss));
		cli_fmt_size(dbytes(v[i].redeemed), 1, red, sizeof(red));
		snprintf(owed, sizeof(owed), "%.2f", v[i].owed_nh);
		snprintf(aw, sizeof(aw), "%.2f", v[i].awarded_nh);
		snprintf(cnt, sizeof(cnt), "%" PRIu64, v[i].n_coupons);
		rc = cli_table_add(t, cells);
	}
	if (rc)
		cli__what(a, "%s", doing);
	else
		cli_table_print(t, a->out);
out:
	cli_table_free(t);
	free(v);
	return rc;
}

int cli_admin_qos_regret(cli_admin *a, const cli_admin_args *args)
{
	pfs_rpc_reply rep = { 0 };
	pfs_qos_regret_info g;
	pfs_wbuf w;
	pfs_rbuf r;
	char mds[300], iss[16], red[16];
	int rc;

	pfs_wbuf_init(&w);
	rc = cli__call(a, PFS_OP_MDS_QOS_REGRET, &w, PFS_RPC_IDEMPOTENT, &rep);
	pfs_wbuf_free(&w);
	if (rc == 0) {
		pfs_rbuf_init(&r, rep.data, rep.len);
		if (pfs_qos_regret_info_decode(&r, &g) || pfs_rbuf_done(&r))
			rc = -EBADMSG;
	}
	pfs_rpc_reply_free(&rep);
	if (rc) {
		cli__fail_rpc(a, rc, cli__mds_name(a, mds, sizeof(mds)), "qos regret");
		return rc;
	}
	if (a->json)
		return cli__emit(a, json_pack("{s:f,s:f,s:f,s:f,s:f,s:I,s:I,s:I,s:o,s:o}",
					      "budget_nh", g.budget_nh, "period_s", g.period_s,
					      "awarded_nh", g.awarded_nh,
					      "liability_nh", g.liability_nh, "c_sys", g.c_sys,
					      "coupons_issued", cli__ji(g.coupons_issued),
					      "redemptions", cli__ji(g.redemptions),
					      "assessments", cli__ji(g.assessments),
					      "worth_issued_bytes", cli__jrate(g.worth_issued),
					      "worth_redeemed_bytes",
					      cli__jrate(g.worth_redeemed)));
	cli_fmt_size(dbytes(g.worth_issued), 1, iss, sizeof(iss));
	cli_fmt_size(dbytes(g.worth_redeemed), 1, red, sizeof(red));
	fprintf(a->out,
		"regret_budget:   %.2f node-hours per %gs\n"
		"awarded:         %.2f node-hours\n"
		"liability:       %.2f node-hours\n"
		"c_sys:           %.3f\n"
		"coupons_issued:  %" PRIu64 "\n"
		"redemptions:     %" PRIu64 "\n"
		"assessments:     %" PRIu64 "\n"
		"worth_issued:    %s\n"
		"worth_redeemed:  %s\n",
		g.budget_nh, g.period_s, g.awarded_nh, g.liability_nh, g.c_sys,
		g.coupons_issued, g.redemptions, g.assessments, iss, red);
	return 0;
}
