/* The x86-64 backend: Capstone's X86 mode, the operand translation
 * (translate.c) and the look-ahead (flow.c) behind capstone.c's handles.
 * Runs in the trap handler: no malloc, no locks. */
#include "decoder/x86.h"

int rtl_backend_open(csh *h)
{
	if (rtl_cs.open(CS_ARCH_X86, CS_MODE_64, h) != CS_ERR_OK)
		return -1;
	rtl_cs.option(*h, CS_OPT_DETAIL, CS_OPT_ON);
	return 0;
}

/* Capstone builds some tables on first use (a per-handle id cache, a sorted
 * register table sorted with qsort, which may malloc): one of each kind. */
static const uint8_t warmup[][16] = {
	{ 3, 0xc6, 0x00, 0x01 },                   /* mov byte [rax], 1 */
	{ 3, 0x48, 0x8b, 0x07 },                   /* mov rax, [rdi] */
	{ 3, 0x48, 0x01, 0x07 },                   /* add [rdi], rax */
	{ 2, 0xf3, 0xa4 },                         /* rep movsb */
	{ 2, 0xff, 0x30 },                         /* push [rax] */
	{ 4, 0xc5, 0xfe, 0x6f, 0x06 },             /* vmovdqu ymm0, [rsi] */
	{ 4, 0xf0, 0x0f, 0xb1, 0x0f },             /* lock cmpxchg [rdi], ecx */
	{ 4, 0x0f, 0xb6, 0x04, 0x08 },             /* movzx eax, byte [rax+rcx] */
	{ 6, 0xc4, 0xe2, 0x7d, 0x90, 0x04, 0x08 }, /* vpgatherdd */
	{ 2, 0x75, 0xfe },                         /* jne . */
	{ 6, 0x62, 0xf1, 0x7e, 0x29, 0x7f, 0x07 }, /* vmovdqu32 [rdi]{k1}, ymm0 */
};

void rtl_backend_warmup(csh h, cs_insn *ci)
{
	for (size_t k = 0; k < sizeof(warmup) / sizeof(warmup[0]); k++) {
		const uint8_t *p = warmup[k] + 1;
		size_t n = warmup[k][0];
		uint64_t addr = 0x1000;
		cs_regs rd, wr;
		uint8_t nrd, nwr;
		if (rtl_cs.disasm_iter(h, &p, &n, &addr, ci))
			rtl_cs.regs_access(h, ci, rd, &nrd, wr, &nwr);
	}
}

int rtl_backend_decode(csh h, cs_insn *ci, struct rtl_code *code, uint64_t pc,
                       struct rtl_insn *out)
{
	const uint8_t *p;
	uint64_t addr = pc;
	size_t n;

	if (rtl_code_at(code, pc, &p, &n) < 0 ||
	    !rtl_cs.disasm_iter(h, &p, &n, &addr, ci))
		return -1;
	rtl_x86_translate(ci, pc, out);
	rtl_x86_flow(h, ci, code, out);
	return 0;
}

const char *rtl_reg_name(int reg)
{
	static const char *const names[RTL_NGPR + 1] = {
		"rax",
		"rcx",
		"rdx",
		"rbx",
		"rsp",
		"rbp",
		"rsi",
		"rdi",
		"r8",
		"r9",
		"r10",
		"r11",
		"r12",
		"r13",
		"r14",
		"r15",
		"rip",
	};
	return reg >= 0 && reg <= RTL_NGPR ? names[reg] : "?";
}
