/* Reserved extents, memory given back and protection in place ended over a
 * range: what the preload's placement code asks of the core. */
#include "core/region/placement.h"

#include <errno.h>

#include "core/region/extent.h"
#include "core/region/inplace.h"
#include "core/region/region.h"
#include "core/region/rmap.h"
#include "core/region/views.h"
#include "core/start/init.h"

size_t rtl_extent_bytes_in_use(void)
{
	size_t n;

	if (rtl_ensure_init() < 0)
		return 0;
	pthread_mutex_lock(&rtl_define_lock);
	n = rtl_extent_in_use();
	pthread_mutex_unlock(&rtl_define_lock);
	return n;
}

static void *reserve(size_t size, size_t *got, int pool)
{
	size_t block;
	int64_t off;

	if (rtl_ensure_init() < 0)
		return NULL;
	block = size ? rtl_extent_block(size) : 0;
	if (!block) {
		errno = size ? ENOMEM : EINVAL;
		return NULL;
	}
	pthread_mutex_lock(&rtl_define_lock);
	off = pool ? rtl_extent_alloc_top(block) : rtl_extent_alloc(block);
	if (off >= 0 && (pool ? rtl_views_reserve_top((uint64_t)off)
	                      : rtl_views_commit((uint64_t)off + block)) < 0) {
		rtl_extent_free((uint64_t)off, block);
		off = -1;
		errno = ENOMEM;
	}
	pthread_mutex_unlock(&rtl_define_lock);
	if (off < 0)
		return NULL;
	if (got)
		*got = block;
	return (void *)rtl_view_addr(RTL_VIEW_RW, (uint64_t)off);
}

void *rtl_reserve(size_t size, size_t *got)
{
	return reserve(size, got, 0);
}

void *rtl_reserve_pool(size_t size, size_t *got)
{
	return reserve(size, got, 1);
}

int rtl_unreserve(void *addr, size_t size)
{
	uintptr_t a = (uintptr_t)addr;
	size_t block;
	uint64_t off;

	if (rtl_ensure_init() < 0)
		return -1;
	block = rtl_extent_block(size);
	off = rtl_view_offset(a, RTL_VIEW_RW);
	if (rtl_view_of(a) != RTL_VIEW_RW || !block || (off & (block - 1))) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&rtl_define_lock);
	rtl_views_release(off, block);
	rtl_extent_free(off, block);
	pthread_mutex_unlock(&rtl_define_lock);
	return 0;
}

int rtl_release(void *addr, size_t len)
{
	uintptr_t a = (uintptr_t)addr;
	uint64_t off;

	if (!rtl_started() || rtl_view_of(a) != RTL_VIEW_RW) {
		errno = EINVAL;
		return -1;
	}
	off = rtl_view_offset(a, RTL_VIEW_RW);
	if (len > rtl_views.size - off) {
		errno = EINVAL;
		return -1;
	}
	rtl_views_release(off, len);
	return 0;
}

int rtl_in_place_end(void *addr, size_t len, void (*each)(void *data))
{
	uintptr_t a = (uintptr_t)addr;
	int view = rtl_view_of(a), n = 0;
	uint64_t off, stop;

	if (!rtl_started() || view < 0 || !len)
		return 0;
	off = rtl_view_offset(a, view);
	stop = off + len > rtl_views.size ? rtl_views.size : off + len;
	while ((off = rtl_rmap_next(off, stop)) < stop) {
		struct rtl_found f;
		void *data = NULL;
		int ended = 0;

		if (rtl_region_find(rtl_view_addr(view, off), &f) < 0) {
			off += RTL_GRANULE; /* freed meanwhile */
			continue;
		}
		/* From now on its traps move pointers: they decode. Here,
		 * not in the trap (the program's mprotect, not a handler). */
		if (rtl_region_home(f.r) == view)
			rtl_init_decoder();
		if (rtl_region_home(f.r) == view && rtl_region_lock(&f) == 0) {
			ended = rtl_inplace_end(f.r);
			data = atomic_load(&f.r->data);
			rtl_lock_release(&f.r->lock);
		}
		if (ended) {
			n++;
			if (each)
				each(data);
		}
		off = f.r->lo + f.r->span;
	}
	return n;
}
