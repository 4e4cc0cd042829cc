/* The interrupted thread's registers, as the signal frame holds them
 * (x86-64). Register numbers are the decoder's: the hardware encoding order
 * rax, rcx, rdx, rbx, rsp, rbp, rsi, rdi, r8..r15. Runs in the trap handler. */
#ifndef RTL_CONTEXT_H
#define RTL_CONTEXT_H

#include <stdint.h>
#include <ucontext.h>

#include "decoder.h"

static const int rtl_ctx_greg[RTL_NGPR] = {
	REG_RAX,
	REG_RCX,
	REG_RDX,
	REG_RBX,
	REG_RSP,
	REG_RBP,
	REG_RSI,
	REG_RDI,
	REG_R8,
	REG_R9,
	REG_R10,
	REG_R11,
	REG_R12,
	REG_R13,
	REG_R14,
	REG_R15,
};

static inline uint64_t rtl_ctx_pc(const ucontext_t *uc)
{
	return (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
}

static inline int rtl_ctx_is_write(const ucontext_t *uc)
{
	return (uc->uc_mcontext.gregs[REG_ERR] & 2) != 0; /* #PF error code W */
}

static inline void rtl_ctx_gprs(const ucontext_t *uc, uint64_t gpr[RTL_NGPR])
{
	for (int i = 0; i < RTL_NGPR; i++)
		gpr[i] = (uint64_t)uc->uc_mcontext.gregs[rtl_ctx_greg[i]];
}

static inline void rtl_ctx_set_gprs(ucontext_t *uc,
                                    const uint64_t gpr[RTL_NGPR])
{
	for (int i = 0; i < RTL_NGPR; i++)
		uc->uc_mcontext.gregs[rtl_ctx_greg[i]] = (greg_t)gpr[i];
}

/* Add delta to every register holding a value in [lo, hi); returns how
 * many moved. */
static inline unsigned rtl_gprs_swizzle(uint64_t gpr[RTL_NGPR], uintptr_t lo,
                                        uintptr_t hi, intptr_t delta)
{
	unsigned moved = 0;
	for (int i = 0; i < RTL_NGPR; i++) {
		if (gpr[i] - lo < hi - lo) {
			gpr[i] += (uint64_t)delta;
			moved++;
		}
	}
	return moved;
}

#endif
