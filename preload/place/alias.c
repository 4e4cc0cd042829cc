/* The alias mechanism (MultiView's): a selected object lives in rtl's RW
 * view like any other, and gets virtual pages of its own that map the same
 * physical memory (the views' memfd at the object's page offset, shared);
 * malloc returns the alias address plus the in-page offset, and protection
 * is set on the alias through rtl's protection backend (core/prot/prot.h:
 * a write-protect bit in the page tables where the kernel has it, else
 * mprotect). No pointer needs to be known.
 *
 * Aliases are placed in one PROT_NONE reservation; a page table indexed by
 * alias page gives the record, lock-free, for the fault handler, free and
 * the system-call wrappers. A fault on an alias is outside rtl's views, so
 * it reaches the core's foreign hook (alias_trap.c). Each alias costs a
 * mapping, so selection stops before vm.max_map_count (maps.c).
 *
 * An alias object's pages come from a slot (auto.c: copies of the arena's
 * pool mapped after the alias space in the same reservation) whenever one
 * is free on them: the copy is the object's own there, so nothing differs
 * but the mmap, which a slot does not need. Objects over SLOT_PAGES, and
 * those whose pages have every copy taken (blocks under 16 bytes), get an
 * mmap of their own.
 * The auto mechanism's blocks under a page are slots too: the fault
 * handler, the system calls, the epochs and fork treat all alike.
 * The page mechanism's blocks share one more copy after the slots
 * (page.c), where protection is per page: this file hands its faults,
 * calls and blocks over to it. Under page-table protection, auto's blocks
 * of whole pages are reached through one copy more (whole.c). */
#include "preload/place/alias.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/prot/prot.h"
#include "core/region/views.h"
#include "core/util/lock.h"
#include "core/util/page.h"
#include "core/util/say.h"
#include "policy/policy.h"
#include "preload/engine/engine.h"
#include "preload/engine/record.h"
#include "preload/place/arena.h"
#include "preload/place/auto.h"
#include "preload/place/maps.h"
#include "preload/place/page.h"
#include "preload/place/whole.h"

#define PAGE rtl_page_size()
#define PAGE_SHIFT rtl_page_shift()
#define SMALL 32 /* free lists by exact page count up to this */
/* An alias object of up to this many pages takes a slot; a larger one an
 * mmap of its own. A slot costs about 0.1 us a page (its bits and states,
 * page by page), an mmap and its undoing about 10 us whatever the size. */
#define SLOT_PAGES 64

static _Atomic uintptr_t base;       /* the reservation; 0 until made */
static size_t span;                  /* the whole reservation */
static size_t alias_span;            /* its first part: per-object aliases;
                                         then the slots (auto.c) */
static int slots;                    /* the slots are mapped */
static uintptr_t slots_lo, slots_hi; /* where */
static int pages_mapped;             /* the page mechanism's copy is */
static _Atomic uint32_t *pagemap;    /* per alias page: record index + 1 */
static uintptr_t rw_base;            /* the RW view; file offset 0 */

/* Virtual space for aliases: a bump pointer, then free lists (under a
 * spin flag: only the allocation path and fork take it). */
static struct rtl_lock va_lock = RTL_LOCK_INIT;
static uintptr_t bump;
static uintptr_t *small_free[SMALL + 1];
static uint32_t nsmall[SMALL + 1], small_cap;
struct big_range {
	uintptr_t va;
	uint32_t pages;
};
static struct big_range *big_free;
static uint32_t nbig;

/* ---- virtual space ---- */

static uintptr_t va_alloc(uint32_t pages)
{
	uintptr_t va = 0;

	rtl_lock_acquire(&va_lock);
	if (pages <= SMALL && nsmall[pages]) {
		va = small_free[pages][--nsmall[pages]];
	} else if (pages > SMALL) {
		for (uint32_t i = 0; i < nbig; i++) {
			if (big_free[i].pages < pages)
				continue;
			va = big_free[i].va;
			big_free[i].va += (uintptr_t)pages * PAGE;
			big_free[i].pages -= pages;
			if (!big_free[i].pages)
				big_free[i] = big_free[--nbig];
			break;
		}
	}
	if (!va && (uintptr_t)pages * PAGE <= base + alias_span - bump) {
		va = bump;
		bump += (uintptr_t)pages * PAGE;
	}
	rtl_lock_release(&va_lock);
	return va;
}

/* Back into the reservation (a hole would let the kernel put someone
 * else's mapping where the next alias goes), then onto a free list. */
static void va_free(uintptr_t va, uint32_t pages)
{
	mmap((void *)va, (size_t)pages * PAGE, PROT_NONE,
	     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
	rtl_lock_acquire(&va_lock);
	if (pages <= SMALL && nsmall[pages] < small_cap)
		small_free[pages][nsmall[pages]++] = va;
	else if (pages > SMALL && nbig < small_cap)
		big_free[nbig++] = (struct big_range){ va, pages };
	/* else: leaked virtual space, never reused */
	rtl_lock_release(&va_lock);
}

/* ---- mapping ---- */

int rtl_alias_owns(const void *p)
{
	uintptr_t b = atomic_load_explicit(&base, memory_order_relaxed);
	return b && (uintptr_t)p - b < span;
}

struct rtl_rec *rtl_alias_find(const void *p)
{
	uintptr_t a = (uintptr_t)p;
	uint32_t idx;
	struct rtl_rec *rec;

	if (!rtl_alias_owns(p))
		return NULL;
	if (rtl_pageprot_owns(a))
		return rtl_pageprot_find(a);
	idx = atomic_load_explicit(&pagemap[(a - base) >> PAGE_SHIFT], memory_order_acquire);
	if (!idx || !(rec = rtl_rec_at(idx - 1)))
		return NULL;
	if (!atomic_load_explicit(&rec->live, memory_order_acquire) ||
	    a - rec->alias >= (uintptr_t)rec->pages * PAGE)
		return NULL;
	return rec;
}

/* Whether rec's pages are a slot's (else an mmap of its own, or the page
 * mechanism's copy). */
static int in_slot(const struct rtl_rec *rec)
{
	return rec->alias - slots_lo < slots_hi - slots_lo;
}

int rtl_alias_protect(struct rtl_rec *rec, int prot)
{
	size_t len = (size_t)rec->pages * PAGE;

	if (rec->mech == RTL_MECH_PAGE)
		return rtl_pageprot_protect(rec, prot);
	if (rtl_whole_owns(rec->alias)) {
		if (rtl_whole_protect(rec->alias, len, prot) < 0)
			return -1;
		atomic_store_explicit(&rec->prot, prot, memory_order_release);
		return 0;
	}
	if (rtl_prot_set(rec->alias, len, prot) < 0) {
		/* Out of mappings, at a grant: the program must go on. */
		if (errno != ENOMEM || !in_slot(rec) ||
		    (prot & ~atomic_load(&rec->prot)) == 0 ||
		    rtl_slot_open_copy(rec->alias) < 0)
			return -1;
	}
	if (in_slot(rec))
		rtl_slot_protected(rec->alias, (size_t)rec->pages * PAGE, prot);
	atomic_store_explicit(&rec->prot, prot, memory_order_release);
	return 0;
}

void rtl_alias_protected(struct rtl_rec *rec, int prot)
{
	size_t len = (size_t)rec->pages * PAGE;

	if (rtl_whole_owns(rec->alias))
		rtl_whole_protected(rec->alias, len, prot);
	else if (in_slot(rec))
		rtl_slot_protected(rec->alias, len, prot);
}

/* Gaps an epoch's run bridges at most (a page each to look at). */
#define BRIDGE_PAGES 4096

int rtl_alias_bridge(uintptr_t lo, uintptr_t hi, int rule, int prot)
{
	uintptr_t b = atomic_load_explicit(&base, memory_order_acquire);
	int k = rtl_slot_copy_of(lo);

	if (!b || hi <= lo || (hi - lo) / PAGE > BRIDGE_PAGES)
		return 0;
	if (k < 0 ? !(rtl_whole_owns(lo) && rtl_whole_owns(hi - 1))
	          : rtl_slot_copy_of(hi - 1) != k)
		return 0; /* not one copy: one mapping */
	for (uintptr_t a = lo; a < hi; a += PAGE) {
		uint32_t idx = atomic_load_explicit(&pagemap[(a - b) >> PAGE_SHIFT],
		                                    memory_order_acquire);
		const struct rtl_rec *rec = idx ? rtl_rec_at(idx - 1) : NULL;

		if (rec && (!atomic_load(&rec->live) || rec->rule != rule ||
		            atomic_load(&rec->prot) != prot ||
		            atomic_load(&rec->in_place) == RTL_REC_PROGRAMS))
			return 0;
	}
	/* The free pages get prot with the run: so the copy remembers. */
	for (uintptr_t a = lo; a < hi; a += PAGE)
		if (!atomic_load_explicit(&pagemap[(a - b) >> PAGE_SHIFT], memory_order_acquire)) {
			if (k < 0)
				rtl_whole_protected(a, PAGE, prot);
			else
				rtl_slot_protected(a, PAGE, prot);
		}
	return 1;
}

/* Whether rec's mapping may add to the process's mappings: an mmap of its
 * own always; a slot or a page block only if its pages may change
 * protection in a way that splits a mapping (rtl_alias_splits). */
static int splits(const struct rtl_rec *rec)
{
	return (rec->mech == RTL_MECH_ALIAS && !in_slot(rec) && !rtl_whole_owns(rec->alias)) ||
	       rtl_alias_splits(&rtl_engine.rules[rec->rule].choice);
}

int rtl_alias_splits(const struct rtl_choice *c)
{
	/* Under page tables only no access is an mprotect. */
	if (rtl_prot_backend() == RTL_PROT_PAGE_TABLES)
		return c->traps && c->prot == PROT_NONE;
	return c->traps;
}

int rtl_alias_whole(const struct rtl_choice *c)
{
	return c->mechanism == RTL_MECH_AUTO && rtl_whole_on();
}

void *rtl_alias_map(struct rtl_rec *rec, int prot)
{
	uintptr_t rw = (uintptr_t)rec->rw, first = rw & ~(uintptr_t)(PAGE - 1);
	uintptr_t last = (rw + (rec->size ? rec->size : 1) - 1) & ~(uintptr_t)(PAGE - 1);
	uint32_t pages = (uint32_t)(((last - first) >> PAGE_SHIFT) + 1);
	uint32_t idx = rtl_rec_index(rec) + 1;
	uintptr_t va;

	if (rec->mech == RTL_MECH_PAGE) {
		/* The page copy, shared with every page block: no mmap. */
		if (!(va = rtl_pageprot_take(rec, prot))) {
			errno = ENOMEM;
			return NULL;
		}
		if (splits(rec))
			atomic_fetch_add_explicit(&rtl_alias_live, 1,
			                          memory_order_relaxed);
		return (void *)va;
	}
	/* auto, whole pages, page tables: the pool's offset in the copy of
	 * such blocks. */
	if (rec->mech == RTL_MECH_AUTO && rtl_whole_on() && !(rw & (PAGE - 1)) &&
	    rec->size >= PAGE - RTL_GRANULE) {
		if (!(va = rtl_whole_take(rw, (size_t)pages * PAGE, prot)))
			return NULL;
		goto mapped;
	}
	/* A copy of the pool of its own on these pages: no mmap. */
	va = slots && (rec->mech == RTL_MECH_AUTO || pages <= SLOT_PAGES)
	             ? rtl_slot_take((uintptr_t)rec->rw, rec->size ? rec->size : 1,
	                             prot) &
	                       ~(uintptr_t)(PAGE - 1)
	             : 0;
	if (va) {
		; /* a slot */
	} else if (rec->mech == RTL_MECH_AUTO) {
		errno = ENOMEM;
		return NULL;
	} else if (!(va = va_alloc(pages))) {
		errno = ENOMEM;
		return NULL;
	} else if (rtl_prot_map(va, (size_t)pages * PAGE, rtl_views.fd,
	                        (off_t)(first - rw_base), prot) < 0) {
		int e = errno;
		va_free(va, pages);
		errno = e;
		return NULL;
	}
mapped:
	rec->alias = va;
	rec->pages = pages;
	atomic_store(&rec->prot, prot);
	for (uint32_t k = 0; k < pages; k++)
		atomic_store_explicit(&pagemap[((va - base) >> PAGE_SHIFT) + k], idx,
		                      memory_order_release);
	if (splits(rec))
		atomic_fetch_add_explicit(&rtl_alias_live, 1, memory_order_relaxed);
	return (void *)(va + (rw & (PAGE - 1)));
}

/* The record is no longer live (the caller cleared it): forget its pages,
 * wait out a handler or an epoch holding it, give the space back. */
void rtl_alias_unmap(struct rtl_rec *rec)
{
	uintptr_t va = rec->alias;

	if (rec->mech == RTL_MECH_PAGE)
		rtl_pageprot_give(rec);
	for (uint32_t k = 0; rec->mech != RTL_MECH_PAGE && k < rec->pages; k++)
		atomic_store_explicit(&pagemap[((va - base) >> PAGE_SHIFT) + k], 0,
		                      memory_order_release);
	rtl_rec_lock(rec);
	rtl_rec_unlock(rec);
	if (atomic_exchange(&rec->in_place, 0) == RTL_REC_PROGRAMS && rec->mech != RTL_MECH_PAGE) {
		/* The program's mprotect left these pages as it wanted them:
		 * read-write again for the next block, as the copy remembers
		 * them. */
		syscall(SYS_mprotect, (void *)va, (size_t)rec->pages * PAGE,
		        PROT_READ | PROT_WRITE);
		rtl_alias_protected(rec, PROT_READ | PROT_WRITE);
	}
	if (rec->mech == RTL_MECH_PAGE || rtl_whole_owns(va))
		; /* its pages stay as they are, in the shared copy */
	else if (in_slot(rec))
		rtl_slot_give(va, (size_t)rec->pages * PAGE);
	else
		va_free(va, rec->pages);
	if (splits(rec))
		atomic_fetch_sub_explicit(&rtl_alias_live, 1, memory_order_relaxed);
}

/* The program's own mprotect of [lo, hi), in the reservation: the blocks
 * there are no longer rtl's to protect (as blocks protected in place in
 * the views give theirs up, docs/mechanisms.md): read-write in rtl's
 * terms, their pages' page-table protection lifted, and from now on a
 * fault there is the program's. */
void rtl_alias_take_over(uintptr_t lo, uintptr_t hi)
{
	uintptr_t b = atomic_load_explicit(&base, memory_order_acquire);

	if (!b || hi <= b || lo >= b + span)
		return;
	lo = lo < b ? b : lo & ~(uintptr_t)(PAGE - 1);
	hi = hi > b + span ? b + span : hi;
	for (uintptr_t a = lo; a < hi; a += PAGE) {
		struct rtl_rec *rec;

		if (rtl_pageprot_owns(a)) {
			rtl_pageprot_take_over(a);
			continue;
		}
		if (!(rec = rtl_alias_find((void *)a)) ||
		    atomic_load(&rec->in_place) == RTL_REC_PROGRAMS)
			continue;
		rtl_rec_lock(rec);
		if (atomic_load(&rec->live)) {
			rtl_alias_protect(rec, PROT_READ | PROT_WRITE);
			atomic_store(&rec->in_place, RTL_REC_PROGRAMS);
		}
		rtl_rec_unlock(rec);
	}
}

/* ---- fork: the child's views are a new memfd; so must its aliases be ---- */

static void fork_prepare(void)
{
	rtl_lock_acquire(&va_lock);
	if (slots)
		rtl_slots_fork_prepare();
}

static void fork_parent(void)
{
	if (slots)
		rtl_slots_fork_parent();
	rtl_lock_release(&va_lock);
}

static void fork_child(void)
{
	int fd = rtl_views.fd;

	if (slots)
		rtl_slots_forked();
	if (pages_mapped)
		rtl_pageprot_forked();
	rtl_whole_forked();
	for (uint32_t i = 0; i < rtl_rec_count(); i++) {
		struct rtl_rec *rec = rtl_rec_at(i);
		uintptr_t first;

		if (!atomic_load(&rec->live) || !rec->alias)
			continue;
		if (in_slot(rec)) {
			/* The copies are mapped again with their pages'
			 * protections: only a page whose state was lost
			 * (a failed mprotect) needs its block's again. */
			int prot = atomic_load(&rec->prot);
			if (!rtl_slot_has_prot(rec->alias, (size_t)rec->pages * PAGE, prot))
				rtl_alias_protect(rec, prot);
			continue;
		}
		if (rtl_whole_owns(rec->alias))
			continue; /* its pages' protections came back with the copy */
		if (rec->mech != RTL_MECH_ALIAS)
			continue;
		first = (uintptr_t)rec->rw & ~(uintptr_t)(PAGE - 1);
		if (rtl_prot_map(rec->alias, (size_t)rec->pages * PAGE, fd,
		                 (off_t)(first - rw_base), atomic_load(&rec->prot)) < 0) {
			static const char msg[] = "rtl: fork: cannot remap an "
			                          "alias in the child; aborting it\n";
			rtl_say(msg, sizeof(msg) - 1);
			abort();
		}
	}
	rtl_lock_release(&va_lock);
}

int rtl_alias_init(int with_slots, int with_pages, int with_whole)
{
	uintptr_t hint, at;
	void *res;

	rw_base = rtl_view_base(RTL_VIEW_RW);
	alias_span = rtl_views.size;
	/* auto's blocks of whole pages leave rtl's views only where their
	 * protection can live in the page tables (whole.c). */
	with_whole = with_whole && rtl_prot_backend() == RTL_PROT_PAGE_TABLES;
	span = alias_span + (with_slots ? rtl_slots_span() : 0) +
	       (with_pages ? rtl_pageprot_span() : 0) +
	       (with_whole ? rtl_whole_span() : 0);
	/* Right after the views, at the next 1 TiB: the same place in every
	 * process when the views are at rtl's home (views.h). */
	hint = (rtl_views.base + RTL_NVIEWS * rtl_views.size + RTL_HOME_ALIGN - 1) &
	       ~(RTL_HOME_ALIGN - 1);
	res = rtl_views.base != RTL_HOME
	              ? MAP_FAILED
	              : mmap((void *)hint, span, PROT_NONE,
	                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
	                             MAP_FIXED_NOREPLACE,
	                     -1, 0);
	if (res == MAP_FAILED || res != (void *)hint) {
		if (res != MAP_FAILED)
			munmap(res, span);
		res = mmap(NULL, span, PROT_NONE,
		           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	}
	if (res == MAP_FAILED)
		return -1;
	/* Every mapping in it is the backend's (rtl_prot_map). */
	rtl_prot_span((uintptr_t)res, span);
	at = (uintptr_t)res + alias_span;
	if (with_slots && rtl_slots_init(at) < 0)
		return -1;
	if (with_slots) {
		slots_lo = at;
		slots_hi = slots_lo + rtl_slots_span();
		at = slots_hi;
	}
	if (with_pages && rtl_pageprot_init(at) < 0)
		return -1;
	at += with_pages ? rtl_pageprot_span() : 0;
	if (with_whole && rtl_whole_init(at) < 0)
		return -1;
	slots = with_slots;
	pages_mapped = with_pages;
	pagemap = rtl_arena_table(span / PAGE * sizeof(*pagemap));
	small_cap = (uint32_t)(rtl_maps_budget() + 1024);
	/* The free lists in one mapping: each is touched only as it fills. */
	big_free = rtl_arena_table(small_cap * (sizeof(*big_free) + SMALL * sizeof(uintptr_t)));
	for (int i = 1; big_free && i <= SMALL; i++)
		small_free[i] = (uintptr_t *)(big_free + small_cap) + (size_t)(i - 1) * small_cap;
	if (!pagemap || !big_free)
		return -1;
	bump = (uintptr_t)res;
	atomic_store(&base, (uintptr_t)res); /* rtl_alias_owns works from here */
	rtl_alias_traps_init((void *)res, span);
	/* After rtl's own (it started before us): in the child, rtl's
	 * handler has made the new memfd when ours runs. */
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	return 0;
}
