/* The state of one trap being handled, shared by the trap path (trap.c)
 * and its diagnostics (trap_diag.c). Signal-handler code only. */
#ifndef RTL_TRAP_STATE_H
#define RTL_TRAP_STATE_H

#include <signal.h>
#include <stdint.h>
#include <ucontext.h>

#include "decoder.h"
#include "region.h"

struct trap {
	uintptr_t addr;   /* the faulting address */
	uintptr_t inside; /* addr, or for a read past the region the pointer */
	ucontext_t *uc;
	struct rtl_found f;
	int write;
	int have_insn;
	int ambiguous; /* the faulting operand's pointer could not be told */
	struct rtl_insn insn;
	const struct rtl_mem_op *op; /* the operand that faulted, if known */
	uint64_t entry_gpr[RTL_NGPR];
	uint64_t gpr[RTL_NGPR]; /* the registers as moved so far; the signal
	                           frame gets them once, when the trap resolves */
	int dead;               /* die() ran: the frame keeps entry_gpr */
	int granted;            /* the handler allowed the access in place */
	struct trap *outer;
};

/* Print why with the access, the instruction and a backtrace; then let the
 * instruction fault again with the default action: the process ends with
 * SIGSEGV (and a core where enabled). The death hook runs first. */
void rtl_trap_die(struct trap *t, const char *why);

/* The same, for an access the moved registers do not explain. */
void rtl_trap_die_unresolved(struct trap *t, int mixed);

#endif
