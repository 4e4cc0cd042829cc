/* The decoder's common forms, table-driven in the manner of Basilisk II's
 * arch_insn_skipper_tests: encoding in, expected operand out. The full
 * coverage of every access form lives in decoder_forms.c. */
#include <string.h>

#include "decoder/decoder.h"
#include "tests/unit/test.h"
#include "tests/unit/x86_regs.h"

#define NO RTL_REG_NONE
#define PC RTL_REG_PC
#define RD RTL_ACC_READ
#define WR RTL_ACC_WRITE

static const struct form {
	const char *text;
	uint8_t len, bytes[15];
	int8_t base, index;
	uint8_t scale;
	int64_t disp;
	uint8_t access, size, nmem, addr32;
} forms[] = {
	{ "mov eax, [rdi]", 2, { 0x8b, 0x07 }, RDI, NO, 1, 0, RD, 4, 1, 0 },
	{ "mov [rsi+8], rax", 4, { 0x48, 0x89, 0x46, 0x08 }, RSI, NO, 1, 8, WR, 8, 1, 0 },
	{ "mov byte [rax+rcx*4+16], 1", 5, { 0xc6, 0x44, 0x88, 0x10, 0x01 }, RAX, RCX, 4, 16, WR, 1, 1, 0 },
	{ "movzx eax, byte [rdx+r8]", 5, { 0x42, 0x0f, 0xb6, 0x04, 0x02 }, RDX, R8, 1, 0, RD, 1, 1, 0 },
	{ "movsx rax, word [r12-4]", 6, { 0x49, 0x0f, 0xbf, 0x44, 0x24, 0xfc }, R12, NO, 1, -4, RD, 2, 1, 0 },
	{ "movsxd rax, [r13+r14*8]", 5, { 0x4b, 0x63, 0x44, 0xf5, 0x00 }, R13, R14, 8, 0, RD, 4, 1, 0 },
	{ "add [rbx], eax", 2, { 0x01, 0x03 }, RBX, NO, 1, 0, RD | WR, 4, 1, 0 },
	{ "sub rax, [rbp-32]", 4, { 0x48, 0x2b, 0x45, 0xe0 }, RBP, NO, 1, -32, RD, 8, 1, 0 },
	{ "cmp byte [r15], 0", 4, { 0x41, 0x80, 0x3f, 0x00 }, R15, NO, 1, 0, RD, 1, 1, 0 },
	{ "test dword [rdi+4], 1", 7, { 0xf7, 0x47, 0x04, 0x01, 0, 0, 0 }, RDI, NO, 1, 4, RD, 4, 1, 0 },
	{ "inc qword [rsi]", 3, { 0x48, 0xff, 0x06 }, RSI, NO, 1, 0, RD | WR, 8, 1, 0 },
	{ "movss xmm0, [rdi]", 4, { 0xf3, 0x0f, 0x10, 0x07 }, RDI, NO, 1, 0, RD, 4, 1, 0 },
	{ "movups [rsi], xmm1", 3, { 0x0f, 0x11, 0x0e }, RSI, NO, 1, 0, WR, 16, 1, 0 },
	{ "movdqa xmm2, [rax+rbx*2]", 5, { 0x66, 0x0f, 0x6f, 0x14, 0x58 }, RAX, RBX, 2, 0, RD, 16, 1, 0 },
	{ "vmovdqu ymm0, [rsi+32]", 5, { 0xc5, 0xfe, 0x6f, 0x46, 0x20 }, RSI, NO, 1, 32, RD, 32, 1, 0 },
	{ "vmovdqu [rdi+rcx], ymm1", 5, { 0xc5, 0xfe, 0x7f, 0x0c, 0x0f }, RDI, RCX, 1, 0, WR, 32, 1, 0 },
	{ "vpcmpeqb ymm1, ymm0, [rdi]", 4, { 0xc5, 0xfd, 0x74, 0x0f }, RDI, NO, 1, 0, RD, 32, 1, 0 },
	{ "mov eax, [rip+0x100]", 6, { 0x8b, 0x05, 0x00, 0x01, 0, 0 }, PC, NO, 1, 0x100, RD, 4, 1, 0 },
	{ "mov eax, [eax]", 3, { 0x67, 0x8b, 0x00 }, RAX, NO, 1, 0, RD, 4, 1, 1 },
	{ "lea rax, [rdi+8] (no access)", 4, { 0x48, 0x8d, 0x47, 0x08 }, NO, NO, 0, 0, 0, 0, 0, 0 },
};

static int init_once(void)
{
	static int done;
	if (!done)
		done = rtl_decoder_init() == 0 ? 1 : -1;
	return done;
}

TEST(common_forms_table)
{
	CHECK_EQ(init_once(), 1);
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		const struct form *f = &forms[i];
		struct rtl_insn in;

		printf("# %s\n", f->text);
		CHECK_EQ(rtl_decode_buf(f->bytes, f->len, 0x1000, &in), 0);
		CHECK_EQ(in.len, f->len);
		CHECK_EQ(in.nmem, f->nmem);
		if (!f->nmem)
			continue;
		CHECK_EQ(in.mem[0].base, f->base);
		CHECK_EQ(in.mem[0].index, f->index);
		if (f->index != NO)
			CHECK_EQ(in.mem[0].scale, f->scale);
		CHECK_EQ(in.mem[0].disp, f->disp);
		CHECK_EQ(in.mem[0].access, f->access);
		CHECK_EQ(in.mem[0].size, f->size);
		CHECK_EQ(in.mem[0].addr32, f->addr32);
	}
}

/* Effective addresses computed from registers, pc-relative included. */
TEST(effective_address)
{
	struct rtl_insn in;
	uint64_t gpr[RTL_NGPR] = { 0 };

	CHECK_EQ(init_once(), 1);
	CHECK_EQ(rtl_decode_buf(forms[2].bytes, forms[2].len, 0x1000, &in), 0);
	gpr[RAX] = 0x10000;
	gpr[RCX] = 3;
	CHECK_EQ(rtl_mem_ea(&in, &in.mem[0], gpr), 0x10000 + 12 + 16);
	CHECK_EQ(rtl_decode_buf(forms[17].bytes, forms[17].len, 0x1000, &in), 0);
	CHECK_EQ(rtl_mem_ea(&in, &in.mem[0], gpr), 0x1000 + 6 + 0x100);
	CHECK_EQ(rtl_decode_buf(forms[18].bytes, forms[18].len, 0x1000, &in), 0);
	gpr[RAX] = 0x1234567890ull;
	CHECK_EQ(rtl_mem_ea(&in, &in.mem[0], gpr), 0x34567890ull);
}

/* String instructions name their implicit rsi/rdi operands. */
TEST(string_instruction_operands)
{
	static const uint8_t movsb[] = { 0xf3, 0xa4 }, stosq[] = { 0xf3, 0x48, 0xab };
	struct rtl_insn in;

	CHECK_EQ(init_once(), 1);
	CHECK_EQ(rtl_decode_buf(movsb, 2, 0, &in), 0);
	CHECK(in.flags & RTL_INSN_REP);
	CHECK_EQ(in.nmem, 2);
	int dst = in.mem[0].base == RDI ? 0 : 1;
	CHECK_EQ(in.mem[dst].base, RDI);
	CHECK(in.mem[dst].access & WR);
	CHECK_EQ(in.mem[1 - dst].base, RSI);
	CHECK(in.mem[1 - dst].access & RD);
	CHECK_EQ(rtl_decode_buf(stosq, 3, 0, &in), 0);
	CHECK_EQ(in.nmem, 1);
	CHECK_EQ(in.mem[0].base, RDI);
	CHECK_EQ(in.mem[0].access, WR);
}

/* Garbage never crashes and an incomplete instruction is an error. */
TEST(truncated_and_invalid)
{
	static const uint8_t partial[] = { 0x48, 0x89 }, invalid[] = { 0xff, 0xff };
	struct rtl_insn in;

	CHECK_EQ(init_once(), 1);
	CHECK_EQ(rtl_decode_buf(partial, sizeof(partial), 0, &in), -1);
	CHECK_EQ(rtl_decode_buf(invalid, sizeof(invalid), 0, &in), -1);
}
