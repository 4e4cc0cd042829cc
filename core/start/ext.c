/* The rtl_ext_* functions: what other parts of rtl may ask of the core. */
#include "rtl/ext.h"

#include <errno.h>

#include "access.h"
#include "decoder.h"
#include "extent.h"
#include "foreign.h"
#include "init.h"
#include "inplace.h"
#include "region.h"
#include "rmap.h"
#include "stats.h"
#include "trap.h"
#include "views.h"

int rtl_ext_init(void)
{
	return rtl_ensure_init();
}

int rtl_ext_stats(struct rtl_ext_stats *out)
{
	if (rtl_ensure_init() < 0)
		return -1;
	out->traps = atomic_load(&rtl_stats.traps);
	out->handler_calls = atomic_load(&rtl_stats.handler_calls);
	out->stale_traps = atomic_load(&rtl_stats.stale_traps);
	out->protects = atomic_load(&rtl_stats.protects);
	out->regions = atomic_load(&rtl_stats.regions);
	out->foreign = atomic_load(&rtl_stats.foreign);
	rtl_decode_cache_stats(&out->decode_hits, &out->decode_misses);
	out->trap_ns = atomic_load(&rtl_stats.trap_ns);
	out->syscall_buffers = atomic_load(&rtl_stats.syscall_buffers);
	out->in_place_protects = atomic_load(&rtl_stats.in_place_protects);
	out->in_place_failed = atomic_load(&rtl_stats.in_place_failed);
	return 0;
}

void rtl_ext_views(uintptr_t *base, size_t *size)
{
	if (rtl_ensure_init() < 0) {
		*base = 0;
		*size = 0;
		return;
	}
	*base = rtl_views.base;
	*size = rtl_views.size;
}

size_t rtl_ext_extent_in_use(void)
{
	size_t n;
	if (rtl_ensure_init() < 0)
		return 0;
	pthread_mutex_lock(&rtl_define_lock);
	n = rtl_extent_in_use();
	pthread_mutex_unlock(&rtl_define_lock);
	return n;
}

void *rtl_ext_reserve(size_t size, size_t *got)
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
	off = rtl_extent_alloc(block);
	pthread_mutex_unlock(&rtl_define_lock);
	if (off < 0)
		return NULL;
	if (got)
		*got = block;
	return (void *)(rtl_view_base(RTL_VIEW_RW) + (uint64_t)off);
}

int rtl_ext_unreserve(void *addr, size_t size)
{
	uintptr_t a = (uintptr_t)addr;
	size_t block;

	if (rtl_ensure_init() < 0)
		return -1;
	block = rtl_extent_block(size);
	if (rtl_view_of(a) != RTL_VIEW_RW || !block ||
	    ((a - rtl_view_base(RTL_VIEW_RW)) & (block - 1))) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&rtl_define_lock);
	rtl_views_release(a - rtl_view_base(RTL_VIEW_RW), block);
	rtl_extent_free(a - rtl_view_base(RTL_VIEW_RW), block);
	pthread_mutex_unlock(&rtl_define_lock);
	return 0;
}

int rtl_ext_lookup(const void *addr, void **base, size_t *size)
{
	struct rtl_found f;

	if (!atomic_load_explicit(&rtl_initialised, memory_order_acquire) ||
	    rtl_region_find((uintptr_t)addr, &f) < 0)
		return -1;
	if (base)
		*base = (void *)(rtl_view_base(f.view) + f.r->lo);
	if (size)
		*size = f.r->size;
	return 0;
}

int rtl_ext_started(void)
{
	return atomic_load_explicit(&rtl_initialised, memory_order_acquire);
}

int rtl_ext_release(void *addr, size_t len)
{
	uintptr_t a = (uintptr_t)addr, off;

	if (!rtl_ext_started() || rtl_view_of(a) != RTL_VIEW_RW) {
		errno = EINVAL;
		return -1;
	}
	off = a - rtl_view_base(RTL_VIEW_RW);
	if (len > rtl_views.size - off) {
		errno = EINVAL;
		return -1;
	}
	rtl_views_release(off, len);
	return 0;
}

int rtl_ext_region_find(const void *addr, struct rtl_ext_region *out)
{
	struct rtl_found f;
	uint64_t lo, size;

	if (!rtl_ext_started() || rtl_region_find((uintptr_t)addr, &f) < 0) {
		errno = ENOENT;
		return -1;
	}
	lo = f.r->lo;
	size = f.r->size;
	out->data = atomic_load_explicit(&f.r->data, memory_order_relaxed);
	atomic_thread_fence(memory_order_acquire);
	if (atomic_load_explicit(&f.r->gen, memory_order_relaxed) != f.gen) {
		errno = ENOENT; /* freed meanwhile */
		return -1;
	}
	out->start = (void *)(rtl_view_base(RTL_VIEW_RW) + lo);
	out->size = size;
	out->offset = f.off - lo;
	out->prot = rtl_view_prot(rtl_region_view_at(f.r, f.view));
	return 0;
}

int rtl_ext_region_in_place_end(void *addr, size_t len,
                                void (*each)(void *data))
{
	uintptr_t a = (uintptr_t)addr;
	int view = rtl_view_of(a), n = 0;
	uint64_t off, stop;

	if (!rtl_ext_started() || view < 0 || !len)
		return 0;
	off = a - rtl_view_base(view);
	stop = off + len > rtl_views.size ? rtl_views.size : off + len;
	while ((off = rtl_rmap_next(off, stop)) < stop) {
		struct rtl_found f;
		void *data = NULL;
		int ended = 0;

		if (rtl_region_find(rtl_view_base(view) + off, &f) < 0) {
			off += RTL_GRANULE; /* freed meanwhile */
			continue;
		}
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

int rtl_ext_region_in_place(void *addr, int prot)
{
	int view = rtl_prot_view(prot), rc;
	struct rtl_found f;

	if (rtl_ensure_init() < 0)
		return -1;
	if (view < 0) {
		errno = EINVAL;
		return -1;
	}
	if (rtl_region_find_locked(addr, &f) < 0)
		return -1;
	if (f.off != f.r->lo) {
		rtl_lock_release(&f.r->lock);
		errno = EINVAL;
		return -1;
	}
	rc = rtl_inplace_set(f.r, f.view, view);
	rtl_lock_release(&f.r->lock);
	return rc;
}

void rtl_ext_set_sigaction(rtl_ext_sigaction_fn fn)
{
	rtl_foreign_set_sigaction(fn);
}

int rtl_ext_sigaction(int sig, const struct sigaction *act,
                      struct sigaction *old)
{
	if (sig == SIGSEGV)
		return rtl_foreign_sigaction(act, old);
	return rtl_foreign_real_sigaction(sig, act, old);
}

void rtl_ext_set_fault_filter(rtl_ext_fault_filter_fn fn)
{
	rtl_foreign_set_filter(fn);
}

int rtl_ext_views_fd(void)
{
	return rtl_ext_started() ? rtl_views.fd : -1;
}

void rtl_ext_set_foreign_hook(rtl_ext_foreign_hook_fn fn)
{
	rtl_foreign_set_hook(fn);
}

void rtl_ext_set_death_hook(rtl_ext_death_hook_fn fn)
{
	atomic_store(&rtl_trap_death_hook, fn);
}

void rtl_ext_set_access_range(void *lo, size_t len, rtl_ext_access_fn fn)
{
	rtl_access_extra.fn = fn;
	rtl_access_extra.len = len;
	atomic_thread_fence(memory_order_release);
	rtl_access_extra.lo = (uintptr_t)lo;
}

void rtl_ext_time_traps(int on)
{
	atomic_store_explicit(&rtl_time_traps, on != 0, memory_order_relaxed);
}
