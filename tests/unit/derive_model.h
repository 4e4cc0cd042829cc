/* The model the derived-address tests share (derive.c, plan.c): x86-64's
 * register numbers, a fake address space with rtl's views and another
 * region, a 256-byte span moving one view up, instructions built by hand. */
#ifndef RTL_TEST_DERIVE_MODEL_H
#define RTL_TEST_DERIVE_MODEL_H

#include <string.h>

#include "decoder/derive.h"
#include "tests/unit/test.h"
#include "tests/unit/x86_regs.h"

#if defined(__x86_64__)
static inline void decoder_up(void)
{
	static int done;
	if (!done)
		CHECK_EQ(rtl_decoder_init(), 0);
	done = 1;
}
#endif

static uint64_t other_lo, other_hi; /* "another region" for the fake map */

/* The fake address space: rtl's views are [4 GiB, 8 GiB), free but for
 * the other region; ordinary memory is mapped at [64 KiB, 4 GiB) and at
 * HEAP; nothing else is. */
#define HEAP 0x555555000000ull

static inline enum rtl_where fake_where(uint64_t a, void *arg)
{
	(void)arg;
	if (a - other_lo < other_hi - other_lo)
		return RTL_AT_OBJECT;
	if (a >= 0x100000000ull && a < 0x200000000ull)
		return RTL_AT_FREE;
	if ((a >= 65536 && a < 0x100000000ull) || a - HEAP < 0x1000000)
		return RTL_AT_OBJECT;
	return RTL_AT_NOADDR;
}

#define LO 0x100010000ull
#define DELTA 0x1000000000ll

static inline struct rtl_move move(void)
{
	struct rtl_move mv = { LO, LO + 256, LO + 200, DELTA, fake_where, NULL };
	return mv;
}

static inline struct rtl_insn insn_with(int8_t b, int8_t i, int later)
{
	struct rtl_insn in;
	memset(&in, 0, sizeof(in));
	if (later) {
		in.nlater = 1;
		in.later[0] = (struct rtl_form){ .base = b, .index = i, .scale = 1 };
	} else {
		in.nmem = 1;
		in.mem[0] = (struct rtl_mem_op){ .base = b, .index = i, .scale = 1 };
	}
	return in;
}

#endif
