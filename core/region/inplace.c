/* Regions protected in place: a region that owns the pages it lies on may
 * keep every pointer in one view, its home, and have its protection set on
 * the home view's pages with mprotect instead of by moving pointers.
 *
 * Why: code rtl cannot rewrite (a program under the preload) keeps copies of
 * a block's address that no trap can reach and compares them with the
 * registers a trap moved (GNU sort's buffer limit, a loop's end pointer).
 * With the protection on the pages, no pointer ever changes view. The price
 * is one system call per protection change, so rtl does it only where it is
 * asked to (region_protect_in_place): for blocks of whole pages.
 *
 * The home pages map the region's bytes with the protection of r->view. The
 * order of each change keeps "r->view allows it" meaning "the pages allow
 * it" for the trap path: pages first when raising, r->view first when
 * lowering (a write landing in between is a write from before the change).
 * region_protect may run in a signal handler; mprotect and mmap are plain
 * system calls and the region's spin lock is the only lock held. */
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/prot/prot.h"
#include "core/region/inplace.h"
#include "core/region/pointers.h"
#include "core/region/records.h"
#include "core/region/rmap.h"
#include "core/region/views.h"
#include "core/start/init.h"
#include "core/start/stats.h"
#include "core/tag/tagged.h"
#include "core/util/page.h"

#define PAGE rtl_page_size()

/* Regions in place now: with none (most programs, and every small-block
 * policy), a new region cannot conflict, and define skips the look at its
 * pages' neighbours. */
static _Atomic long live_in_place;

struct span {
	uintptr_t addr; /* the home view's first page of r */
	size_t len;     /* whole pages through r's last byte */
	uint64_t off;   /* offset of that first page in the views */
};

static struct span home_pages(const struct rtl_region *r, int home)
{
	uint64_t lo = r->lo & ~(uint64_t)(PAGE - 1);
	uint64_t hi = (r->lo + r->span + PAGE - 1) & ~(uint64_t)(PAGE - 1);

	return (struct span){ rtl_view_base(home) + lo, hi - lo, lo };
}

/* Give r's home pages the protection of view v. The NONE view has no
 * backing until a region is put in place there: map the memfd first. */
static int set_pages(const struct rtl_region *r, int home, int v, int map)
{
	struct span s = home_pages(r, home);
	void *p;

	if (map) {
		p = mmap((void *)s.addr, s.len, rtl_view_prot(v),
		         MAP_SHARED | MAP_FIXED, rtl_views.fd, (off_t)s.off);
		return p == MAP_FAILED ? -1 : 0;
	}
	/* The views are no mapping of the backend's: mprotect. */
	return rtl_prot_set(s.addr, s.len, rtl_view_prot(v));
}

/* Whether another region lies on the pages r shares at either end. */
static int pages_shared(const struct rtl_region *r)
{
	struct span s = home_pages(r, 0);
	uint64_t end = s.off + s.len, rend = r->lo + r->span;

	return rtl_rmap_busy(s.off, r->lo - s.off) ||
	       rtl_rmap_busy(rend, end - rend);
}

int rtl_inplace_set(struct rtl_region *r, int home, int view)
{
	uint32_t fl = r->flags;

	/* Never the RW view: it stays rtl's own way to the bytes (twins,
	 * diffs, the kernel's side of a system call), writable whatever the
	 * region's protection. */
	if (home == RTL_VIEW_RW || atomic_load(&r->mixed) ||
	    (fl & RTL_REGION_IN_PLACE)) {
		errno = EINVAL;
		return -1;
	}
	/* A block of rtl's own allocator under a page shares its page with
	 * the buddy blocks beside it, free now or not. */
	if (pages_shared(r) || ((fl & RTL_REGION_OWNED) && r->span < PAGE)) {
		errno = EBUSY;
		return -1;
	}
	if ((home == RTL_VIEW_NONE || view != home) &&
	    set_pages(r, home, view, home == RTL_VIEW_NONE) < 0)
		return -1; /* errno from the kernel: ENOMEM past max_map_count */
	atomic_store(&r->view, view);
	atomic_fetch_add(&live_in_place, 1);
	__atomic_store_n(&r->flags,
	                 fl | RTL_REGION_IN_PLACE |
	                         (uint32_t)home << RTL_REGION_HOME_SHIFT,
	                 __ATOMIC_RELEASE);
	rtl_ptrs_swizzle(r, home); /* bound pointers live at home too */
	return 0;
}

/* Back to the view's own protection and an ordinary region (lock held).
 * A NONE home becomes reservation again, so that its mapping merges with
 * the rest instead of staying one more mapping per region ever protected
 * there. Pages first: until the flag goes, a fault there is still the
 * region's (the trap path re-syncs under this lock, then finds it
 * ordinary). */
static void unset(struct rtl_region *r, int home)
{
	struct span s = home_pages(r, home);

	if (home == RTL_VIEW_NONE)
		mmap((void *)s.addr, s.len, PROT_NONE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
	else
		set_pages(r, home, home, 0);
	__atomic_store_n(&r->flags, r->flags & ~(RTL_REGION_IN_PLACE | 3u << RTL_REGION_HOME_SHIFT),
	                 __ATOMIC_RELEASE);
	atomic_fetch_sub(&live_in_place, 1);
}

int rtl_inplace_protect(struct rtl_region *r, int view)
{
	int home = rtl_region_home(r);
	int cur = atomic_load(&r->view);

	if (home < 0)
		return -1;
	if (view == cur)
		return 0;
	if (view < cur) /* lowering: the trap path checks r->view first */
		atomic_store(&r->view, view);
	if (set_pages(r, home, view, 0) < 0) {
		/* Out of mappings (each changed region may split one): the
		 * region goes back to moving pointers, its pages to the home
		 * view's protection, its protection to the caller's. */
		atomic_store(&r->view, cur);
		unset(r, home);
		RTL_COUNT(in_place_failed);
		return -1;
	}
	atomic_store(&r->view, view);
	RTL_COUNT(in_place_protects);
	return 0;
}

void rtl_inplace_clear(struct rtl_region *r)
{
	int home = rtl_region_home(r);

	if (home >= 0)
		unset(r, home);
}

void rtl_inplace_resync(struct rtl_region *r)
{
	int home;

	if (rtl_lock_acquire(&r->lock) < 0)
		return; /* this thread holds it: nothing to repair here */
	home = rtl_region_home(r);
	if (home >= 0)
		set_pages(r, home, atomic_load(&r->view), 0);
	rtl_lock_release(&r->lock);
}

int rtl_inplace_end(struct rtl_region *r)
{
	int home = rtl_region_home(r);

	if (home < 0)
		return 0;
	unset(r, home);
	return 1;
}

int rtl_inplace_after_fork(struct rtl_region *r)
{
	int home = rtl_region_home(r);

	/* The child's views are a fresh memfd mapped over RO and RW with
	 * their own protections; a NONE home still maps the parent's file. */
	if (home >= 0 && (home == RTL_VIEW_NONE || atomic_load(&r->view) != home))
		return set_pages(r, home, atomic_load(&r->view),
		                 home == RTL_VIEW_NONE);
	return 0;
}

int rtl_inplace_conflict(uint64_t lo, uint64_t span)
{
	uint64_t first = lo & ~(uint64_t)(PAGE - 1);
	uint64_t last = (lo + span - 1) & ~(uint64_t)(PAGE - 1);
	uint64_t pages[2] = { first, last };

	if (!atomic_load(&live_in_place))
		return 0;
	for (int i = 0; i < (first == last ? 1 : 2); i++) {
		uint64_t off = pages[i], end = pages[i] + PAGE;

		while ((off = rtl_rmap_next(off, end)) < end) {
			struct rtl_region *r = rtl_rmap_get(off);

			if (r && rtl_region_home(r) >= 0)
				return 1;
			off = (off | (RTL_GRANULE - 1)) + 1;
		}
	}
	return 0;
}

int region_protect_in_place(void *addr, int prot)
{
	int view = rtl_prot_view(prot), rc;
	struct rtl_found f;
	rtl_shards_t s;

	if (rtl_ensure_init() < 0)
		return -1;
	if (view < 0 || (addr && rtl_tag_owns((uintptr_t)addr))) {
		errno = EINVAL;
		return -1;
	}
	if (!addr || rtl_region_find((uintptr_t)addr, &f) < 0) {
		errno = addr ? ENOENT : EINVAL;
		return -1;
	}
	if (f.off != f.r->lo) {
		errno = EINVAL;
		return -1;
	}
	/* Its pages' shards before its lock (records.h): no region is
	 * defined on its end pages between the look at them and the flag
	 * (define's own look, rtl_inplace_conflict, holds them too). The
	 * record's range is read before: a new generation under the lock
	 * means it was freed meanwhile. */
	s = rtl_shards_of(f.r->lo, f.r->span);
	rtl_shards_lock(s);
	if (rtl_region_lock(&f) < 0) {
		rtl_shards_unlock(s);
		return -1;
	}
	rc = rtl_inplace_set(f.r, f.view, view);
	rtl_lock_release(&f.r->lock);
	rtl_shards_unlock(s);
	return rc;
}
