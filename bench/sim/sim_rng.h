/* sim_rng.h — deterministic random numbers for pfs-sim: xoshiro256** seeded
 * with splitmix64, and the distributions the workload generator needs
 * (uniform, log-uniform, normal, Gamma).
 *
 * Everything is a pure function of the seed, so a scenario run with the same
 * seed is bit-for-bit repeatable on any machine with IEEE doubles.  The state
 * is a small value type the caller owns (no globals, no locking: give each
 * thread its own).  Gamma uses Marsaglia & Tsang (2000) for shape >= 1 and
 * the boost x·U^(1/k) for shape < 1; normals come from Box–Muller (one of the
 * pair is thrown away to keep the state a plain struct). */
#ifndef SIM_RNG_H
#define SIM_RNG_H

#include <stdint.h>

typedef struct sim_rng {
	uint64_t s[4];
} sim_rng;

/* Seed the generator; any seed (including 0) gives a valid state. */
void sim_rng_seed(sim_rng *r, uint64_t seed);
uint64_t sim_rng_next(sim_rng *r);
/* Uniform in the open interval (0, 1). */
double sim_rng_uniform(sim_rng *r);
/* Uniform integer in [lo, hi] (inclusive); lo if hi <= lo. */
long sim_rng_int(sim_rng *r, long lo, long hi);
/* exp(U(ln a, ln b)): every order of magnitude equally likely; a, b > 0. */
double sim_rng_loguniform(sim_rng *r, double a, double b);
/* Standard normal N(0, 1). */
double sim_rng_normal(sim_rng *r);
/* Gamma(shape k, scale theta): mean k·theta, variance k·theta².
 * k <= 0 or theta <= 0 gives 0. */
double sim_rng_gamma(sim_rng *r, double k, double theta);

#endif
