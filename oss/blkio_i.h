/* blkio_i.h — the pieces of oss/blkio.c that tests reach directly: the
 * system files it reads (so a test can hand it a fake /proc or /sys) and
 * the job-name encoding.  Not for use outside oss/ and
 * tests/. */
#ifndef OSS_BLKIO_I_H
#define OSS_BLKIO_I_H

#include "oss/blkio.h"

/* Where oss_blkio_open looks; a NULL member takes the default. */
typedef struct oss_blkio_env {
	const char *mountinfo; /* /proc/self/mountinfo */
	const char *cgroup;    /* /proc/thread-self/cgroup */
	const char *sysfs;     /* /sys */
} oss_blkio_env;

/* oss_blkio_open reading env's files (env NULL = all defaults). */
int oss_blkio_open_env(const oss_blkio_env *env, const char *const *ost_dirs, size_t n_osts,
		       oss_blkio **out, char *err, size_t errlen);

/* Room for a job's directory name: "j." + 3 bytes per job byte + NUL. */
#define OSS_BLKIO_NAME_MAX (2 + 3 * OSS_BLKIO_JOB_MAX + 1)
/* Encode job as a cgroup directory name: "j." then the job with bytes
 * outside [A-Za-z0-9._-] (and '%') written as %xx.  Injective, never "." or
 * "..", no '/', and no clash with cgroup control files (none starts with
 * "j.").  out must hold OSS_BLKIO_NAME_MAX bytes.  0 or -EINVAL (job NULL,
 * empty or longer than OSS_BLKIO_JOB_MAX). */
int oss_blkio_job_name(const char *job, char out[OSS_BLKIO_NAME_MAX]);

/* This process's directory, <blkio mount>/pfs-oss.<pid>; lives as long as
 * b. */
const char *oss_blkio_root(const oss_blkio *b);

#endif
