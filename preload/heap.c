/* Selected allocations: arena memory in the RW view, each one defined in
 * place as a region and handed out in the view of its protection.
 *
 * A region of size bytes gets round_up(size + 1, 64) bytes at a 64-byte
 * boundary: its span (what rtl looks up and swizzles) lies inside its own
 * allocation, and its one-past-end is never another region's start. Callers
 * hold the re-entrancy guard. */
#include "preload.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>

#include "rtl/ext.h"
#include "rtl/region.h"
#include "select.h"

#define GRAN 64u

struct rtl_heap_stats rtl_heap_stats;

static uintptr_t views_lo;
static size_t views_len;
static uint64_t max_live;

int rtl_heap_init(uint64_t max_regions)
{
	uintptr_t base;
	size_t size;

	if (rtl_arena_init() < 0)
		return -1;
	rtl_ext_views(&base, &size);
	max_live = max_regions;
	views_len = 3 * size;
	views_lo = base; /* last: rtl_heap_owns is true from here on */
	return 0;
}

int rtl_heap_owns(const void *p)
{
	return (uintptr_t)p - views_lo < views_len;
}

static size_t span_of(size_t size)
{
	return (size + GRAN) & ~(size_t)(GRAN - 1); /* > size, whole granules */
}

void *rtl_heap_rw(const void *p)
{
	size_t view = views_len / 3;
	return (char *)p + (2 - ((uintptr_t)p - views_lo) / view) * view;
}

/* RW memory rw, in the view of protection prot. */
static void *in_view(void *rw, int prot)
{
	int view = prot == PROT_NONE ? 0 : prot == PROT_READ ? 1 : 2;

	return (char *)rw - (size_t)(2 - view) * (views_len / 3);
}

/* Make [rw, rw + size) a region as c says; the pointer to hand out, or NULL
 * with errno. */
static void *define(void *rw, size_t size, const struct rtl_choice *c)
{
	if (!region_define(rw, size, NULL))
		return NULL;
	if (c->handler)
		region_handler(rw, c->handler);
	if (c->data)
		region_set_data(rw, c->data);
	if (c->prot != (PROT_READ | PROT_WRITE)) {
		region_protect(rw, c->prot);
		return in_view(rw, c->prot);
	}
	return rw;
}

static void count_new(size_t size, const struct rtl_choice *c)
{
	atomic_fetch_add_explicit(&rtl_heap_stats.selected, 1,
	                          memory_order_relaxed);
	atomic_fetch_add_explicit(&rtl_heap_stats.bytes, size,
	                          memory_order_relaxed);
	atomic_fetch_add_explicit(&rtl_heap_stats.live, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&((struct rtl_choice *)c)->allocs, 1,
	                          memory_order_relaxed);
}

void *rtl_heap_alloc(size_t size, size_t align, int zero,
                     const struct rtl_choice *c)
{
	void *rw, *p;

	if (size == 0)
		size = 1; /* a unique pointer, as malloc(0) gives */
	if (size > ((size_t)1 << 40)) {
		errno = ENOMEM;
		return NULL;
	}
	if (atomic_load_explicit(&rtl_heap_stats.live, memory_order_relaxed) >=
	    max_live) {
		errno = ENOSPC;
		return NULL;
	}
	rw = rtl_arena_alloc(span_of(size), align < GRAN ? GRAN : align, zero);
	if (!rw) {
		errno = ENOMEM;
		return NULL;
	}
	p = define(rw, size, c);
	if (!p) {
		int e = errno;
		rtl_arena_free(rw);
		errno = e;
		return NULL;
	}
	count_new(size, c);
	return p;
}

int rtl_heap_find(const void *p, void **rw, size_t *size)
{
	struct rtl_ext_region r;

	if (rtl_ext_region_find(p, &r) < 0 || r.offset != 0 ||
	    !rtl_arena_owns(r.start))
		return -1;
	*rw = r.start;
	*size = r.size;
	return 0;
}

int rtl_heap_free(void *rw)
{
	if (region_free(rw) < 0)
		return -1;
	atomic_fetch_sub_explicit(&rtl_heap_stats.live, 1, memory_order_relaxed);
	rtl_arena_free(rw);
	return 0;
}

void *rtl_heap_resize(void *rw, size_t size, const struct rtl_choice *c)
{
	size_t have = rtl_arena_usable(rw), want;
	void *p;

	if (size == 0)
		size = 1;
	if (size > ((size_t)1 << 40))
		return NULL;
	want = span_of(size);
	/* In place only if jemalloc would give this very size class. */
	if (want > have || rtl_arena_good_size(want, GRAN) != have)
		return NULL;
	if (region_free(rw) < 0)
		return NULL;
	p = define(rw, size, c);
	if (!p) {
		/* rtl's metadata is out of memory: the old region is gone and
		 * the program's pointer may be in a view that now traps with
		 * no region behind it. Nothing sane remains to do. */
		static const char msg[] =
			"rtl: realloc: out of memory for region metadata\n";
		write(2, msg, sizeof(msg) - 1);
		abort();
	}
	return p;
}
