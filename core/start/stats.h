/* The core's counters (stats.c), updated with relaxed atomics (the trap
 * path included), and whether the trap handler times itself. A thread adds
 * to a shard of its own, a cache line or more from the others: one shared
 * set made threads protecting their own regions fight over its line (two
 * threads did 0.68 x one thread's region_protect calls; bench/README.md,
 * "Threads"). region_stats sums the shards. */
#ifndef RTL_STATS_H
#define RTL_STATS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "core/util/export.h"

struct rtl_stats {
	_Atomic uint64_t traps;             /* faults in the views */
	_Atomic uint64_t handler_calls;     /* user handler invoked */
	_Atomic uint64_t stale_traps;       /* resolved by swizzling alone */
	_Atomic uint64_t protects;          /* region_protect calls that succeeded */
	_Atomic uint64_t decode_misses;     /* decodes not found in the cache */
	_Atomic uint64_t foreign;           /* SIGSEGVs passed on */
	_Atomic uint64_t trap_ns;           /* in the handler, outermost traps */
	_Atomic uint64_t syscall_buffers;   /* resolved for a system call */
	_Atomic uint64_t in_place_protects; /* mprotects of in-place regions */
	_Atomic uint64_t in_place_failed;   /* ... that fell back to views */
	_Atomic uint64_t fast_traps;        /* on the fast path: each a trap, a
	                                       decode-cache hit and a handler
	                                       call, counted once */
	_Atomic uint64_t prot_page_table;   /* protection backend: write-protect
	                                       calls (core/prot/prot.c) */
	_Atomic uint64_t prot_mprotect;     /* ... and its mprotect calls */
} __attribute__((aligned(64)));

#define RTL_STATS_SHARDS 16
extern struct rtl_stats rtl_stats[RTL_STATS_SHARDS];

/* This thread's shard, NULL until its first count. TLS and an atomic:
 * safe in a signal handler. A pointer, not an index: a count is a TLS
 * load and an add. */
extern __thread struct rtl_stats *rtl_stats_own __attribute__((tls_model("initial-exec")));
extern _Atomic unsigned rtl_stats_next;

static inline struct rtl_stats *rtl_stats_mine(void)
{
	struct rtl_stats *s = rtl_stats_own;

	if (__builtin_expect(!s, 0))
		s = rtl_stats_own = &rtl_stats[atomic_fetch_add_explicit(
		                                       &rtl_stats_next, 1, memory_order_relaxed) %
		                               RTL_STATS_SHARDS];
	return s;
}

/* Whether the trap handler times itself (region_time_traps). */
extern _Atomic int rtl_time_traps;

#define RTL_ADD(field, n) \
	atomic_fetch_add_explicit(&rtl_stats_mine()->field, (n), memory_order_relaxed)
#define RTL_COUNT(field) RTL_ADD(field, 1)

/* The sum of a counter over the shards (exported for the unit tests,
 * which tell the trap's fast path from its general path by fast_traps). */
RTL_PRIVATE_API uint64_t rtl_stats_sum(size_t offset);
#define RTL_STATS_SUM(field) rtl_stats_sum(offsetof(struct rtl_stats, field))

#endif
