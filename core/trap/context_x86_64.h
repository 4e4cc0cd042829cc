/* The interrupted thread's registers, as the x86-64 signal frame holds
 * them (included by context.h). Register numbers are the decoder's: the
 * hardware encoding order rax, rcx, rdx, rbx, rsp, rbp, rsi, rdi, r8..r15.
 * Runs in the trap handler. */
#ifndef RTL_CONTEXT_X86_64_H
#define RTL_CONTEXT_X86_64_H

#include <stdint.h>
#include <ucontext.h>

#include "decoder/decoder.h"

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

/* Register by register, in the decoder's order: the trap path reads them
 * once and writes them back once, and a loop through a table of indexes
 * cost a load more per register. */
static inline void rtl_ctx_gprs(const ucontext_t *uc, uint64_t gpr[RTL_NGPR])
{
	const greg_t *g = uc->uc_mcontext.gregs;

	gpr[0] = (uint64_t)g[REG_RAX];
	gpr[1] = (uint64_t)g[REG_RCX];
	gpr[2] = (uint64_t)g[REG_RDX];
	gpr[3] = (uint64_t)g[REG_RBX];
	gpr[4] = (uint64_t)g[REG_RSP];
	gpr[5] = (uint64_t)g[REG_RBP];
	gpr[6] = (uint64_t)g[REG_RSI];
	gpr[7] = (uint64_t)g[REG_RDI];
	gpr[8] = (uint64_t)g[REG_R8];
	gpr[9] = (uint64_t)g[REG_R9];
	gpr[10] = (uint64_t)g[REG_R10];
	gpr[11] = (uint64_t)g[REG_R11];
	gpr[12] = (uint64_t)g[REG_R12];
	gpr[13] = (uint64_t)g[REG_R13];
	gpr[14] = (uint64_t)g[REG_R14];
	gpr[15] = (uint64_t)g[REG_R15];
}

static inline void rtl_ctx_set_gprs(ucontext_t *uc,
                                    const uint64_t gpr[RTL_NGPR])
{
	greg_t *g = uc->uc_mcontext.gregs;

	g[REG_RAX] = (greg_t)gpr[0];
	g[REG_RCX] = (greg_t)gpr[1];
	g[REG_RDX] = (greg_t)gpr[2];
	g[REG_RBX] = (greg_t)gpr[3];
	g[REG_RSP] = (greg_t)gpr[4];
	g[REG_RBP] = (greg_t)gpr[5];
	g[REG_RSI] = (greg_t)gpr[6];
	g[REG_RDI] = (greg_t)gpr[7];
	g[REG_R8] = (greg_t)gpr[8];
	g[REG_R9] = (greg_t)gpr[9];
	g[REG_R10] = (greg_t)gpr[10];
	g[REG_R11] = (greg_t)gpr[11];
	g[REG_R12] = (greg_t)gpr[12];
	g[REG_R13] = (greg_t)gpr[13];
	g[REG_R14] = (greg_t)gpr[14];
	g[REG_R15] = (greg_t)gpr[15];
}

/* The frame's general registers as one array, in the frame's order
 * (REG_R8 .. REG_RSP are its first sixteen words), and where register i of
 * the decoder's numbering lies in it: the fast trap path reads and moves
 * them where they are, with no copy in and out. */
static inline uint64_t *rtl_ctx_frame(ucontext_t *uc)
{
	_Static_assert(REG_R8 == 0 && REG_RSP == RTL_NGPR - 1,
	               "the frame's general registers lead its gregs");
	return (uint64_t *)&uc->uc_mcontext.gregs[REG_R8];
}

static inline const int8_t *rtl_ctx_slots(void)
{
	/* clang-format off */
	static const int8_t slots[RTL_NGPR] = {
		REG_RAX, REG_RCX, REG_RDX, REG_RBX, REG_RSP, REG_RBP, REG_RSI, REG_RDI,
		REG_R8, REG_R9, REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15,
	};
	/* clang-format on */
	return slots;
}

#endif
