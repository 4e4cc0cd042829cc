/* A buddy allocator over [0, S): free blocks kept per order in lists, and in
 * one hash by offset so that freeing finds the buddy in O(1). */
#include "core/region/extent.h"

#include <errno.h>

#include "core/region/meta.h"

#include "core/region/uthash_meta.h"

#define MAX_ORDER 48

struct free_block {
	uint64_t off;
	int order;
	struct free_block *next, *prev; /* in free_lists[order] */
	UT_hash_handle hh;              /* in free_by_off */
};

static struct free_block *free_lists[MAX_ORDER];
static struct free_block *free_by_off;
static struct rtl_pool block_pool = RTL_POOL_INIT(sizeof(struct free_block));
static uint64_t arena_size;
static size_t in_use;

static size_t order_size(int order)
{
	return (size_t)RTL_EXTENT_MIN << order;
}

static void list_push(struct free_block *b)
{
	b->prev = NULL;
	b->next = free_lists[b->order];
	if (b->next)
		b->next->prev = b;
	free_lists[b->order] = b;
}

static void list_unlink(struct free_block *b)
{
	if (b->prev)
		b->prev->next = b->next;
	else
		free_lists[b->order] = b->next;
	if (b->next)
		b->next->prev = b->prev;
}

static int add_free(uint64_t off, int order)
{
	struct free_block *b = rtl_pool_get(&block_pool);
	if (!b)
		return -1;
	b->off = off;
	b->order = order;
	rtl_uthash_oom = 0;
	HASH_ADD(hh, free_by_off, off, sizeof(b->off), b);
	if (rtl_uthash_oom) {
		rtl_pool_put(&block_pool, b);
		errno = ENOMEM;
		return -1;
	}
	list_push(b);
	return 0;
}

static void remove_free(struct free_block *b)
{
	list_unlink(b);
	HASH_DELETE(hh, free_by_off, b);
	rtl_pool_put(&block_pool, b);
}

int rtl_extent_init(size_t size)
{
	uint64_t off = 0;

	arena_size = size;
	/* Cover [0, S) with the largest aligned blocks that fit. */
	while (off < size) {
		int order = MAX_ORDER - 1;
		while (order > 0 && ((off & (order_size(order) - 1)) != 0 ||
		                     off + order_size(order) > size))
			order--;
		if (add_free(off, order) < 0)
			return -1;
		off += order_size(order);
	}
	return 0;
}

int rtl_extent_hold_first(void)
{
	uint64_t zero = 0;
	struct free_block *b;
	int order;

	HASH_FIND(hh, free_by_off, &zero, sizeof(zero), b);
	if (!b) {
		errno = EBUSY;
		return -1;
	}
	order = b->order;
	remove_free(b);
	/* The buddies along the path down to [0, granule). */
	for (int o = 0; o < order; o++)
		if (add_free(order_size(o), o) < 0)
			return -1;
	return 0;
}

static int order_for(size_t size)
{
	int order = 0;
	while (order < MAX_ORDER && order_size(order) < size)
		order++;
	return order;
}

size_t rtl_extent_block(size_t size)
{
	int order = order_for(size);
	if (order >= MAX_ORDER || order_size(order) > arena_size)
		return 0;
	return order_size(order);
}

static int64_t extent_alloc(size_t size, int top)
{
	int want = order_for(size), order;
	struct free_block *b;
	uint64_t off;

	for (order = want; order < MAX_ORDER && !free_lists[order]; order++)
		;
	if (order >= MAX_ORDER) {
		errno = ENOMEM;
		return -1;
	}
	b = free_lists[order];
	off = b->off;
	remove_free(b);
	while (order > want) {
		uint64_t keep;

		order--;
		keep = top ? off : off + order_size(order);
		if (top)
			off += order_size(order);
		if (add_free(keep, order) < 0) {
			if (top)
				off -= order_size(order);
			/* Out of metadata: give back what is still split off. */
			in_use += order_size(order + 1);
			rtl_extent_free(off, order_size(order + 1));
			errno = ENOMEM;
			return -1;
		}
	}
	in_use += order_size(want);
	return (int64_t)off;
}

int64_t rtl_extent_alloc(size_t size)
{
	return extent_alloc(size, 0);
}

int64_t rtl_extent_alloc_top(size_t size)
{
	return extent_alloc(size, 1);
}

void rtl_extent_free(uint64_t off, size_t size)
{
	int order = order_for(size);

	in_use -= order_size(order);
	while (order + 1 < MAX_ORDER) {
		uint64_t buddy = off ^ order_size(order);
		uint64_t merged = off < buddy ? off : buddy;
		struct free_block *b;

		if (merged + order_size(order + 1) > arena_size)
			break;
		HASH_FIND(hh, free_by_off, &buddy, sizeof(buddy), b);
		if (!b || b->order != order)
			break;
		remove_free(b);
		off = merged;
		order++;
	}
	/* On failure the block's address space is lost (never reused); its
	 * memory is released by the caller all the same. */
	(void)add_free(off, order);
}

size_t rtl_extent_in_use(void)
{
	return in_use;
}
