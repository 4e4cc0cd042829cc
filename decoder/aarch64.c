/* The aarch64 backend: Capstone's ARM64 mode for the text and the
 * look-ahead, the instruction word itself for the memory operand
 * (aarch64_ldst.c), behind capstone.c's handles. Every instruction is four
 * bytes. Runs in the trap handler: no malloc, no locks, no stdio. */
#include <string.h>

#include "decoder/aarch64.h"

int rtl_backend_open(csh *h)
{
	uint64_t dczid;

	if (rtl_cs.open(CS_ARCH_ARM64, CS_MODE_ARM, h) != CS_ERR_OK)
		return -1;
	rtl_cs.option(*h, CS_OPT_DETAIL, CS_OPT_ON);
	/* DC ZVA's block: 4 << BS bytes (DCZID_EL0, readable at EL0). */
	__asm__("mrs %0, dczid_el0"
	        : "=r"(dczid));
	rtl_a64_zva_bytes = (uint16_t)(4u << (dczid & 15));
	return 0;
}

/* One of each kind whose tables Capstone builds on first use. */
static const uint32_t warmup[] = {
	0xf9400020, /* ldr x0, [x1] */
	0xa9bf7bfd, /* stp x29, x30, [sp, #-16]! */
	0x4c40a000, /* ld1 {v0.16b, v1.16b}, [x0] */
	0x54000001, /* b.ne . */
	0xd50b7420, /* dc zva, x0 */
	0x8b020020, /* add x0, x1, x2 */
	0xf100041f, /* cmp x0, #1 */
	0xc85f7c20, /* ldxr x0, [x1] */
};

void rtl_backend_warmup(csh h, cs_insn *ci)
{
	for (size_t k = 0; k < sizeof(warmup) / sizeof(warmup[0]); k++) {
		uint8_t w[4];
		const uint8_t *p = w;
		size_t n = 4;
		uint64_t addr = 0x1000;
		cs_regs rd, wr;
		uint8_t nrd, nwr;

		memcpy(w, &warmup[k], 4);
		if (rtl_cs.disasm_iter(h, &p, &n, &addr, ci))
			rtl_cs.regs_access(h, ci, rd, &nrd, wr, &nwr);
	}
}

int rtl_a64_gpr(arm64_reg r)
{
	if (r >= ARM64_REG_X0 && r <= ARM64_REG_X28)
		return (int)(r - ARM64_REG_X0);
	if (r >= ARM64_REG_W0 && r <= ARM64_REG_W30)
		return (int)(r - ARM64_REG_W0);
	switch (r) {
	case ARM64_REG_X29: return 29;
	case ARM64_REG_X30: return 30;
	case ARM64_REG_SP:
	case ARM64_REG_WSP: return RTL_A64_SP;
	default: return -1;
	}
}

static size_t put(char *out, size_t n, size_t cap, const char *s)
{
	while (*s && n < cap)
		out[n++] = *s++;
	return n;
}

/* "mnemonic operands" from Capstone, or for a word only aarch64_ldst.c
 * knows (the LSE atomics): "ldadd [x2] (0xf8200041)". */
static void put_text(struct rtl_insn *out, const cs_insn *ci, int decoded,
                     const struct rtl_a64_access *a, uint32_t word)
{
	static const char hex[] = "0123456789abcdef";
	size_t cap = sizeof(out->text) - 1, n = 0;
	char reg[8] = "[x", tail[16] = " (0x";

	if (decoded) {
		n = put(out->text, n, cap, ci->mnemonic);
		if (ci->op_str[0]) {
			n = put(out->text, n, cap, " ");
			n = put(out->text, n, cap, ci->op_str);
		}
		out->text[n] = '\0';
		return;
	}
	n = put(out->text, n, cap,
	        a->name                         ? a->name
	        : a->mem.access & RTL_ACC_WRITE ? "store"
	                                        : "load");
	if (a->mem.base == RTL_A64_SP) {
		memcpy(reg, "[sp]", 5);
	} else {
		int b = a->mem.base, k = 2;
		if (b >= 10)
			reg[k++] = (char)('0' + b / 10);
		reg[k++] = (char)('0' + b % 10);
		reg[k++] = ']';
		reg[k] = '\0';
	}
	n = put(out->text, n, cap, " ");
	n = put(out->text, n, cap, reg);
	for (int i = 0; i < 8; i++)
		tail[4 + i] = hex[(word >> (28 - 4 * i)) & 15];
	tail[12] = ')';
	tail[13] = '\0';
	n = put(out->text, n, cap, tail);
	out->text[n] = '\0';
}

int rtl_backend_decode(csh h, cs_insn *ci, struct rtl_code *code, uint64_t pc,
                       struct rtl_insn *out)
{
	struct rtl_a64_access a;
	const uint8_t *p;
	uint64_t addr = pc;
	size_t n;
	uint32_t word;
	int decoded, mem;

	if (rtl_code_at(code, pc, &p, &n) < 0 || n < 4)
		return -1;
	word = rtl_a64_word(p);
	memset(out, 0, sizeof(*out));
	out->pc = pc;
	out->len = 4;
	memcpy(out->bytes, p, 4);
	decoded = rtl_cs.disasm_iter(h, &p, &n, &addr, ci);
	mem = rtl_a64_ldst(word, pc, &a);
	if (!decoded && !mem)
		return -1;
	put_text(out, ci, decoded, &a, word);
	if (mem) {
		out->mem[0] = a.mem;
		out->nmem = 1;
		out->flags = a.flags;
	}
	rtl_a64_flow(h, ci, code, out);
	return 0;
}

const char *rtl_reg_name(int reg)
{
	static const char *const names[RTL_NGPR + 1] = {
		"x0",
		"x1",
		"x2",
		"x3",
		"x4",
		"x5",
		"x6",
		"x7",
		"x8",
		"x9",
		"x10",
		"x11",
		"x12",
		"x13",
		"x14",
		"x15",
		"x16",
		"x17",
		"x18",
		"x19",
		"x20",
		"x21",
		"x22",
		"x23",
		"x24",
		"x25",
		"x26",
		"x27",
		"x28",
		"x29",
		"x30",
		"sp",
		"pc",
	};
	return reg >= 0 && reg <= RTL_NGPR ? names[reg] : "?";
}
