/* The core's counters (stats.c), updated with relaxed atomics (the trap
 * path included), and whether the trap handler times itself. */
#ifndef RTL_STATS_H
#define RTL_STATS_H

#include <stdatomic.h>
#include <stdint.h>

struct rtl_stats {
	_Atomic uint64_t traps;             /* faults in the views */
	_Atomic uint64_t handler_calls;     /* user handler invoked */
	_Atomic uint64_t stale_traps;       /* resolved by swizzling alone */
	_Atomic uint64_t protects;          /* region_protect calls that succeeded */
	_Atomic uint64_t decode_misses;     /* decodes not found in the cache */
	_Atomic uint64_t regions;           /* live regions */
	_Atomic uint64_t foreign;           /* SIGSEGVs passed on */
	_Atomic uint64_t trap_ns;           /* in the handler, outermost traps */
	_Atomic uint64_t syscall_buffers;   /* resolved for a system call */
	_Atomic uint64_t in_place_protects; /* mprotects of in-place regions */
	_Atomic uint64_t in_place_failed;   /* ... that fell back to views */
};
extern struct rtl_stats rtl_stats;

/* Whether the trap handler times itself (region_time_traps). */
extern _Atomic int rtl_time_traps;

#define RTL_COUNT(field) \
	atomic_fetch_add_explicit(&rtl_stats.field, 1, memory_order_relaxed)

#endif
