/* The extent allocator on its own (core/region/extent.c, linked in from
 * source): a buddy allocator over [0, S). */
#include <errno.h>

#include "core/region/extent.h"
#include "tests/unit/test.h"

#define ARENA ((size_t)1 << 24)

static void start(void)
{
	CHECK_EQ(rtl_extent_init(ARENA), 0);
}

TEST(block_is_the_smallest_power_of_two_from_the_granule)
{
	start();
	CHECK_EQ(rtl_extent_block(1), RTL_EXTENT_MIN);
	CHECK_EQ(rtl_extent_block(64), 64);
	CHECK_EQ(rtl_extent_block(65), 128);
	CHECK_EQ(rtl_extent_block(5000), 8192);
	CHECK_EQ(rtl_extent_block(ARENA), ARENA);
	CHECK_EQ(rtl_extent_block(ARENA + 1), 0); /* larger than the arena */
}

TEST(blocks_are_aligned_to_their_size)
{
	start();
	for (size_t size = 64; size <= 65536; size *= 2) {
		int64_t off = rtl_extent_alloc(size);

		CHECK(off >= 0);
		CHECK_EQ((uint64_t)off & (size - 1), 0);
	}
}

TEST(blocks_never_overlap)
{
	static int64_t off[256];
	static size_t size[256];

	start();
	for (int i = 0; i < 256; i++) {
		size[i] = (size_t)64 << (i % 7);
		off[i] = rtl_extent_alloc(size[i]);
		CHECK(off[i] >= 0);
		CHECK((uint64_t)off[i] + size[i] <= ARENA);
	}
	for (int i = 0; i < 256; i++)
		for (int j = i + 1; j < 256; j++)
			CHECK((uint64_t)off[i] + size[i] <= (uint64_t)off[j] ||
			      (uint64_t)off[j] + size[j] <= (uint64_t)off[i]);
}

TEST(freeing_everything_merges_back_into_the_whole_arena)
{
	static int64_t off[1024];

	start();
	for (int i = 0; i < 1024; i++)
		CHECK((off[i] = rtl_extent_alloc(64)) >= 0);
	CHECK_EQ(rtl_extent_in_use(), 1024 * 64);
	for (int i = 0; i < 1024; i += 2) /* every other one first */
		rtl_extent_free((uint64_t)off[i], 64);
	for (int i = 1; i < 1024; i += 2)
		rtl_extent_free((uint64_t)off[i], 64);
	CHECK_EQ(rtl_extent_in_use(), 0);
	CHECK_EQ(rtl_extent_alloc(ARENA), 0); /* one block: all merged */
}

TEST(exhaustion_is_enomem_and_changes_nothing)
{
	start();
	CHECK_EQ(rtl_extent_alloc(ARENA), 0);
	errno = 0;
	CHECK_EQ(rtl_extent_alloc(64), -1);
	CHECK_EQ(errno, ENOMEM);
	CHECK_EQ(rtl_extent_in_use(), ARENA);
	rtl_extent_free(0, ARENA);
	CHECK(rtl_extent_alloc(64) >= 0);
}
