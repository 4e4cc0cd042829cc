/* region_find and region_view: which region holds an address, and the same
 * byte through another view. Lock-free and async-signal-safe: a region
 * handler may call them. */
#include <errno.h>

#include "core/region/placement.h"
#include "core/region/region.h"
#include "core/region/views.h"
#include "core/start/init.h"
#include "core/tag/api.h"
#include "core/tag/tagged.h"

int rtl_block_find(const void *addr, struct rtl_block *b)
{
	struct rtl_found f;
	uint64_t lo, size;
	void *data;

	if (!rtl_started() || rtl_region_find((uintptr_t)addr, &f) < 0) {
		errno = ENOENT;
		return -1;
	}
	lo = f.r->lo;
	size = f.r->size;
	data = atomic_load_explicit(&f.r->data, memory_order_relaxed);
	atomic_thread_fence(memory_order_acquire);
	if (atomic_load_explicit(&f.r->gen, memory_order_relaxed) != f.gen) {
		errno = ENOENT; /* freed meanwhile */
		return -1;
	}
	b->base = (void *)rtl_view_addr(f.view, lo);
	b->size = size;
	b->offset = f.off - lo;
	b->data = data;
	b->region = f.r;
	b->gen = f.gen;
	return 0;
}

int region_find(const void *addr, struct region_info *out)
{
	struct rtl_block b;
	const struct rtl_region *r;

	if (!out) {
		errno = EINVAL;
		return -1;
	}
	if (rtl_tag_owns((uintptr_t)addr))
		return rtl_tag_api_find(addr, out);
	if (rtl_block_find(addr, &b) < 0)
		return -1;
	r = b.region;
	out->base = b.base;
	out->size = b.size;
	out->offset = b.offset;
	out->prot = rtl_view_prot(rtl_region_view_at(r, rtl_view_of((uintptr_t)b.base)));
	out->data = b.data;
	return 0;
}

void *region_view(const void *addr, int prot)
{
	int view = rtl_prot_view(prot);

	if (view < 0 || !rtl_started() || rtl_view_of((uintptr_t)addr) < 0) {
		errno = EINVAL;
		return NULL;
	}
	return (void *)rtl_view_move((uintptr_t)addr, view);
}
