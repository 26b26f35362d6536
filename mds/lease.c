/* lease.c — the MDS lease table and notify channels (see lease.h).
 *
 * Leases live in one hash table keyed by inode (each entry names its
 * client), so a change finds every holder of an inode in one bucket; each
 * entry is also on a global age list and on its client's age list (oldest
 * first: eviction and expiry take from the heads).  A client's channel
 * holds its queue of invalidation records, the batch sent and not yet
 * acknowledged (the queue's first sent_n records) and its held
 * NOTIFY_WAIT. */
#include "mds/lease.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/msg.h"

#define HBITS 16
#define NBUCKETS (1u << HBITS)
#define SEQBITS 12
#define NSEQ (1u << SEQBITS)
#define CBUCKETS 256
#define BATCH_MAX 1024        /* records per answer (names up to 255 bytes) */
#define TICK_MS 100

#define K_ATTR 1u
#define K_NAMES 2u

typedef struct lclient lclient;

typedef struct lent {
	uint64_t client, ino, expiry;
	unsigned kinds;
	lclient *cl;
	struct lent *hnext, **hpprev;   /* bucket */
	struct lent *gprev, *gnext;     /* global age list */
	struct lent *cprev, *cnext;     /* client's age list */
} lent;

typedef struct rec {
	struct rec *next;
	uint8_t kind;
	uint64_t ino;
	uint16_t nlen;
	char name[];
} rec;

struct lclient {
	uint64_t id;
	uint64_t reg_until;
	lent *chead, *ctail;
	unsigned nleases;
	rec *qhead, *qtail;
	unsigned nq;
	unsigned sent_n;       /* the first sent_n records were sent as batch sent_seq */
	uint64_t sent_seq, seq;
	int lost;              /* records dropped since the last acknowledged RESET */
	uint64_t lost_seq;     /* the batch that carried RESET (0: none yet) */
	uint32_t wait_ms;      /* of its last NOTIFY_WAIT */
	pfs_sconn *held;
	pfs_hdr hh;
	uint64_t held_until;
	lclient *next;
};

struct mds_lease {
	mds_lease_opts o;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t ticker;
	int have_thread, stop;
	uint64_t boot_id;
	uint64_t start_ms;
	unsigned nclients;         /* atomic reads on the grant fast path */
	int grace;                 /* in the start grace (atomic; the ticker ends it) */
	uint64_t gseq;             /* change sequence */
	uint64_t bseq[NSEQ];       /* last change per inode hash */
	lent *b[NBUCKETS];
	lent *ghead, *gtail;
	unsigned nleases;
	lclient *c[CBUCKETS];
	mds_lease_stats st;
};

static uint64_t now_ms(mds_lease *t)
{
	return t->o.clock ? t->o.clock(t->o.arg) : pfs_clock_ms();
}

static int do_reply(mds_lease *t, pfs_sconn *c, const pfs_hdr *h, int status, const void *p,
		    size_t n)
{
	if (t->o.reply)
		return t->o.reply(t->o.arg, c, h, status, p, n);
	return pfs_sconn_reply(c, h, status, p, n, NULL, 0);
}

static void do_ref(mds_lease *t, pfs_sconn *c, int get)
{
	if (t->o.ref)
		t->o.ref(t->o.arg, c, get);
	else if (get)
		pfs_sconn_get(c);
	else
		pfs_sconn_put(c);
}

static unsigned hash64(uint64_t x, unsigned bits)
{
	return (unsigned)((x * 0x9E3779B97F4A7C15ull) >> (64 - bits));
}

/* ---- clients ---- */

static lclient *client_find(mds_lease *t, uint64_t id)
{
	for (lclient *c = t->c[hash64(id, 8)]; c; c = c->next)
		if (c->id == id)
			return c;
	return NULL;
}

static lclient *client_new(mds_lease *t, uint64_t id)
{
	lclient *c;
	unsigned b = hash64(id, 8);

	if (t->nclients >= t->o.max_clients || !(c = calloc(1, sizeof(*c))))
		return NULL;
	c->id = id;
	c->next = t->c[b];
	t->c[b] = c;
	__atomic_add_fetch(&t->nclients, 1, __ATOMIC_RELAXED);
	return c;
}

/* Registered: leases are recorded for it.  In the start grace, any
 * client is (and gets a channel record on its first grant). */
static lclient *client_registered(mds_lease *t, uint64_t id, uint64_t now)
{
	lclient *c = client_find(t, id);

	if (c)
		return c->held || now < c->reg_until ? c : NULL;
	if (now - t->start_ms >= MDS_LEASE_REG_GRACE_MS + PFS_NOTIFY_WAIT_MAX_MS)
		return NULL;
	c = client_new(t, id);
	if (c)
		c->reg_until = t->start_ms + MDS_LEASE_REG_GRACE_MS + PFS_NOTIFY_WAIT_MAX_MS;
	return c;
}

/* Anyone to record leases for: a registered client, or the start grace
 * (clients whose resent NOTIFY_WAIT has not arrived yet).  One or two
 * atomic reads: with no channel and past the grace, grants and change
 * hooks cost nothing more. */
static int anyone(mds_lease *t)
{
	return __atomic_load_n(&t->nclients, __ATOMIC_RELAXED) != 0 ||
	       __atomic_load_n(&t->grace, __ATOMIC_RELAXED) != 0;
}

/* End the start grace once it is over (under mu). */
static void grace_check(mds_lease *t, uint64_t now)
{
	if (__atomic_load_n(&t->grace, __ATOMIC_RELAXED) &&
	    now - t->start_ms >= MDS_LEASE_REG_GRACE_MS + PFS_NOTIFY_WAIT_MAX_MS)
		__atomic_store_n(&t->grace, 0, __ATOMIC_RELAXED);
}

/* ---- leases ---- */

static void lent_unlink(mds_lease *t, lent *e)
{
	lclient *c = e->cl;

	*e->hpprev = e->hnext;
	if (e->hnext)
		e->hnext->hpprev = e->hpprev;
	if (e->gprev)
		e->gprev->gnext = e->gnext;
	else
		t->ghead = e->gnext;
	if (e->gnext)
		e->gnext->gprev = e->gprev;
	else
		t->gtail = e->gprev;
	if (e->cprev)
		e->cprev->cnext = e->cnext;
	else
		c->chead = e->cnext;
	if (e->cnext)
		e->cnext->cprev = e->cprev;
	else
		c->ctail = e->cprev;
	c->nleases--;
	t->nleases--;
	free(e);
}

/* Move e to the young ends of both age lists. */
static void lent_touch(mds_lease *t, lent *e)
{
	lclient *c = e->cl;

	if (t->gtail != e) {
		if (e->gprev)
			e->gprev->gnext = e->gnext;
		else
			t->ghead = e->gnext;
		e->gnext->gprev = e->gprev;
		e->gprev = t->gtail;
		e->gnext = NULL;
		t->gtail->gnext = e;
		t->gtail = e;
	}
	if (c->ctail != e) {
		if (e->cprev)
			e->cprev->cnext = e->cnext;
		else
			c->chead = e->cnext;
		e->cnext->cprev = e->cprev;
		e->cprev = c->ctail;
		e->cnext = NULL;
		c->ctail->cnext = e;
		c->ctail = e;
	}
}

static int answer(mds_lease *t, lclient *c, pfs_sconn *conn, const pfs_hdr *h, pfs_wbuf *out,
		  uint64_t now);

/* Queue a record for c (under mu); answer its held wait.  0, or the
 * error of that answer (-EPIPE: the wait's connection is closed). */
static int queue(mds_lease *t, lclient *c, uint8_t kind, uint64_t ino, const char *name,
		 uint64_t now)
{
	int rc = 0;

	size_t n = name ? strlen(name) : 0;
	rec *r;

	if (c->nq >= t->o.max_queue || n > PFS_NAME_MAX ||
	    !(r = malloc(sizeof(*r) + n + 1))) {
		c->lost = 1;
		t->st.lost++;
	} else {
		r->next = NULL;
		r->kind = kind;
		r->ino = ino;
		r->nlen = (uint16_t)n;
		memcpy(r->name, name ? name : "", n + 1);
		if (c->qtail)
			c->qtail->next = r;
		else
			c->qhead = r;
		c->qtail = r;
		c->nq++;
		t->st.revoked++;
		t->st.queued++;
	}
	if (c->held) {
		pfs_sconn *conn = c->held;

		c->held = NULL;
		rc = answer(t, c, conn, &c->hh, NULL, now);
		do_ref(t, conn, 0);
	}
	return rc;
}

/* Evict e for room: an unexpired lease is revoked, so the client drops
 * what it caches under it. */
static void evict(mds_lease *t, lent *e, uint64_t now)
{
	if (now < e->expiry) {
		t->st.evicted++;
		/* names cached below a directory: PERM drops them too */
		queue(t, e->cl, e->kinds & K_NAMES ? PFS_NOTIFY_PERM : PFS_NOTIFY_INO, e->ino,
		      NULL, now);
	}
	lent_unlink(t, e);
}

static void grant(mds_lease *t, uint64_t client, uint64_t ino, unsigned kind, const char *name,
		  uint64_t since)
{
	uint64_t now;
	lclient *c;
	lent *e;
	unsigned b = hash64(ino, HBITS);

	if (!t || !t->o.lease_ms || !anyone(t))
		return;
	pthread_mutex_lock(&t->mu);
	now = now_ms(t);
	grace_check(t, now);
	c = client_registered(t, client, now);
	if (!c)
		goto out;
	for (e = t->b[b]; e; e = e->hnext)
		if (e->ino == ino && e->client == client)
			break;
	if (e) {
		lent_touch(t, e);
	} else {
		while (c->chead && c->nleases >= t->o.max_per_client)
			evict(t, c->chead, now);
		while (t->ghead && t->nleases >= t->o.max_total)
			evict(t, t->ghead, now);
		e = calloc(1, sizeof(*e));
		if (!e) {
			/* no lease: the change it covers would go unseen */
			queue(t, c, kind == K_ATTR ? PFS_NOTIFY_INO : PFS_NOTIFY_ENTRY, ino, name,
			      now);
			goto out;
		}
		e->client = client;
		e->ino = ino;
		e->cl = c;
		e->hnext = t->b[b];
		e->hpprev = &t->b[b];
		if (e->hnext)
			e->hnext->hpprev = &e->hnext;
		t->b[b] = e;
		e->gprev = t->gtail;
		if (t->gtail)
			t->gtail->gnext = e;
		else
			t->ghead = e;
		t->gtail = e;
		e->cprev = c->ctail;
		if (c->ctail)
			c->ctail->cnext = e;
		else
			c->chead = e;
		c->ctail = e;
		c->nleases++;
		t->nleases++;
	}
	e->kinds |= kind;
	e->expiry = now + t->o.lease_ms + MDS_LEASE_SLACK_MS;
	t->st.granted++;
	/* changed since the read began: what the client got may be stale */
	if (t->bseq[hash64(ino, SEQBITS)] > since)
		queue(t, c, kind == K_ATTR ? PFS_NOTIFY_INO : PFS_NOTIFY_ENTRY, ino, name, now);
out:
	pthread_mutex_unlock(&t->mu);
}

uint64_t mds_lease_begin(mds_lease *t)
{
	return t ? __atomic_load_n(&t->gseq, __ATOMIC_ACQUIRE) : 0;
}

void mds_lease_grant(mds_lease *t, uint64_t client, uint64_t ino, uint64_t since)
{
	grant(t, client, ino, K_ATTR, NULL, since);
}

void mds_lease_grant_name(mds_lease *t, uint64_t client, uint64_t parent, const char *name,
			  uint64_t since)
{
	grant(t, client, parent, K_NAMES, name, since);
}

int mds_lease_watched(mds_lease *t, uint64_t except, uint64_t ino)
{
	int w = 0;

	if (!t || !__atomic_load_n(&t->nclients, __ATOMIC_RELAXED))
		return 0;
	pthread_mutex_lock(&t->mu);
	for (lent *e = t->b[hash64(ino, HBITS)]; e && !w; e = e->hnext)
		w = e->ino == ino && e->client != except;
	pthread_mutex_unlock(&t->mu);
	return w;
}

int mds_lease_registered(mds_lease *t, uint64_t client)
{
	lclient *c;
	int r;

	if (!t || !t->o.lease_ms)
		return 0;
	pthread_mutex_lock(&t->mu);
	c = client_find(t, client);
	/* seq 0: made by the start grace, no wait answered yet */
	r = c && c->seq && (c->held || now_ms(t) < c->reg_until);
	pthread_mutex_unlock(&t->mu);
	return r;
}

int mds_lease_recall(mds_lease *t, uint64_t client, uint64_t dir)
{
	lclient *c;
	int rc = -ENOENT;

	if (!t)
		return rc;
	pthread_mutex_lock(&t->mu);
	c = client_find(t, client);
	if (c && c->seq)
		rc = queue(t, c, PFS_NOTIFY_RECALL, dir, NULL, now_ms(t)) ? -EPIPE : 0;
	pthread_mutex_unlock(&t->mu);
	return rc;
}

int mds_lease_active(mds_lease *t)
{
	return t && t->o.lease_ms && anyone(t);
}

/* Bump the change sequence of ino (under mu). */
static void bump(mds_lease *t, uint64_t ino)
{
	uint64_t s = __atomic_add_fetch(&t->gseq, 1, __ATOMIC_ACQ_REL);

	t->bseq[hash64(ino, SEQBITS)] = s;
}

void mds_lease_changed(mds_lease *t, uint64_t by, uint64_t ino, unsigned what)
{
	uint64_t now;

	if (!t || !t->o.lease_ms)
		return;
	pthread_mutex_lock(&t->mu);
	bump(t, ino);
	now = now_ms(t);
	for (lent *e = t->b[hash64(ino, HBITS)], *nx; e; e = nx) {
		nx = e->hnext;
		if (e->ino != ino || e->client == by)
			continue;
		if (now >= e->expiry) {
			lent_unlink(t, e);
			continue;
		}
		if ((what & MDS_LEASE_PERM) && (e->kinds & (K_ATTR | K_NAMES))) {
			/* attributes and the names below: the lease goes */
			queue(t, e->cl, PFS_NOTIFY_PERM, ino, NULL, now);
			lent_unlink(t, e);
		} else if (e->kinds & K_ATTR) {
			queue(t, e->cl, PFS_NOTIFY_INO, ino, NULL, now);
			e->kinds &= ~K_ATTR;
			if (!e->kinds)
				lent_unlink(t, e);
		}
	}
	pthread_mutex_unlock(&t->mu);
}

void mds_lease_name_changed(mds_lease *t, uint64_t by, uint64_t parent, const char *name)
{
	uint64_t now;

	if (!t || !t->o.lease_ms)
		return;
	pthread_mutex_lock(&t->mu);
	bump(t, parent);
	now = now_ms(t);
	for (lent *e = t->b[hash64(parent, HBITS)], *nx; e; e = nx) {
		nx = e->hnext;
		if (e->ino != parent || e->client == by)
			continue;
		if (now >= e->expiry)
			lent_unlink(t, e);
		else if (e->kinds & K_NAMES)
			queue(t, e->cl, PFS_NOTIFY_ENTRY, parent, name, now);
	}
	pthread_mutex_unlock(&t->mu);
}

/* ---- the channel ---- */

static void drop_acked(mds_lease *t, lclient *c, uint64_t ack)
{
	if (c->sent_n && ack == c->sent_seq) {
		for (unsigned i = 0; i < c->sent_n && c->qhead; i++) {
			rec *r = c->qhead;

			c->qhead = r->next;
			free(r);
			c->nq--;
			t->st.queued--;
		}
		if (!c->qhead)
			c->qtail = NULL;
	}
	if (c->lost_seq && ack == c->lost_seq) {
		c->lost = 0;
		c->lost_seq = 0;
	}
	c->sent_n = 0; /* not acknowledged: the next batch sends them again */
}

/* Answer on conn (out NULL) or into out: the next batch of c. */
static int answer(mds_lease *t, lclient *c, pfs_sconn *conn, const pfs_hdr *h, pfs_wbuf *out,
		  uint64_t now)
{
	pfs_wbuf own;
	pfs_wbuf *w = out ? out : &own;
	unsigned n = 0;
	uint64_t until;

	if (!out)
		pfs_wbuf_init(&own);
	c->sent_seq = ++c->seq;
	if (c->lost)
		c->lost_seq = c->sent_seq;
	pfs_wbuf_u64(w, t->boot_id);
	pfs_wbuf_u32(w, t->o.lease_ms);
	pfs_wbuf_u8(w, c->lost ? PFS_NOTIFY_RESET : 0);
	pfs_wbuf_u64(w, c->sent_seq);
	for (rec *r = c->qhead; r && n < BATCH_MAX; r = r->next)
		n++;
	pfs_wbuf_u32(w, n);
	n = 0;
	for (rec *r = c->qhead; r && n < BATCH_MAX; r = r->next, n++) {
		pfs_wbuf_u8(w, r->kind);
		pfs_wbuf_u64(w, r->ino);
		pfs_wbuf_strn(w, r->name, r->nlen);
	}
	c->sent_n = n;
	until = now + c->wait_ms + MDS_LEASE_REG_GRACE_MS;
	if (until > c->reg_until)
		c->reg_until = until;
	if (!out) {
		int rc = pfs_wbuf_error(w);

		rc = do_reply(t, conn, h, rc, rc ? NULL : w->data, rc ? 0 : w->len);
		if (rc)
			pfs_log(PFS_LOG_DEBUG, "lease: notify answer to %016llx: %s",
				(unsigned long long)c->id, pfs_strerror(rc));
		pfs_wbuf_free(&own);
		return rc;
	}
	return 0;
}

static void client_free(mds_lease *t, lclient *c)
{
	lclient **pp = &t->c[hash64(c->id, 8)];

	while (*pp != c)
		pp = &(*pp)->next;
	*pp = c->next;
	while (c->chead)
		lent_unlink(t, c->chead);
	while (c->qhead) {
		rec *r = c->qhead;

		c->qhead = r->next;
		free(r);
		t->st.queued--;
	}
	if (c->held) {
		do_reply(t, c->held, &c->hh, -ECANCELED, NULL, 0);
		do_ref(t, c->held, 0);
	}
	__atomic_sub_fetch(&t->nclients, 1, __ATOMIC_RELAXED);
	free(c);
}

int mds_lease_wait(mds_lease *t, pfs_sconn *conn, const pfs_hdr *h, pfs_rbuf *b,
		   pfs_wbuf *out)
{
	uint64_t ack = pfs_rbuf_u64(b), now, until;
	uint32_t wait_ms = pfs_rbuf_u32(b);
	uint8_t flags = pfs_rbuf_u8(b);
	int rc = pfs_rbuf_done(b), fresh = 0;
	lclient *c;

	if (rc)
		return rc;
	if (!t)
		return -EOPNOTSUPP;
	if (flags & ~(uint8_t)PFS_NOTIFY_BYE)
		return -EINVAL;
	if (wait_ms > PFS_NOTIFY_WAIT_MAX_MS)
		wait_ms = PFS_NOTIFY_WAIT_MAX_MS;
	pthread_mutex_lock(&t->mu);
	now = now_ms(t);
	c = client_find(t, h->client_id);
	if (c && c->held) {
		/* superseded (a resend after a reconnection, or a confused client) */
		do_reply(t, c->held, &c->hh, -ECANCELED, NULL, 0);
		do_ref(t, c->held, 0);
		c->held = NULL;
	}
	if (flags & PFS_NOTIFY_BYE) {
		if (c)
			client_free(t, c);
		pthread_mutex_unlock(&t->mu);
		pfs_wbuf_u64(out, t->boot_id);
		pfs_wbuf_u32(out, 0);
		pfs_wbuf_u8(out, 0);
		pfs_wbuf_u64(out, 0);
		pfs_wbuf_u32(out, 0);
		return 0;
	}
	if (!t->o.lease_ms) {
		pthread_mutex_unlock(&t->mu);
		return -EOPNOTSUPP;
	}
	if (!c || c->seq == 0) {
		/* its first wait (a client the start grace made has seq 0) */
		fresh = 1;
		if (!c)
			c = client_new(t, h->client_id);
	} else if (!c->held && now >= c->reg_until) {
		/* it was forgotten meanwhile (the ticker had not run yet):
		 * whatever it cached went unwatched */
		c->lost = 1;
	}
	if (!c) {
		pthread_mutex_unlock(&t->mu);
		return -EUSERS;
	}
	drop_acked(t, c, ack);
	c->wait_ms = wait_ms;
	until = now + wait_ms + MDS_LEASE_REG_GRACE_MS;
	if (until > c->reg_until)
		c->reg_until = until;
	if (fresh || c->qhead || c->lost || !conn || !wait_ms) {
		/* a first wait is answered at once: from now on the client
		 * knows it is registered */
		answer(t, c, NULL, h, out, now);
		rc = 0;
	} else {
		do_ref(t, conn, 1);
		c->held = conn;
		c->hh = *h;
		c->held_until = now + wait_ms;
		rc = MDS_LEASE_LATER;
	}
	pthread_mutex_unlock(&t->mu);
	return rc;
}

void mds_lease_tick(mds_lease *t)
{
	uint64_t now;

	pthread_mutex_lock(&t->mu);
	now = now_ms(t);
	grace_check(t, now);
	for (unsigned i = 0; i < CBUCKETS; i++)
		for (lclient *c = t->c[i], *nx; c; c = nx) {
			nx = c->next;
			if (c->held && now >= c->held_until) {
				pfs_sconn *conn = c->held;

				c->held = NULL;
				answer(t, c, conn, &c->hh, NULL, now);
				do_ref(t, conn, 0);
			} else if (!c->held && now >= c->reg_until) {
				client_free(t, c);
			}
		}
	while (t->ghead && now >= t->ghead->expiry)
		lent_unlink(t, t->ghead);
	pthread_mutex_unlock(&t->mu);
}

static void *ticker(void *arg)
{
	mds_lease *t = arg;

	pthread_mutex_lock(&t->mu);
	while (!t->stop) {
		struct timespec ts = pfs_clock_deadline(CLOCK_REALTIME, TICK_MS);

		pthread_cond_timedwait(&t->cv, &t->mu, &ts);
		if (t->stop)
			break;
		pthread_mutex_unlock(&t->mu);
		mds_lease_tick(t);
		pthread_mutex_lock(&t->mu);
	}
	pthread_mutex_unlock(&t->mu);
	return NULL;
}

int mds_lease_create(const mds_lease_opts *o, mds_lease **out)
{
	mds_lease *t = calloc(1, sizeof(*t));
	int rc;

	if (!t)
		return -ENOMEM;
	t->o = *o;
	if (!t->o.max_per_client)
		t->o.max_per_client = 65536;
	if (!t->o.max_total)
		t->o.max_total = 262144;
	if (!t->o.max_queue)
		t->o.max_queue = 65536;
	if (!t->o.max_clients)
		t->o.max_clients = 4096;
	if (getrandom(&t->boot_id, sizeof(t->boot_id), 0) != sizeof(t->boot_id))
		t->boot_id = (uint64_t)time(NULL) ^ ((uint64_t)pfs_clock_ms() << 20);
	t->start_ms = now_ms(t);
	t->grace = t->o.lease_ms != 0;
	pthread_mutex_init(&t->mu, NULL);
	pthread_cond_init(&t->cv, NULL);
	if (!t->o.no_thread) {
		rc = pthread_create(&t->ticker, NULL, ticker, t);
		if (rc) {
			pthread_cond_destroy(&t->cv);
			pthread_mutex_destroy(&t->mu);
			free(t);
			return -rc;
		}
		t->have_thread = 1;
	}
	*out = t;
	return 0;
}

void mds_lease_destroy(mds_lease *t)
{
	if (!t)
		return;
	if (t->have_thread) {
		pthread_mutex_lock(&t->mu);
		t->stop = 1;
		pthread_cond_signal(&t->cv);
		pthread_mutex_unlock(&t->mu);
		pthread_join(t->ticker, NULL);
	}
	for (unsigned i = 0; i < CBUCKETS; i++)
		while (t->c[i])
			client_free(t, t->c[i]);
	pthread_cond_destroy(&t->cv);
	pthread_mutex_destroy(&t->mu);
	free(t);
}

void mds_lease_get_stats(mds_lease *t, mds_lease_stats *st)
{
	pthread_mutex_lock(&t->mu);
	*st = t->st;
	st->clients = t->nclients;
	st->leases = t->nleases;
	st->held = 0;
	for (unsigned i = 0; i < CBUCKETS; i++)
		for (lclient *c = t->c[i]; c; c = c->next)
			st->held += c->held != NULL;
	pthread_mutex_unlock(&t->mu);
}
