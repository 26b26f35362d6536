/* ascar.c — ASCAR congestion indicators, rule sets (with their text
 * format) and window/rate-gap actions (ascar.txt sec. III; see ascar.h). */
#include "qos/ascar.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- rule sets -------------------------------------------------------- */

void qos_ascar_ruleset_init(qos_ascar_ruleset *rs)
{
	rs->r = NULL;
	rs->n = rs->cap = 0;
}

void qos_ascar_ruleset_free(qos_ascar_ruleset *rs)
{
	free(rs->r);
	qos_ascar_ruleset_init(rs);
}

static int rs_reserve(qos_ascar_ruleset *rs, size_t n)
{
	qos_ascar_rule *r;
	size_t cap;

	if (n <= rs->cap)
		return 0;
	cap = rs->cap ? rs->cap : 8;
	while (cap < n)
		cap *= 2;
	r = realloc(rs->r, cap * sizeof(*r));
	if (!r)
		return -ENOMEM;
	rs->r = r;
	rs->cap = cap;
	return 0;
}

int qos_ascar_ruleset_copy(qos_ascar_ruleset *dst, const qos_ascar_ruleset *src)
{
	int rc = rs_reserve(dst, src->n);

	if (rc)
		return rc;
	if (src->n)
		memcpy(dst->r, src->r, src->n * sizeof(*src->r));
	dst->n = src->n;
	return 0;
}

static int box_valid(const double lo[QOS_ASCAR_DIM], const double hi[QOS_ASCAR_DIM])
{
	for (int d = 0; d < QOS_ASCAR_DIM; d++)
		if (!isfinite(lo[d]) || lo[d] < 0 || isnan(hi[d]) || !(lo[d] < hi[d]))
			return 0;
	return 1;
}

static int action_valid(qos_ascar_action a)
{
	return isfinite(a.m) && isfinite(a.b) && isfinite(a.tau) && a.tau >= 0;
}

static int boxes_overlap(const qos_ascar_rule *x, const double lo[QOS_ASCAR_DIM],
			 const double hi[QOS_ASCAR_DIM])
{
	for (int d = 0; d < QOS_ASCAR_DIM; d++)
		if (!(x->lo[d] < hi[d] && lo[d] < x->hi[d]))
			return 0;
	return 1;
}

int qos_ascar_ruleset_add(qos_ascar_ruleset *rs, const double lo[QOS_ASCAR_DIM],
			  const double hi[QOS_ASCAR_DIM], qos_ascar_action a)
{
	qos_ascar_rule *r;
	int rc;

	if (!box_valid(lo, hi) || !action_valid(a))
		return -EINVAL;
	for (size_t i = 0; i < rs->n; i++)
		if (boxes_overlap(&rs->r[i], lo, hi))
			return -EINVAL;
	rc = rs_reserve(rs, rs->n + 1);
	if (rc)
		return rc;
	r = &rs->r[rs->n++];
	memset(r, 0, sizeof(*r));
	memcpy(r->lo, lo, sizeof(r->lo));
	memcpy(r->hi, hi, sizeof(r->hi));
	r->a = a;
	return 0;
}

int qos_ascar_ruleset_default(qos_ascar_ruleset *rs)
{
	/* Alg. 1 line 3: ruleset <- <[0,inf), [0,inf), [1,inf)> -> <1, 0, 20000>.
	 * pt_ratio starts at 0 rather than 1 so that states before the first
	 * process time (ratio undefined) also match. */
	const double lo[QOS_ASCAR_DIM] = { 0, 0, 0 };
	const double hi[QOS_ASCAR_DIM] = { INFINITY, INFINITY, INFINITY };
	const qos_ascar_action a = { 1, 0, 20000 };

	rs->n = 0;
	return qos_ascar_ruleset_add(rs, lo, hi, a);
}

int qos_ascar_ruleset_lookup(const qos_ascar_ruleset *rs,
			     const double c[QOS_ASCAR_DIM])
{
	for (size_t i = 0; i < rs->n; i++) {
		const qos_ascar_rule *r = &rs->r[i];
		int d;
		for (d = 0; d < QOS_ASCAR_DIM; d++)
			if (!(c[d] >= r->lo[d] && c[d] < r->hi[d]))
				break;
		if (d == QOS_ASCAR_DIM)
			return (int)i;
	}
	return -ENOENT;
}

void qos_ascar_ruleset_clear_stats(qos_ascar_ruleset *rs)
{
	for (size_t i = 0; i < rs->n; i++) {
		rs->r[i].hits = 0;
		memset(rs->r[i].sum, 0, sizeof(rs->r[i].sum));
	}
}

/* ---- text format ------------------------------------------------------ */

static void skip_blank(const char **p)
{
	while (**p == ' ' || **p == '\t' || **p == '\r')
		(*p)++;
}

/* A number on this line (strtod would skip newlines, so check first). */
static int parse_num(const char **p, double *v)
{
	char *end;

	skip_blank(p);
	if (**p == '\0' || **p == '\n' || **p == '#')
		return -EINVAL;
	*v = strtod(*p, &end);
	if (end == *p || isnan(*v))
		return -EINVAL;
	*p = end;
	return 0;
}

static int parse_char(const char **p, char c)
{
	skip_blank(p);
	if (**p != c)
		return -EINVAL;
	(*p)++;
	return 0;
}

static int parse_line(const char *p, qos_ascar_ruleset *rs, int *blank)
{
	double lo[QOS_ASCAR_DIM], hi[QOS_ASCAR_DIM];
	qos_ascar_action a;

	skip_blank(&p);
	*blank = *p == '\0' || *p == '\n' || *p == '#';
	if (*blank)
		return 0;
	for (int d = 0; d < QOS_ASCAR_DIM; d++)
		if (parse_char(&p, '[') || parse_num(&p, &lo[d]) ||
		    parse_char(&p, ',') || parse_num(&p, &hi[d]) ||
		    parse_char(&p, ')'))
			return -EINVAL;
	if (parse_num(&p, &a.m) || parse_num(&p, &a.b) || parse_num(&p, &a.tau))
		return -EINVAL;
	skip_blank(&p);
	if (*p != '\0' && *p != '\n' && *p != '#')
		return -EINVAL; /* trailing garbage */
	return qos_ascar_ruleset_add(rs, lo, hi, a);
}

int qos_ascar_ruleset_parse(const char *text, qos_ascar_ruleset *rs, int *line)
{
	int ln = 0, rc = 0;

	if (line)
		*line = 0;
	rs->n = 0;
	if (!text)
		return -EINVAL;
	for (const char *p = text; *p || ln == 0;) {
		int blank;
		ln++;
		rc = parse_line(p, rs, &blank);
		if (rc) {
			if (line)
				*line = ln;
			goto out;
		}
		p = strchr(p, '\n');
		if (!p)
			break;
		p++;
	}
	if (rs->n == 0)
		rc = -EINVAL; /* *line stays 0: the input as a whole */
out:
	if (rc)
		rs->n = 0;
	return rc;
}

/* Shortest %g form that reads back to exactly v. */
static void fmt_num(char *out, size_t size, double v)
{
	if (isinf(v)) {
		snprintf(out, size, "inf");
		return;
	}
	for (int prec = 6; prec <= 17; prec++) {
		snprintf(out, size, "%.*g", prec, v);
		if (strtod(out, NULL) == v)
			return;
	}
}

struct outbuf {
	char *buf;
	size_t size, len;
};

static void out_printf(struct outbuf *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void out_printf(struct outbuf *o, const char *fmt, ...)
{
	va_list ap;
	size_t room = o->len < o->size ? o->size - o->len : 0;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(room ? o->buf + o->len : NULL, room, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->len += (size_t)n;
}

size_t qos_ascar_ruleset_print(const qos_ascar_ruleset *rs, char *buf,
			       size_t size)
{
	struct outbuf o = { buf, size, 0 };
	char v[6][32];

	if (size)
		buf[0] = '\0';
	out_printf(&o, "# ack_ewma(ms)  send_ewma(ms)  pt_ratio  m  b  tau(us)\n");
	for (size_t i = 0; i < rs->n; i++) {
		const qos_ascar_rule *r = &rs->r[i];
		for (int d = 0; d < QOS_ASCAR_DIM; d++) {
			fmt_num(v[2 * d], sizeof(v[0]), r->lo[d]);
			fmt_num(v[2 * d + 1], sizeof(v[0]), r->hi[d]);
		}
		out_printf(&o, "[%s, %s)  [%s, %s)  [%s, %s)", v[0], v[1], v[2],
			   v[3], v[4], v[5]);
		fmt_num(v[0], sizeof(v[0]), r->a.m);
		fmt_num(v[1], sizeof(v[0]), r->a.b);
		fmt_num(v[2], sizeof(v[0]), r->a.tau);
		out_printf(&o, "  %s  %s  %s\n", v[0], v[1], v[2]);
	}
	return o.len;
}

/* ---- controller ------------------------------------------------------- */

int qos_ascar_ctl_init(qos_ascar_ctl *ctl, const qos_ascar_params *p,
		       double cwnd0, double tau0)
{
	qos_ascar_params q = p ? *p : (qos_ascar_params){ 0 };

	if (q.alpha == 0)
		q.alpha = 1.0 / 8;
	if (q.cwnd_min == 0)
		q.cwnd_min = 1;
	if (q.cwnd_max == 0)
		q.cwnd_max = 30;
	if (q.max_changes == 0)
		q.max_changes = 2;
	if (!(q.alpha > 0 && q.alpha <= 1) || !(q.cwnd_min >= 1) ||
	    !(q.cwnd_max >= q.cwnd_min) || !isfinite(q.cwnd_max) ||
	    !(q.max_changes > 0) || !(cwnd0 >= q.cwnd_min && cwnd0 <= q.cwnd_max) ||
	    !(tau0 >= 0) || !isfinite(tau0))
		return -EINVAL;
	*ctl = (qos_ascar_ctl){ .p = q, .cwnd = cwnd0, .tau = tau0 };
	ctl->c[QOS_ASCAR_PT] = 1;
	return 0;
}

static double ewma(double e, double x, double alpha, int first)
{
	return first ? x : (1 - alpha) * e + alpha * x;
}

void qos_ascar_ctl_reply(qos_ascar_ctl *ctl, double sent_at, double now)
{
	double pt = now - sent_at;

	/* Table I, pt_ratio: current PT / shortest PT seen so far. */
	if (pt >= 0 && (ctl->replies == 0 || pt < ctl->pt_min))
		ctl->pt_min = pt;
	ctl->c[QOS_ASCAR_PT] = ctl->pt_min > 0 && pt > 0 ? pt / ctl->pt_min : 1;
	if (ctl->replies > 0) {
		/* Table I: EWMAs of reply gaps and of their requests' send
		 * gaps, in ms. */
		double ack_gap = (now - ctl->last_reply) * 1e3;
		double send_gap = fabs(sent_at - ctl->last_sent) * 1e3;
		int first = ctl->replies == 1;
		if (ack_gap < 0)
			ack_gap = 0;
		ctl->c[QOS_ASCAR_ACK] = ewma(ctl->c[QOS_ASCAR_ACK], ack_gap,
					     ctl->p.alpha, first);
		ctl->c[QOS_ASCAR_SEND] = ewma(ctl->c[QOS_ASCAR_SEND], send_gap,
					      ctl->p.alpha, first);
	}
	ctl->last_reply = now;
	ctl->last_sent = sent_at;
	ctl->replies++;
}

int qos_ascar_ctl_apply(qos_ascar_ctl *ctl, qos_ascar_ruleset *rs, double now)
{
	qos_ascar_rule *r;
	double w;
	int i;

	/* Sec. III-D: at most two window changes per second. */
	if (ctl->changed && now - ctl->last_change < 1.0 / ctl->p.max_changes)
		return -EAGAIN;
	i = qos_ascar_ruleset_lookup(rs, ctl->c);
	if (i < 0)
		return i;
	r = &rs->r[i];
	/* cwnd = m * cwnd + b, within [cwnd_min, cwnd_max] */
	w = r->a.m * ctl->cwnd + r->a.b;
	if (w < ctl->p.cwnd_min)
		w = ctl->p.cwnd_min;
	if (w > ctl->p.cwnd_max)
		w = ctl->p.cwnd_max;
	ctl->cwnd = w;
	ctl->tau = r->a.tau;
	ctl->last_change = now;
	ctl->changed = 1;
	/* Statistics for SHARP: uses and the mean state when used. */
	r->hits += 1;
	for (int d = 0; d < QOS_ASCAR_DIM; d++)
		r->sum[d] += ctl->c[d];
	return i;
}

unsigned qos_ascar_ctl_window(const qos_ascar_ctl *ctl)
{
	double w = floor(ctl->cwnd);

	return w < 1 ? 1u : (unsigned)w;
}

void qos_ascar_ctl_sent(qos_ascar_ctl *ctl, double now)
{
	ctl->last_send = now;
	ctl->sent = 1;
}

double qos_ascar_ctl_send_wait(const qos_ascar_ctl *ctl, double now)
{
	double next;

	if (!ctl->sent)
		return 0;
	next = ctl->last_send + ctl->tau * 1e-6; /* tau in us */
	return next > now ? next - now : 0;
}
