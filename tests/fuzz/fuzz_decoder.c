/* Fuzz target: the decoder on arbitrary instruction bytes. It must never
 * crash, never loop, and never report more than it can hold. */
#include <stdlib.h>

#include "decoder/decoder.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	struct rtl_insn in;

	if (!ready) {
		if (rtl_decoder_init() < 0)
			abort();
		ready = 1;
	}
	if (rtl_decode_buf(data, size, 0x400000, &in) == 0) {
		uint64_t gpr[RTL_NGPR] = { 0 };
		if (in.len == 0 || in.len > RTL_INSN_MAX_BYTES || in.len > size ||
		    in.nmem > RTL_INSN_MAX_MEM)
			abort();
		for (int i = 0; i < in.nmem; i++) {
			const struct rtl_mem_op *m = &in.mem[i];
			if (m->base >= RTL_NGPR + 1 || m->index >= RTL_NGPR)
				abort();
			rtl_mem_ea(&in, m, gpr);
		}
	}
	return 0;
}
