/* test_mds_jobs.c — the job registry: register, update, end, list,
 * permissions, automatic entries and their bound and idle expiry, and
 * everything surviving a close/reopen of the MDS environment. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/log.h"
#include "mds/jobs.h"
#include "mds/ns.h"

#define SEC 1000000000ll
#define HOUR (3600 * SEC)
#define DAY (24 * HOUR)

struct fx {
	char dir[64], db[96];
	mds_ns *ns;
	mds_jobs *jobs;
	mds_jobs_opts jo;
	int64_t now;
};

static int64_t fake_clock(void *arg)
{
	return ((struct fx *)arg)->now;
}

static void fx_open(struct fx *f)
{
	mds_ns_opts no = { .path = f->db, .mapsize = 1ull << 28 };

	assert_int_equal(mds_ns_open(&no, &f->ns), 0);
	assert_int_equal(mds_jobs_open(f->ns, &f->jo, &f->jobs), 0);
}

static void fx_close(struct fx *f)
{
	mds_jobs_close(f->jobs);
	mds_ns_close(f->ns);
	f->jobs = NULL;
	f->ns = NULL;
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	pfs_log_init("test", PFS_LOG_ERR);
	strcpy(f->dir, "/tmp/test_mds_jobs.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->db, sizeof(f->db), "%s/db", f->dir);
	f->now = 1700000000ll * SEC;
	f->jo = (mds_jobs_opts){ .max_auto = 4, .max_registered = 3, .clock_ns = fake_clock,
				 .clock_arg = f };
	fx_open(f);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char p[160];

	fx_close(f);
	const char *files[] = { "data.mdb", "lock.mdb", "mds.lock" };
	for (size_t i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s/%s", f->db, files[i]);
		unlink(p);
	}
	rmdir(f->db);
	rmdir(f->dir);
	free(f);
	return 0;
}

static pfs_job_info job(const char *id, uint32_t uid, uint32_t nodes, double prio)
{
	pfs_job_info j;

	memset(&j, 0, sizeof(j));
	snprintf(j.job, sizeof(j.job), "%s", id);
	j.uid = uid;
	j.nodes = nodes;
	j.priority = prio;
	j.throttle_friendly = 1;
	return j;
}

static void test_jobs_register_update_end_list(void **state)
{
	struct fx *f = *state;
	pfs_job_info in = job("slurm.42", 1000, 16, 2.0), out, *v = NULL;
	uint32_t n = 0;

	assert_int_equal(mds_jobs_get(f->jobs, "slurm.42", &out), -ENOENT);
	in.limit = 50e6;
	in.start_ns = 5;   /* the MDS's to set */
	in.state = PFS_JOB_ENDED;
	assert_int_equal(mds_jobs_register(f->jobs, 0, &in), 0);
	assert_int_equal(mds_jobs_get(f->jobs, "slurm.42", &out), 0);
	assert_int_equal(out.uid, 1000);
	assert_int_equal(out.nodes, 16);
	assert_true(out.priority == 2.0);
	assert_true(out.limit == 50e6);
	assert_int_equal(out.registered, 1);
	assert_int_equal(out.state, PFS_JOB_RUNNING);
	assert_true(out.start_ns == f->now);
	assert_true(out.end_ns == 0);

	/* update by the owner keeps the start */
	f->now += 10 * SEC;
	in.nodes = 32;
	in.throttle_friendly = 0;
	assert_int_equal(mds_jobs_register(f->jobs, 1000, &in), 0);
	assert_int_equal(mds_jobs_get(f->jobs, "slurm.42", &out), 0);
	assert_int_equal(out.nodes, 32);
	assert_int_equal(out.throttle_friendly, 0);
	assert_true(out.start_ns == f->now - 10 * SEC);

	assert_int_equal(mds_jobs_register(f->jobs, 0, &(pfs_job_info){ .job = "b", .uid = 7,
				.nodes = 1, .priority = 1 }), 0);
	assert_int_equal(mds_jobs_list(f->jobs, 0, &v, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(v[0].job, "b");
	assert_string_equal(v[1].job, "slurm.42");
	free(v);

	f->now += SEC;
	assert_int_equal(mds_jobs_end(f->jobs, 1000, "slurm.42"), 0);
	assert_int_equal(mds_jobs_end(f->jobs, 1000, "slurm.42"), 0); /* again: no change */
	assert_int_equal(mds_jobs_end(f->jobs, 0, "nosuch"), -ENOENT);
	assert_int_equal(mds_jobs_get(f->jobs, "slurm.42", &out), 0);
	assert_int_equal(out.state, PFS_JOB_ENDED);
	assert_true(out.end_ns == f->now);
	assert_int_equal(mds_jobs_list(f->jobs, 0, &v, &n), 0);
	assert_int_equal(n, 1);
	free(v);
	assert_int_equal(mds_jobs_list(f->jobs, 1, &v, &n), 0);
	assert_int_equal(n, 2);
	free(v);

	/* registering an ended job starts it again */
	f->now += SEC;
	assert_int_equal(mds_jobs_register(f->jobs, 1000, &in), 0);
	assert_int_equal(mds_jobs_get(f->jobs, "slurm.42", &out), 0);
	assert_int_equal(out.state, PFS_JOB_RUNNING);
	assert_true(out.start_ns == f->now);
}

static void test_jobs_permissions_and_input(void **state)
{
	struct fx *f = *state;
	pfs_job_info in = job("j1", 1000, 4, 1.0), bad;

	/* a user registers only its own jobs */
	assert_int_equal(mds_jobs_register(f->jobs, 1001, &in), -EPERM);
	assert_int_equal(mds_jobs_register(f->jobs, 1000, &in), 0);
	/* nobody else updates or ends it; root does */
	in.uid = 1001;
	assert_int_equal(mds_jobs_register(f->jobs, 1001, &in), -EPERM);
	assert_int_equal(mds_jobs_end(f->jobs, 1001, "j1"), -EPERM);
	assert_int_equal(mds_jobs_register(f->jobs, 0, &in), 0); /* root gives it away */
	assert_int_equal(mds_jobs_end(f->jobs, 1000, "j1"), -EPERM);
	assert_int_equal(mds_jobs_end(f->jobs, 1001, "j1"), 0);

	bad = job("", 0, 1, 1);
	assert_int_equal(mds_jobs_register(f->jobs, 0, &bad), -EINVAL);
	bad = job("x", 0, 0, 1);
	assert_int_equal(mds_jobs_register(f->jobs, 0, &bad), -EINVAL);
	bad = job("x", 0, MDS_JOB_NODES_MAX + 1, 1);
	assert_int_equal(mds_jobs_register(f->jobs, 0, &bad), -EINVAL);
	bad = job("x", 0, 1, 0);
	assert_int_equal(mds_jobs_register(f->jobs, 0, &bad), -EINVAL);
	bad = job("x", 0, 1, NAN);
	assert_int_equal(mds_jobs_register(f->jobs, 0, &bad), -EINVAL);
	bad = job("x", 0, 1, 1);
	bad.limit = -1;
	assert_int_equal(mds_jobs_register(f->jobs, 0, &bad), -EINVAL);
	bad.limit = INFINITY;
	assert_int_equal(mds_jobs_register(f->jobs, 0, &bad), -EINVAL);
	bad = job("x", MDS_JOB_UID_UNKNOWN, 1, 1);
	assert_int_equal(mds_jobs_register(f->jobs, 0, &bad), -EINVAL);
	bad = job("x", 0, 1, 1);
	memset(bad.job, 'a', PFS_JOBID_MAX + 1);   /* not NUL-terminated within 32 */
	assert_int_equal(mds_jobs_register(f->jobs, 0, &bad), -EINVAL);
	assert_int_equal(mds_jobs_seen(f->jobs, bad.job, 0), -EINVAL);

	/* the registered cap (3 in this fixture) */
	assert_int_equal(mds_jobs_register(f->jobs, 0, &(pfs_job_info){ .job = "r2", .nodes = 1,
				.priority = 1 }), 0);
	assert_int_equal(mds_jobs_register(f->jobs, 0, &(pfs_job_info){ .job = "r3", .nodes = 1,
				.priority = 1 }), 0);
	assert_int_equal(mds_jobs_register(f->jobs, 0, &(pfs_job_info){ .job = "r4", .nodes = 1,
				.priority = 1 }), -ENOSPC);
	/* updating one of them is not a new entry */
	assert_int_equal(mds_jobs_register(f->jobs, 0, &(pfs_job_info){ .job = "r3", .nodes = 2,
				.priority = 1 }), 0);
}

static void test_jobs_auto_entries_bounded(void **state)
{
	struct fx *f = *state;
	pfs_job_info out, in;
	size_t total, aut, forgot;

	assert_int_equal(mds_jobs_seen(f->jobs, "", 1000), 0); /* ignored */
	assert_int_equal(mds_jobs_seen(f->jobs, "a1", 1000), 0);
	assert_int_equal(mds_jobs_get(f->jobs, "a1", &out), 0);
	assert_int_equal(out.registered, 0);
	assert_int_equal(out.nodes, 1);
	assert_true(out.priority == 1.0);
	assert_int_equal(out.throttle_friendly, 1);
	assert_int_equal(out.uid, 1000);
	/* first seen in OSS statistics: owner unknown until a request tells */
	assert_int_equal(mds_jobs_seen(f->jobs, "a2", MDS_JOB_UID_UNKNOWN), 0);
	assert_int_equal(mds_jobs_get(f->jobs, "a2", &out), 0);
	assert_int_equal(out.uid, MDS_JOB_UID_UNKNOWN);
	assert_int_equal(mds_jobs_end(f->jobs, MDS_JOB_UID_UNKNOWN, "a2"), -EPERM);
	assert_int_equal(mds_jobs_seen(f->jobs, "a2", 1002), 0);
	assert_int_equal(mds_jobs_get(f->jobs, "a2", &out), 0);
	assert_int_equal(out.uid, 1002);
	assert_int_equal(mds_jobs_seen(f->jobs, "a3", 1), 0);
	assert_int_equal(mds_jobs_seen(f->jobs, "a4", 1), 0);
	/* full: a fifth id is not recorded */
	assert_int_equal(mds_jobs_seen(f->jobs, "a5", 1), -ENOSPC);
	assert_int_equal(mds_jobs_get(f->jobs, "a5", &out), -ENOENT);
	mds_jobs_count(f->jobs, &total, &aut);
	assert_int_equal(total, 4);
	assert_int_equal(aut, 4);

	/* registering an automatic entry turns it into a registered one and
	 * frees an automatic slot */
	in = job("a4", 1, 8, 1);
	assert_int_equal(mds_jobs_register(f->jobs, 2, &(pfs_job_info){ .job = "a4", .uid = 2,
				.nodes = 1, .priority = 1 }), -EPERM);
	assert_int_equal(mds_jobs_register(f->jobs, 1, &in), 0);
	mds_jobs_count(f->jobs, &total, &aut);
	assert_int_equal(aut, 3);
	assert_int_equal(mds_jobs_seen(f->jobs, "a5", 1), 0);

	/* idle for a day: forgotten; a job seen meanwhile stays, so does a
	 * registered one */
	f->now += 12 * HOUR;
	assert_int_equal(mds_jobs_seen(f->jobs, "a1", 1000), 0);
	f->now += 12 * HOUR + SEC;
	assert_int_equal(mds_jobs_prune(f->jobs, &forgot), 0);
	assert_int_equal(forgot, 3);
	assert_int_equal(mds_jobs_get(f->jobs, "a1", &out), 0);
	assert_int_equal(mds_jobs_get(f->jobs, "a2", &out), -ENOENT);
	assert_int_equal(mds_jobs_get(f->jobs, "a4", &out), 0);
	mds_jobs_count(f->jobs, &total, &aut);
	assert_int_equal(total, 2);
	assert_int_equal(aut, 1);

	/* when full, a new id first makes room by forgetting idle entries */
	assert_int_equal(mds_jobs_seen(f->jobs, "b1", 1), 0);
	assert_int_equal(mds_jobs_seen(f->jobs, "b2", 1), 0);
	assert_int_equal(mds_jobs_seen(f->jobs, "b3", 1), 0);
	assert_int_equal(mds_jobs_seen(f->jobs, "b4", 1), -ENOSPC);
	f->now += DAY + SEC;
	assert_int_equal(mds_jobs_seen(f->jobs, "b4", 1), 0);
	assert_int_equal(mds_jobs_get(f->jobs, "b1", &out), -ENOENT);

	/* an ended job goes a week after its end */
	assert_int_equal(mds_jobs_end(f->jobs, 1, "a4"), 0);
	f->now += 6 * DAY;
	assert_int_equal(mds_jobs_prune(f->jobs, NULL), 0);
	assert_int_equal(mds_jobs_get(f->jobs, "a4", &out), 0);
	f->now += DAY + SEC;
	assert_int_equal(mds_jobs_prune(f->jobs, NULL), 0);
	assert_int_equal(mds_jobs_get(f->jobs, "a4", &out), -ENOENT);
}

static void test_jobs_persisted_across_reopen(void **state)
{
	struct fx *f = *state;
	pfs_job_info in = job("keep", 1000, 64, 3.0), out, *v = NULL;
	size_t forgot;
	uint32_t n;

	in.limit = 1e6;
	in.throttle_friendly = 0;
	assert_int_equal(mds_jobs_register(f->jobs, 1000, &in), 0);
	assert_int_equal(mds_jobs_register(f->jobs, 0, &(pfs_job_info){ .job = "gone", .nodes = 1,
				.priority = 1 }), 0);
	assert_int_equal(mds_jobs_end(f->jobs, 0, "gone"), 0);
	assert_int_equal(mds_jobs_seen(f->jobs, "auto", MDS_JOB_UID_UNKNOWN), 0);
	assert_int_equal(mds_jobs_seen(f->jobs, "auto", 1234), 0); /* owner learnt */
	/* seen again 20 h later: written back at close (moved > 1 h) */
	f->now += 20 * HOUR;
	assert_int_equal(mds_jobs_seen(f->jobs, "auto", 1234), 0);

	fx_close(f);
	fx_open(f);

	assert_int_equal(mds_jobs_get(f->jobs, "keep", &out), 0);
	assert_int_equal(out.uid, 1000);
	assert_int_equal(out.nodes, 64);
	assert_true(out.priority == 3.0);
	assert_true(out.limit == 1e6);
	assert_int_equal(out.throttle_friendly, 0);
	assert_int_equal(out.registered, 1);
	assert_true(out.start_ns == f->now - 20 * HOUR);
	assert_int_equal(mds_jobs_get(f->jobs, "gone", &out), 0);
	assert_int_equal(out.state, PFS_JOB_ENDED);
	assert_int_equal(mds_jobs_get(f->jobs, "auto", &out), 0);
	assert_int_equal(out.registered, 0);
	assert_int_equal(out.uid, 1234);
	assert_int_equal(mds_jobs_list(f->jobs, 1, &v, &n), 0);
	assert_int_equal(n, 3);
	free(v);
	/* the stored seen time is the later one: not idle 5 h after it */
	f->now += 5 * HOUR;
	assert_int_equal(mds_jobs_prune(f->jobs, &forgot), 0);
	assert_int_equal(forgot, 0);
	f->now += 20 * HOUR;
	assert_int_equal(mds_jobs_prune(f->jobs, &forgot), 0);
	assert_int_equal(forgot, 1);
	/* the forgetting is persistent too */
	fx_close(f);
	fx_open(f);
	assert_int_equal(mds_jobs_get(f->jobs, "auto", &out), -ENOENT);
	assert_int_equal(mds_jobs_get(f->jobs, "keep", &out), 0);
}

/* A damaged record is skipped at open, the rest loads. */
static void test_jobs_damaged_record_skipped(void **state)
{
	struct fx *f = *state;
	pfs_job_info out;
	mds_kv_txn *t;

	assert_int_equal(mds_jobs_register(f->jobs, 0, &(pfs_job_info){ .job = "ok", .nodes = 2,
				.priority = 1 }), 0);
	assert_int_equal(mds_ns_kv_begin(f->ns, 1, &t), 0);
	assert_int_equal(mds_ns_kv_put(t, MDS_KV_JOBS, "bad", 3, "xyz", 3), 0);
	assert_int_equal(mds_ns_kv_commit(t), 0);
	fx_close(f);
	fx_open(f);
	assert_int_equal(mds_jobs_get(f->jobs, "ok", &out), 0);
	assert_int_equal(out.nodes, 2);
	assert_int_equal(mds_jobs_get(f->jobs, "bad", &out), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_jobs_register_update_end_list, setup, teardown),
		cmocka_unit_test_setup_teardown(test_jobs_permissions_and_input, setup, teardown),
		cmocka_unit_test_setup_teardown(test_jobs_auto_entries_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_jobs_persisted_across_reopen, setup, teardown),
		cmocka_unit_test_setup_teardown(test_jobs_damaged_record_skipped, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
