/* Region records and the shard locks that serialise defining and freeing
 * them.
 *
 * The pages of the views hash to RTL_SHARDS shards, a page to one. Whoever
 * defines or frees a region holds the locks of the shards its pages hash
 * to (rtl_shards_of), so that two threads defining regions on different
 * pages (the preload's blocks, each thread in its own arena) do not wait
 * for each other; overlap checks, the region map and the in-place checks
 * only ever look at the pages of the range they lock. Each shard keeps the
 * spare records and the live count of the regions that start on its pages.
 *
 * Lock order: rtl_define_lock (extents, tracked regions), then shards in
 * ascending order, then rtl_registry_lock, then a region's lock. Never
 * taken on the trap path. */
#ifndef RTL_RECORDS_H
#define RTL_RECORDS_H

#include <stdint.h>

#include "core/region/region.h"
#include "core/util/mutex.h"
#include "core/util/page.h"

/* Many: each thread under the preload has a page of blocks open per size
 * class, so two threads' open pages meet on the same shard often with few
 * shards (64 made two threads' defines wait on each other as often as not). */
#define RTL_SHARDS 1024

/* The shards first, first + 1, ... (modulo RTL_SHARDS), n of them. */
typedef struct {
	uint32_t first, n;
} rtl_shards_t;
#define RTL_SHARDS_ALL ((rtl_shards_t){ 0, RTL_SHARDS })

/* The shard of the page offset off lies on. */
static inline unsigned rtl_shard_index(uint64_t off)
{
	return (unsigned)((off >> rtl_page_shift()) % RTL_SHARDS);
}

/* The shards of the pages [lo, lo + len) lies on (len > 0). */
static inline rtl_shards_t rtl_shards_of(uint64_t lo, uint64_t len)
{
	unsigned shift = rtl_page_shift();
	uint64_t pages = ((lo + len - 1) >> shift) - (lo >> shift) + 1;

	return (rtl_shards_t){ rtl_shard_index(lo),
		               pages < RTL_SHARDS ? (uint32_t)pages : RTL_SHARDS };
}

/* The shard locks, a cache line each. */
struct rtl_shard_lock {
	struct rtl_mutex mu;
} __attribute__((aligned(64)));
extern struct rtl_shard_lock rtl_shard_locks[RTL_SHARDS];

void rtl_shards_lock_run(rtl_shards_t s);
void rtl_shards_unlock_run(rtl_shards_t s);

/* Most regions lie on one page: one lock, inline. */
static inline void rtl_shards_lock(rtl_shards_t s)
{
	if (s.n == 1)
		rtl_mutex_lock(&rtl_shard_locks[s.first].mu);
	else
		rtl_shards_lock_run(s);
}

static inline void rtl_shards_unlock(rtl_shards_t s)
{
	if (s.n == 1)
		rtl_mutex_unlock(&rtl_shard_locks[s.first].mu);
	else
		rtl_shards_unlock_run(s);
}

/* A new record for [lo, lo + span), mapped, with its handler and data set
 * before anyone can find it; NULL with errno EEXIST (some of the range is
 * another region's) or ENOMEM. The caller holds rtl_shards_of(lo, span). */
struct rtl_region *rtl_region_create(uint64_t lo, uint64_t size, uint64_t span,
                                     uint32_t flags, int view,
                                     region_handler_t h, void *data);
/* Unmap r and keep its record for reuse; the same shards held. */
void rtl_region_destroy(struct rtl_region *r);
/* Live regions, summed over the shards (region_stats). */
uint64_t rtl_regions_live(void);
/* In a forked child: every live record's lock reset, its in-place pages
 * copied (fork.c; every shard is held). Walks the record pool: the live
 * records keep no list, whose links cost a free two cold cache lines. */
void rtl_regions_after_fork(void);

#endif
