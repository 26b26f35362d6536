/* bufpool.c — a pool of aligned I/O buffers (see bufpool.h): a LIFO stack
 * of idle buffers under one mutex, so the most recently used (cache-warm,
 * already faulted-in) buffer is handed out first. */
#include "oss/bufpool.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

struct oss_bufpool {
	size_t size, align, keep;
	pthread_mutex_t lock;
	size_t n;      /* idle buffers in free[] */
	void **free;   /* [keep] */
};

int oss_bufpool_create(size_t buf_size, size_t align, size_t keep, oss_bufpool **out)
{
	oss_bufpool *p;

	if (!align || (align & (align - 1)) || align % sizeof(void *))
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->free = calloc(keep ? keep : 1, sizeof(*p->free));
	if (!p->free) {
		free(p);
		return -ENOMEM;
	}
	p->size = buf_size;
	p->align = align;
	p->keep = keep;
	pthread_mutex_init(&p->lock, NULL);
	*out = p;
	return 0;
}

void oss_bufpool_destroy(oss_bufpool *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		free(p->free[i]);
	free(p->free);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

void *oss_bufpool_get(oss_bufpool *p, size_t len)
{
	void *b = NULL;

	if (!len)
		return NULL;
	if (len <= p->size) {
		pthread_mutex_lock(&p->lock);
		if (p->n)
			b = p->free[--p->n];
		pthread_mutex_unlock(&p->lock);
		if (b)
			return b;
		len = p->size; /* so it can go back to the pool */
	}
	if (posix_memalign(&b, p->align, len))
		return NULL;
	return b;
}

void oss_bufpool_put(oss_bufpool *p, void *buf, size_t len)
{
	if (!buf)
		return;
	if (len <= p->size) {
		pthread_mutex_lock(&p->lock);
		if (p->n < p->keep) {
			p->free[p->n++] = buf;
			buf = NULL;
		}
		pthread_mutex_unlock(&p->lock);
	}
	free(buf);
}

size_t oss_bufpool_idle(oss_bufpool *p)
{
	size_t n;

	pthread_mutex_lock(&p->lock);
	n = p->n;
	pthread_mutex_unlock(&p->lock);
	return n;
}
