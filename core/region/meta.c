/* Metadata memory for the core: pools of fixed-size objects and a power-of-two
 * allocator for hash tables, all from mmap. Never called on the trap path. */
#include "core/region/meta.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#define CHUNK_SIZE (2u << 20)

void *rtl_pages_alloc(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		errno = ENOMEM;
		return NULL;
	}
	return p;
}

/* A pool chunk: 2 MiB aligned and, from a pool's second chunk on, backed
 * by a huge page where the kernel allows, so that looking up among a
 * million region records does not miss the TLB at every step. Not the
 * first: a huge page is populated whole, and every process under the
 * preload (a make runs dozens) would pay 2 MiB per pool for a few
 * objects. */
static void *chunk_alloc(int huge)
{
	char *p = rtl_pages_alloc(2 * CHUNK_SIZE), *aligned;
	uintptr_t a;

	if (!p)
		return NULL;
	a = ((uintptr_t)p + CHUNK_SIZE - 1) & ~(uintptr_t)(CHUNK_SIZE - 1);
	aligned = (char *)a;
	if (aligned > p)
		munmap(p, (size_t)(aligned - p));
	munmap(aligned + CHUNK_SIZE, (size_t)(p + CHUNK_SIZE - aligned));
	if (huge)
		madvise(aligned, CHUNK_SIZE, MADV_HUGEPAGE);
	return aligned;
}

static char **chain_of(char *chunk)
{
	return (char **)(chunk + CHUNK_SIZE - sizeof(char *));
}

/* Objects of a cache line or more start on a line, but those of an odd
 * number of half lines (region records: 96 bytes) on half a line, packed,
 * so that no object's first 32 bytes straddle two lines; smaller ones on
 * 16 bytes. */
static size_t pool_align(const struct rtl_pool *p)
{
	if (p->objsize < 64)
		return 16;
	return p->objsize % 64 && p->objsize % 32 == 0 ? 32 : 64;
}

static size_t pool_stride(const struct rtl_pool *p)
{
	return (p->objsize + pool_align(p) - 1) & ~(pool_align(p) - 1);
}

void *rtl_pool_get(struct rtl_pool *p)
{
	void *obj;

	pthread_mutex_lock(&p->mu);
	if (p->free) {
		obj = p->free;
		p->free = *(void **)obj;
	} else {
		size_t align = pool_align(p), sz = pool_stride(p);
		if (p->left < sz) {
			p->chunk = chunk_alloc(p->chunks++ > 0);
			if (!p->chunk) {
				p->left = 0;
				pthread_mutex_unlock(&p->mu);
				return NULL;
			}
			/* The chain of chunks, for rtl_pool_each: the
			 * chunk's last word holds the one before (objects
			 * keep their alignment from the chunk's start). */
			*chain_of(p->chunk) = p->last;
			p->last = p->chunk;
			p->left = CHUNK_SIZE - align;
		}
		obj = p->chunk;
		p->chunk += sz;
		p->left -= sz;
	}
	pthread_mutex_unlock(&p->mu);
	memset(obj, 0, p->objsize);
	return obj;
}

void rtl_pool_put(struct rtl_pool *p, void *obj)
{
	if (!obj)
		return;
	pthread_mutex_lock(&p->mu);
	*(void **)obj = p->free;
	p->free = obj;
	pthread_mutex_unlock(&p->mu);
}

void rtl_pool_each(struct rtl_pool *p, void (*fn)(void *obj))
{
	size_t align = pool_align(p), sz = pool_stride(p);

	for (char *c = p->last; c; c = *chain_of(c)) {
		/* The newest chunk is carved up to p->chunk; the others
		 * as far as a whole object fitted. */
		char *end = c == p->last ? p->chunk : c + CHUNK_SIZE - align;

		for (char *o = c; o + sz <= end; o += sz)
			fn(o);
	}
}

/* Size classes 16 B .. 64 KiB; larger requests map their own pages. */
#define MIN_SHIFT 4
#define MAX_SHIFT 16
static struct rtl_pool meta_pools[MAX_SHIFT - MIN_SHIFT + 1] = {
#define P(s) RTL_POOL_INIT((size_t)1 << (s))
	P(4), P(5), P(6), P(7), P(8), P(9), P(10), P(11), P(12), P(13), P(14),
	P(15), P(16)
#undef P
};

static int size_shift(size_t size)
{
	int s = MIN_SHIFT;
	while (((size_t)1 << s) < size)
		s++;
	return s;
}

void *rtl_meta_alloc(size_t size)
{
	int s = size_shift(size ? size : 1);
	if (s > MAX_SHIFT)
		return rtl_pages_alloc(size);
	return rtl_pool_get(&meta_pools[s - MIN_SHIFT]);
}

void rtl_meta_free(void *ptr, size_t size)
{
	int s = size_shift(size ? size : 1);
	if (!ptr)
		return;
	if (s > MAX_SHIFT)
		munmap(ptr, size);
	else
		rtl_pool_put(&meta_pools[s - MIN_SHIFT], ptr);
}
__thread int rtl_uthash_oom;
