/* ns_i.h — what the files of the MDS namespace share: the mds_ns handle,
 * the records of the namespace tables, the transaction and key helpers, and
 * the few functions one file offers the others (mds_nsi_ = internal).  Not
 * for other modules: use mds/ns.h.
 *
 * The files, all on one LMDB environment (tables in mds/README.md):
 *   nsdb.c         the environment: open/close, tables, inode records,
 *                  ending a write transaction
 *   ns.c           namespace operations (lookup, create, remove, rename, ...)
 *   dir.c          the directory index: entries, readdir cookies, READDIR
 *   xattr.c        extended attributes
 *   ostreg.c       the OST registry and liveness, OST choice and object ids,
 *                  STATFS
 *   destroy_log.c  the destroy log (mds/destroy.c drains it)
 *   dbsync.c       the periodic sync thread, mds_ns_sync
 *   kv.c           the key-value tables of mds/jobs.c and mds/qos_store.c
 *   reply_log.c    the replies table: replies stored with their operation
 *                  (mds/reply_log.h)
 *
 * The transaction context is an MDB_txn: an operation begins one (wbegin or
 * rbegin), passes it to the helpers of the other files, which read and
 * write in it but never end it, and ends it itself: mds_nsi_wend for a
 * write transaction, mdb_txn_abort for a read one. */
#ifndef MDS_NS_I_H
#define MDS_NS_I_H

#include <errno.h>
#include <lmdb.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "mds/ns.h"

#define ROOT_INO 1u
#define FIRST_COOKIE 3u /* 1 and 2 are what "." and ".." would use */

/* Stored inode header; followed by stripes then the symlink target. */
struct ino_disk {
	uint32_t mode, nlink, uid, gid, rdev, tlen;
	uint64_t size;
	uint64_t parent;      /* directories: the containing directory */
	union {
		uint64_t next_cookie; /* directories: next readdir cookie */
		uint64_t blocks;      /* regular files: 512-byte blocks the objects
				       * used at the last close/fsync (MDS_IF_BLOCKS) */
	};
	int64_t atime, mtime, ctime;
	union {
		/* directories: default layout of new files (0 = fs default) */
		struct { uint32_t def_ss, def_sc; };
		/* regular files: the truncate epoch (bumped by every size
		 * change of SETATTR) and MDS_IF_* flags */
		struct { uint32_t tepoch, fflags; };
	};
	union {
		uint32_t ss;       /* regular files: stripe size */
		uint32_t def_off1; /* directories: default first OST + 1 (0 = any: records
				      from before it read so) */
	};
	uint32_t sc;             /* regular files: stripe count (0 for other types) */
};

/* ino_disk.fflags: blocks holds what the objects use (files made since
 * the field exists; older records estimate from the size). */
#define MDS_IF_BLOCKS 1u
/* ino_disk.fflags: the size may be stale (a writer opened the file and has
 * not closed it; mds/open.h); read as PFS_ATTR_SIZE_STALE. */
#define MDS_IF_SIZE_STALE 2u

struct inode {
	uint64_t ino;
	struct ino_disk d;
	pfs_stripe st[PFS_MAX_STRIPES];
	char target[PFS_PATH_MAX + 1];
};

struct dent_val {
	uint64_t child;
	uint32_t mode, pad;
	uint64_t cookie;
};

struct ost_mem; /* one OST in memory: ostreg.c */

/* An id counter handed out from memory in batches reserved on disk
 * (nsdb.c): ids below limit were reserved by a synced transaction; pending
 * is the limit written by write transaction pending_txn, not yet known
 * synced.  Guarded by mds_ns.lock. */
struct mds_id_range {
	uint64_t next, limit, pending;
	size_t pending_txn; /* 0 = none */
};

struct mds_ns {
	MDB_env *env;
	MDB_dbi inodes, dirents, cookies, xattrs, osts, ostuuid, destroy, meta, replies;
	MDB_dbi slots;          /* create slot records (slotrec.c) */
	MDB_dbi kv[MDS_KV_NTABLES];
	mds_ns_opts opts;
	pthread_mutex_t lock;  /* guards ost, nost, rr, notify, ino_ids, the sync state */
	struct ost_mem *ost;
	uint32_t nost;
	uint64_t ost_tick_ms;  /* the loop's last tick (mds_ns_ost_tick); 0 = none yet */
	uint32_t rr;           /* round-robin cursor */
	void (*notify)(void *);
	void *notify_arg;
	/* periodic sync thread */
	pthread_t syncer;
	int syncer_on;
	int stop;              /* guarded by lock */
	pthread_cond_t cv;
	int lock_fd;           /* flock'ed mds.lock: one MDS per database */
	/* durability (dbsync.c, nsdb.c); guarded by lock */
	struct mds_id_range ino_ids;
	size_t resv_txn;       /* the write transaction that reserved ids last */
	uint64_t synced_gen;   /* LMDB transactions up to this id are on disk */
	uint64_t destroy_gen;  /* the last transaction that logged destroys */
	unsigned long syncs, sync_errors;
	int sync_last_err, sync_failing;
	/* open files (mds/orphan.h mds_ns_set_open_hook); guarded by lock */
	int (*open_hook)(void *arg, uint64_t ino);
	void *open_hook_arg;
};

/* Working set of one operation: inodes are ~5 KiB, kept off small stacks. */
struct work {
	struct inode a, b, c, d;
};

static inline struct work *work_new(void)
{
	return malloc(sizeof(struct work));
}

/* ---- offered by one file to the others; t is the caller's transaction ---- */

/* nsdb.c */
/* Group commit (mds/nsgroup.h runs it): between mds_nsi_group_begin and
 * mds_nsi_group_end, every write transaction this thread begins on ns
 * (wbegin) is a child of one parent transaction g->parent (LMDB nested
 * transactions): mds_nsi_wend commits a child into the parent, or aborts
 * only the child, and leaves the parent's end (the one commit, the id
 * reservation's sync, the destroyer's wake-up) to mds_nsi_group_end.
 * Read transactions (rbegin) still see only what is committed.  Other
 * threads' transactions are not affected (they wait for the writer lock
 * the parent holds).  Two write transactions open at once on the thread
 * fail (-EIO), as they would deadlock without a group. */
struct mds_nsi_group {
	mds_ns *ns;
	MDB_txn *parent;
	size_t tid;
	int reserved;  /* a child reserved ids: sync after the commit */
	int notify;    /* a child logged destroys: wake the destroyer */
};
int mds_nsi_group_begin(mds_ns *ns, struct mds_nsi_group *g);
/* Commit (commit != 0) or abort the group begun on this thread; 0 or the
 * commit's (or the id reservation sync's) error, which is then every
 * member's. */
int mds_nsi_group_end(mds_ns *ns, int commit);
/* The group's transaction, to read what its members wrote so far (only
 * while none of its children is open), or NULL outside a group. */
MDB_txn *mds_nsi_group_txn(const mds_ns *ns);
int mds_nsi_wbegin(mds_ns *ns, MDB_txn **t);
int mds_nsi_wend(mds_ns *ns, MDB_txn *t, int rc, int notify);
int mds_nsi_ino_get(mds_ns *ns, MDB_txn *t, uint64_t ino, struct inode *in);
int mds_nsi_ino_put(mds_ns *ns, MDB_txn *t, const struct inode *in);
int mds_nsi_meta_next(mds_ns *ns, MDB_txn *t, const char *key, uint64_t first, uint64_t *out);
/* Take an id of r (caller holds ns->lock) in write transaction t: 0 when it
 * comes from a range already reserved, 1 when t must write *limit as the
 * counter's new high-water mark (mds_nsi_wend then syncs before returning). */
int mds_nsi_id_take(mds_ns *ns, MDB_txn *t, struct mds_id_range *r, uint64_t *id,
		    uint64_t *limit);
/* Transaction tid is on disk (promote) or was aborted (forget) for r. */
void mds_nsi_id_settle(struct mds_id_range *r, size_t tid, int durable);
int mds_nsi_del_prefix(MDB_txn *t, MDB_dbi dbi, uint64_t ino);

/* dir.c */
int mds_nsi_dent_get(mds_ns *ns, MDB_txn *t, uint64_t parent, const char *name,
		     struct dent_val *dv);
int mds_nsi_dent_set(mds_ns *ns, MDB_txn *t, uint64_t parent, const char *name,
		     uint64_t child, uint32_t mode, uint64_t cookie);
int mds_nsi_dent_add(mds_ns *ns, MDB_txn *t, struct inode *dir, const char *name,
		     uint64_t child, uint32_t mode);
int mds_nsi_dent_del(mds_ns *ns, MDB_txn *t, uint64_t parent, const char *name,
		     uint64_t cookie);
int mds_nsi_dir_empty(mds_ns *ns, MDB_txn *t, uint64_t ino);

/* ns.c: an inode's attributes as LOOKUP and GETATTR send them (dirplus.c) */
void mds_nsi_to_attr(const struct inode *in, pfs_attr *a);

/* destroy_log.c */
int mds_nsi_destroy_append(mds_ns *ns, MDB_txn *t, const pfs_stripe *st, uint32_t n);

/* orphan.c: victim's last link went in t.  If it is an open regular file,
 * keep it as an orphan (nlink 0, orphan record) and return 1; 0 if it is
 * not open (the caller frees it); or -errno. */
int mds_nsi_orphan_keep(mds_ns *ns, MDB_txn *t, struct inode *victim, int64_t now);

/* xattr.c: drop ino's xattr name in t, if it has one (0 either way). */
int mds_nsi_xattr_del(mds_ns *ns, MDB_txn *t, uint64_t ino, const char *name);

/* ostreg.c */
/* first: OST index of stripe 0, or PFS_STRIPE_OFFSET_ANY; -EINVAL if it is
 * no registered OST (mds_nsi_ost_index_check). */
int mds_nsi_layout_alloc(mds_ns *ns, MDB_txn *t, uint32_t ss, uint32_t sc, uint32_t first,
			 struct inode *in);
/* 0 if idx is PFS_STRIPE_OFFSET_ANY or a registered OST (up or not). */
int mds_nsi_ost_index_check(mds_ns *ns, uint32_t idx);
int mds_nsi_ost_load(mds_ns *ns, MDB_txn *t);
/* mds_nsi_id_settle on every OST's object ids; caller holds ns->lock. */
void mds_nsi_ost_ids_settle(mds_ns *ns, size_t tid, int durable);

/* reply_log.c: this thread's reply context if it is for ns and not yet
 * stored, else NULL; store it in t (and prune the client's old records);
 * drop the records past their age (at open). */
struct mds_ns_reply;
struct mds_ns_reply *mds_nsi_reply_pending(mds_ns *ns);
int mds_nsi_reply_put(mds_ns *ns, MDB_txn *t, const struct mds_ns_reply *r);
int mds_nsi_reply_purge(mds_ns *ns, MDB_txn *t);

/* slotrec.c: create slot records (asynchronous create).  put: -EEXIST
 * when ino has one, -EINVAL for ino 0 or a layout without objects.  take:
 * the record of ino if client owns it in dir and it is not expired at
 * now_ms (wall clock): 0 with *lay and the record deleted in t, else
 * -ESTALE (a damaged record is dropped).  sweep: deletes up to max
 * expired records from the table's start; returns how many. */
int mds_nsi_slot_put(mds_ns *ns, MDB_txn *t, uint64_t ino, uint64_t client, uint64_t dir,
		     uint64_t expiry_ms, const pfs_layout *lay);
int mds_nsi_slot_take(mds_ns *ns, MDB_txn *t, uint64_t ino, uint64_t client, uint64_t dir,
		      uint64_t now_ms, pfs_layout *lay);
unsigned mds_nsi_slot_sweep(mds_ns *ns, MDB_txn *t, uint64_t now_ms, unsigned max);

/* dbsync.c: start the periodic sync thread (MDS_SYNC_PERIODIC), stop it. */
int mds_nsi_syncer_start(mds_ns *ns);
void mds_nsi_syncer_stop(mds_ns *ns);
/* mdb_env_sync; on success every transaction committed before the call is
 * durable (synced_gen) and the destroyer is woken if that made destroy
 * records durable; an error is logged with the file and counted.  why
 * names the caller in the log. */
int mds_nsi_sync(mds_ns *ns, const char *why);
/* The id of the last transaction known to be on disk. */
uint64_t mds_nsi_durable_gen(mds_ns *ns);

/* ------------------------------------------------------------------ helpers */

static inline int lmdb_err(int rc)
{
	if (rc == 0)
		return 0;
	if (rc > 0)
		return -rc;
	if (rc == MDB_NOTFOUND)
		return -ENOENT;
	if (rc == MDB_MAP_FULL || rc == MDB_TXN_FULL)
		return -ENOSPC;
	if (rc == MDB_KEYEXIST)
		return -EEXIST;
	pfs_log(PFS_LOG_ERR, "lmdb: %s", mdb_strerror(rc));
	return -EIO;
}

static inline void be64_put(uint8_t *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--) {
		p[i] = (uint8_t)v;
		v >>= 8;
	}
}

static inline uint64_t be64_get(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = (v << 8) | p[i];
	return v;
}

static inline int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A write transaction: the environment's own, or inside a group (below)
 * a child of the group's. */
static inline int wbegin(mds_ns *ns, MDB_txn **t)
{
	return mds_nsi_wbegin(ns, t);
}

static inline int rbegin(mds_ns *ns, MDB_txn **t)
{
	return lmdb_err(mdb_txn_begin(ns->env, NULL, MDB_RDONLY, t));
}

static inline int dir_get(mds_ns *ns, MDB_txn *t, uint64_t ino, struct inode *in)
{
	int rc = mds_nsi_ino_get(ns, t, ino, in);

	if (rc == 0 && !S_ISDIR(in->d.mode))
		rc = -ENOTDIR;
	return rc;
}

/* POSIX rwx check; mask is a combination of R_OK/W_OK/X_OK.  Root passes
 * everything except executing a file without any x bit. */
static inline int may(const pfs_cred *c, const struct inode *in, uint32_t mask)
{
	uint32_t m = in->d.mode, bits;

	mask &= 7;
	if (c->uid == 0) {
		if ((mask & X_OK) && !S_ISDIR(m) && !(m & 0111))
			return -EACCES;
		return 0;
	}
	if (c->uid == in->d.uid)
		bits = (m >> 6) & 7;
	else if (pfs_cred_in_group(c, in->d.gid))
		bits = (m >> 3) & 7;
	else
		bits = m & 7;
	return (bits & mask) == mask ? 0 : -EACCES;
}

/* The key be64 id + name bytes (dirents, xattrs); kb holds 8 + the name. */
static inline size_t dkey(uint8_t *kb, uint64_t parent, const char *name)
{
	size_t n = strlen(name);

	be64_put(kb, parent);
	memcpy(kb + 8, name, n);
	return 8 + n;
}

#endif
