/* msg.c — codecs for the shared payload value types (see msg.h). */
#include "common/msg.h"

#include <errno.h>
#include <string.h>

void pfs_cred_encode(pfs_wbuf *b, const pfs_cred *c)
{
	uint32_t n = c->ngroups > PFS_MAX_GROUPS ? PFS_MAX_GROUPS : c->ngroups;

	pfs_wbuf_u32(b, c->uid);
	pfs_wbuf_u32(b, c->gid);
	pfs_wbuf_u32(b, n);
	for (uint32_t i = 0; i < n; i++)
		pfs_wbuf_u32(b, c->groups[i]);
}

int pfs_cred_decode(pfs_rbuf *b, pfs_cred *c)
{
	memset(c, 0, sizeof(*c));
	c->uid = pfs_rbuf_u32(b);
	c->gid = pfs_rbuf_u32(b);
	c->ngroups = pfs_rbuf_u32(b);
	if (pfs_rbuf_error(b))
		return pfs_rbuf_error(b);
	if (c->ngroups > PFS_MAX_GROUPS)
		return -EBADMSG;
	for (uint32_t i = 0; i < c->ngroups; i++)
		c->groups[i] = pfs_rbuf_u32(b);
	return pfs_rbuf_error(b);
}

int pfs_cred_in_group(const pfs_cred *c, uint32_t gid)
{
	if (c->gid == gid)
		return 1;
	for (uint32_t i = 0; i < c->ngroups && i < PFS_MAX_GROUPS; i++)
		if (c->groups[i] == gid)
			return 1;
	return 0;
}

void pfs_attr_encode(pfs_wbuf *b, const pfs_attr *a)
{
	pfs_wbuf_u64(b, a->ino);
	pfs_wbuf_u32(b, a->mode);
	pfs_wbuf_u32(b, a->nlink);
	pfs_wbuf_u32(b, a->uid);
	pfs_wbuf_u32(b, a->gid);
	pfs_wbuf_u32(b, a->rdev);
	pfs_wbuf_u64(b, a->size);
	pfs_wbuf_u64(b, a->blocks);
	pfs_wbuf_i64(b, a->atime_ns);
	pfs_wbuf_i64(b, a->mtime_ns);
	pfs_wbuf_i64(b, a->ctime_ns);
	pfs_wbuf_u32(b, a->tepoch);
	pfs_wbuf_u32(b, a->flags);
}

int pfs_attr_decode(pfs_rbuf *b, pfs_attr *a)
{
	a->ino = pfs_rbuf_u64(b);
	a->mode = pfs_rbuf_u32(b);
	a->nlink = pfs_rbuf_u32(b);
	a->uid = pfs_rbuf_u32(b);
	a->gid = pfs_rbuf_u32(b);
	a->rdev = pfs_rbuf_u32(b);
	a->size = pfs_rbuf_u64(b);
	a->blocks = pfs_rbuf_u64(b);
	a->atime_ns = pfs_rbuf_i64(b);
	a->mtime_ns = pfs_rbuf_i64(b);
	a->ctime_ns = pfs_rbuf_i64(b);
	a->tepoch = pfs_rbuf_u32(b);
	a->flags = pfs_rbuf_u32(b);
	return pfs_rbuf_error(b);
}

void pfs_statfs_encode(pfs_wbuf *b, const pfs_statfs *s)
{
	pfs_wbuf_u32(b, s->bsize);
	pfs_wbuf_u32(b, s->namemax);
	pfs_wbuf_u64(b, s->blocks);
	pfs_wbuf_u64(b, s->bfree);
	pfs_wbuf_u64(b, s->bavail);
	pfs_wbuf_u64(b, s->files);
	pfs_wbuf_u64(b, s->ffree);
}

int pfs_statfs_decode(pfs_rbuf *b, pfs_statfs *s)
{
	s->bsize = pfs_rbuf_u32(b);
	s->namemax = pfs_rbuf_u32(b);
	s->blocks = pfs_rbuf_u64(b);
	s->bfree = pfs_rbuf_u64(b);
	s->bavail = pfs_rbuf_u64(b);
	s->files = pfs_rbuf_u64(b);
	s->ffree = pfs_rbuf_u64(b);
	return pfs_rbuf_error(b);
}

void pfs_ost_info_encode(pfs_wbuf *b, const pfs_ost_info *o)
{
	pfs_wbuf_u32(b, o->index);
	pfs_wbuf_str(b, o->uuid);
	pfs_wbuf_str(b, o->oss);
	pfs_wbuf_str(b, o->host);
	pfs_wbuf_u16(b, o->data_port);
	pfs_wbuf_u16(b, o->ctl_port);
	pfs_wbuf_u8(b, o->up);
	pfs_wbuf_u64(b, o->total_bytes);
	pfs_wbuf_u64(b, o->free_bytes);
	pfs_wbuf_u64(b, o->objects);
}

int pfs_ost_info_decode(pfs_rbuf *b, pfs_ost_info *o)
{
	o->index = pfs_rbuf_u32(b);
	pfs_rbuf_cstr(b, o->uuid, sizeof(o->uuid));
	pfs_rbuf_cstr(b, o->oss, sizeof(o->oss));
	pfs_rbuf_cstr(b, o->host, sizeof(o->host));
	o->data_port = pfs_rbuf_u16(b);
	o->ctl_port = pfs_rbuf_u16(b);
	o->up = pfs_rbuf_u8(b);
	o->total_bytes = pfs_rbuf_u64(b);
	o->free_bytes = pfs_rbuf_u64(b);
	o->objects = pfs_rbuf_u64(b);
	return pfs_rbuf_error(b);
}

void pfs_job_stats_encode(pfs_wbuf *b, const pfs_job_stats *s)
{
	pfs_wbuf_str(b, s->job);
	pfs_wbuf_u64(b, s->read_rpcs);
	pfs_wbuf_u64(b, s->write_rpcs);
	pfs_wbuf_u64(b, s->other_rpcs);
	pfs_wbuf_u64(b, s->read_bytes);
	pfs_wbuf_u64(b, s->write_bytes);
	pfs_wbuf_u32(b, s->queued);
	pfs_wbuf_u64(b, s->wait_us_sum);
}

int pfs_job_stats_decode(pfs_rbuf *b, pfs_job_stats *s)
{
	pfs_rbuf_cstr(b, s->job, sizeof(s->job));
	s->read_rpcs = pfs_rbuf_u64(b);
	s->write_rpcs = pfs_rbuf_u64(b);
	s->other_rpcs = pfs_rbuf_u64(b);
	s->read_bytes = pfs_rbuf_u64(b);
	s->write_bytes = pfs_rbuf_u64(b);
	s->queued = pfs_rbuf_u32(b);
	s->wait_us_sum = pfs_rbuf_u64(b);
	return pfs_rbuf_error(b);
}
