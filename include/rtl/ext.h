/* rtl's internal interface for its own parts outside core/ (the preload, the
 * policy engine, tools and tests). Not installed, not a stable API. */
#ifndef RTL_EXT_H
#define RTL_EXT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef RTL_API
#define RTL_API __attribute__((visibility("default")))
#endif

struct rtl_ext_stats {
	uint64_t traps;         /* faults in rtl's views */
	uint64_t handler_calls; /* region handlers run */
	uint64_t stale_traps;   /* resolved by swizzling alone */
	uint64_t protects;      /* successful region_protect calls */
	uint64_t regions;       /* live regions */
	uint64_t foreign;       /* SIGSEGVs passed to the previous handler */
	uint64_t decode_hits;   /* decode cache */
	uint64_t decode_misses;
};

/* Counters since start; -1 if rtl could not start. */
RTL_API int rtl_ext_stats(struct rtl_ext_stats *out);

/* Start rtl now (normally on first use). -1 with errno. */
RTL_API int rtl_ext_init(void);

/* The views: base of the NONE view and bytes per view. */
RTL_API void rtl_ext_views(uintptr_t *base, size_t *size);

/* Reserve an extent of the views for regions defined in place (the
 * preload's jemalloc arenas): returns its address in the RW view, or NULL
 * with errno. region_define on memory inside the views is valid only within
 * such an extent. Give it back with rtl_ext_unreserve (same size). */
RTL_API void *rtl_ext_reserve(size_t size, size_t *got);
RTL_API int rtl_ext_unreserve(void *addr, size_t size);

/* The region holding addr (any view, padding included): its start in the
 * view of addr and its size. 0, or -1 if addr is in no region. Lock-free,
 * async-signal-safe. */
RTL_API int rtl_ext_lookup(const void *addr, void **base, size_t *size);

/* Bytes of the views' offset space handed out. */
RTL_API size_t rtl_ext_extent_in_use(void);

#ifdef __cplusplus
}
#endif

#endif
