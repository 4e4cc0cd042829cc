/* Capstone's x86 instruction detail in rtl's neutral form (decoder.h):
 * general registers, memory operands, read/write, with Capstone 4.0.2's
 * gaps corrected here. Runs in the trap handler: no malloc, no locks. */
#include <string.h>

#include "decoder/x86.h"

int rtl_x86_gpr(x86_reg r, uint8_t *addr32)
{
	static const x86_reg r64[RTL_NGPR] = {
		X86_REG_RAX,
		X86_REG_RCX,
		X86_REG_RDX,
		X86_REG_RBX,
		X86_REG_RSP,
		X86_REG_RBP,
		X86_REG_RSI,
		X86_REG_RDI,
		X86_REG_R8,
		X86_REG_R9,
		X86_REG_R10,
		X86_REG_R11,
		X86_REG_R12,
		X86_REG_R13,
		X86_REG_R14,
		X86_REG_R15,
	};
	static const x86_reg r32[RTL_NGPR] = {
		X86_REG_EAX,
		X86_REG_ECX,
		X86_REG_EDX,
		X86_REG_EBX,
		X86_REG_ESP,
		X86_REG_EBP,
		X86_REG_ESI,
		X86_REG_EDI,
		X86_REG_R8D,
		X86_REG_R9D,
		X86_REG_R10D,
		X86_REG_R11D,
		X86_REG_R12D,
		X86_REG_R13D,
		X86_REG_R14D,
		X86_REG_R15D,
	};

	if (r == X86_REG_INVALID)
		return RTL_REG_NONE;
	if (r == X86_REG_RIP)
		return RTL_REG_PC;
	for (int i = 0; i < RTL_NGPR; i++) {
		if (r == r64[i])
			return i;
		if (r == r32[i]) {
			*addr32 = 1;
			return i;
		}
	}
	return -2; /* a vector index (VSIB) or something else */
}

int rtl_x86_gpr_any(x86_reg r)
{
	static const x86_reg narrow[][RTL_NGPR] = {
		{ X86_REG_AX, X86_REG_CX, X86_REG_DX, X86_REG_BX, X86_REG_SP,
		  X86_REG_BP, X86_REG_SI, X86_REG_DI, X86_REG_R8W, X86_REG_R9W,
		  X86_REG_R10W, X86_REG_R11W, X86_REG_R12W, X86_REG_R13W,
		  X86_REG_R14W, X86_REG_R15W },
		{ X86_REG_AL, X86_REG_CL, X86_REG_DL, X86_REG_BL, X86_REG_SPL,
		  X86_REG_BPL, X86_REG_SIL, X86_REG_DIL, X86_REG_R8B, X86_REG_R9B,
		  X86_REG_R10B, X86_REG_R11B, X86_REG_R12B, X86_REG_R13B,
		  X86_REG_R14B, X86_REG_R15B },
		{ X86_REG_AH, X86_REG_CH, X86_REG_DH, X86_REG_BH },
	};
	uint8_t a32;
	int g = rtl_x86_gpr(r, &a32);

	if (g >= 0 && g < RTL_NGPR)
		return g;
	for (size_t k = 0; k < sizeof(narrow) / sizeof(narrow[0]); k++)
		for (int i = 0; i < RTL_NGPR; i++)
			if (narrow[k][i] != X86_REG_INVALID && narrow[k][i] == r)
				return i;
	return -1;
}

static int no_memory_access(unsigned id)
{
	switch (id) {
	case X86_INS_LEA:
	case X86_INS_NOP:
		return 1;
	}
	return 0;
}

static int is_prefetch(unsigned id)
{
	switch (id) {
	case X86_INS_PREFETCH:
	case X86_INS_PREFETCHNTA:
	case X86_INS_PREFETCHT0:
	case X86_INS_PREFETCHT1:
	case X86_INS_PREFETCHT2:
	case X86_INS_PREFETCHW:
		return 1;
	}
	return 0;
}

/* Capstone 4's operand access is wrong for many stores (most SIMD moves to
 * memory read as "read") and for a few reads (test, cmp, bt read as
 * read-write). The trap path takes read/write from the page-fault error
 * code; these fixes keep the decoder's own answer right for the operand
 * table and the diagnostics. */
static int reads_only(unsigned id)
{
	switch (id) {
	case X86_INS_TEST:
	case X86_INS_CMP:
	case X86_INS_BT:
		return 1;
	}
	return 0;
}

/* Mnemonics whose first operand, when it is memory, is written. */
static int stores_to_first(const char *mn)
{
	static const char *const prefixes[] = {
		"mov",
		"vmov",
		"vpmov",
		"vmaskmov",
		"vpmaskmov",
		"pextr",
		"vpextr",
		"extract",
		"vextract",
		"stmxcsr",
		"vstmxcsr",
		"fst",
		"fist",
		"fisttp",
		"fbstp",
		"fnst",
		"fnsave",
		"fxsave",
		"xsave",
		"vcvtps2ph",
		"vcompress",
		"vpcompress",
		"set",
	};
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (strncmp(mn, prefixes[i], strlen(prefixes[i])) == 0)
			return 1;
	return 0;
}

/* Read-modify-write when their first operand is memory (Capstone 4 says
 * read for rol/ror/rcl/rcr with an immediate count). */
static int modifies_first(unsigned id)
{
	switch (id) {
	case X86_INS_ADD:
	case X86_INS_ADC:
	case X86_INS_SUB:
	case X86_INS_SBB:
	case X86_INS_AND:
	case X86_INS_OR:
	case X86_INS_XOR:
	case X86_INS_INC:
	case X86_INS_DEC:
	case X86_INS_NEG:
	case X86_INS_NOT:
	case X86_INS_ROL:
	case X86_INS_ROR:
	case X86_INS_RCL:
	case X86_INS_RCR:
	case X86_INS_SHL:
	case X86_INS_SAL:
	case X86_INS_SHR:
	case X86_INS_SAR:
	case X86_INS_SHLD:
	case X86_INS_SHRD:
	case X86_INS_BTS:
	case X86_INS_BTR:
	case X86_INS_BTC:
	case X86_INS_XCHG:
	case X86_INS_XADD:
	case X86_INS_CMPXCHG:
		return 1;
	}
	return 0;
}

static uint8_t operand_access(const cs_insn *ci, int index, uint8_t access)
{
	if (reads_only(ci->id))
		return RTL_ACC_READ;
	if (ci->id == X86_INS_CMPXCHG8B || ci->id == X86_INS_CMPXCHG16B)
		return RTL_ACC_READ | RTL_ACC_WRITE;
	if (index == 0 && modifies_first(ci->id))
		return RTL_ACC_READ | RTL_ACC_WRITE;
	if (index == 0 && !(access & RTL_ACC_WRITE) && stores_to_first(ci->mnemonic))
		return RTL_ACC_WRITE;
	if (!access) /* vmovdqu8 zmm{k}, m and others Capstone 4 leaves blank */
		return RTL_ACC_READ;
	return access;
}

/* Bytes accessed where Capstone 4 gives the size of one field. 0: depends
 * on the CPU (xsave area), not known here. */
static uint16_t operand_size(unsigned id, uint16_t size)
{
	switch (id) {
	case X86_INS_FXSAVE:
	case X86_INS_FXSAVE64:
	case X86_INS_FXRSTOR:
	case X86_INS_FXRSTOR64:
		return 512;
	case X86_INS_FNSAVE:
	case X86_INS_FRSTOR:
		return 108;
	case X86_INS_FNSTENV:
	case X86_INS_FLDENV:
		return 28;
	case X86_INS_XSAVE:
	case X86_INS_XSAVE64:
	case X86_INS_XSAVEC:
	case X86_INS_XSAVEC64:
	case X86_INS_XSAVEOPT:
	case X86_INS_XSAVEOPT64:
	case X86_INS_XSAVES:
	case X86_INS_XSAVES64:
	case X86_INS_XRSTOR:
	case X86_INS_XRSTOR64:
	case X86_INS_XRSTORS:
	case X86_INS_XRSTORS64:
		return 0;
	}
	return size;
}

/* Vector addresses (VSIB): one register per element. Capstone 4 shows
 * some scatters' zmm index as a general register, so go by name. */
static int is_gather_scatter(const char *mn)
{
	return strncmp(mn, "vpgather", 8) == 0 || strncmp(mn, "vgather", 7) == 0 ||
	       strncmp(mn, "vpscatter", 9) == 0 || strncmp(mn, "vscatter", 8) == 0;
}

/* Memory operands Capstone 4 does not list: xlat reads [rbx + al] (a
 * 256-byte table), maskmovdqu writes [rdi] under a byte mask. */
static void implicit_operand(const cs_insn *ci, struct rtl_insn *out)
{
	struct rtl_mem_op *m = &out->mem[0];

	if (ci->id != X86_INS_XLATB && ci->id != X86_INS_MASKMOVDQU &&
	    ci->id != X86_INS_VMASKMOVDQU)
		return;
	memset(m, 0, sizeof(*m));
	m->index = RTL_REG_NONE;
	m->scale = 1;
	m->addr32 = ci->detail->x86.addr_size == 4;
	if (ci->id == X86_INS_XLATB) {
		m->base = 3; /* rbx */
		m->size = 256;
		m->access = RTL_ACC_READ;
	} else {
		m->base = 7; /* rdi */
		m->size = 16;
		m->access = RTL_ACC_WRITE;
	}
	out->nmem = 1;
}

/* Element-masked accesses: only some bytes of the operand are touched,
 * and masked-off elements never fault. */
static int is_masked(const cs_insn *ci)
{
	switch (ci->id) {
	case X86_INS_MASKMOVDQU:
	case X86_INS_VMASKMOVDQU:
	case X86_INS_VMASKMOVPS:
	case X86_INS_VMASKMOVPD:
	case X86_INS_VPMASKMOVD:
	case X86_INS_VPMASKMOVQ:
		return 1;
	}
	return strstr(ci->op_str, "{k") != NULL; /* AVX-512 opmask */
}

static void put_text(struct rtl_insn *out, const cs_insn *ci)
{
	size_t n = strlen(ci->mnemonic), m = strlen(ci->op_str);
	size_t cap = sizeof(out->text) - 1;

	if (n > cap)
		n = cap;
	memcpy(out->text, ci->mnemonic, n);
	if (m && n + 1 < cap) {
		out->text[n++] = ' ';
		if (m > cap - n)
			m = cap - n;
		memcpy(out->text + n, ci->op_str, m);
		n += m;
	}
	out->text[n] = '\0';
}

void rtl_x86_translate(const cs_insn *ci, uint64_t pc, struct rtl_insn *out)
{
	const cs_x86 *x = &ci->detail->x86;

	memset(out, 0, sizeof(*out));
	out->pc = pc;
	out->len = (uint8_t)ci->size;
	memcpy(out->bytes, ci->bytes, ci->size);
	put_text(out, ci);
	if (x->prefix[0] == X86_PREFIX_REP || x->prefix[0] == X86_PREFIX_REPNE)
		out->flags |= RTL_INSN_REP;
	if (is_prefetch(ci->id))
		out->flags |= RTL_INSN_NOFAULT;
	if (is_masked(ci))
		out->flags |= RTL_INSN_MASKED;
	if (no_memory_access(ci->id))
		return;
	if (is_gather_scatter(ci->mnemonic)) {
		out->flags |= RTL_INSN_UNSUPPORTED;
		return;
	}
	implicit_operand(ci, out);
	for (int i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];
		struct rtl_mem_op *m;
		uint8_t a32 = 0;
		int base, index;

		if (op->type != X86_OP_MEM)
			continue;
		base = rtl_x86_gpr(op->mem.base, &a32);
		index = rtl_x86_gpr(op->mem.index, &a32);
		if (base == -2 || index == -2) {
			out->flags |= RTL_INSN_UNSUPPORTED;
			continue;
		}
		if (out->nmem == RTL_INSN_MAX_MEM) {
			out->flags |= RTL_INSN_UNSUPPORTED;
			break;
		}
		m = &out->mem[out->nmem++];
		m->base = (int8_t)base;
		m->index = (int8_t)index;
		m->scale = (uint8_t)(op->mem.scale > 0 ? op->mem.scale : 1);
		m->disp = op->mem.disp;
		m->size = operand_size(ci->id, op->size);
		m->access = operand_access(ci, i, op->access & (CS_AC_READ | CS_AC_WRITE));
		m->addr32 = a32 || x->addr_size == 4;
		m->segment = op->mem.segment == X86_REG_FS ||
		             op->mem.segment == X86_REG_GS;
	}
}
