/* buf.h — bounds-checked little-endian payload codec.
 *
 * pfs_wbuf is a growable output buffer; pfs_rbuf reads from borrowed bytes.
 * Both carry a sticky error: after the first failure (out of memory, read
 * past the end, string longer than allowed) every further call is a no-op and
 * pfs_*buf_error() returns the negative errno, so a message is encoded or
 * decoded with straight-line code and checked once at the end.
 *
 * Strings on the wire are u32 length + bytes (no NUL).  pfs_rbuf_str returns
 * a pointer into the read buffer (not NUL-terminated) that lives as long as
 * the buffer; pfs_rbuf_cstr copies into a caller buffer and NUL-terminates. */
#ifndef PFS_BUF_H
#define PFS_BUF_H

#include <stddef.h>
#include <stdint.h>

typedef struct pfs_wbuf {
	uint8_t *data;
	size_t len, cap;
	int err;
} pfs_wbuf;

typedef struct pfs_rbuf {
	const uint8_t *data;
	size_t len, pos;
	int err;
} pfs_rbuf;

void pfs_wbuf_init(pfs_wbuf *b);
void pfs_wbuf_free(pfs_wbuf *b);
void pfs_wbuf_reset(pfs_wbuf *b); /* len = 0, err = 0, keeps memory */
/* Reserve n bytes at the end and return a pointer to them (NULL on error). */
uint8_t *pfs_wbuf_reserve(pfs_wbuf *b, size_t n);
void pfs_wbuf_u8(pfs_wbuf *b, uint8_t v);
void pfs_wbuf_u16(pfs_wbuf *b, uint16_t v);
void pfs_wbuf_u32(pfs_wbuf *b, uint32_t v);
void pfs_wbuf_u64(pfs_wbuf *b, uint64_t v);
void pfs_wbuf_i64(pfs_wbuf *b, int64_t v);
void pfs_wbuf_f64(pfs_wbuf *b, double v);                  /* IEEE-754 bits as u64 */
void pfs_wbuf_bytes(pfs_wbuf *b, const void *p, size_t n); /* raw, no length */
void pfs_wbuf_str(pfs_wbuf *b, const char *s);             /* u32 len + bytes */
void pfs_wbuf_strn(pfs_wbuf *b, const void *s, size_t n);
int pfs_wbuf_error(const pfs_wbuf *b);

void pfs_rbuf_init(pfs_rbuf *b, const void *data, size_t len);
uint8_t pfs_rbuf_u8(pfs_rbuf *b);
uint16_t pfs_rbuf_u16(pfs_rbuf *b);
uint32_t pfs_rbuf_u32(pfs_rbuf *b);
uint64_t pfs_rbuf_u64(pfs_rbuf *b);
int64_t pfs_rbuf_i64(pfs_rbuf *b);
/* Any binary64 value, NaN and infinities included: check with isfinite. */
double pfs_rbuf_f64(pfs_rbuf *b);
/* A finite f64; NaN or an infinity sets the error (-EBADMSG) and gives 0. */
double pfs_rbuf_f64_finite(pfs_rbuf *b);
/* Borrow n raw bytes; NULL (and error) if fewer remain. */
const uint8_t *pfs_rbuf_bytes(pfs_rbuf *b, size_t n);
/* Borrow a string of at most max bytes; *n gets its length. */
const char *pfs_rbuf_str(pfs_rbuf *b, size_t max, size_t *n);
/* Copy a string into out (size outsz, NUL-terminated); error if it does not
 * fit or contains a NUL byte. */
void pfs_rbuf_cstr(pfs_rbuf *b, char *out, size_t outsz);
size_t pfs_rbuf_left(const pfs_rbuf *b);
/* 0 if no error occurred and every byte was consumed, else -EBADMSG. */
int pfs_rbuf_done(const pfs_rbuf *b);
int pfs_rbuf_error(const pfs_rbuf *b);
/* Mark the input malformed (-EBADMSG unless an error is already set): for
 * decoders that find a value out of range. */
void pfs_rbuf_fail(pfs_rbuf *b);

#endif
