/* locksvc.c — the MDS lock service (see locksvc.h): wire decoding of the
 * LOCK_* opcodes, deferred replies of waiting LOCK_WAITs, client leases and
 * the reaper thread, and the recovery window after a restart (the lock
 * holders in MDS_KV_LOCKS, LOCK_RECLAIM).  One mutex guards the lock table,
 * the lease table and the recovery state; replies sent under it only queue
 * bytes (pfs_sconn_reply never waits for the peer); the MDS_KV_LOCKS writes
 * under it happen once per lease (a mount's first lock, its last release). */
#include "mds/locksvc.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/lktab.h"
#include "mds/ns.h"

#include <sodium.h>

#define LEASE_BUCKETS 256

/* A client with locks or waiters, and when it last spoke. */
typedef struct lease {
	uint64_t client;
	uint64_t last_ms;
	struct lease *next;
} lease;

/* A LOCK_WAIT being held: where and what to answer. */
typedef struct pending {
	pfs_sconn *conn;
	pfs_hdr h;
	uint32_t lease_ms;
} pending;

struct mds_locksvc {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int stop;
	pthread_t reaper;
	pfs_lktab *tab;
	uint64_t lease_ms;
	lease *leases[LEASE_BUCKETS];
	unsigned nleases;
	/* recovery (see locksvc.h) */
	mds_ns *ns;
	uint64_t instance;         /* random, per start */
	uint64_t (*clock_ms)(void *arg);
	void *clock_arg;
	uint64_t recover_until;    /* clock_ms; 0 = not recovering */
	uint64_t *known;           /* the previous instance's lock holders */
	uint8_t *done;             /* known[i] sent its last reclaim batch */
	unsigned nknown, ndone;
	unsigned reclaimed, refused; /* locks, for the closing log line */
};

static uint64_t now_ms(mds_locksvc *s)
{
	return s->clock_ms ? s->clock_ms(s->clock_arg) : pfs_clock_ms();
}

/* Remember (put) or forget client as a lock holder in MDS_KV_LOCKS.
 * Failures are logged: at worst a restart opens no window for it, or one
 * that waits for a mount that will not come. */
static void holder_mark(mds_locksvc *s, uint64_t client, int put)
{
	uint8_t k[8];
	mds_kv_txn *t;
	int rc;

	if (!s->ns)
		return;
	for (int i = 0; i < 8; i++)
		k[i] = (uint8_t)(client >> (56 - 8 * i));
	rc = mds_ns_kv_begin(s->ns, 1, &t);
	if (rc == 0) {
		rc = put ? mds_ns_kv_put(t, MDS_KV_LOCKS, k, 8, "", 0)
			 : mds_ns_kv_del(t, MDS_KV_LOCKS, k, 8);
		if (rc == 0 || rc == -ENOENT)
			rc = mds_ns_kv_commit(t);
		else
			mds_ns_kv_abort(t);
	}
	if (rc)
		pfs_log(PFS_LOG_WARNING, "locks: %s lock holder %016llx: %s",
			put ? "recording" : "forgetting", (unsigned long long)client,
			pfs_strerror(rc));
}

/* The previous instance's lock holders into s->known.  0 or -errno. */
static int holders_load(mds_locksvc *s)
{
	const void *k = NULL, *v;
	size_t kl = 0, vl, n = 0;
	mds_kv_txn *t;
	int rc;

	if (!s->ns)
		return 0;
	rc = mds_ns_kv_begin(s->ns, 0, &t);
	if (rc)
		return rc;
	rc = mds_ns_kv_count(t, MDS_KV_LOCKS, &n);
	if (rc || n == 0) {
		mds_ns_kv_abort(t);
		return rc;
	}
	s->known = calloc(n, sizeof(*s->known));
	s->done = calloc(n, 1);
	if (!s->known || !s->done) {
		mds_ns_kv_abort(t);
		return -ENOMEM;
	}
	while (s->nknown < n && (rc = mds_ns_kv_next(t, MDS_KV_LOCKS, k, kl, &k, &kl, &v,
						     &vl)) == 0) {
		uint64_t c = 0;

		if (kl != 8)
			continue;
		for (int i = 0; i < 8; i++)
			c = c << 8 | ((const uint8_t *)k)[i];
		s->known[s->nknown++] = c;
	}
	mds_ns_kv_abort(t);
	return rc == -ENOENT ? 0 : rc;
}

static lease *lease_find(mds_locksvc *s, uint64_t client);

/* Under mu: close the window (why: for the log). */
static void recovery_end(mds_locksvc *s, const char *why)
{
	unsigned came = 0;

	for (unsigned i = 0; i < s->nknown; i++) {
		came += s->done[i];
		/* a holder that did not come back holds nothing now */
		if (!s->done[i] && !lease_find(s, s->known[i]))
			holder_mark(s, s->known[i], 0);
	}
	pfs_log(PFS_LOG_NOTICE, "locks: recovery over (%s): %u of %u mount(s) reclaimed, "
		"%u lock(s) reclaimed, %u refused; unreclaimed locks are gone", why, came,
		s->nknown, s->reclaimed, s->refused);
	free(s->known);
	free(s->done);
	s->known = NULL;
	s->done = NULL;
	s->nknown = s->ndone = 0;
	s->recover_until = 0;
}

/* Under mu: 1 while the window is open; closes it when it is over. */
static int recovering(mds_locksvc *s)
{
	uint64_t now;

	if (!s->recover_until)
		return 0;
	now = now_ms(s);
	if (now < s->recover_until && s->ndone < s->nknown)
		return 1;
	recovery_end(s, now >= s->recover_until ? "window over" : "every mount reclaimed");
	return 0;
}

int mds_locksvc_recovering(mds_locksvc *s)
{
	int r;

	pthread_mutex_lock(&s->mu);
	r = recovering(s);
	pthread_mutex_unlock(&s->mu);
	return r;
}

static unsigned lease_bucket(uint64_t client)
{
	return (unsigned)((client * 0x9e3779b97f4a7c15ull) >> 56) % LEASE_BUCKETS;
}

static lease *lease_find(mds_locksvc *s, uint64_t client)
{
	for (lease *l = s->leases[lease_bucket(client)]; l; l = l->next)
		if (l->client == client)
			return l;
	return NULL;
}

/* Start or renew client's lease (under mu); -ENOMEM. */
static int lease_touch(mds_locksvc *s, uint64_t client)
{
	lease *l = lease_find(s, client);
	unsigned b;

	if (!l) {
		l = calloc(1, sizeof(*l));
		if (!l)
			return -ENOMEM;
		b = lease_bucket(client);
		l->client = client;
		l->next = s->leases[b];
		s->leases[b] = l;
		__atomic_add_fetch(&s->nleases, 1, __ATOMIC_RELAXED);
		holder_mark(s, client, 1);
	}
	l->last_ms = pfs_clock_ms();
	return 0;
}

/* A grant's reply: u32 lease_ms, u64 instance (how a mount notices that
 * the MDS restarted). */
static void put_grant(pfs_wbuf *w, const mds_locksvc *s)
{
	pfs_wbuf_u32(w, (uint32_t)s->lease_ms);
	pfs_wbuf_u64(w, s->instance);
}

/* The table's grant callback: answer the held LOCK_WAIT. */
static int grant(void *arg, void *cookie, int status)
{
	pending *p = cookie;
	pfs_wbuf w;
	int rc;

	pfs_wbuf_init(&w);
	if (status == 0)
		put_grant(&w, arg);
	rc = pfs_wbuf_error(&w);
	if (!rc)
		rc = pfs_sconn_reply(p->conn, &p->h, status, w.data, status ? 0 : w.len, NULL, 0);
	pfs_wbuf_free(&w);
	pfs_sconn_put(p->conn);
	free(p);
	return rc;
}

static void *reaper(void *arg)
{
	mds_locksvc *s = arg;
	uint64_t period = s->lease_ms / 4 ? s->lease_ms / 4 : 1;

	if (period > 1000)
		period = 1000;
	pthread_mutex_lock(&s->mu);
	while (!s->stop) {
		struct timespec ts = pfs_clock_deadline(CLOCK_REALTIME, period);
		uint64_t now;

		pthread_cond_timedwait(&s->cv, &s->mu, &ts);
		if (s->stop)
			break;
		(void)recovering(s);
		now = pfs_clock_ms();
		pfs_lktab_expire(s->tab, now);
		for (unsigned b = 0; b < LEASE_BUCKETS; b++)
			for (lease **pp = &s->leases[b]; *pp;) {
				lease *l = *pp;
				int busy = pfs_lktab_client_busy(s->tab, l->client);

				if (busy && now - l->last_ms < s->lease_ms) {
					pp = &l->next;
					continue;
				}
				if (busy) {
					int n = pfs_lktab_release_client(s->tab, l->client);

					pfs_log(PFS_LOG_NOTICE, "locks: client %016llx silent for %llu ms:"
						" lease expired, %d lock(s) released",
						(unsigned long long)l->client,
						(unsigned long long)(now - l->last_ms), n);
				}
				*pp = l->next;
				holder_mark(s, l->client, 0);
				free(l);
				__atomic_sub_fetch(&s->nleases, 1, __ATOMIC_RELAXED);
			}
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

int mds_locksvc_start(unsigned lease_s, mds_locksvc **out)
{
	mds_locksvc_opts o = { .lease_s = lease_s };

	return mds_locksvc_start_opts(&o, out);
}

int mds_locksvc_start_opts(const mds_locksvc_opts *o, mds_locksvc **out)
{
	mds_locksvc *s = calloc(1, sizeof(*s));
	int rc;

	if (!s)
		return -ENOMEM;
	s->lease_ms = (uint64_t)(o->lease_s ? o->lease_s : MDS_LOCK_LEASE_S_DEFAULT) * 1000;
	s->ns = o->ns;
	s->clock_ms = o->clock_ms;
	s->clock_arg = o->clock_arg;
	do
		randombytes_buf(&s->instance, sizeof(s->instance));
	while (!s->instance);
	rc = holders_load(s);
	if (rc) {
		free(s->known);
		free(s->done);
		free(s);
		return rc;
	}
	if (s->nknown) {
		s->recover_until = now_ms(s) + s->lease_ms;
		pfs_log(PFS_LOG_NOTICE, "locks: %u mount(s) held locks before the restart: "
			"recovery window of %llu ms for them to reclaim", s->nknown,
			(unsigned long long)s->lease_ms);
	}
	s->tab = pfs_lktab_new(grant, s);
	if (!s->tab) {
		free(s->known);
		free(s->done);
		free(s);
		return -ENOMEM;
	}
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	rc = pthread_create(&s->reaper, NULL, reaper, s);
	if (rc) {
		pthread_cond_destroy(&s->cv);
		pthread_mutex_destroy(&s->mu);
		pfs_lktab_free(s->tab);
		free(s->known);
		free(s->done);
		free(s);
		return -rc;
	}
	*out = s;
	return 0;
}

void mds_locksvc_stop(mds_locksvc *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->mu);
	s->stop = 1;
	pthread_cond_signal(&s->cv);
	pthread_mutex_unlock(&s->mu);
	pthread_join(s->reaper, NULL);
	pfs_lktab_free(s->tab);
	for (unsigned b = 0; b < LEASE_BUCKETS; b++)
		while (s->leases[b]) {
			lease *l = s->leases[b];

			s->leases[b] = l->next;
			free(l);
		}
	free(s->known);
	free(s->done);
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

void mds_locksvc_seen(mds_locksvc *s, uint64_t client)
{
	lease *l;

	/* the common case, no client holds a lock: no mutex on the hot path */
	if (!s || !__atomic_load_n(&s->nleases, __ATOMIC_RELAXED))
		return;
	pthread_mutex_lock(&s->mu);
	l = lease_find(s, client);
	if (l)
		l->last_ms = pfs_clock_ms();
	pthread_mutex_unlock(&s->mu);
}

static void get_lock(pfs_rbuf *b, const pfs_hdr *h, pfs_lock *l)
{
	memset(l, 0, sizeof(*l));
	l->client = h->client_id;
	l->kind = pfs_rbuf_u8(b);
	l->type = pfs_rbuf_u8(b);
	l->start = pfs_rbuf_u64(b);
	l->end = pfs_rbuf_u64(b);
	l->owner = pfs_rbuf_u64(b);
	l->pid = pfs_rbuf_u32(b);
}

static void put_lock(pfs_wbuf *w, const pfs_lock *l)
{
	pfs_wbuf_u8(w, l->kind);
	pfs_wbuf_u8(w, l->type);
	pfs_wbuf_u64(w, l->start);
	pfs_wbuf_u64(w, l->end);
	pfs_wbuf_u64(w, l->owner);
	pfs_wbuf_u32(w, l->pid);
}

static int do_wait(mds_locksvc *s, pfs_sconn *conn, const pfs_hdr *h, uint64_t ino,
		   const pfs_lock *l, uint32_t wait_ms, pfs_wbuf *out)
{
	pending *p = NULL;
	int rc;

	if (wait_ms > PFS_LK_WAIT_MAX_MS)
		wait_ms = PFS_LK_WAIT_MAX_MS;
	if (conn && wait_ms) {
		p = calloc(1, sizeof(*p));
		if (!p)
			return -ENOMEM;
		p->conn = conn;
		p->h = *h;
		p->lease_ms = (uint32_t)s->lease_ms;
	}
	pthread_mutex_lock(&s->mu);
	rc = lease_touch(s, h->client_id);
	if (!rc) {
		if (p)
			pfs_sconn_get(conn);
		rc = p ? pfs_lktab_wait(s->tab, ino, l, p, pfs_clock_ms() + wait_ms)
		       : pfs_lktab_set(s->tab, ino, l);
		if (!p && rc == -EAGAIN)
			rc = -EINPROGRESS;
		if (p && rc != 1)
			pfs_sconn_put(conn);
	}
	pthread_mutex_unlock(&s->mu);
	if (rc == 1)
		return MDS_LOCKSVC_LATER;
	free(p);
	if (!rc)
		put_grant(out, s);
	return rc;
}

/* LOCK_RECLAIM (see locksvc.h). */
static int do_reclaim(mds_locksvc *s, const pfs_hdr *h, pfs_rbuf *b, pfs_wbuf *out)
{
	uint8_t flags = pfs_rbuf_u8(b);
	uint32_t n = pfs_rbuf_u32(b);
	uint64_t *ino = NULL, left = 0;
	pfs_lock *l = NULL;
	int32_t *st = NULL;
	int rc = 0, rec;

	if (pfs_rbuf_error(b))
		return -EBADMSG;
	if (n > MDS_LOCKSVC_RECLAIM_MAX)
		return -EINVAL;
	if (n) {
		ino = calloc(n, sizeof(*ino));
		l = calloc(n, sizeof(*l));
		st = calloc(n, sizeof(*st));
		if (!ino || !l || !st) {
			rc = -ENOMEM;
			goto out;
		}
	}
	for (uint32_t i = 0; i < n; i++) {
		ino[i] = pfs_rbuf_u64(b);
		get_lock(b, h, &l[i]);
		if (!pfs_rbuf_error(b) && (pfs_lktab_check(&l[i]) || l[i].type == PFS_LK_UNLOCK))
			rc = -EINVAL;
	}
	if (rc || (rc = pfs_rbuf_done(b)))
		goto out;
	pthread_mutex_lock(&s->mu);
	rec = recovering(s);
	if (n)
		rc = lease_touch(s, h->client_id);
	for (uint32_t i = 0; i < n && !rc; i++) {
		if (!rec) {
			/* after the window: only what the mount still holds */
			st[i] = pfs_lktab_holds(s->tab, ino[i], &l[i]) ? 0 : -ENOLCK;
		} else {
			st[i] = pfs_lktab_set(s->tab, ino[i], &l[i]);
			if (st[i] == -EAGAIN)
				st[i] = -ENOLCK;
		}
		if (st[i]) {
			s->refused += rec;
			pfs_log(PFS_LOG_WARNING, "locks: reclaim by %016llx of a %s lock on ino "
				"%llu [%llu, %llu] refused: %s", (unsigned long long)h->client_id,
				l[i].type == PFS_LK_WRITE ? "write" : "read",
				(unsigned long long)ino[i], (unsigned long long)l[i].start,
				(unsigned long long)l[i].end,
				rec ? "another mount reclaimed a conflicting one" :
				      "the recovery window is over");
		} else {
			s->reclaimed += rec;
		}
	}
	if (!rc && rec && (flags & PFS_LK_RECLAIM_LAST))
		for (unsigned i = 0; i < s->nknown; i++)
			if (s->known[i] == h->client_id && !s->done[i]) {
				s->done[i] = 1;
				s->ndone++;
			}
	if (!rc && recovering(s))
		left = s->recover_until - now_ms(s);
	pthread_mutex_unlock(&s->mu);
	if (rc)
		goto out;
	pfs_wbuf_u64(out, s->instance);
	pfs_wbuf_u32(out, (uint32_t)s->lease_ms);
	pfs_wbuf_u32(out, (uint32_t)left);
	pfs_wbuf_u32(out, n);
	for (uint32_t i = 0; i < n; i++)
		pfs_wbuf_u32(out, (uint32_t)st[i]);
out:
	free(ino);
	free(l);
	free(st);
	return rc;
}

/* Under mu, in the window: what a request that takes a lock gets.  A
 * reclaimed lock in the way answers as it would (LOCK_SET -EAGAIN, LOCK_GET
 * 1 with *c); anything else must wait for the window's end. */
static int gate(mds_locksvc *s, uint16_t op, uint64_t ino, const pfs_lock *l, pfs_lock *c)
{
	if (pfs_lktab_test(s->tab, ino, l, c) == 1 && op != PFS_OP_MDS_LOCK_WAIT)
		return op == PFS_OP_MDS_LOCK_SET ? -EAGAIN : 1;
	return -PFS_LK_ERECOVER;
}

int mds_locksvc_handle(mds_locksvc *s, pfs_sconn *conn, const pfs_hdr *h, pfs_rbuf *b,
		       pfs_wbuf *out)
{
	uint64_t ino, owner;
	uint32_t x;
	pfs_lock l, c;
	int rc;

	if (!s)
		return -EOPNOTSUPP;
	if (h->opcode == PFS_OP_MDS_LOCK_RECLAIM)
		return do_reclaim(s, h, b, out);
	ino = pfs_rbuf_u64(b);
	switch (h->opcode) {
	case PFS_OP_MDS_LOCK_GET:
	case PFS_OP_MDS_LOCK_SET:
	case PFS_OP_MDS_LOCK_WAIT:
		get_lock(b, h, &l);
		x = h->opcode == PFS_OP_MDS_LOCK_WAIT ? pfs_rbuf_u32(b) : 0;
		if ((rc = pfs_rbuf_done(b)) || (rc = pfs_lktab_check(&l)))
			return rc;
		pthread_mutex_lock(&s->mu);
		rc = l.type != PFS_LK_UNLOCK && recovering(s) ? gate(s, h->opcode, ino, &l, &c) : 0;
		pthread_mutex_unlock(&s->mu);
		if (rc < 0)
			return rc;
		if (rc == 1) {
			pfs_wbuf_u8(out, 1);
			put_lock(out, &c);
			return 0;
		}
		if (h->opcode == PFS_OP_MDS_LOCK_WAIT)
			return do_wait(s, conn, h, ino, &l, x, out);
		pthread_mutex_lock(&s->mu);
		if (h->opcode == PFS_OP_MDS_LOCK_GET) {
			rc = pfs_lktab_test(s->tab, ino, &l, &c);
		} else {
			rc = lease_touch(s, h->client_id);
			if (!rc)
				rc = pfs_lktab_set(s->tab, ino, &l);
		}
		pthread_mutex_unlock(&s->mu);
		if (rc < 0)
			return rc;
		if (h->opcode == PFS_OP_MDS_LOCK_SET) {
			put_grant(out, s);
			return 0;
		}
		pfs_wbuf_u8(out, (uint8_t)rc);
		if (!rc) {
			c = l;
			c.type = PFS_LK_UNLOCK;
		}
		put_lock(out, &c);
		return 0;
	case PFS_OP_MDS_LOCK_CANCEL:
		owner = pfs_rbuf_u64(b);
		if ((rc = pfs_rbuf_done(b)))
			return rc;
		pthread_mutex_lock(&s->mu);
		rc = pfs_lktab_cancel(s->tab, ino, h->client_id, owner);
		pthread_mutex_unlock(&s->mu);
		pfs_wbuf_u32(out, (uint32_t)rc);
		return 0;
	case PFS_OP_MDS_LOCK_RELEASE:
		owner = pfs_rbuf_u64(b);
		x = pfs_rbuf_u32(b);
		if ((rc = pfs_rbuf_done(b)))
			return rc;
		pthread_mutex_lock(&s->mu);
		pfs_lktab_release_owner(s->tab, ino, h->client_id, owner, x);
		pthread_mutex_unlock(&s->mu);
		return 0;
	}
	return -EOPNOTSUPP;
}

void mds_locksvc_counts(mds_locksvc *s, unsigned *locks, unsigned *waiters, unsigned *clients)
{
	pthread_mutex_lock(&s->mu);
	*locks = pfs_lktab_count(s->tab);
	*waiters = pfs_lktab_waiters(s->tab);
	*clients = __atomic_load_n(&s->nleases, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&s->mu);
}
