/* Capstone's calls, through pointers resolved when the decoder starts
 * (capstone.c loads the library with dlopen): a process that never
 * decodes an instruction (the preload's exact mechanisms on x86-64) never
 * maps Capstone, whose relocations alone cost about a millisecond a
 * process. The backends call these, never cs_* by name. */
#ifndef RTL_DECODER_CS_H
#define RTL_DECODER_CS_H

#include <capstone/capstone.h>
#include <stdbool.h>
#include <stdint.h>

struct rtl_cs {
	cs_err (*open)(cs_arch arch, cs_mode mode, csh *handle);
	cs_err (*option)(csh handle, cs_opt_type type, size_t value);
	cs_insn *(*malloc)(csh handle);
	bool (*disasm_iter)(csh handle, const uint8_t **code, size_t *size,
	                    uint64_t *address, cs_insn *insn);
	cs_err (*regs_access)(csh handle, const cs_insn *insn,
	                      cs_regs regs_read, uint8_t *regs_read_count,
	                      cs_regs regs_write, uint8_t *regs_write_count);
};

/* Filled by rtl_decoder_init; read-only afterwards (signal handlers call
 * through it). */
extern struct rtl_cs rtl_cs;

#endif
