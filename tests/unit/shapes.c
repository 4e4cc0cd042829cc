/* The addressing shapes of glibc's string code, rebuilt from the
 * architecture's own instructions (tools/selftest/shapes_x86_64.c: GP, SSE2
 * and where the CPU has AVX2 VEX; shapes_aarch64.c), copying between two regions that
 * revoke each other beside live neighbours: so a machine without AVX-512
 * still exercises what AVX-512 code does. */
#include "tests/unit/selftest_check.h"
#include "tools/selftest/shapes.h"

#define SHAPE_TEST(n, avail, what)      \
	TEST(n)                         \
	{                               \
		run_check("shape/" #n); \
	}

ST_SHAPES(SHAPE_TEST)
