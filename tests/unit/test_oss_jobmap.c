/* test_oss_jobmap.c — the job-id hash map: insert, find, remove, iteration
 * that visits every node once even when the current node is removed, ids
 * truncated to PFS_JOBID_MAX, and the RCC client table's sweep. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "oss/jobmap.h"
#include "oss/rcc_srv.h"

typedef struct ent {
	oss_jobmap_node node;
	int value;
} ent;

static void free_ent(oss_jobmap_node *n) { free(n); }

static void test_jobmap_basic(void **state)
{
	oss_jobmap m;
	oss_jobmap_iter it = { 0 };
	oss_jobmap_node *n;
	char id[64];
	int seen[500] = { 0 }, count = 0;

	assert_int_equal(oss_jobmap_init(&m, 8), 0);
	assert_true(m.mask + 1 >= 16);
	for (int i = 0; i < 500; i++) {
		ent *e = calloc(1, sizeof(*e));
		snprintf(id, sizeof(id), "job%d", i);
		oss_jobmap_set_id(&e->node, id);
		e->value = i;
		assert_null(oss_jobmap_find(&m, id));
		oss_jobmap_insert(&m, &e->node);
	}
	assert_int_equal(m.n, 500);
	assert_int_equal(((ent *)oss_jobmap_find(&m, "job321"))->value, 321);
	/* Remove every odd entry while iterating; every node is seen once. */
	while ((n = oss_jobmap_next(&m, &it))) {
		ent *e = (ent *)n;
		assert_int_equal(seen[e->value], 0);
		seen[e->value] = 1;
		count++;
		if (e->value % 2) {
			oss_jobmap_remove(&m, n);
			free(e);
		}
	}
	assert_int_equal(count, 500);
	assert_null(oss_jobmap_next(&m, &it)); /* stays at the end */
	assert_int_equal(m.n, 250);
	assert_null(oss_jobmap_find(&m, "job321"));
	assert_non_null(oss_jobmap_find(&m, "job320"));
	/* Ids longer than the protocol's are cut, as the header cuts them. */
	{
		ent *e = calloc(1, sizeof(*e));
		memset(id, 'x', 50);
		id[50] = '\0';
		oss_jobmap_set_id(&e->node, id);
		assert_int_equal(strlen(e->node.id), PFS_JOBID_MAX);
		oss_jobmap_insert(&m, &e->node);
		id[PFS_JOBID_MAX] = '\0';
		assert_ptr_equal(oss_jobmap_find(&m, id), &e->node);
	}
	oss_jobmap_fini(&m, free_ent);
	oss_jobmap_fini(&m, free_ent); /* twice is harmless */
}

/* RCC clients leave the table once they left C with nothing pending. */
/* Every node is in exactly one bucket chain; indices wrap around. */
static void test_jobmap_buckets(void **state)
{
	oss_jobmap m;
	char id[32];
	size_t total = 0, nb;

	assert_int_equal(oss_jobmap_init(&m, 16), 0);
	nb = oss_jobmap_buckets(&m);
	assert_int_equal(nb, 16);
	for (int i = 0; i < 100; i++) {
		ent *e = calloc(1, sizeof(*e));
		snprintf(id, sizeof(id), "b%d", i);
		oss_jobmap_set_id(&e->node, id);
		oss_jobmap_insert(&m, &e->node);
	}
	for (size_t i = 0; i < nb; i++) {
		assert_ptr_equal(oss_jobmap_bucket(&m, i), oss_jobmap_bucket(&m, i + nb));
		for (oss_jobmap_node *n = oss_jobmap_bucket(&m, i); n; n = n->next) {
			assert_ptr_equal(oss_jobmap_find(&m, n->id), n);
			total++;
		}
	}
	assert_int_equal(total, 100);
	oss_jobmap_fini(&m, free_ent);
}

static void test_rcc_srv_sweep(void **state)
{
	qos_rcc_params p = { .Lmax = 0.1, .STL = 1 };
	oss_rcc_srv *s;
	oss_rcc_cl *a, *b;
	oss_rcc_info info;

	assert_int_equal(oss_rcc_srv_create(&p, 0, 0.0, &s), 0);
	a = oss_rcc_srv_recv(s, 1, 0.0);
	b = oss_rcc_srv_recv(s, 2, 0.0);
	assert_non_null(a);
	assert_non_null(b);
	assert_ptr_equal(oss_rcc_srv_recv(s, 1, 0.1), a); /* same client, same record */
	oss_rcc_srv_info(s, &info);
	assert_int_equal(info.D, 3);
	assert_int_equal(info.C, 2);
	assert_int_equal(info.clients, 2);
	assert_true(oss_rcc_srv_reply(s, a, 0.0, 4, 0.2) >= 1);
	assert_true(oss_rcc_srv_reply(s, a, 0.1, 4, 0.2) >= 1);
	/* Client 1 idle since 0.2; client 2 still has a request pending. */
	oss_rcc_srv_sweep(s, 0.5);
	oss_rcc_srv_info(s, &info);
	assert_int_equal(info.clients, 2); /* within STL */
	oss_rcc_srv_sweep(s, 2.0);
	oss_rcc_srv_info(s, &info);
	assert_int_equal(info.clients, 1);
	assert_int_equal(info.C, 1);
	assert_int_equal(info.D, 1);
	assert_true(oss_rcc_srv_reply(s, b, 0.0, 0, 2.1) >= 1);
	assert_int_equal(oss_rcc_srv_reply(s, NULL, 0.0, 5, 2.1), 0);
	oss_rcc_srv_destroy(s);
	/* Bad parameters. */
	p.Lmax = 0;
	assert_int_equal(oss_rcc_srv_create(&p, 0, 0.0, &s), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jobmap_basic),
		cmocka_unit_test(test_jobmap_buckets),
		cmocka_unit_test(test_rcc_srv_sweep),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
