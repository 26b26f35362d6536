/* jobmap.c — intrusive job-id hash map (see jobmap.h). */
#include "oss/jobmap.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static size_t hash(const char *s)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

int oss_jobmap_init(oss_jobmap *m, size_t buckets)
{
	size_t nb = 16;

	while (nb < buckets && nb < ((size_t)1 << 24))
		nb <<= 1;
	m->b = calloc(nb, sizeof(*m->b));
	if (!m->b)
		return -ENOMEM;
	m->mask = nb - 1;
	m->n = 0;
	return 0;
}

void oss_jobmap_fini(oss_jobmap *m, void (*free_node)(oss_jobmap_node *))
{
	if (!m->b)
		return;
	for (size_t i = 0; i <= m->mask; i++) {
		oss_jobmap_node *n = m->b[i];
		while (n) {
			oss_jobmap_node *next = n->next;
			if (free_node)
				free_node(n);
			n = next;
		}
	}
	free(m->b);
	m->b = NULL;
	m->n = 0;
}

oss_jobmap_node *oss_jobmap_find(const oss_jobmap *m, const char *id)
{
	for (oss_jobmap_node *n = m->b[hash(id) & m->mask]; n; n = n->next)
		if (!strcmp(n->id, id))
			return n;
	return NULL;
}

void oss_jobmap_insert(oss_jobmap *m, oss_jobmap_node *n)
{
	size_t b = hash(n->id) & m->mask;

	n->next = m->b[b];
	m->b[b] = n;
	m->n++;
}

void oss_jobmap_remove(oss_jobmap *m, oss_jobmap_node *n)
{
	oss_jobmap_node **pp = &m->b[hash(n->id) & m->mask];

	while (*pp && *pp != n)
		pp = &(*pp)->next;
	if (*pp) {
		*pp = n->next;
		m->n--;
	}
}

oss_jobmap_node *oss_jobmap_next(const oss_jobmap *m, oss_jobmap_iter *it)
{
	oss_jobmap_node *n;

	if (!it->started) {
		it->started = 1;
		it->bucket = 0;
		it->next = NULL;
	}
	while (!it->next) {
		if (it->bucket > m->mask)
			return NULL;
		it->next = m->b[it->bucket++];
	}
	n = it->next;
	it->next = n->next;
	return n;
}

oss_jobmap_node *oss_jobmap_bucket(const oss_jobmap *m, size_t i)
{
	return m->b[i & m->mask];
}

size_t oss_jobmap_buckets(const oss_jobmap *m) { return m->mask + 1; }

void oss_jobmap_set_id(oss_jobmap_node *n, const char *id)
{
	size_t l = strnlen(id, PFS_JOBID_MAX);

	memcpy(n->id, id, l);
	n->id[l] = '\0';
}
