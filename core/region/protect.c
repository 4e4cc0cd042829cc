/* region_protect and region_protect_ptr (MAP2): rewrite pointers, never call
 * the kernel. Both may run inside a region handler, that is, in a signal
 * handler: only the region's spin lock is taken. */
#include <errno.h>

#include "core/dirty/dirty.h"
#include "core/region/inplace.h"
#include "core/region/pointers.h"
#include "core/region/protect.h"
#include "core/region/views.h"
#include "core/start/init.h"
#include "core/start/stats.h"
#include "core/tag/api.h"
#include "core/tag/tagged.h"
#include "core/trap/trap.h"

void rtl_protect_locked(struct rtl_region *r, int view)
{
	if (view == RTL_VIEW_RW)
		rtl_dirty_raise(r); /* a tracked region's twin, before writes */
	/* In place: the pages change, no pointer moves (inplace.c). */
	if (rtl_region_home(r) >= 0 && rtl_inplace_protect(r, view) == 0) {
		rtl_trap_granted_in_place(r, view);
		return;
	}
	atomic_store_explicit(&r->view, view, memory_order_relaxed);
	atomic_store_explicit(&r->mixed, 0, memory_order_relaxed);
	rtl_ptrs_swizzle(r, view);
	rtl_trap_move_registers(r, -1, view);
}

int region_protect(void *addr, int prot)
{
	int view = rtl_prot_view(prot);
	struct rtl_found f;

	if (rtl_ensure_init() < 0)
		return -1;
	if (view < 0 || !addr) {
		errno = EINVAL;
		return -1;
	}
	if (rtl_tag_owns((uintptr_t)addr))
		return rtl_tag_api_protect(addr, prot);
	/* In a handler, the address is usually in the region that trapped:
	 * no need to look it up again (the lock checks it is still live). */
	if (rtl_trap_current_region((uintptr_t)addr, &f) < 0 &&
	    rtl_region_find((uintptr_t)addr, &f) < 0) {
		errno = ENOENT;
		return -1;
	}
	if (rtl_region_lock(&f) < 0)
		return -1;
	rtl_protect_locked(f.r, view);
	rtl_lock_release(&f.r->lock);
	RTL_COUNT(protects);
	return 0;
}

int region_protect_ptr(void *pptr, int prot)
{
	int view = rtl_prot_view(prot), from;
	struct rtl_found f;
	uintptr_t v;

	if (rtl_ensure_init() < 0)
		return -1;
	if (view < 0 || !pptr) {
		errno = EINVAL;
		return -1;
	}
	/* The variable is used directly, unlike the registering calls'
	 * (pointers.c): MAP2 costs no system call. */
	v = (uintptr_t)__atomic_load_n((void **)pptr, __ATOMIC_RELAXED);
	if (rtl_tag_owns(v)) { /* one pointer, one protection: no MAP2 */
		errno = EINVAL;
		return -1;
	}
	if (rtl_region_find(v, &f) < 0) {
		errno = ENOENT;
		return -1;
	}
	if (rtl_region_lock(&f) < 0)
		return -1;
	if (rtl_region_home(f.r) >= 0) {
		/* Its pointers all live in the home view. */
		rtl_lock_release(&f.r->lock);
		errno = EINVAL;
		return -1;
	}
	from = f.view;
	if (view == RTL_VIEW_RW)
		rtl_dirty_raise(f.r);
	__atomic_store_n((void **)pptr, (void *)(rtl_view_base(view) + f.off),
	                 __ATOMIC_RELAXED);
	if (view != atomic_load_explicit(&f.r->view, memory_order_relaxed))
		atomic_store_explicit(&f.r->mixed, 1, memory_order_relaxed);
	rtl_trap_move_registers(f.r, from, view);
	rtl_lock_release(&f.r->lock);
	return 0;
}
