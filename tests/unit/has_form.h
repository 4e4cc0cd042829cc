/* What the look-ahead tests of both CPUs ask of a decoded instruction
 * (derive.c, decoder_aarch64.c): whether it recorded the form
 * base + index + disp. */
#ifndef RTL_TEST_HAS_FORM_H
#define RTL_TEST_HAS_FORM_H

#include "decoder/decoder.h"

static inline int has_form(const struct rtl_insn *in, int b, int i, int64_t disp)
{
	for (int k = 0; k < in->nlater; k++)
		if (in->later[k].base == b && in->later[k].index == i &&
		    in->later[k].disp == disp)
			return 1;
	return 0;
}

#endif
