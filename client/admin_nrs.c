/* admin_nrs.c — nrs tbf rule start/change/stop/list on the OSSes (see
 * admin_nrs.h).
 *
 * The OSS's reasons for refusing rule text stay on the OSS (an error reply
 * carries only the errno), so the per-OSS result names the likely cause
 * from the verb and errno. */
#include "client/admin_nrs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/admin_fmt.h"
#include "client/admin_i.h"
#include "client/admin_oss.h"
#include "common/buf.h"
#include "common/proto.h"
#include "common/qosmsg.h"
#include "qos/tbf_rule.h"

/* Smallest nrs_rule_info on the wire: two empty strings, ost, queued, origin. */
#define RULE_MIN_WIRE (4 + 4 + 4 + 4 + 1)

static const char *const verbs[] = {
	[PFS_NRS_START] = "start", [PFS_NRS_CHANGE] = "change",
	[PFS_NRS_STOP] = "stop", [PFS_NRS_LIST] = "list",
};

static const char *const origins[] = {
	[PFS_NRS_ORIGIN_ADMIN] = "admin", [PFS_NRS_ORIGIN_MDS] = "mds",
	[PFS_NRS_ORIGIN_ADAPTBF] = "adaptbf",
};

/* The rule text's own ost= condition: 0 none, 1 with *ost set, -1 one
 * whose value is not an OST index (the OSS will say what is wrong). */
static int expr_ost(const char *e, uint32_t *ost)
{
	for (const char *p = strstr(e, "ost="); p; p = strstr(p + 1, "ost=")) {
		unsigned long v;
		char *end;

		if (p != e && p[-1] != ' ' && p[-1] != '\t')
			continue;
		errno = 0;
		v = strtoul(p + 4, &end, 10);
		if (errno || end == p + 4 || (*end && *end != ' ' && *end != '\t') ||
		    p[4] == '-' || p[4] == '+' || v >= PFS_QOS_OST_ALL)
			return -1;
		*ost = (uint32_t)v;
		return 1;
	}
	return 0;
}

/* Parse rule text as the OSS will: 0, or -EINVAL with the reason in err.
 * A change carries only rate= or rpcs=, depth= and rank=. */
static int check_expr(int verb, const char *expr, char *err, size_t errlen)
{
	qos_tbf_rule *r = malloc(sizeof(*r));
	int rc;

	if (!r) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	rc = qos_tbf_rule_parse(expr, r, err, errlen);
	if (rc == 0 && verb == PFS_NRS_CHANGE &&
	    (r->spec.n_jobids || r->spec.uid >= 0 || r->spec.gid >= 0 || r->spec.opc_mask)) {
		snprintf(err, errlen, "change takes rate= or rpcs=, depth= and rank= only");
		rc = -EINVAL;
	}
	free(r);
	return rc;
}

/* "error: Invalid argument (rule text refused)" and the like. */
static const char *result_text(int verb, int rc, char *buf, size_t sz)
{
	const char *hint = "";

	if (rc == 0)
		return "ok";
	if (rc == -EINVAL && (verb == PFS_NRS_START || verb == PFS_NRS_CHANGE))
		hint = " (rule text refused)";
	else if (rc == -EEXIST && verb == PFS_NRS_START)
		hint = " (a rule of that name exists)";
	else if (rc == -ENOENT && (verb == PFS_NRS_CHANGE || verb == PFS_NRS_STOP))
		hint = " (no rule of that name)";
	else if (rc == -EPERM)
		hint = " (names mds.* and adaptbf.* are the QoS policy's)";
	else if (rc == -ENODEV)
		hint = " (ost= names an OST this OSS does not serve)";
	else if (rc == -ENOSPC)
		hint = " (too many rules on this OSS)";
	else if (rc == -EOPNOTSUPP)
		hint = " (the OSS does not schedule with TBF: nrs=tbf)";
	snprintf(buf, sz, "%s: %s%s", cli_oss_outcome(rc), pfs_strerror(rc), hint);
	return buf;
}

static int dec_rule(pfs_rbuf *r, void *e) { return pfs_nrs_rule_info_decode(r, e); }

static int decode_rules(const pfs_rpc_reply *rep, pfs_nrs_rule_info **v, uint32_t *n)
{
	pfs_rbuf r;
	void *p = NULL;
	int rc;

	pfs_rbuf_init(&r, rep->data, rep->len);
	rc = cli__rarray(&r, RULE_MIN_WIRE, sizeof(**v), dec_rule, &p, n);
	*v = p;
	return rc;
}

static json_t *oss_json(const cli_oss *o)
{
	json_t *e = json_pack("{s:s,s:s,s:s}", "oss", o->name, "address", o->addr,
			      "status", cli_oss_outcome(o->rc));

	if (e && o->rc && (json_object_set_new(e, "errno", json_integer(o->rc)) ||
			   json_object_set_new(e, "error", json_string(pfs_strerror(o->rc))))) {
		json_decref(e);
		e = NULL;
	}
	return e;
}

static json_t *rules_json(const pfs_nrs_rule_info *v, uint32_t n)
{
	json_t *arr = json_array();

	for (uint32_t i = 0; i < n; i++)
		cli__jpush(&arr, json_pack("{s:s,s:s,s:o,s:I,s:s}", "name", v[i].name,
					   "expr", v[i].expr,
					   "ost", v[i].ost == PFS_QOS_OST_ALL ? json_null() :
					   json_integer(v[i].ost),
					   "queued", (json_int_t)v[i].queued,
					   "origin", origins[v[i].origin]));
	return arr;
}

/* Print every selected OSS's outcome (and for list, its rules). */
static int print(cli_admin *a, const cli_admin_args *args, const char *expr, cli_oss_set *s,
		 pfs_nrs_rule_info **rules, const uint32_t *nrules)
{
	static const cli_col res_cols[] = { { "OSS", 0 }, { "ADDRESS", 0 }, { "RESULT", 0 } };
	static const cli_col list_cols[] = {
		{ "OSS", 0 }, { "NAME", 0 }, { "OST", 1 }, { "ORIGIN", 0 }, { "QUEUED", 1 },
		{ "RULE", 0 },
	};
	int list = args->nrs_verb == PFS_NRS_LIST, rc;
	cli_table *t = NULL;
	char buf[160];

	if (a->json) {
		json_t *arr = json_array(), *doc;

		for (uint32_t i = 0; arr && i < s->n; i++) {
			json_t *e;

			if (!s->v[i].called)
				continue;
			e = oss_json(&s->v[i]);
			if (e && list && s->v[i].rc == 0 &&
			    json_object_set_new(e, "rules", rules_json(rules[i], nrules[i]))) {
				json_decref(e);
				e = NULL;
			}
			cli__jpush(&arr, e);
		}
		if (list)
			doc = arr ? json_pack("{s:o}", "oss", arr) : NULL;
		else
			doc = arr ? json_pack("{s:s,s:s,s:s*,s:o}", "verb", verbs[args->nrs_verb],
					      "name", args->rule, "expr", expr, "oss", arr) : NULL;
		return cli__emit(a, doc);
	}
	rc = list ? cli_table_create(list_cols, 6, &t) : cli_table_create(res_cols, 3, &t);
	for (uint32_t i = 0; rc == 0 && i < s->n; i++) {
		const cli_oss *o = &s->v[i];

		if (!o->called)
			continue;
		if (!list) {
			const char *res = result_text(args->nrs_verb, o->rc, buf, sizeof(buf));
			const char *cells[3] = { o->name, o->addr, res };

			rc = cli_table_add(t, cells);
			continue;
		}
		for (uint32_t k = 0; rc == 0 && o->rc == 0 && k < nrules[i]; k++) {
			const pfs_nrs_rule_info *r = &rules[i][k];
			char ost[16], q[16];
			const char *cells[6] = { o->name, r->name, ost, origins[r->origin], q,
						 r->expr };

			if (r->ost == PFS_QOS_OST_ALL)
				snprintf(ost, sizeof(ost), "all");
			else
				snprintf(ost, sizeof(ost), "%u", r->ost);
			snprintf(q, sizeof(q), "%u", r->queued);
			rc = cli_table_add(t, cells);
		}
	}
	if (rc) {
		cli_table_free(t);
		cli__what(a, "nrs tbf rule %s", verbs[args->nrs_verb]);
		return rc;
	}
	cli_table_print(t, a->out);
	cli_table_free(t);
	for (uint32_t i = 0; list && i < s->n; i++)
		if (s->v[i].called && s->v[i].rc)
			fprintf(a->out, "OSS %s (%s): %s\n", s->v[i].name, s->v[i].addr,
				result_text(PFS_NRS_LIST, s->v[i].rc, buf, sizeof(buf)));
	return 0;
}

int cli_admin_nrs_rule(cli_admin *a, const cli_admin_args *args)
{
	int verb = args->nrs_verb, with_expr = verb == PFS_NRS_START || verb == PFS_NRS_CHANGE;
	int own_ost = 0;
	uint32_t ost = args->ost;
	cli_oss_set s = { 0 };
	pfs_nrs_rule_info **rules = NULL;
	uint32_t *nrules = NULL, failed, called = 0;
	char doing[128], expr[CLI_RULE_EXPR_MAX + 32], perr[160];
	pfs_wbuf w;
	int only = -1, rc;

	pfs_wbuf_init(&w);
	snprintf(doing, sizeof(doing), "nrs tbf rule %s%s%s", verbs[verb], args->rule ? " " : "",
		 args->rule ? args->rule : "");
	expr[0] = '\0';
	if (with_expr) {
		own_ost = expr_ost(args->expr, &ost);
		if (args->have_ost && own_ost) {
			cli__what(a, "%s: give the OST either as --ost or as ost= in the rule",
				  doing);
			return -EINVAL;
		}
		if (args->have_ost)
			snprintf(expr, sizeof(expr), "%s ost=%u", args->expr, args->ost);
		else
			snprintf(expr, sizeof(expr), "%s", args->expr);
		if (strlen(expr) >= (size_t)CLI_RULE_EXPR_MAX) {
			cli__what(a, "%s: rule text with ost=%u is longer than %d characters",
				  doing, args->ost, CLI_RULE_EXPR_MAX - 1);
			return -EINVAL;
		}
		/* The OSS parses with the same code (qos/tbf_rule.h) but can
		 * only answer -EINVAL; parsing here first names the word. */
		rc = check_expr(verb, expr, perr, sizeof(perr));
		if (rc) {
			cli__what(a, "%s: bad rule: %s", doing, perr);
			return rc;
		}
	}
	rc = cli_oss_set_load(a, &s);
	if (rc)
		goto out;
	/* An OST named by --ost or by ost= in the rule: only its OSS (the
	 * others would refuse a rule for an OST they do not serve). */
	if (args->have_ost || own_ost == 1) {
		only = cli_oss_set_find(&s, ost);
		if (only < 0) {
			rc = -ENOENT;
			cli__what(a, "%s: no OSS serves OST %u", doing, ost);
			goto out;
		}
	} else if (s.n == 0) {
		rc = -ENOENT;
		cli__what(a, "%s: the MDS knows no OSS", doing);
		goto out;
	}
	rules = calloc(s.n, sizeof(*rules));
	nrules = calloc(s.n, sizeof(*nrules));
	if (!rules || !nrules) {
		rc = -ENOMEM;
		cli__what(a, "%s", doing);
		goto out;
	}
	pfs_wbuf_u8(&w, (uint8_t)verb);
	pfs_wbuf_str(&w, args->rule ? args->rule : "");
	if (with_expr)
		pfs_wbuf_str(&w, expr);
	rc = pfs_wbuf_error(&w);
	if (rc) {
		cli__what(a, "%s", doing);
		goto out;
	}
	cli_oss_call(a, &s, only, PFS_OP_OSS_NRS_RULE,
		     verb == PFS_NRS_START ? 0 : PFS_RPC_IDEMPOTENT, w.data, w.len);
	for (uint32_t i = 0; i < s.n; i++) {
		cli_oss *o = &s.v[i];

		if (!o->called || o->rc)
			continue;
		if (verb == PFS_NRS_LIST)
			o->rc = decode_rules(&o->rep, &rules[i], &nrules[i]);
		else if (o->rep.len != 0)
			o->rc = -EBADMSG;
	}
	rc = print(a, args, with_expr ? expr : NULL, &s, rules, nrules);
	if (rc)
		goto out;
	failed = 0;
	for (uint32_t i = 0; i < s.n; i++) {
		called += s.v[i].called;
		if (s.v[i].called && s.v[i].rc && !failed++)
			rc = s.v[i].rc;
	}
	if (failed)
		cli__what(a, "%s: %u of %u OSS%s failed", doing, failed, called,
			  called == 1 ? "" : "es");
out:
	for (uint32_t i = 0; rules && i < s.n; i++)
		free(rules[i]);
	free(rules);
	free(nrules);
	cli_oss_set_free(&s);
	pfs_wbuf_free(&w);
	return rc;
}
