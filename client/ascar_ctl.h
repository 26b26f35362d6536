/* ascar_ctl.h — ASCAR in mount.pfs: the rule set the MDS distributes and
 * one traffic controller per (client, OSS) stream (ascar.txt sec. III,
 * the algorithms in qos/ascar.h).
 *
 * cli_ascar is the mount's current rule set and its version (the MDS's
 * counter, bumped by every `pfsadmin qos ascar load|off`); client/ascar_poll
 * installs what the MDS has.  An empty rule text means "off": no window and
 * no rate gap, the client sends as RCC allows.
 *
 * cli_ascar_stream is the controller of one OSS.  client/credit.c feeds it
 * the RPC stream (a send time when a piece takes its credit, a reply time
 * when the reply came) and asks it two things before a piece may start: the
 * congestion window (0 = no limit; the credit takes min(window, RCC grant),
 * so the window never exceeds what the OSS granted) and how long until the
 * rate gap tau since the previous send has passed.  Every reply is a
 * control step: the indicators ack_ewma, send_ewma and pt_ratio are
 * updated and the matching rule's action applied (at most twice a second,
 * qos_ascar_ctl_apply).  A stream notices a new rule-set version at its
 * next step and copies the rules; the statistics of the version it leaves
 * (per-rule hits and indicator sums, which SHARP splits at, and the RPC
 * latency percentiles) are logged at info level as
 *   ascar OSS: v<V> rpcs <N> p50_us <P> p99_us <P>
 *   ascar OSS: v<V> rule <i> hits <h> sum <ack> <send> <pt>
 * so a live SHARP run (bench/sharp_live) can read them; window changes are
 * logged at info level as "ascar OSS: window A -> B (rule i, v<V>)".
 *
 * Times are CLOCK_MONOTONIC microseconds (pfs_clock_us).  cli_ascar is
 * thread-safe; a stream is not (its credit's mutex guards it; it takes the
 * cli_ascar's mutex inside, so the lock order is credit -> ascar). */
#ifndef CLI_ASCAR_CTL_H
#define CLI_ASCAR_CTL_H

#include <stdint.h>

typedef struct cli_ascar cli_ascar;
typedef struct cli_ascar_stream cli_ascar_stream;

/* The window a stream starts with and returns to when rules arrive
 * (Lustre's default max_rpcs_in_flight). */
#define CLI_ASCAR_CWND0 8

int cli_ascar_create(cli_ascar **out);
/* Every stream must be destroyed first.  NULL is a no-op. */
void cli_ascar_destroy(cli_ascar *a);
/* Install rule text (qos/ascar.h format; "" or NULL = off) as version.
 * 0; -EINVAL with *line (may be NULL) the 1-based bad line (0: no rule);
 * -ENOMEM.  On error the current rules stay. */
int cli_ascar_set(cli_ascar *a, const char *text, uint64_t version, int *line);
/* Current version (0 before any) and whether rules are on. */
uint64_t cli_ascar_version(cli_ascar *a, int *on);

/* name: for log lines (copied). */
int cli_ascar_stream_create(cli_ascar *a, const char *name, cli_ascar_stream **out);
/* Logs the statistics of the version in use.  NULL is a no-op. */
void cli_ascar_stream_destroy(cli_ascar_stream *s);
/* A request went out at now_us. */
void cli_ascar_sent(cli_ascar_stream *s, uint64_t now_us);
/* Its reply came at now_us: indicators, latency, one control step. */
void cli_ascar_reply(cli_ascar_stream *s, uint64_t sent_us, uint64_t now_us);
/* Look for a new rule-set version now (also done on every reply). */
void cli_ascar_refresh(cli_ascar_stream *s);
/* RPCs the controller allows in flight; 0 = no limit (off). */
unsigned cli_ascar_window(const cli_ascar_stream *s);
/* Microseconds from now_us until the rate gap allows a send (0 = now). */
uint64_t cli_ascar_wait_us(const cli_ascar_stream *s, uint64_t now_us);

typedef struct cli_ascar_stats {
	uint64_t version;  /* rule set in use (0 = none yet) */
	int on;
	unsigned window;   /* 0 when off */
	double tau_us;
	uint64_t rpcs;     /* replies under this version */
	uint64_t p50_us, p99_us; /* RPC latency under this version (0: none) */
	uint64_t changes;  /* window changes since the stream started */
} cli_ascar_stats;

void cli_ascar_stream_stats(const cli_ascar_stream *s, cli_ascar_stats *st);

#endif
