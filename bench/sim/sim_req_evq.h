/* sim_req_evq.h — the discrete-event clock of `pfs-sim req`: a binary
 * min-heap of events keyed by (time in integer microseconds, insertion
 * sequence), so events at the same microsecond come out in the order they
 * were scheduled and a run is repeatable bit for bit.
 *
 * An event is a type code and two integer arguments; the engine
 * (sim_req.c) gives them meaning.  The queue owns its array; events own
 * nothing.  Not thread-safe (one queue per simulation). */
#ifndef SIM_REQ_EVQ_H
#define SIM_REQ_EVQ_H

#include <stddef.h>
#include <stdint.h>

typedef struct sim_req_ev {
	int64_t t_us;  /* when, microseconds since the start */
	uint64_t seq;  /* insertion order: the tie-break */
	int type;      /* engine-defined */
	long a, b;     /* engine-defined arguments */
} sim_req_ev;

typedef struct sim_req_evq {
	sim_req_ev *h;
	size_t n, cap;
	uint64_t next_seq;
} sim_req_evq;

void sim_req_evq_init(sim_req_evq *q);
void sim_req_evq_free(sim_req_evq *q);
/* Schedule an event.  Returns 0, -EINVAL (t_us < 0) or -ENOMEM. */
int sim_req_evq_push(sim_req_evq *q, int64_t t_us, int type, long a, long b);
/* Take the earliest event (ties: the one pushed first) into *ev.
 * Returns 0 or -ENOENT when empty. */
int sim_req_evq_pop(sim_req_evq *q, sim_req_ev *ev);
static inline size_t sim_req_evq_len(const sim_req_evq *q) { return q->n; }

#endif
