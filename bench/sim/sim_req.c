/* sim_req.c — the engine of `pfs-sim req` (model in sim_req.h): clients,
 * per-OST TBF queues, service threads, AdapTBF periods, RCC credits and
 * ASCAR windows, driven by one discrete-event clock in microseconds. */
#include "bench/sim/sim_req.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/sim/sim_req_evq.h"
#include "bench/sim/sim_rng.h"
#include "qos/adaptbf.h"
#include "qos/ascar.h"
#include "qos/tbf.h"

enum { EV_WAKE, EV_THINK, EV_BURST, EV_ARRIVE, EV_DONE, EV_REPLY, EV_OST, EV_PERIOD, EV_SAMPLE };

typedef struct req {
	int proc, dropped;
	int64_t sent_us;
	long credits;   /* RCC credits the reply carries */
	long next_free;
} req;

typedef struct proc_st {
	long outstanding, thinking, done, burst_n;
	int sleeping;
	long credits;          /* RCC credits granted to this client */
	qos_rcc_client rc;
	qos_ascar_ctl asc;
} proc_st;

typedef struct ost_st {
	qos_tbf *tbf;
	qos_adaptbf_ost *abf;
	qos_rcc rcc;
	int busy;
	int64_t wake_us;       /* pending EV_OST, -1 none */
	long queued;
	long *q_job;           /* queued per job */
	long *served_per;      /* served per job in the current period */
	long *arrived_per;     /* arrived per job in the current period */
	int *has_rule;
	double *rec;           /* AdapTBF record per job */
	double *share;         /* static: priority share per job */
	int *uses;             /* job has a process on this OST */
} ost_st;

typedef struct eng {
	const sim_req_scen *sc;
	int control;
	sim_req_evq q;
	sim_rng rng;
	req *reqs;
	long n_reqs, cap_reqs, free_head;
	proc_st *ps;
	ost_st *os;
	qos_ascar_ruleset rules;
	sim_req_result *r;
	double *win_mb, *win_dem; /* current sample window, per job */
	long procs_left;          /* processes with a finite budget not yet done */
	long finite_procs;
	int64_t now;
} eng;

static double sec(int64_t t)
{
	return (double)t / 1e6;
}

static int64_t to_us_ceil(double s)
{
	double u = ceil(s * 1e6);
	if (u < 1)
		u = 1;
	if (u > 4e18)
		u = 4e18;
	return (int64_t)u;
}

static int req_alloc(eng *e, long *out)
{
	if (e->free_head >= 0) {
		*out = e->free_head;
		e->free_head = e->reqs[*out].next_free;
		return 0;
	}
	if (e->n_reqs == e->cap_reqs) {
		long cap = e->cap_reqs ? e->cap_reqs * 2 : 1024;
		req *n = realloc(e->reqs, (size_t)cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		e->reqs = n;
		e->cap_reqs = cap;
	}
	*out = e->n_reqs++;
	return 0;
}

static void req_free(eng *e, long i)
{
	e->reqs[i].next_free = e->free_head;
	e->free_head = i;
}

/* Slots a process may fill: max_rpcs_in_flight, RCC credits, ASCAR. */
static long proc_window(eng *e, size_t p)
{
	const sim_req_proc *sp = &e->sc->procs[p];
	proc_st *st = &e->ps[p];
	long w = sp->inflight;
	if (e->sc->rcc && st->credits < w)
		w = st->credits;
	if (e->sc->ascar) {
		long a = (long)qos_ascar_ctl_window(&st->asc);
		if (a < w)
			w = a;
	}
	return w < 1 ? 1 : w;
}

static int proc_try_issue(eng *e, size_t p)
{
	const sim_req_proc *sp = &e->sc->procs[p];
	proc_st *st = &e->ps[p];
	int rc;
	if (e->now < sp->start_us || st->sleeping)
		return 0;
	for (;;) {
		if (sp->rpcs && st->done + st->outstanding >= sp->rpcs)
			return 0;
		if (sp->burst && st->burst_n >= sp->burst) {
			if (st->outstanding == 0 && st->thinking == 0) {
				st->sleeping = 1;
				return sim_req_evq_push(&e->q, e->now + sp->gap_us, EV_BURST,
							(long)p, 0);
			}
			return 0;
		}
		if (st->outstanding + st->thinking >= proc_window(e, p))
			return 0;
		if (e->sc->ascar) {
			double w = qos_ascar_ctl_send_wait(&st->asc, sec(e->now));
			if (w > 0)
				return sim_req_evq_push(&e->q, e->now + to_us_ceil(w), EV_WAKE,
							(long)p, 0);
			qos_ascar_ctl_sent(&st->asc, sec(e->now));
		}
		long i;
		if ((rc = req_alloc(e, &i)))
			return rc;
		e->reqs[i] = (req){ .proc = (int)p, .sent_us = e->now, .next_free = -1 };
		st->outstanding++;
		st->burst_n++;
		e->r->issued++;
		e->r->in_transit++;
		e->r->jobs[sp->job].issued++;
		if (e->r->jobs[sp->job].start_s < 0)
			e->r->jobs[sp->job].start_s = sec(e->now);
		if ((rc = sim_req_evq_push(&e->q, e->now + e->sc->net_us, EV_ARRIVE, i, 0)))
			return rc;
	}
}

static double service_s(eng *e, const sim_req_ost *o)
{
	double s = (double)o->threads / o->rate;
	if (e->sc->jitter > 0)
		s *= 1.0 + e->sc->jitter * (2.0 * sim_rng_uniform(&e->rng) - 1.0);
	return s;
}

static int ost_dispatch(eng *e, size_t o)
{
	ost_st *os = &e->os[o];
	const sim_req_ost *so = &e->sc->osts[o];
	while (os->busy < so->threads) {
		void *ptr;
		double wait;
		int rc = qos_tbf_dequeue(os->tbf, sec(e->now), &ptr, &wait);
		if (rc == -ENOENT)
			return 0;
		if (rc == -EAGAIN) {
			if (!isfinite(wait))
				return 0;
			int64_t t = e->now + to_us_ceil(wait);
			if (os->wake_us >= 0 && os->wake_us <= t)
				return 0;
			os->wake_us = t;
			return sim_req_evq_push(&e->q, t, EV_OST, (long)o, 0);
		}
		if (rc)
			return rc;
		long i = (long)((uintptr_t)ptr - 1);
		int job = e->sc->procs[e->reqs[i].proc].job;
		os->busy++;
		os->queued--;
		os->q_job[job]--;
		e->r->queued--;
		e->r->in_service++;
		double s = service_s(e, so);
		e->r->busy_s += s;
		if ((rc = sim_req_evq_push(&e->q, e->now + to_us_ceil(s), EV_DONE, i, (long)o)))
			return rc;
	}
	return 0;
}

static int on_arrive(eng *e, long i)
{
	req *rq = &e->reqs[i];
	const sim_req_proc *sp = &e->sc->procs[rq->proc];
	size_t o = (size_t)sp->ost;
	ost_st *os = &e->os[o];
	e->r->in_transit--;
	e->win_dem[sp->job] += 1;
	os->arrived_per[sp->job]++;
	if (e->sc->osts[o].queue_max && os->queued >= e->sc->osts[o].queue_max) {
		rq->dropped = 1;
		e->r->dropped++;
		e->r->jobs[sp->job].dropped++;
		return sim_req_evq_push(&e->q, e->now + e->sc->net_us, EV_REPLY, i, 0);
	}
	if (e->sc->rcc)
		qos_rcc_recv(&os->rcc, &e->ps[rq->proc].rc, sec(e->now));
	qos_tbf_key k = { .jobid = e->sc->jobs[sp->job].id, .opc = QOS_TBF_OPC_ANY,
			  .bytes = (uint64_t)(e->sc->rpc_mb * 1e6) };
	int rc = qos_tbf_enqueue(os->tbf, &k, (void *)(uintptr_t)(i + 1), sec(e->now), NULL);
	if (rc)
		return rc;
	os->queued++;
	os->q_job[sp->job]++;
	e->r->queued++;
	return ost_dispatch(e, o);
}

static int on_done(eng *e, long i, size_t o)
{
	req *rq = &e->reqs[i];
	const sim_req_proc *sp = &e->sc->procs[rq->proc];
	ost_st *os = &e->os[o];
	os->busy--;
	e->r->in_service--;
	e->r->served++;
	e->r->jobs[sp->job].served++;
	e->r->jobs[sp->job].mb += e->sc->rpc_mb;
	e->r->total_mb += e->sc->rpc_mb;
	e->win_mb[sp->job] += e->sc->rpc_mb;
	os->served_per[sp->job]++;
	if (e->sc->rcc) {
		/* cnr: the client asks for its whole max_rpcs_in_flight */
		long c = qos_rcc_reply(&os->rcc, &e->ps[rq->proc].rc, sec(rq->sent_us),
				       sp->inflight, sec(e->now));
		rq->credits = c;
	}
	int rc = sim_req_evq_push(&e->q, e->now + e->sc->net_us, EV_REPLY, i, 0);
	return rc ? rc : ost_dispatch(e, o);
}

static int on_reply(eng *e, long i)
{
	req *rq = &e->reqs[i];
	size_t p = (size_t)rq->proc;
	const sim_req_proc *sp = &e->sc->procs[p];
	proc_st *st = &e->ps[p];
	sim_req_jobres *jr = &e->r->jobs[sp->job];
	int rc;
	st->outstanding--;
	if (!rq->dropped) {
		st->done++;
		jr->replies++;
		jr->lat_sum_s += sec(e->now - rq->sent_us);
		jr->finish_s = sec(e->now);
		if (e->sc->rcc)
			st->credits = rq->credits;
		if (e->sc->ascar) {
			qos_ascar_ctl_reply(&st->asc, sec(rq->sent_us), sec(e->now));
			(void)qos_ascar_ctl_apply(&st->asc, &e->rules, sec(e->now));
		}
	}
	req_free(e, i);
	if (sp->rpcs && st->done == sp->rpcs && st->outstanding == 0)
		e->procs_left--;
	if (sp->think_us && !rq->dropped) {
		st->thinking++;
		return sim_req_evq_push(&e->q, e->now + sp->think_us, EV_THINK, (long)p, 0);
	}
	rc = proc_try_issue(e, p);
	return rc;
}

/* One AdapTBF period on OST o: observe, allocate, set the rules. */
static int adapt_period(eng *e, size_t o)
{
	const sim_req_scen *sc = e->sc;
	ost_st *os = &e->os[o];
	qos_adaptbf_obs obs[sc->n_jobs];
	size_t idx[sc->n_jobs];
	int64_t tok[sc->n_jobs];
	double rec[sc->n_jobs];
	size_t n = 0;
	double dt = sec(sc->period_us);
	int rc;
	for (size_t j = 0; j < sc->n_jobs; j++) {
		if (!os->arrived_per[j] && !os->q_job[j])
			continue;
		obs[n] = (qos_adaptbf_obs){ .id = sc->jobs[j].id, .nodes = sc->jobs[j].priority,
					    .d = (double)(os->served_per[j] + os->q_job[j]) };
		idx[n++] = j;
	}
	if ((rc = qos_adaptbf_ost_period(os->abf, obs, n, tok, rec)))
		return rc;
	int active[sc->n_jobs];
	memset(active, 0, sizeof(active));
	for (size_t k = 0; k < n; k++) {
		size_t j = idx[k];
		double rate = (double)tok[k] / dt;
		active[j] = 1;
		if (os->has_rule[j]) {
			rc = qos_tbf_rule_change(os->tbf, sc->jobs[j].id, rate, 0, QOS_TBF_RANK_KEEP,
						 sec(e->now));
		} else {
			qos_tbf_rule_spec s;
			const char *ids[1] = { sc->jobs[j].id };
			qos_tbf_rule_spec_init(&s);
			s.name = sc->jobs[j].id;
			s.jobids = ids;
			s.n_jobids = 1;
			s.rate = rate;
			rc = qos_tbf_rule_add(os->tbf, &s, sec(e->now));
			os->has_rule[j] = 1;
		}
		if (rc)
			return rc;
	}
	for (size_t j = 0; j < sc->n_jobs; j++) {
		if (os->has_rule[j] && !active[j]) {
			if ((rc = qos_tbf_rule_stop(os->tbf, sc->jobs[j].id, sec(e->now))))
				return rc;
			os->has_rule[j] = 0;
		}
		(void)qos_adaptbf_ost_record(os->abf, sc->jobs[j].id, &os->rec[j]);
		os->served_per[j] = 0;
		os->arrived_per[j] = 0;
	}
	return ost_dispatch(e, o);
}

static int on_period(eng *e)
{
	int rc;
	e->r->adapt_periods++;
	for (size_t o = 0; o < e->sc->n_osts; o++) {
		if (e->control == SIM_REQ_ADAPTBF && (rc = adapt_period(e, o)))
			return rc;
		if (e->sc->rcc)
			for (size_t p = 0; p < e->sc->n_procs; p++)
				if ((size_t)e->sc->procs[p].ost == o)
					(void)qos_rcc_ping(&e->os[o].rcc, &e->ps[p].rc, sec(e->now));
	}
	return sim_req_evq_push(&e->q, e->now + e->sc->period_us, EV_PERIOD, 0, 0);
}

static int on_sample(eng *e)
{
	sim_req_result *r = e->r;
	size_t nj = e->sc->n_jobs;
	if (r->n_samples % 256 == 0) {
		size_t cap = r->n_samples + 256;
		double *a = realloc(r->tput, cap * nj * sizeof(double));
		if (!a)
			return -ENOMEM;
		r->tput = a;
		a = realloc(r->demand, cap * nj * sizeof(double));
		if (!a)
			return -ENOMEM;
		r->demand = a;
		a = realloc(r->record, cap * nj * sizeof(double));
		if (!a)
			return -ENOMEM;
		r->record = a;
	}
	double w = sec(e->sc->sample_us);
	for (size_t j = 0; j < nj; j++) {
		double rec = 0;
		for (size_t o = 0; o < e->sc->n_osts; o++)
			rec += e->os[o].rec[j];
		r->tput[r->n_samples * nj + j] = e->win_mb[j] / w;
		r->demand[r->n_samples * nj + j] = e->win_dem[j];
		r->record[r->n_samples * nj + j] = rec;
		e->win_mb[j] = 0;
		e->win_dem[j] = 0;
	}
	r->n_samples++;
	return sim_req_evq_push(&e->q, e->now + e->sc->sample_us, EV_SAMPLE, 0, 0);
}

static int ost_setup(eng *e, size_t o)
{
	const sim_req_scen *sc = e->sc;
	ost_st *os = &e->os[o];
	size_t nj = sc->n_jobs;
	int rc;
	os->wake_us = -1;
	os->q_job = calloc(nj, sizeof(long));
	os->served_per = calloc(nj, sizeof(long));
	os->arrived_per = calloc(nj, sizeof(long));
	os->has_rule = calloc(nj, sizeof(int));
	os->rec = calloc(nj, sizeof(double));
	os->share = calloc(nj, sizeof(double));
	os->uses = calloc(nj, sizeof(int));
	if (!os->q_job || !os->served_per || !os->arrived_per || !os->has_rule || !os->rec ||
	    !os->share || !os->uses)
		return -ENOMEM;
	if ((rc = qos_tbf_create(&os->tbf)))
		return rc;
	qos_tbf_set_work_conserving(os->tbf, sc->work_conserving);
	if ((rc = qos_adaptbf_ost_create(sc->osts[o].rate, sec(sc->period_us), &os->abf)))
		return rc;
	if (sc->rcc && (rc = qos_rcc_init(&os->rcc, &sc->rccp, 0)))
		return rc;
	if (e->control != SIM_REQ_STATIC)
		return 0;
	/* Static BW: one fixed rule per job using this OST, rate × share. */
	double sum = 0;
	for (size_t p = 0; p < sc->n_procs; p++)
		if ((size_t)sc->procs[p].ost == o)
			os->uses[sc->procs[p].job] = 1;
	for (size_t j = 0; j < nj; j++)
		if (os->uses[j])
			sum += sc->jobs[j].priority;
	for (size_t j = 0; j < nj; j++) {
		if (!os->uses[j])
			continue;
		qos_tbf_rule_spec s;
		const char *ids[1] = { sc->jobs[j].id };
		qos_tbf_rule_spec_init(&s);
		s.name = sc->jobs[j].id;
		s.jobids = ids;
		s.n_jobids = 1;
		s.rate = sc->osts[o].rate * sc->jobs[j].priority / sum;
		if ((rc = qos_tbf_rule_add(os->tbf, &s, 0)))
			return rc;
		os->has_rule[j] = 1;
	}
	return 0;
}

static void eng_free(eng *e)
{
	if (e->os)
		for (size_t o = 0; o < e->sc->n_osts; o++) {
			ost_st *os = &e->os[o];
			if (os->tbf) {
				void *p;
				while (qos_tbf_drain(os->tbf, &p) == 0)
					;
				qos_tbf_destroy(os->tbf);
			}
			qos_adaptbf_ost_destroy(os->abf);
			free(os->q_job);
			free(os->served_per);
			free(os->arrived_per);
			free(os->has_rule);
			free(os->rec);
			free(os->share);
			free(os->uses);
		}
	free(e->os);
	free(e->ps);
	free(e->reqs);
	free(e->win_mb);
	free(e->win_dem);
	qos_ascar_ruleset_free(&e->rules);
	sim_req_evq_free(&e->q);
}

static int dispatch(eng *e, const sim_req_ev *ev)
{
	switch (ev->type) {
	case EV_WAKE:
		return proc_try_issue(e, (size_t)ev->a);
	case EV_THINK:
		e->ps[ev->a].thinking--;
		return proc_try_issue(e, (size_t)ev->a);
	case EV_BURST:
		e->ps[ev->a].sleeping = 0;
		e->ps[ev->a].burst_n = 0;
		return proc_try_issue(e, (size_t)ev->a);
	case EV_ARRIVE:
		return on_arrive(e, ev->a);
	case EV_DONE:
		return on_done(e, ev->a, (size_t)ev->b);
	case EV_REPLY:
		return on_reply(e, ev->a);
	case EV_OST:
		if (e->os[ev->a].wake_us == ev->t_us)
			e->os[ev->a].wake_us = -1;
		return ost_dispatch(e, (size_t)ev->a);
	case EV_PERIOD:
		return on_period(e);
	case EV_SAMPLE:
		return on_sample(e);
	}
	return -EINVAL;
}

int sim_req_run(const sim_req_scen *sc, int control, uint64_t seed, sim_req_result *out)
{
	eng e = { .sc = sc, .control = control, .r = out, .free_head = -1 };
	int rc;
	memset(out, 0, sizeof(*out));
	if (control < 0 || control >= SIM_REQ_NCONTROLS)
		return -EINVAL;
	out->control = control;
	out->n_jobs = sc->n_jobs;
	out->sample_s = sec(sc->sample_us);
	sim_req_evq_init(&e.q);
	qos_ascar_ruleset_init(&e.rules);
	sim_rng_seed(&e.rng, seed);
	out->jobs = calloc(sc->n_jobs, sizeof(*out->jobs));
	e.win_mb = calloc(sc->n_jobs, sizeof(double));
	e.win_dem = calloc(sc->n_jobs, sizeof(double));
	e.ps = calloc(sc->n_procs, sizeof(*e.ps));
	e.os = calloc(sc->n_osts, sizeof(*e.os));
	if (!out->jobs || !e.win_mb || !e.win_dem || !e.ps || !e.os) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t j = 0; j < sc->n_jobs; j++)
		out->jobs[j].start_s = out->jobs[j].finish_s = -1;
	if (sc->ascar && (rc = qos_ascar_ruleset_default(&e.rules)))
		goto out;
	for (size_t o = 0; o < sc->n_osts; o++)
		if ((rc = ost_setup(&e, o)))
			goto out;
	for (size_t p = 0; p < sc->n_procs; p++) {
		proc_st *st = &e.ps[p];
		qos_rcc_client_init(&st->rc);
		st->credits = sc->procs[p].inflight;
		if (sc->ascar) {
			double w0 = sc->procs[p].inflight > 30 ? 30 : sc->procs[p].inflight;
			if ((rc = qos_ascar_ctl_init(&st->asc, NULL, w0, 0)))
				goto out;
		}
		if (sc->procs[p].rpcs)
			e.finite_procs++;
		if ((rc = sim_req_evq_push(&e.q, sc->procs[p].start_us, EV_WAKE, (long)p, 0)))
			goto out;
	}
	e.procs_left = e.finite_procs;
	if ((rc = sim_req_evq_push(&e.q, 0, EV_PERIOD, 0, 0)) ||
	    (rc = sim_req_evq_push(&e.q, sc->sample_us, EV_SAMPLE, 0, 0)))
		goto out;
	sim_req_ev ev;
	while (sim_req_evq_pop(&e.q, &ev) == 0) {
		if (ev.t_us > sc->duration_us)
			break;
		if (e.finite_procs == (long)sc->n_procs && e.procs_left == 0)
			break;
		e.now = ev.t_us;
		out->events++;
		if ((rc = dispatch(&e, &ev)))
			goto out;
	}
	out->end_s = sec(e.now);
	for (size_t j = 0; j < sc->n_jobs; j++)
		for (size_t o = 0; o < sc->n_osts; o++)
			out->jobs[j].record += e.os[o].rec[j];
	rc = 0;
out:
	eng_free(&e);
	if (rc)
		sim_req_result_free(out);
	return rc;
}

void sim_req_result_free(sim_req_result *r)
{
	free(r->jobs);
	free(r->tput);
	free(r->demand);
	free(r->record);
	memset(r, 0, sizeof(*r));
}

json_t *sim_req_result_json(const sim_req_scen *sc, const sim_req_result *r, int with_series)
{
	json_t *o = json_object(), *jobs = json_array();
	if (!o || !jobs)
		goto nomem;
	json_object_set_new(o, "control", json_string(sim_req_control_name(r->control)));
	json_object_set_new(o, "end_s", json_real(r->end_s));
	json_object_set_new(o, "total_mb", json_real(r->total_mb));
	json_object_set_new(o, "total_mbps", json_real(r->end_s > 0 ? r->total_mb / r->end_s : 0));
	json_object_set_new(o, "utilisation",
			    json_real(r->end_s > 0 ? r->busy_s / (r->end_s * (double)sc->n_osts) : 0));
	json_t *cons = json_pack("{s:I,s:I,s:I,s:I,s:I,s:I}", "issued", (json_int_t)r->issued,
				 "served", (json_int_t)r->served, "dropped", (json_int_t)r->dropped,
				 "queued", (json_int_t)r->queued, "in_service",
				 (json_int_t)r->in_service, "in_transit", (json_int_t)r->in_transit);
	if (!cons)
		goto nomem;
	json_object_set_new(o, "requests", cons);
	json_object_set_new(o, "events", json_integer((json_int_t)r->events));
	for (size_t j = 0; j < r->n_jobs; j++) {
		const sim_req_jobres *jr = &r->jobs[j];
		double span = jr->finish_s > jr->start_s ? jr->finish_s - jr->start_s : 0;
		json_t *x = json_pack("{s:s,s:f,s:I,s:I,s:f,s:f,s:f,s:f,s:f}", "id",
				      sc->jobs[j].id, "priority", sc->jobs[j].priority, "served",
				      (json_int_t)jr->served, "dropped", (json_int_t)jr->dropped,
				      "mb", jr->mb, "mbps", span > 0 ? jr->mb / span : 0.0,
				      "finish_s", jr->finish_s, "mean_latency_ms",
				      jr->replies ? 1e3 * jr->lat_sum_s / (double)jr->replies : 0.0,
				      "record", jr->record);
		if (!x || json_array_append_new(jobs, x))
			goto nomem;
	}
	json_object_set_new(o, "jobs", jobs);
	jobs = NULL;
	if (with_series) {
		json_t *s = json_object(), *t = json_array();
		if (!s || !t) {
			json_decref(s);
			json_decref(t);
			goto nomem;
		}
		for (size_t k = 0; k < r->n_samples; k++)
			json_array_append_new(t, json_real((double)(k + 1) * r->sample_s));
		json_object_set_new(s, "t", t);
		const char *names[3] = { "mbps", "demand", "record" };
		const double *src[3] = { r->tput, r->demand, r->record };
		for (int m = 0; m < 3; m++) {
			json_t *mo = json_object();
			if (!mo)
				break;
			for (size_t j = 0; j < r->n_jobs; j++) {
				json_t *a = json_array();
				for (size_t k = 0; a && k < r->n_samples; k++)
					json_array_append_new(a, json_real(src[m][k * r->n_jobs + j]));
				json_object_set_new(mo, sc->jobs[j].id, a);
			}
			json_object_set_new(s, names[m], mo);
		}
		json_object_set_new(o, "series", s);
	}
	return o;
nomem:
	json_decref(jobs);
	json_decref(o);
	return NULL;
}
