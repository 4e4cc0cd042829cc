/* The wrappers' one question: where does the kernel access a buffer? Outside
 * rtl's memory, where the program said; in the views, where the core says
 * after resolving it like a trap (core/trap/kernel.c); in the extra range
 * (the preload's aliases), where its resolver says. May run in a signal
 * handler: no malloc, no locks. */
#include "interpose/access.h"

#include <errno.h>
#include <stdatomic.h>

#include "core/tag/fault.h"
#include "core/trap/kernel.h"

struct rtl_access_extra rtl_access_extra;
static _Atomic(rtl_access_pin_fn) pin_fn;

void rtl_access_set_pin(rtl_access_pin_fn fn)
{
	atomic_store(&pin_fn, fn);
}

void rtl_access_pin(const void *p, int delta)
{
	rtl_access_pin_fn fn = atomic_load(&pin_fn);

	if (fn)
		fn(p, delta);
}

void rtl_access_set_repair(rtl_access_repair_fn fn)
{
	atomic_store(&rtl_access_extra.repair, fn);
}

int rtl_access_repair(const void *p, size_t len, int write)
{
	uintptr_t a = (uintptr_t)p;
	rtl_access_repair_fn fn = atomic_load(&rtl_access_extra.repair);

	if (!fn || !rtl_access_extra.lo || a - rtl_access_extra.lo >= rtl_access_extra.len)
		return 0;
	return fn(p, len, write);
}

void rtl_access_set_range(void *lo, size_t len, rtl_access_fn fn)
{
	rtl_access_extra.fn = fn;
	rtl_access_extra.len = len;
	atomic_thread_fence(memory_order_release);
	rtl_access_extra.lo = (uintptr_t)lo;
}

void *rtl_access_resolve(const void *p, size_t len, int write)
{
	uintptr_t a = (uintptr_t)p, end = a + len;

	if (rtl_tag_overlaps(a, len))
		return rtl_tag_kernel_access(p, len, write);
	if (rtl_view_of(a) < 0 && rtl_access_extra.lo &&
	    a - rtl_access_extra.lo < rtl_access_extra.len) {
		if (end < a || end - rtl_access_extra.lo > rtl_access_extra.len) {
			errno = EFAULT;
			return NULL;
		}
		return rtl_access_extra.fn(p, len, write);
	}
	return rtl_kernel_access(p, len, write);
}
