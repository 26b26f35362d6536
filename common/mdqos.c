/* mdqos.c — PADLL operation classes, the opcode -> class map and the
 * MDS_MDQOS_PULL codecs (see mdqos.h). */
#include "common/mdqos.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[PFS_MDQ_NCLASSES] = {
	"none", "open", "close", "getattr", "setattr", "create", "mkdir",
	"unlink", "rename", "readdir", "xattr", "read", "write",
};

const char *pfs_mdq_class_name(unsigned cls)
{
	return cls < PFS_MDQ_NCLASSES ? names[cls] : "?";
}

int pfs_mdq_class_parse(const char *name, unsigned *cls)
{
	for (unsigned i = 0; i < PFS_MDQ_NCLASSES; i++)
		if (name && strcmp(name, names[i]) == 0) {
			*cls = i;
			return 0;
		}
	return -EINVAL;
}

void pfs_mdq_map_default(pfs_mdq_map *m)
{
	static const struct { uint16_t op; uint8_t cls; } d[] = {
		{ PFS_OP_MDS_LOOKUP, PFS_MDQ_GETATTR },
		{ PFS_OP_MDS_GETATTR, PFS_MDQ_GETATTR },
		{ PFS_OP_MDS_ACCESS, PFS_MDQ_GETATTR },
		{ PFS_OP_MDS_READLINK, PFS_MDQ_GETATTR },
		{ PFS_OP_MDS_STATFS, PFS_MDQ_GETATTR },
		{ PFS_OP_MDS_SETATTR, PFS_MDQ_SETATTR },
		{ PFS_OP_MDS_SETSTRIPE, PFS_MDQ_SETATTR },
		{ PFS_OP_MDS_CREATE, PFS_MDQ_CREATE },
		{ PFS_OP_MDS_MKNOD, PFS_MDQ_CREATE },
		{ PFS_OP_MDS_SYMLINK, PFS_MDQ_CREATE },
		{ PFS_OP_MDS_LINK, PFS_MDQ_CREATE },
		{ PFS_OP_MDS_CREATE_BATCH, PFS_MDQ_CREATE },
		{ PFS_OP_MDS_MKDIR, PFS_MDQ_MKDIR },
		{ PFS_OP_MDS_UNLINK, PFS_MDQ_UNLINK },
		{ PFS_OP_MDS_UNLINK_BATCH, PFS_MDQ_UNLINK },
		{ PFS_OP_MDS_RMDIR, PFS_MDQ_UNLINK },
		{ PFS_OP_MDS_RENAME, PFS_MDQ_RENAME },
		{ PFS_OP_MDS_READDIR, PFS_MDQ_READDIR },
		{ PFS_OP_MDS_SETXATTR, PFS_MDQ_XATTR },
		{ PFS_OP_MDS_GETXATTR, PFS_MDQ_XATTR },
		{ PFS_OP_MDS_LISTXATTR, PFS_MDQ_XATTR },
		{ PFS_OP_MDS_REMOVEXATTR, PFS_MDQ_XATTR },
		{ PFS_OP_MDS_OPEN, PFS_MDQ_OPEN },
		{ PFS_OP_MDS_GETLAYOUT, PFS_MDQ_OPEN },
		{ PFS_OP_MDS_SETSIZE, PFS_MDQ_CLOSE },
		{ PFS_OP_OSS_READ, PFS_MDQ_READ },
		{ PFS_OP_OSS_WRITE, PFS_MDQ_WRITE },
		{ PFS_OP_OSS_TRUNCATE, PFS_MDQ_WRITE },
		{ PFS_OP_OSS_PUNCH, PFS_MDQ_WRITE },
	};

	memset(m, 0, sizeof(*m));
	for (size_t i = 0; i < sizeof(d) / sizeof(d[0]); i++)
		m->cls[d[i].op] = d[i].cls;
}

static int op_parse(const char *name, uint16_t *op)
{
	for (unsigned i = 1; i < PFS_MDQ_MAP_OPS; i++)
		if (strcmp(pfs_op_name((uint16_t)i), name) == 0) {
			*op = (uint16_t)i;
			return 0;
		}
	return -EINVAL;
}

int pfs_mdq_map_parse(pfs_mdq_map *m, const char *spec, char *err, size_t errlen)
{
	pfs_mdq_map t = *m;
	char buf[1024], *save = NULL;

	if (!spec || !spec[0])
		return 0;
	if (strlen(spec) >= sizeof(buf)) {
		snprintf(err, errlen, "mdqos_map: too long");
		return -EINVAL;
	}
	strcpy(buf, spec);
	for (char *it = strtok_r(buf, ",", &save); it; it = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(it, '=');
		uint16_t op;
		unsigned cls;

		if (!eq) {
			snprintf(err, errlen, "mdqos_map: '%s' is not OPCODE=class", it);
			return -EINVAL;
		}
		*eq = '\0';
		if (op_parse(it, &op)) {
			snprintf(err, errlen, "mdqos_map: unknown opcode '%s'", it);
			return -EINVAL;
		}
		if (pfs_mdq_class_parse(eq + 1, &cls)) {
			snprintf(err, errlen, "mdqos_map: unknown class '%s' (open close getattr "
				 "setattr create mkdir unlink rename readdir xattr read write none)",
				 eq + 1);
			return -EINVAL;
		}
		t.cls[op] = (uint8_t)cls;
	}
	*m = t;
	return 0;
}

unsigned pfs_mdq_map_class(const pfs_mdq_map *m, uint16_t op)
{
	return op < PFS_MDQ_MAP_OPS ? m->cls[op] : PFS_MDQ_NONE;
}

static void row_job(pfs_rbuf *r, char *job)
{
	pfs_rbuf_cstr(r, job, PFS_JOBID_MAX + 1);
	if (!pfs_rbuf_error(r) && !job[0])
		pfs_rbuf_fail(r);
}

static uint8_t row_cls(pfs_rbuf *r)
{
	uint8_t c = pfs_rbuf_u8(r);

	if (c == PFS_MDQ_NONE || c >= PFS_MDQ_NCLASSES)
		pfs_rbuf_fail(r);
	return c;
}

/* n rows of at least min bytes each must fit what is left. */
static pfs_mdq_row *rows_alloc(pfs_rbuf *r, uint32_t n, size_t min)
{
	pfs_mdq_row *v;

	if (pfs_rbuf_error(r) || n > PFS_MDQ_ROWS_MAX || (size_t)n * min > pfs_rbuf_left(r)) {
		pfs_rbuf_fail(r);
		return NULL;
	}
	v = calloc(n ? n : 1, sizeof(*v));
	if (!v)
		pfs_rbuf_fail(r);
	return v;
}

int pfs_mdq_usage_encode(pfs_wbuf *w, const pfs_mdq_row *rows, uint32_t n)
{
	pfs_wbuf_u32(w, n);
	for (uint32_t i = 0; i < n; i++) {
		pfs_wbuf_str(w, rows[i].job);
		pfs_wbuf_u8(w, rows[i].cls);
		pfs_wbuf_u64(w, (uint64_t)rows[i].value);
	}
	return pfs_wbuf_error(w);
}

int pfs_mdq_usage_decode(pfs_rbuf *r, pfs_mdq_row **rows, uint32_t *n)
{
	uint32_t k = pfs_rbuf_u32(r);
	pfs_mdq_row *v = rows_alloc(r, k, 4 + 1 + 1 + 8);

	*rows = NULL;
	*n = 0;
	if (!v)
		return pfs_rbuf_error(r) == -ENOMEM ? -ENOMEM : -EBADMSG;
	for (uint32_t i = 0; i < k && !pfs_rbuf_error(r); i++) {
		uint64_t c;

		row_job(r, v[i].job);
		v[i].cls = row_cls(r);
		c = pfs_rbuf_u64(r);
		if (c > (1ull << 53))
			pfs_rbuf_fail(r);
		v[i].value = (double)c;
	}
	if (pfs_rbuf_done(r)) {
		free(v);
		return -EBADMSG;
	}
	*rows = v;
	*n = k;
	return 0;
}

int pfs_mdq_rates_encode(pfs_wbuf *w, const pfs_mdq_rates *r)
{
	uint32_t nmap = 0, nc = 0;

	for (unsigned op = 0; op < PFS_MDQ_MAP_OPS; op++)
		nmap += r->map.cls[op] != PFS_MDQ_NONE;
	for (unsigned c = 1; c < PFS_MDQ_NCLASSES; c++)
		nc += r->limited[c] != 0;
	pfs_wbuf_u64(w, r->generation);
	pfs_wbuf_f64(w, r->period_s);
	pfs_wbuf_u32(w, nmap);
	for (unsigned op = 0; op < PFS_MDQ_MAP_OPS; op++)
		if (r->map.cls[op] != PFS_MDQ_NONE) {
			pfs_wbuf_u16(w, (uint16_t)op);
			pfs_wbuf_u8(w, r->map.cls[op]);
		}
	pfs_wbuf_u32(w, nc);
	for (unsigned c = 1; c < PFS_MDQ_NCLASSES; c++)
		if (r->limited[c]) {
			pfs_wbuf_u8(w, (uint8_t)c);
			pfs_wbuf_f64(w, r->default_rate[c]);
		}
	pfs_wbuf_u32(w, r->n);
	for (uint32_t i = 0; i < r->n; i++) {
		pfs_wbuf_str(w, r->rows[i].job);
		pfs_wbuf_u8(w, r->rows[i].cls);
		pfs_wbuf_f64(w, r->rows[i].value);
	}
	return pfs_wbuf_error(w);
}

static double rate_get(pfs_rbuf *b)
{
	double v = pfs_rbuf_f64_finite(b);

	if (!(v >= 0))
		pfs_rbuf_fail(b);
	return v;
}

int pfs_mdq_rates_decode(pfs_rbuf *b, pfs_mdq_rates *r)
{
	uint32_t nmap, nc, n;

	memset(r, 0, sizeof(*r));
	r->generation = pfs_rbuf_u64(b);
	r->period_s = rate_get(b);
	nmap = pfs_rbuf_u32(b);
	if (nmap > PFS_MDQ_MAP_OPS || (size_t)nmap * 3 > pfs_rbuf_left(b))
		pfs_rbuf_fail(b);
	for (uint32_t i = 0; i < nmap && !pfs_rbuf_error(b); i++) {
		uint16_t op = pfs_rbuf_u16(b);
		uint8_t c = row_cls(b);

		if (op >= PFS_MDQ_MAP_OPS)
			pfs_rbuf_fail(b);
		else
			r->map.cls[op] = c;
	}
	nc = pfs_rbuf_u32(b);
	if (nc >= PFS_MDQ_NCLASSES)
		pfs_rbuf_fail(b);
	for (uint32_t i = 0; i < nc && !pfs_rbuf_error(b); i++) {
		uint8_t c = row_cls(b);
		double d = rate_get(b);

		if (pfs_rbuf_error(b) || r->limited[c]) {
			pfs_rbuf_fail(b);
			break;
		}
		r->limited[c] = 1;
		r->default_rate[c] = d;
	}
	n = pfs_rbuf_u32(b);
	r->rows = rows_alloc(b, n, 4 + 1 + 1 + 8);
	for (uint32_t i = 0; r->rows && i < n && !pfs_rbuf_error(b); i++) {
		row_job(b, r->rows[i].job);
		r->rows[i].cls = row_cls(b);
		r->rows[i].value = rate_get(b);
	}
	if (pfs_rbuf_done(b)) {
		pfs_mdq_rates_free(r);
		return -EBADMSG;
	}
	r->n = n;
	return 0;
}

void pfs_mdq_rates_free(pfs_mdq_rates *r)
{
	free(r->rows);
	r->rows = NULL;
	r->n = 0;
}

int pfs_mdq_status_encode(pfs_wbuf *w, const pfs_mdq_status *st)
{
	uint32_t nc = 0;

	for (unsigned c = 1; c < PFS_MDQ_NCLASSES; c++)
		nc += st->max_r[c] > 0;
	pfs_wbuf_str(w, st->algo);
	pfs_wbuf_u32(w, st->interval_ms);
	pfs_wbuf_f64(w, st->epsilon);
	pfs_wbuf_f64(w, st->jobs);
	pfs_wbuf_f64(w, st->weight_sum);
	pfs_wbuf_u64(w, st->generation);
	pfs_wbuf_u64(w, st->held);
	pfs_wbuf_u32(w, nc);
	for (unsigned c = 1; c < PFS_MDQ_NCLASSES; c++)
		if (st->max_r[c] > 0) {
			pfs_wbuf_u8(w, (uint8_t)c);
			pfs_wbuf_f64(w, st->max_r[c]);
		}
	pfs_wbuf_u32(w, st->n);
	for (uint32_t i = 0; i < st->n; i++) {
		const pfs_mdq_jobrow *r = &st->rows[i];

		pfs_wbuf_str(w, r->job);
		pfs_wbuf_u8(w, r->cls);
		pfs_wbuf_f64(w, r->demand);
		pfs_wbuf_f64(w, r->arrived);
		pfs_wbuf_f64(w, r->served);
		pfs_wbuf_f64(w, r->rate);
	}
	return pfs_wbuf_error(w);
}

int pfs_mdq_status_decode(pfs_rbuf *b, pfs_mdq_status *st)
{
	uint32_t nc, n;

	memset(st, 0, sizeof(*st));
	pfs_rbuf_cstr(b, st->algo, sizeof(st->algo));
	st->interval_ms = pfs_rbuf_u32(b);
	st->epsilon = rate_get(b);
	st->jobs = rate_get(b);
	st->weight_sum = rate_get(b);
	st->generation = pfs_rbuf_u64(b);
	st->held = pfs_rbuf_u64(b);
	nc = pfs_rbuf_u32(b);
	if (nc >= PFS_MDQ_NCLASSES)
		pfs_rbuf_fail(b);
	for (uint32_t i = 0; i < nc && !pfs_rbuf_error(b); i++) {
		uint8_t c = row_cls(b);
		double m = rate_get(b);

		if (!pfs_rbuf_error(b) && (m <= 0 || st->max_r[c] > 0))
			pfs_rbuf_fail(b);
		else if (!pfs_rbuf_error(b))
			st->max_r[c] = m;
	}
	n = pfs_rbuf_u32(b);
	if (pfs_rbuf_error(b) || n > PFS_MDQ_ROWS_MAX || (size_t)n * (4 + 2 + 32) > pfs_rbuf_left(b))
		pfs_rbuf_fail(b);
	else if (!(st->rows = calloc(n ? n : 1, sizeof(*st->rows))))
		pfs_rbuf_fail(b);
	for (uint32_t i = 0; st->rows && i < n && !pfs_rbuf_error(b); i++) {
		pfs_mdq_jobrow *r = &st->rows[i];

		row_job(b, r->job);
		r->cls = row_cls(b);
		r->demand = rate_get(b);
		r->arrived = rate_get(b);
		r->served = rate_get(b);
		r->rate = rate_get(b);
	}
	if (pfs_rbuf_done(b)) {
		pfs_mdq_status_free(st);
		return -EBADMSG;
	}
	st->n = n;
	return 0;
}

void pfs_mdq_status_free(pfs_mdq_status *st)
{
	free(st->rows);
	st->rows = NULL;
	st->n = 0;
}
