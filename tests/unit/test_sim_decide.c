/* test_sim_decide.c — `pfs-sim decide` input parsing (good and malformed
 * JSON, each error naming the field) and output lines, driven through
 * pfs-sim's own equal-share policy and a policy that writes every
 * optional output. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/sim/sim_decide.h"
#include "bench/sim/sim_policy.h"

static const char *fig5 =
	"{\"osts\": [{\"id\": \"ost1\", \"capacity\": 1.0}, {\"id\": \"ost2\", \"capacity\": 1.0}],"
	" \"jobs\": [{\"id\": \"A\", \"nodes\": 4}, {\"id\": \"B\"}],"
	" \"instances\": [{\"active\": {\"A\": [\"ost1\"], \"B\": [\"ost1\", \"ost2\"]}},"
	"                 {\"active\": {\"B\": [\"ost2\"]}, \"usage\": {\"B\": {\"ost2\": 0.5}}}]}";

/* Run text through ops; returns the output (caller frees) or NULL. */
static char *run(const char *text, const qos_policy_ops *ops, const qos_param *p, size_t n,
		 int *rc, char *err, size_t errlen)
{
	sim_decide *d = NULL;
	char *buf = NULL;
	size_t len = 0;
	*rc = sim_decide_parse(text, strlen(text), &d, err, errlen);
	if (*rc)
		return NULL;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	*rc = sim_decide_run(d, ops, p, n, f, err, errlen);
	fclose(f);
	sim_decide_free(d);
	return buf;
}

static void test_decide_equal_share_lines(void **state)
{
	char err[256] = "";
	int rc;
	char *out = run(fig5, &sim_policy_equal, NULL, 0, &rc, err, sizeof(err));
	assert_int_equal(rc, 0);
	assert_string_equal(out,
			    "{\"instance\": 0, \"alloc\": {\"A\": {\"ost1\": 0.5}, \"B\": {\"ost1\": "
			    "0.5, \"ost2\": 1.0}}, \"effective\": 1.5}\n"
			    "{\"instance\": 1, \"alloc\": {\"B\": {\"ost2\": 1.0}}, \"effective\": "
			    "1.0}\n");
	free(out);
}

/* A policy writing every optional output, and echoing what it was given,
 * so the instance built from JSON is checked too. */
static int echo_create(const qos_params *p, void **st)
{
	*st = (void *)(uintptr_t)p->seed;
	return qos_param_get(p, "bad", 0) != 0 ? -EINVAL : 0;
}
static int echo_decide(void *st, const qos_instance *in, qos_result *res)
{
	for (size_t j = 0; j < in->n_jobs; j++) {
		res->coupons[j] = in->jobs[j].nodes;
		for (size_t o = 0; o < in->n_osts; o++) {
			size_t ix = j * in->n_osts + o;
			res->alloc[ix] = in->active[ix] ? in->usage[ix] + in->period : 0;
			res->records[ix] = in->demand ? in->demand[ix] : -1;
			res->tokens[ix] = (int64_t)in->now;
		}
	}
	res->effective = (double)in->n_jobs + 1000.0 * (double)(uintptr_t)st;
	return 0;
}
static void echo_destroy(void *st) { (void)st; }
static const qos_policy_ops echo = {"echo", "test", echo_create, echo_decide, echo_destroy};

static void test_decide_defaults_and_optional_outputs(void **state)
{
	char err[256] = "";
	int rc;
	/* No "active": every job on every OST; now = k * period; nodes
	 * default 1; demand given. */
	const char *in = "{\"osts\": [{\"id\": \"o\", \"capacity\": 10}],"
			 " \"jobs\": [{\"id\": \"A\", \"nodes\": 3}, {\"id\": \"B\"}],"
			 " \"period\": 0.5,"
			 " \"instances\": [{}, {\"usage\": {\"A\": {\"o\": 2}},"
			 " \"demand\": {\"B\": {\"o\": 7}}}]}";
	char *out = run(in, &echo, NULL, 0, &rc, err, sizeof(err));
	assert_int_equal(rc, 0);
	assert_string_equal(
		out,
		"{\"instance\": 0, \"alloc\": {\"A\": {\"o\": 0.5}, \"B\": {\"o\": 0.5}}, "
		"\"coupons\": {\"A\": 3.0, \"B\": 1.0}, \"records\": {\"A\": {\"o\": -1.0}, \"B\": "
		"{\"o\": -1.0}}, \"tokens\": {\"A\": {\"o\": 0}, \"B\": {\"o\": 0}}, "
		"\"effective\": 2.0}\n"
		"{\"instance\": 1, \"alloc\": {\"A\": {\"o\": 2.5}, \"B\": {\"o\": 0.5}}, "
		"\"coupons\": {\"A\": 3.0, \"B\": 1.0}, \"records\": {\"A\": {\"o\": 0.0}, \"B\": "
		"{\"o\": 7.0}}, \"tokens\": {\"A\": {\"o\": 0}, \"B\": {\"o\": 0}}, "
		"\"effective\": 2.0}\n");
	free(out);
}

static void test_decide_params_merge_and_reject(void **state)
{
	char err[256] = "", key[] = "bad=1";
	qos_param p;
	int rc;
	/* The file's params reach the policy ... */
	const char *in = "{\"osts\": [{\"id\": \"o\", \"capacity\": 1}], \"params\": {\"bad\": 1},"
			 " \"instances\": []}";
	char *out = run(in, &echo, NULL, 0, &rc, err, sizeof(err));
	assert_int_equal(rc, -EINVAL);
	assert_non_null(strstr(err, "rejected the parameters"));
	free(out);
	/* ... and the command line overrides them. */
	p.key = "bad";
	p.value = 0;
	out = run(in, &echo, &p, 1, &rc, err, sizeof(err));
	assert_int_equal(rc, 0);
	assert_string_equal(out, "");
	free(out);
	/* sim-equal knows no parameters at all. */
	assert_int_equal(sim_decide_param_parse(key, &p), 0);
	assert_string_equal(p.key, "bad");
	assert_true(p.value == 1);
	out = run(fig5, &sim_policy_equal, &p, 1, &rc, err, sizeof(err));
	assert_int_equal(rc, -EINVAL);
	free(out);
}

static void test_decide_param_parse(void **state)
{
	char a[] = "tau=0.8", b[] = "tau", c[] = "=1", d[] = "tau=x", e[] = "N=";
	qos_param p;
	assert_int_equal(sim_decide_param_parse(a, &p), 0);
	assert_string_equal(p.key, "tau");
	assert_true(p.value == 0.8);
	assert_int_equal(sim_decide_param_parse(b, &p), -EINVAL);
	assert_int_equal(sim_decide_param_parse(c, &p), -EINVAL);
	assert_int_equal(sim_decide_param_parse(d, &p), -EINVAL);
	assert_int_equal(sim_decide_param_parse(e, &p), -EINVAL);
}

static void test_decide_malformed(void **state)
{
	static const struct {
		const char *in, *msg;
	} cases[] = {
		{"{\"osts\": [", "line 1"},
		{"[]", "top level: expected an object"},
		{"{\"instances\": []}", "osts: expected a non-empty array"},
		{"{\"osts\": [{\"id\": \"o\", \"capacity\": 0}], \"instances\": []}",
		 "osts[0].capacity: must be > 0"},
		{"{\"osts\": [{\"id\": \"o\"}], \"instances\": []}", "osts[0]: missing capacity"},
		{"{\"osts\": [{\"id\": \"o\", \"capacity\": 1}, {\"id\": \"o\", \"capacity\": 1}],"
		 " \"instances\": []}",
		 "osts[1].id: duplicate OST 'o'"},
		{"{\"osts\": [{\"id\": \"o\", \"capacity\": 1}], \"instance\": []}",
		 "top level: unknown key 'instance'"},
		{"{\"osts\": [{\"id\": \"o\", \"capacity\": 1}]}", "instances: expected an array"},
		{"{\"osts\": [{\"id\": \"o\", \"capacity\": 1}], \"jobs\": [{\"id\": \"A\", "
		 "\"nodes\": \"4\"}], \"instances\": []}",
		 "jobs[0].nodes: expected a number"},
		{"{\"osts\": [{\"id\": \"o\", \"capacity\": 1}], \"jobs\": [{\"id\": \"A\"}],"
		 " \"instances\": [{\"active\": {\"B\": [\"o\"]}}]}",
		 "instances[0].active: unknown job 'B'"},
		{"{\"osts\": [{\"id\": \"o\", \"capacity\": 1}], \"jobs\": [{\"id\": \"A\"}],"
		 " \"instances\": [{\"active\": {\"A\": [\"x\"]}}]}",
		 "instances[0].active.A[0]: unknown OST 'x'"},
		{"{\"osts\": [{\"id\": \"o\", \"capacity\": 1}], \"jobs\": [{\"id\": \"A\"}],"
		 " \"instances\": [{}, {\"usage\": {\"A\": {\"o\": -1}}}]}",
		 "instances[1].usage.A.o: expected a number >= 0"},
		{"{\"osts\": [{\"id\": \"o\", \"capacity\": 1}], \"params\": {\"tau\": \"x\"},"
		 " \"instances\": []}",
		 "params.tau: expected a number"},
		{"{\"osts\": [{\"id\": \"o\", \"capacity\": 1}], \"period\": 0, \"instances\": []}",
		 "period: must be > 0"},
		{"{\"osts\": [{\"id\": \"o\", \"capacity\": 1}], \"jobs\": [{\"id\": \"A\", "
		 "\"throttle_friendly\": 1}], \"instances\": []}",
		 "jobs[0].throttle_friendly: expected true or false"},
		{"{\"osts\": [{\"id\": \"o\", \"capacity\": 1}], \"instances\": [{\"when\": 1}]}",
		 "instances[0]: unknown key 'when'"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		sim_decide *d = (sim_decide *)&d;
		char err[256] = "";
		int rc = sim_decide_parse(cases[i].in, strlen(cases[i].in), &d, err, sizeof(err));
		if (rc != -EINVAL || !strstr(err, cases[i].msg))
			fail_msg("case %zu: rc %d, err '%s', want '%s'", i, rc, err, cases[i].msg);
		assert_null(d);
	}
}

static void test_decide_count_and_seed(void **state)
{
	sim_decide *d = NULL;
	char err[128], *buf = NULL;
	size_t len = 0;
	const char *in = "{\"osts\": [{\"id\": \"o\", \"capacity\": 1}], \"seed\": 7,"
			 " \"instances\": [{}]}";
	assert_int_equal(sim_decide_parse(fig5, strlen(fig5), &d, err, sizeof(err)), 0);
	assert_int_equal(sim_decide_count(d), 2);
	sim_decide_free(d);
	/* The file's seed reaches the policy; --seed replaces it. */
	assert_int_equal(sim_decide_parse(in, strlen(in), &d, err, sizeof(err)), 0);
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(sim_decide_run(d, &echo, NULL, 0, f, err, sizeof(err)), 0);
	sim_decide_set_seed(d, 2);
	assert_int_equal(sim_decide_run(d, &echo, NULL, 0, f, err, sizeof(err)), 0);
	fclose(f);
	assert_string_equal(buf, "{\"instance\": 0, \"alloc\": {}, \"effective\": 7000.0}\n"
				 "{\"instance\": 0, \"alloc\": {}, \"effective\": 2000.0}\n");
	free(buf);
	sim_decide_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decide_equal_share_lines),
		cmocka_unit_test(test_decide_defaults_and_optional_outputs),
		cmocka_unit_test(test_decide_params_merge_and_reject),
		cmocka_unit_test(test_decide_param_parse),
		cmocka_unit_test(test_decide_malformed),
		cmocka_unit_test(test_decide_count_and_seed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
