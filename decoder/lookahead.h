/* What the two look-aheads (flow.c for x86-64, aarch64_flow.c) share: the
 * state of a path through the code after the faulting instruction, the
 * queue of branches still to follow, the forms they record, and the walk
 * over them; each backend supplies what one instruction does to a path.
 * Trap-handler code on a decode-cache miss: no malloc, no locks. */
#ifndef RTL_DECODER_LOOKAHEAD_H
#define RTL_DECODER_LOOKAHEAD_H

#include <capstone/capstone.h>
#include <stdint.h>

#include "decoder/backend.h"

#define RTL_FLOW_MAX_STEPS 48 /* instructions decoded per look-ahead */
#define RTL_FLOW_QUEUE 8      /* branch targets waiting */

struct rtl_path {
	uint64_t pc;
	rtl_regset_t live;     /* registers still holding value + off */
	rtl_regset_t inexact;  /* ... plus a small register amount besides (aarch64) */
	int32_t off[RTL_NGPR]; /* constants added since the trap */
	struct rtl_cond cmp;   /* the last cmp reg, imm (reg < 0: none) */
	uint8_t ncond;         /* conditions met on the way, newest last */
	struct rtl_cond cond[RTL_FORM_MAX_COND];
};

struct rtl_scan {
	csh h;
	cs_insn *ci;
	struct rtl_code *code;
	struct rtl_insn *out;
	struct rtl_path queue[RTL_FLOW_QUEUE];
	int nqueue;
	uint64_t seen[RTL_FLOW_MAX_STEPS + RTL_FLOW_QUEUE];
	int nseen, steps;
};

/* Record the form base + index*scale (ext: aarch64's index extension, 0
 * on x86-64) + disp, taken under p's conditions, unless out has it. When
 * out is full, a base + index form replaces the farthest base + disp one. */
void rtl_flow_add_form(struct rtl_insn *out, const struct rtl_path *p, int base,
                       int index, uint8_t scale, uint8_t ext, int64_t disp);

/* The path goes on only where (cmp) cc holds: keep it, newest last. */
void rtl_flow_add_cond(struct rtl_path *p, int cc);

/* Whether pc was reached before (else it is now). */
int rtl_flow_seen(struct rtl_scan *s, uint64_t pc);

/* Queue the path p as it goes on at target, under cc (< 0: none). */
void rtl_flow_branch_to(struct rtl_scan *s, const struct rtl_path *p,
                        uint64_t target, int cc);

/* The look-ahead from the instruction in ci, at out->pc: every path walk
 * follows (skip_first: the first path's first instruction is the faulting
 * one, already decoded), the queued ones too, into out's forms. */
void rtl_flow_run(struct rtl_scan *s, csh h, cs_insn *ci, struct rtl_code *code,
                  struct rtl_insn *out,
                  void (*walk)(struct rtl_scan *s, struct rtl_path p, int skip_first));

#endif
