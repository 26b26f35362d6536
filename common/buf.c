/* buf.c — payload codec with sticky errors (see buf.h). */
#include "common/buf.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void pfs_wbuf_init(pfs_wbuf *b) { memset(b, 0, sizeof(*b)); }

void pfs_wbuf_free(pfs_wbuf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

void pfs_wbuf_reset(pfs_wbuf *b)
{
	b->len = 0;
	b->err = 0;
}

uint8_t *pfs_wbuf_reserve(pfs_wbuf *b, size_t n)
{
	if (b->err)
		return NULL;
	if (n > SIZE_MAX / 2 - b->len) {
		b->err = -EMSGSIZE;
		return NULL;
	}
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->len + n)
			cap *= 2;
		uint8_t *p = realloc(b->data, cap);
		if (!p) {
			b->err = -ENOMEM;
			return NULL;
		}
		b->data = p;
		b->cap = cap;
	}
	uint8_t *p = b->data + b->len;
	b->len += n;
	return p;
}

void pfs_wbuf_u8(pfs_wbuf *b, uint8_t v)
{
	uint8_t *p = pfs_wbuf_reserve(b, 1);
	if (p)
		p[0] = v;
}

void pfs_wbuf_u16(pfs_wbuf *b, uint16_t v)
{
	uint8_t *p = pfs_wbuf_reserve(b, 2);
	if (p) {
		p[0] = (uint8_t)v;
		p[1] = (uint8_t)(v >> 8);
	}
}

void pfs_wbuf_u32(pfs_wbuf *b, uint32_t v)
{
	uint8_t *p = pfs_wbuf_reserve(b, 4);
	if (p)
		for (int i = 0; i < 4; i++)
			p[i] = (uint8_t)(v >> (8 * i));
}

void pfs_wbuf_u64(pfs_wbuf *b, uint64_t v)
{
	uint8_t *p = pfs_wbuf_reserve(b, 8);
	if (p)
		for (int i = 0; i < 8; i++)
			p[i] = (uint8_t)(v >> (8 * i));
}

void pfs_wbuf_i64(pfs_wbuf *b, int64_t v) { pfs_wbuf_u64(b, (uint64_t)v); }

void pfs_wbuf_bytes(pfs_wbuf *b, const void *src, size_t n)
{
	uint8_t *p = pfs_wbuf_reserve(b, n);
	if (p && n)
		memcpy(p, src, n);
}

void pfs_wbuf_strn(pfs_wbuf *b, const void *s, size_t n)
{
	if (n > UINT32_MAX) {
		b->err = b->err ? b->err : -EMSGSIZE;
		return;
	}
	pfs_wbuf_u32(b, (uint32_t)n);
	pfs_wbuf_bytes(b, s, n);
}

void pfs_wbuf_str(pfs_wbuf *b, const char *s) { pfs_wbuf_strn(b, s, s ? strlen(s) : 0); }

int pfs_wbuf_error(const pfs_wbuf *b) { return b->err; }

void pfs_rbuf_init(pfs_rbuf *b, const void *data, size_t len)
{
	b->data = data;
	b->len = data ? len : 0;
	b->pos = 0;
	b->err = 0;
}

const uint8_t *pfs_rbuf_bytes(pfs_rbuf *b, size_t n)
{
	if (b->err)
		return NULL;
	if (n > b->len - b->pos) {
		b->err = -EBADMSG;
		return NULL;
	}
	const uint8_t *p = b->data + b->pos;
	b->pos += n;
	return p;
}

static uint64_t rd_le(pfs_rbuf *b, int n)
{
	const uint8_t *p = pfs_rbuf_bytes(b, (size_t)n);
	uint64_t v = 0;

	if (!p)
		return 0;
	for (int i = n - 1; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

uint8_t pfs_rbuf_u8(pfs_rbuf *b) { return (uint8_t)rd_le(b, 1); }
uint16_t pfs_rbuf_u16(pfs_rbuf *b) { return (uint16_t)rd_le(b, 2); }
uint32_t pfs_rbuf_u32(pfs_rbuf *b) { return (uint32_t)rd_le(b, 4); }
uint64_t pfs_rbuf_u64(pfs_rbuf *b) { return rd_le(b, 8); }
int64_t pfs_rbuf_i64(pfs_rbuf *b) { return (int64_t)rd_le(b, 8); }

const char *pfs_rbuf_str(pfs_rbuf *b, size_t max, size_t *n)
{
	uint32_t len = pfs_rbuf_u32(b);

	*n = 0;
	if (b->err)
		return NULL;
	if (len > max) {
		b->err = -EBADMSG;
		return NULL;
	}
	const char *p = (const char *)pfs_rbuf_bytes(b, len);
	if (p)
		*n = len;
	return p;
}

void pfs_rbuf_cstr(pfs_rbuf *b, char *out, size_t outsz)
{
	size_t n;
	const char *p = pfs_rbuf_str(b, outsz ? outsz - 1 : 0, &n);

	if (outsz)
		out[0] = '\0';
	if (!p)
		return;
	if (memchr(p, '\0', n)) {
		b->err = -EBADMSG;
		return;
	}
	memcpy(out, p, n);
	out[n] = '\0';
}

size_t pfs_rbuf_left(const pfs_rbuf *b) { return b->err ? 0 : b->len - b->pos; }

int pfs_rbuf_done(const pfs_rbuf *b)
{
	if (b->err)
		return b->err;
	return b->pos == b->len ? 0 : -EBADMSG;
}

int pfs_rbuf_error(const pfs_rbuf *b) { return b->err; }

void pfs_wbuf_f64(pfs_wbuf *b, double v)
{
	uint64_t u;

	memcpy(&u, &v, sizeof(u));
	pfs_wbuf_u64(b, u);
}

double pfs_rbuf_f64(pfs_rbuf *b)
{
	uint64_t u = pfs_rbuf_u64(b);
	double v;

	memcpy(&v, &u, sizeof(v));
	return v;
}

double pfs_rbuf_f64_finite(pfs_rbuf *b)
{
	double v = pfs_rbuf_f64(b);

	if (!isfinite(v)) {
		pfs_rbuf_fail(b);
		return 0;
	}
	return v;
}

void pfs_rbuf_fail(pfs_rbuf *b)
{
	if (!b->err)
		b->err = -EBADMSG;
}
