/* msg.h — value types that appear inside several payloads, and their codecs:
 * caller credentials, inode attributes, statfs, OST descriptions, per-job
 * OSS statistics.  Each decode validates and returns 0 or a negative errno;
 * each encode appends to a pfs_wbuf (errors are sticky in the buffer). */
#ifndef PFS_MSG_H
#define PFS_MSG_H

#include <stdint.h>

#include "common/buf.h"
#include "common/proto.h"

#define PFS_NAME_MAX 255
#define PFS_PATH_MAX 4096
#define PFS_XATTR_NAME_MAX 255
#define PFS_XATTR_SIZE_MAX 65536
#define PFS_MAX_GROUPS 32
#define PFS_READDIR_MAX 1024 /* entries per READDIR page */

/* Who asks: leads every MDS namespace request. */
typedef struct pfs_cred {
	uint32_t uid, gid;
	uint32_t ngroups;
	uint32_t groups[PFS_MAX_GROUPS];
} pfs_cred;

typedef struct pfs_attr {
	uint64_t ino;
	uint32_t mode;  /* S_IFMT type bits + permissions */
	uint32_t nlink;
	uint32_t uid, gid;
	uint32_t rdev;
	uint64_t size;
	uint64_t blocks; /* 512-byte units */
	int64_t atime_ns, mtime_ns, ctime_ns;
	/* Regular files: the truncate epoch, bumped by every truncate on the
	 * MDS; a SETSIZE from before the last truncate cannot grow the size
	 * (mds/README.md "Size, truncate epochs and blocks"). */
	uint32_t tepoch;
	/* PFS_ATTR_* flags (regular files; encoded last). */
	uint32_t flags;
} pfs_attr;

/* pfs_attr.flags: the size may be stale - a client opened the file for
 * writing and has not closed it (it may hold a size it has not pushed, or
 * have died holding it): a reader that is not writing the file itself
 * glimpses the size from the objects (client/README.md "Durability"). */
#define PFS_ATTR_SIZE_STALE 1u

typedef struct pfs_statfs {
	uint32_t bsize;
	uint32_t namemax;
	uint64_t blocks, bfree, bavail; /* in bsize units */
	uint64_t files, ffree;
} pfs_statfs;

typedef struct pfs_ost_info {
	uint32_t index;
	char uuid[64];
	char oss[64];
	char host[64];
	uint16_t data_port, ctl_port;
	uint8_t up;
	uint64_t total_bytes, free_bytes, objects;
} pfs_ost_info;

typedef struct pfs_job_stats {
	char job[PFS_JOBID_MAX + 1];
	uint64_t read_rpcs, write_rpcs, other_rpcs;
	uint64_t read_bytes, write_bytes;
	uint32_t queued;       /* requests waiting now */
	uint64_t wait_us_sum;  /* total queueing delay */
} pfs_job_stats;

void pfs_cred_encode(pfs_wbuf *b, const pfs_cred *c);
int pfs_cred_decode(pfs_rbuf *b, pfs_cred *c);
/* 1 if c has gid as primary or supplementary group. */
int pfs_cred_in_group(const pfs_cred *c, uint32_t gid);

void pfs_attr_encode(pfs_wbuf *b, const pfs_attr *a);
int pfs_attr_decode(pfs_rbuf *b, pfs_attr *a);

void pfs_statfs_encode(pfs_wbuf *b, const pfs_statfs *s);
int pfs_statfs_decode(pfs_rbuf *b, pfs_statfs *s);

void pfs_ost_info_encode(pfs_wbuf *b, const pfs_ost_info *o);
int pfs_ost_info_decode(pfs_rbuf *b, pfs_ost_info *o);

void pfs_job_stats_encode(pfs_wbuf *b, const pfs_job_stats *s);
int pfs_job_stats_decode(pfs_rbuf *b, pfs_job_stats *s);

#endif
