/* Blocks of whole pages under page-table protection: the auto mechanism's
 * blocks of a page and more, when protection lives in the page tables
 * (core/prot/prot.h), are reached through one more copy of the arena's
 * pool instead of being protected in place in rtl's views. The views are
 * read-only and no-access mappings, whose pages only mprotect can raise,
 * splitting the view's mapping at each block; this copy is mapped
 * read-write once and each block's pages carry its protection in the page
 * tables. A block owns its pages, so its address in the copy is the pool's
 * offset: no bitmap, no search, no mapping of its own.
 *
 * A byte per page remembers its protection, for the next block there.
 * rtl_whole_protect runs in signal handlers: the backend's call and plain
 * stores. */
#include "preload/place/whole.h"

#include <errno.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/prot/prot.h"
#include "core/util/page.h"
#include "core/util/say.h"
#include "preload/place/arena.h"

#define PAGE rtl_page_size()
#define PAGE_SHIFT rtl_page_shift()
#define RW (PROT_READ | PROT_WRITE)

static uintptr_t copy_base; /* 0 until mapped */
static uintptr_t pool_lo;   /* the pool, in the RW view */
static size_t pool_len;
static _Atomic uint8_t *state; /* per page: its protection + 1 (0: never set, RW) */

size_t rtl_whole_span(void)
{
	uintptr_t lo;
	size_t len;

	rtl_arena_pool(&lo, &len);
	return len;
}

int rtl_whole_init(uintptr_t base)
{
	rtl_arena_pool(&pool_lo, &pool_len);
	state = rtl_arena_table(pool_len / PAGE);
	if (!state) {
		errno = ENOMEM;
		return -1;
	}
	if (rtl_arena_map_copy(base, RW) < 0)
		return -1;
	copy_base = base;
	return 0;
}

int rtl_whole_on(void)
{
	return copy_base != 0;
}

int rtl_whole_owns(uintptr_t a)
{
	return copy_base && a - copy_base < pool_len;
}

static int prot_of(size_t p)
{
	uint8_t s = atomic_load_explicit(&state[p], memory_order_relaxed);

	return s ? s - 1 : RW;
}

void rtl_whole_protected(uintptr_t addr, size_t len, int prot)
{
	size_t first = (addr - copy_base) >> PAGE_SHIFT;
	size_t last = first + ((len + PAGE - 1) >> PAGE_SHIFT);

	for (size_t p = first; p < last; p++)
		atomic_store_explicit(&state[p], (uint8_t)(prot + 1), memory_order_relaxed);
}

int rtl_whole_protect(uintptr_t addr, size_t len, int prot)
{
	if (rtl_prot_set(addr, len, prot) < 0)
		return -1;
	rtl_whole_protected(addr, len, prot);
	return 0;
}

uintptr_t rtl_whole_take(uintptr_t rw, size_t len, int prot)
{
	uintptr_t at = copy_base + (rw - pool_lo);
	size_t first = (rw - pool_lo) >> PAGE_SHIFT;
	size_t last = first + ((len + PAGE - 1) >> PAGE_SHIFT);
	int differ = 0;

	for (size_t p = first; p < last && !differ; p++)
		differ = prot_of(p) != prot;
	if (differ && rtl_whole_protect(at, len, prot) < 0)
		return 0;
	return at;
}

void rtl_whole_forked(void)
{
	static const char msg[] = "rtl: fork: cannot map the copy of blocks of "
	                          "whole pages again in the child\n";

	if (!copy_base)
		return;
	size_t used = (rtl_arena_used() + PAGE - 1) >> PAGE_SHIFT, run = 0;

	if (rtl_arena_map_copy(copy_base, RW) < 0) {
		rtl_say(msg, sizeof(msg) - 1);
		_exit(127);
	}
	/* Read-write throughout now: each run of pages of one other
	 * protection gets it back in one call (a freed block's pages keep
	 * theirs too, as in the parent, for the next block there). */
	for (size_t p = 1; p <= used; p++) {
		if (p < used && prot_of(p) == prot_of(run))
			continue;
		if (prot_of(run) != RW && rtl_prot_set(copy_base + run * PAGE, (p - run) * PAGE,
		                                       prot_of(run)) < 0)
			for (size_t q = run; q < p; q++) /* the next taker sets them */
				atomic_store_explicit(&state[q], 0, memory_order_relaxed);
		run = p;
	}
}
