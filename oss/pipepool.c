/* pipepool.c — a pool of pipes sized for one READ's bulk (see
 * pipepool.h): a LIFO stack of idle pipes under one mutex. */
#include "oss/pipepool.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

struct oss_pipepool {
	size_t size, cap, keep;
	pthread_mutex_t lock;
	size_t n;        /* idle pipes in free[] */
	oss_pipe *free;  /* [keep] */
};

static void pipe_close(oss_pipe *pp)
{
	close(pp->fd[0]);
	close(pp->fd[1]);
	pp->fd[0] = pp->fd[1] = -1;
}

/* A new pipe of at least size bytes; its capacity into *cap. */
static int pipe_new(size_t size, oss_pipe *out, size_t *cap)
{
	int c;

	if (pipe2(out->fd, O_CLOEXEC | O_NONBLOCK))
		return -errno;
	c = fcntl(out->fd[1], F_SETPIPE_SZ, (int)size);
	if (c < 0 || (size_t)c < size) {
		int rc = c < 0 ? -errno : -ENOSPC;

		pipe_close(out);
		return rc;
	}
	*cap = (size_t)c;
	return 0;
}

int oss_pipepool_create(size_t size, size_t keep, oss_pipepool **out)
{
	oss_pipepool *p;
	oss_pipe first;
	int rc;

	if (!size || size > (1u << 30))
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->free = calloc(keep ? keep : 1, sizeof(*p->free));
	if (!p->free) {
		free(p);
		return -ENOMEM;
	}
	p->size = size;
	p->keep = keep;
	pthread_mutex_init(&p->lock, NULL);
	/* One pipe now: tells whether the system lets us size them. */
	rc = pipe_new(size, &first, &p->cap);
	if (rc) {
		oss_pipepool_destroy(p);
		return rc;
	}
	oss_pipepool_put(p, &first, 1);
	*out = p;
	return 0;
}

void oss_pipepool_destroy(oss_pipepool *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		pipe_close(&p->free[i]);
	free(p->free);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

size_t oss_pipepool_size(const oss_pipepool *p)
{
	return p->cap;
}

int oss_pipepool_get(oss_pipepool *p, oss_pipe *out)
{
	size_t cap;
	int rc;

	pthread_mutex_lock(&p->lock);
	if (p->n) {
		*out = p->free[--p->n];
		pthread_mutex_unlock(&p->lock);
		return 0;
	}
	pthread_mutex_unlock(&p->lock);
	rc = pipe_new(p->size, out, &cap);
	if (rc == 0 && cap != p->cap) {
		/* the same request gives the same capacity; if not, refuse
		 * rather than hand out a pipe the caller did not size for */
		pipe_close(out);
		rc = -ENOSPC;
	}
	return rc;
}

void oss_pipepool_put(oss_pipepool *p, oss_pipe *pp, int empty)
{
	int kept = 0;

	if (empty) {
		pthread_mutex_lock(&p->lock);
		if (p->n < p->keep) {
			p->free[p->n++] = *pp;
			kept = 1;
		}
		pthread_mutex_unlock(&p->lock);
	}
	if (!kept)
		pipe_close(pp);
	pp->fd[0] = pp->fd[1] = -1;
}

size_t oss_pipepool_idle(oss_pipepool *p)
{
	size_t n;

	pthread_mutex_lock(&p->lock);
	n = p->n;
	pthread_mutex_unlock(&p->lock);
	return n;
}
