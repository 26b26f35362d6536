/* locksvc.c — the MDS lock service (see locksvc.h): wire decoding of the
 * LOCK_* opcodes, deferred replies of waiting LOCK_WAITs, client leases and
 * the reaper thread.  One mutex guards the lock table and the lease table;
 * replies sent under it only queue bytes (pfs_sconn_reply never waits for
 * the peer). */
#include "mds/locksvc.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/log.h"
#include "mds/lock.h"

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
	mds_lock_tab *tab;
	uint64_t lease_ms;
	lease *leases[LEASE_BUCKETS];
	unsigned nleases;
};

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
	}
	l->last_ms = pfs_clock_ms();
	return 0;
}

static void put_lease_ms(pfs_wbuf *w, uint64_t lease_ms)
{
	pfs_wbuf_u32(w, (uint32_t)lease_ms);
}

/* The table's grant callback: answer the held LOCK_WAIT. */
static int grant(void *arg, void *cookie, int status)
{
	pending *p = cookie;
	pfs_wbuf w;
	int rc;

	pfs_wbuf_init(&w);
	if (status == 0)
		put_lease_ms(&w, p->lease_ms);
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
		struct timespec ts;
		uint64_t now;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += (long)(period % 1000) * 1000000L;
		ts.tv_sec += (time_t)(period / 1000) + ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		pthread_cond_timedwait(&s->cv, &s->mu, &ts);
		if (s->stop)
			break;
		now = pfs_clock_ms();
		mds_lock_expire(s->tab, now);
		for (unsigned b = 0; b < LEASE_BUCKETS; b++)
			for (lease **pp = &s->leases[b]; *pp;) {
				lease *l = *pp;
				int busy = mds_lock_client_busy(s->tab, l->client);

				if (busy && now - l->last_ms < s->lease_ms) {
					pp = &l->next;
					continue;
				}
				if (busy) {
					int n = mds_lock_release_client(s->tab, l->client);

					pfs_log(PFS_LOG_NOTICE, "locks: client %016llx silent for %llu ms:"
						" lease expired, %d lock(s) released",
						(unsigned long long)l->client,
						(unsigned long long)(now - l->last_ms), n);
				}
				*pp = l->next;
				free(l);
				__atomic_sub_fetch(&s->nleases, 1, __ATOMIC_RELAXED);
			}
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

int mds_locksvc_start(unsigned lease_s, mds_locksvc **out)
{
	mds_locksvc *s = calloc(1, sizeof(*s));
	int rc;

	if (!s)
		return -ENOMEM;
	s->lease_ms = (uint64_t)(lease_s ? lease_s : MDS_LOCK_LEASE_S_DEFAULT) * 1000;
	s->tab = mds_lock_tab_new(grant, s);
	if (!s->tab) {
		free(s);
		return -ENOMEM;
	}
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	rc = pthread_create(&s->reaper, NULL, reaper, s);
	if (rc) {
		pthread_cond_destroy(&s->cv);
		pthread_mutex_destroy(&s->mu);
		mds_lock_tab_free(s->tab);
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
	mds_lock_tab_free(s->tab);
	for (unsigned b = 0; b < LEASE_BUCKETS; b++)
		while (s->leases[b]) {
			lease *l = s->leases[b];

			s->leases[b] = l->next;
			free(l);
		}
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

static void get_lock(pfs_rbuf *b, const pfs_hdr *h, mds_lock *l)
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

static void put_lock(pfs_wbuf *w, const mds_lock *l)
{
	pfs_wbuf_u8(w, l->kind);
	pfs_wbuf_u8(w, l->type);
	pfs_wbuf_u64(w, l->start);
	pfs_wbuf_u64(w, l->end);
	pfs_wbuf_u64(w, l->owner);
	pfs_wbuf_u32(w, l->pid);
}

static int do_wait(mds_locksvc *s, pfs_sconn *conn, const pfs_hdr *h, uint64_t ino,
		   const mds_lock *l, uint32_t wait_ms, pfs_wbuf *out)
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
		rc = p ? mds_lock_wait(s->tab, ino, l, p, pfs_clock_ms() + wait_ms)
		       : mds_lock_set(s->tab, ino, l);
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
		put_lease_ms(out, s->lease_ms);
	return rc;
}

int mds_locksvc_handle(mds_locksvc *s, pfs_sconn *conn, const pfs_hdr *h, pfs_rbuf *b,
		       pfs_wbuf *out)
{
	uint64_t ino, owner;
	uint32_t x;
	mds_lock l, c;
	int rc;

	if (!s)
		return -EOPNOTSUPP;
	ino = pfs_rbuf_u64(b);
	switch (h->opcode) {
	case PFS_OP_MDS_LOCK_GET:
	case PFS_OP_MDS_LOCK_SET:
	case PFS_OP_MDS_LOCK_WAIT:
		get_lock(b, h, &l);
		x = h->opcode == PFS_OP_MDS_LOCK_WAIT ? pfs_rbuf_u32(b) : 0;
		if ((rc = pfs_rbuf_done(b)) || (rc = mds_lock_check(&l)))
			return rc;
		if (h->opcode == PFS_OP_MDS_LOCK_WAIT)
			return do_wait(s, conn, h, ino, &l, x, out);
		pthread_mutex_lock(&s->mu);
		if (h->opcode == PFS_OP_MDS_LOCK_GET) {
			rc = mds_lock_test(s->tab, ino, &l, &c);
		} else {
			rc = lease_touch(s, h->client_id);
			if (!rc)
				rc = mds_lock_set(s->tab, ino, &l);
		}
		pthread_mutex_unlock(&s->mu);
		if (rc < 0)
			return rc;
		if (h->opcode == PFS_OP_MDS_LOCK_SET) {
			put_lease_ms(out, s->lease_ms);
			return 0;
		}
		pfs_wbuf_u8(out, (uint8_t)rc);
		if (!rc) {
			c = l;
			c.type = MDS_LK_UNLOCK;
		}
		put_lock(out, &c);
		return 0;
	case PFS_OP_MDS_LOCK_CANCEL:
		owner = pfs_rbuf_u64(b);
		if ((rc = pfs_rbuf_done(b)))
			return rc;
		pthread_mutex_lock(&s->mu);
		rc = mds_lock_cancel(s->tab, ino, h->client_id, owner);
		pthread_mutex_unlock(&s->mu);
		pfs_wbuf_u32(out, (uint32_t)rc);
		return 0;
	case PFS_OP_MDS_LOCK_RELEASE:
		owner = pfs_rbuf_u64(b);
		x = pfs_rbuf_u32(b);
		if ((rc = pfs_rbuf_done(b)))
			return rc;
		pthread_mutex_lock(&s->mu);
		mds_lock_release_owner(s->tab, ino, h->client_id, owner, x);
		pthread_mutex_unlock(&s->mu);
		return 0;
	}
	return -EOPNOTSUPP;
}

void mds_locksvc_counts(mds_locksvc *s, unsigned *locks, unsigned *waiters, unsigned *clients)
{
	pthread_mutex_lock(&s->mu);
	*locks = mds_lock_count(s->tab);
	*waiters = mds_lock_waiters(s->tab);
	*clients = __atomic_load_n(&s->nleases, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&s->mu);
}
