/* destroyed.c — the destroyed object ids of one OST: sorted disjoint
 * ranges in memory, an append-only record file on disk, compacted when it
 * grows past what the ranges need (see destroyed.h).  Two locks: io_mu
 * orders the appends and rewrites of the file, set_mu guards the ranges
 * and is never held across disk I/O (order: io_mu, then set_mu). */
#include "oss/destroyed.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "common/proto.h"

#define HDR "pfs-destroyed v1"  /* exactly REC bytes */
#define REC 16u
#define SLACK 1024u             /* records beyond 2 x ranges before a rewrite */
#define READ_CHUNK 4096u        /* records read at a time at open */

typedef struct range {
	uint64_t lo, hi; /* inclusive */
} range;

struct oss_destroyed {
	int dirfd;
	char *name;
	int fd;              /* the record file, O_WRONLY|O_APPEND */
	size_t records;      /* records in the file; guarded by io_mu */
	pthread_mutex_t io_mu;
	pthread_mutex_t set_mu;
	range *r;            /* guarded by set_mu */
	size_t n, cap;       /* guarded by set_mu */
};

/* ---- records ---- */

static uint32_t rec_check(uint64_t lo, uint32_t count)
{
	/* Not a security check: it rejects zeros and torn bytes. */
	uint64_t h = (lo ^ 0x70667364657374ull) * 0x9E3779B97F4A7C15ull;

	h ^= (uint64_t)count * 0xC2B2AE3D27D4EB4Full;
	h ^= h >> 29;
	return (uint32_t)(h ^ (h >> 32)) | 1u; /* never 0 */
}

static void put_le(uint8_t *p, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = n; i-- > 0;)
		v = v << 8 | p[i];
	return v;
}

static void rec_encode(uint8_t out[REC], uint64_t lo, uint32_t count)
{
	put_le(out, lo, 8);
	put_le(out + 8, count, 4);
	put_le(out + 12, rec_check(lo, count), 4);
}

/* 0 and the range, or -1 for a record that is not one. */
static int rec_decode(const uint8_t in[REC], range *out)
{
	uint64_t lo = get_le(in, 8);
	uint32_t count = (uint32_t)get_le(in + 8, 4);

	if (count == 0 || get_le(in + 12, 4) != rec_check(lo, count) ||
	    lo > UINT64_MAX - (count - 1))
		return -1;
	out->lo = lo;
	out->hi = lo + (count - 1);
	return 0;
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (w == 0)
			return -EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* ---- the range set (caller holds set_mu, or owns d alone) ---- */

/* Index of the first range with hi >= id (n if none). */
static size_t find(const oss_destroyed *d, uint64_t id)
{
	size_t lo = 0, hi = d->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (d->r[mid].hi < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Insert [lo, hi], merging with overlapping or adjacent ranges. */
static int set_insert(oss_destroyed *d, uint64_t lo, uint64_t hi)
{
	size_t i = find(d, lo ? lo - 1 : 0), j;

	/* ranges i.. with lo <= hi + 1 touch [lo, hi] */
	for (j = i; j < d->n && (hi == UINT64_MAX || d->r[j].lo <= hi + 1); j++) {
		if (d->r[j].lo < lo)
			lo = d->r[j].lo;
		if (d->r[j].hi > hi)
			hi = d->r[j].hi;
	}
	if (j > i) { /* replace ranges i..j-1 by one */
		d->r[i].lo = lo;
		d->r[i].hi = hi;
		memmove(&d->r[i + 1], &d->r[j], (d->n - j) * sizeof(*d->r));
		d->n -= j - i - 1;
		return 0;
	}
	if (d->n == d->cap) {
		size_t nc = d->cap ? d->cap * 2 : 64;
		range *nr = realloc(d->r, nc * sizeof(*nr));

		if (!nr)
			return -ENOMEM;
		d->r = nr;
		d->cap = nc;
	}
	memmove(&d->r[i + 1], &d->r[i], (d->n - i) * sizeof(*d->r));
	d->r[i].lo = lo;
	d->r[i].hi = hi;
	d->n++;
	return 0;
}

static int set_has(const oss_destroyed *d, uint64_t id)
{
	size_t i = find(d, id);

	return i < d->n && d->r[i].lo <= id;
}

/* ---- the file ---- */

/* Records the current set needs (a range longer than 2^32 - 1 takes more). */
static size_t needed(const range *r, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		k += (size_t)((r[i].hi - r[i].lo) / UINT32_MAX) + 1;
	return k;
}

/* Write ranges r[0..n) as a fresh file (tmp + fsync + rename + dir fsync)
 * and reopen it for appends.  Caller holds io_mu.  On error the old file
 * and descriptor stay. */
static int rewrite(oss_destroyed *d, const range *r, size_t n)
{
	char tmp[256];
	uint8_t buf[REC * 256];
	size_t used = 0, recs = 0;
	int fd, nfd, rc = 0;

	snprintf(tmp, sizeof(tmp), "%s.tmp", d->name);
	fd = openat(d->dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	memcpy(buf, HDR, REC);
	used = REC;
	for (size_t i = 0; i < n && !rc; i++) {
		uint64_t lo = r[i].lo;

		for (;;) {
			uint64_t left = r[i].hi - lo; /* ids after lo */
			uint32_t count = left >= UINT32_MAX ? UINT32_MAX : (uint32_t)(left + 1);

			if (used == sizeof(buf)) {
				rc = write_all(fd, buf, used);
				used = 0;
				if (rc)
					break;
			}
			rec_encode(buf + used, lo, count);
			used += REC;
			recs++;
			if (left < UINT32_MAX)
				break;
			lo += count;
		}
	}
	if (!rc && used)
		rc = write_all(fd, buf, used);
	if (!rc && fsync(fd))
		rc = -errno;
	close(fd);
	if (!rc && renameat(d->dirfd, tmp, d->dirfd, d->name))
		rc = -errno;
	if (!rc && fsync(d->dirfd))
		rc = -errno;
	if (rc) {
		unlinkat(d->dirfd, tmp, 0);
		return rc;
	}
	nfd = openat(d->dirfd, d->name, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (nfd < 0)
		return -errno;
	if (d->fd >= 0)
		close(d->fd);
	d->fd = nfd;
	d->records = recs;
	return 0;
}

/* Read every record of the file into the set; *recs its records, *bad
 * whether anything was skipped (a torn tail, a damaged record, a header
 * missing).  A missing file is an empty set. */
static int load(oss_destroyed *d, size_t *recs, int *bad)
{
	uint8_t *buf = malloc(REC * READ_CHUNK);
	size_t have = 0;
	int fd, rc = 0, first = 1;

	*recs = 0;
	*bad = 0;
	if (!buf)
		return -ENOMEM;
	fd = openat(d->dirfd, d->name, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		free(buf);
		if (errno == ENOENT) {
			*bad = 1; /* write a header */
			return 0;
		}
		return -errno;
	}
	for (;;) {
		ssize_t got = read(fd, buf + have, REC * READ_CHUNK - have);
		size_t i = 0;

		if (got < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			break;
		}
		have += (size_t)got;
		if (first && have >= REC) {
			if (memcmp(buf, HDR, REC)) {
				rc = -EINVAL; /* not ours: keep it, refuse to start */
				break;
			}
			i = REC;
			first = 0;
		}
		for (; i + REC <= have && !rc; i += REC) {
			range x;

			if (rec_decode(buf + i, &x)) {
				*bad = 1;
				continue;
			}
			(*recs)++;
			rc = set_insert(d, x.lo, x.hi);
		}
		if (rc)
			break;
		memmove(buf, buf + i, have - i);
		have -= i;
		if (got == 0)
			break;
	}
	if (!rc && (have || first))
		*bad = 1; /* a torn tail or a short header */
	close(fd);
	free(buf);
	return rc;
}

int oss_destroyed_open(int dirfd, const char *name, oss_destroyed **out)
{
	oss_destroyed *d = calloc(1, sizeof(*d));
	size_t recs;
	int bad, rc;

	if (!d)
		return -ENOMEM;
	d->dirfd = dirfd;
	d->fd = -1;
	pthread_mutex_init(&d->io_mu, NULL);
	pthread_mutex_init(&d->set_mu, NULL);
	d->name = strdup(name);
	rc = d->name ? load(d, &recs, &bad) : -ENOMEM;
	if (!rc) {
		d->records = recs;
		if (bad || recs > 2 * needed(d->r, d->n) + SLACK) {
			rc = rewrite(d, d->r, d->n);
		} else {
			d->fd = openat(dirfd, name, O_WRONLY | O_APPEND | O_CLOEXEC);
			if (d->fd < 0)
				rc = -errno;
		}
	}
	if (rc) {
		oss_destroyed_close(d);
		return rc;
	}
	*out = d;
	return 0;
}

void oss_destroyed_close(oss_destroyed *d)
{
	if (!d)
		return;
	if (d->fd >= 0) {
		(void)!fdatasync(d->fd); /* records appended without a sync */
		close(d->fd);
	}
	pthread_mutex_destroy(&d->io_mu);
	pthread_mutex_destroy(&d->set_mu);
	free(d->r);
	free(d->name);
	free(d);
}

int oss_destroyed_has(oss_destroyed *d, uint64_t id)
{
	int has;

	pthread_mutex_lock(&d->set_mu);
	has = set_has(d, id);
	pthread_mutex_unlock(&d->set_mu);
	return has;
}

/* Rewrite the file from a copy of the set when it holds too many records.
 * Caller holds io_mu.  A failure only leaves the longer file. */
static void maybe_compact(oss_destroyed *d)
{
	range *copy;
	size_t n, need;
	int rc;

	pthread_mutex_lock(&d->set_mu);
	n = d->n;
	need = needed(d->r, n);
	copy = d->records > 2 * need + SLACK ? malloc((n ? n : 1) * sizeof(*copy)) : NULL;
	if (copy && n)
		memcpy(copy, d->r, n * sizeof(*copy));
	pthread_mutex_unlock(&d->set_mu);
	if (!copy)
		return;
	rc = rewrite(d, copy, n);
	if (rc)
		pfs_log(PFS_LOG_WARNING, "oss: compacting the destroyed-object record: %s",
			pfs_strerror(rc));
	free(copy);
}

int oss_destroyed_add(oss_destroyed *d, uint64_t id, int sync)
{
	uint8_t rec[REC];
	int rc;

	pthread_mutex_lock(&d->io_mu);
	if (oss_destroyed_has(d, id)) {
		pthread_mutex_unlock(&d->io_mu);
		return 0;
	}
	rec_encode(rec, id, 1);
	rc = write_all(d->fd, rec, REC);
	if (rc) /* no torn record before the next append */
		(void)!ftruncate(d->fd, (off_t)((d->records + 1) * REC));
	if (!rc && sync && fdatasync(d->fd))
		rc = -errno;
	if (!rc) {
		d->records++;
		pthread_mutex_lock(&d->set_mu);
		rc = set_insert(d, id, id);
		pthread_mutex_unlock(&d->set_mu);
	}
	if (!rc)
		maybe_compact(d);
	pthread_mutex_unlock(&d->io_mu);
	return rc;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Room for `extra` more ranges, so inserting them cannot fail half-way. */
static int set_reserve(oss_destroyed *d, size_t extra)
{
	size_t nc = d->cap ? d->cap : 64;
	range *nr;

	while (nc - d->n < extra)
		nc *= 2;
	if (nc == d->cap)
		return 0;
	nr = realloc(d->r, nc * sizeof(*nr));
	if (!nr)
		return -ENOMEM;
	d->r = nr;
	d->cap = nc;
	return 0;
}

int oss_destroyed_add_many(oss_destroyed *d, const uint64_t *ids, size_t n, int sync)
{
	uint64_t *v;
	uint8_t *recs;
	size_t m = 0, runs = 0, i;
	int rc = 0;

	if (n == 0)
		return 0;
	v = malloc(n * sizeof(*v));
	recs = malloc(n * REC);
	if (!v || !recs) {
		free(v);
		free(recs);
		return -ENOMEM;
	}
	pthread_mutex_lock(&d->io_mu);
	/* The new ids, sorted and unique; then one record per run of
	 * consecutive ids, all in one write. */
	for (i = 0; i < n; i++)
		if (!oss_destroyed_has(d, ids[i]))
			v[m++] = ids[i];
	qsort(v, m, sizeof(*v), cmp_u64);
	for (i = 0; i < m;) {
		size_t j = i + 1;

		while (j < m && v[j] <= v[j - 1] + 1 && j - i < UINT32_MAX)
			j++;
		/* duplicates inside the batch: a run from v[i] to v[j-1] */
		rec_encode(recs + runs * REC, v[i], (uint32_t)(v[j - 1] - v[i] + 1));
		runs++;
		i = j;
	}
	if (runs) {
		pthread_mutex_lock(&d->set_mu);
		rc = set_reserve(d, runs);
		pthread_mutex_unlock(&d->set_mu);
	}
	if (!rc && runs) {
		rc = write_all(d->fd, recs, runs * REC);
		if (rc) /* no torn record before the next append */
			(void)!ftruncate(d->fd, (off_t)((d->records + 1) * REC));
	}
	if (!rc && sync && fdatasync(d->fd))
		rc = -errno;
	if (!rc && runs) {
		d->records += runs;
		pthread_mutex_lock(&d->set_mu);
		for (i = 0; i < runs; i++) {
			uint64_t lo = get_le(recs + i * REC, 8);
			uint32_t count = (uint32_t)get_le(recs + i * REC + 8, 4);

			(void)set_insert(d, lo, lo + (count - 1)); /* room reserved */
		}
		pthread_mutex_unlock(&d->set_mu);
		maybe_compact(d);
	}
	pthread_mutex_unlock(&d->io_mu);
	free(v);
	free(recs);
	return rc;
}

int oss_destroyed_sync(oss_destroyed *d)
{
	int rc = 0;

	pthread_mutex_lock(&d->io_mu);
	if (fdatasync(d->fd))
		rc = -errno;
	pthread_mutex_unlock(&d->io_mu);
	return rc;
}

void oss_destroyed_counts(oss_destroyed *d, size_t *ranges, size_t *records)
{
	pthread_mutex_lock(&d->io_mu);
	*records = d->records;
	pthread_mutex_lock(&d->set_mu);
	*ranges = d->n;
	pthread_mutex_unlock(&d->set_mu);
	pthread_mutex_unlock(&d->io_mu);
}
