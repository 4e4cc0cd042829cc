/* A generational write barrier in the style of Hosking & Moss, with regions
 * instead of pages. The old generation is many small objects, each a region
 * with tracking on: read-only, so the first store into an object after a
 * collection traps once and marks it (rtl grants the store itself; no
 * handler). At a minor collection region_dirty lists exactly the objects
 * stored into: only those are scanned for pointers into the young
 * generation, and region_diff narrows that to the slots that changed. The
 * same stores are also counted as a 4 KiB card table would see them, with
 * the objects packed in memory as a bump allocator would. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rtl/region.h>

#define OLD 5000
#define CYCLES 4
#define STORES 300
#define CARD 4096
#define YOUNG 4096 /* young objects, here just addresses to point at */

struct object {
	uint64_t slot[1]; /* size / 8 pointer slots */
};

static struct object *obj[OLD];
static size_t size[OLD], heap_at[OLD], heap;
static uint64_t young[YOUNG];

static uint64_t rng = 0x2545f4914f6cdd1dull;
static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)rng;
}

static int is_young(uint64_t v)
{
	return v >= (uint64_t)(uintptr_t)young &&
	       v < (uint64_t)(uintptr_t)(young + YOUNG);
}

/* Which object a base from region_dirty is. region_dirty lists regions in
 * the order their tracking began, here the order of obj[], and gives each
 * base in the view of the region's current protection, as obj[i] (a bound
 * pointer) is: one walk along obj[] per collection finds them all. */
static size_t index_of(void *base, size_t *cursor)
{
	while (*cursor < OLD && (void *)obj[*cursor] != base)
		++*cursor;
	return *cursor;
}

int main(void)
{
	static void *dirty[OLD];
	static rtl_run_t runs[64];
	static uint8_t card[OLD * 512 / CARD + 1], stored[OLD][64];
	size_t total_obj = 0, total_card = 0;
	int all_found = 1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (size_t i = 0; i < OLD; i++) {
		size[i] = 32 + 8 * (rnd() % 61); /* 32 to 512 bytes */
		heap_at[i] = heap;
		heap += size[i];
		obj[i] = region_alloc(size[i], &obj[i]);
		if (!obj[i] || region_track(obj[i], 1) < 0)
			return 1;
	}
	printf("old generation: %d objects of 32-512 bytes (%zu bytes), each a "
	       "read-only region\n",
	       OLD, heap);

	for (int cycle = 1; cycle <= CYCLES; cycle++) {
		size_t n, slots = 0, obj_bytes = 0, diff_bytes = 0, found = 0;
		size_t diff_found = 0, cards = 0, card_objs = 0, want = 0, at = 0;

		/* The mutator: store young pointers into old objects. */
		memset(stored, 0, sizeof(stored));
		memset(card, 0, sizeof(card));
		for (int s = 0; s < STORES; s++) {
			size_t i = rnd() % OLD, k = rnd() % (size[i] / 8);
			obj[i]->slot[k] = (uint64_t)(uintptr_t)&young[rnd() % YOUNG];
			want += !stored[i][k];
			stored[i][k] = 1;
			card[(heap_at[i] + 8 * k) / CARD] = 1; /* a card barrier */
		}

		/* The collector: scan the objects rtl saw written... */
		n = region_dirty(dirty, OLD, 1);
		for (size_t d = 0; d < n; d++) {
			size_t i = index_of(dirty[d], &at);
			ssize_t nr = region_diff(dirty[d], runs, 64);

			if (i == OLD)
				return 1;
			obj_bytes += size[i];
			for (size_t k = 0; k < size[i] / 8; k++)
				found += is_young(obj[i]->slot[k]);
			/* ...or only the slots that changed (two runs may fall
			 * in one slot: count it once). */
			size_t next = 0;
			for (ssize_t r = 0; r < nr; r++) {
				size_t k = runs[r].offset / 8;
				size_t last = (runs[r].offset + runs[r].len - 1) / 8;
				for (k = k < next ? next : k; k <= last; k++, slots++)
					diff_found += is_young(obj[i]->slot[k]);
				next = last + 1;
			}
			/* Promote: the young objects move out, the slots empty. */
			for (size_t k = 0; k < size[i] / 8; k++)
				if (is_young(obj[i]->slot[k]))
					obj[i]->slot[k] = 0;
			region_checkpoint(dirty[d]); /* read-only again */
		}
		diff_bytes = 8 * slots;
		/* ...against scanning every object that overlaps a dirty card. */
		for (size_t i = 0; i < OLD; i++) {
			size_t first = heap_at[i] / CARD;
			size_t last = (heap_at[i] + size[i] - 1) / CARD;
			for (size_t c = first; c <= last; c++)
				if (card[c]) {
					card_objs++;
					break;
				}
		}
		for (size_t c = 0; c < sizeof(card); c++)
			cards += card[c];

		printf("cycle %d: %d stores, %zu young pointers to find\n", cycle,
		       STORES, want);
		printf("  regions (objects): %4zu objects, %7zu bytes scanned, "
		       "%zu found\n",
		       n, obj_bytes, found);
		printf("  regions (diffs):   %4zu slots,   %7zu bytes scanned, "
		       "%zu found\n",
		       slots, diff_bytes, diff_found);
		printf("  4 KiB cards:       %4zu cards,   %7zu bytes scanned "
		       "(%zu objects)\n",
		       cards, cards * CARD, card_objs);
		all_found &= found == want && diff_found == want;
		total_obj += obj_bytes;
		total_card += cards * CARD;
	}
	printf("every young pointer found: %s; cards scanned %.1fx the bytes of "
	       "the objects written\n",
	       all_found ? "yes" : "NO",
	       (double)total_card / (double)total_obj);
	return all_found ? 0 : 1;
}
