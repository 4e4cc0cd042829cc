/* The buffers the wrappers hand the kernel (access.c): the kernel does not
 * raise SIGSEGV for its accesses on the program's behalf, so rtl resolves
 * them beforehand, exactly as a trap would be resolved. rtl_access_set_range
 * is exported from librtl-interpose for the preload. */
#ifndef RTL_ACCESS_H
#define RTL_ACCESS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "core/region/views.h"
#include "core/tag/tagged.h"
#include "core/util/export.h"

/* One more range of memory for the system-call wrappers to resolve, besides
 * the views (the preload's aliases): a buffer wholly inside [lo, lo + len)
 * goes to fn, which returns the address to hand the kernel or NULL with
 * errno EFAULT to refuse the call. May run in a signal handler (read and
 * write are async-signal-safe). Set once, before any such buffer exists. */
typedef void *(*rtl_access_fn)(const void *p, size_t len, int write);
RTL_PRIVATE_API void rtl_access_set_range(void *lo, size_t len,
                                          rtl_access_fn fn);

/* Keep the buffer at p granted (delta 1) until the kernel is through with
 * it (delta -1): no epoch re-protects it meanwhile. The preload's, set
 * once; may run in a signal handler. NULL: nothing to keep. */
typedef void (*rtl_access_pin_fn)(const void *p, int delta);
RTL_PRIVATE_API void rtl_access_set_pin(rtl_access_pin_fn fn);
RTL_PRIVATE_API void rtl_access_pin(const void *p, int delta);

/* After the kernel answered EFAULT on a buffer in the extra range that was
 * resolved (and pinned): set its pages to the protection its block's
 * record holds again if that allows the access, and say so (1) for the
 * caller to make the call once more. A block freed and taken again while
 * an epoch's call for the old one was on its way (or a free page an epoch
 * bridged, taken meanwhile) has a record that allows what its pages
 * refuse; a fault finds that out itself, a system call only by its
 * EFAULT. May run in a signal handler. */
typedef int (*rtl_access_repair_fn)(const void *p, size_t len, int write);
RTL_PRIVATE_API void rtl_access_set_repair(rtl_access_repair_fn fn);
RTL_PRIVATE_API int rtl_access_repair(const void *p, size_t len, int write);

/* That range; lo is 0 until it is set. */
struct rtl_access_extra {
	uintptr_t lo;
	size_t len;
	rtl_access_fn fn;
	_Atomic(rtl_access_repair_fn) repair;
};
extern struct rtl_access_extra rtl_access_extra;

/* Whether [p, p + len) overlaps [base, base + span). */
static inline int rtl_access_overlaps(uintptr_t p, size_t len, uintptr_t base,
                                      uintptr_t span)
{
	uintptr_t d = p - base;
	return d < span || d + len - 1 < span || (p < base && p + len > base);
}

/* Whether [p, p + len) may touch the views (or the extra range): the check
 * every wrapped call makes; false until rtl has started. */
static inline int rtl_access_in_views(const void *p, size_t len)
{
	return rtl_views_overlap((uintptr_t)p, len) ||
	       rtl_tag_overlaps((uintptr_t)p, len) ||
	       (len && rtl_access_extra.lo &&
	        rtl_access_overlaps((uintptr_t)p, len, rtl_access_extra.lo,
	                            rtl_access_extra.len));
}

/* Resolve an access of the kernel to [p, p + len), which may touch the
 * views or the extra range: the extra range's resolver, or the core's
 * (rtl_kernel_access: every region it covers whose protection forbids it
 * goes to its handler). Returns the address to hand the kernel, or NULL
 * with errno EFAULT. Async-signal-safe. */
RTL_PRIVATE_API void *rtl_access_resolve(const void *p, size_t len, int write);

/* The common case inline: memory outside the views goes through as is. */
static inline void *rtl_access(const void *p, size_t len, int write)
{
	if (!rtl_access_in_views(p, len))
		return (void *)p;
	return rtl_access_resolve(p, len, write);
}

#endif
