/* readahead.c — stream readahead of mount.pfs (see readahead.h).
 *
 * A prefetched unit (struct cli_ra_buf) is on its stream's list while it
 * may serve READs ("attached"); it is freed once it is detached and
 * nobody holds a reference: the fetch queue, the thread fetching it and
 * each READ using its bytes hold one.  Units are reserved against the
 * mount's total when made and released when freed.  A unit's bytes are in
 * memory (data, allocated when it is fetched) or in a pipe (pr/pw, see
 * "Pipes" in readahead.h); valid bytes are [gone, got) of the unit. */
#include "client/readahead.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

enum { RA_QUEUED, RA_FETCHING, RA_READY, RA_FAILED };

typedef struct cli_ra_buf cli_ra_buf;

struct cli_ra_buf {
	struct cli_ra_buf *next;  /* stream list (attached) */
	struct cli_ra_buf *qnext; /* fetch queue */
	cli_ra *ra;
	cli_ra_stream *s;
	uint64_t off;
	size_t len;               /* asked for */
	size_t cap;               /* data's size */
	size_t got;               /* valid once RA_READY */
	size_t gone;              /* bytes at the start taken out of the pipe */
	size_t served;            /* bytes handed to READs */
	uint64_t gen;
	int state;
	int attached;
	unsigned refs;
	char *data;               /* NULL until fetched into memory */
	int pr, pw;               /* the pipe holding the bytes, or -1 */
	int pbusy;                /* a READ is taking bytes out of the pipe */
};

#define RA_PIPES_KEPT 64

typedef struct ra_pipe {
	int r, w;
} ra_pipe;

struct cli_ra_stream {
	cli_ra *ra;
	void *owner;
	uint64_t unit;
	uint64_t hi;       /* furthest byte read + 1 */
	uint64_t last_off, last_end; /* the last READ */
	uint64_t ra_end;   /* end of what was prefetched (or hi) */
	uint64_t window;   /* 0 = not prefetching */
	unsigned inseq;    /* READs in the stream so far */
	unsigned running;  /* its units being fetched by a thread */
	pthread_cond_t done; /* one of its fetches ended */
	cli_ra_buf *bufs;
};

struct cli_ra {
	cli_ra_opts o;
	pthread_mutex_t lock;
	pthread_cond_t work;      /* a unit queued, or stop */
	pthread_cond_t pipe_free; /* a READ gave a piped unit back */
	ra_pipe pipes[RA_PIPES_KEPT]; /* empty pipes for reuse */
	unsigned npipes;
	int pipes_off;            /* a pipe of CLI_RA_PIPE_BYTES cannot be had */
	cli_ra_buf *qhead, *qtail;
	/* Unit memory for reuse: a fresh buffer costs a page fault (and
	 * zeroing) per page when the fetch fills it, as much CPU as a copy.
	 * Each free buffer starts with a struct pooled. */
	struct pooled *pool;
	uint64_t pool_bytes, pool_max;
	pthread_t *tids;
	unsigned started;
	int stop;
	cli_ra_stats st;
};

/* ---- units (ra->lock held) ---- */

struct pooled {
	struct pooled *next;
	size_t cap;
};

/* Memory for a unit of len bytes: from the pool (a buffer at least that
 * large, less than twice) or fresh.  NULL when out of memory. */
static char *data_get(cli_ra *ra, size_t len, size_t *cap)
{
	for (struct pooled **pp = &ra->pool; *pp; pp = &(*pp)->next) {
		struct pooled *p = *pp;

		if (p->cap >= len && p->cap / 2 < len) {
			*pp = p->next;
			ra->pool_bytes -= p->cap;
			*cap = p->cap;
			return (char *)p;
		}
	}
	*cap = len < sizeof(struct pooled) ? sizeof(struct pooled) : len;
	return malloc(*cap);
}

static void data_put(cli_ra *ra, char *data, size_t cap)
{
	struct pooled *p = (struct pooled *)(void *)data;

	if (ra->pool_bytes + cap > ra->pool_max) {
		free(data);
		return;
	}
	p->cap = cap;
	p->next = ra->pool;
	ra->pool = p;
	ra->pool_bytes += cap;
}

/* ---- pipes ---- */

/* An empty pipe of CLI_RA_PIPE_BYTES: kept or new.  0, or -1 (memory
 * then). */
static int pipe_get(cli_ra *ra, ra_pipe *p)
{
	int fds[2];

	pthread_mutex_lock(&ra->lock);
	if (ra->pipes_off) {
		pthread_mutex_unlock(&ra->lock);
		return -1;
	}
	if (ra->npipes) {
		*p = ra->pipes[--ra->npipes];
		pthread_mutex_unlock(&ra->lock);
		return 0;
	}
	pthread_mutex_unlock(&ra->lock);
	if (pipe2(fds, O_CLOEXEC))
		return -1;
	if (fcntl(fds[1], F_SETPIPE_SZ, CLI_RA_PIPE_BYTES) < (int)CLI_RA_PIPE_BYTES) {
		close(fds[0]);
		close(fds[1]);
		pthread_mutex_lock(&ra->lock);
		ra->pipes_off = 1; /* fs.pipe-max-size: it will not work later either */
		pthread_mutex_unlock(&ra->lock);
		return -1;
	}
	p->r = fds[0];
	p->w = fds[1];
	return 0;
}

/* Keep an empty pipe for reuse, close one that may hold bytes (lock
 * held). */
static void pipe_put(cli_ra *ra, ra_pipe p, int empty)
{
	if (empty && ra->npipes < RA_PIPES_KEPT) {
		ra->pipes[ra->npipes++] = p;
		return;
	}
	close(p.r);
	close(p.w);
}

static void buf_free(cli_ra *ra, cli_ra_buf *b)
{
	ra->st.used_bytes -= b->len;
	if (b->state == RA_READY && b->served < b->got)
		ra->st.unused_bytes += b->got - b->served;
	if (b->data)
		data_put(ra, b->data, b->cap);
	if (b->pr >= 0)
		pipe_put(ra, (ra_pipe){ b->pr, b->pw },
			 b->state == RA_READY && b->gone >= b->got);
	free(b);
}

static void buf_put(cli_ra *ra, cli_ra_buf *b)
{
	if (--b->refs == 0 && !b->attached)
		buf_free(ra, b);
}

static void queue_remove(cli_ra *ra, cli_ra_buf *b)
{
	cli_ra_buf **pp = &ra->qhead, *prev = NULL;

	while (*pp && *pp != b) {
		prev = *pp;
		pp = &(*pp)->qnext;
	}
	if (!*pp)
		return;
	*pp = b->qnext;
	if (ra->qtail == b)
		ra->qtail = prev;
	b->qnext = NULL;
}

/* Take b off its stream's list (*pp points at it); a queued unit leaves
 * the queue too. */
static void buf_detach(cli_ra *ra, cli_ra_buf **pp)
{
	cli_ra_buf *b = *pp;

	*pp = b->next;
	b->next = NULL;
	b->attached = 0;
	if (b->state == RA_QUEUED) {
		queue_remove(ra, b);
		b->refs--; /* the queue's */
	}
	b->refs++;
	buf_put(ra, b);
}

/* Detach every unit of s for which drop(b) says so. */
static void drop_if(cli_ra *ra, cli_ra_stream *s, int (*drop)(const cli_ra_buf *, const void *),
		    const void *arg)
{
	cli_ra_buf **pp = &s->bufs;

	while (*pp) {
		if (drop(*pp, arg))
			buf_detach(ra, pp);
		else
			pp = &(*pp)->next;
	}
}

static int drop_all(const cli_ra_buf *b, const void *arg)
{
	(void)b;
	(void)arg;
	return 1;
}

static int drop_other_gen(const cli_ra_buf *b, const void *arg)
{
	return b->gen != *(const uint64_t *)arg;
}

struct span {
	uint64_t lo, hi;
};

/* Units that are done with: all served, failed, or outside [lo, hi). */
static int drop_spent(const cli_ra_buf *b, const void *arg)
{
	const struct span *sp = arg;

	if (b->state == RA_FAILED || (b->state == RA_READY && b->served >= b->got))
		return 1;
	return b->off + b->len <= sp->lo || b->off >= sp->hi;
}

/* Units that do not overlap [lo, hi). */
static int drop_elsewhere(const cli_ra_buf *b, const void *arg)
{
	const struct span *sp = arg;

	return b->off + b->len <= sp->lo || b->off >= sp->hi;
}

/* ---- fetch threads ---- */

/* Fetch b (RA_FETCHING, counted in its stream's running) without the
 * lock; returns with it held and b fetched or failed. */
static void fetch_one(cli_ra *ra, cli_ra_buf *b)
{
	size_t got = 0;
	int rc = -EXDEV;
	ra_pipe p = { -1, -1 };

	/* into a pipe when the unit fits one, else (or if the fetch says so)
	 * into memory */
	if (ra->o.fetch_pipe && b->len <= CLI_RA_PIPE_UNIT && pipe_get(ra, &p) == 0) {
		rc = ra->o.fetch_pipe(ra->o.arg, b->s->owner, b->off, b->len, p.r, p.w,
				      CLI_RA_PIPE_BYTES, &got);
		if (rc) {
			pthread_mutex_lock(&ra->lock);
			pipe_put(ra, p, rc == -EXDEV);
			pthread_mutex_unlock(&ra->lock);
			p.r = p.w = -1;
		}
	}
	if (rc == -EXDEV) {
		pthread_mutex_lock(&ra->lock);
		b->data = data_get(ra, b->len, &b->cap);
		pthread_mutex_unlock(&ra->lock);
		rc = b->data ? ra->o.fetch(ra->o.arg, b->s->owner, b->off, b->len, b->data, &got) :
			       -ENOMEM;
	}
	pthread_mutex_lock(&ra->lock);
	if (p.r >= 0) {
		b->pr = p.r;
		b->pw = p.w;
		ra->st.piped++;
	}
	if (rc == 0 && got > b->len)
		rc = -EIO;
	if (rc) {
		b->state = RA_FAILED;
		ra->st.fetch_errors++;
	} else {
		b->state = RA_READY;
		b->got = got;
		ra->st.fetches++;
		ra->st.fetched_bytes += got;
	}
	b->s->running--;
	pthread_cond_broadcast(&b->s->done);
}

static void *fetch_main(void *arg)
{
	cli_ra *ra = arg;

	pthread_mutex_lock(&ra->lock);
	for (;;) {
		cli_ra_buf *b;

		while (!ra->stop && !ra->qhead)
			pthread_cond_wait(&ra->work, &ra->lock);
		if (ra->stop)
			break;
		b = ra->qhead;
		ra->qhead = b->qnext;
		if (!ra->qhead)
			ra->qtail = NULL;
		b->qnext = NULL;
		b->state = RA_FETCHING; /* the queue's reference is now ours */
		b->s->running++;
		pthread_mutex_unlock(&ra->lock);
		fetch_one(ra, b);
		buf_put(ra, b);
	}
	pthread_mutex_unlock(&ra->lock);
	return NULL;
}

/* Start the threads at the first fetch (lock held); 0 or -errno. */
static int threads_start(cli_ra *ra)
{
	if (ra->started)
		return 0;
	for (unsigned i = 0; i < ra->o.threads; i++) {
		if (pthread_create(&ra->tids[i], NULL, fetch_main, ra))
			break;
		ra->started++;
	}
	return ra->started ? 0 : -EAGAIN;
}

/* ---- mount ---- */

int cli_ra_create(const cli_ra_opts *o, cli_ra **out)
{
	cli_ra *ra;

	if (!o->fetch || !o->window_bytes || !o->total_bytes)
		return -EINVAL;
	ra = calloc(1, sizeof(*ra));
	if (!ra)
		return -ENOMEM;
	ra->o = *o;
	ra->pool_max = o->total_bytes < (64u << 20) ? o->total_bytes : (64u << 20);
	if (!ra->o.threads)
		ra->o.threads = 16;
	ra->tids = calloc(ra->o.threads, sizeof(*ra->tids));
	if (!ra->tids) {
		free(ra);
		return -ENOMEM;
	}
	pthread_mutex_init(&ra->lock, NULL);
	pthread_cond_init(&ra->work, NULL);
	pthread_cond_init(&ra->pipe_free, NULL);
	*out = ra;
	return 0;
}

void cli_ra_destroy(cli_ra *ra)
{
	if (!ra)
		return;
	pthread_mutex_lock(&ra->lock);
	ra->stop = 1;
	pthread_cond_broadcast(&ra->work);
	pthread_mutex_unlock(&ra->lock);
	for (unsigned i = 0; i < ra->started; i++)
		pthread_join(ra->tids[i], NULL);
	while (ra->pool) {
		struct pooled *p = ra->pool;

		ra->pool = p->next;
		free(p);
	}
	while (ra->npipes) {
		ra_pipe p = ra->pipes[--ra->npipes];

		close(p.r);
		close(p.w);
	}
	pthread_cond_destroy(&ra->pipe_free);
	pthread_cond_destroy(&ra->work);
	pthread_mutex_destroy(&ra->lock);
	free(ra->tids);
	free(ra);
}

void cli_ra_stats_get(cli_ra *ra, cli_ra_stats *st)
{
	pthread_mutex_lock(&ra->lock);
	*st = ra->st;
	pthread_mutex_unlock(&ra->lock);
}

/* ---- streams ---- */

cli_ra_stream *cli_ra_open(cli_ra *ra, void *owner, uint64_t unit)
{
	cli_ra_stream *s;

	if (!ra)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	if (unit == 0)
		unit = 1u << 20;
	if (unit > CLI_RA_UNIT_MAX)
		unit = CLI_RA_UNIT_MAX;
	/* units that fit a pipe, when whole ones fit a stripe: one READ each,
	 * and several of a stripe in flight at once */
	if (ra->o.fetch_pipe && unit > CLI_RA_PIPE_UNIT && unit % CLI_RA_PIPE_UNIT == 0)
		unit = CLI_RA_PIPE_UNIT;
	if (unit > ra->o.window_bytes)
		unit = ra->o.window_bytes;
	pthread_cond_init(&s->done, NULL);
	s->ra = ra;
	s->owner = owner;
	s->unit = unit;
	return s;
}

void cli_ra_close(cli_ra_stream *s)
{
	cli_ra *ra;

	if (!s)
		return;
	ra = s->ra;
	pthread_mutex_lock(&ra->lock);
	drop_if(ra, s, drop_all, NULL);
	while (s->running)
		pthread_cond_wait(&s->done, &ra->lock);
	pthread_mutex_unlock(&ra->lock);
	pthread_cond_destroy(&s->done);
	free(s);
}

/* Queue a fetch of [off, off+len) (lock held): 0, or -1 when the mount's
 * total has no room (or memory or threads are short). */
static int fetch_unit(cli_ra *ra, cli_ra_stream *s, uint64_t gen, uint64_t off, size_t len)
{
	cli_ra_buf *b;

	if (ra->st.used_bytes + len > ra->o.total_bytes) {
		ra->st.no_room++;
		return -1;
	}
	if (threads_start(ra))
		return -1;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -1;
	b->pr = b->pw = -1;
	b->ra = ra;
	b->s = s;
	b->off = off;
	b->len = len;
	b->gen = gen;
	b->state = RA_QUEUED;
	b->attached = 1;
	b->refs = 1; /* the queue's */
	b->next = s->bufs;
	s->bufs = b;
	if (ra->qtail)
		ra->qtail->qnext = b;
	else
		ra->qhead = b;
	ra->qtail = b;
	ra->st.used_bytes += len;
	if (ra->st.used_bytes > ra->st.peak_bytes)
		ra->st.peak_bytes = ra->st.used_bytes;
	pthread_cond_signal(&ra->work);
	return 0;
}

/* The attached unit holding off, or NULL (lock held). */
static cli_ra_buf *find_unit(cli_ra_stream *s, uint64_t off)
{
	for (cli_ra_buf *b = s->bufs; b; b = b->next)
		if (off >= b->off && off < b->off + b->len)
			return b;
	return NULL;
}

/* Note a READ of [off, end) in s and queue the prefetches it calls for
 * (lock held). */
static void stream_note(cli_ra *ra, cli_ra_stream *s, uint64_t gen, uint64_t fsize, uint64_t off,
			uint64_t end)
{
	uint64_t slack = s->window > 2 * s->unit ? s->window : 2 * s->unit;
	uint64_t ahead = s->ra_end > s->hi ? s->ra_end : s->hi;
	uint64_t behind = s->hi > slack ? s->hi - slack : 0;
	uint64_t u = s->unit, old_hi = s->hi, target, pos;

	int in;

	/* Until it prefetches, a stream is READs that touch end to end (in
	 * either order: the kernel's READs arrive out of order), so random
	 * reads never start one; then anything within a window of it. */
	if (!s->inseq)
		in = 0;
	else if (!s->window)
		in = off == s->last_end || end == s->last_off;
	else
		in = off >= behind && off <= ahead + slack;
	s->last_off = off;
	s->last_end = end;
	if (in) {
		s->inseq++;
		if (end > s->hi)
			s->hi = end;
	} else {
		/* a new stream at off: nothing else prefetched is of use */
		struct span sp = { off, end };

		drop_if(ra, s, drop_elsewhere, &sp);
		s->inseq = 1;
		s->window = 0;
		s->hi = end;
		s->ra_end = end;
		return;
	}
	if (s->inseq < 2)
		return;
	if (s->window == 0)
		s->window = 2 * u;
	else if (s->hi / u > old_hi / u)
		s->window *= 2;
	if (s->window > ra->o.window_bytes)
		s->window = ra->o.window_bytes;
	if (s->window < u)
		s->window = u;
	/* units behind the stream by more than a window are of no use now */
	{
		struct span sp = { s->hi > s->window ? s->hi - s->window : 0, UINT64_MAX };

		drop_if(ra, s, drop_spent, &sp);
	}
	target = s->hi + s->window;
	if (target > fsize)
		target = fsize;
	/* from the unit the stream is in, skipping what units already hold */
	pos = s->ra_end > s->hi / u * u ? s->ra_end : s->hi / u * u;
	while (pos < target) {
		uint64_t uend = (pos / u + 1) * u;
		cli_ra_buf *b = find_unit(s, pos);

		if (b) {
			pos = b->off + b->len;
			continue;
		}
		if (uend > fsize)
			uend = fsize;
		/* a unit the stream has not read all of yet */
		if (uend > s->hi && fetch_unit(ra, s, gen, pos, (size_t)(uend - pos)))
			break;
		pos = uend;
	}
	if (pos > s->ra_end)
		s->ra_end = pos;
}

/* Fetch b now on the calling thread (lock held; b queued and referenced
 * by the caller). */
static void fetch_here(cli_ra *ra, cli_ra_buf *b)
{
	queue_remove(ra, b);
	b->refs--; /* the queue's: the caller's keeps it */
	b->state = RA_FETCHING;
	b->s->running++;
	pthread_mutex_unlock(&ra->lock);
	fetch_one(ra, b);
}

/* Wait until b is fetched (lock held, b referenced): 1 if it holds valid
 * bytes for READs of gen, else 0.  A unit still queued is fetched by the
 * READ itself: a READ the kernel waits for never queues behind
 * prefetches of other streams. */
static int unit_ready(cli_ra *ra, cli_ra_buf *b, uint64_t gen)
{
	if (b->state == RA_READY)
		ra->st.ready++;
	else if (b->state == RA_QUEUED && b->attached && b->gen == gen) {
		ra->st.fetched_here++;
		fetch_here(ra, b);
	} else {
		ra->st.waits++;
	}
	while (b->state == RA_QUEUED || b->state == RA_FETCHING) {
		if (!b->attached)
			return 0;
		pthread_cond_wait(&b->s->done, &ra->lock);
	}
	return b->attached && b->state == RA_READY && b->gen == gen;
}

/* Wait until no READ takes bytes out of b's pipe (lock held, b
 * referenced): 1 if b still serves READs of gen. */
static int pipe_wait(cli_ra *ra, cli_ra_buf *b, uint64_t gen)
{
	while (b->pbusy && b->attached)
		pthread_cond_wait(&ra->pipe_free, &ra->lock);
	return b->attached && b->state == RA_READY && b->gen == gen;
}

/* Read what b's pipe holds into memory and close the pipe (lock held, b
 * ready, not busy): 0, or -errno (b is then dropped by drop_spent). */
static int materialize(cli_ra *ra, cli_ra_buf *b)
{
	size_t pos = b->gone;
	int left = -1;

	if (b->pr < 0)
		return 0;
	/* never a blocking read under the lock: the pipe must hold them all */
	if (ioctl(b->pr, FIONREAD, &left) == 0 && (size_t)left == b->got - b->gone && !b->data)
		b->data = data_get(ra, b->len, &b->cap);
	while (b->data && left >= 0 && (size_t)left == b->got - b->gone && pos < b->got) {
		ssize_t k = read(b->pr, b->data + pos, b->got - pos);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		pos += (size_t)k;
	}
	pipe_put(ra, (ra_pipe){ b->pr, b->pw }, pos == b->got);
	b->pr = b->pw = -1;
	if (pos < b->got) {
		b->state = RA_FAILED;
		return -EIO;
	}
	ra->st.materialized++;
	return 0;
}

/* Wait for b (referenced; its pipe free): 1 if it holds [from, to) for
 * READs of gen (lock held). */
static int unit_mem_ready(cli_ra *ra, cli_ra_buf *b, uint64_t gen, uint64_t from, uint64_t to)
{
	if (!unit_ready(ra, b, gen) || !pipe_wait(ra, b, gen))
		return 0;
	return from >= b->off + b->gone && to <= b->off + b->got;
}

/* The same, and those bytes in memory. */
static int unit_mem(cli_ra *ra, cli_ra_buf *b, uint64_t gen, uint64_t from, uint64_t to)
{
	return unit_mem_ready(ra, b, gen, from, to) && materialize(ra, b) == 0;
}

int cli_ra_read_pipe(cli_ra_stream *s, uint64_t gen, uint64_t fsize, uint64_t off, size_t len,
		     void *buf, const void **data, int *pipe_fd, cli_ra_ref **ref)
{
	cli_ra *ra;
	cli_ra_buf *b;
	uint64_t end = off + len, pos;
	int hit = 0;

	*ref = NULL;
	*data = NULL;
	if (pipe_fd)
		*pipe_fd = -1;
	if (!s || len == 0)
		return 0;
	ra = s->ra;
	pthread_mutex_lock(&ra->lock);
	if (s->bufs) {
		size_t before = 0;

		for (b = s->bufs; b; b = b->next)
			before++;
		drop_if(ra, s, drop_other_gen, &gen);
		for (b = s->bufs; b; b = b->next)
			before--;
		ra->st.stale_drops += before;
	}
	stream_note(ra, s, gen, fsize, off, end);
	b = find_unit(s, off);
	if (b && b->off + b->len >= end) {
		/* one unit: its pipe handed over, or served in place */
		b->refs++;
		if (!unit_mem_ready(ra, b, gen, off, end)) {
			buf_put(ra, b);
		} else if (pipe_fd && b->pr >= 0 && off == b->off + b->gone) {
			b->pbusy = 1;
			b->gone += len;
			b->served += len;
			*pipe_fd = b->pr;
			*ref = b;
			hit = 1;
			ra->st.pipe_hits++;
		} else if (materialize(ra, b) == 0) {
			b->served += len;
			*data = b->data + (off - b->off);
			*ref = b;
			hit = 1;
		} else {
			buf_put(ra, b);
		}
	} else if (b) {
		/* across units: copied into buf, unit by unit */
		for (pos = off; pos < end;) {
			uint64_t n;

			b = find_unit(s, pos);
			if (!b)
				break;
			b->refs++;
			n = b->off + b->len < end ? b->off + b->len : end;
			if (!unit_mem(ra, b, gen, pos, n)) {
				buf_put(ra, b);
				break;
			}
			n -= pos;
			memcpy((char *)buf + (pos - off), b->data + (pos - b->off), n);
			b->served += n;
			buf_put(ra, b);
			pos += n;
		}
		if (pos == end) {
			*data = buf;
			hit = 1;
		}
	}
	if (hit)
		ra->st.hits++;
	else
		ra->st.misses++;
	/* units served in full are freed at once */
	if (hit && !*ref) {
		struct span sp = { 0, UINT64_MAX };

		drop_if(ra, s, drop_spent, &sp);
	}
	pthread_mutex_unlock(&ra->lock);
	return hit;
}

int cli_ra_read(cli_ra_stream *s, uint64_t gen, uint64_t fsize, uint64_t off, size_t len,
		void *buf, const void **data, cli_ra_ref **ref)
{
	return cli_ra_read_pipe(s, gen, fsize, off, len, buf, data, NULL, ref);
}

/* Detach b if every byte of it was served (lock held). */
static void detach_if_spent(cli_ra *ra, cli_ra_buf *b)
{
	if (b->attached && b->state == RA_READY && b->served >= b->got) {
		cli_ra_buf **pp = &b->s->bufs;

		while (*pp && *pp != b)
			pp = &(*pp)->next;
		if (*pp)
			buf_detach(ra, pp);
	}
}

void cli_ra_put(cli_ra_ref *b)
{
	cli_ra *ra;

	if (!b)
		return;
	ra = b->ra; /* b->s may be closed: it is used only while b is attached */
	pthread_mutex_lock(&ra->lock);
	detach_if_spent(ra, b);
	buf_put(ra, b);
	pthread_mutex_unlock(&ra->lock);
}

void cli_ra_put_pipe(cli_ra_ref *b, int ok)
{
	cli_ra *ra;

	if (!b)
		return;
	ra = b->ra;
	pthread_mutex_lock(&ra->lock);
	b->pbusy = 0;
	/* the pipe must hold exactly what was not taken */
	if (ok) {
		int left = -1;

		ok = ioctl(b->pr, FIONREAD, &left) == 0 && (size_t)left == b->got - b->gone;
	}
	if (!ok) {
		/* how much left the pipe is not known: nothing more of it is served */
		b->state = RA_FAILED;
		if (b->attached) {
			cli_ra_buf **pp = &b->s->bufs;

			while (*pp && *pp != b)
				pp = &(*pp)->next;
			if (*pp)
				buf_detach(ra, pp);
		}
	}
	detach_if_spent(ra, b);
	pthread_cond_broadcast(&ra->pipe_free);
	buf_put(ra, b);
	pthread_mutex_unlock(&ra->lock);
}
