/* The look-ahead: which address forms the code after a faulting instruction
 * uses while the registers still hold their values at the trap, so that a
 * view move can keep them consistent (derive.c). Bounded: a few dozen
 * instructions along direct jumps and both ways of conditional ones.
 *
 * Runs in the trap handler on a decode-cache miss: no malloc, no locks, and
 * code is read only from pages checked readable (code.c). */
#include <string.h>

#include "decoder/lookahead.h"
#include "decoder/x86.h"

/* ---- forms ---- */

static void record(struct rtl_scan *s, const struct rtl_path *p)
{
	const cs_x86 *x = &s->ci->detail->x86;
	int lea = s->ci->id == X86_INS_LEA;

	if (s->ci->id == X86_INS_NOP || x->addr_size == 4)
		return;
	for (int k = 0; k < x->op_count; k++) {
		const cs_x86_op *op = &x->operands[k];
		uint8_t a32 = 0;
		int b, i;
		int64_t disp;

		if (op->type != X86_OP_MEM || op->mem.segment == X86_REG_FS ||
		    op->mem.segment == X86_REG_GS)
			continue;
		b = rtl_x86_gpr(op->mem.base, &a32);
		i = rtl_x86_gpr(op->mem.index, &a32);
		if (a32 || b == -2 || i == -2 || b == RTL_REG_PC || b < 0)
			continue;
		if (!(p->live >> b & 1) || (i >= 0 && !(p->live >> i & 1)))
			continue;
		disp = op->mem.disp + p->off[b];
		if (i < 0) {
			if (lea)
				continue; /* lea of one register: arithmetic too */
			s->out->ptr_regs |= 1u << b;
			if (disp)
				rtl_flow_add_form(s->out, p, b, RTL_REG_NONE, 1, 0, disp);
			continue;
		}
		/* A lea into a 32-bit register is arithmetic, not a pointer. */
		if (lea && x->operands[0].size != 8)
			continue;
		disp += (int64_t)p->off[i] * op->mem.scale;
		rtl_flow_add_form(s->out, p, b, i, (uint8_t)op->mem.scale, 0, disp);
	}
}

/* ---- register effects ---- */

/* add/sub of a constant, inc, dec, lea r, [r + k] on a 64-bit register:
 * the register keeps its meaning, offset by *k. */
static int adds_constant(const cs_insn *ci, int *reg, int64_t *k)
{
	const cs_x86 *x = &ci->detail->x86;
	const cs_x86_op *o = x->operands;

	if (x->op_count < 1 || o[0].type != X86_OP_REG || o[0].size != 8)
		return 0;
	*reg = rtl_x86_gpr_any(o[0].reg);
	switch (ci->id) {
	case X86_INS_ADD:
	case X86_INS_SUB:
		if (x->op_count != 2 || o[1].type != X86_OP_IMM)
			return 0;
		*k = ci->id == X86_INS_ADD ? o[1].imm : -o[1].imm;
		return 1;
	case X86_INS_INC:
	case X86_INS_DEC:
		*k = ci->id == X86_INS_INC ? 1 : -1;
		return 1;
	case X86_INS_LEA:
		if (o[1].mem.index != X86_REG_INVALID ||
		    rtl_x86_gpr_any(o[1].mem.base) != *reg ||
		    o[1].mem.segment != X86_REG_INVALID)
			return 0;
		*k = o[1].mem.disp;
		return 1;
	}
	return 0;
}

/* cmp reg, imm with reg live: remember it for the jump that follows. */
static void note_compare(const cs_insn *ci, struct rtl_path *p)
{
	const cs_x86 *x = &ci->detail->x86;
	const cs_x86_op *o = x->operands;
	int g;

	if (ci->id != X86_INS_CMP || x->op_count != 2 || o[0].type != X86_OP_REG ||
	    o[1].type != X86_OP_IMM || (o[0].size != 8 && o[0].size != 4))
		return;
	g = rtl_x86_gpr_any(o[0].reg);
	if (g < 0 || !(p->live >> g & 1) || o[1].imm != (int32_t)o[1].imm)
		return;
	p->cmp.reg = (int8_t)g;
	p->cmp.w32 = o[0].size == 4;
	p->cmp.imm = (int32_t)o[1].imm;
	p->cmp.off = p->off[g];
}

/* The condition a conditional jump tests, or -1. */
static int jump_cc(unsigned id)
{
	switch (id) {
	case X86_INS_JB: return RTL_CC_B;
	case X86_INS_JAE: return RTL_CC_AE;
	case X86_INS_JBE: return RTL_CC_BE;
	case X86_INS_JA: return RTL_CC_A;
	case X86_INS_JE: return RTL_CC_E;
	case X86_INS_JNE: return RTL_CC_NE;
	case X86_INS_JL: return RTL_CC_L;
	case X86_INS_JGE: return RTL_CC_GE;
	case X86_INS_JLE: return RTL_CC_LE;
	case X86_INS_JG: return RTL_CC_G;
	}
	return -1;
}

static void effects(struct rtl_scan *s, struct rtl_path *p)
{
	cs_regs rd, wr;
	uint8_t nrd, nwr;
	int64_t k = 0;
	int reg = -1, add;

	if (rtl_cs.regs_access(s->h, s->ci, rd, &nrd, wr, &nwr) != CS_ERR_OK) {
		p->live = 0;
		return;
	}
	add = adds_constant(s->ci, &reg, &k);
	for (int j = 0; j < nwr; j++)
		if (wr[j] == X86_REG_EFLAGS)
			p->cmp.reg = -1;
	note_compare(s->ci, p);
	for (int j = 0; j < nwr; j++) {
		int g = rtl_x86_gpr_any(wr[j]);
		int64_t o;
		if (g < 0)
			continue;
		if (g == p->cmp.reg)
			p->cmp.reg = -1;
		o = add && g == reg ? p->off[g] + k : INT64_MAX;
		if (o > INT32_MAX || o < INT32_MIN)
			p->live &= ~(1u << g);
		else
			p->off[g] = (int32_t)o;
	}
}

/* ---- control flow ---- */

static int in_group(const cs_insn *ci, uint8_t g)
{
	for (int i = 0; i < ci->detail->groups_count; i++)
		if (ci->detail->groups[i] == g)
			return 1;
	return 0;
}

/* Follow one path until it ends; branches go to the queue. */
static void walk(struct rtl_scan *s, struct rtl_path p, int skip_first)
{
	while (s->steps < RTL_FLOW_MAX_STEPS) {
		const uint8_t *code;
		size_t n;
		uint64_t addr = p.pc, next;
		const cs_x86 *x;

		if (rtl_code_at(s->code, p.pc, &code, &n) < 0 ||
		    !rtl_cs.disasm_iter(s->h, &code, &n, &addr, s->ci))
			return;
		s->steps++;
		if (!skip_first)
			record(s, &p);
		skip_first = 0;
		effects(s, &p);
		x = &s->ci->detail->x86;
		next = p.pc + s->ci->size;
		if (in_group(s->ci, CS_GRP_CALL) || in_group(s->ci, CS_GRP_RET) ||
		    in_group(s->ci, CS_GRP_INT) || in_group(s->ci, CS_GRP_IRET) ||
		    s->ci->id == X86_INS_UD2 || s->ci->id == X86_INS_HLT)
			return;
		if (in_group(s->ci, CS_GRP_JUMP)) {
			if (x->op_count != 1 || x->operands[0].type != X86_OP_IMM)
				return; /* indirect */
			int cc = p.cmp.reg >= 0 ? jump_cc(s->ci->id) : -1;
			if (s->ci->id == X86_INS_JMP) {
				next = (uint64_t)x->operands[0].imm;
			} else {
				rtl_flow_branch_to(s, &p, (uint64_t)x->operands[0].imm, cc);
				if (cc >= 0)
					rtl_flow_add_cond(&p, cc ^ 1); /* fall through */
			}
		}
		if (rtl_flow_seen(s, next))
			return;
		p.pc = next;
	}
}

void rtl_x86_flow(csh h, cs_insn *ci, struct rtl_code *code,
                  struct rtl_insn *out)
{
	struct rtl_scan s;

	rtl_flow_run(&s, h, ci, code, out, walk);
}
