/* admin_oss.c — OSS grouping and concurrent control requests (see
 * admin_oss.h).
 *
 * One thread per selected OSS for the length of one call: a file system has
 * tens of OSSes, not thousands, and a thread that could not be started runs
 * its request on the caller's thread instead, so the call still completes. */
#include "client/admin_oss.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/admin_i.h"

typedef struct oss_job {
	cli_oss *o;
	pfs_rpc_tag tag;
	uint16_t op;
	unsigned flags;
	const void *req;
	size_t len;
	pthread_t th;
	int started;
} oss_job;

static void oss_free(cli_oss *o)
{
	free(o->osts);
	pfs_rpc_pool_destroy(o->pool);
	pfs_rpc_reply_free(&o->rep);
}

void cli_oss_set_free(cli_oss_set *s)
{
	for (uint32_t i = 0; i < s->n; i++)
		oss_free(&s->v[i]);
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

int cli_oss_set_build(cli_admin *a, const pfs_ost_info *o, uint32_t n, cli_oss_set *s)
{
	pfs_rpc_opts opts = { .max_conns = 1, .auth = a->auth, .timeout_ms = a->oss_timeout_ms,
			      .retry_ms = CLI_OSS_RETRY_MS };
	uint32_t *grown;
	int rc = 0;

	s->v = calloc(n ? n : 1, sizeof(*s->v));
	s->n = 0;
	if (!s->v)
		return -ENOMEM;
	for (uint32_t i = 0; rc == 0 && i < n; i++) {
		cli_oss *e = NULL;

		if (!o[i].host[0] || o[i].ctl_port == 0)
			continue;
		for (uint32_t k = 0; k < s->n && !e; k++)
			if (s->v[k].ctl_port == o[i].ctl_port &&
			    strcmp(s->v[k].host, o[i].host) == 0)
				e = &s->v[k];
		if (!e) {
			e = &s->v[s->n];
			snprintf(e->name, sizeof(e->name), "%s",
				 o[i].oss[0] ? o[i].oss : o[i].host);
			snprintf(e->host, sizeof(e->host), "%s", o[i].host);
			e->ctl_port = o[i].ctl_port;
			snprintf(e->addr, sizeof(e->addr), "%s:%u", o[i].host, o[i].ctl_port);
			rc = pfs_rpc_pool_create(e->host, e->ctl_port, &opts, &e->pool);
			if (rc)
				break;
			s->n++;
		}
		grown = realloc(e->osts, (e->n_osts + 1) * sizeof(*e->osts));
		if (!grown) {
			rc = -ENOMEM;
			break;
		}
		e->osts = grown;
		e->osts[e->n_osts++] = o[i].index;
		e->up |= o[i].up;
	}
	if (rc)
		cli_oss_set_free(s);
	return rc;
}

int cli_oss_set_load(cli_admin *a, cli_oss_set *s)
{
	pfs_ost_info *o = NULL;
	uint32_t n = 0;
	int rc = cli_admin_get_osts(a, &o, &n);

	s->v = NULL;
	s->n = 0;
	if (rc == 0) {
		rc = cli_oss_set_build(a, o, n, s);
		if (rc)
			cli__what(a, "grouping the OST list");
	}
	free(o);
	return rc;
}

int cli_oss_set_find(const cli_oss_set *s, uint32_t ost)
{
	for (uint32_t i = 0; i < s->n; i++)
		for (uint32_t k = 0; k < s->v[i].n_osts; k++)
			if (s->v[i].osts[k] == ost)
				return (int)i;
	return -ENOENT;
}

static void *oss_run(void *arg)
{
	oss_job *j = arg;
	cli_oss *o = j->o;

	pfs_rpc_reply_free(&o->rep);
	pfs_rpc_reply_init(&o->rep);
	o->rc = pfs_rpc_call_tag(o->pool, j->op, &j->tag, j->flags, j->req, j->len, NULL, 0,
				 &o->rep);
	o->called = 1;
	return NULL;
}

uint32_t cli_oss_call(cli_admin *a, cli_oss_set *s, int only, uint16_t op, unsigned flags,
		      const void *req, size_t len)
{
	oss_job *jobs = calloc(s->n ? s->n : 1, sizeof(*jobs));
	uint32_t failed = 0;

	for (uint32_t i = 0; i < s->n; i++) {
		s->v[i].called = 0;
		s->v[i].rc = 0;
		pfs_rpc_reply_free(&s->v[i].rep);
	}
	for (uint32_t i = 0; i < s->n; i++) {
		oss_job one = { 0 }, *j = jobs ? &jobs[i] : &one;

		if (only >= 0 && (uint32_t)only != i)
			continue;
		j->o = &s->v[i];
		j->tag = cli__tag(a);
		j->op = op;
		j->flags = flags;
		j->req = req;
		j->len = len;
		/* Without the jobs array, or without a thread, ask inline. */
		if (jobs && pthread_create(&j->th, NULL, oss_run, j) == 0)
			j->started = 1;
		else
			oss_run(j);
	}
	for (uint32_t i = 0; jobs && i < s->n; i++)
		if (jobs[i].started)
			pthread_join(jobs[i].th, NULL);
	for (uint32_t i = 0; i < s->n; i++)
		failed += s->v[i].called && s->v[i].rc != 0;
	free(jobs);
	return failed;
}

int cli_oss_no_answer(int rc)
{
	switch (rc) {
	case -ECONNREFUSED:
	case -ETIMEDOUT:
	case -EHOSTUNREACH:
	case -ENETUNREACH:
	case -EHOSTDOWN:
	case -ECONNRESET:
	case -ECONNABORTED:
	case -ENOTCONN:
	case -EPIPE:
	case -EAGAIN:
		return 1;
	default:
		return 0;
	}
}

const char *cli_oss_outcome(int rc)
{
	if (rc == 0)
		return "ok";
	if (cli_oss_no_answer(rc))
		return "no answer";
	return rc == -EBADMSG ? "malformed reply" : "error";
}
