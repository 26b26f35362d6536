/* tbf_rule.c — parse and format the text form of NRS TBF rules (see
 * tbf_rule.h).
 *
 * The parser is a single pass over words: a word is key=value, where a list
 * value may be braced and then runs to the closing brace across spaces.
 * Each key has a row in one table (name, bit for duplicate detection, value
 * handler).  Numbers are checked lexically before strtod (so "nan", "inf",
 * hex floats and signs never reach it) and then for range.  Semantic
 * checks shared with hand-built specs live in spec_check, which both parse
 * and format use, so everything parse accepts formats, and everything
 * format writes parses back to the same values: numbers are written in the
 * shortest form that strtod reads back exactly, multiplied by the same
 * suffix factor the parser uses.  strtod and snprintf are used in the C
 * locale (the daemons never call setlocale). */
#include "qos/tbf_rule.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/qosmsg.h"

#define NUM_MAX 24   /* longest number text we read or write, with NUL */
#define WORD_SHOW 40 /* how much of an offending word an error quotes */

/* Opcode class names, indexed by QOS_TBF_OPC_*. */
static const char *const opc_names[] = {
	[QOS_TBF_OPC_READ] = "read",
	[QOS_TBF_OPC_WRITE] = "write",
	[QOS_TBF_OPC_OTHER] = "other",
};
#define N_OPC (sizeof(opc_names) / sizeof(opc_names[0]))
#define OPC_ALL ((1u << N_OPC) - 1)

/* Size suffixes of byte quantities; the parser and the formatter share the
 * factors, which is what makes the round trip exact. */
static const struct {
	const char *s;
	double mult;
} suffixes[] = {
	{ "", 1 },       { "K", 1e3 },        { "Ki", 1024.0 },
	{ "M", 1e6 },    { "Mi", 1048576.0 }, { "G", 1e9 },
	{ "Gi", 1073741824.0 },
};
#define N_SUFFIX (sizeof(suffixes) / sizeof(suffixes[0]))

static void errf(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void errf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* ---- checks shared by parse, check and format --------------------------- */

/* A byte that may appear in a job pattern. */
static int pat_byte(unsigned char c)
{
	return (c > 0x20 && c < 0x7f && c != '{' && c != '}') || c >= 0x80;
}

/* Why pattern p (n bytes) is not valid, or NULL. */
static const char *pat_problem(const char *p, size_t n)
{
	if (n == 0)
		return "empty pattern";
	if (n >= QOS_TBF_ID_MAX)
		return "pattern too long";
	for (size_t i = 0; i < n; i++) {
		if (!pat_byte((unsigned char)p[i]))
			return "bad character in pattern";
		if (p[i] == '*' && i + 1 != n)
			return "'*' only at the end of a pattern";
	}
	return NULL;
}

static int spec_check(const qos_tbf_rule_spec *s, char *err, size_t errlen)
{
	size_t text = 0;

	if (!s) {
		errf(err, errlen, "no rule");
		return -EINVAL;
	}
	if (s->n_jobids > QOS_TBF_RULE_JOBS_MAX) {
		errf(err, errlen, "jobid: more than %d patterns", QOS_TBF_RULE_JOBS_MAX);
		return -EINVAL;
	}
	if (s->n_jobids && !s->jobids) {
		errf(err, errlen, "jobid: no patterns");
		return -EINVAL;
	}
	for (size_t i = 0; i < s->n_jobids; i++) {
		const char *p = s->jobids[i];
		size_t n = p ? strnlen(p, QOS_TBF_ID_MAX) : 0;
		const char *why = pat_problem(p ? p : "", n);

		if (why) {
			errf(err, errlen, "jobid: %s '%.*s'", why, WORD_SHOW, p ? p : "");
			return -EINVAL;
		}
		for (size_t j = 0; j < i; j++)
			if (strcmp(s->jobids[j], p) == 0) {
				errf(err, errlen, "jobid: duplicate '%s'", p);
				return -EINVAL;
			}
		text += n + (i > 0);
	}
	if (text > QOS_TBF_RULE_JOBS_TEXT_MAX) {
		errf(err, errlen, "jobid: list too long (%zu bytes, max %d)", text,
		     QOS_TBF_RULE_JOBS_TEXT_MAX);
		return -EINVAL;
	}
	if (s->uid < -1 || s->uid > (int64_t)UINT32_MAX) {
		errf(err, errlen, "uid: out of range '%lld'", (long long)s->uid);
		return -EINVAL;
	}
	if (s->gid < -1 || s->gid > (int64_t)UINT32_MAX) {
		errf(err, errlen, "gid: out of range '%lld'", (long long)s->gid);
		return -EINVAL;
	}
	if (s->opc_mask & ~OPC_ALL) {
		errf(err, errlen, "opcode: unknown class in mask 0x%x", s->opc_mask);
		return -EINVAL;
	}
	if (s->unit != QOS_TBF_UNIT_RPC && s->unit != QOS_TBF_UNIT_BYTE) {
		errf(err, errlen, "unknown unit %d", s->unit);
		return -EINVAL;
	}
	const char *rk = s->unit == QOS_TBF_UNIT_BYTE ? "rate" : "rpcs";
	if (!isfinite(s->rate) || s->rate < 0 || s->rate > QOS_TBF_RATE_MAX) {
		errf(err, errlen, "%s: out of range '%g'", rk, s->rate);
		return -EINVAL;
	}
	if (!isfinite(s->depth) || s->depth < 0 || s->depth > QOS_TBF_RATE_MAX) {
		errf(err, errlen, "depth: out of range '%g'", s->depth);
		return -EINVAL;
	}
	if (s->rank == INT_MIN) {
		errf(err, errlen, "rank: out of range '%d'", s->rank);
		return -EINVAL;
	}
	return 0;
}

int qos_tbf_rule_check(const qos_tbf_rule_spec *spec, char *err, size_t errlen)
{
	return spec_check(spec, err, errlen);
}

/* ---- numbers ------------------------------------------------------------- */

/* Length of the decimal number at s (digits, optional fraction, optional
 * exponent), 0 if there is none.  Signs, "nan", "inf" and hex are not
 * numbers here. */
static size_t num_span(const char *s, size_t n)
{
	size_t i = 0, d;

	while (i < n && s[i] >= '0' && s[i] <= '9')
		i++;
	if (i == 0)
		return 0;
	if (i < n && s[i] == '.') {
		d = i + 1;
		while (d < n && s[d] >= '0' && s[d] <= '9')
			d++;
		if (d == i + 1)
			return 0; /* "5." */
		i = d;
	}
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		d = i + 1;
		if (d < n && (s[d] == '+' || s[d] == '-'))
			d++;
		size_t e = d;
		while (e < n && s[e] >= '0' && s[e] <= '9')
			e++;
		if (e > d)
			i = e; /* else the 'e' is not ours (a suffix, or junk) */
	}
	return i;
}

static int ci_prefix(const char *s, size_t n, const char *word)
{
	size_t w = strlen(word);

	if (n < w)
		return 0;
	for (size_t i = 0; i < w; i++)
		if ((s[i] | 0x20) != word[i])
			return 0;
	return 1;
}

/* The flavours of quantities in rule text. */
enum qty {
	QTY_PLAIN,  /* rpcs=, an RPC depth: a plain number */
	QTY_RATE,   /* rate=: suffix, then "", "B", "B/s" or "/s" */
	QTY_SIZE,   /* a byte depth: suffix, then "" or "B" */
};

/* Read the quantity v (n bytes) of key `key` into *out, and in *bytes
 * whether it carried a suffix or "B" (a byte quantity).  Errors name the
 * word. */
static int qty_parse(const char *key, const char *v, size_t n, enum qty kind,
		     double *out, int *bytes, char *err, size_t errlen)
{
	char num[NUM_MAX];
	size_t len, i;
	double mult = 1, x;

	*bytes = 0;
	if (n && v[0] == '-') {
		errf(err, errlen, "%s: negative '%.*s'", key, (int)(n < WORD_SHOW ? n : WORD_SHOW), v);
		return -EINVAL;
	}
	if (ci_prefix(v, n, "nan") || ci_prefix(v, n, "inf")) {
		errf(err, errlen, "%s: not finite '%.*s'", key, (int)(n < WORD_SHOW ? n : WORD_SHOW), v);
		return -EINVAL;
	}
	len = num_span(v, n);
	if (len == 0 || len >= sizeof(num))
		goto bad;
	memcpy(num, v, len);
	num[len] = 0;
	x = strtod(num, NULL);
	i = len;
	if (kind != QTY_PLAIN) {
		/* longest suffix first: "Ki" before "K" */
		size_t best = 0;
		for (size_t k = 1; k < N_SUFFIX; k++) {
			size_t sl = strlen(suffixes[k].s);
			if (sl > best && n - i >= sl && memcmp(v + i, suffixes[k].s, sl) == 0) {
				best = sl;
				mult = suffixes[k].mult;
			}
		}
		i += best;
		*bytes = best > 0;
		if (i < n && v[i] == 'B') {
			i++;
			*bytes = 1;
		}
		if (kind == QTY_RATE && n - i == 2 && v[i] == '/' && v[i + 1] == 's')
			i += 2;
	}
	if (i != n)
		goto bad;
	x *= mult;
	if (!isfinite(x)) {
		errf(err, errlen, "%s: not finite '%.*s'", key, (int)(n < WORD_SHOW ? n : WORD_SHOW), v);
		return -EINVAL;
	}
	if (x > QOS_TBF_RATE_MAX) {
		errf(err, errlen, "%s: absurd '%.*s' (max %g)", key,
		     (int)(n < WORD_SHOW ? n : WORD_SHOW), v, QOS_TBF_RATE_MAX);
		return -EINVAL;
	}
	*out = x;
	return 0;
bad:
	errf(err, errlen, "%s: malformed '%.*s'", key, (int)(n < WORD_SHOW ? n : WORD_SHOW), v);
	return -EINVAL;
}

/* Read an integer in [lo, hi] (only digits, with a '-' if lo < 0). */
static int int_parse(const char *key, const char *v, size_t n, long long lo,
		     long long hi, long long *out, char *err, size_t errlen)
{
	size_t i = 0;
	int neg = 0;
	unsigned long long x = 0;
	int show = (int)(n < WORD_SHOW ? n : WORD_SHOW);

	if (n && v[0] == '-') {
		if (lo >= 0) {
			errf(err, errlen, "%s: negative '%.*s'", key, show, v);
			return -EINVAL;
		}
		neg = 1;
		i = 1;
	}
	if (i == n) {
		errf(err, errlen, "%s: malformed '%.*s'", key, show, v);
		return -EINVAL;
	}
	for (; i < n; i++) {
		if (v[i] < '0' || v[i] > '9') {
			errf(err, errlen, "%s: malformed '%.*s'", key, show, v);
			return -EINVAL;
		}
		x = x * 10 + (unsigned)(v[i] - '0');
		if (x > (1ULL << 40)) /* far beyond any bound; no overflow */
			break;
	}
	if (x > (1ULL << 40) || (neg ? -(long long)x < lo : (long long)x > hi)) {
		errf(err, errlen, "%s: out of range '%.*s'", key, show, v);
		return -EINVAL;
	}
	*out = neg ? -(long long)x : (long long)x;
	return 0;
}

/* Write x in the shortest decimal text that strtod reads back as x: plain
 * digits if some fit in NUM_MAX - 1 bytes, else the shortest %g form
 * (tiny values), so at most NUM_MAX - 1 bytes either way. */
static void num_shortest(double x, char out[NUM_MAX])
{
	char buf[64];

	if (x == 0)
		x = 0; /* -0 would print a sign the parser refuses */
	if (x < 1e16)
		for (int d = 0; d <= 17; d++) {
			int n = snprintf(buf, sizeof(buf), "%.*f", d, x);
			if (n > 0 && (size_t)n < NUM_MAX && strtod(buf, NULL) == x) {
				memcpy(out, buf, (size_t)n + 1);
				return;
			}
		}
	/* %.17g always reads back exactly and fits */
	for (int p = 1; p <= 17; p++) {
		int n = snprintf(buf, sizeof(buf), "%.*g", p, x);
		if (n > 0 && (size_t)n < NUM_MAX && (p == 17 || strtod(buf, NULL) == x)) {
			memcpy(out, buf, (size_t)n + 1);
			return;
		}
	}
}

/* Write byte quantity x with the suffix that gives the shortest text that
 * the parser reads back as exactly x; returns the suffix. */
static const char *bytes_shortest(double x, char out[NUM_MAX])
{
	char buf[NUM_MAX];
	const char *suf = "";
	size_t best = SIZE_MAX;

	for (size_t k = 0; k < N_SUFFIX; k++) {
		double m = x / suffixes[k].mult;
		num_shortest(m, buf);
		size_t n = strlen(buf) + strlen(suffixes[k].s);
		if (n < best && strtod(buf, NULL) * suffixes[k].mult == x) {
			best = n;
			suf = suffixes[k].s;
			memcpy(out, buf, sizeof(buf));
		}
	}
	return suf;
}

/* ---- parse ---------------------------------------------------------------- */

typedef struct pstate {
	qos_tbf_rule *r;
	double depth;
	int depth_bytes; /* depth had a suffix or "B" */
	char *err;
	size_t errlen;
} pstate;

/* Split list value v (n bytes, braces removed) into items; call fn on
 * each.  An empty list is an error. */
static int list_each(const char *key, const char *v, size_t n, pstate *ps,
		     int (*fn)(pstate *ps, const char *item, size_t len))
{
	size_t i = 0, items = 0;
	int rc;

	for (;;) {
		while (i < n && (v[i] == ' ' || v[i] == '\t'))
			i++;
		if (i == n)
			break;
		size_t s = i;
		while (i < n && v[i] != ' ' && v[i] != '\t')
			i++;
		rc = fn(ps, v + s, i - s);
		if (rc)
			return rc;
		items++;
	}
	if (!items) {
		errf(ps->err, ps->errlen, "%s: empty list", key);
		return -EINVAL;
	}
	return 0;
}

static int job_item(pstate *ps, const char *p, size_t n)
{
	qos_tbf_rule *r = ps->r;
	qos_tbf_rule_spec *s = &r->spec;
	const char *why = pat_problem(p, n);
	int show = (int)(n < WORD_SHOW ? n : WORD_SHOW);

	if (why) {
		errf(ps->err, ps->errlen, "jobid: %s '%.*s'", why, show, p);
		return -EINVAL;
	}
	for (size_t j = 0; j < s->n_jobids; j++)
		if (strlen(r->jobs[j]) == n && memcmp(r->jobs[j], p, n) == 0) {
			errf(ps->err, ps->errlen, "jobid: duplicate '%.*s'", show, p);
			return -EINVAL;
		}
	if (s->n_jobids == QOS_TBF_RULE_JOBS_MAX) {
		errf(ps->err, ps->errlen, "jobid: more than %d patterns at '%.*s'",
		     QOS_TBF_RULE_JOBS_MAX, show, p);
		return -EINVAL;
	}
	memcpy(r->jobs[s->n_jobids], p, n);
	r->jobs[s->n_jobids][n] = 0;
	r->jobv[s->n_jobids] = r->jobs[s->n_jobids];
	s->n_jobids++;
	return 0;
}

static int opc_item(pstate *ps, const char *p, size_t n)
{
	int show = (int)(n < WORD_SHOW ? n : WORD_SHOW);

	for (size_t k = 0; k < N_OPC; k++)
		if (strlen(opc_names[k]) == n && memcmp(opc_names[k], p, n) == 0) {
			if (ps->r->spec.opc_mask & (1u << k)) {
				errf(ps->err, ps->errlen, "opcode: duplicate '%.*s'", show, p);
				return -EINVAL;
			}
			ps->r->spec.opc_mask |= 1u << k;
			return 0;
		}
	errf(ps->err, ps->errlen, "opcode: unknown '%.*s' (read, write, other)", show, p);
	return -EINVAL;
}

static int k_jobid(pstate *ps, const char *v, size_t n)
{
	int rc = list_each("jobid", v, n, ps, job_item);

	ps->r->spec.jobids = ps->r->jobv;
	return rc;
}

static int k_opcode(pstate *ps, const char *v, size_t n)
{
	return list_each("opcode", v, n, ps, opc_item);
}

static int k_uid(pstate *ps, const char *v, size_t n)
{
	long long x;
	int rc = int_parse("uid", v, n, 0, UINT32_MAX, &x, ps->err, ps->errlen);

	if (!rc)
		ps->r->spec.uid = x;
	return rc;
}

static int k_gid(pstate *ps, const char *v, size_t n)
{
	long long x;
	int rc = int_parse("gid", v, n, 0, UINT32_MAX, &x, ps->err, ps->errlen);

	if (!rc)
		ps->r->spec.gid = x;
	return rc;
}

static int k_rate(pstate *ps, const char *v, size_t n)
{
	int bytes;

	ps->r->spec.unit = QOS_TBF_UNIT_BYTE;
	return qty_parse("rate", v, n, QTY_RATE, &ps->r->spec.rate, &bytes,
			 ps->err, ps->errlen);
}

static int k_rpcs(pstate *ps, const char *v, size_t n)
{
	int bytes;

	ps->r->spec.unit = QOS_TBF_UNIT_RPC;
	return qty_parse("rpcs", v, n, QTY_PLAIN, &ps->r->spec.rate, &bytes,
			 ps->err, ps->errlen);
}

static int k_depth(pstate *ps, const char *v, size_t n)
{
	int rc = qty_parse("depth", v, n, QTY_SIZE, &ps->depth, &ps->depth_bytes,
			   ps->err, ps->errlen);

	if (!rc && !(ps->depth > 0)) {
		errf(ps->err, ps->errlen, "depth: must be positive '%.*s'",
		     (int)(n < WORD_SHOW ? n : WORD_SHOW), v);
		return -EINVAL;
	}
	return rc;
}

static int k_rank(pstate *ps, const char *v, size_t n)
{
	long long x;
	int rc = int_parse("rank", v, n, (long long)INT_MIN + 1, INT_MAX, &x,
			   ps->err, ps->errlen);

	if (!rc)
		ps->r->spec.rank = (int)x;
	return rc;
}

static int k_ost(pstate *ps, const char *v, size_t n)
{
	long long x;
	int rc = int_parse("ost", v, n, 0, (long long)PFS_QOS_OST_ALL - 1, &x,
			   ps->err, ps->errlen);

	if (!rc)
		ps->r->ost = (uint32_t)x;
	return rc;
}

static const struct key {
	const char *name;
	int list; /* the value may be a braced list */
	int (*fn)(pstate *ps, const char *v, size_t n);
} keys[] = {
	{ "jobid", 1, k_jobid }, { "uid", 0, k_uid },   { "gid", 0, k_gid },
	{ "opcode", 1, k_opcode }, { "rate", 0, k_rate }, { "rpcs", 0, k_rpcs },
	{ "depth", 0, k_depth }, { "rank", 0, k_rank }, { "ost", 0, k_ost },
};
#define N_KEYS (sizeof(keys) / sizeof(keys[0]))
#define K_RATE 4
#define K_RPCS 5

static void rule_reset(qos_tbf_rule *r)
{
	memset(r, 0, sizeof(*r));
	qos_tbf_rule_spec_init(&r->spec);
	r->ost = PFS_QOS_OST_ALL;
}

/* Length of the whitespace-free word at s. */
static size_t word_len(const char *s)
{
	size_t n = 0;

	while (s[n] && s[n] != ' ' && s[n] != '\t')
		n++;
	return n;
}

static int parse(const char *text, pstate *ps)
{
	const char *p = text;
	unsigned seen = 0;
	size_t len;
	int rc;

	if (!text) {
		errf(ps->err, ps->errlen, "no rule text");
		return -EINVAL;
	}
	len = strnlen(text, QOS_TBF_RULE_TEXT_MAX);
	if (len >= QOS_TBF_RULE_TEXT_MAX) {
		errf(ps->err, ps->errlen, "rule text too long (%zu bytes, max %d)",
		     strlen(text), QOS_TBF_RULE_TEXT_MAX - 1);
		return -EINVAL;
	}
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)text[i];
		if (c < 0x20 && c != '\t') {
			errf(ps->err, ps->errlen, "control character 0x%02x at offset %zu",
			     c, i);
			return -EINVAL;
		}
	}
	for (;;) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			break;
		size_t w = word_len(p), kl = 0;
		while (kl < w && p[kl] != '=')
			kl++;
		if (kl == w || kl == 0) {
			errf(ps->err, ps->errlen, "expected key=value at '%.*s'",
			     (int)(w < WORD_SHOW ? w : WORD_SHOW), p);
			return -EINVAL;
		}
		size_t k = 0;
		while (k < N_KEYS && !(strlen(keys[k].name) == kl &&
				       memcmp(keys[k].name, p, kl) == 0))
			k++;
		if (k == N_KEYS) {
			errf(ps->err, ps->errlen, "unknown key '%.*s'",
			     (int)(kl < WORD_SHOW ? kl : WORD_SHOW), p);
			return -EINVAL;
		}
		if (seen & (1u << k)) {
			errf(ps->err, ps->errlen, "duplicate key '%s'", keys[k].name);
			return -EINVAL;
		}
		seen |= 1u << k;
		const char *v = p + kl + 1;
		size_t vn;
		if (keys[k].list && *v == '{') {
			const char *close = strchr(v, '}');
			const char *open = memchr(v + 1, '{', close ? (size_t)(close - v - 1) : 0);
			if (!close || open) {
				errf(ps->err, ps->errlen, "%s: unbalanced braces", keys[k].name);
				return -EINVAL;
			}
			rc = keys[k].fn(ps, v + 1, (size_t)(close - v - 1));
			if (rc)
				return rc;
			p = close + 1;
			if (*p && *p != ' ' && *p != '\t') {
				w = word_len(p);
				errf(ps->err, ps->errlen, "%s: trailing garbage '%.*s'",
				     keys[k].name, (int)(w < WORD_SHOW ? w : WORD_SHOW), p);
				return -EINVAL;
			}
		} else {
			vn = w - kl - 1;
			if (vn == 0) {
				errf(ps->err, ps->errlen, "%s: missing value", keys[k].name);
				return -EINVAL;
			}
			rc = keys[k].fn(ps, v, vn);
			p = v + vn;
		}
		if (rc)
			return rc;
	}
	if (!(seen & (1u << K_RATE | 1u << K_RPCS))) {
		errf(ps->err, ps->errlen, "missing rate= or rpcs=");
		return -EINVAL;
	}
	if ((seen & (1u << K_RATE)) && (seen & (1u << K_RPCS))) {
		errf(ps->err, ps->errlen, "both rate= and rpcs= given");
		return -EINVAL;
	}
	if (ps->depth_bytes && ps->r->spec.unit != QOS_TBF_UNIT_BYTE) {
		errf(ps->err, ps->errlen, "depth: bytes given for an rpcs= rule");
		return -EINVAL;
	}
	ps->r->spec.depth = ps->depth;
	return spec_check(&ps->r->spec, ps->err, ps->errlen);
}

int qos_tbf_rule_parse(const char *text, qos_tbf_rule *out, char *err, size_t errlen)
{
	pstate ps = { .r = out, .err = err, .errlen = errlen };
	int rc;

	rule_reset(out);
	rc = parse(text, &ps);
	if (rc)
		rule_reset(out);
	else if (err && errlen)
		err[0] = 0;
	return rc;
}

/* ---- format --------------------------------------------------------------- */

typedef struct obuf {
	char *p;
	size_t len, n;
	int over;
} obuf;

static void put(obuf *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(obuf *o, const char *fmt, ...)
{
	va_list ap;
	size_t room = o->n < o->len ? o->len - o->n : 0;
	int k;

	va_start(ap, fmt);
	k = vsnprintf(room ? o->p + o->n : NULL, room, fmt, ap);
	va_end(ap);
	if (k < 0 || (size_t)k >= room)
		o->over = 1;
	o->n += k > 0 ? (size_t)k : 0;
}

/* A separating space before every field but the first. */
static const char *sep(const obuf *o)
{
	return o->n ? " " : "";
}

int qos_tbf_rule_format(const qos_tbf_rule_spec *spec, uint32_t ost, char *buf, size_t len)
{
	obuf o = { buf, len, 0, 0 };
	char num[NUM_MAX];
	const char *suf;

	if (spec_check(spec, NULL, 0))
		return -EINVAL;
	if (!buf && len)
		return -EINVAL;
	if (len)
		buf[0] = 0;
	if (spec->n_jobids) {
		put(&o, "jobid={");
		for (size_t i = 0; i < spec->n_jobids; i++)
			put(&o, "%s%s", i ? " " : "", spec->jobids[i]);
		put(&o, "}");
	}
	if (spec->uid >= 0)
		put(&o, "%suid=%lld", sep(&o), (long long)spec->uid);
	if (spec->gid >= 0)
		put(&o, "%sgid=%lld", sep(&o), (long long)spec->gid);
	if (spec->opc_mask) {
		int first = 1;
		put(&o, "%sopcode={", sep(&o));
		for (size_t k = 0; k < N_OPC; k++)
			if (spec->opc_mask & (1u << k)) {
				put(&o, "%s%s", first ? "" : " ", opc_names[k]);
				first = 0;
			}
		put(&o, "}");
	}
	if (spec->unit == QOS_TBF_UNIT_BYTE) {
		suf = bytes_shortest(spec->rate, num);
		put(&o, "%srate=%s%sB/s", sep(&o), num, suf);
	} else {
		num_shortest(spec->rate, num);
		put(&o, "%srpcs=%s", sep(&o), num);
	}
	if (spec->depth > 0) {
		if (spec->unit == QOS_TBF_UNIT_BYTE) {
			suf = bytes_shortest(spec->depth, num);
			put(&o, "%sdepth=%s%sB", sep(&o), num, suf);
		} else {
			num_shortest(spec->depth, num);
			put(&o, "%sdepth=%s", sep(&o), num);
		}
	}
	if (spec->rank)
		put(&o, "%srank=%d", sep(&o), spec->rank);
	if (ost != PFS_QOS_OST_ALL)
		put(&o, "%sost=%u", sep(&o), ost);
	if (o.over) {
		if (len)
			buf[0] = 0;
		return -ENOSPC;
	}
	return (int)o.n;
}
