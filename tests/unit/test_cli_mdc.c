/* test_cli_mdc.c — the metadata client's wire encoding against a fake MDS:
 * cred on namespace requests, job id and client id in every header, reply
 * decoding (attr, layout, readdir pages, strings) and rejection of replies
 * that are short or have bytes left over; GETLAYOUT of files and of
 * directory defaults (pfsadmin's form), PING echoes, an mdc wrapped around
 * a pool it does not own; UNLINK's expected inode, DELEG_GET/RETURN;
 * UNLINK_BATCH's request bytes, its statuses and the replies it refuses;
 * CREATE_SLOTS's request, the slots it decodes and the replies it refuses;
 * CREATE into a slot (SLOT, EXCL and CLOSED in the flags, the slot's inode
 * after the stripe hints); CREATE_BATCH's request bytes, its statuses and
 * the replies it refuses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/mdc.h"
#include "common/buf.h"
#include "common/layout.h"
#include "common/msg.h"
#include "common/server.h"

static pfs_server *srv;
static cli_mdc *mdc;
/* What the fake MDS saw last. */
static pfs_hdr last_hdr;
static pfs_cred last_cred;
static char last_name[256];
static uint64_t last_u64;
static uint64_t last_ino; /* UNLINK's expected inode; 0 = none sent */
static uint8_t last_payload[8192]; /* a *_BATCH's, CREATE's or CREATE_SLOTS' request */
static size_t last_plen;
static uint32_t last_n;     /* CREATE_SLOTS' count */
static uint32_t last_flags; /* CREATE's flags */

static void sample_attr(pfs_attr *a, uint64_t ino)
{
	memset(a, 0, sizeof(*a));
	a->ino = ino;
	a->mode = 0100644;
	a->nlink = 1;
	a->uid = 10;
	a->gid = 20;
	a->size = 12345;
	a->mtime_ns = 777;
}

static void handler(void *ctx, pfs_sconn *c, const pfs_hdr *h, uint8_t *payload)
{
	pfs_rbuf r;
	pfs_wbuf w;
	pfs_attr a;
	int rc = 0;

	last_hdr = *h;
	pfs_wbuf_init(&w);
	pfs_rbuf_init(&r, payload, h->payload_len);
	if (h->opcode != PFS_OP_MDS_OST_LIST && h->opcode != PFS_OP_PING)
		pfs_cred_decode(&r, &last_cred);
	switch (h->opcode) {
	case PFS_OP_MDS_LOOKUP:
		last_u64 = pfs_rbuf_u64(&r);
		pfs_rbuf_cstr(&r, last_name, sizeof(last_name));
		if ((rc = pfs_rbuf_done(&r)))
			break;
		if (!strcmp(last_name, "missing")) {
			rc = -ENOENT;
			break;
		}
		sample_attr(&a, 42);
		pfs_attr_encode(&w, &a);
		if (!strcmp(last_name, "trailing"))
			pfs_wbuf_u8(&w, 1);
		if (!strcmp(last_name, "short"))
			w.len -= 4;
		break;
	case PFS_OP_MDS_OPEN: {
		pfs_layout l = { .stripe_size = 1 << 20, .stripe_count = 2,
				 .stripe = { { 3, 100 }, { 1, 101 } } };
		last_u64 = pfs_rbuf_u64(&r);
		pfs_rbuf_u32(&r);
		if ((rc = pfs_rbuf_done(&r)))
			break;
		sample_attr(&a, last_u64);
		pfs_attr_encode(&w, &a);
		pfs_layout_encode(&w, &l);
		break;
	}
	case PFS_OP_MDS_READDIR: {
		uint64_t cookie;

		last_u64 = pfs_rbuf_u64(&r);
		cookie = pfs_rbuf_u64(&r);
		pfs_rbuf_u32(&r);
		if ((rc = pfs_rbuf_done(&r)))
			break;
		pfs_wbuf_u32(&w, 2);
		pfs_wbuf_u8(&w, cookie != 0);
		for (int i = 0; i < 2; i++) {
			char name[32];

			snprintf(name, sizeof(name), "e%llu", (unsigned long long)cookie + i);
			pfs_wbuf_u64(&w, 500 + cookie + i);
			pfs_wbuf_u32(&w, 040755);
			pfs_wbuf_u64(&w, cookie + i + 3);
			pfs_wbuf_str(&w, name);
		}
		break;
	}
	case PFS_OP_MDS_READLINK:
		pfs_wbuf_str(&w, "target/path");
		break;
	case PFS_OP_MDS_SYNC:
		/* ino 13: the database sync failed; 14: a reply with a byte */
		last_u64 = pfs_rbuf_u64(&r);
		if ((rc = pfs_rbuf_done(&r)))
			break;
		if (last_u64 == 13)
			rc = -EIO;
		if (last_u64 == 14)
			pfs_wbuf_u8(&w, 0);
		break;
	case PFS_OP_MDS_GETXATTR:
		pfs_rbuf_u64(&r);
		pfs_rbuf_cstr(&r, last_name, sizeof(last_name));
		pfs_wbuf_strn(&w, "v\0x", 3);
		break;
	case PFS_OP_MDS_UNLINK:
		/* the optional expected inode: last_ino (0 = absent); "other"
		 * names another inode */
		last_u64 = pfs_rbuf_u64(&r);
		pfs_rbuf_cstr(&r, last_name, sizeof(last_name));
		last_ino = pfs_rbuf_left(&r) ? pfs_rbuf_u64(&r) : 0;
		rc = pfs_rbuf_done(&r);
		if (rc == 0 && last_ino && !strcmp(last_name, "other"))
			rc = -ESTALE;
		break;
	case PFS_OP_MDS_UNLINK_BATCH: {
		/* each name's status: "gone" -ENOENT, "other" -ESTALE, "bad"
		 * -EIO, else 0.  parent 20: a count of n - 1 (n statuses);
		 * 21: the last status cut short; 22: a byte too many; 23: a
		 * status > 0; 24: the request refused (an MDS without the
		 * opcode); 25: n + 1 statuses, counted */
		uint32_t n;
		char name[256];

		last_plen = h->payload_len < sizeof(last_payload) ? h->payload_len : 0;
		memcpy(last_payload, payload, last_plen);
		last_u64 = pfs_rbuf_u64(&r);
		n = pfs_rbuf_u32(&r);
		if (n > PFS_UNLINK_BATCH_MAX) {
			rc = -EINVAL;
			break;
		}
		pfs_wbuf_u32(&w, last_u64 == 20 ? n - 1 : last_u64 == 25 ? n + 1 : n);
		for (uint32_t i = 0; i < n; i++) {
			pfs_rbuf_cstr(&r, name, sizeof(name));
			pfs_rbuf_u64(&r);
			pfs_wbuf_u32(&w, (uint32_t)(!strcmp(name, "gone")    ? -ENOENT
						    : !strcmp(name, "other") ? -ESTALE
						    : !strcmp(name, "bad")   ? -EIO
						    : last_u64 == 23	     ? 5
									     : 0));
		}
		if ((rc = pfs_rbuf_done(&r)))
			break;
		if (last_u64 == 21)
			w.len -= 2;
		if (last_u64 == 22)
			pfs_wbuf_u8(&w, 0);
		if (last_u64 == 25)
			pfs_wbuf_u32(&w, 0);
		if (last_u64 == 24)
			rc = -EOPNOTSUPP;
		break;
	}
	case PFS_OP_MDS_CREATE: {
		/* the file is ino 77 with the mode asked for; names: "exists"
		 * -EEXIST, "caps" a reply with an empty capability list,
		 * "short" the layout cut short, "trailing" a byte too many,
		 * "badlayout" a stripe size of 100K (fails pfs_layout_check) */
		pfs_layout l = { .stripe_size = 1 << 20, .stripe_count = 2,
				 .stripe = { { 2, 300 }, { 0, 301 } } };
		uint32_t mode;

		last_plen = h->payload_len < sizeof(last_payload) ? h->payload_len : 0;
		memcpy(last_payload, payload, last_plen);
		last_u64 = pfs_rbuf_u64(&r);
		pfs_rbuf_cstr(&r, last_name, sizeof(last_name));
		mode = pfs_rbuf_u32(&r);
		last_flags = pfs_rbuf_u32(&r);
		pfs_rbuf_u32(&r);
		pfs_rbuf_u32(&r);
		if (pfs_rbuf_left(&r))
			pfs_rbuf_u32(&r);
		if ((rc = pfs_rbuf_done(&r)))
			break;
		if (!strcmp(last_name, "exists")) {
			rc = -EEXIST;
			break;
		}
		sample_attr(&a, 77);
		a.mode = mode;
		pfs_attr_encode(&w, &a);
		if (!strcmp(last_name, "badlayout"))
			l.stripe_size = 100u << 10;
		pfs_layout_encode(&w, &l);
		if (!strcmp(last_name, "caps"))
			pfs_wbuf_u32(&w, 0);
		if (!strcmp(last_name, "short"))
			w.len -= 4;
		if (!strcmp(last_name, "trailing"))
			pfs_wbuf_u8(&w, 0);
		break;
	}
	case PFS_OP_MDS_CREATE_SLOTS: {
		/* the directory's attributes (ino = dir, 040755), then n slots,
		 * ino 1000 + i, layout 1 MiB x 2 on OSTs (i, i + 1) % 4, objects
		 * 5000 + 2i and 5001 + 2i.  dir 31: a count of n + 1 (n
		 * slots); 32: the last layout cut short; 33: a byte too many;
		 * 34: the last slot's ino 0; 35: the last layout without
		 * objects (stripe_count 0); 36: -EAGAIN (not the holder); 37:
		 * the last layout's stripe size 100K (fails pfs_layout_check);
		 * 38: n - 1 slots, counted; 39: the attributes cut short; 40:
		 * the request refused (-EINVAL) */
		uint32_t n;

		last_plen = h->payload_len < sizeof(last_payload) ? h->payload_len : 0;
		memcpy(last_payload, payload, last_plen);
		last_u64 = pfs_rbuf_u64(&r);
		last_n = n = pfs_rbuf_u32(&r);
		if ((rc = pfs_rbuf_done(&r)))
			break;
		if (n == 0 || n > PFS_CREATE_SLOTS_MAX || last_u64 == 40) {
			rc = -EINVAL;
			break;
		}
		if (last_u64 == 36) {
			rc = -EAGAIN;
			break;
		}
		sample_attr(&a, last_u64);
		a.mode = 040755;
		pfs_attr_encode(&w, &a);
		if (last_u64 == 39) {
			w.len -= 8;
			break;
		}
		if (last_u64 == 38)
			n--;
		pfs_wbuf_u32(&w, last_u64 == 31 ? n + 1 : n);
		for (uint32_t i = 0; i < n; i++) {
			pfs_layout l = { .stripe_size = 1 << 20, .stripe_count = 2 };
			int end = i == n - 1;

			for (uint32_t j = 0; j < 2; j++)
				l.stripe[j] = (pfs_stripe){ (i + j) % 4, 5000 + 2 * i + j };
			if (end && last_u64 == 35)
				l.stripe_count = 0;
			if (end && last_u64 == 37)
				l.stripe_size = 100u << 10;
			pfs_wbuf_u64(&w, end && last_u64 == 34 ? 0 : 1000 + i);
			pfs_layout_encode(&w, &l);
		}
		if (last_u64 == 32)
			w.len -= 4;
		if (last_u64 == 33)
			pfs_wbuf_u8(&w, 0);
		break;
	}
	case PFS_OP_MDS_CREATE_BATCH: {
		/* each name's status: "exists" -EEXIST, "stale" -ESTALE (no
		 * such slot), "bad" -EIO, else 0.  parent 50: a count of n - 1
		 * (n statuses); 51: the last status cut short; 52: a byte too
		 * many; 53: a status > 0; 54: the request refused (an MDS
		 * without the opcode); 55: n + 1 statuses, counted */
		uint32_t n;
		char name[256];

		last_plen = h->payload_len < sizeof(last_payload) ? h->payload_len : 0;
		memcpy(last_payload, payload, last_plen);
		last_u64 = pfs_rbuf_u64(&r);
		n = pfs_rbuf_u32(&r);
		if (n == 0 || n > PFS_CREATE_SLOTS_MAX) {
			rc = -EINVAL;
			break;
		}
		pfs_wbuf_u32(&w, last_u64 == 50 ? n - 1 : last_u64 == 55 ? n + 1 : n);
		for (uint32_t i = 0; i < n; i++) {
			pfs_rbuf_cstr(&r, name, sizeof(name));
			pfs_rbuf_u32(&r); /* mode */
			pfs_rbuf_u32(&r); /* flags */
			pfs_rbuf_u64(&r); /* ino */
			pfs_wbuf_u32(&w, (uint32_t)(!strcmp(name, "exists")  ? -EEXIST
						    : !strcmp(name, "stale") ? -ESTALE
						    : !strcmp(name, "bad")   ? -EIO
						    : last_u64 == 53	     ? 5
									     : 0));
		}
		if ((rc = pfs_rbuf_done(&r)))
			break;
		if (last_u64 == 51)
			w.len -= 2;
		if (last_u64 == 52)
			pfs_wbuf_u8(&w, 0);
		if (last_u64 == 55)
			pfs_wbuf_u32(&w, 0);
		if (last_u64 == 54)
			rc = -EOPNOTSUPP;
		break;
	}
	case PFS_OP_MDS_DELEG_GET:
		/* dir 7: granted for 9000 ms; 8: -EAGAIN; 9: lease 0 (bad);
		 * 10: a byte too many; 11: attributes cut short */
		last_u64 = pfs_rbuf_u64(&r);
		if ((rc = pfs_rbuf_done(&r)))
			break;
		if (last_u64 == 8) {
			rc = -EAGAIN;
			break;
		}
		pfs_wbuf_u32(&w, last_u64 == 9 ? 0 : 9000);
		sample_attr(&a, last_u64);
		a.mode = 040755;
		pfs_attr_encode(&w, &a);
		if (last_u64 == 10)
			pfs_wbuf_u8(&w, 0);
		if (last_u64 == 11)
			w.len -= 8;
		break;
	case PFS_OP_MDS_DELEG_RETURN:
		/* dir 12: a reply with a byte */
		last_u64 = pfs_rbuf_u64(&r);
		if ((rc = pfs_rbuf_done(&r)))
			break;
		if (last_u64 == 12)
			pfs_wbuf_u8(&w, 0);
		break;
	case PFS_OP_MDS_OST_LIST: {
		pfs_ost_info o = { .index = 7, .data_port = 1234, .up = 1 };

		snprintf(o.host, sizeof(o.host), "oss-host");
		pfs_wbuf_u32(&w, 1);
		pfs_ost_info_encode(&w, &o);
		break;
	}
	case PFS_OP_PING:
		/* echo, except that a payload starting with "bad" comes back
		 * changed */
		pfs_wbuf_bytes(&w, payload, h->payload_len);
		if (h->payload_len >= 3 && memcmp(payload, "bad", 3) == 0)
			w.data[0] = 'B';
		break;
	case PFS_OP_MDS_GETLAYOUT: {
		/* ino 1: a file's layout; 2: a directory default 256K/3; 3: the
		 * default "every OST"; 4: default count 65 (bad); 5: default
		 * size 100K (bad); 6: a file without a layout; 7: size and
		 * count and one byte too many */
		pfs_layout l = { .stripe_size = 1 << 20, .stripe_count = 2,
				 .stripe = { { 3, 100 }, { 1, 101 } } };
		static const uint32_t dflt[][2] = {
			[2] = { 256u << 10, 3 }, [3] = { 0, UINT32_MAX }, [4] = { 0, 65 },
			[5] = { 100u << 10, 1 }, [6] = { 0, 0 },
		};

		last_u64 = pfs_rbuf_u64(&r);
		if ((rc = pfs_rbuf_done(&r)))
			break;
		if (last_u64 == 1) {
			pfs_layout_encode(&w, &l);
		} else if (last_u64 >= 2 && last_u64 <= 6) {
			pfs_wbuf_u32(&w, dflt[last_u64][0]);
			pfs_wbuf_u32(&w, dflt[last_u64][1]);
		} else {
			pfs_wbuf_u32(&w, 1 << 20);
			pfs_wbuf_u32(&w, 1);
			pfs_wbuf_u8(&w, 0);
		}
		break;
	}
	default:
		rc = -EOPNOTSUPP;
	}
	pfs_sconn_reply(c, h, rc, rc ? NULL : w.data, rc ? 0 : w.len, NULL, 0);
	pfs_wbuf_free(&w);
	free(payload);
}

static int setup(void **state)
{
	pfs_server_opts so = { .host = "127.0.0.1", .name = "fake-mds" };
	pfs_rpc_opts ro = { .max_conns = 2, .timeout_ms = 10000, .retry_ms = 500,
			    .client_id = 0x1122334455667788ull };

	assert_int_equal(pfs_server_start(&so, handler, NULL, &srv), 0);
	assert_int_equal(cli_mdc_create("127.0.0.1", pfs_server_port(srv), &ro, &mdc), 0);
	return 0;
}

static int teardown(void **state)
{
	cli_mdc_destroy(mdc);
	pfs_server_stop(srv);
	return 0;
}

static cli_ctx mkctx(void)
{
	cli_ctx c;

	memset(&c, 0, sizeof(c));
	c.cred.uid = 1000;
	c.cred.gid = 100;
	c.cred.ngroups = 2;
	c.cred.groups[0] = 5;
	c.cred.groups[1] = 6;
	snprintf(c.job, sizeof(c.job), "job-77");
	return c;
}

static void test_mdc_lookup_headers_and_cred(void **state)
{
	cli_ctx c = mkctx();
	pfs_attr a;
	char job[PFS_JOBID_MAX + 1];

	assert_int_equal(cli_mdc_lookup(mdc, &c, 1, "file", &a), 0);
	assert_int_equal(a.ino, 42);
	assert_int_equal(a.size, 12345);
	assert_int_equal(a.mode, 0100644);
	assert_int_equal(last_u64, 1);
	assert_string_equal(last_name, "file");
	assert_int_equal(last_cred.uid, 1000);
	assert_int_equal(last_cred.gid, 100);
	assert_int_equal(last_cred.ngroups, 2);
	assert_int_equal(last_cred.groups[1], 6);
	assert_int_equal(last_hdr.client_id, 0x1122334455667788ull);
	pfs_hdr_jobid(&last_hdr, job);
	assert_string_equal(job, "job-77");
}

static void test_mdc_errors(void **state)
{
	cli_ctx c = mkctx();
	pfs_attr a;
	char longname[300];

	assert_int_equal(cli_mdc_lookup(mdc, &c, 1, "missing", &a), -ENOENT);
	assert_int_equal(cli_mdc_lookup(mdc, &c, 1, "trailing", &a), -EBADMSG);
	assert_int_equal(cli_mdc_lookup(mdc, &c, 1, "short", &a), -EBADMSG);
	memset(longname, 'n', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = 0;
	assert_int_equal(cli_mdc_lookup(mdc, &c, 1, longname, &a), -ENAMETOOLONG);
	assert_int_equal(cli_mdc_unlink(mdc, &c, 1, ""), -EINVAL);
	assert_int_equal(cli_mdc_access(mdc, &c, 1, 4), -EOPNOTSUPP);
}

static void test_mdc_open_layout(void **state)
{
	cli_ctx c = mkctx();
	pfs_attr a;
	pfs_layout l;

	assert_int_equal(cli_mdc_open(mdc, &c, 99, 2, &a, &l), 0);
	assert_int_equal(a.ino, 99);
	assert_int_equal(l.stripe_count, 2);
	assert_int_equal(l.stripe_size, 1 << 20);
	assert_int_equal(l.stripe[0].ost, 3);
	assert_int_equal(l.stripe[1].object, 101);
}

static void test_mdc_readdir_strings(void **state)
{
	cli_ctx c = mkctx();
	cli_dirent ents[4];
	uint32_t n = 0;
	int eof = -1;
	char buf[64];
	void *val = NULL;
	size_t len = 0;
	pfs_ost_info *osts = NULL;
	uint32_t nost = 0;

	assert_int_equal(cli_mdc_readdir(mdc, &c, 5, 0, 4, ents, &n, &eof), 0);
	assert_int_equal(n, 2);
	assert_int_equal(eof, 0);
	assert_string_equal(ents[1].name, "e1");
	assert_int_equal(ents[1].next_cookie, 4);
	assert_int_equal(cli_mdc_readdir(mdc, &c, 5, 4, 4, ents, &n, &eof), 0);
	assert_int_equal(eof, 1);
	assert_string_equal(ents[0].name, "e4");
	/* A page larger than asked for is a protocol error. */
	assert_int_equal(cli_mdc_readdir(mdc, &c, 5, 0, 1, ents, &n, &eof), -EBADMSG);

	assert_int_equal(cli_mdc_readlink(mdc, &c, 8, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "target/path");
	assert_int_equal(cli_mdc_readlink(mdc, &c, 8, buf, 5), -ENAMETOOLONG);
	/* Binary xattr values keep their NULs. */
	assert_int_equal(cli_mdc_getxattr(mdc, &c, 8, "user.a", &val, &len), 0);
	assert_int_equal(len, 3);
	assert_memory_equal(val, "v\0x", 3);
	free(val);
	assert_int_equal(cli_mdc_ost_list(mdc, "j", &osts, &nost), 0);
	assert_int_equal(nost, 1);
	assert_int_equal(osts[0].index, 7);
	assert_string_equal(osts[0].host, "oss-host");
	free(osts);
}

static void test_mdc_client_id(void **state)
{
	uint64_t a = 0, b = 0;

	assert_int_equal(cli_client_id_new(&a), 0);
	assert_int_equal(cli_client_id_new(&b), 0);
	assert_true(a != 0 && b != 0 && a != b);
}

/* A file's layout, a directory's default in its short form, and replies
 * that are neither. */
static void test_mdc_getlayout_any(void **state)
{
	cli_ctx c = mkctx();
	pfs_layout l;
	uint32_t nobj = 99;

	assert_int_equal(cli_mdc_getlayout_any(mdc, &c, 1, &l, &nobj), 0);
	assert_int_equal(nobj, 2);
	assert_int_equal(l.stripe_count, 2);
	assert_int_equal(l.stripe[1].object, 101);
	assert_int_equal(last_cred.uid, 1000);
	assert_int_equal(cli_mdc_getlayout_any(mdc, &c, 2, &l, &nobj), 0);
	assert_int_equal(nobj, 0);
	assert_int_equal(l.stripe_size, 256u << 10);
	assert_int_equal(l.stripe_count, 3);
	assert_int_equal(cli_mdc_getlayout_any(mdc, &c, 3, &l, &nobj), 0);
	assert_int_equal(l.stripe_size, 0);
	assert_int_equal(l.stripe_count, CLI_MDC_STRIPE_ALL);
	assert_int_equal(cli_mdc_getlayout_any(mdc, &c, 4, &l, &nobj), -EBADMSG);
	assert_int_equal(cli_mdc_getlayout_any(mdc, &c, 5, &l, &nobj), -EBADMSG);
	assert_int_equal(cli_mdc_getlayout_any(mdc, &c, 6, &l, &nobj), 0);
	assert_int_equal(nobj, 0);
	assert_int_equal(l.stripe_count, 0);
	assert_int_equal(cli_mdc_getlayout_any(mdc, &c, 7, &l, &nobj), -EBADMSG);
	/* the strict form the FUSE client uses refuses a directory's reply */
	assert_int_equal(cli_mdc_getlayout(mdc, &c, 2, &l), -EBADMSG);
	assert_int_equal(cli_mdc_getlayout(mdc, &c, 1, &l), 0);
	/* the decoder alone: short replies */
	assert_int_equal(cli_mdc_layout_decode("\0\0\0", 3, &l, &nobj), -EBADMSG);
	assert_int_equal(cli_mdc_layout_decode("", 0, &l, &nobj), -EBADMSG);
}

static void test_mdc_ping(void **state)
{
	char job[PFS_JOBID_MAX + 1];

	assert_int_equal(cli_mdc_ping(mdc, "pinger", "hello", 5), 0);
	assert_int_equal(last_hdr.opcode, PFS_OP_PING);
	pfs_hdr_jobid(&last_hdr, job);
	assert_string_equal(job, "pinger");
	assert_int_equal(cli_mdc_ping(mdc, "pinger", "badecho", 7), -EBADMSG);
	assert_int_equal(cli_mdc_ping(mdc, "pinger", "", 0), 0);
}

/* A wrapped pool is used, handed out, and left open by destroy. */
/* MDS_SYNC (fsync, fsyncdir): cred and ino on the wire, the MDS's sync
 * error returned, a non-empty reply refused. */
static void test_mdc_sync(void **state)
{
	cli_ctx c = mkctx();

	last_u64 = 0;
	assert_int_equal(cli_mdc_sync(mdc, &c, 9), 0);
	assert_int_equal(last_hdr.opcode, PFS_OP_MDS_SYNC);
	assert_int_equal(last_u64, 9);
	assert_int_equal(last_cred.uid, 1000);
	assert_int_equal(cli_mdc_sync(mdc, &c, 13), -EIO);
	assert_int_equal(cli_mdc_sync(mdc, &c, 14), -EBADMSG);
}

/* UNLINK with and without the expected inode: the old payload when ino is
 * 0, the inode appended otherwise; the MDS's -ESTALE comes back. */
static void test_mdc_unlink_ino(void **state)
{
	cli_ctx c = mkctx();

	last_ino = 99;
	assert_int_equal(cli_mdc_unlink(mdc, &c, 3, "plain"), 0);
	assert_int_equal(last_hdr.opcode, PFS_OP_MDS_UNLINK);
	assert_int_equal(last_ino, 0);
	assert_int_equal(last_u64, 3);
	assert_int_equal(cli_mdc_unlink_ino(mdc, &c, 4, "f", 0, 0), 0);
	assert_int_equal(last_ino, 0);
	assert_int_equal(cli_mdc_unlink_ino(mdc, &c, 5, "f", 1234, CLI_MDC_CHARGED), 0);
	assert_int_equal(last_u64, 5);
	assert_string_equal(last_name, "f");
	assert_int_equal(last_ino, 1234);
	assert_int_equal(last_cred.uid, 1000);
	assert_int_equal(last_cred.ngroups, 2);
	assert_int_equal(cli_mdc_unlink_ino(mdc, &c, 5, "other", 1234, 0), -ESTALE);
	assert_int_equal(cli_mdc_unlink_ino(mdc, &c, 5, "", 1234, 0), -EINVAL);
	/* no PADLL stage: charging is a no-op */
	cli_mdc_charge(mdc, c.job, PFS_OP_MDS_UNLINK);
}

/* UNLINK_BATCH: cred, u64 parent, u32 n, n x { str name, u64 ino } on the
 * wire byte for byte; u32 n, n x i32 status back, in order; a reply with
 * a wrong count, cut short, too long or a positive status is -EPROTO; the
 * request's own error comes back; n and names checked before sending. */
static void test_mdc_unlink_batch(void **state)
{
	const char *names[] = { "a", "gone", "other", "bad", "e" };
	const uint64_t inos[] = { 11, 12, 13, 14, 0 };
	const char *many[PFS_UNLINK_BATCH_MAX + 1];
	uint64_t many_inos[PFS_UNLINK_BATCH_MAX + 1] = { 0 };
	int st[PFS_UNLINK_BATCH_MAX + 1];
	cli_ctx c = mkctx();
	char job[PFS_JOBID_MAX + 1];
	pfs_wbuf w;

	for (int i = 0; i < 5; i++)
		st[i] = 77;
	assert_int_equal(cli_mdc_unlink_batch(mdc, &c, 9, 5, names, inos, st, CLI_MDC_CHARGED),
			 0);
	assert_int_equal(last_hdr.opcode, PFS_OP_MDS_UNLINK_BATCH);
	pfs_hdr_jobid(&last_hdr, job);
	assert_string_equal(job, "job-77");
	pfs_wbuf_init(&w);
	pfs_cred_encode(&w, &c.cred);
	pfs_wbuf_u64(&w, 9);
	pfs_wbuf_u32(&w, 5);
	for (int i = 0; i < 5; i++) {
		pfs_wbuf_str(&w, names[i]);
		pfs_wbuf_u64(&w, inos[i]);
	}
	assert_int_equal(last_plen, w.len);
	assert_memory_equal(last_payload, w.data, w.len);
	pfs_wbuf_free(&w);
	assert_int_equal(st[0], 0);
	assert_int_equal(st[1], -ENOENT);
	assert_int_equal(st[2], -ESTALE);
	assert_int_equal(st[3], -EIO);
	assert_int_equal(st[4], 0);

	/* replies that do not hold exactly n statuses, each <= 0 */
	for (uint64_t p = 20; p <= 25; p++) {
		if (p == 24)
			continue;
		for (int i = 0; i < 5; i++)
			st[i] = 77;
		assert_int_equal(cli_mdc_unlink_batch(mdc, &c, p, 5, names, inos, st, 0), -EPROTO);
		assert_int_equal(last_u64, p);
		for (int i = 0; i < 5; i++)
			assert_int_equal(st[i], 77);
	}
	assert_int_equal(cli_mdc_unlink_batch(mdc, &c, 20, 1, names, inos, st, 0), -EPROTO);
	/* the request's own error */
	assert_int_equal(cli_mdc_unlink_batch(mdc, &c, 24, 2, names, inos, st, 0), -EOPNOTSUPP);

	/* checked before sending */
	last_u64 = 0;
	assert_int_equal(cli_mdc_unlink_batch(mdc, &c, 9, 0, names, inos, st, 0), -EINVAL);
	for (int i = 0; i <= PFS_UNLINK_BATCH_MAX; i++)
		many[i] = "m";
	assert_int_equal(cli_mdc_unlink_batch(mdc, &c, 9, PFS_UNLINK_BATCH_MAX + 1, many,
					      many_inos, st, 0), -EINVAL);
	many[3] = "";
	assert_int_equal(cli_mdc_unlink_batch(mdc, &c, 9, 4, many, many_inos, st, 0), -EINVAL);
	assert_int_equal(last_u64, 0);
	/* the largest batch goes */
	many[3] = "m";
	assert_int_equal(cli_mdc_unlink_batch(mdc, &c, 9, PFS_UNLINK_BATCH_MAX, many, many_inos,
					      st, 0), 0);
	assert_int_equal(last_u64, 9);
}

/* DELEG_GET: cred and dir on the wire, lease and the directory's
 * attributes decoded; -EAGAIN passed on; malformed replies refused.
 * DELEG_RETURN: cred and dir, an empty reply. */
static void test_mdc_deleg(void **state)
{
	cli_ctx c = mkctx();
	uint32_t ms = 0;
	pfs_attr a;
	char job[PFS_JOBID_MAX + 1];

	assert_int_equal(cli_mdc_deleg_get(mdc, &c, 7, &ms, &a), 0);
	assert_int_equal(last_hdr.opcode, PFS_OP_MDS_DELEG_GET);
	assert_int_equal(last_u64, 7);
	assert_int_equal(last_cred.uid, 1000);
	assert_int_equal(last_cred.groups[1], 6);
	pfs_hdr_jobid(&last_hdr, job);
	assert_string_equal(job, "job-77");
	assert_int_equal(ms, 9000);
	assert_int_equal(a.ino, 7);
	assert_int_equal(a.mode, 040755);
	ms = 1;
	assert_int_equal(cli_mdc_deleg_get(mdc, &c, 7, &ms, NULL), 0);
	assert_int_equal(ms, 9000);
	ms = 1;
	assert_int_equal(cli_mdc_deleg_get(mdc, &c, 8, &ms, &a), -EAGAIN);
	assert_int_equal(ms, 1);
	assert_int_equal(cli_mdc_deleg_get(mdc, &c, 9, &ms, &a), -EBADMSG);
	assert_int_equal(cli_mdc_deleg_get(mdc, &c, 10, &ms, &a), -EBADMSG);
	assert_int_equal(cli_mdc_deleg_get(mdc, &c, 11, &ms, &a), -EBADMSG);
	assert_int_equal(ms, 1);

	last_u64 = 0;
	assert_int_equal(cli_mdc_deleg_return(mdc, &c, 7), 0);
	assert_int_equal(last_hdr.opcode, PFS_OP_MDS_DELEG_RETURN);
	assert_int_equal(last_u64, 7);
	assert_int_equal(last_cred.gid, 100);
	assert_int_equal(cli_mdc_deleg_return(mdc, &c, 12), -EBADMSG);
}

/* CREATE_SLOTS: cred, u64 dir, u32 n on the wire byte for byte; the
 * directory's attributes and n slots (inode, layout) decoded in order, up
 * to PFS_CREATE_SLOTS_MAX; -EAGAIN and the request's own error passed on;
 * a reply with a wrong count, cut short, too long, an inode 0 or a layout
 * that is invalid or has no objects is -EPROTO; n checked before
 * sending. */
static void test_mdc_create_slots(void **state)
{
	static uint64_t inos[PFS_CREATE_SLOTS_MAX];
	static pfs_layout lays[PFS_CREATE_SLOTS_MAX];
	cli_ctx c = mkctx();
	char job[PFS_JOBID_MAX + 1];
	pfs_attr a;
	pfs_wbuf w;

	memset(&a, 0, sizeof(a));
	assert_int_equal(cli_mdc_create_slots(mdc, &c, 30, 3, inos, lays, &a), 0);
	assert_int_equal(last_hdr.opcode, PFS_OP_MDS_CREATE_SLOTS);
	pfs_hdr_jobid(&last_hdr, job);
	assert_string_equal(job, "job-77");
	assert_int_equal(last_u64, 30);
	assert_int_equal(last_n, 3);
	assert_int_equal(last_cred.uid, 1000);
	assert_int_equal(last_cred.groups[1], 6);
	pfs_wbuf_init(&w);
	pfs_cred_encode(&w, &c.cred);
	pfs_wbuf_u64(&w, 30);
	pfs_wbuf_u32(&w, 3);
	assert_int_equal(last_plen, w.len);
	assert_memory_equal(last_payload, w.data, w.len);
	pfs_wbuf_free(&w);
	assert_int_equal(a.ino, 30);
	assert_int_equal(a.mode, 040755);
	for (uint32_t i = 0; i < 3; i++) {
		assert_int_equal(inos[i], 1000 + i);
		assert_int_equal(lays[i].stripe_size, 1 << 20);
		assert_int_equal(lays[i].stripe_count, 2);
		assert_int_equal(lays[i].stripe[0].ost, i % 4);
		assert_int_equal(lays[i].stripe[1].ost, (i + 1) % 4);
		assert_int_equal(lays[i].stripe[0].object, 5000 + 2 * i);
		assert_int_equal(lays[i].stripe[1].object, 5001 + 2 * i);
	}
	/* the most slots a request may ask for */
	assert_int_equal(cli_mdc_create_slots(mdc, &c, 30, PFS_CREATE_SLOTS_MAX, inos, lays,
					      &a), 0);
	assert_int_equal(last_n, PFS_CREATE_SLOTS_MAX);
	assert_int_equal(inos[PFS_CREATE_SLOTS_MAX - 1], 1000 + PFS_CREATE_SLOTS_MAX - 1);
	assert_int_equal(lays[PFS_CREATE_SLOTS_MAX - 1].stripe[1].object,
			 5001 + 2 * (PFS_CREATE_SLOTS_MAX - 1));

	/* the MDS's own errors */
	assert_int_equal(cli_mdc_create_slots(mdc, &c, 36, 3, inos, lays, &a), -EAGAIN);
	assert_int_equal(cli_mdc_create_slots(mdc, &c, 40, 3, inos, lays, &a), -EINVAL);
	assert_int_equal(last_u64, 40);
	/* replies that are not the attributes and exactly n good slots */
	for (uint64_t d = 31; d <= 39; d++) {
		if (d == 36)
			continue;
		assert_int_equal(cli_mdc_create_slots(mdc, &c, d, 3, inos, lays, &a), -EPROTO);
		assert_int_equal(last_u64, d);
	}
	assert_int_equal(cli_mdc_create_slots(mdc, &c, 38, 1, inos, lays, &a), -EPROTO);
	assert_int_equal(cli_mdc_create_slots(mdc, &c, 34, 1, inos, lays, &a), -EPROTO);

	/* checked before sending */
	last_u64 = 0;
	assert_int_equal(cli_mdc_create_slots(mdc, &c, 30, 0, inos, lays, &a), -EINVAL);
	assert_int_equal(cli_mdc_create_slots(mdc, &c, 30, PFS_CREATE_SLOTS_MAX + 1, inos, lays,
					      &a), -EINVAL);
	assert_int_equal(last_u64, 0);
}

/* CREATE: cred, parent, name, mode, the caller's flags, the stripe hints
 * and PFS_STRIPE_OFFSET_ANY on the wire byte for byte, in the caller's
 * job; the file's attributes and layout back (a capability list read);
 * the MDS's -EEXIST passed on; malformed replies refused; names checked
 * before sending. */
static void test_mdc_create(void **state)
{
	cli_ctx c = mkctx();
	char job[PFS_JOBID_MAX + 1];
	char longname[300];
	pfs_attr a;
	pfs_layout l;
	pfs_wbuf w;

	memset(&a, 0, sizeof(a));
	assert_int_equal(cli_mdc_create_file(mdc, &c, 32, "plain", 0100640,
					     PFS_CREATE_EXCL | PFS_CREATE_WRITE, 0, 0, &a, &l), 0);
	assert_int_equal(last_hdr.opcode, PFS_OP_MDS_CREATE);
	pfs_hdr_jobid(&last_hdr, job);
	assert_string_equal(job, "job-77");
	assert_int_equal(last_u64, 32);
	assert_int_equal(last_flags, PFS_CREATE_EXCL | PFS_CREATE_WRITE);
	pfs_wbuf_init(&w);
	pfs_cred_encode(&w, &c.cred);
	pfs_wbuf_u64(&w, 32);
	pfs_wbuf_str(&w, "plain");
	pfs_wbuf_u32(&w, 0100640);
	pfs_wbuf_u32(&w, PFS_CREATE_EXCL | PFS_CREATE_WRITE);
	pfs_wbuf_u32(&w, 0);
	pfs_wbuf_u32(&w, 0);
	pfs_wbuf_u32(&w, PFS_STRIPE_OFFSET_ANY);
	assert_int_equal(last_plen, w.len);
	assert_memory_equal(last_payload, w.data, w.len);
	pfs_wbuf_free(&w);
	assert_int_equal(a.ino, 77);
	assert_int_equal(a.mode, 0100640);
	assert_int_equal(l.stripe_count, 2);
	assert_int_equal(l.stripe[0].object, 300);
	/* a reply with capabilities */
	assert_int_equal(cli_mdc_create_file(mdc, &c, 30, "caps", 0100644, 0, 0, 0, &a, &l), 0);
	assert_int_equal(a.ino, 77);

	/* the MDS's errors, malformed replies */
	assert_int_equal(cli_mdc_create_file(mdc, &c, 30, "exists", 0100644, PFS_CREATE_EXCL, 0, 0,
					     &a, &l), -EEXIST);
	assert_int_equal(cli_mdc_create_file(mdc, &c, 30, "short", 0100644, 0, 0, 0, &a, &l),
			 -EBADMSG);
	assert_int_equal(cli_mdc_create_file(mdc, &c, 30, "trailing", 0100644, 0, 0, 0, &a, &l),
			 -EBADMSG);
	assert_int_equal(cli_mdc_create_file(mdc, &c, 30, "badlayout", 0100644, 0, 0, 0, &a, &l),
			 -EBADMSG);

	/* checked before sending */
	last_u64 = 0;
	memset(longname, 'n', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = 0;
	assert_int_equal(cli_mdc_create_file(mdc, &c, 30, "", 0100644, 0, 0, 0, &a, &l), -EINVAL);
	assert_int_equal(cli_mdc_create_file(mdc, &c, 30, longname, 0100644, 0, 0, 0, &a, &l),
			 -ENAMETOOLONG);
	assert_int_equal(last_u64, 0);
}

/* CREATE_BATCH: cred, u64 parent, u32 n, n x { str name, u32 mode, u32
 * flags (PFS_CREATE_CLOSED for closed[i], else 0), u64 ino } on the wire
 * byte for byte; u32 n, n x i32 status back, in order; a reply with a
 * wrong count, cut short, too long or a positive status is -EPROTO and
 * leaves status[] alone; the request's own error comes back; n and names
 * checked before sending. */
static void test_mdc_create_batch(void **state)
{
	const char *names[] = { "a", "exists", "stale", "bad", "e" };
	const uint32_t modes[] = { 0100644, 0100600, 0100640, 0100755, 0100444 };
	const int closed[] = { 1, 0, 0, 1, 2 };
	const uint64_t inos[] = { 1000, 1001, 1002, 1003, 1004 };
	const char *many[PFS_CREATE_SLOTS_MAX + 1];
	uint32_t many_modes[PFS_CREATE_SLOTS_MAX + 1];
	int many_closed[PFS_CREATE_SLOTS_MAX + 1] = { 0 };
	uint64_t many_inos[PFS_CREATE_SLOTS_MAX + 1];
	int st[PFS_CREATE_SLOTS_MAX + 1];
	char longname[300];
	cli_ctx c = mkctx();
	char job[PFS_JOBID_MAX + 1];
	pfs_wbuf w;

	for (int i = 0; i < 5; i++)
		st[i] = 77;
	assert_int_equal(cli_mdc_create_batch(mdc, &c, 9, 5, names, modes, closed, inos, st), 0);
	assert_int_equal(last_hdr.opcode, PFS_OP_MDS_CREATE_BATCH);
	pfs_hdr_jobid(&last_hdr, job);
	assert_string_equal(job, "job-77");
	pfs_wbuf_init(&w);
	pfs_cred_encode(&w, &c.cred);
	pfs_wbuf_u64(&w, 9);
	pfs_wbuf_u32(&w, 5);
	for (int i = 0; i < 5; i++) {
		pfs_wbuf_str(&w, names[i]);
		pfs_wbuf_u32(&w, modes[i]);
		pfs_wbuf_u32(&w, closed[i] ? PFS_CREATE_CLOSED : 0);
		pfs_wbuf_u64(&w, inos[i]);
	}
	assert_int_equal(last_plen, w.len);
	assert_memory_equal(last_payload, w.data, w.len);
	pfs_wbuf_free(&w);
	assert_int_equal(st[0], 0);
	assert_int_equal(st[1], -EEXIST);
	assert_int_equal(st[2], -ESTALE);
	assert_int_equal(st[3], -EIO);
	assert_int_equal(st[4], 0);

	/* replies that do not hold exactly n statuses, each <= 0 */
	for (uint64_t p = 50; p <= 55; p++) {
		if (p == 54)
			continue;
		for (int i = 0; i < 5; i++)
			st[i] = 77;
		assert_int_equal(cli_mdc_create_batch(mdc, &c, p, 5, names, modes, closed, inos,
						      st), -EPROTO);
		assert_int_equal(last_u64, p);
		for (int i = 0; i < 5; i++)
			assert_int_equal(st[i], 77);
	}
	assert_int_equal(cli_mdc_create_batch(mdc, &c, 50, 1, names, modes, closed, inos, st),
			 -EPROTO);
	assert_int_equal(st[0], 77);
	/* the request's own error */
	assert_int_equal(cli_mdc_create_batch(mdc, &c, 54, 2, names, modes, closed, inos, st),
			 -EOPNOTSUPP);
	assert_int_equal(last_u64, 54);
	assert_int_equal(st[0], 77);
	assert_int_equal(st[1], 77);

	/* checked before sending */
	last_u64 = 0;
	assert_int_equal(cli_mdc_create_batch(mdc, &c, 9, 0, names, modes, closed, inos, st),
			 -EINVAL);
	for (int i = 0; i <= PFS_CREATE_SLOTS_MAX; i++) {
		many[i] = "m";
		many_modes[i] = 0100644;
		many_inos[i] = 2000 + i;
	}
	assert_int_equal(cli_mdc_create_batch(mdc, &c, 9, PFS_CREATE_SLOTS_MAX + 1, many,
					      many_modes, many_closed, many_inos, st), -EINVAL);
	many[3] = "";
	assert_int_equal(cli_mdc_create_batch(mdc, &c, 9, 4, many, many_modes, many_closed,
					      many_inos, st), -EINVAL);
	memset(longname, 'n', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = 0;
	many[3] = longname;
	assert_int_equal(cli_mdc_create_batch(mdc, &c, 9, 4, many, many_modes, many_closed,
					      many_inos, st), -ENAMETOOLONG);
	assert_int_equal(last_u64, 0);
	assert_int_equal(st[0], 77);
	/* the largest batch goes */
	many[3] = "m";
	assert_int_equal(cli_mdc_create_batch(mdc, &c, 9, PFS_CREATE_SLOTS_MAX, many, many_modes,
					      many_closed, many_inos, st), 0);
	assert_int_equal(last_u64, 9);
	assert_int_equal(st[PFS_CREATE_SLOTS_MAX - 1], 0);
}

static void test_mdc_wrap(void **state)
{
	pfs_rpc_opts ro = { .max_conns = 1, .timeout_ms = 5000, .retry_ms = 500 };
	pfs_rpc_pool *pool = NULL;
	cli_mdc *m = NULL;
	cli_ctx c = mkctx();
	pfs_ost_info *osts = NULL;
	uint32_t n = 0;

	assert_int_equal(pfs_rpc_pool_create("127.0.0.1", pfs_server_port(srv), &ro, &pool), 0);
	assert_int_equal(cli_mdc_wrap(pool, &m), 0);
	assert_ptr_equal(cli_mdc_pool(m), pool);
	assert_int_equal(cli_mdc_ost_list(m, c.job, &osts, &n), 0);
	assert_int_equal(n, 1);
	free(osts);
	cli_mdc_destroy(m);
	/* the pool still works after the mdc is gone */
	assert_int_equal(cli_mdc_wrap(pool, &m), 0);
	assert_int_equal(cli_mdc_ping(m, "j", "x", 1), 0);
	cli_mdc_destroy(m);
	pfs_rpc_pool_destroy(pool);
	assert_non_null(cli_mdc_pool(mdc));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mdc_lookup_headers_and_cred),
		cmocka_unit_test(test_mdc_errors),
		cmocka_unit_test(test_mdc_open_layout),
		cmocka_unit_test(test_mdc_readdir_strings),
		cmocka_unit_test(test_mdc_client_id),
		cmocka_unit_test(test_mdc_getlayout_any),
		cmocka_unit_test(test_mdc_ping),
		cmocka_unit_test(test_mdc_wrap),
		cmocka_unit_test(test_mdc_sync),
		cmocka_unit_test(test_mdc_unlink_ino),
		cmocka_unit_test(test_mdc_deleg),
		cmocka_unit_test(test_mdc_unlink_batch),
		cmocka_unit_test(test_mdc_create_slots),
		cmocka_unit_test(test_mdc_create),
		cmocka_unit_test(test_mdc_create_batch),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
