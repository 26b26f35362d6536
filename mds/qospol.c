/* qospol.c — the QoS controller's policies: which names the MDS runs,
 * parsing qos_param text, the loop keys (interval, quorum,
 * adaptbf_period) and building a policy with its own create as the judge
 * of its parameters; GIFT's ledger is continued across a parameter change
 * through qos_gift_save/qos_gift_load. */
#include "mds/qosctl.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/log.h"
#include "common/proto.h"
#include "mds/qosctl_i.h"

/* Policies the MDS runs over OSTs (qos_policy_find also knows PADLL's,
 * whose "OSTs" are metadata op classes: not these). */
static const char *const ost_policies[] = {
	"static", "pofs", "bsip", "mbw", "gift", "tsa", "esa", "tmf", "rnd", NULL,
};

void mds_qctl_pol_free(struct qctl_pol *p)
{
	if (p->kind == QCTL_OPS && p->state)
		p->ops->destroy(p->state);
	memset(p, 0, sizeof(*p));
}

int mds_qctl_is_ctl_key(const char *k)
{
	return !strcmp(k, "interval") || !strcmp(k, "quorum") || !strcmp(k, "adaptbf_period");
}

/* Apply one loop key to *interval, *quorum or *period; -EINVAL out of range. */
int mds_qctl_ctl_key(const char *k, double v, double *interval, uint32_t *quorum, double *period)
{
	if (!isfinite(v))
		return -EINVAL;
	if (!strcmp(k, "interval")) {
		if (v < MDS_QOS_INTERVAL_MIN || v > MDS_QOS_INTERVAL_MAX)
			return -EINVAL;
		*interval = v;
	} else if (!strcmp(k, "quorum")) {
		if (v < 1 || v > 100 || v != floor(v))
			return -EINVAL;
		*quorum = (uint32_t)v;
	} else {
		if (v < MDS_QOS_ADAPTBF_PERIOD_MIN || v > MDS_QOS_ADAPTBF_PERIOD_MAX)
			return -EINVAL;
		*period = v;
	}
	return 0;
}

/* Build policy `name` with parameters p->keys/vals (already in p) into p.
 * The policy's own create checks the keys and ranges.  For GIFT the
 * ledger comes from *gift (continued with the new parameters), or starts
 * empty; the new ledger goes to *gift_out (NULL when validate_only or not
 * GIFT).  Nothing of c changes. */
int mds_qctl_pol_build(mds_qosctl *c, struct qctl_pol *p, int validate_only,
		     qos_gift **gift_out, qos_gift_params *gp_out)
{
	qos_param kv[PFS_QOS_PARAMS_MAX];
	qos_params params = { .v = kv, .n = p->n, .seed = (uint64_t)c->st.epoch_ns };
	const qos_policy_ops *ops = NULL;
	void *state = NULL;
	int rc;

	if (gift_out)
		*gift_out = NULL;
	for (uint32_t i = 0; i < p->n; i++) {
		kv[i].key = p->keys[i];
		kv[i].value = p->vals[i];
		if (!isfinite(p->vals[i]))
			return -EINVAL;
		for (uint32_t k = 0; k < i; k++)
			if (!strcmp(p->keys[k], p->keys[i]))
				return -EINVAL;
	}
	/* none decides nothing; adaptbf runs on the OSSes, whose Δt is the
	 * loop key adaptbf_period: the qos/ policy's own keys (dt,
	 * tokens_per_unit) would do nothing here, so neither takes keys. */
	if (!strcmp(p->name, "none") || !strcmp(p->name, "adaptbf")) {
		p->kind = p->name[0] == 'n' ? QCTL_NONE : QCTL_ADAPTBF;
		return p->n ? -EINVAL : 0;
	}
	for (size_t i = 0; ost_policies[i]; i++)
		if (!strcmp(p->name, ost_policies[i]))
			ops = qos_policy_find(p->name);
	if (!ops)
		return -EINVAL;
	p->kind = strcmp(p->name, "gift") ? QCTL_OPS : QCTL_GIFT;
	rc = ops->create(&params, &state);
	if (rc)
		return rc == -ENOMEM ? rc : -EINVAL;
	if (p->kind == QCTL_OPS && !validate_only) {
		p->ops = ops;
		p->state = state;
		return 0;
	}
	ops->destroy(state);
	if (p->kind != QCTL_GIFT || validate_only)
		return 0;

	/* GIFT: our own state (qos/gift.h), so the ledger can be saved. */
	qos_gift_params gp;
	uint8_t *img = NULL;
	size_t len = 0;

	rc = qos_gift_params_parse(&params, &gp);
	if (rc)
		return -EINVAL;
	if (c->gift) {
		rc = qos_gift_save(c->gift, &img, &len);
		if (!rc)
			rc = qos_gift_load(&gp, img, len, gift_out);
		free(img);
	} else {
		rc = qos_gift_create(&gp, gift_out);
	}
	if (!rc)
		*gp_out = gp;
	return rc;
}

/* Parse "k=v,k=v" into policy keys of p and loop keys. */
int mds_qctl_parse_params(const char *s, struct qctl_pol *p, double *interval,
			uint32_t *quorum, double *period, char *err, size_t errlen)
{
	char buf[1024], *save = NULL;

	if (!s || !*s)
		return 0;
	if (strlen(s) >= sizeof(buf)) {
		snprintf(err, errlen, "qos_param is too long");
		return -EINVAL;
	}
	strcpy(buf, s);
	for (char *tok = strtok_r(buf, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
		char *eq = strchr(tok, '='), *end;
		double v;

		if (!eq || eq == tok) {
			snprintf(err, errlen, "qos_param: '%s' is not key=value", tok);
			return -EINVAL;
		}
		*eq = '\0';
		errno = 0;
		v = strtod(eq + 1, &end);
		if (errno || end == eq + 1 || *end || !isfinite(v)) {
			snprintf(err, errlen, "qos_param: bad value for %s", tok);
			return -EINVAL;
		}
		if (mds_qctl_is_ctl_key(tok)) {
			if (mds_qctl_ctl_key(tok, v, interval, quorum, period)) {
				snprintf(err, errlen, "qos_param: %s out of range", tok);
				return -EINVAL;
			}
			continue;
		}
		if (strlen(tok) >= PFS_QOS_NAME_MAX || p->n >= PFS_QOS_PARAMS_MAX) {
			snprintf(err, errlen, "qos_param: too many or too long keys");
			return -EINVAL;
		}
		strcpy(p->keys[p->n], tok);
		p->vals[p->n++] = v;
	}
	return 0;
}

void mds_qctl_pol_from_rec(struct qctl_pol *p, const mds_qos_policy_rec *r)
{
	memset(p, 0, sizeof(*p));
	memcpy(p->name, r->name, sizeof(p->name));
	p->n = r->n;
	for (uint32_t i = 0; i < r->n; i++) {
		memcpy(p->keys[i], r->params[i].key, PFS_QOS_NAME_MAX);
		p->vals[i] = r->params[i].value;
	}
}

void mds_qctl_rec_from_pol(mds_qos_policy_rec *r, const struct qctl_pol *p, double interval,
			 uint32_t quorum, double period)
{
	memset(r, 0, sizeof(*r));
	memcpy(r->name, p->name, sizeof(r->name));
	r->n = p->n;
	for (uint32_t i = 0; i < p->n; i++) {
		memcpy(r->params[i].key, p->keys[i], PFS_QOS_NAME_MAX);
		r->params[i].value = p->vals[i];
	}
	r->interval = interval;
	r->quorum = quorum;
	r->adaptbf_period = period;
}

/* "gift B_thres=0.3 tau=0.8" for log lines. */
void mds_qctl_pol_text(const struct qctl_pol *p, char *out, size_t len)
{
	size_t o = (size_t)snprintf(out, len, "%s", p->name);

	for (uint32_t i = 0; i < p->n && o < len; i++)
		o += (size_t)snprintf(out + o, len - o, " %s=%g", p->keys[i], p->vals[i]);
}

