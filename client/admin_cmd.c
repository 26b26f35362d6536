/* admin_cmd.c — pfsadmin commands against the MDS (see admin_cmd.h).
 *
 * Every command first gathers all its data, then prints: a failed request
 * never leaves half a table or a truncated JSON document on stdout.  JSON
 * numbers are emitted as JSON integers (jansson's json_int_t, 64-bit
 * signed); object ids are also given as a hex string, since ids above
 * 2^63 would not survive as JSON integers. */
#include "client/admin_cmd.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "client/admin_fmt.h"
#include "client/admin_i.h"
#include "client/admin_job.h"
#include "client/admin_nrs.h"
#include "client/admin_qos.h"
#include "client/admin_stats.h"
#include "common/buf.h"

/* Smallest wire size of one pfs_ost_info: index, three empty strings,
 * two ports, up, three u64 — used to bound the count before allocating. */
#define OST_INFO_MIN_WIRE (4 + 3 * 4 + 2 + 2 + 1 + 3 * 8)

void cli__what(cli_admin *a, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(a->what, sizeof(a->what), fmt, ap);
	va_end(ap);
}

void cli__fail_rpc(cli_admin *a, int rc, const char *server, const char *doing)
{
	const char *hint = "";

	switch (rc) {
	case -EACCES:
	case -EPERM:
		hint = " (only root, or the job's owner for its own job, may do this)";
		break;
	case -ENOENT:
		hint = " (no such job, or it is not yours)";
		break;
	case -EOPNOTSUPP:
		hint = " (the server does not know this request: an older pfs?)";
		break;
	case -EBADMSG:
		hint = " (malformed reply)";
		break;
	default:
		break;
	}
	cli__what(a, "%s on %s%s", doing, server, hint);
}

void cli_admin_init(cli_admin *a, pfs_rpc_pool *pool, FILE *out, int json)
{
	gid_t groups[PFS_MAX_GROUPS];
	int n;

	memset(a, 0, sizeof(*a));
	a->pool = pool;
	a->out = out;
	a->json = json;
	a->cred.uid = (uint32_t)getuid();
	a->cred.gid = (uint32_t)getgid();
	/* More than PFS_MAX_GROUPS supplementary groups makes getgroups fail
	 * with EINVAL; then only the primary group is sent, which can deny
	 * access but never grants too much. */
	n = getgroups(PFS_MAX_GROUPS, groups);
	for (int i = 0; i < n; i++)
		a->cred.groups[a->cred.ngroups++] = (uint32_t)groups[i];
	snprintf(a->job_id, sizeof(a->job_id), "pfsadmin.%u", (unsigned)a->cred.uid);
	a->oss_timeout_ms = CLI_ADMIN_OSS_TIMEOUT_MS;
}

pfs_rpc_tag cli__tag(const cli_admin *a)
{
	pfs_rpc_tag t = { .job = a->job_id, .uid = a->cred.uid, .gid = a->cred.gid };

	return t;
}

int cli__call(cli_admin *a, uint16_t op, const pfs_wbuf *w, unsigned flags, pfs_rpc_reply *rep)
{
	pfs_rpc_tag tag = cli__tag(a);
	int rc = pfs_wbuf_error(w);

	pfs_rpc_reply_init(rep);
	if (rc)
		return rc;
	return pfs_rpc_call_tag(a->pool, op, &tag, flags, w->data, w->len, NULL, 0, rep);
}

/* The namespace and OST requests here are all safe to resend. */
static int call(cli_admin *a, uint16_t op, pfs_wbuf *w, pfs_rpc_reply *rep)
{
	return cli__call(a, op, w, PFS_RPC_IDEMPOTENT, rep);
}

const char *cli__mds_name(cli_admin *a, char *buf, size_t sz)
{
	snprintf(buf, sz, "MDS %s:%u", pfs_rpc_pool_host(a->pool), pfs_rpc_pool_port(a->pool));
	return buf;
}

/* The older messages say "MDS " themselves. */
static const char *mds_name(cli_admin *a, char *buf, size_t sz)
{
	snprintf(buf, sz, "%s:%u", pfs_rpc_pool_host(a->pool), pfs_rpc_pool_port(a->pool));
	return buf;
}

uint32_t cli__rcount(pfs_rbuf *r, size_t min_wire)
{
	uint32_t n = pfs_rbuf_u32(r);

	if (!pfs_rbuf_error(r) && min_wire && n > pfs_rbuf_left(r) / min_wire) {
		pfs_rbuf_fail(r);
		return 0;
	}
	return pfs_rbuf_error(r) ? 0 : n;
}

int cli_admin_get_osts(cli_admin *a, pfs_ost_info **osts, uint32_t *n)
{
	pfs_rpc_reply rep = { 0 };
	pfs_wbuf w;
	pfs_rbuf r;
	pfs_ost_info *v = NULL;
	uint32_t cnt = 0;
	char mds[300];
	int rc;

	pfs_wbuf_init(&w);
	rc = call(a, PFS_OP_MDS_OST_LIST, &w, &rep);
	if (rc) {
		cli__what(a, "OST list from MDS %s", mds_name(a, mds, sizeof(mds)));
		goto out;
	}
	pfs_rbuf_init(&r, rep.data, rep.len);
	cnt = pfs_rbuf_u32(&r);
	rc = pfs_rbuf_error(&r);
	if (rc == 0 && cnt > pfs_rbuf_left(&r) / OST_INFO_MIN_WIRE)
		rc = -EBADMSG;
	if (rc == 0) {
		v = calloc(cnt ? cnt : 1, sizeof(*v));
		if (!v)
			rc = -ENOMEM;
	}
	for (uint32_t i = 0; rc == 0 && i < cnt; i++)
		rc = pfs_ost_info_decode(&r, &v[i]);
	if (rc == 0)
		rc = pfs_rbuf_done(&r);
	if (rc) {
		cli__what(a, "bad OST list reply from MDS %s", mds_name(a, mds, sizeof(mds)));
		if (rc != -ENOMEM)
			rc = -EBADMSG;
		free(v);
		v = NULL;
		cnt = 0;
	}
out:
	pfs_wbuf_free(&w);
	pfs_rpc_reply_free(&rep);
	*osts = v;
	*n = cnt;
	return rc;
}

int cli_admin_get_statfs(cli_admin *a, pfs_statfs *s)
{
	pfs_rpc_reply rep = { 0 };
	pfs_wbuf w;
	pfs_rbuf r;
	char mds[300];
	int rc;

	pfs_wbuf_init(&w);
	pfs_cred_encode(&w, &a->cred);
	rc = call(a, PFS_OP_MDS_STATFS, &w, &rep);
	if (rc) {
		cli__what(a, "statfs from MDS %s", mds_name(a, mds, sizeof(mds)));
		goto out;
	}
	pfs_rbuf_init(&r, rep.data, rep.len);
	rc = pfs_statfs_decode(&r, s);
	if (rc == 0)
		rc = pfs_rbuf_done(&r);
	if (rc) {
		rc = -EBADMSG;
		cli__what(a, "bad statfs reply from MDS %s", mds_name(a, mds, sizeof(mds)));
	}
out:
	pfs_wbuf_free(&w);
	pfs_rpc_reply_free(&rep);
	return rc;
}

/* Decode a layout reply.  A directory's default comes as size and count
 * with no stripe list (pfs_layout_decode would want count stripes), so
 * that form is recognised first. */
static int decode_layout(const uint8_t *p, size_t len, pfs_layout *l, uint32_t *nobj)
{
	pfs_rbuf r;
	uint32_t size, count;

	memset(l, 0, sizeof(*l));
	pfs_rbuf_init(&r, p, len);
	size = pfs_rbuf_u32(&r);
	count = pfs_rbuf_u32(&r);
	if (pfs_rbuf_error(&r))
		return -EBADMSG;
	if (pfs_rbuf_left(&r) == 0) {
		/* A directory's default: size 0 = the file system's stripe
		 * size (setstripe -c N without -S), count 0 = its count. */
		if (count && count != CLI_STRIPE_ALL_WIRE &&
		    pfs_layout_check(size ? size : PFS_DEFAULT_STRIPE_SIZE, count))
			return -EBADMSG;
		l->stripe_size = size;
		l->stripe_count = count;
		*nobj = 0;
		return 0;
	}
	pfs_rbuf_init(&r, p, len);
	if (pfs_layout_decode(&r, l) || pfs_rbuf_done(&r))
		return -EBADMSG;
	*nobj = l->stripe_count;
	return 0;
}

int cli_admin_get_layout(cli_admin *a, uint64_t ino, pfs_layout *l, uint32_t *nobj)
{
	pfs_rpc_reply rep = { 0 };
	pfs_wbuf w;
	char mds[300];
	int rc;

	pfs_wbuf_init(&w);
	pfs_cred_encode(&w, &a->cred);
	pfs_wbuf_u64(&w, ino);
	rc = call(a, PFS_OP_MDS_GETLAYOUT, &w, &rep);
	if (rc) {
		cli__what(a, "layout of inode %" PRIu64 " from MDS %s", ino,
		     mds_name(a, mds, sizeof(mds)));
		goto out;
	}
	rc = decode_layout(rep.data, rep.len, l, nobj);
	if (rc)
		cli__what(a, "bad layout reply from MDS %s", mds_name(a, mds, sizeof(mds)));
out:
	pfs_wbuf_free(&w);
	pfs_rpc_reply_free(&rep);
	return rc;
}

int cli__emit(cli_admin *a, json_t *root)
{
	if (!root) {
		cli__what(a, "building JSON output");
		return -ENOMEM;
	}
	/* Ten significant digits: 0.5003906, not 0.50039062599999995. */
	json_dumpf(root, a->out, JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10) |
		   (a->json_lines ? JSON_COMPACT : JSON_INDENT(2)));
	fputc('\n', a->out);
	json_decref(root);
	return 0;
}

json_int_t cli__ji(uint64_t v)
{
	return v > (uint64_t)INT64_MAX ? (json_int_t)INT64_MAX : (json_int_t)v;
}

json_t *cli__jrate(double v)
{
	if (v < 0)
		return json_null();
	return json_integer(v >= 9.2e18 ? (json_int_t)INT64_MAX : (json_int_t)(v + 0.5));
}

void cli__jpush(json_t **arr, json_t *v)
{
	if (!*arr) {
		json_decref(v);
		return;
	}
	/* json_array_append_new takes v even when it fails (and NULL fails). */
	if (json_array_append_new(*arr, v)) {
		json_decref(*arr);
		*arr = NULL;
	}
}

static uint64_t ost_used(const pfs_ost_info *o)
{
	return o->total_bytes > o->free_bytes ? o->total_bytes - o->free_bytes : 0;
}

int cli_admin_ost_list(cli_admin *a)
{
	static const cli_col cols[] = {
		{ "IDX", 1 }, { "UUID", 0 }, { "OSS", 0 }, { "ADDRESS", 0 }, { "STATE", 0 },
		{ "SIZE", 1 }, { "USED", 1 }, { "FREE", 1 }, { "OBJECTS", 1 },
	};
	pfs_ost_info *o = NULL;
	cli_table *t = NULL;
	json_t *arr = NULL;
	uint32_t n;
	int rc;

	rc = cli_admin_get_osts(a, &o, &n);
	if (rc)
		goto out;
	if (a->json) {
		arr = json_array();
		for (uint32_t i = 0; arr && i < n; i++) {
			json_t *e = json_pack("{s:I,s:s,s:s,s:s,s:i,s:i,s:s,s:I,s:I,s:I,s:I}",
					      "index", (json_int_t)o[i].index, "uuid", o[i].uuid,
					      "oss", o[i].oss, "host", o[i].host,
					      "data_port", (int)o[i].data_port,
					      "ctl_port", (int)o[i].ctl_port,
					      "state", o[i].up ? "up" : "down",
					      "total_bytes", cli__ji(o[i].total_bytes),
					      "used_bytes", cli__ji(ost_used(&o[i])),
					      "free_bytes", cli__ji(o[i].free_bytes),
					      "objects", cli__ji(o[i].objects));
			if (!e || json_array_append_new(arr, e)) {
				json_decref(arr);
				arr = NULL;
			}
		}
		rc = cli__emit(a, arr ? json_pack("{s:o}", "osts", arr) : NULL);
		goto out;
	}
	rc = cli_table_create(cols, sizeof(cols) / sizeof(cols[0]), &t);
	for (uint32_t i = 0; rc == 0 && i < n; i++) {
		char idx[16], addr[96], sz[16], used[16], fr[16], obj[24];
		const char *cells[9] = { idx, o[i].uuid, o[i].oss, addr,
					 o[i].up ? "up" : "down", sz, used, fr, obj };

		snprintf(idx, sizeof(idx), "%u", o[i].index);
		snprintf(addr, sizeof(addr), "%s:%u", o[i].host, o[i].data_port);
		cli_fmt_size(o[i].total_bytes, 1, sz, sizeof(sz));
		cli_fmt_size(ost_used(&o[i]), 1, used, sizeof(used));
		cli_fmt_size(o[i].free_bytes, 1, fr, sizeof(fr));
		snprintf(obj, sizeof(obj), "%" PRIu64, o[i].objects);
		rc = cli_table_add(t, cells);
	}
	if (rc) {
		cli__what(a, "ost list");
		goto out;
	}
	cli_table_print(t, a->out);
out:
	cli_table_free(t);
	free(o);
	return rc;
}

/* Sizes for df: 1K blocks as lfs df prints by default, or human form. */
static void df_size(uint64_t bytes, int human, char *out, size_t sz)
{
	if (human)
		cli_fmt_size(bytes, 1, out, sz);
	else
		snprintf(out, sz, "%" PRIu64, bytes / 1024);
}

int cli_admin_df(cli_admin *a, int human)
{
	cli_col cols[] = {
		{ "UUID", 0 }, { human ? "SIZE" : "1K-BLOCKS", 1 }, { "USED", 1 },
		{ "AVAILABLE", 1 }, { "USE%", 1 }, { "WHERE", 0 },
	};
	pfs_ost_info *o = NULL;
	pfs_statfs s;
	cli_table *t = NULL;
	uint64_t tot, fr, av, used;
	char b1[24], b2[24], b3[24], pct[8], where[48];
	uint32_t n;
	int rc;

	rc = cli_admin_get_osts(a, &o, &n);
	if (rc)
		goto out;
	rc = cli_admin_get_statfs(a, &s);
	if (rc)
		goto out;
	tot = s.blocks * s.bsize;
	fr = s.bfree * s.bsize;
	av = s.bavail * s.bsize;
	used = tot > fr ? tot - fr : 0;
	if (a->json) {
		json_t *arr = json_array();

		for (uint32_t i = 0; arr && i < n; i++) {
			json_t *e = json_pack("{s:s,s:I,s:s,s:I,s:I,s:I,s:i}",
					      "uuid", o[i].uuid, "index", (json_int_t)o[i].index,
					      "state", o[i].up ? "up" : "down",
					      "total_bytes", cli__ji(o[i].total_bytes),
					      "used_bytes", cli__ji(ost_used(&o[i])),
					      "available_bytes", cli__ji(o[i].free_bytes),
					      "use_pct", (int)cli_fmt_pct(ost_used(&o[i]),
									 o[i].total_bytes));
			if (!e || json_array_append_new(arr, e)) {
				json_decref(arr);
				arr = NULL;
			}
		}
		rc = cli__emit(a, !arr ? NULL :
			       json_pack("{s:o,s:{s:I,s:I,s:I,s:I,s:i,s:I,s:I,s:i,s:i}}",
					 "osts", arr, "summary",
					 "total_bytes", cli__ji(tot), "used_bytes", cli__ji(used),
					 "free_bytes", cli__ji(fr), "available_bytes", cli__ji(av),
					 "use_pct", (int)cli_fmt_pct(used, tot),
					 "files", cli__ji(s.files), "files_free", cli__ji(s.ffree),
					 "bsize", (int)s.bsize, "namemax", (int)s.namemax));
		goto out;
	}
	rc = cli_table_create(cols, sizeof(cols) / sizeof(cols[0]), &t);
	for (uint32_t i = 0; rc == 0 && i < n; i++) {
		const char *cells[6] = { o[i].uuid, b1, b2, b3, pct, where };

		df_size(o[i].total_bytes, human, b1, sizeof(b1));
		df_size(ost_used(&o[i]), human, b2, sizeof(b2));
		df_size(o[i].free_bytes, human, b3, sizeof(b3));
		snprintf(pct, sizeof(pct), "%u%%", cli_fmt_pct(ost_used(&o[i]), o[i].total_bytes));
		snprintf(where, sizeof(where), "[OST:%u]%s", o[i].index, o[i].up ? "" : " down");
		rc = cli_table_add(t, cells);
	}
	if (rc == 0)
		rc = cli_table_add_break(t);
	if (rc == 0) {
		const char *cells[6] = { "filesystem_summary:", b1, b2, b3, pct, "" };

		df_size(tot, human, b1, sizeof(b1));
		df_size(used, human, b2, sizeof(b2));
		df_size(av, human, b3, sizeof(b3));
		snprintf(pct, sizeof(pct), "%u%%", cli_fmt_pct(used, tot));
		rc = cli_table_add(t, cells);
	}
	if (rc) {
		cli__what(a, "df");
		goto out;
	}
	cli_table_print(t, a->out);
	fprintf(a->out, "\ninodes: %" PRIu64 " total, %" PRIu64 " free\n", s.files, s.ffree);
out:
	cli_table_free(t);
	free(o);
	return rc;
}

static int set_stripe(cli_admin *a, uint64_t ino, uint32_t size, uint32_t count)
{
	pfs_rpc_reply rep = { 0 };
	pfs_wbuf w;
	int rc;

	pfs_wbuf_init(&w);
	pfs_cred_encode(&w, &a->cred);
	pfs_wbuf_u64(&w, ino);
	pfs_wbuf_u32(&w, size);
	pfs_wbuf_u32(&w, count);
	rc = call(a, PFS_OP_MDS_SETSTRIPE, &w, &rep);
	pfs_wbuf_free(&w);
	pfs_rpc_reply_free(&rep);
	return rc;
}

/* Create name in directory parent with the given hints; the new layout
 * comes back in l.  Not idempotent: a lost reply followed by a resend
 * would find the file there (EXCL), so it is sent once. */
static int create_file(cli_admin *a, uint64_t parent, const char *name, uint32_t size,
		       uint32_t count, uint64_t *ino, pfs_layout *l, uint32_t *nobj)
{
	pfs_rpc_reply rep = { 0 };
	pfs_wbuf w;
	pfs_rbuf r;
	pfs_attr attr;
	/* umask can only be read by setting it; pfsadmin is single-threaded
	 * when it creates, so the moment with umask 0 is harmless. */
	mode_t um = umask(0);
	int rc;

	umask(um);
	pfs_wbuf_init(&w);
	pfs_cred_encode(&w, &a->cred);
	pfs_wbuf_u64(&w, parent);
	pfs_wbuf_str(&w, name);
	pfs_wbuf_u32(&w, (uint32_t)(S_IFREG | (0666 & ~um)));
	pfs_wbuf_u32(&w, PFS_CREATE_EXCL);
	pfs_wbuf_u32(&w, size);
	pfs_wbuf_u32(&w, count);
	pfs_rpc_reply_init(&rep);
	rc = pfs_wbuf_error(&w);
	if (rc == 0)
		rc = pfs_rpc_call(a->pool, PFS_OP_MDS_CREATE, a->job_id, 0, w.data, w.len,
				  NULL, 0, &rep);
	if (rc)
		goto out;
	pfs_rbuf_init(&r, rep.data, rep.len);
	if (pfs_attr_decode(&r, &attr) || pfs_layout_decode(&r, l) || pfs_rbuf_done(&r))
		rc = -EBADMSG;
	if (rc == 0) {
		*ino = attr.ino;
		*nobj = l->stripe_count;
	}
out:
	pfs_wbuf_free(&w);
	pfs_rpc_reply_free(&rep);
	return rc;
}

/* Print a layout (getstripe, and setstripe's confirmation). */
static int print_layout(cli_admin *a, const char *path, uint64_t ino, int is_dir,
			const pfs_layout *l, uint32_t nobj)
{
	static const cli_col cols[] = {
		{ "STRIPE", 1 }, { "OST", 1 }, { "OBJECT_ID", 0 }, { "OBJECT", 1 },
	};
	char sz[16];
	cli_table *t = NULL;
	int rc = 0;

	if (a->json) {
		json_t *arr = json_array();

		for (uint32_t i = 0; arr && i < nobj; i++) {
			char hex[24];
			json_t *e;

			snprintf(hex, sizeof(hex), "0x%" PRIx64, l->stripe[i].object);
			e = json_pack("{s:I,s:I,s:s,s:I}", "index", (json_int_t)i,
				      "ost", (json_int_t)l->stripe[i].ost, "object_id", hex,
				      "object", cli__ji(l->stripe[i].object));
			if (!e || json_array_append_new(arr, e)) {
				json_decref(arr);
				arr = NULL;
			}
		}
		return cli__emit(a, !arr ? NULL :
				 json_pack("{s:s,s:I,s:s,s:I,s:I,s:o}", "path", path,
					   "ino", cli__ji(ino),
					   "type", is_dir ? "directory" : "file",
					   "stripe_size", (json_int_t)l->stripe_size,
					   "stripe_count", l->stripe_count == CLI_STRIPE_ALL_WIRE ?
					   (json_int_t)-1 : (json_int_t)l->stripe_count,
					   "stripes", arr));
	}
	fprintf(a->out, "%s\n", path);
	/* A directory's default: 0 means "the file system default" for
	 * either value.  (The MDS does not report a directory's default
	 * count yet and always sends 0 there.) */
	if (is_dir && l->stripe_size == 0) {
		fputs("  default stripe_size:  file system default\n", a->out);
	} else {
		cli_fmt_size(l->stripe_size, 1, sz, sizeof(sz));
		fprintf(a->out, "  %sstripe_size:  %u (%s)\n", is_dir ? "default " : "",
			l->stripe_size, sz);
	}
	if (l->stripe_count == CLI_STRIPE_ALL_WIRE)
		fprintf(a->out, "  default stripe_count: -1 (all OSTs)\n");
	else if (is_dir && l->stripe_count == 0)
		fprintf(a->out, "  default stripe_count: file system default\n");
	else
		fprintf(a->out, "  %sstripe_count: %u\n", is_dir ? "default " : "",
			l->stripe_count);
	if (nobj == 0)
		return 0;
	rc = cli_table_create(cols, sizeof(cols) / sizeof(cols[0]), &t);
	for (uint32_t i = 0; rc == 0 && i < nobj; i++) {
		char idx[16], ost[16], hex[24], dec[24];
		const char *cells[4] = { idx, ost, hex, dec };

		snprintf(idx, sizeof(idx), "%u", i);
		snprintf(ost, sizeof(ost), "%u", l->stripe[i].ost);
		snprintf(hex, sizeof(hex), "0x%" PRIx64, l->stripe[i].object);
		snprintf(dec, sizeof(dec), "%" PRIu64, l->stripe[i].object);
		rc = cli_table_add(t, cells);
	}
	if (rc == 0)
		cli_table_print(t, a->out);
	else
		cli__what(a, "getstripe %s", path);
	cli_table_free(t);
	return rc;
}

int cli_admin_setstripe(cli_admin *a, const char *path, int have_count, int32_t count,
			int have_size, uint32_t size)
{
	struct stat st;
	pfs_layout *l = calloc(1, sizeof(*l));
	uint32_t nobj = 0, wsize = have_size ? size : 0, wcount = 0;
	char *dcopy = NULL, *bcopy = NULL;
	int rc;

	if (!l) {
		cli__what(a, "setstripe %s", path);
		return -ENOMEM;
	}
	/* -1 goes to the MDS as "all OSTs up", resolved when each file is
	 * created, so a directory default keeps up with OSTs added later. */
	if (have_count)
		wcount = count == CLI_STRIPE_ALL ? CLI_STRIPE_ALL_WIRE : (uint32_t)count;
	if (stat(path, &st) == 0) {
		if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) {
			rc = -EINVAL;
			cli__what(a, "setstripe %s: not a regular file or directory", path);
			goto out;
		}
		/* The MDS refuses too (-EBUSY); checking here first gives a
		 * message that says why. */
		if (S_ISREG(st.st_mode) && st.st_size > 0) {
			rc = -EBUSY;
			cli__what(a, "setstripe %s: the file has data, its layout is fixed", path);
			goto out;
		}
		rc = set_stripe(a, (uint64_t)st.st_ino, wsize, wcount);
		if (rc) {
			cli__what(a, "setstripe %s", path);
			goto out;
		}
		rc = cli_admin_get_layout(a, (uint64_t)st.st_ino, l, &nobj);
		if (rc == 0)
			rc = print_layout(a, path, (uint64_t)st.st_ino, S_ISDIR(st.st_mode), l,
					  nobj);
		goto out;
	}
	if (errno != ENOENT) {
		rc = -errno;
		cli__what(a, "setstripe %s", path);
		goto out;
	}
	/* A new file: look the parent up through the mount, create by name. */
	dcopy = strdup(path);
	bcopy = strdup(path);
	if (!dcopy || !bcopy) {
		rc = -ENOMEM;
		cli__what(a, "setstripe %s", path);
		goto out;
	}
	{
		const char *dir = dirname(dcopy), *base = basename(bcopy);
		struct stat pst;

		if (stat(dir, &pst) != 0) {
			rc = -errno;
			cli__what(a, "setstripe %s: parent %s", path, dir);
			goto out;
		}
		if (!S_ISDIR(pst.st_mode)) {
			rc = -ENOTDIR;
			cli__what(a, "setstripe %s: parent %s", path, dir);
			goto out;
		}
		if (strlen(base) > PFS_NAME_MAX) {
			rc = -ENAMETOOLONG;
			cli__what(a, "setstripe %s", path);
			goto out;
		}
		uint64_t ino = 0;

		rc = create_file(a, (uint64_t)pst.st_ino, base, wsize, wcount, &ino, l, &nobj);
		if (rc) {
			cli__what(a, "setstripe %s: create", path);
			goto out;
		}
		rc = print_layout(a, path, ino, 0, l, nobj);
	}
out:
	free(dcopy);
	free(bcopy);
	free(l);
	return rc;
}

int cli_admin_getstripe(cli_admin *a, const char *path)
{
	struct stat st;
	pfs_layout *l = calloc(1, sizeof(*l));
	uint32_t nobj;
	int rc;

	if (!l) {
		cli__what(a, "getstripe %s", path);
		return -ENOMEM;
	}
	if (stat(path, &st) != 0) {
		rc = -errno;
		cli__what(a, "getstripe %s", path);
		goto out;
	}
	rc = cli_admin_get_layout(a, (uint64_t)st.st_ino, l, &nobj);
	if (rc) {
		char mds[300];

		/* The path exists here; say that the MDS answered, so an
		 * ENOENT for a path outside pfs is not a riddle. */
		cli__what(a, "getstripe %s: inode %llu on MDS %s", path,
			  (unsigned long long)st.st_ino, mds_name(a, mds, sizeof(mds)));
		goto out;
	}
	rc = print_layout(a, path, (uint64_t)st.st_ino, S_ISDIR(st.st_mode), l, nobj);
out:
	free(l);
	return rc;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int cli_admin_ping(cli_admin *a, unsigned count)
{
	uint64_t *rtt = calloc(count ? count : 1, sizeof(*rtt));
	uint64_t min = UINT64_MAX, max = 0, sum = 0;
	char mds[300];
	int rc = 0;

	mds_name(a, mds, sizeof(mds));
	if (!rtt || count == 0) {
		free(rtt);
		cli__what(a, "ping %s", mds);
		return count ? -ENOMEM : -EINVAL;
	}
	for (unsigned i = 0; i < count; i++) {
		pfs_rpc_reply rep = { 0 };
		uint8_t msg[16];
		uint64_t t0 = now_ns();

		/* A sequence number and the send time: an echo of another
		 * request's bytes would not match. */
		memcpy(msg, &i, sizeof(i));
		memset(msg + sizeof(i), 0, sizeof(msg) - sizeof(i));
		memcpy(msg + 8, &t0, sizeof(t0));
		pfs_rpc_reply_init(&rep);
		rc = pfs_rpc_call(a->pool, PFS_OP_PING, a->job_id, PFS_RPC_IDEMPOTENT, msg,
				  sizeof(msg), NULL, 0, &rep);
		rtt[i] = now_ns() - t0;
		if (rc == 0 && (rep.len != sizeof(msg) || memcmp(rep.data, msg, sizeof(msg))))
			rc = -EBADMSG;
		pfs_rpc_reply_free(&rep);
		if (rc) {
			cli__what(a, "ping %s", mds);
			goto out;
		}
		min = rtt[i] < min ? rtt[i] : min;
		max = rtt[i] > max ? rtt[i] : max;
		sum += rtt[i];
	}
	if (a->json) {
		json_t *arr = json_array();

		for (unsigned i = 0; arr && i < count; i++)
			if (json_array_append_new(arr, json_integer(cli__ji(rtt[i] / 1000)))) {
				json_decref(arr);
				arr = NULL;
			}
		rc = cli__emit(a, !arr ? NULL :
			       json_pack("{s:s,s:I,s:o,s:I,s:I,s:I}", "mds", mds,
					 "count", (json_int_t)count, "rtt_us", arr,
					 "min_us", cli__ji(min / 1000),
					 "avg_us", cli__ji(sum / count / 1000),
					 "max_us", cli__ji(max / 1000)));
		goto out;
	}
	for (unsigned i = 0; i < count; i++)
		fprintf(a->out, "%s: seq=%u time=%.3f ms\n", mds, i + 1, (double)rtt[i] / 1e6);
	fprintf(a->out, "rtt min/avg/max = %.3f/%.3f/%.3f ms\n", (double)min / 1e6,
		(double)sum / count / 1e6, (double)max / 1e6);
out:
	free(rtt);
	return rc;
}

static int run_ost_list(cli_admin *a, const cli_admin_args *args)
{
	return cli_admin_ost_list(a);
}

static int run_df(cli_admin *a, const cli_admin_args *args)
{
	return cli_admin_df(a, args->human);
}

static int run_setstripe(cli_admin *a, const cli_admin_args *args)
{
	return cli_admin_setstripe(a, args->path, args->have_count, args->count,
				   args->have_size, args->size);
}

static int run_getstripe(cli_admin *a, const cli_admin_args *args)
{
	return cli_admin_getstripe(a, args->path);
}

static int run_ping(cli_admin *a, const cli_admin_args *args)
{
	return cli_admin_ping(a, args->ping_count);
}

/* Each command's entry point; the job/QoS ones take the parsed arguments
 * as they are. */
static int (*const run_table[CLI_ADMIN_CMD_COUNT])(cli_admin *, const cli_admin_args *) = {
	[CLI_ADMIN_OST_LIST] = run_ost_list,
	[CLI_ADMIN_DF] = run_df,
	[CLI_ADMIN_SETSTRIPE] = run_setstripe,
	[CLI_ADMIN_GETSTRIPE] = run_getstripe,
	[CLI_ADMIN_PING] = run_ping,
	[CLI_ADMIN_JOB_REGISTER] = cli_admin_job_register,
	[CLI_ADMIN_JOB_END] = cli_admin_job_end,
	[CLI_ADMIN_JOB_LIST] = cli_admin_job_list,
	[CLI_ADMIN_JOB_SHOW] = cli_admin_job_show,
	[CLI_ADMIN_JOBSTATS] = cli_admin_jobstats,
	[CLI_ADMIN_QOS_SHOW] = cli_admin_qos_show,
	[CLI_ADMIN_QOS_POLICY_SET] = cli_admin_qos_policy_set,
	[CLI_ADMIN_QOS_POLICY_SHOW] = cli_admin_qos_policy_show,
	[CLI_ADMIN_QOS_COUPONS] = cli_admin_qos_coupons,
	[CLI_ADMIN_QOS_REGRET] = cli_admin_qos_regret,
	[CLI_ADMIN_NRS_RULE] = cli_admin_nrs_rule,
};

int cli_admin_run(cli_admin *a, const cli_admin_args *args)
{
	if ((unsigned)args->cmd < CLI_ADMIN_CMD_COUNT && run_table[args->cmd])
		return run_table[args->cmd](a, args);
	cli__what(a, "no command to run");
	return -EINVAL;
}
