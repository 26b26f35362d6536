/* reply_log.c — the `replies` table: the reply of each namespace mutation
 * stored in the mutation's own transaction (mds/reply_log.h; Lustre's
 * last_rcvd).  mds_nsi_wend (nsdb.c) calls mds_nsi_reply_put before it
 * commits; the dispatcher reads a record back for a resend the in-memory
 * reply cache does not know (after an MDS restart).
 *
 * Table (nsdb.c opens it):
 *   replies  be64 client + be64 req -> u8 version (1), u8 flags (1 = attr,
 *            2 = layout), u16 opcode, u64 time (s, CLOCK_REALTIME), then
 *            pfs_attr_encode and pfs_layout_encode bytes as flagged
 *
 * The context is per thread: the request a thread runs is the one whose
 * commit records (no state shared between threads). */
#include "mds/reply_log.h"

#include "common/buf.h"
#include "mds/ns_i.h"

#define REC_VERSION 1u
#define REC_ATTR 1u
#define REC_LAY 2u

static _Thread_local mds_ns_reply *cur_reply;

void mds_ns_reply_set(mds_ns_reply *r)
{
	cur_reply = r;
}

mds_ns_reply *mds_nsi_reply_pending(mds_ns *ns)
{
	mds_ns_reply *r = cur_reply;

	return r && r->ns == ns && !r->done ? r : NULL;
}

static void rkey(uint8_t *kb, uint64_t client, uint64_t req)
{
	be64_put(kb, client);
	be64_put(kb + 8, req);
}

static uint64_t now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec;
}

/* Drop r->client's records of ids at least MDS_REPLY_LOG_WINDOW below
 * r->req (normally the one that just left the window). */
static int prune(mds_ns *ns, MDB_txn *t, const mds_ns_reply *r)
{
	MDB_cursor *cur;
	uint8_t kb[16];
	MDB_val k, v;
	int rc;

	if (r->req < MDS_REPLY_LOG_WINDOW)
		return 0;
	rc = mdb_cursor_open(t, ns->replies, &cur);
	if (rc)
		return lmdb_err(rc);
	rkey(kb, r->client, 0);
	for (;;) {
		k.mv_size = 16;
		k.mv_data = kb;
		rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
		if (rc || k.mv_size != 16 || be64_get(k.mv_data) != r->client ||
		    be64_get((const uint8_t *)k.mv_data + 8) > r->req - MDS_REPLY_LOG_WINDOW)
			break;
		rc = mdb_cursor_del(cur, 0);
		if (rc)
			break;
	}
	mdb_cursor_close(cur);
	return rc == MDB_NOTFOUND ? 0 : lmdb_err(rc);
}

int mds_nsi_reply_put(mds_ns *ns, MDB_txn *t, const mds_ns_reply *r)
{
	uint8_t kb[16];
	pfs_wbuf w;
	int rc;

	pfs_wbuf_init(&w);
	pfs_wbuf_u8(&w, REC_VERSION);
	pfs_wbuf_u8(&w, (uint8_t)((r->attr ? REC_ATTR : 0) | (r->lay ? REC_LAY : 0)));
	pfs_wbuf_u16(&w, r->opcode);
	pfs_wbuf_u64(&w, now_s());
	if (r->attr)
		pfs_attr_encode(&w, r->attr);
	if (r->lay)
		pfs_layout_encode(&w, r->lay);
	rc = pfs_wbuf_error(&w);
	if (!rc) {
		MDB_val k = { 16, kb }, v = { w.len, w.data };

		rkey(kb, r->client, r->req);
		rc = lmdb_err(mdb_put(t, ns->replies, &k, &v, 0));
	}
	pfs_wbuf_free(&w);
	return rc ? rc : prune(ns, t, r);
}

int mds_nsi_reply_purge(mds_ns *ns, MDB_txn *t)
{
	uint64_t now = now_s(), n = 0;
	MDB_cursor *cur;
	MDB_val k, v;
	int rc = mdb_cursor_open(t, ns->replies, &cur);

	if (rc)
		return lmdb_err(rc);
	for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); !rc;
	     rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		pfs_rbuf rb;
		uint64_t when;

		pfs_rbuf_init(&rb, v.mv_data, v.mv_size);
		(void)pfs_rbuf_u32(&rb); /* version, flags, opcode */
		when = pfs_rbuf_u64(&rb);
		if (!pfs_rbuf_error(&rb) && when + MDS_REPLY_LOG_MAX_AGE_S >= now)
			continue;
		rc = mdb_cursor_del(cur, 0);
		if (rc)
			break;
		n++;
	}
	mdb_cursor_close(cur);
	if (n)
		pfs_log(PFS_LOG_INFO, "reply log: %llu old records dropped", (unsigned long long)n);
	return rc == MDB_NOTFOUND ? 0 : lmdb_err(rc);
}

int mds_ns_reply_get(mds_ns *ns, uint64_t client, uint64_t req, mds_ns_reply_rec *out)
{
	uint8_t kb[16];
	MDB_val k = { 16, kb }, v;
	MDB_txn *t;
	pfs_rbuf b;
	int rc = rbegin(ns, &t);

	if (rc)
		return rc;
	rkey(kb, client, req);
	rc = lmdb_err(mdb_get(t, ns->replies, &k, &v));
	if (!rc) {
		uint8_t ver, flags;

		memset(out, 0, sizeof(*out));
		pfs_rbuf_init(&b, v.mv_data, v.mv_size);
		ver = pfs_rbuf_u8(&b);
		flags = pfs_rbuf_u8(&b);
		out->opcode = pfs_rbuf_u16(&b);
		(void)pfs_rbuf_u64(&b);
		out->has_attr = !!(flags & REC_ATTR);
		out->has_lay = !!(flags & REC_LAY);
		if (out->has_attr && pfs_attr_decode(&b, &out->attr))
			rc = -EIO;
		if (!rc && out->has_lay && pfs_layout_decode(&b, &out->lay))
			rc = -EIO;
		if (!rc && (ver != REC_VERSION || pfs_rbuf_error(&b)))
			rc = -EIO;
	}
	mdb_txn_abort(t);
	return rc;
}
