/* Selected allocations: arena memory in the RW view, with a record each,
 * handed out the way the rule's mechanism says. swizzle: defined in place
 * as a region, returned in the view of its protection. alias: given pages
 * of its own (alias.c), returned at its alias address.
 *
 * auto: blocks of whole pages are swizzle regions protected in place,
 * smaller ones get a slot of their own (alias.c, auto.c); either way the
 * program's address never changes. page: laid out as auto's, reached
 * through the page mechanism's shared copy (page.c). tag: a region on
 * memory tags (core/tag), outside the arena: granules of its own, a
 * tagged pointer that never changes.
 *
 * A swizzle region of size bytes gets round_up(size + 1, 64) bytes at a
 * 64-byte boundary: its span (what rtl looks up and swizzles) lies inside
 * its own allocation, and its one-past-end is never another region's start.
 * Callers hold the re-entrancy guard; nothing here runs in a handler. */
#include "preload/place/heap.h"
#include "preload/place/page.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/region/placement.h"
#include "core/region/views.h"
#include "core/tag/tagged.h"
#include "core/util/page.h"
#include "core/util/say.h"
#include <rtl/region.h>
#include "policy/policy.h"
#include "preload/engine/actions.h"
#include "preload/engine/engine.h"
#include "preload/engine/epoch.h"
#include "preload/engine/record.h"
#include "preload/engine/reprotect.h"
#include "preload/engine/select.h"
#include "preload/engine/site.h"
#include "preload/engine/tally.h"
#include "preload/engine/timeline.h"
#include "preload/place/alias.h"
#include "preload/place/arena.h"
#include "preload/place/maps.h"
#include "preload/shim/next.h"

#define PAGE rtl_page_size()

static uintptr_t views_lo;
static size_t views_len;
static uint64_t max_live;

int rtl_heap_init(uint64_t max_regions)
{
	if (rtl_arena_init() < 0)
		return -1;
	rtl_maps_init();
	max_live = max_regions;
	views_len = RTL_NVIEWS * rtl_views.size;
	views_lo = rtl_views.base; /* last: rtl_heap_owns is true from here on */
	return 0;
}

int rtl_heap_owns(const void *p)
{
	return (uintptr_t)p - views_lo < views_len || rtl_alias_owns(p) ||
	       rtl_tag_owns((uintptr_t)p);
}

void rtl_heap_copy(void *dst, const void *src, size_t n)
{
	/* A tag block may be protected (its granules tagged 0): rtl's own
	 * copy goes with tag checks off, as a copy through the RW view does
	 * for the other mechanisms. */
	int unchecked = rtl_tag_arena.base &&
	                (rtl_tag_owns((uintptr_t)dst) || rtl_tag_owns((uintptr_t)src));

	if (unchecked)
		rtl_mte_unchecked(1);
	memcpy(dst, src, n);
	if (unchecked)
		rtl_mte_unchecked(0);
}

void rtl_heap_pin(const void *p, int delta)
{
	struct region_info r;
	struct rtl_rec *rec = rtl_alias_find(p);

	if (!rec)
		rec = rtl_pageprot_find((uintptr_t)p); /* the page mechanism's copy */
	if (!rec && rtl_tag_owns((uintptr_t)p) && region_find(p, &r) == 0)
		rec = r.data;
	if (!rec && region_find(p, &r) == 0 && rtl_arena_owns((void *)rtl_view_move((uintptr_t)r.base, RTL_VIEW_RW)))
		rec = r.data;
	if (!rec)
		return;
	if (delta < 0) {
		/* Never below zero: an unpin by address may meet another block
		 * (the alternate signal stack's was freed while it was the
		 * stack, and its address handed out again). */
		uint32_t n = atomic_load_explicit(&rec->pins, memory_order_acquire);
		while (n && !atomic_compare_exchange_weak_explicit(&rec->pins, &n, n - 1,
		                                                   memory_order_acq_rel,
		                                                   memory_order_acquire))
			;
		return;
	}
	/* Under the record's lock, which an epoch takes to lower it: an epoch
	 * from now on leaves it alone, and one that lowered it before makes
	 * its calls before the caller's grant (after this). */
	rtl_rec_lock(rec);
	atomic_fetch_add_explicit(&rec->pins, 1, memory_order_acq_rel);
	rtl_rec_unlock(rec);
	rtl_reprotect_wait();
}

static size_t span_of(size_t size)
{
	return (size + RTL_GRANULE) & ~(size_t)(RTL_GRANULE - 1); /* > size, whole granules */
}

/* What a swizzle block of size bytes takes from the arena, and at which
 * alignment: its span; from a page up, whole pages at a page boundary, so
 * that no other block shares them and it can be protected in place. */
static size_t block_of(size_t size, size_t align, size_t *align_out)
{
	size_t span = span_of(size);

	if (align < RTL_GRANULE)
		align = RTL_GRANULE;
	if (span >= PAGE) {
		span = (span + PAGE - 1) & ~(size_t)(PAGE - 1);
		if (align < PAGE)
			align = PAGE;
	}
	*align_out = align;
	return span;
}

/* RW memory rw, in the view of protection prot. */
static void *in_view(void *rw, int prot)
{
	return (void *)rtl_view_move((uintptr_t)rw, rtl_prot_view(prot));
}

/* Make [rw, rw + size) a region as c says; the pointer to hand out, or NULL
 * with errno. exact (auto): a block that can trap is protected in place or
 * not made at all, never left to move pointers. */
static void *define(void *rw, size_t size, const struct rtl_choice *c,
                    struct rtl_rec *rec, int exact)
{
	const int rwprot = PROT_READ | PROT_WRITE;
	/* Tracked by the kernel's written bits, a block never traps: a
	 * writable region whose pointers never move (docs/dirty.md). */
	int traps = c->traps && !c->wbits, prot = c->wbits ? rwprot : c->prot;
	/* An in-place block's home is never the RW view (rtl keeps that one
	 * writable for itself): a block that starts writable lives in the
	 * RO view with its pages raised. */
	int home = prot == rwprot ? PROT_READ : prot;

	if (rtl_define_in_views(rw, size, c->handler, rec) < 0)
		return NULL;
	/* A block of whole pages is protected in place: the program's copies
	 * of its address never change view, so its pointer comparisons hold
	 * (docs/mechanisms.md, "Blocks of whole pages"). Only where it can trap
	 * (protect below rw, or tracked); past the mapping budget it is an
	 * ordinary region. */
	if (traps && rtl_arena_owns_pages(rw) && rtl_in_place_room() &&
	    region_protect_in_place(in_view(rw, home), prot) == 0) {
		atomic_fetch_add_explicit(&rtl_in_place_live, 1,
		                          memory_order_relaxed);
		atomic_store(&rec->in_place, RTL_REC_IN_PLACE);
	} else if (exact && traps) {
		region_free(rw);
		errno = ENOMEM;
		return NULL;
	} else {
		home = prot;
		if (prot != rwprot)
			region_protect(rw, prot);
	}
	/* region_track takes rtl's define lock: here, never in a handler. */
	if (c->track)
		region_track(rw, c->wbits ? RTL_TRACK_WRITTEN : RTL_TRACK_ON);
	rec->wbits = c->wbits && region_tracking(rw) == RTL_DIRTY_WRITTEN_BITS;
	return in_view(rw, home);
}

/* A record whose region is no longer protected in place (freed, or the
 * program set its pages' protection): out of the in-place count. */
void rtl_heap_left_in_place(void *data)
{
	struct rtl_rec *rec = data;

	/* Most never were: a load, not a locked exchange, for them. */
	if (rec && atomic_load_explicit(&rec->in_place, memory_order_relaxed) == RTL_REC_IN_PLACE &&
	    atomic_exchange(&rec->in_place, 0) == RTL_REC_IN_PLACE)
		atomic_fetch_sub_explicit(&rtl_in_place_live, 1,
		                          memory_order_relaxed);
}

/* Every stripe's made, then every stripe's freed. Both only grow, so
 * while other threads make and free, the difference is at most what was
 * live at the moment between the two passes (as far as this core sees
 * the others' adds by then): not above a real count, never wrapped below
 * zero. (One sum of live = made - freed per
 * stripe was not: a stripe read before a region was made there and
 * another read after it was freed there summed below zero: a report
 * showed a peak of 2^64 - 14.) */
uint64_t rtl_heap_live(void)
{
	uint64_t made = RTL_TALLY_SUM(made), freed;

	atomic_thread_fence(memory_order_acquire); /* the made loads first */
	freed = RTL_TALLY_SUM(freed);
	return made > freed ? made - freed : 0;
}

/* The counts of a new region, in this thread's stripe (tally.h). The peak
 * of live regions is summed over the stripes only when this stripe's own
 * count passes its highest: exact for one thread; with threads a region
 * freed by another one can hide a peak, so it is a lower bound
 * (docs/report-fields.md, regions_peak). */
static void count_new(size_t size, const struct rtl_choice *c, uint32_t site)
{
	struct rtl_stripe *st = rtl_stripe();
	int64_t mine;

	rtl_tally_add(&st->rule_allocs[c->rule], 1);
	rtl_tally_add(&st->rule_bytes[c->rule], size);
	rtl_site_count_new(site, size);
	rtl_timeline_add(c->rule, RTL_TL_MADE);
	mine = (int64_t)(atomic_fetch_add_explicit(&st->made, 1, memory_order_relaxed) + 1 -
	                 atomic_load_explicit(&st->freed, memory_order_relaxed));
	if (mine > atomic_load_explicit(&st->live_high, memory_order_relaxed)) {
		uint64_t live = rtl_heap_live(),
		         peak = atomic_load_explicit(&rtl_totals.peak,
		                                     memory_order_relaxed);

		atomic_store_explicit(&st->live_high, mine, memory_order_relaxed);
		while (live > peak &&
		       !atomic_compare_exchange_weak(&rtl_totals.peak, &peak, live))
			;
	}
}

/* auto: a block under a page gets a slot, like an alias object (its
 * pages are shared with other blocks); one of whole pages is a region
 * protected in place, or, where protection lives in the page tables, is
 * reached through the copy of such blocks (whole.c). */
static int auto_in_copy(size_t size, size_t align, const struct rtl_choice *c)
{
	size_t a;

	/* On written bits every block is a region in rtl's views. */
	return c->mechanism == RTL_MECH_AUTO && !c->wbits &&
	       (block_of(size, align, &a) < PAGE || rtl_alias_whole(c));
}

/* What an alias object, a slot or a page block takes from the arena: its
 * size in jemalloc's classes; a page block of whole pages is laid out as
 * auto lays out its blocks protected in place, so that rtlctl compare
 * sets side by side mechanisms that differ in granularity only. */
static size_t arena_bytes(size_t size, size_t *align, const struct rtl_choice *c)
{
	size_t a;

	if ((c->mechanism == RTL_MECH_PAGE || rtl_alias_whole(c)) &&
	    block_of(size, *align, &a) >= PAGE)
		return block_of(size, *align, align);
	if (*align < 16)
		*align = 16;
	return (size + 15) & ~(size_t)15;
}

static void *alloc_alias(struct rtl_rec *rec, size_t size, size_t align,
                         int zero, const struct rtl_choice *c, void **rw_out)
{
	size_t bytes = arena_bytes(size, &align, c);
	void *rw, *p;

	rw = rtl_arena_alloc(bytes, align, zero);
	if (!rw)
		return NULL;
	rec->rw = rw;
	if (c->track && !(rec->twin = rtl_next()->malloc(size))) {
		rtl_arena_free(rw);
		return NULL;
	}
	p = rtl_alias_map(rec, c->prot);
	if (!p) {
		int e = errno; /* why: the caller tells the report */

		rtl_next()->free(rec->twin);
		rtl_arena_free(rw);
		errno = e;
		return NULL;
	}
	*rw_out = rw;
	return p;
}

/* tag: a region on memory tags, zero-filled, born read-write and then
 * given the rule's protection (none or read-write: engine.c places a rule
 * tags cannot hold as auto). Granules are 16 bytes: a larger alignment
 * is not kept, and the allocation falls back. */
static void *alloc_tag(struct rtl_rec *rec, size_t size, size_t align,
                       const struct rtl_choice *c)
{
	void *p;

	if (align > RTL_MTE_GRANULE) {
		errno = EINVAL;
		return NULL;
	}
	p = region_alloc_tagged(size, NULL, 0);
	if (!p)
		return NULL;
	if (region_mechanism(p) != RTL_ON_TAGS) { /* RTL_TAG=off since start */
		region_free(p);
		errno = ENOTSUP;
		return NULL;
	}
	region_set_data(p, rec);
	region_handler(p, rtl_act_tag_trap);
	if (c->prot != (PROT_READ | PROT_WRITE))
		region_protect(p, c->prot);
	rec->rw = p;
	return p;
}

void *rtl_heap_alloc(size_t size, size_t align, int zero,
                     const struct rtl_choice *c, uint32_t site, void **rw_out)
{
	struct rtl_choice as_auto;
	struct rtl_rec *rec;
	void *rw, *p = NULL;
	int why = RTL_FALLBACK_FULL;

	if (size == 0)
		size = 1; /* a unique pointer, as malloc(0) gives */
	if (size > ((size_t)1 << 40)) {
		errno = ENOMEM;
		return NULL;
	}
	if (!(rec = rtl_rec_new())) {
		/* A record per live region, and as many records as
		 * max_regions (engine.c, up to rtl's own cap): all in use. */
		if (rtl_rec_count() >= max_live) {
			rtl_select_fallback(c, RTL_FALLBACK_MAX_REGIONS);
			errno = ENOSPC;
			return NULL;
		}
		goto fail;
	}
	rec->rule = (uint16_t)c->rule;
	rec->site = site;
	rec->size = size;
	rec->mech = (uint8_t)c->mechanism;
	atomic_store_explicit(&rec->in_place, 0, memory_order_relaxed);
	if (c->mechanism == RTL_MECH_TAG && !(p = alloc_tag(rec, size, align, c))) {
		/* What tags cannot take (an alignment above 16, the arena
		 * full): an auto rule's goes auto's way, which engine.c set up
		 * for it; a tag rule's to the next allocator. */
		if (!c->tag_else_auto) {
			why = RTL_FALLBACK_TAGS;
			goto fail_rec;
		}
		as_auto = *c;
		as_auto.mechanism = RTL_MECH_AUTO;
		c = &as_auto;
		rec->mech = RTL_MECH_AUTO;
	}
	if (p) {
		rw = p;
	} else if (c->mechanism == RTL_MECH_ALIAS || c->mechanism == RTL_MECH_PAGE ||
	           auto_in_copy(size, align, c)) {
		why = RTL_FALLBACK_MAPS;
		errno = 0;
		if ((c->mechanism != RTL_MECH_ALIAS && rtl_alias_splits(c) && !rtl_alias_room()) ||
		    !(p = alloc_alias(rec, size, align, zero, c, &rw))) {
			if (errno == EBUSY && c->mechanism == RTL_MECH_AUTO)
				why = RTL_FALLBACK_SLOTS;
			goto fail_rec;
		}
	} else {
		size_t block = block_of(size, align, &align);

		if (c->mechanism == RTL_MECH_AUTO)
			why = RTL_FALLBACK_MAPS; /* no room to protect in place */
		rw = rtl_arena_alloc(block, align, zero);
		if (!rw)
			goto fail_rec;
		rec->rw = rw;
		if (!(p = define(rw, size, c, rec,
		                 c->mechanism == RTL_MECH_AUTO))) {
			rtl_arena_free(rw);
			goto fail_rec;
		}
	}
	rec->addr = (uintptr_t)p;
	/* The page mechanism counts its own mprotect calls (page.c). */
	if (c->prot != (PROT_READ | PROT_WRITE) && c->mechanism != RTL_MECH_PAGE &&
	    !c->wbits)
		rtl_act_prot_changed(c->rule);
	atomic_store_explicit(&rec->live, 1, memory_order_release);
	count_new(size, c, site);
	if (rw_out)
		*rw_out = rw;
	return p;
fail_rec:
	rtl_rec_free(rec);
fail:
	rtl_select_fallback(c, why);
	errno = ENOMEM;
	return NULL;
}

int rtl_heap_find(const void *p, struct rtl_obj *o)
{
	struct rtl_rec *rec;
	struct region_info ri;

	if (rtl_tag_owns((uintptr_t)p)) {
		if (region_find(p, &ri) < 0 || !(rec = ri.data) || (uintptr_t)p != rec->addr)
			return -1;
		o->rw = (void *)p;
		o->size = ri.size;
		o->rec = rec;
		o->region.region = NULL;
		return 0;
	}
	if (rtl_alias_owns(p)) {
		rec = rtl_alias_find(p);
		if (!rec || (uintptr_t)p != rec->alias +
		                                    ((uintptr_t)rec->rw & 4095))
			return -1;
		o->rw = rec->rw;
		o->size = rec->size;
		o->rec = rec;
		o->region.region = NULL;
		return 0;
	}
	if (rtl_block_find(p, &o->region) < 0 || o->region.offset != 0)
		return -1;
	o->rw = (void *)rtl_view_move((uintptr_t)o->region.base, RTL_VIEW_RW);
	if (!rtl_arena_owns(o->rw))
		return -1;
	o->size = o->region.size;
	o->rec = o->region.data;
	return 0;
}

int rtl_heap_free(const struct rtl_obj *o)
{
	struct rtl_rec *rec = o->rec;

	/* Pinned: the kernel may still write there. A block freed while it
	 * is a thread's alternate signal stack (ruby frees its own at exit
	 * and keeps it as the stack) was given out again and re-protected by
	 * an epoch, and the next signal found no room for its frame: a
	 * SIGSEGV no handler sees. Such a block stays as it is, granted and
	 * skipped by the epochs, for good: one per thread at most (a block
	 * pinned for a system call another thread is making is freed under
	 * it by a program's own mistake, and stays too). */
	if (rec && atomic_load_explicit(&rec->pins, memory_order_acquire)) {
		atomic_fetch_add_explicit(&rtl_totals.kept_pinned, 1, memory_order_relaxed);
		return 0;
	}
	if (rec && rec->mech == RTL_MECH_TAG) {
		if (!atomic_exchange(&rec->live, 0))
			return -1; /* freed twice, racing */
		rtl_epoch_freeing(rec);
		if (region_free(o->rw) < 0)
			return -1;
		rtl_timeline_add(rec->rule, RTL_TL_FREED);
		rtl_rec_free(rec);
		rtl_tally_add(&rtl_stripe()->freed, 1);
		return 0;
	}
	if (rec && rec->alias) { /* alias, or auto in a slot */
		if (!atomic_exchange(&rec->live, 0))
			return -1; /* freed twice, racing */
		rtl_alias_unmap(rec);
		rtl_epoch_freeing(rec);
		if (rec->twin)
			rtl_next()->free(rec->twin);
	} else {
		if (rec)
			rtl_epoch_freeing(rec);
		if (rtl_block_free(&o->region) < 0)
			return -1;
		rtl_heap_left_in_place(rec);
	}
	if (rec) {
		rtl_timeline_add(rec->rule, RTL_TL_FREED);
		rtl_rec_free(rec);
	}
	rtl_tally_add(&rtl_stripe()->freed, 1);
	rtl_arena_free(o->rw);
	return 0;
}

void *rtl_heap_resize(const struct rtl_obj *o, size_t size,
                      const struct rtl_choice *c)
{
	struct rtl_rec *rec = o->rec;
	size_t have, want, align;
	void *p;

	/* In place: a swizzle region staying with its rule, when jemalloc
	 * would give this very size class. */
	if (!rec || rec->mech != RTL_MECH_SWIZZLE || c->mechanism != RTL_MECH_SWIZZLE ||
	    rec->rule != c->rule)
		return NULL;
	if (size == 0)
		size = 1;
	if (size > ((size_t)1 << 40))
		return NULL;
	have = rtl_arena_usable(o->rw);
	want = block_of(size, RTL_GRANULE, &align);
	if (want > have || rtl_arena_good_size(want, align) != have)
		return NULL;
	rtl_epoch_freeing(rec);
	if (rtl_block_free(&o->region) < 0)
		return NULL;
	rtl_heap_left_in_place(rec);
	rec->size = size;
	p = define(o->rw, size, c, rec, 0);
	if (!p) {
		/* rtl's metadata is out of memory: the old region is gone and
		 * the program's pointer may be in a view that now traps with
		 * no region behind it. Nothing sane remains to do. */
		static const char msg[] =
		        "rtl: realloc: out of memory for region metadata\n";
		rtl_say(msg, sizeof(msg) - 1);
		abort();
	}
	return p;
}
