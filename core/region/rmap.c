/* Region map: radix table of pages, with 64-granule subtables for shared
 * pages. rtl_rmap_get runs in the trap handler: plain atomic loads only. */
#include "rmap.h"

#include <errno.h>
#include <stdatomic.h>

#include "meta.h"
#include "views.h"

#define PAGE_SHIFT 12
#define GRAN_SHIFT RTL_GRANULE_SHIFT
#define GRANS (1u << (PAGE_SHIFT - GRAN_SHIFT))
#define LEAF_BITS 12
#define LEAF_SIZE (1u << LEAF_BITS)
#define TAG_SUB ((uintptr_t)1)

typedef _Atomic uintptr_t entry_t;

struct subtable {
	_Atomic(struct rtl_region *) g[GRANS];
	unsigned used; /* granules mapped; writers only (define lock) */
};

static _Atomic(entry_t *) *top;
static uint64_t ntop;
static struct rtl_pool sub_pool = RTL_POOL_INIT(sizeof(struct subtable));

int rtl_rmap_init(uint64_t arena_size)
{
	uint64_t pages = arena_size >> PAGE_SHIFT;
	ntop = (pages + LEAF_SIZE - 1) >> LEAF_BITS;
	top = rtl_pages_alloc(ntop * sizeof(*top));
	return top ? 0 : -1;
}

static entry_t *leaf_of(uint64_t page, int create)
{
	entry_t *leaf = atomic_load_explicit(&top[page >> LEAF_BITS],
	                                     memory_order_acquire);
	if (!leaf && create) {
		leaf = rtl_pages_alloc(LEAF_SIZE * sizeof(entry_t));
		if (leaf)
			atomic_store_explicit(&top[page >> LEAF_BITS], leaf,
			                      memory_order_release);
	}
	return leaf;
}

struct rtl_region *rtl_rmap_get(uint64_t off)
{
	uint64_t page = off >> PAGE_SHIFT;
	entry_t *leaf;
	uintptr_t e;

	if (page >> LEAF_BITS >= ntop)
		return NULL;
	leaf = leaf_of(page, 0);
	if (!leaf)
		return NULL;
	e = atomic_load_explicit(&leaf[page & (LEAF_SIZE - 1)],
	                         memory_order_acquire);
	if (!(e & TAG_SUB))
		return (struct rtl_region *)e;
	return atomic_load_explicit(
	        &((struct subtable *)(e & ~TAG_SUB))->g[(off >> GRAN_SHIFT) & (GRANS - 1)],
	        memory_order_acquire);
}

/* Set granules [glo, ghi) of a shared page to r (or clear them, r NULL). */
static int set_granules(entry_t *slot, unsigned glo, unsigned ghi,
                        struct rtl_region *r)
{
	uintptr_t e = atomic_load_explicit(slot, memory_order_relaxed);
	struct subtable *sub;
	unsigned i;

	if (!e) {
		if (!r)
			return 0;
		sub = rtl_pool_get(&sub_pool);
		if (!sub)
			return -1;
		for (i = glo; i < ghi; i++)
			atomic_store_explicit(&sub->g[i], r, memory_order_relaxed);
		sub->used = ghi - glo;
		atomic_store_explicit(slot, (uintptr_t)sub | TAG_SUB,
		                      memory_order_release);
		return 0;
	}
	sub = (struct subtable *)(e & ~TAG_SUB);
	if (r) { /* insert fills free granules: define checked them */
		for (i = glo; i < ghi; i++)
			atomic_store_explicit(&sub->g[i], r, memory_order_release);
		sub->used += ghi - glo;
		return 0;
	}
	/* Remove counts what it clears: undoing an insert that failed part
	 * way clears granules that were never set. */
	for (i = glo; i < ghi; i++)
		if (atomic_load_explicit(&sub->g[i], memory_order_relaxed)) {
			atomic_store_explicit(&sub->g[i], NULL, memory_order_release);
			sub->used--;
		}
	if (sub->used)
		return 0;
	atomic_store_explicit(slot, 0, memory_order_release);
	rtl_pool_put(&sub_pool, sub); /* type-stable: readers may still look */
	return 0;
}

/* Walk the pages of [lo, hi) and map them to r (NULL: unmap). */
static int walk(uint64_t lo, uint64_t hi, struct rtl_region *r)
{
	uint64_t page;

	for (page = lo >> PAGE_SHIFT; page <= (hi - 1) >> PAGE_SHIFT; page++) {
		uint64_t pstart = page << PAGE_SHIFT, pend = pstart + (1u << PAGE_SHIFT);
		entry_t *leaf = leaf_of(page, r != NULL);
		entry_t *slot;

		if (!leaf) {
			if (r)
				return -1;
			continue;
		}
		slot = &leaf[page & (LEAF_SIZE - 1)];
		if (lo <= pstart && hi >= pend) {
			atomic_store_explicit(slot, (uintptr_t)r, memory_order_release);
			continue;
		}
		if (set_granules(slot,
		                 lo > pstart ? (unsigned)((lo - pstart) >> GRAN_SHIFT) : 0,
		                 hi < pend ? (unsigned)((hi - pstart) >> GRAN_SHIFT) : GRANS,
		                 r) < 0)
			return -1;
	}
	return 0;
}

int rtl_rmap_insert(struct rtl_region *r)
{
	if (walk(r->lo, r->lo + r->span, r) < 0) {
		walk(r->lo, r->lo + r->span, NULL);
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

void rtl_rmap_remove(struct rtl_region *r)
{
	walk(r->lo, r->lo + r->span, NULL);
}

int rtl_rmap_busy(uint64_t lo, uint64_t len)
{
	return rtl_rmap_next(lo & ~(uint64_t)((1u << GRAN_SHIFT) - 1), lo + len) <
	       lo + len;
}

/* The first granule of [off, end) that sub maps, off and end in one page;
 * end if none. One load per granule: a shared page's neighbours are
 * scanned in the subtable itself, not looked up one by one. */
static uint64_t next_in_sub(const struct subtable *sub, uint64_t off, uint64_t end)
{
	uint64_t page = off & ~(uint64_t)((1u << PAGE_SHIFT) - 1);

	for (unsigned i = (unsigned)((off - page) >> GRAN_SHIFT);
	     page + ((uint64_t)i << GRAN_SHIFT) < end && i < GRANS; i++)
		if (atomic_load_explicit(&sub->g[i], memory_order_acquire)) {
			uint64_t at = page + ((uint64_t)i << GRAN_SHIFT);

			return at > off ? at : off;
		}
	return end;
}

uint64_t rtl_rmap_next(uint64_t off, uint64_t end)
{
	while (off < end) {
		uint64_t page = off >> PAGE_SHIFT;
		uint64_t pend = (page + 1) << PAGE_SHIFT;
		entry_t *leaf;
		uintptr_t e;

		if (page >> LEAF_BITS >= ntop)
			return end;
		leaf = leaf_of(page, 0);
		if (!leaf) { /* a whole leaf of nothing */
			off = ((page >> LEAF_BITS) + 1) << (LEAF_BITS + PAGE_SHIFT);
			continue;
		}
		e = atomic_load_explicit(&leaf[page & (LEAF_SIZE - 1)],
		                         memory_order_acquire);
		if (e && !(e & TAG_SUB))
			return off;
		if (e) {
			uint64_t stop = end < pend ? end : pend;
			uint64_t at = next_in_sub((const struct subtable *)(e & ~TAG_SUB),
			                          off, stop);
			if (at < stop)
				return at;
		}
		off = pend;
	}
	return end;
}
