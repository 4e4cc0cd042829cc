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

#endif
