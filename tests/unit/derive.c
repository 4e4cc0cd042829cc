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

enum { RAX,
       RCX,
       RDX,
       RBX,
       RSP,
       RBP,
       RSI,
       RDI,
       R8,
       R9,
       R10,
       R11,
       R12,
       R13,
       R14,
       R15 };

/* ---- the look-ahead over x86-64 code (decoder_aarch64.c has aarch64's) ---- */

#if defined(__x86_64__)
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

/* The move plan: plain for one operand base + disp with nothing after it;
 * an index, a look-ahead form or a second operand make it general. */
TEST(plan_is_plain_for_one_base_plus_disp_operand_only)
{
	static const uint8_t load[] = { 0x8a, 0x07, 0xc3 };                    /* mov al, [rdi]; ret */
	static const uint8_t store[] = { 0x48, 0x89, 0x47, 0x08, 0xc3 };       /* mov [rdi+8], rax; ret */
	static const uint8_t indexed[] = { 0x8a, 0x04, 0x0f, 0xc3 };           /* mov al, [rdi+rcx]; ret */
	static const uint8_t movs[] = { 0x48, 0xa5, 0xc3 };                    /* movsq; ret */
	static const uint8_t later[] = { 0x8a, 0x07, 0x8a, 0x47, 0x10, 0xc3 }; /* then [rdi+16] */
	struct rtl_insn in;

	decoder_up();
	CHECK_EQ(rtl_decode_buf(load, sizeof(load), 0x1000, &in), 0);
	CHECK(in.flags & RTL_INSN_PLAIN);
	CHECK_EQ(rtl_decode_buf(store, sizeof(store), 0x1000, &in), 0);
	CHECK(in.flags & RTL_INSN_PLAIN);
	CHECK_EQ(rtl_decode_buf(indexed, sizeof(indexed), 0x1000, &in), 0);
	CHECK(!(in.flags & RTL_INSN_PLAIN));
	CHECK_EQ(rtl_decode_buf(movs, sizeof(movs), 0x1000, &in), 0);
	CHECK(!(in.flags & RTL_INSN_PLAIN));
	CHECK_EQ(rtl_decode_buf(later, sizeof(later), 0x1000, &in), 0);
	CHECK(in.nlater > 0);
	CHECK(!(in.flags & RTL_INSN_PLAIN));
}

#endif

/* ---- the fix, on register arrays ---- */

static uint64_t other_lo, other_hi; /* "another region" for the fake map */

/* The fake address space: rtl's views are [4 GiB, 8 GiB), free but for
 * the other region; ordinary memory is mapped at [64 KiB, 4 GiB) and at
 * HEAP; nothing else is. */
#define HEAP 0x555555000000ull

static enum rtl_where fake_where(uint64_t a, void *arg)
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

static struct rtl_move move(void)
{
	struct rtl_move mv = { LO, LO + 256, LO + 200, DELTA, fake_where, NULL };
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

/* A plain plan's checks answer what the general ones answer: for a base
 * register anywhere around the span (inside, at its edges, biased below
 * it, in the other views, outside them), moved or not, with displacements
 * that keep it in the span, leave it, or bring an outside base into it. */
TEST(plain_plan_agrees_with_the_general_checks)
{
	static const int64_t disps[] = { 0, 8, -8, 255, 256, -300, 4096, -4096 };
	static const int64_t bases[] = { 0, 1, 199, 200, 255, 256, 300, -1, -64, -4096 };
	const uint64_t size = DELTA, lo0 = LO; /* views DELTA apart, span at LO in view 0 */
	struct rtl_move mv = move();
	int checked = 0;

	for (unsigned d = 0; d < sizeof(disps) / sizeof(disps[0]); d++)
		for (unsigned b = 0; b < sizeof(bases) / sizeof(bases[0]); b++)
			for (int view = 0; view < 4; view++)
				for (int moved = 0; moved < 2; moved++) {
					struct rtl_insn plain = insn_with(RDI, -1, 0), general;
					uint64_t gpr[RTL_NGPR] = { 0 };

					plain.mem[0].disp = disps[d];
					rtl_derive_plan(&plain);
					CHECK(plain.flags & RTL_INSN_PLAIN);
					general = plain;
					general.flags &= (uint8_t)~RTL_INSN_PLAIN;
					gpr[RDI] = lo0 + (uint64_t)view * size + (uint64_t)bases[b];
					gpr[RSI] = gpr[RDI]; /* another register, never in the form */
					CHECK_EQ(rtl_derive_needed_fast(&plain, &mv, gpr, moved ? 1u << RDI : 0),
					         rtl_derive_needed(&general, &mv, gpr, moved ? 1u << RDI : 0));
					CHECK_EQ(rtl_derive_forms_in_fast(&plain, gpr, lo0, 256, size),
					         rtl_derive_forms_in(&general, gpr, lo0, 256, size));
					checked++;
				}
	CHECK_EQ(checked, 8 * 10 * 4 * 2);
}

/* The trap's fast plan never moves what the general checks would fix:
 * over instructions with an indexed operand and look-ahead forms and
 * registers around the span, in the other views and outside them, every
 * time the plan holds (frame in the decoder's order here), the general
 * check finds nothing to fix for the span's move, nor for a move of the
 * same region's registers out of another view. And the plan holds often
 * enough, and fails often enough, for that to mean something. */
static uint64_t next_random(uint64_t *x)
{
	*x = *x * 6364136223846793005ull + 1442695040888963407ull;
	return *x >> 33;
}

TEST(fast_plan_agrees_with_the_general_checks)
{
	static const int8_t regs_used[] = { RDI, RSI, RDX, RCX, RSP };
	static const int64_t disps[] = { 0, 8, -8, 200, 255, 300, -4096 };
	const uint64_t values[] = { LO + 8, LO + 200, LO + 255,
		                    LO + 256, LO - 8, LO + DELTA + 8,
		                    LO + 2 * DELTA + 16, HEAP + 100, 16,
		                    3, 0x7ffd00001000ull };
	const uint64_t vbase = LO & ~(uint64_t)0xffff, all = 3 * (uint64_t)DELTA;
	int8_t slot[RTL_NGPR];
	struct rtl_move mv0 = move(), mv1 = move();
	uint64_t x = 42;
	int held = 0, refused = 0;

	for (int i = 0; i < RTL_NGPR; i++)
		slot[i] = (int8_t)i;
	mv1.lo += DELTA; /* the same span, leaving view 1 */
	mv1.hi += DELTA;
	mv1.end += DELTA;
	for (int round = 0; round < 20000; round++) {
		struct rtl_insn in;
		struct rtl_fast_plan plan;
		uint64_t gpr[RTL_NGPR] = { 0 };
		rtl_regset_t in0 = 0, in1 = 0;

		memset(&in, 0, sizeof(in));
		in.nmem = 1;
		in.mem[0] = (struct rtl_mem_op){ .base = RDI, .index = RTL_REG_NONE, .scale = 1, .size = 8 };
		if (next_random(&x) % 3 == 0) {
			in.mem[0].index = RCX;
			in.mem[0].scale = next_random(&x) % 2 ? 8 : 1;
		}
		in.mem[0].disp = disps[next_random(&x) % 7];
		in.nlater = (uint8_t)(next_random(&x) % 4);
		for (int k = 0; k < in.nlater; k++) {
			struct rtl_form *f = &in.later[k];

			f->base = regs_used[next_random(&x) % 5];
			f->index = next_random(&x) % 3 ? RTL_REG_NONE : RCX;
			f->scale = 1;
			f->disp = disps[next_random(&x) % 7];
		}
		if (next_random(&x) % 2)
			in.ptr_regs = 1u << regs_used[next_random(&x) % 5];
		for (unsigned k = 0; k < sizeof(regs_used); k++)
			gpr[regs_used[k]] = values[next_random(&x) % (sizeof(values) / sizeof(values[0]))];
		CHECK_EQ(rtl_derive_fast_plan(&in, &plan), 0);
		for (int r = 0; r < RTL_NGPR; r++) {
			in0 |= (rtl_regset_t)(gpr[r] - mv0.lo < 256) << r;
			in1 |= (rtl_regset_t)(gpr[r] - mv1.lo < 256) << r;
		}
		if (!rtl_fast_plan_holds(&plan, gpr, slot, LO, 256, vbase, all)) {
			refused++;
			continue;
		}
		held++;
		CHECK_EQ(rtl_derive_needed(&in, &mv0, gpr, in0), 0);
		CHECK_EQ(rtl_derive_needed(&in, &mv1, gpr, in1), 0);
	}
	CHECK(held > 1000);
	CHECK(refused > 1000);
}

/* No fast plan where the general path is the only one: two operands, more
 * forms than the plan keeps, a displacement past 32 bits. */
TEST(fast_plan_refuses_what_it_cannot_check)
{
	struct rtl_insn in;
	struct rtl_fast_plan plan;

	memset(&in, 0, sizeof(in));
	in.nmem = 1;
	in.mem[0] = (struct rtl_mem_op){ .base = RDI, .index = RTL_REG_NONE, .scale = 1 };
	CHECK_EQ(rtl_derive_fast_plan(&in, &plan), 0);
	CHECK(plan.only_op);
	in.nmem = 2;
	in.mem[1] = in.mem[0];
	CHECK_EQ(rtl_derive_fast_plan(&in, &plan), -1);
	CHECK_EQ(plan.op.base, RTL_REG_NONE);
	in.nmem = 1;
	in.nlater = RTL_PLAN_FORMS + 1;
	for (int k = 0; k < in.nlater; k++)
		in.later[k] = (struct rtl_form){ .base = RSI, .index = RTL_REG_NONE, .scale = 1 };
	CHECK_EQ(rtl_derive_fast_plan(&in, &plan), -1);
	in.nlater = 1;
	CHECK_EQ(rtl_derive_fast_plan(&in, &plan), 0);
	CHECK(!plan.only_op);
	in.later[0].disp = (int64_t)1 << 40;
	CHECK_EQ(rtl_derive_fast_plan(&in, &plan), -1);
	in.later[0].disp = 0;
	in.flags = RTL_INSN_REP;
	CHECK_EQ(rtl_derive_fast_plan(&in, &plan), -1);
}

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
