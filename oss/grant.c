/* grant.c — write grants of one OST (see grant.h).
 *
 * A small array of clients, searched linearly: an OST serves tens of
 * mounts, and the data path touches it only for WRITEs of clients that
 * hold a grant (and for uncovered writes while anybody does). */
#include "oss/grant.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/proto.h"

typedef struct gclient {
	uint64_t id;
	uint64_t granted;
	uint64_t seen_ms;
} gclient;

struct oss_grant {
	pthread_mutex_t lock;
	gclient *c;
	size_t n, cap;
	uint64_t total;
};

int oss_grant_create(oss_grant **out)
{
	oss_grant *g = calloc(1, sizeof(*g));

	if (!g)
		return -ENOMEM;
	pthread_mutex_init(&g->lock, NULL);
	*out = g;
	return 0;
}

void oss_grant_destroy(oss_grant *g)
{
	if (!g)
		return;
	pthread_mutex_destroy(&g->lock);
	free(g->c);
	free(g);
}

uint64_t oss_grant_reserve(uint64_t total)
{
	/* about 3 %: file system metadata, indirect blocks, writes of
	 * clients without grants */
	return total / 32 + 16 * (uint64_t)PFS_GRANT_PAGE;
}

static gclient *find(oss_grant *g, uint64_t id)
{
	for (size_t i = 0; i < g->n; i++)
		if (g->c[i].id == id)
			return &g->c[i];
	return NULL;
}

static gclient *find_add(oss_grant *g, uint64_t id)
{
	gclient *c = find(g, id);

	if (c)
		return c;
	if (g->n == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 8;
		gclient *nc = realloc(g->c, cap * sizeof(*nc));

		if (!nc)
			return NULL;
		g->c = nc;
		g->cap = cap;
	}
	c = &g->c[g->n++];
	memset(c, 0, sizeof(*c));
	c->id = id;
	return c;
}

/* Drop entry c (its grant must be 0 or already taken off total). */
static void drop(oss_grant *g, gclient *c)
{
	*c = g->c[--g->n];
}

int oss_grant_request(oss_grant *g, uint64_t client, uint64_t want, uint64_t giveback,
		      uint64_t total, uint64_t free_bytes, uint64_t now_ms, uint64_t *out)
{
	uint64_t reserve = oss_grant_reserve(total), avail, give;
	gclient *c;

	pthread_mutex_lock(&g->lock);
	c = find_add(g, client);
	if (!c) {
		pthread_mutex_unlock(&g->lock);
		return -ENOMEM;
	}
	c->seen_ms = now_ms;
	if (giveback > c->granted)
		giveback = c->granted;
	c->granted -= giveback;
	g->total -= giveback;
	avail = free_bytes > reserve + g->total ? free_bytes - reserve - g->total : 0;
	give = want < avail ? want : avail;
	c->granted += give;
	g->total += give;
	*out = c->granted;
	if (c->granted == 0)
		drop(g, c);
	pthread_mutex_unlock(&g->lock);
	return 0;
}

int oss_grant_write(oss_grant *g, uint64_t client, uint64_t len, uint64_t now_ms,
		    oss_grant_free_fn free_fn, void *arg)
{
	return oss_grant_consume(g, client, PFS_GRANT_COST(len), now_ms, free_fn, arg);
}

int oss_grant_consume(oss_grant *g, uint64_t client, uint64_t cost, uint64_t now_ms,
		      oss_grant_free_fn free_fn, void *arg)
{
	uint64_t cov = 0, unc, fr = 0;
	gclient *c;
	int rc = 0;

	pthread_mutex_lock(&g->lock);
	c = find(g, client);
	if (c) {
		c->seen_ms = now_ms;
		cov = c->granted < cost ? c->granted : cost;
	}
	unc = cost - cov;
	/* Uncovered bytes may not eat into space granted to others (nor the
	 * writer's own grant left: there is none when a part is uncovered). */
	if (unc && g->total - cov > 0) {
		rc = free_fn(arg, &fr);
		if (rc == 0 && fr < unc + (g->total - cov))
			rc = -ENOSPC;
	}
	if (rc == 0 && c) {
		c->granted -= cov;
		g->total -= cov;
		if (c->granted == 0)
			drop(g, c);
	}
	pthread_mutex_unlock(&g->lock);
	return rc;
}

uint64_t oss_grant_expire(oss_grant *g, uint64_t now_ms, uint64_t timeout_ms)
{
	uint64_t back = 0;

	pthread_mutex_lock(&g->lock);
	for (size_t i = 0; i < g->n;) {
		gclient *c = &g->c[i];

		if (now_ms - c->seen_ms > timeout_ms && now_ms > c->seen_ms) {
			back += c->granted;
			g->total -= c->granted;
			drop(g, c);
			continue;
		}
		i++;
	}
	pthread_mutex_unlock(&g->lock);
	return back;
}

uint64_t oss_grant_of(oss_grant *g, uint64_t client)
{
	uint64_t v;
	gclient *c;

	pthread_mutex_lock(&g->lock);
	c = find(g, client);
	v = c ? c->granted : 0;
	pthread_mutex_unlock(&g->lock);
	return v;
}

uint64_t oss_grant_total(oss_grant *g)
{
	uint64_t v;

	pthread_mutex_lock(&g->lock);
	v = g->total;
	pthread_mutex_unlock(&g->lock);
	return v;
}
