/* The kernel's written bits: rtl's RO and RW views are registered with a
 * userfaultfd in asynchronous write-protect mode (Linux 6.7), the pages of
 * tracked regions are write-protected ("armed"), a write to one is
 * resolved inside the kernel (no signal) and leaves the page written, and
 * PAGEMAP_SCAN lists the written pages (the kernel's calls and the probe
 * that they work: wbits_kernel.c). Armed pages are counted per page and
 * view, so that a scan reads only what some tracked region holds: the
 * kernel reports every page it never protected as written.
 *
 * Nothing here runs in a signal handler. Probing and the scan over every
 * armed page run under rtl's define lock; arming and disarming change the
 * counts with atomic operations (a checkpoint arms its region under that
 * region's lock only); a scan of one region's pages
 * (rtl_wbits_collect_range) needs no lock. A scan that meets counts
 * changing under it reports too much or arms a page once too often (a
 * write there faults once more): never too little, as a page the kernel
 * does not protect reads as written. */
#include "core/dirty/wbits.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/dirty/wbits_kernel.h"
#include "core/region/views.h"
#include "core/util/page.h"

#define PAGE rtl_page_size()
#define SHIFT rtl_page_shift()
#define CHUNK_SHIFT 12 /* pages per bit of the summary */
#define VEC 256        /* results per PAGEMAP_SCAN of the armed pages */

enum { UNKNOWN,
       ON,
       OFF };
static int state = UNKNOWN;

/* The armed pages of one view: a count per page of the views' offsets (the
 * tracked regions on it), a summary bit per 4096 pages (some page there
 * counts), and bounds that hold every armed page. */
struct armed {
	uint8_t *count;          /* atomic updates; scans read it racily */
	uint64_t *chunks;        /* bits only ever set */
	_Atomic uint64_t lo, hi; /* pages [lo, hi) (they only grow apart;
	                            lo starts at UINT64_MAX) */
	_Atomic uint64_t npages;
	_Atomic int ready; /* count and chunks mapped */
};
static pthread_mutex_t map_lock = PTHREAD_MUTEX_INITIALIZER;
static struct armed armed[RTL_NVIEWS];
static _Atomic uint64_t n_written;
static rtl_wbits_fn observer;
static void *observer_ctx;

void rtl_wbits_observe(rtl_wbits_fn fn, void *ctx)
{
	observer_ctx = ctx;
	observer = fn;
}

/* Pages [lo, hi) found written: counted, and told. */
static void found(uint64_t lo, uint64_t hi)
{
	atomic_fetch_add_explicit(&n_written, (hi - lo) >> SHIFT, memory_order_relaxed);
	if (observer)
		observer(observer_ctx, lo, hi);
}

void rtl_wbits_counts(struct rtl_wbits_counts *out)
{
	rtl_wbits_kernel_counts(&out->protects, &out->scans);
	out->pages_written = atomic_load(&n_written);
}

/* ---- on or off ---- */

int rtl_wbits_ready(void)
{
	const char *env;

	if (state != UNKNOWN)
		return state == ON;
	env = secure_getenv("RTL_DIRTY");
	state = OFF;
	if (env && !strcmp(env, "traps")) {
		rtl_wbits_say_why("traps chosen by RTL_DIRTY=traps");
		return 0;
	}
	if (rtl_wbits_kernel_open() < 0) {
		rtl_wbits_kernel_close();
		return 0;
	}
	rtl_wbits_say_why("the kernel's written bits (userfaultfd asynchronous "
	                  "write-protection, PAGEMAP_SCAN)");
	state = ON;
	return 1;
}

/* ---- armed pages ---- */

static int map_new(struct armed *a, size_t pages);

static int map_alloc(struct armed *a)
{
	size_t pages = rtl_views.size >> SHIFT;
	int rc = 0;

	pthread_mutex_lock(&map_lock);
	if (!atomic_load(&a->ready))
		rc = map_new(a, pages);
	pthread_mutex_unlock(&map_lock);
	return rc;
}

static int map_new(struct armed *a, size_t pages)
{
	size_t words = ((pages >> CHUNK_SHIFT) + 64) / 64;
	void *c = mmap(NULL, pages, PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	void *s = mmap(NULL, words * 8, PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (c == MAP_FAILED || s == MAP_FAILED) {
		if (c != MAP_FAILED)
			munmap(c, pages);
		if (s != MAP_FAILED)
			munmap(s, words * 8);
		errno = ENOMEM;
		return -1;
	}
	a->count = c;
	a->chunks = s;
	atomic_store(&a->lo, UINT64_MAX);
	atomic_store_explicit(&a->ready, 1, memory_order_release);
	return 0;
}

static int chunk_set(const struct armed *a, uint64_t c)
{
	return (a->chunks[c >> 6] >> (c & 63)) & 1;
}

/* The first page in [p, end) that counts, or end. */
static uint64_t next_armed(const struct armed *a, uint64_t p, uint64_t end)
{
	while (p < end) {
		uint64_t c = p >> CHUNK_SHIFT, stop = (c + 1) << CHUNK_SHIFT;

		if (!chunk_set(a, c)) {
			p = stop;
			continue;
		}
		if (stop > end)
			stop = end;
		while (p < stop && (p & 7))
			if (a->count[p++])
				return p - 1;
		for (uint64_t w; p + 8 <= stop; p += 8) {
			memcpy(&w, a->count + p, 8);
			if (w)
				break;
		}
		for (; p < stop; p++)
			if (a->count[p])
				return p;
	}
	return end;
}

static uint64_t next_unarmed(const struct armed *a, uint64_t p, uint64_t end)
{
	while (p < end && a->count[p])
		p++;
	return p;
}

static uintptr_t page_addr(int view, uint64_t p)
{
	return rtl_view_addr(view, p << SHIFT);
}

/* Pages [p0, p1) of view that count none: write-protected (on) or not. */
static int protect_uncounted(int view, uint64_t p0, uint64_t p1, int on)
{
	const struct armed *a = &armed[view];

	for (uint64_t p = p0; p < p1;) {
		uint64_t q = p;

		if (a->count[p]) {
			p++;
			continue;
		}
		while (q < p1 && !a->count[q])
			q++;
		if (rtl_wbits_kernel_protect(page_addr(view, p), (q - p) << SHIFT, on) < 0 && on)
			return -1;
		p = q;
	}
	return 0;
}

static void pages_of(uint64_t off, uint64_t len, uint64_t *p0, uint64_t *p1)
{
	*p0 = off >> SHIFT;
	*p1 = (off + (len ? len : 1) + PAGE - 1) >> SHIFT;
}

static void count_down(int view, uint64_t p0, uint64_t p1)
{
	struct armed *a = &armed[view];

	for (uint64_t p = p0; p < p1; p++)
		if (__atomic_sub_fetch(&a->count[p], 1, __ATOMIC_RELAXED) == 0)
			atomic_fetch_sub_explicit(&a->npages, 1, memory_order_relaxed);
}

static void count_up(int view, uint64_t p0, uint64_t p1)
{
	struct armed *a = &armed[view];
	uint64_t lo = atomic_load(&a->lo), hi = atomic_load(&a->hi);

	for (uint64_t p = p0; p < p1; p++) {
		uint64_t c = p >> CHUNK_SHIFT;

		if (__atomic_fetch_add(&a->count[p], 1, __ATOMIC_RELAXED) == 0)
			atomic_fetch_add_explicit(&a->npages, 1, memory_order_relaxed);
		if (!chunk_set(a, c))
			__atomic_fetch_or(&a->chunks[c >> 6], 1ull << (c & 63),
			                  __ATOMIC_RELAXED);
	}
	while (p0 < lo && !atomic_compare_exchange_weak(&a->lo, &lo, p0))
		;
	while (p1 > hi && !atomic_compare_exchange_weak(&a->hi, &hi, p1))
		;
}

int rtl_wbits_arm(uint64_t off, uint64_t len, unsigned views)
{
	uint64_t p0, p1;
	unsigned done = 0;

	pages_of(off, len, &p0, &p1);
	for (int v = RTL_VIEW_RO; v <= RTL_VIEW_RW; v++) {
		if (!(views & (1u << v)))
			continue;
		if (!atomic_load_explicit(&armed[v].ready, memory_order_acquire) &&
		    map_alloc(&armed[v]) < 0)
			goto undo;
		for (uint64_t p = p0; p < p1; p++)
			if (armed[v].count[p] == UINT8_MAX) {
				errno = EOVERFLOW;
				goto undo;
			}
		if (protect_uncounted(v, p0, p1, 1) < 0) {
			int e = errno;

			protect_uncounted(v, p0, p1, 0);
			errno = e;
			goto undo;
		}
		count_up(v, p0, p1);
		done |= 1u << v;
	}
	return 0;
undo:
	rtl_wbits_disarm(off, len, done);
	return -1;
}

void rtl_wbits_disarm(uint64_t off, uint64_t len, unsigned views)
{
	uint64_t p0, p1;

	pages_of(off, len, &p0, &p1);
	for (int v = RTL_VIEW_RO; v <= RTL_VIEW_RW; v++) {
		if (!(views & (1u << v)) || !atomic_load(&armed[v].ready))
			continue;
		count_down(v, p0, p1);
		if (state == ON)
			protect_uncounted(v, p0, p1, 0); /* writable for free again */
	}
}

/* ---- scans ---- */

/* A run [s, e) the kernel reports written in view: its armed pages are
 * armed again and handed to cb. */
static int take_written(int view, uintptr_t s, uintptr_t e, rtl_wbits_fn cb,
                        void *ctx)
{
	const struct armed *a = &armed[view];
	uint64_t p = (s - rtl_view_base(view)) >> SHIFT;
	uint64_t end = (e - rtl_view_base(view)) >> SHIFT;

	while ((p = next_armed(a, p, end)) < end) {
		uint64_t q = next_unarmed(a, p, end);

		if (rtl_wbits_kernel_protect(page_addr(view, p), (q - p) << SHIFT, 1) < 0)
			return -1;
		found(p << SHIFT, q << SHIFT);
		cb(ctx, p << SHIFT, q << SHIFT);
		p = q;
	}
	return 0;
}

/* Whether view's armed pages lie in at most RUNS_FEW runs. */
#define RUNS_FEW 64
static int few_runs(const struct armed *a, uint64_t lo, uint64_t hi)
{
	int n = 0;

	for (uint64_t p = next_armed(a, lo, hi); p < hi && n <= RUNS_FEW;
	     p = next_armed(a, next_unarmed(a, p, hi), hi))
		n++;
	return n <= RUNS_FEW;
}

int rtl_wbits_collect(rtl_wbits_fn cb, void *ctx)
{
	static struct rtl_page_region vec[VEC]; /* under the define lock */

	if (state != ON) {
		errno = ENODEV;
		return -1;
	}
	for (int v = RTL_VIEW_RO; v <= RTL_VIEW_RW; v++) {
		const struct armed *a = &armed[v];
		uintptr_t start, end;
		uint64_t lo, hi;

		if (!atomic_load_explicit(&a->ready, memory_order_acquire) ||
		    !atomic_load(&a->npages))
			continue;
		lo = atomic_load(&a->lo);
		hi = atomic_load(&a->hi);
		if (lo >= hi)
			continue;
		/* Few runs of armed pages (regions side by side, as an
		 * allocator lays them out): a scan of each that arms again
		 * what it reports, one call and one TLB flush a run. */
		if (few_runs(a, lo, hi)) {
			for (uint64_t p = next_armed(a, lo, hi); p < hi;) {
				uint64_t q = next_unarmed(a, p, hi);

				if (rtl_wbits_collect_range(p << SHIFT, (q - p) << SHIFT,
				                            1u << v, cb, ctx, 1) < 0)
					return -1;
				p = next_armed(a, q, hi);
			}
			continue;
		}
		start = page_addr(v, lo);
		end = page_addr(v, hi);
		/* Many: one walk over the bounds, reading only (the pages no
		 * region holds read as written and are skipped by their
		 * counts), then each written run armed again. */
		while (start < end) {
			uint64_t walk = end;
			long n = rtl_wbits_kernel_scan(start, end, vec, VEC, 0, &walk);

			if (n < 0)
				return -1;
			for (long i = 0; i < n; i++)
				if (take_written(v, vec[i].start, vec[i].end, cb, ctx) < 0)
					return -1;
			if (n < VEC || walk <= start)
				break;
			start = walk;
		}
	}
	return 0;
}

int rtl_wbits_collect_range(uint64_t off, uint64_t len, unsigned views,
                            rtl_wbits_fn cb, void *ctx, int counted)
{
	struct rtl_page_region vec[64];
	uint64_t p0, p1;

	pages_of(off, len, &p0, &p1);
	for (int v = RTL_VIEW_RO; v <= RTL_VIEW_RW; v++) {
		uintptr_t start = page_addr(v, p0), end = page_addr(v, p1);

		if (!(views & (1u << v)))
			continue;
		while (start < end) {
			uint64_t walk = end;
			long n = rtl_wbits_kernel_scan(start, end, vec, 64,
			                               RTL_PM_SCAN_WP_MATCHING, &walk);

			if (n < 0)
				return -1;
			for (long i = 0; i < n; i++) {
				uint64_t lo = vec[i].start - rtl_view_base(v);
				uint64_t hi = vec[i].end - rtl_view_base(v);

				if (counted)
					found(lo, hi);
				cb(ctx, lo, hi);
			}
			if (n < 64 || walk <= start)
				break;
			start = walk;
		}
	}
	return 0;
}

/* ---- fork ---- */

int rtl_wbits_after_fork(void)
{
	if (state != ON)
		return 0;
	/* The parent's: a scan or a write-protect through them acts on the
	 * parent's memory, not this process's. */
	rtl_wbits_kernel_close();
	if (rtl_wbits_kernel_open() < 0) {
		char was[240];

		rtl_wbits_kernel_close();
		snprintf(was, sizeof(was), "%s", rtl_wbits_why());
		rtl_wbits_say_why("after fork: %s", was);
		state = OFF;
		return -1;
	}
	rtl_wbits_say_why("the kernel's written bits (userfaultfd asynchronous "
	                  "write-protection, PAGEMAP_SCAN)");
	for (int v = RTL_VIEW_RO; v <= RTL_VIEW_RW; v++) {
		const struct armed *a = &armed[v];
		uint64_t hi = atomic_load(&a->hi);

		if (!atomic_load(&a->ready) || !atomic_load(&a->npages))
			continue;
		for (uint64_t p = next_armed(a, atomic_load(&a->lo), hi); p < hi;) {
			uint64_t q = next_unarmed(a, p, hi);

			if (rtl_wbits_kernel_protect(page_addr(v, p), (q - p) << SHIFT, 1) < 0) {
				rtl_wbits_say_why("after fork: write-protecting the tracked pages "
				                  "failed: %s",
				                  strerror(errno));
				rtl_wbits_kernel_close();
				state = OFF;
				return -1;
			}
			p = next_armed(a, q, hi);
		}
	}
	return 0;
}
