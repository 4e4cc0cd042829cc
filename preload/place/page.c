/* The page mechanism: what TreadMarks, libsigsegv and Boehm GC's dirty
 * bits do, on the very blocks the region mechanisms get, so that rtlctl
 * compare measures granularity and nothing else. Every block of a page
 * rule is reached through one more copy of the arena's pool, shared by
 * all of them: a protection change is one call of rtl's protection
 * backend (page tables or mprotect, core/prot/prot.h) over every page
 * holding the block there (neighbours included), and a fault grants the whole
 * page after the rule's actions for the block touched. A fault whose
 * block already allows the access on its own is still a trap; when the
 * page holds another block that does not allow it, it is a false-sharing
 * trap.
 *
 * The fault and access paths run in signal handlers: no malloc; the
 * record's lock, then the page's (striped spin locks, rtl's kind: held
 * around the protection call and the state, never across an access to the
 * copy). */
#include "preload/place/page.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/prot/prot.h"
#include "core/region/views.h"
#include "core/util/lock.h"
#include "core/util/page.h"
#include "core/util/say.h"
#include "preload/engine/actions.h"
#include "preload/engine/engine.h"
#include "preload/engine/epoch.h"
#include "preload/engine/reprotect.h"
#include "preload/place/arena.h"

#define PAGE rtl_page_size()
#define PAGE_SHIFT rtl_page_shift()
#define RW (PROT_READ | PROT_WRITE)
#define GRAIN 16 /* jemalloc's smallest size class: blocks start on one */
#define NLOCKS 1024
#define TWINS_MAX (1u << 18) /* pages twinned per epoch (1 GiB of 4 KiB) */

static uintptr_t copy_base; /* the copy; 0 until mapped */
static uintptr_t pool_lo;   /* the pool, in the RW view */
static size_t pool_len;
static uint8_t *state; /* per page: its protection + 1 (0: never set, RW) */
/* Per grain: the record index + 1 of the block that starts there, or
 * whose page starts there (a block spans it): a lookup scans back at
 * most one page. */
static _Atomic uint32_t *starts;
static struct rtl_lock locks[NLOCKS];

/* Dirty: a twin per page written since the last diff, and the list of
 * those pages (two lists: the epoch takes one while faults fill the
 * other). */
static unsigned char *twins;
static _Atomic uint8_t *twinned;
static uint32_t *twin_list[2], ntwin[2];
static int twin_active;
static struct rtl_lock twin_lock = RTL_LOCK_INIT;
static _Atomic uint64_t twins_lost; /* the list was full: not diffed */

size_t rtl_pageprot_span(void)
{
	uintptr_t lo;
	size_t len;

	rtl_arena_pool(&lo, &len);
	return len;
}

int rtl_pageprot_init(uintptr_t base)
{
	size_t pages;

	rtl_arena_pool(&pool_lo, &pool_len);
	pages = pool_len / PAGE;
	state = rtl_arena_table(pages);
	starts = rtl_arena_table(pool_len / GRAIN * sizeof(*starts));
	twinned = rtl_arena_table(pages);
	twins = rtl_arena_table(pool_len);
	twin_list[0] = rtl_arena_table(TWINS_MAX * sizeof(uint32_t));
	twin_list[1] = rtl_arena_table(TWINS_MAX * sizeof(uint32_t));
	if (!state || !starts || !twinned || !twins || !twin_list[0] ||
	    !twin_list[1]) {
		errno = ENOMEM;
		return -1;
	}
	copy_base = base;
	return rtl_arena_map_copy(copy_base, RW);
}

int rtl_pageprot_owns(uintptr_t a)
{
	return copy_base && a - copy_base < pool_len;
}

/* ---- pages ---- */

/* A page whose protection the program's own mprotect took over. */
#define PROGRAMS UINT8_MAX

static int prot_of(size_t p)
{
	return state[p] && state[p] != PROGRAMS ? state[p] - 1 : RW;
}

static int allows(int prot, int write)
{
	return write ? (prot & PROT_WRITE) != 0 : (prot & PROT_READ) != 0;
}

static struct rtl_lock *lock_of(size_t p)
{
	return &locks[p % NLOCKS];
}

/* Pages [first, last) get prot: one protection call for the run (their
 * locks held by the caller, or the pages are a block's own). 1 if it
 * changed anything, 0 if not, -1 if the kernel refused. */
static int set_run(size_t first, size_t last, int prot)
{
	int differ = 0;

	for (size_t p = first; p < last; p++)
		if (state[p] == PROGRAMS)
			return 0; /* the program's now */
	for (size_t p = first; p < last && !differ; p++)
		differ = prot_of(p) != prot;
	if (!differ)
		return 0;
	if (rtl_prot_set(copy_base + first * PAGE, (last - first) * PAGE, prot) < 0)
		return -1;
	for (size_t p = first; p < last; p++)
		state[p] = (uint8_t)(prot + 1);
	return 1;
}

/* Whether page p holds a live block other than rec for which test(block,
 * write) holds: the block that runs into the page, then each that starts
 * on it. */
static int any_other(size_t p, const struct rtl_rec *rec, int write,
                     int (*test)(const struct rtl_rec *, int))
{
	const struct rtl_rec *before = rtl_pageprot_find(copy_base + p * PAGE);
	size_t g0 = p * PAGE / GRAIN;

	if (before && before != rec && test(before, write))
		return 1;
	for (size_t g = g0; g < g0 + PAGE / GRAIN; g++) {
		uint32_t idx = atomic_load_explicit(&starts[g], memory_order_acquire);
		const struct rtl_rec *o = idx ? rtl_rec_at(idx - 1) : NULL;

		if (o && o != rec && atomic_load(&o->live) && test(o, write))
			return 1;
	}
	return 0;
}

static int forbids(const struct rtl_rec *o, int write)
{
	return !allows(atomic_load(&o->prot), write);
}

static int pinned(const struct rtl_rec *o, int write)
{
	(void)write;
	return atomic_load_explicit(&o->pins, memory_order_acquire) != 0;
}

/* Every page of [first, last) gets prot: a block's own pages in one call,
 * shared ones each under its lock, but for a page that holds a block a
 * system call is using (the kernel would find it protected: EFAULT). The
 * protection calls count as the rule's protection changes. */
static int set_pages(const struct rtl_rec *rec, size_t first, size_t last,
                     int prot)
{
	int rc = 0;

	if (rtl_arena_owns_pages(rec->rw)) {
		if ((rc = set_run(first, last, prot)) > 0)
			rtl_act_prot_changed(rec->rule);
		return rc < 0 ? -1 : 0;
	}
	for (size_t p = first; p < last && rc >= 0; p++) {
		rtl_lock_acquire(lock_of(p));
		if (prot == RW || !any_other(p, rec, 0, pinned))
			if ((rc = set_run(p, p + 1, prot)) > 0)
				rtl_act_prot_changed(rec->rule);
		rtl_lock_release(lock_of(p));
	}
	return rc < 0 ? -1 : 0;
}

/* ---- blocks ---- */

static uintptr_t copy_of(const struct rtl_rec *rec)
{
	return copy_base + ((uintptr_t)rec->rw - pool_lo);
}

static void page_span(const struct rtl_rec *rec, size_t *first, size_t *last)
{
	uintptr_t off = (uintptr_t)rec->rw - pool_lo;

	*first = off >> PAGE_SHIFT;
	*last = ((off + (rec->size ? rec->size : 1) - 1) >> PAGE_SHIFT) + 1;
}

/* Mark (idx) or clear (0) where rec starts, and each page start it spans. */
static void mark(const struct rtl_rec *rec, uint32_t idx)
{
	uintptr_t off = (uintptr_t)rec->rw - pool_lo;
	size_t first, last;

	page_span(rec, &first, &last);
	atomic_store_explicit(&starts[off / GRAIN], idx, memory_order_release);
	for (size_t p = first + 1; p < last; p++)
		atomic_store_explicit(&starts[p * PAGE / GRAIN], idx,
		                      memory_order_release);
}

uintptr_t rtl_pageprot_take(struct rtl_rec *rec, int prot)
{
	size_t first, last;

	page_span(rec, &first, &last);
	rec->alias = copy_base + first * PAGE;
	rec->pages = (uint32_t)(last - first);
	atomic_store(&rec->prot, prot);
	if (set_pages(rec, first, last, prot) < 0)
		return 0;
	mark(rec, rtl_rec_index(rec) + 1);
	return copy_of(rec);
}

void rtl_pageprot_give(struct rtl_rec *rec)
{
	mark(rec, 0);
}

struct rtl_rec *rtl_pageprot_find(uintptr_t a)
{
	size_t g = (a - copy_base) / GRAIN;

	if (!rtl_pageprot_owns(a))
		return NULL;
	for (size_t k = 0; k <= PAGE / GRAIN && k <= g; k++) {
		uint32_t idx = atomic_load_explicit(&starts[g - k],
		                                    memory_order_acquire);
		struct rtl_rec *rec;

		if (!idx)
			continue;
		rec = rtl_rec_at(idx - 1);
		if (!rec || !atomic_load_explicit(&rec->live, memory_order_acquire))
			return NULL;
		return a - copy_of(rec) < rec->size ? rec : NULL;
	}
	return NULL;
}

int rtl_pageprot_protect(struct rtl_rec *rec, int prot)
{
	size_t first, last;

	page_span(rec, &first, &last);
	atomic_store(&rec->prot, prot);
	return set_pages(rec, first, last, prot);
}

/* An epoch: the pages of rec that do not have prot get it, recorded first
 * (each under its lock, taken only if free: a trap holding one keeps it
 * for the next epoch), and are passed to add, for one call per run
 * (reprotect.c); a page a system call is using keeps its protection. The
 * pages passed. */
size_t rtl_pageprot_lower(const struct rtl_rec *rec, int prot,
                          void (*add)(uintptr_t at, size_t len, struct rtl_rec *rec))
{
	size_t first, last, n = 0;

	page_span(rec, &first, &last);
	for (size_t p = first; p < last; p++) {
		if (prot_of(p) == prot || state[p] == PROGRAMS || rtl_lock_try(lock_of(p)) < 0)
			continue;
		if (prot_of(p) != prot && (prot == RW || !any_other(p, rec, 0, pinned))) {
			state[p] = (uint8_t)(prot + 1);
			add(copy_base + p * PAGE, PAGE, NULL);
			n++;
		}
		rtl_lock_release(lock_of(p));
	}
	return n;
}

int rtl_pageprot_bridge(uintptr_t lo, uintptr_t hi, int prot)
{
	if (!rtl_pageprot_owns(lo) || !rtl_pageprot_owns(hi - 1) || (hi - lo) / PAGE > 4096)
		return 0;
	for (uintptr_t a = lo; a < hi; a += PAGE) {
		size_t p = (a - copy_base) >> PAGE_SHIFT;

		if (state[p] == PROGRAMS || prot_of(p) != prot)
			return 0;
	}
	return 1;
}

void rtl_pageprot_take_over(uintptr_t a)
{
	size_t p = (a - copy_base) >> PAGE_SHIFT;

	rtl_lock_acquire(lock_of(p));
	if (state[p] != PROGRAMS) {
		if (prot_of(p) != RW)
			rtl_prot_set(copy_base + p * PAGE, PAGE, RW);
		state[p] = PROGRAMS;
	}
	rtl_lock_release(lock_of(p));
}

/* ---- traps ---- */

/* Page p (twinned) goes on the list the next diff takes. */
static void requeue(size_t p)
{
	uint32_t n;

	rtl_lock_acquire(&twin_lock);
	n = ntwin[twin_active];
	if (n < TWINS_MAX) {
		twin_list[twin_active][n] = (uint32_t)p;
		ntwin[twin_active] = n + 1;
	} else {
		atomic_store(&twinned[p], 0);
		atomic_fetch_add(&twins_lost, 1);
	}
	rtl_lock_release(&twin_lock);
}

/* Page p is written for the first time since its last diff: its twin. */
static void twin(size_t p)
{
	if (atomic_exchange(&twinned[p], 1))
		return;
	memcpy(twins + p * PAGE, (void *)(pool_lo + p * PAGE), PAGE);
	requeue(p);
}

/* A trap on page p at a by rec (NULL: bytes of no live block), page and
 * record locked: the grant, or -1 if the access may not proceed. */
static int trap(struct rtl_rec *rec, size_t p, uintptr_t a, int write)
{
	int need = write ? RW : PROT_READ, grant;
	size_t offset;

	if (!rec) {
		/* A freed block's bytes, or a block's tail: no block's
		 * protection is at stake, so the page is all of it. */
		rtl_act_page_trap(NULL, 0, write, 1);
		return need;
	}
	offset = a - copy_of(rec);
	if (write && rtl_engine.rules[rec->rule].choice.track)
		twin(p);
	if (allows(atomic_load(&rec->prot), write)) {
		/* The block allows it on its own: a trap only the page has. */
		grant = rtl_act_page_trap(rec, offset, write,
		                          any_other(p, rec, write, forbids));
		return grant >= 0 && allows(grant, write) ? grant : need;
	}
	grant = rtl_act_trap(rec, offset, write);
	if (grant < 0 || !allows(grant, write))
		return -1; /* no grant: the program's own fault goes on */
	atomic_store(&rec->prot, grant);
	return grant;
}

/* The page was granted by another thread, or the kernel's protection and
 * the state disagree (a race with a block's own pages being set): the
 * state wins, so that the access cannot fault forever. */
static void resync(size_t p)
{
	rtl_prot_set(copy_base + p * PAGE, PAGE, prot_of(p));
	atomic_fetch_add_explicit(&rtl_totals.alias_stale, 1,
	                          memory_order_relaxed);
}

int rtl_pageprot_fault(uintptr_t a, int write)
{
	size_t p = (a - copy_base) >> PAGE_SHIFT;
	struct rtl_rec *rec = rtl_pageprot_find(a);
	int grant, ok = 1;

	if (rec) {
		rtl_rec_lock(rec);
		if (!atomic_load(&rec->live)) {
			rtl_rec_unlock(rec);
			rec = NULL;
		}
	}
	rtl_lock_acquire(lock_of(p));
	if (state[p] == PROGRAMS) {
		ok = 0; /* the program's own protection refused it */
	} else if (allows(prot_of(p), write)) {
		resync(p);
	} else if ((grant = trap(rec, p, a, write)) < 0) {
		ok = 0;
	} else if (set_run(p, p + 1, grant) < 0) {
		ok = 0; /* the kernel refused: the fault goes on as the program's */
	} else {
		rtl_act_prot_changed(rec ? rec->rule : -1);
		rtl_act_granted(rec, PAGE);
	}
	rtl_lock_release(lock_of(p));
	if (rec)
		rtl_rec_unlock(rec);
	return ok;
}

int rtl_pageprot_access(uintptr_t p, size_t len, int write)
{
	uintptr_t end = p + (len ? len : 1);
	const struct rtl_rec *rec;

	/* A length of 1 is a path name or a structure the wrapper did not
	 * size: the rest of its block, as the region mechanisms grant the
	 * whole block. Its first page alone left a name that crosses into
	 * the next page to EFAULT once an epoch had taken that page back
	 * ("bash: script: Bad address" under epoch = 1ms). */
	if (len <= 1 && (rec = rtl_pageprot_find(p)) && copy_of(rec) + rec->size > end)
		end = copy_of(rec) + rec->size;

	for (uintptr_t at = p; at < end; at = (at & ~(uintptr_t)(PAGE - 1)) + PAGE) {
		size_t page = (at - copy_base) >> PAGE_SHIFT;
		int ok;

		if (!rtl_pageprot_owns(at))
			return 0;
		/* The state under the page's lock: set_run changes the
		 * protection first and the state after, so a state read
		 * in between said a page the epoch had just taken back was
		 * still granted, and the kernel met it with EFAULT (bash,
		 * git, gawk under epoch = 1ms). The caller pinned the
		 * buffer's block: no epoch takes the page back after this. */
		rtl_lock_acquire(lock_of(page));
		ok = allows(prot_of(page), write);
		rtl_lock_release(lock_of(page));
		if (!ok && !rtl_pageprot_fault(at, write))
			return 0;
	}
	return 1;
}

int rtl_pageprot_repair(uintptr_t p, size_t len, int write)
{
	uintptr_t end = p + (len ? len : 1);
	int any = 0;

	for (uintptr_t at = p; at < end && rtl_pageprot_owns(at);
	     at = (at & ~(uintptr_t)(PAGE - 1)) + PAGE) {
		size_t page = (at - copy_base) >> PAGE_SHIFT;

		rtl_lock_acquire(lock_of(page));
		if (state[page] != PROGRAMS && allows(prot_of(page), write)) {
			resync(page);
			any = 1;
		}
		rtl_lock_release(lock_of(page));
	}
	return any;
}

/* ---- dirty ---- */

/* Page p (its lock held): diffed against its twin, and either done with
 * or, granted again since it was lowered (its next writes will not trap),
 * twinned anew now for the next diff. */
static void diff_page(size_t p)
{
	unsigned char *t = twins + p * PAGE;
	const unsigned char *now = (const unsigned char *)(pool_lo + p * PAGE);

	rtl_epoch_page_written(now, t, PAGE);
	if (prot_of(p) & PROT_WRITE) {
		memcpy(t, now, PAGE);
		requeue(p);
		return;
	}
	atomic_store(&twinned[p], 0);
	madvise(t, PAGE, MADV_DONTNEED);
}

static int by_page(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

void rtl_pageprot_diff(int relower)
{
	uint32_t *list, n, nlow = 0;

	if (!copy_base)
		return;
	rtl_lock_acquire(&twin_lock);
	list = twin_list[twin_active];
	n = ntwin[twin_active];
	twin_active ^= 1;
	ntwin[twin_active] = 0;
	rtl_lock_release(&twin_lock);
	if (!relower) { /* at exit: the diffs alone */
		for (uint32_t i = 0; i < n; i++) {
			rtl_lock_acquire(lock_of(list[i]));
			rtl_epoch_page_written((const unsigned char *)(pool_lo + list[i] * PAGE),
			                       twins + list[i] * PAGE, PAGE);
			rtl_lock_release(lock_of(list[i]));
		}
		return;
	}
	/* Lower first, recorded under each page's lock (taken only if free: a
	 * trap holding it, or a system call using the page, keeps the page
	 * for the next epoch); then one call per run of pages, no lock held;
	 * then the diffs. A write after the call traps and finds the page
	 * still twinned: no new twin until its diff below. */
	rtl_reprotect_lowering(1);
	for (uint32_t i = 0; i < n; i++) {
		size_t p = list[i];

		if (rtl_lock_try(lock_of(p)) < 0) {
			requeue(p);
			continue;
		}
		if (any_other(p, NULL, 0, pinned)) {
			requeue(p);
		} else {
			if (prot_of(p) & PROT_WRITE) {
				state[p] = (uint8_t)(PROT_READ + 1);
				rtl_act_prot_changed(-1);
			}
			list[nlow++] = (uint32_t)p; /* in place: i >= nlow */
		}
		rtl_lock_release(lock_of(p));
	}
	qsort(list, nlow, sizeof(*list), by_page);
	for (uint32_t i = 0, j; i < nlow; i = j) {
		for (j = i + 1; j < nlow && list[j] == list[j - 1] + 1; j++)
			;
		rtl_prot_set(copy_base + (uintptr_t)list[i] * PAGE,
		             (size_t)(list[j - 1] - list[i] + 1) * PAGE, PROT_READ);
	}
	rtl_reprotect_lowering(0);
	for (uint32_t i = 0; i < nlow; i++) {
		if (rtl_lock_try(lock_of(list[i])) < 0) {
			requeue(list[i]); /* diffed next epoch, against this twin */
			continue;
		}
		diff_page(list[i]);
		rtl_lock_release(lock_of(list[i]));
	}
}

/* ---- fork ---- */

void rtl_pageprot_forked(void)
{
	uint8_t *old = state, *now;

	for (int i = 0; i < NLOCKS; i++)
		rtl_lock_reset(&locks[i]);
	rtl_lock_reset(&twin_lock);
	if (!copy_base)
		return;
	if (rtl_arena_map_copy(copy_base, RW) < 0 || !(now = rtl_arena_table(pool_len / PAGE))) {
		static const char msg[] = "rtl: fork: cannot map the page "
		                          "mechanism's copy again in the child\n";
		rtl_say(msg, sizeof(msg) - 1);
		_exit(127);
	}
	/* The new copy is read-write everywhere: the live blocks' pages get
	 * their protection back; the pages of freed ones are read-write. */
	state = now;
	for (uint32_t i = 0; i < rtl_rec_count(); i++) {
		struct rtl_rec *rec = rtl_rec_at(i);
		size_t first, last;

		if (!atomic_load(&rec->live) || rec->mech != RTL_MECH_PAGE)
			continue;
		page_span(rec, &first, &last);
		for (size_t p = first; p < last; p++) {
			int prot = old[p] && old[p] != PROGRAMS ? old[p] - 1 : RW;

			if (old[p] == PROGRAMS)
				now[p] = PROGRAMS; /* the parent's program's; read-write here */
			else if (prot != RW && !now[p])
				set_run(p, p + 1, prot);
		}
	}
	munmap(old, pool_len / PAGE);
}
