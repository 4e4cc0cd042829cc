/* Derived addresses across a view move: after the registers that point into
 * a region's span have moved to another view, every address the faulting
 * instruction and the code after it will form must still reach the object
 * it reached before (arch-neutral; register arrays only).
 *
 * Runs in the trap handler: no malloc, no locks, no system calls of its own
 * (the caller's classifier may make one). */
#ifndef RTL_DECODER_DERIVE_H
#define RTL_DECODER_DERIVE_H

#include "decoder/decoder.h"

/* What lies at an address outside the span being moved, as the caller sees
 * it (region map, mappings). */
enum rtl_where {
	RTL_AT_OBJECT, /* a live object: another region's bytes (any view), the
	                  moving region through another view, or mapped
	                  memory that is not rtl's */
	RTL_AT_EDGE,   /* another region's one-past-end byte or padding */
	RTL_AT_FREE,   /* rtl's views, in no region */
	RTL_AT_NOADDR, /* cannot be an address: below mmap_min_addr,
	                  non-canonical, nothing readable there */
};

struct rtl_move {
	uint64_t lo, hi; /* the span, in the view it leaves */
	uint64_t end;    /* one past the region's last byte (lo + size) */
	int64_t delta;   /* added to the registers that lay in [lo, hi) */
	/* Classify an address outside [lo, hi) (lock-free). */
	enum rtl_where (*where)(uint64_t a, void *arg);
	void *arg;
};

/* Whether operand m is an address form a move can keep: not fs/gs- or
 * pc-relative, not a 32-bit address, with a base or an index. */
static inline int rtl_derive_own_form(const struct rtl_mem_op *m)
{
	return !m->segment && !m->addr32 && m->base != RTL_REG_PC &&
	       (m->base >= 0 || m->index >= 0);
}

/* Below a span's start or its next neighbour's, this many bytes: a
 * register there, added to a small value, is read as a pointer biased by
 * a vector alignment (glibc's strcpy keeps dst - (src & 63)). */
#define RTL_DERIVE_BIAS 64

/* An address this close outside the span, formed by a pointer into the
 * region and a small value, is the region's own (a length or index past an
 * end on a way not taken: memcmp's lea -0x80(%rdi,%rdx,1) for n < 128). */
#define RTL_DERIVE_NEAR 4096

/* The move plan, cached with the decode: rtl_derive_plan marks an
 * instruction RTL_INSN_PLAIN when its one memory operand is base + disp and
 * nothing after it forms an address or uses a register alone as a base
 * (the look-ahead found none). For such an instruction the checks below
 * come down to that one form: the _fast versions answer it in a few
 * instructions, the trap's common case, and call the general ones for the
 * rest. Run once per decode, before the decode is cached. */
void rtl_derive_plan(struct rtl_insn *in);

/* Bit v if ea lies in the span [lo, lo + span) of view v (views size
 * apart, lo the span's start in view 0). */
static inline unsigned rtl_view_bit(uint64_t ea, uint64_t lo, uint64_t span, uint64_t size)
{
	uint64_t d = ea - lo;
	unsigned v;

	if (d >= 3 * size)
		return 0;
	v = d < size ? 0 : d < 2 * size ? 1
	                                : 2;
	return d - v * size < span ? 1u << v : 0;
}

static inline uint64_t rtl_plain_ea(const struct rtl_insn *in, const uint64_t gpr[RTL_NGPR])
{
	return gpr[in->mem[0].base] + (uint64_t)in->mem[0].disp;
}

/* Whether every address form of in (its own operands, the look-ahead's
 * forms whose conditions hold, the registers it uses alone as a base)
 * reaches after the default move (the registers in moved, those of old in
 * [lo, hi), moved by delta) the span's new view if it lay in the span, and
 * stays put if not. 0: rtl_derive_fix would change nothing, and need not
 * run (the trap's common case, in a few instructions a form); 1: it
 * must. */
int rtl_derive_needed(const struct rtl_insn *in, const struct rtl_move *mv,
                      const uint64_t old[RTL_NGPR], rtl_regset_t moved);

/* The views (bit v) in which some address form of in lies inside the span
 * [lo, lo + span) of view v (lo: the span's start in view 0, views size
 * apart), with the registers gpr: only there can a move that leaves no
 * register behind still need rtl_derive_fix. */
unsigned rtl_derive_forms_in(const struct rtl_insn *in, const uint64_t gpr[RTL_NGPR],
                             uint64_t lo, uint64_t span, uint64_t size);

/* rtl_derive_needed for a plain instruction: its one form reaches after the
 * default move exactly when its base moved if and only if the address lay
 * in the span. */
static inline int rtl_derive_needed_fast(const struct rtl_insn *in,
                                         const struct rtl_move *mv,
                                         const uint64_t old[RTL_NGPR],
                                         rtl_regset_t moved)
{
	if (in->flags & RTL_INSN_PLAIN) {
		uint64_t ea = rtl_plain_ea(in, old);
		unsigned in_span = ea - mv->lo < mv->hi - mv->lo;

		return (moved >> in->mem[0].base & 1) != in_span;
	}
	return rtl_derive_needed(in, mv, old, moved);
}

static inline unsigned rtl_derive_forms_in_fast(const struct rtl_insn *in,
                                                const uint64_t gpr[RTL_NGPR],
                                                uint64_t lo, uint64_t span,
                                                uint64_t size)
{
	if (in->flags & RTL_INSN_PLAIN)
		return rtl_view_bit(rtl_plain_ea(in, gpr), lo, span, size);
	return rtl_derive_forms_in(in, gpr, lo, span, size);
}

/* The trap's fast plan (decoder.h, struct rtl_fast_plan) of in: its one
 * memory operand (base [+ index * scale] + disp, base a general register)
 * and the look-ahead's forms, at most RTL_PLAN_FORMS of them, each with a
 * base and a 32-bit displacement (their conditions are not kept: each form
 * must hold whether they do or not, which can only send a trap to the
 * general path). 0, or -1 when in has none (several
 * operands, more forms, a repeated or masked access...): its traps take
 * the general path. Run when a decode is cached. */
int rtl_derive_fast_plan(const struct rtl_insn *in, struct rtl_fast_plan *out);

/* Where value v lies for a fast plan: 1 in the span [lo, lo + span) that
 * moves, 0 outside the views [vbase, vbase + all), -1 elsewhere in them. */
static inline int rtl_plan_where(uint64_t v, uint64_t lo, uint64_t span,
                                 uint64_t vbase, uint64_t all)
{
	if (v - lo < span)
		return 1;
	return v - vbase >= all ? 0 : -1;
}

/* One form of a fast plan holds when its registers lie in the span or
 * outside the views, and after the one-pass move (every register in the
 * span moves by the same delta) it reaches what rtl_derive_needed asks:
 * an address in the span moves by the delta, one outside the views stays.
 * Anything else (an address or a register elsewhere in the views, a 32-bit
 * index in the span) is left to the general checks. */
static inline int rtl_plan_form_holds(const struct rtl_plan_form *f, const uint64_t *regs,
                                      const int8_t *slot, uint64_t lo, uint64_t span,
                                      uint64_t vbase, uint64_t all)
{
	uint64_t b = regs[slot[f->base]], ea = b + (uint64_t)(int64_t)f->disp;
	int wb = rtl_plan_where(b, lo, span, vbase, all), wi = 0, we;

	if (f->index >= 0) {
		uint64_t i = regs[slot[f->index]];

		wi = rtl_plan_where(i, lo, span, vbase, all);
		if (wi && f->ext)
			return 0;
		ea += rtl_index_value(i, f->ext) * f->scale;
	}
	if (wb < 0 || wi < 0)
		return 0;
	we = rtl_plan_where(ea, lo, span, vbase, all);
	return we == 1 ? wb + wi * f->scale == 1 : we == 0 && wb + wi == 0;
}

/* Whether the fast plan p holds for registers regs (register i of the
 * decoder's numbering is regs[slot[i]]: the signal frame's order) and the
 * span [lo, lo + span) moving, in views [vbase, vbase + all): its operand,
 * every form, and every register used alone as a base in the span or
 * outside the views. Then moving every register in the span to another
 * view is what the general path does, with no fix (rtl_derive_needed says
 * 0 for every view the registers leave). */
static inline int rtl_fast_plan_holds(const struct rtl_fast_plan *p, const uint64_t *regs,
                                      const int8_t *slot, uint64_t lo, uint64_t span,
                                      uint64_t vbase, uint64_t all)
{
	if (!rtl_plan_form_holds(&p->op, regs, slot, lo, span, vbase, all))
		return 0;
	for (int k = 0; k < p->nforms && k < RTL_PLAN_FORMS; k++)
		if (!rtl_plan_form_holds(&p->form[k], regs, slot, lo, span, vbase, all))
			return 0;
	for (rtl_regset_t m = p->ptrs; m; m &= m - 1)
		if (rtl_plan_where(regs[slot[__builtin_ctz(m)]], lo, span, vbase, all) < 0)
			return 0;
	return 1;
}

/* old: the registers before the move; gpr: after the default move (every
 * register in [lo, hi) moved by delta), fixed in place. Every address form
 * of in (its own operands; the look-ahead's forms whose conditions hold;
 * the registers it uses alone as a base) must reach after the move what it
 * reached before: the span in its new view, or the object outside it where
 * it is. When the default move breaks one, the registers the forms use are
 * chosen anew, the cheapest choice by what each register holds (the rule
 * and its costs: docs/trap.md, "Which registers move").
 * must: the faulting operand, or NULL. Returns -1 if must's registers
 * cannot be chosen (no choice reaches its object, or two equally good
 * ones move different registers): the caller refuses, never guesses. */
int rtl_derive_fix(const struct rtl_insn *in, const struct rtl_mem_op *must,
                   const struct rtl_move *mv, const uint64_t old[RTL_NGPR],
                   uint64_t gpr[RTL_NGPR]);

#endif
