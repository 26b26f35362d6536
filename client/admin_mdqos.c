/* admin_mdqos.c — pfsadmin qos md show|set|algo (see admin_mdqos.h). */
#include "client/admin_mdqos.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/admin_i.h"
#include "common/mdqos.h"

#define KV_MAX 32   /* as the MDS's MAX_POLICY_KEYS */
#define FIELD_MAX 63

static const char *const algos[] = { "none", "uniform", "priority", "proportional", "psfa" };

static int algo_ok(const char *s)
{
	for (size_t i = 0; i < sizeof(algos) / sizeof(algos[0]); i++)
		if (strcmp(s, algos[i]) == 0)
			return 1;
	return 0;
}

static int num(const char *s, double *v)
{
	char *end;

	if (!s[0])
		return -EINVAL;
	*v = strtod(s, &end);
	return *end || !isfinite(*v) ? -EINVAL : 0;
}

/* One KEY=VALUE word. */
static int check_kv(const char *job, const char *w, char *err, size_t errlen)
{
	const char *eq = strchr(w, '=');
	char key[FIELD_MAX + 1];
	const char *val;
	double v;
	unsigned cls;

	if (!eq || eq == w)
		return cli__fail(err, errlen, "'%s' is not KEY=VALUE", w);
	if ((size_t)(eq - w) > FIELD_MAX || strlen(eq + 1) > FIELD_MAX)
		return cli__fail(err, errlen, "'%s': key and value are at most %d bytes", w,
				 FIELD_MAX);
	memcpy(key, w, (size_t)(eq - w));
	key[eq - w] = '\0';
	val = eq + 1;
	if (!strncmp(key, "max_r.", 6) || !strncmp(key, "demand.", 7)) {
		const char *cn = strchr(key, '.') + 1;
		if (pfs_mdq_class_parse(cn, &cls) || cls == PFS_MDQ_NONE)
			return cli__fail(err, errlen, "%s: unknown class '%s' (open close getattr "
					 "setattr create mkdir unlink rename readdir xattr read "
					 "write)", key, cn);
		if (strcmp(val, "off") && (num(val, &v) || !(v > 0)))
			return cli__fail(err, errlen, "%s: '%s' must be a rate > 0 "
					 "(requests/s) or off", key, val);
		if (key[0] == 'd' && !job)
			return cli__fail(err, errlen, "%s needs --job ID", key);
		if (key[0] == 'm' && job)
			return cli__fail(err, errlen, "%s is not per job (drop --job)", key);
		return 0;
	}
	if (job)
		return cli__fail(err, errlen, "%s is not per job (only demand.CLASS takes --job)",
				 key);
	if (!strcmp(key, "algo"))
		return algo_ok(val) ? 0 : cli__fail(err, errlen, "unknown algo '%s' (none uniform "
						     "priority proportional psfa)", val);
	if (strcmp(key, "interval_ms") && strcmp(key, "epsilon") && strcmp(key, "jobs") &&
	    strcmp(key, "weight_sum"))
		return cli__fail(err, errlen, "unknown key '%s' (algo interval_ms epsilon jobs "
				 "weight_sum max_r.CLASS demand.CLASS)", key);
	if (num(val, &v))
		return cli__fail(err, errlen, "%s: '%s' is not a number", key, val);
	if ((!strcmp(key, "interval_ms") && !(v >= 100 && v <= 60000 && v == floor(v))) ||
	    (!strcmp(key, "epsilon") && !(v >= 0 && v <= 1)) ||
	    (!strcmp(key, "jobs") && !(v >= 0 && v == floor(v))) ||
	    (!strcmp(key, "weight_sum") && !(v >= 0)))
		return cli__fail(err, errlen, "%s: %s is out of range (interval_ms 100..60000, "
				 "epsilon 0..1, jobs a whole number >= 0, weight_sum >= 0)",
				 key, val);
	return 0;
}

int cli_admin_mdqos_check(int algo, const char *job, const char *const *kv, int n,
			  char *err, size_t errlen)
{
	int k = 0, rc;

	if (algo) {
		if (n < 1 || strchr(kv[0], '='))
			return cli__fail(err, errlen, "qos md algo needs NAME (none uniform "
					 "priority proportional psfa)");
		if (!algo_ok(kv[0]))
			return cli__fail(err, errlen, "unknown algo '%s' (none uniform priority "
					 "proportional psfa)", kv[0]);
		if (job)
			return cli__fail(err, errlen, "qos md algo takes no --job");
		k = 1;
	}
	if (n > KV_MAX)
		return cli__fail(err, errlen, "at most %d settings at once", KV_MAX);
	for (; k < n; k++)
		if ((rc = check_kv(job, kv[k], err, errlen)))
			return rc;
	return 0;
}

int cli_admin_mdqos_set(cli_admin *a, const cli_admin_args *args)
{
	pfs_rpc_reply rep = { 0 };
	pfs_wbuf w;
	char mds[300];
	int algo = args->nrs_verb == 1, rc;

	pfs_wbuf_init(&w);
	pfs_wbuf_str(&w, args->job ? args->job : "");
	pfs_wbuf_u32(&w, (uint32_t)args->mdq_nkv);
	for (int i = 0; i < args->mdq_nkv; i++) {
		const char *kv = args->mdq_kv[i], *eq = strchr(kv, '=');
		if (algo && i == 0) {
			pfs_wbuf_str(&w, "algo");
			pfs_wbuf_str(&w, kv);
			continue;
		}
		pfs_wbuf_strn(&w, kv, (size_t)(eq - kv));
		pfs_wbuf_str(&w, eq + 1);
	}
	rc = cli__call(a, PFS_OP_MDS_MDQOS_SET, &w, PFS_RPC_IDEMPOTENT, &rep);
	if (rc == 0 && rep.len != 0)
		rc = -EBADMSG;
	pfs_wbuf_free(&w);
	pfs_rpc_reply_free(&rep);
	if (rc == -EINVAL) {
		cli__what(a, "qos md set on %s (refused: see the MDS log; nothing was changed)",
			  cli__mds_name(a, mds, sizeof(mds)));
		return rc;
	}
	if (rc) {
		cli__fail_rpc(a, rc, cli__mds_name(a, mds, sizeof(mds)), "qos md set");
		return rc;
	}
	return cli_admin_mdqos_show(a, args);
}

static json_t *jopt(double v)
{
	return v > 0 ? json_real(v) : json_null();
}

int cli_admin_mdqos_show(cli_admin *a, const cli_admin_args *args)
{
	pfs_rpc_reply rep = { 0 };
	pfs_mdq_status st;
	pfs_wbuf w;
	pfs_rbuf r;
	char mds[300];
	int rc;

	pfs_wbuf_init(&w);
	rc = cli__call(a, PFS_OP_MDS_MDQOS_SHOW, &w, PFS_RPC_IDEMPOTENT, &rep);
	pfs_wbuf_free(&w);
	if (!rc) {
		pfs_rbuf_init(&r, rep.data, rep.len);
		rc = pfs_mdq_status_decode(&r, &st);
	}
	pfs_rpc_reply_free(&rep);
	if (rc) {
		cli__fail_rpc(a, rc, cli__mds_name(a, mds, sizeof(mds)), "qos md show");
		return rc;
	}
	if (a->json) {
		json_t *doc = json_object(), *mr = json_object(), *arr = json_array();
		for (unsigned c = 1; c < PFS_MDQ_NCLASSES; c++)
			if (st.max_r[c] > 0 && mr)
				json_object_set_new(mr, pfs_mdq_class_name(c), json_real(st.max_r[c]));
		for (uint32_t i = 0; i < st.n; i++) {
			const pfs_mdq_jobrow *x = &st.rows[i];
			cli__jpush(&arr, json_pack("{s:s,s:s,s:o,s:f,s:f,s:o}", "job", x->job,
						   "class", pfs_mdq_class_name(x->cls),
						   "demand", jopt(x->demand), "arrived", x->arrived,
						   "served", x->served, "rate",
						   x->rate > 0 ? json_real(x->rate) : json_null()));
		}
		if (doc && mr && arr)
			json_object_update_new(doc, json_pack("{s:s,s:I,s:f,s:f,s:f,s:I,s:I,s:o,s:o}",
				"algo", st.algo, "interval_ms", (json_int_t)st.interval_ms,
				"epsilon", st.epsilon, "jobs", st.jobs, "weight_sum", st.weight_sum,
				"generation", cli__ji(st.generation), "held", cli__ji(st.held),
				"max_r", mr, "rates", arr));
		else {
			json_decref(mr);
			json_decref(arr);
			json_decref(doc);
			doc = NULL;
		}
		pfs_mdq_status_free(&st);
		return cli__emit(a, doc);
	}
	fprintf(a->out, "algo:      %s\ninterval:  %u ms\nepsilon:   %g\njobs:      %g\n"
		"weight_sum: %g\ngeneration: %llu\nheld:      %llu requests held by the MDS\n"
		"max_r:    ", st.algo, st.interval_ms, st.epsilon, st.jobs, st.weight_sum,
		(unsigned long long)st.generation, (unsigned long long)st.held);
	int any = 0;
	for (unsigned c = 1; c < PFS_MDQ_NCLASSES; c++)
		if (st.max_r[c] > 0) {
			fprintf(a->out, " %s=%g", pfs_mdq_class_name(c), st.max_r[c]);
			any = 1;
		}
	fprintf(a->out, "%s\n", any ? "" : " - (nothing limited)");
	if (st.n)
		fprintf(a->out, "%-32s %-8s %10s %10s %10s %10s\n", "JOB", "CLASS", "DEMAND",
			"ARRIVED/s", "SERVED/s", "RATE/s");
	for (uint32_t i = 0; i < st.n; i++) {
		const pfs_mdq_jobrow *x = &st.rows[i];
		char d[32], rt[32];
		snprintf(d, sizeof(d), x->demand > 0 ? "%.1f" : "-", x->demand);
		snprintf(rt, sizeof(rt), x->rate > 0 ? "%.1f" : "-", x->rate);
		fprintf(a->out, "%-32s %-8s %10s %10.1f %10.1f %10s\n", x->job,
			pfs_mdq_class_name(x->cls), d, x->arrived, x->served, rt);
	}
	pfs_mdq_status_free(&st);
	return 0;
}
