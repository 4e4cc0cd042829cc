/* The decode cache: direct-mapped, one seqlock per entry, so that any number
 * of threads can look up and fill it from signal handlers without locks. */
#ifndef RTL_DECODER_CACHE_H
#define RTL_DECODER_CACHE_H

#include "decoder.h"

/* Copy out the entry for pc if its bytes still match the code at pc. */
int rtl_dcache_get(uint64_t pc, struct rtl_insn *out);
void rtl_dcache_put(const struct rtl_insn *in);

#endif
