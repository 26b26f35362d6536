/* kv.h — key-value tables for other MDS modules in the namespace's LMDB
 * environment (kv.c).  Part of the namespace's API: mds/ns.h includes it. */
#ifndef MDS_KV_H
#define MDS_KV_H

#include <stddef.h>

typedef struct mds_ns mds_ns;

/* ---- key-value tables for other MDS modules ----
 * The job registry (mds/jobs.c), the QoS controller (mds/qos_store.c) and
 * the lock service (mds/locksvc.c) keep their records in DBIs of their own
 * in the namespace's environment,
 * so they get its transactions and its durability (sync mode) without
 * seeing LMDB.
 * Keys are 1..MDS_KV_KEY_MAX bytes, compared bytewise (memcmp, shorter
 * first on a tie).  A transaction belongs to the thread that began it and
 * must be ended by mds_ns_kv_commit or mds_ns_kv_abort on that thread;
 * a write transaction excludes every other writer (namespace ones too), so
 * keep it short.  Values returned by get/next are borrowed: they live until
 * the next put/del in the same transaction or its end. */
#define MDS_KV_KEY_MAX 511

typedef enum mds_kv_table {
	MDS_KV_JOBS = 0,   /* job id -> record (mds/jobs.c) */
	MDS_KV_QOS,        /* name -> record (mds/qos_store.c) */
	MDS_KV_LOCKS,      /* be64 client -> (empty): mounts that hold locks
	                      (mds/locksvc.c's lock recovery after a restart) */
	MDS_KV_NTABLES
} mds_kv_table;

typedef struct mds_kv_txn mds_kv_txn;

/* Begin a read (write = 0) or write transaction.  0, -ENOMEM or -EIO. */
int mds_ns_kv_begin(mds_ns *ns, int write, mds_kv_txn **t);
/* Commit a write transaction (a read one just ends); always consumes t.
 * 0, -ENOSPC (map full) or -EIO. */
int mds_ns_kv_commit(mds_kv_txn *t);
/* Drop t and everything it wrote.  NULL is a no-op. */
void mds_ns_kv_abort(mds_kv_txn *t);
/* -ENOENT if key is absent, -EINVAL for a bad table or key length. */
int mds_ns_kv_get(mds_kv_txn *t, mds_kv_table tb, const void *key, size_t klen,
		  const void **val, size_t *vlen);
/* Insert or replace.  -EROFS in a read transaction. */
int mds_ns_kv_put(mds_kv_txn *t, mds_kv_table tb, const void *key, size_t klen,
		  const void *val, size_t vlen);
/* -ENOENT if key is absent. */
int mds_ns_kv_del(mds_kv_txn *t, mds_kv_table tb, const void *key, size_t klen);
/* The first record with a key greater than after (after = NULL: the first
 * record); -ENOENT when there is none.  Walk a table with it in key order. */
int mds_ns_kv_next(mds_kv_txn *t, mds_kv_table tb, const void *after, size_t alen,
		   const void **key, size_t *klen, const void **val, size_t *vlen);
/* Number of records in tb. */
int mds_ns_kv_count(mds_kv_txn *t, mds_kv_table tb, size_t *n);

#endif
