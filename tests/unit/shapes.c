/* The addressing shapes of glibc's EVEX, AVX2 and SSE2 string code, rebuilt
 * from general-purpose, SSE2 and (where the CPU has AVX2) VEX instructions
 * (tools/selftest/shapes_x86_64.c), copying between two regions that
 * revoke each other beside live neighbours: so a machine without AVX-512
 * still exercises what AVX-512 code does. */
#include "selftest_check.h"

#define SHAPE_TEST(n)                   \
	TEST(n)                         \
	{                               \
		run_check("shape/" #n); \
	}

SHAPE_TEST(offset_gp)
SHAPE_TEST(offset_sse2)
SHAPE_TEST(offset_avx2)
SHAPE_TEST(dstdiff_gp)
SHAPE_TEST(dstdiff_sse2)
SHAPE_TEST(dstdiff_avx2)
SHAPE_TEST(diffptr_gp)
SHAPE_TEST(diffptr_sse2)
SHAPE_TEST(diffptr_avx2)
SHAPE_TEST(srcdiff_gp)
SHAPE_TEST(srcdiff_sse2)
SHAPE_TEST(srcdiff_avx2)
SHAPE_TEST(scaled_1)
SHAPE_TEST(scaled_2)
SHAPE_TEST(scaled_4)
SHAPE_TEST(scaled_8)
