/* server.c — MDS request dispatcher: decode, admit (per-job counters, the
 * job registry's automatic entries; the PADLL hook), run the opcode's
 * handler, encode the reply.
 *
 * Dispatch is one table (ops[] below): a row per opcode with its handler
 * and whether it needs root, and the row's position is the opcode's slot
 * in the per-job counters.  Each request runs on its connection's thread
 * (common/server.c), so one slow client only stalls itself; LMDB
 * serialises the writers.  Decoding is straight-line on a sticky-error
 * pfs_rbuf and checked once with pfs_rbuf_done, so a short, long or
 * garbled payload gets -EBADMSG (UNLINK_BATCH's entries: -EINVAL, as its
 * wire comment says, and none runs).  Counts taken from the wire are bounded
 * before any allocation they size, and replies that list things stop
 * before PFS_MAX_PAYLOAD.
 *
 * Who the caller is.  The role its key proved (pfs_sconn_role) decides
 * which opcodes it may send, from the table in common/optab.h (-EACCES
 * otherwise, logged once per connection); without authentication every
 * peer has role ANY and may send anything (tests and measurements only).
 * The credential inside a namespace payload is taken from the peer, with
 * root squash for the roles not in nosquash_roles (uid/gid 0 mapped to
 * root_squash_uid/gid).  Job and QoS opcodes (admin keys only) judge by the
 * header's uid: root (uid 0) may change the QoS policy and see every job;
 * others see their own jobs only (mds/jobs.h decides ownership).
 *
 * Capabilities (common/capa.h): with a K_cap (authentication on), OPEN,
 * CREATE and a file's GETLAYOUT answered to a client-role peer carry, after
 * the layout, u32 n and n capabilities, one per stripe object, bound to the
 * frame's client_id and valid for capa_lifetime_s.  Rights: OPEN from its
 * flags (which mds_ns_open_file has checked), CREATE all, GETLAYOUT (the
 * renewal) what an access check of R_OK and W_OK allows now; an unlinked
 * inode has no layout to renew, so a revoked file stops being writable
 * within one lifetime.
 *
 * Resends (common/rpc.h): the replies of mutating requests are recorded in
 * a reply cache (mds/reply_cache.h) by (client id, req_id); a request
 * marked PFS_F_RESEND that already ran is answered from it (see dispatch).
 * The namespace mutations also store their reply in their own LMDB
 * transaction (mds/reply_log.h, Lustre's last_rcvd): a resend the memory
 * cache does not know (the MDS restarted between commit and reply) is
 * answered from that record, with fresh capabilities for a CREATE.
 *
 * Job counters live in a fixed hash table of at most MAX_JOBS jobs;
 * further job ids are counted under one overflow entry "(other)" so
 * garbage job ids cannot grow memory without bound. */
#include "mds/server.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/auth.h"
#include "common/capa.h"
#include "common/clock.h"
#include "common/layout.h"
#include "common/log.h"
#include "common/msg.h"
#include "common/net.h"
#include "common/optab.h"
#include "mds/dirplus.h"
#include "mds/reply_log.h"
#include "common/qosmsg.h"
#include "common/server.h"
#include "mds/mdqos.h"
#include "mds/ascar_store.h"
#include "mds/deleg.h"
#include "mds/slots.h"
#include "mds/lease.h"
#include "mds/lfsck.h"
#include "mds/nsgroup.h"
#include "mds/locksvc.h"
#include "mds/open.h"
#include "mds/reply_cache.h"

#define NBUCKETS 256
#define MAX_JOBS 4096
#define MAX_OSTS_PER_MSG 1024
#define MAX_POLICY_KEYS 32
/* Largest encoded pfs_qos_status and rows, to keep replies in a frame. */
#define STATUS_MAX (4 + PFS_QOS_NAME_MAX + 8 + 4 * 3 + 8 * 4 + 4 + \
		    PFS_QOS_PARAMS_MAX * (4 + PFS_QOS_NAME_MAX + 8))
#define ROW_MAX (4 + PFS_JOBID_MAX + 4 + 3 * 8 + 1)
#define COUPON_ROW_MAX (4 + PFS_JOBID_MAX + 6 * 8 + 8)

struct mds_server;
/* Who sent a request: its peer address (logs) and proved role. */
typedef struct mds_req {
	const char *peer;
	unsigned role;       /* PFS_ROLE_*; PFS_ROLE_ANY without authentication */
	pfs_sconn *conn;     /* NULL without a socket (tests): no deferred replies */
} mds_req;

typedef int (*op_fn)(struct mds_server *s, const pfs_hdr *h, pfs_rbuf *b, const mds_req *rq,
		     pfs_wbuf *out);

struct op_row {
	uint16_t op;
	op_fn fn;
	uint8_t root;   /* only uid 0 may send it */
};

/* The opcode table, defined after the handlers: NOPS rows; counter slot
 * NOPS counts unknown opcodes. */
#define NOPS 57
#define NSLOTS (NOPS + 1)
static const struct op_row ops[NOPS];

struct job_ctr {
	char job[PFS_JOBID_MAX + 1];
	uint64_t ops[NSLOTS];
	struct job_ctr *next;
};

struct mds_server {
	mds_ns *ns;
	mds_server_opts opts;
	pfs_server *srv;
	int16_t slot_of[512];      /* opcode -> ops[] row, -1 = unknown; read-only */
	pthread_mutex_t jobs_lock; /* guards jobs, njobs, overflow */
	struct job_ctr *jobs[NBUCKETS];
	unsigned njobs;
	struct job_ctr overflow;
	pfs_optab_log refusals;    /* role refusals, logged once per peer */
	mds_locksvc *locks;        /* the lock service (mds/locksvc.h) */
	mds_rcache *rcache;        /* replies for resends (mds/reply_cache.h) */
	mds_open *opens;           /* open files and orphans (mds/open.h) */
	mds_lfsck_timer *lfsck;    /* the scrub after start (mds/lfsck.h) */
	mds_lease *lease;          /* metadata leases (mds/lease.h); NULL = off */
	mds_nsgroup *group;        /* group commit of mutations (mds/nsgroup.h); NULL = off */
	mds_deleg *deleg;          /* directory delegations (mds/deleg.h); NULL = off */
	mds_slots *slots;          /* create slots held per client (mds/slots.h);
	                              NULL = asynchronous create off */
	int have_capa;             /* capa_key holds K_cap */
	uint8_t capa_key[PFS_CAPA_KEY_LEN];
};

static unsigned op_slot(const mds_server *s, uint16_t op)
{
	return op < 512 && s->slot_of[op] >= 0 ? (unsigned)s->slot_of[op] : NOPS;
}

static unsigned job_hash(const char *s)
{
	unsigned h = 5381;

	while (*s)
		h = h * 33 + (unsigned char)*s++;
	return h % NBUCKETS;
}

static struct job_ctr *job_find(mds_server *s, const char *job, int create)
{
	unsigned b = job_hash(job);

	for (struct job_ctr *j = s->jobs[b]; j; j = j->next)
		if (strcmp(j->job, job) == 0)
			return j;
	if (!create)
		return NULL;
	if (s->njobs >= MAX_JOBS)
		return &s->overflow;
	struct job_ctr *j = calloc(1, sizeof(*j));
	if (!j)
		return &s->overflow;
	strcpy(j->job, job);
	j->next = s->jobs[b];
	s->jobs[b] = j;
	s->njobs++;
	return j;
}

/* Admission of one metadata operation of a job.  Today it counts and
 * gives the registry a first sight of the job; this is the PADLL hook: a
 * per-job, per-op-class rate limiter decides here whether to proceed,
 * wait, or refuse (return a negative errno). */
static int mds_server_admit(mds_server *s, const char *job, const pfs_hdr *h)
{
	pthread_mutex_lock(&s->jobs_lock);
	job_find(s, job, 1)->ops[op_slot(s, h->opcode)]++;
	pthread_mutex_unlock(&s->jobs_lock);
	/* unregistered ids get default entries, bounded (mds/jobs.h); a full
	 * registry is not the request's problem */
	if (s->opts.jobs && job[0])
		mds_jobs_seen(s->opts.jobs, job, h->uid);
	return 0;
}

uint64_t mds_server_job_ops(mds_server *s, const char *job, uint16_t op)
{
	uint64_t n = 0;

	pthread_mutex_lock(&s->jobs_lock);
	struct job_ctr *j = job_find(s, job, 0);
	if (j)
		n = j->ops[op_slot(s, op)];
	pthread_mutex_unlock(&s->jobs_lock);
	return n;
}

int mds_server_job_ops_each(mds_server *s,
			    void (*fn)(void *arg, const char *job, uint16_t op, uint64_t count),
			    void *arg)
{
	struct job_ctr *v;
	size_t n = 0;

	pthread_mutex_lock(&s->jobs_lock);
	v = malloc((s->njobs + 1) * sizeof(*v));
	if (v) {
		for (unsigned i = 0; i < NBUCKETS; i++)
			for (struct job_ctr *j = s->jobs[i]; j; j = j->next)
				v[n++] = *j;
		v[n++] = s->overflow;
	}
	pthread_mutex_unlock(&s->jobs_lock);
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		for (unsigned sl = 0; sl < NSLOTS; sl++)
			if (v[i].ops[sl])
				fn(arg, v[i].job, sl < NOPS ? ops[sl].op : 0, v[i].ops[sl]);
	free(v);
	return 0;
}

/* A name: at most PFS_PATH_MAX bytes on the wire so that an overlong name
 * gets -ENAMETOOLONG rather than a framing error; *bad gets the errno. */
static void get_name(pfs_rbuf *b, char *out, size_t max, int *bad)
{
	size_t n;
	const char *p = pfs_rbuf_str(b, PFS_PATH_MAX, &n);

	out[0] = '\0';
	if (!p)
		return;
	if (n > max) {
		if (!*bad)
			*bad = -ENAMETOOLONG;
		return;
	}
	if (memchr(p, '\0', n)) {
		if (!*bad)
			*bad = -EINVAL;
		return;
	}
	memcpy(out, p, n);
	out[n] = '\0';
}

/* Fixed-size C string field ("oss", "host", uuid): too long is malformed. */
static void get_field(pfs_rbuf *b, char *out, size_t outsz)
{
	pfs_rbuf_cstr(b, out, outsz);
}

static int decode_end(pfs_rbuf *b, int bad)
{
	int rc = pfs_rbuf_done(b);

	return rc ? rc : bad;
}

/* An OST uuid that is up (heartbeats within the timeout) stays at its
 * address: a registration that would move it elsewhere is refused, so a
 * stray OSS cannot take over a live OST.  Once it is down it may move. */
static int check_move(mds_server *s, const char *oss, const char *host, uint16_t dport,
		      uint16_t cport, const mds_ost_report *r, uint32_t n, const char *peer)
{
	pfs_ost_info *v;
	uint32_t nv;
	int rc = mds_ns_ost_list(s->ns, &v, &nv);

	if (rc)
		return rc;
	for (uint32_t i = 0; i < n && !rc; i++)
		for (uint32_t j = 0; j < nv && !rc; j++) {
			if (strcmp(v[j].uuid, r[i].uuid) || !v[j].up)
				continue;
			if (!strcmp(v[j].host, host) && v[j].data_port == dport &&
			    v[j].ctl_port == cport)
				continue;
			pfs_log(PFS_LOG_WARNING, "mds: OSS_REGISTER of %s from %s (oss %s) at "
				"%s:%u refused: OST %s is up at %s:%u", r[i].uuid,
				peer ? peer : "-", oss, host, dport, r[i].uuid, v[j].host,
				v[j].data_port);
			rc = -EADDRINUSE;
		}
	free(v);
	return rc;
}

static int do_register(mds_server *s, pfs_rbuf *b, const mds_req *rq, pfs_wbuf *out)
{
	char oss[64], host[64];
	uint16_t dport, cport;
	uint32_t n;
	mds_ost_report *r = NULL;
	uint32_t *idx = NULL;
	int rc;

	get_field(b, oss, sizeof(oss));
	get_field(b, host, sizeof(host));
	dport = pfs_rbuf_u16(b);
	cport = pfs_rbuf_u16(b);
	n = pfs_rbuf_u32(b);
	rc = pfs_rbuf_error(b);
	if (rc)
		return rc;
	/* Each entry is at least 4 + 24 bytes: bound n before allocating. */
	if (n > MAX_OSTS_PER_MSG || (size_t)n * 28 > pfs_rbuf_left(b))
		return -EBADMSG;
	r = calloc(n ? n : 1, sizeof(*r));
	idx = calloc(n ? n : 1, sizeof(*idx));
	if (!r || !idx) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < n; i++) {
		get_field(b, r[i].uuid, sizeof(r[i].uuid));
		r[i].total_bytes = pfs_rbuf_u64(b);
		r[i].free_bytes = pfs_rbuf_u64(b);
		r[i].objects = pfs_rbuf_u64(b);
	}
	rc = pfs_rbuf_done(b);
	if (rc)
		goto out;
	const char *peer = rq->peer;

	/* An OSS bound to the wildcard address is reached where it came from. */
	if (!host[0] || strcmp(host, "0.0.0.0") == 0 || strcmp(host, "::") == 0) {
		uint16_t pp;
		if (!peer || pfs_addr_parse(peer, host, sizeof(host), &pp))
			snprintf(host, sizeof(host), "127.0.0.1");
	}
	/* Only between authenticated nodes: without authentication anyone
	 * may register anything anyway, and an OSS restarted on another port
	 * (port 0 in tests) comes back at once, as before. */
	if (rq->role != PFS_ROLE_ANY) {
		rc = check_move(s, oss, host, dport, cport, r, n, peer);
		if (rc)
			goto out;
	}
	rc = mds_ns_oss_register(s->ns, oss, host, dport, cport, r, n, idx);
	if (rc)
		goto out;
	pfs_wbuf_u32(out, n);
	for (uint32_t i = 0; i < n; i++)
		pfs_wbuf_u32(out, idx[i]);
out:
	free(r);
	free(idx);
	return rc;
}

static int do_heartbeat(mds_server *s, pfs_rbuf *b)
{
	char oss[64];
	uint32_t n;
	mds_ost_report *r;
	int rc;

	get_field(b, oss, sizeof(oss));
	n = pfs_rbuf_u32(b);
	rc = pfs_rbuf_error(b);
	if (rc)
		return rc;
	if (n > MAX_OSTS_PER_MSG || (size_t)n * 28 > pfs_rbuf_left(b))
		return -EBADMSG;
	r = calloc(n ? n : 1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		r[i].index = pfs_rbuf_u32(b);
		r[i].total_bytes = pfs_rbuf_u64(b);
		r[i].free_bytes = pfs_rbuf_u64(b);
		r[i].objects = pfs_rbuf_u64(b);
	}
	rc = pfs_rbuf_done(b);
	if (!rc)
		rc = mds_ns_oss_heartbeat(s->ns, oss, r, n);
	free(r);
	return rc;
}

static int do_readdir(mds_server *s, const pfs_cred *c, pfs_rbuf *b, pfs_wbuf *out)
{
	uint64_t ino = pfs_rbuf_u64(b), cookie = pfs_rbuf_u64(b);
	uint32_t max = pfs_rbuf_u32(b), n = 0;
	int eof = 0, rc = pfs_rbuf_done(b);
	mds_dirent *e;

	if (rc)
		return rc;
	if (max > PFS_READDIR_MAX)
		max = PFS_READDIR_MAX;
	e = malloc((max ? max : 1) * sizeof(*e));
	if (!e)
		return -ENOMEM;
	rc = mds_ns_readdir(s->ns, c, ino, cookie, max, e, &n, &eof);
	if (!rc) {
		pfs_wbuf_u32(out, n);
		pfs_wbuf_u8(out, (uint8_t)eof);
		for (uint32_t i = 0; i < n; i++) {
			pfs_wbuf_u64(out, e[i].ino);
			pfs_wbuf_u32(out, e[i].mode);
			pfs_wbuf_u64(out, e[i].next_cookie);
			pfs_wbuf_str(out, e[i].name);
		}
	}
	free(e);
	return rc;
}

static int do_ost_list(mds_server *s, pfs_rbuf *b, pfs_wbuf *out)
{
	pfs_ost_info *v;
	uint32_t n;
	int rc = pfs_rbuf_done(b);

	if (!rc)
		rc = mds_ns_ost_list(s->ns, &v, &n);
	if (rc)
		return rc;
	pfs_wbuf_u32(out, n);
	for (uint32_t i = 0; i < n; i++)
		pfs_ost_info_encode(out, &v[i]);
	free(v);
	return 0;
}

/* Root squash: a peer of a squashed role (authenticated, not in
 * nosquash_roles) never acts as uid or gid 0. */
static void squash(const mds_server *s, unsigned role, pfs_cred *c)
{
	uint32_t uid = s->opts.root_squash_uid ? s->opts.root_squash_uid : 65534;
	uint32_t gid = s->opts.root_squash_gid ? s->opts.root_squash_gid : 65534;

	if (!s->opts.root_squash || role == PFS_ROLE_ANY || (role & s->opts.nosquash_roles))
		return;
	if (c->uid == 0)
		c->uid = uid;
	if (c->gid == 0)
		c->gid = gid;
	for (uint32_t i = 0; i < c->ngroups && i < PFS_MAX_GROUPS; i++)
		if (c->groups[i] == 0)
			c->groups[i] = gid;
}

/* Append u32 n and a capability with rights for each stripe object of lay,
 * when this MDS mints them and the peer is a client (see the top). */
static void put_caps(const mds_server *s, const pfs_hdr *h, unsigned role,
		     const pfs_layout *lay, uint32_t rights, pfs_wbuf *out)
{
	unsigned life = s->opts.capa_lifetime_s ? s->opts.capa_lifetime_s
						: PFS_CAPA_LIFETIME_DEFAULT;
	struct timespec now;

	if (!s->have_capa || !(role & PFS_ROLE_CLIENT))
		return;
	clock_gettime(CLOCK_REALTIME, &now);
	pfs_wbuf_u32(out, rights ? lay->stripe_count : 0);
	for (uint32_t i = 0; rights && i < lay->stripe_count && i < PFS_MAX_STRIPES; i++) {
		pfs_capa c = { 0 };

		c.ost = lay->stripe[i].ost;
		c.object = lay->stripe[i].object;
		c.rights = rights;
		c.expiry = (uint64_t)now.tv_sec + life;
		c.client_id = h->client_id;
		pfs_capa_mint(&c, s->capa_key);
		pfs_capa_encode(out, &c);
	}
}

/* Rights a renewal (GETLAYOUT) gives: what the caller may do now. */
static uint32_t rights_now(mds_server *s, const pfs_cred *c, uint64_t ino)
{
	uint32_t r = 0;

	if (mds_ns_access(s->ns, c, ino, R_OK | MDS_ACCESS_NOPATH) == 0)
		r |= PFS_CAPA_READ;
	if (mds_ns_access(s->ns, c, ino, W_OK | MDS_ACCESS_NOPATH) == 0)
		r |= PFS_CAPA_WRITE | PFS_CAPA_TRUNCATE;
	return r;
}

/* SETSIZE (pushed at flush/fsync/close) needs write permission, or
 * ownership: the creator of a 0444 file opened O_RDWR pushes its size. */
static int setsize_allowed(mds_server *s, const pfs_cred *c, uint64_t ino)
{
	pfs_attr a;
	int rc = mds_ns_access(s->ns, c, ino, W_OK | MDS_ACCESS_NOPATH);

	if (rc != -EACCES)
		return rc;
	if (mds_ns_getattr(s->ns, c, ino, &a) == 0 && a.uid == c->uid)
		return 0;
	return -EACCES;
}

/* Namespace mutations whose reply is stored with the operation
 * (mds/reply_log.h); *attr: the reply carries the attributes. */
static int reply_logged(uint16_t op, int *attr)
{
	switch (op) {
	case PFS_OP_MDS_SETATTR: case PFS_OP_MDS_CREATE: case PFS_OP_MDS_MKNOD:
	case PFS_OP_MDS_MKDIR: case PFS_OP_MDS_SYMLINK: case PFS_OP_MDS_LINK:
	case PFS_OP_MDS_SETSIZE:
		*attr = 1;
		return 1;
	case PFS_OP_MDS_UNLINK: case PFS_OP_MDS_RMDIR: case PFS_OP_MDS_RENAME:
	case PFS_OP_MDS_SETXATTR: case PFS_OP_MDS_REMOVEXATTR: case PFS_OP_MDS_SETSTRIPE:
		*attr = 0;
		return 1;
	default:
		return 0;
	}
}

/* Lease revocations of a group commit's member (mds/nsgroup.h) wait for
 * the group's commit: a mount told of a change reads again at once, and
 * must find it.  The committer thread holds the member's list while it
 * runs it (per thread, like mds/reply_log.h's context); elsewhere the
 * hooks run at once, after their operation's own commit. */
#define HELD_INLINE 8 /* a RENAME makes 6; more (UNLINK_BATCH: 3 a name) in more[] */

struct held_hook {
	uint64_t by, ino;  /* name_changed: ino is the directory */
	unsigned what;     /* 0: a name in directory ino */
	char name[PFS_NAME_MAX + 1];
};

struct held_hooks {
	unsigned n, cap;          /* held; room in more[] */
	struct held_hook *more;   /* hooks HELD_INLINE.. (malloc'd; hooks_free) */
	struct held_hook h[HELD_INLINE];
};

static _Thread_local struct held_hooks *held_hooks;

static struct held_hook *hook_at(struct held_hooks *hh, unsigned i)
{
	return i < HELD_INLINE ? &hh->h[i] : &hh->more[i - HELD_INLINE];
}

/* A slot for one more held revocation; NULL: run it at once (no list, or
 * no memory for a longer one: the revocation then precedes the commit). */
static struct held_hook *hook_hold(mds_lease *l)
{
	struct held_hooks *hh = held_hooks;

	if (!hh || !l)
		return NULL;
	if (hh->n >= HELD_INLINE && hh->n - HELD_INLINE == hh->cap) {
		unsigned cap = hh->cap ? 2 * hh->cap : 16;
		struct held_hook *m = realloc(hh->more, cap * sizeof(*m));

		if (!m) {
			pfs_log(PFS_LOG_WARNING, "lease: no memory to hold %u revocations: "
				"run before the commit", hh->n + 1);
			return NULL;
		}
		hh->more = m;
		hh->cap = cap;
	}
	return hook_at(hh, hh->n++);
}

static void hooks_free(struct held_hooks *hh)
{
	free(hh->more);
	hh->more = NULL;
	hh->n = hh->cap = 0;
}

static void hook_changed(mds_lease *l, uint64_t by, uint64_t ino, unsigned what)
{
	struct held_hook *k = hook_hold(l);

	if (!k) {
		mds_lease_changed(l, by, ino, what);
		return;
	}
	k->by = by;
	k->ino = ino;
	k->what = what;
}

static void hook_name_changed(mds_lease *l, uint64_t by, uint64_t parent, const char *name)
{
	struct held_hook *k = hook_hold(l);

	if (!k) {
		mds_lease_name_changed(l, by, parent, name);
		return;
	}
	k->by = by;
	k->ino = parent;
	k->what = 0;
	snprintf(k->name, sizeof(k->name), "%s", name);
}

/* After the group's commit: the held revocations, in order. */
static void hooks_run(mds_lease *l, struct held_hooks *hh)
{
	for (unsigned i = 0; i < hh->n; i++) {
		const struct held_hook *k = hook_at(hh, i);

		if (k->what)
			mds_lease_changed(l, k->by, k->ino, k->what);
		else
			mds_lease_name_changed(l, k->by, k->ino, k->name);
	}
}

/* Leases of a reply that gives client an entry (name in parent, inode
 * ino); made: the entry is new (CREATE, MKDIR, ...), so the others'
 * leases on parent are revoked (after the grant: never the maker's). */
static void lease_entry(mds_server *s, uint64_t client, uint64_t parent, const char *name,
			uint64_t ino, uint64_t since, int made)
{
	if (!mds_lease_active(s->lease))
		return;
	mds_lease_grant_name(s->lease, client, parent, name, since);
	mds_lease_grant(s->lease, client, ino, since);
	if (made) {
		hook_name_changed(s->lease, client, parent, name);
		hook_changed(s->lease, client, parent, MDS_LEASE_ATTR);
	}
}

/* LOOKUP_BULK (mds/dirplus.h): each entry sent is leased as LOOKUP's. */
struct bulk_lease {
	mds_server *s;
	uint64_t client, since;
};

static void bulk_lease_grant(void *arg, uint64_t dir, const char *name, uint64_t ino)
{
	struct bulk_lease *bl = arg;

	lease_entry(bl->s, bl->client, dir, name, ino, bl->since, 0);
}

/* The inode a name change by client is about to remove or replace (0:
 * none, or nobody to tell: no other client holds a lease on the
 * directory, so none looked the name up there), read before the change.
 * (A file looked up through another hard link's directory only: its
 * nlink there is stale for at most one lease.) */
static uint64_t lease_child(mds_server *s, uint64_t client, uint64_t parent, const char *name)
{
	pfs_cred root;
	pfs_attr a;

	if (!mds_lease_watched(s->lease, client, parent))
		return 0;
	memset(&root, 0, sizeof(root));
	return mds_ns_lookup(s->ns, &root, parent, name, &a) == 0 ? a.ino : 0;
}

/* After name in parent went (unlink, rmdir, either side of a rename). */
static void lease_removed(mds_server *s, uint64_t client, uint64_t parent, const char *name,
			  uint64_t child)
{
	if (!mds_lease_active(s->lease))
		return;
	hook_name_changed(s->lease, client, parent, name);
	hook_changed(s->lease, client, parent, MDS_LEASE_ATTR);
	if (child)
		hook_changed(s->lease, client, child, MDS_LEASE_ATTR);
}

/* One UNLINK with its leases (expect: the inode the name must name, 0 =
 * any; mds_ns_unlink_ino): UNLINK's and each entry of UNLINK_BATCH's. */
static int unlink_one(mds_server *s, const pfs_cred *c, uint64_t cid, uint64_t parent,
		      const char *name, uint64_t expect)
{
	uint64_t child = lease_child(s, cid, parent, name);
	int rc = mds_ns_unlink_ino(s->ns, c, parent, name, expect);

	if (!rc)
		lease_removed(s, cid, parent, name, child);
	return rc;
}

/* The creator of ino (a CREATE, a resent one, an entry of CREATE_BATCH)
 * holds it open: counted for client, and flagged as written (set already
 * for a new file, now for an existing one opened by CREATE; a logged
 * reply does not carry the flag).  what names the request in the log. */
static void create_opened(mds_server *s, uint64_t client, uint64_t ino, const char *what)
{
	if (mds_open_add(s->opens, client, ino))
		pfs_log(PFS_LOG_DEBUG, "%s of ino %llu: unlinked before its open counted", what,
			(unsigned long long)ino);
	else
		(void)mds_open_writer(s->opens, client, ino);
}

/* CREATE_BATCH (common/proto.h): u64 parent, u32 n, n x { str name, u32
 * mode, u32 flags, u64 ino } -> u32 n, n x i32 status.  Decoded whole
 * first, as UNLINK_BATCH; then each entry is one asynchronous create into
 * the client's slot ino (the namespace checks and takes the slot's record,
 * mds_ns_create_slot; the client holds one slot less), with its open
 * counted unless PFS_CREATE_CLOSED, in order, each with its own status.
 * Not in the reply log: a resend after a restart (every slot forgotten)
 * finds an entry's name naming its slot's inode, which is success, as the
 * first run's (the reply carries no capabilities, so this grants nothing a
 * LOOKUP would not). */
struct cbatch_ent {
	uint64_t ino;
	uint32_t mode, flags;
	char name[PFS_NAME_MAX + 1];
};

static int do_create_batch(mds_server *s, const pfs_cred *c, uint64_t cid, uint64_t since,
			   pfs_rbuf *b, pfs_wbuf *out)
{
	uint64_t parent = pfs_rbuf_u64(b);
	uint32_t n = pfs_rbuf_u32(b);
	struct cbatch_ent *e;
	pfs_layout *lay;
	pfs_attr a;
	int bad = 0;

	if (pfs_rbuf_error(b) || n == 0 || n > PFS_CREATE_SLOTS_MAX)
		return -EINVAL;
	e = malloc(n * sizeof(*e));
	lay = malloc(sizeof(*lay));
	if (!e || !lay) {
		free(e);
		free(lay);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++) {
		get_name(b, e[i].name, PFS_NAME_MAX, &bad);
		e[i].mode = pfs_rbuf_u32(b);
		e[i].flags = pfs_rbuf_u32(b);
		e[i].ino = pfs_rbuf_u64(b);
		if ((e[i].flags & ~PFS_CREATE_CLOSED) && !bad)
			bad = -EINVAL;
	}
	if (decode_end(b, bad)) {
		free(e);
		free(lay);
		return -EINVAL;
	}
	pfs_wbuf_u32(out, n);
	for (uint32_t i = 0; i < n; i++) {
		int opened = !(e[i].flags & PFS_CREATE_CLOSED);
		int rc = mds_ns_create_slot(s->ns, c, parent, e[i].name, e[i].mode,
					    opened ? MDS_CREATE_WRITER : 0, cid, e[i].ino, &a, lay);

		/* not counted (an MDS restarted since the reservation): fine */
		if (!rc && s->slots)
			(void)mds_slots_take(s->slots, cid, parent, e[i].ino, pfs_clock_ms());
		if (rc == -ESTALE && mds_ns_lookup(s->ns, c, parent, e[i].name, &a) == 0 &&
		    a.ino == e[i].ino)
			rc = 0;
		if (!rc && opened)
			create_opened(s, cid, a.ino, "create");
		if (!rc)
			lease_entry(s, cid, parent, e[i].name, a.ino, since, 1);
		pfs_wbuf_u32(out, (uint32_t)rc);
	}
	free(e);
	free(lay);
	return 0;
}

/* UNLINK_BATCH (common/proto.h): u64 parent, u32 n, n x { str name, u64
 * ino } -> u32 n, n x i32 status.  Everything is decoded before anything
 * runs: n out of 1..PFS_UNLINK_BATCH_MAX, a malformed, overlong or
 * truncated entry or trailing bytes are -EINVAL and nothing is removed.
 * Then each entry is one UNLINK (unlink_one), in order, each with its own
 * status (and inside a group commit its own child transaction): one
 * failing does not stop the others. */
struct batch_ent {
	uint64_t ino;
	char name[PFS_NAME_MAX + 1];
};

static int do_unlink_batch(mds_server *s, const pfs_cred *c, uint64_t cid, pfs_rbuf *b,
			   pfs_wbuf *out)
{
	uint64_t parent = pfs_rbuf_u64(b);
	uint32_t n = pfs_rbuf_u32(b);
	struct batch_ent *e;
	int bad = 0;

	if (pfs_rbuf_error(b) || n == 0 || n > PFS_UNLINK_BATCH_MAX)
		return -EINVAL;
	e = malloc(n * sizeof(*e));
	if (!e)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		get_name(b, e[i].name, PFS_NAME_MAX, &bad);
		e[i].ino = pfs_rbuf_u64(b);
	}
	if (decode_end(b, bad)) {
		free(e);
		return -EINVAL;
	}
	pfs_wbuf_u32(out, n);
	for (uint32_t i = 0; i < n; i++)
		pfs_wbuf_u32(out, (uint32_t)unlink_one(s, c, cid, parent, e[i].name, e[i].ino));
	free(e);
	return 0;
}

/* Namespace opcodes: all start with a cred. */
static int dispatch_ns(mds_server *s, const pfs_hdr *h, unsigned role, pfs_rbuf *b,
		       pfs_wbuf *out)
{
	uint16_t op = h->opcode;
	char name[PFS_NAME_MAX + 1], name2[PFS_NAME_MAX + 1];
	pfs_cred c;
	pfs_attr a;
	pfs_layout *lay = NULL;
	int bad = 0, rc, with_attr = 0;
	/* The commit of a mutation stores its reply (CREATE: and the layout,
	 * set below once allocated): mds/reply_log.h. */
	mds_ns_reply rr = { s->ns, h->client_id, h->req_id, op, NULL, NULL, 0 };
	int logged = reply_logged(op, &with_attr);
	/* metadata leases (mds/lease.h): granted after a read with the change
	 * sequence from before it, revoked after a change's commit */
	uint64_t since = mds_lease_begin(s->lease), cid = h->client_id, child = 0, child2 = 0;

	rc = pfs_cred_decode(b, &c);
	if (rc)
		return rc == -EBADMSG ? rc : -EBADMSG;
	squash(s, role, &c);
	if (logged) {
		rr.attr = with_attr ? &a : NULL;
		mds_ns_reply_set(&rr);
	}
	switch (op) {
	case PFS_OP_MDS_LOOKUP: {
		uint64_t parent = pfs_rbuf_u64(b);
		get_name(b, name, PFS_NAME_MAX, &bad);
		rc = decode_end(b, bad);
		if (!rc)
			rc = mds_ns_lookup(s->ns, &c, parent, name, &a);
		if (!rc)
			lease_entry(s, cid, parent, name, a.ino, since, 0);
		if (!rc)
			pfs_attr_encode(out, &a);
		break;
	}
	case PFS_OP_MDS_GETATTR: {
		uint64_t ino = pfs_rbuf_u64(b);
		rc = decode_end(b, 0);
		if (!rc)
			rc = mds_ns_getattr(s->ns, &c, ino, &a);
		if (!rc)
			mds_lease_grant(s->lease, cid, ino, since);
		if (!rc)
			pfs_attr_encode(out, &a);
		break;
	}
	case PFS_OP_MDS_SETATTR: {
		uint64_t ino = pfs_rbuf_u64(b);
		uint32_t valid = pfs_rbuf_u32(b), mode = pfs_rbuf_u32(b);
		uint32_t uid = pfs_rbuf_u32(b), gid = pfs_rbuf_u32(b);
		uint64_t size = pfs_rbuf_u64(b);
		int64_t at = pfs_rbuf_i64(b), mt = pfs_rbuf_i64(b);
		rc = decode_end(b, 0);
		if (!rc)
			rc = mds_ns_setattr(s->ns, &c, ino, valid, mode, uid, gid, size, at, mt, &a);
		if (!rc) {
			int perm = S_ISDIR(a.mode) && (valid & (PFS_SETATTR_MODE |
						PFS_SETATTR_UID | PFS_SETATTR_GID));

			mds_lease_grant(s->lease, cid, ino, since);
			hook_changed(s->lease, cid, ino, MDS_LEASE_ATTR |
					  (perm ? MDS_LEASE_PERM : 0));
			/* who may unlink below may have changed: every
			 * delegation is recalled (rare; mds/deleg.h) */
			if (perm)
				mds_deleg_recall_all(s->deleg);
			pfs_attr_encode(out, &a);
		}
		break;
	}
	case PFS_OP_MDS_CREATE: {
		uint64_t parent = pfs_rbuf_u64(b);
		get_name(b, name, PFS_NAME_MAX, &bad);
		uint32_t mode = pfs_rbuf_u32(b), flags = pfs_rbuf_u32(b);
		uint32_t ss = pfs_rbuf_u32(b), sc = pfs_rbuf_u32(b);
		/* stripe_offset is optional (requests from before it: any) */
		uint32_t so = pfs_rbuf_left(b) ? pfs_rbuf_u32(b) : PFS_STRIPE_OFFSET_ANY;
		rc = decode_end(b, bad);
		if (!rc && (flags & ~PFS_CREATE_FLAGS))
			rc = -EINVAL;
		if (!rc && !(lay = malloc(sizeof(*lay))))
			rc = -ENOMEM;
		rr.lay = lay;
		if (!rc)
			rc = mds_ns_create_at(s->ns, &c, parent, name, mode,
					      flags | MDS_CREATE_WRITER, ss, sc, so, &a, lay);
		if (!rc) {
			create_opened(s, h->client_id, a.ino, "create");
			lease_entry(s, cid, parent, name, a.ino, since, 1);
			pfs_attr_encode(out, &a);
			pfs_layout_encode(out, lay);
			put_caps(s, h, role, lay, PFS_CAPA_ALL, out);
		}
		break;
	}
	case PFS_OP_MDS_MKNOD: {
		uint64_t parent = pfs_rbuf_u64(b);
		get_name(b, name, PFS_NAME_MAX, &bad);
		uint32_t mode = pfs_rbuf_u32(b), rdev = pfs_rbuf_u32(b);
		rc = decode_end(b, bad);
		if (!rc)
			rc = mds_ns_mknod(s->ns, &c, parent, name, mode, rdev, &a);
		if (!rc)
			lease_entry(s, cid, parent, name, a.ino, since, 1);
		if (!rc)
			pfs_attr_encode(out, &a);
		break;
	}
	case PFS_OP_MDS_MKDIR: {
		uint64_t parent = pfs_rbuf_u64(b);
		get_name(b, name, PFS_NAME_MAX, &bad);
		uint32_t mode = pfs_rbuf_u32(b);
		rc = decode_end(b, bad);
		if (!rc)
			rc = mds_ns_mkdir(s->ns, &c, parent, name, mode, &a);
		if (!rc)
			lease_entry(s, cid, parent, name, a.ino, since, 1);
		if (!rc)
			pfs_attr_encode(out, &a);
		break;
	}
	case PFS_OP_MDS_UNLINK:
	case PFS_OP_MDS_RMDIR: {
		uint64_t parent = pfs_rbuf_u64(b), expect = 0;
		get_name(b, name, PFS_NAME_MAX, &bad);
		/* UNLINK's optional expected inode (asynchronous unlinks) */
		if (op == PFS_OP_MDS_UNLINK && pfs_rbuf_left(b) > 0)
			expect = pfs_rbuf_u64(b);
		rc = decode_end(b, bad);
		if (rc)
			break;
		if (op == PFS_OP_MDS_UNLINK) {
			rc = unlink_one(s, &c, cid, parent, name, expect);
			break;
		}
		child = lease_child(s, cid, parent, name);
		rc = mds_ns_rmdir(s->ns, &c, parent, name);
		if (!rc)
			lease_removed(s, cid, parent, name, child);
		break;
	}
	case PFS_OP_MDS_UNLINK_BATCH:
		rc = do_unlink_batch(s, &c, cid, b, out);
		break;
	case PFS_OP_MDS_CREATE_BATCH:
		rc = do_create_batch(s, &c, cid, since, b, out);
		break;
	case PFS_OP_MDS_RENAME: {
		uint64_t parent = pfs_rbuf_u64(b);
		get_name(b, name, PFS_NAME_MAX, &bad);
		uint64_t np = pfs_rbuf_u64(b);
		get_name(b, name2, PFS_NAME_MAX, &bad);
		uint32_t flags = pfs_rbuf_u32(b);
		rc = decode_end(b, bad);
		if (!rc) {
			child = lease_child(s, cid, parent, name);
			child2 = lease_child(s, cid, np, name2);
		}
		if (!rc)
			rc = mds_ns_rename(s->ns, &c, parent, name, np, name2, flags);
		if (!rc) {
			lease_removed(s, cid, parent, name, child);
			lease_removed(s, cid, np, name2, child2);
		}
		break;
	}
	case PFS_OP_MDS_READDIR:
		rc = do_readdir(s, &c, b, out);
		break;
	case PFS_OP_MDS_LOOKUP_BULK: {
		struct bulk_lease bl = { s, cid, since };
		rc = mds_dirplus_serve(s->ns, &c, b, out, mds_lease_active(s->lease) ?
				       bulk_lease_grant : NULL, &bl);
		break;
	}
	case PFS_OP_MDS_SYMLINK: {
		char *target = malloc(PFS_PATH_MAX + 1);
		uint64_t parent = pfs_rbuf_u64(b);
		get_name(b, name, PFS_NAME_MAX, &bad);
		if (!target) {
			rc = -ENOMEM;
			break;
		}
		get_name(b, target, PFS_PATH_MAX, &bad);
		rc = decode_end(b, bad);
		if (!rc)
			rc = mds_ns_symlink(s->ns, &c, parent, name, target, &a);
		if (!rc)
			lease_entry(s, cid, parent, name, a.ino, since, 1);
		if (!rc)
			pfs_attr_encode(out, &a);
		free(target);
		break;
	}
	case PFS_OP_MDS_READLINK: {
		char *target = malloc(PFS_PATH_MAX + 1);
		uint64_t ino = pfs_rbuf_u64(b);
		rc = target ? decode_end(b, 0) : -ENOMEM;
		if (!rc)
			rc = mds_ns_readlink(s->ns, &c, ino, target);
		if (!rc)
			pfs_wbuf_str(out, target);
		free(target);
		break;
	}
	case PFS_OP_MDS_LINK: {
		uint64_t ino = pfs_rbuf_u64(b), np = pfs_rbuf_u64(b);
		get_name(b, name, PFS_NAME_MAX, &bad);
		rc = decode_end(b, bad);
		if (!rc)
			rc = mds_ns_link(s->ns, &c, ino, np, name, &a);
		if (!rc) {
			lease_entry(s, cid, np, name, a.ino, since, 1);
			hook_changed(s->lease, cid, ino, MDS_LEASE_ATTR);
		}
		if (!rc)
			pfs_attr_encode(out, &a);
		break;
	}
	case PFS_OP_MDS_STATFS: {
		pfs_statfs st;
		rc = decode_end(b, 0);
		if (!rc)
			rc = mds_ns_statfs(s->ns, &c, &st);
		if (!rc)
			pfs_statfs_encode(out, &st);
		break;
	}
	case PFS_OP_MDS_SETXATTR: {
		size_t vlen;
		uint64_t ino = pfs_rbuf_u64(b);
		get_name(b, name, PFS_XATTR_NAME_MAX, &bad);
		const char *val = pfs_rbuf_str(b, PFS_XATTR_SIZE_MAX, &vlen);
		uint32_t flags = pfs_rbuf_u32(b);
		rc = decode_end(b, bad == -ENAMETOOLONG ? -ERANGE : bad);
		if (!rc)
			rc = mds_ns_setxattr(s->ns, &c, ino, name, val, vlen, flags);
		if (!rc)
			hook_changed(s->lease, cid, ino, MDS_LEASE_ATTR);
		break;
	}
	case PFS_OP_MDS_GETXATTR: {
		void *val = NULL;
		size_t vlen = 0;
		uint64_t ino = pfs_rbuf_u64(b);
		get_name(b, name, PFS_XATTR_NAME_MAX, &bad);
		rc = decode_end(b, bad == -ENAMETOOLONG ? -ERANGE : bad);
		if (!rc)
			rc = mds_ns_getxattr(s->ns, &c, ino, name, &val, &vlen);
		if (!rc)
			pfs_wbuf_strn(out, val, vlen);
		free(val);
		break;
	}
	case PFS_OP_MDS_LISTXATTR: {
		char *list = NULL;
		size_t llen = 0;
		uint64_t ino = pfs_rbuf_u64(b);
		rc = decode_end(b, 0);
		if (!rc)
			rc = mds_ns_listxattr(s->ns, &c, ino, &list, &llen);
		if (!rc)
			pfs_wbuf_strn(out, list, llen);
		free(list);
		break;
	}
	case PFS_OP_MDS_REMOVEXATTR: {
		uint64_t ino = pfs_rbuf_u64(b);
		get_name(b, name, PFS_XATTR_NAME_MAX, &bad);
		rc = decode_end(b, bad == -ENAMETOOLONG ? -ERANGE : bad);
		if (!rc)
			rc = mds_ns_removexattr(s->ns, &c, ino, name);
		if (!rc)
			hook_changed(s->lease, cid, ino, MDS_LEASE_ATTR);
		break;
	}
	case PFS_OP_MDS_OPEN: {
		uint64_t ino = pfs_rbuf_u64(b);
		uint32_t flags = pfs_rbuf_u32(b);
		rc = decode_end(b, 0);
		if (!rc && !(lay = malloc(sizeof(*lay))))
			rc = -ENOMEM;
		/* counted before the inode is read: an unlink from now on
		 * keeps it (mds/open.h) */
		if (!rc)
			rc = mds_open_add(s->opens, h->client_id, ino);
		if (!rc) {
			rc = mds_ns_open_file(s->ns, &c, ino, flags, &a, lay);
			if (rc || !S_ISREG(a.mode))
				mds_open_undo(s->opens, h->client_id, ino);
		}
		/* size recovery: a writer marks the size as maybe stale (the
		 * reply keeps the flag as read: set if another writer has it
		 * open or died holding it, mds/open.h) */
		if (!rc && S_ISREG(a.mode) &&
		    ((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC))) {
			(void)mds_open_writer(s->opens, h->client_id, ino);
			/* others' cached sizes: the file may grow from now on */
			hook_changed(s->lease, cid, ino, MDS_LEASE_ATTR);
		}
		if (!rc) {
			pfs_attr_encode(out, &a);
			pfs_layout_encode(out, lay);
			if (S_ISREG(a.mode))
				put_caps(s, h, role, lay, pfs_capa_rights_for_flags(flags), out);
		}
		break;
	}
	case PFS_OP_MDS_ACCESS: {
		uint64_t ino = pfs_rbuf_u64(b);
		uint32_t mask = pfs_rbuf_u32(b);
		rc = decode_end(b, 0);
		if (!rc)
			rc = mds_ns_access(s->ns, &c, ino, mask);
		break;
	}
	case PFS_OP_MDS_SETSIZE: {
		uint64_t ino = pfs_rbuf_u64(b), size = pfs_rbuf_u64(b);
		int64_t mt = pfs_rbuf_i64(b);
		uint64_t epoch = MDS_EPOCH_ANY, blocks = MDS_BLOCKS_UNKNOWN;
		/* Optional tail: the truncate epoch the writer saw and the
		 * blocks its objects use (UINT64_MAX = unknown). */
		if (pfs_rbuf_left(b) > 0) {
			epoch = pfs_rbuf_u32(b);
			blocks = pfs_rbuf_u64(b);
		}
		rc = decode_end(b, 0);
		if (!rc)
			rc = setsize_allowed(s, &c, ino);
		if (!rc)
			rc = mds_ns_setsize_epoch(s->ns, &c, ino, size, mt, epoch, blocks, &a);
		/* no writer open any more: the size is the file's (mds/open.h) */
		if (!rc && (a.flags & PFS_ATTR_SIZE_STALE)) {
			mds_open_size_pushed(s->opens, ino);
			if (mds_ns_getattr(s->ns, &c, ino, &a))
				a.flags &= ~PFS_ATTR_SIZE_STALE;
		}
		if (!rc)
			hook_changed(s->lease, cid, ino, MDS_LEASE_ATTR);
		/* SETSIZE comes with fsync/close: make it durable now. */
		if (!rc && s->opts.sync_on_setsize)
			rc = mds_ns_sync(s->ns);
		if (!rc)
			pfs_attr_encode(out, &a);
		break;
	}
	case PFS_OP_MDS_GETLAYOUT: {
		int is_dir = 0;
		uint64_t ino = pfs_rbuf_u64(b);
		rc = decode_end(b, 0);
		if (!rc && !(lay = malloc(sizeof(*lay))))
			rc = -ENOMEM;
		if (!rc)
			rc = mds_ns_getlayout(s->ns, &c, ino, lay, &is_dir);
		/* an open-unlinked file: only for the clients that hold it */
		if (!rc && !is_dir && lay->stripe_count && mds_ns_getattr(s->ns, &c, ino, &a) == 0 &&
		    a.nlink == 0 && !mds_open_held(s->opens, h->client_id, ino))
			rc = -ENOENT;
		if (!rc && is_dir) {
			/* A directory's default: size, count and first OST, no
			 * stripe list (count may be 0 = default or UINT32_MAX =
			 * all; offset PFS_STRIPE_OFFSET_ANY). */
			pfs_wbuf_u32(out, lay->stripe_size);
			pfs_wbuf_u32(out, lay->stripe_count);
			pfs_wbuf_u32(out, lay->stripe[0].ost);
		} else if (!rc) {
			pfs_layout_encode(out, lay);
			if (s->have_capa && (role & PFS_ROLE_CLIENT))
				put_caps(s, h, role, lay, rights_now(s, &c, ino), out);
		}
		break;
	}
	case PFS_OP_MDS_CLOSE: {
		/* no permission needed: it only ends what OPEN/CREATE counted */
		uint64_t ino = pfs_rbuf_u64(b);
		uint32_t left = pfs_rbuf_u32(b);
		rc = decode_end(b, 0);
		if (!rc)
			mds_open_close(s->opens, h->client_id, ino, left);
		break;
	}
	case PFS_OP_MDS_SETSTRIPE: {
		uint64_t ino = pfs_rbuf_u64(b);
		uint32_t ss = pfs_rbuf_u32(b), sc = pfs_rbuf_u32(b);
		uint32_t so = pfs_rbuf_left(b) ? pfs_rbuf_u32(b) : PFS_STRIPE_OFFSET_ANY;
		rc = decode_end(b, 0);
		if (!rc)
			rc = mds_ns_setstripe_at(s->ns, &c, ino, ss, sc, so);
		break;
	}
	case PFS_OP_MDS_SYNC: {
		/* fsync, fdatasync, fsyncdir: everything committed so far goes
		 * to disk (in db_sync=full it already is).  No permission is
		 * needed: a sync changes nothing and reveals nothing. */
		(void)pfs_rbuf_u64(b);
		rc = decode_end(b, 0);
		if (!rc && s->opts.sync_on_setsize)
			rc = mds_ns_sync(s->ns);
		break;
	}
	default:
		rc = -EOPNOTSUPP;
		break;
	}
	if (logged)
		mds_ns_reply_set(NULL);
	free(lay);
	return rc;
}

/* ------------------------------------------------------------ handlers */

static int h_ping(mds_server *s, const pfs_hdr *h, pfs_rbuf *b, const mds_req *rq,
		  pfs_wbuf *out)
{
	size_t n = pfs_rbuf_left(b);

	if (n)
		pfs_wbuf_bytes(out, pfs_rbuf_bytes(b, n), n);
	return 0;
}

static int h_ns(mds_server *s, const pfs_hdr *h, pfs_rbuf *b, const mds_req *rq, pfs_wbuf *out)
{
	return dispatch_ns(s, h, rq->role, b, out);
}

static int h_ost_list(mds_server *s, const pfs_hdr *h, pfs_rbuf *b, const mds_req *rq,
		      pfs_wbuf *out)
{
	return do_ost_list(s, b, out);
}

/* LFSCK: scan the OSTs for objects no layout references (mds/lfsck.h). */
static int h_lfsck(mds_server *s, const pfs_hdr *h, pfs_rbuf *b, const mds_req *rq,
		   pfs_wbuf *out)
{
	mds_lfsck_report r;
	uint8_t dry = pfs_rbuf_u8(b);
	int rc = pfs_rbuf_done(b);

	if (rc)
		return rc;
	pfs_log(PFS_LOG_NOTICE, "lfsck%s asked by %s", dry ? " --dry-run" : "",
		rq->peer ? rq->peer : "-");
	rc = mds_lfsck_run(s->ns, s->opts.auth, dry, &r);
	if (rc)
		return rc;
	pfs_wbuf_u64(out, r.referenced);
	pfs_wbuf_u32(out, r.n);
	for (uint32_t i = 0; i < r.n; i++) {
		pfs_wbuf_u32(out, r.ost[i].ost);
		pfs_wbuf_u8(out, r.ost[i].reached);
		pfs_wbuf_u64(out, r.ost[i].listed);
		pfs_wbuf_u64(out, r.ost[i].orphans);
		pfs_wbuf_u64(out, r.ost[i].queued);
	}
	mds_lfsck_report_free(&r);
	return pfs_wbuf_error(out);
}

static int h_oss_register(mds_server *s, const pfs_hdr *h, pfs_rbuf *b, const mds_req *rq,
			  pfs_wbuf *out)
{
	return do_register(s, b, rq, out);
}

static int h_oss_heartbeat(mds_server *s, const pfs_hdr *h, pfs_rbuf *b, const mds_req *rq,
			   pfs_wbuf *out)
{
	return do_heartbeat(s, b);
}

static int h_job_register(mds_server *s, const pfs_hdr *h, pfs_rbuf *b, const mds_req *rq,
			  pfs_wbuf *out)
{
	pfs_job_info j;
	int rc;

	if (!s->opts.jobs)
		return -EOPNOTSUPP;
	rc = pfs_job_info_decode(b, &j);
	if (!rc)
		rc = pfs_rbuf_done(b);
	return rc ? rc : mds_jobs_register(s->opts.jobs, h->uid, &j);
}

static int h_job_end(mds_server *s, const pfs_hdr *h, pfs_rbuf *b, const mds_req *rq,
		     pfs_wbuf *out)
{
	char job[PFS_JOBID_MAX + 1];
	int rc;

	if (!s->opts.jobs)
		return -EOPNOTSUPP;
	pfs_rbuf_cstr(b, job, sizeof(job));
	rc = pfs_rbuf_done(b);
	return rc ? rc : mds_jobs_end(s->opts.jobs, h->uid, job);
}

static int h_job_list(mds_server *s, const pfs_hdr *h, pfs_rbuf *b, const mds_req *rq,
		      pfs_wbuf *out)
{
	pfs_job_info *v = NULL;
	uint32_t n = 0;
	uint8_t all;
	int rc;

	if (!s->opts.jobs)
		return -EOPNOTSUPP;
	all = pfs_rbuf_u8(b);
	rc = pfs_rbuf_done(b);
	if (!rc && all > 1)
		rc = -EINVAL;
	if (!rc)
		rc = mds_jobs_list(s->opts.jobs, all, &v, &n);
	if (rc)
		return rc;
	pfs_wbuf_u32(out, n);
	for (uint32_t i = 0; i < n; i++)
		pfs_job_info_encode(out, &v[i]);
	free(v);
	return 0;
}

static int h_job_get(mds_server *s, const pfs_hdr *h, pfs_rbuf *b, const mds_req *rq,
		     pfs_wbuf *out)
{
	char job[PFS_JOBID_MAX + 1];
	pfs_job_info j;
	int rc;

	if (!s->opts.jobs)
		return -EOPNOTSUPP;
	pfs_rbuf_cstr(b, job, sizeof(job));
	rc = pfs_rbuf_done(b);
	if (!rc)
		rc = mds_jobs_get(s->opts.jobs, job, &j);
	if (!rc)
		pfs_job_info_encode(out, &j);
	return rc;
}

static int h_qos_show(mds_server *s, const pfs_hdr *h, pfs_rbuf *b, const mds_req *rq,
		      pfs_wbuf *out)
{
	char job[PFS_JOBID_MAX + 1];
	pfs_qos_status st;
	pfs_qos_row *rows = NULL;
	uint32_t n = 0;
	int rc;

	if (!s->opts.qos)
		return -EOPNOTSUPP;
	pfs_rbuf_cstr(b, job, sizeof(job));
	rc = pfs_rbuf_done(b);
	if (!rc)
		rc = mds_qosctl_show(s->opts.qos, job, h->uid,
				     (PFS_MAX_PAYLOAD - STATUS_MAX - 4) / ROW_MAX, &st, &rows, &n);
	if (rc)
		return rc;
	pfs_qos_status_encode(out, &st);
	pfs_wbuf_u32(out, n);
	for (uint32_t i = 0; i < n; i++)
		pfs_qos_row_encode(out, &rows[i]);
	free(rows);
	return 0;
}

static int h_qos_policy_set(mds_server *s, const pfs_hdr *h, pfs_rbuf *b, const mds_req *rq,
			    pfs_wbuf *out)
{
	char policy[PFS_QOS_NAME_MAX];
	char keys[MAX_POLICY_KEYS][PFS_QOS_NAME_MAX];
	qos_param kv[MAX_POLICY_KEYS];
	uint32_t n;
	int rc;

	if (!s->opts.qos)
		return -EOPNOTSUPP;
	pfs_rbuf_cstr(b, policy, sizeof(policy));
	n = pfs_rbuf_u32(b);
	if ((rc = pfs_rbuf_error(b)))
		return rc;
	if (n > MAX_POLICY_KEYS || n > pfs_rbuf_left(b) / (4 + 8))
		return -EBADMSG;
	for (uint32_t i = 0; i < n; i++) {
		pfs_rbuf_cstr(b, keys[i], sizeof(keys[i]));
		kv[i].key = keys[i];
		kv[i].value = pfs_rbuf_f64_finite(b);
	}
	rc = pfs_rbuf_done(b);
	if (rc)
		return rc;
	rc = mds_qosctl_set(s->opts.qos, policy, kv, n);
	if (rc)
		pfs_log(PFS_LOG_NOTICE, "qos: policy change from %s (uid %u) refused: %s",
			rq->peer ? rq->peer : "-", h->uid, pfs_strerror(rc));
	return rc;
}

static int h_qos_coupons(mds_server *s, const pfs_hdr *h, pfs_rbuf *b, const mds_req *rq,
			 pfs_wbuf *out)
{
	char job[PFS_JOBID_MAX + 1];
	pfs_qos_coupon_info *v = NULL;
	uint32_t n = 0, max = (PFS_MAX_PAYLOAD - 4) / COUPON_ROW_MAX;
	int rc;

	if (!s->opts.qos)
		return -EOPNOTSUPP;
	pfs_rbuf_cstr(b, job, sizeof(job));
	rc = pfs_rbuf_done(b);
	if (!rc)
		rc = mds_qosctl_coupons(s->opts.qos, job, h->uid, &v, &n);
	if (rc)
		return rc;
	if (n > max)
		n = max;
	pfs_wbuf_u32(out, n);
	for (uint32_t i = 0; i < n; i++)
		pfs_qos_coupon_info_encode(out, &v[i]);
	free(v);
	return 0;
}

static int h_qos_regret(mds_server *s, const pfs_hdr *h, pfs_rbuf *b, const mds_req *rq,
			pfs_wbuf *out)
{
	pfs_qos_regret_info r;
	int rc;

	if (!s->opts.qos)
		return -EOPNOTSUPP;
	rc = pfs_rbuf_done(b);
	if (!rc)
		rc = mds_qosctl_regret(s->opts.qos, &r);
	if (!rc)
		pfs_qos_regret_info_encode(out, &r);
	return rc;
}

/* May uid see job's counters?  Root: all; others: jobs the registry says
 * they own ("" and the overflow entry are root's). */
static int stats_visible(mds_server *s, const char *job, uint32_t uid)
{
	pfs_job_info j;

	if (uid == 0)
		return 1;
	return s->opts.jobs && uid != MDS_JOB_UID_UNKNOWN &&
	       mds_jobs_get(s->opts.jobs, job, &j) == 0 && j.uid == uid;
}

static int ctr_cmp(const void *a, const void *b)
{
	return strcmp(((const struct job_ctr *)a)->job, ((const struct job_ctr *)b)->job);
}

/* PFS_OP_MDS_JOBSTATS: u64 snapshot_ns, u32 n, n x { str job, u32 k,
 * k x { u16 opcode, u64 count } }; only opcodes with a count and only
 * non-empty job ids; unknown opcodes are counted under opcode 0. */
static int h_jobstats(mds_server *s, const pfs_hdr *h, pfs_rbuf *b, const mds_req *rq,
		      pfs_wbuf *out)
{
	char job[PFS_JOBID_MAX + 1];
	struct job_ctr *v = NULL;
	size_t n = 0, cap, n_at, emitted = 0;
	struct timespec ts;
	int rc;

	pfs_rbuf_cstr(b, job, sizeof(job));
	rc = pfs_rbuf_done(b);
	if (rc)
		return rc;
	/* copy under the lock (the request path takes it), encode outside */
	pthread_mutex_lock(&s->jobs_lock);
	cap = s->njobs + 1;
	v = malloc(cap * sizeof(*v));
	if (v) {
		for (unsigned i = 0; i < NBUCKETS; i++)
			for (struct job_ctr *j = s->jobs[i]; j; j = j->next)
				if (!job[0] || !strcmp(job, j->job))
					v[n++] = *j;
		if (!job[0] || !strcmp(job, s->overflow.job))
			v[n++] = s->overflow;
	}
	pthread_mutex_unlock(&s->jobs_lock);
	if (!v)
		return -ENOMEM;
	if (job[0] && !n) {
		free(v);
		return -ENOENT;
	}
	if (job[0] && !stats_visible(s, job, h->uid)) {
		free(v);
		return -EACCES;
	}
	qsort(v, n, sizeof(*v), ctr_cmp);
	clock_gettime(CLOCK_REALTIME, &ts);
	pfs_wbuf_u64(out, (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
	n_at = out->len;
	pfs_wbuf_u32(out, 0); /* patched below */
	for (size_t i = 0; i < n; i++) {
		uint32_t k = 0;
		/* Requests without a job id (pfsadmin's own, a mount's
		 * housekeeping) are counted but are no job to report. */
		if (!v[i].job[0] || !stats_visible(s, v[i].job, h->uid))
			continue;
		for (unsigned sl = 0; sl < NSLOTS; sl++)
			k += v[i].ops[sl] != 0;
		/* stop before the reply outgrows a frame */
		if (out->len + 4 + strlen(v[i].job) + 4 + (size_t)k * 10 > PFS_MAX_PAYLOAD)
			break;
		pfs_wbuf_str(out, v[i].job);
		pfs_wbuf_u32(out, k);
		for (unsigned sl = 0; sl < NSLOTS; sl++)
			if (v[i].ops[sl]) {
				pfs_wbuf_u16(out, sl < NOPS ? ops[sl].op : 0);
				pfs_wbuf_u64(out, v[i].ops[sl]);
			}
		emitted++;
	}
	free(v);
	if (pfs_wbuf_error(out))
		return pfs_wbuf_error(out);
	for (int i = 0; i < 4; i++)
		out->data[n_at + (size_t)i] = (uint8_t)(emitted >> (8 * i));
	return 0;
}

/* LOCK_*: the lock service; a LOCK_WAIT that waits is answered later by it
 * (MDS_LOCKSVC_LATER: the handler sends nothing). */
static int h_lock(mds_server *s, const pfs_hdr *h, pfs_rbuf *b, const mds_req *rq,
		  pfs_wbuf *out)
{
	return mds_locksvc_handle(s->locks, rq->conn, h, b, out);
}

/* NOTIFY_WAIT: the mount's invalidation channel (mds/lease.h); held
 * without a thread like LOCK_WAIT (the same "later" return). */
_Static_assert(MDS_LEASE_LATER == MDS_LOCKSVC_LATER, "one deferred-reply value");
static int h_notify(mds_server *s, const pfs_hdr *h, pfs_rbuf *b, const mds_req *rq,
		    pfs_wbuf *out)
{
	return mds_lease_wait(s->lease, rq->conn, h, b, out);
}

/* PFS_OP_MDS_ASCAR_SET (root): str rules -> u64 version. */
static int h_ascar_set(mds_server *s, const pfs_hdr *h, pfs_rbuf *b, const mds_req *rq,
		       pfs_wbuf *out)
{
	const char *p;
	char *text;
	size_t n;
	uint64_t v = 0;
	int rc, line = 0;

	p = pfs_rbuf_str(b, MDS_ASCAR_TEXT_MAX, &n);
	rc = pfs_rbuf_done(b);
	if (rc)
		return rc;
	text = strndup(p ? p : "", p ? n : 0);
	if (!text)
		return -ENOMEM;
	rc = mds_ascar_store_set(s->ns, text, &v, &line);
	free(text);
	if (rc) {
		pfs_log(PFS_LOG_NOTICE, "ascar: rule set from %s refused: %s (line %d)",
			rq->peer ? rq->peer : "-", pfs_strerror(rc), line);
		return rc;
	}
	pfs_log(PFS_LOG_NOTICE, "ascar: rule set v%llu %s by %s", (unsigned long long)v,
		n ? "loaded" : "off", rq->peer ? rq->peer : "-");
	pfs_wbuf_u64(out, v);
	return 0;
}

/* PFS_OP_MDS_ASCAR_GET: -> u64 version, str rules. */
static int h_ascar_get(mds_server *s, const pfs_hdr *h, pfs_rbuf *b, const mds_req *rq,
		       pfs_wbuf *out)
{
	char *text = NULL;
	uint64_t v;
	int rc = pfs_rbuf_done(b);

	if (!rc)
		rc = mds_ascar_store_get(s->ns, &v, &text);
	if (!rc) {
		pfs_wbuf_u64(out, v);
		pfs_wbuf_str(out, text);
	}
	free(text);
	return rc;
}

/* MDS_MDQOS_PULL (mounts): their usage in, their rates out (mds/mdqos.h). */
static int h_mdqos_pull(mds_server *s, const pfs_hdr *h, pfs_rbuf *b, const mds_req *rq,
			pfs_wbuf *out)
{
	if (!s->opts.mdqos)
		return -EOPNOTSUPP;
	return mds_mdqos_pull(s->opts.mdqos, h->client_id, b, out);
}

/* MDS_MDQOS_SHOW: settings and per-(job, class) rows; others than root
 * see their own jobs' rows only. */
static int h_mdqos_show(mds_server *s, const pfs_hdr *h, pfs_rbuf *b, const mds_req *rq,
			pfs_wbuf *out)
{
	pfs_mdq_status st;
	uint32_t k = 0;
	int rc;

	if (!s->opts.mdqos)
		return -EOPNOTSUPP;
	rc = pfs_rbuf_done(b);
	if (!rc)
		rc = mds_mdqos_show(s->opts.mdqos, &st);
	if (rc)
		return rc;
	for (uint32_t i = 0; i < st.n; i++)
		if (stats_visible(s, st.rows[i].job, h->uid) &&
		    k < (PFS_MAX_PAYLOAD - 4096) / (4 + PFS_JOBID_MAX + 1 + 32))
			st.rows[k++] = st.rows[i];
	st.n = k;
	rc = pfs_mdq_status_encode(out, &st);
	pfs_mdq_status_free(&st);
	return rc;
}

/* MDS_MDQOS_SET (root): str job, u32 n, n x { str key, str value }. */
static int h_mdqos_set(mds_server *s, const pfs_hdr *h, pfs_rbuf *b, const mds_req *rq,
		       pfs_wbuf *out)
{
	char job[PFS_JOBID_MAX + 1], keys[MAX_POLICY_KEYS][64], vals[MAX_POLICY_KEYS][64];
	const char *kp[MAX_POLICY_KEYS], *vp[MAX_POLICY_KEYS];
	char err[256] = "";
	uint32_t n;
	int rc;

	if (!s->opts.mdqos)
		return -EOPNOTSUPP;
	pfs_rbuf_cstr(b, job, sizeof(job));
	n = pfs_rbuf_u32(b);
	if ((rc = pfs_rbuf_error(b)))
		return rc;
	if (n > MAX_POLICY_KEYS || n > pfs_rbuf_left(b) / 8)
		return -EBADMSG;
	for (uint32_t i = 0; i < n; i++) {
		pfs_rbuf_cstr(b, keys[i], sizeof(keys[i]));
		pfs_rbuf_cstr(b, vals[i], sizeof(vals[i]));
		kp[i] = keys[i];
		vp[i] = vals[i];
	}
	rc = pfs_rbuf_done(b);
	if (rc)
		return rc;
	rc = mds_mdqos_set(s->opts.mdqos, job, kp, vp, n, err, sizeof(err));
	if (rc)
		pfs_log(PFS_LOG_NOTICE, "mdqos: change from %s (uid %u) refused: %s",
			rq->peer ? rq->peer : "-", h->uid, err[0] ? err : pfs_strerror(rc));
	else
		pfs_log(PFS_LOG_NOTICE, "mdqos: %u setting(s)%s%s changed by %s", n,
			job[0] ? " of job " : "", job, rq->peer ? rq->peer : "-");
	return rc;
}

/* DELEG_GET (mds/deleg.h): the namespace's conditions here (a directory,
 * not sticky, the cred may remove entries in it as UNLINK checks), then
 * another holder (refused, and its recall starts: someone else wants the
 * directory), then the client's (a notify channel to hear the recall,
 * nobody else leasing the directory), then the table's. */
static int h_deleg_get(mds_server *s, const pfs_hdr *h, pfs_rbuf *b, const mds_req *rq,
		       pfs_wbuf *out)
{
	uint64_t dir, holder, cid = h->client_id;
	uint32_t lease_ms = 0;
	pfs_cred c;
	pfs_attr a;
	int rc = pfs_cred_decode(b, &c), fresh;

	if (rc)
		return -EBADMSG;
	dir = pfs_rbuf_u64(b);
	rc = decode_end(b, 0);
	if (rc)
		return rc;
	if (!s->deleg)
		return -EAGAIN;
	squash(s, rq->role, &c);
	rc = mds_ns_getattr(s->ns, &c, dir, &a);
	if (!rc && !S_ISDIR(a.mode))
		rc = -ENOTDIR;
	if (!rc)
		rc = mds_ns_access(s->ns, &c, dir, W_OK | X_OK);
	if (rc)
		return rc;
	holder = mds_deleg_holder(s->deleg, dir);
	if (holder && holder != cid)
		return mds_deleg_get(s->deleg, cid, dir, &lease_ms); /* -EAGAIN, recall */
	if ((a.mode & S_ISVTX) || !mds_lease_registered(s->lease, cid) ||
	    mds_lease_watched(s->lease, cid, dir))
		return -EAGAIN;
	fresh = holder != cid;
	rc = mds_deleg_get(s->deleg, cid, dir, &lease_ms);
	if (rc)
		return rc;
	/* another client's read that passed the check before the grant
	 * leased the directory after it: not now */
	if (fresh && mds_lease_watched(s->lease, cid, dir)) {
		mds_deleg_return(s->deleg, cid, dir);
		return -EAGAIN;
	}
	pfs_wbuf_u32(out, lease_ms);
	pfs_attr_encode(out, &a);
	return 0;
}

/* DELEG_RETURN: the holder sent every unlink it answered; what waited
 * for the directory runs now, on this thread.  Not held: success. */
static int h_deleg_return(mds_server *s, const pfs_hdr *h, pfs_rbuf *b, const mds_req *rq,
			  pfs_wbuf *out)
{
	uint64_t dir;
	pfs_cred c;
	int rc = pfs_cred_decode(b, &c);

	if (rc)
		return -EBADMSG;
	dir = pfs_rbuf_u64(b);
	rc = decode_end(b, 0);
	if (!rc && s->deleg)
		mds_deleg_return(s->deleg, h->client_id, dir);
	return rc;
}

/* CREATE_SLOTS (mds/slots.h): only the holder of dir's delegation, within
 * its cap; the namespace checks the cred may create in dir and stores the
 * slots' records; they are counted for the client before they are
 * answered. */
static int h_create_slots(mds_server *s, const pfs_hdr *h, pfs_rbuf *b, const mds_req *rq,
			  pfs_wbuf *out)
{
	uint64_t dir, cid = h->client_id, now = pfs_clock_ms();
	uint64_t inos[PFS_CREATE_SLOTS_MAX];
	pfs_layout *lays = NULL;
	uint32_t n;
	pfs_cred c;
	pfs_attr a;
	int rc = pfs_cred_decode(b, &c);

	if (rc)
		return -EBADMSG;
	dir = pfs_rbuf_u64(b);
	n = pfs_rbuf_u32(b);
	rc = decode_end(b, 0);
	if (rc)
		return rc;
	if (n == 0 || n > PFS_CREATE_SLOTS_MAX)
		return -EINVAL;
	if (!s->deleg || !s->slots || mds_deleg_holder(s->deleg, dir) != cid)
		return -EAGAIN;
	if (mds_slots_room(s->slots, cid, now) < n)
		return -EAGAIN;
	squash(s, rq->role, &c);
	lays = malloc(n * sizeof(*lays));
	if (!lays)
		return -ENOMEM;
	rc = mds_ns_create_slots(s->ns, &c, dir, n, cid, (uint64_t)PFS_CREATE_SLOT_TTL_S * 1000,
				 inos, lays, &a);
	for (uint32_t i = 0; !rc && i < n; i++)
		rc = mds_slots_put(s->slots, cid, dir, inos[i], now);
	if (!rc) {
		pfs_attr_encode(out, &a);
		pfs_wbuf_u32(out, n);
		for (uint32_t i = 0; i < n; i++) {
			pfs_wbuf_u64(out, inos[i]);
			pfs_layout_encode(out, &lays[i]);
		}
	} else {
		/* the ones counted are dropped: the client got none (their
		 * records only expire) */
		for (uint32_t i = 0; i < n; i++)
			(void)mds_slots_take(s->slots, cid, dir, inos[i], now);
	}
	free(lays);
	return rc;
}

/* One row per opcode the MDS serves; the row index is the counter slot. */
static const struct op_row ops[NOPS] = {
	{ PFS_OP_PING, h_ping, 0 },
	{ PFS_OP_MDS_LOOKUP, h_ns, 0 },
	{ PFS_OP_MDS_GETATTR, h_ns, 0 },
	{ PFS_OP_MDS_SETATTR, h_ns, 0 },
	{ PFS_OP_MDS_CREATE, h_ns, 0 },
	{ PFS_OP_MDS_MKNOD, h_ns, 0 },
	{ PFS_OP_MDS_MKDIR, h_ns, 0 },
	{ PFS_OP_MDS_UNLINK, h_ns, 0 },
	{ PFS_OP_MDS_RMDIR, h_ns, 0 },
	{ PFS_OP_MDS_RENAME, h_ns, 0 },
	{ PFS_OP_MDS_READDIR, h_ns, 0 },
	{ PFS_OP_MDS_SYMLINK, h_ns, 0 },
	{ PFS_OP_MDS_READLINK, h_ns, 0 },
	{ PFS_OP_MDS_LINK, h_ns, 0 },
	{ PFS_OP_MDS_STATFS, h_ns, 0 },
	{ PFS_OP_MDS_SETXATTR, h_ns, 0 },
	{ PFS_OP_MDS_GETXATTR, h_ns, 0 },
	{ PFS_OP_MDS_LISTXATTR, h_ns, 0 },
	{ PFS_OP_MDS_REMOVEXATTR, h_ns, 0 },
	{ PFS_OP_MDS_OPEN, h_ns, 0 },
	{ PFS_OP_MDS_ACCESS, h_ns, 0 },
	{ PFS_OP_MDS_SETSIZE, h_ns, 0 },
	{ PFS_OP_MDS_GETLAYOUT, h_ns, 0 },
	{ PFS_OP_MDS_SETSTRIPE, h_ns, 0 },
	{ PFS_OP_MDS_CLOSE, h_ns, 0 },
	{ PFS_OP_MDS_SYNC, h_ns, 0 },
	{ PFS_OP_MDS_LOOKUP_BULK, h_ns, 0 },
	{ PFS_OP_MDS_LOCK_GET, h_lock, 0 },
	{ PFS_OP_MDS_LOCK_SET, h_lock, 0 },
	{ PFS_OP_MDS_LOCK_WAIT, h_lock, 0 },
	{ PFS_OP_MDS_LOCK_CANCEL, h_lock, 0 },
	{ PFS_OP_MDS_LOCK_RELEASE, h_lock, 0 },
	{ PFS_OP_MDS_LOCK_RECLAIM, h_lock, 0 },
	{ PFS_OP_MDS_OST_LIST, h_ost_list, 0 },
	{ PFS_OP_MDS_LFSCK, h_lfsck, 1 },
	{ PFS_OP_MDS_JOB_REGISTER, h_job_register, 0 },
	{ PFS_OP_MDS_JOB_END, h_job_end, 0 },
	{ PFS_OP_MDS_JOB_LIST, h_job_list, 0 },
	{ PFS_OP_MDS_JOB_GET, h_job_get, 0 },
	{ PFS_OP_MDS_QOS_SHOW, h_qos_show, 0 },
	{ PFS_OP_MDS_QOS_POLICY_SET, h_qos_policy_set, 1 },
	{ PFS_OP_MDS_QOS_COUPONS, h_qos_coupons, 0 },
	{ PFS_OP_MDS_QOS_REGRET, h_qos_regret, 0 },
	{ PFS_OP_MDS_JOBSTATS, h_jobstats, 0 },
	{ PFS_OP_MDS_MDQOS_PULL, h_mdqos_pull, 0 },
	{ PFS_OP_MDS_MDQOS_SHOW, h_mdqos_show, 0 },
	{ PFS_OP_MDS_MDQOS_SET, h_mdqos_set, 1 },
	{ PFS_OP_MDS_ASCAR_SET, h_ascar_set, 1 },
	{ PFS_OP_MDS_ASCAR_GET, h_ascar_get, 0 },
	{ PFS_OP_MDS_NOTIFY_WAIT, h_notify, 0 },
	{ PFS_OP_MDS_DELEG_GET, h_deleg_get, 0 },
	{ PFS_OP_MDS_DELEG_RETURN, h_deleg_return, 0 },
	{ PFS_OP_MDS_UNLINK_BATCH, h_ns, 0 },
	{ PFS_OP_MDS_CREATE_SLOTS, h_create_slots, 0 },
	{ PFS_OP_MDS_CREATE_BATCH, h_ns, 0 },
	{ PFS_OP_MDS_OSS_REGISTER, h_oss_register, 0 },
	{ PFS_OP_MDS_OSS_HEARTBEAT, h_oss_heartbeat, 0 },
};

/* What comes before a request's operation: the role check, the leases,
 * the admission.  0: run the operation (dispatch_op).  Apart from it
 * because a group commit's member (mds/nsgroup.h) does this before its
 * group holds the database's writer lock: the lock service's and the job
 * registry's threads hold their own locks while they wait for it. */
static int dispatch_pre(mds_server *s, const pfs_hdr *h, unsigned role, const char *peer)
{
	char job[PFS_JOBID_MAX + 1];

	if (!pfs_optab_allowed(h->opcode, role)) {
		/* before anything else: not counted, not seen by the registry */
		pfs_optab_log_refusal(&s->refusals, "mds", peer, h->opcode, role,
				      "role may not send it");
		return -EACCES;
	}
	/* any request renews the sender's lock lease */
	mds_locksvc_seen(s->locks, h->client_id);
	mds_open_seen(s->opens, h->client_id);
	pfs_hdr_jobid(h, job);
	return mds_server_admit(s, job, h);
}

/* A request's operation, after dispatch_pre. */
static int dispatch_op(mds_server *s, const pfs_hdr *h, unsigned role, const uint8_t *payload,
		       size_t len, const char *peer, pfs_sconn *conn, pfs_wbuf *out)
{
	unsigned slot = op_slot(s, h->opcode);
	mds_req rq = { peer, role, conn };
	pfs_rbuf b;
	int rc;

	pfs_rbuf_init(&b, payload, len);
	if (slot == NOPS || !ops[slot].fn)
		rc = -EOPNOTSUPP;
	else if (ops[slot].root && h->uid != 0)
		rc = -EPERM;
	else
		rc = ops[slot].fn(s, h, &b, &rq, out);
	if (rc == MDS_LOCKSVC_LATER)
		return rc;
	if (!rc)
		rc = pfs_wbuf_error(out);
	if (rc)
		pfs_wbuf_reset(out);
	if (rc && rc != -EOPNOTSUPP)
		pfs_log(PFS_LOG_DEBUG, "%s from %s: %s", pfs_op_name(h->opcode),
			peer ? peer : "-", pfs_strerror(rc));
	return rc;
}

static int dispatch_run(mds_server *s, const pfs_hdr *h, unsigned role, const uint8_t *payload,
			size_t len, const char *peer, pfs_sconn *conn, pfs_wbuf *out)
{
	int rc = dispatch_pre(s, h, role, peer);

	if (rc) {
		pfs_wbuf_reset(out);
		if (rc != -EACCES && rc != -EOPNOTSUPP)
			pfs_log(PFS_LOG_DEBUG, "%s from %s: %s", pfs_op_name(h->opcode),
				peer ? peer : "-", pfs_strerror(rc));
		return rc;
	}
	return dispatch_op(s, h, role, payload, len, peer, conn, out);
}

/* Requests whose second execution would differ from the first (mutations):
 * their replies go in the reply cache, so a resend gets the original. */
static int rc_tracked(uint16_t op)
{
	switch (op) {
	case PFS_OP_MDS_SETATTR: case PFS_OP_MDS_CREATE: case PFS_OP_MDS_MKNOD:
	case PFS_OP_MDS_MKDIR: case PFS_OP_MDS_UNLINK: case PFS_OP_MDS_RMDIR:
	case PFS_OP_MDS_RENAME: case PFS_OP_MDS_SYMLINK: case PFS_OP_MDS_LINK:
	case PFS_OP_MDS_SETXATTR: case PFS_OP_MDS_REMOVEXATTR: case PFS_OP_MDS_SETSIZE:
	case PFS_OP_MDS_SETSTRIPE: case PFS_OP_MDS_LOCK_SET: case PFS_OP_MDS_LOCK_RELEASE:
	case PFS_OP_MDS_UNLINK_BATCH: case PFS_OP_MDS_CREATE_BATCH:
	case PFS_OP_MDS_JOB_REGISTER: case PFS_OP_MDS_JOB_END:
	case PFS_OP_MDS_QOS_POLICY_SET: case PFS_OP_MDS_ASCAR_SET: case PFS_OP_MDS_MDQOS_SET:
		return 1;
	default:
		return 0;
	}
}

/* A resend the reply cache does not know: the reply its operation stored
 * in the database (mds/reply_log.h), if it committed before a restart.  0:
 * out holds the reply; else run the request (-ENOENT: no record). */
static int reply_from_log(mds_server *s, const pfs_hdr *h, unsigned role, pfs_wbuf *out)
{
	mds_ns_reply_rec *r = malloc(sizeof(*r));
	int rc;

	if (!r)
		return -ENOMEM;
	rc = mds_ns_reply_get(s->ns, h->client_id, h->req_id, r);
	if (!rc && r->opcode != h->opcode)
		rc = -ENOENT; /* another request under that id: not a resend of it */
	if (rc) {
		if (rc != -ENOENT)
			pfs_log(PFS_LOG_WARNING, "%s: reply log: %s (runs again)",
				pfs_op_name(h->opcode), pfs_strerror(rc));
		free(r);
		return rc;
	}
	pfs_wbuf_reset(out);
	if (r->has_attr)
		pfs_attr_encode(out, &r->attr);
	if (r->has_lay)
		pfs_layout_encode(out, &r->lay);
	if (h->opcode == PFS_OP_MDS_CREATE && r->has_lay) {
		/* the client opens what it created: count it, new capabilities */
		create_opened(s, h->client_id, r->attr.ino, "resent create");
		put_caps(s, h, role, &r->lay, PFS_CAPA_ALL, out);
	}
	rc = pfs_wbuf_error(out);
	if (rc)
		pfs_wbuf_reset(out);
	free(r);
	return rc;
}

/* dispatch_run behind the reply cache: a resend of a mutation that already
 * ran gets its recorded reply (status and payload) without running again;
 * one the cache does not know (an MDS restart since) gets the reply its
 * operation stored, if it committed (reply_from_log). */
static int dispatch(mds_server *s, const pfs_hdr *h, unsigned role, const uint8_t *payload,
		    size_t len, const char *peer, pfs_sconn *conn, pfs_wbuf *out)
{
	int track = s->rcache && rc_tracked(h->opcode) && pfs_optab_allowed(h->opcode, role);
	mds_rc_hit hit;
	int rc;

	if (track) {
		rc = mds_rc_begin(s->rcache, h->client_id, h->req_id,
				  !!(h->flags & PFS_F_RESEND), &hit);
		if (rc == MDS_RC_CACHED) {
			pfs_wbuf_reset(out);
			pfs_wbuf_bytes(out, hit.data, hit.len);
			rc = hit.status ? hit.status : pfs_wbuf_error(out);
			mds_rc_hit_free(&hit);
			pfs_log(PFS_LOG_DEBUG, "%s from %s: resend answered from the reply cache",
				pfs_op_name(h->opcode), peer ? peer : "-");
			return rc;
		}
		if (rc < 0)
			return rc;
		track = rc == MDS_RC_RUN;
	}
	int attr;
	if ((h->flags & PFS_F_RESEND) && reply_logged(h->opcode, &attr) &&
	    pfs_optab_allowed(h->opcode, role) &&
	    reply_from_log(s, h, role, out) == 0) {
		pfs_log(PFS_LOG_INFO, "%s from %s: resend answered from the reply log",
			pfs_op_name(h->opcode), peer ? peer : "-");
		if (track)
			mds_rc_end(s->rcache, h->client_id, h->req_id, 0, out->data, out->len);
		return 0;
	}
	rc = dispatch_run(s, h, role, payload, len, peer, conn, out);
	if (track && rc == MDS_LOCKSVC_LATER)
		mds_rc_abandon(s->rcache, h->client_id, h->req_id);
	else if (track)
		mds_rc_end(s->rcache, h->client_id, h->req_id, rc, out->data, rc ? 0 : out->len);
	return rc;
}

int mds_server_dispatch_role(mds_server *s, const pfs_hdr *h, unsigned role,
			     const uint8_t *payload, size_t len, const char *peer,
			     pfs_wbuf *out)
{
	return dispatch(s, h, role, payload, len, peer, NULL, out);
}

int mds_server_dispatch(mds_server *s, const pfs_hdr *h, const uint8_t *payload,
			size_t len, const char *peer, pfs_wbuf *out)
{
	return mds_server_dispatch_role(s, h, PFS_ROLE_ANY, payload, len, peer, out);
}

/* Group commit (mds/nsgroup.h): the namespace mutations that are one
 * write transaction (or a few, one after the other), need no sync before
 * their reply, never wait on the network or on another request, and
 * answer at once; their lease revocations are held until the group's
 * commit (held_hooks).  Not a resend: its reply cache lookup may wait for
 * its original, which may be queued behind it. */
static int grouped(const mds_server *s, const pfs_hdr *h)
{
	if (!s->group || (h->flags & PFS_F_RESEND))
		return 0;
	switch (h->opcode) {
	case PFS_OP_MDS_SETATTR: case PFS_OP_MDS_CREATE: case PFS_OP_MDS_MKNOD:
	case PFS_OP_MDS_MKDIR: case PFS_OP_MDS_UNLINK: case PFS_OP_MDS_RMDIR:
	case PFS_OP_MDS_RENAME: case PFS_OP_MDS_SYMLINK: case PFS_OP_MDS_LINK:
	case PFS_OP_MDS_SETXATTR: case PFS_OP_MDS_REMOVEXATTR: case PFS_OP_MDS_CLOSE:
	case PFS_OP_MDS_UNLINK_BATCH: case PFS_OP_MDS_CREATE_BATCH:
		return 1;
	}
	return 0;
}

/* A request given to the committer. */
struct grouped_req {
	mds_nsgroup_req g; /* first */
	mds_server *s;
	pfs_sconn *c;
	pfs_hdr h;
	uint8_t *payload;
	int track;         /* in the reply cache: recorded at done */
	pfs_wbuf out;
	struct held_hooks hooks;
};

/* dispatch's beginning, before the group holds the writer lock: the reply
 * cache (a first send: never waits) and dispatch_pre.  1: answer with
 * r->status without running. */
static int grouped_prep(mds_nsgroup_req *r)
{
	struct grouped_req *q = (struct grouped_req *)r;
	mds_server *s = q->s;
	unsigned role = pfs_sconn_role(q->c);
	mds_rc_hit hit;
	int rc;

	if (s->rcache && rc_tracked(q->h.opcode) && pfs_optab_allowed(q->h.opcode, role)) {
		rc = mds_rc_begin(s->rcache, q->h.client_id, q->h.req_id, 0, &hit);
		if (rc == MDS_RC_CACHED) {
			pfs_wbuf_bytes(&q->out, hit.data, hit.len);
			r->status = hit.status ? hit.status : pfs_wbuf_error(&q->out);
			mds_rc_hit_free(&hit);
			return 1;
		}
		if (rc < 0) {
			r->status = rc;
			return 1;
		}
		q->track = rc == MDS_RC_RUN;
	}
	rc = dispatch_pre(s, &q->h, role, pfs_sconn_peer(q->c));
	if (rc) {
		r->status = rc;
		return 1;
	}
	return 0;
}

/* The operation, inside the group. */
static int grouped_run(mds_nsgroup_req *r)
{
	struct grouped_req *q = (struct grouped_req *)r;
	int rc;

	held_hooks = &q->hooks;
	rc = dispatch_op(q->s, &q->h, pfs_sconn_role(q->c), q->payload, q->h.payload_len,
			 pfs_sconn_peer(q->c), q->c, &q->out);
	held_hooks = NULL;
	free(q->payload);
	q->payload = NULL;
	return rc;
}

/* After the group's commit: status is final (the commit's error replaces
 * a success). */
static void grouped_done(mds_nsgroup_req *r, int status)
{
	struct grouped_req *q = (struct grouped_req *)r;
	size_t n = status ? 0 : q->out.len;

	if (q->track)
		mds_rc_end(q->s->rcache, q->h.client_id, q->h.req_id, status, q->out.data, n);
	if (!status)
		hooks_run(q->s->lease, &q->hooks);
	hooks_free(&q->hooks);
	pfs_sconn_reply(q->c, &q->h, status, q->out.data, n, NULL, 0);
	pfs_wbuf_free(&q->out);
	free(q->payload);
	pfs_sconn_put(q->c);
	free(q);
}

/* 0: given to the committer, which answers; else not (answer here). */
static int group_submit(mds_server *s, pfs_sconn *c, const pfs_hdr *h, uint8_t *payload)
{
	struct grouped_req *q = calloc(1, sizeof(*q));

	if (!q)
		return -ENOMEM;
	q->g.prep = grouped_prep;
	q->g.run = grouped_run;
	q->g.done = grouped_done;
	/* may run here when the committer is idle (mds/nsgroup.h): they never
	 * reserve ids, so never sync */
	q->g.inline_ok = h->opcode == PFS_OP_MDS_UNLINK || h->opcode == PFS_OP_MDS_RMDIR ||
			 h->opcode == PFS_OP_MDS_UNLINK_BATCH;
	/* a batch's n unlinks: one commit, not n (mds_nsgroup_req.group_alone) */
	q->g.group_alone = h->opcode == PFS_OP_MDS_UNLINK_BATCH ||
			   h->opcode == PFS_OP_MDS_CREATE_BATCH;
	q->s = s;
	q->c = c;
	q->h = *h;
	q->payload = payload;
	pfs_wbuf_init(&q->out);
	pfs_sconn_get(c);
	if (mds_nsgroup_submit(s->group, &q->g)) {
		pfs_sconn_put(c);
		free(q);
		return -ESHUTDOWN;
	}
	return 0;
}

static void handler_now(void *ctx, pfs_sconn *c, const pfs_hdr *h, uint8_t *payload)
{
	mds_server *s = ctx;
	pfs_wbuf out;
	int rc;

	if (grouped(s, h) && group_submit(s, c, h, payload) == 0)
		return;
	pfs_wbuf_init(&out);
	rc = dispatch(s, h, pfs_sconn_role(c), payload, payload ? h->payload_len : 0,
		      pfs_sconn_peer(c), c, &out);
	if (rc != MDS_LOCKSVC_LATER)
		pfs_sconn_reply(c, h, rc, out.data, rc ? 0 : out.len, NULL, 0);
	pfs_wbuf_free(&out);
	free(payload);
}

/* A request held to run later, with a reference on its connection: by
 * PADLL on the MDS (mds/mdqos.h: over its (job, class) rate, run on one of
 * mdqos's release threads, so no worker waits) or by a directory
 * delegation (mds/deleg.h: parked until the holder's recall). */
struct held_req {
	mds_server *s;
	pfs_sconn *c;
	pfs_hdr h;
	uint8_t *payload;
};

static struct held_req *held_new(mds_server *s, pfs_sconn *c, const pfs_hdr *h,
				 uint8_t *payload)
{
	struct held_req *d = malloc(sizeof(*d));

	if (!d)
		return NULL;
	d->s = s;
	d->c = c;
	d->h = *h;
	d->payload = payload;
	pfs_sconn_get(c);
	return d;
}

/* Its turn: run(s, c, h, payload) (status 0), or answer status; then the
 * reference and d go. */
static void held_end(struct held_req *d, int status,
		     void (*run)(void *ctx, pfs_sconn *c, const pfs_hdr *h, uint8_t *payload))
{
	if (status) {
		pfs_sconn_reply(d->c, &d->h, status, NULL, 0, NULL, 0);
		free(d->payload);
	} else {
		run(d->s, d->c, &d->h, d->payload);
	}
	pfs_sconn_put(d->c);
	free(d);
}

static void mdq_release(void *arg, int status)
{
	held_end(arg, status, handler_now);
}

/* Directory delegations (mds/deleg.h): the directories and inodes a
 * namespace request names, checked against the table before anything
 * else runs for it.  Up to 4 into t; 0 when none or undecodable (the
 * request then fails its own decoding).  RMDIR and RENAME also name the
 * directory their name removes or replaces (a read, paid only while some
 * delegation is held). */
#define DELEG_TARGETS 4

static unsigned deleg_targets(mds_server *s, const pfs_hdr *h, const uint8_t *p, size_t len,
			      uint64_t *t)
{
	char name[PFS_NAME_MAX + 1], name2[PFS_NAME_MAX + 1];
	uint64_t np = 0;
	pfs_cred c, root;
	pfs_attr a;
	pfs_rbuf b;
	unsigned n = 0;
	int bad = 0;

	switch (h->opcode) {
	case PFS_OP_MDS_LOOKUP: case PFS_OP_MDS_GETATTR: case PFS_OP_MDS_SETATTR:
	case PFS_OP_MDS_CREATE: case PFS_OP_MDS_MKNOD: case PFS_OP_MDS_MKDIR:
	case PFS_OP_MDS_UNLINK: case PFS_OP_MDS_RMDIR: case PFS_OP_MDS_RENAME:
	case PFS_OP_MDS_READDIR: case PFS_OP_MDS_LOOKUP_BULK: case PFS_OP_MDS_SYMLINK:
	case PFS_OP_MDS_LINK: case PFS_OP_MDS_OPEN: case PFS_OP_MDS_ACCESS:
	case PFS_OP_MDS_GETXATTR: case PFS_OP_MDS_SETXATTR: case PFS_OP_MDS_LISTXATTR:
	case PFS_OP_MDS_REMOVEXATTR: case PFS_OP_MDS_SETSIZE: case PFS_OP_MDS_GETLAYOUT:
	case PFS_OP_MDS_SETSTRIPE: case PFS_OP_MDS_SYNC: case PFS_OP_MDS_UNLINK_BATCH:
	case PFS_OP_MDS_CREATE_BATCH:
		break;
	default:
		return 0;
	}
	if (!p)
		return 0;
	pfs_rbuf_init(&b, p, len);
	if (pfs_cred_decode(&b, &c))
		return 0;
	t[n++] = pfs_rbuf_u64(&b);
	if (h->opcode == PFS_OP_MDS_LINK) {
		t[n++] = pfs_rbuf_u64(&b);
	} else if (h->opcode == PFS_OP_MDS_RMDIR || h->opcode == PFS_OP_MDS_RENAME) {
		get_name(&b, name, PFS_NAME_MAX, &bad);
		if (h->opcode == PFS_OP_MDS_RENAME) {
			np = pfs_rbuf_u64(&b);
			get_name(&b, name2, PFS_NAME_MAX, &bad);
			t[n++] = np;
		}
		if (pfs_rbuf_error(&b) || bad)
			return 0;
		memset(&root, 0, sizeof(root));
		if (mds_ns_lookup(s->ns, &root, t[0], name, &a) == 0 && S_ISDIR(a.mode))
			t[n++] = a.ino;
		if (np && mds_ns_lookup(s->ns, &root, np, name2, &a) == 0 && S_ISDIR(a.mode))
			t[n++] = a.ino;
	}
	return pfs_rbuf_error(&b) ? 0 : n;
}

static void handler(void *ctx, pfs_sconn *c, const pfs_hdr *h, uint8_t *payload);

/* The table's release callback: run the request from the start (it may
 * park on another directory), or answer status. */
static void deleg_release(void *arg, void *req, int status)
{
	held_end(req, status, handler);
}

static int deleg_recall(void *arg, uint64_t client, uint64_t dir)
{
	mds_server *s = arg;
	int rc = mds_lease_recall(s->lease, client, dir);

	if (rc)
		pfs_log(PFS_LOG_DEBUG, "deleg: recall of directory %llu: client %016llx: %s",
			(unsigned long long)dir, (unsigned long long)client,
			rc == -EPIPE ? "its notify connection is closed" : "no notify channel");
	return rc;
}

/* 1: parked (the table runs it later); 0: run it now.  The holder's own
 * requests renew its delegation here. */
static int deleg_park(mds_server *s, pfs_sconn *c, const pfs_hdr *h, uint8_t *payload)
{
	uint64_t t[DELEG_TARGETS];
	unsigned n = deleg_targets(s, h, payload, payload ? h->payload_len : 0, t);
	struct held_req *p;

	/* the reference first: a return may release it at once */
	if (!n || !(p = held_new(s, c, h, payload)))
		return 0;
	if (mds_deleg_check(s->deleg, h->client_id, t, n, p))
		return 1;
	pfs_sconn_put(c);
	free(p);
	return 0;
}

/* What a request costs PADLL (mds/mdqos.h): UNLINK_BATCH its n unlinks
 * (batching must not bypass a job's unlink rate), any other 1; a batch
 * whose n cannot be read or is out of range costs 1 (it fails -EINVAL). */
static unsigned mdq_cost(const pfs_hdr *h, const uint8_t *payload)
{
	pfs_rbuf b;
	pfs_cred c;
	uint32_t n;

	if ((h->opcode != PFS_OP_MDS_UNLINK_BATCH && h->opcode != PFS_OP_MDS_CREATE_BATCH) ||
	    !payload)
		return 1;
	pfs_rbuf_init(&b, payload, h->payload_len);
	if (pfs_cred_decode(&b, &c))
		return 1;
	(void)pfs_rbuf_u64(&b);
	n = pfs_rbuf_u32(&b);
	return pfs_rbuf_error(&b) || n == 0 ||
	       n > (h->opcode == PFS_OP_MDS_UNLINK_BATCH ? PFS_UNLINK_BATCH_MAX
							 : PFS_CREATE_SLOTS_MAX) ? 1 : n;
}

static void handler(void *ctx, pfs_sconn *c, const pfs_hdr *h, uint8_t *payload)
{
	mds_server *s = ctx;
	char job[PFS_JOBID_MAX + 1];
	struct held_req *d;
	unsigned cost;
	int rc;

	/* before PADLL, the reply cache and the group commit: a request
	 * on a directory another client holds waits for its recall; with
	 * no delegation held this is one atomic load */
	if (mds_deleg_any(s->deleg) && deleg_park(s, c, h, payload))
		return;
	pfs_hdr_jobid(h, job);
	cost = s->opts.mdqos ? mdq_cost(h, payload) : 1;
	if (!s->opts.mdqos || mds_mdqos_admit(s->opts.mdqos, job, h->opcode, cost) == 0 ||
	    !(d = held_new(s, c, h, payload))) {
		handler_now(s, c, h, payload);
		return;
	}
	rc = mds_mdqos_defer(s->opts.mdqos, job, h->opcode, cost, mdq_release, d);
	if (rc) {
		/* over MDS_MDQOS_QUEUED_MAX held, or stopping: refuse it */
		pfs_sconn_reply(c, h, rc, NULL, 0, NULL, 0);
		pfs_sconn_put(c);
		free(payload);
		free(d);
	}
}

/* Requests run on the server's event loop instead of a worker: the
 * read-only namespace opcodes, which take an LMDB read transaction (MVCC:
 * never waits for a writer), make no network call and never sync.  Saves a
 * thread hand-off per lookup/getattr (see inline_if in common/server.h).
 * An opcode added here must keep all three properties. */
static int runs_inline(void *ctx, const pfs_hdr *h)
{
	/* a group commit's member: the loop only queues it for the
	 * committer (after PADLL's admission, which never waits) */
	if (grouped(ctx, h))
		return 1;
	switch (h->opcode) {
	case PFS_OP_PING: case PFS_OP_MDS_LOOKUP: case PFS_OP_MDS_GETATTR:
	case PFS_OP_MDS_READDIR: case PFS_OP_MDS_READLINK: case PFS_OP_MDS_GETXATTR:
	case PFS_OP_MDS_LISTXATTR: case PFS_OP_MDS_ACCESS: case PFS_OP_MDS_STATFS:
		return 1;
	}
	return 0;
}

/* The loop's tick: OST liveness discounts the time the MDS itself was
 * stopped or starved (mds_ns_ost_tick, mds/ostreg.h). */
static void on_loop_tick(void *ctx, uint64_t now_ms)
{
	mds_server *s = ctx;

	(void)now_ms;
	mds_ns_ost_tick(s->ns);
}

int mds_server_start(mds_ns *ns, const mds_server_opts *opts, mds_server **out)
{
	mds_server *s = calloc(1, sizeof(*s));
	pfs_server_opts so = { 0 };
	int rc;

	if (!s)
		return -ENOMEM;
	s->ns = ns;
	s->opts = *opts;
	strcpy(s->overflow.job, "(other)");
	for (size_t i = 0; i < sizeof(s->slot_of) / sizeof(s->slot_of[0]); i++)
		s->slot_of[i] = -1;
	for (int i = 0; i < NOPS; i++) {
		assert(ops[i].fn && ops[i].op < 512); /* NOPS matches the table */
		s->slot_of[ops[i].op] = (int16_t)i;
	}
	if (opts->capa_key) {
		memcpy(s->capa_key, opts->capa_key, PFS_CAPA_KEY_LEN);
		s->have_capa = 1;
	} else if (opts->auth && pfs_auth_cap_key(opts->auth, s->capa_key) == 0) {
		s->have_capa = 1;
	}
	/* the namespace remembers the lock holders: lock replay after a restart */
	rc = mds_locksvc_start_opts(&(mds_locksvc_opts){ .lease_s = opts->lock_lease_s,
							 .ns = ns }, &s->locks);
	if (rc) {
		free(s);
		return rc;
	}
	rc = mds_rc_create(NULL, &s->rcache);
	if (rc) {
		mds_locksvc_stop(s->locks);
		free(s);
		return rc;
	}
	rc = mds_open_create(ns, opts->lock_lease_s, 0, &s->opens);
	if (rc) {
		mds_locksvc_stop(s->locks);
		mds_rc_destroy(s->rcache);
		free(s);
		return rc;
	}
	if (opts->md_lease_s) {
		mds_lease_opts lo = { .lease_ms = opts->md_lease_s * 1000 };

		rc = mds_lease_create(&lo, &s->lease);
		if (rc) {
			mds_locksvc_stop(s->locks);
			mds_rc_destroy(s->rcache);
			mds_open_destroy(s->opens);
			free(s);
			return rc;
		}
	}
	if (s->lease && !opts->deleg_off) {
		mds_deleg_opts dopt = {
			.lease_ms = opts->deleg_ms ? opts->deleg_ms : opts->md_lease_s * 1000,
			.recall_ms = opts->deleg_recall_ms,
			.recall = deleg_recall,
			.release = deleg_release,
			.arg = s,
		};

		rc = mds_deleg_create(&dopt, &s->deleg);
		if (rc) {
			mds_lease_destroy(s->lease);
			mds_locksvc_stop(s->locks);
			mds_rc_destroy(s->rcache);
			mds_open_destroy(s->opens);
			free(s);
			return rc;
		}
		/* asynchronous create rides on the delegations; without the
		 * table CREATE_SLOTS answers -EAGAIN and creates stay sync */
		s->slots = mds_slots_new(0, 0);
		if (!s->slots)
			pfs_log(PFS_LOG_WARNING, "create slots: no memory: asynchronous create off");
	}
	rc = mds_nsgroup_start(ns, 0, &s->group);
	if (rc) {
		mds_slots_free(s->slots);
		mds_deleg_destroy(s->deleg);
		mds_lease_destroy(s->lease);
		mds_locksvc_stop(s->locks);
		mds_rc_destroy(s->rcache);
		mds_open_destroy(s->opens);
		free(s);
		return rc;
	}
	pthread_mutex_init(&s->jobs_lock, NULL);
	pfs_optab_log_init(&s->refusals);
	so.host = opts->host;
	so.port = opts->port;
	so.name = "mds";
	so.auth = opts->auth;
	so.inline_if = runs_inline;
	so.tick = on_loop_tick;
	rc = pfs_server_start(&so, handler, s, &s->srv);
	if (rc) {
		pfs_optab_log_destroy(&s->refusals);
		pthread_mutex_destroy(&s->jobs_lock);
		mds_locksvc_stop(s->locks);
		mds_rc_destroy(s->rcache);
		mds_open_destroy(s->opens);
		mds_deleg_destroy(s->deleg);
		mds_lease_destroy(s->lease);
		mds_nsgroup_stop(s->group);
		mds_slots_free(s->slots);
		free(s);
		return rc;
	}
	/* once the restart's orphans had their lease and the OSSes their
	 * first heartbeats: the scrub (failure to start it is only logged) */
	if (opts->lfsck_after_start &&
	    mds_lfsck_timer_start(ns, opts->auth,
				  2000u * (opts->lock_lease_s ? opts->lock_lease_s : 30), &s->lfsck))
		pfs_log(PFS_LOG_WARNING, "lfsck after start: no thread");
	*out = s;
	return 0;
}

int mds_server_deleg_stats(mds_server *s, mds_deleg_stats *st)
{
	if (!s->deleg)
		return -ENOENT;
	mds_deleg_get_stats(s->deleg, st);
	return 0;
}

uint16_t mds_server_port(const mds_server *s)
{
	return pfs_server_port(s->srv);
}

void mds_server_stop(mds_server *s)
{
	if (!s)
		return;
	pfs_server_stop(s->srv);
	/* after the server, before the group and the leases its released
	 * requests and recalls use: parked requests are answered into
	 * closed connections */
	mds_deleg_destroy(s->deleg);
	/* after the server (no more requests), before what members use */
	mds_nsgroup_stop(s->group);
	mds_slots_free(s->slots); /* the CREATEs of the group took slots */
	mds_lfsck_timer_stop(s->lfsck);
	mds_open_destroy(s->opens);
	/* after the server, like the lock service's held waits */
	mds_lease_destroy(s->lease);
	/* after the server: held LOCK_WAITs are answered into closed connections */
	mds_locksvc_stop(s->locks);
	mds_rc_destroy(s->rcache);
	for (unsigned i = 0; i < NBUCKETS; i++) {
		struct job_ctr *j = s->jobs[i];
		while (j) {
			struct job_ctr *n = j->next;
			free(j);
			j = n;
		}
	}
	pthread_mutex_destroy(&s->jobs_lock);
	pfs_optab_log_destroy(&s->refusals);
	explicit_bzero(s->capa_key, sizeof(s->capa_key));
	free(s);
}
