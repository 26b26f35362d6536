/* test_mds_dirplus.c — PFS_OP_MDS_LOOKUP_BULK on the MDS (mds/dirplus.h)
 * on a temporary LMDB: the entries after a name in name order with
 * LOOKUP's attributes, paging to the end with eof exactly there, another
 * directory's entries never mixed in; the permissions of READDIR + LOOKUP
 * (no read or no search on the directory, no search above it: EACCES; a
 * file: ENOTDIR); the request decoder on good, garbage, truncated and
 * oversized input; the served reply decodes with the client's decoder. */
#include <errno.h>
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

#include "common/log.h"
#include "mds/dirplus.h"
#include "mds/ns.h"

struct fx {
	char dir[64];
	char db[96];
	mds_ns *ns;
	uint64_t d, sub, f0;
};

static const pfs_cred root = { 0, 0, 0, { 0 } };
static const pfs_cred alice = { 1000, 1000, 0, { 0 } };
static const pfs_cred bob = { 1001, 1001, 0, { 0 } };

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	mds_ns_opts o = { .sync_mode = MDS_SYNC_PERIODIC, .mapsize = 1ull << 30 };
	pfs_attr a;
	char name[32];

	pfs_log_init("test", PFS_LOG_ERR);
	strcpy(f->dir, "/tmp/test_mds_dirplus.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->db, sizeof(f->db), "%s/db", f->dir);
	o.path = f->db;
	assert_int_equal(mds_ns_open(&o, &f->ns), 0);
	/* /d (alice, 0755) with 300 entries n000..n299 (made in reverse, so
	 * creation order is not name order); /d2 with one entry; /d/sub
	 * (alice, 0700) with one */
	assert_int_equal(mds_ns_mkdir(f->ns, &root, 1, "d", 0777, &a), 0);
	f->d = a.ino;
	assert_int_equal(mds_ns_setattr(f->ns, &root, f->d, PFS_SETATTR_MODE | PFS_SETATTR_UID |
					PFS_SETATTR_GID, 040755, 1000, 1000, 0, 0, 0, &a), 0);
	for (int i = 299; i >= 0; i--) {
		snprintf(name, sizeof(name), "n%03d", i);
		assert_int_equal(mds_ns_mknod(f->ns, &alice, f->d, name, S_IFIFO | 0640, 0, &a), 0);
		if (i == 0)
			f->f0 = a.ino;
	}
	assert_int_equal(mds_ns_mkdir(f->ns, &root, 1, "d2", 0755, &a), 0);
	assert_int_equal(mds_ns_mknod(f->ns, &root, a.ino, "n000x", S_IFIFO | 0644, 0, &a), 0);
	assert_int_equal(mds_ns_mkdir(f->ns, &alice, f->d, "sub", 0700, &a), 0);
	f->sub = a.ino;
	assert_int_equal(mds_ns_mkdir(f->ns, &alice, f->sub, "in", 0755, &a), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char p[160];

	mds_ns_close(f->ns);
	snprintf(p, sizeof(p), "%s/data.mdb", f->db);
	unlink(p);
	snprintf(p, sizeof(p), "%s/lock.mdb", f->db);
	unlink(p);
	snprintf(p, sizeof(p), "%s/mds.lock", f->db);
	unlink(p);
	rmdir(f->db);
	rmdir(f->dir);
	free(f);
	return 0;
}

static void test_pages(void **state)
{
	struct fx *f = *state;
	mds_dirplus_ent *e = calloc(MDS_DIRPLUS_MAX, sizeof(*e));
	char after[PFS_NAME_MAX + 1] = "", want[32];
	uint32_t n, total = 0;
	int eof = 0, pages = 0;
	pfs_attr a;

	assert_non_null(e);
	while (!eof) {
		assert_int_equal(mds_ns_lookup_bulk(f->ns, &bob, f->d, after, 64, e, &n, &eof), 0);
		for (uint32_t i = 0; i < n; i++, total++) {
			if (total < 300)
				snprintf(want, sizeof(want), "n%03u", total);
			else
				strcpy(want, "sub");
			assert_string_equal(e[i].name, want);
			/* what LOOKUP sends */
			assert_int_equal(mds_ns_lookup(f->ns, &bob, f->d, e[i].name, &a), 0);
			assert_memory_equal(&a, &e[i].a, sizeof(a));
		}
		if (n)
			strcpy(after, e[n - 1].name);
		pages++;
	}
	assert_int_equal(total, 301);
	assert_int_equal(pages, 5); /* 64 x 4 + 45, eof on the last one */
	/* exactly full to the end: eof too */
	assert_int_equal(mds_ns_lookup_bulk(f->ns, &bob, f->d, "n255", 45, e, &n, &eof), 0);
	assert_int_equal(n, 45);
	assert_int_equal(eof, 1);
	/* after a name that does not exist: from the next one */
	assert_int_equal(mds_ns_lookup_bulk(f->ns, &bob, f->d, "n0005", 2, e, &n, &eof), 0);
	assert_int_equal(n, 2);
	assert_string_equal(e[0].name, "n001");
	assert_int_equal(eof, 0);
	/* past the end */
	assert_int_equal(mds_ns_lookup_bulk(f->ns, &bob, f->d, "zzz", 8, e, &n, &eof), 0);
	assert_int_equal(n, 0);
	assert_int_equal(eof, 1);
	free(e);
}

static void test_perms(void **state)
{
	struct fx *f = *state;
	mds_dirplus_ent *e = calloc(8, sizeof(*e));
	uint32_t n;
	int eof;
	pfs_attr sa;

	assert_non_null(e);
	/* sub is 0700 alice: bob may neither read nor search it */
	assert_int_equal(mds_ns_lookup_bulk(f->ns, &bob, f->sub, "", 8, e, &n, &eof), -EACCES);
	assert_int_equal(mds_ns_lookup_bulk(f->ns, &alice, f->sub, "", 8, e, &n, &eof), 0);
	assert_int_equal(n, 1);
	/* search only (0711): READDIR would be refused, so is this */
	assert_int_equal(mds_ns_setattr(f->ns, &alice, f->sub, PFS_SETATTR_MODE, 040711, 0, 0, 0, 0,
					0, &sa), 0);
	assert_int_equal(mds_ns_lookup_bulk(f->ns, &bob, f->sub, "", 8, e, &n, &eof), -EACCES);
	/* read only (0744): LOOKUP would be refused */
	assert_int_equal(mds_ns_setattr(f->ns, &alice, f->sub, PFS_SETATTR_MODE, 040744, 0, 0, 0, 0,
					0, &sa), 0);
	assert_int_equal(mds_ns_lookup_bulk(f->ns, &bob, f->sub, "", 8, e, &n, &eof), -EACCES);
	/* sub/in is 0755 but sub above it is not searchable for bob */
	{
		pfs_attr a;

		assert_int_equal(mds_ns_lookup(f->ns, &alice, f->sub, "in", &a), 0);
		assert_int_equal(mds_ns_lookup_bulk(f->ns, &bob, a.ino, "", 8, e, &n, &eof),
				 -EACCES);
		assert_int_equal(mds_ns_lookup_bulk(f->ns, &alice, a.ino, "", 8, e, &n, &eof), 0);
	}
	/* not a directory; no such inode */
	assert_int_equal(mds_ns_lookup_bulk(f->ns, &alice, f->f0, "", 8, e, &n, &eof), -ENOTDIR);
	assert_int_equal(mds_ns_lookup_bulk(f->ns, &root, 999999, "", 8, e, &n, &eof), -ENOENT);
	free(e);
}

static void enc_req(pfs_wbuf *w, uint64_t dir, const char *after, uint32_t max)
{
	pfs_wbuf_init(w);
	pfs_wbuf_u64(w, dir);
	pfs_wbuf_str(w, after);
	pfs_wbuf_u32(w, max);
}

static void test_decode(void **state)
{
	char after[PFS_NAME_MAX + 1];
	uint64_t dir;
	uint32_t max;
	pfs_wbuf w;
	pfs_rbuf b;

	(void)state;
	enc_req(&w, 5, "abc", 100000);
	pfs_rbuf_init(&b, w.data, w.len);
	assert_int_equal(mds_dirplus_decode(&b, &dir, after, &max), 0);
	assert_int_equal(dir, 5);
	assert_string_equal(after, "abc");
	assert_int_equal(max, MDS_DIRPLUS_MAX); /* capped */
	for (size_t l = 0; l < w.len; l++) {
		pfs_rbuf_init(&b, w.data, l);
		assert_int_equal(mds_dirplus_decode(&b, &dir, after, &max), -EBADMSG);
	}
	pfs_wbuf_u8(&w, 0);
	pfs_rbuf_init(&b, w.data, w.len);
	assert_int_equal(mds_dirplus_decode(&b, &dir, after, &max), -EBADMSG);
	pfs_wbuf_free(&w);
	/* max 0 */
	enc_req(&w, 5, "", 0);
	pfs_rbuf_init(&b, w.data, w.len);
	assert_int_equal(mds_dirplus_decode(&b, &dir, after, &max), -EINVAL);
	pfs_wbuf_free(&w);
	/* an embedded NUL; an overlong name */
	{
		char big[PFS_NAME_MAX + 2];

		pfs_wbuf_init(&w);
		pfs_wbuf_u64(&w, 5);
		pfs_wbuf_u32(&w, 3);
		pfs_wbuf_bytes(&w, "a\0b", 3);
		pfs_wbuf_u32(&w, 4);
		pfs_rbuf_init(&b, w.data, w.len);
		assert_int_equal(mds_dirplus_decode(&b, &dir, after, &max), -EBADMSG);
		pfs_wbuf_free(&w);
		memset(big, 'x', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		enc_req(&w, 5, big, 4);
		pfs_rbuf_init(&b, w.data, w.len);
		assert_int_equal(mds_dirplus_decode(&b, &dir, after, &max), -EBADMSG);
		pfs_wbuf_free(&w);
	}
	/* garbage: a clean error or a value */
	{
		uint8_t g[300];
		unsigned seed = 777;

		for (int r = 0; r < 3000; r++) {
			size_t l = (size_t)(seed % sizeof(g));

			for (size_t i = 0; i < l; i++) {
				seed = seed * 1103515245u + 12345u;
				g[i] = (uint8_t)(seed >> 16);
			}
			if (l > 12)
				g[8] = (uint8_t)(g[8] % 64), g[9] = g[10] = g[11] = 0;
			pfs_rbuf_init(&b, g, l);
			int rc = mds_dirplus_decode(&b, &dir, after, &max);

			assert_true(rc == 0 || rc == -EBADMSG || rc == -EINVAL);
			if (rc == 0)
				assert_true(max >= 1 && max <= MDS_DIRPLUS_MAX &&
					    strlen(after) <= PFS_NAME_MAX);
		}
	}
}

static void test_serve(void **state)
{
	struct fx *f = *state;
	pfs_wbuf req, out;
	pfs_rbuf b, r;
	uint32_t n;
	uint8_t eof;
	int grants = 0;
	char name[PFS_NAME_MAX + 1];
	pfs_attr a;

	enc_req(&req, f->d, "n100", 3);
	pfs_rbuf_init(&b, req.data, req.len);
	pfs_wbuf_init(&out);
	assert_int_equal(mds_dirplus_serve(f->ns, &bob, &b, &out, NULL, NULL), 0);
	pfs_rbuf_init(&r, out.data, out.len);
	n = pfs_rbuf_u32(&r);
	eof = pfs_rbuf_u8(&r);
	assert_int_equal(n, 3);
	assert_int_equal(eof, 0);
	for (uint32_t i = 0; i < n; i++) {
		pfs_rbuf_cstr(&r, name, sizeof(name));
		assert_int_equal(pfs_attr_decode(&r, &a), 0);
		snprintf(name + 16, 16, "n%03u", 101 + i);
		assert_string_equal(name, name + 16);
	}
	assert_int_equal(pfs_rbuf_done(&r), 0);
	pfs_wbuf_free(&out);
	(void)grants;
	/* a refused request leaves no reply bytes */
	pfs_rbuf_init(&b, req.data, req.len);
	pfs_wbuf_init(&out);
	{
		pfs_wbuf q;

		enc_req(&q, f->sub, "", 3);
		pfs_rbuf_init(&b, q.data, q.len);
		assert_int_equal(mds_dirplus_serve(f->ns, &bob, &b, &out, NULL, NULL), -EACCES);
		assert_int_equal(out.len, 0);
		pfs_wbuf_free(&q);
	}
	pfs_wbuf_free(&out);
	pfs_wbuf_free(&req);
}

static void grant_count(void *arg, uint64_t dir, const char *name, uint64_t ino)
{
	(void)dir;
	(void)name;
	(void)ino;
	(*(int *)arg)++;
}

static void test_serve_grants(void **state)
{
	struct fx *f = *state;
	pfs_wbuf req, out;
	pfs_rbuf b;
	int grants = 0;

	enc_req(&req, f->d, "", 10);
	pfs_rbuf_init(&b, req.data, req.len);
	pfs_wbuf_init(&out);
	assert_int_equal(mds_dirplus_serve(f->ns, &bob, &b, &out, grant_count, &grants), 0);
	assert_int_equal(grants, 10);
	pfs_wbuf_free(&out);
	pfs_wbuf_free(&req);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_pages, setup, teardown),
		cmocka_unit_test_setup_teardown(test_perms, setup, teardown),
		cmocka_unit_test(test_decode),
		cmocka_unit_test_setup_teardown(test_serve, setup, teardown),
		cmocka_unit_test_setup_teardown(test_serve_grants, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
