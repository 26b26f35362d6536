/* slotrec.c — create slot records in the namespace database (asynchronous
 * create, issue 11): table `slots`, key be64 ino, value the owner client,
 * the directory, the expiry (wall-clock ms: it must outlive a restart of
 * the MDS) and the layout reserved with the number, in its wire form
 * (common/buf.h, pfs_layout_encode: decoding checks it as a reply's).
 * mds_ns_create_slots (ns.c) puts them in the transaction that reserves
 * the numbers; each create of a CREATE_BATCH (mds_ns_create_slot) takes
 * its record in the transaction that makes the file, so
 * a number is used once, only by its owner, in its directory, and a failed
 * create leaves the record as it was.  Expired records go a few at a time
 * with each reservation (mds_nsi_slot_sweep): numbers come from a counter,
 * so the table's first keys are its oldest. */
#include "mds/ns_i.h"

#include "common/buf.h"

int mds_nsi_slot_put(mds_ns *ns, MDB_txn *t, uint64_t ino, uint64_t client, uint64_t dir,
		     uint64_t expiry_ms, const pfs_layout *lay)
{
	uint8_t kb[8];
	MDB_val k = { 8, kb }, v;
	pfs_wbuf w;
	int rc;

	if (!ino || !lay->stripe_count || lay->stripe_count > PFS_MAX_STRIPES)
		return -EINVAL;
	pfs_wbuf_init(&w);
	pfs_wbuf_u64(&w, client);
	pfs_wbuf_u64(&w, dir);
	pfs_wbuf_u64(&w, expiry_ms);
	pfs_layout_encode(&w, lay);
	rc = pfs_wbuf_error(&w);
	if (!rc) {
		be64_put(kb, ino);
		v.mv_size = w.len;
		v.mv_data = w.data;
		rc = lmdb_err(mdb_put(t, ns->slots, &k, &v, MDB_NOOVERWRITE));
	}
	pfs_wbuf_free(&w);
	return rc;
}

/* The record v: 0 with its fields (lay may be NULL), or -EIO when it does
 * not decode (a layout with objects, nothing after it). */
static int rec_read(const MDB_val *v, uint64_t *client, uint64_t *dir, uint64_t *expiry_ms,
		    pfs_layout *lay)
{
	pfs_layout tmp, *l = lay ? lay : &tmp;
	pfs_rbuf r;

	pfs_rbuf_init(&r, v->mv_data, v->mv_size);
	*client = pfs_rbuf_u64(&r);
	*dir = pfs_rbuf_u64(&r);
	*expiry_ms = pfs_rbuf_u64(&r);
	if (pfs_layout_decode(&r, l) || l->stripe_count == 0 || pfs_rbuf_done(&r))
		return -EIO;
	return 0;
}

int mds_nsi_slot_take(mds_ns *ns, MDB_txn *t, uint64_t ino, uint64_t client, uint64_t dir,
		      uint64_t now_ms, pfs_layout *lay)
{
	uint8_t kb[8];
	MDB_val k = { 8, kb }, v;
	uint64_t owner, in_dir, expiry_ms;
	int rc;

	be64_put(kb, ino);
	rc = lmdb_err(mdb_get(t, ns->slots, &k, &v));
	if (rc == -ENOENT)
		return -ESTALE;
	if (rc)
		return rc;
	rc = rec_read(&v, &owner, &in_dir, &expiry_ms, lay);
	if (rc) {
		pfs_log(PFS_LOG_ERR, "slots: record of ino %llu is damaged: dropped",
			(unsigned long long)ino);
		(void)mdb_del(t, ns->slots, &k, NULL);
		return -ESTALE;
	}
	if (owner != client || in_dir != dir || expiry_ms <= now_ms)
		return -ESTALE;
	return lmdb_err(mdb_del(t, ns->slots, &k, NULL));
}

unsigned mds_nsi_slot_sweep(mds_ns *ns, MDB_txn *t, uint64_t now_ms, unsigned max)
{
	MDB_cursor *cur;
	MDB_val k, v;
	uint64_t client, dir, expiry_ms;
	unsigned n = 0;

	if (mdb_cursor_open(t, ns->slots, &cur))
		return 0;
	while (n < max && mdb_cursor_get(cur, &k, &v, MDB_FIRST) == 0) {
		if (rec_read(&v, &client, &dir, &expiry_ms, NULL) == 0 && expiry_ms > now_ms)
			break;
		if (mdb_cursor_del(cur, 0))
			break;
		n++;
	}
	mdb_cursor_close(cur);
	return n;
}
