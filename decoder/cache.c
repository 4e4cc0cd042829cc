/* Decode cache. Runs in the trap handler: atomics only. A writer that finds
 * an entry busy skips caching rather than wait. */
#include "decoder/cache.h"

#include <string.h>

#include "decoder/derive.h"

struct rtl_dcache_entry rtl_dcache[RTL_DCACHE_SIZE];

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
			return rtl_dcache_word(code) == rtl_dcache_word(in->bytes) &&
			       rtl_dcache_word(code + len - 8) == rtl_dcache_word(in->bytes + len - 8);
		return ((rtl_dcache_word(code) ^ rtl_dcache_word(in->bytes)) &
		        ((UINT64_C(1) << (8 * len)) - 1)) == 0;
	}
	for (unsigned i = 0; i < len && i < RTL_INSN_MAX_BYTES; i++)
		if (in->bytes[i] != ((const volatile uint8_t *)pc)[i])
			return 0;
	return 1;
}

int rtl_dcache_get(uint64_t pc, struct rtl_insn *out)
{
	struct rtl_dcache_entry *e = rtl_dcache_slot(pc);
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

static void put_key(struct rtl_dcache_entry *e, const struct rtl_insn *in)
{
	uint8_t b[16] = { 0 };
	unsigned len = in->len < RTL_INSN_MAX_BYTES ? in->len : RTL_INSN_MAX_BYTES;

	memcpy(b, in->bytes, len);
	e->mask[0] = low_bytes(len);
	e->mask[1] = len > 8 ? low_bytes(len - 8) : 0;
	e->key[0] = rtl_dcache_word(b) & e->mask[0];
	e->key[1] = rtl_dcache_word(b + 8) & e->mask[1];
}

int rtl_decode_plan(uint64_t pc, struct rtl_fast_plan *out)
{
	return rtl_dcache_plan(pc, out);
}

void rtl_dcache_put(const struct rtl_insn *in)
{
	struct rtl_dcache_entry *e = rtl_dcache_slot(in->pc);
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
