/* The system's page size, never a constant: aarch64 kernels run with 4K,
 * 16K or 64K pages. Read from the auxiliary vector the kernel gave the
 * process (async-signal-safe: the trap path uses it too). */
#ifndef RTL_PAGE_H
#define RTL_PAGE_H

#include <stddef.h>
#include <sys/auxv.h>

static inline size_t rtl_page_size(void)
{
	static size_t page;

	if (!page)
		page = (size_t)getauxval(AT_PAGESZ);
	return page ? page : 4096;
}

/* log2 of the page size: hot paths shift instead of dividing by a size
 * that is not a constant. */
static inline unsigned rtl_page_shift(void)
{
	static unsigned shift;

	if (!shift)
		shift = (unsigned)__builtin_ctzl(rtl_page_size());
	return shift;
}

#endif
