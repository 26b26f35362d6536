/* admin_lfsck.c — pfsadmin lfsck (see admin_lfsck.h): one MDS_LFSCK
 * request, its reply decoded whole, then one table or one JSON document. */
#include "client/admin_lfsck.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "client/admin_fmt.h"
#include "client/admin_i.h"
#include "common/buf.h"
#include "common/proto.h"

/* u32 ost, u8 reached, u64 listed, u64 orphans, u64 queued */
#define OST_WIRE 29u

typedef struct lfsck_ost {
	uint32_t ost;
	uint8_t reached;
	uint64_t seen, orphaned, destroyed;
} lfsck_ost;

static int dec_ost(pfs_rbuf *r, void *out)
{
	lfsck_ost *o = out;

	o->ost = pfs_rbuf_u32(r);
	o->reached = pfs_rbuf_u8(r);
	o->seen = pfs_rbuf_u64(r);
	o->orphaned = pfs_rbuf_u64(r);
	o->destroyed = pfs_rbuf_u64(r);
	if (pfs_rbuf_error(r))
		return -EBADMSG;
	/* orphans are among the listed, queued among the orphans */
	return o->orphaned > o->seen || o->destroyed > o->orphaned ? -EBADMSG : 0;
}

static int print_json(cli_admin *a, int dry, const lfsck_ost *v, uint32_t n)
{
	json_t *arr = json_array();
	uint64_t seen = 0, orph = 0, dest = 0;

	for (uint32_t i = 0; i < n; i++) {
		char name[64];
		json_t *o;

		snprintf(name, sizeof(name), "%s-OST%04x", a->fsname ? a->fsname : "pfs",
			 v[i].ost);
		if (v[i].reached) {
			seen += v[i].seen;
			orph += v[i].orphaned;
			dest += v[i].destroyed;
			o = json_pack("{s:I,s:s,s:b,s:I,s:I,s:I,s:I}", "index", (json_int_t)v[i].ost,
				      "name", name, "reached", 1, "seen", cli__ji(v[i].seen),
				      "referenced", cli__ji(v[i].seen - v[i].orphaned),
				      "orphaned", cli__ji(v[i].orphaned),
				      "destroyed", cli__ji(v[i].destroyed));
		} else {
			o = json_pack("{s:I,s:s,s:b,s:n,s:n,s:n,s:n}", "index", (json_int_t)v[i].ost,
				      "name", name, "reached", 0, "seen", "referenced", "orphaned",
				      "destroyed");
		}
		cli__jpush(&arr, o);
	}
	return cli__emit(a, !arr ? NULL :
			 json_pack("{s:b,s:o,s:I,s:I,s:I,s:I}", "dry_run", dry, "osts", arr,
				   "seen", cli__ji(seen), "referenced", cli__ji(seen - orph),
				   "orphaned", cli__ji(orph), "destroyed", cli__ji(dest)));
}

static int print_table(cli_admin *a, int dry, const lfsck_ost *v, uint32_t n)
{
	static const cli_col cols[] = {
		{ "OST", 0 }, { "seen", 1 }, { "referenced", 1 }, { "orphaned", 1 },
		{ "destroyed", 1 },
	};
	uint64_t orph = 0, dest = 0;
	unsigned missed = 0;
	cli_table *t = NULL;
	int rc = cli_table_create(cols, sizeof(cols) / sizeof(cols[0]), &t);

	for (uint32_t i = 0; i < n && !rc; i++) {
		char name[64], s[24], r[24], o[24], d[24];
		const char *cells[5] = { name, s, r, o, d };

		snprintf(name, sizeof(name), "%s-OST%04x", a->fsname ? a->fsname : "pfs",
			 v[i].ost);
		if (!v[i].reached) {
			missed++;
			rc = cli_table_add_span(t, name, ": not reached (down or did not answer)");
			continue;
		}
		orph += v[i].orphaned;
		dest += v[i].destroyed;
		snprintf(s, sizeof(s), "%llu", (unsigned long long)v[i].seen);
		snprintf(r, sizeof(r), "%llu", (unsigned long long)(v[i].seen - v[i].orphaned));
		snprintf(o, sizeof(o), "%llu", (unsigned long long)v[i].orphaned);
		snprintf(d, sizeof(d), "%llu", (unsigned long long)v[i].destroyed);
		rc = cli_table_add(t, cells);
	}
	if (rc) {
		cli__what(a, "lfsck: building the table");
		cli_table_free(t);
		return rc;
	}
	cli_table_print(t, a->out);
	cli_table_free(t);
	if (dry)
		fprintf(a->out, "dry run: %llu orphan object(s) found, nothing destroyed",
			(unsigned long long)orph);
	else
		fprintf(a->out, "%llu orphan object(s) found, %llu queued for destruction",
			(unsigned long long)orph, (unsigned long long)dest);
	if (missed)
		fprintf(a->out, "; %u OST(s) not checked", missed);
	fputc('\n', a->out);
	return 0;
}

int cli_admin_lfsck(cli_admin *a, const cli_admin_args *args)
{
	pfs_rpc_reply rep = { 0 };
	lfsck_ost *v = NULL;
	uint32_t n = 0;
	pfs_rbuf r;
	pfs_wbuf w;
	int rc;

	pfs_wbuf_init(&w);
	pfs_wbuf_u8(&w, args->dry_run ? 1 : 0);
	/* Running it twice judges nothing twice (queued objects are in the
	 * destroy log, which counts as a reference): a resend is harmless. */
	rc = cli__call(a, PFS_OP_MDS_LFSCK, &w, PFS_RPC_IDEMPOTENT, &rep);
	pfs_wbuf_free(&w);
	if (!rc) {
		void *arr = NULL;

		pfs_rbuf_init(&r, rep.data, rep.len);
		(void)pfs_rbuf_u64(&r); /* referenced, over every OST */
		rc = cli__rarray(&r, OST_WIRE, sizeof(*v), dec_ost, &arr, &n);
		v = arr;
	}
	pfs_rpc_reply_free(&rep);
	if (rc) {
		cli__fail_mds(a, rc, args->dry_run ? "lfsck --dry-run" : "lfsck", "lfsck");
		return rc;
	}
	rc = a->json ? print_json(a, args->dry_run, v, n) : print_table(a, args->dry_run, v, n);
	free(v);
	return rc;
}
