/* Derived addresses: the look-ahead finds the address forms the code after
 * a trap uses; the fix keeps them pointing where they pointed when a view
 * move shifts some registers; on real traps, a pointer plus a difference is
 * handled and a form nobody can explain dies with a diagnostic. Also: the
 * decode cache follows code changes; over-reads and straddling accesses. */
#include <signal.h>
#include <sys/mman.h>

#include "decoder/derive.h"
#include "tests/unit/derive_model.h"
#include "tests/unit/helpers.h"
#include "tests/unit/has_form.h"
#include "tests/unit/test.h"

/* ---- the look-ahead over x86-64 code (decoder_aarch64.c has aarch64's) ---- */

#if defined(__x86_64__)
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
		0x8a,
		0x07, /* mov al, [rdi] */
		0x48,
		0x89,
		0xc6, /* mov rsi, rax */
		0x8a,
		0x04,
		0x37, /* mov al, [rdi+rsi] */
		0xc3,
	};
	struct rtl_insn in;

	decoder_up();
	CHECK_EQ(rtl_decode_buf(code, sizeof(code), 0x1000, &in), 0);
	CHECK_EQ(in.nlater, 0);
}

#endif

/* ---- the fix, on register arrays ---- */

/* A pointer moved; the difference beside it moves back, so the later
 * access still reaches the ordinary object. */
TEST(fix_compensates_difference_after_pointer_moved)
{
	struct rtl_insn in = insn_with(RSI, RDI, 1);
	struct rtl_move mv = move();
	uint64_t old[RTL_NGPR] = { 0 }, gpr[RTL_NGPR];

	old[RDI] = LO + 8;                /* in the span: moves */
	old[RSI] = (HEAP + 8) - (LO + 8); /* difference to plain memory */
	memcpy(gpr, old, sizeof(gpr));
	gpr[RDI] += DELTA;
	CHECK_EQ(rtl_derive_fix(&in, NULL, &mv, old, gpr), 0);
	CHECK_EQ(gpr[RSI] + gpr[RDI], HEAP + 8);
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

/* ... with no evidence either way it is refused (-1), not guessed: both
 * registers could point into ordinary memory. */
TEST(fix_refuses_to_guess)
{
	struct rtl_insn in = insn_with(RDX, RAX, 0);
	struct rtl_move mv = move();
	uint64_t old[RTL_NGPR] = { 0 }, gpr[RTL_NGPR];

	other_lo = other_hi = 0;
	old[RAX] = 0x100000;           /* ordinary memory */
	old[RDX] = LO + 32 - old[RAX]; /* below 4 GiB: ordinary memory too */
	memcpy(gpr, old, sizeof(gpr));
	CHECK_EQ(rtl_derive_fix(&in, &in.mem[0], &mv, old, gpr), -1);
	/* The code after uses rax alone: rax is the pointer, rdx moves. */
	in.ptr_regs = 1u << RAX;
	CHECK_EQ(rtl_derive_fix(&in, &in.mem[0], &mv, old, gpr), 0);
	CHECK_EQ(gpr[RAX], old[RAX]);
	CHECK_EQ(gpr[RDX], old[RDX] + DELTA);
}

/* A value that cannot be an address (non-canonical) beside one that points
 * into ordinary memory: the number moves, as a difference. */
TEST(fix_moves_the_number_beside_a_pointer)
{
	struct rtl_insn in = insn_with(RAX, RDX, 0);
	struct rtl_move mv = move();
	uint64_t old[RTL_NGPR] = { 0 }, gpr[RTL_NGPR];

	other_lo = other_hi = 0;
	old[RAX] = HEAP + 64;          /* ordinary memory */
	old[RDX] = LO + 32 - old[RAX]; /* negative: no address */
	memcpy(gpr, old, sizeof(gpr));
	CHECK_EQ(rtl_derive_fix(&in, &in.mem[0], &mv, old, gpr), 0);
	CHECK_EQ(gpr[RAX] + gpr[RDX], LO + 32 + DELTA);
	CHECK_EQ(gpr[RDX], old[RDX] + DELTA);
}

/* glibc's EVEX strcpy: rsi = source (the moving span), rdi = destination
 * minus (src & 31), lying in the span's padding because the destination
 * region follows it, rcx = the running offset. The source load forms
 * [rsi + rcx], the store [rdi + rcx]: rdi stays with the destination,
 * rcx (a number) stays, rsi moves. */
TEST(fix_keeps_biased_destination_in_the_padding)
{
	struct rtl_insn in;
	struct rtl_move mv = move();
	uint64_t old[RTL_NGPR] = { 0 }, gpr[RTL_NGPR];

	memset(&in, 0, sizeof(in));
	in.nmem = 1;
	in.mem[0] = (struct rtl_mem_op){ .base = RSI, .index = RCX, .scale = 1 };
	in.nlater = 1;
	in.later[0] = (struct rtl_form){ .base = RDI, .index = RCX, .scale = 1 };
	other_lo = LO + 256; /* the destination region, right after the span */
	other_hi = other_lo + 4096;
	old[RSI] = LO;
	old[RDI] = other_lo - 5;
	old[RCX] = 0x20;
	memcpy(gpr, old, sizeof(gpr));
	gpr[RSI] += DELTA;
	gpr[RDI] += DELTA; /* the default move took it: it lies in the span */
	CHECK_EQ(rtl_derive_fix(&in, &in.mem[0], &mv, old, gpr), 0);
	CHECK_EQ(gpr[RSI], LO + DELTA);
	CHECK_EQ(gpr[RCX], 0x20);
	CHECK_EQ(gpr[RDI], other_lo - 5);
}

/* The same store when the destination region moves: rdi lies just below
 * its span, in the live neighbour's bytes or not; rcx (a number) never
 * moves, rdi does, whether the neighbour is live or free. */
TEST(fix_biased_base_ignores_a_live_neighbour)
{
	struct rtl_insn in = insn_with(RDI, RCX, 0);
	struct rtl_move mv = move();
	uint64_t old[RTL_NGPR] = { 0 }, gpr[RTL_NGPR];

	for (int live = 0; live < 2; live++) {
		other_lo = live ? LO - 4096 : 0;
		other_hi = live ? LO : 0;
		old[RDI] = LO - 1;
		old[RCX] = 1 + 16;
		memcpy(gpr, old, sizeof(gpr));
		CHECK_EQ(rtl_derive_fix(&in, &in.mem[0], &mv, old, gpr), 0);
		CHECK_EQ(gpr[RDI], LO - 1 + DELTA);
		CHECK_EQ(gpr[RCX], 17);
	}
}

/* No base: the scaled index carries the address and moves by delta /
 * scale. */
TEST(fix_moves_scaled_index_without_base)
{
	struct rtl_insn in;
	struct rtl_move mv = move();
	uint64_t old[RTL_NGPR] = { 0 }, gpr[RTL_NGPR];

	memset(&in, 0, sizeof(in));
	in.nmem = 1;
	in.mem[0] = (struct rtl_mem_op){ .base = -1, .index = RAX, .scale = 4 };
	other_lo = other_hi = 0;
	old[RAX] = (LO + 64) / 4;
	memcpy(gpr, old, sizeof(gpr));
	CHECK_EQ(rtl_derive_fix(&in, &in.mem[0], &mv, old, gpr), 0);
	CHECK_EQ(gpr[RAX] * 4, LO + 64 + DELTA);
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

/* A pointer into the region's last bytes plus a zero index, carried past
 * the span by the displacement (AddressSanitizer's checks form such
 * addresses): the index is no difference and stays; the pointer moves. */
TEST(fix_leaves_index_when_the_displacement_leaves_the_span)
{
	struct rtl_insn in;
	struct rtl_move mv = move();
	uint64_t old[RTL_NGPR] = { 0 }, gpr[RTL_NGPR];

	memset(&in, 0, sizeof(in));
	in.nmem = 1;
	in.mem[0] = (struct rtl_mem_op){ .base = R15, .index = -1, .scale = 1 };
	in.nlater = 1;
	in.later[0] = (struct rtl_form){ .base = R15, .index = RBX, .scale = 1, .disp = 58 + 0x21 };
	other_lo = LO + 256; /* a live neighbour where that address lands */
	other_hi = other_lo + 4096;
	old[R15] = LO + 198; /* the last bytes of the region (200 bytes) */
	old[RBX] = 0;
	memcpy(gpr, old, sizeof(gpr));
	gpr[R15] += DELTA;
	CHECK_EQ(rtl_derive_fix(&in, &in.mem[0], &mv, old, gpr), 0);
	CHECK_EQ(gpr[R15], LO + 198 + DELTA);
	CHECK_EQ(gpr[RBX], 0);
}

/* ... but a large difference with a displacement is a difference: strcmp's
 * lea -0x80(%rdi,%rsi,1) beside the load (%rsi,%rdi,1) into the stack. */
TEST(fix_compensates_difference_beside_a_displacement)
{
	struct rtl_insn in;
	struct rtl_move mv = move();
	uint64_t old[RTL_NGPR] = { 0 }, gpr[RTL_NGPR];

	memset(&in, 0, sizeof(in));
	in.nmem = 1;
	in.mem[0] = (struct rtl_mem_op){ .base = RDI, .index = -1, .scale = 1 };
	in.nlater = 2;
	in.later[0] = (struct rtl_form){ .base = RSI, .index = RDI, .scale = 1 };
	in.later[1] = (struct rtl_form){ .base = RDI, .index = RSI, .scale = 1, .disp = -0x7f };
	other_lo = other_hi = 0;
	old[RDI] = LO + 250; /* the region's last bytes */
	old[RSI] = (HEAP + 0x48e) - old[RDI];
	memcpy(gpr, old, sizeof(gpr));
	gpr[RDI] += DELTA;
	CHECK_EQ(rtl_derive_fix(&in, &in.mem[0], &mv, old, gpr), 0);
	CHECK_EQ(gpr[RDI], LO + 250 + DELTA);
	CHECK_EQ(gpr[RSI] + gpr[RDI], HEAP + 0x48e);
}
