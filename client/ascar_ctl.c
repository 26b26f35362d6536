/* ascar_ctl.c — ASCAR rule set of the mount and per-OSS controllers (see
 * ascar_ctl.h; the algorithms are qos/ascar.c). */
#include "client/ascar_ctl.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "qos/ascar.h"

/* Latency histogram: bucket i holds latencies below 2^((i+1)/4) us. */
#define LAT_BUCKETS 128

struct cli_ascar {
	pthread_mutex_t lock;
	qos_ascar_ruleset rules; /* guarded by lock */
	uint64_t version;        /* guarded by lock */
	int on;                  /* guarded by lock */
};

struct cli_ascar_stream {
	cli_ascar *a;
	char name[72];
	uint64_t version;        /* the rules copied below */
	int on;
	qos_ascar_ruleset rules; /* own copy: statistics are per stream */
	qos_ascar_ctl ctl;
	uint64_t last_send_us;
	int sent;
	uint64_t lat[LAT_BUCKETS];
	uint64_t rpcs, changes;
};

int cli_ascar_create(cli_ascar **out)
{
	cli_ascar *a = calloc(1, sizeof(*a));

	if (!a)
		return -ENOMEM;
	pthread_mutex_init(&a->lock, NULL);
	qos_ascar_ruleset_init(&a->rules);
	*out = a;
	return 0;
}

void cli_ascar_destroy(cli_ascar *a)
{
	if (!a)
		return;
	qos_ascar_ruleset_free(&a->rules);
	pthread_mutex_destroy(&a->lock);
	free(a);
}

int cli_ascar_set(cli_ascar *a, const char *text, uint64_t version, int *line)
{
	qos_ascar_ruleset rs;
	int on = text && text[strspn(text, " \t\r\n")] != '\0';
	int rc = 0;

	if (line)
		*line = 0;
	qos_ascar_ruleset_init(&rs);
	if (on)
		rc = qos_ascar_ruleset_parse(text, &rs, line);
	if (rc) {
		qos_ascar_ruleset_free(&rs);
		return rc;
	}
	pthread_mutex_lock(&a->lock);
	qos_ascar_ruleset_free(&a->rules);
	a->rules = rs; /* moved */
	a->version = version;
	a->on = on;
	pthread_mutex_unlock(&a->lock);
	return 0;
}

uint64_t cli_ascar_version(cli_ascar *a, int *on)
{
	uint64_t v;

	pthread_mutex_lock(&a->lock);
	v = a->version;
	if (on)
		*on = a->on;
	pthread_mutex_unlock(&a->lock);
	return v;
}

static unsigned lat_bucket(uint64_t us)
{
	unsigned i = (unsigned)(4 * log2((double)us + 1));

	return i < LAT_BUCKETS ? i : LAT_BUCKETS - 1;
}

/* Upper end of the bucket holding the q-quantile (0: no samples). */
static uint64_t lat_quantile(const cli_ascar_stream *s, double q)
{
	uint64_t want, seen = 0;

	if (!s->rpcs)
		return 0;
	want = (uint64_t)ceil(q * (double)s->rpcs);
	for (unsigned i = 0; i < LAT_BUCKETS; i++) {
		seen += s->lat[i];
		if (seen >= want)
			return (uint64_t)pow(2.0, (i + 1) / 4.0);
	}
	return (uint64_t)pow(2.0, LAT_BUCKETS / 4.0);
}

/* The statistics of the version in use, for SHARP and the benchmarks. */
static void log_stats(const cli_ascar_stream *s)
{
	if (!s->version)
		return;
	pfs_log(PFS_LOG_INFO, "ascar %s: v%llu rpcs %llu p50_us %llu p99_us %llu", s->name,
		(unsigned long long)s->version, (unsigned long long)s->rpcs,
		(unsigned long long)lat_quantile(s, 0.5), (unsigned long long)lat_quantile(s, 0.99));
	for (size_t i = 0; s->on && i < s->rules.n; i++) {
		const qos_ascar_rule *r = &s->rules.r[i];

		if (r->hits > 0)
			pfs_log(PFS_LOG_INFO, "ascar %s: v%llu rule %zu hits %.0f sum %.6g %.6g %.6g",
				s->name, (unsigned long long)s->version, i, r->hits, r->sum[0],
				r->sum[1], r->sum[2]);
	}
}

int cli_ascar_stream_create(cli_ascar *a, const char *name, cli_ascar_stream **out)
{
	cli_ascar_stream *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->a = a;
	snprintf(s->name, sizeof(s->name), "%s", name ? name : "?");
	qos_ascar_ruleset_init(&s->rules);
	if (qos_ascar_ctl_init(&s->ctl, NULL, CLI_ASCAR_CWND0, 0) != 0) {
		free(s);
		return -EINVAL;
	}
	cli_ascar_refresh(s);
	*out = s;
	return 0;
}

void cli_ascar_stream_destroy(cli_ascar_stream *s)
{
	if (!s)
		return;
	log_stats(s);
	qos_ascar_ruleset_free(&s->rules);
	free(s);
}

void cli_ascar_refresh(cli_ascar_stream *s)
{
	qos_ascar_ruleset rs;
	uint64_t v;
	int on, rc = 0;

	pthread_mutex_lock(&s->a->lock);
	v = s->a->version;
	on = s->a->on;
	if (v == s->version) {
		pthread_mutex_unlock(&s->a->lock);
		return;
	}
	qos_ascar_ruleset_init(&rs);
	if (on)
		rc = qos_ascar_ruleset_copy(&rs, &s->a->rules);
	pthread_mutex_unlock(&s->a->lock);
	if (rc) { /* out of memory: keep the old rules, try again later */
		qos_ascar_ruleset_free(&rs);
		return;
	}
	log_stats(s);
	qos_ascar_ruleset_free(&s->rules);
	s->rules = rs;
	qos_ascar_ruleset_clear_stats(&s->rules);
	s->version = v;
	s->on = on;
	/* a new rule set starts from the same place; the indicators stay */
	s->ctl.cwnd = CLI_ASCAR_CWND0;
	s->ctl.tau = 0;
	s->ctl.changed = 0;
	memset(s->lat, 0, sizeof(s->lat));
	s->rpcs = 0;
	pfs_log(PFS_LOG_INFO, "ascar %s: rules v%llu %s (%zu rules)", s->name,
		(unsigned long long)v, on ? "on" : "off", s->rules.n);
}

void cli_ascar_sent(cli_ascar_stream *s, uint64_t now_us)
{
	s->last_send_us = now_us;
	s->sent = 1;
	qos_ascar_ctl_sent(&s->ctl, (double)now_us / 1e6);
}

void cli_ascar_reply(cli_ascar_stream *s, uint64_t sent_us, uint64_t now_us)
{
	unsigned before;
	int r;

	cli_ascar_refresh(s);
	if (now_us >= sent_us) {
		s->lat[lat_bucket(now_us - sent_us)]++;
		s->rpcs++;
	}
	qos_ascar_ctl_reply(&s->ctl, (double)sent_us / 1e6, (double)now_us / 1e6);
	if (!s->on)
		return;
	before = qos_ascar_ctl_window(&s->ctl);
	r = qos_ascar_ctl_apply(&s->ctl, &s->rules, (double)now_us / 1e6);
	if (r >= 0 && qos_ascar_ctl_window(&s->ctl) != before) {
		s->changes++;
		pfs_log(PFS_LOG_INFO, "ascar %s: window %u -> %u (rule %d, v%llu)", s->name,
			before, qos_ascar_ctl_window(&s->ctl), r, (unsigned long long)s->version);
	}
}

unsigned cli_ascar_window(const cli_ascar_stream *s)
{
	return s->on ? qos_ascar_ctl_window(&s->ctl) : 0;
}

uint64_t cli_ascar_wait_us(const cli_ascar_stream *s, uint64_t now_us)
{
	uint64_t next;

	if (!s->on || !s->sent || !(s->ctl.tau > 0))
		return 0;
	next = s->last_send_us + (uint64_t)s->ctl.tau;
	return next > now_us ? next - now_us : 0;
}

void cli_ascar_stream_stats(const cli_ascar_stream *s, cli_ascar_stats *st)
{
	st->version = s->version;
	st->on = s->on;
	st->window = cli_ascar_window(s);
	st->tau_us = s->on ? s->ctl.tau : 0;
	st->rpcs = s->rpcs;
	st->p50_us = lat_quantile(s, 0.5);
	st->p99_us = lat_quantile(s, 0.99);
	st->changes = s->changes;
}
