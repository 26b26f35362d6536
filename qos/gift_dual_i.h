/* gift_dual_i.h — internals of the bounded dual simplex (gift_dual.h),
 * shared by gift_dual.c (columns, the iteration, the solve loop) and
 * gift_dual_inv.c (the explicit basis inverse).  Not a public header.
 *
 * Variables are named by a uint32_t: a slot index, or GD_SLACK | t for the
 * slack of row t.  The basis inverse is a dense m x ms row-major matrix
 * (ms = m rounded up to 4, the padding always 0), row p being e_p^T B^-1
 * for basis position p; costs are kept in the minimisation sense. */
#ifndef QOS_GIFT_DUAL_I_H
#define QOS_GIFT_DUAL_I_H

#include <stddef.h>
#include <stdint.h>

#include "qos/gift_dual.h"

#define GD_SLACK QOS_GD_SLACK
#define GD_LO QOS_GD_AT_LO
#define GD_UP QOS_GD_AT_UP
#define GD_BASIC QOS_GD_IS_BASIC
#define GD_NONE UINT32_MAX

#define TOL_P 1e-9      /* primal feasibility, absolute */
#define TOL_D 1e-9      /* dual feasibility (reduced cost sign), absolute */
#define TOL_P_FINAL 1e-12 /* primal bounds, the first rounds of a solve */
#define TOL_D_FINAL 1e-13 /* reduced cost sign at the optimality check */
#define TOL_PIV 1e-9    /* smallest |alpha_rj| a ratio test considers */
#define TOL_RES 1e-9    /* residual of B x_B = g - N x_N and of B^T y = c_B */
/* Default relative cost perturbation (qos_gd_set_perturb).  pfs-qosbench
 * medians with steepest edge, warm / cold crash pivots: 0: 69 / 442,
 * 1e-8: 70 / 431, 1e-7: 80 / 436, 1e-6: 74 / 447 (with Devex pricing,
 * 1e-7 had cut the cold pivots from 726 to 647 and the worst case from
 * 2,333 to 797). */
#define GD_PERTURB 1e-8
/* Refactor after this many updates even if the end-of-solve residual
 * checks (which refactor on demand) never complain. */
#define REFACTOR_EVERY 20000

typedef struct gd_cand {
	uint32_t v;     /* variable */
	double a;       /* |alpha_rj| */
	double t;       /* breakpoint |d_j| / |alpha_rj| */
	double th;      /* Harris breakpoint (|d_j| + TOL_D) / |alpha_rj| */
	double u;       /* upper bound */
} gd_cand;

struct qos_gd {
	size_t m, ms;       /* rows; row stride of the dense arrays */
	/* slots */
	size_t n, ncap;
	double *c;          /* minimisation cost c' = -c (perturbed while
	                     * gd->perturbed) */
	double *c0;         /* the unperturbed costs of the slots in mv */
	double *u;          /* upper bound (0 once freed) */
	size_t *beg;        /* first entry in the pool */
	uint32_t *len;      /* entries */
	uint32_t *room;     /* entries reserved at beg */
	uint8_t *st;        /* GD_LO, GD_UP or GD_BASIC */
	uint8_t *dead;      /* freed by the caller */
	uint8_t *listed;    /* on the free list */
	uint32_t *pos;      /* basis position when basic */
	double *x;          /* value */
	double *d;          /* reduced cost (nonbasic) */
	double *alpha;      /* pivot row entries */
	uint32_t *free_list;
	size_t n_free;
	uint32_t *mv;       /* slots with u > 0 this solve: the only ones
	                     * pricing and ratio tests look at */
	size_t n_mv;
	/* twins (qos_gd_col_twin): slot j's column is tw_f[j] times that of
	 * slot tw_of[j] (GD_NONE: no twin) plus tw_d[j] on row tw_row[j],
	 * valid while gen[tw_of[j]] == tw_gen[j] (gen counts the columns a
	 * slot has held) */
	uint32_t *tw_of, *tw_gen, *gen, *tw_row;
	double *tw_f, *tw_d;
	/* the pivot row's plan (rebuilt at the start of each solve): the
	 * slots own[] whose entries are summed (the movable ones without a
	 * live twin, and the twins those have) and the movable slots lnk[]
	 * derived from their twin's entry; own[i] has its entries packed in
	 * mrow/mval[mbeg[i] .. mbeg[i + 1]); rows fit 16 bits (m <= 2048) */
	uint32_t *own, *lnk;
	size_t n_own, n_lnk;
	uint8_t *need;      /* [ncap] scratch of the plan, all 0 */
	uint32_t *mbeg;     /* [ncap + 1] */
	uint16_t *mrow;
	double *mval;
	size_t mcap;
	uint32_t *cidx;     /* [ncap] scratch: ratio test candidates */
	/* column entry pool */
	uint32_t *prow;
	double *pval;
	size_t plen, pcap;
	/* rows and their slacks */
	double *g, *su;     /* right-hand side, implied slack upper bound */
	uint8_t *sst;
	uint32_t *spos;
	double *xs, *ds, *salpha;
	/* basis */
	uint32_t *head;     /* [m] */
	double *Binv;       /* [m * ms], aligned */
	double *w;          /* [m] ||e_p^T B^-1||^2, dual steepest edge */
	double *xB;         /* [m] */
	double *y;          /* [ms], aligned */
	double *aq;         /* [m] FTRAN scratch */
	double *vv;         /* [ms] scratch, aligned */
	uint32_t *perm;     /* [m] scratch: refactorisation row interchanges,
	                     * rows touched by bound flips */
	gd_cand *cand;      /* [2 (ncap + m)]: candidates, then scratch */
	/* refactorisation scratch */
	double *M;          /* [m * m] */
	uint32_t *kpos, *trow, *tidx;  /* [m] */
	/* the basis a solve started from, as a hash set of variable keys
	 * (gd_key; 0 = empty), for stats.last_basis_change */
	uint64_t *bset;
	size_t bmask;
	int have_basis;
	int perturbed;      /* c holds perturbed costs (gd_perturb) */
	double perturb;     /* relative size of the perturbation, 0 = off */
	size_t since_refactor;
	double obj;
	qos_gd_stats stats;
};

/* ---- small helpers ---- */

static inline double gd_upper(const qos_gd *gd, uint32_t v)
{
	return v & GD_SLACK ? gd->su[v & ~GD_SLACK] : gd->u[v];
}

static inline double gd_cost(const qos_gd *gd, uint32_t v)
{
	return v & GD_SLACK ? 0.0 : gd->c[v];
}

static inline double gd_value(const qos_gd *gd, uint32_t v)
{
	return v & GD_SLACK ? gd->xs[v & ~GD_SLACK] : gd->x[v];
}

static inline void gd_set_value(qos_gd *gd, uint32_t v, double x)
{
	if (v & GD_SLACK)
		gd->xs[v & ~GD_SLACK] = x;
	else
		gd->x[v] = x;
}

static inline uint8_t *gd_status(qos_gd *gd, uint32_t v)
{
	return v & GD_SLACK ? &gd->sst[v & ~GD_SLACK] : &gd->st[v];
}

/* ---- the explicit inverse (gift_dual_inv.c) ---- */

/* n zeroed doubles, 32-byte aligned for the kernels; NULL if out of
 * memory.  Free with free(). */
double *qos_gd__zalloc(size_t n);
/* x += f v over ms doubles (32-byte aligned, ms a multiple of 4). */
void qos_gd__k_axpy(double *restrict x, const double *restrict v, double f,
		    size_t ms);
/* x += f v over ms doubles (as above), returning the new x . x. */
double qos_gd__k_axpy_norm(double *restrict x, const double *restrict v,
			   double f, size_t ms);
/* a . b over ms doubles (as above). */
double qos_gd__k_dot(const double *restrict a, const double *restrict b,
		     size_t ms);
/* The slack basis, B = I; basic slots become nonbasic at 0. */
void qos_gd__cold(qos_gd *gd);
/* Rebuild B^-1 from the basis heads.  0, or -EAGAIN if the basis is
 * numerically singular (the caller starts cold). */
int qos_gd__refactor(qos_gd *gd);
/* gd->aq = B^-1 a_v. */
void qos_gd__ftran(qos_gd *gd, uint32_t v);
/* Basis position r now holds the variable whose FTRAN column is in
 * gd->aq: update B^-1 and the steepest-edge weights. */
void qos_gd__update_inverse(qos_gd *gd, size_t r);

#endif
