/* mdc.c — typed MDS calls over the RPC pool (see mdc.h).
 *
 * Every call follows the same shape: encode (cred first for namespace ops),
 * one pfs_rpc_call, decode with a pfs_rbuf, require pfs_rbuf_done.  The
 * helpers below keep that shape in one place so each opcode is a few lines. */
#include "client/mdc.h"
#include "client/mdqos.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

struct cli_mdc {
	pfs_rpc_pool *pool;
	int wrapped; /* the pool is the caller's (cli_mdc_wrap) */
	cli_mdqos *mdq; /* PADLL stage (client/mdqos.h), borrowed; NULL = none */
	int fs_errors;  /* map transport errors to -EIO (cli_mdc_set_fs_errors) */
};

int cli_client_id_new(uint64_t *out)
{
	uint64_t v = 0;

	/* 0 would look like "no client id" in logs; draw again. */
	while (v == 0) {
		ssize_t n = getrandom(&v, sizeof(v), 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof(v))
			return n < 0 ? -errno : -EIO;
	}
	*out = v;
	return 0;
}

int cli_mdc_create(const char *host, uint16_t port, const pfs_rpc_opts *opts, cli_mdc **out)
{
	cli_mdc *m = calloc(1, sizeof(*m));
	int rc;

	if (!m)
		return -ENOMEM;
	rc = pfs_rpc_pool_create(host, port, opts, &m->pool);
	if (rc) {
		free(m);
		return rc;
	}
	*out = m;
	return 0;
}

int cli_mdc_wrap(pfs_rpc_pool *pool, cli_mdc **out)
{
	cli_mdc *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	m->pool = pool;
	m->wrapped = 1;
	*out = m;
	return 0;
}

void cli_mdc_destroy(cli_mdc *m)
{
	if (!m)
		return;
	if (!m->wrapped)
		pfs_rpc_pool_destroy(m->pool);
	free(m);
}

pfs_rpc_pool *cli_mdc_pool(const cli_mdc *m)
{
	return m->pool;
}

void cli_mdc_set_mdqos(cli_mdc *m, cli_mdqos *q)
{
	m->mdq = q;
}

cli_mdqos *cli_mdc_mdqos(cli_mdc *m)
{
	return m->mdq;
}

void cli_mdc_set_fs_errors(cli_mdc *m, int on)
{
	__atomic_store_n(&m->fs_errors, on, __ATOMIC_RELAXED);
}

static int name_ok(const char *name)
{
	size_t n = strlen(name);

	if (n == 0)
		return -EINVAL;
	return n > PFS_NAME_MAX ? -ENAMETOOLONG : 0;
}

/* Start a namespace request: cred first. */
static void begin(pfs_wbuf *w, const cli_ctx *c)
{
	pfs_wbuf_init(w);
	pfs_cred_encode(w, &c->cred);
}

/* Send w (freed here) and return the reply in rep; rep must be freed by the
 * caller on every path (pfs_rpc_reply_free is safe on an empty reply). */
/* In call()'s flags beside the pool's PFS_RPC_*: the PADLL stage already
 * admitted the request (CLI_MDC_CHARGED); never passed to the pool. */
#define CALL_CHARGED 0x80000000u

static int call(cli_mdc *m, const char *job, uint16_t op, unsigned flags, pfs_wbuf *w,
		pfs_rpc_reply *rep)
{
	int rc = pfs_wbuf_error(w);

	pfs_rpc_reply_init(rep);
	if (rc == 0 && !(flags & CALL_CHARGED))
		cli_mdc_charge(m, job, op); /* PADLL: the job's rate for op's class */
	flags &= ~CALL_CHARGED;
	if (rc == 0)
		rc = pfs_rpc_call(m->pool, op, job, flags, w->data, w->len, NULL, 0, rep);
	pfs_wbuf_free(w);
	/* Recovery: the pool resent the request through the server's restart
	 * for the recovery window; what still failed in transport is an I/O
	 * error for the application, never EPIPE/ECONNREFUSED/ETIMEDOUT. */
	if (__atomic_load_n(&m->fs_errors, __ATOMIC_RELAXED))
		rc = pfs_rpc_fs_err(rc);
	return rc;
}

/* A call whose reply is empty. */
static int call_empty(cli_mdc *m, const cli_ctx *c, uint16_t op, unsigned flags, pfs_wbuf *w)
{
	pfs_rpc_reply rep = { 0 };
	pfs_rbuf r;
	int rc = call(m, c->job, op, flags, w, &rep);

	if (rc == 0) {
		pfs_rbuf_init(&r, rep.data, rep.len);
		rc = pfs_rbuf_done(&r);
	}
	pfs_rpc_reply_free(&rep);
	return rc;
}

cli_caps *cli_caps_get(cli_caps *c)
{
	if (c)
		__atomic_add_fetch(&c->refs, 1, __ATOMIC_RELAXED);
	return c;
}

void cli_caps_put(cli_caps *c)
{
	if (c && __atomic_sub_fetch(&c->refs, 1, __ATOMIC_ACQ_REL) == 0)
		free(c);
}

const pfs_capa *cli_caps_find(const cli_caps *c, uint32_t ost, uint64_t object)
{
	for (uint32_t i = 0; c && i < c->n; i++)
		if (c->v[i].ost == ost && c->v[i].object == object)
			return &c->v[i];
	return NULL;
}

int cli_caps_stale(const cli_caps *c, uint64_t now)
{
	return c && c->n && now >= c->got + (c->expiry > c->got ? (c->expiry - c->got) * 3 / 4 : 0);
}

/* The optional capabilities after a layout: u32 n, n x capa.  Kept in
 * *out when out != NULL, else read and dropped. */
static int decode_caps(pfs_rbuf *r, cli_caps **out)
{
	cli_caps *c;
	uint32_t n;

	if (out)
		*out = NULL;
	if (pfs_rbuf_left(r) == 0)
		return 0;
	n = pfs_rbuf_u32(r);
	if (pfs_rbuf_error(r) || n > PFS_MAX_STRIPES || (size_t)n * PFS_CAPA_LEN > pfs_rbuf_left(r))
		return -EBADMSG;
	c = calloc(1, sizeof(*c) + (size_t)n * sizeof(c->v[0]));
	if (!c)
		return -ENOMEM;
	c->refs = 1;
	c->n = n;
	c->got = (uint64_t)time(NULL);
	c->expiry = UINT64_MAX;
	for (uint32_t i = 0; i < n; i++) {
		pfs_capa_decode(r, &c->v[i]);
		if (c->v[i].expiry < c->expiry)
			c->expiry = c->v[i].expiry;
	}
	if (out && n)
		*out = c;
	else
		free(c);
	return pfs_rbuf_error(r);
}

/* A call whose reply is attr [+ layout when layout != NULL [+ caps]]. */
static int call_attr_caps(cli_mdc *m, const cli_ctx *c, uint16_t op, unsigned flags,
			  pfs_wbuf *w, pfs_attr *attr, pfs_layout *layout, cli_caps **caps)
{
	pfs_rpc_reply rep = { 0 };
	pfs_rbuf r;
	pfs_attr tmp;
	cli_caps *got = NULL;
	int rc = call(m, c->job, op, flags, w, &rep);

	if (caps)
		*caps = NULL;
	if (rc)
		goto out;
	pfs_rbuf_init(&r, rep.data, rep.len);
	rc = pfs_attr_decode(&r, attr ? attr : &tmp);
	if (rc == 0 && layout)
		rc = pfs_layout_decode(&r, layout);
	if (rc == 0 && layout)
		rc = decode_caps(&r, caps ? &got : NULL);
	if (rc == 0)
		rc = pfs_rbuf_done(&r);
	if (rc == 0 && caps)
		*caps = got;
	else
		cli_caps_put(got);
	if (rc == -EINVAL) /* a layout that fails pfs_layout_check */
		rc = -EBADMSG;
out:
	pfs_rpc_reply_free(&rep);
	return rc;
}

static int call_attr(cli_mdc *m, const cli_ctx *c, uint16_t op, unsigned flags, pfs_wbuf *w,
		     pfs_attr *attr, pfs_layout *layout)
{
	return call_attr_caps(m, c, op, flags, w, attr, layout, NULL);
}

int cli_mdc_lookup(cli_mdc *m, const cli_ctx *c, uint64_t parent, const char *name,
		   pfs_attr *attr)
{
	pfs_wbuf w;
	int rc = name_ok(name);

	if (rc)
		return rc;
	begin(&w, c);
	pfs_wbuf_u64(&w, parent);
	pfs_wbuf_str(&w, name);
	return call_attr(m, c, PFS_OP_MDS_LOOKUP, PFS_RPC_IDEMPOTENT, &w, attr, NULL);
}

int cli_mdc_getattr(cli_mdc *m, const cli_ctx *c, uint64_t ino, pfs_attr *attr)
{
	pfs_wbuf w;

	begin(&w, c);
	pfs_wbuf_u64(&w, ino);
	return call_attr(m, c, PFS_OP_MDS_GETATTR, PFS_RPC_IDEMPOTENT, &w, attr, NULL);
}

int cli_mdc_setattr(cli_mdc *m, const cli_ctx *c, uint64_t ino, const cli_setattr *sa,
		    pfs_attr *attr)
{
	pfs_wbuf w;

	begin(&w, c);
	pfs_wbuf_u64(&w, ino);
	pfs_wbuf_u32(&w, sa->valid);
	pfs_wbuf_u32(&w, sa->mode);
	pfs_wbuf_u32(&w, sa->uid);
	pfs_wbuf_u32(&w, sa->gid);
	pfs_wbuf_u64(&w, sa->size);
	pfs_wbuf_i64(&w, sa->atime_ns);
	pfs_wbuf_i64(&w, sa->mtime_ns);
	return call_attr(m, c, PFS_OP_MDS_SETATTR, PFS_RPC_IDEMPOTENT, &w, attr, NULL);
}

/* CREATE with every layout hint. */
static int create_file(cli_mdc *m, const cli_ctx *c, uint64_t parent, const char *name,
		       uint32_t mode, uint32_t flags, uint32_t stripe_size, uint32_t stripe_count,
		       uint32_t stripe_offset, pfs_attr *attr, pfs_layout *layout,
		       cli_caps **caps)
{
	pfs_wbuf w;
	int rc = name_ok(name);

	if (rc)
		return rc;
	begin(&w, c);
	pfs_wbuf_u64(&w, parent);
	pfs_wbuf_str(&w, name);
	pfs_wbuf_u32(&w, mode);
	pfs_wbuf_u32(&w, flags);
	pfs_wbuf_u32(&w, stripe_size);
	pfs_wbuf_u32(&w, stripe_count);
	pfs_wbuf_u32(&w, stripe_offset);
	return call_attr_caps(m, c, PFS_OP_MDS_CREATE, 0, &w, attr, layout, caps);
}

int cli_mdc_create_file(cli_mdc *m, const cli_ctx *c, uint64_t parent, const char *name,
			uint32_t mode, uint32_t flags, uint32_t stripe_size,
			uint32_t stripe_count, pfs_attr *attr, pfs_layout *layout)
{
	return create_file(m, c, parent, name, mode, flags, stripe_size, stripe_count,
			   PFS_STRIPE_OFFSET_ANY, attr, layout, NULL);
}

int cli_mdc_create_file_at(cli_mdc *m, const cli_ctx *c, uint64_t parent, const char *name,
			   uint32_t mode, uint32_t flags, uint32_t stripe_size,
			   uint32_t stripe_count, uint32_t stripe_offset, pfs_attr *attr,
			   pfs_layout *layout)
{
	return create_file(m, c, parent, name, mode, flags, stripe_size, stripe_count,
			   stripe_offset, attr, layout, NULL);
}

int cli_mdc_create_file_caps(cli_mdc *m, const cli_ctx *c, uint64_t parent, const char *name,
			     uint32_t mode, uint32_t flags, uint32_t stripe_size,
			     uint32_t stripe_count, pfs_attr *attr, pfs_layout *layout,
			     cli_caps **caps)
{
	return create_file(m, c, parent, name, mode, flags, stripe_size, stripe_count,
			   PFS_STRIPE_OFFSET_ANY, attr, layout, caps);
}

int cli_mdc_mknod(cli_mdc *m, const cli_ctx *c, uint64_t parent, const char *name,
		  uint32_t mode, uint32_t rdev, pfs_attr *attr)
{
	pfs_wbuf w;
	int rc = name_ok(name);

	if (rc)
		return rc;
	begin(&w, c);
	pfs_wbuf_u64(&w, parent);
	pfs_wbuf_str(&w, name);
	pfs_wbuf_u32(&w, mode);
	pfs_wbuf_u32(&w, rdev);
	return call_attr(m, c, PFS_OP_MDS_MKNOD, 0, &w, attr, NULL);
}

int cli_mdc_mkdir(cli_mdc *m, const cli_ctx *c, uint64_t parent, const char *name,
		  uint32_t mode, pfs_attr *attr)
{
	pfs_wbuf w;
	int rc = name_ok(name);

	if (rc)
		return rc;
	begin(&w, c);
	pfs_wbuf_u64(&w, parent);
	pfs_wbuf_str(&w, name);
	pfs_wbuf_u32(&w, mode);
	return call_attr(m, c, PFS_OP_MDS_MKDIR, 0, &w, attr, NULL);
}

/* cred, u64 parent, str name [, u64 ino when not 0] (UNLINK's expected
 * inode); call() flags. */
static int name_op_ino(cli_mdc *m, const cli_ctx *c, uint16_t op, uint64_t parent,
		       const char *name, uint64_t ino, unsigned flags)
{
	pfs_wbuf w;
	int rc = name_ok(name);

	if (rc)
		return rc;
	begin(&w, c);
	pfs_wbuf_u64(&w, parent);
	pfs_wbuf_str(&w, name);
	if (ino)
		pfs_wbuf_u64(&w, ino);
	return call_empty(m, c, op, flags, &w);
}

static int name_op(cli_mdc *m, const cli_ctx *c, uint16_t op, uint64_t parent,
		   const char *name)
{
	return name_op_ino(m, c, op, parent, name, 0, 0);
}

int cli_mdc_unlink(cli_mdc *m, const cli_ctx *c, uint64_t parent, const char *name)
{
	return name_op(m, c, PFS_OP_MDS_UNLINK, parent, name);
}

int cli_mdc_unlink_ino(cli_mdc *m, const cli_ctx *c, uint64_t parent, const char *name,
		       uint64_t ino, unsigned flags)
{
	/* ino 0: the plain UNLINK's payload */
	return name_op_ino(m, c, PFS_OP_MDS_UNLINK, parent, name, ino,
			   (flags & CLI_MDC_CHARGED) ? CALL_CHARGED : 0);
}

/* The reply of an UNLINK_BATCH or CREATE_BATCH: exactly n statuses, each
 * 0 or -errno, nothing after, into status (untouched unless all are
 * good); else -EPROTO. */
static int batch_statuses(const pfs_rpc_reply *rep, uint32_t n, int *status)
{
	int32_t st[PFS_UNLINK_BATCH_MAX > PFS_CREATE_SLOTS_MAX ? PFS_UNLINK_BATCH_MAX
							     : PFS_CREATE_SLOTS_MAX];
	pfs_rbuf r;

	if (n > sizeof(st) / sizeof(st[0]))
		return -EPROTO;
	pfs_rbuf_init(&r, rep->data, rep->len);
	if (pfs_rbuf_u32(&r) != n)
		return -EPROTO;
	for (uint32_t i = 0; i < n; i++) {
		st[i] = (int32_t)pfs_rbuf_u32(&r);
		if (st[i] > 0)
			return -EPROTO;
	}
	if (pfs_rbuf_done(&r))
		return -EPROTO;
	for (uint32_t i = 0; i < n; i++)
		status[i] = st[i];
	return 0;
}

int cli_mdc_unlink_batch(cli_mdc *m, const cli_ctx *c, uint64_t parent, uint32_t n,
			 const char *const *names, const uint64_t *inos, int *status,
			 unsigned flags)
{
	pfs_rpc_reply rep = { 0 };
	pfs_wbuf w;
	int rc = 0;

	if (n == 0 || n > PFS_UNLINK_BATCH_MAX)
		return -EINVAL;
	for (uint32_t i = 0; i < n && !rc; i++)
		rc = name_ok(names[i]);
	if (rc)
		return rc;
	/* PADLL: n UNLINKs, as the MDS charges them */
	if (!(flags & CLI_MDC_CHARGED))
		for (uint32_t i = 0; i < n; i++)
			cli_mdc_charge(m, c->job, PFS_OP_MDS_UNLINK);
	begin(&w, c);
	pfs_wbuf_u64(&w, parent);
	pfs_wbuf_u32(&w, n);
	for (uint32_t i = 0; i < n; i++) {
		pfs_wbuf_str(&w, names[i]);
		pfs_wbuf_u64(&w, inos[i]);
	}
	rc = call(m, c->job, PFS_OP_MDS_UNLINK_BATCH, CALL_CHARGED, &w, &rep);
	if (rc == 0)
		rc = batch_statuses(&rep, n, status);
	pfs_rpc_reply_free(&rep);
	return rc;
}

void cli_mdc_charge(cli_mdc *m, const char *job, uint16_t op)
{
	if (m->mdq)
		cli_mdqos_wait(m->mdq, job, op);
}

int cli_mdc_rmdir(cli_mdc *m, const cli_ctx *c, uint64_t parent, const char *name)
{
	return name_op(m, c, PFS_OP_MDS_RMDIR, parent, name);
}

int cli_mdc_rename(cli_mdc *m, const cli_ctx *c, uint64_t parent, const char *name,
		   uint64_t newparent, const char *newname, uint32_t flags)
{
	pfs_wbuf w;
	int rc = name_ok(name);

	if (rc == 0)
		rc = name_ok(newname);
	if (rc)
		return rc;
	begin(&w, c);
	pfs_wbuf_u64(&w, parent);
	pfs_wbuf_str(&w, name);
	pfs_wbuf_u64(&w, newparent);
	pfs_wbuf_str(&w, newname);
	pfs_wbuf_u32(&w, flags);
	return call_empty(m, c, PFS_OP_MDS_RENAME, 0, &w);
}

int cli_mdc_readdir(cli_mdc *m, const cli_ctx *c, uint64_t ino, uint64_t cookie, uint32_t max,
		    cli_dirent *ents, uint32_t *n, int *eof)
{
	pfs_rpc_reply rep = { 0 };
	pfs_wbuf w;
	pfs_rbuf r;
	uint32_t count;
	int rc;

	if (max == 0 || max > PFS_READDIR_MAX)
		return -EINVAL;
	begin(&w, c);
	pfs_wbuf_u64(&w, ino);
	pfs_wbuf_u64(&w, cookie);
	pfs_wbuf_u32(&w, max);
	rc = call(m, c->job, PFS_OP_MDS_READDIR, PFS_RPC_IDEMPOTENT, &w, &rep);
	if (rc)
		goto out;
	pfs_rbuf_init(&r, rep.data, rep.len);
	count = pfs_rbuf_u32(&r);
	*eof = pfs_rbuf_u8(&r) != 0;
	if (pfs_rbuf_error(&r) == 0 && count > max) {
		rc = -EBADMSG;
		goto out;
	}
	for (uint32_t i = 0; i < count && !pfs_rbuf_error(&r); i++) {
		ents[i].ino = pfs_rbuf_u64(&r);
		ents[i].mode = pfs_rbuf_u32(&r);
		ents[i].next_cookie = pfs_rbuf_u64(&r);
		pfs_rbuf_cstr(&r, ents[i].name, sizeof(ents[i].name));
	}
	rc = pfs_rbuf_done(&r);
	if (rc == 0)
		*n = count;
out:
	pfs_rpc_reply_free(&rep);
	return rc;
}

int cli_mdc_lookup_bulk_decode(const void *p, size_t len, uint32_t max, cli_bulkent *out,
			       uint32_t *n, int *eof)
{
	pfs_rbuf r;
	uint32_t count;
	int e;

	pfs_rbuf_init(&r, p, len);
	count = pfs_rbuf_u32(&r);
	e = pfs_rbuf_u8(&r);
	/* each entry takes at least a length and an attr */
	if (pfs_rbuf_error(&r) || count > max || e > 1 ||
	    (uint64_t)count * (4 + 76) > pfs_rbuf_left(&r))
		return -EBADMSG;
	for (uint32_t i = 0; i < count && !pfs_rbuf_error(&r); i++) {
		char *name = out[i].name;
		pfs_attr *a = &out[i].a;

		pfs_rbuf_cstr(&r, name, PFS_NAME_MAX + 1);
		pfs_attr_decode(&r, a);
		if (!pfs_rbuf_error(&r) && (!name[0] || strchr(name, '/') ||
					    strcmp(name, ".") == 0 || strcmp(name, "..") == 0))
			return -EBADMSG;
	}
	if (pfs_rbuf_done(&r))
		return -EBADMSG;
	*n = count;
	*eof = e;
	return 0;
}

int cli_mdc_lookup_bulk(cli_mdc *m, const cli_ctx *c, uint64_t dir, const char *after,
			uint32_t max, cli_bulkent *out, uint32_t *n, int *eof)
{
	pfs_rpc_reply rep = { 0 };
	pfs_wbuf w;
	int rc;

	if (max == 0 || max > PFS_LOOKUP_BULK_MAX || strlen(after) > PFS_NAME_MAX)
		return -EINVAL;
	begin(&w, c);
	pfs_wbuf_u64(&w, dir);
	pfs_wbuf_str(&w, after);
	pfs_wbuf_u32(&w, max);
	rc = call(m, c->job, PFS_OP_MDS_LOOKUP_BULK, PFS_RPC_IDEMPOTENT, &w, &rep);
	if (!rc)
		rc = cli_mdc_lookup_bulk_decode(rep.data, rep.len, max, out, n, eof);
	pfs_rpc_reply_free(&rep);
	return rc;
}

int cli_mdc_symlink(cli_mdc *m, const cli_ctx *c, uint64_t parent, const char *name,
		    const char *target, pfs_attr *attr)
{
	pfs_wbuf w;
	int rc = name_ok(name);

	if (rc)
		return rc;
	if (strlen(target) >= PFS_PATH_MAX)
		return -ENAMETOOLONG;
	begin(&w, c);
	pfs_wbuf_u64(&w, parent);
	pfs_wbuf_str(&w, name);
	pfs_wbuf_str(&w, target);
	return call_attr(m, c, PFS_OP_MDS_SYMLINK, 0, &w, attr, NULL);
}

int cli_mdc_readlink(cli_mdc *m, const cli_ctx *c, uint64_t ino, char *buf, size_t sz)
{
	pfs_rpc_reply rep = { 0 };
	pfs_wbuf w;
	pfs_rbuf r;
	const char *s;
	size_t n;
	int rc;

	begin(&w, c);
	pfs_wbuf_u64(&w, ino);
	rc = call(m, c->job, PFS_OP_MDS_READLINK, PFS_RPC_IDEMPOTENT, &w, &rep);
	if (rc)
		goto out;
	pfs_rbuf_init(&r, rep.data, rep.len);
	s = pfs_rbuf_str(&r, PFS_PATH_MAX, &n);
	rc = pfs_rbuf_done(&r);
	if (rc)
		goto out;
	if (n >= sz) {
		rc = -ENAMETOOLONG;
		goto out;
	}
	memcpy(buf, s, n);
	buf[n] = '\0';
out:
	pfs_rpc_reply_free(&rep);
	return rc;
}

int cli_mdc_link(cli_mdc *m, const cli_ctx *c, uint64_t ino, uint64_t newparent,
		 const char *newname, pfs_attr *attr)
{
	pfs_wbuf w;
	int rc = name_ok(newname);

	if (rc)
		return rc;
	begin(&w, c);
	pfs_wbuf_u64(&w, ino);
	pfs_wbuf_u64(&w, newparent);
	pfs_wbuf_str(&w, newname);
	return call_attr(m, c, PFS_OP_MDS_LINK, 0, &w, attr, NULL);
}

int cli_mdc_statfs(cli_mdc *m, const cli_ctx *c, pfs_statfs *st)
{
	pfs_rpc_reply rep = { 0 };
	pfs_wbuf w;
	pfs_rbuf r;
	int rc;

	begin(&w, c);
	rc = call(m, c->job, PFS_OP_MDS_STATFS, PFS_RPC_IDEMPOTENT, &w, &rep);
	if (rc == 0) {
		pfs_rbuf_init(&r, rep.data, rep.len);
		rc = pfs_statfs_decode(&r, st);
		if (rc == 0)
			rc = pfs_rbuf_done(&r);
	}
	pfs_rpc_reply_free(&rep);
	return rc;
}

int cli_mdc_setxattr(cli_mdc *m, const cli_ctx *c, uint64_t ino, const char *name,
		     const void *value, size_t size, uint32_t flags)
{
	pfs_wbuf w;

	if (strlen(name) > PFS_XATTR_NAME_MAX || !*name)
		return -ERANGE;
	if (size > PFS_XATTR_SIZE_MAX)
		return -E2BIG;
	begin(&w, c);
	pfs_wbuf_u64(&w, ino);
	pfs_wbuf_str(&w, name);
	pfs_wbuf_strn(&w, value, size);
	pfs_wbuf_u32(&w, flags);
	/* A plain set is idempotent; a resent XATTR_CREATE/REPLACE could
	 * report a false -EEXIST/-ENODATA, so those are not resent. */
	return call_empty(m, c, PFS_OP_MDS_SETXATTR, flags ? 0 : PFS_RPC_IDEMPOTENT, &w);
}

/* getxattr/listxattr: reply is one str, copied out to a malloc'd buffer. */
static int call_blob(cli_mdc *m, const cli_ctx *c, uint16_t op, pfs_wbuf *w, size_t max,
		     void **val, size_t *len)
{
	pfs_rpc_reply rep = { 0 };
	pfs_rbuf r;
	const char *s;
	size_t n;
	int rc = call(m, c->job, op, PFS_RPC_IDEMPOTENT, w, &rep);

	*val = NULL;
	*len = 0;
	if (rc)
		goto out;
	pfs_rbuf_init(&r, rep.data, rep.len);
	s = pfs_rbuf_str(&r, max, &n);
	rc = pfs_rbuf_done(&r);
	if (rc || n == 0)
		goto out;
	*val = malloc(n);
	if (!*val) {
		rc = -ENOMEM;
		goto out;
	}
	memcpy(*val, s, n);
	*len = n;
out:
	pfs_rpc_reply_free(&rep);
	return rc;
}

int cli_mdc_getxattr(cli_mdc *m, const cli_ctx *c, uint64_t ino, const char *name,
		     void **val, size_t *len)
{
	pfs_wbuf w;

	if (strlen(name) > PFS_XATTR_NAME_MAX || !*name)
		return -ERANGE;
	begin(&w, c);
	pfs_wbuf_u64(&w, ino);
	pfs_wbuf_str(&w, name);
	return call_blob(m, c, PFS_OP_MDS_GETXATTR, &w, PFS_XATTR_SIZE_MAX, val, len);
}

int cli_mdc_listxattr(cli_mdc *m, const cli_ctx *c, uint64_t ino, void **list, size_t *len)
{
	pfs_wbuf w;

	begin(&w, c);
	pfs_wbuf_u64(&w, ino);
	return call_blob(m, c, PFS_OP_MDS_LISTXATTR, &w, PFS_MAX_PAYLOAD, list, len);
}

int cli_mdc_removexattr(cli_mdc *m, const cli_ctx *c, uint64_t ino, const char *name)
{
	pfs_wbuf w;

	if (strlen(name) > PFS_XATTR_NAME_MAX || !*name)
		return -ERANGE;
	begin(&w, c);
	pfs_wbuf_u64(&w, ino);
	pfs_wbuf_str(&w, name);
	return call_empty(m, c, PFS_OP_MDS_REMOVEXATTR, 0, &w);
}

int cli_mdc_open(cli_mdc *m, const cli_ctx *c, uint64_t ino, uint32_t flags, pfs_attr *attr,
		 pfs_layout *layout)
{
	return cli_mdc_open_caps(m, c, ino, flags, attr, layout, NULL);
}

int cli_mdc_open_caps(cli_mdc *m, const cli_ctx *c, uint64_t ino, uint32_t flags,
		      pfs_attr *attr, pfs_layout *layout, cli_caps **caps)
{
	pfs_wbuf w;

	begin(&w, c);
	pfs_wbuf_u64(&w, ino);
	pfs_wbuf_u32(&w, flags);
	return call_attr_caps(m, c, PFS_OP_MDS_OPEN, PFS_RPC_IDEMPOTENT, &w, attr, layout, caps);
}

int cli_mdc_close(cli_mdc *m, const cli_ctx *c, uint64_t ino, uint32_t left)
{
	pfs_wbuf w;

	begin(&w, c);
	pfs_wbuf_u64(&w, ino);
	pfs_wbuf_u32(&w, left);
	return call_empty(m, c, PFS_OP_MDS_CLOSE, PFS_RPC_IDEMPOTENT, &w);
}

int cli_mdc_access(cli_mdc *m, const cli_ctx *c, uint64_t ino, uint32_t mask)
{
	pfs_wbuf w;

	begin(&w, c);
	pfs_wbuf_u64(&w, ino);
	pfs_wbuf_u32(&w, mask);
	return call_empty(m, c, PFS_OP_MDS_ACCESS, PFS_RPC_IDEMPOTENT, &w);
}

int cli_mdc_setsize(cli_mdc *m, const cli_ctx *c, uint64_t ino, uint64_t size,
		    int64_t mtime_ns, pfs_attr *attr)
{
	return cli_mdc_setsize_epoch(m, c, ino, size, mtime_ns, CLI_MDC_EPOCH_ANY,
				     CLI_MDC_BLOCKS_UNKNOWN, attr);
}

int cli_mdc_setsize_epoch(cli_mdc *m, const cli_ctx *c, uint64_t ino, uint64_t size,
			  int64_t mtime_ns, uint64_t epoch, uint64_t blocks, pfs_attr *attr)
{
	pfs_wbuf w;

	/* The tail (u32 epoch, u64 blocks) goes only with an epoch: the MDS
	 * reads a missing tail as "no epoch, blocks unknown". */
	if (epoch == CLI_MDC_EPOCH_ANY && blocks != CLI_MDC_BLOCKS_UNKNOWN)
		return -EINVAL;
	begin(&w, c);
	pfs_wbuf_u64(&w, ino);
	pfs_wbuf_u64(&w, size);
	pfs_wbuf_i64(&w, mtime_ns);
	if (epoch != CLI_MDC_EPOCH_ANY) {
		pfs_wbuf_u32(&w, (uint32_t)epoch);
		pfs_wbuf_u64(&w, blocks);
	}
	return call_attr(m, c, PFS_OP_MDS_SETSIZE, PFS_RPC_IDEMPOTENT, &w, attr, NULL);
}

int cli_mdc_getlayout(cli_mdc *m, const cli_ctx *c, uint64_t ino, pfs_layout *layout)
{
	return cli_mdc_getlayout_caps(m, c, ino, layout, NULL);
}

int cli_mdc_getlayout_caps(cli_mdc *m, const cli_ctx *c, uint64_t ino, pfs_layout *layout,
			   cli_caps **caps)
{
	pfs_rpc_reply rep = { 0 };
	cli_caps *got = NULL;
	pfs_wbuf w;
	pfs_rbuf r;
	int rc;

	if (caps)
		*caps = NULL;
	begin(&w, c);
	pfs_wbuf_u64(&w, ino);
	rc = call(m, c->job, PFS_OP_MDS_GETLAYOUT, PFS_RPC_IDEMPOTENT, &w, &rep);
	if (rc == 0) {
		pfs_rbuf_init(&r, rep.data, rep.len);
		rc = pfs_layout_decode(&r, layout);
		if (rc == 0)
			rc = decode_caps(&r, caps ? &got : NULL);
		if (rc == 0)
			rc = pfs_rbuf_done(&r);
		if (rc == 0 && caps)
			*caps = got;
		else
			cli_caps_put(got);
		if (rc == -EINVAL)
			rc = -EBADMSG;
	}
	pfs_rpc_reply_free(&rep);
	return rc;
}

int cli_mdc_layout_decode(const void *p, size_t len, pfs_layout *layout, uint32_t *nobj)
{
	pfs_rbuf r;
	uint32_t size, count;

	memset(layout, 0, sizeof(*layout));
	pfs_rbuf_init(&r, p, len);
	size = pfs_rbuf_u32(&r);
	count = pfs_rbuf_u32(&r);
	if (pfs_rbuf_error(&r))
		return -EBADMSG;
	/* A file's layout is size, count and count stripes (8 or 20 and
	 * more bytes), so 12 bytes are a directory's default with its first
	 * OST.  8 bytes with a count above 0 are the default as MDSes before
	 * the first OST sent it; with count 0 both forms read the same: size
	 * and count, no objects. */
	if (pfs_rbuf_left(&r) == 4 || (pfs_rbuf_left(&r) == 0 && count != 0)) {
		uint32_t first = pfs_rbuf_left(&r) ? pfs_rbuf_u32(&r) : PFS_STRIPE_OFFSET_ANY;

		if ((size && pfs_layout_check(size, 1)) ||
		    (count != CLI_MDC_STRIPE_ALL && count > PFS_MAX_STRIPES))
			return -EBADMSG;
		layout->stripe_size = size;
		layout->stripe_count = count;
		layout->stripe[0].ost = first;
		*nobj = 0;
		return 0;
	}
	pfs_rbuf_init(&r, p, len);
	if (pfs_layout_decode(&r, layout) || pfs_rbuf_done(&r))
		return -EBADMSG;
	*nobj = layout->stripe_count;
	if (*nobj == 0)
		layout->stripe[0].ost = PFS_STRIPE_OFFSET_ANY;
	return 0;
}

int cli_mdc_getlayout_any(cli_mdc *m, const cli_ctx *c, uint64_t ino, pfs_layout *layout,
			  uint32_t *nobj)
{
	pfs_rpc_reply rep = { 0 };
	pfs_wbuf w;
	int rc;

	begin(&w, c);
	pfs_wbuf_u64(&w, ino);
	rc = call(m, c->job, PFS_OP_MDS_GETLAYOUT, PFS_RPC_IDEMPOTENT, &w, &rep);
	if (rc == 0)
		rc = cli_mdc_layout_decode(rep.data, rep.len, layout, nobj);
	pfs_rpc_reply_free(&rep);
	return rc;
}

int cli_mdc_setstripe(cli_mdc *m, const cli_ctx *c, uint64_t ino, uint32_t stripe_size,
		      uint32_t stripe_count, uint32_t stripe_offset)
{
	pfs_wbuf w;

	begin(&w, c);
	pfs_wbuf_u64(&w, ino);
	pfs_wbuf_u32(&w, stripe_size);
	pfs_wbuf_u32(&w, stripe_count);
	pfs_wbuf_u32(&w, stripe_offset);
	return call_empty(m, c, PFS_OP_MDS_SETSTRIPE, PFS_RPC_IDEMPOTENT, &w);
}

int cli_mdc_ost_list(cli_mdc *m, const char *job, pfs_ost_info **osts, uint32_t *n)
{
	pfs_rpc_reply rep = { 0 };
	pfs_wbuf w;
	pfs_rbuf r;
	pfs_ost_info *arr = NULL;
	uint32_t count;
	int rc;

	pfs_wbuf_init(&w);
	rc = call(m, job, PFS_OP_MDS_OST_LIST, PFS_RPC_IDEMPOTENT, &w, &rep);
	if (rc)
		goto out;
	pfs_rbuf_init(&r, rep.data, rep.len);
	count = pfs_rbuf_u32(&r);
	/* Each entry takes at least 4+3*4+2+2+1+3*8 bytes: bound the count by
	 * what the payload can hold before allocating for it. */
	if (pfs_rbuf_error(&r) || count > pfs_rbuf_left(&r) / 45) {
		rc = -EBADMSG;
		goto out;
	}
	arr = calloc(count ? count : 1, sizeof(*arr));
	if (!arr) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < count && rc == 0; i++)
		rc = pfs_ost_info_decode(&r, &arr[i]);
	if (rc == 0)
		rc = pfs_rbuf_done(&r);
	if (rc)
		goto out;
	*osts = arr;
	*n = count;
	arr = NULL;
out:
	free(arr);
	pfs_rpc_reply_free(&rep);
	return rc;
}

int cli_mdc_ping(cli_mdc *m, const char *job, const void *msg, size_t len)
{
	pfs_rpc_reply rep = { 0 };
	pfs_wbuf w;
	int rc;

	if (len > 4096)
		return -EMSGSIZE;
	pfs_wbuf_init(&w);
	pfs_wbuf_bytes(&w, msg, len);
	rc = call(m, job, PFS_OP_PING, PFS_RPC_IDEMPOTENT, &w, &rep);
	if (rc == 0 && (rep.len != len || (len && memcmp(rep.data, msg, len))))
		rc = -EBADMSG;
	pfs_rpc_reply_free(&rep);
	return rc;
}

/* ---- the lock service ---- */

static void put_lock(pfs_wbuf *w, uint64_t ino, const cli_lock *l)
{
	pfs_wbuf_u64(w, ino);
	pfs_wbuf_u8(w, l->kind);
	pfs_wbuf_u8(w, l->type);
	pfs_wbuf_u64(w, l->start);
	pfs_wbuf_u64(w, l->end);
	pfs_wbuf_u64(w, l->owner);
	pfs_wbuf_u32(w, l->pid);
}

/* LOCK_SET and LOCK_WAIT: reply u32 lease_ms[, u64 instance]. */
static int lock_call(cli_mdc *m, const char *job, uint16_t op, pfs_wbuf *w, uint32_t *lease_ms,
		     uint64_t *instance)
{
	pfs_rpc_reply rep = { 0 };
	pfs_rbuf r;
	uint32_t lease;
	uint64_t inst = 0;
	int rc = call(m, job, op, PFS_RPC_IDEMPOTENT, w, &rep);

	if (rc == 0) {
		pfs_rbuf_init(&r, rep.data, rep.len);
		lease = pfs_rbuf_u32(&r);
		if (pfs_rbuf_left(&r))
			inst = pfs_rbuf_u64(&r);
		rc = pfs_rbuf_done(&r);
		if (rc == 0 && lease_ms)
			*lease_ms = lease;
		if (rc == 0 && instance)
			*instance = inst;
	}
	pfs_rpc_reply_free(&rep);
	return rc;
}

int cli_mdc_lock_get(cli_mdc *m, const char *job, uint64_t ino, const cli_lock *req,
		     int *conflict, cli_lock *out)
{
	pfs_rpc_reply rep = { 0 };
	pfs_wbuf w;
	pfs_rbuf r;
	int rc;

	pfs_wbuf_init(&w);
	put_lock(&w, ino, req);
	rc = call(m, job, PFS_OP_MDS_LOCK_GET, PFS_RPC_IDEMPOTENT, &w, &rep);
	if (rc == 0) {
		pfs_rbuf_init(&r, rep.data, rep.len);
		*conflict = pfs_rbuf_u8(&r) != 0;
		out->kind = pfs_rbuf_u8(&r);
		out->type = pfs_rbuf_u8(&r);
		out->start = pfs_rbuf_u64(&r);
		out->end = pfs_rbuf_u64(&r);
		out->owner = pfs_rbuf_u64(&r);
		out->pid = pfs_rbuf_u32(&r);
		rc = pfs_rbuf_done(&r);
	}
	pfs_rpc_reply_free(&rep);
	return rc;
}

int cli_mdc_lock_set(cli_mdc *m, const char *job, uint64_t ino, const cli_lock *req,
		     uint32_t *lease_ms)
{
	return cli_mdc_lock_set_inst(m, job, ino, req, lease_ms, NULL);
}

int cli_mdc_lock_set_inst(cli_mdc *m, const char *job, uint64_t ino, const cli_lock *req,
			  uint32_t *lease_ms, uint64_t *instance)
{
	pfs_wbuf w;

	pfs_wbuf_init(&w);
	put_lock(&w, ino, req);
	return lock_call(m, job, PFS_OP_MDS_LOCK_SET, &w, lease_ms, instance);
}

int cli_mdc_lock_wait(cli_mdc *m, const char *job, uint64_t ino, const cli_lock *req,
		      uint32_t wait_ms, uint32_t *lease_ms)
{
	return cli_mdc_lock_wait_inst(m, job, ino, req, wait_ms, lease_ms, NULL);
}

int cli_mdc_lock_wait_inst(cli_mdc *m, const char *job, uint64_t ino, const cli_lock *req,
			   uint32_t wait_ms, uint32_t *lease_ms, uint64_t *instance)
{
	pfs_wbuf w;

	pfs_wbuf_init(&w);
	put_lock(&w, ino, req);
	pfs_wbuf_u32(&w, wait_ms);
	return lock_call(m, job, PFS_OP_MDS_LOCK_WAIT, &w, lease_ms, instance);
}

int cli_mdc_lock_reclaim(cli_mdc *m, const char *job, uint32_t flags, uint32_t n,
			 const uint64_t *inos, const cli_lock *locks, int32_t *status,
			 cli_lock_rinfo *info)
{
	pfs_rpc_reply rep = { 0 };
	cli_lock_rinfo ri;
	pfs_wbuf w;
	pfs_rbuf r;
	int rc;

	pfs_wbuf_init(&w);
	pfs_wbuf_u8(&w, (uint8_t)flags);
	pfs_wbuf_u32(&w, n);
	for (uint32_t i = 0; i < n; i++)
		put_lock(&w, inos[i], &locks[i]);
	rc = call(m, job, PFS_OP_MDS_LOCK_RECLAIM, PFS_RPC_IDEMPOTENT, &w, &rep);
	if (rc == 0) {
		pfs_rbuf_init(&r, rep.data, rep.len);
		ri.instance = pfs_rbuf_u64(&r);
		ri.lease_ms = pfs_rbuf_u32(&r);
		ri.recovery_left_ms = pfs_rbuf_u32(&r);
		if (pfs_rbuf_u32(&r) != n)
			rc = -EBADMSG;
		for (uint32_t i = 0; i < n && !rc; i++)
			status[i] = (int32_t)pfs_rbuf_u32(&r);
		if (!rc)
			rc = pfs_rbuf_done(&r);
		if (!rc && info)
			*info = ri;
	}
	pfs_rpc_reply_free(&rep);
	return rc;
}

int cli_mdc_lock_cancel(cli_mdc *m, const char *job, uint64_t ino, uint64_t owner)
{
	pfs_rpc_reply rep = { 0 };
	pfs_wbuf w;
	pfs_rbuf r;
	int rc;

	pfs_wbuf_init(&w);
	pfs_wbuf_u64(&w, ino);
	pfs_wbuf_u64(&w, owner);
	rc = call(m, job, PFS_OP_MDS_LOCK_CANCEL, PFS_RPC_IDEMPOTENT, &w, &rep);
	if (rc == 0) {
		pfs_rbuf_init(&r, rep.data, rep.len);
		(void)pfs_rbuf_u32(&r);
		rc = pfs_rbuf_done(&r);
	}
	pfs_rpc_reply_free(&rep);
	return rc;
}

int cli_mdc_lock_release(cli_mdc *m, const char *job, uint64_t ino, uint64_t owner,
			 uint32_t kinds)
{
	pfs_rpc_reply rep = { 0 };
	pfs_wbuf w;
	pfs_rbuf r;
	int rc;

	pfs_wbuf_init(&w);
	pfs_wbuf_u64(&w, ino);
	pfs_wbuf_u64(&w, owner);
	pfs_wbuf_u32(&w, kinds);
	rc = call(m, job, PFS_OP_MDS_LOCK_RELEASE, PFS_RPC_IDEMPOTENT, &w, &rep);
	if (rc == 0) {
		pfs_rbuf_init(&r, rep.data, rep.len);
		rc = pfs_rbuf_done(&r);
	}
	pfs_rpc_reply_free(&rep);
	return rc;
}

int cli_mdc_sync(cli_mdc *m, const cli_ctx *c, uint64_t ino)
{
	pfs_wbuf w;

	begin(&w, c);
	pfs_wbuf_u64(&w, ino);
	return call_empty(m, c, PFS_OP_MDS_SYNC, PFS_RPC_IDEMPOTENT, &w);
}

/* ---- directory delegations ---- */

int cli_mdc_deleg_get(cli_mdc *m, const cli_ctx *c, uint64_t dir, uint32_t *lease_ms,
		      pfs_attr *attr)
{
	pfs_rpc_reply rep = { 0 };
	pfs_wbuf w;
	pfs_rbuf r;
	pfs_attr tmp;
	uint32_t ms;
	int rc;

	begin(&w, c);
	pfs_wbuf_u64(&w, dir);
	rc = call(m, c->job, PFS_OP_MDS_DELEG_GET, PFS_RPC_IDEMPOTENT, &w, &rep);
	if (rc == 0) {
		pfs_rbuf_init(&r, rep.data, rep.len);
		ms = pfs_rbuf_u32(&r);
		rc = pfs_attr_decode(&r, attr ? attr : &tmp);
		if (rc == 0)
			rc = pfs_rbuf_done(&r);
		if (rc == 0 && ms == 0)
			rc = -EBADMSG; /* a delegation valid for no time */
		if (rc == 0)
			*lease_ms = ms;
	}
	pfs_rpc_reply_free(&rep);
	return rc;
}

int cli_mdc_create_slots(cli_mdc *m, const cli_ctx *c, uint64_t dir, uint32_t n,
			 uint64_t *inos, pfs_layout *lays, pfs_attr *dir_attr)
{
	pfs_rpc_reply rep = { 0 };
	pfs_wbuf w;
	pfs_rbuf r;
	int rc;

	if (n == 0 || n > PFS_CREATE_SLOTS_MAX)
		return -EINVAL;
	begin(&w, c);
	pfs_wbuf_u64(&w, dir);
	pfs_wbuf_u32(&w, n);
	/* resent freely: a resend reserves other numbers, and the ones of
	 * a lost reply only expire on the MDS */
	rc = call(m, c->job, PFS_OP_MDS_CREATE_SLOTS, PFS_RPC_IDEMPOTENT, &w, &rep);
	if (rc == 0) {
		pfs_rbuf_init(&r, rep.data, rep.len);
		rc = pfs_attr_decode(&r, dir_attr);
		if (rc == 0 && pfs_rbuf_u32(&r) != n)
			rc = -EPROTO;
		for (uint32_t i = 0; i < n && rc == 0; i++) {
			inos[i] = pfs_rbuf_u64(&r);
			rc = pfs_layout_decode(&r, &lays[i]);
			if (rc == 0 && (inos[i] == 0 || lays[i].stripe_count == 0))
				rc = -EPROTO;
		}
		if (rc == 0)
			rc = pfs_rbuf_done(&r);
		if (rc == -EINVAL || rc == -EBADMSG)
			rc = -EPROTO;
	}
	pfs_rpc_reply_free(&rep);
	return rc;
}

int cli_mdc_create_batch(cli_mdc *m, const cli_ctx *c, uint64_t parent, uint32_t n,
			 const char *const *names, const uint32_t *modes, const int *closed,
			 const uint64_t *inos, int *status)
{
	pfs_rpc_reply rep = { 0 };
	pfs_wbuf w;
	int rc = 0;

	if (n == 0 || n > PFS_CREATE_SLOTS_MAX)
		return -EINVAL;
	for (uint32_t i = 0; i < n && !rc; i++)
		rc = name_ok(names[i]);
	if (rc)
		return rc;
	begin(&w, c);
	pfs_wbuf_u64(&w, parent);
	pfs_wbuf_u32(&w, n);
	for (uint32_t i = 0; i < n; i++) {
		pfs_wbuf_str(&w, names[i]);
		pfs_wbuf_u32(&w, modes[i]);
		pfs_wbuf_u32(&w, closed[i] ? PFS_CREATE_CLOSED : 0);
		pfs_wbuf_u64(&w, inos[i]);
	}
	/* a resend is answered as the first run: by the MDS's reply cache,
	 * or after its restart by each entry's name naming its inode */
	rc = call(m, c->job, PFS_OP_MDS_CREATE_BATCH, CALL_CHARGED, &w, &rep);
	if (rc == 0)
		rc = batch_statuses(&rep, n, status);
	pfs_rpc_reply_free(&rep);
	return rc;
}

int cli_mdc_deleg_return(cli_mdc *m, const cli_ctx *c, uint64_t dir)
{
	pfs_wbuf w;

	begin(&w, c);
	pfs_wbuf_u64(&w, dir);
	return call_empty(m, c, PFS_OP_MDS_DELEG_RETURN, PFS_RPC_IDEMPOTENT, &w);
}

/* ---- metadata lease invalidations ---- */

int cli_mdc_notify_wait(cli_mdc *m, uint64_t ack, uint32_t wait_ms, uint8_t flags,
			cli_notify_batch *out)
{
	pfs_rpc_reply rep = { 0 };
	pfs_wbuf w;
	pfs_rbuf r;
	int rc;

	memset(out, 0, sizeof(*out));
	pfs_wbuf_init(&w);
	pfs_wbuf_u64(&w, ack);
	pfs_wbuf_u32(&w, wait_ms);
	pfs_wbuf_u8(&w, flags);
	rc = call(m, "", PFS_OP_MDS_NOTIFY_WAIT, 0, &w, &rep);
	if (rc == 0) {
		pfs_rbuf_init(&r, rep.data, rep.len);
		out->boot_id = pfs_rbuf_u64(&r);
		out->lease_ms = pfs_rbuf_u32(&r);
		out->flags = pfs_rbuf_u8(&r);
		out->seq = pfs_rbuf_u64(&r);
		out->n = pfs_rbuf_u32(&r);
		/* each record is at least 13 bytes: bound n before allocating */
		if (!pfs_rbuf_error(&r) && out->n > pfs_rbuf_left(&r) / 13)
			rc = -EBADMSG;
		else if (!pfs_rbuf_error(&r) && out->n &&
			 !(out->v = calloc(out->n, sizeof(*out->v))))
			rc = -ENOMEM;
		for (uint32_t i = 0; rc == 0 && out->v && i < out->n; i++) {
			out->v[i].kind = pfs_rbuf_u8(&r);
			out->v[i].ino = pfs_rbuf_u64(&r);
			pfs_rbuf_cstr(&r, out->v[i].name, sizeof(out->v[i].name));
		}
		if (rc == 0)
			rc = pfs_rbuf_done(&r);
		if (rc) {
			free(out->v);
			out->v = NULL;
			out->n = 0;
		}
	}
	pfs_rpc_reply_free(&rep);
	return rc;
}
