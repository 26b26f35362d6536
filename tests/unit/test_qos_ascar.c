/* test_qos_ascar.c — ASCAR: Table V rule lookup, window arithmetic and
 * clamping, at most two window changes per second, congestion indicators
 * (Table I), rate gap, rule-set text round trip and bad input. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "qos/ascar.h"

/* Table V of ascar.txt (the two most used rules of the checkpoint set). */
static const char table5[] =
	"# ascar.txt Table V\n"
	"[41, 48)   [0, inf)  [2.4, 4.5)  1  -1.7  33\n"
	"\n"
	"[48, inf)  [0, inf)  [0, 4.5)    1   0.9  40   # second rule\n";

static void test_ascar_lookup_table5(void **state)
{
	qos_ascar_ruleset rs;
	int line = -1;
	static const struct { double c[3]; int want; } cases[] = {
		{ { 45, 10, 3.2 }, 0 },  /* rule 1's average state */
		{ { 60, 5, 2.6 }, 1 },   /* rule 2's average state */
		{ { 41, 0, 2.4 }, 0 },   /* lower bounds are inclusive */
		{ { 48, 0, 2.4 }, 1 },   /* upper bounds exclusive */
		{ { 45, 10, 1.0 }, -ENOENT },
		{ { 60, 5, 4.5 }, -ENOENT },
		{ { 10, 5, 3 }, -ENOENT },
	};

	(void)state;
	qos_ascar_ruleset_init(&rs);
	assert_int_equal(qos_ascar_ruleset_parse(table5, &rs, &line), 0);
	assert_int_equal(line, 0);
	assert_int_equal(rs.n, 2);
	assert_true(rs.r[0].a.b == -1.7 && rs.r[0].a.tau == 33);
	assert_true(isinf(rs.r[1].hi[0]) && rs.r[1].a.b == 0.9);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_int_equal(qos_ascar_ruleset_lookup(&rs, cases[i].c),
				 cases[i].want);
	qos_ascar_ruleset_free(&rs);
}

static void test_ascar_window_arithmetic(void **state)
{
	qos_ascar_ruleset rs;
	qos_ascar_ctl ctl;
	const double lo[3] = { 0, 0, 0 }, hi[3] = { INFINITY, INFINITY, INFINITY };

	(void)state;
	qos_ascar_ruleset_init(&rs);
	assert_int_equal(qos_ascar_ruleset_add(&rs, lo, hi,
			 (qos_ascar_action){ 1, 0.9, 40 }), 0);
	assert_int_equal(qos_ascar_ctl_init(&ctl, NULL, 8, 20000), 0);
	/* cwnd = m * cwnd + b: 8 -> 8.9 -> 9.8 -> 10.7 */
	assert_int_equal(qos_ascar_ctl_apply(&ctl, &rs, 0.0), 0);
	assert_true(fabs(ctl.cwnd - 8.9) < 1e-12);
	assert_int_equal(qos_ascar_ctl_window(&ctl), 8);
	assert_true(ctl.tau == 40);
	assert_int_equal(qos_ascar_ctl_apply(&ctl, &rs, 0.5), 0);
	assert_int_equal(qos_ascar_ctl_window(&ctl), 9);
	assert_int_equal(qos_ascar_ctl_apply(&ctl, &rs, 1.0), 0);
	assert_int_equal(qos_ascar_ctl_window(&ctl), 10);
	assert_true(rs.r[0].hits == 3);
	/* multiplicative cut clamps at cwnd_min = 1 ... */
	rs.r[0].a = (qos_ascar_action){ 0.3, -2.3, 0 };
	for (int k = 0; k < 4; k++)
		assert_int_equal(qos_ascar_ctl_apply(&ctl, &rs, 1.5 + k * 0.5), 0);
	assert_true(ctl.cwnd == 1);
	assert_int_equal(qos_ascar_ctl_window(&ctl), 1);
	/* ... and growth at cwnd_max = 30 */
	rs.r[0].a = (qos_ascar_action){ 2, 2.3, 0 };
	for (int k = 0; k < 6; k++)
		assert_int_equal(qos_ascar_ctl_apply(&ctl, &rs, 4 + k * 0.5), 0);
	assert_true(ctl.cwnd == 30);
	/* a state outside every rule changes nothing */
	qos_ascar_ruleset_free(&rs);
	assert_int_equal(qos_ascar_ruleset_parse("[0,1) [0,1) [0,1) 2 2 2\n",
						 &rs, NULL), 0);
	ctl.c[0] = 5;
	assert_int_equal(qos_ascar_ctl_apply(&ctl, &rs, 100), -ENOENT);
	assert_true(ctl.cwnd == 30);
	qos_ascar_ruleset_free(&rs);
}

static void test_ascar_at_most_two_changes_per_second(void **state)
{
	qos_ascar_ruleset rs;
	qos_ascar_ctl ctl;
	double when[64];
	int n = 0;

	(void)state;
	qos_ascar_ruleset_init(&rs);
	assert_int_equal(qos_ascar_ruleset_default(&rs), 0);
	assert_true(rs.r[0].a.m == 1 && rs.r[0].a.b == 0 && rs.r[0].a.tau == 20000);
	assert_int_equal(qos_ascar_ctl_init(&ctl, NULL, 4, 0), 0);
	/* try on every reply, every 10 ms for 10 s */
	for (int k = 0; k < 1000; k++) {
		double t = k * 0.01;
		int rc = qos_ascar_ctl_apply(&ctl, &rs, t);
		if (rc == 0) {
			assert_true(n < 64);
			when[n++] = t;
		} else {
			assert_int_equal(rc, -EAGAIN);
		}
	}
	assert_int_equal(n, 20);
	/* no three changes within any one second */
	for (int i = 2; i < n; i++)
		assert_true(when[i] - when[i - 2] >= 1.0 - 1e-9);
	assert_true(rs.r[0].hits == 20);
	qos_ascar_ruleset_free(&rs);
}

static void test_ascar_indicators_and_rate_gap(void **state)
{
	qos_ascar_ctl ctl;

	(void)state;
	assert_int_equal(qos_ascar_ctl_init(&ctl, NULL, 8, 20000), 0);
	/* sent at 0, 10, 20 ms; replies at 5, 20, 40 ms: PT 5, 10, 20 ms */
	qos_ascar_ctl_reply(&ctl, 0.000, 0.005);
	assert_true(ctl.c[QOS_ASCAR_PT] == 1);
	assert_true(ctl.c[QOS_ASCAR_ACK] == 0);
	qos_ascar_ctl_reply(&ctl, 0.010, 0.020);
	assert_true(fabs(ctl.c[QOS_ASCAR_PT] - 2) < 1e-9);
	assert_true(fabs(ctl.c[QOS_ASCAR_ACK] - 15) < 1e-9);  /* seeded */
	assert_true(fabs(ctl.c[QOS_ASCAR_SEND] - 10) < 1e-9);
	qos_ascar_ctl_reply(&ctl, 0.020, 0.040);
	assert_true(fabs(ctl.c[QOS_ASCAR_PT] - 4) < 1e-9);
	/* 7/8 * 15 + 1/8 * 20 */
	assert_true(fabs(ctl.c[QOS_ASCAR_ACK] - 15.625) < 1e-9);
	assert_true(fabs(ctl.c[QOS_ASCAR_SEND] - 10) < 1e-9);
	/* a faster reply lowers the minimum: ratio 1 again */
	qos_ascar_ctl_reply(&ctl, 0.050, 0.052);
	assert_true(ctl.c[QOS_ASCAR_PT] == 1);
	/* tau = 20000 us: 20 ms between sends */
	assert_true(qos_ascar_ctl_send_wait(&ctl, 1.0) == 0);
	qos_ascar_ctl_sent(&ctl, 1.0);
	assert_true(fabs(qos_ascar_ctl_send_wait(&ctl, 1.005) - 0.015) < 1e-12);
	assert_true(qos_ascar_ctl_send_wait(&ctl, 1.02) == 0);
	qos_ascar_params bad = { .alpha = 2 };
	assert_int_equal(qos_ascar_ctl_init(&ctl, &bad, 8, 0), -EINVAL);
	assert_int_equal(qos_ascar_ctl_init(&ctl, NULL, 31, 0), -EINVAL);
}

static void assert_same_rules(const qos_ascar_ruleset *a,
			      const qos_ascar_ruleset *b)
{
	assert_int_equal(a->n, b->n);
	for (size_t i = 0; i < a->n; i++) {
		assert_memory_equal(a->r[i].lo, b->r[i].lo, sizeof(a->r[i].lo));
		assert_memory_equal(a->r[i].hi, b->r[i].hi, sizeof(a->r[i].hi));
		assert_memory_equal(&a->r[i].a, &b->r[i].a, sizeof(a->r[i].a));
	}
}

static void test_ascar_text_round_trip(void **state)
{
	qos_ascar_ruleset a, b;
	char buf[2048];
	const double lo[3] = { 0.1 + 0.2, 0, 1 }, hi[3] = { 41, 1e300, INFINITY };

	(void)state;
	qos_ascar_ruleset_init(&a);
	qos_ascar_ruleset_init(&b);
	assert_int_equal(qos_ascar_ruleset_parse(table5, &a, NULL), 0);
	/* awkward doubles must survive too */
	assert_int_equal(qos_ascar_ruleset_add(&a, lo, hi,
			 (qos_ascar_action){ 1.0 / 3, -2.3, 69999.5 }), 0);
	size_t len = qos_ascar_ruleset_print(&a, buf, sizeof(buf));
	assert_true(len < sizeof(buf));
	assert_int_equal(strlen(buf), len);
	assert_int_equal(qos_ascar_ruleset_parse(buf, &b, NULL), 0);
	assert_same_rules(&a, &b);
	/* print of the re-parsed set is the same text */
	char buf2[2048];
	qos_ascar_ruleset_print(&b, buf2, sizeof(buf2));
	assert_string_equal(buf, buf2);
	/* truncated print: full length returned, buffer terminated */
	char small[16];
	assert_int_equal(qos_ascar_ruleset_print(&a, small, sizeof(small)), len);
	assert_int_equal(strlen(small), sizeof(small) - 1);
	qos_ascar_ruleset_free(&a);
	qos_ascar_ruleset_free(&b);
}

static void test_ascar_parse_rejects_bad_input(void **state)
{
	static const struct { const char *text; int line; } cases[] = {
		{ "", 0 },
		{ "# only a comment\n\n", 0 },
		{ "[0, 1) [0, 1) [0, 1) 1 0\n", 1 },            /* no tau */
		{ "\n[0, 1) [0, 1) [0, 1 1 0 5\n", 2 },         /* no ')' */
		{ "[1, 1) [0, 1) [0, 1) 1 0 5\n", 1 },          /* lo == hi */
		{ "[-1, 1) [0, 1) [0, 1) 1 0 5\n", 1 },         /* lo < 0 */
		{ "[0, 1) [0, 1) [0, 1) 1 0 -5\n", 1 },         /* tau < 0 */
		{ "[0, 1) [0, 1) [0, 1) 1 0 5 junk\n", 1 },     /* trailing */
		{ "[0, nan) [0, 1) [0, 1) 1 0 5\n", 1 },        /* NaN */
		{ "[0, 1) [0, 1) [0, 1) 1 0 5\n"
		  "# fine\n"
		  "[0.5, 2) [0, 1) [0, 1) 1 0 5\n", 3 },        /* overlap */
		{ "[0, 1) [0, 1)\n[0, 1) 1 0 5\n", 1 },          /* split line */
		{ "(0, 1] [0, 1) [0, 1) 1 0 5\n", 1 },          /* wrong brackets */
	};
	qos_ascar_ruleset rs;

	(void)state;
	qos_ascar_ruleset_init(&rs);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int line = -1;
		int rc = qos_ascar_ruleset_parse(cases[i].text, &rs, &line);
		if (rc != -EINVAL || line != cases[i].line)
			print_error("case %zu: rc %d line %d\n", i, rc, line);
		assert_int_equal(rc, -EINVAL);
		assert_int_equal(line, cases[i].line);
		assert_int_equal(rs.n, 0);
	}
	qos_ascar_ruleset_free(&rs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ascar_lookup_table5),
		cmocka_unit_test(test_ascar_window_arithmetic),
		cmocka_unit_test(test_ascar_at_most_two_changes_per_second),
		cmocka_unit_test(test_ascar_indicators_and_rate_gap),
		cmocka_unit_test(test_ascar_text_round_trip),
		cmocka_unit_test(test_ascar_parse_rejects_bad_input),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
