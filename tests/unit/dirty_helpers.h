/* What the DIRTY and diff tests share: a fixed-seed generator, random
 * writes into a region, an errno check, and which way a region's writes
 * are seen. tests/run.sh runs these tests twice: as the process finds the
 * kernel, and with RTL_DIRTY=traps. */
#ifndef RTL_TEST_DIRTY_HELPERS_H
#define RTL_TEST_DIRTY_HELPERS_H

#include <errno.h>
#include <stddef.h>

#include "tests/unit/helpers.h"
#include "tests/unit/test.h"

#define EXPECT_ERR(call, e)                      \
	do {                                     \
		errno = 0;                       \
		CHECK_EQ((long long)(call), -1); \
		CHECK_EQ(errno, e);              \
	} while (0)

static unsigned long long rng = 88172645463325252ull;
static inline unsigned rnd(void)
{
	return (unsigned)test_xorshift(&rng);
}

/* A few random writes, through volatile stores: the first one traps. Some
 * store the value already there (not a modification). */
static inline void random_writes(unsigned char *x, size_t n, int count)
{
	for (int k = 0; k < count; k++) {
		size_t off = rnd() % n, len = 1 + rnd() % 24;
		for (size_t i = off; i < off + len && i < n; i++)
			poke(x + i, (rnd() & 3) ? (unsigned char)rnd() : peek(x + i));
	}
}

/* Whether x's writes are seen by the kernel's written bits (else by
 * traps): what a test may expect of protections and trap counts. Results
 * (marks, diffs) are the same either way. */
static inline int on_wbits(const void *x)
{
	return region_tracking(x) == RTL_DIRTY_WRITTEN_BITS;
}

#endif
