/* test_cli_fuse_wire.c — the INIT flags mount.pfs adds to libfuse's INIT
 * reply (client/fuse_wire.h): only to the reply to the INIT it saw, only
 * flags asked for and offered, never to an error, a reply of another
 * size, or any message after INIT; garbled and short requests are
 * ignored. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <linux/fuse.h>

#include "client/fuse_wire.h"

struct init_req {
	struct fuse_in_header h;
	struct fuse_init_in in;
};

static struct init_req init_req(uint64_t unique, uint32_t flags)
{
	struct init_req r;

	memset(&r, 0, sizeof(r));
	r.h.len = sizeof(r);
	r.h.opcode = FUSE_INIT;
	r.h.unique = unique;
	r.in.major = FUSE_KERNEL_VERSION;
	r.in.minor = 38;
	r.in.flags = flags;
	return r;
}

struct reply {
	struct fuse_out_header h;
	struct fuse_init_out out;
	struct iovec iov[2];
};

static void reply_init(struct reply *r, uint64_t unique, int32_t error, uint32_t flags)
{
	memset(r, 0, sizeof(*r));
	r->h.len = sizeof(r->h) + sizeof(r->out);
	r->h.unique = unique;
	r->h.error = error;
	r->out.major = FUSE_KERNEL_VERSION;
	r->out.minor = 38;
	r->out.flags = flags;
	r->out.max_write = 1 << 20;
	r->iov[0] = (struct iovec){ &r->h, sizeof(r->h) };
	r->iov[1] = (struct iovec){ &r->out, sizeof(r->out) };
}

/* The flags of the reply as it would be written. */
static uint32_t written_flags(const struct iovec *out)
{
	struct fuse_init_out o;

	memcpy(&o, out[1].iov_base, sizeof(o));
	return o.flags;
}

static void test_adds_asked_and_offered(void **state)
{
	cli_fuse_wire w;
	struct init_req q = init_req(7, FUSE_ASYNC_READ | FUSE_HANDLE_KILLPRIV_V2);
	struct reply r;
	struct iovec out[2];
	struct fuse_init_out o;

	cli_fuse_wire_init(&w, CLI_FUSE_HANDLE_KILLPRIV_V2);
	assert_false(cli_fuse_wire_offered(&w, CLI_FUSE_HANDLE_KILLPRIV_V2));
	cli_fuse_wire_saw_request(&w, &q, sizeof(q));
	assert_true(cli_fuse_wire_offered(&w, CLI_FUSE_HANDLE_KILLPRIV_V2));
	reply_init(&r, 7, 0, FUSE_ASYNC_READ);
	assert_int_equal(cli_fuse_wire_edit_reply(&w, r.iov, 2, out), 1);
	assert_int_equal(written_flags(out), FUSE_ASYNC_READ | FUSE_HANDLE_KILLPRIV_V2);
	assert_int_equal(cli_fuse_wire_added(&w), CLI_FUSE_HANDLE_KILLPRIV_V2);
	/* the header and every other field go as libfuse wrote them, and
	 * libfuse's own buffer is not touched */
	assert_ptr_equal(out[0].iov_base, &r.h);
	assert_int_equal(out[1].iov_len, sizeof(struct fuse_init_out));
	memcpy(&o, out[1].iov_base, sizeof(o));
	assert_int_equal(o.max_write, 1 << 20);
	assert_int_equal(o.minor, 38);
	assert_int_equal(r.out.flags, FUSE_ASYNC_READ);
	/* later replies, even one reusing the unique, pass untouched */
	reply_init(&r, 7, 0, 0);
	assert_int_equal(cli_fuse_wire_edit_reply(&w, r.iov, 2, out), 0);
	assert_int_equal(r.out.flags, 0);
}

/* A wire that wants want and has seen an INIT (unique) offering offered. */
static void primed(cli_fuse_wire *w, uint32_t want, uint64_t unique, uint32_t offered)
{
	struct init_req q = init_req(unique, offered);

	cli_fuse_wire_init(w, want);
	cli_fuse_wire_saw_request(w, &q, sizeof(q));
}

/* cli_fuse_wire_edit_reply of a reply (unique, error) whose argument is
 * arg_len bytes, in count iovecs; the reply's own flags must stay 0. */
static int edits(cli_fuse_wire *w, uint64_t unique, int32_t error, size_t arg_len, int count)
{
	struct reply r;
	struct iovec out[2];
	int rc;

	reply_init(&r, unique, error, 0);
	r.iov[1].iov_len = arg_len;
	rc = cli_fuse_wire_edit_reply(w, r.iov, count, out);
	assert_int_equal(r.out.flags, 0);
	return rc;
}

static void test_not_offered_not_asked(void **state)
{
	cli_fuse_wire w;
	const size_t full = sizeof(struct fuse_init_out);

	/* the kernel does not offer it */
	primed(&w, CLI_FUSE_HANDLE_KILLPRIV_V2, 3, FUSE_ASYNC_READ);
	assert_int_equal(edits(&w, 3, 0, full, 2), 0);
	assert_int_equal(cli_fuse_wire_added(&w), 0);
	/* offered, not asked (killpriv_v2=0) */
	primed(&w, 0, 3, FUSE_HANDLE_KILLPRIV_V2);
	assert_int_equal(edits(&w, 3, 0, full, 2), 0);
	assert_int_equal(cli_fuse_wire_added(&w), 0);
}

static void test_error_and_odd_replies(void **state)
{
	cli_fuse_wire w;
	const size_t full = sizeof(struct fuse_init_out);

	/* an INIT refused (protocol too old): the error goes as it is, and
	 * nothing after it is looked at */
	primed(&w, CLI_FUSE_HANDLE_KILLPRIV_V2, 9, FUSE_HANDLE_KILLPRIV_V2);
	assert_int_equal(edits(&w, 9, -EPROTO, full, 2), 0);
	assert_int_equal(edits(&w, 9, 0, full, 2), 0);
	assert_int_equal(cli_fuse_wire_added(&w), 0);
	/* a reply to another request before INIT's: untouched, and INIT's
	 * still gets the flag */
	primed(&w, CLI_FUSE_HANDLE_KILLPRIV_V2, 9, FUSE_HANDLE_KILLPRIV_V2);
	assert_int_equal(edits(&w, 10, 0, full, 2), 0);
	assert_int_equal(edits(&w, 9, 0, full, 2), 1);
	/* an INIT reply of another size, or in one iovec: untouched */
	primed(&w, CLI_FUSE_HANDLE_KILLPRIV_V2, 9, FUSE_HANDLE_KILLPRIV_V2);
	assert_int_equal(edits(&w, 9, 0, FUSE_COMPAT_22_INIT_OUT_SIZE, 2), 0);
	primed(&w, CLI_FUSE_HANDLE_KILLPRIV_V2, 9, FUSE_HANDLE_KILLPRIV_V2);
	assert_int_equal(edits(&w, 9, 0, full, 1), 0);
	assert_int_equal(cli_fuse_wire_added(&w), 0);
}

static void test_garbled_requests_ignored(void **state)
{
	cli_fuse_wire w;
	struct init_req q = init_req(5, FUSE_HANDLE_KILLPRIV_V2);
	uint8_t junk[4096];

	cli_fuse_wire_init(&w, CLI_FUSE_HANDLE_KILLPRIV_V2);
	/* short reads, a length that disagrees with the header, another
	 * opcode, unique 0, another major version, garbage */
	for (size_t n = 0; n < sizeof(q); n++)
		cli_fuse_wire_saw_request(&w, &q, n);
	q.h.len = sizeof(q) + 1;
	cli_fuse_wire_saw_request(&w, &q, sizeof(q));
	q = init_req(5, FUSE_HANDLE_KILLPRIV_V2);
	q.h.opcode = FUSE_LOOKUP;
	cli_fuse_wire_saw_request(&w, &q, sizeof(q));
	q = init_req(0, FUSE_HANDLE_KILLPRIV_V2);
	cli_fuse_wire_saw_request(&w, &q, sizeof(q));
	q = init_req(5, FUSE_HANDLE_KILLPRIV_V2);
	q.in.major = 8;
	cli_fuse_wire_saw_request(&w, &q, sizeof(q));
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)(i * 131 + 7);
	cli_fuse_wire_saw_request(&w, junk, sizeof(junk));
	assert_false(cli_fuse_wire_offered(&w, CLI_FUSE_HANDLE_KILLPRIV_V2));
	/* a kernel's shorter INIT (no flags2, 7.x before 36): the flags count */
	q = init_req(5, FUSE_HANDLE_KILLPRIV_V2);
	q.h.len = sizeof(q.h) + offsetof(struct fuse_init_in, flags2);
	cli_fuse_wire_saw_request(&w, &q, q.h.len);
	assert_true(cli_fuse_wire_offered(&w, CLI_FUSE_HANDLE_KILLPRIV_V2));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_adds_asked_and_offered),
		cmocka_unit_test(test_not_offered_not_asked),
		cmocka_unit_test(test_error_and_odd_replies),
		cmocka_unit_test(test_garbled_requests_ignored),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
