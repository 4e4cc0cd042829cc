/* The plans cached with a decode (decoder/plan.c): plain only for one
 * base + disp operand with nothing after it, and its one-comparison checks
 * answering what the general ones answer; the trap's fast plan holding
 * only where the general check finds nothing to fix, and refusing what it
 * cannot check. */
#include "decoder/derive.h"
#include "tests/unit/derive_model.h"
#include "tests/unit/test.h"

#if defined(__x86_64__)
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
