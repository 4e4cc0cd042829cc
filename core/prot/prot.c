/* The protection backend (prot.h): the choice, and each change by the
 * kernel call that makes it.
 *
 * Under page tables a mapping the backend made is read-write for the
 * kernel's mapping and its pages carry the protection:
 *   read-write  no write-protect bit (the VMA's own);
 *   read        the write-protect bit (UFFDIO_WRITEPROTECT), one call;
 *   none        mprotect(PROT_NONE): userfaultfd has no way to refuse a
 *               read without registering minor faults, and a mapping so
 *               registered faults on the first access to every page
 *               through it (docs/mechanisms.md, "Protection in the page
 *               tables"). A bit per page of the span says which pages are
 *               held by mprotect that way (rtl_prot_set).
 * A mapping made read-write is registered at its first write-protection.
 * rtl_prot_set runs in signal handlers: system calls and atomics only. */
#include "core/prot/prot.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/prot/pagetable.h"
#include "core/start/stats.h"
#include "core/util/page.h"
#include "core/trap/trap.h"

#define RW (PROT_READ | PROT_WRITE)

static int backend = RTL_PROT_MPROTECT;
static int started;
static char why[240] = "protection changes not asked for yet";
static _Atomic uintptr_t span_lo;
static size_t span_len;
/* Under page tables, a bit per page of the span: held by mprotect (left at
 * no access, and read-only from there), its write-protect bit clear.
 * Mapped without reserve: only words that ever held a bit are memory, and
 * none_ever spares every lookup in a process that never protects against
 * reads. */
static _Atomic uint64_t *none_bits;
static _Atomic int none_ever;

/* A mapping made read-write is registered with the userfaultfd at its
 * first write-protection, not when made: until then the kernel faults its
 * pages in as any shared memory's, a read mapping its neighbours too and
 * a page writable at its first touch, where in a registered mapping each
 * page takes a fault of its own, read-only first and a write after it
 * another (docs/mechanisms.md). A forked child maps every copy of the pool
 * again and protects pages of few of them. Found from an address in two
 * loads: only mappings of whole granules of the span are deferred, each
 * granule naming the first of its mapping, whose entry holds the
 * mapping's length and whether it still waits. A mapping is made again
 * only at the bounds it had (the callers' are fixed), so an entry is
 * replaced whole. */
#define GRANULE_SHIFT 30
_Static_assert(RTL_PROT_GRANULE == (size_t)1 << GRANULE_SHIFT, "granule");
struct granule {
	_Atomic uint32_t head;    /* 1 + the first granule of its deferred mapping; 0: none */
	uint32_t count;           /* at the head: the mapping's granules */
	_Atomic uint32_t waiting; /* at the head: not registered yet */
};
static struct granule *granules;
static _Atomic int deferred_ever;

static int choose(void)
{
	const char *env = secure_getenv("RTL_PROTECT");

	if (env && *env && strcmp(env, "mprotect") != 0 && strcmp(env, "page-tables") != 0)
		fprintf(stderr, "rtl: RTL_PROTECT=%s is neither mprotect nor "
		                "page-tables; ignored\n",
		        env);
	if (!rtl_pt_choose(why, sizeof(why), 1))
		return RTL_PROT_MPROTECT;
	if (rtl_trap_install_bus() < 0) {
		snprintf(why, sizeof(why), "mprotect: rtl's SIGBUS handler could not be "
		                           "installed: %s",
		         strerror(errno));
		return RTL_PROT_MPROTECT;
	}
	return RTL_PROT_PAGE_TABLES;
}

int rtl_prot_start(void)
{
	/* The preload calls it once, at start, before it has threads of its
	 * own; a flag is enough. */
	if (!started) {
		backend = choose();
		started = 1;
	}
	return backend;
}

int rtl_prot_backend(void)
{
	return backend;
}

const char *rtl_prot_why(void)
{
	return why;
}

void rtl_prot_span(uintptr_t base, size_t len)
{
	size_t bytes = (len / rtl_page_size() + 63) / 64 * 8;
	void *bits;

	if (backend == RTL_PROT_PAGE_TABLES) {
		bits = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		            MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (bits == MAP_FAILED)
			return; /* no span: every change is an mprotect */
		none_bits = bits;
		/* None: every mapping registered when made. */
		bits = mmap(NULL, ((len >> GRANULE_SHIFT) + 1) * sizeof(*granules),
		            PROT_READ | PROT_WRITE,
		            MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		granules = bits == MAP_FAILED ? NULL : bits;
	}
	span_len = len;
	atomic_store_explicit(&span_lo, base, memory_order_release);
}

static int in_span(uintptr_t at, size_t len)
{
	uintptr_t lo = atomic_load_explicit(&span_lo, memory_order_acquire);

	return lo && at - lo < span_len && len <= span_len - (at - lo);
}

int rtl_prot_owns(uintptr_t addr)
{
	return backend == RTL_PROT_PAGE_TABLES && in_span(addr, 1);
}

/* The bits of pages [at, at + len) of the span. */
static void page_range(uintptr_t at, size_t len, size_t *first, size_t *last)
{
	*first = (at - atomic_load_explicit(&span_lo, memory_order_relaxed)) >> rtl_page_shift();
	*last = *first + ((len + rtl_page_size() - 1) >> rtl_page_shift());
}

/* The word of bit *p, and the mask of the bits of [*p, last) in it; *p
 * moves past them. */
static size_t next_word(size_t *p, size_t last, uint64_t *mask)
{
	size_t lo = *p % 64, n = last - *p < 64 - lo ? last - *p : 64 - lo, w = *p / 64;

	*mask = (n == 64 ? ~0ull : (1ull << n) - 1) << lo;
	*p += n;
	return w;
}

/* Whether the pages of [at, at + len) are held by mprotect: none of them
 * (0), all (1) or some (2). */
static int marked(uintptr_t at, size_t len)
{
	size_t first, last;
	int some = 0, all = 1;

	if (!atomic_load_explicit(&none_ever, memory_order_relaxed))
		return 0;
	page_range(at, len, &first, &last);
	for (size_t p = first; p < last;) {
		uint64_t mask, b;
		size_t w = next_word(&p, last, &mask);

		b = atomic_load_explicit(&none_bits[w], memory_order_relaxed) & mask;
		some |= b != 0;
		all &= b == mask;
	}
	return all ? 1 : some ? 2
	                      : 0;
}

static void mark(uintptr_t at, size_t len, int on)
{
	size_t first, last;

	if (on)
		atomic_store_explicit(&none_ever, 1, memory_order_relaxed);
	else if (!atomic_load_explicit(&none_ever, memory_order_relaxed))
		return;
	page_range(at, len, &first, &last);
	for (size_t p = first; p < last;) {
		uint64_t mask;
		size_t w = next_word(&p, last, &mask);

		if (on)
			atomic_fetch_or(&none_bits[w], mask);
		else if (atomic_load_explicit(&none_bits[w], memory_order_relaxed) & mask)
			atomic_fetch_and(&none_bits[w], ~mask); /* a word never set stays unwritten: no memory */
	}
}

static int raw_mprotect(uintptr_t at, size_t len, int prot)
{
	RTL_COUNT(prot_mprotect);
	/* The system call itself: the preload interposes mprotect. */
	return (int)syscall(SYS_mprotect, (void *)at, len, prot);
}

/* ---- mappings registered at their first protection ---- */

static size_t granule_of(uintptr_t at)
{
	return (at - atomic_load_explicit(&span_lo, memory_order_relaxed)) >> GRANULE_SHIFT;
}

static uintptr_t granule_addr(size_t g)
{
	return atomic_load_explicit(&span_lo, memory_order_relaxed) + ((uintptr_t)g << GRANULE_SHIFT);
}

/* The mapping just made at [at, at + len): its registration deferred if
 * it may be (made read-write) and is of whole granules; else any deferred
 * one it replaced forgotten. Whether deferred. */
static int defer(uintptr_t at, size_t len, int may)
{
	size_t first = granule_of(at), n = len >> GRANULE_SHIFT;

	if (!granules)
		return 0;
	if (!may || granule_addr(first) != at || n << GRANULE_SHIFT != len) {
		if (atomic_load_explicit(&deferred_ever, memory_order_relaxed))
			for (size_t g = first; g <= granule_of(at + len - 1); g++)
				if (atomic_load_explicit(&granules[g].head, memory_order_relaxed))
					atomic_store_explicit(&granules[g].head, 0, memory_order_relaxed);
		return 0;
	}
	granules[first].count = (uint32_t)n;
	atomic_store_explicit(&granules[first].waiting, 1, memory_order_relaxed);
	for (size_t g = first; g < first + n; g++)
		atomic_store_explicit(&granules[g].head, (uint32_t)first + 1, memory_order_release);
	atomic_store_explicit(&deferred_ever, 1, memory_order_release);
	return 1;
}

/* The head entry of the deferred mapping holding at, if it still waits
 * for its registration; else NULL. */
static struct granule *waiting(uintptr_t at)
{
	uint32_t h;

	if (!atomic_load_explicit(&deferred_ever, memory_order_acquire))
		return NULL;
	h = atomic_load_explicit(&granules[granule_of(at)].head, memory_order_acquire);
	if (!h || !atomic_load_explicit(&granules[h - 1].waiting, memory_order_acquire))
		return NULL;
	return &granules[h - 1];
}

/* Register the deferred mappings [at, at + len) meets that still wait.
 * Two threads may both register one: the kernel takes a range already
 * registered to the same descriptor again. The flag falls only after the
 * registration, so a thread that sees it down may protect. */
static int register_waiting(uintptr_t at, size_t len)
{
	for (size_t g = granule_of(at), last = granule_of(at + len - 1); g <= last;) {
		struct granule *w = waiting(granule_addr(g));
		size_t head;

		if (!w) {
			g++;
			continue;
		}
		head = (size_t)(w - granules);
		if (rtl_pt_register(granule_addr(head), (size_t)w->count << GRANULE_SHIFT) < 0)
			return -1;
		atomic_store_explicit(&w->waiting, 0, memory_order_release);
		g = head + w->count;
	}
	return 0;
}

static int write_protect(uintptr_t at, size_t len, int on)
{
	if (atomic_load_explicit(&deferred_ever, memory_order_acquire)) {
		struct granule *w = waiting(at);
		size_t last = granule_of(at + len - 1);

		/* A mapping not registered is read-write throughout. */
		if (w && !on && last < (size_t)(w - granules) + w->count)
			return 0;
		/* Most ranges lie in one granule: looked up once. */
		if ((w || last != granule_of(at)) && register_waiting(at, len) < 0)
			return -1;
	}
	RTL_COUNT(prot_page_table);
	return rtl_pt_protect(at, len, on);
}

int rtl_prot_map(uintptr_t at, size_t len, int fd, off_t off, int prot)
{
	int pt = backend == RTL_PROT_PAGE_TABLES && in_span(at, len);

	if (mmap((void *)at, len, pt ? RW : prot, MAP_SHARED | MAP_FIXED | MAP_NORESERVE,
	         fd, off) == MAP_FAILED)
		return -1;
	if (!pt)
		return 0;
	mark(at, len, 0); /* a new mapping: read-write throughout */
	if (defer(at, len, prot == RW))
		return 0;
	if (rtl_pt_register(at, len) < 0)
		return -1;
	return prot == RW ? 0 : rtl_prot_set(at, len, prot);
}

/* Under page tables a page is in one of two regimes. Write-protect bits:
 * the mapping read-write, the page read-only or read-write by its bit.
 * mprotect: the mapping at the page's protection, its bit clear (the page
 * was at no access; a bit per page says so). Each change takes the calls
 * of the regime it leaves or stays in: read-only and read-write with bits,
 * one write-protect call; no access, and read-only or read-write from it,
 * one mprotect (no access and back costs what it costs the fallback); a
 * range of both regimes two calls. */
int rtl_prot_set(uintptr_t at, size_t len, int prot)
{
	int held;

	if (backend != RTL_PROT_PAGE_TABLES || !in_span(at, len))
		return raw_mprotect(at, len, prot);
	held = marked(at, len);
	if (prot == PROT_NONE || (prot == PROT_READ && held)) {
		/* Into (or within) mprotect's regime: bits cleared first. */
		if (held != 1 && write_protect(at, len, 0) < 0)
			return -1;
		if (raw_mprotect(at, len, prot) < 0)
			return -1;
		mark(at, len, 1);
		return 0;
	}
	if (prot == (PROT_READ | PROT_WRITE) && held) {
		/* Back to the bits' regime: the bits clear (the marked pages'
		 * are already), the mapping read-write. */
		if (held == 2 && write_protect(at, len, 0) < 0)
			return -1;
		if (raw_mprotect(at, len, RW) < 0)
			return -1;
		mark(at, len, 0);
		return 0;
	}
	return write_protect(at, len, !(prot & PROT_WRITE));
}

void rtl_prot_calls(uint64_t *page_tables, uint64_t *mprotects)
{
	*page_tables = RTL_STATS_SUM(prot_page_table);
	*mprotects = RTL_STATS_SUM(prot_mprotect);
}

void rtl_prot_forked(void)
{
	if (backend != RTL_PROT_PAGE_TABLES || rtl_pt_reopen() == 0)
		return;
	/* Before the child's mappings are made again (over its own file):
	 * they are made and protected with mprotect instead. */
	backend = RTL_PROT_MPROTECT;
	snprintf(why, sizeof(why), "mprotect: a forked child could not open a "
	                           "userfaultfd of its own: %s",
	         strerror(errno));
}
