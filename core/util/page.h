/* The system's page size, never a constant: aarch64 kernels run with 4K,
 * 16K or 64K pages. Read from the auxiliary vector the kernel gave the
 * process (async-signal-safe: the trap path uses it too). */
#ifndef RTL_PAGE_H
#define RTL_PAGE_H

#include <stdatomic.h>
#include <stddef.h>
#include <sys/auxv.h>

static inline size_t rtl_page_size(void)
{
	/* Atomic, relaxed: threads may both fill it in, with the same value
	 * (plain loads and stores on x86-64 and aarch64). */
	static _Atomic size_t page;
	size_t p = atomic_load_explicit(&page, memory_order_relaxed);

	if (!p) {
		p = (size_t)getauxval(AT_PAGESZ);
		if (!p)
			p = 4096;
		atomic_store_explicit(&page, p, memory_order_relaxed);
	}
	return p;
}

/* log2 of the page size: hot paths shift instead of dividing by a size
 * that is not a constant. */
static inline unsigned rtl_page_shift(void)
{
	static _Atomic unsigned shift;
	unsigned s = atomic_load_explicit(&shift, memory_order_relaxed);

	if (!s) {
		s = (unsigned)__builtin_ctzl(rtl_page_size());
		atomic_store_explicit(&shift, s, memory_order_relaxed);
	}
	return s;
}

#endif
