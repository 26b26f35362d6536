/* fuse_locks.c — fcntl, flock and append locks of mount.pfs through the MDS
 * lock service (see fuse_locks.h): the FUSE getlk/setlk/flock handlers,
 * interruptible waits, release on flush/release, and the lease pinger.
 *
 * Which inodes this mount ever locked is kept in a small hash set, so that
 * FLUSH (sent at every close) costs an MDS round trip only for those. */
#include "client/fuse_locks.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>

#include "client/fuse_ops.h"
#include "common/log.h"
#include "common/rpc.h"
#include "common/proto.h"

#define INO_BUCKETS 1024
#define WAIT_ROUND_MS 5000   /* one LOCK_WAIT round; well below the RPC timeout */
#define APPEND_OWNER (1ull << 63)

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

/* After a granted lock: remember ino, keep the lease alive. */
static void granted(cli_locks *l, uint64_t ino, uint32_t lease_ms)
{
	ino_ent *e;
	int found = 0;

	pthread_mutex_lock(&l->mu);
	for (e = l->inos[ino_bucket(ino)]; e && !found; e = e->next)
		found = e->ino == ino;
	if (!found && (e = calloc(1, sizeof(*e)))) {
		e->ino = ino;
		e->next = l->inos[ino_bucket(ino)];
		l->inos[ino_bucket(ino)] = e;
	}
	if (lease_ms)
		l->lease_ms = lease_ms;
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
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += period / 1000;
		ts.tv_nsec += (long)(period % 1000) * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		if (pthread_cond_timedwait(&l->cv, &l->mu, &ts) != ETIMEDOUT || l->stop)
			continue;
		pthread_mutex_unlock(&l->mu);
		int rc = cli_mdc_ping(l->mdc, "", "lease", 5);
		if (rc)
			pfs_log(PFS_LOG_WARNING, "locks: lease ping to the MDS: %s",
				pfs_strerror(rc));
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
	l->mdc = mdc;
	l->lease_ms = 30000;
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

/* Set q on ino, waiting (in rounds, interruptibly) when sleep. */
static int lock_set(fuse_req_t req, cli_locks *l, uint64_t ino, const cli_lock *q, int sleep)
{
	struct waiter w = { l, ino, q->owner, 0 };
	uint32_t lease = 0;
	int rc;

	if (!sleep || q->type == PFS_LK_UNLOCK) {
		rc = cli_mdc_lock_set(l->mdc, "", ino, q, &lease);
	} else {
		if (req)
			fuse_req_interrupt_func(req, on_interrupt, &w);
		do {
			if (__atomic_load_n(&w.interrupted, __ATOMIC_SEQ_CST)) {
				rc = -EINTR;
				break;
			}
			rc = cli_mdc_lock_wait(l->mdc, "", ino, q, WAIT_ROUND_MS, &lease);
		} while (rc == -EINPROGRESS);
		if (req)
			fuse_req_interrupt_func(req, NULL, NULL);
	}
	if (rc == 0 && q->type != PFS_LK_UNLOCK)
		granted(l, ino, lease);
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

void cli_locks_flush(cli_locks *l, uint64_t ino, const struct fuse_file_info *fi)
{
	int rc;

	if (!l || !ino_known(l, ino))
		return;
	rc = cli_mdc_lock_release(l->mdc, "", ino, fi->lock_owner, 1u << PFS_LK_POSIX);
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
	rc = cli_mdc_lock_release(l->mdc, "", ino, fi->lock_owner, 1u << PFS_LK_FLOCK);
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
	int rc = cli_mdc_lock_release(l->mdc, "", ino, token, 1u << PFS_LK_APPEND);

	if (rc)
		pfs_log(PFS_LOG_WARNING, "locks: append unlock of ino %llu: %s (other "
			"appenders wait for the lease)", (unsigned long long)ino,
			pfs_strerror(rc));
}
