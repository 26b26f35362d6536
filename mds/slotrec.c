/* slotrec.c — create slot records in the namespace database (asynchronous
 * create, issue 11): table `slots`, key be64 ino, value the owner client,
 * the directory, the expiry (wall-clock ms: it must outlive a restart of
 * the MDS) and the layout reserved with the number.  mds_ns_create_slots
 * (ns.c) puts them in the transaction that reserves the numbers; a CREATE
 * into a slot takes its record in the transaction that makes the file, so
 * a number is used once, only by its owner, in its directory, and a failed
 * create leaves the record as it was.  Expired records go a few at a time
 * with each reservation (mds_nsi_slot_sweep): numbers come from a counter,
 * so the table's first keys are its oldest. */
#include "mds/ns_i.h"

struct slot_rec {
	uint64_t client, dir, expiry_ms;
	uint32_t stripe_size, stripe_count;
	pfs_stripe st[];
};

int mds_nsi_slot_put(mds_ns *ns, MDB_txn *t, uint64_t ino, uint64_t client, uint64_t dir,
		     uint64_t expiry_ms, const pfs_layout *lay)
{
	uint8_t kb[8];
	size_t len = sizeof(struct slot_rec) + lay->stripe_count * sizeof(pfs_stripe);
	struct slot_rec *r;
	MDB_val k = { 8, kb }, v;
	int rc;

	if (!ino || !lay->stripe_count || lay->stripe_count > PFS_MAX_STRIPES)
		return -EINVAL;
	r = malloc(len);
	if (!r)
		return -ENOMEM;
	r->client = client;
	r->dir = dir;
	r->expiry_ms = expiry_ms;
	r->stripe_size = lay->stripe_size;
	r->stripe_count = lay->stripe_count;
	memcpy(r->st, lay->stripe, lay->stripe_count * sizeof(pfs_stripe));
	be64_put(kb, ino);
	v.mv_size = len;
	v.mv_data = r;
	rc = lmdb_err(mdb_put(t, ns->slots, &k, &v, MDB_NOOVERWRITE));
	free(r);
	return rc;
}

/* The record of v, checked: 0 with *r (aligned copy) or -EIO. */
static int rec_read(const MDB_val *v, struct slot_rec *r, pfs_layout *lay)
{
	if (v->mv_size < sizeof(*r))
		return -EIO;
	memcpy(r, v->mv_data, sizeof(*r));
	if (!r->stripe_count || r->stripe_count > PFS_MAX_STRIPES ||
	    v->mv_size != sizeof(*r) + r->stripe_count * sizeof(pfs_stripe))
		return -EIO;
	if (lay) {
		memset(lay, 0, sizeof(*lay));
		lay->stripe_size = r->stripe_size;
		lay->stripe_count = r->stripe_count;
		memcpy(lay->stripe, (const uint8_t *)v->mv_data + sizeof(*r),
		       r->stripe_count * sizeof(pfs_stripe));
	}
	return 0;
}

int mds_nsi_slot_take(mds_ns *ns, MDB_txn *t, uint64_t ino, uint64_t client, uint64_t dir,
		      uint64_t now_ms, pfs_layout *lay)
{
	uint8_t kb[8];
	MDB_val k = { 8, kb }, v;
	struct slot_rec r;
	int rc;

	be64_put(kb, ino);
	rc = lmdb_err(mdb_get(t, ns->slots, &k, &v));
	if (rc == -ENOENT)
		return -ESTALE;
	if (rc)
		return rc;
	rc = rec_read(&v, &r, lay);
	if (rc) {
		pfs_log(PFS_LOG_ERR, "slots: record of ino %llu is damaged: dropped",
			(unsigned long long)ino);
		(void)mdb_del(t, ns->slots, &k, NULL);
		return -ESTALE;
	}
	if (r.client != client || r.dir != dir || r.expiry_ms <= now_ms)
		return -ESTALE;
	return lmdb_err(mdb_del(t, ns->slots, &k, NULL));
}

unsigned mds_nsi_slot_sweep(mds_ns *ns, MDB_txn *t, uint64_t now_ms, unsigned max)
{
	MDB_cursor *cur;
	MDB_val k, v;
	struct slot_rec r;
	unsigned n = 0;

	if (mdb_cursor_open(t, ns->slots, &cur))
		return 0;
	while (n < max && mdb_cursor_get(cur, &k, &v, MDB_FIRST) == 0) {
		if (rec_read(&v, &r, NULL) == 0 && r.expiry_ms > now_ms)
			break;
		if (mdb_cursor_del(cur, 0))
			break;
		n++;
	}
	mdb_cursor_close(cur);
	return n;
}
