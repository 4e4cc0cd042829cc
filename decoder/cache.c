/* Decode cache. Runs in the trap handler: atomics only. A writer that finds
 * an entry busy skips caching rather than wait. */
#include "cache.h"

#include <stdatomic.h>
#include <string.h>

#include "derive.h"

#define CACHE_BITS 12
#define CACHE_SIZE (1u << CACHE_BITS)

struct entry {
	_Atomic uint32_t seq; /* odd while being written */
	/* The instruction's bytes as two words, and the masks that keep its
	 * len bytes of the two words at pc: rtl_decode_plan's comparison. */
	uint64_t key[2], mask[2];
	/* The fast plan, for rtl_decode_plan to copy without the decode;
	 * plan.op.base is -1 when the instruction has none. */
	struct rtl_fast_plan plan;
	struct rtl_insn insn;
};

static struct entry cache[CACHE_SIZE];

static struct entry *slot(uint64_t pc)
{
	uint64_t h = pc * 0x9e3779b97f4a7c15ull;
	return &cache[h >> (64 - CACHE_BITS)];
}

static uint64_t word_at(const void *p)
{
	uint64_t w;

	memcpy(&w, p, sizeof(w));
	return w;
}

/* Whether the code at pc still holds in's bytes. Two words cover any
 * instruction when the 16 bytes from pc lie in one 4 KiB block, so on
 * pc's page (a word read past it could fault); a byte loop otherwise.
 * Both architectures rtl runs on are little-endian: the mask keeps a
 * word's first len bytes. */
static int same_bytes(const struct rtl_insn *in, uint64_t pc)
{
	const uint8_t *code = (const uint8_t *)pc;
	unsigned len = in->len;

	if (len - 1 < RTL_INSN_MAX_BYTES && (pc & 4095) <= 4096 - 16) {
		if (len >= 8)
			return word_at(code) == word_at(in->bytes) &&
			       word_at(code + len - 8) == word_at(in->bytes + len - 8);
		return ((word_at(code) ^ word_at(in->bytes)) &
		        ((UINT64_C(1) << (8 * len)) - 1)) == 0;
	}
	for (unsigned i = 0; i < len && i < RTL_INSN_MAX_BYTES; i++)
		if (in->bytes[i] != ((const volatile uint8_t *)pc)[i])
			return 0;
	return 1;
}

int rtl_dcache_get(uint64_t pc, struct rtl_insn *out)
{
	struct entry *e = slot(pc);
	uint32_t s1 = atomic_load_explicit(&e->seq, memory_order_acquire), s2;

	if (s1 & 1 || !s1)
		return -1;
	/* The header, then only the look-ahead forms in use: the whole
	 * record is five times larger than a typical entry. A torn nlater is
	 * clamped by rtl_insn_used and caught by the sequence check below. */
	memcpy(out, &e->insn, __builtin_offsetof(struct rtl_insn, later));
	memcpy(out->later, e->insn.later,
	       rtl_insn_used(out) - __builtin_offsetof(struct rtl_insn, later));
	atomic_thread_fence(memory_order_acquire);
	s2 = atomic_load_explicit(&e->seq, memory_order_relaxed);
	if (s1 != s2 || out->pc != pc)
		return -1;
	/* The bytes are part of the key: code at pc may have changed. */
	return same_bytes(out, pc) ? 0 : -1;
}

/* Both architectures rtl runs on are little-endian: a word's first n
 * bytes are its low 8n bits. */
static uint64_t low_bytes(unsigned n)
{
	return n >= 8 ? ~UINT64_C(0) : (UINT64_C(1) << (8 * n)) - 1;
}

static void put_key(struct entry *e, const struct rtl_insn *in)
{
	uint8_t b[16] = { 0 };
	unsigned len = in->len < RTL_INSN_MAX_BYTES ? in->len : RTL_INSN_MAX_BYTES;

	memcpy(b, in->bytes, len);
	e->mask[0] = low_bytes(len);
	e->mask[1] = len > 8 ? low_bytes(len - 8) : 0;
	e->key[0] = word_at(b) & e->mask[0];
	e->key[1] = word_at(b + 8) & e->mask[1];
}

int rtl_decode_plan(uint64_t pc, struct rtl_fast_plan *out)
{
	const struct entry *e = slot(pc);
	uint32_t s1 = atomic_load_explicit(&e->seq, memory_order_acquire), s2;
	int same;

	if (s1 & 1 || !s1)
		return -1;
	/* Read in place, then the sequence again: a torn read is caught by
	 * it, bytes included. The 16 bytes from pc must lie on pc's page (in
	 * its last 15 bytes, rare: the general path). */
	if ((pc & 4095) > 4096 - 16)
		return -1;
	same = e->insn.pc == pc &&
	       (((word_at((const void *)pc) ^ e->key[0]) & e->mask[0]) |
	        ((word_at((const void *)(pc + 8)) ^ e->key[1]) & e->mask[1])) == 0;
	memcpy(out, &e->plan, sizeof(*out));
	atomic_thread_fence(memory_order_acquire);
	s2 = atomic_load_explicit(&e->seq, memory_order_relaxed);
	return s1 == s2 && same && (uint8_t)out->op.base < RTL_NGPR ? 0 : -1;
}

void rtl_dcache_put(const struct rtl_insn *in)
{
	struct entry *e = slot(in->pc);
	uint32_t s = atomic_load_explicit(&e->seq, memory_order_relaxed);

	if (s & 1 || !atomic_compare_exchange_strong_explicit(
	                     &e->seq, &s, s + 1, memory_order_acquire,
	                     memory_order_relaxed))
		return;
	atomic_thread_fence(memory_order_release);
	memcpy(&e->insn, in, rtl_insn_used(in));
	put_key(e, in);
	rtl_derive_fast_plan(in, &e->plan);
	atomic_store_explicit(&e->seq, s + 2, memory_order_release);
}
