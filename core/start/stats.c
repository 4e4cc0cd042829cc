/* The core's counters, and region_stats and region_time_traps, which
 * read them and switch the trap handler's timing. */
#include "core/start/stats.h"

#include <errno.h>

#include "core/region/records.h"
#include "core/start/init.h"
#include "decoder/decoder.h"
#include <rtl/region.h>

struct rtl_stats rtl_stats[RTL_STATS_SHARDS];
__thread struct rtl_stats *rtl_stats_own __attribute__((tls_model("initial-exec")));
_Atomic unsigned rtl_stats_next;
_Atomic int rtl_time_traps;

uint64_t rtl_stats_sum(size_t offset)
{
	uint64_t sum = 0;

	for (int i = 0; i < RTL_STATS_SHARDS; i++)
		sum += atomic_load_explicit((_Atomic uint64_t *)((char *)&rtl_stats[i] + offset),
		                            memory_order_relaxed);
	return sum;
}

int region_stats(struct region_stats *out)
{
	uint64_t fast;

	if (!out) {
		errno = EINVAL;
		return -1;
	}
	if (rtl_ensure_init() < 0)
		return -1;
	fast = RTL_STATS_SUM(fast_traps);
	out->traps = RTL_STATS_SUM(traps) + fast;
	out->handler_calls = RTL_STATS_SUM(handler_calls) + fast;
	out->stale_traps = RTL_STATS_SUM(stale_traps);
	out->protects = RTL_STATS_SUM(protects);
	out->regions = rtl_regions_live();
	out->foreign = RTL_STATS_SUM(foreign);
	rtl_decode_cache_stats(&out->decode_hits, &out->decode_misses);
	out->decode_hits += fast;
	out->trap_ns = RTL_STATS_SUM(trap_ns);
	out->syscall_buffers = RTL_STATS_SUM(syscall_buffers);
	out->in_place_protects = RTL_STATS_SUM(in_place_protects);
	out->in_place_failed = RTL_STATS_SUM(in_place_failed);
	return 0;
}

void region_time_traps(int on)
{
	atomic_store_explicit(&rtl_time_traps, on != 0, memory_order_relaxed);
}
