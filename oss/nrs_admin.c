/* nrs_admin.c — admin TBF rules over the OSTs' schedulers (see nrs_admin.h). */
#include "oss/nrs_admin.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/proto.h"
#include "common/qosmsg.h"
#include "oss/nrs_tbf.h"
#include "oss/qos.h"
#include "qos/tbf_rule.h"

#define NAME_MAX_LEN 63           /* pfs_nrs_rule_info.name holds 64 with NUL */
#define TEXT_WIRE_MAX 4096u       /* longer is refused before parsing */
#define ROW_SLACK 512u

typedef struct arule {
	char name[NAME_MAX_LEN + 1];
	char text[QOS_TBF_RULE_TEXT_MAX]; /* canonical */
	uint32_t ost;                     /* PFS_QOS_OST_ALL or an index */
	int unit;
} arule;

struct oss_nrs_admin {
	pthread_mutex_t lock;    /* guards rules, n */
	oss_ostq *const *osts;
	size_t n_osts;
	arule rules[OSS_NRS_ADMIN_MAX];
	size_t n;
};

int oss_nrs_admin_create(oss_ostq *const *osts, size_t n, oss_nrs_admin **out)
{
	oss_nrs_admin *a = calloc(1, sizeof(*a));

	if (!a)
		return -ENOMEM;
	pthread_mutex_init(&a->lock, NULL);
	a->osts = osts;
	a->n_osts = n;
	*out = a;
	return 0;
}

void oss_nrs_admin_destroy(oss_nrs_admin *a)
{
	if (!a)
		return;
	pthread_mutex_destroy(&a->lock);
	free(a);
}

static int reserved(const char *name)
{
	return !strncmp(name, "mds.", 4) || !strncmp(name, "adaptbf.", 8);
}

static int name_ok(const char *name)
{
	if (!*name)
		return 0;
	for (const char *p = name; *p; p++)
		if ((unsigned char)*p <= ' ' || (unsigned char)*p >= 0x7f)
			return 0;
	return 1;
}

static arule *find(oss_nrs_admin *a, const char *name)
{
	for (size_t i = 0; i < a->n; i++)
		if (!strcmp(a->rules[i].name, name))
			return &a->rules[i];
	return NULL;
}

/* Whether rule text names key (a word "key=..." outside braces). */
static int has_key(const char *text, const char *key)
{
	size_t kl = strlen(key);
	int depth = 0, start = 1;

	for (const char *p = text; *p; p++) {
		if (*p == '{')
			depth++;
		else if (*p == '}' && depth)
			depth--;
		if (*p == ' ' || *p == '\t') {
			start = 1;
			continue;
		}
		if (start && !depth && !strncmp(p, key, kl) && p[kl] == '=')
			return 1;
		start = 0;
	}
	return 0;
}

/* The slots a rule with ost applies to: 1 in sel[i].  -ENODEV if none. */
static int targets(oss_nrs_admin *a, uint32_t ost, int *sel)
{
	int any = 0;

	for (size_t i = 0; i < a->n_osts; i++) {
		sel[i] = ost == PFS_QOS_OST_ALL || oss_ostq_index(a->osts[i]) == (int64_t)ost;
		any |= sel[i];
	}
	return any ? 0 : -ENODEV;
}

static int do_start(oss_nrs_admin *a, const char *name, const char *text, char *err,
		    size_t errlen)
{
	qos_tbf_rule *r = NULL;
	int *sel = NULL;
	size_t done = 0;
	arule *slot;
	int rc;

	if (find(a, name)) {
		snprintf(err, errlen, "rule '%s' exists", name);
		return -EEXIST;
	}
	if (a->n >= OSS_NRS_ADMIN_MAX) {
		snprintf(err, errlen, "at most %d admin rules", OSS_NRS_ADMIN_MAX);
		return -ENOSPC;
	}
	r = malloc(sizeof(*r));
	sel = calloc(a->n_osts ? a->n_osts : 1, sizeof(*sel));
	if (!r || !sel) {
		rc = -ENOMEM;
		goto out;
	}
	rc = qos_tbf_rule_parse(text, r, err, errlen);
	if (rc)
		goto out;
	if (r->spec.rank >= OSS_QOS_RANK_POLICY) {
		snprintf(err, errlen, "rank %d: admin ranks must be below %d", r->spec.rank,
			 OSS_QOS_RANK_POLICY);
		rc = -EINVAL;
		goto out;
	}
	rc = targets(a, r->ost, sel);
	if (rc) {
		snprintf(err, errlen, "ost=%u is not served here", r->ost);
		goto out;
	}
	slot = &a->rules[a->n];
	rc = qos_tbf_rule_format(&r->spec, r->ost, slot->text, sizeof(slot->text));
	if (rc < 0) {
		snprintf(err, errlen, "rule text cannot be formatted: %s", pfs_strerror(rc));
		goto out;
	}
	for (done = 0; done < a->n_osts; done++) {
		if (!sel[done])
			continue;
		rc = oss_nrs_tbf_rule_start(oss_ostq_sched(a->osts[done]), name, &r->spec);
		if (rc) {
			snprintf(err, errlen, "OST slot %zu: %s", done, pfs_strerror(rc));
			break;
		}
	}
	if (rc) {
		/* All or nothing. */
		while (done-- > 0)
			if (sel[done])
				oss_nrs_tbf_rule_stop(oss_ostq_sched(a->osts[done]), name);
		goto out;
	}
	snprintf(slot->name, sizeof(slot->name), "%s", name);
	slot->ost = r->ost;
	slot->unit = r->spec.unit;
	a->n++;
	rc = 0;
out:
	free(sel);
	free(r);
	return rc;
}

static int do_change(oss_nrs_admin *a, arule *ar, const char *text, char *err, size_t errlen)
{
	qos_tbf_rule *nr = NULL, *old = NULL;
	char newtext[QOS_TBF_RULE_TEXT_MAX];
	int has_depth = has_key(text, "depth"), has_rank = has_key(text, "rank");
	int *sel = NULL;
	size_t done;
	int rc;

	nr = malloc(sizeof(*nr));
	old = malloc(sizeof(*old));
	sel = calloc(a->n_osts ? a->n_osts : 1, sizeof(*sel));
	if (!nr || !old || !sel) {
		rc = -ENOMEM;
		goto out;
	}
	rc = qos_tbf_rule_parse(text, nr, err, errlen);
	if (rc)
		goto out;
	rc = -EINVAL;
	if (nr->spec.n_jobids || nr->spec.uid >= 0 || nr->spec.gid >= 0 || nr->spec.opc_mask ||
	    nr->ost != PFS_QOS_OST_ALL) {
		snprintf(err, errlen, "change takes rate= or rpcs=, depth= and rank= only");
		goto out;
	}
	if (nr->spec.unit != ar->unit) {
		snprintf(err, errlen, "rule '%s' counts %s: change it with %s", ar->name,
			 ar->unit == QOS_TBF_UNIT_BYTE ? "bytes" : "RPCs",
			 ar->unit == QOS_TBF_UNIT_BYTE ? "rate=" : "rpcs=");
		goto out;
	}
	if (has_rank && nr->spec.rank >= OSS_QOS_RANK_POLICY) {
		snprintf(err, errlen, "rank %d: admin ranks must be below %d", nr->spec.rank,
			 OSS_QOS_RANK_POLICY);
		goto out;
	}
	/* The stored text with the new values: what LIST will show. */
	rc = qos_tbf_rule_parse(ar->text, old, err, errlen);
	if (rc)
		goto out;
	{
		qos_tbf_rule_spec sp = old->spec;
		sp.rate = nr->spec.rate;
		if (has_depth)
			sp.depth = nr->spec.depth;
		if (has_rank)
			sp.rank = nr->spec.rank;
		rc = qos_tbf_rule_format(&sp, old->ost, newtext, sizeof(newtext));
		if (rc < 0) {
			snprintf(err, errlen, "rule text cannot be formatted: %s", pfs_strerror(rc));
			goto out;
		}
	}
	targets(a, ar->ost, sel);
	for (done = 0; done < a->n_osts; done++) {
		if (!sel[done])
			continue;
		rc = oss_nrs_tbf_rule_change(oss_ostq_sched(a->osts[done]), ar->name,
					     nr->spec.rate, has_depth ? nr->spec.depth : 0,
					     has_rank ? nr->spec.rank : INT_MIN);
		if (rc) {
			snprintf(err, errlen, "OST slot %zu: %s", done, pfs_strerror(rc));
			break;
		}
	}
	if (rc) {
		while (done-- > 0)
			if (sel[done])
				oss_nrs_tbf_rule_change(oss_ostq_sched(a->osts[done]), ar->name,
							old->spec.rate, old->spec.depth,
							old->spec.rank);
		goto out;
	}
	memcpy(ar->text, newtext, sizeof(ar->text));
	rc = 0;
out:
	free(sel);
	free(old);
	free(nr);
	return rc;
}

static int do_stop(oss_nrs_admin *a, arule *ar, char *err, size_t errlen)
{
	int rc = 0;

	for (size_t i = 0; i < a->n_osts; i++) {
		int r = oss_nrs_tbf_rule_stop(oss_ostq_sched(a->osts[i]), ar->name);
		if (r && r != -ENOENT && !rc) {
			snprintf(err, errlen, "OST slot %zu: %s", i, pfs_strerror(r));
			rc = r;
		}
	}
	if (rc)
		return rc; /* -ENOMEM before anything moved: the rule is still there */
	*ar = a->rules[--a->n];
	return 0;
}

static uint8_t origin_of(const char *name)
{
	if (!strncmp(name, "mds.", 4))
		return PFS_NRS_ORIGIN_MDS;
	if (!strncmp(name, "adaptbf.", 8))
		return PFS_NRS_ORIGIN_ADAPTBF;
	return PFS_NRS_ORIGIN_ADMIN;
}

static int do_list(oss_nrs_admin *a, const char *name, pfs_wbuf *w)
{
	uint32_t *queued = calloc(a->n ? a->n : 1, sizeof(*queued));
	pfs_nrs_rule_info *pol = NULL;
	size_t npol = 0, cap = 0, count_at;
	uint32_t rows = 0;
	int rc = 0;

	if (!queued)
		return -ENOMEM;
	for (size_t i = 0; i < a->n_osts && !rc; i++) {
		oss_nrs_tbf_rule_snap *v = NULL;
		size_t n = 0;
		int64_t index = oss_ostq_index(a->osts[i]);

		rc = oss_nrs_tbf_rule_list(oss_ostq_sched(a->osts[i]), &v, &n);
		for (size_t k = 0; k < n && !rc; k++) {
			arule *ar = find(a, v[k].name);

			if (ar) {
				queued[ar - a->rules] += v[k].queued;
				continue;
			}
			if (*name && strcmp(name, v[k].name))
				continue;
			if (npol == cap) {
				size_t nc = cap ? 2 * cap : 16;
				pfs_nrs_rule_info *p = realloc(pol, nc * sizeof(*p));
				if (!p) {
					rc = -ENOMEM;
					break;
				}
				pol = p;
				cap = nc;
			}
			memset(&pol[npol], 0, sizeof(pol[npol]));
			snprintf(pol[npol].name, sizeof(pol[npol].name), "%s", v[k].name);
			snprintf(pol[npol].expr, sizeof(pol[npol].expr), "%s", v[k].text);
			pol[npol].ost = index == OSS_INDEX_NONE ? PFS_QOS_OST_ALL : (uint32_t)index;
			pol[npol].queued = v[k].queued;
			pol[npol].origin = origin_of(v[k].name);
			npol++;
		}
		free(v);
	}
	if (rc)
		goto out;
	count_at = w->len;
	pfs_wbuf_u32(w, 0);
	for (size_t i = 0; i < a->n && w->len < PFS_MAX_PAYLOAD - ROW_SLACK; i++) {
		pfs_nrs_rule_info ri = { 0 };

		if (*name && strcmp(name, a->rules[i].name))
			continue;
		snprintf(ri.name, sizeof(ri.name), "%s", a->rules[i].name);
		snprintf(ri.expr, sizeof(ri.expr), "%s", a->rules[i].text);
		ri.ost = a->rules[i].ost;
		ri.queued = queued[i];
		ri.origin = PFS_NRS_ORIGIN_ADMIN;
		pfs_nrs_rule_info_encode(w, &ri);
		rows++;
	}
	for (size_t i = 0; i < npol && w->len < PFS_MAX_PAYLOAD - ROW_SLACK; i++) {
		pfs_nrs_rule_info_encode(w, &pol[i]);
		rows++;
	}
	rc = pfs_wbuf_error(w);
	if (!rc && *name && !rows)
		rc = -ENOENT;
	if (!rc) {
		w->data[count_at] = (uint8_t)rows;
		w->data[count_at + 1] = (uint8_t)(rows >> 8);
		w->data[count_at + 2] = (uint8_t)(rows >> 16);
		w->data[count_at + 3] = (uint8_t)(rows >> 24);
	}
out:
	free(pol);
	free(queued);
	return rc;
}

int oss_nrs_admin_request(oss_nrs_admin *a, const uint8_t *p, size_t len, pfs_wbuf *w,
			  char *err, size_t errlen)
{
	char name[NAME_MAX_LEN + 1], text[QOS_TBF_RULE_TEXT_MAX] = "";
	const char *t = NULL;
	size_t tl = 0;
	pfs_rbuf b;
	uint8_t verb;
	arule *ar;
	int rc;

	pfs_rbuf_init(&b, p, len);
	verb = pfs_rbuf_u8(&b);
	pfs_rbuf_cstr(&b, name, sizeof(name));
	if (pfs_rbuf_left(&b))
		t = pfs_rbuf_str(&b, TEXT_WIRE_MAX, &tl);
	if (pfs_rbuf_done(&b)) {
		snprintf(err, errlen, "malformed request (name over %d bytes?)", NAME_MAX_LEN);
		return -EBADMSG;
	}
	if (t && (tl >= sizeof(text) || memchr(t, '\0', tl))) {
		snprintf(err, errlen, "rule text over %d bytes or with a NUL",
			 QOS_TBF_RULE_TEXT_MAX - 1);
		return -EINVAL;
	}
	if (t) {
		memcpy(text, t, tl);
		text[tl] = '\0';
	}
	if (verb < PFS_NRS_START || verb > PFS_NRS_LIST) {
		snprintf(err, errlen, "unknown verb %u", verb);
		return -EINVAL;
	}
	if (verb != PFS_NRS_LIST && !name_ok(name)) {
		snprintf(err, errlen, "bad rule name '%s'", name);
		return -EINVAL;
	}
	if ((verb == PFS_NRS_START || verb == PFS_NRS_CHANGE) && !t) {
		snprintf(err, errlen, "rule text missing");
		return -EBADMSG;
	}
	for (size_t i = 0; i < a->n_osts; i++) {
		if (oss_sched_class_of(oss_ostq_sched(a->osts[i])) != &oss_sched_tbf) {
			snprintf(err, errlen, "the request scheduler is not TBF (nrs=tbf)");
			return -EOPNOTSUPP;
		}
	}
	if (verb != PFS_NRS_LIST && reserved(name)) {
		snprintf(err, errlen, "rule '%s' belongs to the QoS policy", name);
		return -EPERM;
	}
	pthread_mutex_lock(&a->lock);
	switch (verb) {
	case PFS_NRS_START:
		rc = do_start(a, name, text, err, errlen);
		break;
	case PFS_NRS_CHANGE:
	case PFS_NRS_STOP:
		ar = find(a, name);
		if (!ar) {
			snprintf(err, errlen, "no admin rule '%s'", name);
			rc = -ENOENT;
		} else {
			rc = verb == PFS_NRS_CHANGE ? do_change(a, ar, text, err, errlen)
						    : do_stop(a, ar, err, errlen);
		}
		break;
	default:
		rc = do_list(a, name, w);
		break;
	}
	pthread_mutex_unlock(&a->lock);
	return rc;
}
