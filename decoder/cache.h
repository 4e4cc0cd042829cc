/* The decode cache: direct-mapped, one seqlock per entry, so that any number
 * of threads can look up and fill it from signal handlers without locks.
 * The entry and the fast plan's read are here, inline, for the trap's fast
 * path (core/trap/trap.c); the rest is cache.c's. */
#ifndef RTL_DECODER_CACHE_H
#define RTL_DECODER_CACHE_H

#include <stdatomic.h>
#include <string.h>

#include "decoder/decoder.h"

#define RTL_DCACHE_BITS 12
#define RTL_DCACHE_SIZE (1u << RTL_DCACHE_BITS)

struct rtl_dcache_entry {
	_Atomic uint32_t seq; /* odd while being written */
	/* The instruction's bytes as two words, and the masks that keep its
	 * len bytes of the two words at pc: rtl_dcache_plan's comparison. */
	uint64_t key[2], mask[2];
	/* The fast plan, for rtl_dcache_plan to copy without the decode;
	 * plan.op.base is -1 when the instruction has none. */
	struct rtl_fast_plan plan;
	struct rtl_insn insn;
};

extern struct rtl_dcache_entry rtl_dcache[RTL_DCACHE_SIZE];

static inline struct rtl_dcache_entry *rtl_dcache_slot(uint64_t pc)
{
	uint64_t h = pc * 0x9e3779b97f4a7c15ull;

	return &rtl_dcache[h >> (64 - RTL_DCACHE_BITS)];
}

static inline uint64_t rtl_dcache_word(const void *p)
{
	uint64_t w;

	memcpy(&w, p, sizeof(w));
	return w;
}

/* rtl_decode_plan (decoder.h). Read in place, then the sequence again: a
 * torn read is caught by it, bytes included. The 16 bytes from pc must lie
 * on pc's page (in its last 15 bytes, rare: the general path). Only the
 * operand and its flags are copied when they are the whole plan (only_op),
 * the forms after it too otherwise. */
static inline int rtl_dcache_plan(uint64_t pc, struct rtl_fast_plan *out)
{
	const struct rtl_dcache_entry *e = rtl_dcache_slot(pc);
	uint32_t s1 = atomic_load_explicit(&e->seq, memory_order_acquire), s2;
	int same;

	if (s1 & 1 || !s1 || (pc & 4095) > 4096 - 16)
		return -1;
	same = e->insn.pc == pc &&
	       (((rtl_dcache_word((const void *)pc) ^ e->key[0]) & e->mask[0]) |
	        ((rtl_dcache_word((const void *)(pc + 8)) ^ e->key[1]) & e->mask[1])) ==
	               0;
	memcpy(out, &e->plan, __builtin_offsetof(struct rtl_fast_plan, ptrs));
	if (!out->only_op)
		memcpy(out, &e->plan, sizeof(*out));
	atomic_thread_fence(memory_order_acquire);
	s2 = atomic_load_explicit(&e->seq, memory_order_relaxed);
	return s1 == s2 && same && (uint8_t)out->op.base < RTL_NGPR ? 0 : -1;
}

/* Copy out the entry for pc if its bytes still match the code at pc. */
int rtl_dcache_get(uint64_t pc, struct rtl_insn *out);
void rtl_dcache_put(const struct rtl_insn *in);

#endif
