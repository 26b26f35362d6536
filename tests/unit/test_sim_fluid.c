/* test_sim_fluid.c — the fluid model: a job alone gets its allocation,
 * two jobs on one OST split it per allocations, over-allocation is scaled,
 * idle capacity is shared only when work-conserving, and a phase ends at
 * its slowest rank (independent ranks) or all ranks end together
 * (lockstep). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "bench/sim/sim_fluid.h"

static void test_fluid_alone_full_bandwidth(void **state)
{
	double cap[1] = {100}, scratch[2];
	sim_stream s = {.ost = 0, .total = 1000, .remaining = 1000, .alloc = 100};
	sim_fluid_job j = {&s, 1};
	assert_int_equal(sim_fluid_rates(&j, 1, cap, 1, SIM_FLUID_LOCKSTEP, scratch), 0);
	assert_true(fabs(s.rate - 100) < 1e-12);
	assert_true(fabs(sim_fluid_next_finish(&j, 1) - 10) < 1e-12);
	sim_fluid_advance(&j, 1, 10);
	assert_true(sim_fluid_done(&j));
	assert_true(fabs(s.moved - 1000) < 1e-9);
}

static void test_fluid_split_per_allocations(void **state)
{
	double cap[1] = {100}, scratch[2], e, sv;
	sim_stream a = {.ost = 0, .total = 300, .remaining = 300, .alloc = 30};
	sim_stream b = {.ost = 0, .total = 700, .remaining = 700, .alloc = 70};
	sim_fluid_job j[2] = {{&a, 1}, {&b, 1}};
	assert_int_equal(sim_fluid_rates(j, 2, cap, 1, 0, scratch), 0);
	assert_true(fabs(a.rate - 30) < 1e-12);
	assert_true(fabs(b.rate - 70) < 1e-12);
	sim_fluid_bandwidth(&j[1], &e, &sv);
	assert_true(fabs(e - 70) < 1e-12 && fabs(sv - 70) < 1e-12);
	/* Both end at 10 s. */
	assert_true(fabs(sim_fluid_next_finish(j, 2) - 10) < 1e-12);
}

static void test_fluid_overcommit_scaled(void **state)
{
	double cap[2] = {100, 100}, scratch[4];
	sim_stream a = {.ost = 0, .total = 1, .remaining = 1, .alloc = 80};
	sim_stream b = {.ost = 0, .total = 1, .remaining = 1, .alloc = 120};
	sim_fluid_job j[2] = {{&a, 1}, {&b, 1}};
	assert_int_equal(sim_fluid_rates(j, 2, cap, 2, 0, scratch), 1);
	assert_true(fabs(a.rate - 40) < 1e-12);
	assert_true(fabs(b.rate - 60) < 1e-12);
	b.ost = 5;
	assert_true(sim_fluid_rates(j, 2, cap, 2, 0, scratch) < 0);
}

static void test_fluid_work_conserving(void **state)
{
	double cap[1] = {100}, scratch[2];
	sim_stream a = {.ost = 0, .total = 100, .remaining = 100, .alloc = 20};
	sim_stream b = {.ost = 0, .total = 100, .remaining = 100, .alloc = 0};
	sim_fluid_job j[2] = {{&a, 1}, {&b, 1}};
	assert_int_equal(sim_fluid_rates(j, 2, cap, 1, 0, scratch), 0);
	assert_true(fabs(a.rate - 20) < 1e-12 && b.rate == 0);
	assert_int_equal(sim_fluid_rates(j, 2, cap, 1, SIM_FLUID_WORK_CONSERVING, scratch), 0);
	assert_true(fabs(a.rate - 60) < 1e-12);
	assert_true(fabs(b.rate - 40) < 1e-12);
}

/* One job, two ranks on two OSTs with 100 MB each, allocations 50 and 100. */
static double phase_time(int flags, double *fast_end, double *eff, double *served)
{
	double cap[2] = {100, 100}, scratch[4], t = 0;
	sim_stream s[2] = {{.ost = 0, .total = 100, .remaining = 100, .alloc = 50},
			   {.ost = 1, .total = 100, .remaining = 100, .alloc = 100}};
	sim_fluid_job j = {s, 2};
	*fast_end = -1;
	sim_fluid_rates(&j, 1, cap, 2, flags, scratch);
	sim_fluid_bandwidth(&j, eff, served);
	while (!sim_fluid_done(&j)) {
		sim_fluid_rates(&j, 1, cap, 2, flags, scratch);
		double dt = sim_fluid_next_finish(&j, 1);
		assert_true(isfinite(dt));
		sim_fluid_advance(&j, 1, dt);
		t += dt;
		if (*fast_end < 0 && s[1].remaining == 0)
			*fast_end = t;
	}
	return t;
}

static void test_fluid_phase_ends_at_slowest_rank(void **state)
{
	double fast, eff, served;
	/* Independent ranks: the fast rank ends at 1 s, the phase at 2 s. */
	assert_true(fabs(phase_time(0, &fast, &eff, &served) - 2) < 1e-9);
	assert_true(fabs(fast - 1) < 1e-9);
	/* Only 2 x 50 of the 150 served advances both ranks together. */
	assert_true(fabs(eff - 100) < 1e-9 && fabs(served - 150) < 1e-9);
	/* Lockstep: both ranks at the slow pace, ending together at 2 s. */
	assert_true(fabs(phase_time(SIM_FLUID_LOCKSTEP, &fast, &eff, &served) - 2) < 1e-9);
	assert_true(fabs(fast - 2) < 1e-9);
	assert_true(fabs(eff - 100) < 1e-9 && fabs(served - 100) < 1e-9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fluid_alone_full_bandwidth),
		cmocka_unit_test(test_fluid_split_per_allocations),
		cmocka_unit_test(test_fluid_overcommit_scaled),
		cmocka_unit_test(test_fluid_work_conserving),
		cmocka_unit_test(test_fluid_phase_ends_at_slowest_rank),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
