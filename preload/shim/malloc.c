/* The interposed malloc family. Each call either goes to the next allocator
 * untouched or, when the policy selects it, becomes a region (heap.c);
 * free, realloc and malloc_usable_size go by address: rtl's views are ours,
 * the bootstrap buffer is ignored, anything else is the next allocator's.
 * Nothing here may allocate except through rtl_next() or the heap. */
#include <errno.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/util/page.h"
#include "core/util/say.h"
#include "preload/engine/select.h"
#include "preload/place/heap.h"
#include "preload/shim/next.h"
#include "preload/shim/start.h"

#define API __attribute__((visibility("default")))
#define MIN_ALIGN 16u

static int power_of_two(size_t a)
{
	return a && !(a & (a - 1));
}

/* The choice for this allocation, or NULL: not while the preload runs its
 * own code, not before it started, not for alignments rtl cannot keep. */
static const struct rtl_choice *wanted(size_t size, size_t align,
                                       const void *caller, uint32_t *site)
{
	if (rtl_preload_busy ||
	    !atomic_load_explicit(&rtl_preload_on, memory_order_acquire))
		return NULL;
	if (align > rtl_page_size() || !power_of_two(align))
		return NULL;
	return rtl_select(size, caller, site);
}

/* A region for this allocation, or NULL (counted: the next allocator
 * serves it instead). rw: its first byte in the RW view. */
static void *selected(size_t size, size_t align, int zero,
                      const struct rtl_choice *c, uint32_t site, void **rw)
{
	int saved = errno; /* a fallback is no error of the program's */
	void *p, *unused;

	rtl_preload_busy++;
	p = rtl_heap_alloc(size, align, zero, c, site, rw ? rw : &unused);
	rtl_preload_busy--;
	errno = saved;
	return p;
}

static void invalid(const char *what, const void *p)
{
	char msg[96];
	int n = snprintf(msg, sizeof(msg), "rtl: %s(): invalid pointer %p\n",
	                 what, p);
	rtl_say(msg, (size_t)n);
	abort();
}

/* p lies in rtl's views or aliases: the object it starts, or die as glibc
 * does for a pointer it never handed out. */
static void find_or_die(const char *what, const void *p, struct rtl_obj *o)
{
	if (rtl_heap_find(p, o) < 0)
		invalid(what, p);
}

/* free keeps errno, as POSIX now asks of it. */
static void free_ours(const char *what, void *p)
{
	int saved = errno;
	struct rtl_obj o;

	rtl_preload_busy++;
	find_or_die(what, p, &o);
	if (rtl_heap_free(&o) < 0)
		invalid(what, p);
	rtl_preload_busy--;
	errno = saved;
}

static void *do_malloc(size_t size, const void *caller)
{
	const struct rtl_next *n = rtl_next();
	const struct rtl_choice *c;
	uint32_t site;
	void *p;

	if (!n)
		return rtl_boot_alloc(size, MIN_ALIGN);
	c = wanted(size, MIN_ALIGN, caller, &site);
	if (c && (p = selected(size, MIN_ALIGN, 0, c, site, NULL)))
		return p;
	return n->malloc(size);
}

API void *malloc(size_t size)
{
	return do_malloc(size, __builtin_return_address(0));
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
	uint32_t site;
	size_t total;
	void *p;

	if (__builtin_mul_overflow(nmemb, size, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	if (!n)
		return rtl_boot_alloc(total, MIN_ALIGN); /* static: zero */
	c = wanted(total, MIN_ALIGN, __builtin_return_address(0), &site);
	if (c && (p = selected(total, MIN_ALIGN, 1, c, site, NULL)))
		return p;
	return n->calloc(nmemb, size);
}

/* realloc of one of ours: in place when its memory already fits, else a
 * new allocation (selected or not, as the policy says for the new size) and
 * a copy through the RW view. */
static void *realloc_ours(void *p, size_t size, const struct rtl_choice *c,
                          uint32_t site, const struct rtl_next *n)
{
	struct rtl_obj o;
	void *q = NULL, *qrw = NULL;
	int saved = errno;

	rtl_preload_busy++;
	find_or_die("realloc", p, &o);
	if (c && (q = rtl_heap_resize(&o, size, c))) {
		rtl_preload_busy--;
		return q;
	}
	if (c)
		q = rtl_heap_alloc(size, MIN_ALIGN, 0, c, site, &qrw);
	errno = saved;
	if (!q)
		q = qrw = n->malloc(size);
	if (q) {
		rtl_heap_copy(qrw, o.rw, o.size < size ? o.size : size);
		rtl_heap_free(&o);
	}
	rtl_preload_busy--;
	return q;
}

static void *do_realloc(void *p, size_t size, const void *caller)
{
	const struct rtl_next *n = rtl_next();
	const struct rtl_choice *c;
	uint32_t site = 0;
	void *q, *qrw;

	if (!p)
		return do_malloc(size, caller);
	if (rtl_boot_owns(p)) {
		size_t old = rtl_boot_size(p);
		q = n ? do_malloc(size, caller) : rtl_boot_alloc(size, MIN_ALIGN);
		if (q) {
			void *dst = q;
			struct rtl_obj o;
			if (rtl_heap_owns(q) && rtl_heap_find(q, &o) == 0)
				dst = o.rw;
			rtl_heap_copy(dst, p, old < size ? old : size);
		}
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
		c = wanted(size, MIN_ALIGN, caller, &site);
		return realloc_ours(p, size, c, site, n);
	}
	c = size ? wanted(size, MIN_ALIGN, caller, &site) : NULL;
	if (c && (q = selected(size, MIN_ALIGN, 0, c, site, &qrw))) {
		size_t old = n->malloc_usable_size(p);

		rtl_heap_copy(qrw, p, old < size ? old : size);
		n->free(p);
		return q;
	}
	return n->realloc(p, size);
}

API void *realloc(void *p, size_t size)
{
	return do_realloc(p, size, __builtin_return_address(0));
}

API void *reallocarray(void *p, size_t nmemb, size_t size)
{
	size_t total;

	if (__builtin_mul_overflow(nmemb, size, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	return do_realloc(p, total, __builtin_return_address(0));
}

/* The aligned family: selected alike when the alignment is one rtl keeps
 * (a power of two up to a page), else left to the next allocator with its
 * own rules for odd alignments. */
static void *aligned(size_t align, size_t size, const void *caller,
                     void *(*next_fn)(size_t, size_t))
{
	const struct rtl_next *n = rtl_next();
	const struct rtl_choice *c;
	uint32_t site;
	void *p;

	if (!n)
		return power_of_two(align) ? rtl_boot_alloc(size, align) : NULL;
	c = wanted(size, align, caller, &site);
	if (c && (p = selected(size, align, 0, c, site, NULL)))
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
	uint32_t site;
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
	c = wanted(size, align, __builtin_return_address(0), &site);
	if (c && (p = selected(size, align, 0, c, site, NULL))) {
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
	uint32_t site;
	void *p;

	if (!n)
		return rtl_boot_alloc(size, page_size());
	c = wanted(size, page_size(), __builtin_return_address(0), &site);
	if (c && (p = selected(size, page_size(), 0, c, site, NULL)))
		return p;
	return n->valloc(size);
}

API void *pvalloc(size_t size)
{
	const struct rtl_next *n = rtl_next();
	const struct rtl_choice *c;
	uint32_t site;
	size_t rounded;
	void *p;

	if (__builtin_add_overflow(size, page_size() - 1, &rounded)) {
		errno = ENOMEM;
		return NULL;
	}
	rounded &= ~(page_size() - 1);
	if (!n)
		return rtl_boot_alloc(rounded, page_size());
	c = wanted(rounded, page_size(), __builtin_return_address(0), &site);
	if (c && (p = selected(rounded, page_size(), 0, c, site, NULL)))
		return p;
	return n->pvalloc(size);
}

API size_t malloc_usable_size(void *p)
{
	const struct rtl_next *n;
	struct rtl_obj o;

	if (!p)
		return 0;
	if (rtl_boot_owns(p))
		return rtl_boot_size(p);
	if (rtl_heap_owns(p)) {
		find_or_die("malloc_usable_size", p, &o);
		return o.size;
	}
	n = rtl_next();
	return n ? n->malloc_usable_size(p) : 0;
}

/* glibc's own names for the same functions, for programs that call them. */
API void *__libc_malloc(size_t) RTL_ALIAS_OF(malloc);
API void __libc_free(void *) RTL_ALIAS_OF(free);
API void *__libc_calloc(size_t, size_t) RTL_ALIAS_OF(calloc);
API void *__libc_realloc(void *, size_t) RTL_ALIAS_OF(realloc);
API void *__libc_memalign(size_t, size_t) RTL_ALIAS_OF(memalign);
API void *__libc_valloc(size_t) RTL_ALIAS_OF(valloc);
API void *__libc_pvalloc(size_t) RTL_ALIAS_OF(pvalloc);
