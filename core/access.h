/* Accesses made by the kernel on the program's behalf (system calls): the
 * kernel does not raise SIGSEGV for them, so rtl resolves them beforehand,
 * exactly as a trap would be resolved. */
#ifndef RTL_ACCESS_H
#define RTL_ACCESS_H

#include <stddef.h>
#include <stdint.h>

#include "views.h"

/* Whether [p, p + len) may touch the views: the one check every wrapped
 * call makes; false until rtl has started. */
static inline int rtl_access_in_views(const void *p, size_t len)
{
	uintptr_t span = RTL_NVIEWS * rtl_views.size;
	uintptr_t d = (uintptr_t)p - rtl_views.base;
	return len && (d < span || d + len - 1 < span ||
	               ((uintptr_t)p < rtl_views.base &&
	                (uintptr_t)p + len > rtl_views.base));
}

/* Resolve an access of the kernel to [p, p + len): every region it covers
 * whose protection forbids it goes to its handler (stale pointers are healed
 * without one). Returns the address to hand the kernel (the same bytes in a
 * view that allows the access), or NULL with errno EFAULT if a handler did
 * not grant, or the range is not wholly in one view. Async-signal-safe. */
void *rtl_access_resolve(const void *p, size_t len, int write);

/* The common case inline: memory outside the views goes through as is. */
static inline void *rtl_access(const void *p, size_t len, int write)
{
	if (!rtl_access_in_views(p, len))
		return (void *)p;
	return rtl_access_resolve(p, len, write);
}

#endif
