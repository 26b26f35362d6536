/* ascar_store.c — the ASCAR rule set in the MDS's LMDB (see ascar_store.h).
 * Record: u64 version (little endian), then the rule text (no NUL). */
#include "mds/ascar_store.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "qos/ascar.h"

#define KEY "ascar"

static uint64_t get_u64(const unsigned char *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static void put_u64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/* Read the record in t: version and a borrowed text of *len bytes. */
static int rec_get(mds_kv_txn *t, uint64_t *version, const char **text, size_t *len)
{
	const void *v;
	size_t vlen;
	int rc = mds_ns_kv_get(t, MDS_KV_QOS, KEY, strlen(KEY), &v, &vlen);

	if (rc == -ENOENT) {
		*version = 0;
		*text = "";
		*len = 0;
		return 0;
	}
	if (rc)
		return rc;
	if (vlen < 8)
		return -EBADMSG;
	*version = get_u64(v);
	*text = (const char *)v + 8;
	*len = vlen - 8;
	return 0;
}

int mds_ascar_store_set(mds_ns *ns, const char *text, uint64_t *version, int *line)
{
	qos_ascar_ruleset rs;
	mds_kv_txn *t = NULL;
	const char *old;
	unsigned char *rec;
	size_t len = text ? strlen(text) : 0, olen;
	uint64_t v;
	int rc;

	if (line)
		*line = 0;
	if (len > MDS_ASCAR_TEXT_MAX)
		return -EINVAL;
	if (text && text[strspn(text, " \t\r\n")] != '\0') {
		qos_ascar_ruleset_init(&rs);
		rc = qos_ascar_ruleset_parse(text, &rs, line);
		qos_ascar_ruleset_free(&rs);
		if (rc)
			return rc;
	} else {
		len = 0; /* off */
	}
	rec = malloc(8 + len);
	if (!rec)
		return -ENOMEM;
	rc = mds_ns_kv_begin(ns, 1, &t);
	if (rc)
		goto out;
	rc = rec_get(t, &v, &old, &olen);
	if (rc) {
		mds_ns_kv_abort(t);
		goto out;
	}
	put_u64(rec, v + 1);
	if (len)
		memcpy(rec + 8, text, len);
	rc = mds_ns_kv_put(t, MDS_KV_QOS, KEY, strlen(KEY), rec, 8 + len);
	if (rc) {
		mds_ns_kv_abort(t);
		goto out;
	}
	rc = mds_ns_kv_commit(t);
	if (!rc)
		*version = v + 1;
out:
	free(rec);
	return rc;
}

int mds_ascar_store_get(mds_ns *ns, uint64_t *version, char **text)
{
	mds_kv_txn *t = NULL;
	const char *p;
	size_t len;
	int rc = mds_ns_kv_begin(ns, 0, &t);

	*text = NULL;
	if (rc)
		return rc;
	rc = rec_get(t, version, &p, &len);
	if (!rc) {
		*text = malloc(len + 1);
		if (*text) {
			memcpy(*text, p, len);
			(*text)[len] = '\0';
		} else {
			rc = -ENOMEM;
		}
	}
	mds_ns_kv_commit(t);
	return rc;
}
