/* dbsync.c — getting the namespace database to disk, and knowing how far
 * it got.  In db_sync=periodic mode (MDS_SYNC_PERIODIC) and none
 * (MDS_SYNC_NONE) nsdb.c opens the LMDB environment with MDB_NOSYNC, so
 * commits reach the page cache only.  Every sync goes through
 * mds_nsi_sync: it notes the last committed transaction, returns at once
 * when an earlier sync already made it durable, else calls
 * mdb_env_sync, and on success records that transaction as durable
 * (synced_gen; the destroyer only acts on destroy records logged at or
 * before it, destroy_log.c) and wakes the destroyer when that made new
 * destroy records durable.  A failure is logged with the file, counted,
 * returned to the caller and shown by mds_ns_sync_stats; nothing is marked
 * durable, and the next sync (the thread's next round, a client's fsync, an
 * id reservation) tries again.
 *
 * Who syncs: the thread here every sync_interval_ms (periodic mode only),
 * mds_ns_sync (the server on SETSIZE, for fsync and close), nsdb.c after a
 * transaction that reserved ids and at open and close, and the destroy log
 * before a destroy batch in none mode.  In db_sync=full every commit
 * fsyncs and there is no thread.
 *
 * Limit: after a failed fsync Linux may have dropped the dirty pages it
 * could not write, so a later successful sync does not prove those pages
 * reached the disk; the error count stays for an operator to see. */
#include "mds/dbsync.h"

#include <pthread.h>
#include <time.h>

#include "common/clock.h"
#include "mds/ns_i.h"

static uint64_t last_txn(mds_ns *ns)
{
	MDB_envinfo info;

	if (mdb_env_info(ns->env, &info))
		return 0;
	return (uint64_t)info.me_last_txnid;
}

int mds_nsi_sync(mds_ns *ns, const char *why)
{
	uint64_t gen = last_txn(ns), prev;
	void (*fn)(void *) = NULL;
	void *arg = NULL;
	unsigned long nerr = 0;
	int rc, was_failing, done;

	/* Already durable: a sync that started after the last commit (another
	 * client's fsync, the thread's round) covered it.  So concurrent
	 * fsyncs share the disk sync, and an idle MDS's thread syncs nothing. */
	pthread_mutex_lock(&ns->lock);
	done = gen && gen <= ns->synced_gen && !ns->sync_failing;
	pthread_mutex_unlock(&ns->lock);
	if (done)
		return 0;
	rc = mdb_env_sync(ns->env, 1);

	/* mdb_env_sync returns an errno (or an LMDB code): never log through
	 * lmdb_err here, the message below names the file. */
	if (rc > 0)
		rc = -rc;
	else if (rc < 0)
		rc = -EIO;
	pthread_mutex_lock(&ns->lock);
	was_failing = ns->sync_failing;
	if (rc) {
		nerr = ++ns->sync_errors;
		ns->sync_last_err = rc;
		ns->sync_failing = 1;
	} else {
		ns->syncs++;
		ns->sync_failing = 0;
		prev = ns->synced_gen;
		if (gen > ns->synced_gen)
			ns->synced_gen = gen;
		if (ns->destroy_gen > prev && ns->destroy_gen <= ns->synced_gen) {
			fn = ns->notify;
			arg = ns->notify_arg;
		}
	}
	pthread_mutex_unlock(&ns->lock);
	if (rc)
		pfs_log(PFS_LOG_ERR, "sync of %s/data.mdb (%s) failed: %s (%lu failed syncs)",
			ns->opts.path, why, pfs_strerror(rc), nerr);
	else if (was_failing)
		pfs_log(PFS_LOG_NOTICE, "sync of %s/data.mdb (%s) succeeds again", ns->opts.path,
			why);
	if (fn)
		fn(arg);
	return rc;
}

uint64_t mds_nsi_durable_gen(mds_ns *ns)
{
	uint64_t g;

	/* db_sync=full: a commit returns only once it is on disk. */
	if (ns->opts.sync_mode == MDS_SYNC_FULL)
		return last_txn(ns);
	pthread_mutex_lock(&ns->lock);
	g = ns->synced_gen;
	pthread_mutex_unlock(&ns->lock);
	return g;
}

static void *syncer_main(void *arg)
{
	mds_ns *ns = arg;
	struct timespec ts;

	pthread_mutex_lock(&ns->lock);
	while (!ns->stop) {
		ts = pfs_clock_deadline(CLOCK_MONOTONIC, ns->opts.sync_interval_ms);
		pthread_cond_timedwait(&ns->cv, &ns->lock, &ts);
		if (ns->stop)
			break;
		pthread_mutex_unlock(&ns->lock);
		mds_nsi_sync(ns, "periodic"); /* logged and counted; retried next round */
		pthread_mutex_lock(&ns->lock);
	}
	pthread_mutex_unlock(&ns->lock);
	return NULL;
}

int mds_nsi_syncer_start(mds_ns *ns)
{
	int rc = -pthread_create(&ns->syncer, NULL, syncer_main, ns);

	if (rc == 0)
		ns->syncer_on = 1;
	return rc;
}

void mds_nsi_syncer_stop(mds_ns *ns)
{
	if (ns->syncer_on) {
		pthread_mutex_lock(&ns->lock);
		ns->stop = 1;
		pthread_cond_broadcast(&ns->cv);
		pthread_mutex_unlock(&ns->lock);
		pthread_join(ns->syncer, NULL);
		ns->syncer_on = 0;
	}
}

int mds_ns_sync(mds_ns *ns)
{
	return mds_nsi_sync(ns, "requested");
}

void mds_ns_sync_stats(mds_ns *ns, mds_sync_stats *out)
{
	uint64_t last = last_txn(ns);

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&ns->lock);
	out->syncs = ns->syncs;
	out->errors = ns->sync_errors;
	out->last_error = ns->sync_last_err;
	out->failing = ns->sync_failing;
	pthread_mutex_unlock(&ns->lock);
	out->durable_txn = mds_nsi_durable_gen(ns);
	out->last_txn = last;
}
