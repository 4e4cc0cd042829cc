/* The one clock rtl measures time with: CLOCK_MONOTONIC in nanoseconds.
 * Async-signal-safe (the vDSO answers clock_gettime), so the trap path and
 * the preload's fault handlers may call it. */
#ifndef RTL_CLOCK_H
#define RTL_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t rtl_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif
