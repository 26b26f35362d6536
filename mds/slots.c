/* slots.c — slots counted per client (see slots.h): a hash table keyed
 * by inode number, an age list for expiry (slots are put in time order
 * and all have the same life, so the oldest is at the head), and a small
 * list of per-client counts for the cap. */
#include "mds/slots.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#define SBITS 12
#define SBUCKETS (1u << SBITS)

typedef struct slot {
	uint64_t ino, client, dir, expiry;
	struct slot *hnext;           /* bucket chain */
	struct slot *older, *newer;   /* age list */
} slot;

typedef struct owner {
	uint64_t client;
	unsigned n;
	struct owner *next;
} owner;

struct mds_slots {
	pthread_mutex_t mu;
	unsigned per_client;
	uint64_t ttl_ms;
	unsigned n;
	slot *b[SBUCKETS];
	slot *oldest, *newest;
	owner *owners;
};

static unsigned hash_ino(uint64_t x)
{
	return (unsigned)((x * 0x9E3779B97F4A7C15ull) >> (64 - SBITS));
}

mds_slots *mds_slots_new(unsigned per_client, uint64_t ttl_ms)
{
	mds_slots *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	pthread_mutex_init(&t->mu, NULL);
	t->per_client = per_client ? per_client : MDS_SLOTS_PER_CLIENT;
	t->ttl_ms = ttl_ms ? ttl_ms : (uint64_t)PFS_CREATE_SLOT_TTL_S * 1000;
	return t;
}

static owner **owner_slot(mds_slots *t, uint64_t client)
{
	owner **pp = &t->owners;

	while (*pp && (*pp)->client != client)
		pp = &(*pp)->next;
	return pp;
}

/* s out of the table and freed (mu held). */
static void slot_drop(mds_slots *t, slot *s)
{
	slot **pp = &t->b[hash_ino(s->ino)];
	owner **op = owner_slot(t, s->client);

	while (*pp != s)
		pp = &(*pp)->hnext;
	*pp = s->hnext;
	if (s->older)
		s->older->newer = s->newer;
	else
		t->oldest = s->newer;
	if (s->newer)
		s->newer->older = s->older;
	else
		t->newest = s->older;
	if (*op && --(*op)->n == 0) {
		owner *o = *op;

		*op = o->next;
		free(o);
	}
	t->n--;
	free(s);
}

static unsigned expire_locked(mds_slots *t, uint64_t now_ms)
{
	unsigned n = 0;

	while (t->oldest && t->oldest->expiry <= now_ms) {
		slot_drop(t, t->oldest);
		n++;
	}
	return n;
}

void mds_slots_free(mds_slots *t)
{
	if (!t)
		return;
	while (t->oldest)
		slot_drop(t, t->oldest);
	pthread_mutex_destroy(&t->mu);
	free(t);
}

unsigned mds_slots_room(mds_slots *t, uint64_t client, uint64_t now_ms)
{
	unsigned held, room;
	owner *o;

	pthread_mutex_lock(&t->mu);
	expire_locked(t, now_ms);
	o = *owner_slot(t, client);
	held = o ? o->n : 0;
	room = held < t->per_client ? t->per_client - held : 0;
	pthread_mutex_unlock(&t->mu);
	return room;
}

int mds_slots_put(mds_slots *t, uint64_t client, uint64_t dir, uint64_t ino,
		  uint64_t now_ms)
{
	unsigned b = hash_ino(ino);
	owner **op, *o;
	slot *s;
	int rc = 0;

	if (!ino)
		return -EINVAL;
	pthread_mutex_lock(&t->mu);
	expire_locked(t, now_ms);
	op = owner_slot(t, client);
	if (*op && (*op)->n >= t->per_client) {
		rc = -EAGAIN;
		goto out;
	}
	for (s = t->b[b]; s; s = s->hnext)
		if (s->ino == ino) {
			rc = -EEXIST;
			goto out;
		}
	s = malloc(sizeof(*s));
	o = *op ? *op : calloc(1, sizeof(*o));
	if (!s || !o) {
		free(s);
		if (o && !*op)
			free(o);
		rc = -ENOMEM;
		goto out;
	}
	if (!*op) {
		o->client = client;
		o->next = t->owners;
		t->owners = o;
	}
	o->n++;
	s->ino = ino;
	s->client = client;
	s->dir = dir;
	s->expiry = now_ms + t->ttl_ms;
	s->hnext = t->b[b];
	t->b[b] = s;
	/* same life for all, put in time order: the list stays sorted
	 * unless the clock steps back, which only delays an expiry */
	s->older = t->newest;
	s->newer = NULL;
	if (t->newest)
		t->newest->newer = s;
	else
		t->oldest = s;
	t->newest = s;
	t->n++;
out:
	pthread_mutex_unlock(&t->mu);
	return rc;
}

int mds_slots_take(mds_slots *t, uint64_t client, uint64_t dir, uint64_t ino,
		   uint64_t now_ms)
{
	slot *s;
	int rc = -ESTALE;

	pthread_mutex_lock(&t->mu);
	expire_locked(t, now_ms);
	for (s = t->b[hash_ino(ino)]; s; s = s->hnext)
		if (s->ino == ino)
			break;
	/* expiry: the age list may be out of order by a clock step */
	if (s && s->client == client && s->dir == dir && s->expiry > now_ms) {
		slot_drop(t, s);
		rc = 0;
	}
	pthread_mutex_unlock(&t->mu);
	return rc;
}

unsigned mds_slots_expire(mds_slots *t, uint64_t now_ms)
{
	unsigned n;

	pthread_mutex_lock(&t->mu);
	n = expire_locked(t, now_ms);
	pthread_mutex_unlock(&t->mu);
	return n;
}

unsigned mds_slots_count(mds_slots *t)
{
	unsigned n;

	pthread_mutex_lock(&t->mu);
	n = t->n;
	pthread_mutex_unlock(&t->mu);
	return n;
}
