/* dbsync.c — getting the namespace database to disk.  In db_sync=periodic
 * mode (MDS_SYNC_PERIODIC) nsdb.c opens the LMDB environment with
 * MDB_NOSYNC, so commits reach the page cache only; the thread here calls
 * mdb_env_sync every sync_interval_ms, and mds_ns_sync forces one (the
 * server calls it when a client pushes SETSIZE for fsync).  mds_ns_open
 * starts the thread (mds_nsi_syncer_start), mds_ns_close stops it before
 * its own final sync.  In db_sync=full every commit fsyncs and there is no
 * thread.  Known gap (issue 8): the thread ignores mdb_env_sync's errors. */
#include "mds/dbsync.h"

#include <pthread.h>
#include <time.h>

#include "mds/ns_i.h"

static void *syncer_main(void *arg)
{
	mds_ns *ns = arg;
	struct timespec ts;

	pthread_mutex_lock(&ns->lock);
	while (!ns->stop) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += ns->opts.sync_interval_ms / 1000;
		ts.tv_nsec += (long)(ns->opts.sync_interval_ms % 1000) * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&ns->cv, &ns->lock, &ts);
		if (ns->stop)
			break;
		pthread_mutex_unlock(&ns->lock);
		mdb_env_sync(ns->env, 1);
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
	}
}

int mds_ns_sync(mds_ns *ns)
{
	return lmdb_err(mdb_env_sync(ns->env, 1));
}
