/* lfsck.c — the orphan object scrubber (see lfsck.h).  A namespace file:
 * it reads the inode table and appends to the destroy log through ns_i.h. */
#include "mds/lfsck.h"

#include <pthread.h>
#include <stdio.h>

#include "common/clock.h"
#include "common/buf.h"
#include "common/proto.h"
#include "common/rpc.h"
#include "mds/ns_i.h"

#define LIST_PAGE 65536u

struct objv {
	uint64_t *v;
	size_t n, cap;
};

static int objv_push(struct objv *o, uint64_t x)
{
	if (o->n == o->cap) {
		size_t nc = o->cap ? o->cap * 2 : 1024;
		uint64_t *nv = realloc(o->v, nc * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		o->v = nv;
		o->cap = nc;
	}
	o->v[o->n++] = x;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Objects of ost referenced by an inode or the destroy log, sorted. */
static int referenced(mds_ns *ns, uint32_t ost, struct objv *out)
{
	struct inode *in = malloc(sizeof(*in));
	MDB_cursor *cur = NULL;
	MDB_txn *t = NULL;
	MDB_val k, v;
	int rc, g, op = MDB_FIRST;

	if (!in)
		return -ENOMEM;
	rc = rbegin(ns, &t);
	if (!rc)
		rc = lmdb_err(mdb_cursor_open(t, ns->inodes, &cur));
	while (!rc && (g = mdb_cursor_get(cur, &k, &v, (MDB_cursor_op)op)) == 0) {
		op = MDB_NEXT;
		if (k.mv_size != 8)
			continue;
		rc = mds_nsi_ino_get(ns, t, be64_get(k.mv_data), in);
		if (rc == -ENOENT) {
			rc = 0;
			continue;
		}
		if (rc || !S_ISREG(in->d.mode))
			continue;
		for (uint32_t i = 0; i < in->d.sc && i < PFS_MAX_STRIPES && !rc; i++)
			if (in->st[i].ost == ost)
				rc = objv_push(out, in->st[i].object);
	}
	if (!rc && g != MDB_NOTFOUND)
		rc = lmdb_err(g);
	if (cur)
		mdb_cursor_close(cur);
	if (t) {
		/* the destroy log: objects still to go are not orphans */
		MDB_cursor *dc = NULL;

		if (!rc)
			rc = lmdb_err(mdb_cursor_open(t, ns->destroy, &dc));
		op = MDB_FIRST;
		while (!rc && (g = mdb_cursor_get(dc, &k, &v, (MDB_cursor_op)op)) == 0) {
			const uint8_t *p = v.mv_data;
			size_t off = v.mv_size % 12 == 8 ? 8 : 0; /* txn id, then 12-byte entries */

			op = MDB_NEXT;
			for (; off + 12 <= v.mv_size && !rc; off += 12) {
				uint32_t o;
				uint64_t obj;

				memcpy(&o, p + off, 4);
				memcpy(&obj, p + off + 4, 8);
				if (o == ost)
					rc = objv_push(out, obj);
			}
		}
		if (!rc && g != MDB_NOTFOUND)
			rc = lmdb_err(g);
		if (dc)
			mdb_cursor_close(dc);
	}
	if (t)
		mdb_txn_abort(t);
	free(in);
	if (!rc && out->n)
		qsort(out->v, out->n, sizeof(*out->v), cmp_u64);
	return rc;
}

int mds_lfsck_judge(mds_ns *ns, uint32_t ost, const uint64_t *listed, uint64_t n,
		    int dry_run, uint64_t *orphans, uint64_t *queued)
{
	struct objv ref = { 0 };
	pfs_stripe batch[MDS_DESTROY_MAX];
	uint32_t nb = 0;
	MDB_txn *t = NULL;
	int rc = referenced(ns, ost, &ref), logged = 0;

	*orphans = *queued = 0;
	if (!rc && !dry_run)
		rc = wbegin(ns, &t);
	for (uint64_t i = 0; i < n && !rc; i++) {
		if (ref.n && bsearch(&listed[i], ref.v, ref.n, sizeof(*ref.v), cmp_u64))
			continue;
		(*orphans)++;
		pfs_log(PFS_LOG_INFO, "lfsck: OST %u object %llu is referenced by nothing%s", ost,
			(unsigned long long)listed[i], dry_run ? "" : ": destroyed");
		if (dry_run)
			continue;
		batch[nb].ost = ost;
		batch[nb].object = listed[i];
		if (++nb == MDS_DESTROY_MAX) {
			rc = mds_nsi_destroy_append(ns, t, batch, nb);
			*queued += rc ? 0 : nb;
			logged = 1;
			nb = 0;
		}
	}
	if (!rc && nb) {
		rc = mds_nsi_destroy_append(ns, t, batch, nb);
		*queued += rc ? 0 : nb;
		logged = 1;
	}
	if (t)
		rc = mds_nsi_wend(ns, t, rc, logged);
	if (rc)
		*queued = 0;
	free(ref.v);
	return rc;
}

/* Every object of ost, from its OSS's control port. */
static int list_ost(mds_ns *ns, const struct pfs_auth_key *auth, uint32_t ost, struct objv *out)
{
	char host[64];
	uint16_t port;
	int up, rc, eof = 0;
	uint64_t after = 0;
	pfs_rpc_pool *p = NULL;
	pfs_rpc_opts o = { .max_conns = 1, .timeout_ms = 10000, .retry_ms = 1, .auth = auth };

	rc = mds_ns_ost_addr(ns, ost, host, &port, &up);
	if (!rc && !up)
		rc = -EHOSTDOWN;
	if (!rc)
		rc = pfs_rpc_pool_create(host, port, &o, &p);
	while (!rc && !eof) {
		pfs_rpc_reply rep = { 0 };
		pfs_wbuf b;
		pfs_rbuf r;

		pfs_wbuf_init(&b);
		pfs_wbuf_u32(&b, ost);
		pfs_wbuf_u64(&b, after);
		pfs_wbuf_u32(&b, LIST_PAGE);
		rc = pfs_wbuf_error(&b);
		if (!rc)
			rc = pfs_rpc_call(p, PFS_OP_OSS_LIST_OBJECTS, "mds", PFS_RPC_IDEMPOTENT,
					  b.data, b.len, NULL, 0, &rep);
		pfs_wbuf_free(&b);
		if (!rc) {
			pfs_rbuf_init(&r, rep.data, rep.len);
			uint32_t n = pfs_rbuf_u32(&r);
			eof = pfs_rbuf_u8(&r);
			for (uint32_t i = 0; i < n && !rc && !pfs_rbuf_error(&r); i++) {
				after = pfs_rbuf_u64(&r);
				rc = objv_push(out, after);
			}
			if (!rc)
				rc = pfs_rbuf_done(&r);
			if (!rc && n == 0)
				eof = 1;
		}
		pfs_rpc_reply_free(&rep);
	}
	pfs_rpc_pool_destroy(p);
	return rc;
}

int mds_lfsck_run(mds_ns *ns, const struct pfs_auth_key *auth, int dry_run,
		  mds_lfsck_report *out)
{
	pfs_ost_info *osts = NULL;
	uint32_t n = 0;
	int rc = mds_ns_ost_list(ns, &osts, &n);

	memset(out, 0, sizeof(*out));
	if (rc)
		return rc;
	out->ost = calloc(n ? n : 1, sizeof(*out->ost));
	if (!out->ost) {
		free(osts);
		return -ENOMEM;
	}
	out->n = n;
	for (uint32_t i = 0; i < n; i++) {
		mds_lfsck_ost *r = &out->ost[i];
		struct objv l = { 0 };
		int lrc;

		r->ost = osts[i].index;
		lrc = list_ost(ns, auth, r->ost, &l);
		if (lrc == 0)
			lrc = mds_lfsck_judge(ns, r->ost, l.v, l.n, dry_run, &r->orphans, &r->queued);
		if (lrc == 0) {
			r->reached = 1;
			r->listed = l.n;
		} else {
			pfs_log(PFS_LOG_NOTICE, "lfsck: OST %u skipped: %s", r->ost,
				pfs_strerror(lrc));
		}
		free(l.v);
	}
	free(osts);
	pfs_log(PFS_LOG_NOTICE, "lfsck: %s over %u OST(s) done", dry_run ? "dry run" : "scan", n);
	return 0;
}

void mds_lfsck_report_free(mds_lfsck_report *r)
{
	if (!r)
		return;
	free(r->ost);
	r->ost = NULL;
	r->n = 0;
}

struct mds_lfsck_timer {
	mds_ns *ns;
	const struct pfs_auth_key *auth;
	unsigned delay_ms;
	pthread_t thr;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int stop;
};

static void *timer_main(void *arg)
{
	mds_lfsck_timer *t = arg;
	struct timespec ts = pfs_clock_deadline(CLOCK_REALTIME, t->delay_ms);
	int stop;

	pthread_mutex_lock(&t->mu);
	while (!t->stop && pthread_cond_timedwait(&t->cv, &t->mu, &ts) != ETIMEDOUT)
		;
	stop = t->stop;
	pthread_mutex_unlock(&t->mu);
	if (!stop) {
		mds_lfsck_report r;

		if (mds_lfsck_run(t->ns, t->auth, 0, &r) == 0) {
			uint64_t orphans = 0;

			for (uint32_t i = 0; i < r.n; i++)
				orphans += r.ost[i].orphans;
			pfs_log(PFS_LOG_NOTICE, "lfsck after start: %llu orphan object(s) destroyed",
				(unsigned long long)orphans);
			mds_lfsck_report_free(&r);
		}
	}
	return NULL;
}

int mds_lfsck_timer_start(mds_ns *ns, const struct pfs_auth_key *auth, unsigned delay_ms,
			  mds_lfsck_timer **out)
{
	mds_lfsck_timer *t = calloc(1, sizeof(*t));
	int rc;

	if (!t)
		return -ENOMEM;
	t->ns = ns;
	t->auth = auth;
	t->delay_ms = delay_ms;
	pthread_mutex_init(&t->mu, NULL);
	pthread_cond_init(&t->cv, NULL);
	rc = pthread_create(&t->thr, NULL, timer_main, t);
	if (rc) {
		pthread_cond_destroy(&t->cv);
		pthread_mutex_destroy(&t->mu);
		free(t);
		return -rc;
	}
	*out = t;
	return 0;
}

void mds_lfsck_timer_stop(mds_lfsck_timer *t)
{
	if (!t)
		return;
	pthread_mutex_lock(&t->mu);
	t->stop = 1;
	pthread_cond_broadcast(&t->cv);
	pthread_mutex_unlock(&t->mu);
	pthread_join(t->thr, NULL);
	pthread_cond_destroy(&t->cv);
	pthread_mutex_destroy(&t->mu);
	free(t);
}
