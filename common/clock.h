/* clock.h — the one place pfs reads clocks: monotonic time for timeouts,
 * periods and rates, wall time for what is shown to people or stored.
 *
 * Monotonic values only compare with each other within one boot; wall time
 * (CLOCK_REALTIME) may step.  qos/ never calls these: its callers pass time
 * in.  All are thread-safe and cheap (vDSO clock_gettime). */
#ifndef PFS_CLOCK_H
#define PFS_CLOCK_H

#include <stdint.h>

uint64_t pfs_clock_ms(void);      /* CLOCK_MONOTONIC, milliseconds */
uint64_t pfs_clock_us(void);      /* CLOCK_MONOTONIC, microseconds */
uint64_t pfs_clock_ns(void);      /* CLOCK_MONOTONIC, nanoseconds */
double pfs_clock_s(void);         /* CLOCK_MONOTONIC, seconds */
int64_t pfs_clock_wall_ns(void);  /* CLOCK_REALTIME, ns since the epoch */

#endif
