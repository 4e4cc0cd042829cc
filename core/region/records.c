/* Region records and the shard locks (records.h). */
#include "core/region/records.h"

#include <stdlib.h>

#include "core/region/inplace.h"
#include "core/region/meta.h"
#include "core/region/rmap.h"
#include "core/util/page.h"
#include "core/util/say.h"

/* Spare records a shard keeps; more go to the common list, so that records
 * freed on some shards serve regions defined on others. */
#define SPARE_MAX 16

/* What a shard's lock (records.h) guards. */
struct shard {
	struct rtl_region *spare; /* freed records; they keep their generation */
	unsigned nspare;
	/* Live regions, written under the lock, read by region_stats:
	 * no atomic read-modify-write on the define path (a lock add is as
	 * dear as the rest of a record's setup). */
	_Atomic uint64_t nlive;
} __attribute__((aligned(64)));

/* Zero is a free rtl_mutex and an empty shard: in .bss. */
struct rtl_shard_lock rtl_shard_locks[RTL_SHARDS];
static struct shard shards[RTL_SHARDS];

static struct rtl_pool record_pool = RTL_POOL_INIT(sizeof(struct rtl_region));
static pthread_mutex_t common_mu = PTHREAD_MUTEX_INITIALIZER;
static struct rtl_region *common_spare;

/* Ascending, the lock order: a run that wraps is taken from shard 0. */
void rtl_shards_lock_run(rtl_shards_t s)
{
	uint32_t end = s.first + s.n;

	for (uint32_t i = RTL_SHARDS; i < end; i++)
		rtl_mutex_lock(&rtl_shard_locks[i - RTL_SHARDS].mu);
	for (uint32_t i = s.first; i < end && i < RTL_SHARDS; i++)
		rtl_mutex_lock(&rtl_shard_locks[i].mu);
}

void rtl_shards_unlock_run(rtl_shards_t s)
{
	for (uint32_t i = 0; i < s.n; i++)
		rtl_mutex_unlock(&rtl_shard_locks[(s.first + i) % RTL_SHARDS].mu);
}

static struct shard *home_of(uint64_t lo)
{
	return &shards[rtl_shard_index(lo)];
}

static void count_live(struct shard *sh, uint64_t delta)
{
	atomic_store_explicit(&sh->nlive,
	                      atomic_load_explicit(&sh->nlive, memory_order_relaxed) + delta,
	                      memory_order_relaxed);
}

/* A record: the shard's spare, the common list's, or a new one. */
static struct rtl_region *record_get(struct shard *sh)
{
	struct rtl_region *r = sh->spare;

	if (r) {
		sh->spare = r->next;
		sh->nspare--;
		return r;
	}
	pthread_mutex_lock(&common_mu);
	r = common_spare;
	if (r)
		common_spare = r->next;
	pthread_mutex_unlock(&common_mu);
	return r ? r : rtl_pool_get(&record_pool);
}

static void record_put(struct shard *sh, struct rtl_region *r)
{
	if (sh->nspare < SPARE_MAX) {
		r->next = sh->spare;
		sh->spare = r;
		sh->nspare++;
		return;
	}
	pthread_mutex_lock(&common_mu);
	r->next = common_spare;
	common_spare = r;
	pthread_mutex_unlock(&common_mu);
}

struct rtl_region *rtl_region_create(uint64_t lo, uint64_t size, uint64_t span,
                                     uint32_t flags, int view,
                                     region_handler_t h, void *data)
{
	struct shard *sh = home_of(lo);
	struct rtl_region *r = record_get(sh);

	if (!r)
		return NULL;
	atomic_fetch_add_explicit(&r->gen, 1, memory_order_relaxed); /* odd */
	atomic_thread_fence(memory_order_release);
	r->lo = lo;
	r->size = size;
	r->span = span;
	r->flags = flags;
	rtl_lock_reset(&r->lock);
	/* Relaxed: the map's release store and the even generation publish
	 * them (a seq_cst store is a fence each on x86, 5 of them here). */
	atomic_store_explicit(&r->view, view, memory_order_relaxed);
	atomic_store_explicit(&r->mixed, 0, memory_order_relaxed);
	r->bptrs = NULL;
	atomic_store_explicit(&r->handler, h, memory_order_relaxed);
	atomic_store_explicit(&r->data, data, memory_order_relaxed);
	atomic_store_explicit(&r->traps, 0, memory_order_relaxed);
	r->ext = NULL;
	if (rtl_rmap_insert(r) < 0) {
		atomic_fetch_add_explicit(&r->gen, 1, memory_order_release);
		record_put(sh, r);
		return NULL;
	}
	/* No list of live records: a forked child walks the pool. */
	r->live = 1;
	atomic_fetch_add_explicit(&r->gen, 1, memory_order_release); /* even */
	count_live(sh, 1);
	return r;
}

void rtl_region_destroy(struct rtl_region *r)
{
	struct shard *sh = home_of(r->lo);

	/* Taking the lock waits out a region_protect in flight. */
	rtl_lock_acquire(&r->lock);
	atomic_fetch_add_explicit(&r->gen, 1, memory_order_relaxed); /* odd */
	atomic_thread_fence(memory_order_release);
	rtl_inplace_clear(r);
	rtl_lock_release(&r->lock);
	rtl_rmap_remove(r);
	r->live = 0;
	atomic_fetch_add_explicit(&r->gen, 1, memory_order_release); /* even */
	record_put(sh, r);
	count_live(sh, (uint64_t)-1);
}

uint64_t rtl_regions_live(void)
{
	uint64_t n = 0;

	for (int i = 0; i < RTL_SHARDS; i++)
		n += atomic_load_explicit(&shards[i].nlive, memory_order_relaxed);
	return n;
}

static void after_fork(void *obj)
{
	struct rtl_region *r = obj;

	if (!r->live)
		return;
	rtl_lock_reset(&r->lock);
	if (rtl_inplace_after_fork(r) < 0) {
		/* Sharing memory with the parent would be silent corruption
		 * (as in fork.c). */
		static const char msg[] = "rtl: fork: cannot protect a region in "
		                          "place in the child; aborting the child\n";
		rtl_say(msg, sizeof(msg) - 1);
		abort();
	}
}

void rtl_regions_after_fork(void)
{
	rtl_pool_each(&record_pool, after_fork);
}
