/* test_mds_lease.c — the MDS lease table (mds/lease.h): a registered
 * client's leases are revoked by other clients' changes (attributes,
 * names, a directory's permissions) and never by its own; unregistered
 * clients get none; a change between a read and its grant is caught by
 * the grant; held waits are answered at the first record and at their
 * time; batches are sent again until acknowledged; the per-client cap
 * evicts the oldest lease and revokes it; a full queue sets RESET; silent
 * clients are forgotten; BYE closes a channel. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mds/lease.h"

#define A 0xaaaa
#define B 0xbbbb

/* A fake clock and reply path. */
typedef struct fake {
	uint64_t now;
	int replies, refs;
	int reply_rc; /* what the reply path returns (-EPIPE: closed) */
	int status;
	uint8_t data[65536];
	size_t len;
} fake;

static uint64_t fclock(void *arg)
{
	return ((fake *)arg)->now;
}

static int freply(void *arg, pfs_sconn *c, const pfs_hdr *h, int status, const void *p,
		  size_t n)
{
	fake *f = arg;

	f->replies++;
	f->status = status;
	f->len = n < sizeof(f->data) ? n : sizeof(f->data);
	if (n)
		memcpy(f->data, p, f->len);
	return f->reply_rc;
}

static void fref(void *arg, pfs_sconn *c, int get)
{
	((fake *)arg)->refs += get ? 1 : -1;
}

typedef struct rec {
	uint8_t kind;
	uint64_t ino;
	char name[256];
} rec;

typedef struct batch {
	uint64_t boot, seq;
	uint32_t lease_ms, n;
	uint8_t flags;
	rec r[64];
} batch;

static void parse(const uint8_t *p, size_t len, batch *b)
{
	pfs_rbuf r;

	memset(b, 0, sizeof(*b));
	pfs_rbuf_init(&r, p, len);
	b->boot = pfs_rbuf_u64(&r);
	b->lease_ms = pfs_rbuf_u32(&r);
	b->flags = pfs_rbuf_u8(&r);
	b->seq = pfs_rbuf_u64(&r);
	b->n = pfs_rbuf_u32(&r);
	for (uint32_t i = 0; i < b->n; i++) {
		rec *x = &b->r[i < 64 ? i : 63];

		x->kind = pfs_rbuf_u8(&r);
		x->ino = pfs_rbuf_u64(&r);
		pfs_rbuf_cstr(&r, x->name, sizeof(x->name));
	}
	assert_int_equal(pfs_rbuf_done(&r), 0);
}

/* One NOTIFY_WAIT of client; conn NULL: answered now into *b. */
static int wait_req(mds_lease *t, uint64_t client, uint64_t ack, uint32_t wait_ms,
		    uint8_t flags, pfs_sconn *conn, batch *b)
{
	pfs_hdr h;
	pfs_wbuf w, out;
	pfs_rbuf r;
	int rc;

	memset(&h, 0, sizeof(h));
	h.opcode = PFS_OP_MDS_NOTIFY_WAIT;
	h.client_id = client;
	pfs_wbuf_init(&w);
	pfs_wbuf_init(&out);
	pfs_wbuf_u64(&w, ack);
	pfs_wbuf_u32(&w, wait_ms);
	pfs_wbuf_u8(&w, flags);
	pfs_rbuf_init(&r, w.data, w.len);
	rc = mds_lease_wait(t, conn, &h, &r, &out);
	if (rc == 0 && b)
		parse(out.data, out.len, b);
	pfs_wbuf_free(&w);
	pfs_wbuf_free(&out);
	return rc;
}

static mds_lease *mk(fake *f, unsigned per_client, unsigned max_queue)
{
	mds_lease_opts o = { 0 };
	mds_lease *t;

	memset(f, 0, sizeof(*f));
	f->now = 1000000;
	o.lease_ms = 10000;
	o.max_per_client = per_client;
	o.max_queue = max_queue;
	o.no_thread = 1;
	o.clock = fclock;
	o.reply = freply;
	o.ref = fref;
	o.arg = f;
	assert_int_equal(mds_lease_create(&o, &t), 0);
	/* past the start grace: only registered clients get leases */
	f->now += MDS_LEASE_REG_GRACE_MS + PFS_NOTIFY_WAIT_MAX_MS;
	return t;
}

/* Register client: its first wait is answered at once. */
static uint64_t reg(mds_lease *t, uint64_t client)
{
	batch b;

	assert_int_equal(wait_req(t, client, 0, 5000, 0, NULL, &b), 0);
	assert_int_equal(b.n, 0);
	assert_int_equal(b.lease_ms, 10000);
	return b.seq;
}

static void test_attr_revoked_by_others_only(void **st)
{
	fake f;
	mds_lease *t = mk(&f, 0, 0);
	uint64_t s = reg(t, A), since;
	batch b;

	reg(t, B);
	since = mds_lease_begin(t);
	mds_lease_grant(t, A, 42, since);
	mds_lease_grant(t, B, 42, since);
	assert_true(mds_lease_watched(t, B, 42));
	assert_false(mds_lease_watched(t, A, 43));
	/* B's own change: nothing for B; A's lease is revoked */
	mds_lease_changed(t, B, 42, MDS_LEASE_ATTR);
	assert_int_equal(wait_req(t, A, s, 0, 0, NULL, &b), 0);
	assert_int_equal(b.n, 1);
	assert_int_equal(b.r[0].kind, PFS_NOTIFY_INO);
	assert_int_equal(b.r[0].ino, 42);
	s = b.seq;
	assert_int_equal(wait_req(t, B, 0, 0, 0, NULL, &b), 0);
	assert_int_equal(b.n, 0);
	/* revoked: a second change sends nothing more until a new grant */
	mds_lease_changed(t, B, 42, MDS_LEASE_ATTR);
	assert_int_equal(wait_req(t, A, s, 0, 0, NULL, &b), 0);
	assert_int_equal(b.n, 0);
	s = b.seq;
	mds_lease_grant(t, A, 42, mds_lease_begin(t));
	mds_lease_changed(t, B, 42, MDS_LEASE_ATTR);
	assert_int_equal(wait_req(t, A, s, 0, 0, NULL, &b), 0);
	assert_int_equal(b.n, 1);
	mds_lease_destroy(t);
}

static void test_unregistered_and_expired(void **st)
{
	fake f;
	mds_lease *t = mk(&f, 0, 0);
	mds_lease_stats ss;
	uint64_t s;
	batch b;

	/* no channel: no lease */
	mds_lease_grant(t, A, 7, mds_lease_begin(t));
	mds_lease_get_stats(t, &ss);
	assert_int_equal(ss.leases, 0);
	s = reg(t, A);
	mds_lease_grant(t, A, 7, mds_lease_begin(t));
	mds_lease_get_stats(t, &ss);
	assert_int_equal(ss.leases, 1);
	/* expired: a change sends nothing */
	f.now += 10000 + MDS_LEASE_SLACK_MS;
	mds_lease_changed(t, B, 7, MDS_LEASE_ATTR);
	assert_int_equal(wait_req(t, A, s, 0, 0, NULL, &b), 0);
	assert_int_equal(b.n, 0);
	/* silent past its registration: forgotten */
	f.now += 5000 + MDS_LEASE_REG_GRACE_MS;
	mds_lease_tick(t);
	mds_lease_get_stats(t, &ss);
	assert_int_equal(ss.clients, 0);
	mds_lease_destroy(t);
}

static void test_names_and_perm(void **st)
{
	fake f;
	mds_lease *t = mk(&f, 0, 0);
	uint64_t s = reg(t, A);
	batch b;

	mds_lease_grant_name(t, A, 5, "x", mds_lease_begin(t));
	mds_lease_grant(t, A, 5, mds_lease_begin(t));
	mds_lease_name_changed(t, B, 5, "x");
	mds_lease_name_changed(t, B, 5, "y");
	mds_lease_name_changed(t, A, 5, "z");   /* A's own */
	assert_int_equal(wait_req(t, A, s, 0, 0, NULL, &b), 0);
	assert_int_equal(b.n, 2);
	assert_int_equal(b.r[0].kind, PFS_NOTIFY_ENTRY);
	assert_int_equal(b.r[0].ino, 5);
	assert_string_equal(b.r[0].name, "x");
	assert_string_equal(b.r[1].name, "y");
	s = b.seq;
	/* the names lease stays; a chmod of the directory revokes all */
	mds_lease_changed(t, B, 5, MDS_LEASE_ATTR | MDS_LEASE_PERM);
	assert_int_equal(wait_req(t, A, s, 0, 0, NULL, &b), 0);
	assert_int_equal(b.n, 1);
	assert_int_equal(b.r[0].kind, PFS_NOTIFY_PERM);
	s = b.seq;
	mds_lease_name_changed(t, B, 5, "x");
	assert_int_equal(wait_req(t, A, s, 0, 0, NULL, &b), 0);
	assert_int_equal(b.n, 0);
	mds_lease_destroy(t);
}

/* A change committed after the read and before the grant: the grant
 * revokes at once. */
static void test_change_between_read_and_grant(void **st)
{
	fake f;
	mds_lease *t = mk(&f, 0, 0);
	uint64_t s = reg(t, A), since;
	batch b;

	since = mds_lease_begin(t);
	mds_lease_changed(t, B, 9, MDS_LEASE_ATTR);
	mds_lease_name_changed(t, B, 3, "n");
	mds_lease_grant(t, A, 9, since);
	mds_lease_grant_name(t, A, 3, "n", since);
	mds_lease_grant(t, A, 10, since);   /* untouched: nothing */
	assert_int_equal(wait_req(t, A, s, 0, 0, NULL, &b), 0);
	assert_int_equal(b.n, 2);
	assert_int_equal(b.r[0].kind, PFS_NOTIFY_INO);
	assert_int_equal(b.r[0].ino, 9);
	assert_int_equal(b.r[1].kind, PFS_NOTIFY_ENTRY);
	assert_string_equal(b.r[1].name, "n");
	mds_lease_destroy(t);
}

/* The start grace (a restarted MDS): before any client has sent a wait,
 * every client's reads are leases, revoked by others' changes and
 * delivered by its first wait; past the grace, a client without a
 * channel gets none, and one with a channel keeps its own. */
static void test_start_grace(void **st)
{
	fake f;
	mds_lease_opts o = { 0 };
	mds_lease *t;
	mds_lease_stats ss;
	batch b;

	memset(&f, 0, sizeof(f));
	f.now = 1000000;
	o.lease_ms = 10000;
	o.no_thread = 1;
	o.clock = fclock;
	o.reply = freply;
	o.ref = fref;
	o.arg = &f;
	assert_int_equal(mds_lease_create(&o, &t), 0);
	assert_true(mds_lease_active(t));
	f.now += 1000;
	mds_lease_grant(t, A, 42, mds_lease_begin(t));
	mds_lease_grant_name(t, A, 5, "x", mds_lease_begin(t));
	mds_lease_get_stats(t, &ss);
	assert_int_equal(ss.leases, 2);
	mds_lease_changed(t, B, 42, MDS_LEASE_ATTR);
	mds_lease_name_changed(t, B, 5, "x");
	/* A's first wait: answered at once with what it missed */
	assert_int_equal(wait_req(t, A, 0, 5000, 0, NULL, &b), 0);
	assert_int_equal(b.n, 2);
	assert_int_equal(b.r[0].kind, PFS_NOTIFY_INO);
	assert_int_equal(b.r[0].ino, 42);
	assert_int_equal(b.r[1].kind, PFS_NOTIFY_ENTRY);
	assert_string_equal(b.r[1].name, "x");
	/* past the grace (A keeps waiting): B, without a channel, is
	 * forgotten and gets no lease; the expired ones are gone */
	for (int i = 0; i < 3; i++) {
		f.now += (MDS_LEASE_REG_GRACE_MS + PFS_NOTIFY_WAIT_MAX_MS) / 3 + 1;
		assert_int_equal(wait_req(t, A, b.seq, 5000, 0, NULL, &b), 0);
		mds_lease_tick(t);
	}
	mds_lease_grant(t, B, 43, mds_lease_begin(t));
	mds_lease_get_stats(t, &ss);
	assert_int_equal(ss.clients, 1);
	assert_int_equal(ss.leases, 0);
	/* A (registered) still gets them */
	mds_lease_grant(t, A, 43, mds_lease_begin(t));
	mds_lease_get_stats(t, &ss);
	assert_int_equal(ss.leases, 1);
	mds_lease_destroy(t);
}

/* Past the grace with no channel: nothing recorded, change hooks idle. */
static void test_no_channel_idle(void **st)
{
	fake f;
	mds_lease *t = mk(&f, 0, 0);
	mds_lease_stats ss;

	mds_lease_tick(t);
	assert_false(mds_lease_active(t));
	mds_lease_grant(t, A, 7, mds_lease_begin(t));
	mds_lease_get_stats(t, &ss);
	assert_int_equal(ss.clients, 0);
	assert_int_equal(ss.leases, 0);
	reg(t, A);
	assert_true(mds_lease_active(t));
	mds_lease_destroy(t);
}

/* Directory delegations (mds/deleg.h): registered is a client with a
 * channel (not the start grace's stand-ins, not a forgotten one); a
 * recall is a RECALL record of the directory on the holder's channel,
 * answering its held wait at once. */
static void test_registered_and_recall(void **st)
{
	fake f;
	mds_lease_opts o = { 0 };
	mds_lease *t;
	uint64_t s;
	batch b;

	/* in the start grace a client met by a grant is no channel */
	memset(&f, 0, sizeof(f));
	f.now = 1000000;
	o.lease_ms = 10000;
	o.no_thread = 1;
	o.clock = fclock;
	o.reply = freply;
	o.ref = fref;
	o.arg = &f;
	assert_int_equal(mds_lease_create(&o, &t), 0);
	mds_lease_grant(t, B, 7, mds_lease_begin(t));
	assert_false(mds_lease_registered(t, B));
	assert_int_equal(mds_lease_recall(t, B, 7), -ENOENT);
	mds_lease_destroy(t);

	t = mk(&f, 0, 0);
	assert_false(mds_lease_registered(t, A));
	assert_int_equal(mds_lease_recall(t, A, 50), -ENOENT);
	s = reg(t, A);
	assert_true(mds_lease_registered(t, A));
	assert_false(mds_lease_registered(t, B));
	/* held wait: the recall answers it */
	assert_int_equal(wait_req(t, A, s, 5000, 0, (pfs_sconn *)&f, NULL), MDS_LEASE_LATER);
	assert_int_equal(f.refs, 1);
	assert_int_equal(mds_lease_recall(t, A, 50), 0);
	assert_int_equal(f.replies, 1);
	assert_int_equal(f.status, 0);
	assert_int_equal(f.refs, 0);
	parse(f.data, f.len, &b);
	assert_int_equal(b.n, 1);
	assert_int_equal(b.r[0].kind, PFS_NOTIFY_RECALL);
	assert_int_equal(b.r[0].ino, 50);
	assert_string_equal(b.r[0].name, "");
	/* a held wait whose connection is closed: the recall says so */
	assert_int_equal(wait_req(t, A, b.seq, 5000, 0, (pfs_sconn *)&f, NULL), MDS_LEASE_LATER);
	f.reply_rc = -EPIPE;
	assert_int_equal(mds_lease_recall(t, A, 51), -EPIPE);
	f.reply_rc = 0;
	assert_int_equal(f.refs, 0);
	/* silent past its registration: no channel any more */
	f.now += 5000 + MDS_LEASE_REG_GRACE_MS;
	assert_false(mds_lease_registered(t, A));
	mds_lease_destroy(t);
}

static void test_held_wait(void **st)
{
	fake f;
	mds_lease *t = mk(&f, 0, 0);
	pfs_sconn *conn = (pfs_sconn *)&f; /* never dereferenced: fake reply path */
	uint64_t s = reg(t, A);
	mds_lease_stats ss;
	batch b;

	mds_lease_grant(t, A, 11, mds_lease_begin(t));
	assert_int_equal(wait_req(t, A, s, 5000, 0, conn, NULL), MDS_LEASE_LATER);
	assert_int_equal(f.refs, 1);
	mds_lease_get_stats(t, &ss);
	assert_int_equal(ss.held, 1);
	/* a record answers it at once */
	mds_lease_changed(t, B, 11, MDS_LEASE_ATTR);
	assert_int_equal(f.replies, 1);
	assert_int_equal(f.refs, 0);
	parse(f.data, f.len, &b);
	assert_int_equal(b.n, 1);
	assert_int_equal(b.r[0].ino, 11);
	/* not acknowledged (the reply was lost): sent again, at once */
	assert_int_equal(wait_req(t, A, s, 5000, 0, conn, &b), 0);
	assert_int_equal(f.refs, 0);
	assert_int_equal(b.n, 1);
	assert_int_equal(b.r[0].ino, 11);
	/* acknowledged: gone; the wait is held until its time */
	assert_int_equal(wait_req(t, A, b.seq, 5000, 0, conn, NULL), MDS_LEASE_LATER);
	f.now += 4999;
	mds_lease_tick(t);
	assert_int_equal(f.replies, 1);
	f.now += 1;
	mds_lease_tick(t);
	assert_int_equal(f.replies, 2);
	assert_int_equal(f.refs, 0);
	parse(f.data, f.len, &b);
	assert_int_equal(b.n, 0);
	/* a second wait supersedes a held one; BYE ends the channel */
	assert_int_equal(wait_req(t, A, b.seq, 5000, 0, conn, NULL), MDS_LEASE_LATER);
	assert_int_equal(wait_req(t, A, b.seq, 5000, PFS_NOTIFY_BYE, NULL, &b), 0);
	assert_int_equal(f.replies, 3);
	assert_int_equal(f.status, -ECANCELED);
	assert_int_equal(f.refs, 0);
	mds_lease_get_stats(t, &ss);
	assert_int_equal(ss.clients, 0);
	assert_int_equal(ss.leases, 0);
	/* held at destroy: answered */
	reg(t, B);
	assert_int_equal(wait_req(t, B, 0, 5000, 0, conn, NULL), MDS_LEASE_LATER);
	mds_lease_destroy(t);
	assert_int_equal(f.refs, 0);
	assert_int_equal(f.replies, 4);
}

static void test_caps(void **st)
{
	fake f;
	mds_lease *t = mk(&f, 3, 2);
	uint64_t s = reg(t, A);
	mds_lease_stats ss;
	batch b;

	for (uint64_t i = 1; i <= 4; i++)
		mds_lease_grant(t, A, 100 + i, mds_lease_begin(t));
	mds_lease_get_stats(t, &ss);
	assert_int_equal(ss.leases, 3);
	assert_int_equal(ss.evicted, 1);
	/* the oldest was evicted and revoked */
	assert_int_equal(wait_req(t, A, s, 0, 0, NULL, &b), 0);
	assert_int_equal(b.n, 1);
	assert_int_equal(b.r[0].ino, 101);
	assert_int_equal(b.flags, 0);
	s = b.seq;
	/* a queue of 2: the third record is lost, RESET until acknowledged */
	mds_lease_changed(t, B, 102, MDS_LEASE_ATTR);
	mds_lease_changed(t, B, 103, MDS_LEASE_ATTR);
	mds_lease_changed(t, B, 104, MDS_LEASE_ATTR);
	mds_lease_get_stats(t, &ss);
	assert_int_equal(ss.queued, 2); /* 101 (not yet acknowledged), 102 */
	assert_int_equal(ss.lost, 2);
	assert_int_equal(wait_req(t, A, s, 0, 0, NULL, &b), 0);
	assert_int_equal(b.flags, PFS_NOTIFY_RESET);
	assert_int_equal(b.n, 1);
	assert_int_equal(b.r[0].ino, 102);
	s = b.seq;
	assert_int_equal(wait_req(t, A, s, 0, 0, NULL, &b), 0);
	assert_int_equal(b.flags, 0);
	assert_int_equal(b.n, 0);
	mds_lease_destroy(t);
}

static void test_bad_requests(void **st)
{
	fake f;
	mds_lease *t = mk(&f, 0, 0);
	pfs_hdr h;
	pfs_wbuf out;
	pfs_rbuf r;
	uint8_t shortp[4] = { 0 };

	memset(&h, 0, sizeof(h));
	h.client_id = A;
	pfs_wbuf_init(&out);
	pfs_rbuf_init(&r, shortp, sizeof(shortp));
	assert_int_equal(mds_lease_wait(t, NULL, &h, &r, &out), -EBADMSG);
	assert_int_equal(wait_req(t, A, 0, 0, 0x80, NULL, NULL), -EINVAL);
	pfs_wbuf_free(&out);
	mds_lease_destroy(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_attr_revoked_by_others_only),
		cmocka_unit_test(test_unregistered_and_expired),
		cmocka_unit_test(test_names_and_perm),
		cmocka_unit_test(test_change_between_read_and_grant),
		cmocka_unit_test(test_start_grace),
		cmocka_unit_test(test_no_channel_idle),
		cmocka_unit_test(test_held_wait),
		cmocka_unit_test(test_registered_and_recall),
		cmocka_unit_test(test_caps),
		cmocka_unit_test(test_bad_requests),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
