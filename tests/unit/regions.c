/* Regions of every size, many regions, define in and outside the views,
 * lookup through any view and interior pointers. */
#include <string.h>

#include "core/region/placement.h"
#include "tests/unit/helpers.h"
#include "tests/unit/test.h"

/* Allocate one region, check zero fill, trap once per protect on its first
 * and last byte, keep contents across protection changes. */
static void one_size(size_t size)
{
	volatile unsigned char *x = region_alloc(size, &x);

	CHECK(x != NULL);
	region_handler(NULL, grant_handler);
	for (size_t i = 0; i < size; i += 4093)
		CHECK_EQ(x[i], 0);
	CHECK_EQ(x[size - 1], 0);
	memset(R(x), 0x5a, size);
	h_calls = 0;
	region_protect(R(x), PROT_NONE);
	CHECK_EQ(x[size - 1], 0x5a); /* read trap */
	CHECK_EQ(h_calls, 1);
	x[0] = 1; /* write trap */
	CHECK_EQ(h_calls, 2);
	x[size - 1] = 2; /* granted */
	CHECK_EQ(h_calls, 2);
	region_protect(R(x), PROT_READ);
	for (size_t i = 1; i + 1 < size; i += 511)
		CHECK_EQ(x[i], 0x5a);
	CHECK_EQ(h_calls, 2);
	CHECK_EQ(region_free(R(x)), 0);
}

TEST(size_1_byte) { one_size(1); }
TEST(size_1_page) { one_size(4096); }
TEST(size_64k) { one_size(64 << 10); }
TEST(size_256k) { one_size(256 << 10); }
TEST(size_10m) { one_size(10 << 20); }

/* Freed memory comes back zeroed, and the space is reused. */
TEST(free_reuses_zeroed)
{
	unsigned char *a = region_alloc(100, NULL);
	size_t before;

	CHECK(a != NULL);
	memset(a, 0xff, 100);
	CHECK_EQ(region_free(a), 0);
	before = rtl_extent_bytes_in_use();
	unsigned char *b = region_alloc(100, NULL);
	CHECK(b != NULL);
	for (int i = 0; i < 100; i++)
		CHECK_EQ(b[i], 0);
	CHECK(rtl_extent_bytes_in_use() > before);
}

#define MANY 100000

/* 10^5 regions: each keeps its own contents and protection; all freed, the
 * allocator is empty again. */
TEST(hundred_thousand_regions)
{
	static unsigned *r[MANY];

	region_handler(NULL, grant_handler);
	for (int i = 0; i < MANY; i++) {
		r[i] = region_alloc(sizeof(unsigned) * (1 + i % 7), NULL);
		CHECK(r[i] != NULL);
		r[i][0] = (unsigned)i;
		/* Bound pointers: unbounded ones are searched on every protect,
		 * which makes 10^5 of them quadratic (as in the paper). */
		CHECK_EQ(region_bptr(&r[i], &r[i]), 0);
	}
	CHECK_EQ(stats().regions, MANY);
	for (int i = 0; i < MANY; i += 3)
		CHECK_EQ(region_protect(r[i], PROT_NONE), 0);
	h_calls = 0;
	for (int i = 0; i < MANY; i++)
		CHECK_EQ(*(volatile unsigned *)r[i], (unsigned)i);
	CHECK_EQ(h_calls, (MANY + 2) / 3);
	for (int i = 0; i < MANY; i++) {
		CHECK_EQ(region_ptr_free(&r[i]), 0);
		CHECK_EQ(region_free(r[i]), 0);
	}
	CHECK_EQ(region_ptr_free(&r[0]), -1); /* freed with its registration */
	CHECK_EQ(stats().regions, 0);
	CHECK_EQ(rtl_extent_bytes_in_use(), 0);
}

/* Any address inside a region, through any view, names the region. */
TEST(lookup_any_view_interior)
{
	char *x = region_alloc(1000, &x);
	char *ro, *none;

	CHECK(x != NULL);
	region_protect(x, PROT_READ);
	ro = x;
	region_protect(x, PROT_NONE);
	none = x;
	CHECK(ro != none);
	CHECK_EQ(region_protect(ro + 999, RW), 0);
	CHECK_EQ(region_protect(none + 500, PROT_READ), 0);
	CHECK(x == ro);
	CHECK_EQ(region_set_data(none + 1, R(1)), 0);
	/* The padding after the region belongs to it too; far away does not. */
	CHECK_EQ(region_protect(x + 1000, RW), 0);
	CHECK_EQ(region_protect(x + 4096, RW), -1);
}

/* region_define on ordinary memory: contents copied into a new region, the
 * bound pointer moved (interior offset kept), the original left alone. */
TEST(define_outside_views_copies)
{
	static char buf[300];
	char *p, *inner;

	for (int i = 0; i < 300; i++)
		buf[i] = (char)i;
	inner = buf + 10;
	p = region_define(buf, sizeof(buf), &inner);
	CHECK(p != NULL);
	CHECK(p != buf);
	CHECK(inner == p + 10);
	CHECK_EQ(memcmp(p, buf, sizeof(buf)), 0);
	p[0] = 42;
	CHECK_EQ(buf[0], 0);
	region_handler(NULL, grant_handler);
	region_protect(p, PROT_NONE);
	h_calls = 0;
	CHECK_EQ(peek(inner), 10); /* inner is bound: it moved, and traps */
	CHECK_EQ(h_calls, 1);
}

/* region_define inside a reserved extent: in place, no copy. */
TEST(define_in_place)
{
	size_t got;
	char *ext = rtl_reserve(1 << 16, &got);
	char *a, *b;

	CHECK(ext != NULL);
	CHECK(got >= (1 << 16));
	ext[0] = 7;
	a = region_define(ext, 100, NULL);
	CHECK(a == ext);
	CHECK_EQ(a[0], 7);
	b = region_define(ext + 128, 64, NULL);
	CHECK(b == ext + 128);
	region_handler(NULL, grant_handler);
	region_protect(a, PROT_NONE);
	h_calls = 0;
	CHECK_EQ(peek(ext + 128), 0); /* neighbour on the same page: no trap */
	CHECK_EQ(h_calls, 0);
	CHECK_EQ(region_free(a), 0);
	CHECK_EQ(region_free(b), 0);
	CHECK_EQ(rtl_unreserve(ext, got), 0);
}
