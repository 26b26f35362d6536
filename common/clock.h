/* clock.h — the one place pfs reads clocks: monotonic time for timeouts,
 * periods and rates, wall time for what is shown to people or stored.
 *
 * Monotonic values only compare with each other within one boot; wall time
 * (CLOCK_REALTIME) may step.  qos/ never calls these: its callers pass time
 * in.  All are thread-safe and cheap (vDSO clock_gettime), but for
 * pfs_thread_sleeps. */
#ifndef PFS_CLOCK_H
#define PFS_CLOCK_H

#include <stdint.h>
#include <time.h>

uint64_t pfs_clock_ms(void);      /* CLOCK_MONOTONIC, milliseconds */
uint64_t pfs_clock_us(void);      /* CLOCK_MONOTONIC, microseconds */
uint64_t pfs_clock_ns(void);      /* CLOCK_MONOTONIC, nanoseconds */
double pfs_clock_s(void);         /* CLOCK_MONOTONIC, seconds */
int64_t pfs_clock_wall_ns(void);  /* CLOCK_REALTIME, ns since the epoch */

/* The time ms milliseconds from now on clock clk (CLOCK_MONOTONIC for a
 * condition variable set to it, else CLOCK_REALTIME): an absolute
 * deadline for pthread_cond_timedwait. */
struct timespec pfs_clock_deadline(clockid_t clk, uint64_t ms);

/* How often the calling thread has slept so far (its voluntary context
 * switches: I/O, a lock, a wait), 0 if unknown.  Two readings around a
 * piece of work tell a slow disk or lock (it slept) from a thread that was
 * only preempted.  A system call (getrusage RUSAGE_THREAD), not vDSO. */
long pfs_thread_sleeps(void);

#endif
