/* rcc.c — RPC concurrency credits: CalcRCC (Algorithm 2), D/C/IOPS
 * tracking (Algorithm 1, sec. III-C) and the timeout of Eq. (6); see rcc.h. */
#include "qos/rcc.h"

#include <errno.h>
#include <math.h>

long qos_rcc_calc(double D, double Dlow, double Lmax, double IOPS, double C,
		  double Ts, double cnr, double RCCmin, double RCCmax)
{
	double rcc;

	if (D < Dlow) {
		/* Alg. 2 line 3: light load, give what the client asks for. */
		rcc = cnr;
	} else if (IOPS <= 0 || C <= 0) {
		/* No measurement yet: the paper initialises RCC to RCCmin. */
		rcc = RCCmin;
	} else {
		/* Alg. 2 line 5 / Eq. (2): RCC = Lmax * IOPS / C, whole RPCs. */
		rcc = floor(Lmax * IOPS / C);
		/* Lines 6-10: estimated latency Le = D / IOPS, Lc = max(Le, Ts);
		 * over the bound, cut by one. */
		double Le = D / IOPS;
		double Lc = Le > Ts ? Le : Ts;
		if (Lc > Lmax)
			rcc -= 1;
	}
	/* Line 12: clamp to [RCCmin, RCCmax]. */
	if (!(rcc >= RCCmin)) /* also catches NaN */
		rcc = RCCmin;
	if (rcc > RCCmax)
		rcc = RCCmax;
	return (long)floor(rcc);
}

int qos_rcc_timeout(double lambda, double Lmax, double Lnet, double *T)
{
	if (!(lambda >= 1) || !(Lmax > 0) || !(Lnet >= 0) || !isfinite(lambda) ||
	    !isfinite(Lmax) || !isfinite(Lnet))
		return -EINVAL;
	/* Eq. (6): T_timeout = lambda * Lmax + Lnet */
	*T = lambda * Lmax + Lnet;
	return 0;
}

double qos_rcc_deviation(double C, double IOPS, double Lmax)
{
	if (!(IOPS > 0) || !(Lmax > 0))
		return INFINITY;
	/* Eq. (5) with dRCC = 1: dL = C / IOPS, P = dL / Lmax */
	return C / (IOPS * Lmax);
}

int qos_rcc_init(qos_rcc *r, const qos_rcc_params *p, double now)
{
	qos_rcc_params q = *p;

	if (q.Dlow == 0)
		q.Dlow = 128;
	if (q.RCCmin == 0)
		q.RCCmin = 1;
	if (q.RCCmax == 0)
		q.RCCmax = 32;
	if (q.STL == 0)
		q.STL = 60;
	if (q.window == 0)
		q.window = 1;
	if (!(q.Lmax > 0) || !isfinite(q.Lmax) || !(q.Dlow > 0) ||
	    !(q.RCCmin >= 1) || !(q.RCCmax >= q.RCCmin) || !isfinite(q.RCCmax) ||
	    !(q.STL >= 0) || !(q.window > 0) || !isfinite(q.window))
		return -EINVAL;
	*r = (qos_rcc){ .p = q, .win_start = now, .last_event = now };
	return 0;
}

void qos_rcc_client_init(qos_rcc_client *cl)
{
	*cl = (qos_rcc_client){ 0 };
}

/* Account the time since the last event as busy if D > 0, and close the
 * IOPS window when it is over. */
static void rcc_clock(qos_rcc *r, double now)
{
	if (now < r->last_event)
		now = r->last_event; /* never count time backwards */
	if (r->D > 0)
		r->win_busy += now - r->last_event;
	r->last_event = now;
	if (now - r->win_start >= r->p.window) {
		/* IOPS = finished operations / efficient I/O time (III-C);
		 * a window without busy time keeps the last value. */
		if (r->win_busy > 0)
			r->IOPS = r->win_ops / r->win_busy;
		r->win_start = now;
		r->win_ops = 0;
		r->win_busy = 0;
	}
}

double qos_rcc_iops(const qos_rcc *r)
{
	if (r->IOPS > 0)
		return r->IOPS;
	return r->win_busy > 0 ? r->win_ops / r->win_busy : 0;
}

void qos_rcc_recv(qos_rcc *r, qos_rcc_client *cl, double now)
{
	rcc_clock(r, now);
	r->D++;           /* Alg. 1 line 12 */
	if (++cl->q == 1 && !cl->active) {
		cl->active = 1; /* III-C: active when q becomes 1 */
		r->C++;
	}
}

long qos_rcc_reply(qos_rcc *r, qos_rcc_client *cl, double Ta, double cnr,
		   double now)
{
	double Ts = now - Ta; /* Alg. 1 line 15 */

	rcc_clock(r, now);
	if (r->D > 0)
		r->D--;       /* line 16 */
	r->win_ops++;
	if (cl->q > 0 && --cl->q == 0)
		cl->idle_since = now;
	/* Line 17: arc = CalcRCC(server, rpc).  A client with a reply in
	 * flight is active, so C >= 1 here unless the caller forgot it. */
	return qos_rcc_calc((double)r->D, r->p.Dlow, r->p.Lmax, qos_rcc_iops(r),
			    (double)(r->C > 0 ? r->C : 1), Ts, cnr,
			    r->p.RCCmin, r->p.RCCmax);
}

int qos_rcc_ping(qos_rcc *r, qos_rcc_client *cl, double now)
{
	/* III-C: C is not decreased when q drops to zero (the client may
	 * still be active with one credit) but only once it has been
	 * inactive for more than STL. */
	if (cl->active && cl->q == 0 && now - cl->idle_since > r->p.STL) {
		cl->active = 0;
		r->C--;
		return 1;
	}
	return 0;
}

void qos_rcc_client_forget(qos_rcc *r, qos_rcc_client *cl, double now)
{
	rcc_clock(r, now);
	r->D -= cl->q;
	if (r->D < 0)
		r->D = 0;
	if (cl->active)
		r->C--;
	qos_rcc_client_init(cl);
}
