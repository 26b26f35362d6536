/* lock_held.c — the mount's own record of the locks it holds (see
 * lock_held.h): a small hash of inodes, each with an unordered list of
 * locks.  Setting a range is done in two steps on the owner's locks of
 * that kind: cut [start, end] out of every one of them (keeping the parts
 * that stick out), then add the new lock widened over the locks of the
 * same type it touches, which it absorbs. */
#include "client/lock_held.h"

#include <errno.h>
#include <stdlib.h>

#include "common/proto.h"

#define BUCKETS 256

typedef struct hlk {
	cli_lock l;
	struct hlk *next;
} hlk;

typedef struct hino {
	uint64_t ino;
	hlk *locks;
	struct hino *next;
} hino;

struct cli_lkheld {
	hino *b[BUCKETS];
	size_t n;
};

cli_lkheld *cli_lkheld_new(void)
{
	return calloc(1, sizeof(cli_lkheld));
}

static hino **ino_slot(cli_lkheld *h, uint64_t ino)
{
	hino **pp = &h->b[ino % BUCKETS];

	while (*pp && (*pp)->ino != ino)
		pp = &(*pp)->next;
	return pp;
}

static void ino_maybe_free(cli_lkheld *h, uint64_t ino)
{
	hino **pp = ino_slot(h, ino), *e = *pp;

	if (e && !e->locks) {
		*pp = e->next;
		free(e);
	}
}

void cli_lkheld_free(cli_lkheld *h)
{
	if (!h)
		return;
	for (unsigned b = 0; b < BUCKETS; b++)
		while (h->b[b]) {
			hino *e = h->b[b];

			h->b[b] = e->next;
			while (e->locks) {
				hlk *p = e->locks;

				e->locks = p->next;
				free(p);
			}
			free(e);
		}
	free(h);
}

static int same(const cli_lock *a, const cli_lock *b)
{
	return a->owner == b->owner && a->kind == b->kind;
}

static int overlap(const cli_lock *a, const cli_lock *b)
{
	return a->start <= b->end && b->start <= a->end;
}

static int touch(const cli_lock *a, const cli_lock *b)
{
	return overlap(a, b) || (a->end != UINT64_MAX && a->end + 1 == b->start) ||
	       (b->end != UINT64_MAX && b->end + 1 == a->start);
}

static hlk *node(const cli_lock *l, hlk *next)
{
	hlk *p = malloc(sizeof(*p));

	if (p) {
		p->l = *l;
		p->next = next;
	}
	return p;
}

int cli_lkheld_apply(cli_lkheld *h, uint64_t ino, const cli_lock *l)
{
	hino **pp = ino_slot(h, ino), *e = *pp;
	cli_lock w = *l;
	int rc = 0;

	if (!e) {
		if (l->type == PFS_LK_UNLOCK)
			return 0;
		e = calloc(1, sizeof(*e));
		if (!e)
			return -ENOMEM;
		e->ino = ino;
		*pp = e;
	}
	/* widen over own locks of the same type that touch the new one */
	if (w.type != PFS_LK_UNLOCK)
		for (hlk *p = e->locks; p; p = p->next)
			if (same(&p->l, &w) && p->l.type == w.type && touch(&p->l, &w)) {
				if (p->l.start < w.start)
					w.start = p->l.start;
				if (p->l.end > w.end)
					w.end = p->l.end;
			}
	/* cut [w.start, w.end] out of the owner's locks */
	for (hlk **q = &e->locks; *q;) {
		hlk *p = *q;
		int left, right;

		if (!same(&p->l, &w) || !overlap(&p->l, &w)) {
			q = &p->next;
			continue;
		}
		left = p->l.start < w.start;
		right = p->l.end > w.end;
		if (left && right) {
			hlk *r = node(&p->l, p->next);

			if (!r) {
				rc = -ENOMEM;
				break;
			}
			r->l.start = w.end + 1;
			p->l.end = w.start - 1;
			p->next = r;
			h->n++;
			q = &r->next;
		} else if (left) {
			p->l.end = w.start - 1;
			q = &p->next;
		} else if (right) {
			p->l.start = w.end + 1;
			q = &p->next;
		} else {
			*q = p->next;
			free(p);
			h->n--;
		}
	}
	if (!rc && w.type != PFS_LK_UNLOCK) {
		hlk *n = node(&w, e->locks);

		if (n) {
			e->locks = n;
			h->n++;
		} else {
			rc = -ENOMEM;
		}
	}
	ino_maybe_free(h, ino);
	return rc;
}

void cli_lkheld_release(cli_lkheld *h, uint64_t ino, uint64_t owner, unsigned kinds)
{
	hino *e = *ino_slot(h, ino);

	if (!e)
		return;
	for (hlk **q = &e->locks; *q;) {
		hlk *p = *q;

		if (p->l.owner == owner && (kinds & (1u << p->l.kind))) {
			*q = p->next;
			free(p);
			h->n--;
		} else {
			q = &p->next;
		}
	}
	ino_maybe_free(h, ino);
}

int cli_lkheld_list(const cli_lkheld *h, uint64_t **inos, cli_lock **locks, size_t *n)
{
	size_t i = 0;

	*inos = NULL;
	*locks = NULL;
	*n = 0;
	if (!h->n)
		return 0;
	*inos = malloc(h->n * sizeof(**inos));
	*locks = malloc(h->n * sizeof(**locks));
	if (!*inos || !*locks) {
		free(*inos);
		free(*locks);
		*inos = NULL;
		*locks = NULL;
		return -ENOMEM;
	}
	for (unsigned b = 0; b < BUCKETS; b++)
		for (const hino *e = h->b[b]; e; e = e->next)
			for (const hlk *p = e->locks; p && i < h->n; p = p->next) {
				(*inos)[i] = e->ino;
				(*locks)[i++] = p->l;
			}
	*n = i;
	return 0;
}

size_t cli_lkheld_count(const cli_lkheld *h)
{
	return h->n;
}
