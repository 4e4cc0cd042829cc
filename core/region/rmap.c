/* Region map: radix table of pages, with 64-granule subtables for shared
 * pages. rtl_rmap_get runs in the trap handler: plain atomic loads only. */
#include "core/region/rmap.h"

#include <errno.h>
#include <stdatomic.h>
#include <sys/mman.h>

#include "core/region/meta.h"
#include "core/region/records.h"
#include "core/region/views.h"

#define PAGE_SHIFT 12
#define GRAN_SHIFT RTL_GRANULE_SHIFT
#define GRANS (1u << (PAGE_SHIFT - GRAN_SHIFT))
#define LEAF_BITS 12
#define LEAF_SIZE (1u << LEAF_BITS)
#define TAG_SUB ((uintptr_t)1)

typedef _Atomic uintptr_t entry_t;

/* A page's place in a leaf: its entry, and where the record of a region on
 * it probably lies when the page is shared (hint below). One line of the
 * leaf holds four pages' slots. */
struct slot {
	entry_t e;
	_Atomic uint64_t hint;
};

/* A shared page. Each region on it is there once, however many granules
 * it covers: a region that starts on the page at its start granule (a bit
 * in starts, its record in g), one that starts on an earlier page as the
 * head. A granule belongs to the nearest start at or below it, or to the
 * head without one; mapped says which granules belong to a region at all.
 * Defining or freeing a region on a shared page is a few stores whatever
 * its size, and a scan for the next mapped granule is one word. Readers
 * take mapped (acquire), then starts and one record pointer: mapped, starts
 * and head share the first cache line; a lookup at a start granule loads
 * its pointer beside them, one elsewhere loads it after. */
struct subtable {
	_Atomic uint64_t mapped;
	_Atomic uint64_t starts; /* of those mapped */
	_Atomic(struct rtl_region *) head;
	_Atomic(struct rtl_region *) g[GRANS]; /* read at start granules only */
};
_Static_assert(GRANS == 64, "one bit per granule of a page in a word");

/* Bits [lo, hi) of a word, 0 <= lo <= hi <= 64. */
static inline uint64_t bits(unsigned lo, unsigned hi)
{
	uint64_t below_hi = hi >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << hi) - 1;

	return below_hi & ~(((uint64_t)1 << lo) - 1);
}

/* ---- record hints ----
 *
 * On a shared page the record's address is in the subtable, so a lookup
 * would wait for two misses one after the other: the subtable's line, then
 * the record's. Regions defined one after another on a page (an array of
 * objects, a slab of blocks) have records one after another in the pool, a
 * fixed step apart; the page's slot keeps that progression, learnt from the
 * first two regions that start on it, and a lookup prefetches the record it
 * predicts while it loads the subtable. The hint only ever prefetches: a
 * wrong or stale one (a region freed, its record reused) costs a wasted
 * line, never a wrong answer. Written under the page's shard lock, read
 * with relaxed loads.
 *
 * Bits: 0-5 the first start granule g0; 6-11 the step in granules between
 * starts (1-63; 0: one start seen); 12-21 the step between their records
 * in half lines (records are 96 bytes, on half lines), signed; 22-63 the
 * first record's address in half lines (addresses below 2^47). 0: no
 * hint. */
#define HINT_GSTEP_SHIFT 6
#define HINT_GSTEP_MASK 0x3f
#define HINT_RSTEP_SHIFT 12
#define HINT_RSTEP_BITS 10
#define HINT_REC_SHIFT 22
#define HINT_RSTEP_MAX 511 /* half lines, either way */
#define UNIT_SHIFT 5       /* a half line: records' alignment */

static uint64_t hint_first(const struct rtl_region *r, unsigned g0)
{
	uintptr_t a = (uintptr_t)r;

	if (a >> 47 || a & ((1u << UNIT_SHIFT) - 1))
		return 0;
	return (uint64_t)(a >> UNIT_SHIFT) << HINT_REC_SHIFT | g0;
}

/* r starts at granule g of a page whose hint is h: h with the step learnt
 * from its second start, a new hint on an empty page, or h as it was. */
static uint64_t hint_learn(uint64_t h, const struct rtl_region *r, unsigned g)
{
	unsigned g0 = h & (GRANS - 1);
	int64_t lines;

	if (!h)
		return hint_first(r, g);
	if (h >> HINT_GSTEP_SHIFT & HINT_GSTEP_MASK || g <= g0)
		return h;
	lines = ((int64_t)(uintptr_t)r >> UNIT_SHIFT) - (int64_t)(h >> HINT_REC_SHIFT);
	if (lines < -HINT_RSTEP_MAX || lines > HINT_RSTEP_MAX ||
	    ((uintptr_t)r & ((1u << UNIT_SHIFT) - 1)))
		return h;
	return h | (uint64_t)(g - g0) << HINT_GSTEP_SHIFT |
	       ((uint64_t)lines & ((1u << HINT_RSTEP_BITS) - 1)) << HINT_RSTEP_SHIFT;
}

/* floor(x / k) = x * step_inverse[k] >> 16 for x < 64, 0 < k < 64; 0 for
 * k = 0 (one start seen: the first record). Filled by rtl_rmap_init. */
static uint32_t step_inverse[HINT_GSTEP_MASK + 1];

/* The record that hint h predicts for granule i, or 0. */
static inline uintptr_t hint_predict(uint64_t h, unsigned i)
{
	unsigned g0 = h & (GRANS - 1), gstep = h >> HINT_GSTEP_SHIFT & HINT_GSTEP_MASK;
	int64_t rstep = (int64_t)(h << (64 - HINT_REC_SHIFT)) >> (64 - HINT_RSTEP_BITS);
	uintptr_t rec = (uintptr_t)(h >> HINT_REC_SHIFT) << UNIT_SHIFT;
	unsigned n;

	if (!h || i < g0)
		return 0;
	n = (i - g0) * step_inverse[gstep] >> 16;
	return rec + (uintptr_t)(n * rstep * (1 << UNIT_SHIFT));
}

static _Atomic(struct slot *) *top;
static uint64_t ntop;
static struct rtl_pool sub_pool = RTL_POOL_INIT(sizeof(struct subtable));

/* Subtables freed on each shard's pages, a few kept for its next shared
 * page: the pool's lock is one all threads would share. Under the shard's
 * lock, which every writer of those pages holds. */
#define SUB_KEEP 4
static struct sub_cache {
	struct subtable *sub[SUB_KEEP];
	unsigned n;
} __attribute__((aligned(64))) sub_cache[RTL_SHARDS];

static struct subtable *sub_get(uint64_t off)
{
	struct sub_cache *c = &sub_cache[rtl_shard_index(off)];

	return c->n ? c->sub[--c->n] : rtl_pool_get(&sub_pool);
}

/* A subtable no page uses: readers may still look (type-stable). */
static void sub_put(uint64_t off, struct subtable *sub)
{
	struct sub_cache *c = &sub_cache[rtl_shard_index(off)];

	if (c->n < SUB_KEEP)
		c->sub[c->n++] = sub;
	else
		rtl_pool_put(&sub_pool, sub);
}

int rtl_rmap_init(uint64_t arena_size)
{
	uint64_t pages = arena_size >> PAGE_SHIFT;

	for (unsigned k = 1; k <= HINT_GSTEP_MASK; k++)
		step_inverse[k] = (65536 + k - 1) / k;
	ntop = (pages + LEAF_SIZE - 1) >> LEAF_BITS;
	top = rtl_pages_alloc(ntop * sizeof(*top));
	return top ? 0 : -1;
}

/* A leaf that does not exist yet: out of line, once per 16 MiB. */
static __attribute__((noinline)) struct slot *leaf_new(uint64_t page)
{
	/* Writers of different shards may meet here: one leaf wins. */
	struct slot *mine = rtl_pages_alloc(LEAF_SIZE * sizeof(struct slot)), *leaf = NULL;

	if (!mine)
		return NULL;
	if (atomic_compare_exchange_strong_explicit(&top[page >> LEAF_BITS], &leaf,
	                                            mine, memory_order_acq_rel,
	                                            memory_order_acquire))
		return mine;
	munmap(mine, LEAF_SIZE * sizeof(struct slot));
	return leaf;
}

static inline struct slot *leaf_of(uint64_t page, int create)
{
	struct slot *leaf = atomic_load_explicit(&top[page >> LEAF_BITS],
	                                         memory_order_acquire);

	return leaf || !create ? leaf : leaf_new(page);
}

/* The slot of page, or NULL where no leaf holds it. */
static inline struct slot *slot_of(uint64_t page)
{
	struct slot *leaf = page >> LEAF_BITS < ntop ? leaf_of(page, 0) : NULL;

	return leaf ? &leaf[page & (LEAF_SIZE - 1)] : NULL;
}

struct rtl_region *rtl_rmap_get(uint64_t off)
{
	struct slot *slot = slot_of(off >> PAGE_SHIFT);
	const struct subtable *sub;
	struct rtl_region *here;
	uint64_t mapped, starts;
	uintptr_t e, guess;
	unsigned i;

	if (!slot)
		return NULL;
	e = atomic_load_explicit(&slot->e, memory_order_acquire);
	if (!(e & TAG_SUB))
		return (struct rtl_region *)e;
	sub = (struct subtable *)(e & ~TAG_SUB);
	i = (unsigned)(off >> GRAN_SHIFT) & (GRANS - 1);
	/* The record the page's hint predicts, fetched beside the subtable
	 * (a prefetch cannot fault, whatever the hint says). */
	guess = hint_predict(atomic_load_explicit(&slot->hint, memory_order_relaxed), i);
	if (guess)
		__builtin_prefetch((const void *)guess);
	/* Three loads whose addresses are known now: the CPU overlaps them. */
	mapped = atomic_load_explicit(&sub->mapped, memory_order_acquire);
	starts = atomic_load_explicit(&sub->starts, memory_order_acquire) &
	         bits(0, i + 1);
	here = atomic_load_explicit(&sub->g[i], memory_order_acquire);
	if (!(mapped >> i & 1))
		return NULL;
	if (starts >> i) /* i is a start granule */
		return here;
	if (!starts)
		return atomic_load_explicit(&sub->head, memory_order_acquire);
	return atomic_load_explicit(&sub->g[63 - __builtin_clzll(starts)],
	                            memory_order_acquire);
}

uintptr_t rtl_rmap_guess(uint64_t off)
{
	struct slot *slot = slot_of(off >> PAGE_SHIFT);

	if (!slot || !(atomic_load_explicit(&slot->e, memory_order_acquire) & TAG_SUB))
		return 0;
	return hint_predict(atomic_load_explicit(&slot->hint, memory_order_relaxed),
	                    (unsigned)(off >> GRAN_SHIFT) & (GRANS - 1));
}

/* Map granules [glo, ghi) of a shared page to r (unmap them: r NULL); r
 * starts on this page (at glo) or on an earlier one (then glo is 0).
 * Writers hold the page's shard lock (records.h). */
static int set_granules(uint64_t page, struct slot *slot, unsigned glo,
                        unsigned ghi, int starts_here, struct rtl_region *r)
{
	uintptr_t e = atomic_load_explicit(&slot->e, memory_order_relaxed);
	uint64_t want = bits(glo, ghi), start = starts_here ? (uint64_t)1 << glo : 0;
	struct subtable *sub;

	if (!e) {
		if (!r)
			return 0;
		sub = sub_get(page << PAGE_SHIFT); /* mapped and starts 0 */
		if (!sub)
			return -1;
		if (starts_here)
			atomic_store_explicit(&sub->g[glo], r, memory_order_relaxed);
		else
			atomic_store_explicit(&sub->head, r, memory_order_relaxed);
		atomic_store_explicit(&sub->starts, start, memory_order_relaxed);
		atomic_store_explicit(&sub->mapped, want, memory_order_relaxed);
		atomic_store_explicit(&slot->hint, starts_here ? hint_first(r, glo) : 0,
		                      memory_order_relaxed);
		atomic_store_explicit(&slot->e, (uintptr_t)sub | TAG_SUB,
		                      memory_order_release);
		return 0;
	}
	sub = (struct subtable *)(e & ~TAG_SUB);
	if (r && starts_here)
		atomic_store_explicit(&slot->hint,
		                      hint_learn(atomic_load_explicit(&slot->hint,
		                                                      memory_order_relaxed),
		                                 r, glo),
		                      memory_order_relaxed);
	if (r) { /* free granules (walk checked them) */
		/* r's fields, then r, then the bits that lead to it. */
		atomic_thread_fence(memory_order_release);
		if (starts_here)
			atomic_store_explicit(&sub->g[glo], r, memory_order_relaxed);
		else
			atomic_store_explicit(&sub->head, r, memory_order_relaxed);
		atomic_store_explicit(&sub->starts,
		                      atomic_load_explicit(&sub->starts, memory_order_relaxed) | start,
		                      memory_order_release);
		atomic_store_explicit(&sub->mapped,
		                      atomic_load_explicit(&sub->mapped, memory_order_relaxed) | want,
		                      memory_order_release);
		return 0;
	}
	/* Remove clears bits only (of what is r's: undoing an insert that
	 * failed part way meets granules never set); pointers stay, unread. */
	want &= atomic_load_explicit(&sub->mapped, memory_order_relaxed);
	atomic_store_explicit(&sub->mapped,
	                      atomic_load_explicit(&sub->mapped, memory_order_relaxed) & ~want,
	                      memory_order_release);
	atomic_store_explicit(&sub->starts,
	                      atomic_load_explicit(&sub->starts, memory_order_relaxed) &
	                              ~(start & want),
	                      memory_order_release);
	if (atomic_load_explicit(&sub->mapped, memory_order_relaxed))
		return 0;
	atomic_store_explicit(&slot->e, 0, memory_order_release);
	sub_put(page << PAGE_SHIFT, sub);
	return 0;
}

/* Whether any granule of [glo, ghi) of the page entry e is mapped. */
static int page_busy(uintptr_t e, unsigned glo, unsigned ghi)
{
	if (!(e & TAG_SUB))
		return e != 0;
	return (atomic_load_explicit(&((struct subtable *)(e & ~TAG_SUB))->mapped,
	                             memory_order_relaxed) &
	        bits(glo, ghi)) != 0;
}

/* Walk the pages of [lo, hi) and map them to r, each page once none of it
 * is mapped (NULL: unmap). Where it stopped: hi, or the start of the page
 * that was mapped already (*err EEXIST) or that needed memory (ENOMEM). */
static uint64_t walk(uint64_t lo, uint64_t hi, struct rtl_region *r, int *err)
{
	uint64_t page;

	for (page = lo >> PAGE_SHIFT; page <= (hi - 1) >> PAGE_SHIFT; page++) {
		uint64_t pstart = page << PAGE_SHIFT, pend = pstart + (1u << PAGE_SHIFT);
		unsigned glo = lo > pstart ? (unsigned)((lo - pstart) >> GRAN_SHIFT) : 0;
		unsigned ghi = hi < pend ? (unsigned)((hi - pstart) >> GRAN_SHIFT) : GRANS;
		struct slot *leaf = leaf_of(page, r != NULL);
		struct slot *slot;

		if (!leaf) {
			if (!r)
				continue;
			*err = ENOMEM;
			return pstart > lo ? pstart : lo;
		}
		slot = &leaf[page & (LEAF_SIZE - 1)];
		if (r && page_busy(atomic_load_explicit(&slot->e, memory_order_relaxed),
		                   glo, ghi)) {
			*err = EEXIST;
			return pstart > lo ? pstart : lo;
		}
		if (glo == 0 && ghi == GRANS) {
			atomic_store_explicit(&slot->e, (uintptr_t)r, memory_order_release);
			continue;
		}
		if (set_granules(page, slot, glo, ghi, lo >= pstart, r) < 0) {
			*err = ENOMEM;
			return pstart > lo ? pstart : lo;
		}
	}
	return hi;
}

int rtl_rmap_insert(struct rtl_region *r)
{
	uint64_t hi = r->lo + r->span, stop;
	int err = 0;

	stop = walk(r->lo, hi, r, &err);
	if (stop < hi) {
		if (stop > r->lo) /* only what this walk mapped */
			walk(r->lo, stop, NULL, &err);
		errno = err;
		return -1;
	}
	return 0;
}

void rtl_rmap_remove(struct rtl_region *r)
{
	int err;

	walk(r->lo, r->lo + r->span, NULL, &err);
}

int rtl_rmap_busy(uint64_t lo, uint64_t len)
{
	return rtl_rmap_next(lo & ~(uint64_t)((1u << GRAN_SHIFT) - 1), lo + len) <
	       lo + len;
}

/* The first granule of [off, end) that sub maps, off and end in one page;
 * end if none. One load: the page's bit word. */
static uint64_t next_in_sub(const struct subtable *sub, uint64_t off, uint64_t end)
{
	uint64_t page = off & ~(uint64_t)((1u << PAGE_SHIFT) - 1), at;
	unsigned glo = (unsigned)((off - page) >> GRAN_SHIFT);
	unsigned ghi = (unsigned)((end - page + (1u << GRAN_SHIFT) - 1) >> GRAN_SHIFT);
	uint64_t m = atomic_load_explicit(&sub->mapped, memory_order_acquire) &
	             bits(glo, ghi > GRANS ? GRANS : ghi);

	if (!m)
		return end;
	at = page + ((uint64_t)__builtin_ctzll(m) << GRAN_SHIFT);
	return at > off ? at : off;
}

uint64_t rtl_rmap_next(uint64_t off, uint64_t end)
{
	while (off < end) {
		uint64_t page = off >> PAGE_SHIFT;
		uint64_t pend = (page + 1) << PAGE_SHIFT;
		struct slot *leaf;
		uintptr_t e;

		if (page >> LEAF_BITS >= ntop)
			return end;
		leaf = leaf_of(page, 0);
		if (!leaf) { /* a whole leaf of nothing */
			off = ((page >> LEAF_BITS) + 1) << (LEAF_BITS + PAGE_SHIFT);
			continue;
		}
		e = atomic_load_explicit(&leaf[page & (LEAF_SIZE - 1)].e,
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
