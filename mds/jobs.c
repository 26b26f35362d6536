/* jobs.c — the job registry (see jobs.h): a hash table of every entry in
 * memory, each write mirrored into the MDS_KV_JOBS table in the same call.
 *
 * Record (value under the job id key), little-endian, version 1:
 *   u32 version, u32 uid, u32 nodes, f64 priority, f64 limit,
 *   u8 throttle_friendly, u8 state, u8 registered,
 *   i64 start_ns, i64 end_ns, i64 seen_ns                    (55 bytes)
 * Memory is about 150 bytes an entry; lookups are O(1), listing and
 * pruning O(entries). */
#include "mds/jobs.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/buf.h"
#include "common/log.h"

#define JOB_REC_VERSION 1u
#define JOB_REC_LEN (3 * 4 + 2 * 8 + 3 + 3 * 8)
#define NBUCKETS 1024u
#define SEEN_FLUSH_NS (3600ll * 1000000000ll)
#define DAY_NS (86400ll * 1000000000ll)
/* While the automatic entries are full, look for idle ones at most this
 * often (a scan is O(entries)). */
#define FULL_RESCAN_NS (60ll * 1000000000ll)

struct mjob {
	pfs_job_info info;     /* info.job is the key */
	int64_t seen_ns;       /* last request or statistics row */
	int64_t saved_seen_ns; /* seen_ns as stored */
	int dirty;             /* owner learnt since the last write */
	struct mjob *next;
};

struct mds_jobs {
	mds_ns *ns;
	mds_jobs_opts o;
	pthread_mutex_t lock; /* guards everything below */
	struct mjob *b[NBUCKETS];
	size_t n, n_auto;
	int64_t last_full_scan;
};

static int64_t now_ns(mds_jobs *j)
{
	struct timespec ts;

	if (j->o.clock_ns)
		return j->o.clock_ns(j->o.clock_arg);
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static unsigned bucket(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h % NBUCKETS;
}

static struct mjob *find(mds_jobs *j, const char *id)
{
	for (struct mjob *e = j->b[bucket(id)]; e; e = e->next)
		if (strcmp(e->info.job, id) == 0)
			return e;
	return NULL;
}

static void insert(mds_jobs *j, struct mjob *e)
{
	unsigned h = bucket(e->info.job);

	e->next = j->b[h];
	j->b[h] = e;
	j->n++;
	if (!e->info.registered)
		j->n_auto++;
}

static void unlink_free(mds_jobs *j, struct mjob *e)
{
	struct mjob **pp = &j->b[bucket(e->info.job)];

	while (*pp != e)
		pp = &(*pp)->next;
	*pp = e->next;
	j->n--;
	if (!e->info.registered)
		j->n_auto--;
	free(e);
}

/* 0 or -ENOMEM (the codec's buffer). */
static int rec_encode(const struct mjob *e, uint8_t out[JOB_REC_LEN])
{
	pfs_wbuf w;
	int rc;

	pfs_wbuf_init(&w);
	pfs_wbuf_u32(&w, JOB_REC_VERSION);
	pfs_wbuf_u32(&w, e->info.uid);
	pfs_wbuf_u32(&w, e->info.nodes);
	pfs_wbuf_f64(&w, e->info.priority);
	pfs_wbuf_f64(&w, e->info.limit);
	pfs_wbuf_u8(&w, e->info.throttle_friendly);
	pfs_wbuf_u8(&w, e->info.state);
	pfs_wbuf_u8(&w, e->info.registered);
	pfs_wbuf_i64(&w, e->info.start_ns);
	pfs_wbuf_i64(&w, e->info.end_ns);
	pfs_wbuf_i64(&w, e->seen_ns);
	rc = pfs_wbuf_error(&w);
	if (!rc) {
		assert(w.len == JOB_REC_LEN);
		memcpy(out, w.data, JOB_REC_LEN);
	}
	pfs_wbuf_free(&w);
	return rc;
}

static int rec_valid(const pfs_job_info *i)
{
	return i->job[0] && i->nodes >= 1 && i->nodes <= MDS_JOB_NODES_MAX &&
	       i->priority > 0 && i->priority <= MDS_JOB_PRIORITY_MAX && isfinite(i->limit) &&
	       i->limit >= 0 && i->throttle_friendly <= 1 && i->state <= PFS_JOB_ENDED &&
	       i->registered <= 1;
}

static int rec_decode(const char *id, size_t idlen, const void *v, size_t vlen,
		      struct mjob *e)
{
	pfs_rbuf r;

	memset(e, 0, sizeof(*e));
	if (idlen < 1 || idlen > PFS_JOBID_MAX || memchr(id, '\0', idlen) || vlen != JOB_REC_LEN)
		return -EBADMSG;
	memcpy(e->info.job, id, idlen);
	pfs_rbuf_init(&r, v, vlen);
	if (pfs_rbuf_u32(&r) != JOB_REC_VERSION)
		return -EBADMSG;
	e->info.uid = pfs_rbuf_u32(&r);
	e->info.nodes = pfs_rbuf_u32(&r);
	e->info.priority = pfs_rbuf_f64_finite(&r);
	e->info.limit = pfs_rbuf_f64_finite(&r);
	e->info.throttle_friendly = pfs_rbuf_u8(&r);
	e->info.state = pfs_rbuf_u8(&r);
	e->info.registered = pfs_rbuf_u8(&r);
	e->info.start_ns = pfs_rbuf_i64(&r);
	e->info.end_ns = pfs_rbuf_i64(&r);
	e->seen_ns = pfs_rbuf_i64(&r);
	e->saved_seen_ns = e->seen_ns;
	if (pfs_rbuf_done(&r) || !rec_valid(&e->info))
		return -EBADMSG;
	return 0;
}

/* Store e in its own write transaction. */
static int rec_store(mds_jobs *j, const struct mjob *e)
{
	uint8_t v[JOB_REC_LEN];
	mds_kv_txn *t;
	int rc = mds_ns_kv_begin(j->ns, 1, &t);

	if (rc)
		return rc;
	rc = rec_encode(e, v);
	if (!rc)
		rc = mds_ns_kv_put(t, MDS_KV_JOBS, e->info.job, strlen(e->info.job), v,
				   sizeof(v));
	if (rc) {
		mds_ns_kv_abort(t);
		return rc;
	}
	return mds_ns_kv_commit(t);
}

static int load(mds_jobs *j)
{
	const void *k = NULL, *v;
	size_t kl = 0, vl;
	mds_kv_txn *t;
	size_t bad = 0;
	int rc = mds_ns_kv_begin(j->ns, 0, &t);

	if (rc)
		return rc;
	while ((rc = mds_ns_kv_next(t, MDS_KV_JOBS, k, kl, &k, &kl, &v, &vl)) == 0) {
		struct mjob *e = malloc(sizeof(*e));

		if (!e) {
			rc = -ENOMEM;
			break;
		}
		if (rec_decode(k, kl, v, vl, e)) {
			free(e);
			bad++;
			continue;
		}
		insert(j, e);
	}
	mds_ns_kv_abort(t);
	if (bad)
		pfs_log(PFS_LOG_WARNING, "jobs: %zu damaged record(s) skipped", bad);
	return rc == -ENOENT ? 0 : rc;
}

static void free_all(mds_jobs *j)
{
	for (unsigned h = 0; h < NBUCKETS; h++)
		while (j->b[h]) {
			struct mjob *e = j->b[h];
			j->b[h] = e->next;
			free(e);
		}
}

int mds_jobs_open(mds_ns *ns, const mds_jobs_opts *opts, mds_jobs **out)
{
	mds_jobs *j = calloc(1, sizeof(*j));
	int rc;

	if (!j)
		return -ENOMEM;
	j->ns = ns;
	if (opts)
		j->o = *opts;
	if (!j->o.max_auto)
		j->o.max_auto = 4096;
	if (!j->o.max_registered)
		j->o.max_registered = 8192;
	if (j->o.auto_idle_ns <= 0)
		j->o.auto_idle_ns = DAY_NS;
	if (j->o.ended_keep_ns <= 0)
		j->o.ended_keep_ns = 7 * DAY_NS;
	pthread_mutex_init(&j->lock, NULL);
	rc = load(j);
	if (!rc)
		rc = mds_jobs_prune(j, NULL);
	if (rc) {
		free_all(j);
		pthread_mutex_destroy(&j->lock);
		free(j);
		return rc;
	}
	*out = j;
	return 0;
}

void mds_jobs_close(mds_jobs *j)
{
	if (!j)
		return;
	/* Seen times that moved are worth keeping for the idle expiry. */
	mds_jobs_prune(j, NULL);
	free_all(j);
	pthread_mutex_destroy(&j->lock);
	free(j);
}

static int id_ok(const char *id)
{
	size_t n = strnlen(id, PFS_JOBID_MAX + 1);

	return n >= 1 && n <= PFS_JOBID_MAX;
}

int mds_jobs_register(mds_jobs *j, uint32_t caller_uid, const pfs_job_info *in)
{
	struct mjob *e, nw, *fresh = NULL;
	int64_t now;
	int rc;

	if (!id_ok(in->job) || in->nodes < 1 || in->nodes > MDS_JOB_NODES_MAX ||
	    !(in->priority > 0 && in->priority <= MDS_JOB_PRIORITY_MAX) ||
	    !isfinite(in->limit) || in->limit < 0 || in->throttle_friendly > 1 ||
	    in->uid == MDS_JOB_UID_UNKNOWN)
		return -EINVAL;
	if (caller_uid != 0 && in->uid != caller_uid)
		return -EPERM;
	pthread_mutex_lock(&j->lock);
	now = now_ns(j);
	e = find(j, in->job);
	if (e && caller_uid != 0 && e->info.uid != caller_uid &&
	    !(!e->info.registered && e->info.uid == MDS_JOB_UID_UNKNOWN)) {
		rc = -EPERM;
		goto out;
	}
	if ((!e || !e->info.registered) && j->n - j->n_auto >= j->o.max_registered) {
		rc = -ENOSPC;
		goto out;
	}
	memset(&nw, 0, sizeof(nw));
	nw.info = *in;
	nw.info.state = PFS_JOB_RUNNING;
	nw.info.registered = 1;
	nw.info.end_ns = 0;
	nw.info.start_ns = e && e->info.registered && e->info.state == PFS_JOB_RUNNING ?
				   e->info.start_ns : now;
	nw.seen_ns = now;
	nw.saved_seen_ns = now;
	if (!e && !(fresh = malloc(sizeof(*fresh)))) {
		rc = -ENOMEM;
		goto out;
	}
	rc = rec_store(j, &nw);
	if (rc)
		goto out;
	if (e) {
		if (!e->info.registered)
			j->n_auto--;
		nw.next = e->next;
		*e = nw;
	} else {
		*fresh = nw;
		insert(j, fresh);
		fresh = NULL;
	}
out:
	pthread_mutex_unlock(&j->lock);
	free(fresh);
	if (!rc)
		pfs_log(PFS_LOG_INFO, "job %s registered by uid %u: owner %u, %u node(s), "
			"priority %g, limit %g B/s, %sthrottle-friendly", in->job, caller_uid,
			in->uid, in->nodes, in->priority, in->limit,
			in->throttle_friendly ? "" : "not ");
	return rc;
}

int mds_jobs_end(mds_jobs *j, uint32_t caller_uid, const char *job)
{
	struct mjob *e, nw;
	int rc = 0;

	pthread_mutex_lock(&j->lock);
	e = find(j, job);
	if (!e) {
		rc = -ENOENT;
		goto out;
	}
	if (caller_uid != 0 && (e->info.uid != caller_uid || caller_uid == MDS_JOB_UID_UNKNOWN)) {
		rc = -EPERM;
		goto out;
	}
	if (e->info.state == PFS_JOB_ENDED)
		goto out;
	nw = *e;
	nw.info.state = PFS_JOB_ENDED;
	nw.info.end_ns = now_ns(j);
	rc = rec_store(j, &nw);
	if (!rc)
		*e = nw;
out:
	pthread_mutex_unlock(&j->lock);
	if (!rc)
		pfs_log(PFS_LOG_INFO, "job %s ended by uid %u", job, caller_uid);
	return rc;
}

int mds_jobs_get(mds_jobs *j, const char *job, pfs_job_info *out)
{
	struct mjob *e;
	int rc = -ENOENT;

	pthread_mutex_lock(&j->lock);
	e = find(j, job);
	if (e) {
		*out = e->info;
		rc = 0;
	}
	pthread_mutex_unlock(&j->lock);
	return rc;
}

static int cmp_info(const void *a, const void *b)
{
	return strcmp(((const pfs_job_info *)a)->job, ((const pfs_job_info *)b)->job);
}

int mds_jobs_list(mds_jobs *j, int all, pfs_job_info **out, uint32_t *n)
{
	pfs_job_info *v = NULL;
	uint32_t k = 0;

	pthread_mutex_lock(&j->lock);
	if (j->n) {
		v = malloc(j->n * sizeof(*v));
		if (!v) {
			pthread_mutex_unlock(&j->lock);
			return -ENOMEM;
		}
	}
	for (unsigned h = 0; h < NBUCKETS; h++)
		for (struct mjob *e = j->b[h]; e; e = e->next)
			if (all || e->info.state == PFS_JOB_RUNNING)
				v[k++] = e->info;
	pthread_mutex_unlock(&j->lock);
	if (k > 1)
		qsort(v, k, sizeof(*v), cmp_info);
	if (!k) {
		free(v);
		v = NULL;
	}
	*out = v;
	*n = k;
	return 0;
}

/* Remove what is due; j->lock held. */
static int prune_locked(mds_jobs *j, int64_t now, size_t *forgot)
{
	mds_kv_txn *t = NULL;
	size_t gone = 0;
	int rc = 0;

	/* Pass 1: apply to the database; memory changes only on commit. */
	for (unsigned h = 0; h < NBUCKETS && !rc; h++)
		for (struct mjob *e = j->b[h]; e && !rc; e = e->next) {
			int drop = (!e->info.registered && now - e->seen_ns > j->o.auto_idle_ns) ||
				   (e->info.state == PFS_JOB_ENDED &&
				    now - e->info.end_ns > j->o.ended_keep_ns);
			int flush = !drop && (e->dirty || e->seen_ns - e->saved_seen_ns > SEEN_FLUSH_NS);

			if (!drop && !flush)
				continue;
			if (!t && (rc = mds_ns_kv_begin(j->ns, 1, &t)))
				break;
			if (drop) {
				rc = mds_ns_kv_del(t, MDS_KV_JOBS, e->info.job, strlen(e->info.job));
				if (rc == -ENOENT)
					rc = 0; /* cached but never stored (see register) */
			} else {
				uint8_t v[JOB_REC_LEN];
				rc = rec_encode(e, v);
				if (!rc)
					rc = mds_ns_kv_put(t, MDS_KV_JOBS, e->info.job,
							   strlen(e->info.job), v, sizeof(v));
			}
		}
	if (!t)
		goto out;
	if (rc) {
		mds_ns_kv_abort(t);
		goto out;
	}
	rc = mds_ns_kv_commit(t);
	if (rc)
		goto out;
	/* Pass 2: the same decisions on memory (nothing moved in between:
	 * the lock is held). */
	for (unsigned h = 0; h < NBUCKETS; h++) {
		struct mjob *e = j->b[h];
		while (e) {
			struct mjob *nx = e->next;
			int drop = (!e->info.registered && now - e->seen_ns > j->o.auto_idle_ns) ||
				   (e->info.state == PFS_JOB_ENDED &&
				    now - e->info.end_ns > j->o.ended_keep_ns);
			if (drop) {
				unlink_free(j, e);
				gone++;
			} else {
				e->saved_seen_ns = e->seen_ns;
				e->dirty = 0;
			}
			e = nx;
		}
	}
	if (gone)
		pfs_log(PFS_LOG_INFO, "jobs: forgot %zu idle or ended job(s)", gone);
out:
	if (forgot)
		*forgot = gone;
	return rc;
}

int mds_jobs_prune(mds_jobs *j, size_t *forgot)
{
	int rc;

	pthread_mutex_lock(&j->lock);
	rc = prune_locked(j, now_ns(j), forgot);
	pthread_mutex_unlock(&j->lock);
	return rc;
}

int mds_jobs_seen(mds_jobs *j, const char *job, uint32_t uid)
{
	struct mjob *e;
	int64_t now;
	int rc = 0;

	if (!job[0])
		return 0;
	if (!id_ok(job))
		return -EINVAL;
	pthread_mutex_lock(&j->lock);
	now = now_ns(j);
	e = find(j, job);
	if (e) {
		if (now > e->seen_ns)
			e->seen_ns = now;
		if (e->info.uid == MDS_JOB_UID_UNKNOWN && uid != MDS_JOB_UID_UNKNOWN) {
			e->info.uid = uid;
			e->dirty = 1;
		}
		goto out;
	}
	if (j->n_auto >= j->o.max_auto && now - j->last_full_scan > FULL_RESCAN_NS) {
		j->last_full_scan = now;
		prune_locked(j, now, NULL);
	}
	if (j->n_auto >= j->o.max_auto) {
		rc = -ENOSPC;
		goto out;
	}
	e = calloc(1, sizeof(*e));
	if (!e) {
		rc = -ENOMEM;
		goto out;
	}
	strcpy(e->info.job, job);
	e->info.uid = uid;
	e->info.nodes = 1;
	e->info.priority = 1.0;
	e->info.throttle_friendly = 1;
	e->info.state = PFS_JOB_RUNNING;
	e->info.start_ns = now;
	e->seen_ns = e->saved_seen_ns = now;
	rc = rec_store(j, e);
	if (rc) {
		free(e);
		goto out;
	}
	insert(j, e);
out:
	pthread_mutex_unlock(&j->lock);
	return rc;
}

void mds_jobs_count(mds_jobs *j, size_t *total, size_t *automatic)
{
	pthread_mutex_lock(&j->lock);
	if (total)
		*total = j->n;
	if (automatic)
		*automatic = j->n_auto;
	pthread_mutex_unlock(&j->lock);
}
