/* sim_req_evq.c — the event heap of the request-level simulator (see
 * sim_req_evq.h). */
#include "bench/sim/sim_req_evq.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void sim_req_evq_init(sim_req_evq *q)
{
	memset(q, 0, sizeof(*q));
}

void sim_req_evq_free(sim_req_evq *q)
{
	free(q->h);
	memset(q, 0, sizeof(*q));
}

static int before(const sim_req_ev *x, const sim_req_ev *y)
{
	if (x->t_us != y->t_us)
		return x->t_us < y->t_us;
	return x->seq < y->seq;
}

int sim_req_evq_push(sim_req_evq *q, int64_t t_us, int type, long a, long b)
{
	if (t_us < 0)
		return -EINVAL;
	if (q->n == q->cap) {
		size_t cap = q->cap ? q->cap * 2 : 256;
		sim_req_ev *h = realloc(q->h, cap * sizeof(*h));
		if (!h)
			return -ENOMEM;
		q->h = h;
		q->cap = cap;
	}
	sim_req_ev ev = { .t_us = t_us, .seq = q->next_seq++, .type = type, .a = a, .b = b };
	size_t i = q->n++;
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (!before(&ev, &q->h[p]))
			break;
		q->h[i] = q->h[p];
		i = p;
	}
	q->h[i] = ev;
	return 0;
}

int sim_req_evq_pop(sim_req_evq *q, sim_req_ev *ev)
{
	if (!q->n)
		return -ENOENT;
	*ev = q->h[0];
	sim_req_ev last = q->h[--q->n];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= q->n)
			break;
		if (c + 1 < q->n && before(&q->h[c + 1], &q->h[c]))
			c++;
		if (!before(&q->h[c], &last))
			break;
		q->h[i] = q->h[c];
		i = c;
	}
	if (q->n)
		q->h[i] = last;
	return 0;
}
