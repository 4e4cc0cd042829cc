/* The rtl_ext_* functions: what other parts of rtl may ask of the core. */
#include "rtl/ext.h"

#include "core.h"
#include "decoder.h"
#include "extent.h"
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
