/* The region map on its own (core/region/rmap.c, linked in from source):
 * offset -> record, by page and, on shared pages, by granule. Records are
 * plain structs here; nothing else of the core runs. */
#include <errno.h>

#include "core/region/rmap.h"
#include "core/region/views.h"
#include "tests/unit/test.h"

#define ARENA ((uint64_t)1 << 30)
#define PAGE 4096u

static struct rtl_region *rec(struct rtl_region *r, uint64_t lo, uint64_t span)
{
	memset(r, 0, sizeof(*r));
	r->lo = lo;
	r->span = span;
	r->size = span;
	return r;
}

static void start(void)
{
	CHECK_EQ(rtl_rmap_init(ARENA), 0);
}

TEST(empty_map_has_no_region_anywhere)
{
	start();
	CHECK(rtl_rmap_get(0) == NULL);
	CHECK(rtl_rmap_get(ARENA - 1) == NULL);
	CHECK(rtl_rmap_get(ARENA) == NULL); /* past the end: no table there */
	CHECK_EQ(rtl_rmap_busy(0, ARENA), 0);
	CHECK_EQ(rtl_rmap_next(0, ARENA), ARENA);
}

TEST(every_offset_of_a_span_maps_to_its_region_and_none_beside)
{
	struct rtl_region r;

	start();
	/* Three pages and a half, starting mid-page. */
	CHECK_EQ(rtl_rmap_insert(rec(&r, 10 * PAGE + 1024, 3 * PAGE + 2048)), 0);
	for (uint64_t off = r.lo; off < r.lo + r.span; off += RTL_GRANULE)
		CHECK(rtl_rmap_get(off) == &r);
	CHECK(rtl_rmap_get(r.lo + r.span - 1) == &r);
	CHECK(rtl_rmap_get(r.lo - 1) == NULL);
	CHECK(rtl_rmap_get(r.lo + r.span) == NULL);
}

TEST(regions_sharing_a_page_are_told_apart_by_granule)
{
	struct rtl_region a, b;

	start();
	CHECK_EQ(rtl_rmap_insert(rec(&a, 5 * PAGE, 64)), 0);
	CHECK_EQ(rtl_rmap_insert(rec(&b, 5 * PAGE + 128, 192)), 0);
	CHECK(rtl_rmap_get(5 * PAGE + 63) == &a);
	CHECK(rtl_rmap_get(5 * PAGE + 64) == NULL); /* the gap between them */
	CHECK(rtl_rmap_get(5 * PAGE + 128) == &b);
	CHECK(rtl_rmap_get(5 * PAGE + 319) == &b);
	CHECK(rtl_rmap_get(5 * PAGE + 320) == NULL);
}

TEST(remove_unmaps_its_region_only)
{
	struct rtl_region a, b, big;

	start();
	CHECK_EQ(rtl_rmap_insert(rec(&a, 7 * PAGE, 64)), 0);
	CHECK_EQ(rtl_rmap_insert(rec(&b, 7 * PAGE + 64, 64)), 0);
	CHECK_EQ(rtl_rmap_insert(rec(&big, 8 * PAGE, 2 * PAGE)), 0);
	rtl_rmap_remove(&a);
	CHECK(rtl_rmap_get(7 * PAGE) == NULL);
	CHECK(rtl_rmap_get(7 * PAGE + 64) == &b);
	rtl_rmap_remove(&big);
	CHECK(rtl_rmap_get(8 * PAGE) == NULL);
	CHECK(rtl_rmap_get(9 * PAGE + 100) == NULL);
	CHECK(rtl_rmap_get(7 * PAGE + 64) == &b);
}

TEST(busy_is_true_exactly_when_a_range_overlaps_a_span)
{
	struct rtl_region a;

	start();
	CHECK_EQ(rtl_rmap_insert(rec(&a, 3 * PAGE + 256, 128)), 0);
	CHECK_EQ(rtl_rmap_busy(3 * PAGE, 256), 0); /* ends where it starts */
	CHECK_EQ(rtl_rmap_busy(3 * PAGE, 257), 1);
	CHECK_EQ(rtl_rmap_busy(3 * PAGE + 300, 1), 1);  /* inside */
	CHECK_EQ(rtl_rmap_busy(3 * PAGE + 384, 64), 0); /* just past it */
	CHECK_EQ(rtl_rmap_busy(0, ARENA), 1);
}

TEST(next_finds_the_first_mapped_offset_across_empty_leaves)
{
	struct rtl_region a, b;
	/* A leaf covers 4096 pages: b lies three leaves further on. */
	uint64_t far = 3 * 4096 * (uint64_t)PAGE + 5 * PAGE + 192;

	start();
	CHECK_EQ(rtl_rmap_insert(rec(&a, PAGE + 128, 64)), 0);
	CHECK_EQ(rtl_rmap_insert(rec(&b, far, 64)), 0);
	CHECK_EQ(rtl_rmap_next(0, ARENA), PAGE + 128);
	CHECK_EQ(rtl_rmap_next(PAGE + 129, ARENA), PAGE + 129); /* inside a */
	CHECK_EQ(rtl_rmap_next(PAGE + 192, ARENA), far);
	CHECK_EQ(rtl_rmap_next(PAGE + 192, far), far); /* none before the end */
	CHECK_EQ(rtl_rmap_next(far + 64, ARENA), ARENA);
}

TEST(a_freed_page_can_be_mapped_again)
{
	struct rtl_region a, b;

	start();
	CHECK_EQ(rtl_rmap_insert(rec(&a, 4 * PAGE, 64)), 0);
	rtl_rmap_remove(&a);
	CHECK_EQ(rtl_rmap_busy(4 * PAGE, PAGE), 0);
	CHECK_EQ(rtl_rmap_insert(rec(&b, 4 * PAGE + 64, 64)), 0);
	CHECK(rtl_rmap_get(4 * PAGE) == NULL);
	CHECK(rtl_rmap_get(4 * PAGE + 64) == &b);
}

/* A shared page counts its granules: it goes back to unmapped only when
 * the last region on it leaves, and a later whole-page region replaces it. */
TEST(a_shared_page_is_unmapped_by_its_last_region_only)
{
	struct rtl_region a, b, c, whole;

	start();
	CHECK_EQ(rtl_rmap_insert(rec(&a, 6 * PAGE, 128)), 0);
	CHECK_EQ(rtl_rmap_insert(rec(&b, 6 * PAGE + 1024, 64)), 0);
	CHECK_EQ(rtl_rmap_insert(rec(&c, 6 * PAGE + PAGE - 64, 128)), 0); /* into page 7 */
	rtl_rmap_remove(&a);
	CHECK_EQ(rtl_rmap_next(6 * PAGE, 7 * PAGE), 6 * PAGE + 1024);
	CHECK_EQ(rtl_rmap_next(6 * PAGE + 1030, 7 * PAGE), 6 * PAGE + 1030);
	CHECK_EQ(rtl_rmap_next(6 * PAGE + 1088, 7 * PAGE), 7 * PAGE - 64);
	rtl_rmap_remove(&b);
	CHECK_EQ(rtl_rmap_busy(6 * PAGE, PAGE - 64), 0);
	CHECK_EQ(rtl_rmap_busy(6 * PAGE, PAGE), 1);
	rtl_rmap_remove(&c);
	CHECK_EQ(rtl_rmap_busy(6 * PAGE, 2 * PAGE), 0);
	CHECK_EQ(rtl_rmap_insert(rec(&whole, 6 * PAGE, PAGE)), 0);
	CHECK(rtl_rmap_get(6 * PAGE + 2000) == &whole);
	CHECK_EQ(rtl_rmap_next(5 * PAGE, 8 * PAGE), 6 * PAGE);
}

/* Undoing an insert that failed part way removes granules that were never
 * set (rtl_rmap_insert's rollback): a neighbour on the same page stays
 * mapped, and the page is freed when the neighbour leaves. */
TEST(removing_granules_never_set_keeps_the_neighbour)
{
	struct rtl_region n, ghost;

	start();
	CHECK_EQ(rtl_rmap_insert(rec(&n, 10 * PAGE, 128)), 0);
	rtl_rmap_remove(rec(&ghost, 10 * PAGE + 256, 128)); /* as many as n has */
	CHECK(rtl_rmap_get(10 * PAGE + 64) == &n);
	CHECK_EQ(rtl_rmap_busy(10 * PAGE, PAGE), 1);
	rtl_rmap_remove(&n);
	CHECK_EQ(rtl_rmap_busy(10 * PAGE, PAGE), 0);
	CHECK_EQ(rtl_rmap_insert(rec(&ghost, 10 * PAGE + 64, 64)), 0);
	CHECK(rtl_rmap_get(10 * PAGE + 64) == &ghost);
	CHECK(rtl_rmap_get(10 * PAGE) == NULL);
}

/* An insert checks as it goes: one that meets another region on a later
 * page fails with EEXIST and takes back the pages it had mapped, and only
 * those; the other region keeps every granule, its shared page included. */
TEST(an_insert_meeting_a_region_fails_and_maps_nothing)
{
	struct rtl_region old, whole, late;

	start();
	CHECK_EQ(rtl_rmap_insert(rec(&old, 22 * PAGE + 1024, 128)), 0);
	CHECK_EQ(rtl_rmap_insert(rec(&whole, 24 * PAGE, PAGE)), 0);
	/* From the middle of page 20 into old's granules on page 22. */
	errno = 0;
	CHECK_EQ(rtl_rmap_insert(rec(&late, 20 * PAGE + 512, 2 * PAGE + 576)), -1);
	CHECK_EQ(errno, EEXIST);
	CHECK(rtl_rmap_get(20 * PAGE + 512) == NULL);
	CHECK(rtl_rmap_get(21 * PAGE) == NULL);
	CHECK(rtl_rmap_get(22 * PAGE) == NULL);
	CHECK(rtl_rmap_get(22 * PAGE + 1024) == &old);
	CHECK(rtl_rmap_get(22 * PAGE + 1151) == &old);
	CHECK_EQ(rtl_rmap_next(20 * PAGE, 23 * PAGE), 22 * PAGE + 1024);
	/* A whole page that is taken. */
	CHECK_EQ(rtl_rmap_insert(rec(&late, 23 * PAGE, 2 * PAGE)), -1);
	CHECK_EQ(errno, EEXIST);
	CHECK(rtl_rmap_get(23 * PAGE) == NULL);
	CHECK(rtl_rmap_get(24 * PAGE + 5) == &whole);
	/* The granules just before old are free. */
	CHECK_EQ(rtl_rmap_insert(rec(&late, 21 * PAGE, PAGE + 1024)), 0);
	CHECK(rtl_rmap_get(22 * PAGE + 1023) == &late);
	CHECK(rtl_rmap_get(22 * PAGE + 1024) == &old);
}

/* Against a model: regions of 1 to 12, sometimes 200, granules inserted and removed at
 * random over 8 pages (one page's head a region from the page before, its
 * own starts, whole pages between); after every change, every granule
 * maps to the region the model says, and the next mapped offset is the
 * model's. */
TEST(random_inserts_and_removes_agree_with_a_model)
{
	enum { PAGES = 8,
	       G = PAGES * 64,
	       N = 64 };
	static struct rtl_region r[N];
	static int live[N], owner[G];
	uint64_t base = 40 * PAGE, x = 12345;
	long inserted = 0, lookups = 0;

	start();
	for (int g = 0; g < G; g++)
		owner[g] = -1;
	for (int step = 0; step < 20000; step++) {
		int k;
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		k = (int)(x % N);
		if (live[k]) {
			rtl_rmap_remove(&r[k]);
			for (int g = 0; g < G; g++)
				if (owner[g] == k)
					owner[g] = -1;
			live[k] = 0;
		} else {
			/* Mostly small, some past a page. */
			unsigned a = (unsigned)(x >> 8) % G,
			         n = 1 + (unsigned)(x >> 24) % (x >> 40 & 3 ? 12 : 200);
			int free = 1;
			if (a + n > G)
				n = G - a;
			for (unsigned g = a; g < a + n; g++)
				free &= owner[g] < 0;
			errno = 0;
			CHECK_EQ(rtl_rmap_insert(rec(&r[k], base + a * 64ull, n * 64ull)),
			         free ? 0 : -1);
			if (!free) {
				CHECK_EQ(errno, EEXIST);
				continue;
			}
			for (unsigned g = a; g < a + n; g++)
				owner[g] = k;
			live[k] = 1;
			inserted++;
		}
		for (int g = 0; g < G; g++) {
			struct rtl_region *want = owner[g] < 0 ? NULL : &r[owner[g]];
			if (rtl_rmap_get(base + g * 64ull + (uint64_t)(x % 64)) != want) {
				CHECK(!"a granule maps to the wrong region");
				return;
			}
			lookups++;
		}
		for (int g = 0, next = G; g < G; g += 37, next = G) {
			for (int h = g; h < G; h++)
				if (owner[h] >= 0) {
					next = h;
					break;
				}
			CHECK_EQ(rtl_rmap_next(base + g * 64ull, base + G * 64ull),
			         base + (uint64_t)next * 64);
		}
	}
	printf("# %ld inserts, %ld lookups\n", inserted, lookups);
	CHECK(inserted > 2000); /* the model was exercised */
}

/* The hint of a shared page (rmap.c): regions defined one after another
 * with records one after another, a fixed step apart either way, have
 * every granule's record predicted, so that a lookup fetches it beside the
 * subtable. Region records are 128 bytes: two lines. */
TEST(regions_defined_in_order_have_their_records_predicted)
{
	static struct rtl_region up[32], down[20];
	int wrong = 0;

	start();
	/* 64-byte regions 128 bytes apart, as region_alloc(64) places them. */
	for (int k = 0; k < 32; k++)
		CHECK_EQ(rtl_rmap_insert(rec(&up[k], 20 * PAGE + k * 128ull, 64)), 0);
	for (int k = 0; k < 32; k++)
		for (uint64_t at = 0; at < 64; at += 63)
			wrong += rtl_rmap_guess(20 * PAGE + k * 128ull + at) !=
			         (uintptr_t)&up[k];
	/* 192-byte regions, each with the record before the last one's. */
	for (int k = 0; k < 20; k++)
		CHECK_EQ(rtl_rmap_insert(rec(&down[19 - k], 21 * PAGE + k * 192ull, 192)), 0);
	for (int k = 0; k < 20; k++)
		for (uint64_t at = 0; at < 192; at += 64)
			wrong += rtl_rmap_guess(21 * PAGE + k * 192ull + at) !=
			         (uintptr_t)&down[19 - k];
	CHECK_EQ(wrong, 0);
}

/* A hint that no longer holds (the page's regions freed and defined again
 * with their records in another order) keeps predicting the records of
 * before, and every lookup still answers the record of now. */
TEST(a_stale_hint_never_changes_an_answer)
{
	static struct rtl_region r[16];
	int moved = 0;

	start();
	for (int k = 0; k < 16; k++)
		CHECK_EQ(rtl_rmap_insert(rec(&r[k], 50 * PAGE + k * 256ull, 256)), 0);
	/* All but the first: the page stays shared, its hint as it was. */
	for (int k = 1; k < 16; k++)
		rtl_rmap_remove(&r[k]);
	for (int k = 1; k < 16; k++) {
		int j = 1 + (k * 7) % 15; /* a permutation of 1..15 */
		CHECK_EQ(rtl_rmap_insert(rec(&r[j], 50 * PAGE + k * 256ull, 256)), 0);
	}
	for (int k = 0; k < 16; k++) {
		int j = k ? 1 + (k * 7) % 15 : 0;
		for (uint64_t at = 0; at < 256; at += 64) {
			CHECK(rtl_rmap_guess(50 * PAGE + k * 256ull + at) == (uintptr_t)&r[k]);
			CHECK(rtl_rmap_get(50 * PAGE + k * 256ull + at) == &r[j]);
		}
		moved += j != k;
	}
	CHECK(moved > 0); /* the hint was stale there, the answers were not */
}
