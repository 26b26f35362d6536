/* policy.c — the registry of QoS policies and parameter helpers.
 * Each policy module defines its qos_policy_ops; this table lists them. */
#include "qos/policy.h"
#include "qos/gift.h"
#include "qos/baselines.h"
#include "qos/adaptbf.h"
#include "qos/padll.h"
#include "qos/static_policy.h"

#include <errno.h>
#include <string.h>

/* Registry: one line per policy, in the order `pfs-sim --help` shows them.
 * (Each policy module adds its own line here.) */
static const qos_policy_ops *const policies[] = {
	&qos_policy_adaptbf,
	&qos_policy_uniform,
	&qos_policy_priority,
	&qos_policy_proportional,
	&qos_policy_psfa,
	&qos_policy_static,
	&qos_policy_gift,
	&qos_policy_pofs,
	&qos_policy_bsip,
	&qos_policy_mbw,
	&qos_policy_tsa,
	&qos_policy_esa,
	&qos_policy_tmf,
	&qos_policy_rnd,
	NULL,
};

const qos_policy_ops *const *qos_policy_all(void) { return policies; }

const qos_policy_ops *qos_policy_find(const char *name)
{
	for (size_t i = 0; policies[i]; i++)
		if (strcmp(policies[i]->name, name) == 0)
			return policies[i];
	return NULL;
}

double qos_param_get(const qos_params *p, const char *key, double def)
{
	if (!p)
		return def;
	for (size_t i = 0; i < p->n; i++)
		if (strcmp(p->v[i].key, key) == 0)
			return p->v[i].value;
	return def;
}

int qos_params_check(const qos_params *p, const char *const *known)
{
	if (!p)
		return 0;
	for (size_t i = 0; i < p->n; i++) {
		size_t k;
		for (k = 0; known && known[k]; k++)
			if (strcmp(p->v[i].key, known[k]) == 0)
				break;
		if (!known || !known[k])
			return -EINVAL;
	}
	return 0;
}
