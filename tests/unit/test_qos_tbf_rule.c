/* test_qos_tbf_rule.c — the text form of TBF rules: a table of good inputs
 * with their values and canonical text, a table of bad inputs with the
 * word their error must name, round trips (table, random specs, the
 * longest rule), every prefix of the good inputs, random garbage,
 * oversized text and lists, and format's refusals. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/qosmsg.h"
#include "oss/nrs_tbf.h"
#include "qos/tbf_rule.h"

#define ANY (-1)
#define ALL PFS_QOS_OST_ALL

static int rule_equal(const qos_tbf_rule *a, const qos_tbf_rule *b)
{
	const qos_tbf_rule_spec *x = &a->spec, *y = &b->spec;

	if (x->n_jobids != y->n_jobids || x->uid != y->uid || x->gid != y->gid ||
	    x->opc_mask != y->opc_mask || x->unit != y->unit || x->rate != y->rate ||
	    x->depth != y->depth || x->rank != y->rank || a->ost != b->ost)
		return 0;
	for (size_t i = 0; i < x->n_jobids; i++)
		if (strcmp(x->jobids[i], y->jobids[i]) != 0)
			return 0;
	return 1;
}

/* format(r) parses back to r, and formatting that gives the same text. */
static void assert_round_trip(const qos_tbf_rule *r)
{
	char t1[QOS_TBF_RULE_TEXT_MAX], t2[QOS_TBF_RULE_TEXT_MAX], err[128];
	qos_tbf_rule back;
	int n = qos_tbf_rule_format(&r->spec, r->ost, t1, sizeof(t1));

	if (n < 0) {
		fprintf(stderr, "format failed: %d\n", n);
		fail();
	}
	assert_int_equal((size_t)n, strlen(t1));
	if (qos_tbf_rule_parse(t1, &back, err, sizeof(err)) != 0) {
		fprintf(stderr, "'%s' does not parse: %s\n", t1, err);
		fail();
	}
	if (!rule_equal(r, &back)) {
		fprintf(stderr, "'%s' reads back differently (rate %.17g -> %.17g, "
			"depth %.17g -> %.17g)\n", t1, r->spec.rate, back.spec.rate,
			r->spec.depth, back.spec.depth);
		fail();
	}
	assert_int_equal(qos_tbf_rule_format(&back.spec, back.ost, t2, sizeof(t2)), n);
	assert_string_equal(t1, t2);
}

static const char *const no_jobs[] = { NULL };

static const struct good {
	const char *text;
	const char *const *jobs; /* NULL-terminated */
	int64_t uid, gid;
	uint32_t opc;
	int unit;
	double rate, depth;
	int rank;
	uint32_t ost;
	const char *canon;
} good[] = {
	{ "rate=100MB/s", no_jobs, ANY, ANY, 0, QOS_TBF_UNIT_BYTE, 1e8, 0, 0, ALL,
	  "rate=100MB/s" },
	{ "jobid={dd.0 dd.1} rate=1.5G", (const char *const[]){ "dd.0", "dd.1", NULL },
	  ANY, ANY, 0, QOS_TBF_UNIT_BYTE, 1.5e9, 0, 0, ALL,
	  "jobid={dd.0 dd.1} rate=1.5GB/s" },
	{ "rate=512Ki", no_jobs, ANY, ANY, 0, QOS_TBF_UNIT_BYTE, 524288, 0, 0, ALL,
	  "rate=512KiB/s" },
	{ "rpcs=50", no_jobs, ANY, ANY, 0, QOS_TBF_UNIT_RPC, 50, 0, 0, ALL, "rpcs=50" },
	{ "jobid=dd* rpcs=50", (const char *const[]){ "dd*", NULL }, ANY, ANY, 0,
	  QOS_TBF_UNIT_RPC, 50, 0, 0, ALL, "jobid={dd*} rpcs=50" },
	{ "ost=7 rank=-3 depth=10 rpcs=50", no_jobs, ANY, ANY, 0, QOS_TBF_UNIT_RPC, 50,
	  10, -3, 7, "rpcs=50 depth=10 rank=-3 ost=7" },
	{ "uid=1000 gid=0 opcode={write read} rate=0", no_jobs, 1000, 0, 3,
	  QOS_TBF_UNIT_BYTE, 0, 0, 0, ALL,
	  "uid=1000 gid=0 opcode={read write} rate=0B/s" },
	{ "opcode=other rpcs=0.5", no_jobs, ANY, ANY, 4, QOS_TBF_UNIT_RPC, 0.5, 0, 0,
	  ALL, "opcode={other} rpcs=0.5" },
	{ " \trate=1K/s\t ", no_jobs, ANY, ANY, 0, QOS_TBF_UNIT_BYTE, 1000, 0, 0, ALL,
	  "rate=1KB/s" },
	{ "rate=2e6B", no_jobs, ANY, ANY, 0, QOS_TBF_UNIT_BYTE, 2e6, 0, 0, ALL,
	  "rate=2MB/s" },
	{ "rate=1GiB/s depth=4MiB", no_jobs, ANY, ANY, 0, QOS_TBF_UNIT_BYTE,
	  1073741824.0, 4194304, 0, ALL, "rate=1GiB/s depth=4MiB" },
	{ "rate=1536", no_jobs, ANY, ANY, 0, QOS_TBF_UNIT_BYTE, 1536, 0, 0, ALL,
	  "rate=1536B/s" },
	{ "rate=1.5Ki", no_jobs, ANY, ANY, 0, QOS_TBF_UNIT_BYTE, 1536, 0, 0, ALL,
	  "rate=1536B/s" },
	{ "rate=2.5MiB/s", no_jobs, ANY, ANY, 0, QOS_TBF_UNIT_BYTE, 2621440, 0, 0, ALL,
	  "rate=2.5MiB/s" },
	{ "rpcs=1e-300", no_jobs, ANY, ANY, 0, QOS_TBF_UNIT_RPC, 1e-300, 0, 0, ALL,
	  "rpcs=1e-300" },
	{ "rate=1234567B/s", no_jobs, ANY, ANY, 0, QOS_TBF_UNIT_BYTE, 1234567, 0, 0,
	  ALL, "rate=1234567B/s" },
	{ "rate=1e12", no_jobs, ANY, ANY, 0, QOS_TBF_UNIT_BYTE, 1e12, 0, 0, ALL,
	  "rate=1000GB/s" },
	{ "rpcs=1E12 depth=1e12", no_jobs, ANY, ANY, 0, QOS_TBF_UNIT_RPC, 1e12, 1e12, 0,
	  ALL, "rpcs=1000000000000 depth=1000000000000" },
	{ "rpcs=0.001", no_jobs, ANY, ANY, 0, QOS_TBF_UNIT_RPC, 0.001, 0, 0, ALL,
	  "rpcs=0.001" },
	{ "jobid={*} rpcs=1", (const char *const[]){ "*", NULL }, ANY, ANY, 0,
	  QOS_TBF_UNIT_RPC, 1, 0, 0, ALL, "jobid={*} rpcs=1" },
	{ "rank=2147483647 rpcs=1", no_jobs, ANY, ANY, 0, QOS_TBF_UNIT_RPC, 1, 0,
	  INT_MAX, ALL, "rpcs=1 rank=2147483647" },
	{ "rank=-2147483647 rpcs=1", no_jobs, ANY, ANY, 0, QOS_TBF_UNIT_RPC, 1, 0,
	  -INT_MAX, ALL, "rpcs=1 rank=-2147483647" },
	{ "uid=4294967295 gid=007 rpcs=1", no_jobs, 4294967295LL, 7, 0,
	  QOS_TBF_UNIT_RPC, 1, 0, 0, ALL, "uid=4294967295 gid=7 rpcs=1" },
	{ "ost=4294967294 rpcs=1", no_jobs, ANY, ANY, 0, QOS_TBF_UNIT_RPC, 1, 0, 0,
	  4294967294u, "rpcs=1 ost=4294967294" },
	{ "ost=0 rpcs=1", no_jobs, ANY, ANY, 0, QOS_TBF_UNIT_RPC, 1, 0, 0, 0,
	  "rpcs=1 ost=0" },
	{ "jobid={j\xc3\xb6" "b x=y} rpcs=1", (const char *const[]){ "j\xc3\xb6" "b", "x=y", NULL },
	  ANY, ANY, 0, QOS_TBF_UNIT_RPC, 1, 0, 0, ALL, "jobid={j\xc3\xb6" "b x=y} rpcs=1" },
	{ "jobid={ a   b } rpcs=2", (const char *const[]){ "a", "b", NULL }, ANY, ANY, 0,
	  QOS_TBF_UNIT_RPC, 2, 0, 0, ALL, "jobid={a b} rpcs=2" },
};

static void test_tbf_rule_good_inputs(void **state)
{
	char err[128], text[QOS_TBF_RULE_TEXT_MAX];
	qos_tbf_rule r;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		const struct good *g = &good[i];
		strcpy(err, "untouched");
		if (qos_tbf_rule_parse(g->text, &r, err, sizeof(err)) != 0) {
			fprintf(stderr, "'%s': %s\n", g->text, err);
			fail();
		}
		assert_string_equal(err, "");
		assert_null(r.spec.name);
		size_t n = 0;
		while (g->jobs[n])
			n++;
		assert_int_equal(r.spec.n_jobids, n);
		for (size_t k = 0; k < n; k++)
			assert_string_equal(r.spec.jobids[k], g->jobs[k]);
		assert_int_equal(r.spec.uid, g->uid);
		assert_int_equal(r.spec.gid, g->gid);
		assert_int_equal(r.spec.opc_mask, g->opc);
		assert_int_equal(r.spec.unit, g->unit);
		assert_true(r.spec.rate == g->rate);
		assert_true(r.spec.depth == g->depth);
		assert_int_equal(r.spec.rank, g->rank);
		assert_int_equal(r.ost, g->ost);
		assert_int_equal(qos_tbf_rule_format(&r.spec, r.ost, text, sizeof(text)),
				 (int)strlen(g->canon));
		assert_string_equal(text, g->canon);
		assert_round_trip(&r);
	}
}

static const struct bad {
	const char *text;
	const char *msg; /* the error must contain this */
} bad[] = {
	{ "", "missing rate= or rpcs=" },
	{ "   ", "missing rate= or rpcs=" },
	{ "jobid=a", "missing rate= or rpcs=" },
	{ "rat=5", "unknown key 'rat'" },
	{ "Rate=5", "unknown key 'Rate'" },
	{ "rate=5 rate=6", "duplicate key 'rate'" },
	{ "jobid=a rpcs=1 jobid=b", "duplicate key 'jobid'" },
	{ "rate=-5", "rate: negative '-5'" },
	{ "rpcs=-0", "rpcs: negative '-0'" },
	{ "rate=nan", "rate: not finite 'nan'" },
	{ "rpcs=NaN", "rpcs: not finite 'NaN'" },
	{ "rate=inf", "rate: not finite 'inf'" },
	{ "rate=Infinity", "rate: not finite 'Infinity'" },
	{ "rate=1e400", "rate: not finite '1e400'" },
	{ "rate=2e12", "rate: absurd '2e12'" },
	{ "rate=1001G", "rate: absurd '1001G'" },
	{ "rpcs=1e13", "rpcs: absurd '1e13'" },
	{ "rpcs=1 depth=2e12", "depth: absurd '2e12'" },
	{ "rate=5 rpcs=5", "both rate= and rpcs= given" },
	{ "jobid={} rate=1", "jobid: empty list" },
	{ "jobid={ \t } rate=1", "jobid: empty list" },
	{ "opcode={} rate=1", "opcode: empty list" },
	{ "opcode={rd} rate=1", "opcode: unknown 'rd'" },
	{ "opcode=READ rate=1", "opcode: unknown 'READ'" },
	{ "opcode={read read} rate=1", "opcode: duplicate 'read'" },
	{ "jobid={a a} rate=1", "jobid: duplicate 'a'" },
	{ "jobid={a*b} rate=1", "'*' only at the end of a pattern 'a*b'" },
	{ "jobid=** rate=1", "'*' only at the end of a pattern '**'" },
	{ "jobid={a rate=1", "jobid: unbalanced braces" },
	{ "jobid={a{b} rate=1", "jobid: unbalanced braces" },
	{ "jobid={a}x rate=1", "jobid: trailing garbage 'x'" },
	{ "jobid=a} rate=1", "jobid: bad character in pattern 'a}'" },
	{ "jobid={a\x7f} rate=1", "bad character in pattern" },
	{ "uid={1} rate=1", "uid: malformed '{1}'" },
	{ "rate=5 garbage", "expected key=value at 'garbage'" },
	{ "rate=5 =5", "expected key=value at '=5'" },
	{ "rate=5MB/sx", "rate: malformed '5MB/sx'" },
	{ "rate=5MB/", "rate: malformed '5MB/'" },
	{ "rate=5Bi", "rate: malformed '5Bi'" },
	{ "rate=5KK", "rate: malformed '5KK'" },
	{ "rate=5T", "rate: malformed '5T'" },
	{ "rate=5k", "rate: malformed '5k'" },
	{ "rate=", "rate: missing value" },
	{ "rate=0x10", "rate: malformed '0x10'" },
	{ "rate=+5", "rate: malformed '+5'" },
	{ "rate=5.", "rate: malformed '5.'" },
	{ "rate=.5", "rate: malformed '.5'" },
	{ "rate=5e", "rate: malformed '5e'" },
	{ "rate=1,5", "rate: malformed '1,5'" },
	{ "rpcs=5K", "rpcs: malformed '5K'" },
	{ "rpcs=5/s", "rpcs: malformed '5/s'" },
	{ "rpcs=5 depth=0", "depth: must be positive '0'" },
	{ "rpcs=5 depth=-1", "depth: negative '-1'" },
	{ "rpcs=5 depth=1MiB", "depth: bytes given for an rpcs= rule" },
	{ "rpcs=5 depth=10B", "depth: bytes given for an rpcs= rule" },
	{ "rate=5 depth=1MB/s", "depth: malformed '1MB/s'" },
	{ "rpcs=5 rank=2147483648", "rank: out of range '2147483648'" },
	{ "rpcs=5 rank=-2147483648", "rank: out of range '-2147483648'" },
	{ "rpcs=5 rank=99999999999999999999999", "rank: out of range" },
	{ "rpcs=5 rank=1.5", "rank: malformed '1.5'" },
	{ "rpcs=5 rank=-", "rank: malformed '-'" },
	{ "rpcs=5 uid=-1", "uid: negative '-1'" },
	{ "rpcs=5 uid=4294967296", "uid: out of range '4294967296'" },
	{ "rpcs=5 gid=abc", "gid: malformed 'abc'" },
	{ "rpcs=5 ost=4294967295", "ost: out of range '4294967295'" },
	{ "rpcs=5 ost=", "ost: missing value" },
	{ "ost=4294967294 ost=", "duplicate key 'ost'" },
	{ "rpcs=5\x01", "control character 0x01 at offset 6" },
	{ "rpcs=5\n", "control character 0x0a" },
	{ "jobid={a b c d e f g h i j k l m n o p q} rpcs=1",
	  "jobid: more than 16 patterns at 'q'" },
	{ "jobid=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa rpcs=1",
	  "jobid: pattern too long 'aaaaaaaa" },
	{ "jobid={aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa "
	  "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb} rpcs=1",
	  "jobid: list too long (91 bytes, max 90)" },
};

static void test_tbf_rule_bad_inputs(void **state)
{
	char err[256];
	qos_tbf_rule r;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		int rc = qos_tbf_rule_parse(bad[i].text, &r, err, sizeof(err));
		if (rc != -EINVAL || !strstr(err, bad[i].msg) || strchr(err, '\n')) {
			fprintf(stderr, "'%s': rc %d, error '%s', want '%s'\n",
				bad[i].text, rc, err, bad[i].msg);
			fail();
		}
		/* reset on error: an empty rule */
		assert_int_equal(r.spec.n_jobids, 0);
		assert_int_equal(r.spec.uid, -1);
		assert_int_equal(r.ost, ALL);
	}
	/* no rule text, no error buffer, a tiny one */
	assert_int_equal(qos_tbf_rule_parse(NULL, &r, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "no rule text");
	assert_int_equal(qos_tbf_rule_parse("rat=1", &r, NULL, 0), -EINVAL);
	memset(err, 'x', sizeof(err));
	assert_int_equal(qos_tbf_rule_parse("rat=1", &r, err, 6), -EINVAL);
	assert_string_equal(err, "unkno");
	assert_int_equal(err[6], 'x');
}

/* The longest rule the bounds allow still formats within the text limit,
 * whatever rate, depth and rank it is changed to. */
static void test_tbf_rule_longest_fits(void **state)
{
	static char pats[QOS_TBF_RULE_JOBS_MAX][QOS_TBF_ID_MAX];
	const double nums[] = { 1.2345678901234567e-300, 4.9406564584124654e-324,
				0.12345678901234566, 123456789012.34567, 1e12,
				999999999999.99988, 1.0000000000000002, 1e-7 / 3 };
	qos_tbf_rule r;
	char text[QOS_TBF_RULE_TEXT_MAX], err[128];
	int longest = 0;

	/* 16 patterns of 5 or 4 bytes plus 15 spaces: exactly 90 bytes */
	size_t total = 0;
	for (int i = 0; i < QOS_TBF_RULE_JOBS_MAX; i++) {
		int len = i < 11 ? 5 : 4;
		snprintf(pats[i], sizeof(pats[i]), "%c%0*d*", 'a' + i, len - 2, i);
		total += strlen(pats[i]) + (i > 0);
	}
	assert_int_equal(total, QOS_TBF_RULE_JOBS_TEXT_MAX);
	for (int unit = 0; unit < 2; unit++)
		for (size_t a = 0; a < sizeof(nums) / sizeof(nums[0]); a++)
			for (size_t b = 0; b < sizeof(nums) / sizeof(nums[0]); b++) {
				memset(&r, 0, sizeof(r));
				qos_tbf_rule_spec_init(&r.spec);
				for (int i = 0; i < QOS_TBF_RULE_JOBS_MAX; i++) {
					strcpy(r.jobs[i], pats[i]);
					r.jobv[i] = r.jobs[i];
				}
				r.spec.jobids = r.jobv;
				r.spec.n_jobids = QOS_TBF_RULE_JOBS_MAX;
				r.spec.uid = r.spec.gid = UINT32_MAX;
				r.spec.opc_mask = 7;
				r.spec.unit = unit ? QOS_TBF_UNIT_BYTE : QOS_TBF_UNIT_RPC;
				r.spec.rate = nums[a];
				r.spec.depth = nums[b];
				r.spec.rank = -INT_MAX;
				r.ost = ALL - 1;
				assert_int_equal(qos_tbf_rule_check(&r.spec, err, sizeof(err)), 0);
				int n = qos_tbf_rule_format(&r.spec, r.ost, text, sizeof(text));
				assert_true(n > 0 && n < QOS_TBF_RULE_TEXT_MAX);
				if (n > longest)
					longest = n;
				assert_round_trip(&r);
			}
	/* the bound is tight enough to matter */
	assert_true(longest > QOS_TBF_RULE_TEXT_MAX - 30);
}

static uint64_t rng_next(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return *s >> 11;
}

/* A random non-negative double no larger than QOS_TBF_RATE_MAX, from
 * several families (round numbers with suffixes, arbitrary bit patterns). */
static double random_qty(uint64_t *s)
{
	uint64_t r = rng_next(s);
	static const double mult[] = { 1, 1e3, 1024, 1e6, 1048576, 1e9, 1073741824 };

	switch (r % 5) {
	case 0:
		return (double)(rng_next(s) % 90000) * mult[rng_next(s) % 7] / 100;
	case 1:
		return (double)(rng_next(s) % 1000);
	case 2: {
		double x;
		uint64_t bits = rng_next(s) << 11 | rng_next(s) % 2048;
		bits &= ~(1ULL << 63);
		memcpy(&x, &bits, sizeof(x));
		return isfinite(x) && x <= QOS_TBF_RATE_MAX ? x : 1.0 / 3;
	}
	case 3:
		return ldexp((double)(rng_next(s) % (1ULL << 39)), -(int)(rng_next(s) % 80));
	default:
		return QOS_TBF_RATE_MAX * (double)(rng_next(s) % 1000001) / 1e6;
	}
}

static void test_tbf_rule_random_round_trips(void **state)
{
	static const char chars[] =
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-:=@+";
	uint64_t s = 42;
	qos_tbf_rule r;
	char err[128];

	for (int it = 0; it < 20000; it++) {
		memset(&r, 0, sizeof(r));
		qos_tbf_rule_spec_init(&r.spec);
		r.ost = ALL;
		size_t n = rng_next(&s) % 5, total = 0;
		for (size_t i = 0; i < n; i++) {
			size_t len = 1 + rng_next(&s) % 12;
			for (size_t k = 0; k < len; k++)
				r.jobs[i][k] = chars[rng_next(&s) % (sizeof(chars) - 1)];
			if (rng_next(&s) % 3 == 0)
				r.jobs[i][len - 1] = '*';
			r.jobs[i][len] = 0;
			int dup = 0;
			for (size_t j = 0; j < i; j++)
				dup |= strcmp(r.jobs[i], r.jobs[j]) == 0;
			if (dup)
				r.jobs[i][0] = (char)('0' + (int)i), r.jobs[i][1] = 0;
			r.jobv[i] = r.jobs[i];
			total += strlen(r.jobs[i]) + 1;
		}
		assert_true(total <= QOS_TBF_RULE_JOBS_TEXT_MAX);
		r.spec.jobids = r.jobv;
		r.spec.n_jobids = n;
		if (rng_next(&s) % 2)
			r.spec.uid = (int64_t)(rng_next(&s) % (1ULL << 32));
		if (rng_next(&s) % 2)
			r.spec.gid = (int64_t)(rng_next(&s) % (1ULL << 32));
		r.spec.opc_mask = (uint32_t)(rng_next(&s) % 8);
		r.spec.unit = rng_next(&s) % 2 ? QOS_TBF_UNIT_BYTE : QOS_TBF_UNIT_RPC;
		r.spec.rate = random_qty(&s);
		r.spec.depth = rng_next(&s) % 3 ? random_qty(&s) : 0;
		r.spec.rank = (int)(rng_next(&s) % 2001) - 1000;
		if (rng_next(&s) % 4 == 0)
			r.spec.rank = rng_next(&s) % 2 ? INT_MAX : -INT_MAX;
		if (rng_next(&s) % 2)
			r.ost = (uint32_t)(rng_next(&s) % 1000);
		if (qos_tbf_rule_check(&r.spec, err, sizeof(err)) != 0) {
			fprintf(stderr, "check: %s\n", err);
			fail();
		}
		assert_round_trip(&r);
	}
}

/* Every prefix of every good input, and random garbage: parse never
 * misbehaves, errors are one non-empty line, and whatever is accepted
 * round-trips. */
static void test_tbf_rule_truncated_and_garbage(void **state)
{
	char buf[QOS_TBF_RULE_TEXT_MAX], err[128];
	qos_tbf_rule r;
	uint64_t s = 7;
	static const char alphabet[] = "jobiduglcrantspkhe=={}  **\t01234567.-+eKMGiB/s\x01\xff";

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		size_t n = strlen(good[i].text);
		for (size_t k = 0; k <= n; k++) {
			memcpy(buf, good[i].text, k);
			buf[k] = 0;
			int rc = qos_tbf_rule_parse(buf, &r, err, sizeof(err));
			if (rc == 0)
				assert_round_trip(&r);
			else
				assert_true(rc == -EINVAL && err[0] && !strchr(err, '\n'));
		}
	}
	for (int it = 0; it < 50000; it++) {
		size_t n = rng_next(&s) % (sizeof(buf) - 1);
		for (size_t k = 0; k < n; k++)
			buf[k] = it % 2 ? (char)(1 + rng_next(&s) % 255)
					: alphabet[rng_next(&s) % (sizeof(alphabet) - 1)];
		buf[n] = 0;
		/* sometimes graft a valid rule after the noise */
		if (it % 7 == 0 && n < 200)
			snprintf(buf + n, sizeof(buf) - n, " rpcs=%d", it % 100);
		int rc = qos_tbf_rule_parse(buf, &r, err, sizeof(err));
		if (rc == 0)
			assert_round_trip(&r);
		else
			assert_true(rc == -EINVAL && err[0] && !strchr(err, '\n'));
	}
}

static void test_tbf_rule_oversized(void **state)
{
	char *big = malloc(10241), err[128];
	qos_tbf_rule r;
	size_t n = 0;

	assert_non_null(big);
	/* 10 KB of otherwise fine text */
	n += (size_t)sprintf(big, "rpcs=1");
	while (n < 10240)
		big[n++] = ' ';
	big[n] = 0;
	assert_int_equal(qos_tbf_rule_parse(big, &r, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "rule text too long (10240 bytes, max 255)"));
	/* 100 patterns */
	n = (size_t)sprintf(big, "jobid={");
	for (int i = 0; i < 100; i++)
		n += (size_t)sprintf(big + n, "%sj%d", i ? " " : "", i);
	sprintf(big + n, "} rpcs=1");
	assert_int_equal(qos_tbf_rule_parse(big, &r, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "too long"));
	/* exactly at the limit: 255 bytes parse, 256 do not */
	memset(big, ' ', 255);
	memcpy(big, "rpcs=1", 6);
	big[255] = 0;
	assert_int_equal(qos_tbf_rule_parse(big, &r, err, sizeof(err)), 0);
	big[255] = ' ';
	big[256] = 0;
	assert_int_equal(qos_tbf_rule_parse(big, &r, err, sizeof(err)), -EINVAL);
	free(big);

	/* 100 patterns in a hand-built spec */
	const char *pats[100];
	qos_tbf_rule_spec sp;
	qos_tbf_rule_spec_init(&sp);
	for (int i = 0; i < 100; i++)
		pats[i] = "p";
	sp.jobids = pats;
	sp.n_jobids = 100;
	assert_int_equal(qos_tbf_rule_check(&sp, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "more than 16 patterns"));
}

/* What format and check refuse: specs the text cannot express. */
static void test_tbf_rule_format_refusals(void **state)
{
	const char *space[] = { "a b" }, *brace[] = { "a{" }, *empty[] = { "" },
		   *mid[] = { "a*b" }, *dup[] = { "x", "x" }, *ok[] = { "job" };
	qos_tbf_rule_spec sp, s;
	char text[QOS_TBF_RULE_TEXT_MAX], err[128];

	qos_tbf_rule_spec_init(&sp);
	sp.rate = 5;
#define REFUSE(stmt, word)                                                          \
	do {                                                                        \
		s = sp;                                                             \
		stmt;                                                               \
		assert_int_equal(qos_tbf_rule_check(&s, err, sizeof(err)), -EINVAL); \
		if (!strstr(err, word)) {                                           \
			fprintf(stderr, "%s: '%s'\n", #stmt, err);                  \
			fail();                                                     \
		}                                                                   \
		assert_int_equal(qos_tbf_rule_format(&s, ALL, text, sizeof(text)),  \
				 -EINVAL);                                          \
	} while (0)
	REFUSE((s.jobids = space, s.n_jobids = 1), "bad character in pattern 'a b'");
	REFUSE((s.jobids = brace, s.n_jobids = 1), "bad character");
	REFUSE((s.jobids = empty, s.n_jobids = 1), "empty pattern");
	REFUSE((s.jobids = mid, s.n_jobids = 1), "'*' only at the end");
	REFUSE((s.jobids = dup, s.n_jobids = 2), "duplicate 'x'");
	REFUSE((s.jobids = NULL, s.n_jobids = 1), "no patterns");
	REFUSE(s.opc_mask = 1u << 3, "opcode");
	REFUSE(s.unit = 7, "unit");
	REFUSE(s.rate = -1, "rpcs: out of range");
	REFUSE((s.unit = QOS_TBF_UNIT_BYTE, s.rate = NAN), "rate: out of range");
	REFUSE(s.rate = 2e12, "out of range");
	REFUSE(s.depth = INFINITY, "depth");
	REFUSE(s.uid = -2, "uid");
	REFUSE(s.gid = 1LL << 32, "gid");
	REFUSE(s.rank = INT_MIN, "rank");
#undef REFUSE
	assert_int_equal(qos_tbf_rule_check(NULL, err, sizeof(err)), -EINVAL);
	/* -0 is written as 0 (a sign would not parse back) */
	s = sp;
	s.rate = -0.0;
	assert_int_equal(qos_tbf_rule_format(&s, ALL, text, sizeof(text)), 6);
	assert_string_equal(text, "rpcs=0");
	/* too small a buffer: -ENOSPC and an empty string; exact fit works */
	s = sp;
	s.jobids = ok;
	s.n_jobids = 1;
	int n = qos_tbf_rule_format(&s, 3, text, sizeof(text));
	assert_string_equal(text, "jobid={job} rpcs=5 ost=3");
	assert_int_equal(qos_tbf_rule_format(&s, 3, text, (size_t)n), -ENOSPC);
	assert_string_equal(text, "");
	assert_int_equal(qos_tbf_rule_format(&s, 3, text, (size_t)n + 1), n);
	assert_int_equal(qos_tbf_rule_format(&s, 3, NULL, 0), -ENOSPC);
	assert_int_equal(qos_tbf_rule_format(&s, 3, NULL, 5), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tbf_rule_good_inputs),
		cmocka_unit_test(test_tbf_rule_bad_inputs),
		cmocka_unit_test(test_tbf_rule_longest_fits),
		cmocka_unit_test(test_tbf_rule_random_round_trips),
		cmocka_unit_test(test_tbf_rule_truncated_and_garbage),
		cmocka_unit_test(test_tbf_rule_oversized),
		cmocka_unit_test(test_tbf_rule_format_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
