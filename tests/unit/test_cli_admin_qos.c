/* test_cli_admin_qos.c — pfsadmin's job, jobstats, qos and nrs commands:
 * argument parsing (good and bad), rate/time formatting, and every command
 * against an in-process fake MDS and two fake OSSes (pfs_server on loopback
 * ports chosen at run time; a third OSS address is a closed port).  The
 * fakes answer with canned replies, or with an error status, garbage, a
 * truncated or an overlong reply, and record each request's payload and
 * header (uid/gid, job id) so the tests check what was sent.  The last
 * tests run the pfsadmin binary built next to this test for exit statuses
 * and stderr messages. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>

#include "client/admin_args.h"
#include "client/admin_cmd.h"
#include "client/admin_fmt.h"
#include "client/admin_job.h"
#include "client/admin_nrs.h"
#include "client/admin_qos.h"
#include "client/admin_stats.h"
#include "common/buf.h"
#include "common/msg.h"
#include "common/qosmsg.h"
#include "common/rpc.h"
#include "common/server.h"

/* ---------------------------------------------------------------- args */

static int parse(cli_admin_args *a, char *err, ...)
{
	char *argv[40] = { "pfsadmin" };
	int argc = 1;
	va_list ap;
	char *s;

	va_start(ap, err);
	while ((s = va_arg(ap, char *)) != NULL && argc < 39)
		argv[argc++] = s;
	va_end(ap);
	argv[argc] = NULL;
	return cli_admin_parse_args(argc, argv, a, err, 256);
}

static void test_qos_args_job(void **state)
{
	cli_admin_args a;
	char err[256];

	assert_int_equal(parse(&a, err, "job", "register", "1234", NULL), 0);
	assert_int_equal(a.cmd, CLI_ADMIN_JOB_REGISTER);
	assert_string_equal(a.job, "1234");
	assert_int_equal(a.nodes, 1);
	assert_true(a.priority == 1.0);
	assert_int_equal(a.have_uid, 0);
	assert_true(a.limit == 0);
	assert_int_equal(a.no_throttle, 0);

	assert_int_equal(parse(&a, err, "job", "register", "--nodes", "16", "j.7", "--priority=2.5",
			       "--uid", "1000", "--limit", "100MB/s", "--no-throttle", "--json",
			       NULL), 0);
	assert_string_equal(a.job, "j.7");
	assert_int_equal(a.nodes, 16);
	assert_true(a.priority == 2.5);
	assert_int_equal(a.have_uid, 1);
	assert_int_equal(a.uid, 1000);
	assert_true(a.limit == 1e8);
	assert_int_equal(a.no_throttle, 1);
	assert_int_equal(a.json, 1);

	assert_int_equal(parse(&a, err, "job", "register", "x", "--uid=0", NULL), 0);
	assert_int_equal(a.have_uid, 1);
	assert_int_equal(a.uid, 0);

	assert_int_equal(parse(&a, err, "job", "end", "1234", NULL), 0);
	assert_int_equal(a.cmd, CLI_ADMIN_JOB_END);
	assert_string_equal(a.job, "1234");
	assert_int_equal(parse(&a, err, "job", "list", NULL), 0);
	assert_int_equal(a.cmd, CLI_ADMIN_JOB_LIST);
	assert_int_equal(a.all, 0);
	assert_int_equal(parse(&a, err, "--mds", "h:1", "job", "list", "--all", NULL), 0);
	assert_int_equal(a.all, 1);
	assert_string_equal(a.mds, "h:1");
	assert_int_equal(parse(&a, err, "job", "show", "--", "-odd", NULL), 0);
	assert_int_equal(a.cmd, CLI_ADMIN_JOB_SHOW);
	assert_string_equal(a.job, "-odd");
	/* 32 bytes: the header's whole job id field */
	assert_int_equal(parse(&a, err, "job", "show", "abcdefghijklmnopqrstuvwxyz012345", NULL),
			 0);
	assert_int_equal(parse(&a, err, "job", "list", "--help", NULL), 0);
	assert_int_equal(a.cmd, CLI_ADMIN_HELP);
}

static void test_qos_args_other(void **state)
{
	cli_admin_args a;
	char err[256];

	assert_int_equal(parse(&a, err, "jobstats", NULL), 0);
	assert_int_equal(a.cmd, CLI_ADMIN_JOBSTATS);
	assert_null(a.job);
	assert_true(a.watch_s == 0);
	assert_int_equal(a.watch_count, 0);
	assert_int_equal(parse(&a, err, "jobstats", "--job", "j1", "--watch", "0.5", "--count=3",
			       NULL), 0);
	assert_string_equal(a.job, "j1");
	assert_true(a.watch_s == 0.5);
	assert_int_equal(a.watch_count, 3);

	assert_int_equal(parse(&a, err, "qos", "show", NULL), 0);
	assert_int_equal(a.cmd, CLI_ADMIN_QOS_SHOW);
	assert_null(a.job);
	assert_int_equal(parse(&a, err, "qos", "show", "--job=j2", NULL), 0);
	assert_string_equal(a.job, "j2");

	assert_int_equal(parse(&a, err, "qos", "policy", "set", "gift", "B_thres=0.3", "tau=0.8",
			       NULL), 0);
	assert_int_equal(a.cmd, CLI_ADMIN_QOS_POLICY_SET);
	assert_string_equal(a.policy, "gift");
	assert_int_equal(a.nparams, 2);
	assert_string_equal(a.params[0].key, "B_thres");
	assert_true(a.params[0].value == 0.3);
	assert_string_equal(a.params[1].key, "tau");
	assert_true(a.params[1].value == 0.8);
	/* parameters alone keep the policy: "" on the wire */
	assert_int_equal(parse(&a, err, "qos", "policy", "set", "interval=5", NULL), 0);
	assert_string_equal(a.policy, "");
	assert_int_equal(a.nparams, 1);
	assert_true(a.params[0].value == 5);
	assert_int_equal(parse(&a, err, "qos", "policy", "set", "static", NULL), 0);
	assert_string_equal(a.policy, "static");
	assert_int_equal(a.nparams, 0);
	assert_int_equal(parse(&a, err, "qos", "policy", "set", "gift", "x=-1e-3", NULL), 0);
	assert_true(a.params[0].value == -1e-3);

	assert_int_equal(parse(&a, err, "qos", "policy", "show", NULL), 0);
	assert_int_equal(a.cmd, CLI_ADMIN_QOS_POLICY_SHOW);
	assert_int_equal(parse(&a, err, "qos", "coupons", "--job", "j1", NULL), 0);
	assert_int_equal(a.cmd, CLI_ADMIN_QOS_COUPONS);
	assert_string_equal(a.job, "j1");
	assert_int_equal(parse(&a, err, "qos", "regret", NULL), 0);
	assert_int_equal(a.cmd, CLI_ADMIN_QOS_REGRET);

	assert_int_equal(parse(&a, err, "nrs", "tbf", "rule", "start", "r1",
			       "jobid={j1 j2} opcode={write} rate=100MB/s", "--ost", "7", NULL), 0);
	assert_int_equal(a.cmd, CLI_ADMIN_NRS_RULE);
	assert_int_equal(a.nrs_verb, PFS_NRS_START);
	assert_string_equal(a.rule, "r1");
	assert_string_equal(a.expr, "jobid={j1 j2} opcode={write} rate=100MB/s");
	assert_int_equal(a.have_ost, 1);
	assert_int_equal(a.ost, 7);
	assert_int_equal(parse(&a, err, "nrs", "tbf", "rule", "change", "r1", "rate=1G", NULL), 0);
	assert_int_equal(a.nrs_verb, PFS_NRS_CHANGE);
	assert_int_equal(a.have_ost, 0);
	assert_int_equal(parse(&a, err, "nrs", "tbf", "rule", "stop", "r1", NULL), 0);
	assert_int_equal(a.nrs_verb, PFS_NRS_STOP);
	assert_null(a.expr);
	assert_int_equal(parse(&a, err, "nrs", "tbf", "rule", "list", NULL), 0);
	assert_int_equal(a.nrs_verb, PFS_NRS_LIST);
	assert_null(a.rule);
}

static void test_qos_args_bad(void **state)
{
	cli_admin_args a;
	char err[256];

#define BAD(substr, ...) do { \
		assert_int_equal(parse(&a, err, __VA_ARGS__, NULL), -EINVAL); \
		if (!strstr(err, substr)) \
			fail_msg("error '%s' lacks '%s'", err, substr); \
	} while (0)

	BAD("'job' needs a subcommand", "job");
	BAD("'job' needs a subcommand", "job", "frob");
	BAD("job register needs a JOBID", "job", "register");
	BAD("unexpected argument 'b'", "job", "end", "a", "b");
	BAD("must be 1..32 bytes", "job", "show", "abcdefghijklmnopqrstuvwxyz0123456");
	BAD("blank or control", "job", "register", "a b");
	BAD("--nodes '0' must be a whole number 1..", "job", "register", "j", "--nodes", "0");
	BAD("--nodes 'x'", "job", "register", "j", "--nodes=x");
	BAD("--nodes '-3'", "job", "register", "j", "--nodes", "-3");
	BAD("needs a value", "job", "register", "j", "--nodes");
	BAD("--priority '0' must be a number above 0", "job", "register", "j", "--priority", "0");
	BAD("--priority 'nan'", "job", "register", "j", "--priority", "nan");
	BAD("--priority 'inf'", "job", "register", "j", "--priority", "inf");
	BAD("--uid '-1'", "job", "register", "j", "--uid", "-1");
	BAD("--uid '4294967295'", "job", "register", "j", "--uid", "4294967295");
	BAD("--limit 'fast' is not a rate", "job", "register", "j", "--limit", "fast");
	BAD("--limit '-1MB/s'", "job", "register", "j", "--limit", "-1MB/s");
	BAD("unknown option '--all' for job register", "job", "register", "j", "--all");
	BAD("unknown option '--nodes' for job end", "job", "end", "j", "--nodes", "2");
	BAD("unknown option '--job' for job list", "job", "list", "--job", "j");
	BAD("unknown option '--no-throttle=1'", "job", "register", "j", "--no-throttle=1");
	BAD("--count needs --watch", "jobstats", "--count", "3");
	BAD("--watch '0'", "jobstats", "--watch", "0");
	BAD("--watch '-1'", "jobstats", "--watch", "-1");
	BAD("--watch '100000'", "jobstats", "--watch", "100000");
	BAD("--count '0'", "jobstats", "--watch", "1", "--count", "0");
	BAD("unexpected argument 'j1'", "jobstats", "j1");
	BAD("'qos' needs a subcommand", "qos");
	BAD("'qos policy' needs a subcommand: set, show", "qos", "policy");
	BAD("qos policy set needs a policy NAME", "qos", "policy", "set");
	BAD("'B_thres' is not KEY=VALUE", "qos", "policy", "set", "gift", "B_thres");
	BAD("value of 'tau=high' is not a number", "qos", "policy", "set", "gift", "tau=high");
	BAD("value of 'tau=' is not a number", "qos", "policy", "set", "tau=");
	BAD("value of 'tau=inf'", "qos", "policy", "set", "tau=inf");
	BAD("parameter '' must be", "qos", "policy", "set", "=3");
	BAD("given twice", "qos", "policy", "set", "tau=1", "tau=2");
	BAD("policy 'gi ft' may only have", "qos", "policy", "set", "gi ft");
	BAD("policy 'abcdefghijabcdefghijabcdefghijabc' must be 1..31", "qos", "policy", "set",
	    "abcdefghijabcdefghijabcdefghijabc");
	BAD("at most 16 parameters", "qos", "policy", "set", "a=1", "b=1", "c=1", "d=1", "e=1",
	    "f=1", "g=1", "h=1", "i=1", "j=1", "k=1", "l=1", "m=1", "n=1", "o=1", "p=1", "q=1");
	BAD("unexpected argument", "qos", "policy", "show", "x");
	BAD("unknown option '--job' for qos regret", "qos", "regret", "--job", "j");
	BAD("'nrs' needs", "nrs");
	BAD("'nrs tbf' needs a subcommand: rule", "nrs", "tbf", "rules", "list");
	BAD("'nrs tbf rule' needs a subcommand: start, change, stop, list", "nrs", "tbf", "rule",
	    "begin");
	BAD("start needs NAME and EXPR", "nrs", "tbf", "rule", "start", "r1");
	BAD("stop needs NAME", "nrs", "tbf", "rule", "stop");
	BAD("list needs no arguments", "nrs", "tbf", "rule", "list", "r1");
	BAD("rule name 'r 1'", "nrs", "tbf", "rule", "stop", "r 1");
	BAD("rule text must be 1..255", "nrs", "tbf", "rule", "start", "r1", "");
	BAD("--ost '4294967295'", "nrs", "tbf", "rule", "list", "--ost", "4294967295");
	BAD("unknown option '--job' for nrs", "nrs", "tbf", "rule", "list", "--job", "x");
#undef BAD
	{
		char big[300];

		memset(big, 'r', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		assert_int_equal(parse(&a, err, "nrs", "tbf", "rule", "start", "r", big, NULL),
				 -EINVAL);
		assert_non_null(strstr(err, "1..255"));
	}
}

static void test_qos_parse_rate(void **state)
{
	static const struct { const char *s; double v; } good[] = {
		{ "0", 0 }, { "100", 100 }, { "100MB/s", 1e8 }, { "1.5G", 1.5e9 },
		{ "512K", 512e3 }, { "2k/s", 2e3 }, { "1MiB/s", 1048576 }, { "3Gi", 3221225472.0 },
		{ "10B", 10 }, { "10/s", 10 }, { ".5M", 5e5 }, { "1T", 1e12 },
	};
	static const char *const bad[] = {
		"", "x", "-1", "+5", " 5", "5 ", "1X", "1MBs", "1M/", "inf", "nan", "0x10",
		"1e20", "1Mi/sec",
	};
	double v;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		v = -1;
		if (cli_admin_parse_rate(good[i].s, &v) != 0 || fabs(v - good[i].v) > 1e-6)
			fail_msg("rate '%s': got %g, want %g", good[i].s, v, good[i].v);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (cli_admin_parse_rate(bad[i], &v) != -EINVAL)
			fail_msg("rate '%s' was accepted", bad[i]);
}

static void test_qos_fmt(void **state)
{
	char b[40];

	assert_string_equal(cli_fmt_rate(0, b, sizeof(b)), "0B/s");
	assert_string_equal(cli_fmt_rate(999, b, sizeof(b)), "999B/s");
	assert_string_equal(cli_fmt_rate(999.96, b, sizeof(b)), "1.0KB/s");
	assert_string_equal(cli_fmt_rate(1e8, b, sizeof(b)), "100.0MB/s");
	assert_string_equal(cli_fmt_rate(1.5e9, b, sizeof(b)), "1.5GB/s");
	assert_string_equal(cli_fmt_rate(999.96e6, b, sizeof(b)), "1.0GB/s");
	assert_string_equal(cli_fmt_rate(27777.78, b, sizeof(b)), "27.8KB/s");
	assert_string_equal(cli_fmt_rate(-1, b, sizeof(b)), "unlimited");
	assert_string_equal(cli_fmt_rate(1e30, b, sizeof(b)), "1000000000000.0EB/s");
	assert_string_equal(cli_fmt_usec(0, b, sizeof(b)), "0us");
	assert_string_equal(cli_fmt_usec(850, b, sizeof(b)), "850us");
	assert_string_equal(cli_fmt_usec(1500, b, sizeof(b)), "1.5ms");
	assert_string_equal(cli_fmt_usec(2.3e6, b, sizeof(b)), "2.30s");
	assert_string_equal(cli_fmt_time(0, b, sizeof(b)), "-");
	assert_string_equal(cli_fmt_time(1800000000123456789ll, b, sizeof(b)),
			    "2027-01-15T08:00:00.123Z");
}

/* ------------------------------------------------------------ the fakes */

#define T0 1800000000000000000ull /* 2027-01-15T08:00:00Z */

enum { R_CANNED, R_GARBAGE, R_TRUNC, R_LONG };

typedef struct fake {
	pthread_mutex_t lock;
	pfs_server *srv;
	uint16_t port;
	int oss;            /* 0: MDS, 1: OSS A (OSTs 0, 1), 2: OSS B (OST 2) */
	/* behaviour */
	int status;         /* reply this errno for every request but OST_LIST */
	int mode;           /* R_* for every request but OST_LIST */
	int op_status[400]; /* per opcode, for the MDS */
	int dead_oss;       /* OST_LIST names a third OSS on a closed port */
	uint16_t a_port, b_port, dead_port;
	int fail_calls;     /* QOS_STATS: answer -EIO this many times first */
	int restarted;      /* QOS_STATS: from the second call on, a fresh OSS */
	/* recorded */
	int nreq[400];
	unsigned calls;     /* QOS_STATS / JOBSTATS answered */
	uint16_t last_op;
	uint32_t last_uid, last_gid;
	char last_job[PFS_JOBID_MAX + 1];
	uint8_t last_req[4096];
	size_t last_len;
} fake;

static const pfs_qos_stat stat_a0 = {
	.job = "j1", .ost = 0, .read_rpcs = 100, .write_rpcs = 200, .other_rpcs = 5,
	.read_bytes = 100000000, .write_bytes = 400000000, .arrived_rpcs = 310,
	.arrived_bytes = 500000000, .busy_rpcs = 2, .queued = 3, .queued_bytes = 3 << 20,
	.wait_us = 30500, .throttled_us = 2000000, .rate = 1e8, .record = 0, .tokens = -1,
	.nodes = 4,
};
static const pfs_qos_stat stat_a1 = {
	.job = "j2", .ost = 1, .write_rpcs = 50, .write_bytes = 50 << 20, .rate = -1,
	.tokens = 5, .record = -3, /* under AdapTBF, borrowing */
};
static const pfs_qos_stat stat_b2 = {
	.job = "j1", .ost = 2, .read_rpcs = 7, .read_bytes = 7 << 20, .wait_us = 700,
	.rate = -1, .tokens = -1,
};

static void put_qos_stats(fake *f, pfs_wbuf *w)
{
	unsigned c = f->calls++;
	pfs_qos_ost_info info = { .capacity = 1e9, .served = 1e6, .mode = PFS_QOS_MODE_RATES };
	pfs_qos_stat s;
	int fresh = f->restarted && c > 0;

	/* Two seconds between calls; j1 on OST 0 reads 20 MB and writes 40 MB
	 * per call, 30 RPCs that waited 3000 us in all. */
	pfs_wbuf_u64(w, T0 + (uint64_t)c * 2000000000u);
	/* A restarted OSS: up for half a second, counters from zero. */
	pfs_wbuf_f64(w, fresh ? 0.5 : 3600.0 + 2.0 * c);
	if (fresh)
		c = 0;
	if (f->oss == 1) {
		pfs_wbuf_u32(w, 2);
		info.ost = 0;
		pfs_qos_ost_info_encode(w, &info);
		info.ost = 1;
		pfs_qos_ost_info_encode(w, &info);
		pfs_wbuf_u32(w, 2);
		s = stat_a0;
		s.read_rpcs += 10u * c;
		s.write_rpcs += 20u * c;
		s.read_bytes += 20000000ull * c;
		s.write_bytes += 40000000ull * c;
		s.wait_us += 3000ull * c;
		s.throttled_us += 500000ull * c;
		pfs_qos_stat_encode(w, &s);
		pfs_qos_stat_encode(w, &stat_a1);
	} else {
		pfs_wbuf_u32(w, 1);
		info.ost = 2;
		pfs_qos_ost_info_encode(w, &info);
		pfs_wbuf_u32(w, 1);
		pfs_qos_stat_encode(w, &stat_b2);
	}
}

static void put_rules(fake *f, pfs_wbuf *w)
{
	pfs_nrs_rule_info r = { .name = "r1", .expr = "jobid={j1 j2} rate=100MB/s",
				.ost = PFS_QOS_OST_ALL, .queued = 4,
				.origin = PFS_NRS_ORIGIN_ADMIN };

	if (f->oss == 2) {
		pfs_wbuf_u32(w, 1);
		pfs_nrs_rule_info_encode(w, &r);
		return;
	}
	pfs_wbuf_u32(w, 2);
	pfs_nrs_rule_info_encode(w, &r);
	snprintf(r.name, sizeof(r.name), "mds_j1_0");
	snprintf(r.expr, sizeof(r.expr), "jobid={j1} rate=25MB/s ost=0");
	r.ost = 0;
	r.queued = 0;
	r.origin = PFS_NRS_ORIGIN_MDS;
	pfs_nrs_rule_info_encode(w, &r);
}

static void put_osts(fake *f, pfs_wbuf *w)
{
	pfs_ost_info o = { .host = "127.0.0.1", .data_port = 1, .up = 1,
			   .total_bytes = 1ull << 40, .free_bytes = 1ull << 39 };

	pfs_wbuf_u32(w, f->dead_oss ? 4 : 3);
	for (uint32_t i = 0; i < 3; i++) {
		o.index = i;
		snprintf(o.uuid, sizeof(o.uuid), "pfs-OST%04u_UUID", i);
		snprintf(o.oss, sizeof(o.oss), "%s", i < 2 ? "ossA" : "ossB");
		o.ctl_port = i < 2 ? f->a_port : f->b_port;
		pfs_ost_info_encode(w, &o);
	}
	if (f->dead_oss) {
		o.index = 3;
		snprintf(o.uuid, sizeof(o.uuid), "pfs-OST0003_UUID");
		snprintf(o.oss, sizeof(o.oss), "ossC");
		o.ctl_port = f->dead_port;
		o.up = 0;
		pfs_ost_info_encode(w, &o);
	}
}

static const pfs_job_info job_1234 = {
	.job = "1234", .uid = 1000, .nodes = 4, .priority = 2, .limit = 5e8,
	.throttle_friendly = 1, .state = PFS_JOB_RUNNING, .registered = 1,
	.start_ns = (int64_t)T0, .end_ns = 0,
};
static const pfs_job_info job_seen = {
	.job = "dd.0", .uid = 1001, .nodes = 1, .priority = 1, .limit = 0,
	.throttle_friendly = 1, .state = PFS_JOB_ENDED, .registered = 0,
	.start_ns = (int64_t)T0 - 60000000000ll, .end_ns = (int64_t)T0 + 1500000000ll,
};

static void put_status(pfs_wbuf *w)
{
	pfs_qos_status st = {
		.policy = "gift", .decided_ns = (int64_t)T0 + 250000000, .answered = 2,
		.oss_total = 3, .quorum_pct = 50, .interval = 10, .decision_ms = 1.25,
		.decisions = 120, .skipped = 3, .n_params = 2,
	};
	pfs_qos_row rows[3] = {
		{ .job = "1234", .ost = 0, .alloc = 1e8, .achieved = 9.5e7, .demand = 2e8,
		  .throttled = 1 },
		{ .job = "1234", .ost = 2, .alloc = -1, .achieved = 1.5e9, .demand = 1.5e9 },
		{ .job = "dd.0", .ost = 1, .alloc = 2.5e7, .achieved = 0, .demand = 0 },
	};

	snprintf(st.params[0].key, sizeof(st.params[0].key), "B_thres");
	st.params[0].value = 0.3;
	snprintf(st.params[1].key, sizeof(st.params[1].key), "tau");
	st.params[1].value = 0.8;
	pfs_qos_status_encode(w, &st);
	pfs_wbuf_u32(w, 3);
	for (int i = 0; i < 3; i++)
		pfs_qos_row_encode(w, &rows[i]);
}

static void put_jobstats(fake *f, pfs_wbuf *w)
{
	unsigned c = f->calls++;

	pfs_wbuf_u64(w, T0 + (uint64_t)c * 2000000000u);
	pfs_wbuf_u32(w, 2);
	pfs_wbuf_str(w, "j1");
	pfs_wbuf_u32(w, 2);
	pfs_wbuf_u16(w, PFS_OP_MDS_GETATTR);
	pfs_wbuf_u64(w, 50);
	pfs_wbuf_u16(w, PFS_OP_MDS_LOOKUP);
	pfs_wbuf_u64(w, 100 + 10u * c);
	pfs_wbuf_str(w, "j3");
	pfs_wbuf_u32(w, 1);
	pfs_wbuf_u16(w, PFS_OP_MDS_OPEN);
	pfs_wbuf_u64(w, 7);
}

/* The canned reply to op; returns the status to send. */
static int canned(fake *f, uint16_t op, const uint8_t *req, size_t len, pfs_wbuf *w)
{
	pfs_rbuf r;
	char s[300];

	pfs_rbuf_init(&r, req, len);
	switch (op) {
	case PFS_OP_MDS_OST_LIST:
		put_osts(f, w);
		return 0;
	case PFS_OP_MDS_JOB_REGISTER:
	case PFS_OP_MDS_JOB_END:
	case PFS_OP_MDS_QOS_POLICY_SET:
		return 0;
	case PFS_OP_MDS_JOB_LIST:
		pfs_wbuf_u32(w, 2);
		pfs_job_info_encode(w, &job_1234);
		pfs_job_info_encode(w, &job_seen);
		return 0;
	case PFS_OP_MDS_JOB_GET:
		pfs_rbuf_cstr(&r, s, sizeof(s));
		if (strcmp(s, "1234") != 0)
			return -ENOENT;
		pfs_job_info_encode(w, &job_1234);
		return 0;
	case PFS_OP_MDS_QOS_SHOW:
		put_status(w);
		return 0;
	case PFS_OP_MDS_QOS_COUPONS: {
		pfs_qos_coupon_info c = { .job = "1234", .rate = 0.5,
					  .outstanding = 3.0 * (1 << 30),
					  .issued = 5ull << 30, .redeemed = 2ull << 30,
					  .owed_nh = 1.25, .awarded_nh = 0.5, .n_coupons = 9 };

		pfs_wbuf_u32(w, 1);
		pfs_qos_coupon_info_encode(w, &c);
		return 0;
	}
	case PFS_OP_MDS_QOS_REGRET: {
		pfs_qos_regret_info g = { .budget_nh = 100, .period_s = 86400, .awarded_nh = 12.5,
					  .liability_nh = 3.25, .c_sys = 0.75,
					  .coupons_issued = 40, .redemptions = 30,
					  .assessments = 12, .worth_issued = 1.5 * (1 << 30),
					  .worth_redeemed = 1ull << 30 };

		pfs_qos_regret_info_encode(w, &g);
		return 0;
	}
	case PFS_OP_MDS_JOBSTATS:
		put_jobstats(f, w);
		return 0;
	case PFS_OP_OSS_QOS_STATS:
		if (len != 1 || req[0] != PFS_QOS_STATS_TOTAL)
			return -EINVAL;
		if (f->fail_calls > 0) {
			f->fail_calls--;
			return -EIO;
		}
		put_qos_stats(f, w);
		return 0;
	case PFS_OP_OSS_NRS_RULE: {
		uint8_t verb = pfs_rbuf_u8(&r);

		pfs_rbuf_cstr(&r, s, 64);
		if (verb == PFS_NRS_LIST) {
			put_rules(f, w);
			return 0;
		}
		if (verb == PFS_NRS_START || verb == PFS_NRS_CHANGE) {
			pfs_rbuf_cstr(&r, s, sizeof(s));
			if (strstr(s, "bogus"))
				return -EINVAL;
		}
		return pfs_rbuf_done(&r);
	}
	default:
		return -EOPNOTSUPP;
	}
}

static void fake_handler(void *ctx, pfs_sconn *c, const pfs_hdr *h, uint8_t *payload)
{
	static const uint8_t junk[7] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	fake *f = ctx;
	pfs_wbuf w;
	int status;

	pfs_wbuf_init(&w);
	pthread_mutex_lock(&f->lock);
	if (h->opcode < 400)
		f->nreq[h->opcode]++;
	/* OST_LIST and MDQOS_SHOW are side requests (df's OSTs, jobstats'
	 * PADLL rows): the request under test is the one before them. */
	if (h->opcode != PFS_OP_MDS_OST_LIST && h->opcode != PFS_OP_MDS_MDQOS_SHOW) {
		f->last_op = h->opcode;
		f->last_uid = h->uid;
		f->last_gid = h->gid;
		pfs_hdr_jobid(h, f->last_job);
		f->last_len = h->payload_len < sizeof(f->last_req) ? h->payload_len : 0;
		memcpy(f->last_req, payload, f->last_len);
	}
	status = canned(f, h->opcode, payload, h->payload_len, &w);
	if (h->opcode != PFS_OP_MDS_OST_LIST) {
		if (f->status)
			status = f->status;
		if (h->opcode < 400 && f->op_status[h->opcode])
			status = f->op_status[h->opcode];
		if (status == 0 && f->mode == R_GARBAGE) {
			pfs_wbuf_reset(&w);
			pfs_wbuf_bytes(&w, junk, sizeof(junk));
		} else if (status == 0 && f->mode == R_TRUNC && w.len > 0) {
			w.len--;
		} else if (status == 0 && f->mode == R_LONG) {
			pfs_wbuf_u8(&w, 0);
		}
	}
	pthread_mutex_unlock(&f->lock);
	if (status)
		pfs_sconn_reply(c, h, status, NULL, 0, NULL, 0);
	else
		pfs_sconn_reply(c, h, 0, w.data, w.len, NULL, 0);
	pfs_wbuf_free(&w);
	free(payload);
}

typedef struct fixture {
	fake mds, a, b;
	pfs_rpc_pool *pool;
	char *out;
	size_t outlen;
	FILE *f;
	cli_admin adm;
	cli_admin_args args;
	char err[256];
	int rc;          /* of the last run() */
	char msg[1024];  /* message() */
} fixture;

static int start_fake(fake *f, int oss)
{
	pfs_server_opts so = { .host = "127.0.0.1", .port = 0, .name = "fake" };

	pthread_mutex_init(&f->lock, NULL);
	f->oss = oss;
	if (pfs_server_start(&so, fake_handler, f, &f->srv))
		return -1;
	f->port = pfs_server_port(f->srv);
	return 0;
}

static int fx_setup(void **state)
{
	pfs_rpc_opts ro = { .max_conns = 2, .timeout_ms = 10000, .retry_ms = 2000 };
	fixture *x = calloc(1, sizeof(*x));
	fake gone = { 0 };

	*state = x;
	if (!x || start_fake(&x->mds, 0) || start_fake(&x->a, 1) || start_fake(&x->b, 2))
		return -1;
	/* A port that was free a moment ago and is closed now. */
	if (start_fake(&gone, 0))
		return -1;
	x->mds.dead_port = gone.port;
	pfs_server_stop(gone.srv);
	pthread_mutex_destroy(&gone.lock);
	x->mds.a_port = x->a.port;
	x->mds.b_port = x->b.port;
	if (pfs_rpc_pool_create("127.0.0.1", x->mds.port, &ro, &x->pool))
		return -1;
	x->f = open_memstream(&x->out, &x->outlen);
	if (!x->f)
		return -1;
	if (cli_admin_init(&x->adm, x->pool, x->f, 0))
		return -1;
	x->adm.oss_timeout_ms = 3000;
	return 0;
}

static void stop_fake(fake *f)
{
	if (f->srv) {
		pfs_server_stop(f->srv);
		pthread_mutex_destroy(&f->lock);
	}
}

static int fx_teardown(void **state)
{
	fixture *x = *state;

	if (!x)
		return 0;
	if (x->f)
		fclose(x->f);
	free(x->out);
	cli_admin_fini(&x->adm);
	pfs_rpc_pool_destroy(x->pool);
	stop_fake(&x->mds);
	stop_fake(&x->a);
	stop_fake(&x->b);
	free(x);
	return 0;
}

static const char *output(fixture *x)
{
	fflush(x->f);
	return x->out ? x->out : "";
}

static void reset_output(fixture *x)
{
	fclose(x->f);
	free(x->out);
	x->out = NULL;
	x->f = open_memstream(&x->out, &x->outlen);
	assert_non_null(x->f);
	x->adm.out = x->f;
}

static json_t *output_json(fixture *x)
{
	json_error_t je;
	json_t *j = json_loads(output(x), 0, &je);

	if (!j)
		fail_msg("bad JSON (%s): %s", je.text, output(x));
	return j;
}

/* Parse a command line into x->args (NULL-terminated words) and run it. */
static int run(fixture *x, ...)
{
	char *argv[40] = { "pfsadmin" };
	int argc = 1;
	va_list ap;
	char *s;

	va_start(ap, x);
	while ((s = va_arg(ap, char *)) != NULL && argc < 39)
		argv[argc++] = s;
	va_end(ap);
	if (cli_admin_parse_args(argc, argv, &x->args, x->err, sizeof(x->err)))
		fail_msg("parse: %s", x->err);
	x->adm.json = x->args.json;
	x->rc = cli_admin_run(&x->adm, &x->args);
	return x->rc;
}

/* The message pfsadmin would print for the last run(). */
static const char *message(fixture *x)
{
	return cli_admin_errmsg(&x->adm, x->rc, x->msg, sizeof(x->msg));
}

static void assert_contains(const char *s, const char *sub)
{
	if (!strstr(s, sub))
		fail_msg("'%s' lacks '%s'", s, sub);
}

/* s has a line starting with prefix that contains sub. */
static void assert_line(const char *s, const char *prefix, const char *sub)
{
	for (const char *l = s; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *e = strchr(l, '\n');
		size_t n = e ? (size_t)(e - l) : strlen(l);
		char line[512];

		if (n >= sizeof(line) || strncmp(l, prefix, strlen(prefix)) != 0)
			continue;
		memcpy(line, l, n);
		line[n] = '\0';
		if (!strstr(line, sub))
			fail_msg("line '%s' lacks '%s'", line, sub);
		return;
	}
	fail_msg("no line starts with '%s' in:\n%s", prefix, s);
}

/* The last request's header carried our identity. */
static void assert_tagged(const fake *f)
{
	char want[PFS_JOBID_MAX + 1];

	snprintf(want, sizeof(want), "pfsadmin.%u", (unsigned)getuid());
	assert_int_equal(f->last_uid, getuid());
	assert_int_equal(f->last_gid, getgid());
	assert_string_equal(f->last_job, want);
}

/* ------------------------------------------------------------------ job */

static void test_qos_job_register(void **state)
{
	fixture *x = *state;
	pfs_job_info j;
	pfs_rbuf r;

	assert_int_equal(run(x, "job", "register", "77", "--nodes", "8", "--priority", "3",
			     "--uid", "1000", "--limit", "1.5GB/s", "--no-throttle", NULL), 0);
	assert_int_equal(x->mds.last_op, PFS_OP_MDS_JOB_REGISTER);
	assert_tagged(&x->mds);
	pfs_rbuf_init(&r, x->mds.last_req, x->mds.last_len);
	assert_int_equal(pfs_job_info_decode(&r, &j), 0);
	assert_int_equal(pfs_rbuf_done(&r), 0);
	assert_string_equal(j.job, "77");
	assert_int_equal(j.uid, 1000);
	assert_int_equal(j.nodes, 8);
	assert_true(j.priority == 3);
	assert_true(j.limit == 1.5e9);
	assert_int_equal(j.throttle_friendly, 0);
	assert_int_equal(j.state, PFS_JOB_RUNNING);
	assert_int_equal(j.registered, 1);
	assert_string_equal(output(x), "job 77 registered: uid 1000, 8 nodes, priority 3, "
			    "limit 1.5GB/s, never throttled\n");

	/* defaults: the caller's uid, one node, priority 1, no limit */
	reset_output(x);
	assert_int_equal(run(x, "job", "register", "78", "--json", NULL), 0);
	pfs_rbuf_init(&r, x->mds.last_req, x->mds.last_len);
	assert_int_equal(pfs_job_info_decode(&r, &j), 0);
	assert_int_equal(j.uid, getuid());
	assert_int_equal(j.nodes, 1);
	assert_true(j.priority == 1);
	assert_true(j.limit == 0);
	assert_int_equal(j.throttle_friendly, 1);
	{
		json_t *doc = output_json(x), *o = json_object_get(doc, "job");

		assert_string_equal(json_string_value(json_object_get(doc, "action")), "register");
		assert_string_equal(json_string_value(json_object_get(o, "job")), "78");
		assert_int_equal(json_integer_value(json_object_get(o, "uid")), getuid());
		assert_int_equal(json_integer_value(json_object_get(o, "nodes")), 1);
		assert_true(json_real_value(json_object_get(o, "priority")) == 1.0);
		/* no limit: null, as everywhere in the vocabulary */
		assert_true(json_is_null(json_object_get(o, "limit_bytes_per_s")));
		assert_true(json_is_true(json_object_get(o, "throttle_friendly")));
		assert_null(json_object_get(o, "state"));
		json_decref(doc);
	}
}

static void test_qos_job_end(void **state)
{
	fixture *x = *state;
	pfs_rbuf r;
	char id[40];
	json_t *doc;

	assert_int_equal(run(x, "job", "end", "1234", NULL), 0);
	assert_int_equal(x->mds.last_op, PFS_OP_MDS_JOB_END);
	assert_tagged(&x->mds);
	pfs_rbuf_init(&r, x->mds.last_req, x->mds.last_len);
	pfs_rbuf_cstr(&r, id, sizeof(id));
	assert_int_equal(pfs_rbuf_done(&r), 0);
	assert_string_equal(id, "1234");
	assert_string_equal(output(x), "job 1234 ended\n");
	reset_output(x);
	assert_int_equal(run(x, "--json", "job", "end", "1234", NULL), 0);
	doc = output_json(x);
	assert_string_equal(json_string_value(json_object_get(doc, "action")), "end");
	assert_string_equal(json_string_value(json_object_get(doc, "job")), "1234");
	json_decref(doc);
}

static void test_qos_job_list(void **state)
{
	fixture *x = *state;
	json_t *doc, *jobs, *o;

	assert_int_equal(run(x, "job", "list", NULL), 0);
	assert_int_equal(x->mds.last_len, 1);
	assert_int_equal(x->mds.last_req[0], 0);
	assert_tagged(&x->mds);
	assert_string_equal(output(x),
		"JOB    UID  NODES  PRIORITY      LIMIT  THROTTLE  STATE    SOURCE      "
		"START                     END\n"
		"1234  1000      4         2  500.0MB/s  yes       running  registered  "
		"2027-01-15T08:00:00.000Z  -\n"
		"dd.0  1001      1         1       none  yes       ended    seen        "
		"2027-01-15T07:59:00.000Z  2027-01-15T08:00:01.500Z\n");
	reset_output(x);
	assert_int_equal(run(x, "job", "list", "--all", "--json", NULL), 0);
	assert_int_equal(x->mds.last_req[0], 1);
	doc = output_json(x);
	jobs = json_object_get(doc, "jobs");
	assert_int_equal(json_array_size(jobs), 2);
	o = json_array_get(jobs, 0);
	assert_string_equal(json_string_value(json_object_get(o, "job")), "1234");
	assert_int_equal(json_integer_value(json_object_get(o, "limit_bytes_per_s")), 500000000);
	assert_string_equal(json_string_value(json_object_get(o, "state")), "running");
	assert_true(json_is_true(json_object_get(o, "registered")));
	assert_int_equal(json_integer_value(json_object_get(o, "start_ns")), (json_int_t)T0);
	assert_int_equal(json_integer_value(json_object_get(o, "end_ns")), 0);
	o = json_array_get(jobs, 1);
	assert_string_equal(json_string_value(json_object_get(o, "state")), "ended");
	assert_true(json_is_false(json_object_get(o, "registered")));
	json_decref(doc);
}

static void test_qos_job_show(void **state)
{
	fixture *x = *state;
	json_t *doc;

	assert_int_equal(run(x, "job", "show", "1234", NULL), 0);
	assert_int_equal(x->mds.last_op, PFS_OP_MDS_JOB_GET);
	assert_string_equal(output(x),
			    "job:               1234\n"
			    "uid:               1000\n"
			    "nodes:             4\n"
			    "priority:          2\n"
			    "limit:             500.0MB/s\n"
			    "throttle_friendly: yes\n"
			    "state:             running\n"
			    "registered:        yes\n"
			    "start:             2027-01-15T08:00:00.000Z\n"
			    "end:               -\n");
	reset_output(x);
	assert_int_equal(run(x, "job", "show", "1234", "--json", NULL), 0);
	doc = output_json(x);
	assert_string_equal(json_string_value(json_object_get(doc, "job")), "1234");
	assert_int_equal(json_integer_value(json_object_get(doc, "nodes")), 4);
	json_decref(doc);
}

/* Error statuses: nothing on stdout, a message that says what and why. */
static void test_qos_job_errors(void **state)
{
	fixture *x = *state;

	assert_int_equal(run(x, "job", "show", "999", NULL), -ENOENT);
	assert_string_equal(output(x), "");
	assert_contains(message(x), "job show 999 on MDS 127.0.0.1:");
	assert_contains(message(x), "no such job");

	x->mds.op_status[PFS_OP_MDS_JOB_END] = -EPERM;
	assert_int_equal(run(x, "job", "end", "1234", NULL), -EPERM);
	assert_string_equal(output(x), "");
	assert_contains(message(x), "job end 1234");
	assert_contains(message(x), "only root, or the job's owner");

	x->mds.op_status[PFS_OP_MDS_JOB_REGISTER] = -EINVAL;
	assert_int_equal(run(x, "job", "register", "5", NULL), -EINVAL);
	assert_contains(message(x), "job register 5 on MDS");

	x->mds.op_status[PFS_OP_MDS_JOB_LIST] = -EOPNOTSUPP;
	assert_int_equal(run(x, "job", "list", NULL), -EOPNOTSUPP);
	assert_contains(message(x), "older pfs");
	assert_string_equal(output(x), "");
}

/* ------------------------------------------------------------------ qos */

static void test_qos_show_table(void **state)
{
	fixture *x = *state;
	pfs_rbuf r;
	char job[40];

	assert_int_equal(run(x, "qos", "show", NULL), 0);
	assert_int_equal(x->mds.last_op, PFS_OP_MDS_QOS_SHOW);
	assert_tagged(&x->mds);
	pfs_rbuf_init(&r, x->mds.last_req, x->mds.last_len);
	pfs_rbuf_cstr(&r, job, sizeof(job));
	assert_int_equal(pfs_rbuf_done(&r), 0);
	assert_string_equal(job, "");
	assert_string_equal(output(x),
		"policy:         gift\n"
		"parameters:     B_thres=0.3 tau=0.8\n"
		"interval:       10s\n"
		"last decision:  2027-01-15T08:00:00.250Z (took 1.250 ms)\n"
		"quorum:         2 of 3 OSSes answered (50% needed)\n"
		"decisions:      120 made, 3 skipped without quorum\n"
		"\n"
		"JOB   OST  ALLOCATED  ACHIEVED     DEMAND  THROTTLED\n"
		"1234    0  100.0MB/s  95.0MB/s  200.0MB/s  yes\n"
		"1234    2  unlimited   1.5GB/s    1.5GB/s  no\n"
		"dd.0    1   25.0MB/s      0B/s       0B/s  no\n");
	reset_output(x);
	assert_int_equal(run(x, "qos", "show", "--job", "1234", NULL), 0);
	pfs_rbuf_init(&r, x->mds.last_req, x->mds.last_len);
	pfs_rbuf_cstr(&r, job, sizeof(job));
	assert_string_equal(job, "1234");
}

static void test_qos_show_json(void **state)
{
	fixture *x = *state;
	json_t *doc, *al, *o;

	assert_int_equal(run(x, "qos", "show", "--json", NULL), 0);
	doc = output_json(x);
	assert_string_equal(json_string_value(json_object_get(doc, "policy")), "gift");
	assert_true(json_real_value(json_object_get(json_object_get(doc, "params"), "tau")) == 0.8);
	assert_true(json_real_value(json_object_get(doc, "interval_s")) == 10);
	assert_int_equal(json_integer_value(json_object_get(doc, "decided_ns")),
			 (json_int_t)T0 + 250000000);
	o = json_object_get(doc, "quorum");
	assert_int_equal(json_integer_value(json_object_get(o, "answered")), 2);
	assert_int_equal(json_integer_value(json_object_get(o, "oss_total")), 3);
	assert_int_equal(json_integer_value(json_object_get(o, "needed_pct")), 50);
	assert_int_equal(json_integer_value(json_object_get(doc, "decisions")), 120);
	assert_int_equal(json_integer_value(json_object_get(doc, "skipped")), 3);
	al = json_object_get(doc, "allocations");
	assert_int_equal(json_array_size(al), 3);
	o = json_array_get(al, 0);
	assert_int_equal(json_integer_value(json_object_get(o, "alloc_bytes_per_s")), 100000000);
	assert_int_equal(json_integer_value(json_object_get(o, "achieved_bytes_per_s")), 95000000);
	assert_int_equal(json_integer_value(json_object_get(o, "demand_bytes_per_s")), 200000000);
	assert_true(json_is_true(json_object_get(o, "throttled")));
	o = json_array_get(al, 1);
	assert_true(json_is_null(json_object_get(o, "alloc_bytes_per_s")));
	assert_true(json_is_false(json_object_get(o, "throttled")));
	json_decref(doc);
}

/* A non-root caller asking for another's job: the MDS's -EACCES is shown
 * with the rule. */
static void test_qos_show_eacces(void **state)
{
	fixture *x = *state;

	x->mds.status = -EACCES;
	assert_int_equal(run(x, "qos", "show", "--job", "other", NULL), -EACCES);
	assert_string_equal(output(x), "");
	assert_contains(message(x), "qos show --job other on MDS 127.0.0.1:");
	assert_contains(message(x), "only root, or the job's owner");
}

static void test_qos_policy_set(void **state)
{
	fixture *x = *state;
	json_t *doc;

	assert_int_equal(run(x, "qos", "policy", "set", "gift", "B_thres=0.3", "tau=0.8", NULL), 0);
	assert_int_equal(x->mds.nreq[PFS_OP_MDS_QOS_POLICY_SET], 1);
	/* then the policy is read back and shown as the MDS has it */
	assert_int_equal(x->mds.last_op, PFS_OP_MDS_QOS_SHOW);
	assert_string_equal(output(x),
		"policy:         gift\n"
		"parameters:     B_thres=0.3 tau=0.8\n"
		"interval:       10s\n"
		"last decision:  2027-01-15T08:00:00.250Z (took 1.250 ms)\n"
		"quorum:         2 of 3 OSSes answered (50% needed)\n"
		"decisions:      120 made, 3 skipped without quorum\n");

	/* set, but the read-back fails: the error says which step */
	x->mds.op_status[PFS_OP_MDS_QOS_SHOW] = -EIO;
	reset_output(x);
	assert_int_equal(run(x, "qos", "policy", "set", "tau=0.5", NULL), -EIO);
	assert_int_equal(x->mds.nreq[PFS_OP_MDS_QOS_POLICY_SET], 2);
	assert_contains(message(x), "reading the policy back");
	assert_string_equal(output(x), "");
	x->mds.op_status[PFS_OP_MDS_QOS_SHOW] = 0;

	assert_int_equal(run(x, "--json", "qos", "policy", "show", NULL), 0);
	doc = output_json(x);
	assert_string_equal(json_string_value(json_object_get(doc, "policy")), "gift");
	assert_true(json_real_value(json_object_get(json_object_get(doc, "params"), "B_thres")) ==
		    0.3);
	assert_null(json_object_get(doc, "allocations"));
	json_decref(doc);
}

/* The POLICY_SET payload: str policy, u32 n, n x { str key, f64 value }. */
static void test_qos_policy_set_payload(void **state)
{
	fixture *x = *state;
	pfs_rbuf r;
	char s[64];

	x->mds.op_status[PFS_OP_MDS_QOS_POLICY_SET] = -EINVAL;
	assert_int_equal(run(x, "qos", "policy", "set", "gift", "B_thres=0.25", "tau=-2", NULL),
			 -EINVAL);
	assert_int_equal(x->mds.last_op, PFS_OP_MDS_QOS_POLICY_SET);
	assert_tagged(&x->mds);
	assert_string_equal(output(x), "");
	assert_contains(message(x), "nothing was changed");
	pfs_rbuf_init(&r, x->mds.last_req, x->mds.last_len);
	pfs_rbuf_cstr(&r, s, sizeof(s));
	assert_string_equal(s, "gift");
	assert_int_equal(pfs_rbuf_u32(&r), 2);
	pfs_rbuf_cstr(&r, s, sizeof(s));
	assert_string_equal(s, "B_thres");
	assert_true(pfs_rbuf_f64(&r) == 0.25);
	pfs_rbuf_cstr(&r, s, sizeof(s));
	assert_string_equal(s, "tau");
	assert_true(pfs_rbuf_f64(&r) == -2);
	assert_int_equal(pfs_rbuf_done(&r), 0);

	assert_int_equal(run(x, "qos", "policy", "set", "interval=5", NULL), -EINVAL);
	pfs_rbuf_init(&r, x->mds.last_req, x->mds.last_len);
	pfs_rbuf_cstr(&r, s, sizeof(s));
	assert_string_equal(s, "");
	assert_int_equal(pfs_rbuf_u32(&r), 1);
}

static void test_qos_coupons_regret(void **state)
{
	fixture *x = *state;
	pfs_rbuf r;
	char job[40];
	json_t *doc, *o;

	assert_int_equal(run(x, "qos", "coupons", "--job", "1234", NULL), 0);
	assert_int_equal(x->mds.last_op, PFS_OP_MDS_QOS_COUPONS);
	assert_tagged(&x->mds);
	pfs_rbuf_init(&r, x->mds.last_req, x->mds.last_len);
	pfs_rbuf_cstr(&r, job, sizeof(job));
	assert_string_equal(job, "1234");
	assert_string_equal(output(x),
		"JOB   RATE  OUTSTANDING  ISSUED  REDEEMED  OWED_NH  AWARDED_NH  COUPONS\n"
		"1234  0.50         3.0G    5.0G      2.0G     1.25        0.50        9\n");
	reset_output(x);
	assert_int_equal(run(x, "qos", "coupons", "--json", NULL), 0);
	doc = output_json(x);
	o = json_array_get(json_object_get(doc, "coupons"), 0);
	assert_string_equal(json_string_value(json_object_get(o, "job")), "1234");
	assert_true(json_real_value(json_object_get(o, "rate")) == 0.5);
	assert_int_equal(json_integer_value(json_object_get(o, "outstanding_bytes")), 3ll << 30);
	assert_int_equal(json_integer_value(json_object_get(o, "coupons")), 9);
	assert_true(json_real_value(json_object_get(o, "owed_nh")) == 1.25);
	json_decref(doc);

	reset_output(x);
	assert_int_equal(run(x, "qos", "regret", NULL), 0);
	assert_int_equal(x->mds.last_op, PFS_OP_MDS_QOS_REGRET);
	assert_int_equal(x->mds.last_len, 0);
	assert_string_equal(output(x),
			    "regret_budget:   100.00 node-hours per 86400s\n"
			    "awarded:         12.50 node-hours\n"
			    "liability:       3.25 node-hours\n"
			    "c_sys:           0.750\n"
			    "coupons_issued:  40\n"
			    "redemptions:     30\n"
			    "assessments:     12\n"
			    "worth_issued:    1.5G\n"
			    "worth_redeemed:  1.0G\n");
	reset_output(x);
	assert_int_equal(run(x, "--json", "qos", "regret", NULL), 0);
	doc = output_json(x);
	assert_true(json_real_value(json_object_get(doc, "budget_nh")) == 100);
	assert_true(json_real_value(json_object_get(doc, "c_sys")) == 0.75);
	assert_int_equal(json_integer_value(json_object_get(doc, "redemptions")), 30);
	assert_int_equal(json_integer_value(json_object_get(doc, "worth_redeemed_bytes")),
			 1ll << 30);
	json_decref(doc);
}

/* Every MDS command against garbage, truncated and overlong replies: a
 * clear error, nothing printed, no crash. */
static void test_qos_bad_replies(void **state)
{
	static const char *const cmds[][6] = {
		{ "job", "register", "9" }, { "job", "end", "9" }, { "job", "list" },
		{ "job", "show", "1234" }, { "qos", "show" }, { "qos", "policy", "show" },
		{ "qos", "policy", "set", "gift" }, { "qos", "coupons" }, { "qos", "regret" },
	};
	fixture *x = *state;

	for (int mode = R_GARBAGE; mode <= R_LONG; mode++) {
		for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
			const char *const *c = cmds[i];
			int rc;

			/* An empty reply cannot be truncated: it is already right. */
			if (mode == R_TRUNC && (strcmp(c[1] ? c[1] : "", "register") == 0 ||
						strcmp(c[1] ? c[1] : "", "end") == 0))
				continue;
			x->mds.mode = mode;
			reset_output(x);
			rc = run(x, c[0], c[1], c[2], c[3], c[4], NULL);
			if (rc != -EBADMSG)
				fail_msg("%s %s (mode %d): rc %d", c[0], c[1] ? c[1] : "", mode,
					 rc);
			if (output(x)[0])
				fail_msg("%s %s (mode %d) printed: %s", c[0], c[1] ? c[1] : "",
					 mode, output(x));
			assert_contains(message(x), "malformed reply");
		}
	}
}

/* ------------------------------------------------------------- jobstats */

static void test_qos_jobstats_once(void **state)
{
	fixture *x = *state;
	const char *s;
	char want[300];

	assert_int_equal(run(x, "jobstats", NULL), 0);
	assert_int_equal(x->mds.nreq[PFS_OP_MDS_JOBSTATS], 1);
	assert_int_equal(x->a.nreq[PFS_OP_OSS_QOS_STATS], 1);
	assert_int_equal(x->b.nreq[PFS_OP_OSS_QOS_STATS], 1);
	assert_tagged(&x->a);
	assert_tagged(&x->b);
	assert_int_equal(x->a.last_len, 1);
	assert_int_equal(x->a.last_req[0], PFS_QOS_STATS_TOTAL);
	s = output(x);
	assert_contains(s, "jobstats at 2027-01-15T08:00:00.000Z, since each server started\n\n"
			"SERVER  ADDRESS");
	snprintf(want, sizeof(want), "127.0.0.1:%u  2027-01-15T08:00:00.000Z        -  ok",
		 x->mds.port);
	assert_line(s, "MDS     ", want);
	snprintf(want, sizeof(want), "127.0.0.1:%u  2027-01-15T08:00:00.000Z  3600.0s  ok",
		 x->a.port);
	assert_line(s, "ossA    ", want);
	assert_contains(s,
		"JOB  OST  READ_RPCS  WRITE_RPCS  OTHER_RPCS  READ  WRITE  READ_RATE  WRITE_RATE  "
		"AVG_WAIT  THROTTLED  QUEUED   TBF_RATE  RECORD\n"
		"j1     0        100         200           5   95M   381M   27.8KB/s   111.1KB/s"
		"     100us      2.00s       3  100.0MB/s       -\n"
		"j1     2          7           0           0  7.0M     0B    2.0KB/s        0B/s"
		"     100us        0us       0          -       -\n"
		"j2     1          0          50           0    0B    50M       0B/s    14.6KB/s"
		"       0us        0us       0          -      -3\n"
		"\n"
		"JOB  OPERATION    COUNT  RATE\n"
		"j1   MDS_LOOKUP     100     -\n"
		"j1   MDS_GETATTR     50     -\n"
		"j3   MDS_OPEN         7     -\n");
}

/* An OSS that does not answer is listed, the others are shown, and the
 * command succeeds; --job keeps one job. */
static void test_qos_jobstats_dead_oss(void **state)
{
	fixture *x = *state;
	const char *s;
	char want[300];
	pfs_rbuf r;
	json_t *doc, *oss, *jobs, *o;

	x->mds.dead_oss = 1;
	x->b.mode = R_GARBAGE;
	assert_int_equal(run(x, "jobstats", "--job", "j1", NULL), 0);
	pfs_rbuf_init(&r, x->mds.last_req, x->mds.last_len);
	{
		char job[40];

		pfs_rbuf_cstr(&r, job, sizeof(job));
		assert_string_equal(job, "j1");
	}
	s = output(x);
	snprintf(want, sizeof(want), "127.0.0.1:%u  -", x->mds.dead_port);
	assert_line(s, "ossC ", want);
	assert_line(s, "ossC ", "  -  no answer: Connection refused");
	snprintf(want, sizeof(want), "127.0.0.1:%u  -", x->b.port);
	assert_line(s, "ossB ", want);
	assert_line(s, "ossB ", "  -  malformed reply: ");
	assert_contains(s, "j1     0        100");
	assert_null(strstr(s, "j2 "));
	assert_null(strstr(s, "j1     2")); /* ossB's row is missing */

	reset_output(x);
	assert_int_equal(run(x, "jobstats", "--json", NULL), 0);
	doc = output_json(x);
	assert_int_equal(json_integer_value(json_object_get(doc, "snapshot_ns")),
			 (json_int_t)T0 + 2000000000);
	assert_string_equal(json_string_value(json_object_get(doc, "window")), "since_start");
	assert_true(json_is_null(json_object_get(doc, "mds_window_s")));
	o = json_object_get(doc, "mds");
	assert_string_equal(json_string_value(json_object_get(o, "status")), "ok");
	assert_int_equal(json_integer_value(json_object_get(o, "snapshot_ns")),
			 (json_int_t)T0 + 2000000000);
	assert_true(json_is_null(json_object_get(o, "window_s")));
	assert_null(json_object_get(o, "errno"));
	oss = json_object_get(doc, "oss");
	assert_int_equal(json_array_size(oss), 3);
	o = json_array_get(oss, 0);
	assert_string_equal(json_string_value(json_object_get(o, "status")), "ok");
	assert_true(json_real_value(json_object_get(o, "window_s")) == 3602);
	o = json_array_get(oss, 1);
	assert_string_equal(json_string_value(json_object_get(o, "status")), "malformed reply");
	assert_int_equal(json_integer_value(json_object_get(o, "errno")), -EBADMSG);
	o = json_array_get(oss, 2);
	assert_string_equal(json_string_value(json_object_get(o, "oss")), "ossC");
	assert_string_equal(json_string_value(json_object_get(o, "status")), "no answer");
	assert_int_equal(json_integer_value(json_object_get(o, "errno")), -ECONNREFUSED);
	jobs = json_object_get(doc, "jobs");
	assert_int_equal(json_array_size(jobs), 3); /* j1, j2, j3 */
	o = json_array_get(jobs, 0);
	assert_string_equal(json_string_value(json_object_get(o, "job")), "j1");
	assert_int_equal(json_array_size(json_object_get(o, "osts")), 1);
	assert_int_equal(json_array_size(json_object_get(o, "mds_ops")), 2);
	o = json_array_get(json_object_get(o, "osts"), 0);
	assert_string_equal(json_string_value(json_object_get(o, "oss")), "ossA");
	assert_int_equal(json_integer_value(json_object_get(o, "read_bytes")), 120000000);
	assert_int_equal(json_integer_value(json_object_get(o, "read_bytes_per_s")),
			 (json_int_t)(120000000.0 / 3602 + 0.5));
	assert_int_equal(json_integer_value(json_object_get(o, "tbf_rate_bytes_per_s")), 100000000);
	assert_int_equal(json_integer_value(json_object_get(o, "queued")), 3);
	assert_true(json_is_null(json_object_get(o, "adaptbf_tokens")));
	assert_true(json_is_null(json_object_get(o, "adaptbf_record_tokens")));
	o = json_array_get(json_object_get(json_array_get(jobs, 1), "osts"), 0); /* j2 */
	assert_int_equal(json_integer_value(json_object_get(o, "adaptbf_tokens")), 5);
	assert_true(json_real_value(json_object_get(o, "adaptbf_record_tokens")) == -3);
	o = json_array_get(jobs, 2);
	assert_string_equal(json_string_value(json_object_get(o, "job")), "j3");
	assert_int_equal(json_array_size(json_object_get(o, "osts")), 0);
	o = json_array_get(json_object_get(o, "mds_ops"), 0);
	assert_string_equal(json_string_value(json_object_get(o, "op")), "MDS_OPEN");
	assert_int_equal(json_integer_value(json_object_get(o, "count")), 7);
	assert_true(json_is_null(json_object_get(o, "per_s")));
	json_decref(doc);
}

/* --watch: each report is the difference of two snapshots two (fake)
 * seconds apart; --count bounds it. */
static void test_qos_jobstats_watch(void **state)
{
	fixture *x = *state;
	const char *s;
	json_error_t je;
	char *line, *save = NULL, *copy;
	int n = 0;

	assert_int_equal(run(x, "jobstats", "--watch", "0.01", "--count", "2", NULL), 0);
	assert_int_equal(x->mds.nreq[PFS_OP_MDS_JOBSTATS], 3);
	assert_int_equal(x->a.nreq[PFS_OP_OSS_QOS_STATS], 3);
	s = output(x);
	assert_contains(s, "jobstats at 2027-01-15T08:00:02.000Z, over 2.0s\n");
	assert_contains(s, "jobstats at 2027-01-15T08:00:04.000Z, over 2.0s\n");
	assert_contains(s,
		"j1     0         10          20           0   19M    38M   10.0MB/s    20.0MB/s"
		"     100us    500.0ms       3  100.0MB/s       -\n");
	/* unchanged counters: zero over the interval; the AdapTBF record is
	 * the current value, not a difference */
	assert_contains(s, "j2     1          0           0           0    0B     0B       0B/s"
			   "        0B/s         -        0us       0          -      -3\n");
	assert_contains(s, "j1   MDS_LOOKUP      10  5.0/s\n");
	assert_contains(s, "j1   MDS_GETATTR      0  0.0/s\n");

	/* JSON: one compact document per line */
	reset_output(x);
	assert_int_equal(run(x, "--json", "jobstats", "--watch", "0.01", "--count", "3", NULL), 0);
	copy = strdup(output(x));
	assert_non_null(copy);
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		json_t *doc = json_loads(line, 0, &je), *o;

		if (!doc)
			fail_msg("line %d is not JSON (%s): %s", n, je.text, line);
		assert_string_equal(json_string_value(json_object_get(doc, "window")), "interval");
		assert_true(json_real_value(json_object_get(doc, "mds_window_s")) == 2.0);
		o = json_array_get(json_object_get(json_array_get(json_object_get(doc, "jobs"), 0),
						   "osts"), 0);
		assert_int_equal(json_integer_value(json_object_get(o, "read_bytes")), 20000000);
		assert_int_equal(json_integer_value(json_object_get(o, "read_bytes_per_s")),
				 10000000);
		assert_int_equal(json_integer_value(json_object_get(o, "write_bytes_per_s")),
				 20000000);
		assert_true(json_real_value(json_object_get(o, "avg_wait_us")) == 100.0);
		assert_int_equal(json_integer_value(json_object_get(o, "throttled_us")), 500000);
		assert_true(json_real_value(json_object_get(o, "window_s")) == 2.0);
		o = json_array_get(json_object_get(json_array_get(json_object_get(doc, "jobs"), 0),
						   "mds_ops"), 0);
		assert_string_equal(json_string_value(json_object_get(o, "op")), "MDS_LOOKUP");
		assert_int_equal(json_integer_value(json_object_get(o, "count")), 10);
		assert_true(json_real_value(json_object_get(o, "per_s")) == 5.0);
		json_decref(doc);
		n++;
	}
	free(copy);
	assert_int_equal(n, 3);
}

/* --watch across an OSS restart (its period is shorter than the interval:
 * its totals are the interval's, over its period) and across an OSS that
 * missed the previous snapshot (reported since its start). */
static void test_qos_jobstats_watch_restart(void **state)
{
	fixture *x = *state;
	json_t *doc, *oss, *jobs, *o;

	x->a.restarted = 1;
	x->b.fail_calls = 1;
	assert_int_equal(run(x, "--json", "jobstats", "--watch", "0.01", "--count", "1", NULL),
			 0);
	doc = output_json(x);
	assert_string_equal(json_string_value(json_object_get(doc, "window")), "interval");
	oss = json_object_get(doc, "oss");
	o = json_array_get(oss, 0);
	assert_string_equal(json_string_value(json_object_get(o, "status")), "ok");
	assert_true(json_real_value(json_object_get(o, "window_s")) == 0.5);
	o = json_array_get(oss, 1);
	assert_true(json_real_value(json_object_get(o, "window_s")) == 3600);
	jobs = json_object_get(doc, "jobs");
	o = json_array_get(json_object_get(json_array_get(jobs, 0), "osts"), 0);
	assert_int_equal(json_integer_value(json_object_get(o, "ost")), 0);
	assert_int_equal(json_integer_value(json_object_get(o, "read_bytes")), 100000000);
	assert_int_equal(json_integer_value(json_object_get(o, "read_bytes_per_s")), 200000000);
	o = json_array_get(json_object_get(json_array_get(jobs, 0), "osts"), 1);
	assert_int_equal(json_integer_value(json_object_get(o, "ost")), 2);
	assert_int_equal(json_integer_value(json_object_get(o, "read_bytes")), 7 << 20);
	assert_true(json_real_value(json_object_get(o, "window_s")) == 3600);
	json_decref(doc);
}

/* The MDS failing on JOBSTATS (an MDS without it, an error, garbage): its
 * row says so and the OSSes' data is shown.  Nobody answering is an error. */
static void test_qos_jobstats_mds_error(void **state)
{
	fixture *x = *state;
	const char *s;
	json_t *doc, *o;

	x->mds.op_status[PFS_OP_MDS_JOBSTATS] = -EOPNOTSUPP;
	assert_int_equal(run(x, "jobstats", NULL), 0);
	s = output(x);
	/* the report's time is then the latest OSS snapshot */
	assert_contains(s, "jobstats at 2027-01-15T08:00:00.000Z, since each server started");
	assert_line(s, "MDS ", "  -                               -  error: unknown opcode");
	assert_line(s, "ossA ", "3600.0s  ok");
	assert_contains(s, "j1     0        100         200");
	assert_contains(s, "no MDS operations (error: unknown opcode)\n");
	assert_int_equal(x->a.nreq[PFS_OP_OSS_QOS_STATS], 1);

	reset_output(x);
	x->mds.op_status[PFS_OP_MDS_JOBSTATS] = 0;
	x->mds.mode = R_GARBAGE;
	assert_int_equal(run(x, "--json", "jobstats", NULL), 0);
	doc = output_json(x);
	o = json_object_get(doc, "mds");
	assert_string_equal(json_string_value(json_object_get(o, "status")), "malformed reply");
	assert_int_equal(json_integer_value(json_object_get(o, "errno")), -EBADMSG);
	assert_int_equal(json_integer_value(json_object_get(doc, "snapshot_ns")),
			 (json_int_t)T0 + 2000000000);
	o = json_array_get(json_object_get(doc, "jobs"), 0);
	assert_int_equal(json_array_size(json_object_get(o, "mds_ops")), 0);
	assert_int_equal(json_array_size(json_object_get(o, "osts")), 2);
	json_decref(doc);

	/* nobody answers: the MDS's error, nothing printed */
	reset_output(x);
	x->mds.mode = R_CANNED;
	x->mds.op_status[PFS_OP_MDS_JOBSTATS] = -EACCES;
	x->a.status = x->b.status = -EIO;
	assert_int_equal(run(x, "jobstats", NULL), -EACCES);
	assert_string_equal(output(x), "");
	assert_contains(message(x), "jobstats (and no OSS answered) on MDS 127.0.0.1:");
	assert_contains(message(x), "only root, or the job's owner");
}

/* ------------------------------------------------------------------ nrs */

static void check_rule_req(const fake *f, int verb, const char *name, const char *expr)
{
	pfs_rbuf r;
	char s[300];

	assert_int_equal(f->last_op, PFS_OP_OSS_NRS_RULE);
	assert_tagged(f);
	pfs_rbuf_init(&r, f->last_req, f->last_len);
	assert_int_equal(pfs_rbuf_u8(&r), verb);
	pfs_rbuf_cstr(&r, s, sizeof(s));
	assert_string_equal(s, name);
	if (expr) {
		pfs_rbuf_cstr(&r, s, sizeof(s));
		assert_string_equal(s, expr);
	}
	assert_int_equal(pfs_rbuf_done(&r), 0);
}

static void test_qos_nrs_start(void **state)
{
	fixture *x = *state;
	char want[400];
	json_t *doc, *oss;

	assert_int_equal(run(x, "nrs", "tbf", "rule", "start", "r1",
			     "jobid={j1 j2} opcode={write} rate=100MB/s", NULL), 0);
	check_rule_req(&x->a, PFS_NRS_START, "r1", "jobid={j1 j2} opcode={write} rate=100MB/s");
	check_rule_req(&x->b, PFS_NRS_START, "r1", "jobid={j1 j2} opcode={write} rate=100MB/s");
	snprintf(want, sizeof(want),
		 "OSS   ADDRESS          RESULT\n"
		 "ossA  127.0.0.1:%-5u  ok\n"
		 "ossB  127.0.0.1:%-5u  ok\n", x->a.port, x->b.port);
	/* ports have 4 or 5 digits: compare line by line loosely */
	assert_contains(output(x), "OSS   ADDRESS");
	snprintf(want, sizeof(want), "ossA  127.0.0.1:%u", x->a.port);
	assert_contains(output(x), want);
	assert_int_equal(x->a.nreq[PFS_OP_OSS_NRS_RULE], 1);
	assert_int_equal(x->b.nreq[PFS_OP_OSS_NRS_RULE], 1);

	/* --ost: only the OSS serving it, with ost=N added */
	reset_output(x);
	assert_int_equal(run(x, "--json", "nrs", "tbf", "rule", "change", "r1", "rate=1G",
			     "--ost", "1", NULL), 0);
	assert_int_equal(x->a.nreq[PFS_OP_OSS_NRS_RULE], 2);
	assert_int_equal(x->b.nreq[PFS_OP_OSS_NRS_RULE], 1);
	check_rule_req(&x->a, PFS_NRS_CHANGE, "r1", "rate=1G ost=1");
	doc = output_json(x);
	assert_string_equal(json_string_value(json_object_get(doc, "verb")), "change");
	assert_string_equal(json_string_value(json_object_get(doc, "name")), "r1");
	assert_string_equal(json_string_value(json_object_get(doc, "expr")), "rate=1G ost=1");
	oss = json_object_get(doc, "oss");
	assert_int_equal(json_array_size(oss), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(oss, 0), "status")),
			    "ok");
	json_decref(doc);

	reset_output(x);
	assert_int_equal(run(x, "nrs", "tbf", "rule", "stop", "r1", "--ost", "2", NULL), 0);
	check_rule_req(&x->b, PFS_NRS_STOP, "r1", NULL);
	assert_int_equal(x->a.nreq[PFS_OP_OSS_NRS_RULE], 2);

	/* ost= in the rule: only the OSS serving it, text as given */
	assert_int_equal(run(x, "nrs", "tbf", "rule", "start", "r3", "rate=1M ost=2", NULL), 0);
	check_rule_req(&x->b, PFS_NRS_START, "r3", "rate=1M ost=2");
	assert_int_equal(x->a.nreq[PFS_OP_OSS_NRS_RULE], 2);
	assert_int_equal(x->b.nreq[PFS_OP_OSS_NRS_RULE], 3);
	assert_int_equal(run(x, "nrs", "tbf", "rule", "start", "r3", "rate=1M ost=5", NULL),
			 -ENOENT);
	assert_contains(message(x), "no OSS serves OST 5");
	/* an odd ost= value is refused here, by the OSS's own parser, naming
	 * the word; nothing is sent */
	reset_output(x);
	assert_int_equal(run(x, "nrs", "tbf", "rule", "start", "r3", "rate=1M ost=x", NULL),
			 -EINVAL);
	assert_contains(message(x), "bad rule");
	assert_contains(message(x), "ost");
	assert_int_equal(x->a.nreq[PFS_OP_OSS_NRS_RULE], 2);
	assert_int_equal(x->b.nreq[PFS_OP_OSS_NRS_RULE], 3);
	/* a policy's rule name */
	reset_output(x);
	x->a.status = -EPERM;
	assert_int_equal(run(x, "nrs", "tbf", "rule", "stop", "mds.j1", NULL), -EPERM);
	assert_contains(output(x), "error: Operation not permitted (names mds.* and adaptbf.* "
			"are the QoS policy's)");
	assert_contains(message(x), "1 of 2 OSSes failed");
	x->a.status = 0;

	/* --ost and ost= together, and an OST nobody serves */
	assert_int_equal(run(x, "nrs", "tbf", "rule", "start", "r2", "rate=1M ost=2", "--ost",
			     "2", NULL), -EINVAL);
	assert_contains(message(x), "either as --ost or as ost=");
	assert_int_equal(run(x, "nrs", "tbf", "rule", "stop", "r2", "--ost", "9", NULL), -ENOENT);
	assert_contains(message(x), "no OSS serves OST 9");
}

/* Rule text one OSS refuses, one OSS dead: each shown, the command fails. */
static void test_qos_nrs_errors(void **state)
{
	fixture *x = *state;
	const char *s;
	char want[300];
	json_t *doc, *oss, *o;

	x->mds.dead_oss = 1;
	/* text the parser refuses never leaves pfsadmin: the message names
	 * the word */
	assert_int_equal(run(x, "nrs", "tbf", "rule", "start", "bad", "bogus=1", NULL), -EINVAL);
	assert_contains(message(x), "unknown key 'bogus'");
	assert_int_equal(x->a.nreq[PFS_OP_OSS_NRS_RULE], 0);
	/* text the OSSes refuse (e.g. an older OSS): each one's answer */
	reset_output(x);
	x->a.status = x->b.status = -EINVAL;
	assert_int_equal(run(x, "nrs", "tbf", "rule", "start", "bad", "rate=1M", NULL), -EINVAL);
	x->a.status = x->b.status = 0;
	s = output(x);
	snprintf(want, sizeof(want), "ossA  127.0.0.1:%u  error: Invalid argument (rule text "
		 "refused)\n", x->a.port);
	assert_contains(s, want);
	snprintf(want, sizeof(want), "ossC  127.0.0.1:%u  no answer: ", x->mds.dead_port);
	assert_contains(s, want);
	assert_contains(message(x), "nrs tbf rule start bad: 3 of 3 OSSes failed");

	reset_output(x);
	x->b.status = -ENOENT;
	assert_int_equal(run(x, "--json", "nrs", "tbf", "rule", "stop", "r9", NULL), -ENOENT);
	assert_contains(message(x), "2 of 3 OSSes failed");
	doc = output_json(x);
	oss = json_object_get(doc, "oss");
	assert_int_equal(json_array_size(oss), 3);
	assert_true(json_is_null(json_object_get(doc, "expr")) ||
		    !json_object_get(doc, "expr"));
	o = json_array_get(oss, 0);
	assert_string_equal(json_string_value(json_object_get(o, "status")), "ok");
	assert_null(json_object_get(o, "errno"));
	o = json_array_get(oss, 1);
	assert_string_equal(json_string_value(json_object_get(o, "status")), "error");
	assert_int_equal(json_integer_value(json_object_get(o, "errno")), -ENOENT);
	o = json_array_get(oss, 2);
	assert_string_equal(json_string_value(json_object_get(o, "status")), "no answer");
	json_decref(doc);
}

static void test_qos_nrs_list(void **state)
{
	fixture *x = *state;
	const char *s;
	char want[300];
	json_t *doc, *oss, *rules, *o;

	assert_int_equal(run(x, "nrs", "tbf", "rule", "list", NULL), 0);
	check_rule_req(&x->a, PFS_NRS_LIST, "", NULL);
	s = output(x);
	assert_string_equal(s,
		"OSS   NAME      OST  ORIGIN  QUEUED  RULE\n"
		"ossA  r1        all  admin        4  jobid={j1 j2} rate=100MB/s\n"
		"ossA  mds_j1_0    0  mds          0  jobid={j1} rate=25MB/s ost=0\n"
		"ossB  r1        all  admin        4  jobid={j1 j2} rate=100MB/s\n");

	/* one OSS answers garbage: the other's rules, a line for it, failure */
	reset_output(x);
	x->b.mode = R_TRUNC;
	assert_int_equal(run(x, "nrs", "tbf", "rule", "list", NULL), -EBADMSG);
	s = output(x);
	assert_contains(s, "ossA  mds_j1_0");
	snprintf(want, sizeof(want), "OSS ossB (127.0.0.1:%u): malformed reply: ", x->b.port);
	assert_contains(s, want);
	assert_contains(message(x), "nrs tbf rule list: 1 of 2 OSSes failed");

	reset_output(x);
	x->b.mode = R_CANNED;
	assert_int_equal(run(x, "--json", "nrs", "tbf", "rule", "list", "--ost", "2", NULL), 0);
	assert_int_equal(x->a.nreq[PFS_OP_OSS_NRS_RULE], 2);
	doc = output_json(x);
	oss = json_object_get(doc, "oss");
	assert_int_equal(json_array_size(oss), 1);
	o = json_array_get(oss, 0);
	assert_string_equal(json_string_value(json_object_get(o, "oss")), "ossB");
	rules = json_object_get(o, "rules");
	assert_int_equal(json_array_size(rules), 1);
	o = json_array_get(rules, 0);
	assert_string_equal(json_string_value(json_object_get(o, "name")), "r1");
	assert_true(json_is_null(json_object_get(o, "ost")));
	assert_string_equal(json_string_value(json_object_get(o, "origin")), "admin");
	assert_int_equal(json_integer_value(json_object_get(o, "queued")), 4);
	json_decref(doc);
}

/* ------------------------------------------------------------ the binary */

/* Run build/bin/pfsadmin (next to build/tests) with argv; stdout and stderr
 * into *out and *err (malloc'd).  Returns the exit status. */
static int run_bin(char **out, char **err, char *const argv[])
{
	char exe[PATH_MAX], bin[PATH_MAX + 32], ofile[] = "/tmp/pfsadmin-out.XXXXXX",
		efile[] = "/tmp/pfsadmin-err.XXXXXX";
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int ofd = mkstemp(ofile), efd = mkstemp(efile), st;
	pid_t pid;

	assert_true(n > 0 && ofd >= 0 && efd >= 0);
	exe[n] = '\0';
	*strrchr(exe, '/') = '\0';
	snprintf(bin, sizeof(bin), "%s/../bin/pfsadmin", exe);
	if (access(bin, X_OK) != 0)
		skip(); /* built alone, without `make all`: nothing to run */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(ofd, 1);
		dup2(efd, 2);
		unsetenv("PFS_MDS");
		unsetenv("PFS_KEY");
		setenv("PFS_AUTH", "off", 1); /* the test servers run without keys */
		execv(bin, argv);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	for (int k = 0; k < 2; k++) {
		int fd = k ? efd : ofd;
		off_t len = lseek(fd, 0, SEEK_END);
		char *buf = calloc(1, (size_t)len + 1);

		assert_non_null(buf);
		assert_int_equal(pread(fd, buf, (size_t)len, 0), len);
		*(k ? err : out) = buf;
		close(fd);
	}
	unlink(ofile);
	unlink(efile);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_qos_binary_exit(void **state)
{
	fixture *x = *state;
	char mds[32], *out, *err, want[200];

	snprintf(mds, sizeof(mds), "127.0.0.1:%u", x->mds.port);
	{
		char *argv[] = { "pfsadmin", "--mds", mds, "job", "show", "999", NULL };

		assert_int_equal(run_bin(&out, &err, argv), 1);
		assert_string_equal(out, "");
		/* what failed, and why in words: no errno text ("No such file
		 * or directory") that would speak of files */
		snprintf(want, sizeof(want), "pfsadmin: job show 999 on MDS %s: no such job, or it "
			 "is not yours\n", mds);
		assert_string_equal(err, want);
		free(out);
		free(err);
	}
	{
		char *argv[] = { "pfsadmin", "--mds", mds, "qos", "show", "--job", "j", NULL };

		x->mds.status = -EACCES;
		assert_int_equal(run_bin(&out, &err, argv), 1);
		assert_contains(err, "only root, or the job's owner");
		assert_contains(err, "permission denied");
		free(out);
		free(err);
		x->mds.status = 0;
	}
	{
		char *argv[] = { "pfsadmin", "--mds", mds, "job", "list", NULL };

		x->mds.mode = R_GARBAGE;
		assert_int_equal(run_bin(&out, &err, argv), 1);
		assert_string_equal(out, "");
		assert_contains(err, "malformed");
		free(out);
		free(err);
		x->mds.mode = R_CANNED;
	}
	{
		char *argv[] = { "pfsadmin", "--mds", mds, "job", "register", "1", "--nodes", "0",
				 NULL };

		assert_int_equal(run_bin(&out, &err, argv), 2);
		assert_contains(err, "--nodes '0'");
		free(out);
		free(err);
	}
	{
		char *argv[] = { "pfsadmin", "--mds", mds, "job", "end", "1234", NULL };

		assert_int_equal(run_bin(&out, &err, argv), 0);
		assert_string_equal(out, "job 1234 ended\n");
		assert_string_equal(err, "");
		free(out);
		free(err);
	}
}

#define FX(t) cmocka_unit_test_setup_teardown(t, fx_setup, fx_teardown)

int main(void)
{
	const struct CMUnitTest pure[] = {
		cmocka_unit_test(test_qos_args_job),
		cmocka_unit_test(test_qos_args_other),
		cmocka_unit_test(test_qos_args_bad),
		cmocka_unit_test(test_qos_parse_rate),
		cmocka_unit_test(test_qos_fmt),
	};
	const struct CMUnitTest cmds[] = {
		FX(test_qos_job_register),
		FX(test_qos_job_end),
		FX(test_qos_job_list),
		FX(test_qos_job_show),
		FX(test_qos_job_errors),
		FX(test_qos_show_table),
		FX(test_qos_show_json),
		FX(test_qos_show_eacces),
		FX(test_qos_policy_set),
		FX(test_qos_policy_set_payload),
		FX(test_qos_coupons_regret),
		FX(test_qos_bad_replies),
		FX(test_qos_jobstats_once),
		FX(test_qos_jobstats_dead_oss),
		FX(test_qos_jobstats_watch),
		FX(test_qos_jobstats_watch_restart),
		FX(test_qos_jobstats_mds_error),
		FX(test_qos_nrs_start),
		FX(test_qos_nrs_errors),
		FX(test_qos_nrs_list),
		FX(test_qos_binary_exit),
	};
	int rc = cmocka_run_group_tests_name("admin_qos_pure", pure, NULL, NULL);

	return rc + cmocka_run_group_tests_name("admin_qos_cmd", cmds, NULL, NULL);
}
