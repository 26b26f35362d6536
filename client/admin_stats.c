/* admin_stats.c — jobstats: snapshots from the MDS and every OSS, the
 * difference of two, and its tables or JSON (see admin_stats.h).
 *
 * A snapshot is decoded whole into plain arrays; a report is built as a
 * sorted list of rows (job, OST) and (job, opcode), so the output order
 * does not depend on the order the servers list things.  Finding a row's
 * previous value is a linear search of that OSS's previous rows: a few
 * hundred jobs per OSS make that cheap next to the network round trip.
 *
 * PADLL (issue 12): each report also asks the MDS for its metadata QoS
 * status (MDS_MDQOS_SHOW, the data of `pfsadmin qos md show`) and joins
 * it client-side: per (job, class) the arrival and served rates of the
 * last control period, the rate the job is held to and the class's Max_R.
 * No wire change; an MDS that does not serve it just leaves the part out. */
#include "client/admin_stats.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client/admin_fmt.h"
#include "client/admin_i.h"
#include "client/admin_oss.h"
#include "common/buf.h"
#include "common/mdqos.h"
#include "common/qosmsg.h"

/* Smallest wire sizes: an MDS job entry (1-byte id, k), one opcode count,
 * a qos_ost_info, a qos_stat (empty job id). */
#define MDS_JOB_MIN_WIRE (4 + 1 + 4)
#define MDS_OP_MIN_WIRE (2 + 8)
#define OST_INFO_MIN_WIRE (4 + 8 + 8 + 4 + 8 + 4 + 8 + 1)
#define STAT_MIN_WIRE (4 + 4 + 15 * 8 + 4)

typedef struct mds_op {
	uint16_t op;
	uint64_t count;
} mds_op;

typedef struct mds_job {
	char job[PFS_JOBID_MAX + 1];
	uint32_t k;
	mds_op *ops;
} mds_job;

typedef struct oss_snap {
	int rc;               /* 0, or why this OSS has no data */
	uint64_t snapshot_ns;
	double period_s;      /* since the OSS started */
	uint32_t n;
	pfs_qos_stat *st;
} oss_snap;

typedef struct snapshot {
	int mds_rc;           /* 0, or why the MDS's counters are missing */
	uint64_t mds_ns;
	uint32_t n_jobs;
	mds_job *jobs;
	uint32_t n_oss;
	oss_snap *oss;        /* parallel to the OSS set */
} snapshot;

/* One (job, OST) row of a report: the window's increase of each counter. */
typedef struct io_row {
	const char *job, *oss;
	uint32_t ost;
	uint64_t read_rpcs, write_rpcs, other_rpcs, read_bytes, write_bytes, busy_rpcs;
	uint64_t wait_us, throttled_us, queued_bytes;
	uint32_t queued;
	double tbf_rate;      /* < 0: no rule */
	double record;        /* AdapTBF record r_x in tokens (+ lent, - borrowed) */
	int64_t tokens;       /* AdapTBF α_x this period; -1: not under AdapTBF */
	double window_s;      /* <= 0: unknown */
} io_row;

typedef struct op_row {
	const char *job;
	uint16_t op;
	uint64_t count;
	double per_s;         /* < 0: unknown */
} op_row;

static void mds_free(snapshot *s)
{
	for (uint32_t i = 0; i < s->n_jobs; i++)
		free(s->jobs[i].ops);
	free(s->jobs);
	s->jobs = NULL;
	s->n_jobs = 0;
}

static void snap_free(snapshot *s)
{
	mds_free(s);
	for (uint32_t i = 0; i < s->n_oss; i++)
		free(s->oss[i].st);
	free(s->oss);
	memset(s, 0, sizeof(*s));
}

static uint64_t d64(uint64_t cur, uint64_t prev)
{
	/* A counter that went backwards was reset: all of it is new. */
	return cur >= prev ? cur - prev : cur;
}

static int decode_mds(const pfs_rpc_reply *rep, snapshot *s)
{
	pfs_rbuf r;
	int rc;

	pfs_rbuf_init(&r, rep->data, rep->len);
	s->mds_ns = pfs_rbuf_u64(&r);
	s->n_jobs = cli__rcount(&r, MDS_JOB_MIN_WIRE);
	if ((rc = pfs_rbuf_error(&r)))
		goto bad;
	s->jobs = calloc(s->n_jobs ? s->n_jobs : 1, sizeof(*s->jobs));
	if (!s->jobs) {
		s->n_jobs = 0;
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < s->n_jobs; i++) {
		mds_job *j = &s->jobs[i];

		pfs_rbuf_cstr(&r, j->job, sizeof(j->job));
		j->k = cli__rcount(&r, MDS_OP_MIN_WIRE);
		if (pfs_rbuf_error(&r) || !j->job[0])
			goto bad;
		j->ops = calloc(j->k ? j->k : 1, sizeof(*j->ops));
		if (!j->ops)
			return -ENOMEM;
		for (uint32_t k = 0; k < j->k; k++) {
			j->ops[k].op = pfs_rbuf_u16(&r);
			j->ops[k].count = pfs_rbuf_u64(&r);
		}
	}
	if (pfs_rbuf_done(&r) == 0)
		return 0;
bad:
	return -EBADMSG;
}

static int decode_oss(const pfs_rpc_reply *rep, oss_snap *o)
{
	pfs_qos_ost_info info;
	pfs_rbuf r;
	uint32_t n_osts;

	pfs_rbuf_init(&r, rep->data, rep->len);
	o->snapshot_ns = pfs_rbuf_u64(&r);
	o->period_s = pfs_rbuf_f64_finite(&r);
	n_osts = cli__rcount(&r, OST_INFO_MIN_WIRE);
	for (uint32_t i = 0; i < n_osts && !pfs_rbuf_error(&r); i++)
		if (pfs_qos_ost_info_decode(&r, &info))
			pfs_rbuf_fail(&r);
	o->n = cli__rcount(&r, STAT_MIN_WIRE);
	if (pfs_rbuf_error(&r) || o->period_s < 0) {
		o->n = 0;
		return -EBADMSG;
	}
	o->st = calloc(o->n ? o->n : 1, sizeof(*o->st));
	if (!o->st) {
		o->n = 0;
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < o->n && !pfs_rbuf_error(&r); i++)
		if (pfs_qos_stat_decode(&r, &o->st[i]))
			pfs_rbuf_fail(&r);
	if (pfs_rbuf_done(&r) == 0)
		return 0;
	free(o->st);
	o->st = NULL;
	o->n = 0;
	return -EBADMSG;
}

/* Take a snapshot: the MDS's counters, then every OSS's at once.  A server
 * that fails is recorded as such; only when none answered is it an error
 * (the MDS's, which also answered the OST list a moment before). */
static int take(cli_admin *a, cli_oss_set *set, const char *job, snapshot *s)
{
	pfs_rpc_reply rep = { 0 };
	pfs_wbuf w;
	char mds[300], doing[80];
	uint8_t mode = PFS_QOS_STATS_TOTAL;
	int rc, answered;

	memset(s, 0, sizeof(*s));
	pfs_wbuf_init(&w);
	pfs_wbuf_str(&w, job ? job : "");
	rc = cli__call(a, PFS_OP_MDS_JOBSTATS, &w, PFS_RPC_IDEMPOTENT, &rep);
	pfs_wbuf_free(&w);
	if (rc == 0)
		rc = decode_mds(&rep, s);
	pfs_rpc_reply_free(&rep);
	if (rc) {
		mds_free(s);
		s->mds_rc = rc;
	}
	s->oss = calloc(set->n ? set->n : 1, sizeof(*s->oss));
	if (!s->oss) {
		cli__what(a, "jobstats");
		snap_free(s);
		return -ENOMEM;
	}
	s->n_oss = set->n;
	cli_oss_call(a, set, -1, PFS_OP_OSS_QOS_STATS, PFS_RPC_IDEMPOTENT, &mode, 1);
	answered = s->mds_rc == 0;
	for (uint32_t i = 0; i < set->n; i++) {
		s->oss[i].rc = set->v[i].rc;
		if (s->oss[i].rc == 0)
			s->oss[i].rc = decode_oss(&set->v[i].rep, &s->oss[i]);
		pfs_rpc_reply_free(&set->v[i].rep);
		answered |= s->oss[i].rc == 0;
	}
	if (answered)
		return 0;
	snprintf(doing, sizeof(doing), "jobstats%s%s (and no OSS answered)",
		 job ? " --job " : "", job ? job : "");
	cli__fail_rpc(a, s->mds_rc, cli__mds_name(a, mds, sizeof(mds)), doing);
	rc = s->mds_rc;
	snap_free(s);
	return rc;
}

/* Seconds between two MDS snapshots; 0 when either is missing. */
static double mds_window(const snapshot *prev, const snapshot *cur)
{
	if (!prev || prev->mds_rc || cur->mds_rc || cur->mds_ns <= prev->mds_ns)
		return 0;
	return (double)(cur->mds_ns - prev->mds_ns) / 1e9;
}

/* When a report is for: the MDS's snapshot, else the latest OSS's. */
static uint64_t report_ns(const snapshot *s)
{
	uint64_t t = s->mds_rc ? 0 : s->mds_ns;

	for (uint32_t i = 0; s->mds_rc && i < s->n_oss; i++)
		if (s->oss[i].rc == 0 && s->oss[i].snapshot_ns > t)
			t = s->oss[i].snapshot_ns;
	return t;
}

/* Seconds a report covers for OSS i; prev NULL = since start. */
static double oss_window(const snapshot *prev, const snapshot *cur, uint32_t i, int *delta)
{
	const oss_snap *c = &cur->oss[i], *p = prev ? &prev->oss[i] : NULL;
	double elapsed;

	*delta = 0;
	if (!p || p->rc || p->snapshot_ns == 0 || c->snapshot_ns <= p->snapshot_ns)
		return c->period_s;
	elapsed = (double)(c->snapshot_ns - p->snapshot_ns) / 1e9;
	/* Started during the interval: its totals are all this interval had. */
	if (c->period_s + 1e-3 < elapsed)
		return c->period_s;
	*delta = 1;
	return elapsed;
}

static const pfs_qos_stat *find_stat(const oss_snap *o, const char *job, uint32_t ost)
{
	for (uint32_t i = 0; i < o->n; i++)
		if (o->st[i].ost == ost && strcmp(o->st[i].job, job) == 0)
			return &o->st[i];
	return NULL;
}

static int cmp_io(const void *x, const void *y)
{
	const io_row *a = x, *b = y;
	int c = strcmp(a->job, b->job);

	return c ? c : (a->ost > b->ost) - (a->ost < b->ost);
}

static int cmp_op(const void *x, const void *y)
{
	const op_row *a = x, *b = y;
	int c = strcmp(a->job, b->job);

	return c ? c : (a->op > b->op) - (a->op < b->op);
}

/* The (job, OST) rows of a report; *rows malloc'd. */
static int io_rows(const cli_oss_set *set, const snapshot *prev, const snapshot *cur,
		   const char *job, io_row **rows, size_t *n)
{
	size_t total = 0, k = 0;
	io_row *v;

	for (uint32_t i = 0; i < cur->n_oss; i++)
		total += cur->oss[i].rc ? 0 : cur->oss[i].n;
	v = calloc(total ? total : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (uint32_t i = 0; i < cur->n_oss; i++) {
		const oss_snap *c = &cur->oss[i];
		int delta;
		double win;

		if (c->rc)
			continue;
		win = oss_window(prev, cur, i, &delta);
		for (uint32_t r = 0; r < c->n; r++) {
			const pfs_qos_stat *s = &c->st[r];
			const pfs_qos_stat *p =
				delta ? find_stat(&prev->oss[i], s->job, s->ost) : NULL;
			static const pfs_qos_stat zero;
			io_row *o = &v[k];

			if (job && strcmp(job, s->job) != 0)
				continue;
			if (!p)
				p = &zero;
			o->job = s->job;
			o->oss = set->v[i].name;
			o->ost = s->ost;
			o->read_rpcs = d64(s->read_rpcs, p->read_rpcs);
			o->write_rpcs = d64(s->write_rpcs, p->write_rpcs);
			o->other_rpcs = d64(s->other_rpcs, p->other_rpcs);
			o->read_bytes = d64(s->read_bytes, p->read_bytes);
			o->write_bytes = d64(s->write_bytes, p->write_bytes);
			o->busy_rpcs = d64(s->busy_rpcs, p->busy_rpcs);
			o->wait_us = d64(s->wait_us, p->wait_us);
			o->throttled_us = d64(s->throttled_us, p->throttled_us);
			o->queued = s->queued;
			o->queued_bytes = s->queued_bytes;
			o->tbf_rate = s->rate;
			o->record = s->record;
			o->tokens = s->tokens;
			o->window_s = win;
			k++;
		}
	}
	qsort(v, k, sizeof(*v), cmp_io);
	*rows = v;
	*n = k;
	return 0;
}

static const mds_job *find_job(const snapshot *s, const char *job)
{
	for (uint32_t i = 0; i < s->n_jobs; i++)
		if (strcmp(s->jobs[i].job, job) == 0)
			return &s->jobs[i];
	return NULL;
}

/* The (job, opcode) rows; rates only between two MDS snapshots. */
static int op_rows(const snapshot *prev, const snapshot *cur, op_row **rows, size_t *n)
{
	double win = mds_window(prev, cur);
	size_t total = 0, k = 0;
	op_row *v;

	for (uint32_t i = 0; i < cur->n_jobs; i++)
		total += cur->jobs[i].k;
	v = calloc(total ? total : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (uint32_t i = 0; i < cur->n_jobs; i++) {
		const mds_job *j = &cur->jobs[i], *pj = prev ? find_job(prev, j->job) : NULL;

		for (uint32_t o = 0; o < j->k; o++) {
			uint64_t before = 0;
			int reset = 0;

			for (uint32_t q = 0; pj && q < pj->k; q++)
				if (pj->ops[q].op == j->ops[o].op)
					before = pj->ops[q].count;
			reset = before > j->ops[o].count;
			v[k].job = j->job;
			v[k].op = j->ops[o].op;
			v[k].count = win > 0 ? d64(j->ops[o].count, before) : j->ops[o].count;
			v[k].per_s = win > 0 && !reset ? (double)v[k].count / win : -1;
			k++;
		}
	}
	qsort(v, k, sizeof(*v), cmp_op);
	*rows = v;
	*n = k;
	return 0;
}

static double rate_of(uint64_t bytes, double win)
{
	return win > 0 ? (double)bytes / win : -1;
}

static uint64_t rpcs_of(const io_row *r)
{
	return r->read_rpcs + r->write_rpcs + r->other_rpcs;
}

static json_t *io_json(const io_row *r)
{
	uint64_t rpcs = rpcs_of(r);
	json_t *o = json_pack("{s:I,s:s,s:I,s:I,s:I,s:I,s:I,s:o,s:o,s:I,s:I,s:o,s:I,s:I,s:I,"
			      "s:o,s:o,s:o,s:o}",
			      "ost", (json_int_t)r->ost, "oss", r->oss,
			      "read_rpcs", cli__ji(r->read_rpcs),
			      "write_rpcs", cli__ji(r->write_rpcs),
			      "other_rpcs", cli__ji(r->other_rpcs),
			      "read_bytes", cli__ji(r->read_bytes),
			      "write_bytes", cli__ji(r->write_bytes),
			      "read_bytes_per_s", cli__jrate(rate_of(r->read_bytes, r->window_s)),
			      "write_bytes_per_s", cli__jrate(rate_of(r->write_bytes, r->window_s)),
			      "busy_rpcs", cli__ji(r->busy_rpcs), "wait_us", cli__ji(r->wait_us),
			      "avg_wait_us", rpcs ? json_real((double)r->wait_us / (double)rpcs) :
			      json_null(),
			      "throttled_us", cli__ji(r->throttled_us),
			      "queued", (json_int_t)r->queued,
			      "queued_bytes", cli__ji(r->queued_bytes),
			      "tbf_rate_bytes_per_s", cli__jrate(r->tbf_rate),
			      "adaptbf_tokens", r->tokens >= 0 ? json_integer(r->tokens) :
			      json_null(),
			      "adaptbf_record_tokens", r->tokens >= 0 || r->record != 0 ?
			      json_real(r->record) : json_null(),
			      "window_s", r->window_s > 0 ? json_real(r->window_s) : json_null());
	return o;
}

static json_t *op_json(const op_row *r)
{
	return json_pack("{s:s,s:I,s:I,s:o}", "op", pfs_op_name(r->op), "opcode", (json_int_t)r->op,
			 "count", cli__ji(r->count),
			 "per_s", r->per_s >= 0 ? json_real(r->per_s) : json_null());
}

/* A server's status as JSON: ok with its snapshot time and the seconds the
 * report covers (null: unknown), or its error. */
static json_t *server_json(const char *key, const char *name, const char *addr, int rc,
			   uint64_t snapshot_ns, double window)
{
	json_t *e = name ? json_pack("{s:s,s:s,s:s}", key, name, "address", addr,
				     "status", cli_oss_outcome(rc)) :
		json_pack("{s:s,s:s}", "address", addr, "status", cli_oss_outcome(rc));
	int bad;

	if (!e)
		return NULL;
	if (rc)
		bad = json_object_set_new(e, "errno", json_integer(rc)) ||
		      json_object_set_new(e, "error", json_string(pfs_strerror(rc)));
	else
		bad = json_object_set_new(e, "snapshot_ns", json_integer(cli__ji(snapshot_ns))) ||
		      json_object_set_new(e, "window_s", window > 0 ? json_real(window) :
					  json_null());
	if (bad) {
		json_decref(e);
		return NULL;
	}
	return e;
}

/* padll (owned; NULL = the MDS gave no PADLL status) becomes "padll". */
static int report_json(cli_admin *a, const cli_oss_set *set, const snapshot *prev,
		       const snapshot *cur, const io_row *io, size_t nio, const op_row *ops,
		       size_t nops, json_t *padll)
{
	json_t *oss = json_array(), *jobs = json_array(), *mds;
	double mwin = mds_window(prev, cur);
	char addr[300];
	size_t i = 0, k = 0;

	snprintf(addr, sizeof(addr), "%s:%u", pfs_rpc_pool_host(a->pool),
		 pfs_rpc_pool_port(a->pool));
	mds = server_json(NULL, NULL, addr, cur->mds_rc, cur->mds_ns, mwin);
	for (uint32_t s = 0; s < cur->n_oss; s++) {
		const oss_snap *c = &cur->oss[s];
		int delta;

		cli__jpush(&oss, server_json("oss", set->v[s].name, set->v[s].addr, c->rc,
					     c->snapshot_ns,
					     c->rc ? 0 : oss_window(prev, cur, s, &delta)));
	}
	/* Merge the two sorted row lists by job name. */
	while (jobs && (i < nio || k < nops)) {
		const char *name = i < nio && (k >= nops || strcmp(io[i].job, ops[k].job) <= 0) ?
			io[i].job : ops[k].job;
		json_t *osts = json_array(), *mops = json_array();

		for (; i < nio && strcmp(io[i].job, name) == 0; i++)
			cli__jpush(&osts, io_json(&io[i]));
		for (; k < nops && strcmp(ops[k].job, name) == 0; k++)
			cli__jpush(&mops, op_json(&ops[k]));
		cli__jpush(&jobs, osts && mops ? json_pack("{s:s,s:o,s:o}", "job", name,
							   "osts", osts, "mds_ops", mops) : NULL);
		if (!osts || !mops) {
			json_decref(osts);
			json_decref(mops);
		}
	}
	if (!oss || !jobs || !mds) {
		json_decref(oss);
		json_decref(jobs);
		json_decref(mds);
		json_decref(padll);
		return cli__emit(a, NULL);
	}
	return cli__emit(a, json_pack("{s:I,s:s,s:o,s:o,s:o,s:o,s:o}",
				      "snapshot_ns", cli__ji(report_ns(cur)),
				      "window", prev ? "interval" : "since_start",
				      "mds_window_s", mwin > 0 ? json_real(mwin) : json_null(),
				      "mds", mds, "oss", oss, "jobs", jobs,
				      "padll", padll ? padll : json_null()));
}

/* One row of the servers table. */
static int server_row(cli_table *t, const char *name, const char *addr, int rc,
		      uint64_t snapshot_ns, double window)
{
	char snap[40], win[24], st[120];
	const char *cells[5] = { name, addr, "-", "-", "ok" };

	if (rc == 0) {
		cells[2] = cli_fmt_time((int64_t)snapshot_ns, snap, sizeof(snap));
		if (window > 0) {
			snprintf(win, sizeof(win), "%.1fs", window);
			cells[3] = win;
		}
	} else {
		snprintf(st, sizeof(st), "%s: %s", cli_oss_outcome(rc), pfs_strerror(rc));
		cells[4] = st;
	}
	return cli_table_add(t, cells);
}

static int report_tables(cli_admin *a, const cli_oss_set *set, const snapshot *prev,
			 const snapshot *cur, const io_row *io, size_t nio, const op_row *ops,
			 size_t nops)
{
	static const cli_col srv_cols[] = {
		{ "SERVER", 0 }, { "ADDRESS", 0 }, { "SNAPSHOT", 0 }, { "WINDOW", 1 },
		{ "STATUS", 0 },
	};
	static const cli_col io_cols[] = {
		{ "JOB", 0 }, { "OST", 1 }, { "READ_RPCS", 1 }, { "WRITE_RPCS", 1 },
		{ "OTHER_RPCS", 1 }, { "READ", 1 }, { "WRITE", 1 }, { "READ_RATE", 1 },
		{ "WRITE_RATE", 1 }, { "AVG_WAIT", 1 }, { "THROTTLED", 1 }, { "QUEUED", 1 },
		{ "TBF_RATE", 1 }, { "RECORD", 1 },
	};
	static const cli_col op_cols[] = {
		{ "JOB", 0 }, { "OPERATION", 0 }, { "COUNT", 1 }, { "RATE", 1 },
	};
	cli_table *ts = NULL, *ti = NULL, *to = NULL;
	double mwin = mds_window(prev, cur);
	char when[40], addr[300];
	int rc;

	snprintf(addr, sizeof(addr), "%s:%u", pfs_rpc_pool_host(a->pool),
		 pfs_rpc_pool_port(a->pool));
	rc = cli_table_create(srv_cols, 5, &ts);
	if (rc == 0)
		rc = server_row(ts, "MDS", addr, cur->mds_rc, cur->mds_ns, mwin);
	for (uint32_t s = 0; rc == 0 && s < cur->n_oss; s++) {
		const oss_snap *c = &cur->oss[s];
		int delta;

		rc = server_row(ts, set->v[s].name, set->v[s].addr, c->rc, c->snapshot_ns,
				c->rc ? 0 : oss_window(prev, cur, s, &delta));
	}
	if (rc == 0)
		rc = cli_table_create(io_cols, 14, &ti);
	for (size_t i = 0; rc == 0 && i < nio; i++) {
		const io_row *r = &io[i];
		char ost[16], rr[24], wr[24], orr[24], rb[16], wb[16], rra[24], wra[24], wait[24],
			thr[24], q[16], tbf[24], rec[24];
		const char *cells[14] = { r->job[0] ? r->job : "(none)", ost, rr, wr, orr, rb, wb,
					  rra, wra, wait, thr, q, tbf, rec };
		uint64_t rpcs = rpcs_of(r);

		snprintf(ost, sizeof(ost), "%u", r->ost);
		snprintf(rr, sizeof(rr), "%" PRIu64, r->read_rpcs);
		snprintf(wr, sizeof(wr), "%" PRIu64, r->write_rpcs);
		snprintf(orr, sizeof(orr), "%" PRIu64, r->other_rpcs);
		cli_fmt_size(r->read_bytes, 1, rb, sizeof(rb));
		cli_fmt_size(r->write_bytes, 1, wb, sizeof(wb));
		if (r->window_s > 0) {
			cli_fmt_rate(rate_of(r->read_bytes, r->window_s), rra, sizeof(rra));
			cli_fmt_rate(rate_of(r->write_bytes, r->window_s), wra, sizeof(wra));
		} else {
			snprintf(rra, sizeof(rra), "-");
			snprintf(wra, sizeof(wra), "-");
		}
		if (rpcs)
			cli_fmt_usec((double)r->wait_us / (double)rpcs, wait, sizeof(wait));
		else
			snprintf(wait, sizeof(wait), "-");
		cli_fmt_usec((double)r->throttled_us, thr, sizeof(thr));
		snprintf(q, sizeof(q), "%u", r->queued);
		if (r->tbf_rate < 0)
			snprintf(tbf, sizeof(tbf), "-");
		else
			cli_fmt_rate(r->tbf_rate, tbf, sizeof(tbf));
		if (r->tokens >= 0 || r->record != 0) /* AdapTBF: tokens lent (+) / borrowed (-) */
			snprintf(rec, sizeof(rec), "%+.0f", r->record);
		else
			snprintf(rec, sizeof(rec), "-");
		rc = cli_table_add(ti, cells);
	}
	if (rc == 0)
		rc = cli_table_create(op_cols, 4, &to);
	for (size_t i = 0; rc == 0 && i < nops; i++) {
		char cnt[24], per[24];
		const char *cells[4] = { ops[i].job, pfs_op_name(ops[i].op), cnt, per };

		snprintf(cnt, sizeof(cnt), "%" PRIu64, ops[i].count);
		if (ops[i].per_s >= 0)
			snprintf(per, sizeof(per), "%.1f/s", ops[i].per_s);
		else
			snprintf(per, sizeof(per), "-");
		rc = cli_table_add(to, cells);
	}
	if (rc) {
		cli__what(a, "jobstats");
	} else {
		cli_fmt_time((int64_t)report_ns(cur), when, sizeof(when));
		if (mwin > 0)
			fprintf(a->out, "jobstats at %s, over %.1fs\n\n", when, mwin);
		else if (prev)
			fprintf(a->out, "jobstats at %s, over the last interval\n\n", when);
		else
			fprintf(a->out, "jobstats at %s, since each server started\n\n", when);
		cli_table_print(ts, a->out);
		fputc('\n', a->out);
		if (nio)
			cli_table_print(ti, a->out);
		else
			fputs("no OST I/O\n", a->out);
		fputc('\n', a->out);
		if (nops)
			cli_table_print(to, a->out);
		else if (cur->mds_rc)
			fprintf(a->out, "no MDS operations (%s: %s)\n",
				cli_oss_outcome(cur->mds_rc), pfs_strerror(cur->mds_rc));
		else
			fputs("no MDS operations\n", a->out);
	}
	cli_table_free(ts);
	cli_table_free(ti);
	cli_table_free(to);
	return rc;
}

/* PADLL status from the MDS; 0 with st filled (free it), or -errno. */
static int padll_fetch(cli_admin *a, pfs_mdq_status *st)
{
	pfs_rpc_reply rep = { 0 };
	pfs_wbuf w;
	pfs_rbuf r;
	int rc;

	pfs_wbuf_init(&w);
	rc = cli__call(a, PFS_OP_MDS_MDQOS_SHOW, &w, PFS_RPC_IDEMPOTENT, &rep);
	pfs_wbuf_free(&w);
	if (!rc) {
		pfs_rbuf_init(&r, rep.data, rep.len);
		rc = pfs_mdq_status_decode(&r, st);
	}
	pfs_rpc_reply_free(&rep);
	return rc;
}

/* Does status row i belong in a report for job (NULL or "" = all)? */
static int padll_wanted(const pfs_mdq_status *md, uint32_t i, const char *job)
{
	return !job || !job[0] || strcmp(md->rows[i].job, job) == 0;
}

static json_t *padll_json(const pfs_mdq_status *md, const char *job)
{
	json_t *rows = json_array();

	for (uint32_t i = 0; rows && i < md->n; i++) {
		const pfs_mdq_jobrow *r = &md->rows[i];
		double mr = r->cls < PFS_MDQ_NCLASSES ? md->max_r[r->cls] : 0;

		if (!padll_wanted(md, i, job))
			continue;
		cli__jpush(&rows, json_pack("{s:s,s:s,s:o,s:f,s:f,s:o,s:o}", "job", r->job,
					    "class", pfs_mdq_class_name(r->cls),
					    "demand", r->demand > 0 ? json_real(r->demand) : json_null(),
					    "arrived_per_s", r->arrived, "served_per_s", r->served,
					    "rate", r->rate >= 0 && mr > 0 ? json_real(r->rate) : json_null(),
					    "max_r", mr > 0 ? json_real(mr) : json_null()));
	}
	if (!rows)
		return NULL;
	return json_pack("{s:s,s:o}", "algo", md->algo, "rates", rows);
}

static int padll_table(cli_admin *a, const pfs_mdq_status *md, const char *job)
{
	static const cli_col cols[] = {
		{ "JOB", 0 }, { "CLASS", 0 }, { "ARRIVED", 1 }, { "SERVED", 1 },
		{ "LIMIT", 1 }, { "MAX_R", 1 },
	};
	cli_table *t = NULL;
	unsigned shown = 0;
	int rc = cli_table_create(cols, 6, &t);

	for (uint32_t i = 0; rc == 0 && i < md->n; i++) {
		const pfs_mdq_jobrow *r = &md->rows[i];
		double mr = r->cls < PFS_MDQ_NCLASSES ? md->max_r[r->cls] : 0;
		char arr[24], srv[24], lim[24], max[24];
		const char *cells[6] = { r->job, pfs_mdq_class_name(r->cls), arr, srv, lim, max };

		if (!padll_wanted(md, i, job))
			continue;
		snprintf(arr, sizeof(arr), "%.1f/s", r->arrived);
		snprintf(srv, sizeof(srv), "%.1f/s", r->served);
		if (mr > 0 && r->rate >= 0)
			snprintf(lim, sizeof(lim), "%.1f/s", r->rate);
		else
			snprintf(lim, sizeof(lim), "-");
		if (mr > 0)
			snprintf(max, sizeof(max), "%.1f/s", mr);
		else
			snprintf(max, sizeof(max), "-");
		rc = cli_table_add(t, cells);
		shown++;
	}
	if (rc == 0) {
		fprintf(a->out, "\nPADLL (%s): per-job rates of the last control period\n",
			md->algo);
		if (shown)
			cli_table_print(t, a->out);
		else
			fputs("no PADLL rows\n", a->out);
	}
	cli_table_free(t);
	return rc;
}

static int report(cli_admin *a, const cli_admin_args *args, const cli_oss_set *set,
		  const snapshot *prev, const snapshot *cur)
{
	io_row *io = NULL;
	op_row *ops = NULL;
	size_t nio = 0, nops = 0;
	pfs_mdq_status md;
	int have_md = padll_fetch(a, &md) == 0;
	int rc = io_rows(set, prev, cur, args->job, &io, &nio);

	if (rc == 0)
		rc = op_rows(prev, cur, &ops, &nops);
	if (rc)
		cli__what(a, "jobstats");
	else if (a->json)
		rc = report_json(a, set, prev, cur, io, nio, ops, nops,
				 have_md ? padll_json(&md, args->job) : NULL);
	else
		rc = report_tables(a, set, prev, cur, io, nio, ops, nops);
	if (rc == 0 && !a->json && have_md)
		rc = padll_table(a, &md, args->job);
	if (have_md)
		pfs_mdq_status_free(&md);
	free(io);
	free(ops);
	return rc;
}

static void sleep_s(double s)
{
	struct timespec ts = { .tv_sec = (time_t)s,
			       .tv_nsec = (long)((s - (double)(time_t)s) * 1e9) };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

int cli_admin_jobstats(cli_admin *a, const cli_admin_args *args)
{
	cli_oss_set set = { 0 };
	snapshot prev = { 0 }, cur = { 0 };
	int rc = cli_oss_set_load(a, &set);

	if (rc)
		return rc;
	rc = take(a, &set, args->job, &cur);
	if (rc == 0 && args->watch_s <= 0)
		rc = report(a, args, &set, NULL, &cur);
	if (rc || args->watch_s <= 0)
		goto out;
	a->json_lines = a->json;
	for (unsigned n = 0; args->watch_count == 0 || n < args->watch_count; n++) {
		sleep_s(args->watch_s);
		snap_free(&prev);
		prev = cur;
		memset(&cur, 0, sizeof(cur));
		rc = take(a, &set, args->job, &cur);
		if (rc == 0)
			rc = report(a, args, &set, &prev, &cur);
		if (rc)
			break;
		if (!a->json && n + 1 != args->watch_count)
			fputc('\n', a->out);
		fflush(a->out);
	}
out:
	snap_free(&prev);
	snap_free(&cur);
	cli_oss_set_free(&set);
	return rc;
}
