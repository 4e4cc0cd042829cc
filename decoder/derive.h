/* Derived addresses across a view move: after the registers that point into
 * a region's span have moved to another view, every address the faulting
 * instruction and the code after it will form must still reach the object
 * it reached before (arch-neutral; register arrays only).
 *
 * Runs in the trap handler: no malloc, no locks, no system calls. */
#ifndef RTL_DECODER_DERIVE_H
#define RTL_DECODER_DERIVE_H

#include "decoder.h"

/* What lies at an address, as the caller's region map sees it. */
enum rtl_where {
	RTL_AT_SPAN,    /* the span being moved, in the view it leaves */
	RTL_AT_FREE,    /* the same view, in no region (padding, free space) */
	RTL_AT_REGION,  /* another region, or the same region in another view */
	RTL_AT_OUTSIDE, /* not rtl's memory */
};

struct rtl_move {
	uint64_t lo, hi; /* the span, in the view it leaves */
	int64_t delta;   /* added to the registers that lay in [lo, hi) */
	/* Classify an address other than [lo, hi) (lock-free lookup). */
	enum rtl_where (*where)(uint64_t a, void *arg);
	void *arg;
};

/* Registers within this distance below or above an address inside the span,
 * and not in any region, are taken as pointers to it biased by a constant
 * (strcpy keeps dst - k in a register and adds k back in the address). */
#define RTL_DERIVE_NEAR 4096

/* Whether any address form of in (own operands and in->later, whatever
 * their conditions) lies in the span with the registers gpr. When no
 * register moved and none does, rtl_derive_fix has nothing to do. */
int rtl_derive_inside(const struct rtl_insn *in, const struct rtl_move *mv,
                      const uint64_t gpr[RTL_NGPR]);

/* old: the registers before the move; gpr: after it, fixed in place. For
 * each address form of in (its own operands, then in->later):
 *  - an address that pointed into the span and did not move with it (no
 *    register in the span: base + difference, or a biased pointer) has its
 *    non-pointer register moved;
 *  - an address that pointed elsewhere (another region, a view, ordinary
 *    memory) but moved (its pointer register was in the span, the other
 *    held a difference) has the difference register moved back.
 * must: the faulting operand, or NULL. Returns -1 if must pointed into the
 * span and which register to move cannot be told; 0 otherwise. */
int rtl_derive_fix(const struct rtl_insn *in, const struct rtl_mem_op *must,
                   const struct rtl_move *mv, const uint64_t old[RTL_NGPR],
                   uint64_t gpr[RTL_NGPR]);

#endif
