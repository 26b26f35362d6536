/* qos_ctl_probe.c — malformed QoS control frames for an OSS control port
 * (PFS_OP_OSS_QOS_SET, PFS_OP_OSS_NRS_RULE, PFS_OP_OSS_QOS_STATS): each is
 * well framed (a valid header announcing exactly its payload) but its
 * payload is wrong — truncated, trailing bytes, unknown mode or verb, NaN,
 * negative or absurd rates, a row count far beyond the bytes sent, a bad
 * rule text.  Every one must get a reply with an error status (not a
 * dropped connection, not success); afterwards a well-formed QOS_STATS
 * must still succeed.  No probe is a valid request, so the OSS's state
 * (the MDS's allocations, admin rules) is left as it was.
 *
 *   qos_ctl_probe HOST:PORT
 * Prints one line per probe; exit 0 if every probe got an error reply and
 * the OSS still serves, 1 otherwise, 2 on usage errors. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/auth.h"
#include "common/buf.h"
#include "common/net.h"
#include "common/proto.h"
#include "common/qosmsg.h"
#include "common/rpc.h"

static pfs_rpc_pool *pool;
static int bad;

/* Send w as op; want a reply (not a transport error) with status < 0. */
static void probe(const char *what, uint16_t op, pfs_wbuf *w)
{
	pfs_rpc_reply rep = { 0 };
	int rc = pfs_rpc_call(pool, op, "probe", 0, w->data, w->len, NULL, 0, &rep);
	int replied = rep.hdr.magic != 0;

	if (rc < 0 && replied) {
		printf("ok   %-44s -> %s\n", what, pfs_strerror(rc));
	} else {
		printf("FAIL %-44s -> %s\n", what,
		       rc == 0 ? "accepted" : replied ? "?" : "no reply (connection dropped)");
		bad = 1;
	}
	pfs_rpc_reply_free(&rep);
	pfs_wbuf_reset(w);
}

/* A QOS_SET payload: generation, mode, period, n, then `rows` rows. */
static void qos_set(pfs_wbuf *w, uint8_t mode, double period, uint32_t n, uint32_t rows,
		    double rate, double nodes)
{
	pfs_wbuf_u64(w, 1); /* older than any MDS decision, should one get through */
	pfs_wbuf_u8(w, mode);
	pfs_wbuf_f64(w, period);
	pfs_wbuf_u32(w, n);
	for (uint32_t i = 0; i < rows; i++) {
		pfs_wbuf_str(w, "probe-job");
		pfs_wbuf_u32(w, PFS_QOS_OST_ALL);
		pfs_wbuf_f64(w, rate);
		pfs_wbuf_f64(w, nodes);
	}
}

int main(int argc, char **argv)
{
	char host[256];
	uint16_t port;
	pfs_rpc_opts o = { .max_conns = 1, .timeout_ms = 5000, .retry_ms = 2000, .client_id = 4242 };
	pfs_rpc_reply rep = { 0 };
	pfs_wbuf w;
	int rc;

	if (argc != 2 || pfs_addr_parse(argv[1], host, sizeof(host), &port)) {
		fprintf(stderr, "usage: qos_ctl_probe HOST:PORT\n");
		return 2;
	}
	/* The key, as every probe takes it: $PFS_KEY (none = no handshake). */
	static pfs_auth_key key;
	const char *kp = getenv("PFS_KEY");
	char err[1200];

	if (kp && *kp) {
		if (pfs_auth_init() || pfs_auth_key_load_msg(kp, &key, err, sizeof(err))) {
			fprintf(stderr, "qos_ctl_probe: %s\n", err);
			return 2;
		}
		o.auth = &key;
	}
	if (pfs_rpc_pool_create(host, port, &o, &pool)) {
		fprintf(stderr, "qos_ctl_probe: cannot reach %s\n", argv[1]);
		return 1;
	}
	pfs_wbuf_init(&w);

	probe("QOS_SET empty payload", PFS_OP_OSS_QOS_SET, &w);
	pfs_wbuf_u64(&w, 7);
	probe("QOS_SET truncated after generation", PFS_OP_OSS_QOS_SET, &w);
	qos_set(&w, 99, 0.1, 0, 0, 0, 0);
	probe("QOS_SET unknown mode 99", PFS_OP_OSS_QOS_SET, &w);
	qos_set(&w, PFS_QOS_MODE_RATES, 0.0, 0, 0, 0, 0);
	probe("QOS_SET period 0", PFS_OP_OSS_QOS_SET, &w);
	qos_set(&w, PFS_QOS_MODE_RATES, NAN, 0, 0, 0, 0);
	probe("QOS_SET period NaN", PFS_OP_OSS_QOS_SET, &w);
	qos_set(&w, PFS_QOS_MODE_RATES, 0.1, 1000000000u, 1, 1e6, 1);
	probe("QOS_SET n = 10^9 rows, 1 sent", PFS_OP_OSS_QOS_SET, &w);
	qos_set(&w, PFS_QOS_MODE_RATES, 0.1, 1, 1, NAN, 1);
	probe("QOS_SET rate NaN", PFS_OP_OSS_QOS_SET, &w);
	qos_set(&w, PFS_QOS_MODE_RATES, 0.1, 1, 1, -5e6, 1);
	probe("QOS_SET rate negative", PFS_OP_OSS_QOS_SET, &w);
	qos_set(&w, PFS_QOS_MODE_RATES, 0.1, 1, 1, INFINITY, 1);
	probe("QOS_SET rate infinite", PFS_OP_OSS_QOS_SET, &w);
	qos_set(&w, PFS_QOS_MODE_ADAPTBF, 0.1, 1, 1, 0, -3);
	probe("QOS_SET nodes negative", PFS_OP_OSS_QOS_SET, &w);
	qos_set(&w, PFS_QOS_MODE_RATES, 0.1, 1, 1, 1e6, 1);
	pfs_wbuf_u32(&w, 0xdeadbeef);
	probe("QOS_SET trailing bytes", PFS_OP_OSS_QOS_SET, &w);
	qos_set(&w, PFS_QOS_MODE_RATES, 0.1, 1, 0, 0, 0);
	pfs_wbuf_u32(&w, 2000000000u); /* a job id "string" longer than the frame */
	probe("QOS_SET row with string length 2e9", PFS_OP_OSS_QOS_SET, &w);

	pfs_wbuf_u8(&w, 99);
	pfs_wbuf_str(&w, "x");
	pfs_wbuf_str(&w, "rate=1MB/s");
	probe("NRS_RULE unknown verb 99", PFS_OP_OSS_NRS_RULE, &w);
	pfs_wbuf_u8(&w, PFS_NRS_START);
	pfs_wbuf_str(&w, "probe");
	pfs_wbuf_str(&w, "jobid={x} rat=1MB/s");
	probe("NRS_RULE start, unknown key", PFS_OP_OSS_NRS_RULE, &w);
	pfs_wbuf_u8(&w, PFS_NRS_START);
	pfs_wbuf_str(&w, "probe");
	pfs_wbuf_str(&w, "jobid={x} rate=-1MB/s");
	probe("NRS_RULE start, negative rate", PFS_OP_OSS_NRS_RULE, &w);
	pfs_wbuf_u8(&w, PFS_NRS_START);
	pfs_wbuf_str(&w, "");
	pfs_wbuf_str(&w, "rate=1MB/s");
	probe("NRS_RULE start, empty name", PFS_OP_OSS_NRS_RULE, &w);
	pfs_wbuf_u8(&w, PFS_NRS_START);
	pfs_wbuf_str(&w, "probe");
	probe("NRS_RULE start, no expression", PFS_OP_OSS_NRS_RULE, &w);
	pfs_wbuf_u8(&w, PFS_NRS_STOP);
	pfs_wbuf_str(&w, "no-such-rule-here");
	pfs_wbuf_str(&w, "");
	probe("NRS_RULE stop, unknown rule", PFS_OP_OSS_NRS_RULE, &w);

	pfs_wbuf_u8(&w, 7);
	probe("QOS_STATS unknown mode 7", PFS_OP_OSS_QOS_STATS, &w);
	pfs_wbuf_u8(&w, PFS_QOS_STATS_TOTAL);
	pfs_wbuf_u64(&w, 1);
	probe("QOS_STATS trailing bytes", PFS_OP_OSS_QOS_STATS, &w);

	/* Still serving: a well-formed request of the same family. */
	pfs_wbuf_u8(&w, PFS_QOS_STATS_TOTAL);
	rc = pfs_rpc_call(pool, PFS_OP_OSS_QOS_STATS, "probe", 0, w.data, w.len, NULL, 0, &rep);
	if (rc) {
		printf("FAIL well-formed QOS_STATS afterwards -> %s\n", pfs_strerror(rc));
		bad = 1;
	} else {
		printf("ok   well-formed QOS_STATS afterwards: %zu bytes\n", rep.len);
	}
	pfs_rpc_reply_free(&rep);
	pfs_wbuf_free(&w);
	pfs_rpc_pool_destroy(pool);
	return bad;
}
