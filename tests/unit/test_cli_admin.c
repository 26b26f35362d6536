/* test_cli_admin.c — pfsadmin: size formatting and tables, argument parsing
 * of every command (good and bad), mountinfo parsing (escaped paths,
 * nested and stacked mounts), and the commands against an in-process fake
 * MDS (pfs_server on a loopback port chosen at run time) that answers with
 * known OSTs, statfs and layouts and records what it was asked. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>

#include "client/admin_args.h"
#include "client/admin_cmd.h"
#include "client/admin_fmt.h"
#include "client/admin_mnt.h"
#include "common/buf.h"
#include "common/layout.h"
#include "common/msg.h"
#include "common/rpc.h"
#include "common/server.h"

/* ---------------------------------------------------------------- fmt */

static void test_admin_fmt_size(void **state)
{
	char b[32];

	assert_string_equal(cli_fmt_size(0, 1, b, sizeof(b)), "0B");
	assert_string_equal(cli_fmt_size(1023, 1, b, sizeof(b)), "1023B");
	assert_string_equal(cli_fmt_size(1024, 1, b, sizeof(b)), "1.0K");
	assert_string_equal(cli_fmt_size(1536, 1, b, sizeof(b)), "1.5K");
	assert_string_equal(cli_fmt_size(10 * 1024 - 1, 1, b, sizeof(b)), "10K");
	assert_string_equal(cli_fmt_size(10 * 1024, 1, b, sizeof(b)), "10K");
	assert_string_equal(cli_fmt_size(5u << 19, 1, b, sizeof(b)), "2.5M");
	assert_string_equal(cli_fmt_size(500ull << 30, 1, b, sizeof(b)), "500G");
	assert_string_equal(cli_fmt_size(3ull << 40, 1, b, sizeof(b)), "3.0T");
	assert_string_equal(cli_fmt_size(UINT64_MAX, 1, b, sizeof(b)), "16E");
	assert_string_equal(cli_fmt_size(123456789, 0, b, sizeof(b)), "123456789");
}

static void test_admin_fmt_pct(void **state)
{
	assert_int_equal(cli_fmt_pct(0, 0), 0);
	assert_int_equal(cli_fmt_pct(0, 100), 0);
	assert_int_equal(cli_fmt_pct(50, 100), 50);
	assert_int_equal(cli_fmt_pct(1, 3), 34); /* rounds up, as df */
	assert_int_equal(cli_fmt_pct(100, 100), 100);
	assert_int_equal(cli_fmt_pct(UINT64_MAX, UINT64_MAX), 100);
}

/* Run fn(out) into a memory stream and return the text (caller frees). */
static char *capture_table(const cli_table *t)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	cli_table_print(t, f);
	fclose(f);
	return buf;
}

static void test_admin_fmt_table(void **state)
{
	static const cli_col cols[] = { { "NAME", 0 }, { "N", 1 }, { "NOTE", 0 } };
	const char *r1[] = { "a", "1", "x" };
	const char *r3[] = { "", "7", "" }; /* empty cells: no trailing blanks */
	const char *r2[] = { "longer", "12345", NULL };
	cli_table *t = NULL;
	char *s;

	assert_int_equal(cli_table_create(cols, 0, &t), -EINVAL);
	assert_int_equal(cli_table_create(cols, 3, &t), 0);
	assert_int_equal(cli_table_add(t, r1), 0);
	assert_int_equal(cli_table_add_break(t), 0);
	assert_int_equal(cli_table_add(t, r2), 0);
	assert_int_equal(cli_table_add(t, r3), 0);
	s = capture_table(t);
	assert_string_equal(s, "NAME        N  NOTE\n"
			       "a           1  x\n"
			       "\n"
			       "longer  12345  -\n"
			       "            7\n");
	free(s);
	cli_table_free(t);
}

/* Many rows: the table grows past its first allocation. */
static void test_admin_fmt_table_grow(void **state)
{
	static const cli_col cols[] = { { "I", 1 } };
	cli_table *t = NULL;
	char *s, num[16];
	const char *cells[1] = { num };
	int lines = 0;

	assert_int_equal(cli_table_create(cols, 1, &t), 0);
	for (int i = 0; i < 100; i++) {
		snprintf(num, sizeof(num), "%d", i);
		assert_int_equal(cli_table_add(t, cells), 0);
	}
	s = capture_table(t);
	for (char *p = s; *p; p++)
		lines += *p == '\n';
	assert_int_equal(lines, 101);
	assert_non_null(strstr(s, "\n99\n"));
	assert_non_null(strstr(s, "\n 0\n"));
	free(s);
	cli_table_free(t);
}

/* --------------------------------------------------------------- args */

/* Parse a NULL-terminated list of words after "pfsadmin". */
static int parse(cli_admin_args *a, char *err, ...)
{
	char *argv[32] = { "pfsadmin" };
	int argc = 1;
	va_list ap;
	char *s;

	va_start(ap, err);
	while ((s = va_arg(ap, char *)) != NULL && argc < 31)
		argv[argc++] = s;
	va_end(ap);
	argv[argc] = NULL;
	return cli_admin_parse_args(argc, argv, a, err, 256);
}

static void test_admin_args_good(void **state)
{
	cli_admin_args a;
	char err[256];

	assert_int_equal(parse(&a, err, "ost", "list", NULL), 0);
	assert_int_equal(a.cmd, CLI_ADMIN_OST_LIST);
	assert_int_equal(a.json, 0);
	assert_null(a.mds);
	assert_null(a.path);

	assert_int_equal(parse(&a, err, "--mds", "h:1", "--json", "df", "-h", "/mnt/p", NULL), 0);
	assert_int_equal(a.cmd, CLI_ADMIN_DF);
	assert_string_equal(a.mds, "h:1");
	assert_int_equal(a.json, 1);
	assert_int_equal(a.human, 1);
	assert_string_equal(a.path, "/mnt/p");

	assert_int_equal(parse(&a, err, "df", "--json", "--mds=x:9", NULL), 0);
	assert_int_equal(a.json, 1);
	assert_int_equal(a.human, 0);
	assert_string_equal(a.mds, "x:9");

	assert_int_equal(parse(&a, err, "setstripe", "-c", "4", "-S", "1M", "/f", NULL), 0);
	assert_int_equal(a.cmd, CLI_ADMIN_SETSTRIPE);
	assert_true(a.have_count && a.have_size);
	assert_int_equal(a.count, 4);
	assert_int_equal(a.size, 1u << 20);
	assert_string_equal(a.path, "/f");

	assert_int_equal(parse(&a, err, "setstripe", "-c", "-1", "/f", NULL), 0);
	assert_int_equal(a.count, CLI_STRIPE_ALL);
	assert_int_equal(a.have_size, 0);

	assert_int_equal(parse(&a, err, "setstripe", "-S64K", "-c64", "--", "-odd", NULL), 0);
	assert_int_equal(a.size, 64u << 10);
	assert_int_equal(a.count, 64);
	assert_string_equal(a.path, "-odd");

	assert_int_equal(parse(&a, err, "setstripe", "-S", "1G", "x", NULL), 0);
	assert_int_equal(a.size, 1u << 30);
	assert_int_equal(a.have_count, 0);

	assert_int_equal(parse(&a, err, "getstripe", "/a/b", NULL), 0);
	assert_int_equal(a.cmd, CLI_ADMIN_GETSTRIPE);
	assert_string_equal(a.path, "/a/b");

	assert_int_equal(parse(&a, err, "ping", NULL), 0);
	assert_int_equal(a.cmd, CLI_ADMIN_PING);
	assert_int_equal(a.ping_count, 1);
	assert_int_equal(parse(&a, err, "ping", "-c", "5", NULL), 0);
	assert_int_equal(a.ping_count, 5);

	assert_int_equal(parse(&a, err, "help", NULL), 0);
	assert_int_equal(a.cmd, CLI_ADMIN_HELP);
	assert_int_equal(parse(&a, err, "--help", NULL), 0);
	assert_int_equal(a.cmd, CLI_ADMIN_HELP);
	assert_int_equal(parse(&a, err, "df", "--help", NULL), 0);
	assert_int_equal(a.cmd, CLI_ADMIN_HELP);
}

/* Every bad command line is -EINVAL with a message naming the problem. */
static void test_admin_args_bad(void **state)
{
	cli_admin_args a;
	char err[256];

#define BAD(substr, ...) do { \
		assert_int_equal(parse(&a, err, __VA_ARGS__, NULL), -EINVAL); \
		if (!strstr(err, substr)) \
			fail_msg("error '%s' lacks '%s'", err, substr); \
	} while (0)

	assert_int_equal(parse(&a, err, NULL), -EINVAL);
	assert_non_null(strstr(err, "no command"));
	BAD("no command", "--json");
	BAD("unknown command", "frobnicate");
	BAD("unknown option", "-x", "df");
	BAD("--mds needs", "--mds");
	BAD("ost list", "ost");
	BAD("ost list", "ost", "show");
	BAD("unknown option '-h' for ost", "ost", "list", "-h");
	BAD("unknown option '-x' for df", "df", "-x");
	BAD("unexpected argument", "df", "/a", "/b");
	BAD("needs -c COUNT and/or -S SIZE", "setstripe", "/f");
	BAD("setstripe needs a PATH", "setstripe", "-c", "2");
	BAD("needs a value", "setstripe", "/f", "-c");
	BAD("stripe count 0 out of range", "setstripe", "-c", "0", "/f");
	BAD("stripe count 65 out of range", "setstripe", "-c", "65", "/f");
	BAD("stripe count -2 out of range", "setstripe", "-c", "-2", "/f");
	BAD("not a number", "setstripe", "-c", "two", "/f");
	BAD("multiple of 64K", "setstripe", "-S", "100K", "/f");
	BAD("multiple of 64K", "setstripe", "-S", "0", "/f");
	BAD("multiple of 64K", "setstripe", "-S", "32K", "/f");
	BAD("multiple of 64K", "setstripe", "-S", "2G", "/f");
	BAD("not a size", "setstripe", "-S", "1X", "/f");
	BAD("not a size", "setstripe", "-S", "-64K", "/f");
	BAD("getstripe needs a PATH", "getstripe");
	BAD("unknown option '-c' for getstripe", "getstripe", "-c", "1", "/f");
	BAD("ping count", "ping", "-c", "0");
	BAD("ping count", "ping", "-c", "-3");
	BAD("unknown option '-S' for ping", "ping", "-S", "1M");
#undef BAD
}

/* ---------------------------------------------------------- mountinfo */

static void test_admin_mnt_unescape(void **state)
{
	char out[64];
	const char *in = "/a\\040b\\011c\\134d\\012";

	assert_int_equal(cli_mnt_unescape(in, strlen(in), out, sizeof(out)), 0);
	assert_string_equal(out, "/a b\tc\\d\n");
	/* Not an escape: kept as is. */
	assert_int_equal(cli_mnt_unescape("x\\9y\\04", 7, out, sizeof(out)), 0);
	assert_string_equal(out, "x\\9y\\04");
	assert_int_equal(cli_mnt_unescape("abcdef", 6, out, 4), -ENAMETOOLONG);
	assert_int_equal(cli_mnt_unescape("abc", 3, out, 4), 0);
}

static void test_admin_mnt_parse_line(void **state)
{
	cli_mnt_entry e;

	assert_int_equal(cli_mnt_parse_line("36 35 98:0 /mnt1 /mnt/parent rw,noatime "
					    "master:1 shared:7 - ext3 /dev/root rw,errors=continue\n",
					    &e), 0);
	assert_string_equal(e.mountpoint, "/mnt/parent");
	assert_string_equal(e.fstype, "ext3");
	assert_string_equal(e.source, "/dev/root");

	/* no optional fields, escaped space in the mount point */
	assert_int_equal(cli_mnt_parse_line("50 1 0:45 / /mnt/my\\040pfs rw,nosuid - fuse.pfs "
					    "10.0.0.5:7000 rw,user_id=0", &e), 0);
	assert_string_equal(e.mountpoint, "/mnt/my pfs");
	assert_string_equal(e.fstype, "fuse.pfs");
	assert_string_equal(e.source, "10.0.0.5:7000");

	assert_int_equal(cli_mnt_parse_line("", &e), -EINVAL);
	assert_int_equal(cli_mnt_parse_line("1 2 3:4 / /x rw", &e), -EINVAL);  /* no "-" */
	assert_int_equal(cli_mnt_parse_line("1 2 3:4 / /x rw - ext4", &e), -EINVAL);
}

static char tmpdir[256];

static int mk_tmpdir(void **state)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/pfs-admin-test.XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int rm_tmpdir(void **state)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static const char fake_mountinfo[] =
	"22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
	"30 22 0:50 / /mnt/pfs rw,nosuid,nodev shared:20 - fuse.pfs mds1:7000 rw,user_id=0\n"
	"31 30 8:2 / /mnt/pfs/scratch rw shared:21 - ext4 /dev/sdb1 rw\n"
	"32 22 0:51 / /mnt/my\\040pfs rw - fuse.pfs [::1]:7100 rw\n"
	"garbage line that is not mountinfo\n"
	"33 22 0:52 / /mnt/stack rw - fuse.pfs old:1 rw\n"
	"34 22 0:53 / /mnt/stack rw - fuse.pfs new:2 rw\n"
	"35 22 0:54 / /mnt/pfsx rw - tmpfs tmpfs rw\n";

static void test_admin_mnt_find(void **state)
{
	char mi[300], addr[64], mnt[256];

	snprintf(mi, sizeof(mi), "%s/mountinfo", tmpdir);
	write_file(mi, fake_mountinfo);

	assert_int_equal(cli_mnt_find(mi, "/mnt/pfs/a/b", addr, sizeof(addr), mnt, sizeof(mnt)),
			 0);
	assert_string_equal(addr, "mds1:7000");
	assert_string_equal(mnt, "/mnt/pfs");
	assert_int_equal(cli_mnt_find(mi, "/mnt/pfs", addr, sizeof(addr), NULL, 0), 0);
	assert_string_equal(addr, "mds1:7000");
	/* escaped space */
	assert_int_equal(cli_mnt_find(mi, "/mnt/my pfs/dir/f", addr, sizeof(addr), mnt,
				      sizeof(mnt)), 0);
	assert_string_equal(addr, "[::1]:7100");
	assert_string_equal(mnt, "/mnt/my pfs");
	/* the later of two mounts on one point is on top */
	assert_int_equal(cli_mnt_find(mi, "/mnt/stack/f", addr, sizeof(addr), NULL, 0), 0);
	assert_string_equal(addr, "new:2");
	/* a non-pfs mount inside a pfs mount hides it */
	assert_int_equal(cli_mnt_find(mi, "/mnt/pfs/scratch/f", addr, sizeof(addr), NULL, 0),
			 -ENOENT);
	/* prefix by whole components only: /mnt/pfsx is not under /mnt/pfs */
	assert_int_equal(cli_mnt_find(mi, "/mnt/pfsx/f", addr, sizeof(addr), NULL, 0), -ENOENT);
	assert_int_equal(cli_mnt_find(mi, "/home/u", addr, sizeof(addr), NULL, 0), -ENOENT);
	/* several pfs mounts and no path: ambiguous */
	assert_int_equal(cli_mnt_find(mi, NULL, addr, sizeof(addr), NULL, 0), -EEXIST);
	/* addr buffer too small */
	assert_int_equal(cli_mnt_find(mi, "/mnt/pfs/a", addr, 4, NULL, 0), -ENAMETOOLONG);
	/* missing file */
	snprintf(mi, sizeof(mi), "%s/nonexistent", tmpdir);
	assert_int_equal(cli_mnt_find(mi, "/mnt/pfs", addr, sizeof(addr), NULL, 0), -ENOENT);
}

static void test_admin_mnt_find_single(void **state)
{
	char mi[300], addr[64], mnt[256];

	snprintf(mi, sizeof(mi), "%s/mountinfo1", tmpdir);
	write_file(mi, "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n"
		       "30 22 0:50 / /scratch\\040space rw - fuse.pfs h:9 rw\n");
	assert_int_equal(cli_mnt_find(mi, NULL, addr, sizeof(addr), mnt, sizeof(mnt)), 0);
	assert_string_equal(addr, "h:9");
	assert_string_equal(mnt, "/scratch space");
	write_file(mi, "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n");
	assert_int_equal(cli_mnt_find(mi, NULL, addr, sizeof(addr), NULL, 0), -ENOENT);
}

static void test_admin_mnt_canon(void **state)
{
	char p[600], out[600], want[4200], real[4096];

	assert_non_null(realpath(tmpdir, real));
	snprintf(p, sizeof(p), "%s/./sub/../newfile", tmpdir);
	/* "sub" does not exist, so realpath of the parent fails */
	assert_int_equal(cli_mnt_canon(p, out, sizeof(out)), -ENOENT);
	snprintf(p, sizeof(p), "%s/./newfile", tmpdir);
	assert_int_equal(cli_mnt_canon(p, out, sizeof(out)), 0);
	snprintf(want, sizeof(want), "%s/newfile", real);
	assert_string_equal(out, want);
	snprintf(p, sizeof(p), "%s//", tmpdir);
	assert_int_equal(cli_mnt_canon(p, out, sizeof(out)), 0);
	assert_string_equal(out, real);
	assert_int_equal(cli_mnt_canon("/", out, sizeof(out)), 0);
	assert_string_equal(out, "/");
	assert_int_equal(cli_mnt_canon(tmpdir, out, 4), -ENAMETOOLONG);
}

/* ------------------------------------------------------------ fake MDS */

#define TiB (1ull << 40)
#define GiB (1ull << 30)

typedef struct fake_mds {
	pthread_mutex_t lock;
	uint64_t file_ino, dir_ino, data_ino;
	int fail_statfs;   /* STATFS replies -EIO */
	int bad_ost_list;  /* OST_LIST reply claims more entries than it has */
	int dir_default;   /* dir default: 0 none, 1 4M/3, 2 4M/0, 4 0/1 (as the real
			    * MDS sends it), 3 4M/all */
	/* recorded */
	int nreq[400];
	pfs_cred last_cred;
	uint64_t set_ino;
	uint32_t set_size, set_count;
	uint64_t cr_parent;
	char cr_name[PFS_NAME_MAX + 1];
	uint32_t cr_mode, cr_flags, cr_size, cr_count;
	char last_job[PFS_JOBID_MAX + 1];
	uint32_t last_hdr_uid, last_hdr_gid;
} fake_mds;

static const pfs_ost_info fake_osts[3] = {
	{ .index = 0, .uuid = "pfs-OST0000_UUID", .oss = "oss1", .host = "10.0.0.1",
	  .data_port = 7001, .ctl_port = 7101, .up = 1, .total_bytes = 1 * TiB,
	  .free_bytes = 768 * GiB, .objects = 1234 },
	{ .index = 1, .uuid = "pfs-OST0001_UUID", .oss = "oss1", .host = "10.0.0.1",
	  .data_port = 7001, .ctl_port = 7101, .up = 1, .total_bytes = 1 * TiB,
	  .free_bytes = 1 * TiB, .objects = 0 },
	{ .index = 7, .uuid = "pfs-OST0007_UUID", .oss = "oss2", .host = "10.0.0.2",
	  .data_port = 7002, .ctl_port = 7102, .up = 0, .total_bytes = 2 * TiB,
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
	l->stripe[1].ost = 7;
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
	m->last_hdr_uid = h->uid;
	m->last_hdr_gid = h->gid;
	switch (h->opcode) {
	case PFS_OP_PING:
		pfs_wbuf_bytes(&w, payload, h->payload_len);
		break;
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
		if (m->fail_statfs)
			status = -EIO;
		else
			pfs_statfs_encode(&w, &fake_statfs);
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
		} else if (ino == m->dir_ino) {
			/* a directory's default: size and count, no stripes */
			static const uint32_t cnt[] = { 0, 3, 0, UINT32_MAX };

			if (m->dir_default == 4) { /* setstripe -c 1 DIR: size 0, count 1 */
				pfs_wbuf_u32(&w, 0);
				pfs_wbuf_u32(&w, 1);
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
		if (pfs_rbuf_done(&r)) {
			status = -EBADMSG;
			break;
		}
		m->last_cred = cred;
		at.ino = 4242;
		at.mode = m->cr_mode;
		at.nlink = 1;
		pfs_attr_encode(&w, &at);
		memset(&l, 0, sizeof(l));
		l.stripe_size = m->cr_size ? m->cr_size : 1u << 20;
		/* "all" (UINT32_MAX) = the two OSTs that are up */
		l.stripe_count = m->cr_count == UINT32_MAX ? 2 : m->cr_count ? m->cr_count : 1;
		for (uint32_t i = 0; i < l.stripe_count; i++) {
			l.stripe[i].ost = i;
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
	char *out;
	size_t outlen;
	FILE *f;
	cli_admin a;
	char dir[64], file[128], data[128];
} fixture;

static int fx_setup(void **state)
{
	pfs_server_opts so = { .host = "127.0.0.1", .port = 0, .name = "fake-mds" };
	pfs_rpc_opts ro = { .max_conns = 2, .timeout_ms = 10000, .retry_ms = 2000 };
	fixture *x = calloc(1, sizeof(*x));
	struct stat st;

	if (!x)
		return -1;
	pthread_mutex_init(&x->m.lock, NULL);
	snprintf(x->dir, sizeof(x->dir), "/tmp/pfs-admin-fx.XXXXXX");
	if (!mkdtemp(x->dir))
		goto fail;
	snprintf(x->file, sizeof(x->file), "%s/empty", x->dir);
	snprintf(x->data, sizeof(x->data), "%s/data", x->dir);
	write_file(x->file, "");
	write_file(x->data, "some bytes");
	if (stat(x->dir, &st))
		goto fail;
	x->m.dir_ino = st.st_ino;
	if (stat(x->file, &st))
		goto fail;
	x->m.file_ino = st.st_ino;
	if (stat(x->data, &st))
		goto fail;
	x->m.data_ino = st.st_ino;
	if (pfs_server_start(&so, fake_handler, &x->m, &x->srv))
		goto fail;
	if (pfs_rpc_pool_create("127.0.0.1", pfs_server_port(x->srv), &ro, &x->pool))
		goto fail;
	x->f = open_memstream(&x->out, &x->outlen);
	if (!x->f)
		goto fail;
	cli_admin_init(&x->a, x->pool, x->f, 0);
	*state = x;
	return 0;
fail:
	*state = x;
	return -1;
}

static int fx_teardown(void **state)
{
	fixture *x = *state;
	char cmd[400];

	if (!x)
		return 0;
	if (x->f)
		fclose(x->f);
	free(x->out);
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
	return x->out;
}

static json_t *output_json(fixture *x)
{
	json_error_t je;
	json_t *j = json_loads(output(x), 0, &je);

	if (!j)
		fail_msg("bad JSON (%s): %s", je.text, output(x));
	return j;
}

static int count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static void test_admin_cmd_ost_list_table(void **state)
{
	fixture *x = *state;

	assert_int_equal(cli_admin_ost_list(&x->a), 0);
	assert_string_equal(output(x),
		"IDX  UUID              OSS   ADDRESS        STATE  SIZE  USED  FREE  OBJECTS\n"
		"  0  pfs-OST0000_UUID  oss1  10.0.0.1:7001  up     1.0T  256G  768G     1234\n"
		"  1  pfs-OST0001_UUID  oss1  10.0.0.1:7001  up     1.0T    0B  1.0T        0\n"
		"  7  pfs-OST0007_UUID  oss2  10.0.0.2:7002  down   2.0T  1.0T  1.0T       99\n");
	assert_int_equal(x->m.nreq[PFS_OP_MDS_OST_LIST], 1);
	{
		char want[PFS_JOBID_MAX + 1];

		snprintf(want, sizeof(want), "pfsadmin.%u", (unsigned)getuid());
		assert_string_equal(x->m.last_job, want);
	}
	/* the header says who asks (the MDS filters job data by it) */
	assert_int_equal(x->m.last_hdr_uid, getuid());
	assert_int_equal(x->m.last_hdr_gid, getgid());
}

static void test_admin_cmd_ost_list_json(void **state)
{
	fixture *x = *state;
	json_t *j, *osts, *o;

	x->a.json = 1;
	assert_int_equal(cli_admin_ost_list(&x->a), 0);
	j = output_json(x);
	osts = json_object_get(j, "osts");
	assert_true(json_is_array(osts));
	assert_int_equal(json_array_size(osts), 3);
	o = json_array_get(osts, 2);
	assert_int_equal(json_integer_value(json_object_get(o, "index")), 7);
	assert_string_equal(json_string_value(json_object_get(o, "uuid")), "pfs-OST0007_UUID");
	assert_string_equal(json_string_value(json_object_get(o, "oss")), "oss2");
	assert_string_equal(json_string_value(json_object_get(o, "host")), "10.0.0.2");
	assert_int_equal(json_integer_value(json_object_get(o, "data_port")), 7002);
	assert_int_equal(json_integer_value(json_object_get(o, "ctl_port")), 7102);
	assert_string_equal(json_string_value(json_object_get(o, "state")), "down");
	assert_int_equal(json_integer_value(json_object_get(o, "total_bytes")), 2 * TiB);
	assert_int_equal(json_integer_value(json_object_get(o, "used_bytes")), 1 * TiB);
	assert_int_equal(json_integer_value(json_object_get(o, "free_bytes")), 1 * TiB);
	assert_int_equal(json_integer_value(json_object_get(o, "objects")), 99);
	o = json_array_get(osts, 0);
	assert_string_equal(json_string_value(json_object_get(o, "state")), "up");
	assert_int_equal(json_integer_value(json_object_get(o, "used_bytes")), 256 * GiB);
	json_decref(j);
}

static void test_admin_cmd_df_table(void **state)
{
	fixture *x = *state;
	const char *s;

	assert_int_equal(cli_admin_df(&x->a, 0), 0);
	s = output(x);
	assert_string_equal(s,
		"UUID                  1K-BLOCKS        USED   AVAILABLE  USE%  WHERE\n"
		"pfs-OST0000_UUID     1073741824   268435456   805306368   25%  [OST:0]\n"
		"pfs-OST0001_UUID     1073741824           0  1073741824    0%  [OST:1]\n"
		"pfs-OST0007_UUID     2147483648  1073741824  1073741824   50%  [OST:7] down\n"
		"\n"
		"filesystem_summary:  4294967296  1342177280  2952790016   32%\n"
		"\n"
		"inodes: 1000000 total, 998766 free\n");
	/* the summary comes from STATFS, sent with our credentials */
	assert_int_equal(x->m.nreq[PFS_OP_MDS_STATFS], 1);
	assert_int_equal(x->m.last_cred.uid, getuid());
	assert_int_equal(x->m.last_cred.gid, getgid());
}

static void test_admin_cmd_df_human(void **state)
{
	fixture *x = *state;
	const char *s;

	assert_int_equal(cli_admin_df(&x->a, 1), 0);
	s = output(x);
	assert_non_null(strstr(s, "UUID                 SIZE  USED  AVAILABLE  USE%  WHERE\n"));
	assert_non_null(strstr(s, "pfs-OST0000_UUID     1.0T  256G       768G   25%  [OST:0]\n"));
	assert_non_null(strstr(s, "filesystem_summary:  4.0T  1.3T       2.8T   32%"));
}

static void test_admin_cmd_df_json(void **state)
{
	fixture *x = *state;
	json_t *j, *sum, *o;

	x->a.json = 1;
	assert_int_equal(cli_admin_df(&x->a, 1), 0);
	j = output_json(x);
	assert_int_equal(json_array_size(json_object_get(j, "osts")), 3);
	o = json_array_get(json_object_get(j, "osts"), 0);
	assert_int_equal(json_integer_value(json_object_get(o, "use_pct")), 25);
	assert_int_equal(json_integer_value(json_object_get(o, "available_bytes")), 768 * GiB);
	sum = json_object_get(j, "summary");
	assert_int_equal(json_integer_value(json_object_get(sum, "total_bytes")), 4 * TiB);
	assert_int_equal(json_integer_value(json_object_get(sum, "used_bytes")), 1280 * GiB);
	assert_int_equal(json_integer_value(json_object_get(sum, "available_bytes")), 2816 * GiB);
	assert_int_equal(json_integer_value(json_object_get(sum, "files")), 1000000);
	assert_int_equal(json_integer_value(json_object_get(sum, "files_free")), 998766);
	assert_int_equal(json_integer_value(json_object_get(sum, "use_pct")), 32);
	json_decref(j);
}

/* An MDS error leaves stdout empty and says what failed. */
static void test_admin_cmd_df_error(void **state)
{
	fixture *x = *state;

	x->m.fail_statfs = 1;
	assert_int_equal(cli_admin_df(&x->a, 0), -EIO);
	assert_string_equal(output(x), "");
	assert_non_null(strstr(x->a.what, "statfs"));
}

static void test_admin_cmd_bad_reply(void **state)
{
	fixture *x = *state;

	x->m.bad_ost_list = 1;
	assert_int_equal(cli_admin_ost_list(&x->a), -EBADMSG);
	assert_string_equal(output(x), "");
	assert_non_null(strstr(x->a.what, "bad OST list reply"));
}

static void test_admin_cmd_getstripe_file(void **state)
{
	fixture *x = *state;
	const char *s;
	char head[400];

	assert_int_equal(cli_admin_getstripe(&x->a, x->file), 0);
	s = output(x);
	snprintf(head, sizeof(head), "%s\n  stripe_size:  1048576 (1.0M)\n  stripe_count: 2\n",
		 x->file);
	assert_memory_equal(s, head, strlen(head));
	assert_string_equal(s + strlen(head),
			    "STRIPE  OST  OBJECT_ID           OBJECT\n"
			    "     0    1  0x1a                    26\n"
			    "     1    7  0xdeadbeef01  956397711105\n");
	assert_int_equal(x->m.nreq[PFS_OP_MDS_GETLAYOUT], 1);
	assert_int_equal(x->m.last_cred.uid, getuid());
}

static void test_admin_cmd_getstripe_json(void **state)
{
	fixture *x = *state;
	json_t *j, *st;

	x->a.json = 1;
	assert_int_equal(cli_admin_getstripe(&x->a, x->file), 0);
	j = output_json(x);
	assert_string_equal(json_string_value(json_object_get(j, "path")), x->file);
	assert_int_equal(json_integer_value(json_object_get(j, "ino")), x->m.file_ino);
	assert_string_equal(json_string_value(json_object_get(j, "type")), "file");
	assert_int_equal(json_integer_value(json_object_get(j, "stripe_size")), 1 << 20);
	assert_int_equal(json_integer_value(json_object_get(j, "stripe_count")), 2);
	st = json_object_get(j, "stripes");
	assert_int_equal(json_array_size(st), 2);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(st, 1), "ost")), 7);
	assert_string_equal(json_string_value(json_object_get(json_array_get(st, 1),
							      "object_id")), "0xdeadbeef01");
	assert_int_equal(json_integer_value(json_object_get(json_array_get(st, 1), "object")),
			 0xdeadbeef01ll);
	json_decref(j);
}

static void test_admin_cmd_getstripe_dir(void **state)
{
	fixture *x = *state;
	const char *s;

	assert_int_equal(cli_admin_getstripe(&x->a, x->dir), 0);
	s = output(x);
	assert_non_null(strstr(s, "  default stripe_size:  file system default\n"
				  "  default stripe_count: file system default\n"));
	fclose(x->f);
	free(x->out);
	x->out = NULL;
	x->f = open_memstream(&x->out, &x->outlen);
	assert_non_null(x->f);
	x->a.out = x->f;
	x->m.dir_default = 1;
	assert_int_equal(cli_admin_getstripe(&x->a, x->dir), 0);
	s = output(x);
	assert_non_null(strstr(s, "default stripe_size:  4194304 (4.0M)\n"));
	assert_non_null(strstr(s, "default stripe_count: 3\n"));
	assert_null(strstr(s, "OBJECT_ID")); /* no objects for a directory */

	/* the form the real MDS sends: size, count 0 */
	x->m.dir_default = 2;
	x->a.json = 1;
	{
		json_t *j;

		fclose(x->f);
		free(x->out);
		x->out = NULL;
		x->f = open_memstream(&x->out, &x->outlen);
		assert_non_null(x->f);
		x->a.out = x->f;
		assert_int_equal(cli_admin_getstripe(&x->a, x->dir), 0);
		j = output_json(x);
		assert_string_equal(json_string_value(json_object_get(j, "type")), "directory");
		assert_int_equal(json_integer_value(json_object_get(j, "stripe_size")), 4 << 20);
		assert_int_equal(json_integer_value(json_object_get(j, "stripe_count")), 0);
		assert_int_equal(json_array_size(json_object_get(j, "stripes")), 0);
		json_decref(j);
	}
	x->m.dir_default = 3;
	x->a.json = 0;
	fclose(x->f);
	free(x->out);
	x->out = NULL;
	x->f = open_memstream(&x->out, &x->outlen);
	assert_non_null(x->f);
	x->a.out = x->f;
	assert_int_equal(cli_admin_getstripe(&x->a, x->dir), 0);
	assert_non_null(strstr(output(x), "default stripe_count: -1 (all OSTs)\n"));

	/* a count without a size (setstripe -c 1 DIR) is a valid default */
	x->m.dir_default = 4;
	fclose(x->f);
	free(x->out);
	x->out = NULL;
	x->f = open_memstream(&x->out, &x->outlen);
	assert_non_null(x->f);
	x->a.out = x->f;
	assert_int_equal(cli_admin_getstripe(&x->a, x->dir), 0);
	s = output(x);
	assert_non_null(strstr(s, "default stripe_size:  file system default\n"));
	assert_non_null(strstr(s, "default stripe_count: 1\n"));
}

static void test_admin_cmd_getstripe_missing(void **state)
{
	fixture *x = *state;
	char p[400];

	snprintf(p, sizeof(p), "%s/nope", x->dir);
	assert_int_equal(cli_admin_getstripe(&x->a, p), -ENOENT);
	assert_non_null(strstr(x->a.what, p));
	assert_int_equal(x->m.nreq[PFS_OP_MDS_GETLAYOUT], 0);
}

static void test_admin_cmd_setstripe_dir(void **state)
{
	fixture *x = *state;

	x->a.json = 1;
	assert_int_equal(cli_admin_setstripe(&x->a, x->dir, 1, 8, 1, 2u << 20), 0);
	assert_int_equal(x->m.nreq[PFS_OP_MDS_SETSTRIPE], 1);
	assert_int_equal(x->m.set_ino, x->m.dir_ino);
	assert_int_equal(x->m.set_size, 2u << 20);
	assert_int_equal(x->m.set_count, 8);
	assert_int_equal(x->m.last_cred.uid, getuid());
	assert_int_equal(x->m.last_cred.gid, getgid());
	json_decref(output_json(x)); /* one valid JSON document */
}

/* Only -c given: the size goes as 0 = default. */
static void test_admin_cmd_setstripe_empty_file(void **state)
{
	fixture *x = *state;

	assert_int_equal(cli_admin_setstripe(&x->a, x->file, 1, 3, 0, 0), 0);
	assert_int_equal(x->m.set_ino, x->m.file_ino);
	assert_int_equal(x->m.set_size, 0);
	assert_int_equal(x->m.set_count, 3);
	/* and the layout is read back and shown */
	assert_int_equal(x->m.nreq[PFS_OP_MDS_GETLAYOUT], 1);
	assert_non_null(strstr(output(x), "  stripe_count: 2\n"));
}

/* Only -S on a directory: count 0 = default. */
static void test_admin_cmd_setstripe_dir_size_only(void **state)
{
	fixture *x = *state;

	assert_int_equal(cli_admin_setstripe(&x->a, x->dir, 0, 0, 1, 128u << 10), 0);
	assert_int_equal(x->m.set_size, 128u << 10);
	assert_int_equal(x->m.set_count, 0);
}

static void test_admin_cmd_setstripe_has_data(void **state)
{
	fixture *x = *state;

	assert_int_equal(cli_admin_setstripe(&x->a, x->data, 1, 2, 0, 0), -EBUSY);
	assert_int_equal(x->m.nreq[PFS_OP_MDS_SETSTRIPE], 0);
	assert_non_null(strstr(x->a.what, "has data"));
	assert_string_equal(output(x), "");
}

/* A new path: CREATE in the parent's inode with the hints; -1 goes as
 * UINT32_MAX ("all OSTs up", resolved by the MDS). */
static void test_admin_cmd_setstripe_create(void **state)
{
	fixture *x = *state;
	char p[400];
	json_t *j;
	mode_t um = umask(022);

	snprintf(p, sizeof(p), "%s/newfile", x->dir);
	x->a.json = 1;
	assert_int_equal(cli_admin_setstripe(&x->a, p, 1, CLI_STRIPE_ALL, 1, 256u << 10), 0);
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
	assert_int_equal(json_integer_value(json_object_get(j, "ino")), 4242);
	assert_int_equal(json_integer_value(json_object_get(j, "stripe_count")), 2);
	assert_int_equal(json_array_size(json_object_get(j, "stripes")), 2);
	json_decref(j);
}

/* Omitted values on a new file are inherited: 0 on the wire. */
static void test_admin_cmd_setstripe_create_inherit(void **state)
{
	fixture *x = *state;
	char p[400];

	snprintf(p, sizeof(p), "%s/f2", x->dir);
	assert_int_equal(cli_admin_setstripe(&x->a, p, 1, 4, 0, 0), 0);
	assert_int_equal(x->m.cr_size, 0);
	assert_int_equal(x->m.cr_count, 4);
	assert_non_null(strstr(output(x), "stripe_count: 4\n"));
}

static void test_admin_cmd_setstripe_no_parent(void **state)
{
	fixture *x = *state;
	char p[400];

	snprintf(p, sizeof(p), "%s/nodir/f", x->dir);
	assert_int_equal(cli_admin_setstripe(&x->a, p, 1, 1, 0, 0), -ENOENT);
	assert_int_equal(x->m.nreq[PFS_OP_MDS_CREATE], 0);
	assert_non_null(strstr(x->a.what, "parent"));
}

static void test_admin_cmd_ping(void **state)
{
	fixture *x = *state;
	json_t *j;

	assert_int_equal(cli_admin_ping(&x->a, 3), 0);
	assert_int_equal(x->m.nreq[PFS_OP_PING], 3);
	assert_int_equal(count_lines(output(x)), 4);
	assert_non_null(strstr(output(x), "seq=3 time="));
	assert_non_null(strstr(output(x), "rtt min/avg/max = "));
	fclose(x->f);
	free(x->out);
	x->out = NULL;
	x->f = open_memstream(&x->out, &x->outlen);
	assert_non_null(x->f);
	x->a.out = x->f;
	x->a.json = 1;
	assert_int_equal(cli_admin_ping(&x->a, 2), 0);
	j = output_json(x);
	assert_int_equal(json_integer_value(json_object_get(j, "count")), 2);
	assert_int_equal(json_array_size(json_object_get(j, "rtt_us")), 2);
	assert_true(json_integer_value(json_object_get(j, "min_us")) <=
		    json_integer_value(json_object_get(j, "max_us")));
	assert_non_null(strstr(json_string_value(json_object_get(j, "mds")), "127.0.0.1:"));
	json_decref(j);
	assert_int_equal(cli_admin_ping(&x->a, 0), -EINVAL);
}

/* cli_admin_run dispatches parsed arguments. */
static void test_admin_cmd_run(void **state)
{
	fixture *x = *state;
	cli_admin_args a;
	char err[256];

	assert_int_equal(parse(&a, err, "ost", "list", NULL), 0);
	assert_int_equal(cli_admin_run(&x->a, &a), 0);
	assert_int_equal(x->m.nreq[PFS_OP_MDS_OST_LIST], 1);
	assert_int_equal(parse(&a, err, "help", NULL), 0);
	assert_int_equal(cli_admin_run(&x->a, &a), -EINVAL);
}

/* No server: a transport error comes back, nothing is printed. */
static void test_admin_cmd_no_server(void **state)
{
	pfs_server_opts so = { .host = "127.0.0.1", .port = 0, .name = "gone" };
	pfs_rpc_opts ro = { .max_conns = 1, .timeout_ms = 2000, .retry_ms = 50 };
	pfs_server *s = NULL;
	pfs_rpc_pool *p = NULL;
	fake_mds m = { 0 };
	cli_admin a;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	uint16_t port;
	int rc;

	assert_non_null(f);
	pthread_mutex_init(&m.lock, NULL);
	/* A port that was free a moment ago and is closed now. */
	assert_int_equal(pfs_server_start(&so, fake_handler, &m, &s), 0);
	port = pfs_server_port(s);
	pfs_server_stop(s);
	assert_int_equal(pfs_rpc_pool_create("127.0.0.1", port, &ro, &p), 0);
	cli_admin_init(&a, p, f, 0);
	rc = cli_admin_ost_list(&a);
	assert_true(rc < 0);
	assert_non_null(strstr(a.what, "OST list"));
	fclose(f);
	assert_int_equal(len, 0);
	free(buf);
	pfs_rpc_pool_destroy(p);
	pthread_mutex_destroy(&m.lock);
}

#define FX(t) cmocka_unit_test_setup_teardown(t, fx_setup, fx_teardown)

int main(void)
{
	const struct CMUnitTest pure[] = {
		cmocka_unit_test(test_admin_fmt_size),
		cmocka_unit_test(test_admin_fmt_pct),
		cmocka_unit_test(test_admin_fmt_table),
		cmocka_unit_test(test_admin_fmt_table_grow),
		cmocka_unit_test(test_admin_args_good),
		cmocka_unit_test(test_admin_args_bad),
		cmocka_unit_test(test_admin_mnt_unescape),
		cmocka_unit_test(test_admin_mnt_parse_line),
		cmocka_unit_test(test_admin_mnt_find),
		cmocka_unit_test(test_admin_mnt_find_single),
		cmocka_unit_test(test_admin_mnt_canon),
	};
	const struct CMUnitTest cmds[] = {
		FX(test_admin_cmd_ost_list_table),
		FX(test_admin_cmd_ost_list_json),
		FX(test_admin_cmd_df_table),
		FX(test_admin_cmd_df_human),
		FX(test_admin_cmd_df_json),
		FX(test_admin_cmd_df_error),
		FX(test_admin_cmd_bad_reply),
		FX(test_admin_cmd_getstripe_file),
		FX(test_admin_cmd_getstripe_json),
		FX(test_admin_cmd_getstripe_dir),
		FX(test_admin_cmd_getstripe_missing),
		FX(test_admin_cmd_setstripe_dir),
		FX(test_admin_cmd_setstripe_empty_file),
		FX(test_admin_cmd_setstripe_dir_size_only),
		FX(test_admin_cmd_setstripe_has_data),
		FX(test_admin_cmd_setstripe_create),
		FX(test_admin_cmd_setstripe_create_inherit),
		FX(test_admin_cmd_setstripe_no_parent),
		FX(test_admin_cmd_ping),
		FX(test_admin_cmd_run),
		FX(test_admin_cmd_no_server),
	};
	int rc = cmocka_run_group_tests_name("admin_pure", pure, mk_tmpdir, rm_tmpdir);

	return rc + cmocka_run_group_tests_name("admin_cmd", cmds, NULL, NULL);
}
