/* clock.c — monotonic and wall clocks in the units pfs uses (see clock.h). */
#include "common/clock.h"

#include <sys/resource.h>
#include <time.h>

static struct timespec mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts;
}

uint64_t pfs_clock_ms(void)
{
	struct timespec ts = mono();

	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

uint64_t pfs_clock_us(void)
{
	struct timespec ts = mono();

	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

uint64_t pfs_clock_ns(void)
{
	struct timespec ts = mono();

	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

double pfs_clock_s(void)
{
	struct timespec ts = mono();

	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int64_t pfs_clock_wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

struct timespec pfs_clock_deadline(clockid_t clk, uint64_t ms)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	ts.tv_sec += (time_t)(ms / 1000);
	ts.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

long pfs_thread_sleeps(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_THREAD, &ru) ? 0 : ru.ru_nvcsw;
}
