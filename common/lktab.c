/* lktab.c — the lock table (see lktab.h): per-inode lists of granted
 * locks and of waiters, in a fixed hash of inodes; entries of inodes with
 * neither are freed at once.
 *
 * Setting a lock of (client, owner, kind) is done in two passes over the
 * owner's own locks of that kind: the first widens the request over every
 * lock of the same type it overlaps or touches (merge); the second removes
 * every own lock inside the widened range and keeps the parts of the others
 * that stick out (split).  Own locks never overlap, so a lock of the other
 * type can only overlap the original request, and at most one lock is cut
 * in two: two nodes allocated up front make every set all-or-nothing. */
#include "common/lktab.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define NBUCKETS 1024
#define DEADLOCK_DEPTH 64

typedef struct lk {
	pfs_lock l;
	struct lk *next;
} lk;

typedef struct waiter {
	pfs_lock l;
	void *cookie;
	uint64_t deadline;    /* ms; 0 = none */
	struct waiter *next;  /* arrival order */
} waiter;

typedef struct ent {
	uint64_t ino;
	lk *locks;
	waiter *wait;
	struct ent *next;
} ent;

struct pfs_lktab {
	pfs_lktab_grant_fn grant;
	void *arg;
	ent *b[NBUCKETS];
	unsigned nlocks, nwait;
};

static unsigned bucket(uint64_t ino)
{
	return (unsigned)((ino * 0x9e3779b97f4a7c15ull) >> 54) % NBUCKETS;
}

static ent *ent_find(pfs_lktab *t, uint64_t ino, int create)
{
	unsigned b = bucket(ino);
	ent *e;

	for (e = t->b[b]; e; e = e->next)
		if (e->ino == ino)
			return e;
	if (!create)
		return NULL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->ino = ino;
	e->next = t->b[b];
	t->b[b] = e;
	return e;
}

static void ent_maybe_free(pfs_lktab *t, ent *e)
{
	ent **pp;

	if (e->locks || e->wait)
		return;
	for (pp = &t->b[bucket(e->ino)]; *pp; pp = &(*pp)->next)
		if (*pp == e) {
			*pp = e->next;
			free(e);
			return;
		}
}

static int same_owner(const pfs_lock *a, const pfs_lock *b)
{
	return a->client == b->client && a->owner == b->owner && a->kind == b->kind;
}

static int overlap(const pfs_lock *a, const pfs_lock *b)
{
	return a->start <= b->end && b->start <= a->end;
}

/* a and b overlap or touch (b right after a or a right after b) */
static int touch(const pfs_lock *a, const pfs_lock *b)
{
	return overlap(a, b) || (a->end != PFS_LK_EOF && a->end + 1 == b->start) ||
	       (b->end != PFS_LK_EOF && b->end + 1 == a->start);
}

static int conflicts(const pfs_lock *held, const pfs_lock *req)
{
	return held->kind == req->kind && !same_owner(held, req) && overlap(held, req) &&
	       (held->type == PFS_LK_WRITE || req->type == PFS_LK_WRITE);
}

static const lk *first_conflict(const ent *e, const pfs_lock *req)
{
	if (!e || req->type == PFS_LK_UNLOCK)
		return NULL;
	for (const lk *p = e->locks; p; p = p->next)
		if (conflicts(&p->l, req))
			return p;
	return NULL;
}

int pfs_lktab_check(const pfs_lock *l)
{
	if (l->type < PFS_LK_READ || l->type > PFS_LK_UNLOCK || l->kind >= PFS_LK_NKINDS ||
	    l->start > l->end)
		return -EINVAL;
	return 0;
}

pfs_lktab *pfs_lktab_new(pfs_lktab_grant_fn grant, void *arg)
{
	pfs_lktab *t = calloc(1, sizeof(*t));

	if (t) {
		t->grant = grant;
		t->arg = arg;
	}
	return t;
}

/* Apply req (already checked for conflicts) to e's locks with the two
 * spare nodes; consumed spares are set to NULL. */
static void apply(pfs_lktab *t, ent *e, const pfs_lock *req, lk **spare)
{
	pfs_lock w = *req;
	lk **pp;

	/* pass 1: merge with own locks of the same type that overlap or touch */
	if (w.type != PFS_LK_UNLOCK)
		for (lk *p = e->locks; p; p = p->next)
			if (same_owner(&p->l, &w) && p->l.type == w.type && touch(&p->l, &w)) {
				if (p->l.start < w.start)
					w.start = p->l.start;
				if (p->l.end > w.end)
					w.end = p->l.end;
			}
	/* pass 2: drop own locks inside [w.start, w.end], keep what sticks out */
	for (pp = &e->locks; *pp;) {
		lk *p = *pp;

		if (!same_owner(&p->l, &w) || !overlap(&p->l, &w)) {
			pp = &p->next;
			continue;
		}
		int left = p->l.start < w.start, right = p->l.end > w.end;

		if (left && right) {
			lk *r = spare[1];

			spare[1] = NULL;
			r->l = p->l;
			r->l.start = w.end + 1;
			r->next = p->next;
			p->l.end = w.start - 1;
			p->next = r;
			t->nlocks++;
			pp = &r->next;
		} else if (left) {
			p->l.end = w.start - 1;
			pp = &p->next;
		} else if (right) {
			p->l.start = w.end + 1;
			pp = &p->next;
		} else {
			*pp = p->next;
			free(p);
			t->nlocks--;
		}
	}
	if (w.type != PFS_LK_UNLOCK) {
		lk *n = spare[0];

		spare[0] = NULL;
		n->l = w;
		n->next = e->locks;
		e->locks = n;
		t->nlocks++;
	}
}

static int spares_get(lk **spare)
{
	spare[0] = malloc(sizeof(lk));
	spare[1] = malloc(sizeof(lk));
	if (spare[0] && spare[1])
		return 0;
	free(spare[0]);
	free(spare[1]);
	spare[0] = spare[1] = NULL;
	return -ENOMEM;
}

static void spares_put(lk **spare)
{
	free(spare[0]);
	free(spare[1]);
}

static void waiter_unlink(pfs_lktab *t, ent *e, waiter *w)
{
	for (waiter **pp = &e->wait; *pp; pp = &(*pp)->next)
		if (*pp == w) {
			*pp = w->next;
			t->nwait--;
			return;
		}
}

/* Grant every waiter of e that no longer conflicts, in arrival order,
 * again while a grant changed something (a grant may be a downgrade). */
static void retry_waiters(pfs_lktab *t, ent *e)
{
	int progress = 1;

	while (progress) {
		progress = 0;
		for (waiter *w = e->wait, *next; w; w = next) {
			lk *spare[2];

			next = w->next;
			if (first_conflict(e, &w->l))
				continue;
			waiter_unlink(t, e, w);
			if (spares_get(spare)) {
				t->grant(t->arg, w->cookie, -ENOMEM);
			} else {
				if (t->grant(t->arg, w->cookie, 0) == 0)
					apply(t, e, &w->l, spare);
				spares_put(spare);
			}
			free(w);
			progress = 1; /* the list changed: start over */
			break;
		}
	}
}

int pfs_lktab_test(pfs_lktab *t, uint64_t ino, const pfs_lock *req, pfs_lock *conflict)
{
	const lk *c;

	if (pfs_lktab_check(req))
		return -EINVAL;
	c = first_conflict(ent_find(t, ino, 0), req);
	if (!c)
		return 0;
	*conflict = c->l;
	return 1;
}

static int set_locked(pfs_lktab *t, ent *e, const pfs_lock *req)
{
	lk *spare[2];

	if (first_conflict(e, req))
		return -EAGAIN;
	if (spares_get(spare))
		return -ENOMEM;
	apply(t, e, req, spare);
	spares_put(spare);
	retry_waiters(t, e);
	return 0;
}

int pfs_lktab_set(pfs_lktab *t, uint64_t ino, const pfs_lock *req)
{
	ent *e;
	int rc;

	if (pfs_lktab_check(req))
		return -EINVAL;
	e = ent_find(t, ino, req->type != PFS_LK_UNLOCK);
	if (!e)
		return req->type == PFS_LK_UNLOCK ? 0 : -ENOMEM;
	rc = set_locked(t, e, req);
	ent_maybe_free(t, e);
	return rc;
}

int pfs_lktab_apply(pfs_lktab *t, uint64_t ino, const pfs_lock *l)
{
	lk *spare[2];
	ent *e;

	if (pfs_lktab_check(l))
		return -EINVAL;
	e = ent_find(t, ino, l->type != PFS_LK_UNLOCK);
	if (!e)
		return l->type == PFS_LK_UNLOCK ? 0 : -ENOMEM;
	if (spares_get(spare)) {
		ent_maybe_free(t, e);
		return -ENOMEM;
	}
	apply(t, e, l, spare);
	spares_put(spare);
	ent_maybe_free(t, e);
	return 0;
}

int pfs_lktab_list(pfs_lktab *t, uint64_t **inos, pfs_lock **locks, size_t *n)
{
	size_t i = 0;

	*inos = NULL;
	*locks = NULL;
	*n = 0;
	if (!t->nlocks)
		return 0;
	*inos = malloc(t->nlocks * sizeof(**inos));
	*locks = malloc(t->nlocks * sizeof(**locks));
	if (!*inos || !*locks) {
		free(*inos);
		free(*locks);
		*inos = NULL;
		*locks = NULL;
		return -ENOMEM;
	}
	for (unsigned b = 0; b < NBUCKETS; b++)
		for (const ent *e = t->b[b]; e; e = e->next)
			for (const lk *p = e->locks; p && i < t->nlocks; p = p->next) {
				(*inos)[i] = e->ino;
				(*locks)[i++] = p->l;
			}
	*n = i;
	return 0;
}

/* The waiter of (client, owner) of a POSIX lock, on any inode; NULL if it
 * waits for nothing. */
static const waiter *waiting_of(pfs_lktab *t, uint64_t client, uint64_t owner,
				const ent **where)
{
	for (unsigned b = 0; b < NBUCKETS; b++)
		for (const ent *e = t->b[b]; e; e = e->next)
			for (const waiter *w = e->wait; w; w = w->next)
				if (w->l.kind == PFS_LK_POSIX && w->l.client == client &&
				    w->l.owner == owner) {
					*where = e;
					return w;
				}
	return NULL;
}

/* Would req, blocked by holder, close a cycle of waiting owners? */
static int deadlock(pfs_lktab *t, const pfs_lock *req, const pfs_lock *holder)
{
	pfs_lock cur = *holder;

	for (int depth = 0; depth < DEADLOCK_DEPTH; depth++) {
		const ent *e = NULL;
		const waiter *w = waiting_of(t, cur.client, cur.owner, &e);
		const lk *c;

		if (!w)
			return 0;
		c = first_conflict(e, &w->l);
		if (!c)
			return 0;
		if (c->l.client == req->client && c->l.owner == req->owner)
			return 1;
		cur = c->l;
	}
	return 0;
}

int pfs_lktab_wait(pfs_lktab *t, uint64_t ino, const pfs_lock *req, void *cookie,
		  uint64_t deadline_ms)
{
	const lk *c;
	waiter *w, **pp;
	ent *e;
	int rc;

	if (pfs_lktab_check(req))
		return -EINVAL;
	e = ent_find(t, ino, req->type != PFS_LK_UNLOCK);
	if (!e)
		return req->type == PFS_LK_UNLOCK ? 0 : -ENOMEM;
	c = first_conflict(e, req);
	if (!c) {
		rc = set_locked(t, e, req);
		ent_maybe_free(t, e);
		return rc;
	}
	if (req->kind == PFS_LK_POSIX && deadlock(t, req, &c->l)) {
		ent_maybe_free(t, e);
		return -EDEADLK;
	}
	w = calloc(1, sizeof(*w));
	if (!w) {
		ent_maybe_free(t, e);
		return -ENOMEM;
	}
	w->l = *req;
	w->cookie = cookie;
	w->deadline = deadline_ms;
	for (pp = &e->wait; *pp; pp = &(*pp)->next)
		;
	*pp = w;
	t->nwait++;
	return 1;
}

/* Remove the waiters of e matching fn, answering status; how many. */
static int drop_waiters(pfs_lktab *t, ent *e, int (*match)(const waiter *, const void *),
			const void *arg, int status)
{
	int n = 0;

	for (waiter **pp = &e->wait; *pp;) {
		waiter *w = *pp;

		if (!match(w, arg)) {
			pp = &w->next;
			continue;
		}
		*pp = w->next;
		t->nwait--;
		t->grant(t->arg, w->cookie, status);
		free(w);
		n++;
	}
	return n;
}

struct who {
	uint64_t client, owner;
	int any_owner;
};

static int match_who(const waiter *w, const void *arg)
{
	const struct who *k = arg;

	return w->l.client == k->client && (k->any_owner || w->l.owner == k->owner);
}

static int match_deadline(const waiter *w, const void *arg)
{
	return w->deadline && w->deadline <= *(const uint64_t *)arg;
}

int pfs_lktab_cancel(pfs_lktab *t, uint64_t ino, uint64_t client, uint64_t owner)
{
	struct who k = { client, owner, 0 };
	ent *e = ent_find(t, ino, 0);
	int n;

	if (!e)
		return 0;
	n = drop_waiters(t, e, match_who, &k, -EINTR);
	ent_maybe_free(t, e);
	return n;
}

int pfs_lktab_expire(pfs_lktab *t, uint64_t now_ms)
{
	int n = 0;

	for (unsigned b = 0; b < NBUCKETS; b++)
		for (ent *e = t->b[b], *next; e; e = next) {
			next = e->next;
			n += drop_waiters(t, e, match_deadline, &now_ms, -EINPROGRESS);
			ent_maybe_free(t, e);
		}
	return n;
}

/* Drop the locks of (client[, owner]) with a kind in kinds from e; how many. */
static int drop_locks(pfs_lktab *t, ent *e, uint64_t client, uint64_t owner, int any_owner,
		      unsigned kinds)
{
	int n = 0;

	for (lk **pp = &e->locks; *pp;) {
		lk *p = *pp;

		if (p->l.client != client || (!any_owner && p->l.owner != owner) ||
		    !(kinds & (1u << p->l.kind))) {
			pp = &p->next;
			continue;
		}
		*pp = p->next;
		free(p);
		t->nlocks--;
		n++;
	}
	return n;
}

int pfs_lktab_release_owner(pfs_lktab *t, uint64_t ino, uint64_t client, uint64_t owner,
			   unsigned kinds)
{
	ent *e = ent_find(t, ino, 0);
	int n;

	if (!e)
		return 0;
	n = drop_locks(t, e, client, owner, 0, kinds);
	if (n)
		retry_waiters(t, e);
	ent_maybe_free(t, e);
	return n;
}

int pfs_lktab_release_client(pfs_lktab *t, uint64_t client)
{
	struct who k = { client, 0, 1 };
	int n = 0;

	for (unsigned b = 0; b < NBUCKETS; b++)
		for (ent *e = t->b[b], *next; e; e = next) {
			int m;

			next = e->next;
			drop_waiters(t, e, match_who, &k, -ENOLCK);
			m = drop_locks(t, e, client, 0, 1, ~0u);
			if (m)
				retry_waiters(t, e);
			n += m;
			ent_maybe_free(t, e);
		}
	return n;
}

int pfs_lktab_client_busy(pfs_lktab *t, uint64_t client)
{
	for (unsigned b = 0; b < NBUCKETS; b++)
		for (const ent *e = t->b[b]; e; e = e->next) {
			for (const lk *p = e->locks; p; p = p->next)
				if (p->l.client == client)
					return 1;
			for (const waiter *w = e->wait; w; w = w->next)
				if (w->l.client == client)
					return 1;
		}
	return 0;
}

int pfs_lktab_holds(pfs_lktab *t, uint64_t ino, const pfs_lock *req)
{
	const ent *e = ent_find(t, ino, 0);

	/* own locks of one type never overlap and touching ones are merged:
	 * a range held with that type is inside a single lock */
	for (const lk *p = e ? e->locks : NULL; p; p = p->next)
		if (same_owner(&p->l, req) && p->l.type == req->type &&
		    p->l.start <= req->start && p->l.end >= req->end)
			return 1;
	return 0;
}

unsigned pfs_lktab_count(pfs_lktab *t)
{
	return t->nlocks;
}

unsigned pfs_lktab_waiters(pfs_lktab *t)
{
	return t->nwait;
}

void pfs_lktab_free(pfs_lktab *t)
{
	if (!t)
		return;
	for (unsigned b = 0; b < NBUCKETS; b++)
		while (t->b[b]) {
			ent *e = t->b[b];

			t->b[b] = e->next;
			while (e->wait) {
				waiter *w = e->wait;

				e->wait = w->next;
				t->grant(t->arg, w->cookie, -ENOLCK);
				free(w);
			}
			while (e->locks) {
				lk *p = e->locks;

				e->locks = p->next;
				free(p);
			}
			free(e);
		}
	free(t);
}
