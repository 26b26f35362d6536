/* server.c — MDS request dispatcher: decode, admit (per-job counters; the
 * PADLL hook), call mds_ns, encode the reply.
 *
 * Each request runs on its connection's thread (common/server.c), so one
 * slow client only stalls itself; LMDB serialises the writers.  Decoding is
 * straight-line on a sticky-error pfs_rbuf and checked once with
 * pfs_rbuf_done, so a short, long or garbled payload gets -EBADMSG.  Counts
 * taken from the wire are bounded before any allocation they size.
 * Job counters live in a fixed hash table of at most MAX_JOBS jobs; further
 * job ids are counted under one overflow entry so garbage job ids cannot
 * grow memory without bound. */
#include "mds/server.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/layout.h"
#include "common/log.h"
#include "common/msg.h"
#include "common/net.h"
#include "common/server.h"

#define NSLOTS 40         /* opcode classes counted per job */
#define NBUCKETS 256
#define MAX_JOBS 4096
#define MAX_OSTS_PER_MSG 1024

struct job_ctr {
	char job[PFS_JOBID_MAX + 1];
	uint64_t ops[NSLOTS];
	struct job_ctr *next;
};

struct mds_server {
	mds_ns *ns;
	mds_server_opts opts;
	pfs_server *srv;
	pthread_mutex_t jobs_lock; /* guards jobs, njobs, overflow */
	struct job_ctr *jobs[NBUCKETS];
	unsigned njobs;
	struct job_ctr overflow;
};

/* Slot of an opcode in job_ctr.ops: namespace opcodes one each, then
 * admin, control and everything else. */
static unsigned op_slot(uint16_t op)
{
	if (op >= PFS_OP_MDS_LOOKUP && op <= PFS_OP_MDS_SETSTRIPE)
		return op - PFS_OP_MDS_LOOKUP;
	if (op == PFS_OP_MDS_OST_LIST)
		return NSLOTS - 4;
	if (op == PFS_OP_MDS_OSS_REGISTER || op == PFS_OP_MDS_OSS_HEARTBEAT)
		return NSLOTS - 3;
	if (op == PFS_OP_PING)
		return NSLOTS - 2;
	return NSLOTS - 1;
}

_Static_assert(PFS_OP_MDS_SETSTRIPE - PFS_OP_MDS_LOOKUP < NSLOTS - 4, "op slots");

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

/* Admission of one metadata operation of a job.  Today it only counts;
 * this is the PADLL hook: a per-job, per-op-class rate limiter decides here
 * whether to proceed, wait, or refuse (return a negative errno). */
static int mds_server_admit(mds_server *s, const char *job, uint16_t op)
{
	pthread_mutex_lock(&s->jobs_lock);
	job_find(s, job, 1)->ops[op_slot(op)]++;
	pthread_mutex_unlock(&s->jobs_lock);
	return 0;
}

uint64_t mds_server_job_ops(mds_server *s, const char *job, uint16_t op)
{
	uint64_t n = 0;

	pthread_mutex_lock(&s->jobs_lock);
	struct job_ctr *j = job_find(s, job, 0);
	if (j)
		n = j->ops[op_slot(op)];
	pthread_mutex_unlock(&s->jobs_lock);
	return n;
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

static int do_register(mds_server *s, pfs_rbuf *b, const char *peer, pfs_wbuf *out)
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
	/* An OSS bound to the wildcard address is reached where it came from. */
	if (!host[0] || strcmp(host, "0.0.0.0") == 0 || strcmp(host, "::") == 0) {
		uint16_t pp;
		if (!peer || pfs_addr_parse(peer, host, sizeof(host), &pp))
			snprintf(host, sizeof(host), "127.0.0.1");
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

/* Namespace opcodes: all start with a cred. */
static int dispatch_ns(mds_server *s, uint16_t op, pfs_rbuf *b, pfs_wbuf *out)
{
	char name[PFS_NAME_MAX + 1], name2[PFS_NAME_MAX + 1];
	pfs_cred c;
	pfs_attr a;
	pfs_layout *lay = NULL;
	int bad = 0, rc;

	rc = pfs_cred_decode(b, &c);
	if (rc)
		return rc == -EBADMSG ? rc : -EBADMSG;
	switch (op) {
	case PFS_OP_MDS_LOOKUP: {
		uint64_t parent = pfs_rbuf_u64(b);
		get_name(b, name, PFS_NAME_MAX, &bad);
		rc = decode_end(b, bad);
		if (!rc)
			rc = mds_ns_lookup(s->ns, &c, parent, name, &a);
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
		if (!rc)
			pfs_attr_encode(out, &a);
		break;
	}
	case PFS_OP_MDS_CREATE: {
		uint64_t parent = pfs_rbuf_u64(b);
		get_name(b, name, PFS_NAME_MAX, &bad);
		uint32_t mode = pfs_rbuf_u32(b), flags = pfs_rbuf_u32(b);
		uint32_t ss = pfs_rbuf_u32(b), sc = pfs_rbuf_u32(b);
		rc = decode_end(b, bad);
		if (!rc && !(lay = malloc(sizeof(*lay))))
			rc = -ENOMEM;
		if (!rc)
			rc = mds_ns_create(s->ns, &c, parent, name, mode, flags, ss, sc, &a, lay);
		if (!rc) {
			pfs_attr_encode(out, &a);
			pfs_layout_encode(out, lay);
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
			pfs_attr_encode(out, &a);
		break;
	}
	case PFS_OP_MDS_UNLINK:
	case PFS_OP_MDS_RMDIR: {
		uint64_t parent = pfs_rbuf_u64(b);
		get_name(b, name, PFS_NAME_MAX, &bad);
		rc = decode_end(b, bad);
		if (!rc)
			rc = op == PFS_OP_MDS_UNLINK ? mds_ns_unlink(s->ns, &c, parent, name)
						     : mds_ns_rmdir(s->ns, &c, parent, name);
		break;
	}
	case PFS_OP_MDS_RENAME: {
		uint64_t parent = pfs_rbuf_u64(b);
		get_name(b, name, PFS_NAME_MAX, &bad);
		uint64_t np = pfs_rbuf_u64(b);
		get_name(b, name2, PFS_NAME_MAX, &bad);
		uint32_t flags = pfs_rbuf_u32(b);
		rc = decode_end(b, bad);
		if (!rc)
			rc = mds_ns_rename(s->ns, &c, parent, name, np, name2, flags);
		break;
	}
	case PFS_OP_MDS_READDIR:
		rc = do_readdir(s, &c, b, out);
		break;
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
		break;
	}
	case PFS_OP_MDS_OPEN: {
		uint64_t ino = pfs_rbuf_u64(b);
		uint32_t flags = pfs_rbuf_u32(b);
		rc = decode_end(b, 0);
		if (!rc && !(lay = malloc(sizeof(*lay))))
			rc = -ENOMEM;
		if (!rc)
			rc = mds_ns_open_file(s->ns, &c, ino, flags, &a, lay);
		if (!rc) {
			pfs_attr_encode(out, &a);
			pfs_layout_encode(out, lay);
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
		rc = decode_end(b, 0);
		if (!rc)
			rc = mds_ns_setsize(s->ns, &c, ino, size, mt, &a);
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
		if (!rc && is_dir) {
			/* A directory's default: size and count, no stripe list
			 * (count may be 0 = default or UINT32_MAX = all). */
			pfs_wbuf_u32(out, lay->stripe_size);
			pfs_wbuf_u32(out, lay->stripe_count);
		} else if (!rc) {
			pfs_layout_encode(out, lay);
		}
		break;
	}
	case PFS_OP_MDS_SETSTRIPE: {
		uint64_t ino = pfs_rbuf_u64(b);
		uint32_t ss = pfs_rbuf_u32(b), sc = pfs_rbuf_u32(b);
		rc = decode_end(b, 0);
		if (!rc)
			rc = mds_ns_setstripe(s->ns, &c, ino, ss, sc);
		break;
	}
	default:
		rc = -EOPNOTSUPP;
		break;
	}
	free(lay);
	return rc;
}

int mds_server_dispatch(mds_server *s, const pfs_hdr *h, const uint8_t *payload,
			size_t len, const char *peer, pfs_wbuf *out)
{
	char job[PFS_JOBID_MAX + 1];
	pfs_rbuf b;
	int rc;

	pfs_rbuf_init(&b, payload, len);
	pfs_hdr_jobid(h, job);
	rc = mds_server_admit(s, job, h->opcode);
	if (rc)
		goto out;
	switch (h->opcode) {
	case PFS_OP_PING:
		if (len)
			pfs_wbuf_bytes(out, payload, len);
		break;
	case PFS_OP_MDS_OST_LIST:
		rc = do_ost_list(s, &b, out);
		break;
	case PFS_OP_MDS_OSS_REGISTER:
		rc = do_register(s, &b, peer, out);
		break;
	case PFS_OP_MDS_OSS_HEARTBEAT:
		rc = do_heartbeat(s, &b);
		break;
	default:
		if (h->opcode >= PFS_OP_MDS_LOOKUP && h->opcode <= PFS_OP_MDS_SETSTRIPE)
			rc = dispatch_ns(s, h->opcode, &b, out);
		else
			rc = -EOPNOTSUPP;
		break;
	}
	if (!rc)
		rc = pfs_wbuf_error(out);
out:
	if (rc)
		pfs_wbuf_reset(out);
	if (rc && rc != -EOPNOTSUPP)
		pfs_log(PFS_LOG_DEBUG, "%s from %s: %s", pfs_op_name(h->opcode),
			peer ? peer : "-", pfs_strerror(rc));
	return rc;
}

static void handler(void *ctx, pfs_sconn *c, const pfs_hdr *h, uint8_t *payload)
{
	mds_server *s = ctx;
	pfs_wbuf out;
	int rc;

	pfs_wbuf_init(&out);
	rc = mds_server_dispatch(s, h, payload, payload ? h->payload_len : 0, pfs_sconn_peer(c),
				 &out);
	pfs_sconn_reply(c, h, rc, out.data, rc ? 0 : out.len, NULL, 0);
	pfs_wbuf_free(&out);
	free(payload);
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
	pthread_mutex_init(&s->jobs_lock, NULL);
	so.host = opts->host;
	so.port = opts->port;
	so.name = "mds";
	rc = pfs_server_start(&so, handler, s, &s->srv);
	if (rc) {
		pthread_mutex_destroy(&s->jobs_lock);
		free(s);
		return rc;
	}
	*out = s;
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
	for (unsigned i = 0; i < NBUCKETS; i++) {
		struct job_ctr *j = s->jobs[i];
		while (j) {
			struct job_ctr *n = j->next;
			free(j);
			j = n;
		}
	}
	pthread_mutex_destroy(&s->jobs_lock);
	free(s);
}
