/* test_qos_rcc.c — CalcRCC (Algorithm 2) table, clamping to
 * [RCCmin, RCCmax], the cut by one over Lmax, Eq. (5)/(6), and the
 * server-side tracking of D, C (with STL) and time-averaged IOPS. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>

#include "qos/rcc.h"

struct calc_case {
	double D, Dlow, Lmax, IOPS, C, Ts, cnr, RCCmin, RCCmax;
	long want;
};

static void test_rcc_calc_table(void **state)
{
	/* RCCmin 1, RCCmax 32, Dlow 128: the paper's settings (sec. IV) */
	static const struct calc_case cases[] = {
		/* light load: the client's request, clamped */
		{ 10, 128, 60, 200, 1024, 0.1, 5, 1, 32, 5 },
		{ 10, 128, 60, 200, 1024, 0.1, 100, 1, 32, 32 },
		{ 10, 128, 60, 200, 1024, 0.1, 0, 1, 32, 1 },
		/* Eq. (2): 60 * 200 / 1024 = 11.7 -> 11 credits */
		{ 200, 128, 60, 200, 1024, 2, 5, 1, 32, 11 },
		/* service time over Lmax: cut by one */
		{ 200, 128, 60, 200, 1024, 61, 5, 1, 32, 10 },
		/* estimated latency D/IOPS = 100 s over Lmax: cut by one */
		{ 20000, 128, 60, 200, 1024, 2, 5, 1, 32, 10 },
		/* exactly at the bound: no cut */
		{ 12000, 128, 60, 200, 1024, 60, 5, 1, 32, 11 },
		/* one client: 12000 -> RCCmax, even after the cut */
		{ 20000, 128, 60, 200, 1, 61, 5, 1, 32, 32 },
		/* 0.1 credits -> RCCmin; and after the cut still RCCmin */
		{ 200, 128, 1, 10, 100, 0, 5, 1, 32, 1 },
		{ 200, 128, 1, 10, 100, 5, 5, 2, 32, 2 },
		/* no IOPS measurement yet under load: RCCmin */
		{ 200, 128, 60, 0, 10, 0, 8, 1, 32, 1 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct calc_case *c = &cases[i];
		long got = qos_rcc_calc(c->D, c->Dlow, c->Lmax, c->IOPS, c->C,
					c->Ts, c->cnr, c->RCCmin, c->RCCmax);
		if (got != c->want)
			print_error("case %zu: got %ld want %ld\n", i, got, c->want);
		assert_int_equal(got, c->want);
	}
}

static void test_rcc_timeout_and_deviation(void **state)
{
	double T = 0;

	(void)state;
	/* sec. IV: lambda 1.5, Lmax 60 s, Lnet 5 s */
	assert_int_equal(qos_rcc_timeout(1.5, 60, 5, &T), 0);
	assert_true(fabs(T - 95) < 1e-12);
	assert_int_equal(qos_rcc_timeout(0.5, 60, 5, &T), -EINVAL);
	assert_int_equal(qos_rcc_timeout(1.5, 0, 5, &T), -EINVAL);
	/* Table I: C = 1024, dL = C/IOPS = 6 s, Lmax 60 s -> P = 10 % */
	assert_true(fabs(qos_rcc_deviation(1024, 1024 / 6.0, 60) - 0.1) < 1e-12);
	assert_true(isinf(qos_rcc_deviation(1, 0, 60)));
}

static void test_rcc_init_validates(void **state)
{
	qos_rcc r;
	qos_rcc_params p = { .Lmax = 0 };

	(void)state;
	assert_int_equal(qos_rcc_init(&r, &p, 0), -EINVAL);
	p.Lmax = 25;
	p.RCCmin = 4;
	p.RCCmax = 2;
	assert_int_equal(qos_rcc_init(&r, &p, 0), -EINVAL);
	p.RCCmin = 0.5;
	p.RCCmax = 0;
	assert_int_equal(qos_rcc_init(&r, &p, 0), -EINVAL);
	p.RCCmin = 0;
	assert_int_equal(qos_rcc_init(&r, &p, 0), 0);
	assert_true(r.p.Dlow == 128 && r.p.RCCmin == 1 && r.p.RCCmax == 32 &&
		    r.p.STL == 60);
}

static void test_rcc_active_clients_with_stl(void **state)
{
	qos_rcc r;
	qos_rcc_client a, b;
	qos_rcc_params p = { .Lmax = 25, .STL = 60 };

	(void)state;
	assert_int_equal(qos_rcc_init(&r, &p, 0), 0);
	qos_rcc_client_init(&a);
	qos_rcc_client_init(&b);
	qos_rcc_recv(&r, &a, 1);
	qos_rcc_recv(&r, &a, 1);
	qos_rcc_recv(&r, &b, 2);
	assert_int_equal(r.C, 2);
	assert_int_equal(r.D, 3);
	qos_rcc_reply(&r, &a, 1, 1, 3);
	qos_rcc_reply(&r, &a, 1, 1, 4);
	assert_int_equal(r.D, 1);
	/* q = 0 but still counted until idle for more than STL */
	assert_int_equal(r.C, 2);
	assert_int_equal(qos_rcc_ping(&r, &a, 30), 0);
	assert_int_equal(qos_rcc_ping(&r, &a, 64), 0);
	assert_int_equal(qos_rcc_ping(&r, &a, 64.5), 1);
	assert_int_equal(r.C, 1);
	/* b has a request pending: never counted out */
	assert_int_equal(qos_rcc_ping(&r, &b, 1000), 0);
	qos_rcc_client_forget(&r, &b, 1000);
	assert_int_equal(r.C, 0);
	assert_int_equal(r.D, 0);
}

static void test_rcc_iops_time_averaged_over_busy_time(void **state)
{
	qos_rcc r;
	qos_rcc_client a;
	qos_rcc_params p = { .Lmax = 25, .window = 1 };
	double t = 0;

	(void)state;
	assert_int_equal(qos_rcc_init(&r, &p, 0), 0);
	qos_rcc_client_init(&a);
	/* one request at a time, 10 ms of service, then 10 ms idle:
	 * 50 ops per second of wall time but 100 per second of I/O time */
	while (t < 2.5) {
		qos_rcc_recv(&r, &a, t);
		qos_rcc_reply(&r, &a, t, 1, t + 0.01);
		t += 0.02;
	}
	assert_true(fabs(qos_rcc_iops(&r) - 100) < 1.0);
}

static void test_rcc_reply_light_then_heavy(void **state)
{
	qos_rcc r;
	qos_rcc_client cl[300];
	qos_rcc_params p = { .Lmax = 1, .Dlow = 16, .window = 1 };

	(void)state;
	assert_int_equal(qos_rcc_init(&r, &p, 0), 0);
	for (int i = 0; i < 300; i++)
		qos_rcc_client_init(&cl[i]);
	/* light load: the client gets the credits it asks for */
	qos_rcc_recv(&r, &cl[0], 0);
	assert_int_equal(qos_rcc_reply(&r, &cl[0], 0, 8, 0.01), 8);
	/* a server doing 100 IOPS, measured over a busy second */
	for (int k = 0; k < 110; k++) {
		qos_rcc_recv(&r, &cl[0], 0.01 * k);
		qos_rcc_reply(&r, &cl[0], 0.01 * k, 1, 0.01 * (k + 1));
	}
	assert_true(fabs(r.IOPS - 100) < 1);
	/* 300 clients each with one request queued: D = 300 > Dlow,
	 * Lmax * IOPS / C = 100 / 300 -> 0 -> RCCmin; latency D/IOPS = 3 s
	 * is over Lmax, so the cut applies too and RCCmin still holds. */
	for (int i = 0; i < 300; i++)
		qos_rcc_recv(&r, &cl[i], 1.2);
	assert_int_equal(r.C, 300);
	assert_int_equal(qos_rcc_reply(&r, &cl[5], 1.2, 32, 1.21), 1);
	/* with 10 active clients the fair share is 100/10 = 10, minus one
	 * because D / IOPS is still over Lmax */
	for (int i = 10; i < 300; i++)
		qos_rcc_client_forget(&r, &cl[i], 1.22);
	for (int i = 0; i < 200; i++)
		qos_rcc_recv(&r, &cl[1], 1.23);
	assert_true(r.D / qos_rcc_iops(&r) > 1);
	assert_int_equal(r.C, 10);
	assert_int_equal(qos_rcc_reply(&r, &cl[1], 1.23, 32, 1.24), 9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rcc_calc_table),
		cmocka_unit_test(test_rcc_timeout_and_deviation),
		cmocka_unit_test(test_rcc_init_validates),
		cmocka_unit_test(test_rcc_active_clients_with_stl),
		cmocka_unit_test(test_rcc_iops_time_averaged_over_busy_time),
		cmocka_unit_test(test_rcc_reply_light_then_heavy),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
