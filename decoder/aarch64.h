/* Shared by the aarch64 backend's files: the load/store encodings decoded
 * from the instruction word (aarch64_ldst.c), register numbering over
 * Capstone, and the look-ahead (aarch64_flow.c). Internal to decoder/; runs
 * in the trap handler like the rest of the backend (no malloc, no locks). */
#ifndef RTL_DECODER_AARCH64_H
#define RTL_DECODER_AARCH64_H

#include <capstone/capstone.h>

#include "decoder/backend.h"

#define RTL_A64_SP 31 /* the decoder's number for sp */

/* What one instruction word does to memory and to the general registers,
 * when it is a load, a store, an atomic or DC ZVA. */
struct rtl_a64_access {
	struct rtl_mem_op mem; /* where, how much, read or write */
	uint8_t flags;         /* RTL_INSN_* */
	int8_t wb_reg;         /* base written back (pre/post-index), or -1 */
	int8_t wb_index;       /* post-index by this register, or -1 */
	int64_t wb_imm;        /* post/pre-index by this constant */
	rtl_regset_t writes;   /* registers loaded (Rt, Rt2, a status Rs) */
	const char *name;      /* mnemonic, for words Capstone 4 cannot decode */
};

/* Decode the load/store word x at pc into a. 1 if it accesses memory. */
int rtl_a64_ldst(uint32_t x, uint64_t pc, struct rtl_a64_access *a);

/* DC ZVA's block, from DCZID_EL0 (read once by rtl_backend_open). */
extern uint16_t rtl_a64_zva_bytes;

/* General register number of x0..x30, w0..w30, sp, wsp; -1 for the zero
 * register and anything else. */
int rtl_a64_gpr(arm64_reg r);

/* Fill out->later and out->ptr_regs from the code after out's instruction
 * (aarch64_flow.c). ci is reused as the decode buffer. */
void rtl_a64_flow(csh h, cs_insn *ci, struct rtl_code *code,
                  struct rtl_insn *out);

static inline uint32_t rtl_a64_word(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline int64_t rtl_a64_sext(uint64_t v, int bits)
{
	return (int64_t)(v << (64 - bits)) >> (64 - bits);
}

#endif
