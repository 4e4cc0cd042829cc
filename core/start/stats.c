/* The core's counters, and region_stats and region_time_traps, which
 * read them and switch the trap handler's timing. */
#include "stats.h"

#include <errno.h>

#include "decoder.h"
#include "init.h"
#include "rtl/region.h"

struct rtl_stats rtl_stats;
_Atomic int rtl_time_traps;

int region_stats(struct region_stats *out)
{
	if (!out) {
		errno = EINVAL;
		return -1;
	}
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

void region_time_traps(int on)
{
	atomic_store_explicit(&rtl_time_traps, on != 0, memory_order_relaxed);
}
