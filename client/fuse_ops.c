/* fuse_ops.c — FUSE low-level handlers of mount.pfs (see fuse_ops.h).
 *
 * Inode table: a node exists while the kernel holds a lookup reference
 * (every fuse_reply_entry/create adds one, FORGET drops them) or while the
 * file is open.  It carries what open-to-close consistency needs: the last
 * MDS size seen (to clip reads), the size/mtime seen at the last open or
 * close (to decide keep_cache), and the local high-water mark of writes not
 * yet pushed to the MDS.  One mutex guards the whole table; it is never held
 * across an RPC.
 *
 * Every handler replies exactly once: each ends in one reply call on every
 * path, errors as fuse_reply_err(req, -rc). */
#include "client/fuse_ops.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h> /* RENAME_NOREPLACE, RENAME_EXCHANGE */
#include <stdlib.h>
#include <string.h>
#include <sys/file.h> /* LOCK_UN */
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "client/fuse_locks.h"
#include "client/fuse_wire.h"
#include "client/notify.h"
#include "client/statahead.h"
#include "client/dirdeleg.h"
#include "common/clock.h"
#include "common/log.h"

#define NODE_BUCKETS 4096

typedef struct node {
	uint64_t ino;
	uint64_t nlookup;     /* kernel references */
	unsigned nopen;       /* open file handles */
	uint64_t size;        /* last size the MDS reported */
	uint32_t mode;        /* last mode the MDS reported (0 = unknown) */
	int have_seen;        /* seen_* valid (note_seen) */
	uint64_t seen_size;   /* size/mtime/ctime at the last open or close */
	int64_t seen_mtime, seen_ctime;
	unsigned nwr;         /* open handles for writing */
	uint64_t hw;          /* end of the highest byte written here */
	int dirty;            /* hw / wmtime not yet pushed to the MDS */
	int unsynced;         /* written since its objects were last synced
	                         (sync_on_close): per inode, as the kernel sends a
	                         file's cached writes through any of its handles */
	int64_t wmtime;       /* time of the last write */
	int wb_err;           /* first failed write-back WRITE since the last flush
	                         or fsync (negative errno), reported by the next */
	uint32_t tepoch;      /* newest truncate epoch the MDS reported */
	int have_epoch;       /* tepoch valid */
	cli_wc_file *wc;      /* mount.pfs's write-back cache of the file (wcache.h):
	                         from its first write while open, to its last close */
	unsigned wcpin;       /* callers using wc without an open handle */
	uint64_t nocap_ms;    /* security.capability absent until then (monotonic
	                         ms; nocap_known) */
	uint64_t ra_gen;      /* bumped when this mount's writes reach the OSSes,
	                         at truncates and invalidations: prefetched data
	                         of an older one is never served (readahead.h) */
	struct node *next;
} node;

struct cli_fs {
	cli_mdc *mdc;
	cli_osc *osc;
	cli_jobid *jobid;
	cli_locks *locks;            /* fcntl/flock/append locks (fuse_locks.h) */
	cli_fs_opts opts;
	int wb;                      /* the kernel's write-back cache is on (set at INIT) */
	cli_wc *wc;                  /* our own write-back cache (wcache.h); NULL = off */
	cli_ra *ra;                  /* stream readahead (readahead.h); NULL = off */
	cli_sa *sa;                  /* statahead (statahead.h); NULL = off */
	cli_dd *dd;                  /* under directory delegations (dirdeleg.h); NULL = off */
	uint64_t ra_epoch;           /* bumped when the MDS's invalidations were lost:
	                                added to every inode's ra_gen (lock) */
	int null_fd;                 /* /dev/null, to drain WRITE pipes; -1 if none */
	atomic_int rsplice;          /* READ replies spliced from readahead pipes (INIT) */
	cli_fuse_wire wire;          /* INIT flags added to libfuse's reply (fuse_wire.h) */
	int wired;                   /* /dev/fuse goes through wire (cli_fs_wire_io) */
	int kp2;                     /* FUSE_HANDLE_KILLPRIV_V2 is on (INIT): the kernel
	                                leaves killing privileges at writes to us
	                                (kill_privs) */
	pthread_mutex_t lock;
	node *buckets[NODE_BUCKETS]; /* guarded by lock */
	size_t nnodes;               /* guarded by lock */
};

/* An open file: layout, node (alive while nopen > 0) and who opened it:
 * the job id, uid and gid of the opening process, which every OSS request
 * through this file carries (see fh_tag). */
typedef struct fh {
	node *n;
	pfs_layout layout;
	char job[PFS_JOBID_MAX + 1];
	uint32_t uid, gid;
	/* Object capabilities (client/mdc.h cli_caps; NULL without
	 * authentication), swapped under caps_lock when renewed with the
	 * opener's credential; every OSS request takes a reference. */
	pthread_mutex_t caps_lock;
	cli_caps *caps;
	pfs_cred cred;
	int wr;               /* opened for writing (ftruncate needs no W_OK then) */
	cli_ra_stream *ra;    /* its readahead stream; NULL = none */
	/* Created asynchronously (client/dirdeleg.h), no capabilities yet:
	 * its first OSS request waits for the CREATE and asks for them
	 * (fh_caps).  Atomic: cleared once. */
	int acreated;
} fh;

static int fh_renew(cli_fs *fs, fh *h);
static cli_caps *fh_caps(cli_fs *fs, fh *h);
static int wc_write_cb(void *arg, void *owner, uint64_t off, size_t len, const void *buf);
static int wc_writev_cb(void *arg, void *owner, const cli_wc_iov *v, size_t n);
static int wc_same_cb(void *arg, void *a, void *b);
static int wc_grant_cb(void *arg, uint32_t ost, uint64_t want, uint64_t giveback,
		       uint64_t *granted);
static void wc_flush_ino(cli_fs *fs, uint64_t ino);
static int ra_fetch_cb(void *arg, void *owner, uint64_t off, size_t len, void *buf,
		       size_t *got);
static int ra_fetch_pipe_cb(void *arg, void *owner, uint64_t off, size_t len, int pipe_r,
			    int pipe_w, size_t pipe_cap, size_t *got);
static void ra_inval_cb(void *arg, uint64_t ino);
static int sa_fetch_cb(void *arg, const cli_ctx *c, uint64_t dir, const char *after,
		       uint32_t max, cli_sa_ent *out, uint32_t *n, int *eof);
static cli_wc_file *fh_wc(cli_fs *fs, fh *h);
static void dd_order(cli_fs *fs, uint64_t ino);
static void nocap_note(cli_fs *fs, fuse_ino_t ino, const char *name, int absent);
static int dd_create(cli_fs *fs);

int cli_fs_create(cli_mdc *mdc, cli_osc *osc, cli_jobid *jobid, const cli_fs_opts *opts,
		  cli_fs **out)
{
	cli_fs *fs = calloc(1, sizeof(*fs));

	if (!fs)
		return -ENOMEM;
	if (cli_locks_create(mdc, &fs->locks)) {
		free(fs);
		return -ENOMEM;
	}
	fs->mdc = mdc;
	fs->osc = osc;
	fs->jobid = jobid;
	fs->opts = *opts;
	cli_fuse_wire_init(&fs->wire, opts->killpriv_v2 ? CLI_FUSE_HANDLE_KILLPRIV_V2 : 0);
	if (fs->opts.max_io == 0 || fs->opts.max_io > PFS_MAX_IO)
		fs->opts.max_io = PFS_MAX_IO;
	/* Without it a spliced WRITE's pipe is not drained here and libfuse
	 * replaces the pipe instead: slower, not wrong. */
	fs->null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	pthread_mutex_init(&fs->lock, NULL);
	if (opts->wcache.total_bytes) {
		cli_wc_opts wo = opts->wcache;
		int rc;

		wo.write = wc_write_cb;
		wo.writev = wc_writev_cb;
		wo.same = wc_same_cb;
		wo.grant = wc_grant_cb;
		wo.arg = fs;
		rc = cli_wc_create(&wo, &fs->wc);
		if (rc) {
			cli_fs_destroy(fs);
			return rc;
		}
	}
	if (opts->ra.total_bytes && opts->ra.window_bytes) {
		cli_ra_opts ro = opts->ra;
		int rc;

		ro.fetch = ra_fetch_cb;
		if (opts->splice)
			ro.fetch_pipe = ra_fetch_pipe_cb;
		ro.arg = fs;
		rc = cli_ra_create(&ro, &fs->ra);
		if (rc) {
			cli_fs_destroy(fs);
			return rc;
		}
	}
	if (opts->statahead) {
		cli_sa_opts so = { .batch = opts->statahead, .max_entries = opts->statahead_max,
				   .max_age_ms = (unsigned)(opts->statahead_age_s * 1000) + 1,
				   .fetch = sa_fetch_cb, .arg = fs };
		int rc = cli_sa_create(&so, &fs->sa);

		if (rc) {
			cli_fs_destroy(fs);
			return rc;
		}
	}
	/* the MDS's revocations reach the readahead and the statahead */
	if (opts->notify && (fs->ra || fs->sa))
		cli_notify_on_inval(opts->notify, ra_inval_cb, fs);
	if (opts->async_unlink && opts->notify) {
		int rc = dd_create(fs);

		if (rc) {
			cli_fs_destroy(fs);
			return rc;
		}
	}
	*out = fs;
	return 0;
}

void cli_fs_quiesce(cli_fs *fs)
{
	if (fs && fs->dd)
		cli_dd_quiesce(fs->dd);
}

void cli_fs_destroy(cli_fs *fs)
{
	if (!fs)
		return;
	if (fs->dd) {
		cli_dd_stats st;

		/* first: its flushers use the statahead */
		cli_dd_quiesce(fs->dd);
		cli_dd_get_stats(fs->dd, &st);
		pfs_log(PFS_LOG_INFO, "async unlink: %llu unlinks answered at once, %llu sent "
			"synchronously; delegations: %llu got, %llu refused, %llu recalled, "
			"%llu returned, %llu expired; %llu already gone on the MDS, %llu failed, "
			"%llu waits; %llu negative lookups answered locally, %llu directories "
			"listed complete, %llu not; %llu batches of %llu unlinks, largest %u%s; "
			"%llu creates answered at once (%llu closed before sent, %llu failed, "
			"%llu in %llu batches), %llu slot grants, %llu refused",
			(unsigned long long)st.async,
			(unsigned long long)st.sync,
			(unsigned long long)st.got, (unsigned long long)st.refused,
			(unsigned long long)st.recalled, (unsigned long long)st.returned,
			(unsigned long long)st.expired, (unsigned long long)st.gone,
			(unsigned long long)st.errors, (unsigned long long)st.waits,
			(unsigned long long)st.neg_local, (unsigned long long)st.listed,
			(unsigned long long)st.incomplete, (unsigned long long)st.batches,
			(unsigned long long)st.batched, st.batch_max,
			st.batch_off ? " (the MDS refused them)" : "",
			(unsigned long long)st.acreate, (unsigned long long)st.acreate_closed,
			(unsigned long long)st.create_errors, (unsigned long long)st.cbatched,
			(unsigned long long)st.cbatches, (unsigned long long)st.slots_got,
			(unsigned long long)st.slots_refused);
		cli_dd_destroy(fs->dd);
		fs->dd = NULL;
	}
	for (size_t i = 0; i < NODE_BUCKETS; i++) {
		while (fs->buckets[i]) {
			node *n = fs->buckets[i];

			fs->buckets[i] = n->next;
			/* files the kernel never released (a lazy unmount):
			 * their handles were never freed either */
			cli_wc_file_free(n->wc);
			free(n);
		}
	}
	cli_wc_destroy(fs->wc);
	if (fs->sa) {
		cli_sa_stats st;

		cli_sa_get_stats(fs->sa, &st);
		pfs_log(PFS_LOG_INFO, "statahead: %llu hits (%llu waited for a fetch), %llu misses, "
			"%llu fetches (%llu entries, %llu errors, %llu discarded), %llu evicted, "
			"%llu expired, %llu dropped, %llu jumps, %llu late, %llu backoffs",
			(unsigned long long)st.hits,
			(unsigned long long)st.waits, (unsigned long long)st.misses,
			(unsigned long long)st.fetches, (unsigned long long)st.fetched,
			(unsigned long long)st.fetch_errors, (unsigned long long)st.discarded,
			(unsigned long long)st.evicted, (unsigned long long)st.expired,
			(unsigned long long)st.dropped, (unsigned long long)st.jumps,
			(unsigned long long)st.behind, (unsigned long long)st.backoffs);
		cli_sa_destroy(fs->sa);
	}
	if (fs->ra) {
		cli_ra_stats st;

		cli_ra_stats_get(fs->ra, &st);
		pfs_log(PFS_LOG_INFO, "readahead: %llu hits (units ready %llu, waited for %llu, "
			"fetched by the READ %llu), %llu misses, %llu prefetches "
			"(%llu MiB, %llu MiB unused), %llu errors, %llu stale, %llu without room, "
			"peak %llu MiB", (unsigned long long)st.hits, (unsigned long long)st.ready,
			(unsigned long long)st.waits, (unsigned long long)st.fetched_here,
			(unsigned long long)st.misses,
			(unsigned long long)st.fetches,
			(unsigned long long)(st.fetched_bytes >> 20),
			(unsigned long long)(st.unused_bytes >> 20),
			(unsigned long long)st.fetch_errors, (unsigned long long)st.stale_drops,
			(unsigned long long)st.no_room, (unsigned long long)(st.peak_bytes >> 20));
		pfs_log(PFS_LOG_INFO, "readahead: %llu units in pipes, %llu READs spliced from "
			"them, %llu read back into memory", (unsigned long long)st.piped,
			(unsigned long long)st.pipe_hits, (unsigned long long)st.materialized);
		cli_ra_destroy(fs->ra);
	}
	if (fs->null_fd >= 0)
		close(fs->null_fd);
	cli_locks_destroy(fs->locks);
	pthread_mutex_destroy(&fs->lock);
	free(fs);
}

cli_locks *cli_fs_locks(cli_fs *fs)
{
	return fs->locks;
}

size_t cli_fs_inode_count(cli_fs *fs)
{
	size_t n;

	pthread_mutex_lock(&fs->lock);
	n = fs->nnodes;
	pthread_mutex_unlock(&fs->lock);
	return n;
}

/* ---- inode table (call with fs->lock held) ---- */

static node **node_slot(cli_fs *fs, uint64_t ino)
{
	node **pp = &fs->buckets[(ino * 0x9E3779B97F4A7C15ull) >> 52];

	while (*pp && (*pp)->ino != ino)
		pp = &(*pp)->next;
	return pp;
}

static node *node_find(cli_fs *fs, uint64_t ino)
{
	return *node_slot(fs, ino);
}

static node *node_get(cli_fs *fs, uint64_t ino)
{
	node **pp = node_slot(fs, ino);

	if (!*pp) {
		*pp = calloc(1, sizeof(**pp));
		if (!*pp)
			return NULL;
		(*pp)->ino = ino;
		fs->nnodes++;
	}
	return *pp;
}

static void node_maybe_free(cli_fs *fs, node *n)
{
	node **pp;

	if (n->nlookup || n->nopen || n->wcpin)
		return;
	pp = node_slot(fs, n->ino);
	*pp = n->next;
	fs->nnodes--;
	free(n);
}

/* ---- helpers ---- */

static cli_fs *fs_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

/* FUSE_INTERRUPT: ctx_of and ctx_fh arm the worker's flag for req; the
 * RPC layer's waits for a server in recovery (common/rpc.h) check it and
 * end with -EINTR once the kernel interrupts the request. */
static _Thread_local atomic_int intr_flag;

static void on_interrupt(fuse_req_t req, void *data)
{
	atomic_store((atomic_int *)data, 1);
}

static int intr_check(void *arg)
{
	return atomic_load((atomic_int *)arg);
}

static void intr_arm(fuse_req_t req)
{
	atomic_store(&intr_flag, 0);
	pfs_rpc_set_interrupt(intr_check, &intr_flag);
	fuse_req_interrupt_func(req, on_interrupt, &intr_flag);
}

/* Requests through an open file (read, write, flush, fsync, release): uid
 * and gid of the caller, and the job id remembered at open.  Access was
 * checked at open, so no groups are needed.  The job id is not read from
 * /proc here on purpose: a READ may come from a page fault on an mmap of
 * this file system, with the faulting process holding its mmap lock, and
 * reading its /proc/PID/environ needs that lock too (a deadlock as soon as
 * a writer queues on the lock in between). */
static void ctx_fh(fuse_req_t req, const fh *h, cli_ctx *c)
{
	const struct fuse_ctx *fc = fuse_req_ctx(req);

	intr_arm(req);
	memset(c, 0, sizeof(*c));
	c->cred.uid = fc->uid;
	c->cred.gid = fc->gid;
	memcpy(c->job, h->job, sizeof(c->job));
}

/* Who the OSS requests through an open file are for: its opener, for the
 * same reason as the job id (and because the kernel's own requests on a
 * file, readahead and writeback, come with a uid/gid of 0 or of whichever
 * process happened to trigger them).  The OSS's uid=/gid= QoS rules thus
 * see one identity per open file, the one its job id belongs to.  The tag
 * borrows h, which lives until RELEASE. */
static pfs_rpc_tag fh_tag(const fh *h)
{
	return (pfs_rpc_tag){ .job = h->job, .uid = h->uid, .gid = h->gid };
}

/* Full credentials (with supplementary groups) and job id: for namespace
 * requests, where the MDS checks permissions, and for OPEN/CREATE. */
static void ctx_of(fuse_req_t req, cli_ctx *c)
{
	const struct fuse_ctx *fc = fuse_req_ctx(req);
	uint64_t now = pfs_clock_ms();

	intr_arm(req);
	memset(c, 0, sizeof(*c));
	c->cred.uid = fc->uid;
	c->cred.gid = fc->gid;
	cli_jobid_get(fs_of(req)->jobid, fc->pid, fc->uid, now, c->job);
	/* From /proc/PID/status, cached per pid like the job id; a process
	 * that is gone gets only its primary group.  A caller in more than
	 * PFS_MAX_GROUPS groups is judged on the first ones. */
	c->cred.ngroups = cli_jobid_groups(fs_of(req)->jobid, fc->pid, fc->uid, fc->gid, now,
					   c->cred.groups, PFS_MAX_GROUPS);
}

/* errno for the kernel: transport and protocol failures become EIO. */
static void reply_err(fuse_req_t req, int rc)
{
	int e = -rc;

	if (rc >= 0 || e >= 4096)
		e = EIO;
	else if (e == EBADMSG || e == EPROTO || e == EPROTONOSUPPORT || e == EMSGSIZE)
		e = EIO;
	fuse_reply_err(req, e);
}

/* Note the truncate epoch of fresh attributes (fs->lock held).  A newer
 * one means a truncate (here or on another mount) set the size since this
 * mount's unpushed writes: their high-water mark is dropped, since the MDS
 * would refuse it anyway (mds_ns_setsize_epoch) and it must not keep the
 * kernel seeing the old size.  Replies that arrive out of order never move
 * the epoch back. */
static void note_epoch(node *n, const pfs_attr *a)
{
	if (!S_ISREG(a->mode))
		return;
	if (n->have_epoch && (int32_t)(a->tepoch - n->tepoch) <= 0)
		return;
	if (n->have_epoch) {
		n->dirty = 0;
		n->hw = 0;
	}
	n->tepoch = a->tepoch;
	n->have_epoch = 1;
}

/* The page cache of n may be kept at an open with fresh attributes a
 * (keep_cache) when the data cannot have changed since this mount last saw
 * it: same size, mtime and ctime (the change attribute: the MDS sets ctime
 * from its own clock at every SETSIZE carrying a writer's mtime and every
 * SETATTR, so a same-size overwrite by another mount, closed since, or an
 * mtime put back with utimens, changes it).  fs->lock held. */
static int seen_same(const node *n, const pfs_attr *a)
{
	return n->have_seen && n->seen_size == a->size && n->seen_mtime == a->mtime_ns &&
	       n->seen_ctime == a->ctime_ns;
}

/* Remember a as what this mount's cache of n holds (fs->lock held).  Not
 * while another client may be writing (PFS_ATTR_SIZE_STALE without a
 * writer of ours): its bytes reach the OSSes before anything changes on
 * the MDS, and a writer that set an explicit mtime pushes no new ctime at
 * its close. */
static void note_seen(node *n, const pfs_attr *a)
{
	n->have_seen = !(a->flags & PFS_ATTR_SIZE_STALE) || n->nwr > 0;
	n->seen_size = a->size;
	n->seen_mtime = a->mtime_ns;
	n->seen_ctime = a->ctime_ns;
}

/* Note fresh attributes of a known inode and return the size the kernel
 * should see: unpushed local writes count.  The root is always known (the
 * kernel holds it without a LOOKUP, so it never gets a FORGET either). */
static uint64_t visible_size(cli_fs *fs, const pfs_attr *a)
{
	uint64_t size = a->size;
	node *n;

	pthread_mutex_lock(&fs->lock);
	n = a->ino == FUSE_ROOT_ID ? node_get(fs, a->ino) : node_find(fs, a->ino);
	if (n) {
		n->size = a->size;
		n->mode = a->mode;
		note_epoch(n, a);
		if (n->dirty && n->hw > size)
			size = n->hw;
	}
	pthread_mutex_unlock(&fs->lock);
	return size;
}

/* How long the kernel may cache a name in directory parent.
 *
 * Without default_permissions the kernel checks no search (x) permission
 * while walking a path: a cached dentry is used by every user, and the MDS,
 * which checks search permission at LOOKUP, never sees the walk.  So a name
 * is cached only below a directory that everyone may search (mode & 0111 ==
 * 0111, the common 0755); below any other (0700, 0750) it gets no entry
 * timeout and every walk through it is a LOOKUP with the walker's
 * credentials.  A chmod of the directory takes effect for names already
 * cached within the entry timeout, like any other attribute change.
 *
 * With metadata leases (client/notify.h) the timeout may be the lease:
 * another mount's chmod or chown of the directory then makes the MDS
 * revoke it, and the names cached below it are dropped at once. */
static int searchable(cli_fs *fs, uint64_t parent)
{
	node *n;
	int open = 0;

	pthread_mutex_lock(&fs->lock);
	n = node_find(fs, parent);
	if (n && S_ISDIR(n->mode) && (n->mode & 0111) == 0111)
		open = 1;
	pthread_mutex_unlock(&fs->lock);
	return open;
}

static double entry_timeout(cli_fs *fs, uint64_t parent, const char *name, const pfs_attr *a)
{
	int open = searchable(fs, parent);

	if (!fs->opts.notify)
		return open ? fs->opts.attr_timeout : 0;
	return cli_notify_entry_timeout(fs->opts.notify, open ? fs->opts.attr_timeout : 0,
					parent, name, a);
}

/* How long the kernel may cache attributes a: attr_timeout, or up to the
 * lease while the notify channel is up, except for a size that may move
 * without the MDS knowing (a writer has the file open somewhere, or this
 * mount has writes it has not pushed): there the kernel asks again after
 * attr_timeout, as before (the glimpse). */
static double attr_timeout(cli_fs *fs, const pfs_attr *a)
{
	node *n;
	int mine = 0;

	if (!fs->opts.notify)
		return fs->opts.attr_timeout;
	if (S_ISREG(a->mode)) {
		if (a->flags & PFS_ATTR_SIZE_STALE)
			return fs->opts.attr_timeout;
		pthread_mutex_lock(&fs->lock);
		n = node_find(fs, a->ino);
		mine = n && n->dirty;
		pthread_mutex_unlock(&fs->lock);
		if (mine)
			return fs->opts.attr_timeout;
	}
	return cli_notify_attr_timeout(fs->opts.notify, fs->opts.attr_timeout);
}

static void attr_to_stat(cli_fs *fs, const pfs_attr *a, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = a->ino;
	st->st_mode = a->mode;
	st->st_nlink = a->nlink;
	st->st_uid = a->uid;
	st->st_gid = a->gid;
	st->st_rdev = a->rdev;
	st->st_size = (off_t)visible_size(fs, a);
	st->st_blocks = (blkcnt_t)a->blocks;
	st->st_blksize = 1 << 20; /* large I/O buffers in cp, dd, stdio */
	st->st_atim.tv_sec = a->atime_ns / 1000000000;
	st->st_atim.tv_nsec = a->atime_ns % 1000000000;
	st->st_mtim.tv_sec = a->mtime_ns / 1000000000;
	st->st_mtim.tv_nsec = a->mtime_ns % 1000000000;
	st->st_ctim.tv_sec = a->ctime_ns / 1000000000;
	st->st_ctim.tv_nsec = a->ctime_ns % 1000000000;
}

/* Reply with the entry of a name in parent; the kernel now holds one more
 * lookup reference.  age > 0 (seconds): a came from the statahead cache
 * that long ago, the kernel gets what is left of the timeouts; none left:
 * -ESTALE, nothing replied. */
static int reply_entry_aged(fuse_req_t req, uint64_t parent, const char *name,
			    const pfs_attr *a, double age)
{
	cli_fs *fs = fs_of(req);
	struct fuse_entry_param e;
	node *n;

	memset(&e, 0, sizeof(e));
	e.ino = a->ino;
	e.attr_timeout = attr_timeout(fs, a);
	e.entry_timeout = entry_timeout(fs, parent, name, a);
	if (age > 0) {
		if (e.attr_timeout <= age || e.entry_timeout <= age)
			return -ESTALE;
		e.attr_timeout -= age;
		e.entry_timeout -= age;
	}
	pthread_mutex_lock(&fs->lock);
	n = node_get(fs, a->ino);
	if (n)
		n->nlookup++;
	pthread_mutex_unlock(&fs->lock);
	if (!n) {
		fuse_reply_err(req, ENOMEM);
		return 0;
	}
	attr_to_stat(fs, a, &e.attr);
	/* what this mount's unlink of the name will expect (dirdeleg.h) */
	if (fs->dd)
		cli_dd_note_entry(fs->dd, parent, name, a->ino, a->mode);
	if (fuse_reply_entry(req, &e)) {
		/* Interrupted: the kernel did not take the reference. */
		pthread_mutex_lock(&fs->lock);
		n->nlookup--;
		node_maybe_free(fs, n);
		pthread_mutex_unlock(&fs->lock);
	}
	return 0;
}

static void reply_entry(fuse_req_t req, uint64_t parent, const char *name, const pfs_attr *a)
{
	(void)reply_entry_aged(req, parent, name, a, 0);
}

static void reply_attr(fuse_req_t req, const pfs_attr *a)
{
	struct stat st;

	attr_to_stat(fs_of(req), a, &st);
	fuse_reply_attr(req, &st, attr_timeout(fs_of(req), a));
}

/* The 512-byte blocks h's objects use (OSS_STAT of each, in parallel;
 * the capabilities renewed once on -EKEYEXPIRED), for st_blocks: the MDS
 * stores what the SETSIZE of a close or fsync brings.  On any failure
 * CLI_MDC_BLOCKS_UNKNOWN (the MDS keeps what it had).  Cost: one OSS_STAT
 * per stripe object at each size push (bench/RESULTS.md "st_blocks"). */
static uint64_t fh_blocks(cli_fs *fs, fh *h)
{
	pfs_rpc_tag tag = fh_tag(h);
	uint64_t blocks = CLI_MDC_BLOCKS_UNKNOWN;
	cli_caps *caps = fh_caps(fs, h);
	int rc = cli_osc_stat_caps(fs->osc, &tag, &h->layout, caps, &blocks);

	if (rc == -EKEYEXPIRED && fh_renew(fs, h) == 0) {
		cli_caps_put(caps);
		caps = fh_caps(fs, h);
		rc = cli_osc_stat_caps(fs->osc, &tag, &h->layout, caps, &blocks);
	}
	cli_caps_put(caps);
	if (rc) {
		pfs_log(PFS_LOG_DEBUG, "ino %llu: blocks of its objects: %s",
			(unsigned long long)h->n->ino, pfs_strerror(rc));
		return CLI_MDC_BLOCKS_UNKNOWN;
	}
	return blocks;
}

/* Push this client's high-water mark to the MDS (grow-only SETSIZE);
 * *sent (may be NULL) = 1 when a SETSIZE was answered, whose reply means
 * the MDS has the size on disk (mds/README.md "Transactions and
 * durability").  The call goes through the RPC layer's resends for the
 * recovery window (recovery_window_s), so an MDS restarting meanwhile
 * gets it; only after the window does it fail (-EIO). */
static int push_size_sent(cli_fs *fs, const cli_ctx *c, fh *h, int *sent)
{
	node *n = h->n;
	pfs_attr a;
	uint64_t hw, epoch, blocks;
	int64_t mt;
	int rc;

	if (sent)
		*sent = 0;
	pthread_mutex_lock(&fs->lock);
	if (!n->dirty) {
		pthread_mutex_unlock(&fs->lock);
		return 0;
	}
	hw = n->hw;
	mt = n->wmtime;
	/* The MDS keeps the size if a truncate came after the epoch we
	 * saw: our bytes from before it were cut with the objects. */
	epoch = n->have_epoch ? n->tepoch : CLI_MDC_EPOCH_ANY;
	pthread_mutex_unlock(&fs->lock);
	/* after every write this push covers: they are on the OSSes */
	blocks = fh_blocks(fs, h);
	/* after this mount's pending CREATE or unlink of the file */
	dd_order(fs, n->ino);

	/* dirty stays set during the call, so GETATTR keeps reporting the
	 * high-water mark until the MDS has it; on failure it stays set for
	 * the next flush/fsync/release. */
	rc = cli_mdc_setsize_epoch(fs->mdc, c, n->ino, hw, mt, epoch, blocks, &a);
	cli_sa_drop_ino(fs->sa, n->ino);
	pthread_mutex_lock(&fs->lock);
	if (rc == 0) {
		/* Writes that came in meanwhile still need their own push. */
		if (n->hw == hw && n->wmtime == mt)
			n->dirty = 0;
		note_epoch(n, &a);
		n->size = a.size;
		/* Our own writes went through the page cache: what we see
		 * now is what the cache holds, so the next open may keep it. */
		note_seen(n, &a);
		if (sent)
			*sent = 1;
	}
	pthread_mutex_unlock(&fs->lock);
	return rc;
}

static int push_size(cli_fs *fs, const cli_ctx *c, fh *h)
{
	return push_size_sent(fs, c, h, NULL);
}

/* Size recovery (issue 8 item 2; client/README.md "Durability"): a is
 * flagged PFS_ATTR_SIZE_STALE when a client opened the file for writing
 * and has not closed it; it may hold a size it never pushed, or have died
 * holding it (its lease then ended without CLOSE).  Unless this mount has
 * unpushed writes of its own (its size counts already, visible_size),
 * glimpse the size from the objects (OSS_STAT of each, through lay and caps
 * or, NULL, a GETLAYOUT's) and, when it is larger, make it a's; then push
 * it (grow-only SETSIZE with the truncate epoch seen in a, so a truncate
 * since wins), which also lets the MDS clear the flag when no writer is
 * open any more.  Files without the flag cost nothing; a failure leaves a
 * as the MDS sent it.  1 if a was flagged and not this mount's to
 * size (a glimpse was tried), else 0. */
static int glimpse(cli_fs *fs, const cli_ctx *c, pfs_attr *a, const pfs_layout *lay,
		   const cli_caps *caps)
{
	pfs_rpc_tag tag = { 0 };
	pfs_layout own;
	cli_caps *own_caps = NULL;
	uint64_t size, blocks;
	pfs_attr b;
	node *n;
	int rc, mine;

	if (!S_ISREG(a->mode) || !(a->flags & PFS_ATTR_SIZE_STALE))
		return 0;
	pthread_mutex_lock(&fs->lock);
	n = node_find(fs, a->ino);
	mine = n && n->dirty;
	pthread_mutex_unlock(&fs->lock);
	if (mine)
		return 0;
	if (!lay) {
		rc = cli_mdc_getlayout_caps(fs->mdc, c, a->ino, &own, &own_caps);
		if (rc)
			goto out;
		lay = &own;
		caps = own_caps;
	}
	tag.job = c->job;
	tag.uid = c->cred.uid;
	tag.gid = c->cred.gid;
	rc = cli_osc_glimpse_caps(fs->osc, &tag, lay, caps, &size, &blocks);
	if (rc)
		goto out;
	if (size > a->size)
		a->size = size;
	rc = cli_mdc_setsize_epoch(fs->mdc, c, a->ino, size, 0, a->tepoch, blocks, &b);
	if (rc == 0 && b.tepoch == a->tepoch)
		*a = b;
out:
	if (rc)
		pfs_log(PFS_LOG_DEBUG, "ino %llu: glimpse of its size: %s",
			(unsigned long long)a->ino, pfs_strerror(rc));
	cli_caps_put(own_caps);
	return 1;
}

/* ---- operations ---- */

/* ---- /dev/fuse I/O (fuse_wire.h): the system calls libfuse would make,
 * with requests and replies shown to the wire on the way. ---- */

static ssize_t wire_read(int fd, void *buf, size_t len, void *userdata)
{
	cli_fs *fs = userdata;
	ssize_t n = read(fd, buf, len);
	int e = errno; /* libfuse reads errno after this returns */

	if (n > 0)
		cli_fuse_wire_saw_request(&fs->wire, buf, (size_t)n);
	errno = e;
	return n;
}

static ssize_t wire_writev(int fd, struct iovec *iov, int count, void *userdata)
{
	cli_fs *fs = userdata;
	struct iovec out[8];

	if (count > (int)(sizeof(out) / sizeof(out[0])) ||
	    !cli_fuse_wire_edit_reply(&fs->wire, iov, count, out))
		return writev(fd, iov, count);
	return writev(fd, out, count);
}

static ssize_t wire_splice(int fdin, off_t *offin, int fdout, off_t *offout, size_t len,
			   unsigned int flags, void *userdata)
{
	return splice(fdin, offin, fdout, offout, len, flags);
}

int cli_fs_wire_io(cli_fs *fs, struct fuse_session *se)
{
#ifdef FUSE_CAP_HANDLE_KILLPRIV_V2
	return 0; /* libfuse announces it itself (op_init) */
#else
	static const struct fuse_custom_io io = {
		.read = wire_read,
		.writev = wire_writev,
		.splice_receive = wire_splice,
		.splice_send = wire_splice,
	};
	int rc;

	if (!fs->wire.want)
		return 0;
	rc = fuse_session_custom_io(se, &io, fuse_session_fd(se));
	fs->wired = rc == 0;
	return rc;
#endif
}

static void op_init(void *userdata, struct fuse_conn_info *conn)
{
	cli_fs *fs = userdata;

	conn->max_write = fs->opts.max_io;
	conn->max_read = fs->opts.max_io;
	conn->max_readahead = fs->opts.max_io;
	/* Write-through, so size and data reach the servers at write time,
	 * unless the writeback option asks for the kernel's cache (client/
	 * README.md "Write-back and readahead"). */
	if (fs->opts.writeback && (conn->capable & FUSE_CAP_WRITEBACK_CACHE)) {
		conn->want |= FUSE_CAP_WRITEBACK_CACHE;
		fs->wb = 1;
	} else {
		conn->want &= ~(unsigned)FUSE_CAP_WRITEBACK_CACHE;
		if (fs->opts.writeback)
			pfs_log(PFS_LOG_WARNING, "writeback: the kernel offers no write-back "
				"cache; writing through");
	}
	/* Requests the kernel sends without a caller waiting (readahead,
	 * write-back): more in flight, so a stream keeps several OSSes busy
	 * (libfuse's default is 12; the kernel's congestion mark 3/4 of it). */
	conn->max_background = 64;
	conn->congestion_threshold = 48;
	/* The kernel truncates with SETATTR before OPEN, so open never sees
	 * O_TRUNC and truncation has one code path. */
	conn->want &= ~(unsigned)FUSE_CAP_ATOMIC_O_TRUNC;
	if (conn->capable & FUSE_CAP_PARALLEL_DIROPS)
		conn->want |= FUSE_CAP_PARALLEL_DIROPS;
	/* Set-id bits and security.capability.  Without HANDLE_KILLPRIV_V2
	 * the kernel drops them itself before a write or truncate by a
	 * caller without CAP_FSETID (a chmod computed from fresh attributes,
	 * which the MDS accepts from a writer as it only drops set-id bits),
	 * and to know whether there is anything to drop it asks for
	 * security.capability before every write(2): a second FUSE round
	 * trip per write.  With V2 it marks inodes it found clean S_NOSEC
	 * and asks once; a truncate or chown then carries KILL_SUIDGID
	 * (op_setattr) and a write relies on us (kill_privs).  libfuse 3.14
	 * cannot announce V2: fuse_wire.h adds it to the INIT reply.  V1
	 * (HANDLE_KILLPRIV) would skip the kernel's refresh and is not
	 * asked for. */
	conn->want &= ~(unsigned)FUSE_CAP_HANDLE_KILLPRIV;
#ifdef FUSE_CAP_HANDLE_KILLPRIV_V2
	if (fs->opts.killpriv_v2 && (conn->capable & FUSE_CAP_HANDLE_KILLPRIV_V2)) {
		conn->want |= FUSE_CAP_HANDLE_KILLPRIV_V2;
		fs->kp2 = 1;
	}
#else
	fs->kp2 = fs->opts.killpriv_v2 && fs->wired &&
		  cli_fuse_wire_offered(&fs->wire, CLI_FUSE_HANDLE_KILLPRIV_V2);
#endif
	if (fs->kp2)
		pfs_log(PFS_LOG_NOTICE, "fuse: handle_killpriv_v2 on: set-id bits and "
			"security.capability are dropped at writes by this mount");
	else if (fs->opts.killpriv_v2)
		pfs_log(PFS_LOG_NOTICE, "fuse: no HANDLE_KILLPRIV_V2 (%s): the kernel asks for "
			"security.capability before each write",
			fs->wired ? "the kernel does not offer it" : "no custom /dev/fuse I/O");
	/* WRITE data through a pipe (see op_write_buf). */
	if (fs->opts.splice && (conn->capable & FUSE_CAP_SPLICE_READ))
		conn->want |= FUSE_CAP_SPLICE_READ;
	else
		conn->want &= ~(unsigned)FUSE_CAP_SPLICE_READ;
	/* READ replies from readahead pipes spliced into /dev/fuse (ra_serve);
	 * fuse_reply_data is used for nothing else. */
	if (fs->opts.splice && fs->ra && (conn->capable & FUSE_CAP_SPLICE_WRITE)) {
		conn->want |= FUSE_CAP_SPLICE_WRITE;
		atomic_store(&fs->rsplice, 1);
	} else {
		conn->want &= ~(unsigned)FUSE_CAP_SPLICE_WRITE;
	}
	pfs_log(PFS_LOG_INFO, "fuse: max_write %u max_read %u, capable 0x%x want 0x%x%s",
		conn->max_write, conn->max_read, conn->capable, conn->want,
		fs->kp2 ? ", handle_killpriv_v2" : "");
}

/* ---- statahead (client/statahead.h; the rules: statahead.c) ---- */

static int sa_fetch_cb(void *arg, const cli_ctx *c, uint64_t dir, const char *after,
		       uint32_t max, cli_sa_ent *out, uint32_t *n, int *eof)
{
	cli_fs *fs = arg;

	return cli_mdc_lookup_bulk(fs->mdc, c, dir, after, max, out, n, eof);
}

/* Answer a LOOKUP below parent, a directory everyone may search
 * (searchable), from the statahead cache: 1 = replied, 0 = ask the MDS. */
static int sa_serve(fuse_req_t req, cli_fs *fs, const cli_ctx *c, uint64_t parent,
		    const char *name)
{
	pfs_attr a;
	uint64_t age_ms;
	node *n;
	int mine = 0;

	if (cli_sa_lookup(fs->sa, c, parent, name, &a, &age_ms))
		return 0;
	/* sizes a writer may move: the glimpse; hard links: nlink moves unseen */
	if (!S_ISDIR(a.mode) && (a.nlink != 1 || (a.flags & PFS_ATTR_SIZE_STALE)))
		return 0;
	pthread_mutex_lock(&fs->lock);
	n = node_find(fs, a.ino);
	mine = n && (n->dirty || n->nwr);
	pthread_mutex_unlock(&fs->lock);
	if (mine)
		return 0;
	return reply_entry_aged(req, parent, name, &a, age_ms / 1000.0 + 1e-6) == 0;
}

/* This mount changed name in parent (and so parent's times). */
static void sa_changed(cli_fs *fs, uint64_t parent, const char *name)
{
	if (fs->dd)
		cli_dd_forget_name(fs->dd, parent, name);
	if (!fs->sa)
		return;
	cli_sa_drop_name(fs->sa, parent, name);
	cli_sa_drop_ino(fs->sa, parent);
}

/* ---- asynchronous unlink (client/dirdeleg.h) ---- */

static int dd_unlink_cb(void *arg, const cli_ctx *c, uint64_t dir, const char *name,
			uint64_t ino)
{
	cli_fs *fs = arg;

	/* PADLL admitted it in the application's thread (dd_charge_cb) */
	return cli_mdc_unlink_ino(fs->mdc, c, dir, name, ino, CLI_MDC_CHARGED);
}

static int dd_batch_cb(void *arg, const cli_ctx *c, uint64_t dir, unsigned n,
		       const char *const *names, const uint64_t *inos, int *status)
{
	cli_fs *fs = arg;

	/* as dd_unlink_cb: each was charged when it was answered */
	return cli_mdc_unlink_batch(fs->mdc, c, dir, n, names, inos, status, CLI_MDC_CHARGED);
}

static int dd_slots_cb(void *arg, const cli_ctx *c, uint64_t dir, uint32_t n, uint64_t *inos,
		       pfs_layout *lays, pfs_attr *dir_attr)
{
	cli_fs *fs = arg;

	return cli_mdc_create_slots(fs->mdc, c, dir, n, inos, lays, dir_attr);
}

static int dd_cbatch_cb(void *arg, const cli_ctx *c, uint64_t dir, unsigned n,
		       const char *const *names, const uint32_t *modes, const int *closed,
		       const uint64_t *inos, int *status)
{
	cli_fs *fs = arg;

	/* PADLL admitted each in the application's thread when it was
	 * answered (dd_charge_create_cb) */
	return cli_mdc_create_batch(fs->mdc, c, dir, n, names, modes, closed, inos, status);
}

static void dd_charge_create_cb(void *arg, const char *job)
{
	cli_fs *fs = arg;

	cli_mdc_charge(fs->mdc, job, PFS_OP_MDS_CREATE);
}

static int dd_get_cb(void *arg, const cli_ctx *c, uint64_t dir, uint32_t *lease_ms)
{
	cli_fs *fs = arg;

	return cli_mdc_deleg_get(fs->mdc, c, dir, lease_ms, NULL);
}

static int dd_return_cb(void *arg, const cli_ctx *c, uint64_t dir)
{
	cli_fs *fs = arg;

	return cli_mdc_deleg_return(fs->mdc, c, dir);
}

static int dd_up_cb(void *arg)
{
	cli_fs *fs = arg;

	return cli_notify_up(fs->opts.notify);
}

static void dd_charge_cb(void *arg, const char *job)
{
	cli_fs *fs = arg;

	cli_mdc_charge(fs->mdc, job, PFS_OP_MDS_UNLINK);
}

/* A pending unlink was answered: a statahead fetch the MDS answered
 * before it may hold the name (fetches answered later are discarded by
 * the statahead's own drop generations). */
static void dd_done_cb(void *arg, uint64_t dir, const char *name)
{
	cli_fs *fs = arg;

	if (fs->sa) {
		cli_sa_drop_name(fs->sa, dir, name);
		cli_sa_drop_ino(fs->sa, dir);
	}
}

static int dd_list_cb(void *arg, const cli_ctx *c, uint64_t dir, const char *after, uint32_t max,
		      cli_bulkent *out, uint32_t *n, int *eof)
{
	cli_fs *fs = arg;

	return cli_mdc_lookup_bulk(fs->mdc, c, dir, after, max, out, n, eof);
}

static void dd_recall_cb(void *arg, uint64_t dir)
{
	cli_fs *fs = arg;

	cli_dd_recall(fs->dd, dir);
}

static int dd_create(cli_fs *fs)
{
	cli_dd_opts o = { .max_pending = fs->opts.async_unlink_max,
			  .nice = fs->opts.async_unlink_nice,
			  .hold_ms = fs->opts.async_hold_ms,
			  .ops = { .unlink = dd_unlink_cb, .unlink_batch = dd_batch_cb,
				   .deleg_get = dd_get_cb,
				   .deleg_return = dd_return_cb, .up = dd_up_cb,
				   .charge = dd_charge_cb, .done = dd_done_cb, .arg = fs } };
	int rc;

	if (fs->opts.neg_local)
		o.ops.list = dd_list_cb;
	if (fs->opts.neg_local && fs->opts.async_create) {
		o.ops.create_slots = dd_slots_cb;
		o.ops.create_batch = dd_cbatch_cb;
		o.ops.charge_create = dd_charge_create_cb;
	}
	rc = cli_dd_create(&o, &fs->dd);
	if (rc == 0)
		cli_notify_on_recall(fs->opts.notify, dd_recall_cb, fs);
	return rc;
}

/* Before an MDS request naming ino (as its inode or as the parent
 * directory): this mount's pending unlinks of it or in it are answered
 * first. */
static void dd_order(cli_fs *fs, uint64_t ino)
{
	if (fs->dd)
		cli_dd_wait(fs->dd, ino);
}

/* Before RENAME, RMDIR and LINK, which may move names across
 * directories: every pending unlink. */
static void dd_order_all(cli_fs *fs)
{
	if (fs->dd)
		cli_dd_wait_all(fs->dd);
}

/* A LOOKUP of a name this mount unlinked and has not sent yet: ENOENT
 * (never the entry the MDS still has). */
static int dd_gone(cli_fs *fs, uint64_t parent, const char *name)
{
	return fs->dd && cli_dd_pending_name(fs->dd, parent, name);
}

/* The send time of a mutation in a directory (cli_dd_mutated). */
static uint64_t dd_now(cli_fs *fs)
{
	return fs->dd ? cli_dd_now(fs->dd) : 0;
}

/* This mount's mutation of name in dir was answered rc (before the
 * kernel hears of it): the name set of a complete directory follows. */
static void dd_mutated(cli_fs *fs, const cli_ctx *c, uint64_t dir, const char *name, int add,
		       uint64_t sent, int rc)
{
	if (fs->dd)
		cli_dd_mutated(fs->dd, c, dir, name, add, sent, rc);
}

/* A create or a negative LOOKUP, answered: a streak asks for dir. */
static void dd_touch(cli_fs *fs, const cli_ctx *c, uint64_t dir)
{
	if (fs->dd)
		cli_dd_touch(fs->dd, c, dir);
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	cli_fs *fs = fs_of(req);
	int sa = fs->sa && searchable(fs, parent); /* statahead serves and learns here */
	cli_ctx c;
	pfs_attr a;
	int rc;

	ctx_of(req, &c);
	if (dd_gone(fs, parent, name) || (fs->dd && cli_dd_negative(fs->dd, &c, parent, name))) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	if (sa && sa_serve(req, fs, &c, parent, name))
		return;
	rc = cli_mdc_lookup(fs->mdc, &c, parent, name, &a);
	if (!rc && sa)
		cli_sa_miss(fs->sa, &c, parent, name);
	if (!rc)
		glimpse(fs, &c, &a, NULL, NULL);
	/* unlinked here while the MDS answered */
	if (!rc && dd_gone(fs, parent, name))
		rc = -ENOENT;
	if (rc)
		reply_err(req, rc);
	else
		reply_entry(req, parent, name, &a);
	if (rc == -ENOENT)
		dd_touch(fs, &c, parent);
}

static void forget_one(cli_fs *fs, fuse_ino_t ino, uint64_t nlookup)
{
	node *n = node_find(fs, ino);

	if (!n)
		return;
	n->nlookup = n->nlookup > nlookup ? n->nlookup - nlookup : 0;
	node_maybe_free(fs, n);
}

static void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	cli_fs *fs = fs_of(req);

	pthread_mutex_lock(&fs->lock);
	forget_one(fs, ino, nlookup);
	pthread_mutex_unlock(&fs->lock);
	fuse_reply_none(req);
}

static void op_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
	cli_fs *fs = fs_of(req);

	pthread_mutex_lock(&fs->lock);
	for (size_t i = 0; i < count; i++)
		forget_one(fs, forgets[i].ino, forgets[i].nlookup);
	pthread_mutex_unlock(&fs->lock);
	fuse_reply_none(req);
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	cli_ctx c;
	pfs_attr a;
	int rc;

	ctx_of(req, &c);
	dd_order(fs_of(req), ino);
	rc = cli_mdc_getattr(fs_of(req)->mdc, &c, ino, &a);
	if (!rc)
		glimpse(fs_of(req), &c, &a, NULL, NULL);
	if (rc)
		reply_err(req, rc);
	else
		reply_attr(req, &a);
}

/* Truncation order: the MDS first, then the objects.
 *
 * The MDS decides (permission, the file still exists) and its size is
 * authoritative: reads are clipped to it, so bytes past it on the objects
 * are garbage nobody sees.  Cutting the objects only after the MDS
 * accepted means a refused truncate (EACCES, EPERM, ENOENT) never touches
 * data.  A crash between the two leaves objects longer than the size;
 * the next truncate cuts them, and until then a write past the end or a
 * truncate up could show those old bytes again inside the new size (the
 * scrubber of issue 8 item 1 is where such tails would be reclaimed).
 * The other order lost data: an ftruncate refused by the MDS had already
 * zeroed every byte past the requested size.
 *
 * Through a descriptor opened for writing (ftruncate, or the kernel's
 * O_TRUNC at open) the MDS is told so (PFS_SETATTR_FD): POSIX allows it
 * whatever the mode says now. */
/* Cut or extend ino's objects to size, after the MDS accepted it: through
 * the open file's layout and capabilities (ftruncate, for its opener), else
 * with the caller's (truncate). */
static int truncate_objects(cli_fs *fs, const cli_ctx *c, fuse_ino_t ino,
			    struct fuse_file_info *fi, uint64_t size)
{
	pfs_rpc_tag tag = { .job = c->job, .uid = c->cred.uid, .gid = c->cred.gid };
	fh *h = fi && fi->fh ? (fh *)(uintptr_t)fi->fh : NULL;
	cli_caps *caps = NULL;
	pfs_layout lay;
	int rc;

	if (h) {
		lay = h->layout;
		tag = fh_tag(h);
		caps = fh_caps(fs, h);
	} else {
		rc = cli_mdc_getlayout_caps(fs->mdc, c, ino, &lay, &caps);
		if (rc)
			return rc;
	}
	rc = cli_osc_truncate_caps(fs->osc, &tag, &lay, caps, size);
	cli_caps_put(caps);
	/* ftruncate through an open file whose capabilities were renewed
	 * too late: the MDS's fresh ones, once */
	if (rc == -EKEYEXPIRED && h && fh_renew(fs, h) == 0) {
		caps = fh_caps(fs, h);
		rc = cli_osc_truncate_caps(fs->osc, &tag, &lay, caps, size);
		cli_caps_put(caps);
	}
	return rc;
}

static void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		       struct fuse_file_info *fi)
{
	cli_fs *fs = fs_of(req);
	cli_setattr sa;
	cli_ctx c;
	pfs_attr a;
	int rc = 0;

	ctx_of(req, &c);
	dd_order(fs, ino);
	memset(&sa, 0, sizeof(sa));
	if (to_set & FUSE_SET_ATTR_MODE) {
		sa.valid |= PFS_SETATTR_MODE;
		sa.mode = attr->st_mode;
	}
	if (to_set & FUSE_SET_ATTR_UID) {
		sa.valid |= PFS_SETATTR_UID;
		sa.uid = attr->st_uid;
	}
	if (to_set & FUSE_SET_ATTR_GID) {
		sa.valid |= PFS_SETATTR_GID;
		sa.gid = attr->st_gid;
	}
	if (to_set & FUSE_SET_ATTR_ATIME_NOW) {
		sa.valid |= PFS_SETATTR_ATIME_NOW;
	} else if (to_set & FUSE_SET_ATTR_ATIME) {
		sa.valid |= PFS_SETATTR_ATIME;
		sa.atime_ns = (int64_t)attr->st_atim.tv_sec * 1000000000 + attr->st_atim.tv_nsec;
	}
	if (to_set & FUSE_SET_ATTR_MTIME_NOW) {
		sa.valid |= PFS_SETATTR_MTIME_NOW;
	} else if (to_set & FUSE_SET_ATTR_MTIME) {
		sa.valid |= PFS_SETATTR_MTIME;
		sa.mtime_ns = (int64_t)attr->st_mtim.tv_sec * 1000000000 + attr->st_mtim.tv_nsec;
	}
	if (to_set & FUSE_SET_ATTR_CTIME)
		sa.valid |= PFS_SETATTR_CTIME;
	if (to_set & (FUSE_SET_ATTR_KILL_SUID | FUSE_SET_ATTR_KILL_SGID))
		sa.valid |= PFS_SETATTR_KILLPRIV;
	if (fi && fi->fh && ((fh *)(uintptr_t)fi->fh)->wr)
		sa.valid |= PFS_SETATTR_FD;
	if (to_set & FUSE_SET_ATTR_SIZE) {
		if (attr->st_size < 0) {
			rc = -EINVAL;
			goto out;
		}
		sa.valid |= PFS_SETATTR_SIZE;
		sa.size = (uint64_t)attr->st_size;
	}
	if (!(sa.valid & ~(uint32_t)PFS_SETATTR_FD)) {
		/* Nothing to change (a remove-privileges of a file that has
		 * none): fresh attributes, no ctime change. */
		rc = cli_mdc_getattr(fs->mdc, &c, ino, &a);
		goto out;
	}
	/* cached bytes first: flushed after the truncate they would regrow
	 * the file */
	if (sa.valid & PFS_SETATTR_SIZE)
		wc_flush_ino(fs, ino);
	if (sa.valid & (PFS_SETATTR_MTIME | PFS_SETATTR_MTIME_NOW)) {
		node *n;

		/* An explicit mtime (futimens after writing, as cp -a and tar
		 * do) must not be overwritten by the time of earlier writes
		 * when the size is pushed at close: push "keep mtime". */
		pthread_mutex_lock(&fs->lock);
		n = node_find(fs, ino);
		if (n)
			n->wmtime = 0;
		pthread_mutex_unlock(&fs->lock);
	}
	rc = cli_mdc_setattr(fs->mdc, &c, ino, &sa, &a);
	if (rc == -EPERM && fs->wb && (sa.valid & PFS_SETATTR_MTIME) &&
	    !(sa.valid & (PFS_SETATTR_ATIME | PFS_SETATTR_MODE | PFS_SETATTR_UID |
			  PFS_SETATTR_GID))) {
		/* With the write-back cache the kernel keeps mtime itself and
		 * sends it as an explicit time where it would have sent "now":
		 * its write-back of cached writes' mtime, O_TRUNC, ftruncate,
		 * touch.  A writer who does not own the file may not set an
		 * explicit time but may set "now" (an explicit utimens by a
		 * non-owner the kernel refuses itself with default_permissions;
		 * without, it becomes "now" here). */
		sa.valid = (sa.valid & ~(uint32_t)PFS_SETATTR_MTIME) | PFS_SETATTR_MTIME_NOW;
		rc = cli_mdc_setattr(fs->mdc, &c, ino, &sa, &a);
	}
	if (rc == 0 && (sa.valid & PFS_SETATTR_SIZE))
		rc = truncate_objects(fs, &c, ino, fi, sa.size);
	if (rc == 0 && (sa.valid & PFS_SETATTR_SIZE)) {
		node *n;

		pthread_mutex_lock(&fs->lock);
		n = node_find(fs, ino);
		if (n) {
			/* Writes beyond the new end were cut off: a later
			 * flush must not push the old high-water mark back. */
			if (n->hw > sa.size)
				n->hw = sa.size;
			n->size = a.size;
			n->ra_gen++;
		}
		pthread_mutex_unlock(&fs->lock);
	}
out:
	cli_sa_drop_ino(fs->sa, ino);
	if (rc)
		reply_err(req, rc);
	else
		reply_attr(req, &a);
}

static void op_readlink(fuse_req_t req, fuse_ino_t ino)
{
	char buf[PFS_PATH_MAX + 1];
	cli_ctx c;
	int rc;

	ctx_of(req, &c);
	dd_order(fs_of(req), ino);
	rc = cli_mdc_readlink(fs_of(req)->mdc, &c, ino, buf, sizeof(buf));
	if (rc)
		reply_err(req, rc);
	else
		fuse_reply_readlink(req, buf);
}

static void op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		     dev_t rdev)
{
	cli_fs *fs = fs_of(req);
	cli_ctx c;
	pfs_attr a;
	pfs_layout lay;
	uint64_t sent;
	int rc;

	ctx_of(req, &c);
	dd_order(fs, parent);
	sent = dd_now(fs);
	/* A regular file needs its objects' layout: that is CREATE. */
	if (S_ISREG(mode))
		rc = cli_mdc_create_file(fs->mdc, &c, parent, name, mode, PFS_CREATE_EXCL, 0, 0,
					 &a, &lay);
	else
		rc = cli_mdc_mknod(fs->mdc, &c, parent, name, mode, (uint32_t)rdev, &a);
	sa_changed(fs, parent, name);
	dd_mutated(fs, &c, parent, name, 1, sent, rc);
	if (rc)
		reply_err(req, rc);
	else
		reply_entry(req, parent, name, &a);
	dd_touch(fs, &c, parent);
}

static void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	cli_fs *fs = fs_of(req);
	cli_ctx c;
	pfs_attr a;
	uint64_t sent;
	int rc;

	ctx_of(req, &c);
	dd_order(fs_of(req), parent);
	sent = dd_now(fs_of(req));
	rc = cli_mdc_mkdir(fs_of(req)->mdc, &c, parent, name, mode | S_IFDIR, &a);
	sa_changed(fs_of(req), parent, name);
	dd_mutated(fs_of(req), &c, parent, name, 1, sent, rc);
	if (rc)
		reply_err(req, rc);
	else
		reply_entry(req, parent, name, &a);
	dd_touch(fs, &c, parent);
}

static void op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	cli_fs *fs = fs_of(req);
	cli_ctx c;
	uint64_t sent;
	int rc;

	ctx_of(req, &c);
	/* under the directory's delegation: answered now, sent later */
	if (fs->dd && cli_dd_unlink(fs->dd, &c, parent, name) == 1) {
		sa_changed(fs, parent, name);
		fuse_reply_err(req, 0);
		return;
	}
	sent = dd_now(fs);
	rc = cli_mdc_unlink(fs->mdc, &c, parent, name);
	sa_changed(fs_of(req), parent, name);
	dd_mutated(fs, &c, parent, name, 0, sent, rc);
	if (rc)
		reply_err(req, rc);
	else
		fuse_reply_err(req, 0);
}

static void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	cli_ctx c;
	int rc;

	ctx_of(req, &c);
	dd_order_all(fs_of(req));
	rc = cli_mdc_rmdir(fs_of(req)->mdc, &c, parent, name);
	sa_changed(fs_of(req), parent, name);
	dd_mutated(fs_of(req), &c, parent, name, 0, 0, rc);
	if (rc)
		reply_err(req, rc);
	else
		fuse_reply_err(req, 0);
}

static void op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	cli_fs *fs = fs_of(req);
	cli_ctx c;
	pfs_attr a;
	uint64_t sent;
	int rc;

	ctx_of(req, &c);
	dd_order(fs_of(req), parent);
	sent = dd_now(fs_of(req));
	rc = cli_mdc_symlink(fs_of(req)->mdc, &c, parent, name, link, &a);
	sa_changed(fs_of(req), parent, name);
	dd_mutated(fs_of(req), &c, parent, name, 1, sent, rc);
	if (rc)
		reply_err(req, rc);
	else
		reply_entry(req, parent, name, &a);
	dd_touch(fs, &c, parent);
}

static void op_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
		      fuse_ino_t newparent, const char *newname, unsigned int flags)
{
	cli_ctx c;
	uint32_t f = 0;
	int rc;

	if (flags & ~(unsigned)(RENAME_NOREPLACE | RENAME_EXCHANGE)) {
		fuse_reply_err(req, EINVAL); /* RENAME_WHITEOUT: no overlay support */
		return;
	}
	if (flags & RENAME_NOREPLACE)
		f |= PFS_RENAME_NOREPLACE;
	if (flags & RENAME_EXCHANGE)
		f |= PFS_RENAME_EXCHANGE;
	ctx_of(req, &c);
	dd_order_all(fs_of(req));
	rc = cli_mdc_rename(fs_of(req)->mdc, &c, parent, name, newparent, newname, f);
	sa_changed(fs_of(req), parent, name);
	sa_changed(fs_of(req), newparent, newname);
	/* EXCHANGE: both names stay */
	dd_mutated(fs_of(req), &c, parent, name, (flags & RENAME_EXCHANGE) != 0, 0, rc);
	dd_mutated(fs_of(req), &c, newparent, newname, 1, 0, rc);
	if (rc)
		reply_err(req, rc);
	else
		fuse_reply_err(req, 0);
}

static void op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	cli_fs *fs = fs_of(req);
	cli_ctx c;
	pfs_attr a;
	uint64_t sent;
	int rc;

	ctx_of(req, &c);
	dd_order_all(fs_of(req));
	sent = dd_now(fs_of(req));
	rc = cli_mdc_link(fs_of(req)->mdc, &c, ino, newparent, newname, &a);
	sa_changed(fs_of(req), newparent, newname);
	cli_sa_drop_ino(fs_of(req)->sa, ino);
	dd_mutated(fs_of(req), &c, newparent, newname, 1, sent, rc);
	if (rc)
		reply_err(req, rc);
	else
		reply_entry(req, newparent, newname, &a);
	dd_touch(fs, &c, newparent);
}

/* Register an open handle of ino with fresh attributes a; decides
 * keep_cache.  Returns the handle or NULL (ENOMEM). */
static fh *open_handle(cli_fs *fs, const cli_ctx *c, const pfs_attr *a, const pfs_layout *lay,
		       cli_caps *caps, struct fuse_file_info *fi, int created, int nocache)
{
	fh *h = calloc(1, sizeof(*h));
	node *n;

	if (!h) {
		cli_caps_put(caps);
		return NULL;
	}
	pthread_mutex_lock(&fs->lock);
	n = node_get(fs, a->ino);
	if (!n) {
		pthread_mutex_unlock(&fs->lock);
		cli_caps_put(caps);
		free(h);
		return NULL;
	}
	/* Keep the page cache only if nobody changed the file since this
	 * client last saw it; otherwise the kernel drops it at open. */
	fi->keep_cache = !created && seen_same(n, a);
	if ((fi->flags & O_ACCMODE) != O_RDONLY)
		n->nwr++;
	note_seen(n, a);
	n->size = a->size;
	note_epoch(n, a);
	n->nopen++;
	if (created)
		n->nlookup++;
	pthread_mutex_unlock(&fs->lock);
	cli_locks_keepalive(fs->locks); /* the MDS counts this open under our lease */
	h->n = n;
	h->layout = *lay;
	memcpy(h->job, c->job, sizeof(h->job));
	h->uid = c->cred.uid;
	h->gid = c->cred.gid;
	h->cred = c->cred;
	h->wr = (fi->flags & O_ACCMODE) != O_RDONLY;
	h->caps = caps;
	pthread_mutex_init(&h->caps_lock, NULL);
	fi->fh = (uint64_t)(uintptr_t)h;
	/* O_APPEND writes land where the MDS append lock says, not where the
	 * kernel's page cache thinks the end is: no cache for them (nor, with
	 * the write-back cache, for a write-only open that may not read) */
	fi->direct_io = (fi->flags & (O_DIRECT | O_APPEND)) != 0 || nocache;
	if (!fi->direct_io && (fi->flags & O_ACCMODE) != O_WRONLY)
		h->ra = cli_ra_open(fs->ra, h, lay->stripe_size);
	return h;
}

static void fh_free(fh *h)
{
	cli_ra_close(h->ra); /* first: its fetches use h */
	cli_caps_put(h->caps);
	pthread_mutex_destroy(&h->caps_lock);
	free(h);
}

/* Renew h's capabilities (GETLAYOUT with the opener's credential and
 * job): 0 or the MDS's answer (-ENOENT once the file is unlinked). */
static int fh_renew(cli_fs *fs, fh *h)
{
	cli_ctx c;
	pfs_layout lay;
	cli_caps *nc = NULL, *old;
	int rc;

	memset(&c, 0, sizeof(c));
	c.cred = h->cred;
	memcpy(c.job, h->job, sizeof(c.job));
	rc = cli_mdc_getlayout_caps(fs->mdc, &c, h->n->ino, &lay, &nc);
	if (rc)
		return rc;
	pthread_mutex_lock(&h->caps_lock);
	old = h->caps;
	h->caps = nc;
	pthread_mutex_unlock(&h->caps_lock);
	cli_caps_put(old);
	return 0;
}

/* A handle of an asynchronous create, before anything of its file goes
 * to an OSS or the MDS: the file exists on the MDS once its CREATE is
 * answered; then the handle's capabilities (a failure leaves the handle
 * without: the OSS or the MDS decides, the next request asks again). */
static void fh_settle(cli_fs *fs, fh *h)
{
	if (!__atomic_load_n(&h->acreated, __ATOMIC_ACQUIRE))
		return;
	dd_order(fs, h->n->ino);
	if (fh_renew(fs, h) == 0)
		__atomic_store_n(&h->acreated, 0, __ATOMIC_RELEASE);
}

/* A reference to h's capabilities for one OSS request, renewed first when
 * three quarters of their lifetime have passed (a failed renewal keeps the
 * old set: the OSS decides). */
static cli_caps *fh_caps(cli_fs *fs, fh *h)
{
	cli_caps *c;

	fh_settle(fs, h);

	pthread_mutex_lock(&h->caps_lock);
	c = cli_caps_get(h->caps);
	pthread_mutex_unlock(&h->caps_lock);
	if (c && cli_caps_stale(c, (uint64_t)time(NULL)) && fh_renew(fs, h) == 0) {
		cli_caps_put(c);
		pthread_mutex_lock(&h->caps_lock);
		c = cli_caps_get(h->caps);
		pthread_mutex_unlock(&h->caps_lock);
	}
	return c;
}

/* Undo open_handle when the kernel did not take the reply. */
static void close_handle(cli_fs *fs, fh *h, int created)
{
	pthread_mutex_lock(&fs->lock);
	h->n->nopen--;
	if (h->wr)
		h->n->nwr--;
	if (created)
		h->n->nlookup--;
	node_maybe_free(fs, h->n);
	pthread_mutex_unlock(&fs->lock);
	fh_free(h);
}

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	cli_fs *fs = fs_of(req);
	cli_ctx c;
	pfs_attr a;
	pfs_layout lay;
	cli_caps *caps = NULL;
	fh *h;
	int rc, nocache = 0;

	ctx_of(req, &c);
	dd_order(fs, ino);
	/* With the write-back cache the kernel reads pages through any
	 * open, a write-only one too, to fill the rest of a page written in
	 * part: such an open asks the MDS for read as well (its capabilities
	 * then allow READ); one that may not read writes through. */
	if (fs->wb && (fi->flags & O_ACCMODE) == O_WRONLY && !(fi->flags & (O_APPEND | O_DIRECT))) {
		uint32_t rw = ((uint32_t)fi->flags & ~(uint32_t)O_ACCMODE) | O_RDWR;

		rc = cli_mdc_open_caps(fs->mdc, &c, ino, rw, &a, &lay, &caps);
		if (rc != -EACCES && rc != -EPERM)
			goto opened;
		nocache = 1;
	}
	rc = cli_mdc_open_caps(fs->mdc, &c, ino, (uint32_t)fi->flags, &a, &lay, &caps);
opened:
	if ((fi->flags & O_ACCMODE) != O_RDONLY || (fi->flags & O_TRUNC))
		cli_sa_drop_ino(fs->sa, ino); /* a writer: the size may move */
	if (rc) {
		/* The inode is gone (unlinked and closed everywhere) while the
		 * kernel still had its name cached: ESTALE makes the VFS look
		 * the name up again (LOOKUP_REVAL) and open what it names now,
		 * or create it for O_CREAT, instead of failing with ENOENT. */
		reply_err(req, rc == -ENOENT ? -ESTALE : rc);
		return;
	}
	h = open_handle(fs, &c, &a, &lay, caps, fi, 0, nocache);
	if (!h) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	/* Only now that the handle counts: a RELEASE of this inode's last
	 * other handle meanwhile would tell the MDS no open is left. */
	caps = fh_caps(fs, h);
	if (glimpse(fs, &c, &a, &h->layout, caps)) {
		/* a writer that may have died changed bytes without telling
		 * the MDS (no mtime): the cache cannot be trusted */
		fi->keep_cache = 0;
		pthread_mutex_lock(&fs->lock);
		if (a.size > h->n->size)
			h->n->size = a.size;
		note_seen(h->n, &a);
		note_epoch(h->n, &a);
		pthread_mutex_unlock(&fs->lock);
	}
	cli_caps_put(caps);
	if (fuse_reply_open(req, fi))
		close_handle(fs, h, 0);
}

static void op_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		      struct fuse_file_info *fi)
{
	cli_fs *fs = fs_of(req);
	struct fuse_entry_param e;
	cli_ctx c;
	pfs_attr a;
	pfs_layout lay;
	cli_caps *caps = NULL;
	fh *h;
	uint64_t sent;
	int rc = 0, async = 0;

	ctx_of(req, &c);
	/* No OPEN after CREATE: the creator may open its new file with any
	 * access mode, whatever the mode bits say (open(O_CREAT|O_RDWR, 0444)).
	 * A name that exists by now (created by another client after the
	 * kernel's lookup) is opened only if the access mode is allowed. */
	uint32_t cflags = (fi->flags & O_EXCL) ? PFS_CREATE_EXCL : 0;

	if ((fi->flags & O_ACCMODE) != O_WRONLY)
		cflags |= PFS_CREATE_READ;
	if ((fi->flags & O_ACCMODE) != O_RDONLY || (fi->flags & O_TRUNC))
		cflags |= PFS_CREATE_WRITE;
	/* a name a held, listed directory lacks: answered now, the CREATE
	 * follows (client/dirdeleg.h "Asynchronous create") */
	if (fs->dd && cli_dd_create_file(fs->dd, &c, parent, name, mode | S_IFREG, &a, &lay)) {
		async = 1;
	} else {
		dd_order(fs, parent);
		sent = dd_now(fs);
		rc = cli_mdc_create_file_caps(fs->mdc, &c, parent, name, mode | S_IFREG, cflags,
					      0, 0, &a, &lay, &caps);
		dd_mutated(fs, &c, parent, name, 1, sent, rc);
	}
	sa_changed(fs, parent, name);
	if (rc) {
		reply_err(req, rc);
		dd_touch(fs, &c, parent);
		return;
	}
	h = open_handle(fs, &c, &a, &lay, caps, fi, 1, 0);
	if (!h) {
		/* an asynchronous create still goes: the file is there, only
		 * not opened (as a create whose reply the kernel dropped) */
		fuse_reply_err(req, ENOMEM);
		return;
	}
	if (async) {
		__atomic_store_n(&h->acreated, 1, __ATOMIC_RELEASE);
		/* a new file (surely: not an existing one opened, as a
		 * synchronous CREATE may be) has no file capability */
		nocap_note(fs, a.ino, "security.capability", 1);
	}
	memset(&e, 0, sizeof(e));
	e.ino = a.ino;
	e.attr_timeout = attr_timeout(fs, &a);
	e.entry_timeout = entry_timeout(fs, parent, name, &a);
	attr_to_stat(fs, &a, &e.attr);
	/* what this mount's unlink of the name will expect (dirdeleg.h) */
	if (fs->dd)
		cli_dd_note_entry(fs->dd, parent, name, a.ino, a.mode);
	if (fuse_reply_create(req, &e, fi))
		close_handle(fs, h, 1);
	if (!async)
		dd_touch(fs, &c, parent);
}

/* ---- readahead (client/readahead.h) ---- */

/* A prefetch of the stream of h: the opener's tag and capabilities, as
 * for its own READs (so RCC credits, per-job slots and QoS apply). */
static int ra_fetch_cb(void *arg, void *owner, uint64_t off, size_t len, void *buf,
		       size_t *got)
{
	cli_fs *fs = arg;
	fh *h = owner;
	pfs_rpc_tag tag = fh_tag(h);
	cli_caps *caps = fh_caps(fs, h);
	int rc;

	rc = cli_osc_read_caps(fs->osc, &tag, &h->layout, caps, off + len, off, len, buf, got);
	if (rc == -EKEYEXPIRED && fh_renew(fs, h) == 0) {
		cli_caps_put(caps);
		caps = fh_caps(fs, h);
		rc = cli_osc_read_caps(fs->osc, &tag, &h->layout, caps, off + len, off, len, buf,
				       got);
	}
	cli_caps_put(caps);
	return rc;
}

/* The same into a pipe (client/readahead.h "Pipes"), when READ replies
 * can be spliced on to /dev/fuse. */
static int ra_fetch_pipe_cb(void *arg, void *owner, uint64_t off, size_t len, int pipe_r,
			    int pipe_w, size_t pipe_cap, size_t *got)
{
	cli_fs *fs = arg;
	fh *h = owner;
	pfs_rpc_tag tag = fh_tag(h);
	cli_osc_pipe pp = { pipe_r, pipe_w, pipe_cap };
	cli_caps *caps;
	int rc;

	if (!atomic_load(&fs->rsplice))
		return -EXDEV;
	caps = fh_caps(fs, h);
	rc = cli_osc_read_pipe_caps(fs->osc, &tag, &h->layout, caps, off + len, off, len, &pp,
				    got);
	if (rc == -EKEYEXPIRED && fh_renew(fs, h) == 0) {
		cli_caps_put(caps);
		caps = fh_caps(fs, h);
		rc = cli_osc_read_pipe_caps(fs->osc, &tag, &h->layout, caps, off + len, off, len,
					    &pp, got);
	}
	cli_caps_put(caps);
	return rc;
}

/* Data of a READ changes: prefetched bytes from before are not served. */
static void ra_bump(cli_fs *fs, node *n)
{
	pthread_mutex_lock(&fs->lock);
	n->ra_gen++;
	pthread_mutex_unlock(&fs->lock);
}

/* The MDS revoked this mount's lease on ino (another client changed it):
 * the prefetched data of its open files is not served any more, nor the
 * statahead's entries of ino and below it; ino 0 = invalidations were
 * lost, any inode may have changed. */
static void ra_inval_cb(void *arg, uint64_t ino)
{
	cli_fs *fs = arg;
	node *n;

	cli_sa_revoke(fs->sa, ino);
	pthread_mutex_lock(&fs->lock);
	if (ino == 0) {
		fs->ra_epoch++;
	} else {
		n = node_find(fs, ino);
		if (n)
			n->ra_gen++;
	}
	pthread_mutex_unlock(&fs->lock);
}

/* Answer a READ from h's prefetched data if it holds [off, off+size):
 * 1 = answered (buf freed, snap applied over it and freed), 0 = not. */
static int ra_serve(fuse_req_t req, fh *h, uint64_t fsize, off_t off, size_t size, char *buf,
		    cli_wc_snap *snap)
{
	cli_fs *fs = fs_of(req);
	const void *data;
	cli_ra_ref *ref;
	uint64_t gen;
	int pfd = -1;

	/* Sampled after the write-back cache's snapshot: bytes a flush took
	 * out of the cache before it were on the OSSes, and the generation
	 * bumped, by then (wc_write_cb). */
	pthread_mutex_lock(&fs->lock);
	gen = h->n->ra_gen + fs->ra_epoch;
	pthread_mutex_unlock(&fs->lock);
	if (!cli_ra_read_pipe(h->ra, gen, fsize, (uint64_t)off, size, buf, &data,
			      snap ? NULL : &pfd, &ref))
		return 0;
	if (pfd >= 0) {
		/* the bytes are the pipe's first size: spliced to the kernel */
		struct fuse_bufvec bv = FUSE_BUFVEC_INIT(size);

		bv.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_RETRY;
		bv.buf[0].fd = pfd;
		cli_ra_put_pipe(ref, fuse_reply_data(req, &bv, 0) == 0);
		free(buf);
		return 1;
	}
	if (snap) {
		if (data != buf)
			memcpy(buf, data, size);
		cli_wc_snap_apply(snap, buf);
		data = buf;
	}
	fuse_reply_buf(req, data, size);
	cli_ra_put(ref);
	cli_wc_snap_free(snap);
	free(buf);
	return 1;
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	cli_fs *fs = fs_of(req);
	fh *h = (fh *)(uintptr_t)fi->fh;
	pfs_rpc_tag tag = fh_tag(h);
	uint64_t fsize;
	size_t got = 0;
	cli_caps *caps;
	cli_wc_file *wf;
	cli_wc_snap *snap = NULL;
	int full = 0;
	char *buf;
	int rc;

	if (off < 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	if (size > fs->opts.max_io)
		size = fs->opts.max_io;
	pthread_mutex_lock(&fs->lock);
	fsize = h->n->size;
	if (h->n->hw > fsize)
		fsize = h->n->hw;
	pthread_mutex_unlock(&fs->lock);
	size = cli_osc_clip((uint64_t)off, size, fsize);
	if (size == 0) {
		fuse_reply_buf(req, NULL, 0);
		return;
	}
	buf = malloc(size);
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	/* Bytes in our write-back cache: copied before the OSSes are read,
	 * laid over what they return (or all of it, when they cover it). */
	if ((wf = fh_wc(fs, h))) {
		rc = cli_wc_snap_take(wf, (uint64_t)off, size, &snap, &full);
		if (rc) {
			free(buf);
			reply_err(req, rc);
			return;
		}
		if (full) {
			cli_wc_snap_apply(snap, buf);
			cli_wc_snap_free(snap);
			fuse_reply_buf(req, buf, size);
			free(buf);
			return;
		}
	}
	if (h->ra && ra_serve(req, h, fsize, off, size, buf, snap))
		return;
	caps = fh_caps(fs, h);
	rc = cli_osc_read_caps(fs->osc, &tag, &h->layout, caps, fsize, (uint64_t)off, size, buf,
			       &got);
	if (rc == -EKEYEXPIRED && fh_renew(fs, h) == 0) {
		cli_caps_put(caps);
		caps = fh_caps(fs, h);
		rc = cli_osc_read_caps(fs->osc, &tag, &h->layout, caps, fsize, (uint64_t)off,
				       size, buf, &got);
	}
	cli_caps_put(caps);
	if (rc == 0 && snap && got == size)
		cli_wc_snap_apply(snap, buf);
	cli_wc_snap_free(snap);
	if (rc)
		reply_err(req, rc);
	else
		fuse_reply_buf(req, buf, got);
	free(buf);
}

/* After the data of a write reached its OSSes (rc 0): remember the
 * high-water mark (pushed to the MDS on flush/fsync/close) and the mtime.
 * A failed write-back WRITE (cached: nobody waits for it but the kernel's
 * flusher) is kept in the inode for its next flush or fsync, so the error
 * reaches the application even if the kernel's own report of it went to
 * another descriptor.  Nothing is answered: write_answer does that. */
static void write_noted(cli_fs *fs, fh *h, off_t off, size_t size, int rc, int cached)
{
	if (rc) {
		if (cached) {
			pthread_mutex_lock(&fs->lock);
			if (!h->n->wb_err)
				h->n->wb_err = rc;
			pthread_mutex_unlock(&fs->lock);
			pfs_log(PFS_LOG_WARNING, "write-back of ino %llu at %lld+%zu: %s",
				(unsigned long long)h->n->ino, (long long)off, size,
				pfs_strerror(rc));
		}
		return;
	}
	pthread_mutex_lock(&fs->lock);
	if ((uint64_t)off + size > h->n->hw)
		h->n->hw = (uint64_t)off + size;
	h->n->dirty = 1;
	h->n->wmtime = pfs_clock_wall_ns();
	h->n->unsynced = 1;
	h->n->ra_gen++;
	pthread_mutex_unlock(&fs->lock);
}

/* Drain the size bytes of a spliced WRITE from its pipe once the OSS has
 * them, through libfuse so that it knows the pipe is empty and keeps it for
 * the next request (a pipe left full is closed and replaced by libfuse).
 * Failing here costs only that replacement. */
static void drain_pipe(cli_fs *fs, struct fuse_bufvec *bufv, size_t size)
{
	struct fuse_bufvec null = FUSE_BUFVEC_INIT(size);
	ssize_t n;

	if (fs->null_fd < 0)
		return;
	null.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_RETRY;
	null.buf[0].fd = fs->null_fd;
	n = fuse_buf_copy(&null, bufv, 0);
	if (n < 0 || (size_t)n != size)
		pfs_log(PFS_LOG_WARNING, "write: draining the FUSE pipe: %zd of %zu bytes",
			n, size);
}

/* The answer to a WRITE of size bytes (rc: how it went), then, drain set,
 * the drain of its spliced pipe (bufv): the OSS has the bytes already, the
 * drain only drops our references to the pages.  The last step of every
 * WRITE, after the last use of its handle: once the kernel has the answer
 * the application may close, and RELEASE frees the handle. */
static void write_answer(fuse_req_t req, struct fuse_bufvec *bufv, size_t size, int rc,
			 int drain)
{
	cli_fs *fs = fs_of(req); /* req is gone once answered */

	if (rc)
		reply_err(req, rc);
	else
		fuse_reply_write(req, size);
	if (drain)
		drain_pipe(fs, bufv, size);
}

/* WRITE, as a buffer vector: with FUSE_CAP_SPLICE_READ the kernel's pages
 * arrive in a pipe and a write that lies in one object is spliced from that
 * pipe into the OSS's socket (no copy through this process: on the data
 * path this halves the client's CPU per byte).  The pipe keeps the data
 * until the OSS has accepted it (cli_osc_write_pipe duplicates it for each
 * send), so a write refused as busy is sent again.  Anything else is
 * gathered into memory and sent by cli_osc_write. */
/* cli_osc_writev_caps of the n extents of v, or (v == NULL)
 * cli_osc_write_pipe_caps of size bytes at off from pipe_fd, with h's
 * capabilities, renewed once on -EKEYEXPIRED. */
static int fh_writev(cli_fs *fs, fh *h, const pfs_rpc_tag *tag, const cli_osc_iov *v, size_t n,
		     uint64_t off, size_t size, int pipe_fd)
{
	cli_caps *caps = fh_caps(fs, h);
	int rc;

	for (int i = 0;; i++) {
		rc = v ? cli_osc_writev_caps(fs->osc, tag, &h->layout, caps, v, n)
		       : cli_osc_write_pipe_caps(fs->osc, tag, &h->layout, caps, off, size,
						 pipe_fd);
		if (rc != -EKEYEXPIRED || i > 0 || fh_renew(fs, h))
			break;
		cli_caps_put(caps);
		caps = fh_caps(fs, h);
	}
	cli_caps_put(caps);
	return rc;
}

/* One write of size bytes at off from mem, or (mem == NULL) from pipe_fd
 * (fh_writev; one extent is a plain WRITE). */
static int fh_write(cli_fs *fs, fh *h, const pfs_rpc_tag *tag, uint64_t off, size_t size,
		    const void *mem, int pipe_fd)
{
	cli_osc_iov one = { off, size, mem };

	return fh_writev(fs, h, tag, mem ? &one : NULL, 1, off, size, pipe_fd);
}

/* ---- the write-back cache (client/wcache.h) ---- */

/* A flusher writes cached bytes back through the handle that wrote them:
 * the writer's job, uid/gid and capabilities (renewed as for any write). */
static int wc_write_cb(void *arg, void *owner, uint64_t off, size_t len, const void *buf)
{
	fh *h = owner;
	pfs_rpc_tag tag = fh_tag(h);

	/* A close or fsync that helps the flushers must not drop cached
	 * bytes because its caller got a signal: no interrupt check for the
	 * rest of this request (a flusher thread never has one). */
	int rc;

	pfs_rpc_set_interrupt(NULL, NULL);
	rc = fh_write(arg, h, &tag, off, len, buf, -1);
	ra_bump(arg, h->n); /* whatever came of it: the OSSes' bytes may have changed */
	return rc;
}

/* Several extents of one chunk in WRITEV requests (osc.h), as wc_write_cb
 * does one. */
static int wc_writev_cb(void *arg, void *owner, const cli_wc_iov *v, size_t n)
{
	fh *h = owner;
	pfs_rpc_tag tag = fh_tag(h);
	int rc;

	pfs_rpc_set_interrupt(NULL, NULL); /* as in wc_write_cb */
	rc = fh_writev(arg, h, &tag, v, n, 0, 0, -1);
	ra_bump(arg, h->n);
	return rc;
}

/* Cached bytes of two handles may share a request when the OSSes would
 * see the same identity (job, uid, gid: QoS) and both may write. */
static int wc_same_cb(void *arg, void *a, void *b)
{
	const fh *x = a, *y = b;

	return x->n == y->n && x->wr && y->wr && x->uid == y->uid && x->gid == y->gid &&
	       !strcmp(x->job, y->job);
}

static int wc_grant_cb(void *arg, uint32_t ost, uint64_t want, uint64_t giveback,
		       uint64_t *granted)
{
	cli_fs *fs = arg;
	pfs_rpc_tag tag = { .job = "" };

	return cli_osc_grant(fs->osc, &tag, ost, want, giveback, granted);
}

/* h's file in the cache, made at its first write; NULL when the cache is
 * off (or the kernel's own write-back cache is on: it alone caches). */
static cli_wc_file *node_wc(cli_fs *fs, fh *h)
{
	cli_wc_file *f;

	if (!fs->wc || fs->wb)
		return NULL;
	pthread_mutex_lock(&fs->lock);
	f = h->n->wc;
	if (!f)
		f = h->n->wc = cli_wc_file_new(fs->wc, h->n->ino, &h->layout);
	pthread_mutex_unlock(&fs->lock);
	return f;
}

/* h's file in the cache if it has one (read under the table lock; no
 * lock at all when the cache is off). */
static cli_wc_file *fh_wc(cli_fs *fs, fh *h)
{
	cli_wc_file *f;

	if (!fs->wc)
		return NULL;
	pthread_mutex_lock(&fs->lock);
	f = h->n->wc;
	pthread_mutex_unlock(&fs->lock);
	return f;
}

/* The cached file of ino, pinned (it stays while pinned even if its last
 * handle closes), for callers without a handle; NULL = nothing cached. */
static node *wc_pin(cli_fs *fs, uint64_t ino)
{
	node *n;

	pthread_mutex_lock(&fs->lock);
	n = node_find(fs, ino);
	if (n && n->wc)
		n->wcpin++;
	else
		n = NULL;
	pthread_mutex_unlock(&fs->lock);
	return n;
}

static void wc_unpin(cli_fs *fs, node *n)
{
	cli_wc_file *f = NULL;

	if (!n)
		return;
	pthread_mutex_lock(&fs->lock);
	if (--n->wcpin == 0 && n->nopen == 0) {
		f = n->wc;
		n->wc = NULL;
		node_maybe_free(fs, n);
	}
	pthread_mutex_unlock(&fs->lock);
	cli_wc_file_free(f);
}

/* Every cached byte of ino written back (before a truncate, a lock
 * release); errors stay for the next fsync or close. */
static void wc_flush_ino(cli_fs *fs, uint64_t ino)
{
	node *n = wc_pin(fs, ino);

	if (n)
		cli_wc_flush_range(n->wc, 0, UINT64_MAX);
	wc_unpin(fs, n);
}

/* WRITE into the cache: the data is gathered into memory (a spliced
 * pipe is read out: the cache needs a copy anyway) and the write answered
 * once it is cached; what the cache does not take (no grant, too large)
 * is written through from that memory. */
static void write_cached(fuse_req_t req, fh *h, cli_wc_file *wf, struct fuse_bufvec *bufv,
			 off_t off)
{
	cli_fs *fs = fs_of(req);
	size_t size = fuse_buf_size(bufv);
	struct fuse_buf *b = &bufv->buf[bufv->idx];
	struct fuse_bufvec mem = FUSE_BUFVEC_INIT(size);
	const void *data;
	void *own = NULL;
	int rc;

	if (bufv->count == 1 && bufv->off == 0 && !(b->flags & FUSE_BUF_IS_FD)) {
		data = b->mem;
	} else {
		ssize_t got;

		own = malloc(size ? size : 1);
		if (!own) {
			fuse_reply_err(req, ENOMEM);
			return;
		}
		mem.buf[0].mem = own;
		got = fuse_buf_copy(&mem, bufv, 0);
		if (got < 0 || (size_t)got != size) {
			free(own);
			reply_err(req, got < 0 ? (int)got : -EIO);
			return;
		}
		data = own;
	}
	rc = cli_wc_write(wf, h, h->job, (uint64_t)off, size, data);
	if (rc == 0) {
		pfs_rpc_tag tag = fh_tag(h);

		rc = fh_write(fs, h, &tag, (uint64_t)off, size, data, -1);
		cli_wc_sync_end(wf, (uint64_t)off, size);
	} else if (rc == 1) {
		rc = 0;
	}
	free(own);
	write_noted(fs, h, off, size, rc, 0);
	write_answer(req, bufv, size, rc, 0);
}

/* A write the cache would only slow down: one or more whole stripes from
 * a stripe boundary.  The cache's gain is absorbing small writes; a whole
 * stripe is already the RPC a flusher would send, and straight from the
 * kernel it is spliced to the socket without the cache's copy (sequential
 * 1 MiB writes: 841-857 MiB/s through the cache, 1035-1081 straight, on
 * 2 vCPUs; bench/RESULTS.md). */
static int whole_stripes(const cli_fs *fs, const fh *h, off_t off, size_t size)
{
	uint64_t ss = h->layout.stripe_size;

	return !fs->opts.wcache_whole_stripes && ss && size >= ss && (uint64_t)off % ss == 0;
}

/* The bytes of a WRITE (bufv) through h at off, to the OSSes: 0 or
 * -errno.  A spliced pipe goes as it is; *drain = 1 then, and the caller
 * drains it (drain_pipe) once it has answered. */
static int write_through(cli_fs *fs, fh *h, struct fuse_bufvec *bufv, off_t off, int *drain)
{
	pfs_rpc_tag tag = fh_tag(h);
	size_t size = fuse_buf_size(bufv);
	struct fuse_buf *b = &bufv->buf[bufv->idx];
	struct fuse_bufvec mem = FUSE_BUFVEC_INIT(size);
	ssize_t got;
	int rc;

	*drain = 0;
	if (off < 0)
		return -EINVAL;
	if (bufv->count == 1 && bufv->off == 0 && !(b->flags & FUSE_BUF_IS_FD))
		return fh_write(fs, h, &tag, (uint64_t)off, size, b->mem, -1);
	if (bufv->count == 1 && bufv->off == 0 && (b->flags & FUSE_BUF_IS_FD) &&
	    !(b->flags & FUSE_BUF_FD_SEEK)) {
		rc = fh_write(fs, h, &tag, (uint64_t)off, size, NULL, b->fd);
		if (rc != -EXDEV) {
			*drain = rc == 0;
			return rc;
		}
	}
	mem.buf[0].mem = malloc(size ? size : 1);
	if (!mem.buf[0].mem)
		return -ENOMEM;
	got = fuse_buf_copy(&mem, bufv, 0);
	if (got < 0)
		rc = (int)got;
	else if ((size_t)got != size)
		rc = -EIO;
	else
		rc = fh_write(fs, h, &tag, (uint64_t)off, size, mem.buf[0].mem, -1);
	free(mem.buf[0].mem);
	return rc;
}

/* A WRITE through h at off, not cached: the cache (wf, may be NULL)
 * knows the range is being written through, and h's node notes it
 * (write_noted).  0 or -errno; *drain as write_through's.  The caller
 * answers, after its last use of h. */
static int write_at(cli_fs *fs, fh *h, cli_wc_file *wf, struct fuse_bufvec *bufv, off_t off,
		    int cached, int *drain)
{
	size_t size = fuse_buf_size(bufv);
	int rc;

	cli_wc_sync_begin(wf, (uint64_t)off, size);
	rc = write_through(fs, h, bufv, off, drain);
	cli_wc_sync_end(wf, (uint64_t)off, size);
	write_noted(fs, h, off, size, rc, cached);
	return rc;
}

/* WRITE: into the cache when it is on, except O_DIRECT and O_APPEND
 * (and the kernel's own write-back), and whole stripes (whole_stripes),
 * which keep the direct path: after the cached bytes they overlap were
 * written back, and counted against the grants (wcache.h). */
static void write_buf_at(fuse_req_t req, fuse_ino_t ino, struct fuse_bufvec *bufv, off_t off,
			 struct fuse_file_info *fi)
{
	cli_fs *fs = fs_of(req);
	fh *h = (fh *)(uintptr_t)fi->fh;
	cli_wc_file *wf = off >= 0 ? node_wc(fs, h) : NULL;
	size_t size = fuse_buf_size(bufv);
	int drain, rc;

	if (wf && !fi->writepage && !(fi->flags & (O_DIRECT | O_APPEND)) &&
	    !whole_stripes(fs, h, off, size)) {
		write_cached(req, h, wf, bufv, off);
		return;
	}
	rc = write_at(fs, h, wf, bufv, off, fi->writepage, &drain);
	write_answer(req, bufv, size, rc, drain);
}

/* n's security.capability is known absent (nocap_known; fs->lock held). */
static int nocap_fresh(const node *n)
{
	return n->nocap_ms > pfs_clock_ms();
}

/* With HANDLE_KILLPRIV_V2, what the kernel's file_remove_privs did before
 * a write (op_init) is ours: a caller other than root (the MDS's stand-in
 * for CAP_FSETID, as for truncate) drops S_ISUID, and S_ISGID with
 * group-exec; any write drops security.capability.  The set-id bits are
 * judged on the last mode the MDS reported, as the kernel judged them
 * on its cached one; security.capability's absence is known for
 * attr_timeout after the MDS said so (nocap_known), after which one
 * GETXATTR asks again, as the kernel's own asking did.  Both go in one
 * SETATTR KILLPRIV through the open descriptor.  0 when there was
 * nothing to drop.  The usual write finds both known under one lock and
 * sends nothing (nor arms the interrupt hook, ctx_fh). */
static int kill_privs(cli_fs *fs, fuse_req_t req, fh *h, fuse_ino_t ino)
{
	static const char cap[] = "security.capability";
	cli_setattr sa = { .valid = PFS_SETATTR_KILLPRIV | PFS_SETATTR_FD };
	uint32_t m;
	pfs_attr a;
	cli_ctx c;
	int setid, nocap, rc;

	pthread_mutex_lock(&fs->lock);
	m = h->n->mode;
	nocap = nocap_fresh(h->n);
	pthread_mutex_unlock(&fs->lock);
	setid = fuse_req_ctx(req)->uid != 0 && S_ISREG(m) &&
		((m & S_ISUID) || (m & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP));
	if (!setid && nocap)
		return 0;
	ctx_fh(req, h, &c);
	if (!setid) {
		void *val = NULL;
		size_t len = 0;

		rc = cli_mdc_getxattr(fs->mdc, &c, ino, cap, &val, &len);
		free(val);
		if (rc == -ENODATA) {
			nocap_note(fs, ino, cap, 1);
			return 0;
		}
		if (rc)
			return rc;
	}
	rc = cli_mdc_setattr(fs->mdc, &c, ino, &sa, &a);
	if (rc)
		return rc;
	nocap_note(fs, ino, cap, 1);
	visible_size(fs, &a); /* notes the new mode */
	return 0;
}

/* O_APPEND across mounts: under the MDS append lock (fuse_locks.h), write
 * at max(MDS size, this mount's unpushed end) and push the new size before
 * the next appender may look. */
static void op_write_buf(fuse_req_t req, fuse_ino_t ino, struct fuse_bufvec *bufv, off_t off,
			 struct fuse_file_info *fi)
{
	cli_fs *fs = fs_of(req);
	fh *h = (fh *)(uintptr_t)fi->fh;
	uint64_t token, end;
	cli_wc_file *wf;
	pfs_attr a;
	cli_ctx c;
	int rc, prc, drain;

	fh_settle(fs, h); /* kill_privs and the append path ask the MDS */
	if (fs->kp2 && !fi->writepage) {
		rc = kill_privs(fs, req, h, ino);
		if (rc) {
			reply_err(req, rc);
			return;
		}
	}
	/* A write-back WRITE may come through an O_APPEND open (the kernel
	 * picks any writable one): its offset is the page's. */
	if (!(fi->flags & O_APPEND) || fi->writepage) {
		write_buf_at(req, ino, bufv, off, fi);
		return;
	}
	ctx_fh(req, h, &c);
	c.cred = h->cred;
	/* cached bytes first: the size pushed below covers them */
	if ((wf = fh_wc(fs, h)))
		cli_wc_flush_range(wf, 0, UINT64_MAX);
	rc = cli_locks_append_lock(fs->locks, ino, &token);
	if (rc == 0) {
		rc = cli_mdc_getattr(fs->mdc, &c, ino, &a);
		if (rc)
			cli_locks_append_unlock(fs->locks, ino, token);
	}
	if (rc) {
		reply_err(req, rc);
		return;
	}
	pthread_mutex_lock(&fs->lock);
	end = h->n->dirty && h->n->hw > a.size ? h->n->hw : a.size;
	pthread_mutex_unlock(&fs->lock);
	rc = write_at(fs, h, node_wc(fs, h), bufv, (off_t)end, 0, &drain);
	prc = push_size(fs, &c, h);
	if (prc)
		pfs_log(PFS_LOG_WARNING, "append to ino %llu: size update failed: %s",
			(unsigned long long)ino, pfs_strerror(prc));
	cli_locks_append_unlock(fs->locks, ino, token);
	write_answer(req, bufv, fuse_buf_size(bufv), rc, drain);
}

/* OSS_SYNC of every object of h's file (objects never written are
 * skipped by the OSS), with h's capabilities, renewed once on
 * -EKEYEXPIRED.  Every object, not only those this descriptor wrote: the
 * file's other descriptors on this mount write to the same objects, and a
 * sync of an object with nothing dirty costs the OSS one fsync of a clean
 * file.  On success the inode is marked synced, unless it was written
 * again meanwhile. */
static int fh_sync_objects(cli_fs *fs, fh *h)
{
	pfs_rpc_tag tag = fh_tag(h);
	cli_caps *caps;
	int rc;

	pthread_mutex_lock(&fs->lock);
	h->n->unsynced = 0; /* a write from now on sets it again */
	pthread_mutex_unlock(&fs->lock);
	caps = fh_caps(fs, h);
	rc = cli_osc_sync_caps(fs->osc, &tag, &h->layout, caps);
	if (rc == -EKEYEXPIRED && fh_renew(fs, h) == 0) {
		cli_caps_put(caps);
		caps = fh_caps(fs, h);
		rc = cli_osc_sync_caps(fs->osc, &tag, &h->layout, caps);
	}
	cli_caps_put(caps);
	if (rc) {
		pthread_mutex_lock(&fs->lock);
		h->n->unsynced = 1; /* the next close or fsync tries again */
		pthread_mutex_unlock(&fs->lock);
	}
	return rc;
}

/* With sync_on_close: the objects of a file written on this mount reach
 * the OSSes' disks before the size reaches the MDS (data before metadata,
 * as ext4 data=ordered), so after a power loss a size the MDS kept never
 * covers bytes the OSS lost.  0 when there is nothing to do. */
static int fh_sync_if_ordered(cli_fs *fs, fh *h)
{
	int need;

	if (!fs->opts.sync_on_close)
		return 0;
	pthread_mutex_lock(&fs->lock);
	need = h->n->unsynced;
	pthread_mutex_unlock(&fs->lock);
	return need ? fh_sync_objects(fs, h) : 0;
}

/* The write-back error kept for h's inode, cleared: 0 or negative errno.
 * The kernel sends a file's dirty pages before its FLUSH and FSYNC, so a
 * failed WRITE of them is known by then. */
static int take_wb_err(cli_fs *fs, fh *h)
{
	int rc;

	pthread_mutex_lock(&fs->lock);
	rc = h->n->wb_err;
	h->n->wb_err = 0;
	pthread_mutex_unlock(&fs->lock);
	return rc;
}

/* FLUSH, at every close(2) of a descriptor: its error is close's.  With
 * sync_on_close the data is synced first and a failed sync keeps the size
 * back (RELEASE pushes it anyway, see there). */
static void op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	fh *h = (fh *)(uintptr_t)fi->fh;
	cli_wc_file *wf;
	cli_ctx c;
	int rc, wb, wcr = 0;

	/* close-to-open: cached bytes reach the OSSes before this close
	 * returns (and before its locks go) */
	if ((wf = fh_wc(fs_of(req), h)))
		wcr = cli_wc_flush(wf);
	cli_locks_flush(fs_of(req)->locks, ino, fi);
	ctx_fh(req, h, &c);
	/* no wait for a pending CREATE or unlink of ino unless the MDS is
	 * asked (push_size orders itself) */
	wb = take_wb_err(fs_of(req), h);
	if (!wb)
		wb = wcr;
	rc = fh_sync_if_ordered(fs_of(req), h);
	if (rc == 0)
		rc = push_size(fs_of(req), &c, h);
	if (rc == 0)
		rc = wb;
	if (rc)
		reply_err(req, rc);
	else
		fuse_reply_err(req, 0);
}

/* RELEASE, after the last close of an open file (nobody waits for its
 * answer).  The size push is resent through the recovery window like any
 * MDS request; with sync_on_close a sync that fails here is logged and the
 * size pushed anyway: the bytes are on the OSS (only maybe not on its
 * disk), and holding the size back would hide them for good. */
static void op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	cli_fs *fs = fs_of(req);
	fh *h = (fh *)(uintptr_t)fi->fh;
	cli_ctx c;
	uint32_t left;
	int rc;

	cli_wc_file *wf = NULL, *wfl;
	int last, closed;

	/* Nothing this handle wrote may stay cached: the flushers write
	 * through it.  An error of the last handle has no caller left:
	 * logged; with other handles open it stays for their close. */
	pthread_mutex_lock(&fs->lock);
	last = h->n->nopen == 1;
	pthread_mutex_unlock(&fs->lock);
	if ((wfl = fh_wc(fs, h)) && !last)
		cli_wc_flush_range(wfl, 0, UINT64_MAX);
	else if (wfl && (rc = cli_wc_flush(wfl)))
		pfs_log(PFS_LOG_ERR, "release of ino %llu: write-back of its cached data "
			"failed: %s", (unsigned long long)ino, pfs_strerror(rc));
	cli_locks_release(fs->locks, ino, fi);
	ctx_fh(req, h, &c);
	/* created asynchronously and never used: its CREATE, still queued,
	 * now counts no open, and no CLOSE follows */
	closed = __atomic_load_n(&h->acreated, __ATOMIC_ACQUIRE) && last && fs->dd &&
		 cli_dd_created_close(fs->dd, ino);
	if (!closed)
		dd_order(fs, ino);
	rc = fh_sync_if_ordered(fs, h);
	if (rc)
		pfs_log(PFS_LOG_ERR, "release of ino %llu: sync of its objects failed: %s",
			(unsigned long long)ino, pfs_strerror(rc));
	rc = push_size(fs, &c, h);
	if (rc)
		pfs_log(PFS_LOG_ERR, "release of ino %llu: size update failed: %s",
			(unsigned long long)ino, pfs_strerror(rc));
	pthread_mutex_lock(&fs->lock);
	h->n->nopen--;
	if (h->wr)
		h->n->nwr--;
	left = h->n->nopen;
	/* The size is lost for good if nobody else has the file open; keep
	 * trying while a handle remains, else give up (logged above). */
	if (h->n->nopen == 0) {
		h->n->dirty = 0;
		/* Another client may truncate the file before we open it
		 * again: an old high-water mark must not regrow it then. */
		h->n->hw = 0;
		if (!h->n->wcpin) {
			wf = h->n->wc;
			h->n->wc = NULL;
		}
	}
	node_maybe_free(fs, h->n);
	pthread_mutex_unlock(&fs->lock);
	cli_wc_file_free(wf);
	fh_free(h);
	/* After the size: the last close of an open-unlinked file ends it. */
	rc = closed ? 0 : cli_mdc_close(fs->mdc, &c, ino, left);
	if (rc)
		pfs_log(PFS_LOG_WARNING, "release of ino %llu: close on the MDS: %s (it ends "
			"the open when our lease does)", (unsigned long long)ino,
			pfs_strerror(rc));
	fuse_reply_err(req, 0);
}

/* fsync and fdatasync: the data of every object on its OSS's disk, then
 * the size on the MDS's disk (SETSIZE, whose reply means durable), or,
 * with no size to push, an MDS_SYNC, so that the file's name and every
 * earlier namespace change are durable too (POSIX leaves that to fsync of
 * the directory; Linux file systems give it, and a created file must not
 * vanish).  fdatasync does the same: without the size the synced data is
 * unreachable after a crash.  Any failure is the caller's EIO (or the
 * server's errno); the data stays marked unsynced so the next fsync or
 * close tries again. */
static void op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	cli_fs *fs = fs_of(req);
	fh *h = (fh *)(uintptr_t)fi->fh;
	cli_wc_file *wf;
	cli_ctx c;
	int rc, sent = 0, wb;

	ctx_fh(req, h, &c);
	dd_order(fs, ino);
	wb = take_wb_err(fs, h);
	if ((wf = fh_wc(fs, h))) {
		int wcr = cli_wc_flush(wf); /* written whatever wb is: one error reported */

		if (!wb)
			wb = wcr;
	}
	rc = fh_sync_objects(fs, h);
	if (rc == 0)
		rc = push_size_sent(fs, &c, h, &sent);
	if (rc == 0 && !sent)
		rc = cli_mdc_sync(fs->mdc, &c, ino);
	if (rc == 0)
		rc = wb;
	if (rc)
		reply_err(req, rc);
	else
		fuse_reply_err(req, 0);
}

/* fsyncdir: the MDS database on disk, so every name change in the
 * directory (and every other one the MDS answered before) survives a
 * power loss; unlinks answered before they were sent (dirdeleg.h) are sent
 * and answered first.  Without this handler the kernel turns ENOSYS into success
 * and rename + fsync(dir) promised nothing. */
static void op_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync,
			struct fuse_file_info *fi)
{
	cli_fs *fs = fs_of(req);
	cli_ctx c;
	int rc = 0, ddr = 0;

	ctx_of(req, &c);
	/* the unlinks answered early in it are sent first; one that failed
	 * is this call's error (once) */
	if (fs->dd)
		ddr = cli_dd_fsyncdir(fs->dd, ino);
	rc = cli_mdc_sync(fs->mdc, &c, ino);
	if (rc == 0)
		rc = ddr;
	if (rc)
		reply_err(req, rc);
	else
		fuse_reply_err(req, 0);
}

static void op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	cli_ctx c;
	pfs_attr a;
	pfs_layout lay;
	int rc;

	/* The MDS checks read permission on the directory here, so opendir
	 * fails like it does on a local file system. */
	ctx_of(req, &c);
	dd_order(fs_of(req), ino);
	rc = cli_mdc_open(fs_of(req)->mdc, &c, ino, O_RDONLY | O_DIRECTORY, &a, &lay);
	if (rc == 0 && !S_ISDIR(a.mode))
		rc = -ENOTDIR;
	if (rc) {
		reply_err(req, rc);
		return;
	}
	fi->fh = 0;
	fuse_reply_open(req, fi);
}

/* FUSE offsets are MDS cookies.  The MDS never returns "." and "..", and
 * keeps cookies 1 and 2 free for them: offset 0 starts with ".", 1 resumes
 * at "..", 2 at the MDS's first entry (cookie 0), anything else is a cookie. */
static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	cli_fs *fs = fs_of(req);
	cli_dirent *ents = NULL;
	char *buf = NULL;
	size_t used = 0;
	uint32_t max, n = 0;
	int eof = 0, rc = 0;
	cli_ctx c;
	struct stat st;

	buf = malloc(size);
	if (!buf) {
		rc = -ENOMEM;
		goto out;
	}
	memset(&st, 0, sizeof(st));
	st.st_mode = S_IFDIR;
	st.st_ino = ino;
	if (off == 0) {
		used += fuse_add_direntry(req, buf + used, size - used, ".", &st, 1);
		off = 1;
	}
	if (off == 1) {
		size_t l = fuse_add_direntry(req, buf + used, size - used, "..", &st, 2);

		if (used + l > size)
			goto reply;
		used += l;
		off = 2;
	}
	/* Each entry takes at least 32 bytes in the buffer. */
	max = (uint32_t)(size / 32 + 1);
	if (max > PFS_READDIR_MAX)
		max = PFS_READDIR_MAX;
	ents = calloc(max, sizeof(*ents));
	if (!ents) {
		rc = -ENOMEM;
		goto out;
	}
	ctx_of(req, &c);
	dd_order(fs, ino);
	rc = cli_mdc_readdir(fs->mdc, &c, ino, off == 2 ? 0 : (uint64_t)off, max, ents, &n,
			     &eof);
	if (rc)
		goto out;
	for (uint32_t i = 0; i < n; i++) {
		size_t l;

		st.st_ino = ents[i].ino;
		st.st_mode = ents[i].mode;
		l = fuse_add_direntry(req, buf + used, size - used, ents[i].name, &st,
				      (off_t)ents[i].next_cookie);
		if (used + l > size)
			break; /* the next call resumes at the last cookie added */
		used += l;
	}
reply:
	fuse_reply_buf(req, buf, used);
out:
	if (rc)
		reply_err(req, rc);
	free(ents);
	free(buf);
}

static void op_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	fuse_reply_err(req, 0);
}

static void op_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct statvfs sv;
	pfs_statfs st;
	cli_ctx c;
	int rc;

	ctx_of(req, &c);
	rc = cli_mdc_statfs(fs_of(req)->mdc, &c, &st);
	if (rc) {
		reply_err(req, rc);
		return;
	}
	memset(&sv, 0, sizeof(sv));
	sv.f_bsize = st.bsize;
	sv.f_frsize = st.bsize;
	sv.f_blocks = st.blocks;
	sv.f_bfree = st.bfree;
	sv.f_bavail = st.bavail;
	sv.f_files = st.files;
	sv.f_ffree = st.ffree;
	sv.f_favail = st.ffree;
	sv.f_namemax = st.namemax;
	fuse_reply_statfs(req, &sv);
}

/* The kernel asks for security.capability before a write(2) to a FUSE
 * file (file_remove_privs): before every one without HANDLE_KILLPRIV_V2,
 * once per attribute refresh with it (op_init), and kill_privs asks
 * itself.  Once the MDS said it is absent, this mount answers so itself
 * for attr_timeout, as it lets the kernel keep the attributes; its own
 * setxattr/removexattr of the name forget it. */
static int nocap_known(cli_fs *fs, fuse_ino_t ino, const char *name)
{
	node *n;
	int known = 0;

	if (strcmp(name, "security.capability"))
		return 0;
	pthread_mutex_lock(&fs->lock);
	n = node_find(fs, ino);
	known = n && nocap_fresh(n);
	pthread_mutex_unlock(&fs->lock);
	return known;
}

/* absent = 1: the MDS said so now; 0: forget it. */
static void nocap_note(cli_fs *fs, fuse_ino_t ino, const char *name, int absent)
{
	node *n;

	if (strcmp(name, "security.capability"))
		return;
	pthread_mutex_lock(&fs->lock);
	n = node_find(fs, ino);
	if (n)
		n->nocap_ms = absent ? pfs_clock_ms() + (uint64_t)(fs->opts.attr_timeout * 1000) : 0;
	pthread_mutex_unlock(&fs->lock);
}

static void op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
			size_t size, int flags)
{
	cli_ctx c;
	int rc;

	ctx_of(req, &c);
	dd_order(fs_of(req), ino);
	nocap_note(fs_of(req), ino, name, 0);
	rc = cli_mdc_setxattr(fs_of(req)->mdc, &c, ino, name, value, size, (uint32_t)flags);
	nocap_note(fs_of(req), ino, name, 0); /* a GETXATTR answered meanwhile */
	cli_sa_drop_ino(fs_of(req)->sa, ino);
	if (rc)
		reply_err(req, rc);
	else
		fuse_reply_err(req, 0);
}

/* getxattr/listxattr answer: size 0 asks for the length only. */
static void reply_xattr_value(fuse_req_t req, size_t size, const void *val, size_t len)
{
	if (size == 0)
		fuse_reply_xattr(req, len);
	else if (len > size)
		fuse_reply_err(req, ERANGE);
	else
		fuse_reply_buf(req, val, len);
}

static void op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	void *val = NULL;
	size_t len = 0;
	cli_ctx c;
	int rc;

	if (nocap_known(fs_of(req), ino, name)) {
		fuse_reply_err(req, ENODATA);
		return;
	}
	ctx_of(req, &c);
	dd_order(fs_of(req), ino);
	rc = cli_mdc_getxattr(fs_of(req)->mdc, &c, ino, name, &val, &len);
	if (rc == -ENODATA)
		nocap_note(fs_of(req), ino, name, 1);
	if (rc)
		reply_err(req, rc);
	else
		reply_xattr_value(req, size, val, len);
	free(val);
}

static void op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	void *val = NULL;
	size_t len = 0;
	cli_ctx c;
	int rc;

	ctx_of(req, &c);
	dd_order(fs_of(req), ino);
	rc = cli_mdc_listxattr(fs_of(req)->mdc, &c, ino, &val, &len);
	if (rc)
		reply_err(req, rc);
	else
		reply_xattr_value(req, size, val, len);
	free(val);
}

static void op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	cli_ctx c;
	int rc;

	ctx_of(req, &c);
	dd_order(fs_of(req), ino);
	nocap_note(fs_of(req), ino, name, 0);
	rc = cli_mdc_removexattr(fs_of(req)->mdc, &c, ino, name);
	nocap_note(fs_of(req), ino, name, 0);
	cli_sa_drop_ino(fs_of(req)->sa, ino);
	if (rc)
		reply_err(req, rc);
	else
		fuse_reply_err(req, 0);
}

static void op_access(fuse_req_t req, fuse_ino_t ino, int mask)
{
	cli_ctx c;
	int rc;

	ctx_of(req, &c);
	dd_order(fs_of(req), ino);
	rc = cli_mdc_access(fs_of(req)->mdc, &c, ino, (uint32_t)mask);
	if (rc)
		reply_err(req, rc);
	else
		fuse_reply_err(req, 0);
}

/* Lock release writes the cached bytes back first, so that the next
 * holder (on any mount) reads them (fuse_locks.h). */
static void op_setlk(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi,
		     struct flock *lock, int sleep)
{
	if (lock->l_type == F_UNLCK)
		wc_flush_ino(fs_of(req), ino);
	cli_locks_setlk(req, ino, fi, lock, sleep);
}

static void op_flock(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi, int op)
{
	if (op & LOCK_UN)
		wc_flush_ino(fs_of(req), ino);
	cli_locks_flock(req, ino, fi, op);
}

static const struct fuse_lowlevel_ops ops = {
	.init = op_init,
	.lookup = op_lookup,
	.forget = op_forget,
	.forget_multi = op_forget_multi,
	.getattr = op_getattr,
	.setattr = op_setattr,
	.readlink = op_readlink,
	.mknod = op_mknod,
	.mkdir = op_mkdir,
	.unlink = op_unlink,
	.rmdir = op_rmdir,
	.symlink = op_symlink,
	.rename = op_rename,
	.link = op_link,
	.open = op_open,
	.read = op_read,
	.write_buf = op_write_buf,
	.flush = op_flush,
	.release = op_release,
	.fsync = op_fsync,
	.opendir = op_opendir,
	.readdir = op_readdir,
	.releasedir = op_releasedir,
	.fsyncdir = op_fsyncdir,
	.statfs = op_statfs,
	.setxattr = op_setxattr,
	.getxattr = op_getxattr,
	.listxattr = op_listxattr,
	.removexattr = op_removexattr,
	.access = op_access,
	.create = op_create,
	.getlk = cli_locks_getlk,
	.setlk = op_setlk,
	.flock = op_flock,
};

const struct fuse_lowlevel_ops *cli_fs_ops(void)
{
	return &ops;
}
