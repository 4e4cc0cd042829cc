/* The kernel's accesses on the program's behalf (system calls), resolved
 * before the call as the trap path resolves a fault: a stale pointer is
 * healed, else the region's handler runs, and the call goes ahead only if
 * the access is then allowed. May run in a signal handler (read and write
 * are async-signal-safe): no malloc, no locks beyond the region spin locks
 * the handler's own calls take. The wrappers themselves live in interpose/. */
#include "core/trap/kernel.h"

#include <errno.h>

#include "core/dirty/dirty.h"
#include "core/region/region.h"
#include "core/region/rmap.h"
#include "core/region/views.h"
#include "core/start/stats.h"

/* One region the range covers: 0 if the access may proceed. */
static int resolve_region(struct rtl_found *f, uintptr_t first, int write)
{
	struct rtl_region *r = f->r;
	uintptr_t base = rtl_view_base(f->view) + r->lo;
	region_handler_t h;
	int mixed = atomic_load(&r->mixed);

	if (rtl_view_allows(rtl_region_view_at(r, f->view), write))
		return 0;
	/* A tracked region's twin before the kernel writes, as before a
	 * handler; with no handler rtl grants the write itself. */
	if (write)
		rtl_dirty_write_trap(f);
	if (!mixed && rtl_view_allows(atomic_load(&r->view), write)) {
		RTL_COUNT(stale_traps);
		return 0;
	}
	h = atomic_load(&r->handler);
	if (!h)
		h = atomic_load(&rtl_default_handler);
	if (!h)
		return -1;
	rtl_trap_t info = {
		.addr = (void *)first,
		.base = (void *)base,
		.size = r->size,
		.offset = first - base,
		.write = write,
		.prot = rtl_view_prot(mixed ? f->view : atomic_load(&r->view)),
		.data = atomic_load(&r->data),
	};
	RTL_COUNT(traps);
	RTL_COUNT(handler_calls);
	atomic_fetch_add_explicit(&r->traps, 1, memory_order_relaxed);
	h(&info);
	/* A mixed region has no protection to consult: refuse unless the
	 * handler settled it with region_protect. */
	return !atomic_load(&r->mixed) &&
	                       rtl_view_allows(atomic_load(&r->view), write)
	               ? 0
	               : -1;
}

void *rtl_kernel_access(const void *p, size_t len, int write)
{
	uintptr_t a = (uintptr_t)p, end = a + len;
	int view = rtl_view_of(a);
	uint64_t off, stop;

	if (view < 0 || rtl_view_of(end - 1) != view || end < a) {
		errno = EFAULT; /* straddles the views' edge: no kernel address */
		return NULL;
	}
	RTL_COUNT(syscall_buffers);
	off = a - rtl_view_base(view);
	stop = off + len;
	while (off < stop) {
		struct rtl_found f;
		uint64_t next = rtl_rmap_next(off, stop);

		if (next >= stop)
			break;
		if (rtl_region_find(rtl_view_base(view) + next, &f) < 0) {
			off = next + RTL_GRANULE; /* freed under us: look further on */
			continue;
		}
		if (resolve_region(&f, rtl_view_base(view) + (next > off ? next : off),
		                   write) < 0) {
			errno = EFAULT;
			return NULL;
		}
		off = f.r->lo + f.r->span;
	}
	/* All covered regions allow it now; the kernel gets the RW view, which
	 * maps the same bytes. */
	return (void *)(a - rtl_view_base(view) + rtl_view_base(RTL_VIEW_RW));
}
