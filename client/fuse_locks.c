/* fuse_locks.c — fcntl, flock and append locks of mount.pfs through the MDS
 * lock service (see fuse_locks.h): the FUSE getlk/setlk/flock handlers,
 * interruptible waits, release on flush/release, and the lease pinger.
 *
 * Which inodes this mount ever locked is kept in a small hash set, so that
 * FLUSH (sent at every close) costs an MDS round trip only for those.
 *
 * Lock replay: every grant, unlock and release is also applied to the
 * mount's record of what it holds (client/lock_held.h).  The MDS's instance
 * comes with every grant and with the reply of the lease ping (a
 * LOCK_RECLAIM probe); when it changes, the MDS restarted, and the pinger
 * re-asserts every held lock with LOCK_RECLAIM while the MDS's recovery
 * window is open (mds/locksvc.h); a lock the MDS refuses is dropped from
 * the record and logged as lost.  Lock requests answered -PFS_LK_ERECOVER
 * (the window is open) are sent again every RECOVER_RETRY_MS.  A rwlock
 * orders the two: lock calls (and their record updates) share it, the
 * reclaim takes it alone, so an unlock the new MDS ran is never undone by
 * a reclaim built before it. */
#include "client/fuse_locks.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>

#include "client/fuse_ops.h"
#include "client/lock_held.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/rpc.h"
#include "common/proto.h"

#define INO_BUCKETS 1024
#define WAIT_ROUND_MS 5000   /* one LOCK_WAIT round; well below the RPC timeout */
#define APPEND_OWNER (1ull << 63)
#define RECOVER_RETRY_MS 500 /* a request refused during the MDS's recovery */
#define RECOVER_MAX_MS 600000 /* then EIO: the MDS stays in recovery for good */
#define RECLAIM_BATCH 256

typedef struct ino_ent {
	uint64_t ino;
	struct ino_ent *next;
} ino_ent;

struct cli_locks {
	cli_mdc *mdc;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int stop;
	int active;             /* a lock was taken: ping to keep the lease */
	uint32_t lease_ms;      /* from the MDS's replies */
	uint64_t next_append;   /* append lock owners */
	pthread_t pinger;
	int pinger_started;     /* started with the first granted lock */
	ino_ent *inos[INO_BUCKETS];
	/* lock replay */
	pthread_rwlock_t order;  /* lock calls shared, the reclaim alone */
	cli_lkheld *held;        /* under mu */
	uint64_t instance;       /* the MDS instance the record is from; under mu */
	uint64_t done_inst;      /* the instance told this mount's reclaim is over */
	int reclaim_now;         /* a reply said the MDS restarted; under mu */
};

static unsigned ino_bucket(uint64_t ino)
{
	return (unsigned)(ino % INO_BUCKETS);
}

static int ino_known(cli_locks *l, uint64_t ino)
{
	int found = 0;

	pthread_mutex_lock(&l->mu);
	for (ino_ent *e = l->inos[ino_bucket(ino)]; e && !found; e = e->next)
		found = e->ino == ino;
	pthread_mutex_unlock(&l->mu);
	return found;
}

static void *pinger(void *arg);

/* Under mu: the MDS's instance inst (0 = unknown) was seen in a reply;
 * if it is not the one the record is from, wake the pinger to reclaim. */
static void instance_seen(cli_locks *l, uint64_t inst)
{
	if (!inst)
		return;
	if (!l->instance) {
		l->instance = inst;
	} else if (inst != l->instance && !l->reclaim_now) {
		l->reclaim_now = 1;
		pthread_cond_signal(&l->cv);
	}
}

/* After a granted lock: remember ino, keep the lease alive. */
static void granted(cli_locks *l, uint64_t ino, uint32_t lease_ms, uint64_t inst)
{
	ino_ent *e;
	int found = 0;

	pthread_mutex_lock(&l->mu);
	instance_seen(l, inst);
	for (e = l->inos[ino_bucket(ino)]; e && !found; e = e->next)
		found = e->ino == ino;
	if (!found && (e = calloc(1, sizeof(*e)))) {
		e->ino = ino;
		e->next = l->inos[ino_bucket(ino)];
		l->inos[ino_bucket(ino)] = e;
	}
	if (lease_ms && lease_ms != l->lease_ms) {
		l->lease_ms = lease_ms;
		pthread_cond_signal(&l->cv); /* the pinger's period changes */
	}
	if (!l->active) {
		l->active = 1;
		pthread_cond_signal(&l->cv);
	}
	/* The pinger starts here, in a FUSE handler, never at create time:
	 * mount.pfs daemonizes (fork) after creating the file system, and a
	 * thread started before that would not exist in the daemon. */
	if (!l->pinger_started && pthread_create(&l->pinger, NULL, pinger, l) == 0)
		l->pinger_started = 1;
	pthread_mutex_unlock(&l->mu);
}

void cli_locks_keepalive(cli_locks *l)
{
	pthread_mutex_lock(&l->mu);
	if (!l->active) {
		l->active = 1;
		pthread_cond_signal(&l->cv);
	}
	/* in a FUSE handler, after the fork (see granted) */
	if (!l->pinger_started && pthread_create(&l->pinger, NULL, pinger, l) == 0)
		l->pinger_started = 1;
	pthread_mutex_unlock(&l->mu);
}

/* The thread's RPCs give up (-EINTR) between attempts once it is told
 * to stop: an unmount must not wait out the recovery window of a call to
 * a dead MDS. */
static int stopping(void *arg)
{
	return __atomic_load_n(&((cli_locks *)arg)->stop, __ATOMIC_RELAXED);
}

/* The probe says the MDS is instance pi->instance: if the record is from
 * another one, re-assert every held lock (in batches; the last flagged),
 * drop the refused ones.  An MDS in its recovery window is also told when
 * this mount has nothing to reclaim (an empty last batch), so that the
 * window can close before its time. */
static void reclaim_if_restarted(cli_locks *l, const cli_lock_rinfo *pi)
{
	uint64_t *inos = NULL, old, inst = pi->instance;
	cli_lock *locks = NULL;
	int32_t *st = NULL;
	cli_lock_rinfo ri = { 0 };
	size_t n = 0, lost = 0;
	int rc = 0;

	pthread_rwlock_wrlock(&l->order);
	pthread_mutex_lock(&l->mu);
	old = l->instance;
	if (inst == l->done_inst ||
	    ((!old || old == inst) && !pi->recovery_left_ms)) {
		l->instance = l->done_inst = inst;
		l->reclaim_now = 0;
		pthread_mutex_unlock(&l->mu);
		pthread_rwlock_unlock(&l->order);
		return;
	}
	rc = cli_lkheld_list(l->held, &inos, &locks, &n);
	pthread_mutex_unlock(&l->mu);
	if (!rc && n && !(st = calloc(n, sizeof(*st))))
		rc = -ENOMEM;
	for (size_t i = 0; !rc; i += RECLAIM_BATCH) {
		size_t k = n - i < RECLAIM_BATCH ? n - i : RECLAIM_BATCH;
		int last = i + k >= n;

		rc = cli_mdc_lock_reclaim(l->mdc, "", last ? PFS_LK_RECLAIM_LAST : 0,
					  (uint32_t)k, inos ? inos + i : NULL,
					  locks ? locks + i : NULL, st ? st + i : NULL, &ri);
		if (last)
			break;
	}
	pthread_mutex_lock(&l->mu);
	if (!rc) {
		for (size_t i = 0; i < n; i++) {
			cli_lock u = locks[i];

			if (!st[i])
				continue;
			lost++;
			u.type = PFS_LK_UNLOCK;
			(void)cli_lkheld_apply(l->held, inos[i], &u);
			pfs_log(PFS_LOG_WARNING, "locks: %s lock on ino %llu [%llu, %llu] lost "
				"in the MDS restart: %s", locks[i].type == PFS_LK_WRITE ?
				"write" : "read", (unsigned long long)inos[i],
				(unsigned long long)locks[i].start,
				(unsigned long long)locks[i].end, pfs_strerror(st[i]));
		}
		l->instance = l->done_inst = ri.instance;
		l->reclaim_now = 0;
	}
	pthread_mutex_unlock(&l->mu);
	pthread_rwlock_unlock(&l->order);
	if (rc)
		pfs_log(PFS_LOG_WARNING, "locks: reclaim of %zu lock(s) after an MDS restart: "
			"%s (tried again)", n, pfs_strerror(rc));
	else if (n || old)
		pfs_log(PFS_LOG_NOTICE, "locks: MDS restarted (instance %016llx -> %016llx): "
			"%zu lock(s) reclaimed, %zu lost", (unsigned long long)old,
			(unsigned long long)ri.instance, n - lost, lost);
	free(inos);
	free(locks);
	free(st);
}

static void *pinger(void *arg)
{
	cli_locks *l = arg;

	pfs_rpc_set_interrupt(stopping, l);

	pthread_mutex_lock(&l->mu);
	while (!l->stop) {
		struct timespec ts;
		uint32_t period = l->lease_ms / 3 ? l->lease_ms / 3 : 1;

		if (!l->active) {
			pthread_cond_wait(&l->cv, &l->mu);
			continue;
		}
		ts = pfs_clock_deadline(CLOCK_REALTIME, period);
		if (!l->reclaim_now &&
		    (pthread_cond_timedwait(&l->cv, &l->mu, &ts) != ETIMEDOUT || l->stop))
			continue;
		pthread_mutex_unlock(&l->mu);
		/* the lease ping is a reclaim probe: it tells the MDS instance */
		cli_lock_rinfo ri;
		int rc = cli_mdc_lock_reclaim(l->mdc, "", 0, 0, NULL, NULL, NULL, &ri);

		if (rc == -EOPNOTSUPP || rc == -EACCES)
			rc = cli_mdc_ping(l->mdc, "", "lease", 5);
		else if (rc == 0)
			reclaim_if_restarted(l, &ri);
		if (rc) {
			struct timespec pause = { 0, RECOVER_RETRY_MS * 1000000L };

			pfs_log(PFS_LOG_WARNING, "locks: lease ping to the MDS: %s",
				pfs_strerror(rc));
			nanosleep(&pause, NULL); /* a pending reclaim_now must not spin */
		}
		pthread_mutex_lock(&l->mu);
	}
	pthread_mutex_unlock(&l->mu);
	return NULL;
}

int cli_locks_create(cli_mdc *mdc, cli_locks **out)
{
	cli_locks *l = calloc(1, sizeof(*l));

	if (!l)
		return -ENOMEM;
	pthread_rwlockattr_t ra;

	l->mdc = mdc;
	l->lease_ms = 30000;
	l->held = cli_lkheld_new();
	if (!l->held) {
		free(l);
		return -ENOMEM;
	}
	/* writer first: a reclaim must not starve behind a stream of locks */
	pthread_rwlockattr_init(&ra);
	pthread_rwlockattr_setkind_np(&ra, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&l->order, &ra);
	pthread_rwlockattr_destroy(&ra);
	pthread_mutex_init(&l->mu, NULL);
	pthread_cond_init(&l->cv, NULL);
	*out = l;
	return 0;
}

void cli_locks_destroy(cli_locks *l)
{
	if (!l)
		return;
	pthread_mutex_lock(&l->mu);
	l->stop = 1;
	pthread_cond_signal(&l->cv);
	pthread_mutex_unlock(&l->mu);
	if (l->pinger_started)
		pthread_join(l->pinger, NULL);
	for (unsigned b = 0; b < INO_BUCKETS; b++)
		while (l->inos[b]) {
			ino_ent *e = l->inos[b];

			l->inos[b] = e->next;
			free(e);
		}
	cli_lkheld_free(l->held);
	pthread_rwlock_destroy(&l->order);
	pthread_cond_destroy(&l->cv);
	pthread_mutex_destroy(&l->mu);
	free(l);
}

static cli_locks *locks_of(fuse_req_t req)
{
	return cli_fs_locks(fuse_req_userdata(req));
}

/* errno for the kernel: EAGAIN, EINTR, EDEADLK, ENOLCK as they are,
 * transport and protocol failures EIO. */
static int kerr(int rc)
{
	switch (rc) {
	case -EAGAIN: case -EINTR: case -EDEADLK: case -ENOLCK: case -ENOMEM: case -EINVAL:
		return -rc;
	}
	return EIO;
}

static int flock_to_lock(const struct flock *f, uint64_t owner, cli_lock *out)
{
	memset(out, 0, sizeof(*out));
	out->kind = PFS_LK_POSIX;
	switch (f->l_type) {
	case F_RDLCK: out->type = PFS_LK_READ; break;
	case F_WRLCK: out->type = PFS_LK_WRITE; break;
	case F_UNLCK: out->type = PFS_LK_UNLOCK; break;
	default: return -EINVAL;
	}
	if (f->l_start < 0 || f->l_len < 0)
		return -EINVAL;
	out->start = (uint64_t)f->l_start;
	out->end = f->l_len == 0 ? UINT64_MAX : (uint64_t)f->l_start + (uint64_t)f->l_len - 1;
	out->owner = owner;
	out->pid = (uint32_t)f->l_pid;
	return 0;
}

void cli_locks_getlk(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi,
		     struct flock *lock)
{
	cli_locks *l = locks_of(req);
	cli_lock q, c;
	int conflict = 0, rc;

	rc = flock_to_lock(lock, fi->lock_owner, &q);
	if (rc == 0)
		rc = cli_mdc_lock_get(l->mdc, "", ino, &q, &conflict, &c);
	if (rc) {
		fuse_reply_err(req, kerr(rc));
		return;
	}
	if (!conflict) {
		lock->l_type = F_UNLCK;
	} else {
		lock->l_type = c.type == PFS_LK_WRITE ? F_WRLCK : F_RDLCK;
		lock->l_whence = SEEK_SET;
		lock->l_start = (off_t)c.start;
		lock->l_len = c.end == UINT64_MAX ? 0 : (off_t)(c.end - c.start + 1);
		lock->l_pid = (pid_t)c.pid;
	}
	fuse_reply_lock(req, lock);
}

/* A blocking request, interruptible. */
struct waiter {
	cli_locks *l;
	uint64_t ino, owner;
	int interrupted;  /* atomic */
};

static void on_interrupt(fuse_req_t req, void *data)
{
	struct waiter *w = data;
	int rc;

	__atomic_store_n(&w->interrupted, 1, __ATOMIC_SEQ_CST);
	rc = cli_mdc_lock_cancel(w->l->mdc, "", w->ino, w->owner);
	if (rc)
		pfs_log(PFS_LOG_WARNING, "locks: cancel of a wait on ino %llu: %s",
			(unsigned long long)w->ino, pfs_strerror(rc));
}

/* The MDS answered -PFS_LK_ERECOVER: it restarted; make sure the pinger
 * reclaims, and wait a little (interruptibly) before sending again. */
static int recover_pause(cli_locks *l, fuse_req_t req, const int *interrupted)
{
	pthread_mutex_lock(&l->mu);
	if (!l->reclaim_now) {
		l->reclaim_now = 1;
		pthread_cond_signal(&l->cv);
	}
	pthread_mutex_unlock(&l->mu);
	for (int t = 0; t < RECOVER_RETRY_MS; t += 100) {
		if ((interrupted && __atomic_load_n(interrupted, __ATOMIC_SEQ_CST)) ||
		    (req && fuse_req_interrupted(req)))
			return -EINTR;
		struct timespec ts = { 0, 100 * 1000000L };

		nanosleep(&ts, NULL);
	}
	return 0;
}

/* One LOCK_SET or LOCK_WAIT round with its record update, ordered against
 * a reclaim (see the top). */
static int lock_call(cli_locks *l, uint64_t ino, const cli_lock *q, int wait)
{
	uint32_t lease = 0;
	uint64_t inst = 0;
	int rc;

	pthread_rwlock_rdlock(&l->order);
	rc = wait ? cli_mdc_lock_wait_inst(l->mdc, "", ino, q, WAIT_ROUND_MS, &lease, &inst)
		  : cli_mdc_lock_set_inst(l->mdc, "", ino, q, &lease, &inst);
	/* an unlock is recorded even when it failed: never reclaimed */
	if (rc == 0 || q->type == PFS_LK_UNLOCK) {
		pthread_mutex_lock(&l->mu);
		if (cli_lkheld_apply(l->held, ino, q))
			pfs_log(PFS_LOG_WARNING, "locks: no memory to record a lock of ino %llu "
				"(not reclaimed after an MDS restart)", (unsigned long long)ino);
		pthread_mutex_unlock(&l->mu);
	}
	pthread_rwlock_unlock(&l->order);
	if (rc == 0 && q->type != PFS_LK_UNLOCK)
		granted(l, ino, lease, inst);
	return rc;
}

/* Set q on ino, waiting (in rounds, interruptibly) when sleep. */
static int lock_set(fuse_req_t req, cli_locks *l, uint64_t ino, const cli_lock *q, int sleep)
{
	struct waiter w = { l, ino, q->owner, 0 };
	int rc, waited = 0;

	if (!sleep || q->type == PFS_LK_UNLOCK) {
		while ((rc = lock_call(l, ino, q, 0)) == -PFS_LK_ERECOVER &&
		       waited < RECOVER_MAX_MS) {
			if ((rc = recover_pause(l, req, NULL)))
				break;
			waited += RECOVER_RETRY_MS;
		}
	} else {
		if (req)
			fuse_req_interrupt_func(req, on_interrupt, &w);
		do {
			if (__atomic_load_n(&w.interrupted, __ATOMIC_SEQ_CST)) {
				rc = -EINTR;
				break;
			}
			rc = lock_call(l, ino, q, 1);
			if (rc == -PFS_LK_ERECOVER && waited < RECOVER_MAX_MS) {
				rc = recover_pause(l, NULL, &w.interrupted);
				waited += RECOVER_RETRY_MS;
				if (!rc)
					rc = -EINPROGRESS;
			}
		} while (rc == -EINPROGRESS);
		if (req)
			fuse_req_interrupt_func(req, NULL, NULL);
	}
	return rc;
}

void cli_locks_setlk(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi,
		     struct flock *lock, int sleep)
{
	cli_locks *l = locks_of(req);
	cli_lock q;
	int rc = flock_to_lock(lock, fi->lock_owner, &q);

	if (rc == 0)
		rc = lock_set(req, l, ino, &q, sleep);
	fuse_reply_err(req, rc ? kerr(rc) : 0);
}

void cli_locks_flock(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi, int op)
{
	cli_locks *l = locks_of(req);
	cli_lock q;
	int rc;

	memset(&q, 0, sizeof(q));
	q.kind = PFS_LK_FLOCK;
	q.start = 0;
	q.end = UINT64_MAX;
	q.owner = fi->lock_owner;
	switch (op & ~LOCK_NB) {
	case LOCK_SH: q.type = PFS_LK_READ; break;
	case LOCK_EX: q.type = PFS_LK_WRITE; break;
	case LOCK_UN: q.type = PFS_LK_UNLOCK; break;
	default:
		fuse_reply_err(req, EINVAL);
		return;
	}
	rc = lock_set(req, l, ino, &q, !(op & LOCK_NB));
	fuse_reply_err(req, rc ? kerr(rc) : 0);
}

/* LOCK_RELEASE, and the record forgets those locks whatever the answer
 * (a lock left on the MDS goes with the lease; it is never reclaimed). */
static int release(cli_locks *l, uint64_t ino, uint64_t owner, unsigned kinds)
{
	int rc;

	pthread_rwlock_rdlock(&l->order);
	rc = cli_mdc_lock_release(l->mdc, "", ino, owner, kinds);
	pthread_mutex_lock(&l->mu);
	cli_lkheld_release(l->held, ino, owner, kinds);
	pthread_mutex_unlock(&l->mu);
	pthread_rwlock_unlock(&l->order);
	return rc;
}

void cli_locks_flush(cli_locks *l, uint64_t ino, const struct fuse_file_info *fi)
{
	int rc;

	if (!l || !ino_known(l, ino))
		return;
	rc = release(l, ino, fi->lock_owner, 1u << PFS_LK_POSIX);
	if (rc)
		pfs_log(PFS_LOG_WARNING, "locks: release at close of ino %llu: %s (the MDS "
			"drops them when the lease expires)", (unsigned long long)ino,
			pfs_strerror(rc));
}

void cli_locks_release(cli_locks *l, uint64_t ino, const struct fuse_file_info *fi)
{
	int rc;

	if (!l || !fi->flock_release || !ino_known(l, ino))
		return;
	rc = release(l, ino, fi->lock_owner, 1u << PFS_LK_FLOCK);
	if (rc)
		pfs_log(PFS_LOG_WARNING, "locks: flock release of ino %llu: %s",
			(unsigned long long)ino, pfs_strerror(rc));
}

int cli_locks_append_lock(cli_locks *l, uint64_t ino, uint64_t *token)
{
	cli_lock q;

	memset(&q, 0, sizeof(q));
	q.kind = PFS_LK_APPEND;
	q.type = PFS_LK_WRITE;
	q.end = UINT64_MAX;
	q.owner = APPEND_OWNER | __atomic_add_fetch(&l->next_append, 1, __ATOMIC_RELAXED);
	*token = q.owner;
	return lock_set(NULL, l, ino, &q, 1);
}

void cli_locks_append_unlock(cli_locks *l, uint64_t ino, uint64_t token)
{
	int rc = release(l, ino, token, 1u << PFS_LK_APPEND);

	if (rc)
		pfs_log(PFS_LOG_WARNING, "locks: append unlock of ino %llu: %s (other "
			"appenders wait for the lease)", (unsigned long long)ino,
			pfs_strerror(rc));
}
