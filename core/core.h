/* State shared by the core's modules: initialisation, the define lock,
 * counters. Nothing here knows of policy or preloading. */
#ifndef RTL_CORE_H
#define RTL_CORE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "region.h"

/* First use: map the views, open the decoder, install the trap handler.
 * Thread-safe and idempotent; -1 with errno if rtl cannot start. */
int rtl_init(void);

extern _Atomic int rtl_initialised;

static inline int rtl_ensure_init(void)
{
	if (atomic_load_explicit(&rtl_initialised, memory_order_acquire))
		return 0;
	return rtl_init();
}

/* Serialises define and free (the region map, the extent allocator, the
 * live list). Never taken on the trap path. */
extern pthread_mutex_t rtl_define_lock;

/* Counters, updated with relaxed atomics (the trap path included). */
struct rtl_stats {
	_Atomic uint64_t traps;         /* faults in the views */
	_Atomic uint64_t handler_calls; /* user handler invoked */
	_Atomic uint64_t stale_traps;   /* resolved by swizzling alone */
	_Atomic uint64_t protects;      /* region_protect calls that succeeded */
	_Atomic uint64_t decode_misses; /* decodes not found in the cache */
	_Atomic uint64_t regions;       /* live regions */
	_Atomic uint64_t foreign;       /* SIGSEGVs passed on */
	_Atomic uint64_t trap_ns;       /* in the handler, outermost traps */
	_Atomic uint64_t syscall_buffers; /* resolved for a system call */
	_Atomic uint64_t in_place_protects; /* mprotects of in-place regions */
	_Atomic uint64_t in_place_failed;   /* ... that fell back to views */
};
extern struct rtl_stats rtl_stats;

/* Whether the trap handler times itself (rtl_ext_time_traps). */
extern _Atomic int rtl_time_traps;

#define RTL_COUNT(field) \
	atomic_fetch_add_explicit(&rtl_stats.field, 1, memory_order_relaxed)

/* Region records: define, free, iterate (for fork). Caller holds the define
 * lock for all three. */
struct rtl_region *rtl_region_create(uint64_t lo, uint64_t size,
                                     uint64_t span, uint32_t flags, int view);
void rtl_region_destroy(struct rtl_region *r);
void rtl_regions_after_fork(void);

/* Set r's protection to view: rewrite its pointers (and, inside a handler,
 * the interrupted registers). r's lock held; async-signal-safe (protect.c). */
void rtl_protect_locked(struct rtl_region *r, int view);

/* The default handler (region_handler(NULL, h)). */
extern _Atomic(region_handler_t) rtl_default_handler;

/* Bound and unbounded pointer registry (pointers.c). */
int rtl_ptr_bind(struct rtl_region *r, void **var);
void rtl_ptrs_unbind_region(struct rtl_region *r);
void rtl_ptrs_swizzle(struct rtl_region *r, int view); /* holds r->lock */
void rtl_ptrs_after_fork(void);
extern pthread_mutex_t rtl_registry_lock;

#endif
