/* ostreg.c — the OST registry and the object allocator (the MDS's part of
 * Lustre's LOD/LOV): which OSTs exist, where their OSSes listen, whether
 * they are up, how full they are, and which OSTs and object ids a new file
 * gets.
 *
 * Persistent (tables `osts`, be32 index -> ost_disk, and `ostuuid`, uuid ->
 * u32 index): indices, uuids, OSS names, hosts, ports, each OST's object id
 * high-water mark and its capacity when last written.  In memory
 * (ns->ost[], guarded by ns->lock): liveness and capacity from
 * REGISTER/HEARTBEAT, and the object ids handed out.
 *
 * After an MDS restart (nsdb.c loads the table at open through
 * mds_nsi_ost_load) every registered OST is presumed up, with its stored
 * capacity, until heartbeat_timeout_ms pass without hearing from it: then
 * it is down as any silent OST.  So creates right after a restart do not
 * fail with ENOSPC while the OSSes have not sent their first heartbeat.
 * MDS_OST_LIST (and so the move check of OSS_REGISTER, the destroyer and
 * the QoS loop) still shows such an OST down until it is heard: its OSS may
 * come back on other ports.
 *
 * Object ids come from memory below the high-water mark (nsdb.c's
 * mds_nsi_id_take): only the create that crosses it writes a new mark,
 * id_batch further, and that transaction is synced before its reply, so a
 * machine crash never hands out an id twice.  ns.c calls
 * mds_nsi_layout_alloc inside its create and setstripe transactions; STATFS
 * sums the capacity of the OSTs heard or presumed up. */
#include "mds/ostreg.h"

#include "mds/ns_i.h"

#define QOS_THRESHOLD_PCT 17 /* free-space imbalance that switches RR to weighted (Lustre's qos_threshold_rr) */

/* The record; older versions wrote only the first 208 bytes (no capacity). */
struct ost_disk {
	char uuid[64], oss[64], host[64];
	uint16_t data_port, ctl_port;
	uint32_t pad;
	uint64_t next_obj;      /* object id high-water mark: ids below may be in use */
	uint64_t total, free_;  /* capacity when the record was last written */
};
#define OST_DISK_V1 208

/* In-memory view of one OST; guarded by mds_ns.lock. */
struct ost_mem {
	int known;
	char uuid[64], oss[64], host[64];
	uint16_t data_port, ctl_port;
	int heard;          /* a register/heartbeat arrived since start */
	int presumed;       /* registered before this start: up until the timeout */
	uint64_t last_ms;   /* monotonic time of the last one (of the start if presumed) */
	uint64_t total, free_, objects;
	int64_t wrr_cur;    /* smooth weighted round robin state */
	struct mds_id_range ids; /* object ids */
};

/* Decode a stored record of either size; 0 or -EIO. */
static int od_get(const MDB_val *v, struct ost_disk *od)
{
	memset(od, 0, sizeof(*od));
	if (v->mv_size != sizeof(*od) && v->mv_size != OST_DISK_V1)
		return -EIO;
	memcpy(od, v->mv_data, v->mv_size);
	return 0;
}

static void be32_put(uint8_t *p, uint32_t v)
{
	for (int i = 3; i >= 0; i--) {
		p[i] = (uint8_t)v;
		v >>= 8;
	}
}

static uint32_t be32_get(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t mono_ms(mds_ns *ns)
{
	struct timespec ts;

	if (ns->opts.clock_ms)
		return ns->opts.clock_ms(ns->opts.clock_arg);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* A loop tick this much later than the one before means the MDS was
 * stopped (SIGSTOP, a debugger) or starved of CPU: it read nothing meanwhile. */
#define STALL_MS 3000

/* The time at which an OST's silence is judged: now, or, while the MDS's
 * loop has not ticked for STALL_MS, its last tick: the MDS is stalled or
 * just back, and the heartbeats that queued in its sockets meanwhile may
 * not be read yet (a create answered first would find every OST down and
 * fail with ENOSPC).  An OSS is never blamed for the MDS's own deafness. */
static uint64_t judged_at(mds_ns *ns, uint64_t now)
{
	return ns->ost_tick_ms && now - ns->ost_tick_ms > STALL_MS ? ns->ost_tick_ms : now;
}

/* Up for allocation and STATFS: heard within the timeout, or presumed up
 * after a restart and the timeout not over. */
static int ost_up(mds_ns *ns, const struct ost_mem *o, uint64_t now)
{
	uint64_t at = judged_at(ns, now);

	return o->known && (o->heard || o->presumed) &&
	       (o->last_ms >= at || at - o->last_ms <= ns->opts.heartbeat_timeout_ms);
}

void mds_ns_ost_tick(mds_ns *ns)
{
	uint64_t now = mono_ms(ns), gap = 0;

	pthread_mutex_lock(&ns->lock);
	if (ns->ost_tick_ms && now - ns->ost_tick_ms > STALL_MS) {
		/* the time the MDS could not listen is not silence of its OSTs */
		gap = now - ns->ost_tick_ms;
		for (uint32_t i = 0; i < ns->nost; i++) {
			struct ost_mem *o = &ns->ost[i];

			if (o->known)
				o->last_ms = o->last_ms + gap < now ? o->last_ms + gap : now;
		}
	}
	ns->ost_tick_ms = now;
	pthread_mutex_unlock(&ns->lock);
	if (gap)
		pfs_log(PFS_LOG_NOTICE, "mds: no loop tick for %llu ms (stopped or starved): "
			"OST heartbeats missed meanwhile are not counted",
			(unsigned long long)gap);
}

/* Up as a running OSS at its registered address: heard within the timeout.
 * What MDS_OST_LIST reports and the destroyer and the move check of
 * OSS_REGISTER (server.c) use: a restarted OSS may be on new ports, so a
 * presumed OST must neither get RPCs at its old address nor stop its OSS
 * from registering at the new one. */
static int ost_live(mds_ns *ns, const struct ost_mem *o, uint64_t now)
{
	return o->heard && ost_up(ns, o, now);
}

/* Pick up to want distinct up OSTs into idx[]; returns how many (0 if none
 * is up).  With first != PFS_STRIPE_OFFSET_ANY (lfs setstripe -i): first,
 * then the next indices up, wrapping at the last registered OST and
 * skipping those that are down (Lustre's specific allocation; free space
 * plays no part).  Otherwise round robin while free space is balanced; when
 * the spread between the fullest and emptiest OST exceeds QOS_THRESHOLD_PCT
 * of the largest free space, a smooth weighted round robin by free space (as
 * Lustre's QOS allocator), so emptier OSTs fill faster and nearly full ones
 * are skipped. */
static uint32_t ost_choose(mds_ns *ns, uint32_t want, uint32_t first, uint32_t *idx)
{
	uint32_t up[1024], k = 0, got = 0;
	uint64_t now = mono_ms(ns), maxf = 0, minf = UINT64_MAX;
	int unknown = 0;

	pthread_mutex_lock(&ns->lock);
	for (uint32_t i = 0; i < ns->nost && k < 1024; i++) {
		if (!ost_up(ns, &ns->ost[i], now))
			continue;
		up[k++] = i;
		/* presumed up with no stored capacity: free space says nothing */
		if (!ns->ost[i].heard && !ns->ost[i].total)
			unknown = 1;
		if (ns->ost[i].free_ > maxf)
			maxf = ns->ost[i].free_;
		if (ns->ost[i].free_ < minf)
			minf = ns->ost[i].free_;
	}
	if (k == 0)
		goto out;
	if (want > k)
		want = k;
	if (first != PFS_STRIPE_OFFSET_ANY) {
		/* up[] is in index order: start at the first up OST >= first */
		uint32_t start = 0;

		while (start < k && up[start] < first)
			start++;
		for (uint32_t i = 0; i < want; i++)
			idx[got++] = up[(start + i) % k];
		goto out;
	}
	if (unknown || maxf == 0 || (maxf - minf) <= maxf / 100 * QOS_THRESHOLD_PCT) {
		uint32_t start = ns->rr++ % k;
		for (uint32_t i = 0; i < want; i++)
			idx[got++] = up[(start + i) % k];
		goto out;
	}
	uint8_t chosen[1024] = { 0 };
	for (uint32_t s = 0; s < want; s++) {
		int64_t total = 0;
		int best = -1;
		for (uint32_t i = 0; i < k; i++) {
			struct ost_mem *o = &ns->ost[up[i]];
			int64_t w = (int64_t)(o->free_ >> 20);
			if (chosen[i])
				continue;
			o->wrr_cur += w;
			total += w;
			if (best < 0 || o->wrr_cur > ns->ost[up[best]].wrr_cur)
				best = (int)i;
		}
		chosen[best] = 1;
		ns->ost[up[best]].wrr_cur -= total;
		idx[got++] = up[best];
	}
out:
	pthread_mutex_unlock(&ns->lock);
	return got;
}

int mds_nsi_ost_index_check(mds_ns *ns, uint32_t idx)
{
	int rc = 0;

	if (idx == PFS_STRIPE_OFFSET_ANY)
		return 0;
	pthread_mutex_lock(&ns->lock);
	if (idx >= ns->nost || !ns->ost[idx].known)
		rc = -EINVAL;
	pthread_mutex_unlock(&ns->lock);
	return rc;
}

/* Resolve stripe hints (0 = default; UINT32_MAX count = all OSTs up), pick
 * OSTs (from first on unless PFS_STRIPE_OFFSET_ANY) and object ids; fills
 * in->d.ss/sc and in->st. */
int mds_nsi_layout_alloc(mds_ns *ns, MDB_txn *t, uint32_t ss, uint32_t sc, uint32_t first,
			 struct inode *in)
{
	uint32_t idx[PFS_MAX_STRIPES], got;
	int rc;

	if (ss == 0)
		ss = ns->opts.default_stripe_size;
	if (sc == 0)
		sc = ns->opts.default_stripe_count ? ns->opts.default_stripe_count
						   : PFS_DEFAULT_STRIPE_COUNT;
	if (sc == UINT32_MAX)
		sc = PFS_MAX_STRIPES;
	rc = pfs_layout_check(ss, sc);
	if (!rc)
		rc = mds_nsi_ost_index_check(ns, first);
	if (rc)
		return rc;
	got = ost_choose(ns, sc, first, idx);
	if (got == 0)
		return -ENOSPC;
	for (uint32_t i = 0; i < got; i++) {
		uint8_t kb[4];
		MDB_val k = { 4, kb }, v;
		struct ost_disk od;
		uint64_t obj = 0, limit = 0, total = 0, free_ = 0;
		int w = -EIO;

		pthread_mutex_lock(&ns->lock);
		if (idx[i] < ns->nost) {
			struct ost_mem *o = &ns->ost[idx[i]];
			w = mds_nsi_id_take(ns, t, &o->ids, &obj, &limit);
			total = o->total;
			free_ = o->free_;
		}
		pthread_mutex_unlock(&ns->lock);
		if (w < 0)
			return w;
		in->st[i].ost = idx[i];
		in->st[i].object = obj;
		if (!w)
			continue;
		/* A new high-water mark (mds_nsi_wend syncs it before the reply). */
		be32_put(kb, idx[i]);
		rc = lmdb_err(mdb_get(t, ns->osts, &k, &v));
		if (!rc)
			rc = od_get(&v, &od);
		if (rc)
			return rc;
		od.next_obj = limit;
		if (total) {
			od.total = total;
			od.free_ = free_;
		}
		v.mv_size = sizeof(od);
		v.mv_data = &od;
		rc = mdb_put(t, ns->osts, &k, &v, 0);
		if (rc)
			return lmdb_err(rc);
	}
	in->d.ss = ss;
	in->d.sc = got;
	return 0;
}

void mds_nsi_ost_ids_settle(mds_ns *ns, size_t tid, int durable)
{
	for (uint32_t i = 0; i < ns->nost; i++)
		mds_nsi_id_settle(&ns->ost[i].ids, tid, durable);
}

int mds_nsi_ost_load(mds_ns *ns, MDB_txn *t)
{
	MDB_cursor *cur;
	MDB_val k, v;
	uint64_t now = mono_ms(ns);
	int rc = mdb_cursor_open(t, ns->osts, &cur);

	if (rc)
		return lmdb_err(rc);
	for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0;
	     rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		struct ost_disk od;
		uint32_t idx;

		if (k.mv_size != 4 || od_get(&v, &od))
			continue;
		idx = be32_get(k.mv_data);
		if (idx >= 65536)
			continue;
		if (idx >= ns->nost) {
			struct ost_mem *no = realloc(ns->ost, (idx + 1) * sizeof(*no));
			if (!no) {
				rc = ENOMEM;
				break;
			}
			memset(no + ns->nost, 0, (idx + 1 - ns->nost) * sizeof(*no));
			ns->ost = no;
			ns->nost = idx + 1;
		}
		struct ost_mem *o = &ns->ost[idx];
		o->known = 1;
		memcpy(o->uuid, od.uuid, 64);
		memcpy(o->oss, od.oss, 64);
		memcpy(o->host, od.host, 64);
		o->data_port = od.data_port;
		o->ctl_port = od.ctl_port;
		o->presumed = 1;
		o->last_ms = now;
		o->total = od.total;
		o->free_ = od.free_;
		o->ids.next = o->ids.limit = od.next_obj ? od.next_obj : 1;
	}
	mdb_cursor_close(cur);
	return rc == MDB_NOTFOUND ? 0 : lmdb_err(rc);
}

static int ost_mem_grow(mds_ns *ns, uint32_t idx)
{
	if (idx < ns->nost)
		return 0;
	struct ost_mem *no = realloc(ns->ost, (size_t)(idx + 1) * sizeof(*no));
	if (!no)
		return -ENOMEM;
	memset(no + ns->nost, 0, (size_t)(idx + 1 - ns->nost) * sizeof(*no));
	ns->ost = no;
	ns->nost = idx + 1;
	return 0;
}

static void copy_field(char *dst, const char *src)
{
	memset(dst, 0, 64);
	strncpy(dst, src, 63);
}

int mds_ns_oss_register(mds_ns *ns, const char *oss, const char *host,
			uint16_t data_port, uint16_t ctl_port, const mds_ost_report *r,
			uint32_t n, uint32_t *idx)
{
	MDB_txn *t = NULL;
	MDB_stat st;
	uint64_t *mark;
	int rc;

	if (!*oss || strlen(oss) > 63 || strlen(host) > 63 || n > 1024)
		return -EINVAL;
	for (uint32_t i = 0; i < n; i++)
		if (!r[i].uuid[0] || strnlen(r[i].uuid, 64) > 63)
			return -EINVAL;
	mark = calloc(n ? n : 1, sizeof(*mark));
	if (!mark)
		return -ENOMEM;
	rc = wbegin(ns, &t);
	if (rc) {
		free(mark);
		return rc;
	}
	for (uint32_t i = 0; i < n && !rc; i++) {
		MDB_val uk = { strlen(r[i].uuid), (void *)r[i].uuid }, uv, k, v;
		uint8_t kb[4];
		struct ost_disk od;

		rc = mdb_get(t, ns->ostuuid, &uk, &uv);
		if (rc == 0 && uv.mv_size == 4) {
			memcpy(&idx[i], uv.mv_data, 4);
		} else if (rc == MDB_NOTFOUND) {
			rc = lmdb_err(mdb_stat(t, ns->osts, &st));
			if (rc)
				break;
			idx[i] = (uint32_t)st.ms_entries;
			uv.mv_size = 4;
			uv.mv_data = &idx[i];
			rc = mdb_put(t, ns->ostuuid, &uk, &uv, 0);
		}
		if (rc) {
			rc = lmdb_err(rc);
			break;
		}
		be32_put(kb, idx[i]);
		k.mv_size = 4;
		k.mv_data = kb;
		memset(&od, 0, sizeof(od));
		od.next_obj = 1;
		rc = mdb_get(t, ns->osts, &k, &v);
		if (rc == 0 && od_get(&v, &od))
			od.next_obj = 1; /* a damaged record: keep nothing of it */
		else if (rc && rc != MDB_NOTFOUND) {
			rc = lmdb_err(rc);
			break;
		}
		if (!od.next_obj)
			od.next_obj = 1;
		mark[i] = od.next_obj;
		od.total = r[i].total_bytes;
		od.free_ = r[i].free_bytes;
		copy_field(od.uuid, r[i].uuid);
		copy_field(od.oss, oss);
		copy_field(od.host, host);
		od.data_port = data_port;
		od.ctl_port = ctl_port;
		v.mv_size = sizeof(od);
		v.mv_data = &od;
		rc = lmdb_err(mdb_put(t, ns->osts, &k, &v, 0));
	}
	rc = mds_nsi_wend(ns, t, rc, 0);
	if (rc) {
		free(mark);
		return rc;
	}
	uint64_t now = mono_ms(ns);
	pthread_mutex_lock(&ns->lock);
	for (uint32_t i = 0; i < n && !rc; i++) {
		rc = ost_mem_grow(ns, idx[i]);
		if (rc)
			break;
		struct ost_mem *o = &ns->ost[idx[i]];
		if (!o->known) /* new: its ids start at the stored mark */
			o->ids.next = o->ids.limit = mark[i];
		o->known = 1;
		copy_field(o->uuid, r[i].uuid);
		copy_field(o->oss, oss);
		copy_field(o->host, host);
		o->data_port = data_port;
		o->ctl_port = ctl_port;
		o->heard = 1;
		o->last_ms = now;
		o->total = r[i].total_bytes;
		o->free_ = r[i].free_bytes;
		o->objects = r[i].objects;
	}
	pthread_mutex_unlock(&ns->lock);
	free(mark);
	if (!rc)
		pfs_log(PFS_LOG_INFO, "registered %u OST(s) of %s at %s", n, oss, host);
	return rc;
}

int mds_ns_oss_heartbeat(mds_ns *ns, const char *oss, const mds_ost_report *r, uint32_t n)
{
	uint64_t now = mono_ms(ns);
	int rc = 0;

	pthread_mutex_lock(&ns->lock);
	for (uint32_t i = 0; i < n; i++) {
		if (r[i].index >= ns->nost || !ns->ost[r[i].index].known) {
			rc = -ENOENT;
			continue;
		}
		struct ost_mem *o = &ns->ost[r[i].index];
		if (strncmp(o->oss, oss, 64) != 0) {
			rc = -EPERM;
			continue;
		}
		o->heard = 1;
		o->last_ms = now;
		o->total = r[i].total_bytes;
		o->free_ = r[i].free_bytes;
		o->objects = r[i].objects;
	}
	pthread_mutex_unlock(&ns->lock);
	return rc;
}

int mds_ns_ost_list(mds_ns *ns, pfs_ost_info **out, uint32_t *n)
{
	uint64_t now = mono_ms(ns);
	uint32_t k = 0;
	pfs_ost_info *v;

	pthread_mutex_lock(&ns->lock);
	v = calloc(ns->nost ? ns->nost : 1, sizeof(*v));
	if (!v) {
		pthread_mutex_unlock(&ns->lock);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < ns->nost; i++) {
		struct ost_mem *o = &ns->ost[i];
		if (!o->known)
			continue;
		v[k].index = i;
		memcpy(v[k].uuid, o->uuid, 64);
		memcpy(v[k].oss, o->oss, 64);
		memcpy(v[k].host, o->host, 64);
		v[k].data_port = o->data_port;
		v[k].ctl_port = o->ctl_port;
		v[k].up = (uint8_t)ost_live(ns, o, now);
		v[k].total_bytes = o->total;
		v[k].free_bytes = o->free_;
		v[k].objects = o->objects;
		k++;
	}
	pthread_mutex_unlock(&ns->lock);
	*out = v;
	*n = k;
	return 0;
}

int mds_ns_ost_addr(mds_ns *ns, uint32_t idx, char *host, uint16_t *ctl_port, int *up)
{
	int rc = -ENOENT;

	pthread_mutex_lock(&ns->lock);
	if (idx < ns->nost && ns->ost[idx].known) {
		memcpy(host, ns->ost[idx].host, 64);
		*ctl_port = ns->ost[idx].ctl_port;
		*up = ost_live(ns, &ns->ost[idx], mono_ms(ns));
		rc = 0;
	}
	pthread_mutex_unlock(&ns->lock);
	return rc;
}
int mds_ns_statfs(mds_ns *ns, const pfs_cred *c, pfs_statfs *out)
{
	uint64_t total = 0, free_ = 0;
	MDB_txn *t = NULL;
	MDB_stat st;
	uint64_t now = mono_ms(ns);
	int rc;

	pthread_mutex_lock(&ns->lock);
	for (uint32_t i = 0; i < ns->nost; i++) {
		if (!ns->ost[i].known || !(ns->ost[i].heard || ost_up(ns, &ns->ost[i], now)))
			continue;
		total += ns->ost[i].total;
		free_ += ns->ost[i].free_;
	}
	pthread_mutex_unlock(&ns->lock);
	rc = rbegin(ns, &t);
	if (!rc)
		rc = lmdb_err(mdb_stat(t, ns->inodes, &st));
	if (t)
		mdb_txn_abort(t);
	if (rc)
		return rc;
	memset(out, 0, sizeof(*out));
	out->bsize = 4096;
	out->namemax = PFS_NAME_MAX;
	out->blocks = total / 4096;
	out->bfree = free_ / 4096;
	out->bavail = out->bfree;
	/* Inodes are LMDB records: the limit is the map, not a table. */
	out->ffree = 1ull << 32;
	out->files = st.ms_entries + out->ffree;
	return 0;
}
