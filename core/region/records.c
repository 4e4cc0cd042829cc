/* Region records and the shard locks (records.h). */
#include "records.h"

#include <stdlib.h>

#include "inplace.h"
#include "meta.h"
#include "page.h"
#include "rmap.h"
#include "say.h"
#include "stats.h"

/* Spare records a shard keeps; more go to the common list, so that records
 * freed on some shards serve regions defined on others. */
#define SPARE_MAX 64

struct shard {
	/* Adaptive: its sections are short, and a waiter mostly meets the
	 * holder leaving. */
	pthread_mutex_t mu;
	struct rtl_region *live;  /* regions starting on the shard's pages */
	struct rtl_region *spare; /* freed records; they keep their generation */
	unsigned nspare;
} __attribute__((aligned(64)));

#define SHARD_INIT { .mu = PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP }
#define SHARDS_8 SHARD_INIT, SHARD_INIT, SHARD_INIT, SHARD_INIT, \
                 SHARD_INIT, SHARD_INIT, SHARD_INIT, SHARD_INIT
_Static_assert(RTL_SHARDS == 64, "the initialiser below has 64");
static struct shard shards[RTL_SHARDS] = { SHARDS_8, SHARDS_8, SHARDS_8, SHARDS_8,
	                                   SHARDS_8, SHARDS_8, SHARDS_8, SHARDS_8 };

static struct rtl_pool record_pool = RTL_POOL_INIT(sizeof(struct rtl_region));
static pthread_mutex_t common_mu = PTHREAD_MUTEX_INITIALIZER;
static struct rtl_region *common_spare;

rtl_shards_t rtl_shards_of(uint64_t lo, uint64_t len)
{
	unsigned shift = rtl_page_shift();
	uint64_t first = lo >> shift, n = ((lo + len - 1) >> shift) - first + 1;
	rtl_shards_t run;
	unsigned at = (unsigned)(first % RTL_SHARDS);

	if (n >= RTL_SHARDS)
		return RTL_SHARDS_ALL;
	run = ((rtl_shards_t)1 << n) - 1;
	return at ? run << at | run >> (RTL_SHARDS - at) : run;
}

void rtl_shards_lock(rtl_shards_t s)
{
	for (; s; s &= s - 1) /* ascending: the lock order */
		pthread_mutex_lock(&shards[__builtin_ctzll(s)].mu);
}

void rtl_shards_unlock(rtl_shards_t s)
{
	for (; s; s &= s - 1)
		pthread_mutex_unlock(&shards[__builtin_ctzll(s)].mu);
}

static struct shard *home_of(uint64_t lo)
{
	return &shards[rtl_shard_index(lo)];
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

struct rtl_region *rtl_region_create(uint64_t lo, uint64_t size,
                                     uint64_t span, uint32_t flags, int view)
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
	atomic_store(&r->view, view);
	atomic_store(&r->mixed, 0);
	r->bptrs = NULL;
	atomic_store(&r->handler, NULL);
	atomic_store(&r->data, NULL);
	atomic_store(&r->traps, 0);
	r->ext = NULL;
	if (rtl_rmap_insert(r) < 0) {
		atomic_fetch_add_explicit(&r->gen, 1, memory_order_release);
		record_put(sh, r);
		return NULL;
	}
	r->prev = NULL;
	r->next = sh->live;
	if (sh->live)
		sh->live->prev = r;
	sh->live = r;
	atomic_fetch_add_explicit(&r->gen, 1, memory_order_release); /* even */
	RTL_COUNT(regions);
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
	if (r->prev)
		r->prev->next = r->next;
	else
		sh->live = r->next;
	if (r->next)
		r->next->prev = r->prev;
	atomic_fetch_add_explicit(&r->gen, 1, memory_order_release); /* even */
	record_put(sh, r);
	RTL_ADD(regions, (uint64_t)-1);
}

void rtl_regions_after_fork(void)
{
	for (int i = 0; i < RTL_SHARDS; i++)
		for (struct rtl_region *r = shards[i].live; r; r = r->next) {
			rtl_lock_reset(&r->lock);
			if (rtl_inplace_after_fork(r) < 0) {
				/* Sharing memory with the parent would be
				 * silent corruption (as in fork.c). */
				static const char msg[] = "rtl: fork: cannot protect a "
				                          "region in place in the child; aborting the child\n";
				rtl_say(msg, sizeof(msg) - 1);
				abort();
			}
		}
}
