/* Shared by the x86-64 backend's files: register numbering over
 * Capstone, the operand translation and the look-ahead. Internal to decoder/; runs in
 * the trap handler like the rest of the backend (no malloc, no locks). */
#ifndef RTL_DECODER_X86_H
#define RTL_DECODER_X86_H

#include <capstone/capstone.h>

#include "decoder/backend.h"

/* General register number of a 64-bit or 32-bit register, RTL_REG_PC for
 * rip, RTL_REG_NONE for none, -2 for anything else (a vector index).
 * *addr32 is set for a 32-bit register. */
int rtl_x86_gpr(x86_reg r, uint8_t *addr32);

/* General register number of any width (al, ax, eax, rax ...), or -1. */
int rtl_x86_gpr_any(x86_reg r);

/* Fill out from Capstone's detail for the instruction at pc (translate.c). */
void rtl_x86_translate(const cs_insn *ci, uint64_t pc, struct rtl_insn *out);

/* Fill out->later and out->ptr_regs from the code that follows the
 * instruction ci, already translated into out (flow.c). ci is reused as
 * the decode buffer. */
void rtl_x86_flow(csh h, cs_insn *ci, struct rtl_code *code,
                  struct rtl_insn *out);

#endif
