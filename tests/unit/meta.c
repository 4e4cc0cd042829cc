/* rtl's metadata memory on its own (core/region/meta.c, linked in from
 * source): type-stable pools and the size-class allocator. */
#include <stdint.h>

#include "core/region/meta.h"
#include "tests/unit/test.h"

struct obj {
	char bytes[40];
};

struct line {
	char bytes[200];
};

static int zeroed(const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		if (b[i])
			return 0;
	return 1;
}

TEST(pool_objects_are_zeroed_and_distinct)
{
	static struct rtl_pool pool = RTL_POOL_INIT(sizeof(struct obj));
	struct obj *a = rtl_pool_get(&pool), *b = rtl_pool_get(&pool);

	CHECK(a && b && a != b);
	CHECK(zeroed(a, sizeof(*a)) && zeroed(b, sizeof(*b)));
	CHECK((char *)b >= (char *)a + sizeof(*a) || (char *)a >= (char *)b + sizeof(*b));
}

TEST(a_freed_object_comes_back_zeroed_at_the_same_address)
{
	static struct rtl_pool pool = RTL_POOL_INIT(sizeof(struct obj));
	struct obj *a = rtl_pool_get(&pool), *again;

	memset(a, 0x5a, sizeof(*a));
	rtl_pool_put(&pool, a);
	again = rtl_pool_get(&pool);
	CHECK(again == a); /* type-stable: the memory stays an obj */
	CHECK(zeroed(again, sizeof(*again)));
}

TEST(objects_of_a_cache_line_or_more_start_on_a_line)
{
	static struct rtl_pool pool = RTL_POOL_INIT(sizeof(struct line));

	for (int i = 0; i < 100; i++) {
		void *p = rtl_pool_get(&pool);

		CHECK(p != NULL);
		CHECK_EQ((uintptr_t)p % 64, 0);
	}
}

TEST(a_pool_grows_past_one_chunk)
{
	static struct rtl_pool pool = RTL_POOL_INIT(4096);
	void *first = rtl_pool_get(&pool), *p = NULL;

	for (int i = 0; i < 1000; i++) /* 4 MB: more than a 2 MiB chunk */
		CHECK((p = rtl_pool_get(&pool)) != NULL);
	memset(p, 1, 4096);
	CHECK(zeroed(first, 4096));
}

TEST(meta_alloc_is_zeroed_in_size_classes_and_pages)
{
	char *small = rtl_meta_alloc(100), *big = rtl_meta_alloc(1 << 20);

	CHECK(small && big);
	CHECK(zeroed(small, 100) && zeroed(big, 1 << 20));
	memset(small, 1, 100);
	memset(big, 1, 1 << 20);
	rtl_meta_free(small, 100);
	rtl_meta_free(big, 1 << 20);
	/* The class of 100 bytes (128) gives the freed block back, zeroed. */
	char *again = rtl_meta_alloc(120);
	CHECK(again == small);
	CHECK(zeroed(again, 120));
}
