/* sim_rng.c — xoshiro256** and the distributions of sim_rng.h.
 * Reference: Blackman & Vigna, "Scrambled linear pseudorandom number
 * generators" (2018); Marsaglia & Tsang, "A simple method for generating
 * gamma variables" (2000). */
#include "bench/sim/sim_rng.h"

#include <math.h>

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

void sim_rng_seed(sim_rng *r, uint64_t seed)
{
	uint64_t x = seed;
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&x);
}

uint64_t sim_rng_next(sim_rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

double sim_rng_uniform(sim_rng *r)
{
	/* 53 random bits, shifted by half an ulp so 0 and 1 never occur
	 * (log(U) and U^(1/k) below must stay finite). */
	return ((double)(sim_rng_next(r) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

long sim_rng_int(sim_rng *r, long lo, long hi)
{
	if (hi <= lo)
		return lo;
	uint64_t span = (uint64_t)(hi - lo) + 1;
	return lo + (long)(sim_rng_next(r) % span);
}

double sim_rng_loguniform(sim_rng *r, double a, double b)
{
	if (a <= 0 || b <= a)
		return a;
	return exp(log(a) + sim_rng_uniform(r) * (log(b) - log(a)));
}

double sim_rng_normal(sim_rng *r)
{
	double u1 = sim_rng_uniform(r), u2 = sim_rng_uniform(r);
	return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

double sim_rng_gamma(sim_rng *r, double k, double theta)
{
	if (k <= 0 || theta <= 0)
		return 0;
	if (k < 1) {
		/* Gamma(k) = Gamma(k + 1) · U^(1/k). */
		double u = sim_rng_uniform(r);
		return sim_rng_gamma(r, k + 1.0, theta) * pow(u, 1.0 / k);
	}
	double d = k - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
	for (;;) {
		double x, v;
		do {
			x = sim_rng_normal(r);
			v = 1.0 + c * x;
		} while (v <= 0);
		v = v * v * v;
		double u = sim_rng_uniform(r);
		if (u < 1.0 - 0.0331 * x * x * x * x)
			return d * v * theta;
		if (log(u) < 0.5 * x * x + d * (1.0 - v + log(v)))
			return d * v * theta;
	}
}
