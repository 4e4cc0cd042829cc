/* The aarch64 decoder against a table of encodings (Basilisk II's
 * arch_insn_skipper_tests): every load and store form compilers and glibc
 * emit, with the operand rtl must derive (base, index, its widening and
 * scale, displacement, bytes, read or write) and what the instruction does
 * to its registers (writeback, registers loaded). Then the look-ahead over
 * glibc-shaped code. The words come from GNU as (-march=armv8.4-a+lse+rcpc);
 * the same forms run over trapping regions in decoder_forms_aarch64.c. */
#include <string.h>

#include "decoder/aarch64.h"
#include "decoder/decoder.h"
#include "tests/unit/has_form.h"
#include "tests/unit/test.h"

#define R RTL_ACC_READ
#define W RTL_ACC_WRITE
#define RW (RTL_ACC_READ | RTL_ACC_WRITE)
#define NONE RTL_REG_NONE
#define UXTW RTL_EXT_UXTW
#define SXTW RTL_EXT_SXTW
#define SP 31
#define PC 0x10000

struct row {
	uint32_t word;
	const char *text;
	int8_t base, index;
	uint8_t scale, ext;
	int64_t disp;
	uint16_t size;
	uint8_t access;
	int8_t wb_reg;  /* -1: no writeback */
	int64_t wb_imm; /* or, with wb_index, the register */
	int8_t wb_index;
	uint32_t writes; /* general registers loaded */
};

static const struct row rows[] = {
	/* LDR/STR: unsigned offset, pre- and post-index, register offset */
	{ 0xf9400020, "ldr x0, [x1]", 1, NONE, 1, 0, 0, 8, R, -1, 0, -1, 1u << 0 },
	{ 0xf9400420, "ldr x0, [x1, #8]", 1, NONE, 1, 0, 8, 8, R, -1, 0, -1, 1u << 0 },
	{ 0xf8408c20, "ldr x0, [x1, #8]!", 1, NONE, 1, 0, 8, 8, R, 1, 8, -1, 1u << 0 },
	{ 0xf85f8420, "ldr x0, [x1], #0xfffffffffffffff8", 1, NONE, 1, 0, 0, 8, R, 1, -8, -1, 1u << 0 },
	{ 0xf8626820, "ldr x0, [x1, x2]", 1, 2, 1, 0, 0, 8, R, -1, 0, -1, 1u << 0 },
	{ 0xf8627820, "ldr x0, [x1, x2, lsl #3]", 1, 2, 8, 0, 0, 8, R, -1, 0, -1, 1u << 0 },
	{ 0xb8625820, "ldr w0, [x1, w2, uxtw #2]", 1, 2, 4, UXTW, 0, 4, R, -1, 0, -1, 1u << 0 },
	{ 0xf862d820, "ldr x0, [x1, w2, sxtw #3]", 1, 2, 8, SXTW, 0, 8, R, -1, 0, -1, 1u << 0 },
	{ 0x38626820, "ldrb w0, [x1, x2]", 1, 2, 1, 0, 0, 1, R, -1, 0, -1, 1u << 0 },
	{ 0x789fec20, "ldrsh x0, [x1, #-2]!", 1, NONE, 1, 0, -2, 2, R, 1, -2, -1, 1u << 0 },
	{ 0xb9800420, "ldrsw x0, [x1, #4]", 1, NONE, 1, 0, 4, 4, R, -1, 0, -1, 1u << 0 },
	{ 0xf85fd020, "ldur x0, [x1, #-3]", 1, NONE, 1, 0, -3, 8, R, -1, 0, -1, 1u << 0 },
	{ 0xb81fd020, "stur w0, [x1, #-3]", 1, NONE, 1, 0, -3, 4, W, -1, 0, -1, 0 },
	{ 0x393ffc20, "strb w0, [x1, #0xfff]", 1, NONE, 1, 0, 4095, 1, W, -1, 0, -1, 0 },
	{ 0x78002420, "strh w0, [x1], #2", 1, NONE, 1, 0, 0, 2, W, 1, 2, -1, 0 },
	{ 0x3d800420, "str q0, [x1, #0x10]", 1, NONE, 1, 0, 16, 16, W, -1, 0, -1, 0 },
	{ 0x3ce27820, "ldr q0, [x1, x2, lsl #4]", 1, 2, 16, 0, 0, 16, R, -1, 0, -1, 0 },
	{ 0xfc627820, "ldr d0, [x1, x2, lsl #3]", 1, 2, 8, 0, 0, 8, R, -1, 0, -1, 0 },
	{ 0xf94007e0, "ldr x0, [sp, #8]", SP, NONE, 1, 0, 8, 8, R, -1, 0, -1, 1u << 0 },
	{ 0xf87f6820, "ldr x0, [x1, xzr]", 1, NONE, 1, 0, 0, 8, R, -1, 0, -1, 1u << 0 },
	{ 0xf8408820, "ldtr x0, [x1, #8]", 1, NONE, 1, 0, 8, 8, R, -1, 0, -1, 1u << 0 },
	{ 0xd95f8020, "ldapur [x1] (0xd95f8020)", 1, NONE, 1, 0, -8, 8, R, -1, 0, -1, 1u << 0 },
	/* literal: the address is absolute */
	{ 0x58000040, "ldr x0, #0x10008", NONE, NONE, 1, 0, PC + 8, 8, R, -1, 0, -1, 1u << 0 },
	/* pairs */
	{ 0xa9400440, "ldp x0, x1, [x2]", 2, NONE, 1, 0, 0, 16, R, -1, 0, -1, 3u },
	{ 0xa9c10440, "ldp x0, x1, [x2, #0x10]!", 2, NONE, 1, 0, 16, 16, R, 2, 16, -1, 3u },
	{ 0xacc10440, "ldp q0, q1, [x2], #0x20", 2, NONE, 1, 0, 0, 32, R, 2, 32, -1, 0 },
	{ 0xa9bf7bfd, "stp x29, x30, [sp, #-0x10]!", SP, NONE, 1, 0, -16, 16, W, SP, -16, -1, 0 },
	{ 0x297f0440, "ldp w0, w1, [x2, #-8]", 2, NONE, 1, 0, -8, 8, R, -1, 0, -1, 3u },
	{ 0x69410440, "ldpsw x0, x1, [x2, #8]", 2, NONE, 1, 0, 8, 8, R, -1, 0, -1, 3u },
	{ 0xac410440, "ldnp q0, q1, [x2, #0x20]", 2, NONE, 1, 0, 32, 32, R, -1, 0, -1, 0 },
	{ 0xa8000440, "stnp x0, x1, [x2]", 2, NONE, 1, 0, 0, 16, W, -1, 0, -1, 0 },
	/* exclusives and ordered */
	{ 0xc85f7c20, "ldxr x0, [x1]", 1, NONE, 1, 0, 0, 8, R, -1, 0, -1, 1u << 0 },
	{ 0xc8037c20, "stxr w3, x0, [x1]", 1, NONE, 1, 0, 0, 8, W, -1, 0, -1, 1u << 3 },
	{ 0x085ffc20, "ldaxrb w0, [x1]", 1, NONE, 1, 0, 0, 1, R, -1, 0, -1, 1u << 0 },
	{ 0x8803fc20, "stlxr w3, w0, [x1]", 1, NONE, 1, 0, 0, 4, W, -1, 0, -1, 1u << 3 },
	{ 0xc87f8440, "ldaxp x0, x1, [x2]", 2, NONE, 1, 0, 0, 16, R, -1, 0, -1, 3u },
	{ 0xc8240440, "stxp w4, x0, x1, [x2]", 2, NONE, 1, 0, 0, 16, W, -1, 0, -1, 1u << 4 },
	{ 0xc8dffc20, "ldar x0, [x1]", 1, NONE, 1, 0, 0, 8, R, -1, 0, -1, 1u << 0 },
	{ 0x889ffc20, "stlr w0, [x1]", 1, NONE, 1, 0, 0, 4, W, -1, 0, -1, 0 },
	/* LSE atomics (Capstone 4 decodes none: the text is rtl's) */
	{ 0xc8a07c41, "cas [x2] (0xc8a07c41)", 2, NONE, 1, 0, 0, 8, RW, -1, 0, -1, 1u << 0 },
	{ 0x88e0fc41, "cas [x2] (0x88e0fc41)", 2, NONE, 1, 0, 0, 4, RW, -1, 0, -1, 1u << 0 },
	{ 0x48207c82, "casp [x4] (0x48207c82)", 4, NONE, 1, 0, 0, 16, RW, -1, 0, -1, 3u },
	{ 0xf8200041, "ldadd [x2] (0xf8200041)", 2, NONE, 1, 0, 0, 8, RW, -1, 0, -1, 1u << 1 },
	{ 0x38e00041, "ldadd [x2] (0x38e00041)", 2, NONE, 1, 0, 0, 1, RW, -1, 0, -1, 1u << 1 },
	{ 0xb820005f, "ldadd [x2] (0xb820005f)", 2, NONE, 1, 0, 0, 4, RW, -1, 0, -1, 0 },
	{ 0xf8208041, "swp [x2] (0xf8208041)", 2, NONE, 1, 0, 0, 8, RW, -1, 0, -1, 1u << 1 },
	{ 0xb8204041, "ldsmax [x2] (0xb8204041)", 2, NONE, 1, 0, 0, 4, RW, -1, 0, -1, 1u << 1 },
	{ 0xf8bfc020, "ldapr [x1] (0xf8bfc020)", 1, NONE, 1, 0, 0, 8, R, -1, 0, -1, 1u << 0 },
	/* Advanced SIMD structures */
	{ 0x4c407000, "ld1 {v0.16b}, [x0]", 0, NONE, 1, 0, 0, 16, R, -1, 0, -1, 0 },
	{ 0x4cdfa000, "ld1 {v0.16b, v1.16b}, [x0], #0x20", 0, NONE, 1, 0, 0, 32, R, 0, 32, -1, 0 },
	{ 0x4cc27000, "ld1 {v0.16b}, [x0], x2", 0, NONE, 1, 0, 0, 16, R, 0, 0, 2, 0 },
	{ 0x4c408400, "ld2 {v0.8h, v1.8h}, [x0]", 0, NONE, 1, 0, 0, 32, R, -1, 0, -1, 0 },
	{ 0x4cdf0800, NULL /* ld4 */, 0, NONE, 1, 0, 0, 64, R, 0, 64, -1, 0 },
	{ 0x4c002000, NULL /* st1 x4 */, 0, NONE, 1, 0, 0, 64, W, -1, 0, -1, 0 },
	{ 0x0c007000, "st1 {v0.8b}, [x0]", 0, NONE, 1, 0, 0, 8, W, -1, 0, -1, 0 },
	{ 0x4d008400, "st1 {v0.d}[1], [x0]", 0, NONE, 1, 0, 0, 8, W, -1, 0, -1, 0 },
	{ 0x0ddf9000, "ld1 {v0.s}[1], [x0], #4", 0, NONE, 1, 0, 0, 4, R, 0, 4, -1, 0 },
	{ 0x4d40c800, "ld1r {v0.4s}, [x0]", 0, NONE, 1, 0, 0, 4, R, -1, 0, -1, 0 },
	{ 0x0d200c00, "st2 {v0.b, v1.b}[3], [x0]", 0, NONE, 1, 0, 0, 2, W, -1, 0, -1, 0 },
	{ 0x4ddfe400, NULL /* ld3r */, 0, NONE, 1, 0, 0, 6, R, 0, 6, -1, 0 },
	/* cache zeroing and prefetch */
	{ 0xd50b7420, "dc zva, x0", 0, NONE, 1, 0, 0, 0, W, -1, 0, -1, 0 },
	{ 0xf9800000, "prfm pldl1keep, [x0]", 0, NONE, 1, 0, 0, 0, R, -1, 0, -1, 0 },
};

static void decoder_up(void)
{
	static int done;
	if (!done)
		CHECK_EQ(rtl_decoder_init(), 0);
	done = 1;
}

static void decode_word(uint32_t w, struct rtl_insn *in)
{
	uint8_t b[4];

	memcpy(b, &w, 4);
	decoder_up();
	CHECK_EQ(rtl_decode_buf(b, 4, PC, in), 0);
}

/* Every row: the operand through the public decoder, the register effects
 * through the backend's own decode. */
TEST(load_store_forms_table)
{
	for (size_t k = 0; k < sizeof(rows) / sizeof(rows[0]); k++) {
		const struct row *r = &rows[k];
		struct rtl_a64_access a;
		struct rtl_insn in;

		printf("# %08x %s\n", (unsigned)r->word, r->text ? r->text : "");
		decode_word(r->word, &in);
		if (r->text && strcmp(in.text, r->text) != 0)
			printf("# decoded as \"%s\"\n", in.text);
		if (r->text)
			CHECK(strcmp(in.text, r->text) == 0);
		CHECK_EQ(in.len, 4);
		CHECK_EQ(in.nmem, 1);
		CHECK_EQ(in.mem[0].base, r->base);
		CHECK_EQ(in.mem[0].index, r->index);
		CHECK_EQ(in.mem[0].scale, r->scale);
		CHECK_EQ(in.mem[0].ext, r->ext);
		CHECK_EQ(in.mem[0].disp, r->disp);
		CHECK_EQ(in.mem[0].size, r->size);
		CHECK_EQ(in.mem[0].access, r->access);
		CHECK_EQ(!!(in.flags & RTL_INSN_NOFAULT), r->word == 0xf9800000);
		CHECK_EQ(rtl_a64_ldst(r->word, PC, &a), 1);
		CHECK_EQ(a.wb_reg, r->wb_reg);
		CHECK_EQ(a.wb_index, r->wb_index);
		if (r->wb_index < 0)
			CHECK_EQ(a.wb_imm, r->wb_imm);
		CHECK_EQ(a.writes, r->writes);
	}
}

/* The widened index: uxtw takes the low 32 bits, sxtw sign-extends them,
 * whatever the upper half of the register holds. */
TEST(effective_address_widens_the_index)
{
	struct rtl_insn in;
	uint64_t gpr[RTL_NGPR] = { 0 };

	gpr[1] = 0x7f0000001000ull;
	gpr[2] = 0xdead000000000005ull;
	decode_word(0xb8625820, &in); /* ldr w0, [x1, w2, uxtw #2] */
	CHECK_EQ(rtl_mem_ea(&in, &in.mem[0], gpr), 0x7f0000001000ull + 20);
	gpr[2] = 0x00000000fffffffeull; /* -2 in the low half */
	decode_word(0xf862d820, &in);   /* ldr x0, [x1, w2, sxtw #3] */
	CHECK_EQ(rtl_mem_ea(&in, &in.mem[0], gpr), 0x7f0000001000ull - 16);
}

/* Words that are not memory accesses decode with no operand; words no one
 * can decode are refused. */
TEST(non_memory_and_invalid)
{
	struct rtl_insn in;
	uint8_t udf[4] = { 0, 0, 0, 0 };

	decode_word(0x8b020020, &in); /* add x0, x1, x2 */
	CHECK_EQ(in.nmem, 0);
	decoder_up();
	CHECK_EQ(rtl_decode_buf(udf, 4, PC, &in), -1);
	CHECK_EQ(rtl_decode_buf(udf, 3, PC, &in), -1); /* truncated */
}

static void decode_code(const uint32_t *code, size_t n, struct rtl_insn *in)
{
	decoder_up();
	CHECK_EQ(rtl_decode_buf((const uint8_t *)code, n * 4, PC, in), 0);
}

/* glibc's memcpy for 32..128 bytes: the end pointers srcend = src + n and
 * dstend = dst + n are formed before the loads; the look-ahead sees the
 * loads through them, and the adds of two registers as forms. */
TEST(lookahead_sees_end_pointers)
{
	static const uint32_t code[] = {
		0xad400c22, /* ldp q2, q3, [x1] */
		0x8b020024, /* add x4, x1, x2 */
		0x8b020005, /* add x5, x0, x2 */
		0xad7f0480, /* ldp q0, q1, [x4, #-32] */
		0xad000c02, /* stp q2, q3, [x0] */
		0xad3f04a0, /* stp q0, q1, [x5, #-32] */
		0xd65f03c0, /* ret */
	};
	struct rtl_insn in;

	decode_code(code, sizeof(code) / 4, &in);
	CHECK(has_form(&in, 1, 2, 0));
	CHECK(has_form(&in, 0, 2, 0));
	CHECK(in.ptr_regs >> 0 & 1);    /* stp through x0 alone */
	CHECK(!(in.ptr_regs >> 4 & 1)); /* x4 was redefined first */
}

/* A writeback offsets its base for the forms after it: after
 * ldr x3, [x1], #8 the form [x1 + x2] is [x1_at_trap + x2 + 8]. */
TEST(lookahead_follows_writeback)
{
	static const uint32_t code[] = {
		0xf8408423, /* ldr x3, [x1], #8 */
		0xf8626824, /* ldr x4, [x1, x2] */
		0xd65f03c0, /* ret */
	};
	struct rtl_insn in;

	decode_code(code, sizeof(code) / 4, &in);
	CHECK(has_form(&in, 1, 2, 8));
}

/* cmp and b.cond make conditions: glibc dispatches on the size. */
TEST(lookahead_keeps_conditions)
{
	static const uint32_t code[] = {
		0xf9400023, /* ldr x3, [x1] */
		0xf100805f, /* cmp x2, #32 */
		0x54000048, /* b.hi +8 */
		0xf8626824, /* ldr x4, [x1, x2] (only for n <= 32) */
		0xd65f03c0, /* ret */
	};
	struct rtl_insn in;
	uint64_t gpr[RTL_NGPR] = { 0 };

	decode_code(code, sizeof(code) / 4, &in);
	CHECK(has_form(&in, 1, 2, 0));
	for (int k = 0; k < in.nlater; k++) {
		if (in.later[k].index != 2)
			continue;
		CHECK_EQ(in.later[k].ncond, 1);
		gpr[2] = 16;
		CHECK(rtl_cond_holds(&in.later[k].cond[0], gpr));
		gpr[2] = 100;
		CHECK(!rtl_cond_holds(&in.later[k].cond[0], gpr));
	}
}

/* glibc 2.36's strcmp loop (with a cmp of the difference added), as code
 * in this process so that the look-ahead can follow its branch back to the
 * load before the trapping one. Capstone 4 reports cmp x10, x12 as writing
 * x10, and ccmp's flag field (bits 4..0) is no register: the look-ahead
 * takes data processing from the word, and keeps [x0 + x10] (src1 + (src2
 * - src1)) alive through them. */
__asm__(".text\n"
        ".balign 64\n"
        ".globl strcmp_trap\n"
        ".hidden strcmp_trap\n"
        "strcmp_loop:\n"
        "\tldr x3, [x0, x10]\n"
        "strcmp_trap:\n"
        "\tldr x2, [x0], #8\n"
        "\tsub x4, x2, x8\n"
        "\tcmp x10, x12\n"
        "\torr x6, x2, #0x7f7f7f7f7f7f7f7f\n"
        "\tbics x4, x4, x6\n"
        "\tccmp x2, x3, #0, eq\n"
        "\tb.eq strcmp_loop\n"
        "\tret\n");
extern const char strcmp_trap[];

TEST(lookahead_keeps_pointers_through_compares)
{
	struct rtl_insn in;

	decoder_up();
	CHECK_EQ(rtl_decode((uint64_t)(uintptr_t)strcmp_trap, &in), 0);
	CHECK(strcmp(in.text, "ldr x2, [x0], #8") == 0);
	CHECK(has_form(&in, 0, 10, 8)); /* after the writeback */
}
