/* test_qos_gift_gate.c — GIFT's gate statistics (qos_gift_gate_get): on
 * GIFT Fig. 6's first instance, decided twice, each case's parameters make
 * a different gate close at the second decision (c_sys < tau, the regret
 * budget, none, B_thres = 0), and the counters must say which. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "qos/gift.h"

static const struct gate_case {
	const char *name;
	double tau, budget, B_thres;
	/* after two decisions */
	uint64_t decisions, csys_blocked, budget_blocked, coupon_decisions, candidates, in_y,
		excl_budget, excl_csys, excl_ci;
} cases[] = {
	/* tau = 1: A's unredeemed coupon drops c_sys (and c_A) below 1; the
	 * system gate is counted first for A, B has c_B = 1 */
	{"c_sys gate", 1.0, 15, 0.1, 2, 1, 0, 1, 4, 2, 0, 2, 0},
	/* tau = 0.8: one coupon in a window of 2,500 leaves c_sys at 0.9996 */
	{"open", 0.8, 15, 0.1, 2, 0, 0, 2, 4, 4, 0, 0, 0},
	/* a budget below one coupon's node-hours closes Y next time */
	{"budget", 0.8, 1e-6, 0.1, 2, 0, 1, 1, 4, 2, 2, 0, 0},
	/* no throttling power: no candidates at all */
	{"B_thres 0", 0.8, 15, 0.0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
};

static void test_gate_cases(void **state)
{
	(void)state;
	double cap[2] = {1, 1}, alloc[4], coupons[2];
	uint8_t active[4] = {1, 0, 1, 1}; /* A on ost1; B on ost1 and ost2 */
	qos_job jobs[2] = {{.id = "A", .nodes = 4, .priority = 1, .throttle_friendly = 1},
			   {.id = "B", .nodes = 4, .priority = 1, .throttle_friendly = 1}};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		const struct gate_case *k = &cases[c];
		qos_gift_params p;
		qos_gift *g;
		qos_gift_gate_stats gs;
		qos_gift_params_default(&p);
		p.tau = k->tau;
		p.regret_budget = k->budget;
		p.B_thres = k->B_thres;
		assert_int_equal(qos_gift_create(&p, &g), 0);
		qos_gift_gate_get(g, &gs);
		assert_int_equal(gs.periods, 0);
		for (int d = 0; d < 2; d++) {
			qos_instance in = {.n_osts = 2, .n_jobs = 2, .capacity = cap, .jobs = jobs,
					   .active = active, .period = 10, .now = 10.0 * d};
			qos_result res = {.alloc = alloc, .coupons = coupons};
			assert_int_equal(qos_gift_decide(g, &in, &res), 0);
		}
		qos_gift_gate_get(g, &gs);
		uint64_t got[] = {gs.decisions, gs.csys_blocked, gs.budget_blocked,
				  gs.coupon_decisions, gs.candidates, gs.in_y,
				  gs.excl_budget, gs.excl_csys, gs.excl_ci};
		uint64_t want[] = {k->decisions, k->csys_blocked, k->budget_blocked,
				   k->coupon_decisions, k->candidates, k->in_y,
				   k->excl_budget, k->excl_csys, k->excl_ci};
		static const char *const names[] = {"decisions", "csys_blocked",
						    "budget_blocked", "coupon_decisions",
						    "candidates", "in_y", "excl_budget",
						    "excl_csys", "excl_ci"};
		for (size_t i = 0; i < sizeof(got) / sizeof(got[0]); i++)
			if (got[i] != want[i]) {
				print_error("case '%s': %s = %llu, want %llu\n", k->name, names[i],
					    (unsigned long long)got[i],
					    (unsigned long long)want[i]);
				fail();
			}
		/* nothing redeems: ost1 has no gap */
		assert_int_equal(gs.redeem_decisions, 0);
		assert_int_equal(gs.excl_redeemed, 0);
		assert_int_equal(gs.periods, 1);
		qos_gift_destroy(g);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gate_cases),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
