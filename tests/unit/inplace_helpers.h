/* What the in-place tests share (inplace.c, inplace_threads.c): the page
 * size, a region's byte through another view, a region put in place. */
#ifndef RTL_TEST_INPLACE_HELPERS_H
#define RTL_TEST_INPLACE_HELPERS_H

#include <unistd.h>

#include "tests/unit/helpers.h"
#include "tests/unit/test.h"

#define PAGE ((size_t)sysconf(_SC_PAGESIZE))

/* p (a region's address in any view) moved to the view of prot. */
static inline char *in_view(void *p, int prot)
{
	return region_view(p, prot);
}

/* A region of whole pages (its buddy block is its own), in place with
 * protection prot; returns its address in its home, the view of prot (RO
 * for RW: the RW view is never a home). */
static inline char *in_place(size_t size, int prot)
{
	char *rw = region_alloc(size, NULL);
	int home = prot == RW ? PROT_READ : prot;

	CHECK(rw != NULL);
	region_handler(rw, grant_handler);
	CHECK_EQ(region_protect_in_place(in_view(rw, home), prot), 0);
	return in_view(rw, home);
}

#endif
