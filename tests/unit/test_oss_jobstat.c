/* test_oss_jobstat.c — the per-job statistics table of one OST: a full
 * table makes room by dropping the least recently active idle job (never
 * one with requests queued), and a flood of random job ids stays within
 * the bound while a real new job still gets an entry. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "oss/jobstat.h"

static oss_jobstat *add(oss_jobstats *t, const char *id, uint64_t now, int serve)
{
	oss_jobstat *j = oss_jobstats_get(t, id);

	assert_non_null(j);
	oss_jobstat_arrive(j, 4096, now);
	if (serve)
		oss_jobstat_serve(j, OSS_OPC_READ, 4096, 1, 0, now);
	return j;
}

static int has(oss_jobstats *t, const char *id)
{
	oss_job_snap *v;
	size_t n;
	int found = 0;

	assert_int_equal(oss_jobstats_snapshot(t, OSS_CLOCK_TOTAL, 0, &v, &n), 0);
	for (size_t i = 0; i < n; i++)
		found |= !strcmp(v[i].job, id);
	free(v);
	return found;
}

static void test_jobstat_full_evicts_oldest_idle(void **state)
{
	oss_jobstats *t;
	oss_jobstat *q1, *q2;

	assert_int_equal(oss_jobstats_create(4, &t), 0);
	q1 = add(t, "queued1", 10, 0);
	add(t, "idle-old", 20, 1);
	q2 = add(t, "queued2", 5, 0);  /* oldest, but has a request queued */
	add(t, "idle-new", 30, 1);
	assert_int_equal(oss_jobstats_count(t), 4);
	add(t, "newcomer", 40, 1);
	assert_int_equal(oss_jobstats_count(t), 4);
	assert_int_equal(oss_jobstats_evicted(t), 1);
	assert_false(has(t, "idle-old"));
	assert_true(has(t, "idle-new"));
	assert_true(has(t, "queued1"));
	assert_true(has(t, "queued2"));
	assert_true(has(t, "newcomer"));
	/* Every job busy: no room, the new one is refused. */
	assert_non_null(oss_jobstats_get(t, "idle-new"));
	oss_jobstat_arrive(oss_jobstats_get(t, "idle-new"), 1, 50);
	oss_jobstat_arrive(oss_jobstats_get(t, "newcomer"), 1, 50);
	assert_null(oss_jobstats_get(t, "refused"));
	assert_int_equal(oss_jobstats_count(t), 4);
	(void)q1;
	(void)q2;
	oss_jobstats_destroy(t);
}

static void test_jobstat_flood_bounded(void **state)
{
	oss_jobstats *t;
	char id[64];
	uint64_t now = 1;

	assert_int_equal(oss_jobstats_create(256, &t), 0);
	add(t, "real-before", now++, 1);
	for (int i = 0; i < 20000; i++) {
		snprintf(id, sizeof(id), "rnd-%08x", (unsigned)(i * 2654435761u));
		add(t, id, now++, 1);
		assert_true(oss_jobstats_count(t) <= 256);
	}
	/* A job that starts after the flood is served, not refused. */
	add(t, "real-after", now++, 1);
	assert_true(has(t, "real-after"));
	assert_int_equal(oss_jobstats_count(t), 256);
	assert_true(oss_jobstats_evicted(t) >= 20000 - 256);
	oss_jobstats_destroy(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jobstat_full_evicts_oldest_idle),
		cmocka_unit_test(test_jobstat_flood_bounded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
