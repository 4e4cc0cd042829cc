/* rtl's internal interface for its own parts outside core/ (the preload, the
 * policy engine, tools and tests). Not installed, not a stable API. */
#ifndef RTL_EXT_H
#define RTL_EXT_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

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
	uint64_t trap_ns;       /* time spent in rtl's SIGSEGV handler on
	                         * faults in the views (outermost traps), while
	                         * rtl_ext_time_traps is on */
	uint64_t syscall_buffers; /* buffers in the views that a wrapped call
	                           * resolved before the kernel saw them */
	uint64_t in_place_protects; /* protection changes made by mprotect on
	                             * regions protected in place */
	uint64_t in_place_failed;   /* ... refused by the kernel: the region
	                             * went back to moving pointers */
};

/* Measure the time spent in traps (two clock reads per trap, about 10 %
 * of a trap's own work, so off unless a report wants trap_ns). */
RTL_API void rtl_ext_time_traps(int on);

/* The diff codec on plain buffers, in the format of region_diff_encode
 * (docs/dirty.md): for units that are not regions (the DSM's pages).
 * encode: cur against twin, size bytes each; cap 0 gives the length needed;
 * ENOSPC if cap is too small. check: 0 if buf is a well-formed diff of a
 * size-byte unit, else -1 (EINVAL). apply: check, then write the runs into
 * dst; malformed input leaves dst untouched. No malloc, handler-safe. */
RTL_API ssize_t rtl_ext_diff_encode(const void *cur, const void *twin,
                                    size_t size, void *buf, size_t cap);
RTL_API int rtl_ext_diff_check(const void *buf, size_t len, size_t size);
RTL_API int rtl_ext_diff_apply(void *dst, size_t size, const void *buf,
                               size_t len);

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

/* Whether rtl has started (never starts it). */
RTL_API int rtl_ext_started(void);

/* Give the physical memory of [addr, addr + len) back: afterwards it reads
 * as zero in every view. addr lies in the RW view, inside an extent the
 * caller reserved and holds no region in that range. Lock-free (it may be
 * called under the caller's own locks). 0, or -1 with errno (EINVAL). */
RTL_API int rtl_ext_release(void *addr, size_t len);

/* The region whose span holds addr, through any view. */
struct rtl_ext_region {
	void *start;   /* its first byte, in the RW view */
	size_t size;   /* bytes, as defined */
	size_t offset; /* addr - start, in addr's view */
	int prot;      /* protection of the view addr lies in */
	void *data;    /* its user data (region_set_data) */
};

/* Lock-free and async-signal-safe. 0, or -1 with errno ENOENT (none; also
 * when rtl has not started). */
RTL_API int rtl_ext_region_find(const void *addr, struct rtl_ext_region *out);

/* Protect the region starting at addr in place from now on: addr's view
 * (RO or NONE) becomes its home, its bound pointers move there, pointers
 * into it are never moved again (not by region_protect, not by a trap),
 * and its protection, set to prot now, is applied to the home view's pages
 * with mprotect. For code whose copies of a pointer rtl cannot reach
 * (docs/internals.md, "In-place regions"). The caller promises the region
 * is the only one on the pages it touches, now and while it lives. Not for
 * MAP2 regions. 0, or -1 with errno: EINVAL (not a region's start, bad
 * prot, the RW view, already in place), EBUSY (another region shares a
 * page, or may: a region_alloc block under a page), ENOMEM (the kernel's
 * mapping limit). */
RTL_API int rtl_ext_region_in_place(void *addr, int prot);

/* End protection in place for every region whose home pages lie in
 * [addr, addr + len) (one view): their pages get their view's own
 * protection back and the regions move pointers again from now on, like
 * any region. For a program that sets the protection of those pages
 * itself. each(data) is called for each such region, outside its lock.
 * Returns how many. */
RTL_API int rtl_ext_region_in_place_end(void *addr, size_t len,
                                        void (*each)(void *data));

/* Signal actions, for a part of rtl that interposes sigaction. */
typedef int (*rtl_ext_sigaction_fn)(int sig, const struct sigaction *act,
                                    struct sigaction *old);

/* The function rtl changes signal actions with (NULL: libc's sigaction).
 * An interposer of sigaction hands in the real one, so that rtl's own
 * changes reach the kernel. */
RTL_API void rtl_ext_set_sigaction(rtl_ext_sigaction_fn fn);

/* sigaction as the program should see it. For SIGSEGV, once rtl's handler
 * is installed, act becomes the action rtl passes foreign faults to (what
 * would have run without rtl) and old what was there; before, and for other
 * signals, the real sigaction. 0, or -1 with errno. */
RTL_API int rtl_ext_sigaction(int sig, const struct sigaction *act,
                              struct sigaction *old);

/* Called in the SIGSEGV handler for a fault in the views that the view's own
 * mapping would refuse (a write through the RO view, any access through the
 * NONE view); non-zero gives the fault to the program's action instead of
 * treating it as a region trap (a range the program mprotect'ed itself).
 * Runs in a signal handler: no malloc, no locks. NULL: no filter. */
typedef int (*rtl_ext_fault_filter_fn)(void *addr, int write);
RTL_API void rtl_ext_set_fault_filter(rtl_ext_fault_filter_fn fn);

/* The memfd behind the views, for a part of rtl that maps the same memory
 * elsewhere (the preload's aliases). It changes in a forked child, in rtl's
 * own fork handler: read it again there (from a handler registered after rtl
 * started). -1 if rtl has not started. */
RTL_API int rtl_ext_views_fd(void);

/* Called in the SIGSEGV handler for a fault outside the views (a real fault,
 * not a sent signal), before the program's own action; non-zero if it
 * handled the fault and the instruction may run again. uc is the
 * interrupted context. Runs in a signal handler: no malloc, no locks the
 * interrupted code may hold. NULL: none. */
typedef int (*rtl_ext_foreign_hook_fn)(void *addr, int write, void *uc);
RTL_API void rtl_ext_set_foreign_hook(rtl_ext_foreign_hook_fn fn);

/* Called in the SIGSEGV handler when rtl ends the process over a region
 * trap it cannot resolve, after its diagnostic and before the signal's
 * default action takes the process (sig: SIGSEGV). Runs in a signal
 * handler: async-signal-safe work only. NULL: none. */
typedef void (*rtl_ext_death_hook_fn)(int sig);
RTL_API void rtl_ext_set_death_hook(rtl_ext_death_hook_fn fn);

/* One more range of memory for the system-call wrappers to resolve, besides
 * the views (the preload's aliases): a buffer wholly inside [lo, lo + len)
 * goes to fn, which returns the address to hand the kernel or NULL with
 * errno EFAULT to refuse the call. May run in a signal handler (read and
 * write are async-signal-safe). Set once, before any such buffer exists. */
typedef void *(*rtl_ext_access_fn)(const void *p, size_t len, int write);
RTL_API void rtl_ext_set_access_range(void *lo, size_t len,
                                      rtl_ext_access_fn fn);

#ifdef __cplusplus
}
#endif

#endif
