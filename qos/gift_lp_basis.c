/* gift_lp_basis.c — GIFT's LP basis as bytes (qos_gift_lp_ctx_save and
 * qos_gift_lp_ctx_load, gift_lp.h), so GIFT's saved state carries it and
 * the first decision after an MDS restart starts warm.
 *
 * Every job column of the context is saved with its OST set, its slot
 * and its status, and so is every column still basic after its job left
 * or its throttle column was replaced ("dead": loaded, then released
 * again, so it leaves the basis as it would have).  Loading puts each
 * column back in its own slot (empty slots in between are filled and
 * released), so the restored solver perturbs its costs exactly as the
 * saved one did (gift_dual.c hashes the slot) and the next solve follows
 * the path the saved context would have taken.  Little-endian:
 *   u32 magic "QGL2", u32 n_osts, u8 waste, u32 n_rec, u32 n_slots,
 *   n_rec x { u8 st_e, u8 st_d (LPB_NONE: no such column), u8 dcode,
 *             u8 flags (LPB_DEAD_E, LPB_DEAD_D), u32 slot_e, u32 slot_d,
 *             u32 n, n x u32 OST },
 *   (n_osts + waste) x u8 slack status
 * (statuses: 0 lower bound, 1 upper, 2 basic). */
#include "qos/gift_lp_i.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define LPB_MAGIC 0x324c4751u /* "QGL2" */
#define LPB_HEAD (4 + 4 + 1 + 4 + 4)
#define LPB_REC 16            /* a record without its OSTs */
#define LPB_NONE 3u
#define LPB_DEAD_E 1u
#define LPB_DEAD_D 2u

static uint8_t *lpb_u32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		*p++ = (uint8_t)(v >> (8 * i));
	return p;
}

static uint32_t lpb_r32(const uint8_t *p)
{
	uint32_t v = 0;
	for (int i = 0; i < 4; i++)
		v |= (uint32_t)p[i] << (8 * i);
	return v;
}

/* The OST rows of slot's column (those below n_osts: entries are kept in
 * the order they were added, OSTs first); *first its first value. */
static size_t lpb_set(const qos_gift_lp_ctx *ctx, uint32_t slot,
		      const uint32_t **rows, double *first)
{
	const double *vals;
	size_t n = qos_gd_col_get(ctx->gd, slot, rows, &vals), k = 0;

	while (k < n && (*rows)[k] < ctx->n_osts)
		k++;
	*first = k ? vals[0] : 0.0;
	return k;
}

static uint8_t *lpb_rec(uint8_t *p, unsigned st_e, unsigned st_d, unsigned dcode,
			unsigned flags, uint32_t se, uint32_t sd,
			const uint32_t *rows, size_t n)
{
	*p++ = (uint8_t)st_e;
	*p++ = (uint8_t)st_d;
	*p++ = (uint8_t)dcode;
	*p++ = (uint8_t)flags;
	p = lpb_u32(p, se);
	p = lpb_u32(p, sd);
	p = lpb_u32(p, (uint32_t)n);
	for (size_t k = 0; k < n; k++)
		p = lpb_u32(p, rows[k]);
	return p;
}

int qos_gift_lp_ctx_save(const qos_gift_lp_ctx *ctx, uint8_t **buf, size_t *len)
{
	const uint32_t *rows;
	double first;
	size_t m, ns, cap, n_rec = 0;
	uint8_t *ref, *b, *p;

	*buf = NULL;
	*len = 0;
	if (!ctx->gd || !qos_gd_has_basis(ctx->gd))
		return 0;
	m = qos_gd_rows(ctx->gd);
	ns = qos_gd_slots(ctx->gd);
	ref = calloc(ns ? ns : 1, 1);
	if (!ref)
		return -ENOMEM;
	cap = LPB_HEAD + m;
	for (size_t k = 0; k < ctx->n_ent; k++) {
		const lp_ent *x = &ctx->ent[k];
		if (x->e == NO_SLOT)
			continue;
		ref[x->e] = 1;
		if (x->d != NO_SLOT)
			ref[x->d] = 1;
		cap += LPB_REC + 4 * lpb_set(ctx, x->e, &rows, &first);
	}
	for (size_t q = 0; q < m; q++) {
		uint32_t v = qos_gd_basic_var(ctx->gd, q);
		if (!(v & QOS_GD_SLACK) && !ref[v])
			cap += LPB_REC + 4 * lpb_set(ctx, v, &rows, &first);
	}
	b = malloc(cap);
	if (!b) {
		free(ref);
		return -ENOMEM;
	}
	p = b + LPB_HEAD;
	for (size_t k = 0; k < ctx->n_ent; k++) {
		const lp_ent *x = &ctx->ent[k];
		if (x->e == NO_SLOT)
			continue;
		int se = qos_gd_var_status(ctx->gd, x->e);
		int sd = x->d == NO_SLOT ? (int)LPB_NONE : qos_gd_var_status(ctx->gd, x->d);
		size_t n = lpb_set(ctx, x->e, &rows, &first);
		p = lpb_rec(p, (unsigned)se, (unsigned)sd,
			    x->d == NO_SLOT ? 0 : x->dcode, 0, x->e, x->d, rows, n);
		n_rec++;
	}
	for (size_t q = 0; q < m; q++) {
		uint32_t v = qos_gd_basic_var(ctx->gd, q);
		if (v & QOS_GD_SLACK || ref[v])
			continue;
		size_t n = lpb_set(ctx, v, &rows, &first);
		unsigned dcode = 0;
		if (ctx->waste && first < 0) {
			const double *vals;
			size_t nn = qos_gd_col_get(ctx->gd, v, &rows, &vals);
			dcode = nn > n && vals[n] > 1.5 * (double)n ? 2 : 1;
		}
		if (first > 0)
			p = lpb_rec(p, QOS_GD_IS_BASIC, LPB_NONE, 0, LPB_DEAD_E,
				    v, NO_SLOT, rows, n);
		else
			p = lpb_rec(p, LPB_NONE, QOS_GD_IS_BASIC, dcode,
				    LPB_DEAD_E | LPB_DEAD_D, NO_SLOT, v, rows, n);
		n_rec++;
	}
	for (size_t t = 0; t < m; t++)
		*p++ = (uint8_t)qos_gd_var_status(ctx->gd, QOS_GD_SLACK | (uint32_t)t);
	lpb_u32(b, LPB_MAGIC);
	lpb_u32(b + 4, (uint32_t)ctx->n_osts);
	b[8] = (uint8_t)(ctx->waste != 0);
	lpb_u32(b + 9, (uint32_t)n_rec);
	lpb_u32(b + 13, (uint32_t)ns);
	free(ref);
	*buf = b;
	*len = (size_t)(p - b);
	return 0;
}

/* One parsed record. */
typedef struct lpb_r {
	const uint8_t *rows;  /* n x u32 in the image */
	uint32_t n, slot[2];  /* slot of e, of d (NO_SLOT: none) */
	uint8_t st[2], dcode, flags;
	uint32_t col[2];      /* slots the load gave them */
} lpb_r;

/* Parse and check the records of an image of n_rec records for n_osts
 * OSTs; 0 or -EBADMSG. */
static int lpb_parse(const uint8_t **pp, const uint8_t *end, lpb_r *r,
		     size_t n_rec, size_t no, int waste, uint32_t *mark,
		     uint32_t *stamp)
{
	const uint8_t *p = *pp;

	for (size_t i = 0; i < n_rec; i++) {
		lpb_r *x = &r[i];
		if (end - p < LPB_REC)
			return -EBADMSG;
		unsigned se = p[0], sd = p[1], dcode = p[2], flags = p[3];
		x->slot[0] = lpb_r32(p + 4);
		x->slot[1] = lpb_r32(p + 8);
		x->n = lpb_r32(p + 12);
		p += LPB_REC;
		if (se > LPB_NONE || sd > LPB_NONE || flags > 3 || !x->n || x->n > no ||
		    (size_t)(end - p) / 4 < x->n)
			return -EBADMSG;
		/* e present unless the record is a dead d alone; a dead e
		 * takes its d with it; a slot exactly where a column is;
		 * (3)'s factor as the shape has it */
		if ((se == LPB_NONE) != (flags == (LPB_DEAD_E | LPB_DEAD_D) && sd != LPB_NONE) ||
		    (se == LPB_NONE && sd == LPB_NONE) ||
		    ((flags & LPB_DEAD_E) && sd != LPB_NONE && !(flags & LPB_DEAD_D)) ||
		    ((flags & LPB_DEAD_D) && sd == LPB_NONE) ||
		    ((se == LPB_NONE) != (x->slot[0] == NO_SLOT)) ||
		    ((sd == LPB_NONE) != (x->slot[1] == NO_SLOT)) ||
		    (sd != LPB_NONE && (waste ? dcode < 1 || dcode > 2 : dcode != 0)))
			return -EBADMSG;
		x->st[0] = (uint8_t)se;
		x->st[1] = (uint8_t)sd;
		x->dcode = (uint8_t)dcode;
		x->flags = (uint8_t)flags;
		x->rows = p;
		if (++*stamp == 0) {
			memset(mark, 0, no * sizeof(*mark));
			*stamp = 1;
		}
		for (size_t q = 0; q < x->n; q++, p += 4) {
			uint32_t t = lpb_r32(p);
			if (t >= no || mark[t] == *stamp)
				return -EBADMSG;
			mark[t] = *stamp;
		}
	}
	*pp = p;
	return 0;
}

/* Add record x's column kind (0: e, 1: d) to ctx's solver. */
static int lpb_add(qos_gift_lp_ctx *ctx, lpb_r *x, int kind, uint32_t *rows,
		   double *vals)
{
	for (size_t q = 0; q < x->n; q++)
		rows[q] = lpb_r32(x->rows + 4 * q);
	return qos_gift_lp__add_col_set(ctx, x->n, kind ? -1 : 1,
					kind ? x->dcode : 0, rows, vals,
					&x->col[kind]);
}

/* Add every column, each in its saved slot when the slots are plausible
 * (n_slots at most a few times what is saved), else in record order;
 * *filler lists the empty slots added in between (to be released). */
static int lpb_add_all(qos_gift_lp_ctx *ctx, lpb_r *r, size_t n_rec,
		       size_t n_slots, uint32_t *rows, double *vals,
		       uint32_t **filler, size_t *n_fill)
{
	uint32_t *map = NULL;
	int rc = 0;

	*filler = NULL;
	*n_fill = 0;
	if (n_slots <= 4 * (2 * n_rec + 16)) {
		map = malloc((n_slots + 1) * sizeof(*map));
		*filler = malloc((n_slots + 1) * sizeof(**filler));
		if (!map || !*filler) {
			free(map);
			return -ENOMEM;
		}
		for (size_t s = 0; s < n_slots; s++)
			map[s] = NO_SLOT;
		for (size_t i = 0; i < n_rec && map; i++)
			for (int kind = 0; kind < 2; kind++) {
				uint32_t s = r[i].slot[kind];
				if (s == NO_SLOT)
					continue;
				if (s >= n_slots || map[s] != NO_SLOT) {
					/* not a slot layout: record order */
					free(map);
					map = NULL;
					break;
				}
				map[s] = (uint32_t)(2 * i + (size_t)kind);
			}
	}
	if (map) {
		for (size_t s = 0; s < n_slots && !rc; s++) {
			uint32_t got;
			if (map[s] == NO_SLOT) {
				rc = qos_gd_col_add(ctx->gd, NULL, NULL, 0, 0.0, 0.0, &got);
				if (!rc)
					(*filler)[(*n_fill)++] = got;
			} else {
				rc = lpb_add(ctx, &r[map[s] / 2], (int)(map[s] % 2), rows, vals);
			}
		}
		free(map);
		return rc;
	}
	for (size_t i = 0; i < n_rec && !rc; i++)
		for (int kind = 0; kind < 2 && !rc; kind++)
			if (r[i].st[kind] != LPB_NONE)
				rc = lpb_add(ctx, &r[i], kind, rows, vals);
	return rc;
}

int qos_gift_lp_ctx_load(qos_gift_lp_ctx *ctx, const uint8_t *buf, size_t len)
{
	const uint8_t *p = buf, *end = buf + len;
	size_t no, m, n_rec, n_slots, k = 0, n_ent = 0, n_fill = 0;
	uint32_t *var = NULL, *rows = NULL, *filler = NULL;
	uint8_t *sts = NULL;
	double *vals = NULL;
	lpb_r *r = NULL;
	int waste, rc;

	qos_gift_lp__drop_solver(ctx);
	if (!buf || len < LPB_HEAD || lpb_r32(p) != LPB_MAGIC || p[8] > 1)
		return -EBADMSG;
	no = lpb_r32(p + 4);
	waste = p[8];
	n_rec = lpb_r32(p + 9);
	n_slots = lpb_r32(p + 13);
	p += LPB_HEAD;
	m = no + (size_t)waste;
	/* a record takes at least LPB_REC + 4 bytes: n_rec is bounded by len */
	if (!no || m > QOS_GD_MAX_ROWS || n_rec > (len - LPB_HEAD) / (LPB_REC + 4))
		return -EBADMSG;
	rc = qos_gd_create(m, &ctx->gd);
	if (rc)
		return rc;
	rc = -ENOMEM;
	ctx->n_osts = no;
	ctx->waste = waste;
	ctx->stamp = 0;
	ctx->mark = calloc(no, sizeof(*ctx->mark));
	ctx->ent = calloc(n_rec + 1, sizeof(*ctx->ent));
	r = calloc(n_rec + 1, sizeof(*r));
	var = malloc((2 * n_rec + m) * sizeof(*var));
	sts = malloc(2 * n_rec + m);
	rows = malloc((no + 2) * sizeof(*rows));
	vals = malloc((no + 2) * sizeof(*vals));
	if (!ctx->mark || !ctx->ent || !r || !var || !sts || !rows || !vals)
		goto out;
	rc = lpb_parse(&p, end, r, n_rec, no, waste, ctx->mark, &ctx->stamp);
	if (rc)
		goto out;
	rc = -EBADMSG;
	if ((size_t)(end - p) != m)
		goto out;
	for (size_t t = 0; t < m; t++)
		if (p[t] > QOS_GD_IS_BASIC)
			goto out;
	rc = lpb_add_all(ctx, r, n_rec, n_slots, rows, vals, &filler, &n_fill);
	if (rc)
		goto out;
	for (size_t i = 0; i < n_rec; i++) {
		lpb_r *x = &r[i];
		for (int kind = 0; kind < 2; kind++)
			if (x->st[kind] != LPB_NONE) {
				var[k] = x->col[kind];
				sts[k++] = x->st[kind];
			}
		if (x->st[0] != LPB_NONE && x->st[1] != LPB_NONE)
			(void)qos_gd_col_twin(ctx->gd, x->col[1], x->col[0]);
		if (!(x->flags & LPB_DEAD_E)) {
			lp_ent *e = &ctx->ent[n_ent++];
			for (size_t q = 0; q < x->n; q++)
				rows[q] = lpb_r32(x->rows + 4 * q);
			e->h = qos_gift_lp__set_hash_rows(rows, x->n);
			e->e = x->col[0];
			e->d = x->st[1] == LPB_NONE || x->flags & LPB_DEAD_D ? NO_SLOT : x->col[1];
			e->dcode = (uint8_t)(e->d == NO_SLOT ? 0 : x->dcode);
		}
	}
	for (size_t t = 0; t < m; t++) {
		var[k] = QOS_GD_SLACK | (uint32_t)t;
		sts[k++] = p[t];
	}
	ctx->n_ent = n_ent;
	rc = qos_gd_basis_set(ctx->gd, var, sts, k);
	if (rc == -EINVAL)
		rc = -EBADMSG;
	if (rc == -EAGAIN)
		qos_gd_reset(ctx->gd);  /* the columns stay; the solve crashes */
	else if (rc)
		goto out;
	for (size_t i = 0; i < n_rec; i++) {
		if (r[i].flags & LPB_DEAD_E && r[i].st[0] != LPB_NONE)
			qos_gd_col_free(ctx->gd, r[i].col[0]);
		if (r[i].flags & LPB_DEAD_D)
			qos_gd_col_free(ctx->gd, r[i].col[1]);
	}
	for (size_t f = 0; f < n_fill; f++)
		qos_gd_col_free(ctx->gd, filler[f]);
	if (!rc)
		ctx->st.restored++;
out:
	if (rc && rc != -EAGAIN)
		qos_gift_lp__drop_solver(ctx);
	free(r);
	free(var);
	free(sts);
	free(rows);
	free(vals);
	free(filler);
	return rc;
}
