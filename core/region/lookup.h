/* The region lookup's body, inline for the trap's fast path (trap.c) and
 * used by rtl_region_find (regions.c): one definition. Lock-free and
 * async-signal-safe. */
#ifndef RTL_REGION_LOOKUP_H
#define RTL_REGION_LOOKUP_H

#include <stdatomic.h>

#include "core/region/region.h"
#include "core/region/rmap.h"
#include "core/region/views.h"

/* rtl_region_find for an address a in view (rtl_view_of(a) >= 0), inline
 * for the trap's fast path. The map may be stale and the record may be
 * changing under us: the generation, even and the same before and after
 * the span is read, says the answer held. */
static inline int rtl_region_find_in(uintptr_t a, int view, struct rtl_found *f)
{
	uint64_t off = a - rtl_view_base(view);

	for (int tries = 0; tries < 64; tries++) {
		struct rtl_region *r = rtl_rmap_get(off);
		uint32_t g1, g2;
		uint64_t lo, span;

		if (!r)
			return -1;
		g1 = atomic_load_explicit(&r->gen, memory_order_acquire);
		lo = r->lo;
		span = r->span;
		atomic_thread_fence(memory_order_acquire);
		g2 = atomic_load_explicit(&r->gen, memory_order_relaxed);
		if (g1 != g2 || (g1 & 1))
			continue; /* changing under us: look again */
		if (off - lo >= span)
			continue; /* stale map entry: look again */
		f->r = r;
		f->gen = g1;
		f->view = view;
		f->off = off;
		return 0;
	}
	return -1;
}

#endif
