/* jemalloc arenas whose extents are carved from rtl's RW view.
 *
 * jemalloc is a private copy linked into the preload (Debian's
 * libjemalloc_pic.a with its public names renamed rtl_je_*, see
 * jemalloc-private.sh): it interposes nothing and starts only here. The
 * extent hooks take no lock and call nothing that does (a bump pointer over
 * one range reserved at start, hole punching to purge), so jemalloc's locks
 * and rtl's never nest.
 *
 * jemalloc starts at the first selected block, not with the process: its
 * start is some 150 us of page faults and system calls that a process
 * selecting nothing never needs. It may then start in any thread, or in a
 * program's fork handler, so its fork handlers are not registered with
 * libc (jemalloc-private.sh renames its pthread_atfork to
 * rtl_je_pthread_atfork) but run from the arenas' own, registered at the
 * preload's start: the start lock first, jemalloc's locks inside it, as
 * when jemalloc started first. A fork waits for a start under way. */
#include "preload/place/arena.h"

#include <errno.h>
#include <jemalloc/jemalloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/prot/prot.h"
#include "core/region/placement.h"
#include "core/region/views.h"
#include "core/util/page.h"
#include "preload/engine/tally.h"
#include "preload/shim/next.h"

/* The private jemalloc's entry points. */
void *rtl_je_mallocx(size_t size, int flags);
void rtl_je_dallocx(void *ptr, int flags);
size_t rtl_je_sallocx(const void *ptr, int flags);
size_t rtl_je_nallocx(size_t size, int flags);
int rtl_je_mallctl(const char *name, void *oldp, size_t *oldlenp, void *newp,
                   size_t newlen);
extern void (*rtl_je_malloc_message)(void *, const char *);
/* What the private jemalloc calls in place of pthread_atfork. */
int rtl_je_pthread_atfork(void (*prepare)(void), void (*parent)(void),
                          void (*child)(void));

/* Its options, read before MALLOC_CONF: thread caches (every block this
 * jemalloc hands out is the pool's, whichever of rtl's arenas made it, so a
 * cached block serves any of them; jemalloc flushes a thread's cache when
 * the thread ends), one automatic arena (never used), no background
 * threads. */
const char *rtl_je_malloc_conf =
        "tcache:true,narenas:1,background_thread:false";

#define MAX_ARENAS 8

static unsigned arena_ind[MAX_ARENAS];
static unsigned narenas;

_Atomic uint64_t rtl_arena_extents;

/* ---- extent hooks: the range reserved in the RW view ---- */

static uintptr_t pool_lo, pool_hi;
static _Atomic uintptr_t pool_next;

static void *ext_alloc(extent_hooks_t *h, void *new_addr, size_t size,
                       size_t align, bool *zero, bool *commit, unsigned ind)
{
	uintptr_t at, start;

	(void)h, (void)ind;
	if (align < rtl_page_size())
		align = rtl_page_size();
	at = atomic_load(&pool_next);
	do {
		start = (at + align - 1) & ~(uintptr_t)(align - 1);
		/* A fixed address (growing in place) only at the pool's top. */
		if (new_addr && (uintptr_t)new_addr != start)
			return NULL;
		if (start < at || start > pool_hi || size > pool_hi - start)
			return NULL;
	} while (!atomic_compare_exchange_weak(&pool_next, &at, start + size));
	/* The file behind the views grows with the pool (views.h); the
	 * address range is lost if it cannot, as on any ENOMEM here. */
	if (rtl_views_commit(rtl_view_offset(start + size, RTL_VIEW_RW)) < 0)
		return NULL;
	atomic_fetch_add_explicit(&rtl_arena_extents, 1, memory_order_relaxed);
	*zero = true; /* reserved view memory reads as zero */
	*commit = true;
	return (void *)start;
}

/* Never unmap: jemalloc keeps the extent (retain) and purges it instead. */
static bool ext_dalloc(extent_hooks_t *h, void *addr, size_t size,
                       bool committed, unsigned ind)
{
	(void)h, (void)addr, (void)size, (void)committed, (void)ind;
	return true;
}

static void ext_destroy(extent_hooks_t *h, void *addr, size_t size,
                        bool committed, unsigned ind)
{
	(void)h, (void)committed, (void)ind;
	rtl_release(addr, size);
}

/* Punch the pages out of the memfd: they read as zero afterwards. */
static bool ext_purge(extent_hooks_t *h, void *addr, size_t size,
                      size_t offset, size_t length, unsigned ind)
{
	(void)h, (void)size, (void)ind;
	return rtl_release((char *)addr + offset, length) != 0;
}

static bool ext_split(extent_hooks_t *h, void *addr, size_t size,
                      size_t size_a, size_t size_b, bool committed,
                      unsigned ind)
{
	(void)h, (void)addr, (void)size, (void)size_a, (void)size_b;
	(void)committed, (void)ind;
	return false; /* any split is fine: the view is mapped throughout */
}

static bool ext_merge(extent_hooks_t *h, void *addr_a, size_t size_a,
                      void *addr_b, size_t size_b, bool committed,
                      unsigned ind)
{
	(void)h, (void)addr_a, (void)size_a, (void)addr_b, (void)size_b;
	(void)committed, (void)ind;
	return false;
}

static extent_hooks_t hooks = {
	.alloc = ext_alloc,
	.dalloc = ext_dalloc,
	.destroy = ext_destroy,
	.purge_forced = ext_purge,
	.split = ext_split,
	.merge = ext_merge,
};

/* ---- arenas ---- */

/* jemalloc 5.3's arena_config_t (experimental.arenas_create_ext). */
struct je_arena_config {
	extent_hooks_t *extent_hooks;
	bool metadata_use_hooks;
};

/* One arena on the hooks, its metadata from jemalloc's own mmap'ed base so
 * that no region ever sits beside it; plain arenas.create (metadata through
 * the hooks, still outside every region) if this jemalloc lacks that. */
static int create_arena(unsigned *ind)
{
	struct je_arena_config cfg = { &hooks, false };
	extent_hooks_t *hp = &hooks;
	size_t sz = sizeof(*ind);
	int e;

	e = rtl_je_mallctl("experimental.arenas_create_ext", ind, &sz, &cfg,
	                   sizeof(cfg));
	if (e == ENOENT) {
		sz = sizeof(*ind);
		e = rtl_je_mallctl("arenas.create", ind, &sz, &hp, sizeof(hp));
	}
	if (e) {
		errno = e;
		return -1;
	}
	return 0;
}

/* jemalloc and the arenas start at the first selected block
 * (arenas_start), under arenas_lock. */
static _Atomic int arenas_ready;
static pthread_mutex_t arenas_lock = PTHREAD_MUTEX_INITIALIZER;

/* jemalloc's fork handlers, given to rtl_je_pthread_atfork as it starts
 * (under arenas_lock, which every fork takes first: they do not change
 * while a fork runs them). */
static void (*je_prepare)(void), (*je_parent)(void), (*je_child)(void);

int rtl_je_pthread_atfork(void (*prepare)(void), void (*parent)(void),
                          void (*child)(void))
{
	je_prepare = prepare;
	je_parent = parent;
	je_child = child;
	return 0;
}

static void arenas_fork_prepare(void)
{
	pthread_mutex_lock(&arenas_lock);
	if (je_prepare)
		je_prepare();
}

static void arenas_fork_parent(void)
{
	if (je_parent)
		je_parent();
	pthread_mutex_unlock(&arenas_lock);
}

static void arenas_fork_child(void)
{
	if (je_child)
		je_child();
	pthread_mutex_unlock(&arenas_lock);
}

/* Largest small size class (rtl_arena_init); SIZE_MAX: not known. */
static size_t small_max = SIZE_MAX;

static void quiet(void *opaque, const char *s)
{
	(void)opaque, (void)s; /* nothing printed unless asked */
}

int rtl_arena_init(void)
{
	size_t got = 0;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	void *pool;

	rtl_je_malloc_message = quiet;
	/* Half the views' offset space; the rest stays for region_alloc. */
	pool = rtl_reserve_pool(rtl_views.size / 2, &got);
	if (!pool)
		return -1;
	atomic_store(&pool_next, (uintptr_t)pool);
	pool_lo = (uintptr_t)pool;
	pool_hi = pool_lo + got;

	narenas = ncpu < 1 ? 1 : ncpu > MAX_ARENAS ? MAX_ARENAS
	                                           : (unsigned)ncpu;
	/* Now, before any thread can start jemalloc: a fork that runs while
	 * it starts waits for it. */
	pthread_atfork(arenas_fork_prepare, arenas_fork_parent, arenas_fork_child);
	return 0;
}

/* The largest size class jemalloc packs into shared slabs; above it,
 * every allocation has an extent of its own. */
static void small_max_find(void)
{
	unsigned nbins = 0;
	size_t nbins_sz = sizeof(nbins);

	if (rtl_je_mallctl("arenas.nbins", &nbins, &nbins_sz, NULL, 0) == 0 &&
	    nbins > 0) {
		char name[64];
		size_t sz = sizeof(small_max);

		snprintf(name, sizeof(name), "arenas.bin.%u.size", nbins - 1);
		if (rtl_je_mallctl(name, &small_max, &sz, NULL, 0) != 0)
			small_max = SIZE_MAX;
	}
}

/* jemalloc and the arenas, at the first block (arenas_lock held): a
 * process that selects no block never pays for them. */
static int arenas_start(void)
{
	int rc = 0;

	pthread_mutex_lock(&arenas_lock);
	if (!atomic_load_explicit(&arenas_ready, memory_order_relaxed)) {
		/* nallocx starts jemalloc; small_max_find's mallctl its
		 * statistics. */
		if (!rtl_je_nallocx(1, 0))
			rc = -1;
		else
			small_max_find();
		for (unsigned i = 0; i < narenas && rc == 0; i++)
			rc = create_arena(&arena_ind[i]);
		if (rc == 0)
			atomic_store_explicit(&arenas_ready, 1, memory_order_release);
	}
	pthread_mutex_unlock(&arenas_lock);
	return rc;
}

/* Threads spread over the arenas as over the counter stripes (tally.h):
 * round-robin, each keeping its own. */
static int arena_flag(void)
{
	return MALLOCX_ARENA(arena_ind[rtl_stripe_index() % narenas]);
}

void *rtl_arena_alloc(size_t size, size_t align, int zero)
{
	int flags;
	void *rw;

	if (!atomic_load_explicit(&arenas_ready, memory_order_acquire) &&
	    arenas_start() < 0)
		return NULL;
	flags = arena_flag() | (zero ? MALLOCX_ZERO : 0);

	/* jemalloc's size classes are naturally aligned (a class that is a
	 * multiple of 2^k starts on a multiple of 2^k), so a size that is a
	 * multiple of align gets it without the alignment flag, which alone
	 * sends mallocx down its aligned path: some 50 instructions more a
	 * call (callgrind, rtl-malloc-bench). Checked all the same: a block
	 * that is not aligned goes back, and is asked for with the flag. */
	if ((size & (align - 1)) == 0) { /* align: a power of two */
		rw = rtl_je_mallocx(size, flags);
		if (((uintptr_t)rw & (align - 1)) == 0) /* NULL too */
			return rw;
		rtl_je_dallocx(rw, 0);
	}
	return rtl_je_mallocx(size, flags | MALLOCX_ALIGN(align));
}

void rtl_arena_pool(uintptr_t *lo, size_t *len)
{
	*lo = pool_lo;
	*len = pool_hi - pool_lo;
}

size_t rtl_arena_used(void)
{
	return atomic_load_explicit(&pool_next, memory_order_acquire) - pool_lo;
}

int rtl_arena_map_copy(uintptr_t at, int prot)
{
	off_t off = (off_t)rtl_view_offset(pool_lo, RTL_VIEW_RW);

	/* Through the protection backend: under page tables its
	 * protection changes need no mapping of their own. */
	return rtl_prot_map(at, pool_hi - pool_lo, rtl_views.fd, off, prot);
}

void *rtl_arena_table(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

int rtl_arena_owns(const void *rw)
{
	return (uintptr_t)rw - pool_lo < pool_hi - pool_lo;
}

void rtl_arena_free(void *rw)
{
	rtl_je_dallocx(rw, 0);
}

size_t rtl_arena_usable(const void *rw)
{
	return rtl_je_sallocx(rw, 0);
}

int rtl_arena_owns_pages(const void *rw)
{
	size_t usable = rtl_je_sallocx(rw, 0);

	/* A large size class is an extent of its own; a small one owns its
	 * pages when it is whole pages at a page boundary (slabs are
	 * page-aligned and their items of a page multiple stay so). */
	return usable > small_max ||
	       ((uintptr_t)rw % rtl_page_size() == 0 &&
	        usable % rtl_page_size() == 0);
}

size_t rtl_arena_good_size(size_t size, size_t align)
{
	return rtl_je_nallocx(size, MALLOCX_ALIGN(align));
}
