/* rcc_srv.c — per-OST RCC state and its client table (see rcc_srv.h). */
#include "oss/rcc_srv.h"

#include <errno.h>
#include <stdlib.h>

#define RCC_BUCKETS 1024u /* power of two */

struct oss_rcc_cl {
	struct oss_rcc_cl *next;
	uint64_t id;
	qos_rcc_client st;
};

struct oss_rcc_srv {
	qos_rcc rcc;
	size_t max, n;
	uint32_t last_credit;
	oss_rcc_cl *b[RCC_BUCKETS];
};

static size_t cl_hash(uint64_t id)
{
	id ^= id >> 33;
	id *= 0xff51afd7ed558ccdull; /* murmur3 finaliser */
	id ^= id >> 33;
	return (size_t)id & (RCC_BUCKETS - 1);
}

int oss_rcc_srv_create(const qos_rcc_params *p, size_t max_clients, double now,
		       oss_rcc_srv **out)
{
	oss_rcc_srv *s = calloc(1, sizeof(*s));
	int rc;

	if (!s)
		return -ENOMEM;
	rc = qos_rcc_init(&s->rcc, p, now);
	if (rc) {
		free(s);
		return rc;
	}
	s->max = max_clients ? max_clients : OSS_RCC_CLIENTS_MAX;
	*out = s;
	return 0;
}

void oss_rcc_srv_destroy(oss_rcc_srv *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < RCC_BUCKETS; i++) {
		oss_rcc_cl *c = s->b[i];
		while (c) {
			oss_rcc_cl *n = c->next;
			free(c);
			c = n;
		}
	}
	free(s);
}

oss_rcc_cl *oss_rcc_srv_recv(oss_rcc_srv *s, uint64_t client_id, double now)
{
	size_t h = cl_hash(client_id);
	oss_rcc_cl *c;

	for (c = s->b[h]; c; c = c->next)
		if (c->id == client_id)
			break;
	if (!c) {
		if (s->n >= s->max)
			return NULL;
		c = malloc(sizeof(*c)); /* once per client, not per request */
		if (!c)
			return NULL;
		c->id = client_id;
		qos_rcc_client_init(&c->st);
		c->next = s->b[h];
		s->b[h] = c;
		s->n++;
	}
	qos_rcc_recv(&s->rcc, &c->st, now);
	return c;
}

uint32_t oss_rcc_srv_reply(oss_rcc_srv *s, oss_rcc_cl *cl, double Ta, uint32_t cnr,
			   double now)
{
	long credit;

	if (!cl)
		return 0;
	credit = qos_rcc_reply(&s->rcc, &cl->st, Ta, cnr ? (double)cnr : s->rcc.p.RCCmax,
			       now);
	s->last_credit = credit > 0 ? (uint32_t)credit : 0;
	return s->last_credit;
}

uint32_t oss_rcc_srv_min(const oss_rcc_srv *s)
{
	return (uint32_t)s->rcc.p.RCCmin;
}

void oss_rcc_srv_sweep(oss_rcc_srv *s, double now)
{
	for (size_t i = 0; i < RCC_BUCKETS; i++) {
		for (oss_rcc_cl **pp = &s->b[i]; *pp;) {
			oss_rcc_cl *c = *pp;

			qos_rcc_ping(&s->rcc, &c->st, now);
			if (!c->st.active && c->st.q == 0) {
				*pp = c->next;
				free(c);
				s->n--;
				continue;
			}
			pp = &c->next;
		}
	}
}

void oss_rcc_srv_info(const oss_rcc_srv *s, oss_rcc_info *out)
{
	double iops = qos_rcc_iops(&s->rcc);

	out->D = s->rcc.D;
	out->C = s->rcc.C;
	out->iops = iops;
	out->latency = iops > 0 ? (double)s->rcc.D / iops : 0;
	out->credit = s->last_credit;
	out->clients = s->n;
}
