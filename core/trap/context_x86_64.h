/* The interrupted thread's registers, as the x86-64 signal frame holds
 * them (included by context.h). Register numbers are the decoder's: the
 * hardware encoding order rax, rcx, rdx, rbx, rsp, rbp, rsi, rdi, r8..r15.
 * Runs in the trap handler. */
#ifndef RTL_CONTEXT_X86_64_H
#define RTL_CONTEXT_X86_64_H

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

/* The page-fault error code tells, even for read-modify-write on a
 * PROT_NONE page (measured): the decoder is only checked against it. */
#define RTL_CTX_DECODE_DECIDES 0

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

#endif
