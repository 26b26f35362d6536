/* nsdb.c — the namespace database (the MDS's OSD layer): opening and
 * closing the LMDB environment and its tables, the inode records, the id
 * counters, and the end of every write transaction.  The other files of
 * the namespace (ns_i.h lists them) work on the tables through the handle
 * this file opens.
 *
 * Databases (DBIs) in one environment; integers in keys are big-endian so
 * LMDB's byte order is numeric order:
 *   inodes   be64 ino -> ino_disk header, stripe_count x pfs_stripe, symlink target
 *   dirents  be64 parent + name -> dent_val { child ino, mode, cookie }   (dir.c)
 *   cookies  be64 parent + be64 cookie -> { child ino, mode } + name      (dir.c)
 *   xattrs   be64 ino + name -> value                                      (xattr.c)
 *   osts     be32 index -> ost_disk { uuid, oss, host, ports, object id
 *            high-water mark, last capacity }                             (ostreg.c)
 *   ostuuid  uuid -> u32 index                                             (ostreg.c)
 *   destroy  be64 seq -> u64 txn id, n x { u32 ost, u64 object }          (destroy_log.c)
 *   meta     "next_ino" -> u64 inode number high-water mark
 *   replies  be64 client + be64 req -> the reply of a mutation, stored in
 *            its own transaction                                  (reply_log.c)
 *   jobs, qos  key-value tables of mds/jobs.c and mds/qos_store.c (opaque
 *            here; see kv.c)
 *
 * Durability: every operation is one write transaction.  MDS_SYNC_FULL
 * fsyncs every commit.  MDS_SYNC_PERIODIC (the default) opens the env with
 * MDB_NOSYNC and a thread calls mdb_env_sync every sync_interval_ms (and the
 * server calls mds_ns_sync when a client pushes SETSIZE for fsync);
 * MDS_SYNC_NONE syncs only when asked; see dbsync.c.  LMDB writes committed
 * pages with write(2), so they are in the page cache when the commit
 * returns: a process crash (kill -9) loses nothing in any mode; a machine
 * crash can lose unsynced transactions, and the database stays consistent
 * (LMDB's meta pages are copy-on-write).
 *
 * Id counters (inode numbers here, each OST's object ids in ostreg.c) never
 * go back, even when a machine crash loses transactions: ids come from
 * memory (mds_id_range) below a high-water mark that a synced transaction
 * wrote.  When a range runs out, the transaction that needs an id writes a
 * new mark id_batch further (mds_nsi_id_take) and mds_nsi_wend syncs after
 * its commit, before the id reaches anyone; after a crash the counters
 * restart at the mark, past every id handed out.  Ids of a range that was
 * never synced, or of an aborted transaction, are skipped.
 *
 * Group commit (mds/nsgroup.h): a thread may run several operations in one
 * group (mds_nsi_group_begin/_end).  Each operation's write transaction is
 * then an LMDB child of the group's transaction, committed into it or
 * aborted alone by mds_nsi_wend; the group's end commits once and does
 * what mds_nsi_wend does after a lone commit (the id reservation's sync and
 * promotion, the destroyer's wake-up), for all of them.  Child transactions
 * have the parent's id, so the destroy log's transaction ids and the id
 * ranges' pending_txn name the group's commit. */
#include "mds/nsdb.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>

#include "mds/ns_i.h"
#include "mds/reply_log.h"

static void ids_settle(mds_ns *ns, size_t tid, int durable)
{
	pthread_mutex_lock(&ns->lock);
	mds_nsi_id_settle(&ns->ino_ids, tid, durable);
	mds_nsi_ost_ids_settle(ns, tid, durable);
	pthread_mutex_unlock(&ns->lock);
}

/* The group this thread runs (mds_nsi_group_begin), per thread like the
 * reply context of reply_log.c: nothing is shared between threads. */
static _Thread_local struct mds_nsi_group *cur_group;

static struct mds_nsi_group *group_of(const mds_ns *ns)
{
	struct mds_nsi_group *g = cur_group;

	return g && g->ns == ns ? g : NULL;
}

MDB_txn *mds_nsi_group_txn(const mds_ns *ns)
{
	struct mds_nsi_group *g = group_of(ns);

	return g ? g->parent : NULL;
}

int mds_nsi_wbegin(mds_ns *ns, MDB_txn **t)
{
	struct mds_nsi_group *g = group_of(ns);

	return lmdb_err(mdb_txn_begin(ns->env, g ? g->parent : NULL, 0, t));
}

/* Did write transaction tid reserve ids (mds_nsi_id_take)?  Forgets it:
 * the next reservation is seen afresh. */
static int took_reservation(mds_ns *ns, size_t tid)
{
	int reserved;

	pthread_mutex_lock(&ns->lock);
	reserved = ns->resv_txn == tid;
	if (reserved)
		ns->resv_txn = 0;
	pthread_mutex_unlock(&ns->lock);
	return reserved;
}

/* After the commit of transaction tid (a lone one or a group's parent):
 * sync if it reserved ids, promote them, wake the destroyer. */
static int committed(mds_ns *ns, size_t tid, int reserved, int notify)
{
	void (*fn)(void *) = NULL;
	void *arg = NULL;
	int rc = 0;

	if (reserved) {
		if (ns->opts.sync_mode != MDS_SYNC_FULL)
			rc = mds_nsi_sync(ns, "id reservation");
		ids_settle(ns, tid, rc == 0);
	}
	if (notify) {
		pthread_mutex_lock(&ns->lock);
		if (tid > ns->destroy_gen)
			ns->destroy_gen = tid;
		if (ns->opts.sync_mode != MDS_SYNC_PERIODIC || tid <= ns->synced_gen) {
			fn = ns->notify;
			arg = ns->notify_arg;
		}
		pthread_mutex_unlock(&ns->lock);
		if (fn)
			fn(arg);
	}
	return rc;
}

/* Commit on success, abort on error.  A transaction that reserved ids is
 * synced after its commit (whatever db_sync is) and its ranges promoted; a
 * failed sync is the operation's error.  Then the destroyer is woken if
 * asked: at once in db_sync=full and none, after the sync that makes the
 * records durable in periodic mode (dbsync.c).  Inside a group t is a
 * child: its commit goes into the parent, and the sync and the wake-up
 * wait for the group's end (an aborted child forgets the ids it
 * reserved: ids are skipped, never handed out twice). */
int mds_nsi_wend(mds_ns *ns, MDB_txn *t, int rc, int notify)
{
	struct mds_nsi_group *g = group_of(ns);
	size_t tid = mdb_txn_id(t);
	int reserved = took_reservation(ns, tid);

	if (rc) {
		mdb_txn_abort(t);
		if (reserved)
			ids_settle(ns, tid, 0);
		return rc;
	}
	/* The reply of the request this thread runs goes in with its
	 * operation (mds/reply_log.h); without it the operation fails. */
	struct mds_ns_reply *r = mds_nsi_reply_pending(ns);
	if (r) {
		rc = mds_nsi_reply_put(ns, t, r);
		if (rc) {
			mdb_txn_abort(t);
			if (reserved)
				ids_settle(ns, tid, 0);
			return rc;
		}
	}
	rc = lmdb_err(mdb_txn_commit(t));
	if (rc) {
		if (reserved)
			ids_settle(ns, tid, 0);
		return rc;
	}
	if (r)
		r->done = 1;
	if (g) {
		g->reserved |= reserved;
		g->notify |= notify;
		return 0;
	}
	return committed(ns, tid, reserved, notify);
}

int mds_nsi_group_begin(mds_ns *ns, struct mds_nsi_group *g)
{
	int rc;

	if (cur_group)
		return -EBUSY;
	memset(g, 0, sizeof(*g));
	rc = lmdb_err(mdb_txn_begin(ns->env, NULL, 0, &g->parent));
	if (rc)
		return rc;
	g->ns = ns;
	g->tid = mdb_txn_id(g->parent);
	cur_group = g;
	return 0;
}

int mds_nsi_group_end(mds_ns *ns, int commit)
{
	struct mds_nsi_group *g = group_of(ns);
	int reserved, rc;

	if (!g)
		return -EINVAL;
	cur_group = NULL;
	/* a child that reserved and committed set g->reserved; the parent
	 * itself writes nothing, but be exact */
	reserved = took_reservation(ns, g->tid) || g->reserved;
	if (!commit) {
		mdb_txn_abort(g->parent);
		if (reserved)
			ids_settle(ns, g->tid, 0);
		return 0;
	}
	rc = lmdb_err(mdb_txn_commit(g->parent));
	if (rc) {
		if (reserved)
			ids_settle(ns, g->tid, 0);
		return rc;
	}
	return committed(ns, g->tid, reserved, g->notify);
}

int mds_nsi_id_take(mds_ns *ns, MDB_txn *t, struct mds_id_range *r, uint64_t *id,
		    uint64_t *limit)
{
	size_t tid = mdb_txn_id(t);
	uint64_t base;

	if (r->next < r->limit || (r->pending_txn == tid && r->next < r->pending)) {
		*id = r->next++;
		return 0;
	}
	/* Past every mark written so far, synced or not: a pending mark of an
	 * earlier transaction is below next + batch since it handed out next. */
	base = r->next > r->limit ? r->next : r->limit;
	r->pending = base + ns->opts.id_batch;
	r->pending_txn = tid;
	ns->resv_txn = tid;
	r->next = base + 1;
	*id = base;
	*limit = r->pending;
	return 1;
}

void mds_nsi_id_settle(struct mds_id_range *r, size_t tid, int durable)
{
	if (!tid || r->pending_txn != tid)
		return;
	if (durable && r->pending > r->limit)
		r->limit = r->pending;
	r->pending_txn = 0;
}

int mds_nsi_ino_get(mds_ns *ns, MDB_txn *t, uint64_t ino, struct inode *in)
{
	uint8_t kb[8];
	MDB_val k = { 8, kb }, v;
	int rc;

	be64_put(kb, ino);
	rc = mdb_get(t, ns->inodes, &k, &v);
	if (rc)
		return lmdb_err(rc);
	if (v.mv_size < sizeof(struct ino_disk))
		return -EIO;
	memcpy(&in->d, v.mv_data, sizeof(in->d));
	size_t need = sizeof(in->d) + (size_t)in->d.sc * sizeof(pfs_stripe) + in->d.tlen;
	if (in->d.sc > PFS_MAX_STRIPES || in->d.tlen > PFS_PATH_MAX || v.mv_size != need)
		return -EIO;
	const uint8_t *p = (const uint8_t *)v.mv_data + sizeof(in->d);
	memcpy(in->st, p, (size_t)in->d.sc * sizeof(pfs_stripe));
	p += (size_t)in->d.sc * sizeof(pfs_stripe);
	memcpy(in->target, p, in->d.tlen);
	in->target[in->d.tlen] = '\0';
	in->ino = ino;
	return 0;
}

int mds_nsi_ino_put(mds_ns *ns, MDB_txn *t, const struct inode *in)
{
	uint8_t kb[8];
	size_t sn = (size_t)in->d.sc * sizeof(pfs_stripe);
	MDB_val k = { 8, kb }, v = { sizeof(in->d) + sn + in->d.tlen, NULL };
	int rc;

	be64_put(kb, in->ino);
	rc = mdb_put(t, ns->inodes, &k, &v, MDB_RESERVE);
	if (rc)
		return lmdb_err(rc);
	uint8_t *p = v.mv_data;
	memcpy(p, &in->d, sizeof(in->d));
	memcpy(p + sizeof(in->d), in->st, sn);
	memcpy(p + sizeof(in->d) + sn, in->target, in->d.tlen);
	return 0;
}

static int meta_put(mds_ns *ns, MDB_txn *t, const char *key, uint64_t val)
{
	MDB_val k = { strlen(key), (void *)key }, v = { 8, &val };

	return lmdb_err(mdb_put(t, ns->meta, &k, &v, 0));
}

/* The one counter of `meta` is "next_ino"; first is where it started
 * (mds_ns_open writes it). */
int mds_nsi_meta_next(mds_ns *ns, MDB_txn *t, const char *key, uint64_t first, uint64_t *out)
{
	uint64_t limit = 0;
	int w;

	(void)first;
	if (strcmp(key, "next_ino") != 0)
		return -EINVAL;
	pthread_mutex_lock(&ns->lock);
	w = mds_nsi_id_take(ns, t, &ns->ino_ids, out, &limit);
	pthread_mutex_unlock(&ns->lock);
	return w ? meta_put(ns, t, key, limit) : 0;
}

/* Delete every record whose key starts with be64 ino.  Re-seeks after each
 * delete rather than trusting the cursor position after mdb_cursor_del. */
int mds_nsi_del_prefix(MDB_txn *t, MDB_dbi dbi, uint64_t ino)
{
	MDB_cursor *cur;
	uint8_t kb[8];
	MDB_val k, v;
	int rc = mdb_cursor_open(t, dbi, &cur);

	if (rc)
		return lmdb_err(rc);
	be64_put(kb, ino);
	for (;;) {
		k.mv_size = 8;
		k.mv_data = kb;
		rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
		if (rc || k.mv_size < 8 || be64_get(k.mv_data) != ino)
			break;
		rc = mdb_cursor_del(cur, 0);
		if (rc)
			break;
	}
	mdb_cursor_close(cur);
	return rc == MDB_NOTFOUND ? 0 : lmdb_err(rc);
}

int mds_ns_open(const mds_ns_opts *opts, mds_ns **out)
{
	mds_ns *ns = calloc(1, sizeof(*ns));
	MDB_txn *t = NULL;
	struct inode *root = NULL;
	int rc;

	if (!ns)
		return -ENOMEM;
	ns->opts = *opts;
	ns->opts.path = NULL; /* our copy, below */
	ns->lock_fd = -1;
	if (!ns->opts.sync_interval_ms)
		ns->opts.sync_interval_ms = 1000;
	if (!ns->opts.default_stripe_size)
		ns->opts.default_stripe_size = PFS_DEFAULT_STRIPE_SIZE;
	if (!ns->opts.heartbeat_timeout_ms)
		ns->opts.heartbeat_timeout_ms = 10000;
	if (!ns->opts.mapsize)
		ns->opts.mapsize = 64ull << 30;
	if (!ns->opts.id_batch)
		ns->opts.id_batch = MDS_ID_BATCH_DEFAULT;
	if (ns->opts.sync_mode != MDS_SYNC_PERIODIC && ns->opts.sync_mode != MDS_SYNC_FULL &&
	    ns->opts.sync_mode != MDS_SYNC_NONE) {
		free(ns);
		return -EINVAL;
	}
	rc = pfs_layout_check(ns->opts.default_stripe_size, ns->opts.default_stripe_count);
	if (rc)
		goto out_free;
	pthread_mutex_init(&ns->lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&ns->cv, &ca);
	pthread_condattr_destroy(&ca);

	if (!opts->path || !*opts->path) {
		rc = -EINVAL;
		goto out_sync;
	}
	/* Kept for the sync error messages: the caller's string may go. */
	ns->opts.path = strdup(opts->path);
	if (!ns->opts.path) {
		rc = -ENOMEM;
		goto out_sync;
	}
	if (mkdir(opts->path, 0700) && errno != EEXIST) {
		rc = -errno;
		goto out_sync;
	}
	/* LMDB would let a second process in; two MDSs on one database would
	 * disagree on everything kept in memory.  The kernel drops the lock
	 * when a crashed MDS dies. */
	char lp[PFS_PATH_MAX + 16];
	snprintf(lp, sizeof(lp), "%s/mds.lock", opts->path);
	ns->lock_fd = open(lp, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (ns->lock_fd < 0) {
		rc = -errno;
		goto out_sync;
	}
	if (flock(ns->lock_fd, LOCK_EX | LOCK_NB)) {
		rc = errno == EWOULDBLOCK ? -EBUSY : -errno;
		pfs_log(PFS_LOG_ERR, "%s is in use by another pfs-mds", opts->path);
		goto out_sync;
	}
	rc = lmdb_err(mdb_env_create(&ns->env));
	if (rc)
		goto out_sync;
	rc = lmdb_err(mdb_env_set_mapsize(ns->env, ns->opts.mapsize));
	if (!rc)
		rc = lmdb_err(mdb_env_set_maxdbs(ns->env, 16));
	if (!rc)
		rc = lmdb_err(mdb_env_set_maxreaders(ns->env, 4096));
	if (!rc)
		rc = lmdb_err(mdb_env_open(ns->env, opts->path,
					   MDB_NOTLS | (opts->sync_mode == MDS_SYNC_FULL ? 0 : MDB_NOSYNC),
					   0600));
	if (rc)
		goto out_env;
	/* Reader slots of a process that crashed would pin old pages. */
	int stale = 0;
	mdb_reader_check(ns->env, &stale);
	rc = wbegin(ns, &t);
	if (rc)
		goto out_env;
	struct { const char *name; MDB_dbi *dbi; } dbs[] = {
		{ "inodes", &ns->inodes }, { "dirents", &ns->dirents },
		{ "cookies", &ns->cookies }, { "xattrs", &ns->xattrs },
		{ "osts", &ns->osts }, { "ostuuid", &ns->ostuuid },
		{ "destroy", &ns->destroy }, { "meta", &ns->meta },
		{ "replies", &ns->replies }, { "slots", &ns->slots },
		{ "jobs", &ns->kv[MDS_KV_JOBS] }, { "qos", &ns->kv[MDS_KV_QOS] },
		{ "locks", &ns->kv[MDS_KV_LOCKS] },
	};
	_Static_assert(MDS_KV_NTABLES == 3, "a DBI per kv table");
	for (size_t i = 0; i < sizeof(dbs) / sizeof(dbs[0]) && !rc; i++)
		rc = lmdb_err(mdb_dbi_open(t, dbs[i].name, MDB_CREATE, dbs[i].dbi));
	if (rc)
		goto out_txn;
	root = calloc(1, sizeof(*root));
	if (!root) {
		rc = -ENOMEM;
		goto out_txn;
	}
	rc = mds_nsi_ino_get(ns, t, ROOT_INO, root);
	if (rc == -ENOENT) {
		int64_t now = now_ns();

		memset(root, 0, sizeof(*root));
		root->ino = ROOT_INO;
		root->d.mode = S_IFDIR | 0755;
		root->d.nlink = 2;
		root->d.parent = ROOT_INO;
		root->d.next_cookie = FIRST_COOKIE;
		root->d.atime = root->d.mtime = root->d.ctime = now;
		rc = mds_nsi_ino_put(ns, t, root);
		if (!rc)
			rc = meta_put(ns, t, "next_ino", ROOT_INO + 1);
	}
	if (!rc) {
		/* The stored mark: no inode number at or above it was used. */
		MDB_val k = { 8, (void *)"next_ino" }, v;

		rc = lmdb_err(mdb_get(t, ns->meta, &k, &v));
		if (!rc && v.mv_size != 8)
			rc = -EIO;
		if (!rc)
			memcpy(&ns->ino_ids.next, v.mv_data, 8);
		ns->ino_ids.limit = ns->ino_ids.next;
	}
	if (!rc)
		rc = mds_nsi_ost_load(ns, t);
	if (!rc)
		rc = mds_nsi_reply_purge(ns, t);
	if (rc)
		goto out_txn;
	rc = lmdb_err(mdb_txn_commit(t));
	t = NULL;
	/* What a crashed MDS left in the page cache becomes durable now, so
	 * every record found here (destroy log, marks) counts as durable. */
	if (!rc)
		rc = mds_nsi_sync(ns, "open");
	if (rc)
		goto out_env;
	if (opts->sync_mode == MDS_SYNC_PERIODIC) {
		rc = mds_nsi_syncer_start(ns);
		if (rc)
			goto out_env;
	}
	free(root);
	*out = ns;
	return 0;
out_txn:
	mdb_txn_abort(t);
out_env:
	mdb_env_close(ns->env);
out_sync:
	if (ns->lock_fd >= 0)
		close(ns->lock_fd);
	free((char *)ns->opts.path);
	free(root);
	free(ns->ost);
	pthread_cond_destroy(&ns->cv);
	pthread_mutex_destroy(&ns->lock);
out_free:
	free(ns);
	return rc;
}

int mds_ns_close(mds_ns *ns)
{
	int rc;

	if (!ns)
		return 0;
	mds_nsi_syncer_stop(ns);
	rc = mds_nsi_sync(ns, "close");
	mdb_env_close(ns->env);
	close(ns->lock_fd);
	free(ns->ost);
	pthread_cond_destroy(&ns->cv);
	pthread_mutex_destroy(&ns->lock);
	free((char *)ns->opts.path);
	free(ns);
	return rc;
}
