/* gift_lp_i.h — internals of GIFT's LP context (gift_lp.h), shared by
 * gift_lp.c (building, matching and solving) and gift_lp_basis.c (the
 * basis saved across a restart).  Not a public header.
 *
 * The dual simplex path: rows 0 .. n_osts-1 are the OSTs (e_i: +1, d_i:
 * -1 on each OST of S_i; right-hand side the base's gap), row n_osts is
 * (3) written as <= 0 (e_i: -|S_i|, d_i: (1 + [i in Y]) |S_i|).
 * Objective |S_i| e_i - (1 + LP_EPS) |S_i| d_i, all scaled by max C_j.
 * Each job of the last solve has an entry with its columns; the next
 * solve matches jobs to entries by OST set (hash of the set, then an
 * exact comparison). */
#ifndef QOS_GIFT_LP_I_H
#define QOS_GIFT_LP_I_H

#include <stddef.h>
#include <stdint.h>

#include "qos/gift_dual.h"
#include "qos/gift_lp.h"

#define NO_SLOT UINT32_MAX

typedef struct lp_ent {
	uint64_t h;      /* hash of S_i */
	uint32_t e, d;   /* slots (d: NO_SLOT until a throttle column is needed) */
	uint32_t next;   /* hash chain while matching */
	uint8_t dcode;   /* (3) factor of d: 0 without (3), else 1 + [in Y] */
	uint8_t taken;
} lp_ent;

struct qos_gift_lp_ctx {
	qos_gd *gd;
	size_t n_osts;        /* shape gd was built for */
	int waste;
	lp_ent *ent;          /* [n_ent]: the jobs of the last solve */
	size_t n_ent;
	uint32_t *mark;       /* [n_osts] stamps for set comparison */
	uint32_t stamp;
	size_t crash_min;     /* crash basis for cold starts from this many OSTs */
	qos_gift_lp_stats st;
};

/* Free ctx's solver and job entries (ctx then has no basis). */
void qos_gift_lp__drop_solver(qos_gift_lp_ctx *ctx);
/* The hash of an OST set given as n row indices (the one matching uses). */
uint64_t qos_gift_lp__set_hash_rows(const uint32_t *rows, size_t n);
/* Add the e (sign +1) or d (sign -1, (3) factor dcode) column of a job
 * whose OSTs are rows[0 .. n_set) to ctx's solver, upper bound 0; rows
 * and vals have room for n_set + 1.  0, -EINVAL or -ENOMEM. */
int qos_gift_lp__add_col_set(qos_gift_lp_ctx *ctx, size_t n_set, int sign,
			     int dcode, uint32_t *rows, double *vals, uint32_t *slot);

#endif
