/* bucket.h — a token bucket driven by caller-supplied time.
 *
 * The bucket of the Lustre NRS TBF policy (adaptbf.txt sec. II-A): tokens
 * accumulate at `rate` per second up to `depth` (Lustre's default depth is
 * 3 tokens), excess tokens are discarded so an idle queue cannot save up a
 * large burst, and a request may run when enough tokens are present.  The
 * unit of a token is the caller's: one RPC (RPCs/s) or one byte (bytes/s).
 *
 * Time is a parameter (seconds, any epoch, as a double); the bucket never
 * reads a clock.  Refill is computed from the elapsed time since the last
 * refill, so the long-run rate is exact up to floating-point rounding
 * however irregularly the caller looks at it.  A time earlier than the last
 * one seen is treated as "no time elapsed" (the bucket never loses tokens
 * because a caller's clock went backwards).
 *
 * The struct is a plain value type so it can be embedded (one per TBF
 * class, one per client stream); it holds no pointers and needs no free.
 * Not thread-safe: the embedding object's lock guards it. */
#ifndef QOS_BUCKET_H
#define QOS_BUCKET_H

typedef struct qos_bucket {
	double rate;    /* tokens per second, >= 0 */
	double depth;   /* maximum tokens held, > 0 */
	double tokens;  /* tokens at time `last`; may be < 0 after qos_bucket_take */
	double last;    /* time of the last refill (seconds) */
} qos_bucket;

/* Fill b with the given rate and depth, full at time now.
 * Returns 0, or -EINVAL if rate < 0, depth <= 0 or either is not finite. */
int qos_bucket_init(qos_bucket *b, double rate, double depth, double now);

/* Add rate * (now - last) tokens, capped at depth. */
void qos_bucket_refill(qos_bucket *b, double now);

/* Change the rate at time now: tokens earned so far are credited at the old
 * rate first.  Returns 0 or -EINVAL (rate < 0 or not finite). */
int qos_bucket_set_rate(qos_bucket *b, double rate, double now);

/* Change the depth; tokens above the new depth are discarded.
 * Returns 0 or -EINVAL. */
int qos_bucket_set_depth(qos_bucket *b, double depth, double now);

/* Tokens available at time now (after refill; does not modify b). */
double qos_bucket_peek(const qos_bucket *b, double now);

/* Take n tokens at time now if they are there.  n above the depth could
 * never be there: it is taken from a full bucket, which goes into debt
 * (as qos_bucket_take; qos_bucket_wait caps n the same way), so such a
 * request is never refused for good and the long-run rate holds.
 * Returns 0, -EAGAIN if fewer than min(n, depth) tokens are available
 * (nothing is taken), or -EINVAL if n < 0. */
int qos_bucket_try_take(qos_bucket *b, double n, double now);

/* Take n tokens unconditionally; the bucket may go into debt (negative
 * tokens), which later refills pay back.  Used for requests larger than
 * the depth, so they still run at the configured long-run rate. */
void qos_bucket_take(qos_bucket *b, double n, double now);

/* Seconds from now until n tokens are available (0 if they already are).
 * n is capped at depth (a request larger than the bucket waits for a full
 * bucket, see qos_bucket_take).  INFINITY if the rate is 0 and the tokens
 * are not there. */
double qos_bucket_wait(const qos_bucket *b, double n, double now);

#endif
