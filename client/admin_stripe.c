/* admin_stripe.c — pfsadmin setstripe and getstripe (see admin_stripe.h).
 *
 * A layout is read whole (stat for the inode number, GETLAYOUT through
 * mdc) into a stripe_info, then printed in one of four forms: text, the
 * selected values, YAML, JSON.  setstripe prints what it made in the same
 * forms, so a script can read back what it asked for. */
#include "client/admin_stripe.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "client/admin_fmt.h"
#include "client/admin_i.h"

typedef struct stripe_info {
	const char *path;   /* borrowed */
	uint64_t ino;
	int is_dir;
	pfs_layout l;
	uint32_t nobj;      /* stripes with objects: 0 for a directory */
} stripe_info;

/* The count as lfs prints it: -1 for "every OST". */
static json_int_t count_value(const stripe_info *s)
{
	return s->l.stripe_count == CLI_STRIPE_ALL_WIRE ? -1 : (json_int_t)s->l.stripe_count;
}

/* lmm_stripe_offset as lfs prints it: stripe 0's OST, a directory
 * default's first OST, or -1 when none was given (the MDS chooses). */
static json_int_t index_value(const stripe_info *s)
{
	uint32_t first = s->l.stripe[0].ost;

	return (s->nobj || s->is_dir) && first != PFS_STRIPE_OFFSET_ANY ? (json_int_t)first : -1;
}

static json_t *stripe_json(const stripe_info *s)
{
	json_t *arr = json_array();

	for (uint32_t i = 0; i < s->nobj; i++) {
		char hex[24];

		snprintf(hex, sizeof(hex), "0x%" PRIx64, s->l.stripe[i].object);
		cli__jpush(&arr, json_pack("{s:I,s:I,s:s,s:I}", "index", (json_int_t)i,
					   "ost", (json_int_t)s->l.stripe[i].ost, "object_id", hex,
					   "object", cli__ji(s->l.stripe[i].object)));
	}
	return !arr ? NULL :
		json_pack("{s:s,s:I,s:s,s:I,s:I,s:I,s:o}", "path", s->path, "ino", cli__ji(s->ino),
			  "type", s->is_dir ? "directory" : "file",
			  "stripe_size", (json_int_t)s->l.stripe_size,
			  "stripe_count", count_value(s), "stripe_index", index_value(s),
			  "stripes", arr);
}

/* A YAML scalar for any string: a JSON string is a valid YAML
 * double-quoted scalar. */
static void yaml_str(FILE *out, const char *s)
{
	json_t *j = json_string(s);

	if (j)
		json_dumpf(j, out, JSON_ENCODE_ANY);
	else
		fputs("\"\"", out); /* not UTF-8: jansson refuses it */
	json_decref(j);
}

static void print_yaml(FILE *out, const stripe_info *s)
{
	fputs("- path: ", out);
	yaml_str(out, s->path);
	fprintf(out, "\n  ino: %" PRIu64 "\n  type: %s\n  stripe_size: %u\n"
		"  stripe_count: %lld\n  stripe_index: %lld\n  stripes:%s\n", s->ino,
		s->is_dir ? "directory" : "file", s->l.stripe_size,
		(long long)count_value(s), (long long)index_value(s), s->nobj ? "" : " []");
	for (uint32_t i = 0; i < s->nobj; i++)
		fprintf(out, "    - index: %u\n      ost: %u\n      object_id: \"0x%" PRIx64 "\"\n"
			"      object: %" PRIu64 "\n", i, s->l.stripe[i].ost,
			s->l.stripe[i].object, s->l.stripe[i].object);
}

/* The selected values: alone for one path and one selector, else as
 * "stripe_count: 2" lines (under the path when there are several). */
static void print_selected(FILE *out, const stripe_info *s, unsigned select, int npaths)
{
	static const struct { unsigned bit; const char *name; } f[] = {
		{ CLI_SEL_COUNT, "stripe_count" }, { CLI_SEL_SIZE, "stripe_size" },
		{ CLI_SEL_INDEX, "stripe_index" },
	};
	int bare = npaths == 1 && (select & (select - 1)) == 0;

	if (npaths > 1)
		fprintf(out, "%s\n", s->path);
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		long long v;

		if (!(select & f[i].bit))
			continue;
		v = f[i].bit == CLI_SEL_COUNT ? (long long)count_value(s) :
			f[i].bit == CLI_SEL_SIZE ? (long long)s->l.stripe_size :
			(long long)index_value(s);
		if (bare)
			fprintf(out, "%lld\n", v);
		else
			fprintf(out, "%s%s: %lld\n", npaths > 1 ? "  " : "", f[i].name, v);
	}
}

static int print_text(cli_admin *a, const stripe_info *s)
{
	static const cli_col cols[] = {
		{ "STRIPE", 1 }, { "OST", 1 }, { "OBJECT_ID", 0 }, { "OBJECT", 1 },
	};
	const char *dflt = s->is_dir ? "default " : "";
	cli_table *t = NULL;
	char sz[16];
	int rc = 0;

	fprintf(a->out, "%s\n", s->path);
	/* A directory's default: 0 means "the file system default" for
	 * either value. */
	if (s->is_dir && s->l.stripe_size == 0) {
		fputs("  default stripe_size:  file system default\n", a->out);
	} else {
		cli_fmt_size(s->l.stripe_size, 1, sz, sizeof(sz));
		fprintf(a->out, "  %sstripe_size:  %u (%s)\n", dflt, s->l.stripe_size, sz);
	}
	if (s->l.stripe_count == CLI_STRIPE_ALL_WIRE)
		fprintf(a->out, "  %sstripe_count: -1 (all OSTs)\n", dflt);
	else if (s->is_dir && s->l.stripe_count == 0)
		fputs("  default stripe_count: file system default\n", a->out);
	else if (s->l.stripe_count == 0)
		fputs("  stripe_count: 0 (no layout yet)\n", a->out);
	else
		fprintf(a->out, "  %sstripe_count: %u\n", dflt, s->l.stripe_count);
	if (s->nobj == 0) {
		if (index_value(s) >= 0)
			fprintf(a->out, "  %sstripe_index: %lld\n", dflt,
				(long long)index_value(s));
		else
			fprintf(a->out, "  %sstripe_index: -1 (the MDS chooses)\n", dflt);
		return 0;
	}
	fprintf(a->out, "  stripe_index: %u\n", s->l.stripe[0].ost);
	rc = cli_table_create(cols, sizeof(cols) / sizeof(cols[0]), &t);
	for (uint32_t i = 0; rc == 0 && i < s->nobj; i++) {
		char idx[16], ost[16], hex[24], dec[24];
		const char *cells[4] = { idx, ost, hex, dec };

		snprintf(idx, sizeof(idx), "%u", i);
		snprintf(ost, sizeof(ost), "%u", s->l.stripe[i].ost);
		snprintf(hex, sizeof(hex), "0x%" PRIx64, s->l.stripe[i].object);
		snprintf(dec, sizeof(dec), "%" PRIu64, s->l.stripe[i].object);
		rc = cli_table_add(t, cells);
	}
	if (rc == 0)
		cli_table_print(t, a->out);
	else
		cli__what(a, "printing the layout of %s", s->path);
	cli_table_free(t);
	return rc;
}

/* One path's layout, as setstripe confirms it. */
static int print_one(cli_admin *a, const stripe_info *s)
{
	if (a->json)
		return cli__emit(a, stripe_json(s));
	return print_text(a, s);
}

/* stat + GETLAYOUT; on failure a->what/why say why. */
static int read_layout(cli_admin *a, const char *path, const char *doing, stripe_info *s)
{
	struct stat st;
	char mds[300];
	int rc;

	memset(s, 0, sizeof(*s));
	s->path = path;
	if (stat(path, &st) != 0) {
		rc = -errno;
		cli__what(a, "%s %s", doing, path);
		return rc;
	}
	s->ino = (uint64_t)st.st_ino;
	s->is_dir = S_ISDIR(st.st_mode);
	rc = cli_mdc_getlayout_any(a->mdc, &a->ctx, s->ino, &s->l, &s->nobj);
	if (rc) {
		cli__what(a, "%s %s", doing, path);
		cli__fail_mds(a, rc, NULL, "layout");
		/* The path exists here; say that the MDS answered, so an
		 * ENOENT for a path outside pfs is not a riddle. */
		if (rc == -ENOENT)
			cli__why(a, "inode %" PRIu64 " not found on %s (is the path in pfs?)",
				 s->ino, cli__mds_name(a, mds, sizeof(mds)));
	}
	return rc;
}

int cli_admin_getstripe(cli_admin *a, const char *const *paths, int npaths, unsigned select,
			int yaml)
{
	stripe_info *s = malloc(sizeof(*s));
	json_t *arr = npaths > 1 && a->json ? json_array() : NULL;
	int first = 0, rc = 0;

	if (!s || (npaths > 1 && a->json && !arr)) {
		free(s);
		json_decref(arr);
		cli__what(a, "getstripe");
		return -ENOMEM;
	}
	for (int i = 0; i < npaths; i++) {
		char msg[900];

		rc = read_layout(a, paths[i], "getstripe", s);
		if (rc) {
			if (npaths == 1)
				break;
			cli__report(a, rc);
			cli_admin_errmsg(a, rc, msg, sizeof(msg));
			if (arr)
				cli__jpush(&arr, json_pack("{s:s,s:i,s:s}", "path", paths[i],
							   "errno", rc, "error", msg));
			first = first ? first : rc;
			continue;
		}
		if (arr)
			cli__jpush(&arr, stripe_json(s));
		else if (a->json)
			rc = cli__emit(a, stripe_json(s));
		else if (yaml)
			print_yaml(a->out, s);
		else if (select)
			print_selected(a->out, s, select, npaths);
		else {
			if (i > 0)
				fputc('\n', a->out);
			rc = print_text(a, s);
		}
		if (rc)
			break;
	}
	if (rc == 0 && npaths > 1 && a->json)
		rc = cli__emit(a, arr ? json_pack("{s:o}", "paths", arr) : NULL);
	else
		json_decref(arr);
	free(s);
	return rc ? rc : first;
}

/* -EINVAL from the MDS for a request with a first OST: the index. */
static void bad_index(cli_admin *a, int rc, uint32_t wfirst)
{
	if (rc == -EINVAL && wfirst != PFS_STRIPE_OFFSET_ANY)
		cli__why(a, "no OST has index %u (or the layout is invalid): see pfsadmin "
			 "ost list", wfirst);
}

/* Create path (its parent found through the mount) with the layout. */
static int new_file(cli_admin *a, const char *path, uint32_t wsize, uint32_t wcount,
		    uint32_t wfirst, stripe_info *s)
{
	char *dcopy = strdup(path), *bcopy = strdup(path);
	const char *dir, *base;
	struct stat pst;
	pfs_attr attr;
	mode_t um;
	int rc;

	cli__what(a, "setstripe %s", path);
	if (!dcopy || !bcopy) {
		rc = -ENOMEM;
		goto out;
	}
	dir = dirname(dcopy);
	base = basename(bcopy);
	rc = stat(dir, &pst) != 0 ? -errno : !S_ISDIR(pst.st_mode) ? -ENOTDIR : 0;
	if (rc) {
		cli__what(a, "setstripe %s: parent %s", path, dir);
		goto out;
	}
	if (strlen(base) > PFS_NAME_MAX) {
		rc = -ENAMETOOLONG;
		goto out;
	}
	/* umask can only be read by setting it; pfsadmin is single-threaded
	 * when it creates, so the moment with umask 0 is harmless. */
	um = umask(0);
	umask(um);
	/* Sent once (not idempotent): a lost reply followed by a resend would
	 * find the file there (EXCL). */
	rc = cli_mdc_create_file_at(a->mdc, &a->ctx, (uint64_t)pst.st_ino, base,
				    (uint32_t)(S_IFREG | (0666 & ~um)), PFS_CREATE_EXCL, wsize,
				    wcount, wfirst, &attr, &s->l);
	if (rc) {
		cli__fail_mds(a, rc, NULL, "create");
		bad_index(a, rc, wfirst);
		if (rc == -EEXIST)
			cli__why(a, "file already has a layout (it was created meanwhile)");
		goto out;
	}
	s->ino = attr.ino;
	s->nobj = s->l.stripe_count;
out:
	free(dcopy);
	free(bcopy);
	return rc;
}

int cli_admin_setstripe(cli_admin *a, const char *path, const cli_stripe_req *req)
{
	stripe_info *s = calloc(1, sizeof(*s));
	uint32_t wsize = req->have_size ? req->size : 0, wcount = 0;
	uint32_t wfirst = req->have_index && req->index != CLI_STRIPE_INDEX_ANY ?
				  (uint32_t)req->index : PFS_STRIPE_OFFSET_ANY;
	struct stat st;
	int rc;

	cli__what(a, "setstripe %s", path);
	if (!s)
		return -ENOMEM;
	s->path = path;
	/* -1 goes to the MDS as "all OSTs up", resolved when each file is
	 * created, so a directory default keeps up with OSTs added later. */
	if (req->have_count)
		wcount = req->count == CLI_STRIPE_ALL ? CLI_STRIPE_ALL_WIRE : (uint32_t)req->count;
	if (stat(path, &st) != 0) {
		rc = -errno;
		if (rc == -ENOENT && !req->del)
			rc = new_file(a, path, wsize, wcount, wfirst, s);
		if (rc == 0)
			rc = print_one(a, s);
		goto out;
	}
	if (req->del && !S_ISDIR(st.st_mode)) {
		rc = -ENOTDIR;
		cli__what(a, "setstripe -d %s", path);
		cli__why(a, "not a directory: only a directory has a default layout to delete");
		goto out;
	}
	if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) {
		rc = -EINVAL;
		cli__why(a, "not a regular file or directory");
		goto out;
	}
	if (S_ISREG(st.st_mode)) {
		/* A file's layout is made with it; only one without any (made
		 * by mknod) may still get one. */
		rc = read_layout(a, path, "setstripe", s);
		if (rc == 0 && s->l.stripe_count != 0) {
			rc = -EEXIST;
			cli__what(a, "setstripe %s", path);
			cli__why(a, "file already has a layout (a file gets its layout when it "
				 "is created: give setstripe a new PATH, or set a directory's "
				 "default)");
		}
		if (rc)
			goto out;
	}
	rc = cli_mdc_setstripe(a->mdc, &a->ctx, (uint64_t)st.st_ino, wsize, wcount, wfirst);
	if (rc) {
		cli__fail_mds(a, rc, NULL, "setstripe");
		bad_index(a, rc, wfirst);
		goto out;
	}
	rc = read_layout(a, path, "setstripe", s);
	if (rc == 0)
		rc = print_one(a, s);
out:
	free(s);
	return rc;
}

int cli_admin_run_setstripe(cli_admin *a, const cli_admin_args *args)
{
	return cli_admin_setstripe(a, args->path, &args->stripe);
}

int cli_admin_run_getstripe(cli_admin *a, const cli_admin_args *args)
{
	return cli_admin_getstripe(a, args->paths, args->npaths, args->select, args->yaml);
}
