/* bucket.c — token bucket with caller-supplied time (see bucket.h). */
#include "qos/bucket.h"

#include <errno.h>
#include <math.h>

int qos_bucket_init(qos_bucket *b, double rate, double depth, double now)
{
	if (!isfinite(rate) || rate < 0 || !isfinite(depth) || depth <= 0)
		return -EINVAL;
	b->rate = rate;
	b->depth = depth;
	b->tokens = depth;
	b->last = now;
	return 0;
}

static double bucket_level(const qos_bucket *b, double now)
{
	double dt = now - b->last;
	double t;

	/* A clock that went backwards earns nothing (see header). */
	if (!(dt > 0))
		return b->tokens;
	t = b->tokens + b->rate * dt;
	return t > b->depth ? b->depth : t;
}

void qos_bucket_refill(qos_bucket *b, double now)
{
	b->tokens = bucket_level(b, now);
	if (now > b->last)
		b->last = now;
}

int qos_bucket_set_rate(qos_bucket *b, double rate, double now)
{
	if (!isfinite(rate) || rate < 0)
		return -EINVAL;
	qos_bucket_refill(b, now);
	b->rate = rate;
	return 0;
}

int qos_bucket_set_depth(qos_bucket *b, double depth, double now)
{
	if (!isfinite(depth) || depth <= 0)
		return -EINVAL;
	qos_bucket_refill(b, now);
	b->depth = depth;
	if (b->tokens > depth)
		b->tokens = depth;
	return 0;
}

double qos_bucket_peek(const qos_bucket *b, double now)
{
	return bucket_level(b, now);
}

int qos_bucket_try_take(qos_bucket *b, double n, double now)
{
	if (!(n >= 0))
		return -EINVAL;
	qos_bucket_refill(b, now);
	/* more than the bucket holds: a full bucket, then in debt (the
	 * same cap as qos_bucket_wait) */
	if (b->tokens < (n > b->depth ? b->depth : n))
		return -EAGAIN;
	b->tokens -= n;
	return 0;
}

void qos_bucket_take(qos_bucket *b, double n, double now)
{
	qos_bucket_refill(b, now);
	b->tokens -= n;
}

double qos_bucket_wait(const qos_bucket *b, double n, double now)
{
	double have = bucket_level(b, now);

	if (n > b->depth)
		n = b->depth;
	if (have >= n)
		return 0;
	if (b->rate <= 0)
		return INFINITY;
	return (n - have) / b->rate;
}
