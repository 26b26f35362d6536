/* test_cli_admin.c — pfsadmin's commands against an in-process fake MDS
 * (pfs_server on a loopback port chosen at run time) that answers with known
 * OSTs, statfs and layouts and records what it was asked: ost list and df
 * in lfs's form (golden tables), setstripe/getstripe with every option, ping,
 * errors and their messages, lfsck's counts per OST (table and JSON, dry
 * run on the wire), a silent server bounded by the timeout; and the
 * pfsadmin binary for exit statuses (help, version, bad addresses from
 * --mds and $PFS_MDS alike, unresolvable names, --timeout). */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>

#include "client/admin_args.h"
#include "client/admin_cmd.h"
#include "client/admin_df.h"
#include "client/admin_fmt.h"
#include "client/admin_lfsck.h"
#include "client/admin_stripe.h"
#include "client/admin_version.h"
#include "common/buf.h"
#include "common/layout.h"
#include "common/msg.h"
#include "common/net.h"
#include "common/rpc.h"
#include "common/server.h"

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* ------------------------------------------------------------ fake MDS */

#define TiB (1ull << 40)
#define GiB (1ull << 30)

typedef struct fake_mds {
	pthread_mutex_t lock;
	uint64_t file_ino, dir_ino, data_ino;
	uint64_t bare_ino; /* a regular file without a layout (made by mknod) */
	int fail_statfs;   /* STATFS replies -EIO */
	int unlimited;     /* STATFS as the MDS of today: ffree = 2^32 */
	int create_status; /* CREATE replies this */
	int bad_ost_list;  /* OST_LIST reply claims more entries than it has */
	int dir_default;   /* dir default: 0 none, 1 4M/3, 2 4M/0, 4 0/1, 3 4M/all (the
			    * 8-byte form), 5 0/2 from OST 2 (12 bytes, as the MDS
			    * sends it now) */
	/* recorded */
	int nreq[400];
	pfs_cred last_cred;
	uint64_t set_ino;
	uint32_t set_size, set_count, set_first;
	uint64_t cr_parent;
	char cr_name[PFS_NAME_MAX + 1];
	uint32_t cr_mode, cr_flags, cr_size, cr_count, cr_first;
	char last_job[PFS_JOBID_MAX + 1];
	int lfsck_dry;     /* LFSCK's dry_run byte (-1: not asked) */
} fake_mds;

static const pfs_ost_info fake_osts[3] = {
	{ .index = 0, .uuid = "0b1e5c3a-5f0e-4a57-9c2d-1f6e2b7d9a01", .oss = "oss1",
	  .host = "10.0.0.1", .data_port = 7001, .ctl_port = 7101, .up = 1, .total_bytes = 1 * TiB,
	  .free_bytes = 768 * GiB, .objects = 1234 },
	{ .index = 1, .uuid = "6a4f2e10-88c1-4d3b-a2f7-0c9e5d1b3e22", .oss = "oss1",
	  .host = "10.0.0.1", .data_port = 7001, .ctl_port = 7101, .up = 1, .total_bytes = 1 * TiB,
	  .free_bytes = 1 * TiB, .objects = 0 },
	{ .index = 10, .uuid = "d93c7b44-21aa-4f6e-b0d5-7e8f9a0b1c33", .oss = "oss2",
	  .host = "10.0.0.2", .data_port = 7002, .ctl_port = 7102, .up = 0, .total_bytes = 2 * TiB,
	  .free_bytes = 1 * TiB, .objects = 99 },
};

static const pfs_statfs fake_statfs = {
	.bsize = 4096, .namemax = 255,
	.blocks = (4 * TiB) / 4096, .bfree = (2816 * GiB) / 4096, .bavail = (2816 * GiB) / 4096,
	.files = 1000000, .ffree = 998766,
};

static void file_layout(pfs_layout *l)
{
	memset(l, 0, sizeof(*l));
	l->stripe_size = 1u << 20;
	l->stripe_count = 2;
	l->stripe[0].ost = 1;
	l->stripe[0].object = 0x1a;
	l->stripe[1].ost = 10;
	l->stripe[1].object = 0xdeadbeef01ull;
}

static void fake_handler(void *ctx, pfs_sconn *c, const pfs_hdr *h, uint8_t *payload)
{
	fake_mds *m = ctx;
	pfs_rbuf r;
	pfs_wbuf w;
	pfs_cred cred;
	pfs_layout l;
	uint64_t ino;
	int status = 0;

	pfs_rbuf_init(&r, payload, h->payload_len);
	pfs_wbuf_init(&w);
	pthread_mutex_lock(&m->lock);
	if (h->opcode < 400)
		m->nreq[h->opcode]++;
	pfs_hdr_jobid(h, m->last_job);
	switch (h->opcode) {
	case PFS_OP_PING:
		pfs_wbuf_bytes(&w, payload, h->payload_len);
		break;
	case PFS_OP_MDS_LFSCK: {
		/* OST 0: 12 seen, 3 orphans; OST 10 not reached */
		int dry = pfs_rbuf_u8(&r);

		if (pfs_rbuf_done(&r)) {
			status = -EBADMSG;
			break;
		}
		m->lfsck_dry = dry;
		pfs_wbuf_u64(&w, 0);
		pfs_wbuf_u32(&w, 2);
		pfs_wbuf_u32(&w, 0);
		pfs_wbuf_u8(&w, 1);
		pfs_wbuf_u64(&w, 12);
		pfs_wbuf_u64(&w, 3);
		pfs_wbuf_u64(&w, dry ? 0 : 3);
		pfs_wbuf_u32(&w, 10);
		pfs_wbuf_u8(&w, 0);
		pfs_wbuf_u64(&w, 0);
		pfs_wbuf_u64(&w, 0);
		pfs_wbuf_u64(&w, 0);
		break;
	}
	case PFS_OP_MDS_OST_LIST:
		pfs_wbuf_u32(&w, m->bad_ost_list ? 1000 : 3);
		for (int i = 0; i < 3; i++)
			pfs_ost_info_encode(&w, &fake_osts[i]);
		break;
	case PFS_OP_MDS_STATFS:
		if (pfs_cred_decode(&r, &cred) || pfs_rbuf_done(&r)) {
			status = -EBADMSG;
			break;
		}
		m->last_cred = cred;
		if (m->fail_statfs) {
			status = -EIO;
		} else if (m->unlimited) {
			pfs_statfs st = fake_statfs;

			st.ffree = 1ull << 32;
			st.files = 1234 + st.ffree;
			pfs_statfs_encode(&w, &st);
		} else {
			pfs_statfs_encode(&w, &fake_statfs);
		}
		break;
	case PFS_OP_MDS_GETLAYOUT:
		pfs_cred_decode(&r, &cred);
		ino = pfs_rbuf_u64(&r);
		if (pfs_rbuf_done(&r)) {
			status = -EBADMSG;
			break;
		}
		m->last_cred = cred;
		if (ino == m->file_ino || ino == m->data_ino) {
			file_layout(&l);
			pfs_layout_encode(&w, &l);
		} else if (ino == m->bare_ino) {
			memset(&l, 0, sizeof(l));
			if (m->set_ino == m->bare_ino)
				l.stripe_size = m->set_size ? m->set_size : 1u << 20;
			l.stripe_count = m->set_ino == m->bare_ino ? m->set_count : 0;
			for (uint32_t i = 0; i < l.stripe_count; i++) {
				l.stripe[i].ost = i;
				l.stripe[i].object = 300 + i;
			}
			pfs_layout_encode(&w, &l);
		} else if (ino == m->dir_ino) {
			/* a directory's default: size and count, no stripes */
			static const uint32_t cnt[] = { 0, 3, 0, UINT32_MAX };

			if (m->dir_default == 4) { /* setstripe -c 1 DIR: size 0, count 1 */
				pfs_wbuf_u32(&w, 0);
				pfs_wbuf_u32(&w, 1);
				break;
			}
			if (m->dir_default == 5) { /* setstripe -c 2 -i 2 DIR */
				pfs_wbuf_u32(&w, 0);
				pfs_wbuf_u32(&w, 2);
				pfs_wbuf_u32(&w, 2);
				break;
			}
			pfs_wbuf_u32(&w, m->dir_default ? 4u << 20 : 0);
			pfs_wbuf_u32(&w, cnt[m->dir_default & 3]);
		} else {
			status = -ENOENT;
		}
		break;
	case PFS_OP_MDS_SETSTRIPE:
		pfs_cred_decode(&r, &cred);
		m->set_ino = pfs_rbuf_u64(&r);
		m->set_size = pfs_rbuf_u32(&r);
		m->set_count = pfs_rbuf_u32(&r);
		m->set_first = pfs_rbuf_u32(&r);
		if (pfs_rbuf_done(&r))
			status = -EBADMSG;
		m->last_cred = cred;
		break;
	case PFS_OP_MDS_CREATE: {
		pfs_attr at = { 0 };

		pfs_cred_decode(&r, &cred);
		m->cr_parent = pfs_rbuf_u64(&r);
		pfs_rbuf_cstr(&r, m->cr_name, sizeof(m->cr_name));
		m->cr_mode = pfs_rbuf_u32(&r);
		m->cr_flags = pfs_rbuf_u32(&r);
		m->cr_size = pfs_rbuf_u32(&r);
		m->cr_count = pfs_rbuf_u32(&r);
		m->cr_first = pfs_rbuf_u32(&r);
		if (pfs_rbuf_done(&r)) {
			status = -EBADMSG;
			break;
		}
		m->last_cred = cred;
		if (m->create_status) {
			status = m->create_status;
			break;
		}
		if (m->cr_first != PFS_STRIPE_OFFSET_ANY && m->cr_first > 10) {
			status = -EINVAL; /* no such OST (fake_osts: 0, 1, 10) */
			break;
		}
		at.ino = 4242;
		at.mode = m->cr_mode;
		at.nlink = 1;
		pfs_attr_encode(&w, &at);
		memset(&l, 0, sizeof(l));
		l.stripe_size = m->cr_size ? m->cr_size : 1u << 20;
		/* "all" (UINT32_MAX) = the two OSTs that are up */
		l.stripe_count = m->cr_count == UINT32_MAX ? 2 : m->cr_count ? m->cr_count : 1;
		for (uint32_t i = 0; i < l.stripe_count; i++) {
			l.stripe[i].ost = m->cr_first == PFS_STRIPE_OFFSET_ANY ? i : m->cr_first + i;
			l.stripe[i].object = 100 + i;
		}
		pfs_layout_encode(&w, &l);
		break;
	}
	default:
		status = -EOPNOTSUPP;
	}
	pthread_mutex_unlock(&m->lock);
	if (status)
		pfs_sconn_reply(c, h, status, NULL, 0, NULL, 0);
	else
		pfs_sconn_reply(c, h, 0, w.data, w.len, NULL, 0);
	pfs_wbuf_free(&w);
	free(payload);
}

typedef struct fixture {
	fake_mds m;
	pfs_server *srv;
	pfs_rpc_pool *pool;
	char *out, *errs;
	size_t outlen, errlen;
	FILE *f, *ef;
	cli_admin a;
	char msg[1024];
	char dir[64], file[128], data[128], bare[128];
} fixture;

static int fx_setup(void **state)
{
	pfs_server_opts so = { .host = "127.0.0.1", .port = 0, .name = "fake-mds" };
	pfs_rpc_opts ro = { .max_conns = 2, .timeout_ms = 10000, .retry_ms = 2000 };
	fixture *x = calloc(1, sizeof(*x));
	struct stat st;

	*state = x;
	if (!x)
		return -1;
	pthread_mutex_init(&x->m.lock, NULL);
	snprintf(x->dir, sizeof(x->dir), "/tmp/pfs-admin-fx.XXXXXX");
	if (!mkdtemp(x->dir))
		return -1;
	snprintf(x->file, sizeof(x->file), "%s/empty", x->dir);
	snprintf(x->data, sizeof(x->data), "%s/data", x->dir);
	snprintf(x->bare, sizeof(x->bare), "%s/bare", x->dir);
	write_file(x->file, "");
	write_file(x->data, "some bytes");
	write_file(x->bare, "");
	if (stat(x->dir, &st))
		return -1;
	x->m.dir_ino = st.st_ino;
	if (stat(x->file, &st))
		return -1;
	x->m.file_ino = st.st_ino;
	if (stat(x->data, &st))
		return -1;
	x->m.data_ino = st.st_ino;
	if (stat(x->bare, &st))
		return -1;
	x->m.bare_ino = st.st_ino;
	if (pfs_server_start(&so, fake_handler, &x->m, &x->srv))
		return -1;
	if (pfs_rpc_pool_create("127.0.0.1", pfs_server_port(x->srv), &ro, &x->pool))
		return -1;
	x->f = open_memstream(&x->out, &x->outlen);
	x->ef = open_memstream(&x->errs, &x->errlen);
	if (!x->f || !x->ef)
		return -1;
	if (cli_admin_init(&x->a, x->pool, x->f, 0))
		return -1;
	x->a.err = x->ef;
	return 0;
}

static int fx_teardown(void **state)
{
	fixture *x = *state;
	char cmd[400];

	if (!x)
		return 0;
	if (x->f)
		fclose(x->f);
	if (x->ef)
		fclose(x->ef);
	free(x->out);
	free(x->errs);
	cli_admin_fini(&x->a);
	pfs_rpc_pool_destroy(x->pool);
	if (x->srv)
		pfs_server_stop(x->srv);
	pthread_mutex_destroy(&x->m.lock);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", x->dir);
	if (x->dir[0] && strstr(x->dir, "pfs-admin-fx"))
		(void)!system(cmd);
	free(x);
	return 0;
}

/* Output written so far (flushed; stays owned by the fixture). */
static const char *output(fixture *x)
{
	fflush(x->f);
	return x->out ? x->out : "";
}

/* What went to a->err. */
static const char *errors(fixture *x)
{
	fflush(x->ef);
	return x->errs ? x->errs : "";
}

static void reset_output(fixture *x)
{
	fclose(x->f);
	free(x->out);
	x->out = NULL;
	x->f = open_memstream(&x->out, &x->outlen);
	assert_non_null(x->f);
	x->a.out = x->f;
}

static json_t *output_json(fixture *x)
{
	json_error_t je;
	json_t *j = json_loads(output(x), 0, &je);

	if (!j)
		fail_msg("bad JSON (%s): %s", je.text, output(x));
	return j;
}

/* The message pfsadmin prints for rc. */
static const char *message(fixture *x, int rc)
{
	return cli_admin_errmsg(&x->a, rc, x->msg, sizeof(x->msg));
}

static void assert_contains(const char *s, const char *sub)
{
	if (!strstr(s, sub))
		fail_msg("'%s' lacks '%s'", s, sub);
}

static int count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* The object has exactly these keys, in this order. */
static void assert_keys(json_t *o, const char *const *keys)
{
	const char *k;
	json_t *v;
	size_t i = 0;

	assert_true(json_is_object(o));
	json_object_foreach(o, k, v) {
		if (!keys[i])
			fail_msg("extra key '%s'", k);
		if (strcmp(k, keys[i]) != 0)
			fail_msg("key %zu is '%s', want '%s'", i, k, keys[i]);
		i++;
	}
	if (keys[i])
		fail_msg("key '%s' missing", keys[i]);
}

#define JI(o, k) json_integer_value(json_object_get((o), (k)))
#define JS(o, k) json_string_value(json_object_get((o), (k)))

/* ----------------------------------------------------------- lfsck */

static void test_admin_cmd_lfsck(void **state)
{
	fixture *x = *state;
	cli_admin_args args = { .cmd = CLI_ADMIN_LFSCK };

	x->m.lfsck_dry = -1;
	assert_int_equal(cli_admin_lfsck(&x->a, &args), 0);
	assert_int_equal(x->m.lfsck_dry, 0);
	assert_string_equal(output(x),
		"OST          seen  referenced  orphaned  destroyed\n"
		"pfs-OST0000    12           9         3          3\n"
		"pfs-OST000a  : not reached (down or did not answer)\n"
		"3 orphan object(s) found, 3 queued for destruction; 1 OST(s) not checked\n");
}

static void test_admin_cmd_lfsck_dry_json(void **state)
{
	static const char *const keys[] = {
		"index", "name", "reached", "seen", "referenced", "orphaned", "destroyed", NULL,
	};
	fixture *x = *state;
	cli_admin_args args = { .cmd = CLI_ADMIN_LFSCK, .dry_run = 1 };
	json_t *j, *o;

	x->a.json = 1;
	assert_int_equal(cli_admin_lfsck(&x->a, &args), 0);
	assert_int_equal(x->m.lfsck_dry, 1);
	j = output_json(x);
	assert_true(json_is_true(json_object_get(j, "dry_run")));
	assert_int_equal(JI(j, "seen"), 12);
	assert_int_equal(JI(j, "referenced"), 9);
	assert_int_equal(JI(j, "orphaned"), 3);
	assert_int_equal(JI(j, "destroyed"), 0);
	assert_int_equal(json_array_size(json_object_get(j, "osts")), 2);
	o = json_array_get(json_object_get(j, "osts"), 0);
	assert_keys(o, keys);
	assert_string_equal(JS(o, "name"), "pfs-OST0000");
	assert_int_equal(JI(o, "orphaned"), 3);
	o = json_array_get(json_object_get(j, "osts"), 1);
	assert_keys(o, keys);
	assert_int_equal(JI(o, "index"), 10);
	assert_true(json_is_false(json_object_get(o, "reached")));
	assert_true(json_is_null(json_object_get(o, "seen")));
	json_decref(j);
}

/* ----------------------------------------------------------- ost list */

static void test_admin_cmd_ost_list_table(void **state)
{
	fixture *x = *state;
	char want[PFS_JOBID_MAX + 1];

	assert_int_equal(cli_admin_ost_list(&x->a), 0);
	assert_string_equal(output(x),
		"IDX  NAME         UUID                                  OSS   ADDRESS        "
		"STATE  SIZE  USED  FREE  OBJECTS\n"
		"  0  pfs-OST0000  0b1e5c3a-5f0e-4a57-9c2d-1f6e2b7d9a01  oss1  10.0.0.1:7001  "
		"up     1.0T  256G  768G     1234\n"
		"  1  pfs-OST0001  6a4f2e10-88c1-4d3b-a2f7-0c9e5d1b3e22  oss1  10.0.0.1:7001  "
		"up     1.0T    0B  1.0T        0\n"
		" 10  pfs-OST000a  d93c7b44-21aa-4f6e-b0d5-7e8f9a0b1c33  oss2  10.0.0.2:7002  "
		"down   2.0T  1.0T  1.0T       99\n");
	assert_int_equal(x->m.nreq[PFS_OP_MDS_OST_LIST], 1);
	snprintf(want, sizeof(want), "pfsadmin.%u", (unsigned)getuid());
	assert_string_equal(x->m.last_job, want);
}

static void test_admin_cmd_ost_list_json(void **state)
{
	static const char *const keys[] = {
		"index", "name", "uuid", "oss", "state", "host", "data_port", "ctl_port",
		"total_bytes", "used_bytes", "free_bytes", "available_bytes", "used_pct",
		"objects", NULL,
	};
	fixture *x = *state;
	json_t *j, *osts, *o;

	x->a.json = 1;
	x->a.fsname = "scratch";
	assert_int_equal(cli_admin_ost_list(&x->a), 0);
	j = output_json(x);
	assert_string_equal(JS(j, "fsname"), "scratch");
	osts = json_object_get(j, "osts");
	assert_int_equal(json_array_size(osts), 3);
	o = json_array_get(osts, 2);
	assert_keys(o, keys);
	assert_int_equal(JI(o, "index"), 10);
	assert_string_equal(JS(o, "name"), "scratch-OST000a");
	assert_string_equal(JS(o, "uuid"), "d93c7b44-21aa-4f6e-b0d5-7e8f9a0b1c33");
	assert_string_equal(JS(o, "oss"), "oss2");
	assert_string_equal(JS(o, "host"), "10.0.0.2");
	assert_int_equal(JI(o, "data_port"), 7002);
	assert_int_equal(JI(o, "ctl_port"), 7102);
	assert_string_equal(JS(o, "state"), "down");
	assert_int_equal(JI(o, "total_bytes"), 2 * TiB);
	assert_int_equal(JI(o, "used_bytes"), 1 * TiB);
	assert_int_equal(JI(o, "free_bytes"), 1 * TiB);
	assert_int_equal(JI(o, "available_bytes"), 1 * TiB);
	assert_int_equal(JI(o, "used_pct"), 50);
	assert_int_equal(JI(o, "objects"), 99);
	o = json_array_get(osts, 0);
	assert_string_equal(JS(o, "state"), "up");
	assert_int_equal(JI(o, "used_bytes"), 256 * GiB);
	json_decref(j);
}

/* ------------------------------------------------------------------ df */

/* lfs df: target names, an MDT line (no space of its own: "-"), the down
 * OST as an inactive device, a summary of the OSTs that are up. */
static void test_admin_cmd_df_table(void **state)
{
	fixture *x = *state;

	x->a.mnt = "/mnt/pfs";
	assert_int_equal(cli_admin_df(&x->a, 0, 0), 0);
	assert_string_equal(output(x),
		"UUID                  1K-blocks       Used   Available  Use%  Mounted on\n"
		"pfs-MDT0000_UUID              -          -           -     -  /mnt/pfs[MDT:0]\n"
		"pfs-OST0000_UUID     1073741824  268435456   805306368   25%  /mnt/pfs[OST:0]\n"
		"pfs-OST0001_UUID     1073741824          0  1073741824    0%  /mnt/pfs[OST:1]\n"
		"pfs-OST000a_UUID     : inactive device\n"
		"\n"
		"filesystem_summary:  2147483648  268435456  1879048192   13%  /mnt/pfs\n");
	/* the MDT line comes from STATFS, sent with our credentials */
	assert_int_equal(x->m.nreq[PFS_OP_MDS_STATFS], 1);
	assert_int_equal(x->m.last_cred.uid, getuid());
	assert_int_equal(x->m.last_cred.gid, getgid());
}

static void test_admin_cmd_df_human(void **state)
{
	fixture *x = *state;

	x->a.fsname = "scratch";
	assert_int_equal(cli_admin_df(&x->a, 1, 0), 0);
	assert_string_equal(output(x),
		"UUID                  bytes  Used  Available  Use%  Mounted on\n"
		"scratch-MDT0000_UUID      -     -          -     -  [MDT:0]\n"
		"scratch-OST0000_UUID   1.0T  256G       768G   25%  [OST:0]\n"
		"scratch-OST0001_UUID   1.0T    0B       1.0T    0%  [OST:1]\n"
		"scratch-OST000a_UUID  : inactive device\n"
		"\n"
		"filesystem_summary:    2.0T  256G       1.8T   13%\n");
}

/* df -i: the MDT's inodes; OSTs have objects but no limit.  The MDS of
 * today reports no inode limit (ffree = 2^32): "-", not 4294967296. */
static void test_admin_cmd_df_inodes(void **state)
{
	fixture *x = *state;

	assert_int_equal(cli_admin_df(&x->a, 0, 1), 0);
	assert_string_equal(output(x),
		"UUID                  Inodes  IUsed   IFree  IUse%  Mounted on\n"
		"pfs-MDT0000_UUID     1000000   1234  998766     1%  [MDT:0]\n"
		"pfs-OST0000_UUID           -   1234       -      -  [OST:0]\n"
		"pfs-OST0001_UUID           -      0       -      -  [OST:1]\n"
		"pfs-OST000a_UUID     : inactive device\n"
		"\n"
		"filesystem_summary:  1000000   1234  998766     1%\n");
	reset_output(x);
	x->m.unlimited = 1;
	assert_int_equal(cli_admin_df(&x->a, 0, 1), 0);
	assert_string_equal(output(x),
		"UUID                 Inodes  IUsed  IFree  IUse%  Mounted on\n"
		"pfs-MDT0000_UUID          -   1234      -      -  [MDT:0]\n"
		"pfs-OST0000_UUID          -   1234      -      -  [OST:0]\n"
		"pfs-OST0001_UUID          -      0      -      -  [OST:1]\n"
		"pfs-OST000a_UUID     : inactive device\n"
		"\n"
		"filesystem_summary:       -   1234      -      -\n");
	reset_output(x);
	assert_int_equal(cli_admin_df(&x->a, 0, 0), 0);
	assert_null(strstr(output(x), "4294967296"));
}

/* The documented keys, each with a number or null; the summary leaves the
 * down OST out. */
static void test_admin_cmd_df_json(void **state)
{
	static const char *const space[] = {
		"total_bytes", "used_bytes", "free_bytes", "available_bytes", "used_pct",
		"total_inodes", "used_inodes", "free_inodes", "used_inodes_pct",
	};
	static const char *const ost_keys[] = {
		"index", "name", "uuid", "oss", "state", "total_bytes", "used_bytes",
		"free_bytes", "available_bytes", "used_pct", "total_inodes", "used_inodes",
		"free_inodes", "used_inodes_pct", NULL,
	};
	static const char *const mdt_keys[] = {
		"index", "name", "state", "total_bytes", "used_bytes", "free_bytes",
		"available_bytes", "used_pct", "total_inodes", "used_inodes", "free_inodes",
		"used_inodes_pct", NULL,
	};
	static const char *const sum_keys[] = {
		"osts_up", "osts_down", "total_bytes", "used_bytes", "free_bytes",
		"available_bytes", "used_pct", "total_inodes", "used_inodes", "free_inodes",
		"used_inodes_pct", NULL,
	};
	fixture *x = *state;
	json_t *j, *sum, *o, *mdt;

	x->a.json = 1;
	x->m.unlimited = 1;
	assert_int_equal(cli_admin_df(&x->a, 1, 0), 0);
	j = output_json(x);
	assert_string_equal(JS(j, "fsname"), "pfs");
	assert_int_equal(json_array_size(json_object_get(j, "osts")), 3);
	for (size_t i = 0; i < 3; i++)
		assert_keys(json_array_get(json_object_get(j, "osts"), i), ost_keys);
	o = json_array_get(json_object_get(j, "osts"), 0);
	assert_string_equal(JS(o, "name"), "pfs-OST0000");
	assert_int_equal(JI(o, "used_pct"), 25);
	assert_int_equal(JI(o, "free_bytes"), 768 * GiB);
	assert_int_equal(JI(o, "available_bytes"), 768 * GiB);
	assert_int_equal(JI(o, "used_inodes"), 1234);
	assert_true(json_is_null(json_object_get(o, "total_inodes")));
	o = json_array_get(json_object_get(j, "osts"), 2);
	assert_string_equal(JS(o, "state"), "down");
	assert_int_equal(JI(o, "total_bytes"), 2 * TiB); /* last known, not summed */

	mdt = json_array_get(json_object_get(j, "mdts"), 0);
	assert_keys(mdt, mdt_keys);
	assert_string_equal(JS(mdt, "name"), "pfs-MDT0000");
	for (size_t i = 0; i < 5; i++)
		assert_true(json_is_null(json_object_get(mdt, space[i])));
	assert_int_equal(JI(mdt, "used_inodes"), 1234);
	assert_true(json_is_null(json_object_get(mdt, "total_inodes")));
	assert_true(json_is_null(json_object_get(mdt, "free_inodes")));

	sum = json_object_get(j, "summary");
	assert_keys(sum, sum_keys);
	assert_int_equal(JI(sum, "osts_up"), 2);
	assert_int_equal(JI(sum, "osts_down"), 1);
	assert_int_equal(JI(sum, "total_bytes"), 2 * TiB);
	assert_int_equal(JI(sum, "used_bytes"), 256 * GiB);
	assert_int_equal(JI(sum, "free_bytes"), 1792 * GiB);
	assert_int_equal(JI(sum, "available_bytes"), 1792 * GiB);
	assert_int_equal(JI(sum, "used_pct"), 13);
	assert_int_equal(JI(sum, "used_inodes"), 1234);
	json_decref(j);

	/* with the limit reported, the inode numbers are there */
	reset_output(x);
	x->m.unlimited = 0;
	assert_int_equal(cli_admin_df(&x->a, 0, 1), 0);
	j = output_json(x);
	sum = json_object_get(j, "summary");
	assert_int_equal(JI(sum, "total_inodes"), 1000000);
	assert_int_equal(JI(sum, "free_inodes"), 998766);
	assert_int_equal(JI(sum, "used_inodes_pct"), 1);
	json_decref(j);
}

/* An MDS error leaves stdout empty and says what failed. */
static void test_admin_cmd_df_error(void **state)
{
	fixture *x = *state;
	int rc;

	x->m.fail_statfs = 1;
	rc = cli_admin_df(&x->a, 0, 0);
	assert_int_equal(rc, -EIO);
	assert_string_equal(output(x), "");
	assert_string_equal(message(x, rc), "df: Input/output error");
}

static void test_admin_cmd_bad_reply(void **state)
{
	fixture *x = *state;
	char want[200];
	int rc;

	x->m.bad_ost_list = 1;
	rc = cli_admin_ost_list(&x->a);
	assert_int_equal(rc, -EBADMSG);
	assert_string_equal(output(x), "");
	snprintf(want, sizeof(want), "ost list: malformed OST list reply from MDS 127.0.0.1:%u",
		 pfs_server_port(x->srv));
	assert_string_equal(message(x, rc), want);
}

/* ----------------------------------------------------------- getstripe */

static void test_admin_cmd_getstripe_file(void **state)
{
	fixture *x = *state;
	const char *s;
	char head[400];

	assert_int_equal(cli_admin_getstripe(&x->a, (const char *[]){ x->file }, 1, 0, 0), 0);
	s = output(x);
	snprintf(head, sizeof(head), "%s\n  stripe_size:  1048576 (1.0M)\n  stripe_count: 2\n"
		 "  stripe_index: 1\n", x->file);
	assert_memory_equal(s, head, strlen(head));
	assert_string_equal(s + strlen(head),
			    "STRIPE  OST  OBJECT_ID           OBJECT\n"
			    "     0    1  0x1a                    26\n"
			    "     1   10  0xdeadbeef01  956397711105\n");
	assert_int_equal(x->m.nreq[PFS_OP_MDS_GETLAYOUT], 1);
	assert_int_equal(x->m.last_cred.uid, getuid());
}

static void test_admin_cmd_getstripe_json(void **state)
{
	static const char *const keys[] = {
		"path", "ino", "type", "stripe_size", "stripe_count", "stripe_index", "stripes",
		NULL,
	};
	static const char *const stripe_keys[] = { "index", "ost", "object_id", "object", NULL };
	fixture *x = *state;
	json_t *j, *st;

	x->a.json = 1;
	assert_int_equal(cli_admin_getstripe(&x->a, (const char *[]){ x->file }, 1, 0, 0), 0);
	j = output_json(x);
	assert_keys(j, keys);
	assert_string_equal(JS(j, "path"), x->file);
	assert_int_equal(JI(j, "ino"), x->m.file_ino);
	assert_string_equal(JS(j, "type"), "file");
	assert_int_equal(JI(j, "stripe_size"), 1 << 20);
	assert_int_equal(JI(j, "stripe_count"), 2);
	assert_int_equal(JI(j, "stripe_index"), 1);
	st = json_object_get(j, "stripes");
	assert_int_equal(json_array_size(st), 2);
	assert_keys(json_array_get(st, 1), stripe_keys);
	assert_int_equal(JI(json_array_get(st, 1), "ost"), 10);
	assert_string_equal(JS(json_array_get(st, 1), "object_id"), "0xdeadbeef01");
	assert_int_equal(JI(json_array_get(st, 1), "object"), 0xdeadbeef01ll);
	json_decref(j);
}

static void test_admin_cmd_getstripe_dir(void **state)
{
	fixture *x = *state;
	const char *dir[] = { x->dir };
	const char *s;
	json_t *j;

	assert_int_equal(cli_admin_getstripe(&x->a, dir, 1, 0, 0), 0);
	s = output(x);
	assert_contains(s, "  default stripe_size:  file system default\n"
			   "  default stripe_count: file system default\n"
			   "  default stripe_index: -1 (the MDS chooses)\n");
	reset_output(x);
	x->m.dir_default = 1;
	assert_int_equal(cli_admin_getstripe(&x->a, dir, 1, 0, 0), 0);
	s = output(x);
	assert_contains(s, "default stripe_size:  4194304 (4.0M)\n");
	assert_contains(s, "default stripe_count: 3\n");
	assert_null(strstr(s, "OBJECT_ID")); /* no objects for a directory */

	/* the form the real MDS sends: size, count 0 */
	x->m.dir_default = 2;
	x->a.json = 1;
	reset_output(x);
	assert_int_equal(cli_admin_getstripe(&x->a, dir, 1, 0, 0), 0);
	j = output_json(x);
	assert_string_equal(JS(j, "type"), "directory");
	assert_int_equal(JI(j, "stripe_size"), 4 << 20);
	assert_int_equal(JI(j, "stripe_count"), 0);
	assert_int_equal(JI(j, "stripe_index"), -1);
	assert_int_equal(json_array_size(json_object_get(j, "stripes")), 0);
	json_decref(j);

	x->m.dir_default = 3;
	x->a.json = 0;
	reset_output(x);
	assert_int_equal(cli_admin_getstripe(&x->a, dir, 1, 0, 0), 0);
	assert_contains(output(x), "default stripe_count: -1 (all OSTs)\n");

	/* a count without a size (setstripe -c 1 DIR) is a valid default */
	x->m.dir_default = 4;
	reset_output(x);
	assert_int_equal(cli_admin_getstripe(&x->a, dir, 1, 0, 0), 0);
	s = output(x);
	assert_contains(s, "default stripe_size:  file system default\n");
	assert_contains(s, "default stripe_count: 1\n");
}

static void test_admin_cmd_getstripe_missing(void **state)
{
	fixture *x = *state;
	char p[400];
	const char *paths[] = { p };
	int rc;

	snprintf(p, sizeof(p), "%s/nope", x->dir);
	rc = cli_admin_getstripe(&x->a, paths, 1, 0, 0);
	assert_int_equal(rc, -ENOENT);
	assert_string_equal(output(x), "");
	assert_string_equal(errors(x), ""); /* one path: the caller reports */
	assert_int_equal(x->a.reported, 0);
	assert_contains(message(x, rc), p);
	assert_contains(message(x, rc), "No such file or directory");
	assert_int_equal(x->m.nreq[PFS_OP_MDS_GETLAYOUT], 0);
}

/* lfs getstripe -c/-S/-i: the value alone for one path and one selector. */
static void test_admin_cmd_getstripe_selectors(void **state)
{
	fixture *x = *state;
	const char *one[] = { x->file }, *two[] = { x->file, x->dir };
	char want[600];

	assert_int_equal(cli_admin_getstripe(&x->a, one, 1, CLI_SEL_COUNT, 0), 0);
	assert_string_equal(output(x), "2\n");
	reset_output(x);
	assert_int_equal(cli_admin_getstripe(&x->a, one, 1, CLI_SEL_SIZE, 0), 0);
	assert_string_equal(output(x), "1048576\n");
	reset_output(x);
	assert_int_equal(cli_admin_getstripe(&x->a, one, 1, CLI_SEL_INDEX, 0), 0);
	assert_string_equal(output(x), "1\n");
	reset_output(x);
	assert_int_equal(cli_admin_getstripe(&x->a, one, 1, CLI_SEL_COUNT | CLI_SEL_SIZE, 0), 0);
	assert_string_equal(output(x), "stripe_count: 2\nstripe_size: 1048576\n");
	reset_output(x);
	x->m.dir_default = 3;
	assert_int_equal(cli_admin_getstripe(&x->a, two, 2, CLI_SEL_COUNT | CLI_SEL_INDEX, 0), 0);
	snprintf(want, sizeof(want), "%s\n  stripe_count: 2\n  stripe_index: 1\n"
		 "%s\n  stripe_count: -1\n  stripe_index: -1\n", x->file, x->dir);
	assert_string_equal(output(x), want);
}

static void test_admin_cmd_getstripe_yaml(void **state)
{
	fixture *x = *state;
	const char *two[] = { x->file, x->dir };
	char want[1200];

	x->m.dir_default = 1;
	assert_int_equal(cli_admin_getstripe(&x->a, two, 2, CLI_SEL_COUNT, 1), 0);
	snprintf(want, sizeof(want),
		 "- path: \"%s\"\n  ino: %llu\n  type: file\n  stripe_size: 1048576\n"
		 "  stripe_count: 2\n  stripe_index: 1\n  stripes:\n"
		 "    - index: 0\n      ost: 1\n      object_id: \"0x1a\"\n      object: 26\n"
		 "    - index: 1\n      ost: 10\n      object_id: \"0xdeadbeef01\"\n"
		 "      object: 956397711105\n"
		 "- path: \"%s\"\n  ino: %llu\n  type: directory\n  stripe_size: 4194304\n"
		 "  stripe_count: 3\n  stripe_index: -1\n  stripes: []\n",
		 x->file, (unsigned long long)x->m.file_ino, x->dir,
		 (unsigned long long)x->m.dir_ino);
	assert_string_equal(output(x), want);
}

/* Several paths: each is tried, a failure is reported where it happens
 * and returned at the end; the others are printed. */
static void test_admin_cmd_getstripe_several(void **state)
{
	fixture *x = *state;
	char nope[400], want[600];
	const char *three[] = { x->file, nope, x->dir };
	json_t *j, *arr;
	int rc;

	snprintf(nope, sizeof(nope), "%s/nope", x->dir);
	rc = cli_admin_getstripe(&x->a, three, 3, 0, 0);
	assert_int_equal(rc, -ENOENT);
	assert_int_equal(x->a.reported, 1);
	snprintf(want, sizeof(want), "pfsadmin: getstripe %s: No such file or directory\n", nope);
	assert_string_equal(errors(x), want);
	/* the file (4 lines and a table of 3), a blank line, the directory */
	assert_int_equal(count_lines(output(x)), 4 + 3 + 1 + 4);
	assert_contains(output(x), "  default stripe_count: file system default\n");

	reset_output(x);
	x->a.json = 1;
	rc = cli_admin_getstripe(&x->a, three, 3, 0, 0);
	assert_int_equal(rc, -ENOENT);
	j = output_json(x);
	arr = json_object_get(j, "paths");
	assert_int_equal(json_array_size(arr), 3);
	assert_int_equal(JI(json_array_get(arr, 0), "stripe_count"), 2);
	assert_string_equal(JS(json_array_get(arr, 1), "path"), nope);
	assert_int_equal(JI(json_array_get(arr, 1), "errno"), -ENOENT);
	assert_contains(JS(json_array_get(arr, 1), "error"), "No such file");
	assert_string_equal(JS(json_array_get(arr, 2), "type"), "directory");
	json_decref(j);
}

/* ----------------------------------------------------------- setstripe */

static cli_stripe_req req_cs(int have_count, int32_t count, int have_size, uint32_t size)
{
	cli_stripe_req r = { .have_count = have_count, .count = count, .have_size = have_size,
			     .size = size };

	return r;
}

static void test_admin_cmd_setstripe_dir(void **state)
{
	fixture *x = *state;
	cli_stripe_req r = req_cs(1, 8, 1, 2u << 20);

	x->a.json = 1;
	assert_int_equal(cli_admin_setstripe(&x->a, x->dir, &r), 0);
	assert_int_equal(x->m.nreq[PFS_OP_MDS_SETSTRIPE], 1);
	assert_int_equal(x->m.set_ino, x->m.dir_ino);
	assert_int_equal(x->m.set_size, 2u << 20);
	assert_int_equal(x->m.set_count, 8);
	assert_int_equal(x->m.last_cred.uid, getuid());
	assert_int_equal(x->m.last_cred.gid, getgid());
	json_decref(output_json(x)); /* one valid JSON document */
}

/* Only -S on a directory: count 0 = default. */
static void test_admin_cmd_setstripe_dir_size_only(void **state)
{
	fixture *x = *state;
	cli_stripe_req r = req_cs(0, 0, 1, 128u << 10);

	assert_int_equal(cli_admin_setstripe(&x->a, x->dir, &r), 0);
	assert_int_equal(x->m.set_size, 128u << 10);
	assert_int_equal(x->m.set_count, 0);
}

/* An existing file has its layout, empty or not: refused, nothing sent
 * but the GETLAYOUT that says so (it used to be replaced silently). */
static void test_admin_cmd_setstripe_existing_file(void **state)
{
	fixture *x = *state;
	cli_stripe_req r = req_cs(1, 3, 0, 0);
	char want[400];
	int rc;

	rc = cli_admin_setstripe(&x->a, x->file, &r);
	assert_int_equal(rc, -EEXIST);
	assert_int_equal(x->m.nreq[PFS_OP_MDS_SETSTRIPE], 0);
	assert_int_equal(x->m.nreq[PFS_OP_MDS_CREATE], 0);
	assert_string_equal(output(x), "");
	snprintf(want, sizeof(want), "setstripe %s: file already has a layout (a file gets "
		 "its layout when it is created: give setstripe a new PATH, or set a "
		 "directory's default)", x->file);
	assert_string_equal(message(x, rc), want);
	assert_null(strstr(message(x, rc), "File exists"));

	rc = cli_admin_setstripe(&x->a, x->data, &r);
	assert_int_equal(rc, -EEXIST);
	assert_contains(message(x, rc), "file already has a layout");
	assert_int_equal(x->m.nreq[PFS_OP_MDS_SETSTRIPE], 0);
}

/* A file without any layout (mknod) may get one. */
static void test_admin_cmd_setstripe_bare_file(void **state)
{
	fixture *x = *state;
	cli_stripe_req r = req_cs(1, 3, 0, 0);

	assert_int_equal(cli_admin_setstripe(&x->a, x->bare, &r), 0);
	assert_int_equal(x->m.nreq[PFS_OP_MDS_SETSTRIPE], 1);
	assert_int_equal(x->m.set_ino, x->m.bare_ino);
	assert_int_equal(x->m.set_size, 0);
	assert_int_equal(x->m.set_count, 3);
	/* and the layout is read back and shown */
	assert_int_equal(x->m.nreq[PFS_OP_MDS_GETLAYOUT], 2);
	assert_contains(output(x), "  stripe_count: 3\n");
	assert_contains(output(x), "  stripe_index: 0\n");
}

/* -d: a directory's default goes (0/0); only a directory has one. */
static void test_admin_cmd_setstripe_delete(void **state)
{
	fixture *x = *state;
	cli_stripe_req r = { .del = 1 };
	int rc;

	x->m.set_size = x->m.set_count = 99;
	assert_int_equal(cli_admin_setstripe(&x->a, x->dir, &r), 0);
	assert_int_equal(x->m.set_ino, x->m.dir_ino);
	assert_int_equal(x->m.set_size, 0);
	assert_int_equal(x->m.set_count, 0);
	assert_contains(output(x), "default stripe_count: file system default\n");

	rc = cli_admin_setstripe(&x->a, x->file, &r);
	assert_int_equal(rc, -ENOTDIR);
	assert_int_equal(x->m.nreq[PFS_OP_MDS_SETSTRIPE], 1);
	assert_contains(message(x, rc), "setstripe -d");
	assert_contains(message(x, rc), "not a directory");
}

/* -i N goes to the MDS as stripe_offset N (CREATE of a new path, SETSTRIPE
 * of a directory); -1 as PFS_STRIPE_OFFSET_ANY; an index the MDS refuses
 * is said in words. */
static void test_admin_cmd_setstripe_index(void **state)
{
	fixture *x = *state;
	cli_stripe_req r = req_cs(1, 2, 0, 0);
	char p[400];
	json_t *j;
	int rc;

	r.have_index = 1;
	r.index = 1;
	snprintf(p, sizeof(p), "%s/idx", x->dir);
	x->a.json = 1;
	assert_int_equal(cli_admin_setstripe(&x->a, p, &r), 0);
	assert_int_equal(x->m.nreq[PFS_OP_MDS_CREATE], 1);
	assert_int_equal(x->m.cr_first, 1);
	assert_int_equal(x->m.cr_count, 2);
	j = output_json(x);
	assert_int_equal(JI(j, "stripe_index"), 1);
	json_decref(j);

	/* the MDS refuses an index that is no OST */
	r.index = 99;
	snprintf(p, sizeof(p), "%s/idx99", x->dir);
	rc = cli_admin_setstripe(&x->a, p, &r);
	assert_int_equal(rc, -EINVAL);
	assert_int_equal(x->m.cr_first, 99);
	assert_contains(message(x, rc), "no OST has index 99");
	assert_null(strstr(message(x, rc), "Invalid argument"));

	/* -1: the MDS chooses */
	r.index = CLI_STRIPE_INDEX_ANY;
	snprintf(p, sizeof(p), "%s/idxany", x->dir);
	assert_int_equal(cli_admin_setstripe(&x->a, p, &r), 0);
	assert_int_equal(x->m.cr_first, PFS_STRIPE_OFFSET_ANY);

	/* a directory's default with a first OST; without -i none */
	r.index = 2;
	assert_int_equal(cli_admin_setstripe(&x->a, x->dir, &r), 0);
	assert_int_equal(x->m.nreq[PFS_OP_MDS_SETSTRIPE], 1);
	assert_int_equal(x->m.set_first, 2);
	r.have_index = 0;
	assert_int_equal(cli_admin_setstripe(&x->a, x->dir, &r), 0);
	assert_int_equal(x->m.set_first, PFS_STRIPE_OFFSET_ANY);
}

/* getstripe of a directory default with a first OST (the 12-byte form):
 * text, the -i selector, JSON. */
static void test_admin_cmd_getstripe_dir_index(void **state)
{
	fixture *x = *state;
	const char *dir[] = { x->dir };
	json_t *j;

	x->m.dir_default = 5;
	assert_int_equal(cli_admin_getstripe(&x->a, dir, 1, 0, 0), 0);
	assert_contains(output(x), "  default stripe_count: 2\n"
				   "  default stripe_index: 2\n");
	reset_output(x);
	assert_int_equal(cli_admin_getstripe(&x->a, dir, 1, CLI_SEL_INDEX, 0), 0);
	assert_string_equal(output(x), "2\n");
	reset_output(x);
	x->a.json = 1;
	assert_int_equal(cli_admin_getstripe(&x->a, dir, 1, 0, 0), 0);
	j = output_json(x);
	assert_int_equal(JI(j, "stripe_index"), 2);
	assert_int_equal(JI(j, "stripe_count"), 2);
	json_decref(j);
}

/* A new path: CREATE in the parent's inode with the hints; -1 goes as
 * UINT32_MAX ("all OSTs up", resolved by the MDS). */
static void test_admin_cmd_setstripe_create(void **state)
{
	fixture *x = *state;
	cli_stripe_req r = req_cs(1, CLI_STRIPE_ALL, 1, 256u << 10);
	char p[400];
	json_t *j;
	mode_t um = umask(022);

	snprintf(p, sizeof(p), "%s/newfile", x->dir);
	x->a.json = 1;
	assert_int_equal(cli_admin_setstripe(&x->a, p, &r), 0);
	umask(um);
	assert_int_equal(x->m.nreq[PFS_OP_MDS_CREATE], 1);
	assert_int_equal(x->m.nreq[PFS_OP_MDS_SETSTRIPE], 0);
	assert_int_equal(x->m.cr_parent, x->m.dir_ino);
	assert_string_equal(x->m.cr_name, "newfile");
	assert_int_equal(x->m.cr_mode, S_IFREG | 0644);
	assert_int_equal(x->m.cr_flags, PFS_CREATE_EXCL);
	assert_int_equal(x->m.cr_size, 256u << 10);
	assert_int_equal(x->m.cr_count, UINT32_MAX);
	assert_int_equal(x->m.nreq[PFS_OP_MDS_OST_LIST], 0);
	assert_int_equal(x->m.last_cred.uid, getuid());
	j = output_json(x);
	assert_int_equal(JI(j, "ino"), 4242);
	assert_int_equal(JI(j, "stripe_count"), 2);
	assert_int_equal(JI(j, "stripe_index"), 0);
	assert_int_equal(json_array_size(json_object_get(j, "stripes")), 2);
	json_decref(j);
}

/* Omitted values on a new file are inherited: 0 on the wire. */
static void test_admin_cmd_setstripe_create_inherit(void **state)
{
	fixture *x = *state;
	cli_stripe_req r = req_cs(1, 4, 0, 0);
	char p[400];

	snprintf(p, sizeof(p), "%s/f2", x->dir);
	assert_int_equal(cli_admin_setstripe(&x->a, p, &r), 0);
	assert_int_equal(x->m.cr_size, 0);
	assert_int_equal(x->m.cr_count, 4);
	assert_contains(output(x), "stripe_count: 4\n");
}

/* Created by someone else between our stat and CREATE. */
static void test_admin_cmd_setstripe_create_exists(void **state)
{
	fixture *x = *state;
	cli_stripe_req r = req_cs(1, 2, 0, 0);
	char p[400];
	int rc;

	snprintf(p, sizeof(p), "%s/racy", x->dir);
	x->m.create_status = -EEXIST;
	rc = cli_admin_setstripe(&x->a, p, &r);
	assert_int_equal(rc, -EEXIST);
	assert_contains(message(x, rc), "file already has a layout");
	assert_null(strstr(message(x, rc), "File exists"));
	assert_string_equal(output(x), "");
}

static void test_admin_cmd_setstripe_no_parent(void **state)
{
	fixture *x = *state;
	cli_stripe_req r = req_cs(1, 1, 0, 0);
	char p[400];
	int rc;

	snprintf(p, sizeof(p), "%s/nodir/f", x->dir);
	rc = cli_admin_setstripe(&x->a, p, &r);
	assert_int_equal(rc, -ENOENT);
	assert_int_equal(x->m.nreq[PFS_OP_MDS_CREATE], 0);
	assert_contains(message(x, rc), "parent");
	snprintf(p, sizeof(p), "%s/f/g", x->file);
	rc = cli_admin_setstripe(&x->a, p, &r);
	assert_true(rc == -ENOTDIR);
}

/* --------------------------------------------------------- ping, run */

static void test_admin_cmd_ping(void **state)
{
	fixture *x = *state;
	json_t *j;
	char want[64];

	assert_int_equal(cli_admin_ping(&x->a, 3), 0);
	assert_int_equal(x->m.nreq[PFS_OP_PING], 3);
	assert_int_equal(count_lines(output(x)), 4);
	assert_contains(output(x), "seq=3 time=");
	assert_contains(output(x), "rtt min/avg/max = ");
	reset_output(x);
	x->a.json = 1;
	assert_int_equal(cli_admin_ping(&x->a, 2), 0);
	j = output_json(x);
	assert_int_equal(JI(j, "count"), 2);
	assert_int_equal(json_array_size(json_object_get(j, "rtt_us")), 2);
	assert_true(JI(j, "min_us") <= JI(j, "max_us"));
	snprintf(want, sizeof(want), "127.0.0.1:%u", pfs_server_port(x->srv));
	assert_string_equal(JS(j, "address"), want);
	json_decref(j);
	assert_int_equal(cli_admin_ping(&x->a, 0), -EINVAL);
}

/* cli_admin_run dispatches parsed arguments, long options included. */
static void test_admin_cmd_run(void **state)
{
	fixture *x = *state;
	cli_admin_args a;
	char err[256], p[400];
	char *argv[] = { "pfsadmin", "setstripe", p, "--stripe-count", "2", "--stripe-size",
			 "128K", NULL };
	char *argv2[] = { "pfsadmin", "ost", "list", NULL };
	char *argv3[] = { "pfsadmin", "help", NULL };

	snprintf(p, sizeof(p), "%s/viarun", x->dir);
	assert_int_equal(cli_admin_parse_args(7, argv, &a, err, sizeof(err)), 0);
	assert_int_equal(cli_admin_run(&x->a, &a), 0);
	assert_int_equal(x->m.cr_count, 2);
	assert_int_equal(x->m.cr_size, 128u << 10);
	assert_int_equal(cli_admin_parse_args(3, argv2, &a, err, sizeof(err)), 0);
	assert_int_equal(cli_admin_run(&x->a, &a), 0);
	assert_int_equal(x->m.nreq[PFS_OP_MDS_OST_LIST], 1);
	assert_int_equal(cli_admin_parse_args(2, argv3, &a, err, sizeof(err)), 0);
	assert_int_equal(cli_admin_run(&x->a, &a), -EINVAL);
}

/* ------------------------------------------------- unreachable, silent */

/* A port that was free a moment ago and is closed now. */
static uint16_t dead_port(void)
{
	pfs_server_opts so = { .host = "127.0.0.1", .port = 0, .name = "gone" };
	pfs_server *s = NULL;
	fake_mds m = { 0 };
	uint16_t port;

	pthread_mutex_init(&m.lock, NULL);
	assert_int_equal(pfs_server_start(&so, fake_handler, &m, &s), 0);
	port = pfs_server_port(s);
	pfs_server_stop(s);
	pthread_mutex_destroy(&m.lock);
	return port;
}

/* No server: a transport error in words, nothing printed. */
static void test_admin_cmd_no_server(void **state)
{
	pfs_rpc_opts ro = { .max_conns = 1, .timeout_ms = 2000, .retry_ms = 50 };
	pfs_rpc_pool *p = NULL;
	cli_admin a;
	char *buf = NULL, msg[600], want[200];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	uint16_t port = dead_port();
	int rc;

	assert_non_null(f);
	assert_int_equal(pfs_rpc_pool_create("127.0.0.1", port, &ro, &p), 0);
	assert_int_equal(cli_admin_init(&a, p, f, 0), 0);
	rc = cli_admin_ost_list(&a);
	assert_int_equal(rc, -ECONNREFUSED);
	snprintf(want, sizeof(want), "ost list: MDS 127.0.0.1:%u not reachable (connection "
		 "refused", port);
	assert_contains(cli_admin_errmsg(&a, rc, msg, sizeof(msg)), want);
	/* the path commands keep what they were doing and add why */
	rc = cli_admin_getstripe(&a, (const char *[]){ "/" }, 1, 0, 0);
	assert_int_equal(rc, -ECONNREFUSED);
	snprintf(want, sizeof(want), "getstripe /: MDS 127.0.0.1:%u not reachable (connection "
		 "refused", port);
	assert_contains(cli_admin_errmsg(&a, rc, msg, sizeof(msg)), want);
	{
		cli_stripe_req r = { .have_count = 1, .count = 2 };

		rc = cli_admin_setstripe(&a, "/", &r);
		assert_int_equal(rc, -ECONNREFUSED);
		snprintf(want, sizeof(want), "setstripe /: MDS 127.0.0.1:%u not reachable", port);
		assert_contains(cli_admin_errmsg(&a, rc, msg, sizeof(msg)), want);
	}
	fclose(f);
	assert_int_equal(len, 0);
	free(buf);
	cli_admin_fini(&a);
	pfs_rpc_pool_destroy(p);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A listener that never accepts: the kernel completes the handshake and
 * takes the request, nobody answers.  Returns its fd; port in *port. */
static int silent_listener(uint16_t *port)
{
	int fd = -1;

	assert_int_equal(pfs_net_listen("127.0.0.1", 0, &fd), 0);
	assert_int_equal(pfs_net_local_port(fd, port), 0);
	return fd;
}

/* A silent MDS costs the timeout, not 30 s, and says so. */
static void test_admin_cmd_silent_server(void **state)
{
	pfs_rpc_opts ro = { .max_conns = 1, .timeout_ms = 300, .retry_ms = 300 };
	pfs_rpc_pool *p = NULL;
	cli_admin a;
	char *buf = NULL, msg[600], want[200];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	uint16_t port;
	int fd = silent_listener(&port), rc;
	double t0;

	assert_non_null(f);
	assert_int_equal(pfs_rpc_pool_create("127.0.0.1", port, &ro, &p), 0);
	assert_int_equal(cli_admin_init(&a, p, f, 0), 0);
	a.timeout_ms = ro.timeout_ms;
	t0 = now_s();
	rc = cli_admin_df(&a, 0, 0);
	assert_int_equal(rc, -ETIMEDOUT);
	assert_true(now_s() - t0 < 2.0);
	snprintf(want, sizeof(want), "df: MDS 127.0.0.1:%u did not answer within 0.3 s "
		 "(--timeout)", port);
	assert_string_equal(cli_admin_errmsg(&a, rc, msg, sizeof(msg)), want);
	fclose(f);
	assert_int_equal(len, 0);
	free(buf);
	cli_admin_fini(&a);
	pfs_rpc_pool_destroy(p);
	close(fd);
}

/* ---------------------------------------------------------- the binary */

/* Run build/bin/pfsadmin (next to build/tests) with argv and the extra
 * environment env ("K=V" strings, NULL-terminated; PFS_MDS and PFS_FSNAME
 * are unset first); stdout and stderr into *out and *err (malloc'd).
 * Returns the exit status; *secs the time it took. */
static int run_bin(char **out, char **err, char *const env[], double *secs,
		   char *const argv[])
{
	char exe[PATH_MAX], bin[PATH_MAX + 32], ofile[] = "/tmp/pfsadmin-out.XXXXXX",
		efile[] = "/tmp/pfsadmin-err.XXXXXX";
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int ofd = mkstemp(ofile), efd = mkstemp(efile), st;
	double t0 = now_s();
	pid_t pid;

	assert_true(n > 0 && ofd >= 0 && efd >= 0);
	exe[n] = '\0';
	*strrchr(exe, '/') = '\0';
	snprintf(bin, sizeof(bin), "%s/../bin/pfsadmin", exe);
	if (access(bin, X_OK) != 0)
		fail_msg("%s missing: make O=... all first", bin);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(ofd, 1);
		dup2(efd, 2);
		unsetenv("PFS_MDS");
		unsetenv("PFS_FSNAME");
		unsetenv("PFS_KEY");
		setenv("PFS_AUTH", "off", 1); /* the test servers run without keys */
		for (int i = 0; env && env[i]; i++)
			putenv(env[i]);
		execv(bin, argv);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	if (secs)
		*secs = now_s() - t0;
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

/* Help and version exit 0 on stdout; a bad line exits 2 with the problem
 * and where to look. */
static void test_admin_bin_usage(void **state)
{
	char *out, *err;

#define RUN(rc, ...) do { \
		char *argv_[] = { "pfsadmin", __VA_ARGS__, NULL }; \
		assert_int_equal(run_bin(&out, &err, NULL, NULL, argv_), rc); \
	} while (0)
#define DONE() do { free(out); free(err); } while (0)
	RUN(0, "--version");
	assert_string_equal(out, "pfsadmin (pfs) " PFS_VERSION "\n");
	assert_string_equal(err, "");
	DONE();
	RUN(0, "-h");
	assert_contains(out, "usage: pfsadmin [--mds HOST:PORT]");
	assert_string_equal(err, "");
	DONE();
	RUN(0, "--help");
	assert_contains(out, "getstripe [-c] [-S] [-i] [-y] PATH...");
	DONE();
	RUN(0, "df", "--help");
	assert_contains(out, "usage: pfsadmin df [-h] [-i] [PATH]\n");
	DONE();
	RUN(0, "setstripe", "-h");
	assert_contains(out, "--stripe-count N");
	DONE();
	RUN(0, "help", "getstripe");
	assert_contains(out, "usage: pfsadmin getstripe");
	DONE();
	RUN(0, "job", "end", "--help");
	assert_contains(out, "usage: pfsadmin job end JOBID\n");
	DONE();
	RUN(2, "--stripe-count", "2");
	assert_string_equal(out, "");
	assert_string_equal(err, "pfsadmin: unknown option '--stripe-count'\n"
				 "Try 'pfsadmin --help'.\n");
	DONE();
	RUN(2, "setstripe", "-c", "2");
	assert_string_equal(err, "pfsadmin: setstripe needs a PATH\n"
				 "Try 'pfsadmin setstripe --help'.\n");
	DONE();
	RUN(2, "qos");
	assert_contains(err, "Try 'pfsadmin qos --help'.\n");
	DONE();
#undef RUN
#undef DONE
}

/* Bad addresses exit 2 whether typed or exported; a name that does not
 * resolve, a closed port and a silent MDS exit 1 with words for each. */
static void test_admin_bin_addresses(void **state)
{
	char *out, *err, want[200], port_s[64];
	char env_bad[] = "PFS_MDS=garbage", env_fs[] = "PFS_FSNAME=a/b";
	char *const bad[] = { env_bad, NULL }, *const badfs[] = { env_fs, NULL };
	double secs;
	uint16_t port;
	int fd;

	{
		char *argv[] = { "pfsadmin", "--mds", "garbage", "df", NULL };

		assert_int_equal(run_bin(&out, &err, NULL, NULL, argv), 2);
		assert_string_equal(err, "pfsadmin: --mds: bad MDS address 'garbage' "
					 "(want HOST:PORT)\n");
		free(out);
		free(err);
	}
	{
		char *argv[] = { "pfsadmin", "df", NULL };

		assert_int_equal(run_bin(&out, &err, bad, NULL, argv), 2);
		assert_string_equal(err, "pfsadmin: PFS_MDS: bad MDS address 'garbage' "
					 "(want HOST:PORT)\n");
		free(out);
		free(err);
		assert_int_equal(run_bin(&out, &err, badfs, NULL, argv), 2);
		assert_contains(err, "pfsadmin: PFS_FSNAME: file system name 'a/b'");
		free(out);
		free(err);
	}
	{
		char *argv[] = { "pfsadmin", "--mds", "nosuchhost.invalid:7000", "df", NULL };

		assert_int_equal(run_bin(&out, &err, NULL, NULL, argv), 1);
		assert_contains(err, "pfsadmin: --mds nosuchhost.invalid:7000: cannot resolve "
				"nosuchhost.invalid (");
		assert_null(strstr(err, "No route to host"));
		assert_string_equal(out, "");
		free(out);
		free(err);
	}
	{
		char *argv[] = { "pfsadmin", "--mds", port_s, "df", NULL };

		snprintf(port_s, sizeof(port_s), "127.0.0.1:%u", dead_port());
		assert_int_equal(run_bin(&out, &err, NULL, NULL, argv), 1);
		snprintf(want, sizeof(want), "pfsadmin: df: MDS %s not reachable (connection "
			 "refused", port_s);
		assert_contains(err, want);
		free(out);
		free(err);
	}
	fd = silent_listener(&port);
	{
		char *argv[] = { "pfsadmin", "--mds", port_s, "--timeout", "0.5", "ost", "list",
				 NULL };

		snprintf(port_s, sizeof(port_s), "127.0.0.1:%u", port);
		assert_int_equal(run_bin(&out, &err, NULL, &secs, argv), 1);
		snprintf(want, sizeof(want), "pfsadmin: ost list: MDS %s did not answer within "
			 "0.5 s (--timeout)\n", port_s);
		assert_string_equal(err, want);
		assert_true(secs < 2.0);
		free(out);
		free(err);
	}
	close(fd);
}

/* The binary against the fake MDS: --fsname reaches df, --json parses. */
static void test_admin_bin_df(void **state)
{
	fixture *x = *state;
	char *out, *err, mds[64];
	char *argv[] = { "pfsadmin", "df", "--mds", mds, "--fsname", "lfs1", NULL };
	char *argv2[] = { "pfsadmin", "--json", "--mds", mds, "df", "-i", NULL };
	json_t *j;

	snprintf(mds, sizeof(mds), "127.0.0.1:%u", pfs_server_port(x->srv));
	assert_int_equal(run_bin(&out, &err, NULL, NULL, argv), 0);
	assert_contains(out, "lfs1-MDT0000_UUID ");
	assert_contains(out, "lfs1-OST000a_UUID    : inactive device\n");
	assert_string_equal(err, "");
	free(out);
	free(err);
	assert_int_equal(run_bin(&out, &err, NULL, NULL, argv2), 0);
	j = json_loads(out, 0, NULL);
	assert_non_null(j);
	assert_int_equal(JI(json_object_get(j, "summary"), "osts_up"), 2);
	json_decref(j);
	free(out);
	free(err);
}

#define FX(t) cmocka_unit_test_setup_teardown(t, fx_setup, fx_teardown)

int main(void)
{
	const struct CMUnitTest cmds[] = {
		FX(test_admin_cmd_lfsck),
		FX(test_admin_cmd_lfsck_dry_json),
		FX(test_admin_cmd_ost_list_table),
		FX(test_admin_cmd_ost_list_json),
		FX(test_admin_cmd_df_table),
		FX(test_admin_cmd_df_human),
		FX(test_admin_cmd_df_inodes),
		FX(test_admin_cmd_df_json),
		FX(test_admin_cmd_df_error),
		FX(test_admin_cmd_bad_reply),
		FX(test_admin_cmd_getstripe_file),
		FX(test_admin_cmd_getstripe_json),
		FX(test_admin_cmd_getstripe_dir),
		FX(test_admin_cmd_getstripe_missing),
		FX(test_admin_cmd_getstripe_selectors),
		FX(test_admin_cmd_getstripe_yaml),
		FX(test_admin_cmd_getstripe_several),
		FX(test_admin_cmd_setstripe_dir),
		FX(test_admin_cmd_setstripe_dir_size_only),
		FX(test_admin_cmd_setstripe_existing_file),
		FX(test_admin_cmd_setstripe_bare_file),
		FX(test_admin_cmd_setstripe_delete),
		FX(test_admin_cmd_setstripe_index),
		FX(test_admin_cmd_getstripe_dir_index),
		FX(test_admin_cmd_setstripe_create),
		FX(test_admin_cmd_setstripe_create_inherit),
		FX(test_admin_cmd_setstripe_create_exists),
		FX(test_admin_cmd_setstripe_no_parent),
		FX(test_admin_cmd_ping),
		FX(test_admin_cmd_run),
		cmocka_unit_test(test_admin_cmd_no_server),
		cmocka_unit_test(test_admin_cmd_silent_server),
		cmocka_unit_test(test_admin_bin_usage),
		cmocka_unit_test(test_admin_bin_addresses),
		FX(test_admin_bin_df),
	};

	return cmocka_run_group_tests_name("admin_cmd", cmds, NULL, NULL);
}
