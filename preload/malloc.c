/* The interposed malloc family. Each call either goes to the next allocator
 * untouched or, when the policy selects it, becomes a region (heap.c);
 * free, realloc and malloc_usable_size go by address: rtl's views are ours,
 * the bootstrap buffer is ignored, anything else is the next allocator's.
 * Nothing here may allocate except through rtl_next() or the heap. */
#include "preload.h"

#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "select.h"

#define API __attribute__((visibility("default")))
#define MIN_ALIGN 16u

extern _Atomic int rtl_preload_on; /* init.c: selection has started */

static int power_of_two(size_t a)
{
	return a && !(a & (a - 1));
}

/* The choice for this allocation, or NULL: not while the preload runs its
 * own code, not before it started, not for alignments rtl cannot keep. */
static const struct rtl_choice *wanted(size_t size, size_t align,
                                       const void *caller)
{
	if (rtl_preload_busy ||
	    !atomic_load_explicit(&rtl_preload_on, memory_order_acquire))
		return NULL;
	if (align > 4096 || !power_of_two(align))
		return NULL;
	return rtl_select(size, caller);
}

/* A region for this allocation, or NULL (counted: the next allocator
 * serves it instead). */
static void *selected(size_t size, size_t align, int zero,
                      const struct rtl_choice *c)
{
	int saved = errno; /* a fallback is no error of the program's */
	void *p;

	rtl_preload_busy++;
	p = rtl_heap_alloc(size, align, zero, c);
	rtl_preload_busy--;
	if (!p)
		atomic_fetch_add_explicit(&rtl_heap_stats.fallback, 1,
		                          memory_order_relaxed);
	errno = saved;
	return p;
}

static void invalid(const char *what, const void *p)
{
	char msg[96];
	int n = snprintf(msg, sizeof(msg), "rtl: %s(): invalid pointer %p\n",
	                 what, p);
	write(2, msg, (size_t)n);
	abort();
}

/* p lies in rtl's views: its region's RW start and size, or die as glibc
 * does for a pointer it never handed out. */
static void find_or_die(const char *what, const void *p, void **rw,
                        size_t *size)
{
	if (rtl_heap_find(p, rw, size) < 0)
		invalid(what, p);
}

/* free keeps errno, as POSIX now asks of it. */
static void free_ours(const char *what, void *p)
{
	int saved = errno;
	void *rw;
	size_t size;

	rtl_preload_busy++;
	find_or_die(what, p, &rw, &size);
	if (rtl_heap_free(rw) < 0)
		invalid(what, p);
	rtl_preload_busy--;
	errno = saved;
}

API void *malloc(size_t size)
{
	const struct rtl_next *n = rtl_next();
	const struct rtl_choice *c;
	void *p;

	if (!n)
		return rtl_boot_alloc(size, MIN_ALIGN);
	c = wanted(size, MIN_ALIGN, __builtin_return_address(0));
	if (c && (p = selected(size, MIN_ALIGN, 0, c)))
		return p;
	return n->malloc(size);
}

API void free(void *p)
{
	const struct rtl_next *n;

	if (!p || rtl_boot_owns(p))
		return;
	if (rtl_heap_owns(p)) {
		free_ours("free", p);
		return;
	}
	n = rtl_next();
	if (n) /* else dlsym is running for us: leak rather than guess */
		n->free(p);
}

API void *calloc(size_t nmemb, size_t size)
{
	const struct rtl_next *n = rtl_next();
	const struct rtl_choice *c;
	size_t total;
	void *p;

	if (__builtin_mul_overflow(nmemb, size, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	if (!n)
		return rtl_boot_alloc(total, MIN_ALIGN); /* static: zero */
	c = wanted(total, MIN_ALIGN, __builtin_return_address(0));
	if (c && (p = selected(total, MIN_ALIGN, 1, c)))
		return p;
	return n->calloc(nmemb, size);
}

/* realloc of a region: in place when its memory already fits, else a new
 * allocation (a region or not, as the policy says for the new size) and a
 * copy through the RW view. */
static void *realloc_ours(void *p, size_t size, const struct rtl_choice *c,
                          const struct rtl_next *n)
{
	void *rw, *q = NULL, *qrw = NULL;
	size_t old;
	int saved = errno;

	rtl_preload_busy++;
	find_or_die("realloc", p, &rw, &old);
	if (c && (q = rtl_heap_resize(rw, size, c))) {
		rtl_preload_busy--;
		return q;
	}
	if (c && (q = rtl_heap_alloc(size, MIN_ALIGN, 0, c)))
		qrw = rtl_heap_rw(q);
	errno = saved;
	if (!q) {
		if (c)
			atomic_fetch_add_explicit(&rtl_heap_stats.fallback, 1,
			                          memory_order_relaxed);
		q = qrw = n->malloc(size);
	}
	if (q) {
		memcpy(qrw, rw, old < size ? old : size);
		rtl_heap_free(rw);
	}
	rtl_preload_busy--;
	return q;
}

API void *realloc(void *p, size_t size)
{
	const struct rtl_next *n = rtl_next();
	const struct rtl_choice *c;
	void *q;

	if (!p)
		return malloc(size);
	if (rtl_boot_owns(p)) {
		size_t old = rtl_boot_size(p);
		q = n ? malloc(size) : rtl_boot_alloc(size, MIN_ALIGN);
		if (q)
			memcpy(q, p, old < size ? old : size);
		return q;
	}
	if (!n) { /* dlsym is running for us and p is not ours to move */
		errno = ENOMEM;
		return NULL;
	}
	if (rtl_heap_owns(p)) {
		if (size == 0) { /* glibc: frees, returns NULL */
			free_ours("realloc", p);
			return NULL;
		}
		c = wanted(size, MIN_ALIGN, __builtin_return_address(0));
		return realloc_ours(p, size, c, n);
	}
	c = size ? wanted(size, MIN_ALIGN, __builtin_return_address(0)) : NULL;
	if (c && (q = selected(size, MIN_ALIGN, 0, c))) {
		size_t old = n->malloc_usable_size(p);

		memcpy(rtl_heap_rw(q), p, old < size ? old : size);
		n->free(p);
		return q;
	}
	return n->realloc(p, size);
}

API void *reallocarray(void *p, size_t nmemb, size_t size)
{
	size_t total;

	if (__builtin_mul_overflow(nmemb, size, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc(p, total);
}

/* The aligned family: selected alike when the alignment is one rtl keeps
 * (a power of two up to a page), else left to the next allocator with its
 * own rules for odd alignments. */
static void *aligned(size_t align, size_t size, const void *caller,
                     void *(*next_fn)(size_t, size_t))
{
	const struct rtl_next *n = rtl_next();
	const struct rtl_choice *c;
	void *p;

	if (!n)
		return power_of_two(align) ? rtl_boot_alloc(size, align) : NULL;
	c = wanted(size, align, caller);
	if (c && (p = selected(size, align, 0, c)))
		return p;
	return next_fn(align, size);
}

API void *memalign(size_t align, size_t size)
{
	const struct rtl_next *n = rtl_next();
	return aligned(align, size, __builtin_return_address(0),
	               n ? n->memalign : NULL);
}

API void *aligned_alloc(size_t align, size_t size)
{
	const struct rtl_next *n = rtl_next();
	return aligned(align, size, __builtin_return_address(0),
	               n ? n->aligned_alloc : NULL);
}

API int posix_memalign(void **out, size_t align, size_t size)
{
	const struct rtl_next *n = rtl_next();
	const struct rtl_choice *c;
	void *p;

	if (!power_of_two(align) || align % sizeof(void *))
		return EINVAL;
	if (!n) {
		p = rtl_boot_alloc(size, align);
		if (!p)
			return ENOMEM;
		*out = p;
		return 0;
	}
	c = wanted(size, align, __builtin_return_address(0));
	if (c && (p = selected(size, align, 0, c))) {
		*out = p;
		return 0;
	}
	return n->posix_memalign(out, align, size);
}

static size_t page_size(void)
{
	static size_t page;
	if (!page)
		page = (size_t)sysconf(_SC_PAGESIZE);
	return page;
}

API void *valloc(size_t size)
{
	const struct rtl_next *n = rtl_next();
	const struct rtl_choice *c;
	void *p;

	if (!n)
		return rtl_boot_alloc(size, page_size());
	c = wanted(size, page_size(), __builtin_return_address(0));
	if (c && (p = selected(size, page_size(), 0, c)))
		return p;
	return n->valloc(size);
}

API void *pvalloc(size_t size)
{
	const struct rtl_next *n = rtl_next();
	const struct rtl_choice *c;
	size_t rounded;
	void *p;

	if (__builtin_add_overflow(size, page_size() - 1, &rounded)) {
		errno = ENOMEM;
		return NULL;
	}
	rounded &= ~(page_size() - 1);
	if (!n)
		return rtl_boot_alloc(rounded, page_size());
	c = wanted(rounded, page_size(), __builtin_return_address(0));
	if (c && (p = selected(rounded, page_size(), 0, c)))
		return p;
	return n->pvalloc(size);
}

API size_t malloc_usable_size(void *p)
{
	const struct rtl_next *n;
	void *rw;
	size_t size;

	if (!p)
		return 0;
	if (rtl_boot_owns(p))
		return rtl_boot_size(p);
	if (rtl_heap_owns(p)) {
		find_or_die("malloc_usable_size", p, &rw, &size);
		return size;
	}
	n = rtl_next();
	return n ? n->malloc_usable_size(p) : 0;
}

/* glibc's own names for the same functions, for programs that call them. */
API void *__libc_malloc(size_t) __attribute__((alias("malloc"), copy(malloc)));
API void __libc_free(void *) __attribute__((alias("free"), copy(free)));
API void *__libc_calloc(size_t, size_t) __attribute__((alias("calloc"), copy(calloc)));
API void *__libc_realloc(void *, size_t) __attribute__((alias("realloc"), copy(realloc)));
API void *__libc_memalign(size_t, size_t) __attribute__((alias("memalign"), copy(memalign)));
API void *__libc_valloc(size_t) __attribute__((alias("valloc"), copy(valloc)));
API void *__libc_pvalloc(size_t) __attribute__((alias("pvalloc"), copy(pvalloc)));
