/* tbf.c — NRS TBF scheduler: rules, per-(rule, job) classes with token
 * buckets, a deadline heap and an unlimited fallback queue (see tbf.h).
 *
 * Data structures: rules in a singly linked list sorted by (rank, age),
 * each counting the requests queued in its classes; classes in a chained
 * hash table keyed by (rule, job id); backlogged classes in a binary
 * min-heap keyed by (deadline, rank, age) with each class remembering its
 * heap slot so a deadline change is O(log n); request nodes recycled
 * through a free list so the steady state does not call malloc.  A request
 * node keeps its key (minus the job id, which its class holds) so a stopped
 * rule's requests can be classified again, with the cost of their new
 * rule's unit. */
#include "qos/tbf.h"
#include "qos/bucket.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NO_SLOT ((size_t)-1)

struct tbf_req {
	struct tbf_req *next;
	void *req;
	double cost;     /* tokens, in the unit of the class's rule */
	uint64_t bytes;
	uint32_t uid, gid;
	int opc;
};

struct tbf_fifo {
	struct tbf_req *head, *tail;
	size_t n;
};

struct tbf_pat {
	char s[QOS_TBF_ID_MAX];
	size_t plen;             /* bytes of s before a trailing '*' */
	int prefix;              /* s ends in '*' */
};

struct tbf_rule {
	struct tbf_rule *next;   /* rule list, sorted by (rank, seq) */
	char name[QOS_TBF_ID_MAX];
	int64_t uid, gid;        /* -1: any */
	uint32_t opc_mask;
	int unit;
	double rate, depth;      /* depth: effective, > 0 */
	int rank;
	uint64_t seq;            /* age: rules added earlier match first on ties */
	size_t queued;           /* requests in this rule's classes */
	size_t n_pats;           /* 0: any job */
	const char *jobv[QOS_TBF_JOBS_MAX]; /* pats[i].s, for qos_tbf_rule_get */
	struct tbf_pat pats[];
};

struct tbf_class {
	struct tbf_class *hnext; /* hash chain */
	struct tbf_rule *rule;
	char job[QOS_TBF_ID_MAX];
	uint64_t hash;
	uint64_t seq;            /* creation order, last heap tie-break */
	qos_bucket bkt;
	struct tbf_fifo q;
	double deadline;         /* when the head request's tokens are there */
	size_t slot;             /* index in the heap, NO_SLOT if not backlogged */
};

struct qos_tbf {
	struct tbf_rule *rules;
	size_t n_rules;
	uint64_t rule_seq, class_seq;

	struct tbf_class **tab;  /* hash table of classes */
	size_t n_tab, n_classes;

	struct tbf_class **heap; /* backlogged classes */
	size_t n_heap, cap_heap;

	struct tbf_fifo fallback;
	struct tbf_req *free_reqs;
	size_t queued;
	int work_conserving;
};

/* ---- FIFO and request nodes ------------------------------------------ */

static struct tbf_req *req_alloc(qos_tbf *t)
{
	struct tbf_req *r = t->free_reqs;

	if (r) {
		t->free_reqs = r->next;
		return r;
	}
	return malloc(sizeof(*r));
}

static void req_free(qos_tbf *t, struct tbf_req *r)
{
	r->next = t->free_reqs;
	t->free_reqs = r;
}

static void fifo_push(struct tbf_fifo *f, struct tbf_req *r)
{
	r->next = NULL;
	if (f->tail)
		f->tail->next = r;
	else
		f->head = r;
	f->tail = r;
	f->n++;
}

static struct tbf_req *fifo_pop(struct tbf_fifo *f)
{
	struct tbf_req *r = f->head;

	if (!r)
		return NULL;
	f->head = r->next;
	if (!f->head)
		f->tail = NULL;
	f->n--;
	return r;
}

/* A class's queue: the rule's count follows every push and pop. */
static void class_push(struct tbf_class *c, struct tbf_req *r)
{
	fifo_push(&c->q, r);
	c->rule->queued++;
}

static struct tbf_req *class_pop(struct tbf_class *c)
{
	struct tbf_req *r = fifo_pop(&c->q);

	if (r) {
		assert(c->rule->queued > 0);
		c->rule->queued--;
	}
	return r;
}

/* ---- deadline heap ---------------------------------------------------- */

static int class_before(const struct tbf_class *a, const struct tbf_class *b)
{
	if (a->deadline != b->deadline)
		return a->deadline < b->deadline;
	if (a->rule->rank != b->rule->rank)
		return a->rule->rank < b->rule->rank;
	return a->seq < b->seq;
}

static void heap_set(qos_tbf *t, size_t i, struct tbf_class *c)
{
	t->heap[i] = c;
	c->slot = i;
}

static void heap_up(qos_tbf *t, size_t i)
{
	struct tbf_class *c = t->heap[i];

	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (!class_before(c, t->heap[p]))
			break;
		heap_set(t, i, t->heap[p]);
		i = p;
	}
	heap_set(t, i, c);
}

static void heap_down(qos_tbf *t, size_t i)
{
	struct tbf_class *c = t->heap[i];

	for (;;) {
		size_t l = 2 * i + 1, m = l;
		if (l >= t->n_heap)
			break;
		if (l + 1 < t->n_heap && class_before(t->heap[l + 1], t->heap[l]))
			m = l + 1;
		if (!class_before(t->heap[m], c))
			break;
		heap_set(t, i, t->heap[m]);
		i = m;
	}
	heap_set(t, i, c);
}

static int heap_insert(qos_tbf *t, struct tbf_class *c)
{
	if (t->n_heap == t->cap_heap) {
		size_t cap = t->cap_heap ? 2 * t->cap_heap : 16;
		struct tbf_class **h = realloc(t->heap, cap * sizeof(*h));
		if (!h)
			return -ENOMEM;
		t->heap = h;
		t->cap_heap = cap;
	}
	heap_set(t, t->n_heap++, c);
	heap_up(t, c->slot);
	return 0;
}

static void heap_remove(qos_tbf *t, struct tbf_class *c)
{
	size_t i = c->slot;

	if (i == NO_SLOT)
		return;
	c->slot = NO_SLOT;
	if (--t->n_heap == i)
		return;
	struct tbf_class *m = t->heap[t->n_heap];
	heap_set(t, i, m);
	heap_up(t, i);
	heap_down(t, m->slot);
}

/* Recompute a class's deadline from its head request at time now and put
 * it where it belongs in the heap (in, moved, or out if now empty).  The
 * heap slot always exists for a backlogged class: it was reserved when the
 * class first became backlogged, so this cannot fail. */
static void class_reschedule(qos_tbf *t, struct tbf_class *c, double now)
{
	if (!c->q.head) {
		heap_remove(t, c);
		return;
	}
	/* Next token time: a request larger than the depth waits for a full
	 * bucket and then runs into debt (qos_bucket_wait caps at depth). */
	c->deadline = now + qos_bucket_wait(&c->bkt, c->q.head->cost, now);
	heap_up(t, c->slot);
	heap_down(t, c->slot);
}

/* ---- classes ---------------------------------------------------------- */

static uint64_t hash_key(const struct tbf_rule *r, const char *job)
{
	uint64_t h = 1469598103934665603ULL ^ (uint64_t)r->seq * 0x9e3779b97f4a7c15ULL;

	for (const unsigned char *p = (const unsigned char *)job; *p; p++)
		h = (h ^ *p) * 1099511628211ULL;
	return h;
}

static struct tbf_class *class_find(const qos_tbf *t, const struct tbf_rule *r,
				    const char *job, uint64_t h)
{
	if (!t->n_tab)
		return NULL;
	for (struct tbf_class *c = t->tab[h % t->n_tab]; c; c = c->hnext)
		if (c->hash == h && c->rule == r && strcmp(c->job, job) == 0)
			return c;
	return NULL;
}

static int tab_grow(qos_tbf *t)
{
	size_t n = t->n_tab ? 2 * t->n_tab : 64;
	struct tbf_class **tab = calloc(n, sizeof(*tab));

	if (!tab)
		return -ENOMEM;
	for (size_t i = 0; i < t->n_tab; i++) {
		struct tbf_class *c = t->tab[i], *next;
		for (; c; c = next) {
			next = c->hnext;
			c->hnext = tab[c->hash % n];
			tab[c->hash % n] = c;
		}
	}
	free(t->tab);
	t->tab = tab;
	t->n_tab = n;
	return 0;
}

static int class_get(qos_tbf *t, struct tbf_rule *r, const char *job,
		     double now, struct tbf_class **out)
{
	uint64_t h = hash_key(r, job);
	struct tbf_class *c = class_find(t, r, job, h);
	int rc;

	if (c)
		goto found;
	if (t->n_classes >= t->n_tab) {
		rc = tab_grow(t);
		if (rc)
			return rc;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->rule = r;
	strcpy(c->job, job); /* length checked by the caller */
	c->hash = h;
	c->seq = t->class_seq++;
	c->slot = NO_SLOT;
	/* A new class starts with a full bucket (Lustre does the same). */
	rc = qos_bucket_init(&c->bkt, r->rate, r->depth, now);
	if (rc) {
		free(c);
		return rc;
	}
	c->hnext = t->tab[h % t->n_tab];
	t->tab[h % t->n_tab] = c;
	t->n_classes++;
found:
	*out = c;
	return 0;
}

static void class_unlink_free(qos_tbf *t, struct tbf_class *c)
{
	struct tbf_class **pp = &t->tab[c->hash % t->n_tab];

	while (*pp != c)
		pp = &(*pp)->hnext;
	*pp = c->hnext;
	heap_remove(t, c);
	t->n_classes--;
	free(c);
}

/* ---- rules ------------------------------------------------------------ */

static int pat_matches(const struct tbf_pat *p, const char *job)
{
	if (p->prefix)
		return strncmp(job, p->s, p->plen) == 0;
	return strcmp(job, p->s) == 0;
}

static int rule_matches(const struct tbf_rule *r, const char *job,
			const struct tbf_req *q)
{
	if (r->opc_mask && (q->opc < 0 || !(r->opc_mask & (1u << q->opc))))
		return 0;
	if (r->uid >= 0 && (uint32_t)r->uid != q->uid)
		return 0;
	if (r->gid >= 0 && (uint32_t)r->gid != q->gid)
		return 0;
	if (!r->n_pats)
		return 1;
	for (size_t i = 0; i < r->n_pats; i++)
		if (pat_matches(&r->pats[i], job))
			return 1;
	return 0;
}

static struct tbf_rule *rule_match(const qos_tbf *t, const char *job,
				   const struct tbf_req *q,
				   const struct tbf_rule *skip)
{
	for (struct tbf_rule *r = t->rules; r; r = r->next)
		if (r != skip && rule_matches(r, job, q))
			return r;
	return NULL;
}

static struct tbf_rule **rule_slot(qos_tbf *t, const char *name)
{
	struct tbf_rule **pp = &t->rules;

	while (*pp && strcmp((*pp)->name, name) != 0)
		pp = &(*pp)->next;
	return pp;
}

static void rule_insert_sorted(qos_tbf *t, struct tbf_rule *r)
{
	struct tbf_rule **pp = &t->rules;

	while (*pp && ((*pp)->rank < r->rank ||
		       ((*pp)->rank == r->rank && (*pp)->seq < r->seq)))
		pp = &(*pp)->next;
	r->next = *pp;
	*pp = r;
}

/* A rule name or pattern: non-empty and short enough. */
static int valid_id(const char *s)
{
	return s && s[0] && strnlen(s, QOS_TBF_ID_MAX) < QOS_TBF_ID_MAX;
}

static int valid_rate(double rate)
{
	return isfinite(rate) && rate >= 0;
}

static int valid_spec(const qos_tbf_rule_spec *s)
{
	if (!s || !valid_id(s->name) || s->n_jobids > QOS_TBF_JOBS_MAX ||
	    (s->n_jobids && !s->jobids))
		return 0;
	for (size_t i = 0; i < s->n_jobids; i++)
		if (!valid_id(s->jobids[i]))
			return 0;
	if (s->uid < -1 || s->uid > (int64_t)UINT32_MAX ||
	    s->gid < -1 || s->gid > (int64_t)UINT32_MAX)
		return 0;
	if (s->unit != QOS_TBF_UNIT_RPC && s->unit != QOS_TBF_UNIT_BYTE)
		return 0;
	return valid_rate(s->rate) && valid_rate(s->depth) &&
	       s->rank != QOS_TBF_RANK_KEEP;
}

static double default_depth(int unit)
{
	return unit == QOS_TBF_UNIT_BYTE ? QOS_TBF_DEPTH_DEFAULT_BYTES
					 : QOS_TBF_DEPTH_DEFAULT;
}

void qos_tbf_rule_spec_init(qos_tbf_rule_spec *spec)
{
	memset(spec, 0, sizeof(*spec));
	spec->uid = -1;
	spec->gid = -1;
	spec->unit = QOS_TBF_UNIT_RPC;
}

int qos_tbf_create(qos_tbf **out)
{
	qos_tbf *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	*out = t;
	return 0;
}

static void free_reqs(struct tbf_req *r)
{
	struct tbf_req *next;

	for (; r; r = next) {
		next = r->next;
		free(r);
	}
}

void qos_tbf_destroy(qos_tbf *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n_tab; i++) {
		struct tbf_class *c = t->tab[i], *cn;
		for (; c; c = cn) {
			cn = c->hnext;
			free_reqs(c->q.head);
			free(c);
		}
	}
	free_reqs(t->fallback.head);
	free_reqs(t->free_reqs);
	for (struct tbf_rule *u = t->rules, *un; u; u = un) {
		un = u->next;
		free(u);
	}
	free(t->tab);
	free(t->heap);
	free(t);
}

void qos_tbf_set_work_conserving(qos_tbf *t, int on)
{
	t->work_conserving = !!on;
}

int qos_tbf_rule_add(qos_tbf *t, const qos_tbf_rule_spec *spec, double now)
{
	struct tbf_rule *r;

	if (!valid_spec(spec))
		return -EINVAL;
	if (*rule_slot(t, spec->name))
		return -EEXIST;
	r = calloc(1, sizeof(*r) + spec->n_jobids * sizeof(r->pats[0]));
	if (!r)
		return -ENOMEM;
	strcpy(r->name, spec->name);
	r->n_pats = spec->n_jobids;
	for (size_t i = 0; i < r->n_pats; i++) {
		struct tbf_pat *p = &r->pats[i];
		size_t len = strlen(spec->jobids[i]);

		memcpy(p->s, spec->jobids[i], len + 1);
		p->prefix = p->s[len - 1] == '*';
		p->plen = p->prefix ? len - 1 : len;
		r->jobv[i] = p->s;
	}
	r->uid = spec->uid;
	r->gid = spec->gid;
	r->opc_mask = spec->opc_mask;
	r->unit = spec->unit;
	r->rate = spec->rate;
	r->depth = spec->depth > 0 ? spec->depth : default_depth(spec->unit);
	r->rank = spec->rank;
	r->seq = t->rule_seq++;
	rule_insert_sorted(t, r);
	t->n_rules++;
	(void)now; /* classes are created lazily, with full buckets */
	return 0;
}

int qos_tbf_rule_change(qos_tbf *t, const char *name, double rate,
			double depth, int rank, double now)
{
	struct tbf_rule **pp = name ? rule_slot(t, name) : NULL;
	struct tbf_rule *r;

	if (!pp || !*pp)
		return -ENOENT;
	r = *pp;
	if (!valid_rate(rate) || !valid_rate(depth))
		return -EINVAL;
	r->rate = rate;
	if (depth > 0)
		r->depth = depth;
	for (size_t i = 0; i < t->n_tab; i++)
		for (struct tbf_class *c = t->tab[i]; c; c = c->hnext) {
			if (c->rule != r)
				continue;
			/* Tokens earned up to now count at the old rate. */
			qos_bucket_set_rate(&c->bkt, rate, now);
			qos_bucket_set_depth(&c->bkt, r->depth, now);
			if (c->slot != NO_SLOT)
				class_reschedule(t, c, now);
		}
	if (rank != QOS_TBF_RANK_KEEP && rank != r->rank) {
		/* The rule keeps its age (seq): among equal ranks it stays
		 * where its creation put it. */
		*pp = r->next;
		r->rank = rank;
		rule_insert_sorted(t, r);
		/* Ranks break deadline ties: rebuild the heap order. */
		for (size_t i = t->n_heap / 2; i-- > 0;)
			heap_down(t, i);
	}
	return 0;
}

size_t qos_tbf_rule_count(const qos_tbf *t)
{
	return t->n_rules;
}

int qos_tbf_rule_get(const qos_tbf *t, size_t i, qos_tbf_rule_spec *spec,
		     size_t *queued)
{
	const struct tbf_rule *r = t->rules;

	while (r && i--)
		r = r->next;
	if (!r)
		return -ENOENT;
	spec->name = r->name;
	spec->jobids = r->n_pats ? r->jobv : NULL;
	spec->n_jobids = r->n_pats;
	spec->uid = r->uid;
	spec->gid = r->gid;
	spec->opc_mask = r->opc_mask;
	spec->unit = r->unit;
	spec->rate = r->rate;
	spec->depth = r->depth;
	spec->rank = r->rank;
	if (queued)
		*queued = r->queued;
	return 0;
}

/* Put node r (key already stored, but for the job id) in the queue it
 * belongs to now, skipping rule `skip`; its cost follows the rule's unit.
 * Sets *limited to whether a rule took it.  On failure r is not queued. */
static int place(qos_tbf *t, const char *job, struct tbf_req *r,
		 const struct tbf_rule *skip, double now, int *limited)
{
	struct tbf_rule *rule = rule_match(t, job, r, skip);
	struct tbf_class *c;
	int rc;

	*limited = rule != NULL;
	if (!rule) {
		r->cost = 1;
		fifo_push(&t->fallback, r);
		return 0;
	}
	r->cost = rule->unit == QOS_TBF_UNIT_BYTE && r->bytes > 0
			  ? (double)r->bytes : 1;
	rc = class_get(t, rule, job, now, &c);
	if (rc)
		return rc;
	if (c->slot == NO_SLOT) {
		/* Becoming backlogged: reserve the heap slot before queueing,
		 * so a failure leaves everything as it was. */
		c->deadline = INFINITY;
		rc = heap_insert(t, c);
		if (rc)
			return rc;
		class_push(c, r);
		class_reschedule(t, c, now);
		return 0;
	}
	class_push(c, r);
	return 0;
}

static int class_cmp_seq(const void *a, const void *b)
{
	const struct tbf_class *x = *(struct tbf_class *const *)a;
	const struct tbf_class *y = *(struct tbf_class *const *)b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int qos_tbf_rule_stop(qos_tbf *t, const char *name, double now)
{
	struct tbf_rule **pp = name ? rule_slot(t, name) : NULL;
	struct tbf_rule *r;
	int rc = 0, limited;

	if (!pp || !*pp)
		return -ENOENT;
	r = *pp;
	/* Collect the rule's classes first: moving requests may create
	 * classes and grow (rehash) the table, so it cannot be walked while
	 * moving.  Also make sure the heap can take every class that may
	 * become backlogged (at most one per moved request), so the move
	 * itself can only fail in class creation. */
	size_t n = 0, moving = r->queued;
	for (size_t i = 0; i < t->n_tab; i++)
		for (struct tbf_class *c = t->tab[i]; c; c = c->hnext)
			n += c->rule == r;
	struct tbf_class **victims = malloc((n ? n : 1) * sizeof(*victims));
	if (!victims)
		return -ENOMEM;
	if (t->n_heap + moving > t->cap_heap) {
		size_t cap = t->n_heap + moving;
		struct tbf_class **h = realloc(t->heap, cap * sizeof(*h));
		if (!h) {
			free(victims);
			return -ENOMEM;
		}
		t->heap = h;
		t->cap_heap = cap;
	}
	n = 0;
	for (size_t i = 0; i < t->n_tab; i++)
		for (struct tbf_class *c = t->tab[i]; c; c = c->hnext)
			if (c->rule == r)
				victims[n++] = c;
	/* Oldest class first, so the fallback order follows arrival of the
	 * jobs rather than hash order. */
	qsort(victims, n, sizeof(*victims), class_cmp_seq);
	for (size_t i = 0; i < n; i++) {
		struct tbf_class *c = victims[i];
		struct tbf_req *q;
		heap_remove(t, c);
		while ((q = class_pop(c))) {
			/* On failure the request falls back rather than
			 * being lost. */
			if (place(t, c->job, q, r, now, &limited) < 0) {
				q->cost = 1;
				fifo_push(&t->fallback, q);
				rc = -ENOMEM;
			}
		}
		class_unlink_free(t, c);
	}
	free(victims);
	assert(r->queued == 0);
	*pp = r->next;
	free(r);
	t->n_rules--;
	return rc;
}

/* ---- requests --------------------------------------------------------- */

int qos_tbf_enqueue(qos_tbf *t, const qos_tbf_key *k, void *req, double now,
		    int *limited)
{
	struct tbf_req *r;
	int rc, lim;

	if (!k || !req || !k->jobid ||
	    strnlen(k->jobid, QOS_TBF_ID_MAX) >= QOS_TBF_ID_MAX ||
	    k->opc < QOS_TBF_OPC_ANY || k->opc > 31)
		return -EINVAL;
	r = req_alloc(t);
	if (!r)
		return -ENOMEM;
	r->req = req;
	r->bytes = k->bytes;
	r->uid = k->uid;
	r->gid = k->gid;
	r->opc = k->opc;
	rc = place(t, k->jobid, r, NULL, now, &lim);
	if (rc) {
		req_free(t, r);
		return rc;
	}
	t->queued++;
	if (limited)
		*limited = lim;
	return 0;
}

static void *take_req(qos_tbf *t, struct tbf_req *r)
{
	void *req = r->req;

	assert(t->queued > 0);
	req_free(t, r);
	t->queued--;
	return req;
}

int qos_tbf_dequeue(qos_tbf *t, double now, void **req, double *wait)
{
	struct tbf_class *c = t->n_heap ? t->heap[0] : NULL;
	struct tbf_req *r;

	if (wait)
		*wait = INFINITY;
	/* 1. A class whose next token time has come. */
	if (c && c->deadline <= now) {
		r = class_pop(c);
		/* Charge the full cost; a request larger than the depth (or a
		 * deadline a rounding error early) leaves the bucket in debt,
		 * which keeps the long-run rate exact. */
		qos_bucket_take(&c->bkt, r->cost, now);
		class_reschedule(t, c, now);
		*req = take_req(t, r);
		return 0;
	}
	/* 2. Unlimited fallback queue, served by otherwise idle workers. */
	if ((r = fifo_pop(&t->fallback))) {
		*req = take_req(t, r);
		return 0;
	}
	if (!c)
		return -ENOENT;
	/* 3. Work-conserving: idle capacity goes to the nearest deadline,
	 * uncharged, so the class's own tokens are not spent on it. */
	if (t->work_conserving) {
		r = class_pop(c);
		class_reschedule(t, c, now);
		*req = take_req(t, r);
		return 0;
	}
	if (wait)
		*wait = c->deadline - now;
	return -EAGAIN;
}

int qos_tbf_drain(qos_tbf *t, void **req)
{
	struct tbf_req *r;

	if ((r = fifo_pop(&t->fallback))) {
		*req = take_req(t, r);
		return 0;
	}
	if (t->n_heap) {
		struct tbf_class *c = t->heap[0];
		r = class_pop(c);
		if (!c->q.head)
			heap_remove(t, c);
		*req = take_req(t, r);
		return 0;
	}
	return -ENOENT;
}

size_t qos_tbf_gc(qos_tbf *t, double now)
{
	size_t freed = 0;

	for (size_t i = 0; i < t->n_tab; i++) {
		struct tbf_class *c = t->tab[i], *cn;
		for (; c; c = cn) {
			cn = c->hnext;
			if (c->q.n == 0 &&
			    qos_bucket_peek(&c->bkt, now) >= c->bkt.depth) {
				class_unlink_free(t, c);
				freed++;
			}
		}
	}
	return freed;
}

size_t qos_tbf_queued(const qos_tbf *t)
{
	return t->queued;
}

size_t qos_tbf_fallback_queued(const qos_tbf *t)
{
	return t->fallback.n;
}

size_t qos_tbf_class_count(const qos_tbf *t)
{
	return t->n_classes;
}

size_t qos_tbf_class_queued(const qos_tbf *t, const char *rule,
			    const char *jobid)
{
	struct tbf_rule *r;

	if (!rule || !jobid)
		return 0;
	for (r = t->rules; r; r = r->next)
		if (strcmp(r->name, rule) == 0)
			break;
	if (!r)
		return 0;
	struct tbf_class *c = class_find(t, r, jobid, hash_key(r, jobid));
	return c ? c->q.n : 0;
}
