/* The vector register scan (core/trap/scan.h) against the plain unsigned
 * compare it stands for: random registers, and the values at the edges of
 * the window and of the sign bit its signed compare is biased around. */
#include <stdint.h>

#include "core/trap/scan.h"
#include "tests/unit/test.h"

#ifdef RTL_SCAN_AVX2 /* built on x86-64 only (meson.build) */
static unsigned long long rng = 0x243f6a8885a308d3ull;

static uint64_t next(void)
{
	return test_xorshift(&rng);
}

/* The scan inlines only into a function built for AVX2, as move.c's. */
static __attribute__((noinline, target("avx2"))) uint32_t scan(const uint64_t *regs,
                                                               uint64_t lo, uint64_t len)
{
	return rtl_scan_avx2(regs, lo, len);
}

static uint32_t expected(const uint64_t *regs, uint64_t lo, uint64_t len)
{
	uint32_t mask = 0;

	for (int i = 0; i < RTL_NGPR; i++)
		if (regs[i] - lo < len)
			mask |= (uint32_t)1 << i;
	return mask;
}

/* A value near one of the window's edges or the sign bit's, or anywhere. */
static uint64_t pick(uint64_t lo, uint64_t len)
{
	static const uint64_t edge[] = { 0, 1, UINT64_C(1) << 63 };
	uint64_t d = next() % 5 - 2;

	switch (next() % 6) {
	case 0:
		return lo + d;
	case 1:
		return lo + len + d;
	case 2:
		return edge[next() % 3] + d;
	case 3:
		return lo + next() % (len ? len : 1);
	default:
		return next();
	}
}

TEST(scan_matches_the_unsigned_compare)
{
	uint64_t regs[RTL_NGPR + 1];

	if (!rtl_scan_avx2_ok()) {
		printf("# no AVX2 on this CPU: the scalar move runs instead\n");
		return;
	}
	for (int round = 0; round < 200000; round++) {
		uint64_t lo = round % 4 == 0 ? (UINT64_C(1) << 63) - next() % 64 : next();
		uint64_t len = round % 3 == 0 ? next() % 4096 : next() >> (next() % 64);

		/* Unaligned, as the signal frame's words need not be 32-byte
		 * aligned. */
		for (int i = 0; i < RTL_NGPR; i++)
			regs[1 + i] = pick(lo, len);
		CHECK_EQ(scan(regs + 1, lo, len), expected(regs + 1, lo, len));
	}
}

TEST(scan_sees_each_register_alone)
{
	uint64_t regs[RTL_NGPR];

	if (!rtl_scan_avx2_ok())
		return;
	for (int i = 0; i < RTL_NGPR; i++) {
		for (int j = 0; j < RTL_NGPR; j++)
			regs[j] = 0x1000 + (uint64_t)j;
		regs[i] = 0x300000000000 + 64;
		CHECK_EQ(scan(regs, 0x300000000000, 4096), (uint32_t)1 << i);
	}
}
#endif
