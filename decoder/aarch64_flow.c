/* The aarch64 look-ahead: which address forms the code after a faulting
 * instruction uses while the registers still hold their values at the trap,
 * so that a view move keeps them consistent (derive.c); flow.c's twin.
 * Forms come from loads and stores (aarch64_ldst.c) and from adds of two
 * registers (add x0, x1, x2 builds a pointer, as x86's lea does); a
 * writeback or an add of a constant to a register offsets it; cmp with a
 * constant and b.cond give the conditions; cbz, cbnz, tbz, tbnz are
 * followed both ways. Bounded: a few dozen instructions.
 *
 * Runs in the trap handler on a decode-cache miss: no malloc, no locks, and
 * code is read only from pages checked readable (code.c). */
#include <string.h>

#include "decoder/aarch64.h"
#include "decoder/lookahead.h"

static unsigned bits(uint32_t x, int hi, int lo)
{
	return (x >> lo) & ((1u << (hi - lo + 1)) - 1);
}

/* ---- forms ---- */

static int live(const struct rtl_path *p, int r)
{
	return r >= 0 && r < RTL_NGPR && (p->live >> r & 1);
}

/* A memory operand, or an add of two registers: base + index*scale. */
static void record(struct rtl_scan *s, const struct rtl_path *p, int b, int i,
                   unsigned scale, uint8_t ext, int64_t disp)
{
	if (!live(p, b) || (i >= 0 && !live(p, i)))
		return;
	/* A register offset by an amount the look-ahead cannot know (glibc's
	 * strcpy adds the string's tail length to its cursor before loading
	 * through cursor + (src - dst)): the form keeps the relation of the
	 * registers at the trap, without the offsets. */
	if ((p->inexact >> b & 1) || (i >= 0 && (p->inexact >> i & 1))) {
		if (i >= 0)
			rtl_flow_add_form(s->out, p, b, i, (uint8_t)scale, ext, 0);
		else
			s->out->ptr_regs |= 1u << b; /* still a pointer */
		return;
	}
	disp += p->off[b];
	if (i < 0) {
		/* A register is a pointer when it is the address itself; with
		 * a displacement it may be biased (a pre-index loop's cursor
		 * starts one step before its buffer), and the form says where
		 * it leads. */
		if (disp)
			rtl_flow_add_form(s->out, p, b, RTL_REG_NONE, 1, ext, disp);
		else
			s->out->ptr_regs |= 1u << b;
		return;
	}
	if (ext != RTL_EXT_NONE && p->off[i])
		return; /* a 32-bit index offset: not followed */
	disp += (int64_t)p->off[i] * scale;
	rtl_flow_add_form(s->out, p, b, i, (uint8_t)scale, ext, disp);
}

/* ---- register effects ---- */

static void kill(struct rtl_path *p, int r)
{
	if (r < 0 || r >= RTL_NGPR)
		return;
	p->live &= ~(1u << r);
	p->inexact &= ~(1u << r);
	if (p->cmp.reg == r)
		p->cmp.reg = -1;
}

static void offset(struct rtl_path *p, int r, int64_t k)
{
	int64_t o = p->off[r] + k;

	if (o > INT32_MAX || o < INT32_MIN)
		kill(p, r);
	else
		p->off[r] = (int32_t)o;
}

static void load_store_effects(struct rtl_path *p, const struct rtl_a64_access *a)
{
	for (int r = 0; r < RTL_NGPR; r++)
		if (a->writes >> r & 1)
			kill(p, r);
	if (a->wb_reg < 0)
		return;
	if (a->wb_index >= 0)
		p->inexact |= 1u << a->wb_reg; /* post-increment by a register */
	else
		offset(p, a->wb_reg, a->wb_imm);
}

/* add/sub (immediate) and cmp/cmn with a constant. 1 if x was one. */
static int arith_immediate(struct rtl_path *p, uint32_t x)
{
	unsigned sf = bits(x, 31, 31), sub = bits(x, 30, 30), S = bits(x, 29, 29);
	int rd = (int)bits(x, 4, 0), rn = (int)bits(x, 9, 5);
	int64_t imm = (int64_t)bits(x, 21, 10) << (bits(x, 22, 22) ? 12 : 0);

	if ((x & 0x1f800000) != 0x11000000)
		return 0;
	if (S) {
		p->cmp.reg = -1; /* flags written */
		if (rd == 31 && rn != 31 && live(p, rn) &&
		    !(p->inexact >> rn & 1)) { /* cmp, cmn */
			p->cmp.reg = (int8_t)rn;
			p->cmp.w32 = !sf;
			p->cmp.imm = (int32_t)(sub ? imm : -imm);
			p->cmp.off = p->off[rn];
		}
		if (rd != 31)
			kill(p, rd);
		return 1;
	}
	/* rd 31 is sp here. A 64-bit add to itself keeps the meaning. */
	if (sf && rd == rn && live(p, rn))
		offset(p, rd, sub ? -imm : imm);
	else
		kill(p, rd);
	return 1;
}

/* The other data-processing instructions, from the word: each writes its
 * Rd (31: the zero register, or sp for the logical immediates) and some
 * set the flags. Capstone 4 reports cmp x9, x12 as writing x9. 1 if x was
 * one. */
static int data_processing(struct rtl_path *p, uint32_t x)
{
	int rd = (int)bits(x, 4, 0), flags = 0;

	if ((x & 0x1c000000) == 0x10000000) { /* immediate */
		int logical = (x & 0x1f800000) == 0x12000000;
		flags = logical && bits(x, 30, 29) == 3;
		if (rd == 31 && logical && !flags)
			kill(p, RTL_A64_SP);
	} else if ((x & 0x0e000000) == 0x0a000000) { /* register */
		unsigned op = bits(x, 28, 21);
		if ((op >> 3) == 0x0a) /* logical, shifted register */
			flags = bits(x, 30, 29) == 3;
		else if ((op >> 3) == 0x0b || op == 0xd0) /* add/sub, adc/sbc */
			flags = bits(x, 29, 29);
		else if (op == 0xd2) { /* ccmp, ccmn: bits 4..0 are flags */
			p->cmp.reg = -1;
			return 1;
		}
		if (rd == 31 && (op >> 3) == 0x0b && (op & 1) && !flags)
			kill(p, RTL_A64_SP); /* add/sub (extended) to sp */
	} else {
		return 0;
	}
	if (flags)
		p->cmp.reg = -1;
	if (rd != 31)
		kill(p, rd);
	return 1;
}

/* Registers and flags written by anything else, from Capstone. */
static int other_effects(struct rtl_scan *s, struct rtl_path *p)
{
	cs_regs rd, wr;
	uint8_t nrd, nwr;

	if (rtl_cs.regs_access(s->h, s->ci, rd, &nrd, wr, &nwr) != CS_ERR_OK)
		return -1;
	for (int j = 0; j < nwr; j++) {
		if (wr[j] == ARM64_REG_NZCV)
			p->cmp.reg = -1;
		kill(p, rtl_a64_gpr(wr[j]));
	}
	return 0;
}

/* ---- control flow ---- */

/* The condition a b.cond tests, in rtl's terms, or -1. */
static int branch_cc(unsigned cond)
{
	static const int8_t cc[16] = {
		RTL_CC_E,
		RTL_CC_NE,
		RTL_CC_AE,
		RTL_CC_B,
		-1,
		-1,
		-1,
		-1,
		RTL_CC_A,
		RTL_CC_BE,
		RTL_CC_GE,
		RTL_CC_L,
		RTL_CC_G,
		RTL_CC_LE,
		-1,
		-1,
	};
	return cc[cond];
}

/* What a branch does to the walk: 0 not a branch, 1 go on at *next,
 * -1 stop (calls, returns, indirect jumps, traps). */
static int branch(struct rtl_scan *s, struct rtl_path *p, uint32_t x, uint64_t *next)
{
	uint64_t pc = p->pc;

	if ((x & 0x7c000000) == 0x14000000) { /* b, bl */
		if (x >> 31)
			return -1;
		*next = pc + (uint64_t)(rtl_a64_sext(bits(x, 25, 0), 26) * 4);
		return 1;
	}
	if ((x & 0xff000010) == 0x54000000) { /* b.cond */
		uint64_t t = pc + (uint64_t)(rtl_a64_sext(bits(x, 23, 5), 19) * 4);
		unsigned c = bits(x, 3, 0);
		int cc = p->cmp.reg >= 0 ? branch_cc(c) : -1;

		if (c >= 14) { /* al, nv */
			*next = t;
			return 1;
		}
		rtl_flow_branch_to(s, p, t, cc);
		if (cc >= 0)
			rtl_flow_add_cond(p, cc ^ 1); /* fall through */
		return 1;
	}
	if ((x & 0x7e000000) == 0x34000000 || (x & 0x7e000000) == 0x36000000) {
		/* cbz, cbnz (imm19), tbz, tbnz (imm14): both ways */
		int64_t d = (x & 0x02000000) ? rtl_a64_sext(bits(x, 18, 5), 14)
		                             : rtl_a64_sext(bits(x, 23, 5), 19);
		rtl_flow_branch_to(s, p, pc + (uint64_t)(d * 4), -1);
		return 1;
	}
	if ((x & 0xfe000000) == 0xd6000000 || /* br, blr, ret, eret */
	    (x & 0xff000000) == 0xd4000000 || /* svc, brk, hlt */
	    (x & 0xffff0000) == 0)            /* udf */
		return -1;
	return 0;
}

/* Follow one path until it ends; branches go to the queue. */
static void walk(struct rtl_scan *s, struct rtl_path p, int skip_first)
{
	while (s->steps < RTL_FLOW_MAX_STEPS) {
		struct rtl_a64_access a;
		const uint8_t *code;
		size_t n;
		uint64_t next;
		uint32_t x;
		int b;

		if (rtl_code_at(s->code, p.pc, &code, &n) < 0 || n < 4)
			return;
		x = rtl_a64_word(code);
		s->steps++;
		next = p.pc + 4;
		if (rtl_a64_ldst(x, p.pc, &a)) {
			if (!skip_first && a.mem.base >= 0)
				record(s, &p, a.mem.base, a.mem.index, a.mem.scale,
				       a.mem.ext, a.mem.disp);
			load_store_effects(&p, &a);
		} else if ((x & 0xbf200000) == 0x8b000000) {
			/* add/sub xd, xn, xm, lsl #s: add builds a pointer as
			 * x86's lea does; either, onto itself, moves a cursor
			 * by an amount not known here */
			int rd = (int)bits(x, 4, 0), rn = (int)bits(x, 9, 5);
			int rm = (int)bits(x, 20, 16), sub = (int)bits(x, 30, 30);
			unsigned sh = bits(x, 15, 10);

			if (!sub && rn != 31 && rm != 31 && sh <= 3 &&
			    bits(x, 23, 22) == 0)
				record(s, &p, rn, rm, 1u << sh, RTL_EXT_NONE, 0);
			if (rd == rn && rd != rm && rd != 31 && live(&p, rd)) {
				p.inexact |= 1u << rd;
				if (p.cmp.reg == rd)
					p.cmp.reg = -1;
			} else {
				kill(&p, rd == 31 ? -1 : rd);
			}
		} else if (!arith_immediate(&p, x) && !data_processing(&p, x)) {
			b = branch(s, &p, x, &next);
			if (b < 0)
				return;
			if (b == 0) {
				const uint8_t *q = code;
				uint64_t addr = p.pc;
				size_t m = 4;

				if (!rtl_cs.disasm_iter(s->h, &q, &m, &addr, s->ci) ||
				    other_effects(s, &p) < 0)
					return; /* unknown: nothing more is sure */
			}
		}
		skip_first = 0;
		if (rtl_flow_seen(s, next))
			return;
		p.pc = next;
	}
}

void rtl_a64_flow(csh h, cs_insn *ci, struct rtl_code *code,
                  struct rtl_insn *out)
{
	struct rtl_scan s;

	rtl_flow_run(&s, h, ci, code, out, walk);
}
