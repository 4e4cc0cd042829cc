/* The state of one trap being handled, shared by the trap path (trap.c)
 * and its diagnostics (die.h). Signal-handler code only. */
#ifndef RTL_TRAP_STATE_H
#define RTL_TRAP_STATE_H

#include <signal.h>
#include <stdint.h>
#include <ucontext.h>

#include "core/region/region.h"
#include "core/trap/trap.h"
#include "decoder/decoder.h"

struct trap {
	uintptr_t addr;   /* the faulting address */
	uintptr_t inside; /* addr, or for a read past the region the pointer */
	ucontext_t *uc;
	struct rtl_found f;
	int write;
	int have_insn;
	int decoded;   /* have_insn and entry_gpr are set (write_by_decoding) */
	int ambiguous; /* the faulting operand's pointer could not be told */
	struct rtl_insn insn;
	const struct rtl_mem_op *op; /* the operand that faulted, if known */
	uint64_t entry_gpr[RTL_NGPR];
	uint64_t gpr[RTL_NGPR]; /* the registers as moved so far; the signal
	                           frame gets them once, when the trap resolves */
	int dead;               /* die() ran: the frame keeps entry_gpr */
	int granted;            /* the handler allowed the access in place */
	/* The handler's region_protect moved every register of moved_r to
	 * view moved_to (so the trap path need not look again). */
	const struct rtl_region *moved_r;
	int moved_to;
	struct trap *outer;
	/* The fast path's trap (trap.c): the signal frame holds the
	 * registers, and entry_gpr, gpr, insn and op are filled in only when
	 * something leaves the common case (rtl_trap_materialize). Until then
	 * a region_protect of f.r from the handler only notes the view its
	 * registers go to (pending_to, -1 for none): the frame moves once,
	 * when the handler returns. */
	int lazy;
	int pending_to;
	struct rtl_fast_plan plan;
};

/* Leave the fast path: copy the frame's registers to entry_gpr and gpr,
 * decode the instruction, find its operand and make the move pending_to
 * noted, so that the general path can go on from here. No-op unless
 * t->lazy. */
void rtl_trap_materialize(struct trap *t);

/* rtl_trap_now (trap.h): the trap being handled on this thread (NULL
 * outside one), so that a region_protect its handler calls moves the
 * interrupted registers too (move.c). */

/* rtl_trap_die and its kin (die.h), for the files that include only
 * this one. */
#include "core/trap/die.h"

#endif
