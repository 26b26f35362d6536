/* ctl.c — the OSS control port's requests (see ctl.h).  Who may send
 * each opcode (the MDS; admin keys for the read-only statistics and NRS
 * rules) is checked by server.c's ctl_handler against common/optab.c
 * before oss_ctl_execute runs. */
#include "oss/ctl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/msg.h"
#include "common/qosmsg.h"

/* Room left in a JOBSTATS reply for one more entry (a job id of at most
 * PFS_JOBID_MAX bytes plus the counters). */
#define JOBSTATS_SLACK 256u

typedef int (*ctl_fn)(oss_server *s, pfs_rbuf *b, pfs_wbuf *w);

static void patch_u32(pfs_wbuf *w, size_t at, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		w->data[at + (size_t)i] = (uint8_t)(v >> (8 * i));
}

/* u32 ost, then one or more u64 objects of that OST (a batch from the
 * MDS's destroyer: one write and at most one fdatasync for all). */
static int ctl_destroy(oss_server *s, pfs_rbuf *b, pfs_wbuf *w)
{
	uint32_t ost = pfs_rbuf_u32(b);
	size_t n = pfs_rbuf_left(b) / 8;
	uint64_t *objs;
	oss_ostq *q;
	int rc;

	if (pfs_rbuf_error(b) || n == 0 || pfs_rbuf_left(b) % 8)
		return -EBADMSG;
	rc = oss_server_lookup(s, ost, &q);
	if (rc)
		return rc;
	objs = malloc(n * sizeof(*objs));
	if (!objs)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		objs[i] = pfs_rbuf_u64(b);
	rc = pfs_rbuf_done(b);
	if (!rc)
		rc = oss_store_destroy_many(oss_ostq_store(q), objs, n);
	free(objs);
	return rc;
}

static int ctl_list_objects(oss_server *s, pfs_rbuf *b, pfs_wbuf *w)
{
	uint32_t ost = pfs_rbuf_u32(b);
	uint64_t after = pfs_rbuf_u64(b), *ids;
	uint32_t max = pfs_rbuf_u32(b);
	oss_ostq *q;
	size_t n;
	int eof, rc;

	if (pfs_rbuf_done(b))
		return -EBADMSG;
	rc = oss_server_lookup(s, ost, &q);
	if (rc)
		return rc;
	if (max > OSS_LIST_MAX)
		max = OSS_LIST_MAX;
	ids = malloc((max ? max : 1) * sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	rc = oss_store_list(oss_ostq_store(q), after, ids, max, &n, &eof);
	if (!rc) {
		pfs_wbuf_u32(w, (uint32_t)n);
		pfs_wbuf_u8(w, (uint8_t)eof);
		for (size_t i = 0; i < n; i++)
			pfs_wbuf_u64(w, ids[i]);
	}
	free(ids);
	return rc ? rc : pfs_wbuf_error(w);
}

static int cmp_js(const void *a, const void *b)
{
	return strcmp(((const pfs_job_stats *)a)->job, ((const pfs_job_stats *)b)->job);
}

static int ctl_jobstats(oss_server *s, pfs_rbuf *b, pfs_wbuf *w)
{
	pfs_job_stats *all = NULL;
	size_t n = 0, k = 0, count_at;
	int rc = 0;

	if (pfs_rbuf_done(b))
		return -EBADMSG;
	/* Every OST's totals, then one row per job: sort and add up. */
	for (size_t i = 0; i < oss_server_n_osts(s); i++) {
		pfs_job_stats *v, *m;
		size_t nv;

		rc = oss_sched_stats(oss_server_sched(s, i), OSS_SCHED_TOTAL, &v, &nv);
		if (rc)
			goto out;
		if (!nv)
			continue;
		m = realloc(all, (n + nv) * sizeof(*all));
		if (!m) {
			free(v);
			rc = -ENOMEM;
			goto out;
		}
		all = m;
		memcpy(all + n, v, nv * sizeof(*v));
		n += nv;
		free(v);
	}
	if (n > 1)
		qsort(all, n, sizeof(*all), cmp_js);
	for (size_t i = 0; i < n; i++) {
		if (k && !strcmp(all[k - 1].job, all[i].job)) {
			pfs_job_stats *d = &all[k - 1];
			d->read_rpcs += all[i].read_rpcs;
			d->write_rpcs += all[i].write_rpcs;
			d->other_rpcs += all[i].other_rpcs;
			d->read_bytes += all[i].read_bytes;
			d->write_bytes += all[i].write_bytes;
			d->queued += all[i].queued;
			d->wait_us_sum += all[i].wait_us_sum;
		} else {
			all[k++] = all[i];
		}
	}
	/* Stop before the reply outgrows a frame; the count is patched. */
	count_at = w->len;
	pfs_wbuf_u32(w, 0);
	n = 0;
	for (; n < k && w->len < PFS_MAX_PAYLOAD - JOBSTATS_SLACK; n++)
		pfs_job_stats_encode(w, &all[n]);
	rc = pfs_wbuf_error(w);
	if (!rc)
		patch_u32(w, count_at, (uint32_t)n);
out:
	free(all);
	return rc;
}

static int ctl_statfs(oss_server *s, pfs_rbuf *b, pfs_wbuf *w)
{
	uint32_t ost = pfs_rbuf_u32(b);
	uint64_t t, f, a;
	oss_ostq *q;
	int rc;

	if (pfs_rbuf_done(b))
		return -EBADMSG;
	rc = oss_server_lookup(s, ost, &q);
	if (!rc)
		rc = oss_store_statfs(oss_ostq_store(q), &t, &f, &a);
	if (rc)
		return rc;
	pfs_wbuf_u64(w, t);
	pfs_wbuf_u64(w, f);
	pfs_wbuf_u64(w, a);
	return pfs_wbuf_error(w);
}

static int ctl_qos_stats(oss_server *s, pfs_rbuf *b, pfs_wbuf *w)
{
	uint8_t mode = pfs_rbuf_u8(b);

	if (pfs_rbuf_done(b))
		return -EBADMSG;
	if (mode != PFS_QOS_STATS_TOTAL && mode != PFS_QOS_STATS_PERIOD) {
		pfs_log(PFS_LOG_NOTICE, "oss: QOS_STATS: unknown mode %u", mode);
		return -EINVAL;
	}
	return oss_qos_stats(oss_server_qos(s), mode, w);
}

static int ctl_qos_set(oss_server *s, pfs_rbuf *b, pfs_wbuf *w)
{
	pfs_qos_alloc_set set;
	char err[256] = "";
	int rc = pfs_qos_alloc_set_decode(b, &set);

	if (rc)
		return rc;
	if (pfs_rbuf_done(b)) {
		pfs_qos_alloc_set_free(&set);
		return -EBADMSG;
	}
	rc = oss_qos_set(oss_server_qos(s), &set, err, sizeof(err));
	if (rc)
		pfs_log(PFS_LOG_NOTICE, "oss: QOS_SET generation %llu refused: %s",
			(unsigned long long)set.generation, err[0] ? err : pfs_strerror(rc));
	pfs_qos_alloc_set_free(&set);
	return rc;
}

static int ctl_nrs_rule(oss_server *s, pfs_rbuf *b, pfs_wbuf *w)
{
	char err[256] = "";
	int rc = oss_nrs_admin_request(oss_server_admin(s), b->data, b->len, w, err,
				       sizeof(err));

	if (rc && rc != -ENOENT)
		pfs_log(PFS_LOG_NOTICE, "oss: NRS_RULE refused: %s",
			err[0] ? err : pfs_strerror(rc));
	return rc;
}

static const struct {
	uint16_t opcode;
	ctl_fn fn;
} ctl_ops[] = {
	{ PFS_OP_OSS_DESTROY, ctl_destroy },
	{ PFS_OP_OSS_LIST_OBJECTS, ctl_list_objects },
	{ PFS_OP_OSS_JOBSTATS, ctl_jobstats },
	{ PFS_OP_OSS_STATFS, ctl_statfs },
	{ PFS_OP_OSS_QOS_STATS, ctl_qos_stats },
	{ PFS_OP_OSS_QOS_SET, ctl_qos_set },
	{ PFS_OP_OSS_NRS_RULE, ctl_nrs_rule },
};

int oss_ctl_execute(oss_server *s, const pfs_hdr *h, const uint8_t *p, pfs_wbuf *w)
{
	pfs_rbuf b;

	pfs_rbuf_init(&b, p, h->payload_len);
	for (size_t i = 0; i < sizeof(ctl_ops) / sizeof(ctl_ops[0]); i++)
		if (ctl_ops[i].opcode == h->opcode)
			return ctl_ops[i].fn(s, &b, w);
	return -EOPNOTSUPP;
}
