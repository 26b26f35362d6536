/* rcc.h — server-assigned RPC concurrency credits (RCC), from
 * lustre-rcc-congestion.txt sec. III (Algorithms 1 and 2, Eqs. (1)-(6)).
 *
 * The OSS tracks, per server (one qos_rcc per OST or per service):
 *   D     requests queued or in service (Alg. 1 lines 12 and 16),
 *   C     I/O-active clients: a client becomes active when its pending
 *         count q goes to 1, and is only counted out after it has been
 *         inactive for more than STL, checked when the client pings
 *         (sec. III-C),
 *   IOPS  time-averaged: finished operations / "efficient I/O time" (time
 *         with D > 0) over a window of `window` seconds (sec. III-C),
 * and on every reply computes the credits returned to that client with
 * CalcRCC (Algorithm 2):
 *   D < Dlow:  rcc = cnr (light load: what the client asks for)
 *   else:      rcc = Lmax * IOPS / C           (Eq. (2))
 *              Le = D / IOPS; Lc = max(Le, Ts)
 *              if Lc > Lmax: rcc = rcc - 1     (the cut by one)
 *   rcc = max(min(rcc, RCCmax), RCCmin)
 * Credits are whole RPCs: Lmax*IOPS/C is rounded down before the cut.
 * The RPC timeout clients should use is Eq. (6): T = lambda*Lmax + Lnet,
 * with lambda >= 1 + P and P = C / (IOPS * Lmax) (Eq. (5), dRCC = 1).
 *
 * Defaults are the paper's experiment settings (sec. IV): RCCmin 1,
 * RCCmax 32, Dlow 128 (the paper's default is N, the number of service
 * threads: pass that), STL 60 s, lambda 1.5, Lnet 5 s; Lmax has no
 * default in the paper (its runs use 25 and 60 s) and must be given.
 *
 * Pure: time (seconds) is always a parameter; no clock, no I/O.  The
 * per-client state (the paper's export) is a small struct the caller
 * embeds in its own per-client object and passes in, so the server state
 * never searches a table.  Limits: IOPS is 0 until the first request has
 * finished, so under heavy load from the start the credits sit at RCCmin
 * until a measurement exists; C counts a client that vanishes without
 * pinging until the caller calls qos_rcc_ping (or qos_rcc_client_forget)
 * for it.  Not thread-safe: the caller's lock guards both structs. */
#ifndef QOS_RCC_H
#define QOS_RCC_H

typedef struct qos_rcc_params {
	double Lmax;   /* latency bound (s), > 0 */
	double Dlow;   /* light-load watermark of D; 0: 128 */
	double RCCmin; /* >= 1; 0: 1 */
	double RCCmax; /* >= RCCmin; 0: 32 */
	double STL;    /* inactivity before a client leaves C (s); 0: 60 */
	double window; /* IOPS averaging window (s); 0: 1 */
} qos_rcc_params;

typedef struct qos_rcc {
	qos_rcc_params p;
	long D;            /* queued + in service */
	long C;            /* I/O-active clients */
	double IOPS;       /* last complete window's measurement (0: none yet) */
	/* current IOPS window */
	double win_start;  /* start time of the window */
	double win_ops;    /* operations finished in it */
	double win_busy;   /* time with D > 0 in it */
	double last_event; /* time of the last D change (busy-time accounting) */
} qos_rcc;

/* One client (the paper's export): pending requests and activity. */
typedef struct qos_rcc_client {
	long q;            /* pending requests of this client */
	int active;        /* counted in C */
	double idle_since; /* when q last dropped to 0 */
} qos_rcc_client;

/* Algorithm 2 as a pure function: credits for a reply given the server's
 * D, Dlow, Lmax, C, the measured IOPS, the RPC's service time Ts and the
 * credits the client asked for (cnr).  Returns an integer in
 * [RCCmin, RCCmax].  IOPS <= 0 or C <= 0 under load gives RCCmin. */
long qos_rcc_calc(double D, double Dlow, double Lmax, double IOPS, double C,
		  double Ts, double cnr, double RCCmin, double RCCmax);

/* Eq. (6): the RPC timeout *T = lambda*Lmax + Lnet.  Returns 0, or
 * -EINVAL if lambda < 1, Lmax <= 0 or Lnet < 0 (the paper asks for
 * lambda >= 1 + P; see qos_rcc_deviation). */
int qos_rcc_timeout(double lambda, double Lmax, double Lnet, double *T);

/* Eq. (5): the relative latency deviation P = C / (IOPS * Lmax) for a
 * one-credit fluctuation; INFINITY if IOPS or Lmax is 0. */
double qos_rcc_deviation(double C, double IOPS, double Lmax);

/* Initialise r with params (0 fields take the defaults above) at time now.
 * Returns 0 or -EINVAL (Lmax <= 0, RCCmin < 1, RCCmax < RCCmin, ...). */
int qos_rcc_init(qos_rcc *r, const qos_rcc_params *p, double now);
/* A new client, not active. */
void qos_rcc_client_init(qos_rcc_client *cl);

/* Alg. 1 ServerRecvIORequest: a request of client cl arrived at now.
 * D += 1; the client's q += 1 and, at q == 1 if not yet active, C += 1. */
void qos_rcc_recv(qos_rcc *r, qos_rcc_client *cl, double now);

/* Alg. 1 ServerSendIOReply: the request that arrived at Ta finished at
 * now; cnr is the credits the client asked for (pending pages / pages per
 * RPC).  D -= 1, q -= 1, IOPS accounting, then CalcRCC.  Returns the
 * credits to piggyback on the reply (the paper's arc). */
long qos_rcc_reply(qos_rcc *r, qos_rcc_client *cl, double Ta, double cnr,
		   double now);

/* The client pinged (or a periodic sweep) at now: if it is active, has
 * nothing pending and has been idle for more than STL, C -= 1.
 * Returns 1 if it left C, else 0. */
int qos_rcc_ping(qos_rcc *r, qos_rcc_client *cl, double now);

/* The client disconnected: its pending requests are dropped from D and it
 * leaves C at once. */
void qos_rcc_client_forget(qos_rcc *r, qos_rcc_client *cl, double now);

/* IOPS the server uses now: the last complete window, or while there is
 * none yet, the running value of the current window (0 if no busy time). */
double qos_rcc_iops(const qos_rcc *r);

#endif
