/* x86-64's general registers in the decoder's numbering (the encoding
 * order, decoder.h), for the tests that build or check operands by hand.
 * The numbers are plain integers: derive's tests use them on aarch64 too. */
#ifndef RTL_TEST_X86_REGS_H
#define RTL_TEST_X86_REGS_H

enum {
	RAX,
	RCX,
	RDX,
	RBX,
	RSP,
	RBP,
	RSI,
	RDI,
	R8,
	R9,
	R10,
	R11,
	R12,
	R13,
	R14,
	R15,
};

#endif
