/* admin_ascar.c — pfsadmin qos ascar load|show|off (see admin_ascar.h).
 * The file is parsed here first so a malformed rule set is refused with
 * its file name and line before anything is sent; the MDS checks it again. */
#include "client/admin_ascar.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/admin_i.h"
#include "common/buf.h"
#include "common/file.h"
#include "common/log.h"
#include "common/proto.h"
#include "mds/ascar_store.h"
#include "qos/ascar.h"

/* The file's text, NUL-terminated; *out malloc'd. */
static int read_rules(cli_admin *a, const char *path, char **out)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t n = 0;
	int rc = 0;

	*out = NULL;
	if (!f) {
		rc = -errno;
		cli__what(a, "cannot read %s: %s", path, pfs_strerror(rc));
		return rc;
	}
	buf = malloc(MDS_ASCAR_TEXT_MAX + 2);
	if (!buf) {
		fclose(f);
		return -ENOMEM;
	}
	n = fread(buf, 1, MDS_ASCAR_TEXT_MAX + 1, f);
	if (ferror(f)) {
		rc = -EIO;
		cli__what(a, "cannot read %s", path);
	} else if (n > MDS_ASCAR_TEXT_MAX) {
		rc = -EINVAL;
		cli__what(a, "%s: longer than %d bytes", path, MDS_ASCAR_TEXT_MAX);
	} else if (memchr(buf, '\0', n)) {
		rc = -EINVAL;
		cli__what(a, "%s: not a text file", path);
	}
	fclose(f);
	if (rc) {
		free(buf);
		return rc;
	}
	buf[n] = '\0';
	*out = buf;
	return 0;
}

/* ASCAR_SET text; prints the new version. */
static int set_rules(cli_admin *a, const char *text, const char *what)
{
	pfs_rpc_reply rep = { 0 };
	char mds[300];
	pfs_wbuf w;
	pfs_rbuf r;
	uint64_t v = 0;
	int rc;

	pfs_wbuf_init(&w);
	pfs_wbuf_str(&w, text);
	rc = cli__call(a, PFS_OP_MDS_ASCAR_SET, &w, 0, &rep);
	pfs_wbuf_free(&w);
	if (!rc) {
		pfs_rbuf_init(&r, rep.data, rep.len);
		v = pfs_rbuf_u64(&r);
		rc = pfs_rbuf_done(&r);
	}
	pfs_rpc_reply_free(&rep);
	if (rc) {
		cli__fail_rpc(a, rc, cli__mds_name(a, mds, sizeof(mds)), what);
		return rc;
	}
	if (a->json)
		return cli__emit(a, json_pack("{s:s,s:I,s:b}", "action", "ascar", "version",
					      cli__ji(v), "on", text[0] != '\0'));
	fprintf(a->out, "ascar rule set v%llu %s\n", (unsigned long long)v,
		text[0] ? "loaded" : "off");
	return 0;
}

int cli_admin_ascar_load(cli_admin *a, const cli_admin_args *args)
{
	qos_ascar_ruleset rs;
	char *text = NULL;
	int rc, line = 0;

	rc = read_rules(a, args->path, &text);
	if (rc)
		return rc;
	qos_ascar_ruleset_init(&rs);
	rc = qos_ascar_ruleset_parse(text, &rs, &line);
	qos_ascar_ruleset_free(&rs);
	if (rc == -EINVAL) {
		if (line)
			cli__what(a, "%s:%d: malformed ASCAR rule (want: [lo, hi) [lo, hi) [lo, hi) m b tau, "
				  "boxes not overlapping)", args->path, line);
		else
			cli__what(a, "%s: no ASCAR rule in the file", args->path);
	} else if (rc) {
		cli__what(a, "%s: %s", args->path, pfs_strerror(rc));
	}
	if (!rc)
		rc = set_rules(a, text, "ascar load");
	free(text);
	return rc;
}

int cli_admin_ascar_off(cli_admin *a, const cli_admin_args *args)
{
	return set_rules(a, "", "ascar off");
}

int cli_admin_ascar_show(cli_admin *a, const cli_admin_args *args)
{
	pfs_rpc_reply rep = { 0 };
	char mds[300];
	pfs_rbuf r;
	const char *p;
	char *text = NULL;
	size_t n = 0;
	uint64_t v = 0;
	pfs_wbuf w;
	int rc;

	pfs_wbuf_init(&w);
	rc = cli__call(a, PFS_OP_MDS_ASCAR_GET, &w, PFS_RPC_IDEMPOTENT, &rep);
	pfs_wbuf_free(&w);
	if (!rc) {
		pfs_rbuf_init(&r, rep.data, rep.len);
		v = pfs_rbuf_u64(&r);
		p = pfs_rbuf_str(&r, PFS_MAX_PAYLOAD, &n);
		rc = pfs_rbuf_done(&r);
		if (!rc && !(text = strndup(p ? p : "", p ? n : 0)))
			rc = -ENOMEM;
	}
	pfs_rpc_reply_free(&rep);
	if (rc) {
		cli__fail_rpc(a, rc, cli__mds_name(a, mds, sizeof(mds)), "ascar show");
		return rc;
	}
	if (a->json)
		rc = cli__emit(a, json_pack("{s:I,s:b,s:s}", "version", cli__ji(v), "on", n > 0,
					    "rules", text));
	else if (n)
		fprintf(a->out, "# ascar rule set v%llu\n%s%s", (unsigned long long)v, text,
			text[n - 1] == '\n' ? "" : "\n");
	else
		fprintf(a->out, "# ascar off (v%llu)\n", (unsigned long long)v);
	free(text);
	return rc;
}
