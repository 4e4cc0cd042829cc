/* Slots: the arena's pool mapped RTL_SLOTS more times, side by side (the
 * auto mechanism, MultiView's idea without an mmap per object). The k-th
 * live selected block on a physical page is reached through the k-th copy:
 * its address is its own for its whole life, whatever its protection, and
 * a protection change is an mprotect of its pages in that copy alone (no
 * other block is reached through that copy there). Taking a copy is a
 * compare-and-swap on the page's bitmap; no system call unless the pages
 * must change protection, and then the call sets the free pages around
 * them in that copy too (a run), for the blocks handed out there next.
 *
 * Copies are mapped when first needed, lowest first: a process whose
 * blocks never share a page with more than a few others maps a few (each
 * mmap of a copy costs a few microseconds, at start and in every forked
 * child).
 *
 * Each copy is one mapping. Protection changes go through rtl's protection
 * backend (core/prot/prot.h), not the preload's mprotect: under page
 * tables a copy is mapped read-write and its pages carry their protection,
 * so the mapping is never split; under mprotect a page whose protection
 * differs from its neighbours' splits it (maps.c counts each live block as
 * two mappings against vm.max_map_count).
 * rtl_slot_protected runs in signal handlers: plain stores only. */
#include "preload/place/auto.h"

#include <assert.h>
#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/prot/prot.h"
#include "core/region/views.h"
#include "core/util/page.h"
#include "core/util/lock.h"
#include "core/util/relax.h"
#include "core/util/say.h"
#include "preload/place/arena.h"

#define PAGE rtl_page_size()
#define PAGE_SHIFT rtl_page_shift()
#define RW (PROT_READ | PROT_WRITE)

#define WORDS (RTL_SLOTS / 64)

static uintptr_t slots_base; /* copy k at slots_base + k * pool_len */
static uintptr_t pool_lo;    /* the pool, in the RW view */
static size_t pool_len;
static _Atomic uint64_t (*taken)[WORDS]; /* per pool page: copies in use */
/* Per pool page and copy: its protection plus one (0: never set, so the
 * copy's own, copy_prot; UNKNOWN after a failed mprotect). Written by the copy's taker; read by
 * choose() while other takers write theirs: relaxed atomics, plain moves. */
static _Atomic uint8_t *state;
/* Copies [0, nmapped) are mapped; more under map_lock (never in a signal
 * handler: rtl_slot_take runs in malloc, under the re-entrancy guard). */
static _Atomic int nmapped;
static struct rtl_lock map_lock = RTL_LOCK_INIT;
/* The protection each copy was mapped with: that of the block that found
 * no copy free, so that the blocks of a rule land in a copy whose pages
 * have their protection already (no mprotect, and no page of another
 * protection between its neighbours). */
static _Atomic uint8_t copy_prot[RTL_SLOTS];

size_t rtl_slots_span(void)
{
	uintptr_t lo;
	size_t len;

	rtl_arena_pool(&lo, &len);
	return (size_t)RTL_SLOTS * len;
}

int rtl_slots_init(uintptr_t base)
{
	size_t pages;

	rtl_arena_pool(&pool_lo, &pool_len);
	pages = pool_len / PAGE;
	taken = rtl_arena_table(pages * sizeof(*taken));
	state = rtl_arena_table(pages * RTL_SLOTS);
	if (!taken || !state) {
		errno = ENOMEM;
		return -1;
	}
	slots_base = base;
	return 0;
}

/* The protection a new copy is mapped with: under page tables always
 * read-write (write-protecting a whole copy would make page tables for all
 * of it; a block's pages get theirs as it takes them). */
static int mapping_prot(int prot)
{
	return rtl_prot_backend() == RTL_PROT_PAGE_TABLES ? RW : prot;
}

/* Map one more copy at prot, if no other thread did meanwhile (seen: how
 * many were mapped when the caller found none free). Whether there are
 * more now. */
static int map_more(int seen, int prot)
{
	int n;

	prot = mapping_prot(prot);
	rtl_lock_acquire(&map_lock);
	n = atomic_load_explicit(&nmapped, memory_order_relaxed);
	if (n == seen && n < RTL_SLOTS &&
	    rtl_arena_map_copy(slots_base + (uintptr_t)n * pool_len, prot) == 0) {
		atomic_store_explicit(&copy_prot[n], (uint8_t)prot, memory_order_relaxed);
		atomic_store_explicit(&nmapped, ++n, memory_order_release);
	}
	rtl_lock_release(&map_lock);
	return n > seen;
}

/* A state no protection has: the next taker sets the page's. */
#define UNKNOWN UINT8_MAX

static int prot_of(size_t page, int k)
{
	uint8_t s = atomic_load_explicit(&state[page * RTL_SLOTS + (size_t)k],
	                                 memory_order_relaxed);
	return s ? s - 1 : atomic_load_explicit(&copy_prot[k], memory_order_relaxed);
}

/* Pages [first, last) of copy k have prot; or, prot < 0, may have any
 * (a failed mprotect may have changed some): the next taker sets it. */
static void set_states(size_t first, size_t last, int k, int prot)
{
	for (size_t p = first; p < last; p++)
		atomic_store_explicit(&state[p * RTL_SLOTS + (size_t)k],
		                      prot < 0 ? UNKNOWN : (uint8_t)(prot + 1),
		                      memory_order_relaxed);
}

/* Release copy k on pages [first, last). */
static void give_pages(size_t first, size_t last, int k)
{
	uint64_t bit = (uint64_t)1 << (k % 64);

	for (size_t p = first; p < last; p++)
		atomic_fetch_and_explicit(&taken[p][k / 64], ~bit,
		                          memory_order_release);
}

/* Take copy k on page p: whether it was free. */
static int take_page(size_t p, int k)
{
	uint64_t bit = (uint64_t)1 << (k % 64);

	return !(atomic_fetch_or_explicit(&taken[p][k / 64], bit, memory_order_acquire) &
	         bit);
}

/* Take copy k on pages [first, last), all or none. */
static int take_pages(size_t first, size_t last, int k)
{
	for (size_t p = first; p < last; p++) {
		if (!take_page(p, k)) {
			give_pages(first, p, k);
			return -1;
		}
	}
	return 0;
}

/* The lowest copy free on every page of [first, last) whose pages already
 * have prot, else the lowest free one (fewer copies touched, fewer page
 * tables); -1 if none is free. */
static int choose(size_t first, size_t last, int prot)
{
	int any = -1, n = atomic_load_explicit(&nmapped, memory_order_acquire);

	for (int w = 0; w * 64 < n; w++) {
		uint64_t used = 0;
		for (size_t p = first; p < last; p++)
			used |= atomic_load_explicit(&taken[p][w], memory_order_relaxed);
		if (n - w * 64 < 64)
			used |= ~(uint64_t)0 << (n - w * 64); /* not mapped */
		for (uint64_t free = ~used; free; free &= free - 1) {
			int k = w * 64 + __builtin_ctzll(free);
			if (any < 0)
				any = k;
			if (prot_of(first, k) == prot && prot_of(last - 1, k) == prot)
				return k;
			if (k - any > 8)
				return any; /* not worth looking further */
		}
	}
	return any;
}

/* Pages of copy k this far on each side of a block are set with it when
 * its pages need an mprotect anyway: the call that sets one page sets a
 * run, and the blocks later handed out on those pages through copy k
 * need none (a block's life is then one grant's mprotect, the run's
 * shared by its pages). A page taken in copy k ends the run. */
#define RUN_PAGES 32

/* A run claims a page's copy only while the page has more free copies
 * than this: a block taking a copy there never finds them all taken
 * because of a run. */
#define RUN_SPARE 8

/* Runs between their claim and their release: a page whose copies all
 * look taken may be waiting for one of them (only under a race the
 * spare copies did not cover). */
static _Atomic unsigned runs_held;

/* Bits set in x, without -mpopcnt (x86-64's baseline has no popcnt:
 * __builtin_popcountll is then a libgcc call, 1.3 % of sqlite3's run
 * under the built-in policy). */
static inline int ones(uint64_t x)
{
	x -= x >> 1 & 0x5555555555555555ull;
	x = (x & 0x3333333333333333ull) + (x >> 2 & 0x3333333333333333ull);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
	return (int)(x * 0x0101010101010101ull >> 56);
}

static int spare_copies(size_t p)
{
	int unused = 0;

	for (int w = 0; w < WORDS && unused <= RUN_SPARE; w++)
		unused += ones(~atomic_load_explicit(&taken[p][w], memory_order_relaxed));
	return unused > RUN_SPARE;
}

static int claim(size_t p, int k)
{
	return spare_copies(p) && take_page(p, k);
}

/* Take copy k on the free pages before first and from last on, up to
 * RUN_PAGES each side: [*lo, *hi) is then the run, all of it taken, until
 * release_run. */
static void take_run(size_t first, size_t last, int k, size_t *lo, size_t *hi)
{
	size_t pages = pool_len >> PAGE_SHIFT;

	atomic_fetch_add_explicit(&runs_held, 1, memory_order_relaxed);
	*lo = first;
	*hi = last;
	while (*lo > 0 && first - *lo < RUN_PAGES && claim(*lo - 1, k))
		--*lo;
	while (*hi < pages && *hi - last < RUN_PAGES && claim(*hi, k))
		++*hi;
}

static void release_run(size_t first, size_t last, int k, size_t lo, size_t hi)
{
	give_pages(lo, first, k);
	give_pages(last, hi, k);
	atomic_fetch_sub_explicit(&runs_held, 1, memory_order_release);
}

/* Whether a run was held: then wait for the runs to end (bounded), and
 * look again. */
static int waited_for_runs(void)
{
	if (!atomic_load_explicit(&runs_held, memory_order_acquire))
		return 0;
	for (int i = 0; i < (1 << 16) && atomic_load_explicit(&runs_held, memory_order_acquire);
	     i++)
		rtl_cpu_relax();
	return 1;
}

uintptr_t rtl_slot_take(uintptr_t rw, size_t len, int prot)
{
	size_t first = (rw - pool_lo) >> PAGE_SHIFT;
	size_t last = ((rw - pool_lo + (len ? len : 1) - 1) >> PAGE_SHIFT) + 1;

	for (int tries = 0; tries < 64; tries++) {
		int seen = atomic_load_explicit(&nmapped, memory_order_acquire);
		int k = choose(first, last, prot), differ = 0;
		uintptr_t at;

		if (k < 0 && map_more(seen, prot))
			continue; /* a copy more */
		if (k < 0 && waited_for_runs())
			continue; /* a copy may have been a run's */
		if (k < 0) {
			/* Every copy mapped holds a live block on these pages,
			 * or no copy more could be mapped. */
			errno = atomic_load_explicit(&nmapped, memory_order_relaxed) >=
			                        RTL_SLOTS
			                ? EBUSY
			                : ENOMEM;
			return 0;
		}
		if (take_pages(first, last, k) < 0)
			continue; /* another thread took it: look again */
		at = slots_base + (uintptr_t)k * pool_len;
		for (size_t p = first; p < last; p++)
			differ |= prot_of(p, k) != prot;
		if (differ) {
			size_t lo, hi;
			long rc;

			take_run(first, last, k, &lo, &hi);
			rc = rtl_prot_set(at + lo * PAGE, (hi - lo) * PAGE, prot);
			if (rc < 0 && (lo < first || hi > last)) {
				/* Out of mappings, say: the block's pages alone.
				 * A failed call may have changed some pages. */
				set_states(lo, hi, k, -1);
				release_run(first, last, k, lo, hi);
				rc = rtl_prot_set(at + first * PAGE, (last - first) * PAGE,
				                  prot);
				if (rc == 0)
					set_states(first, last, k, prot);
			} else {
				/* The state before the pages go: their next
				 * taker reads it. */
				if (rc == 0)
					set_states(lo, hi, k, prot);
				release_run(first, last, k, lo, hi);
			}
			if (rc < 0) {
				set_states(first, last, k, -1);
				give_pages(first, last, k);
				errno = ENOMEM;
				return 0;
			}
		}
		return at + first * PAGE + (rw & (PAGE - 1));
	}
	errno = EBUSY; /* other threads kept taking what it found */
	return 0;
}

static void locate(uintptr_t addr, size_t len, size_t *first, size_t *last,
                   int *k)
{
	uintptr_t d = addr - slots_base;

	*k = (int)(d / pool_len);
	*first = (d % pool_len) >> PAGE_SHIFT;
	*last = ((d % pool_len + (len ? len : 1) - 1) >> PAGE_SHIFT) + 1;
}

int rtl_slot_copy_of(uintptr_t addr)
{
	uintptr_t d = addr - slots_base;

	return slots_base && d < (uintptr_t)RTL_SLOTS * pool_len ? (int)(d / pool_len) : -1;
}

void rtl_slot_give(uintptr_t addr, size_t len)
{
	size_t first, last;
	int k;

	locate(addr, len, &first, &last, &k);
	give_pages(first, last, k);
}

void rtl_slot_protected(uintptr_t addr, size_t len, int prot)
{
	size_t first, last;
	int k;

	locate(addr, len, &first, &last, &k);
	set_states(first, last, k, prot);
}

/* Copy k again over the child's file, whole, at prot: one mmap. */
static void remap(int k, int prot)
{
	static const char msg[] = "rtl: fork: cannot map the slots again in "
	                          "the child\n";

	if (rtl_arena_map_copy(slots_base + (uintptr_t)k * pool_len, prot) < 0) {
		rtl_say(msg, sizeof(msg) - 1);
		_exit(127);
	}
}

/* In the child, each copy mapped again at the protection most of its
 * live pages have (one mmap a copy), each run of live pages of another
 * protection set with one call; free pages take the copy's protection
 * (their own is no one's). A program that writes what it allocates has
 * its live blocks read-write, one whose blocks stay unwritten read-only: a
 * child costs a call a copy and few more either way.
 *
 * The tables are walked page by page, every copy of a page at once: a
 * page's states are one run of bytes and its copies in use four words,
 * where a walk copy by copy would read a cache line for every page of
 * every copy (a fork of bash under auto spent 2.5 % of its run there).
 * Only copies with a live block, a run open or a state to clear are
 * visited. States are read before written: a page of the table is copied
 * for the child only where one changes. The child runs alone here: plain
 * reads of the tables. */
static_assert(sizeof(_Atomic uint8_t) == 1, "states are bytes");

/* Bit i set where byte i of x is not zero. */
static inline uint64_t bytes_set(uint64_t x)
{
	uint64_t high = (((x & 0x7f7f7f7f7f7f7f7full) + 0x7f7f7f7f7f7f7f7full) | x) &
	                0x8080808080808080ull;

	return (high >> 7) * 0x0102040810204080ull >> 56;
}

/* Copies of page p with a state set, of the 64 from w * 64. */
static uint64_t states_set(size_t p, int w)
{
	uint64_t words[8], set = 0;

	memcpy(words, (const void *)&state[p * RTL_SLOTS + (size_t)w * 64], sizeof(words));
	for (int i = 0; i < 8; i++)
		set |= bytes_set(words[i]) << (8 * i);
	return set;
}

/* Copy k's run of live pages [from, to) at prot, set again. */
static void fork_run(int k, size_t from, size_t to, int prot)
{
	uintptr_t copy = slots_base + (uintptr_t)k * pool_len;

	if (rtl_prot_set(copy + from * PAGE, (to - from) * PAGE, prot) < 0)
		set_states(from, to, k, -1); /* alias.c sets them */
}

/* The walk's own tables: static, not on a stack that may be a small
 * alternate one; each child has its own. */
static size_t fork_rw[RTL_SLOTS], fork_other[RTL_SLOTS], fork_run_at[RTL_SLOTS];
static uint8_t fork_mp[RTL_SLOTS];

static void fork_copies(int n, size_t used)
{
	size_t *rw = fork_rw, *other = fork_other, *run = fork_run_at;
	uint8_t *mp = fork_mp;
	uint64_t open[WORDS] = { 0 }, mapped[WORDS];

	memset(fork_rw, 0, sizeof(fork_rw));
	memset(fork_other, 0, sizeof(fork_other));

	for (int w = 0; w < WORDS; w++)
		mapped[w] = n >= (w + 1) * 64 ? ~(uint64_t)0
		            : n > w * 64      ? ~(~(uint64_t)0 << (n - w * 64))
		                              : 0;
	for (size_t p = 0; p < used; p++)
		for (int w = 0; w < WORDS; w++)
			for (uint64_t live = atomic_load_explicit(&taken[p][w], memory_order_relaxed) &
			                     mapped[w];
			     live; live &= live - 1) {
				int k = w * 64 + __builtin_ctzll(live);
				*(prot_of(p, k) == RW ? &rw[k] : &other[k]) += 1;
			}
	for (int k = 0; k < n; k++) {
		mp[k] = (uint8_t)(rw[k] >= other[k]
		                          ? RW
		                          : mapping_prot(atomic_load_explicit(
		                                    &copy_prot[k], memory_order_relaxed)));
		remap(k, mp[k]);
	}
	for (size_t p = 0; p <= used; p++) {
		for (int w = 0; w < WORDS; w++) {
			uint64_t live = p < used ? atomic_load_explicit(&taken[p][w],
			                                                memory_order_relaxed) &
			                                   mapped[w]
			                         : 0;
			uint64_t visit = live | open[w] | (p < used ? states_set(p, w) & mapped[w] : 0);

			for (; visit; visit &= visit - 1) {
				int j = __builtin_ctzll(visit), k = w * 64 + j;
				uint64_t bit = (uint64_t)1 << j;
				int is_live = !!(live & bit), pr = is_live ? prot_of(p, k) : mp[k];
				_Atomic uint8_t *s = p < used ? &state[p * RTL_SLOTS + (size_t)k] : NULL;

				if (is_live && pr != mp[k] && !atomic_load_explicit(s, memory_order_relaxed))
					atomic_store_explicit(s, (uint8_t)(pr + 1), memory_order_relaxed);
				else if (s && !is_live && atomic_load_explicit(s, memory_order_relaxed))
					atomic_store_explicit(s, 0, memory_order_relaxed);
				if ((open[w] & bit) && is_live && pr != mp[k] && pr == prot_of(run[k], k))
					continue;
				if (open[w] & bit)
					fork_run(k, run[k], p, prot_of(run[k], k));
				if (is_live && pr != mp[k])
					open[w] |= bit;
				else
					open[w] &= ~bit;
				run[k] = p;
			}
		}
	}
	for (int k = 0; k < n; k++)
		atomic_store_explicit(&copy_prot[k], mp[k], memory_order_relaxed);
}

void rtl_slots_forked(void)
{
	int n = atomic_load_explicit(&nmapped, memory_order_relaxed);
	size_t used = (rtl_arena_used() + PAGE - 1) >> PAGE_SHIFT;

	fork_copies(n, used);
	/* Runs other threads held at the fork have no thread to end them
	 * here: their pages stay taken (at most 2 * RUN_PAGES of one copy
	 * each, lost to the child), and no take may wait for them. */
	atomic_store_explicit(&runs_held, 0, memory_order_relaxed);
	rtl_lock_release(&map_lock); /* taken by rtl_slots_fork_prepare */
}

_Atomic uint64_t rtl_slots_opened;

int rtl_slot_open_copy(uintptr_t addr)
{
	size_t first, last;
	int k;

	locate(addr, 1, &first, &last, &k);
	/* The copy's own bounds: no mapping is split, only merged. */
	if (rtl_prot_set(slots_base + (uintptr_t)k * pool_len, pool_len, RW) < 0)
		return -1;
	set_states(0, (rtl_arena_used() + PAGE - 1) >> PAGE_SHIFT, k, RW);
	atomic_store_explicit(&copy_prot[k], RW, memory_order_relaxed);
	atomic_fetch_add_explicit(&rtl_slots_opened, 1, memory_order_relaxed);
	return 0;
}

void rtl_slots_fork_prepare(void)
{
	rtl_lock_acquire(&map_lock);
}

void rtl_slots_fork_parent(void)
{
	rtl_lock_release(&map_lock);
}

int rtl_slot_has_prot(uintptr_t addr, size_t len, int prot)
{
	size_t first, last;
	int k;

	locate(addr, len, &first, &last, &k);
	for (size_t p = first; p < last; p++)
		if (prot_of(p, k) != prot)
			return 0;
	return 1;
}
