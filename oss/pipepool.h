/* pipepool.h — a small pool of pipes for the OSS's spliced READ replies
 * and WRITE data (oss/server.c): a READ splices its object's pages from
 * the page cache into a pipe (page references, no copy), and the reply
 * moves them from the pipe into the client's socket (common/server.h
 * pfs_sconn_reply_pipe), so the OSS copies no READ byte through user
 * space; a WRITE's data goes from the socket into a pipe and from there
 * into the object (pfs_server_bulk, oss_store_splice_write).  A pipe must hold a whole reply's bulk: each is sized to `size`
 * bytes (F_SETPIPE_SZ) and the pool refuses to start when the system
 * does not allow that (fs.pipe-max-size for a process without
 * CAP_SYS_RESOURCE), so the caller falls back to buffered READs.
 * Both ends are non-blocking (a short pipe or a drain past its contents
 * says EAGAIN instead of waiting for this same thread).  At most `keep`
 * idle pipes are held (closed at destroy); a pipe is only kept when it
 * comes back empty.  Thread-safe (one short lock). */
#ifndef OSS_PIPEPOOL_H
#define OSS_PIPEPOOL_H

#include <stddef.h>

typedef struct oss_pipepool oss_pipepool;

/* One pipe: fd[0] the read end, fd[1] the write end. */
typedef struct oss_pipe {
	int fd[2];
} oss_pipe;

/* 0, -EINVAL (size 0), -ENOMEM, or the errno of a first pipe that cannot
 * hold size bytes (-EPERM: above fs.pipe-max-size; -EMFILE, ...). */
int oss_pipepool_create(size_t size, size_t keep, oss_pipepool **out);
/* Closes every idle pipe; pipes still out must not be put back after.
 * NULL is a no-op. */
void oss_pipepool_destroy(oss_pipepool *p);
/* Capacity of every pipe of the pool, bytes (at least the size asked). */
size_t oss_pipepool_size(const oss_pipepool *p);
/* An empty pipe into *out: 0, or -errno when none can be made. */
int oss_pipepool_get(oss_pipepool *p, oss_pipe *out);
/* Give back a pipe from oss_pipepool_get.  empty = 0 (something may be
 * left in it, e.g. after an error) closes it instead of keeping it. */
void oss_pipepool_put(oss_pipepool *p, oss_pipe *pp, int empty);
/* Idle pipes held now (for tests). */
size_t oss_pipepool_idle(oss_pipepool *p);

#endif
