/* test_qos_adaptbf.c — AdapTBF (adaptbf.txt III-C): hand-computed periods
 * of Eq. (1)-(20), and the invariants: whole tokens per period equal
 * T_i·Δt, records sum to zero, saturated jobs share by node count, lenders
 * are re-compensated when their demand returns. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qos/adaptbf.h"
#include "qos/policy.h"

static uint64_t lcg_state;
static double lcg01(void)
{
	lcg_state = lcg_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (double)(lcg_state >> 11) / 9007199254740992.0;
}

static void job_init(qos_adaptbf_job *x, double n, double d)
{
	memset(x, 0, sizeof(*x));
	x->n = n;
	x->d = d;
	x->prev = -1;
}

/* Paper IV-D: priorities 10/10/30/50 %, all I/O-bound: tokens follow
 * Eq. (1)-(2) exactly and nothing is lent. */
static void test_adaptbf_initial_priority(void **st)
{
	qos_adaptbf_job x[4];
	const double nodes[4] = {1, 1, 3, 5};
	const int64_t want[4] = {10, 10, 30, 50};
	for (int i = 0; i < 4; i++)
		job_init(&x[i], nodes[i], 1000);
	for (int period = 0; period < 3; period++) {
		assert_int_equal(qos_adaptbf_allocate(x, 4, 100), 0);
		for (int i = 0; i < 4; i++) {
			assert_int_equal(x[i].alpha, want[i]);
			assert_true(x[i].r == 0);
			assert_true(fabs(x[i].p - nodes[i] / 10) < 1e-12);
			assert_int_equal(x[i].prev, want[i]);
		}
	}
}

/* Hand-computed: A and B with equal nodes, K = 100.
 * Period 1: d_A = 10, d_B = 200.  α = 50/50; u = 0.2 / 4 (no α^{t-1}: α^t);
 * DF_A = 0.2·0.5 = 0.1, DF_B = 4 + 4·0.5 = 6; T_s = 40.
 * α_RD,A = 10 + 0.1/6.1·40 = 10.656, α_RD,B = 50 + 6/6.1·40 = 89.344 →
 * floors 10 + 89 = 99, largest remainder (A: 0.656) gets the last token:
 * A = 11, B = 89; records r_A = +39 (lent), r_B = -39 (borrowed).
 * Period 2: both demand 200.  Initial 50/50 (A's ρ -0.344 floors to 49, the
 * correction gives it back).  T_s = 0.  J+ = {A}, J- = {B};
 * u_A = 200/11, ū_A = 200/50 = 4 → C = 0.5·(18.18 + 0)/2 = 4.55;
 * T_R^B = min(39, ⌊4.55·50⌋) = 39 → B = 11, A = 50 + 39 = 89; records 0. */
static void test_adaptbf_lend_then_recompensate(void **st)
{
	qos_adaptbf_job x[2];
	job_init(&x[0], 2, 10);
	job_init(&x[1], 2, 200);
	assert_int_equal(qos_adaptbf_allocate(x, 2, 100), 0);
	assert_true(fabs(x[0].DF - 0.1) < 1e-12);
	assert_true(fabs(x[1].DF - 6.0) < 1e-12);
	assert_int_equal(x[0].alpha, 11);
	assert_int_equal(x[1].alpha, 89);
	assert_true(x[0].r == 39);
	assert_true(x[1].r == -39);
	assert_true(fabs(x[0].rho - (10.0 + 0.1 / 6.1 * 40 - 11)) < 1e-9);

	x[0].d = 200;
	x[1].d = 200;
	assert_int_equal(qos_adaptbf_allocate(x, 2, 100), 0);
	assert_true(fabs(x[0].u - 200.0 / 11) < 1e-9);
	assert_int_equal(x[0].alpha, 89);   /* more than its priority share */
	assert_int_equal(x[1].alpha, 11);
	assert_true(x[0].r == 0);
	assert_true(x[1].r == 0);

	/* Debts settled: the next period is back to priority shares. */
	assert_int_equal(qos_adaptbf_allocate(x, 2, 100), 0);
	assert_int_equal(x[0].alpha, 50);
	assert_int_equal(x[1].alpha, 50);
}

/* A lender whose demand returns is paid back over the following periods
 * and its record never goes below zero; a borrower's never above. */
static void test_adaptbf_lender_recompensated_gradually(void **st)
{
	qos_adaptbf_job x[3];
	job_init(&x[0], 4, 5);     /* lender: idle-ish */
	job_init(&x[1], 2, 500);
	job_init(&x[2], 2, 500);
	for (int t = 0; t < 20; t++)
		assert_int_equal(qos_adaptbf_allocate(x, 3, 200), 0);
	double lent = x[0].r;
	assert_true(lent > 50);
	assert_true(x[1].r < 0 && x[2].r < 0);
	assert_true(x[0].r + x[1].r + x[2].r == 0);

	x[0].d = 1000;   /* the lender's demand returns */
	int64_t got = 0;
	double r_before = x[0].r;
	for (int t = 0; t < 20; t++) {
		assert_int_equal(qos_adaptbf_allocate(x, 3, 200), 0);
		got += x[0].alpha;
		assert_true(x[0].r <= r_before);  /* only paid back, never lends */
		assert_true(x[0].r >= 0);
		assert_true(x[1].r <= 0 && x[2].r <= 0);
		assert_true(x[0].r + x[1].r + x[2].r == 0);
		r_before = x[0].r;
	}
	assert_true(x[0].r == 0);
	/* over those periods it received its share plus what it lent */
	assert_int_equal(got, 20 * 100 + (int64_t)lent);
}

/* Σ tokens = K every period, records sum to 0, tokens >= 0, on random
 * node counts, demands and K (including K not divisible by n and K = 0). */
static void test_adaptbf_invariants_random(void **st)
{
	lcg_state = 42;
	for (int round = 0; round < 200; round++) {
		size_t n = 1 + (size_t)(lcg01() * 12);
		int64_t K = (int64_t)(lcg01() * 300);
		qos_adaptbf_job x[12];
		for (size_t i = 0; i < n; i++)
			job_init(&x[i], 1 + floor(lcg01() * 64), 0);
		for (int t = 0; t < 30; t++) {
			for (size_t i = 0; i < n; i++) {
				double v = lcg01();
				x[i].d = v < 0.3 ? 0 : v < 0.6 ? floor(lcg01() * 20)
					 : floor(lcg01() * 400) + lcg01();
			}
			assert_int_equal(qos_adaptbf_allocate(x, n, K), 0);
			int64_t sum = 0;
			double rsum = 0;
			for (size_t i = 0; i < n; i++) {
				assert_true(x[i].alpha >= 0);
				assert_true(x[i].r == floor(x[i].r)); /* whole tokens */
				assert_true(x[i].rho > -2 && x[i].rho < 2);
				sum += x[i].alpha;
				rsum += x[i].r;
			}
			assert_int_equal(sum, K);
			assert_true(rsum == 0);
		}
	}
}

/* All jobs saturated: shares follow node counts.  Per period a job is
 * within two tokens of T_i·p_x·Δt (one for this period's rounding, one for
 * the carried remainder) and, cumulatively, within one token. */
static void test_adaptbf_saturated_proportional(void **st)
{
	const double nodes[5] = {1, 2, 4, 7, 3};
	const int64_t K = 37;
	qos_adaptbf_job x[5];
	int64_t cum[5] = {0};
	for (int i = 0; i < 5; i++)
		job_init(&x[i], nodes[i], 1e6);
	for (int t = 1; t <= 100; t++) {
		assert_int_equal(qos_adaptbf_allocate(x, 5, K), 0);
		for (int i = 0; i < 5; i++) {
			double share = K * nodes[i] / 17.0;
			cum[i] += x[i].alpha;
			assert_true(fabs((double)x[i].alpha - share) < 2.0);
			assert_true(fabs((double)cum[i] - share * t) < 1.0 + 1e-9);
			assert_true(x[i].r == 0);
		}
	}
}

/* Active jobs with no demand at all (Σ DF = 0): no redistribution. */
static void test_adaptbf_no_demand(void **st)
{
	qos_adaptbf_job x[2];
	job_init(&x[0], 1, 0);
	job_init(&x[1], 3, 0);
	assert_int_equal(qos_adaptbf_allocate(x, 2, 8), 0);
	assert_int_equal(x[0].alpha, 2);
	assert_int_equal(x[1].alpha, 6);
	assert_true(x[0].r == 0 && x[1].r == 0);
}

static void test_adaptbf_invalid(void **st)
{
	qos_adaptbf_job x[1];
	job_init(&x[0], 1, 1);
	assert_int_equal(qos_adaptbf_allocate(x, 1, -1), -EINVAL);
	assert_int_equal(qos_adaptbf_allocate(NULL, 1, 10), -EINVAL);
	x[0].n = 0;
	assert_int_equal(qos_adaptbf_allocate(x, 1, 10), -EINVAL);
	x[0].n = 1;
	x[0].d = NAN;
	assert_int_equal(qos_adaptbf_allocate(x, 1, 10), -EINVAL);
	assert_int_equal(qos_adaptbf_allocate(NULL, 0, 10), 0);

	qos_adaptbf_ost *o = NULL;
	assert_int_equal(qos_adaptbf_ost_create(-1, 0.1, &o), -EINVAL);
	assert_int_equal(qos_adaptbf_ost_create(100, 0, &o), -EINVAL);
	assert_null(o);
}

/* The per-OST record keeper: K carry for fractional T·Δt, jobs that go
 * idle keep their record, forget, duplicate ids rejected untouched. */
static void test_adaptbf_ost_records(void **st)
{
	qos_adaptbf_ost *o = NULL;
	int64_t tok[3];
	double rec[3], r;

	/* T·Δt = 1.5 tokens: periods alternate 1, 2 and total exactly 15. */
	assert_int_equal(qos_adaptbf_ost_create(15, 0.1, &o), 0);
	qos_adaptbf_obs one = {"solo", 1, 100};
	int64_t total = 0;
	for (int t = 0; t < 10; t++) {
		assert_int_equal(qos_adaptbf_ost_period(o, &one, 1, tok, NULL), 0);
		total += tok[0];
	}
	assert_int_equal(total, 15);
	qos_adaptbf_ost_destroy(o);

	assert_int_equal(qos_adaptbf_ost_create(1000, 0.1, &o), 0);
	qos_adaptbf_obs obs[3] = {{"A", 2, 10}, {"B", 2, 200}, {"A", 1, 1}};
	/* duplicate: rejected, nothing created */
	assert_int_equal(qos_adaptbf_ost_period(o, obs, 3, tok, rec), -EINVAL);
	assert_int_equal(qos_adaptbf_ost_njobs(o), 0);

	assert_int_equal(qos_adaptbf_ost_period(o, obs, 2, tok, rec), 0);
	assert_int_equal(tok[0], 11);
	assert_int_equal(tok[1], 89);
	assert_true(rec[0] == 39 && rec[1] == -39);

	/* B goes idle: A alone gets everything; B keeps its debt. */
	assert_int_equal(qos_adaptbf_ost_period(o, obs, 1, tok, rec), 0);
	assert_int_equal(tok[0], 100);
	assert_int_equal(qos_adaptbf_ost_record(o, "B", &r), 0);
	assert_true(r == -39);
	assert_true(qos_adaptbf_ost_record_sum(o) == 0);
	assert_int_equal(qos_adaptbf_ost_njobs(o), 2);

	/* B comes back hungry, A too: A is paid back. */
	obs[0].d = 200;
	assert_int_equal(qos_adaptbf_ost_period(o, obs, 2, tok, rec), 0);
	assert_true(tok[0] > 50);
	assert_true(rec[0] < 39);
	assert_true(rec[0] + rec[1] == 0);

	assert_int_equal(qos_adaptbf_ost_forget(o, "B"), 0);
	assert_int_equal(qos_adaptbf_ost_forget(o, "B"), -ENOENT);
	assert_int_equal(qos_adaptbf_ost_record(o, "B", &r), -ENOENT);
	assert_int_equal(qos_adaptbf_ost_njobs(o), 1);
	qos_adaptbf_ost_destroy(o);
}

/* Many jobs through the hash table, half forgotten, the rest intact. */
static void test_adaptbf_ost_many_jobs(void **st)
{
	enum { NJ = 1000 };
	static qos_adaptbf_obs obs[NJ];
	static char ids[NJ][16];
	static int64_t tok[NJ];
	static double rec[NJ];
	qos_adaptbf_ost *o = NULL;
	assert_int_equal(qos_adaptbf_ost_create(1e5, 0.1, &o), 0);
	for (int i = 0; i < NJ; i++) {
		snprintf(ids[i], sizeof(ids[i]), "job%d", i);
		obs[i].id = ids[i];
		obs[i].nodes = 1 + i % 7;
		obs[i].d = i % 3 ? 5 : 500;
	}
	assert_int_equal(qos_adaptbf_ost_period(o, obs, NJ, tok, rec), 0);
	int64_t sum = 0;
	for (int i = 0; i < NJ; i++)
		sum += tok[i];
	assert_int_equal(sum, 10000);
	assert_int_equal(qos_adaptbf_ost_njobs(o), NJ);
	for (int i = 0; i < NJ; i += 2)
		assert_int_equal(qos_adaptbf_ost_forget(o, ids[i]), 0);
	assert_int_equal(qos_adaptbf_ost_njobs(o), NJ / 2);
	for (int i = 1; i < NJ; i += 2) {
		double r;
		assert_int_equal(qos_adaptbf_ost_record(o, ids[i], &r), 0);
		assert_true(r == rec[i]);
	}
	qos_adaptbf_ost_destroy(o);
}

/* The policy: two OSTs, three jobs; tokens per OST = capacity·Δt, alloc =
 * tokens/Δt, inactive jobs get 0 and keep their record, departed jobs are
 * forgotten, unknown parameters refused. */
static void test_adaptbf_policy(void **st)
{
	const qos_policy_ops *ops = qos_policy_find("adaptbf");
	assert_non_null(ops);
	void *s = NULL;
	qos_param bad = {"DF", 1};
	qos_params pb = {&bad, 1, 0};
	assert_int_equal(ops->create(&pb, &s), -EINVAL);
	assert_int_equal(ops->create(NULL, &s), 0);

	const char *ost_ids[2] = {"ost0", "ost1"};
	double capacity[2] = {1000, 500};   /* RPC/s: K = 100 and 50 */
	qos_job jobs[3] = {{.id = "A", .nodes = 2}, {.id = "B", .nodes = 2},
			   {.id = "C", .nodes = 4}};
	/* [job][ost]: A on ost0, B on both, C on ost1 */
	uint8_t active[6] = {1, 0, 1, 1, 0, 1};
	double usage[6] = {100, 0, 2000, 5000, 0, 5000}; /* RPC/s */
	double alloc[6], records[6];
	int64_t tokens[6];
	qos_instance in = {.n_osts = 2, .n_jobs = 3, .ost_ids = ost_ids,
			   .capacity = capacity, .jobs = jobs, .active = active,
			   .usage = usage, .period = 0.1};
	qos_result res = {.alloc = alloc, .records = records, .tokens = tokens};

	assert_int_equal(ops->decide(s, &in, &res), 0);
	/* ost0: A(d=10), B(d=200) → 11 / 89 as in the hand example. */
	assert_int_equal(tokens[0], 11);
	assert_int_equal(tokens[2], 89);
	assert_int_equal(tokens[4], 0);
	assert_true(fabs(alloc[0] - 110) < 1e-9);
	assert_true(alloc[4] == 0);
	/* ost1: B (2 nodes) and C (4 nodes) both saturated → 17 / 33. */
	assert_int_equal(tokens[3] + tokens[5], 50);
	assert_true(labs((long)(tokens[5] - 2 * tokens[3])) <= 2);
	assert_true(records[0] == 39 && records[2] == -39);
	assert_true(records[0] + records[2] + records[4] == 0);
	assert_true(fabs(res.effective - (100 + 890 + alloc[3] + alloc[5])) < 1e-6);

	/* B leaves the instance entirely: forgotten; A's credit stays. */
	qos_instance in2 = in;
	qos_job jobs2[2] = {jobs[0], jobs[2]};
	uint8_t active2[4] = {0, 0, 0, 1};
	double usage2[4] = {0, 0, 0, 5000};
	in2.n_jobs = 2;
	in2.jobs = jobs2;
	in2.active = active2;
	in2.usage = usage2;
	assert_int_equal(ops->decide(s, &in2, &res), 0);
	assert_true(records[0] == 39);       /* A on ost0, idle, keeps it */
	assert_int_equal(tokens[3], 50);     /* C alone on ost1 */
	assert_true(alloc[0] == 0);

	/* B returns: a fresh record. */
	assert_int_equal(ops->decide(s, &in, &res), 0);
	assert_true(records[2] <= 0 && records[2] > -100);

	/* an OST listed twice is refused */
	const char *dup_ids[2] = {"ost0", "ost0"};
	in.ost_ids = dup_ids;
	assert_int_equal(ops->decide(s, &in, &res), -EINVAL);
	ops->destroy(s);
}

/* Eq. (11)-(20) with C < 1, by hand.  L and B (1 node each) start this
 * period with records +30 / -30 and 50 tokens last period; K = 100,
 * d_L = 10, d_B = 100.
 * Redistribution: u_L = 0.2, DF_L = 0.1; u_B = 2, DF_B = 3; T_s = 40;
 * α_RD,L = 10 + 0.1/3.1·40 = 11.29 → 11, α_RD,B = 88.71 → 89 (largest
 * remainder); r_RD = +69 / -69, so J+ = {L}, J- = {B}.
 * Eq. (12): ū_L = 10/11; Eq. (13): C = 0.5·(max(1, 0.2) + (1 - 10/11))/2
 * = 0.2727; Eq. (14): T_R^B = min(30, ⌊0.2727·89⌋ = 24) = 24.
 * So B = 65, L = 11 + 24 = 35, records +45 / -45. */
static void test_adaptbf_reclaim_coefficient(void **st)
{
	qos_adaptbf_job x[2];
	job_init(&x[0], 1, 10);
	job_init(&x[1], 1, 100);
	x[0].r = 30;
	x[1].r = -30;
	x[0].prev = x[1].prev = 50;
	assert_int_equal(qos_adaptbf_allocate(x, 2, 100), 0);
	assert_true(fabs(x[0].DF - 0.1) < 1e-12);
	assert_true(fabs(x[1].DF - 3.0) < 1e-12);
	/* C = 0.27 by hand, C·α_RD = 24.3: the borrower gives ⌈24.3⌉ = 25
	 * whole tokens and is owed the 0.7 back through its remainder (the
	 * paper's floor would give 24 and drop the 0.3 for good) */
	assert_int_equal(x[0].alpha, 36);
	assert_int_equal(x[1].alpha, 64);
	assert_true(x[0].r == 44 && x[1].r == -44); /* one more token repaid */
	assert_true(x[1].rho >= 0 && x[1].rho < 1); /* owed back: part of the 25 */
}

/* A borrower with a few tokens per period repays: C·α_RD = 0.25 · 2 =
 * 0.5 token per period, which the paper's ⌊·⌋ makes 0 for ever (the
 * lender is never paid back).  With the fraction carried the debt shrinks
 * by 0.5 token per period on average, records stay opposite, and the
 * tokens still sum to K every period. */
static void test_adaptbf_small_borrower_repays(void **st)
{
	qos_adaptbf_job x[2];
	job_init(&x[0], 1, 2);
	job_init(&x[1], 1, 2);
	x[0].r = 12;   /* lent earlier */
	x[1].r = -12;  /* borrowed earlier */
	x[0].prev = x[1].prev = 2;
	for (int t = 0; t < 20; t++) {
		x[0].d = x[1].d = 2; /* both exactly saturated: u = 1, ū ≈ 1 */
		assert_int_equal(qos_adaptbf_allocate(x, 2, 4), 0);
		assert_int_equal(x[0].alpha + x[1].alpha, 4);
		assert_true(x[0].r + x[1].r == 0);
		assert_true(x[1].alpha >= 1); /* the borrower is never starved */
	}
	assert_true(x[1].r >= -4 && x[1].r <= 0); /* 20 x 0.5 of the 12 repaid */
	assert_true(x[0].r <= 4);
}

/* One OST (K = 100 tokens per Δt = 0.1 s), A and B with 2 nodes each,
 * through the policy with a demand matrix (RPC/s). */
typedef struct ab_one {
	qos_job jobs[2];
	uint8_t active[2];
	double capacity[1], usage[2], demand[2], alloc[2], records[2];
	int64_t tokens[2];
	qos_instance in;
	qos_result res;
} ab_one;

static void ab_one_init(ab_one *o, int with_demand)
{
	memset(o, 0, sizeof(*o));
	snprintf(o->jobs[0].id, sizeof(o->jobs[0].id), "A");
	snprintf(o->jobs[1].id, sizeof(o->jobs[1].id), "B");
	o->jobs[0].nodes = o->jobs[1].nodes = 2;
	o->capacity[0] = 1000;
	o->in = (qos_instance){ .n_osts = 1, .n_jobs = 2, .capacity = o->capacity,
				.jobs = o->jobs, .active = o->active,
				.usage = o->usage,
				.demand = with_demand ? o->demand : NULL,
				.period = 0.1 };
	o->res = (qos_result){ .alloc = o->alloc, .records = o->records,
			       .tokens = o->tokens };
}

/* A job idle for a period, then with demand again, gets tokens at once:
 * d_x is what arrived, not what was served while it was idle (usage 0
 * would make all of its initial allocation surplus, period after
 * period). */
static void test_adaptbf_policy_demand_after_idle(void **st)
{
	const qos_policy_ops *ops = qos_policy_find("adaptbf");
	void *s = NULL;
	ab_one o;
	ab_one_init(&o, 1);
	assert_int_equal(ops->create(NULL, &s), 0);
	/* both saturated: 50 / 50 */
	o.active[0] = o.active[1] = 1;
	o.demand[0] = o.demand[1] = 2000;
	o.usage[0] = o.usage[1] = 500;
	assert_int_equal(ops->decide(s, &o.in, &o.res), 0);
	assert_int_equal(o.tokens[0], 50);
	assert_int_equal(o.tokens[1], 50);
	/* A idle: B alone */
	o.active[0] = 0;
	o.demand[0] = 0;
	assert_int_equal(ops->decide(s, &o.in, &o.res), 0);
	assert_int_equal(o.tokens[0], 0);
	assert_int_equal(o.tokens[1], 100);
	/* A back with demand; it was served nothing last period */
	o.active[0] = 1;
	o.demand[0] = 2000;
	o.usage[0] = 0;
	o.usage[1] = 1000;
	for (int t = 0; t < 3; t++) {
		assert_int_equal(ops->decide(s, &o.in, &o.res), 0);
		assert_int_equal(o.tokens[0], 50);
		assert_int_equal(o.tokens[1], 50);
		assert_true(fabs(o.alloc[0] - 500) < 1e-9);
		o.usage[0] = o.usage[1] = 500;
	}
	/* effective counts what is asked for, up to the allocation */
	assert_true(fabs(o.res.effective - 1000) < 1e-9);
	ops->destroy(s);
}

/* Active jobs that used nothing.  With a demand matrix a new job with
 * demand but no usage yet gets its priority share; without one, an
 * active job with zero usage still gets at least a token every period
 * and, using what it gets, climbs back (re-compensation of what it lent)
 * instead of staying starved. */
static void test_adaptbf_policy_zero_usage_active(void **st)
{
	const qos_policy_ops *ops = qos_policy_find("adaptbf");
	void *s = NULL;
	ab_one o;

	ab_one_init(&o, 1);
	assert_int_equal(ops->create(NULL, &s), 0);
	o.active[0] = o.active[1] = 1;
	o.demand[0] = o.demand[1] = 2000;
	assert_int_equal(ops->decide(s, &o.in, &o.res), 0);
	assert_int_equal(o.tokens[0], 50);
	assert_int_equal(o.tokens[1], 50);
	ops->destroy(s);

	ab_one_init(&o, 0);
	assert_int_equal(ops->create(NULL, &s), 0);
	o.active[0] = o.active[1] = 1;
	o.usage[0] = 0;
	o.usage[1] = 5000;
	for (int t = 0; t < 4; t++) {
		assert_int_equal(ops->decide(s, &o.in, &o.res), 0);
		assert_true(o.tokens[0] >= 1);
		assert_int_equal(o.tokens[0] + o.tokens[1], 100);
	}
	/* A now uses all it is given: it gets back toward its share */
	int64_t last = o.tokens[0];
	for (int t = 0; t < 4; t++) {
		o.usage[0] = o.alloc[0];
		assert_int_equal(ops->decide(s, &o.in, &o.res), 0);
		assert_true(o.tokens[0] >= last);
		last = o.tokens[0];
	}
	assert_true(last >= 50);
	ops->destroy(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_adaptbf_initial_priority),
		cmocka_unit_test(test_adaptbf_lend_then_recompensate),
		cmocka_unit_test(test_adaptbf_lender_recompensated_gradually),
		cmocka_unit_test(test_adaptbf_invariants_random),
		cmocka_unit_test(test_adaptbf_saturated_proportional),
		cmocka_unit_test(test_adaptbf_no_demand),
		cmocka_unit_test(test_adaptbf_invalid),
		cmocka_unit_test(test_adaptbf_ost_records),
		cmocka_unit_test(test_adaptbf_ost_many_jobs),
		cmocka_unit_test(test_adaptbf_policy),
		cmocka_unit_test(test_adaptbf_reclaim_coefficient),
		cmocka_unit_test(test_adaptbf_small_borrower_repays),
		cmocka_unit_test(test_adaptbf_policy_demand_after_idle),
		cmocka_unit_test(test_adaptbf_policy_zero_usage_active),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
