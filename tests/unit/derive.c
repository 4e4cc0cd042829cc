/* Derived addresses: the look-ahead finds the address forms the code after
 * a trap uses; the fix keeps them pointing where they pointed when a view
 * move shifts some registers; on real traps, a pointer plus a difference is
 * handled and a form nobody can explain dies with a diagnostic. Also: the
 * decode cache follows code changes; over-reads and straddling accesses. */
#include <signal.h>
#include <sys/mman.h>

#include "derive.h"
#include "helpers.h"
#include "test.h"

enum { RAX, RCX, RDX, RBX, RSP, RBP, RSI, RDI };

static void decoder_up(void)
{
	static int done;
	if (!done)
		CHECK_EQ(rtl_decoder_init(), 0);
	done = 1;
}

static int has_form(const struct rtl_insn *in, int b, int i, int64_t disp)
{
	for (int k = 0; k < in->nlater; k++)
		if (in->later[k].base == b && in->later[k].index == i &&
		    in->later[k].disp == disp)
			return 1;
	return 0;
}

/* glibc 2.36 __memcmp_avx2_movbe's 4x loop (rsi = s2 - s1, rdi = s1):
 * from the load of s1 the look-ahead sees [rsi + rdi + 32] and rdi alone. */
TEST(lookahead_finds_memcmp_difference)
{
	static const uint8_t loop[] = {
		0xc5, 0xf5, 0x74, 0x0f,             /* vpcmpeqb ymm1,ymm1,[rdi] */
		0xc5, 0xfe, 0x6f, 0x54, 0x3e, 0x20, /* vmovdqu ymm2,[rsi+rdi+32] */
		0xc5, 0xed, 0x74, 0x57, 0x20,       /* vpcmpeqb ymm2,ymm2,[rdi+32] */
		0x48, 0x83, 0xef, 0x80,             /* sub rdi, -128 */
		0x48, 0x39, 0xd7,                   /* cmp rdi, rdx */
		0x72, 0xe8,                         /* jb loop */
		0xc3,                               /* ret */
	};
	struct rtl_insn in;

	decoder_up();
	CHECK_EQ(rtl_decode_buf(loop, sizeof(loop), 0x1000, &in), 0);
	CHECK(has_form(&in, RSI, RDI, 32));
	CHECK(in.ptr_regs & (1u << RDI));
	CHECK(!(in.ptr_regs & (1u << RSI)));
	/* The same loop entered at the load of s1 + 32: the look-ahead follows
	 * rdi += 128 round the loop and sees [rsi + rdi + 32 + 128]. */
	static const uint8_t rotated[] = {
		0xc5, 0xed, 0x74, 0x57, 0x20,       /* vpcmpeqb ymm2,ymm2,[rdi+32] */
		0x48, 0x83, 0xef, 0x80,             /* sub rdi, -128 */
		0x48, 0x39, 0xd7,                   /* cmp rdi, rdx */
		0x73, 0x0c,                         /* jae out */
		0xc5, 0xf5, 0x74, 0x0f,             /* vpcmpeqb ymm1,ymm1,[rdi] */
		0xc5, 0xfe, 0x6f, 0x54, 0x3e, 0x20, /* vmovdqu ymm2,[rsi+rdi+32] */
		0xeb, 0xe6,                         /* jmp start */
		0xc3,                               /* out: ret */
	};
	CHECK_EQ(rtl_decode_buf(rotated, sizeof(rotated), 0x1000, &in), 0);
	CHECK(has_form(&in, RSI, RDI, 128 + 32));
}

/* A register written by anything but an added constant ends the forms
 * that use it. */
TEST(lookahead_stops_at_redefinition)
{
	static const uint8_t code[] = {
		0x8a, 0x07,             /* mov al, [rdi] */
		0x48, 0x89, 0xc6,       /* mov rsi, rax */
		0x8a, 0x04, 0x37,       /* mov al, [rdi+rsi] */
		0xc3,
	};
	struct rtl_insn in;

	decoder_up();
	CHECK_EQ(rtl_decode_buf(code, sizeof(code), 0x1000, &in), 0);
	CHECK_EQ(in.nlater, 0);
}

/* ---- the fix, on register arrays ---- */

static uint64_t other_lo, other_hi; /* "another region" for the fake map */

static enum rtl_where fake_where(uint64_t a, void *arg)
{
	(void)arg;
	if (a - other_lo < other_hi - other_lo)
		return RTL_AT_REGION;
	if (a >= 0x100000000ull && a < 0x200000000ull)
		return RTL_AT_FREE;
	return RTL_AT_OUTSIDE;
}

#define LO 0x100010000ull
#define DELTA 0x1000000000ll

static struct rtl_move move(void)
{
	struct rtl_move mv = { LO, LO + 256, DELTA, fake_where, NULL };
	return mv;
}

static struct rtl_insn insn_with(int8_t b, int8_t i, int later)
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

/* A pointer moved; the difference beside it moves back, so the later
 * access still reaches the ordinary object. */
TEST(fix_compensates_difference_after_pointer_moved)
{
	struct rtl_insn in = insn_with(RSI, RDI, 1);
	struct rtl_move mv = move();
	uint64_t old[RTL_NGPR] = { 0 }, gpr[RTL_NGPR];

	old[RDI] = LO + 8;              /* in the span: moves */
	old[RSI] = 0x5000 - (LO + 8);   /* difference to 0x5000 */
	memcpy(gpr, old, sizeof(gpr));
	gpr[RDI] += DELTA;
	CHECK_EQ(rtl_derive_fix(&in, NULL, &mv, old, gpr), 0);
	CHECK_EQ(gpr[RSI] + gpr[RDI], 0x5000);
}

/* An index running past the span into free space of the same view is the
 * span's own (an over-read): it stays. */
TEST(fix_leaves_index_past_the_span)
{
	struct rtl_insn in = insn_with(RDI, RCX, 1);
	struct rtl_move mv = move();
	uint64_t old[RTL_NGPR] = { 0 }, gpr[RTL_NGPR];

	old[RDI] = LO + 200;
	old[RCX] = 96; /* LO + 296: past the 256-byte span, free */
	memcpy(gpr, old, sizeof(gpr));
	gpr[RDI] += DELTA;
	CHECK_EQ(rtl_derive_fix(&in, NULL, &mv, old, gpr), 0);
	CHECK_EQ(gpr[RCX], 96);
}

/* The faulting operand: base + difference, neither in the span. The one
 * that points into another region is the pointer; the other moves. */
TEST(fix_moves_difference_beside_other_region_pointer)
{
	struct rtl_insn in = insn_with(RDX, RAX, 0);
	struct rtl_move mv = move();
	uint64_t old[RTL_NGPR] = { 0 }, gpr[RTL_NGPR];

	other_lo = 0x100100000ull;
	other_hi = other_lo + 4096;
	old[RAX] = other_lo + 16;
	old[RDX] = LO + 32 - old[RAX];
	memcpy(gpr, old, sizeof(gpr));
	CHECK_EQ(rtl_derive_fix(&in, &in.mem[0], &mv, old, gpr), 0);
	CHECK_EQ(gpr[RAX], old[RAX]);
	CHECK_EQ(gpr[RDX] + gpr[RAX], LO + 32 + DELTA);
}

/* ... with no evidence either way it is refused (-1), not guessed. */
TEST(fix_refuses_to_guess)
{
	struct rtl_insn in = insn_with(RDX, RAX, 0);
	struct rtl_move mv = move();
	uint64_t old[RTL_NGPR] = { 0 }, gpr[RTL_NGPR];

	other_lo = other_hi = 0;
	old[RAX] = 0x555555550000ull; /* ordinary memory */
	old[RDX] = LO + 32 - old[RAX];
	memcpy(gpr, old, sizeof(gpr));
	CHECK_EQ(rtl_derive_fix(&in, &in.mem[0], &mv, old, gpr), -1);
	/* The code after uses rax alone: rax is the pointer, rdx moves. */
	in.ptr_regs = 1u << RAX;
	CHECK_EQ(rtl_derive_fix(&in, &in.mem[0], &mv, old, gpr), 0);
	CHECK_EQ(gpr[RAX], old[RAX]);
	CHECK_EQ(gpr[RDX], old[RDX] + DELTA);
}

/* A pointer biased a few bytes before the span carries it. */
TEST(fix_moves_biased_pointer)
{
	struct rtl_insn in = insn_with(RDI, RCX, 0);
	struct rtl_move mv = move();
	uint64_t old[RTL_NGPR] = { 0 }, gpr[RTL_NGPR];

	old[RDI] = LO - 24;
	old[RCX] = 32;
	memcpy(gpr, old, sizeof(gpr));
	CHECK_EQ(rtl_derive_fix(&in, &in.mem[0], &mv, old, gpr), 0);
	CHECK_EQ(gpr[RDI], LO - 24 + DELTA);
	CHECK_EQ(gpr[RCX], 32);
}
