/* test_cli_ascar_ctl.c — the mount's ASCAR rule set and per-OSS streams
 * (client/ascar_ctl.h): install / refuse rule text (line numbers, the old
 * rules kept), off, a stream picking up a new version at its next step,
 * the window taken from the matching rule, the rate gap, latency
 * percentiles. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>

#include "client/ascar_ctl.h"

static void test_set_and_refuse(void **state)
{
	cli_ascar *a;
	int on, line = -1;

	assert_int_equal(cli_ascar_create(&a), 0);
	assert_int_equal(cli_ascar_version(a, &on), 0);
	assert_false(on);
	assert_int_equal(cli_ascar_set(a, "# w\n[0, inf) [0, inf) [0, inf) 1 1 0\n", 4, &line), 0);
	assert_int_equal(cli_ascar_version(a, &on), 4);
	assert_true(on);
	/* line 2 overlaps line 1 */
	assert_int_equal(cli_ascar_set(a, "[0, 5) [0, inf) [0, inf) 1 1 0\n[1, 2) [0, inf) [0, inf) 1 0 0\n",
				       5, &line), -EINVAL);
	assert_int_equal(line, 2);
	assert_int_equal(cli_ascar_set(a, "[0, 5) [0, inf)\n", 5, &line), -EINVAL);
	assert_int_equal(line, 1);
	assert_int_equal(cli_ascar_version(a, &on), 4); /* kept */
	assert_true(on);
	assert_int_equal(cli_ascar_set(a, "  \n", 6, &line), 0); /* off */
	assert_int_equal(cli_ascar_version(a, &on), 6);
	assert_false(on);
	cli_ascar_destroy(a);
}

static void test_stream_window_and_gap(void **state)
{
	cli_ascar *a;
	cli_ascar_stream *s;
	cli_ascar_stats st;
	uint64_t t = 5000000;

	assert_int_equal(cli_ascar_create(&a), 0);
	assert_int_equal(cli_ascar_stream_create(a, "oss", &s), 0);
	assert_int_equal(cli_ascar_window(s), 0); /* off: no limit */
	assert_int_equal(cli_ascar_wait_us(s, t), 0);
	/* window = 0 * w + 3, tau 1000 us */
	assert_int_equal(cli_ascar_set(a, "[0, inf) [0, inf) [0, inf) 0 3 1000\n", 1, NULL), 0);
	assert_int_equal(cli_ascar_window(s), 0); /* not seen before a step */
	cli_ascar_refresh(s);
	assert_int_equal(cli_ascar_window(s), CLI_ASCAR_CWND0);
	cli_ascar_sent(s, t);
	cli_ascar_reply(s, t, t + 2000);
	assert_int_equal(cli_ascar_window(s), 3);
	cli_ascar_sent(s, t + 2000);
	assert_int_equal(cli_ascar_wait_us(s, t + 2400), 600);
	assert_int_equal(cli_ascar_wait_us(s, t + 3000), 0);
	for (int i = 0; i < 99; i++)
		cli_ascar_reply(s, t, t + 100);
	cli_ascar_stream_stats(s, &st);
	assert_int_equal(st.version, 1);
	assert_int_equal(st.rpcs, 100);
	assert_true(st.p50_us >= 100 && st.p50_us < 130);   /* bucket bound */
	assert_true(st.p99_us >= 100 && st.p99_us < 130);   /* 99 of 100 at 100 us */
	/* off again: the stream drops its window at the next step */
	assert_int_equal(cli_ascar_set(a, "", 2, NULL), 0);
	cli_ascar_reply(s, t, t + 100);
	assert_int_equal(cli_ascar_window(s), 0);
	assert_int_equal(cli_ascar_wait_us(s, t), 0);
	cli_ascar_stream_stats(s, &st);
	assert_int_equal(st.version, 2);
	assert_int_equal(st.rpcs, 1);
	cli_ascar_stream_destroy(s);
	cli_ascar_destroy(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_set_and_refuse),
		cmocka_unit_test(test_stream_window_and_gap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
