/* admin_df.c — pfsadmin ost list and df (see admin_df.h).
 *
 * Both fetch the OST table once; df also the MDS's statfs for its MDT line.
 * Every number a target may lack (an MDT's bytes, an OST's inode limit) is
 * carried with a "have" flag and printed as "-" or JSON null, never as 0. */
#include "client/admin_df.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "client/admin_fmt.h"
#include "client/admin_i.h"

/* One target's numbers for df. */
typedef struct df_row {
	int have_bytes;       /* total/used/free/avail known */
	int have_ilimit;      /* total/free inodes known */
	int have_iused;
	uint64_t total, used, free_, avail;
	uint64_t itotal, iused, ifree;
} df_row;

char *cli_admin_target_name(const char *fsname, const char *kind, uint32_t index, char *buf,
			    size_t sz)
{
	snprintf(buf, sz, "%s-%s%04" PRIx32, fsname, kind, index);
	return buf;
}

static uint64_t ost_used(const pfs_ost_info *o)
{
	return o->total_bytes > o->free_bytes ? o->total_bytes - o->free_bytes : 0;
}

static int by_index(const void *x, const void *y)
{
	const pfs_ost_info *p = x, *q = y;

	return p->index < q->index ? -1 : p->index > q->index;
}

static void ost_row(const pfs_ost_info *o, df_row *r)
{
	memset(r, 0, sizeof(*r));
	r->have_bytes = 1;
	r->total = o->total_bytes;
	r->used = ost_used(o);
	r->free_ = o->free_bytes;
	r->avail = o->free_bytes; /* an OSS reports one free figure */
	r->have_iused = 1;
	r->iused = o->objects;
}

static void mdt_row(const pfs_statfs *s, df_row *r)
{
	memset(r, 0, sizeof(*r));
	r->have_iused = 1;
	r->iused = s->files > s->ffree ? s->files - s->ffree : 0;
	if (s->ffree != CLI_MDS_INODES_UNLIMITED) {
		r->have_ilimit = 1;
		r->itotal = s->files;
		r->ifree = s->ffree;
	}
}

static json_t *jnum(int have, uint64_t v)
{
	return have ? json_integer(cli__ji(v)) : json_null();
}

/* The space keys of the vocabulary into o, and with inodes the inode
 * keys; 0 or -1. */
static int set_space(json_t *o, const df_row *r, int inodes)
{
	int bad = 0;

	bad |= json_object_set_new(o, "total_bytes", jnum(r->have_bytes, r->total));
	bad |= json_object_set_new(o, "used_bytes", jnum(r->have_bytes, r->used));
	bad |= json_object_set_new(o, "free_bytes", jnum(r->have_bytes, r->free_));
	bad |= json_object_set_new(o, "available_bytes", jnum(r->have_bytes, r->avail));
	bad |= json_object_set_new(o, "used_pct", jnum(r->have_bytes,
						       cli_fmt_pct(r->used, r->total)));
	if (!inodes)
		return bad ? -1 : 0;
	bad |= json_object_set_new(o, "total_inodes", jnum(r->have_ilimit, r->itotal));
	bad |= json_object_set_new(o, "used_inodes", jnum(r->have_iused, r->iused));
	bad |= json_object_set_new(o, "free_inodes", jnum(r->have_ilimit, r->ifree));
	bad |= json_object_set_new(o, "used_inodes_pct",
				   jnum(r->have_ilimit && r->have_iused,
					cli_fmt_pct(r->iused, r->itotal)));
	return bad ? -1 : 0;
}

/* ost_json: one OST as ost list and df show it. */
static json_t *ost_json(const cli_admin *a, const pfs_ost_info *o, int full)
{
	char name[64];
	df_row r;
	json_t *e;

	ost_row(o, &r);
	cli_admin_target_name(a->fsname, "OST", o->index, name, sizeof(name));
	e = json_pack("{s:I,s:s,s:s,s:s,s:s}", "index", (json_int_t)o->index, "name", name,
		      "uuid", o->uuid, "oss", o->oss, "state", o->up ? "up" : "down");
	if (e && full && (json_object_set_new(e, "host", json_string(o->host)) ||
			  json_object_set_new(e, "data_port", json_integer(o->data_port)) ||
			  json_object_set_new(e, "ctl_port", json_integer(o->ctl_port))))
		goto bad;
	/* ost list: space, and the objects by their own name; df: space
	 * and inodes, the objects being an OST's used inodes. */
	if (e && (set_space(e, &r, !full) ||
		  (full && json_object_set_new(e, "objects", json_integer(cli__ji(o->objects))))))
		goto bad;
	return e;
bad:
	json_decref(e);
	return NULL;
}

int cli_admin_ost_list(cli_admin *a)
{
	static const cli_col cols[] = {
		{ "IDX", 1 }, { "NAME", 0 }, { "UUID", 0 }, { "OSS", 0 }, { "ADDRESS", 0 },
		{ "STATE", 0 }, { "SIZE", 1 }, { "USED", 1 }, { "FREE", 1 }, { "OBJECTS", 1 },
	};
	pfs_ost_info *o = NULL;
	cli_table *t = NULL;
	json_t *arr = NULL;
	uint32_t n;
	int rc;

	rc = cli_admin_get_osts(a, &o, &n);
	if (rc) {
		cli__rewhat(a, "ost list");
		goto out;
	}
	qsort(o, n, sizeof(*o), by_index);
	if (a->json) {
		arr = json_array();
		for (uint32_t i = 0; i < n; i++)
			cli__jpush(&arr, ost_json(a, &o[i], 1));
		rc = cli__emit(a, arr ? json_pack("{s:s,s:o}", "fsname", a->fsname, "osts", arr) :
			       NULL);
		goto out;
	}
	rc = cli_table_create(cols, sizeof(cols) / sizeof(cols[0]), &t);
	for (uint32_t i = 0; rc == 0 && i < n; i++) {
		char idx[16], name[64], addr[96], sz[16], used[16], fr[16], obj[24];
		const char *cells[10] = { idx, name, o[i].uuid, o[i].oss, addr,
					  o[i].up ? "up" : "down", sz, used, fr, obj };

		snprintf(idx, sizeof(idx), "%u", o[i].index);
		cli_admin_target_name(a->fsname, "OST", o[i].index, name, sizeof(name));
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

/* A df number: "-" when not known; 1K blocks as lfs df prints by
 * default, or human form; inode counts as they are. */
static const char *df_num(int have, uint64_t v, int bytes, int human, char *out, size_t sz)
{
	if (!have)
		snprintf(out, sz, "-");
	else if (bytes && human)
		cli_fmt_size(v, 1, out, sz);
	else
		snprintf(out, sz, "%" PRIu64, bytes ? v / 1024 : v);
	return out;
}

/* One table row for r: name, four numbers, where. */
static int df_add(cli_table *t, const char *name, const df_row *r, int human, int inodes,
		  const char *where)
{
	char c1[24], c2[24], c3[24], pct[8];
	const char *cells[6] = { name, c1, c2, c3, pct, where };

	if (inodes) {
		df_num(r->have_ilimit, r->itotal, 0, 0, c1, sizeof(c1));
		df_num(r->have_iused, r->iused, 0, 0, c2, sizeof(c2));
		df_num(r->have_ilimit, r->ifree, 0, 0, c3, sizeof(c3));
		if (r->have_ilimit && r->have_iused)
			snprintf(pct, sizeof(pct), "%u%%", cli_fmt_pct(r->iused, r->itotal));
		else
			snprintf(pct, sizeof(pct), "-");
	} else {
		df_num(r->have_bytes, r->total, 1, human, c1, sizeof(c1));
		df_num(r->have_bytes, r->used, 1, human, c2, sizeof(c2));
		df_num(r->have_bytes, r->avail, 1, human, c3, sizeof(c3));
		if (r->have_bytes)
			snprintf(pct, sizeof(pct), "%u%%", cli_fmt_pct(r->used, r->total));
		else
			snprintf(pct, sizeof(pct), "-");
	}
	return cli_table_add(t, cells);
}

static int df_table(cli_admin *a, const pfs_ost_info *o, uint32_t n, const df_row *mdt,
		    const df_row *sum, int human, int inodes)
{
	cli_col cols[] = {
		{ "UUID", 0 }, { inodes ? "Inodes" : human ? "bytes" : "1K-blocks", 1 },
		{ inodes ? "IUsed" : "Used", 1 }, { inodes ? "IFree" : "Available", 1 },
		{ inodes ? "IUse%" : "Use%", 1 }, { "Mounted on", 0 },
	};
	cli_table *t = NULL;
	char name[80], where[PFS_PATH_MAX + 32];
	int rc = cli_table_create(cols, sizeof(cols) / sizeof(cols[0]), &t);

	if (rc == 0) {
		cli_admin_target_name(a->fsname, "MDT", 0, name, sizeof(name));
		strcat(name, "_UUID");
		snprintf(where, sizeof(where), "%s[MDT:0]", a->mnt);
		rc = df_add(t, name, mdt, human, inodes, where);
	}
	for (uint32_t i = 0; rc == 0 && i < n; i++) {
		df_row r;

		cli_admin_target_name(a->fsname, "OST", o[i].index, name, sizeof(name));
		strcat(name, "_UUID");
		if (!o[i].up) {
			rc = cli_table_add_span(t, name, ": inactive device");
			continue;
		}
		ost_row(&o[i], &r);
		snprintf(where, sizeof(where), "%s[OST:%u]", a->mnt, o[i].index);
		rc = df_add(t, name, &r, human, inodes, where);
	}
	if (rc == 0)
		rc = cli_table_add_break(t);
	if (rc == 0)
		rc = df_add(t, "filesystem_summary:", sum, human, inodes, a->mnt);
	if (rc == 0)
		cli_table_print(t, a->out);
	else
		cli__what(a, "df");
	cli_table_free(t);
	return rc;
}

static int df_json(cli_admin *a, const pfs_ost_info *o, uint32_t n, const df_row *mdt,
		   const df_row *sum, uint32_t up)
{
	json_t *osts = json_array(), *mdts = json_array(), *m, *s;
	char name[80];

	cli_admin_target_name(a->fsname, "MDT", 0, name, sizeof(name));
	m = json_pack("{s:i,s:s,s:s}", "index", 0, "name", name, "state", "up");
	if (m && set_space(m, mdt, 1)) {
		json_decref(m);
		m = NULL;
	}
	cli__jpush(&mdts, m);
	for (uint32_t i = 0; i < n; i++)
		cli__jpush(&osts, ost_json(a, &o[i], 0));
	s = json_pack("{s:I,s:I}", "osts_up", (json_int_t)up, "osts_down", (json_int_t)(n - up));
	if (s && set_space(s, sum, 1)) {
		json_decref(s);
		s = NULL;
	}
	if (!osts || !mdts || !s) {
		json_decref(osts);
		json_decref(mdts);
		json_decref(s);
		return cli__emit(a, NULL);
	}
	return cli__emit(a, json_pack("{s:s,s:o,s:o,s:o}", "fsname", a->fsname, "mdts", mdts,
				      "osts", osts, "summary", s));
}

int cli_admin_df(cli_admin *a, int human, int inodes)
{
	pfs_ost_info *o = NULL;
	pfs_statfs st;
	df_row mdt, sum;
	uint32_t n = 0, up = 0;
	int rc;

	rc = cli_admin_get_osts(a, &o, &n);
	if (rc == 0)
		rc = cli_admin_get_statfs(a, &st);
	if (rc) {
		cli__rewhat(a, "df");
		goto out;
	}
	qsort(o, n, sizeof(*o), by_index);
	mdt_row(&st, &mdt);
	/* The summary: space of the OSTs that are up; inodes of the MDT,
	 * where every file has its inode. */
	sum = mdt;
	sum.have_bytes = 1;
	for (uint32_t i = 0; i < n; i++) {
		if (!o[i].up)
			continue;
		up++;
		sum.total += o[i].total_bytes;
		sum.used += ost_used(&o[i]);
		sum.free_ += o[i].free_bytes;
		sum.avail += o[i].free_bytes;
	}
	if (a->json)
		rc = df_json(a, o, n, &mdt, &sum, up);
	else
		rc = df_table(a, o, n, &mdt, &sum, human, inodes);
out:
	free(o);
	return rc;
}

int cli_admin_run_ost_list(cli_admin *a, const cli_admin_args *args)
{
	return cli_admin_ost_list(a);
}

int cli_admin_run_df(cli_admin *a, const cli_admin_args *args)
{
	return cli_admin_df(a, args->human, args->inodes);
}
