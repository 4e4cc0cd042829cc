/* mprotect, interposed. Outside rtl's views it passes through. Inside, the
 * kernel gets the program's protection clipped to the view's own (the RO
 * and NONE views never become writable or readable under a region), and
 * the preload remembers what the program asked for: a fault that the
 * program's own protection refuses is the program's (its handler runs),
 * not a region trap.
 *
 * The table is written by mprotect callers under a spin flag and read
 * lock-free by the fault filter, which runs in the SIGSEGV handler: a
 * sequence count (odd while a writer changes it) tells the reader to look
 * again. No malloc anywhere here. */
#include "preload/shim/mprotect.h"

#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/region/placement.h"
#include "core/region/views.h"
#include "core/start/init.h"
#include "core/util/lock.h"
#include "core/util/page.h"
#include "preload/engine/engine.h"
#include "preload/place/alias.h"
#include "preload/place/heap.h"
#include "preload/shim/next.h"

#define API __attribute__((visibility("default")))
#define MAX_RANGES 256
#define PAGE rtl_page_size()

struct range {
	_Atomic uintptr_t lo, hi;
	_Atomic int prot; /* as the program set it */
};

static struct range ranges[MAX_RANGES];
static _Atomic int nranges;
static _Atomic unsigned seq;
static struct rtl_lock busy = RTL_LOCK_INIT;
static RTL_TLS int updating; /* this thread is inside update() */

/* ---- the table (writers hold busy, seq is odd) ---- */

static void set(int i, uintptr_t lo, uintptr_t hi, int prot)
{
	atomic_store_explicit(&ranges[i].lo, lo, memory_order_relaxed);
	atomic_store_explicit(&ranges[i].hi, hi, memory_order_relaxed);
	atomic_store_explicit(&ranges[i].prot, prot, memory_order_relaxed);
}

static int append(uintptr_t lo, uintptr_t hi, int prot)
{
	int n = atomic_load_explicit(&nranges, memory_order_relaxed);

	if (n == MAX_RANGES)
		return -1; /* full: the range stays rtl's (documented) */
	set(n, lo, hi, prot);
	atomic_store_explicit(&nranges, n + 1, memory_order_relaxed);
	return 0;
}

/* Forget [lo, hi) in every range. */
static void cut(uintptr_t lo, uintptr_t hi)
{
	for (int i = 0; i < atomic_load_explicit(&nranges, memory_order_relaxed);) {
		uintptr_t rlo = atomic_load_explicit(&ranges[i].lo, memory_order_relaxed);
		uintptr_t rhi = atomic_load_explicit(&ranges[i].hi, memory_order_relaxed);
		int rprot = atomic_load_explicit(&ranges[i].prot, memory_order_relaxed);
		int last = atomic_load_explicit(&nranges, memory_order_relaxed) - 1;

		if (rhi <= lo || rlo >= hi) {
			i++;
		} else if (rlo >= lo && rhi <= hi) { /* inside: drop it */
			set(i, atomic_load(&ranges[last].lo),
			    atomic_load(&ranges[last].hi),
			    atomic_load(&ranges[last].prot));
			atomic_store_explicit(&nranges, last, memory_order_relaxed);
		} else if (rlo < lo && rhi > hi) { /* around: split */
			set(i, rlo, lo, rprot);
			append(hi, rhi, rprot);
			i++;
		} else {
			set(i, rlo < lo ? rlo : hi, rlo < lo ? lo : rhi, rprot);
			i++;
		}
	}
}

/* The program set prot on [lo, hi), page-aligned, inside the views. A
 * range it made fully accessible claims no fault: it is forgotten. */
static void update(uintptr_t lo, uintptr_t hi, int prot)
{
	if (updating)
		return; /* an mprotect in a signal handler that interrupted one */
	updating = 1;
	rtl_lock_acquire(&busy);
	atomic_fetch_add_explicit(&seq, 1, memory_order_relaxed); /* odd */
	atomic_thread_fence(memory_order_release);
	cut(lo, hi);
	prot &= PROT_READ | PROT_WRITE;
	if (prot != (PROT_READ | PROT_WRITE))
		append(lo, hi, prot);
	atomic_fetch_add_explicit(&seq, 1, memory_order_release); /* even */
	rtl_lock_release(&busy);
	updating = 0;
}

/* fork: the child must not inherit a writer's busy flag. */
void rtl_mprotect_fork_prepare(void)
{
	if (!updating)
		rtl_lock_acquire(&busy);
}

void rtl_mprotect_fork_done(void)
{
	if (!updating)
		rtl_lock_release(&busy);
}

/* ---- the fault filter (signal handler) ---- */

/* Whether a range the program protected refuses this access. */
static int scan(uintptr_t a, int write)
{
	int n = atomic_load_explicit(&nranges, memory_order_relaxed);

	for (int i = 0; i < n && i < MAX_RANGES; i++) {
		uintptr_t lo = atomic_load_explicit(&ranges[i].lo,
		                                    memory_order_relaxed);
		uintptr_t hi = atomic_load_explicit(&ranges[i].hi,
		                                    memory_order_relaxed);
		int prot = atomic_load_explicit(&ranges[i].prot,
		                                memory_order_relaxed);
		if (a - lo < hi - lo)
			return !(prot & (write ? PROT_WRITE : PROT_READ));
	}
	return 0;
}

int rtl_mprotect_claims(void *addr, int write)
{
	uintptr_t a = (uintptr_t)addr;

	for (int tries = 0; tries < 1000; tries++) {
		unsigned s = atomic_load_explicit(&seq, memory_order_acquire);
		int hit;

		if (s & 1) {
			if (updating)
				break; /* we interrupted our own writer */
			continue;
		}
		hit = scan(a, write);
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(&seq, memory_order_relaxed) == s)
			return hit;
	}
	return scan(a, write); /* best effort */
}

/* ---- the interposed call ---- */

static int real_mprotect(uintptr_t lo, uintptr_t hi, int prot)
{
	const struct rtl_next *n = rtl_next();

	if (lo >= hi)
		return 0;
	if (n)
		return n->mprotect((void *)lo, hi - lo, prot);
	return (int)syscall(SYS_mprotect, (void *)lo, hi - lo, prot);
}

/* What the kernel gets for a view: never more than the view itself allows,
 * so that a program raising the protection of its page cannot open the RO
 * or NONE view under a region. */
static int view_prot(int view, int prot)
{
	return view == 0 ? PROT_NONE : view == 1 ? prot & ~PROT_WRITE
	                                         : prot;
}

API int mprotect(void *addr, size_t len, int prot)
{
	uintptr_t base, lo = (uintptr_t)addr, hi, end;
	size_t view;

	if (rtl_engine.policy.mprotect_log)
		atomic_fetch_add_explicit(&rtl_totals.mprotect_calls, 1,
		                          memory_order_relaxed);
	if (!len || !rtl_started() || (lo & (PAGE - 1)))
		return real_mprotect(lo, lo + len, prot); /* EINVAL if unaligned */
	base = rtl_views.base;
	view = rtl_views.size;
	end = base + RTL_NVIEWS * view;
	hi = lo + ((len + PAGE - 1) & ~(uintptr_t)(PAGE - 1));
	/* Blocks in the copies and aliases give their pages up to the
	 * program, as blocks protected in place in the views do below. */
	if (hi > lo)
		rtl_alias_take_over(lo, hi);
	if (hi < lo || hi <= base || lo >= end)
		return real_mprotect(lo, lo + len, prot);
	/* Outside the views as asked; each view clipped to its own. */
	if (real_mprotect(lo, lo < base ? base : lo, prot) < 0 ||
	    real_mprotect(hi > end ? end : hi, hi, prot) < 0)
		return -1;
	for (int v = 0; v < RTL_NVIEWS; v++) {
		uintptr_t vlo = rtl_view_base(v), vhi = vlo + view;
		uintptr_t a = lo > vlo ? lo : vlo, b = hi < vhi ? hi : vhi;

		if (a >= b)
			continue;
		/* The program's protection of these pages is its own from now
		 * on: blocks protected in place there go back to moving
		 * pointers (docs/mechanisms.md, "Blocks of whole pages"). */
		rtl_in_place_end((void *)a, b - a, rtl_heap_left_in_place);
		if (real_mprotect(a, b, view_prot(v, prot)) < 0)
			return -1;
	}
	update(lo > base ? lo : base, hi < end ? hi : end, prot);
	return 0;
}
